//! Kernel versions ("profiles") whose domain builders and fair class we model.

use core::fmt;
use core::str::FromStr;

/// A kernel release whose scheduler behaviour is modelled.
///
/// Lives in the lowest crate because both the domain builder (here) and the
/// fair class (`cfs-core`) switch on it. Ordering follows release order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "fuzzing", derive(arbitrary::Arbitrary))]
pub enum KernelVersion {
    /// v2.6.25, commit 4b119e21d0c6, as a kernel without group scheduling.
    /// (Its Kconfig defaulted GROUP_SCHED to on, grouping tasks by user id,
    /// until aac6abca858 in 2.6.26-rc1; cfs-core's `Config::group_sched`
    /// builds it that way, see docs/CALIBRATION.md §1.)
    #[serde(rename = "2.6.25")]
    V2_6_25,
    /// v2.6.26-rc4, commit e490517a039a: before b3137bc8e77 (the unbalanced
    /// sync shortcut) and with the rc1..rc4 weight arithmetic (8f1bc385cfb).
    #[serde(rename = "2.6.26-rc4")]
    V2_6_26Rc4,
    /// v2.6.26, commit bce7f793daec: the baseline.
    #[serde(rename = "2.6.26")]
    V2_6_26,
    /// v2.6.32-rc1, commit 17d857be649a: SD_PREFER_LOCAL on MC and CPU.
    #[serde(rename = "2.6.32-rc1")]
    V2_6_32Rc1,
    /// v2.6.32, commit 22763c5cf369.
    #[serde(rename = "2.6.32")]
    V2_6_32,
}

impl KernelVersion {
    /// Every modelled version, oldest first.
    pub const ALL: [KernelVersion; 5] = [
        KernelVersion::V2_6_25,
        KernelVersion::V2_6_26Rc4,
        KernelVersion::V2_6_26,
        KernelVersion::V2_6_32Rc1,
        KernelVersion::V2_6_32,
    ];

    /// The name users type (`2.6.26-rc4`).
    pub const fn name(self) -> &'static str {
        match self {
            KernelVersion::V2_6_25 => "2.6.25",
            KernelVersion::V2_6_26Rc4 => "2.6.26-rc4",
            KernelVersion::V2_6_26 => "2.6.26",
            KernelVersion::V2_6_32Rc1 => "2.6.32-rc1",
            KernelVersion::V2_6_32 => "2.6.32",
        }
    }

    /// The mainline commit of the release (full id).
    pub const fn commit(self) -> &'static str {
        match self {
            KernelVersion::V2_6_25 => "4b119e21d0c66c22e8ca03df05d9de623d0eb50f",
            KernelVersion::V2_6_26Rc4 => "e490517a039a99d692cb3a5561941b0a5f576172",
            KernelVersion::V2_6_26 => "bce7f793daec3e65ec5c5705d2457b81fe7b5725",
            KernelVersion::V2_6_32Rc1 => "17d857be649a21ca90008c6dc425d849fa83db5c",
            KernelVersion::V2_6_32 => "22763c5cf3690a681551162c15d34d935308c8d7",
        }
    }

    /// True for the 2.6.32 family (rc1 and final), whose wakeup path,
    /// flag values and domain initialisers differ from 2.6.25/26.
    #[inline]
    pub const fn is_2_6_32(self) -> bool {
        matches!(self, KernelVersion::V2_6_32Rc1 | KernelVersion::V2_6_32)
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown version name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown kernel profile {0:?} (known: 2.6.25, 2.6.26-rc4, 2.6.26, 2.6.32-rc1, 2.6.32)")]
pub struct UnknownVersion(pub alloc::string::String);

impl FromStr for KernelVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        KernelVersion::ALL
            .into_iter()
            .find(|v| v.name() == t)
            .ok_or_else(|| UnknownVersion(alloc::string::String::from(t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn every_profile_name_parses_back_to_itself() {
        for v in KernelVersion::ALL {
            assert_eq!(v.name().parse::<KernelVersion>(), Ok(v));
            assert_eq!(format_args!(" {v} ").to_string().parse::<KernelVersion>(), Ok(v), "surrounding blanks");
        }
        let err = "2.6.27".parse::<KernelVersion>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown kernel profile \"2.6.27\" (known: 2.6.25, 2.6.26-rc4, 2.6.26, 2.6.32-rc1, 2.6.32)"
        );
    }
}
