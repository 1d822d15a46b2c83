//! Unit pins of find_busiest_group's arithmetic (test-only module): the
//! per-group totals, the "balanced" exits, calculate_imbalance and the
//! small-imbalance step, on figures set by hand, against the kernel's
//! expressions. 2.6.26 bce7f793 sched.c:2922-3215 (find_busiest_group, the
//! small_imbalance label at :3148-3205); 2.6.32 22763c5c sched.c:3801-3860
//! (update_sd_lb_stats), :3868-3925 (fix_small_imbalance), :3932-3965
//! (calculate_imbalance), :3993-4068 (find_busiest_group).
//!
//! Mutation testing of balance.rs found these decided by no test of the
//! crate: the scenario tests reach them only through whole balance passes,
//! whose outcome rarely hinges on one comparison.

use crate::balance::{SdLbStats, SgLbStats};
use crate::wakeup::sg_div_cpu_power;

/// SCHED_LOAD_SCALE_FUZZ (2.6.26 include/linux/sched.h:701) =
/// SCHED_LOAD_SCALE: 2.6.25/26's slack in the small-imbalance test.
const FUZZ: u64 = 1024;

fn group(avg_load: u64, nr: u64, capacity: u64, imb: bool) -> SgLbStats {
    SgLbStats {
        avg_load,
        group_load: avg_load,
        sum_nr_running: nr,
        sum_weighted_load: nr * 1024,
        sum_avg_load_per_task: 0,
        max_cpu_load: 0,
        min_cpu_load: u64::MAX,
        group_capacity: capacity,
        group_imb: imb,
    }
}

#[test]
fn the_busiest_group_is_the_first_highest_overloaded_one() {
    // `if (avg_load > max_load && (sum_nr_running > group_capacity || group_imb))`:
    // strictly higher, so of two equal groups the first stays; a higher group within
    // its capacity is skipped unless its CPUs are unbalanced among themselves.
    let mut s = SdLbStats::default();
    s.update(0, true, 1024, &group(512, 1, 1, false));
    s.update(1, false, 1024, &group(2048, 2, 1, false));
    s.update(2, false, 1024, &group(2048, 2, 1, false));
    s.update(3, false, 1024, &group(4096, 1, 1, false));
    assert_eq!((s.this, s.busiest, s.max_load), (Some(0), Some(1), 2048));
    s.update(4, false, 1024, &group(3000, 1, 1, true));
    assert_eq!((s.busiest, s.max_load, s.group_imb), (Some(4), 3000, true));
    // Totals over every group: 512 + 2048 + 2048 + 4096 + 3000; 5 x 1024 of power.
    assert_eq!((s.total_load, s.total_pwr), (11_704, 5_120));
}

/// A domain with the local group at `this` and the busiest at `max`.
fn pair(this: u64, max: u64, busiest_nr: u64, total_load: u64, total_pwr: u64) -> SdLbStats {
    SdLbStats {
        busiest: Some(1),
        this: Some(0),
        total_load,
        total_pwr,
        this_load: this,
        this_nr_running: 1,
        this_load_per_task: 1024,
        this_pwr: 1024,
        max_load: max,
        busiest_nr_running: busiest_nr,
        busiest_load_per_task: busiest_nr * 1024,
        busiest_pwr: 1024,
        ..SdLbStats::default()
    }
}

#[test]
fn a_domain_is_balanced_below_the_imbalance_margin_or_the_average() {
    // imbalance_pct 125. avg_load = SCHED_LOAD_SCALE * total_load / total_pwr.
    let pct = 125;
    // Busiest at or below the local group, or running nothing: balanced.
    assert_eq!(pair(2000, 2000, 2, 8000, 2048).busiest_if_imbalanced(pct), None);
    assert_eq!(pair(1000, 3000, 0, 8000, 2048).busiest_if_imbalanced(pct), None);
    // this_load >= avg_load: 1024 * 2000 / 1024 = 2000 <= this 2000.
    assert_eq!(pair(2000, 3000, 3, 2000, 1024).busiest_if_imbalanced(pct), None);
    // 100 * max_load <= 125 * this_load: 1250 against 1000 is exactly the margin.
    assert_eq!(pair(1000, 1250, 2, 8000, 2048).busiest_if_imbalanced(pct), None);
    let mut s = pair(1000, 1251, 1, 8000, 2048);
    // 1251 is past it, but one task of 1024 is all the busiest group has: max_load
    // 1251 > 1024, so it is imbalanced.
    assert_eq!(s.busiest_if_imbalanced(pct), Some(1));
    assert_eq!((s.avg_load, s.busiest_load_per_task), (4000, 1024));
    // Per task: 3 tasks of 1024 -> 1024; max_load 1024 <= 1024 -> balanced.
    assert_eq!(pair(100, 1024, 3, 8000, 2048).busiest_if_imbalanced(pct), None);
    // An imbalanced group's per-task load is capped at the average (2.6.32): 2 tasks
    // of 4096 weigh 4096 each, capped at avg 1024 * 3000 / 1024 = 3000 < max 3500.
    let mut s = pair(1000, 3500, 2, 3000, 1024);
    s.busiest_load_per_task = 8192;
    s.group_imb = true;
    assert_eq!(s.busiest_if_imbalanced(pct), Some(1));
    assert_eq!(s.busiest_load_per_task, 3000);
}

#[test]
fn calculate_imbalance_pulls_no_group_past_the_average() {
    // max_pull = min(max_load - avg_load, max_load - busiest_load_per_task);
    // imbalance = min(max_pull * busiest_pwr, (avg_load - this_load) * this_pwr) / 1024;
    // the small step follows when imbalance < busiest_load_per_task.
    let s = |max, avg, this, blpt, bp, tp| SdLbStats {
        max_load: max,
        avg_load: avg,
        this_load: this,
        busiest_load_per_task: blpt,
        busiest_pwr: bp,
        this_pwr: tp,
        ..SdLbStats::default()
    };
    // Busiest below the average: nothing, and look at the small step.
    assert_eq!(s(1000, 2000, 500, 1024, 1024, 1024).calculate_imbalance(), (0, true));
    // max - avg binds: min(3072 - 2560, 3072 - 1024) = 512; min(512, 2560 - 1024) -> 512.
    assert_eq!(s(3072, 2560, 1024, 1024, 1024, 1024).calculate_imbalance(), (512, true));
    // avg - this binds: min(4096 - 2048, 4096 - 1024) = 2048 at power 2048, against
    // (2048 - 1536) * 1024: 512 * 1024 / 1024 = 512.
    assert_eq!(s(4096, 2048, 1536, 1024, 2048, 1024).calculate_imbalance(), (512, true));
    // Exactly one task's worth: 1024, and 1024 < 1024 is false (no small step).
    assert_eq!(s(3072, 2048, 1024, 1024, 1024, 1024).calculate_imbalance(), (1024, false));
}

/// The figures fix_small_imbalance reads.
#[allow(clippy::too_many_arguments)]
fn small(max: u64, this: u64, blpt: u64, this_sum: u64, this_nr: u64, bp: u64, tp: u64) -> SdLbStats {
    SdLbStats {
        max_load: max,
        this_load: this,
        busiest_load_per_task: blpt,
        this_load_per_task: this_sum,
        this_nr_running: this_nr,
        busiest_pwr: bp,
        this_pwr: tp,
        ..SdLbStats::default()
    }
}

/// 2.6.25/26's operands: the FUZZ slack, SCHED_LOAD_SCALE for an empty
/// local group, sg_div_cpu_power. `IMB` stands for the imbalance
/// calculate_imbalance found, returned when no task is worth moving.
fn fix_26(s: &SdLbStats) -> u64 {
    s.fix_small_imbalance(IMB, FUZZ, || 1024, |p, l| sg_div_cpu_power(p as u32, l))
}

const IMB: u64 = 7;

#[test]
fn small_imbalance_moves_one_task_when_the_gap_covers_it() {
    // `if (max_load - this_load + SCHED_LOAD_SCALE_FUZZ >= busiest_load_per_task *
    // imbn)`, imbn = 1 when the busiest group's tasks are heavier than the local
    // ones (this_load_per_task = sum / nr), else 2.
    // Equal tasks (1024 each), imbn 2: 2048 - 1024 + 1024 = 2048 >= 2048 -> move.
    assert_eq!(fix_26(&small(2048, 1024, 1024, 1024, 1, 1024, 1024)), 1024);
    // Heavier busiest tasks (1500 > 1024), imbn 1: 2500 - 1024 + 1024 >= 1500 -> move.
    // (With imbn 2 it would be 2500 >= 3000: no; the power test below then gives
    // pwr_now = 1500 + 1024 = 2524 against pwr_move = (1024 * min(1500, 2500 - 1500)
    // + 1024 * min(1024, 1024 + 1500)) / 1024 = 2024: stay.)
    assert_eq!(fix_26(&small(2500, 1024, 1500, 1024, 1, 1024, 1024)), 1500);
}

#[test]
fn small_imbalance_moves_one_task_when_that_uses_more_cpu_power() {
    // The power test (2.6.26 sched.c:3175-3204):
    //   pwr_now  = (bp * min(blpt, max) + tp * min(this_lpt, this)) / 1024
    //   tmp      = blpt * 1024 / bp;  pwr_move  = max > tmp ? bp * min(blpt, max - tmp) : 0
    //   tmp      = max * bp < blpt * 1024 ? max * bp / tp : blpt * 1024 / tp
    //   pwr_move = (pwr_move + tp * min(this_lpt, this + tmp)) / 1024;  move if pwr_move > pwr_now.
    // Busiest: one CPU (power 1024) with two nice-0 tasks: max 2048, blpt 1024. Local:
    // a two-CPU group (power 2048) running one nice -5 task (3121): this_load =
    // 3121 * 1024 / 2048 = 1560, this_lpt = 3121, imbn 2: 2048 - 1560 + 1024 = 1512 <
    // 2048. pwr_now = (1024 * 1024 + 2048 * 1560) / 1024 = 4144; pwr_move =
    // (1024 * min(1024, 2048 - 1024) + 2048 * min(3121, 1560 + 512)) / 1024 = 5168 -> move.
    assert_eq!(fix_26(&small(2048, 1560, 1024, 3121, 1, 1024, 2048)), 1024);
    // Two-CPU groups (power 2048): three nice-0 tasks against one nice -4 task (2501):
    // max 1536, blpt 1024, this = 2501 * 1024 / 2048 = 1250, this_lpt 2501, imbn 2,
    // 1536 - 1250 + 1024 < 2048. pwr_now = (2048 * 1024 + 2048 * 1250) / 1024 = 4548;
    // the busiest group keeps running one CPU's worth after the move (tmp = 512:
    // 2048 * min(1024, 1536 - 512) = 2,097,152) and the local group gains
    // 2048 * min(2501, 1250 + 512) = 3,608,576: (2,097,152 + 3,608,576) / 1024 = 5572 > 4548.
    // Without the first part the move would not pay (3524).
    assert_eq!(fix_26(&small(1536, 1250, 1024, 2501, 1, 2048, 2048)), 1024);
    // Two-CPU groups (power 2048) with three and two nice-0 tasks: max 1536, this 1024,
    // 1536 - 1024 + 1024 < 2048; pwr_now = (2048 * 1024 + 2048 * 1024) / 1024 = 4096;
    // pwr_move = (2048 * min(1024, 1536 - 512) + 2048 * min(1024, 1024 + 512)) / 1024
    // = 4096: no gain, keep the imbalance found.
    assert_eq!(fix_26(&small(1536, 1024, 1024, 2048, 2, 2048, 2048)), IMB);
}

#[test]
fn small_imbalance_counts_only_what_a_slow_busiest_group_can_give() {
    // The gain test's second tmp (2.6.32 sched.c:3915-3920) is
    // min(max_load * busiest_pwr, busiest_load_per_task * 1024) / this_pwr:
    // the local group gains what the busiest group's one task adds to its
    // load there, or less when the busiest group's whole load is smaller.
    // find_busiest_group has already left when max_load <= busiest_lpt, so
    // that needs a busiest power below 1024 per CPU: 2.6.32 with ARCH_POWER
    // (cpu_power.rs), which 2.6.25/26's built powers never give.
    // The Q6600's CPU level under 2.6.32 + ARCH_POWER: the busiest die {2,3}
    // at 12.5% clock (TM1's lowest step: power 128 + 128 = 256) with two
    // nice-0 tasks whose cpu_load[idx] still reads 257 in all (they have
    // just arrived; source_load takes the smaller); the local die {0,1}
    // (2048) runs one nice-0 task. max_load = 257 * 1024 / 256 = 1028,
    // this_load = 1024 * 1024 / 2048 = 512, blpt = 2048 / 2 = 1024; the
    // domain's avg (257 + 1024) * 1024 / 2304 = 569 (this_load is below it,
    // and 100 * 1028 > 125 * 512: not balanced), max_pull = min(1028 -
    // 569, 1028 - 1024) = 4, imbalance = min(4 * 256, 57 * 2048) / 1024 = 1
    // < 1024: the small step. this_lpt = 1024, imbn 2: 1028 - 512 + 1024 =
    // 1540 < 2048. pwr_now = (256 * 1024 + 2048 * 512) / 1024 = 1280;
    // the first tmp 1024 * 1024 / 256 = 4096 >= 1028, nothing there; the
    // second: 1028 * 256 = 263,168 < 1,048,576, so 263,168 / 2048 = 128,
    // pwr_move = 2048 * min(1024, 512 + 128) / 1024 = 1280, not more than
    // pwr_now: keep the imbalance of 1. (Taking blpt * 1024 / 2048 = 512
    // instead would give 2048 and move a task off the slow die.)
    let s = small(1028, 512, 1024, 1024, 1, 256, 2048);
    assert_eq!(s.fix_small_imbalance(1, 1024, || unreachable!(), |p, l| l / p), 1);
}

#[test]
fn an_empty_local_group_counts_its_load_per_task_by_the_versions_rule() {
    // this_nr_running = 0: 2.6.26 takes this_load_per_task = SCHED_LOAD_SCALE; 2.6.32
    // cpu_avg_load_per_task(this_cpu). Busiest one CPU with a nice -5 task and a bit
    // more (max 3500, blpt 3121), local idle: 3500 + 1024 < 6242. pwr_now = 3121;
    // pwr_move = 1024 * min(3121, 3500 - 3121) + 1024 * min(this_lpt, 0 + 3121):
    //   this_lpt 1024 -> (388,096 + 1,048,576) / 1024 = 1403: stay;
    //   this_lpt 3121 -> (388,096 + 3,195,904) / 1024 = 3500 > 3121: move.
    let s = small(3500, 0, 3121, 0, 0, 1024, 1024);
    assert_eq!(fix_26(&s), IMB);
    let per_power = |p: u64, l: u64| sg_div_cpu_power(p as u32, l);
    assert_eq!(s.fix_small_imbalance(IMB, FUZZ, || 3121, per_power), 3121);
    // The closure is not asked when the local group runs tasks (here one of 1024:
    // imbn 1, 3500 - 100 + 1024 >= 3121 -> move).
    let s = small(3500, 100, 3121, 1024, 1, 1024, 1024);
    assert_eq!(s.fix_small_imbalance(IMB, FUZZ, || unreachable!(), per_power), 3121);
}

// ---------------------------------------------------------------------
// task_hot and can_migrate_task
// ---------------------------------------------------------------------

use crate::config::Config;
use crate::entity::{TaskId, TaskParams};
use crate::observe::{BalanceVerdict, Event};
use crate::sched::{Deschedule, Scheduler};
use crate::tunables::Tunables;
use crate::wakeup_pins::{T0, on, running_with};
use cfs_topology::{CpuMask, KernelVersion};

const MS: u64 = 1_000_000;

/// A Q6600 with C running on CPU 0 and P queued behind it as the next
/// buddy, P last ran 10 ms ago (cold by the clock); `busy1` puts a task on
/// CPU 1, the puller.
fn buddy_scene(v: KernelVersion, busy1: bool) -> (Scheduler<()>, TaskId) {
    let mut s = on("q6600", v);
    running_with(&mut s, 0, TaskParams::normal());
    let p = s.spawn(T0, 0, TaskParams::normal()).unwrap();
    s.tm(p).se.exec_start = T0 - 10 * MS;
    s.rqs[0].cfs.next = Some(p);
    if busy1 {
        s.spawn(T0, 1, TaskParams::normal()).unwrap();
    }
    (s, p)
}

#[test]
fn task_hot_by_clock_and_the_migration_cost_extremes() {
    // task_hot (2.6.26 sched.c:1677-1700): a buddy is hot (CACHE_HOT_BUDDY); then
    // sysctl_sched_migration_cost -1 -> always hot, 0 -> never; else
    // now - exec_start < cost. P is not a buddy here.
    let (mut s, p) = buddy_scene(KernelVersion::V2_6_26, false);
    s.rqs[0].cfs.next = None;
    let ran = T0 - 10 * MS;
    for (cost, delta, hot) in [
        (500_000, 499_999, true),
        (500_000, 500_000, false),
        (Tunables::ALWAYS_HOT, 10 * MS, true),
        (0, 0, false),
        (1, 0, true),
    ] {
        s.cfg.tunables.migration_cost = cost;
        assert_eq!(s.task_hot(p, ran + delta, false), hot, "cost {cost} delta {delta}");
    }
}

#[test]
fn can_migrate_task_weighs_the_buddy_rule_and_the_failure_count() {
    // can_migrate_task (2.6.26 sched.c:2736-2776): allowed, not running, then
    // `if (!task_hot(p, rq->clock, sd) || sd->nr_balance_failed > sd->cache_nice_tries)`.
    // P, the next buddy, is hot in 2.6.26 whatever the puller does. 2.6.32's task_hot
    // (22763c5c sched.c:2033-2043) counts a buddy hot only while this_rq()->nr_running
    // is non-zero; 2.6.32-rc1 (17d857be) always. Pulling from CPU 0 to CPU 1 at MC
    // level (cache_nice_tries 1), the balancer running on CPU 1 unless said.
    let pull = |s: &Scheduler<()>, p, exec_cpu| s.can_migrate_task(p, 0, 1, (1, 0), &mut true, exec_cpu);
    for (v, busy1, exec_cpu, ok) in [
        (KernelVersion::V2_6_26, false, 1, false),
        (KernelVersion::V2_6_32, false, 1, true), // puller idle: the buddy rule is off
        (KernelVersion::V2_6_32, true, 1, false), // puller busy
        (KernelVersion::V2_6_32, false, 0, false), // active balancing runs on busiest
        (KernelVersion::V2_6_32Rc1, false, 1, false),
    ] {
        let (s, p) = buddy_scene(v, busy1);
        assert_eq!(pull(&s, p, exec_cpu), ok, "{v} CPU 1 busy {busy1} balancer on {exec_cpu}");
    }
    // Past cache_nice_tries failures a hot task goes anyway: 1 failure is not past 1.
    let (mut s, p) = buddy_scene(KernelVersion::V2_6_26, false);
    assert_eq!(s.domains.of(1)[0].params.cache_nice_tries, 1);
    s.dstate[1][0].nr_balance_failed = 1;
    assert!(!pull(&s, p, 1));
    s.dstate[1][0].nr_balance_failed = 2;
    assert!(pull(&s, p, 1));
    // The running task never moves this way.
    let c = s.rqs[0].curr.unwrap();
    assert!(!pull(&s, c, 1));
}

#[test]
fn the_idle_load_balancer_s_own_empty_queue_keeps_2_6_32_buddies_cold() {
    // 2.6.32's task_hot (22763c5c sched.c:2033-2043) counts a buddy hot only while
    // this_rq()->nr_running is non-zero, this_rq() being the CPU running the code.
    // CPU 0 runs A with B and then C queued (C, the newer, is examined first); B is
    // the next buddy; both last ran 10 ms ago, cold by the clock. CPU 1 is idle and
    // room is left for both. Balanced by CPU 1 itself, C moves, CPU 1 then has a
    // task, and B is hot: one pulled. Balanced for CPU 1 by the NO_HZ idle load
    // balancer on idle CPU 2 (run_rebalance_domains, :4839), this_rq() stays CPU 2's
    // empty queue and B is cold: both pulled.
    for (executing, want) in [(None, 1), (Some(2), 2)] {
        let mut s = on("q6600", KernelVersion::V2_6_32);
        running_with(&mut s, 0, TaskParams::normal());
        let b = queue(&mut s, 0, 1, TaskParams::normal(), T0 - 10 * MS)[0];
        queue(&mut s, 0, 1, TaskParams::normal(), T0 - 10 * MS);
        s.rqs[0].cfs.next = Some(b);
        assert_eq!(s.rqs[1].nr_running, 0);
        s.power.executing = executing;
        assert_eq!(pull(&mut s, 100_000), want, "balancer on {executing:?}");
        assert_eq!(s.t(b).cpu == 1, want == 2);
    }
}

// ---------------------------------------------------------------------
// balance_tasks: how many tasks one pass pulls
// ---------------------------------------------------------------------

/// `n` tasks of `params` queued on `cpu` that last ran at `last_ran` (0:
/// cache-cold; T0: hot, they ran just now), with no buddy pointing at them.
fn queue(s: &mut Scheduler<()>, cpu: usize, n: usize, params: TaskParams, last_ran: u64) -> alloc::vec::Vec<TaskId> {
    let ids = (0..n)
        .map(|_| {
            let t = s.spawn(T0, cpu, params).unwrap();
            s.tm(t).se.exec_start = last_ran;
            t
        })
        .collect();
    (s.rqs[cpu].cfs.next, s.rqs[cpu].cfs.last) = (None, None);
    ids
}

/// 2.6.26 on a Q6600: CPU 0 runs a nice-0 task with `queued` tasks of nice
/// `nice` behind it, all cache-cold (last ran at 0) and no buddy; CPU 1, the
/// puller, runs one task of nice `this_nice`.
fn pull_scene(queued: usize, nice: i32, this_nice: i32) -> Scheduler<()> {
    let mut s = on("q6600", KernelVersion::V2_6_26);
    running_with(&mut s, 0, TaskParams::normal());
    running_with(&mut s, 1, TaskParams::normal().nice(this_nice));
    queue(&mut s, 0, queued, TaskParams::normal().nice(nice), 0);
    s
}

fn pull(s: &mut Scheduler<()>, max_load_move: u64) -> u32 {
    s.move_tasks(1, 0, max_load_move, (1, 0), crate::observe::MigrateReason::Periodic, &mut false)
}

#[test]
fn balance_tasks_examines_nr_migrate_plus_one_tasks() {
    // balance_tasks (2.6.26 sched.c:2790-2850): `if (!p || loops++ >
    // sysctl_sched_nr_migrate) goto out;` -- the post-increment lets nr_migrate + 1
    // tasks be examined. Four cold nice-0 tasks queued on CPU 0 (the iterator offers
    // them; the running one and, in 2.6.26, the list's oldest entry are not pulled),
    // room for all: nr_migrate 0 pulls 1, 1 pulls 2, the default 32 all 4.
    for (nr_migrate, want) in [(0, 1), (1, 2), (32, 4)] {
        let mut s = pull_scene(4, 0, 0);
        s.cfg.tunables.nr_migrate = nr_migrate;
        assert_eq!(pull(&mut s, 100_000), want, "nr_migrate {nr_migrate}");
    }
    // It stops once the weight pulled reaches the imbalance: 2048 -> two tasks.
    let mut s = pull_scene(4, 0, 0);
    assert_eq!(pull(&mut s, 2048), 2);
    assert_eq!(pull(&mut pull_scene(4, 0, 0), 2049), 3);
}

#[test]
fn balance_tasks_skips_a_heavy_task_unless_it_would_lead_the_new_queue() {
    // skip_for_load = (weight >> 1) > rem_load_move + SCHED_LOAD_SCALE_FUZZ, and a
    // skipped task still moves if its prio is below this_best_prio (the puller's
    // current task). nice -5 tasks weigh 3121: 1560 > rem + 1024 from rem = 535.
    // Puller running nice -5 (prio 115): 115 >= 115 -> the skip applies.
    assert_eq!(pull(&mut pull_scene(2, -5, -5), 536), 1, "1560 > 1560 is false: pulled");
    assert_eq!(pull(&mut pull_scene(2, -5, -5), 535), 0, "1560 > 1559: skipped");
    // Puller running nice 0 (prio 120): a nice -5 task would lead it, so it moves.
    assert_eq!(pull(&mut pull_scene(2, -5, 0), 535), 1);
}

#[test]
fn the_migration_thread_s_own_newly_idle_pass_leads_with_an_rt_priority() {
    // move_tasks starts this_best_prio at this_rq->curr->prio (bce7f793 sched.c:2858).
    // When the migration thread balances newly idle in its own schedule(), curr is
    // still that thread, SCHED_FIFO at MAX_RT_PRIO - 1: prio 0 (:6085). No fair task
    // leads it, so the heavy-task skip always applies: the nice -5 task (1560 > 535 +
    // 1024) that moves under a nice-0 puller (prio 115 < 120) stays.
    let mut s = pull_scene(2, -5, 0);
    s.migration_thread = Some(1);
    assert_eq!(pull(&mut s, 535), 0);
    s.migration_thread = None;
    assert_eq!(pull(&mut s, 535), 1);
}

#[test]
fn a_hot_task_moves_once_the_failures_pass_cache_nice_tries() {
    // load_balance (2.6.26 sched.c:3262-3392) from idle CPU 1 at MC level
    // (cache_nice_tries 1) against CPU 0, which runs A with B queued. B is cache-hot
    // (the next buddy, queued just now), so can_migrate_task refuses it until
    // `sd->nr_balance_failed > sd->cache_nice_tries`: the first two passes fail and
    // count (nr_balance_failed 1, 2), the third moves B and resets the count. With no
    // active balancing started, each pass sets balance_interval to min_interval (1).
    use crate::balance::CpuIdleType;
    let mut s = pull_scene(1, 0, 0);
    let b = s.rqs[0].cfs.timeline().next().unwrap();
    s.tm(b).se.exec_start = T0;
    s.rqs[0].cfs.next = Some(b);
    s.do_schedule(T0, 1, Deschedule::Sleep); // CPU 1 goes idle
    assert_eq!(s.rqs[1].curr, None);
    let pass = |s: &mut Scheduler<()>| {
        let moved = s.load_balance(1, 0, CpuIdleType::Idle, &mut true);
        (moved, s.dstate[1][0].nr_balance_failed, s.dstate[1][0].balance_interval)
    };
    s.dstate[1][0].balance_interval = 4;
    assert_eq!(pass(&mut s), (0, 1, 1));
    assert_eq!(pass(&mut s), (0, 2, 1));
    assert_eq!(pass(&mut s), (1, 0, 1));
    assert_eq!(s.t(b).cpu, 1);
}

#[test]
fn a_pull_in_the_idle_task_s_own_schedule_sends_it_through_schedule_again() {
    // The idle task calls schedule() (it was kicked, and what it was kicked for is gone)
    // with nothing queued, so idle_balance runs (bce7f793 sched.c:4184-4185), and pull_task's
    // check_preempt_curr finds the idle task current and sets its TIF_NEED_RESCHED after
    // schedule() cleared it (:4169). The pulled task runs; the flag stays on the idle
    // task, and when the CPU next goes idle the idle task, switched back in, sees it at
    // the end of schedule() (:4213) and schedules again at once. 4b119e21 (:3924, 3942,
    // 3970) and 22763c5c the same.
    // CPU 0 runs A with B queued (B last ran at T0); CPU 1 goes idle at T0 (B is hot
    // then, so that schedule()'s newly idle pass leaves it) and its idle task schedules
    // at T0 + 1 ms: B, cold now, is pulled and runs. B then sleeps at T0 + 2 ms with
    // nothing left to pull (A runs alone on CPU 0): CPU 1 is idle with a reschedule due.
    for v in [KernelVersion::V2_6_25, KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let mut s = on("q6600", v);
        running_with(&mut s, 0, TaskParams::normal());
        running_with(&mut s, 1, TaskParams::normal());
        let b = queue(&mut s, 0, 1, TaskParams::normal(), T0)[0];
        s.do_schedule(T0, 1, Deschedule::Sleep);
        assert_eq!((s.rqs[1].curr, s.t(b).cpu), (None, 0), "{v}");
        s.advance(T0 + MS);
        // CPU 0's clock as its tick would leave it (2.6.25's balancer reads it as is).
        s.set_clock(0, T0 + MS);
        let sw = s.do_schedule(T0 + MS, 1, Deschedule::Preempt);
        assert_eq!((sw.pulled, sw.next), (1, Some(b)), "{v}");
        assert!(!s.rqs[1].need_resched && s.rqs[1].idle_need_resched, "{v}: the flag is the idle task's");
        s.advance(T0 + 2 * MS);
        let sw = s.do_schedule(T0 + 2 * MS, 1, Deschedule::Sleep);
        assert_eq!((sw.pulled, sw.next), (0, None), "{v}");
        assert!(s.rqs[1].need_resched && !s.rqs[1].idle_need_resched, "{v}: switched in, it reschedules");
        // That second schedule() balances again, finds nothing and leaves the flag clear.
        let sw = s.do_schedule(T0 + 2 * MS, 1, Deschedule::Preempt);
        assert_eq!((sw.pulled, sw.next), (0, None), "{v}");
        assert!(!s.rqs[1].need_resched, "{v}");
    }
}

#[test]
fn periodic_balancing_reads_the_busiest_clock_as_of_now_except_in_2_6_25() {
    // load_balance takes double_rq_lock(this_rq, busiest) before move_tasks, and
    // double_rq_lock runs update_rq_clock on both (2.6.26 bce7f793 sched.c:2621-2622,
    // called at :3317; 2.6.25 4b119e21 and 2.6.32 22763c5c the same). CPU 0 runs A
    // with B queued, both last stamped at T0 (CPU 0's clock is still T0); CPU 1 idles
    // and balances at T0 + 1 ms. With busiest's clock brought to T0 + 1 ms, B last
    // ran 1 ms >= sysctl_sched_migration_cost (0.5 ms) ago: cold, pulled on the first
    // pass; the dequeue's update_curr charges A the 1 ms. 2.6.25's update_rq_clock
    // only moves the calling CPU's own clock (sched.c:543-547), so there busiest
    // stays at T0: B is 0 ns old, hot, the pass fails and A is charged nothing.
    use crate::balance::CpuIdleType;
    for (v, moved, charged) in [(KernelVersion::V2_6_26, 1, MS), (KernelVersion::V2_6_25, 0, 0)] {
        let mut s = on("q6600", v);
        let a = running_with(&mut s, 0, TaskParams::normal());
        running_with(&mut s, 1, TaskParams::normal());
        let b = queue(&mut s, 0, 1, TaskParams::normal(), T0)[0];
        s.do_schedule(T0, 1, Deschedule::Sleep); // CPU 1 goes idle
        let ran = s.t(a).se.sum_exec_runtime;
        s.advance(T0 + MS);
        s.set_clock(1, T0 + MS);
        assert_eq!(s.rqs[0].clock, T0, "{v}");
        assert_eq!(s.load_balance(1, 0, CpuIdleType::Idle, &mut true), moved, "{v}");
        assert_eq!(s.t(b).cpu, if moved == 1 { 1 } else { 0 }, "{v}");
        assert_eq!(s.t(a).se.sum_exec_runtime - ran, charged, "{v}");
    }
}

// ---------------------------------------------------------------------
// load_balance's way out: active balancing and the interval back-off
// ---------------------------------------------------------------------

/// 2.6.26 on a Q6600 with CPU 1 idle: CPU 0 runs A and has B queued, B
/// allowed only on CPU 0. `b_older` makes B the older entry of CPU 0's
/// task list, which 2.6.26's iterator never returns.
fn pinned_scene(b_older: bool) -> Scheduler<()> {
    let mut s = on("q6600", KernelVersion::V2_6_26);
    let a = running_with(&mut s, 0, TaskParams::normal());
    let b = s.spawn(T0, 0, TaskParams::normal().allowed(CpuMask::single(0))).unwrap();
    if b_older {
        let (sa, sb) = (s.t(a).se.group_seq, s.t(b).se.group_seq);
        (s.tm(a).se.group_seq, s.tm(b).se.group_seq) = (sb, sa);
    }
    s.rqs[0].cfs.next = None;
    s.rqs[0].need_resched = false;
    s
}

/// One load_balance pass of idle CPU 1 at MC: (return, nr_balance_failed,
/// balance_interval).
fn mc_pass(s: &mut Scheduler<()>) -> (i32, u32, u32) {
    let moved = s.load_balance(1, 0, crate::balance::CpuIdleType::Idle, &mut true);
    (moved, s.dstate[1][0].nr_balance_failed, s.dstate[1][0].balance_interval)
}

#[test]
fn active_balancing_starts_after_cache_nice_tries_plus_two_failures() {
    // load_balance (2.6.26 sched.c:3262-3392) at MC: cache_nice_tries 1, min_interval
    // 1, max_interval 4. With B the older entry only A is offered: allowed on CPU 1
    // (all_pinned = 0) but running, so nothing moves and every pass fails. The fourth
    // failure passes cache_nice_tries + 2 = 3: A may run on CPU 1, so CPU 0's
    // migration thread is kicked (active_balance, push_cpu = 1, a resched of CPU 0),
    // the count drops to cache_nice_tries + 1 = 2, and the interval doubles instead
    // of being reset to min_interval. No SMT: the answer stays 0, never -1.
    let mut s = pinned_scene(true);
    assert_eq!(mc_pass(&mut s), (0, 1, 1));
    assert_eq!(mc_pass(&mut s), (0, 2, 1));
    assert_eq!(mc_pass(&mut s), (0, 3, 1));
    assert!(!s.rqs[0].active_balance);
    assert_eq!(mc_pass(&mut s), (0, 2, 2));
    assert!(s.rqs[0].active_balance && s.rqs[0].push_cpu == 1 && s.rqs[0].need_resched);
    // The kick still pending: the next failure (3) is not past 3 and resets the
    // interval; the one after (4) finds active_balance already set, starts nothing,
    // and so resets the interval as well.
    assert_eq!(mc_pass(&mut s), (0, 3, 1));
    assert_eq!(mc_pass(&mut s), (0, 2, 1));
    // Starting active balancing at max_interval leaves the interval there.
    let mut s = pinned_scene(true);
    (s.dstate[1][0].nr_balance_failed, s.dstate[1][0].balance_interval) = (3, 4);
    assert_eq!(mc_pass(&mut s), (0, 2, 4));
}

#[test]
fn the_active_balance_kick_charges_the_running_task() {
    // Waking busiest's migration thread (2.6.26 sched.c:3362) wakes an RT task onto
    // CPU 0, whose check_preempt_wakeup takes the rt_prio branch: update_rq_clock and
    // update_curr before resched_task (bce7f793 sched_fair.c:1173-1178). In the
    // scene above the fourth failing pass, 1 ms after the first three, kicks CPU 0:
    // A, running there, is charged that 1 ms at once (sum_exec_runtime and, at nice
    // 0, vruntime), and CPU 0's clock reads the kick's time. The port only
    // rescheduled, so A was charged at its next tick or switch.
    let mut s = pinned_scene(true);
    let a = s.rqs[0].curr.unwrap();
    for _ in 0..3 {
        mc_pass(&mut s);
    }
    let (ran, vr, start) = (s.t(a).se.sum_exec_runtime, s.t(a).se.vruntime, s.t(a).se.exec_start);
    let kick = start + MS;
    s.advance(kick);
    s.set_clock(1, kick);
    assert_eq!(mc_pass(&mut s), (0, 2, 2));
    assert!(s.rqs[0].active_balance && s.rqs[0].need_resched);
    assert_eq!(s.rqs[0].clock, kick);
    assert_eq!((s.t(a).se.sum_exec_runtime - ran, s.t(a).se.vruntime - vr), (MS, MS));
    assert_eq!(s.t(a).se.exec_start, kick);
}

#[test]
fn moving_a_running_task_by_its_mask_charges_it_when_the_thread_is_woken() {
    // set_cpus_allowed on a running task queues a request and wakes its CPU's
    // migration thread (bce7f793 sched.c:1757-1760, 5588), an RT task: the wakeup
    // charges the running task up to now (check_preempt_wakeup's rt_prio branch,
    // sched_fair.c:1173-1178; 2.6.32 charges in every wakeup, 22763c5c :1599). A
    // has run 1 ms on CPU 0 when its mask becomes CPU 1 alone; it is charged that
    // 1 ms there and then, in every profile, and asked to reschedule.
    for v in [KernelVersion::V2_6_25, KernelVersion::V2_6_26Rc4, KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let mut s = on("q6600", v);
        let a = running_with(&mut s, 0, TaskParams::normal());
        let (ran, start) = (s.t(a).se.sum_exec_runtime, s.t(a).se.exec_start);
        s.rqs[0].need_resched = false;
        s.set_affinity(start + MS, a, CpuMask::single(1)).unwrap();
        assert_eq!(s.t(a).se.sum_exec_runtime - ran, MS, "{v}");
        assert_eq!(s.t(a).se.exec_start, start + MS, "{v}");
        assert!(s.rqs[0].need_resched, "{v}");
    }
}

#[test]
fn an_all_pinned_pass_backs_off_to_max_pinned_interval() {
    // B the newer entry: the iterator offers only B, which may not run on CPU 1, so
    // move_tasks leaves all_pinned = 1; CPU 0 leaves `cpus` and the redo finds no
    // busiest group. out_balanced keeps all_pinned from that earlier pass and
    // out_one_pinned doubles the interval while it is below MAX_PINNED_INTERVAL (512),
    // even past max_interval (4).
    for (from, to) in [(1, 2), (4, 8), (256, 512), (512, 512)] {
        let mut s = pinned_scene(false);
        s.dstate[1][0].balance_interval = from;
        assert_eq!(mc_pass(&mut s), (0, 0, to), "from {from}");
    }
    // Nothing to pull (CPU 0 runs A alone): plain out_balanced doubles only below
    // max_interval.
    for (from, to) in [(2, 4), (4, 4), (8, 8)] {
        let mut s = on("q6600", KernelVersion::V2_6_26);
        running_with(&mut s, 0, TaskParams::normal());
        s.dstate[1][0].balance_interval = from;
        assert_eq!(mc_pass(&mut s), (0, 0, to), "from {from}");
    }
    // A busy SMT thread that finds nothing answers -1 (sched.c:3403-3405): Nehalem
    // CPU 0 (sibling 8) at SIBLING, not idle.
    let mut s = on("nehalem-ep", KernelVersion::V2_6_26);
    running_with(&mut s, 0, TaskParams::normal());
    assert_eq!(s.load_balance(0, 0, crate::balance::CpuIdleType::NotIdle, &mut true), -1);
}

// ---------------------------------------------------------------------
// idle_balance and load_balance_newidle
// ---------------------------------------------------------------------

/// 2.6.26 on a Q6600 at jiffy 10 (HZ 250): CPU 0 runs A with `queued` cold
/// tasks behind it, CPU 1 has never run anything. MC's last balance was at
/// jiffy `mc`, the CPU domain's at `cpu`, both with a 1 ms (1 jiffy)
/// interval; CPU 1's next_balance is `next`.
fn idle_scene(queued: usize, mc: u64, cpu: u64, next: u64) -> Scheduler<()> {
    let mut s = on("q6600", KernelVersion::V2_6_26);
    running_with(&mut s, 0, TaskParams::normal());
    queue(&mut s, 0, queued, TaskParams::normal(), 0);
    s.advance(T0 + 10 * 4_000_000);
    assert_eq!(s.jiffies(), 10);
    s.dstate[1][0].last_balance = mc;
    s.dstate[1][1].last_balance = cpu;
    s.rqs[1].next_balance = next;
    s
}

#[test]
fn idle_balance_sets_next_balance_from_the_levels_it_walked() {
    // idle_balance (2.6.26 sched.c:3497-3528): next_balance starts at jiffies + HZ and
    // takes the earliest last_balance + msecs_to_jiffies(balance_interval) of each
    // level walked; it is stored if a task was pulled or `time_after(jiffies,
    // this_rq->next_balance)`.
    // Nothing to pull (A alone): min(10 + 250, 100 + 1, 50 + 1) = 51, stored because
    // 10 is after 5 ...
    let mut s = idle_scene(0, 100, 50, 5);
    assert_eq!(s.idle_balance(1), 0);
    assert_eq!(s.rqs[1].next_balance, 51);
    // ... but not when jiffies has only reached next_balance.
    let mut s = idle_scene(0, 100, 50, 10);
    s.idle_balance(1);
    assert_eq!(s.rqs[1].next_balance, 10);
    // Both levels due only at jiffy 1001: jiffies + HZ = 260 is the earliest.
    let mut s = idle_scene(0, 1_000, 1_000, 5);
    s.idle_balance(1);
    assert_eq!(s.rqs[1].next_balance, 260);
    // A cold task queued behind A: MC pulls it, the walk stops there (the CPU level's
    // 50 + 1 is never read) and next_balance = min(260, 101) is stored although
    // jiffies is not past the old 1000.
    let mut s = idle_scene(1, 100, 50, 1_000);
    assert_eq!(s.idle_balance(1), 1);
    assert_eq!(s.rqs[1].next_balance, 101);
}

#[test]
fn newidle_answers_minus_one_for_a_busy_sibling_and_in_2_6_32_for_a_failed_pull() {
    // load_balance_newidle (2.6.26 sched.c:3400-3475): a CPU going idle whose SMT
    // sibling is busy (find_busiest_group clears sd_idle on seeing a running task)
    // answers -1 when it finds nothing. Nehalem CPU 8 with CPU 0 running A alone.
    let mut s = on("nehalem-ep", KernelVersion::V2_6_26);
    running_with(&mut s, 0, TaskParams::normal());
    assert_eq!(s.load_balance_newidle(8, 0), -1);
    // A pass that finds a busiest queue but moves nothing (B hot: it ran just now,
    // and nr_balance_failed 0 <= cache_nice_tries 1): 0 without SMT in 2.6.26; -1 in
    // 2.6.32, whose load_balance_newidle also returns -1 with power savings off
    // (22763c5c sched.c:4342-4351).
    for (v, want) in [(KernelVersion::V2_6_26, 0), (KernelVersion::V2_6_32, -1)] {
        let mut s = on("q6600", v);
        running_with(&mut s, 0, TaskParams::normal());
        let b = queue(&mut s, 0, 1, TaskParams::normal(), T0)[0];
        assert_eq!(s.load_balance_newidle(1, 0), want, "{v}");
        assert_eq!(s.t(b).cpu, 0);
    }
}

// ---------------------------------------------------------------------
// rebalance_domains: when each level is due
// ---------------------------------------------------------------------

/// An empty 2.6.26 Q6600 at jiffy `j` (HZ 250, 4 ms a jiffy), CPU 1's MC and
/// CPU domains last balanced at `last` with a balance_interval of `ms`, and
/// CPU 1's next_balance at the sentinel 7. Runs rebalance_domains(1) and
/// returns (MC's last_balance, CPU 1's next_balance).
fn rebalance(j: u64, ms: u32, last: u64, idle: bool) -> (u64, u64) {
    let mut s = on("q6600", KernelVersion::V2_6_26);
    s.advance(T0);
    s.advance(T0 + j * 4_000_000);
    for sd in 0..2 {
        s.dstate[1][sd].balance_interval = ms;
        s.dstate[1][sd].last_balance = last;
    }
    s.rqs[1].next_balance = 7;
    s.rebalance_domains(1, idle);
    (s.dstate[1][0].last_balance, s.rqs[1].next_balance)
}

#[test]
fn rebalance_domains_scales_the_interval_when_busy_and_clamps_it() {
    // rebalance_domains (2.6.26 sched.c:3666-3733): interval = balance_interval,
    // × busy_factor (64) unless idle, in jiffies (rounded up), at least 1, at most
    // HZ * NR_CPUS / 10 (here 250 * 32 / 10 = 800: the defconfig's NR_CPUS=32,
    // Config::nr_cpus); a level runs when
    // time_after_eq(jiffies, last_balance + interval), and next_balance starts at
    // jiffies + 60 * HZ and is stored only if some level is due before it.
    // Busy, 1 ms: 64 ms = 16 jiffies. Due at 16, not at 15.
    assert_eq!(rebalance(16, 1, 0, false).0, 16);
    assert_eq!(rebalance(15, 1, 0, false).0, 0);
    // Idle, 1 ms: 1 jiffy.
    assert_eq!(rebalance(1, 1, 0, true).0, 1);
    // Busy, 10 s: 640 s = 160_000 jiffies, clamped to 800 (3.2 s): not yet at 799, due
    // at 800.
    assert_eq!(rebalance(799, 10_000, 0, false).0, 0);
    assert_eq!(rebalance(800, 10_000, 0, false).0, 800);
    // next_balance: both levels due at 1000 + 1 (idle) -> 1001 < 10 + 15_000, stored;
    // due at 20_001 only -> nothing before 15_010, the sentinel stays.
    assert_eq!(rebalance(10, 1, 1_000, true).1, 1_001);
    assert_eq!(rebalance(10, 1, 20_000, true).1, 7);
    // Due exactly at the horizon (15_009 + 1 = 10 + 15_000): `time_after` is strict, so
    // nothing is stored either.
    assert_eq!(rebalance(10, 1, 15_009, true).1, 7);
}

#[test]
fn nr_cpus_covers_the_machine_and_sets_the_interval_cap() {
    // CONFIG_NR_CPUS: the x86 defconfigs have 32 (2.6.25/26) and 64
    // (2.6.32); a machine with more CPUs raises it (a kernel built for
    // fewer would not bring them up). The cap is HZ * NR_CPUS / 10:
    // 250 * 32 / 10 = 800 jiffies; 250 * 64 / 10 = 1600; 1000 * 48 / 10 = 4800.
    let c = Config::new(KernelVersion::V2_6_26, 4);
    assert_eq!((c.nr_cpus, c.max_balance_interval()), (32, 800));
    let c = Config::new(KernelVersion::V2_6_32, 4);
    assert_eq!((c.nr_cpus, c.max_balance_interval()), (64, 1600));
    let mut c = Config::new(KernelVersion::V2_6_26, 48);
    c.hz = 1000;
    assert_eq!((c.nr_cpus, c.max_balance_interval()), (48, 4800));
    // The scheduler refuses an NR_CPUS below the domains' CPU count or past
    // MAX_CPUS, and takes one equal to it.
    let h = cfs_topology::Host::preset("q6600").unwrap();
    let v = KernelVersion::V2_6_26;
    for (nr, ok) in
        [(3, false), (4, true), (cfs_topology::MAX_CPUS as u32, true), (cfs_topology::MAX_CPUS as u32 + 1, false)]
    {
        let c = Config { nr_cpus: nr, ..Config::new(v, 4) };
        let r = Scheduler::new(c, h.build_domains(v));
        assert_eq!(r.is_ok(), ok, "NR_CPUS={nr}");
        if !ok {
            assert!(matches!(r, Err(crate::config::ConfigError::NrCpus { nr_cpus, cpus: 4 }) if nr_cpus == nr));
        }
    }
}

#[test]
fn a_zero_interval_cap_balances_at_every_tick_rather_than_panicking() {
    // rebalance_domains raises a zero interval to 1 and then caps it at
    // max_load_balance_interval = HZ * NR_CPUS / 10 (bce7f793 sched.c:3687-3690;
    // e490517a :4028-4031; 4b119e21 :3436-3439). With HZ = 4 on 2 CPUs the cap is
    // 4 * 2 / 10 = 0 jiffies, so every domain is due at every tick. The port clamped
    // with `clamp(1, 0)`, which panics. Config::validate accepts HZ 1..=10000.
    for v in [KernelVersion::V2_6_25, KernelVersion::V2_6_26Rc4, KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let h = cfs_topology::Host::preset("x2").unwrap();
        let c = Config { hz: 4, nr_cpus: 2, ..Config::new(v, 2) };
        assert_eq!(c.max_balance_interval(), 0);
        let mut s: Scheduler<()> = Scheduler::new(c, h.build_domains(v)).unwrap();
        let tick = c.tick_ns();
        let a = s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.schedule(0, 0, crate::sched::Deschedule::Preempt).unwrap();
        for k in 1..=3u64 {
            for cpu in 0..2 {
                s.tick(k * tick, cpu).unwrap();
            }
        }
        // Every pass is due at once: last_balance follows the tick's jiffy.
        let jiffies = s.jiffies();
        assert!(s.dstate[1].iter().all(|d| d.last_balance == jiffies), "{v}");
        assert!(s.t(a).cpu < 2, "{v}");
    }
}

#[test]
fn a_zero_min_interval_keeps_a_busy_domain_due_at_every_tick() {
    // load_balance stores `sd->balance_interval = sd->min_interval` after a
    // pass that started no active balance (bce7f793 sched.c:3375; e490517a :3710;
    // 4b119e21 :3127), unclamped, and the domain initialisers' balance_interval
    // likewise. rebalance_domains then scales a busy CPU's interval by
    // busy_factor, 0 x 64 = 0 ms, converts it (0 jiffies) and raises 0 to one
    // jiffy (sched.c:3681-3688): a domain whose min_interval is 0 balances at every
    // tick even on a busy CPU. The port raised the stored interval to 1 ms, so the
    // busy CPU waited 1 x 64 = 64 ms = 16 jiffies at HZ=250. Here both X2 CPUs are
    // busy (two tasks on CPU 0, one on CPU 1) and every domain has min_interval
    // and balance_interval 0: CPU 1 balances at its ticks 1, 2 and 3.
    for v in [KernelVersion::V2_6_25, KernelVersion::V2_6_26Rc4, KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let h = cfs_topology::Host::preset("x2").unwrap();
        let mut d = h.build_domains(v);
        for chain in &mut d.per_cpu {
            for sd in chain.iter_mut() {
                sd.params.min_interval = 0;
                sd.params.balance_interval = 0;
            }
        }
        let c = Config::new(v, 2);
        let mut s: Scheduler<()> = Scheduler::new(c, d).unwrap();
        let tick = c.tick_ns();
        s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.spawn(0, 0, TaskParams::normal()).unwrap();
        s.spawn(0, 1, TaskParams::normal().allowed(CpuMask::single(1))).unwrap();
        s.schedule(0, 0, crate::sched::Deschedule::Preempt).unwrap();
        s.schedule(0, 1, crate::sched::Deschedule::Preempt).unwrap();
        for k in 1..=3u64 {
            s.tick(k * tick, 1).unwrap();
            let jiffies = s.jiffies();
            assert_eq!(jiffies, k, "{v}");
            assert!(s.dstate[1].iter().all(|d| d.last_balance == k && d.balance_interval == 0), "{v} at tick {k}");
        }
    }
}

#[test]
fn an_all_pinned_busiest_cpu_is_dropped_and_the_search_redone() {
    // load_balance's redo (2.6.26 sched.c:3317-3330): CPU 2 (idle) balances the Q6600's
    // CPU domain, groups {0,1} and {2,3}, idle_idx 1. Each die group has cpu_power
    // SCHED_LOAD_SCALE (init_sched_groups_power: its MC children share the package),
    // so capacity 1. CPU 0 runs A with B queued, both nice -5 (3121), B allowed only
    // on CPU 0 and the newer; CPU 1 runs C with D and E queued, nice 0, cold.
    // Pass 1: die {0,1} holds 9314 over 5 tasks: max_load 9314, avg = 9314 * 1024 /
    //   2048 = 4657, busiest_lpt = 1862; imbalance = min(min(4657, 7452), 4657) = 4657.
    //   The busiest queue is CPU 0 (6242 > 3072); the iterator offers only B (A is the
    //   oldest entry), B is pinned, so all_pinned: CPU 0 leaves `cpus`, and redo.
    // Pass 2: die {0,1} counts CPU 1 only: 3072 over 3 tasks; avg 1536, busiest_lpt
    //   1024, max_pull = min(1536, 2048); imbalance 1536. From CPU 1 the newest, E, then
    //   D (512 left: (1024 >> 1) > 512 + 1024 is false, so D is not skipped) move.
    // Without the redo the pass would end at pass 1 with nothing moved.
    let mut s = on("q6600", KernelVersion::V2_6_26);
    let a = running_with(&mut s, 0, TaskParams::normal().nice(-5));
    let b = s.spawn(T0, 0, TaskParams::normal().nice(-5).allowed(CpuMask::single(0))).unwrap();
    let c = running_with(&mut s, 1, TaskParams::normal());
    queue(&mut s, 1, 2, TaskParams::normal(), 0);
    // The CPU domain balances an idle CPU by cpu_load[idle_idx - 1] = cpu_load[0]
    // (source_load = min(it, now), target_load = max): settled loads, as after
    // enough ticks at these weights.
    for cpu in 0..2 {
        s.rqs[cpu].cfs.next = None;
        s.rqs[cpu].cpu_load = [s.rqs[cpu].load.weight; 5];
    }
    assert_eq!(s.load_balance(2, 1, crate::balance::CpuIdleType::Idle, &mut true), 2);
    let cpus: alloc::vec::Vec<usize> = s.tasks().iter().map(|t| t.cpu).collect();
    assert_eq!((s.t(a).cpu, s.t(b).cpu, s.t(c).cpu), (0, 0, 1));
    assert_eq!(cpus[3..], [2, 2]);
}

#[test]
fn a_busy_smt_thread_reports_moves_and_answers_minus_one_for_none() {
    // load_balance at the Nehalem SIBLING level {0,8} (2.6.26 sched.c:3387-3390), run
    // by CPU 8 while busy (X runs there): sd_idle is 0, so a pass that found a busiest
    // queue but moved nothing answers -1; one that moved answers the count. CPU 0 runs
    // A with B and C queued: cold, one moves (imbalance = min(max_load - avg,
    // max_load - busiest_lpt) = 1024); hot (they ran just now, and nr_balance_failed 0
    // is not past cache_nice_tries 0), none does.
    for (cold, want) in [(true, 1), (false, -1)] {
        let mut s = smt_scene(if cold { 0 } else { T0 });
        assert_eq!(s.load_balance(8, 0, crate::balance::CpuIdleType::NotIdle, &mut true), want, "cold {cold}");
    }
}

/// 2.6.26 on the Nehalem: CPU 8 runs X; its sibling CPU 0 runs A with two
/// tasks queued that last ran at `last_ran`.
fn smt_scene(last_ran: u64) -> Scheduler<()> {
    let mut s = on("nehalem-ep", KernelVersion::V2_6_26);
    running_with(&mut s, 8, TaskParams::normal());
    running_with(&mut s, 0, TaskParams::normal());
    queue(&mut s, 0, 2, TaskParams::normal(), last_ran);
    s
}

#[test]
fn each_kind_of_balancing_reads_its_own_cpu_load_index() {
    // find_busiest_group's load_idx (2.6.26 sched.c:2942-2947): busy_idx when not
    // idle, newidle_idx when newly idle, idle_idx when idle; source_load(i, idx) =
    // min(cpu_load[idx - 1], now). The Q6600's CPU domain has idle_idx 1, busy_idx 2
    // and newidle_idx 2. CPU 0 runs A with B and C queued (cold), CPU 1 runs D;
    // cpu_load[0] holds those loads, cpu_load[1] still 0 (as if they had just
    // arrived). CPU 2 balances: by cpu_load[0] die {0,1} is busiest (4096 over 4
    // tasks) and a task moves; by cpu_load[1] both dies look empty and nothing does.
    use crate::balance::CpuIdleType;
    let scene = || {
        let mut s = on("q6600", KernelVersion::V2_6_26);
        running_with(&mut s, 0, TaskParams::normal());
        running_with(&mut s, 1, TaskParams::normal());
        queue(&mut s, 0, 2, TaskParams::normal(), 0);
        for cpu in 0..2 {
            s.rqs[cpu].cpu_load = [s.rqs[cpu].load.weight, 0, 0, 0, 0];
        }
        s
    };
    assert!(scene().load_balance(2, 1, CpuIdleType::Idle, &mut true) > 0);
    assert_eq!(scene().load_balance(2, 1, CpuIdleType::NotIdle, &mut true), 0);
    assert_eq!(scene().load_balance_newidle(2, 1), 0);
}

#[test]
fn a_2_6_26_group_is_imbalanced_when_its_cpus_spread_by_more_than_one_task() {
    // find_busiest_group (2.6.26 sched.c:2986-3031): a non-local group's CPUs give
    // max_cpu_load and min_cpu_load (source loads); `(max_cpu_load - min_cpu_load) >
    // SCHED_LOAD_SCALE` makes it imbalanced, and an imbalanced group may be busiest
    // within its capacity (power / SCHED_LOAD_SCALE = 1 for a Q6600 die, whose
    // cpu_power is SCHED_LOAD_SCALE). CPU 2 balances the CPU domain (idle_idx 1) with
    // one task on CPU 0 and none on CPU 1.
    use crate::balance::CpuIdleType;
    let fbg = |nice: i32| {
        let mut s = on("q6600", KernelVersion::V2_6_26);
        running_with(&mut s, 0, TaskParams::normal().nice(nice));
        s.rqs[0].cpu_load = [s.rqs[0].load.weight; 5];
        let (mut sd_idle, mut balance) = (false, true);
        let all = CpuMask::first_n(4);
        let bg = s.find_busiest_group(2, 1, CpuIdleType::Idle, &mut sd_idle, &all, &mut balance);
        let q = bg.and_then(|b| s.find_busiest_queue(&CpuMask::from_cpus([0, 1]), b.imbalance, &all));
        (bg.map(|b| (b.group, b.imbalance)), q)
    };
    // Nice 0: spread 1024, not more than 1024; 1 task, not over capacity: balanced.
    assert_eq!(fbg(0), (None, None));
    // Nice -3 (1991): spread 1991 > 1024 -> imbalanced. max_load 1991, avg = 1991 * 1024 /
    // 2048 = 995, busiest_lpt = min(1991, 995) = 995 (imbalanced group); max_pull =
    // min(996, 996); imbalance = min(996, 995 - 0) * 1024 / 1024 = 995. The group is
    // busiest ({0,1} is CPU 2's second group), but its queue holds one task of 1991 >
    // 995, which find_busiest_queue skips.
    assert_eq!(fbg(-3), (Some((1, 995)), None));
}

#[test]
fn power_savings_on_the_parent_lets_an_idle_smt_thread_count_as_idle() {
    // test_sd_parent(sd, SD_POWERSAVINGS_BALANCE) (2.6.26 sched.c:3387-3389): with power
    // savings on the parent MC domain, the busy SMT thread of the scene above that moves
    // nothing answers 0, not -1.
    let mut s = smt_scene(T0);
    for cpu in 0..16 {
        if let Some(mc) = s.domains.per_cpu[cpu].get_mut(1) {
            mc.flags.insert(cfs_topology::SdFlags::POWERSAVINGS_BALANCE);
        }
    }
    assert_eq!(s.load_balance(8, 0, crate::balance::CpuIdleType::NotIdle, &mut true), 0);
}

#[test]
fn the_2_6_32_heavy_task_skip_has_no_fuzz_and_no_exemption() {
    // balance_tasks (22763c5c sched.c:3248): skip when (weight >> 1) > rem_load_move.
    // Nice -5 (3121): 1560 > 1560 is false at rem 1560 (pulled), true at 1559 (skipped),
    // although the task would lead the idle puller's queue.
    for (rem, want) in [(1560, 1), (1559, 0)] {
        let mut s = on("q6600", KernelVersion::V2_6_32);
        running_with(&mut s, 0, TaskParams::normal());
        queue(&mut s, 0, 2, TaskParams::normal().nice(-5), 0);
        let moved = s.move_tasks(1, 0, rem, (1, 0), crate::observe::MigrateReason::Periodic, &mut false);
        assert_eq!(moved, want, "rem {rem}");
    }
}

#[test]
fn newidle_does_not_try_to_move_a_lone_running_task() {
    // load_balance_newidle (2.6.26 sched.c:3459-3482) calls move_tasks only when the
    // busiest runqueue has more than one task. Nehalem MC (cores as groups, each of
    // cpu_power SCHED_LOAD_SCALE, capacity 1), CPU 1 newly idle; core {0,8} runs A on
    // CPU 0 and B on CPU 8, one each: 2 > capacity, max_load 2048, avg 512, busiest_lpt
    // 1024; imbalance = min(1024, 512) = 512 < 1024, and the small-imbalance step gives
    // 1024 (2048 - 0 + FUZZ >= 2 * 1024). CPU 0's lone task is not above that, so CPU 0
    // is the busiest queue; with one task nothing is tried, and the pass ends failed
    // without touching nr_balance_failed (it is reset only after a move, or when no
    // busiest group or queue is found).
    let mut s = on("nehalem-ep", KernelVersion::V2_6_26);
    let a = running_with(&mut s, 0, TaskParams::normal());
    running_with(&mut s, 8, TaskParams::normal());
    s.dstate[1][1].nr_balance_failed = 5;
    assert_eq!(s.load_balance_newidle(1, 1), 0);
    assert_eq!((s.t(a).cpu, s.dstate[1][1].nr_balance_failed), (0, 5));
}

// ---------------------------------------------------------------------
// How each pass ends: the Balance event's verdict
// ---------------------------------------------------------------------

/// A scheduler that records every decision from here on.
type Logged = Scheduler<alloc::vec::Vec<(u64, Event)>>;

fn logged(s: Scheduler<()>) -> Logged {
    s.swap_observer(alloc::vec::Vec::new()).0
}

/// 2.6.26 on a Q6600, CPU 0 running A alone, recording.
fn a_alone_on_cpu0() -> Logged {
    let mut s = on("q6600", KernelVersion::V2_6_26);
    running_with(&mut s, 0, TaskParams::normal());
    logged(s)
}

/// The verdicts and moved counts of the Balance events `s` reported.
fn verdicts(s: &Logged) -> alloc::vec::Vec<(BalanceVerdict, u32)> {
    s.observer()
        .iter()
        .filter_map(|(_, e)| match *e {
            Event::Balance { verdict, moved, .. } => Some((verdict, moved)),
            _ => None,
        })
        .collect()
}

#[test]
fn every_periodic_pass_reports_how_it_ended() {
    // One Balance event per load_balance pass (2.6.26 sched.c:3262-3392), whichever
    // label it leaves by; the kernel's schedstat counters tell the same cases apart.
    use crate::balance::CpuIdleType::Idle;
    use BalanceVerdict::*;
    // lb_nobusyg: CPU 0 runs A alone; at MC CPU 1's group search finds no group
    // over its capacity (1 task <= 1), so the domain is balanced.
    let mut s = a_alone_on_cpu0();
    assert_eq!(s.load_balance(1, 0, Idle, &mut true), 0);
    assert_eq!(verdicts(&s), [(NoBusiestGroup, 0)]);

    // `*balance = 0`: at the CPU level the local group {0,1} is balanced by its
    // first idle CPU, CPU 0, so CPU 1's pass stops before any search, and tells
    // rebalance_domains to stop its walk.
    let mut s = logged(on("q6600", KernelVersion::V2_6_26));
    let mut balance = true;
    assert_eq!(s.load_balance(1, 1, Idle, &mut balance), 0);
    assert!(!balance);
    assert_eq!(verdicts(&s), [(NotBalancer, 0)]);

    // lb_failed, then lb_gained: the cache-hot B of
    // `a_hot_task_moves_once_the_failures_pass_cache_nice_tries` stays for two passes
    // and moves on the third.
    let mut s = pull_scene(1, 0, 0);
    let b = s.rqs[0].cfs.timeline().next().unwrap();
    s.tm(b).se.exec_start = T0;
    s.rqs[0].cfs.next = Some(b);
    s.do_schedule(T0, 1, Deschedule::Sleep);
    let mut s = logged(s);
    for _ in 0..3 {
        s.load_balance(1, 0, Idle, &mut true);
    }
    assert_eq!(verdicts(&s), [(Failed, 0), (Failed, 0), (Pulled, 1)]);

    // All pinned: B (the only task the 2.6.26 iterator offers) may run only on CPU 0;
    // CPU 0 leaves `cpus`, and the redo finds no busiest group.
    let mut s = logged(pinned_scene(false));
    assert_eq!(s.load_balance(1, 0, Idle, &mut true), 0);
    assert_eq!(verdicts(&s), [(AllPinned, 0)]);

    // lb_nobusyq: the busiest group's CPUs each run one task heavier than the
    // imbalance. Q6600 CPU level, CPU 2 idle balancing (idle_idx 1, loads settled);
    // die {0,1} (cpu_power 1024, capacity 1) runs A and B, nice 0, one per CPU; die
    // {2,3} runs C, nice -1 (1277), on CPU 3.
    //   this_load = 1277; max_load = 2048 (2 tasks > capacity 1); busiest_lpt = 1024;
    //   avg_load = 1024 * (2048 + 1277) / 2048 = 1662.
    //   max_pull = min(2048 - 1662, 2048 - 1024) = 386; imbalance = min(386 * 1024,
    //   (1662 - 1277) * 1024) / 1024 = 385 < busiest_lpt, so the small-imbalance step:
    //   this_lpt 1277 >= 1024 -> imbn 2; 2048 - 1277 + 1024 = 1795 < 2048; pwr_now =
    //   (1024 * 1024 + 1024 * 1277) / 1024 = 2301; pwr_move = (1024 * min(1024, 2048 -
    //   1024) + 1024 * min(1277, 1277 + 1024)) / 1024 = 2301, no gain: the imbalance
    //   stays 385, and find_busiest_queue skips both CPUs (1 task, 1024 > 385).
    let mut s = on("q6600", KernelVersion::V2_6_26);
    running_with(&mut s, 0, TaskParams::normal());
    running_with(&mut s, 1, TaskParams::normal());
    running_with(&mut s, 3, TaskParams::normal().nice(-1));
    for cpu in 0..4 {
        s.rqs[cpu].cfs.next = None;
        s.rqs[cpu].cpu_load = [s.rqs[cpu].load.weight; 5];
    }
    let mut s = logged(s);
    assert_eq!(s.load_balance(2, 1, Idle, &mut true), 0);
    assert_eq!(verdicts(&s), [(NoBusiestQueue, 0)]);
}

#[test]
fn every_newly_idle_pass_reports_how_it_ended() {
    // load_balance_newidle (2.6.26 sched.c:3400-3470): CPU 0 running A alone (no
    // group over its capacity: no busiest group); the Nehalem core of
    // `newidle_does_not_try_to_move_a_lone_running_task`, whose lone task makes it
    // the busiest queue (found, nothing tried: failed); CPU 0 running A with a cold B
    // queued (max_load 2048, avg 1024, busiest_lpt 1024: imbalance min(1024, 1024) =
    // 1024, and B, 1024, moves).
    use BalanceVerdict::*;
    let mut s = a_alone_on_cpu0();
    assert_eq!(s.load_balance_newidle(1, 0), 0);

    let mut n = on("nehalem-ep", KernelVersion::V2_6_26);
    running_with(&mut n, 0, TaskParams::normal());
    running_with(&mut n, 8, TaskParams::normal());
    let mut n = logged(n);
    assert_eq!(n.load_balance_newidle(1, 1), 0);

    let mut p = on("q6600", KernelVersion::V2_6_26);
    running_with(&mut p, 0, TaskParams::normal());
    queue(&mut p, 0, 1, TaskParams::normal(), 0);
    let mut p = logged(p);
    assert_eq!(p.load_balance_newidle(1, 0), 1);

    assert_eq!(verdicts(&s), [(NoBusiestGroup, 0)]);
    assert_eq!(verdicts(&n), [(Failed, 0)]);
    assert_eq!(verdicts(&p), [(Pulled, 1)]);
}

// ---------------------------------------------------------------------
// last_preempter: who `current` is when a balance pass or a fork checks
// preemption
// ---------------------------------------------------------------------

/// 2.6.26 on a Q6600 (with the last-preempter patch when `patched`). CPU 0
/// runs a task with three cold tasks queued behind it. CPU 1 runs X, whose
/// vruntime is 100 ms past CPU 1's min_vruntime, so every task pulled there
/// (renormalised to that min_vruntime or near it) leads X by more than the
/// 30 ms wakeup granularity of four CPUs.
fn far_right_scene(patched: bool) -> (Scheduler<()>, TaskId) {
    use crate::patches::Patch;
    let mut s = on("q6600", KernelVersion::V2_6_26);
    if patched {
        s.cfg = s.cfg.with_patch(Patch::LastPreempter).unwrap();
        s.rules = s.cfg.rules();
    }
    running_with(&mut s, 0, TaskParams::normal());
    let x = running_with(&mut s, 1, TaskParams::normal());
    let min1 = s.rqs[1].cfs.min_vruntime;
    s.tm(x).se.vruntime = min1 + 100 * MS;
    queue(&mut s, 0, 3, TaskParams::normal(), 0);
    (s, x)
}

#[test]
fn last_preempter_tags_the_task_current_on_the_pulling_cpu() {
    // patches.md §4 tags `se->last_preempter = pse` only `if (se == &current->se)`,
    // where se is the target runqueue's curr. pull_task calls check_preempt_curr
    // (2.6.26 bce7f793 sched.c:2720-2731) on the pulling CPU, where `current` is:
    // - in a periodic pass, the task the tick interrupted: rq->curr (X here);
    // - in a newly idle pass (idle_balance from schedule(), sched.c:4185), prev,
    //   still rq->curr: X, whose sleep dequeue has just cleared its tag.
    // Active balancing runs in the migration thread (an RT task), so nothing is
    // tagged there. Each pulled task leads X by ~100 ms > 30 ms: wakeup_preempt_entity
    // says preempt, so the tag is set whatever the hold-off test decides.
    let (mut s, x) = far_right_scene(true);
    assert_eq!(pull(&mut s, 1024), 1, "one task's worth");
    let p = *s.rqs[1].cfs.timeline().collect::<alloc::vec::Vec<_>>().first().unwrap();
    assert_eq!(s.t(x).se.last_preempter, Some(p), "periodic pull: X is current");

    let (mut s, x) = far_right_scene(true);
    s.tm(x).se.last_preempter = Some(TaskId(999));
    let sw = s.do_schedule(T0, 1, Deschedule::Sleep);
    assert!(sw.pulled >= 1, "CPU 1 went idle and pulled ({})", sw.pulled);
    let p = sw.next.unwrap();
    // X's sleep cleared the old tag; the first pull tagged it afresh, and a
    // second pull within the pass (if any) may only have moved it to another
    // pulled task -- never left it cleared or stale.
    let tag = s.t(x).se.last_preempter;
    assert!(tag.is_some() && tag != Some(TaskId(999)), "newly idle pull: prev is current ({tag:?})");
    assert_eq!(s.t(tag.unwrap()).cpu, 1, "the tag names a task pulled to CPU 1 ({p:?} runs)");

    let (mut s, x) = far_right_scene(true);
    s.move_tasks(1, 0, 1024, (1, 0), crate::observe::MigrateReason::Active, &mut false);
    assert_eq!(s.t(x).se.last_preempter, None, "the migration thread is current: no tag");
}

#[test]
fn last_preempter_tags_a_parent_whose_child_would_preempt_it() {
    // wake_up_new_task runs check_preempt_curr in the parent (2.6.26 sched.c:2282),
    // so on the parent's own CPU `current` is the parent. Single CPU, parent P at
    // vruntime min_vruntime + 100 ms (a queued task Q holds min_vruntime down):
    // the child is placed at min_vruntime + its vslice (START_DEBIT, under the 20 ms
    // latency of one CPU), over 80 ms behind P, more than one CPU's 10 ms wakeup
    // granularity: P is tagged with it.
    use crate::patches::Patch;
    let h = cfs_topology::Host::from_spec("1s1c1t").unwrap();
    let mut c = Config::new(KernelVersion::V2_6_26, 1).with_patch(Patch::LastPreempter).unwrap();
    c.hres_timers = false;
    let mut s: Scheduler<()> = Scheduler::new(c, h.build_domains(KernelVersion::V2_6_26)).unwrap();
    let p = running_with(&mut s, 0, TaskParams::normal());
    queue(&mut s, 0, 1, TaskParams::normal(), 0);
    let min = s.rqs[0].cfs.min_vruntime;
    s.tm(p).se.vruntime = min + 100 * MS;
    let child = s.fork(T0, p, None).unwrap().child;
    assert_eq!(s.t(p).se.last_preempter, Some(child));
}

#[test]
fn a_reschedule_raised_on_a_task_going_idle_waits_for_it_to_run_again() {
    // schedule() clears prev's TIF_NEED_RESCHED on entry (2.6.26 bce7f793
    // sched.c:4169), then, with prev dequeued but still rq->curr, idle_balance
    // pulls; pull_task's check_preempt_curr -> check_preempt_wakeup -> resched_task
    // (rq->curr) sets the flag on prev when the pulled task leads it by more than
    // the wakeup granularity (here ~100 ms against 30 ms). Nothing clears it while
    // prev sleeps, and the test at the end of the schedule() prev slept in
    // (`if (unlikely(test_thread_flag(TIF_NEED_RESCHED))) goto need_resched;`,
    // sched.c:4213-4214) fires when prev is next switched in. Without patches.
    let (mut s, x) = far_right_scene(false);
    let sw = s.do_schedule(T0, 1, Deschedule::Sleep);
    assert!(sw.pulled >= 1 && sw.next.is_some(), "CPU 1 pulled and runs a pulled task");
    assert!(!s.need_resched(1), "the pulled task starts with its own flag clear");
    assert!(s.t(x).need_resched, "the flag stays with X while it sleeps");

    // X wakes on CPU 1 (an interrupt there) and is switched in once the pulled
    // tasks there sleep: it arrives with the flag set, so its CPU reschedules
    // before X does anything.
    s.wake_up_irq(T0 + MS, x, 1, false).unwrap();
    assert_eq!(s.t(x).cpu, 1);
    let mut picked = None;
    for _ in 0..8 {
        let sw = s.do_schedule(T0 + MS, 1, Deschedule::Sleep);
        if sw.next == Some(x) {
            picked = sw.next;
            break;
        }
    }
    assert_eq!(picked, Some(x), "X ran again");
    assert!(s.need_resched(1), "X's stale flag is its CPU's need_resched");
    assert!(!s.t(x).need_resched);
    // That schedule() finds nobody else queued and keeps X, whose flag is now clear.
    let sw = s.do_schedule(T0 + MS, 1, Deschedule::Preempt);
    assert_eq!(sw.next, Some(x), "nobody else is queued: X again, the flag now clear");
    assert!(!s.need_resched(1));
}

// ---------------------------------------------------------------------
// Which runqueue clocks a fork and an affinity move refresh
// ---------------------------------------------------------------------

#[test]
fn a_fork_refreshes_only_the_childs_runqueue_clock() {
    // sched_fork (2.6.26 bce7f793 sched.c:2222-2250) reads no clock; fork
    // balancing picks the idlest CPU from loads; wake_up_new_task (sched.c:2261-2290, the update at :2268)
    // runs update_rq_clock on the child's runqueue alone, which 2.6.25 does only when
    // that runqueue is the parent's own (4b119e21 sched.c:543-547). Parent P runs on
    // CPU 0 of an otherwise idle Q6600 and forks 1 ms after every clock was set.
    for v in [KernelVersion::V2_6_25, KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let mut s = on("q6600", v);
        let p = running_with(&mut s, 0, TaskParams::normal());
        let out = s.fork(T0 + MS, p, None).unwrap();
        assert_ne!(out.cpu, 0, "{v}: fork balancing sends the child to an idle CPU");
        assert_eq!(s.rqs[0].clock, T0, "{v}: the parent's CPU keeps its clock");
        let child_clock = if v == KernelVersion::V2_6_25 { T0 } else { T0 + MS };
        assert_eq!(s.rqs[out.cpu].clock, child_clock, "{v}: the child's runqueue");
        // A child kept on the parent's CPU (P allowed there alone) refreshes it.
        let mut s = on("q6600", v);
        let p = running_with(&mut s, 0, TaskParams::normal().allowed(CpuMask::single(0)));
        let out = s.fork(T0 + MS, p, None).unwrap();
        assert_eq!((out.cpu, s.rqs[0].clock), (0, T0 + MS), "{v}");
    }
}

#[test]
fn moving_a_queued_task_off_a_forbidden_cpu_refreshes_the_destination_but_in_2_6_25() {
    // set_cpus_allowed -> the source CPU's migration thread -> __migrate_task, whose
    // double_rq_lock updates both clocks in 2.6.26 (bce7f793 sched.c:2621-2622) but
    // only the local one in 2.6.25 (4b119e21 sched.c:2374-2375, 543-547). A runs on
    // CPU 0 with B queued behind it; 1 ms on, B may run on CPU 1 only.
    // migrate_task finds B on a runqueue, so it queues a request and wakes the
    // source CPU's migration thread (sched.c:1752-1760, 5585-5588), an RT task
    // that preempts A: B is still on CPU 0 until CPU 0's schedule() runs the
    // thread, and moves then.
    for (v, dest_clock) in [(KernelVersion::V2_6_25, T0), (KernelVersion::V2_6_26, T0 + MS)] {
        let mut s = on("q6600", v);
        let a = running_with(&mut s, 0, TaskParams::normal());
        let b = queue(&mut s, 0, 1, TaskParams::normal(), T0)[0];
        s.rqs[0].need_resched = false;
        s.set_affinity(T0 + MS, b, CpuMask::single(1)).unwrap();
        assert_eq!(s.t(b).cpu, 0, "{v}: the request waits for the thread");
        assert!(s.need_resched(0), "{v}: CPU 0 picks again after the migration thread");
        assert_eq!(s.do_schedule(T0 + MS, 0, Deschedule::Preempt).next, Some(a), "{v}");
        assert_eq!(s.t(b).cpu, 1, "{v}");
        assert_eq!((s.rqs[0].clock, s.rqs[1].clock), (T0 + MS, dest_clock), "{v}");
    }
}

#[test]
fn a_queued_task_moved_by_its_mask_is_translated_after_the_put_back() {
    // set_cpus_allowed queues a request for a queued task too (bce7f793
    // sched.c:1752-1760); CPU 0's migration thread carries it out in CPU 0's
    // schedule(), after put_prev_task has put the running task back in the tree.
    // 2.6.26 on a Q6600: A, B, C spawned on CPU 0 at T0 (START_DEBIT: 58.95,
    // 88.95 and 78.95 ms of vruntime here), A picked; min_vruntime is C's 78.95
    // (the leftmost when C went in). At T0 + 3 ms C may run on CPU 1 only. In
    // CPU 0's schedule() A, charged to 61.95, goes back in as the leftmost
    // (max_vruntime keeps 78.95), then C leaves without being the leftmost, so
    // set_task_cpu translates it by 78.95: C - 78.95 + CPU 1's min_vruntime =
    // CPU 1's min_vruntime exactly. Moved at the write instead, C left as the
    // leftmost, B's 88.95 became min_vruntime first (__dequeue_entity's
    // max_vruntime), and C landed 10 ms lower.
    let v = KernelVersion::V2_6_26;
    let mut s = on("q6600", v);
    let ids: alloc::vec::Vec<TaskId> = (0..3).map(|_| s.spawn(T0, 0, TaskParams::normal()).unwrap()).collect();
    let (a, b, c) = (ids[0], ids[1], ids[2]);
    assert_eq!(s.do_schedule(T0, 0, Deschedule::Preempt).next, Some(a));
    assert!(s.t(a).se.vruntime < s.t(c).se.vruntime && s.t(c).se.vruntime < s.t(b).se.vruntime);
    assert_eq!(s.rqs[0].cfs.min_vruntime, s.t(c).se.vruntime);
    let (vc, src, dst) = (s.t(c).se.vruntime, s.rqs[0].cfs.min_vruntime, s.rqs[1].cfs.min_vruntime);
    s.set_affinity(T0 + 3 * MS, c, CpuMask::single(1)).unwrap();
    assert_eq!(s.t(c).cpu, 0, "the request waits for CPU 0's migration thread");
    assert_eq!(s.do_schedule(T0 + 3 * MS, 0, Deschedule::Preempt).next, Some(a));
    assert_eq!(s.t(c).cpu, 1);
    assert_eq!(s.t(c).se.vruntime, vc.wrapping_sub(src).wrapping_add(dst));
    assert_eq!(s.t(c).se.vruntime, dst);
}

#[test]
fn the_migration_threads_schedule_clears_the_hrtick_prevs_sleep_armed() {
    // With high-resolution timers: CPU 0 runs A with B and C queued, and C's
    // mask becomes CPU 1 alone, a request for CPU 0's migration thread. Then A
    // sleeps. Its dequeue re-arms the hrtick for the running A while the queue
    // still holds B and C (hrtick_start_fair, nr_running > 1). In the kernel
    // A's schedule() picks the thread, which moves C and sleeps in a schedule()
    // of its own that clears the hrtick on entry (bce7f793 sched.c:4161) and
    // picks B alone, arming nothing (hrtick_start_fair needs nr_running > 1).
    // The port did both in one schedule() and kept the stale timer, which
    // would later fire a reschedule of B for nothing.
    for v in [KernelVersion::V2_6_25, KernelVersion::V2_6_26Rc4, KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let h = cfs_topology::Host::preset("q6600").unwrap();
        let mut c = Config::new(v, 4);
        c.hres_timers = true;
        let mut s: Scheduler<()> = Scheduler::new(c, h.build_domains(v)).unwrap();
        let a = running_with(&mut s, 0, TaskParams::normal());
        let b = s.spawn(T0, 0, TaskParams::normal()).unwrap();
        let c = s.spawn(T0, 0, TaskParams::normal()).unwrap();
        s.set_affinity(T0 + MS, c, CpuMask::single(1)).unwrap();
        let sw = s.do_schedule(T0 + MS, 0, Deschedule::Sleep);
        assert_eq!((sw.prev, sw.next), (Some(a), Some(b)), "{v}");
        assert_eq!((s.t(c).cpu, s.rqs[0].nr_running), (1, 1), "{v}");
        assert_eq!(s.rqs[0].hrtick_expire, None, "{v}");
    }
}

#[test]
fn a_kicked_cpu_balances_actively_before_it_balances_newly_idle() {
    // An active-balance kick wakes the busiest CPU's migration thread (2.6.26
    // bce7f793 sched.c:3362; rc4 e490517a :3697). While that RT thread is queued, schedule() skips
    // idle_balance (`if (unlikely(!rq->nr_running))` counts it) and picks the
    // thread, whose active_load_balance finds no fair task left to push
    // (bce7f793 sched.c:3548); newly idle balancing happens in the schedule() the thread
    // makes as it sleeps. So a CPU kicked to push to CPU 1 whose last task then
    // sleeps pushes nothing, and then pulls. Q6600: CPU 0 runs A alone and is
    // kicked (push_cpu 1); CPU 2 runs a task with nine cold ones queued, its
    // cpu_load[] set to its ten tasks (a newly idle pass at CPU level reads
    // newidle_idx 2). Balancing newly idle first, as the port did, pulled
    // several and then pushed one of them on to CPU 1.
    let mut s = on("q6600", KernelVersion::V2_6_26);
    running_with(&mut s, 0, TaskParams::normal());
    running_with(&mut s, 2, TaskParams::normal());
    queue(&mut s, 2, 9, TaskParams::normal(), 0);
    s.rqs[2].cpu_load = [10 * 1024; crate::rq::CPU_LOAD_IDX_MAX];
    s.rqs[0].active_balance = true;
    s.rqs[0].push_cpu = 1;
    let sw = s.do_schedule(T0 + MS, 0, Deschedule::Sleep);
    assert!(!s.rqs[0].active_balance);
    assert!(sw.pulled >= 2 && sw.next.is_some(), "CPU 0 pulled from CPU 2 ({})", sw.pulled);
    assert_eq!(s.rqs[1].nr_running, 0, "nothing was pushed on to CPU 1");
    assert!(!s.need_resched(0), "the pulls were checked against the RT thread: no flag");
}

// ---------------------------------------------------------------------
// Power-savings balancing: find_busiest_group's group_min and group_leader
// ---------------------------------------------------------------------

/// The power-savings figures over two groups of two CPUs each (capacity 2),
/// visited as CPU 2 visits its CPU-level domain on a two-socket box: the
/// local group {2,3} first, then {0,1}, each running one task of 1024.
/// Both groups have room (1 < 2) and work (1 > 0), so both are candidates.
/// - 2.6.26 (bce7f793 sched.c:3064-3082): group_min is the fewest tasks,
///   ties to the lower first CPU: {0,1} (0 < 2); group_leader the most
///   tasks with room, ties to the higher first CPU: {2,3} stays (0 > 2 is
///   false). The local group leads, so out_balanced returns {0,1} with one
///   task's weight, 1024 / 1: CPU 0's task is to come over.
/// - 2.6.32 (22763c5c sched.c:3517-3540) breaks both ties the other way:
///   group_min stays {2,3} (0 > 2 false), the leader becomes {0,1} (0 < 2),
///   so CPU 2 pulls nothing (CPU 0 would pull from it).
#[test]
fn power_savings_pick_the_group_to_empty_and_the_one_to_fill() {
    use crate::balance::{CpuIdleType, PowerSavingsStats};
    use cfs_topology::SdFlags;
    let one = group(1024, 1, 2, false);
    let pick = |v32: bool, flags: SdFlags, idle: CpuIdleType, local: &SgLbStats, other: &SgLbStats| {
        let mut ps = PowerSavingsStats::new(flags, idle, v32);
        ps.update(0, 2, true, local.sum_nr_running, local);
        ps.update(1, 0, false, local.sum_nr_running, other);
        ps.busiest(Some(0)).map(|b| (b.group, b.imbalance))
    };
    let on = SdFlags::POWERSAVINGS_BALANCE;
    assert_eq!(pick(false, on, CpuIdleType::Idle, &one, &one), Some((1, 1024)));
    assert_eq!(pick(false, on, CpuIdleType::NewlyIdle, &one, &one), Some((1, 1024)));
    assert_eq!(pick(true, on, CpuIdleType::Idle, &one, &one), None);
    // The mirror, as CPU 0 visits its domain (local {0,1} first, then
    // {2,3}): 2.6.26 keeps the local group as group_min (2 < 0 is false)
    // and makes {2,3} the leader (2 > 0), so CPU 0 pulls nothing; 2.6.32
    // makes {2,3} group_min (2 > 0) and keeps the local leader (2 < 0 is
    // false), so CPU 0 pulls {2,3}'s task. Each of 2.6.32's two tie rules
    // flipped alone would answer None here.
    let mirror = |v32: bool| {
        let mut ps = PowerSavingsStats::new(on, CpuIdleType::Idle, v32);
        ps.update(0, 0, true, 1, &one);
        ps.update(1, 2, false, 1, &one);
        ps.busiest(Some(0)).map(|b| (b.group, b.imbalance))
    };
    assert_eq!((mirror(false), mirror(true)), (None, Some((1, 1024))));
    // A busy CPU takes no part, nor a domain without the flag.
    assert_eq!(pick(false, on, CpuIdleType::NotIdle, &one, &one), None);
    assert_eq!(pick(false, SdFlags::empty(), CpuIdleType::Idle, &one, &one), None);
    // The local group idle (0 tasks) or full (2 of 2): nothing to save here.
    assert_eq!(pick(false, on, CpuIdleType::Idle, &group(0, 0, 2, false), &one), None);
    assert_eq!(pick(false, on, CpuIdleType::Idle, &group(2048, 2, 2, false), &one), None);
    // A full other group is no candidate: the leader is the group_min.
    assert_eq!(pick(false, on, CpuIdleType::Idle, &one, &group(2048, 2, 2, false)), None);
    // Fewer tasks win group_min outright, whatever the tie rule: a local
    // group of 3 in 4 leads against another of 1 in 4 (weight 3121, nice -5:
    // min_load_per_task 3121 / 1) under both versions.
    let three = group(3072, 3, 4, false);
    let mut heavy = group(3121, 1, 4, false);
    heavy.sum_weighted_load = 3121;
    for v32 in [false, true] {
        assert_eq!(pick(v32, on, CpuIdleType::Idle, &three, &heavy), Some((1, 3121)), "2.6.32: {v32}");
    }
}

/// Consolidation onto one socket under sched_mc_power_savings = 1
/// (Stoakley, 2.6.26): the CPU level's groups are the sockets, each of
/// power 4 x 1024 (capacity 4), with SD_POWERSAVINGS_BALANCE
/// (cfs-topology's `PowerSavings`). Socket 0 runs A on CPU 0 with B queued
/// there; socket 1 runs C alone on CPU 4. Idle CPU 1 balances the CPU
/// level (idle_idx 1, no tick yet, so every cpu_load is 0):
/// - the balance figures: local {0-3} target_load 2048 over 4096 of power,
///   avg 512; {4-7} source_load min(0, 1024) = 0, so no group is busiest
///   (0 > 0 fails) and the domain is balanced (find_busiest_group's
///   out_balanced);
/// - the power figures (bce7f793 sched.c:3040-3084): local 2 tasks < 4,
///   group_min and group_leader; {4-7} 1 task: group_min (1 < 2), with
///   min_load_per_task 1024; the local group still leads (1 > 2 fails), so
///   {4-7} is returned with an imbalance of 1024;
/// - find_busiest_queue takes CPU 4 (one task of 1024, not above 1024),
///   whose only task runs: each pass fails, and the fourth, past
///   cache_nice_tries + 2 = 3, kicks CPU 4's migration thread to push C to
///   CPU 1 (load_balance, sched.c:3346-3370). (2.6.26's migration thread
///   then pushes nothing: move_one_task's iterator never returns the last
///   entry of the task list, so a lone task stays; cfs-machine's
///   `a_power_savings_write_rebuilds_the_domains_and_consolidates` runs it.)
///
/// With the flag cleared from the same domains the pass finds no busiest
/// group, resets the failure count and kicks nothing. 2.6.32 goes the same
/// way (22763c5c) under sched_smt_power_savings = 1: the sockets' power is
/// the sum of their four cores, 4096, capacity DIV_ROUND_CLOSEST(4096,
/// 1024) = 4, MC has traded SD_PREFER_SIBLING for the flag
/// (sd_balance_for_mc_power), the tie-breaks do not arise (1 task against
/// 2), and load_balance's test for an active push is the same
/// `nr_balance_failed > cache_nice_tries + 2` (sched.c:4200). Under
/// sched_mc_power_savings = 1 alone MC keeps SD_PREFER_SIBLING, which caps
/// each socket's capacity at 1 (update_sd_lb_stats, :3832-3838): socket 0
/// (2 tasks) is full, so the power pick is off, and nothing is kicked.
#[test]
fn power_savings_pull_the_lone_task_of_a_lightly_loaded_socket() {
    use crate::balance::CpuIdleType;
    use cfs_topology::builder::{BuildOptions, PowerSavings};
    use cfs_topology::{DomainLevel, Host, SdFlags};
    let scene = |v: KernelVersion, flag: bool| {
        let h = Host::preset("stoakley").unwrap();
        let power_savings = if v.is_2_6_32() { PowerSavings { mc: 0, smt: 1 } } else { PowerSavings { mc: 1, smt: 0 } };
        let opts = BuildOptions { power_savings, ..BuildOptions::default() };
        let mut d = h.build_domains_with(v, &opts);
        if !flag {
            d.override_flags(DomainLevel::Cpu, SdFlags::empty(), SdFlags::POWERSAVINGS_BALANCE);
        }
        let mut c = crate::Config::new(v, 8);
        c.hres_timers = false;
        let mut s = Scheduler::new(c, d).unwrap();
        let c_task = two_sockets_loaded(&mut s, TaskParams::normal());
        (s, c_task)
    };
    let pass = |s: &mut Scheduler<()>| {
        let moved = s.load_balance(1, 1, CpuIdleType::Idle, &mut true);
        (moved, s.dstate[1][1].nr_balance_failed)
    };
    for v in [KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let (mut s, c_task) = scene(v, true);
        let powers: alloc::vec::Vec<u32> = s.domains.of(1)[1].groups.iter().map(|g| g.cpu_power).collect();
        assert_eq!(powers, [4096, 4096], "{v}");
        for failed in 1..=3 {
            assert_eq!(pass(&mut s), (0, failed), "{v}");
            assert!(!s.rqs[4].active_balance, "{v}");
        }
        assert_eq!(pass(&mut s), (0, 2), "{v}");
        assert!(s.rqs[4].active_balance && s.rqs[4].push_cpu == 1 && s.rqs[4].need_resched, "{v}");
        assert_eq!(s.t(c_task).cpu, 4, "{v}: the push is the migration thread's");
        let (mut s, _) = scene(v, false);
        for _ in 0..5 {
            assert_eq!(pass(&mut s), (0, 0), "{v}");
        }
        assert!(!s.rqs[4].active_balance, "{v}");
    }
    let mut s = stoakley_32_with(1, 0);
    two_sockets_loaded(&mut s, TaskParams::normal());
    for _ in 0..5 {
        assert_eq!(pass(&mut s), (0, 0), "2.6.32, MC knob alone");
    }
    assert!(!s.rqs[4].active_balance);
}

/// The consolidation scene of the power-savings pins on Stoakley: socket 0
/// runs A on CPU 0 with B queued behind it (cache-cold), socket 1 runs C,
/// of `c`'s parameters, alone on CPU 4. Returns C.
fn two_sockets_loaded(s: &mut Scheduler<()>, c: TaskParams) -> TaskId {
    running_with(s, 0, TaskParams::normal());
    queue(s, 0, 1, TaskParams::normal(), 0);
    running_with(s, 4, c)
}

/// 2.6.32 with CONFIG_NO_HZ and power savings: a Stoakley (sockets 0-3 and
/// 4-7) built with these knobs. With either on, MC spans the socket and
/// the CPU level, whose groups are the sockets, has SD_POWERSAVINGS_BALANCE;
/// MC has it (in place of SD_PREFER_SIBLING) only with the SMT knob. A
/// Stoakley has no SMT, so no kernel on it has the SMT knob's file
/// (`PowerSavings::knob_exists`; the command line refuses it): with smt 1
/// these pins build that state directly, to take the arithmetic on the
/// simplest two-socket box.
fn stoakley_32_with(mc: u8, smt: u8) -> Scheduler<()> {
    stoakley_32_at(KernelVersion::V2_6_32, mc, smt)
}

/// [`stoakley_32_with`] under `v` (2.6.32-rc1 has the same power-savings
/// code, 17d857be; 2.6.26 has none of it outside find_busiest_group).
fn stoakley_32_at(v: KernelVersion, mc: u8, smt: u8) -> Scheduler<()> {
    use cfs_topology::builder::{BuildOptions, PowerSavings};
    let h = cfs_topology::Host::preset("stoakley").unwrap();
    let power_savings = PowerSavings { mc, smt };
    let mut c = Config::new(v, 8);
    (c.hres_timers, c.nohz, c.power_savings) = (false, true, power_savings);
    Scheduler::new(c, h.build_domains_with(v, &BuildOptions { power_savings, ..BuildOptions::default() })).unwrap()
}

/// `find_new_ilb` (22763c5c sched.c:4586-4629). CPUs 0, 4 and 5 busy,
/// the rest tickless: mask {1,2,3,6,7}. Asked by CPU 5, the walk starts at
/// the lowest domain with SD_POWERSAVINGS_BALANCE, the CPU level, whose
/// groups run from CPU 5's own socket: {4-7} holds tickless 6 and 7 and
/// busy 4 and 5, so it is semi-idle, and its first tickless CPU, 6, is the
/// nominee. Without power savings (or in 2.6.26) the nominee is the first
/// tickless CPU, 1. With socket 1 all tickless and socket 0 all busy
/// (mask {4-7}) neither group is semi-idle and the first tickless CPU, 4,
/// is taken; with one tickless CPU the walk is skipped.
///
/// The same in 2.6.32-rc1 (17d857be, the same code). A CPU leaving nohz
/// mode busy with the role vacant kicks that nominee
/// (trigger_load_balance, sched.c:4869-4882): CPU 5 kicks CPU 6, not 1.
#[test]
fn the_2_6_32_idle_load_balancer_is_nominated_in_a_semi_idle_package() {
    let mask = |cpus: &[usize]| CpuMask::from_cpus(cpus.iter().copied());
    let mut rc1 = stoakley_32_at(KernelVersion::V2_6_32Rc1, 1, 0);
    rc1.nohz.cpu_mask = mask(&[1, 2, 3, 6, 7]);
    assert_eq!(rc1.find_new_ilb(5), Some(6));
    let mut s = stoakley_32_with(1, 0);
    s.nohz.cpu_mask = mask(&[1, 2, 3, 6, 7]);
    assert_eq!(s.find_new_ilb(5), Some(6));
    for (mc, kicked) in [(1, 6), (0, 1)] {
        let mut t = stoakley_32_with(mc, 0);
        t.nohz.cpu_mask = mask(&[1, 2, 3, 6, 7]);
        (t.rqs[5].in_nohz_recently, t.rqs[5].idle_at_tick) = (true, false);
        t.trigger_load_balance(5);
        let kicked_cpus: alloc::vec::Vec<usize> = (0..8).filter(|&c| t.rqs[c].need_resched).collect();
        assert_eq!(kicked_cpus, [kicked], "mc {mc}");
    }
    for mut off in [stoakley_32_with(0, 0), stoakley_32_at(KernelVersion::V2_6_26, 1, 0)] {
        off.nohz.cpu_mask = mask(&[1, 2, 3, 6, 7]);
        assert_eq!(off.find_new_ilb(5), Some(1));
    }
    s.nohz.cpu_mask = mask(&[4, 5, 6, 7]);
    assert_eq!(s.find_new_ilb(1), Some(4));
    s.nohz.cpu_mask = mask(&[6]);
    assert_eq!(s.find_new_ilb(1), Some(6));
}

/// The owner's re-check as it stops its tick again
/// (select_nohz_load_balancer, 22763c5c sched.c:4692-4708): CPU 1 owns the
/// role with socket 0 all tickless and CPUs 4 and 5 busy (mask {0,1,2,3,6,7}
/// once CPU 1 is in it). Its own socket is not semi-idle; socket 1 is, so it
/// hands the role to CPU 6 (kicked to take it) and lets its tick stop.
/// Without power savings it keeps the role and its tick. An owner that is
/// itself the nominee (CPU 1 with CPU 0 busy: socket 0 semi-idle, and 1 its
/// first tickless CPU) keeps the role.
#[test]
fn a_2_6_32_owner_on_an_idle_package_hands_the_balancer_on() {
    let mask = CpuMask::from_cpus([0, 2, 3, 6, 7]);
    for (mc, keeps) in [(1, false), (0, true)] {
        let mut s = stoakley_32_with(mc, 0);
        (s.nohz.cpu_mask, s.nohz.load_balancer) = (mask, Some(1));
        assert_eq!(s.select_nohz_load_balancer(1, true), keeps, "mc {mc}");
        let owner = if keeps { Some(1) } else { None };
        assert_eq!(s.nohz.load_balancer, owner, "mc {mc}");
        assert_eq!(s.rqs[6].need_resched, !keeps, "mc {mc}: CPU 6 kicked");
    }
    let mut s = stoakley_32_with(1, 0);
    (s.nohz.cpu_mask, s.nohz.load_balancer) = (CpuMask::from_cpus([2, 3, 6, 7]), Some(1));
    assert!(s.select_nohz_load_balancer(1, true));
    assert_eq!(s.nohz.load_balancer, Some(1));
    assert!((0..8).all(|c| !s.rqs[c].need_resched));
}

/// 2.6.32's newly idle consolidation at sched_mc_power_savings = 2
/// (POWERSAVINGS_BALANCE_WAKEUP, 22763c5c sched.c:4342-4404), with
/// sched_smt_power_savings = 1 so that MC drops SD_PREFER_SIBLING (see
/// `power_savings_pull_the_lone_task_of_a_lightly_loaded_socket`). CPU 0
/// runs A with B queued, CPU 4 runs C alone; CPU 1, newly idle, balances
/// the CPU level (its groups the sockets, capacity 4): socket 1 is the
/// busiest group (its one task spread unevenly, CPU 4's source_load 1024
/// against 0 on CPUs 5-7, sets group_imb), but the local socket leads
/// (this_load 512 >= max_load 256), so the domain counts as balanced, and
/// the power pick names socket 1 (1 task against 2, as in
/// `power_savings_pull_the_lone_task_of_a_lightly_loaded_socket`), whose
/// busiest queue, CPU 4, has one task: nothing is moved. At level 1 that
/// answers -1 (idle_balance stops) every time. At level 2 the first two
/// failures answer -1 too (`nr_balance_failed++ < 2`), and the third kicks
/// CPU 4's migration thread (a reschedule of CPU 4) to push C to CPU 1 and
/// answers 0. With C pinned to CPU 4 the third answers 0 and kicks nothing
/// (busiest->curr's cpus_allowed, sched.c:4385-4389).
#[test]
fn the_2_6_32_newly_idle_cpu_consolidates_at_power_savings_level_2() {
    for (mc, kicked_at) in [(1, None), (2, Some(3))] {
        let mut s = stoakley_32_with(mc, 1);
        two_sockets_loaded(&mut s, TaskParams::normal());
        for pass in 1..=4 {
            let kicked = kicked_at.is_some_and(|k| pass >= k);
            let want = if kicked_at == Some(pass) || (kicked && pass > 3) { 0 } else { -1 };
            assert_eq!(s.load_balance_newidle(1, 1), want, "mc {mc} pass {pass}");
            assert_eq!(s.rqs[4].active_balance, kicked, "mc {mc} pass {pass}");
        }
        if kicked_at.is_some() {
            assert!(s.rqs[4].push_cpu == 1 && s.rqs[4].need_resched);
        }
    }
    let mut s = stoakley_32_with(2, 1);
    two_sockets_loaded(&mut s, TaskParams::normal().allowed(CpuMask::single(4)));
    let answers: alloc::vec::Vec<i32> = (0..3).map(|_| s.load_balance_newidle(1, 1)).collect();
    assert_eq!(answers, [-1, -1, 0]);
    assert!(!s.rqs[4].active_balance && !s.rqs[4].need_resched);
}
