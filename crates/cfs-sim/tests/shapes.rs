//! Short-run shape tests of the seed behaviour: they fail if the 1:N
//! pile-up (or its cures) stops emerging from cfs-core plus the costs.

mod common;
use common::{pgbench_plan, run};

const TX: u64 = 3000;

#[test]
fn rc4_defaults_pile_onto_one_cpu_and_stay_flat() {
    let plan = pgbench_plan(&["name=895"], &[1, 15], TX, 3, 7);
    let res = run(&plan);
    let one = res.median(0, 1).unwrap();
    let fifteen = res.median(0, 15).unwrap();
    assert!(fifteen < 1.5 * one && fifteen > 0.75 * one, "895: {one:.0} at 1 client, {fifteen:.0} at 15");
    let r = res.median_run(0, 15).unwrap();
    assert!(r.max_cpu_share > 0.6, "one CPU should carry most of the run time: shares {:?}", r.cpu_util);
}

#[test]
fn no_sync_no_preempt_scales() {
    let plan = pgbench_plan(&["name=861,features=861"], &[1, 15], TX, 3, 7);
    let res = run(&plan);
    let one = res.median(0, 1).unwrap();
    let fifteen = res.median(0, 15).unwrap();
    assert!(fifteen >= 2.5 * one, "861: {one:.0} at 1 client, {fifteen:.0} at 15");
    let r = res.median_run(0, 15).unwrap();
    assert!(r.max_cpu_share < 0.4, "861 should spread: {:?}", r.cpu_util);
}

#[test]
fn affinity_fix_beats_rc4_defaults() {
    let plan = pgbench_plan(&["name=895", "name=fix,patch=affinity-fix"], &[15], TX, 3, 7);
    let res = run(&plan);
    let (base, fix) = (res.median(0, 15).unwrap(), res.median(1, 15).unwrap());
    assert!(fix >= 1.5 * base, "affinity-fix {fix:.0} vs 895 {base:.0}");
}

#[test]
fn one_client_co_located_beats_ping_pong() {
    // With sync wakeups the backend joins the client's CPU (no cross-CPU
    // hops); without them every transaction pays two hops.
    let plan = pgbench_plan(&["name=895", "name=863,features=863"], &[1], 2000, 1, 7);
    let res = run(&plan);
    let (co, pp) = (res.median(0, 1).unwrap(), res.median(1, 1).unwrap());
    assert!(co > 1.1 * pp, "co-located {co:.0} vs ping-pong {pp:.0}");
    // The published anchors: 11,043 and 9,232 TPS (within 15%).
    assert!((co - 11043.0).abs() / 11043.0 < 0.15, "{co}");
    assert!((pp - 9232.0).abs() / 9232.0 < 0.15, "{pp}");
}
