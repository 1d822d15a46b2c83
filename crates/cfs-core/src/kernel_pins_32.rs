//! Unit pins of the 2.6.32-rc1 / 2.6.32 fair-class paths against the
//! kernel source (test-only module), on hand-built runqueue states.
//!
//! Each test sets vruntimes, min_vruntime and runtimes directly, runs one
//! ported function and compares with what the kernel's code gives for the
//! same state; the working is in the comments. Kernel lines are 2.6.32
//! (22763c5c) unless marked rc1 (17d857be):
//! - update_min_vruntime sched_fair.c:288-307; place_entity :699-736;
//! - dequeue_entity :778-806 (clear_buddies, update_min_vruntime);
//!   sched.c enqueue_task/dequeue_task :1863-1888, put_prev_task :5353-5374;
//! - check_preempt_tick :811-845 (rc1 :811-825); pick_next_entity :881-898
//!   (rc1 :861-871 + pick_next_task_fair's __clear_buddies(NULL) :1666);
//! - adaptive_gran / wakeup_gran / wakeup_preempt_entity :1497-1570;
//! - check_preempt_wakeup :1591-1674 (rc1 :1565-1645);
//! - task_new_fair :1876-1903; yield_task_fair :1055-1090;
//! - task_hot sched.c:2033-2057 (rc1 :2003-2027); idle_balance :4426-4455;
//!   load_balance_newidle :4282-4420; update_sg_lb_stats :3704-3791,
//!   update_sd_lb_stats :3801-3860, fix_small_imbalance :3868-3925,
//!   calculate_imbalance :3932-3965, find_busiest_group :3993-4068,
//!   find_busiest_queue :4074-4103.

extern crate std;

use crate::balance::CpuIdleType;
use crate::config::Config;
use crate::entity::{CurrentState, TaskId, TaskParams, TaskState};
use crate::observe::{Event, MigrateReason, Observer};
use crate::sched::{Deschedule, Scheduler};
use crate::tunables::Tunables;
use crate::weights::Policy;
use alloc::vec;
use alloc::vec::Vec;
use cfs_topology::{CpuMask, DomainLevel, Host, KernelVersion, SchedDomains, SdFlags};

const RC1: KernelVersion = KernelVersion::V2_6_32Rc1;
const V32: KernelVersion = KernelVersion::V2_6_32;
const MS: u64 = 1_000_000;
/// Any clock value for the setups (only deltas matter).
const T0: u64 = 7_000_000_000;
/// The 2.6.32 default sched_features (kernel-reference.md §4.4).
const DEF: u32 = 15_834_235;
const GENTLE: u32 = 1 << 1;
const NORMALIZED: u32 = 1 << 2;
const START_DEBIT: u32 = 1 << 3;
const WAKEUP_PREEMPT: u32 = 1 << 4;
const ADAPTIVE: u32 = 1 << 5;
const ASYM: u32 = 1 << 6;
const WAKEUP_SYNC: u32 = 1 << 7;
const WAKEUP_OVERLAP: u32 = 1 << 8;
const WAKEUP_RUNNING: u32 = 1 << 9;
const NEXT_BUDDY: u32 = 1 << 14;
const LAST_BUDDY: u32 = 1 << 15;
const HRTICK: u32 = 1 << 18;

/// `n` CPUs without domains (tunables scaled for `n`), clocks at T0.
fn sched(v: KernelVersion, n: usize, mask: u32) -> Scheduler<()> {
    let c = Config::new(v, n).with_features_mask(mask).unwrap();
    let mut s = Scheduler::new(c, SchedDomains { version: v, per_cpu: vec![vec![]; n] }).unwrap();
    for cpu in 0..n {
        s.set_clock(cpu, T0);
    }
    s
}

/// Forgets what the setup calls left behind: buddies and need_resched.
fn quiet<O: Observer>(s: &mut Scheduler<O>, cpu: usize) {
    s.rqs[cpu].cfs.next = None;
    s.rqs[cpu].cfs.last = None;
    s.rqs[cpu].need_resched = false;
}

/// A running task on `cpu` at vruntime `v` (accounted up to T0).
fn running<O: Observer>(s: &mut Scheduler<O>, cpu: usize, nice: i32, v: u64) -> TaskId {
    assert!(s.rqs[cpu].curr.is_none());
    let id = s.spawn(T0, cpu, TaskParams::normal().nice(nice)).unwrap();
    s.do_schedule(T0, cpu, Deschedule::Preempt);
    assert_eq!(s.rqs[cpu].curr, Some(id));
    s.tm(id).se.vruntime = v;
    quiet(s, cpu);
    id
}

/// A queued task on `cpu` at vruntime `v` (re-keyed in the tree).
fn queued<O: Observer>(s: &mut Scheduler<O>, cpu: usize, nice: i32, policy: Policy, v: u64) -> TaskId {
    let id = s.spawn(T0, cpu, TaskParams::normal().nice(nice).policy(policy)).unwrap();
    s.dequeue_tree(cpu, id);
    s.tm(id).se.vruntime = v;
    s.enqueue_tree(cpu, id);
    quiet(s, cpu);
    id
}

/// A sleeping task whose CPU is `cpu`, at vruntime `v`.
fn sleeping<O: Observer>(s: &mut Scheduler<O>, cpu: usize, nice: i32, policy: Policy, v: u64) -> TaskId {
    let id = s.spawn(T0, cpu, TaskParams::normal().nice(nice).policy(policy)).unwrap();
    s.deactivate_task(cpu, id, false);
    let t = s.tm(id);
    t.state = TaskState::Sleeping;
    t.se.vruntime = v;
    quiet(s, cpu);
    id
}

fn v(s: &Scheduler<()>, id: TaskId) -> u64 {
    s.t(id).se.vruntime
}

// ---------------------------------------------------------------------
// update_min_vruntime / update_curr
// ---------------------------------------------------------------------

#[test]
fn update_min_vruntime_follows_curr_and_leftmost_and_never_goes_back() {
    let m = 1_000 * MS;
    for ver in [RC1, V32] {
        let mut s = sched(ver, 1, DEF);
        let c = running(&mut s, 0, 0, m + 5 * MS);
        s.rqs[0].cfs.min_vruntime = m;
        // curr only (empty tree): max(m, curr) = m + 5 ms.
        s.update_min_vruntime(0);
        assert_eq!(s.rqs[0].cfs.min_vruntime, m + 5 * MS);
        // curr and a leftmost behind it: max(m + 5, min(m + 5, m + 7)) stays; with the
        // leftmost at m + 6 and curr moved to m + 9: min(9, 6) = 6 -> m + 6.
        let l = queued(&mut s, 0, 0, Policy::Normal, m + 7 * MS);
        s.update_min_vruntime(0);
        assert_eq!(s.rqs[0].cfs.min_vruntime, m + 5 * MS);
        s.dequeue_tree(0, l);
        s.tm(l).se.vruntime = m + 6 * MS;
        s.enqueue_tree(0, l);
        assert_eq!(s.rqs[0].cfs.min_vruntime, m + 5 * MS, "the tree ops no longer move it");
        s.tm(c).se.vruntime = m + 9 * MS;
        s.update_min_vruntime(0);
        assert_eq!(s.rqs[0].cfs.min_vruntime, m + 6 * MS);
        // Both behind min_vruntime: it stays (monotonic).
        s.tm(c).se.vruntime = m;
        s.update_min_vruntime(0);
        assert_eq!(s.rqs[0].cfs.min_vruntime, m + 6 * MS);
        // update_curr: 3 ms of a nice-0 curr at m -> m + 3 ms; min(m + 3, m + 6) < m + 6:
        // unchanged. 2 ms more of a nice 5 curr would be calc_delta_fair(2 ms, 335).
        s.set_clock(0, T0 + 3 * MS);
        s.update_curr(0, None);
        assert_eq!(v(&s, c), m + 3 * MS);
        assert_eq!(s.rqs[0].cfs.min_vruntime, m + 6 * MS);
        // 5 ms more: curr at m + 8, leftmost m + 6 -> m + 6; then the leftmost leaves
        // (dequeue_entity calls update_min_vruntime): curr alone -> m + 8.
        s.set_clock(0, T0 + 8 * MS);
        s.update_curr(0, None);
        s.deactivate_task(0, l, false);
        assert_eq!(s.rqs[0].cfs.min_vruntime, m + 8 * MS);
        // A zero delta does nothing, not even exec_start (sched_fair.c:507-508).
        let before = s.t(c).se.clone();
        s.update_curr(0, None);
        assert_eq!(s.t(c).se, before);
    }
    // No curr: the leftmost alone decides, across the u64 wrap.
    let mut s = sched(V32, 1, DEF);
    let top = u64::MAX - MS; // 1 ms before the wrap
    s.rqs[0].cfs.min_vruntime = top;
    let _l = queued(&mut s, 0, 0, Policy::Normal, top.wrapping_add(3 * MS));
    s.update_min_vruntime(0);
    assert_eq!(s.rqs[0].cfs.min_vruntime, 2 * MS - 1, "wrapped: top + 3 ms");
}

// ---------------------------------------------------------------------
// place_entity
// ---------------------------------------------------------------------

#[test]
fn wakeup_placement_gentle_sleepers_get_half_a_latency() {
    // One CPU: latency 5 ms. Sleeper credit thresh = 5 ms >> 1 (GENTLE) = 2.5 ms:
    // vruntime = max(se.vruntime, min_vruntime - thresh).
    let m = 1_000 * MS;
    let cases: [(u32, i32, Policy, u64, u64); 8] = [
        // long sleeper: m - 2.5 ms
        (DEF, 0, Policy::Normal, m - 100 * MS, m - 2_500_000),
        // short sleeper keeps its own vruntime (never backwards)
        (DEF, 0, Policy::Normal, m - MS, m - MS),
        // GENTLE off: the full latency
        (DEF - GENTLE, 0, Policy::Normal, m - 100 * MS, m - 5 * MS),
        // FAIR_SLEEPERS off: min_vruntime itself
        (DEF - 1, 0, Policy::Normal, m - 100 * MS, m),
        // NORMALIZED_SLEEPER on, nice 5: calc_delta_fair(5 ms, {335, 12820798}):
        // 5e6 * 1024 = 5.12e9 > 2^32 -> SRR(SRR(5.12e9, 16) = 78125 * 12820798, 16)
        // = 15_283_582; halved: 7_641_791.
        (DEF + NORMALIZED, 5, Policy::Normal, m - 100 * MS, m - 7_641_791),
        // ... but a SCHED_IDLE task is not normalised: 2.5 ms.
        (DEF + NORMALIZED, 0, Policy::Idle, m - 100 * MS, m - 2_500_000),
        // ... and a nice-0 one is the identity.
        (DEF + NORMALIZED, 0, Policy::Normal, m - 100 * MS, m - 2_500_000),
        // wrap: min_vruntime 1 ms past 2^64 (m' = 1 ms) -> 1 ms - 2.5 ms wraps below 2^64.
        (DEF, 0, Policy::Normal, 0u64.wrapping_sub(100 * MS), 0u64.wrapping_sub(1_500_000)),
    ];
    for (i, (mask, nice, policy, old, want)) in cases.into_iter().enumerate() {
        let mut s = sched(V32, 1, mask);
        s.rqs[0].cfs.min_vruntime = if i == 7 { MS } else { m };
        let id = sleeping(&mut s, 0, nice, policy, old);
        s.place_entity(0, id, false);
        assert_eq!(v(&s, id), want, "case {i}");
    }
}

#[test]
fn fork_placement_start_debit_is_the_vslice_and_never_backwards() {
    // A new nice-0 task on a queue holding one nice-0 task (not counted yet):
    // sched_vslice = calc_delta_fair(sched_slice) with nr = 1 + 1 -> period 5 ms and
    // W' = 2048: inv = 1 + (2^32 - 1024) / 2049 = 2_096_129; 5e6 * 1024 > 2^32 ->
    // SRR(78125 * 2_096_129, 16) = 2_498_780; nice 0 -> vslice = slice.
    let m = 1_000 * MS;
    let mut s = sched(V32, 1, DEF);
    let _q = queued(&mut s, 0, 0, Policy::Normal, m);
    s.rqs[0].cfs.min_vruntime = m;
    let id = sleeping(&mut s, 0, 0, Policy::Normal, 0);
    s.place_entity(0, id, true);
    assert_eq!(v(&s, id), m + 2_498_780);
    // Initial placement is also never backwards (2.6.32 applies max_vruntime to it).
    s.tm(id).se.vruntime = m + 4 * MS;
    s.place_entity(0, id, true);
    assert_eq!(v(&s, id), m + 4 * MS);
    // nice 5: slice = calc_delta_mine(5 ms, 335, {1359}): inv = 1 + (2^32 - 679) / 1360 =
    // 3_158_064; 5e6 * 335 = 1.675e9 < 2^32 -> SRR(1.675e9 * 3_158_064, 32) = 1_231_618;
    // vslice = calc_delta_fair(1_231_618, {335, 12820798}) = 3_764_707.
    let id5 = sleeping(&mut s, 0, 5, Policy::Normal, 0);
    s.place_entity(0, id5, true);
    assert_eq!(v(&s, id5), m + 3_764_707);
    // START_DEBIT off: min_vruntime.
    let mut s = sched(V32, 1, DEF - START_DEBIT);
    s.rqs[0].cfs.min_vruntime = m;
    let id = sleeping(&mut s, 0, 0, Policy::Normal, 0);
    s.place_entity(0, id, true);
    assert_eq!(v(&s, id), m);
}

// ---------------------------------------------------------------------
// enqueue / dequeue / put_prev statistics
// ---------------------------------------------------------------------

#[test]
fn sleep_statistics_read_the_sum_before_dequeue_entity_updates_it() {
    // dequeue_task (sched.c:1873-1888) folds avg_overlap from sum_exec_runtime *before*
    // the class's dequeue_entity -> update_curr: A has sum 5 ms (last update at T0),
    // last_wakeup 4 ms, and sleeps 3 ms later: sample = 5 - 4 = 1 ms (not 8 - 4),
    // avg_overlap = 1e6 >> 3 = 125_000; then update_curr brings sum to 8 ms.
    let mut s = sched(V32, 1, DEF);
    let a = running(&mut s, 0, 0, 0);
    let se = &mut s.tm(a).se;
    (se.sum_exec_runtime, se.prev_sum_exec_runtime, se.last_wakeup) = (5 * MS, 5 * MS, 4 * MS);
    s.do_schedule(T0 + 3 * MS, 0, Deschedule::Sleep);
    let se = &s.t(a).se;
    assert_eq!(se.avg_overlap, 125_000);
    assert_eq!(se.last_wakeup, 0);
    assert_eq!(se.sum_exec_runtime, 8 * MS);
    // put_prev_task then averaged the stint (8 - 5 = 3 ms) into avg_running and, as A
    // sleeps, a 0: 3e6 >> 3 = 375_000, then 375_000 + (-375_000 >> 3) = 328_125.
    assert_eq!(se.avg_running, 328_125);
    // Without a stamp the sleep folds wakeup_granularity (1 ms at f = 1) into
    // avg_wakeup instead: 1 ms -> unchanged at 1 ms; from 200 us: 200_000 + 100_000 = 300_000.
    let mut s = sched(V32, 1, DEF);
    let a = running(&mut s, 0, 0, 0);
    s.tm(a).se.avg_wakeup = 200_000;
    s.do_schedule(T0 + MS, 0, Deschedule::Sleep);
    assert_eq!(s.t(a).se.avg_wakeup, 300_000);
    assert_eq!(s.t(a).se.avg_overlap, 0);
    // enqueue_task with wakeup: start_runtime = sum_exec_runtime.
    s.try_to_wake_up(T0 + 2 * MS, a, 0, false, true);
    assert_eq!(s.t(a).se.start_runtime, MS);
}

#[test]
fn preemption_grows_avg_overlap_by_the_stint_capped_at_twice_the_cost() {
    // put_prev_task, prev still TASK_RUNNING: avg_overlap += (min(stint, 2 * cost) - avg) / 8.
    // The stint is read before put_prev_entity's update_curr, i.e. up to the last update.
    for (cost, stint, want_overlap) in [
        (500_000u32, 300_000u64, 37_500u64), // 300_000 >> 3
        (500_000, 5 * MS, 125_000),          // capped at 1 ms
        // migration_cost = -1 is 4_294_967_295 as an unsigned int; 2 * it wraps to
        // 4_294_967_294 in unsigned int arithmetic: min(5 s, that) >> 3 = 536_870_911.
        (Tunables::ALWAYS_HOT, 5_000 * MS, 536_870_911),
    ] {
        let mut s = sched(V32, 1, DEF);
        s.cfg.tunables.migration_cost = cost;
        let a = running(&mut s, 0, 0, 0);
        let _b = queued(&mut s, 0, 0, Policy::Normal, 0);
        // Accounted by a tick at T0 + stint, preempted 1 us later (the 1 us is not seen).
        s.scheduler_tick(T0 + stint, 0);
        s.do_schedule(T0 + stint + 1_000, 0, Deschedule::Preempt);
        let se = &s.t(a).se;
        assert_eq!(se.avg_overlap, want_overlap, "cost {cost} stint {stint}");
        assert_eq!(se.avg_running, stint >> 3);
    }
}

#[test]
fn a_task_preempted_after_setting_its_sleep_state_is_not_running_to_put_prev_task() {
    // put_prev_task (22763c5c sched.c:5357-5375) tests p->state == TASK_RUNNING. A
    // task that set TASK_INTERRUPTIBLE (set_current_state) and is preempted before it
    // calls schedule() itself stays queued (PREEMPT_ACTIVE skips the dequeue) but is
    // not TASK_RUNNING: its 3 ms stint goes into avg_running, then a 0, and
    // avg_overlap is left alone: 3e6 >> 3 = 375_000, 375_000 - (375_000 >> 3) =
    // 328_125. Left TASK_RUNNING, the same preemption grows avg_overlap by
    // min(3 ms, 2 x 0.5 ms) >> 3 = 125_000 and avg_running stays at 375_000.
    for (state, want_running, want_overlap) in
        [(CurrentState::Interruptible, 328_125, 0), (CurrentState::Running, 375_000, 125_000)]
    {
        let mut s = sched(V32, 1, DEF);
        let a = running(&mut s, 0, 0, 0);
        let _b = queued(&mut s, 0, 0, Policy::Normal, 0);
        s.scheduler_tick(T0 + 3 * MS, 0);
        s.set_current_state(a, state).unwrap();
        s.do_schedule(T0 + 3 * MS, 0, Deschedule::Preempt);
        let se = &s.t(a).se;
        assert!(se.on_rq, "{state:?}: a preempted task stays queued");
        assert_eq!((se.avg_running, se.avg_overlap), (want_running, want_overlap), "{state:?}");
    }
}

// ---------------------------------------------------------------------
// wakeup_gran / wakeup_preempt_entity
// ---------------------------------------------------------------------

/// curr (nice `cn`) has run `this_run` in this slice; the wakee (nice `wn`,
/// avg_wakeup `aw`) is queued (nr_running = 2). Returns wakeup_gran(curr, se).
fn gran(mask: u32, cn: i32, wn: i32, this_run: u64, aw: u64) -> u64 {
    let mut s = sched(V32, 1, mask);
    let c = running(&mut s, 0, cn, 0);
    let p = queued(&mut s, 0, wn, Policy::Normal, 0);
    let se = &mut s.tm(c).se;
    se.sum_exec_runtime = se.prev_sum_exec_runtime + this_run;
    s.tm(p).se.avg_wakeup = aw;
    s.wakeup_gran_32(0, c, p)
}

#[test]
fn wakeup_gran_adaptive_and_asymmetric() {
    // ADAPTIVE_GRAN: expected = 2 * avg_wakeup * nr_running = 2 * 100 us * 2 = 400 us;
    // gran = min(expected - this_run (0 if this_run >= expected), 1 ms).
    assert_eq!(gran(DEF, 0, 0, 150_000, 100_000), 250_000);
    assert_eq!(gran(DEF, 0, 0, 399_999, 100_000), 1);
    assert_eq!(gran(DEF, 0, 0, 400_000, 100_000), 0);
    assert_eq!(gran(DEF, 0, 0, 900_000, 100_000), 0);
    // avg_wakeup = 1 ms (its fork value): 4 ms - 150 us, clipped to wakeup_gran = 1 ms.
    assert_eq!(gran(DEF, 0, 0, 150_000, MS), MS);
    // ADAPTIVE_GRAN off: always 1 ms.
    assert_eq!(gran(DEF - ADAPTIVE, 0, 0, 399_999, 100_000), MS);
    // ASYM_GRAN converts with the *wakee's* weight: nice 5 wakee, 250 us ->
    // calc_delta_fair(250_000, {335, 12820798}) = SRR(2.56e8 * 12820798, 32) = 764_179.
    assert_eq!(gran(DEF, 0, 5, 150_000, 100_000), 764_179);
    // ... a nice -5 curr does not matter with ASYM_GRAN (nice-0 wakee: 250_000) ...
    assert_eq!(gran(DEF, -5, 0, 150_000, 100_000), 250_000);
    // ... but without it curr's weight is used: calc_delta_fair(250_000, {3121,
    // 1376151}) = 82_025; 1 ms -> 328_100.
    assert_eq!(gran(DEF - ASYM, -5, 0, 150_000, 100_000), 82_025);
    assert_eq!(gran(DEF - ASYM - ADAPTIVE, -5, 5, 0, 0), 328_100);
    // ... and then the wakee's weight is ignored: nice 5 wakee, nice 0 curr: 1 ms.
    assert_eq!(gran(DEF - ASYM - ADAPTIVE, 0, 5, 0, 0), MS);
    assert_eq!(gran(DEF - ADAPTIVE, 0, 5, 0, 0), 3_056_716);
}

#[test]
fn wakeup_preempt_entity_at_zero_gran_and_gran_plus_one() {
    // gran = 250 us (the first adaptive case above): -1 for vdiff <= 0 (2.6.32 uses <=),
    // 0 up to gran, 1 beyond.
    let x = 5_000 * MS;
    for (vdiff, want) in [(-1i64, -1), (0, -1), (1, 0), (250_000, 0), (250_001, 1)] {
        let mut s = sched(V32, 1, DEF);
        let c = running(&mut s, 0, 0, x);
        let p = queued(&mut s, 0, 0, Policy::Normal, x.wrapping_sub(vdiff as u64));
        let se = &mut s.tm(c).se;
        se.sum_exec_runtime = se.prev_sum_exec_runtime + 150_000;
        s.tm(p).se.avg_wakeup = 100_000;
        assert_eq!(s.wakeup_preempt_entity_32(0, c, p), want, "vdiff {vdiff}");
    }
}

// ---------------------------------------------------------------------
// check_preempt_wakeup and the buddies
// ---------------------------------------------------------------------

/// curr at x with `extra` more queued tasks far right; p queued at x - lead.
/// Runs check_preempt_wakeup(p) and returns (need_resched, last == curr, next == p).
fn cpw(ver: KernelVersion, mask: u32, lead: u64, extra: usize, sync: bool, fork: bool) -> (bool, bool, bool) {
    let x = 5_000 * MS;
    let mut s = sched(ver, 1, mask);
    let c = running(&mut s, 0, 0, x);
    for _ in 0..extra {
        queued(&mut s, 0, 0, Policy::Normal, x + 100 * MS);
    }
    let p = queued(&mut s, 0, 0, Policy::Normal, x - lead);
    // ADAPTIVE_GRAN: this_run 0 and avg_wakeup 1 ms -> gran = 1 ms at 1 CPU.
    s.check_preempt_wakeup_32(0, p, sync, fork);
    (s.rqs[0].need_resched, s.rqs[0].cfs.last == Some(c), s.rqs[0].cfs.next == Some(p))
}

#[test]
fn last_buddy_rc1_on_every_wakeup_final_only_when_preempting_at_scale() {
    // rc1 (sched_fair.c:1585-1596): set_last_buddy(curr) before any preemption test.
    assert_eq!(cpw(RC1, DEF, 0, 0, false, false), (false, true, false));
    assert_eq!(cpw(RC1, DEF, MS + 1, 0, false, false), (true, true, false));
    assert_eq!(cpw(RC1, DEF, 0, 0, false, true), (false, true, false), "also on fork");
    // final (:1658-1673): only when wakeup_preempt_entity == 1 and nr_running >=
    // sched_nr_latency (5): with 2 tasks a preempting wakeup sets no buddy...
    assert_eq!(cpw(V32, DEF, MS + 1, 0, false, false), (true, false, false));
    // ... with 5 (curr + 3 + p) it does; a wakeup within the gran sets none.
    assert_eq!(cpw(V32, DEF, MS + 1, 3, false, false), (true, true, false));
    assert_eq!(cpw(V32, DEF, MS, 3, false, false), (false, false, false));
    // 4 tasks: below scale.
    assert_eq!(cpw(V32, DEF, MS + 1, 2, false, false), (true, false, false));
    // LAST_BUDDY off: never.
    assert_eq!(cpw(RC1, DEF - LAST_BUDDY, MS + 1, 0, false, false), (true, false, false));
    assert_eq!(cpw(V32, DEF - LAST_BUDDY, MS + 1, 3, false, false), (true, false, false));
    // NEXT_BUDDY: rc1 on every non-fork wakeup; final only at scale.
    assert_eq!(cpw(RC1, DEF + NEXT_BUDDY, 0, 0, false, false), (false, true, true));
    assert_eq!(cpw(RC1, DEF + NEXT_BUDDY, 0, 0, false, true), (false, true, false));
    assert_eq!(cpw(V32, DEF + NEXT_BUDDY, 0, 0, false, false), (false, false, false));
    assert_eq!(cpw(V32, DEF + NEXT_BUDDY, 0, 3, false, false), (false, false, true));
    assert_eq!(cpw(V32, DEF + NEXT_BUDDY, 0, 3, false, true), (false, false, false));
    // WAKEUP_PREEMPT off: no preemption, (rc1) buddies still set.
    assert_eq!(cpw(RC1, DEF - WAKEUP_PREEMPT, 10 * MS, 0, false, false), (false, true, false));
    assert_eq!(cpw(V32, DEF - WAKEUP_PREEMPT, 10 * MS, 3, false, false), (false, false, false));
}

#[test]
fn check_preempt_wakeup_early_returns_and_the_off_by_default_modes() {
    let x = 5_000 * MS;
    for ver in [RC1, V32] {
        // need_resched already set: return after the buddies (rc1 still sets last).
        let mut s = sched(ver, 1, DEF);
        let c = running(&mut s, 0, 0, x);
        let p = queued(&mut s, 0, 0, Policy::Normal, x - 10 * MS);
        s.rqs[0].need_resched = true;
        s.check_preempt_wakeup_32(0, p, false, false);
        assert_eq!(s.rqs[0].cfs.last == Some(c), ver == RC1);
        // A non-SCHED_NORMAL wakee never preempts; a SCHED_IDLE curr always is.
        for (cp, pp, want) in [
            (Policy::Normal, Policy::Batch, false),
            (Policy::Normal, Policy::Idle, false),
            (Policy::Idle, Policy::Normal, true),
            (Policy::Batch, Policy::Normal, true),
        ] {
            let mut s = sched(ver, 1, DEF);
            let c = running(&mut s, 0, 0, x);
            s.tm(c).policy = cp;
            // The wakee is *right* of curr: only the policy rule can preempt.
            let p = queued(&mut s, 0, 0, pp, x + 10 * MS);
            s.check_preempt_wakeup_32(0, p, false, false);
            let want = want && cp == Policy::Idle;
            assert_eq!(s.rqs[0].need_resched, want, "{ver} curr {cp:?} wakee {pp:?}");
            // set_last_buddy skips a SCHED_IDLE task (rc1).
            assert_eq!(s.rqs[0].cfs.last == Some(c), ver == RC1 && cp != Policy::Idle);
        }
        // WAKEUP_SYNC: a sync wakeup preempts whatever the vruntimes.
        assert!(cpw(ver, DEF + WAKEUP_SYNC, 0, 0, true, false).0);
        assert!(!cpw(ver, DEF + WAKEUP_SYNC, 0, 0, false, false).0);
        // WAKEUP_OVERLAP: both avg_overlap < migration_cost (fresh tasks: 0).
        assert!(cpw(ver, DEF + WAKEUP_OVERLAP, 0, 0, false, false).0);
        // WAKEUP_RUNNING: p.avg_running < curr.avg_running -> next = p and resched.
        let mut s = sched(ver, 1, DEF + WAKEUP_RUNNING);
        let c = running(&mut s, 0, 0, x);
        s.tm(c).se.avg_running = 1_000;
        let p = queued(&mut s, 0, 0, Policy::Normal, x + 10 * MS);
        s.tm(p).se.avg_running = 999;
        s.check_preempt_wakeup_32(0, p, false, false);
        assert!(s.rqs[0].need_resched);
        assert_eq!(s.rqs[0].cfs.next, Some(p));
    }
    // WAKEUP_OVERLAP compares with migration_cost as an unsigned int: -1 is
    // 4_294_967_295, so overlaps of 1 s still count as small.
    let mut s = sched(V32, 1, DEF + WAKEUP_OVERLAP);
    s.cfg.tunables.migration_cost = Tunables::ALWAYS_HOT;
    let c = running(&mut s, 0, 0, x);
    s.tm(c).se.avg_overlap = 1_000 * MS;
    let p = queued(&mut s, 0, 0, Policy::Normal, x + 10 * MS);
    s.check_preempt_wakeup_32(0, p, false, false);
    assert!(s.rqs[0].need_resched);
}

/// left L at x, next buddy N at x + dn, last buddy B at x + db (curr none).
/// Returns (picked, next still set, last still set).
fn pick(ver: KernelVersion, dn: u64, db: u64) -> (char, bool, bool) {
    let x = 5_000 * MS;
    let mut s = sched(ver, 1, DEF);
    let l = queued(&mut s, 0, 0, Policy::Normal, x);
    let n = queued(&mut s, 0, 0, Policy::Normal, x + dn);
    let b = queued(&mut s, 0, 0, Policy::Normal, x + db);
    (s.rqs[0].cfs.next, s.rqs[0].cfs.last) = (Some(n), Some(b));
    let (chosen, buddy) = s.pick_next_entity_32(0).unwrap();
    // The flag the Pick event carries: a buddy was taken over the leftmost.
    assert_eq!(buddy, chosen != l);
    let name = if chosen == l {
        'L'
    } else if chosen == n {
        'N'
    } else {
        assert_eq!(chosen, b);
        'B'
    };
    assert_eq!(s.rqs[0].cfs.curr, Some(chosen));
    (name, s.rqs[0].cfs.next == Some(n), s.rqs[0].cfs.last == Some(b))
}

#[test]
fn pick_next_entity_rc1_vs_final() {
    // A buddy "wins" when wakeup_preempt_entity(buddy, left) < 1: buddy - left <=
    // wakeup_gran(buddy, left) = 1 ms (no cfs_rq->curr at pick time, so no
    // ADAPTIVE_GRAN; nice-0 left, so no ASYM scaling).
    // Both close: rc1 returns next first; final lets last override next.
    assert_eq!(pick(RC1, 500_000, 800_000), ('N', false, false), "rc1 clears both");
    assert_eq!(pick(V32, 500_000, 800_000), ('B', true, false), "final clears the chosen only");
    // last 1 ms + 1 away: rc1 still next; final next (last stays set).
    assert_eq!(pick(RC1, 500_000, MS + 1), ('N', false, false));
    assert_eq!(pick(V32, 500_000, MS + 1), ('N', false, true));
    // next too far, last at exactly 1 ms: rc1 and final take last.
    assert_eq!(pick(RC1, MS + 1, MS), ('B', false, false));
    assert_eq!(pick(V32, MS + 1, MS), ('B', true, false));
    // both too far: the leftmost; rc1 forgets both buddies, final keeps both.
    assert_eq!(pick(RC1, MS + 1, 2 * MS), ('L', false, false));
    assert_eq!(pick(V32, MS + 1, 2 * MS), ('L', true, true));
}

// ---------------------------------------------------------------------
// check_preempt_tick
// ---------------------------------------------------------------------

/// curr C (nice 0) has run `ran` in this slice at vruntime x + `lead` over a
/// queued nice-0 L at x; one periodic tick. Returns need_resched.
fn tick(ver: KernelVersion, mask: u32, ran: u64, lead: i64) -> bool {
    let x = 5_000 * MS;
    let mut s = sched(ver, 1, mask);
    let c = running(&mut s, 0, 0, x.wrapping_add(lead as u64));
    let _l = queued(&mut s, 0, 0, Policy::Normal, x);
    let se = &mut s.tm(c).se;
    se.sum_exec_runtime = se.prev_sum_exec_runtime + ran;
    s.scheduler_tick(T0, 0); // update_curr adds nothing (clock == exec_start)
    s.rqs[0].need_resched
}

#[test]
fn check_preempt_tick_slice_and_the_final_vruntime_lead_rule() {
    // ideal = sched_slice = calc_delta_mine(5 ms, 1024, {2048}) = 2_498_780 (see the fork
    // placement pin); min_granularity = 1 ms.
    let ideal = 2_498_780i64;
    for ver in [RC1, V32] {
        assert!(!tick(ver, DEF, ideal as u64, 0));
        assert!(tick(ver, DEF, ideal as u64 + 1, 0));
    }
    // final only (f685ceacab0): ran >= min_gran and curr.v - left.v > ideal.
    assert!(tick(V32, DEF, MS, ideal + 1));
    assert!(!tick(RC1, DEF, MS, ideal + 1));
    assert!(!tick(V32, DEF, MS, ideal));
    assert!(!tick(V32, DEF, MS - 1, 100 * MS as i64));
    assert!(!tick(V32, DEF - WAKEUP_PREEMPT, MS, 100 * MS as i64));
    // The s64 lead is compared with an unsigned long ideal_runtime: a curr 1 ms
    // *behind* the leftmost (lead -1 ms, read as 2^64 - 1e6) is rescheduled too.
    assert!(tick(V32, DEF, MS, -(MS as i64)));
    assert!(!tick(RC1, DEF, MS, -(MS as i64)));
    // The slice expiry clears curr's buddies (both versions).
    for ver in [RC1, V32] {
        let mut s = sched(ver, 1, DEF);
        let c = running(&mut s, 0, 0, 0);
        let _l = queued(&mut s, 0, 0, Policy::Normal, 0);
        s.rqs[0].cfs.last = Some(c);
        let se = &mut s.tm(c).se;
        se.sum_exec_runtime = se.prev_sum_exec_runtime + 3 * MS;
        s.scheduler_tick(T0, 0);
        assert!(s.rqs[0].need_resched);
        assert_eq!(s.rqs[0].cfs.last, None);
    }
}

// ---------------------------------------------------------------------
// task_new_fair, yield
// ---------------------------------------------------------------------

#[test]
fn task_new_fair_child_starts_from_curr_and_does_not_resched() {
    let m = 1_000 * MS;
    for (parent_lead, want_child) in [(2 * MS, m + 2_498_780), (3 * MS, m + 3 * MS)] {
        let mut s = sched(V32, 1, DEF);
        let p = running(&mut s, 0, 0, m + parent_lead);
        s.rqs[0].cfs.min_vruntime = m;
        // se.vruntime = curr.vruntime; place_entity(initial): max(that, m + vslice),
        // vslice = 2_498_780 (nr 2, W' 2048).
        let c = s.fork(T0, p, None).unwrap().child;
        assert_eq!(v(&s, c), want_child);
        assert_eq!(v(&s, p), m + parent_lead, "no swap: child_runs_first is 0");
        // No unconditional resched; check_preempt_curr(WF_FORK): the child is right of
        // the parent (vdiff <= 0) -> no preemption.
        assert!(!s.rqs[0].need_resched);
        assert_eq!(s.rqs[0].cfs.next, None);
    }
    // child_runs_first = 1: entity_before(curr, child) -> swap and resched.
    let mut s = sched(V32, 1, DEF);
    s.cfg.tunables.child_runs_first = true;
    let p = running(&mut s, 0, 0, m + 2 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    let c = s.fork(T0, p, None).unwrap().child;
    assert_eq!((v(&s, p), v(&s, c)), (m + 2_498_780, m + 2 * MS));
    assert!(s.rqs[0].need_resched);
    // rc1 sets the last buddy on the fork wakeup too; NEXT_BUDDY skips WF_FORK.
    let mut s = sched(RC1, 1, DEF + NEXT_BUDDY);
    let p = running(&mut s, 0, 0, m);
    let _c = s.fork(T0, p, None).unwrap().child;
    assert_eq!((s.rqs[0].cfs.last, s.rqs[0].cfs.next), (Some(p), None));
}

#[test]
fn yield_clears_curr_buddies_and_compat_goes_past_the_rightmost() {
    let x = 5_000 * MS;
    let mut s = sched(V32, 1, DEF);
    let c = running(&mut s, 0, 0, x);
    let r = queued(&mut s, 0, 0, Policy::Normal, x + 7 * MS);
    (s.rqs[0].cfs.last, s.rqs[0].cfs.next) = (Some(c), Some(r));
    s.yield_task_fair(0);
    assert_eq!((s.rqs[0].cfs.last, s.rqs[0].cfs.next), (None, Some(r)));
    assert_eq!(v(&s, c), x, "SCHED_NORMAL without compat_yield: just update_curr");
    s.cfg.tunables.compat_yield = true;
    s.yield_task_fair(0);
    assert_eq!(v(&s, c), x + 7 * MS + 1);
    // entity_before(rightmost, se) is wrap-safe: a rightmost "below" curr across the wrap.
    let mut s = sched(V32, 1, DEF);
    s.cfg.tunables.compat_yield = true;
    let c = running(&mut s, 0, 0, 5);
    let _r = queued(&mut s, 0, 0, Policy::Normal, u64::MAX - 5);
    s.yield_task_fair(0);
    assert_eq!(v(&s, c), 5, "already rightmost");
}

// ---------------------------------------------------------------------
// hrtick (HRTICK is off by default in 2.6.32)
// ---------------------------------------------------------------------

#[test]
fn hrtick_update_rearms_only_below_nr_latency() {
    let mut c = Config::new(V32, 1).with_features_mask(DEF + HRTICK).unwrap();
    c.hres_timers = true;
    let mut s = Scheduler::new(c, SchedDomains { version: V32, per_cpu: vec![vec![]] }).unwrap();
    let a = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    let _b = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    s.do_schedule(T0, 0, Deschedule::Preempt);
    let cur = s.rqs[0].curr.unwrap();
    // pick_next_task_fair -> hrtick_start_fair: slice 2_498_780 (2 tasks).
    assert_eq!(s.hrtick_expiry(0), Some(T0 + 2_498_780));
    // A third task 1 ms later (hrtick_update, nr 3 < 5): slice(3 nice-0) =
    // calc_delta_mine(5 ms, 1024, {3072}) = 1_666_124, ran 1 ms -> 666_124 left.
    let _c = s.spawn(T0 + MS, 0, TaskParams::normal()).unwrap();
    assert_eq!(s.hrtick_expiry(0), Some(T0 + MS + 666_124));
    // Two more (nr 5 >= sched_nr_latency): enqueue no longer re-arms.
    let _d = s.spawn(T0 + MS, 0, TaskParams::normal()).unwrap();
    let armed = s.hrtick_expiry(0);
    let _e = s.spawn(T0 + MS + 1, 0, TaskParams::normal()).unwrap();
    assert_eq!(s.hrtick_expiry(0), armed);
    assert!(s.t(a).se.on_rq && s.rqs[0].curr == Some(cur));
}

#[test]
fn schedule_leaves_an_armed_hrtick_alone_once_hrtick_is_off() {
    // 2.6.32's schedule(): `if (sched_feat(HRTICK)) hrtick_clear(rq);` (22763c5c
    // sched.c:5432-5433), where 2.6.26 clears unconditionally (bce7f793
    // sched.c:4161). Arm the hrtick with the bit on (two tasks: the slice ends at
    // T0 + 2_498_780, as above), switch the bit off, reschedule 1 ms later: the
    // timer stays armed, and the pick does not re-arm it (hrtick_enabled is false).
    let mut c = Config::new(V32, 1).with_features_mask(DEF + HRTICK).unwrap();
    c.hres_timers = true;
    let mut s = Scheduler::new(c, SchedDomains { version: V32, per_cpu: vec![vec![]] }).unwrap();
    s.spawn(T0, 0, TaskParams::normal()).unwrap();
    s.spawn(T0, 0, TaskParams::normal()).unwrap();
    s.do_schedule(T0, 0, Deschedule::Preempt);
    assert_eq!(s.hrtick_expiry(0), Some(T0 + 2_498_780));
    s.set_features_mask(DEF).unwrap();
    s.do_schedule(T0 + MS, 0, Deschedule::Preempt);
    assert_eq!(s.hrtick_expiry(0), Some(T0 + 2_498_780), "not cleared");
    // With the bit on, the same schedule() clears it and the pick re-arms it.
    s.set_features_mask(DEF + HRTICK).unwrap();
    s.do_schedule(T0 + MS, 0, Deschedule::Preempt);
    assert_ne!(s.hrtick_expiry(0), Some(T0 + 2_498_780));
}

// ---------------------------------------------------------------------
// load balancing on the Nehalem-EP (SIBLING {n, n+8}, MC = socket, NODE = all)
// ---------------------------------------------------------------------

/// Collects the CPU counts of the Scan events.
#[derive(Clone, Debug, Default)]
struct Scans(alloc::vec::Vec<u32>);

impl Observer for Scans {
    fn event(&mut self, _now: u64, ev: &Event) {
        if let Event::Scan { cpus, .. } = ev {
            self.0.push(*cpus);
        }
    }
}

/// A preset host under `ver` with sched_features `mask`, its domains edited
/// by `edit`, recording Scan events; every clock at T0.
fn preset(name: &str, ver: KernelVersion, mask: u32, edit: impl FnOnce(&mut SchedDomains)) -> Scheduler<Scans> {
    let mut d = Host::preset(name).unwrap().build_domains(ver);
    edit(&mut d);
    let n = d.nr_cpus();
    let c = Config::new(ver, n).with_features_mask(mask).unwrap();
    let mut s = Scheduler::with_observer(c, d, Scans::default()).unwrap();
    for cpu in 0..n {
        s.set_clock(cpu, T0);
    }
    s
}

fn nehalem(ver: KernelVersion, edit: impl FnOnce(&mut SchedDomains)) -> Scheduler<Scans> {
    preset("nehalem-ep", ver, DEF, edit)
}

/// `k` queued nice-0 tasks on `cpu`, never run (cache cold: exec_start 0).
fn load<O: Observer>(s: &mut Scheduler<O>, cpu: usize, k: usize) {
    for _ in 0..k {
        let id = s.spawn(T0, cpu, TaskParams::normal()).unwrap();
        assert_eq!(s.t(id).cpu, cpu);
    }
    s.rqs[cpu].need_resched = false;
}

fn fbg<O: Observer>(s: &Scheduler<O>, cpu: usize, level: usize) -> Option<(CpuMask, u64)> {
    let (mut sd_idle, mut balance) = (false, true);
    s.find_busiest_group_32(cpu, level, CpuIdleType::NewlyIdle, &mut sd_idle, &CpuMask::first_n(16), &mut balance)
        .map(|b| (s.domains.of(cpu)[level].groups[b.group].cpus, b.imbalance))
}

const SIBLING: usize = 0;
const MC: usize = 1;
const NODE: usize = 2;

#[test]
fn smt_power_589_in_the_sibling_imbalance() {
    let mut s = nehalem(V32, |_| {});
    assert_eq!(s.power_of(0), 589);
    // CPU 0 has 4 nice-0 tasks, its sibling CPU 8 none; CPU 8 balances SIBLING {0,8}:
    // max_load = 4096 * 1024 / 589 = 7121, avg = 1024 * 4096 / 1178 = 3560, this 0;
    // busiest_lpt = 1024; max_pull = min(7121 - 3560, 7121 - 1024) = 3561;
    // imbalance = min(3561 * 589, 3560 * 589) / 1024 = 2_096_840 / 1024 = 2047 (>= 1024).
    load(&mut s, 0, 4);
    assert_eq!(fbg(&s, 8, SIBLING), Some((CpuMask::single(0), 2047)));
    // find_busiest_queue: wl = 4096 * 1024 / 589 = 7121 on CPU 0.
    assert_eq!(s.find_busiest_queue_32(&CpuMask::from_cpus([0, 8]), 2047, &CpuMask::first_n(16)), Some(0));
    // With 2 tasks: max 3560, avg 1780, max_pull 1780, imbalance 1780 * 589 / 1024 = 1023
    // < 1024 -> fix_small_imbalance: CPU 8 is empty so this_load_per_task =
    // cpu_avg_load_per_task = 0 (2.6.32); 3560 - 0 + 1024 >= 2 * 1024 -> 1024.
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 2);
    assert_eq!(s.cpu_avg_load_per_task(8), 0);
    assert_eq!(fbg(&s, 8, SIBLING), Some((CpuMask::single(0), 1024)));
}

#[test]
fn mc_level_core_capacity_one_and_the_power_scaled_queue_skip() {
    // CPU 0: 2 tasks, CPU 8: 1 (core {0,8} = 3 tasks); CPU 1 (idle core {1,9}) balances
    // MC: core {0,8}: 3072 * 1024 / 1178 = 2670 with 3 > capacity DIV_ROUND_CLOSEST(1178,
    // 1024) = 1; avg = 1024 * 3072 / 4712 = 667; max_pull = min(2003, 1646) = 1646;
    // imbalance = min(1646 * 1178, 667 * 1178) / 1024 = 767 < 1024 -> fix_small:
    // 2670 + 1024 >= 2048 -> 1024.
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 2);
    load(&mut s, 8, 1);
    let (g, imb) = fbg(&s, 1, MC).unwrap();
    assert_eq!((g, imb), (CpuMask::from_cpus([0, 8]), 1024));
    // find_busiest_queue compares load per power: CPU 8 (1 task, wl = 1024 * 1024 / 589
    // = 1780 > 1024, capacity 1) is skipped; CPU 0 (2 tasks, 3560) is the busiest.
    let all = CpuMask::first_n(16);
    assert_eq!(s.find_busiest_queue_32(&g, imb, &all), Some(0));
    // One task on each thread of core {0,8}: 2 > 1 -> busiest (max 1780, avg 445,
    // imbalance 1024 as above) but each queue holds a single task outweighing the
    // imbalance: no queue, nothing to pull. Both threads of a core stay busy while
    // another core idles.
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 1);
    load(&mut s, 8, 1);
    let (g, imb) = fbg(&s, 1, MC).unwrap();
    assert_eq!(imb, 1024);
    assert_eq!(s.find_busiest_queue_32(&g, imb, &all), None);
}

#[test]
fn node_level_prefer_sibling_clamps_socket_capacity_to_one() {
    // 5 tasks on 5 CPUs of socket 0; CPU 4 (socket 1, empty) balances NODE. Socket 0:
    // 5120 * 1024 / 4712 = 1112; group_imb? max - min = 1024 vs 2 * (5 * 1024 * 1024 /
    // 4712 = 1112): no. capacity = DIV_ROUND_CLOSEST(4712, 1024) = 5, clamped to 1 as
    // the child (MC) has SD_PREFER_SIBLING: 5 > 1 -> busiest. avg = 556; busiest_lpt
    // 1024 < 1112; max_pull = min(556, 88) = 88 -> 88 * 4712 / 1024 = 404 < 1024 ->
    // fix_small: 1112 + 1024 >= 2048 -> 1024.
    let mut s = nehalem(V32, |_| {});
    for cpu in [0, 1, 2, 3, 8] {
        load(&mut s, cpu, 1);
    }
    let socket0 = CpuMask::from_cpus([0, 1, 2, 3, 8, 9, 10, 11]);
    assert_eq!(fbg(&s, 4, NODE), Some((socket0, 1024)));
    // Without SD_PREFER_SIBLING on MC the capacity stays 5: 5 > 5 fails -> balanced.
    let mut s = nehalem(V32, |d| {
        d.override_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::PREFER_SIBLING);
    });
    for cpu in [0, 1, 2, 3, 8] {
        load(&mut s, cpu, 1);
    }
    assert_eq!(fbg(&s, 4, NODE), None);
}

#[test]
fn node_level_group_imbalance_is_twice_the_average_task_load() {
    // 2 tasks on CPU 0 and 2 on CPU 1; CPU 4 balances NODE. Socket 0: load 4096 ->
    // 4096 * 1024 / 4712 = 890; avg_load_per_task = (1024 + 1024 + 0 * 6) * 1024 / 4712
    // = 445 (empty CPUs count 0); max - min = 2048 - 0 > 890 -> group_imb. avg = 445;
    // busiest_lpt = min(4096 / 4, 445) = 445 < 890; max_pull = min(445, 445) -> imbalance
    // = 445 * 4712 / 1024 = 2047. (Without group_imb, max_load 890 <= 1024 would be
    // balanced.)
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 2);
    load(&mut s, 1, 2);
    let socket0 = CpuMask::from_cpus([0, 1, 2, 3, 8, 9, 10, 11]);
    assert_eq!(fbg(&s, 4, NODE), Some((socket0, 2047)));
    // And a lone task makes a socket "imbalanced" (1024 > 2 * 222) although it cannot be
    // moved: 1024 * 1024 / 4712 = 222; avg 111; busiest_lpt = min(1024, 111) = 111;
    // imbalance = min(111, 111) * 4712 / 1024 = 510; the queue (1 task, 1780 > 510) is
    // skipped.
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 1);
    assert_eq!(fbg(&s, 4, NODE), Some((socket0, 510)));
    assert_eq!(s.find_busiest_queue_32(&socket0, 510, &CpuMask::first_n(16)), None);
}

#[test]
fn designated_balancer_and_a_group_outside_the_cpus_mask() {
    // Not newly idle: only the first idle CPU of the local group (else its first CPU)
    // balances. CPU 9 is idle like CPU 1, so at MC CPU 9's local group {1,9} names CPU 1.
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 3);
    let (mut sd_idle, mut balance) = (false, true);
    let all = CpuMask::first_n(16);
    assert!(s.find_busiest_group_32(9, MC, CpuIdleType::Idle, &mut sd_idle, &all, &mut balance).is_none());
    assert!(!balance);
    let mut balance = true;
    assert!(s.find_busiest_group_32(1, MC, CpuIdleType::Idle, &mut sd_idle, &all, &mut balance).is_some());
    assert!(balance);
}

#[test]
fn newidle_stops_at_the_first_failing_level_and_passes_domains_without_newidle() {
    // CPU 0: 3 cache-hot tasks (exec_start = now); CPU 4: 6 cold ones. CPU 1 goes newly
    // idle. SIBLING {1,9} finds nothing (0: walk on). MC: core {0,8} = 3072 * 1024 / 1178
    // = 2670; group_imb (3072 - 0 > 2 * (1024 * 1024 / 1178 = 890)) -> busiest_lpt =
    // min(1024, avg 1024 * 3072 / 4712 = 667) = 667; imbalance = min(2003, 667) * 1178 /
    // 1024 = 767. The first task passes the weight test (512 <= 767) but is hot
    // (nr_balance_failed 0 <= cache_nice_tries 1): nothing moves, and with power savings
    // off load_balance_newidle answers -1 (sched.c:4350), which ends idle_balance's walk
    // before NODE, where CPU 4 would give two tasks (imbalance 1536).
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 3);
    for t in s.rqs[0].cfs.timeline().collect::<alloc::vec::Vec<_>>() {
        s.tm(t).se.exec_start = T0;
    }
    load(&mut s, 4, 6);
    assert_eq!(fbg(&s, 1, MC), Some((CpuMask::from_cpus([0, 8]), 767)));
    assert_eq!(s.idle_balance(1), 0);
    assert_eq!((s.rqs[0].nr_running, s.rqs[4].nr_running), (3, 6));
    assert_eq!(s.observer.0, [2, 8], "SIBLING and MC scanned, not NODE");
    // Returning -1 before `sd->nr_balance_failed++` (sched.c:4350-4353) counts no failure.
    assert_eq!(s.dstate[1][MC].nr_balance_failed, 0);
    // With only 2 tasks on CPU 0 the MC imbalance is 511 (busiest_lpt = avg 445): both
    // fail the `weight/2 > rem_load_move` test before can_migrate_task, so all_pinned
    // stays 1, CPU 0 leaves the mask and the redo finds nothing: out_balanced, 0, and
    // the walk goes on to NODE, which pulls two of CPU 4's tasks.
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 2);
    load(&mut s, 4, 6);
    assert_eq!(fbg(&s, 1, MC), Some((CpuMask::from_cpus([0, 8]), 511)));
    assert_eq!(s.idle_balance(1), 2);
    assert_eq!(s.observer.0, [2, 8, 8, 16]);
    assert_eq!((s.rqs[0].nr_running, s.rqs[4].nr_running), (2, 4));
    // pulled_task starts at 0 in 2.6.32 (sched.c:4429): a SD_LOAD_BALANCE domain without
    // SD_BALANCE_NEWIDLE is passed over. Clear NEWIDLE on SIBLING: CPU 1 still reaches
    // MC and pulls one of CPU 0's three cold tasks (767: one task of 1024 covers it).
    let mut s = nehalem(V32, |d| {
        d.override_flags(DomainLevel::Sibling, SdFlags::empty(), SdFlags::BALANCE_NEWIDLE);
    });
    load(&mut s, 0, 3);
    assert_eq!(s.idle_balance(1), 1);
    assert_eq!((s.rqs[0].nr_running, s.rqs[1].nr_running), (2, 1));
    assert_eq!(s.observer.0, [8]);
}

#[test]
fn preemptible_kernel_newidle_pulls_one_task() {
    // The second case above, CONFIG_PREEMPT=y: NODE's imbalance of 1536 would take two of
    // CPU 4's nice-0 tasks (1536 - 1024 = 512 left, and 1024 / 2 = 512 is not above it),
    // but balance_tasks jumps to `out` after the first pull_task when newly idle
    // (sched.c:3258-3266, 7e96fa5875d), so one moves. Both 2.6.32 profiles have it.
    for ver in [RC1, V32] {
        let mut s = nehalem(ver, |_| {});
        s.cfg.preempt = true;
        load(&mut s, 0, 2);
        load(&mut s, 4, 6);
        assert_eq!(s.idle_balance(1), 1, "{ver}");
        assert_eq!((s.rqs[0].nr_running, s.rqs[4].nr_running), (2, 5), "{ver}");
        // The same pass at a tick (CPU_IDLE) is not newly idle: the stop does not apply.
        let mut s = nehalem(ver, |_| {});
        s.cfg.preempt = true;
        load(&mut s, 4, 6);
        let mut all_pinned = false;
        let pulled = s.move_tasks(1, 4, 1536, (1, NODE), MigrateReason::Periodic, &mut all_pinned);
        assert_eq!(pulled, 2, "{ver}");
    }
    // 2.6.26 has no 7e96fa5875d (nor c4acb2c0669c): a preemptible build pulls the
    // same. Four cold nice-0 tasks on CPU 0 of the Q6600, pulled to a newly idle CPU 1
    // at MC with max_load_move 2048: the first leaves 1024, the second 0, so two move
    // either way.
    for preempt in [false, true] {
        let v = KernelVersion::V2_6_26;
        let mut s = preset("q6600", v, Config::new(v, 4).features.mask(), |_| {});
        s.cfg.preempt = preempt;
        let mut all_pinned = false;
        load(&mut s, 0, 4);
        let pulled = s.move_tasks(1, 0, 2048, (1, 0), MigrateReason::NewIdle, &mut all_pinned);
        assert_eq!(pulled, 2, "2.6.26, preempt {preempt}");
    }
}

#[test]
fn task_hot_buddies_rc1_always_final_only_with_a_busy_balancing_rq() {
    for ver in [RC1, V32] {
        let mut s = sched(ver, 2, DEF);
        let c = running(&mut s, 0, 0, 0);
        let q = queued(&mut s, 0, 0, Policy::Normal, 0);
        // Cold by time (never ran: exec_start 0, clock T0).
        let now = s.rqs[0].clock;
        assert!(!s.task_hot(q, now, false));
        s.rqs[0].cfs.next = Some(q);
        // rc1 (sched.c:2010): a buddy is hot. final (:2040): only if this_rq() has tasks.
        assert_eq!(s.task_hot(q, now, false), ver == RC1);
        assert!(s.task_hot(q, now, true));
        s.rqs[0].cfs.next = None;
        s.rqs[0].cfs.last = Some(q);
        assert_eq!(s.task_hot(q, now, false), ver == RC1);
        // CACHE_HOT_BUDDY off: by time only.
        s.cfg.features.set(crate::features::Feature::CacheHotBuddy, false).unwrap();
        assert!(!s.task_hot(q, now, true));
        let _ = c;
    }
}

#[test]
fn wake_affine_sync_less_compares_overlaps_with_an_unsigned_cost() {
    // x2 (one MC domain {0,1}, wake_idx 0, imbalance 100 + 25 / 2 = 112). W runs on CPU 0
    // with avg_overlap 1 ms; P slept on CPU 1. Sync wakeup from CPU 0:
    // - cost 0.5 ms: SYNC_LESS drops the hint (1 ms > cost): this_load 1024, load 0:
    //   100 * (1024 + 1024) <= 112 * 0 fails, 1024 <= 0 fails -> not affine.
    // - cost -1 = 4_294_967_295 as the unsigned int it is: 1 ms is not above it, sync
    //   stays: this_load = 1024 - 1024 = 0 -> balanced -> affine.
    // - SYNC_LESS off (mask - 4096): affine as well.
    for (cost, mask, affine) in
        [(500_000, DEF, false), (Tunables::ALWAYS_HOT, DEF, true), (500_000, DEF - (1 << 12), true)]
    {
        let d = Host::preset("x2").unwrap().build_domains(V32);
        let c = Config::new(V32, 2).with_features_mask(mask).unwrap();
        let mut s = Scheduler::new(c, d).unwrap();
        s.cfg.tunables.migration_cost = cost;
        for cpu in 0..2 {
            s.set_clock(cpu, T0);
        }
        let w = running(&mut s, 0, 0, 0);
        s.tm(w).se.avg_overlap = MS;
        let p = sleeping(&mut s, 1, 0, Policy::Normal, 0);
        assert_eq!(s.wake_affine_32(0, p, 0, true), affine, "cost {cost} mask {mask}");
    }
}

// ---------------------------------------------------------------------
// boundaries of the wakeup-preemption modes, fork and yield ties
// ---------------------------------------------------------------------

#[test]
fn overlap_and_running_modes_compare_strictly() {
    let x = 5_000 * MS;
    // WAKEUP_OVERLAP (sched_fair.c:1635-1641): both avg_overlap < migration_cost
    // (500_000); the wakee sits 10 ms right of curr, so no other rule preempts.
    let cost = Config::new(V32, 1).tunables.migration_cost as u64;
    assert_eq!(cost, 500_000);
    for (oc, op, want) in [(cost - 1, cost - 1, true), (cost, 0, false), (0, cost, false)] {
        let mut s = sched(V32, 1, DEF + WAKEUP_OVERLAP);
        let c = running(&mut s, 0, 0, x);
        s.tm(c).se.avg_overlap = oc;
        let p = queued(&mut s, 0, 0, Policy::Normal, x + 10 * MS);
        s.tm(p).se.avg_overlap = op;
        s.check_preempt_wakeup_32(0, p, false, false);
        assert_eq!(s.rqs[0].need_resched, want, "overlaps {oc} / {op}");
    }
    // WAKEUP_RUNNING (:1649-1653): p->se.avg_running < curr->se.avg_running, and
    // only with the feature on.
    for (mask, ap, want) in [(DEF + WAKEUP_RUNNING, 1_000, false), (DEF, 999, false), (DEF + WAKEUP_RUNNING, 999, true)]
    {
        let mut s = sched(V32, 1, mask);
        let c = running(&mut s, 0, 0, x);
        s.tm(c).se.avg_running = 1_000;
        let p = queued(&mut s, 0, 0, Policy::Normal, x + 10 * MS);
        s.tm(p).se.avg_running = ap;
        s.check_preempt_wakeup_32(0, p, false, false);
        assert_eq!(s.rqs[0].need_resched, want, "mask {mask} avg_running {ap}");
        assert_eq!(s.rqs[0].cfs.next == Some(p), want);
    }
}

#[test]
fn child_runs_first_and_compat_yield_at_equal_vruntimes() {
    // task_new_fair (:1895-1899) swaps only if entity_before(curr, se): strictly left.
    // Without START_DEBIT the child is placed at max(curr's vruntime, min_vruntime) =
    // curr's, so there is no swap and no resched.
    let m = 1_000 * MS;
    let mut s = sched(V32, 1, DEF - START_DEBIT);
    s.cfg.tunables.child_runs_first = true;
    let p = running(&mut s, 0, 0, m + 2 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    let c = s.fork(T0, p, None).unwrap().child;
    assert_eq!((v(&s, p), v(&s, c)), (m + 2 * MS, m + 2 * MS));
    assert!(!s.rqs[0].need_resched);
    // yield_task_fair (:1082-1089): returns only if entity_before(rightmost, se); a
    // rightmost level with curr still moves curr to rightmost + 1.
    let x = 5_000 * MS;
    let mut s = sched(V32, 1, DEF);
    s.cfg.tunables.compat_yield = true;
    let c = running(&mut s, 0, 0, x);
    let _r = queued(&mut s, 0, 0, Policy::Normal, x);
    s.yield_task_fair(0);
    assert_eq!(v(&s, c), x + 1);
}

// ---------------------------------------------------------------------
// wake_affine and select_task_rq_fair on the X2 (one MC domain {0,1},
// groups {0} and {1}, wake_idx = forkexec_idx = 0, imbalance_pct 125)
// ---------------------------------------------------------------------

const AFFINE_WAKEUPS: u32 = 1 << 11;
const SYNC_MORE: u32 = 1 << 13;

/// The X2 under 2.6.32 with `mask`, its MC domain edited by `edit`.
fn x2_32(mask: u32, edit: impl Fn(&mut SdFlags)) -> Scheduler<Scans> {
    preset("x2", V32, mask, |d| d.per_cpu.iter_mut().for_each(|doms| edit(&mut doms[0].flags)))
}

/// wake_affine(MC, p, sync) from CPU 0 for a task p that slept on CPU 1. CPU 0 runs a
/// task of nice `w0` (none if `None`) with `q0` nice-0 tasks queued behind it; CPU 1
/// runs a task of nice `w1` (none if `None`). `overlaps` = (curr's, p's) avg_overlap.
fn affine(mask: u32, sync: bool, w0: Option<i32>, q0: usize, w1: Option<i32>, overlaps: (u64, u64)) -> bool {
    let mut s = x2_32(mask, |_| {});
    if let Some(n) = w0 {
        let w = running(&mut s, 0, n, 0);
        s.tm(w).se.avg_overlap = overlaps.0;
    }
    for _ in 0..q0 {
        queued(&mut s, 0, 0, Policy::Normal, 0);
    }
    if let Some(n) = w1 {
        running(&mut s, 1, n, 0);
    }
    let p = sleeping(&mut s, 1, 0, Policy::Normal, 0);
    s.tm(p).se.avg_overlap = overlaps.1;
    s.wake_affine_32(0, p, 0, sync)
}

#[test]
fn wake_affine_sync_less_and_sync_more_boundaries() {
    // imbalance = 100 + 25 / 2 = 112. W (nice 0) runs on CPU 0, CPU 1 is empty: load 0.
    // Sync kept: this_load = 1024 - 1024 = 0 -> balanced -> affine. Sync dropped or never
    // given: 100 * (1024 + 1024) <= 112 * 0 fails and 1024 <= 0 fails -> not affine.
    let c = 500_000;
    // SYNC_LESS (:1200-1203) drops the hint only for an overlap strictly above the cost.
    assert!(affine(DEF, true, Some(0), 0, None, (c, c)));
    assert!(!affine(DEF, true, Some(0), 0, None, (c + 1, 0)));
    assert!(!affine(DEF, true, Some(0), 0, None, (0, c + 1)));
    // SYNC_MORE (:1205-1208, off by default) makes a plain wakeup sync when both
    // overlaps are strictly below the cost.
    assert!(!affine(DEF, false, Some(0), 0, None, (0, 0)));
    assert!(affine(DEF + SYNC_MORE, false, Some(0), 0, None, (0, 0)));
    assert!(affine(DEF + SYNC_MORE, false, Some(0), 0, None, (c - 1, c - 1)));
    assert!(!affine(DEF + SYNC_MORE, false, Some(0), 0, None, (c, 0)));
    assert!(!affine(DEF + SYNC_MORE, false, Some(0), 0, None, (0, c)));
}

#[test]
fn wake_affine_balanced_compares_the_previous_cpu_load_without_the_wakee() {
    // balanced = !this_load || 100 * (this_load + eff(this, w, w)) <= imbalance * (load +
    // eff(prev, 0, w)) (:1238-1240). Without group scheduling eff() returns wl: w on this
    // side, 0 on prev's. Plain wakeup, W nice 0 on CPU 0 (this_load 1024), a task X on
    // CPU 1: 100 * 2048 = 204_800 <= 112 * load needs load >= 1829.
    // - X nice -3 (1991): 112 * 1991 = 222_992 -> balanced -> affine.
    // - X nice -2 (1586): 177_632 < 204_800; the fallback needs 1024 + 1586 <= tl_per_task
    //   = 1024 -> not affine. (Adding w to load as well, 112 * 2610 = 292_320, would
    //   call it balanced.)
    // - X nice 0: not affine either (load 1024).
    assert!(affine(DEF, false, Some(0), 0, Some(-3), (0, 0)));
    assert!(!affine(DEF, false, Some(0), 0, Some(-2), (0, 0)));
    assert!(!affine(DEF, false, Some(0), 0, Some(0), (0, 0)));
    // An idle CPU 0 (this_load 0) is balanced by the first clause alone: X nice 10
    // (110) on CPU 1 fails the product (102_400 > 112 * 110) and the fallback
    // (tl_per_task of an empty rq is 0 < 0 + 110), yet the wakeup is affine.
    assert!(affine(DEF, false, None, 0, Some(10), (0, 0)));
    // sync and not balanced, fallback failing: W and Q (nice 0) on CPU 0, CPU 1 empty:
    // this_load = 2048 - 1024 = 1024, 204_800 > 0, 1024 > 0 -> not affine.
    assert!(!affine(DEF, true, Some(0), 1, None, (0, 0)));
    // The fallback (:1253-1255) at its edge: W nice -5 (3121) and Q on CPU 0, sync:
    // this_load = 4145 - 3121 = 1024, tl_per_task = 4145 / 2 = 2072. X nice 0 on CPU 1:
    // not balanced (204_800 > 114_688) but 1024 <= 1024 and 1024 + 1024 <= 2072 ->
    // affine; X nice -1 (1277): 1024 + 1277 = 2301 > 2072 -> not affine.
    assert!(affine(DEF, true, Some(-5), 1, Some(0), (0, 0)));
    assert!(!affine(DEF, true, Some(-5), 1, Some(-1), (0, 0)));
}

/// A wakeup (or with `fork`, a fork) on the X2 under `mask` with MC's flags edited by
/// `edit`: the waker W (nice 0) runs on CPU `this` with `q` nice-0 tasks queued behind
/// it; p slept on CPU 1; CPU `other` has `o` nice-0 tasks. Returns select_task_rq_fair's
/// CPU, whether it reported a balancing move, and the Scan event sizes.
fn select(mask: u32, edit: impl Fn(&mut SdFlags), this: usize, q: usize, o: usize) -> (usize, bool, Vec<u32>) {
    let mut s = x2_32(mask, edit);
    running(&mut s, this, 0, 0);
    load(&mut s, this, q);
    load(&mut s, 1 - this, o);
    let p = sleeping(&mut s, 1, 0, Policy::Normal, 0);
    s.observer_mut().0.clear();
    let (cpu, reason) = s.select_task_rq_fair_32(p, this, true, false);
    (cpu, reason == crate::observe::WakeReason::Balance, s.observer_mut().0.clone())
}

/// 799e2205ec6 on a one-node host built with CONFIG_NUMA (Stoakley, rc1):
/// the domains the patched kernel builds keep a NODE level over all 8 CPUs
/// with SD_PREFER_LOCAL (cfs-topology's builder tests), so select_task_rq_fair
/// still walks the whole box on every wakeup, one level higher. W runs on
/// CPU 0, p slept on CPU 1, a non-sync wakeup from CPU 0 (rc1 sched_fair.c:1332-1387):
/// - unpatched: MC has PREFER_LOCAL: scan {0,1} (2), nr 1 < capacity 2 ->
///   want_sd = 0; MC has WAKE_AFFINE and CPU 1 -> affine_sd; both wants are
///   gone, the walk stops. Then wake_affine reads two loads: [2, 2].
/// - patched, NODE kept: MC and CPU lack the flag; MC takes affine_sd; NODE
///   has it: scan 0-7 (8), nr 1 < 8 -> stop: [8, 2].
/// - the patch written into domains built without its edits: no NODE, no
///   walk: [2]. That is the kernel without CONFIG_NUMA, not this one.
#[test]
fn prefer_local_to_node_keeps_a_node_walk_on_a_one_node_numa_kernel() {
    use crate::patches::{Patch, Patches};
    use cfs_topology::builder::{BuildOptions, NumaConfig};
    let wake = |patched: bool, edits: bool| {
        let patches = if patched { Patches::none().with(Patch::PreferLocalToNode) } else { Patches::none() };
        let init_flags = if edits { patches.init_flag_edits() } else { Default::default() };
        let opts = BuildOptions { numa: NumaConfig::On, init_flags, ..BuildOptions::default() };
        let d = Host::preset("stoakley").unwrap().build_domains_with(RC1, &opts);
        let mut c = Config::new(RC1, 8).with_features_mask(DEF).unwrap();
        if patched {
            c = c.with_patch(Patch::PreferLocalToNode).unwrap();
        }
        let mut s = Scheduler::with_observer(c, d, Scans::default()).unwrap();
        for cpu in 0..8 {
            s.set_clock(cpu, T0);
        }
        running(&mut s, 0, 0, 0);
        let p = sleeping(&mut s, 1, 0, Policy::Normal, 0);
        s.observer_mut().0.clear();
        let cpu = s.select_task_rq_fair_32(p, 0, true, false).0;
        (cpu, s.observer_mut().0.clone())
    };
    // wake_affine declines (not sync: this_load 1024 > prev's 0), p stays on CPU 1.
    assert_eq!(wake(false, false), (1, vec![2, 2]));
    assert_eq!(wake(true, true), (1, vec![8, 2]));
    assert_eq!(wake(true, false), (1, vec![2]));
}

#[test]
fn select_task_rq_fair_affine_needs_the_feature_and_an_allowed_cpu() {
    // :1368-1373: want_affine = AFFINE_WAKEUPS && this CPU in p's mask. W on CPU 0,
    // CPU 1 empty, sync: wake_affine says yes (this_load 0), so p comes to CPU 0.
    let sync = |mask: u32, allowed: Option<CpuMask>| {
        let mut s = x2_32(mask, |_| {});
        running(&mut s, 0, 0, 0);
        let p = sleeping(&mut s, 1, 0, Policy::Normal, 0);
        if let Some(m) = allowed {
            s.tm(p).allowed = m;
        }
        (s.select_task_rq_fair_32(p, 0, true, true).0, s.observer_mut().0.clone())
    };
    // wake_affine reads prev's and this CPU's load (Scan 2) only when it is called.
    assert_eq!(sync(DEF, None), (0, vec![2]));
    assert_eq!(sync(DEF - AFFINE_WAKEUPS, None), (1, vec![]));
    assert_eq!(sync(DEF, Some(CpuMask::single(1))), (1, vec![]));
}

#[test]
fn select_task_rq_fair_prefer_local_and_power_savings_capacity() {
    // :1381-1399 with SD_BALANCE_WAKE on MC and AFFINE_WAKEUPS off (so only the
    // balancing walk can move p): W on CPU 1 (p's CPU), q tasks queued behind it, CPU 0
    // idle. The domain's power is 1024 + 1024 -> capacity DIV_ROUND_CLOSEST(2048, 1024)
    // = 2; nr_running sums cfs.nr_running over {0,1} = 1 + q.
    // Walking: find_idlest_group from CPU 1: {1} = (1 + q) * 1024, {0} = 0 -> CPU 0.
    let off = DEF - AFFINE_WAKEUPS;
    let prefer = |f: &mut SdFlags| f.insert(SdFlags::BALANCE_WAKE | SdFlags::PREFER_LOCAL);
    let power = |f: &mut SdFlags| f.insert(SdFlags::BALANCE_WAKE | SdFlags::POWERSAVINGS_BALANCE);
    let wake_only = |f: &mut SdFlags| f.insert(SdFlags::BALANCE_WAKE);
    // PREFER_LOCAL: nr 1 < 2 -> want_sd = 0 -> prev CPU; nr 2 is not < 2 -> balance.
    // The capacity sum scans both CPUs (Scan 2); the walk scans MC's span (Scan 2).
    assert_eq!(select(off, prefer, 1, 0, 0), (1, false, vec![2]));
    assert_eq!(select(off, prefer, 1, 1, 0), (0, true, vec![2, 2]));
    assert_eq!(select(off, wake_only, 1, 0, 0), (0, true, vec![2]));
    // POWERSAVINGS_BALANCE halves nr_running first: nr 2 -> 1 < 2 stays, nr 3 -> 1 stays,
    // nr 4 -> 2 balances.
    assert_eq!(select(off, power, 1, 1, 0).0, 1);
    assert_eq!(select(off, power, 1, 2, 0).0, 1);
    assert_eq!(select(off, power, 1, 3, 0), (0, true, vec![2, 2]));
    // Neither flag nor SD_BALANCE_WAKE (the X2's 2.6.32 MC as built): no walk, only
    // wake_affine's two load reads (Scan 2), which decline (not sync: this_load 1024 >
    // load 0, and 100 * 2048 > 112 * 0).
    assert_eq!(select(DEF, |_| {}, 0, 0, 0), (1, false, vec![2]));
}

#[test]
fn fork_balancing_divides_group_load_by_power() {
    // find_idlest_group (:1307-1319) with forkexec_idx 0: avg = load * 1024 / 1024.
    // The parent W on CPU 0 (1024); CPU 1 with 2 tasks: 100 * 1024 < 112 * 2048 -> no
    // idlest group, the child stays; CPU 1 empty: 100 * 1024 >= 112 * 0 -> CPU 1.
    let fork = |o: usize| {
        let mut s = x2_32(DEF, |_| {});
        let w = running(&mut s, 0, 0, 0);
        load(&mut s, 1, o);
        s.select_task_rq_fair_32(w, 0, false, false).0
    };
    assert_eq!(fork(2), 0);
    assert_eq!(fork(0), 1);
    // The power that divides is the group's refreshed one (ARCH_POWER, bit
    // 17). CPU 0 runs the parent with one more task queued (2048), CPU 1 one
    // task (1024). At CPU 1's built power 100 * 2048 >= 112 * 1024: CPU 1.
    // With its APERF/MPERF at a quarter of the clock and its power refreshed
    // (1024 * 256 >> 10 = 256), CPU 1's avg is 1024 * 1024 / 256 = 4096 and
    // 100 * 2048 < 112 * 4096: the child stays on CPU 0.
    let fork_slowed = |ratio: u32| {
        let mut s = x2_32(DEF | 1 << 17, |_| {});
        let w = running(&mut s, 0, 0, 0);
        load(&mut s, 0, 1);
        load(&mut s, 1, 1);
        s.set_arch_freq_power(1, Some(ratio)).unwrap();
        s.update_group_power(1, 0);
        (s.power_of(1), s.select_task_rq_fair_32(w, 0, false, false).0)
    };
    assert_eq!(fork_slowed(1024), (1024, 1));
    assert_eq!(fork_slowed(256), (256, 0));
}

#[test]
fn busiest_queue_skips_a_lone_task_above_the_imbalance_only_with_capacity() {
    // find_busiest_queue (sched.c:4074-4103): `if (capacity && rq->nr_running == 1 && wl >
    // imbalance) continue;` with wl = 1024 * 1024 / power. Nehalem thread (589): wl = 1780.
    let mut s = nehalem(V32, |_| {});
    load(&mut s, 0, 1);
    let all = CpuMask::first_n(16);
    let core = CpuMask::from_cpus([0, 8]);
    assert_eq!(s.find_busiest_queue_32(&core, 1780, &all), Some(0));
    assert_eq!(s.find_busiest_queue_32(&core, 1779, &all), None);
    // Four threads per core: power 1178 / 4 = 294, capacity DIV_ROUND_CLOSEST(294, 1024)
    // = 0, so even a lone task far above the imbalance (wl 3566) counts.
    let host = Host::from_spec("1s1c4t").unwrap();
    let c = Config::new(V32, 4);
    let mut s = Scheduler::new(c, host.build_domains(V32)).unwrap();
    assert_eq!(s.power_of(0), 294);
    s.spawn(T0, 0, TaskParams::normal()).unwrap();
    assert_eq!(s.find_busiest_queue_32(&CpuMask::first_n(4), 100, &CpuMask::first_n(4)), Some(0));
}

#[test]
fn node_level_small_imbalance_moves_when_cpu_power_use_grows() {
    // Nehalem NODE (two sockets of power 4712, capacity clamped to 1), CPU 4 newly idle.
    // Socket 0: one nice-0 task on each of CPUs 0-3 and 8 (5120); socket 1: on 5, 6, 7.
    //   max_load = 5120 * 1024 / 4712 = 1112; this_load = 3072 * 1024 / 4712 = 667;
    //   avg = 1024 * 8192 / 9424 = 890; 100 * 1112 > 125 * 667; busiest_lpt = 1024;
    //   no group_imb (1024 - 0 <= 2 * 1112); load_above_capacity = 4 * 1024^2 / 4712 =
    //   890; max_pull = min(222, 890) = 222; imbalance = 222 * 4712 / 1024 = 1021 < 1024.
    // fix_small_imbalance (:3868-3925): this_lpt = 3072 / 3 = 1024, imbn 2;
    //   1112 - 667 + 1024 = 1469 < 2048, so compare CPU power use:
    //   pwr_now = 4712 * (min(1024, 1112) + min(1024, 667)) / 1024 = 7781;
    //   tmp = 1024 * 1024 / 4712 = 222: pwr_move = 4712 * (min(1024, 1112 - 222) +
    //   min(1024, 667 + 222)) / 1024 = 4712 * (890 + 889) / 1024 = 8186 > 7781 -> 1024.
    let mut s = nehalem(V32, |_| {});
    for cpu in [0, 1, 2, 3, 8, 5, 6, 7] {
        load(&mut s, cpu, 1);
    }
    let socket0 = CpuMask::from_cpus([0, 1, 2, 3, 8, 9, 10, 11]);
    assert_eq!(fbg(&s, 4, NODE), Some((socket0, 1024)));
    // Socket 0 with 7 (CPUs 0-3, 8-10), socket 1 with 5 (CPUs 5-7, 12, 13): max 1557,
    // this 1112, avg 1335, load_above_capacity 6 * 1024^2 / 4712 = 1335; imbalance =
    // min(222, 223) * 4712 / 1024 = 1021; this_lpt 1024, 1557 - 1112 + 1024 < 2048;
    // pwr_now = 4712 * (1024 + 1024) / 1024 = 9424 = pwr_move (min(1024, 1335) and
    // min(1024, 1334)): no gain -> 1021 stays.
    let mut s = nehalem(V32, |_| {});
    for cpu in [0, 1, 2, 3, 8, 9, 10, 5, 6, 7, 12, 13] {
        load(&mut s, cpu, 1);
    }
    assert_eq!(fbg(&s, 4, NODE), Some((socket0, 1021)));
    // Socket 0 with 3, socket 1 with 1: max_load = 667 <= busiest_lpt 1024, which
    // find_busiest_group (sched.c:4051) calls balanced before any imbalance is computed.
    let mut s = nehalem(V32, |_| {});
    for cpu in [0, 1, 2, 5] {
        load(&mut s, cpu, 1);
    }
    assert_eq!(fbg(&s, 4, NODE), None);
}
