//! Load balancing over the sched domains (2.6.26 `kernel/sched.c`,
//! bce7f793, lines 2737-3790): `rebalance_domains`, `load_balance`,
//! `load_balance_newidle`, `idle_balance`, `active_load_balance`,
//! `find_busiest_group`, `find_busiest_queue`, `move_tasks` /
//! `balance_tasks`, `move_one_task`, `can_migrate_task` and `task_hot`.
//!
//! Deliberate 2.6.26 quirks kept (kernel-reference.md §8.3):
//! - the fair load-balance iterator walks the cfs_rq `tasks` list from the
//!   most recently enqueued task and never returns the *last* (oldest)
//!   entry (fixed only in 2.6.28 by 38736f47507); 2.6.25 walks the rbtree
//!   from the leftmost instead;
//! - `sg_div_cpu_power` truncates its load argument to 32 bits;
//! - SMT domains return -1 ("treat as busy") from load_balance when idle
//!   siblings found nothing, which stops idle_balance's walk.
//!
//! Not modelled: power-savings balancing (sched_mc/smt_power_savings are
//! off by default), NO_HZ idle load balancing (the driver ticks every CPU),
//! and the SD_SERIALIZE lock (one balancer runs at a time anyway).

use crate::entity::TaskId;
use crate::features::Feature;
use crate::observe::{Event, MigrateReason, Observer};
use crate::sched::Scheduler;
use crate::wakeup::sg_div_cpu_power;
use alloc::vec::Vec;
use cfs_topology::{CpuId, CpuMask, SdFlags};

/// `SCHED_LOAD_SCALE_FUZZ`.
const LOAD_FUZZ: u64 = 1024;
/// `MAX_PINNED_INTERVAL`, ms.
const MAX_PINNED_INTERVAL: u32 = 512;
/// `MAX_PRIO`: the idle task's priority.
const MAX_PRIO: i32 = 140;

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuIdleType {
    /// CPU_IDLE: balancing from an idle tick.
    Idle,
    /// CPU_NOT_IDLE.
    NotIdle,
    /// CPU_NEWLY_IDLE: from schedule() about to go idle.
    NewlyIdle,
}

impl CpuIdleType {
    fn code(self) -> u8 {
        match self {
            CpuIdleType::NotIdle => 0,
            CpuIdleType::Idle => 1,
            CpuIdleType::NewlyIdle => 2,
        }
    }
}

/// What find_busiest_group decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusiestGroup {
    /// Index of the busiest group in the domain's group list.
    pub group: usize,
    /// Weighted load to move.
    pub imbalance: u64,
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

    /// `task_hot(p, now, sd)` (2.6.26 sched.c:1683): the next buddy is hot
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
        let cfs = &self.rqs[t.cpu].cfs;
        if self.cfg.features.has(Feature::CacheHotBuddy) {
            let buddy = if self.rules.is_2_6_32() {
                let gate = self.cfg.version == cfs_topology::KernelVersion::V2_6_32Rc1 || exec_busy;
                gate && (cfs.next == Some(p) || cfs.last == Some(p))
            } else {
                cfs.next == Some(p)
            };
            if buddy {
                return true;
            }
        }
        let cost = self.cfg.tunables.migration_cost;
        if cost == -1 {
            return true;
        }
        if cost == 0 {
            return false;
        }
        (now.wrapping_sub(t.se.exec_start) as i64) < cost
    }

    /// `can_migrate_task`: allowed on this CPU, not running, and cache
    /// cold or past cache_nice_tries failures. `exec_cpu` is the CPU running
    /// the balancer (`this_rq()` in task_hot).
    fn can_migrate_task(
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
        // busiest (sched.c:4466-4500), so this_rq()->nr_running > 0 there.
        let exec_busy = exec_cpu == busiest || self.rqs[exec_cpu].nr_running > 0;
        !self.task_hot(p, self.rqs[busiest].clock, exec_busy) || failed > tries
    }

    /// The order the fair class's load-balance iterator visits `cpu`'s
    /// tasks in (see the module doc for the per-version quirks).
    fn balance_candidates(&self, cpu: CpuId) -> Vec<TaskId> {
        let cfs = &self.rqs[cpu].cfs;
        if self.rules.is_2_6_25() {
            return cfs.timeline().collect();
        }
        let mut list: Vec<TaskId> = cfs.timeline().chain(cfs.curr).collect();
        list.sort_by_key(|t| core::cmp::Reverse(self.t(*t).se.group_seq));
        if self.rules.balance_iterator_skips_last() {
            list.pop();
        }
        list
    }

    /// `balance_tasks` + `move_tasks`: pull up to `max_load_move` weighted
    /// load, examining at most sched_nr_migrate + 1 candidates.
    fn move_tasks(
        &mut self,
        this_cpu: CpuId,
        busiest: CpuId,
        max_load_move: u64,
        sd: (CpuId, usize),
        reason: MigrateReason,
        all_pinned: &mut bool,
    ) -> u32 {
        let mut best_prio = self.prio_of(self.rqs[this_cpu].curr);
        let mut rem = max_load_move as i64;
        let mut pinned = true;
        let mut pulled = 0;
        if max_load_move == 0 {
            *all_pinned = false;
            return 0;
        }
        let nr_migrate = self.cfg.tunables.nr_migrate as usize;
        for (loops, p) in self.balance_candidates(busiest).into_iter().enumerate() {
            if loops > nr_migrate {
                break;
            }
            let w = self.t(p).se.load.weight;
            let prio = self.prio_of(Some(p));
            // 2.6.32 dropped the fuzz and the high-priority exemption.
            let skip = if self.rules.is_2_6_32() {
                (w >> 1) as i64 > rem
            } else {
                (w >> 1) as i64 > rem + LOAD_FUZZ as i64 && prio >= best_prio
            };
            if skip || !self.can_migrate_task(p, busiest, this_cpu, sd, &mut pinned, this_cpu) {
                continue;
            }
            self.move_queued_task(p, busiest, this_cpu, reason);
            pulled += 1;
            rem -= w as i64;
            if rem <= 0 {
                break;
            }
            best_prio = best_prio.min(prio);
        }
        *all_pinned = pinned;
        pulled
    }

    /// `find_busiest_group` (2.6.26 sched.c:2922), power savings off.
    /// `balance` is cleared when another CPU of the local group is the
    /// designated balancer (not for newly idle balancing).
    fn find_busiest_group(
        &self,
        this_cpu: CpuId,
        sd_i: usize,
        idle: CpuIdleType,
        sd_idle: &mut bool,
        cpus: &CpuMask,
        balance: &mut bool,
    ) -> Option<BusiestGroup> {
        if self.rules.is_2_6_32() {
            return self.find_busiest_group_32(this_cpu, sd_i, idle, sd_idle, cpus, balance);
        }
        let sd = &self.domains.of(this_cpu)[sd_i];
        let load_idx = match idle {
            CpuIdleType::NotIdle => sd.params.busy_idx,
            CpuIdleType::NewlyIdle => sd.params.newidle_idx,
            CpuIdleType::Idle => sd.params.idle_idx,
        };
        let (mut max_load, mut this_load, mut total_load, mut total_pwr) = (0u64, 0u64, 0u64, 0u64);
        let (mut busiest, mut this) = (None, None);
        let (mut busiest_lpt, mut busiest_nr, mut this_lpt, mut this_nr) = (0u64, 0u64, 0u64, 0u64);
        let mut group_imb = false;
        for (gi, g) in sd.groups.iter().enumerate() {
            let local = g.cpus.contains(this_cpu);
            let mut balance_cpu = if local { g.cpus.first() } else { None };
            let mut first_idle = false;
            let (mut sum_load, mut sum_nr, mut sum_wl) = (0u64, 0u64, 0u64);
            let (mut max_cpu, mut min_cpu) = (0u64, u64::MAX);
            for i in g.cpus.and(cpus).iter() {
                let rq = &self.rqs[i];
                if *sd_idle && rq.nr_running > 0 {
                    *sd_idle = false;
                }
                let load = if local {
                    if rq.is_idle() && !first_idle {
                        first_idle = true;
                        balance_cpu = Some(i);
                    }
                    self.target_load(i, load_idx)
                } else {
                    let l = self.source_load(i, load_idx);
                    max_cpu = max_cpu.max(l);
                    min_cpu = min_cpu.min(l);
                    l
                };
                sum_load = sum_load.wrapping_add(load);
                sum_nr += rq.nr_running;
                sum_wl = sum_wl.wrapping_add(rq.load.weight);
            }
            if idle != CpuIdleType::NewlyIdle && local && balance_cpu != Some(this_cpu) {
                *balance = false;
                return None;
            }
            total_load = total_load.wrapping_add(sum_load);
            total_pwr += g.cpu_power as u64;
            let avg = sg_div_cpu_power(g.cpu_power, sum_load.wrapping_mul(1024));
            let imb = max_cpu.wrapping_sub(min_cpu) > 1024 && min_cpu != u64::MAX;
            let capacity = g.cpu_power as u64 / 1024;
            if local {
                this_load = avg;
                this = Some(gi);
                this_nr = sum_nr;
                this_lpt = sum_wl;
            } else if avg > max_load && (sum_nr > capacity || imb) {
                max_load = avg;
                busiest = Some(gi);
                busiest_nr = sum_nr;
                busiest_lpt = sum_wl;
                group_imb = imb;
            }
        }
        let (b, t) = (busiest?, this?);
        if this_load >= max_load || busiest_nr == 0 {
            return None;
        }
        let avg_load = 1024u64.wrapping_mul(total_load).checked_div(total_pwr).unwrap_or(0);
        if this_load >= avg_load || 100u64.wrapping_mul(max_load) <= sd.params.imbalance_pct as u64 * this_load {
            return None;
        }
        busiest_lpt /= busiest_nr;
        if group_imb {
            busiest_lpt = busiest_lpt.min(avg_load);
        }
        if max_load <= busiest_lpt {
            return None;
        }
        let bp = sd.groups[b].cpu_power as u64;
        let tp = sd.groups[t].cpu_power as u64;
        let mut imbalance = 0;
        let small = if max_load < avg_load {
            true
        } else {
            let max_pull = (max_load - avg_load).min(max_load - busiest_lpt);
            imbalance = (max_pull.wrapping_mul(bp)).min((avg_load - this_load).wrapping_mul(tp)) / 1024;
            imbalance < busiest_lpt
        };
        if small {
            // Small imbalance: move one task if that evens things out or
            // raises the CPU power in use.
            let mut imbn = 2;
            match this_lpt.checked_div(this_nr) {
                Some(per_task) => {
                    this_lpt = per_task;
                    if busiest_lpt > this_lpt {
                        imbn = 1;
                    }
                }
                None => this_lpt = 1024,
            }
            if max_load.wrapping_sub(this_load).wrapping_add(LOAD_FUZZ) >= busiest_lpt * imbn {
                return Some(BusiestGroup { group: b, imbalance: busiest_lpt });
            }
            let mut pwr_now = bp * busiest_lpt.min(max_load) + tp * this_lpt.min(this_load);
            pwr_now /= 1024;
            let mut pwr_move = 0;
            let tmp = sg_div_cpu_power(bp as u32, busiest_lpt * 1024);
            if max_load > tmp {
                pwr_move += bp * busiest_lpt.min(max_load - tmp);
            }
            let tmp = if max_load * bp < busiest_lpt * 1024 {
                sg_div_cpu_power(tp as u32, max_load * bp)
            } else {
                sg_div_cpu_power(tp as u32, busiest_lpt * 1024)
            };
            pwr_move += tp * this_lpt.min(this_load + tmp);
            pwr_move /= 1024;
            if pwr_move > pwr_now {
                imbalance = busiest_lpt;
            }
        }
        Some(BusiestGroup { group: b, imbalance })
    }

    /// `find_busiest_queue`: the most loaded CPU of the group, skipping
    /// CPUs whose single task outweighs the imbalance.
    fn find_busiest_queue(&self, cpus_of_group: &CpuMask, imbalance: u64, cpus: &CpuMask) -> Option<CpuId> {
        if self.rules.is_2_6_32() {
            return self.find_busiest_queue_32(cpus_of_group, imbalance, cpus);
        }
        let mut best = None;
        let mut max_load = 0;
        for i in cpus_of_group.and(cpus).iter() {
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
    fn load_balance(&mut self, this_cpu: CpuId, sd_i: usize, idle: CpuIdleType, balance: &mut bool) -> i32 {
        let (flags, cache_nice_tries, min_int, max_int) = {
            let sd = &self.domains.of(this_cpu)[sd_i];
            (sd.flags, sd.params.cache_nice_tries, sd.params.min_interval, sd.params.max_interval)
        };
        let mut cpus = self.online;
        let mut sd_idle = idle != CpuIdleType::NotIdle
            && flags.contains(SdFlags::SHARE_CPUPOWER)
            && !self.parent_has(this_cpu, sd_i, SdFlags::POWERSAVINGS_BALANCE);
        let mut all_pinned = false;
        let mut moved;
        let mut active = false;
        let reason = if idle == CpuIdleType::NewlyIdle { MigrateReason::NewIdle } else { MigrateReason::Periodic };
        let busiest = loop {
            self.emit_scan(this_cpu, sd_i);
            let Some(bg) = self.find_busiest_group(this_cpu, sd_i, idle, &mut sd_idle, &cpus, balance) else {
                return self.out_balanced(this_cpu, sd_i, false, sd_idle);
            };
            let gcpus = self.domains.of(this_cpu)[sd_i].groups[bg.group].cpus;
            let Some(busiest) = self.find_busiest_queue(&gcpus, bg.imbalance, &cpus) else {
                return self.out_balanced(this_cpu, sd_i, false, sd_idle);
            };
            if busiest == this_cpu {
                return self.out_balanced(this_cpu, sd_i, false, sd_idle);
            }
            moved = 0;
            if self.rqs[busiest].nr_running > 1 {
                // No update_rq_clock(busiest) here (only load_balance_newidle
                // and active_load_balance do it): task_hot reads the clock of
                // busiest's last event (sched.c:3317).
                moved = self.move_tasks(this_cpu, busiest, bg.imbalance, (this_cpu, sd_i), reason, &mut all_pinned);
                if all_pinned {
                    cpus.clear(busiest);
                    if !cpus.is_empty() {
                        continue;
                    }
                    return self.out_balanced(this_cpu, sd_i, true, sd_idle);
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
                    return self.out_one_pinned(this_cpu, sd_i, true, sd_idle);
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
                    self.resched_cpu(busiest);
                }
            }
        } else {
            st.nr_balance_failed = 0;
        }
        let st = &mut self.dstate[this_cpu][sd_i];
        if !active {
            st.balance_interval = min_int.max(1);
        } else if st.balance_interval < max_int {
            st.balance_interval *= 2;
        }
        let level = self.domains.of(this_cpu)[sd_i].level;
        self.emit(Event::Balance { cpu: this_cpu, level, moved, idle: idle.code() });
        if moved == 0 && self.smt_busy_return(this_cpu, sd_i, sd_idle) {
            return -1;
        }
        moved as i32
    }

    fn out_balanced(&mut self, this_cpu: CpuId, sd_i: usize, all_pinned: bool, sd_idle: bool) -> i32 {
        self.dstate[this_cpu][sd_i].nr_balance_failed = 0;
        self.out_one_pinned(this_cpu, sd_i, all_pinned, sd_idle)
    }

    fn out_one_pinned(&mut self, this_cpu: CpuId, sd_i: usize, all_pinned: bool, sd_idle: bool) -> i32 {
        let max_int = self.domains.of(this_cpu)[sd_i].params.max_interval;
        let st = &mut self.dstate[this_cpu][sd_i];
        if (all_pinned && st.balance_interval < MAX_PINNED_INTERVAL) || st.balance_interval < max_int {
            st.balance_interval *= 2;
        }
        if self.smt_busy_return(this_cpu, sd_i, sd_idle) { -1 } else { 0 }
    }

    /// `load_balance_newidle` (2.6.26 sched.c:3400): the same search with
    /// CPU_NEWLY_IDLE, no active balancing, no interval back-off.
    #[allow(clippy::while_let_loop)] // mirrors the kernel's `redo:` label
    fn load_balance_newidle(&mut self, this_cpu: CpuId, sd_i: usize) -> i32 {
        let flags = self.domains.of(this_cpu)[sd_i].flags;
        let mut sd_idle =
            flags.contains(SdFlags::SHARE_CPUPOWER) && !self.parent_has(this_cpu, sd_i, SdFlags::POWERSAVINGS_BALANCE);
        let mut cpus = self.online;
        let mut dummy = true;
        loop {
            self.emit_scan(this_cpu, sd_i);
            let Some(bg) =
                self.find_busiest_group(this_cpu, sd_i, CpuIdleType::NewlyIdle, &mut sd_idle, &cpus, &mut dummy)
            else {
                break;
            };
            let gcpus = self.domains.of(this_cpu)[sd_i].groups[bg.group].cpus;
            let Some(busiest) = self.find_busiest_queue(&gcpus, bg.imbalance, &cpus) else { break };
            if busiest == this_cpu {
                break;
            }
            let mut moved = 0;
            if self.rqs[busiest].nr_running > 1 {
                self.rqs[busiest].clock = self.now;
                let mut all_pinned = false;
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
            let level = self.domains.of(this_cpu)[sd_i].level;
            self.emit(Event::Balance { cpu: this_cpu, level, moved, idle: 2 });
            if moved == 0 {
                // 2.6.32 also answers -1 when power savings are off
                // (sched_mc_power_savings < POWERSAVINGS_BALANCE_WAKEUP),
                // which ends idle_balance's walk at this level.
                let busy = self.smt_busy_return(this_cpu, sd_i, sd_idle) || self.rules.is_2_6_32();
                return if busy { -1 } else { 0 };
            }
            self.dstate[this_cpu][sd_i].nr_balance_failed = 0;
            return moved as i32;
        }
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
        self.rqs[target].clock = self.now;
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
        let max_interval = hz as u64 * cfs_topology::MAX_CPUS as u64 / 10;
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
            let interval = msecs_to_jiffies(interval, hz).clamp(1, max_interval);
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
