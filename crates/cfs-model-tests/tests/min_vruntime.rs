//! 2.6.25/26's min_vruntime skips the running task (it is kept only in
//! `__enqueue_entity` / `__dequeue_entity`, from the tree's leftmost,
//! bce7f793 sched_fair.c:227-293), a bug 1af5f730fc1 (2.6.28) fixed with
//! e17036dac18 (2.6.29); the `min-vruntime-fix` patch applies both.
//!
//! sysbench-oltp shows it once its threads start together at sysbench's
//! start mutex (docs/CALIBRATION.md §4, WAKEUP_OVERLAP): an idle CPU's
//! tick pulls a batch of the released threads, pairs ping-pong there far
//! below the runqueue's min_vruntime, which has run ahead of them, and the
//! threads queued at min_vruntime wait for the whole run. With the fix every
//! thread runs.

use cfs_model_tests::Case;
use cfs_sim::engine::{Instruments, RunOutcome};

/// 64 sysbench threads on Tigerton (16 CPUs, 4 pairs a CPU), 1 s.
fn sysbench(config: &str) -> RunOutcome {
    let mut case = Case::new("tigerton", config, "sysbench-oltp", 64);
    case.duration_ms = Some(1_000);
    case.run(Instruments::default()).unwrap()
}

/// CPU time of each sysbench thread, ns, smallest first.
fn thread_runtimes(o: &RunOutcome) -> Vec<u64> {
    let mut v: Vec<u64> = o.tasks.iter().filter(|t| t.name == "sysbench-thread").map(|t| t.runtime_ns).collect();
    v.sort_unstable();
    v
}

// A fair share is 16 CPUs x 1 s / 128 tasks ~ 125 ms; with 4 pairs a CPU
// each taking the next-buddy rule's 50 ms stretches in turn, every thread
// runs several times a second. Under 2.6.26 some run for less than 1 ms in
// all (4-13 of 64 over seeds 1-5); fixed, the least-served thread gets over
// 6 ms (6.6-16.9 ms over the same seeds). Two tests, so that the two 1 s
// runs go in parallel.

#[test]
fn stock_2_6_26_starves_some_released_sysbench_threads() {
    let bug = thread_runtimes(&sysbench("profile=2.6.26"));
    assert_eq!(bug.len(), 64);
    let starved = bug.iter().filter(|&&ns| ns < 1_000_000).count();
    assert!(starved >= 2, "2.6.26 starved {starved} threads: {:?}", &bug[..8]);
}

#[test]
fn the_min_vruntime_fix_serves_every_released_sysbench_thread() {
    let fixed = thread_runtimes(&sysbench("profile=2.6.26,patch=min-vruntime-fix"));
    assert_eq!(fixed.len(), 64);
    assert!(fixed[0] > 5_000_000, "with the fix the least-served thread ran {} ns", fixed[0]);
}
