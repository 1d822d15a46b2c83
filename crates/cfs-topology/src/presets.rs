//! The five named hosts of the project (hosts-and-costs.md §1).
//!
//! Logical CPU numbering follows [`crate::shape`]: the cores of a die and the
//! dies of a package are consecutive; on the one SMT host (Nehalem-EP) the
//! second threads come after all first threads (siblings `n`, `n + 8`).
//! hosts-and-costs.md §1.2 warns that real numbering depends on the BIOS; the
//! presets pick this common order and the spec/TOML forms allow any other.

use crate::error::TopologyError;
use crate::host::{Host, Vendor};
use crate::shape::{CacheScope, CacheSpec, HostShape, Numbering};
use alloc::string::ToString;

/// The names [`Host::preset`] accepts.
pub const PRESET_NAMES: [&str; 5] = ["x2", "q6600", "nehalem-ep", "tigerton", "stoakley"];

/// A preset's name and its one-line description (for a `hosts` listing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresetInfo {
    /// What [`Host::preset`] takes.
    pub name: &'static str,
    /// One line: the machine, its shape, clock, caches and memory.
    pub description: &'static str,
}

/// All presets with their descriptions, in [`PRESET_NAMES`] order.
pub const PRESETS: [PresetInfo; 5] = [
    PresetInfo {
        name: "x2",
        description: "AMD Athlon 64 X2 4600+: 1 socket x 2 cores, 2.4 GHz, 512 KB L2 per core, UMA",
    },
    PresetInfo {
        name: "q6600",
        description: "Intel Core 2 Quad Q6600: 1 socket x 2 dies x 2 cores, 2.4 GHz, 4 MB L2 per die, UMA",
    },
    PresetInfo {
        name: "nehalem-ep",
        description: "2 x Intel Xeon X5570: 2 sockets x 4 cores x 2 threads, 2.93 GHz, 8 MB L3 per socket, 2 NUMA nodes",
    },
    PresetInfo {
        name: "tigerton",
        description: "4 x Intel Xeon X7350: 4 sockets x 2 dies x 2 cores, 2.93 GHz, 4 MB L2 per die, UMA (FSB)",
    },
    PresetInfo {
        name: "stoakley",
        description: "2 x Intel Xeon 5400 (Harpertown): 2 sockets x 2 dies x 2 cores, ~3.0 GHz, 6 MB L2 per die, UMA (FSB)",
    },
];

const KNOWN: &str = "x2, q6600, nehalem-ep, tigerton, stoakley";

impl Host {
    /// One of the named hosts ([`PRESET_NAMES`]), case-insensitive.
    pub fn preset(name: &str) -> Result<Host, TopologyError> {
        let shape =
            preset_shape(name).ok_or_else(|| TopologyError::UnknownPreset { name: name.to_string(), known: KNOWN })?;
        shape.to_host()
    }
}

/// The shape behind a preset name, or `None`.
pub fn preset_shape(name: &str) -> Option<HostShape> {
    let n = name.trim();
    let f = [
        ("x2", x2 as fn() -> HostShape),
        ("q6600", q6600),
        ("nehalem-ep", nehalem_ep),
        ("tigerton", tigerton),
        ("stoakley", stoakley),
    ];
    f.iter().find(|(k, _)| k.eq_ignore_ascii_case(n)).map(|(_, make)| make())
}

/// Caches shared per die; no L3 (Core 2 era).
fn l2_per_die(size_kb: u32) -> (Option<CacheSpec>, Option<CacheSpec>) {
    (Some(CacheSpec { scope: CacheScope::Die, size_kb }), None)
}

/// AMD Athlon 64 X2 4600+ (hosts-and-costs.md §1.1): one socket, one native
/// dual-core die, no SMT, 2.4 GHz; 64 KB L1d + 64 KB L1i and a private
/// 512 KB L2 per core (Windsor F2 / Brisbane); one memory node. Vendor AMD,
/// so 2.6.25/26 set no LLC id and build only the CPU level.
fn x2() -> HostShape {
    let mut s = HostShape::new(1, 1, 1, 2, 1);
    s.name = Some("AMD Athlon 64 X2 4600+ (x2)".to_string());
    s.vendor = Vendor::Amd;
    s.mhz = 2400;
    s.l1_kb = 64;
    s.l2 = Some(CacheSpec { scope: CacheScope::Core, size_kb: 512 });
    s.l3 = None;
    s
}

/// Intel Core 2 Quad Q6600, Kentsfield (hosts-and-costs.md §1.2): one
/// package of two dies, each a dual core sharing a 4 MB L2; 32 KB L1d + L1i
/// per core; 2.4 GHz; UMA. CPUs {0,1} and {2,3} are the die pairs.
fn q6600() -> HostShape {
    let mut s = HostShape::new(1, 1, 2, 2, 1);
    s.name = Some("Intel Core 2 Quad Q6600 (q6600)".to_string());
    s.mhz = 2400;
    (s.l2, s.l3) = l2_per_die(4096);
    s
}

/// 2 x Xeon X5570, Nehalem-EP / Gainestown (hosts-and-costs.md §1.5): two
/// sockets, 4 cores x 2 threads each, 2.93 GHz; 32 KB L1d + L1i and 256 KB
/// L2 per core, 8 MB inclusive L3 per socket; one NUMA node per socket.
/// Numbering SMT-last: socket 0 is CPUs 0-3,8-11, socket 1 is 4-7,12-15.
/// The SLIT remote distance 21 is an estimate \[E\] (the reference gives
/// none); only "two nodes" matters to the domain builder.
fn nehalem_ep() -> HostShape {
    let mut s = HostShape::new(2, 1, 1, 4, 2);
    s.name = Some("2 x Intel Xeon X5570 Nehalem-EP (nehalem-ep)".to_string());
    s.mhz = 2930;
    s.numbering = Numbering::SmtLast;
    s.l2 = Some(CacheSpec { scope: CacheScope::Core, size_kb: 256 });
    s.l3 = Some(CacheSpec { scope: CacheScope::Socket, size_kb: 8192 });
    s.remote_distance = 21;
    s
}

/// 4 x Xeon X7350, Tigerton on Caneland (hosts-and-costs.md §1.3): four
/// packages, each an MCM of two dual-core dies with a 4 MB L2 per die (the
/// top-bin 2 x 4 MB), 2.93 GHz, one FSB per socket to a shared MCH: UMA.
fn tigerton() -> HostShape {
    let mut s = HostShape::new(1, 4, 2, 2, 1);
    s.name = Some("4 x Intel Xeon X7350 Tigerton (tigerton)".to_string());
    s.mhz = 2930;
    (s.l2, s.l3) = l2_per_die(4096);
    s
}

/// 2 x Xeon 5400, Harpertown on Stoakley (hosts-and-costs.md §1.4): two
/// packages of two Penryn dies, 6 MB L2 per die, ~3.0 GHz, dual independent
/// FSBs: UMA.
fn stoakley() -> HostShape {
    let mut s = HostShape::new(1, 2, 2, 2, 1);
    s.name = Some("2 x Intel Xeon 5400 Harpertown (stoakley)".to_string());
    s.mhz = 3000;
    (s.l2, s.l3) = l2_per_die(6144);
    s
}
