//! A group's `cpu_power` as 2.6.32 keeps it up to date: `update_cpu_power`,
//! `update_group_power`, and the x86 hooks behind the ARCH_POWER feature.
//!
//! 2.6.25/26 give every group its power once, when the domains are built
//! (`init_sched_groups_power`; cfs-topology's builder). 2.6.32 recomputes
//! it while balancing (ab29230e673 "sched: Implement dynamic cpu_power",
//! with a52bfd73589's `smt_gain` and e9e9250bc78's RT scaling): in
//! `update_sg_lb_stats`, the local group's first CPU, when it is the CPU
//! balancing, refreshes the local group's power before it is read
//! (22763c5c sched.c:3638-3700):
//!
//! - at the lowest domain, `update_cpu_power`: SCHED_LOAD_SCALE, scaled by
//!   `arch_scale_freq_power`, then for an SMT domain (SD_SHARE_CPUPOWER,
//!   more than one CPU) by `arch_scale_smt_power`, then by
//!   `scale_rt_power`, each step `>> SCHED_LOAD_SHIFT`, and at least 1;
//! - above it, `update_group_power`: the sum of the child domain's groups'
//!   powers, as they stand.
//!
//! Groups are shared by every CPU whose domain at that level lists them,
//! so a refresh by one CPU is what every other CPU reads there too: the
//! refreshed values are kept per level and group (by the group's first
//! CPU), over the built value until the first refresh. The NODE level is
//! the exception: build_numa_sched_groups gives each node a group list of
//! its own, with its own copy of every other node's group (22763c5c
//! sched.c:8350-8413), and a refresh reaches only the local group
//! (update_group_power, :3669-3688). So a CPU reads its own node's group
//! as refreshed and another node's at the power it was built with
//! ([`Scheduler::group_power_seen_by`]).
//!
//! Without ARCH_POWER (the default, 8e6598af3f3) the hooks are the generic
//! ones: `default_scale_freq_power` is SCHED_LOAD_SCALE and
//! `default_scale_smt_power` is `smt_gain / weight`, which reproduce the
//! built values exactly (589 for a thread of a 2-way core) as long as the
//! domains keep the flags they were built with; clearing
//! SD_SHARE_CPUPOWER mid-run makes a thread's refresh 1024, as it would
//! in the kernel. `scale_rt_power`
//! is SCHED_LOAD_SCALE here: there is no RT class, so `rt_avg` stays 0, and
//! `available / (total >> 10)` is then 1024 for any `total` of at least
//! half a second (`sched_avg_period`).
//!
//! With ARCH_POWER on, x86 (47fe38fcff0, arch/x86/kernel/cpu/sched.c)
//! answers both hooks from APERF/MPERF when the CPU has them
//! (X86_FEATURE_APERFMPERF): the frequency hook is the ratio of the two
//! counters' advance since the CPU last read them, `aperf / (mperf >> 10)`
//! (1024 at the nominal clock), and the SMT hook is SCHED_LOAD_SCALE,
//! since the ratio "already includes the smt gain". The driver says what
//! the ratio is ([`Scheduler::set_arch_freq_power`]); `None` is a CPU
//! without the counters, which keeps the generic hooks. The kernel reads
//! the counters of the CPU executing the balance, which is not the CPU
//! balanced for when the NO_HZ idle load balancer balances on behalf of a
//! tickless CPU: so does this port.

use crate::CpuId;
use crate::observe::Observer;
use crate::sched::{SchedError, Scheduler};
use cfs_topology::{DomainLevel, SchedGroup, SdFlags};

/// `SCHED_LOAD_SCALE`: one full CPU's power.
const SCHED_LOAD_SCALE: u64 = crate::weights::NICE_0_LOAD;

/// `SCHED_LOAD_SHIFT`.
const SHIFT: u32 = 10;

/// How many [`DomainLevel`]s there are (the refreshed powers are kept per
/// level).
const LEVELS: usize = 5;

fn level_index(level: DomainLevel) -> usize {
    match level {
        DomainLevel::Sibling => 0,
        DomainLevel::Mc => 1,
        DomainLevel::Cpu => 2,
        DomainLevel::Node => 3,
        DomainLevel::AllNodes => 4,
    }
}

/// The powers 2.6.32 has refreshed, by level and by each group's first CPU
/// (0 where the group holds its built value: never refreshed, or refreshed
/// to it; a refreshed power is never 0), and what each CPU's APERF/MPERF
/// read.
#[derive(Clone, Debug, Default)]
pub(crate) struct CpuPower {
    refreshed: alloc::vec::Vec<[u32; LEVELS]>,
    /// How many groups hold a power other than their built one.
    differing: usize,
    /// `arch_scale_freq_power` per CPU when it has APERF/MPERF.
    aperf_mperf: alloc::vec::Vec<Option<u32>>,
    /// The CPU executing the balance, when it balances for another (the
    /// NO_HZ idle load balancer).
    pub(crate) executing: Option<CpuId>,
}

impl CpuPower {
    pub(crate) fn new(nr_cpus: usize) -> CpuPower {
        CpuPower {
            refreshed: alloc::vec![[0; LEVELS]; nr_cpus],
            differing: 0,
            aperf_mperf: alloc::vec![None; nr_cpus],
            executing: None,
        }
    }

    /// The domains were rebuilt (a CPU went down or came up): every group
    /// starts from its built power again, as the kernel's new groups do.
    /// What each CPU's APERF/MPERF reads is the CPU's, and stays.
    pub(crate) fn rebuilt(&mut self) {
        self.refreshed.iter_mut().for_each(|r| *r = [0; LEVELS]);
        self.differing = 0;
    }
}

/// `update_cpu_power`'s arithmetic (22763c5c sched.c:3638): `freq` and
/// `smt` are what the two hooks returned (`smt` is read only for an SMT
/// domain of more than one CPU, `None` otherwise), `rt` what
/// `scale_rt_power` did. Each factor is applied with `>> SCHED_LOAD_SHIFT`,
/// in that order, and the result is at least 1.
pub fn update_cpu_power(freq: u64, smt: Option<u64>, rt: u64) -> u64 {
    let mut power = SCHED_LOAD_SCALE.wrapping_mul(freq) >> SHIFT;
    if let Some(smt) = smt {
        power = power.wrapping_mul(smt) >> SHIFT;
    }
    power = power.wrapping_mul(rt) >> SHIFT;
    power.max(1)
}

/// `default_scale_smt_power`: the domain's `smt_gain` over its CPUs.
pub fn default_scale_smt_power(smt_gain: u32, weight: u32) -> u64 {
    u64::from(smt_gain) / u64::from(weight.max(1))
}

impl<O: Observer> Scheduler<O> {
    /// Sets what x86's `arch_scale_freq_power` reads on `cpu` with
    /// ARCH_POWER on (2.6.32, 47fe38fcff0): the APERF/MPERF ratio,
    /// SCHED_LOAD_SCALE (1024) at the nominal clock, 512 for a CPU that ran
    /// at half of it (clock modulation, a lower P-state); `None` for a CPU
    /// without the counters (no X86_FEATURE_APERFMPERF: an AMD K8, or any
    /// other arch), which leaves both hooks generic. The value counts from
    /// the next refresh of the CPU's power. Without ARCH_POWER, or on
    /// 2.6.25/26, which have no dynamic power, it changes nothing.
    pub fn set_arch_freq_power(&mut self, cpu: CpuId, ratio: Option<u32>) -> Result<(), SchedError> {
        self.check_cpu(cpu)?;
        self.power.aperf_mperf[cpu] = ratio;
        Ok(())
    }

    /// What [`Scheduler::set_arch_freq_power`] last set for `cpu`.
    pub fn arch_freq_power(&self, cpu: CpuId) -> Option<u32> {
        self.power.aperf_mperf.get(cpu).copied().flatten()
    }

    /// A group's `cpu_power` at `level` as 2.6.32 reads it: the last
    /// refresh, or the built value before any. 2.6.25/26 read the built
    /// value.
    pub fn group_power(&self, level: DomainLevel, g: &SchedGroup) -> u32 {
        let first = g.cpus.first().unwrap_or(0);
        match self.power.refreshed.get(first).map(|r| r[level_index(level)]) {
            Some(p) if p != 0 && self.rules.is_2_6_32() => p,
            _ => g.cpu_power,
        }
    }

    /// A group's `cpu_power` at `level` as `viewer` reads it: as
    /// [`Self::group_power`], except that at the NODE level another node's
    /// group is the viewer's node's own copy, which no refresh reaches
    /// (see the module doc).
    pub fn group_power_seen_by(&self, viewer: CpuId, level: DomainLevel, g: &SchedGroup) -> u32 {
        if level == DomainLevel::Node && !g.cpus.contains(viewer) {
            return g.cpu_power;
        }
        self.group_power(level, g)
    }

    /// `update_group_power(sd, cpu)` (22763c5c sched.c:3669) for
    /// `this_cpu`'s domain `sd_i`: the lowest level refreshes the CPU's own
    /// power, a higher one sums its child's groups.
    pub(crate) fn update_group_power(&mut self, this_cpu: CpuId, sd_i: usize) {
        // A higher level's refresh sums its child's groups; while every
        // group holds its built value, that sum is the built value again
        // (init_sched_groups_power sums the same groups: pinned for every
        // host shape by `a_built_power_is_its_childs_sum`), so there is
        // nothing to do there. This keeps the sums off the balancer's path
        // in every run whose CPUs all keep their built power, ARCH_POWER or
        // not. The lowest level is always refreshed: it is where a power
        // starts to differ (the APERF/MPERF ratio; a SD_SHARE_CPUPOWER
        // written since the build changes what it computes).
        if sd_i > 0 && self.power.differing == 0 {
            return;
        }
        let doms = self.domains.of(this_cpu);
        let Some(sd) = doms.get(sd_i) else { return };
        let Some(local) = sd.groups.first() else { return };
        let power = match sd_i.checked_sub(1).and_then(|c| doms.get(c)) {
            None => self.update_cpu_power_of(this_cpu, sd_i),
            Some(child) => {
                child.groups.iter().map(|g| u64::from(self.group_power_seen_by(this_cpu, child.level, g))).sum()
            }
        };
        // The kernel stores the sum in `unsigned int cpu_power` unfloored
        // (22763c5c sched.c:3680-3688): a sum of 2^32 or more wraps, and a
        // wrap to 0 divides by zero in find_busiest_group. It takes an
        // APERF/MPERF ratio of ~2 million times nominal, which only a
        // library caller can give; the port saturates and floors at 1
        // rather than panic (PORTING, "Known divergences").
        let power = u32::try_from(power).unwrap_or(u32::MAX).max(1);
        let stored = if power == local.cpu_power { 0 } else { power };
        let first = local.cpus.first().unwrap_or(this_cpu);
        let level = level_index(sd.level);
        if let Some(r) = self.power.refreshed.get_mut(first) {
            match (r[level] != 0, stored != 0) {
                (false, true) => self.power.differing += 1,
                (true, false) => self.power.differing -= 1,
                _ => {}
            }
            r[level] = stored;
        }
    }

    /// `update_cpu_power(sd, cpu)` for `cpu`'s lowest domain `sd_i`,
    /// reading the hooks as the CPU executing the balance would.
    fn update_cpu_power_of(&self, cpu: CpuId, sd_i: usize) -> u64 {
        let sd = &self.domains.of(cpu)[sd_i];
        let weight = sd.span.weight() as u32;
        let arch = self.cfg.features.has(crate::features::Feature::ArchPower);
        let reader = self.power.executing.unwrap_or(cpu);
        let counters = if arch { self.power.aperf_mperf.get(reader).copied().flatten() } else { None };
        let freq = counters.map_or(SCHED_LOAD_SCALE, u64::from);
        let smt = (sd.flags.contains(SdFlags::SHARE_CPUPOWER) && weight > 1).then(|| match counters {
            Some(_) => SCHED_LOAD_SCALE,
            None => default_scale_smt_power(sd.params.smt_gain, weight),
        });
        update_cpu_power(freq, smt, SCHED_LOAD_SCALE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balance::CpuIdleType;
    use crate::config::Config;
    use crate::entity::TaskParams;
    use cfs_topology::{CpuMask, Host, KernelVersion};

    const T0: u64 = 7_000_000_000;
    /// 2.6.32's default mask, and with ARCH_POWER (bit 17) set.
    const DEF: u32 = 15_834_235;
    const ARCH: u32 = DEF | 1 << 17;

    /// A preset host under 2.6.32 with features `mask`, every CPU's
    /// APERF/MPERF reading the nominal clock, every clock at T0.
    fn host(name: &str, mask: u32) -> Scheduler {
        let v = KernelVersion::V2_6_32;
        let d = Host::preset(name).unwrap().build_domains(v);
        let n = d.nr_cpus();
        let mut s = Scheduler::new(Config::new(v, n).with_features_mask(mask).unwrap(), d).unwrap();
        for cpu in 0..n {
            s.set_clock(cpu, T0);
            s.set_arch_freq_power(cpu, Some(1024)).unwrap();
        }
        s
    }

    /// `k` queued nice-0 tasks on `cpu`.
    fn load(s: &mut Scheduler, cpu: usize, k: usize) {
        for _ in 0..k {
            let id = s.spawn(T0, cpu, TaskParams::normal()).unwrap();
            assert_eq!(s.t(id).cpu, cpu);
        }
    }

    /// `cpu` balances its domain `sd_i` as if newly idle (instantaneous
    /// loads): the busiest group's CPUs and the imbalance.
    fn fbg(s: &mut Scheduler, cpu: usize, sd_i: usize) -> Option<(CpuMask, u64)> {
        let (mut sd_idle, mut balance) = (false, true);
        let all = CpuMask::first_n(s.nr_cpus());
        let b = s.find_busiest_group(cpu, sd_i, CpuIdleType::NewlyIdle, &mut sd_idle, &all, &mut balance)?;
        Some((s.domains.of(cpu)[sd_i].groups[b.group].cpus, b.imbalance))
    }

    /// Nehalem-EP (SIBLING = 0, MC = 1): one task on each thread of core
    /// {0,8}, CPU 1 balancing MC. Without ARCH_POWER the core's power is
    /// 589 + 589 = 1178, capacity DIV_ROUND_CLOSEST(1178, 1024) = 1, so
    /// its 2 tasks make it the busiest group (imbalance 1024, the pin in
    /// kernel_pins_32). With ARCH_POWER and APERF/MPERF the SMT hook is
    /// 1024: once CPUs 0 and 8 have refreshed their own power at SIBLING
    /// (1024 each) and CPU 0, the core's first CPU, the core's at MC (2048),
    /// the core holds capacity (2048 + 512) / 1024 = 2, avg_load 2048 x 1024
    /// / 2048 = 1024 with no spread between its CPUs: balanced, for CPU 1
    /// too, which reads the group CPU 0 refreshed.
    #[test]
    fn arch_power_counts_an_smt_thread_as_a_whole_cpu() {
        let core0 = CpuMask::from_cpus([0, 8]);
        let mut plain = host("nehalem-ep", DEF);
        load(&mut plain, 0, 1);
        load(&mut plain, 8, 1);
        for cpu in [0, 8] {
            fbg(&mut plain, cpu, 0);
        }
        fbg(&mut plain, 0, 1);
        assert_eq!(plain.power_of(0), 589);
        assert_eq!(fbg(&mut plain, 1, 1), Some((core0, 1024)));

        let mut arch = host("nehalem-ep", ARCH);
        load(&mut arch, 0, 1);
        load(&mut arch, 8, 1);
        // Nothing refreshed yet: the built values stand.
        assert_eq!(arch.power_of(0), 589);
        assert_eq!(fbg(&mut arch, 1, 1), Some((core0, 1024)));
        for cpu in [0, 8] {
            fbg(&mut arch, cpu, 0);
        }
        assert_eq!((arch.power_of(0), arch.power_of(8)), (1024, 1024));
        let mc = &arch.domains.of(1)[1];
        let g = mc.groups.iter().find(|g| g.cpus == core0).unwrap();
        // CPU 1 has not refreshed MC for core {0,8}: still 1178 ...
        assert_eq!(arch.group_power(mc.level, g), 1178);
        // ... until CPU 0 balances there.
        fbg(&mut arch, 0, 1);
        let mc = &arch.domains.of(1)[1];
        let g = mc.groups.iter().find(|g| g.cpus == core0).unwrap();
        assert_eq!(arch.group_power(mc.level, g), 2048);
        assert_eq!(fbg(&mut arch, 1, 1), None);

        // ARCH_POWER off again: each group goes back to its built value as
        // it is refreshed, its children as they stand. CPU 0's thread
        // first (589); the core then sums 589 and CPU 8's 1024, not yet
        // refreshed: 1613, as the kernel would; once CPU 8 has refreshed
        // too, 1178 again, and nothing differs from the built values.
        arch.set_features_mask(DEF).unwrap();
        fbg(&mut arch, 0, 0);
        assert_eq!((arch.power_of(0), arch.power_of(8)), (589, 1024));
        let core = |s: &Scheduler| {
            let mc = &s.domains.of(1)[1];
            s.group_power(mc.level, mc.groups.iter().find(|g| g.cpus == core0).unwrap())
        };
        fbg(&mut arch, 0, 1);
        assert_eq!(core(&arch), 1613);
        fbg(&mut arch, 8, 0);
        fbg(&mut arch, 0, 1);
        assert_eq!((core(&arch), arch.power.differing), (1178, 0));

        // Without ARCH_POWER, SD_SHARE_CPUPOWER cleared on SIBLING after
        // the build: update_cpu_power skips the SMT factor, 1024.
        arch.set_domain_flags(cfs_topology::DomainLevel::Sibling, SdFlags::empty(), SdFlags::SHARE_CPUPOWER).unwrap();
        fbg(&mut arch, 0, 0);
        assert_eq!(arch.power_of(0), 1024);
    }

    /// Nehalem-EP (SIBLING = 0, MC = 1, NODE = 2; node 0 is CPUs 0-3 and
    /// 8-11) with ARCH_POWER and APERF/MPERF at the nominal clock: once node
    /// 0's threads (1024 each), its cores (2 x 1024) and CPU 0 at NODE have
    /// refreshed, node 0's group reads 4 x 2048 = 8192 to its own CPUs. CPU
    /// 4 of node 1 reads its own list's copy of that group, which kept the
    /// built 4 x 1178 = 4712 (build_numa_sched_groups, 22763c5c
    /// sched.c:8350-8413; update_group_power touches only sd->groups).
    #[test]
    fn another_nodes_group_keeps_its_built_power_for_this_node() {
        let mut s = host("nehalem-ep", ARCH);
        let node0 = [0, 1, 2, 3, 8, 9, 10, 11];
        for cpu in node0 {
            fbg(&mut s, cpu, 0);
        }
        for cpu in [0, 1, 2, 3] {
            fbg(&mut s, cpu, 1);
        }
        fbg(&mut s, 0, 2);
        let node = &s.domains.of(0)[2];
        assert_eq!(node.level, DomainLevel::Node);
        let g = node.groups.iter().find(|g| g.cpus.contains(0)).unwrap();
        assert_eq!(g.cpu_power, 4712);
        assert_eq!(s.group_power_seen_by(0, DomainLevel::Node, g), 8192);
        assert_eq!(s.group_power_seen_by(9, DomainLevel::Node, g), 8192);
        assert_eq!(s.group_power_seen_by(4, DomainLevel::Node, g), 4712);
        // Below NODE every CPU shares the group: core {0,8} reads 2048 from
        // node 1 as well.
        let mc = &s.domains.of(0)[1];
        let core = mc.groups.iter().find(|g| g.cpus.contains(0)).unwrap();
        assert_eq!(s.group_power_seen_by(4, DomainLevel::Mc, core), 2048);
    }

    /// Q6600 (MC = 0, groups {0} and {1}): one task on CPU 0 and one on
    /// CPU 1, whose APERF/MPERF read a quarter of the nominal clock (256).
    /// Once CPU 1 has balanced (refreshing its power: 1024 x 256 >> 10 =
    /// 256, capacity (256 + 512) / 1024 = 0), CPU 0 finds group {1} the
    /// busiest: avg_load 1024 x 1024 / 256 = 4096 with 1 task over capacity
    /// 0; the domain's average 1024 x 2048 / (1024 + 256) = 1638; max_pull
    /// = min(4096 - 1638, 4096 - 1024) = 2458; imbalance = min(2458 x 256,
    /// (1638 - 1024) x 1024) / 1024 = 614 < 1024, so fix_small_imbalance:
    /// 4096 - 1024 + 1024 >= 2 x 1024, imbalance 1024. find_busiest_queue
    /// then keeps CPU 1 (capacity 0: its lone task is not skipped), where
    /// at full capacity it would skip it. Without ARCH_POWER, or before
    /// CPU 1 refreshes, both groups hold one task within capacity 1:
    /// balanced.
    #[test]
    fn arch_power_sees_a_slowed_cpu_lose_its_capacity() {
        let run = |mask: u32, refresh: bool| {
            let mut s = host("q6600", mask);
            s.set_arch_freq_power(1, Some(256)).unwrap();
            load(&mut s, 0, 1);
            load(&mut s, 1, 1);
            if refresh {
                fbg(&mut s, 1, 0);
            }
            let found = fbg(&mut s, 0, 0);
            let queue = found.and_then(|(g, imb)| s.find_busiest_queue_32(&g, imb, &CpuMask::first_n(4)));
            (s.power_of(1), found, queue)
        };
        assert_eq!(run(ARCH, true), (256, Some((CpuMask::single(1), 1024)), Some(1)));
        assert_eq!(run(ARCH, false), (1024, None, None));
        assert_eq!(run(DEF, true), (1024, None, None));
        // A CPU without APERF/MPERF keeps the generic hooks under ARCH_POWER.
        let mut s = host("q6600", ARCH);
        s.set_arch_freq_power(1, None).unwrap();
        fbg(&mut s, 1, 0);
        assert_eq!((s.power_of(1), s.arch_freq_power(1), s.arch_freq_power(0)), (1024, None, Some(1024)));
        assert_eq!(s.set_arch_freq_power(4, Some(1)), Err(SchedError::BadCpu(4)));
    }

    /// The premise of `update_group_power`'s shortcut: on every host, for
    /// every CPU and every domain above its lowest, the local group's built
    /// power is the sum of the child domain's groups' built powers, which is
    /// what a refresh computes while nothing differs; and no domain spans a
    /// single CPU. Presets and specs with SMT (589 a thread), several dies,
    /// sockets and NUMA nodes.
    #[test]
    fn a_built_power_is_its_childs_sum() {
        let mut hosts: alloc::vec::Vec<Host> =
            cfs_topology::PRESET_NAMES.iter().map(|n| Host::preset(n).unwrap()).collect();
        for spec in ["2s4c2t", "1s2d2c", "2n2s4c2t", "4n1s6c", "2n2s2d2c2t,order=linear", "1s8c4t"] {
            hosts.push(Host::from_spec(spec).unwrap());
        }
        let mut levels_checked = 0;
        for host in &hosts {
            for v in [KernelVersion::V2_6_32Rc1, KernelVersion::V2_6_32] {
                let d = host.build_domains(v);
                for cpu in 0..d.nr_cpus() {
                    let doms = d.of(cpu);
                    // No attached domain spans one CPU (sd_degenerate), so
                    // update_cpu_power's `weight > 1` holds wherever
                    // SD_SHARE_CPUPOWER is set.
                    assert!(doms.iter().all(|sd| sd.span.weight() > 1), "{} {v:?} cpu {cpu}", host.name());
                    for i in 1..doms.len() {
                        let local = doms[i].group_of(cpu).map(|g| doms[i].groups[g].cpu_power);
                        let sum: u32 = doms[i - 1].groups.iter().map(|g| g.cpu_power).sum();
                        assert_eq!(local, Some(sum), "{} {v:?} cpu {cpu} level {:?}", host.name(), doms[i].level);
                        levels_checked += 1;
                    }
                }
            }
        }
        // The check is not vacuous: 2s4c2t alone has 16 CPUs x 2 levels above
        // SIBLING under each 2.6.32 profile.
        assert!(levels_checked >= 64, "{levels_checked}");
    }

    /// The arithmetic of update_cpu_power, by hand:
    /// - a Nehalem thread without ARCH_POWER: 1024 x 1024 >> 10 = 1024,
    ///   x (1178 / 2 = 589) >> 10 = 589, x 1024 >> 10 = 589: the built
    ///   value (cfs-topology's builder, `1024 * 1178 / 2 >> 10`);
    /// - with APERF/MPERF at the nominal clock the SMT hook is 1024: 1024;
    /// - at a ratio of 512: 1024 x 512 >> 10 = 512;
    /// - a ratio of 0 (no C0 time at all) gives 0, taken as 1;
    /// - a ratio of 1 gives 1024 x 1 >> 10 = 1.
    #[test]
    fn update_cpu_power_scales_step_by_step() {
        assert_eq!(default_scale_smt_power(1178, 2), 589);
        assert_eq!(update_cpu_power(1024, Some(589), 1024), 589);
        assert_eq!(update_cpu_power(1024, Some(1024), 1024), 1024);
        assert_eq!(update_cpu_power(512, None, 1024), 512);
        assert_eq!(update_cpu_power(512, Some(1024), 1024), 512);
        assert_eq!(update_cpu_power(0, None, 1024), 1);
        assert_eq!(update_cpu_power(1, None, 1024), 1);
        // Each step truncates: 1000 x 589 >> 10 = 575 (575.2), then
        // 575 x 1000 >> 10 = 561 (561.5).
        assert_eq!(update_cpu_power(1000, Some(589), 1000), 561);
    }
}
