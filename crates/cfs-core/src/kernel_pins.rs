//! Unit pins of the stateful fair-class functions against the kernel
//! source, on hand-built runqueue states (test-only module).
//!
//! Each test sets vruntimes, min_vruntime and runtimes directly, runs one
//! ported function and compares the result with the value the kernel's
//! code gives for the same state; the working is in the comments. Kernel
//! lines (2.6.26 bce7f793 unless noted):
//! - __enqueue_entity / __dequeue_entity (min_vruntime, leftmost, next):
//!   sched_fair.c:227-293;
//! - place_entity: sched_fair.c:590-620; rc4 (NORMALIZED_SLEEPER)
//!   sched_fair.c:651-680 at e490517a;
//! - update_curr: sched_fair.c:412-454;
//! - check_preempt_tick / entity_tick: sched_fair.c:688-697, 775-802;
//! - pick_next / pick_next_entity: sched_fair.c:732-755; 2.6.25
//!   sched_fair.c:630-648 at 4b119e21;
//! - yield_task_fair: sched_fair.c:893-930;
//! - check_preempt_wakeup: sched_fair.c:1166-1224; 2.6.25 at 4b119e21
//!   (`pse->vruntime + gran < se->vruntime`);
//! - task_new_fair: sched_fair.c:1430-1453.

extern crate std;

use crate::cfs_rq::{CfsRq, INITIAL_MIN_VRUNTIME};
use crate::config::Config;
use crate::entity::{TaskId, TaskParams, TaskState};
use crate::sched::{Deschedule, Scheduler};
use crate::weights::Policy;
use alloc::vec;
use alloc::vec::Vec;
use cfs_topology::{KernelVersion, SchedDomains};

const V25: KernelVersion = KernelVersion::V2_6_25;
const RC4: KernelVersion = KernelVersion::V2_6_26Rc4;
const V26: KernelVersion = KernelVersion::V2_6_26;
const MS: u64 = 1_000_000;
/// A clock value for the setups (any; nothing depends on it but deltas).
const T0: u64 = 7_000_000_000;

fn sched(v: KernelVersion, mask: Option<u32>) -> Scheduler<()> {
    let mut c = Config::new(v, 1);
    if let Some(m) = mask {
        c = c.with_features_mask(m).unwrap();
    }
    c.hres_timers = false;
    Scheduler::new(c, SchedDomains { version: v, per_cpu: vec![vec![]] }).unwrap()
}

/// A running task on CPU 0 with vruntime `v`, accounted up to T0.
fn running(s: &mut Scheduler<()>, nice: i32, v: u64) -> TaskId {
    assert!(s.rqs[0].curr.is_none());
    let id = s.spawn(T0, 0, TaskParams::normal().nice(nice)).unwrap();
    s.do_schedule(T0, 0, Deschedule::Preempt);
    assert_eq!(s.rqs[0].curr, Some(id));
    s.tm(id).se.vruntime = v;
    id
}

/// A queued (not running) task on CPU 0 at vruntime `v` (re-inserted in
/// the tree at that key). The tree insert may raise min_vruntime as
/// __enqueue_entity does; callers set min_vruntime afterwards if needed.
fn queued(s: &mut Scheduler<()>, nice: i32, policy: Policy, v: u64) -> TaskId {
    let id = s.spawn(T0, 0, TaskParams::normal().nice(nice).policy(policy)).unwrap();
    s.dequeue_tree(0, id);
    s.tm(id).se.vruntime = v;
    s.enqueue_tree(0, id);
    id
}

/// A sleeping task (deactivated) whose CPU is 0, with vruntime `v`.
fn sleeping(s: &mut Scheduler<()>, nice: i32, v: u64) -> TaskId {
    let id = s.spawn(T0, 0, TaskParams::normal().nice(nice)).unwrap();
    s.deactivate_task(0, id, false);
    let t = s.tm(id);
    t.state = TaskState::Sleeping;
    t.se.vruntime = v;
    id
}

fn v(s: &Scheduler<()>, id: TaskId) -> u64 {
    s.t(id).se.vruntime
}

// ---------------------------------------------------------------------
// place_entity and min_vruntime
// ---------------------------------------------------------------------

/// The timeline's rebase (cfs_rq.rs) seen through the scheduler: an entity
/// arriving more than 2^62 ns past the tree's base rebases it on the
/// current min_vruntime, and every queued task's stored key follows, so
/// that the pick still finds and removes it. No rule puts two queued
/// vruntimes 2^62 ns (146 years) apart, but a driver can, so the path
/// must hold. A is queued at min_vruntime + 100, min_vruntime then moves
/// to A's vruntime (as update_curr would move it), and B arrives 2^62 +
/// 2^61 ns on: A's key becomes (0, its insertion number), the order is
/// still A, B (entity_key 0 against 2^62 + 2^61 - 100), and the pick
/// takes A out of the tree.
#[test]
fn a_rebased_timeline_still_gives_up_every_task() {
    let mut s = sched(V26, None);
    let m = s.rqs[0].cfs.min_vruntime;
    let a = queued(&mut s, 0, Policy::Normal, m.wrapping_add(100));
    let (_, seq) = s.t(a).se.tree_key.unwrap();
    s.rqs[0].cfs.min_vruntime = v(&s, a);
    let b = queued(&mut s, 0, Policy::Normal, m.wrapping_add((1 << 62) + (1 << 61)));
    assert_eq!(s.t(a).se.tree_key, Some((0, seq)));
    assert_eq!(s.rqs[0].cfs.timeline().collect::<Vec<_>>(), [a, b]);
    s.check_invariants().unwrap();
    s.do_schedule(T0, 0, Deschedule::Preempt);
    assert_eq!(s.rqs[0].curr, Some(a));
    assert_eq!(s.rqs[0].cfs.timeline().collect::<Vec<_>>(), [b]);
    s.check_invariants().unwrap();
}

#[test]
fn wakeup_placement_gives_one_latency_of_credit_never_backwards() {
    // 2.6.26, f = 1: sysctl_sched_latency = 20 ms.
    let mut s = sched(V26, None);
    let m = 1_000 * MS;
    let _c = running(&mut s, 0, m + 5 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    // A long sleeper (vruntime 50 ms behind): tree empty, so base = min_vruntime = M;
    // vruntime = max_vruntime(se.v, M - 20 ms) = M - 20 ms.
    let a = sleeping(&mut s, 0, m - 50 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    s.activate_task(0, a, true);
    assert_eq!(v(&s, a), m - 20 * MS);
    // It became leftmost, but __enqueue_entity only raises min_vruntime
    // (max_vruntime(M, M - 20 ms) = M): min_vruntime stays M, below... above the leftmost.
    assert_eq!(s.rqs[0].cfs.min_vruntime, m);
    assert_eq!(s.rqs[0].cfs.leftmost, Some(a));
    // A short sleeper (5 ms behind): base = min_vruntime(M, leftmost M - 20 ms) = M - 20 ms,
    // M - 40 ms is below its own vruntime, so it keeps M - 5 ms (never moved backwards).
    let b = sleeping(&mut s, 0, m - 5 * MS);
    s.activate_task(0, b, true);
    assert_eq!(v(&s, b), m - 5 * MS);
    // A very long sleeper now gets base - latency with base = the leftmost (M - 20 ms):
    // M - 40 ms. The credit is taken from the leftmost, not from min_vruntime.
    let c = sleeping(&mut s, 0, m - 100 * MS);
    s.activate_task(0, c, true);
    assert_eq!(v(&s, c), m - 40 * MS);
    assert_eq!(s.rqs[0].cfs.min_vruntime, m, "never lowered by an enqueue");
    // The tree order is c < a < b.
    let order: Vec<TaskId> = s.rqs[0].cfs.timeline().collect();
    assert_eq!(order, vec![c, a, b]);
}

#[test]
fn min_vruntime_fix_tracks_the_current_task() {
    // 1af5f730fc1 + e17036dac18 (the `min-vruntime-fix` patch) against
    // 2.6.26's rule. Curr runs at M; a task queued at M + 50 ms becomes
    // the leftmost.
    use crate::patches::Patch;
    let m = 1_000 * MS;
    for fix in [false, true] {
        let mut c = Config::new(V26, 1);
        if fix {
            c = c.with_patch(Patch::MinVruntimeFix).unwrap();
        }
        c.hres_timers = false;
        let mut s = Scheduler::new(c, SchedDomains { version: V26, per_cpu: vec![vec![]] }).unwrap();
        let curr = running(&mut s, 0, m);
        s.rqs[0].cfs.min_vruntime = m;
        let far = queued(&mut s, 0, Policy::Normal, m + 50 * MS);
        // 2.6.26: __enqueue_entity raises min_vruntime to the new leftmost,
        // M + 50 ms, skipping curr at M. Fixed: the tree insert leaves it at M.
        let after_insert = if fix { m } else { m + 50 * MS };
        assert_eq!(s.rqs[0].cfs.min_vruntime, after_insert, "fix {fix}");
        // Curr runs 1 ms (nice 0: vruntime M + 1 ms). 2.6.26's update_curr
        // does not touch min_vruntime; the fix's update_min_vruntime takes
        // max(M, min(curr M + 1 ms, leftmost M + 50 ms)) = M + 1 ms.
        s.set_clock(0, T0 + MS);
        s.update_curr(0, None);
        assert_eq!(v(&s, curr), m + MS);
        let after_run = if fix { m + MS } else { m + 50 * MS };
        assert_eq!(s.rqs[0].cfs.min_vruntime, after_run, "fix {fix}");
        // A long sleeper wakes: base - latency (20 ms at f = 1). 2.6.26's base
        // is min(min_vruntime, leftmost) = M + 50 ms -> M + 30 ms, ahead of
        // the current task it will wait behind; fixed, base = M + 1 ms -> M - 19 ms.
        let z = sleeping(&mut s, 0, 0);
        s.activate_task(0, z, true);
        let placed = if fix { m + MS - 20 * MS } else { m + 30 * MS };
        assert_eq!(v(&s, z), placed, "fix {fix}");
        // z is now the leftmost, and (fixed) below min_vruntime. A second
        // long sleeper: 2.6.26 starts from min(min_vruntime, leftmost z) =
        // M + 30 ms -> M + 10 ms; fixed, from min_vruntime (M + 1 ms) alone,
        // not from z, -> M - 19 ms again.
        let y = sleeping(&mut s, 0, 0);
        s.activate_task(0, y, true);
        let placed = if fix { m + MS - 20 * MS } else { m + 10 * MS };
        assert_eq!(v(&s, y), placed, "fix {fix}");
        s.deactivate_task(0, y, false);
        // Dequeuing the leftmost: 2.6.26 raises min_vruntime to the next
        // entity; fixed, dequeue_entity's update_min_vruntime takes
        // min(curr, new leftmost) = curr's M + 1 ms again.
        let leftmost = s.rqs[0].cfs.leftmost.unwrap();
        s.deactivate_task(0, leftmost, false);
        let after_dequeue = if fix { m + MS } else { v(&s, far) };
        assert_eq!(s.rqs[0].cfs.min_vruntime, after_dequeue, "fix {fix}");
    }
}

#[test]
fn wakeup_placement_without_new_fair_sleepers() {
    // 894 = 895 - NEW_FAIR_SLEEPERS: no credit; vruntime = max_vruntime(se.v, base).
    let mut s = sched(V26, Some(894));
    let m = 1_000 * MS;
    let _c = running(&mut s, 0, m);
    s.rqs[0].cfs.min_vruntime = m;
    let a = sleeping(&mut s, 0, m - 50 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    s.activate_task(0, a, true);
    assert_eq!(v(&s, a), m);
    let b = sleeping(&mut s, 0, m + 7);
    s.activate_task(0, b, true);
    assert_eq!(v(&s, b), m + 7);
}

#[test]
fn wakeup_placement_rc4_normalized_sleeper() {
    // rc1..rc4: thresh = calc_delta_fair(latency, se) = calc_delta_mine(20 ms, W, &se.load),
    // W counted after account_entity_enqueue (the wakee included).
    let mut s = sched(RC4, None);
    let m = 1_000 * MS;
    let _c = running(&mut s, 0, m);
    // nice 0 wakee, W = 1024 + 1024 = 2048: tmp = 20e6 * 2048 = 40_960_000_000 > 2^32,
    // SRR(tmp,16) = 625_000; (625_000 * 2^22 + 32_768) >> 16 = 40_000_000: 40 ms credit.
    let a = sleeping(&mut s, 0, m - 500 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    s.activate_task(0, a, true);
    assert_eq!(v(&s, a), m - 40 * MS);
    s.deactivate_task(0, a, false);
    s.tm(a).state = TaskState::Sleeping;
    // nice 5 wakee (w 335, wmult 12_820_798), W = 1024 + 335 = 1359:
    // tmp = 27_180_000_000, SRR(tmp,16) = floor(414_733.89 + 0.5) = 414_734;
    // (414_734 * 12_820_798 + 32_768) >> 16 = 81_134_351 (~ 20 ms * 1359 / 335).
    let b = sleeping(&mut s, 5, m - 500 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    s.activate_task(0, b, true);
    assert_eq!(v(&s, b), m - 81_134_351);
    // With NORMALIZED_SLEEPER off (895 - 256 = 639) the credit is the raw 20 ms.
    let mut s = sched(RC4, Some(639));
    let _c = running(&mut s, 0, m);
    let b = sleeping(&mut s, 5, m - 500 * MS);
    s.rqs[0].cfs.min_vruntime = m;
    s.activate_task(0, b, true);
    assert_eq!(v(&s, b), m - 20 * MS);
}

#[test]
fn fork_placement_start_debit_and_without() {
    // Initial placement: base (+ sched_vslice_add with START_DEBIT), and *no*
    // max_vruntime with the old value (2.6.26 applies it only to wakeups).
    let m = 1_000 * MS;
    for (mask, expect) in [(895u32, m + 10 * MS), (891, m)] {
        let mut s = sched(V26, Some(mask));
        let _p = running(&mut s, 0, m + 3 * MS);
        let c = sleeping(&mut s, 0, m + 99 * MS);
        s.rqs[0].cfs.min_vruntime = m;
        s.place_entity(0, c, true);
        // 895: vslice_add(nr 1, W 1024, w 1024, !on_rq) = period(2) * 1024 / 2048 = 10 ms.
        // 891 (START_DEBIT off): exactly base = M, although se.v was M + 99 ms.
        assert_eq!(v(&s, c), expect, "mask {mask}");
    }
}

#[test]
fn min_vruntime_moves_only_in_the_tree_ops() {
    let mut s = sched(V26, None);
    let m = 1_000 * MS;
    let c = running(&mut s, 0, m);
    s.rqs[0].cfs.min_vruntime = m;
    // update_curr (via ticks) advances curr but not min_vruntime (2.6.25/26).
    for k in 1..=10u64 {
        s.scheduler_tick(T0 + k * 4 * MS, 0);
    }
    assert_eq!(v(&s, c), m + 40 * MS);
    assert_eq!(s.rqs[0].cfs.min_vruntime, m, "frozen with one running task");
    // A new leftmost raises it to its vruntime; a non-leftmost insert does not.
    let a = queued(&mut s, 0, Policy::Normal, m + 30 * MS);
    assert_eq!(s.rqs[0].cfs.min_vruntime, m + 30 * MS);
    let b = queued(&mut s, 0, Policy::Normal, m + 35 * MS);
    assert_eq!(s.rqs[0].cfs.min_vruntime, m + 30 * MS);
    // Removing the leftmost moves the cache to rb_next and min_vruntime to its vruntime.
    s.dequeue_tree(0, a);
    assert_eq!(s.rqs[0].cfs.leftmost, Some(b));
    assert_eq!(s.rqs[0].cfs.min_vruntime, m + 35 * MS);
    // Removing the last one leaves it where it was.
    s.dequeue_tree(0, b);
    assert_eq!(s.rqs[0].cfs.leftmost, None);
    assert_eq!(s.rqs[0].cfs.min_vruntime, m + 35 * MS);
}

// ---------------------------------------------------------------------
// check_preempt_wakeup
// ---------------------------------------------------------------------

/// Wakes nothing: runs check_preempt_wakeup(rq, p) on a queued `p` and
/// reports (need_resched, next buddy == p, curr.last_wakeup stamped).
fn cpw(s: &mut Scheduler<()>, curr: TaskId, p: TaskId) -> (bool, bool, bool) {
    s.rqs[0].need_resched = false;
    s.rqs[0].cfs.next = None;
    s.tm(curr).se.last_wakeup = 0;
    s.tm(curr).se.sum_exec_runtime = 123_456;
    s.check_preempt_wakeup(0, p, false, None, false);
    (s.rqs[0].need_resched, s.rqs[0].cfs.next == Some(p), s.t(curr).se.last_wakeup == 123_456)
}

#[test]
fn check_preempt_wakeup_boundaries_2_6_26() {
    // gran = wakeup_gran(curr) = 10 ms for a nice-0 curr (f = 1).
    let x = 5_000 * MS;
    let g = 10 * MS;
    for (lead, preempt) in [(-1i64, false), (0, false), (g as i64, false), (g as i64 + 1, true)] {
        let mut s = sched(V26, None);
        let c = running(&mut s, 0, x);
        let p = queued(&mut s, 0, Policy::Normal, x.wrapping_sub(lead as u64));
        // The buddy is set and curr's last_wakeup stamped whatever the outcome.
        assert_eq!(cpw(&mut s, c, p), (preempt, true, true), "lead {lead}");
    }
    // A nice -5 curr: gran = calc_delta_fair(10 ms, {3121, 1_376_151}) = 3_281_000.
    for (lead, preempt) in [(3_281_000u64, false), (3_281_001, true)] {
        let mut s = sched(V26, None);
        let c = running(&mut s, -5, x);
        let p = queued(&mut s, 0, Policy::Normal, x - lead);
        assert_eq!(cpw(&mut s, c, p).0, preempt, "lead {lead}");
    }
    // A nice 5 curr keeps the full 10 ms (only heavier tasks shrink it).
    let mut s = sched(V26, None);
    let c = running(&mut s, 5, x);
    let p = queued(&mut s, 0, Policy::Normal, x - g);
    assert!(!cpw(&mut s, c, p).0);
}

#[test]
fn check_preempt_wakeup_batch_feature_and_self() {
    let x = 5_000 * MS;
    // SCHED_BATCH wakee far behind: no preemption, but the next buddy is set.
    let mut s = sched(V26, None);
    let c = running(&mut s, 0, x);
    let p = queued(&mut s, 0, Policy::Batch, x - 100 * MS);
    assert_eq!(cpw(&mut s, c, p), (false, true, true));
    // A SCHED_BATCH *curr* is preempted like any other.
    let mut s = sched(V26, None);
    let c = running(&mut s, 0, x);
    s.tm(c).policy = Policy::Batch;
    let p = queued(&mut s, 0, Policy::Normal, x - 100 * MS);
    assert_eq!(cpw(&mut s, c, p), (true, true, true));
    // 893 (WAKEUP_PREEMPT off): no preemption, buddy still set.
    let mut s = sched(V26, Some(893));
    let c = running(&mut s, 0, x);
    let p = queued(&mut s, 0, Policy::Normal, x - 100 * MS);
    assert_eq!(cpw(&mut s, c, p), (false, true, true));
    // p == curr: only the stamp (se == pse returns before the buddy).
    let mut s = sched(V26, None);
    let c = running(&mut s, 0, x);
    assert_eq!(cpw(&mut s, c, c), (false, false, true));
}

#[test]
fn check_preempt_wakeup_wakeup_overlap_patch() {
    // 15afe09bf49 (its own tree's sched_fair.c:1370-1375), added after the
    // WAKEUP_PREEMPT test: `sync && se->avg_overlap < migration_cost &&
    // pse->avg_overlap < migration_cost` reschedules at once. The wakee here
    // has no vruntime lead at all (lead 0 < gran 10 ms), so only that test
    // can preempt. migration_cost = 500_000 ns, compared strictly.
    use crate::patches::Patch;
    let x = 5_000 * MS;
    // (patch, mask, wakee policy, sync, curr overlap, wakee overlap) -> preempt
    let cases: [(bool, u32, Policy, bool, u64, u64, bool); 8] = [
        (true, 895, Policy::Normal, true, 499_999, 499_999, true),
        (true, 895, Policy::Normal, true, 500_000, 0, false),
        (true, 895, Policy::Normal, true, 0, 500_000, false),
        (true, 895, Policy::Normal, false, 0, 0, false),
        // After the WAKEUP_PREEMPT and SCHED_BATCH returns, as in the commit.
        (true, 893, Policy::Normal, true, 0, 0, false),
        (true, 895, Policy::Batch, true, 0, 0, false),
        // Without the patch the same sync wakeup waits for the granularity.
        (false, 895, Policy::Normal, true, 0, 0, false),
        (true, 895, Policy::Normal, true, 1, 1, true),
    ];
    for (i, (patch, mask, policy, sync, o_curr, o_p, preempt)) in cases.into_iter().enumerate() {
        let mut c = Config::new(V26, 1).with_features_mask(mask).unwrap();
        if patch {
            c = c.with_patch(Patch::WakeupOverlap).unwrap();
        }
        c.hres_timers = false;
        let mut s = Scheduler::new(c, SchedDomains { version: V26, per_cpu: vec![vec![]] }).unwrap();
        let curr = running(&mut s, 0, x);
        let p = queued(&mut s, 0, policy, x);
        s.tm(curr).se.avg_overlap = o_curr;
        s.tm(p).se.avg_overlap = o_p;
        s.rqs[0].need_resched = false;
        s.tm(curr).se.sum_exec_runtime = 123_456;
        s.check_preempt_wakeup(0, p, false, None, sync);
        // The stamp and the buddy come before every return.
        assert_eq!(
            (s.rqs[0].need_resched, s.rqs[0].cfs.next, s.t(curr).se.last_wakeup),
            (preempt, Some(p), 123_456),
            "case {i}"
        );
    }
    // sched_migration_cost = -1 is stored in an unsigned int: 4_294_967_295,
    // so an overlap of 4.29 s still counts as small (only task_hot reads -1).
    let mut c = Config::new(V26, 1).with_patch(Patch::WakeupOverlap).unwrap();
    c.tunables.set_migration_cost(-1).unwrap();
    let mut s = Scheduler::new(c, SchedDomains { version: V26, per_cpu: vec![vec![]] }).unwrap();
    let curr = running(&mut s, 0, x);
    let p = queued(&mut s, 0, Policy::Normal, x);
    s.tm(curr).se.avg_overlap = 4_294_967_294;
    s.tm(p).se.avg_overlap = 4_294_967_294;
    s.rqs[0].need_resched = false;
    s.check_preempt_wakeup(0, p, false, None, true);
    assert!(s.rqs[0].need_resched);
    s.tm(p).se.avg_overlap = 4_294_967_295;
    s.rqs[0].need_resched = false;
    s.check_preempt_wakeup(0, p, false, None, true);
    assert!(!s.rqs[0].need_resched);
}

#[test]
fn check_preempt_wakeup_rc4_scales_gran_by_queue_weight() {
    // rc4 calc_delta_asym: gran * W / max(w, 1024). curr nice 0, W = 2048 (curr + p):
    // tmp = 10e6 * 2048 -> SRR(.,16) = 312_500; 312_500 * 2^22 >> 16 = 20_000_000.
    let x = 5_000 * MS;
    for (lead, preempt) in [(20 * MS, false), (20 * MS + 1, true)] {
        let mut s = sched(RC4, None);
        let c = running(&mut s, 0, x);
        let p = queued(&mut s, 0, Policy::Normal, x - lead);
        assert_eq!(s.rqs[0].cfs.load.weight, 2048);
        assert_eq!(cpw(&mut s, c, p).0, preempt, "lead {lead}");
    }
}

#[test]
fn check_preempt_wakeup_2_6_25_unsigned_compare() {
    // 2.6.25: preempt iff p.vruntime + gran < curr.vruntime (u64), gran = 5 ms (f = 1).
    let g = 5 * MS;
    let x = 5_000 * MS;
    for (lead, preempt) in [(g, false), (g + 1, true)] {
        let mut s = sched(V25, None);
        let c = running(&mut s, 0, x);
        let p = queued(&mut s, 0, Policy::Normal, x - lead);
        assert_eq!(cpw(&mut s, c, p).0, preempt, "lead {lead}");
    }
    // Misfire 1: curr just past the wrap (10 ms), p 20 ms behind it (2^64 - 10 ms).
    // Signed, p leads by 20 ms > gran; unsigned, p + gran = 2^64 - 5 ms is not < 10 ms.
    let mut s = sched(V25, None);
    let c = running(&mut s, 0, 10 * MS);
    let p = queued(&mut s, 0, Policy::Normal, (10 * MS).wrapping_sub(20 * MS));
    assert!(!cpw(&mut s, c, p).0, "2.6.25 misses the preemption across the wrap");
    // The same state on 2.6.26 (signed difference, 10 ms gran) preempts.
    let mut s = sched(V26, None);
    let c = running(&mut s, 0, 10 * MS);
    let p = queued(&mut s, 0, Policy::Normal, (10 * MS).wrapping_sub(20 * MS));
    assert!(cpw(&mut s, c, p).0);
    // Misfire 2: p = 2^64 - 3 ms, curr = 2^64 - 1 ms: lead 2 ms < gran, yet
    // p + gran wraps to 2 ms < curr: 2.6.25 preempts.
    let mut s = sched(V25, None);
    let c = running(&mut s, 0, 0u64.wrapping_sub(MS));
    let p = queued(&mut s, 0, Policy::Normal, 0u64.wrapping_sub(3 * MS));
    assert!(cpw(&mut s, c, p).0, "2.6.25 preempts spuriously across the wrap");
}

// ---------------------------------------------------------------------
// check_preempt_tick
// ---------------------------------------------------------------------

#[test]
fn check_preempt_tick_at_the_slice_boundary() {
    // Two nice-0 tasks: ideal = sched_slice = 20 ms * 1024 / 2048 = 10 ms; resched iff ran > ideal.
    for (ran, resched) in [(10 * MS, false), (10 * MS + 1, true)] {
        let mut s = sched(V26, None);
        let c = running(&mut s, 0, 0);
        let _q = queued(&mut s, 0, Policy::Normal, 0);
        let se = &mut s.tm(c).se;
        se.prev_sum_exec_runtime = 1_000;
        se.sum_exec_runtime = 1_000 + ran;
        s.rqs[0].need_resched = false;
        s.scheduler_tick(T0, 0); // update_curr adds 0 (clock == exec_start)
        assert_eq!(s.rqs[0].need_resched, resched, "ran {ran}");
    }
    // A lone task is not checked while WAKEUP_PREEMPT is on (nr_running > 1 test)...
    let mut s = sched(V26, None);
    let c = running(&mut s, 0, 0);
    s.tm(c).se.sum_exec_runtime = s.t(c).se.prev_sum_exec_runtime + 500 * MS;
    s.scheduler_tick(T0, 0);
    assert!(!s.rqs[0].need_resched);
    // ... but with it off (893) it is, against sched_slice(1 task) = the whole 20 ms.
    let mut s = sched(V26, Some(893));
    let c = running(&mut s, 0, 0);
    s.rqs[0].need_resched = false;
    s.tm(c).se.sum_exec_runtime = s.t(c).se.prev_sum_exec_runtime + 20 * MS + 1;
    s.scheduler_tick(T0, 0);
    assert!(s.rqs[0].need_resched);
    // 2.6.25 slices use calc_delta_mine: 20 ms * 1024 / 2048 with the 2.6.25 inverse of
    // 2048 = (2^32 - 1024) / 2049 = 2_096_128: SRR(312_500 * 2_096_128, 16) = 9_995_117.
    for (ran, resched) in [(9_995_117u64, false), (9_995_118, true)] {
        let mut s = sched(V25, None);
        let c = running(&mut s, 0, 0);
        let _q = queued(&mut s, 0, Policy::Normal, 0);
        s.rqs[0].need_resched = false;
        let se = &mut s.tm(c).se;
        se.sum_exec_runtime = se.prev_sum_exec_runtime + ran;
        s.scheduler_tick(T0, 0);
        assert_eq!(s.rqs[0].need_resched, resched, "2.6.25 ran {ran}");
    }
}

// ---------------------------------------------------------------------
// buddies
// ---------------------------------------------------------------------

/// Leftmost at x, next buddy `d` to its right; returns who is picked and
/// whether the buddy is still set afterwards.
fn pick_with_buddy(v: KernelVersion, buddy_nice: i32, d: u64, extra: usize) -> (bool, bool) {
    let mut s = sched(v, None);
    let x = 5_000 * MS;
    let left = queued(&mut s, 0, Policy::Normal, x);
    let next = queued(&mut s, buddy_nice, Policy::Normal, x + d);
    for _ in 0..extra {
        queued(&mut s, 0, Policy::Normal, x + 500 * MS);
    }
    assert_eq!(s.rqs[0].cfs.leftmost, Some(left));
    s.rqs[0].cfs.next = Some(next);
    let (chosen, _) = s.pick_next_entity(0).unwrap();
    (chosen == next, s.rqs[0].cfs.next == Some(next))
}

#[test]
fn buddy_pick_2_6_26() {
    // next wins iff wakeup_preempt_entity(next, left) == 0, i.e. 0 <= next - left <= wakeup_gran(next).
    // nice-0 buddy: gran 10 ms.
    assert_eq!(pick_with_buddy(V26, 0, 10 * MS, 0), (true, false), "within gran: buddy picked and cleared");
    // Beyond: the leftmost is picked and the buddy *stays set* (it is only cleared
    // when the buddy itself leaves the tree).
    assert_eq!(pick_with_buddy(V26, 0, 10 * MS + 1, 0), (false, true));
    // A heavier buddy (nice -5) has the smaller gran 3_281_000.
    assert!(pick_with_buddy(V26, -5, 3_281_000, 0).0);
    assert!(!pick_with_buddy(V26, -5, 3_281_001, 0).0);
    // rc4: gran = calc_delta_asym(10 ms, next) = 10 ms * W / 1024 with W = 2048 here: 20 ms.
    assert!(pick_with_buddy(RC4, 0, 20 * MS, 0).0);
    assert!(!pick_with_buddy(RC4, 0, 20 * MS + 1, 0).0);
}

#[test]
fn buddy_pick_2_6_25_queue_scaled() {
    // 2.6.25: next wins iff 0 <= diff <= calc_delta_fair(wakeup_gran, &cfs_rq->load).
    // Three nice-0 tasks queued (W = 3072): 2.6.25 inverse (2^32 - 1536) / 3073 = 1_397_645;
    // tmp = 5e6 * 1024 = 5_120_000_000 -> SRR(tmp,16) = 78_125;
    // (78_125 * 1_397_645 + 32_768) >> 16 = 1_666_123.
    assert!(pick_with_buddy(V25, 0, 1_666_123, 1).0);
    assert!(!pick_with_buddy(V25, 0, 1_666_124, 1).0);
    // The gran shrinks as the queue grows and does not depend on the buddy's weight:
    // a nice -5 buddy in the same queue (W = 1024*2 + 3121 = 5169) gets
    // inv (2^32 - 2584) / 5170 = 830_747 -> (78_125 * 830_747 + 32_768) >> 16 = 990_328.
    assert!(pick_with_buddy(V25, -5, 990_328, 1).0);
    assert!(!pick_with_buddy(V25, -5, 990_329, 1).0);
}

// ---------------------------------------------------------------------
// task_new_fair, yield
// ---------------------------------------------------------------------

#[test]
fn child_runs_first_swaps_with_an_unsigned_compare() {
    let run = |m: u64, parent_v: u64, child_runs_first: bool, same_cpu: bool| {
        let mut s = sched(V26, None);
        s.cfg.tunables.child_runs_first = child_runs_first;
        let p = running(&mut s, 0, parent_v);
        let c = sleeping(&mut s, 0, 0);
        s.rqs[0].cfs.min_vruntime = m;
        s.rqs[0].need_resched = false;
        s.task_new_fair(0, c, Some(if same_cpu { 0 } else { 1 }));
        assert!(s.rqs[0].need_resched, "task_new_fair always reschedules");
        (v(&s, p), v(&s, c))
    };
    // Child placed at M + vslice_add(nr 1, W 1024, w 1024) = M + 10 ms.
    let m = 1_000 * MS;
    // Parent at M + 3 ms < child: swapped.
    assert_eq!(run(m, m + 3 * MS, true, true), (m + 10 * MS, m + 3 * MS));
    // Off, or the child on another CPU: not swapped.
    assert_eq!(run(m, m + 3 * MS, false, true), (m + 3 * MS, m + 10 * MS));
    assert_eq!(run(m, m + 3 * MS, true, false), (m + 3 * MS, m + 10 * MS));
    // Parent already right of the child: nothing to do.
    assert_eq!(run(m, m + 15 * MS, true, true), (m + 15 * MS, m + 10 * MS));
    // Across the wrap: M = 2^64 - 5 ms, parent at 2^64 - 4 ms, child at M + 10 ms = 5 ms
    // (wrapped). The parent is 9 ms before the child, but `curr->vruntime < se->vruntime`
    // compares raw u64s (2^64 - 4 ms < 5 ms is false): no swap, the parent stays left.
    let m = 0u64.wrapping_sub(5 * MS);
    let (pv, cv) = run(m, 0u64.wrapping_sub(4 * MS), true, true);
    assert_eq!((pv, cv), (0u64.wrapping_sub(4 * MS), 5 * MS));
}

#[test]
fn yield_normal_batch_and_compat() {
    let x = 5_000 * MS;
    let setup = |policy: Policy, compat: bool, curr_v: u64| {
        let mut s = sched(V26, None);
        s.cfg.tunables.compat_yield = compat;
        let c = running(&mut s, 0, curr_v);
        s.tm(c).policy = policy;
        let _a = queued(&mut s, 0, Policy::Normal, x + MS);
        let _b = queued(&mut s, 0, Policy::Normal, x + 9 * MS);
        s.yield_task_fair(0);
        v(&s, c)
    };
    // SCHED_NORMAL, compat_yield off: just update_curr (delta 0 here): unchanged.
    assert_eq!(setup(Policy::Normal, false, x), x);
    // SCHED_BATCH: rightmost.vruntime + 1.
    assert_eq!(setup(Policy::Batch, false, x), x + 9 * MS + 1);
    // compat_yield: the same for SCHED_NORMAL.
    assert_eq!(setup(Policy::Normal, true, x), x + 9 * MS + 1);
    // Already right of the rightmost: unchanged.
    assert_eq!(setup(Policy::Batch, false, x + 20 * MS), x + 20 * MS);
    // Level with the rightmost: `if (unlikely(rightmost->vruntime < se->vruntime))
    // return;` does not fire, so it still moves one past it.
    assert_eq!(setup(Policy::Batch, false, x + 9 * MS), x + 9 * MS + 1);
    // Alone on the queue: nothing.
    let mut s = sched(V26, None);
    let c = running(&mut s, 0, x);
    s.tm(c).policy = Policy::Batch;
    s.yield_task_fair(0);
    assert_eq!(v(&s, c), x);
}

// ---------------------------------------------------------------------
// wraparound of vruntime: identical decisions from any origin
// ---------------------------------------------------------------------

/// Runs a fixed 1-CPU workload for `ms` milliseconds with the cfs_rq's
/// min_vruntime starting at `origin` and returns the sequence of picks and
/// how far min_vruntime moved from `origin` (the same from every origin; a
/// run that ignored the origin would not match).
/// Workload: three hogs (nice 0, 5, -5) and two sleepers that alternate
/// 3 ms of work with 7 ms / 13 ms of sleep, periodic tick at HZ=1000.
fn pick_trace(v: KernelVersion, origin: u64, ms: u64) -> (Vec<(u64, Option<TaskId>)>, u64) {
    let mut s = sched(v, None);
    s.rqs[0].cfs = CfsRq::with_min_vruntime(origin);
    s.cfg.hz = 1000;
    let mut trace = Vec::new();
    let ids: Vec<TaskId> =
        [0, 5, -5, 0, 0].iter().map(|&n| s.spawn(0, 0, TaskParams::normal().nice(n)).unwrap()).collect();
    let sleepers = [(ids[3], 7u64), (ids[4], 13u64)];
    let mut ran_since = [0u64; 2];
    let mut wake_at: [Option<u64>; 2] = [None, None];
    let mut sw = s.do_schedule(0, 0, Deschedule::Preempt);
    trace.push((0, sw.next));
    for t in 1..=ms {
        let now = t * MS;
        for (i, w) in wake_at.iter_mut().enumerate() {
            if *w == Some(t) {
                *w = None;
                s.try_to_wake_up(now, sleepers[i].0, 0, false, false);
            }
        }
        s.scheduler_tick(now, 0);
        let mut how = Deschedule::Preempt;
        if let Some(i) = sleepers.iter().position(|(id, _)| Some(*id) == sw.next) {
            ran_since[i] += 1;
            if ran_since[i] >= 3 {
                ran_since[i] = 0;
                wake_at[i] = Some(t + sleepers[i].1);
                how = Deschedule::Sleep;
            }
        }
        if how == Deschedule::Sleep || s.rqs[0].need_resched {
            sw = s.do_schedule(now, 0, how);
            trace.push((t, sw.next));
        }
        s.check_invariants().unwrap();
    }
    let moved = s.rqs[0].cfs.min_vruntime.wrapping_sub(origin);
    assert!((moved as i64) > 0, "min_vruntime advanced by {moved} from {origin:#x}");
    (trace, moved)
}

#[test]
fn vruntime_origin_does_not_change_any_decision() {
    // The kernel compares vruntimes only through s64 differences, so shifting every
    // vruntime by a constant changes no pick. Origins: the boot value 2^64 - 2^20, 0,
    // just below the s64 sign flip, just below the u64 wrap.
    for v in [RC4, V26] {
        let reference = pick_trace(v, INITIAL_MIN_VRUNTIME, 2_000);
        assert!(reference.0.len() > 300, "{v}: the workload switches often ({})", reference.0.len());
        for origin in [0, (1u64 << 63) - 3 * MS, u64::MAX - 7 * MS, 1u64 << 63] {
            assert_eq!(pick_trace(v, origin, 2_000), reference, "{v} origin {origin:#x}");
        }
    }
    // 2.6.25's unsigned wakeup compare is origin-dependent by design (see
    // check_preempt_wakeup_2_6_25_unsigned_compare), so only origins whose run
    // never crosses 2^64 are comparable: 0, and either side of the s64 sign flip.
    let reference = pick_trace(V25, 0, 2_000);
    assert!(reference.0.len() > 300);
    for origin in [(1u64 << 63) - 3 * MS, 1u64 << 63, 1u64 << 40] {
        assert_eq!(pick_trace(V25, origin, 2_000), reference, "2.6.25 origin {origin:#x}");
    }
}

#[test]
fn last_preempter_is_forgotten_at_tick_preemption_and_sleep() {
    // patches.md §4: check_preempt_tick clears curr->last_preempter when the slice
    // is used up (ran > ideal); dequeue_entity(sleep) clears it too.
    use crate::patches::Patch;
    let mut s = sched(RC4, None);
    s.cfg = s.cfg.with_patch(Patch::LastPreempter).unwrap();
    s.rules = s.cfg.rules();
    let c = running(&mut s, 0, 0);
    let q = queued(&mut s, 0, Policy::Normal, 0);
    s.tm(c).se.last_preempter = Some(q);
    // rc4 slice with two nice-0 tasks: calc_delta_mine(20 ms, 1024, lazy 2048) = 9_995_122
    // (inv 2_096_129: SRR(312_500 * 2_096_129, 16)); ran exactly that: kept.
    let se = &mut s.tm(c).se;
    se.sum_exec_runtime = se.prev_sum_exec_runtime + 9_995_122;
    s.scheduler_tick(T0, 0);
    assert_eq!(s.t(c).se.last_preempter, Some(q));
    let se = &mut s.tm(c).se;
    se.sum_exec_runtime = se.prev_sum_exec_runtime + 9_995_123;
    s.scheduler_tick(T0, 0);
    assert_eq!(s.t(c).se.last_preempter, None, "cleared with the tick preemption");
    s.tm(q).se.last_preempter = Some(c);
    s.deactivate_task(0, q, true);
    assert_eq!(s.t(q).se.last_preempter, None, "cleared when it sleeps");
}

// ---------------------------------------------------------------------
// entity_tick and the hrtick (2.6.26 sched_fair.c:776-802, sched.c:1040-1110)
// ---------------------------------------------------------------------

/// 2.6.26 with high-resolution timers: A runs 30 ms past T0 (more than any
/// slice below), B is queued when `competition`. need_resched cleared, and
/// no hrtick armed (the enqueue of B may have armed one).
fn hrtick_scene(competition: bool) -> (Scheduler<()>, TaskId) {
    let mut s = sched(V26, None);
    s.cfg.hres_timers = true;
    let a = running(&mut s, 0, 0);
    if competition {
        queued(&mut s, 0, Policy::Normal, 0);
    }
    let se = &mut s.tm(a).se;
    se.sum_exec_runtime = se.prev_sum_exec_runtime + 30 * MS;
    s.rqs[0].need_resched = false;
    s.rqs[0].hrtick_expire = None;
    (s, a)
}

#[test]
fn the_periodic_tick_defers_to_an_armed_hrtick_unless_double_tick() {
    // entity_tick: `if (!sched_feat(DOUBLE_TICK) && hrtimer_active(&rq->hrtick_timer))
    // return;` before check_preempt_tick. A has used 30 ms of a ~10 ms slice (two
    // nice-0 tasks: period 20 ms / 2), so any check reschedules.
    use crate::features::Feature;
    let now = T0 + MS;
    for (expiry, double_tick, hrtick_bit, want_resched) in [
        (None, false, true, true),            // no timer: checked
        (Some(now + MS), false, true, false), // armed ahead: deferred
        (Some(now + MS), true, true, true),   // DOUBLE_TICK: checked anyway
        (Some(now), false, true, true),       // expiring now: no longer active
        (Some(now - 1), false, true, true),   // expired
        (Some(now + MS), false, false, false), // HRTICK switched off after arming:
                                              // the timer is still active
    ] {
        let (mut s, _a) = hrtick_scene(true);
        s.cfg.features.set(Feature::DoubleTick, double_tick).unwrap();
        s.cfg.features.set(Feature::Hrtick, hrtick_bit).unwrap();
        s.rqs[0].hrtick_expire = expiry;
        s.scheduler_tick(now, 0);
        assert_eq!(s.rqs[0].need_resched, want_resched, "expiry {expiry:?} double {double_tick} hrtick {hrtick_bit}");
    }
}

#[test]
fn a_lone_task_is_checked_at_the_tick_only_without_wakeup_preemption() {
    // entity_tick: `if (cfs_rq->nr_running > 1 || !sched_feat(WAKEUP_PREEMPT))
    // check_preempt_tick`. Alone, A's slice is the whole period (20 ms) and it ran 30:
    // with 895 nothing happens, with 893 (WAKEUP_PREEMPT off) the tick reschedules.
    for (mask, want) in [(895, false), (893, true)] {
        let (mut s, _a) = hrtick_scene(false);
        s.cfg = s.cfg.with_features_mask(mask).unwrap();
        s.cfg.hres_timers = true;
        s.scheduler_tick(T0 + MS, 0);
        assert_eq!(s.rqs[0].need_resched, want, "features {mask}");
    }
    // With competition both check.
    for mask in [895, 893] {
        let (mut s, _a) = hrtick_scene(true);
        s.cfg = s.cfg.with_features_mask(mask).unwrap();
        s.scheduler_tick(T0 + MS, 0);
        assert!(s.rqs[0].need_resched, "features {mask}");
    }
}

#[test]
fn hrtick_start_fair_reschedules_an_overrun_and_floors_short_slices() {
    // hrtick_start_fair (2.6.26 sched_fair.c:852-880): delta = slice - ran; delta < 0
    // -> resched_task, no timer; from the pick path (requeue = 0) delta = max(10 µs,
    // delta). Two nice-0 tasks, 2.6.26 final's sched_slice (period * w, do_div by the
    // queue weight): 20 ms * 1024 / 2048 = 10 ms.
    let slice = 10_000_000;
    for (ran, want) in [
        (slice + 1, None),
        (slice, Some(10_000)), // delta = 0 is not an overrun: floored to 10 µs
        (slice - 5_000, Some(10_000)),
        (slice - 2_000_000, Some(2_000_000)),
    ] {
        let (mut s, a) = hrtick_scene(true);
        let se = &mut s.tm(a).se;
        se.sum_exec_runtime = se.prev_sum_exec_runtime + ran;
        s.hrtick_start_fair(0, false);
        let clock = s.rqs[0].clock;
        assert_eq!(s.rqs[0].hrtick_expire.map(|e| e - clock), want, "ran {ran}");
        assert_eq!(s.rqs[0].need_resched, want.is_none(), "ran {ran}");
    }
}

#[test]
fn v2_6_25_next_buddy_wins_a_vruntime_tie() {
    // 2.6.25 pick_next (4b119e21 sched_fair.c:630-648): diff = next - leftmost;
    // `if (diff < 0) return se;` then `if (diff > gran) return se;` -> next. The queue
    // holds three nice-0 tasks (curr counts): gran = calc_delta_fair(2.6.25's
    // wakeup_granularity 5 ms on one CPU, load 3072) ~ 5 ms * 1024 / 3072 = 1.67 ms. A
    // buddy at the leftmost's own vruntime (diff = 0) wins, one 1 ns or 1.6 ms right of
    // it wins, 1.7 ms right loses.
    for (offset, wins) in [(0, true), (1, true), (1_600_000, true), (1_700_000, false)] {
        let mut s = sched(V25, None);
        let _c = running(&mut s, 0, 100 * MS);
        let l = queued(&mut s, 0, Policy::Normal, 50 * MS);
        let n = queued(&mut s, 0, Policy::Normal, 50 * MS + offset);
        s.rqs[0].cfs.next = Some(n);
        assert_eq!(s.rqs[0].cfs.load.weight, 3072);
        assert_eq!(s.buddy_wins(0, n, l), wins, "next {offset} ns right of the leftmost");
    }
}

#[test]
fn last_preempter_holds_the_cpu_against_a_second_lighter_or_equal_wakee() {
    // patches.md §4 in check_preempt_wakeup, after the vruntime test said "preempt":
    //   if (se->last_preempter && se->last_preempter != pse && se->load.weight >=
    //       pse->load.weight && curr ran < sysctl_sched_migration_cost) -> no preemption.
    // P (nice `p_nice`) leads curr C by 100 ms; C has run `exec` ns since it was picked.
    use crate::patches::Patch;
    let x = 5_000 * MS;
    let other = TaskId(999);
    for (last, p_nice, exec, preempt) in [
        (None, 0, 0, true),         // nobody preempted C yet
        (Some(other), 0, 0, false), // a second wakee within 500 µs: held
        (Some(other), 0, 499_999, false),
        (Some(other), 0, 500_000, true), // C ran its migration cost: preempted
        (Some(other), -5, 0, true),      // a heavier wakee (3121 > 1024) always wins
        (Some(other), 5, 0, false),      // a lighter one is held too
        (Some(TaskId(u32::MAX)), 0, 0, false),
    ] {
        let mut s = sched(RC4, None);
        s.cfg = s.cfg.with_patch(Patch::LastPreempter).unwrap();
        s.rules = s.cfg.rules();
        let c = running(&mut s, 0, x);
        let p = queued(&mut s, p_nice, Policy::Normal, x - 100 * MS);
        let se = &mut s.tm(c).se;
        se.last_preempter = last;
        se.sum_exec_runtime = se.prev_sum_exec_runtime + exec;
        s.rqs[0].need_resched = false;
        s.check_preempt_wakeup(0, p, false, None, false);
        assert_eq!(s.rqs[0].need_resched, preempt, "{last:?} nice {p_nice} exec {exec}");
    }
    // The wakee is C's own last preempter: preempted at once.
    let mut s = sched(RC4, None);
    s.cfg = s.cfg.with_patch(Patch::LastPreempter).unwrap();
    s.rules = s.cfg.rules();
    let c = running(&mut s, 0, x);
    let p = queued(&mut s, 0, Policy::Normal, x - 100 * MS);
    s.tm(c).se.last_preempter = Some(p);
    s.rqs[0].need_resched = false;
    s.check_preempt_wakeup(0, p, false, None, false);
    assert!(s.rqs[0].need_resched);
}

/// Keeps the last PreemptCheck event.
#[derive(Default)]
struct LastCheck(Option<(bool, crate::observe::PreemptReason)>);

impl crate::observe::Observer for LastCheck {
    fn event(&mut self, _: u64, e: &crate::observe::Event) {
        if let crate::observe::Event::PreemptCheck { preempt, reason, .. } = e {
            self.0 = Some((*preempt, *reason));
        }
    }
}

#[test]
fn a_check_that_does_not_preempt_reports_only_a_forks_own_resched() {
    // The PreemptCheck event says whether this wakeup (or fork) leaves the CPU
    // rescheduling. For a fork, task_new_fair has already called resched_task, so a
    // check that declines still reports the pending reschedule; for a wakeup, a
    // need_resched somebody else set earlier is not this wakeup's doing.
    use crate::observe::PreemptReason::{BatchWakee, FeatureOff, LastPreempterHold, WithinGranularity};
    use crate::patches::Patch;
    let x = 5_000 * MS;
    for (v, mask, policy, lead, reason) in [
        (V26, 895, Policy::Batch, 100 * MS, BatchWakee),
        (V26, 893, Policy::Normal, 100 * MS, FeatureOff),
        (V26, 895, Policy::Normal, 0, WithinGranularity),
        // rc4 + last_preempter, curr preempted by another task 0 ns ago (see above).
        (RC4, 895, Policy::Normal, 100 * MS, LastPreempterHold),
    ] {
        for fork in [false, true] {
            let mut c = Config::new(v, 1).with_features_mask(mask).unwrap();
            if reason == LastPreempterHold {
                c = c.with_patch(Patch::LastPreempter).unwrap();
            }
            c.hres_timers = false;
            let domains = SchedDomains { version: v, per_cpu: vec![vec![]] };
            let mut s = Scheduler::with_observer(c, domains, LastCheck::default()).unwrap();
            let curr = s.spawn(T0, 0, TaskParams::normal()).unwrap();
            s.do_schedule(T0, 0, Deschedule::Preempt);
            s.tm(curr).se.vruntime = x;
            s.tm(curr).se.last_preempter = Some(TaskId(999));
            let p = s.spawn(T0, 0, TaskParams::normal().policy(policy)).unwrap();
            s.dequeue_tree(0, p);
            s.tm(p).se.vruntime = x - lead;
            s.enqueue_tree(0, p);
            s.rqs[0].need_resched = true;
            s.check_preempt_wakeup(0, p, fork, None, false);
            assert_eq!(s.observer().0, Some((fork, reason)), "{reason:?} fork {fork}");
        }
    }
}

#[test]
fn renice_reschedules_for_a_heavier_queued_task_or_a_lighter_running_one() {
    // set_user_nice (2.6.26 sched.c:4553-4565): requeue with the new weight, then
    // `if (delta < 0 || (delta > 0 && task_running(rq, p))) resched_task(rq->curr)`,
    // delta = new prio - old prio (a lower nice is a lower prio).
    let x = 5_000 * MS;
    for (target_running, old, new, resched) in [
        (false, 0, -5, true), // a queued task got heavier
        (false, 0, 5, false), // a queued task got lighter: curr keeps the CPU
        (true, 0, 5, true),   // the running task got lighter
        (true, 0, -5, true),  // the running task got heavier (delta < 0 reschedules too)
        (false, 3, 3, false), // no change
        (true, 3, 3, false),
    ] {
        let mut s = sched(V26, None);
        let c = running(&mut s, old, x);
        let q = queued(&mut s, old, Policy::Normal, x + MS);
        s.rqs[0].need_resched = false;
        let id = if target_running { c } else { q };
        s.set_nice(T0, id, new).unwrap();
        assert_eq!(s.t(id).se.load.weight, crate::weights::PRIO_TO_WEIGHT[(new + 20) as usize]);
        assert_eq!(s.rqs[0].need_resched, resched, "running {target_running}: nice {old} -> {new}");
    }
    // sched_setscheduler between the fair policies (sched.c:4850-4864) keeps the prio,
    // so the requeue sees delta 0: the running task is not rescheduled, and a queued
    // one only gets check_preempt_curr, where a SCHED_BATCH wakee never preempts.
    for target_running in [true, false] {
        let mut s = sched(V26, None);
        let c = running(&mut s, 0, x);
        let q = queued(&mut s, 0, Policy::Normal, x + MS);
        s.rqs[0].need_resched = false;
        s.set_policy(T0, if target_running { c } else { q }, Policy::Batch).unwrap();
        assert!(!s.rqs[0].need_resched, "running {target_running}");
    }
    // A sleeping task is not on a runqueue: only its weight changes.
    let mut s = sched(V26, None);
    running(&mut s, 0, x);
    let z = sleeping(&mut s, 0, x);
    s.rqs[0].need_resched = false;
    s.set_nice(T0, z, -10).unwrap();
    assert!(!s.rqs[0].need_resched);
}

/// Records the tasks of Exit events.
#[derive(Default)]
struct Exits(Vec<TaskId>);

impl crate::observe::Observer for Exits {
    fn event(&mut self, _: u64, e: &crate::observe::Event) {
        if let crate::observe::Event::Exit { task } = e {
            self.0.push(*task);
        }
    }
}

#[test]
fn schedule_counts_switches_and_reports_exits() {
    // rq->nr_switches counts context switches (prev != next); an exiting task's last
    // schedule() is reported once, a sleeping one's not at all.
    let c = Config::new(V26, 1);
    let mut s =
        Scheduler::with_observer(c, SchedDomains { version: V26, per_cpu: vec![vec![]] }, Exits::default()).unwrap();
    let a = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    let b = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    let first = s.do_schedule(T0, 0, Deschedule::Preempt).next.unwrap();
    assert_eq!(s.rqs[0].nr_switches, 1);
    s.do_schedule(T0 + MS, 0, Deschedule::Sleep);
    assert_eq!(s.rqs[0].nr_switches, 2);
    let second = s.rqs[0].curr.unwrap();
    assert_ne!(first, second);
    assert!([a, b].contains(&second));
    s.do_schedule(T0 + 2 * MS, 0, Deschedule::Exit);
    assert_eq!(s.rqs[0].nr_switches, 3, "to the idle task");
    assert_eq!(s.observer().0, vec![second]);
    // Nothing runnable: schedule() again keeps idle, no switch.
    s.do_schedule(T0 + 3 * MS, 0, Deschedule::Preempt);
    assert_eq!(s.rqs[0].nr_switches, 3);
}
