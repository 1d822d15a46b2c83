//! Text and JSON output: the kernel's sched-domain debug dump, a host
//! summary, and JSON forms of both (for `cfs-sim topology HOST --json`).

use crate::domain::{DomainParams, SchedDomain, SchedDomains};
use crate::host::Host;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

/// The domains as the kernel's `sched_domain_debug` prints them at boot
/// (2.6.32 layout, kernel/sched.c 22763c5cf369 lines 7743-7840):
///
/// ```text
/// CPU0 attaching sched-domain:
///  domain 0: span 0-1 level MC
///   groups: 0 1
/// ```
///
/// `(cpu_power = N)` follows a group whose power is not 1024, as 2.6.32
/// prints it (2.6.26 printed no powers and no level name; both are shown for
/// every profile here). Two lines the kernel does not print follow each
/// domain's groups, at the same indent: `flags N (0x..): SD_...` with the
/// profile's numeric value, and the `SD_*_INIT` parameters.
pub fn render_kernel_debug(domains: &SchedDomains) -> String {
    let mut out = String::new();
    for (cpu, chain) in domains.per_cpu.iter().enumerate() {
        if chain.is_empty() {
            let _ = writeln!(out, "CPU{cpu} attaching NULL sched-domain.");
            continue;
        }
        let _ = writeln!(out, "CPU{cpu} attaching sched-domain:");
        for (level, sd) in chain.iter().enumerate() {
            render_domain(&mut out, domains, level, sd);
        }
    }
    out
}

fn render_domain(out: &mut String, domains: &SchedDomains, level: usize, sd: &SchedDomain) {
    let pad = " ".repeat(level);
    let _ = writeln!(out, "{pad} domain {level}: span {} level {}", sd.span, sd.level);
    let _ = write!(out, "{pad}  groups:");
    for g in &sd.groups {
        let _ = write!(out, " {}", g.cpus);
        if g.cpu_power != crate::builder::SCHED_LOAD_SCALE {
            let _ = write!(out, " (cpu_power = {})", g.cpu_power);
        }
    }
    out.push('\n');
    let value = sd.flags.kernel_value(domains.version);
    let names: Vec<&str> = sd.flags.names().collect();
    let _ = writeln!(out, "{pad}  flags {value} ({value:#x}): {}", names.join("|"));
    let _ = writeln!(out, "{pad}  {}", render_params(&sd.params));
}

fn render_params(p: &DomainParams) -> String {
    let mut s = format!(
        "min_interval {} max_interval {} busy_factor {} imbalance_pct {} cache_nice_tries {} \
         busy_idx {} idle_idx {} newidle_idx {} wake_idx {} forkexec_idx {} balance_interval {}",
        p.min_interval,
        p.max_interval,
        p.busy_factor,
        p.imbalance_pct,
        p.cache_nice_tries,
        p.busy_idx,
        p.idle_idx,
        p.newidle_idx,
        p.wake_idx,
        p.forkexec_idx,
        p.balance_interval
    );
    if p.smt_gain != 0 {
        let _ = write!(s, " smt_gain {}", p.smt_gain);
    }
    s
}

/// A human-readable description of the host: shape, clock, a CPU table,
/// caches and NUMA nodes.
pub fn render_host_summary(host: &Host) -> String {
    let mut out = String::new();
    let threads = host.thread_siblings(0).weight();
    let _ = writeln!(out, "host: {}", host.name());
    let _ = writeln!(
        out,
        "{} {} MHz, {} logical CPUs: {} package(s), {} core(s), {} thread(s) per core, {} NUMA node(s)",
        host.vendor(),
        host.mhz(),
        host.nr_cpus(),
        host.nr_packages(),
        host.nr_cores(),
        threads,
        host.nr_nodes()
    );
    let _ = writeln!(out, "cpu  package  die  core  thread  node");
    for (i, c) in host.cpus().iter().enumerate() {
        let _ = writeln!(out, "{i:>3}  {:>7}  {:>3}  {:>4}  {:>6}  {:>4}", c.package, c.die, c.core, c.thread, c.node);
    }
    let _ = writeln!(out, "caches:");
    for c in host.caches() {
        let list: Vec<String> = c.instances.iter().map(|m| format!("{m}")).collect();
        let _ = writeln!(
            out,
            "  L{} {:<11} {:>6} KB x{}: {}",
            c.level,
            c.kind.name(),
            c.size_kb,
            c.instances.len(),
            list.join(" ")
        );
    }
    render_nodes(&mut out, host);
    out
}

fn render_nodes(out: &mut String, host: &Host) {
    let _ = writeln!(out, "numa nodes:");
    for node in 0..host.nr_nodes() {
        let dists: Vec<String> = host.node_distances()[node].iter().map(|d| format!("{d}")).collect();
        let _ = writeln!(out, "  node {node}: cpus {}  distances {}", host.node_cpus(node), dists.join(" "));
    }
}

#[cfg(feature = "std")]
pub use json::{domains_to_json, host_to_json};

#[cfg(feature = "std")]
mod json {
    use crate::domain::{SchedDomain, SchedDomains};
    use crate::host::Host;
    use alloc::format;
    use alloc::vec::Vec;
    use serde_json::{Value, json};

    /// The domains as JSON: `{version, commit, cpus: [{cpu, domains: [{level,
    /// span, flags, flag_names, groups: [{cpus, cpu_power}], params}]}]}`.
    /// CPU sets are kernel cpu-list strings (`"0-3,8-11"`); `flags` is the
    /// profile's numeric value.
    pub fn domains_to_json(domains: &SchedDomains) -> Value {
        let cpus: Vec<Value> = domains
            .per_cpu
            .iter()
            .enumerate()
            .map(|(cpu, chain)| {
                let doms: Vec<Value> = chain.iter().map(|sd| domain_json(domains, sd)).collect();
                json!({ "cpu": cpu, "domains": doms })
            })
            .collect();
        json!({
            "version": domains.version.name(),
            "commit": domains.version.commit(),
            "cpus": cpus,
        })
    }

    fn domain_json(domains: &SchedDomains, sd: &SchedDomain) -> Value {
        let p = &sd.params;
        let groups: Vec<Value> =
            sd.groups.iter().map(|g| json!({ "cpus": format!("{}", g.cpus), "cpu_power": g.cpu_power })).collect();
        json!({
            "level": sd.level.name(),
            "span": format!("{}", sd.span),
            "flags": sd.flags.kernel_value(domains.version),
            "flag_names": sd.flags.names().collect::<Vec<_>>(),
            "groups": groups,
            "params": {
                "min_interval": p.min_interval,
                "max_interval": p.max_interval,
                "busy_factor": p.busy_factor,
                "imbalance_pct": p.imbalance_pct,
                "cache_nice_tries": p.cache_nice_tries,
                "busy_idx": p.busy_idx,
                "idle_idx": p.idle_idx,
                "newidle_idx": p.newidle_idx,
                "wake_idx": p.wake_idx,
                "forkexec_idx": p.forkexec_idx,
                "smt_gain": p.smt_gain,
                "balance_interval": p.balance_interval,
            },
        })
    }

    /// The host as JSON: `{name, vendor, mhz, cpus: [{cpu, package, die,
    /// core, thread, node}], caches: [{level, type, size_kb, instances}],
    /// nodes: [{node, cpus, distances}]}`.
    pub fn host_to_json(host: &Host) -> Value {
        let cpus: Vec<Value> = host
            .cpus()
            .iter()
            .enumerate()
            .map(|(i, c)| json!({ "cpu": i, "package": c.package, "die": c.die, "core": c.core, "thread": c.thread, "node": c.node }))
            .collect();
        let caches: Vec<Value> = host
            .caches()
            .iter()
            .map(|c| {
                let inst: Vec<_> = c.instances.iter().map(|m| format!("{m}")).collect();
                json!({ "level": c.level, "type": c.kind.name(), "size_kb": c.size_kb, "instances": inst })
            })
            .collect();
        let nodes: Vec<Value> = (0..host.nr_nodes())
            .map(|n| json!({ "node": n, "cpus": format!("{}", host.node_cpus(n)), "distances": host.node_distances()[n] }))
            .collect();
        json!({ "name": host.name(), "vendor": host.vendor().name(), "mhz": host.mhz(), "cpus": cpus, "caches": caches, "nodes": nodes })
    }
}
