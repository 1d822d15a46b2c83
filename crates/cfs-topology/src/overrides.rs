//! User flag overrides per domain level: `MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,NODE:+PREFER_LOCAL`.
//!
//! # Grammar
//!
//! ```text
//! overrides = [ item *( "," item ) ]        ; empty = no overrides
//! item      = level ":" 1*change
//! level     = "SIBLING" / "SMT" / "MC" / "CPU" / "NODE" / "ALLNODES"
//! change    = ( "+" / "-" ) flag             ; + sets, - clears
//! flag      = an SD_* name, with or without the "SD_" prefix
//! ```
//!
//! Case-insensitive; spaces around tokens are ignored. `MC:-PREFER_LOCAL+WAKE_IDLE`
//! changes two flags of MC. Setting and clearing the same flag in one item is
//! an error.
//!
//! Items can go in at two points. [`SchedDomains::apply_overrides`] writes
//! them into built domains, in order, each into every domain of that level on
//! every CPU: after the builder's degenerate removal, so a level that was
//! removed is simply not there (what the `sched_domain` sysctl can do to a
//! running kernel). [`InitFlagEdits`], given to the builder as
//! [`crate::builder::BuildOptions::init_flags`], edits the `SD_*_INIT`
//! initialisers instead, so group power and degenerate removal see them (what
//! a patch to the initialisers does to the kernel built from it).

use crate::domain::{DomainLevel, SchedDomains, SdFlags};
use crate::version::KernelVersion;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// One `LEVEL:±FLAG...` item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlagOverride {
    /// The level whose domains change.
    pub level: DomainLevel,
    /// Flags to set.
    pub set: SdFlags,
    /// Flags to clear.
    pub clear: SdFlags,
}

/// Why an override string was rejected. Each variant quotes the item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    /// Two commas in a row, or a leading/trailing comma.
    #[error("empty override item at position {0} (items are LEVEL:+FLAG or LEVEL:-FLAG, comma separated)")]
    EmptyItem(usize),
    /// No `:` between level and flags.
    #[error("override {0:?} lacks `:` (expected e.g. MC:-PREFER_LOCAL)")]
    MissingColon(String),
    /// The level name is unknown.
    #[error("override {item:?}: unknown level {level:?} (known: SIBLING, MC, CPU, NODE, ALLNODES)")]
    UnknownLevel {
        /// The whole item.
        item: String,
        /// The level as written.
        level: String,
    },
    /// A flag was not preceded by `+` or `-`, or nothing followed the `:`.
    #[error("override {item:?}: expected +FLAG or -FLAG at {rest:?}")]
    MissingSign {
        /// The whole item.
        item: String,
        /// The text where a sign was expected.
        rest: String,
    },
    /// The flag name is unknown.
    #[error("override {item:?}: unknown flag {flag:?} (e.g. PREFER_LOCAL, WAKE_AFFINE, BALANCE_NEWIDLE)")]
    UnknownFlag {
        /// The whole item.
        item: String,
        /// The flag as written.
        flag: String,
    },
    /// The same flag is both set and cleared in one item.
    #[error("override {item:?} both sets and clears {flag}")]
    Conflict {
        /// The whole item.
        item: String,
        /// The flag's kernel name.
        flag: &'static str,
    },
    /// The flag does not exist in the chosen kernel (e.g. WAKE_IDLE on 2.6.32).
    #[error("{flag} does not exist in {version}")]
    NotInKernel {
        /// The flag's kernel name.
        flag: &'static str,
        /// The kernel.
        version: KernelVersion,
    },
}

/// Parses an override list (see the module docs).
pub fn parse_flag_overrides(s: &str) -> Result<Vec<FlagOverride>, OverrideError> {
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    s.split(',').enumerate().map(|(i, item)| parse_item(i, item.trim())).collect()
}

/// Parses an override list and checks every flag exists in `version`.
pub fn parse_flag_overrides_for(s: &str, version: KernelVersion) -> Result<Vec<FlagOverride>, OverrideError> {
    let list = parse_flag_overrides(s)?;
    for o in &list {
        o.check_version(version)?;
    }
    Ok(list)
}

impl FlagOverride {
    /// Errors if a flag this override names is not in `version`'s
    /// `include/linux/sched.h`.
    pub fn check_version(&self, version: KernelVersion) -> Result<(), OverrideError> {
        match (self.set | self.clear).iter().find(|f| f.kernel_value(version) == 0) {
            Some(f) => Err(OverrideError::NotInKernel { flag: f.names().next().unwrap_or("?"), version }),
            None => Ok(()),
        }
    }
}

/// Edits to the `SD_*_INIT` initialisers, one combined (set, clear) pair
/// per level: what a change to `include/linux/topology.h` or
/// `arch/x86/include/asm/topology.h` does to the kernel it builds.
///
/// The builder ([`crate::builder::BuildOptions::init_flags`]) applies them
/// as it makes each domain, before `set_domain_attribute`, group power and
/// degenerate removal read the flags, as an edited initialiser would be.
/// The same items applied to built domains
/// ([`SchedDomains::apply_overrides`]) reach only the levels that survived:
/// on a one-node host built with CONFIG_NUMA, 799e2205ec6's edits
/// (`MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,NODE:+PREFER_LOCAL`) keep a NODE
/// level that the unedited flags drop under 2.6.32-rc1
/// (`sd_parent_degenerate`: PREFER_LOCAL is then a flag the CPU child
/// lacks), and `MC:-SHARE_PKG_RESOURCES` changes the CPU-level groups'
/// `cpu_power` in 2.6.25/26.
///
/// Items compose in order, each clearing then setting as
/// [`SchedDomains::override_flags`] does, so a level's edits can be written
/// as one pair. The type is `Copy` and hashable, like the rest of
/// `BuildOptions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct InitFlagEdits {
    /// (set, clear) per level, indexed by `DomainLevel as usize`.
    edits: [(SdFlags, SdFlags); DomainLevel::ALL.len()],
}

impl InitFlagEdits {
    /// No edits: the kernel's own initialisers.
    pub const fn none() -> Self {
        InitFlagEdits { edits: [(SdFlags::empty(), SdFlags::empty()); DomainLevel::ALL.len()] }
    }

    /// These edits followed by clearing `clear` and setting `set` on `level`.
    ///
    /// Clear-then-set twice is clear-then-set once: after (s1, c1) then
    /// (s2, c2) a flag ends set if s2 sets it, or s1 did and c2 does not
    /// clear it; every other flag either clears is cleared. So the pair is
    /// ((s1 − c2) | s2, c1 | c2), kept as (set, clear − set).
    #[must_use]
    pub fn with(mut self, level: DomainLevel, set: SdFlags, clear: SdFlags) -> Self {
        let (s1, c1) = self.edits[level as usize];
        let set = (s1 - clear) | set;
        // A flag that ends set need not be cleared first: leaving it out of
        // `clear` keeps the pair canonical, so edits that apply alike
        // compare equal and `iter` never yields an item that both sets and
        // clears a flag.
        self.edits[level as usize] = (set, (c1 | clear) - set);
        self
    }

    /// These edits followed by each of `overrides` in order.
    #[must_use]
    pub fn with_overrides(self, overrides: &[FlagOverride]) -> Self {
        overrides.iter().fold(self, |e, o| e.with(o.level, o.set, o.clear))
    }

    /// `flags` of a `level` domain as the edited initialiser gives them.
    pub fn apply(&self, level: DomainLevel, flags: SdFlags) -> SdFlags {
        let (set, clear) = self.edits[level as usize];
        (flags - clear) | set
    }

    /// Whether no level is edited.
    pub fn is_empty(&self) -> bool {
        self.edits.iter().all(|(s, c)| s.is_empty() && c.is_empty())
    }

    /// The edited levels with their combined (set, clear), lowest level first.
    pub fn iter(&self) -> impl Iterator<Item = FlagOverride> + '_ {
        DomainLevel::ALL
            .iter()
            .zip(self.edits.iter())
            .filter(|(_, (s, c))| !(s.is_empty() && c.is_empty()))
            .map(|(&level, &(set, clear))| FlagOverride { level, set, clear })
    }
}

impl SchedDomains {
    /// Applies overrides in order; returns how many domains were changed.
    pub fn apply_overrides(&mut self, overrides: &[FlagOverride]) -> usize {
        overrides.iter().map(|o| self.override_flags(o.level, o.set, o.clear)).sum()
    }
}

fn parse_item(index: usize, item: &str) -> Result<FlagOverride, OverrideError> {
    if item.is_empty() {
        return Err(OverrideError::EmptyItem(index));
    }
    let (level_str, changes) = item.split_once(':').ok_or_else(|| OverrideError::MissingColon(item.to_string()))?;
    let level = DomainLevel::by_name(level_str)
        .ok_or_else(|| OverrideError::UnknownLevel { item: item.to_string(), level: level_str.trim().to_string() })?;
    let (set, clear) = parse_changes(item, changes.trim())?;
    if let Some(flag) = (set & clear).names().next() {
        return Err(OverrideError::Conflict { item: item.to_string(), flag });
    }
    Ok(FlagOverride { level, set, clear })
}

/// `+A-B+C` -> (set, clear).
fn parse_changes(item: &str, mut rest: &str) -> Result<(SdFlags, SdFlags), OverrideError> {
    let (mut set, mut clear) = (SdFlags::empty(), SdFlags::empty());
    if rest.is_empty() {
        return Err(OverrideError::MissingSign { item: item.to_string(), rest: String::new() });
    }
    while !rest.is_empty() {
        let sign = rest.as_bytes()[0];
        if sign != b'+' && sign != b'-' {
            return Err(OverrideError::MissingSign { item: item.to_string(), rest: rest.to_string() });
        }
        let body = &rest[1..];
        let end = body.find(['+', '-']).unwrap_or(body.len());
        let name = body[..end].trim();
        let flag = SdFlags::by_name(name)
            .ok_or_else(|| OverrideError::UnknownFlag { item: item.to_string(), flag: name.to_string() })?;
        if sign == b'+' {
            set |= flag;
        } else {
            clear |= flag;
        }
        rest = body[end..].trim_start();
    }
    Ok((set, clear))
}
