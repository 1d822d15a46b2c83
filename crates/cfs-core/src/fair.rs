//! The fair class on one runqueue: `kernel/sched_fair.c` of 2.6.26
//! (bce7f793), with the 2.6.25 and 2.6.26-rc4 variants where they differ.
//!
//! Functions keep their kernel names. The pure arithmetic (periods,
//! slices, granularities) is exposed as free functions so it can be tested
//! and reused; the stateful operations are methods on [`Scheduler`] taking
//! the CPU whose cfs_rq they act on.

use crate::cfs_rq::{CfsRq, max_vruntime, min_vruntime};
use crate::entity::{CurrentState, SchedEntity, TaskId, TaskState};
use crate::features::Feature;
use crate::group::{GroupId, task_q};
use crate::observe::Observer;
use crate::observe::{Event, MigrateReason, PreemptReason};
use crate::patches::Patch;
use crate::profile::Rules;
use crate::sched::{Deschedule, Scheduler, Switch};
use crate::tunables::Tunables;
use crate::weights::{LoadWeight, NICE_0_LOAD, Policy, calc_delta_fair, calc_delta_mine, set_load_weight};
use alloc::vec::Vec;
use cfs_topology::CpuId;

// ----- pure arithmetic ---------------------------------------------------

/// `__sched_period(nr_running)` (2.6.26 sched_fair.c:344): the latency
/// while `nr <= sched_nr_latency`, else `min_granularity * nr`.
pub fn sched_period(nr_running: u64, t: &Tunables) -> u64 {
    if nr_running > t.nr_latency { t.min_granularity.wrapping_mul(nr_running) } else { t.latency }
}

/// `do_div(n, base)` on 64-bit: the divisor is an `u32`.
pub(crate) fn do_div(n: u64, base: u64) -> u64 {
    let b = base as u32;
    if b == 0 { n } else { n / b as u64 }
}

/// `sched_slice(cfs_rq, se)`: the real-time share of a period,
/// `period(nr_running) * w / W`.
///
/// 2.6.26 final multiplies and truncates with do_div; 2.6.25 and
/// 2.6.26-rc1..rc4 (calc_delta_weight, 8f1bc385cfb) use calc_delta_mine and
/// the queue's lazy inverse.
pub fn sched_slice(cfs_nr_running: u64, cfs_load: &mut LoadWeight, se_weight: u64, t: &Tunables, rules: &Rules) -> u64 {
    let period = sched_period(cfs_nr_running, t);
    if rules.is_2_6_25() || rules.weight_math_rc() {
        calc_delta_mine(period, se_weight, cfs_load, rules.version)
    } else {
        do_div(period.wrapping_mul(se_weight), cfs_load.weight)
    }
}

/// `sched_vslice_add(cfs_rq, se)`: the vruntime a new task is placed
/// behind min_vruntime with START_DEBIT, `period(n') * 1024 / W'` where
/// n' and W' count the new task if it is not queued yet.
///
/// 2.6.25 always adds the new task (`__sched_vslice(W + w, nr + 1)`);
/// 2.6.26-rc1..rc4 return the un-normalised `period(n')`.
pub fn sched_vslice_add(
    cfs_nr_running: u64,
    cfs_load_weight: u64,
    se_weight: u64,
    se_on_rq: bool,
    t: &Tunables,
    rules: &Rules,
) -> u64 {
    if rules.is_2_6_25() {
        let v = sched_period(cfs_nr_running + 1, t);
        return do_div(v.wrapping_mul(NICE_0_LOAD), cfs_load_weight.wrapping_add(se_weight));
    }
    let nr = cfs_nr_running + u64::from(!se_on_rq);
    let v = sched_period(nr, t);
    if rules.weight_math_rc() {
        return v;
    }
    let w = cfs_load_weight + if se_on_rq { 0 } else { se_weight };
    do_div(v.wrapping_mul(NICE_0_LOAD), w)
}

/// `wakeup_gran(se)` (2.6.26 final): the granularity, shrunk by
/// `1024 / w` for tasks heavier than nice 0 only. (2.6.25's
/// check_preempt_wakeup computes the same thing inline.)
///
/// 2.6.26-rc1..rc4 use `calc_delta_asym`: `gran * W / max(w, 1024)`,
/// scaled by the queue weight `W`.
pub fn wakeup_gran(se_load: &mut LoadWeight, cfs_load_weight: u64, t: &Tunables, rules: &Rules) -> u64 {
    let gran = t.wakeup_granularity;
    if rules.weight_math_rc() {
        let mut nice0 = LoadWeight { weight: NICE_0_LOAD, inv_weight: 1 << 22 };
        let lw = if se_load.weight < NICE_0_LOAD { &mut nice0 } else { se_load };
        return calc_delta_mine(gran, cfs_load_weight, lw, rules.version);
    }
    if se_load.weight > NICE_0_LOAD { calc_delta_fair(gran, se_load, rules.version) } else { gran }
}

/// `wakeup_preempt_entity(curr, se)`: -1 if `se` is right of `curr`, 1 if
/// it is more than `gran` left of it (preempt), else 0.
pub fn wakeup_preempt_entity(curr_vruntime: u64, se_vruntime: u64, gran: u64) -> i32 {
    let vdiff = curr_vruntime.wrapping_sub(se_vruntime) as i64;
    if vdiff < 0 {
        -1
    } else if vdiff > gran as i64 {
        1
    } else {
        0
    }
}

/// The arithmetic of `update_curr`'s `__update_curr` for one entity on a
/// queue of weight `q_weight`, at runqueue clock `now`: its sum_exec_runtime
/// grows by the time since `exec_start`, its vruntime by that time
/// weighted (nice 0: as it is; otherwise `calc_delta_fair(delta, w)`;
/// 2.6.26-rc4 charges `delta * W / w`, the reverted 8f1bc385cfb). `up`
/// weighs the charge further for the levels above (rc4's calc_delta_fair
/// walks the hierarchy; see [`crate::group::UpLevel::fair`]).
pub(crate) fn charge_entity(se: &mut SchedEntity, now: u64, q_weight: u64, rules: &Rules, up: impl FnOnce(u64) -> u64) {
    let delta = now.wrapping_sub(se.exec_start);
    se.stats.exec_max = se.stats.exec_max.max(delta);
    se.sum_exec_runtime = se.sum_exec_runtime.wrapping_add(delta);
    let weighted = if rules.weight_math_rc() {
        calc_delta_mine(delta, q_weight, &mut se.load, rules.version)
    } else if se.load.weight != NICE_0_LOAD {
        calc_delta_fair(delta, &mut se.load, rules.version)
    } else {
        delta
    };
    se.vruntime = se.vruntime.wrapping_add(up(weighted));
    se.exec_start = now;
}

// ----- stateful operations -------------------------------------------------

impl<O: Observer> Scheduler<O> {
    /// `__enqueue_entity`.
    pub(crate) fn enqueue_tree(&mut self, cpu: CpuId, id: TaskId) {
        let tg = self.tg(id);
        let q = task_q(&mut self.rqs, &mut self.groups, cpu, tg);
        let tasks = &mut self.tasks;
        let mut se = core::mem::take(&mut tasks[id.0 as usize].se);
        let mut rekeyed = alloc::vec::Vec::new();
        q.insert(
            id,
            &mut se,
            !self.rules.min_vruntime_tracks_curr(),
            |t| tasks[t.0 as usize].se.vruntime,
            |t, k| rekeyed.push((t, k)),
        );
        tasks[id.0 as usize].se = se;
        for (t, k) in rekeyed {
            tasks[t.0 as usize].se.tree_key = Some(k);
        }
    }

    /// `__dequeue_entity`.
    pub(crate) fn dequeue_tree(&mut self, cpu: CpuId, id: TaskId) {
        let tg = self.tg(id);
        let q = task_q(&mut self.rqs, &mut self.groups, cpu, tg);
        let tasks = &mut self.tasks;
        let mut se = core::mem::take(&mut tasks[id.0 as usize].se);
        q.remove(id, &mut se, !self.rules.min_vruntime_tracks_curr(), |t| tasks[t.0 as usize].se.vruntime);
        tasks[id.0 as usize].se = se;
    }

    /// `update_curr(cfs_rq)`: charge the running entity for the time since
    /// `exec_start`: sum_exec_runtime += delta; vruntime += delta (nice 0)
    /// or `calc_delta_fair(delta, w)`. 2.6.26-rc4 charges `delta * W / w`
    /// (the reverted 8f1bc385cfb). min_vruntime is *not* updated here in
    /// 2.6.25/26, except with the `min-vruntime-fix` patch (1af5f730fc1),
    /// which calls update_min_vruntime after the charge.
    ///
    /// `tg` names the queue, as the kernel's `cfs_rq` argument does: the
    /// task queue of that group on `cpu` (None: the runqueue's own, without
    /// group scheduling). Only its running task, if any, is charged.
    pub(crate) fn update_curr(&mut self, cpu: CpuId, tg: Option<GroupId>) {
        if self.rules.is_2_6_32() {
            return self.update_curr_32(cpu);
        }
        let rules = self.rules;
        let now = self.rqs[cpu].clock;
        let q = self.tq(cpu, tg);
        let Some(cid) = q.curr else { return };
        let q_weight = q.load.weight;
        let up = self.hier_up(tg).filter(|_| rules.weight_math_rc()).map(|g| self.up_level(cpu, g));
        let fair_up = |d: u64| up.map_or(d, |u| u.fair(d, &rules));
        charge_entity(&mut self.tasks[cid.0 as usize].se, now, q_weight, &rules, fair_up);
        if rules.min_vruntime_tracks_curr() {
            self.update_min_vruntime(cpu);
        }
    }

    /// `place_entity(cfs_rq, se, initial)`: start from min(min_vruntime,
    /// leftmost) (from min_vruntime alone with the `min-vruntime-fix`
    /// patch, 1af5f730fc1); a new task (START_DEBIT) goes one vslice later;
    /// a waking sleeper gets up to one latency of credit (NEW_FAIR_SLEEPERS)
    /// but is never moved backwards.
    pub(crate) fn place_entity(&mut self, cpu: CpuId, id: TaskId, initial: bool) {
        if self.rules.is_2_6_32() {
            return self.place_entity_32(cpu, id, initial);
        }
        let tg = self.tg(id);
        let cfs: &CfsRq = self.tq(cpu, tg);
        let left = cfs.leftmost.map(|l| self.tasks[l.0 as usize].se.vruntime);
        let se = &self.tasks[id.0 as usize].se;
        let up = self.hier_up(tg).map(|g| self.up_level(cpu, g));
        let v = self.placed_vruntime(cfs.min_vruntime, cfs.nr_running, cfs.load.weight, left, se, initial, up);
        self.tasks[id.0 as usize].se.vruntime = v;
    }

    /// The arithmetic of [`Self::place_entity`] for an entity `se` (a task
    /// or a group) on a queue with `min_vruntime`, `nr` entities of weight
    /// `w_q` and a leftmost at `leftmost`; `up`, a task's group level where
    /// the profile's arithmetic walks it (2.6.26's sched_vslice_add, rc4's
    /// calc_delta_fair).
    #[allow(clippy::too_many_arguments)] // the kernel's inputs, spelled out
    pub(crate) fn placed_vruntime(
        &self,
        min_v: u64,
        nr: u64,
        w_q: u64,
        leftmost: Option<u64>,
        se: &SchedEntity,
        initial: bool,
        up: Option<crate::group::UpLevel>,
    ) -> u64 {
        let rules = self.rules;
        let t = self.cfg.tunables;
        let feats = self.cfg.features;
        let mut vruntime = match leftmost {
            Some(lv) if !rules.min_vruntime_tracks_curr() => min_vruntime(min_v, lv),
            _ => min_v,
        };
        if initial && feats.has(Feature::StartDebit) {
            let mut vslice = sched_vslice_add(nr, w_q, se.load.weight, se.on_rq, &t, &rules);
            if let (Some(u), false) = (up, rules.weight_math_rc()) {
                vslice = u.vslice(vslice);
            }
            vruntime = vruntime.wrapping_add(vslice);
        }
        if !initial {
            if feats.has(Feature::NewFairSleepers) {
                let mut thresh = t.latency;
                if rules.weight_math_rc() && feats.has(Feature::NormalizedSleeper) {
                    // 2.6.26-rc4: calc_delta_fair(thresh, se) = thresh * W / w.
                    let mut lw = se.load;
                    thresh = calc_delta_mine(thresh, w_q, &mut lw, rules.version);
                    // ... and up the hierarchy, with the top queue's weight
                    // as it is now: a task's enqueue places it before its
                    // group's entity joins the top queue, so a group new to
                    // this CPU reads the others' weight (none: no credit).
                    if let Some(u) = up {
                        thresh = u.fair(thresh, &rules);
                    }
                }
                vruntime = vruntime.wrapping_sub(thresh);
            }
            vruntime = max_vruntime(se.vruntime, vruntime);
        }
        vruntime
    }

    /// `account_entity_enqueue` + `inc_nr_running`: weight and count go on
    /// both the cfs_rq and the rq; the entity joins the `tasks` list head.
    /// With group scheduling the weight goes on the task's group queue and
    /// on the runqueue (`inc_load` counts tasks), except in 2.6.26-rc4,
    /// whose runqueue load counts the top-level entities
    /// ([`Rules::group_aggregates`]): there the group's entity carries it.
    fn account_enqueue(&mut self, cpu: CpuId, id: TaskId) {
        let tg = self.tg(id);
        let top_only = tg.is_some() && self.rules.group_aggregates();
        let se = &mut self.tasks[id.0 as usize].se;
        let rq = &mut self.rqs[cpu];
        if !top_only {
            rq.load.add(se.load.weight);
        }
        rq.nr_running += 1;
        let q = task_q(&mut self.rqs, &mut self.groups, cpu, tg);
        q.load.add(se.load.weight);
        q.nr_running += 1;
        se.on_rq = true;
        q.group_seq += 1;
        se.group_seq = q.group_seq;
    }

    fn account_dequeue(&mut self, cpu: CpuId, id: TaskId) {
        let tg = self.tg(id);
        let top_only = tg.is_some() && self.rules.group_aggregates();
        let se = &mut self.tasks[id.0 as usize].se;
        let rq = &mut self.rqs[cpu];
        if !top_only {
            rq.load.sub(se.load.weight);
        }
        rq.nr_running = rq.nr_running.saturating_sub(1);
        let q = task_q(&mut self.rqs, &mut self.groups, cpu, tg);
        q.load.sub(se.load.weight);
        q.nr_running = q.nr_running.saturating_sub(1);
        se.on_rq = false;
    }

    /// `activate_task` → `enqueue_task_fair` → `enqueue_entity(cfs_rq, se,
    /// wakeup)`: update_curr, account, place a waking task and end its
    /// sleep (enqueue_sleeper), start a wait unless it is curr
    /// (update_stats_enqueue), insert unless it is curr. 2.6.25 places and inserts *before* accounting (a992241de61
    /// moved accounting first in 2.6.26-rc1).
    ///
    /// With group scheduling this is the task's level of
    /// `enqueue_task_fair`'s walk; the group's entity follows onto the top
    /// queue if it is not there yet ([`Self::enqueue_group_entity`]).
    pub(crate) fn activate_task(&mut self, cpu: CpuId, id: TaskId, wakeup: bool) {
        let tg = self.tg(id);
        self.update_curr(cpu, tg);
        let is_curr = self.tq(cpu, tg).curr == Some(id);
        if self.rules.is_2_6_25() {
            if wakeup {
                self.place_entity(cpu, id, false);
                self.enqueue_sleeper(cpu, id);
            }
            self.update_stats_enqueue(cpu, id);
            if !is_curr {
                self.enqueue_tree(cpu, id);
            }
            self.account_enqueue(cpu, id);
        } else {
            self.account_enqueue(cpu, id);
            if wakeup {
                self.place_entity(cpu, id, false);
                self.enqueue_sleeper(cpu, id);
            }
            self.update_stats_enqueue(cpu, id);
            if !is_curr {
                self.enqueue_tree(cpu, id);
            }
        }
        if self.rules.is_2_6_32() {
            self.enqueue_stats_32(id, wakeup);
        }
        if let Some(g) = tg {
            if !self.groups[g.0 as usize].se[cpu].on_rq {
                self.enqueue_group_entity(cpu, g, true);
            }
        }
        let t = self.tm(id);
        t.cpu = cpu;
        if t.state != TaskState::Running {
            t.state = TaskState::Queued;
        }
        self.hrtick_start_fair(cpu, true);
    }

    /// `deactivate_task` → `dequeue_entity(cfs_rq, se, sleep)`: update_curr;
    /// end a waiting task's wait (update_stats_dequeue); on sleep fold the
    /// wakeup overlap into avg_overlap; remove from the tree unless curr;
    /// unaccount. (The sleep stamp is taken by `do_schedule`, which knows
    /// a sleep from an exit.)
    pub(crate) fn deactivate_task(&mut self, cpu: CpuId, id: TaskId, sleep: bool) {
        if self.rules.is_2_6_32() {
            // sched.c dequeue_task (22763c5c sched.c:1873-1888) folds the
            // sleep statistics *before* the class's dequeue_entity runs
            // update_curr, so they read the sum_exec_runtime of the last
            // update (schedule() calls no update_curr first, sched.c:5437-5443).
            self.dequeue_stats_32(id, sleep);
        }
        let tg = self.tg(id);
        self.update_curr(cpu, tg);
        self.update_stats_dequeue(cpu, id);
        if self.rules.is_2_6_32() {
            self.clear_buddies(cpu, id);
        } else if sleep {
            let lp = self.rules.patches.last_preempter();
            let se = &mut self.tm(id).se;
            if lp {
                se.last_preempter = None;
            }
            // update_avg_stats (2.6.25/26).
            if se.last_wakeup != 0 {
                let sample = se.sum_exec_runtime.wrapping_sub(se.last_wakeup);
                crate::entity::update_avg(&mut se.avg_overlap, sample);
                se.last_wakeup = 0;
            }
        }
        if self.tq(cpu, tg).curr != Some(id) {
            self.dequeue_tree(cpu, id);
        }
        self.account_dequeue(cpu, id);
        // dequeue_task_fair's walk: the group leaves the top queue with its
        // last task there.
        if let Some(g) = tg {
            if self.tq(cpu, tg).load.weight == 0 {
                self.dequeue_group_entity(cpu, g);
            }
        }
        if self.rules.min_vruntime_tracks_curr() {
            self.update_min_vruntime(cpu);
        }
        self.hrtick_start_fair(cpu, true);
    }

    /// `set_next_entity`: end its wait and take it out of the tree, record
    /// its last run as a slice (schedstats), start its run.
    pub(crate) fn set_next_entity(&mut self, cpu: CpuId, id: TaskId) {
        if self.t(id).se.on_rq {
            self.update_stats_wait_end(cpu, id);
            self.dequeue_tree(cpu, id);
        }
        let clock = self.rqs[cpu].clock;
        let tg = self.tg(id);
        self.tq_mut(cpu, tg).curr = Some(id);
        self.update_stats_slice_max(cpu, id);
        let se = &mut self.tm(id).se;
        se.exec_start = clock;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
    }

    /// `put_prev_entity`: account the leaving task and, if it is still
    /// runnable, start its wait and put it back in the tree.
    pub(crate) fn put_prev_entity(&mut self, cpu: CpuId, id: TaskId) {
        let on_rq = self.t(id).se.on_rq;
        let tg = self.tg(id);
        if on_rq {
            self.update_curr(cpu, tg);
            self.update_stats_wait_start(cpu, id);
            self.enqueue_tree(cpu, id);
            self.tm(id).state = TaskState::Queued;
        }
        self.tq_mut(cpu, tg).curr = None;
    }

    /// `put_prev_task_fair`: put_prev_entity for the task, then for its
    /// group's entity on the top queue (`for_each_sched_entity`).
    pub(crate) fn put_prev_task_fair(&mut self, cpu: CpuId, id: TaskId) {
        self.put_prev_entity(cpu, id);
        if self.tg(id).is_some() {
            self.put_prev_group(cpu);
        }
    }

    /// `set_curr_task_fair`: set_next_entity from the top down.
    pub(crate) fn set_curr_task_fair(&mut self, cpu: CpuId, id: TaskId) {
        if let Some(g) = self.tg(id) {
            self.set_next_group(cpu, g);
        }
        self.set_next_entity(cpu, id);
    }

    /// The buddy test of `pick_next` (2.6.26): the next buddy wins unless
    /// it is right of the leftmost by more than its wakeup_gran.
    /// 2.6.25 uses the queue-scaled granularity `gran * 1024 / W`.
    pub(crate) fn buddy_wins(&mut self, cpu: CpuId, next: TaskId, left: TaskId) -> bool {
        let rules = self.rules;
        let t = self.cfg.tunables;
        let left_v = self.t(left).se.vruntime;
        let tg = self.tg(next);
        let w_q = self.tq(cpu, tg).load.weight;
        if rules.is_2_6_25() {
            let diff = self.t(next).se.vruntime.wrapping_sub(left_v) as i64;
            if diff < 0 {
                return false;
            }
            let gran = calc_delta_fair(t.wakeup_granularity, &mut self.tq_mut(cpu, tg).load, rules.version);
            return diff <= gran as i64;
        }
        let next_v = self.t(next).se.vruntime;
        let mut gran = wakeup_gran(&mut self.tm(next).se.load, w_q, &t, &rules);
        if let (Some(g), true) = (self.hier_up(tg), rules.weight_math_rc()) {
            gran = self.up_level(cpu, g).asym(gran, &rules);
        }
        wakeup_preempt_entity(next_v, left_v, gran) == 0
    }

    /// `sched_slice(task_cfs_rq, se)` for a task of weight `w` in group `tg`
    /// on `cpu`: its queue's share, and in 2.6.26-rc4 and 2.6.26 its group's
    /// share of the top queue on top (both walk `for_each_sched_entity`:
    /// e490517a sched_fair.c:339-348, 389-394; bce7f793 :363-376).
    pub(crate) fn task_slice(&mut self, cpu: CpuId, tg: Option<GroupId>, w: u64) -> u64 {
        let (rules, t) = (self.rules, self.cfg.tunables);
        let q = task_q(&mut self.rqs, &mut self.groups, cpu, tg);
        let slice = sched_slice(q.nr_running, &mut q.load, w, &t, &rules);
        match self.hier_up(tg) {
            Some(g) => self.up_level(cpu, g).slice(slice, &rules),
            None => slice,
        }
    }

    /// `pick_next_entity`: the leftmost, or the next buddy when it is
    /// close enough; then set_next_entity (which clears the buddy).
    ///
    /// With group scheduling, pick_next_task_fair's walk down: the top
    /// queue's group first ([`Self::pick_next_group`]), then this among its
    /// tasks.
    pub(crate) fn pick_next_entity(&mut self, cpu: CpuId) -> Option<(TaskId, bool)> {
        if self.rules.is_2_6_32() {
            return self.pick_next_entity_32(cpu);
        }
        let tg = if self.cfg.group_sched { Some(self.pick_next_group(cpu)?) } else { None };
        let q = self.tq(cpu, tg);
        let left = q.leftmost?;
        let mut chosen = left;
        let mut buddy = false;
        if let Some(next) = q.next {
            if next != left && self.t(next).se.on_rq && self.buddy_wins(cpu, next, left) {
                chosen = next;
                buddy = true;
            }
        }
        self.set_next_entity(cpu, chosen);
        Some((chosen, buddy))
    }

    /// `check_preempt_tick`: reschedule when the current task has run
    /// longer than its sched_slice since it was picked.
    fn check_preempt_tick(&mut self, cpu: CpuId, curr: TaskId) {
        if self.rules.is_2_6_32() {
            return self.check_preempt_tick_32(cpu, curr);
        }
        let rules = self.rules;
        let w = self.t(curr).se.load.weight;
        let tg = self.tg(curr);
        let ideal = self.task_slice(cpu, tg, w);
        let se = &self.tasks[curr.0 as usize].se;
        let ran = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
        if ran > ideal {
            if rules.patches.last_preempter() {
                self.tm(curr).se.last_preempter = None;
            }
            self.resched_cpu(cpu);
            self.emit(Event::TickPreempt { cpu, curr, ran, ideal });
        }
    }

    fn hrtick_enabled(&self) -> bool {
        self.cfg.hres_timers && self.cfg.features.has(Feature::Hrtick)
    }

    /// `entity_tick(cfs_rq, curr, queued)`: a queued (hrtick) tick always
    /// reschedules; the periodic tick defers to an armed hrtick unless
    /// DOUBLE_TICK; otherwise check_preempt_tick when there is competition
    /// (or WAKEUP_PREEMPT is off).
    ///
    /// With group scheduling, task_tick_fair's walk then ticks the group's
    /// entity on the top queue ([`Self::group_entity_tick`]).
    fn entity_tick(&mut self, cpu: CpuId, curr: TaskId, queued: bool) {
        let tg = self.tg(curr);
        let now = self.rqs[cpu].clock;
        let hrtimer_active = self.rqs[cpu].hrtick_expire.is_some_and(|e| (e.wrapping_sub(now) as i64) > 0);
        self.task_entity_tick(cpu, curr, queued, hrtimer_active);
        if tg.is_some() {
            self.group_entity_tick(cpu, curr, queued, hrtimer_active);
        }
    }

    /// The task's level of [`Self::entity_tick`].
    fn task_entity_tick(&mut self, cpu: CpuId, curr: TaskId, queued: bool, hrtimer_active: bool) {
        let tg = self.tg(curr);
        self.update_curr(cpu, tg);
        let nr = self.tq(cpu, tg).nr_running;
        if self.tick_wants_slice_check(cpu, queued, hrtimer_active, nr) {
            self.check_preempt_tick(cpu, curr);
        }
    }

    /// The part of `entity_tick` after update_curr, at any level of the
    /// walk: a queued (hrtick) tick reschedules; the periodic tick defers
    /// to an armed hrtick unless DOUBLE_TICK; otherwise the slice is
    /// checked when the queue (of `nr` entities) has competition, or
    /// WAKEUP_PREEMPT is off.
    ///
    /// hrtimer_active: armed and not yet expired (wrap-safe: the expiry may
    /// lie past 2^64 while `now` does not). The kernel asks the timer, not
    /// hrtick_enabled(): a timer armed before HRTICK was switched off
    /// (sysctl) still holds the periodic tick off until schedule() clears
    /// it or it fires (2.6.26 sched_fair.c:795-797).
    pub(crate) fn tick_wants_slice_check(&mut self, cpu: CpuId, queued: bool, hrtimer_active: bool, nr: u64) -> bool {
        if queued {
            self.resched_cpu(cpu);
            return false;
        }
        if !self.cfg.features.has(Feature::DoubleTick) && hrtimer_active {
            return false;
        }
        nr > 1 || !self.cfg.features.has(Feature::WakeupPreempt)
    }

    /// `hrtick_start_fair(rq, p)` for the current task: arm the hrtick at
    /// the end of its slice when there is competition. After an
    /// enqueue/dequeue (`requeue = true`, p = rq->curr) an overrun
    /// reschedules. From the pick path (`requeue = false`) a slice shorter
    /// than 10 µs is stretched to 10 µs unless the task picked is the one
    /// schedule() is switching out ([`Self::hrtick_start_fair_for`]'s
    /// `is_rq_curr`): rq->curr is still prev
    /// while pick_next_task runs, and the kernel stretches only `if
    /// (!requeue)`, requeue being `rq->curr == p` (bce7f793
    /// sched_fair.c:811, 832-833; 22763c5c :974, `if (rq->curr != p)`).
    pub(crate) fn hrtick_start_fair(&mut self, cpu: CpuId, requeue: bool) {
        self.hrtick_start_fair_for(cpu, requeue, requeue);
    }

    /// [`Self::hrtick_start_fair`] with the stretch decided apart:
    /// `is_rq_curr` says whether the task armed for is rq->curr.
    pub(crate) fn hrtick_start_fair_for(&mut self, cpu: CpuId, requeue: bool, is_rq_curr: bool) {
        if !self.hrtick_enabled() {
            return;
        }
        let Some(curr) = self.fair_curr(cpu) else { return };
        // `cfs_rq_of(&p->se)`: the task's own queue.
        let tg = self.tg(curr);
        if self.tq(cpu, tg).nr_running <= 1 {
            return;
        }
        let rules = self.rules;
        let t = self.cfg.tunables;
        // 2.6.32 hrtick_update re-arms only below sched_nr_latency.
        if rules.is_2_6_32() && requeue && self.rqs[cpu].cfs.nr_running >= t.nr_latency {
            return;
        }
        let w = self.t(curr).se.load.weight;
        let slice = if rules.is_2_6_32() { self.sched_slice_of_32(cpu, curr) } else { self.task_slice(cpu, tg, w) };
        let se = &self.tasks[curr.0 as usize].se;
        let ran = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
        let mut delta = slice.wrapping_sub(ran) as i64;
        if delta < 0 {
            self.resched_cpu(cpu);
            return;
        }
        if !is_rq_curr {
            delta = delta.max(10_000);
        }
        // hrtick_start arms a relative hrtimer on real time; in 2.6.32-rc1
        // the rq clock can be stale here (see try_to_wake_up), and in
        // 2.6.25 a remote one always is (`Rules::remote_clock_update`), so
        // those profiles count from the caller's time.
        let stale_clock = rules.is_2_6_32() || !rules.remote_clock_update();
        let start = if stale_clock { self.now } else { self.rqs[cpu].clock };
        self.rqs[cpu].hrtick_expire = Some(start.wrapping_add(delta as u64));
    }

    /// `check_preempt_curr(rq, p)`: the idle task always yields; a fair
    /// current task gets `check_preempt_wakeup`. `fork` marks a new task
    /// (whose task_new_fair has already rescheduled). For callers whose
    /// `current` is not a fair task on `cpu`, or not known to the API (a
    /// boot-time spawn, a sched_setscheduler from outside).
    pub(crate) fn check_preempt_curr(&mut self, cpu: CpuId, p: TaskId, fork: bool) {
        self.check_preempt_wakeup(cpu, p, fork, None, false);
    }

    /// `check_preempt_wakeup(rq, p)` (2.6.26 sched_fair.c:1166).
    ///
    /// Stamps the current task's `last_wakeup` (on the *target* CPU's
    /// current task, a 2.6.25/26 quirk), makes `p` the next buddy, and
    /// reschedules when `p` is more than wakeup_gran behind in vruntime,
    /// unless `p` is SCHED_BATCH or WAKEUP_PREEMPT is off. `waker` is the
    /// kernel's `current` (the task that ran try_to_wake_up, a forking
    /// parent, or the task running on a pulling CPU), for the
    /// last_preempter patch, which tags `current` alone; `sync`
    /// (already gated by SYNC_WAKEUPS) is read only by the wakeup-overlap
    /// patch, as 15afe09bf49 passes it down for that test alone.
    pub(crate) fn check_preempt_wakeup(
        &mut self,
        cpu: CpuId,
        p: TaskId,
        fork: bool,
        waker: Option<TaskId>,
        sync: bool,
    ) {
        if self.rules.is_2_6_32() {
            return self.check_preempt_wakeup_32(cpu, p, sync, fork);
        }
        let Some(curr) = self.rqs[cpu].curr else {
            self.resched_cpu(cpu);
            self.emit(Event::PreemptCheck { cpu, curr: None, wakee: p, preempt: true, reason: PreemptReason::IdleCpu });
            return;
        };
        let rules = self.rules;
        let t = self.cfg.tunables;
        {
            let se = &mut self.tm(curr).se;
            se.last_wakeup = se.sum_exec_runtime;
        }
        let emit = |s: &mut Self, preempt: bool, reason: PreemptReason| {
            s.emit(Event::PreemptCheck { cpu, curr: Some(curr), wakee: p, preempt, reason });
        };
        if curr == p {
            return emit(self, false, PreemptReason::SelfWake);
        }
        if rules.patches.has(Patch::Waker) {
            // patches.md §1: se->waker = pse.
            self.tm(curr).se.waker = Some(p);
        }
        let ptg = self.tg(p);
        self.tq_mut(cpu, ptg).next = Some(p);
        if self.t(p).policy == Policy::Batch {
            return emit(self, fork && self.rqs[cpu].need_resched, PreemptReason::BatchWakee);
        }
        if !self.cfg.features.has(Feature::WakeupPreempt) {
            return emit(self, fork && self.rqs[cpu].need_resched, PreemptReason::FeatureOff);
        }
        if sync && rules.patches.has(Patch::WakeupOverlap) {
            // 15afe09bf49 (2.6.28), the `wakeup-overlap` patch: both tasks
            // run less than migration_cost between waking someone and
            // sleeping, so the waker is about to sleep and the wakee may as
            // well run now, whatever the vruntimes say.
            let cost = t.migration_cost_unsigned();
            if self.t(curr).se.avg_overlap < cost && self.t(p).se.avg_overlap < cost {
                self.resched_cpu(cpu);
                return emit(self, true, PreemptReason::SmallOverlap);
            }
        }
        // The walk up to siblings (is_same_group): with group scheduling,
        // tasks of two groups are compared by their groups' entities on the
        // top queue, and the granularity is scaled by the current group's
        // shares.
        let ctg = self.tg(curr);
        let (curr_v, p_v, mut se_load, w_q) = match (ctg, ptg) {
            (Some(cg), Some(pg)) if cg != pg => {
                let (cse, pse) = (&self.groups[cg.0 as usize].se[cpu], &self.groups[pg.0 as usize].se[cpu]);
                (cse.vruntime, pse.vruntime, cse.load, self.rqs[cpu].top.load.weight)
            }
            _ => (self.t(curr).se.vruntime, self.t(p).se.vruntime, self.t(curr).se.load, self.tq(cpu, ctg).load.weight),
        };
        let mut gran = wakeup_gran(&mut se_load, w_q, &t, &rules);
        // rc4's calc_delta_asym walks up from the sibling: from a task, on
        // through its group's entity.
        let same_group = ctg.is_some() && ctg == ptg;
        if let (Some(g), true, true) = (self.hier_up(ctg), same_group, rules.weight_math_rc()) {
            gran = self.up_level(cpu, g).asym(gran, &rules);
        }
        let lead = if rules.is_2_6_25() {
            // 2.6.25: preempt iff p.vruntime + gran < curr.vruntime, an
            // *unsigned* compare that misfires across the wrap.
            p_v.wrapping_add(gran) < curr_v
        } else {
            wakeup_preempt_entity(curr_v, p_v, gran) == 1
        };
        if !lead {
            return emit(self, fork && self.rqs[cpu].need_resched, PreemptReason::WithinGranularity);
        }
        let mut preempt = true;
        if rules.patches.last_preempter() {
            // patches.md §4: a current task being preempted by several
            // different wakees before it ran migration_cost keeps the CPU.
            let (se_w, pse_w) = (self.t(curr).se.load.weight, self.t(p).se.load.weight);
            let se = &self.t(curr).se;
            if se.last_preempter.is_some() && se.last_preempter != Some(p) && se_w >= pse_w {
                let exec = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
                // u64 < unsigned int: -1 reads as 4_294_967_295.
                if exec < t.migration_cost_unsigned() {
                    preempt = false;
                }
            }
            if waker == Some(curr) {
                self.tm(curr).se.last_preempter = Some(p);
            }
        }
        if preempt {
            self.resched_cpu(cpu);
            emit(self, true, PreemptReason::VruntimeLead);
        } else {
            emit(self, fork && self.rqs[cpu].need_resched, PreemptReason::LastPreempterHold);
        }
    }

    /// `task_new_fair(rq, p)` (2.6.26 sched_fair.c:1430), via
    /// wake_up_new_task: place the child with START_DEBIT, let it run first
    /// by swapping vruntimes with the parent when both are on this CPU
    /// (a plain unsigned compare, as in the kernel), enqueue, and
    /// reschedule the current task unconditionally.
    pub(crate) fn task_new_fair(&mut self, cpu: CpuId, child: TaskId, parent_cpu: Option<CpuId>) {
        if self.rules.is_2_6_32() {
            return self.task_new_fair_32(cpu, child, parent_cpu);
        }
        // task_cfs_rq(p): the child's group's queue on `cpu`, whose
        // running task is the parent only if both are of that group and
        // the parent runs there ("'curr' will be NULL if the child belongs
        // to a different group").
        let tg = self.tg(child);
        self.update_curr(cpu, tg);
        self.place_entity(cpu, child, true);
        let curr = self.tq(cpu, tg).curr;
        if let Some(c) = curr {
            let cv = self.t(c).se.vruntime;
            let sv = self.t(child).se.vruntime;
            if self.cfg.tunables.child_runs_first && parent_cpu == Some(cpu) && cv < sv {
                self.tm(c).se.vruntime = sv;
                self.tm(child).se.vruntime = cv;
            }
        }
        self.activate_task(cpu, child, false);
        self.resched_cpu(cpu);
    }

    /// `yield_task_fair`: with compat_yield off, a SCHED_NORMAL task just
    /// updates its runtime and reschedules; a SCHED_BATCH task (or any, with
    /// compat_yield) moves just right of the rightmost entity.
    pub(crate) fn yield_task_fair(&mut self, cpu: CpuId) {
        if self.rules.is_2_6_32() {
            return self.yield_task_fair_32(cpu);
        }
        let Some(curr) = self.fair_curr(cpu) else { return };
        let tg = self.tg(curr);
        if self.tq(cpu, tg).nr_running == 1 {
            return;
        }
        if !self.cfg.tunables.compat_yield && self.t(curr).policy != Policy::Batch {
            self.update_curr(cpu, tg);
            return;
        }
        let Some(right) = self.tq(cpu, tg).last_in_tree() else { return };
        let rv = self.t(right).se.vruntime;
        if rv < self.t(curr).se.vruntime {
            return;
        }
        self.tm(curr).se.vruntime = rv.wrapping_add(1);
    }

    /// `set_task_cpu`: shift open schedstat stamps to the new runqueue's
    /// clock, renormalise vruntime to the new queue,
    /// `vruntime -= old.min_vruntime - new.min_vruntime`.
    pub(crate) fn set_task_cpu(&mut self, id: TaskId, new_cpu: CpuId) {
        let old_cpu = self.t(id).cpu;
        let tg = self.tg(id);
        let old_min = self.tq(old_cpu, tg).min_vruntime;
        let new_min = self.tq(new_cpu, tg).min_vruntime;
        self.migrate_stats(id, old_cpu, new_cpu);
        let t = self.tm(id);
        t.se.vruntime = t.se.vruntime.wrapping_sub(old_min.wrapping_sub(new_min));
        if old_cpu != new_cpu {
            t.nr_migrations += 1;
        }
        t.cpu = new_cpu;
        if t.allowed.contains(new_cpu) && !self.stranded.is_empty() {
            self.stranded.retain(|&s| s != id);
        }
    }

    /// `pull_task` / `__migrate_task`: deactivate on `from`, renormalise,
    /// activate on `to` (no placement), preemption check on `to`.
    ///
    /// Who `current` is there matters to the last_preempter patch, which
    /// tags only `current` (patches.md §4: `se == &current->se`). pull_task
    /// runs on the pulling CPU: in a newly idle pass that is schedule()'s
    /// prev, still `rq->curr` while idle_balance runs, and in a periodic
    /// pass the task the tick interrupted (an idle CPU's current is the
    /// idle task, which check_preempt_curr never reaches). Active
    /// balancing and affinity moves run in the migration thread, which is
    /// no fair task. A hotplug move runs in the CPU_DEAD notifier, in the
    /// context of whoever wrote the CPU's `online` file; the API has no
    /// such task, so nothing is tagged there either.
    pub(crate) fn move_queued_task(&mut self, id: TaskId, from: CpuId, to: CpuId, reason: MigrateReason) {
        self.deactivate_task(from, id, false);
        self.set_task_cpu(id, to);
        self.activate_task(to, id, false);
        self.tm(id).state = TaskState::Queued;
        self.emit(Event::Migrate { task: id, from, to, reason });
        let current = match reason {
            MigrateReason::NewIdle | MigrateReason::Periodic => self.rqs[to].curr,
            _ => None,
        };
        self.check_preempt_wakeup(to, id, false, current, false);
    }

    /// `set_user_nice` / `__setscheduler` for the fair policies: requeue
    /// with the new weight; reschedule when a queued task got heavier or the
    /// running one got lighter.
    pub(crate) fn change_weight(&mut self, now: u64, id: TaskId, policy: Policy, nice: i32) {
        let cpu = self.t(id).cpu;
        self.set_clock(cpu, now);
        let on_rq = self.t(id).se.on_rq;
        let running = self.rqs[cpu].curr == Some(id);
        let old_nice = self.t(id).nice;
        if on_rq {
            self.deactivate_task(cpu, id, false);
        }
        let lw = set_load_weight(policy, nice, self.cfg.version);
        let t = self.tm(id);
        t.nice = nice;
        t.policy = policy;
        t.se.load = lw;
        if on_rq {
            self.activate_task(cpu, id, false);
            if nice < old_nice || (nice > old_nice && running) {
                self.resched_cpu(cpu);
            }
        }
    }

    /// `pick_next_task_fair` + the context switch bookkeeping; `prev` is
    /// the task schedule() is switching out (still rq->curr to the kernel).
    fn pick_next_task(&mut self, cpu: CpuId, prev: Option<TaskId>) -> (Option<TaskId>, bool) {
        if self.rq_cfs_nr_running(cpu) == 0 {
            return (None, false);
        }
        match self.pick_next_entity(cpu) {
            Some((id, buddy)) => {
                self.hrtick_start_fair_for(cpu, false, prev == Some(id));
                (Some(id), buddy)
            }
            None => (None, false),
        }
    }

    /// `schedule()` (2.6.26 sched.c:4141), in kernel order.
    pub(crate) fn do_schedule(&mut self, now: u64, cpu: CpuId, how: Deschedule) -> Switch {
        self.set_clock(cpu, now);
        // hrtick_clear: unconditional in 2.6.25/26 (bce7f793 sched.c:4161);
        // 2.6.32 clears only `if (sched_feat(HRTICK))` (22763c5c
        // sched.c:5432-5433), so a timer armed before the bit was switched
        // off stays armed, and entity_tick keeps deferring to it.
        if !self.rules.is_2_6_32() || self.cfg.features.has(Feature::Hrtick) {
            self.rqs[cpu].hrtick_expire = None;
        }
        self.rqs[cpu].need_resched = false;
        let prev = self.rqs[cpu].curr;
        // `if (prev->state && !(preempt_count() & PREEMPT_ACTIVE))`
        // (bce7f793 sched.c:4171): a task calling schedule() itself sleeps
        // only if nothing has woken it since it set its state.
        let how = match (how, prev) {
            (Deschedule::Schedule, Some(p)) if self.t(p).current_state == CurrentState::Interruptible => {
                Deschedule::Sleep
            }
            (Deschedule::Schedule, _) => Deschedule::Preempt,
            (how, _) => how,
        };
        if let Some(p) = prev {
            match how {
                Deschedule::Yield => {
                    // yield() marks the task runnable before sys_sched_yield
                    // (bce7f793 sched.c:5243-5247; the same in every
                    // profile), so a task that set TASK_INTERRUPTIBLE and
                    // yields is no longer a sleeper a wakeup can find.
                    self.tm(p).current_state = CurrentState::Running;
                    self.yield_task_fair(cpu)
                }
                Deschedule::Sleep | Deschedule::Exit => {
                    self.deactivate_task(cpu, p, true);
                    // dequeue_entity's schedstat block: a TASK_INTERRUPTIBLE
                    // sleeper stamps its sleep; TASK_DEAD stamps nothing.
                    if how == Deschedule::Sleep {
                        self.update_stats_sleep_start(cpu, p);
                    }
                    let t = self.tm(p);
                    t.state = if how == Deschedule::Exit { TaskState::Dead } else { TaskState::Sleeping };
                    t.current_state = CurrentState::Running;
                }
                // Involuntary preemption (PREEMPT_ACTIVE) keeps the state.
                Deschedule::Preempt | Deschedule::Schedule => {}
            }
        }
        // An active-balance kick (load_balance on another CPU, bce7f793
        // sched.c:3362) has woken this CPU's migration thread, an RT task:
        // it is queued, so this schedule() does no newly idle balancing and
        // picks the thread, which runs active_load_balance; newly idle
        // balancing comes in the schedule() the thread makes when it sleeps
        // again.
        let kicked = self.rqs[cpu].active_balance;
        // So has set_cpus_allowed for a task that was running here
        // (migrate_task -> wake_up_process, bce7f793 sched.c:1760, 5585-5588):
        // the thread moves it, then sleeps, and balances newly idle in that
        // schedule() if the move left the queue empty (:5678-5681, 4184-4185).
        let migrating = self.pending_move.iter().any(|&(_, src, _)| src == cpu);
        let thread = kicked || migrating;
        let mut pulled = 0;
        if !thread && self.rqs[cpu].nr_running == 0 {
            pulled = self.idle_balance(cpu);
        }
        if let Some(p) = prev {
            if self.rules.is_2_6_32() {
                self.put_prev_stats_32(p);
            }
            self.put_prev_task_fair(cpu, p);
            if how == Deschedule::Exit {
                self.emit(Event::Exit { task: p });
            }
        }
        self.rqs[cpu].curr = None;
        if kicked {
            self.active_load_balance(cpu);
        }
        self.run_migration_queue(cpu);
        // The thread runs in a schedule() of its own, and schedule() clears
        // the hrtick on entry (bce7f793 sched.c:4161; 22763c5c :5432-5433
        // under HRTICK): a timer prev's dequeue armed before the thread
        // moved a task away does not survive into the pick.
        if thread && (!self.rules.is_2_6_32() || self.cfg.features.has(Feature::Hrtick)) {
            self.rqs[cpu].hrtick_expire = None;
        }
        if thread && self.rqs[cpu].nr_running == 0 {
            // The migration thread's own schedule(): prev is the RT thread,
            // so a pulled fair task's check_preempt_curr (the RT class's)
            // raises nothing.
            let raised = self.rqs[cpu].need_resched;
            self.migration_thread = Some(cpu);
            pulled = self.idle_balance(cpu);
            self.migration_thread = None;
            if !raised && self.rqs[cpu].need_resched {
                self.rqs[cpu].need_resched = false;
                self.resched_pending.clear(cpu);
            }
        }
        let (next, buddy) = self.pick_next_task(cpu, prev);
        let rq = &mut self.rqs[cpu];
        rq.curr = next;
        if next != prev {
            rq.nr_switches += 1;
            // TIF_NEED_RESCHED is per task. A resched raised during this
            // schedule() (the dequeue's hrtick_start_fair, idle_balance's
            // check_preempt_curr on a pulled task) was set on prev, after
            // schedule() had cleared prev's flag (sched.c:4169,
            // sched_fair.c:817-826). Nothing clears it while prev sleeps, so
            // when prev is next switched in, the test at the end of its
            // schedule() (`if (unlikely(test_thread_flag(TIF_NEED_RESCHED)))
            // goto need_resched;`, sched.c:4213-4214; 2.6.25 and 2.6.32 the
            // same) sends it through schedule() again before it does
            // anything. The flag travels with the task.
            let raised = core::mem::take(&mut rq.need_resched);
            if raised {
                self.resched_pending.clear(cpu);
            }
            // The idle task's flag travels the same way: raised on it by a
            // pull in its own schedule(), it sends it through schedule()
            // again as soon as it is switched back in (cpu_idle never
            // reaches its idle routine), so the CPU balances newly idle a
            // second time.
            match prev {
                Some(p) => self.tm(p).need_resched = raised && how != Deschedule::Exit,
                None => self.rqs[cpu].idle_need_resched = raised,
            }
            let pending = match next {
                Some(n) => core::mem::take(&mut self.tm(n).need_resched),
                None => core::mem::take(&mut self.rqs[cpu].idle_need_resched),
            };
            if pending {
                self.rqs[cpu].need_resched = true;
                self.resched_pending.set(cpu);
            }
        }
        if let Some(n) = next {
            self.tm(n).state = TaskState::Running;
        }
        self.emit(Event::Pick { cpu, prev, next, buddy });
        Switch { prev, next, pulled }
    }

    /// `cpu`'s migration thread working through its `migration_queue`: the
    /// set_cpus_allowed requests queued on `cpu` for tasks that were running
    /// or queued there when their masks changed, newest first (list_add at
    /// the queue's head, bce7f793 sched.c:1760, taken from the head at
    /// :5684), each through `__migrate_task(p, cpu, dest)` (:5611-5644).
    /// Called where the thread runs: in `cpu`'s schedule() after the current
    /// task is put back, and before a CPU going down stops.
    pub(crate) fn run_migration_queue(&mut self, cpu: CpuId) {
        if !self.pending_move.iter().any(|&(_, src, _)| src == cpu) {
            return;
        }
        let requests: Vec<(TaskId, CpuId)> =
            self.pending_move.iter().rev().filter(|&&(_, src, _)| src == cpu).map(|&(t, _, d)| (t, d)).collect();
        self.pending_move.retain(|&(_, src, _)| src != cpu);
        for &(p, dest) in &requests {
            // An offline destination is refused before the runqueues are
            // locked (:5616).
            if !self.online.contains(dest) {
                continue;
            }
            // double_rq_lock(rq_src, rq_dest): dest's clock as of now, except
            // under 2.6.25's local-only rule.
            self.update_rq_clock_on(cpu, dest, self.now);
            let (state, allowed, at) = (self.t(p).state, self.t(p).allowed, self.t(p).cpu);
            // "Already moved" (active balancing in this same schedule(), or a
            // newer request), or "Affinity changed (again)" away from dest.
            if at != cpu || !allowed.contains(dest) {
                continue;
            }
            match state {
                TaskState::Queued => self.move_queued_task(p, cpu, dest, MigrateReason::Affinity),
                // It blocked first: __migrate_task finds it !on_rq and still
                // does set_task_cpu(p, dest_cpu), so the sleep stamp is
                // translated between two clocks that both read now.
                TaskState::Sleeping => self.set_task_cpu(p, dest),
                TaskState::Running | TaskState::Dead => {}
            }
        }
        // Every request for a task failed on an offline destination: it
        // stays where it is, outside its mask, as the kernel leaves it.
        for &(p, _) in &requests {
            let t = self.t(p);
            if t.cpu == cpu && t.state != TaskState::Dead && !t.allowed.contains(cpu) && !self.stranded.contains(&p) {
                self.stranded.push(p);
            }
        }
    }

    /// `scheduler_tick()`.
    pub(crate) fn scheduler_tick(&mut self, now: u64, cpu: CpuId) {
        self.set_clock(cpu, now);
        self.rqs[cpu].update_cpu_load();
        if let Some(curr) = self.rqs[cpu].curr {
            self.entity_tick(cpu, curr, false);
        }
        self.rqs[cpu].idle_at_tick = self.rqs[cpu].is_idle();
        self.trigger_load_balance(cpu);
    }

    /// The hrtick hrtimer fired: `entity_tick(queued = 1)`.
    pub(crate) fn hrtick_fire(&mut self, now: u64, cpu: CpuId) {
        match self.rqs[cpu].hrtick_expire {
            Some(e) if (now.wrapping_sub(e) as i64) >= 0 => {}
            _ => return,
        }
        self.rqs[cpu].hrtick_expire = None;
        self.set_clock(cpu, now);
        if let Some(curr) = self.rqs[cpu].curr {
            self.entity_tick(cpu, curr, true);
        }
    }
}
