//! Reading a running Linux machine's topology from sysfs (std only).
//!
//! [`Host::from_sysfs`] takes the sysfs mount point (`/sys`, or a fixture
//! tree) and reads, under `devices/system/`:
//!
//! - `cpu/online` (if present) for the CPUs to use. Gaps (CPUs taken
//!   offline, e.g. the second threads of an AMD machine booted with
//!   `nosmt`, which leaves 0,2,4,6 online) are closed up: the online CPUs
//!   become 0..n in ascending order, every list read below is mapped the
//!   same way (offline CPUs dropped), and the host's name says so
//!   (`sysfs:/sys (online CPUs 0,2,4,6 as 0-3)`);
//! - `cpu/cpuN/topology/{physical_package_id,core_id,die_id,thread_siblings_list,core_siblings_list}`
//!   (`die_id` optional, 0 when absent); the thread number is the CPU's
//!   position in its `thread_siblings_list`;
//! - `cpu/cpuN/cache/index*/{level,type,size,shared_cpu_list}` (optional;
//!   an index without `size` or `level` is skipped: drivers/base/cacheinfo.c
//!   hides both when they are 0, i.e. unknown, as on arm64 machines whose
//!   firmware gives no cache sizes);
//! - `node/nodeN/{cpulist,distance}` (optional: without `node/`, one node).
//!   Node ids are renumbered densely in ascending order, which keeps the
//!   kernel's cyclic node order;
//! - `cpu/modalias` for the vendor (`ven0000` Intel, `ven0002` AMD; Intel if
//!   absent) and `cpu/cpu0/cpufreq/cpuinfo_max_freq` for the clock (2400 MHz
//!   if absent).

use crate::cpumask::{CpuId, CpuMask, MAX_CPUS};
use crate::error::{MAX_NODES, TopologyError};
use crate::host::{Cache, CacheKind, Host, HostDesc, LogicalCpu, Vendor};
use crate::shape::DEFAULT_MHZ;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::path::{Path, PathBuf};

impl Host {
    /// Reads the topology under `root` (normally `/sys`).
    pub fn from_sysfs(root: &Path) -> Result<Host, TopologyError> {
        let cpu_dir = root.join("devices/system/cpu");
        let online = online_cpus(&cpu_dir)?;
        let mut cpus = (0..online.n()).map(|cpu| read_cpu(&cpu_dir, cpu, &online)).collect::<Result<Vec<_>, _>>()?;
        let node_distances = read_nodes(&root.join("devices/system/node"), &mut cpus, &online)?;
        let caches = read_caches(&cpu_dir, &online)?;
        let mut name = format!("sysfs:{}", root.display());
        if !online.is_dense() {
            let mask = CpuMask::from_cpus(online.ids.iter().copied());
            name.push_str(&format!(" (online CPUs {mask} as 0-{})", online.n() - 1));
        }
        let host = Host::new(HostDesc {
            name,
            vendor: read_vendor(&cpu_dir),
            mhz: read_mhz(&cpu_dir),
            cpus,
            caches,
            node_distances,
        })?;
        check_siblings(&cpu_dir, &host, &online)?;
        Ok(host)
    }
}

fn err(path: &Path, reason: impl Into<String>) -> TopologyError {
    TopologyError::Sysfs { path: path.display().to_string(), reason: reason.into() }
}

fn read(path: &Path) -> Result<String, TopologyError> {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).map_err(|e| err(path, format!("cannot read: {e}")))
}

fn read_int(path: &Path) -> Result<i64, TopologyError> {
    let s = read(path)?;
    s.parse().map_err(|_| err(path, format!("expected an integer, found {s:?}")))
}

/// A non-negative id; Linux prints -1 for "unknown", which we take as 0.
fn read_id(path: &Path) -> Result<u32, TopologyError> {
    let v = read_int(path)?;
    u32::try_from(v.max(0)).map_err(|_| err(path, format!("id {v} is too large")))
}

fn read_list(path: &Path) -> Result<CpuMask, TopologyError> {
    let s = read(path)?;
    CpuMask::parse_list(&s).map_err(|e| err(path, e.to_string()))
}

/// The online CPUs and the host's dense numbering of them: the host's CPU
/// `i` is the `i`-th online CPU in ascending order.
struct Online {
    /// `ids[i]`: the sysfs number of the host's CPU `i` (ascending).
    ids: Vec<CpuId>,
}

impl Online {
    fn n(&self) -> usize {
        self.ids.len()
    }

    /// Whether the online CPUs are 0..n already.
    fn is_dense(&self) -> bool {
        self.ids.last() == Some(&(self.n() - 1))
    }

    /// The directory of the host's CPU `cpu`.
    fn dir(&self, cpu_dir: &Path, cpu: CpuId) -> PathBuf {
        cpu_dir.join(format!("cpu{}", self.ids[cpu]))
    }

    /// A sysfs CPU list in the host's numbering, offline CPUs dropped.
    fn dense(&self, sysfs: &CpuMask) -> CpuMask {
        CpuMask::from_cpus((0..self.n()).filter(|&i| sysfs.contains(self.ids[i])))
    }
}

/// The CPUs to use: `online` if present, else every `cpuN` directory with a
/// `topology` subdirectory.
fn online_cpus(cpu_dir: &Path) -> Result<Online, TopologyError> {
    let online = cpu_dir.join("online");
    let mask = if online.exists() {
        read_list(&online)?
    } else {
        let entries = std::fs::read_dir(cpu_dir).map_err(|e| err(cpu_dir, format!("cannot list: {e}")))?;
        let ids = entries.filter_map(|e| e.ok()).filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id: usize = name.strip_prefix("cpu")?.parse().ok()?;
            e.path().join("topology").is_dir().then_some(id)
        });
        CpuMask::from_cpus(ids.filter(|&id| id < MAX_CPUS))
    };
    if mask.is_empty() {
        return Err(err(cpu_dir, "no CPUs found (no `online` list and no cpuN/topology directories)"));
    }
    Ok(Online { ids: mask.iter().collect() })
}

/// One CPU's ids (node filled in later).
fn read_cpu(cpu_dir: &Path, cpu: CpuId, online: &Online) -> Result<LogicalCpu, TopologyError> {
    let topo = online.dir(cpu_dir, cpu).join("topology");
    let me = online.ids[cpu];
    let die_path = topo.join("die_id");
    let die = if die_path.exists() { read_id(&die_path)? } else { 0 };
    let siblings_path = topo.join("thread_siblings_list");
    let siblings = online.dense(&read_list(&siblings_path)?);
    let thread = siblings
        .iter()
        .position(|c| c == cpu)
        .ok_or_else(|| err(&siblings_path, format!("does not contain CPU {me} itself")))?;
    let core_siblings_path = topo.join("core_siblings_list");
    if !read_list(&core_siblings_path)?.contains(me) {
        return Err(err(&core_siblings_path, format!("does not contain CPU {me} itself")));
    }
    Ok(LogicalCpu {
        package: read_id(&topo.join("physical_package_id"))?,
        die,
        core: read_id(&topo.join("core_id"))?,
        thread: thread as u32,
        node: 0,
    })
}

/// The host's SMT siblings (by package/die/core ids) must match sysfs's
/// `thread_siblings_list`.
fn check_siblings(cpu_dir: &Path, host: &Host, online: &Online) -> Result<(), TopologyError> {
    for cpu in 0..host.nr_cpus() {
        let path = online.dir(cpu_dir, cpu).join("topology/thread_siblings_list");
        let listed = online.dense(&read_list(&path)?);
        let ours = host.thread_siblings(cpu);
        if listed != ours {
            return Err(err(&path, format!("lists {listed}, but package/die/core ids make CPUs {ours} one core")));
        }
    }
    Ok(())
}

/// Node directories, renumbered densely; sets each CPU's node and returns
/// the distance table (empty when there is no `node/` directory).
fn read_nodes(node_dir: &Path, cpus: &mut [LogicalCpu], online: &Online) -> Result<Vec<Vec<u32>>, TopologyError> {
    let Ok(entries) = std::fs::read_dir(node_dir) else {
        return Ok(Vec::new());
    };
    let mut ids: Vec<usize> =
        entries.filter_map(|e| e.ok()?.file_name().into_string().ok()?.strip_prefix("node")?.parse().ok()).collect();
    ids.sort_unstable();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    if ids.len() > MAX_NODES {
        return Err(err(node_dir, format!("{} nodes; the limit is {MAX_NODES}", ids.len())));
    }
    let mut seen = CpuMask::empty();
    let mut table = Vec::with_capacity(ids.len());
    for (dense, id) in ids.iter().enumerate() {
        let dir = node_dir.join(format!("node{id}"));
        let mask = online.dense(&read_list(&dir.join("cpulist"))?);
        // A node may have no CPU (memory only), but a CPU has one node.
        if let Some(cpu) = mask.and(&seen).first() {
            let earlier = cpus[cpu].node;
            return Err(err(
                &dir.join("cpulist"),
                format!("lists CPU {}, which node{} lists too", online.ids[cpu], ids[earlier as usize]),
            ));
        }
        for cpu in mask.iter() {
            cpus[cpu].node = dense as u32;
        }
        seen = seen.or(&mask);
        table.push(read_distances(&dir.join("distance"), ids.len())?);
    }
    if let Some(cpu) = (0..cpus.len()).find(|&c| !seen.contains(c)) {
        return Err(err(node_dir, format!("CPU {} is in no node's cpulist", online.ids[cpu])));
    }
    Ok(table)
}

fn read_distances(path: &Path, nodes: usize) -> Result<Vec<u32>, TopologyError> {
    let s = read(path)?;
    let row = s
        .split_whitespace()
        .map(|t| t.parse::<u32>().map_err(|_| err(path, format!("bad distance {t:?}"))))
        .collect::<Result<Vec<u32>, _>>()?;
    if row.len() != nodes {
        return Err(err(path, format!("has {} distances for {nodes} nodes", row.len())));
    }
    Ok(row)
}

/// Caches of all CPUs, merged: per (level, kind), the distinct
/// `shared_cpu_list` masks (restricted to the used CPUs).
fn read_caches(cpu_dir: &Path, online: &Online) -> Result<Vec<Cache>, TopologyError> {
    let mut by_key: BTreeMap<(u8, CacheKind), Cache> = BTreeMap::new();
    for cpu in 0..online.n() {
        for index in cache_indexes(&online.dir(cpu_dir, cpu).join("cache")) {
            if let Some((key, size_kb, shared)) = read_cache_index(&index, online)? {
                let c =
                    by_key.entry(key).or_insert(Cache { level: key.0, kind: key.1, size_kb, instances: Vec::new() });
                add_instance(c, shared, &index)?;
            }
        }
    }
    Ok(by_key.into_values().collect())
}

fn cache_indexes(cache_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cache_dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_str().is_some_and(|s| s.starts_with("index")))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

type CacheIndex = ((u8, CacheKind), u32, CpuMask);

/// One `indexN` directory; `None` for a kind we do not model (e.g. Trace)
/// and for a cache whose size or level the kernel does not know.
fn read_cache_index(dir: &Path, online: &Online) -> Result<Option<CacheIndex>, TopologyError> {
    let (size_path, level_path) = (dir.join("size"), dir.join("level"));
    if !size_path.exists() || !level_path.exists() {
        return Ok(None);
    }
    let type_path = dir.join("type");
    let Some(kind) = CacheKind::by_name(&read(&type_path)?) else {
        return Ok(None);
    };
    let level = u8::try_from(read_int(&level_path)?).map_err(|_| err(&level_path, "level out of range"))?;
    let size_kb = parse_size_kb(&read(&size_path)?)
        .filter(|&kb| kb > 0)
        .ok_or_else(|| err(&size_path, "expected a size like 32K or 8M, above 0"))?;
    let shared = online.dense(&read_list(&dir.join("shared_cpu_list"))?);
    Ok(Some(((level, kind), size_kb, shared)))
}

fn add_instance(c: &mut Cache, shared: CpuMask, index: &Path) -> Result<(), TopologyError> {
    if c.instances.contains(&shared) || shared.is_empty() {
        return Ok(());
    }
    if let Some(other) = c.instances.iter().find(|m| m.intersects(&shared)) {
        let path = index.join("shared_cpu_list");
        return Err(err(
            &path,
            format!("lists {shared}, which overlaps {other} listed by another CPU for the same cache"),
        ));
    }
    c.instances.push(shared);
    Ok(())
}

/// `32K`, `8192K`, `1M`, `512` (KB).
fn parse_size_kb(s: &str) -> Option<u32> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1),
        'M' | 'm' => (&s[..s.len() - 1], 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u32>().ok()?.checked_mul(mult)
}

/// `ven0002` in `cpu/modalias` is AMD (X86_VENDOR_AMD = 2); anything else Intel.
fn read_vendor(cpu_dir: &Path) -> Vendor {
    let modalias = std::fs::read_to_string(cpu_dir.join("modalias")).unwrap_or_default();
    if modalias.contains("ven0002") { Vendor::Amd } else { Vendor::Intel }
}

fn read_mhz(cpu_dir: &Path) -> u32 {
    let path = cpu_dir.join("cpu0/cpufreq/cpuinfo_max_freq");
    read_int(&path)
        .ok()
        .and_then(|khz| u32::try_from(khz / 1000).ok())
        .filter(|&m| (1..=crate::shape::MAX_MHZ).contains(&m))
        .unwrap_or(DEFAULT_MHZ)
}
