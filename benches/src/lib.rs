//! Shared set-up for the criterion benchmarks in `benches/`.
//!
//! Run them with `cargo bench -p cfs-benches`; `cargo test --benches` runs
//! each once as a smoke test. Results and the machine they were measured on
//! are in BENCHMARKS.md at the workspace root.
#![forbid(unsafe_code)]

use cfs_core::{Config, Deschedule, KernelVersion, Scheduler, TaskId, TaskParams};
use cfs_topology::Host;

/// A 2.6.26 scheduler on `host` (a preset name or spec string).
pub fn scheduler_on(host: &str, version: KernelVersion) -> Scheduler {
    let host = cfs_topology::parse_any(host).expect("bench host parses");
    let cfg = Config::new(version, host.nr_cpus());
    Scheduler::new(cfg, host.build_domains(version)).expect("bench config is valid")
}

/// One CPU with `n` runnable nice-0 tasks, one of them running.
pub fn runqueue_with(n: usize) -> (Scheduler, u64) {
    let mut s = scheduler_on("1s1c", KernelVersion::V2_6_26);
    for _ in 0..n {
        s.spawn(0, 0, TaskParams::normal()).expect("spawn");
    }
    s.schedule(0, 0, Deschedule::Preempt).expect("schedule");
    (s, 1_000)
}

/// The block/wake cycle the runqueue benchmark times: the current task
/// sleeps (dequeue + pick_next), then is woken again (enqueue + preemption
/// check). One enqueue, one dequeue, one pick per call.
pub fn block_wake_cycle(s: &mut Scheduler, now: &mut u64) -> Option<TaskId> {
    let curr = s.curr(0)?;
    *now += 1_000;
    s.schedule(*now, 0, Deschedule::Sleep).ok()?;
    s.wake_up(*now, curr, 0, false).ok()?;
    if s.curr(0).is_none() {
        // The queue was empty after the block: the woken task runs next.
        s.schedule(*now, 0, Deschedule::Preempt).ok()?;
    }
    s.curr(0)
}

/// `busy` CPU-bound tasks all queued on CPU 0 of `host`, every CPU ticked
/// once so the load figures are warm.
pub fn imbalanced(host: &str, busy: usize) -> Scheduler {
    let mut s = scheduler_on(host, KernelVersion::V2_6_26);
    for _ in 0..busy {
        s.spawn(0, 0, TaskParams::normal().allowed(cfs_topology::CpuMask::single(0))).expect("spawn");
    }
    for t in s.tasks().iter().map(|t| t.id).collect::<Vec<_>>() {
        s.set_affinity(0, t, cfs_topology::CpuMask::empty()).expect("unpin");
    }
    s.schedule(0, 0, Deschedule::Preempt).expect("schedule");
    for cpu in 0..s.nr_cpus() {
        let _ = s.tick(1, cpu);
    }
    s
}

/// The host presets, for per-preset benchmarks.
pub fn presets() -> impl Iterator<Item = (&'static str, Host)> {
    cfs_topology::PRESET_NAMES.iter().filter_map(|n| Host::preset(n).ok().map(|h| (*n, h)))
}

// ----- whole-model runs ---------------------------------------------------------

use cfs_sim::costs::CostModel;
use cfs_sim::engine::{self, Instance, Instruments, Limits, RunOutcome, RunSetup, SyncObjects};
use cfs_sim::experiment::{Column, SchedSpec, seed_for};
use cfs_sim::workloads::{MAX_SIM_NS, Workload, WorkloadOpts};

/// One built-in workload of a [`ModelRun`]: name, clients (groups, hogs...)
/// and `--loops`.
#[derive(Clone, Debug)]
pub struct Part {
    /// Built-in workload name (`pgbench`, `tbench`, `hogs`, `messaging`...).
    pub workload: &'static str,
    /// Its client count.
    pub clients: u32,
    /// Messages per sender (messaging, volanomark).
    pub loops: Option<u32>,
}

/// A whole-model run as `cfs-sim <workload> --host H --clients N --duration D
/// --runs 1` performs it (run 0, base seed 1, no instruments, no
/// invariants), set up once and run as often as the benchmark asks. Several
/// parts run side by side on one machine (their tasks are concatenated;
/// the run is timed, so it ends at the duration whatever finishes first).
#[derive(Debug)]
pub struct ModelRun {
    host: Host,
    costs: CostModel,
    column: Column,
    parts: Vec<Part>,
    duration_ns: u64,
}

impl ModelRun {
    /// `parts` on `host` (a preset or spec) under kernel `profile` for
    /// `duration_ns` of simulated time.
    pub fn new(host: &str, profile: &str, parts: &[Part], duration_ns: u64) -> ModelRun {
        let h = cfs_topology::parse_any(host).expect("bench host parses");
        let costs = CostModel::for_host(host, &h);
        let column = SchedSpec::profile(profile).resolve(&h).expect("bench profile resolves");
        ModelRun { host: h, costs, column, parts: parts.to_vec(), duration_ns }
    }

    /// Simulated time of one run, s.
    pub fn simulated_s(&self) -> f64 {
        self.duration_ns as f64 / 1e9
    }

    /// Builds the workload and runs it once.
    pub fn run(&self) -> RunOutcome {
        let nr = self.host.nr_cpus();
        let opts = |p: &Part| WorkloadOpts {
            duration_ns: Some(self.duration_ns),
            policies: self.column.policies,
            loops: p.loops,
            ..WorkloadOpts::default()
        };
        let (instance, limits, seed) = match self.parts.as_slice() {
            [p] => {
                let seed = seed_for(1, p.clients, 0);
                let w = Workload::builtin(p.workload).expect("built-in workload");
                let built = w.build(p.clients, nr, &opts(p), seed);
                (built.instance, built.limits, seed)
            }
            parts => {
                let seed = seed_for(1, parts.iter().map(|p| p.clients).sum(), 0);
                let mut tasks = Vec::new();
                for p in parts {
                    let w = Workload::builtin(p.workload).expect("built-in workload");
                    let built = w.build(p.clients, nr, &opts(p), seed);
                    // Built-ins address their children by the ids fork
                    // returns, so only the initial tasks' order matters.
                    // Their synchronisation objects have fixed numbers
                    // (sysbench-oltp's start mutex is mutex 0), which two
                    // parts would share: such a part runs alone.
                    assert_eq!(
                        built.instance.sync,
                        SyncObjects::NONE,
                        "{} uses synchronisation objects and cannot share a run",
                        p.workload
                    );
                    tasks.extend(built.instance.tasks);
                }
                let limits = Limits::new(Some(self.duration_ns), 0, MAX_SIM_NS);
                (Instance { tasks, finish: Vec::new(), sync: SyncObjects::NONE }, limits, seed)
            }
        };
        let setup = RunSetup {
            host: &self.host,
            costs: &self.costs,
            config: self.column.config,
            domains: self.column.domains.clone(),
            seed,
            limits,
            trace: false,
            instruments: Instruments::default(),
            sockets: self.column.sockets,
            changes: Vec::new(),
            irqs: Vec::new(),
            slow: Vec::new(),
            domain_build: Default::default(),
        };
        engine::run(&setup, instance).expect("bench run completes")
    }
}

const MS: u64 = 1_000_000;

/// Simulated duration: `release` in optimised builds, `debug` otherwise
/// (`cargo test --benches` runs each benchmark once in a debug build).
fn dur(release: u64, debug: u64) -> u64 {
    if cfg!(debug_assertions) { debug } else { release }
}

fn part(workload: &'static str, clients: u32, loops: Option<u32>) -> Part {
    Part { workload, clients, loops }
}

/// The whole-model benchmarks, by name (`benches/model.rs`,
/// `examples/model_stats.rs`).
pub fn model_runs() -> Vec<(&'static str, ModelRun)> {
    vec![
        (
            "pgbench_q6600_50clients_1s",
            ModelRun::new("q6600", "2.6.26", &[part("pgbench", 50, None)], dur(1000 * MS, 50 * MS)),
        ),
        (
            "tbench_nehalem-ep_32clients_50ms",
            ModelRun::new("nehalem-ep", "2.6.26", &[part("tbench", 32, None)], dur(50 * MS, 2 * MS)),
        ),
        (
            // The hogs launcher forks one hog per 50 µs (all 1024 run from
            // ~55 ms on); the 4 hackbench groups (160 tasks, 100 messages
            // per sender to each of 20 receivers) finish within the run.
            "hogs1024_messaging4_16n4s16c_200ms",
            ModelRun::new(
                "16n4s16c",
                "2.6.26",
                &[part("hogs", 1024, None), part("messaging", 4, None)],
                dur(200 * MS, 5 * MS),
            ),
        ),
    ]
}
