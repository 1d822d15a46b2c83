//! [`Distance`]: how far apart two logical CPUs are, for cost models.
//!
//! The simulator asks this on every wakeup and migration, so
//! [`Host::distance`] only compares precomputed per-CPU ids: the dense core
//! number, one cache-instance number per data cache level (a handful), the
//! package, the node, and one lookup in the node distance table.

use crate::cpumask::CpuId;
use crate::host::Host;

/// The relationship between two logical CPUs, nearest first.
///
/// The derived order is the nearness order: `SameCpu < SameCore <
/// SharedCache{..} < SamePackage < SameNode < RemoteNode{..}`, with
/// `SharedCache` ordered by level and `RemoteNode` by SLIT distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Distance {
    /// The same logical CPU.
    SameCpu,
    /// SMT siblings: threads of one core.
    SameCore,
    /// Different cores sharing a data cache; `level` is the closest one
    /// they share (2 for the Q6600's die pairs, 3 on Nehalem).
    SharedCache {
        /// Cache level, 1..
        level: u8,
    },
    /// Same package but no shared cache (the two dies of a Q6600 or a
    /// Tigerton/Harpertown package).
    SamePackage,
    /// Different packages on the same NUMA node (FSB-connected sockets, or
    /// any two sockets of a UMA machine).
    SameNode,
    /// Different NUMA nodes, with their SLIT distance (e.g. 21).
    RemoteNode {
        /// `node_distance(node(a), node(b))`.
        distance: u32,
    },
}

impl Distance {
    /// A short label (`same-cpu`, `smt`, `L2`, `package`, `node`, `remote:21`).
    pub fn label(self) -> alloc::string::String {
        use alloc::format;
        match self {
            Distance::SameCpu => "same-cpu".into(),
            Distance::SameCore => "smt".into(),
            Distance::SharedCache { level } => format!("L{level}"),
            Distance::SamePackage => "package".into(),
            Distance::SameNode => "node".into(),
            Distance::RemoteNode { distance } => format!("remote:{distance}"),
        }
    }
}

impl Host {
    /// How close CPUs `a` and `b` are. Symmetric; O(number of cache levels).
    ///
    /// Panics if either CPU is `>= nr_cpus()`.
    #[inline]
    pub fn distance(&self, a: CpuId, b: CpuId) -> Distance {
        if a == b {
            assert!(a < self.nr_cpus(), "CPU {a} out of range (host has {} CPUs)", self.nr_cpus());
            return Distance::SameCpu;
        }
        if self.core_index(a) == self.core_index(b) {
            return Distance::SameCore;
        }
        if let Some(level) = self.closest_shared_cache(a, b) {
            return Distance::SharedCache { level };
        }
        let (ca, cb) = (self.cpu(a), self.cpu(b));
        if ca.package == cb.package {
            Distance::SamePackage
        } else if ca.node == cb.node {
            Distance::SameNode
        } else {
            Distance::RemoteNode { distance: self.node_distance(ca.node as usize, cb.node as usize) }
        }
    }
}
