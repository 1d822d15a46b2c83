//! [`HostShape`]: a regular machine (nodes × sockets × dies × cores × threads)
//! and the [`Host`] it expands to. The presets and the spec strings
//! ([`crate::spec`]) both go through here.
//!
//! # Logical CPU numbering
//!
//! Cores are first enumerated in nesting order (node, socket, die, core), so
//! the cores of a die, and the dies of a package, are consecutive. Then:
//!
//! - [`Numbering::SmtLast`] (the default): CPU `k` is thread 0 of core `k`
//!   for `k < cores`, and the second threads follow, so the SMT siblings of
//!   CPU `n` are `n + cores`, `n + 2*cores`, ... This is the numbering Linux
//!   usually shows on Intel HT machines (the ACPI MADT lists every core's
//!   first thread before any second thread); e.g. on a 2-socket Nehalem-EP
//!   socket 0 is CPUs 0-3,8-11.
//! - [`Numbering::Linear`]: the threads of a core are consecutive (`2n`,
//!   `2n+1` on 2-way SMT).
//!
//! Without SMT both give the same order. Ids on the generated CPUs: `package`
//! = global socket number, `die` = die inside the socket, `core` = core
//! inside the package (`die * cores_per_die + core`, unique per package as
//! Linux's `core_id` is), `thread` = thread inside the core, `node` =
//! `socket / sockets_per_node`.

use crate::cpumask::{CpuMask, MAX_CPUS};
use crate::error::TopologyError;
use crate::host::{Cache, CacheKind, Host, HostDesc, LogicalCpu, REMOTE_DISTANCE, Vendor, default_distances};
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// How logical CPU numbers are assigned to threads (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Numbering {
    /// All first threads, then all second threads (siblings `n`, `n + cores`).
    #[default]
    SmtLast,
    /// Threads of a core consecutive (siblings `2n`, `2n+1`).
    Linear,
}

/// Which CPUs share one instance of a cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheScope {
    /// Private to a core (its SMT threads share it).
    Core,
    /// Shared by the cores of a die.
    Die,
    /// Shared by the whole package.
    Socket,
}

impl CacheScope {
    /// `core`, `die` or `socket`.
    pub const fn name(self) -> &'static str {
        match self {
            CacheScope::Core => "core",
            CacheScope::Die => "die",
            CacheScope::Socket => "socket",
        }
    }
}

/// One generated cache level: who shares an instance, and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheSpec {
    /// Sharing scope.
    pub scope: CacheScope,
    /// Size of one instance, KB.
    pub size_kb: u32,
}

/// A regular machine, before expansion into a [`Host`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostShape {
    /// NUMA nodes (>= 1).
    pub nodes: u32,
    /// Sockets in each node (>= 1).
    pub sockets_per_node: u32,
    /// Dies in each socket (>= 1).
    pub dies_per_socket: u32,
    /// Cores in each die (>= 1).
    pub cores_per_die: u32,
    /// SMT threads in each core (>= 1).
    pub threads_per_core: u32,
    /// CPU vendor.
    pub vendor: Vendor,
    /// Clock, MHz.
    pub mhz: u32,
    /// Logical CPU numbering.
    pub numbering: Numbering,
    /// L1 size, KB, for each of L1d and L1i (always per core).
    pub l1_kb: u32,
    /// The L2, if any.
    pub l2: Option<CacheSpec>,
    /// The L3, if any.
    pub l3: Option<CacheSpec>,
    /// Distance between any two different nodes (SLIT; 10 is local).
    pub remote_distance: u32,
    /// Display name; `None` uses the canonical spec string.
    pub name: Option<String>,
}

/// Default clock for generated hosts, MHz (the Q6600/X2 baseline of
/// hosts-and-costs.md §5).
pub const DEFAULT_MHZ: u32 = 2400;

/// The fastest clock a host may have, MHz (100 GHz): the cost model
/// scales CPU work by 2400 / MHz, and a host far past any real part
/// would make that work take no simulated time.
pub const MAX_MHZ: u32 = 100_000;

impl HostShape {
    /// A shape with the defaults: Intel, 2400 MHz, SMT-last numbering,
    /// 32 KB L1d + L1i per core, 256 KB L2 per core, an L3 per die of 2 MB
    /// per core, remote node distance 20.
    pub fn new(nodes: u32, sockets_per_node: u32, dies_per_socket: u32, cores_per_die: u32, threads: u32) -> Self {
        HostShape {
            nodes,
            sockets_per_node,
            dies_per_socket,
            cores_per_die,
            threads_per_core: threads,
            vendor: Vendor::Intel,
            mhz: DEFAULT_MHZ,
            numbering: Numbering::SmtLast,
            l1_kb: 32,
            l2: Some(CacheSpec { scope: CacheScope::Core, size_kb: 256 }),
            l3: Some(CacheSpec { scope: CacheScope::Die, size_kb: 2048u32.saturating_mul(cores_per_die) }),
            remote_distance: REMOTE_DISTANCE,
            name: None,
        }
    }

    /// Total logical CPUs, or `None` on overflow.
    pub fn nr_cpus(&self) -> Option<usize> {
        [self.nodes, self.sockets_per_node, self.dies_per_socket, self.cores_per_die, self.threads_per_core]
            .iter()
            .try_fold(1usize, |acc, &x| acc.checked_mul(x as usize))
    }

    /// Total physical cores.
    fn nr_cores(&self) -> usize {
        self.nodes as usize
            * self.sockets_per_node as usize
            * self.dies_per_socket as usize
            * self.cores_per_die as usize
    }

    /// The canonical spec string: `[Nn]Ss[Dd]Cc[Tt]` with the optional units
    /// only when not 1 (`1s2d2c`, `2s4c2t`, `2n1s4c2t`).
    pub fn canonical(&self) -> String {
        let mut s = String::new();
        if self.nodes != 1 {
            s += &format!("{}n", self.nodes);
        }
        s += &format!("{}s", self.sockets_per_node);
        if self.dies_per_socket != 1 {
            s += &format!("{}d", self.dies_per_socket);
        }
        s += &format!("{}c", self.cores_per_die);
        if self.threads_per_core != 1 {
            s += &format!("{}t", self.threads_per_core);
        }
        s
    }

    /// Expands the shape into a validated [`Host`].
    pub fn to_host(&self) -> Result<Host, TopologyError> {
        let n = self
            .nr_cpus()
            .filter(|&n| n <= MAX_CPUS)
            .ok_or(TopologyError::TooManyCpus(self.nr_cpus().unwrap_or(usize::MAX)))?;
        if n == 0 {
            return Err(TopologyError::NoCpus { host: self.canonical() });
        }
        let cpus = self.logical_cpus(n);
        let caches = self.caches(&cpus);
        let mut node_distances = default_distances(self.nodes as usize);
        for (a, row) in node_distances.iter_mut().enumerate() {
            for (b, d) in row.iter_mut().enumerate() {
                if a != b {
                    *d = self.remote_distance;
                }
            }
        }
        Host::new(HostDesc {
            name: self.name.clone().unwrap_or_else(|| self.canonical()),
            vendor: self.vendor,
            mhz: self.mhz,
            cpus,
            caches,
            node_distances,
        })
    }

    /// The CPUs in logical order.
    fn logical_cpus(&self, n: usize) -> Vec<LogicalCpu> {
        let cores = self.nr_cores();
        let t = self.threads_per_core as usize;
        let mut cpus = vec![LogicalCpu::default(); n];
        for gcore in 0..cores {
            for thread in 0..t {
                let cpu = match self.numbering {
                    Numbering::SmtLast => thread * cores + gcore,
                    Numbering::Linear => gcore * t + thread,
                };
                cpus[cpu] = self.position(gcore, thread as u32);
            }
        }
        cpus
    }

    /// Ids of thread `thread` of global core `gcore`.
    fn position(&self, gcore: usize, thread: u32) -> LogicalCpu {
        let c = self.cores_per_die as usize;
        let d = self.dies_per_socket as usize;
        let socket = gcore / (c * d);
        let die = (gcore / c) % d;
        LogicalCpu {
            package: socket as u32,
            die: die as u32,
            core: (die * c + gcore % c) as u32,
            thread,
            node: (socket / self.sockets_per_node as usize) as u32,
        }
    }

    fn caches(&self, cpus: &[LogicalCpu]) -> Vec<Cache> {
        let per_core = CacheSpec { scope: CacheScope::Core, size_kb: self.l1_kb };
        let mut v = vec![cache(1, CacheKind::Data, per_core, cpus), cache(1, CacheKind::Instruction, per_core, cpus)];
        v.extend(self.l2.map(|s| cache(2, CacheKind::Unified, s, cpus)));
        v.extend(self.l3.map(|s| cache(3, CacheKind::Unified, s, cpus)));
        v
    }
}

/// Builds one cache level: an instance per core, die or socket.
fn cache(level: u8, kind: CacheKind, spec: CacheSpec, cpus: &[LogicalCpu]) -> Cache {
    let key = |c: &LogicalCpu| match spec.scope {
        CacheScope::Core => (c.package, c.die, c.core),
        CacheScope::Die => (c.package, c.die, 0),
        CacheScope::Socket => (c.package, 0, 0),
    };
    let mut keys: Vec<(u32, u32, u32)> = Vec::new();
    let mut instances: Vec<CpuMask> = Vec::new();
    for (cpu, c) in cpus.iter().enumerate() {
        let k = key(c);
        match keys.iter().position(|&x| x == k) {
            Some(i) => instances[i].set(cpu),
            None => {
                keys.push(k);
                instances.push(CpuMask::single(cpu));
            }
        }
    }
    Cache { level, kind, size_kb: spec.size_kb, instances }
}
