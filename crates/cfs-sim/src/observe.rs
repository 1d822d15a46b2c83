//! The engine's [`cfs_core::Observer`]: counts every scheduler decision by
//! its reason and turns the scheduler's own work (runqueues scanned by
//! wakeups and balance passes) into CPU time to charge.

use cfs_core::{Event, MigrateReason, Observer, PreemptReason, WakeReason};
use serde::Serialize;

/// Decision counts of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// try_to_wake_up calls that woke a sleeping task.
    pub wakeups: u64,
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
    /// Wakeup preemption checks that set need_resched on a busy CPU.
    pub preempt_wakeup: u64,
    /// Ticks (or hrticks) that found the slice used up.
    pub preempt_tick: u64,
    /// Wakeup preemptions held off by the last_preempter patch.
    pub preempt_held: u64,
    /// Picks where the next buddy beat the leftmost task.
    pub buddy_picks: u64,
    /// load_balance passes run.
    pub balance_passes: u64,
    /// Tasks moved by them.
    pub balance_moved: u64,
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
    track_cpus: bool,
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
            track_cpus: false,
            scan_ns,
            log: tracing::enabled!(target: "cfs_core", tracing::Level::TRACE),
        }
    }

    /// Also collect the CPUs every decision names, in [`SimObserver::touched`].
    pub fn tracking_cpus(mut self, on: bool) -> Self {
        self.track_cpus = on;
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
            | Event::Scan { cpu, .. } => t.push(cpu),
            Event::Exit { .. } => {}
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
        if reason == WakeReason::AlreadyQueued {
            return;
        }
        c.wakeups += 1;
        match reason {
            WakeReason::Affine => c.wake_affine += 1,
            WakeReason::AffineSync => {
                c.wake_affine += 1;
                c.wake_affine_sync += 1;
            }
            WakeReason::PassiveBalance => c.wake_passive += 1,
            WakeReason::IdleSibling => c.wake_idle_sibling += 1,
            WakeReason::Previous | WakeReason::AlreadyQueued | WakeReason::Balance => {}
        }
        if target != waker_cpu {
            c.wake_remote += 1;
        }
        // wake_affine read this CPU's and the previous CPU's load.
        self.charge(waker_cpu, 2);
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
                if preempt && reason == PreemptReason::VruntimeLead {
                    self.counters.preempt_wakeup += 1;
                } else if reason == PreemptReason::LastPreempterHold {
                    self.counters.preempt_held += 1;
                }
            }
            Event::PreemptCheck { curr: None, .. } => {}
            Event::TickPreempt { .. } => self.counters.preempt_tick += 1,
            Event::Pick { buddy, .. } => self.counters.buddy_picks += u64::from(buddy),
            Event::Migrate { reason, .. } => self.migrate(reason),
            Event::Balance { moved, .. } => {
                self.counters.balance_passes += 1;
                self.counters.balance_moved += moved as u64;
            }
            // Balance passes, fork placement and 2.6.32's wake balancing
            // report the runqueues they read.
            Event::Scan { cpu, cpus } => self.charge(cpu, cpus),
            Event::Fork { .. } => self.counters.forks += 1,
            Event::Exit { .. } => self.counters.exits += 1,
        }
    }
}
