//! Wakeup and fork placement across CPUs (2.6.26 `kernel/sched.c` and
//! `kernel/sched_fair.c` at bce7f793): `try_to_wake_up`,
//! `select_task_rq_fair`, `wake_affine`, `wake_idle`, the load figures they
//! read, and `sched_balance_self` for fork.

use crate::entity::{CurrentState, TaskId, TaskState};
use crate::features::Feature;
use crate::observe::{Event, MigrateReason, Observer, WakeReason};
use crate::patches::Patch;
use crate::sched::{Scheduler, WakeOutcome};
use cfs_topology::{CpuId, SchedGroup, SdFlags};

/// `reciprocal_value(k)` (lib/reciprocal_div.c): `ceil(2^32 / k)` as u32.
pub fn reciprocal_value(k: u32) -> u32 {
    if k == 0 {
        return 0;
    }
    (1u64 << 32).div_ceil(k as u64) as u32
}

/// `sg_div_cpu_power(sg, load)`: `load / cpu_power` by reciprocal multiply.
/// The kernel passes `load` as a `u32`, so larger sums are truncated; we
/// keep that.
pub fn sg_div_cpu_power(cpu_power: u32, load: u64) -> u64 {
    ((load as u32 as u64 * reciprocal_value(cpu_power) as u64) >> 32) as u32 as u64
}

/// `100 + (imbalance_pct - 100) / 2`: half the domain's imbalance margin,
/// used by wakeup and fork placement.
pub fn half_imbalance(imbalance_pct: u32) -> u64 {
    100 + (imbalance_pct as u64).saturating_sub(100) / 2
}

impl<O: Observer> Scheduler<O> {
    /// `weighted_cpuload(cpu)`: the runqueue's weight now.
    pub fn weighted_cpuload(&self, cpu: CpuId) -> u64 {
        self.rqs[cpu].load.weight
    }

    /// `source_load(cpu, idx)`: a low guess (min of the decayed load and
    /// now), to move conservatively away from a CPU.
    pub fn source_load(&self, cpu: CpuId, idx: u8) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 || (self.rules.is_2_6_32() && !self.cfg.features.has(Feature::LbBias)) {
            return total;
        }
        self.rqs[cpu].cpu_load[(idx as usize - 1).min(4)].min(total)
    }

    /// `target_load(cpu, idx)`: a high guess (max).
    pub fn target_load(&self, cpu: CpuId, idx: u8) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 || (self.rules.is_2_6_32() && !self.cfg.features.has(Feature::LbBias)) {
            return total;
        }
        self.rqs[cpu].cpu_load[(idx as usize - 1).min(4)].max(total)
    }

    /// `cpu_avg_load_per_task(cpu)`: load / nr_running, or
    /// SCHED_LOAD_SCALE (2.6.26) / 0 (2.6.32) when empty.
    pub fn cpu_avg_load_per_task(&self, cpu: CpuId) -> u64 {
        let rq = &self.rqs[cpu];
        rq.load.weight.checked_div(rq.nr_running).unwrap_or(self.rules.empty_rq_load_per_task())
    }

    /// `try_to_wake_up(p, state, sync)` from `this_cpu`.
    ///
    /// `in_irq` marks a wakeup from interrupt context (a timer): in 2.6.32
    /// the interrupted task then does not account it as its wakeup.
    pub(crate) fn try_to_wake_up(
        &mut self,
        now: u64,
        p: TaskId,
        this_cpu: CpuId,
        sync: bool,
        in_irq: bool,
    ) -> WakeOutcome {
        // SYNC_WAKEUPS gate (2.6.26; 2.6.25 only with the back-port patch).
        let sync = sync && self.cfg.features.has(Feature::SyncWakeups);
        let orig_cpu = self.t(p).cpu;
        let waker = self.rqs[this_cpu].curr;
        let v32 = self.rules.is_2_6_32();
        if v32 {
            // 2.6.32 (sched.c:2352-2353): task_rq_lock + update_rq_clock of the
            // task's own (previous) runqueue; the waking CPU's clock is not
            // touched.
            self.set_clock(orig_cpu, now);
        } else {
            // 2.6.25/26 update only the runqueue the task is activated on,
            // just before activate_task (e490517a sched.c:2479, bce7f793
            // :2147, 4b119e21 :1901): neither the waking CPU's clock nor,
            // on the out_running path, the queued task's.
            self.advance(now);
        }
        if self.t(p).state != TaskState::Sleeping {
            let mut preempt = false;
            let reason = if self.t(p).current_state == CurrentState::Running {
                // `if (!(old_state & state)) goto out;` (bce7f793
                // sched.c:2091, e490517a :2423, 4b119e21 :1845; 22763c5c
                // :2354, after its clock update above): a TASK_RUNNING task
                // is left alone, no stamp, no buddy, no preemption check.
                WakeReason::AlreadyRunning
            } else {
                // out_running (bce7f793 sched.c:2151): still queued in a
                // sleep state, as a wait loop is between set_current_state
                // and schedule(): only the preemption check, then
                // TASK_RUNNING.
                self.tm(p).current_state = CurrentState::Running;
                let before = self.rqs[orig_cpu].need_resched;
                self.check_preempt_wakeup(orig_cpu, p, false, waker, sync);
                preempt = !before && self.rqs[orig_cpu].need_resched;
                WakeReason::AlreadyQueued
            };
            let target = orig_cpu;
            self.emit(Event::Wake { task: p, waker_cpu: this_cpu, prev_cpu: orig_cpu, target, sync, reason });
            return WakeOutcome { cpu: orig_cpu, woken: false, preempt };
        }
        let (cpu, reason) = if self.rules.is_2_6_32() {
            self.select_task_rq_fair_32(p, this_cpu, true, sync)
        } else {
            self.select_task_rq_fair(p, this_cpu, sync)
        };
        if cpu != orig_cpu {
            self.set_task_cpu(p, cpu);
            self.emit(Event::Migrate { task: p, from: orig_cpu, to: cpu, reason: MigrateReason::Wakeup });
        }
        self.emit(Event::Wake { task: p, waker_cpu: this_cpu, prev_cpu: orig_cpu, target: cpu, sync, reason });
        // 2.6.32 re-locks the chosen runqueue and updates its clock when it
        // differs; 2.6.32-rc1 runs on that CPU's last clock (see the rule).
        // 2.6.25 updates it only when it is the waking CPU's own.
        if !v32 || cpu == orig_cpu || self.rules.wakeup_updates_new_rq_clock() {
            self.update_rq_clock_on(this_cpu, cpu, now);
        }
        self.activate_task(cpu, p, true);
        if let (true, false, Some(w)) = (self.rules.is_2_6_32(), in_irq, waker) {
            self.waker_stats_32(w);
        }
        let before = self.rqs[cpu].need_resched;
        self.check_preempt_wakeup(cpu, p, false, waker, sync);
        WakeOutcome { cpu, woken: true, preempt: !before && self.rqs[cpu].need_resched }
    }

    /// `select_task_rq_fair(p, sync)` (2.6.26 sched_fair.c:1043): affine
    /// wakeup, passive balancing (SD_WAKE_BALANCE), else wake_idle near the
    /// previous CPU.
    pub(crate) fn select_task_rq_fair(&mut self, p: TaskId, this_cpu: CpuId, sync: bool) -> (CpuId, WakeReason) {
        let prev_cpu = self.t(p).cpu;
        let allowed = self.t(p).allowed;
        let this_sd = self.domains.of(this_cpu).iter().position(|d| d.span.contains(prev_cpu));
        let fallback = |s: &mut Self| {
            let c = s.wake_idle(prev_cpu, p);
            (c, if c == prev_cpu { WakeReason::Previous } else { WakeReason::IdleSibling })
        };
        if !allowed.contains(this_cpu) {
            return fallback(self);
        }
        let Some(sd_i) = this_sd else { return fallback(self) };
        let sd = &self.domains.of(this_cpu)[sd_i];
        let (idx, pct, flags) = (sd.params.wake_idx, sd.params.imbalance_pct, sd.flags);
        let imbalance = half_imbalance(pct);
        let load = self.source_load(prev_cpu, idx);
        let this_load = self.target_load(this_cpu, idx);
        // The two load reads are the runqueues this wakeup looks at; a
        // wakee that may not run here, or shares no domain with this CPU,
        // is placed without them (`goto out` above).
        self.emit(Event::Scan { cpu: this_cpu, cpus: 2 });
        if let Some(r) = self.wake_affine(flags, p, prev_cpu, this_cpu, sync, idx, load, this_load, imbalance) {
            return (this_cpu, r);
        }
        if prev_cpu != this_cpu && flags.contains(SdFlags::WAKE_BALANCE) && imbalance * this_load <= 100 * load {
            return (this_cpu, WakeReason::PassiveBalance);
        }
        fallback(self)
    }

    /// `wake_affine` (2.6.26 final, sched_fair.c:993): should the wakee run
    /// on the waking CPU? Returns the reason when yes.
    ///
    /// ```text
    ///   tl       = this_load - (sync ? weight of the waker : 0)   (unsigned!)
    ///   balanced = 100 * (tl + w_p) <= imbalance * load(prev)
    ///   sync && balanced && both avg_overlap < migration_cost  -> affine
    ///   (tl <= load && tl + target_load(prev) <= tl_per_task) || balanced -> affine
    /// ```
    ///
    /// 2.6.25 and 2.6.26-rc1..rc4 take the sync shortcut *without* the
    /// `balanced` test and ignore AFFINE_WAKEUPS: the 1:N pile-up, fixed by
    /// b3137bc8e77 (`Rules::affine_needs_balance`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn wake_affine(
        &mut self,
        flags: SdFlags,
        p: TaskId,
        prev_cpu: CpuId,
        this_cpu: CpuId,
        sync: bool,
        idx: u8,
        load: u64,
        this_load: u64,
        imbalance: u64,
    ) -> Option<WakeReason> {
        let rules = self.rules;
        let new_form = rules.affine_needs_balance();
        if !flags.contains(SdFlags::WAKE_AFFINE) || (new_form && !self.cfg.features.has(Feature::AffineWakeups)) {
            return None;
        }
        let cost = self.cfg.tunables.migration_cost_unsigned();
        // `current` (the waker) and this_rq->curr are the same task here:
        // the driver calls wake_up from the CPU the waker runs on. An
        // interrupt wakeup from idle has the idle task as current, whose
        // entity weighs NICE_0_LOAD (copied from init_task at boot).
        let curr = self.rqs[this_cpu].curr;
        let curr_w = curr.map_or(1024, |c| self.t(c).se.load.weight);
        let curr_overlap = curr.map(|c| self.t(c).se.avg_overlap);
        let p_w = self.t(p).se.load.weight;
        let p_overlap = self.t(p).se.avg_overlap;
        // patches.md §4 ("disperse" hunk of last_preempter).
        if sync && rules.patches.has(Patch::LastPreempter) {
            if let Some(c) = curr {
                let se = &self.t(c).se;
                if se.last_preempter.is_some() && se.last_preempter != Some(p) {
                    let ran = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
                    if ran < cost {
                        return None;
                    }
                }
            }
        }
        let subtract = |tl: u64| {
            // patches.md §3 (sync-load clamp): only when tl > weight.
            if rules.patches.has(Patch::SyncLoadClamp) && tl <= curr_w { tl } else { tl.wrapping_sub(curr_w) }
        };
        let overlaps_small = curr_overlap.is_some_and(|o| o < cost) && p_overlap < cost;
        // patches.md §1 (waker): the shortcut only for the task's own waker.
        let waker_ok =
            !rules.patches.has(Patch::Waker) || curr.is_some_and(|c| self.t(p).se.waker == self.t(c).se.waker);
        let mut tl = this_load;
        let balanced;
        if new_form {
            if sync {
                tl = subtract(tl);
            }
            balanced = 100u64.wrapping_mul(tl.wrapping_add(p_w)) <= imbalance.wrapping_mul(load);
            if sync && balanced && curr.is_some() && overlaps_small && waker_ok {
                return Some(WakeReason::AffineSync);
            }
        } else {
            if sync && curr.is_some() && overlaps_small && waker_ok {
                return Some(WakeReason::AffineSync);
            }
            if sync {
                tl = subtract(tl);
            }
            balanced = 100u64.wrapping_mul(tl.wrapping_add(p_w)) <= imbalance.wrapping_mul(load);
        }
        let tl_per_task = self.cpu_avg_load_per_task(this_cpu);
        let cheap = tl <= load && tl.wrapping_add(self.target_load(prev_cpu, idx)) <= tl_per_task;
        (cheap || balanced).then_some(WakeReason::Affine)
    }

    /// `wake_idle(cpu, p)`: if `cpu` is busy with exactly one task, look for
    /// an idle allowed CPU (first in mask order) in the lowest domains that
    /// have SD_WAKE_IDLE (SMT siblings) or SD_WAKE_IDLE_FAR with `p` cache
    /// cold (2.6.26-rc1 on; 2.6.25 has no SD_WAKE_IDLE_FAR); stop at the
    /// first domain without them.
    ///
    /// 2.6.25 and 2.6.26-rc1 test `rq->nr_running` (every class) here;
    /// 104f64549c9 (rc2) switched to `rq->cfs.nr_running`. Only the fair
    /// class is modelled, so both read the same count.
    pub(crate) fn wake_idle(&self, cpu: CpuId, p: TaskId) -> CpuId {
        if self.rules.is_2_6_32() {
            return cpu;
        }
        let rq = &self.rqs[cpu];
        // 2.6.25 reads `rq->nr_running` (4b119e21 sched_fair.c:954), which
        // counts tasks; rc4 and 2.6.26 read `rq->cfs.nr_running`, which is
        // the top queue under group scheduling and counts groups.
        let cfs_nr = if self.rules.is_2_6_25() { rq.nr_running } else { self.rq_cfs_nr_running(cpu) };
        if rq.is_idle() || cfs_nr > 1 {
            return cpu;
        }
        let allowed = self.t(p).allowed;
        // SD_WAKE_IDLE_FAR came with 1d3504fcf56 (2.6.26-rc1); 2.6.25's
        // wake_idle tests SD_WAKE_IDLE alone (4b119e21 sched_fair.c:957-958),
        // so there bit 2048 written into a domain's flags is read by nothing.
        let far_read = !self.rules.is_2_6_25();
        for sd in self.domains.of(cpu).iter() {
            let far_ok = far_read
                && sd.flags.contains(SdFlags::WAKE_IDLE_FAR)
                && !self.task_hot(p, self.rqs[self.t(p).cpu].clock, true);
            if sd.flags.contains(SdFlags::WAKE_IDLE) || far_ok {
                if let Some(c) = sd.span.iter_and(&allowed).find(|&c| self.rqs[c].is_idle()) {
                    return c;
                }
            } else {
                break;
            }
        }
        cpu
    }

    /// `find_idlest_group(sd, p, this_cpu)` (2.6.26 sched.c:1921): the group
    /// with the least power-scaled load, if it beats the local group by half
    /// the domain's imbalance margin. `per_power(group, load)` divides a
    /// group's load (× 1024) by its power: by reciprocal multiply
    /// (`sg_div_cpu_power`) in 2.6.25/26, plainly in 2.6.32
    /// (`find_idlest_group_32`); the rest is the same in both.
    pub(crate) fn find_idlest_group(
        &self,
        groups: &[SchedGroup],
        pct: u32,
        load_idx: u8,
        p: TaskId,
        this_cpu: CpuId,
        per_power: impl Fn(&SchedGroup, u64) -> u64,
    ) -> Option<usize> {
        let allowed = self.t(p).allowed;
        let imbalance = half_imbalance(pct);
        let mut idlest = None;
        let mut min_load = u64::MAX;
        let mut this_load = 0;
        for (gi, g) in groups.iter().enumerate() {
            // Skip over this group if it has no CPUs allowed.
            if !g.cpus.intersects(&allowed) {
                continue;
            }
            let local = g.cpus.contains(this_cpu);
            // Tally up the load of all CPUs in the group; bias balancing
            // toward the CPUs of our domain.
            let sum: u64 = g
                .cpus
                .iter()
                .map(|i| if local { self.source_load(i, load_idx) } else { self.target_load(i, load_idx) })
                .fold(0u64, |a, b| a.wrapping_add(b));
            let avg = per_power(g, sum.wrapping_mul(1024));
            if local {
                this_load = avg;
            } else if avg < min_load {
                min_load = avg;
                idlest = Some(gi);
            }
        }
        match idlest {
            Some(g) if 100u64.wrapping_mul(this_load) >= imbalance.wrapping_mul(min_load) => Some(g),
            _ => None,
        }
    }

    /// `find_idlest_cpu(group, p, this_cpu)`: least weighted_cpuload among
    /// allowed CPUs, ties to this_cpu.
    pub(crate) fn find_idlest_cpu(&self, group: &SchedGroup, p: TaskId, this_cpu: CpuId) -> Option<CpuId> {
        let allowed = self.t(p).allowed;
        let mut best = None;
        let mut min_load = u64::MAX;
        for i in group.cpus.iter_and(&allowed) {
            let load = self.weighted_cpuload(i);
            if load < min_load || (load == min_load && i == this_cpu) {
                min_load = load;
                best = Some(i);
            }
        }
        best
    }

    /// `sched_balance_self(cpu, SD_BALANCE_FORK)` (2.6.26 sched.c:2007):
    /// from the highest domain with the flag (stopping at a
    /// POWERSAVINGS_BALANCE one), descend towards the idlest group and CPU.
    /// The result is the kernel's: `sched_fork` sets it without testing
    /// the child's mask (2.6.26 sched.c:2229-2231, 2.6.32 2582-2584), so
    /// when no level moves the child it stays on `this_cpu`, even outside
    /// its mask beside a stranded parent.
    pub(crate) fn sched_balance_fork(&mut self, this_cpu: CpuId, p: TaskId) -> CpuId {
        if self.rules.is_2_6_32() {
            return self.select_task_rq_fair_32(p, this_cpu, false, false).0;
        }
        let flag = SdFlags::BALANCE_FORK;
        let mut cpu = this_cpu;
        let mut sd = self.highest_with(cpu, flag, usize::MAX);
        while let Some(i) = sd {
            let d = &self.domains.of(cpu)[i];
            let child = i.checked_sub(1);
            if !d.flags.contains(flag) {
                sd = child;
                continue;
            }
            let span_w = d.span.weight();
            let found = self
                .find_idlest_group(&d.groups, d.params.imbalance_pct, d.params.forkexec_idx, p, cpu, |g, load| {
                    sg_div_cpu_power(g.cpu_power, load)
                })
                .and_then(|g| self.find_idlest_cpu(&d.groups[g], p, cpu));
            let read = self.groups_read(&d.groups, p);
            self.emit(Event::Scan { cpu, cpus: read });
            match found {
                Some(new) if new != cpu => {
                    cpu = new;
                    sd = self.highest_with(cpu, flag, span_w);
                }
                _ => sd = child,
            }
        }
        cpu
    }

    /// The runqueues `find_idlest_group` reads for `p`: every CPU of each
    /// group that holds a CPU `p` allows (2.6.26 sched.c:1933-1935,
    /// 2.6.32-rc1 sched_fair.c:1260-1263 and 2.6.32 :1286-1289 skip the
    /// others unread). `find_idlest_cpu`
    /// then reads some of the same again.
    pub(crate) fn groups_read(&self, groups: &[SchedGroup], p: TaskId) -> u32 {
        let allowed = self.t(p).allowed;
        groups.iter().filter(|g| g.cpus.intersects(&allowed)).map(|g| g.cpus.weight() as u32).sum()
    }

    /// Index of the highest domain of `cpu` with `flag` whose span is
    /// smaller than `below` CPUs, stopping at SD_POWERSAVINGS_BALANCE.
    /// With a `below`, this is the `for_each_domain(cpu, tmp)` walk that
    /// picks the next level after a move in sched_balance_self (2.6.26
    /// sched.c:2007) and select_task_rq_fair (2.6.32), the same in both.
    pub(crate) fn highest_with(&self, cpu: CpuId, flag: SdFlags, below: usize) -> Option<usize> {
        let mut found = None;
        for (i, d) in self.domains.of(cpu).iter().enumerate() {
            if below != usize::MAX && d.span.weight() >= below {
                break;
            }
            if below == usize::MAX && d.flags.contains(SdFlags::POWERSAVINGS_BALANCE) {
                break;
            }
            if d.flags.contains(flag) {
                found = Some(i);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_divide_matches_kernel() {
        // reciprocal_value(1024) = (2^32 + 1023) / 1024 = 4194304 (exactly 2^22).
        assert_eq!(reciprocal_value(1024), 1 << 22);
        // 2048 * 1024 / 1024 = 2048.
        assert_eq!(sg_div_cpu_power(1024, 2048 * 1024), 2048);
        // power 2048 (two CPUs): (3072*1024) / 2048 = 1536.
        assert_eq!(sg_div_cpu_power(2048, 3072 * 1024), 1536);
        // u32 truncation of the load argument: 2^32 + 5 -> 5.
        // (2^32 + 2048) as u32 = 2048 -> 2048 * 2^22 >> 32 = 2.
        assert_eq!(sg_div_cpu_power(1024, (1u64 << 32) + 2048), 2);
        assert_eq!(half_imbalance(125), 112);
        assert_eq!(half_imbalance(110), 105);
    }
}
