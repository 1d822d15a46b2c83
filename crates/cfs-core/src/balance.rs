//! Load balancing over the sched domains (2.6.26 `kernel/sched.c`,
//! bce7f793, lines 2737-3790): `rebalance_domains`, `load_balance`,
//! `load_balance_newidle`, `idle_balance`, `active_load_balance`,
//! `find_busiest_group`, `find_busiest_queue`, `move_tasks` /
//! `balance_tasks`, `move_one_task`, `can_migrate_task` and `task_hot`.
//!
//! Deliberate 2.6.26 quirks kept (kernel-reference.md §8.3):
//! - the fair load-balance iterator walks the cfs_rq `tasks` list from the
//!   most recently enqueued task and never returns the *last* (oldest)
//!   entry (fixed only in 2.6.28 by 38736f47507, the `iterator-fix`
//!   patch); 2.6.25 walks the rbtree from the leftmost instead;
//! - `sg_div_cpu_power` truncates its load argument to 32 bits;
//! - SMT domains return -1 ("treat as busy") from load_balance when idle
//!   siblings found nothing, which stops idle_balance's walk.
//!
//! Power-savings balancing is find_busiest_group's pick in a domain with
//! SD_POWERSAVINGS_BALANCE (`PowerSavingsStats`), which the builder sets
//! from `sched_mc_power_savings` / `sched_smt_power_savings`, and 2.6.32's
//! newly idle consolidation at level 2. Not modelled: the SD_SERIALIZE
//! lock (one balancer runs at a time anyway). NO_HZ idle load balancing is
//! in [`crate::nohz`].

use crate::entity::TaskId;
use crate::features::Feature;
use crate::observe::{BalanceVerdict, Event, MigrateReason, Observer};
use crate::sched::Scheduler;
use crate::tunables::Tunables;
use crate::wakeup::sg_div_cpu_power;
use alloc::vec::Vec;
use cfs_topology::{CpuId, CpuMask, SchedDomain, SchedGroup, SdFlags};

/// `SCHED_LOAD_SCALE_FUZZ`.
const LOAD_FUZZ: u64 = 1024;
/// `MAX_PINNED_INTERVAL`, ms.
const MAX_PINNED_INTERVAL: u32 = 512;
/// `MAX_PRIO`: the idle task's priority.
const MAX_PRIO: i32 = 140;

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuIdleType {
    /// CPU_IDLE: balancing from an idle tick.
    Idle,
    /// CPU_NOT_IDLE.
    NotIdle,
    /// CPU_NEWLY_IDLE: from schedule() about to go idle.
    NewlyIdle,
}

/// How a load_balance pass leaves by its `out_balanced:` /
/// `out_one_pinned:` labels: the balancing CPU, the domain, the idle type,
/// and `sd_idle` as the search left it.
#[derive(Clone, Copy, Debug)]
struct Out {
    this_cpu: CpuId,
    sd_i: usize,
    idle: CpuIdleType,
    sd_idle: bool,
}

/// A search that comes up empty after a pass found only pinned tasks ends
/// as all-pinned (the kernel keeps `all_pinned` across its `redo:`).
fn pinned_or(all_pinned: bool, otherwise: BalanceVerdict) -> BalanceVerdict {
    if all_pinned { BalanceVerdict::AllPinned } else { otherwise }
}

/// What find_busiest_group decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusiestGroup {
    /// Index of the busiest group in the domain's group list.
    pub group: usize,
    /// Weighted load to move.
    pub imbalance: u64,
}

/// `get_sd_load_idx(sd, idle)` (2.6.32): the domain's cpu_load index for
/// this kind of balancing; 2.6.25/26 pick it the same way inline in
/// find_busiest_group.
pub(crate) fn get_sd_load_idx(sd: &SchedDomain, idle: CpuIdleType) -> u8 {
    match idle {
        CpuIdleType::NotIdle => sd.params.busy_idx,
        CpuIdleType::NewlyIdle => sd.params.newidle_idx,
        CpuIdleType::Idle => sd.params.idle_idx,
    }
}

/// `struct sg_lb_stats` (2.6.32): one group's figures in find_busiest_group
/// (2.6.25/26 keep them in locals of find_busiest_group).
/// [`Scheduler::update_sg_lb_stats`] sums the CPUs; `avg_load`,
/// `group_capacity` and `group_imb` are then set by each version's
/// find_busiest_group, as they are computed differently.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SgLbStats {
    /// `group_load` per unit of the group's cpu_power, × SCHED_LOAD_SCALE.
    pub(crate) avg_load: u64,
    /// target_load (local group) or source_load (the others) summed over
    /// the group's CPUs in `cpus`, wrapping like the kernel's unsigned long.
    pub(crate) group_load: u64,
    /// nr_running summed.
    pub(crate) sum_nr_running: u64,
    /// weighted_cpuload summed (wrapping).
    pub(crate) sum_weighted_load: u64,
    /// cpu_avg_load_per_task summed (wrapping): 2.6.32 only, 0 when the
    /// caller did not ask for it.
    pub(crate) sum_avg_load_per_task: u64,
    /// Highest source_load of a non-local group's CPUs; 0 when none was
    /// read (the local group, or no CPU of the group in `cpus`).
    pub(crate) max_cpu_load: u64,
    /// Lowest such source_load; `~0UL` when none was read.
    pub(crate) min_cpu_load: u64,
    /// How many tasks the group runs without being overloaded.
    pub(crate) group_capacity: u64,
    /// The group's CPUs are unbalanced among themselves.
    pub(crate) group_imb: bool,
}

/// `struct sd_lb_stats` (2.6.32): what find_busiest_group gathers over the
/// domain's groups (2.6.25/26 keep the same figures in locals of
/// find_busiest_group). Groups are indices into the domain's group list;
/// `this_pwr` / `busiest_pwr` are those groups' cpu_power as the version
/// reads it (2.6.32 takes it as at least 1).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SdLbStats {
    /// The busiest group.
    pub(crate) busiest: Option<usize>,
    /// The local group (it holds this_cpu).
    pub(crate) this: Option<usize>,
    /// group_load summed over the groups (wrapping).
    pub(crate) total_load: u64,
    /// cpu_power summed over the groups.
    pub(crate) total_pwr: u64,
    /// total_load per unit of total_pwr, × SCHED_LOAD_SCALE.
    pub(crate) avg_load: u64,
    /// The local group's avg_load.
    pub(crate) this_load: u64,
    /// The local group's sum_nr_running.
    pub(crate) this_nr_running: u64,
    /// The local group's sum_weighted_load (divided by this_nr_running
    /// only in the small-imbalance step).
    pub(crate) this_load_per_task: u64,
    /// The local group's cpu_power.
    pub(crate) this_pwr: u64,
    /// The busiest group's avg_load.
    pub(crate) max_load: u64,
    /// The busiest group's sum_nr_running.
    pub(crate) busiest_nr_running: u64,
    /// The busiest group's sum_weighted_load, per task once
    /// [`SdLbStats::busiest_if_imbalanced`] has run.
    pub(crate) busiest_load_per_task: u64,
    /// The busiest group's cpu_power.
    pub(crate) busiest_pwr: u64,
    /// The busiest group is unbalanced among its CPUs.
    pub(crate) group_imb: bool,
}

impl SdLbStats {
    /// The per-group step of `update_sd_lb_stats` (2.6.32, 22763c5c
    /// sched.c:3801-3860) after update_sg_lb_stats, the same in 2.6.26's
    /// find_busiest_group loop: add the group to the totals; the local group
    /// is `this`; another group becomes the busiest when its avg_load is the
    /// highest so far and it runs more tasks than its capacity or is
    /// imbalanced. `power` is the group's cpu_power as the version reads it.
    pub(crate) fn update(&mut self, gi: usize, local: bool, power: u64, sgs: &SgLbStats) {
        self.total_load = self.total_load.wrapping_add(sgs.group_load);
        self.total_pwr += power;
        if local {
            self.this_load = sgs.avg_load;
            self.this = Some(gi);
            self.this_nr_running = sgs.sum_nr_running;
            self.this_load_per_task = sgs.sum_weighted_load;
            self.this_pwr = power;
        } else if sgs.avg_load > self.max_load && (sgs.sum_nr_running > sgs.group_capacity || sgs.group_imb) {
            self.max_load = sgs.avg_load;
            self.busiest = Some(gi);
            self.busiest_nr_running = sgs.sum_nr_running;
            self.busiest_load_per_task = sgs.sum_weighted_load;
            self.busiest_pwr = power;
            self.group_imb = sgs.group_imb;
        }
    }

    /// The `goto out_balanced` tests of `find_busiest_group` (2.6.32
    /// sched.c:3993-4068, the same in 2.6.26 find_busiest_group): the
    /// busiest group, or `None` when the domain counts as balanced. Sets
    /// `avg_load` and turns `busiest_load_per_task` into a per-task load
    /// (capped at avg_load for an imbalanced group).
    pub(crate) fn busiest_if_imbalanced(&mut self, imbalance_pct: u32) -> Option<usize> {
        // No local group (this_cpu outside the domain's groups) counts as
        // balanced as well.
        let (busiest, _this) = (self.busiest?, self.this?);
        if self.this_load >= self.max_load || self.busiest_nr_running == 0 {
            return None;
        }
        // total_pwr is 0 only when 2.6.25/26 groups carry no cpu_power
        // (2.6.32 counts each group as at least 1), where the kernel would
        // divide by zero: take 0.
        self.avg_load = 1024u64.wrapping_mul(self.total_load).checked_div(self.total_pwr).unwrap_or(0);
        if self.this_load >= self.avg_load
            || 100u64.wrapping_mul(self.max_load) <= imbalance_pct as u64 * self.this_load
        {
            return None;
        }
        self.busiest_load_per_task /= self.busiest_nr_running;
        if self.group_imb {
            self.busiest_load_per_task = self.busiest_load_per_task.min(self.avg_load);
        }
        if self.max_load <= self.busiest_load_per_task {
            return None;
        }
        Some(busiest)
    }

    /// `calculate_imbalance` (2.6.32 sched.c:3932-3965, the same in 2.6.26
    /// find_busiest_group): the weighted load to pull, as much as brings
    /// neither group past the domain average, and whether the small
    /// imbalance step (`fix_small_imbalance` in 2.6.32, inline in 2.6.26)
    /// must look again: the busiest group is below the average, or the pull
    /// is less than one of its tasks.
    pub(crate) fn calculate_imbalance(&self) -> (u64, bool) {
        if self.max_load < self.avg_load {
            return (0, true);
        }
        // Don't pull so many tasks that a group would go idle.
        let max_pull = (self.max_load - self.avg_load).min(self.max_load - self.busiest_load_per_task);
        let imbalance =
            max_pull.wrapping_mul(self.busiest_pwr).min((self.avg_load - self.this_load).wrapping_mul(self.this_pwr))
                / 1024;
        (imbalance, imbalance < self.busiest_load_per_task)
    }

    /// `fix_small_imbalance` (2.6.32 sched.c:3868-3925; the
    /// `small_imbalance:` part of 2.6.26 find_busiest_group): when the pull
    /// [`SdLbStats::calculate_imbalance`] found is less than one task of the
    /// busiest group, pull one task anyway if that evens the two groups out
    /// or raises the CPU power in use. Returns the imbalance: `imbalance`
    /// unchanged, or busiest_load_per_task.
    ///
    /// The versions differ in three operands, which the caller gives:
    /// - `slack`, added to max_load - this_load before the comparison with
    ///   imbn tasks: SCHED_LOAD_SCALE_FUZZ in 2.6.25/26,
    ///   busiest_load_per_task in 2.6.32;
    /// - `empty_load_per_task`, the local group's load per task when it runs
    ///   no task: SCHED_LOAD_SCALE in 2.6.25/26,
    ///   cpu_avg_load_per_task(this_cpu) in 2.6.32 (called only then);
    /// - `per_power(power, load)`, load divided by a group's power:
    ///   sg_div_cpu_power in 2.6.25/26, a plain division in 2.6.32.
    pub(crate) fn fix_small_imbalance(
        &self,
        imbalance: u64,
        slack: u64,
        empty_load_per_task: impl FnOnce() -> u64,
        per_power: impl Fn(u64, u64) -> u64,
    ) -> u64 {
        let (max_load, this_load, busiest_lpt) = (self.max_load, self.this_load, self.busiest_load_per_task);
        let (bp, tp) = (self.busiest_pwr, self.this_pwr);
        let mut imbn = 2;
        let this_lpt = match self.this_load_per_task.checked_div(self.this_nr_running) {
            Some(per_task) => {
                if busiest_lpt > per_task {
                    imbn = 1;
                }
                per_task
            }
            None => empty_load_per_task(),
        };
        // unsigned long arithmetic, wrapping as the kernel's would (2.6.32's
        // powers come from APERF/MPERF, whatever those read).
        if max_load.wrapping_sub(this_load).wrapping_add(slack) >= busiest_lpt.wrapping_mul(imbn) {
            return busiest_lpt;
        }
        // The CPU power in use now, and after moving one task: the load the
        // busiest group would lose and the local group would gain.
        let pwr_now =
            bp.wrapping_mul(busiest_lpt.min(max_load)).wrapping_add(tp.wrapping_mul(this_lpt.min(this_load))) / 1024;
        let mut pwr_move: u64 = 0;
        let tmp = per_power(bp, busiest_lpt.wrapping_mul(1024));
        if max_load > tmp {
            pwr_move = pwr_move.wrapping_add(bp.wrapping_mul(busiest_lpt.min(max_load - tmp)));
        }
        let tmp = if max_load.wrapping_mul(bp) < busiest_lpt.wrapping_mul(1024) {
            per_power(tp, max_load.wrapping_mul(bp))
        } else {
            per_power(tp, busiest_lpt.wrapping_mul(1024))
        };
        pwr_move = pwr_move.wrapping_add(tp.wrapping_mul(this_lpt.min(this_load.wrapping_add(tmp))));
        pwr_move /= 1024;
        // Move if we gain throughput.
        if pwr_move > pwr_now { busiest_lpt } else { imbalance }
    }
}

/// The power-savings figures of find_busiest_group (2.6.25/26: locals
/// under `CONFIG_SCHED_MC || CONFIG_SCHED_SMT`, bce7f793 sched.c:2933-2937,
/// 3040-3084, 3205-3214; 2.6.32: the `sd_lb_stats` fields filled by
/// init_sd_power_savings_stats, update_sd_power_savings_stats and read by
/// check_power_save_busiest_group, 22763c5c sched.c:3456-3573). In a
/// domain with SD_POWERSAVINGS_BALANCE, balanced by a CPU that is idle,
/// they name the group running the fewest tasks below its capacity
/// (`group_min`, whose tasks could go elsewhere so its CPUs idle) and the
/// group running the most tasks while it still has room for one more
/// (`group_leader`). When the domain is balanced and the local group is
/// the leader, the balancer pulls from `group_min` one task's weight
/// (`min_load_per_task`): consolidation onto fewer packages or cores.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PowerSavingsStats {
    /// Power-savings balancing applies in this pass.
    pub(crate) balance: bool,
    /// The group with the least non-idle load, with its first CPU.
    pub(crate) group_min: Option<(usize, CpuId)>,
    /// The group that can take that load, with its first CPU.
    pub(crate) group_leader: Option<(usize, CpuId)>,
    /// group_min's sum_weighted_load / sum_nr_running.
    pub(crate) min_load_per_task: u64,
    /// group_leader's sum_nr_running.
    pub(crate) leader_nr_running: u64,
    /// group_min's sum_nr_running (`ULONG_MAX` before any).
    pub(crate) min_nr_running: u64,
    /// The tie-breaks of the two versions, by a group's first CPU:
    /// 2.6.25/26 keep the lower first CPU as group_min and the higher as
    /// group_leader; 2.6.32 the other way round.
    pub(crate) ties_2_6_32: bool,
}

impl PowerSavingsStats {
    /// The start of a pass (`init_sd_power_savings_stats`; 2.6.26's
    /// initialised locals and its `idle == CPU_NOT_IDLE ||
    /// !(sd->flags & SD_POWERSAVINGS_BALANCE)` test, which it makes per
    /// group and again at out_balanced, to the same effect).
    pub(crate) fn new(flags: SdFlags, idle: CpuIdleType, ties_2_6_32: bool) -> Self {
        PowerSavingsStats {
            balance: idle != CpuIdleType::NotIdle && flags.contains(SdFlags::POWERSAVINGS_BALANCE),
            group_min: None,
            group_leader: None,
            min_load_per_task: 0,
            leader_nr_running: 0,
            min_nr_running: u64::MAX,
            ties_2_6_32,
        }
    }

    /// One group, after the balance figures took it
    /// (`update_sd_power_savings_stats`): `first` is its first CPU,
    /// `this_nr_running` the local group's task count.
    pub(crate) fn update(&mut self, gi: usize, first: CpuId, local: bool, this_nr_running: u64, sgs: &SgLbStats) {
        if !self.balance {
            return;
        }
        // The local group idle or full: nothing to save at this level.
        if local && (this_nr_running >= sgs.group_capacity || this_nr_running == 0) {
            self.balance = false;
            return;
        }
        // A group idle or at full capacity takes no part.
        if sgs.sum_nr_running >= sgs.group_capacity || sgs.sum_nr_running == 0 {
            return;
        }
        let (n, v32) = (sgs.sum_nr_running, self.ties_2_6_32);
        let tie_min = self.group_min.is_some_and(|(_, m)| if v32 { first > m } else { first < m });
        if n < self.min_nr_running || (n == self.min_nr_running && tie_min) {
            self.group_min = Some((gi, first));
            self.min_nr_running = n;
            self.min_load_per_task = sgs.sum_weighted_load / n;
        }
        // Room for one more task (capacity is at least 1 here: a group at
        // or over its capacity returned above).
        if n + 1 > sgs.group_capacity {
            return;
        }
        let tie_leader = self.group_leader.is_some_and(|(_, l)| if v32 { first < l } else { first > l });
        if n > self.leader_nr_running || (n == self.leader_nr_running && tie_leader) {
            self.group_leader = Some((gi, first));
            self.leader_nr_running = n;
        }
    }

    /// At out_balanced (`check_power_save_busiest_group`): the group to
    /// pull from and the load to pull, when the local group `this` leads
    /// and another group is the least loaded.
    pub(crate) fn busiest(&self, this: Option<usize>) -> Option<BusiestGroup> {
        let (leader, min) = (self.group_leader.map(|g| g.0), self.group_min.map(|g| g.0));
        if !self.balance || this != leader || leader == min {
            return None;
        }
        min.map(|group| BusiestGroup { group, imbalance: self.min_load_per_task })
    }
}

/// `msecs_to_jiffies(ms)`: rounds up.
pub fn msecs_to_jiffies(ms: u64, hz: u32) -> u64 {
    (ms * hz as u64).div_ceil(1000)
}

impl<O: Observer> Scheduler<O> {
    /// The fair task's `prio` (120 + nice); the idle task's is MAX_PRIO.
    fn prio_of(&self, t: Option<TaskId>) -> i32 {
        t.map_or(MAX_PRIO, |t| 120 + self.t(t).nice)
    }

    /// `jiffies`: ticks since the first call this scheduler saw. The
    /// kernel's jiffies do not follow the scheduler clock, so counting from
    /// the first `now` keeps balancing intervals right when a driver starts
    /// its clock just below 2^64 and it wraps.
    pub(crate) fn jiffies(&self) -> u64 {
        self.now.wrapping_sub(self.origin.unwrap_or(self.now)) / self.cfg.tick_ns()
    }

    /// `task_hot(p, now, sd)` (2.6.26 sched.c:1676-1698, the buddy test at
    /// :1684): the next buddy is hot
    /// under CACHE_HOT_BUDDY; otherwise hot iff it ran within
    /// migration_cost (-1 = always, 0 = never).
    ///
    /// 2.6.32-rc1: the next and the last buddy are both hot (17d857be
    /// sched.c:2010-2013). 2.6.32 (f685ceacab0, rc7): only while
    /// `this_rq()->nr_running` is non-zero (22763c5c sched.c:2040-2043),
    /// `this_rq()` being the CPU *executing* the balance: `exec_busy` says
    /// whether it has tasks (the balancing CPU for periodic and newly-idle
    /// balancing; the busiest CPU, whose migration thread is running, for
    /// active balancing).
    pub(crate) fn task_hot(&self, p: TaskId, now: u64, exec_busy: bool) -> bool {
        let t = self.t(p);
        let cfs = self.tq(t.cpu, t.tg);
        if self.cfg.features.has(Feature::CacheHotBuddy) {
            let buddy = if self.rules.is_2_6_32() {
                let gate = !self.rules.hot_buddy_needs_busy_balancer() || exec_busy;
                gate && (cfs.next == Some(p) || cfs.last == Some(p))
            } else {
                cfs.next == Some(p)
            };
            if buddy {
                return true;
            }
        }
        // The unsigned int against -1 (all ones), then `delta < (s64)cost`.
        let cost = self.cfg.tunables.migration_cost;
        if cost == Tunables::ALWAYS_HOT {
            return true;
        }
        if cost == 0 {
            return false;
        }
        (now.wrapping_sub(t.se.exec_start) as i64) < i64::from(cost)
    }

    /// `can_migrate_task`: allowed on this CPU, not running, and cache
    /// cold or past cache_nice_tries failures. `exec_cpu` is the CPU running
    /// the balancer (`this_rq()` in task_hot).
    pub(crate) fn can_migrate_task(
        &self,
        p: TaskId,
        busiest: CpuId,
        this_cpu: CpuId,
        sd: (CpuId, usize),
        all_pinned: &mut bool,
        exec_cpu: CpuId,
    ) -> bool {
        if !self.t(p).allowed.contains(this_cpu) {
            return false;
        }
        *all_pinned = false;
        if self.rqs[busiest].curr == Some(p) {
            return false;
        }
        let failed = self.dstate[sd.0][sd.1].nr_balance_failed;
        let tries = self.domains.of(sd.0)[sd.1].params.cache_nice_tries;
        // The migration thread doing active balancing is itself queued on
        // busiest (2.6.26 migration_thread, bce7f793 sched.c:5671-5674, runs
        // active_load_balance), so this_rq()->nr_running > 0 there.
        let exec_busy = exec_cpu == busiest || self.rqs[exec_cpu].nr_running > 0;
        !self.task_hot(p, self.rqs[busiest].clock, exec_busy) || failed > tries
    }

    /// The order the fair class's load-balance iterator visits `cpu`'s
    /// tasks in (see the module doc for the per-version quirks). Under
    /// group scheduling, each group's queue in turn (`for_each_leaf_cfs_rq`,
    /// as move_one_task_fair walks them).
    fn balance_candidates(&self, cpu: CpuId) -> Vec<TaskId> {
        if self.cfg.group_sched {
            return self.leaf_groups().flat_map(|g| self.balance_candidates_in(cpu, Some(g))).collect();
        }
        self.balance_candidates_in(cpu, None)
    }

    /// The load-balance iterator over one task queue on `cpu`: the
    /// group's (`tg`), or the runqueue's own without group scheduling.
    fn balance_candidates_in(&self, cpu: CpuId, tg: Option<crate::group::GroupId>) -> Vec<TaskId> {
        let cfs = self.tq(cpu, tg);
        if self.rules.is_2_6_25() {
            return cfs.timeline().collect();
        }
        let mut list: Vec<TaskId> = cfs.timeline().chain(cfs.curr).collect();
        list.sort_by_key(|t| core::cmp::Reverse(self.t(*t).se.group_seq));
        // The `iterator-fix` patch (38736f47507) keeps the last entry.
        if self.rules.balance_iterator_skips_last() {
            list.pop();
        }
        list
    }

    /// A preemptible 2.6.32 kernel ends newly-idle balancing at its first
    /// pulled task (balance_tasks, 22763c5c sched.c:3258-3266, from
    /// 7e96fa5875d; move_tasks' stop between classes, sched.c:3314-3322,
    /// has only the fair class to walk here). See [`crate::Config::preempt`].
    fn newidle_stops_after_one(&self, reason: MigrateReason) -> bool {
        reason == MigrateReason::NewIdle && self.cfg.preempt && self.rules.is_2_6_32()
    }

    /// `move_tasks` → `load_balance_fair`: pull up to `max_load_move`
    /// weighted load. Without group scheduling, one `balance_tasks` over
    /// the busiest CPU's queue. With it, one per group (newest first), each
    /// limited to half the group's load difference between the two CPUs
    /// and to what is left of `max_load_move`, and each starting from the
    /// best priority queued in that group here (`cfs_rq_best_prio`;
    /// bce7f793 sched_fair.c:1313-1375, 4b119e21 :1227-1300).
    pub(crate) fn move_tasks(
        &mut self,
        this_cpu: CpuId,
        busiest: CpuId,
        max_load_move: u64,
        sd: (CpuId, usize),
        reason: MigrateReason,
        all_pinned: &mut bool,
    ) -> u32 {
        let mut best_prio =
            if self.migration_thread == Some(this_cpu) { 0 } else { self.prio_of(self.rqs[this_cpu].curr) };
        if !self.cfg.group_sched {
            let candidates = self.balance_candidates_in(busiest, None);
            let (pulled, _) = self.balance_tasks(
                this_cpu,
                busiest,
                max_load_move,
                sd,
                reason,
                all_pinned,
                &mut best_prio,
                candidates,
            );
            return pulled;
        }
        if self.rules.group_aggregates() {
            return self.load_balance_fair_aggregates(
                this_cpu,
                busiest,
                max_load_move,
                sd,
                reason,
                all_pinned,
                best_prio,
            );
        }
        let mut rem = max_load_move as i64;
        let mut pulled = 0;
        let groups: Vec<_> = self.leaf_groups().collect();
        for g in groups {
            let busy_w = self.tq(busiest, Some(g)).load.weight as i64;
            let this_w = self.tq(this_cpu, Some(g)).load.weight as i64;
            let imbalance = busy_w - this_w;
            if imbalance <= 0 {
                continue;
            }
            let maxload = rem.min(imbalance / 2) as u64;
            best_prio = self.cfs_rq_best_prio(this_cpu, g);
            let candidates = self.balance_candidates_in(busiest, Some(g));
            let (n, moved) =
                self.balance_tasks(this_cpu, busiest, maxload, sd, reason, all_pinned, &mut best_prio, candidates);
            pulled += n;
            rem -= moved as i64;
            if rem <= 0 {
                break;
            }
        }
        pulled
    }

    /// 2.6.26-rc4's `load_balance_fair` (e490517a sched_fair.c:1386-1437):
    /// for each group with tasks in the domain (newest first, the
    /// `task_groups` list), the root imbalance left is converted into the
    /// group's task weight (`rem × rq_weight / (load + 1)`) and the group may
    /// move the larger of that and half its task-weight difference between
    /// the two CPUs. That difference is unsigned: where this CPU has more
    /// of the group's weight it wraps to a huge value, so the group may
    /// move as many tasks as balance_tasks finds. After a move the group's
    /// shares are re-split between the two CPUs (move_group_shares), and
    /// what moved is converted back to root weight (`moved × load /
    /// (rq_weight + 1)`); the walk stops once that overshoots. The
    /// aggregates are those of the domain's first CPU, as the last
    /// periodic pass left them. `this_best_prio` carries over from group
    /// to group.
    #[allow(clippy::too_many_arguments)] // the kernel's signature
    fn load_balance_fair_aggregates(
        &mut self,
        this_cpu: CpuId,
        busiest: CpuId,
        max_load_move: u64,
        sd: (CpuId, usize),
        reason: MigrateReason,
        all_pinned: &mut bool,
        mut best_prio: i32,
    ) -> u32 {
        let Some(first) = self.domains.of(sd.0)[sd.1].span.first() else { return 0 };
        let mut rem = max_load_move as i64;
        let mut pulled = 0;
        let groups: Vec<_> = self.leaf_groups().collect();
        for g in groups {
            let a = self.groups[g.0 as usize].aggregate[first];
            if a.task_weight == 0 {
                continue;
            }
            let rem_load = ((rem as u64).wrapping_mul(a.rq_weight) / a.load.wrapping_add(1)) as i64;
            let this_w = self.tq(this_cpu, Some(g)).load.weight;
            let busy_w = self.tq(busiest, Some(g)).load.weight;
            let mut imbalance = (busy_w.wrapping_sub(this_w) / 2) as i64;
            if imbalance < 0 {
                imbalance = busy_w as i64;
            }
            let max_load = rem_load.max(imbalance) as u64;
            let candidates = self.balance_candidates_in(busiest, Some(g));
            let (n, moved) =
                self.balance_tasks(this_cpu, busiest, max_load, sd, reason, all_pinned, &mut best_prio, candidates);
            pulled += n;
            if moved == 0 {
                continue;
            }
            self.move_group_shares(g, first, busiest, this_cpu);
            let moved_root = moved.wrapping_mul(a.load) / a.rq_weight.wrapping_add(1);
            rem -= moved_root as i64;
            if rem < 0 {
                break;
            }
        }
        pulled
    }

    /// `cfs_rq_best_prio(this_cfs_rq)`: the priority of the group's running
    /// task on `cpu`, or of its leftmost; MAX_PRIO when its tree is empty.
    fn cfs_rq_best_prio(&self, cpu: CpuId, g: crate::group::GroupId) -> i32 {
        let q = self.tq(cpu, Some(g));
        if q.nr_running == 0 || q.leftmost.is_none() {
            return MAX_PRIO;
        }
        self.prio_of(q.curr.or(q.leftmost))
    }

    /// `balance_tasks`: pull up to `max_load_move` weighted load from
    /// `candidates` (one queue's iterator order), examining at most
    /// sched_nr_migrate + 1 of them. Returns the tasks pulled and the load
    /// moved.
    #[allow(clippy::too_many_arguments)] // the kernel's signature
    fn balance_tasks(
        &mut self,
        this_cpu: CpuId,
        busiest: CpuId,
        max_load_move: u64,
        sd: (CpuId, usize),
        reason: MigrateReason,
        all_pinned: &mut bool,
        best_prio: &mut i32,
        candidates: Vec<TaskId>,
    ) -> (u32, u64) {
        // task_hot's this_rq() is the CPU running this code: this_cpu
        // itself, or the NO_HZ idle load balancer when it balances for
        // this_cpu (run_rebalance_domains, 22763c5c sched.c:4839).
        let exec_cpu = self.power.executing.unwrap_or(this_cpu);
        let mut rem = max_load_move as i64;
        let mut pinned = true;
        let mut pulled = 0;
        if max_load_move == 0 {
            *all_pinned = false;
            return (0, 0);
        }
        let nr_migrate = self.cfg.tunables.nr_migrate as usize;
        for (loops, p) in candidates.into_iter().enumerate() {
            if loops > nr_migrate {
                break;
            }
            let w = self.t(p).se.load.weight;
            let prio = self.prio_of(Some(p));
            // 2.6.32 dropped the fuzz and the high-priority exemption. The
            // kernel compares the unsigned weight with the long budget, so
            // the budget is read unsigned: a budget near 2^63 (rc4's
            // wrapped group difference) plus the fuzz never skips.
            let skip = if self.rules.is_2_6_32() {
                (w >> 1) > rem as u64
            } else {
                (w >> 1) > rem.wrapping_add(LOAD_FUZZ as i64) as u64 && prio >= *best_prio
            };
            if skip || !self.can_migrate_task(p, busiest, this_cpu, sd, &mut pinned, exec_cpu) {
                continue;
            }
            self.move_queued_task(p, busiest, this_cpu, reason);
            pulled += 1;
            rem -= w as i64;
            if rem <= 0 || self.newidle_stops_after_one(reason) {
                break;
            }
            *best_prio = (*best_prio).min(prio);
        }
        *all_pinned = pinned;
        (pulled, (max_load_move as i64 - rem) as u64)
    }

    /// `update_sg_lb_stats(sd, group, this_cpu, idle, load_idx, sd_idle,
    /// local_group, cpus, balance, sgs)` (2.6.32, 22763c5c sched.c:3704-3791):
    /// the loop over the CPUs of `group` that are in `cpus`. 2.6.25/26 have
    /// the same loop inline in find_busiest_group (2.6.26 sched.c:2922); the
    /// group's avg_load, capacity and imbalance test that follow it differ
    /// between the versions, so each find_busiest_group fills those in.
    ///
    /// Clears `sd_idle` at the first CPU with tasks. The local group's
    /// balancer is its first idle CPU, else its first CPU: when that is not
    /// `this_cpu` (and this is not newly idle balancing) `balance` is
    /// cleared and `None` returned, and find_busiest_group finds nothing.
    ///
    /// `with_avg_load_per_task`: also sum cpu_avg_load_per_task over the
    /// CPUs, as 2.6.32 does for its group_imb test (where the kernel's
    /// version also stores `rq->avg_load_per_task`, a value only it reads
    /// back). 2.6.25/26 do not call it in this loop, so their caller passes
    /// false and `sum_avg_load_per_task` stays 0.
    #[allow(clippy::too_many_arguments)] // the kernel's signature
    pub(crate) fn update_sg_lb_stats(
        &self,
        group: &SchedGroup,
        this_cpu: CpuId,
        idle: CpuIdleType,
        load_idx: u8,
        sd_idle: &mut bool,
        local: bool,
        cpus: &CpuMask,
        balance: &mut bool,
        with_avg_load_per_task: bool,
    ) -> Option<SgLbStats> {
        let mut sgs = SgLbStats {
            avg_load: 0,
            group_load: 0,
            sum_nr_running: 0,
            sum_weighted_load: 0,
            sum_avg_load_per_task: 0,
            max_cpu_load: 0,
            min_cpu_load: u64::MAX,
            group_capacity: 0,
            group_imb: false,
        };
        let mut balance_cpu = if local { group.cpus.first() } else { None };
        let mut first_idle = false;
        for i in group.cpus.iter_and(cpus) {
            let rq = &self.rqs[i];
            if *sd_idle && rq.nr_running > 0 {
                *sd_idle = false;
            }
            // Bias balancing toward cpus of our domain.
            let load = if local {
                if rq.is_idle() && !first_idle {
                    first_idle = true;
                    balance_cpu = Some(i);
                }
                self.target_load(i, load_idx)
            } else {
                let l = self.source_load(i, load_idx);
                sgs.max_cpu_load = sgs.max_cpu_load.max(l);
                sgs.min_cpu_load = sgs.min_cpu_load.min(l);
                l
            };
            sgs.group_load = sgs.group_load.wrapping_add(load);
            sgs.sum_nr_running += rq.nr_running;
            sgs.sum_weighted_load = sgs.sum_weighted_load.wrapping_add(rq.load.weight);
            if with_avg_load_per_task {
                sgs.sum_avg_load_per_task = sgs.sum_avg_load_per_task.wrapping_add(self.cpu_avg_load_per_task(i));
            }
        }
        // The first idle CPU, or the first CPU, of the local group balances
        // at this and the higher domains; newly idle balancing lets every CPU.
        if idle != CpuIdleType::NewlyIdle && local && balance_cpu != Some(this_cpu) {
            *balance = false;
            return None;
        }
        Some(sgs)
    }

    /// `find_busiest_group` (2.6.26 sched.c:2922-3212), with the
    /// power-savings pick of a domain with SD_POWERSAVINGS_BALANCE
    /// ([`PowerSavingsStats`]).
    /// `balance` is cleared when another CPU of the local group is the
    /// designated balancer (not for newly idle balancing).
    ///
    /// 2.6.32 split this function into update_sg_lb_stats,
    /// update_sd_lb_stats, calculate_imbalance and fix_small_imbalance; the
    /// parts that stayed the same are shared under those names
    /// ([`Scheduler::update_sg_lb_stats`], [`SdLbStats`]).
    pub(crate) fn find_busiest_group(
        &mut self,
        this_cpu: CpuId,
        sd_i: usize,
        idle: CpuIdleType,
        sd_idle: &mut bool,
        cpus: &CpuMask,
        balance: &mut bool,
    ) -> Option<BusiestGroup> {
        if self.rules.is_2_6_32() {
            // update_sg_lb_stats, first thing for the local group: its
            // first CPU, when balancing, refreshes the group's power
            // (crate::cpu_power) before anyone reads it.
            let first = self.domains.of(this_cpu).get(sd_i).and_then(|d| d.groups.first()).and_then(|g| g.cpus.first());
            if first == Some(this_cpu) {
                self.update_group_power(this_cpu, sd_i);
            }
            return self.find_busiest_group_32(this_cpu, sd_i, idle, sd_idle, cpus, balance);
        }
        let sd = &self.domains.of(this_cpu)[sd_i];
        let load_idx = get_sd_load_idx(sd, idle);
        let mut sds = SdLbStats::default();
        let mut power_savings = PowerSavingsStats::new(sd.flags, idle, false);
        for (gi, g) in sd.groups.iter().enumerate() {
            let local = g.cpus.contains(this_cpu);
            let mut sgs = self.update_sg_lb_stats(g, this_cpu, idle, load_idx, sd_idle, local, cpus, balance, false)?;
            let power = g.cpu_power as u64;
            sgs.avg_load = sg_div_cpu_power(g.cpu_power, sgs.group_load.wrapping_mul(1024));
            // Imbalanced when the CPUs' source loads spread by more than
            // SCHED_LOAD_SCALE.
            sgs.group_imb = sgs.max_cpu_load.wrapping_sub(sgs.min_cpu_load) > 1024 && sgs.min_cpu_load != u64::MAX;
            sgs.group_capacity = power / 1024;
            sds.update(gi, local, power, &sgs);
            power_savings.update(gi, g.cpus.first().unwrap_or(0), local, sds.this_nr_running, &sgs);
        }
        // out_balanced: no imbalance, but perhaps power to save.
        let Some(b) = sds.busiest_if_imbalanced(sd.params.imbalance_pct) else {
            return power_savings.busiest(sds.this);
        };
        let (mut imbalance, small) = sds.calculate_imbalance();
        if small {
            // Small imbalance: move one task if that evens things out or
            // raises the CPU power in use.
            imbalance = sds.fix_small_imbalance(
                imbalance,
                LOAD_FUZZ,
                || 1024,
                |power, load| sg_div_cpu_power(power as u32, load),
            );
        }
        Some(BusiestGroup { group: b, imbalance })
    }

    /// The end of 2.6.32's load_balance_newidle when nothing moved
    /// (22763c5c sched.c:4342-4404): -1, which ends idle_balance's walk,
    /// unless `sched_mc_power_savings` is at POWERSAVINGS_BALANCE_WAKEUP
    /// (2). Then from the third such failure at this level the newly idle
    /// CPU kicks `busiest`'s migration thread to push its running task here,
    /// as load_balance does after cache_nice_tries + 2 failures: the
    /// power-savings pick of find_busiest_group has chosen a package to
    /// empty, whose lone running task move_tasks cannot take. A task that
    /// may not run here (or the idle task) is left, as pinned.
    fn newidle_consolidate_32(&mut self, this_cpu: CpuId, sd_i: usize, busiest: CpuId) -> i32 {
        if self.cfg.power_savings.mc < 2 {
            return -1;
        }
        let st = &mut self.dstate[this_cpu][sd_i];
        let failed = st.nr_balance_failed;
        st.nr_balance_failed += 1;
        if failed < 2 {
            return -1;
        }
        let allowed = self.rqs[busiest].curr.is_some_and(|c| self.tasks[c.0 as usize].allowed.contains(this_cpu));
        if !allowed {
            return 0;
        }
        let brq = &mut self.rqs[busiest];
        if !brq.active_balance {
            brq.active_balance = true;
            brq.push_cpu = this_cpu;
            let now = self.now;
            self.wake_migration_thread(this_cpu, busiest, now);
        }
        0
    }

    /// `find_busiest_queue`: the most loaded CPU of the group, skipping
    /// CPUs whose single task outweighs the imbalance.
    pub(crate) fn find_busiest_queue(&self, cpus_of_group: &CpuMask, imbalance: u64, cpus: &CpuMask) -> Option<CpuId> {
        if self.rules.is_2_6_32() {
            return self.find_busiest_queue_32(cpus_of_group, imbalance, cpus);
        }
        let mut best = None;
        let mut max_load = 0;
        for i in cpus_of_group.iter_and(cpus) {
            let rq = &self.rqs[i];
            let wl = rq.load.weight;
            if rq.nr_running == 1 && wl > imbalance {
                continue;
            }
            if wl > max_load {
                max_load = wl;
                best = Some(i);
            }
        }
        best
    }

    /// A balance pass reads every runqueue of the domain.
    fn emit_scan(&mut self, cpu: CpuId, sd_i: usize) {
        let cpus = self.domains.of(cpu)[sd_i].span.weight() as u32;
        self.emit(Event::Scan { cpu, cpus });
    }

    fn smt_busy_return(&self, this_cpu: CpuId, sd_i: usize, sd_idle: bool) -> bool {
        let sd = &self.domains.of(this_cpu)[sd_i];
        !sd_idle
            && sd.flags.contains(SdFlags::SHARE_CPUPOWER)
            && !self.parent_has(this_cpu, sd_i, SdFlags::POWERSAVINGS_BALANCE)
    }

    fn parent_has(&self, cpu: CpuId, sd_i: usize, flag: SdFlags) -> bool {
        self.domains.of(cpu).get(sd_i + 1).is_some_and(|p| p.flags.contains(flag))
    }

    /// `load_balance(this_cpu, sd, idle, &balance)` (2.6.26 sched.c:3262).
    /// Returns >0 when tasks moved, -1 for the SMT "busy" answer, 0 else.
    pub(crate) fn load_balance(&mut self, this_cpu: CpuId, sd_i: usize, idle: CpuIdleType, balance: &mut bool) -> i32 {
        let (flags, cache_nice_tries, min_int, max_int) = {
            let sd = &self.domains.of(this_cpu)[sd_i];
            (sd.flags, sd.params.cache_nice_tries, sd.params.min_interval, sd.params.max_interval)
        };
        let mut cpus = self.online;
        // 2.6.26-rc4 with group scheduling: get_aggregate(sd) first
        // (e490517a sched.c:3607); newly idle balancing does not walk.
        if self.cfg.group_sched && self.rules.group_aggregates() && idle != CpuIdleType::NewlyIdle {
            let span = self.domains.of(this_cpu)[sd_i].span;
            self.aggregate_walk(&span);
        }
        let mut sd_idle = idle != CpuIdleType::NotIdle
            && flags.contains(SdFlags::SHARE_CPUPOWER)
            && !self.parent_has(this_cpu, sd_i, SdFlags::POWERSAVINGS_BALANCE);
        let mut all_pinned = false;
        let mut moved;
        let mut active = false;
        let reason = if idle == CpuIdleType::NewlyIdle { MigrateReason::NewIdle } else { MigrateReason::Periodic };
        // `all_pinned` lives across the `redo:` passes (sched.c:3266): when a
        // pass found every task of its busiest CPU pinned and the next finds
        // no busiest group or queue, out_balanced still backs off as pinned.
        let out = |sd_idle| Out { this_cpu, sd_i, idle, sd_idle };
        let busiest = loop {
            self.emit_scan(this_cpu, sd_i);
            let Some(bg) = self.find_busiest_group(this_cpu, sd_i, idle, &mut sd_idle, &cpus, balance) else {
                let verdict = if !*balance {
                    BalanceVerdict::NotBalancer
                } else {
                    pinned_or(all_pinned, BalanceVerdict::NoBusiestGroup)
                };
                return self.out_balanced(out(sd_idle), all_pinned, verdict);
            };
            let gcpus = self.domains.of(this_cpu)[sd_i].groups[bg.group].cpus;
            // (The kernel BUG()s on a busiest queue that is this CPU's.)
            let Some(busiest) = self.find_busiest_queue(&gcpus, bg.imbalance, &cpus).filter(|&b| b != this_cpu) else {
                let verdict = pinned_or(all_pinned, BalanceVerdict::NoBusiestQueue);
                return self.out_balanced(out(sd_idle), all_pinned, verdict);
            };
            moved = 0;
            if self.rqs[busiest].nr_running > 1 {
                // double_rq_lock(this_rq, busiest) updates both clocks
                // (sched.c:2621-2622, called at 3317; the same in 2.6.25,
                // rc4 and 2.6.32), so task_hot and the dequeue's
                // update_curr see busiest's clock as of now. Under 2.6.25's
                // local-only rule busiest keeps its last local update.
                self.update_rq_clock_on(this_cpu, this_cpu, self.now);
                self.update_rq_clock_on(this_cpu, busiest, self.now);
                moved = self.move_tasks(this_cpu, busiest, bg.imbalance, (this_cpu, sd_i), reason, &mut all_pinned);
                if all_pinned {
                    cpus.clear(busiest);
                    if !cpus.is_empty() {
                        continue;
                    }
                    return self.out_balanced(out(sd_idle), true, BalanceVerdict::AllPinned);
                }
            }
            break busiest;
        };
        let st = &mut self.dstate[this_cpu][sd_i];
        if moved == 0 {
            st.nr_balance_failed += 1;
            if st.nr_balance_failed > cache_nice_tries + 2 {
                // The idle task may only run on its own CPU (init_idle,
                // sched.c:5479), so a busiest CPU still running idle counts as
                // pinned (sched.c:3349).
                let curr_allows =
                    self.rqs[busiest].curr.is_some_and(|c| self.tasks[c.0 as usize].allowed.contains(this_cpu));
                if !curr_allows {
                    return self.out_one_pinned(out(sd_idle), true, BalanceVerdict::Failed);
                }
                let brq = &mut self.rqs[busiest];
                if !brq.active_balance {
                    brq.active_balance = true;
                    brq.push_cpu = this_cpu;
                    active = true;
                }
                self.dstate[this_cpu][sd_i].nr_balance_failed = cache_nice_tries + 1;
                if active {
                    // wake_up_process(migration_thread): an RT task preempts.
                    let now = self.now;
                    self.wake_migration_thread(this_cpu, busiest, now);
                }
            }
        } else {
            st.nr_balance_failed = 0;
        }
        let st = &mut self.dstate[this_cpu][sd_i];
        if !active {
            // Unclamped, as the kernel stores it: a min_interval of 0 keeps
            // the domain due at every tick (rebalance_domains raises a zero
            // interval to one jiffy).
            st.balance_interval = min_int;
        } else if st.balance_interval < max_int {
            st.balance_interval *= 2;
        }
        let verdict = if moved == 0 { BalanceVerdict::Failed } else { BalanceVerdict::Pulled };
        self.emit_balance(this_cpu, sd_i, moved, idle, verdict);
        if moved == 0 && self.smt_busy_return(this_cpu, sd_i, sd_idle) {
            return -1;
        }
        moved as i32
    }

    /// load_balance's `out_balanced:` label: nothing to do (or nothing
    /// allowed), so the failure count restarts.
    fn out_balanced(&mut self, out: Out, all_pinned: bool, verdict: BalanceVerdict) -> i32 {
        self.dstate[out.this_cpu][out.sd_i].nr_balance_failed = 0;
        self.out_one_pinned(out, all_pinned, verdict)
    }

    /// The `out_one_pinned:` label: back the interval off, report the pass.
    fn out_one_pinned(&mut self, out: Out, all_pinned: bool, verdict: BalanceVerdict) -> i32 {
        let Out { this_cpu, sd_i, idle, sd_idle } = out;
        let max_int = self.domains.of(this_cpu)[sd_i].params.max_interval;
        let st = &mut self.dstate[this_cpu][sd_i];
        if (all_pinned && st.balance_interval < MAX_PINNED_INTERVAL) || st.balance_interval < max_int {
            st.balance_interval *= 2;
        }
        self.emit_balance(this_cpu, sd_i, 0, idle, verdict);
        if self.smt_busy_return(this_cpu, sd_i, sd_idle) { -1 } else { 0 }
    }

    fn emit_balance(&mut self, cpu: CpuId, sd_i: usize, moved: u32, idle: CpuIdleType, verdict: BalanceVerdict) {
        let level = self.domains.of(cpu)[sd_i].level;
        self.emit(Event::Balance { cpu, level, moved, idle, verdict });
    }

    /// `load_balance_newidle` (2.6.26 sched.c:3416-3417): the same search with
    /// CPU_NEWLY_IDLE, no active balancing, no interval back-off.
    #[allow(clippy::while_let_loop)] // mirrors the kernel's `redo:` label
    pub(crate) fn load_balance_newidle(&mut self, this_cpu: CpuId, sd_i: usize) -> i32 {
        let flags = self.domains.of(this_cpu)[sd_i].flags;
        let mut sd_idle =
            flags.contains(SdFlags::SHARE_CPUPOWER) && !self.parent_has(this_cpu, sd_i, SdFlags::POWERSAVINGS_BALANCE);
        let mut cpus = self.online;
        let mut dummy = true;
        // Across the `redo:` passes, as in load_balance: a pass that found
        // only pinned tasks colours how a later empty search ends.
        let mut all_pinned = false;
        let nothing_found = loop {
            self.emit_scan(this_cpu, sd_i);
            let Some(bg) =
                self.find_busiest_group(this_cpu, sd_i, CpuIdleType::NewlyIdle, &mut sd_idle, &cpus, &mut dummy)
            else {
                break pinned_or(all_pinned, BalanceVerdict::NoBusiestGroup);
            };
            let gcpus = self.domains.of(this_cpu)[sd_i].groups[bg.group].cpus;
            let Some(busiest) = self.find_busiest_queue(&gcpus, bg.imbalance, &cpus).filter(|&b| b != this_cpu) else {
                break pinned_or(all_pinned, BalanceVerdict::NoBusiestQueue);
            };
            let mut moved = 0;
            all_pinned = false;
            if self.rqs[busiest].nr_running > 1 {
                // update_rq_clock(busiest), run on this CPU.
                self.update_rq_clock_on(this_cpu, busiest, self.now);
                moved = self.move_tasks(
                    this_cpu,
                    busiest,
                    bg.imbalance,
                    (this_cpu, sd_i),
                    MigrateReason::NewIdle,
                    &mut all_pinned,
                );
                if all_pinned {
                    cpus.clear(busiest);
                    if !cpus.is_empty() {
                        continue;
                    }
                }
            }
            let verdict = match (moved, all_pinned) {
                (0, true) => BalanceVerdict::AllPinned,
                (0, false) => BalanceVerdict::Failed,
                _ => BalanceVerdict::Pulled,
            };
            self.emit_balance(this_cpu, sd_i, moved, CpuIdleType::NewlyIdle, verdict);
            if moved == 0 {
                if self.smt_busy_return(this_cpu, sd_i, sd_idle) {
                    return -1;
                }
                if !self.rules.is_2_6_32() {
                    return 0;
                }
                return self.newidle_consolidate_32(this_cpu, sd_i, busiest);
            }
            self.dstate[this_cpu][sd_i].nr_balance_failed = 0;
            return moved as i32;
        };
        self.emit_balance(this_cpu, sd_i, 0, CpuIdleType::NewlyIdle, nothing_found);
        if self.smt_busy_return(this_cpu, sd_i, sd_idle) {
            return -1;
        }
        self.dstate[this_cpu][sd_i].nr_balance_failed = 0;
        0
    }

    /// `idle_balance(this_cpu)`: from schedule() on an empty runqueue,
    /// try every SD_BALANCE_NEWIDLE domain bottom-up until one pulls.
    /// Returns the number of tasks pulled.
    pub(crate) fn idle_balance(&mut self, this_cpu: CpuId) -> u32 {
        let hz = self.cfg.hz;
        let jiffies = self.jiffies();
        let mut next_balance = jiffies + hz as u64;
        // -1, as in 2.6.26: a first SD_LOAD_BALANCE domain without
        // SD_BALANCE_NEWIDLE ends the walk (sched.c:3503, 3521). 2.6.32
        // starts from 0 (22763c5c sched.c:4429), so such a domain is passed
        // over.
        let mut pulled_task = if self.rules.is_2_6_32() { 0 } else { -1 };
        let nr_before = self.rqs[this_cpu].nr_running;
        for sd_i in 0..self.domains.of(this_cpu).len() {
            let flags = self.domains.of(this_cpu)[sd_i].flags;
            if !flags.contains(SdFlags::LOAD_BALANCE) {
                continue;
            }
            if flags.contains(SdFlags::BALANCE_NEWIDLE) {
                pulled_task = self.load_balance_newidle(this_cpu, sd_i);
            }
            let st = self.dstate[this_cpu][sd_i];
            let interval = msecs_to_jiffies(st.balance_interval as u64, hz);
            next_balance = next_balance.min(st.last_balance + interval);
            if pulled_task != 0 {
                break;
            }
        }
        if pulled_task != 0 || jiffies > self.rqs[this_cpu].next_balance {
            self.rqs[this_cpu].next_balance = next_balance;
        }
        (self.rqs[this_cpu].nr_running - nr_before) as u32
    }

    /// `active_load_balance(busiest_cpu)`: the migration thread of a CPU
    /// asked to push moves one (not running, not hot) task to `push_cpu`.
    pub(crate) fn active_load_balance(&mut self, busiest: CpuId) {
        self.rqs[busiest].active_balance = false;
        // The kernel tests `nr_running <= 1` while the (RT) migration thread
        // runs and is counted: for the fair tasks modelled here that is "none
        // left" (sched.c:3548). A single task can be pushed (2.6.25/2.6.32
        // iterators return it; 2.6.26's never returns the last entry).
        if self.rqs[busiest].nr_running == 0 {
            return;
        }
        let target = self.rqs[busiest].push_cpu;
        if target == busiest || target >= self.rqs.len() {
            return;
        }
        // update_rq_clock(target_rq), run on the busiest CPU.
        self.update_rq_clock_on(busiest, target, self.now);
        let Some(sd_i) = self
            .domains
            .of(target)
            .iter()
            .position(|d| d.flags.contains(SdFlags::LOAD_BALANCE) && d.span.contains(busiest))
        else {
            return;
        };
        let mut pinned = false;
        for p in self.balance_candidates(busiest) {
            if self.can_migrate_task(p, busiest, target, (target, sd_i), &mut pinned, busiest) {
                self.move_queued_task(p, busiest, target, MigrateReason::Active);
                return;
            }
        }
    }

    /// `rebalance_domains(cpu, idle)` (2.6.26 sched.c:3666): walk the
    /// domains bottom-up, balancing each whose interval (× busy_factor
    /// when busy) has elapsed; stop when this CPU is not its group's
    /// designated balancer.
    pub(crate) fn rebalance_domains(&mut self, cpu: CpuId, idle_at_tick: bool) {
        let hz = self.cfg.hz;
        let jiffies = self.jiffies();
        let mut idle = if idle_at_tick { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
        let mut balance = true;
        let mut next_balance = jiffies + 60 * hz as u64;
        let mut update = false;
        let max_interval = self.cfg.max_balance_interval();
        for sd_i in 0..self.domains.of(cpu).len() {
            let (flags, busy_factor) = {
                let d = &self.domains.of(cpu)[sd_i];
                (d.flags, d.params.busy_factor)
            };
            if !flags.contains(SdFlags::LOAD_BALANCE) {
                continue;
            }
            let mut interval = self.dstate[cpu][sd_i].balance_interval as u64;
            if idle != CpuIdleType::Idle {
                interval *= busy_factor as u64;
            }
            // The kernel's two steps, in its order: a zero interval is
            // raised to 1, then capped at HZ * NR_CPUS / 10, which is 0
            // when HZ * NR_CPUS < 10, so such a kernel balances every
            // domain at every tick (bce7f793 sched.c:3687-3690).
            let interval = msecs_to_jiffies(interval, hz).max(1).min(max_interval);
            if jiffies >= self.dstate[cpu][sd_i].last_balance + interval {
                if self.load_balance(cpu, sd_i, idle, &mut balance) != 0 {
                    idle = CpuIdleType::NotIdle;
                }
                self.dstate[cpu][sd_i].last_balance = jiffies;
            }
            let due = self.dstate[cpu][sd_i].last_balance + interval;
            if next_balance > due {
                next_balance = due;
                update = true;
            }
            if !balance {
                break;
            }
        }
        if update {
            self.rqs[cpu].next_balance = next_balance;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffy_conversion_rounds_up() {
        // HZ=250: 4 ms per jiffy. 1 ms -> 1, 4 -> 1, 5 -> 2, 64 -> 16.
        assert_eq!(msecs_to_jiffies(1, 250), 1);
        assert_eq!(msecs_to_jiffies(4, 250), 1);
        assert_eq!(msecs_to_jiffies(5, 250), 2);
        assert_eq!(msecs_to_jiffies(64, 250), 16);
        assert_eq!(msecs_to_jiffies(64, 1000), 64);
    }
}
