//! TOML host files (std only).
//!
//! Either start from a spec string and adjust it:
//!
//! ```toml
//! name = "my Nehalem box"
//! spec = "2n1s4c2t,mhz=2930,l3=socket:8M"
//! [numa]
//! distances = [[10, 21], [21, 10]]
//! ```
//!
//! or list every logical CPU (entry *k* is CPU *k*, or give each an `id`):
//!
//! ```toml
//! name = "q6600, BIOS numbering"
//! vendor = "intel"            # or "amd"; default intel
//! mhz = 2400                  # default 2400
//! [[cpu]]
//! package = 0                 # required
//! core = 0                    # required, unique within the package
//! die = 0                     # default 0
//! thread = 0                  # default 0
//! node = 0                    # default 0
//! # ... one [[cpu]] per logical CPU
//! [[cache]]
//! level = 2
//! type = "unified"            # data, instruction or unified; default unified
//! size_kb = 4096
//! shared = ["0,2", "1,3"]     # one cpu list per instance
//! ```
//!
//! Top-level keys: `name`, `vendor`, `mhz`, `spec`, `cpu`, `cache`, `numa`;
//! `[numa]` has only `distances`. Unknown keys are errors that name the key.
//! With `spec`, `[[cache]]` tables replace the spec's caches and `[numa]`
//! its distances; `name`, `vendor`, `mhz` override it.

use crate::cpumask::CpuMask;
use crate::error::TopologyError;
use crate::host::{Cache, CacheKind, Host, HostDesc, LogicalCpu, Vendor};
use crate::shape::DEFAULT_MHZ;
use crate::spec::parse_spec;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostFile {
    name: Option<String>,
    vendor: Option<Vendor>,
    mhz: Option<u32>,
    spec: Option<String>,
    #[serde(default)]
    cpu: Vec<CpuEntry>,
    #[serde(default)]
    cache: Vec<CacheEntry>,
    numa: Option<NumaSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CpuEntry {
    id: Option<usize>,
    package: u32,
    #[serde(default)]
    die: u32,
    core: u32,
    #[serde(default)]
    thread: u32,
    #[serde(default)]
    node: u32,
}

fn unified() -> CacheKind {
    CacheKind::Unified
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheEntry {
    level: u8,
    #[serde(rename = "type", default = "unified")]
    kind: CacheKind,
    size_kb: u32,
    shared: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NumaSection {
    distances: Vec<Vec<u32>>,
}

/// A TOML parse error of `text` on one line: `line L, column C: message`.
/// The toml crate's own text spans several lines (a source excerpt under
/// the position), and a command-line error is one line; cfs-sim's sweep
/// files use this too.
pub fn toml_error_line(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(before) = e.span().and_then(|s| text.get(..s.start)) else { return msg };
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!("line {line}, column {column}: {msg}")
}

impl Host {
    /// Reads a TOML host description (see [`crate::toml_host`]).
    pub fn from_toml(text: &str) -> Result<Host, TopologyError> {
        let file: HostFile = toml::from_str(text).map_err(|e| TopologyError::Toml(toml_error_line(text, &e)))?;
        let desc = match (&file.spec, file.cpu.is_empty()) {
            (Some(_), false) => return Err(host_file("give either `spec` or [[cpu]] tables, not both")),
            (None, true) => return Err(host_file("needs a `spec` string or [[cpu]] tables")),
            (Some(spec), true) => from_spec_with(spec, &file)?,
            (None, false) => from_cpu_tables(&file)?,
        };
        Host::new(desc)
    }

    /// Reads a TOML host file from disk.
    pub fn from_toml_file(path: &std::path::Path) -> Result<Host, TopologyError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| TopologyError::HostFile(format!("cannot read {}: {e}", path.display())))?;
        Host::from_toml(&text)
    }
}

fn host_file(msg: &str) -> TopologyError {
    TopologyError::HostFile(msg.to_string())
}

fn from_spec_with(spec: &str, file: &HostFile) -> Result<HostDesc, TopologyError> {
    let mut desc = parse_spec(spec)?.to_host()?.desc().clone();
    if let Some(name) = &file.name {
        desc.name = name.clone();
    }
    desc.vendor = file.vendor.unwrap_or(desc.vendor);
    desc.mhz = file.mhz.unwrap_or(desc.mhz);
    if !file.cache.is_empty() {
        desc.caches = caches(&file.cache)?;
    }
    if let Some(numa) = &file.numa {
        desc.node_distances = numa.distances.clone();
    }
    Ok(desc)
}

fn from_cpu_tables(file: &HostFile) -> Result<HostDesc, TopologyError> {
    Ok(HostDesc {
        name: file.name.clone().unwrap_or_else(|| "host file".to_string()),
        vendor: file.vendor.unwrap_or(Vendor::Intel),
        mhz: file.mhz.unwrap_or(DEFAULT_MHZ),
        cpus: ordered_cpus(&file.cpu)?,
        caches: caches(&file.cache)?,
        node_distances: file.numa.as_ref().map(|n| n.distances.clone()).unwrap_or_default(),
    })
}

/// The `[[cpu]]` entries in logical order: by `id` when every entry has
/// one (they must be exactly 0..n), else in file order.
fn ordered_cpus(entries: &[CpuEntry]) -> Result<Vec<LogicalCpu>, TopologyError> {
    let n = entries.len();
    let with_id = entries.iter().filter(|e| e.id.is_some()).count();
    let mut slots: Vec<Option<LogicalCpu>> = alloc::vec![None; n];
    for (pos, e) in entries.iter().enumerate() {
        let id = match (with_id, e.id) {
            (0, _) => pos,
            (_, Some(id)) if with_id == n => id,
            _ => return Err(host_file("either every [[cpu]] has an `id` or none does")),
        };
        let slot = slots
            .get_mut(id)
            .ok_or_else(|| TopologyError::HostFile(format!("[[cpu]] id {id} is out of range 0..{n}")))?;
        if slot.is_some() {
            return Err(TopologyError::HostFile(format!("[[cpu]] id {id} appears twice")));
        }
        *slot = Some(LogicalCpu { package: e.package, die: e.die, core: e.core, thread: e.thread, node: e.node });
    }
    Ok(slots.into_iter().flatten().collect())
}

fn caches(entries: &[CacheEntry]) -> Result<Vec<Cache>, TopologyError> {
    entries
        .iter()
        .map(|e| {
            let instances = e
                .shared
                .iter()
                .map(|list| {
                    CpuMask::parse_list(list).map_err(|err| TopologyError::BadCache {
                        level: e.level,
                        kind: e.kind.name(),
                        reason: format!("bad `shared` list {list:?}: {err}"),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Cache { level: e.level, kind: e.kind, size_kb: e.size_kb, instances })
        })
        .collect()
}
