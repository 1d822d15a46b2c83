//! Settings written while the machine runs: what `echo 863 >
//! /proc/sys/kernel/sched_features`, `sysctl -w kernel.sched_latency_ns=…`
//! and a write to `/proc/sys/kernel/sched_domain/cpuN/domainM/flags` do to
//! a live kernel, on a live [`Scheduler`]; and, beyond what a kernel
//! allows, a seed patch switched on or off between two calls.
//!
//! A [`Config`](crate::Config) fixes these at construction; the calls here
//! change them later, so a driver can flip a knob in the middle of a run
//! (and see, say, whether a piled-up load spreads again once
//! SYNC_WAKEUPS goes off). None of them touches a task or a runqueue: as
//! in the kernel, the new value is read by the next decision that looks
//! at it (the next wakeup, tick, pick or balance pass). Each is recorded
//! in the call history like any other API call, and the invariants run
//! after it when they are on. A [`Scheduler`] is `Clone` (with a cloneable
//! observer), so a driver can also fork a run at any moment and write a
//! different setting into each copy.
//!
//! ```
//! use cfs_core::{Config, KernelVersion, Patch, Scheduler};
//! use cfs_topology::{DomainLevel, Host, SdFlags};
//!
//! let host = Host::preset("q6600").unwrap();
//! let v = KernelVersion::V2_6_26Rc4;
//! let mut s = Scheduler::new(Config::new(v, 4), host.build_domains(v)).unwrap();
//! s.set_features_mask(863).unwrap(); // echo 863 > /proc/sys/kernel/sched_features
//! s.set_tunable("sched_wakeup_granularity_ns", 5_000_000).unwrap();
//! // Four CPUs, one MC domain each.
//! assert_eq!(s.set_domain_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::WAKE_AFFINE).unwrap(), 4);
//! s.set_patch(Patch::Waker, true).unwrap();
//! assert_eq!(s.config().features.mask(), 863);
//! assert!(s.set_features_mask(1 << 20).is_err()); // no such bit in 2.6.26
//! ```
//!
//! Kernel references (2.6.26, bce7f793):
//! - `sched_features` is a plain integer sysctl (kernel/sysctl.c,
//!   proc_dointvec) read through `sched_feat()` at each use;
//! - `sched_latency_ns` and `sched_min_granularity_ns` go through
//!   `sched_nr_latency_handler`, which recomputes `sched_nr_latency`; the
//!   other `sched_*` sysctls are plain integers
//!   ([`Tunables::set_by_name`](crate::tunables::Tunables::set_by_name));
//! - each domain's `flags` is a proc_dointvec file under
//!   `/proc/sys/kernel/sched_domain/` (sd_alloc_ctl_domain_table,
//!   CONFIG_SCHED_DEBUG), read by the balancer and wakeup paths at each use.

use crate::config::ConfigError;
use crate::features::{FeatureError, FeatureTable, Features};
use crate::invariants::ApiCall;
use crate::observe::Observer;
use crate::patches::Patch;
use crate::sched::{SchedError, Scheduler};
use crate::tunables::TunableError;
use alloc::string::String;
use cfs_topology::{DomainLevel, SchedDomains, SdFlags};
use core::fmt;

/// A run-time setting the scheduler refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingError {
    /// The `sched_features` value is not one of this kernel's.
    Features(FeatureError),
    /// The tunable value is outside what the sysctl accepts.
    Tunable(TunableError),
    /// No tunable has this name.
    UnknownTunable(String),
    /// No CPU has a domain at this level on this host and kernel.
    NoSuchLevel(DomainLevel),
    /// The patch does not apply to this kernel.
    Patch(ConfigError),
    /// The power-savings level is not one this kernel takes.
    PowerSavings(ConfigError),
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingError::Features(e) => write!(f, "{e}"),
            SettingError::Tunable(e) => write!(f, "{e}"),
            SettingError::UnknownTunable(n) => write!(f, "unknown tunable {n:?}"),
            SettingError::NoSuchLevel(l) => write!(f, "no {l:?} sched domain on this host"),
            SettingError::Patch(e) | SettingError::PowerSavings(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for SettingError {}

impl From<SettingError> for SchedError {
    fn from(e: SettingError) -> Self {
        SchedError::Setting(e)
    }
}

impl<O: Observer> Scheduler<O> {
    /// `echo MASK > /proc/sys/kernel/sched_features`: the numeric mask of
    /// this kernel's feature table (the table the scheduler was built
    /// with, including the 2.6.25 SYNC_WAKEUPS back-port's). Unknown bits
    /// are refused, as [`crate::Config::with_features_mask`] refuses them.
    pub fn set_features_mask(&mut self, mask: u32) -> Result<(), SchedError> {
        let features = Features::from_mask(self.cfg.feature_table(), mask).map_err(SettingError::Features)?;
        self.cfg.features = features;
        self.finish(ApiCall::SetFeatures { mask })
    }

    /// `sysctl -w kernel.NAME=VALUE` for a scheduler tunable, by its
    /// `/proc` name with or without the `sched_` prefix and `_ns` suffix
    /// (`sched_wakeup_granularity_ns`, `migration_cost`, `nr_migrate`, …).
    /// Writing the latency or the minimum granularity recomputes
    /// `sched_nr_latency` as `sched_nr_latency_handler` does.
    pub fn set_tunable(&mut self, name: &str, value: i64) -> Result<(), SchedError> {
        let mut t = self.cfg.tunables;
        match t.set_by_name(name, value) {
            Ok(true) => {}
            Ok(false) => return Err(SettingError::UnknownTunable(name.into()).into()),
            Err(e) => return Err(SettingError::Tunable(e).into()),
        }
        self.cfg.tunables = t;
        self.finish(ApiCall::SetTunables { tunables: t })
    }

    /// Writes the `flags` of every CPU's domain at `level`: the bits in
    /// `set` are set, then those in `clear` cleared (so a bit in both ends
    /// up clear). Returns how many domains changed their value; a level no
    /// CPU has is an error.
    pub fn set_domain_flags(&mut self, level: DomainLevel, set: SdFlags, clear: SdFlags) -> Result<usize, SchedError> {
        if !self.domains.per_cpu.iter().flatten().any(|d| d.level == level) {
            return Err(SettingError::NoSuchLevel(level).into());
        }
        let changed = self.domains.override_flags(level, set, clear);
        self.finish(ApiCall::SetDomainFlags { level, set, clear })?;
        Ok(changed)
    }

    /// `echo LEVEL > /sys/devices/system/cpu/sched_mc_power_savings` (or,
    /// with `smt`, `sched_smt_power_savings`): `sched_power_savings_store`
    /// (bce7f793 sched.c:7412-7428, 22763c5c :9068-9094) sets the knob and
    /// rebuilds the domains ([`Self::arch_reinit_sched_domains`]);
    /// `domains` are what the builder makes with the new knobs
    /// (`cfs_topology::BuildOptions::power_savings`), over the CPUs up. A
    /// level the kernel refuses ([`crate::config::max_power_savings`]) or
    /// domains that do not fit are refused, and change nothing, as every
    /// refused call here; the kernel's store writes the knob first and
    /// leaves it written if its rebuild fails (2.6.26, out of memory only;
    /// 2.6.32's cannot fail). Whether the host has the knob's file at all
    /// is the caller's to check (`cfs_topology::PowerSavings::knob_exists`).
    pub fn sched_power_savings_store(
        &mut self,
        now: u64,
        smt: bool,
        level: u8,
        domains: SchedDomains,
    ) -> Result<(), SchedError> {
        if level > crate::config::max_power_savings(self.cfg.version) {
            let e = ConfigError::PowerSavings { level, version: self.cfg.version };
            return Err(SettingError::PowerSavings(e).into());
        }
        let online = self.online;
        self.check_rebuilt(&domains, &online)?;
        self.cfg.power_savings = self.cfg.power_savings.with(smt, level);
        self.reinit_checked(now, domains)
    }

    /// Switches a seed patch on or off from the next decision on: a what-if
    /// no running kernel allows (a patch is code). The patch's per-task
    /// state (a `waker`, a `last_preempter`) is neither cleared nor updated
    /// while the patch is off; switched back on, the patch starts from what
    /// it left. The 2.6.25 SYNC_WAKEUPS back-port changes the feature
    /// table: the mask is carried over, without the back-port's
    /// SYNC_WAKEUPS bit when it goes off. A patch of the domain
    /// initialisers ([`Patch::domain_flags`]) is written into the flags of
    /// every domain at its levels when it goes on, and its inverse when it
    /// goes off (nothing when it was already in that state). That reaches
    /// only the levels present: for the domains the patched kernel would
    /// have built (a level kept or dropped by the edit), build them with
    /// [`crate::Patches::init_flag_edits`] and give them to
    /// [`Self::arch_reinit_sched_domains`], as cfs-machine does.
    pub fn set_patch(&mut self, patch: Patch, on: bool) -> Result<(), SchedError> {
        let patches = if on {
            if let Some(why) = patch.incompatibility(self.cfg.version) {
                let e = ConfigError::PatchNotApplicable { patch, version: self.cfg.version, why };
                return Err(SettingError::Patch(e).into());
            }
            if let Some(other) = self.cfg.patches.conflict(patch) {
                return Err(SettingError::Patch(ConfigError::PatchesConflict(other, patch)).into());
            }
            let with = self.cfg.patches.with(patch);
            if self.cfg.group_sched {
                if let Some(why) = crate::config::group_sched_refusal(self.cfg.version, with) {
                    let e = ConfigError::GroupSched { version: self.cfg.version, why };
                    return Err(SettingError::Patch(e).into());
                }
            }
            with
        } else {
            self.cfg.patches.without(patch)
        };
        let table = FeatureTable::of(self.cfg.version, patches.has(Patch::SyncWakeupsBit));
        let features = if self.cfg.features.table() == table {
            self.cfg.features
        } else {
            Features::from_mask(table, self.cfg.features.mask() & table.valid_bits()).map_err(SettingError::Features)?
        };
        if self.cfg.patches.has(patch) != on {
            for &(level, set, clear) in patch.domain_flags() {
                let (set, clear) = if on { (set, clear) } else { (clear, set) };
                self.domains.override_flags(level, set, clear);
            }
        }
        self.cfg.patches = patches;
        self.cfg.features = features;
        self.rules = self.cfg.rules();
        self.finish(ApiCall::SetPatch { patch, on })
    }
}
