//! CONFIG_NO_HZ (crate::nohz): tickless idle CPUs and the idle load
//! balancer, on the hand-built Q6600 domains ({0,1} and {2,3} share an L2).
//!
//! Kernel lines (2.6.26 bce7f793): select_nohz_load_balancer
//! sched.c:3613-3655, run_rebalance_domains :3740-3779,
//! trigger_load_balance :3788-3840; tick_nohz_stop_sched_tick /
//! tick_nohz_restart_sched_tick kernel/time/tick-sched.c:191-420.

mod common;

use cfs_core::{Event, KernelVersion, MigrateReason, SchedError, TaskParams};
use common::*;

fn migration_reasons(sim: &Sim) -> Vec<MigrateReason> {
    sim.events()
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Migrate { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

const V26: KernelVersion = KernelVersion::V2_6_26;

/// A 2.6.26 Q6600 at HZ=250; `hres` = HRTICK on its hrtimer, else the
/// periodic tick ends slices.
fn q6600_sim(nohz: bool, hres: bool) -> Sim {
    let mut c = cfg(V26, 4);
    c.hres_timers = hres;
    c.nohz = nohz;
    Sim::new(c, q6600(V26), 0)
}

/// Q6600, HZ=250, periodic tick, 8 hogs spawned on CPU 0 at t = 0; with
/// NO_HZ the three idle CPUs enter the idle loop at t = 0.
fn eight_hogs(nohz: bool) -> Sim {
    let mut sim = q6600_sim(nohz, false);
    for _ in 0..8 {
        sim.spawn(0, TaskParams::normal());
    }
    if nohz {
        let now = sim.now();
        for cpu in 1..4 {
            sim.s.nohz_stop_sched_tick(now, cpu).unwrap();
        }
    }
    sim
}

#[test]
fn idle_cpus_elect_one_idle_load_balancer() {
    // select_nohz_load_balancer(1) in CPU order: CPU 1 joins the mask {1}, the ILB is
    // vacant (-1), so it takes it and keeps its tick (returns 1); CPUs 2 and 3 join
    // ({1,2}, {1,2,3}: not all 4 online CPUs) and, the ILB being taken, stop their ticks.
    let mut sim = eight_hogs(true);
    assert_eq!(sim.s.nohz().load_balancer, Some(1));
    assert_eq!(sim.s.nohz().cpu_mask.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!((1..4).map(|c| sim.s.tick_stopped(c)).collect::<Vec<_>>(), vec![false, true, true]);
    // The busy CPU is untouched, and a stopped tick refuses tick().
    assert!(!sim.s.tick_stopped(0));
    let now = sim.now();
    assert_eq!(sim.s.tick(now, 2), Err(SchedError::TickStopped(2)));
    // With NO_HZ off the call is a no-op.
    let mut off = eight_hogs(false);
    let now = off.now();
    assert!(!off.s.nohz_stop_sched_tick(now, 2).unwrap());
    assert_eq!(off.s.nohz().load_balancer, None);
}

#[test]
fn the_ilb_stops_balancing_for_others_once_it_has_work() {
    // Jiffy 1 without NO_HZ every idle CPU balances at its own tick: [2, 4, 1, 1] (derived
    // in smp.rs eight_hogs_converge_to_two_per_cpu). With NO_HZ only CPU 1 ticks; its own
    // rebalance_domains pulls 4 tasks (MC: {0} = 8192 vs {1} = 0, imbalance 4096), which
    // sets its need_resched, so run_rebalance_domains breaks before balancing CPUs 2 and 3
    // on their behalf: [4, 4, 0, 0].
    let mut off = eight_hogs(false);
    off.run_to(off.tick_ns);
    assert_eq!(off.nr_running(), vec![2, 4, 1, 1]);
    let mut sim = eight_hogs(true);
    sim.run_to(sim.tick_ns);
    assert_eq!(sim.nr_running(), vec![4, 4, 0, 0]);
    assert!(sim.s.tick_stopped(2) && sim.s.tick_stopped(3));
}

#[test]
fn a_busy_ilb_hands_over_and_the_machine_still_balances() {
    // Jiffy 2: CPU 1 ticks busy with in_nohz_recently set: it leaves the mask and the
    // ILB role and kicks the first tickless CPU (resched_cpu(2)). CPU 2 wakes, restarts
    // its tick (leaving the mask), and its schedule() runs idle_balance: a newly-idle
    // pull. The hand-over repeats for CPU 3 at CPU 2's first busy tick. The machine
    // then converges to 2 per CPU like the ticking one.
    let mut sim = eight_hogs(true);
    sim.run_to(2 * sim.tick_ns);
    assert_eq!(sim.s.nohz().load_balancer, None, "CPU 1 gave the role up");
    assert!(!sim.s.nohz().cpu_mask.contains(1) && !sim.s.nohz().cpu_mask.contains(2));
    assert!(sim.nr_running()[2] > 0, "CPU 2 pulled when kicked: {:?}", sim.nr_running());
    let mut reached = None;
    for j in 3..=200u64 {
        sim.run_to(j * sim.tick_ns);
        if sim.nr_running() == vec![2, 2, 2, 2] {
            reached = Some(j);
            break;
        }
    }
    assert!(reached.is_some(), "never balanced: {:?}", sim.nr_running());
    let reasons = migration_reasons(&sim);
    assert!(reasons.contains(&MigrateReason::NewIdle), "{reasons:?}");
    assert!(sim.s.nohz().cpu_mask.is_empty(), "every CPU is busy: nobody is in nohz mode");
}

#[test]
fn an_all_idle_machine_stops_every_tick() {
    // Four idle CPUs: CPU 0 takes the ILB role; 1, 2 stop; CPU 3 completes the mask
    // (weight 4 = online): "time for ilb owner also to sleep" only applies to the owner,
    // so 3 just stops. At CPU 0's next tick trigger_load_balance sees an idle owner of an
    // all-nohz machine and reschedules it; back in the idle loop its select gives the role
    // up (load_balancer = -1) and its tick stops too.
    let mut sim = q6600_sim(true, true);
    for cpu in 0..4 {
        let now = sim.now();
        sim.s.nohz_stop_sched_tick(now, cpu).unwrap();
    }
    assert_eq!(sim.s.nohz().load_balancer, Some(0));
    assert_eq!((0..4).map(|c| sim.s.tick_stopped(c)).collect::<Vec<_>>(), vec![false, true, true, true]);
    sim.run_to(sim.tick_ns);
    assert_eq!(sim.s.nohz().load_balancer, None);
    assert!((0..4).all(|c| sim.s.tick_stopped(c)));
}

#[test]
fn the_ilb_balances_for_a_tickless_cpu_that_can_take_work_it_cannot() {
    // 4 hogs on CPU 0, each allowed on CPUs 0 and 2 only. CPUs 1-3 enter the idle loop:
    // CPU 1 is the ILB owner, 2 and 3 stop their ticks. Jiffy 1: CPU 1's own pass finds
    // every task pinned away from it (MC {0,1}: all_pinned; CPU level: its group {0,1}
    // is the busy one), so it has no work and goes on to balance CPU 2 as CPU_IDLE: at
    // the CPU level {2,3} vs {0,1} (source loads 4096 + 0, avg 2048, imbalance
    // min(2048, 4096 - 1024) = 2048) CPU 2 pulls 2 tasks, periodic migrations on its
    // behalf. CPU 3, balanced next, is not its group's balancer (CPU 2, still idle,
    // comes first) and pulls nothing. The owner then takes the earliest next_balance.
    let mut sim = q6600_sim(true, false);
    for _ in 0..4 {
        sim.spawn(0, TaskParams::normal().allowed(cfs_core::CpuMask::from_cpus([0, 2])));
    }
    let now = sim.now();
    // A busy CPU, or one with need_resched set, does not stop its tick.
    assert!(!sim.s.nohz_stop_sched_tick(now, 0).unwrap());
    assert!(sim.s.nohz().cpu_mask.is_empty());
    for cpu in 1..4 {
        sim.s.nohz_stop_sched_tick(now, cpu).unwrap();
    }
    sim.clear_events();
    sim.run_to(sim.tick_ns);
    assert_eq!(sim.nr_running(), vec![2, 0, 2, 0]);
    let reasons = migration_reasons(&sim);
    assert_eq!(reasons, vec![MigrateReason::Periodic; 2]);
    // CPU 2 left nohz mode when it woke to run them; the owner is still CPU 1.
    assert_eq!(sim.s.nohz().load_balancer, Some(1));
    assert_eq!(sim.s.nohz().cpu_mask.iter().collect::<Vec<_>>(), vec![1, 3]);
    let nb = |c: usize| sim.s.rq(c).unwrap().next_balance;
    assert_eq!(nb(1), nb(1).min(nb(2)).min(nb(3)));
}

#[test]
fn need_resched_keeps_the_tick() {
    // tick_nohz_stop_sched_tick: `if (need_resched()) goto end;`. A wakeup onto idle CPU 1
    // sets its need_resched; its idle loop must not stop the tick (or join the mask)
    // before it schedules.
    let mut sim = q6600_sim(true, true);
    sim.auto_resched = false;
    let t = sim.s.spawn(0, 1, TaskParams::normal()).unwrap();
    assert!(sim.s.need_resched(1) && sim.s.task(t).unwrap().cpu == 1);
    assert!(!sim.s.nohz_stop_sched_tick(0, 1).unwrap());
    assert!(!sim.s.nohz().cpu_mask.contains(1));
}

#[test]
fn a_tickless_cpu_leaving_nohz_mode_keeps_the_owner() {
    // select_nohz_load_balancer(0) (from tick_nohz_restart_sched_tick) clears only the
    // leaving CPU from the mask; the ILB role stays with its owner unless the leaver is it.
    let mut sim = q6600_sim(true, true);
    sim.auto_resched = false;
    for cpu in 0..3 {
        sim.s.nohz_stop_sched_tick(0, cpu).unwrap();
    }
    assert_eq!(sim.s.nohz().load_balancer, Some(0));
    assert!(sim.s.tick_stopped(2));
    // A task woken onto tickless CPU 2: its idle loop restarts the tick in schedule().
    let t = sim.s.spawn(1_000, 2, TaskParams::normal()).unwrap();
    assert_eq!(sim.s.schedule(1_000, 2, cfs_core::Deschedule::Preempt).unwrap().next, Some(t));
    assert!(!sim.s.tick_stopped(2));
    assert_eq!(sim.s.nohz().load_balancer, Some(0));
    assert_eq!(sim.s.nohz().cpu_mask.iter().collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn the_ilb_comes_back_when_the_earliest_tickless_cpu_is_due() {
    // run_rebalance_domains (2.6.26 sched.c:3740-3779): after balancing each tickless CPU
    // the owner takes `rq->next_balance` when it is earlier than its own, so it wakes for
    // whichever CPU is due first. HZ=1000, one hog on CPU 0 (a lone task: nothing to pull),
    // CPUs 1-3 idle: CPU 1 owns the ILB role, 2 and 3 stop their ticks. CPU 1's domains
    // are set to an 8 ms interval (as writing min_interval / max_interval under
    // /proc/sys/kernel/sched_domain/cpu1/ does); CPUs 2 and 3 keep SD_*_INIT's 1-4 ms.
    // Each of their passes finds nothing and doubles balance_interval (up to max_interval
    // 4) after the pass, so the intervals run 1, 2, 4, 4 ms (= jiffies) and the passes
    // fall at jiffies 1, 1 + 2 = 3, 3 + 4 = 7 and 7 + 4 = 11. CPU 1's own first pass is
    // due at 0 + 8 = 8. Taking the larger next_balance, or keeping its own, the owner
    // would sleep to jiffy 8 and balance 2 and 3 there only.
    let mut c = cfg(V26, 4);
    c.hres_timers = false;
    c.nohz = true;
    c.hz = 1000;
    let mut d = q6600(V26);
    for sd in &mut d.per_cpu[1] {
        sd.params.min_interval = 8;
        sd.params.max_interval = 8;
        sd.params.balance_interval = 8;
    }
    let mut sim = Sim::new(c, d, 0);
    sim.spawn(0, TaskParams::normal());
    let now = sim.now();
    for cpu in 1..4 {
        sim.s.nohz_stop_sched_tick(now, cpu).unwrap();
    }
    assert_eq!(sim.s.nohz().load_balancer, Some(1));
    let mut passes: [Vec<u64>; 4] = Default::default();
    for j in 1..=12u64 {
        sim.clear_events();
        sim.run_to(j * sim.tick_ns);
        for (_, e) in sim.events() {
            if let Event::Scan { cpu, .. } = e {
                if passes[*cpu].last() != Some(&j) {
                    passes[*cpu].push(j);
                }
            }
        }
        if j == 1 {
            // min(own 8, CPU 2's 1 + 1, CPU 3's 1 + 1)
            assert_eq!(sim.s.rq(1).unwrap().next_balance, 2);
        }
    }
    assert_eq!(passes[1], vec![8]);
    assert_eq!(passes[2], vec![1, 3, 7, 11]);
    assert_eq!(passes[3], vec![1, 3, 7, 11]);
    // CPU 0 balances as a busy CPU (1 ms x busy_factor 64): not in these 12 jiffies.
    assert!(passes[0].is_empty());
}

/// 2.6.32 raises SCHED_SOFTIRQ only on a CPU attached to a domain
/// (trigger_load_balance's `on_null_domain` test, 22763c5c
/// sched.c:4903-4906, 17d857be :4870-4873); 2.6.26 raises it on any
/// (bce7f793 :3838-3839). CPU 3 has no domain, as with `isolcpus=3`: the
/// others' domains span {0,1,2}. With NO_HZ, CPU 3 goes idle first and
/// takes the ILB role (mask {3}), then CPUs 1 and 2 stop their ticks.
/// Eight hogs wait on CPU 0. At CPU 3's first tick (its next_balance is
/// due at once), 2.6.26's run_rebalance_domains balances for the
/// tickless CPUs 1 and 2 as CPU_IDLE, and they pull hogs from CPU 0; in
/// 2.6.32 the softirq never runs, and all eight stay on CPU 0.
#[test]
fn an_isolated_ilb_owner_balances_nobody_on_2_6_32() {
    for (v, pulls) in [(V26, true), (KernelVersion::V2_6_32Rc1, false), (KernelVersion::V2_6_32, false)] {
        let mut c = cfg(v, 4);
        c.nohz = true;
        let mut sim = Sim::new(c, cache_blocks_online(v, 4, 2, cfs_core::CpuMask::first_n(3)), 0);
        for _ in 0..8 {
            sim.spawn(0, TaskParams::normal());
        }
        let now = sim.now();
        for cpu in [3, 1, 2] {
            sim.s.nohz_stop_sched_tick(now, cpu).unwrap();
        }
        assert_eq!(sim.s.nohz().load_balancer, Some(3), "{v}");
        assert!(sim.s.tick_stopped(1) && sim.s.tick_stopped(2), "{v}");
        sim.clear_events();
        let t = sim.at(4_000_000);
        sim.s.tick(t, 3).unwrap();
        let pulled = migration_reasons(&sim).len();
        assert_eq!(pulled > 0, pulls, "{v}: {pulled} pulled");
        if !pulls {
            assert_eq!(sim.s.rq(0).unwrap().nr_running, 8, "{v}");
        }
    }
}
