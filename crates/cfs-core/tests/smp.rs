//! Multi-CPU scenarios on hand-built sched domains (a Q6600: {0,1} and
//! {2,3} share an L2), each pinning one decision branch of the kernel.
//!
//! Kernel lines (2.6.26 bce7f793 unless noted): try_to_wake_up
//! sched.c:2078-2163; select_task_rq_fair sched_fair.c:1043-1106;
//! wake_affine :990-1041 (rc4 e490517a: sync shortcut before the
//! subtraction, no `balanced`, no AFFINE_WAKEUPS; 2.6.25 the same);
//! wake_idle :940-978; check_preempt_wakeup :1166-1224; source_load /
//! target_load / cpu_avg_load_per_task sched.c:1878-1915;
//! find_idlest_group / find_idlest_cpu / sched_balance_self
//! sched.c:1917-2062; pull_task / can_migrate_task / balance_tasks
//! sched.c:2720-2850; find_busiest_group :2922-3215; find_busiest_queue
//! :3220-3245; load_balance :3262-3392; load_balance_newidle :3400-3490;
//! idle_balance :3500-3530; active_load_balance :3541-3578;
//! rebalance_domains :3666-3735; task_hot sched.c:1683-1700;
//! __load_balance_iterator sched_fair.c:1272-1310; patches: seeds/patches.md.

mod common;

use cfs_core::{
    Config, Deschedule, Event, KernelVersion, MigrateReason, Patch, PreemptReason, Scheduler, TaskId, TaskParams,
    WakeReason,
};
use cfs_topology::CpuMask;
use common::*;

const V25: KernelVersion = KernelVersion::V2_6_25;
const RC4: KernelVersion = KernelVersion::V2_6_26Rc4;
const V26: KernelVersion = KernelVersion::V2_6_26;
const MS: u64 = 1_000_000;
const US: u64 = 1_000;

type S = Scheduler<Recorder>;

fn mk(c: cfs_core::Config, d: cfs_core::SchedDomains) -> S {
    Scheduler::with_observer(c, d, Recorder::default()).unwrap()
}

/// The last Wake event for `task`.
fn wake_reason(s: &S, task: TaskId) -> (usize, WakeReason, bool) {
    s.observer()
        .events
        .iter()
        .rev()
        .find_map(|(_, e)| match e {
            Event::Wake { task: t, target, reason, sync, .. } if *t == task => Some((*target, *reason, *sync)),
            _ => None,
        })
        .expect("a wake event")
}

fn last_preempt_check(s: &S, wakee: TaskId) -> (bool, PreemptReason) {
    s.observer()
        .events
        .iter()
        .rev()
        .find_map(|(_, e)| match e {
            Event::PreemptCheck { wakee: w, preempt, reason, .. } if *w == wakee => Some((*preempt, *reason)),
            _ => None,
        })
        .expect("a preemption check")
}

fn migrations(s: &S) -> Vec<(TaskId, usize, usize, MigrateReason)> {
    s.observer()
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Migrate { task, from, to, reason } => Some((*task, *from, *to, *reason)),
            _ => None,
        })
        .collect()
}

/// A task spawned on `cpu` at 0 and switched to: the waker of most scenes.
fn running_on(s: &mut S, cpu: usize) -> TaskId {
    let id = s.spawn(0, cpu, TaskParams::normal()).unwrap();
    s.schedule(0, cpu, Deschedule::Preempt).unwrap();
    id
}

/// Runs `task` on `cpu` (spawned there at `t`), then lets it block at `t + 100 us`.
fn sleeper_on(s: &mut S, cpu: usize, t: u64) -> TaskId {
    let id = s.spawn(t, cpu, TaskParams::normal()).unwrap();
    let mut guard = 0;
    while s.curr(cpu) != Some(id) {
        s.schedule(t, cpu, Deschedule::Preempt).unwrap();
        guard += 1;
        assert!(guard < 5);
    }
    s.schedule(t + 100 * US, cpu, Deschedule::Sleep).unwrap();
    id
}

// ---------------------------------------------------------------------
// sync wakeups and wake_affine
// ---------------------------------------------------------------------

/// The seed scenario: waker W and hog H on CPU 0 (W running), the wakee P
/// asleep with prev CPU 2 (idle). No ticks have run: cpu_load[] = 0.
fn sync_scene(c: cfs_core::Config) -> (S, TaskId, TaskId) {
    let v = c.version;
    let mut s = mk(c, q6600(v));
    let w = running_on(&mut s, 0);
    let _h = s.spawn(0, 0, TaskParams::normal()).unwrap(); // queued behind W (resched not delivered)
    let p = sleeper_on(&mut s, 2, 0);
    assert_eq!(s.curr(0), Some(w));
    assert!(s.rq(2).unwrap().nr_running == 0);
    (s, w, p)
}

#[test]
fn sync_wakeup_rc4_pulls_to_the_busier_waker_cpu_final_does_not() {
    // select_task_rq_fair from CPU 0 for P (prev 2): this_sd = CPU level (first domain of
    // CPU 0 spanning 2), wake_idx 1, imbalance = 100 + 25/2 = 112.
    // load = source_load(2, 1) = min(cpu_load[0] = 0, 0) = 0;
    // this_load = target_load(0, 1) = max(0, 2 * 1024) = 2048.
    // rc4 (and 2.6.25): sync && curr W fair && avg_overlap(W) = 0 and avg_overlap(P) = 0
    //   < migration_cost -> affine at once: P goes to the busier CPU 0.
    // 2.6.26: tl = 2048 - 1024 = 1024; balanced = 100 * (1024 + 1024) <= 112 * 0 is false,
    //   so the shortcut is refused; (tl <= load) is false too -> not affine; no
    //   SD_WAKE_BALANCE; wake_idle(2): CPU 2 is idle -> stays on CPU 2.
    for v in [RC4, V25] {
        let (mut s, _w, p) = sync_scene(cfg(v, 4));
        let out = s.wake_up(MS, p, 0, true).unwrap();
        assert_eq!(out.cpu, 0, "{v}");
        assert_eq!(wake_reason(&s, p), (0, WakeReason::AffineSync, true), "{v}");
        assert_eq!(s.rq(0).unwrap().nr_running, 3);
    }
    let (mut s, _w, p) = sync_scene(cfg(V26, 4));
    let out = s.wake_up(MS, p, 0, true).unwrap();
    assert_eq!(out.cpu, 2);
    assert_eq!(wake_reason(&s, p), (2, WakeReason::Previous, true));
    // The affinity-fix patch (b3137bc8e77 alone on rc4) takes the 2.6.26 branch.
    let (mut s, _w, p) = sync_scene(cfg(RC4, 4).with_patch(Patch::AffinityFix).unwrap());
    assert_eq!(s.wake_up(MS, p, 0, true).unwrap().cpu, 2);
    assert_eq!(wake_reason(&s, p).1, WakeReason::Previous);
}

/// The runqueue reads a wakeup reports (`Event::Scan`), per
/// select_task_rq_fair (2.6.26 sched_fair.c:1052-1101, the same in 2.6.25 and
/// rc4): the loads of prev_cpu and this_cpu are read (2) as soon as the two
/// CPUs share a domain and the wakee may run here, also when prev_cpu is
/// this CPU (the `prev_cpu == this_cpu` exit comes after wake_affine); a
/// wakee whose mask excludes this CPU takes `goto out` before them (0).
#[test]
fn a_wakeup_reports_the_two_load_reads_only_when_it_makes_them() {
    let scans = |s: &mut S, p: TaskId, from: usize| {
        s.observer_mut().clear();
        s.wake_up(MS, p, from, true).unwrap();
        let e = &s.observer().events;
        let reads: Vec<(usize, u32)> = e
            .iter()
            .filter_map(|(_, e)| if let Event::Scan { cpu, cpus } = e { Some((*cpu, *cpus)) } else { None })
            .collect();
        // Reported before the Wake they belong to.
        let wake_at = e.iter().position(|(_, e)| matches!(e, Event::Wake { .. })).unwrap();
        assert!(e.iter().take(wake_at).filter(|(_, e)| matches!(e, Event::Scan { .. })).count() == reads.len());
        reads
    };
    for v in [V25, RC4, V26] {
        // Remote: W on CPU 0 wakes P, which slept on CPU 2.
        let (mut s, _w, p) = sync_scene(cfg(v, 4));
        assert_eq!(scans(&mut s, p, 0), [(0, 2)], "{v}");
        // Local: P slept on CPU 0 and is woken from CPU 0.
        let mut s = mk(cfg(v, 4), q6600(v));
        let p = sleeper_on(&mut s, 0, 0);
        assert_eq!(scans(&mut s, p, 0), [(0, 2)], "{v}");
        // P may run on CPU 2 only: no reads.
        let (mut s, _w, p) = sync_scene(cfg(v, 4));
        s.set_affinity(MS, p, CpuMask::single(2)).unwrap();
        assert_eq!(scans(&mut s, p, 0), [], "{v}");
    }
}

#[test]
fn sync_wakeups_off_makes_the_same_wakeup_non_sync() {
    // 863 = 895 - SYNC_WAKEUPS: try_to_wake_up clears sync first. rc4 then has no shortcut;
    // tl = this_load = 2048 (no subtraction); 100 * (2048 + 1024) <= 0 false; 2048 <= 0
    // false -> wake_idle(2) -> CPU 2.
    let (mut s, _w, p) = sync_scene(cfg(RC4, 4).with_features_mask(863).unwrap());
    assert_eq!(s.wake_up(MS, p, 0, true).unwrap().cpu, 2);
    assert_eq!(wake_reason(&s, p), (2, WakeReason::Previous, false));
    // 2.6.25 with the SYNC_WAKEUPS back-port (bit 32, default off): the same.
    let c = cfg(V25, 4).with_patch(Patch::SyncWakeupsBit).unwrap();
    let (mut s, _w, p) = sync_scene(c);
    assert_eq!(s.wake_up(MS, p, 0, true).unwrap().cpu, 2);
    assert_eq!(wake_reason(&s, p), (2, WakeReason::Previous, false));
    // ... and with the bit set (15 + 32 = 47) sync is honoured again: AffineSync.
    let c = cfg(V25, 4).with_patch(Patch::SyncWakeupsBit).unwrap().with_features_mask(47).unwrap();
    let (mut s, _w, p) = sync_scene(c);
    assert_eq!(
        wake_reason(
            &{
                s.wake_up(MS, p, 0, true).unwrap();
                s
            },
            p
        ),
        (0, WakeReason::AffineSync, true)
    );
}

#[test]
fn affine_wakeups_off_only_matters_from_rc5_on() {
    // AFFINE_WAKEUPS (8) was "disconnected" in rc1..rc4 and wired up by b3137bc8e77.
    // 887 = 895 - 8. rc4: still AffineSync; 2.6.26: no affine path at all (-> Previous,
    // already the answer above; use an unloaded waker CPU so that final would be affine).
    let (mut s, _w, p) = sync_scene(cfg(RC4, 4).with_features_mask(887).unwrap());
    s.wake_up(MS, p, 0, true).unwrap();
    assert_eq!(wake_reason(&s, p).1, WakeReason::AffineSync);
    // 2.6.26, waker alone on CPU 0 (this_load 1024 -> tl 0 -> balanced needs load >= 0:
    // 100 * 1024 <= 112 * 0 false; cheap: tl 0 <= load 0 and 0 + target_load(2,1) 0 <=
    // tl_per_task 1024 -> affine). With AFFINE_WAKEUPS off: not affine -> CPU 2.
    for (mask, target, reason) in [(895u32, 0usize, WakeReason::Affine), (887, 2, WakeReason::Previous)] {
        let mut s = mk(cfg(V26, 4).with_features_mask(mask).unwrap(), q6600(V26));
        let _w = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        let p = sleeper_on(&mut s, 2, 0);
        assert_eq!(s.wake_up(MS, p, 0, true).unwrap().cpu, target, "mask {mask}");
        assert_eq!(wake_reason(&s, p).1, reason, "mask {mask}");
    }
}

#[test]
fn wakeup_stamps_last_wakeup_on_the_target_cpus_current_task() {
    // 2.6.25/26 stamp `se->last_wakeup` in check_preempt_wakeup on the *target* rq's curr.
    // Dual core: W runs on CPU 0, U on CPU 1, P asleep with prev CPU 1. W wakes P (not
    // sync): this_load = target_load(0,1) = 1024, load = source_load(1,1) = 0:
    // balanced 100*2048 <= 0 no; cheap 1024 <= 0 no; wake_idle(1): busy, MC has no
    // SD_WAKE_IDLE -> CPU 1. The unrelated U gets the stamp; the real waker W does not.
    let mut s = mk(cfg(V26, 2), dual_core(V26));
    let w = running_on(&mut s, 0);
    let p = sleeper_on(&mut s, 1, 0);
    let u = s.spawn(0, 1, TaskParams::normal()).unwrap();
    s.schedule(200 * US, 1, Deschedule::Preempt).unwrap();
    assert_eq!(s.curr(1), Some(u));
    s.wake_up(3 * MS, p, 0, false).unwrap();
    assert_eq!(wake_reason(&s, p), (1, WakeReason::Previous, false));
    let stamp = s.task(u).unwrap().se.last_wakeup;
    assert_eq!(stamp, s.task(u).unwrap().se.sum_exec_runtime);
    assert_eq!(stamp, 3 * MS - 200 * US, "U's runtime, refreshed by the enqueue's update_curr");
    assert_eq!(s.task(w).unwrap().se.last_wakeup, 0);
}

#[test]
fn waker_patch_changes_only_the_sync_shortcut() {
    // patches.md §1: check_preempt_wakeup sets curr->se.waker = pse; the wake_affine sync
    // shortcut additionally needs p->se.waker == curr->se.waker.
    // W alone on CPU 0; P asleep on CPU 2. 1st sync wakeup (rc4): both wakers NULL ->
    // equal -> AffineSync, with or without the patch; W.waker := P (patch).
    // P runs on CPU 0 and blocks; W runs again and sync-wakes P (prev = this = 0):
    // this_sd = MC, this_load = target_load(0,1) = 1024, tl = 0, load = source_load(0,1) = 0.
    // Without the patch: shortcut -> AffineSync. With it: P.waker (NULL) != W.waker (P), so
    // the shortcut is skipped; balanced: 100 * (0 + 1024) <= 0 false; cheap: 0 <= 0 and
    // 0 + target_load(0,1) = 1024 <= tl_per_task = 1024/1 -> Affine (same CPU, other branch).
    for (patch, second) in [(false, WakeReason::AffineSync), (true, WakeReason::Affine)] {
        let mut c = cfg(RC4, 4);
        if patch {
            c = c.with_patch(Patch::Waker).unwrap();
        }
        let mut s = mk(c, q6600(RC4));
        let w = running_on(&mut s, 0);
        let p = sleeper_on(&mut s, 2, 0);
        s.wake_up(MS, p, 0, true).unwrap();
        assert_eq!(wake_reason(&s, p).1, WakeReason::AffineSync);
        if patch {
            assert_eq!(s.task(w).unwrap().se.waker, Some(p));
        }
        // P is the next buddy on CPU 0 and was placed with sleeper credit: it runs next.
        assert_eq!(s.schedule(MS, 0, Deschedule::Preempt).unwrap().next, Some(p));
        assert_eq!(s.schedule(MS + 100 * US, 0, Deschedule::Sleep).unwrap().next, Some(w));
        s.wake_up(2 * MS, p, 0, true).unwrap();
        assert_eq!(wake_reason(&s, p), (0, second, true), "patch {patch}");
    }
}

#[test]
fn fork_copies_the_waker_pointer_but_not_last_preempter() {
    // dup_task_struct copies the parent's entity; __sched_fork resets the runtime
    // statistics. Peter's patch (patches.md §1) adds `waker` without a reset there, so a
    // child forked after W.waker := P starts with waker = P; Mike's last_preempter patch
    // resets its field in __sched_fork (§4), so that one starts NULL.
    let c = cfg(RC4, 4).with_patch(Patch::Waker).unwrap();
    let mut s = mk(c, q6600(RC4));
    let w = running_on(&mut s, 0);
    let p = sleeper_on(&mut s, 2, 0);
    s.wake_up(MS, p, 0, true).unwrap();
    assert_eq!(s.task(w).unwrap().se.waker, Some(p));
    let child = s.fork(MS, w, None).unwrap().child;
    assert_eq!(s.task(child).unwrap().se.waker, Some(p));

    let (mut s, w, [a, ..]) = last_preempter_scene(cfg(RC4, 4).with_patch(Patch::LastPreempter).unwrap());
    assert_eq!(s.task(w).unwrap().se.last_preempter, Some(a));
    let child = s.fork(40 * MS + 100 * US, w, None).unwrap().child;
    assert_eq!(s.task(child).unwrap().se.last_preempter, None);
}

/// rc4, CPU 0: W running; A and C asleep on CPU 0 (they ran there before
/// W existed); B asleep on CPU 2. At 40 ms W wakes A, which preempts it
/// (W.last_preempter := A with the patch); A runs 100 us and blocks; W is
/// picked again at 40.1 ms.
fn last_preempter_scene(c: cfs_core::Config) -> (S, TaskId, [TaskId; 3]) {
    let mut s = mk(c, q6600(RC4));
    let a = sleeper_on(&mut s, 0, 0);
    let cc = sleeper_on(&mut s, 0, 0);
    let b = sleeper_on(&mut s, 2, 0);
    let w = running_on(&mut s, 0);
    assert_eq!(s.curr(0), Some(w));
    s.wake_up(40 * MS, a, 0, false).unwrap();
    assert_eq!(wake_reason(&s, a).0, 0);
    // A kept its old vruntime (A0 + 100 us, A0 = 2^64 - 2^20 + 20 ms); W was placed two
    // vslices later (+40 ms, rc4's un-normalised period) and ran 40 ms: lead ~80 ms, far
    // above rc4's gran of 10 ms * 2048 / 1024 = 20 ms.
    assert_eq!(last_preempt_check(&s, a), (true, PreemptReason::VruntimeLead));
    assert_eq!(s.schedule(40 * MS, 0, Deschedule::Preempt).unwrap().next, Some(a));
    assert_eq!(s.schedule(40 * MS + 100 * US, 0, Deschedule::Sleep).unwrap().next, Some(w));
    (s, w, [a, b, cc])
}

#[test]
fn last_preempter_patch_holds_off_a_second_wakee_and_disperses() {
    // patches.md §4. After the scene W.last_preempter = A, and the run since W was
    // picked reads 0 ns at 40.2 ms (sum_exec_runtime - prev_sum_exec_runtime, which nothing
    // brings up to date before wake_affine and check_preempt_wakeup read it, in the kernel
    // as here), below the 500 us migration_cost.
    // (1) W sync-wakes B (prev CPU 2). rc4 wake_affine: the patch's first test (sync &&
    //     last_preempter && last_preempter != B && ran < cost) returns 0 -> not affine ->
    //     wake_idle(2) -> CPU 2. Without the patch, or with the no-disperse variant, the
    //     rc4 sync shortcut pulls B to CPU 0.
    // (2) W wakes C (prev CPU 0, not sync) at 40.2 ms: C leads W by more than the gran
    //     (it slept 40 ms); the patch keeps W on the CPU (last_preempter != C, w(W) >=
    //     w(C), W ran < cost): LastPreempterHold. Without the patch: VruntimeLead.
    for (patch, b_cpu, c_reason) in [
        (None, 0usize, PreemptReason::VruntimeLead),
        (Some(Patch::LastPreempter), 2, PreemptReason::LastPreempterHold),
        (Some(Patch::LastPreempterNoDisperse), 0, PreemptReason::LastPreempterHold),
    ] {
        let mut c = cfg(RC4, 4);
        if let Some(p) = patch {
            c = c.with_patch(p).unwrap();
        }
        let (mut s, w, [a, b, cc]) = last_preempter_scene(c);
        if patch.is_some() {
            assert_eq!(s.task(w).unwrap().se.last_preempter, Some(a));
        }
        let t = 40 * MS + 200 * US;
        assert_eq!(s.wake_up(t, b, 0, true).unwrap().cpu, b_cpu, "{patch:?}");
        let out = s.wake_up(t, cc, 0, false).unwrap();
        assert_eq!(out.cpu, 0);
        assert_eq!(last_preempt_check(&s, cc).1, c_reason, "{patch:?}");
    }
}

/// patches.md §4 tags `se->last_preempter = pse` only `if (se == &current->se)`: a
/// wakeup from CPU 0 onto CPU 1 checks preemption against CPU 1's task U, which is not
/// the waker, so U is not tagged, even though the wakee leads it and preempts it. The
/// waker W on CPU 0 is not tagged either: check_preempt_curr ran on CPU 1. (2.6.26, two
/// cores: P slept on CPU 1 at 100 us; U was placed there later and has run since; the
/// non-sync wakeup at 300 ms keeps P on its previous CPU.)
#[test]
fn last_preempter_tags_only_the_waker_not_the_target_cpus_task() {
    let c = cfg(V26, 2).with_patch(Patch::LastPreempter).unwrap();
    let mut s = mk(c, dual_core(V26));
    let w = running_on(&mut s, 0);
    let p = sleeper_on(&mut s, 1, 0);
    let u = s.spawn(0, 1, TaskParams::normal()).unwrap();
    s.schedule(200 * US, 1, Deschedule::Preempt).unwrap();
    assert_eq!(s.curr(1), Some(u));
    s.wake_up(300 * MS, p, 0, false).unwrap();
    assert_eq!(wake_reason(&s, p).0, 1, "P stays on its previous CPU");
    assert_eq!(last_preempt_check(&s, p), (true, PreemptReason::VruntimeLead));
    assert_eq!(s.task(u).unwrap().se.last_preempter, None, "U is not current on the waking CPU");
    assert_eq!(s.task(w).unwrap().se.last_preempter, None);
}

/// The tag is cleared only by a sleep (`if (sleep)` in dequeue_entity, patches.md §4):
/// a renice dequeues and requeues the tagged task with sleep = 0 and leaves it, and
/// so does a policy change.
#[test]
fn last_preempter_survives_a_dequeue_that_is_no_sleep() {
    let (mut s, w, [a, ..]) = last_preempter_scene(cfg(RC4, 4).with_patch(Patch::LastPreempter).unwrap());
    assert_eq!(s.task(w).unwrap().se.last_preempter, Some(a));
    s.set_nice(40 * MS + 150 * US, w, 5).unwrap();
    assert_eq!(s.task(w).unwrap().se.last_preempter, Some(a), "set_user_nice");
    s.set_policy(40 * MS + 160 * US, w, cfs_core::Policy::Batch).unwrap();
    assert_eq!(s.task(w).unwrap().se.last_preempter, Some(a), "sched_setscheduler");
}

/// patches.md §1 sets `se->waker = pse` right after the `se == pse` return, before
/// check_preempt_wakeup's SCHED_BATCH and WAKEUP_PREEMPT returns: a SCHED_BATCH wakee,
/// and any wakee under features 893 (WAKEUP_PREEMPT off), still becomes the current
/// task's `waker`.
#[test]
fn waker_is_recorded_before_the_batch_and_feature_returns() {
    for (batch, features) in [(true, None), (false, Some(893))] {
        let mut c = cfg(RC4, 4).with_patch(Patch::Waker).unwrap();
        if let Some(f) = features {
            c = c.with_features_mask(f).unwrap();
        }
        let mut s = mk(c, q6600(RC4));
        let w = running_on(&mut s, 0);
        let p = sleeper_on(&mut s, 0, 0);
        if batch {
            s.set_policy(MS, p, cfs_core::Policy::Batch).unwrap();
        }
        assert_eq!(s.curr(0), Some(w));
        s.wake_up(2 * MS, p, 0, false).unwrap();
        assert_eq!(wake_reason(&s, p).0, 0);
        assert!(!last_preempt_check(&s, p).0, "batch {batch}: no preemption");
        assert_eq!(s.task(w).unwrap().se.waker, Some(p), "batch {batch}, features {features:?}");
    }
}

#[test]
fn sync_load_clamp_changes_the_balanced_test() {
    // 2.6.26, W alone on CPU 0, hog H on CPU 2, P asleep with prev CPU 2; one tick at 4 ms
    // so cpu_load[0] = 1024 on CPUs 0 and 2. Sync wakeup from CPU 0 at 5 ms:
    // load = source_load(2,1) = min(1024, 1024) = 1024; this_load = target_load(0,1) = 1024.
    // Unpatched: tl = 1024 - 1024 = 0; balanced = 100 * (0 + 1024) = 102_400 <= 112 * 1024
    //   = 114_688 -> shortcut -> AffineSync on CPU 0.
    // sync-load-clamp (patches.md §3): tl > weight? 1024 > 1024 no -> tl stays 1024;
    //   balanced = 204_800 <= 114_688 false; cheap: 1024 <= 1024 but 1024 +
    //   target_load(2,1) 1024 = 2048 <= tl_per_task 1024 false -> wake_idle(2) (busy, one
    //   task, MC has no SD_WAKE_IDLE) -> CPU 2.
    for (clamp, target, reason) in [(false, 0usize, WakeReason::AffineSync), (true, 2, WakeReason::Previous)] {
        let mut c = cfg(V26, 4);
        if clamp {
            c = c.with_patch(Patch::SyncLoadClamp).unwrap();
        }
        let mut s = mk(c, q6600(V26));
        let _w = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        let p = s.spawn(0, 2, TaskParams::normal()).unwrap();
        s.schedule(0, 2, Deschedule::Preempt).unwrap();
        let h = s.spawn(0, 2, TaskParams::normal()).unwrap();
        assert_eq!(s.schedule(MS, 2, Deschedule::Sleep).unwrap().next, Some(h));
        for cpu in 0..4 {
            s.tick(4 * MS, cpu).unwrap();
        }
        assert_eq!(s.rq(0).unwrap().cpu_load[0], 1024);
        assert_eq!(s.rq(2).unwrap().cpu_load[0], 1024);
        assert_eq!(migrations(&s), vec![], "nothing to balance yet");
        assert_eq!(s.wake_up(5 * MS, p, 0, true).unwrap().cpu, target, "clamp {clamp}");
        assert_eq!(wake_reason(&s, p).1, reason);
    }
}

#[test]
fn migration_cost_minus_one_is_unsigned_in_the_overlap_test() {
    // sysctl_sched_migration_cost is an unsigned int: -1 reads as 4_294_967_295 in
    // `avg_overlap < sysctl_sched_migration_cost`, so the rc4 sync shortcut still fires
    // (and task_hot treats every task as hot).
    let mut c = cfg(RC4, 4);
    c.tunables.migration_cost = cfs_core::Tunables::ALWAYS_HOT;
    let (mut s, _w, p) = sync_scene(c);
    assert_eq!(s.wake_up(MS, p, 0, true).unwrap().cpu, 0);
    assert_eq!(wake_reason(&s, p).1, WakeReason::AffineSync);
}

// ---------------------------------------------------------------------
// fork placement
// ---------------------------------------------------------------------

#[test]
fn fork_balancing_spreads_children_to_idle_cpus() {
    // Parent on CPU 0, one tick at 4 ms (cpu_load[0]: CPU 0 = 1024, others 0), then four
    // forks at 5 ms. sched_balance_self(0, SD_BALANCE_FORK) from the CPU level
    // (forkexec_idx 1, imbalance 112):
    // child 1: local {0,1} = source(0) 1024 + source(1) 0 = 1024; {2,3} = target 0 + 0 = 0
    //   -> 100*1024 >= 112*0: group {2,3}; idlest CPU 2 (0 load, first); then MC of CPU 2:
    //   local {2} = source 0, {3} = target 0 -> 0 >= 0: group {3} -> CPU 3. => CPU 3.
    // child 2: {2,3} = target(2) 0 + target(3) max(0, 1024) = 1024 -> 102_400 >= 114_688
    //   false: stay; MC of CPU 0: {0} 1024 vs {1} target 0 -> CPU 1. => CPU 1.
    // child 3: {2,3} 1024 (stay); MC: {1} = target(1) = max(0, 1024) = 1024 -> stay. => CPU 0.
    // child 4: CPU 0 now weighs 2048 but source_load(0,1) = min(1024, 2048) = 1024: => CPU 0.
    for v in [V25, RC4, V26] {
        let mut s = mk(cfg(v, 4), q6600(v));
        let parent = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        for cpu in 0..4 {
            s.tick(4 * MS, cpu).unwrap();
        }
        let cpus: Vec<usize> = (0..4).map(|_| s.fork(5 * MS, parent, None).unwrap().cpu).collect();
        assert_eq!(cpus, vec![3, 1, 0, 0], "{v}");
        let forks: Vec<_> = migrations(&s).into_iter().filter(|m| m.3 == MigrateReason::Fork).collect();
        assert_eq!(forks.len(), 2);
        // A child restricted to {0} stays there whatever the loads say.
        let c = s.fork(5 * MS, parent, Some(TaskParams::normal().allowed(CpuMask::single(0)))).unwrap();
        assert_eq!(c.cpu, 0);
    }
}

// ---------------------------------------------------------------------
// load balancing
// ---------------------------------------------------------------------

#[test]
fn average_load_per_task_of_an_empty_runqueue() {
    // cpu_avg_load_per_task: n ? total / n : SCHED_LOAD_SCALE in 2.6.25/26 (bce7f793
    // sched.c:1907-1914); 2.6.32 stores and returns 0 (22763c5c sched.c:1553-1564).
    // With two nice-0 tasks and one nice-5 task (335) on CPU 0: (2048 + 335) / 3 = 794.
    for (v, empty) in [(V25, 1024), (RC4, 1024), (V26, 1024), (KernelVersion::V2_6_32, 0)] {
        let mut s = mk(cfg(v, 2), dual_core(v));
        assert_eq!(s.cpu_avg_load_per_task(1), empty, "{v}");
        s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.spawn(0, 0, TaskParams { nice: 5, ..TaskParams::normal() }).unwrap();
        assert_eq!(s.cpu_avg_load_per_task(0), (2048 + 335) / 3, "{v}");
        assert_eq!(s.cpu_avg_load_per_task(1), empty, "{v}");
    }
}

#[test]
fn idle_cpu_pulls_on_newidle() {
    // Dual core. CPU 0: A running, B, C, D queued (never ran: exec_start 0, cold), D is the
    // next buddy (the last fork's check_preempt_curr set it). CPU 1: X runs and blocks at
    // 5 ms -> schedule() finds nr_running 0 -> idle_balance -> load_balance_newidle at MC
    // (SD_BALANCE_NEWIDLE, newidle_idx 0): this 0; {0}: 4096, nr 4 > capacity 1.
    // avg = 4096 * 1024 / 2048 = 2048; max_pull = min(4096 - 2048, 4096 - 1024) = 2048;
    // imbalance = 2048. can_migrate_task: D is cache hot as the buddy (CACHE_HOT_BUDDY;
    // 2.6.25 unconditionally) and nr_balance_failed 0 <= cache_nice_tries -> skipped.
    // 2.6.26 iterator: newest first [D, C, B, A], the oldest (A) never returned:
    //   D skipped, C pulled (rem 1024), B pulled (rem 0): stop.
    // 2.6.25 walks the rbtree from the leftmost: B (rem 1024), C (rem 0): stop.
    // 2.6.25 reads CPU 0's clock as CPU 0 last set it (update_rq_clock is
    // a no-op on another CPU's runqueue): its tick at 4 ms, so the queued
    // tasks are 4 ms cold. (Without that tick the clock would still read 0
    // and they would all be hot: see the next test.)
    for v in [V25, RC4, V26] {
        let mut s = mk(cfg(v, 2), dual_core(v));
        let a = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        let b = s.spawn(0, 0, TaskParams::normal()).unwrap();
        let c = s.spawn(0, 0, TaskParams::normal()).unwrap();
        let d = s.spawn(0, 0, TaskParams::normal()).unwrap();
        assert_eq!(s.curr(0), Some(a));
        assert_eq!(s.rq(0).unwrap().cfs.next, Some(d));
        let x = s.spawn(0, 1, TaskParams::normal()).unwrap();
        s.schedule(0, 1, Deschedule::Preempt).unwrap();
        assert_eq!(s.curr(1), Some(x));
        if v == V25 {
            s.tick(4 * MS, 0).unwrap();
        }
        let sw = s.schedule(5 * MS, 1, Deschedule::Sleep).unwrap();
        assert_eq!(sw.pulled, 2, "{v}");
        let moved: Vec<TaskId> =
            migrations(&s).into_iter().filter(|m| m.3 == MigrateReason::NewIdle).map(|m| m.0).collect();
        if v == V25 {
            assert_eq!(moved, vec![b, c]);
        } else {
            assert_eq!(moved, vec![c, b], "{v}");
        }
        assert_eq!(s.rq(0).unwrap().nr_running, 2);
        assert!(sw.next == Some(b) || sw.next == Some(c));
    }
}

/// 2.6.25's `update_rq_clock` updates only the calling CPU's runqueue
/// (4b119e21 sched.c:543-547); 2.6.26 reads any CPU's clock (bce7f793
/// sched.c:596-599). Two decisions it changes (found by a second reading
/// of the 2.6.25 profile, 2026-12-04):
/// - newly idle balancing: CPU 1 goes idle at 1 ms, CPU 0's queued tasks
///   were last seen by CPU 0's clock at 0 and never ran (exec_start 0). In
///   2.6.25 task_hot reads that stale clock, delta 0 < migration_cost 0.5
///   ms: hot, and with nr_balance_failed 0 <= cache_nice_tries 1 nothing
///   moves. 2.6.26 updates CPU 0's clock to 1 ms first: 1 ms is past
///   migration_cost, so the queued task that is not the next buddy
///   (CACHE_HOT_BUDDY keeps the last one spawned) is cold and pulled.
/// - a remote wakeup: CPU 1's task A was picked at 0; at 3 ms CPU 0 wakes
///   W, whose last CPU was 1. The enqueue's update_curr charges A up to
///   CPU 1's clock: 3 ms in 2.6.26, nothing in 2.6.25.
#[test]
fn in_2_6_25_a_cpu_reads_another_cpus_runqueue_at_its_last_local_clock() {
    for v in [V25, V26] {
        let mut s = mk(cfg(v, 2), dual_core(v));
        let a = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.spawn(0, 0, TaskParams::normal()).unwrap();
        assert_eq!(s.curr(0), Some(a));
        let x = s.spawn(0, 1, TaskParams::normal()).unwrap();
        s.schedule(0, 1, Deschedule::Preempt).unwrap();
        assert_eq!(s.curr(1), Some(x));
        let sw = s.schedule(MS, 1, Deschedule::Sleep).unwrap();
        assert_eq!(sw.pulled, if v == V25 { 0 } else { 1 }, "{v}");
    }
    for v in [V25, V26] {
        let mut s = mk(cfg(v, 2), dual_core(v));
        let w = s.spawn(0, 1, TaskParams::normal()).unwrap();
        s.schedule(0, 1, Deschedule::Preempt).unwrap();
        s.schedule(0, 1, Deschedule::Sleep).unwrap();
        let a = s.spawn(0, 1, TaskParams::normal()).unwrap();
        s.schedule(0, 1, Deschedule::Preempt).unwrap();
        assert_eq!(s.curr(1), Some(a));
        let keep = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        assert_eq!(s.curr(0), Some(keep));
        let before = s.task(a).unwrap().se.sum_exec_runtime;
        s.wake_up(3 * MS, w, 0, false).unwrap();
        let charged = s.task(a).unwrap().se.sum_exec_runtime - before;
        assert_eq!(charged, if v == V25 { 0 } else { 3 * MS }, "{v}");
    }
}

/// Two levels: a bottom "node" level over CPU pairs with `bottom` flags and
/// a top level over all four CPUs with LB | NEWIDLE (newidle_idx 0).
fn two_level(bottom: cfs_topology::SdFlags) -> cfs_core::SchedDomains {
    use cfs_topology::{DomainLevel, DomainParams, SchedDomain, SchedGroup, SdFlags};
    let top_flags = SdFlags::LOAD_BALANCE | SdFlags::BALANCE_NEWIDLE | SdFlags::WAKE_AFFINE;
    let per_cpu = (0..4)
        .map(|cpu: usize| {
            let pair = CpuMask::from_cpus([cpu & !1, cpu | 1]);
            let other = CpuMask::from_cpus([(cpu & !1) ^ 2, ((cpu & !1) ^ 2) | 1]);
            vec![
                SchedDomain {
                    level: DomainLevel::Node,
                    span: pair,
                    groups: vec![
                        SchedGroup { cpus: CpuMask::single(cpu), cpu_power: 1024 },
                        SchedGroup { cpus: CpuMask::single(cpu ^ 1), cpu_power: 1024 },
                    ]
                    .into(),
                    flags: bottom,
                    params: cpu_params(),
                },
                SchedDomain {
                    level: DomainLevel::AllNodes,
                    span: CpuMask::first_n(4),
                    groups: vec![
                        SchedGroup { cpus: pair, cpu_power: 2048 },
                        SchedGroup { cpus: other, cpu_power: 2048 },
                    ]
                    .into(),
                    flags: top_flags,
                    params: DomainParams { newidle_idx: 0, ..cpu_params() },
                },
            ]
        })
        .collect();
    cfs_core::SchedDomains { version: V26, per_cpu }
}

#[test]
fn idle_balance_stops_at_a_balancing_domain_without_newidle() {
    // idle_balance starts with pulled_task = -1 and breaks on any non-zero value after
    // each SD_LOAD_BALANCE domain, so a first balancing domain *without*
    // SD_BALANCE_NEWIDLE (like x86_64 SD_NODE_INIT) ends the walk before any parent is
    // tried (sched.c:3500-3530). CPU 2 holds 3 hogs; X on CPU 0 blocks.
    // Top level (newidle_idx 0): {2,3} = 3072 over power 2048 (1536) with 3 tasks > capacity 2,
    // {0,1} = 0 -> it would pull. With the bottom level balancing but not NEWIDLE: no pull.
    // Control: bottom level not SD_LOAD_BALANCE (`continue`): the top level pulls.
    use cfs_topology::SdFlags;
    let node = SdFlags::LOAD_BALANCE | SdFlags::BALANCE_FORK | SdFlags::BALANCE_EXEC | SdFlags::WAKE_BALANCE;
    for (bottom, pulls) in [(node, false), (node - SdFlags::LOAD_BALANCE, true)] {
        let mut s = mk(cfg(V26, 4), two_level(bottom));
        for _ in 0..3 {
            s.spawn(0, 2, TaskParams::normal()).unwrap();
        }
        s.schedule(0, 2, Deschedule::Preempt).unwrap();
        let x = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        assert_eq!(s.curr(0), Some(x));
        let sw = s.schedule(5 * MS, 0, Deschedule::Sleep).unwrap();
        assert_eq!(sw.pulled > 0, pulls, "bottom flags {bottom:?}");
    }
}

/// Q6600 with 8 hogs on CPU 0, driven at HZ=250 with the periodic tick.
fn eight_hogs(v: KernelVersion) -> Sim {
    let mut c = cfg(v, 4);
    c.hres_timers = false;
    let mut sim = Sim::new(c, q6600(v), 0);
    for _ in 0..8 {
        sim.spawn(0, TaskParams::normal());
    }
    sim
}

#[test]
fn eight_hogs_converge_to_two_per_cpu() {
    // HZ = 250 (4 ms jiffies), periodic tick, 8 nice-0 hogs spawned on CPU 0 at t = 0.
    // Jiffy 1 (ticks in CPU order; rebalance_domains runs from each tick):
    // - CPU 0 is busy: interval = balance_interval 1 ms * busy_factor 64 = 16 jiffies: not due.
    // - CPU 1 idle (CPU_IDLE: no busy_factor, 1 jiffy): MC, idle_idx 0: {0} = 8192 vs 0;
    //   avg 4096; max_pull = min(8192 - 4096, 8192 - 1024) = 4096 -> imbalance 4096 -> 4 tasks.
    // - CPU 2 idle, designated balancer of {2,3} (first idle CPU): CPU level, idle_idx 1:
    //   {0,1} = source(0) min(8192, 4096) + source(1) min(0, 4096) = 4096, 8 tasks; avg 2048;
    //   group_imb (4096 - 0 > 1024); max_pull = min(2048, 4096 - 1024) -> imbalance 2048:
    //   2 tasks from CPU 0 (the first CPU of the group with the largest load).
    // - CPU 3 idle: MC: {2} = 2048, 2 tasks; imbalance 1024 -> 1 task.
    //   => [2, 4, 1, 1].
    // From then on every CPU is busy: each domain is balanced every 16 jiffies after its
    // last pass, and an empty pass (out_balanced) doubles balance_interval (max 4 ms), i.e.
    // 32 jiffies to the next one. The two extra tasks of CPU 1 must travel CPU 1 -> CPU 0
    // (MC pass of CPU 0: jiffies 16, 32), CPU 0 -> CPU 2 (CPU-level pass of CPU 2, the
    // designated balancer of {2,3}: jiffies 17, 33) and CPU 2 -> CPU 3 (MC pass of CPU 3,
    // whose pass at 17 is empty -- busy_idx 2 reads cpu_load[1], which still lags -- so
    // the next is at 17 + 32 = 49). Bound: 1 + 3 busy intervals = 49 jiffies (196 ms).
    // Once 2/2/2/2, every level is balanced and nothing moves any more.
    for v in [V25, RC4, V26] {
        let mut sim = eight_hogs(v);
        sim.run_to(sim.tick_ns);
        assert_eq!(sim.nr_running(), vec![2, 4, 1, 1], "{v}");
        let mut reached = None;
        for j in 2..=150u64 {
            sim.run_to(j * sim.tick_ns);
            if reached.is_none() && sim.nr_running() == vec![2, 2, 2, 2] {
                reached = Some(j);
            }
            if let Some(r) = reached {
                assert_eq!(sim.nr_running(), vec![2, 2, 2, 2], "{v}: stays balanced (reached at jiffy {r}, now {j})");
            }
        }
        let r = reached.unwrap_or_else(|| panic!("{v}: never balanced: {:?}", sim.nr_running()));
        assert!(r <= 49, "{v}: balanced at jiffy {r}");
        // Periodic balancing alone did it (no newidle, no active balance).
        let m = migrations(&sim.s);
        assert!(m.iter().all(|x| x.3 == MigrateReason::Periodic), "{m:?}");
    }
}

/// Dual core, HZ=1000, periodic tick: A then B forked on CPU 0, B running
/// (the fork buddy), CPU 1 idle.
fn two_tasks_on_cpu0(mut c: Config) -> (Sim, TaskId, TaskId) {
    c.hz = 1000;
    c.hres_timers = false;
    let mut sim = Sim::new(c, dual_core(V26), 0);
    let a = sim.spawn(0, TaskParams::normal());
    let b = sim.spawn(0, TaskParams::normal());
    assert_eq!(sim.s.curr(0), Some(b));
    (sim, a, b)
}

#[test]
fn active_balance_after_the_required_failures() {
    // Dual core, 2.6.26, HZ=1000, periodic tick. CPU 0: A (older) and B; B runs (the fork
    // buddy), CPU 1 is idle and balances every jiffy (CPU_IDLE, interval 1 ms).
    // Each pass: busiest group {0} (2048 > 0), imbalance 1024, busiest CPU 0 (2 tasks);
    // the 2.6.26 list iterator yields [B] only (A, the oldest entry, is never returned),
    // and B is running -> nothing moved, all_pinned = 0 -> nr_balance_failed++.
    // At the 4th failure (4 > cache_nice_tries + 2 = 3) load_balance sets
    // busiest->active_balance, push_cpu = 1, wakes the migration thread (resched CPU 0)
    // and sets nr_balance_failed = cache_nice_tries + 1 = 2. The migration thread runs
    // once B is off the CPU: move_one_task finds B not running and, although hot, allowed
    // because nr_balance_failed (2) > cache_nice_tries (1).
    let (mut sim, a, b) = two_tasks_on_cpu0(cfg(V26, 2));
    for j in 1..=3u64 {
        sim.run_to(j * MS);
        assert_eq!(sim.s.domain_state(1)[0].nr_balance_failed, j as u32);
        assert_eq!(sim.s.task(b).unwrap().cpu, 0);
        assert!(migrations(&sim.s).is_empty());
    }
    sim.run_to(4 * MS);
    assert_eq!(migrations(&sim.s), vec![(b, 0, 1, MigrateReason::Active)]);
    assert_eq!(sim.s.domain_state(1)[0].nr_balance_failed, 2);
    assert_eq!((sim.s.curr(0), sim.s.curr(1)), (Some(a), Some(b)));
}

#[test]
fn iterator_fix_lets_the_first_pass_pull_the_oldest_task() {
    // The scene of active_balance_after_the_required_failures with 38736f47507 applied:
    // the iterator yields [B, A]; B is running (skipped), A never ran (exec_start 0, cache
    // cold), 1024 / 2 <= imbalance 1024 + fuzz -> A is pulled by CPU 1's first periodic
    // pass at jiffy 1, with nr_balance_failed back to 0.
    let (mut sim, a, b) = two_tasks_on_cpu0(cfg(V26, 2).with_patch(Patch::IteratorFix).unwrap());
    sim.run_to(MS);
    assert_eq!(migrations(&sim.s), vec![(a, 0, 1, MigrateReason::Periodic)]);
    assert_eq!(sim.s.domain_state(1)[0].nr_balance_failed, 0);
    assert_eq!((sim.s.curr(0), sim.s.curr(1)), (Some(b), Some(a)));
}

#[test]
fn active_balance_moves_the_only_hog_of_a_cache_pair_on_2_6_25() {
    // Q6600, HZ=1000: one hog on CPU 0, one on CPU 1, CPUs 2 and 3 idle. CPU 2 (the
    // designated balancer of {2,3}) balances the CPU level every jiffy with idle_idx 1:
    // group {0,1}: source loads 1024 + 1024 = 2048 over power 1024, 2 tasks > capacity 1
    // -> busiest; avg = 2048 / 2 = 1024; imbalance = 1024; find_busiest_queue: CPU 0
    // (1 task of 1024, not > 1024) -> nr_running 1: move_tasks is not even tried ->
    // failure. The 4th failure kicks the migration thread of CPU 0; the migration
    // thread itself counts in CPU 0's nr_running (2 > 1), and the hog, no longer
    // running, is pushed to CPU 2 (2.6.25 walks the rbtree: every task is returned).
    // 2.6.26's list iterator never returns the last (here: only) entry, so the same
    // kick moves nothing there: the hogs stay on one L2 (the deliberate 2.6.26 quirk).
    // The iterator-fix patch (38736f47507, whose message names this sched_mc regression
    // against 2.6.25) returns the last entry: 2.6.26 then moves the hog as 2.6.25 does.
    for (v, fix, moves) in [(V25, false, true), (V26, false, false), (V26, true, true), (RC4, true, true)] {
        let mut c = cfg(v, 4);
        if fix {
            c = c.with_patch(Patch::IteratorFix).unwrap();
        }
        c.hz = 1000;
        c.hres_timers = false;
        let mut sim = Sim::new(c, q6600(v), 0);
        let h0 = sim.spawn(0, TaskParams::normal());
        let h1 = sim.spawn(1, TaskParams::normal());
        sim.run_to(20 * MS);
        let m = migrations(&sim.s);
        if moves {
            assert_eq!(m.first().map(|x| (x.0, x.1, x.2, x.3)), Some((h0, 0, 2, MigrateReason::Active)), "{v}: {m:?}");
            assert_eq!(sim.s.task(h0).unwrap().cpu, 2);
            // It happened at the 4th balance pass (jiffy 4, 4 ms).
            let at = sim.s.observer().events.iter().find(|(_, e)| matches!(e, Event::Migrate { .. })).unwrap().0;
            assert_eq!(at, 4 * MS);
        } else {
            assert!(m.is_empty(), "{v}: {m:?}");
            assert_eq!((sim.s.task(h0).unwrap().cpu, sim.s.task(h1).unwrap().cpu), (0, 1));
        }
    }
}

#[test]
fn periodic_balance_reads_the_busiest_clock_as_of_now() {
    // load_balance takes double_rq_lock(this_rq, busiest) before move_tasks, which
    // runs update_rq_clock on both runqueues (2.6.26 bce7f793 sched.c:2621-2622, at
    // :3317). Dual core: A and B on CPU 0, B switched out at 10 ms (exec_start 10 ms,
    // CPU 0's clock 10 ms). CPU 1 (idle) balances at 10.6 ms: busiest's clock becomes
    // 10.6 ms, B ran 0.6 ms ago, at least sysctl_sched_migration_cost (0.5 ms): cold,
    // pulled at the first pass. (2.6.25, which only moves the calling CPU's own clock,
    // is pinned in balance_pins.rs.)
    let mut c = cfg(V26, 2);
    c.hres_timers = false;
    let mut s = mk(c, dual_core(V26));
    let a = s.spawn(0, 0, TaskParams::normal()).unwrap();
    s.schedule(0, 0, Deschedule::Preempt).unwrap();
    let b = s.spawn(0, 0, TaskParams::normal()).unwrap();
    assert_eq!(s.schedule(0, 0, Deschedule::Preempt).unwrap().next, Some(b));
    assert_eq!(s.schedule(10 * MS, 0, Deschedule::Yield).unwrap().next, Some(a), "B's yield lets A run");
    assert_eq!(s.task(b).unwrap().se.exec_start, 10 * MS);
    s.rebalance(10 * MS + 500 * US - 1, 1).unwrap();
    assert!(migrations(&s).is_empty(), "0.5 ms - 1 ns: still hot");
    assert_eq!(s.domain_state(1)[0].nr_balance_failed, 1);
    // The next pass is due one jiffy after the last (jiffy 2 at 10.5 ms): at 12 ms
    // (jiffy 3). No event on CPU 0 in between: its clock is brought forward by the
    // balancer itself.
    s.rebalance(12 * MS, 1).unwrap();
    assert_eq!(migrations(&s), vec![(b, 0, 1, MigrateReason::Periodic)]);
}

#[test]
fn an_idle_cpu_with_a_queued_task_is_still_idle_cpu() {
    // idle_cpu(cpu) is `rq->curr == rq->idle` (sched.c:4698): a CPU that has a task
    // queued but has not switched to it yet is idle, both for idle_at_tick (CPU_IDLE:
    // no busy_factor) and for the designated balancer of its group in
    // find_busiest_group (the first idle CPU of the local group).
    // Q6600 (HZ=250): 4 hogs on CPU 0; P wakes on CPU 2 at 1 ms and stays queued there
    // (CPU 2 is not rescheduled). Jiffy 1, ticks in CPU order:
    // - CPU 2: idle_at_tick = 1 -> CPU_IDLE, interval 1 ms = 1 jiffy: both its domains
    //   are balanced at jiffy 1 (as NOT_IDLE they would wait 64 ms = 16 jiffies). At the
    //   CPU level it is the designated balancer of {2,3} (first idle CPU): it finds
    //   {0,1} busiest but nothing movable (CPU 0 is left with its running task and the
    //   fork buddy, hot under CACHE_HOT_BUDDY) -> nr_balance_failed 1, interval reset to 1.
    // - CPU 3: at the CPU level the first idle CPU of {2,3} is 2, not 3 -> balance = 0
    //   -> out_balanced: nr_balance_failed 0, balance_interval doubled to 2.
    let mut s = mk(cfg(V26, 4), q6600(V26));
    let a = s.spawn(0, 0, TaskParams::normal()).unwrap();
    s.schedule(0, 0, Deschedule::Preempt).unwrap();
    for _ in 0..3 {
        s.spawn(0, 0, TaskParams::normal()).unwrap();
    }
    assert_eq!(s.curr(0), Some(a));
    let p = sleeper_on(&mut s, 2, 0);
    s.wake_up(MS, p, 2, false).unwrap();
    assert_eq!((s.curr(2), s.rq(2).unwrap().nr_running), (None, 1));
    for cpu in 0..3 {
        s.tick(4 * MS, cpu).unwrap();
    }
    assert!(s.rq(2).unwrap().idle_at_tick);
    let d2 = s.domain_state(2);
    assert_eq!((d2[0].last_balance, d2[1].last_balance), (1, 1), "CPU_IDLE intervals: both levels balanced");
    assert_eq!((d2[1].nr_balance_failed, d2[1].balance_interval), (1, 1));
    s.tick(4 * MS, 3).unwrap();
    let d3 = s.domain_state(3);
    assert_eq!((d3[1].nr_balance_failed, d3[1].balance_interval), (0, 2), "CPU 3 is not the designated balancer");
}

#[test]
fn active_balance_is_not_kicked_when_busiest_runs_its_idle_task() {
    // load_balance kicks the migration thread only if busiest->curr may run on this_cpu
    // (sched.c:3349); the idle task is bound to its CPU (init_idle sets
    // cpus_allowed = cpumask_of_cpu(cpu)), so when busiest has not switched away from
    // idle yet the answer is out_one_pinned: no push, interval doubled, and
    // nr_balance_failed is *not* reset.
    // Q6600, HZ=1000: CPU 0 has one queued task T but still runs idle (never
    // rescheduled); CPU 1 runs H. CPU 2 balances the CPU level each jiffy (idle_idx 1):
    // {0,1}: 1024 + 1024 over power 1024, 2 tasks > capacity 1 -> busiest; avg 1024;
    // imbalance 1024; busiest queue CPU 0 (1 task, 1024 not > 1024) -> nr_running 1: no
    // move_tasks -> failure. At the 4th (4 > 1 + 2) busiest->curr is the idle task.
    let mut c = cfg(V26, 4);
    c.hz = 1000;
    c.hres_timers = false;
    let mut s = mk(c, q6600(V26));
    let _t = s.spawn(0, 0, TaskParams::normal()).unwrap();
    let _h = s.spawn(0, 1, TaskParams::normal()).unwrap();
    s.schedule(0, 1, Deschedule::Preempt).unwrap();
    assert_eq!(s.curr(0), None);
    for j in 1..=4u64 {
        for cpu in 0..4 {
            s.tick(j * MS, cpu).unwrap();
        }
        assert_eq!(s.domain_state(2)[1].nr_balance_failed, j as u32, "jiffy {j}");
    }
    assert!(!s.rq(0).unwrap().active_balance, "no push towards a CPU running its idle task");
    assert!(!s.need_resched(0) || s.rq(0).unwrap().nr_running == 1);
    assert_eq!(s.domain_state(2)[1].balance_interval, 2, "out_one_pinned doubled the interval");
    assert!(migrations(&s).is_empty());
}

// ---------------------------------------------------------------------
// affinity
// ---------------------------------------------------------------------

#[test]
fn affinity_change_of_a_sleeping_task_moves_its_cpu_at_once() {
    // set_cpus_allowed_ptr -> migrate_task: a task neither queued nor running just gets
    // set_task_cpu(p, any_online_cpu(new_mask)) (sched.c:1745-1760, 5561-5598); its next
    // wakeup starts from that CPU. (select_task_rq_fair never checks prev against the
    // mask: it relies on task_cpu being allowed.)
    let mut s = mk(cfg(V26, 2), dual_core(V26));
    let w = running_on(&mut s, 0);
    let p = sleeper_on(&mut s, 0, 0);
    assert_eq!(s.curr(0), Some(w));
    s.set_affinity(MS, p, CpuMask::single(1)).unwrap();
    assert_eq!(s.task(p).unwrap().cpu, 1);
    let out = s.wake_up(2 * MS, p, 0, true).unwrap();
    assert_eq!(out.cpu, 1);
    // A running task whose new mask excludes its CPU and that blocks before the
    // migration thread got to it: __migrate_task sees !on_rq and still sets its CPU.
    let q = s.spawn(3 * MS, 0, TaskParams::normal()).unwrap();
    // W blocks, so Q (the only runnable task left on CPU 0) runs.
    assert_eq!(s.schedule(3 * MS, 0, Deschedule::Sleep).unwrap().next, Some(q));
    s.set_affinity(4 * MS, q, CpuMask::single(1)).unwrap();
    s.schedule(4 * MS, 0, Deschedule::Sleep).unwrap();
    assert_eq!(s.task(q).unwrap().cpu, 1);
    assert_eq!(s.task(q).unwrap().state, cfs_core::TaskState::Sleeping, "moved, not queued");
    let out = s.wake_up(5 * MS, q, 0, false).unwrap();
    assert_eq!((out.cpu, out.woken), (1, true));
    // A mask that excluded the running task's CPU and was widened again before it
    // blocked. The second write queues nothing (set_cpus_allowed_ptr returns early
    // when the current CPU is in the new mask, sched.c:5574-5576), but the first
    // request stands: __migrate_task checks only that its dest (CPU 0, chosen when
    // the first mask was written, :1759) is still allowed (:5627), so it still moves
    // the task, asleep by then (:5630-5637).
    let mut s = mk(cfg(V26, 2), dual_core(V26));
    let r = s.spawn(0, 1, TaskParams::normal()).unwrap();
    assert_eq!(s.schedule(0, 1, Deschedule::Preempt).unwrap().next, Some(r));
    s.set_affinity(MS, r, CpuMask::single(0)).unwrap();
    s.set_affinity(MS, r, CpuMask::from_cpus([0, 1])).unwrap();
    s.schedule(2 * MS, 1, Deschedule::Sleep).unwrap();
    assert_eq!(s.task(r).unwrap().cpu, 0);
    // Two requests, {0} then {1} on CPU 2 of a Q6600: the migration thread takes the
    // newest first, moving the task to CPU 1; the older one then finds it "already
    // moved" (:5623-5625).
    let mut s = mk(cfg(V26, 4), q6600(V26));
    let r = s.spawn(0, 2, TaskParams::normal()).unwrap();
    assert_eq!(s.schedule(0, 2, Deschedule::Preempt).unwrap().next, Some(r));
    s.set_affinity(MS, r, CpuMask::from_cpus([0, 1])).unwrap();
    s.set_affinity(MS, r, CpuMask::single(1)).unwrap();
    s.schedule(2 * MS, 2, Deschedule::Preempt).unwrap();
    assert_eq!(s.task(r).unwrap().cpu, 1);
}

#[test]
fn a_task_moved_off_by_its_mask_leaves_the_migration_thread_to_balance_newly_idle() {
    // set_cpus_allowed_ptr on T, running alone on CPU 0, with a mask of {1}: migrate_task
    // queues a request and wakes CPU 0's migration thread (an RT task, sched.c:1760,
    // 5585-5588), which preempts T, moves it (__migrate_task), finds its queue empty and
    // sleeps; that schedule() finds CPU 0 empty and runs idle_balance (:5678-5681,
    // 4184-4185). CPU 1 runs A with B and C queued, both waiting 10 ms: cache-cold
    // (migration_cost 0.5 ms), so CPU 0's newly idle pass at MC level pulls one of them
    // and runs it instead of idling.
    let mut s = mk(cfg(V26, 4), q6600(V26));
    let t = s.spawn(0, 0, TaskParams::normal()).unwrap();
    assert_eq!(s.schedule(0, 0, Deschedule::Preempt).unwrap().next, Some(t));
    let a = s.spawn(0, 1, TaskParams::normal()).unwrap();
    let b = s.spawn(0, 1, TaskParams::normal()).unwrap();
    let c = s.spawn(0, 1, TaskParams::normal()).unwrap();
    assert_eq!(s.schedule(0, 1, Deschedule::Preempt).unwrap().next, Some(a));
    s.set_affinity(10 * MS, t, CpuMask::single(1)).unwrap();
    let sw = s.schedule(10 * MS, 0, Deschedule::Preempt).unwrap();
    assert_eq!(s.task(t).unwrap().cpu, 1);
    assert!(sw.next == Some(b) || sw.next == Some(c), "CPU 0 ran {:?}", sw.next);
    assert_eq!(s.task(sw.next.unwrap()).unwrap().cpu, 0);
}

#[test]
fn no_task_ever_runs_outside_its_mask() {
    // Q6600 under load with tasks pinned to single CPUs, pairs and the whole machine,
    // affinity changes every 10 ms, and blocking tasks woken from every CPU with the
    // sync hint. After every step every CPU's current task must be allowed there.
    for v in [V25, RC4, V26] {
        let mut sim = Sim::new(cfg(v, 4), q6600(v), 0);
        sim.s.observer_mut().off = true;
        let masks = [
            CpuMask::single(0),
            CpuMask::single(3),
            CpuMask::from_cpus([0, 1]),
            CpuMask::from_cpus([2, 3]),
            CpuMask::first_n(4),
            CpuMask::from_cpus([1, 2]),
        ];
        let mut ids = Vec::new();
        for i in 0..12 {
            ids.push(sim.spawn(i % 4, TaskParams::normal().nice((i as i32 % 5) - 2).allowed(masks[i % masks.len()])));
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut asleep: Vec<TaskId> = Vec::new();
        for step in 1..=2_000u64 {
            sim.run_to(step * 500 * US);
            if step % 20 == 0 {
                let t = ids[rng.below(ids.len() as u64) as usize];
                let m = masks[rng.below(masks.len() as u64) as usize];
                let now = sim.now();
                sim.s.set_affinity(now, t, m).unwrap();
                sim.resched_all();
            }
            // Block a random running task now and then; wake sleepers from random CPUs.
            let cpu = rng.below(4) as usize;
            if rng.chance(150) && sim.s.curr(cpu).is_some() {
                let t = sim.s.curr(cpu).unwrap();
                sim.schedule(cpu, Deschedule::Sleep);
                asleep.push(t);
                sim.resched_all();
            }
            if !asleep.is_empty() && rng.chance(200) {
                let t = asleep.swap_remove(rng.below(asleep.len() as u64) as usize);
                let now = sim.now();
                sim.s.wake_up(now, t, rng.below(4) as usize, rng.chance(500)).unwrap();
                sim.resched_all();
            }
            for c in 0..4 {
                if let Some(t) = sim.s.curr(c) {
                    assert!(
                        sim.s.task(t).unwrap().allowed.contains(c),
                        "{v}: {t} runs on CPU {c} outside its mask at step {step}"
                    );
                }
            }
        }
    }
}
