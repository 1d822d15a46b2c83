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
//! ("segment"), reschedule IPIs, hrtick expiries, task timers, and the end
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
//! # Preemption (PREEMPT_NONE / VOLUNTARY server kernels)
//!
//! - A need_resched set on a task's own CPU during a system call (its
//!   wakeup preempts it, or a fork's child-runs-first) takes effect when the
//!   call returns: after the action's cost segment, before the next action.
//! - A need_resched set on another CPU is delivered by a reschedule IPI
//!   after [`CostModel::ipi_latency_ns`] (plus the C-state exit if that CPU
//!   idles) and interrupts whatever runs there.
//! - Ticks, hrticks and timer interrupts preempt at once on return from the
//!   interrupt.
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

use crate::costs::{CostModel, Reach};
use crate::dist::round_u64;
use crate::observe::{Counters, SimObserver};
use crate::program::{Action, ForkSpec, Msg, Program, StepCx, Stream, TaskRef, TaskSpec};
use crate::queue::{EventQueue, Timed};
use crate::trace::TraceBuf;
use cfs_core::features::FeatureError;
use cfs_core::{Config, ConfigError, Deschedule, SchedDomains, SchedError, Scheduler, TaskId};
use cfs_core::{Features, Patch, SettingError};
use cfs_topology::{DomainLevel, Host, SdFlags};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::cell::OnceCell;
use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

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
            SimError::TimeLimit { at } => {
                write!(f, "run did not finish within {:.3} s of simulated time", *at as f64 / 1e9)
            }
            SimError::TooManyTasks { at, limit, alive: true } => write!(
                f,
                "fork failed at {:.6} s: {limit} tasks alive, the kernel's default pid_max (does a loop fork \
                 children that never exit?)",
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
    /// The run is over when all of these initial tasks have exited
    /// (empty: it runs for [`Limits::duration_ns`]).
    pub finish: Vec<TaskRef>,
    /// Number of named conditions (rt-app wait/signal).
    pub conds: usize,
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
}

/// A setting written on the running scheduler (cfs-core's `sysctl`
/// module), as `echo … > /proc/sys/kernel/sched_*` would be mid-run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `sched_features`: a numeric mask (`863`, `0x35f`) or debugfs-style
    /// names applied to the value current at that moment
    /// (`NO_SYNC_WAKEUPS`).
    Features(String),
    /// A `sched_*` tunable by its `/proc` name.
    Tunable(String, i64),
    /// Flags of every domain at a level: set, then clear (nothing on a
    /// host without that level, as with `--sd-flags`).
    DomainFlags(DomainLevel, SdFlags, SdFlags),
    /// A seed patch switched on (`true`) or off.
    Patch(Patch, bool),
}

/// A [`Setting`] written at a simulated time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// When, ns from the start of the run.
    pub at_ns: u64,
    /// What.
    pub setting: Setting,
}

impl Setting {
    /// Writes the setting to `s` at its next decision.
    pub fn apply<O: cfs_core::Observer>(&self, s: &mut Scheduler<O>) -> Result<(), SchedError> {
        match self {
            Setting::Features(text) => {
                let f = features_from_text(s.config().features, text)
                    .map_err(|e| SchedError::Setting(SettingError::Features(e)))?;
                s.set_features_mask(f.mask())
            }
            Setting::Tunable(name, v) => s.set_tunable(name, *v),
            // As with --sd-flags at boot, a level this host does not build
            // (CPU on a NUMA Nehalem, NODE on a Q6600) is skipped, so one
            // list serves every host.
            Setting::DomainFlags(level, set, clear) => match s.set_domain_flags(*level, *set, *clear) {
                Err(SchedError::Setting(SettingError::NoSuchLevel(_))) => Ok(()),
                r => r.map(|_| ()),
            },
            Setting::Patch(p, on) => s.set_patch(*p, *on),
        }
    }
}

/// `sched_features` as text, as written to `/proc` (a numeric mask of
/// `current`'s table: `863`, `0x35f`) or to debugfs (names applied to
/// `current`: `NO_SYNC_WAKEUPS WAKEUP_PREEMPT`).
pub fn features_from_text(current: Features, text: &str) -> Result<Features, FeatureError> {
    let t = text.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => t.parse::<u32>().ok(),
    };
    match mask {
        Some(m) => Features::from_mask(current.table(), m),
        None => current.apply_names(t),
    }
}

impl fmt::Display for Setting {
    /// The `--switch` form: `features=863`, `set=NAME=VALUE`,
    /// `sd-flags=MC:+SD_X-SD_Y`, `patch=waker`, `no-patch=waker`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Setting::Features(m) => write!(f, "features={m}"),
            Setting::Tunable(n, v) => write!(f, "set={n}={v}"),
            Setting::DomainFlags(level, set, clear) => {
                write!(f, "sd-flags={}:", level.name())?;
                for n in set.names() {
                    write!(f, "+{n}")?;
                }
                for n in clear.names() {
                    write!(f, "-{n}")?;
                }
                Ok(())
            }
            Setting::Patch(p, true) => write!(f, "patch={}", p.name()),
            Setting::Patch(p, false) => write!(f, "no-patch={}", p.name()),
        }
    }
}

impl Change {
    /// The change as JSON: `{"at_s": 1.0, "features": "863"}`,
    /// `{"at_s": 1.0, "tunable": NAME, "value": V}`, `{"at_s": 1.0, "level":
    /// "MC", "set": [FLAGS], "clear": [FLAGS]}`, `{"at_s": 1.0, "patch":
    /// NAME, "on": true}`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let at_s = self.at_ns as f64 / 1e9;
        match &self.setting {
            Setting::Features(f) => json!({"at_s": at_s, "features": f}),
            Setting::Tunable(n, v) => json!({"at_s": at_s, "tunable": n, "value": v}),
            Setting::DomainFlags(level, set, clear) => json!({
                "at_s": at_s,
                "level": level.name(),
                "set": set.names().collect::<Vec<_>>(),
                "clear": clear.names().collect::<Vec<_>>(),
            }),
            Setting::Patch(p, on) => json!({"at_s": at_s, "patch": p.name(), "on": on}),
        }
    }
}

/// Throughput bookkeeping between two setting changes: the run is cut into
/// phases at each distinct change time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Start of the phase's measured part, ns (a phase that starts within
    /// the warm-up is measured from its end).
    pub start_ns: u64,
    /// End, ns (the next change, or the end of the run).
    pub end_ns: u64,
    /// Progress units counted within it.
    pub units: u64,
}

/// `sizeof(struct sk_buff)` on x86_64, bytes: counted from 2.6.26's
/// struct (e490517a include/linux/skbuff.h) with a distribution's config
/// (conntrack, bridge netfilter, NET_SCHED with actions, multiqueue,
/// NET_DMA, SECMARK; 64-bit kernels keep the header pointers as 32-bit
/// offsets). The same value is used for every profile.
pub const SKB_STRUCT_BYTES: u64 = 232;

/// `SMP_CACHE_BYTES`, to which `alloc_skb` rounds the data area up
/// (`SKB_DATA_ALIGN`): 128 on an x86_64 kernel built for generic CPUs
/// (X86_L1_CACHE_SHIFT 7 with GENERIC_CPU, e490517a arch/x86/Kconfig.cpu),
/// as distributions build them.
pub const SMP_CACHE_BYTES: u64 = 128;

/// `SK_WMEM_MAX`, every socket's default `sk_sndbuf`
/// (`sysctl_wmem_default`): (sizeof(struct sk_buff) + 256) × 256 =
/// 124,928 bytes (e490517a net/core/sock.c:202-213).
pub const SK_WMEM_MAX: u64 = (SKB_STRUCT_BYTES + 256) * 256;

/// `SOCK_MIN_SNDBUF` (e490517a include/net/sock.h): the smallest send
/// buffer a socket takes.
pub const SOCK_MIN_SNDBUF: u64 = 2_048;

/// `SKB_MAX_ALLOC`, the largest skb `unix_stream_sendmsg` allocates:
/// four pages less the aligned `struct skb_shared_info` (312 bytes with 18
/// fragments on x86_64, aligned to 384), 16,384 − 384 = 16,000 bytes
/// (e490517a include/linux/skbuff.h).
pub const SKB_MAX_ALLOC: u64 = 16_000;

/// The truesize an AF_UNIX stream write of `bytes` charges to its socket's
/// `sk_wmem_alloc` (e490517a net/unix/af_unix.c, unix_stream_sendmsg): it
/// is cut into skbs of at most `sndbuf / 2 − 64` and at most
/// [`SKB_MAX_ALLOC`] bytes, and each skb costs its data rounded up to
/// [`SMP_CACHE_BYTES`] plus [`SKB_STRUCT_BYTES`] (`alloc_skb`). A 100-byte
/// hackbench message costs 128 + 232 = 360 bytes, so 348 of them fill
/// [`SK_WMEM_MAX`] (a write is allowed while less than that is charged).
pub fn skb_truesize(bytes: u32, sndbuf: u64) -> u64 {
    let skb = |len: u64| len.div_ceil(SMP_CACHE_BYTES) * SMP_CACHE_BYTES + SKB_STRUCT_BYTES;
    let bytes = bytes as u64;
    let chunk = (sndbuf / 2).saturating_sub(64).clamp(SMP_CACHE_BYTES, SKB_MAX_ALLOC);
    let chunk = if sndbuf == 0 { SKB_MAX_ALLOC } else { chunk };
    // One skb, the common case: nothing to cut. A message of no bytes
    // (still a wakeup here) is charged one empty skb.
    if bytes <= chunk {
        return skb(bytes);
    }
    let (full, rest) = (bytes / chunk, bytes % chunk);
    full * skb(chunk) + if rest > 0 { skb(rest) } else { 0 }
}

/// `PIPE_BUFFERS`: the pages a pipe holds (e490517a
/// include/linux/pipe_fs_i.h; fixed until 2.6.35's F_SETPIPE_SZ).
pub const PIPE_BUFFERS: usize = 16;

/// `PAGE_SIZE` on x86, bytes: a pipe buffer's capacity.
pub const PAGE_SIZE: u32 = 4_096;

/// Socket-layer behaviour of the simulated kernel that changes who is
/// woken, beyond the reader wakeup every message makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sockets {
    /// Wake the writer of an AF_UNIX stream message ([`Action::Write`])
    /// when the reader takes it, if the writer sleeps in `Select` or
    /// `Wait`. In every modelled kernel the reader's recvmsg frees the skb,
    /// whose destructor `sock_wfree` calls `unix_write_space`; that wakes
    /// the writer socket's wait queue (`wake_up_interruptible_sync`, no
    /// event key) as soon as the socket is writable again. A select()
    /// sleeping on that socket wakes, polls every descriptor and sleeps
    /// again: select only learned to ignore wakeups for events it does not
    /// wait for in 2.6.31 (4938d7e0 "poll: avoid extra wakeups in
    /// select/poll"), and unix_write_space still passed no key in 2.6.32
    /// (22763c5c net/unix/af_unix.c). Off by default: see
    /// docs/CALIBRATION.md §5 for what it does to the pgbench tables.
    pub write_space_wakeups: bool,
    /// `sk_sndbuf` of every AF_UNIX stream socket, bytes; 0 leaves send
    /// buffers unbounded (writes never block). A write
    /// ([`Action::Write`]) finding its socket's `sk_wmem_alloc` (the
    /// truesize of its skbs not yet taken, [`skb_truesize`]) at or above
    /// this blocks, as `sock_alloc_send_pskb` does in
    /// `sock_wait_for_wmem`, until the reader has taken enough that the
    /// socket is writable again: `unix_write_space` wakes the socket's
    /// waiters (sync, newest first) once `sk_wmem_alloc` is at most a
    /// quarter of this (`unix_writable`, e490517a net/unix/af_unix.c).
    /// Default [`SK_WMEM_MAX`]: 348 hackbench messages fit, and a blocked
    /// sender wakes when 86 are left. A write larger than one skb is
    /// charged whole when it starts rather than blocking between its skbs.
    pub sndbuf: u64,
}

impl Default for Sockets {
    fn default() -> Sockets {
        Sockets { write_space_wakeups: false, sndbuf: SK_WMEM_MAX }
    }
}

/// Whose buffer a write fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum SockKey {
    /// A socket connection of its own ([`Stream::Pair`]).
    Pair { writer: TaskRef, reader: TaskRef },
    /// A socket several writers share ([`Stream::Shared`]).
    Shared(u32),
    /// A pipe ([`Stream::Pipe`]).
    Pipe(u32),
}

impl SockKey {
    fn new(stream: Stream, writer: TaskRef, reader: TaskRef) -> SockKey {
        match stream {
            Stream::Pair => SockKey::Pair { writer, reader },
            Stream::Shared(id) => SockKey::Shared(id),
            Stream::Pipe(id) => SockKey::Pipe(id),
        }
    }
}

/// A fixed, fast hash for [`SockKey`]s (a multiply-rotate over the key's
/// words, as rustc's FxHash): the stream table is looked up on every
/// socket write and read, so SipHash's cost would show in every pgbench
/// run. It has no random state, and the table is never iterated, so runs
/// stay deterministic.
#[derive(Clone, Copy, Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    fn write_isize(&mut self, x: isize) {
        self.write_u64(x as u64);
    }
}

/// One stream's buffer: for a shared socket the truesize of its skbs not
/// yet taken (`sk_wmem_alloc`), for a pipe its pages in use, oldest first;
/// and the writers blocked on it (its wait queue, in the order they were
/// added). A connection ([`Stream::Pair`]) has an entry only once its
/// charge has been needed ([`Sim::pair_wmem`]); until then it is bounded by
/// its reader's `pair_bytes`.
#[derive(Debug, Default)]
struct SendBuf {
    wmem: u64,
    pages: VecDeque<PipePage>,
    waiters: Vec<TaskRef>,
}

/// A pipe buffer in use: where its data ends (`offset + len`, where a
/// merged write goes) and how much of it is unread (`len`).
#[derive(Clone, Copy, Debug)]
struct PipePage {
    end: u32,
    unread: u32,
}

impl SendBuf {
    /// The part of a `bytes` write that `pipe_write` merges into the last
    /// page: the write's size modulo a page, if the pipe has a page and it
    /// has room for that much after its data.
    fn pipe_merge(&self, bytes: u32) -> u32 {
        let tail = bytes % PAGE_SIZE;
        match self.pages.back() {
            Some(last) if tail != 0 && last.end + tail <= PAGE_SIZE => tail,
            _ => 0,
        }
    }

    /// Whether a `bytes` write must wait: it needs a new page and all
    /// [`PIPE_BUFFERS`] are in use.
    fn pipe_full(&self, bytes: u32) -> bool {
        bytes > self.pipe_merge(bytes) && self.pages.len() >= PIPE_BUFFERS
    }

    /// `pipe_write` of `bytes`: the merged part into the last page, the
    /// rest into new pages of up to a page each.
    fn pipe_put(&mut self, bytes: u32) {
        let merged = self.pipe_merge(bytes);
        if let Some(last) = self.pages.back_mut() {
            last.end += merged;
            last.unread += merged;
        }
        let mut rest = bytes - merged;
        while rest > 0 {
            let n = rest.min(PAGE_SIZE);
            self.pages.push_back(PipePage { end: n, unread: n });
            rest -= n;
        }
    }

    /// `pipe_read` of one `bytes` message from the oldest pages; returns
    /// how many pages it emptied and released.
    fn pipe_take(&mut self, bytes: u32) -> usize {
        let (mut rest, mut freed) = (bytes, 0);
        while rest > 0 {
            let Some(front) = self.pages.front_mut() else { break };
            let n = rest.min(front.unread);
            front.unread -= n;
            rest -= n;
            if front.unread == 0 {
                self.pages.pop_front();
                freed += 1;
            }
        }
        freed
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

/// One task's totals.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TaskStat {
    /// Name.
    pub name: String,
    /// CPU time, ns (the scheduler's sum_exec_runtime).
    pub runtime_ns: u64,
    /// CPU changes.
    pub migrations: u64,
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
    pub trace: Option<serde_json::Value>,
    /// The instruments' measurements (zero unless asked for).
    pub probe: Probe,
    /// The run cut at each change time (empty without changes).
    pub phases: Vec<Phase>,
    /// AF_UNIX stream writes that found their send buffer full and
    /// blocked ([`Sockets::sndbuf`]), each counted once however often it
    /// was woken before it could write.
    pub send_blocks: u64,
    /// The most messages queued unread at once.
    pub peak_unread: usize,
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

#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u64,
    len: u64,
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
}

/// Where a blocked task waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    None,
    Wait,
    Sleep {
        interruptible: bool,
    },
    Cond,
    /// In `sock_wait_for_wmem`, on a full send buffer.
    SendBuf,
}

/// Work a task resumes with after its system call's time has passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deferred {
    /// Take one or all pending messages, else sleep. `woken`: this is the
    /// re-check after a wakeup, which costs `repoll_ns` if it finds nothing.
    Wait {
        all: bool,
        repoll_ns: u64,
        woken: bool,
    },
    Sleep {
        ns: u64,
        interruptible: bool,
    },
    CondWait(usize),
    /// An AF_UNIX stream write that found its send buffer full: try again.
    Write {
        to: TaskRef,
        stream: Stream,
        bytes: u32,
        tag: u32,
    },
    Yield,
    Exit,
    /// Woken by a timer or a condition: just continue.
    Resume,
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
    mailbox: VecDeque<Msg>,
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
}

impl Task {
    fn new(name: String, prog: Box<dyn Program>, ws_kb: u32, parent: Option<TaskRef>) -> Task {
        Task {
            name,
            prog,
            pending: 0,
            deferred: None,
            block: Block::None,
            was_blocked: false,
            mailbox: VecDeque::new(),
            pair_bytes: 0,
            delivered: Vec::new(),
            forked: None,
            parent,
            timer_gen: 0,
            ws_bytes: ws_kb as f64 * 1024.0,
            last_cpu: None,
            stamp: 0.0,
            alive: true,
        }
    }
}

#[derive(Debug, Default)]
struct Cond {
    pending: u64,
    waiters: VecDeque<TaskRef>,
}

/// Which cache each CPU's working set lives in.
#[derive(Debug)]
struct CacheGeom {
    /// Last-level data cache instance of each CPU (a dense id).
    llc: Vec<usize>,
    /// Size of each LLC instance, bytes.
    llc_bytes: Vec<f64>,
    /// Bytes of data cache private to each CPU's core.
    private_bytes: Vec<f64>,
}

impl CacheGeom {
    fn new(host: &Host) -> CacheGeom {
        let n = host.nr_cpus();
        let mut llc = vec![usize::MAX; n];
        let mut llc_level = vec![0u8; n];
        let mut llc_bytes = Vec::new();
        let mut private_bytes = vec![0.0f64; n];
        for cache in host.caches().iter().filter(|c| c.kind.holds_data()) {
            for inst in &cache.instances {
                let id = llc_bytes.len();
                llc_bytes.push(cache.size_kb as f64 * 1024.0);
                for cpu in inst.iter().filter(|&c| c < n) {
                    if cache.level > llc_level[cpu] {
                        llc_level[cpu] = cache.level;
                        llc[cpu] = id;
                    }
                    if inst.is_subset_of(&host.thread_siblings(cpu)) {
                        private_bytes[cpu] = private_bytes[cpu].max(cache.size_kb as f64 * 1024.0);
                    }
                }
            }
        }
        // A host without cache data: one private 1 MB cache per CPU.
        for (cpu, l) in llc.iter_mut().enumerate() {
            if *l == usize::MAX {
                *l = llc_bytes.len();
                llc_bytes.push(1024.0 * 1024.0);
                private_bytes[cpu] = 1024.0 * 1024.0;
            }
        }
        CacheGeom { llc, llc_bytes, private_bytes }
    }
}

/// A run in progress.
struct Sim<'a> {
    costs: &'a CostModel,
    sched: Scheduler<SimObserver>,
    cpus: Vec<Cpu>,
    tasks: Vec<Task>,
    conds: Vec<Cond>,
    host: &'a Host,
    /// `Reach` from each CPU to every CPU, one row per source CPU, filled
    /// on first use (a 1024-CPU host would otherwise spend 10^6 distance
    /// lookups on every run's start).
    reach: Vec<OnceCell<Box<[Reach]>>>,
    geom: CacheGeom,
    /// Bytes loaded into each LLC instance so far.
    pressure: Vec<f64>,
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
    /// CPUs whose `curr` is a task.
    busy_cpus: usize,
    /// Resched events in flight.
    resched_in_flight: usize,
    /// Tasks not yet exited.
    live: usize,
    /// Messages in all mailboxes.
    unread: usize,
    /// The send buffers of AF_UNIX stream sockets with skbs not yet taken
    /// or writers waiting.
    socks: HashMap<SockKey, SendBuf, BuildHasherDefault<KeyHasher>>,
    /// Writes that blocked on a full send buffer.
    send_blocks: u64,
    /// The most messages unread at once.
    peak_unread: usize,
    /// Settings to write during the run ([`RunSetup::changes`]).
    changes: Vec<Change>,
    /// (time, units counted so far) at each distinct change time.
    marks: Vec<(u64, u64)>,
}

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
        let obs = SimObserver::new(costs.cpu(costs.scan_ns_per_cpu)).tracking_cpus(n > FULL_SYNC_MAX_CPUS);
        let sched = Scheduler::with_observer(setup.config, setup.domains.clone(), obs).map_err(SimError::Config)?;
        let reach = (0..n).map(|_| OnceCell::new()).collect();
        let geom = CacheGeom::new(host);
        let pressure = vec![0.0; geom.llc_bytes.len()];
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
            })
            .collect();
        let mut sim = Sim {
            costs,
            sched,
            cpus,
            tasks: Vec::new(),
            conds: (0..inst.conds).map(|_| Cond::default()).collect(),
            host,
            reach,
            geom,
            pressure,
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
            busy_cpus: 0,
            resched_in_flight: 0,
            live: 0,
            unread: 0,
            socks: HashMap::default(),
            send_blocks: 0,
            peak_unread: 0,
            changes: setup.changes.clone(),
            marks: Vec::new(),
        };
        sim.boot(inst.tasks)?;
        Ok(sim)
    }

    /// Creates the initial tasks at time 0 and starts the clocks.
    fn boot(&mut self, specs: Vec<TaskSpec>) -> Result<(), SimError> {
        let n = self.cpus.len();
        for spec in specs {
            self.check_task_limits()?;
            let cpu = spec.cpu.min(n - 1);
            let id = self.sched.spawn(self.t(), cpu, spec.params)?;
            debug_assert_eq!(id.0 as usize, self.tasks.len());
            self.tasks.push(Task::new(spec.name, spec.program, spec.ws_kb, None));
            self.live += 1;
            self.probe_runnable(id.0 as TaskRef);
        }
        self.drain_charges();
        let _ = self.sched.take_resched();
        for cpu in 0..n {
            self.push(self.tick_ns, Ev::Tick(cpu as u32));
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
        Ok(())
    }

    /// Writes change `i` to the scheduler; the first change at each time
    /// closes a throughput phase.
    fn on_change(&mut self, i: usize) -> Result<(), SimError> {
        if self.marks.last().is_none_or(|&(t, _)| t != self.now) {
            self.marks.push((self.now, self.units));
        }
        let setting = self.changes[i].setting.clone();
        setting.apply(&mut self.sched)?;
        if let Some(tr) = &mut self.trace {
            tr.mark(self.now, setting.to_string());
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
            m.1 = 0;
        }
    }

    /// The phases between the change times that came before the run's
    /// end (none without changes; the whole run as one phase when every
    /// change was due after its end).
    fn phases(&self, end: u64) -> Vec<Phase> {
        if self.changes.is_empty() {
            return Vec::new();
        }
        let warm = self.limits.warmup_ns;
        let mut bounds = vec![(0, 0)];
        bounds.extend(self.marks.iter().copied().filter(|&(t, _)| t > 0));
        bounds.push((end, self.units));
        bounds
            .windows(2)
            .map(|w| {
                let start = w[0].0.max(warm).min(w[1].0);
                Phase { start_ns: start, end_ns: w[1].0, units: w[1].1 - w[0].1 }
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
        let idle = (0..n).any(|c| nr(c) == 0);
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
                return Err(SimError::TimeLimit { at: self.limits.max_ns });
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
                Ev::Resched(c) => {
                    let c = c as usize;
                    self.cpus[c].resched_at = None;
                    self.resched_in_flight -= 1;
                    if self.sched.need_resched(c) {
                        self.preempt(c)?;
                    }
                }
                Ev::Hrtick(c, e) => self.on_hrtick(c as usize, e)?,
                Ev::Timer(t, g) => self.on_timer(t as usize, g)?,
                Ev::Change(i) => self.on_change(i as usize)?,
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
        if self.sched.tick_stopped(c) {
            return Ok(()); // NO_HZ: this idle CPU's tick is off
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
        self.after_call(cpu);
        let cost = self.costs.wake_cost(self.reach(cpu, out.cpu));
        self.charge(cpu, round_u64(cost));
        self.interrupt_return(cpu)
    }

    /// The end of an interrupt on `c`: act on need_resched now (an idle CPU
    /// first leaves its C-state).
    fn interrupt_return(&mut self, c: usize) -> Result<(), SimError> {
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
    fn after_call(&mut self, c: usize) {
        self.drain_charges();
        let mask = self.sched.take_resched();
        if !mask.is_empty() {
            for cpu in mask.iter() {
                if cpu != c {
                    self.post_resched(c, cpu);
                }
            }
        }
        self.sync_hrticks(c);
    }

    fn drain_charges(&mut self) {
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
    fn post_resched(&mut self, from: usize, cpu: usize) {
        if self.cpus[cpu].resched_at.is_some() {
            return;
        }
        let mut lat = if from == cpu { 0 } else { self.costs.ipi_latency_ns[self.reach(from, cpu) as usize] as u64 };
        if self.cpus[cpu].curr.is_none() {
            lat += self.idle_exit_ns;
        }
        let t = self.now + lat;
        self.cpus[cpu].resched_at = Some(t);
        self.resched_in_flight += 1;
        self.push(t, Ev::Resched(cpu as u32));
    }

    /// Adds `ns` of work to `cpu`: to the segment in flight, or to the next
    /// one. An idle CPU absorbs it.
    fn charge(&mut self, cpu: usize, ns: u64) {
        if ns == 0 || self.cpus[cpu].curr.is_none() {
            return;
        }
        match self.cpus[cpu].seg.as_mut() {
            Some(seg) => {
                seg.len += ns;
                let end = seg.start + seg.len;
                self.cpus[cpu].epoch += 1;
                let g = self.cpus[cpu].epoch;
                self.push(end, Ev::SegEnd(cpu as u32, g));
            }
            None => self.cpus[cpu].debt += ns,
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
            let done = self.now.saturating_sub(seg.start);
            if let Some(t) = self.cpus[c].curr {
                self.tasks[t].pending = seg.len.saturating_sub(done);
            }
        }
    }

    fn start_segment(&mut self, c: usize, t: TaskRef) {
        debug_assert!(self.cpus[c].seg.is_none());
        let len = (self.tasks[t].pending + std::mem::take(&mut self.cpus[c].debt)).max(1);
        self.tasks[t].pending = 0;
        self.cpus[c].seg = Some(Seg { start: self.now, len });
        self.cpus[c].epoch += 1;
        let g = self.cpus[c].epoch;
        self.push(self.now + len, Ev::SegEnd(c as u32, g));
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
            self.idle_loop(c)?;
        }
        Ok(())
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
        let llc = self.geom.llc[c];
        let task = &mut self.tasks[p];
        task.last_cpu = Some(c);
        task.stamp = self.pressure[llc];
    }

    fn switch_in(&mut self, c: usize, n: TaskRef) {
        let cost = self.ctx_ns + self.refill(n, c);
        self.tasks[n].pending += round_u64(cost);
        if let Some(tr) = &mut self.trace {
            tr.begin(c, n, self.now);
        }
    }

    /// The cache refill task `t` pays to run on `c` (see docs/CALIBRATION.md):
    /// the part of its working set evicted from, or left behind in, another
    /// cache. Eviction follows random replacement: after P bytes were
    /// loaded into a cache of S bytes a line survives with exp(-P/S).
    fn refill(&mut self, t: TaskRef, c: usize) -> f64 {
        let ws = self.tasks[t].ws_bytes;
        if ws <= 0.0 {
            return 0.0;
        }
        let lines = ws / 64.0;
        let llc_c = self.geom.llc[c];
        let mem = self.costs.mem_line_ns;
        let evicted = |s: &Self, llc: usize| {
            let p = (s.pressure[llc] - s.tasks[t].stamp).max(0.0);
            1.0 - (-p / s.geom.llc_bytes[llc]).exp()
        };
        let (cost, loaded) = match self.tasks[t].last_cpu {
            None => (lines * mem, ws),
            Some(p) if self.geom.llc[p] == llc_c => {
                let f = evicted(self, llc_c);
                let mut cost = f * lines * mem;
                if p != c {
                    // The core's private levels refill from the shared cache.
                    let private = ws.min(self.geom.private_bytes[c]) / 64.0;
                    cost += private * self.costs.xfer_line_ns[self.reach(p, c) as usize];
                }
                (cost, f * ws)
            }
            Some(p) => {
                let f = evicted(self, self.geom.llc[p]);
                let xfer = self.costs.xfer_line_ns[self.reach(p, c) as usize];
                ((1.0 - f) * lines * xfer + f * lines * mem, ws)
            }
        };
        self.pressure[llc_c] += loaded;
        cost
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
            if let Some(d) = self.tasks[t].deferred.take() {
                self.resume(c, t, d)?;
                continue;
            }
            // Return to user space: the preemption point.
            if self.sched.need_resched(c) {
                self.switch(c, Deschedule::Preempt)?;
                if self.cpus[c].curr == Some(t) {
                    // Nobody better: carry on without looping back here.
                    let a = self.step(t);
                    self.exec(c, t, a)?;
                }
                continue;
            }
            free_steps += 1;
            if free_steps > FREE_STEPS {
                // A program that only counts progress: make time pass.
                self.tasks[t].pending = self.syscall_ns;
                continue;
            }
            let a = self.step(t);
            self.exec(c, t, a)?;
        }
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
            Action::SendAll { to, sync, bytes, tag } => {
                let mut cost = 0;
                for &r in to.iter() {
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
            Action::Wait { all } => defer(self, Deferred::Wait { all, repoll_ns: 0, woken: false }),
            Action::Select { repoll_ns } => defer(self, Deferred::Wait { all: true, repoll_ns, woken: false }),
            Action::Sleep { ns, interruptible } => defer(self, Deferred::Sleep { ns, interruptible }),
            Action::CondWait(k) => defer(self, Deferred::CondWait(k)),
            Action::CondSignal { cond, all } => {
                let cost = self.cond_signal(c, cond, all)?;
                self.tasks[t].pending = sys + cost;
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
                // kernel's EINVAL: the task keeps its affinity.
                if self.sched.set_affinity(self.t(), TaskId(t as u32), m).is_ok() {
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
            Deferred::Wait { all, repoll_ns, woken } => {
                if self.tasks[t].mailbox.is_empty() {
                    if woken && repoll_ns > 0 {
                        // Woken with nothing to read: poll every socket
                        // again, then look once more.
                        self.tasks[t].pending = self.work(repoll_ns);
                        self.tasks[t].deferred = Some(Deferred::Wait { all, repoll_ns, woken: false });
                        return Ok(());
                    }
                    return self.block(c, t, Block::Wait, Deferred::Wait { all, repoll_ns, woken: true });
                }
                self.deliver(c, t, all)?;
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
            Deferred::CondWait(k) => {
                let cond = &mut self.conds[k];
                if cond.pending > 0 {
                    cond.pending -= 1;
                } else {
                    cond.waiters.push_back(t);
                    return self.block(c, t, Block::Cond, Deferred::Resume);
                }
            }
            Deferred::Write { to, stream, bytes, tag } => {
                let key = SockKey::new(stream, t, to);
                if self.send_buffer_full(key, bytes) {
                    self.socks.entry(key).or_default().waiters.push(t);
                    if let Some(tr) = &mut self.trace {
                        tr.send_block(t, c, self.now);
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
        let task = &mut self.tasks[t];
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
            self.unread -= 1;
            cost += self.costs.handoff_cost(self.reach(m.cpu, c), m.bytes);
            self.tasks[t].delivered.push(m);
            wake_cost += self.write_space(c, t, &m)?;
        }
        self.tasks[t].pending += round_u64(cost) + wake_cost;
        Ok(())
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
        let writer_sleeps = self.tasks.get(m.from).is_some_and(|w| w.alive && w.block == Block::Wait);
        if self.sockets.write_space_wakeups && !pipe && writer_sleeps {
            cost += self.wake(c, m.from, true)?;
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
            Block::Sleep { interruptible: true } => {
                // A signal interrupts the sleep: cancel its timer.
                task.timer_gen += 1;
                task.deferred = Some(Deferred::Wait { all: true, repoll_ns: 0, woken: false });
                self.armed_timers -= 1;
            }
            _ => return Ok(0),
        }
        self.wake(c, to, sync)
    }

    /// try_to_wake_up of a blocked task from `c`; returns the waker's cost.
    fn wake(&mut self, c: usize, to: TaskRef, sync: bool) -> Result<u64, SimError> {
        self.tasks[to].block = Block::None;
        let out = self.sched.wake_up(self.t(), TaskId(to as u32), c, sync)?;
        self.after_call(c);
        if out.woken {
            self.probe_runnable(to);
            self.probe_wake(c, to);
        }
        if let Some(tr) = &mut self.trace {
            tr.wake(to, c, self.now);
        }
        Ok(round_u64(self.costs.wake_cost(self.reach(c, out.cpu))))
    }

    fn cond_signal(&mut self, c: usize, k: usize, all: bool) -> Result<u64, SimError> {
        let cond = &mut self.conds[k];
        if cond.waiters.is_empty() {
            cond.pending += 1;
            return Ok(0);
        }
        let n = if all { cond.waiters.len() } else { 1 };
        let woken: Vec<TaskRef> = cond.waiters.drain(..n).collect();
        let mut cost = 0;
        for w in woken {
            self.tasks[w].deferred = Some(Deferred::Resume);
            cost += self.wake(c, w, false)?;
        }
        Ok(cost)
    }

    fn fork(&mut self, c: usize, parent: TaskRef, spec: ForkSpec) -> Result<(), SimError> {
        self.check_task_limits()?;
        let out = self.sched.fork(self.t(), TaskId(parent as u32), spec.params)?;
        let child = out.child.0 as TaskRef;
        debug_assert_eq!(child, self.tasks.len());
        self.tasks.push(Task::new(spec.name, spec.program, spec.ws_kb, Some(parent)));
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
        }
        let end = self.now;
        let tasks = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let st = self.sched.task(TaskId(i as u32));
                TaskStat {
                    name: t.name.clone(),
                    runtime_ns: st.map_or(0, |s| s.se.sum_exec_runtime),
                    migrations: st.map_or(0, |s| s.nr_migrations),
                }
            })
            .collect();
        let names: Vec<&str> = self.tasks.iter().map(|t| t.name.as_str()).collect();
        let trace = self.trace.take().map(|tr| tr.into_json(&names, end));
        let phases = self.phases(end);
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
            peak_unread: self.peak_unread,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::FnProgram;
    use cfs_core::{CpuMask, KernelVersion, TaskParams};

    fn setup<'a>(host: &'a Host, costs: &'a CostModel, limits: Limits) -> RunSetup<'a> {
        let v = KernelVersion::V2_6_26;
        RunSetup {
            host,
            costs,
            config: Config::new(v, host.nr_cpus()),
            domains: host.build_domains(v),
            seed: 3,
            limits,
            trace: true,
            instruments: Instruments::default(),
            sockets: Sockets::default(),
            changes: Vec::new(),
        }
    }

    /// A task allowed only on `cpu`.
    fn pinned(name: &str, program: Box<dyn Program>, cpu: usize, ws_kb: u32) -> TaskSpec {
        TaskSpec { name: name.into(), program, params: TaskParams::normal().allowed(CpuMask::single(cpu)), cpu, ws_kb }
    }

    /// A program that plays `actions` in order, then exits.
    fn script(actions: Vec<Action>) -> Box<dyn Program> {
        let mut it = actions.into_iter();
        Box::new(FnProgram(move |_cx: &mut StepCx<'_>| it.next().unwrap_or(Action::Exit)))
    }

    /// A ping task on `a` and a pong task on `b` for `rounds` round trips
    /// of 10 µs each side; returns the run's end time.
    fn ping_pong(a: usize, b: usize, rounds: u64) -> u64 {
        ping_pong_run(a, b, rounds).end_ns
    }

    /// [`ping_pong`]'s whole outcome.
    fn ping_pong_run(a: usize, b: usize, rounds: u64) -> RunOutcome {
        let host = Host::preset("q6600").unwrap();
        let mut costs = CostModel::preset("q6600").unwrap();
        costs.jitter_cv = 0.0;
        let limits = Limits::new(None, 0, 10_000_000_000);
        let mut n = 0u64;
        let ping = FnProgram(move |cx: &mut StepCx<'_>| {
            n += 1;
            match n % 3 {
                1 if n / 3 >= rounds => Action::Exit,
                1 => Action::Run(10_000),
                2 => Action::Send { to: 1, sync: true, bytes: 64, tag: 0 },
                _ => {
                    let _ = cx;
                    Action::Wait { all: false }
                }
            }
        });
        let mut m = 0u64;
        let pong = FnProgram(move |_cx: &mut StepCx<'_>| {
            m += 1;
            match m % 3 {
                1 => Action::Wait { all: false },
                2 => Action::Run(10_000),
                _ => Action::Send { to: 0, sync: true, bytes: 64, tag: 0 },
            }
        });
        let inst = Instance {
            tasks: vec![pinned("ping", Box::new(ping), a, 16), pinned("pong", Box::new(pong), b, 16)],
            finish: vec![0],
            conds: 0,
        };
        let out = run(&setup(&host, &costs, limits), inst).unwrap();
        assert!(out.trace.is_some());
        out
    }

    #[test]
    fn communication_costs_grow_with_distance() {
        let same_cpu = ping_pong(0, 0, 200);
        let same_die = ping_pong(0, 1, 200);
        let cross_die = ping_pong(0, 2, 200);
        // 200 round trips of 20 µs of work.
        assert!(same_cpu > 4_000_000, "{same_cpu}");
        assert!(same_cpu < same_die && same_die < cross_die, "{same_cpu} {same_die} {cross_die}");
    }

    /// The engine's price of one ping-pong round, worked out from the
    /// Q6600 cost set (no jitter, so every figure is exact). The runs stay
    /// inside the first 4 ms, before any tick, and the difference between
    /// 60 and 20 rounds leaves out the start (first refills from DRAM).
    ///
    /// Same CPU: each side runs 10 µs, sends (a system call, a local wakeup
    /// and the two runqueue loads wake_affine reads), enters the wait (a
    /// system call) and switches to the other (the direct switch cost; the
    /// 16 KB working sets stay in the L2, so no refill).
    ///
    /// Across CPUs the sender's own send and wait overlap the wakee's
    /// start; the round trip is two hops of: the reschedule IPI's flight,
    /// the idle wakee's C-state exit, its switch in, reading the message
    /// (its 64 bytes plus the kernel's communication lines, dirty in the
    /// sender's cache), its 10 µs, and the newly-idle balancing its CPU did
    /// when it went idle (six runqueue reads: the die's two CPUs in the MC
    /// domain, all four in the CPU domain), which the CPU owes as debt.
    #[test]
    fn round_trips_cost_what_the_model_charges() {
        let c = CostModel::preset("q6600").unwrap();
        let per_round = |a: usize, b: usize| (ping_pong(a, b, 60) - ping_pong(a, b, 20)) / 40;
        let side = 10_000.0
            + c.syscall_ns
            + c.wake_cost(Reach::SameCpu)
            + 2.0 * c.scan_ns_per_cpu
            + c.syscall_ns
            + c.ctx_switch_ns;
        // 2 x (10,000 + 100 + 500 + 200 + 100 + 1,800) = 25,400 ns.
        assert_eq!(per_round(0, 0), round_u64(2.0 * side));
        for (b, reach) in [(1, Reach::SharedCache), (2, Reach::Package)] {
            let hop = c.ipi_latency_ns[reach as usize]
                + c.idle_exit_ns
                + c.ctx_switch_ns
                + c.handoff_cost(reach, 64)
                + 10_000.0
                + 6.0 * c.scan_ns_per_cpu;
            // Same die: 2 x (1,000 + 5,000 + 1,800 + 41 x 15 + 10,000 + 600)
            // = 38,030 ns; across the dies: 2 x (1,500 + 5,000 + 1,800 +
            // 41 x 125 + 10,000 + 600) = 48,050 ns.
            assert_eq!(per_round(0, b), round_u64(2.0 * hop), "{reach:?}");
        }
    }

    /// A Q6600 simulation booted with one 128 KB task that only exits, for
    /// poking at the cost helpers directly.
    fn q6600_sim<'a>(host: &'a Host, costs: &'a CostModel) -> Sim<'a> {
        let inst = Instance { tasks: vec![pinned("t", script(Vec::new()), 0, 128)], finish: vec![0], conds: 0 };
        Sim::new(&setup(host, costs, limits(None, 1_000)), inst).unwrap()
    }

    /// The refill formula of docs/CALIBRATION.md section 1, case by case, for a
    /// 128 KB working set (2,048 lines) on the Q6600 (4 MB L2 per die, 32 KB
    /// L1d per core; DRAM 12 ns a line, L2 to L1 3 ns, cross-die 20 ns).
    /// A line survives P bytes loaded into a cache of S with exp(-P/S).
    #[test]
    fn refill_prices_the_working_set_by_where_it_was_left() {
        let host = Host::preset("q6600").unwrap();
        let costs = CostModel::preset("q6600").unwrap();
        let mut sim = q6600_sim(&host, &costs);
        let (die0, die1) = (sim.geom.llc[0], sim.geom.llc[2]);
        assert_eq!(sim.geom.llc[1], die0);
        assert_ne!(die0, die1);
        let s = 4.0 * 1024.0 * 1024.0;
        assert_eq!(sim.geom.llc_bytes[die0], s);
        assert_eq!(sim.geom.private_bytes[1], 32.0 * 1024.0);
        let (ws, lines) = (128.0 * 1024.0, 2048.0);
        let close = |got: f64, want: f64| assert!((got - want).abs() <= 1e-9 * want.max(1.0), "{got} against {want}");

        // Never ran: the whole set from DRAM, 2,048 x 12 = 24,576 ns, and the
        // die's cache now holds it.
        sim.tasks[0].last_cpu = None;
        let before = sim.pressure[die1];
        close(sim.refill(0, 2), lines * 12.0);
        close(sim.pressure[die1] - before, ws);

        // Back on its own CPU after one cache's worth was loaded there:
        // 1 - e^-1 = 63.2% of it comes again from DRAM.
        sim.tasks[0].last_cpu = Some(0);
        sim.tasks[0].stamp = sim.pressure[die0] - s;
        let f = 1.0 - (-1.0f64).exp();
        let before = sim.pressure[die0];
        close(sim.refill(0, 0), f * lines * 12.0);
        close(sim.pressure[die0] - before, f * ws);

        // The other core of the die, nothing loaded since: only the 512
        // lines of L1d refill from the shared L2, 512 x 3 = 1,536 ns.
        sim.tasks[0].last_cpu = Some(1);
        sim.tasks[0].stamp = sim.pressure[die0];
        close(sim.refill(0, 0), 512.0 * 3.0);

        // Across the dies after half a cache was loaded on the old one: the
        // surviving 1 - (1 - e^-0.5) comes over the FSB at 20 ns, the rest
        // from DRAM, and the new die's cache takes the whole set.
        sim.tasks[0].last_cpu = Some(2);
        sim.tasks[0].stamp = sim.pressure[die1] - s / 2.0;
        let f = 1.0 - (-0.5f64).exp();
        let before = sim.pressure[die0];
        close(sim.refill(0, 0), (1.0 - f) * lines * 20.0 + f * lines * 12.0);
        close(sim.pressure[die0] - before, ws);

        // Nothing to refill without a working set.
        sim.tasks[0].ws_bytes = 0.0;
        assert_eq!(sim.refill(0, 0), 0.0);
    }

    /// Run-time jitter: the host's clock factor times a normal factor of
    /// the cost set's CV (0.03 on the Q6600), clamped to 0.2-3; without
    /// jitter the work is exact and draws nothing.
    #[test]
    fn work_is_scaled_and_jittered_by_the_cost_set() {
        let host = Host::preset("q6600").unwrap();
        let mut costs = CostModel::preset("q6600").unwrap();
        costs.clock_factor = 0.5;
        let mut sim = q6600_sim(&host, &costs);
        // The first draw, exactly: 10,000 ns x (1 + 0.03 z) for the run's
        // next standard normal z (a distribution test alone cannot tell
        // 1 + cv z from 1 - cv z).
        let z = crate::dist::std_normal(&mut sim.rng.clone());
        assert!(z.abs() > 0.01, "{z}");
        assert_eq!(sim.work(20_000), round_u64(10_000.0 * (1.0 + costs.jitter_cv * z)));
        let xs: Vec<f64> = (0..4000).map(|_| sim.work(20_000) as f64).collect();
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt();
        // 20 us at half the baseline's time: mean 10,000 ns, sd 300 ns; the
        // sample's standard errors are 5 ns and ~1.1%.
        assert!((mean - 10_000.0).abs() < 25.0, "{mean}");
        assert!((sd - 300.0).abs() < 15.0, "{sd}");
        costs.jitter_cv = 0.0;
        let mut sim = q6600_sim(&host, &costs);
        let twin = sim.rng.clone();
        assert_eq!(sim.work(20_000), 10_000);
        assert_eq!(sim.rng, twin);
        // The clamp: a CV so large that the normal factor leaves 0.2-3.
        costs.jitter_cv = 10.0;
        let mut sim = q6600_sim(&host, &costs);
        let xs: Vec<u64> = (0..4000).map(|_| sim.work(20_000)).collect();
        assert!(xs.iter().all(|&x| (2_000..=30_000).contains(&x)));
        assert!(xs.contains(&2_000) && xs.contains(&30_000));
    }

    /// Runs `tasks` on the Q6600 without jitter until all have exited.
    fn run_to_exit(tasks: Vec<TaskSpec>, sockets: Sockets) -> RunOutcome {
        let finish = (0..tasks.len()).collect();
        q6600_run(Instance { tasks, finish, conds: 0 }, limits(None, 1_000), |s| s.sockets = sockets).unwrap()
    }

    /// Limits for a run of `duration_ms` (or until its tasks finish) capped
    /// at `max_ms` of simulated time.
    fn limits(duration_ms: Option<u64>, max_ms: u64) -> Limits {
        Limits::new(duration_ms.map(|d| d * 1_000_000), 0, max_ms * 1_000_000)
    }

    /// Runs `inst` on the Q6600 without jitter, under [`setup`] as `edit`
    /// changes it.
    fn q6600_run(inst: Instance, limits: Limits, edit: impl FnOnce(&mut RunSetup<'_>)) -> Result<RunOutcome, SimError> {
        let host = Host::preset("q6600").unwrap();
        let mut costs = CostModel::preset("q6600").unwrap();
        costs.jitter_cv = 0.0;
        let mut s = setup(&host, &costs, limits);
        edit(&mut s);
        run(&s, inst)
    }

    /// A CPU hog: 1 ms of work at a time, for ever.
    fn hog() -> Box<dyn Program> {
        Box::new(FnProgram(|_cx: &mut StepCx<'_>| Action::Run(1_000_000)))
    }

    /// What one exchange measured.
    #[derive(Debug, PartialEq, Eq)]
    struct Exchange {
        wakeups: u64,
        switches: u64,
        writer_ns: u64,
        reader_ns: u64,
        end_ns: u64,
    }

    /// One AF_UNIX exchange: the writer (task 0, CPU 0) computes 20 µs,
    /// writes to the reader (task 1, CPU 2, asleep in recv by then) and
    /// sleeps, in select() (`repoll_ns`) or, with `None`, in a 1 ms
    /// nanosleep and then select(); the reader, woken across the FSB (IPI
    /// and idle exit, ~6.5 µs, long after the writer slept), takes the
    /// message, works 50 µs and writes back; the writer takes the reply and
    /// exits.
    fn unix_exchange(write_space_wakeups: bool, repoll_ns: Option<u64>) -> Exchange {
        let mut n = 0;
        let writer = FnProgram(move |_cx: &mut StepCx<'_>| {
            n += 1;
            match (n, repoll_ns) {
                // Let the reader block in recv first.
                (1, _) => Action::Run(20_000),
                (2, _) => Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 },
                (3, Some(repoll_ns)) => Action::Select { repoll_ns },
                (3, None) => Action::Sleep { ns: 1_000_000, interruptible: false },
                (4, None) => Action::Select { repoll_ns: 0 },
                _ => Action::Exit,
            }
        });
        let mut m = 0;
        let reader = FnProgram(move |_cx: &mut StepCx<'_>| {
            m += 1;
            match m {
                1 => Action::Wait { all: false },
                2 => Action::Run(50_000),
                3 => Action::Write { to: 0, stream: Stream::Pair, bytes: 100, tag: 0 },
                _ => Action::Exit,
            }
        });
        let tasks = vec![pinned("writer", Box::new(writer), 0, 0), pinned("reader", Box::new(reader), 2, 0)];
        let out = run_to_exit(tasks, Sockets { write_space_wakeups, ..Sockets::default() });
        Exchange {
            wakeups: out.counters.wakeups,
            switches: out.switches,
            writer_ns: out.tasks[0].runtime_ns,
            reader_ns: out.tasks[1].runtime_ns,
            end_ns: out.end_ns,
        }
    }

    #[test]
    fn taking_a_unix_write_wakes_a_writer_sleeping_in_select() {
        let repoll = 30_000;
        let off = unix_exchange(false, Some(repoll));
        let on = unix_exchange(true, Some(repoll));
        // Off: the query wakes the reader and the reply wakes the writer.
        // On: the reader taking the query (while the writer sleeps in
        // select) wakes the writer once more; it finds nothing, polls every
        // socket again (repoll_ns, no jitter, clock factor 1) and sleeps:
        // one wakeup, one more switch in and one more out of the writer's
        // CPU, and at least repoll_ns more CPU time for the writer. The
        // reader pays for that wakeup: a remote one across the FSB.
        assert_eq!(on.wakeups, off.wakeups + 1, "{off:?} {on:?}");
        assert_eq!(on.switches, off.switches + 2, "{off:?} {on:?}");
        assert!(on.writer_ns >= off.writer_ns + repoll, "{off:?} {on:?}");
        let remote_wake = CostModel::preset("q6600").unwrap().wake_cost(Reach::Package);
        assert_eq!(remote_wake, 2_200.0, "0.5 µs local + 0.7 µs IPI send + 8 lines x 125 ns");
        assert!(on.reader_ns >= off.reader_ns + 2_200, "{off:?} {on:?}");
        // A plain re-check costs nothing: only the switches differ.
        let free = unix_exchange(true, Some(0));
        assert!(free.writer_ns < off.writer_ns + repoll, "{off:?} {free:?}");
        // A writer asleep elsewhere (a nanosleep) is not on the socket's
        // wait queue: nothing changes.
        assert_eq!(unix_exchange(true, None), unix_exchange(false, None));
    }

    #[test]
    fn an_skbs_truesize_is_its_aligned_data_plus_the_sk_buff() {
        // (232 + 256) x 256.
        assert_eq!(SK_WMEM_MAX, 124_928);
        // 100 bytes round up to one 128-byte line, plus 232.
        assert_eq!(skb_truesize(100, SK_WMEM_MAX), 360);
        assert_eq!(skb_truesize(128, SK_WMEM_MAX), 360);
        assert_eq!(skb_truesize(129, SK_WMEM_MAX), 488);
        assert_eq!(skb_truesize(0, SK_WMEM_MAX), 232);
        // Whole skbs only: 16,000 and 32,000 bytes leave no remainder.
        assert_eq!(skb_truesize(16_000, SK_WMEM_MAX), 16_232);
        assert_eq!(skb_truesize(32_000, SK_WMEM_MAX), 2 * 16_232);
        // 40,000 bytes: two full skbs of SKB_MAX_ALLOC (16,000 = 125 lines,
        // so 16,232 each) and 8,000 more (63 lines = 8,064, + 232).
        assert_eq!(skb_truesize(40_000, SK_WMEM_MAX), 2 * 16_232 + 8_296);
        // A 4,096-byte buffer cuts at 4,096 / 2 - 64 = 1,984 bytes (16 lines
        // = 2,048, + 232): 5,000 bytes are two of those and 1,032 (9 lines).
        assert_eq!(skb_truesize(5_000, 4_096), 2 * 2_280 + 1_384);
    }

    /// A writer (task 0, CPU 0) writing 100-byte messages for ever,
    /// counting one unit per completed write, to a reader (task 1, CPU 2)
    /// that sleeps 1 ms and then takes `reads` messages one at a time and
    /// sleeps for good; each writer on `stream`, one more writer (task 2,
    /// CPU 1) on the same terms with `second`. 5 ms.
    fn flood(reads: u64, stream: Stream, second: bool, sockets: Sockets) -> RunOutcome {
        let writer = || {
            let mut wrote = false;
            Box::new(FnProgram(move |_cx: &mut StepCx<'_>| {
                wrote = !wrote;
                if wrote { Action::Write { to: 1, stream, bytes: 100, tag: 0 } } else { Action::Progress(1) }
            })) as Box<dyn Program>
        };
        let mut reader = vec![Action::Sleep { ns: 1_000_000, interruptible: false }];
        reader.extend((0..reads).map(|_| Action::Wait { all: false }));
        reader.push(Action::Sleep { ns: 1_000_000_000, interruptible: false });
        let mut tasks = vec![pinned("writer", writer(), 0, 0), pinned("reader", script(reader), 2, 0)];
        if second {
            tasks.push(pinned("writer2", writer(), 1, 0));
        }
        q6600_run(Instance { tasks, finish: vec![], conds: 0 }, limits(Some(5), 1_000), |s| s.sockets = sockets)
            .unwrap()
    }

    #[test]
    fn a_full_send_buffer_blocks_the_writer_until_a_quarter_is_left() {
        let d = Sockets::default();
        // A write goes ahead while less than 124,928 bytes are charged:
        // 347 x 360 = 124,920 still is, so the 348th goes and the 349th
        // blocks.
        let full = flood(0, Stream::Pair, false, d);
        assert_eq!((full.units, full.send_blocks, full.peak_unread), (348, 1, 348));
        // The blocked writer wakes when the socket is writable:
        // 4 x sk_wmem_alloc <= 124,928, i.e. at most 86 skbs left
        // (4 x 86 x 360 = 123,840; 87 give 125,280). So 261 reads leave it
        // asleep, and the 262nd wakes it; it then writes while less than
        // the buffer is charged: 86 + 262 = 348 again, 610 writes in all.
        assert_eq!(flood(261, Stream::Pair, false, d).units, 348);
        let refill = flood(262, Stream::Pair, false, d);
        assert_eq!((refill.units, refill.send_blocks), (610, 2));
        // Each block is an instant on the writer's CPU (0) in the trace.
        let blocks: Vec<u64> = refill.trace.as_ref().unwrap()["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "socket")
            .map(|e| e["tid"].as_u64().unwrap())
            .collect();
        assert_eq!(blocks, [0, 0]);
        // The reader pays for waking the writer: a wakeup across the FSB
        // (writer on CPU 0, reader on CPU 2; 500 + 700 + 8 x 125 = 2,200
        // ns), and no runqueue reads, since the writer may not run on the
        // reader's CPU; without the bound it takes the same 262 messages
        // and wakes nobody.
        let free_262 = flood(262, Stream::Pair, false, Sockets { sndbuf: 0, ..d });
        let c = CostModel::preset("q6600").unwrap();
        let wake = round_u64(c.wake_cost(Reach::Package));
        assert_eq!(refill.tasks[1].runtime_ns - free_262.tasks[1].runtime_ns, wake);
        // "At most a quarter" includes a quarter: a 2,880-byte buffer takes
        // 8 skbs (7 x 360 = 2,520 < 2,880), and 6 reads leave 2 x 360 =
        // 2,880 / 4, which wakes the writer for 6 more; 5 reads do not.
        let small = Sockets { sndbuf: 2_880, ..d };
        assert_eq!(flood(5, Stream::Pair, false, small).units, 8);
        assert_eq!(flood(6, Stream::Pair, false, small).units, 14);
        // Write-space wakeups change nothing for a writer blocked on the
        // buffer rather than in select().
        let wsw = Sockets { write_space_wakeups: true, ..d };
        assert_eq!(flood(262, Stream::Pair, false, wsw).units, 610);
        // Unbounded buffers never block: 5 ms of writes at ~100 ns each.
        let free = flood(0, Stream::Pair, false, Sockets { sndbuf: 0, ..d });
        assert_eq!(free.send_blocks, 0);
        assert!(free.units > 10_000, "{}", free.units);
    }

    /// A pipe: 100-byte writes merge into a page while 100 more bytes fit
    /// after its data, 40 a page (4,000 of 4,096 bytes), so 16 pages take
    /// 640 writes and the 641st, needing a 17th page, blocks. The reader
    /// frees a page with its 40th read (pipe_read releases an emptied
    /// buffer and wakes the writers), and the writer fills one more: 680.
    /// Two writers share the one pipe.
    #[test]
    fn a_pipe_holds_sixteen_pages_and_a_freed_page_wakes_its_writers() {
        let d = Sockets::default();
        let full = flood(0, Stream::Pipe(3), false, d);
        assert_eq!((full.units, full.send_blocks, full.peak_unread), (640, 1, 640));
        // Reads that empty no page wake nobody: the only wakeups are the
        // reader's timer ones, as with no reads at all.
        let partial = flood(39, Stream::Pipe(3), false, d);
        assert_eq!((partial.units, partial.counters.wakeups), (640, full.counters.wakeups));
        let one_page = flood(40, Stream::Pipe(3), false, d);
        assert_eq!((one_page.units, one_page.send_blocks), (680, 2));
        assert_eq!(one_page.counters.wakeups, full.counters.wakeups + 1, "the writer, once");
        assert_eq!(flood(0, Stream::Pipe(3), true, d).units, 640);
        // The socket buffer's size has nothing to do with a pipe.
        assert_eq!(flood(0, Stream::Pipe(3), false, Sockets { sndbuf: 0, ..d }).units, 640);
    }

    #[test]
    fn pipe_pages_merge_short_writes_and_release_when_read() {
        let mut b = SendBuf::default();
        // Nothing to merge into: a first write takes a page.
        assert_eq!(b.pipe_merge(100), 0);
        b.pipe_put(100);
        assert_eq!(b.pages.len(), 1);
        // 39 more fit (4,000 bytes); the 41st does not.
        for _ in 0..39 {
            assert_eq!(b.pipe_merge(100), 100);
            b.pipe_put(100);
        }
        assert_eq!((b.pages.len(), b.pipe_merge(100)), (1, 0));
        // 96 bytes still fit exactly (4,000 + 96 = 4,096).
        assert_eq!(b.pipe_merge(96), 96);
        // A 10,000-byte write: its 1,808 bytes modulo a page (10,000 -
        // 2 x 4,096) do not fit after 4,000, so it takes three new pages.
        b.pipe_put(10_000);
        assert_eq!(b.pages.iter().map(|p| p.unread).collect::<Vec<_>>(), [4_000, 4_096, 4_096, 1_808]);
        // Reading the first 40 messages empties the first page only with
        // the last of them.
        assert_eq!((0..39).map(|_| b.pipe_take(100)).sum::<usize>(), 0);
        assert_eq!(b.pipe_take(100), 1);
        // The big message spans and frees the other three.
        assert_eq!(b.pipe_take(10_000), 3);
        assert!(b.pages.is_empty());
        // Full: 16 pages in use and a write that needs a new one.
        for _ in 0..PIPE_BUFFERS {
            b.pipe_put(PAGE_SIZE);
        }
        assert!(b.pipe_full(1) && b.pipe_full(PAGE_SIZE));
        assert!(!b.pipe_full(0));
    }

    /// Two connections into one reader, whose mailbox holds both: each
    /// writer's charge is its own messages' truesize there, however many
    /// of the other's are queued with them. `a` and `b` are each a writer's
    /// script (task 0 on CPU 0, task 2 on CPU 1), the reader (task 1, CPU
    /// 2) sleeps 1 ms, reads `reads` messages, then sleeps for good; 5 ms.
    fn two_connections(a: Vec<Action>, b: Vec<Action>, reads: u64) -> RunOutcome {
        let mut reader = vec![Action::Sleep { ns: 1_000_000, interruptible: false }];
        reader.extend((0..reads).map(|_| Action::Wait { all: false }));
        reader.push(Action::Sleep { ns: 1_000_000_000, interruptible: false });
        let tasks =
            vec![pinned("a", script(a), 0, 0), pinned("reader", script(reader), 2, 0), pinned("b", script(b), 1, 0)];
        q6600_run(Instance { tasks, finish: vec![], conds: 0 }, limits(Some(5), 1_000), |_| {}).unwrap()
    }

    /// `n` writes of `bytes` to the reader, each counted as a unit if
    /// `count`.
    fn writes(n: u64, bytes: u32, count: bool) -> Vec<Action> {
        (0..n)
            .flat_map(|_| {
                let w = Action::Write { to: 1, stream: Stream::Pair, bytes, tag: 0 };
                [w, Action::Progress(count as u64)]
            })
            .collect()
    }

    #[test]
    fn a_connection_is_charged_only_its_own_messages() {
        let sleep = |us: u64| Action::Sleep { ns: us * 1_000, interruptible: false };
        // 200-byte writes cost 256 + 232 = 488 bytes, and 256 of them are
        // exactly 124,928. `a` writes 128, waits while `b` writes 128, and
        // writes once more: the reader then holds exactly sk_sndbuf, but
        // `a`'s connection only half of it, so the write goes ahead.
        let mut a = writes(128, 200, true);
        a.push(sleep(200));
        a.extend(writes(1, 200, true));
        let mut b = vec![sleep(50)];
        b.extend(writes(128, 200, false));
        assert_eq!(two_connections(a, b, 0).units, 129);
        // `b` fills its connection (348 x 360) and blocks; then `a` queues
        // 300 behind it. 262 reads leave `b` 86 messages, a quarter, and
        // wake it though the reader still holds 386: it writes 262 more.
        // b's units count its writes from the 401st on: 348 + 262 = 610
        // writes in all leave 210 of them.
        let b_only = |reads| {
            let mut b = writes(400, 100, false);
            b.extend(writes(1_000, 100, true));
            let mut a = vec![sleep(200)];
            a.extend(writes(300, 100, false));
            two_connections(a, b, reads).units
        };
        assert_eq!(b_only(261), 0);
        assert_eq!(b_only(262), 210);
    }

    /// Three connections into one reader: each blocks at its own 348
    /// (1,044 in all, the reader far past sk_sndbuf, so each charge is
    /// tracked exactly; debug builds check it against the mailbox at every
    /// step). After 786 reads the three hold 258 between them, so one at
    /// least is down to a quarter (86) and writes again.
    #[test]
    fn connections_into_one_reader_block_each_at_its_own_buffer() {
        let run = |reads: u64| {
            let mut reader = vec![Action::Sleep { ns: 1_000_000, interruptible: false }];
            reader.extend((0..reads).map(|_| Action::Wait { all: false }));
            reader.push(Action::Sleep { ns: 1_000_000_000, interruptible: false });
            let flood = || {
                Box::new(FnProgram({
                    let mut wrote = false;
                    move |_cx: &mut StepCx<'_>| {
                        wrote = !wrote;
                        if wrote {
                            Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }
                        } else {
                            Action::Progress(1)
                        }
                    }
                })) as Box<dyn Program>
            };
            let tasks = vec![
                pinned("w0", flood(), 0, 0),
                pinned("reader", script(reader), 2, 0),
                pinned("w1", flood(), 1, 0),
                pinned("w2", flood(), 3, 0),
            ];
            q6600_run(Instance { tasks, finish: vec![], conds: 0 }, limits(Some(5), 1_000), |_| {}).unwrap()
        };
        let full = run(0);
        assert_eq!((full.units, full.send_blocks, full.peak_unread), (1_044, 3, 1_044));
        assert!(run(786).units > 1_044);
    }

    /// A connection's first write can find its reader already holding
    /// sk_sndbuf or more of other connections' skbs: its own charge, not
    /// that total, decides. `b` fills its own connection with exactly
    /// 256 x 488 = 124,928 bytes, `c` then writes once (the reader holding
    /// exactly sk_sndbuf), and `a` once more (the reader holding more).
    #[test]
    fn a_first_write_is_charged_only_its_own_connection() {
        let sleep = |us: u64| Action::Sleep { ns: us * 1_000, interruptible: false };
        let w = |count| [Action::Write { to: 1, stream: Stream::Pair, bytes: 200, tag: 0 }, Action::Progress(count)];
        let b: Vec<Action> = (0..256).flat_map(|_| w(0)).collect();
        let after = |us, count| {
            let mut v = vec![sleep(us)];
            v.extend(w(count));
            v
        };
        let (c, a) = (after(100, 1), after(200, 1));
        let reader = script(vec![Action::Sleep { ns: 1_000_000_000, interruptible: false }]);
        let tasks = vec![
            pinned("a", script(a), 0, 0),
            pinned("reader", reader, 2, 0),
            pinned("b", script(b), 1, 0),
            pinned("c", script(c), 3, 0),
        ];
        let out = q6600_run(Instance { tasks, finish: vec![], conds: 0 }, limits(Some(5), 1_000), |_| {}).unwrap();
        assert_eq!((out.units, out.send_blocks), (2, 0));
    }

    /// With write-space wakeups, a writer sleeping in select() is woken
    /// when its own connection becomes writable, whatever else its reader
    /// holds: `a` writes `mine` messages and selects (re-polling costs 30
    /// µs), `b` queues 100 more behind them (36,000 bytes, above a quarter
    /// of sk_sndbuf), the reader takes one. With `a`'s one message taken,
    /// its connection is empty and `a` is woken; with 99 of its 100 left
    /// (35,640 bytes) it is not. `b` writing on a shared socket elsewhere
    /// as well puts an entry in the stream table.
    #[test]
    fn a_select_wakeup_looks_at_the_writers_own_connection() {
        let a_time = |mine: u64| {
            let mut a: Vec<Action> =
                (0..mine).map(|_| Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }).collect();
            a.push(Action::Select { repoll_ns: 30_000 });
            let mut b = vec![Action::Sleep { ns: 100_000, interruptible: false }];
            b.extend((0..100).map(|_| Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }));
            b.push(Action::Write { to: 3, stream: Stream::Shared(9), bytes: 100, tag: 0 });
            let reader = script(vec![
                Action::Sleep { ns: 1_000_000, interruptible: false },
                Action::Wait { all: false },
                Action::Sleep { ns: 1_000_000_000, interruptible: false },
            ]);
            let idle = script(vec![Action::Sleep { ns: 1_000_000_000, interruptible: false }]);
            let tasks = vec![
                pinned("a", script(a), 0, 0),
                pinned("reader", reader, 2, 0),
                pinned("b", script(b), 1, 0),
                pinned("d", idle, 3, 0),
            ];
            let wsw = Sockets { write_space_wakeups: true, ..Sockets::default() };
            let out =
                q6600_run(Instance { tasks, finish: vec![], conds: 0 }, limits(Some(5), 1_000), |s| s.sockets = wsw);
            out.unwrap().tasks[0].runtime_ns
        };
        assert!(a_time(1) >= 30_000, "{}", a_time(1));
        assert!(a_time(100) < 30_000, "{}", a_time(100));
    }

    #[test]
    fn writers_sharing_a_socket_share_its_buffer() {
        let d = Sockets::default();
        // Two connections: 348 each.
        let pairs = flood(0, Stream::Pair, true, d);
        assert_eq!((pairs.units, pairs.send_blocks), (696, 2));
        // One descriptor both write on (hackbench's senders): 348 in all,
        // and both block.
        let shared = flood(0, Stream::Shared(9), true, d);
        assert_eq!((shared.units, shared.send_blocks), (348, 2));
        // The 262nd read wakes both (unix_write_space wakes the whole
        // queue); between them they refill the 262 freed places.
        let refill = flood(262, Stream::Shared(9), true, d);
        assert_eq!(refill.units, 610);
        assert!(refill.counters.wakeups >= 2, "{:?}", refill.counters);
    }

    /// Two tasks that write to each other and never read fill both
    /// buffers and block for good, as on a real kernel: the run stops with
    /// a stall that says so.
    #[test]
    fn a_write_deadlock_is_a_stall_that_names_the_writers() {
        let flood = |to| {
            let mut n = 0;
            Box::new(FnProgram(move |_cx: &mut StepCx<'_>| {
                n += 1;
                if n > 1_000 { Action::Exit } else { Action::Write { to, stream: Stream::Pair, bytes: 100, tag: 0 } }
            })) as Box<dyn Program>
        };
        let tasks = vec![pinned("a", flood(1), 0, 0), pinned("b", flood(0), 1, 0)];
        let inst = Instance { tasks, finish: vec![0, 1], conds: 0 };
        match q6600_run(inst, limits(None, 1_000), |_| {}) {
            Err(SimError::Stalled { writers, .. }) => assert_eq!(writers, 2),
            other => panic!("{:?}", other.map(|o| o.end_ns)),
        }
    }

    /// Unbounded buffers are always writable: with write-space wakeups, a
    /// writer sleeping in select() is woken by each of its messages taken,
    /// whether or not others are still unread, exactly as with the default
    /// buffer (where two 360-byte skbs are far below a quarter).
    #[test]
    fn an_unbounded_buffer_is_always_writable() {
        let run = |sndbuf: u64| {
            let w = |to| Action::Write { to, stream: Stream::Pair, bytes: 100, tag: 0 };
            let writer = script(vec![Action::Run(20_000), w(1), w(1), Action::Select { repoll_ns: 0 }]);
            let reader = script(vec![
                Action::Wait { all: false },
                Action::Run(30_000),
                Action::Wait { all: false },
                Action::Run(30_000),
                Action::Write { to: 0, stream: Stream::Pair, bytes: 100, tag: 0 },
            ]);
            let tasks = vec![pinned("writer", writer, 0, 0), pinned("reader", reader, 2, 0)];
            run_to_exit(tasks, Sockets { write_space_wakeups: true, sndbuf }).counters.wakeups
        };
        // The reader woken by the first write; the writer by each take
        // (twice) and by the reply: 4.
        assert_eq!(run(SK_WMEM_MAX), 4);
        assert_eq!(run(0), 4);
    }

    #[test]
    fn a_reader_exiting_frees_its_unread_messages_and_wakes_their_writer() {
        // The writer writes 500 messages and exits; the reader sleeps 1 ms
        // and exits without reading. The writer blocks after 348; the
        // reader's exit purges them, which wakes it, and its last 152
        // writes find the peer gone (EPIPE) and return at once.
        let writer = script(
            (0..500)
                .flat_map(|_| [Action::Write { to: 1, stream: Stream::Pair, bytes: 100, tag: 0 }, Action::Progress(1)])
                .collect(),
        );
        let reader = script(vec![Action::Sleep { ns: 1_000_000, interruptible: false }]);
        let tasks = vec![pinned("writer", writer, 0, 0), pinned("reader", reader, 2, 0)];
        let out = run_to_exit(tasks, Sockets::default());
        assert_eq!((out.units, out.send_blocks), (500, 1));
        // It ends soon after the reader's 1 ms, not at the 1 s cap.
        assert!(out.end_ns < 2_000_000, "{}", out.end_ns);
    }

    /// The reader's CPU time for taking a 6,400-byte message written on
    /// CPU 0, reading it on `cpu`.
    fn reader_time(cpu: usize) -> u64 {
        let writer = script(vec![Action::Run(20_000), Action::Send { to: 1, sync: true, bytes: 6_400, tag: 0 }]);
        let mut m = 0;
        let reader = FnProgram(move |_cx: &mut StepCx<'_>| {
            m += 1;
            if m == 1 { Action::Wait { all: false } } else { Action::Exit }
        });
        let tasks = vec![pinned("writer", writer, 0, 0), pinned("reader", Box::new(reader), cpu, 0)];
        run_to_exit(tasks, Sockets::default()).tasks[1].runtime_ns
    }

    #[test]
    fn reading_a_message_costs_its_lines_from_the_writers_cache() {
        // 40 lines of socket state plus 6,400 / 64 = 100 payload lines, at
        // 15 ns each from the other core of the die and 125 ns across the
        // FSB: the cross-die read costs 140 x 110 = 15,400 ns more.
        let (same_die, cross_die) = (reader_time(1), reader_time(2));
        assert_eq!(cross_die - same_die, 15_400, "{same_die} {cross_die}");
    }

    /// A condition signalled twice before anyone waits (rt-app `signal`):
    /// the waiter sleeps 100 µs on a timer, then passes two waits on the
    /// counted signals (a unit after each) and blocks on the third for the
    /// rest of the 5 ms run.
    #[test]
    fn condition_signals_are_counted_not_lost() {
        let host = Host::preset("q6600").unwrap();
        let costs = CostModel::preset("q6600").unwrap();
        let limits = Limits::new(Some(5_000_000), 0, 1_000_000_000);
        let mut n = 0;
        let signaller = FnProgram(move |_cx: &mut StepCx<'_>| {
            n += 1;
            if n <= 2 { Action::CondSignal { cond: 0, all: false } } else { Action::Exit }
        });
        let mut m = 0;
        let waiter = FnProgram(move |_cx: &mut StepCx<'_>| {
            m += 1;
            match m {
                1 => Action::Sleep { ns: 100_000, interruptible: false },
                k if k % 2 == 0 => Action::CondWait(0),
                _ => Action::Progress(1),
            }
        });
        let inst = Instance {
            tasks: vec![pinned("signaller", Box::new(signaller), 0, 0), pinned("waiter", Box::new(waiter), 1, 0)],
            finish: vec![],
            conds: 1,
        };
        let out = run(&setup(&host, &costs, limits), inst).unwrap();
        // Two signals, two waits passed, the third blocks: 2 units, and the
        // run idles to its end.
        assert_eq!(out.units, 2);
        assert_eq!(out.end_ns, 5_000_000);
    }

    #[test]
    fn a_workload_that_waits_forever_is_reported() {
        let host = Host::preset("x2").unwrap();
        let costs = CostModel::preset("x2").unwrap();
        let limits = Limits::new(None, 0, 1_000_000_000);
        let waiter = FnProgram(|_cx: &mut StepCx<'_>| Action::Wait { all: true });
        let inst = Instance {
            tasks: vec![TaskSpec {
                name: "w".into(),
                program: Box::new(waiter),
                params: TaskParams::normal(),
                cpu: 0,
                ws_kb: 0,
            }],
            finish: vec![0],
            conds: 0,
        };
        assert!(matches!(run(&setup(&host, &costs, limits), inst), Err(SimError::Stalled { .. })));
    }

    /// A sleeper (CPU 0) and a task (CPU 2) that computes 1 ms and signals
    /// it; the sleeper's program after the signal is `then`.
    fn interrupted_sleep(then: Action) -> Result<RunOutcome, SimError> {
        let sleeper = script(vec![Action::Sleep { ns: 10_000_000, interruptible: true }, then]);
        let signaller = script(vec![Action::Run(1_000_000), Action::Send { to: 0, sync: false, bytes: 0, tag: 0 }]);
        let tasks = vec![pinned("sleeper", sleeper, 0, 0), pinned("signaller", signaller, 2, 0)];
        q6600_run(Instance { tasks, finish: vec![0, 1], conds: 0 }, limits(None, 100), |_| {})
    }

    /// A signal ends an interruptible sleep and cancels its timer for good:
    /// a second sleep of 20 ms from ~1 ms lasts its 20 ms (the cancelled
    /// timer's expiry at 10 ms must not end it), and a sleeper that then
    /// waits for a message nobody sends is a stall as soon as a tick looks
    /// (4 ms at HZ=250), not a run that idles on to its cap.
    #[test]
    fn a_signal_cancels_the_sleep_it_ends() {
        let out = interrupted_sleep(Action::Sleep { ns: 20_000_000, interruptible: false }).unwrap();
        assert!((21_000_000..21_100_000).contains(&out.end_ns), "{}", out.end_ns);
        match interrupted_sleep(Action::Wait { all: true }) {
            Err(SimError::Stalled { at, writers }) => assert_eq!((at, writers), (4_000_000, 0)),
            other => panic!("{:?}", other.map(|o| o.end_ns)),
        }
    }

    /// What the CLI prints when a run fails, and how an instance shows in
    /// a debug log (programs are closures: only their count).
    #[test]
    fn errors_and_instances_say_what_they_hold() {
        let stalled = SimError::Stalled { at: 1_500_000_000, writers: 0 }.to_string();
        assert_eq!(stalled, "workload stalled at 1.500000 s: every task waits and no timer is armed");
        let one = SimError::Stalled { at: 0, writers: 1 }.to_string();
        assert!(one.ends_with("armed (1 of them blocked writing to a full socket buffer)"), "{one}");
        let two = SimError::Stalled { at: 0, writers: 2 }.to_string();
        assert!(two.ends_with("armed (2 of them blocked writing to full socket buffers)"), "{two}");
        let cap = SimError::TimeLimit { at: 2_000_000_000 }.to_string();
        assert_eq!(cap, "run did not finish within 2.000 s of simulated time");
        let inst = Instance { tasks: vec![pinned("t", script(Vec::new()), 0, 0)], finish: vec![0], conds: 0 };
        assert_eq!(format!("{inst:?}"), "Instance { tasks: 1, finish: [0] }");
        let alive = SimError::TooManyTasks { at: 2_500_000, limit: Limits::PID_MAX, alive: true }.to_string();
        assert_eq!(
            alive,
            "fork failed at 0.002500 s: 32768 tasks alive, the kernel's default pid_max (does a loop fork children \
             that never exit?)"
        );
        let queued = SimError::TooManyMessages { at: 1_677_740_000, limit: Limits::MAX_UNREAD }.to_string();
        assert_eq!(
            queued,
            "16777216 messages queued unread at 1.677740 s: tasks send faster than their peers read (does a loop \
             send without waiting?)"
        );
        let created = SimError::TooManyTasks { at: 40_000_000_000, limit: Limits::MAX_TASKS, alive: false }.to_string();
        assert_eq!(
            created,
            "fork at 40.000000 s would create task 1048577, past the 1048576 one run may create (an exited task \
             keeps its slot; does a loop fork without end?)"
        );
    }

    /// A task on CPU 0 that forks `k` children running `child`, then exits
    /// (which ends the run), under task limits of `max_tasks` created and
    /// `pid_max` alive. Returns the number of tasks the run created.
    fn forks(k: usize, child: fn() -> Box<dyn Program>, max_tasks: usize, pid_max: usize) -> Result<usize, SimError> {
        let spec = || ForkSpec { name: "child".into(), program: child(), params: None, ws_kb: 0 };
        let parent = script((0..k).map(|_| Action::Fork(Box::new(spec()))).collect());
        let inst = Instance { tasks: vec![pinned("parent", parent, 0, 0)], finish: vec![0], conds: 0 };
        let limits = Limits { max_tasks, pid_max, ..limits(None, 1_000) };
        q6600_run(inst, limits, |_| {}).map(|o| o.tasks.len())
    }

    /// The task limits refuse the fork that would pass them, with an
    /// error naming the limit, and nothing short of them. Children that
    /// exit at once still count against `max_tasks` (a slot is never
    /// reused): the parent and 9 children fit in 10, a 10th child does
    /// not, however few are alive. Children that wait forever count
    /// against `pid_max`: the parent and 9 of them are 10 alive.
    #[test]
    fn a_fork_past_the_task_limits_stops_the_run() {
        let exits = || script(Vec::new());
        assert_eq!(forks(9, exits, 10, 1_000).unwrap(), 10);
        match forks(10, exits, 10, 1_000) {
            Err(SimError::TooManyTasks { limit: 10, alive: false, at }) => assert!(at > 0),
            other => panic!("{other:?}"),
        }
        // An exited child no longer counts as alive: each runs first (the
        // child-runs-first rule) and exits before the parent forks again,
        // so 20 fit under a pid_max of 2.
        assert_eq!(forks(20, exits, 1_000, 2).unwrap(), 21);
        let waits = || script(vec![Action::Wait { all: true }]);
        assert_eq!(forks(9, waits, 1_000, 10).unwrap(), 10);
        match forks(10, waits, 1_000, 10) {
            Err(SimError::TooManyTasks { limit: 10, alive: true, at }) => assert!(at > 0),
            other => panic!("{other:?}"),
        }
        // An instance that starts with more tasks than pid_max allows is
        // refused at time 0.
        let tasks = (0..3).map(|i| pinned("t", script(Vec::new()), i, 0)).collect();
        let limits = Limits { pid_max: 2, ..limits(None, 100) };
        match q6600_run(Instance { tasks, finish: Vec::new(), conds: 0 }, limits, |_| {}) {
            Err(SimError::TooManyTasks { at: 0, limit: 2, alive: true }) => {}
            other => panic!("{:?}", other.map(|o| o.tasks.len())),
        }
    }

    /// The signaller's CPU time when it signals a condition after 1 ms on
    /// CPU 0, with or without a waiter blocked on it on CPU 2.
    fn signaller_runtime(with_waiter: bool) -> u64 {
        let signaller = script(vec![Action::Run(1_000_000), Action::CondSignal { cond: 0, all: false }]);
        let mut tasks = vec![pinned("signaller", signaller, 0, 0)];
        if with_waiter {
            // Allowed on CPUs 0 and 2, started on 2: the waking CPU is in
            // its mask, so its wakeup reads the two loads.
            let params = TaskParams::normal().allowed(CpuMask::from_cpus([0, 2]));
            let program = script(vec![Action::CondWait(0)]);
            tasks.push(TaskSpec { name: "waiter".into(), program, params, cpu: 2, ws_kb: 0 });
        }
        let finish = (0..tasks.len()).collect();
        let out = q6600_run(Instance { tasks, finish, conds: 1 }, limits(None, 100), |_| {}).unwrap();
        out.tasks[0].runtime_ns
    }

    /// Signalling a waiter costs the signaller a wakeup across the dies
    /// (500 + 700 + 8 x 125 = 2,200 ns) and the two runqueue reads cfs-core
    /// reports for wake_affine (`Event::Scan`, 2 x 100 ns; wake_affine
    /// declines: the signaller's 1024 on CPU 0 against an empty CPU 2, not
    /// sync); a signal nobody waits for is only counted.
    #[test]
    fn a_condition_signal_charges_the_wakeup_to_the_signaller() {
        let c = CostModel::preset("q6600").unwrap();
        let extra = c.wake_cost(Reach::Package) + 2.0 * c.scan_ns_per_cpu;
        assert_eq!(signaller_runtime(true) - signaller_runtime(false), round_u64(extra));
    }

    /// Runs `tasks` (the last one finishes the run) under a `max_unread`
    /// of 3 messages.
    fn with_three_unread(tasks: Vec<TaskSpec>) -> Result<RunOutcome, SimError> {
        let finish = vec![tasks.len() - 1];
        let limits = Limits { max_unread: 3, ..limits(None, 1_000) };
        q6600_run(Instance { tasks, finish, conds: 0 }, limits, |_| {})
    }

    /// `max_unread` bounds the messages queued over all tasks: a fourth
    /// message to a task that never reads stops the run, three do not; a
    /// message counts until it is read, or until its receiver exits; a
    /// send to an exited task queues nothing.
    #[test]
    fn unread_messages_stop_the_run_past_max_unread() {
        let send = |to| Action::Send { to, sync: false, bytes: 64, tag: 0 };
        let hog = || script(vec![Action::Run(100_000_000)]);
        let sender = |n: usize| script((0..n).map(|_| send(0)).collect());
        assert!(with_three_unread(vec![pinned("hog", hog(), 0, 0), pinned("s", sender(3), 1, 0)]).is_ok());
        match with_three_unread(vec![pinned("hog", hog(), 0, 0), pinned("s", sender(4), 1, 0)]) {
            Err(SimError::TooManyMessages { limit: 3, at }) => assert!(at > 0),
            other => panic!("{:?}", other.map(|o| o.end_ns)),
        }
        // Three to a reader, then three more after it has read them: six
        // sent, never more than three unread.
        let batches = |to| {
            let mut ops: Vec<Action> = (0..3).map(|_| send(to)).collect();
            ops.push(Action::Sleep { ns: 1_000_000, interruptible: false });
            ops.extend((0..3).map(|_| send(to)));
            script(ops)
        };
        let reader = script(vec![Action::Wait { all: true }, Action::Wait { all: true }]);
        assert!(with_three_unread(vec![pinned("reader", reader, 0, 0), pinned("s", batches(0), 1, 0)]).is_ok());
        // Three to a task that exits unread at 0.1 ms, then three to another.
        let quits = script(vec![Action::Run(100_000)]);
        let mut ops: Vec<Action> = (0..3).map(|_| send(0)).collect();
        ops.push(Action::Sleep { ns: 1_000_000, interruptible: false });
        ops.extend((0..3).map(|_| send(1)));
        let tasks = vec![pinned("quits", quits, 0, 0), pinned("hog", hog(), 2, 0), pinned("s", script(ops), 1, 0)];
        assert!(with_three_unread(tasks).is_ok());
        // With three unread, a send to a task that has exited queues
        // nothing (EPIPE) and is no error.
        let quits = script(vec![Action::Run(100_000)]);
        let mut ops: Vec<Action> = (0..3).map(|_| send(1)).collect();
        ops.push(Action::Sleep { ns: 1_000_000, interruptible: false });
        ops.push(send(0));
        let tasks = vec![pinned("quits", quits, 0, 0), pinned("hog", hog(), 2, 0), pinned("s", script(ops), 1, 0)];
        assert!(with_three_unread(tasks).is_ok());
    }

    /// A waker that runs 50 ms on CPU 0, wakes a task asleep there since
    /// the start, and runs 1 ms more, with or without WAKEUP_PREEMPT.
    /// Returns both tasks' CPU time and the preemptions.
    fn waker_and_wakee(preempt: bool) -> (u64, u64, u64) {
        let waker = script(vec![
            Action::Run(50_000_000),
            Action::Send { to: 0, sync: false, bytes: 64, tag: 0 },
            Action::Run(1_000_000),
        ]);
        // The wakee is task 0, so it runs first and is asleep before the
        // waker starts.
        let wakee = script(vec![Action::Wait { all: true }, Action::Run(100_000)]);
        let tasks = vec![pinned("wakee", wakee, 0, 0), pinned("waker", waker, 0, 0)];
        let inst = Instance { tasks, finish: vec![0, 1], conds: 0 };
        // Without HRTICK: its timer would end the waker's long slice as
        // soon as the wakee is queued, a preemption in both variants.
        let edit = |s: &mut RunSetup<'_>| {
            s.config.features.set(cfs_core::Feature::WakeupPreempt, preempt).unwrap();
            s.config.features.set(cfs_core::Feature::Hrtick, false).unwrap();
        };
        let out = q6600_run(inst, limits(None, 100), edit).unwrap();
        (out.tasks[1].runtime_ns, out.tasks[0].runtime_ns, out.preemptions)
    }

    /// The waker pays for its wakeup even when the wakee preempts it: the
    /// wakeup is work inside the waker's system call, done before the
    /// return to user space where the preemption takes effect. The wakee
    /// is ~50 ms of vruntime behind the waker, past 2.6.26's 30 ms wakeup
    /// granularity (10 ms x (1 + log2 4)), so it preempts. With the
    /// preemption the waker's CPU time grows by exactly the one context
    /// switch it pays to come back (1.8 µs), and the wakee's is unchanged.
    #[test]
    fn a_preempted_waker_still_pays_for_its_wakeup() {
        let (waker_p, wakee_p, preemptions) = waker_and_wakee(true);
        let (waker, wakee, none) = waker_and_wakee(false);
        assert_eq!((preemptions, none), (1, 0));
        let ctx = round_u64(CostModel::preset("q6600").unwrap().ctx_switch_ns);
        assert_eq!(waker_p, waker + ctx);
        assert_eq!(wakee_p, wakee);
    }

    /// Two CPU hogs pinned to CPU 0 under 2.6.26 (sched_latency 20 ms x
    /// (1 + log2 4) = 60 ms, so each of the two gets a 30 ms slice). Returns
    /// when the second first runs, i.e. when the first lost the CPU.
    fn first_slice_end(hrtick: bool) -> u64 {
        use std::cell::Cell;
        use std::rc::Rc;
        let started = Rc::new(Cell::new(None));
        let hog = |seen: Option<Rc<Cell<Option<u64>>>>| {
            FnProgram(move |cx: &mut StepCx<'_>| {
                if let Some(seen) = &seen
                    && seen.get().is_none()
                {
                    seen.set(Some(cx.now));
                }
                Action::Run(1_000_000)
            })
        };
        let tasks =
            vec![pinned("a", Box::new(hog(None)), 0, 0), pinned("b", Box::new(hog(Some(started.clone()))), 0, 0)];
        let inst = Instance { tasks, finish: Vec::new(), conds: 0 };
        q6600_run(inst, limits(Some(50), 1_000), |s| s.config.features.set(cfs_core::Feature::Hrtick, hrtick).unwrap())
            .unwrap();
        started.get().unwrap()
    }

    /// With HRTICK the first hog is preempted when its 30 ms slice is used
    /// up (hrtick_start_fair arms the timer for the rest of the slice, and
    /// the hrtick's entity_tick reschedules at once); without it, at the
    /// first tick after that, 32 ms (HZ=250). The second starts after the
    /// switch (1.8 us; the tick's own scheduler work is the first's).
    #[test]
    fn hrtick_ends_a_slice_on_time_and_the_tick_late() {
        let ctx = round_u64(CostModel::preset("q6600").unwrap().ctx_switch_ns);
        assert_eq!(first_slice_end(true), 30_000_000 + ctx);
        assert_eq!(first_slice_end(false), 32_000_000 + ctx);
    }

    /// A timer that ends a sleep disarms it: a task that sleeps 1 ms and
    /// then waits for a message nobody sends is a stall at the next tick.
    #[test]
    fn a_finished_sleep_leaves_no_timer_armed() {
        let p = script(vec![Action::Sleep { ns: 1_000_000, interruptible: false }, Action::Wait { all: true }]);
        let inst = Instance { tasks: vec![pinned("s", p, 0, 0)], finish: vec![0], conds: 0 };
        match q6600_run(inst, limits(None, 100), |_| {}) {
            Err(SimError::Stalled { at, writers }) => assert_eq!((at, writers), (4_000_000, 0)),
            other => panic!("{:?}", other.map(|o| o.end_ns)),
        }
    }

    /// Without tasks whose exit ends the run, the run ends when every task
    /// has exited (at the first tick that finds nothing to do), without an
    /// error; a task spec's CPU beyond the host starts on its last CPU.
    #[test]
    fn a_run_of_exited_tasks_ends_cleanly_and_specs_clamp_their_cpu() {
        let p = script(vec![Action::Run(1_000_000)]);
        let spec = TaskSpec { name: "t".into(), program: p, params: TaskParams::normal(), cpu: 99, ws_kb: 0 };
        let out =
            q6600_run(Instance { tasks: vec![spec], finish: Vec::new(), conds: 0 }, limits(None, 100), |_| {}).unwrap();
        assert_eq!(out.end_ns, 4_000_000);
        assert!(
            out.cpu_busy_ns[3] >= 1_000_000 && out.cpu_busy_ns[..3].iter().all(|&b| b == 0),
            "{:?}",
            out.cpu_busy_ns
        );
        assert!(out.events >= out.switches && out.switches >= 2, "{} {}", out.events, out.switches);
    }

    /// The simulated-time cap is inclusive: a run whose last event falls
    /// exactly on it finishes.
    #[test]
    fn a_run_may_use_all_of_its_cap() {
        let inst = Instance { tasks: vec![pinned("h", hog(), 0, 0)], finish: Vec::new(), conds: 0 };
        assert_eq!(q6600_run(inst, limits(Some(8), 8), |_| {}).unwrap().end_ns, 8_000_000);
    }

    /// How work lands on a CPU: an idle CPU absorbs a charge; a charge to a
    /// segment in flight lengthens it (and supersedes its end event); one
    /// between segments waits as debt for the next. Every new or cut
    /// segment takes a new epoch, so a superseded end event is ignored.
    #[test]
    fn charges_lengthen_the_segment_in_flight_or_wait_as_debt() {
        let host = Host::preset("q6600").unwrap();
        let costs = CostModel::preset("q6600").unwrap();
        let mut sim = q6600_sim(&host, &costs);
        assert!(sim.cpus[3].curr.is_none());
        sim.charge(3, 500);
        assert_eq!(sim.cpus[3].debt, 0);
        let seg = sim.cpus[0].seg.expect("the booted task runs");
        let g = sim.cpus[0].epoch;
        sim.charge(0, 500);
        assert_eq!(sim.cpus[0].seg.unwrap().len, seg.len + 500);
        assert!(sim.cpus[0].epoch > g);
        // Cut the segment 100 ns in: the rest is the task's pending work.
        let g = sim.cpus[0].epoch;
        sim.now = seg.start + 100;
        sim.interrupt_segment(0);
        assert!(sim.cpus[0].seg.is_none() && sim.cpus[0].epoch > g);
        assert_eq!(sim.tasks[0].pending, seg.len + 500 - 100);
        sim.charge(0, 700);
        assert_eq!(sim.cpus[0].debt, 700);
        let g = sim.cpus[0].epoch;
        sim.start_segment(0, 0);
        assert_eq!(sim.cpus[0].seg.unwrap().len, seg.len + 500 - 100 + 700);
        assert_eq!((sim.cpus[0].debt, sim.tasks[0].pending), (0, 0));
        assert!(sim.cpus[0].epoch > g);
        // Debt is paid before the task goes on, even with no work of its
        // own pending: a task about to resume from its system call first
        // runs a segment of the 300 ns its CPU owes.
        sim.now += sim.cpus[0].seg.unwrap().len;
        sim.interrupt_segment(0);
        assert_eq!(sim.tasks[0].pending, 0);
        sim.charge(0, 300);
        sim.tasks[0].deferred = Some(Deferred::Resume);
        sim.run_task(0).unwrap();
        assert_eq!(sim.cpus[0].seg.unwrap().len, 300);
        assert_eq!(sim.tasks[0].deferred, Some(Deferred::Resume));
    }

    /// Switch counting in the same-CPU ping-pong: two switches a round,
    /// none of them a preemption (wakeup granularity is far above the
    /// 10 us the wakee is behind).
    #[test]
    fn blocking_switches_are_not_preemptions() {
        let out = ping_pong_run(0, 0, 20);
        assert_eq!(out.preemptions, 0);
        assert!((40..=42).contains(&out.switches), "{}", out.switches);
    }

    /// Two hogs sharing CPU 0 for 100 ms under 2.6.26 take turns every
    /// 30 ms slice (HRTICK on): preempted at 30, 60 and 90 ms.
    #[test]
    fn hogs_sharing_a_cpu_are_preempted_once_a_slice() {
        let tasks = vec![pinned("a", hog(), 0, 0), pinned("b", hog(), 0, 0)];
        let out =
            q6600_run(Instance { tasks, finish: Vec::new(), conds: 0 }, limits(Some(100), 1_000), |_| {}).unwrap();
        assert_eq!(out.preemptions, 3);
    }

    /// With NO_HZ an idle CPU stops its tick when it goes idle, except the
    /// one that takes the idle load balancer's role; without it every CPU
    /// ticks.
    #[test]
    fn tickless_idle_cpus_stop_their_ticks() {
        let host = Host::preset("q6600").unwrap();
        let costs = CostModel::preset("q6600").unwrap();
        let stopped = |nohz: bool| {
            let mut s = setup(&host, &costs, limits(Some(20), 1_000));
            s.config.nohz = nohz;
            let inst = Instance { tasks: vec![pinned("h", hog(), 0, 0)], finish: Vec::new(), conds: 0 };
            let mut sim = Sim::new(&s, inst).unwrap();
            sim.main_loop().unwrap();
            (0..4).filter(|&c| sim.sched.tick_stopped(c)).count()
        };
        assert_eq!(stopped(false), 0);
        assert_eq!(stopped(true), 2);
    }

    /// CPU time of a task on CPU 0 that reads 10 lines of each of `peers`
    /// and exits, beside a task on CPU 2 that runs 1 ms (task 1) and one
    /// that has exited by then (task 2).
    fn toucher_runtime(peers: &[TaskRef]) -> u64 {
        let peers: std::sync::Arc<[TaskRef]> = peers.into();
        let toucher = script(vec![Action::Run(100_000), Action::Touch { peers, lines: 10.0 }]);
        let tasks = vec![
            pinned("toucher", toucher, 0, 0),
            pinned("busy", script(vec![Action::Run(1_000_000)]), 2, 0),
            pinned("gone", script(Vec::new()), 3, 0),
        ];
        run_to_exit(tasks, Sockets::default()).tasks[0].runtime_ns
    }

    /// Reading a live peer's lines costs a dirty line each from where it
    /// runs (across the dies: 10 x 125 ns); the task's own lines and an
    /// exited peer's cost nothing.
    #[test]
    fn touching_shared_lines_costs_by_where_each_peer_ran() {
        let c = CostModel::preset("q6600").unwrap();
        let base = toucher_runtime(&[]);
        assert_eq!(toucher_runtime(&[0, 2]), base);
        assert_eq!(toucher_runtime(&[0, 1, 2]) - base, round_u64(10.0 * c.dirty_line_ns[Reach::Package as usize]));
    }

    #[test]
    fn a_run_that_never_finishes_hits_the_cap() {
        let host = Host::preset("x2").unwrap();
        let costs = CostModel::preset("x2").unwrap();
        let limits = Limits::new(None, 0, 50_000_000);
        let hog = FnProgram(|_cx: &mut StepCx<'_>| Action::Run(1_000_000));
        let inst = Instance {
            tasks: vec![TaskSpec {
                name: "h".into(),
                program: Box::new(hog),
                params: TaskParams::normal(),
                cpu: 0,
                ws_kb: 0,
            }],
            finish: vec![0],
            conds: 0,
        };
        assert!(matches!(run(&setup(&host, &costs, limits), inst), Err(SimError::TimeLimit { .. })));
    }

    /// One call that wakes several tasks preempts its caller once, after
    /// the last wakeup; three calls that wake one each can preempt it
    /// three times. Three sleepers and a waker share CPU 0 (2.6.26 on the
    /// Q6600: wakeup granularity 10 ms × f = 3, sched_latency 20 ms × 3).
    /// The waker runs 100 ms alone first. A woken sleeper keeps its own
    /// vruntime (under 1 ms: it only ran up to its wait) unless that is
    /// below min_vruntime − sched_latency (60 ms), which is at most 101 −
    /// 60 = 41 ms; so each is at least 60 ms behind the waker, more than
    /// the 30 ms granularity, and every wakeup would preempt it. With
    /// SendAll all three get their message and the waker is preempted
    /// once; with three Sends it is preempted after each and resumes
    /// between them (each sleeper runs 100 µs, then exits).
    #[test]
    fn send_all_wakes_everyone_before_the_caller_is_preempted() {
        let run = |all: bool| {
            // The waker sleeps first, so the sleepers block before it runs.
            let nap = Action::Sleep { ns: 1_000_000, interruptible: false };
            let mut sends: Vec<Action> = vec![nap, Action::Run(100_000_000)];
            if all {
                sends.push(Action::SendAll { to: vec![1, 2, 3].into(), sync: false, bytes: 1, tag: 7 });
            } else {
                sends.extend((1..=3).map(|to| Action::Send { to, sync: false, bytes: 1, tag: 7 }));
            }
            sends.push(Action::Run(1_000_000));
            let sleeper = || script(vec![Action::Wait { all: true }, Action::Run(100_000), Action::Progress(1)]);
            let mut tasks = vec![pinned("waker", script(sends), 0, 0)];
            tasks.extend((1..=3).map(|i| pinned(&format!("s{i}"), sleeper(), 0, 0)));
            let inst = Instance { tasks, finish: vec![0, 1, 2, 3], conds: 0 };
            let out = q6600_run(inst, limits(None, 1_000), |_| {}).unwrap();
            assert_eq!(out.units, 3, "every sleeper got its message");
            out.preemptions
        };
        assert_eq!(run(true), 1);
        assert_eq!(run(false), 3);
    }

    /// The caller of a SendAll pays one system call plus every wakeup:
    /// with three sleepers pinned to CPU 1 (the other core of CPU 0's L2
    /// on the Q6600), waking all three costs the waker on CPU 0 two more
    /// wakeups than waking one, 2 × (0.5 µs local + 0.7 µs IPI send + 8
    /// runqueue lines × 15 ns) = 2,640 ns (pinned to CPU 1, the sleepers
    /// are placed without wake_affine's load reads); and three
    /// Sends cost two more system calls (100 ns each) than one SendAll.
    /// Nothing else on CPU 0 differs (no jitter, and the sleepers never run
    /// there).
    #[test]
    fn send_all_charges_one_call_and_every_wakeup() {
        let waker_ns = |sends: Vec<Action>| {
            let mut actions = vec![Action::Sleep { ns: 1_000_000, interruptible: false }, Action::Run(1_000_000)];
            actions.extend(sends);
            actions.push(Action::Run(1_000_000));
            let sleeper = || script(vec![Action::Wait { all: true }, Action::Progress(1)]);
            let mut tasks = vec![pinned("waker", script(actions), 0, 0)];
            tasks.extend((1..=3).map(|i| pinned(&format!("s{i}"), sleeper(), 1, 0)));
            let inst = Instance { tasks, finish: vec![0], conds: 0 };
            let out = q6600_run(inst, limits(None, 1_000), |_| {}).unwrap();
            out.tasks[0].runtime_ns
        };
        let all = |to: Vec<TaskRef>| vec![Action::SendAll { to: to.into(), sync: false, bytes: 1, tag: 7 }];
        let one = |to| Action::Send { to, sync: false, bytes: 1, tag: 7 };
        let c = CostModel::preset("q6600").unwrap();
        let wake = round_u64(c.wake_cost(Reach::SharedCache));
        assert_eq!(wake, 1_320);
        let three = waker_ns(all(vec![1, 2, 3]));
        assert_eq!(three - waker_ns(all(vec![1])), 2 * wake);
        assert_eq!(waker_ns((1..=3).map(one).collect()) - three, 2 * 100);
    }

    /// hackbench reads its clock once its children are ready: progress
    /// before `StartMeasuring` is dropped, and the window runs from it to
    /// the end. A task pinned to CPU 1 counts 5 units at 1 ms, then 3 more
    /// after `StartMeasuring` at 2 ms and another 1 ms of work (no jitter,
    /// clock factor 1.0: each `Run` takes its 1 ms plus only what the CPU
    /// charges around it). The run's window is then end − 2 ms, and a
    /// setting written at 1.5 ms cuts it into a phase wholly before the
    /// start, which counts nothing, and one from the start, with all 3.
    #[test]
    fn start_measuring_restarts_the_window() {
        let task = script(vec![
            Action::Run(1_000_000),
            Action::Progress(5),
            Action::Run(1_000_000),
            Action::StartMeasuring,
            Action::Run(1_000_000),
            Action::Progress(3),
        ]);
        let inst = Instance { tasks: vec![pinned("t", task, 1, 0)], finish: vec![0], conds: 0 };
        let change = Change { at_ns: 1_500_000, setting: Setting::Features("895".into()) };
        let out = q6600_run(inst, limits(None, 100), |s| s.changes = vec![change]).unwrap();
        assert_eq!(out.units, 3);
        let start = out.end_ns - out.window_ns;
        assert!((2_000_000..2_050_000).contains(&start), "window from {start} ns");
        assert!((1_000_000..1_050_000).contains(&out.window_ns), "{} ns", out.window_ns);
        assert_eq!(out.phases.len(), 2, "{:?}", out.phases);
        assert_eq!((out.phases[0].start_ns, out.phases[0].end_ns, out.phases[0].units), (1_500_000, 1_500_000, 0));
        assert_eq!((out.phases[1].start_ns, out.phases[1].end_ns, out.phases[1].units), (start, out.end_ns, 3));
    }

    #[test]
    fn a_hog_keeps_its_cpu_busy() {
        let host = Host::preset("x2").unwrap();
        let costs = CostModel::preset("x2").unwrap();
        let limits = Limits::new(Some(100_000_000), 0, 1_000_000_000);
        let mut k = 0u64;
        let hog = FnProgram(move |_cx: &mut StepCx<'_>| {
            k += 1;
            if k % 2 == 1 { Action::Run(1_000_000) } else { Action::Progress(1) }
        });
        let inst = Instance {
            tasks: vec![TaskSpec {
                name: "h".into(),
                program: Box::new(hog),
                params: TaskParams::normal(),
                cpu: 1,
                ws_kb: 0,
            }],
            finish: vec![],
            conds: 0,
        };
        let out = run(&setup(&host, &costs, limits), inst).unwrap();
        assert!(out.cpu_busy_ns[1] > 99_000_000, "{:?}", out.cpu_busy_ns);
        // 1 ms of baseline work at the X2's clock factor 1.06, with jitter.
        assert!((85..=100).contains(&out.units), "{}", out.units);
    }

    /// The wasted-cores gap: while a second task shares CPU 0 with a hog
    /// (both pinned there) the Q6600's other three CPUs are idle. A task
    /// that wakes at 5 ms and runs 1 ms preempts the hog at once (wakeup
    /// preemption), so the gap closes when it exits, ~1 ms later; one that
    /// keeps running leaves the gap open to the end of the 25 ms run, and
    /// the measure follows it at every event inside it. (b is listed first
    /// so that it runs into its sleep before the hog takes the CPU.)
    #[test]
    fn the_idle_gap_probe_measures_from_its_start() {
        let gap = |second: Box<dyn Program>| {
            let tasks = vec![pinned("b", second, 0, 0), pinned("hog", hog(), 0, 0)];
            let watch = |s: &mut RunSetup<'_>| s.instruments = Instruments { watch: true, ..Instruments::default() };
            let inst = Instance { tasks, finish: Vec::new(), conds: 0 };
            q6600_run(inst, limits(Some(25), 1_000), watch).unwrap().probe.worst_idle_gap_ns
        };
        let sleep = || Action::Sleep { ns: 5_000_000, interruptible: false };
        let short = gap(script(vec![sleep(), Action::Run(1_000_000)]));
        assert!((1_000_000..1_100_000).contains(&short), "{short}");
        let long = gap(script(vec![sleep(), Action::Run(100_000_000)]));
        // The last event inside it is the tick at 24 ms: 24 - 5 ms, less
        // the few µs b took to wake and be queued.
        assert!((18_990_000..19_000_000).contains(&long), "{long}");
    }

    /// The 1:N measure: a waker on CPU 0 wakes ten wakees in turn (100 µs
    /// of work per wakeup, sync hint, 50 µs per wakee run), for 200 ms.
    /// With every wakee pinned to CPU 0 the windows are serialised for most
    /// of the run (from 20 ms on: until then the wakees, queued behind the
    /// waker's first slice, have not yet run into their first wait, so its
    /// sends find them queued and wake no one), and the measure sees one
    /// wakee run per wakeup. With one
    /// wakee of ten on CPU 1, 90% of their runs are on the waker's CPU,
    /// short of the 95% a window needs: no streak at all.
    #[test]
    fn the_one_to_n_probe_needs_95_percent_on_the_wakers_cpu() {
        let streak = |wakee_cpu: fn(usize) -> usize| {
            let mut k = 0usize;
            let mut ran = false;
            let waker = FnProgram(move |_cx: &mut StepCx<'_>| {
                ran = !ran;
                if ran {
                    return Action::Run(100_000);
                }
                k += 1;
                Action::Send { to: k % 10 + 1, sync: true, bytes: 64, tag: 0 }
            });
            let mut tasks = vec![pinned("waker", Box::new(waker), 0, 0)];
            for i in 0..10 {
                let mut waiting = false;
                let wakee = FnProgram(move |_cx: &mut StepCx<'_>| {
                    waiting = !waiting;
                    if waiting { Action::Wait { all: true } } else { Action::Run(50_000) }
                });
                tasks.push(pinned(&format!("w{i}"), Box::new(wakee), wakee_cpu(i), 0));
            }
            let watch = |s: &mut RunSetup<'_>| {
                s.instruments = Instruments { one_to_n_waker: Some("waker".into()), ..Instruments::default() }
            };
            let out = q6600_run(Instance { tasks, finish: Vec::new(), conds: 0 }, limits(Some(200), 1_000), watch);
            let out = out.unwrap();
            (out.probe.one_to_n_streak_ns, out.probe.one_to_n_wakees as u64, out.counters.wakeups)
        };
        let (serial, runs, wakeups) = streak(|_| 0);
        assert!(serial >= 150_000_000, "{serial}");
        assert!(wakeups > 900 && (wakeups - 1..=wakeups).contains(&runs), "{runs} runs, {wakeups} wakeups");
        assert_eq!(streak(|i| usize::from(i == 9)).0, 0);
    }
}
