//! # cfs-machine
//!
//! The deterministic discrete-event machine model under `cfs-sim`: it
//! drives the [`cfs_core`] fair class over a [`cfs_topology`] host, prices
//! what the scheduler makes the machine do, and runs workloads on it. One
//! call of [`engine::run`] is one simulated run; `cfs-sim` builds
//! experiments, tables, plots and its command line on top.
//!
//! It is its own crate so that the code every simulated event runs through
//! is all in one place, compiled optimised, while `cfs-sim`'s run-once code
//! (argument parsing, reports, plots) builds quickly beside it; `cfs-sim`
//! re-exports every module here, so `cfs_sim::engine` and
//! `cfs_machine::engine` are the same.
//!
//! ## Layers
//!
//! | layer | modules | what |
//! |---|---|---|
//! | vocabulary | [`program`], [`dist`], [`names`] | what a task can do: run, send/wake (with or without the sync hint), wait, sleep, fork, exit, touch shared lines, count progress; drawn times and durations ([`dist`]); the "did you mean" hint for a mistyped name ([`names`]) |
//! | workloads | [`workloads`], [`workfile`] | built-ins (pgbench, tbench, hogs, messaging, volanomark, starve, sysbench-oltp) as programs; TOML and rt-app JSON files |
//! | costs | [`costs`] | one parameter set per host, priced by [`cfs_topology::Host::distance`] |
//! | engine | [`engine`], [`observe`], [`trace`] | the event loop around [`cfs_core::Scheduler`]: ticks, segments, IPIs, idle exit, hrtick, timers |
//! | fault injection | [`faults`] | disturbances no workload asked for: interrupt load on chosen CPUs, periodic or Poisson ([`faults::IrqLoad`], `--irq`), and CPUs slowed to a fraction of their speed ([`faults::Slowdown`], `--slow`); either from the start or from a `--switch` time; and CPUs going down and coming back up at a `--switch` time ([`engine::Setting::Offline`], checked by [`faults::check_hotplug`]) |
//!
//! ## Engine
//!
//! One event queue ordered by `(time, seq)`; `seq` grows with every push,
//! so simultaneous events keep their scheduling order and a run is a pure
//! function of its inputs and seed. (The queue is a calendar queue that
//! pops in exactly a binary heap's order, see `queue.rs`.) Each CPU runs its
//! current task's program in *segments* of CPU time; the scheduler is
//! called at the kernel's entry points (`try_to_wake_up` when a message
//! wakes a waiting task, `schedule` when a task blocks, exits, yields or is
//! preempted, `scheduler_tick` every jiffy, the hrtick when it is armed,
//! `fork`). See [`engine`] for the preemption model (PREEMPT_NONE /
//! VOLUNTARY server kernels: a local wakeup preempts when the waker's
//! system call returns, a remote one after the reschedule IPI, a tick at
//! once).
//!
//! **HZ defaults to 250**, cfs-core's default and Kconfig's (kernel/Kconfig.hz
//! `default HZ_250`); Greg Smith built the seed kernels as "stock ones I
//! compiled with a minimum of fiddling from the defaults" (LKML 2008-05-21).
//! `--set hz=1000` changes it. There are no high-resolution timers and no
//! NO_HZ, Kconfig's defaults too (neither option has a `default` line), so
//! the HRTICK feature bit does nothing and a slice ends at a tick
//! (`--set hres_timers=1` for a kernel built with them, whose hrtick ends
//! slices on time; the features table's fidelity is close either way,
//! docs/CALIBRATION.md §1). Each CPU ticks at its own phase in the jiffy
//! ([`cfs_core::Config::tick_phase_ns`]: CPU n at n × 0.5 ms on a
//! four-CPU host at HZ=250, the kernel's hrtimer stagger, which stands in
//! for the boot-time phases of periodic local APIC timers).
//!
//! **Sockets and pipes.** Messages wake their reader. AF_UNIX stream
//! writes ([`program::Action::Write`] on a [`program::Stream`]) are
//! charged to their socket's send buffer at their skbs' truesize and block
//! while it is full, until the reader has drained it to a quarter
//! (`sock_wait_for_wmem`, `unix_write_space`; sk_sndbuf 124,928 bytes,
//! `--set sndbuf=0` for unbounded buffers). Pipe writes fill a pipe's 16
//! pages and block until the reader empties one. Taking a socket write can
//! also wake a writer that sleeps in select(), off by default (`--set
//! write_space_wakeups=1`). The settings are [`engine::Sockets`].
//!
//! ## Costs
//!
//! Every cost is CPU time added to the task on whose behalf it is spent
//! (so cfs-core accounts it as the kernel's rq clock would) or a latency
//! before something can happen: the direct cost of a context switch, the
//! waker's cost of a local or remote wakeup, the IPI's flight time, the
//! C-state exit of an idle CPU, the refill of a task's working set after it
//! moves (by its size, the distance moved, and how much of it other tasks
//! evicted meanwhile), the cache lines a message drags from the sender's
//! CPU, lines of shared state written by other tasks, and the scheduler's
//! own reads of runqueues (every [`cfs_core::Event::Scan`] cfs-core
//! reports: a wakeup's wake_affine loads, domain walks, balance passes).
//! CPU work scales with the host's clock; memory and
//! interrupt latencies do not. Run times get a seeded jitter. Nothing is
//! special-cased per workload or configuration: the published shapes must
//! emerge from cfs-core's decisions plus these costs (see
//! `docs/CALIBRATION.md`).
//!
//! ## Determinism
//!
//! Every random draw comes from a `rand_pcg` stream of the run (the
//! engine's, the injected interrupts' and the workload build's, each its
//! own), seeded from the base seed, the client count and the run number
//! (the same in every column: common random numbers). Collections whose order matters are
//! vectors or B-trees; the one hash map (the socket table, with a fixed
//! hash) is only looked up, never iterated. `exp`, `ln` and `cos` come
//! from the `libm` crate, not the platform's C library, so a run is also
//! the same on every platform (see [`dist`]).
//!
//! ## Example
//!
//! One run of pgbench -S with two clients on a Q6600 under 2.6.26-rc4's
//! defaults:
//!
//! ```
//! use cfs_core::{Config, KernelVersion};
//! use cfs_machine::costs::CostModel;
//! use cfs_machine::engine::{self, Instruments, RunSetup, Sockets};
//! use cfs_machine::workloads::{Workload, WorkloadOpts};
//! use cfs_topology::Host;
//!
//! let host = Host::preset("q6600").unwrap();
//! let costs = CostModel::preset("q6600").unwrap();
//! let version = KernelVersion::V2_6_26Rc4;
//! let opts = WorkloadOpts { transactions: Some(200), ..WorkloadOpts::default() };
//! let seed = 1;
//! let built = Workload::builtin("pgbench").unwrap().build(2, host.nr_cpus(), &opts, seed);
//! let setup = RunSetup {
//!     host: &host,
//!     costs: &costs,
//!     config: Config::new(version, host.nr_cpus()),
//!     domains: host.build_domains(version),
//!     seed,
//!     limits: built.limits,
//!     trace: false,
//!     instruments: Instruments::default(),
//!     sockets: Sockets::default(),
//!     changes: vec![],
//!     irqs: vec![],
//!     slow: vec![],
//!     domain_build: Default::default(),
//! };
//! let out = engine::run(&setup, built.instance).unwrap();
//! // Each transaction is at least one backend's 63 µs of CPU, and two
//! // clients keep at most two backends busy: no more than 2 / 63 µs.
//! let tps = out.units as f64 / (out.window_ns as f64 / 1e9);
//! assert!(tps > 1000.0 && tps < 2.0 / 63e-6, "{tps}");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod costs;
pub mod dist;
pub mod engine;
pub mod faults;
pub mod names;
pub mod observe;
pub mod program;
mod queue;
pub mod trace;
pub mod workfile;
pub mod workloads;

pub use workfile::{FileWorkload, WorkloadError, parse_workload};
