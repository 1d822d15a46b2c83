//! Scheduling domains: the static description a kernel builds at boot.
//!
//! This module holds the *types*; [`crate::builder`] fills them in the way
//! each kernel release's x86 code does. Runtime balance state
//! (`last_balance`, `balance_interval`, `nr_balance_failed`) is not here: it
//! belongs to the scheduler (`cfs-core`), which keeps one copy per CPU per
//! level exactly as the kernel does.

use crate::cpumask::{CpuId, CpuMask};
use crate::version::KernelVersion;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::ops::Deref;

bitflags::bitflags! {
    /// `SD_*` domain flags, by name.
    ///
    /// The numeric values differ between releases (2.6.26's `SD_WAKE_BALANCE`
    /// = 64 is 2.6.32's `SD_PREFER_LOCAL` = 0x40), so the bits here are our
    /// own; [`SdFlags::kernel_value`] gives the number a given kernel prints.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
    pub struct SdFlags: u32 {
        /// SD_LOAD_BALANCE: do load balancing on this domain.
        const LOAD_BALANCE = 1 << 0;
        /// SD_BALANCE_NEWIDLE: balance when about to become idle.
        const BALANCE_NEWIDLE = 1 << 1;
        /// SD_BALANCE_EXEC: balance on exec.
        const BALANCE_EXEC = 1 << 2;
        /// SD_BALANCE_FORK: balance on fork/clone.
        const BALANCE_FORK = 1 << 3;
        /// SD_WAKE_IDLE (2.6.25/26): wake to an idle CPU of the domain.
        const WAKE_IDLE = 1 << 4;
        /// SD_WAKE_AFFINE: wake the task on the waking CPU when cheap.
        const WAKE_AFFINE = 1 << 5;
        /// SD_WAKE_BALANCE (2.6.25/26): passive balancing at wakeup.
        const WAKE_BALANCE = 1 << 6;
        /// SD_SHARE_CPUPOWER: members share CPU power (SMT siblings).
        const SHARE_CPUPOWER = 1 << 7;
        /// SD_POWERSAVINGS_BALANCE.
        const POWERSAVINGS_BALANCE = 1 << 8;
        /// SD_SHARE_PKG_RESOURCES: members share a cache.
        const SHARE_PKG_RESOURCES = 1 << 9;
        /// SD_SERIALIZE: one balancer at a time system-wide.
        const SERIALIZE = 1 << 10;
        /// SD_WAKE_IDLE_FAR (2.6.26): wake_idle even when cache-hot is lost.
        const WAKE_IDLE_FAR = 1 << 11;
        /// SD_BALANCE_WAKE (2.6.32): balance on wakeup.
        const BALANCE_WAKE = 1 << 12;
        /// SD_PREFER_LOCAL (2.6.32-rc1..rc5): keep fork/exec/wake local
        /// while the domain has spare capacity.
        const PREFER_LOCAL = 1 << 13;
        /// SD_PREFER_SIBLING (2.6.32): prefer placing on a sibling domain.
        const PREFER_SIBLING = 1 << 14;
    }
}

/// (name, our flag, 2.6.25/26 value, 2.6.32 value); 0 = not in that kernel.
const FLAG_VALUES: [(&str, SdFlags, u32, u32); 15] = [
    ("SD_LOAD_BALANCE", SdFlags::LOAD_BALANCE, 1, 0x1),
    ("SD_BALANCE_NEWIDLE", SdFlags::BALANCE_NEWIDLE, 2, 0x2),
    ("SD_BALANCE_EXEC", SdFlags::BALANCE_EXEC, 4, 0x4),
    ("SD_BALANCE_FORK", SdFlags::BALANCE_FORK, 8, 0x8),
    ("SD_WAKE_IDLE", SdFlags::WAKE_IDLE, 16, 0),
    ("SD_WAKE_AFFINE", SdFlags::WAKE_AFFINE, 32, 0x20),
    ("SD_WAKE_BALANCE", SdFlags::WAKE_BALANCE, 64, 0),
    ("SD_SHARE_CPUPOWER", SdFlags::SHARE_CPUPOWER, 128, 0x80),
    ("SD_POWERSAVINGS_BALANCE", SdFlags::POWERSAVINGS_BALANCE, 256, 0x100),
    ("SD_SHARE_PKG_RESOURCES", SdFlags::SHARE_PKG_RESOURCES, 512, 0x200),
    ("SD_SERIALIZE", SdFlags::SERIALIZE, 1024, 0x400),
    ("SD_WAKE_IDLE_FAR", SdFlags::WAKE_IDLE_FAR, 2048, 0),
    ("SD_BALANCE_WAKE", SdFlags::BALANCE_WAKE, 0, 0x10),
    ("SD_PREFER_LOCAL", SdFlags::PREFER_LOCAL, 0, 0x40),
    ("SD_PREFER_SIBLING", SdFlags::PREFER_SIBLING, 0, 0x1000),
];

impl SdFlags {
    /// The integer `flags` field the given kernel would hold (its
    /// `include/linux/sched.h` values). Flags that kernel does not have
    /// contribute nothing.
    #[inline]
    pub fn kernel_value(self, v: KernelVersion) -> u32 {
        FLAG_VALUES
            .iter()
            .filter(|(_, f, _, _)| self.contains(*f))
            .map(|&(_, _, old, new)| if v.is_2_6_32() { new } else { old })
            .sum()
    }

    /// Decodes a kernel's numeric flags value. Unknown bits are an error.
    pub fn from_kernel_value(v: KernelVersion, value: u32) -> Option<SdFlags> {
        let mut rest = value;
        let mut out = SdFlags::empty();
        for &(_, f, old, new) in FLAG_VALUES.iter() {
            let bit = if v.is_2_6_32() { new } else { old };
            if bit != 0 && rest & bit != 0 {
                out |= f;
                rest &= !bit;
            }
        }
        (rest == 0).then_some(out)
    }

    /// Looks a flag up by its kernel name, with or without the `SD_` prefix,
    /// case-insensitively (`PREFER_LOCAL`, `sd_wake_affine`).
    pub fn by_name(name: &str) -> Option<SdFlags> {
        let n = name.trim();
        FLAG_VALUES.iter().find_map(|&(full, f, _, _)| {
            let short = &full[3..];
            (full.eq_ignore_ascii_case(n) || short.eq_ignore_ascii_case(n)).then_some(f)
        })
    }

    /// The kernel names of the set flags, in kernel bit order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        FLAG_VALUES.iter().filter(move |(_, f, _, _)| self.contains(*f)).map(|(n, _, _, _)| *n)
    }
}

/// The level of a domain (`enum sched_domain_level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum DomainLevel {
    /// SMT siblings (SD_SIBLING_INIT).
    Sibling,
    /// Cores sharing the last-level cache (SD_MC_INIT).
    Mc,
    /// The physical level: all CPUs of a node (SD_CPU_INIT).
    Cpu,
    /// NUMA: this node and its nearest neighbours (SD_NODE_INIT).
    Node,
    /// NUMA: all nodes (SD_ALLNODES_INIT).
    AllNodes,
}

impl DomainLevel {
    /// Every level, lowest first (`DomainLevel as usize` indexes it).
    pub const ALL: [DomainLevel; 5] =
        [DomainLevel::Sibling, DomainLevel::Mc, DomainLevel::Cpu, DomainLevel::Node, DomainLevel::AllNodes];

    /// The kernel's debug name (`SIBLING`, `MC`, `CPU`, `NODE`, `ALLNODES`).
    pub const fn name(self) -> &'static str {
        match self {
            DomainLevel::Sibling => "SIBLING",
            DomainLevel::Mc => "MC",
            DomainLevel::Cpu => "CPU",
            DomainLevel::Node => "NODE",
            DomainLevel::AllNodes => "ALLNODES",
        }
    }

    /// Parses `SIBLING`/`SMT`, `MC`, `CPU`, `NODE`, `ALLNODES` (any case).
    pub fn by_name(name: &str) -> Option<DomainLevel> {
        let n = name.trim();
        [
            ("SIBLING", DomainLevel::Sibling),
            ("SMT", DomainLevel::Sibling),
            ("MC", DomainLevel::Mc),
            ("CPU", DomainLevel::Cpu),
            ("NODE", DomainLevel::Node),
            ("ALLNODES", DomainLevel::AllNodes),
        ]
        .into_iter()
        .find_map(|(s, l)| s.eq_ignore_ascii_case(n).then_some(l))
    }
}

impl fmt::Display for DomainLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A balancing group of a domain (`struct sched_group`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedGroup {
    /// The CPUs of the group.
    pub cpus: CpuMask,
    /// `__cpu_power` (SCHED_LOAD_SCALE = 1024 is one full CPU).
    pub cpu_power: u32,
}

/// A domain's groups as the kernel links them: one circular list per
/// level and span, shared by every CPU of the span, which enters it at its
/// own group (`sd->groups` points at the local group, and `group->next`
/// goes round).
///
/// The list is built once and shared ([`Arc`]); each CPU's domain keeps
/// only where it enters. A flat 1,024-CPU host has 1,024 groups at its CPU
/// level, and a copy per CPU would be 1,024² groups. The shared list holds
/// the groups twice over, so that the view from any entry is one slice:
/// a `GroupRing` dereferences to `[SchedGroup]`, index 0 being the entry
/// (the local group once [`crate::builder`] has set it) and the last index
/// the group before it.
///
/// Two rings are equal when they list the same groups from their entries.
#[derive(Clone, Default)]
pub struct GroupRing {
    /// The list, then the list again.
    twice: Arc<[SchedGroup]>,
    entry: usize,
}

impl GroupRing {
    /// A ring over `groups`, entered at the first.
    pub fn new(groups: Vec<SchedGroup>) -> Self {
        let mut twice = groups.clone();
        twice.extend(groups);
        GroupRing { twice: twice.into(), entry: 0 }
    }

    /// The same shared list entered at the group now at index `i` (taken
    /// modulo the length; an empty ring stays empty).
    pub fn entered_at(&self, i: usize) -> Self {
        let len = self.len();
        let entry = if len == 0 { 0 } else { (self.entry + i % len) % len };
        GroupRing { twice: Arc::clone(&self.twice), entry }
    }

    /// Where this view enters the shared list, as an index of the list in
    /// its built order.
    #[inline]
    pub fn entry(&self) -> usize {
        self.entry
    }

    /// The groups from the entry round to the one before it.
    #[inline]
    pub fn as_slice(&self) -> &[SchedGroup] {
        let len = self.twice.len() / 2;
        &self.twice[self.entry..self.entry + len]
    }

    /// The shared list in the order it was built, whatever the entry.
    pub fn built_order(&self) -> &[SchedGroup] {
        &self.twice[..self.twice.len() / 2]
    }

    /// Whether two rings share one list (as two CPUs of a span do).
    pub fn shares_list_with(&self, other: &GroupRing) -> bool {
        Arc::ptr_eq(&self.twice, &other.twice)
    }
}

impl Deref for GroupRing {
    type Target = [SchedGroup];

    #[inline]
    fn deref(&self) -> &[SchedGroup] {
        self.as_slice()
    }
}

impl PartialEq for GroupRing {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for GroupRing {}

impl fmt::Debug for GroupRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl From<Vec<SchedGroup>> for GroupRing {
    fn from(groups: Vec<SchedGroup>) -> Self {
        GroupRing::new(groups)
    }
}

impl FromIterator<SchedGroup> for GroupRing {
    fn from_iter<I: IntoIterator<Item = SchedGroup>>(iter: I) -> Self {
        GroupRing::new(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a GroupRing {
    type Item = &'a SchedGroup;
    type IntoIter = core::slice::Iter<'a, SchedGroup>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

/// The tunable parameters of a domain, from its `SD_*_INIT` initialiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DomainParams {
    /// `min_interval`, ms.
    pub min_interval: u32,
    /// `max_interval`, ms.
    pub max_interval: u32,
    /// `busy_factor`.
    pub busy_factor: u32,
    /// `imbalance_pct`.
    pub imbalance_pct: u32,
    /// `cache_nice_tries`.
    pub cache_nice_tries: u32,
    /// `busy_idx`.
    pub busy_idx: u8,
    /// `idle_idx`.
    pub idle_idx: u8,
    /// `newidle_idx`.
    pub newidle_idx: u8,
    /// `wake_idx`.
    pub wake_idx: u8,
    /// `forkexec_idx`.
    pub forkexec_idx: u8,
    /// `smt_gain` (2.6.32 only; 0 elsewhere).
    pub smt_gain: u32,
    /// Initial `balance_interval`, ms (1, or 64 for ALLNODES).
    pub balance_interval: u32,
}

/// One level of one CPU's domain hierarchy (`struct sched_domain`, static part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedDomain {
    /// Which initialiser built it.
    pub level: DomainLevel,
    /// All CPUs of the domain.
    pub span: CpuMask,
    /// The groups, in the kernel's list order from the owning CPU's group
    /// (the "local group", index 0) on; the list is shared with the other
    /// CPUs of the span.
    pub groups: GroupRing,
    /// The `SD_*` flags.
    pub flags: SdFlags,
    /// The numeric parameters.
    pub params: DomainParams,
}

impl SchedDomain {
    /// Index of the group that contains `cpu`, if any.
    #[inline]
    pub fn group_of(&self, cpu: CpuId) -> Option<usize> {
        self.groups.iter().position(|g| g.cpus.contains(cpu))
    }
}

/// The domain hierarchies of all CPUs of a host under one kernel profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedDomains {
    /// The kernel whose builder produced this.
    pub version: KernelVersion,
    /// `per_cpu[cpu]` lists that CPU's domains bottom-up (index 0 is the
    /// lowest surviving level). Empty when every level was removed (a
    /// single-CPU host on 2.6.32: "attaching NULL sched-domain"; 2.6.25/26
    /// keep a one-CPU CPU level there, see [`crate::builder::attach_domain`]).
    pub per_cpu: Vec<Vec<SchedDomain>>,
}

impl SchedDomains {
    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.per_cpu.len()
    }

    /// The domains of `cpu`, bottom-up.
    #[inline]
    pub fn of(&self, cpu: CpuId) -> &[SchedDomain] {
        self.per_cpu.get(cpu).map(|v| v.as_slice()).unwrap_or(&[])
    }

    /// Sets and clears flags on every domain of the given level, on all CPUs
    /// (what a user does to test "SD_PREFER_LOCAL off on MC"). Returns how
    /// many domains were changed.
    pub fn override_flags(&mut self, level: DomainLevel, set: SdFlags, clear: SdFlags) -> usize {
        let mut n = 0;
        for doms in &mut self.per_cpu {
            for d in doms.iter_mut().filter(|d| d.level == level) {
                d.flags = (d.flags - clear) | set;
                n += 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn ring(cpus: &[usize]) -> GroupRing {
        cpus.iter().map(|&c| SchedGroup { cpus: CpuMask::single(c), cpu_power: 1024 }).collect()
    }

    fn firsts(r: &GroupRing) -> Vec<usize> {
        r.iter().map(|g| g.cpus.first().unwrap()).collect()
    }

    /// Entering at index i of an entered ring counts from its entry, and
    /// wraps (the entry is an index of the list as built): [0 1 2 3] entered at 3 is [3 0 1 2]; that entered at 2 is
    /// [1 2 3 0]; 6 ≡ 2 (mod 4) gives the same.
    #[test]
    fn entry_counts_from_the_current_entry_and_wraps() {
        let r = ring(&[0, 1, 2, 3]);
        let at3 = r.entered_at(3);
        assert_eq!(firsts(&at3), [3, 0, 1, 2]);
        assert_eq!(firsts(&at3.entered_at(2)), [1, 2, 3, 0]);
        assert_eq!((at3.entry(), at3.entered_at(2).entry()), (3, 1));
        // usize::MAX ≡ 3 (mod 4), taken before adding, so no overflow.
        assert_eq!(firsts(&r.entered_at(usize::MAX)), [3, 0, 1, 2]);
        assert_eq!(firsts(&GroupRing::from(at3.built_order().to_vec())), [0, 1, 2, 3]);
        assert_eq!(at3.entered_at(6), at3.entered_at(2));
        assert_eq!(
            (at3[1].cpus, at3.get(3).map(|g| g.cpus), at3.get(4)),
            (CpuMask::single(0), Some(CpuMask::single(2)), None)
        );
        assert!(at3.shares_list_with(&r));
        assert_eq!(at3.to_vec().len(), 4);
        let empty = GroupRing::default().entered_at(5);
        assert!(empty.is_empty() && empty.iter().next().is_none() && empty.entry() == 0);
    }

    /// Equality is by the groups seen from the entry, not by the shared list:
    /// [1 2 0] built as such equals [0 1 2] entered at 1, and not [0 1 2].
    #[test]
    fn rings_are_equal_when_they_list_the_same_groups_from_their_entries() {
        let built = ring(&[1, 2, 0]);
        let entered = ring(&[0, 1, 2]).entered_at(1);
        assert_eq!(built, entered);
        assert!(!built.shares_list_with(&entered));
        assert_ne!(ring(&[0, 1, 2]), built);
        assert_ne!(ring(&[0, 1]), ring(&[0, 1, 2]));
        assert_eq!(alloc::format!("{:?}", ring(&[0, 1]).entered_at(1)).matches("cpus").count(), 2);
        let v = vec![SchedGroup { cpus: CpuMask::single(5), cpu_power: 7 }];
        assert_eq!(GroupRing::from(v.clone()).to_vec(), v);
    }
}
