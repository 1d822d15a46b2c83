//! The discrete-event engine: CPUs, tasks and time around a
//! [`cfs_core::Scheduler`].
//!
//! # Model
//!
//! One event queue ordered by `(time, seq)`, where `seq` increases with
//! every push, so simultaneous events run in the order they were scheduled:
//! deterministic. (A calendar queue, `queue.rs`, that pops in exactly the
//! order of a binary heap over the same keys.) Events: scheduler ticks at
//! HZ on every CPU, the end of a CPU's current stretch of work
//! ("segment"), reschedule IPIs, hrtick expiries, task timers, injected
//! interrupts and their returns ([`crate::faults`], `--irq`), and the end
//! of a timed run.
//!
//! A CPU runs its current task's program: each [`Action`] either takes CPU
//! time (a segment) or changes the scheduler's state at the current instant
//! (a wakeup, a fork) and then takes the time its system call costs. Every
//! cost (context switch, cache refill after a migration, reading a message
//! that crossed caches, waking a task on another CPU, scheduler scans) is
//! CPU time added to the segment of the task on whose behalf it is spent, so
//! the scheduler accounts it to that task exactly as the kernel's rq clock
//! would.
//!
//! A segment holds work at full speed; a CPU slowed by a fault
//! ([`crate::faults::Slowdown`], `--slow`), or sharing its SMT core with a
//! busy sibling ([`CostModel::smt_throughput`]), takes `work / speed` of
//! wall time for it, and a change of speed re-times the work still to do.
//! The scheduler only ever sees wall time.
//!
//! # Preemption (PREEMPT_NONE / VOLUNTARY server kernels)
//!
//! The two differ in one path the engine models: a task that changes its
//! own affinity away from its CPU moves as under VOLUNTARY (see
//! `Action::SetAffinity` in `exec`).
//!
//! - A need_resched set on a task's own CPU during a system call (its
//!   wakeup preempts it, or a fork's child-runs-first) takes effect when the
//!   call returns: after the action's cost segment, before the next action.
//! - A need_resched set on another CPU is delivered by a reschedule IPI
//!   after [`CostModel::ipi_latency_ns`] (plus the C-state exit if that CPU
//!   idles) and interrupts whatever runs there.
//! - Ticks, hrticks, timer interrupts and injected interrupts preempt at
//!   once on return from the interrupt.
//!
//! `--set preempt=1` ([`cfs_core::Config::preempt`], CONFIG_PREEMPT)
//! changes what cfs-core decides (2.6.32's newly-idle balancing pulls one
//! task), not these points: a preemptible kernel would switch at the
//! `preempt_enable` after the wakeup, inside the call, but the engine
//! charges a call's whole cost after the state change it makes, so it has
//! no earlier point to switch at that would be truer than the return.
//!
//! # Idle
//!
//! By default idle CPUs keep ticking (CONFIG_NO_HZ=n). With
//! [`cfs_core::Config::nohz`] (`--set nohz=1`) an idle CPU offers to stop
//! its tick whenever it enters the idle loop or returns from an interrupt
//! to it ([`cfs_core::Scheduler::nohz_stop_sched_tick`]); a tickless CPU's
//! tick events pass it by until it leaves idle, and the idle load balancer
//! balances for it. An idle CPU that gets work pays
//! [`CostModel::idle_exit_ns`] before it runs it.
//!
//! # Layout
//!
//! This file holds the event loop and the CPUs' and tasks' state;
//! `cache.rs` the cache model (working sets, eviction, refill costs);
//! `settings.rs` the settings a run writes mid-way (`--switch`) and its
//! throughput phases; `sockets.rs` the socket layer (send buffers, pipes
//! and the kernel constants that size them); `sync.rs` the user-space
//! synchronisation objects (condition variables, mutexes, semaphores,
//! barriers); `tests.rs` the unit tests.

use crate::costs::{CostModel, Reach};
use crate::dist::round_u64;
use crate::faults::{FULL_SPEED, FaultError, FaultStep, IrqLoad, IrqRoutes, Slowdown};
use crate::observe::{Counters, SimObserver};
use crate::program::{Action, ForkSpec, Msg, Program, Side, StepCx, Stream, TaskRef, TaskSpec};
use crate::queue::{EventQueue, Timed};
use crate::trace::{Blocked, TraceBuf};
use cache::{Caches, LastRun};
use cfs_core::{
    Config, ConfigError, CurrentState, Deschedule, SchedDomains, SchedError, SchedStats, Scheduler, TaskId, TaskState,
};
use cfs_topology::builder::BuildOptions;
use cfs_topology::{CpuMask, FlagOverride, Host};
use poll::{Landing, PollPass};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::cell::OnceCell;
use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::fmt;

mod cache;
mod poll;
mod settings;
mod sockets;
pub mod sync;

pub use crate::faults::check_hotplug;
pub use settings::{Change, Phase, Setting, features_from_text};
pub use sockets::{
    PAGE_SIZE, PIPE_BUFFERS, SK_WMEM_MAX, SKB_MAX_ALLOC, SKB_STRUCT_BYTES, SMP_CACHE_BYTES, SOCK_MIN_SNDBUF, Sockets,
    skb_truesize,
};
use sockets::{SendBuf, SockKey};
pub use sync::SyncObjects;
use sync::{Arrival, Barrier, Cond, Mutex, Sem};

/// Why a run could not complete.
#[derive(Debug)]
pub enum SimError {
    /// The scheduler refused a call (a bug in the engine or the core).
    Sched(SchedError),
    /// The scheduler configuration is unusable.
    Config(ConfigError),
    /// Every task is blocked and no timer is armed: the workload deadlocked.
    Stalled {
        /// Simulated time, ns.
        at: u64,
        /// How many of the waiting tasks are blocked writing to a full
        /// socket buffer (a write deadlock, as on a real kernel).
        writers: usize,
    },
    /// The run hit its simulated-time cap before finishing.
    TimeLimit {
        /// The cap, ns.
        at: u64,
        /// The names of the tasks the run was waiting for (its
        /// [`Instance::finish`] tasks still alive), in task order; at most
        /// [`SimError::NAMED`] of them, with `unnamed` more.
        waiting_for: Vec<String>,
        /// How many more finishing tasks were alive than are named.
        unnamed: usize,
    },
    /// A fork would pass one of the run's task limits
    /// ([`Limits::pid_max`] alive, or [`Limits::max_tasks`] created).
    TooManyTasks {
        /// Simulated time of the fork, ns.
        at: u64,
        /// The limit reached.
        limit: usize,
        /// Whether it is the limit on tasks alive at once (else on tasks
        /// created).
        alive: bool,
    },
    /// A send would pass [`Limits::max_unread`] messages queued unread.
    TooManyMessages {
        /// Simulated time of the send, ns.
        at: u64,
        /// The limit reached.
        limit: usize,
    },
    /// A program named a condition, mutex, semaphore or barrier that its
    /// [`Instance::sync`] does not have.
    NoSuchObject {
        /// Simulated time of the action, ns.
        at: u64,
        /// "condition", "mutex", "semaphore" or "barrier".
        kind: &'static str,
        /// The number it named.
        index: usize,
        /// How many of that kind the run has.
        count: usize,
    },
    /// A fault ([`RunSetup::irqs`], [`RunSetup::slow`], or one a
    /// [`Change`] starts) names a CPU the host does not have.
    FaultCpu {
        /// The fault as written (`interrupt load cpus=4,every=1ms,...`).
        fault: String,
        /// The CPU named.
        cpu: usize,
        /// The host's CPUs.
        nr_cpus: usize,
    },
    /// Interrupts would take all of a CPU's time at some point of the run
    /// ([`crate::faults::check_cpu_time`]).
    Fault(FaultError),
    /// A program ended the run with an error ([`Action::Fail`]).
    Program {
        /// Simulated time, ns.
        at: u64,
        /// The failing task's name.
        task: String,
        /// Why.
        why: Box<str>,
    },
}

impl SimError {
    /// How many unfinished tasks a [`SimError::TimeLimit`] names.
    pub const NAMED: usize = 5;
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Sched(e) => write!(f, "scheduler error: {e}"),
            SimError::Config(e) => write!(f, "configuration error: {e}"),
            SimError::Stalled { at, writers } => {
                write!(f, "workload stalled at {:.6} s: every task waits and no timer is armed", *at as f64 / 1e9)?;
                match writers {
                    0 => Ok(()),
                    1 => write!(f, " (1 of them blocked writing to a full socket buffer)"),
                    n => write!(f, " ({n} of them blocked writing to full socket buffers)"),
                }
            }
            SimError::TimeLimit { at, waiting_for, unnamed } => {
                write!(f, "run did not finish within {:.3} s of simulated time", *at as f64 / 1e9)?;
                if !waiting_for.is_empty() {
                    write!(f, " (still to finish: {}", waiting_for.join(", "))?;
                    if *unnamed > 0 {
                        write!(f, " and {unnamed} more")?;
                    }
                    write!(f, ")")?;
                }
                Ok(())
            }
            SimError::TooManyTasks { at, limit, alive: true } => write!(
                f,
                "fork failed at {:.6} s: {limit} tasks alive, the kernel's default pid_max (fewer clients, \
                 or does a loop fork children that never exit?)",
                *at as f64 / 1e9
            ),
            SimError::TooManyTasks { at, limit, alive: false } => write!(
                f,
                "fork at {:.6} s would create task {}, past the {limit} one run may create (an exited task keeps its \
                 slot; does a loop fork without end?)",
                *at as f64 / 1e9,
                limit + 1
            ),
            SimError::TooManyMessages { at, limit } => write!(
                f,
                "{limit} messages queued unread at {:.6} s: tasks send faster than their peers read (does a loop \
                 send without waiting?)",
                *at as f64 / 1e9
            ),
            SimError::NoSuchObject { at, kind, index, count } => write!(
                f,
                "a task used {kind} {index} at {:.6} s, but the run has {count} (numbered from 0)",
                *at as f64 / 1e9
            ),
            SimError::FaultCpu { fault, cpu, nr_cpus } => {
                write!(f, "{fault}: CPU {cpu} does not exist (the host has {nr_cpus})")
            }
            SimError::Fault(e) => write!(f, "{e}"),
            SimError::Program { at, task, why } => write!(f, "{task} failed at {:.6} s: {why}", *at as f64 / 1e9),
        }
    }
}

impl std::error::Error for SimError {}

impl From<SchedError> for SimError {
    fn from(e: SchedError) -> Self {
        SimError::Sched(e)
    }
}

/// When a run stops and what it measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Stop at this simulated time (a timed run), ns.
    pub duration_ns: Option<u64>,
    /// Progress before this time is not counted, ns.
    pub warmup_ns: u64,
    /// Give up (error) if the run has not finished by then, ns.
    pub max_ns: u64,
    /// Tasks a run may create, the initial ones included. An exited task
    /// keeps its slot (the engine and cfs-core index tasks by creation
    /// order), so this bounds the run's memory: a file that forks
    /// short-lived tasks in an endless loop stops with
    /// [`SimError::TooManyTasks`] instead of filling the machine.
    pub max_tasks: usize,
    /// Tasks alive at once. A fork beyond it fails, as the kernel's does
    /// when it runs out of pids; the vocabulary has no failing fork, so
    /// the run stops with [`SimError::TooManyTasks`].
    pub pid_max: usize,
    /// Messages sent and not yet read, over all tasks. Only a socket or
    /// pipe write blocks on a full buffer ([`Sockets`]); a plain send never
    /// does, so a task that sends in a loop to a peer that does not read
    /// would queue without bound. Past this the run stops with
    /// [`SimError::TooManyMessages`].
    pub max_unread: usize,
}

impl Limits {
    /// [`Limits::max_tasks`] by default: 2^20 tasks, about 0.6 GB of engine
    /// and scheduler state (the peak of a fork loop stopped by it).
    pub const MAX_TASKS: usize = 1 << 20;
    /// [`Limits::pid_max`] by default: the kernel's PID_MAX_DEFAULT
    /// (0x8000, include/linux/threads.h), /proc/sys/kernel/pid_max's
    /// initial value.
    pub const PID_MAX: usize = 32_768;
    /// [`Limits::max_unread`] by default: 2^24 messages, about 1 GB of
    /// queues at most. The built-ins stay below it: pgbench, tbench and
    /// sysbench-oltp queue at most one message per connection, starve's
    /// parent falls ~23,000 signals behind at worst, and hackbench-style
    /// `messaging` holds at most 348 (640 over pipes) per receiver, so it
    /// would take some 2,400 groups to come near it; with unbounded socket
    /// buffers (`--set sndbuf=0`) 10 groups of 10,000 loops peak at 1.5
    /// million.
    pub const MAX_UNREAD: usize = 1 << 24;

    /// A run that stops at `duration_ns` (or when its finishing tasks
    /// exit), counts progress from `warmup_ns` and gives up at `max_ns`,
    /// with the default task limits.
    pub const fn new(duration_ns: Option<u64>, warmup_ns: u64, max_ns: u64) -> Limits {
        Limits {
            duration_ns,
            warmup_ns,
            max_ns,
            max_tasks: Self::MAX_TASKS,
            pid_max: Self::PID_MAX,
            max_unread: Self::MAX_UNREAD,
        }
    }
}

/// The tasks a run starts with and when it is finished.
pub struct Instance {
    /// Initial tasks; task `i` gets engine/scheduler id `i`.
    pub tasks: Vec<TaskSpec>,
    /// The run is over when all of these tasks have exited (empty: it
    /// runs for [`Limits::duration_ns`]). Initial tasks, or tasks an
    /// initial one forks, numbered in creation order from the initial
    /// tasks' count (rt-app's threads, which its main creates).
    pub finish: Vec<TaskRef>,
    /// The condition variables, mutexes, semaphores and barriers its
    /// programs use.
    pub sync: SyncObjects,
}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Instance").field("tasks", &self.tasks.len()).field("finish", &self.finish).finish()
    }
}

/// Everything a run needs besides the workload.
#[derive(Clone, Debug)]
pub struct RunSetup<'a> {
    /// The machine.
    pub host: &'a Host,
    /// Its costs.
    pub costs: &'a CostModel,
    /// The scheduler configuration.
    pub config: Config,
    /// The domains (built for `config.version`, overrides applied).
    pub domains: SchedDomains,
    /// The random stream's seed.
    pub seed: u64,
    /// Stop conditions.
    pub limits: Limits,
    /// Record a Chrome trace.
    pub trace: bool,
    /// Property-test instruments (off by default).
    pub instruments: Instruments,
    /// What the simulated kernel's socket layer does besides the scheduler.
    pub sockets: Sockets,
    /// Settings written during the run, in time order.
    pub changes: Vec<Change>,
    /// Interrupt load injected on some CPUs ([`crate::faults`]); empty
    /// for none.
    pub irqs: Vec<IrqLoad>,
    /// CPUs slowed from the start ([`crate::faults`]), in order (a later
    /// one overrides an earlier one on a CPU both name); empty for none.
    pub slow: Vec<Slowdown>,
    /// How `domains` were built, so that a CPU going down or coming up
    /// ([`Setting::Offline`], [`Setting::Online`]) gets the domains the
    /// same kernel would rebuild.
    pub domain_build: DomainBuild,
}

/// What rebuilds the domains at run time ([`DomainBuild::rebuild`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rebuild {
    /// A CPU went down or came up (`CPU_DEAD`, `CPU_ONLINE`).
    Hotplug,
    /// `arch_reinit_sched_domains`: a power-savings knob written, or a
    /// patch of the domain initialisers switched.
    Reinit,
}

/// What the boot domains were built with: the builder's options, among them
/// the user's edits to the kernel's domain initialisers (`init_flags`,
/// `--set sd_init`), and the flags the configuration writes into the built
/// domains (`--sd-flags`). Every build adds the edits of the patches the
/// scheduler has at that moment. A rebuild keeps all of them. A flag
/// written at run time ([`Setting::DomainFlags`], a `sched_domain` sysctl)
/// is lost on a rebuild, as the kernel's is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainBuild {
    /// The builder's options at boot. Its `online` is ignored (each build
    /// is over the CPUs up), and its `init_flags` are the edits made on
    /// top of the current patches' own.
    pub options: BuildOptions,
    /// Flag overrides written into every build, after degenerate removal.
    pub overrides: Vec<FlagOverride>,
}

impl DomainBuild {
    /// The domains `host` gets under `config` with the CPUs of `online` up:
    /// `config`'s version, and the initialiser edits of the patches it has
    /// now (a patch switched on or off at run time is the kernel the
    /// rebuild is made by), followed by the options' own edits. (Where
    /// both edit one flag the patch's value ends in the domains: the
    /// scheduler writes its patches' edits into whatever it is given.)
    pub fn build(&self, host: &Host, config: &cfs_core::Config, online: CpuMask) -> SchedDomains {
        let own: Vec<_> = self.options.init_flags.iter().collect();
        let init_flags = config.patches.init_flag_edits().with_overrides(&own);
        let opts = BuildOptions { online: Some(online), init_flags, ..self.options };
        let mut d = host.build_domains_with(config.version, &opts);
        d.apply_overrides(&self.overrides);
        d
    }

    /// The domains a run-time rebuild gives, over the CPUs of `online`:
    /// [`Self::build`], unless `config` has CONFIG_CPUSETS and the kernel
    /// leaves this rebuild to the cpuset code, which builds over the top
    /// cpuset's CPUs, the online ones with `isolcpus=` ones included
    /// (bce7f793 cpuset.c:585-596, 22763c5c cpuset.c:559-571). That is a
    /// CPU going down or coming up from 2.6.26 final on (its
    /// update_sched_domains rebuilds only without cpusets, bce7f793
    /// sched.c:7509-7518, 22763c5c :9146-9214; 2.6.25's and rc4's always,
    /// with arch_init_sched_domains, and their cpuset notifier rebuilds
    /// nothing), and 2.6.32's arch_reinit_sched_domains, which calls
    /// rebuild_sched_domains (22763c5c sched.c:9057-9066; 2.6.2x's calls
    /// arch_init_sched_domains). The boot build leaves the isolated CPUs
    /// out either way (sched_init_smp), so they rejoin the domains at the
    /// first such rebuild.
    pub fn rebuild(&self, host: &Host, config: &cfs_core::Config, online: CpuMask, cause: Rebuild) -> SchedDomains {
        use cfs_core::KernelVersion as V;
        let by_cpusets = config.cpusets
            && match cause {
                Rebuild::Hotplug => !matches!(config.version, V::V2_6_25 | V::V2_6_26Rc4),
                Rebuild::Reinit => config.version.is_2_6_32(),
            };
        if by_cpusets && !self.options.isolcpus.is_empty() {
            let mut all = self.clone();
            all.options.isolcpus = CpuMask::empty();
            return all.build(host, config, online);
        }
        self.build(host, config, online)
    }

    /// `node_to_cpumask(cpu_to_node(cpu))`: the CPUs of `cpu`'s node, or
    /// every CPU for a kernel without CONFIG_NUMA.
    pub fn node_of(&self, host: &Host, cpu: usize) -> CpuMask {
        if self.options.numa.enabled_on(host) { host.node_cpus(host.cpu(cpu).node as usize) } else { host.all_cpus() }
    }
}

/// Measurements and perturbations for property tests
/// (`cfs-model-tests`); all off by default, and off they cost nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instruments {
    /// Added to every time passed to the scheduler: a run must decide the
    /// same with its clock starting anywhere, e.g. just below 2^64.
    pub clock_offset: u64,
    /// Measure runnable waits and idle gaps ([`Probe`]).
    pub watch: bool,
    /// The task whose wakees' placement is watched for the 1:N property
    /// (by name, e.g. `pgbench`).
    pub one_to_n_waker: Option<String>,
}

/// What the instruments measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Probe {
    /// Longest time any task waited runnable before it ran, ns (from its
    /// wakeup, fork or preemption to its next switch-in).
    pub max_wait_ns: u64,
    /// The task that waited longest.
    pub max_wait_task: Option<String>,
    /// Longest stretch during which some CPU had nothing to run while
    /// another had two or more runnable tasks, ns (the "wasted cores" gap).
    pub worst_idle_gap_ns: u64,
    /// Longest stretch of consecutive [`ONE_TO_N_WINDOW_NS`] windows in
    /// which the watched waker's wakees were served on the waker's own CPU
    /// (at least 95% of their switch-ins there, and some at all), ns.
    pub one_to_n_streak_ns: u64,
    /// Switch-ins of the watched waker's wakees: how many runs the 1:N
    /// measure saw.
    pub one_to_n_wakees: u32,
}

/// The window of the 1:N serialisation measure, ns.
pub const ONE_TO_N_WINDOW_NS: u64 = 10_000_000;

/// Steps a program may take without making time pass (progress counts,
/// zero-length runs, shared lines that are already local) before the engine charges
/// it a system call's time. Every built-in workload takes a handful per
/// transaction; a loop of nothing but such steps (`ops = [{ run = "0us" },
/// { progress = 1 }]`) is then a busy loop of ~1.5 ns per step instead of a
/// near-free one that a 10 ms run would take a minute of wall time to
/// simulate.
pub const FREE_STEPS: u32 = 64;

#[derive(Default)]
struct ProbeState {
    window: u64,
    on_waker_cpu: u32,
    elsewhere: u32,
    serial_windows: u64,
    queued_since: Vec<Option<u64>>,
    gap_since: Option<u64>,
    waker: Option<TaskRef>,
    wakee: Vec<bool>,
    out: Probe,
}

/// One task's totals. The wait and sleep figures are cfs-core's
/// CONFIG_SCHEDSTATS fields ([`cfs_core::SchedStats`]) over the whole run,
/// start-up included, as `/proc/<pid>/sched` would show them at its end.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TaskStat {
    /// Name.
    pub name: String,
    /// CPU time, ns (the scheduler's sum_exec_runtime).
    pub runtime_ns: u64,
    /// CPU changes.
    pub migrations: u64,
    /// Time spent runnable on a runqueue without the CPU, ns (`wait_sum`).
    pub wait_sum_ns: u64,
    /// Waits ended (`wait_count`): picks, and moves off a queue.
    pub wait_count: u64,
    /// The longest ended wait, ns (`wait_max`).
    pub wait_max_ns: u64,
    /// A wait still open when the run ended, ns (0 if the task was not
    /// queued then): a starved task's wait shows here, not in `wait_max`.
    pub wait_open_ns: u64,
    /// Time asleep, ns (`sum_sleep_runtime`; sleeps ended by a wakeup).
    pub sleep_sum_ns: u64,
    /// A sleep still going when the run ended, ns (0 if the task was not
    /// asleep then): a task blocked for good shows here, not in
    /// `sum_sleep_runtime`.
    pub sleep_open_ns: u64,
    /// The longest ended sleep, ns (`sleep_max`).
    pub sleep_max_ns: u64,
    /// The longest run between two picks while the queue held at least
    /// twice the task's weight, ns (`slice_max`).
    pub slice_max_ns: u64,
    /// The CPU it ran on longest (switch-in to switch-out), the lowest
    /// of a tie; `None` if it never ran.
    pub main_cpu: Option<usize>,
}

impl TaskStat {
    /// The longest wait, open or ended, ns.
    pub fn longest_wait_ns(&self) -> u64 {
        self.wait_max_ns.max(self.wait_open_ns)
    }
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Progress units counted in the measurement window.
    pub units: u64,
    /// The measurement window (warm-up to end), ns.
    pub window_ns: u64,
    /// When the run ended, ns.
    pub end_ns: u64,
    /// Busy time of each CPU within the whole run, ns.
    pub cpu_busy_ns: Vec<u64>,
    /// Scheduler decisions by reason.
    pub counters: Counters,
    /// Context switches.
    pub switches: u64,
    /// Involuntary context switches (a runnable task lost its CPU).
    pub preemptions: u64,
    /// Events processed.
    pub events: u64,
    /// Per-task totals.
    pub tasks: Vec<TaskStat>,
    /// The Chrome trace, if requested.
    pub trace: Option<crate::trace::Trace>,
    /// The instruments' measurements (zero unless asked for).
    pub probe: Probe,
    /// The run cut at each change time (empty without changes).
    pub phases: Vec<Phase>,
    /// AF_UNIX stream writes that found their send buffer full and
    /// blocked ([`Sockets::sndbuf`]), each counted once however often it
    /// was woken before it could write.
    pub send_blocks: u64,
    /// select() passes that found nothing but had been raced by a wakeup
    /// on a socket already polled, and so rescheduled voluntarily (on the
    /// 2.6.32 profiles: only marked `triggered`) and polled again
    /// ([`Sockets::poll_window`]).
    pub select_races: u64,
    /// The most messages queued unread at once.
    pub peak_unread: usize,
    /// Interrupts injected ([`RunSetup::irqs`]), all CPUs.
    pub irqs: u64,
    /// The handlers' time taken from running tasks, ns (a handler on an
    /// idle CPU takes none).
    pub irq_task_ns: u64,
}

// ----- the event queue -------------------------------------------------------

/// CPUs and tasks are u32 here (cfs-core's task ids are) so that an
/// [`Item`] is 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Tick(u32),
    SegEnd(u32, u64),
    Resched(u32),
    Hrtick(u32, u64),
    Timer(u32, u64),
    Change(u32),
    /// An injected interrupt on a CPU, from load `.1` of
    /// [`RunSetup::irqs`].
    Irq(u32, u32),
    /// The return from an injected interrupt's handler.
    IrqEnd(u32),
    End,
}

#[derive(Debug, PartialEq, Eq)]
struct Item {
    t: u64,
    seq: u64,
    ev: Ev,
}

impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: invert to pop the earliest (t, seq).
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

const _: () = assert!(std::mem::size_of::<Item>() <= 32);

impl Timed for Item {
    #[inline]
    fn time(&self) -> u64 {
        self.t
    }
}

// ----- machine state ----------------------------------------------------------

/// A stretch of work in flight: `work` ns of work at full speed, started
/// (or re-timed, when the CPU's speed changed) at `start`.
#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u64,
    work: u64,
}

#[derive(Debug)]
struct Cpu {
    /// The engine's copy of the scheduler's current task.
    curr: Option<TaskRef>,
    /// The stretch of work in flight, if any.
    seg: Option<Seg>,
    /// Invalidates SegEnd events of interrupted segments.
    epoch: u64,
    /// A Resched event is in flight.
    resched_at: Option<u64>,
    /// The hrtick expiry we have an event for.
    hrtick: Option<u64>,
    /// Work charged while no segment ran (added to the next one), ns.
    debt: u64,
    busy: u64,
    since: u64,
    /// Its speed in thousandths: [`Cpu::fault_speed`], less what a busy
    /// SMT sibling takes ([`CostModel::smt_throughput`]).
    speed: u32,
    /// Its speed as faults leave it ([`FULL_SPEED`] unless slowed).
    fault_speed: u32,
    /// While idle, the end of the injected interrupt handler it runs (0
    /// when none has run): a task cannot start on it before then.
    irq_until: u64,
}

impl Cpu {
    /// The wall time `work` ns of full-speed work takes here (rounded up,
    /// so that work never finishes early).
    fn wall(&self, work: u64) -> u64 {
        if self.speed == FULL_SPEED {
            return work;
        }
        let w = (u128::from(work) * u128::from(FULL_SPEED)).div_ceil(u128::from(self.speed));
        u64::try_from(w).unwrap_or(u64::MAX)
    }

    /// The work done here in `wall` ns (rounded down).
    fn work_in(&self, wall: u64) -> u64 {
        if self.speed == FULL_SPEED {
            return wall;
        }
        (u128::from(wall) * u128::from(self.speed) / u128::from(FULL_SPEED)) as u64
    }

    /// When the segment in flight ends.
    fn seg_end(&self, seg: Seg) -> u64 {
        seg.start.saturating_add(self.wall(seg.work))
    }
}

/// Where a blocked task waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    None,
    Wait,
    Sleep {
        interruptible: bool,
    },
    /// On a condition variable or a barrier.
    Cond,
    /// In futex_wait on a taken mutex.
    Mutex,
    /// In sem_wait.
    Sem,
    /// In `sock_wait_for_wmem`, on a full send buffer.
    SendBuf,
}

/// The part of `work` (one jitter draw over a call of `base` baseline ns)
/// that falls to `part` baseline ns of it.
fn share_of(work: u64, part: u64, base: u64) -> u64 {
    round_u64(work as f64 * part as f64 / base.max(1) as f64)
}

/// A select() call in progress: what its later passes poll and cost.
#[derive(Clone, Debug)]
struct SelectCall {
    fds: std::sync::Arc<[TaskRef]>,
    /// One pass over every socket, baseline ns.
    repoll_ns: u64,
    /// The rest of what a call that slept or rescheduled pays, baseline ns.
    slept_ns: u64,
}

/// Work a task resumes with after its system call's time has passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deferred {
    /// Take one or all pending messages, else sleep. `woken`: this is the
    /// re-check after a wakeup, which for a select() without the poll
    /// window costs its [`SelectCall::repoll_ns`] if it finds nothing.
    Wait {
        all: bool,
        woken: bool,
    },
    Sleep {
        ns: u64,
        interruptible: bool,
    },
    /// The end of a select() pass ([`PollPass`]): take what it found, or
    /// reschedule if a wakeup raced it, or sleep.
    Select,
    /// The next pass of the task's select() call ([`PollPass::again`]),
    /// after a wakeup or a voluntary switch.
    Repoll,
    /// Registered with a condition or barrier during the call: sleep,
    /// unless a signal has already come, then do `then`.
    Await(AfterWake),
    /// pthread_mutex_lock after its fast path failed (or after a wakeup):
    /// take the mutex if it is free now, else sleep on it.
    Lock(usize),
    /// rt-app's barrier event, its mutex's fast path failed: take the
    /// barrier's mutex if it is free now (else sleep on it), then arrive.
    BarrierArrive(usize),
    /// The end of rt-app's barrier event for a woken waiter: take the
    /// barrier's mutex (else sleep on it), add one back, unlock.
    BarrierLeave(usize),
    /// sem_wait after its fast path failed: take a post that came during
    /// the call, else sleep.
    SemWait(usize),
    /// Woken from a condition or barrier: do this, then go on.
    Woken(AfterWake),
    /// An AF_UNIX stream write that found its send buffer full: try again.
    Write {
        to: TaskRef,
        stream: Stream,
        bytes: u32,
        tag: u32,
    },
    Yield,
    Exit,
    /// Woken by a timer or a semaphore post: just continue.
    Resume,
}

/// What a task woken from a condition or barrier does first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterWake {
    /// Nothing: go on.
    Continue,
    /// Take this mutex again (pthread_cond_wait's return).
    Lock(usize),
    /// Take this barrier's mutex again, add itself back to its count and
    /// unlock it (the rest of rt-app's barrier event after its
    /// pthread_cond_wait).
    LeaveBarrier(usize),
}

/// A mutex a task can sleep on: one of the workload's, or the one an
/// rt-app barrier keeps its count under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MutexRef {
    User(usize),
    Barrier(usize),
}

/// What an exited task's program becomes: it never runs again.
#[derive(Debug)]
struct Exited;

impl Program for Exited {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Action {
        Action::Exit
    }
}

struct Task {
    name: String,
    prog: Box<dyn Program>,
    /// CPU work still to do before the next action, ns.
    pending: u64,
    deferred: Option<Deferred>,
    block: Block,
    was_blocked: bool,
    /// Blocked with `tp->ucopy.task` installed: tcp_recvmsg installs it
    /// before it sleeps only while tcp_low_latency is 0 (bce7f793
    /// net/ipv4/tcp.c:1418), and a later write of the sysctl does not
    /// change a reader already asleep. Set at each block in [`Block::Wait`].
    ucopy: bool,
    /// When it last went to sleep in [`Block::Wait`], as a count of such
    /// sleeps ([`Sim::waits_begun`]): the order of its entry on the wait
    /// queues it sleeps on, which [`Action::SendAll`] wakes newest first.
    wait_stamp: u64,
    /// Signalled by a condition or barrier it registered with before it
    /// went to sleep: its sleep returns at once.
    signalled: bool,
    mailbox: VecDeque<Msg>,
    /// The select() pass in flight, if the task is in one.
    poll: Option<PollPass>,
    /// The select() call the task is in, from its first pass until it
    /// returns.
    select: Option<SelectCall>,
    /// CPU work (baseline ns) to do at the return to user space, before
    /// the program's next action: a select() that slept, without the poll
    /// window, pays its second pass and poll_freewait there.
    charge_before_step: Option<u64>,
    /// Truesize of the pair-socket skbs in `mailbox`: a bound on what
    /// each of its connections holds, so that the common check needs no
    /// table lookup ([`Sim::pair_wmem`]).
    pair_bytes: u64,
    delivered: Vec<Msg>,
    forked: Option<TaskRef>,
    parent: Option<TaskRef>,
    timer_gen: u64,
    ws_bytes: f64,
    last_cpu: Option<usize>,
    /// The LLC's pressure counter when the task last left a CPU.
    stamp: f64,
    alive: bool,
    /// The workload side it belongs to (inherited by what it forks).
    side: Option<Side>,
    /// Time on each CPU it has run on, ns (switch-in to switch-out, the
    /// engine's costs included): `(cpu, ns)` in first-run order.
    ran_on: Vec<(u32, u64)>,
    /// When it was last switched in.
    on_since: u64,
}

impl Task {
    fn new(name: String, prog: Box<dyn Program>, ws_kb: u32, parent: Option<TaskRef>, side: Option<Side>) -> Task {
        Task {
            side,
            name,
            prog,
            pending: 0,
            deferred: None,
            block: Block::None,
            was_blocked: false,
            ucopy: false,
            wait_stamp: 0,
            signalled: false,
            mailbox: VecDeque::new(),
            poll: None,
            select: None,
            charge_before_step: None,
            pair_bytes: 0,
            delivered: Vec::new(),
            forked: None,
            parent,
            timer_gen: 0,
            ws_bytes: ws_kb as f64 * 1024.0,
            last_cpu: None,
            stamp: 0.0,
            alive: true,
            ran_on: Vec::new(),
            on_since: 0,
        }
    }

    /// Books its time on `cpu` from its last switch-in to `now`.
    fn add_run(&mut self, cpu: usize, now: u64) {
        let ns = now.saturating_sub(self.on_since);
        match self.ran_on.iter_mut().find(|(c, _)| *c as usize == cpu) {
            Some((_, t)) => *t += ns,
            None => self.ran_on.push((cpu as u32, ns)),
        }
        self.on_since = now;
    }

    /// The CPU it ran on longest, the lowest of a tie.
    fn main_cpu(&self) -> Option<usize> {
        let best = self.ran_on.iter().map(|&(c, ns)| (ns, std::cmp::Reverse(c))).max()?;
        Some(best.1.0 as usize)
    }
}

/// A run in progress.
struct Sim<'a> {
    costs: &'a CostModel,
    sched: Scheduler<SimObserver>,
    cpus: Vec<Cpu>,
    tasks: Vec<Task>,
    conds: Vec<Cond>,
    mutexes: Vec<Mutex>,
    sems: Vec<Sem>,
    barriers: Vec<Barrier>,
    host: &'a Host,
    /// `Reach` from each CPU to every CPU, one row per source CPU, filled
    /// on first use (a 1024-CPU host would otherwise spend 10^6 distance
    /// lookups on every run's start).
    reach: Vec<OnceCell<Box<[Reach]>>>,
    caches: Caches,
    queue: EventQueue<Item>,
    seq: u64,
    now: u64,
    rng: Pcg64Mcg,
    tick_ns: u64,
    limits: Limits,
    units: u64,
    finish: Vec<TaskRef>,
    finish_left: usize,
    armed_timers: usize,
    switches: u64,
    preemptions: u64,
    events: u64,
    trace: Option<TraceBuf>,
    /// Costs converted once (ns, clock-scaled where CPU work).
    syscall_ns: u64,
    ctx_ns: f64,
    idle_exit_ns: u64,
    /// CONFIG_NO_HZ (tickless idle CPUs).
    nohz: bool,
    /// Socket-layer behaviour ([`Sockets`]).
    sockets: Sockets,
    ins: Instruments,
    probe: ProbeState,
    /// Re-read every CPU's hrtick after the next scheduler call, not only
    /// those its decisions named (see [`Sim::sync_hrticks`]).
    full_sync: bool,
    /// The current action runs a receive softirq on the sending CPU
    /// ([`Action::TcpSend`]): its wakeups are interrupt-time ones, the
    /// kernel's `in_interrupt()`.
    in_softirq: bool,
    /// CPUs whose `curr` is a task.
    busy_cpus: usize,
    /// Resched events in flight.
    resched_in_flight: usize,
    /// Sleeps in [`Block::Wait`] so far: the stamp of the newest.
    waits_begun: u64,
    /// Tasks not yet exited.
    live: usize,
    /// Messages in all mailboxes.
    unread: usize,
    /// The send buffers of AF_UNIX stream sockets with skbs not yet taken
    /// or writers waiting. Looked up on every socket write and read, so
    /// with rustc-hash's FxHash rather than SipHash: it has no random
    /// state, and the table is never iterated, so runs stay deterministic.
    socks: HashMap<SockKey, SendBuf, rustc_hash::FxBuildHasher>,
    /// Writes that blocked on a full send buffer.
    send_blocks: u64,
    /// select() passes raced by a wakeup that found nothing.
    select_races: u64,
    /// The most messages unread at once.
    peak_unread: usize,
    /// Settings to write during the run ([`RunSetup::changes`]).
    changes: Vec<Change>,
    /// The counts at each distinct change time.
    marks: Vec<Mark>,
    /// Interrupt loads ([`RunSetup::irqs`], and those a change started).
    irqs: Vec<IrqLoad>,
    /// Where each source of `irqs` interrupts (same order as `irqs`).
    irq_routes: IrqRoutes,
    /// Loads a `irq=off` change stopped (their next arrival is dropped).
    irqs_stopped: usize,
    /// The host's CPUs have APERF/MPERF (X86_FEATURE_APERFMPERF), which
    /// 2.6.32's ARCH_POWER reads ([`aperf_mperf_ratio`]).
    aperf_mperf: bool,
    /// Each CPU's SMT core, the CPU included; empty on a host without SMT.
    cores: Vec<CpuMask>,
    /// [`CostModel::smt_throughput`] in thousandths of a lone thread.
    smt_permille: u32,
    /// Their arrivals' own stream, so that a run without them draws what
    /// it always did.
    irq_rng: Pcg64Mcg,
    irq_count: u64,
    irq_task_ns: u64,
    /// How to rebuild the domains ([`RunSetup::domain_build`]).
    domain_build: DomainBuild,
}

/// What had been counted by a change time.
#[derive(Clone, Copy, Debug, Default)]
struct Mark {
    at: u64,
    units: u64,
    /// All tasks' schedstat wait_sum and wait_count.
    wait_sum: u64,
    wait_count: u64,
}

/// The faults of a run as they start, in time order: `irqs` and `slow` at
/// boot, then those `changes` (in time order) start, stop or change.
pub fn fault_steps<'a>(
    irqs: &'a [IrqLoad],
    slow: &'a [Slowdown],
    changes: &'a [Change],
) -> impl Iterator<Item = (u64, FaultStep<'a>)> + 'a {
    let boot = irqs.iter().map(|l| (0, FaultStep::Irq(l))).chain(slow.iter().map(|x| (0, FaultStep::Slow(x))));
    boot.chain(changes.iter().filter_map(|c| {
        let step = match &c.setting {
            Setting::Irq(l) => FaultStep::Irq(l),
            Setting::NoIrq => FaultStep::NoIrq,
            Setting::Slow(x) => FaultStep::Slow(x),
            &Setting::Offline(cpu) => FaultStep::Offline(cpu),
            &Setting::Online(cpu) => FaultStep::Online(cpu),
            _ => return None,
        };
        Some((c.at_ns, step))
    }))
}

/// Whether the host's CPUs have APERF/MPERF (X86_FEATURE_APERFMPERF, CPUID
/// leaf 6): every Intel CPU from the Core 2 on, which covers the Intel
/// hosts here (Q6600, Stoakley, Tigerton, Nehalem-EP), and on AMD only from
/// family 10h, which the one AMD preset, the Athlon 64 X2 (K8), is not; an
/// AMD host is taken to lack them.
pub fn has_aperf_mperf(host: &Host) -> bool {
    host.vendor() == cfs_topology::Vendor::Intel
}

/// What `arch_scale_freq_power` reads from APERF/MPERF (2.6.32,
/// 47fe38fcff0) on a CPU at `permille` thousandths of its nominal clock:
/// `aperf / (mperf >> 10)`, the two counters advancing at the actual and
/// the nominal clock while the CPU runs, so 1024 at full speed and 512 at
/// half. The model takes the ratio at the CPU's speed of the moment; it
/// does not average a speed change within the interval since the last
/// read, nor model the C-state residency of an idle CPU (its counters stop
/// outside C0), which could lower the real ratio (8e6598af3f3's message
/// suspects a feedback loop there).
pub fn aperf_mperf_ratio(permille: u32) -> u32 {
    (u64::from(permille) * 1024 / u64::from(FULL_SPEED)) as u32
}

/// Mixed into the run's seed for the interrupt arrivals' stream.
const IRQ_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

/// Hosts up to this size re-read every CPU's hrtick after each scheduler
/// call; larger ones only the CPUs the call's decisions named.
const FULL_SYNC_MAX_CPUS: usize = 8;

/// Runs one workload instance to completion.
pub fn run(setup: &RunSetup<'_>, inst: Instance) -> Result<RunOutcome, SimError> {
    let mut sim = Sim::new(setup, inst)?;
    sim.main_loop()?;
    Ok(sim.finish())
}

impl<'a> Sim<'a> {
    fn new(setup: &RunSetup<'a>, inst: Instance) -> Result<Sim<'a>, SimError> {
        let host = setup.host;
        let n = host.nr_cpus();
        let costs = setup.costs;
        let obs = SimObserver::new(costs.cpu(costs.scan_ns_per_cpu))
            .tracking_cpus(n > FULL_SYNC_MAX_CPUS)
            .recording_moves(setup.trace);
        let sched = Scheduler::with_observer(setup.config, setup.domains.clone(), obs).map_err(SimError::Config)?;
        let reach = (0..n).map(|_| OnceCell::new()).collect();
        let caches = Caches::new(host);
        let cpus = (0..n)
            .map(|_| Cpu {
                curr: None,
                seg: None,
                epoch: 0,
                resched_at: None,
                hrtick: None,
                debt: 0,
                busy: 0,
                since: 0,
                speed: FULL_SPEED,
                fault_speed: FULL_SPEED,
                irq_until: 0,
            })
            .collect();
        let mut sim = Sim {
            costs,
            sched,
            cpus,
            tasks: Vec::new(),
            conds: (0..inst.sync.conds).map(|_| Cond::default()).collect(),
            mutexes: (0..inst.sync.mutexes).map(|_| Mutex::default()).collect(),
            sems: (0..inst.sync.sems).map(|_| Sem::default()).collect(),
            barriers: inst.sync.barriers.iter().map(|&users| Barrier::new(users)).collect(),
            host,
            reach,
            caches,
            queue: EventQueue::new(),
            seq: 0,
            now: 0,
            rng: Pcg64Mcg::seed_from_u64(setup.seed),
            tick_ns: setup.config.tick_ns(),
            limits: setup.limits,
            units: 0,
            finish_left: inst.finish.len(),
            finish: inst.finish,
            armed_timers: 0,
            switches: 0,
            preemptions: 0,
            events: 0,
            trace: setup.trace.then(|| TraceBuf::new(n)),
            syscall_ns: costs.cpu(costs.syscall_ns).round().max(1.0) as u64,
            ctx_ns: costs.cpu(costs.ctx_switch_ns),
            idle_exit_ns: costs.idle_exit_ns.round() as u64,
            nohz: setup.config.nohz,
            sockets: setup.sockets,
            ins: setup.instruments.clone(),
            probe: ProbeState::default(),
            full_sync: true,
            in_softirq: false,
            busy_cpus: 0,
            resched_in_flight: 0,
            waits_begun: 0,
            live: 0,
            unread: 0,
            socks: HashMap::default(),
            send_blocks: 0,
            select_races: 0,
            peak_unread: 0,
            changes: setup.changes.clone(),
            marks: Vec::new(),
            irqs: setup.irqs.clone(),
            irq_routes: IrqRoutes::default(),
            irqs_stopped: 0,
            aperf_mperf: has_aperf_mperf(host),
            cores: if (0..n).any(|c| host.thread_siblings(c).weight() > 1) {
                (0..n).map(|c| host.thread_siblings(c)).collect()
            } else {
                Vec::new()
            },
            smt_permille: (costs.smt_throughput * f64::from(FULL_SPEED)).round() as u32,
            // Any fixed odd constant apart from the run's own stream.
            irq_rng: Pcg64Mcg::seed_from_u64(setup.seed ^ IRQ_STREAM),
            irq_count: 0,
            irq_task_ns: 0,
            domain_build: setup.domain_build.clone(),
        };
        sim.boot(inst.tasks, &setup.slow)?;
        Ok(sim)
    }

    /// Creates the initial tasks at time 0 and starts the clocks.
    fn boot(&mut self, specs: Vec<TaskSpec>, slow: &[Slowdown]) -> Result<(), SimError> {
        let n = self.cpus.len();
        self.check_faults(slow)?;
        if self.aperf_mperf {
            for c in 0..n {
                self.sched.set_arch_freq_power(c, Some(aperf_mperf_ratio(FULL_SPEED)))?;
            }
        }
        for s in slow {
            self.slow_down(s)?;
        }
        for spec in specs {
            self.check_task_limits()?;
            let cpu = spec.cpu.min(n - 1);
            let id = self.sched.spawn(self.t(), cpu, self.inherited(spec.params))?;
            debug_assert_eq!(id.0 as usize, self.tasks.len());
            self.tasks.push(Task::new(spec.name, spec.program, spec.ws_kb, None, spec.side));
            self.live += 1;
            self.probe_runnable(id.0 as TaskRef);
        }
        self.drain_charges();
        let _ = self.sched.take_resched();
        for cpu in 0..n {
            // Each CPU ticks at its own phase in the jiffy (the hrtimer
            // stagger, Config::tick_phase_ns); on_tick keeps the grid.
            let phase = self.sched.config().tick_phase_ns(cpu, n);
            self.push(self.tick_ns + phase, Ev::Tick(cpu as u32));
            if self.sched.need_resched(cpu) {
                self.switch(cpu, Deschedule::Preempt)?;
                self.run_task(cpu)?;
            }
        }
        if let Some(d) = self.limits.duration_ns {
            self.push(d, Ev::End);
        }
        let times: Vec<u64> = self.changes.iter().map(|c| c.at_ns).collect();
        for (i, at) in times.into_iter().enumerate() {
            self.push(at, Ev::Change(i as u32));
        }
        for i in 0..self.irqs.len() {
            self.arm_irqs(i);
        }
        Ok(())
    }

    /// Every fault of the run, those changes start included, names CPUs
    /// the host has, and leaves each CPU time for tasks at every instant
    /// ([`crate::faults::check_cpu_time`]).
    fn check_faults(&self, slow: &[Slowdown]) -> Result<(), SimError> {
        let n = self.cpus.len();
        for (_, step) in fault_steps(&self.irqs, slow, &self.changes) {
            let fault = match step {
                FaultStep::Irq(l) => l.missing_cpu(n).map(|cpu| (format!("interrupt load {l}"), cpu)),
                FaultStep::Slow(x) => x.missing_cpu(n).map(|cpu| (format!("slowdown {x}"), cpu)),
                FaultStep::NoIrq | FaultStep::Offline(_) | FaultStep::Online(_) => None,
            };
            if let Some((fault, cpu)) = fault {
                return Err(SimError::FaultCpu { fault, cpu, nr_cpus: n });
            }
        }
        crate::faults::check_hotplug(n, &self.changes).map_err(SimError::Fault)?;
        crate::faults::check_cpu_time(n, fault_steps(&self.irqs, slow, &self.changes)).map_err(SimError::Fault)
    }

    /// Schedules the first interrupt of load `i` on each of its CPUs, and
    /// routes each to its CPU ([`IrqRoutes`]).
    fn arm_irqs(&mut self, i: usize) {
        self.irq_routes.add(&self.irqs[i]);
        let cpus: Vec<usize> = self.irqs[i].cpus().iter().collect();
        for c in cpus {
            let at = self.now + self.irq_gap(i);
            self.push(at, Ev::Irq(c as u32, i as u32));
        }
    }

    /// Sets the speed of a slowdown's CPUs. On a host whose CPUs have
    /// APERF/MPERF the scheduler is told the ratio they would read, which
    /// only 2.6.32's ARCH_POWER looks at.
    fn slow_down(&mut self, s: &Slowdown) -> Result<(), SimError> {
        for c in s.cpus().iter() {
            if self.aperf_mperf {
                self.sched.set_arch_freq_power(c, Some(aperf_mperf_ratio(s.permille())))?;
            }
            if self.cpus[c].fault_speed == s.permille() {
                continue;
            }
            if let Some(tr) = &mut self.trace {
                tr.speed(c, self.now, s.permille());
            }
            self.cpus[c].fault_speed = s.permille();
            self.set_speed(c);
        }
        Ok(())
    }

    /// Brings `c`'s speed up to date: its fault speed, shared with its busy
    /// SMT siblings. When both threads of a core run, each gets
    /// `smt_throughput / 2` of a lone thread's speed (capped at full).
    fn set_speed(&mut self, c: usize) {
        let mut permille = self.cpus[c].fault_speed;
        if let Some(core) = self.cores.get(c) {
            let busy = core.iter().filter(|&t| self.cpus[t].curr.is_some()).count() as u32;
            if busy > 1 {
                let share = (self.smt_permille / busy).min(FULL_SPEED);
                permille = (u64::from(permille) * u64::from(share) / u64::from(FULL_SPEED)).max(1) as u32;
            }
        }
        self.retime(c, permille);
    }

    /// `c` runs at `permille` from now. Work in flight is re-timed: what
    /// was done at the old speed stays done, the rest goes at the new.
    fn retime(&mut self, c: usize, permille: u32) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        if cpu.speed == permille {
            return;
        }
        let Some(seg) = cpu.seg else {
            cpu.speed = permille;
            return;
        };
        let done = cpu.work_in(now.saturating_sub(seg.start));
        cpu.speed = permille;
        let seg = Seg { start: now, work: seg.work.saturating_sub(done) };
        cpu.seg = Some(seg);
        cpu.epoch += 1;
        let (end, g) = (cpu.seg_end(seg), cpu.epoch);
        self.push(end, Ev::SegEnd(c as u32, g));
    }

    /// The time to the next interrupt of load `i`: its period, or an
    /// exponential draw with its mean (at least 1 ns).
    fn irq_gap(&mut self, i: usize) -> u64 {
        let load = &self.irqs[i];
        if !load.random() {
            return load.interval_ns();
        }
        crate::dist::Dist::Exp { mean: load.interval_ns() }.sample(&mut self.irq_rng).max(1)
    }

    /// An injected interrupt on `c`: its handler's time goes to the task
    /// running there, as the kernel's update_curr charges it (no
    /// IRQ_TIME_ACCOUNTING before 2.6.37), and the handler's return is a
    /// preemption point ([`crate::faults`]).
    /// On a slowed CPU the handler, like everything else, takes longer.
    /// A load that a `irq=off` change stopped raises no more.
    /// `src` is the source's own CPU; the handler runs where the source is
    /// routed now ([`IrqRoutes`]: elsewhere once `src` has gone down).
    fn on_irq(&mut self, src: usize, i: usize) {
        if i < self.irqs_stopped {
            return;
        }
        let next = self.now + self.irq_gap(i);
        self.push(next, Ev::Irq(src as u32, i as u32));
        let Some(c) = self.irq_routes.target(i, src, |c| self.sched.cpu_online(c)) else {
            return; // held: started on a CPU that is still down
        };
        self.irq_count += 1;
        let len = self.irqs[i].len_ns();
        let wall = self.cpus[c].wall(len);
        if self.cpus[c].curr.is_some() {
            self.irq_task_ns += wall;
            self.charge(c, len);
        } else {
            // An idle CPU is busy with the handler until it returns.
            let cpu = &mut self.cpus[c];
            cpu.irq_until = cpu.irq_until.max(self.now + wall);
        }
        self.push(self.now + wall, Ev::IrqEnd(c as u32));
        if let Some(tr) = &mut self.trace {
            tr.irq(c, self.now, self.now + wall);
        }
    }

    /// Writes change `i` to the scheduler; the first change at each time
    /// closes a throughput phase.
    fn on_change(&mut self, i: usize) -> Result<(), SimError> {
        if self.marks.last().is_none_or(|m| m.at != self.now) {
            self.marks.push(self.mark());
        }
        let setting = self.changes[i].setting.clone();
        setting.apply(&mut self.sched)?;
        match &setting {
            Setting::Irq(load) => {
                self.irqs.push(load.clone());
                self.arm_irqs(self.irqs.len() - 1);
            }
            Setting::NoIrq => self.irqs_stopped = self.irqs.len(),
            &Setting::TcpLowLatency(on) => self.sockets.tcp_low_latency = on,
            Setting::Slow(x) => self.slow_down(x)?,
            &Setting::Policy(side, policy) => self.on_side(side, |s, t| s.sched.set_policy(s.t(), t, policy))?,
            &Setting::Affinity(side, mask) => self.on_side(side, |s, t| s.sched.set_affinity(s.t(), t, mask))?,
            &Setting::Nice(side, nice) => self.on_side(side, |s, t| s.sched.set_nice(s.t(), t, nice))?,
            &Setting::Offline(c) => self.cpu_down(c)?,
            &Setting::Online(c) => self.cpu_up(c)?,
            Setting::Patch(p, _) if !p.domain_flags().is_empty() => self.reinit_domains()?,
            &Setting::PowerSavings { smt, level } => self.power_savings_store(smt, level)?,
            _ => {}
        }
        if let Some(tr) = &mut self.trace {
            tr.mark(self.now, setting.to_string());
        }
        Ok(())
    }

    /// A task's parameters as it gets them from init: a task given no CPUs
    /// of its own inherits init's mask, which with `isolcpus=` holds the
    /// CPUs outside it (`sched_init_smp` moves init to the non-isolated
    /// CPUs, or to the boot CPU when every CPU is isolated), so only an
    /// explicit affinity puts a task on an isolated CPU.
    fn inherited(&self, mut params: cfs_core::TaskParams) -> cfs_core::TaskParams {
        let isolated = self.domain_build.options.isolcpus;
        if params.allowed.is_empty() && !isolated.is_empty() {
            let rest = self.host.all_cpus().and_not(&isolated);
            params.allowed = if rest.is_empty() { CpuMask::single(0) } else { rest };
        }
        params
    }

    /// [`Setting::Offline`]: the scheduler stops `c`'s task (whose work in
    /// flight is kept, as at a preemption), moves every task on `c` off and
    /// takes the domains rebuilt without it; `c` then gets no tick, and
    /// its interrupts go where `fixup_irqs` sends them ([`IrqRoutes`]; a
    /// trace mark counts the affinities it broke). The command is taken to
    /// run on the first online CPU, which sends the destinations' IPIs.
    fn cpu_down(&mut self, c: usize) -> Result<(), SimError> {
        let mut online = self.sched.online_cpus();
        online.clear(c);
        let domains = self.domain_build.rebuild(self.host, self.sched.config(), online, Rebuild::Hotplug);
        let node = self.domain_build.node_of(self.host, c);
        self.interrupt_segment(c);
        self.account(c);
        let prev = self.cpus[c].curr;
        let down = self.sched.cpu_down(self.t(), c, node, domains)?;
        let broken = self.irq_routes.cpu_down(&online);
        if let (true, Some(tr)) = (broken > 0, &mut self.trace) {
            tr.mark(self.now, format!("fixup_irqs: broke the affinity of {broken} interrupt source(s)"));
        }
        debug_assert_eq!(down.stopped.map(|t| t.0 as TaskRef), prev);
        self.cpus[c].debt = 0;
        if let Some(p) = prev {
            self.cpus[c].curr = None;
            self.busy_cpus -= 1;
            self.switches += 1;
            self.preemptions += 1;
            self.switch_out(c, p);
            self.probe_runnable(p);
            self.retime_core(c);
            if let Some(tr) = &mut self.trace {
                tr.idle(c, self.now);
            }
        }
        self.full_sync = true;
        self.hotplug_done(online)
    }

    /// A patch of the domain initialisers switched ([`Setting::Patch`]):
    /// the domains the kernel builds with the patches now in force, over
    /// the CPUs up, replace the old ones. No task moves.
    fn reinit_domains(&mut self) -> Result<(), SimError> {
        let online = self.sched.online_cpus();
        let domains = self.domain_build.rebuild(self.host, self.sched.config(), online, Rebuild::Reinit);
        self.mark_rebuild(&domains);
        self.sched.arch_reinit_sched_domains(self.t(), domains)?;
        Ok(())
    }

    /// [`Setting::PowerSavings`]: the knob takes `level` in the scheduler
    /// (`sched_power_savings_store`) with the domains built under it, and
    /// later rebuilds keep it. A level the kernel refuses is the
    /// scheduler's error, and changes nothing.
    fn power_savings_store(&mut self, smt: bool, level: u8) -> Result<(), SimError> {
        let mut build = self.domain_build.clone();
        build.options.power_savings = build.options.power_savings.with(smt, level);
        let domains = build.rebuild(self.host, self.sched.config(), self.sched.online_cpus(), Rebuild::Reinit);
        self.sched.sched_power_savings_store(self.t(), smt, level, domains.clone())?;
        self.domain_build = build;
        self.mark_rebuild(&domains);
        Ok(())
    }

    /// Marks a rebuild of the domains in the trace with the levels and
    /// spans the first online CPU gets.
    fn mark_rebuild(&mut self, domains: &SchedDomains) {
        let first = self.sched.online_cpus().first().unwrap_or(0);
        let levels: Vec<String> = domains.of(first).iter().map(|d| format!("{} {}", d.level.name(), d.span)).collect();
        if let Some(tr) = &mut self.trace {
            tr.mark(self.now, format!("domains rebuilt: CPU {first} has {}", levels.join(", ")));
        }
    }

    /// [`Setting::Online`]: `c` comes back idle under domains rebuilt with
    /// it, and (with NO_HZ) offers to stop its tick.
    fn cpu_up(&mut self, c: usize) -> Result<(), SimError> {
        let mut online = self.sched.online_cpus();
        online.set(c);
        let domains = self.domain_build.rebuild(self.host, self.sched.config(), online, Rebuild::Hotplug);
        self.sched.cpu_up(self.t(), c, domains)?;
        self.account(c);
        self.full_sync = true;
        self.hotplug_done(online)?;
        self.idle_loop(c)
    }

    /// The IPIs a hotplug operation's moves call for, sent from the first
    /// online CPU, where the command ran.
    fn hotplug_done(&mut self, online: CpuMask) -> Result<(), SimError> {
        let from = online.first().unwrap_or(0);
        self.after_call(from);
        if self.sched.need_resched(from) {
            if self.cpus[from].curr.is_none() {
                self.post_resched(from, from);
            } else {
                self.preempt(from)?;
            }
        }
        Ok(())
    }

    /// Writes a task setting (`chrt -p`, `renice`, `taskset -p`) to every
    /// live task of `side` (every live task when `None`), as one would type
    /// it on the running system: the change reaches each task where it is
    /// (running, queued or asleep), and what they fork later inherits it
    /// (cfs-core's fork copies the parent's policy, nice level and CPUs
    /// unless the workload gives the child its own). The command is taken
    /// to run on CPU 0: a CPU the scheduler asks to reschedule hears of it
    /// by IPI from there.
    fn on_side(
        &mut self,
        side: Option<Side>,
        mut write: impl FnMut(&mut Self, TaskId) -> Result<(), SchedError>,
    ) -> Result<(), SimError> {
        // Weight, policy and affinity changes requeue or move tasks without
        // a decision naming them: re-read every hrtick.
        self.full_sync = true;
        for t in 0..self.tasks.len() {
            let task = &self.tasks[t];
            if task.alive && side.is_none_or(|s| task.side == Some(s)) {
                write(self, TaskId(t as u32))?;
            }
        }
        self.after_call(0);
        if self.sched.need_resched(0) {
            self.post_resched(0, 0);
        }
        Ok(())
    }

    /// [`Action::StartMeasuring`]: the window starts now. Units counted
    /// before are dropped, and so are the phase marks' counts, which all
    /// lie before the new start (each such phase then counts nothing).
    fn start_measuring(&mut self) {
        self.limits.warmup_ns = self.now;
        self.units = 0;
        for m in &mut self.marks {
            m.units = 0;
        }
    }

    /// The counts as they stand now.
    fn mark(&self) -> Mark {
        let (mut wait_sum, mut wait_count) = (0u64, 0u64);
        for i in 0..self.tasks.len() {
            if let Some(t) = self.sched.task(TaskId(i as u32)) {
                wait_sum = wait_sum.wrapping_add(t.se.stats.wait_sum);
                wait_count = wait_count.wrapping_add(t.se.stats.wait_count);
            }
        }
        Mark { at: self.now, units: self.units, wait_sum, wait_count }
    }

    /// The phases between the change times that came before the run's
    /// end, now (none without changes; the whole run as one phase when
    /// every change was due after its end).
    fn phases(&self) -> Vec<Phase> {
        if self.changes.is_empty() {
            return Vec::new();
        }
        let warm = self.limits.warmup_ns;
        let mut bounds = vec![Mark::default()];
        bounds.extend(self.marks.iter().copied().filter(|m| m.at > 0));
        bounds.push(self.mark());
        bounds
            .windows(2)
            .map(|w| {
                let start = w[0].at.max(warm).min(w[1].at);
                Phase {
                    start_ns: start,
                    end_ns: w[1].at,
                    units: w[1].units - w[0].units,
                    wait_sum_ns: w[1].wait_sum.wrapping_sub(w[0].wait_sum),
                    wait_count: w[1].wait_count.wrapping_sub(w[0].wait_count),
                }
            })
            .collect()
    }

    /// The time as the scheduler sees it (with the instruments' offset).
    fn t(&self) -> u64 {
        self.now.wrapping_add(self.ins.clock_offset)
    }

    // ----- instruments ------------------------------------------------------

    fn probe_runnable(&mut self, t: TaskRef) {
        if self.ins.watch {
            let q = &mut self.probe.queued_since;
            if q.len() <= t {
                q.resize(t + 1, None);
            }
            q[t] = Some(self.now);
        }
    }

    fn probe_switch_in(&mut self, c: usize, n: TaskRef) {
        if self.ins.watch {
            if let Some(since) = self.probe.queued_since.get_mut(n).and_then(Option::take) {
                let wait = self.now - since;
                if wait > self.probe.out.max_wait_ns {
                    self.probe.out.max_wait_ns = wait;
                    self.probe.out.max_wait_task = Some(self.tasks[n].name.clone());
                }
            }
        }
        if self.probe.wakee.get(n).copied().unwrap_or(false) {
            self.probe.out.one_to_n_wakees += 1;
            let w = self.now / ONE_TO_N_WINDOW_NS;
            let st = &mut self.probe;
            if w != st.window {
                // Close the previous window(s): serialised if >= 95% of the
                // wakees' switch-ins were on the waker's CPU.
                let serial = st.on_waker_cpu > 0 && st.elsewhere * 19 <= st.on_waker_cpu && w == st.window + 1;
                st.serial_windows = if serial { st.serial_windows + 1 } else { 0 };
                st.out.one_to_n_streak_ns = st.out.one_to_n_streak_ns.max(st.serial_windows * ONE_TO_N_WINDOW_NS);
                st.window = w;
                st.on_waker_cpu = 0;
                st.elsewhere = 0;
            }
            let waker_cpu = self.probe.waker.and_then(|w| self.sched.task(TaskId(w as u32))).map(|t| t.cpu);
            if waker_cpu == Some(c) {
                self.probe.on_waker_cpu += 1;
            } else {
                self.probe.elsewhere += 1;
            }
        }
    }

    fn probe_wake(&mut self, c: usize, to: TaskRef) {
        let Some(name) = &self.ins.one_to_n_waker else { return };
        let Some(w) = self.cpus[c].curr.filter(|&w| self.tasks[w].name == *name) else { return };
        self.probe.waker = Some(w);
        if self.probe.wakee.len() <= to {
            self.probe.wakee.resize(to + 1, false);
        }
        self.probe.wakee[to] = true;
    }

    /// After every event: is a CPU idle while another has two or more
    /// runnable tasks?
    fn probe_gap(&mut self) {
        let nr = |c: usize| self.sched.rq(c).map_or(0, |rq| rq.nr_running);
        let n = self.cpus.len();
        // A CPU that is down is not a wasted one.
        let idle = (0..n).any(|c| nr(c) == 0 && self.sched.cpu_online(c));
        let crowded = (0..n).any(|c| nr(c) >= 2);
        match (idle && crowded, self.probe.gap_since) {
            (true, None) => self.probe.gap_since = Some(self.now),
            (true, Some(s)) => self.probe.out.worst_idle_gap_ns = self.probe.out.worst_idle_gap_ns.max(self.now - s),
            (false, Some(s)) => {
                self.probe.out.worst_idle_gap_ns = self.probe.out.worst_idle_gap_ns.max(self.now - s);
                self.probe.gap_since = None;
            }
            (false, None) => {}
        }
    }

    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Item { t, seq: self.seq, ev });
    }

    #[inline]
    fn reach(&self, a: usize, b: usize) -> Reach {
        self.reach_row(a)[b]
    }

    /// `reach(a, _)` for every CPU.
    #[inline]
    fn reach_row(&self, a: usize) -> &[Reach] {
        match self.reach[a].get() {
            Some(row) => row,
            None => self.fill_reach_row(a),
        }
    }

    #[cold]
    fn fill_reach_row(&self, a: usize) -> &[Reach] {
        let host = self.host;
        self.reach[a].get_or_init(|| (0..self.cpus.len()).map(|b| Reach::of(host.distance(a, b))).collect())
    }

    // ----- the loop ----------------------------------------------------------

    fn main_loop(&mut self) -> Result<(), SimError> {
        while let Some(item) = self.queue.pop() {
            if item.t > self.limits.max_ns {
                return Err(self.time_limit());
            }
            self.now = item.t;
            self.events += 1;
            match item.ev {
                Ev::End => return Ok(()),
                Ev::Tick(c) => {
                    self.on_tick(c as usize)?;
                    if self.stalled() {
                        return self.on_stall();
                    }
                }
                Ev::SegEnd(c, g) => {
                    let c = c as usize;
                    if self.cpus[c].epoch == g && self.cpus[c].seg.is_some() {
                        self.cpus[c].seg = None;
                        self.run_task(c)?;
                    }
                }
                // (One overtaken by resched_now is stale: its CPU
                // rescheduled earlier.)
                // An idle CPU inside an interrupt handler takes the
                // reschedule (the IPI, or its own idle exit) when the
                // handler returns: interrupts are off until then.
                Ev::Resched(c)
                    if self.cpus[c as usize].resched_at == Some(self.now)
                        && self.cpus[c as usize].curr.is_none()
                        && self.now < self.cpus[c as usize].irq_until =>
                {
                    let t = self.cpus[c as usize].irq_until;
                    self.cpus[c as usize].resched_at = Some(t);
                    self.push(t, Ev::Resched(c));
                }
                Ev::Resched(c) if self.cpus[c as usize].resched_at == Some(self.now) => {
                    let c = c as usize;
                    self.cpus[c].resched_at = None;
                    self.resched_in_flight -= 1;
                    if self.sched.need_resched(c) {
                        self.preempt(c)?;
                    }
                }
                Ev::Resched(_) => {}
                Ev::Hrtick(c, e) => self.on_hrtick(c as usize, e)?,
                Ev::Timer(t, g) => self.on_timer(t as usize, g)?,
                Ev::Change(i) => self.on_change(i as usize)?,
                Ev::Irq(c, i) => self.on_irq(c as usize, i as usize),
                Ev::IrqEnd(c) => self.interrupt_return(c as usize)?,
            }
            if self.ins.watch {
                self.probe_gap();
            }
            if !self.finish.is_empty() && self.finish_left == 0 {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The cap was reached: the error names the finishing tasks still
    /// alive, so a workload that never ends says which task it waits for.
    /// (One not yet forked, as an rt-app thread main has still to create,
    /// is still to finish too, but has no name yet.)
    #[cold]
    fn time_limit(&self) -> SimError {
        let left: Vec<&str> = self
            .finish
            .iter()
            .filter(|&&t| self.tasks.get(t).is_none_or(|x| x.alive))
            .map(|&t| self.tasks.get(t).map_or("(not yet created)", |x| x.name.as_str()))
            .collect();
        let named = left.len().min(SimError::NAMED);
        SimError::TimeLimit {
            at: self.limits.max_ns,
            waiting_for: left[..named].iter().map(|n| n.to_string()).collect(),
            unnamed: left.len() - named,
        }
    }

    /// Nothing can ever happen again: all CPUs idle, nothing queued, no
    /// timer armed, no IPI in flight.
    fn stalled(&self) -> bool {
        debug_assert_eq!(self.busy_cpus, self.cpus.iter().filter(|c| c.curr.is_some()).count());
        debug_assert_eq!(self.resched_in_flight, self.cpus.iter().filter(|c| c.resched_at.is_some()).count());
        self.armed_timers == 0
            && self.busy_cpus == 0
            && self.resched_in_flight == 0
            && (0..self.cpus.len()).all(|c| self.sched.rq(c).is_none_or(|rq| rq.nr_running == 0))
    }

    fn on_stall(&mut self) -> Result<(), SimError> {
        debug_assert_eq!(self.live, self.tasks.iter().filter(|t| t.alive).count());
        let alive = self.live > 0;
        match self.limits.duration_ns {
            // A timed run idles to its end: jump there.
            Some(d) => {
                self.now = self.now.max(d);
                Ok(())
            }
            None if alive => {
                let writers = self.tasks.iter().filter(|t| t.alive && t.block == Block::SendBuf).count();
                Err(SimError::Stalled { at: self.now, writers })
            }
            None => Ok(()),
        }
    }

    fn on_tick(&mut self, c: usize) -> Result<(), SimError> {
        self.push(self.now + self.tick_ns, Ev::Tick(c as u32));
        if self.sched.tick_stopped(c) || !self.sched.cpu_online(c) {
            return Ok(()); // NO_HZ: this idle CPU's tick is off; or the CPU is down
        }
        self.sched.tick(self.t(), c)?;
        self.after_call(c);
        self.interrupt_return(c)
    }

    fn on_hrtick(&mut self, c: usize, e: u64) -> Result<(), SimError> {
        if self.cpus[c].hrtick == Some(e) {
            self.cpus[c].hrtick = None;
        }
        if self.sched.hrtick_expiry(c) != Some(e) {
            return Ok(()); // re-armed or cancelled since
        }
        self.sched.hrtick(self.t(), c)?;
        self.after_call(c);
        self.interrupt_return(c)
    }

    /// A task's sleep timer fired on the CPU it slept on.
    fn on_timer(&mut self, t: TaskRef, g: u64) -> Result<(), SimError> {
        let task = &mut self.tasks[t];
        if task.timer_gen != g || !matches!(task.block, Block::Sleep { .. }) {
            return Ok(());
        }
        self.armed_timers -= 1;
        task.block = Block::None;
        task.deferred = Some(Deferred::Resume);
        let cpu = self.sched.task(TaskId(t as u32)).map_or(0, |x| x.cpu);
        let out = self.sched.wake_up_irq(self.t(), TaskId(t as u32), cpu, false)?;
        if out.woken {
            self.probe_runnable(t);
        }
        let ipi = self.after_call(cpu).contains(out.cpu);
        let cost = self.costs.wake_cost(self.reach(cpu, out.cpu), ipi);
        self.charge(cpu, round_u64(cost));
        self.interrupt_return(cpu)
    }

    /// The end of an interrupt on `c`: act on need_resched now (an idle CPU
    /// first leaves its C-state).
    fn interrupt_return(&mut self, c: usize) -> Result<(), SimError> {
        if !self.sched.cpu_online(c) {
            return Ok(()); // a handler that began before the CPU went down
        }
        if !self.sched.need_resched(c) {
            return self.idle_loop(c);
        }
        if self.cpus[c].curr.is_none() {
            self.post_resched(c, c);
            Ok(())
        } else {
            self.preempt(c)
        }
    }

    // ----- scheduler calls ----------------------------------------------------

    /// After any scheduler call made on `c`: charge scheduler work, send
    /// IPIs to other CPUs that must reschedule, re-arm hrtick events.
    fn after_call(&mut self, c: usize) -> CpuMask {
        self.drain_charges();
        let mask = self.sched.take_resched();
        let mut sent = CpuMask::empty();
        if !mask.is_empty() {
            for cpu in mask.iter() {
                if cpu != c && self.post_resched(c, cpu) {
                    sent.set(cpu);
                }
            }
        }
        self.sync_hrticks(c);
        sent
    }

    /// Takes what the observer collected during a scheduler call: the
    /// scheduler work to charge to CPUs, and the balancer's moves for the
    /// trace.
    fn drain_charges(&mut self) {
        self.drain_moves();
        if self.sched.observer().charges.is_empty() {
            return;
        }
        let charges = std::mem::take(&mut self.sched.observer_mut().charges);
        for &(cpu, ns) in &charges {
            self.charge(cpu, ns);
        }
        let mut charges = charges;
        charges.clear();
        self.sched.observer_mut().charges = charges;
    }

    /// Hands the balancer's moves to the trace (recorded only when there
    /// is one).
    fn drain_moves(&mut self) {
        if self.sched.observer().moves.is_empty() {
            return;
        }
        let moves = std::mem::take(&mut self.sched.observer_mut().moves);
        if let Some(tr) = &mut self.trace {
            for &(now, task, from, to, why) in &moves {
                tr.moved(task.0 as TaskRef, from, to, now, why);
            }
        }
    }

    /// Queues an Hrtick event for every CPU whose armed expiry changed, in
    /// CPU order. On hosts above [`FULL_SYNC_MAX_CPUS`] only the CPUs the
    /// scheduler's decisions named since the last sync (and `c`) can have
    /// changed (see [`SimObserver::touched`]); debug builds check that
    /// against every CPU.
    fn sync_hrticks(&mut self, c: usize) {
        let n = self.cpus.len();
        if n <= FULL_SYNC_MAX_CPUS || std::mem::take(&mut self.full_sync) {
            self.sched.observer_mut().touched.clear();
            for cpu in 0..n {
                self.sync_hrtick(cpu);
            }
            return;
        }
        let mut touched = std::mem::take(&mut self.sched.observer_mut().touched);
        touched.push(c);
        touched.sort_unstable();
        touched.dedup();
        for &cpu in &touched {
            self.sync_hrtick(cpu);
        }
        touched.clear();
        self.sched.observer_mut().touched = touched;
        #[cfg(debug_assertions)]
        for cpu in 0..n {
            assert_eq!(
                self.sched.hrtick_expiry(cpu),
                self.cpus[cpu].hrtick,
                "CPU {cpu}'s hrtick changed in a call on CPU {c} that named no decision on it"
            );
        }
    }

    #[inline]
    fn sync_hrtick(&mut self, c: usize) {
        let e = self.sched.hrtick_expiry(c);
        if e != self.cpus[c].hrtick {
            self.cpus[c].hrtick = e;
            if let Some(e) = e {
                let at = e.wrapping_sub(self.ins.clock_offset).max(self.now);
                self.push(at, Ev::Hrtick(c as u32, e));
            }
        }
    }

    /// A reschedule request from `from` reaches `cpu` after the IPI's
    /// flight time and, if `cpu` idles, its C-state exit.
    fn post_resched(&mut self, from: usize, cpu: usize) -> bool {
        if self.cpus[cpu].resched_at.is_some() {
            return false;
        }
        let mut lat = if from == cpu { 0 } else { self.costs.ipi_latency_ns[self.reach(from, cpu) as usize] as u64 };
        if self.cpus[cpu].curr.is_none() {
            lat += self.idle_exit_ns;
        }
        let t = self.now + lat;
        self.cpus[cpu].resched_at = Some(t);
        self.resched_in_flight += 1;
        self.push(t, Ev::Resched(cpu as u32));
        true
    }

    /// Adds `ns` of work to `cpu`: to the segment in flight, or to the next
    /// one. An idle CPU absorbs it.
    fn charge(&mut self, cpu: usize, ns: u64) {
        if ns == 0 || self.cpus[cpu].curr.is_none() {
            return;
        }
        let cpu_state = &mut self.cpus[cpu];
        match cpu_state.seg.as_mut() {
            Some(seg) => {
                seg.work += ns;
                let seg = *seg;
                cpu_state.epoch += 1;
                let (end, g) = (cpu_state.seg_end(seg), cpu_state.epoch);
                self.push(end, Ev::SegEnd(cpu as u32, g));
            }
            None => cpu_state.debt += ns,
        }
    }

    // ----- running tasks --------------------------------------------------------

    /// Interrupts `c`'s segment and reschedules, then runs whoever is current.
    fn preempt(&mut self, c: usize) -> Result<(), SimError> {
        self.interrupt_segment(c);
        self.switch(c, Deschedule::Preempt)?;
        self.run_task(c)
    }

    fn interrupt_segment(&mut self, c: usize) {
        if let Some(seg) = self.cpus[c].seg.take() {
            self.cpus[c].epoch += 1;
            let done = self.cpus[c].work_in(self.now.saturating_sub(seg.start));
            if let Some(t) = self.cpus[c].curr {
                self.tasks[t].pending = seg.work.saturating_sub(done);
            }
        }
    }

    fn start_segment(&mut self, c: usize, t: TaskRef) {
        debug_assert!(self.cpus[c].seg.is_none());
        let work = (self.tasks[t].pending + std::mem::take(&mut self.cpus[c].debt)).max(1);
        self.tasks[t].pending = 0;
        let seg = Seg { start: self.now, work };
        let cpu = &mut self.cpus[c];
        cpu.seg = Some(seg);
        cpu.epoch += 1;
        let (end, g) = (cpu.seg_end(seg), cpu.epoch);
        self.push(end, Ev::SegEnd(c as u32, g));
    }

    /// `schedule()` on `c`: the scheduler picks, the engine prices the
    /// switch.
    fn switch(&mut self, c: usize, how: Deschedule) -> Result<(), SimError> {
        let prev = self.cpus[c].curr;
        self.account(c);
        let sw = self.sched.schedule(self.t(), c, how)?;
        self.after_call(c);
        let next = sw.next.map(|t| t.0 as TaskRef);
        self.cpus[c].curr = next;
        self.busy_cpus = self.busy_cpus + usize::from(next.is_some()) - usize::from(prev.is_some());
        if next.is_some() != prev.is_some() {
            self.retime_core(c);
        }
        if next == prev {
            if next.is_none() {
                // Woken with nothing to run (an ILB kick): back to the idle loop.
                self.idle_loop(c)?;
            }
            return Ok(());
        }
        self.switches += 1;
        if how == Deschedule::Preempt && prev.is_some() {
            self.preemptions += 1;
        }
        if let Some(p) = prev {
            self.switch_out(c, p);
            if matches!(how, Deschedule::Preempt | Deschedule::Yield) {
                self.probe_runnable(p);
            }
        }
        if let Some(n) = next {
            self.probe_switch_in(c, n);
            self.switch_in(c, n);
        } else {
            if let Some(tr) = &mut self.trace {
                tr.idle(c, self.now);
            }
            if self.sched.need_resched(c) {
                // The idle task's own reschedule, left by a pull in an
                // earlier schedule() it made: it schedules again before
                // it reaches its idle routine, so no C-state to leave.
                self.resched_now(c);
            } else {
                self.idle_loop(c)?;
            }
        }
        Ok(())
    }

    /// `cpu` reschedules at this instant (its own flag, no IPI), even if
    /// an IPI for it is still in flight (that one is then stale).
    fn resched_now(&mut self, cpu: usize) {
        if self.cpus[cpu].resched_at.replace(self.now).is_none() {
            self.resched_in_flight += 1;
        }
        self.push(self.now, Ev::Resched(cpu as u32));
    }

    /// `c` went busy or idle: on an SMT host its core's threads share the
    /// core, so each of them now runs at another speed.
    fn retime_core(&mut self, c: usize) {
        if self.cores.is_empty() {
            return;
        }
        let core = self.cores[c];
        for t in core.iter() {
            self.set_speed(t);
        }
    }

    /// `c` is (back) in the idle loop with nothing to do: with NO_HZ it
    /// offers to stop its tick (tick_nohz_stop_sched_tick). A no-op on a
    /// busy CPU, with need_resched set, or with NO_HZ off.
    fn idle_loop(&mut self, c: usize) -> Result<(), SimError> {
        if !self.nohz || self.cpus[c].curr.is_some() || self.sched.need_resched(c) {
            return Ok(());
        }
        self.sched.nohz_stop_sched_tick(self.t(), c)?;
        self.after_call(c);
        Ok(())
    }

    fn account(&mut self, c: usize) {
        let cpu = &mut self.cpus[c];
        if cpu.curr.is_some() {
            cpu.busy += self.now - cpu.since;
        }
        cpu.since = self.now;
    }

    fn switch_out(&mut self, c: usize, p: TaskRef) {
        let now = self.now;
        let task = &mut self.tasks[p];
        task.add_run(c, now);
        task.last_cpu = Some(c);
        task.stamp = self.caches.pressure_of(c);
    }

    fn switch_in(&mut self, c: usize, n: TaskRef) {
        let cost = self.ctx_ns + self.refill(n, c);
        self.tasks[n].pending += round_u64(cost);
        self.tasks[n].on_since = self.now;
        if let Some(tr) = &mut self.trace {
            tr.begin(c, n, self.now);
        }
    }

    /// The cache refill task `t` pays to run on `c` ([`Caches::refill`]).
    fn refill(&mut self, t: TaskRef, c: usize) -> f64 {
        let task = &self.tasks[t];
        let last = task.last_cpu.map(|p| LastRun {
            cpu: p,
            stamp: task.stamp,
            // Not read when the task stays on its CPU.
            xfer_line_ns: if p == c { 0.0 } else { self.costs.xfer_line_ns[self.reach(p, c) as usize] },
        });
        self.caches.refill(task.ws_bytes, last, c, self.costs.mem_line_ns)
    }

    /// Runs `c`'s current task until it starts a segment or leaves the CPU
    /// and nothing else can run at this instant.
    fn run_task(&mut self, c: usize) -> Result<(), SimError> {
        let mut free_steps = 0u32;
        loop {
            let Some(t) = self.cpus[c].curr else { return Ok(()) };
            if self.tasks[t].pending > 0 || self.cpus[c].debt > 0 {
                self.start_segment(c, t);
                return Ok(());
            }
            if self.tasks[t].deferred.is_some() && self.sched.need_resched(c) {
                // The end of the schedule() the task blocked or yielded in:
                // a reschedule raised on it then (a newly idle pull that
                // would preempt it) is tested before it goes on
                // (cfs_core::Task::need_resched).
                self.switch(c, Deschedule::Preempt)?;
                continue;
            }
            if let Some(d) = self.tasks[t].deferred.take() {
                self.resume(c, t, d)?;
                continue;
            }
            // Return to user space: the preemption point.
            if self.sched.need_resched(c) {
                self.switch(c, Deschedule::Preempt)?;
                if self.cpus[c].curr == Some(t) {
                    // Nobody better: carry on without looping back here.
                    self.next_action(c, t)?;
                }
                continue;
            }
            free_steps += 1;
            if free_steps > FREE_STEPS {
                // A program that only counts progress: make time pass.
                self.tasks[t].pending = self.syscall_ns;
                continue;
            }
            self.next_action(c, t)?;
        }
    }

    /// Back in user space: work the return still owes
    /// ([`Task::charge_before_step`]), else the program's next action.
    fn next_action(&mut self, c: usize, t: TaskRef) -> Result<(), SimError> {
        if let Some(ns) = self.tasks[t].charge_before_step.take() {
            self.tasks[t].pending = self.work(ns);
            return Ok(());
        }
        let a = self.step(t);
        self.exec(c, t, a)
    }

    /// Asks task `t`'s program for its next action.
    fn step(&mut self, t: TaskRef) -> Action {
        let task = &mut self.tasks[t];
        let mut cx = StepCx {
            now: self.now,
            me: t,
            rng: &mut self.rng,
            received: &task.delivered,
            blocked: task.was_blocked,
            forked: task.forked,
            parent: task.parent,
        };
        let a = task.prog.step(&mut cx);
        task.delivered.clear();
        task.was_blocked = false;
        task.forked = None;
        a
    }

    /// CPU work of `ns` baseline ns at this host's speed, with jitter.
    fn work(&mut self, ns: u64) -> u64 {
        let cv = self.costs.jitter_cv;
        let j = if cv > 0.0 { (1.0 + cv * crate::dist::std_normal(&mut self.rng)).clamp(0.2, 3.0) } else { 1.0 };
        round_u64(self.costs.cpu(ns as f64) * j)
    }

    fn exec(&mut self, c: usize, t: TaskRef, a: Action) -> Result<(), SimError> {
        self.check_objects(&a)?;
        let sys = self.syscall_ns;
        let defer = |s: &mut Self, d: Deferred| {
            s.tasks[t].pending = sys;
            s.tasks[t].deferred = Some(d);
        };
        match a {
            Action::Run(ns) => self.tasks[t].pending = self.work(ns),
            Action::RunDist(d) => {
                let ns = d.sample(&mut self.rng);
                self.tasks[t].pending = self.work(ns);
            }
            Action::Send { to, sync, bytes, tag } => {
                let cost = self.send(c, to, sync, Msg { from: t, cpu: c, bytes, tag, stream: None })?;
                self.tasks[t].pending = sys + cost;
            }
            // Loopback TCP: the receive path runs as NET_RX softirq on this
            // CPU before the send returns. A reader blocked in tcp_recvmsg
            // has set tp->ucopy.task, so tcp_prequeue queues the segment
            // and wakes it with wake_up_interruptible(_poll), not sync
            // (bce7f793 include/net/tcp.h:902, 22763c5c :941-942); any
            // other reader (one in select/poll), and every reader under
            // tcp_low_latency (no prequeue), is woken by sock_def_readable,
            // sync (bce7f793 net/core/sock.c:1637, 22763c5c :1778). The
            // prequeue needs both the sysctl at 0 now (tcp_prequeue reads
            // it per segment) and ucopy.task, which the reader installed
            // only if it was 0 when it went to sleep.
            Action::TcpSend { to, bytes, tag } => {
                let prequeued = !self.sockets.tcp_low_latency
                    && self.tasks.get(to).is_some_and(|r| r.block == Block::Wait && r.select.is_none() && r.ucopy);
                self.in_softirq = true;
                let sent = self.send(c, to, !prequeued, Msg { from: t, cpu: c, bytes, tag, stream: None });
                self.in_softirq = false;
                self.tasks[t].pending = sys + sent?;
            }
            Action::SendAll { to, sync, bytes, tag } => {
                let mut cost = 0;
                for r in self.wait_queue_order(&to) {
                    cost += self.send(c, r, sync, Msg { from: t, cpu: c, bytes, tag, stream: None })?;
                }
                self.tasks[t].pending = sys + cost;
            }
            // A unix-stream write: a sync send charged to its socket's
            // send buffer, which blocks while that is full.
            Action::Write { to, stream, bytes, tag } => {
                if self.send_buffer_full(SockKey::new(stream, t, to), bytes) {
                    self.send_blocks += 1;
                    defer(self, Deferred::Write { to, stream, bytes, tag });
                } else {
                    let cost = self.send(c, to, true, Msg { from: t, cpu: c, bytes, tag, stream: Some(stream) })?;
                    self.tasks[t].pending = sys + cost;
                }
            }
            Action::Wait { all } => defer(self, Deferred::Wait { all, woken: false }),
            Action::Select { entry_ns, poll_ns, exit_ns, repoll_ns, slept_ns, fds } => {
                // One draw of jitter for the whole call, shared out.
                let polls = poll_ns.saturating_mul(fds.len() as u64);
                let base = entry_ns.saturating_add(polls).saturating_add(exit_ns);
                let work = self.work(base);
                let task = &mut self.tasks[t];
                task.select = Some(SelectCall { fds: fds.clone(), repoll_ns, slept_ns });
                if self.sockets.poll_window && !fds.is_empty() {
                    let (lead, polled) = (share_of(work, entry_ns, base), share_of(work, polls, base));
                    let exit = work.saturating_sub(lead + polled);
                    let pending = task.mailbox.iter().map(|m| m.from);
                    task.poll = Some(PollPass::new(fds, sys + lead, polled, exit, pending));
                    task.pending = sys + lead + polled;
                    task.deferred = Some(Deferred::Select);
                    if !self.polls_running() {
                        // do_select's set_current_state(TASK_INTERRUPTIBLE)
                        // (e490517a fs/select.c:208): a wakeup during the
                        // pass takes try_to_wake_up's out_running path.
                        self.sched.set_current_state(TaskId(t as u32), CurrentState::Interruptible)?;
                    }
                } else {
                    task.pending = sys + work;
                    task.deferred = Some(Deferred::Wait { all: true, woken: false });
                }
            }
            Action::Sleep { ns, interruptible } => defer(self, Deferred::Sleep { ns, interruptible }),
            // pthread_cond_wait: register, release the mutex (waking one
            // of its sleepers), then sleep unless signalled meanwhile.
            Action::CondWait { cond, mutex } => {
                self.conds[cond].wait(t);
                let cost = match mutex {
                    Some(m) => self.unlock(c, MutexRef::User(m))?.unwrap_or(0),
                    None => 0,
                };
                let then = mutex.map_or(AfterWake::Continue, AfterWake::Lock);
                defer(self, Deferred::Await(then));
                self.tasks[t].pending += cost;
            }
            Action::CondSignal { cond, all } => {
                let mut woken = self.conds[cond].signal(all);
                if all {
                    woken = self.requeue_onto_mutexes(woken);
                }
                let cost = self.wake_waiters(c, woken)?;
                self.tasks[t].pending = sys + cost;
            }
            // The fast paths are atomic instructions in user space: free
            // steps. The slow ones are a futex call.
            Action::Lock(m) => {
                if !self.mutexes[m].try_lock() {
                    defer(self, Deferred::Lock(m));
                }
            }
            Action::Unlock(m) => {
                if let Some(cost) = self.unlock(c, MutexRef::User(m))? {
                    self.tasks[t].pending = sys + cost;
                }
            }
            Action::SemPost(k) => {
                if let Some(w) = self.sems[k].post() {
                    self.tasks[t].pending = sys + self.wake(c, w, false)?;
                }
            }
            Action::SemWait(k) => {
                if !self.sems[k].try_wait() {
                    defer(self, Deferred::SemWait(k));
                }
            }
            Action::Barrier(b) => {
                if self.barriers[b].mutex.try_lock() {
                    self.barrier_arrive(c, t, b)?;
                } else {
                    defer(self, Deferred::BarrierArrive(b));
                }
            }
            Action::Fork(spec) => {
                self.fork(c, t, *spec)?;
                self.tasks[t].pending = sys;
            }
            Action::Yield => defer(self, Deferred::Yield),
            Action::Exit => defer(self, Deferred::Exit),
            Action::Touch { peers, lines } => {
                let row = self.reach_row(c);
                let cost: f64 = peers
                    .iter()
                    .filter(|&&p| p != t && self.tasks.get(p).is_some_and(|x| x.alive))
                    .map(|&p| {
                        let cpu = self.sched.task(TaskId(p as u32)).map_or(c, |x| x.cpu);
                        self.costs.dirty_line_ns[row[cpu] as usize]
                    })
                    .sum();
                self.tasks[t].pending = round_u64(cost * lines);
            }
            Action::Progress(n) => {
                if self.now >= self.limits.warmup_ns {
                    self.units += n;
                }
            }
            Action::StartMeasuring => self.start_measuring(),
            Action::Fail(why) => {
                return Err(SimError::Program { at: self.now, task: self.tasks[t].name.clone(), why });
            }
            // Weight and affinity changes requeue the task on its own
            // runqueue without a decision naming it: re-read every hrtick.
            Action::SetNice(nice) => {
                self.full_sync = true;
                self.sched.set_nice(self.t(), TaskId(t as u32), nice)?;
                self.after_call(c);
                self.tasks[t].pending = sys;
            }
            Action::SetPolicy(p) => {
                self.full_sync = true;
                self.sched.set_policy(self.t(), TaskId(t as u32), p)?;
                self.after_call(c);
                self.tasks[t].pending = sys;
            }
            Action::SetAffinity(m) => {
                self.full_sync = true;
                // A mask with no CPU of this host is refused like the
                // kernel's EINVAL: the task keeps its affinity. A task that
                // moves itself off its CPU is preempted at the call's
                // return and carried over while still queued, which is
                // CONFIG_PREEMPT_VOLUNTARY's path (might_sleep() in
                // wait_for_completion reschedules to the migration
                // thread). Under PREEMPT_NONE the caller would sleep in
                // wait_for_completion and complete() would wake it, not
                // sync, from the migration thread on the old CPU
                // (bce7f793 sched.c:5561-5592, 4366-4374, 4417-4430);
                // that path is not modelled.
                if self.sched.set_affinity(self.t(), TaskId(t as u32), *m).is_ok() {
                    self.after_call(c);
                }
                self.tasks[t].pending = sys;
            }
        }
        Ok(())
    }

    /// The blocking half of an action, once its system call time has passed.
    fn resume(&mut self, c: usize, t: TaskRef, d: Deferred) -> Result<(), SimError> {
        match d {
            Deferred::Resume => {}
            Deferred::Wait { all, woken } => {
                if self.tasks[t].mailbox.is_empty() {
                    let repoll_ns = self.tasks[t].select.as_ref().map_or(0, |call| call.repoll_ns);
                    if woken && repoll_ns > 0 {
                        // A select() woken with nothing to read: poll every
                        // socket again, then look once more.
                        self.tasks[t].pending = self.work(repoll_ns);
                        self.tasks[t].deferred = Some(Deferred::Wait { all, woken: false });
                        return Ok(());
                    }
                    return self.block(c, t, Block::Wait, Deferred::Wait { all, woken: true });
                }
                // A select() that slept polls every socket again and takes
                // itself off their wait queues before it returns.
                let task = &mut self.tasks[t];
                if let Some(call) = task.select.take().filter(|_| task.was_blocked) {
                    task.charge_before_step = Some(call.repoll_ns.saturating_add(call.slept_ns));
                }
                self.deliver(c, t, all)?;
            }
            Deferred::Select => {
                let Some(pass) = self.tasks[t].poll.take() else {
                    return self.resume(c, t, Deferred::Wait { all: true, woken: false });
                };
                let mailbox = &self.tasks[t].mailbox;
                if mailbox.iter().any(|m| pass.finds(m.from)) {
                    // `__set_current_state(TASK_RUNNING)` on the way out
                    // (e490517a fs/select.c:284).
                    self.sched.set_current_state(TaskId(t as u32), CurrentState::Running)?;
                    self.tasks[t].pending += pass.exit();
                    self.tasks[t].select = None;
                    self.deliver_found(c, t, &pass)?;
                } else if pass.raced() || !mailbox.is_empty() {
                    // (A pass that found nothing registered on every
                    // socket, so anything pending raced it; the second test
                    // only keeps a message from being slept on.)
                    // Up to 2.6.28: TASK_RUNNING again, schedule_timeout's
                    // schedule() keeps it queued, a voluntary switch, after
                    // which the loop polls every socket again. From
                    // 5f820f648c9 (2.6.29) poll_schedule_timeout sees
                    // `triggered` and polls again without schedule().
                    self.select_races += u64::from(pass.raced());
                    self.tasks[t].deferred = Some(Deferred::Repoll);
                    if !self.polls_running() {
                        self.switch(c, Deschedule::Preempt)?;
                    }
                } else {
                    return self.block(c, t, Block::Wait, Deferred::Repoll);
                }
            }
            Deferred::Repoll => {
                let Some(call) = self.tasks[t].select.clone() else {
                    return self.resume(c, t, Deferred::Wait { all: true, woken: false });
                };
                // The loop's next iteration: TASK_INTERRUPTIBLE again
                // (e490517a fs/select.c:208), every socket polled, nothing
                // new registered; one draw of jitter for the polls and, if
                // it finds something, the way out.
                let base = call.repoll_ns.saturating_add(call.slept_ns);
                let work = self.work(base);
                let polled = share_of(work, call.repoll_ns, base);
                let task = &mut self.tasks[t];
                let pending = task.mailbox.iter().map(|m| m.from);
                task.poll = Some(PollPass::again(call.fds, polled, work.saturating_sub(polled), pending));
                task.pending = polled;
                task.deferred = Some(Deferred::Select);
                if !self.polls_running() {
                    self.sched.set_current_state(TaskId(t as u32), CurrentState::Interruptible)?;
                }
            }
            Deferred::Sleep { ns, interruptible } => {
                if interruptible && !self.tasks[t].mailbox.is_empty() {
                    // A signal is already pending: nanosleep returns at once.
                    self.deliver(c, t, true)?;
                    return Ok(());
                }
                let task = &mut self.tasks[t];
                task.timer_gen += 1;
                let g = task.timer_gen;
                self.armed_timers += 1;
                self.push(self.now + ns.max(1), Ev::Timer(t as u32, g));
                return self.block(c, t, Block::Sleep { interruptible }, Deferred::Resume);
            }
            Deferred::Await(then) => {
                if !std::mem::take(&mut self.tasks[t].signalled) {
                    return self.block(c, t, Block::Cond, Deferred::Woken(then));
                }
                return self.resume(c, t, Deferred::Woken(then));
            }
            Deferred::Woken(AfterWake::Continue) => {}
            Deferred::Woken(AfterWake::Lock(m)) => return self.resume(c, t, Deferred::Lock(m)),
            Deferred::Woken(AfterWake::LeaveBarrier(b)) => return self.resume(c, t, Deferred::BarrierLeave(b)),
            Deferred::BarrierArrive(b) | Deferred::BarrierLeave(b) => {
                if !self.lock_or_sleep(c, t, MutexRef::Barrier(b), d)? {
                    return Ok(());
                }
                if let Deferred::BarrierArrive(b) = d {
                    return self.barrier_arrive(c, t, b);
                }
                self.barriers[b].leave();
                if let Some(cost) = self.unlock(c, MutexRef::Barrier(b))? {
                    self.tasks[t].pending += self.syscall_ns + cost;
                }
            }
            Deferred::Lock(m) => {
                self.lock_or_sleep(c, t, MutexRef::User(m), d)?;
            }
            Deferred::SemWait(k) => {
                if !self.sems[k].try_wait() {
                    self.sems[k].sleep(t);
                    return self.block(c, t, Block::Sem, Deferred::Resume);
                }
            }
            Deferred::Write { to, stream, bytes, tag } => {
                let key = SockKey::new(stream, t, to);
                if self.send_buffer_full(key, bytes) {
                    self.socks.entry(key).or_default().waiters.push(t);
                    if let Some(tr) = &mut self.trace {
                        tr.blocked(t, c, self.now, Blocked::SendBuffer);
                    }
                    return self.block(c, t, Block::SendBuf, d);
                }
                let cost = self.send(c, to, true, Msg { from: t, cpu: c, bytes, tag, stream: Some(stream) })?;
                self.tasks[t].pending = cost;
            }
            Deferred::Yield => self.switch(c, Deschedule::Yield)?,
            Deferred::Exit => {
                // Closing the socket purges what it had not read, which
                // frees those skbs and wakes their blocked writers: they
                // find the peer gone (EPIPE).
                while let Some(m) = self.tasks[t].mailbox.pop_front() {
                    self.unread -= 1;
                    self.write_space(c, t, &m)?;
                }
                self.tasks[t].mailbox = VecDeque::new();
                let task = &mut self.tasks[t];
                task.alive = false;
                // Nothing of an exited task is read again but its name
                // (the run's per-task figures): free the rest, since its
                // slot stays (Limits::max_tasks).
                task.prog = Box::new(Exited);
                task.delivered = Vec::new();
                self.live -= 1;
                if self.finish.contains(&t) {
                    self.finish_left -= 1;
                }
                self.switch(c, Deschedule::Exit)?;
            }
        }
        Ok(())
    }

    /// `t` goes to sleep; `then` is what it does when it runs again.
    fn block(&mut self, c: usize, t: TaskRef, how: Block, then: Deferred) -> Result<(), SimError> {
        let low_latency = self.sockets.tcp_low_latency;
        if how == Block::Wait {
            self.waits_begun += 1;
            self.tasks[t].wait_stamp = self.waits_begun;
        }
        let task = &mut self.tasks[t];
        task.ucopy = how == Block::Wait && !low_latency;
        task.block = how;
        task.deferred = Some(then);
        task.was_blocked = true;
        self.switch(c, Deschedule::Sleep)
    }

    /// Hands `t` one or all pending messages; reading them costs the cache
    /// lines they drag from the sender's CPU. Taking an AF_UNIX stream
    /// message frees its skb, which can wake writers ([`Sim::write_space`]);
    /// the reader pays for those wakeups.
    fn deliver(&mut self, c: usize, t: TaskRef, all: bool) -> Result<(), SimError> {
        let take = if all { self.tasks[t].mailbox.len() } else { 1 };
        let mut cost = 0.0;
        let mut wake_cost = 0;
        for _ in 0..take {
            let Some(m) = self.tasks[t].mailbox.pop_front() else { break };
            wake_cost += self.take_msg(c, t, m, &mut cost)?;
        }
        self.tasks[t].pending += round_u64(cost) + wake_cost;
        Ok(())
    }

    /// Hands `t` what its select() pass found, as [`Sim::deliver`] does;
    /// the rest stays pending, in order, for the next pass.
    fn deliver_found(&mut self, c: usize, t: TaskRef, pass: &PollPass) -> Result<(), SimError> {
        let mut cost = 0.0;
        let mut wake_cost = 0;
        for _ in 0..self.tasks[t].mailbox.len() {
            let Some(m) = self.tasks[t].mailbox.pop_front() else { break };
            if pass.finds(m.from) {
                wake_cost += self.take_msg(c, t, m, &mut cost)?;
            } else {
                self.tasks[t].mailbox.push_back(m);
            }
        }
        self.tasks[t].pending += round_u64(cost) + wake_cost;
        Ok(())
    }

    /// `t` reads `m`: adds its hand-off cost to `cost` and returns what the
    /// write-space wakeups it makes cost.
    fn take_msg(&mut self, c: usize, t: TaskRef, m: Msg, cost: &mut f64) -> Result<u64, SimError> {
        self.unread -= 1;
        *cost += self.costs.handoff_cost(self.reach(m.cpu, c), m.bytes);
        self.tasks[t].delivered.push(m);
        self.write_space(c, t, &m)
    }

    /// How much of `t`'s select() pass is done now, ns of work: its total
    /// less what is left, in flight on its CPU or pending.
    fn pass_done(&self, t: TaskRef) -> u64 {
        let task = &self.tasks[t];
        let Some(pass) = &task.poll else { return 0 };
        let in_flight = self.cpus.iter().find(|cpu| cpu.curr == Some(t)).and_then(|cpu| {
            cpu.seg.map(|seg| seg.work.saturating_sub(cpu.work_in(self.now.saturating_sub(seg.start))))
        });
        pass.total().saturating_sub(task.pending.saturating_add(in_flight.unwrap_or(0)))
    }

    /// A message (or write space) from `from` reaches `to` during its
    /// select() pass: found by the pass, missed, or missed with the
    /// sender's wakeup finding `to` on its runqueue ([`Landing`]). Returns
    /// the waker's cost.
    ///
    /// `readable`: a message to read, not write space.
    fn poll_landing(
        &mut self,
        c: usize,
        to: TaskRef,
        sync: bool,
        from: TaskRef,
        readable: bool,
    ) -> Result<u64, SimError> {
        let done = self.pass_done(to);
        let Some(pass) = self.tasks[to].poll.as_mut() else { return Ok(0) };
        let landing = if readable { pass.land(from, done) } else { pass.writable(from, done) };
        let held = pass.holds(from);
        match landing {
            Landing::Wakes | Landing::FoundAndWakes if !self.polls_running() => self.wake(c, to, sync),
            // On 2.6.32 the task polls TASK_RUNNING, and every wakeup
            // through a wait queue it is on, the first of the pass or a
            // later one, reaches try_to_wake_up, which locks the task's
            // runqueue and updates its clock before its state test turns
            // it away (22763c5c fs/select.c:192-201, sched.c:2352-2354).
            // Its price is left out.
            _ if held && self.polls_running() => {
                self.sched.wake_up(self.t(), TaskId(to as u32), c, sync)?;
                self.after_call(c);
                Ok(0)
            }
            _ => Ok(0),
        }
    }

    /// Whether select() polls as TASK_RUNNING, so that a wakeup during the
    /// pass only marks it: from 5f820f648c9 (2.6.29, "poll: allow f_op->poll
    /// to sleep"), do_select sets TASK_INTERRUPTIBLE only in
    /// poll_schedule_timeout, and pollwake sets `pwq->triggered` before
    /// try_to_wake_up, which returns at once for a TASK_RUNNING task
    /// (22763c5c fs/select.c:192, 237-240; kernel/sched.c:2354). Before it
    /// (2.6.25, 2.6.26) the pass runs TASK_INTERRUPTIBLE (e490517a
    /// fs/select.c:208) and the wakeup reaches `out_running`.
    fn polls_running(&self) -> bool {
        self.sched.config().version.is_2_6_32()
    }

    /// Whether a write of `bytes` on `key` must wait: a socket's
    /// `sk_wmem_alloc` has reached `sk_sndbuf` (`sock_alloc_send_pskb`'s
    /// test), or a pipe needs a new page and has none ([`SendBuf::pipe_full`]).
    fn send_buffer_full(&mut self, key: SockKey, bytes: u32) -> bool {
        let sndbuf = self.sockets.sndbuf;
        match key {
            SockKey::Pair { writer, reader } => sndbuf > 0 && self.pair_wmem(writer, reader, sndbuf) >= sndbuf,
            SockKey::Pipe(_) => self.socks.get(&key).is_some_and(|b| b.pipe_full(bytes)),
            SockKey::Shared(_) => sndbuf > 0 && self.socks.get(&key).is_some_and(|b| b.wmem >= sndbuf),
        }
    }

    /// The `sk_wmem_alloc` of `writer`'s connection to `reader`, exact from
    /// `floor` up. Below it, what the reader's pair skbs come to in all (an
    /// upper bound, also below `floor`), so that nothing is looked up while
    /// a reader holds little (pgbench's one query or reply).
    ///
    /// Every skb of a connection waits in its one reader's mailbox, so its
    /// charge is their truesize there. The first time it is needed exactly,
    /// the mailbox is walked once and the connection gets a table entry,
    /// which `send` and `write_space` then keep up to date until the
    /// connection is empty again, so a reader with a long backlog from many
    /// writers is not walked on every write.
    fn pair_wmem(&mut self, writer: TaskRef, reader: TaskRef, floor: u64) -> u64 {
        let key = SockKey::Pair { writer, reader };
        if let Some(buf) = self.socks.get(&key) {
            debug_assert_eq!(buf.wmem, self.walk_pair(writer, reader), "tracked charge of {key:?}");
            return buf.wmem;
        }
        let Some(r) = self.tasks.get(reader) else { return 0 };
        if r.pair_bytes < floor {
            return r.pair_bytes;
        }
        let wmem = self.walk_pair(writer, reader);
        if wmem > 0 {
            self.socks.insert(key, SendBuf { wmem, ..SendBuf::default() });
        }
        wmem
    }

    /// The truesize of `writer`'s pair-socket skbs in `reader`'s mailbox.
    fn walk_pair(&self, writer: TaskRef, reader: TaskRef) -> u64 {
        let sndbuf = self.sockets.sndbuf;
        self.tasks.get(reader).map_or(0, |r| {
            r.mailbox
                .iter()
                .filter(|m| m.from == writer && m.stream == Some(Stream::Pair))
                .map(|m| skb_truesize(m.bytes, sndbuf))
                .sum()
        })
    }

    /// The reader `reader` took (or purged) message `m`, already out of
    /// its mailbox: frees its share of its stream's buffer and, if that
    /// made room, wakes the stream's waiters with the sync hint, every
    /// writer blocked on the buffer, newest first (prepare_to_wait adds at
    /// the head of the wait queue). Room is, for a socket, `sock_wfree` →
    /// `unix_write_space` finding `sk_wmem_alloc` at most a quarter of
    /// `sk_sndbuf`; for a pipe, `pipe_read` emptying a page. On a socket,
    /// with [`Sockets::write_space_wakeups`], the message's writer is woken
    /// too if it sleeps in `Select` or `Wait`. Returns the wakeups' cost to
    /// the caller.
    fn write_space(&mut self, c: usize, reader: TaskRef, m: &Msg) -> Result<u64, SimError> {
        let Some(stream) = m.stream else { return Ok(0) };
        let sndbuf = self.sockets.sndbuf;
        let key = SockKey::new(stream, m.from, reader);
        let writable = |wmem: u64| sndbuf == 0 || wmem.saturating_mul(4) <= sndbuf;
        let mut blocked = Vec::new();
        let ts = skb_truesize(m.bytes, sndbuf);
        if let SockKey::Pair { writer, .. } = key {
            let r = &mut self.tasks[reader];
            r.pair_bytes = r.pair_bytes.saturating_sub(ts);
            // Untracked, the connection has no waiters; its charge then
            // matters only to a select()ing writer.
            let tracked = !self.socks.is_empty() && self.socks.contains_key(&key);
            // Read, not tracked (this message has already left the
            // mailbox, and a new entry would count it out twice): the
            // reader's total bounds the charge, and only when that is not
            // writable is the mailbox walked.
            let bound = r.pair_bytes;
            if !tracked
                && self.sockets.write_space_wakeups
                && !writable(bound)
                && !writable(self.walk_pair(writer, reader))
            {
                return Ok(0);
            }
        }
        // Debug builds check a tracked connection's charge against its
        // reader's mailbox.
        #[cfg(debug_assertions)]
        let walked = match key {
            SockKey::Pair { writer, .. } if self.socks.contains_key(&key) => Some(self.walk_pair(writer, reader)),
            _ => None,
        };
        if let Some(Entry::Occupied(mut e)) = (!self.socks.is_empty()).then(|| self.socks.entry(key)) {
            let buf = e.get_mut();
            let room = match key {
                SockKey::Pipe(_) => buf.pipe_take(m.bytes) > 0,
                SockKey::Shared(_) | SockKey::Pair { .. } => {
                    buf.wmem = buf.wmem.saturating_sub(ts);
                    #[cfg(debug_assertions)]
                    if let Some(w) = walked {
                        debug_assert_eq!(buf.wmem, w, "tracked charge of {key:?}");
                    }
                    writable(buf.wmem)
                }
            };
            if !room {
                return Ok(0);
            }
            blocked = std::mem::take(&mut buf.waiters);
            if buf.wmem == 0 && buf.pages.is_empty() {
                e.remove();
            }
        }
        let mut cost = 0;
        for &w in blocked.iter().rev() {
            if self.tasks[w].block == Block::SendBuf {
                cost += self.wake(c, w, true)?;
            }
        }
        let pipe = matches!(key, SockKey::Pipe(_));
        let writer = self.tasks.get(m.from).filter(|w| w.alive);
        let writer_sleeps = writer.is_some_and(|w| w.block == Block::Wait);
        let writer_polls = writer.is_some_and(|w| w.block == Block::None && w.poll.is_some());
        if self.sockets.write_space_wakeups && !pipe && writer_sleeps {
            cost += self.wake(c, m.from, true)?;
        } else if self.sockets.write_space_wakeups && !pipe && writer_polls {
            // Its select() pass has polled, or will poll, this socket.
            cost += self.poll_landing(c, m.from, true, reader, false)?;
        }
        Ok(cost)
    }

    /// Posts a message; wakes the receiver if it waits. Returns the waker's
    /// cost, ns.
    fn send(&mut self, c: usize, to: TaskRef, sync: bool, msg: Msg) -> Result<u64, SimError> {
        let Some(task) = self.tasks.get_mut(to) else { return Ok(0) };
        if !task.alive {
            return Ok(0); // EPIPE: the peer is gone
        }
        if self.unread >= self.limits.max_unread {
            return Err(SimError::TooManyMessages { at: self.now, limit: self.limits.max_unread });
        }
        task.mailbox.push_back(msg);
        self.unread += 1;
        self.peak_unread = self.peak_unread.max(self.unread);
        if let Some(stream) = msg.stream {
            let ts = skb_truesize(msg.bytes, self.sockets.sndbuf);
            match SockKey::new(stream, msg.from, to) {
                key @ SockKey::Pair { .. } => {
                    task.pair_bytes += ts;
                    // A connection whose charge is tracked keeps it exact.
                    if let Some(buf) = (!self.socks.is_empty()).then(|| self.socks.get_mut(&key)).flatten() {
                        buf.wmem += ts;
                    }
                }
                key @ SockKey::Pipe(_) => self.socks.entry(key).or_default().pipe_put(msg.bytes),
                key @ SockKey::Shared(_) => self.socks.entry(key).or_default().wmem += ts,
            }
        }
        match task.block {
            Block::Wait => {}
            Block::None if task.poll.is_some() => return self.poll_landing(c, to, sync, msg.from, true),
            // A signal interrupts the sleep: cancel its timer. Data from a
            // receive softirq is no signal, and nothing else ends a
            // nanosleep.
            Block::Sleep { interruptible: true } if !self.in_softirq => {
                task.timer_gen += 1;
                task.deferred = Some(Deferred::Wait { all: true, woken: false });
                self.armed_timers -= 1;
            }
            _ => return Ok(0),
        }
        self.wake(c, to, sync)
    }

    /// The order one call wakes `to` in ([`Action::SendAll`]): those asleep
    /// in [`Block::Wait`] newest sleeper first, then the rest as given
    /// (they only find the message). Every wait queue such a call walks
    /// puts a new sleeper at its head, and the walk starts there: poll's
    /// `__pollwait` calls add_wait_queue, which is `list_add` (bce7f793
    /// fs/select.c:130, include/linux/wait.h:126; 22763c5c
    /// fs/select.c:229), for a socket's `sk_sleep` and a pipe's `wait`
    /// alike, and `__wake_up_common` walks from the head (bce7f793
    /// kernel/sched.c:4300); a wait-for-zero semop, as
    /// dbench's barrier children make, is prepended to `sem_pending`
    /// (`prepend_to_queue`, bce7f793 ipc/sem.c:1151; 22763c5c :1182
    /// `list_add`) and `update_queue` wakes from the head on.
    fn wait_queue_order(&self, to: &[TaskRef]) -> Vec<TaskRef> {
        let mut order = to.to_vec();
        order.sort_by_key(|&r| match self.tasks.get(r) {
            Some(x) if x.alive && x.block == Block::Wait => (false, std::cmp::Reverse(x.wait_stamp)),
            _ => (true, std::cmp::Reverse(0)),
        });
        order
    }

    /// try_to_wake_up of a blocked task from `c` (from interrupt context
    /// while [`Sim::in_softirq`]); returns the waker's cost.
    fn wake(&mut self, c: usize, to: TaskRef, sync: bool) -> Result<u64, SimError> {
        self.tasks[to].block = Block::None;
        let (now, task) = (self.t(), TaskId(to as u32));
        let out = if self.in_softirq {
            self.sched.wake_up_irq(now, task, c, sync)?
        } else {
            self.sched.wake_up(now, task, c, sync)?
        };
        let ipi = self.after_call(c).contains(out.cpu);
        if out.woken {
            self.probe_runnable(to);
            self.probe_wake(c, to);
        }
        if let Some(tr) = &mut self.trace {
            tr.wake(to, c, self.now);
        }
        Ok(round_u64(self.costs.wake_cost(self.reach(c, out.cpu), ipi)))
    }

    /// Refuses an action that names a synchronisation object the run does
    /// not have.
    fn check_objects(&self, a: &Action) -> Result<(), SimError> {
        let (kind, index, count) = match *a {
            Action::CondWait { mutex: Some(m), .. } if m >= self.mutexes.len() => ("mutex", m, self.mutexes.len()),
            Action::CondWait { cond, .. } | Action::CondSignal { cond, .. } => ("condition", cond, self.conds.len()),
            Action::Lock(m) | Action::Unlock(m) => ("mutex", m, self.mutexes.len()),
            Action::SemPost(k) | Action::SemWait(k) => ("semaphore", k, self.sems.len()),
            Action::Barrier(b) => ("barrier", b, self.barriers.len()),
            _ => return Ok(()),
        };
        if index < count { Ok(()) } else { Err(SimError::NoSuchObject { at: self.now, kind, index, count }) }
    }

    /// rt-app's barrier event once `t` holds the barrier's mutex: the last
    /// to arrive broadcasts (requeueing the waiters onto the mutex) and
    /// unlocks; any other marks itself, waits on the barrier's condition
    /// (which unlocks the mutex) and, woken, takes the mutex again, adds
    /// itself back and unlocks ([`AfterWake::LeaveBarrier`]). A system
    /// call is charged for each futex call made: the broadcast, an unlock
    /// that wakes a sleeper, the wait.
    fn barrier_arrive(&mut self, c: usize, t: TaskRef, b: usize) -> Result<(), SimError> {
        let sys = self.syscall_ns;
        match self.barriers[b].arrive(t) {
            Arrival::Release(woken) => {
                let broadcast = !woken.is_empty();
                let woken = self.requeue_onto_mutexes(woken);
                let mut cost = self.wake_waiters(c, woken)? + if broadcast { sys } else { 0 };
                if let Some(unlock) = self.unlock(c, MutexRef::Barrier(b))? {
                    cost += sys + unlock;
                }
                self.tasks[t].pending += cost;
            }
            Arrival::Wait => {
                let cost = self.unlock(c, MutexRef::Barrier(b))?.unwrap_or(0);
                self.tasks[t].pending += sys + cost;
                self.tasks[t].deferred = Some(Deferred::Await(AfterWake::LeaveBarrier(b)));
            }
        }
        Ok(())
    }

    /// pthread_cond_broadcast as glibc's nptl of these kernels' era does
    /// it: FUTEX_CMP_REQUEUE with one to wake and the rest moved onto the
    /// futex of the mutex the waiters passed (cond->__data.__mutex), so
    /// that they are woken one at a time by its unlocks instead of racing
    /// for it together (the kernel's futex_requeue; glibc falls back to
    /// waking all when the waiters gave no mutex). The first waiter asleep
    /// is woken; every later one asleep with a mutex to take again goes to
    /// the back of that mutex's sleepers, as if it had found it taken. One
    /// still in its call, not yet asleep in futex_wait, finds the
    /// condition's futex changed and returns at once, so it is woken
    /// (marked) as before. Returns those to wake.
    fn requeue_onto_mutexes(&mut self, waiters: Vec<TaskRef>) -> Vec<TaskRef> {
        let mut wake = Vec::new();
        let mut woke_a_sleeper = false;
        for w in waiters {
            let (block, deferred) = (self.tasks[w].block, self.tasks[w].deferred);
            // The mutex it takes again once woken, and how it goes on then.
            let relock = match (block, deferred) {
                (Block::Cond, Some(Deferred::Woken(AfterWake::Lock(m)))) => {
                    Some((MutexRef::User(m), Deferred::Lock(m)))
                }
                (Block::Cond, Some(Deferred::Woken(AfterWake::LeaveBarrier(b)))) => {
                    Some((MutexRef::Barrier(b), Deferred::BarrierLeave(b)))
                }
                _ => None,
            };
            match relock {
                Some((m, then)) if woke_a_sleeper => {
                    self.tasks[w].block = Block::Mutex;
                    self.tasks[w].deferred = Some(then);
                    self.mutex(m).sleep(w);
                }
                _ => {
                    woke_a_sleeper |= block == Block::Cond;
                    wake.push(w);
                }
            }
        }
        wake
    }

    /// Wakes the waiters a condition or barrier released (futex_wake, not
    /// sync); one still in its call, not yet asleep, is only marked, and
    /// its sleep returns at once. Returns the wakeups' cost.
    fn wake_waiters(&mut self, c: usize, woken: Vec<TaskRef>) -> Result<u64, SimError> {
        let mut cost = 0;
        for w in woken {
            if self.tasks[w].block == Block::None {
                self.tasks[w].signalled = true;
            } else {
                cost += self.wake(c, w, false)?;
            }
        }
        Ok(cost)
    }

    /// pthread_mutex_unlock of mutex `m`: the cost of waking its first
    /// sleeper, or None if none sleeps (then it is no system call).
    fn unlock(&mut self, c: usize, m: MutexRef) -> Result<Option<u64>, SimError> {
        match self.mutex(m).unlock() {
            Some(w) => self.wake(c, w, false).map(Some),
            None => Ok(None),
        }
    }

    fn mutex(&mut self, m: MutexRef) -> &mut Mutex {
        match m {
            MutexRef::User(i) => &mut self.mutexes[i],
            MutexRef::Barrier(b) => &mut self.barriers[b].mutex,
        }
    }

    /// pthread_mutex_lock after its fast path: take `m` if it is free now
    /// (true), else `t` sleeps on it in futex_wait and does `then` when an
    /// unlock wakes it (false).
    fn lock_or_sleep(&mut self, c: usize, t: TaskRef, m: MutexRef, then: Deferred) -> Result<bool, SimError> {
        if self.mutex(m).try_lock() {
            return Ok(true);
        }
        self.mutex(m).sleep(t);
        if let Some(tr) = &mut self.trace {
            tr.blocked(t, c, self.now, Blocked::Mutex);
        }
        self.block(c, t, Block::Mutex, then)?;
        Ok(false)
    }

    fn fork(&mut self, c: usize, parent: TaskRef, spec: ForkSpec) -> Result<(), SimError> {
        self.check_task_limits()?;
        let out = self.sched.fork(self.t(), TaskId(parent as u32), spec.params.map(|p| self.inherited(p)))?;
        let child = out.child.0 as TaskRef;
        debug_assert_eq!(child, self.tasks.len());
        let side = self.tasks[parent].side;
        self.tasks.push(Task::new(spec.name, spec.program, spec.ws_kb, Some(parent), side));
        self.live += 1;
        self.tasks[parent].forked = Some(child);
        self.after_call(c);
        self.probe_runnable(child);
        Ok(())
    }

    /// Whether one more task may be created ([`Limits`]): fewer than
    /// `pid_max` alive and fewer than `max_tasks` created.
    fn check_task_limits(&self) -> Result<(), SimError> {
        let l = &self.limits;
        if self.live >= l.pid_max {
            return Err(SimError::TooManyTasks { at: self.now, limit: l.pid_max, alive: true });
        }
        if self.tasks.len() >= l.max_tasks {
            return Err(SimError::TooManyTasks { at: self.now, limit: l.max_tasks, alive: false });
        }
        Ok(())
    }

    // ----- results ---------------------------------------------------------------

    fn finish(mut self) -> RunOutcome {
        for c in 0..self.cpus.len() {
            self.account(c);
            if let Some(t) = self.cpus[c].curr {
                let now = self.now;
                self.tasks[t].add_run(c, now);
            }
        }
        let end = self.now;
        let sched_end = self.t();
        let tasks = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                // Every engine task has its scheduler task.
                let id = TaskId(i as u32);
                let st = self.sched.task(id);
                let (migrations, ss, state) =
                    st.map_or((0, SchedStats::default(), TaskState::Dead), |s| (s.nr_migrations, s.se.stats, s.state));
                // The running tasks' time since their last update_curr
                // counts too, as getrusage's would.
                let runtime = self.sched.task_sched_runtime(sched_end, id).unwrap_or(0);
                // The stamps are in the scheduler's time (the instruments'
                // clock offset included), and wrap as it does.
                TaskStat {
                    name: t.name.clone(),
                    runtime_ns: runtime,
                    migrations,
                    wait_sum_ns: ss.wait_sum,
                    wait_count: ss.wait_count,
                    wait_max_ns: ss.wait_max,
                    wait_open_ns: match state {
                        TaskState::Queued => sched_end.wrapping_sub(ss.wait_start),
                        _ => 0,
                    },
                    sleep_sum_ns: u64::try_from(ss.sum_sleep_runtime).unwrap_or(0),
                    // An exit stamps no sleep_start: only a blocked task's counts.
                    sleep_open_ns: match state {
                        TaskState::Sleeping if ss.sleep_start != 0 => sched_end.wrapping_sub(ss.sleep_start),
                        _ => 0,
                    },
                    sleep_max_ns: ss.sleep_max,
                    slice_max_ns: ss.slice_max,
                    main_cpu: t.main_cpu(),
                }
            })
            .collect();
        self.drain_moves();
        let names: Vec<&str> = self.tasks.iter().map(|t| t.name.as_str()).collect();
        let trace = self.trace.take().map(|tr| tr.finish(&names, end));
        let phases = self.phases();
        RunOutcome {
            units: self.units,
            window_ns: end.saturating_sub(self.limits.warmup_ns),
            end_ns: end,
            cpu_busy_ns: self.cpus.iter().map(|c| c.busy).collect(),
            counters: self.sched.observer().counters.clone(),
            switches: self.switches,
            preemptions: self.preemptions,
            events: self.events,
            tasks,
            trace,
            probe: std::mem::take(&mut self.probe.out),
            phases,
            send_blocks: self.send_blocks,
            select_races: self.select_races,
            peak_unread: self.peak_unread,
            irqs: self.irq_count,
            irq_task_ns: self.irq_task_ns,
        }
    }
}

#[cfg(test)]
mod tests;
