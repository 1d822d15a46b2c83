//! [`Config`]: everything chosen when a scheduler is built, validated once (the
//! [`crate::sysctl`] calls change some of it on a running scheduler).

use crate::features::{FeatureTable, Features};
use crate::patches::{Patch, Patches};
use crate::profile::Rules;
use crate::tunables::Tunables;
use alloc::string::String;
use cfs_topology::{KernelVersion, PowerSavings};
use core::fmt;

/// How a [`crate::Scheduler`] behaves: kernel profile, features,
/// tunables, patches and the host facts the kernel would read at boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The kernel profile.
    pub version: KernelVersion,
    /// `sysctl_sched_features`.
    pub features: Features,
    /// The tunables (already scaled for the CPU count).
    pub tunables: Tunables,
    /// Applied seed patches.
    pub patches: Patches,
    /// Timer interrupt rate (jiffies per second); balance intervals and
    /// `next_balance` are in jiffies. Default 250: kernel/Kconfig.hz's
    /// `default HZ_250` in every profile's release (4b119e21, e490517a,
    /// 22763c5c), and the x86 defconfigs of 2.6.25 and 2.6.26 (2.6.32's
    /// chose 1000). Distributions of 2008 shipped 250 or 1000.
    pub hz: u32,
    /// CONFIG_HIGH_RES_TIMERS: the HRTICK feature ends slices with an
    /// hrtimer (kernel-reference.md §13), and each CPU's tick is an hrtimer
    /// ([`Config::tick_phase_ns`]). Default false, the kernel's own
    /// default: the option has no `default` line in kernel/time/Kconfig
    /// (e490517a, bce7f793, 4b119e21, 22763c5c), and the x86_64 defconfig
    /// of 2.6.25 and 2.6.26 does not set it, so a kernel built "with a
    /// minimum of fiddling from the defaults" (Greg Smith's words for the
    /// seed thread's kernels) has none. The same reading leaves NO_HZ off
    /// and HZ at 250 (`nohz`, `hz`). Of the profiles' defaults only
    /// 2.6.25's and 2.6.26's HRTICK bit reads it; 2.6.32's is off.
    pub hres_timers: bool,
    /// CONFIG_NO_HZ: idle CPUs stop their tick and the idle load balancer
    /// balances for them (see [`crate::nohz`]); the driver reports idle
    /// entry with [`crate::Scheduler::nohz_stop_sched_tick`] and must not
    /// tick a CPU whose tick is stopped. Default false: every CPU ticks,
    /// idle or not (CONFIG_NO_HZ=n, or nohz=off on the command line).
    pub nohz: bool,
    /// CONFIG_PREEMPT: a preemptible kernel. What the fair class sees of
    /// it is that newly-idle balancing stops after pulling one task, to
    /// keep that critical section short: `balance_tasks` ends at its first
    /// pull (7e96fa5875d, 2.6.29), so in the 2.6.32-rc1 and 2.6.32
    /// profiles only. (The same commit put c4acb2c0669c's stop between
    /// scheduling classes in `move_tasks`, 2.6.27, under CONFIG_PREEMPT;
    /// with the fair class alone modelled it has nothing to stop.) Neither
    /// commit is in the 2.6.25 or 2.6.26 trees, where the setting changes
    /// nothing here.
    /// CONFIG_PREEMPT's other effects (preemption points inside the
    /// kernel, the fair `double_lock_balance`) are below the resolution of
    /// an event-driven driver, which switches tasks when it is told to.
    /// Default false: the server and distribution kernels of the seed
    /// threads' time were built with PREEMPT_NONE or PREEMPT_VOLUNTARY.
    pub preempt: bool,
    /// CONFIG_NR_CPUS, the most CPUs the kernel was built for. The fair
    /// class reads it in one place: `rebalance_domains` caps a balance
    /// interval at `HZ * NR_CPUS / 10` jiffies (bce7f793 sched.c:3689-3690,
    /// e490517a :4030-4031, 4b119e21 :3438-3439, 22763c5c :4755-4756), which
    /// only bites past `NR_CPUS / 10` seconds (a busy CPU whose tasks are
    /// all pinned backs off to 512 ms × busy_factor). Default: the x86
    /// defconfig of the profile's release (32 in 2.6.25 and 2.6.26, 64 in
    /// 2.6.32; arch/x86/configs/x86_64_defconfig), or the machine's CPU
    /// count if that is more: a kernel built for fewer would not bring the
    /// rest up. At most [`cfs_topology::MAX_CPUS`].
    pub nr_cpus: u32,
    /// Run the online invariant checks after every API call.
    pub check_invariants: bool,
    /// `sched_mc_power_savings` and `sched_smt_power_savings` as the fair
    /// class reads them: 2.6.32's newly idle consolidation (mc at 2,
    /// POWERSAVINGS_BALANCE_WAKEUP) and its power-aware choice of the idle
    /// load balancer (either on). The domains must be built with the same
    /// values (`cfs_topology::BuildOptions::power_savings`), as the kernel
    /// rebuilds them at every write
    /// ([`crate::Scheduler::sched_power_savings_store`]). Off by default;
    /// 2.6.25/26 take 0 or 1, 2.6.32 up to 2.
    pub power_savings: PowerSavings,
    /// CONFIG_CPUSETS, with every task in the top cpuset (no cpuset made,
    /// sched_load_balance on), as a distribution kernel boots: the top
    /// cpuset's CPUs follow the online map. What the scheduler sees of it
    /// is `cpuset_cpus_allowed`, which is then the online CPUs rather than
    /// every possible one: `sched_setaffinity` clips a mask to them
    /// (bce7f793 sched.c:5020-5021, 22763c5c :6533-6534, 4b119e21 and
    /// e490517a alike), so a CPU that is down when the mask is set stays
    /// out of it once it is back; and a task none of whose CPUs is left
    /// when one goes down falls back to the CPUs still online, not to
    /// every CPU (`cpuset_cpus_allowed_locked` in move_task_off_dead_cpu,
    /// bce7f793 :5744, 22763c5c :7245; the cpuset notifier runs after
    /// the migration one, but `guarantee_online_cpus` masks the top
    /// cpuset with the online map). 2.6.26 final and 2.6.32 also hand the
    /// domain rebuilds to the cpuset code, which builds over the top
    /// cpuset's CPUs, `isolcpus=` ones included: that is the driver's to
    /// do, since it builds the domains (cfs-machine's `DomainBuild`).
    /// Default false, the x86_64 defconfig of 2.6.25 and 2.6.26 (2.6.32's
    /// sets it).
    pub cpusets: bool,
    /// CONFIG_FAIR_GROUP_SCHED with CONFIG_USER_SCHED: tasks are scheduled
    /// in one group per user id (see [`crate::group`]). 2.6.25's Kconfig
    /// turned it on by default (GROUP_SCHED and FAIR_GROUP_SCHED `default
    /// y`, USER_SCHED the choice's default; 4b119e21 init/Kconfig);
    /// aac6abca858 (2.6.26-rc1) made both `default n`. Default false, the
    /// x86_64 defconfig of every profile's release. Ported for 2.6.25,
    /// 2.6.26-rc4 (with its balancing by aggregates) and 2.6.26; the 2.6.32
    /// profiles refuse it ([`ConfigError::GroupSched`]),
    /// as does the `min-vruntime-fix` patch, whose update_min_vruntime is
    /// ported for one queue per CPU.
    pub group_sched: bool,
}

/// A configuration that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A patch does not apply to this kernel.
    PatchNotApplicable {
        /// The patch.
        patch: Patch,
        /// The kernel.
        version: KernelVersion,
        /// Why.
        why: &'static str,
    },
    /// Two patches that are alternatives ([`Patch::conflicts_with`]).
    PatchesConflict(Patch, Patch),
    /// The features value belongs to another kernel's table.
    FeatureTableMismatch,
    /// HZ outside 1..=10000.
    BadHz(u32),
    /// The domains were built for a different CPU count or kernel.
    Domains(String),
    /// A power-savings level the kernel's sysfs store refuses with -EINVAL
    /// (2.6.25/26 take a first character of 0 or 1; 2.6.32 takes 0-2).
    PowerSavings {
        /// The level.
        level: u8,
        /// The kernel.
        version: KernelVersion,
    },
    /// Group scheduling asked of a profile whose group scheduler is not
    /// ported (2.6.32's hierarchical load), or with the `min-vruntime-fix`
    /// patch.
    GroupSched {
        /// The kernel.
        version: KernelVersion,
        /// Why.
        why: &'static str,
    },
    /// CONFIG_NR_CPUS below the machine's CPU count, or above
    /// [`cfs_topology::MAX_CPUS`].
    NrCpus {
        /// The configured NR_CPUS.
        nr_cpus: u32,
        /// The machine's CPUs.
        cpus: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::PatchNotApplicable { patch, version, why } => {
                write!(f, "patch {patch} does not apply to {version}: {why}")
            }
            ConfigError::PatchesConflict(a, b) => {
                write!(f, "patches {a} and {b} are two versions of one patch; apply one of them")
            }
            ConfigError::FeatureTableMismatch => {
                write!(f, "the sched_features value was built for another kernel's feature table")
            }
            ConfigError::BadHz(hz) => write!(f, "HZ={hz} is out of range 1..=10000"),
            ConfigError::Domains(s) => write!(f, "sched domains do not fit: {s}"),
            ConfigError::PowerSavings { level, version } => {
                write!(
                    f,
                    "power-savings level {level} is not one of {version}'s (0 to {})",
                    max_power_savings(*version)
                )
            }
            ConfigError::GroupSched { version, why } => {
                write!(f, "group scheduling is not available on {version}: {why}")
            }
            ConfigError::NrCpus { nr_cpus, cpus } => write!(
                f,
                "NR_CPUS={nr_cpus} must cover the machine's {cpus} CPUs and be at most {}",
                cfs_topology::MAX_CPUS
            ),
        }
    }
}

impl core::error::Error for ConfigError {}

/// Why group scheduling cannot be had on `version` with `patches`, if it
/// cannot (see [`Config::group_sched`]).
pub fn group_sched_refusal(version: KernelVersion, patches: Patches) -> Option<&'static str> {
    match version {
        KernelVersion::V2_6_32Rc1 | KernelVersion::V2_6_32 => {
            Some("2.6.32's hierarchical group load (tg_shares_up, h_load) is not ported")
        }
        _ if patches.has(Patch::MinVruntimeFix) => {
            Some("the min-vruntime-fix patch's update_min_vruntime is ported for one queue per CPU")
        }
        _ => None,
    }
}

/// The highest power-savings level `version`'s sysfs store takes: 1 in
/// 2.6.25/26 (-EINVAL unless `buf[0]` is '0' or '1', bce7f793
/// sched.c:7412-7428), 2 (POWERSAVINGS_BALANCE_WAKEUP) in 2.6.32 (22763c5c
/// :9068-9094).
pub fn max_power_savings(version: KernelVersion) -> u8 {
    if version.is_2_6_32() { 2 } else { 1 }
}

impl Config {
    /// The boot defaults of `version` on a machine with `nr_cpus` CPUs.
    pub fn new(version: KernelVersion, nr_cpus: usize) -> Self {
        Config {
            version,
            features: Features::default_for(FeatureTable::of(version, false)),
            tunables: Tunables::defaults(version, nr_cpus),
            patches: Patches::none(),
            hz: 250,
            hres_timers: false,
            nohz: false,
            preempt: false,
            nr_cpus: Self::defconfig_nr_cpus(version).max(nr_cpus.min(cfs_topology::MAX_CPUS) as u32),
            check_invariants: false,
            power_savings: PowerSavings::default(),
            cpusets: false,
            group_sched: false,
        }
    }

    /// CONFIG_NR_CPUS in the release's arch/x86/configs/x86_64_defconfig
    /// (and i386_defconfig): 32 for 2.6.25 and 2.6.26 (4b119e21, e490517a,
    /// bce7f793), 64 for 2.6.32 (17d857be, 22763c5c).
    pub fn defconfig_nr_cpus(version: KernelVersion) -> u32 {
        match version {
            KernelVersion::V2_6_32Rc1 | KernelVersion::V2_6_32 => 64,
            _ => 32,
        }
    }

    /// `max_load_balance_interval`: `HZ * NR_CPUS / 10` jiffies, the most
    /// `rebalance_domains` waits between two passes over one domain.
    pub fn max_balance_interval(&self) -> u64 {
        self.hz as u64 * self.nr_cpus as u64 / 10
    }

    /// Adds a patch. The 2.6.25 SYNC_WAKEUPS back-port also switches the
    /// feature table (its bit defaults off, so the mask keeps its value).
    pub fn with_patch(mut self, p: Patch) -> Result<Self, ConfigError> {
        if let Some(why) = p.incompatibility(self.version) {
            return Err(ConfigError::PatchNotApplicable { patch: p, version: self.version, why });
        }
        if let Some(other) = self.patches.conflict(p) {
            return Err(ConfigError::PatchesConflict(other, p));
        }
        self.patches = self.patches.with(p);
        if p == Patch::SyncWakeupsBit {
            let table = FeatureTable::of(self.version, true);
            self.features =
                Features::from_mask(table, self.features.mask()).map_err(|_| ConfigError::FeatureTableMismatch)?;
        }
        Ok(self)
    }

    /// The feature table this configuration must use.
    pub fn feature_table(&self) -> FeatureTable {
        FeatureTable::of(self.version, self.patches.has(Patch::SyncWakeupsBit))
    }

    /// Sets the numeric `sched_features` mask.
    pub fn with_features_mask(mut self, mask: u32) -> Result<Self, crate::features::FeatureError> {
        self.features = Features::from_mask(self.feature_table(), mask)?;
        Ok(self)
    }

    /// Checks the pieces fit together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for p in self.patches.iter() {
            if let Some(why) = p.incompatibility(self.version) {
                return Err(ConfigError::PatchNotApplicable { patch: p, version: self.version, why });
            }
            if let Some(other) = self.patches.conflict(p) {
                return Err(ConfigError::PatchesConflict(p, other));
            }
        }
        if self.features.table() != self.feature_table() {
            return Err(ConfigError::FeatureTableMismatch);
        }
        if self.hz == 0 || self.hz > 10_000 {
            return Err(ConfigError::BadHz(self.hz));
        }
        let PowerSavings { mc, smt } = self.power_savings;
        if let Some(level) = [mc, smt].into_iter().find(|&l| l > max_power_savings(self.version)) {
            return Err(ConfigError::PowerSavings { level, version: self.version });
        }
        if self.group_sched {
            if let Some(why) = group_sched_refusal(self.version, self.patches) {
                return Err(ConfigError::GroupSched { version: self.version, why });
            }
        }
        Ok(())
    }

    /// The code-path rules.
    pub fn rules(&self) -> Rules {
        Rules { version: self.version, patches: self.patches }
    }

    /// Nanoseconds per jiffy.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / self.hz.max(1) as u64
    }

    /// Where in each jiffy CPU `cpu`'s tick fires, in ns after the jiffy
    /// boundary, on a machine with `possible_cpus` possible CPUs.
    ///
    /// With high-resolution timers the tick is a per-CPU hrtimer, and
    /// `tick_setup_sched_timer` staggers it: CPU n's first expiry is the
    /// next jiffy boundary plus n × (tick_period / 2) / num_possible_cpus()
    /// (e490517a and bce7f793 kernel/time/tick-sched.c:609-613,
    /// 4b119e21 :615-619, 22763c5c :704-708), and hrtimer_forward keeps
    /// every later expiry on that grid. On a Q6600 at HZ=250 the four CPUs
    /// tick 0, 0.5, 1 and 1.5 ms into each jiffy. CPU 0 (the do_timer CPU
    /// at boot) ticks on the boundary, so every CPU's k-th tick reads
    /// jiffies = k.
    ///
    /// Without them, a tickless kernel (`tick_nohz_switch_to_nohz`,
    /// tick-sched.c:510) programs every CPU for the jiffy boundary itself:
    /// phase 0. A periodic-only kernel starts each local APIC timer when its
    /// CPU comes up (`tick_setup_periodic`, tick-common.c:104-113), at a
    /// phase fixed by boot timing that nobody recorded; the high-resolution
    /// stagger stands in for it, so that turning `hres_timers` off alone
    /// does not also line the ticks up.
    pub fn tick_phase_ns(&self, cpu: usize, possible_cpus: usize) -> u64 {
        if !self.hres_timers && self.nohz {
            return 0;
        }
        let half_period = self.tick_ns() >> 1;
        half_period / possible_cpus.max(1) as u64 * cpu as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_staggered_over_half_a_jiffy_unless_low_resolution_nohz() {
        // tick_setup_sched_timer: offset = (NSEC_PER_SEC / HZ) >> 1, divided
        // by num_possible_cpus(), times the CPU number. HZ=250, 4 CPUs:
        // 4,000,000 >> 1 = 2,000,000; / 4 = 500,000 ns a CPU.
        let mut c = Config::new(KernelVersion::V2_6_26, 4);
        let phases: [u64; 4] = core::array::from_fn(|cpu| c.tick_phase_ns(cpu, 4));
        assert_eq!(phases, [0, 500_000, 1_000_000, 1_500_000]);
        // HZ=1000, 8 CPUs: 1,000,000 >> 1 = 500,000; / 8 = 62,500 ns.
        c.hz = 1000;
        assert_eq!(c.tick_phase_ns(7, 8), 7 * 62_500);
        // Tickless without hrtimers: every CPU on the jiffy boundary.
        c.hres_timers = false;
        c.nohz = true;
        assert_eq!(c.tick_phase_ns(3, 4), 0);
        // Periodic-only: the stand-in stagger; with hrtimers and NO_HZ the
        // tick is still the staggered hrtimer.
        c.nohz = false;
        assert_eq!(c.tick_phase_ns(3, 8), 3 * 62_500);
        c.hres_timers = true;
        c.nohz = true;
        assert_eq!(c.tick_phase_ns(3, 8), 3 * 62_500);
        // No CPUs is no division by zero.
        assert_eq!(c.tick_phase_ns(0, 0), 0);
    }

    /// The build options a kernel gets from Kconfig's own defaults, in
    /// every profile: kernel/Kconfig.hz's `default HZ_250`, and no
    /// `default` line for NO_HZ or HIGH_RES_TIMERS in kernel/time/Kconfig
    /// (4b119e21, e490517a, bce7f793, 22763c5c), so both are off; no
    /// CONFIG_PREEMPT (the preemption model's default is PREEMPT_NONE).
    #[test]
    fn build_options_default_to_kconfigs_defaults() {
        for v in KernelVersion::ALL {
            let c = Config::new(v, 4);
            assert_eq!((c.hz, c.hres_timers, c.nohz, c.preempt), (250, false, false, false), "{v}");
        }
    }

    #[test]
    fn the_two_last_preempter_postings_are_refused_together() {
        // patches.md §4: "without disperse" is the posting less its wake_affine
        // hunk; both share the check_preempt_wakeup and sched.h hunks, so no tree
        // carries both. Each alone applies to rc4; the second is refused whichever
        // comes first, by with_patch, by validate and by set_patch at run time.
        let rc4 = Config::new(KernelVersion::V2_6_26Rc4, 4);
        let (a, b) = (Patch::LastPreempter, Patch::LastPreempterNoDisperse);
        for (first, second) in [(a, b), (b, a)] {
            let one = rc4.with_patch(first).unwrap();
            assert_eq!(one.validate(), Ok(()));
            assert_eq!(one.with_patch(second), Err(ConfigError::PatchesConflict(first, second)));
            let both = Config { patches: one.patches.with(second), ..rc4 };
            assert!(matches!(both.validate(), Err(ConfigError::PatchesConflict(..))));
            let h = cfs_topology::Host::preset("q6600").unwrap();
            let d = h.build_domains(KernelVersion::V2_6_26Rc4);
            let mut s = crate::Scheduler::new(one, d).unwrap();
            assert!(s.set_patch(second, true).is_err());
            assert!(s.config().patches.has(first) && !s.config().patches.has(second));
            // Taking the first off lets the second on.
            s.set_patch(first, false).unwrap();
            s.set_patch(second, true).unwrap();
        }
        // Any other pair is fine: waker with either.
        assert!(rc4.with_patch(Patch::Waker).unwrap().with_patch(a).is_ok());
    }

    #[test]
    fn validate_checks_hz_patches_and_the_feature_table() {
        let base = Config::new(KernelVersion::V2_6_26, 2);
        assert_eq!(base.validate(), Ok(()));
        // HZ: 1..=10000 (a jiffy of 100 µs at most 10,000 times a second).
        for (hz, ok) in [(0, false), (1, true), (250, true), (10_000, true), (10_001, false)] {
            let c = Config { hz, ..base };
            assert_eq!(c.validate(), if ok { Ok(()) } else { Err(ConfigError::BadHz(hz)) }, "hz {hz}");
        }
        // A patch the kernel already carries: 2.6.26 final has b3137bc8e77.
        let c = Config { patches: Patches::none().with(Patch::AffinityFix), ..base };
        assert!(matches!(
            c.validate(),
            Err(ConfigError::PatchNotApplicable { patch: Patch::AffinityFix, version: KernelVersion::V2_6_26, .. })
        ));
        // The same patch on rc4, which lacks it, is fine.
        let rc4 = Config::new(KernelVersion::V2_6_26Rc4, 2);
        assert_eq!(Config { patches: Patches::none().with(Patch::AffinityFix), ..rc4 }.validate(), Ok(()));
        // A features value of 2.6.32's table on a 2.6.26 config.
        let c = Config { features: Config::new(KernelVersion::V2_6_32, 2).features, ..base };
        assert_eq!(c.validate(), Err(ConfigError::FeatureTableMismatch));
        // Scheduler::new refuses what validate refuses.
        let domains =
            cfs_topology::SchedDomains { version: KernelVersion::V2_6_26, per_cpu: alloc::vec![alloc::vec![]] };
        let one = Config::new(KernelVersion::V2_6_26, 1);
        assert!(crate::Scheduler::new(one, domains.clone()).is_ok());
        let bad = crate::Scheduler::new(Config { hz: 0, ..one }, domains);
        assert!(matches!(bad, Err(ConfigError::BadHz(0))));
    }
}
