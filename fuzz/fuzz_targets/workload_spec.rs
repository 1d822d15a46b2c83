//! `workload_spec`: the workload-file parsers (TOML and the rt-app JSON
//! subset) behind `cfs_sim::parse_workload`, then what `cfs-sim run FILE`
//! does with a file that parses: build it as a `Workload::File` (the
//! experiment's path) and run it through the engine on a 2-CPU host with
//! the online invariants on, for at most 3 ms of simulated time, under the
//! kernel profile `KernelVersion::ALL[len % 5]` (len: the input's length in
//! bytes) with its defaults.
//!
//! Findings: any panic (parser, interpreter, engine, core, including
//! arithmetic overflow under -Cdebug-assertions); a parsed workload that
//! breaks the parser's documented limits; a `SimError` from the run other
//! than `EmptyAffinity` (a file that pins tasks to CPUs the host lacks is
//! refused like `sched_setaffinity` would refuse it: a user error) or
//! `TooManyTasks` (a file that forks more than `MAX_CREATED` tasks).
//!
//! Every task's program is wrapped in a shared step budget (children
//! created by `fork` too); when it is spent the tasks exit. That keeps a
//! file of 1 ns run ops or a fork bomb from turning one input into a
//! long run, without changing anything before the budget runs out.
#![no_main]

use cfs_core::{Config, KernelVersion, SchedError};
use cfs_sim::costs::CostModel;
use cfs_sim::engine::{self, RunSetup, SimError};
use cfs_sim::program::StepBudget;
use cfs_sim::workfile::Launch;
use cfs_sim::workloads::{Workload, WorkloadOpts};
use cfs_topology::Host;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

/// Simulated time of a run, ns.
const RUN_NS: u64 = 3_000_000;
/// Program steps over all tasks of a run.
const STEP_BUDGET: u32 = 20_000;
/// Larger workloads are parsed and built, not run (the invariant checks
/// are linear in the task count per call).
const MAX_RUN_TASKS: u64 = 64;
/// Tasks a run may create, forks included (`Limits::max_tasks`): a file
/// that forks in a loop stops with `TooManyTasks` here rather than
/// spending the step budget on thousands of children, each making every
/// invariant check longer.
const MAX_CREATED: usize = 1_024;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Triage: CFS_FUZZ_DEBUG=1 prints the parse result and the outcome.
    let debug = std::env::var_os("CFS_FUZZ_DEBUG").is_some();
    let r = cfs_sim::parse_workload(text);
    if debug {
        eprintln!("parse: {r:?}");
    }
    let Ok(wl) = r else { return };

    // The parser's documented limits.
    assert!(!wl.tasks.is_empty() && wl.tasks.len() <= 256, "{} task definitions", wl.tasks.len());
    let total: u64 = wl.tasks.iter().map(|t| t.instances as u64).sum();
    assert!((1..=4096).contains(&total), "{total} tasks at start");
    assert!(
        wl.duration_ns.is_some() || wl.tasks.iter().any(|t| t.finish && t.instances > 0),
        "neither a duration nor a finish task"
    );
    for (i, t) in wl.tasks.iter().enumerate() {
        assert!((-20..=19).contains(&t.nice), "task {i}: nice {}", t.nice);
        assert!(t.cpus.is_none_or(|m| !m.is_empty()), "task {i}: empty CPU list");
        assert!(!wl.tasks[..i].iter().any(|u| u.name == t.name), "duplicate task name {:?}", t.name);
    }

    // Build it the way an experiment does (Plan::run_job).
    let host = Host::preset("x2").expect("preset");
    let costs = CostModel::preset("x2").expect("preset");
    let n = host.nr_cpus();
    let sync = wl.sync_objects();
    // An rt-app file starts with its main alone, which creates the rest.
    let (initial, first) = match wl.launch {
        Launch::AtStart => (total, 0),
        Launch::RtApp { .. } => (1, 1),
    };
    let run_ns = wl.duration_ns.unwrap_or(RUN_NS).min(RUN_NS);
    let workload = Workload::File(Arc::new(wl));
    let opts = WorkloadOpts { duration_ns: Some(run_ns), ..WorkloadOpts::default() };
    let seed = data.len() as u64;
    let mut built = workload.build(1, n, &opts, seed);
    let inst = &mut built.instance;
    assert_eq!(inst.tasks.len() as u64, initial, "instantiate made the wrong number of tasks");
    let instances = first..first + total;
    assert!(inst.finish.iter().all(|&t| instances.contains(&(t as u64))), "finish names no instance");
    assert_eq!(inst.sync, sync);
    assert_eq!(built.limits.duration_ns, Some(run_ns));
    if total > MAX_RUN_TASKS {
        return;
    }

    // And run it briefly.
    let budget = StepBudget::new(STEP_BUDGET);
    budget.wrap_all(&mut inst.tasks);
    // The profile from the input's length: every file is run under one of
    // them, and a mutation that adds a byte tries the next.
    let version = KernelVersion::ALL[data.len() % KernelVersion::ALL.len()];
    let mut config = Config::new(version, n);
    config.check_invariants = true;
    let setup = RunSetup {
        host: &host,
        costs: &costs,
        config,
        domains: host.build_domains(version),
        seed,
        limits: engine::Limits { max_tasks: MAX_CREATED, ..built.limits },
        trace: false,
        instruments: Default::default(),
        sockets: Default::default(),
        changes: Vec::new(),
        irqs: Vec::new(),
        slow: Vec::new(),
        domain_build: Default::default(),
    };
    let r = engine::run(&setup, built.instance);
    if debug {
        let summary = r.as_ref().map(|o| (o.end_ns, o.events, o.units, o.switches, o.tasks.len()));
        eprintln!("run (end_ns, events, units, switches, tasks): {summary:?}; steps left {}", budget.left());
    }
    match r {
        Ok(out) => assert!(out.end_ns <= run_ns, "ran to {} past the {run_ns} ns end", out.end_ns),
        Err(SimError::Sched(SchedError::EmptyAffinity)) => {}
        Err(SimError::TooManyTasks { limit, alive: false, .. }) => assert_eq!(limit, MAX_CREATED),
        // rt-app's fork limit, the one failure a file may ask for (it
        // takes 1,025 forks of one task, past MAX_CREATED here).
        Err(SimError::Program { why, .. }) => assert!(why.contains("fork limit"), "{why}"),
        Err(e) => panic!("{e}"),
    }
});
