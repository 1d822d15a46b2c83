//! The engine's [`cfs_core::Observer`]: counts every scheduler decision by
//! its reason and turns the scheduler's own work (runqueues scanned by
//! wakeups and balance passes) into CPU time to charge.

use cfs_core::{BalanceVerdict, CpuIdleType, Event, MigrateReason, Observer, PreemptReason, TaskId, WakeReason};
use serde::Serialize;

/// Decision counts of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// try_to_wake_up calls that woke a sleeping task.
    pub wakeups: u64,
    /// try_to_wake_up calls that found the task still on its runqueue
    /// (`out_running`: only the preemption check), as a wakeup racing a
    /// task on its way to sleep does.
    pub wake_running: u64,
    /// ... placed on the waker's CPU by wake_affine (either test).
    pub wake_affine: u64,
    /// ... of which by the sync + avg_overlap shortcut.
    pub wake_affine_sync: u64,
    /// ... placed by SD_WAKE_BALANCE passive balancing.
    pub wake_passive: u64,
    /// ... moved to an idle sibling by wake_idle.
    pub wake_idle_sibling: u64,
    /// Wakeups whose target CPU is not the waking CPU.
    pub wake_remote: u64,
    /// Task CPU changes, all reasons.
    pub migrations: u64,
    /// ... at wakeup.
    pub mig_wakeup: u64,
    /// ... at fork.
    pub mig_fork: u64,
    /// ... by periodic load balancing.
    pub mig_periodic: u64,
    /// ... by newly-idle balancing.
    pub mig_newidle: u64,
    /// ... by active balancing.
    pub mig_active: u64,
    /// ... forced by affinity changes.
    pub mig_affinity: u64,
    /// ... off a CPU that went down (`migrate_live_tasks`).
    pub mig_hotplug: u64,
    /// Tasks on a CPU going down that allowed no online CPU, and now allow
    /// every CPU (the kernel's "no longer affine to cpuN").
    pub affinity_broken: u64,
    /// Wakeup preemption checks that set need_resched on a busy CPU.
    pub preempt_wakeup: u64,
    /// Ticks (or hrticks) that found the slice used up.
    pub preempt_tick: u64,
    /// Wakeup preemptions held off by the last_preempter patch.
    pub preempt_held: u64,
    /// Picks where the next buddy beat the leftmost task.
    pub buddy_picks: u64,
    /// load_balance passes run (periodic and newly idle, one per domain
    /// level visited).
    pub balance_passes: u64,
    /// ... of which periodic (rebalance_domains from a tick); the rest are
    /// newly idle (idle_balance).
    pub balance_periodic: u64,
    /// ... that moved tasks.
    pub balance_pulled: u64,
    /// Tasks moved by them.
    pub balance_moved: u64,
    /// Passes that found a busiest queue and moved nothing from it (its
    /// tasks running, cache-hot, too heavy or pinned): the kernel's
    /// `lb_failed`.
    pub balance_failed: u64,
    /// Tasks created (including the initial ones).
    pub forks: u64,
    /// Tasks that exited.
    pub exits: u64,
}

/// Collects counters and scheduler-overhead charges.
#[derive(Debug)]
pub struct SimObserver {
    /// The counts.
    pub counters: Counters,
    /// (cpu, ns) of scheduler work to charge, drained by the engine.
    pub charges: Vec<(usize, u64)>,
    /// With [`SimObserver::tracking_cpus`]: every CPU a decision named
    /// since the engine last took the list (with repeats). Every runqueue a
    /// scheduler call changes is named by one of its decisions (a
    /// migration's both ends, a wakeup's target, a fork's CPU) or is the
    /// calling CPU, so the engine re-reads per-CPU state (the hrtick) of
    /// these CPUs only.
    pub touched: Vec<usize>,
    /// With [`SimObserver::recording_moves`]: every task the balancer (periodic,
    /// newly idle or active) or an affinity change moved since the engine
    /// last took the list, as (time, task, from, to, reason), for the trace.
    /// Wakeup and fork placements are left out: the trace's wakeup flows
    /// and slices already show them.
    pub moves: Vec<(u64, TaskId, usize, usize, MigrateReason)>,
    track_cpus: bool,
    record_moves: bool,
    scan_ns: f64,
    log: bool,
}

impl SimObserver {
    /// An observer for a machine with these domains; `scan_ns` is the
    /// (clock-scaled) cost per runqueue read.
    pub fn new(scan_ns: f64) -> Self {
        SimObserver {
            counters: Counters::default(),
            charges: Vec::new(),
            touched: Vec::new(),
            moves: Vec::new(),
            track_cpus: false,
            record_moves: false,
            scan_ns,
            log: tracing::enabled!(target: "cfs_core", tracing::Level::TRACE),
        }
    }

    /// Also collect the CPUs every decision names, in [`SimObserver::touched`].
    pub fn tracking_cpus(mut self, on: bool) -> Self {
        self.track_cpus = on;
        self
    }

    /// Keeps the balancer's and affinity's moves in [`SimObserver::moves`]
    /// (for a trace).
    pub fn recording_moves(mut self, on: bool) -> Self {
        self.record_moves = on;
        self
    }

    fn track(&mut self, event: &Event) {
        let t = &mut self.touched;
        match *event {
            Event::Wake { waker_cpu, prev_cpu, target, .. } => t.extend([waker_cpu, prev_cpu, target]),
            Event::Migrate { from, to, .. } => t.extend([from, to]),
            Event::PreemptCheck { cpu, .. }
            | Event::TickPreempt { cpu, .. }
            | Event::Pick { cpu, .. }
            | Event::Balance { cpu, .. }
            | Event::Fork { cpu, .. }
            | Event::Scan { cpu, .. }
            | Event::Hotplug { cpu, .. } => t.push(cpu),
            Event::Exit { .. } | Event::AffinityBroken { .. } => {}
        }
    }

    fn charge(&mut self, cpu: usize, cpus_read: u32) {
        let ns = crate::dist::round_u64(self.scan_ns * cpus_read as f64);
        if ns > 0 {
            self.charges.push((cpu, ns));
        }
    }

    fn wake(&mut self, waker_cpu: usize, target: usize, reason: WakeReason) {
        let c = &mut self.counters;
        match reason {
            // out_running: the task was still queued, nothing to place.
            WakeReason::AlreadyQueued => {
                c.wake_running += 1;
                return;
            }
            // try_to_wake_up's state test: nothing happened.
            WakeReason::AlreadyRunning => return,
            WakeReason::Affine => c.wake_affine += 1,
            WakeReason::AffineSync => {
                c.wake_affine += 1;
                c.wake_affine_sync += 1;
            }
            WakeReason::PassiveBalance => c.wake_passive += 1,
            WakeReason::IdleSibling => c.wake_idle_sibling += 1,
            WakeReason::Previous | WakeReason::Balance => {}
        }
        c.wakeups += 1;
        if target != waker_cpu {
            c.wake_remote += 1;
        }
        // The loads wake_affine read arrive as their own `Scan`.
    }

    fn migrate(&mut self, reason: MigrateReason) {
        let c = &mut self.counters;
        c.migrations += 1;
        match reason {
            MigrateReason::Wakeup => c.mig_wakeup += 1,
            MigrateReason::Fork => c.mig_fork += 1,
            MigrateReason::Periodic => c.mig_periodic += 1,
            MigrateReason::NewIdle => c.mig_newidle += 1,
            MigrateReason::Active => c.mig_active += 1,
            MigrateReason::Affinity => c.mig_affinity += 1,
            MigrateReason::Hotplug => c.mig_hotplug += 1,
        }
    }
}

impl Observer for SimObserver {
    fn event(&mut self, now: u64, event: &Event) {
        if self.log {
            cfs_core::TracingObserver.event(now, event);
        }
        if self.track_cpus {
            self.track(event);
        }
        match *event {
            Event::Wake { waker_cpu, target, reason, .. } => self.wake(waker_cpu, target, reason),
            Event::PreemptCheck { curr: Some(_), preempt, reason, .. } => {
                if preempt && matches!(reason, PreemptReason::VruntimeLead | PreemptReason::SmallOverlap) {
                    self.counters.preempt_wakeup += 1;
                } else if reason == PreemptReason::LastPreempterHold {
                    self.counters.preempt_held += 1;
                }
            }
            Event::PreemptCheck { curr: None, .. } => {}
            Event::TickPreempt { .. } => self.counters.preempt_tick += 1,
            Event::Pick { buddy, .. } => self.counters.buddy_picks += u64::from(buddy),
            Event::Migrate { task, from, to, reason } => {
                self.migrate(reason);
                if self.record_moves && !matches!(reason, MigrateReason::Wakeup | MigrateReason::Fork) {
                    self.moves.push((now, task, from, to, reason));
                }
            }
            Event::Balance { moved, verdict, idle, .. } => {
                self.counters.balance_passes += 1;
                self.counters.balance_periodic += u64::from(idle != CpuIdleType::NewlyIdle);
                self.counters.balance_pulled += u64::from(verdict == BalanceVerdict::Pulled);
                self.counters.balance_moved += moved as u64;
                self.counters.balance_failed +=
                    u64::from(matches!(verdict, BalanceVerdict::Failed | BalanceVerdict::AllPinned));
            }
            // Balance passes, fork placement and 2.6.32's wake balancing
            // report the runqueues they read.
            Event::Scan { cpu, cpus } => self.charge(cpu, cpus),
            Event::Fork { .. } => self.counters.forks += 1,
            Event::Exit { .. } => self.counters.exits += 1,
            Event::Hotplug { .. } => {}
            Event::AffinityBroken { .. } => self.counters.affinity_broken += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cfs_core::{CpuIdleType, TaskId};
    use cfs_topology::DomainLevel;

    fn wake(waker_cpu: usize, target: usize, reason: WakeReason) -> Event {
        Event::Wake { task: TaskId(1), waker_cpu, prev_cpu: 3, target, sync: true, reason }
    }

    fn balance(level: DomainLevel, moved: u32, idle: CpuIdleType, verdict: BalanceVerdict) -> Event {
        Event::Balance { cpu: 2, level, moved, idle, verdict }
    }

    fn check(cpu: usize, curr: Option<u32>, preempt: bool, reason: PreemptReason) -> Event {
        Event::PreemptCheck { cpu, curr: curr.map(TaskId), wakee: TaskId(2), preempt, reason }
    }

    /// Each wakeup counts once, by its reason; the sync shortcut is also an
    /// affine wakeup; a wakee that was still queued is no wakeup at all.
    /// Every counted one counts as remote when placed elsewhere. A `Wake`
    /// itself is charged nothing: the runqueues the placement read come as
    /// `Scan`s (2 x 130 ns here).
    #[test]
    fn wakeups_count_by_reason_and_charge_only_their_scans() {
        let mut o = SimObserver::new(130.0);
        for (cpu, target, reason) in [
            (0, 0, WakeReason::Affine),
            (1, 1, WakeReason::AffineSync),
            (2, 3, WakeReason::PassiveBalance),
            (0, 2, WakeReason::IdleSibling),
            (0, 3, WakeReason::Previous),
            (1, 3, WakeReason::Balance),
            (2, 2, WakeReason::AlreadyQueued),
        ] {
            o.event(0, &wake(cpu, target, reason));
        }
        assert!(o.charges.is_empty());
        let c = &o.counters;
        assert_eq!(
            (c.wakeups, c.wake_affine, c.wake_affine_sync, c.wake_passive, c.wake_idle_sibling, c.wake_remote),
            (6, 2, 1, 1, 1, 4)
        );
        assert_eq!(c.wake_running, 1);
        assert_eq!(c.migrations, 0);
        o.event(0, &Event::Scan { cpu: 1, cpus: 2 });
        assert_eq!(o.charges, [(1, 260)]);
    }

    /// Migrations count by reason and in total.
    #[test]
    fn migrations_count_by_reason() {
        let mut o = SimObserver::new(100.0);
        let reasons = [
            MigrateReason::Wakeup,
            MigrateReason::Wakeup,
            MigrateReason::Fork,
            MigrateReason::Periodic,
            MigrateReason::NewIdle,
            MigrateReason::Active,
            MigrateReason::Affinity,
            MigrateReason::Hotplug,
            MigrateReason::Hotplug,
        ];
        for reason in reasons {
            o.event(0, &Event::Migrate { task: TaskId(1), from: 0, to: 1, reason });
        }
        o.event(0, &Event::AffinityBroken { task: TaskId(1), cpu: 0 });
        let c = &o.counters;
        assert_eq!(
            (c.migrations, c.mig_wakeup, c.mig_fork, c.mig_periodic, c.mig_newidle, c.mig_active, c.mig_affinity),
            (9, 2, 1, 1, 1, 1, 1)
        );
        assert_eq!((c.mig_hotplug, c.affinity_broken), (2, 1));
        assert!(o.charges.is_empty());
    }

    /// A wakeup preemption is a check on a busy CPU that preempted for the
    /// vruntime lead or (wakeup-overlap) a small overlap; one held off by
    /// last_preempter counts apart; checks on an idle CPU and other outcomes
    /// count nothing.
    #[test]
    fn preemptions_picks_balances_forks_and_exits() {
        let mut o = SimObserver::new(100.0);
        for e in [
            check(0, Some(1), true, PreemptReason::VruntimeLead),
            check(0, Some(1), false, PreemptReason::VruntimeLead),
            check(0, Some(1), true, PreemptReason::Fork),
            check(0, Some(1), true, PreemptReason::BatchWakee),
            check(0, Some(1), false, PreemptReason::LastPreempterHold),
            check(2, Some(3), true, PreemptReason::SmallOverlap),
            check(0, None, true, PreemptReason::VruntimeLead),
            check(0, None, false, PreemptReason::LastPreempterHold),
            Event::TickPreempt { cpu: 1, curr: TaskId(1), ran: 5, ideal: 4 },
            Event::Pick { cpu: 0, prev: None, next: Some(TaskId(1)), buddy: true },
            Event::Pick { cpu: 0, prev: None, next: Some(TaskId(1)), buddy: false },
            balance(DomainLevel::Mc, 3, CpuIdleType::Idle, BalanceVerdict::Pulled),
            balance(DomainLevel::Cpu, 0, CpuIdleType::NewlyIdle, BalanceVerdict::Failed),
            balance(DomainLevel::Mc, 0, CpuIdleType::NewlyIdle, BalanceVerdict::AllPinned),
            balance(DomainLevel::Mc, 0, CpuIdleType::Idle, BalanceVerdict::NoBusiestGroup),
            balance(DomainLevel::Mc, 0, CpuIdleType::NotIdle, BalanceVerdict::NotBalancer),
            Event::Fork { parent: None, child: TaskId(4), cpu: 1 },
            Event::Exit { task: TaskId(4) },
        ] {
            o.event(0, &e);
        }
        let c = &o.counters;
        assert_eq!((c.preempt_wakeup, c.preempt_held, c.preempt_tick, c.buddy_picks), (2, 1, 1, 1));
        // Every pass counts; three are periodic (Idle or NotIdle: the first,
        // fourth and fifth) and one pulled (3 tasks); the two that found a
        // busiest queue and moved nothing (failed, all pinned) count as failed.
        assert_eq!((c.balance_passes, c.balance_periodic, c.balance_pulled), (5, 3, 1));
        assert_eq!((c.balance_moved, c.balance_failed), (3, 2));
        assert_eq!((c.forks, c.exits), (1, 1));
        assert!(o.charges.is_empty());
    }

    /// Scans are charged per runqueue read, rounded to the ns; a scan that
    /// costs nothing leaves no charge.
    #[test]
    fn scans_are_charged_per_runqueue() {
        let mut o = SimObserver::new(78.4);
        o.event(0, &Event::Scan { cpu: 5, cpus: 10 });
        o.event(0, &Event::Scan { cpu: 6, cpus: 0 });
        assert_eq!(o.charges, [(5, 784)]);
        let mut free = SimObserver::new(0.0);
        free.event(0, &Event::Scan { cpu: 1, cpus: 8 });
        free.event(0, &wake(0, 1, WakeReason::Affine));
        assert!(free.charges.is_empty());
    }

    /// With tracking on, each decision names the CPUs it touched: a
    /// wakeup its waker's, previous and target CPUs, a migration both ends,
    /// the rest their one CPU, an exit none.
    #[test]
    fn tracking_collects_the_cpus_decisions_name() {
        let events = [
            wake(0, 2, WakeReason::Affine),
            Event::Migrate { task: TaskId(1), from: 4, to: 5, reason: MigrateReason::Periodic },
            check(6, Some(1), false, PreemptReason::IdleCpu),
            Event::TickPreempt { cpu: 7, curr: TaskId(1), ran: 5, ideal: 4 },
            Event::Pick { cpu: 8, prev: None, next: None, buddy: false },
            Event::Balance {
                cpu: 9,
                level: DomainLevel::Mc,
                moved: 0,
                idle: CpuIdleType::NotIdle,
                verdict: BalanceVerdict::NoBusiestGroup,
            },
            Event::Fork { parent: None, child: TaskId(4), cpu: 10 },
            Event::Scan { cpu: 11, cpus: 2 },
            Event::Exit { task: TaskId(4) },
        ];
        let mut on = SimObserver::new(1.0).tracking_cpus(true);
        let mut off = SimObserver::new(1.0);
        for e in &events {
            on.event(0, e);
            off.event(0, e);
        }
        assert_eq!(on.touched, [0, 3, 2, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert!(off.touched.is_empty());
        assert_eq!(on.counters, off.counters);
    }
}
