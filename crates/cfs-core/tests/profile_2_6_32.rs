//! Scenario tests pinning the 2.6.32 wakeup and fork placement branches
//! (affine vs balance-on-wake vs prefer-local) on the Nehalem-EP domains
//! cfs-topology builds (SIBLING {n, n+8}, MC = socket = 8 threads with
//! SD_PREFER_LOCAL in rc1, NODE = all 16). Derivations follow
//! select_task_rq_fair / wake_affine / find_idlest_group of
//! kernel/sched_fair.c at 17d857be (rc1) and 22763c5c (2.6.32).

use cfs_core::{Config, Deschedule, Event, KernelVersion, Observer, Scheduler, TaskId, TaskParams, WakeReason};
use cfs_topology::{DomainLevel, Host, SdFlags};
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Clone, Default)]
struct Log(Rc<RefCell<Vec<Event>>>);

impl Observer for Log {
    fn event(&mut self, _now: u64, ev: &Event) {
        self.0.borrow_mut().push(*ev);
    }
}

impl Log {
    fn take(&self) -> Vec<Event> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

fn nehalem(version: KernelVersion, clear_prefer_local: bool) -> (Scheduler<Log>, Log) {
    let host = Host::preset("nehalem-ep").expect("preset");
    let mut doms = host.build_domains(version);
    if clear_prefer_local {
        doms.override_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::PREFER_LOCAL);
        doms.override_flags(DomainLevel::Cpu, SdFlags::empty(), SdFlags::PREFER_LOCAL);
    }
    let mut cfg = Config::new(version, host.nr_cpus());
    cfg.check_invariants = true;
    let log = Log::default();
    (Scheduler::with_observer(cfg, doms, log.clone()).expect("config"), log)
}

/// W runs on CPU 0; P ran on CPU 4 (the other socket) and went to sleep.
fn waker_and_sleeper(s: &mut Scheduler<Log>) -> (TaskId, TaskId) {
    let w = s.spawn(0, 0, TaskParams::normal()).unwrap();
    s.schedule(0, 0, Deschedule::Preempt).unwrap();
    let p = s.spawn(0, 4, TaskParams::normal()).unwrap();
    s.schedule(0, 4, Deschedule::Preempt).unwrap();
    s.schedule(100_000, 4, Deschedule::Sleep).unwrap();
    (w, p)
}

fn scans(ev: &[Event]) -> u32 {
    ev.iter().map(|e| if let Event::Scan { cpus, .. } = e { *cpus } else { 0 }).sum()
}

fn wake_reason(ev: &[Event]) -> Option<WakeReason> {
    ev.iter().find_map(|e| if let Event::Wake { reason, .. } = e { Some(*reason) } else { None })
}

#[test]
fn rc1_sync_wakeup_is_affine_and_pays_the_prefer_local_walk() {
    // Walk of CPU 0's domains: SIBLING {0,8} has no PREFER_LOCAL and does not
    // span prev (4). MC {0-3,8-11} has PREFER_LOCAL: it sums power (8 x 589 =
    // 4712, capacity DIV_ROUND_CLOSEST(4712, 1024) = 5) and nr_running (1)
    // over all 8 CPUs -> want_sd = 0. NODE spans prev -> affine_sd = NODE.
    // wake_affine: idx 0, load(prev 4) = 0, this_load = 1024 - 1024 (sync,
    // the waker's weight) = 0 -> balanced by the "this_load == 0" clause ->
    // affine: the wakee runs on CPU 0.
    let (mut s, log) = nehalem(KernelVersion::V2_6_32Rc1, false);
    let (_w, p) = waker_and_sleeper(&mut s);
    log.take();
    let out = s.wake_up(200_000, p, 0, true).unwrap();
    let ev = log.take();
    assert_eq!(out.cpu, 0);
    assert_eq!(wake_reason(&ev), Some(WakeReason::AffineSync));
    // 8 for the MC span walked by SD_PREFER_LOCAL, 2 for wake_affine's loads.
    assert_eq!(scans(&ev), 8 + 2, "the MC span walked by SD_PREFER_LOCAL");
}

#[test]
fn clearing_prefer_local_removes_the_walk_but_not_the_decision() {
    let (mut s, log) = nehalem(KernelVersion::V2_6_32Rc1, true);
    let (_w, p) = waker_and_sleeper(&mut s);
    log.take();
    let out = s.wake_up(200_000, p, 0, true).unwrap();
    let ev = log.take();
    assert_eq!(out.cpu, 0);
    // Only wake_affine's two load reads remain.
    assert_eq!(scans(&ev), 2);
    // 2.6.32 final has no PREFER_LOCAL anywhere: same decision, no walk.
    let (mut s, log) = nehalem(KernelVersion::V2_6_32, false);
    let (_w, p) = waker_and_sleeper(&mut s);
    log.take();
    assert_eq!(s.wake_up(200_000, p, 0, true).unwrap().cpu, 0);
    assert_eq!(scans(&log.take()), 2);
}

/// patches.md §6 (799e2205ec6): MC and CPU lose SD_PREFER_LOCAL, NODE gains
/// it. The same wakeup as above then passes SIBLING and MC without a walk and
/// sums power and nr_running over NODE's 16 threads (capacity
/// DIV_ROUND_CLOSEST(16 x 589, 1024) = 9 > nr_running 1: want_sd = 0), where
/// it also finds affine_sd; wake_affine's two loads follow. 16 + 2 runqueues
/// per wakeup against rc1's 8 + 2, and 2 with no PREFER_LOCAL at all: the
/// "order of magnitude increase in select_task_rq_fair() overhead" for which
/// 6b9de613ae9 took the NODE half back out. The decision is the same.
#[test]
fn prefer_local_to_node_walks_the_whole_machine() {
    use cfs_core::Patch::PreferLocalToNode;
    // rc1 built with or without the patch, then switched as `ops` says; then the wakeup.
    let wakeup = |built_with: bool, ops: &[bool]| {
        let host = Host::preset("nehalem-ep").expect("preset");
        let v = KernelVersion::V2_6_32Rc1;
        let mut cfg = Config::new(v, host.nr_cpus());
        if built_with {
            cfg = cfg.with_patch(PreferLocalToNode).unwrap();
        }
        let log = Log::default();
        let mut s = Scheduler::with_observer(cfg, host.build_domains(v), log.clone()).unwrap();
        for &on in ops {
            s.set_patch(PreferLocalToNode, on).unwrap();
        }
        let (_w, p) = waker_and_sleeper(&mut s);
        log.take();
        let out = s.wake_up(200_000, p, 0, true).unwrap();
        let ev = log.take();
        (out.cpu, wake_reason(&ev), scans(&ev))
    };
    let affine = Some(WakeReason::AffineSync);
    assert_eq!(wakeup(true, &[]), (0, affine, 16 + 2));
    // Switched at run time: on writes the flags, off writes rc1's back (the MC walk
    // again); a switch to the state it is already in writes nothing.
    assert_eq!(wakeup(false, &[true]), (0, affine, 16 + 2));
    assert_eq!(wakeup(true, &[false]), (0, affine, 8 + 2));
    assert_eq!(wakeup(false, &[false, false]), (0, affine, 8 + 2));
    assert_eq!(wakeup(true, &[true, false, true]), (0, affine, 16 + 2));
    // 2.6.32 final refuses it (it has 799e2205ec6 and 6b9de613ae9).
    let e = Config::new(KernelVersion::V2_6_32, 16).with_patch(PreferLocalToNode).unwrap_err();
    assert!(e.to_string().contains("6b9de613ae9"), "{e}");
}

#[test]
fn non_sync_wakeup_onto_a_busy_cpu_stays_on_prev() {
    // Not sync: this_load stays 1024. balanced: 100 * (1024 + 1024) = 204800
    // <= 112 * (0 + 1024) = 114688 is false; this_load (1024) <= load (0) is
    // false -> not affine. SD_BALANCE_WAKE is off everywhere -> sd = NULL ->
    // new_cpu = prev = 4.
    let (mut s, log) = nehalem(KernelVersion::V2_6_32Rc1, false);
    let (_w, p) = waker_and_sleeper(&mut s);
    log.take();
    let out = s.wake_up(200_000, p, 0, false).unwrap();
    assert_eq!(out.cpu, 4);
    assert_eq!(wake_reason(&log.take()), Some(WakeReason::Previous));
}

#[test]
fn balance_on_wake_when_a_user_sets_sd_balance_wake() {
    // With SD_BALANCE_WAKE set on NODE and PREFER_LOCAL cleared, a non-affine
    // wakeup descends find_idlest_group/cpu from NODE: local socket 0 has
    // W (source_load sum 1024 -> 1024*1024/4712 = 222), socket 1 is empty
    // (0): 100*222 >= 112*0 -> socket 1; find_idlest_cpu -> CPU 4 (first
    // with load 0). Then CPU 4's MC (weight 8 < 16) has no BALANCE_WAKE,
    // so the descent ends: the task goes to CPU 4.
    let host = Host::preset("nehalem-ep").unwrap();
    let v = KernelVersion::V2_6_32Rc1;
    let mut doms = host.build_domains(v);
    doms.override_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::PREFER_LOCAL);
    doms.override_flags(DomainLevel::Node, SdFlags::BALANCE_WAKE, SdFlags::WAKE_AFFINE);
    let log = Log::default();
    let mut s = Scheduler::with_observer(Config::new(v, 16), doms, log.clone()).unwrap();
    let (_w, p) = waker_and_sleeper(&mut s);
    log.take();
    let out = s.wake_up(200_000, p, 0, false).unwrap();
    assert_eq!(out.cpu, 4);
    let ev = log.take();
    assert_eq!(wake_reason(&ev), Some(WakeReason::Balance));
    assert!(scans(&ev) >= 16, "find_idlest_group visited the NODE span");
}

#[test]
fn fork_placement_rc1_stays_local_final_spreads() {
    // rc1 fork from CPU 0 (SD_BALANCE_FORK): SIBLING has the flag -> sd =
    // SIBLING; MC has PREFER_LOCAL and 1 task < capacity 5 -> want_sd = 0 ->
    // stop. find_idlest_group(SIBLING): {0}: 1024*1024/589 = 1780, {8}: 0 ->
    // {8}; find_idlest_cpu -> 8. The child stays on the HT sibling.
    let (mut s, _log) = nehalem(KernelVersion::V2_6_32Rc1, false);
    let w = s.spawn(0, 0, TaskParams::normal()).unwrap();
    s.schedule(0, 0, Deschedule::Preempt).unwrap();
    assert_eq!(s.fork(1_000, w, None).unwrap().cpu, 8);
    // 2.6.32 final: sd = NODE (highest with BALANCE_FORK). Socket 0: 1024 *
    // 1024 / 4712 = 222 vs socket 1: 0 -> socket 1, CPU 4. Re-descend from
    // CPU 4 below weight 16: MC {4-7,12-15}: all groups load 0, so
    // 100*0 < 112*0 is false and the first other group {5,13} is "idlest"
    // -> CPU 5; SIBLING {5,13}: {13} idlest the same way -> CPU 13.
    let (mut s, _log) = nehalem(KernelVersion::V2_6_32, false);
    let w = s.spawn(0, 0, TaskParams::normal()).unwrap();
    s.schedule(0, 0, Deschedule::Preempt).unwrap();
    assert_eq!(s.fork(1_000, w, None).unwrap().cpu, 13);
}

/// The runqueues a fork's balancing descent reads: find_idlest_group
/// skips, unread, every group without a CPU the child allows (sched_fair.c
/// 1260-1263 at rc1, 1286-1289 at 2.6.32; 2.6.26 sched.c:1933-1935). On
/// the 2.6.32 Nehalem a parent on CPU 0 pinned to CPUs 0-3 forks:
/// - NODE: of the two sockets only socket 0 holds an allowed CPU: 8
///   threads read, not 16, and no other group, so on down;
/// - MC (socket 0's cores {0,8} {1,9} {2,10} {3,11}, each with an allowed
///   CPU): 8 read; {1,9} is idle, so the child goes to CPU 1 and the
///   descent starts again from there below MC's weight;
/// - SIBLING {1,9}: only {1} is allowed: 1 read, not 2.
///
/// Unpinned, the same fork reads 16, 8 and 2 (the walk of
/// `fork_placement_rc1_stays_local_final_spreads`, to CPU 13). Until
/// 2026-12-04 every level was charged its whole span.
#[test]
fn a_pinned_fork_reads_only_the_groups_it_may_use() {
    let reads = |allowed: cfs_core::CpuMask| {
        let (mut s, log) = nehalem(KernelVersion::V2_6_32, false);
        let mut params = TaskParams::normal();
        params.allowed = allowed;
        let w = s.spawn(0, 0, params).unwrap();
        s.schedule(0, 0, Deschedule::Preempt).unwrap();
        log.take();
        let cpu = s.fork(1_000, w, None).unwrap().cpu;
        let per_level: Vec<u32> = log
            .take()
            .iter()
            .filter_map(|e| if let Event::Scan { cpus, .. } = e { Some(*cpus) } else { None })
            .collect();
        (cpu, per_level)
    };
    assert_eq!(reads(cfs_core::CpuMask::from_cpus([0, 1, 2, 3])), (1, vec![8, 8, 1]));
    assert_eq!(reads(cfs_core::CpuMask::first_n(16)), (13, vec![16, 8, 2]));
}

#[test]
fn sync_less_drops_the_hint_for_long_overlaps() {
    // SYNC_LESS: a waker whose avg_overlap exceeds migration_cost (0.5 ms)
    // loses the sync hint, so the load test runs with this_load = 1024 and
    // fails as in the non-sync case: the wakee stays on CPU 4.
    let (mut s, _log) = nehalem(KernelVersion::V2_6_32, false);
    let (w, p) = waker_and_sleeper(&mut s);
    // Build W's avg_overlap: a tick brings W's sum_exec_runtime to 350 us
    // (the kernel stamps last_wakeup from the possibly stale sum, so without
    // it the stamp would be 0 = "none"); W wakes someone (stamp 350 us),
    // runs to 8.4 ms and sleeps: avg_overlap = (8.4 - 0.35) ms / 8 = 1.006 ms
    // > migration_cost. The sleep sample is folded by sched.c dequeue_task
    // *before* dequeue_entity's update_curr (22763c5c sched.c:1873-1888), so
    // it too reads the sum of the last update: the tick at 8.4 ms provides
    // it (without it the sample would be 350 - 350 = 0; this test first
    // assumed a fresh sum, which the kernel does not have).
    let other = s.spawn(200_000, 1, TaskParams::normal()).unwrap();
    s.schedule(200_000, 1, Deschedule::Preempt).unwrap();
    s.schedule(300_000, 1, Deschedule::Sleep).unwrap();
    s.tick(350_000, 0).unwrap();
    s.wake_up(400_000, other, 0, false).unwrap();
    s.tick(8_400_000, 0).unwrap();
    s.schedule(8_400_000, 0, Deschedule::Sleep).unwrap();
    assert_eq!(s.task(w).unwrap().se.avg_overlap, (8_400_000 - 350_000) / 8);
    s.wake_up(8_500_000, w, 1, false).unwrap();
    // Now W runs again somewhere; find it and let it wake P with sync.
    let cpu = s.task(w).unwrap().cpu;
    if s.curr(cpu) != Some(w) {
        s.schedule(8_600_000, cpu, Deschedule::Preempt).unwrap();
    }
    assert_eq!(s.curr(cpu), Some(w));
    let out = s.wake_up(8_700_000, p, cpu, true).unwrap();
    assert_eq!(out.cpu, 4, "sync cleared by SYNC_LESS, so not pulled");
}
