//! Tasks and their scheduling entities (`struct sched_entity`).
//!
//! Group scheduling (CONFIG_FAIR_GROUP_SCHED) is not modelled: every entity
//! is a task and sits directly on its CPU's cfs_rq, so the kernel's
//! `for_each_sched_entity` walks are single steps.

use crate::schedstats::SchedStats;
use crate::weights::{LoadWeight, Policy};
use cfs_topology::{CpuId, CpuMask};
use core::fmt;

/// A task's identity. Ids are never reused within one [`crate::Scheduler`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub u32);

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{}", self.0)
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{}", self.0)
    }
}

/// `struct sched_entity` (2.6.26 include/linux/sched.h); its schedstats are
/// in [`SchedStats`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedEntity {
    /// The task's weight and inverse.
    pub load: LoadWeight,
    /// Virtual runtime, ns of nice-0 time; wraps.
    pub vruntime: u64,
    /// rq clock when it last started running or was last accounted.
    pub exec_start: u64,
    /// Total real ns run.
    pub sum_exec_runtime: u64,
    /// `sum_exec_runtime` when last picked.
    pub prev_sum_exec_runtime: u64,
    /// `sum_exec_runtime` stamped when this task (as curr) saw a wakeup;
    /// 0 = no stamp (2.6.25 4ae7d5cefd4).
    pub last_wakeup: u64,
    /// EWMA of the runtime between a wakeup stamp and sleeping.
    pub avg_overlap: u64,
    /// Queued on a cfs_rq (including as its curr).
    pub on_rq: bool,
    /// 2.6.32: EWMA of the runtime between the wakeups this task does
    /// (starts at wakeup_granularity on fork; ADAPTIVE_GRAN reads it).
    pub avg_wakeup: u64,
    /// 2.6.32: EWMA of the length of its runs.
    pub avg_running: u64,
    /// 2.6.32: sum_exec_runtime at its last wakeup.
    pub start_runtime: u64,
    /// `patches::Waker`: the entity this one last woke while current.
    pub waker: Option<TaskId>,
    /// `patches::LastPreempter`: the last wakee that preempted (or tried to).
    pub last_preempter: Option<TaskId>,
    /// The CONFIG_SCHEDSTATS fields: waits, sleeps, longest runs.
    pub stats: SchedStats,
    /// Position in the cfs_rq `tasks` list: larger = enqueued later
    /// (list_add puts new entries at the head).
    pub(crate) group_seq: u64,
    /// The tree key while queued and not curr: (vruntime - base, tie-break).
    pub(crate) tree_key: Option<(i64, u64)>,
}

/// Where a task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// Queued on `cpu`'s runqueue, waiting.
    Queued,
    /// The current task of its CPU.
    Running,
    /// Asleep (dequeued), waiting for a wakeup.
    Sleeping,
    /// Exited; kept only for its statistics.
    Dead,
}

/// The kernel's `p->state` as `set_current_state` sets it, for a task that
/// is still on its runqueue (see [`crate::Scheduler::set_current_state`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "fuzzing", derive(arbitrary::Arbitrary))]
pub enum CurrentState {
    /// TASK_RUNNING: a wakeup has nothing to do (try_to_wake_up returns at
    /// its state test), and schedule() keeps the task queued.
    #[default]
    Running,
    /// TASK_INTERRUPTIBLE, set before a wait loop tests its condition: a
    /// wakeup now takes try_to_wake_up's `out_running` path (the
    /// preemption check, then TASK_RUNNING), and schedule() without one
    /// dequeues the task.
    Interruptible,
}

/// Everything the scheduler keeps about a task.
#[derive(Clone, Debug)]
pub struct Task {
    /// The id.
    pub id: TaskId,
    /// The entity.
    pub se: SchedEntity,
    /// Nice level, -20..=19.
    pub nice: i32,
    /// Policy.
    pub policy: Policy,
    /// `cpus_allowed`.
    pub allowed: CpuMask,
    /// `task_cpu(p)`: the CPU whose runqueue it is (or was last) on.
    pub cpu: CpuId,
    /// Life state.
    pub state: TaskState,
    /// Number of CPU changes.
    pub nr_migrations: u64,
    /// TIF_NEED_RESCHED while the task is not current (the current task's
    /// flag is [`crate::rq::Rq::need_resched`]). Set when a reschedule was
    /// raised on the task during the schedule() that switched it out, and
    /// acted on when it is switched back in (see `do_schedule`).
    pub need_resched: bool,
    /// `p->state` while the task is queued or running. Only
    /// [`crate::Scheduler::set_current_state`] makes it
    /// [`CurrentState::Interruptible`]; a wakeup, a sleep or an exit makes
    /// it [`CurrentState::Running`] again.
    pub current_state: CurrentState,
    /// The user id (`p->user`), which names the task's group under group
    /// scheduling ([`crate::group`]).
    pub uid: u32,
    /// Its task group: `task_group(p)`, None without group scheduling.
    pub tg: Option<crate::group::GroupId>,
}

/// What a caller specifies for a new task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "fuzzing", derive(arbitrary::Arbitrary))]
pub struct TaskParams {
    /// Nice level (clamped to -20..=19).
    pub nice: i32,
    /// Policy.
    pub policy: Policy,
    /// Allowed CPUs; empty means "all CPUs of the host".
    pub allowed: CpuMask,
    /// The user id; None: user 0 for a spawned task, the parent's for a
    /// forked one. Under group scheduling a fork that names another user
    /// is the child's setuid before it first runs: it starts in that
    /// user's group.
    pub uid: Option<u32>,
}

impl Default for TaskParams {
    fn default() -> Self {
        TaskParams { nice: 0, policy: Policy::Normal, allowed: CpuMask::empty(), uid: None }
    }
}

impl TaskParams {
    /// Nice 0, SCHED_NORMAL, all CPUs.
    pub fn normal() -> Self {
        Self::default()
    }

    /// With a nice level.
    pub fn nice(mut self, nice: i32) -> Self {
        self.nice = nice;
        self
    }

    /// With a policy.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// With an affinity mask.
    pub fn allowed(mut self, mask: CpuMask) -> Self {
        self.allowed = mask;
        self
    }

    /// As user `uid`.
    pub fn uid(mut self, uid: u32) -> Self {
        self.uid = Some(uid);
        self
    }
}

/// `update_avg` (2.6.26 sched_fair.c:642): `avg += (sample - avg) / 8`,
/// computed as a signed difference shifted right (arithmetic shift, so a
/// falling average rounds towards minus infinity like the kernel's `>> 3`
/// on an `s64`).
pub fn update_avg(avg: &mut u64, sample: u64) {
    let diff = sample.wrapping_sub(*avg) as i64;
    *avg = avg.wrapping_add((diff >> 3) as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_avg_is_an_eighth_ewma() {
        let mut a = 0;
        update_avg(&mut a, 800);
        assert_eq!(a, 100);
        update_avg(&mut a, 100);
        assert_eq!(a, 100);
        // Falling: diff = -100, -100 >> 3 = -13 (arithmetic shift rounds down).
        update_avg(&mut a, 0);
        assert_eq!(a, 87);
    }

    #[test]
    fn task_ids_print_as_t_and_the_number() {
        // The form every decision log and error message uses.
        assert_eq!(alloc::format!("{}", TaskId(7)), "T7");
        assert_eq!(alloc::format!("{:?}", TaskId(12)), "T12");
        assert_eq!(alloc::format!("{:?}", Some(TaskId(0))), "Some(T0)");
    }
}
