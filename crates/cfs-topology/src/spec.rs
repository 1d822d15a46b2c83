//! Compact host spec strings: `2s4c2t`, `1s2d2c`, `2n2s4c2t,mhz=2930`.
//!
//! # Grammar
//!
//! ```text
//! spec    = shape *( "," option )          ; whitespace around items is ignored
//! shape   = 1*term                         ; units in the order n, s, d, c, t
//! term    = count unit                     ; each unit at most once
//! count   = 1*DIGIT                        ; decimal, >= 1
//! unit    = "n"   ; NUMA nodes on the host            (default 1)
//!         / "s"   ; sockets (packages) in each node   (default 1)
//!         / "d"   ; dies in each socket               (default 1)
//!         / "c"   ; cores in each die                 (default 1)
//!         / "t"   ; SMT threads in each core          (default 1)
//! option  = "intel" / "amd"                ; vendor (default intel)
//!         / "mhz=" count                   ; clock (default 2400)
//!         / "l2=" (scope [":" size] / "none")  ; L2 sharing (default core:256K)
//!         / "l3=" (scope [":" size] / "none")  ; L3 (default: die, 2M per core)
//!         / "order=" ("smt-last" / "linear")   ; CPU numbering (default smt-last)
//!         / "dist=" count                  ; remote NUMA distance, 11..=255 (default 20)
//! scope   = "core" / "die" / "socket"
//! size    = count ["K" / "M"]              ; KB unless M is given
//! ```
//!
//! Units and option names are case-insensitive; each option may be given
//! once (`intel` and `amd` are one option, the vendor). So `2s4c2t` is 2 sockets × 4
//! cores × 2 threads (16 CPUs, one node), `1s2d2c` a Q6600-like package of 2
//! dies × 2 cores, and `2n2s4c2t` 2 nodes of 2 sockets each (32 CPUs).
//!
//! Caches: L1d and L1i (32 KB) are per core; L2 is per core unless `l2=`
//! says otherwise; the L3 is per die unless `l3=` says otherwise. An L2
//! shared by a die or socket (`l2=die`) makes it the last-level cache: the
//! default L3 is then dropped (give `l3=` explicitly to keep one). A shared L2
//! without a size gets 2 MB per core sharing it (the Q6600's 4 MB per die).
//! Numbering: see [`crate::shape`].

use crate::cpumask::MAX_CPUS;
use crate::error::TopologyError;
use crate::host::{Host, Vendor};
use crate::shape::{CacheScope, CacheSpec, HostShape, Numbering};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// Unit letters in their required order.
const UNITS: [char; 5] = ['n', 's', 'd', 'c', 't'];

/// Parses a spec string into a shape (see the module docs for the grammar).
pub fn parse_spec(spec: &str) -> Result<HostShape, TopologyError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(TopologyError::EmptySpec);
    }
    let mut parts = spec.split(',');
    let shape_str = parts.next().unwrap_or("").trim();
    let counts = parse_shape(shape_str)?;
    let mut shape = HostShape::new(counts[0], counts[1], counts[2], counts[3], counts[4]);
    let mut l3_given = false;
    let mut seen: Vec<&'static str> = Vec::new();
    for opt in parts {
        let opt = opt.trim();
        let key = apply_option(&mut shape, opt)?;
        if seen.contains(&key) {
            return Err(TopologyError::RepeatedSpecOption(key.to_string()));
        }
        seen.push(key);
        l3_given |= key == "l3";
    }
    if !l3_given && shape.l2.is_some_and(|l2| l2.scope != CacheScope::Core) {
        shape.l3 = None;
    }
    Ok(shape)
}

impl Host {
    /// Builds a host from a spec string such as `2s4c2t` (see [`crate::spec`]).
    pub fn from_spec(spec: &str) -> Result<Host, TopologyError> {
        parse_spec(spec)?.to_host()
    }
}

fn syntax(spec: &str, pos: usize, reason: &str) -> TopologyError {
    TopologyError::SpecSyntax { spec: spec.to_string(), pos, reason: reason.to_string() }
}

/// Reads `count unit` terms; returns the counts for n, s, d, c, t.
fn parse_shape(s: &str) -> Result<[u32; 5], TopologyError> {
    if s.is_empty() {
        return Err(syntax(s, 0, "the shape is empty (expected e.g. `2s4c2t`)"));
    }
    let mut counts = [1u32; 5];
    let mut next_unit = 0; // index into UNITS of the lowest unit still allowed
    let bytes = s.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        let (count, after) = read_count(s, pos)?;
        let Some(&u) = bytes.get(after) else {
            return Err(syntax(s, after, "a count must be followed by a unit n, s, d, c or t"));
        };
        let unit = (u as char).to_ascii_lowercase();
        let Some(idx) = UNITS.iter().position(|&x| x == unit) else {
            return Err(syntax(s, after, "unknown unit (expected n, s, d, c or t)"));
        };
        if idx < next_unit {
            return Err(syntax(s, after, "units must come in the order n, s, d, c, t, each at most once"));
        }
        counts[idx] = count;
        next_unit = idx + 1;
        pos = after + 1;
    }
    check_total(s, &counts)?;
    Ok(counts)
}

/// Reads a decimal count >= 1 starting at `pos`; returns it and the index after it.
fn read_count(s: &str, pos: usize) -> Result<(u32, usize), TopologyError> {
    let digits = s[pos..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(syntax(s, pos, "expected a count (a number) before each unit"));
    }
    let end = pos + digits;
    let value: u32 = s[pos..end].parse().map_err(|_| syntax(s, pos, "count too large"))?;
    if value == 0 {
        return Err(syntax(s, pos, "counts must be at least 1"));
    }
    if value as usize > MAX_CPUS {
        return Err(syntax(s, pos, "count too large (the CPU limit is 1024)"));
    }
    Ok((value, end))
}

fn check_total(s: &str, counts: &[u32; 5]) -> Result<(), TopologyError> {
    let total = counts.iter().try_fold(1usize, |acc, &x| acc.checked_mul(x as usize));
    match total {
        Some(n) if n <= MAX_CPUS => Ok(()),
        Some(n) => Err(TopologyError::TooManyCpus(n)),
        None => Err(syntax(s, 0, "the CPU count overflows")),
    }
}

/// Applies one option; returns its key (`vendor` for `intel` and `amd`), so
/// that the caller can refuse one given twice.
fn apply_option(shape: &mut HostShape, opt: &str) -> Result<&'static str, TopologyError> {
    let (key, value) = match opt.split_once('=') {
        Some((k, v)) => (k.trim().to_ascii_lowercase(), Some(v.trim())),
        None => (opt.to_ascii_lowercase(), None),
    };
    let applied = match (key.as_str(), value) {
        ("intel", None) => {
            shape.vendor = Vendor::Intel;
            "vendor"
        }
        ("amd", None) => {
            shape.vendor = Vendor::Amd;
            "vendor"
        }
        ("mhz", Some(v)) => {
            shape.mhz = parse_number(&key, v, "a clock in MHz, 1..=100000", 1, crate::shape::MAX_MHZ)?;
            "mhz"
        }
        ("dist", Some(v)) => {
            shape.remote_distance = parse_number(&key, v, "a remote distance 11..=255", 11, 255)?;
            "dist"
        }
        ("order", Some(v)) => {
            shape.numbering = parse_order(v)?;
            "order"
        }
        ("l2", Some(v)) => {
            shape.l2 = if v.eq_ignore_ascii_case("none") { None } else { Some(parse_cache(&key, v, shape)?) };
            "l2"
        }
        ("l3", Some(v)) => {
            shape.l3 = if v.eq_ignore_ascii_case("none") { None } else { Some(parse_cache(&key, v, shape)?) };
            "l3"
        }
        _ => return Err(TopologyError::UnknownSpecOption(opt.to_string())),
    };
    Ok(applied)
}

fn bad(key: &str, value: &str, expected: &'static str) -> TopologyError {
    TopologyError::BadSpecOption { key: key.to_string(), value: value.to_string(), expected }
}

fn parse_number(key: &str, v: &str, expected: &'static str, min: u32, max: u32) -> Result<u32, TopologyError> {
    v.parse::<u32>().ok().filter(|x| (min..=max).contains(x)).ok_or_else(|| bad(key, v, expected))
}

fn parse_order(v: &str) -> Result<Numbering, TopologyError> {
    if v.eq_ignore_ascii_case("smt-last") {
        Ok(Numbering::SmtLast)
    } else if v.eq_ignore_ascii_case("linear") {
        Ok(Numbering::Linear)
    } else {
        Err(bad("order", v, "smt-last or linear"))
    }
}

const CACHE_EXPECTED: &str = "core, die or socket, optionally followed by :SIZE (e.g. die:4M, core:512K)";

/// `scope[:size]`; a missing size is 256 KB per core-private cache and 2 MB
/// per sharing core otherwise.
fn parse_cache(key: &str, v: &str, shape: &HostShape) -> Result<CacheSpec, TopologyError> {
    let (scope_str, size_str) = match v.split_once(':') {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (v, None),
    };
    let scope = [CacheScope::Core, CacheScope::Die, CacheScope::Socket]
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(scope_str))
        .ok_or_else(|| bad(key, v, CACHE_EXPECTED))?;
    let size_kb = match size_str {
        Some(s) => parse_size(s).ok_or_else(|| bad(key, v, CACHE_EXPECTED))?,
        None => default_size(scope, shape),
    };
    Ok(CacheSpec { scope, size_kb })
}

fn default_size(scope: CacheScope, shape: &HostShape) -> u32 {
    let cores = match scope {
        CacheScope::Core => return 256,
        CacheScope::Die => shape.cores_per_die,
        CacheScope::Socket => shape.cores_per_die.saturating_mul(shape.dies_per_socket),
    };
    2048u32.saturating_mul(cores)
}

/// `512`, `512K`, `4M` -> KB; at most 1 TB.
fn parse_size(s: &str) -> Option<u32> {
    let (num, mult) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1u32),
        b'm' | b'M' => (&s[..s.len() - 1], 1024u32),
        _ => (s, 1u32),
    };
    let n: u32 = num.trim().parse().ok()?;
    n.checked_mul(mult).filter(|&kb| kb > 0)
}

/// The canonical text of a shape including its non-default options, so that
/// `parse_spec(&spec_string(&s))` gives `s` back (name and L1 size aside).
pub fn spec_string(shape: &HostShape) -> String {
    let mut s = shape.canonical();
    if shape.vendor == Vendor::Amd {
        s += ",amd";
    }
    if shape.mhz != crate::shape::DEFAULT_MHZ {
        s += &alloc::format!(",mhz={}", shape.mhz);
    }
    if shape.numbering == Numbering::Linear {
        s += ",order=linear";
    }
    match shape.l2 {
        Some(l2) => s += &alloc::format!(",l2={}:{}K", l2.scope.name(), l2.size_kb),
        None => s += ",l2=none",
    }
    match shape.l3 {
        Some(l3) => s += &alloc::format!(",l3={}:{}K", l3.scope.name(), l3.size_kb),
        None => s += ",l3=none",
    }
    if shape.remote_distance != crate::host::REMOTE_DISTANCE {
        s += &alloc::format!(",dist={}", shape.remote_distance);
    }
    s
}
