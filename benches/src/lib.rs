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
