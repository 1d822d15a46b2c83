//! Group scheduling by user (CONFIG_FAIR_GROUP_SCHED + CONFIG_USER_SCHED)
//! in the 2.6.25, 2.6.26-rc4 and 2.6.26 profiles: users share a CPU by their
//! groups' shares, the 2.6.25/26 balancer moves each group's tasks by half
//! that group's difference, and the 2.6.32 profiles refuse the option.
//! (rc4's aggregate arithmetic is pinned in cfs-core's `group` module.)
//!
//! Kernel lines: bce7f793 sched.c:250-350 (task_group, USER_SCHED's
//! INIT_TASK_GROUP_LOAD), 7753-7797 (sched_init), 8026 (sched_create_group's
//! shares); sched_fair.c:850-891 (enqueue/dequeue_task_fair),
//! 1166-1224 (check_preempt_wakeup's walk), 1226-1270 (pick and put_prev),
//! 1331-1375 (load_balance_fair); 4b119e21 the same functions.

mod common;

use cfs_core::{Config, ConfigError, Deschedule, KernelVersion, Patch, TaskParams};
use common::*;

const V25: KernelVersion = KernelVersion::V2_6_25;
const RC4: KernelVersion = KernelVersion::V2_6_26Rc4;
const V26: KernelVersion = KernelVersion::V2_6_26;
const MS: u64 = 1_000_000;

fn grouped(v: KernelVersion, n: usize) -> Config {
    let mut c = cfg(v, n);
    c.group_sched = true;
    c
}

/// Four CPU hogs on one CPU for 10 s: one of user 1000 and three of user
/// 1001. Returns the CPU time of the lone task and of each of the three.
fn one_against_three(c: Config) -> (u64, [u64; 3]) {
    let mut sim = Sim::new(c, up(c.version), 0);
    let a = sim.spawn(0, TaskParams::normal().uid(1000));
    let b: Vec<_> = (0..3).map(|_| sim.spawn(0, TaskParams::normal().uid(1001))).collect();
    sim.run_to(10_000 * MS);
    (sim.sum_exec(a), [sim.sum_exec(b[0]), sim.sum_exec(b[1]), sim.sum_exec(b[2])])
}

#[test]
fn users_not_tasks_share_a_cpu() {
    // (rc4 too: on one CPU there is no domain, so no aggregate walk
    // re-weights the groups.)
    for v in [V25, RC4, V26] {
        // Two groups of NICE_0_LOAD shares each on the top queue: each gets
        // 1024 / 2048 of the CPU, 5 s of 10, and user 1001's three tasks
        // split theirs: 5/3 s each. A group's slice of the top queue is
        // period(2) x 1024 / 2048 = 10 ms (latency 20 ms on one CPU), ended
        // at the next 4 ms tick, so the shares hold to within a few slices.
        let (a, b) = one_against_three(grouped(v, 1));
        assert!(a.abs_diff(5_000 * MS) <= 30 * MS, "{v}: the lone user's task ran {a}");
        for x in b {
            assert!(x.abs_diff(5_000 * MS / 3) <= 30 * MS, "{v}: a task of the three ran {x}");
        }
        // Without groups the four tasks share it equally: 2.5 s each.
        let (a, b) = one_against_three(cfg(v, 1));
        assert!(a.abs_diff(2_500 * MS) <= 30 * MS, "{v} without groups: {a}");
        assert!(b.iter().all(|x| x.abs_diff(2_500 * MS) <= 30 * MS), "{v} without groups: {b:?}");
    }
}

#[test]
fn user_0_weighs_two_users() {
    for v in [V25, V26] {
        // INIT_TASK_GROUP_LOAD = 2 x NICE_0_LOAD under USER_SCHED: root's
        // group gets 2048 / 3072 of the CPU against another user's 1024.
        let mut sim = Sim::new(grouped(v, 1), up(v), 0);
        let root = sim.spawn(0, TaskParams::normal().uid(0));
        let user = sim.spawn(0, TaskParams::normal().uid(1000));
        sim.run_to(9_000 * MS);
        let (r, u) = (sim.sum_exec(root), sim.sum_exec(user));
        assert!(r.abs_diff(6_000 * MS) <= 30 * MS && u.abs_diff(3_000 * MS) <= 30 * MS, "{v}: {r} / {u}");
        let groups = sim.s.task_groups();
        assert_eq!(
            groups.iter().map(|g| (g.uid, g.shares)).collect::<Vec<_>>(),
            [(0, 2048), (1000, 1024)],
            "{v}: groups made in the order their users appeared"
        );
    }
}

#[test]
fn a_fork_inherits_its_parents_user_unless_it_names_one() {
    let mut sim = Sim::new(grouped(V26, 1), up(V26), 0);
    let p = sim.spawn(0, TaskParams::normal().uid(1000));
    sim.schedule(0, Deschedule::Preempt);
    assert_eq!(sim.s.curr(0), Some(p));
    let now = sim.now();
    let same = sim.s.fork(now, p, None).unwrap().child;
    let given = sim.s.fork(now, p, Some(TaskParams::normal())).unwrap().child;
    let other = sim.s.fork(now, p, Some(TaskParams::normal().uid(7))).unwrap().child;
    let uid = |t| sim.s.task(t).unwrap().uid;
    assert_eq!((uid(same), uid(given), uid(other)), (1000, 1000, 7));
    assert_eq!(sim.s.task(same).unwrap().tg, sim.s.task(p).unwrap().tg);
    assert_ne!(sim.s.task(other).unwrap().tg, sim.s.task(p).unwrap().tg);
}

#[test]
fn a_waking_task_of_another_user_is_judged_by_its_group() {
    // One CPU, user 1000's hog and user 1001's task, which sleeps at 4 ms
    // and wakes at 204 ms. While the hog runs alone its group's entity is
    // the top queue's only one, out of the tree, so the top queue's
    // min_vruntime stays where it was when the sleeper left (2.6.25/26 move
    // it only when the leftmost changes). The sleeper's group re-enters
    // the top queue as a waking sleeper (enqueue_task_fair's `wakeup = 1`
    // for parents): max(its old vruntime, min_vruntime - 20 ms), its old
    // one. The test is then between the two groups' entities, whose
    // vruntimes differ by about the hog's 200 ms, far past wakeup_gran's
    // 10 ms: the sleeper's task preempts, and the group walk hands the
    // CPU to it.
    for v in [V25, V26] {
        let mut sim = Sim::new(grouped(v, 1), up(v), 0);
        let hog = sim.spawn(0, TaskParams::normal().uid(1000));
        let other = sim.spawn(0, TaskParams::normal().uid(1001));
        while sim.s.curr(0) != Some(other) {
            let e = sim.elapsed + MS;
            sim.run_to(e);
        }
        sim.s.set_current_state(other, cfs_core::CurrentState::Interruptible).unwrap();
        sim.schedule(0, Deschedule::Schedule);
        let (g_hog, g_other) = (sim.s.task(hog).unwrap().tg.unwrap(), sim.s.task(other).unwrap().tg.unwrap());
        let left_at = sim.s.task_groups()[g_other.0 as usize].se[0].vruntime;
        let e = sim.elapsed + 200 * MS;
        sim.run_to(e);
        let now = sim.now();
        sim.s.wake_up(now, other, 0, false).unwrap();
        let groups = sim.s.task_groups();
        assert_eq!(groups[g_other.0 as usize].se[0].vruntime, left_at, "{v}: placed at its old vruntime");
        let lead = groups[g_hog.0 as usize].se[0].vruntime.wrapping_sub(left_at) as i64;
        assert!(lead > 190 * MS as i64, "{v}: the hog's group leads by {lead}");
        assert!(sim.s.need_resched(0), "{v}: the other user's task preempts");
        sim.schedule(0, Deschedule::Preempt);
        assert_eq!(sim.s.curr(0), Some(other), "{v}");
    }
}

/// Six nice-0 tasks queued on CPU 0 of a dual core, none running yet
/// (T0-T2 of user 1, then T3-T5 of user 2), and CPU 1 balancing newly
/// idle. Returns how many of each user's tasks CPU 1 took.
fn pull_onto_idle(c: Config) -> (usize, usize) {
    let v = c.version;
    let mut c = c;
    // migration_cost 0: nothing is cache hot at time 0. (Nor is any task a
    // next buddy: CPU 0 runs its idle task, whose check_preempt_curr only
    // reschedules.)
    c.tunables.migration_cost = 0;
    let mut sim = Sim::new(c, dual_core(v), 0);
    sim.auto_resched = false;
    let u1: Vec<_> = (0..3).map(|_| sim.spawn(0, TaskParams::normal().uid(1))).collect();
    let u2: Vec<_> = (0..3).map(|_| sim.spawn(0, TaskParams::normal().uid(2))).collect();
    sim.schedule(1, Deschedule::Preempt);
    let on1 = |ids: &[cfs_core::TaskId]| ids.iter().filter(|&&t| sim.s.task(t).unwrap().cpu == 1).count();
    (on1(&u1), on1(&u2))
}

#[test]
fn the_balancer_moves_each_group_at_most_half_its_difference() {
    // rq->load counts tasks: 6144 against 0, so find_busiest_group asks
    // for min(6144 - 3072, 3072 - 0) = 3072 (max_pull = min(3072, 6144 -
    // 1024)). load_balance_fair takes the groups newest first, each limited
    // to half its own difference, 3072 / 2 = 1536, and to what is left:
    // user 2 moves two tasks (the second passes the skip test, 1024 / 2 <=
    // 512 left + LOAD_FUZZ 32), 2048; user 1 may then move min(3072 -
    // 2048, 1536) = 1024: one task. The same in 2.6.25 (each queue's tree,
    // T3 and T4, then T0) and 2.6.26 (each list newest first without its
    // last entry: T5 and T4, then T2).
    for v in [V25, V26] {
        assert_eq!(pull_onto_idle(grouped(v, 2)), (1, 2), "{v}");
    }
    // Without groups 2.6.26's one list offers T5, T4, T3, ... and the
    // 3072 go as three tasks of user 2.
    assert_eq!(pull_onto_idle(cfg(V26, 2)), (0, 3));
}

#[test]
fn profiles_without_a_port_refuse_group_scheduling() {
    for v in [KernelVersion::V2_6_32Rc1, KernelVersion::V2_6_32] {
        let mut c = Config::new(v, 2);
        c.group_sched = true;
        assert!(matches!(c.validate(), Err(ConfigError::GroupSched { version, .. }) if version == v), "{v}");
    }
    let mut c = Config::new(V26, 2).with_patch(Patch::MinVruntimeFix).unwrap();
    c.group_sched = true;
    assert!(matches!(c.validate(), Err(ConfigError::GroupSched { .. })));
    c.patches = cfs_core::Patches::none();
    let mut s = cfs_core::Scheduler::new(c, dual_core(V26)).unwrap();
    let e = s.set_patch(Patch::MinVruntimeFix, true).unwrap_err();
    assert!(e.to_string().contains("group scheduling"), "{e}");
}
