//! Helpers shared by the integration tests.
#![allow(dead_code)]

use cfs_topology::{DomainLevel, DomainParams, SchedDomains};

/// One line per CPU: `LEVEL span: group group ... | LEVEL ...`, groups in
/// the domain's list order (local group first), `@power` after a group whose
/// `cpu_power` is not 1024.
pub fn layout(d: &SchedDomains) -> Vec<String> {
    d.per_cpu
        .iter()
        .map(|chain| {
            chain
                .iter()
                .map(|sd| {
                    let groups: Vec<String> = sd
                        .groups
                        .iter()
                        .map(|g| {
                            if g.cpu_power == 1024 {
                                format!("{}", g.cpus)
                            } else {
                                format!("{}@{}", g.cpus, g.cpu_power)
                            }
                        })
                        .collect();
                    format!("{} {}: {}", sd.level, sd.span, groups.join(" "))
                })
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

/// Builds a `DomainParams` in initialiser order:
/// min, max, busy_factor, imbalance_pct, cache_nice_tries,
/// [busy, idle, newidle, wake, forkexec] idx, smt_gain, balance_interval.
#[allow(clippy::too_many_arguments)]
pub const fn params(min: u32, max: u32, bf: u32, imb: u32, cnt: u32, idx: [u8; 5], smt: u32, bi: u32) -> DomainParams {
    DomainParams {
        min_interval: min,
        max_interval: max,
        busy_factor: bf,
        imbalance_pct: imb,
        cache_nice_tries: cnt,
        busy_idx: idx[0],
        idle_idx: idx[1],
        newidle_idx: idx[2],
        wake_idx: idx[3],
        forkexec_idx: idx[4],
        smt_gain: smt,
        balance_interval: bi,
    }
}

/// Every CPU's domain of `level` has these flags (as the profile's number
/// and by name) and parameters; and at least one CPU has that level.
/// Messages name `host`, the CPU, the level and the profile.
pub fn check_level(host: &str, d: &SchedDomains, level: DomainLevel, value: u32, names: &[&str], p: DomainParams) {
    let v = d.version;
    let mut seen = 0;
    for (cpu, chain) in d.per_cpu.iter().enumerate() {
        for sd in chain.iter().filter(|sd| sd.level == level) {
            seen += 1;
            assert_eq!(sd.flags.kernel_value(v), value, "{host} CPU{cpu} {level} flags on {v}");
            assert_eq!(sd.flags.names().collect::<Vec<_>>(), names, "{host} CPU{cpu} {level} flag names on {v}");
            assert_eq!(sd.params, p, "{host} CPU{cpu} {level} params on {v}");
        }
    }
    assert!(seen > 0, "{host}: no {level} domain on {v}");
}

/// The levels of `cpu`, bottom-up.
pub fn levels(d: &SchedDomains, cpu: usize) -> Vec<DomainLevel> {
    d.of(cpu).iter().map(|sd| sd.level).collect()
}
