//! CPU hotplug: a CPU going down and coming back up (`echo 0 >
//! /sys/devices/system/cpu/cpuN/online`), the scheduler's half of
//! `kernel/cpu.c`'s `_cpu_down` and `_cpu_up`.
//!
//! Taking CPU N down, in the kernel's order (2.6.26 bce7f793: cpu.c:192-270,
//! sched.c:5723-5810, 6064-6160, 7481-7520; 2.6.32 22763c5c has the same
//! steps, with `cpu_active_map` cleared first):
//!
//! 1. `_cpu_down` refuses the last online CPU (`-EBUSY`) and one already
//!    down (`-EINVAL`).
//! 2. `CPU_DOWN_PREPARE`: `update_sched_domains` detaches every CPU from its
//!    domains, so nothing balances until they are rebuilt (step 6; in this
//!    model nothing runs in between).
//! 3. `take_cpu_down` under stop_machine: the stop thread preempts N's
//!    task (`put_prev_task`: it stays queued on N), `__cpu_disable` clears N
//!    from `cpu_online_map`, and N's idle task runs. With NO_HZ its idle
//!    loop stops the tick once more: `select_nohz_load_balancer(1)` puts N
//!    in `nohz.cpu_mask`, and N gives up the idle-load-balancer role if it
//!    held it ("If we are going offline and still the leader, give up!").
//!    N stays in that mask after it is gone; see [`Scheduler::cpu_down`].
//! 4. `CPU_DEAD`: `migration_call` runs `migrate_live_tasks(N)`, which walks
//!    the task list and moves every task whose `task_cpu` is N, queued or
//!    asleep, with `move_task_off_dead_cpu`: to the first online CPU of N's
//!    node that the task allows, else to the first online CPU it allows,
//!    else ("No more Mr. Nice Guy") its mask becomes every CPU
//!    (`cpuset_cpus_allowed_locked` without cpusets; the online CPUs with
//!    them, [`crate::Config::cpusets`]) and it goes to the first
//!    online one, with "process P (comm) no longer affine to cpuN" in the
//!    log. `__migrate_task` dequeues a queued task, renormalises its vruntime
//!    to the new queue (`set_task_cpu`), enqueues it and runs the preemption
//!    check there. Its `double_rq_lock` refreshes both runqueues' clocks
//!    first (bce7f793 sched.c:5622, 2621-2622); in 2.6.25 update_rq_clock
//!    refreshes only the running CPU's own queue (4b119e21 sched.c:543-547),
//!    and neither the dead CPU nor, as modelled, the destination is the one
//!    running the CPU_DEAD notifier, so there nothing is refreshed.
//! 5. `migrate_dead_tasks` then finds nothing left (nothing can wake onto a
//!    CPU that is not online), and the dead runqueue is empty.
//! 6. `CPU_DEAD` again: `update_sched_domains` rebuilds the domains over
//!    `cpu_online_map` (less `isolcpus=`), fresh from their initialisers
//!    (`last_balance` = now, `balance_interval` initial, no failures). A
//!    `sched_domain` sysctl written before is lost with the old domains.
//!
//! Bringing it up: `CPU_UP_PREPARE` detaches the domains, the CPU boots into
//! its idle task, `cpu_online_map` gains it, and `CPU_ONLINE` rebuilds the
//! domains over the new map. Its runqueue keeps what it held when it went
//! down (`cpu_load[]`, `min_vruntime`, the clock, which its first update
//! moves on); no task comes back by itself: balancing and wakeups bring
//! them.
//!
//! What the caller supplies: the domains the kernel would rebuild (from
//! `cfs_topology`'s builder with `BuildOptions::online`, since this crate
//! does not hold the host) and, for `cpu_down`, the CPUs of N's node
//! (`node_to_cpumask(cpu_to_node(N))`: every CPU on a one-node host or a
//! kernel without CONFIG_NUMA). The scheduler's tunables do not change:
//! their `1 + ilog2(ncpus)` scaling is computed once at boot in these
//! kernels (`sched_init_granularity`; 2.6.33's `update_sysctl` redoes it on
//! hotplug).
//!
//! What is not modelled: the CPU is down at once (stop_machine's pause of
//! every other CPU is not charged), and x86 never takes CPU 0 down (it has
//! no `online` file); this crate does not refuse it, the machine model does.

use crate::CpuId;
use crate::entity::{TaskId, TaskState};
use crate::invariants::ApiCall;
use crate::observe::{Event, MigrateReason, Observer};
use crate::sched::{SchedError, Scheduler};
use alloc::string::String;
use alloc::vec::Vec;
use cfs_topology::{CpuMask, SchedDomains};
use core::fmt;

/// What [`Scheduler::cpu_down`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuDown {
    /// The task that was running on the CPU (the stop thread preempted it).
    pub stopped: Option<TaskId>,
    /// Every task moved off the CPU, in the order `migrate_live_tasks` met
    /// them (task-list order, which here is creation order), with its new
    /// CPU.
    pub moved: Vec<(TaskId, CpuId)>,
    /// The moved tasks none of whose allowed CPUs was online: each now
    /// allows every CPU, or with cpusets the CPUs online ("no longer affine to cpuN").
    pub affinity_broken: Vec<TaskId>,
}

/// Why a hotplug call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HotplugError {
    /// `cpu_down` of the only online CPU (`-EBUSY`).
    LastOnline(CpuId),
    /// `cpu_down` of a CPU already down (`-EINVAL`).
    AlreadyOffline(CpuId),
    /// `cpu_up` of a CPU already up (`-EINVAL`).
    AlreadyOnline(CpuId),
    /// The domains given are not ones the kernel could build over the new
    /// online map.
    Domains(String),
}

impl fmt::Display for HotplugError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HotplugError::LastOnline(c) => write!(f, "CPU {c} is the last one online and cannot go down"),
            HotplugError::AlreadyOffline(c) => write!(f, "CPU {c} is already offline"),
            HotplugError::AlreadyOnline(c) => write!(f, "CPU {c} is already online"),
            HotplugError::Domains(why) => write!(f, "rebuilt domains: {why}"),
        }
    }
}

impl<O: Observer> Scheduler<O> {
    /// `cpu_online_map`: the CPUs up (all of them until a [`Self::cpu_down`]).
    pub fn online_cpus(&self) -> CpuMask {
        self.online
    }

    /// `cpu_online(cpu)`: whether `cpu` is up (false for a CPU the machine
    /// lacks).
    pub fn cpu_online(&self, cpu: CpuId) -> bool {
        self.online.contains(cpu)
    }

    /// `any_online_cpu(mask)`: the first online CPU of `mask`.
    pub(crate) fn any_online_cpu(&self, mask: &CpuMask) -> Option<CpuId> {
        mask.iter_and(&self.online).next()
    }

    /// `cpu_down(cpu)` (2.6.26 kernel/cpu.c `_cpu_down`, with the
    /// scheduler's notifiers; see the module text for each step): the CPU's
    /// task is preempted, the CPU leaves the online map, every task on it
    /// moves off (`migrate_live_tasks`), and `domains` (what
    /// `arch_init_sched_domains(&cpu_online_map)` builds without it)
    /// replace the old ones. `node` is the CPUs of its NUMA node.
    ///
    /// With NO_HZ the dead CPU stays in `nohz.cpu_mask`, as in the kernel,
    /// where it is cleared only when the CPU, back up, leaves a tickless
    /// idle again; until then `select_nohz_load_balancer`'s "every online
    /// CPU is idle" test (mask weight against `num_online_cpus()`) counts
    /// it, and may stop the idle load balancer while an online CPU is busy.
    ///
    /// The caller must stop ticking the CPU and stop calling it: every call
    /// naming an offline CPU is refused with [`SchedError::Offline`].
    pub fn cpu_down(
        &mut self,
        now: u64,
        cpu: CpuId,
        node: CpuMask,
        domains: SchedDomains,
    ) -> Result<CpuDown, SchedError> {
        self.check_cpu(cpu)?;
        if self.online.weight() == 1 && self.online.contains(cpu) {
            return Err(SchedError::Hotplug(HotplugError::LastOnline(cpu)));
        }
        if !self.online.contains(cpu) {
            return Err(SchedError::Hotplug(HotplugError::AlreadyOffline(cpu)));
        }
        let mut online = self.online;
        online.clear(cpu);
        self.check_rebuilt(&domains, &online)?;
        let stopped = self.stop_machine_preempt(now, cpu);
        // The migration thread, woken by any request still queued here, runs
        // before stop_machine's thread does: its moves land where they were
        // sent, not where a dead CPU's tasks go.
        self.run_migration_queue(cpu);
        self.online = online;
        if self.cfg.nohz {
            self.nohz_cpu_dead(cpu);
        }
        let (moved, affinity_broken) = self.migrate_live_tasks(cpu, &node);
        self.attach_rebuilt(domains);
        self.emit(Event::Hotplug { cpu, online: false });
        self.finish(ApiCall::CpuDown { now, cpu })?;
        Ok(CpuDown { stopped, moved, affinity_broken })
    }

    /// `cpu_up(cpu)` (kernel/cpu.c `_cpu_up`): the CPU comes back idle,
    /// joins the online map, and `domains` (built over the new map) replace
    /// the old ones. No task moves here; the CPU pulls work when it
    /// balances, and wakeups may place tasks on it.
    pub fn cpu_up(&mut self, now: u64, cpu: CpuId, domains: SchedDomains) -> Result<(), SchedError> {
        self.check_cpu(cpu)?;
        if self.online.contains(cpu) {
            return Err(SchedError::Hotplug(HotplugError::AlreadyOnline(cpu)));
        }
        let mut online = self.online;
        online.set(cpu);
        self.check_rebuilt(&domains, &online)?;
        self.set_clock(cpu, now);
        // The idle task is set up afresh (init_idle): no stale resched
        // request from a balancer that kicked the dead CPU survives.
        let rq = &mut self.rqs[cpu];
        rq.need_resched = false;
        rq.idle_need_resched = false;
        rq.tick_stopped = false;
        self.resched_pending.clear(cpu);
        self.online = online;
        self.attach_rebuilt(domains);
        self.emit(Event::Hotplug { cpu, online: true });
        self.finish(ApiCall::CpuUp { now, cpu })
    }

    /// `arch_reinit_sched_domains` (2.6.26 bce7f793 sched.c:7397-7410;
    /// 2.6.32 22763c5c :9057-9065 through `rebuild_sched_domains`): every
    /// CPU is detached from its domains and `domains`, built over the
    /// online CPUs as they are now, attached in their place with fresh
    /// balancing state, as a CPU going down or up rebuilds them but with
    /// no CPU changing state and no task moving. The kernel reaches it from
    /// a write to `sched_mc_power_savings` or `sched_smt_power_savings`
    /// (bce7f793 :7416-7430) and, in 2.6.32, from a cpuset change; a
    /// caller here uses it for a kernel built differently from now on,
    /// e.g. after switching a patch that edits the domain initialisers
    /// ([`crate::Patch::domain_flags`]), whose edits
    /// [`Self::set_patch`] can only write into the levels present. A
    /// `sched_domain` sysctl written before is lost with the old domains.
    pub fn arch_reinit_sched_domains(&mut self, now: u64, domains: SchedDomains) -> Result<(), SchedError> {
        let online = self.online;
        self.check_rebuilt(&domains, &online)?;
        self.reinit_checked(now, domains)
    }

    /// [`Self::arch_reinit_sched_domains`] for domains already checked.
    pub(crate) fn reinit_checked(&mut self, now: u64, domains: SchedDomains) -> Result<(), SchedError> {
        self.advance(now);
        self.attach_rebuilt(domains);
        self.finish(ApiCall::ReinitDomains { now })
    }

    /// The rebuilt domains must cover this machine, leave every CPU outside
    /// `online` without a domain, and span only online CPUs.
    pub(crate) fn check_rebuilt(&self, domains: &SchedDomains, online: &CpuMask) -> Result<(), SchedError> {
        let bad = |why: String| Err(SchedError::Hotplug(HotplugError::Domains(why)));
        let n = self.rqs.len();
        if domains.per_cpu.len() > n {
            return bad(alloc::format!("{} CPUs, the machine has {n}", domains.per_cpu.len()));
        }
        for (cpu, chain) in domains.per_cpu.iter().enumerate() {
            for sd in chain {
                if !online.contains(cpu) {
                    return bad(alloc::format!("CPU {cpu} is offline but has a {} domain", sd.level));
                }
                let why = if !sd.span.contains(cpu) {
                    "does not hold the CPU"
                } else if sd.groups.is_empty() {
                    "has no groups"
                } else if !sd.span.is_subset_of(online) {
                    "is not within the online CPUs"
                } else {
                    continue;
                };
                return bad(alloc::format!("CPU {cpu}: {} domain span {} {why} ({online} online)", sd.level, sd.span));
            }
        }
        Ok(())
    }

    /// The stop-machine thread takes `cpu`: `schedule()` there puts the
    /// running task back on the queue (`put_prev_task`) and runs no fair
    /// task after it.
    fn stop_machine_preempt(&mut self, now: u64, cpu: CpuId) -> Option<TaskId> {
        self.set_clock(cpu, now);
        let rq = &mut self.rqs[cpu];
        rq.hrtick_expire = None;
        rq.need_resched = false;
        self.resched_pending.clear(cpu);
        let prev = self.rqs[cpu].curr?;
        if self.rules.is_2_6_32() {
            self.put_prev_stats_32(prev);
        }
        self.put_prev_task_fair(cpu, prev);
        self.tm(prev).state = TaskState::Queued;
        let rq = &mut self.rqs[cpu];
        rq.curr = None;
        rq.nr_switches += 1;
        self.emit(Event::Pick { cpu, prev: Some(prev), next: None, buddy: false });
        Some(prev)
    }

    /// The dead CPU's idle loop: `tick_nohz_stop_sched_tick` →
    /// `select_nohz_load_balancer(1)` on an offline CPU.
    ///
    /// 2.6.25 and 2.6.26 (bce7f793 sched.c:3617-3641): it joins the mask
    /// and, if it holds the ILB role, gives it up. If it does not, the rest
    /// of the function runs for it as for any CPU: unless every online CPU
    /// is in the mask, it takes a vacant role, so a dead CPU can own it
    /// (and, never ticking, balance for nobody) until it comes back up or
    /// another owner's exit frees it.
    ///
    /// 2.6.32-rc1 and 2.6.32 test `cpu_active` first (22763c5c
    /// sched.c:4662-4679, 17d857be :4629-4646): a CPU going down gives the
    /// role up if it holds it and returns, joining neither the mask nor
    /// the role.
    ///
    /// `tick_cancel_sched_timer` at CPU_DEAD then clears `tick_stopped`.
    fn nohz_cpu_dead(&mut self, cpu: CpuId) {
        let active_test = self.rules.is_2_6_32();
        self.rqs[cpu].in_nohz_recently = true;
        if !active_test {
            self.nohz.cpu_mask.set(cpu);
        }
        if self.nohz.load_balancer == Some(cpu) {
            self.nohz.load_balancer = None;
        } else if !active_test
            && self.nohz.load_balancer.is_none()
            && self.nohz.cpu_mask.weight() != self.online.weight()
        {
            self.nohz.load_balancer = Some(cpu);
        }
        self.rqs[cpu].tick_stopped = false;
    }

    /// `migrate_live_tasks(src)` with `move_task_off_dead_cpu` for each.
    fn migrate_live_tasks(&mut self, src: CpuId, node: &CpuMask) -> (Vec<(TaskId, CpuId)>, Vec<TaskId>) {
        let mut moved = Vec::new();
        let mut broken = Vec::new();
        for i in 0..self.tasks.len() {
            let t = &self.tasks[i];
            if t.cpu != src || t.state == TaskState::Dead {
                continue;
            }
            let id = t.id;
            let allowed = t.allowed;
            let dest = match self.any_online_cpu(&node.and(&allowed)).or_else(|| self.any_online_cpu(&allowed)) {
                Some(d) => d,
                None => {
                    // No more Mr. Nice Guy: the task's cpuset's online CPUs,
                    // which without cpusets are every possible CPU.
                    let all = self.cpuset_cpus_allowed();
                    self.tm(id).allowed = all;
                    broken.push(id);
                    self.emit(Event::AffinityBroken { task: id, cpu: src });
                    match self.any_online_cpu(&all) {
                        Some(d) => d,
                        None => continue, // unreachable: one CPU is always online
                    }
                }
            };
            self.migrate_task_off(id, src, dest);
            self.pending_move.retain(|&(p, _, _)| p != id);
            moved.push((id, dest));
        }
        (moved, broken)
    }

    /// `__migrate_task(p, src, dest)` (2.6.26 sched.c:5611-5644), whose
    /// double_rq_lock brings both clocks to now (not in 2.6.25: module text).
    fn migrate_task_off(&mut self, id: TaskId, src: CpuId, dest: CpuId) {
        if self.rules.remote_clock_update() {
            let now = self.now;
            self.set_clock(src, now);
            self.set_clock(dest, now);
        }
        if self.t(id).se.on_rq {
            self.move_queued_task(id, src, dest, MigrateReason::Hotplug);
        } else {
            self.set_task_cpu(id, dest);
            self.emit(Event::Migrate { task: id, from: src, to: dest, reason: MigrateReason::Hotplug });
        }
    }

    /// `update_sched_domains` → `arch_init_sched_domains`: the new domains,
    /// with the domain-initialiser patches applied as at boot, and fresh
    /// balancing state for each (`last_balance = jiffies`).
    fn attach_rebuilt(&mut self, mut domains: SchedDomains) {
        let n = self.rqs.len();
        domains.per_cpu.resize(n, Vec::new());
        crate::sched::apply_patch_domain_flags(&self.cfg, &mut domains);
        let jiffies = self.jiffies();
        self.dstate = (0..n).map(|cpu| crate::sched::fresh_domain_state(domains.of(cpu), jiffies)).collect();
        self.domains = domains;
        self.power.rebuilt();
    }
}

#[cfg(test)]
mod tests {
    use crate::features::Feature;
    use crate::{Config, KernelVersion, Scheduler};
    use cfs_topology::builder::BuildOptions;
    use cfs_topology::{CpuMask, DomainLevel, Host, SchedGroup};

    /// 2.6.32 with ARCH_POWER: CPU 3 of a Q6600 reads a quarter of its
    /// clock, so its refreshed power is 1024 * 256 >> 10 = 256 and its
    /// die's CPU-level group {2,3} sums 1024 + 256 = 1280 (built: 2048).
    /// The refreshed powers are kept by level and by a group's first CPU;
    /// once CPU 3 is down the rebuilt CPU level has the group {2}, whose
    /// first CPU is the same, and whose power must be its built 1024, not
    /// the old group's 1280: the kernel's rebuilt groups start from
    /// `init_sched_groups_power`.
    #[test]
    fn rebuilt_groups_start_from_their_built_power() {
        let v = KernelVersion::V2_6_32;
        let h = Host::preset("q6600").unwrap();
        let mut cfg = Config::new(v, 4);
        cfg.features.set(Feature::ArchPower, true).unwrap();
        let mut s = Scheduler::new(cfg, h.build_domains(v)).unwrap();
        s.set_arch_freq_power(3, Some(256)).unwrap();
        s.update_group_power(3, 0);
        s.update_group_power(3, 1);
        let group = |cpus: &[usize]| SchedGroup { cpus: CpuMask::from_cpus(cpus.iter().copied()), cpu_power: 0 };
        let built = |s: &Scheduler, cpus: &[usize]| {
            let g = s.domains().of(2).iter().find(|d| d.level == DomainLevel::Cpu).unwrap().groups.iter();
            g.clone().find(|g| g.cpus == group(cpus).cpus).unwrap().clone()
        };
        assert_eq!(s.group_power(DomainLevel::Cpu, &built(&s, &[2, 3])), 1280);
        let online = CpuMask::first_n(3);
        let d = h.build_domains_with(v, &BuildOptions { online: Some(online), ..BuildOptions::default() });
        s.cpu_down(0, 3, h.all_cpus(), d).unwrap();
        let g = built(&s, &[2]);
        assert_eq!((g.cpu_power, s.group_power(DomainLevel::Cpu, &g)), (1024, 1024));
        assert_eq!(s.arch_freq_power(3), Some(256), "what a CPU's counters read stays");
    }

    /// The checker's list of stranded tasks (a move to a CPU that went
    /// down first leaves its task outside its mask, as the kernel does): a
    /// task leaves the list when it is next put on a CPU its mask holds,
    /// and only then. T, running on CPU 1, is sent to CPU 3, which goes
    /// down before T's move; T forks a child, stranded beside it. Put on
    /// CPU 2 (outside both masks) T stays listed; the child, put on CPU 3
    /// once it is back up, is not.
    #[test]
    fn a_stranded_task_is_listed_until_it_reaches_its_mask() {
        let v = KernelVersion::V2_6_26;
        let h = Host::preset("q6600").unwrap();
        let mut s = Scheduler::new(Config::new(v, 4), h.build_domains(v)).unwrap();
        let t = s.spawn(0, 1, crate::TaskParams::normal()).unwrap();
        s.schedule(0, 1, crate::Deschedule::Preempt).unwrap();
        s.set_affinity(0, t, CpuMask::single(3)).unwrap();
        let online = CpuMask::first_n(3);
        let d = h.build_domains_with(v, &BuildOptions { online: Some(online), ..BuildOptions::default() });
        s.cpu_down(0, 3, h.all_cpus(), d).unwrap();
        s.schedule(1, 1, crate::Deschedule::Preempt).unwrap();
        let child = s.fork(1, t, None).unwrap().child;
        assert_eq!(s.stranded, [t, child]);
        s.cpu_up(2, 3, h.build_domains(v)).unwrap();
        s.set_task_cpu(t, 2);
        s.set_task_cpu(child, 3);
        assert_eq!(s.stranded, [t]);
    }
}
