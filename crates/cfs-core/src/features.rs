//! `sched_features`: the numeric `/proc/sys/kernel/sched_features` mask as
//! a value.
//!
//! The same integer means different things in different kernels (bit 5 is
//! SYNC_WAKEUPS in 2.6.26 but ADAPTIVE_GRAN in 2.6.32), so a [`Features`]
//! value always carries the feature *table* of its kernel. A feature the
//! table does not have answers [`Features::has`] with what that kernel's
//! code does unconditionally (2.6.25 has no AFFINE_WAKEUPS bit and always
//! allows affine wakeups).
//!
//! Tables: 2.6.25 `kernel/sched.c` enum (4b119e21); 2.6.26-rc1..final
//! `kernel/sched_features.h` (unchanged across the rcs; bce7f793);
//! 2.6.32-rc1 = 2.6.32 `kernel/sched_features.h` (17d857be, 22763c5c).

use alloc::string::String;
use alloc::vec::Vec;
use cfs_topology::KernelVersion;
use core::fmt;

/// A scheduler feature bit, by name. Not every kernel has every feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Feature {
    NewFairSleepers,
    WakeupPreempt,
    StartDebit,
    AffineWakeups,
    CacheHotBuddy,
    SyncWakeups,
    Hrtick,
    DoubleTick,
    NormalizedSleeper,
    Deadline,
    // 2.6.32
    FairSleepers,
    GentleFairSleepers,
    AdaptiveGran,
    AsymGran,
    WakeupSync,
    WakeupOverlap,
    WakeupRunning,
    SyncLess,
    SyncMore,
    NextBuddy,
    LastBuddy,
    ArchPower,
    LbBias,
    LbSharesUpdate,
    AsymEffLoad,
    OwnerSpin,
}

impl Feature {
    /// The kernel's name (`SYNC_WAKEUPS`).
    pub const fn name(self) -> &'static str {
        use Feature::*;
        match self {
            NewFairSleepers => "NEW_FAIR_SLEEPERS",
            WakeupPreempt => "WAKEUP_PREEMPT",
            StartDebit => "START_DEBIT",
            AffineWakeups => "AFFINE_WAKEUPS",
            CacheHotBuddy => "CACHE_HOT_BUDDY",
            SyncWakeups => "SYNC_WAKEUPS",
            Hrtick => "HRTICK",
            DoubleTick => "DOUBLE_TICK",
            NormalizedSleeper => "NORMALIZED_SLEEPER",
            Deadline => "DEADLINE",
            FairSleepers => "FAIR_SLEEPERS",
            GentleFairSleepers => "GENTLE_FAIR_SLEEPERS",
            AdaptiveGran => "ADAPTIVE_GRAN",
            AsymGran => "ASYM_GRAN",
            WakeupSync => "WAKEUP_SYNC",
            WakeupOverlap => "WAKEUP_OVERLAP",
            WakeupRunning => "WAKEUP_RUNNING",
            SyncLess => "SYNC_LESS",
            SyncMore => "SYNC_MORE",
            NextBuddy => "NEXT_BUDDY",
            LastBuddy => "LAST_BUDDY",
            ArchPower => "ARCH_POWER",
            LbBias => "LB_BIAS",
            LbSharesUpdate => "LB_SHARES_UPDATE",
            AsymEffLoad => "ASYM_EFF_LOAD",
            OwnerSpin => "OWNER_SPIN",
        }
    }
}

use Feature::*;

/// (feature, default) in bit order, 2.6.25 (`enum` in sched.c).
const TABLE_2_6_25: &[(Feature, bool)] =
    &[(NewFairSleepers, true), (WakeupPreempt, true), (StartDebit, true), (Hrtick, true), (DoubleTick, false)];

/// 2.6.25 with Mike Galbraith's 2008-05-24 back-port: SYNC_WAKEUPS = 32,
/// default off (../shared/seeds/patches.md §2).
const TABLE_2_6_25_SYNC_BIT: &[(Feature, bool)] = &[
    (NewFairSleepers, true),
    (WakeupPreempt, true),
    (StartDebit, true),
    (Hrtick, true),
    (DoubleTick, false),
    (SyncWakeups, false),
];

/// 2.6.26-rc1 .. 2.6.26 `sched_features.h`: default 895.
const TABLE_2_6_26: &[(Feature, bool)] = &[
    (NewFairSleepers, true),
    (WakeupPreempt, true),
    (StartDebit, true),
    (AffineWakeups, true),
    (CacheHotBuddy, true),
    (SyncWakeups, true),
    (Hrtick, true),
    (DoubleTick, false),
    (NormalizedSleeper, true),
    (Deadline, true),
];

/// 2.6.32-rc1 = 2.6.32 `sched_features.h`: default 15834235.
const TABLE_2_6_32: &[(Feature, bool)] = &[
    (FairSleepers, true),
    (GentleFairSleepers, true),
    (NormalizedSleeper, false),
    (StartDebit, true),
    (WakeupPreempt, true),
    (AdaptiveGran, true),
    (AsymGran, true),
    (WakeupSync, false),
    (WakeupOverlap, false),
    (WakeupRunning, false),
    (SyncWakeups, true),
    (AffineWakeups, true),
    (SyncLess, true),
    (SyncMore, false),
    (NextBuddy, false),
    (LastBuddy, true),
    (CacheHotBuddy, true),
    (ArchPower, false),
    (Hrtick, false),
    (DoubleTick, false),
    (LbBias, true),
    (LbSharesUpdate, true),
    (AsymEffLoad, true),
    (OwnerSpin, true),
];

/// Which feature table a kernel (plus patches) uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureTable {
    /// 2.6.25.
    V2_6_25,
    /// 2.6.25 + the SYNC_WAKEUPS back-port.
    V2_6_25SyncBit,
    /// 2.6.26-rc1 .. final.
    V2_6_26,
    /// 2.6.32-rc1 and final.
    V2_6_32,
}

impl FeatureTable {
    /// The table of a kernel version; `sync_bit_backport` selects the
    /// patched 2.6.25 table.
    pub fn of(version: KernelVersion, sync_bit_backport: bool) -> Self {
        match version {
            KernelVersion::V2_6_25 if sync_bit_backport => FeatureTable::V2_6_25SyncBit,
            KernelVersion::V2_6_25 => FeatureTable::V2_6_25,
            KernelVersion::V2_6_26Rc4 | KernelVersion::V2_6_26 => FeatureTable::V2_6_26,
            KernelVersion::V2_6_32Rc1 | KernelVersion::V2_6_32 => FeatureTable::V2_6_32,
        }
    }

    fn entries(self) -> &'static [(Feature, bool)] {
        match self {
            FeatureTable::V2_6_25 => TABLE_2_6_25,
            FeatureTable::V2_6_25SyncBit => TABLE_2_6_25_SYNC_BIT,
            FeatureTable::V2_6_26 => TABLE_2_6_26,
            FeatureTable::V2_6_32 => TABLE_2_6_32,
        }
    }

    /// The default mask (`sysctl_sched_features` at boot).
    pub fn default_mask(self) -> u32 {
        self.entries().iter().enumerate().filter(|(_, (_, on))| *on).map(|(bit, _)| 1u32 << bit).sum()
    }

    /// All bits this table defines.
    pub fn valid_bits(self) -> u32 {
        ((1u64 << self.entries().len()) - 1) as u32
    }

    /// The mask bit of `f`, if this table has one. `sched_feat()` runs on
    /// every scheduler call, so this is a lookup in a table built at
    /// compile time rather than a search of the entries.
    fn bit_of(self, f: Feature) -> Option<u32> {
        let positions = match self {
            FeatureTable::V2_6_25 => &POSITIONS_2_6_25,
            FeatureTable::V2_6_25SyncBit => &POSITIONS_2_6_25_SYNC_BIT,
            FeatureTable::V2_6_26 => &POSITIONS_2_6_26,
            FeatureTable::V2_6_32 => &POSITIONS_2_6_32,
        };
        let bit = positions.get(f as usize).copied().unwrap_or(NO_BIT);
        (bit != NO_BIT).then(|| 1u32 << bit)
    }
}

/// Number of [`Feature`] variants (the last is `OwnerSpin`; a table entry
/// past it fails to compile, in `positions`).
const FEATURES: usize = Feature::OwnerSpin as usize + 1;
/// A feature the table has no bit for.
const NO_BIT: u8 = u8::MAX;

/// Bit position of each feature in `entries`, by the feature's number.
const fn positions(entries: &[(Feature, bool)]) -> [u8; FEATURES] {
    let mut out = [NO_BIT; FEATURES];
    let mut i = 0;
    while i < entries.len() {
        out[entries[i].0 as usize] = i as u8;
        i += 1;
    }
    out
}

const POSITIONS_2_6_25: [u8; FEATURES] = positions(TABLE_2_6_25);
const POSITIONS_2_6_25_SYNC_BIT: [u8; FEATURES] = positions(TABLE_2_6_25_SYNC_BIT);
const POSITIONS_2_6_26: [u8; FEATURES] = positions(TABLE_2_6_26);
const POSITIONS_2_6_32: [u8; FEATURES] = positions(TABLE_2_6_32);

/// What a kernel does for a feature it has no bit for.
///
/// 2.6.25 has no AFFINE_WAKEUPS, CACHE_HOT_BUDDY or SYNC_WAKEUPS bits: its
/// code always allows affine wakeups, always treats the buddy as cache hot,
/// and always honours the sync hint. (2.6.32 renamed NEW_FAIR_SLEEPERS to
/// FAIR_SLEEPERS; [`Features::has`] treats the two names as one.)
fn implicit(f: Feature) -> bool {
    matches!(f, AffineWakeups | CacheHotBuddy | SyncWakeups)
}

/// The value of `sysctl_sched_features` for one kernel.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features {
    table: FeatureTable,
    mask: u32,
}

/// Error building a [`Features`] value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeatureError {
    /// The mask sets bits the kernel has no feature for.
    UnknownBits {
        /// The offending bits.
        bits: u32,
        /// Highest valid mask for this kernel.
        valid: u32,
    },
    /// A name is not a feature of this kernel.
    UnknownName(String),
}

impl fmt::Display for FeatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureError::UnknownBits { bits, valid } => write!(
                f,
                "sched_features mask sets bits {bits:#x} this kernel does not define (valid bits: {valid:#x})"
            ),
            FeatureError::UnknownName(n) => write!(f, "unknown sched feature {n:?} for this kernel"),
        }
    }
}

impl core::error::Error for FeatureError {}

impl Features {
    /// The boot default of a table (895 for 2.6.26, 15 for 2.6.25,
    /// 15834235 for 2.6.32).
    pub fn default_for(table: FeatureTable) -> Self {
        Features { table, mask: table.default_mask() }
    }

    /// From the numeric `/proc` mask, as `echo 863 > sched_features` does.
    pub fn from_mask(table: FeatureTable, mask: u32) -> Result<Self, FeatureError> {
        let valid = table.valid_bits();
        if mask & !valid != 0 {
            return Err(FeatureError::UnknownBits { bits: mask & !valid, valid });
        }
        Ok(Features { table, mask })
    }

    /// Applies debugfs-style words: `NAME` sets, `NO_NAME` clears
    /// (f00b45c1459, 2.6.26-rc1), e.g. `"NO_SYNC_WAKEUPS NO_WAKEUP_PREEMPT"`.
    pub fn apply_names(mut self, words: &str) -> Result<Self, FeatureError> {
        for w in words.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()) {
            let (on, name) = match w.strip_prefix("NO_").or_else(|| w.strip_prefix("no_")) {
                Some(n) => (false, n),
                None => (true, w),
            };
            let bit = self
                .table
                .entries()
                .iter()
                .position(|(f, _)| f.name().eq_ignore_ascii_case(name))
                .map(|b| 1u32 << b)
                .ok_or_else(|| FeatureError::UnknownName(String::from(w)))?;
            if on {
                self.mask |= bit;
            } else {
                self.mask &= !bit;
            }
        }
        Ok(self)
    }

    /// The numeric mask.
    pub fn mask(&self) -> u32 {
        self.mask
    }

    /// The table.
    pub fn table(&self) -> FeatureTable {
        self.table
    }

    /// `sched_feat(x)`: whether the kernel's code path for `f` is on.
    pub fn has(&self, f: Feature) -> bool {
        let f = match (self.table, f) {
            (FeatureTable::V2_6_32, NewFairSleepers) => FairSleepers,
            (FeatureTable::V2_6_32, _) => f,
            (_, FairSleepers) => NewFairSleepers,
            _ => f,
        };
        match self.table.bit_of(f) {
            Some(bit) => self.mask & bit != 0,
            None => implicit(f),
        }
    }

    /// Sets or clears one feature; an error if the kernel has no such bit.
    pub fn set(&mut self, f: Feature, on: bool) -> Result<(), FeatureError> {
        let bit = self.table.bit_of(f).ok_or_else(|| FeatureError::UnknownName(String::from(f.name())))?;
        if on {
            self.mask |= bit;
        } else {
            self.mask &= !bit;
        }
        Ok(())
    }

    /// The names of every bit, with `NO_` before those that are off, in bit
    /// order (what the debugfs file prints).
    pub fn names(&self) -> Vec<String> {
        self.table
            .entries()
            .iter()
            .enumerate()
            .map(|(bit, (f, _))| {
                let mut s = String::new();
                if self.mask & (1 << bit) == 0 {
                    s.push_str("NO_");
                }
                s.push_str(f.name());
                s
            })
            .collect()
    }
}

impl fmt::Display for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (", self.mask)?;
        for (i, n) in self.names().iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(n)?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    /// The lookup gives each feature its position in the kernel's list:
    /// 2.6.26's sched_features.h numbers SYNC_WAKEUPS 5 (32) and DEADLINE
    /// 9 (512); the 2.6.25 back-port puts SYNC_WAKEUPS at 5 too; 2.6.32
    /// numbers SYNC_WAKEUPS 10 (1024) and OWNER_SPIN 23; a feature a table
    /// lacks has no bit.
    #[test]
    fn bits_are_the_positions_in_each_kernels_list() {
        use FeatureTable as T;
        let cases = [
            (T::V2_6_26, SyncWakeups, Some(32)),
            (T::V2_6_26, Deadline, Some(512)),
            (T::V2_6_26, NewFairSleepers, Some(1)),
            (T::V2_6_26, OwnerSpin, None),
            (T::V2_6_25, SyncWakeups, None),
            (T::V2_6_25, DoubleTick, Some(16)),
            (T::V2_6_25SyncBit, SyncWakeups, Some(32)),
            (T::V2_6_32, SyncWakeups, Some(1024)),
            (T::V2_6_32, OwnerSpin, Some(1 << 23)),
            (T::V2_6_32, Deadline, None),
        ];
        for (t, f, bit) in cases {
            assert_eq!(t.bit_of(f), bit, "{t:?} {f:?}");
        }
        for t in [T::V2_6_25, T::V2_6_25SyncBit, T::V2_6_26, T::V2_6_32] {
            for (i, (f, _)) in t.entries().iter().enumerate() {
                assert_eq!(t.bit_of(*f), Some(1 << i), "{t:?} {f:?}");
            }
        }
    }

    #[test]
    fn default_masks() {
        // 2.6.26: 1+2+4+8+16+32+64+256+512 = 895 (DOUBLE_TICK=128 off).
        assert_eq!(FeatureTable::V2_6_26.default_mask(), 895);
        // 2.6.25: 1+2+4+8 = 15.
        assert_eq!(FeatureTable::V2_6_25.default_mask(), 15);
        assert_eq!(FeatureTable::V2_6_25SyncBit.default_mask(), 15);
        // 2.6.32: bits 0,1,3,4,5,6,10,11,12,15,16,20,21,22,23 =
        // 1+2+8+16+32+64+1024+2048+4096+32768+65536+1048576+2097152+4194304+8388608 = 15834235.
        assert_eq!(FeatureTable::V2_6_32.default_mask(), 15_834_235);
    }

    #[test]
    fn seed_masks_decode() {
        let t = FeatureTable::V2_6_26;
        let f863 = Features::from_mask(t, 863).unwrap();
        assert!(!f863.has(SyncWakeups) && f863.has(WakeupPreempt));
        let f893 = Features::from_mask(t, 893).unwrap();
        assert!(f893.has(SyncWakeups) && !f893.has(WakeupPreempt));
        let f861 = Features::from_mask(t, 861).unwrap();
        assert!(!f861.has(SyncWakeups) && !f861.has(WakeupPreempt) && f861.has(AffineWakeups));
        let f0 = Features::from_mask(t, 0).unwrap();
        assert!(!f0.has(NewFairSleepers) && !f0.has(StartDebit));
        assert!(Features::from_mask(t, 1024).is_err());
        assert_eq!(f863.names()[5], "NO_SYNC_WAKEUPS");
    }

    #[test]
    fn absent_bits_use_the_kernels_fixed_behaviour() {
        let f = Features::default_for(FeatureTable::V2_6_25);
        assert!(f.has(AffineWakeups) && f.has(SyncWakeups) && f.has(CacheHotBuddy));
        assert!(!f.has(NormalizedSleeper));
        let patched = Features::default_for(FeatureTable::V2_6_25SyncBit);
        assert!(!patched.has(SyncWakeups), "back-port default off");
        let f32 = Features::default_for(FeatureTable::V2_6_32);
        assert!(f32.has(NewFairSleepers), "alias of FAIR_SLEEPERS");
    }

    #[test]
    fn a_mask_with_undefined_bits_is_refused_naming_them() {
        // 2.6.26 defines 10 bits (sched_features.h, NEW_FAIR_SLEEPERS .. DEADLINE): valid
        // 0x3ff. 895 | 1024 | 4096 sets bits 0x1400 beyond them.
        let t = FeatureTable::V2_6_26;
        let err = Features::from_mask(t, 895 | 1024 | 4096).unwrap_err();
        assert_eq!(err, FeatureError::UnknownBits { bits: 0x1400, valid: 0x3ff });
        assert_eq!(
            err.to_string(),
            "sched_features mask sets bits 0x1400 this kernel does not define (valid bits: 0x3ff)"
        );
        let name = Features::default_for(t).apply_names("NO_BOGUS").unwrap_err();
        assert_eq!(name.to_string(), "unknown sched feature \"NO_BOGUS\" for this kernel");
    }

    #[test]
    fn names_set_bits_as_well_as_clear_them() {
        // From 861 (SYNC_WAKEUPS 32 and WAKEUP_PREEMPT 2 off), naming both sets them
        // again: 861 + 32 + 2 = 895; a bit already on stays on.
        let t = FeatureTable::V2_6_26;
        let f = Features::from_mask(t, 861).unwrap().apply_names("SYNC_WAKEUPS,WAKEUP_PREEMPT HRTICK").unwrap();
        assert_eq!(f.mask(), 895);
    }

    #[test]
    fn fair_sleepers_is_new_fair_sleepers_before_2_6_32() {
        // 2.6.32 renamed bit 0 FAIR_SLEEPERS (and added GENTLE_FAIR_SLEEPERS); the
        // earlier kernels' NEW_FAIR_SLEEPERS is the same code path. 894 clears bit 0.
        let t = FeatureTable::V2_6_26;
        assert!(!Features::from_mask(t, 894).unwrap().has(FairSleepers));
        assert!(Features::from_mask(t, 895).unwrap().has(FairSleepers));
        assert!(!Features::from_mask(FeatureTable::V2_6_25, 14).unwrap().has(FairSleepers));
    }

    #[test]
    fn display_is_the_mask_then_the_debugfs_words() {
        // sched_feat_read (2.6.26 sched.c): every name in bit order, NO_ before those
        // off. 893 = 895 - 2 (WAKEUP_PREEMPT off); DOUBLE_TICK (128) is off by default.
        let f = Features::from_mask(FeatureTable::V2_6_26, 893).unwrap();
        let words = "NEW_FAIR_SLEEPERS NO_WAKEUP_PREEMPT START_DEBIT AFFINE_WAKEUPS CACHE_HOT_BUDDY \
                     SYNC_WAKEUPS HRTICK NO_DOUBLE_TICK NORMALIZED_SLEEPER DEADLINE";
        assert_eq!(f.to_string(), format!("893 ({words})"));
        assert_eq!(format!("{f:?}"), f.to_string());
    }

    #[test]
    fn names_round_trip() {
        let f = Features::default_for(FeatureTable::V2_6_26).apply_names("NO_SYNC_WAKEUPS NO_WAKEUP_PREEMPT").unwrap();
        assert_eq!(f.mask(), 861);
        assert!(Features::default_for(FeatureTable::V2_6_26).apply_names("NO_BOGUS").is_err());
    }
}
