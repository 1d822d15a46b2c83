//! Load weights and the kernel's fixed-point arithmetic.
//!
//! Ports (2.6.26, `kernel/sched.c` lines 1326-1460 at bce7f793): the
//! `prio_to_weight[]` / `prio_to_wmult[]` tables, `calc_delta_mine`,
//! `calc_delta_fair`, `update_load_add`/`update_load_sub`, and
//! `set_load_weight`.
//!
//! The kernel multiplies by a 32-bit inverse instead of dividing:
//!
//! ```text
//!   delta * weight / lw.weight  ~=  (delta * weight * inv_weight) >> 32,
//!   inv_weight = 2^32 / lw.weight (rounded, computed lazily for queues)
//! ```
//!
//! The rounding (`SRR`, shift-right-and-round) and the lazy inverse formula
//! make results differ from exact division by a few ns; we reproduce them
//! bit for bit, including C's wrapping `u64` overflow.

use cfs_topology::KernelVersion;

/// `NICE_0_LOAD` = `SCHED_LOAD_SCALE` = 1024: the weight of a nice-0 task.
pub const NICE_0_LOAD: u64 = 1024;

/// `WMULT_CONST` on 64-bit kernels (2^32).
pub const WMULT_CONST: u64 = 1 << 32;

/// `WMULT_SHIFT`.
pub const WMULT_SHIFT: u32 = 32;

/// `prio_to_weight[40]`, indexed by nice + 20. Identical in 2.6.25..2.6.32.
/// Each step is ~1.25x, so one nice level is ~10% of CPU between two tasks.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, // -20
    29154, 23254, 18705, 14949, 11916, // -15
    9548, 7620, 6100, 4904, 3906, // -10
    3121, 2501, 1991, 1586, 1277, // -5
    1024, 820, 655, 526, 423, // 0
    335, 272, 215, 172, 137, // 5
    110, 87, 70, 56, 45, // 10
    36, 29, 23, 18, 15, // 15
];

/// `prio_to_wmult[40]` = 2^32 / weight, precalculated, indexed by nice + 20.
pub const PRIO_TO_WMULT: [u64; 40] = [
    48388, 59856, 76040, 92818, 118348, // -20
    147320, 184698, 229616, 287308, 360437, // -15
    449829, 563644, 704093, 875809, 1099582, // -10
    1376151, 1717300, 2157191, 2708050, 3363326, // -5
    4194304, 5237765, 6557202, 8165337, 10153587, // 0
    12820798, 15790321, 19976592, 24970740, 31350126, // 5
    39045157, 49367440, 61356676, 76695844, 95443717, // 10
    119304647, 148102320, 186737708, 238609294, 286331153, // 15
];

/// `struct load_weight`: a weight and its cached 32-bit inverse
/// (0 = "not computed yet", filled lazily by [`calc_delta_mine`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadWeight {
    /// The weight (`unsigned long`).
    pub weight: u64,
    /// 2^32 / weight, or 0 when it must be recomputed.
    pub inv_weight: u64,
}

impl LoadWeight {
    /// A weight whose inverse is computed lazily (queue weights).
    pub const fn lazy(weight: u64) -> Self {
        LoadWeight { weight, inv_weight: 0 }
    }

    /// `update_load_add`: add and invalidate the inverse.
    pub fn add(&mut self, inc: u64) {
        self.weight = self.weight.wrapping_add(inc);
        self.inv_weight = 0;
    }

    /// `update_load_sub`: subtract and invalidate the inverse.
    pub fn sub(&mut self, dec: u64) {
        self.weight = self.weight.wrapping_sub(dec);
        self.inv_weight = 0;
    }
}

/// Scheduling policy of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "fuzzing", derive(arbitrary::Arbitrary))]
pub enum Policy {
    /// SCHED_NORMAL (SCHED_OTHER).
    #[default]
    Normal,
    /// SCHED_BATCH: nice-table weight, never wakeup-preempts, yields to the
    /// rightmost position.
    Batch,
    /// SCHED_IDLE: minimal weight.
    Idle,
}

impl Policy {
    /// Parses `normal`/`other`, `batch`, `idle` (any case).
    pub fn by_name(s: &str) -> Option<Policy> {
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" | "other" | "sched_normal" | "sched_other" => Some(Policy::Normal),
            "batch" | "sched_batch" => Some(Policy::Batch),
            "idle" | "sched_idle" => Some(Policy::Idle),
            _ => None,
        }
    }

    /// The `chrt`-style name [`Policy::by_name`] reads back: `normal`,
    /// `batch`, `idle`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "normal",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
        }
    }
}

/// Clamps a nice value to the kernel's range -20..=19.
pub fn clamp_nice(nice: i32) -> i32 {
    nice.clamp(-20, 19)
}

/// `set_load_weight` (2.6.26 sched.c:1526): the weight a task gets from
/// its policy and nice level. SCHED_IDLE is weight 2 / inverse 2^31 in
/// 2.6.25/26 and weight 3 / 1431655765 from 2.6.29 (6bc912b71b6), so in our
/// 2.6.32 profiles.
pub fn set_load_weight(policy: Policy, nice: i32, version: KernelVersion) -> LoadWeight {
    match policy {
        Policy::Idle if version.is_2_6_32() => LoadWeight { weight: 3, inv_weight: 1_431_655_765 },
        Policy::Idle => LoadWeight { weight: 2, inv_weight: 1 << 31 },
        Policy::Normal | Policy::Batch => {
            let i = (clamp_nice(nice) + 20) as usize;
            LoadWeight { weight: PRIO_TO_WEIGHT[i], inv_weight: PRIO_TO_WMULT[i] }
        }
    }
}

/// `SRR(x, y)`: shift right by `y` with round-half-up (C wrapping add).
#[inline]
pub const fn srr(x: u64, y: u32) -> u64 {
    x.wrapping_add(1u64 << (y - 1)) >> y
}

/// The lazy inverse of a queue weight.
///
/// 2.6.26 (and 2.6.32): `inv = 1 + (2^32 - w/2) / (w + 1)`, with `inv = 1`
/// when `w >= 2^32` (bce7f793 sched.c:1345-1350). 2.6.25 lacks both the
/// `1 +` and the guard; the `1 +` came with 2.6.26-rc1's reworked
/// calc_delta_mine, and rc4 has it without the guard (e490517a
/// sched.c:1380-1381), so there a weight past 2^33 wraps the numerator.
pub fn lazy_inverse(weight: u64, version: KernelVersion) -> u64 {
    match version {
        KernelVersion::V2_6_25 => WMULT_CONST.wrapping_sub(weight / 2) / weight.wrapping_add(1).max(1),
        KernelVersion::V2_6_26Rc4 => {
            1u64.wrapping_add(WMULT_CONST.wrapping_sub(weight / 2) / weight.wrapping_add(1).max(1))
        }
        _ if weight >= WMULT_CONST => 1,
        _ => 1 + (WMULT_CONST - weight / 2) / (weight + 1),
    }
}

/// `calc_delta_mine(delta_exec, weight, lw)`: `delta * weight / lw.weight`
/// with the kernel's 32-bit inverse, rounding and large-value path
/// (2.6.26 sched.c:1339).
///
/// If `tmp = delta * weight` exceeds 2^32 the product with the inverse
/// would overflow, so the kernel splits the shift: `SRR(SRR(tmp, 16) *
/// inv, 16)`. On 64-bit the final clamp to `LONG_MAX` cannot fire for the
/// values the scheduler passes, but we keep it.
pub fn calc_delta_mine(delta: u64, weight: u64, lw: &mut LoadWeight, version: KernelVersion) -> u64 {
    if lw.inv_weight == 0 {
        lw.inv_weight = lazy_inverse(lw.weight, version);
    }
    let tmp = delta.wrapping_mul(weight);
    let res = if tmp > WMULT_CONST {
        srr(srr(tmp, WMULT_SHIFT / 2).wrapping_mul(lw.inv_weight), WMULT_SHIFT / 2)
    } else {
        srr(tmp.wrapping_mul(lw.inv_weight), WMULT_SHIFT)
    };
    res.min(i64::MAX as u64)
}

/// `calc_delta_fair(delta, lw)` (2.6.25/2.6.26 final): `delta * 1024 / lw`.
pub fn calc_delta_fair(delta: u64, lw: &mut LoadWeight, version: KernelVersion) -> u64 {
    calc_delta_mine(delta, NICE_0_LOAD, lw, version)
}

#[cfg(test)]
mod tests {
    use super::*;
    const V26: KernelVersion = KernelVersion::V2_6_26;

    #[test]
    fn policies_parse_by_their_chrt_and_kernel_names() {
        for (names, want) in [
            (&["normal", "other", "SCHED_NORMAL", "sched_other", " Other "][..], Policy::Normal),
            (&["batch", "SCHED_BATCH"][..], Policy::Batch),
            (&["idle", "sched_idle"][..], Policy::Idle),
        ] {
            for n in names {
                assert_eq!(Policy::by_name(n), Some(want), "{n}");
            }
        }
        for p in [Policy::Normal, Policy::Batch, Policy::Idle] {
            assert_eq!(Policy::by_name(p.name()), Some(p));
        }
        for bad in ["", "fifo", "sched_rr", "batchy"] {
            assert_eq!(Policy::by_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn wmult_is_rounded_inverse_of_weight() {
        // prio_to_wmult[i] = round(2^32 / prio_to_weight[i]).
        for i in 0..40 {
            let w = PRIO_TO_WEIGHT[i] as f64;
            let inv = (4294967296.0 / w).round() as u64;
            assert!(inv.abs_diff(PRIO_TO_WMULT[i]) <= 1, "nice {}", i as i32 - 20);
        }
        assert_eq!(PRIO_TO_WEIGHT[20], 1024);
        assert_eq!(PRIO_TO_WMULT[20], 1 << 22);
    }

    #[test]
    fn lazy_inverse_matches_kernel_formula() {
        // W = 2048: 1 + (2^32 - 1024) / 2049 = 1 + 4294966272 / 2049 = 1 + 2096128 = 2096129.
        assert_eq!(lazy_inverse(2048, V26), 2_096_129);
        // 2.6.25: no "+1": 4294966272 / 2049 = 2096128.
        assert_eq!(lazy_inverse(2048, KernelVersion::V2_6_25), 2_096_128);
        // Overflow guard: w >= 2^32 -> 1.
        assert_eq!(lazy_inverse(1 << 32, V26), 1);
        // w = 0: 1 + 2^32 / 1.
        assert_eq!(lazy_inverse(0, V26), (1 << 32) + 1);
        // rc4 has the "+1" but no guard (e490517a sched.c:1380-1381): up to
        // w = 2^33 + 1 the quotient is 0 and the inverse 1, as with the guard;
        // at w = 2^33 + 2, 2^32 - w/2 wraps to 2^64 - 1, and
        // 1 + (2^64 - 1) / (2^33 + 3) = 1 + 2147483647 = 2147483648.
        assert_eq!(lazy_inverse(1 << 32, KernelVersion::V2_6_26Rc4), 1);
        assert_eq!(lazy_inverse((1 << 33) + 1, KernelVersion::V2_6_26Rc4), 1);
        assert_eq!(lazy_inverse((1 << 33) + 2, KernelVersion::V2_6_26Rc4), 2_147_483_648);
        assert_eq!(lazy_inverse((1 << 33) + 2, V26), 1);
    }

    #[test]
    fn calc_delta_mine_small_path() {
        // delta = 1_000_000 ns, weight 1024, queue W = 2048 (lazy inverse 2096129):
        // tmp = 1_024_000_000 <= 2^32, so SRR(tmp * inv, 32)
        //   = (1_024_000_000 * 2_096_129 + 2^31) >> 32
        //   = (2_146_436_096_000_000 + 2_147_483_648) >> 32 = 499_756 (exact: 500_000).
        let mut lw = LoadWeight::lazy(2048);
        let r = calc_delta_mine(1_000_000, 1024, &mut lw, V26);
        let expect = (1_024_000_000u64 * 2_096_129 + (1 << 31)) >> 32;
        assert_eq!(r, expect);
        assert_eq!(r, 499_756);
        assert_eq!(lw.inv_weight, 2_096_129, "inverse cached");
    }

    #[test]
    fn calc_delta_mine_large_path() {
        // delta = 10_000_000 ns, weight 1024: tmp = 10_240_000_000 > 2^32, so
        // SRR(SRR(tmp, 16) * inv, 16) with inv(3072) = 1 + (2^32 - 1536)/3073 = 1_397_646.
        // SRR(tmp,16) = (10_240_000_000 + 32768) >> 16 = 156_250 (exactly 156_250.5 -> 156_250)
        // (156_250 * 1_397_646 + 32768) >> 16 = 3_332_248.
        let mut lw = LoadWeight::lazy(3072);
        assert_eq!(lazy_inverse(3072, V26), 1_397_646);
        let a = (10_240_000_000u64 + 32768) >> 16;
        assert_eq!(a, 156_250);
        let expect = (a * 1_397_646 + 32768) >> 16;
        assert_eq!(calc_delta_mine(10_000_000, 1024, &mut lw, V26), expect);
        assert_eq!(expect, 3_332_248); // exact value 3_333_333
    }

    #[test]
    fn calc_delta_fair_uses_table_inverse_for_tasks() {
        // A nice -5 task (w 3121, inv 1376151): 4ms of runtime is
        // SRR(4e6*1024 ... ) -> tmp = 4_096_000_000 <= 2^32:
        // (4_096_000_000 * 1_376_151 + 2^31) >> 32 = 1_312_400.
        let mut lw = set_load_weight(Policy::Normal, -5, V26);
        let r = calc_delta_fair(4_000_000, &mut lw, V26);
        assert_eq!(r, (4_096_000_000u64 * 1_376_151 + (1 << 31)) >> 32);
        assert_eq!(r, 1_312_400);
    }

    #[test]
    fn load_add_sub_reset_inverse() {
        let mut lw = LoadWeight::lazy(1024);
        calc_delta_fair(1000, &mut lw, V26);
        assert_ne!(lw.inv_weight, 0);
        lw.add(1024);
        assert_eq!(lw, LoadWeight { weight: 2048, inv_weight: 0 });
        lw.sub(1024);
        assert_eq!(lw, LoadWeight { weight: 1024, inv_weight: 0 });
    }

    #[test]
    fn idle_and_nice_weights() {
        assert_eq!(set_load_weight(Policy::Idle, 0, V26).weight, 2);
        assert_eq!(set_load_weight(Policy::Idle, 0, KernelVersion::V2_6_32).weight, 3);
        assert_eq!(set_load_weight(Policy::Batch, 5, V26).weight, 335);
        assert_eq!(set_load_weight(Policy::Normal, 99, V26).weight, 15);
    }
}
