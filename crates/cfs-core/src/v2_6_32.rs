//! The 2.6.32 profiles (2.6.32-rc1 17d857be, 2.6.32 22763c5c): where the
//! fair class differs from 2.6.26, these methods replace the 2.6.26 ones
//! (the 2.6.26 functions dispatch here first when `Rules::is_2_6_32`).
//!
//! The changes and the commits that made them:
//! - `update_min_vruntime` from curr and leftmost, called from update_curr
//!   and dequeue (1af5f730fc1, 2.6.28); the tree ops no longer move it.
//! - `sched_slice` counts a not-yet-queued entity and uses calc_delta_mine;
//!   `sched_vslice` = calc_delta_fair(sched_slice) (2.6.28).
//! - `place_entity`: base is min_vruntime; sleeper credit halved by
//!   GENTLE_FAIR_SLEEPERS (51e0304ce6e), normalised only with
//!   NORMALIZED_SLEEPER (off); never backwards, also for new tasks.
//! - wakeup preemption: `wakeup_gran(curr, se)` with ADAPTIVE_GRAN
//!   (e52fb7c0972, avg_wakeup) and ASYM_GRAN (the wakee's weight);
//!   `wakeup_preempt_entity` returns -1 for vdiff <= 0.
//! - buddies: next (NEXT_BUDDY, off) and last (LAST_BUDDY, on; 4793241be40).
//!   rc1 sets `last` on every wakeup and clears both buddies after each
//!   pick; 2.6.32 final (f685ceacab0, rc7) sets them only when the wakeup
//!   preempts and the queue has at least sched_nr_latency tasks, and clears
//!   only the chosen entity's pointers.
//! - check_preempt_tick (final only, f685ceacab0): also reschedule when
//!   curr's vruntime lead over the leftmost exceeds its ideal slice.
//! - avg_overlap at sleep and (df1c99d4165) at preemption, avg_wakeup,
//!   avg_running, start_runtime; `last_wakeup` stamped on the real waker in
//!   try_to_wake_up (2087a1ad822, 2.6.27); the sleep statistics are folded
//!   in sched.c dequeue_task *before* update_curr, the preemption ones in
//!   put_prev_task before put_prev_entity's update_curr, so both read the
//!   sum of the last update.
//! - try_to_wake_up updates the clock of the task's previous runqueue, and
//!   (2.6.32 only, f5dc37530ba in rc5) of the chosen one: in rc1 a wakeup
//!   onto another CPU runs enqueue/check_preempt_wakeup on that CPU's last
//!   clock.
//! - select_task_rq_fair with SD_BALANCE_WAKE / SD_WAKE_AFFINE /
//!   SD_PREFER_LOCAL (59abf02644c) and want_affine (c88d5910890); the
//!   2.6.32 wake_affine with SYNC_LESS/SYNC_MORE and the "this_load == 0"
//!   clause (71a29aa7b60); no wake_idle.
//! - load balancing: group capacity from power (rounded), clamped to 1
//!   under a child with SD_PREFER_SIBLING; group_imb when the spread
//!   exceeds twice the average load per task; plain divisions; the
//!   busiest queue compared by load per power; fix_small_imbalance with
//!   this CPU's own load per task; task_hot treats next *and* last buddies
//!   as hot (2.6.32 final: only when the CPU running the balancer has
//!   tasks); load_balance_newidle answers -1 when it moved nothing and
//!   idle_balance's walk starts from 0.

use crate::cfs_rq::{max_vruntime, min_vruntime};
use crate::entity::{CurrentState, TaskId, update_avg};
use crate::fair::sched_period;
use crate::features::Feature;
use crate::observe::{Event, Observer, PreemptReason, WakeReason};
use crate::sched::Scheduler;
use crate::tunables::Tunables;
use crate::weights::{LoadWeight, NICE_0_LOAD, Policy, calc_delta_mine};
use cfs_topology::{CpuId, KernelVersion, SdFlags};

/// 2.6.32 `calc_delta_fair(delta, se)`: `delta * 1024 / w`, skipped for
/// nice-0 entities.
pub fn calc_delta_fair_32(delta: u64, se_load: &LoadWeight) -> u64 {
    if se_load.weight == NICE_0_LOAD {
        return delta;
    }
    let mut lw = *se_load;
    calc_delta_mine(delta, NICE_0_LOAD, &mut lw, KernelVersion::V2_6_32)
}

/// 2.6.32 `sched_slice(cfs_rq, se)`: `period(nr + !on_rq) * w / (W + (!on_rq ? w : 0))`
/// via calc_delta_mine.
pub fn sched_slice_32(nr_running: u64, cfs_load: &mut LoadWeight, se_weight: u64, se_on_rq: bool, t: &Tunables) -> u64 {
    let slice = sched_period(nr_running + u64::from(!se_on_rq), t);
    if se_on_rq {
        calc_delta_mine(slice, se_weight, cfs_load, KernelVersion::V2_6_32)
    } else {
        let mut lw = *cfs_load;
        lw.add(se_weight);
        calc_delta_mine(slice, se_weight, &mut lw, KernelVersion::V2_6_32)
    }
}

/// `DIV_ROUND_CLOSEST(power, SCHED_LOAD_SCALE)`.
pub fn capacity_of_power(power: u64) -> u64 {
    (power + 512) / 1024
}

impl<O: Observer> Scheduler<O> {
    /// `update_min_vruntime(cfs_rq)`, in the form 2.6.32 has: 1af5f730fc1
    /// (2.6.28) with e17036dac18 (2.6.29), which takes the leftmost's
    /// vruntime outright only when there is no current task. Used by the
    /// 2.6.32 profiles, and by 2.6.25/26 with the `min-vruntime-fix` patch.
    pub(crate) fn update_min_vruntime(&mut self, cpu: CpuId) {
        let cfs = &self.rqs[cpu].cfs;
        let mut v = cfs.min_vruntime;
        let curr_v = cfs.curr.map(|c| self.t(c).se.vruntime);
        if let Some(cv) = curr_v {
            v = cv;
        }
        if let Some(l) = cfs.leftmost {
            let lv = self.t(l).se.vruntime;
            v = if curr_v.is_none() { lv } else { min_vruntime(v, lv) };
        }
        let rq = &mut self.rqs[cpu];
        rq.cfs.min_vruntime = max_vruntime(rq.cfs.min_vruntime, v);
    }

    /// 2.6.32 `update_curr`: nothing for a zero delta; calc_delta_fair;
    /// then update_min_vruntime.
    pub(crate) fn update_curr_32(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu];
        let Some(cid) = rq.cfs.curr else { return };
        let now = rq.clock;
        let se = &mut self.tasks[cid.0 as usize].se;
        let delta = now.wrapping_sub(se.exec_start);
        if delta == 0 {
            return;
        }
        se.stats.exec_max = se.stats.exec_max.max(delta);
        se.sum_exec_runtime = se.sum_exec_runtime.wrapping_add(delta);
        se.vruntime = se.vruntime.wrapping_add(calc_delta_fair_32(delta, &se.load));
        self.update_min_vruntime(cpu);
        self.tm(cid).se.exec_start = now;
    }

    /// The 2.6.32 slice of `id` on `cpu`'s queue.
    pub(crate) fn sched_slice_of_32(&mut self, cpu: CpuId, id: TaskId) -> u64 {
        let t = self.cfg.tunables;
        let (w, on_rq) = (self.t(id).se.load.weight, self.t(id).se.on_rq);
        let rq = &mut self.rqs[cpu];
        sched_slice_32(rq.cfs.nr_running, &mut rq.cfs.load, w, on_rq, &t)
    }

    /// 2.6.32 `place_entity`.
    pub(crate) fn place_entity_32(&mut self, cpu: CpuId, id: TaskId, initial: bool) {
        let feats = self.cfg.features;
        let mut v = self.rqs[cpu].cfs.min_vruntime;
        if initial && feats.has(Feature::StartDebit) {
            let slice = self.sched_slice_of_32(cpu, id);
            v = v.wrapping_add(calc_delta_fair_32(slice, &self.t(id).se.load));
        }
        if !initial && feats.has(Feature::FairSleepers) {
            let mut thresh = self.cfg.tunables.latency;
            if feats.has(Feature::NormalizedSleeper) && self.t(id).policy != Policy::Idle {
                thresh = calc_delta_fair_32(thresh, &self.t(id).se.load);
            }
            if feats.has(Feature::GentleFairSleepers) {
                thresh >>= 1;
            }
            v = v.wrapping_sub(thresh);
        }
        let se = &mut self.tm(id).se;
        se.vruntime = max_vruntime(se.vruntime, v);
    }

    /// `clear_buddies(cfs_rq, se)`: drop `next`/`last` pointing at `id`.
    pub(crate) fn clear_buddies(&mut self, cpu: CpuId, id: TaskId) {
        let cfs = &mut self.rqs[cpu].cfs;
        if cfs.last == Some(id) {
            cfs.last = None;
        }
        if cfs.next == Some(id) {
            cfs.next = None;
        }
    }

    /// 2.6.32 `wakeup_gran(curr, se)`: ADAPTIVE_GRAN shortens the
    /// granularity to what is left of the wakee's expected wakeup period;
    /// ASYM_GRAN scales it by the *wakee's* weight (else curr's).
    pub(crate) fn wakeup_gran_32(&self, cpu: CpuId, curr: TaskId, se: TaskId) -> u64 {
        let t = &self.cfg.tunables;
        let feats = self.cfg.features;
        let mut gran = t.wakeup_granularity;
        if self.rqs[cpu].cfs.curr.is_some() && feats.has(Feature::AdaptiveGran) {
            let c = &self.t(curr).se;
            let this_run = c.sum_exec_runtime.wrapping_sub(c.prev_sum_exec_runtime);
            let nr = self.rqs[self.t(se).cpu].cfs.nr_running;
            let expected = 2u64.wrapping_mul(self.t(se).se.avg_wakeup).wrapping_mul(nr);
            let g = expected.saturating_sub(this_run);
            gran = (g as i64).min(t.wakeup_granularity as i64) as u64;
        }
        let weighted = if feats.has(Feature::AsymGran) { se } else { curr };
        calc_delta_fair_32(gran, &self.t(weighted).se.load)
    }

    /// 2.6.32 `wakeup_preempt_entity(curr, se)`.
    pub(crate) fn wakeup_preempt_entity_32(&self, cpu: CpuId, curr: TaskId, se: TaskId) -> i32 {
        let vdiff = self.t(curr).se.vruntime.wrapping_sub(self.t(se).se.vruntime) as i64;
        if vdiff <= 0 {
            return -1;
        }
        if vdiff > self.wakeup_gran_32(cpu, curr, se) as i64 { 1 } else { 0 }
    }

    /// 2.6.32 `pick_next_entity` (+ the rc1 buddy clearing of
    /// pick_next_task_fair), then set_next_entity.
    pub(crate) fn pick_next_entity_32(&mut self, cpu: CpuId) -> Option<(TaskId, bool)> {
        let left = self.rqs[cpu].cfs.leftmost?;
        let (next, last) = (self.rqs[cpu].cfs.next, self.rqs[cpu].cfs.last);
        let wins = |s: &Self, b: Option<TaskId>| {
            b.filter(|&b| s.t(b).se.tree_key.is_some() && s.wakeup_preempt_entity_32(cpu, b, left) < 1)
        };
        let final_rules = self.cfg.version == KernelVersion::V2_6_32;
        let chosen = if final_rules {
            let mut se = left;
            if let Some(n) = wins(self, next) {
                se = n;
            }
            if let Some(l) = wins(self, last) {
                se = l;
            }
            self.clear_buddies(cpu, se);
            se
        } else {
            let se = wins(self, next).or_else(|| wins(self, last)).unwrap_or(left);
            let cfs = &mut self.rqs[cpu].cfs;
            cfs.next = None;
            cfs.last = None;
            se
        };
        self.set_next_entity(cpu, chosen);
        Some((chosen, chosen != left))
    }

    /// 2.6.32 `check_preempt_tick`.
    pub(crate) fn check_preempt_tick_32(&mut self, cpu: CpuId, curr: TaskId) {
        let ideal = self.sched_slice_of_32(cpu, curr);
        let se = &self.t(curr).se;
        let ran = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
        if ran > ideal {
            self.resched_cpu(cpu);
            self.clear_buddies(cpu, curr);
            self.emit(Event::TickPreempt { cpu, curr, ran, ideal });
            return;
        }
        if self.cfg.version != KernelVersion::V2_6_32 || !self.cfg.features.has(Feature::WakeupPreempt) {
            return;
        }
        if ran < self.cfg.tunables.min_granularity {
            return;
        }
        if self.rqs[cpu].cfs.nr_running > 1 {
            if let Some(l) = self.rqs[cpu].cfs.leftmost {
                // `s64 delta = curr->vruntime - se->vruntime; if (delta >
                // ideal_runtime)` (22763c5c sched_fair.c:841-843): s64 against
                // unsigned long converts the s64, so a curr *behind* the
                // leftmost (negative delta) also reschedules. The `delta < 0`
                // early return came with upstream d7d8294415f (January 2011,
                // later in 2.6.32.y stable), not in 2.6.32.
                let delta = self.t(curr).se.vruntime.wrapping_sub(self.t(l).se.vruntime);
                if delta > ideal {
                    self.resched_cpu(cpu);
                    self.emit(Event::TickPreempt { cpu, curr, ran, ideal });
                }
            }
        }
    }

    /// 2.6.32 `check_preempt_wakeup(rq, p, wake_flags)`.
    pub(crate) fn check_preempt_wakeup_32(&mut self, cpu: CpuId, p: TaskId, sync: bool, fork: bool) {
        let Some(curr) = self.rqs[cpu].curr else {
            self.resched_cpu(cpu);
            self.emit(Event::PreemptCheck { cpu, curr: None, wakee: p, preempt: true, reason: PreemptReason::IdleCpu });
            return;
        };
        let feats = self.cfg.features;
        let final_rules = self.cfg.version == KernelVersion::V2_6_32;
        let scale = self.rqs[cpu].cfs.nr_running >= self.cfg.tunables.nr_latency;
        self.update_curr_32(cpu);
        let emit = |s: &mut Self, preempt: bool, reason: PreemptReason| {
            s.emit(Event::PreemptCheck { cpu, curr: Some(curr), wakee: p, preempt, reason });
        };
        if curr == p {
            return emit(self, false, PreemptReason::SelfWake);
        }
        if !final_rules && feats.has(Feature::LastBuddy) && self.t(curr).se.on_rq {
            self.set_buddy(cpu, curr, true);
        }
        if feats.has(Feature::NextBuddy) && (scale || !final_rules) && !fork {
            self.set_buddy(cpu, p, false);
        }
        if self.rqs[cpu].need_resched {
            return emit(self, true, PreemptReason::AlreadyPending);
        }
        if self.t(p).policy != Policy::Normal {
            return emit(self, false, PreemptReason::BatchWakee);
        }
        if self.t(curr).policy == Policy::Idle {
            self.resched_cpu(cpu);
            return emit(self, true, PreemptReason::VruntimeLead);
        }
        let cost = self.cfg.tunables.migration_cost_unsigned();
        let small = |o: u64| o < cost;
        let overlap =
            feats.has(Feature::WakeupOverlap) && small(self.t(curr).se.avg_overlap) && small(self.t(p).se.avg_overlap);
        if (feats.has(Feature::WakeupSync) && sync) || overlap {
            self.resched_cpu(cpu);
            return emit(self, true, PreemptReason::VruntimeLead);
        }
        if feats.has(Feature::WakeupRunning) && self.t(p).se.avg_running < self.t(curr).se.avg_running {
            self.set_buddy(cpu, p, false);
            self.resched_cpu(cpu);
            return emit(self, true, PreemptReason::VruntimeLead);
        }
        if !feats.has(Feature::WakeupPreempt) {
            return emit(self, false, PreemptReason::FeatureOff);
        }
        if self.wakeup_preempt_entity_32(cpu, curr, p) == 1 {
            self.resched_cpu(cpu);
            if final_rules && self.t(curr).se.on_rq && feats.has(Feature::LastBuddy) && scale {
                self.set_buddy(cpu, curr, true);
            }
            emit(self, true, PreemptReason::VruntimeLead)
        } else {
            emit(self, false, PreemptReason::WithinGranularity)
        }
    }

    /// `set_last_buddy` / `set_next_buddy`: never for SCHED_IDLE tasks.
    fn set_buddy(&mut self, cpu: CpuId, id: TaskId, last: bool) {
        if self.t(id).policy == Policy::Idle {
            return;
        }
        let cfs = &mut self.rqs[cpu].cfs;
        if last {
            cfs.last = Some(id);
        } else {
            cfs.next = Some(id);
        }
    }

    /// 2.6.32 `task_new_fair`: the child starts from curr's vruntime, is
    /// placed (START_DEBIT, never backwards), swaps with the parent only
    /// with child_runs_first (off by default); no unconditional resched.
    pub(crate) fn task_new_fair_32(&mut self, cpu: CpuId, child: TaskId, parent_cpu: Option<CpuId>) {
        self.update_curr_32(cpu);
        let curr = self.rqs[cpu].cfs.curr;
        if let Some(c) = curr {
            self.tm(child).se.vruntime = self.t(c).se.vruntime;
        }
        self.place_entity_32(cpu, child, true);
        if let Some(c) = curr {
            let (cv, sv) = (self.t(c).se.vruntime, self.t(child).se.vruntime);
            if self.cfg.tunables.child_runs_first && parent_cpu == Some(cpu) && (cv.wrapping_sub(sv) as i64) < 0 {
                self.tm(c).se.vruntime = sv;
                self.tm(child).se.vruntime = cv;
                self.resched_cpu(cpu);
            }
        }
        self.activate_task(cpu, child, false);
    }

    /// 2.6.32 `yield_task_fair`: clears curr's buddies, then as 2.6.26 but
    /// with the wrap-safe `entity_before`.
    pub(crate) fn yield_task_fair_32(&mut self, cpu: CpuId) {
        let Some(curr) = self.rqs[cpu].cfs.curr else { return };
        if self.rqs[cpu].cfs.nr_running == 1 {
            return;
        }
        self.clear_buddies(cpu, curr);
        if !self.cfg.tunables.compat_yield && self.t(curr).policy != Policy::Batch {
            self.update_curr_32(cpu);
            return;
        }
        let Some(right) = self.rqs[cpu].cfs.last_in_tree() else { return };
        let rv = self.t(right).se.vruntime;
        if (rv.wrapping_sub(self.t(curr).se.vruntime) as i64) < 0 {
            return;
        }
        self.tm(curr).se.vruntime = rv.wrapping_add(1);
    }

    /// sched.c `enqueue_task` (2.6.32): a waking task starts a new
    /// runtime sample.
    pub(crate) fn enqueue_stats_32(&mut self, id: TaskId, wakeup: bool) {
        if wakeup {
            let se = &mut self.tm(id).se;
            se.start_runtime = se.sum_exec_runtime;
        }
    }

    /// sched.c `dequeue_task` (2.6.32): on sleep, fold the overlap since
    /// the last wakeup stamp, or (no stamp) a granularity into avg_wakeup.
    pub(crate) fn dequeue_stats_32(&mut self, id: TaskId, sleep: bool) {
        if !sleep {
            return;
        }
        let gran = self.cfg.tunables.wakeup_granularity;
        let se = &mut self.tm(id).se;
        if se.last_wakeup != 0 {
            update_avg(&mut se.avg_overlap, se.sum_exec_runtime.wrapping_sub(se.last_wakeup));
            se.last_wakeup = 0;
        } else {
            update_avg(&mut se.avg_wakeup, gran);
        }
    }

    /// sched.c `put_prev_task` (2.6.32): avg_running always; a preempted
    /// task also grows avg_overlap by min(stint, 2 × migration_cost).
    pub(crate) fn put_prev_stats_32(&mut self, id: TaskId) {
        // `2*sysctl_sched_migration_cost` is computed in unsigned int
        // (sched.c:5369): it wraps for costs of 2^31 and more.
        let cost2 = u64::from(self.cfg.tunables.migration_cost.wrapping_mul(2));
        // `p->state == TASK_RUNNING` (sched.c:5359): not a task that went to
        // sleep here (dequeued), nor one preempted after it set its sleep
        // state (still queued, but TASK_INTERRUPTIBLE).
        let t = self.t(id);
        let still_runnable = t.se.on_rq && t.current_state == CurrentState::Running;
        let se = &mut self.tm(id).se;
        let runtime = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
        update_avg(&mut se.avg_running, runtime);
        if still_runnable {
            update_avg(&mut se.avg_overlap, runtime.min(cost2));
        } else {
            update_avg(&mut se.avg_running, 0);
        }
    }

    /// try_to_wake_up (2.6.32), after activation and when not in an
    /// interrupt: the waker folds its runtime since its last wakeup stamp
    /// (or since its own wakeup) into avg_wakeup and re-stamps.
    pub(crate) fn waker_stats_32(&mut self, waker: TaskId) {
        let se = &mut self.tm(waker).se;
        let base = if se.last_wakeup != 0 { se.last_wakeup } else { se.start_runtime };
        update_avg(&mut se.avg_wakeup, se.sum_exec_runtime.wrapping_sub(base));
        se.last_wakeup = se.sum_exec_runtime;
    }

    /// `power_of(cpu)`: the cpu_power of the CPU's own group in its lowest
    /// domain (589 for a Nehalem thread, until ARCH_POWER refreshes it:
    /// [`crate::cpu_power`]), or 1024.
    pub fn power_of(&self, cpu: CpuId) -> u64 {
        self.domains
            .of(cpu)
            .first()
            .and_then(|d| d.group_of(cpu).map(|g| u64::from(self.group_power(d.level, &d.groups[g]))))
            .unwrap_or(1024)
    }

    /// 2.6.32 `select_task_rq_fair(p, sd_flag, wake_flags)` for wakeups
    /// (SD_BALANCE_WAKE) and forks (SD_BALANCE_FORK).
    pub(crate) fn select_task_rq_fair_32(
        &mut self,
        p: TaskId,
        this_cpu: CpuId,
        wake: bool,
        sync: bool,
    ) -> (CpuId, WakeReason) {
        let sd_flag = if wake { SdFlags::BALANCE_WAKE } else { SdFlags::BALANCE_FORK };
        let prev_cpu = self.t(p).cpu;
        let allowed = self.t(p).allowed;
        let mut cpu = this_cpu;
        let mut new_cpu = this_cpu;
        let mut want_affine = false;
        let mut want_sd = true;
        if wake {
            want_affine = self.cfg.features.has(Feature::AffineWakeups) && allowed.contains(this_cpu);
            new_cpu = prev_cpu;
        }
        let mut affine_sd = None;
        let mut sd = None;
        let mut scans: u32 = 0;
        for (i, d) in self.domains.of(this_cpu).iter().enumerate() {
            if d.flags.intersects(SdFlags::POWERSAVINGS_BALANCE | SdFlags::PREFER_LOCAL) {
                // Sum power and fair tasks over the whole span: the cost
                // Yanmin measured (the simulator prices it per CPU).
                let (mut power, mut nr) = (0u64, 0u64);
                for c in d.span.iter() {
                    power += self.power_of(c);
                    nr += self.rqs[c].cfs.nr_running;
                }
                scans += d.span.weight() as u32;
                if d.flags.contains(SdFlags::POWERSAVINGS_BALANCE) {
                    nr /= 2;
                }
                if nr < capacity_of_power(power) {
                    want_sd = false;
                }
            }
            if want_affine && d.flags.contains(SdFlags::WAKE_AFFINE) && d.span.contains(prev_cpu) {
                affine_sd = Some(i);
                want_affine = false;
            }
            if !want_sd && !want_affine {
                break;
            }
            if !d.flags.contains(sd_flag) {
                continue;
            }
            if want_sd {
                sd = Some(i);
            }
        }
        if scans > 0 {
            self.emit(Event::Scan { cpu: this_cpu, cpus: scans });
        }
        if let Some(a) = affine_sd {
            if self.wake_affine_32(a, p, this_cpu, sync) {
                return (this_cpu, if sync { WakeReason::AffineSync } else { WakeReason::Affine });
            }
        }
        let mut moved = false;
        while let Some(i) = sd {
            let d = &self.domains.of(cpu)[i];
            let child = i.checked_sub(1);
            if !d.flags.contains(sd_flag) {
                sd = child;
                continue;
            }
            let load_idx = if wake { d.params.wake_idx } else { d.params.forkexec_idx };
            let span_w = d.span.weight();
            let read = self.groups_read(&d.groups, p);
            self.emit(Event::Scan { cpu, cpus: read });
            let Some(g) = self.find_idlest_group_32(cpu, i, load_idx, p) else {
                sd = child;
                continue;
            };
            let group = self.domains.of(cpu)[i].groups[g].clone();
            match self.find_idlest_cpu(&group, p, cpu) {
                Some(n) if n != cpu => {
                    new_cpu = n;
                    cpu = n;
                    moved = true;
                    sd = self.highest_with(cpu, sd_flag, span_w);
                }
                Some(n) => {
                    new_cpu = n;
                    sd = child;
                }
                None => sd = child,
            }
        }
        let reason = if moved {
            WakeReason::Balance
        } else if new_cpu == prev_cpu {
            WakeReason::Previous
        } else {
            WakeReason::Balance
        };
        (new_cpu, reason)
    }

    /// 2.6.32 `wake_affine(sd, p, sync)`.
    pub(crate) fn wake_affine_32(&mut self, sd_i: usize, p: TaskId, this_cpu: CpuId, mut sync: bool) -> bool {
        let d = &self.domains.of(this_cpu)[sd_i];
        let (idx, pct) = (d.params.wake_idx, d.params.imbalance_pct);
        let prev_cpu = self.t(p).cpu;
        let mut load = self.source_load(prev_cpu, idx);
        let mut this_load = self.target_load(this_cpu, idx);
        // The runqueues this wakeup reads (the fallback test below reads
        // the same two again). Only a wakeup with an affine domain gets
        // here: without AFFINE_WAKEUPS, with this CPU outside p's mask, or
        // with no SD_WAKE_AFFINE domain spanning prev_cpu it reads none.
        self.emit(Event::Scan { cpu: this_cpu, cpus: 2 });
        let cost = self.cfg.tunables.migration_cost_unsigned();
        let curr = self.rqs[this_cpu].curr;
        let (curr_overlap, curr_w) =
            curr.map_or((0, NICE_0_LOAD), |c| (self.t(c).se.avg_overlap, self.t(c).se.load.weight));
        let p_overlap = self.t(p).se.avg_overlap;
        if sync {
            if self.cfg.features.has(Feature::SyncLess) && (curr_overlap > cost || p_overlap > cost) {
                sync = false;
            }
        } else if self.cfg.features.has(Feature::SyncMore) && curr_overlap < cost && p_overlap < cost {
            sync = true;
        }
        if sync {
            // effective_load() is the identity without group scheduling:
            // this_load += -w_curr; load += 0 (wl = 0 returns 0 with ASYM_EFF_LOAD,
            // and wl otherwise, which is 0 too).
            this_load = this_load.wrapping_sub(curr_w);
            load = load.wrapping_add(0);
        }
        // `100*(this_load + effective_load(tg, this_cpu, weight, weight)) <=
        // imbalance*(load + effective_load(tg, prev_cpu, 0, weight))`
        // (22763c5c sched_fair.c:1238-1240): without group scheduling (or for
        // the root group) effective_load returns its `wl`, which is the
        // wakee's weight on this CPU's side and 0 on the previous CPU's, so
        // the previous CPU's load is compared as it is, as in 2.6.26.
        let w = self.t(p).se.load.weight;
        let imbalance = crate::wakeup::half_imbalance(pct);
        let balanced = this_load == 0 || 100u64.wrapping_mul(this_load.wrapping_add(w)) <= imbalance.wrapping_mul(load);
        if sync && balanced {
            return true;
        }
        let tl_per_task = self.cpu_avg_load_per_task(this_cpu);
        balanced || (this_load <= load && this_load.wrapping_add(self.target_load(prev_cpu, idx)) <= tl_per_task)
    }

    /// 2.6.32 `find_idlest_group` (22763c5c sched_fair.c): as 2.6.26 but
    /// with a plain division by the group's power (2.6.32 never lets a
    /// cpu_power be 0; we take it as at least 1).
    fn find_idlest_group_32(&self, cpu: CpuId, sd_i: usize, load_idx: u8, p: TaskId) -> Option<usize> {
        let d = &self.domains.of(cpu)[sd_i];
        self.find_idlest_group(&d.groups, d.params.imbalance_pct, load_idx, p, cpu, |g, load| {
            load / u64::from(self.group_power_seen_by(cpu, d.level, g)).max(1)
        })
    }
}

impl<O: Observer> Scheduler<O> {
    /// 2.6.32 `find_busiest_group` = `update_sd_lb_stats` (+
    /// `update_sg_lb_stats` per group) and `calculate_imbalance` /
    /// `fix_small_imbalance` (22763c5c sched.c:3704-4070), with
    /// check_power_save_busiest_group at out_balanced (`PowerSavingsStats`).
    /// The CPU loop, the group choice, the out_balanced tests and
    /// calculate_imbalance are shared with 2.6.26 (`balance.rs`); here are
    /// the group figures and fix_small_imbalance, which changed.
    pub(crate) fn find_busiest_group_32(
        &self,
        this_cpu: CpuId,
        sd_i: usize,
        idle: crate::balance::CpuIdleType,
        sd_idle: &mut bool,
        cpus: &cfs_topology::CpuMask,
        balance: &mut bool,
    ) -> Option<crate::balance::BusiestGroup> {
        use crate::balance::{BusiestGroup, PowerSavingsStats, SdLbStats, get_sd_load_idx};
        let doms = self.domains.of(this_cpu);
        let sd = &doms[sd_i];
        let prefer_sibling = sd_i > 0 && doms[sd_i - 1].flags.contains(SdFlags::PREFER_SIBLING);
        let load_idx = get_sd_load_idx(sd, idle);
        let mut sds = SdLbStats::default();
        let mut power_savings = PowerSavingsStats::new(sd.flags, idle, true);
        for (gi, g) in sd.groups.iter().enumerate() {
            let local = g.cpus.contains(this_cpu);
            let mut sgs = self.update_sg_lb_stats(g, this_cpu, idle, load_idx, sd_idle, local, cpus, balance, true)?;
            let power = u64::from(self.group_power_seen_by(this_cpu, sd.level, g)).max(1);
            sgs.avg_load = sgs.group_load.wrapping_mul(1024) / power;
            let avg_lpt = sgs.sum_avg_load_per_task.wrapping_mul(1024) / power;
            // max_cpu_load starts at 0 and min_cpu_load at ~0UL
            // (sched.c:3724-3725): a group with no CPU in `cpus` gets
            // 0 - ~0 = 1 > 2 * 0, so group_imb = 1 there (unsigned long).
            sgs.group_imb = sgs.max_cpu_load.wrapping_sub(sgs.min_cpu_load) > avg_lpt.wrapping_mul(2);
            sgs.group_capacity = capacity_of_power(power);
            if prefer_sibling {
                sgs.group_capacity = sgs.group_capacity.min(1);
            }
            sds.update(gi, local, power, &sgs);
            power_savings.update(gi, g.cpus.first().unwrap_or(0), local, sds.this_nr_running, &sgs);
        }
        // out_balanced: check_power_save_busiest_group (sched.c:4056-4063).
        let Some(b) = sds.busiest_if_imbalanced(sd.params.imbalance_pct) else {
            return power_savings.busiest(sds.this);
        };
        let (mut imbalance, need_fix) = sds.calculate_imbalance();
        if need_fix {
            imbalance = sds.fix_small_imbalance(
                imbalance,
                sds.busiest_load_per_task,
                || self.cpu_avg_load_per_task(this_cpu),
                // The powers were taken as at least 1 above.
                |power, load| load / power.max(1),
            );
        }
        Some(BusiestGroup { group: b, imbalance })
    }

    /// 2.6.32 `find_busiest_queue`: compares load per unit of CPU power.
    pub(crate) fn find_busiest_queue_32(
        &self,
        group: &cfs_topology::CpuMask,
        imbalance: u64,
        cpus: &cfs_topology::CpuMask,
    ) -> Option<CpuId> {
        let (mut best, mut max_load) = (None, 0u64);
        for i in group.iter_and(cpus) {
            let power = self.power_of(i).max(1);
            let capacity = capacity_of_power(power);
            let rq = &self.rqs[i];
            let wl = rq.load.weight.wrapping_mul(1024) / power;
            if capacity > 0 && rq.nr_running == 1 && wl > imbalance {
                continue;
            }
            if wl > max_load {
                max_load = wl;
                best = Some(i);
            }
        }
        best
    }
}
