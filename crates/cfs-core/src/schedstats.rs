//! Scheduler statistics (CONFIG_SCHEDSTATS): how long each task waited on a
//! runqueue, slept, and ran at a stretch.
//!
//! These are the per-entity fields a CONFIG_SCHEDSTATS kernel keeps in
//! `struct sched_entity` and prints in `/proc/<pid>/sched`, updated at the
//! same points of the fair class as the kernel updates them. They never
//! feed back into a decision, so a kernel built with or without them
//! schedules the same; here they are always kept.
//!
//! The same code is in every profile: `update_stats_wait_start`,
//! `update_stats_wait_end`, `update_stats_enqueue`, `update_stats_dequeue`,
//! `enqueue_sleeper`, the `exec_max` line of `__update_curr`, the
//! `slice_max` block of `set_next_entity` and the clock-offset block of
//! `set_task_cpu` read the same in 2.6.25 (4b119e21 sched_fair.c:321-386,
//! 430-450, 615-627; sched.c:1464-1474), 2.6.26 (bce7f793), 2.6.26-rc4
//! (e490517a sched_fair.c:453, 488-526, 585-600, 770-788; sched.c:2039-2049),
//! 2.6.32-rc1 (17d857be) and 2.6.32 (22763c5c sched_fair.c:483, 523-560,
//! 630-650, 860-875; sched.c:2065-2077). 2.6.32 adds only a tracepoint to
//! `update_stats_wait_end` and iowait counters, and nothing here sleeps on
//! I/O.
//!
//! What is left out: `block_start` / `block_max` (an uninterruptible sleep;
//! every [`Deschedule::Sleep`](crate::Deschedule::Sleep) is a
//! TASK_INTERRUPTIBLE one, as a task in `select()`, `recv()` or `nanosleep()`
//! is), and the `nr_wakeups_*` / `nr_*_migrations` counters, which the
//! [`Observer`] events carry with their reasons.
//!
//! ## What the numbers mean
//!
//! A *wait* runs from the moment a task is queued without the CPU (woken,
//! forked, preempted, or moved to another runqueue) to the moment it is
//! picked or taken off that queue. So `wait_sum / wait_count` is the mean
//! scheduling delay (close to `perf sched latency`'s average delay, which
//! counts only the waits that follow a wakeup) and `wait_max` the worst
//! single one. A migration ends a wait on the old
//! queue and starts one on the new, and a preempted task that is picked
//! again at once counts a wait of 0, as in the kernel.

use crate::observe::Observer;
use crate::sched::Scheduler;
use crate::{CpuId, TaskId};

/// The schedstat fields of `struct sched_entity` (2.6.26
/// include/linux/sched.h, `#ifdef CONFIG_SCHEDSTATS`), in ns of the
/// runqueue clock. A start stamp of 0 means "not waiting" / "not asleep",
/// as in the kernel (a stamp taken at clock 0 is therefore lost, as there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedStats {
    /// Clock when the current wait began; 0 when not waiting.
    pub wait_start: u64,
    /// Longest single wait.
    pub wait_max: u64,
    /// Waits ended.
    pub wait_count: u64,
    /// Total time waited.
    pub wait_sum: u64,
    /// Clock when the current (interruptible) sleep began; 0 when awake.
    pub sleep_start: u64,
    /// Longest single sleep.
    pub sleep_max: u64,
    /// Total time asleep (`s64` in the kernel).
    pub sum_sleep_runtime: i64,
    /// Longest stretch charged by one `update_curr`.
    pub exec_max: u64,
    /// Longest run between two picks, counted only when the runqueue held
    /// at least twice the task's weight when it was picked again.
    pub slice_max: u64,
}

impl SchedStats {
    /// Mean wait in ns (`wait_sum / wait_count`), 0 before the first.
    pub fn wait_avg(&self) -> u64 {
        self.wait_sum.checked_div(self.wait_count).unwrap_or(0)
    }
}

impl<O: Observer> Scheduler<O> {
    /// `update_stats_wait_start`: the wait begins at this runqueue's clock.
    pub(crate) fn update_stats_wait_start(&mut self, cpu: CpuId, id: TaskId) {
        let clock = self.rqs[cpu].clock;
        self.tm(id).se.stats.wait_start = clock;
    }

    /// `update_stats_wait_end`: fold the wait into max, count and sum. The
    /// difference is unsigned, as in the kernel.
    pub(crate) fn update_stats_wait_end(&mut self, cpu: CpuId, id: TaskId) {
        let clock = self.rqs[cpu].clock;
        let st = &mut self.tm(id).se.stats;
        let waited = clock.wrapping_sub(st.wait_start);
        st.wait_max = st.wait_max.max(waited);
        st.wait_count = st.wait_count.wrapping_add(1);
        st.wait_sum = st.wait_sum.wrapping_add(waited);
        st.wait_start = 0;
    }

    /// `update_stats_enqueue`: a task queued without the CPU starts waiting
    /// (for the current task an enqueue is a requeue, not a wait).
    pub(crate) fn update_stats_enqueue(&mut self, cpu: CpuId, id: TaskId) {
        if self.tq(cpu, self.tg(id)).curr != Some(id) {
            self.update_stats_wait_start(cpu, id);
        }
    }

    /// `update_stats_dequeue`: taking a waiting task off its queue ends
    /// its wait.
    pub(crate) fn update_stats_dequeue(&mut self, cpu: CpuId, id: TaskId) {
        if self.tq(cpu, self.tg(id)).curr != Some(id) {
            self.update_stats_wait_end(cpu, id);
        }
    }

    /// The CONFIG_SCHEDSTATS block of `dequeue_entity` for a
    /// TASK_INTERRUPTIBLE sleeper: its sleep begins now.
    pub(crate) fn update_stats_sleep_start(&mut self, cpu: CpuId, id: TaskId) {
        let clock = self.rqs[cpu].clock;
        self.tm(id).se.stats.sleep_start = clock;
    }

    /// `enqueue_sleeper`: a woken task's sleep ends; a negative length
    /// (clocks of two runqueues) counts as 0.
    pub(crate) fn enqueue_sleeper(&mut self, cpu: CpuId, id: TaskId) {
        let clock = self.rqs[cpu].clock;
        let st = &mut self.tm(id).se.stats;
        if st.sleep_start == 0 {
            return;
        }
        let mut slept = clock.wrapping_sub(st.sleep_start);
        if (slept as i64) < 0 {
            slept = 0;
        }
        st.sleep_max = st.sleep_max.max(slept);
        st.sleep_start = 0;
        st.sum_sleep_runtime = st.sum_sleep_runtime.wrapping_add(slept as i64);
    }

    /// The `slice_max` block of `set_next_entity`, run before
    /// `prev_sum_exec_runtime` is reset: the run since the task was last
    /// picked counts when the runqueue's load is at least twice the task's
    /// weight (so a task alone, or among lighter ones, records nothing).
    pub(crate) fn update_stats_slice_max(&mut self, cpu: CpuId, id: TaskId) {
        let rq_weight = self.rqs[cpu].load.weight;
        let se = &mut self.tm(id).se;
        if rq_weight >= se.load.weight.saturating_mul(2) {
            let ran = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
            se.stats.slice_max = se.stats.slice_max.max(ran);
        }
    }

    /// The CONFIG_SCHEDSTATS block of `set_task_cpu`: open wait and sleep
    /// stamps move by the difference of the two runqueue clocks, so that
    /// they can be closed against the new one.
    pub(crate) fn migrate_stats(&mut self, id: TaskId, old_cpu: CpuId, new_cpu: CpuId) {
        let offset = self.rqs[old_cpu].clock.wrapping_sub(self.rqs[new_cpu].clock);
        let st = &mut self.tm(id).se.stats;
        if st.wait_start != 0 {
            st.wait_start = st.wait_start.wrapping_sub(offset);
        }
        if st.sleep_start != 0 {
            st.sleep_start = st.sleep_start.wrapping_sub(offset);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::entity::TaskParams;
    use crate::sched::{Deschedule, Scheduler};
    use alloc::vec;
    use cfs_topology::{KernelVersion, SchedDomains};

    /// One CPU, two tasks, every stamp at a known time (ns):
    ///
    /// ```text
    ///  1,000  spawn A                     A waits from 1,000
    ///  3,000  pick A                      A waited 2,000
    ///  5,000  spawn B                     update_curr charges A 2,000; B waits from 5,000
    /// 10,000  A sleeps, pick B            A charged 5,000, asleep from 10,000; B waited 5,000
    /// 50,000  wake A                      A slept 40,000, waits from 50,000; B charged 40,000
    /// 52,000  B preempted, pick A         B charged 2,000, waits from 52,000; A waited 2,000;
    ///                                     A's run 3,000-10,000 counts as a slice (rq load
    ///                                     2,048 >= 2 x 1,024)
    /// 60,000  A sleeps, pick B            A charged 8,000; B waited 8,000; B alone on the
    ///                                     queue at its picks, so it records no slice
    /// ```
    ///
    /// The schedstat code is the same in every profile, so all five must
    /// agree.
    #[test]
    fn waits_sleeps_and_runs_are_stamped_where_the_kernel_stamps_them() {
        for v in KernelVersion::ALL {
            let domains = SchedDomains { version: v, per_cpu: vec![vec![]] };
            let mut s = Scheduler::new(Config::new(v, 1), domains).unwrap();
            let a = s.spawn(1_000, 0, TaskParams::normal()).unwrap();
            assert_eq!(s.schedule(3_000, 0, Deschedule::Preempt).unwrap().next, Some(a));
            let b = s.spawn(5_000, 0, TaskParams::normal()).unwrap();
            assert_eq!(s.task(b).unwrap().se.stats.wait_start, 5_000, "{v:?}");
            assert_eq!(s.schedule(10_000, 0, Deschedule::Sleep).unwrap().next, Some(b));
            s.wake_up(50_000, a, 0, false).unwrap();
            // A ran 7 µs against B's 40 µs plus B's START_DEBIT: A is leftmost.
            assert_eq!(s.schedule(52_000, 0, Deschedule::Preempt).unwrap().next, Some(a), "{v:?}");
            assert_eq!(s.task(b).unwrap().se.stats.wait_start, 52_000, "{v:?}");
            assert_eq!(s.schedule(60_000, 0, Deschedule::Sleep).unwrap().next, Some(b));

            let sa = s.task(a).unwrap().se.stats;
            assert_eq!((sa.wait_count, sa.wait_sum, sa.wait_max, sa.wait_start), (2, 4_000, 2_000, 0), "{v:?}");
            assert_eq!((sa.sleep_max, sa.sum_sleep_runtime, sa.sleep_start), (40_000, 40_000, 60_000), "{v:?}");
            assert_eq!((sa.exec_max, sa.slice_max), (8_000, 7_000), "{v:?}");
            assert_eq!(sa.wait_avg(), 2_000);
            let sb = s.task(b).unwrap().se.stats;
            assert_eq!((sb.wait_count, sb.wait_sum, sb.wait_max, sb.wait_start), (2, 13_000, 8_000, 0), "{v:?}");
            assert_eq!((sb.sleep_max, sb.sum_sleep_runtime, sb.sleep_start), (0, 0, 0), "{v:?}");
            assert_eq!((sb.exec_max, sb.slice_max), (40_000, 0), "{v:?}");
        }
    }

    /// A waiting task moved to another CPU (its affinity changed) ends its
    /// wait on the old queue and starts one on the new, as pull_task's
    /// deactivate / activate do. The mask is written at 8,000 and CPU 0's
    /// migration thread moves B in the schedule() that follows at once:
    /// B waits 5,000-8,000 on CPU 0 and 8,000-9,500 on CPU 1, two waits of
    /// 3,000 and 1,500.
    #[test]
    fn a_move_ends_one_wait_and_starts_another() {
        let v = KernelVersion::V2_6_26;
        let domains = SchedDomains { version: v, per_cpu: vec![vec![], vec![]] };
        let mut s = Scheduler::new(Config::new(v, 2), domains).unwrap();
        let a = s.spawn(1_000, 0, TaskParams::normal()).unwrap();
        assert_eq!(s.schedule(1_000, 0, Deschedule::Preempt).unwrap().next, Some(a));
        let b = s.spawn(5_000, 0, TaskParams::normal()).unwrap();
        s.set_affinity(8_000, b, crate::CpuMask::single(1)).unwrap();
        assert_eq!(s.schedule(8_000, 0, Deschedule::Preempt).unwrap().next, Some(a));
        let st = s.task(b).unwrap().se.stats;
        assert_eq!((st.wait_count, st.wait_sum, st.wait_start), (1, 3_000, 8_000));
        assert_eq!(s.schedule(9_500, 1, Deschedule::Preempt).unwrap().next, Some(b));
        let st = s.task(b).unwrap().se.stats;
        assert_eq!((st.wait_count, st.wait_sum, st.wait_max, st.wait_start), (2, 4_500, 3_000, 0));
    }

    /// set_task_cpu moves open stamps by old clock - new clock, and leaves
    /// closed (zero) ones alone.
    #[test]
    fn a_move_between_runqueue_clocks_shifts_the_open_stamps() {
        let v = KernelVersion::V2_6_26;
        let domains = SchedDomains { version: v, per_cpu: vec![vec![], vec![]] };
        let mut s = Scheduler::new(Config::new(v, 2), domains).unwrap();
        let a = s.spawn(1_000, 0, TaskParams::normal()).unwrap();
        s.rqs[0].clock = 9_000;
        s.rqs[1].clock = 4_000;
        s.tm(a).se.stats.sleep_start = 8_000;
        s.tm(a).se.stats.wait_start = 0;
        s.migrate_stats(a, 0, 1);
        // 8,000 on CPU 0's clock is 3,000 on CPU 1's (5,000 behind).
        assert_eq!((s.task(a).unwrap().se.stats.sleep_start, s.task(a).unwrap().se.stats.wait_start), (3_000, 0));
        s.tm(a).se.stats.wait_start = 3_500;
        s.migrate_stats(a, 1, 0);
        assert_eq!((s.task(a).unwrap().se.stats.sleep_start, s.task(a).unwrap().se.stats.wait_start), (8_000, 8_500));
    }

    /// A sleep measured against a runqueue clock behind the stamp counts
    /// as 0 (`(s64)delta < 0`), not as 2^64 - x. (`<= 0` would be the same
    /// test: a zero-length sleep counts 0 either way.)
    #[test]
    fn a_negative_sleep_counts_as_zero() {
        let v = KernelVersion::V2_6_26;
        let domains = SchedDomains { version: v, per_cpu: vec![vec![]] };
        let mut s = Scheduler::new(Config::new(v, 1), domains).unwrap();
        let a = s.spawn(1_000, 0, TaskParams::normal()).unwrap();
        s.tm(a).se.stats.sleep_start = 5_000;
        s.enqueue_sleeper(0, a);
        let st = s.task(a).unwrap().se.stats;
        assert_eq!((st.sleep_start, st.sleep_max, st.sum_sleep_runtime), (0, 0, 0));
    }
}
