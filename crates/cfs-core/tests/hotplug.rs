//! CPU hotplug (`cfs_core::hotplug`): each rule of the kernel's
//! `_cpu_down` / `_cpu_up` path worked by hand on the builder's own
//! domains. Kernel lines: 2.6.26 bce7f793 kernel/sched.c
//! `move_task_off_dead_cpu` 5723-5768, `migrate_live_tasks` 5792-5806,
//! `__migrate_task` 5611-5644, `migration_call` 6067-6160,
//! `update_sched_domains` 7481-7520, `select_nohz_load_balancer`
//! 3613-3655; kernel/cpu.c `_cpu_down` 192-270.

use cfs_core::{
    Config, CpuMask, Deschedule, Event, HotplugError, KernelVersion, MigrateReason, SchedDomains, SchedError,
    Scheduler, TaskId, TaskParams, TaskState,
};
use cfs_topology::Host;
use cfs_topology::builder::BuildOptions;

const V: KernelVersion = KernelVersion::V2_6_26;
const MS: u64 = 1_000_000;
const T0: u64 = 1_000_000_000;

type S = Scheduler<Vec<(u64, Event)>>;

fn host(name: &str) -> Host {
    Host::preset(name).unwrap()
}

/// What `update_sched_domains` rebuilds over `online`.
fn domains_over(h: &Host, online: CpuMask) -> SchedDomains {
    h.build_domains_with(V, &BuildOptions { online: Some(online), ..BuildOptions::default() })
}

fn scheduler(h: &Host, nohz: bool) -> S {
    let mut c = Config::new(V, h.nr_cpus());
    c.check_invariants = true;
    c.nohz = nohz;
    Scheduler::with_observer(c, h.build_domains(V), Vec::new()).unwrap()
}

fn without(h: &Host, cpus: &[usize]) -> CpuMask {
    h.all_cpus().and_not(&CpuMask::from_cpus(cpus.iter().copied()))
}

fn vruntime(s: &S, t: TaskId) -> u64 {
    s.task(t).unwrap().se.vruntime
}

fn min_vruntime(s: &S, cpu: usize) -> u64 {
    s.rq(cpu).unwrap().cfs.min_vruntime
}

/// CPU 3 of a Q6600 goes down holding three tasks, one of each kind:
/// - A (allows every CPU) is asleep there: `move_task_off_dead_cpu` finds the
///   first online CPU of the node (the whole machine: one node) that it
///   allows, CPU 0, and `__migrate_task` only sets its CPU.
/// - B (allows {2,3}) is running: the stop thread preempts it (it stays
///   queued on CPU 3), then it goes to the first online CPU it allows, 2,
///   dequeued and enqueued with its vruntime moved by the two queues'
///   min_vruntime (`set_task_cpu`), and CPU 2, idle, is told to reschedule.
/// - C (allows only {3}) is queued: no online CPU is allowed, so its mask
///   becomes every CPU ("no longer affine to cpu3") and it goes to CPU 0.
///
/// Moves go in task-list order (A, then the other two by id), the domains
/// become the builder's over {0,1,2}, with fresh balancing state, and CPU
/// 3 is left empty.
#[test]
fn a_cpu_going_down_hands_each_task_to_the_first_online_cpu_it_allows() {
    let h = host("q6600");
    let mut s = scheduler(&h, false);
    let a = s.spawn(T0, 3, TaskParams::normal()).unwrap();
    let p = s.spawn(T0, 3, TaskParams::normal()).unwrap();
    let q = s.spawn(T0, 3, TaskParams::normal()).unwrap();
    assert_eq!(s.schedule(T0, 3, Deschedule::Preempt).unwrap().next, Some(a));
    // A runs 1 ms and sleeps; one of the other two runs: that is B.
    let b = s.schedule(T0 + MS, 3, Deschedule::Sleep).unwrap().next.unwrap();
    let c = if b == p { q } else { p };
    // Masks that keep CPU 3 move nothing now.
    s.set_affinity(T0 + MS, b, CpuMask::from_cpus([2, 3])).unwrap();
    s.set_affinity(T0 + MS, c, CpuMask::single(3)).unwrap();
    assert_eq!((s.task(b).unwrap().cpu, s.task(c).unwrap().cpu, s.curr(3)), (3, 3, Some(b)));
    let (vb, vc, m3) = (vruntime(&s, b), vruntime(&s, c), min_vruntime(&s, 3));
    let (va, m0, m2) = (vruntime(&s, a), min_vruntime(&s, 0), min_vruntime(&s, 2));

    let now = T0 + 2 * MS;
    let rebuilt = domains_over(&h, without(&h, &[3]));
    let down = s.cpu_down(now, 3, h.all_cpus(), rebuilt.clone()).unwrap();
    assert_eq!(down.stopped, Some(b));
    let by_id = |mut v: Vec<(TaskId, usize)>| {
        v.sort();
        v
    };
    assert_eq!(down.moved[0], (a, 0));
    assert_eq!(down.moved, by_id(vec![(a, 0), (b, 2), (c, 0)]), "task-list order");
    assert_eq!(down.affinity_broken, [c]);

    // put_prev_entity's update_curr: B ran 1 ms at nice 0 (vruntime + 1 ms),
    // and min_vruntime(3) = max_vruntime(old, min_vruntime(B, leftmost C)),
    // compared as the kernel does, by signed difference (every queue starts
    // 2^20 ns below 2^64, so these values wrap).
    let later = |x: u64, y: u64| if (y.wrapping_sub(x) as i64) > 0 { y } else { x };
    let earlier = |x: u64, y: u64| if (y.wrapping_sub(x) as i64) < 0 { y } else { x };
    let vb1 = vb.wrapping_add(MS);
    let m3_after = later(m3, earlier(vb1, vc));
    assert_eq!(min_vruntime(&s, 3), m3_after);
    // set_task_cpu: vruntime -= old min_vruntime - new min_vruntime.
    let moved = |v: u64, m_new: u64| v.wrapping_sub(m3_after.wrapping_sub(m_new));
    assert_eq!(vruntime(&s, b), moved(vb1, m2), "B keeps its lag on CPU 2's queue");
    assert_eq!(vruntime(&s, a), moved(va, m0));
    assert_eq!(vruntime(&s, c), moved(vc, m0));
    assert_ne!(m3_after, m0, "the queues differ, so the shift is not zero");

    assert_eq!(s.task(a).unwrap().state, TaskState::Sleeping);
    assert_eq!(s.task(b).unwrap().state, TaskState::Queued);
    assert_eq!(s.task(c).unwrap().allowed, h.all_cpus());
    assert_eq!(s.task(b).unwrap().allowed, CpuMask::from_cpus([2, 3]), "a mask is kept whole");
    let rq3 = s.rq(3).unwrap();
    assert_eq!((rq3.curr, rq3.nr_running, rq3.cfs.nr_running), (None, 0, 0));
    assert!(s.need_resched(0) && s.need_resched(2) && !s.need_resched(3));
    assert_eq!(s.online_cpus(), CpuMask::first_n(3));
    assert_eq!(s.domains(), &rebuilt);
    assert!(s.domain_state(3).is_empty());
    // HZ 250: 2 ms after T0 is jiffy (2 ms) / 4 ms = 0 since the first call.
    assert!(s.domain_state(0).iter().all(|d| d.last_balance == 0 && d.nr_balance_failed == 0));

    let moves: Vec<(TaskId, usize, usize)> = s
        .observer()
        .iter()
        .filter_map(|(_, e)| match *e {
            Event::Migrate { task, from, to, reason: MigrateReason::Hotplug } => Some((task, from, to)),
            _ => None,
        })
        .collect();
    let expect: Vec<(TaskId, usize, usize)> = down.moved.iter().map(|&(t, to)| (t, 3, to)).collect();
    assert_eq!(moves, expect);
    assert!(s.observer().iter().any(|(_, e)| *e == Event::AffinityBroken { task: c, cpu: 3 }));
    assert!(s.observer().iter().any(|(_, e)| *e == Event::Hotplug { cpu: 3, online: false }));
}

/// On a NUMA host the node comes first: Nehalem-EP's CPU 5 is on node 1
/// (CPUs 4-7, 12-15), so its task goes to CPU 4, the first online CPU of
/// that node, not to CPU 0. Told the node is the whole machine (a kernel
/// without CONFIG_NUMA), it goes to CPU 0.
#[test]
fn a_task_stays_on_its_node_when_it_can() {
    let h = host("nehalem-ep");
    for (node, to) in [(h.node_cpus(1), 4), (h.all_cpus(), 0)] {
        let mut s = scheduler(&h, false);
        let t = s.spawn(T0, 5, TaskParams::normal()).unwrap();
        let down = s.cpu_down(T0 + MS, 5, node, domains_over(&h, without(&h, &[5]))).unwrap();
        assert_eq!(down.moved, [(t, to)]);
        assert_eq!(s.task(t).unwrap().cpu, to);
    }
}

/// What the kernel refuses: the last online CPU (`-EBUSY`), a CPU already
/// down or already up (`-EINVAL`), and here also domains that are not the
/// new online map's. While down, every call naming the CPU is refused, and
/// a mask of offline CPUs only is refused like one of no CPU
/// (`set_cpus_allowed_ptr`: `!cpus_intersects(new_mask, cpu_online_map)`).
/// A refused call changes nothing.
#[test]
fn what_hotplug_refuses() {
    let h = host("q6600");
    let mut s = scheduler(&h, false);
    let t = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    let err = |r: Result<(), SchedError>| r.unwrap_err().to_string();
    let full = h.build_domains(V);
    assert_eq!(err(s.cpu_up(T0, 1, full.clone())), "CPU 1 is already online");
    assert_eq!(
        err(s.cpu_down(T0, 3, h.all_cpus(), full.clone()).map(|_| ())),
        "rebuilt domains: CPU 0: CPU domain span 0-3 is not within the online CPUs (0-2 online)"
    );
    let mut stale = domains_over(&h, without(&h, &[3]));
    stale.per_cpu[3] = full.per_cpu[3].clone();
    assert_eq!(
        err(s.cpu_down(T0, 3, h.all_cpus(), stale).map(|_| ())),
        "rebuilt domains: CPU 3 is offline but has a MC domain"
    );
    for cpu in [3, 2, 1] {
        s.cpu_down(T0, cpu, h.all_cpus(), domains_over(&h, CpuMask::first_n(cpu))).unwrap();
    }
    assert_eq!(
        s.cpu_down(T0, 0, h.all_cpus(), domains_over(&h, CpuMask::empty())).unwrap_err(),
        SchedError::Hotplug(HotplugError::LastOnline(0))
    );
    assert_eq!(
        err(s.cpu_down(T0, 3, h.all_cpus(), domains_over(&h, CpuMask::single(0))).map(|_| ())),
        "CPU 3 is already offline"
    );
    assert_eq!(err(s.cpu_up(T0, 9, domains_over(&h, CpuMask::single(0)))), "CPU 9 does not exist");
    // CPU 3 back up over domains that leave it out: refused.
    assert_eq!(
        err(s.cpu_up(T0, 3, domains_over(&h, CpuMask::from_cpus([0, 2])))),
        "rebuilt domains: CPU 0: CPU domain span 0,2 is not within the online CPUs (0,3 online)"
    );
    assert_eq!(s.online_cpus(), CpuMask::single(0));

    let off = "CPU 2 is offline";
    assert_eq!(err(s.spawn(T0, 2, TaskParams::normal()).map(|_| ())), off);
    assert_eq!(err(s.tick(T0, 2).map(|_| ())), off);
    assert_eq!(err(s.hrtick(T0, 2).map(|_| ())), off);
    assert_eq!(err(s.schedule(T0, 2, Deschedule::Preempt).map(|_| ())), off);
    assert_eq!(err(s.rebalance(T0, 2)), off);
    assert_eq!(err(s.nohz_stop_sched_tick(T0, 2).map(|_| ())), off);
    assert_eq!(err(s.wake_up(T0, t, 2, true).map(|_| ())), off);
    assert_eq!(err(s.wake_up_irq(T0, t, 2, false).map(|_| ())), off);
    assert_eq!(s.set_affinity(T0, t, CpuMask::from_cpus([2, 3])), Err(SchedError::EmptyAffinity));
    assert_eq!(s.task(t).unwrap().allowed, h.all_cpus());
}

/// The rebuilt domains a caller hands in are checked: a table for more
/// CPUs than the machine has, or a domain whose span leaves out its own
/// CPU, is refused; a shorter table leaves the CPUs past its end without
/// domains, as at boot.
#[test]
fn rebuilt_domains_are_checked() {
    let h = host("q6600");
    let mut s = scheduler(&h, false);
    let rest = without(&h, &[3]);
    let big = host("stoakley").build_domains(V);
    let err = |r: Result<cfs_core::CpuDown, SchedError>| r.unwrap_err().to_string();
    assert_eq!(err(s.cpu_down(T0, 3, h.all_cpus(), big)), "rebuilt domains: 8 CPUs, the machine has 4");
    let mut odd = domains_over(&h, rest);
    odd.per_cpu.swap(0, 2);
    assert_eq!(
        err(s.cpu_down(T0, 3, h.all_cpus(), odd)),
        "rebuilt domains: CPU 2: MC domain span 0-1 does not hold the CPU (0-2 online)"
    );
    let mut empty = domains_over(&h, rest);
    empty.per_cpu[1][0].groups = cfs_topology::GroupRing::new(vec![]);
    assert_eq!(
        err(s.cpu_down(T0, 3, h.all_cpus(), empty)),
        "rebuilt domains: CPU 1: MC domain span 0-1 has no groups (0-2 online)"
    );
    let mut short = domains_over(&h, rest);
    short.per_cpu.truncate(2);
    s.cpu_down(T0, 3, h.all_cpus(), short).unwrap();
    assert!(s.domains().of(2).is_empty() && s.domains().of(3).is_empty());
    assert_eq!(s.domains().nr_cpus(), 4);
}

/// A running task whose affinity changed waits, marked, for its next
/// preemption to be moved (the migration thread's request). CPU 3 going
/// down runs its own migration thread first, which was woken by the
/// request and runs before stop_machine's thread: x goes where its request
/// sends it, CPU 1, and `migrate_live_tasks` finds nothing left to move.
/// The request of a task running on CPU 0 still moves it when CPU 0
/// reschedules. The stop thread's preemption is one more context switch
/// on CPU 3.
#[test]
fn a_cpu_going_down_settles_only_its_own_tasks_moves() {
    let h = host("q6600");
    let mut s = scheduler(&h, false);
    let x = s.spawn(T0, 3, TaskParams::normal()).unwrap();
    let y = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    s.schedule(T0, 3, Deschedule::Preempt).unwrap();
    s.schedule(T0, 0, Deschedule::Preempt).unwrap();
    s.set_affinity(T0, x, CpuMask::single(1)).unwrap();
    s.set_affinity(T0, y, CpuMask::single(2)).unwrap();
    assert_eq!((s.task(x).unwrap().cpu, s.task(y).unwrap().cpu), (3, 0), "both still running where they were");
    let switches = s.rq(3).unwrap().nr_switches;
    let down = s.cpu_down(T0 + MS, 3, h.all_cpus(), domains_over(&h, without(&h, &[3]))).unwrap();
    assert!(down.moved.is_empty(), "{:?}", down.moved);
    assert_eq!(s.task(x).unwrap().cpu, 1);
    assert_eq!(s.rq(3).unwrap().nr_switches, switches + 1);
    s.schedule(T0 + MS, 0, Deschedule::Preempt).unwrap();
    assert_eq!(s.task(y).unwrap().cpu, 2, "y's request survived CPU 3's");
}

/// Back up, the CPU is idle with the domains rebuilt over all four CPUs
/// (the boot build), fresh balancing state (`last_balance` = the jiffy it
/// came up at: 40 ms at HZ 250 is jiffy 10), and a task whose mask kept
/// the CPU can be sent there again: a queued task moved by
/// `set_cpus_allowed_ptr` goes when its CPU's migration thread runs, in
/// that CPU's next schedule().
#[test]
fn a_cpu_back_up_takes_work_again() {
    let h = host("q6600");
    let mut s = scheduler(&h, false);
    let a = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    let b = s.spawn(T0, 3, TaskParams::normal()).unwrap();
    s.schedule(T0, 0, Deschedule::Preempt).unwrap();
    s.cpu_down(T0 + MS, 3, h.all_cpus(), domains_over(&h, without(&h, &[3]))).unwrap();
    assert_eq!(s.task(b).unwrap().cpu, 0);
    let up = T0 + 40 * MS;
    s.cpu_up(up, 3, h.build_domains(V)).unwrap();
    assert_eq!(s.online_cpus(), h.all_cpus());
    assert_eq!(s.domains(), &h.build_domains(V));
    assert_eq!(s.domain_state(3).len(), 2);
    assert!(s.domain_state(3).iter().all(|d| d.last_balance == 10));
    assert_eq!((s.curr(3), s.need_resched(3)), (None, false));
    // B is queued behind A on CPU 0; pinned to 3 it moves there now.
    assert_eq!(s.task(b).unwrap().state, TaskState::Queued);
    s.set_affinity(up, b, CpuMask::single(3)).unwrap();
    assert_eq!(s.task(b).unwrap().cpu, 0);
    assert!(s.need_resched(0));
    assert_eq!(s.schedule(up, 0, Deschedule::Preempt).unwrap().next, Some(a));
    assert_eq!(s.task(b).unwrap().cpu, 3);
    assert!(s.need_resched(3));
    assert_eq!(s.schedule(up, 3, Deschedule::Preempt).unwrap().next, Some(b));
    assert_eq!(s.curr(0), Some(a));
}

/// NO_HZ (2.6.26 `select_nohz_load_balancer`). CPU 3, idle while CPU 0 is
/// busy, is the idle load balancer (ILB); going down, its idle loop stops
/// the tick once more, and an offline leader gives the role up but joins
/// `nohz.cpu_mask`, where it stays. The "every online CPU is tickless"
/// test (mask weight against `num_online_cpus()`) then counts it: with CPU
/// 0 busy and CPUs 1 and 2 idle, CPU 1 takes the role (mask {1,3}: 2 of 3),
/// CPU 2 stops its tick (mask {1,2,3}: 3 of 3), and at CPU 1's next idle
/// tick the mask holds as many CPUs as are online, so instead of balancing
/// for the others (`run_rebalance_domains`) the owner reschedules itself to
/// stop ticking too, while CPU 0 has three tasks waiting.
#[test]
fn with_nohz_a_dead_cpu_still_counts_as_tickless() {
    let h = host("q6600");
    let mut s = scheduler(&h, true);
    for _ in 0..4 {
        s.spawn(T0, 0, TaskParams::normal()).unwrap();
    }
    s.schedule(T0, 0, Deschedule::Preempt).unwrap();
    assert!(!s.nohz_stop_sched_tick(T0, 3).unwrap(), "the first idle CPU keeps its tick as ILB owner");
    assert_eq!(s.nohz().load_balancer, Some(3));
    s.cpu_down(T0 + MS, 3, h.all_cpus(), domains_over(&h, without(&h, &[3]))).unwrap();
    assert_eq!(s.nohz().load_balancer, None);
    assert!(s.nohz().cpu_mask.contains(3));
    assert!(!s.tick_stopped(3));
    assert!(!s.nohz_stop_sched_tick(T0 + MS, 1).unwrap());
    assert_eq!(s.nohz().load_balancer, Some(1));
    assert!(s.nohz_stop_sched_tick(T0 + MS, 2).unwrap());
    let seen = s.observer().len();
    s.tick(T0 + 4 * MS, 1).unwrap();
    assert!(s.need_resched(1), "the owner stops ticking");
    assert!(!s.observer()[seen..].iter().any(|(_, e)| matches!(e, Event::Balance { .. })), "and balances for nobody");
    assert_eq!(s.rq(0).unwrap().nr_running, 4);
}

/// A task stranded by a race the kernel has too (found by `core_ops`): T,
/// running on CPU 1, is sent to CPU 3 (`set_cpus_allowed_ptr`: its move
/// waits for the migration thread), and CPU 3 goes down first. T is not on
/// CPU 3, so `migrate_live_tasks` leaves it alone, and when its move runs
/// `__migrate_task` refuses the offline destination: T stays on CPU 1 with
/// a mask of CPU 3 only. The invariants accept that, a child T forks
/// inherits the mask unchecked (`dup_task_struct`) and starts beside it,
/// and once CPU 3 is back up T can be sent there again.
#[test]
fn a_move_to_a_cpu_that_went_down_first_strands_its_task() {
    let (h, mut s, t) = running_on_1_with_cpu_3_down(CpuMask::single(3));
    assert_eq!(s.schedule(T0 + MS, 1, Deschedule::Preempt).unwrap().next, Some(t));
    assert_eq!((s.task(t).unwrap().cpu, s.task(t).unwrap().allowed), (1, CpuMask::single(3)));
    let child = s.fork(T0 + MS, t, None).unwrap();
    assert_eq!((child.cpu, s.task(child.child).unwrap().allowed), (1, CpuMask::single(3)));
    s.cpu_up(T0 + 2 * MS, 3, h.build_domains(V)).unwrap();
    s.set_affinity(T0 + 2 * MS, child.child, CpuMask::single(3)).unwrap();
    s.schedule(T0 + 2 * MS, 1, Deschedule::Preempt).unwrap();
    assert_eq!(s.task(child.child).unwrap().cpu, 3);
}

/// A Q6600 with one task T running on CPU 1, its mask set to `mask`, and
/// then CPU 3 taken down.
fn running_on_1_with_cpu_3_down(mask: CpuMask) -> (Host, S, TaskId) {
    let h = host("q6600");
    let mut s = scheduler(&h, false);
    let t = s.spawn(T0, 1, TaskParams::normal()).unwrap();
    s.schedule(T0, 1, Deschedule::Preempt).unwrap();
    s.set_affinity(T0, t, mask).unwrap();
    s.cpu_down(T0, 3, h.all_cpus(), domains_over(&h, without(&h, &[3]))).unwrap();
    (h, s, t)
}

/// A stranded parent's child stays beside it even once a CPU of its mask
/// is back: `sched_fork` sets the CPU `sched_balance_self` (2.6.26) or
/// `select_task_rq(p, SD_BALANCE_FORK)` (2.6.32) returns, and neither
/// tests the mask beyond skipping groups it excludes (2.6.26 sched.c
/// 2229-2231; 2.6.32 sched.c 2548-2550 and sched_fair.c 1260-1263). T is
/// stranded on CPU 1 with the mask {3} as above; CPU 3 comes back, and a
/// task starts on CPU 2. At the CPU level find_idlest_group sees the local
/// group {0,1} at load 0 (source_load takes the smaller of cpu_load[1],
/// which no tick has raised, and the weighted load) and {2,3} at 1024
/// (target_load takes the larger: the task on CPU 2), so it finds no group
/// to move to; at the MC level {0,1} holds no CPU of the mask. The child
/// stays on CPU 1, outside its mask, as its parent is. (Until 2026-12-04
/// the port then moved it to CPU 3; a second reading of the fork path
/// found it.)
#[test]
fn a_stranded_parents_child_stays_beside_it_when_its_cpus_come_back() {
    for v in [KernelVersion::V2_6_26, KernelVersion::V2_6_32Rc1, KernelVersion::V2_6_32] {
        let h = host("q6600");
        let mut c = Config::new(v, h.nr_cpus());
        c.check_invariants = true;
        let mut s: S = Scheduler::with_observer(c, h.build_domains(v), Vec::new()).unwrap();
        let t = s.spawn(T0, 1, TaskParams::normal()).unwrap();
        s.schedule(T0, 1, Deschedule::Preempt).unwrap();
        s.set_affinity(T0, t, CpuMask::single(3)).unwrap();
        let down = h.build_domains_with(v, &BuildOptions { online: Some(without(&h, &[3])), ..Default::default() });
        s.cpu_down(T0, 3, h.all_cpus(), down).unwrap();
        s.schedule(T0 + MS, 1, Deschedule::Preempt).unwrap();
        s.cpu_up(T0 + 2 * MS, 3, h.build_domains(v)).unwrap();
        s.spawn(T0 + 3 * MS, 2, TaskParams::normal()).unwrap();
        s.schedule(T0 + 3 * MS, 2, Deschedule::Preempt).unwrap();
        assert_eq!(s.task(t).unwrap().cpu, 1, "{v:?}");
        let child = s.fork(T0 + 4 * MS, t, None).unwrap();
        assert_eq!(child.cpu, 1, "{v:?}: the child starts beside its stranded parent");
        // A mask given with the fork is honoured at once: the caller's
        // fork-then-sched_setaffinity.
        let mut p = TaskParams::normal();
        p.allowed = CpuMask::single(3);
        assert_eq!(s.fork(T0 + 4 * MS, t, Some(p)).unwrap().cpu, 3, "{v:?}");
    }
}

/// A fork that gives its child a mask (the child's own sched_setaffinity
/// before it first runs) while every CPU of that mask is down: the kernel's
/// set_cpus_allowed_ptr refuses it with -EINVAL (bce7f793 sched.c:5569-5570,
/// `!cpus_intersects(*new_mask, cpu_online_map)`), and the child keeps the
/// mask dup_task_struct copied from its parent, starting beside it, with
/// the nice level it asked for. A mask naming no CPU of the machine is the
/// caller's error (a deliberate deviation: the kernel's answer is -EINVAL
/// there too, but such a mask is a mistake to report). Hogs forked with a
/// pin to a CPU already taken down failed the whole run until the
/// thirteenth session; the heuristics fuzzer found it.
#[test]
fn a_fork_into_cpus_that_are_all_down_keeps_the_parents_mask() {
    let (_, mut s, t) = running_on_1_with_cpu_3_down(CpuMask::from_cpus([1, 3]));
    let mut p = TaskParams::normal().nice(5);
    p.allowed = CpuMask::single(3);
    let child = s.fork(T0 + MS, t, Some(p)).unwrap();
    let c = s.task(child.child).unwrap();
    assert_eq!((child.cpu, c.allowed, c.nice), (1, CpuMask::from_cpus([1, 3]), 5));
    p.allowed = CpuMask::single(9);
    assert_eq!(s.fork(T0 + MS, t, Some(p)).map(|_| ()), Err(SchedError::EmptyAffinity));
}

/// `__migrate_task` takes `double_rq_lock(rq_src, rq_dest)`, which ends in
/// `update_rq_clock` of both (bce7f793 sched.c:5622, 2621-2622), before the
/// moved task is enqueued. A runs on CPU 0 from T0 and B on CPU 1; CPU 1 goes
/// down 8 ms later and B moves to CPU 0: the enqueue's update_curr charges A
/// the 8 ms, and B's wait starts at T0 + 8 ms. In 2.6.25 update_rq_clock
/// refreshes only the running CPU's own queue (4b119e21 sched.c:543-547) and
/// the CPU_DEAD notifier runs on neither: CPU 0's clock stays at T0, so A is
/// charged nothing yet and B's wait starts at T0.
#[test]
fn a_move_off_a_dead_cpu_brings_both_clocks_to_now() {
    for (v, charged) in [(V, 8 * MS), (KernelVersion::V2_6_25, 0)] {
        let h = host("q6600");
        let mut c = Config::new(v, h.nr_cpus());
        c.check_invariants = true;
        let mut s = Scheduler::new(c, h.build_domains(v)).unwrap();
        let a = s.spawn(T0, 0, TaskParams::normal()).unwrap();
        assert_eq!(s.schedule(T0, 0, Deschedule::Preempt).unwrap().next, Some(a));
        let b = s.spawn(T0, 1, TaskParams::normal()).unwrap();
        assert_eq!(s.schedule(T0, 1, Deschedule::Preempt).unwrap().next, Some(b));
        let online = without(&h, &[1]);
        let rebuilt = h.build_domains_with(v, &BuildOptions { online: Some(online), ..BuildOptions::default() });
        let down = s.cpu_down(T0 + 8 * MS, 1, h.all_cpus(), rebuilt).unwrap();
        assert_eq!(down.moved, vec![(b, 0)], "{v}");
        assert_eq!(s.task(a).unwrap().se.sum_exec_runtime, charged, "{v}");
        assert_eq!(s.task(b).unwrap().se.stats.wait_start, T0 + charged, "{v}");
    }
}

/// `select_nohz_load_balancer(1)` from the dying CPU's idle loop (bce7f793
/// sched.c:3617-3641) gives up the ILB role only if it holds it; otherwise
/// it runs on as for any CPU, and with the role vacant and not every online
/// CPU in the mask it takes it. All four CPUs of a Q6600 run a task (no ILB
/// owner); CPU 3 goes down and owns the role, dead. CPU 1 then goes idle:
/// the role is held, so CPU 1 stops its tick without taking it, and nobody
/// balances for the tickless CPUs until CPU 3 comes back.
#[test]
fn with_nohz_a_dying_cpu_takes_a_vacant_ilb_role() {
    let h = host("q6600");
    let mut s = scheduler(&h, true);
    let tasks: Vec<TaskId> = (0..4).map(|c| s.spawn(T0, c, TaskParams::normal()).unwrap()).collect();
    for (c, &t) in tasks.iter().enumerate() {
        assert_eq!(s.schedule(T0, c, Deschedule::Preempt).unwrap().next, Some(t));
    }
    assert_eq!(s.nohz().load_balancer, None);
    s.cpu_down(T0 + MS, 3, h.all_cpus(), domains_over(&h, without(&h, &[3]))).unwrap();
    assert_eq!(s.nohz().load_balancer, Some(3));
    assert_eq!(s.schedule(T0 + 2 * MS, 1, Deschedule::Sleep).unwrap().next, None);
    assert!(s.nohz_stop_sched_tick(T0 + 2 * MS, 1).unwrap(), "CPU 1 stops its tick");
    assert_eq!(s.nohz().load_balancer, Some(3));
}

/// 2.6.32 keeps a dying CPU out of the NO_HZ bookkeeping:
/// select_nohz_load_balancer(1) on a CPU that is not `cpu_active` gives up
/// the ILB role if it holds it and returns, joining neither the mask nor
/// the role (22763c5c sched.c:4662-4679, 17d857be :4629-4646), where 2.6.26
/// adds it to the mask and lets it take a vacant role (above). The scene of
/// `with_nohz_a_dying_cpu_takes_a_vacant_ilb_role` under 2.6.32, with CPUs
/// 0-2 busy and CPU 3 idle but ticking, the role vacant: once CPU 3 is down
/// the role is still vacant and the mask empty, so the first CPU to go idle
/// (CPU 2) takes the role and keeps its tick. And the scene of `with_nohz_a_dead_cpu_still_counts_as_tickless`:
/// CPU 3, the owner, goes down; the mask is left without it, so with CPUs
/// 1 and 2 tickless the mask holds 2 of the 3 online CPUs, and the owner
/// (CPU 1) balances for CPU 2 at its idle tick instead of standing down.
#[test]
fn on_2_6_32_a_dying_cpu_stays_out_of_the_nohz_mask_and_the_ilb_role() {
    for v in [KernelVersion::V2_6_32Rc1, KernelVersion::V2_6_32] {
        let h = host("q6600");
        let sched = |nohz: bool| {
            let mut c = Config::new(v, h.nr_cpus());
            c.check_invariants = true;
            c.nohz = nohz;
            Scheduler::with_observer(c, h.build_domains(v), Vec::new()).unwrap()
        };
        let over = |online: CpuMask| {
            h.build_domains_with(v, &BuildOptions { online: Some(online), ..BuildOptions::default() })
        };
        // CPUs 0-2 busy, CPU 3 idle but ticking: the role vacant.
        let mut s: S = sched(true);
        let tasks: Vec<TaskId> = (0..3).map(|c| s.spawn(T0, c, TaskParams::normal()).unwrap()).collect();
        for (c, &t) in tasks.iter().enumerate() {
            assert_eq!(s.schedule(T0, c, Deschedule::Preempt).unwrap().next, Some(t));
        }
        s.cpu_down(T0 + MS, 3, h.all_cpus(), over(without(&h, &[3]))).unwrap();
        assert_eq!((s.nohz().load_balancer, s.nohz().cpu_mask), (None, CpuMask::empty()), "{v}");
        assert_eq!(s.schedule(T0 + 2 * MS, 2, Deschedule::Sleep).unwrap().next, None);
        assert!(!s.nohz_stop_sched_tick(T0 + 2 * MS, 2).unwrap(), "{v}: CPU 2 keeps its tick as the owner");
        assert_eq!(s.nohz().load_balancer, Some(2), "{v}");
        // CPU 2 owns the role and CPU 3, idle but ticking, goes down: the
        // mask stays without CPU 3, so once CPU 1 is tickless it holds 2 of
        // the 3 online CPUs, and the owner balances for CPU 1 at its idle
        // tick (2.6.26 would count the dead CPU: 3 of 3, and stand down).
        let mut s: S = sched(true);
        s.spawn(T0, 0, TaskParams::normal()).unwrap();
        let sleeper = s.spawn(T0, 3, TaskParams::normal()).unwrap();
        s.schedule(T0, 0, Deschedule::Preempt).unwrap();
        assert_eq!(s.schedule(T0, 3, Deschedule::Preempt).unwrap().next, Some(sleeper));
        assert_eq!(s.schedule(T0, 3, Deschedule::Sleep).unwrap().next, None);
        assert!(!s.nohz_stop_sched_tick(T0, 2).unwrap());
        assert_eq!(s.nohz().load_balancer, Some(2), "{v}");
        s.cpu_down(T0 + MS, 3, h.all_cpus(), over(without(&h, &[3]))).unwrap();
        assert_eq!(s.nohz().load_balancer, Some(2), "{v}");
        assert!(!s.nohz().cpu_mask.contains(3), "{v}");
        assert!(s.nohz_stop_sched_tick(T0 + MS, 1).unwrap(), "{v}");
        assert_eq!(s.nohz().cpu_mask.weight(), 2, "{v}");
        let seen = s.observer().len();
        s.tick(T0 + 4 * MS, 2).unwrap();
        assert!(!s.need_resched(2) || s.rq(2).unwrap().nr_running > 0, "{v}: the owner keeps ticking");
        assert!(s.observer()[seen..].iter().any(|(_, e)| matches!(e, Event::Balance { .. })), "{v}: and balances");
    }
}

/// `arch_reinit_sched_domains` (bce7f793 sched.c:7397-7410): the domains
/// given replace the old ones over the same online CPUs, with fresh
/// balancing state (`last_balance` = the jiffies of the call), and a
/// `sched_domain` sysctl written before is gone with the old domains.
/// Domains that do not fit the machine as it is are refused and nothing
/// changes: eight CPUs' worth on a four-CPU box, or a domain for a CPU
/// that is down.
#[test]
fn reinit_attaches_fresh_domains_over_the_cpus_up_and_checks_them() {
    use cfs_topology::{DomainLevel, SdFlags};
    let h = host("q6600");
    let mut s = scheduler(&h, false);
    s.spawn(T0, 0, TaskParams::normal()).unwrap();
    assert_eq!(s.set_domain_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::WAKE_AFFINE).unwrap(), 4);
    assert!(!s.domains().of(0)[0].flags.contains(SdFlags::WAKE_AFFINE));
    // HZ ticks of the config: ten of them after the first call (the epoch).
    let tick = s.config().tick_ns();
    s.arch_reinit_sched_domains(T0 + 10 * tick, h.build_domains(V)).unwrap();
    assert_eq!(*s.domains(), h.build_domains(V), "the sysctl write is lost with the old domains");
    for cpu in 0..4 {
        assert!(s.domain_state(cpu).iter().all(|d| d.last_balance == 10 && d.nr_balance_failed == 0));
    }
    let before = s.domains().clone();
    let err = s.arch_reinit_sched_domains(T0 + 11 * tick, host("stoakley").build_domains(V)).unwrap_err();
    assert_eq!(err, SchedError::Hotplug(HotplugError::Domains("8 CPUs, the machine has 4".into())));
    s.cpu_down(T0 + 12 * tick, 3, h.all_cpus(), domains_over(&h, without(&h, &[3]))).unwrap();
    let err = s.arch_reinit_sched_domains(T0 + 13 * tick, h.build_domains(V)).unwrap_err();
    // CPU 0's chain is checked first: its MC domain is its die {0,1}, its
    // CPU-level domain the package 0-3, which holds the CPU that is down.
    assert_eq!(
        err,
        SchedError::Hotplug(HotplugError::Domains(
            "CPU 0: CPU domain span 0-3 is not within the online CPUs (0-2 online)".into()
        ))
    );
    assert_ne!(*s.domains(), before, "the hotplug rebuild happened");
    assert_eq!(*s.domains(), domains_over(&h, without(&h, &[3])), "the refused reinit changed nothing");
}

/// Switching 799e2205ec6 (prefer-local-to-node) on in a running 2.6.32-rc1
/// on a one-node Stoakley built with CONFIG_NUMA: `set_patch` can only
/// write its edits into the MC and CPU levels present (PREFER_LOCAL off
/// both), while the patched kernel keeps a NODE level carrying the flag
/// (the cfs-topology builder's `an_edited_initialiser_can_keep_a_level...`
/// test). Reinitialising with the domains built under the patches now in
/// force gives the patched kernel's three levels; switched off again and
/// reinitialised, the unpatched two, with PREFER_LOCAL back at MC and CPU.
#[test]
fn a_patch_switched_at_run_time_gets_its_levels_at_the_next_reinit() {
    use cfs_core::Patch;
    use cfs_topology::builder::NumaConfig;
    use cfs_topology::{DomainLevel as L, SdFlags};
    let v = KernelVersion::V2_6_32Rc1;
    let h = host("stoakley");
    let build = |s: &S| {
        let init_flags = s.config().patches.init_flag_edits();
        h.build_domains_with(v, &BuildOptions { numa: NumaConfig::On, init_flags, ..BuildOptions::default() })
    };
    let levels = |s: &S| {
        s.domains().of(0).iter().map(|d| (d.level, d.flags.contains(SdFlags::PREFER_LOCAL))).collect::<Vec<_>>()
    };
    let mut c = Config::new(v, 8);
    c.check_invariants = true;
    let boot = h.build_domains_with(v, &BuildOptions { numa: NumaConfig::On, ..BuildOptions::default() });
    let mut s: S = Scheduler::with_observer(c, boot, Vec::new()).unwrap();
    assert_eq!(levels(&s), [(L::Mc, true), (L::Cpu, true)]);
    s.set_patch(Patch::PreferLocalToNode, true).unwrap();
    assert_eq!(levels(&s), [(L::Mc, false), (L::Cpu, false)], "written into the levels present only");
    let d = build(&s);
    s.arch_reinit_sched_domains(T0, d).unwrap();
    assert_eq!(levels(&s), [(L::Mc, false), (L::Cpu, false), (L::Node, true)]);
    s.set_patch(Patch::PreferLocalToNode, false).unwrap();
    let d = build(&s);
    s.arch_reinit_sched_domains(T0 + MS, d).unwrap();
    assert_eq!(levels(&s), [(L::Mc, true), (L::Cpu, true)]);
}

/// CONFIG_CPUSETS with the top cpuset alone (`Config::cpusets`), against
/// the same calls without it, on a Q6600 under every profile (the code is
/// the same in each: bce7f793 sched.c:5020-5021 and 5744, 22763c5c
/// :6533-6534 and 7245, 4b119e21 and e490517a alike):
/// - With CPU 3 down, `sched_setaffinity(0-3)` keeps {0,1,2}: the mask is
///   ANDed with `cpuset_cpus_allowed`, the top cpuset's online CPUs.
///   Without cpusets that is every possible CPU, and the mask stays 0-3.
/// - A task that allows only CPU 2 when CPU 2 goes down falls back to
///   `cpuset_cpus_allowed_locked`: the CPUs still online, {0,1}, not
///   every CPU.
/// - A mask given at spawn is clipped alike; a task given none keeps every
///   CPU, as one that inherits init's mask does.
/// - When CPUs 2 and 3 come back, neither task's mask grows: the kernel
///   updates the top cpuset's CPUs, not the masks of the tasks in it, so
///   with cpusets both stay off CPUs 2-3, and without them both may use
///   every CPU.
#[test]
fn with_cpusets_a_mask_keeps_only_the_cpus_online_when_it_is_set() {
    let h = host("q6600");
    for v in KernelVersion::ALL {
        for cpusets in [false, true] {
            let mut c = Config::new(v, 4);
            (c.check_invariants, c.cpusets) = (true, cpusets);
            let d = |online: CpuMask| {
                h.build_domains_with(v, &BuildOptions { online: Some(online), ..BuildOptions::default() })
            };
            let mut s = Scheduler::new(c, h.build_domains(v)).unwrap();
            let a = s.spawn(T0, 0, TaskParams::normal()).unwrap();
            let b = s.spawn(T0, 2, TaskParams::normal().allowed(CpuMask::single(2))).unwrap();
            s.cpu_down(T0 + MS, 3, h.all_cpus(), d(without(&h, &[3]))).unwrap();
            s.set_affinity(T0 + 2 * MS, a, CpuMask::first_n(4)).unwrap();
            let set = if cpusets { CpuMask::first_n(3) } else { CpuMask::first_n(4) };
            assert_eq!(s.task(a).unwrap().allowed, set, "{v} cpusets {cpusets}: a mask set with CPU 3 down");
            // A task given its mask at spawn is clipped the same way; one
            // given none made no sched_setaffinity call and keeps every CPU.
            let named = s.spawn(T0 + 2 * MS, 0, TaskParams::normal().allowed(CpuMask::first_n(4))).unwrap();
            assert_eq!(s.task(named).unwrap().allowed, set, "{v} cpusets {cpusets}: a mask given at spawn");
            let unnamed = s.spawn(T0 + 2 * MS, 0, TaskParams::normal().nice(5)).unwrap();
            assert_eq!(s.task(unnamed).unwrap().allowed, CpuMask::first_n(4), "{v}: no mask given");
            let down = s.cpu_down(T0 + 3 * MS, 2, h.all_cpus(), d(without(&h, &[2, 3]))).unwrap();
            assert_eq!(down.affinity_broken, [b], "{v}");
            let fallback = if cpusets { CpuMask::first_n(2) } else { CpuMask::first_n(4) };
            assert_eq!(s.task(b).unwrap().allowed, fallback, "{v} cpusets {cpusets}: the fallback mask");
            assert_eq!(s.task(b).unwrap().cpu, 0, "{v}: the first CPU of the fallback");
            s.cpu_up(T0 + 4 * MS, 2, d(without(&h, &[3]))).unwrap();
            s.cpu_up(T0 + 5 * MS, 3, d(h.all_cpus())).unwrap();
            assert_eq!(s.task(a).unwrap().allowed, set, "{v}: masks do not follow the CPUs back");
            assert_eq!(s.task(b).unwrap().allowed, fallback, "{v}");
        }
    }
}
