//! 2.6.25/26's min_vruntime skips the running task (it is kept only in
//! `__enqueue_entity` / `__dequeue_entity`, from the tree's leftmost,
//! bce7f793 sched_fair.c:227-293), a bug 1af5f730fc1 (2.6.28) fixed with
//! e17036dac18 (2.6.29); the `min-vruntime-fix` patch applies both.
//!
//! sysbench-oltp shows it once its threads leave sysbench's start mutex
//! (docs/CALIBRATION.md §4, WAKEUP_OVERLAP): pairs ping-pong on a CPU far
//! below its runqueue's min_vruntime, which has run ahead of them, and a
//! thread queued at min_vruntime waits for nearly the whole run. With the
//! fix every thread runs.

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
// runs several times a second. Under 2.6.26 one or two run for less than
// 1 ms in all at most seeds (0-2 of 64 over seeds 1-6; 1 at seed 1, with
// 0.9 ms); fixed, none does, and the least-served thread gets 2.5-15 ms
// over the same seeds (7.8 ms at seed 1). The first test counts threads
// under 2 ms, so that seed 1's 0.9 ms thread is not a knife-edge. Two
// tests, so that the two 1 s runs go in parallel. (Until the twentieth session the driver released
// the threads itself, one wakeup each, rather than through the mutex's
// chain of wakeups, and 4-13 threads starved over seeds 1-5.)

#[test]
fn stock_2_6_26_starves_some_released_sysbench_threads() {
    let bug = thread_runtimes(&sysbench("profile=2.6.26"));
    assert_eq!(bug.len(), 64);
    let starved = bug.iter().filter(|&&ns| ns < 2_000_000).count();
    assert!(starved >= 1, "2.6.26 starved {starved} threads: {:?}", &bug[..8]);
}

#[test]
fn the_min_vruntime_fix_serves_every_released_sysbench_thread() {
    let fixed = thread_runtimes(&sysbench("profile=2.6.26,patch=min-vruntime-fix"));
    assert_eq!(fixed.len(), 64);
    assert!(fixed[0] > 5_000_000, "with the fix the least-served thread ran {} ns", fixed[0]);
}
