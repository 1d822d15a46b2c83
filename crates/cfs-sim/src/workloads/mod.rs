//! The built-in workloads, each a set of task programs over the
//! [`crate::program`] vocabulary, and what they measure.
//!
//! Every CPU time below is at the 2.4 GHz Core 2 baseline (the engine
//! scales it by the host's clock factor); each constant says where it comes
//! from, mostly hosts-and-costs.md §3-§4.

pub mod fanout;
pub mod pairs;
pub mod pgbench;
pub mod simple;

use crate::engine::{Instance, Limits};
use crate::program::TaskSpec;
use crate::workfile::FileWorkload;
use cfs_core::{CpuMask, Policy, TaskParams};
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
}

/// Rounds baseline ns to the integer the vocabulary takes.
pub fn ns(x: f64) -> u64 {
    crate::dist::round_u64(x.max(0.0))
}

/// Options shared by the built-ins (from the command line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadOpts {
    /// Total transactions over all clients (`pgbench -t` × clients).
    pub transactions: Option<u64>,
    /// Simulated run time, ns.
    pub duration_ns: Option<u64>,
    /// Policy for every task (`--policy batch`).
    pub policy: Option<Policy>,
    /// Affinity of the client side (pgbench, the benchmark drivers).
    pub pin_client: Option<CpuMask>,
    /// Affinity of the server side (postmaster and backends, servers).
    pub pin_server: Option<CpuMask>,
    /// Nice levels, cycled over the tasks (hogs).
    pub nice: Vec<i32>,
    /// Messages per sender (messaging, volanomark).
    pub loops: Option<u32>,
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
}

impl WorkloadOpts {
    /// Task parameters with this policy and an optional pin.
    pub fn params(&self, pin: Option<CpuMask>) -> TaskParams {
        let mut p = TaskParams::normal();
        if let Some(pol) = self.policy {
            p = p.policy(pol);
        }
        if let Some(m) = pin {
            p = p.allowed(m);
        }
        p
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

/// A workload: a built-in or a file.
#[derive(Clone, Debug)]
pub enum Workload {
    /// pgbench -S (hosts-and-costs.md §3).
    Pgbench(pgbench::PgbenchCosts),
    /// tbench over loopback (§3.3).
    Tbench,
    /// CPU-bound tasks with nice levels.
    Hogs,
    /// hackbench-style groups.
    Messaging,
    /// VolanoMark-style chat rooms (§4.2).
    Volanomark,
    /// starve.c (§4.1).
    Starve,
    /// sysbench OLTP read-only (§4.3).
    SysbenchOltp,
    /// A workload file.
    File(Arc<FileWorkload>),
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
    /// The built-in of this name.
    pub fn builtin(name: &str) -> Option<Workload> {
        Some(match name {
            "pgbench" => Workload::Pgbench(pgbench::PgbenchCosts::default()),
            "tbench" => Workload::Tbench,
            "hogs" => Workload::Hogs,
            "messaging" => Workload::Messaging,
            "volanomark" => Workload::Volanomark,
            "starve" => Workload::Starve,
            "sysbench-oltp" => Workload::SysbenchOltp,
            _ => return None,
        })
    }

    /// Display name.
    pub fn name(&self) -> String {
        match self {
            Workload::Pgbench(_) => "pgbench".into(),
            Workload::Tbench => "tbench".into(),
            Workload::Hogs => "hogs".into(),
            Workload::Messaging => "messaging".into(),
            Workload::Volanomark => "volanomark".into(),
            Workload::Starve => "starve".into(),
            Workload::SysbenchOltp => "sysbench-oltp".into(),
            Workload::File(f) => f.name.clone(),
        }
    }

    /// What it measures.
    pub fn metric(&self) -> Metric {
        match self {
            Workload::Pgbench(_) | Workload::SysbenchOltp => Metric::new("tps", 1.0),
            // dbench/tbench report MB/sec with MB = 10^6 bytes.
            Workload::Tbench => Metric::new("mb_s", 1e-6),
            Workload::Hogs => Metric::new("loops_s", 1.0),
            Workload::Messaging | Workload::Volanomark => Metric::new("msgs_s", 1.0),
            Workload::Starve => Metric::new("signals_s", 1.0),
            Workload::File(f) => Metric::new(&f.metric, 1.0),
        }
    }

    /// The client counts swept when none are given.
    pub fn default_clients(&self, nr_cpus: usize) -> Vec<u32> {
        let n = nr_cpus as u32;
        match self {
            Workload::Pgbench(_) => vec![1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 40, 50, 60],
            Workload::Tbench => vec![2 * n],
            Workload::Hogs => vec![n + 1],
            Workload::Messaging | Workload::Volanomark => vec![1],
            Workload::Starve | Workload::File(_) => vec![1],
            Workload::SysbenchOltp => vec![1, 2, 4, 8, 16, 32],
        }
    }

    /// The tasks of a run with `clients` clients (rooms, groups, hogs...);
    /// `seed` (the run's) places the long-lived processes ([`StartCpus`]).
    pub fn build(&self, clients: u32, nr_cpus: usize, opts: &WorkloadOpts, seed: u64) -> Built {
        let start = StartCpus::draw(seed, nr_cpus, opts);
        let timed = |default_s: f64, warmup_frac: f64| {
            let d = opts.duration_ns.unwrap_or((default_s * 1e9) as u64);
            Limits { duration_ns: Some(d), warmup_ns: (d as f64 * warmup_frac) as u64, max_ns: MAX_SIM_NS }
        };
        let until_done = || match opts.duration_ns {
            Some(d) => Limits { duration_ns: Some(d), warmup_ns: 0, max_ns: MAX_SIM_NS },
            None => Limits { duration_ns: None, warmup_ns: 0, max_ns: MAX_SIM_NS },
        };
        let (tasks, finish, limits, conds): (Vec<TaskSpec>, Vec<usize>, Limits, usize) = match self {
            Workload::Pgbench(c) => {
                let mut o = opts.clone();
                if o.duration_ns.is_some() {
                    o.transactions = None;
                } else if o.transactions.is_none() {
                    o.transactions = Some(DEFAULT_PGBENCH_TRANSACTIONS);
                }
                let (t, f) = pgbench::tasks(clients, &o, *c, start);
                let f = if o.duration_ns.is_some() { Vec::new() } else { f };
                (t, f, until_done(), 0)
            }
            Workload::Tbench => (pairs::tbench(clients, opts, start), vec![], timed(1.0, 0.2), 0),
            Workload::SysbenchOltp => (pairs::sysbench(clients, opts, start), vec![], timed(1.0, 0.1), 0),
            Workload::Hogs => (simple::hogs(clients, opts), vec![], timed(1.0, 0.0), 0),
            Workload::Starve => (simple::starve(opts), vec![], timed(1.0, 0.0), 0),
            Workload::Messaging => {
                let (t, f) = fanout::messaging(clients, opts);
                (t, f, until_done(), 0)
            }
            Workload::Volanomark => {
                let (t, f) = fanout::volanomark(clients, opts);
                (t, f, until_done(), 0)
            }
            Workload::File(w) => {
                let (t, f) = w.instantiate(nr_cpus, opts);
                let limits = match (opts.duration_ns.or(w.duration_ns), f.is_empty()) {
                    (Some(d), _) => Limits { duration_ns: Some(d), warmup_ns: w.warmup_ns, max_ns: MAX_SIM_NS },
                    (None, false) => Limits { duration_ns: None, warmup_ns: w.warmup_ns, max_ns: MAX_SIM_NS },
                    (None, true) => timed(1.0, 0.0),
                };
                (t, f, limits, w.conds.len())
            }
        };
        Built { instance: Instance { tasks, finish, conds }, limits }
    }
}

/// `-t` total of a pgbench run when neither a count nor a duration is
/// given: 20,000 transactions (see docs/CALIBRATION.md for why this is
/// enough: the run-to-run spread at this length is a few percent).
pub const DEFAULT_PGBENCH_TRANSACTIONS: u64 = 20_000;
