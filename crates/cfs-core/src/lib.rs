//! # cfs-core
//!
//! The CFS fair class of Linux 2.6.26 (commit bce7f793), with 2.6.25,
//! 2.6.26-rc4, 2.6.32-rc1 and 2.6.32 as profiles, ported kernel-exact as a
//! `no_std` + `alloc` library. Functions keep their kernel names and each
//! doc comment names the kernel function it ports, so this crate reads side
//! by side with `kernel/sched_fair.c` and `kernel/sched.c`.
//!
//! ## Layers, bottom-up
//!
//! | module | kernel concept |
//! |---|---|
//! | [`weights`] | nice → weight tables, `calc_delta_mine`, `calc_delta_fair` |
//! | [`features`] | `sched_features` as a value (numeric mask ↔ names, per kernel) |
//! | [`tunables`] | `sysctl_sched_*` with the 1 + ilog2(ncpus) boot scaling |
//! | [`patches`] | the seed threads' patches, and later mainline fixes, as switchable variants |
//! | [`profile`] | the code-path differences between kernel releases |
//! | [`config`] | all of the above, validated together |
//! | [`sysctl`] | the same knobs written on a running scheduler (`/proc/sys/kernel/sched_*`) |
//! | [`entity`] | `sched_entity`, tasks, `update_avg` |
//! | [`schedstats`] | CONFIG_SCHEDSTATS: runqueue waits, sleeps, longest runs |
//! | [`cfs_rq`] | the vruntime timeline, min_vruntime, buddies |
//! | [`rq`] | the per-CPU runqueue and `cpu_load[]` decay |
//! | [`fair`] | the fair class on one runqueue (update_curr … task_new_fair) |
//! | [`group`] | CONFIG_FAIR_GROUP_SCHED by user id (2.6.25, 2.6.26-rc4, 2.6.26): a top queue of group entities over each user's task queue, and rc4's balancing by aggregates |
//! | [`wakeup`] | try_to_wake_up, select_task_rq_fair, wake_affine, fork balancing |
//! | [`balance`] | rebalance_domains, load_balance, idle and active balancing |
//! | [`cpu_power`] | 2.6.32's group power refreshed while balancing (update_cpu_power, update_group_power) and the ARCH_POWER hooks |
//! | [`nohz`] | CONFIG_NO_HZ: tickless idle CPUs and the idle load balancer |
//! | [`hotplug`] | a CPU going down (its tasks moved off, `migrate_live_tasks`) and coming up, the domains rebuilt over the online CPUs |
//! | [`v2_6_32`] | the 2.6.32-rc1 / 2.6.32 versions of the functions above that 2.6.27-2.6.32 rewrote (wakeup placement with SD_BALANCE_WAKE and SD_PREFER_LOCAL, wakeup granularity, buddies, the balancer's capacity arithmetic), which the 2.6.26 ones dispatch to |
//! | [`observe`] | every decision as an [`Event`] with its reason |
//! | [`invariants`] | online checks and the call history behind a failure |
//! | [`sched`] | [`Scheduler`]: the public API tying it together |
//!
//! Group scheduling by user (CONFIG_FAIR_GROUP_SCHED with USER_SCHED) is
//! modelled for 2.6.25, 2.6.26-rc4 and 2.6.26 ([`Config::group_sched`], off
//! by default, as in every profile's defconfig), not for 2.6.32; the RT
//! class is not modelled. Power-savings balancing is: find_busiest_group's pick
//! in a domain with SD_POWERSAVINGS_BALANCE (cfs-topology's `PowerSavings`
//! builds such domains from `sched_mc_power_savings` /
//! `sched_smt_power_savings`), and in 2.6.32 the newly idle consolidation
//! at level 2 and the idle load balancer's nomination in a semi-idle
//! package ([`Config::power_savings`], [`Scheduler::sched_power_savings_store`]).
//!
//! ## Time and determinism
//!
//! Time is passed in on every call as `u64` nanoseconds and becomes the
//! runqueue clock, so the library has no clock and no globals. It draws no
//! random numbers and never iterates a hash map: the same calls give the
//! same decisions, bit for bit. Clocks and vruntimes wrap exactly as the
//! kernel's do (`min_vruntime` starts 2^20 ns below 2^64).
//!
//! ## Driving it
//!
//! A driver (a simulator, a trace replayer) owns the notion of what tasks
//! *do*; the scheduler decides who runs. The calls mirror the kernel's
//! entry points:
//!
//! ```
//! use cfs_core::{Config, Deschedule, KernelVersion, Scheduler, TaskParams};
//! use cfs_topology::{SchedDomains};
//!
//! // One CPU, no domains: the 2.6.26 defaults (latency 20 ms at f = 1).
//! let domains = SchedDomains { version: KernelVersion::V2_6_26, per_cpu: vec![vec![]] };
//! let mut s = Scheduler::new(Config::new(KernelVersion::V2_6_26, 1), domains).unwrap();
//! let a = s.spawn(0, 0, TaskParams::normal()).unwrap();
//! let sw = s.schedule(0, 0, Deschedule::Preempt).unwrap();
//! assert_eq!(sw.next, Some(a));
//! // a forks b; with child_runs_first the child is picked next.
//! let b = s.fork(1_000_000, a, None).unwrap().child;
//! assert!(s.need_resched(0));
//! let sw = s.schedule(1_000_000, 0, Deschedule::Preempt).unwrap();
//! assert_eq!(sw.next, Some(b));
//! // b blocks; a runs again; a wakes b with the sync hint.
//! s.schedule(2_000_000, 0, Deschedule::Sleep).unwrap();
//! let w = s.wake_up(3_000_000, b, 0, true).unwrap();
//! assert_eq!(w.cpu, 0);
//! ```
//!
//! `examples/sync_wakeup.rs` does the same on a Q6600's domains
//! (`cfs_topology::Host::preset("q6600")`), with an [`Observer`] that keeps
//! each wakeup's decision: under 2.6.26-rc4's defaults one task's sync
//! wakeups pull every sleeper onto its CPU, the seed thread's pile-up
//! (`cargo run -p cfs-core --example sync_wakeup`). cfs-machine's engine is
//! the full driver: ticks, hrticks, IPIs and costs around these calls.
//!
//! A task that tests a condition before it sleeps (a wait loop, select())
//! follows the kernel's protocol, so that a wakeup between the test and
//! the sleep is not lost: [`Scheduler::set_current_state`] with
//! [`CurrentState::Interruptible`], then [`Deschedule::Schedule`], which
//! dequeues it only if no wakeup came in between (a wakeup of a task
//! left TASK_RUNNING does nothing, as try_to_wake_up's state test):
//!
//! ```
//! # use cfs_core::{Config, CurrentState, Deschedule, KernelVersion, Scheduler, TaskParams, TaskState};
//! # use cfs_topology::SchedDomains;
//! # let domains = SchedDomains { version: KernelVersion::V2_6_26, per_cpu: vec![vec![]] };
//! # let mut s = Scheduler::new(Config::new(KernelVersion::V2_6_26, 1), domains).unwrap();
//! let a = s.spawn(0, 0, TaskParams::normal()).unwrap();
//! s.schedule(0, 0, Deschedule::Preempt).unwrap();
//! s.set_current_state(a, CurrentState::Interruptible).unwrap();
//! s.wake_up(1_000, a, 0, true).unwrap(); // the condition came true meanwhile
//! s.schedule(2_000, 0, Deschedule::Schedule).unwrap();
//! assert_eq!(s.task(a).unwrap().state, TaskState::Running);
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod balance;
#[cfg(test)]
mod balance_pins;
pub mod cfs_rq;
pub mod config;
pub mod cpu_power;
pub mod entity;
pub mod fair;
pub mod features;
pub mod group;
pub mod hotplug;
pub mod invariants;
#[cfg(test)]
mod kernel_pins;
#[cfg(test)]
mod kernel_pins_32;
pub mod nohz;
pub mod observe;
pub mod patches;
pub mod profile;
pub mod rq;
pub mod sched;
pub mod schedstats;
pub mod sysctl;
pub mod tunables;
pub mod v2_6_32;
pub mod wakeup;
#[cfg(test)]
mod wakeup_pins;
pub mod weights;

pub use balance::CpuIdleType;
pub use cfs_topology::{CpuId, CpuMask, KernelVersion, SchedDomains};
pub use config::{Config, ConfigError};
pub use entity::{CurrentState, Task, TaskId, TaskParams, TaskState};
pub use features::{Feature, FeatureTable, Features};
pub use hotplug::{CpuDown, HotplugError};
pub use invariants::{ApiCall, InvariantViolation};
pub use nohz::Nohz;
#[cfg(feature = "tracing")]
pub use observe::TracingObserver;
pub use observe::{BalanceVerdict, Event, MigrateReason, Observer, PreemptReason, WakeReason};
pub use patches::{Patch, Patches};

/// The README's Rust example ("Using the core from another tool"),
/// compiled and run as a doctest so that it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
pub use sched::{Deschedule, DomainState, ForkOutcome, SchedError, Scheduler, Switch, WakeOutcome};
pub use schedstats::SchedStats;
pub use sysctl::SettingError;
pub use tunables::Tunables;
pub use weights::Policy;
