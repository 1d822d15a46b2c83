//! The built-in workloads, each a set of task programs over the
//! [`crate::program`] vocabulary, and what they measure.
//!
//! Every CPU time below is at the 2.4 GHz Core 2 baseline (the engine
//! scales it by the host's clock factor); each constant says where it comes
//! from, mostly hosts-and-costs.md §3-§4.
//!
//! - [`pgbench`]: `pgbench -S`, one client process multiplexing N
//!   connections to N PostgreSQL backends (sync wakeups both ways).
//! - [`pairs`]: `tbench` and `sysbench-oltp`, N independent 1:1
//!   client/server ping-pong pairs (tbench over loopback TCP, whose
//!   receive softirq wakes a blocked reader without the sync hint;
//!   sysbench over a unix socket, sync).
//! - [`fanout`]: `messaging` (hackbench groups) and `volanomark` (chat
//!   rooms where one message wakes 19 tasks).
//! - [`simple`]: `hogs` (CPU-bound tasks at nice levels) and `starve`
//!   (starve.c's signal storm on one CPU).
//!
//! What they share lives here: how their initial tasks are made
//! ([`parent_task`], [`StartCpus::task`]), the driver that forks N workers
//! ([`Launcher`]) and the daemon that forks a server per connection
//! ([`Listener`]). Most task programs are [`crate::program::Planner`]s run
//! through [`crate::program::Queued`].

pub mod fanout;
pub mod pairs;
pub mod pgbench;
pub mod simple;

use crate::engine::{Instance, Limits, SyncObjects};
pub use crate::program::Side;
use crate::program::{Action, ForkSpec, Planner, Program, StepCx, TaskRef, TaskSpec};
use crate::workfile::FileWorkload;
use cfs_core::{CpuMask, Policy, TaskParams};
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

/// Message tags shared by the built-ins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Tag {
    /// A connection request (to a listener).
    Connect = 1,
    /// A connection is ready (from the forked server).
    Ready,
    /// A request.
    Query,
    /// Its answer.
    Reply,
    /// Close the connection.
    Terminate,
    /// A worker finished (to its parent).
    Done,
    /// A signal.
    Signal,
    /// Chat data.
    Data,
    /// An acknowledgement.
    Ack,
    /// A worker is connected and waits at its driver's start barrier (to
    /// the driver).
    Started,
    /// The driver lifts its start barrier (to each worker).
    Go,
}

/// Rounds baseline ns to the integer the vocabulary takes.
pub fn ns(x: f64) -> u64 {
    crate::dist::round_u64(x.max(0.0))
}

/// A scheduling policy by name (`normal` or `SCHED_OTHER`, `batch`,
/// `idle`, any case). The error says why another name is refused: a
/// real-time policy is named as one, since only the fair class is
/// modelled.
pub fn policy_by_name(name: &str) -> Result<Policy, String> {
    const FAIR: &str = "normal, batch, idle; SCHED_OTHER, SCHED_BATCH, SCHED_IDLE";
    const REALTIME: [&str; 6] = ["SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE", "fifo", "rr", "deadline"];
    Policy::by_name(name).ok_or_else(|| {
        if REALTIME.iter().any(|r| r.eq_ignore_ascii_case(name)) {
            format!("{name} is not a fair-class policy, and only the fair class is modelled (use {FAIR})")
        } else {
            format!("unknown policy {name:?} (known: {FAIR})")
        }
    })
}

/// Scheduling policies forced on a workload's tasks, as `chrt` would set
/// them: on every task, or on one side only, and a side's nice level, as
/// `nice -n` would. A side's policy overrides the every-task one there;
/// what a task forks inherits its policy and nice level (so `server:
/// batch` is the postmaster started under `chrt -b`, backends included,
/// `client: batch` is `chrt -b pgbench`, and `client_nice: -5` is `nice -n
/// -5 pgbench`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Policies {
    /// Every task (`--policy`).
    pub all: Option<Policy>,
    /// The client side (`--client-policy`).
    pub client: Option<Policy>,
    /// The server side (`--server-policy`).
    pub server: Option<Policy>,
    /// The client side's nice level (`--client-nice`), -20..=19.
    pub client_nice: Option<i32>,
    /// The server side's nice level (`--server-nice`), -20..=19.
    pub server_nice: Option<i32>,
    /// The user the client side (and a one-sided built-in) runs as
    /// (`--set client_uid=N`); [`CLIENT_UID`] when unset.
    pub client_uid: Option<u32>,
    /// The user the server side runs as (`--set server_uid=N`); the
    /// client's when unset.
    pub server_uid: Option<u32>,
}

impl Policies {
    /// The client side's policy, if forced.
    pub fn client(&self) -> Option<Policy> {
        self.client.or(self.all)
    }

    /// The server side's policy, if forced.
    pub fn server(&self) -> Option<Policy> {
        self.server.or(self.all)
    }

    /// The client side's user.
    pub fn client_uid(&self) -> u32 {
        self.client_uid.unwrap_or(CLIENT_UID)
    }

    /// The server side's user: the client's unless set.
    pub fn server_uid(&self) -> u32 {
        self.server_uid.unwrap_or(self.client_uid())
    }

    /// Whether a side is set on its own (only two-sided workloads take that).
    pub fn per_side(&self) -> bool {
        self.client.is_some() || self.server.is_some() || self.client_nice.is_some() || self.server_nice.is_some()
    }

    /// These settings, falling back to `base`'s where unset.
    pub fn or(self, base: Policies) -> Policies {
        Policies {
            all: self.all.or(base.all),
            client: self.client.or(base.client),
            server: self.server.or(base.server),
            client_nice: self.client_nice.or(base.client_nice),
            server_nice: self.server_nice.or(base.server_nice),
            client_uid: self.client_uid.or(base.client_uid),
            server_uid: self.server_uid.or(base.server_uid),
        }
    }
}

/// Options shared by the built-ins (from the command line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadOpts {
    /// Total transactions over all clients (`pgbench -t` × clients).
    pub transactions: Option<u64>,
    /// Simulated run time, ns.
    pub duration_ns: Option<u64>,
    /// Policies forced on the tasks (`--policy`, `--client-policy`,
    /// `--server-policy`).
    pub policies: Policies,
    /// Affinity of the client side (pgbench, the benchmark drivers).
    pub pin_client: Option<CpuMask>,
    /// Affinity of the server side (postmaster and backends, servers).
    pub pin_server: Option<CpuMask>,
    /// Nice levels, cycled over the tasks (hogs).
    pub nice: Vec<i32>,
    /// Messages per sender (messaging, volanomark).
    pub loops: Option<u32>,
    /// hackbench's `-pipe`: messaging over one pipe per receiver instead
    /// of a socketpair.
    pub pipe: bool,
}

/// The user a built-in's tasks run as unless `--set client_uid=` or
/// `server_uid=` says otherwise: both sides one user, as when the tester
/// starts the server and the benchmark from one account (or runs pgbench
/// as `postgres`). User ids matter only under group scheduling (`--set
/// group_sched=1`, cfs_core::Config::group_sched), which gives each user a
/// task group.
pub const CLIENT_UID: u32 = 1000;

impl WorkloadOpts {
    /// Task parameters with this policy and an optional pin.
    pub fn params(&self, pin: Option<CpuMask>) -> TaskParams {
        Self::with(self.policies.all, None, pin, self.policies.client_uid())
    }

    fn with(policy: Option<Policy>, nice: Option<i32>, pin: Option<CpuMask>, uid: u32) -> TaskParams {
        let mut p = TaskParams::normal().uid(uid);
        if let Some(pol) = policy {
            p = p.policy(pol);
        }
        if let Some(n) = nice {
            p = p.nice(n);
        }
        if let Some(m) = pin {
            p = p.allowed(m);
        }
        p
    }

    /// Task parameters of the client side (`--pin-client`,
    /// `--client-policy`, `--client-nice`).
    pub fn client_params(&self) -> TaskParams {
        Self::with(self.policies.client(), self.policies.client_nice, self.pin_client, self.policies.client_uid())
    }

    /// Task parameters of the server side (`--pin-backends`,
    /// `--server-policy`, `--server-nice`).
    pub fn server_params(&self) -> TaskParams {
        Self::with(self.policies.server(), self.policies.server_nice, self.pin_server, self.policies.server_uid())
    }
}

/// Where the long-lived processes of a run start: a daemon (postmaster,
/// tbench_srv, mysqld) has been sleeping on whatever CPU it last ran on, and
/// the benchmark driver starts on its shell's CPU. Neither is known, so
/// both are drawn from the run's seed, uniformly over the allowed CPUs of
/// the host (a pin restricts the draw).
#[derive(Clone, Copy, Debug)]
pub struct StartCpus {
    /// CPU of the server-side daemon.
    pub server: usize,
    /// CPU of the benchmark driver.
    pub client: usize,
}

impl StartCpus {
    /// Draws both from `seed` (a stream separate from the run's).
    pub fn draw(seed: u64, nr_cpus: usize, opts: &WorkloadOpts) -> StartCpus {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0x5eed_c0de_5eed_c0de);
        let mut pick = |pin: Option<CpuMask>| {
            let allowed: Vec<usize> = match pin {
                Some(m) => m.iter().filter(|&c| c < nr_cpus).collect(),
                None => (0..nr_cpus).collect(),
            };
            if allowed.is_empty() { 0 } else { allowed[rng.random_range(0..allowed.len())] }
        };
        let server = pick(opts.pin_server);
        let client = pick(opts.pin_client);
        StartCpus { server, client }
    }

    /// The long-lived process of `side` as an initial task: that side's
    /// parameters (its pin and the policy), created on the CPU drawn for it.
    pub fn task(
        &self,
        side: Side,
        name: &str,
        opts: &WorkloadOpts,
        ws_kb: u32,
        program: impl Program + 'static,
    ) -> TaskSpec {
        let (params, cpu) = match side {
            Side::Server => (opts.server_params(), self.server),
            Side::Client => (opts.client_params(), self.client),
        };
        TaskSpec { side: Some(side), ..initial_task(name, params, cpu, ws_kb, program) }
    }
}

/// The single initial task of a workload that forks all the others
/// (hackbench's and VolanoMark's parent, the hogs launcher, starve's
/// parent): a small process (16 KB working set) created on the first CPU
/// `params` allows, CPU 0 when they allow any.
pub fn parent_task(name: &str, params: TaskParams, program: impl Program + 'static) -> TaskSpec {
    initial_task(name, params, params.allowed.first().unwrap_or(0), 16, program)
}

/// A task present at the start of the run, created on `cpu`.
fn initial_task(name: &str, params: TaskParams, cpu: usize, ws_kb: u32, program: impl Program + 'static) -> TaskSpec {
    TaskSpec { name: name.into(), program: Box::new(program), params, cpu, ws_kb, side: None }
}

/// A driver's own CPU time per worker it forks (the fork call and the loop
/// around it).
const LAUNCH_NS: f64 = 50_000.0;

/// When a [`Launcher`]'s workers may start their load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartGate {
    /// At once (the hogs launcher).
    Open,
    /// sysbench 0.4's `thread_start_mutex`: run_test locks it, creates
    /// every thread, then unlocks it, and each thread connects, then takes
    /// and drops it before its first request ([`START_MUTEX`]). The
    /// release is a chain: the unlock wakes one sleeper (glibc's futex
    /// wake of one), whose own unlock wakes the next, each from the CPU
    /// the previous one runs on; a thread still connecting at the release
    /// takes the mutex when it is connected.
    AfterForks,
    /// Once every worker has reported [`Tag::Started`] (it is connected):
    /// dbench's create_procs, which tbench runs, holds each child at a
    /// barrier semaphore after nb_setup (its connect) until all are there,
    /// then releases them at once (one semop that wakes every waiter, an
    /// [`Action::SendAll`]; a wait-for-zero semop queues its sleeper at
    /// the head of `sem_pending`, so the last child to arrive is woken
    /// first).
    /// dbench polls the count every 100 ms (every second before dbench 4);
    /// here the last worker's report ends the wait.
    AfterStarted,
}

/// The mutex a [`StartGate::AfterForks`] driver and its workers share
/// (sysbench's `thread_start_mutex`); the workload declares it
/// ([`SyncObjects::mutexes`]).
pub const START_MUTEX: usize = 0;

/// A driver's start barrier, counted where the driver sees it: the workers
/// it forked, how many of them have reported [`Tag::Started`], and the one
/// call that releases them all ([`Action::SendAll`] of a [`Tag::Go`]).
/// Used by the [`Launcher`] (dbench's barrier) and hackbench's parent.
#[derive(Debug, Default)]
pub(crate) struct StartBarrier {
    /// Every worker forked, in fork order.
    children: Vec<TaskRef>,
    /// `Started` reports taken so far.
    started: usize,
}

impl StartBarrier {
    /// Notes the child of the last fork and the `Started` reports among
    /// the messages `cx` brought.
    pub(crate) fn note(&mut self, cx: &StepCx<'_>) {
        self.children.extend(cx.forked);
        self.started += cx.received.iter().filter(|m| m.tag == Tag::Started as u32).count();
    }

    /// The workers forked so far, in fork order.
    pub(crate) fn children(&self) -> &[TaskRef] {
        &self.children
    }

    /// How many workers have reported `Started`.
    pub(crate) fn started(&self) -> usize {
        self.started
    }

    /// One call that wakes every worker with a `Go` of `bytes`.
    pub(crate) fn release_all(&self, sync: bool, bytes: u32) -> Action {
        Action::SendAll { to: self.children.as_slice().into(), sync, bytes, tag: Tag::Go as u32 }
    }
}

/// A benchmark driver that forks its workers one after another (the hogs
/// launcher; the tbench and sysbench parents): per worker, `LAUNCH_NS`
/// (50 µs) of work, then the fork of `worker(i)` for `i` = 0, 1, ...; then
/// it opens its [`StartGate`] and exits.
pub struct Launcher<F> {
    workers: u32,
    forked: u32,
    worker: F,
    gate: StartGate,
    barrier: StartBarrier,
}

impl<F: FnMut(u32) -> ForkSpec> Launcher<F> {
    /// A driver forking `workers` (at least one) workers built by `worker`,
    /// which start at once.
    pub fn new(workers: u32, worker: F) -> Launcher<F> {
        Launcher { workers: workers.max(1), forked: 0, worker, gate: StartGate::Open, barrier: StartBarrier::default() }
    }

    /// The same, with the workers held at `gate`.
    pub fn gated(workers: u32, gate: StartGate, worker: F) -> Launcher<F> {
        Launcher { gate, ..Launcher::new(workers, worker) }
    }
}

impl<F> fmt::Debug for Launcher<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launcher")
            .field("workers", &self.workers)
            .field("forked", &self.forked)
            .field("gate", &self.gate)
            .finish_non_exhaustive()
    }
}

impl<F: FnMut(u32) -> ForkSpec> Planner for Launcher<F> {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        self.barrier.note(cx);
        if self.forked == 0 && self.gate == StartGate::AfterForks {
            // pthread_mutex_lock(&thread_start_mutex) before the first
            // pthread_create.
            q.push_back(Action::Lock(START_MUTEX));
        }
        if self.forked < self.workers {
            let spec = (self.worker)(self.forked);
            self.forked += 1;
            q.push_back(Action::Run(ns(LAUNCH_NS)));
            q.push_back(Action::Fork(Box::new(spec)));
            return;
        }
        if self.gate == StartGate::AfterStarted && self.barrier.started() < self.workers as usize {
            q.push_back(Action::Wait { all: true });
            return;
        }
        match self.gate {
            StartGate::Open => {}
            // sysbench: the unlock wakes one waiter; each thread takes and
            // drops the mutex in turn, waking the next.
            StartGate::AfterForks => q.push_back(Action::Unlock(START_MUTEX)),
            // dbench: one semop wakes every waiter (ipc/sem.c's
            // update_queue, under the semaphore's lock), plainly.
            StartGate::AfterStarted => q.push_back(self.barrier.release_all(false, 0)),
        }
        q.push_back(Action::Exit);
    }
}

/// A daemon that accepts connections (tbench_srv, mysqld, the postmaster):
/// for each [`Tag::Connect`] it receives, `fork_ns` of work, then the fork
/// of `server(client)`, the server for the connecting task; then it waits
/// for more.
pub struct Listener<F> {
    fork_ns: f64,
    server: F,
}

impl<F: FnMut(TaskRef) -> ForkSpec> Listener<F> {
    /// A daemon paying `fork_ns` (baseline) per server it forks.
    pub fn new(fork_ns: f64, server: F) -> Listener<F> {
        Listener { fork_ns, server }
    }
}

impl<F> fmt::Debug for Listener<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener").field("fork_ns", &self.fork_ns).finish_non_exhaustive()
    }
}

impl<F: FnMut(TaskRef) -> ForkSpec> Planner for Listener<F> {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        for m in cx.received.iter().filter(|m| m.tag == Tag::Connect as u32) {
            q.push_back(Action::Run(ns(self.fork_ns)));
            q.push_back(Action::Fork(Box::new((self.server)(m.from))));
        }
        q.push_back(Action::Wait { all: true });
    }
}

/// What a workload's throughput is.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Column name (`tps`, `mb_s`, ...).
    pub name: String,
    /// Multiplier from progress units per second.
    pub scale: f64,
}

impl Metric {
    fn new(name: &str, scale: f64) -> Metric {
        Metric { name: name.into(), scale }
    }
}

/// A workload: a built-in or a file. The built-ins with costs of their
/// own carry them, so `--cost WORKLOAD.FIELD=VALUE` can replace one
/// ([`Workload::with_costs`], [`CostedWorkload`]).
#[derive(Clone, Debug)]
pub enum Workload {
    /// pgbench -S (hosts-and-costs.md §3).
    Pgbench(pgbench::PgbenchCosts),
    /// tbench over loopback (§3.3).
    Tbench(pairs::TbenchCosts),
    /// CPU-bound tasks with nice levels.
    Hogs,
    /// hackbench-style groups.
    Messaging(fanout::MessagingCosts),
    /// VolanoMark-style chat rooms (§4.2).
    Volanomark(fanout::VolanoCosts),
    /// starve.c (§4.1).
    Starve(simple::StarveCosts),
    /// sysbench OLTP read-only (§4.3).
    SysbenchOltp(pairs::SysbenchCosts),
    /// A workload file.
    File(Arc<FileWorkload>),
}

/// One of a built-in workload's own costs, as `--cost WORKLOAD.FIELD=VALUE`
/// writes it (`--cost tbench.side_ns=6000`): the field's name, where its
/// shipped value comes from, how to write it, its largest value, and
/// whether it holds a whole number. Each built-in lists every field of its
/// costs struct in declaration order.
#[derive(Debug)]
pub struct CostField<C> {
    /// The field's name.
    pub name: &'static str,
    /// Where its shipped value comes from, as `cfs-sim costs` shows it: a
    /// tag of hosts-and-costs.md (\[P\] published, \[R\] recalled, \[C\]
    /// from source code, \[D\] derived, \[E\] estimate) and the figure
    /// it rests on (§ = a section of that file). The field's doc on the
    /// costs struct gives the reasoning.
    pub source: &'static str,
    /// Writes it.
    pub set: fn(&mut C, f64),
    /// Its largest value.
    pub max: f64,
    /// Whether it takes whole numbers only (a count, bytes, KB).
    pub whole: bool,
}

impl<C> CostField<C> {
    /// A time in ns (at the 2.4 GHz baseline, like the host's CPU work),
    /// at most a second.
    pub(crate) const fn ns(name: &'static str, source: &'static str, set: fn(&mut C, f64)) -> CostField<C> {
        CostField { name, source, set, max: MAX_NS, whole: false }
    }

    /// A message size in bytes, at most 64 KB.
    pub(crate) const fn bytes(name: &'static str, source: &'static str, set: fn(&mut C, f64)) -> CostField<C> {
        CostField { name, source, set, max: MAX_MSG_BYTES, whole: true }
    }

    /// A working set in KB, at most 1 GB.
    pub(crate) const fn kb(name: &'static str, source: &'static str, set: fn(&mut C, f64)) -> CostField<C> {
        CostField { name, source, set, max: MAX_WS_KB, whole: true }
    }

    /// Any other number, from 0 to `max`.
    pub(crate) const fn number(
        name: &'static str,
        source: &'static str,
        set: fn(&mut C, f64),
        max: f64,
    ) -> CostField<C> {
        CostField { name, source, set, max, whole: false }
    }
}

/// The largest time a workload cost may take, ns: a second per step.
pub(crate) const MAX_NS: f64 = 1e9;
/// The largest message, bytes (a 64 KB query or reply).
pub(crate) const MAX_MSG_BYTES: f64 = 65_536.0;
/// The largest working set, KB (1 GB).
pub(crate) const MAX_WS_KB: f64 = 1_048_576.0;

/// The built-ins that have costs of their own, by the name `--cost` gives
/// them (`pgbench.`, `tbench.`, ...). `hogs` has none: its tasks only run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostedWorkload {
    /// [`pgbench::PgbenchCosts`].
    Pgbench,
    /// [`pairs::TbenchCosts`].
    Tbench,
    /// [`pairs::SysbenchCosts`].
    SysbenchOltp,
    /// [`fanout::MessagingCosts`].
    Messaging,
    /// [`fanout::VolanoCosts`].
    Volanomark,
    /// [`simple::StarveCosts`].
    Starve,
}

impl CostedWorkload {
    /// Every one, in the order `cfs-sim --help` lists them.
    pub const ALL: [CostedWorkload; 6] = [
        CostedWorkload::Pgbench,
        CostedWorkload::Tbench,
        CostedWorkload::Messaging,
        CostedWorkload::Volanomark,
        CostedWorkload::Starve,
        CostedWorkload::SysbenchOltp,
    ];

    /// Its command name, the prefix of its fields in `--cost`.
    pub fn name(self) -> &'static str {
        match self {
            CostedWorkload::Pgbench => "pgbench",
            CostedWorkload::Tbench => "tbench",
            CostedWorkload::SysbenchOltp => "sysbench-oltp",
            CostedWorkload::Messaging => "messaging",
            CostedWorkload::Volanomark => "volanomark",
            CostedWorkload::Starve => "starve",
        }
    }

    /// The one `--cost` names `name` (`tbench` in `tbench.side_ns`).
    pub fn by_name(name: &str) -> Option<CostedWorkload> {
        CostedWorkload::ALL.into_iter().find(|w| w.name() == name)
    }

    /// Where its shipped costs come from: the docs that derive them, with
    /// the source tags of hosts-and-costs.md (each struct's field docs
    /// carry the tags too).
    pub fn sources(self) -> &'static str {
        match self {
            CostedWorkload::Pgbench => "docs/CALIBRATION.md §3",
            CostedWorkload::Tbench => "TbenchCosts in workloads/pairs.rs; hosts-and-costs.md §3.3, §5.2",
            CostedWorkload::SysbenchOltp => "SysbenchCosts in workloads/pairs.rs; hosts-and-costs.md §4.3",
            CostedWorkload::Messaging => "MessagingCosts in workloads/fanout.rs",
            CostedWorkload::Volanomark => "VolanoCosts in workloads/fanout.rs; hosts-and-costs.md §4.2",
            CostedWorkload::Starve => "StarveCosts in workloads/simple.rs; hosts-and-costs.md §4.1",
        }
    }

    /// The built-in with its shipped costs.
    pub fn shipped(self) -> Workload {
        match self {
            CostedWorkload::Pgbench => Workload::Pgbench(pgbench::PgbenchCosts::default()),
            CostedWorkload::Tbench => Workload::Tbench(pairs::TbenchCosts::default()),
            CostedWorkload::SysbenchOltp => Workload::SysbenchOltp(pairs::SysbenchCosts::default()),
            CostedWorkload::Messaging => Workload::Messaging(fanout::MessagingCosts::default()),
            CostedWorkload::Volanomark => Workload::Volanomark(fanout::VolanoCosts::default()),
            CostedWorkload::Starve => Workload::Starve(simple::StarveCosts::default()),
        }
    }

    /// Its fields, in declaration order.
    pub fn fields(self) -> Vec<CostFieldInfo> {
        fn list<C>(fields: &[CostField<C>]) -> Vec<CostFieldInfo> {
            fields
                .iter()
                .map(|f| CostFieldInfo { name: f.name, source: f.source, max: f.max, whole: f.whole })
                .collect()
        }
        match self {
            CostedWorkload::Pgbench => list(&pgbench::COST_FIELDS),
            CostedWorkload::Tbench => list(&pairs::TBENCH_COST_FIELDS),
            CostedWorkload::SysbenchOltp => list(&pairs::SYSBENCH_COST_FIELDS),
            CostedWorkload::Messaging => list(&fanout::MESSAGING_COST_FIELDS),
            CostedWorkload::Volanomark => list(&fanout::VOLANO_COST_FIELDS),
            CostedWorkload::Starve => list(&simple::STARVE_COST_FIELDS),
        }
    }
}

/// A [`CostField`] without its setter: what a listing or a parser needs
/// to know of one of a built-in's costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostFieldInfo {
    /// The field's name, as `--cost WORKLOAD.FIELD` writes it.
    pub name: &'static str,
    /// Where its shipped value comes from ([`CostField::source`]).
    pub source: &'static str,
    /// Its largest value.
    pub max: f64,
    /// Whether it takes whole numbers only.
    pub whole: bool,
}

/// A built workload: tasks plus stop conditions.
#[derive(Debug)]
pub struct Built {
    /// Tasks and finish condition.
    pub instance: Instance,
    /// When to stop and what to count.
    pub limits: Limits,
}

/// The simulated-time cap of any run: 10 minutes.
pub const MAX_SIM_NS: u64 = 600_000_000_000;

impl Workload {
    /// This workload with the workload cost settings among `settings`
    /// (`tbench.side_ns=6000`) written into its costs, in order; host
    /// settings are the cost model's. An error if one is another
    /// workload's.
    pub fn with_costs(&self, settings: &[crate::costs::CostSetting]) -> Result<Workload, String> {
        let mut w = self.clone();
        for s in settings {
            let Some((of, i, x)) = s.workload_field() else { continue };
            match (&mut w, of) {
                (Workload::Pgbench(c), CostedWorkload::Pgbench) => (pgbench::COST_FIELDS[i].set)(c, x),
                (Workload::Tbench(c), CostedWorkload::Tbench) => (pairs::TBENCH_COST_FIELDS[i].set)(c, x),
                (Workload::SysbenchOltp(c), CostedWorkload::SysbenchOltp) => (pairs::SYSBENCH_COST_FIELDS[i].set)(c, x),
                (Workload::Messaging(c), CostedWorkload::Messaging) => (fanout::MESSAGING_COST_FIELDS[i].set)(c, x),
                (Workload::Volanomark(c), CostedWorkload::Volanomark) => (fanout::VOLANO_COST_FIELDS[i].set)(c, x),
                (Workload::Starve(c), CostedWorkload::Starve) => (simple::STARVE_COST_FIELDS[i].set)(c, x),
                (other, of) => {
                    return Err(format!("--cost {s}: a {} parameter, and this runs {}", of.name(), other.name()));
                }
            }
        }
        Ok(w)
    }

    /// Its own costs, field by field (`{"side_ns": 5000.0, ...}`), for a
    /// built-in that has them ([`CostedWorkload`]); `None` for hogs and
    /// workload files.
    pub fn own_costs(&self) -> Option<serde_json::Value> {
        let v = match self {
            Workload::Pgbench(c) => serde_json::to_value(c),
            Workload::Tbench(c) => serde_json::to_value(c),
            Workload::SysbenchOltp(c) => serde_json::to_value(c),
            Workload::Messaging(c) => serde_json::to_value(c),
            Workload::Volanomark(c) => serde_json::to_value(c),
            Workload::Starve(c) => serde_json::to_value(c),
            Workload::Hogs | Workload::File(_) => return None,
        };
        v.ok()
    }

    /// Which [`CostedWorkload`] it is; `None` for hogs and workload files,
    /// which have no costs of their own.
    pub fn costed(&self) -> Option<CostedWorkload> {
        Some(match self {
            Workload::Pgbench(_) => CostedWorkload::Pgbench,
            Workload::Tbench(_) => CostedWorkload::Tbench,
            Workload::SysbenchOltp(_) => CostedWorkload::SysbenchOltp,
            Workload::Messaging(_) => CostedWorkload::Messaging,
            Workload::Volanomark(_) => CostedWorkload::Volanomark,
            Workload::Starve(_) => CostedWorkload::Starve,
            Workload::Hogs | Workload::File(_) => return None,
        })
    }

    /// Its own costs as text for `cfs-sim costs`, one field a line in the
    /// order of its `*_COST_FIELDS` table (its times, like every CPU time
    /// here, at the 2.4 GHz baseline): the name `--cost` takes, the
    /// value, and the range a setting may give it, under a header naming
    /// where the values come from ([`CostedWorkload::sources`]). The values are read
    /// back from [`Workload::own_costs`], so a field the table names but
    /// the struct does not serialise under that name shows as `?` (a test
    /// asserts none does). `None` for hogs and workload files.
    pub fn render_costs(&self) -> Option<String> {
        let of = self.costed()?;
        let values = self.own_costs()?;
        let n = of.name();
        let mut s = format!(
            "{n} (--cost {n}.FIELD=VALUE; times are CPU work at 2.4 GHz, scaled by clock_factor; sources: {})\n",
            of.sources()
        );
        let sources = self.cost_sources()?;
        for (f, (_, source)) in of.fields().into_iter().zip(sources) {
            let value = values.get(f.name).and_then(serde_json::Value::as_f64);
            let value = value.map_or_else(|| "?".to_string(), |x| format!("{x}"));
            let range = format!("(0 to {}{})", f.max, if f.whole { ", whole numbers" } else { "" });
            s.push_str(&format!("  {:<22} {value:<10} {range:<30} {source}\n", f.name));
        }
        Some(s)
    }

    /// Where each of its own costs comes from, field by field in
    /// declaration order ([`CostField::source`]), or "set by --cost" for a
    /// value that differs from the shipped one; `None` for hogs and
    /// workload files.
    pub fn cost_sources(&self) -> Option<Vec<(&'static str, &'static str)>> {
        let of = self.costed()?;
        let (values, shipped) = (self.own_costs()?, of.shipped().own_costs()?);
        let value = |v: &serde_json::Value, f: &str| v.get(f).and_then(serde_json::Value::as_f64);
        let pick = |f: CostFieldInfo| {
            let same = value(&values, f.name) == value(&shipped, f.name);
            (f.name, if same { f.source } else { crate::costs::SET_BY_COST })
        };
        Some(of.fields().into_iter().map(pick).collect())
    }

    /// The built-in of this name.
    pub fn builtin(name: &str) -> Option<Workload> {
        match name {
            "hogs" => Some(Workload::Hogs),
            _ => CostedWorkload::by_name(name).map(CostedWorkload::shipped),
        }
    }

    /// Display name.
    pub fn name(&self) -> String {
        match self {
            Workload::Pgbench(_) => "pgbench".into(),
            Workload::Tbench(_) => "tbench".into(),
            Workload::Hogs => "hogs".into(),
            Workload::Messaging(_) => "messaging".into(),
            Workload::Volanomark(_) => "volanomark".into(),
            Workload::Starve(_) => "starve".into(),
            Workload::SysbenchOltp(_) => "sysbench-oltp".into(),
            Workload::File(f) => f.name.clone(),
        }
    }

    /// Whether it has a server side (a daemon and what it forks) apart
    /// from its client side: the workloads `--pin-backends` and
    /// `--server-policy` apply to. The others run every task on the
    /// client side.
    pub fn has_server_side(&self) -> bool {
        matches!(self, Workload::Pgbench(_) | Workload::Tbench(_) | Workload::SysbenchOltp(_))
    }

    /// What it measures.
    pub fn metric(&self) -> Metric {
        match self {
            Workload::Pgbench(_) | Workload::SysbenchOltp(_) => Metric::new("tps", 1.0),
            // dbench/tbench report MB/sec with MB = 10^6 bytes.
            Workload::Tbench(_) => Metric::new("mb_s", 1e-6),
            Workload::Hogs => Metric::new("loops_s", 1.0),
            Workload::Messaging(_) | Workload::Volanomark(_) => Metric::new("msgs_s", 1.0),
            Workload::Starve(_) => Metric::new("signals_s", 1.0),
            Workload::File(f) => Metric::new(&f.metric, 1.0),
        }
    }

    /// The client counts swept when none are given.
    pub fn default_clients(&self, nr_cpus: usize) -> Vec<u32> {
        let n = nr_cpus as u32;
        match self {
            Workload::Pgbench(_) => SELECTTEST_CLIENTS.to_vec(),
            Workload::Tbench(_) => vec![2 * n],
            Workload::Hogs => vec![n + 1],
            Workload::Messaging(_) | Workload::Volanomark(_) => vec![1],
            Workload::Starve(_) | Workload::File(_) => vec![1],
            Workload::SysbenchOltp(_) => vec![1, 2, 4, 8, 16, 32],
        }
    }

    /// The simulated length of every run, where it is known before the
    /// run: what [`Workload::build`] gives [`Limits`] as its duration.
    /// `None` for runs that end when their tasks do (pgbench's
    /// transactions, messaging's and VolanoMark's messages, a workload
    /// file's finishing tasks).
    pub fn known_duration_ns(&self, opts: &WorkloadOpts) -> Option<u64> {
        match self {
            Workload::Tbench(_) | Workload::SysbenchOltp(_) | Workload::Hogs | Workload::Starve(_) => {
                Some(opts.duration_ns.unwrap_or(DEFAULT_TIMED_NS))
            }
            Workload::Pgbench(_) | Workload::Messaging(_) | Workload::Volanomark(_) => opts.duration_ns,
            Workload::File(w) => match opts.duration_ns.or(w.duration_ns) {
                Some(d) => Some(d),
                None if w.tasks.iter().any(|t| t.finish && t.instances > 0) => None,
                None => Some(DEFAULT_TIMED_NS),
            },
        }
    }

    /// The tasks of a run with `clients` clients (rooms, groups, hogs...);
    /// `seed` (the run's) places the long-lived processes ([`StartCpus`]).
    pub fn build(&self, clients: u32, nr_cpus: usize, opts: &WorkloadOpts, seed: u64) -> Built {
        let start = StartCpus::draw(seed, nr_cpus, opts);
        // The run's length is known_duration_ns's; only the warm-up differs.
        let duration = self.known_duration_ns(opts);
        let limits = |warmup_ns: u64| Limits::new(duration, warmup_ns, MAX_SIM_NS);
        let share = |frac: f64| duration.map_or(0, |d| (d as f64 * frac) as u64);
        let (tasks, finish, limits, sync): (Vec<TaskSpec>, Vec<usize>, Limits, SyncObjects) = match self {
            Workload::Pgbench(c) => {
                let mut o = opts.clone();
                if o.duration_ns.is_some() {
                    o.transactions = None;
                } else if o.transactions.is_none() {
                    o.transactions = Some(DEFAULT_PGBENCH_TRANSACTIONS);
                }
                let (t, f) = pgbench::tasks(clients, &o, *c, start);
                let f = if o.duration_ns.is_some() { Vec::new() } else { f };
                (t, f, limits(0), SyncObjects::NONE)
            }
            Workload::Tbench(c) => {
                (pairs::tbench(clients, opts, *c, start), vec![], limits(share(0.2)), SyncObjects::NONE)
            }
            Workload::SysbenchOltp(c) => {
                let sync = SyncObjects { mutexes: 1, ..SyncObjects::NONE };
                (pairs::sysbench(clients, opts, *c, start), vec![], limits(share(0.1)), sync)
            }
            Workload::Hogs => (simple::hogs(clients, opts), vec![], limits(0), SyncObjects::NONE),
            Workload::Starve(c) => (simple::starve(opts, *c), vec![], limits(0), SyncObjects::NONE),
            Workload::Messaging(c) => {
                let (t, f) = fanout::messaging(clients, opts, *c);
                (t, f, limits(0), SyncObjects::NONE)
            }
            Workload::Volanomark(c) => {
                let (t, f) = fanout::volanomark(clients, opts, *c);
                (t, f, limits(0), SyncObjects::NONE)
            }
            Workload::File(w) => {
                let (t, f) = w.instantiate(nr_cpus, opts);
                // The file's warm-up, except in the 1 s a file gets when it
                // names neither a length nor a task to finish.
                let timed_by_default = opts.duration_ns.or(w.duration_ns).is_none() && f.is_empty();
                (t, f, limits(if timed_by_default { 0 } else { w.warmup_ns }), w.sync_objects())
            }
        };
        Built { instance: Instance { tasks, finish, sync }, limits }
    }
}

/// The length of a timed run (tbench, sysbench, hogs, starve, a workload
/// file with neither a duration nor a task to finish) without --duration.
pub const DEFAULT_TIMED_NS: u64 = 1_000_000_000;

/// `-t` total of a pgbench run when neither a count nor a duration is
/// given: 20,000 transactions (see docs/CALIBRATION.md for why this is
/// enough: the run-to-run spread at this length is a few percent).
pub const DEFAULT_PGBENCH_TRANSACTIONS: u64 = 20_000;

/// The client counts of Greg Smith's selecttest.sh (1-50; some of his
/// tables add 60): pgbench's default sweep, the seed run's and
/// `calibrate`'s.
pub const SELECTTEST_CLIENTS: [u32; 14] = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 40, 50, 60];

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 7] = ["pgbench", "tbench", "hogs", "messaging", "volanomark", "starve", "sysbench-oltp"];

    #[test]
    fn builtins_resolve_by_name_and_back() {
        for name in NAMES {
            assert_eq!(Workload::builtin(name).map(|w| w.name()), Some(name.to_string()));
        }
        assert!(Workload::builtin("dbench").is_none());
    }

    #[test]
    fn default_client_counts_follow_the_seed_runs() {
        // selecttest.sh's counts with the 5 and 60 of some tables (seeds/README.md);
        // tbench at 2 x CPUs as thread 2 ran it; one hog more than CPUs; sysbench's
        // doubling sweep; one room, group or pair for the rest.
        let d = |name: &str| Workload::builtin(name).unwrap().default_clients(4);
        assert_eq!(d("pgbench"), [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 40, 50, 60]);
        assert_eq!(d("tbench"), [8]);
        assert_eq!(d("hogs"), [5]);
        assert_eq!(d("sysbench-oltp"), [1, 2, 4, 8, 16, 32]);
        for name in ["messaging", "volanomark", "starve"] {
            assert_eq!(d(name), [1], "{name}");
        }
    }

    #[test]
    fn timed_builtins_leave_out_their_warm_up() {
        // A 500 ms run: tbench discards its first 20%, sysbench 10%, hogs nothing;
        // pgbench counts from the start, as pgbench's TPS "including connections
        // establishing" does.
        let opts = WorkloadOpts { duration_ns: Some(500_000_000), ..WorkloadOpts::default() };
        let warm = |name: &str| Workload::builtin(name).unwrap().build(2, 4, &opts, 1).limits.warmup_ns;
        assert_eq!(warm("tbench"), 100_000_000);
        assert_eq!(warm("sysbench-oltp"), 50_000_000);
        assert_eq!(warm("hogs"), 0);
        assert_eq!(warm("pgbench"), 0);
        // Without a duration the timed built-ins run 1 s of simulated time.
        let tbench = Workload::builtin("tbench").unwrap().build(2, 4, &WorkloadOpts::default(), 1);
        assert_eq!(tbench.limits.duration_ns, Some(1_000_000_000));
    }

    /// How long a workload file's runs last: the command line's duration,
    /// else the file's, else until its finishing tasks have exited. A
    /// `FileWorkload` built by hand with none of these (the parser refuses
    /// such a file) runs the timed built-ins' 1 s rather than to the time
    /// cap, and so does one whose only finishing task starts no instance:
    /// a forked finisher may never exist. The file's warm-up holds except
    /// in that default second.
    #[test]
    fn a_file_runs_for_its_duration_or_until_its_finishers_exit() {
        let text = "warmup = \"3ms\"\n[[task]]\nname = \"a\"\nfinish = true\nloop = 1\nops = [ { run = \"1ms\" } ]\n";
        let file = crate::parse_workload(text).unwrap();
        let len = |w: &FileWorkload, d: Option<u64>| {
            Workload::File(Arc::new(w.clone()))
                .known_duration_ns(&WorkloadOpts { duration_ns: d, ..WorkloadOpts::default() })
        };
        assert_eq!(len(&file, None), None);
        assert_eq!(len(&file, Some(5)), Some(5));
        let timed = FileWorkload { duration_ns: Some(7), ..file.clone() };
        assert_eq!((len(&timed, None), len(&timed, Some(5))), (Some(7), Some(5)));
        let mut no_finisher = file.clone();
        no_finisher.tasks[0].finish = false;
        assert_eq!(len(&no_finisher, None), Some(DEFAULT_TIMED_NS));
        let mut forked_finisher = file.clone();
        forked_finisher.tasks[0].instances = 0;
        assert_eq!(len(&forked_finisher, None), Some(DEFAULT_TIMED_NS));
        let warmup = |w: &FileWorkload| {
            Workload::File(Arc::new(w.clone())).build(1, 2, &WorkloadOpts::default(), 1).limits.warmup_ns
        };
        let timed_no_finisher = FileWorkload { duration_ns: Some(7_000_000), ..no_finisher.clone() };
        assert_eq!((warmup(&file), warmup(&timed_no_finisher)), (3_000_000, 3_000_000));
        assert_eq!(warmup(&no_finisher), 0);
    }

    #[test]
    fn launchers_and_listeners_show_their_state() {
        let launcher = Launcher::new(3, |_: u32| -> ForkSpec { unreachable!() });
        assert_eq!(format!("{launcher:?}"), "Launcher { workers: 3, forked: 0, gate: Open, .. }");
        let gated = Launcher::gated(2, StartGate::AfterForks, |_: u32| -> ForkSpec { unreachable!() });
        assert_eq!(format!("{gated:?}"), "Launcher { workers: 2, forked: 0, gate: AfterForks, .. }");
        let listener = Listener::new(150_000.0, |_: TaskRef| -> ForkSpec { unreachable!() });
        assert_eq!(format!("{listener:?}"), "Listener { fork_ns: 150000.0, .. }");
    }

    #[test]
    fn policies_fall_back_side_by_side() {
        let set =
            Policies { client: Some(Policy::Batch), server_nice: Some(5), server_uid: Some(26), ..Policies::default() };
        let base = Policies {
            all: Some(Policy::Normal),
            client: Some(Policy::Normal),
            server: Some(Policy::Batch),
            client_nice: Some(-5),
            server_nice: Some(0),
            client_uid: Some(500),
            server_uid: Some(1),
        };
        let p = set.or(base);
        assert_eq!(
            p,
            Policies {
                all: Some(Policy::Normal),
                client: Some(Policy::Batch),
                server: Some(Policy::Batch),
                client_nice: Some(-5),
                server_nice: Some(5),
                client_uid: Some(500),
                server_uid: Some(26),
            }
        );
        // The users: the server's falls back to the client's, the client's
        // to CLIENT_UID.
        assert_eq!((p.client_uid(), p.server_uid()), (500, 26));
        let one = Policies { client_uid: Some(7), ..Policies::default() };
        assert_eq!((one.client_uid(), one.server_uid()), (7, 7));
        assert_eq!((Policies::default().client_uid(), Policies::default().server_uid()), (CLIENT_UID, CLIENT_UID));
        assert_eq!((p.client(), p.server()), (Some(Policy::Batch), Some(Policy::Batch)));
        // A side's nice level is a per-side setting, as its policy is.
        assert!(Policies { server_nice: Some(0), ..Policies::default() }.per_side());
        assert!(!Policies { all: Some(Policy::Batch), ..Policies::default() }.per_side());
        // And it reaches that side's parameters only.
        let opts = WorkloadOpts { policies: p, ..WorkloadOpts::default() };
        assert_eq!((opts.client_params().nice, opts.server_params().nice, opts.params(None).nice), (-5, 5, 0));
    }

    #[test]
    fn start_cpus_come_from_the_pin_within_the_host() {
        // A pin naming CPUs 2, 4 and 9 on a 4-CPU host can only start on CPU 2; a
        // pin with no CPU of the host falls back to CPU 0.
        for seed in 0..20 {
            let opts = WorkloadOpts {
                pin_client: Some(CpuMask::from_cpus([2, 4, 9])),
                pin_server: Some(CpuMask::single(7)),
                ..WorkloadOpts::default()
            };
            let s = StartCpus::draw(seed, 4, &opts);
            assert_eq!((s.server, s.client), (0, 2), "seed {seed}");
        }
        // Unpinned, every CPU is drawn for some seed.
        let mut seen = [false; 4];
        for seed in 0..64 {
            seen[StartCpus::draw(seed, 4, &WorkloadOpts::default()).client] = true;
        }
        assert_eq!(seen, [true; 4]);
    }
}
