//! Tunables (`/proc/sys/kernel/sched_*`) with each kernel's defaults.
//!
//! 2.6.26 `kernel/sched_fair.c` lines 25-75 and `sched_init_granularity`
//! (sched.c:5519): at boot, latency and min_granularity are multiplied by
//! `f = 1 + ilog2(online CPUs)` and capped at 200 ms; wakeup_granularity is
//! multiplied with no cap; `sched_nr_latency` is *not* recomputed (it stays
//! 5 until a sysctl write). Defaults per release: 2.6.25 20/4/5 ms, 2.6.26
//! 20/4/10 ms (0bbd3336eee raised the wakeup granularity), 2.6.32 5/1/1 ms
//! (172e082a911) with child_runs_first off (2bba22c50b0).

use cfs_topology::KernelVersion;
use core::fmt;

/// The fair class's tunables, in ns where they are times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    /// `sysctl_sched_latency`: the period in which every task runs once.
    pub latency: u64,
    /// `sysctl_sched_min_granularity`: smallest slice before the period stretches.
    pub min_granularity: u64,
    /// `sysctl_sched_wakeup_granularity`: vruntime lead a wakee needs to preempt.
    pub wakeup_granularity: u64,
    /// `sched_nr_latency`: tasks that fit in one latency period.
    pub nr_latency: u64,
    /// `sysctl_sched_migration_cost`, an unsigned int as in the kernel:
    /// the cache-hot window in ns, 0 = never hot, and
    /// [`Tunables::ALWAYS_HOT`] (written as -1) = always hot.
    pub migration_cost: u32,
    /// `sysctl_sched_nr_migrate`: tasks examined per balance pass.
    pub nr_migrate: u32,
    /// `sysctl_sched_child_runs_first`.
    pub child_runs_first: bool,
    /// `sysctl_sched_compat_yield`.
    pub compat_yield: bool,
}

/// `ilog2` of a positive count (0 for 0).
fn ilog2(n: usize) -> u64 {
    if n <= 1 { 0 } else { (usize::BITS - 1 - n.leading_zeros()) as u64 }
}

/// The 200 ms cap `sched_init_granularity` applies.
pub const GRANULARITY_LIMIT: u64 = 200_000_000;

/// sysctl bounds (kernel/sysctl.c, 2.6.26): latency and min_granularity
/// 100 µs .. 1 s; wakeup_granularity 0 .. 1 s.
pub const SYSCTL_MIN_GRAN: u64 = 100_000;
/// Upper bound for the time tunables.
pub const SYSCTL_MAX_GRAN: u64 = 1_000_000_000;

/// A tunable write the kernel would reject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunableError {
    /// Which knob.
    pub name: &'static str,
    /// The value tried.
    pub value: i64,
    /// Allowed range, inclusive.
    pub range: (i64, i64),
}

impl fmt::Display for TunableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {} is out of range {}..={}", self.name, self.value, self.range.0, self.range.1)
    }
}

impl core::error::Error for TunableError {}

impl Tunables {
    /// Boot values of `version` on a machine with `nr_cpus` online CPUs.
    pub fn defaults(version: KernelVersion, nr_cpus: usize) -> Tunables {
        let (lat, min, wake) = match version {
            KernelVersion::V2_6_25 => (20_000_000, 4_000_000, 5_000_000),
            KernelVersion::V2_6_26Rc4 | KernelVersion::V2_6_26 => (20_000_000, 4_000_000, 10_000_000),
            KernelVersion::V2_6_32Rc1 | KernelVersion::V2_6_32 => (5_000_000, 1_000_000, 1_000_000),
        };
        let factor = 1 + ilog2(nr_cpus.max(1));
        Tunables {
            latency: (lat * factor).min(GRANULARITY_LIMIT),
            min_granularity: (min * factor).min(GRANULARITY_LIMIT),
            wakeup_granularity: wake * factor,
            nr_latency: 5,
            migration_cost: 500_000,
            nr_migrate: 32,
            child_runs_first: !version.is_2_6_32(),
            compat_yield: false,
        }
    }

    /// The `f` factor for `nr_cpus`.
    pub fn scale_factor(nr_cpus: usize) -> u64 {
        1 + ilog2(nr_cpus.max(1))
    }

    fn check(name: &'static str, v: u64, lo: u64, hi: u64) -> Result<(), TunableError> {
        if v < lo || v > hi {
            return Err(TunableError { name, value: v as i64, range: (lo as i64, hi as i64) });
        }
        Ok(())
    }

    /// Writes `sched_latency_ns` and recomputes `sched_nr_latency =
    /// DIV_ROUND_UP(latency, min_granularity)` like `sched_nr_latency_handler`.
    pub fn set_latency(&mut self, ns: u64) -> Result<(), TunableError> {
        Self::check("sched_latency_ns", ns, SYSCTL_MIN_GRAN, SYSCTL_MAX_GRAN)?;
        self.latency = ns;
        self.nr_latency = self.latency.div_ceil(self.min_granularity.max(1));
        Ok(())
    }

    /// Writes `sched_min_granularity_ns` (recomputes nr_latency).
    pub fn set_min_granularity(&mut self, ns: u64) -> Result<(), TunableError> {
        Self::check("sched_min_granularity_ns", ns, SYSCTL_MIN_GRAN, SYSCTL_MAX_GRAN)?;
        self.min_granularity = ns;
        self.nr_latency = self.latency.div_ceil(self.min_granularity.max(1));
        Ok(())
    }

    /// Writes `sched_wakeup_granularity_ns`.
    pub fn set_wakeup_granularity(&mut self, ns: u64) -> Result<(), TunableError> {
        Self::check("sched_wakeup_granularity_ns", ns, 0, SYSCTL_MAX_GRAN)?;
        self.wakeup_granularity = ns;
        Ok(())
    }

    /// `sysctl_sched_migration_cost` as the kernel compares it with u64
    /// runtimes and overlaps (wake_affine, the wakeup-overlap and
    /// last_preempter patches, 2.6.32's SYNC_LESS/SYNC_MORE and
    /// WAKEUP_OVERLAP): the unsigned int widened, so "-1" reads as
    /// 4,294,967,295 (2.6.26 sched_fair.c:74, 22763c5c sched_fair.c:74).
    /// Only task_hot tests for -1 itself.
    pub fn migration_cost_unsigned(&self) -> u64 {
        u64::from(self.migration_cost)
    }

    /// The `sysctl_sched_migration_cost` value -1 stands for: an unsigned
    /// int's all-ones, which task_hot's `== -1` takes as "always cache hot".
    pub const ALWAYS_HOT: u32 = u32::MAX;

    /// Writes `sched_migration_cost`: -1 ("always cache hot") or a window
    /// of 0 to 4,294,967,295 ns.
    ///
    /// The kernel variable is an unsigned int written through
    /// `proc_dointvec` (2.6.26 kernel/sysctl.c:285-289), whose conversion
    /// keeps the low 32 bits of whatever is written (sysctl.c:1909-1914):
    /// so -1 and 4,294,967,295 store the same bits,
    /// [`Tunables::ALWAYS_HOT`]. Any other value
    /// outside -1..=4,294,967,295 would reach the kernel as a different
    /// number (-2 as 4,294,967,294, 2^32 as 0), so it is refused rather
    /// than silently wrapped.
    pub fn set_migration_cost(&mut self, ns: i64) -> Result<(), TunableError> {
        const UINT_MAX: i64 = u32::MAX as i64;
        if !(-1..=UINT_MAX).contains(&ns) {
            return Err(TunableError { name: "sched_migration_cost", value: ns, range: (-1, UINT_MAX) });
        }
        // The low 32 bits, as proc_dointvec's store keeps them: -1 becomes
        // ALWAYS_HOT, and every other accepted value is itself.
        self.migration_cost = ns as u32;
        Ok(())
    }

    /// The `/proc/sys/kernel` names [`Tunables::set_by_name`] takes.
    pub const NAMES: [&'static str; 7] = [
        "sched_latency_ns",
        "sched_min_granularity_ns",
        "sched_wakeup_granularity_ns",
        "sched_migration_cost",
        "sched_nr_migrate",
        "sched_child_runs_first",
        "sched_compat_yield",
    ];

    /// Sets a tunable by its `/proc` name (`sched_latency_ns`, `latency`,
    /// `sched_nr_migrate`, ...). Returns `Ok(false)` for an unknown name.
    /// `sched_nr_latency` is one: every profile keeps it in a static of
    /// sched_fair.c that only the latency and min_granularity handler
    /// writes (bce7f793 sched_fair.c:48, 320-333), with no file of its own
    /// in /proc/sys/kernel. A library caller can still set the field.
    ///
    /// The three granularities are `proc_dointvec_minmax` knobs (2.6.26
    /// kernel/sysctl.c:226-265): a value below the minimum, a negative one
    /// included, is refused (-EINVAL) and reported as written.
    pub fn set_by_name(&mut self, name: &str, value: i64) -> Result<bool, TunableError> {
        let n = name.trim().trim_start_matches("sched_").trim_end_matches("_ns");
        let granularity = |name: &'static str, lo: u64| match u64::try_from(value) {
            Ok(v) => Ok(v),
            Err(_) => Err(TunableError { name, value, range: (lo as i64, SYSCTL_MAX_GRAN as i64) }),
        };
        match n {
            "latency" => self.set_latency(granularity("sched_latency_ns", SYSCTL_MIN_GRAN)?)?,
            "min_granularity" => self.set_min_granularity(granularity("sched_min_granularity_ns", SYSCTL_MIN_GRAN)?)?,
            "wakeup_granularity" => self.set_wakeup_granularity(granularity("sched_wakeup_granularity_ns", 0)?)?,
            "migration_cost" => self.set_migration_cost(value)?,
            "nr_migrate" => {
                if !(0..=u32::MAX as i64).contains(&value) {
                    return Err(TunableError { name: "sched_nr_migrate", value, range: (0, u32::MAX as i64) });
                }
                self.nr_migrate = value as u32;
            }
            "child_runs_first" => self.child_runs_first = value != 0,
            "compat_yield" => self.compat_yield = value != 0,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn scaling_table_of_the_reference() {
        // kernel-reference.md §3: 2.6.26 at 4 CPUs (f = 1 + ilog2(4) = 3): 60/12/30 ms.
        let t = Tunables::defaults(KernelVersion::V2_6_26, 4);
        assert_eq!((t.latency, t.min_granularity, t.wakeup_granularity), (60_000_000, 12_000_000, 30_000_000));
        // 2.6.25 at 2 CPUs (f = 2): 40/8/10 ms.
        let t = Tunables::defaults(KernelVersion::V2_6_25, 2);
        assert_eq!((t.latency, t.min_granularity, t.wakeup_granularity), (40_000_000, 8_000_000, 10_000_000));
        // 2.6.32 at 16 CPUs (f = 5): 25/5/5 ms, child_runs_first off.
        let t = Tunables::defaults(KernelVersion::V2_6_32, 16);
        assert_eq!((t.latency, t.min_granularity, t.wakeup_granularity), (25_000_000, 5_000_000, 5_000_000));
        assert!(!t.child_runs_first);
        // 1024 CPUs: f = 11: latency 220 ms capped at 200; min 44 ms; wakeup 110 ms uncapped.
        let t = Tunables::defaults(KernelVersion::V2_6_26, 1024);
        assert_eq!((t.latency, t.min_granularity, t.wakeup_granularity), (200_000_000, 44_000_000, 110_000_000));
        assert_eq!(t.nr_latency, 5, "not recomputed at boot");
    }

    #[test]
    fn sysctl_writes() {
        let mut t = Tunables::defaults(KernelVersion::V2_6_26, 1);
        t.set_latency(30_000_000).unwrap();
        // DIV_ROUND_UP(30ms, 4ms) = 8.
        assert_eq!(t.nr_latency, 8);
        assert!(t.set_latency(50).is_err());
        assert!(t.set_by_name("sched_wakeup_granularity_ns", 0).unwrap());
        assert!(!t.set_by_name("bogus", 1).unwrap());
        assert!(t.set_migration_cost(-2).is_err());
    }

    #[test]
    fn granularity_bounds_are_inclusive_and_negatives_are_refused_as_written() {
        // 2.6.26 kernel/sysctl.c:226-229: min_sched_granularity_ns 100000 and
        // max 1 s for latency and min_granularity; 0 to 1 s for wakeup granularity.
        let mut t = Tunables::defaults(KernelVersion::V2_6_26, 4);
        t.set_latency(SYSCTL_MAX_GRAN).unwrap();
        t.set_latency(SYSCTL_MIN_GRAN).unwrap();
        let err = t.set_latency(SYSCTL_MAX_GRAN + 1).unwrap_err();
        assert_eq!(
            err,
            TunableError { name: "sched_latency_ns", value: 1_000_000_001, range: (100_000, 1_000_000_000) }
        );
        assert_eq!(err.to_string(), "sched_latency_ns = 1000000001 is out of range 100000..=1000000000");
        assert!(t.set_latency(SYSCTL_MIN_GRAN - 1).is_err());
        let neg = t.set_by_name("sched_wakeup_granularity_ns", -5).unwrap_err();
        assert_eq!(neg, TunableError { name: "sched_wakeup_granularity_ns", value: -5, range: (0, 1_000_000_000) });
        let neg = t.set_by_name("latency", -1).unwrap_err();
        assert_eq!((neg.value, neg.range.0), (-1, 100_000));
        assert!(t.set_by_name("sched_wakeup_granularity_ns", 0).unwrap());
        assert_eq!(t.wakeup_granularity, 0);
    }

    #[test]
    fn min_granularity_recomputes_nr_latency() {
        // sched_nr_latency_handler: nr_latency = DIV_ROUND_UP(latency, min_granularity).
        // 2.6.26 at 4 CPUs boots 60 ms / 12 ms; min_granularity 4 ms gives
        // DIV_ROUND_UP(60, 4) = 15, and 7 ms DIV_ROUND_UP(60, 7) = 9.
        let mut t = Tunables::defaults(KernelVersion::V2_6_26, 4);
        t.set_min_granularity(4_000_000).unwrap();
        assert_eq!((t.min_granularity, t.nr_latency), (4_000_000, 15));
        assert!(t.set_by_name("sched_min_granularity_ns", 7_000_000).unwrap());
        assert_eq!((t.min_granularity, t.nr_latency), (7_000_000, 9));
    }

    #[test]
    fn migration_cost_takes_minus_one_to_uint_max() {
        // proc_dointvec: -1 is the kernel's "always cache hot" (task_hot returns 1),
        // 0 "never". The variable is an unsigned int, so -1 is stored as its bits,
        // 4,294,967,295, and writing 4,294,967,295 stores the same; 4,294,967,294
        // is the largest window. Below -1 or above 2^32 - 1 the kernel would wrap
        // the value; the port refuses, naming its range.
        let mut t = Tunables::defaults(KernelVersion::V2_6_26, 4);
        t.set_migration_cost(-1).unwrap();
        assert_eq!(t.migration_cost, 4_294_967_295);
        assert_eq!(t.migration_cost, Tunables::ALWAYS_HOT);
        t.set_migration_cost(0).unwrap();
        assert_eq!(t.migration_cost, 0);
        t.set_migration_cost(1).unwrap();
        assert_eq!(t.migration_cost, 1);
        t.set_migration_cost(4_294_967_294).unwrap();
        assert_eq!(t.migration_cost, 4_294_967_294);
        t.set_migration_cost(4_294_967_295).unwrap();
        assert_eq!(t.migration_cost, Tunables::ALWAYS_HOT);
        for bad in [-2, 4_294_967_296, i64::MAX, i64::MIN] {
            let err = t.set_migration_cost(bad).unwrap_err();
            assert_eq!((err.value, err.range), (bad, (-1, 4_294_967_295)));
        }
        assert_eq!(t.migration_cost, Tunables::ALWAYS_HOT, "a refused write leaves the value as it was");
        let err = t.set_by_name("sched_migration_cost", 5_000_000_000).unwrap_err();
        assert_eq!(err.to_string(), "sched_migration_cost = 5000000000 is out of range -1..=4294967295");
    }

    #[test]
    fn every_name_reaches_its_knob() {
        // Each /proc name (with or without the sched_ prefix and _ns suffix) writes its
        // own field; a value differing from the 2.6.26 defaults shows which.
        let mut t = Tunables::defaults(KernelVersion::V2_6_26, 4);
        assert!(t.set_by_name("sched_nr_migrate", 7).unwrap());
        assert_eq!(t.nr_migrate, 7);
        assert!(t.set_by_name("nr_migrate", 0).unwrap());
        assert_eq!(t.nr_migrate, 0);
        assert!(t.set_by_name("sched_nr_migrate", -1).is_err());
        assert!(t.set_by_name("sched_child_runs_first", 0).unwrap());
        assert!(!t.child_runs_first);
        assert!(t.set_by_name("sched_child_runs_first", 2).unwrap());
        assert!(t.child_runs_first);
        assert!(t.set_by_name("sched_compat_yield", 1).unwrap());
        assert!(t.compat_yield);
        assert!(t.set_by_name("sched_compat_yield", 0).unwrap());
        assert!(!t.compat_yield);
        // No kernel has a sched_nr_latency file: the name is unknown, and the
        // value stays what the latency handler last computed.
        let nr = t.nr_latency;
        assert_eq!(t.set_by_name("sched_nr_latency", 3), Ok(false));
        assert_eq!(t.nr_latency, nr);
        assert!(t.set_by_name(" sched_migration_cost ", 250_000).unwrap());
        assert_eq!(t.migration_cost, 250_000);
    }
}
