//! CONFIG_NO_HZ: idle CPUs stop their scheduler tick, and one idle CPU, the
//! *idle load balancer* (ILB) owner, keeps ticking and runs the periodic
//! balance on behalf of the others.
//!
//! Ports `select_nohz_load_balancer`, `trigger_load_balance` and
//! `run_rebalance_domains` (2.6.26 bce7f793 sched.c:3613-3655, 3740-3779
//! and 3788-3840; 2.6.25 is the same code; 2.6.32 22763c5c sched.c:
//! 4658-4721, 4807-4847, 4861-4907 adds three things: the power-savings
//! choice of an ILB in a semi-idle package (`find_new_ilb`, which with
//! power savings off is the first CPU of the mask, as in 2.6.26; and the
//! owner handing the role to it); no SCHED_SOFTIRQ on a CPU
//! attached to no domain (`trigger_load_balance`); and a CPU going down
//! that neither joins the mask nor takes the role (`cpu_active`, see
//! [`crate::hotplug`])), and the scheduler's half of
//! `tick_nohz_stop_sched_tick` / `tick_nohz_restart_sched_tick`
//! (kernel/time/tick-sched.c): the tick stops when the idle loop finds
//! nothing to do, unless this CPU becomes or stays the ILB owner, and
//! restarts when the CPU leaves idle for `schedule()`.
//!
//! What it changes against every CPU ticking ([`crate::Config::nohz`] off,
//! the default):
//! - a tickless CPU's `cpu_load[]` is not decayed (update_cpu_load runs
//!   from the tick), so the balancer and wake_affine read its last busy
//!   values until it ticks again;
//! - an idle CPU is balanced only from the ILB owner's tick, and the ILB
//!   stops balancing for the others as soon as it finds work for itself
//!   (`need_resched()` in the loop), so at most the ILB pulls at a tick
//!   where it pulls at all;
//! - a CPU leaving nohz mode while the ILB is vacant kicks the first
//!   tickless CPU (`resched_cpu`; in 2.6.32 with power savings, the first of
//!   a semi-idle package, `find_new_ilb`), which wakes, finds
//!   nothing to run, and takes the ILB role on its way back to idle.
//!
//! Not modelled: timer-wheel deadlines (`get_next_timer_interrupt`; the
//! tick is stopped whatever timers are pending, since the model's timers
//! fire on their own), RCU's `rcu_needs_cpu`, and the jiffies-owner
//! hand-over (jiffies come from the caller's clock).

use crate::invariants::ApiCall;
use crate::observe::Observer;
use crate::sched::{SchedError, Scheduler};
use cfs_topology::{CpuId, CpuMask};

/// The `nohz` structure of sched.c: who balances for the tickless CPUs,
/// and which CPUs are in nohz mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Nohz {
    /// `nohz.load_balancer`: the ILB owner (-1 in the kernel = `None`).
    pub load_balancer: Option<CpuId>,
    /// `nohz.cpu_mask`: CPUs that stopped their tick, or tried to and
    /// became the ILB owner instead (the owner stays in the mask).
    pub cpu_mask: CpuMask,
}

impl<O: Observer> Scheduler<O> {
    /// The NO_HZ state (all empty when [`crate::Config::nohz`] is off).
    pub fn nohz(&self) -> &Nohz {
        &self.nohz
    }

    /// Whether `cpu`'s scheduler tick is stopped (`ts->tick_stopped`):
    /// [`Scheduler::tick`] must not be called for it until it leaves idle.
    pub fn tick_stopped(&self, cpu: CpuId) -> bool {
        self.rqs.get(cpu).is_some_and(|rq| rq.tick_stopped)
    }

    /// `tick_nohz_stop_sched_tick()` on `cpu`, called by the idle loop when
    /// it finds nothing to run and again on every interrupt exit while idle.
    /// With NO_HZ on, an idle CPU without need_resched stops its tick
    /// unless `select_nohz_load_balancer(1)` makes it (or keeps it) the ILB
    /// owner. Returns whether the tick is now stopped. A busy CPU, one
    /// with need_resched set, or NO_HZ off: nothing happens.
    pub fn nohz_stop_sched_tick(&mut self, now: u64, cpu: CpuId) -> Result<bool, SchedError> {
        self.check_online(cpu)?;
        self.advance(now);
        let stopped = self.tick_nohz_stop_sched_tick(cpu);
        self.finish(ApiCall::NohzIdle { now, cpu })?;
        Ok(stopped)
    }

    pub(crate) fn tick_nohz_stop_sched_tick(&mut self, cpu: CpuId) -> bool {
        let rq = &self.rqs[cpu];
        if !self.cfg.nohz || !rq.is_idle() || rq.need_resched {
            return rq.tick_stopped;
        }
        // The select is made only while the tick still runs; a stopped
        // tick stays stopped through later interrupts.
        if !rq.tick_stopped && !self.select_nohz_load_balancer(cpu, true) {
            self.rqs[cpu].tick_stopped = true;
        }
        self.rqs[cpu].tick_stopped
    }

    /// `tick_nohz_restart_sched_tick()`: the idle loop leaves idle for
    /// `schedule()`. Only a CPU whose tick was stopped gives up its nohz
    /// state here; the ILB owner (whose tick never stopped) keeps it until
    /// its first busy tick (see `trigger_load_balance`).
    pub(crate) fn tick_nohz_restart_sched_tick(&mut self, cpu: CpuId) {
        if !self.rqs[cpu].tick_stopped {
            return;
        }
        self.select_nohz_load_balancer(cpu, false);
        self.rqs[cpu].tick_stopped = false;
    }

    /// `select_nohz_load_balancer(stop_tick)` run on `cpu`. Entering nohz
    /// mode: join the mask; if every online CPU is now in it, nobody needs
    /// to balance (the owner gives up too); else take the vacant ILB role.
    /// Returns true when `cpu` is the ILB owner and must keep its tick.
    /// Leaving (`stop_tick = false`): leave the mask and the role.
    pub(crate) fn select_nohz_load_balancer(&mut self, cpu: CpuId, stop_tick: bool) -> bool {
        let nohz = &mut self.nohz;
        if !stop_tick {
            if nohz.cpu_mask.contains(cpu) {
                nohz.cpu_mask.clear(cpu);
                if nohz.load_balancer == Some(cpu) {
                    nohz.load_balancer = None;
                }
            }
            return false;
        }
        nohz.cpu_mask.set(cpu);
        self.rqs[cpu].in_nohz_recently = true;
        // "time for ilb owner also to sleep"
        if nohz.cpu_mask.weight() == self.online.weight() {
            if nohz.load_balancer == Some(cpu) {
                nohz.load_balancer = None;
            }
            return false;
        }
        match nohz.load_balancer {
            None => {
                nohz.load_balancer = Some(cpu);
                true
            }
            // 2.6.32 with power savings: the owner hands the role to a
            // tickless CPU of a semi-idle package when there is one
            // (22763c5c sched.c:4692-4708).
            Some(owner) if owner == cpu && self.rules.is_2_6_32() && self.cfg.power_savings.any() => {
                match self.find_new_ilb(cpu) {
                    Some(new) if new != cpu => {
                        self.nohz.load_balancer = None;
                        self.resched_cpu(new);
                        false
                    }
                    _ => true,
                }
            }
            Some(owner) => owner == cpu,
        }
    }

    /// `find_new_ilb(cpu)` (2.6.32, 22763c5c sched.c:4586-4629): the idle
    /// load balancer to nominate. With power savings on and at least two
    /// tickless CPUs, walk `cpu`'s domains from the lowest with
    /// SD_POWERSAVINGS_BALANCE up while they have it, and take the first
    /// tickless CPU of the first semi-idle group (some of its CPUs tickless,
    /// not all), so that a package already awake does the balancing and an
    /// idle one can sleep; otherwise the first tickless CPU. 2.6.25/26 take
    /// the first tickless CPU always.
    pub(crate) fn find_new_ilb(&self, cpu: CpuId) -> Option<CpuId> {
        let mask = self.nohz.cpu_mask;
        if !self.rules.is_2_6_32() || !self.cfg.power_savings.any() || mask.weight() < 2 {
            return mask.first();
        }
        let flag = cfs_topology::SdFlags::POWERSAVINGS_BALANCE;
        let doms = self.domains.of(cpu);
        let lowest = doms.iter().position(|d| d.flags.contains(flag));
        for d in lowest.map_or(&[][..], |i| &doms[i..]).iter().take_while(|d| d.flags.contains(flag)) {
            for g in d.groups.iter() {
                let tickless = mask.and(&g.cpus);
                if !tickless.is_empty() && tickless != g.cpus {
                    return tickless.first();
                }
            }
        }
        mask.first()
    }

    /// `trigger_load_balance(rq, cpu)` from `scheduler_tick`: the NO_HZ
    /// bookkeeping, then SCHED_SOFTIRQ (`run_rebalance_domains`) when
    /// `next_balance` is due.
    pub(crate) fn trigger_load_balance(&mut self, cpu: CpuId) {
        if self.cfg.nohz {
            let idle = self.rqs[cpu].idle_at_tick;
            // Busy after being in nohz mode recently: hand the ILB role on
            // (nominate a tickless CPU by kicking it: find_new_ilb).
            if self.rqs[cpu].in_nohz_recently && !idle {
                self.rqs[cpu].in_nohz_recently = false;
                if self.nohz.load_balancer == Some(cpu) {
                    self.nohz.cpu_mask.clear(cpu);
                    self.nohz.load_balancer = None;
                }
                if self.nohz.load_balancer.is_none() {
                    if let Some(ilb) = self.find_new_ilb(cpu) {
                        self.resched_cpu(ilb);
                    }
                }
            }
            let owner = self.nohz.load_balancer == Some(cpu);
            // The owner of an all-idle machine: time to stop ticking too.
            if idle && owner && self.nohz.cpu_mask.weight() == self.online.weight() {
                self.resched_cpu(cpu);
                return;
            }
            // Idle, in nohz mode, and someone else balances for it.
            if idle && !owner && self.nohz.cpu_mask.contains(cpu) {
                return;
            }
        }
        // 2.6.32 raises no SCHED_SOFTIRQ on a CPU attached to no domain
        // (isolcpus=), so such a CPU holding the ILB role balances for nobody
        // (22763c5c sched.c:4903-4906, 17d857be :4870-4873); 2.6.26 has no
        // such test (bce7f793 :3838-3839).
        let null_domain = self.rules.is_2_6_32() && self.domains.of(cpu).is_empty();
        if self.jiffies() >= self.rqs[cpu].next_balance && !null_domain {
            self.run_rebalance_domains(cpu);
        }
    }

    /// `run_rebalance_domains()` (the SCHED_SOFTIRQ handler): balance this
    /// CPU; the idle ILB owner then balances every other tickless CPU as
    /// CPU_IDLE, stopping as soon as it has work itself, and takes the
    /// earliest of their `next_balance` as its own.
    pub(crate) fn run_rebalance_domains(&mut self, cpu: CpuId) {
        let idle = self.rqs[cpu].idle_at_tick;
        self.rebalance_domains(cpu, idle);
        if !(self.cfg.nohz && idle && self.nohz.load_balancer == Some(cpu)) {
            return;
        }
        let mut others = self.nohz.cpu_mask;
        others.clear(cpu);
        // What it reads of APERF/MPERF for them is its own (crate::cpu_power).
        self.power.executing = Some(cpu);
        for b in others.iter() {
            if self.rqs[cpu].need_resched {
                break;
            }
            self.rebalance_domains(b, true);
            let theirs = self.rqs[b].next_balance;
            if self.rqs[cpu].next_balance > theirs {
                self.rqs[cpu].next_balance = theirs;
            }
        }
        self.power.executing = None;
    }
}
