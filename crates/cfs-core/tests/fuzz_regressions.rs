//! Crashes the fuzz targets found, decoded into plain API calls (the raw
//! inputs are in fuzz/corpus/<target>/ as well, replayed by .ci/fuzz-smoke).

mod common;

use cfs_core::{Config, CpuMask, Deschedule, Event, KernelVersion, MigrateReason, Policy, Scheduler, TaskParams};
use cfs_topology::Host;
use common::Recorder;

/// core_ops, 2.6.32 on the x2 (2 CPUs), features 0xaebc13: a running task
/// whose affinity excludes its CPU waits for its next preemption to be moved
/// (the migration thread's half of set_cpus_allowed). Active balancing,
/// requested by CPU 1's failed balance passes, ran first in that same
/// schedule() and pushed the task to CPU 1; the pending affinity move then
/// moved it "from CPU 0" again, dequeuing it from a runqueue it had left:
/// CPU 0's load lost its weight twice (invariant: "summed weight 90401 !=
/// cfs load 89581"). The kernel's __migrate_task checks `task_cpu(p) !=
/// src_cpu` ("Already moved", 2.6.26 sched.c:5623-5625) and is done.
#[test]
fn pending_affinity_move_after_active_balance_pushed_the_task() {
    let host = Host::preset("x2").unwrap();
    let v = KernelVersion::V2_6_32;
    let mut cfg = Config::new(v, 2).with_features_mask(0xaebc13).unwrap();
    cfg.check_invariants = true;
    let mut s = Scheduler::with_observer(cfg, host.build_domains(v), Recorder::default()).unwrap();
    let t0_mask = CpuMask::from_cpus([0]);
    let batch = |m: CpuMask| TaskParams::normal().nice(1).policy(Policy::Batch).allowed(m);
    let t0 = s.spawn(0, 1, batch(t0_mask)).unwrap(); // placed on CPU 0, its only CPU
    s.set_affinity(0, t0, CpuMask::from_cpus([0, 1])).unwrap();
    let t1 = s.spawn(0, 1, batch(t0_mask)).unwrap();
    s.schedule(0, 0, Deschedule::Preempt).unwrap(); // T0 runs on CPU 0, T1 queued
    // CPU 1 balances and fails (T1 may only run on CPU 0, T0 is running).
    s.rebalance(2_577_308_057, 1).unwrap();
    s.rebalance(4_278_465_330, 1).unwrap();
    s.tick(8_573_432_523, 1).unwrap();
    let t = 11_150_412_900;
    s.spawn(t, 1, batch(CpuMask::from_cpus([0]))).unwrap();
    s.rebalance(t, 1).unwrap();
    s.fork(t, t0, None).unwrap();
    s.schedule(t, 0, Deschedule::Yield).unwrap(); // active balance pushes T0; T1 runs
    assert_eq!(s.curr(0), Some(t1));
    // T1, running, may now only run on CPU 1: a pending move.
    s.set_affinity(t, t1, CpuMask::from_cpus([1])).unwrap();
    s.spawn(t, 0, TaskParams::normal().nice(-20).allowed(CpuMask::from_cpus([0]))).unwrap();
    s.rebalance(13_727_393_277, 1).unwrap();
    s.tick(16_304_373_654, 1).unwrap(); // fails again: active balance requested on CPU 0
    // T1 yields: active balancing pushes it to CPU 1, and the pending
    // affinity move finds it already moved.
    s.schedule(16_304_373_654, 0, Deschedule::Yield).unwrap();
    assert_eq!(s.task(t1).unwrap().cpu, 1);
    let moves: Vec<MigrateReason> = s
        .observer()
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Migrate { task, reason, .. } if *task == t1 => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(moves, vec![MigrateReason::Active], "moved once, by active balancing");
    // CPU 0's load is the sum of its queued tasks' weights (checked by the
    // invariants after every call; here once more by hand).
    let rq = s.rq(0).unwrap();
    let on0: u64 = s.tasks().iter().filter(|x| x.cpu == 0 && x.se.on_rq).map(|x| x.se.load.weight).sum();
    assert_eq!(rq.load.weight, on0);
}
