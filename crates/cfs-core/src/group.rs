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
//! 2.6.26-rc4 balances groups differently (18d95a2832c, rc1; reverted by
//! 6363ca57c76 in rc5; [`crate::profile::Rules::group_aggregates`]):
//!
//! - `rq->load` counts the top-level entities, the groups' per-CPU
//!   weights, not tasks (`inc_cpu_load` when `!parent_entity(se)`,
//!   e490517a sched_fair.c:555-578), so wake_affine and the balancer read
//!   group weights;
//! - every periodic balance pass first walks the group tree over the
//!   domain's CPUs (`get_aggregate` → `aggregate_walk_tree`, e490517a
//!   sched.c:1509-1830; `Scheduler::aggregate_walk`): per group the
//!   summed task weight (`rq_weight`), the shares it holds there and its
//!   fraction of the domain's load; on the way up each CPU's entity is
//!   re-weighted to the group's shares × that CPU's task weight / the
//!   domain's (`__update_group_shares_cpu`), a CPU without the group's
//!   tasks keeping a nominal NICE_0_LOAD's worth;
//! - load_balance_fair converts the root imbalance into each group's
//!   task weight and back, and re-splits the group's shares between the
//!   two CPUs after a move (`move_group_shares`).
//!
//! The aggregates live in the per-CPU queue of the domain's first CPU
//! (`aggregate(tg, sd) = &tg->cfs_rq[sd->first_cpu]->aggregate`), so two
//! domains with the same first CPU share them, as in the kernel; newly idle
//! balancing reads whatever the last periodic pass left there.
//!
//! Not ported: 2.6.32's hierarchical load, so those profiles refuse the
//! option ([`crate::ConfigError::GroupSched`]); cgroups; writes to
//! `/sys/kernel/uids/<uid>/cpu_share` (a group keeps the shares it was
//! created with).

use crate::cfs_rq::CfsRq;
use crate::entity::{SchedEntity, TaskId};
use crate::observe::{Event, Observer};
use crate::profile::Rules;
use crate::rq::Rq;
use crate::sched::Scheduler;
use crate::weights::{LoadWeight, NICE_0_LOAD, calc_delta_mine};
use alloc::vec::Vec;
use cfs_topology::{CpuId, CpuMask};
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

/// `MIN_SHARES`: the least a group entity weighs (bce7f793 sched.c:321,
/// e490517a :319).
pub const MIN_SHARES: u64 = 2;
/// `MAX_SHARES` of 2.6.25 and 2.6.26 (bce7f793 sched.c:322); 2.6.26-rc4's
/// is `ULONG_MAX - 1` (e490517a :320), see [`max_shares`].
pub const MAX_SHARES: u64 = 1 << 18;

/// The profile's `MAX_SHARES`, the most its re-weighting gives a group
/// entity (only rc4 re-weights).
pub fn max_shares(rules: &Rules) -> u64 {
    if rules.group_aggregates() { u64::MAX - 1 } else { MAX_SHARES }
}

/// 2.6.26-rc4's `struct aggregate_struct` of one group over one domain
/// (e490517a sched.c:405-436).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aggregate {
    /// The group's fraction of the domain's load: the parent's load ×
    /// shares / the parent's rq_weight (the root: the CPUs' loads summed).
    pub load: u64,
    /// The part of the group's shares held on the domain's CPUs.
    pub shares: u64,
    /// The group's queues' weights summed over the domain.
    pub rq_weight: u64,
    /// The part of `rq_weight` that is tasks (all of it, two levels deep).
    pub task_weight: u64,
}

/// One user's task group (`struct task_group`).
#[derive(Clone, Debug)]
pub struct TaskGroup {
    /// The user id whose tasks it holds.
    pub uid: u32,
    /// `tg->shares`: the weight of its entity on every CPU (2.6.25/26);
    /// the total split across the CPUs (2.6.26-rc4).
    pub shares: u64,
    /// `tg->se[cpu]`: its entity in each CPU's top queue.
    pub se: Vec<SchedEntity>,
    /// `tg->cfs_rq[cpu]`: its queue of tasks on each CPU.
    pub cfs: Vec<CfsRq>,
    /// 2.6.26-rc4's `tg->cfs_rq[cpu]->shares`: the shares last given to
    /// each CPU, 0 where it had no tasks then.
    pub cpu_shares: Vec<u64>,
    /// 2.6.26-rc4's `tg->cfs_rq[cpu]->aggregate`, used for the domains whose
    /// first CPU is `cpu`.
    pub aggregate: Vec<Aggregate>,
}

impl TaskGroup {
    /// `sched_create_group` for `uid` on `nr_cpus` CPUs (`alloc_uid`), or
    /// `init_task_group` for user 0. 2.6.25 sets each entity's inverse
    /// weight at creation, `2^32 / shares` (`init_tg_cfs_entry`, 4b119e21
    /// sched.c:7170-7171); 2.6.26 and rc4 leave it to be computed lazily.
    pub fn new(uid: u32, nr_cpus: usize, rules: &Rules) -> Self {
        let shares = if uid == 0 { ROOT_USER_SHARES } else { USER_SHARES };
        let load = if rules.is_2_6_25() {
            LoadWeight { weight: shares, inv_weight: (1u64 << 32) / shares }
        } else {
            LoadWeight::lazy(shares)
        };
        let se = SchedEntity { load, ..SchedEntity::default() };
        TaskGroup {
            uid,
            shares,
            se: alloc::vec![se; nr_cpus],
            cfs: (0..nr_cpus).map(|_| CfsRq::new()).collect(),
            cpu_shares: alloc::vec![0; nr_cpus],
            aggregate: alloc::vec![Aggregate::default(); nr_cpus],
        }
    }
}

/// A task's group level in the weight arithmetic that walks
/// `for_each_sched_entity` (2.6.26-rc4's calc_delta_weight, calc_delta_fair
/// and calc_delta_asym, e490517a sched_fair.c:339-362, 422-441; 2.6.26's
/// sched_slice and sched_vslice_add, bce7f793 :363-406): the group's entity
/// on a CPU and the top queue it is (or is about to be) queued on, as they
/// are now. 2.6.25's arithmetic does not walk.
#[derive(Clone, Copy, Debug)]
pub struct UpLevel {
    /// The top queue's load (`cfs_rq_of(group se)->load`).
    pub top: LoadWeight,
    /// The group entity's load.
    pub se: LoadWeight,
    /// Whether the group entity is queued.
    pub on_rq: bool,
}

impl UpLevel {
    /// calc_delta_weight's step: `delta * w_g / W_top` (rc4, calc_delta_mine
    /// with the top queue's inverse); 2.6.26's sched_slice step multiplies
    /// and truncates with do_div.
    pub fn slice(mut self, delta: u64, rules: &Rules) -> u64 {
        if rules.weight_math_rc() {
            calc_delta_mine(delta, self.se.weight, &mut self.top, rules.version)
        } else {
            crate::fair::do_div(delta.wrapping_mul(self.se.weight), self.top.weight)
        }
    }

    /// calc_delta_fair's step (rc4): `delta * W_top / w_g`.
    pub fn fair(mut self, delta: u64, rules: &Rules) -> u64 {
        calc_delta_mine(delta, self.top.weight, &mut self.se, rules.version)
    }

    /// calc_delta_asym's step (rc4): as `fair`, with a group lighter than
    /// nice 0 counted as nice 0.
    pub fn asym(mut self, delta: u64, rules: &Rules) -> u64 {
        let mut nice0 = LoadWeight { weight: NICE_0_LOAD, inv_weight: 1 << 22 };
        let lw = if self.se.weight < NICE_0_LOAD { &mut nice0 } else { &mut self.se };
        calc_delta_mine(delta, self.top.weight, lw, rules.version)
    }

    /// 2.6.26 sched_vslice_add's step: `vslice * NICE_0_LOAD / (W_top +
    /// w_g if the group is not queued)`.
    pub fn vslice(self, vslice: u64) -> u64 {
        let w = self.top.weight + if self.on_rq { 0 } else { self.se.weight };
        crate::fair::do_div(vslice.wrapping_mul(NICE_0_LOAD), w)
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

    /// A task group `tg` whose level the profile's weight arithmetic walks
    /// ([`UpLevel`]): None in 2.6.25 and without groups.
    pub(crate) fn hier_up(&self, tg: Option<GroupId>) -> Option<GroupId> {
        tg.filter(|_| !self.rules.is_2_6_25())
    }

    /// The [`UpLevel`] of group `g` on `cpu`, now.
    pub(crate) fn up_level(&self, cpu: CpuId, g: GroupId) -> UpLevel {
        let se = &self.groups[g.0 as usize].se[cpu];
        UpLevel { top: self.rqs[cpu].top.load, se: se.load, on_rq: se.on_rq }
    }

    /// `rq->cfs.nr_running`: the top queue's count of groups under group
    /// scheduling, of tasks without.
    pub(crate) fn rq_cfs_nr_running(&self, cpu: CpuId) -> u64 {
        if self.cfg.group_sched { self.rqs[cpu].top.nr_running } else { self.rqs[cpu].cfs.nr_running }
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
        self.groups.push(TaskGroup::new(uid, self.rqs.len(), &self.rules));
        Some(GroupId((self.groups.len() - 1) as u32))
    }

    /// `sched_init`'s `init_task_group`: with group scheduling, user 0's
    /// group exists from boot, first of all (so last in every newest-first
    /// list).
    pub(crate) fn init_task_group(&mut self) {
        if self.cfg.group_sched && self.groups.is_empty() {
            self.group_of_uid(0);
        }
    }

    /// `for_each_leaf_cfs_rq(rq, cfs_rq)`: the groups in the order of the
    /// runqueue's `leaf_cfs_rq_list`, to which `register_fair_sched_group`
    /// adds each new group at the head (`list_add_rcu`, bce7f793
    /// sched.c:8053-8054), after `init_task_group` (user 0's, made at boot)
    /// went in: the newest group first, user 0's last. rc4's `task_groups`
    /// and `root_task_group.children` lists are in the same order.
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
        crate::fair::charge_entity(se, rq.clock, rq.top.load.weight, &rules, |d| d);
    }

    /// `enqueue_entity(&rq->cfs, tg->se[cpu], wakeup)`: the walk up from a
    /// task enqueues its group's entity with `wakeup` set whatever the
    /// task's enqueue was (`wakeup = 1` in enqueue_task_fair's loop), so the
    /// group is placed as a waking sleeper; rc4's re-weighting requeues it
    /// with `wakeup = 0`, unplaced. 2.6.25 places and inserts before
    /// accounting, as for tasks (a992241de61).
    pub(crate) fn enqueue_group_entity(&mut self, cpu: CpuId, g: GroupId, wakeup: bool) {
        self.update_curr_top(cpu);
        let is_curr = self.rqs[cpu].top.curr == Some(g);
        if self.rules.is_2_6_25() {
            if wakeup {
                self.place_group_entity(cpu, g);
            }
            if !is_curr {
                self.group_tree(cpu, g, true);
            }
            self.account_group(cpu, g, true);
        } else {
            self.account_group(cpu, g, true);
            if wakeup {
                self.place_group_entity(cpu, g);
            }
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
            None,
        );
        self.groups[g.0 as usize].se[cpu].vruntime = v;
    }

    /// `account_entity_enqueue` / `_dequeue` on the top queue: the group's
    /// weight goes on `rq->cfs`, and in 2.6.26-rc4 on the runqueue's load
    /// too (`inc_cpu_load`); elsewhere the runqueue's load counts tasks.
    fn account_group(&mut self, cpu: CpuId, g: GroupId, enqueue: bool) {
        let at_top = self.rules.group_aggregates();
        let rq = &mut self.rqs[cpu];
        let se = &mut self.groups[g.0 as usize].se[cpu];
        if enqueue {
            rq.top.load.add(se.load.weight);
            rq.top.nr_running += 1;
            if at_top {
                rq.load.add(se.load.weight);
            }
        } else {
            rq.top.load.sub(se.load.weight);
            rq.top.nr_running = rq.top.nr_running.saturating_sub(1);
            if at_top {
                rq.load.sub(se.load.weight);
            }
        }
        se.on_rq = enqueue;
    }

    /// `__set_se_shares(tg->se[cpu], shares)` (e490517a sched.c:8602-8616):
    /// a queued entity is dequeued, re-weighted and enqueued again
    /// (`dequeue_entity(.., 0)`, `enqueue_entity(.., 0)`: charged to now on
    /// that CPU's clock, not placed).
    pub(crate) fn set_group_shares(&mut self, cpu: CpuId, g: GroupId, shares: u64) {
        let on_rq = self.groups[g.0 as usize].se[cpu].on_rq;
        if on_rq {
            self.dequeue_group_entity(cpu, g);
        }
        self.groups[g.0 as usize].se[cpu].load = LoadWeight::lazy(shares);
        if on_rq {
            self.enqueue_group_entity(cpu, g, false);
        }
    }

    /// `get_aggregate(sd)` → `aggregate_walk_tree(aggregate_get_down,
    /// aggregate_get_up, sd)` over the CPUs of `span` (e490517a
    /// sched.c:1509-1760), at the start of a periodic load_balance pass
    /// in 2.6.26-rc4. The tree is the root (the runqueues' own `rq->cfs`)
    /// over the user groups, walked newest first as `parent->children`
    /// lists them: down at the root, then down and up at each group, then
    /// up at the root (which has no entity to re-weight).
    pub(crate) fn aggregate_walk(&mut self, span: &CpuMask) {
        let Some(first) = span.first() else { return };
        // aggregate_get_down(root): the root's queues hold the groups'
        // entities; its shares are 0 on every CPU (it has no entity), so
        // they read as tg->shares once it has weight; its load is the
        // runqueues' summed.
        let rq_weight: u64 = span.iter().map(|i| self.rqs[i].top.load.weight).sum();
        let shares = if rq_weight != 0 { NICE_0_LOAD } else { 0 };
        let load: u64 = span.iter().map(|i| self.rqs[i].load.weight).sum();
        let root = Aggregate { load, shares, rq_weight, task_weight: 0 };
        self.rqs[first].top_aggregate = root;
        let children: Vec<GroupId> = self.leaf_groups().collect();
        for g in children {
            self.aggregate_get_down(g, span, first, root);
            self.aggregate_group_set_shares(g, span, first);
        }
    }

    /// `aggregate_get_down(tg, sd)`: `aggregate_group_weight`,
    /// `aggregate_group_shares` and `aggregate_group_load` for a group
    /// under the root.
    fn aggregate_get_down(&mut self, g: GroupId, span: &CpuMask, first: CpuId, root: Aggregate) {
        let grp = &self.groups[g.0 as usize];
        let rq_weight: u64 = span.iter().map(|i| grp.cfs[i].load.weight).sum();
        let shares = Self::aggregate_group_shares(grp, span, rq_weight);
        // load = parent load × shares / (parent rq_weight + 1).
        let load = root.load.wrapping_mul(shares) / root.rq_weight.wrapping_add(1);
        let a = Aggregate { load, shares, rq_weight, task_weight: rq_weight };
        self.groups[g.0 as usize].aggregate[first] = a;
    }

    /// `aggregate_group_shares`: the shares held on the span's CPUs, or
    /// all of them when none are recorded but the group has weight there,
    /// or when the sum is more than it has.
    fn aggregate_group_shares(grp: &TaskGroup, span: &CpuMask, rq_weight: u64) -> u64 {
        let shares = span.iter().fold(0u64, |s, i| s.wrapping_add(grp.cpu_shares[i]));
        if (shares == 0 && rq_weight != 0) || shares > grp.shares { grp.shares } else { shares }
    }

    /// `aggregate_group_set_shares` (aggregate_get_up): give each CPU of
    /// the span its part of the group's shares, then put what rounding
    /// lost (or the clamp added) on the span's first CPU, in unsigned
    /// arithmetic as the kernel does.
    fn aggregate_group_set_shares(&mut self, g: GroupId, span: &CpuMask, first: CpuId) {
        let before = self.groups[g.0 as usize].aggregate[first].shares;
        for i in span.iter() {
            self.update_group_shares_cpu(g, first, i);
        }
        let grp = &self.groups[g.0 as usize];
        let rq_weight = grp.aggregate[first].rq_weight;
        let now = Self::aggregate_group_shares(grp, span, rq_weight);
        let grp = &mut self.groups[g.0 as usize];
        grp.aggregate[first].shares = now;
        let lost = before.wrapping_sub(now);
        if lost != 0 {
            grp.cpu_shares[first] = grp.cpu_shares[first].wrapping_add(lost);
            grp.aggregate[first].shares = grp.aggregate[first].shares.wrapping_add(lost);
        }
    }

    /// `__update_group_shares_cpu(tg, sd, cpu)` (e490517a
    /// sched.c:1635-1680): `shares = aggregate shares × this CPU's queue
    /// weight / (aggregate rq_weight + 1)`, a CPU without the group's tasks
    /// counting as one nice-0 task (boost) so a task arriving there is not
    /// starved; the unboosted value is recorded, and the entity weighs the
    /// value clamped to [MIN_SHARES, MAX_SHARES].
    fn update_group_shares_cpu(&mut self, g: GroupId, first: CpuId, cpu: CpuId) {
        let grp = &self.groups[g.0 as usize];
        let a = grp.aggregate[first];
        let mut rq_weight = grp.cfs[cpu].load.weight;
        let boost = rq_weight == 0;
        if boost {
            rq_weight = NICE_0_LOAD;
        }
        let shares = a.shares.wrapping_mul(rq_weight) / a.rq_weight.wrapping_add(1);
        self.groups[g.0 as usize].cpu_shares[cpu] = if boost { 0 } else { shares };
        self.set_group_shares(cpu, g, shares.clamp(MIN_SHARES, max_shares(&self.rules)));
    }

    /// `move_group_shares(tg, sd, scpu, dcpu)` after load_balance_fair
    /// moved some of the group's tasks: re-split the two CPUs' shares and
    /// keep their sum (the root above has no entity to re-weight).
    pub(crate) fn move_group_shares(&mut self, g: GroupId, first: CpuId, scpu: CpuId, dcpu: CpuId) {
        let grp = &self.groups[g.0 as usize];
        let sum = grp.cpu_shares[scpu].wrapping_add(grp.cpu_shares[dcpu]);
        self.update_group_shares_cpu(g, first, scpu);
        self.update_group_shares_cpu(g, first, dcpu);
        let grp = &mut self.groups[g.0 as usize];
        let lost = sum.wrapping_sub(grp.cpu_shares[scpu].wrapping_add(grp.cpu_shares[dcpu]));
        if lost != 0 {
            grp.cpu_shares[dcpu] = grp.cpu_shares[dcpu].wrapping_add(lost);
        }
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
        let nr = self.rqs[cpu].top.nr_running;
        if !self.tick_wants_slice_check(cpu, queued, hrtimer_active, nr) {
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

#[cfg(test)]
mod tests {
    //! 2.6.26-rc4's aggregate arithmetic by hand (e490517a sched.c:1560-1760,
    //! sched_fair.c:1386-1437). The whole-run behaviour of the other
    //! profiles is pinned in tests/groups.rs.
    use super::*;
    use crate::Config;
    use crate::entity::TaskParams;
    use crate::observe::MigrateReason;
    use cfs_topology::{Host, KernelVersion};

    /// An AMD X2 (two cores, one MC domain) under rc4 with group
    /// scheduling and migration_cost 0 (nothing cache hot): user 1 has three
    /// tasks queued on CPU 0 and one on CPU 1, none running and no buddy.
    /// Its group is the second (user 0's is made at boot).
    fn rc4_scene() -> Scheduler<()> {
        let v = KernelVersion::V2_6_26Rc4;
        let h = Host::preset("x2").unwrap();
        let mut c = Config::new(v, h.nr_cpus());
        c.group_sched = true;
        c.check_invariants = true;
        c.tunables.migration_cost = 0;
        let mut s = Scheduler::new(c, h.build_domains(v)).unwrap();
        for cpu in [0, 0, 0, 1] {
            s.spawn(0, cpu, TaskParams::normal().uid(1)).unwrap();
        }
        s
    }

    #[test]
    fn the_walk_splits_a_group_s_shares_by_task_weight() {
        let mut s = rc4_scene();
        // Before any walk each CPU's entity weighs the group's 1024, and
        // rq->load counts it, not the tasks.
        assert_eq!((s.rqs[0].load.weight, s.rqs[1].load.weight), (1024, 1024));
        s.aggregate_walk(&CpuMask::first_n(2));
        // Root: rq_weight = 1024 + 1024, shares = NICE_0_LOAD (none
        // recorded, weight present), load = the runqueues' 2048.
        assert_eq!(s.rqs[0].top_aggregate, Aggregate { load: 2048, shares: 1024, rq_weight: 2048, task_weight: 0 });
        // The group: rq_weight = 3072 + 1024 = 4096; no shares recorded
        // yet, so all 1024; load = 2048 × 1024 / 2049 = 1023.
        // Up: CPU 0 gets 1024 × 3072 / 4097 = 767, CPU 1 1024 × 1024 / 4097
        // = 255; they sum to 1022, and the 2 lost go on the first CPU's
        // record (not its entity).
        let grp = &s.task_groups()[1];
        assert_eq!(grp.aggregate[0], Aggregate { load: 1023, shares: 1024, rq_weight: 4096, task_weight: 4096 });
        assert_eq!((grp.se[0].load.weight, grp.se[1].load.weight), (767, 255));
        assert_eq!((grp.cpu_shares[0], grp.cpu_shares[1]), (769, 255));
        assert_eq!((s.rqs[0].load.weight, s.rqs[1].load.weight), (767, 255));
    }

    #[test]
    fn load_balance_fair_converts_between_root_and_group_weight() {
        let mut s = rc4_scene();
        s.aggregate_walk(&CpuMask::first_n(2));
        // A root imbalance of 256 is 256 × 4096 / 1024 = 1024 of the group's
        // task weight, as is half its difference (3072 - 1024) / 2: one
        // task moves (rc4's iterator offers T2 and T1, not the oldest, T0).
        let pulled = s.move_tasks(1, 0, 256, (1, 0), MigrateReason::Periodic, &mut false);
        assert_eq!(pulled, 1);
        assert_eq!(s.t(TaskId(2)).cpu, 1);
        // move_group_shares: 769 + 255 = 1024 re-split over 2048 and 2048
        // of task weight: 1024 × 2048 / 4097 = 511 each, the 2 lost
        // recorded on the destination.
        let grp = &s.task_groups()[1];
        assert_eq!((grp.se[0].load.weight, grp.se[1].load.weight), (511, 511));
        assert_eq!((grp.cpu_shares[0], grp.cpu_shares[1]), (511, 513));
        assert_eq!((s.rqs[0].load.weight, s.rqs[1].load.weight), (511, 511));
    }

    #[test]
    fn a_group_heavier_here_wraps_its_difference_and_may_move_everything() {
        let mut s = rc4_scene();
        // Four of the group's tasks on CPU 0, three on CPU 1.
        for cpu in [0, 1, 1] {
            s.spawn(0, cpu, TaskParams::normal().uid(1)).unwrap();
        }
        s.aggregate_walk(&CpuMask::first_n(2));
        // Pulling onto the heavier CPU 0 from CPU 1, asked for 1 of root
        // weight: (3072 - 4096) / 2 in unsigned long is about 2^63, so the
        // group may move every task balance_tasks finds on CPU 1. rc4's
        // iterator offers two of the three (never the oldest): both move.
        // 2.6.25/26 would skip the group (imbalance <= 0).
        assert_eq!(s.move_tasks(0, 1, 1, (0, 0), MigrateReason::Periodic, &mut false), 2);
        assert_eq!((s.rqs[0].nr_running, s.rqs[1].nr_running), (6, 1));
    }

    #[test]
    fn slices_walk_up_to_the_group_in_2_6_26() {
        // One CPU (no domain; latency 20 ms), user 1 with one task and user
        // 2 with two. 2.6.26's sched_slice walks up: period(nr of the task's
        // queue) x w / W at each level (bce7f793 sched_fair.c:363-376). User
        // 2's tasks: 20 ms x 1024 / 2048 x 1024 / 2048 = 5 ms; user 1's
        // task: 20 ms x 1024 / 1024 x 1024 / 2048 = 10 ms. (One level deep,
        // both would be 10 and 20 ms.)
        let v = KernelVersion::V2_6_26;
        let mut c = Config::new(v, 1);
        c.group_sched = true;
        let mut s =
            Scheduler::new(c, cfs_topology::SchedDomains { version: v, per_cpu: alloc::vec![alloc::vec![]] }).unwrap();
        let a = s.spawn(0, 0, TaskParams::normal().uid(1)).unwrap();
        let b = s.spawn(0, 0, TaskParams::normal().uid(2)).unwrap();
        s.spawn(0, 0, TaskParams::normal().uid(2)).unwrap();
        let (ga, gb) = (s.tg(a), s.tg(b));
        assert_eq!((s.task_slice(0, ga, 1024), s.task_slice(0, gb, 1024)), (10_000_000, 5_000_000));
    }

    #[test]
    fn rc4_s_sleeper_credit_walks_up_and_is_none_where_the_group_is_new() {
        // calc_delta_fair's group step is thresh x W_top / w_g, with the top
        // queue as it is when the task is placed: before its group's entity
        // joins it, so on a CPU where the group had nothing queued (and no
        // other group either) W_top = 0 and the credit is 0. Beside another
        // group of 1024, a group of 767 turns 40 ms into 40 ms x 1024 x
        // inv(767) >> 32, rc4's lazy inverse being 1 + (2^32 - 383) / 768 =
        // 5,592,405: 40e6 x 1024 = 4.096e10 takes the large-value path,
        // srr(4.096e10, 16) = 625,000, x 5,592,405 = 3,495,253,125,000,
        // srr(.., 16) = 53,333,330.
        let rules = Config::new(KernelVersion::V2_6_26Rc4, 2).rules();
        let up = |top: u64, se: u64| UpLevel { top: LoadWeight::lazy(top), se: LoadWeight::lazy(se), on_rq: false };
        assert_eq!(up(0, 767).fair(40_000_000, &rules), 0);
        assert_eq!(up(1024, 767).fair(40_000_000, &rules), 53_333_330);
        // calc_delta_asym counts a group lighter than nice 0 as nice 0
        // (inverse 2^22): 10 ms x 767 = 7.67e9, large path: srr(7.67e9, 16)
        // = 117,035, x 2^22 then srr 16 = 117,035 x 64 = 7,490,240.
        assert_eq!(up(767, 767).asym(10_000_000, &rules), 7_490_240);
    }
}
