//! Shared harness for the property tests in `tests/`.
//!
//! A [`Case`] is one simulator run described exactly as the `cfs-sim`
//! command line would run it: host, scheduler configuration (the
//! `--config` items), built-in workload, client count, options and base
//! seed. [`Case::run`] executes it through the real engine with cfs-core's
//! online invariants on, and [`Case::command`] prints the command that
//! replays the same run, so a shrunk counterexample can be reproduced and
//! inspected (`--trace`) outside the test.
//!
//! Case counts: proptest's `PROPTEST_CASES` (CI runs a small default set in
//! each test's config; raise it for deep runs).
#![forbid(unsafe_code)]

use cfs_sim::costs::CostModel;
use cfs_sim::engine::{self, Instruments, RunOutcome, RunSetup};
use cfs_sim::experiment::{SchedSpec, parse_irq, parse_slow, parse_switch, seed_for};
use cfs_sim::workloads::{Workload, WorkloadOpts};
use cfs_topology::{CpuMask, Host};
use std::fmt;

/// The kernel profiles, by name.
pub const PROFILES: [&str; 5] = ["2.6.25", "2.6.26-rc4", "2.6.26", "2.6.32-rc1", "2.6.32"];

/// The preset hosts.
pub const HOSTS: [&str; 5] = ["x2", "q6600", "stoakley", "nehalem-ep", "tigerton"];

/// One run, as the command line would describe it.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Host preset or spec.
    pub host: String,
    /// `--config` items, e.g. `profile=2.6.26-rc4,features=863`.
    pub config: String,
    /// Built-in workload name.
    pub workload: String,
    /// Clients (hogs, groups, ...).
    pub clients: u32,
    /// Nice levels cycled over the tasks (`--nice`).
    pub nice: Vec<i32>,
    /// Simulated duration, ms (`--duration`), if timed.
    pub duration_ms: Option<u64>,
    /// Total transactions (`--transactions`), if counted.
    pub transactions: Option<u64>,
    /// Message loops (`--loops`).
    pub loops: Option<u32>,
    /// hackbench over pipes (`--pipe`).
    pub pipe: bool,
    /// Base seed (`--seed`).
    pub seed: u64,
    /// Client-side affinity (`--pin-client`), as a CPU list.
    pub pin_client: Option<String>,
    /// Server-side affinity (`--pin-backends`), as a CPU list.
    pub pin_server: Option<String>,
    /// Interrupt loads (`--irq`), e.g. `cpus=0,mean=100us,takes=5us`.
    pub irqs: Vec<String>,
    /// Slowed CPUs (`--slow`), e.g. `cpus=1,speed=50%`.
    pub slow: Vec<String>,
    /// Settings written mid-run (`--switch`), e.g. `20ms:offline=2`.
    pub switches: Vec<String>,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.command())
    }
}

impl Case {
    /// A case with defaults: no nice levels, no limits, seed 1.
    pub fn new(host: &str, config: &str, workload: &str, clients: u32) -> Case {
        Case {
            host: host.into(),
            config: config.into(),
            workload: workload.into(),
            clients,
            nice: Vec::new(),
            duration_ms: None,
            transactions: None,
            loops: None,
            pipe: false,
            seed: 1,
            pin_client: None,
            pin_server: None,
            irqs: Vec::new(),
            slow: Vec::new(),
            switches: Vec::new(),
        }
    }

    /// The exact `cfs-sim` invocation that replays this run (run 0 of the
    /// cell; add `--trace t.json` to look at it).
    pub fn command(&self) -> String {
        let mut s = format!(
            "cargo run --release -p cfs-sim -- {} --host {} --config \"{}\" --clients {} --runs 1 --seed {}",
            self.workload, self.host, self.config, self.clients, self.seed
        );
        if !self.nice.is_empty() {
            let n: Vec<String> = self.nice.iter().map(|n| n.to_string()).collect();
            s += &format!(" --nice={}", n.join(","));
        }
        if let Some(d) = self.duration_ms {
            s += &format!(" --duration {d}ms");
        }
        if let Some(t) = self.transactions {
            s += &format!(" --transactions {t}");
        }
        if let Some(l) = self.loops {
            s += &format!(" --loops {l}");
        }
        if self.pipe {
            s += " --pipe";
        }
        if let Some(p) = &self.pin_client {
            s += &format!(" --pin-client {p}");
        }
        if let Some(p) = &self.pin_server {
            s += &format!(" --pin-backends {p}");
        }
        for irq in &self.irqs {
            s += &format!(" --irq {irq}");
        }
        for x in &self.slow {
            s += &format!(" --slow {x}");
        }
        for sw in &self.switches {
            s += &format!(" --switch {sw}");
        }
        s
    }

    /// Runs it with the scheduler's invariants checked after every call.
    pub fn run(&self, ins: Instruments) -> Result<RunOutcome, String> {
        let host = cfs_topology::parse_any(&self.host).map_err(|e| e.to_string())?;
        let spec = SchedSpec::default().with_items(&self.config)?;
        let spec = if spec.profile.is_empty() { SchedSpec { profile: "2.6.26".into(), ..spec } } else { spec };
        let col = spec.resolve(&host)?;
        let workload = Workload::builtin(&self.workload).ok_or_else(|| format!("no workload {}", self.workload))?;
        // The column's `cost=` settings, as the command line applies them.
        let workload = workload.with_costs(&col.costs)?;
        let opts = WorkloadOpts {
            transactions: self.transactions,
            duration_ns: self.duration_ms.map(|d| d * 1_000_000),
            policies: col.policies,
            nice: self.nice.clone(),
            loops: self.loops,
            pipe: self.pipe,
            pin_client: self.pin_client.as_deref().map(CpuMask::parse_list).transpose().map_err(|e| e.to_string())?,
            pin_server: self.pin_server.as_deref().map(CpuMask::parse_list).transpose().map_err(|e| e.to_string())?,
        };
        let seed = seed_for(self.seed, self.clients, 0);
        let built = workload.build(self.clients, host.nr_cpus(), &opts, seed);
        let costs = CostModel::for_host(&self.host, &host).with(&col.costs);
        let mut config = col.config;
        config.check_invariants = true;
        let mut changes = Vec::new();
        for sw in &self.switches {
            changes.extend(parse_switch(sw)?);
        }
        changes.sort_by_key(|c| c.at_ns);
        let setup = RunSetup {
            host: &host,
            costs: &costs,
            config,
            domains: col.domains,
            seed,
            limits: built.limits,
            trace: false,
            instruments: ins,
            sockets: col.sockets,
            changes,
            irqs: self.irqs.iter().map(|s| parse_irq(s, &host, "--irq")).collect::<Result<_, _>>()?,
            slow: self.slow.iter().map(|s| parse_slow(s, &host, "--slow")).collect::<Result<_, _>>()?,
            domain_build: col.domain_build.clone(),
        };
        engine::run(&setup, built.instance).map_err(|e| format!("{e}\nreplay: {}", self.command()))
    }

    /// The host.
    pub fn host(&self) -> Host {
        cfs_topology::parse_any(&self.host).expect("case hosts parse")
    }
}

/// Instruments that measure waits and gaps.
pub fn watch() -> Instruments {
    Instruments { watch: true, ..Instruments::default() }
}

/// `CpuMask` of every CPU of a host.
pub fn all_cpus(host: &Host) -> CpuMask {
    CpuMask::first_n(host.nr_cpus())
}
