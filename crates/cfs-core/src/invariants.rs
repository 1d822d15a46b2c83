//! Online invariants and the call history that explains a violation.
//!
//! [`Scheduler::check_invariants`] verifies, for every CPU and task:
//! the timeline is ordered by the kernel's key (`vruntime - min_vruntime`
//! as s64); the cached leftmost is the tree's first entity; the summed
//! weight of queued entities (tree + curr) equals both the cfs_rq and rq
//! load; the counts agree; every queued task is on a CPU its mask allows;
//! min_vruntime never went backwards; every task is in exactly one
//! state that matches where it is found; and only a queued task has a
//! schedstat wait open, only a sleeping one a sleep, and only a queued or
//! running one a sleep state set by `set_current_state`. With `Config::check_invariants`
//! on, every API call runs the check and a violation carries the last
//! [`HISTORY_LEN`] calls.

use crate::entity::{CurrentState, TaskId, TaskState};
use crate::observe::Observer;
use crate::patches::Patch;
use crate::sched::{Deschedule, Scheduler};
use crate::tunables::Tunables;
use crate::weights::Policy;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use cfs_topology::{CpuId, CpuMask, DomainLevel, SdFlags};
use core::fmt;

/// How many calls a violation report carries.
pub const HISTORY_LEN: usize = 32;

/// One API call, as recorded for reports and replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ApiCall {
    Spawn { now: u64, cpu: CpuId, task: TaskId },
    Fork { now: u64, parent: TaskId, child: TaskId },
    Wake { now: u64, task: TaskId, waker_cpu: CpuId, sync: bool },
    Schedule { now: u64, cpu: CpuId, how: Deschedule },
    SetCurrentState { task: TaskId, state: CurrentState },
    Tick { now: u64, cpu: CpuId },
    Hrtick { now: u64, cpu: CpuId },
    SetNice { now: u64, task: TaskId, nice: i32 },
    SetPolicy { now: u64, task: TaskId, policy: Policy },
    SetAffinity { now: u64, task: TaskId, mask: CpuMask },
    Rebalance { now: u64, cpu: CpuId },
    NohzIdle { now: u64, cpu: CpuId },
    SetFeatures { mask: u32 },
    SetTunables { tunables: Tunables },
    SetDomainFlags { level: DomainLevel, set: SdFlags, clear: SdFlags },
    SetPatch { patch: Patch, on: bool },
    CpuDown { now: u64, cpu: CpuId },
    CpuUp { now: u64, cpu: CpuId },
    ReinitDomains { now: u64 },
}

/// The last calls, oldest first.
#[derive(Clone, Debug, Default)]
pub struct History {
    calls: VecDeque<ApiCall>,
    min_vruntime_seen: Vec<u64>,
}

impl History {
    pub(crate) fn push(&mut self, c: ApiCall) {
        if self.calls.len() == HISTORY_LEN {
            self.calls.pop_front();
        }
        self.calls.push_back(c);
    }

    /// The recorded calls, oldest first.
    pub fn calls(&self) -> Vec<ApiCall> {
        self.calls.iter().copied().collect()
    }
}

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvariantViolation {
    /// What is wrong.
    pub what: String,
    /// The calls that led here (oldest first).
    pub history: Vec<ApiCall>,
}

impl fmt::Display for InvariantViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "scheduler invariant violated: {}", self.what)?;
        writeln!(f, "last {} calls:", self.history.len())?;
        for c in &self.history {
            writeln!(f, "  {c:?}")?;
        }
        Ok(())
    }
}

impl core::error::Error for InvariantViolation {}

fn fail<T>(what: String) -> Result<T, InvariantViolation> {
    Err(InvariantViolation { what, history: Vec::new() })
}

impl<O: Observer> Scheduler<O> {
    /// Checks every invariant (see the module doc). Does not change state
    /// apart from remembering each CPU's min_vruntime for the monotonicity
    /// check.
    pub fn check_invariants(&mut self) -> Result<(), InvariantViolation> {
        let n = self.rqs.len();
        if self.history.min_vruntime_seen.len() != n {
            self.history.min_vruntime_seen = self.rqs.iter().map(|r| r.cfs.min_vruntime).collect();
        }
        let mut seen = vec![0u8; self.tasks.len()];
        for cpu in 0..n {
            self.check_rq(cpu, &mut seen)?;
        }
        self.check_nohz()?;
        for t in &self.tasks {
            let placed = seen[t.id.0 as usize];
            let expect = u8::from(matches!(t.state, TaskState::Queued | TaskState::Running));
            if placed != expect {
                return fail(alloc::format!("{} is {:?} but found on {placed} runqueue slots", t.id, t.state));
            }
            if t.se.on_rq != (expect == 1) {
                return fail(alloc::format!("{} is {:?} with on_rq = {}", t.id, t.state, t.se.on_rq));
            }
            let st = &t.se.stats;
            if st.wait_start != 0 && t.state != TaskState::Queued {
                return fail(alloc::format!("{} is {:?} with a wait open since {}", t.id, t.state, st.wait_start));
            }
            if st.sleep_start != 0 && t.state != TaskState::Sleeping {
                return fail(alloc::format!("{} is {:?} with a sleep open since {}", t.id, t.state, st.sleep_start));
            }
            // Only a queued or running task can be between set_current_state
            // and schedule(): sleeping and exiting reset the state.
            if t.current_state != CurrentState::Running && expect == 0 {
                return fail(alloc::format!("{} is {:?} in state {:?}", t.id, t.state, t.current_state));
            }
            // migrate_live_tasks leaves nothing on a CPU that went down.
            if t.state != TaskState::Dead && !self.online.contains(t.cpu) {
                return fail(alloc::format!("{} is {:?} on CPU {}, which is offline", t.id, t.state, t.cpu));
            }
        }
        Ok(())
    }

    /// NO_HZ: only idle CPUs stop their tick, every such CPU is in the nohz
    /// mask, the ILB owner is one of them, and nothing is tickless with
    /// NO_HZ off.
    fn check_nohz(&self) -> Result<(), InvariantViolation> {
        let nohz = &self.nohz;
        if !self.cfg.nohz && (!nohz.cpu_mask.is_empty() || nohz.load_balancer.is_some()) {
            return fail(alloc::format!("NO_HZ is off but the nohz state is {nohz:?}"));
        }
        if let Some(ilb) = nohz.load_balancer {
            if !nohz.cpu_mask.contains(ilb) {
                return fail(alloc::format!("ILB owner CPU {ilb} is not in the nohz mask {}", nohz.cpu_mask));
            }
        }
        for (cpu, rq) in self.rqs.iter().enumerate() {
            if rq.tick_stopped && !rq.is_idle() {
                return fail(alloc::format!("CPU {cpu} runs a task with its tick stopped"));
            }
            if rq.tick_stopped && !nohz.cpu_mask.contains(cpu) {
                return fail(alloc::format!("CPU {cpu} stopped its tick outside the nohz mask"));
            }
        }
        Ok(())
    }

    fn check_rq(&mut self, cpu: CpuId, seen: &mut [u8]) -> Result<(), InvariantViolation> {
        let prev_min = self.history.min_vruntime_seen[cpu];
        let cur_min = self.rqs[cpu].cfs.min_vruntime;
        if (cur_min.wrapping_sub(prev_min) as i64) < 0 {
            return fail(alloc::format!("CPU {cpu}: min_vruntime went back from {prev_min} to {cur_min}"));
        }
        let rq_curr = self.rqs[cpu].curr;
        let (load, count) = if self.cfg.group_sched {
            if self.rqs[cpu].cfs.timeline().next().is_some() || self.rqs[cpu].cfs.curr.is_some() {
                return fail(alloc::format!("CPU {cpu}: a task on the runqueue's own queue under group scheduling"));
            }
            let (mut load, mut count) = (0, 0);
            for g in 0..self.groups.len() {
                let g = crate::group::GroupId(g as u32);
                let curr = rq_curr.filter(|&c| self.tasks[c.0 as usize].tg == Some(g));
                let (l, c) = self.check_task_queue(cpu, Some(g), curr, seen)?;
                load += l;
                count += c;
            }
            self.check_top_queue(cpu)?;
            // 2.6.26-rc4's rq->load counts the top-level entities.
            if self.rules.group_aggregates() {
                load = self.rqs[cpu].top.load.weight;
            }
            (load, count)
        } else {
            self.check_task_queue(cpu, None, rq_curr, seen)?
        };
        let rq = &self.rqs[cpu];
        if load != rq.load.weight {
            return fail(alloc::format!("CPU {cpu}: summed weight {load} != rq load {}", rq.load.weight));
        }
        if count != rq.nr_running {
            return fail(alloc::format!("CPU {cpu}: {count} queued but rq nr_running {}", rq.nr_running));
        }
        self.history.min_vruntime_seen[cpu] = cur_min;
        Ok(())
    }

    /// One task queue on `cpu` (a group's, or the runqueue's own): its
    /// order, caches, buddies and counts, with `expect_curr` its running
    /// task. Returns the weight and number of tasks it holds.
    fn check_task_queue(
        &self,
        cpu: CpuId,
        tg: Option<crate::group::GroupId>,
        expect_curr: Option<TaskId>,
        seen: &mut [u8],
    ) -> Result<(u64, u64), InvariantViolation> {
        let cfs = self.tq(cpu, tg);
        let at = match tg {
            Some(g) => alloc::format!("CPU {cpu} group {g}"),
            None => alloc::format!("CPU {cpu}"),
        };
        let mut load = 0u64;
        let mut count = 0u64;
        let mut last_key = i64::MIN;
        for id in cfs.timeline() {
            let t = &self.tasks[id.0 as usize];
            let key = cfs.entity_key(&t.se);
            if key < last_key {
                return fail(alloc::format!("{at}: timeline out of order at {id} (key {key} after {last_key})"));
            }
            last_key = key;
            if !t.se.tree_key.is_some_and(|k| cfs.tree_has(&k, id)) {
                return fail(alloc::format!("{at}: {id} has a stale tree key"));
            }
            if t.state != TaskState::Queued || t.cpu != cpu || t.tg != tg {
                return fail(alloc::format!("{at}: {id} in the tree but {:?} on CPU {}", t.state, t.cpu));
            }
            load += t.se.load.weight;
            count += 1;
            seen[id.0 as usize] += 1;
        }
        if cfs.leftmost != cfs.first_in_tree() {
            return fail(alloc::format!(
                "{at}: cached leftmost {:?} != tree first {:?}",
                cfs.leftmost,
                cfs.first_in_tree()
            ));
        }
        if cfs.curr != expect_curr {
            return fail(alloc::format!("{at}: cfs.curr {:?} != rq.curr {:?}", cfs.curr, expect_curr));
        }
        if let Some(c) = cfs.curr {
            let t = &self.tasks[c.0 as usize];
            if t.state != TaskState::Running || t.cpu != cpu || t.se.tree_key.is_some() {
                return fail(alloc::format!(
                    "{at}: curr {c} is {:?} on CPU {} (in tree: {})",
                    t.state,
                    t.cpu,
                    t.se.tree_key.is_some()
                ));
            }
            if t.se.on_rq {
                load += t.se.load.weight;
                count += 1;
            }
            seen[c.0 as usize] += 1;
        }
        if load != cfs.load.weight {
            return fail(alloc::format!("{at}: summed weight {load} != cfs load {}", cfs.load.weight));
        }
        if count != cfs.nr_running {
            return fail(alloc::format!("{at}: {count} queued but nr_running {}", cfs.nr_running));
        }
        // Outside its mask a task may only be waiting for the migration
        // thread (a move pending), or be stranded: every CPU it allows went
        // down before its move ran, and `__migrate_task` refused the offline
        // destination, leaving it where it was, as the kernel does (or it
        // was forked by such a task).
        if let Some(bad) = cfs.timeline().chain(cfs.curr).find(|t| {
            !self.tasks[t.0 as usize].allowed.contains(cpu)
                && !self.pending_move.iter().any(|&(p, _, _)| p == *t)
                && !self.stranded.contains(t)
        }) {
            return fail(alloc::format!("{at}: {bad} queued outside its affinity mask"));
        }
        if let Some(n) = cfs.next {
            if self.tasks[n.0 as usize].se.tree_key.is_none() {
                return fail(alloc::format!("{at}: next buddy {n} is not in the tree"));
            }
        }
        if let Some(l) = cfs.last {
            // 2.6.32: the last buddy is curr or queued; dequeue_entity's
            // clear_buddies drops it when it leaves (22763c5c sched_fair.c:800).
            let t = &self.tasks[l.0 as usize];
            if !t.se.on_rq || t.cpu != cpu || (t.se.tree_key.is_none() && cfs.curr != Some(l)) {
                return fail(alloc::format!("{at}: last buddy {l} is not queued here"));
            }
        }
        Ok((load, count))
    }

    /// Group scheduling's top queue on `cpu`: a group's entity is queued
    /// exactly while its queue here has tasks, in vruntime order, weighing
    /// its shares (in 2.6.26-rc4, its part of them); the running group is
    /// the running task's.
    fn check_top_queue(&self, cpu: CpuId) -> Result<(), InvariantViolation> {
        let top = &self.rqs[cpu].top;
        let mut last_key = i64::MIN;
        for g in top.timeline() {
            let se = &self.groups[g.0 as usize].se[cpu];
            let key = top.entity_key(se);
            if key < last_key || !se.tree_key.is_some_and(|k| top.tree_has(&k, g)) {
                return fail(alloc::format!("CPU {cpu}: top queue out of order or stale at group {g}"));
            }
            last_key = key;
        }
        if top.leftmost != top.first_in_tree() {
            return fail(alloc::format!("CPU {cpu}: top queue's leftmost {:?} is not its first", top.leftmost));
        }
        let want = self.rqs[cpu].curr.and_then(|c| self.tasks[c.0 as usize].tg);
        if top.curr != want {
            return fail(alloc::format!("CPU {cpu}: running group {:?} != the running task's {:?}", top.curr, want));
        }
        let (mut load, mut count) = (0, 0);
        for (i, grp) in self.groups.iter().enumerate() {
            let g = crate::group::GroupId(i as u32);
            let se = &grp.se[cpu];
            if se.on_rq != (grp.cfs[cpu].nr_running > 0) {
                return fail(alloc::format!(
                    "CPU {cpu}: group {g} queued {} with {} tasks here",
                    se.on_rq,
                    grp.cfs[cpu].nr_running
                ));
            }
            if se.tree_key.is_some() && (top.curr == Some(g) || !se.on_rq) {
                return fail(alloc::format!("CPU {cpu}: group {g} in the top tree while running or dequeued"));
            }
            if se.on_rq {
                // 2.6.25/26: the group's shares on every CPU; rc4: its part
                // of them, clamped to [MIN_SHARES, MAX_SHARES].
                let ok = if self.rules.group_aggregates() {
                    (crate::group::MIN_SHARES..=crate::group::max_shares(&self.rules)).contains(&se.load.weight)
                } else {
                    se.load.weight == grp.shares
                };
                if !ok {
                    return fail(alloc::format!(
                        "CPU {cpu}: group {g} weighs {} (shares {})",
                        se.load.weight,
                        grp.shares
                    ));
                }
                load += se.load.weight;
                count += 1;
            }
        }
        if load != top.load.weight || count != top.nr_running {
            return fail(alloc::format!(
                "CPU {cpu}: top queue holds {count} groups of weight {load}, counted {} / {}",
                top.nr_running,
                top.load.weight
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The checker must catch what it claims to: each test corrupts one
    //! piece of a valid state the way a porting bug would, and expects the
    //! matching report.
    use crate::config::Config;
    use crate::entity::{TaskId, TaskParams};
    use crate::sched::{Deschedule, Scheduler};
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;
    use cfs_topology::{KernelVersion, SchedDomains};

    /// One CPU: a running task and two queued ones, in timeline order.
    fn three() -> (Scheduler<()>, TaskId, TaskId) {
        let v = KernelVersion::V2_6_26;
        let mut s = Scheduler::new(Config::new(v, 1), SchedDomains { version: v, per_cpu: vec![vec![]] }).unwrap();
        for _ in 0..3 {
            s.spawn(0, 0, TaskParams::normal()).unwrap();
        }
        s.do_schedule(0, 0, Deschedule::Preempt);
        let q: Vec<TaskId> = s.rqs[0].cfs.timeline().collect();
        assert_eq!(q.len(), 2);
        s.check_invariants().unwrap();
        (s, q[0], q[1])
    }

    fn report(s: &mut Scheduler<()>) -> String {
        s.check_invariants().expect_err("a corrupt state").what
    }

    /// Three CPUs without domains: CPU 0 runs one task and queues two, CPU 1
    /// runs one task, CPU 2 is idle. Returns CPU 0's queued tasks and CPU 1's
    /// current one.
    fn three_cpus() -> (Scheduler<()>, TaskId, TaskId, TaskId) {
        let v = KernelVersion::V2_6_26;
        let domains = SchedDomains { version: v, per_cpu: vec![vec![], vec![], vec![]] };
        let mut s = Scheduler::new(Config::new(v, 3), domains).unwrap();
        for _ in 0..3 {
            s.spawn(0, 0, TaskParams::normal()).unwrap();
        }
        let other = s.spawn(0, 1, TaskParams::normal()).unwrap();
        s.do_schedule(0, 0, Deschedule::Preempt);
        s.do_schedule(0, 1, Deschedule::Preempt);
        let q: Vec<TaskId> = s.rqs[0].cfs.timeline().collect();
        assert_eq!((q.len(), s.rqs[1].curr), (2, Some(other)));
        s.check_invariants().unwrap();
        (s, q[0], q[1], other)
    }

    #[test]
    fn the_history_keeps_the_last_calls_oldest_first() {
        // A ring of HISTORY_LEN: it grows call by call, then drops the
        // oldest, so after HISTORY_LEN + 8 calls the first kept is call 8.
        let mut h = super::History::default();
        let call = |i: u32| super::ApiCall::SetFeatures { mask: i };
        for i in 0..3 {
            h.push(call(i));
        }
        assert_eq!(h.calls(), vec![call(0), call(1), call(2)]);
        for i in 3..super::HISTORY_LEN as u32 + 8 {
            h.push(call(i));
        }
        let kept = h.calls();
        assert_eq!(kept.len(), super::HISTORY_LEN);
        assert_eq!((kept[0], kept[super::HISTORY_LEN - 1]), (call(8), call(super::HISTORY_LEN as u32 + 7)));
    }

    #[test]
    fn a_violation_prints_what_broke_and_every_call_before_it() {
        let v = super::InvariantViolation {
            what: String::from("CPU 0: x"),
            history: vec![super::ApiCall::SetFeatures { mask: 863 }, super::ApiCall::Tick { now: 4, cpu: 1 }],
        };
        assert_eq!(
            alloc::format!("{v}"),
            "scheduler invariant violated: CPU 0: x\nlast 2 calls:\n  SetFeatures { mask: 863 }\n  Tick { now: 4, cpu: 1 }\n"
        );
    }

    #[test]
    fn the_current_task_in_the_wrong_state_place_or_tree_is_reported() {
        // Each field of curr is corrupted alone: the per-task pass at the end
        // accepts all three (curr is counted once and is on_rq), so only the
        // curr check can report them.
        for corrupt in 0..3 {
            let (mut s, a, _, _) = three_cpus();
            let c = s.rqs[0].curr.unwrap();
            match corrupt {
                0 => s.tm(c).state = crate::entity::TaskState::Queued,
                1 => s.tm(c).cpu = 1,
                _ => s.tm(c).se.tree_key = s.t(a).se.tree_key,
            }
            let r = report(&mut s);
            assert!(r.starts_with(&alloc::format!("CPU 0: curr {c} is")), "{corrupt}: {r}");
        }
    }

    #[test]
    fn a_load_or_count_that_disagrees_with_the_queue_is_reported() {
        // Three nice-0 tasks on CPU 0: 3 x 1024 = 3072 queued weight, three
        // running. The rq copy and the cfs_rq copy are each corrupted alone.
        for rq_side in [false, true] {
            let (mut s, _, _, _) = three_cpus();
            let rq = &mut s.rqs[0];
            assert_eq!((rq.load.weight, rq.cfs.load.weight, rq.nr_running, rq.cfs.nr_running), (3072, 3072, 3, 3));
            if rq_side {
                rq.load.weight = 2048
            } else {
                rq.cfs.load.weight = 2048
            }
            let want =
                if rq_side { "summed weight 3072 != rq load 2048" } else { "summed weight 3072 != cfs load 2048" };
            assert!(report(&mut s).contains(want), "{}", report(&mut s));
            let (mut s, _, _, _) = three_cpus();
            let rq = &mut s.rqs[0];
            if rq_side {
                rq.nr_running = 2
            } else {
                rq.cfs.nr_running = 2
            }
            let want = if rq_side { "3 queued but rq nr_running 2" } else { "3 queued but nr_running 2" };
            assert!(report(&mut s).contains(want), "{}", report(&mut s));
        }
    }

    #[test]
    fn a_last_buddy_that_is_not_queued_here_is_reported() {
        // (a) a task queued on CPU 1 left as CPU 0's last buddy (a stale
        // buddy after a migration): on_rq and in a tree, but not here.
        let (mut s, a, _, _) = three_cpus();
        let on_cpu1 = s.spawn(0, 1, TaskParams::normal()).unwrap();
        assert!(s.t(on_cpu1).se.tree_key.is_some());
        s.check_invariants().unwrap();
        s.rqs[0].cfs.last = Some(on_cpu1);
        assert!(report(&mut s).contains(&alloc::format!("last buddy {on_cpu1} is not queued here")));
        // (b) a queued task of CPU 0 whose on_rq was cleared: the buddy check
        // comes before the per-task pass, which would name on_rq instead.
        let (mut s, a2, _, _) = three_cpus();
        assert_eq!(a, a2);
        s.rqs[0].cfs.last = Some(a);
        s.tm(a).se.on_rq = false;
        assert!(report(&mut s).contains(&alloc::format!("last buddy {a} is not queued here")), "{}", report(&mut s));
    }

    #[test]
    fn nohz_state_that_cannot_arise_is_reported() {
        use cfs_topology::CpuMask;
        // NO_HZ off: an ILB owner alone (empty mask) is already wrong, and is
        // reported as NO_HZ being off rather than as an owner outside the mask.
        let (mut s, _, _, _) = three_cpus();
        s.nohz.load_balancer = Some(1);
        assert!(report(&mut s).starts_with("NO_HZ is off"), "{}", report(&mut s));
        let (mut s, _, _, _) = three_cpus();
        s.nohz.cpu_mask = CpuMask::single(1);
        assert!(report(&mut s).starts_with("NO_HZ is off"), "{}", report(&mut s));
        // NO_HZ on: the owner must be in the mask; a stopped tick needs an
        // idle CPU inside the mask.
        let (mut s, _, _, _) = three_cpus();
        s.cfg.nohz = true;
        s.check_invariants().unwrap();
        s.nohz.load_balancer = Some(1);
        assert!(report(&mut s).starts_with("ILB owner CPU 1 is not in the nohz mask"), "{}", report(&mut s));
        s.nohz.cpu_mask = CpuMask::single(1);
        s.check_invariants().unwrap();
        s.rqs[1].tick_stopped = true;
        assert_eq!(report(&mut s), "CPU 1 runs a task with its tick stopped");
        // The idle CPU 2 may stop its tick only once it is in the mask.
        s.rqs[1].tick_stopped = false;
        s.rqs[2].tick_stopped = true;
        assert_eq!(report(&mut s), "CPU 2 stopped its tick outside the nohz mask");
        s.nohz.cpu_mask.set(2);
        s.check_invariants().unwrap();
    }

    #[test]
    fn each_runqueue_and_task_check_reports_its_own_corruption() {
        use alloc::format;
        // A queued task taken out of the tree (deactivate_task without
        // the state change a sleep makes): on no slot at all.
        let (mut s, a, _) = three();
        s.deactivate_task(0, a, false);
        assert_eq!(report(&mut s), format!("{a} is Queued but found on 0 runqueue slots"));
        // A queued task in the tree whose on_rq was cleared.
        let (mut s, a, _) = three();
        s.tm(a).se.on_rq = false;
        assert_eq!(report(&mut s), format!("{a} is Queued with on_rq = false"));
        // min_vruntime one ns below what the last check saw.
        let (mut s, _, _) = three();
        let m = s.rqs[0].cfs.min_vruntime;
        s.rqs[0].cfs.min_vruntime = m.wrapping_sub(1);
        assert_eq!(report(&mut s), format!("CPU 0: min_vruntime went back from {m} to {}", m.wrapping_sub(1)));
        // The leftmost cache pointing at the second entity.
        let (mut s, a, b) = three();
        s.rqs[0].cfs.leftmost = Some(b);
        assert_eq!(report(&mut s), format!("CPU 0: cached leftmost Some({b:?}) != tree first Some({a:?})"));
        // The cfs_rq's curr cleared while the rq's stays.
        let (mut s, _, _) = three();
        let c = s.rqs[0].curr;
        s.rqs[0].cfs.curr = None;
        assert_eq!(report(&mut s), format!("CPU 0: cfs.curr None != rq.curr {c:?}"));
        // The next buddy set to the running task (never in the tree).
        let (mut s, _, _) = three();
        let c = s.rqs[0].curr.unwrap();
        s.rqs[0].cfs.next = Some(c);
        assert_eq!(report(&mut s), format!("CPU 0: next buddy {c} is not in the tree"));
        // A queued task whose mask no longer holds its CPU, with no move
        // pending (set_affinity would have moved it).
        let (mut s, a, _, _) = three_cpus();
        s.tm(a).allowed = cfs_topology::CpuMask::single(1);
        assert_eq!(report(&mut s), format!("CPU 0: {a} queued outside its affinity mask"));
        // A live task left on a CPU that went down (migrate_live_tasks
        // missed it); an exited one there is no one's concern.
        let (mut s, _, _, _) = three_cpus();
        let sleeper = s.spawn(0, 2, TaskParams::normal()).unwrap();
        s.do_schedule(0, 2, Deschedule::Preempt);
        s.do_schedule(0, 2, Deschedule::Exit);
        s.online.clear(2);
        s.check_invariants().unwrap();
        s.tm(sleeper).state = crate::entity::TaskState::Sleeping;
        assert_eq!(report(&mut s), format!("{sleeper} is Sleeping on CPU 2, which is offline"));
    }

    #[test]
    fn a_tree_key_that_points_nowhere_is_reported() {
        let (mut s, a, _) = three();
        let k = s.t(a).se.tree_key.unwrap();
        s.tm(a).se.tree_key = Some((k.0 + 1, k.1));
        assert!(report(&mut s).contains("stale tree key"), "{}", report(&mut s));
    }

    #[test]
    fn a_vruntime_changed_behind_the_trees_back_is_reported() {
        // The first queued task's vruntime moves 1 ms past the second's without a
        // re-insert: walking the tree in key order, entity_key goes down.
        let (mut s, a, b) = three();
        let vb = s.t(b).se.vruntime;
        s.tm(a).se.vruntime = vb + 1_000_000;
        assert!(report(&mut s).contains("out of order"), "{}", report(&mut s));
    }

    #[test]
    fn a_schedstat_stamp_left_open_is_reported() {
        // The running task's wait ended when it was picked, and nothing
        // here sleeps: an open stamp on either is a missed update.
        let (mut s, _, _) = three();
        let curr = s.rqs[0].curr.unwrap();
        s.tm(curr).se.stats.wait_start = 7;
        assert!(report(&mut s).contains("with a wait open since 7"), "{}", report(&mut s));
        s.tm(curr).se.stats.wait_start = 0;
        s.tm(curr).se.stats.sleep_start = 9;
        assert!(report(&mut s).contains("Running with a sleep open since 9"), "{}", report(&mut s));
    }

    #[test]
    fn a_tree_entry_of_another_cpu_or_state_is_reported() {
        let (mut s, a, _) = three();
        s.tm(a).state = crate::entity::TaskState::Sleeping;
        assert!(report(&mut s).contains("in the tree but"), "{}", report(&mut s));
    }

    #[test]
    fn an_api_call_with_the_checker_on_returns_the_violation_and_its_history() {
        // Scheduler::finish runs the checker after every call when
        // Config::check_invariants is set, and hands back what it found with
        // the calls that led there; off, the same state goes unreported.
        for check in [true, false] {
            let (mut s, a, _) = three();
            s.cfg.check_invariants = check;
            s.tm(a).state = crate::entity::TaskState::Sleeping;
            match s.tick(1_000, 0) {
                Err(crate::sched::SchedError::Invariant(v)) => {
                    assert!(check);
                    assert!(v.what.contains("in the tree but"), "{}", v.what);
                    assert!(matches!(v.history.last(), Some(crate::invariants::ApiCall::Tick { .. })));
                }
                other => assert!(!check && other.is_ok(), "{other:?}"),
            }
        }
    }
}
