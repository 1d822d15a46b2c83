//! `topology_spec`: the host parsers (preset name, compact spec, TOML) and
//! the domain builder for every profile. Must never panic; a built
//! hierarchy must be well formed (spans nest, groups partition the span).
#![no_main]

use cfs_topology::{KernelVersion, parse_any, parse_flag_overrides};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse_flag_overrides(text);
    let Ok(host) = parse_any(text) else { return };
    if host.nr_cpus() > 256 {
        return; // keep each run fast; large hosts are covered by unit tests
    }
    for v in KernelVersion::ALL {
        let d = host.build_domains(v);
        for (cpu, doms) in d.per_cpu.iter().enumerate() {
            let mut child_span = cfs_topology::CpuMask::single(cpu);
            for dom in doms {
                assert!(child_span.is_subset_of(&dom.span), "span does not contain its child");
                let mut union = cfs_topology::CpuMask::empty();
                for g in &dom.groups {
                    assert!(!g.cpus.intersects(&union), "groups overlap");
                    union = union.or(&g.cpus);
                }
                assert_eq!(union, dom.span, "groups do not partition the span");
                child_span = dom.span;
            }
        }
    }
});
