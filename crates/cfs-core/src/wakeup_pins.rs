//! Unit pins of the wakeup- and fork-placement branches across CPUs
//! against the kernel source (test-only module), on the domains
//! cfs-topology builds for the seed hosts, with task fields set directly.
//!
//! Mutation testing (`cargo mutants -p cfs-core -f src/wakeup.rs`) found
//! these branches decided by no test of the crate: each test below names
//! the kernel lines it pins, and the working is in the comments. Kernel
//! lines (2.6.26 bce7f793 unless noted): select_task_rq_fair
//! sched_fair.c:1043-1106 (SD_WAKE_BALANCE :1090-1097); wake_affine
//! :990-1041, rc4 e490517a :1050-1096 (the sync shortcut before the
//! subtraction); wake_idle :940-978; source_load / target_load
//! sched.c:1878-1900, 2.6.32 22763c5c sched.c:1513-1540 (LB_BIAS);
//! find_idlest_cpu / sched_balance_self sched.c:1960-2062;
//! try_to_wake_up sched.c:2078-2163, 2.6.32 sched.c:2330-2420;
//! last_preempter: seeds/patches.md §4.

extern crate std;

use crate::config::Config;
use crate::entity::{CurrentState, TaskId, TaskParams, TaskState};
use crate::features::Feature;
use crate::observe::WakeReason;
use crate::patches::Patch;
use crate::sched::{Deschedule, Scheduler};
use cfs_topology::{CpuMask, DomainLevel, Host, KernelVersion, SdFlags};

const V25: KernelVersion = KernelVersion::V2_6_25;
const RC4: KernelVersion = KernelVersion::V2_6_26Rc4;
const V26: KernelVersion = KernelVersion::V2_6_26;
const V32RC1: KernelVersion = KernelVersion::V2_6_32Rc1;
const V32: KernelVersion = KernelVersion::V2_6_32;
const MS: u64 = 1_000_000;
pub(crate) const T0: u64 = 7_000_000_000;
/// sysctl_sched_migration_cost: 500 µs in every profile.
const COST: u64 = 500_000;

/// A scheduler for a preset or spec host under `v`, periodic ticks only
/// (shared with `balance_pins`).
pub(crate) fn on(host: &str, v: KernelVersion) -> Scheduler<()> {
    let h = Host::preset(host).or_else(|_| Host::from_spec(host)).unwrap();
    let mut c = Config::new(v, h.nr_cpus());
    c.hres_timers = false;
    Scheduler::new(c, h.build_domains(v)).unwrap()
}

/// A task spawned on `cpu` at T0 and made its current task.
pub(crate) fn running_with(s: &mut Scheduler<()>, cpu: usize, params: TaskParams) -> TaskId {
    let id = s.spawn(T0, cpu, params).unwrap();
    while s.rqs[cpu].curr != Some(id) {
        s.do_schedule(T0, cpu, Deschedule::Preempt);
    }
    id
}

/// A nice-0 task spawned on `cpu` and made its current task.
fn running_on(s: &mut Scheduler<()>, cpu: usize) -> TaskId {
    running_with(s, cpu, TaskParams::normal())
}

/// A task queued (runnable, not running) on `cpu`.
fn queued_on(s: &mut Scheduler<()>, cpu: usize) -> TaskId {
    let id = s.spawn(T0, cpu, TaskParams::normal()).unwrap();
    assert_ne!(s.rqs[cpu].curr, Some(id));
    id
}

/// A task asleep whose previous CPU is `cpu`; it last ran at T0.
fn asleep_on(s: &mut Scheduler<()>, cpu: usize) -> TaskId {
    let id = s.spawn(T0, cpu, TaskParams::normal()).unwrap();
    s.deactivate_task(cpu, id, false);
    let t = s.tm(id);
    t.state = TaskState::Sleeping;
    t.se.exec_start = T0;
    id
}

// ---------------------------------------------------------------------
// wake_affine: the sync shortcut's overlap test
// ---------------------------------------------------------------------

/// rc4 on a Q6600: the waker W runs on CPU 0 with a hog queued behind it;
/// P sleeps with previous CPU 2 (idle). No tick has run, so every
/// cpu_load[] is 0.
fn rc4_sync_scene(patch: Option<Patch>) -> (Scheduler<()>, TaskId, TaskId) {
    let mut s = on("q6600", RC4);
    if let Some(p) = patch {
        s.cfg = s.cfg.with_patch(p).unwrap();
        s.rules = s.cfg.rules();
    }
    let w = running_on(&mut s, 0);
    queued_on(&mut s, 0);
    let p = asleep_on(&mut s, 2);
    (s, w, p)
}

#[test]
fn rc4_sync_shortcut_needs_both_overlaps_strictly_below_migration_cost() {
    // rc4 wake_affine (e490517a sched_fair.c:1068-1072): with sync and a fair curr,
    //   curr->se.avg_overlap < sysctl_sched_migration_cost && p->se.avg_overlap < ... -> 1.
    // Otherwise (this_sd = the CPU level, wake_idx 1, imbalance 112):
    //   tl = target_load(0, 1) - 1024 = max(0, 2048) - 1024 = 1024;
    //   load = source_load(2, 1) = min(0, 0) = 0;
    //   (tl <= load) false; 100 * (1024 + 1024) <= 112 * 0 false -> not affine;
    //   no SD_WAKE_BALANCE; wake_idle(2): CPU 2 is idle -> 2.
    for (w_ov, p_ov, want) in [
        (0, 0, (0, WakeReason::AffineSync)),
        (COST - 1, COST - 1, (0, WakeReason::AffineSync)),
        (COST, 0, (2, WakeReason::Previous)),
        (0, COST, (2, WakeReason::Previous)),
        (COST + 1, COST + 1, (2, WakeReason::Previous)),
    ] {
        let (mut s, w, p) = rc4_sync_scene(None);
        s.tm(w).se.avg_overlap = w_ov;
        s.tm(p).se.avg_overlap = p_ov;
        assert_eq!(s.select_task_rq_fair(p, 0, true), want, "overlaps {w_ov} / {p_ov}");
        // A non-sync wakeup never takes the shortcut.
        assert_eq!(s.select_task_rq_fair(p, 0, false).0, 2);
    }
}

#[test]
fn last_preempter_holds_off_only_another_wakee_within_migration_cost() {
    // patches.md §4, in wake_affine before the shortcut:
    //   if (sync && curr->se.last_preempter && curr->se.last_preempter != p
    //       && curr ran less than sysctl_sched_migration_cost since it was picked) return 0;
    // "ran" = sum_exec_runtime - prev_sum_exec_runtime. Not affine -> wake_idle(2) -> 2.
    let other = TaskId(999);
    for (last, ran, want) in [
        (None, 0, 0),               // nobody preempted W: the shortcut
        (Some(other), 0, 2),        // another task did, W ran 0 ns: held off
        (Some(other), COST - 1, 2), // ... 499,999 ns: still held off
        (Some(other), COST, 0),     // ... 500,000 ns: no longer (ran < cost is false)
        (Some(other), COST + 1, 0), // ... beyond
    ] {
        let (mut s, w, p) = rc4_sync_scene(Some(Patch::LastPreempter));
        let se = &mut s.tm(w).se;
        se.last_preempter = last;
        se.sum_exec_runtime = se.prev_sum_exec_runtime + ran;
        assert_eq!(s.select_task_rq_fair(p, 0, true).0, want, "{last:?} ran {ran}");
    }
    // The wakee itself was the last preempter: not held off, whatever W ran.
    let (mut s, w, p) = rc4_sync_scene(Some(Patch::LastPreempter));
    s.tm(w).se.last_preempter = Some(p);
    assert_eq!(s.select_task_rq_fair(p, 0, true), (0, WakeReason::AffineSync));
}

// ---------------------------------------------------------------------
// select_task_rq_fair: passive balancing (SD_WAKE_BALANCE)
// ---------------------------------------------------------------------

/// 2.6.26 on a Q6600 after one tick on every CPU: W runs alone on CPU 0;
/// P sleeps with previous CPU 2, which runs `hogs` tasks. The tick sets
/// cpu_load[0] (scale 1) to each CPU's weight.
fn passive_scene(hogs: usize, set: SdFlags, clear: SdFlags) -> (Scheduler<()>, TaskId) {
    let mut s = on("q6600", V26);
    running_on(&mut s, 0);
    for i in 0..hogs {
        if i == 0 {
            running_on(&mut s, 2)
        } else {
            queued_on(&mut s, 2)
        };
    }
    let p = asleep_on(&mut s, 2);
    for cpu in 0..4 {
        s.scheduler_tick(T0 + MS, cpu);
    }
    s.set_domain_flags(DomainLevel::Cpu, set, clear).unwrap();
    (s, p)
}

#[test]
fn passive_balancing_pulls_the_wakee_when_its_cpu_is_half_the_margin_busier() {
    // select_task_rq_fair (sched_fair.c:1090-1097), non-sync from CPU 0 with the CPU level
    // given SD_WAKE_BALANCE and without SD_WAKE_AFFINE (wake_affine returns 0 at once):
    //   imbalance = 100 + (125 - 100) / 2 = 112;
    //   this_load = target_load(0, 1) = max(cpu_load[0] = 1024, 1024) = 1024;
    //   two hogs on CPU 2: load = source_load(2, 1) = min(2048, 2048) = 2048;
    //     112 * 1024 = 114,688 <= 100 * 2048 = 204,800 -> this_cpu (passive);
    //   one hog: load 1024: 114,688 <= 102,400 is false -> wake_idle(2): CPU 2 runs one
    //     task, but no level of CPU 2 has SD_WAKE_IDLE -> 2.
    let (balance, affine) = (SdFlags::WAKE_BALANCE, SdFlags::WAKE_AFFINE);
    let (mut s, p) = passive_scene(2, balance, affine);
    assert_eq!(s.select_task_rq_fair(p, 0, false), (0, WakeReason::PassiveBalance));
    let (mut s, p) = passive_scene(1, balance, affine);
    assert_eq!(s.select_task_rq_fair(p, 0, false), (2, WakeReason::Previous));
    // Without the flag (the Q6600's own CPU level) the busier CPU keeps its wakee.
    let (mut s, p) = passive_scene(2, SdFlags::empty(), affine);
    assert_eq!(s.select_task_rq_fair(p, 0, false), (2, WakeReason::Previous));
    // With SD_WAKE_AFFINE kept, wake_affine decides first: tl = 1024,
    // 100 * (1024 + 1024) = 204,800 <= 112 * 2048 = 229,376 -> affine.
    let (mut s, p) = passive_scene(2, balance, SdFlags::empty());
    assert_eq!(s.select_task_rq_fair(p, 0, false), (0, WakeReason::Affine));
}

// ---------------------------------------------------------------------
// wake_idle: SD_WAKE_IDLE siblings and SD_WAKE_IDLE_FAR
// ---------------------------------------------------------------------

/// One package of two cores with two threads each; every level
/// loses SD_WAKE_AFFINE so that placement falls through to wake_idle.
/// Returns the scheduler, the previous CPU `a` and its sibling `b < a`.
fn smt(v: KernelVersion) -> (Scheduler<()>, usize, usize) {
    let mut s = on("1s2c2t", v);
    let sib = s.domains.of(0)[0].clone();
    assert_eq!(sib.level, DomainLevel::Sibling);
    assert!(sib.flags.contains(SdFlags::WAKE_IDLE), "SD_SIBLING_INIT has SD_WAKE_IDLE");
    let b = sib.span.first().unwrap();
    let a = sib.span.iter().nth(1).unwrap();
    for level in [DomainLevel::Sibling, DomainLevel::Mc] {
        s.set_domain_flags(level, SdFlags::empty(), SdFlags::WAKE_AFFINE).unwrap();
    }
    (s, a, b)
}

#[test]
fn wake_idle_moves_a_wakee_to_an_idle_sibling_only_when_its_cpu_runs_exactly_one_task() {
    // wake_idle(cpu, p) (sched_fair.c:940-978): idle_cpu(cpu) or cfs.nr_running > 1 ->
    // cpu; else the first idle CPU of the lowest SD_WAKE_IDLE domain.
    // The waker is on the other core (CPU `c`), so select_task_rq_fair ends in
    // wake_idle(a).
    for (busy_on_a, want) in [(0, None), (1, Some(WakeReason::IdleSibling)), (2, None)] {
        let (mut s, a, b) = smt(V26);
        let c = (0..4).find(|&c| c != a && c != b).unwrap();
        running_on(&mut s, c);
        let p = asleep_on(&mut s, a);
        for i in 0..busy_on_a {
            if i == 0 {
                running_on(&mut s, a)
            } else {
                queued_on(&mut s, a)
            };
        }
        let got = s.select_task_rq_fair(p, c, false);
        match want {
            // Idle or busier than one task: the previous CPU, even though the
            // sibling b (first in mask order) is idle.
            None => assert_eq!(got, (a, WakeReason::Previous), "{busy_on_a} task(s) on CPU {a}"),
            Some(r) => assert_eq!(got, (b, r), "{busy_on_a} task(s) on CPU {a}"),
        }
    }
}

#[test]
fn a_wakeup_to_an_idle_sibling_enqueues_on_that_cpus_fresh_clock() {
    // 2.6.26 try_to_wake_up (sched.c:2110-2150): after select_task_rq moved the task,
    // `rq = task_rq_lock(p, &flags); update_rq_clock(rq);` on the new runqueue before
    // activate_task, so the enqueue's update_curr sees the wakeup time. Here the
    // chosen CPU (the idle sibling b) is neither the waker's CPU nor P's previous one.
    for v in [RC4, V26] {
        let (mut s, a, b) = smt(v);
        let c = (0..4).find(|&c| c != a && c != b).unwrap();
        running_on(&mut s, c);
        let p = asleep_on(&mut s, a);
        running_on(&mut s, a);
        let now = T0 + 2 * MS;
        assert!(s.rqs[b].clock < now);
        let out = s.try_to_wake_up(now, p, c, false, false);
        assert_eq!(out.cpu, b, "{v}");
        assert_eq!(s.rqs[b].clock, now, "{v}");
    }
}

#[test]
fn wake_idle_far_moves_only_a_cache_cold_wakee() {
    // SD_WAKE_IDLE_FAR (sched_fair.c:960-961): a level without SD_WAKE_IDLE still
    // searches when `!task_hot(p, task_rq(p)->clock, sd)`. On a Q6600 (no SMT level) the
    // MC level gets the flag; P's previous CPU 1 runs one task, CPU 0 is idle.
    // task_hot: now - p->se.exec_start < 500,000 ns (P last ran at T0; CPU 1's clock
    // is then set to T0 + d).
    for (d, want) in [(COST - 1, 1), (COST, 0)] {
        let mut s = on("q6600", V26);
        s.set_domain_flags(DomainLevel::Mc, SdFlags::WAKE_IDLE_FAR, SdFlags::empty()).unwrap();
        let p = asleep_on(&mut s, 1);
        running_on(&mut s, 1);
        s.set_clock(1, T0 + d);
        assert_eq!(s.wake_idle(1, p), want, "{d} ns after P last ran");
    }
    // Without the flag the search stops at the first level: 1.
    let mut s = on("q6600", V26);
    let p = asleep_on(&mut s, 1);
    running_on(&mut s, 1);
    s.set_clock(1, T0 + 10 * MS);
    assert_eq!(s.wake_idle(1, p), 1);
}

#[test]
fn wake_idle_far_written_into_a_2_6_25_domain_is_read_by_nothing() {
    // 2.6.25's wake_idle tests SD_WAKE_IDLE alone (4b119e21 sched_fair.c:957-958);
    // SD_WAKE_IDLE_FAR (2048) came with 1d3504fcf56 in 2.6.26-rc1. A 2.6.25 sysctl
    // write of 2048 sets a bit no code reads: the cache-cold wakee of the test above
    // (10 ms since it ran, far past migration_cost) stays on its busy CPU 1, where
    // rc4 moves it to the idle CPU 0.
    for (v, want) in [(V25, 1), (RC4, 0)] {
        let mut s = on("q6600", v);
        s.set_domain_flags(DomainLevel::Mc, SdFlags::WAKE_IDLE_FAR, SdFlags::empty()).unwrap();
        let p = asleep_on(&mut s, 1);
        running_on(&mut s, 1);
        s.set_clock(1, T0 + 10 * MS);
        assert_eq!(s.wake_idle(1, p), want, "{v}");
    }
}

// ---------------------------------------------------------------------
// source_load / target_load: the cpu_load[] index and 2.6.32's LB_BIAS
// ---------------------------------------------------------------------

#[test]
fn source_and_target_load_read_cpu_load_at_idx_minus_one() {
    // source_load(cpu, type) = type ? min(cpu_load[type-1], total) : total, target_load
    // the max (sched.c:1878-1900). 2.6.32 (sched.c:1513-1540) returns total unless
    // sched_feat(LB_BIAS). One nice-0 task: total = 1024.
    for (v, bias) in [(RC4, true), (V26, true), (V32, true), (V32, false)] {
        let mut s = on("q6600", v);
        if !bias {
            s.cfg.features.set(Feature::LbBias, false).unwrap();
        }
        running_on(&mut s, 0);
        s.rqs[0].cpu_load = [100, 200, 300, 400, 500];
        s.rqs[1].cpu_load = [2000, 3000, 4000, 5000, 6000];
        running_on(&mut s, 1);
        for idx in 1..=5u8 {
            let i = idx as usize - 1;
            let (lo, hi) = if bias { (s.rqs[0].cpu_load[i], s.rqs[1].cpu_load[i]) } else { (1024, 1024) };
            assert_eq!(s.source_load(0, idx), lo, "{v} source idx {idx}");
            assert_eq!(s.target_load(1, idx), hi, "{v} target idx {idx}");
            // The other side of the min/max is the total.
            assert_eq!(s.source_load(1, idx), 1024);
            assert_eq!(s.target_load(0, idx), 1024);
        }
        assert_eq!((s.source_load(0, 0), s.target_load(1, 0)), (1024, 1024), "{v} idx 0 is the total");
    }
}

// ---------------------------------------------------------------------
// try_to_wake_up: the outcome of an already-queued wakee; 2.6.32's clocks
// ---------------------------------------------------------------------

/// `v` on a Q6600: C runs on CPU 0 and Q is queued behind it, 100 ms of
/// vruntime behind C (C is first moved 200 ms on, so that 2.6.25's unsigned
/// compare does not wrap). Q has been preempted inside a wait loop, or is a
/// plain runnable task, as `state` says.
fn queued_behind(v: KernelVersion, state: CurrentState) -> (Scheduler<()>, TaskId, TaskId) {
    let mut s = on("q6600", v);
    let c = running_on(&mut s, 0);
    let q = queued_on(&mut s, 0);
    s.rqs[0].need_resched = false;
    s.tm(c).se.vruntime += 200 * MS;
    s.dequeue_tree(0, q);
    let cv = s.t(c).se.vruntime;
    s.tm(q).se.vruntime = cv - 100 * MS;
    s.tm(q).current_state = state;
    s.enqueue_tree(0, q);
    (s, c, q)
}

#[test]
fn waking_a_queued_task_reports_a_preemption_only_when_it_set_need_resched() {
    // try_to_wake_up of a task still on a runqueue in a sleep state goes to
    // out_running: only check_preempt_curr. The outcome's `preempt` is
    // "need_resched was set by this wakeup", so a CPU already marked reports false.
    // 2.6.26 on 4 CPUs: f = 1 + ilog2(4) = 3, sysctl_sched_wakeup_granularity = 30 ms,
    // and for a nice-0 wakee wakeup_gran is 30 ms. Q is queued 100 ms of vruntime behind
    // the running C: 100 ms > 30 ms -> preempt.
    let (mut s, _, q) = queued_behind(V26, CurrentState::Interruptible);
    let out = s.try_to_wake_up(T0, q, 0, false, false);
    assert!(!out.woken);
    assert!(out.preempt && s.rqs[0].need_resched);
    assert_eq!(s.t(q).current_state, CurrentState::Running, "out_running sets TASK_RUNNING");
    // Preempted in its wait loop again, with C's reschedule still pending.
    s.tm(q).current_state = CurrentState::Interruptible;
    let again = s.try_to_wake_up(T0, q, 0, false, false);
    assert!(!again.preempt, "need_resched was already set");
    assert!(s.rqs[0].need_resched);
}

#[test]
fn a_wakeup_of_a_queued_task_running_as_task_running_does_nothing() {
    // `if (!(old_state & state)) goto out;` (4b119e21 sched.c:1845, e490517a :2423,
    // bce7f793 :2091; 22763c5c :2354): a task that is TASK_RUNNING, queued or
    // current, is left alone. Q below would preempt C by 100 ms against a 30 ms
    // granularity (6 ms in 2.6.32: 2 ms x 3) if the wakeup reached
    // check_preempt_curr, and in 2.6.25/26 it would stamp C's last_wakeup and make
    // Q the next buddy. As TASK_RUNNING it does none of these; in a sleep state
    // (set_current_state(TASK_INTERRUPTIBLE), then preempted) it does all.
    for v in [KernelVersion::V2_6_25, RC4, V26, V32RC1, V32] {
        let (mut s, c, q) = queued_behind(v, CurrentState::Running);
        s.tm(c).se.last_wakeup = 0;
        let out = s.wake_up(T0, q, 0, true).unwrap();
        assert!(!out.woken && !out.preempt && !s.rqs[0].need_resched, "{v}: {out:?}");
        assert_eq!(s.t(c).se.last_wakeup, 0, "{v}: no stamp");
        assert_eq!(s.rqs[0].cfs.next, None, "{v}: no next buddy");
        assert_eq!(s.t(q).state, TaskState::Queued);

        let (mut s, c, q) = queued_behind(v, CurrentState::Interruptible);
        s.tm(c).se.last_wakeup = 0;
        let out = s.wake_up(T0, q, 0, true).unwrap();
        assert!(!out.woken && out.preempt && s.rqs[0].need_resched, "{v}: {out:?}");
        assert_eq!(s.t(q).current_state, CurrentState::Running, "{v}");
        if !v.is_2_6_32() {
            assert_eq!(s.t(c).se.last_wakeup, s.t(c).se.sum_exec_runtime, "{v}: stamped");
            assert_eq!(s.rqs[0].cfs.next, Some(q), "{v}: next buddy");
        }
    }
}

#[test]
fn a_wait_loop_sleeps_in_schedule_unless_a_wakeup_came_after_it_set_its_state() {
    // The kernel's sleep protocol: set_current_state(TASK_INTERRUPTIBLE), test the
    // condition, schedule(). schedule() dequeues prev only `if (prev->state && ...)`
    // (bce7f793 sched.c:4171), so a wakeup between the two (out_running, which sets
    // TASK_RUNNING) turns the sleep into a voluntary switch and is not lost.
    for v in [RC4, V26, V32] {
        let mut s = on("q6600", v);
        let a = running_on(&mut s, 0);
        s.set_current_state(a, CurrentState::Interruptible).unwrap();
        s.schedule(T0 + MS, 0, Deschedule::Schedule).unwrap();
        assert_eq!(s.t(a).state, TaskState::Sleeping, "{v}: no wakeup came, it sleeps");
        assert_eq!(s.t(a).current_state, CurrentState::Running, "{v}: a sleeper's state is reset");

        let mut s = on("q6600", v);
        let a = running_on(&mut s, 0);
        s.set_current_state(a, CurrentState::Interruptible).unwrap();
        let out = s.wake_up(T0 + MS, a, 1, true).unwrap();
        assert!(!out.woken, "{v}: still on its runqueue");
        s.schedule(T0 + MS, 0, Deschedule::Schedule).unwrap();
        assert_eq!(s.t(a).state, TaskState::Running, "{v}: woken first, it stays");
        // A second wakeup finds it TASK_RUNNING, and schedule() keeps it again.
        let out = s.wake_up(T0 + 2 * MS, a, 1, true).unwrap();
        assert!(!out.woken && !out.preempt);
        s.schedule(T0 + 2 * MS, 0, Deschedule::Schedule).unwrap();
        assert!(s.t(a).se.on_rq, "{v}");
        // Sleep needs no set_current_state: it sets the state itself.
        s.schedule(T0 + 3 * MS, 0, Deschedule::Sleep).unwrap();
        assert_eq!(s.t(a).state, TaskState::Sleeping, "{v}");
    }
    // Only the running task sets its own state.
    let mut s = on("q6600", V26);
    running_on(&mut s, 0);
    let q = queued_on(&mut s, 0);
    assert!(s.set_current_state(q, CurrentState::Interruptible).is_err(), "queued, not running");
    assert!(s.set_current_state(TaskId(99), CurrentState::Interruptible).is_err(), "no such task");
}

#[test]
fn v2_6_32_final_updates_the_chosen_cpus_clock_rc1_does_not() {
    // 2.6.32 try_to_wake_up re-locks the chosen runqueue and calls update_rq_clock when
    // select_task_rq moved the task (f5dc37530ba, 2.6.32-rc5); 2.6.32-rc1 does not, so the
    // chosen CPU's clock stays where its last event left it. Earlier profiles update the
    // waking CPU's clock, which is the chosen one for an affine wakeup.
    for v in [V32RC1, V32, RC4] {
        let mut s = on("q6600", v);
        running_on(&mut s, 0);
        let p = asleep_on(&mut s, 2);
        let now = T0 + 3 * MS;
        let before: std::vec::Vec<u64> = s.rqs.iter().map(|rq| rq.clock).collect();
        let out = s.try_to_wake_up(now, p, 0, true, false);
        assert_ne!(out.cpu, 2, "{v}: the sync wakeup moves P next to its waker");
        let want = if v == V32RC1 { before[out.cpu] } else { now };
        assert!(want != now || before[out.cpu] != now, "the test must see a change");
        assert_eq!(s.rqs[out.cpu].clock, want, "{v}: CPU {}", out.cpu);
    }
}

#[test]
fn v2_6_25_and_26_update_only_the_clock_of_the_runqueue_woken_onto() {
    // try_to_wake_up in 2.6.25/26 calls update_rq_clock once, on the runqueue it
    // activates the task on, just before activate_task (bce7f793 sched.c:2147,
    // e490517a :2479, 4b119e21 :1901); the out_running path (the task is still
    // queued) updates none. W runs on CPU 0 from T0 and wakes P, allowed only on
    // CPU 2, at T0 + 3 ms: CPU 2's clock moves to T0 + 3 ms (in 2.6.25 only a CPU's
    // own wakeup moves its clock, so there it stays), and the waker's CPU 0 keeps T0.
    // Waking P again at T0 + 5 ms, still queued, moves no clock.
    for v in [KernelVersion::V2_6_25, RC4, V26] {
        let mut s = on("q6600", v);
        running_on(&mut s, 0);
        let p = asleep_on(&mut s, 2);
        s.tm(p).allowed = CpuMask::single(2);
        let out = s.try_to_wake_up(T0 + 3 * MS, p, 0, true, false);
        assert_eq!(out.cpu, 2, "{v}");
        let cpu2 = if v == KernelVersion::V2_6_25 { T0 } else { T0 + 3 * MS };
        assert_eq!((s.rqs[0].clock, s.rqs[2].clock), (T0, cpu2), "{v}");
        s.try_to_wake_up(T0 + 5 * MS, p, 0, true, false);
        assert_eq!((s.rqs[0].clock, s.rqs[2].clock), (T0, cpu2), "{v}: out_running");
    }
}

// ---------------------------------------------------------------------
// fork placement: find_idlest_cpu's tie and SD_POWERSAVINGS_BALANCE
// ---------------------------------------------------------------------

#[test]
fn find_idlest_cpu_breaks_a_tie_towards_this_cpu() {
    // find_idlest_cpu (sched.c:1975-1994): `if (load < min_load || (load == min_load &&
    // i == this_cpu))`. Every CPU of the Q6600 idle: the group {0..3} has four CPUs at
    // load 0; from CPU 2 the answer is 2, from CPU 0 it is 0 (the first one wins only
    // when this_cpu is not in the tie).
    let mut s = on("q6600", V26);
    let p = asleep_on(&mut s, 0);
    let all = cfs_topology::SchedGroup { cpus: CpuMask::first_n(4), cpu_power: 4096 };
    assert_eq!(s.find_idlest_cpu(&all, p, 2), Some(2));
    assert_eq!(s.find_idlest_cpu(&all, p, 0), Some(0));
    let pair = cfs_topology::SchedGroup { cpus: CpuMask::from_cpus(2..4), cpu_power: 2048 };
    assert_eq!(s.find_idlest_cpu(&pair, p, 0), Some(2), "this_cpu outside the group");
}

#[test]
fn fork_balancing_stops_at_a_power_savings_domain() {
    // sched_balance_self (sched.c:2007-2062) walks up from the bottom and stops at the
    // first domain with SD_POWERSAVINGS_BALANCE, keeping the highest SD_BALANCE_FORK
    // domain below it. Parent on CPU 0 with cpu_load[0] = 1024 after one tick:
    // - both levels: the CPU level sends the child to the idle pair {2,3}, then to CPU 3
    //   (smp.rs fork_balancing_spreads_children_to_idle_cpus has the working);
    // - power savings on the CPU level: only MC: {0} 1024 vs {1} 0 -> CPU 1;
    // - power savings on MC: no level at all -> the parent's CPU 0.
    for (level, want) in [(None, 3), (Some(DomainLevel::Cpu), 1), (Some(DomainLevel::Mc), 0)] {
        let mut s = on("q6600", V26);
        let parent = running_on(&mut s, 0);
        for cpu in 0..4 {
            s.scheduler_tick(T0 + 4 * MS, cpu);
        }
        if let Some(l) = level {
            s.set_domain_flags(l, SdFlags::POWERSAVINGS_BALANCE, SdFlags::empty()).unwrap();
        }
        assert_eq!(s.sched_balance_fork(0, parent), want, "power savings on {level:?}");
    }
}

#[test]
fn set_task_cpu_renormalises_vruntime_and_counts_only_real_moves() {
    // set_task_cpu (2.6.26 sched.c:1796-1827): `p->se.vruntime -= old_cfsrq->min_vruntime
    // - new_cfsrq->min_vruntime`, and nr_migrations counts a different CPU only.
    let mut s = on("q6600", V26);
    let p = asleep_on(&mut s, 0);
    s.rqs[0].cfs.min_vruntime = 10 * MS;
    s.rqs[2].cfs.min_vruntime = 4 * MS;
    s.tm(p).se.vruntime = 13 * MS;
    s.set_task_cpu(p, 0);
    assert_eq!((s.t(p).se.vruntime, s.t(p).nr_migrations), (13 * MS, 0));
    s.set_task_cpu(p, 2);
    // 3 ms ahead of CPU 0's min stays 3 ms ahead of CPU 2's.
    assert_eq!((s.t(p).se.vruntime, s.t(p).nr_migrations, s.t(p).cpu), (7 * MS, 1, 2));
    s.set_task_cpu(p, 0);
    assert_eq!((s.t(p).se.vruntime, s.t(p).nr_migrations), (13 * MS, 2));
}
