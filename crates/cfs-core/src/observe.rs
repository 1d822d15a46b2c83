//! Observation: every decision the scheduler takes, with its reason.
//!
//! Implement [`Observer`] to log, count or trace decisions; `()` ignores
//! them at no cost. With the `tracing` feature, `TracingObserver` emits
//! each as a `tracing` event at TRACE level.

use crate::balance::CpuIdleType;
use crate::entity::TaskId;
use cfs_topology::{CpuId, DomainLevel};

/// Why a wakeup went where it went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WakeReason {
    /// wake_affine pulled it to the waking CPU.
    Affine,
    /// wake_affine's sync + avg_overlap shortcut pulled it.
    AffineSync,
    /// SD_WAKE_BALANCE passive balancing pulled it to the waking CPU.
    PassiveBalance,
    /// wake_idle moved it to an idle CPU near its previous one.
    IdleSibling,
    /// It stays on its previous CPU.
    Previous,
    /// It was still queued (or running) in a sleep state, between
    /// set_current_state and schedule(): try_to_wake_up's `out_running`,
    /// nothing to place.
    AlreadyQueued,
    /// It was queued or running as TASK_RUNNING: try_to_wake_up returned
    /// at its state test and did nothing.
    AlreadyRunning,
    /// 2.6.32 balance-on-wake picked the idlest CPU.
    Balance,
}

/// Why a task changed CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MigrateReason {
    /// Placement at wakeup.
    Wakeup,
    /// Placement at fork (sched_balance_self / SD_BALANCE_FORK).
    Fork,
    /// Periodic load balancing (rebalance_domains).
    Periodic,
    /// Newly-idle balancing (idle_balance).
    NewIdle,
    /// Active balancing (the migration thread pushing a task).
    Active,
    /// An affinity change forced it off its CPU.
    Affinity,
    /// Its CPU went down (`migrate_live_tasks`, see [`crate::hotplug`]).
    Hotplug,
}

/// Why a wakeup did or did not preempt the current task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PreemptReason {
    /// The CPU was idle.
    IdleCpu,
    /// wakeup_preempt_entity returned 1: the wakee is more than
    /// wakeup_gran behind in vruntime.
    VruntimeLead,
    /// A new child: task_new_fair always reschedules.
    Fork,
    /// Not preempted: the wakee is SCHED_BATCH.
    BatchWakee,
    /// Not preempted: WAKEUP_PREEMPT is off.
    FeatureOff,
    /// Not preempted: the lead is within the granularity.
    WithinGranularity,
    /// Not preempted: `patches::LastPreempter` held it off.
    LastPreempterHold,
    /// Not preempted: the wakee is the current task.
    SelfWake,
    /// A reschedule was already pending (2.6.32 returns early).
    AlreadyPending,
    /// A sync wakeup between two tasks whose avg_overlap is below
    /// migration_cost (`patches::WakeupOverlap`, 15afe09bf49).
    SmallOverlap,
}

/// How a load_balance pass ended. The kernel's CONFIG_SCHEDSTATS counts
/// the same cases per domain and idle type in `/proc/schedstat`
/// (`lb_count`, `lb_balanced`, `lb_nobusyg`, `lb_nobusyq`, `lb_failed`,
/// `lb_gained`; 2.6.26 sched.c:3262-3392 and :3400-3470).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BalanceVerdict {
    /// Tasks moved.
    Pulled,
    /// Another CPU of this CPU's group balances this domain and the ones
    /// above it (find_busiest_group's `*balance = 0`: the group's first
    /// idle CPU, or its first CPU, balances for it). rebalance_domains
    /// stops its walk here.
    NotBalancer,
    /// find_busiest_group found no group worth pulling from: the domain
    /// counts as balanced (`lb_nobusyg`).
    NoBusiestGroup,
    /// The busiest group had no queue to pull from: every one runs a
    /// single task heavier than the imbalance (`lb_nobusyq`).
    NoBusiestQueue,
    /// A busiest queue was found and nothing moved: its tasks were running,
    /// cache-hot or too heavy for the imbalance (`lb_failed`; a periodic
    /// pass counts it in `nr_balance_failed`, and after enough of them
    /// starts active balancing).
    Failed,
    /// Every queued task of every busiest queue tried may not run on this
    /// CPU (its CPU affinity excludes it).
    AllPinned,
}

/// A decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A wakeup's placement.
    Wake {
        /// Woken task.
        task: TaskId,
        /// CPU that ran try_to_wake_up.
        waker_cpu: CpuId,
        /// The task's previous CPU.
        prev_cpu: CpuId,
        /// Chosen CPU.
        target: CpuId,
        /// The sync hint after the SYNC_WAKEUPS gate.
        sync: bool,
        /// Why.
        reason: WakeReason,
    },
    /// A preemption check at wakeup or fork.
    PreemptCheck {
        /// CPU.
        cpu: CpuId,
        /// The current task (None = idle).
        curr: Option<TaskId>,
        /// The woken/new task.
        wakee: TaskId,
        /// Whether need_resched was set.
        preempt: bool,
        /// Why.
        reason: PreemptReason,
    },
    /// A tick found the slice used up.
    TickPreempt {
        /// CPU.
        cpu: CpuId,
        /// The current task.
        curr: TaskId,
        /// ns run in this slice.
        ran: u64,
        /// sched_slice.
        ideal: u64,
    },
    /// A context switch decision.
    Pick {
        /// CPU.
        cpu: CpuId,
        /// Previous task (None = idle).
        prev: Option<TaskId>,
        /// Next task (None = idle).
        next: Option<TaskId>,
        /// The next buddy won over the leftmost.
        buddy: bool,
    },
    /// A task moved CPU.
    Migrate {
        /// Task.
        task: TaskId,
        /// From.
        from: CpuId,
        /// To.
        to: CpuId,
        /// Why.
        reason: MigrateReason,
    },
    /// A load_balance pass ran (periodic, from rebalance_domains, or newly
    /// idle, from idle_balance): one per domain level visited, whatever
    /// it found. Active balancing by the migration thread reports only its
    /// `Migrate`.
    Balance {
        /// Balancing CPU.
        cpu: CpuId,
        /// Domain level.
        level: DomainLevel,
        /// Tasks moved.
        moved: u32,
        /// What the balancing CPU was doing (the kernel's `cpu_idle_type`).
        idle: CpuIdleType,
        /// How the pass ended.
        verdict: BalanceVerdict,
    },
    /// A task was created.
    Fork {
        /// Parent (None for a boot-time spawn).
        parent: Option<TaskId>,
        /// Child.
        child: TaskId,
        /// CPU it was placed on.
        cpu: CpuId,
    },
    /// Scheduler work that visits CPUs: a wakeup reading the previous and
    /// this CPU's load for wake_affine (2, before the wakeup's `Wake`;
    /// none when the wakee is placed without them: it may not run on the
    /// waking CPU, or on 2.6.32 has no affine domain), a wakeup or
    /// fork placement scanning a domain (e.g. 2.6.32-rc1's SD_PREFER_LOCAL
    /// sums over whole spans) or a balance pass scanning groups. Drivers
    /// price scheduler overhead per CPU visited.
    Scan {
        /// The CPU doing the work.
        cpu: CpuId,
        /// How many runqueues it looked at.
        cpus: u32,
    },
    /// A task exited.
    Exit {
        /// Task.
        task: TaskId,
    },
    /// A CPU went down or came up (see [`crate::hotplug`]).
    Hotplug {
        /// The CPU.
        cpu: CpuId,
        /// Whether it is now online.
        online: bool,
    },
    /// A task on a CPU going down allowed no online CPU: its mask now
    /// holds every CPU ("process P (comm) no longer affine to cpuN").
    AffinityBroken {
        /// Task.
        task: TaskId,
        /// The CPU that went down.
        cpu: CpuId,
    },
}

/// Receives every decision.
pub trait Observer {
    /// Called once per decision with the time it was taken.
    fn event(&mut self, now: u64, event: &Event);
}

impl Observer for () {
    #[inline]
    fn event(&mut self, _: u64, _: &Event) {}
}

/// Keeps every decision with its time, in order.
impl Observer for alloc::vec::Vec<(u64, Event)> {
    fn event(&mut self, now: u64, event: &Event) {
        self.push((now, *event));
    }
}

impl<F: FnMut(u64, &Event)> Observer for F {
    fn event(&mut self, now: u64, event: &Event) {
        self(now, event)
    }
}

/// Sends every decision to `tracing` at TRACE level (target `cfs_core`).
#[cfg(feature = "tracing")]
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingObserver;

#[cfg(feature = "tracing")]
impl Observer for TracingObserver {
    fn event(&mut self, now: u64, event: &Event) {
        tracing::trace!(target: "cfs_core", now, ?event);
    }
}

#[cfg(test)]
mod tests {
    use super::Event;
    use crate::config::Config;
    use crate::entity::{TaskId, TaskParams};
    use crate::sched::Scheduler;
    use alloc::vec;
    use alloc::vec::Vec;
    use cfs_topology::{KernelVersion, SchedDomains};

    #[test]
    fn a_closure_is_an_observer_and_sees_each_decision_with_its_time() {
        // Two boot-time spawns on one CPU: each is reported once, as a Fork
        // without a parent, at the time the caller passed in.
        let v = KernelVersion::V2_6_26;
        let domains = SchedDomains { version: v, per_cpu: vec![vec![]] };
        let mut seen: Vec<(u64, Event)> = Vec::new();
        {
            let mut s = Scheduler::with_observer(Config::new(v, 1), domains, |now: u64, e: &Event| {
                seen.push((now, *e));
            })
            .unwrap();
            s.spawn(5, 0, TaskParams::normal()).unwrap();
            s.spawn(7, 0, TaskParams::normal()).unwrap();
        }
        let forks: Vec<(u64, TaskId)> = seen
            .iter()
            .filter_map(|(t, e)| match e {
                Event::Fork { parent: None, child, cpu: 0 } => Some((*t, *child)),
                _ => None,
            })
            .collect();
        assert_eq!(forks, vec![(5, TaskId(0)), (7, TaskId(1))]);
    }

    #[test]
    fn a_swapped_in_recorder_sees_only_what_follows_and_the_state_carries_over() {
        // Spawn A unobserved, then attach a Vec: it records B's spawn only, and the
        // scheduler still knows both tasks (B gets the next id, 1).
        let v = KernelVersion::V2_6_26;
        let domains = SchedDomains { version: v, per_cpu: vec![vec![]] };
        let mut s = Scheduler::new(Config::new(v, 1), domains).unwrap();
        s.spawn(5, 0, TaskParams::normal()).unwrap();
        let (mut s, ()) = s.swap_observer(Vec::<(u64, Event)>::new());
        s.spawn(7, 0, TaskParams::normal()).unwrap();
        assert_eq!(s.tasks().len(), 2);
        let forks: Vec<(u64, TaskId)> = s
            .observer()
            .iter()
            .filter_map(|(t, e)| match e {
                Event::Fork { child, .. } => Some((*t, *child)),
                _ => None,
            })
            .collect();
        assert_eq!(forks, vec![(7, TaskId(1))]);
    }
}
