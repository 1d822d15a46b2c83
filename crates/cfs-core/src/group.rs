//! Group scheduling: CONFIG_FAIR_GROUP_SCHED with CONFIG_USER_SCHED, as
//! 2.6.25 and 2.6.26 build it.
//!
//! With [`crate::Config::group_sched`] on, every task belongs to the task
//! group of its user id ([`crate::TaskParams::uid`]), and the fair class
//! schedules in two levels (2.6.26 sched.c:250-350, 7753-7797; 4b119e21
//! sched.c:160-285, 7216-7224):
//!
//! - each CPU's top queue (the kernel's `rq->cfs`, here [`crate::rq::Rq::top`])
//!   holds one entity per group with tasks on that CPU, weighted by the
//!   group's `shares` whatever number of its tasks is queued there
//!   (`set_se_shares`): 2 × NICE_0_LOAD for user 0 (INIT_TASK_GROUP_LOAD
//!   under USER_SCHED) and NICE_0_LOAD for every other user
//!   (`sched_create_group`, bce7f793 sched.c:8026);
//! - each group has its own queue of tasks on every CPU (the group's
//!   `cfs_rq[cpu]`, here [`TaskGroup::cfs`]).
//!
//! So on one CPU users, not tasks, share the time: two users' tasks get
//! half of it each, however many each runs. Picking walks down (the top
//! queue's leftmost group, then that group's task), and enqueue, dequeue,
//! the tick and put_prev walk up (`for_each_sched_entity`): a group's
//! entity joins the top queue with its first task there and leaves it with
//! its last. The runqueue's `load` and `nr_running` still count tasks
//! (`inc_nr_running` → `inc_load` adds the task's weight, bce7f793
//! sched.c:1504-1518, 4b119e21 :1261-1275), so wake_affine and the
//! balancer's choice of the busiest CPU read task weights as they do
//! without groups; the balancer then moves each group's tasks in turn,
//! at most half the difference between that group's two queues
//! (`load_balance_fair`, see [`crate::balance`]).
//!
//! Not ported here: 2.6.26-rc4's group load balancing (the `aggregate`
//! walk of 18d95a2832c, which splits a group's shares across a domain's
//! CPUs, and its top-level `rq->load`; e490517a sched.c:1509-1830,
//! sched_fair.c:559-578), which 6363ca57c76 (rc5) reverted, and 2.6.32's
//! hierarchical load; the two profiles refuse the option
//! ([`crate::ConfigError::GroupSched`]). Nor are cgroups, or writes to
//! `/sys/kernel/uids/<uid>/cpu_share` (a group keeps the shares it was
//! created with).

use crate::cfs_rq::CfsRq;
use crate::entity::{SchedEntity, TaskId};
use crate::observe::{Event, Observer};
use crate::rq::Rq;
use crate::sched::Scheduler;
use crate::weights::{LoadWeight, NICE_0_LOAD};
use alloc::vec::Vec;
use cfs_topology::CpuId;
use core::fmt;

/// A task group, by its index in [`Scheduler::task_groups`] (groups are
/// made as their first task appears and never go away).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub u32);

impl fmt::Debug for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "G{}", self.0)
    }
}

impl fmt::Display for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "G{}", self.0)
    }
}

/// `INIT_TASK_GROUP_LOAD` under CONFIG_USER_SCHED: user 0's group weighs
/// two nice-0 tasks (bce7f793 sched.c:309-310, 4b119e21 :204-205).
pub const ROOT_USER_SHARES: u64 = 2 * NICE_0_LOAD;

/// Every other user's group: `tg->shares = NICE_0_LOAD` in
/// `sched_create_group` (bce7f793 sched.c:8026, 4b119e21 :7454).
pub const USER_SHARES: u64 = NICE_0_LOAD;

/// One user's task group (`struct task_group`).
#[derive(Clone, Debug)]
pub struct TaskGroup {
    /// The user id whose tasks it holds.
    pub uid: u32,
    /// `tg->shares`: the weight of its entity on every CPU.
    pub shares: u64,
    /// `tg->se[cpu]`: its entity in each CPU's top queue.
    pub se: Vec<SchedEntity>,
    /// `tg->cfs_rq[cpu]`: its queue of tasks on each CPU.
    pub cfs: Vec<CfsRq>,
}

impl TaskGroup {
    /// `sched_create_group` for `uid` on `nr_cpus` CPUs (`alloc_uid`), or
    /// `init_task_group` for user 0.
    pub fn new(uid: u32, nr_cpus: usize) -> Self {
        let shares = if uid == 0 { ROOT_USER_SHARES } else { USER_SHARES };
        let se = SchedEntity { load: LoadWeight::lazy(shares), ..SchedEntity::default() };
        TaskGroup { uid, shares, se: alloc::vec![se; nr_cpus], cfs: (0..nr_cpus).map(|_| CfsRq::new()).collect() }
    }
}

/// `task_cfs_rq(p)` on `cpu`: the group's queue there, or the runqueue's
/// own queue without group scheduling. A free function so callers can
/// borrow the tasks beside it.
pub(crate) fn task_q<'a>(
    rqs: &'a mut [Rq],
    groups: &'a mut [TaskGroup],
    cpu: CpuId,
    tg: Option<GroupId>,
) -> &'a mut CfsRq {
    match tg {
        Some(g) => &mut groups[g.0 as usize].cfs[cpu],
        None => &mut rqs[cpu].cfs,
    }
}

impl<O: Observer> Scheduler<O> {
    /// The task groups, in the order they were made (user 0's first when
    /// group scheduling is on; empty when it is off).
    pub fn task_groups(&self) -> &[TaskGroup] {
        &self.groups
    }

    /// `task_cfs_rq(p)` for a task group `tg` on `cpu`.
    pub(crate) fn tq(&self, cpu: CpuId, tg: Option<GroupId>) -> &CfsRq {
        match tg {
            Some(g) => &self.groups[g.0 as usize].cfs[cpu],
            None => &self.rqs[cpu].cfs,
        }
    }

    /// [`Self::tq`], writable.
    pub(crate) fn tq_mut(&mut self, cpu: CpuId, tg: Option<GroupId>) -> &mut CfsRq {
        task_q(&mut self.rqs, &mut self.groups, cpu, tg)
    }

    /// The fair task set as running on `cpu`'s queues (`cfs_rq->curr` at
    /// the bottom of the walk): between put_prev and pick, none.
    pub(crate) fn fair_curr(&self, cpu: CpuId) -> Option<TaskId> {
        if self.cfg.group_sched {
            self.rqs[cpu].top.curr.and_then(|g| self.groups[g.0 as usize].cfs[cpu].curr)
        } else {
            self.rqs[cpu].cfs.curr
        }
    }

    /// The group a task belongs to (None without group scheduling).
    pub(crate) fn tg(&self, id: TaskId) -> Option<GroupId> {
        self.tasks[id.0 as usize].tg
    }

    /// `p->user->tg`: the group of `uid`, made on first use (`alloc_uid` →
    /// `sched_create_user`). None without group scheduling.
    pub(crate) fn group_of_uid(&mut self, uid: u32) -> Option<GroupId> {
        if !self.cfg.group_sched {
            return None;
        }
        if let Some(i) = self.groups.iter().position(|g| g.uid == uid) {
            return Some(GroupId(i as u32));
        }
        self.groups.push(TaskGroup::new(uid, self.rqs.len()));
        Some(GroupId((self.groups.len() - 1) as u32))
    }

    /// `for_each_leaf_cfs_rq(rq, cfs_rq)`: the groups in the order of the
    /// runqueue's `leaf_cfs_rq_list`, to which `register_fair_sched_group`
    /// adds each new group at the head (`list_add_rcu`, bce7f793
    /// sched.c:8053-8054), after `init_task_group` went in at boot: the
    /// newest group first, user 0's last.
    pub(crate) fn leaf_groups(&self) -> impl Iterator<Item = GroupId> + '_ {
        (0..self.groups.len() as u32).rev().map(GroupId)
    }

    /// `update_curr(&rq->cfs)` under group scheduling: charge the running
    /// group entity, weighted by the group's shares.
    pub(crate) fn update_curr_top(&mut self, cpu: CpuId) {
        let rules = self.rules;
        let rq = &mut self.rqs[cpu];
        let Some(g) = rq.top.curr else { return };
        let se = &mut self.groups[g.0 as usize].se[cpu];
        crate::fair::charge_entity(se, rq.clock, rq.top.load.weight, &rules);
    }

    /// `enqueue_entity(&rq->cfs, tg->se[cpu], 1)`: the walk up from a task
    /// enqueues its group's entity with `wakeup` set whatever the task's
    /// enqueue was (`wakeup = 1` in enqueue_task_fair's loop), so the group
    /// is placed as a waking sleeper. 2.6.25 places and inserts before
    /// accounting, as for tasks (a992241de61).
    pub(crate) fn enqueue_group_entity(&mut self, cpu: CpuId, g: GroupId) {
        self.update_curr_top(cpu);
        let is_curr = self.rqs[cpu].top.curr == Some(g);
        if self.rules.is_2_6_25() {
            self.place_group_entity(cpu, g);
            if !is_curr {
                self.group_tree(cpu, g, true);
            }
            self.account_group(cpu, g, true);
        } else {
            self.account_group(cpu, g, true);
            self.place_group_entity(cpu, g);
            if !is_curr {
                self.group_tree(cpu, g, true);
            }
        }
    }

    /// `dequeue_entity(&rq->cfs, tg->se[cpu], 1)`, when the group's queue
    /// on `cpu` has lost its last task (`if (cfs_rq->load.weight) break;`
    /// in dequeue_task_fair). A group entity's `last_wakeup` stays 0 (only
    /// tasks are stamped in check_preempt_wakeup), so update_avg_stats
    /// leaves it alone.
    pub(crate) fn dequeue_group_entity(&mut self, cpu: CpuId, g: GroupId) {
        self.update_curr_top(cpu);
        if self.rqs[cpu].top.curr != Some(g) {
            self.group_tree(cpu, g, false);
        }
        self.account_group(cpu, g, false);
    }

    /// `place_entity(&rq->cfs, se, 0)` for a group entity.
    fn place_group_entity(&mut self, cpu: CpuId, g: GroupId) {
        let top = &self.rqs[cpu].top;
        let left = top.leftmost.map(|l| self.groups[l.0 as usize].se[cpu].vruntime);
        let v = self.placed_vruntime(
            top.min_vruntime,
            top.nr_running,
            top.load.weight,
            left,
            &self.groups[g.0 as usize].se[cpu],
            false,
        );
        self.groups[g.0 as usize].se[cpu].vruntime = v;
    }

    /// `account_entity_enqueue` / `_dequeue` on the top queue: the group's
    /// shares go on `rq->cfs` only; the runqueue's load counts tasks.
    fn account_group(&mut self, cpu: CpuId, g: GroupId, enqueue: bool) {
        let top = &mut self.rqs[cpu].top;
        let se = &mut self.groups[g.0 as usize].se[cpu];
        if enqueue {
            top.load.add(se.load.weight);
            top.nr_running += 1;
        } else {
            top.load.sub(se.load.weight);
            top.nr_running = top.nr_running.saturating_sub(1);
        }
        se.on_rq = enqueue;
    }

    /// `__enqueue_entity` / `__dequeue_entity` on the top queue.
    fn group_tree(&mut self, cpu: CpuId, g: GroupId, insert: bool) {
        let rules = self.rules;
        let top = &mut self.rqs[cpu].top;
        let groups = &mut self.groups;
        let mut se = core::mem::take(&mut groups[g.0 as usize].se[cpu]);
        if insert {
            let mut rekeyed = Vec::new();
            top.insert(
                g,
                &mut se,
                !rules.min_vruntime_tracks_curr(),
                |h| groups[h.0 as usize].se[cpu].vruntime,
                |h, k| rekeyed.push((h, k)),
            );
            for (h, k) in rekeyed {
                groups[h.0 as usize].se[cpu].tree_key = Some(k);
            }
        } else {
            top.remove(g, &mut se, !rules.min_vruntime_tracks_curr(), |h| groups[h.0 as usize].se[cpu].vruntime);
        }
        groups[g.0 as usize].se[cpu] = se;
    }

    /// `set_next_entity(&rq->cfs, tg->se[cpu])`.
    pub(crate) fn set_next_group(&mut self, cpu: CpuId, g: GroupId) {
        if self.groups[g.0 as usize].se[cpu].on_rq {
            self.group_tree(cpu, g, false);
        }
        let clock = self.rqs[cpu].clock;
        self.rqs[cpu].top.curr = Some(g);
        let se = &mut self.groups[g.0 as usize].se[cpu];
        se.exec_start = clock;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
    }

    /// `put_prev_entity(&rq->cfs, tg->se[cpu])`.
    pub(crate) fn put_prev_group(&mut self, cpu: CpuId) {
        let Some(g) = self.rqs[cpu].top.curr else { return };
        if self.groups[g.0 as usize].se[cpu].on_rq {
            self.update_curr_top(cpu);
            self.group_tree(cpu, g, true);
        }
        self.rqs[cpu].top.curr = None;
    }

    /// The top level of `pick_next_task_fair`'s walk down: the leftmost
    /// group. Only task queues get a next buddy (`cfs_rq_of(pse)->next =
    /// pse` names the task's own queue), so the top queue has none to
    /// prefer.
    pub(crate) fn pick_next_group(&mut self, cpu: CpuId) -> Option<GroupId> {
        let g = self.rqs[cpu].top.leftmost?;
        self.set_next_group(cpu, g);
        Some(g)
    }

    /// `entity_tick(&rq->cfs, tg->se[cpu], queued)`, after the task's own
    /// (task_tick_fair walks up): charge the group; reschedule when it has
    /// had its slice of the top queue (check_preempt_tick with the group's
    /// shares as the weight).
    pub(crate) fn group_entity_tick(&mut self, cpu: CpuId, curr: TaskId, queued: bool, hrtimer_active: bool) {
        let Some(g) = self.tg(curr) else { return };
        if self.rqs[cpu].top.curr != Some(g) {
            return;
        }
        self.update_curr_top(cpu);
        if queued {
            self.resched_cpu(cpu);
            return;
        }
        if !self.cfg.features.has(crate::features::Feature::DoubleTick) && hrtimer_active {
            return;
        }
        let wakeup_preempt = self.cfg.features.has(crate::features::Feature::WakeupPreempt);
        if self.rqs[cpu].top.nr_running <= 1 && wakeup_preempt {
            return;
        }
        let (rules, t) = (self.rules, self.cfg.tunables);
        let top = &mut self.rqs[cpu].top;
        let se = &self.groups[g.0 as usize].se[cpu];
        let ideal = crate::fair::sched_slice(top.nr_running, &mut top.load, se.load.weight, &t, &rules);
        let ran = se.sum_exec_runtime.wrapping_sub(se.prev_sum_exec_runtime);
        if ran > ideal {
            self.resched_cpu(cpu);
            self.emit(Event::TickPreempt { cpu, curr, ran, ideal });
        }
    }
}
