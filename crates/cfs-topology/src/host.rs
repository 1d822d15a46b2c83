//! [`Host`]: a machine's logical CPUs, caches and NUMA nodes.
//!
//! # Identifiers
//!
//! Each logical CPU (its number is its index in [`Host::cpus`], the kernel's
//! logical CPU number) carries:
//!
//! - `package`: the socket, unique on the host (sysfs `physical_package_id`);
//! - `die`: the die inside the package (sysfs `die_id`; 0 when a package is
//!   one die);
//! - `core`: the core, unique inside its package (sysfs `core_id`, which Linux
//!   numbers per package and need not be contiguous);
//! - `thread`: the SMT thread inside its core, 0-based;
//! - `node`: the NUMA node, 0-based.
//!
//! Two CPUs are SMT siblings when package, die and core all match.
//!
//! # Caches
//!
//! A [`Cache`] is one level and kind (`L2 unified`) with its size and its
//! *instances*: one [`CpuMask`] per physical cache, naming the CPUs that share
//! it (sysfs `shared_cpu_list`). Instances of one cache are disjoint and never
//! split a core.
//!
//! # NUMA
//!
//! Nodes are numbered `0..nr_nodes`; the distance table is ACPI SLIT style:
//! 10 on the diagonal, 11..=255 elsewhere. Without a table, Linux's defaults
//! apply (10 local, 20 remote: `LOCAL_DISTANCE` / `REMOTE_DISTANCE` of
//! `include/linux/topology.h`). A node may have no CPUs (memory only).

use crate::cpumask::{CpuId, CpuMask, MAX_CPUS};
use crate::error::{MAX_NODES, TopologyError};
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

/// Linux's distance from a node to itself (`LOCAL_DISTANCE`).
pub const LOCAL_DISTANCE: u32 = 10;
/// Linux's distance between nodes when firmware gives no SLIT (`REMOTE_DISTANCE`).
pub const REMOTE_DISTANCE: u32 = 20;

/// The CPU vendor. It matters to the domain builder because the x86 code that
/// sets the last-level-cache id differs by vendor and kernel release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// GenuineIntel: `intel_cacheinfo.c` sets `cpu_llc_id` in every release.
    Intel,
    /// AuthenticAMD: `cpu_llc_id` only from 2.6.31 (commit 99bd0c0fc4b).
    Amd,
}

impl Vendor {
    /// `intel` or `amd`.
    pub const fn name(self) -> &'static str {
        match self {
            Vendor::Intel => "intel",
            Vendor::Amd => "amd",
        }
    }

    /// Parses `intel` / `amd` (any case; `GenuineIntel`, `AuthenticAMD` too).
    pub fn by_name(s: &str) -> Option<Vendor> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("intel") || s.eq_ignore_ascii_case("GenuineIntel") {
            Some(Vendor::Intel)
        } else if s.eq_ignore_ascii_case("amd") || s.eq_ignore_ascii_case("AuthenticAMD") {
            Some(Vendor::Amd)
        } else {
            None
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The position of one logical CPU in the machine (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct LogicalCpu {
    /// Socket, unique on the host.
    pub package: u32,
    /// Die inside the package.
    pub die: u32,
    /// Core, unique inside the package.
    pub core: u32,
    /// SMT thread inside the core.
    pub thread: u32,
    /// NUMA node.
    pub node: u32,
}

/// What a cache holds (sysfs `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    /// Data only (L1d).
    Data,
    /// Instructions only (L1i).
    Instruction,
    /// Both.
    Unified,
}

impl CacheKind {
    /// `data`, `instruction` or `unified`.
    pub const fn name(self) -> &'static str {
        match self {
            CacheKind::Data => "data",
            CacheKind::Instruction => "instruction",
            CacheKind::Unified => "unified",
        }
    }

    /// Parses the sysfs spelling (`Data`, `Instruction`, `Unified`), any case.
    pub fn by_name(s: &str) -> Option<CacheKind> {
        let s = s.trim();
        [CacheKind::Data, CacheKind::Instruction, CacheKind::Unified]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
    }

    /// Whether the cache holds data (data and unified caches do); only these
    /// count for the last-level cache and for [`crate::Distance`].
    pub const fn holds_data(self) -> bool {
        !matches!(self, CacheKind::Instruction)
    }
}

/// One cache level and kind, with the CPUs sharing each physical instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    /// 1 for L1, 2 for L2, ...
    pub level: u8,
    /// Data, instruction or unified.
    pub kind: CacheKind,
    /// Size of one instance in KB.
    pub size_kb: u32,
    /// One mask per physical cache: the CPUs sharing it.
    pub instances: Vec<CpuMask>,
}

/// The plain description a [`Host`] is validated from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostDesc {
    /// Display name.
    pub name: String,
    /// CPU vendor.
    pub vendor: Vendor,
    /// Core clock, MHz.
    pub mhz: u32,
    /// Logical CPUs; index = logical CPU number.
    pub cpus: Vec<LogicalCpu>,
    /// Caches, any order.
    pub caches: Vec<Cache>,
    /// SLIT-style node distances, `[from][to]`; empty means Linux's defaults
    /// (10 local, 20 remote) for `max node + 1` nodes.
    pub node_distances: Vec<Vec<u32>>,
}

/// Marks "no instance of this cache holds the CPU" in the per-CPU cache table.
const NO_INSTANCE: u32 = u32::MAX;

/// A validated machine description, with the per-CPU tables the distance
/// query and the domain builder need precomputed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    desc: HostDesc,
    /// Dense core number per CPU (SMT siblings share it).
    core_index: Vec<u32>,
    /// CPUs of each dense core.
    core_cpus: Vec<CpuMask>,
    /// CPUs of each node.
    node_cpus: Vec<CpuMask>,
    /// Indexes into `desc.caches` of the data-holding caches, by level.
    data_caches: Vec<usize>,
    /// `cache_instance[cpu * data_caches.len() + j]`: which instance of
    /// data cache `j` holds `cpu` (or [`NO_INSTANCE`]).
    cache_instance: Vec<u32>,
}

impl Host {
    /// Validates a description. Errors name the offending CPU, cache or node.
    pub fn new(mut desc: HostDesc) -> Result<Host, TopologyError> {
        check_cpu_count(&desc)?;
        if !(1..=crate::shape::MAX_MHZ).contains(&desc.mhz) {
            return Err(TopologyError::ClockOutOfRange { host: desc.name.clone(), mhz: desc.mhz });
        }
        check_node_ids(&desc)?;
        let (core_index, core_cpus) = index_cores(&desc.cpus)?;
        check_cores_within_nodes(&desc.cpus, &core_cpus)?;
        let nr_nodes = node_count(&desc);
        if desc.node_distances.is_empty() {
            desc.node_distances = default_distances(nr_nodes);
        }
        check_distances(&desc.node_distances)?;
        check_nodes_in_range(&desc.cpus, desc.node_distances.len())?;
        desc.caches.sort_by_key(|c| (c.level, c.kind));
        check_caches(&desc, &core_index, &core_cpus)?;
        let node_cpus = cpus_per_node(&desc.cpus, desc.node_distances.len());
        let data_caches: Vec<usize> = (0..desc.caches.len()).filter(|&i| desc.caches[i].kind.holds_data()).collect();
        let cache_instance = instance_table(&desc, &data_caches);
        Ok(Host { desc, core_index, core_cpus, node_cpus, data_caches, cache_instance })
    }

    /// The description this host was validated from (caches sorted by level).
    pub fn desc(&self) -> &HostDesc {
        &self.desc
    }

    /// Display name.
    pub fn name(&self) -> &str {
        &self.desc.name
    }

    /// CPU vendor.
    pub fn vendor(&self) -> Vendor {
        self.desc.vendor
    }

    /// Core clock in MHz.
    pub fn mhz(&self) -> u32 {
        self.desc.mhz
    }

    /// Number of logical CPUs.
    #[inline]
    pub fn nr_cpus(&self) -> usize {
        self.desc.cpus.len()
    }

    /// All logical CPUs, indexed by CPU number.
    pub fn cpus(&self) -> &[LogicalCpu] {
        &self.desc.cpus
    }

    /// One logical CPU. Panics if `cpu >= nr_cpus()`.
    #[inline]
    pub fn cpu(&self, cpu: CpuId) -> &LogicalCpu {
        &self.desc.cpus[cpu]
    }

    /// Every CPU of the host.
    pub fn all_cpus(&self) -> CpuMask {
        CpuMask::first_n(self.nr_cpus())
    }

    /// The caches, sorted by (level, kind).
    pub fn caches(&self) -> &[Cache] {
        &self.desc.caches
    }

    /// Number of NUMA nodes (including nodes without CPUs).
    pub fn nr_nodes(&self) -> usize {
        self.node_cpus.len()
    }

    /// The CPUs of a node (empty for an unknown node).
    pub fn node_cpus(&self, node: usize) -> CpuMask {
        self.node_cpus.get(node).copied().unwrap_or_default()
    }

    /// SLIT distance between two nodes. Panics on an unknown node.
    #[inline]
    pub fn node_distance(&self, from: usize, to: usize) -> u32 {
        self.desc.node_distances[from][to]
    }

    /// The whole distance table, `[from][to]`.
    pub fn node_distances(&self) -> &[Vec<u32>] {
        &self.desc.node_distances
    }

    /// The SMT threads of `cpu`'s core, `cpu` included (`thread_siblings`).
    pub fn thread_siblings(&self, cpu: CpuId) -> CpuMask {
        self.core_cpus[self.core_index[cpu] as usize]
    }

    /// Dense core number of `cpu` (0.. number of cores); SMT siblings share it.
    #[inline]
    pub fn core_index(&self, cpu: CpuId) -> usize {
        self.core_index[cpu] as usize
    }

    /// Number of physical cores.
    pub fn nr_cores(&self) -> usize {
        self.core_cpus.len()
    }

    /// The CPUs of `cpu`'s package (`core_siblings`).
    pub fn package_cpus(&self, cpu: CpuId) -> CpuMask {
        let p = self.desc.cpus[cpu].package;
        self.cpus_where(|c| c.package == p)
    }

    /// The CPUs of `cpu`'s die.
    pub fn die_cpus(&self, cpu: CpuId) -> CpuMask {
        let me = self.desc.cpus[cpu];
        self.cpus_where(|c| c.package == me.package && c.die == me.die)
    }

    /// Number of distinct packages.
    pub fn nr_packages(&self) -> usize {
        let mut ids: Vec<u32> = self.desc.cpus.iter().map(|c| c.package).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    /// Largest number of cores in one package (the boot CPU's
    /// `x86_max_cores` on a uniform machine).
    pub fn max_cores_per_package(&self) -> usize {
        let mut per_pkg: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (cpu, c) in self.desc.cpus.iter().enumerate() {
            per_pkg.entry(c.package).or_default().push(self.core_index[cpu]);
        }
        per_pkg
            .values_mut()
            .map(|v| {
                v.sort_unstable();
                v.dedup();
                v.len()
            })
            .max()
            .unwrap_or(0)
    }

    /// The CPUs sharing `cpu`'s last-level cache: the instance of the
    /// highest-level data or unified cache that holds `cpu`. `None` when no
    /// data cache is described for it. This is the hardware fact; what a
    /// given kernel makes of it is [`crate::builder`]'s business.
    pub fn llc_cpus(&self, cpu: CpuId) -> Option<CpuMask> {
        self.llc_slot(cpu).map(|(j, inst)| self.desc.caches[self.data_caches[j]].instances[inst as usize])
    }

    /// (data-cache index, instance) of `cpu`'s last-level cache.
    #[inline]
    pub(crate) fn llc_slot(&self, cpu: CpuId) -> Option<(usize, u32)> {
        let k = self.data_caches.len();
        (0..k).rev().find_map(|j| {
            let inst = self.cache_instance[cpu * k + j];
            (inst != NO_INSTANCE).then_some((j, inst))
        })
    }

    /// The level of the closest data cache `a` and `b` share, if any.
    #[inline]
    pub(crate) fn closest_shared_cache(&self, a: CpuId, b: CpuId) -> Option<u8> {
        let k = self.data_caches.len();
        let (ra, rb) = (&self.cache_instance[a * k..(a + 1) * k], &self.cache_instance[b * k..(b + 1) * k]);
        (0..k).find(|&j| ra[j] != NO_INSTANCE && ra[j] == rb[j]).map(|j| self.desc.caches[self.data_caches[j]].level)
    }

    fn cpus_where(&self, pred: impl Fn(&LogicalCpu) -> bool) -> CpuMask {
        CpuMask::from_cpus(self.desc.cpus.iter().enumerate().filter(|(_, c)| pred(c)).map(|(i, _)| i))
    }
}

fn check_cpu_count(desc: &HostDesc) -> Result<(), TopologyError> {
    match desc.cpus.len() {
        0 => Err(TopologyError::NoCpus { host: desc.name.clone() }),
        n if n > MAX_CPUS => Err(TopologyError::TooManyCpus(n)),
        _ => Ok(()),
    }
}

/// Gives every core a dense number (in order of its first CPU) and rejects
/// two CPUs with identical ids.
fn index_cores(cpus: &[LogicalCpu]) -> Result<(Vec<u32>, Vec<CpuMask>), TopologyError> {
    let mut cores: BTreeMap<(u32, u32, u32), u32> = BTreeMap::new();
    let mut threads: BTreeMap<(u32, u32, u32, u32), usize> = BTreeMap::new();
    let mut core_index = Vec::with_capacity(cpus.len());
    let mut core_cpus: Vec<CpuMask> = Vec::new();
    for (cpu, c) in cpus.iter().enumerate() {
        if let Some(&other) = threads.get(&(c.package, c.die, c.core, c.thread)) {
            return Err(TopologyError::DuplicateThread {
                cpu,
                other,
                package: c.package,
                die: c.die,
                core: c.core,
                thread: c.thread,
            });
        }
        threads.insert((c.package, c.die, c.core, c.thread), cpu);
        let next = core_cpus.len() as u32;
        let idx = *cores.entry((c.package, c.die, c.core)).or_insert(next);
        if idx == next {
            core_cpus.push(CpuMask::empty());
        }
        core_cpus[idx as usize].set(cpu);
        core_index.push(idx);
    }
    Ok((core_index, core_cpus))
}

fn check_cores_within_nodes(cpus: &[LogicalCpu], core_cpus: &[CpuMask]) -> Result<(), TopologyError> {
    for mask in core_cpus {
        let first = mask.first().unwrap_or(0);
        if let Some(other) = mask.iter().find(|&o| cpus[o].node != cpus[first].node) {
            return Err(TopologyError::CoreSplitAcrossNodes {
                cpu: first,
                node: cpus[first].node,
                other,
                other_node: cpus[other].node,
            });
        }
    }
    Ok(())
}

fn check_node_ids(desc: &HostDesc) -> Result<(), TopologyError> {
    if let Some((cpu, c)) = desc.cpus.iter().enumerate().find(|(_, c)| c.node as usize >= MAX_NODES) {
        return Err(TopologyError::NodeIdTooLarge { cpu, node: c.node as u64 });
    }
    if desc.node_distances.len() > MAX_NODES {
        return Err(TopologyError::NodeIdTooLarge { cpu: 0, node: desc.node_distances.len() as u64 - 1 });
    }
    Ok(())
}

fn node_count(desc: &HostDesc) -> usize {
    let from_cpus = desc.cpus.iter().map(|c| c.node as usize + 1).max().unwrap_or(1);
    if desc.node_distances.is_empty() { from_cpus } else { desc.node_distances.len() }
}

/// Linux's table when firmware has no SLIT: 10 on the diagonal, 20 elsewhere.
pub(crate) fn default_distances(n: usize) -> Vec<Vec<u32>> {
    (0..n).map(|a| (0..n).map(|b| if a == b { LOCAL_DISTANCE } else { REMOTE_DISTANCE }).collect()).collect()
}

fn check_distances(table: &[Vec<u32>]) -> Result<(), TopologyError> {
    let n = table.len();
    for (a, row) in table.iter().enumerate() {
        if row.len() != n {
            return Err(TopologyError::DistanceShape { row: a, len: row.len(), expected: n });
        }
        for (b, &d) in row.iter().enumerate() {
            if a == b && d != LOCAL_DISTANCE {
                return Err(TopologyError::BadLocalDistance { node: a, value: d });
            }
            if a != b && !(11..=255).contains(&d) {
                return Err(TopologyError::BadRemoteDistance { from: a, to: b, value: d });
            }
        }
    }
    Ok(())
}

fn check_nodes_in_range(cpus: &[LogicalCpu], nodes: usize) -> Result<(), TopologyError> {
    match cpus.iter().enumerate().find(|(_, c)| c.node as usize >= nodes) {
        Some((cpu, c)) => Err(TopologyError::NodeOutOfRange { cpu, node: c.node, nodes }),
        None => Ok(()),
    }
}

fn cache_error(c: &Cache, reason: String) -> TopologyError {
    TopologyError::BadCache { level: c.level, kind: c.kind.name(), reason }
}

fn check_caches(desc: &HostDesc, core_index: &[u32], core_cpus: &[CpuMask]) -> Result<(), TopologyError> {
    let n = desc.cpus.len();
    for (i, c) in desc.caches.iter().enumerate() {
        if c.level == 0 || c.level > 9 {
            return Err(cache_error(c, "level must be 1..=9".to_string()));
        }
        if desc.caches[..i].iter().any(|p| p.level == c.level && p.kind == c.kind) {
            return Err(cache_error(c, "described twice".to_string()));
        }
        // The cost model sizes refills by the cache: one that holds nothing
        // is a slip in the description, not a machine.
        if c.size_kb == 0 {
            return Err(cache_error(c, "size must be above 0 KB".to_string()));
        }
        check_cache_instances(c, n, core_index, core_cpus)?;
    }
    Ok(())
}

fn check_cache_instances(c: &Cache, n: usize, core_index: &[u32], core_cpus: &[CpuMask]) -> Result<(), TopologyError> {
    let mut seen = CpuMask::empty();
    for inst in &c.instances {
        if inst.is_empty() {
            return Err(cache_error(c, "an instance is shared by no CPU".to_string()));
        }
        if let Some(cpu) = inst.iter().find(|&cpu| cpu >= n) {
            return Err(cache_error(c, alloc::format!("instance {inst} names CPU {cpu}, but the host has {n} CPUs")));
        }
        if let Some(cpu) = inst.and(&seen).first() {
            return Err(cache_error(c, alloc::format!("CPU {cpu} is in two instances")));
        }
        if let Some(cpu) = inst.iter().find(|&cpu| !core_cpus[core_index[cpu] as usize].is_subset_of(inst)) {
            let core = core_cpus[core_index[cpu] as usize];
            return Err(cache_error(c, alloc::format!("instance {inst} splits the core of CPUs {core}")));
        }
        seen = seen.or(inst);
    }
    Ok(())
}

fn cpus_per_node(cpus: &[LogicalCpu], nodes: usize) -> Vec<CpuMask> {
    let mut v = vec![CpuMask::empty(); nodes];
    for (cpu, c) in cpus.iter().enumerate() {
        v[c.node as usize].set(cpu);
    }
    v
}

fn instance_table(desc: &HostDesc, data_caches: &[usize]) -> Vec<u32> {
    let k = data_caches.len();
    let mut t = vec![NO_INSTANCE; desc.cpus.len() * k];
    for (j, &ci) in data_caches.iter().enumerate() {
        for (inst_no, inst) in desc.caches[ci].instances.iter().enumerate() {
            for cpu in inst.iter() {
                t[cpu * k + j] = inst_no as u32;
            }
        }
    }
    t
}
