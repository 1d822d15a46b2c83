//! Experiments: scheduler configurations side by side (the columns), a
//! sweep over client counts (the rows), several runs each, run in parallel
//! with results in a fixed order.
//!
//! Seeds: run `r` at `c` clients uses the same seed in every column
//! ([`seed_for`]), so columns are compared on the same random draws
//! (common random numbers); only the scheduler differs.

use crate::costs::{CostModel, CostSetting};
use crate::dist::fmt_ns;
use crate::dist::parse_duration;
use crate::engine::{self, RunOutcome, RunSetup, SimError};
use crate::faults::{IrqLoad, Slowdown};
use crate::names::suggest;
use crate::observe::Counters;
use crate::trace::Trace;
use crate::workloads::{Metric, Policies, Workload, WorkloadOpts};
use cfs_core::features::FeatureError;
use cfs_core::{Config, KernelVersion, Patch, SchedDomains};
use cfs_topology::{CpuMask, FlagOverride, Host, parse_flag_overrides, parse_flag_overrides_for};
use rayon::prelude::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// One scheduler configuration as the user wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedSpec {
    /// Column label (None: derived from the settings).
    pub label: Option<String>,
    /// Kernel profile name.
    pub profile: String,
    /// `sched_features`: a number (decimal or 0x..) or feature names
    /// (`NO_SYNC_WAKEUPS WAKEUP_PREEMPT`) applied to the defaults.
    pub features: Option<String>,
    /// Patch names.
    pub patches: Vec<String>,
    /// Policy of every task (`batch`).
    pub policy: Option<String>,
    /// Policy of the client side only (`chrt -b pgbench`).
    pub client_policy: Option<String>,
    /// Policy of the server side only (the postmaster, and so every
    /// backend it forks, under `chrt -b`).
    pub server_policy: Option<String>,
    /// Nice level of the client side only (`nice -n -5 pgbench`).
    pub client_nice: Option<String>,
    /// Nice level of the server side only (the postmaster, and so every
    /// backend it forks, under `nice -n`).
    pub server_nice: Option<String>,
    /// Tunables and engine settings, `name=value` (`hz`, `hres_timers`,
    /// `nohz`, `write_space_wakeups`, `sndbuf`, `tcp_low_latency`, and every
    /// `sched_*` tunable).
    pub sets: Vec<(String, String)>,
    /// Domain flag overrides (`MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL`).
    pub sd_flags: Option<String>,
    /// Cost-model parameters replaced for this column, `name=value`
    /// ([`CostSetting`]), on top of the host's set and any `--cost`.
    pub costs: Vec<(String, String)>,
    /// Interrupt loads injected into this column's runs, as `--irq` writes
    /// them ([`IrqLoad`]), on top of any `--irq`.
    pub irqs: Vec<String>,
    /// CPUs slowed in this column's runs, as `--slow` writes them
    /// ([`Slowdown`]), after any `--slow`.
    pub slow: Vec<String>,
}

/// A configuration ready to run.
#[derive(Clone, Debug)]
pub struct Column {
    /// Label.
    pub label: String,
    /// Scheduler configuration.
    pub config: Config,
    /// Domains with overrides applied.
    pub domains: SchedDomains,
    /// Policies forced on the tasks, if any.
    pub policies: Policies,
    /// Socket-layer settings (`--set write_space_wakeups=1`, `--set sndbuf=0`).
    pub sockets: engine::Sockets,
    /// Cost-model parameters this column replaces ([`Plan::costs_of`]).
    pub costs: Vec<CostSetting>,
    /// Interrupt loads of this column's runs besides [`Plan::irqs`].
    pub irqs: Vec<IrqLoad>,
    /// Slowdowns of this column's runs, after [`Plan::slow`].
    pub slow: Vec<Slowdown>,
    /// How `domains` were built (for the rebuilds of `--switch
    /// offline=`/`online=`).
    pub domain_build: engine::DomainBuild,
    /// Whether the kernel has the `sched_mc_power_savings` and
    /// `sched_smt_power_savings` files on this host
    /// (`cfs_topology::PowerSavings::knob_exists`), for `--switch`.
    pub power_knobs: [bool; 2],
    /// The spec it came from.
    pub spec: SchedSpec,
}

impl SchedSpec {
    /// The defaults of a profile.
    pub fn profile(p: &str) -> SchedSpec {
        SchedSpec { profile: p.to_string(), ..SchedSpec::default() }
    }

    /// Parses `profile=2.6.26-rc4,features=863,patch=waker,name=X,policy=batch,
    /// client-policy=batch,server-policy=normal,client-nice=-5,server-nice=5,
    /// set=NAME=VALUE,cost=NAME=VALUE,sd-flags=MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,
    /// irq=cpus=0;every=1ms;takes=50us,slow=cpus=1;speed=50%` on top of
    /// `self`. An item without `=` continues the previous one (so the
    /// comma-separated sd-flags list needs no quoting); a fault separates
    /// its own keys with `;`. A key that holds one value may appear once;
    /// set, cost, patch, irq and slow items add up.
    pub fn with_items(&self, s: &str) -> Result<SchedSpec, String> {
        let items = split_items(s);
        let mut spec = self.clone();
        // Keys that hold one value, as given in this spec: a second one is
        // a slip (which was meant?), not an override. An item overrides the
        // command line's own options; set, cost and patch items add up.
        let mut given: Vec<&str> = Vec::new();
        for item in items {
            let (k, v) = item.split_once('=').ok_or_else(|| format!("config item {item:?} is not key=value"))?;
            let v = v.trim().to_string();
            let key = config_key(k.trim()).ok_or_else(|| {
                format!(
                    "unknown config key {:?} (known: name, profile, features, patch, policy, client-policy, \
                     server-policy, client-nice, server-nice, set, cost, sd-flags, irq, slow)",
                    k.trim()
                )
            })?;
            if !matches!(key, "patch" | "set" | "cost" | "irq" | "slow") {
                if given.contains(&key) {
                    return Err(format!("config key {key} is given twice in {s:?}"));
                }
                given.push(key);
            }
            match key {
                "name" => spec.label = Some(v),
                "profile" => spec.profile = v,
                "features" => spec.features = Some(v),
                "patch" => spec.patches.extend(v.split('+').map(|p| p.trim().to_string())),
                "policy" => spec.policy = Some(v),
                "client-policy" => spec.client_policy = Some(v),
                "server-policy" => spec.server_policy = Some(v),
                "client-nice" => spec.client_nice = Some(v),
                "server-nice" => spec.server_nice = Some(v),
                "set" => {
                    let (n, x) = v.split_once('=').ok_or_else(|| format!("config set {v:?} is not NAME=VALUE"))?;
                    spec.sets.push((n.trim().into(), x.trim().into()));
                }
                "cost" => {
                    let (n, x) = v.split_once('=').ok_or_else(|| format!("config cost {v:?} is not NAME=VALUE"))?;
                    spec.costs.push((n.trim().into(), x.trim().into()));
                }
                "irq" => spec.irqs.push(v),
                "slow" => spec.slow.push(v),
                _ => spec.sd_flags = Some(v), // "sd-flags", the last of config_key's names
            }
        }
        Ok(spec)
    }

    /// A label from the settings, e.g. `2.6.26-rc4 f=863 +waker`.
    pub fn auto_label(&self) -> String {
        let mut s = self.profile.clone();
        if let Some(f) = &self.features {
            s.push_str(&format!(" f={f}"));
        }
        for p in &self.patches {
            s.push_str(&format!(" +{p}"));
        }
        if let Some(p) = &self.policy {
            s.push_str(&format!(" {p}"));
        }
        if let Some(p) = &self.client_policy {
            s.push_str(&format!(" client:{p}"));
        }
        if let Some(p) = &self.server_policy {
            s.push_str(&format!(" server:{p}"));
        }
        if let Some(n) = &self.client_nice {
            s.push_str(&format!(" client:nice={n}"));
        }
        if let Some(n) = &self.server_nice {
            s.push_str(&format!(" server:nice={n}"));
        }
        for (k, v) in &self.sets {
            s.push_str(&format!(" {k}={v}"));
        }
        for (k, v) in &self.costs {
            s.push_str(&format!(" cost:{k}={v}"));
        }
        if let Some(sd) = &self.sd_flags {
            s.push_str(&format!(" sd={sd}"));
        }
        for irq in &self.irqs {
            s.push_str(&format!(" irq:{irq}"));
        }
        for x in &self.slow {
            s.push_str(&format!(" slow:{x}"));
        }
        s
    }

    /// Validates everything against `host`.
    pub fn resolve(&self, host: &Host) -> Result<Column, String> {
        let version = parse_profile(&self.profile)?;
        let mut cfg = Config::new(version, host.nr_cpus());
        // A label is a table heading, a CSV field and a plot legend.
        if let Some(l) = self.label.as_deref().filter(|l| l.trim().is_empty() || l.chars().any(char::is_control)) {
            return Err(format!("config name {l:?}: give a non-empty name without control characters"));
        }
        for (i, name) in self.patches.iter().enumerate() {
            if self.patches[..i].iter().any(|q| q.trim() == name.trim()) {
                return Err(format!("patch {name:?} is given twice"));
            }
            let p = Patch::by_name(name).ok_or_else(|| {
                let known: Vec<&str> = Patch::ALL.iter().map(|p| p.name()).collect();
                let hint = suggest(name, &known).map(|k| format!("; did you mean {k:?}?")).unwrap_or_default();
                format!("unknown patch {name:?} (known: {}){hint}", known.join(", "))
            })?;
            cfg = cfg.with_patch(p).map_err(|e| e.to_string())?;
        }
        if let Some(f) = &self.features {
            cfg = apply_features(cfg, f)?;
        }
        let mut sockets = engine::Sockets::default();
        let mut boot = cfs_topology::builder::BuildOptions::default();
        let mut users = (None, None);
        for (k, v) in &self.sets {
            apply_set(&mut cfg, &mut sockets, &mut boot, &mut users, k, v)?;
        }
        // A knob the kernel made no sysfs file for cannot be written
        // (ENOENT), whatever the value.
        for (name, _) in &self.sets {
            let Some(smt) = cfs_topology::PowerSavings::knob_of(name) else { continue };
            if !cfs_topology::PowerSavings::knob_exists(host, version, smt) {
                return Err(format!("--set {name}: {}", no_knob_file(name, version, smt)));
            }
        }
        if let Some(c) = boot.isolcpus.iter().find(|&c| c >= host.nr_cpus()) {
            return Err(format!("--set isolcpus: CPU {c} does not exist (the host has {})", host.nr_cpus()));
        }
        // What the fair class reads of the knobs (2.6.32's newly idle
        // consolidation and idle load balancer), as the domains are built.
        cfg.power_savings = boot.power_savings;
        cfg.validate().map_err(|e| e.to_string())?;
        let policy = |p: &Option<String>, key: &str| {
            p.as_deref().map(|p| crate::workloads::policy_by_name(p).map_err(|e| format!("{key}: {e}"))).transpose()
        };
        let nice = |n: &Option<String>, key: &str| {
            n.as_deref().map(|n| parse_nice_level(n).map_err(|e| format!("{key}: {e}"))).transpose()
        };
        let policies = Policies {
            all: policy(&self.policy, "policy")?,
            client: policy(&self.client_policy, "client-policy")?,
            server: policy(&self.server_policy, "server-policy")?,
            client_nice: nice(&self.client_nice, "client-nice")?,
            server_nice: nice(&self.server_nice, "server-nice")?,
            client_uid: users.0,
            server_uid: users.1,
        };
        // The boot domains, as every rebuild makes them: a patch of the
        // domain initialisers goes to the builder, which applies it before
        // group power and degenerate removal read the flags, as the patched
        // kernel's build does (engine::DomainBuild::build).
        let mut domain_build = engine::DomainBuild { options: boot, ..engine::DomainBuild::default() };
        let mut domains = domain_build.build(host, &cfg, host.all_cpus());
        // `--sd-flags` writes flags into the built domains, as the
        // sched_domain sysctl does to a running kernel: no level is added
        // or dropped. A rebuild after hotplug writes them again.
        if let Some(sd) = &self.sd_flags {
            let ov = parse_flag_overrides_for(sd, version).map_err(|e| format!("--sd-flags: {e}"))?;
            // One list may serve several hosts (thread 2's MC and CPU fix
            // on Nehalem-EP, which has no CPU level): items for a level the
            // host lacks are skipped, but a list none of whose levels exist
            // here would change nothing, and is refused.
            if let Some(Err(e)) = ov.iter().map(|o| has_level(&domains, o.level)).reduce(|a, b| a.or(b)) {
                return Err(format!("--sd-flags: {e}"));
            }
            refuse_patch_overlap(&cfg, &ov).map_err(|e| format!("--sd-flags: {e}"))?;
            domains.apply_overrides(&ov);
            domain_build.overrides = ov;
        }
        let costs = self.costs.iter().map(|(k, v)| CostSetting::new(k, v)).collect::<Result<Vec<_>, _>>()?;
        let irqs = self.irqs.iter().map(|s| parse_irq(s, host, "irq")).collect::<Result<Vec<_>, _>>()?;
        let slow = self.slow.iter().map(|s| parse_slow(s, host, "slow")).collect::<Result<Vec<_>, _>>()?;
        let label = self.label.clone().unwrap_or_else(|| self.auto_label());
        Ok(Column {
            label,
            config: cfg,
            domains,
            policies,
            sockets,
            costs,
            irqs,
            slow,
            domain_build,
            power_knobs: [false, true].map(|smt| cfs_topology::PowerSavings::knob_exists(host, version, smt)),
            spec: self.clone(),
        })
    }
}

/// An edit of the domain initialisers (`--set sd_init`, `topology
/// --sd-init`) for a kernel configured as `cfg`: every flag exists in its
/// version, and none is one its patches edit at the same level.
pub fn parse_sd_init(list: &str, cfg: &Config) -> Result<Vec<FlagOverride>, String> {
    let ov = parse_flag_overrides_for(list, cfg.version).map_err(|e| e.to_string())?;
    refuse_patch_overlap(cfg, &ov)?;
    Ok(ov)
}

/// A `sched_mc_power_savings` / `sched_smt_power_savings` level for
/// `version`: 0 or 1 for 2.6.25/26, 0 to 2 for 2.6.32 (2 is
/// POWERSAVINGS_BALANCE_WAKEUP, read for the MC knob only); each store
/// answers -EINVAL to anything else.
pub fn parse_power_savings(v: &str, version: KernelVersion) -> Result<u8, String> {
    let max = cfs_core::config::max_power_savings(version);
    match v.trim().parse::<u8>() {
        Ok(level) if level <= max => Ok(level),
        _ => Err(format!("not a valid value (0 to {max} for {version})")),
    }
}

/// Why a power-savings knob has no sysfs file (`PowerSavings::knob_exists`).
pub fn no_knob_file(name: &str, version: KernelVersion, smt: bool) -> String {
    let why = if smt {
        "the host has no SMT siblings (smt_capable())"
    } else if version.is_2_6_32() {
        "the host's first package is not a multi-core part smaller than the machine (mc_capable())"
    } else {
        "the host's packages have one core each (mc_capable())"
    };
    format!("{version} makes no /sys/devices/system/cpu/{name} here: {why}")
}

/// Refuses flag edits (`--sd-flags`, `--set sd_init`) that touch a flag a
/// patch of `cfg` edits at the same level: the edit would silently take
/// the patch's value, since the scheduler writes the patch's edits into
/// the levels it is given.
fn refuse_patch_overlap(cfg: &Config, ov: &[FlagOverride]) -> Result<(), String> {
    cfg.patches.iter().try_for_each(|p| refuse_overlap_of(p, ov))
}

/// [`refuse_patch_overlap`] for one patch `p`.
fn refuse_overlap_of(p: cfs_core::Patch, ov: &[FlagOverride]) -> Result<(), String> {
    for &(level, set, clear) in p.domain_flags() {
        if let Some(o) = ov.iter().find(|o| o.level == level && (o.set | o.clear).intersects(set | clear)) {
            let names: Vec<&str> = ((o.set | o.clear) & (set | clear)).names().collect();
            return Err(format!(
                "patch {p} already sets {} at {}; give one or the other",
                names.join(","),
                level.name()
            ));
        }
    }
    Ok(())
}

/// An interrupt load (`--irq`, or `irq=` of a column as `what` says) on
/// CPUs `host` has.
pub fn parse_irq(s: &str, host: &Host, what: &str) -> Result<IrqLoad, String> {
    let load: IrqLoad = s.parse().map_err(|e| format!("{what}: {e}"))?;
    on_host(s, load.missing_cpu(host.nr_cpus()), host, what).map(|()| load)
}

/// A slowdown (`--slow`, or `slow=` of a column as `what` says) of CPUs
/// `host` has.
pub fn parse_slow(s: &str, host: &Host, what: &str) -> Result<Slowdown, String> {
    let x: Slowdown = s.parse().map_err(|e| format!("{what}: {e}"))?;
    on_host(s, x.missing_cpu(host.nr_cpus()), host, what).map(|()| x)
}

/// A fault's first CPU that `host` lacks, as an error.
fn on_host(s: &str, missing: Option<usize>, host: &Host, what: &str) -> Result<(), String> {
    match missing {
        Some(c) => Err(format!("{what} {s:?}: CPU {c} does not exist (the host has {})", host.nr_cpus())),
        None => Ok(()),
    }
}

/// An override of `level` would change nothing if the host builds no
/// domain at that level (a NODE flag on a one-node machine): refused, so
/// that a column never carries a setting that silently does not exist.
fn has_level(domains: &SchedDomains, level: cfs_topology::DomainLevel) -> Result<(), String> {
    let mut present: Vec<cfs_topology::DomainLevel> = Vec::new();
    for d in domains.per_cpu.iter().flatten() {
        if !present.contains(&d.level) {
            present.push(d.level);
        }
    }
    if present.contains(&level) {
        return Ok(());
    }
    present.sort();
    let names: Vec<&str> = present.iter().map(|l| l.name()).collect();
    Err(format!(
        "this host builds no {level} domain under {} (its levels: {})",
        domains.version,
        if names.is_empty() { "none".to_string() } else { names.join(", ") }
    ))
}

fn apply_features(mut cfg: Config, f: &str) -> Result<Config, String> {
    let t = f.trim();
    if t.is_empty() {
        return Err("empty sched_features: give a mask (895, 0x37f) or names (NO_SYNC_WAKEUPS)".into());
    }
    // Something like `0x`, `0xffffffffff` or `-5` is a mistyped or
    // too-wide mask, not a feature name.
    let hex = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"));
    if let Some(h) = hex.filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit())) {
        if u32::from_str_radix(h, 16).is_err() {
            return Err(format!("bad sched_features mask {t:?}: not a 32-bit number"));
        }
    }
    if t.chars().all(|c| c.is_ascii_digit()) && t.parse::<u32>().is_err() {
        return Err(format!("bad sched_features mask {t:?}: not a 32-bit number"));
    }
    let looks_numeric = hex.is_some() || t.chars().all(|c| c.is_ascii_digit() || c == '-' || c == 'x');
    cfg.features = match engine::features_from_text(cfg.features, t) {
        Ok(f) => f,
        Err(FeatureError::UnknownName(_)) if looks_numeric => return Err(format!("bad sched_features mask {t:?}")),
        Err(e) => return Err(format!("bad sched_features {t:?}: {e}")),
    };
    Ok(cfg)
}

/// A kernel profile by name, with a "did you mean" hint when unknown.
pub fn parse_profile(name: &str) -> Result<KernelVersion, String> {
    name.parse().map_err(|e| {
        let names: Vec<&str> = KernelVersion::ALL.iter().map(|v| v.name()).collect();
        // A well-formed version that is not a profile (2.6.27) is not a
        // typo of its nearest neighbour: the list of profiles says it all.
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let a_version = name.trim().strip_prefix("2.6.").is_some_and(|rest| match rest.split_once("-rc") {
            Some((sub, rc)) => digits(sub) && digits(rc),
            None => digits(rest),
        });
        match suggest(name, &names).filter(|_| !a_version) {
            Some(s) => format!("{e}; did you mean {s:?}?"),
            None => format!("{e}"),
        }
    })
}

/// The relax_domain_level= boot parameter as `--set relax_domain_level=`
/// and `topology --relax-domain-level` take it: a level number, SIBLING 1,
/// MC 2, CPU 3, NODE 4, ALLNODES 5. 2.6.26 final and 2.6.32 ignore 6 and up
/// (`val < SD_LV_MAX`), 2.6.26-rc4 takes any, 2.6.25 has no such parameter;
/// where it does nothing it is accepted, as the kernel accepts it. Signs and
/// other bases are refused: the kernel's simple_strtoul reads `-1` as 0
/// (every level loses idle balancing) and `08` as 0, which no one means.
pub fn parse_relax_domain_level(v: &str) -> Result<u8, String> {
    v.trim().parse::<u8>().map_err(|_| {
        "not a level (0-255: SIBLING 1, MC 2, CPU 3, NODE 4, ALLNODES 5; leave it out for the kernel's default)".into()
    })
}

/// CONFIG_NUMA as `--set numa=` and `topology --numa` take it: `auto`,
/// `on` (or 1, true, yes), `off` (or 0, false, no).
pub fn parse_numa(v: &str) -> Option<cfs_topology::NumaConfig> {
    match v {
        "auto" => Some(cfs_topology::NumaConfig::Auto),
        "1" | "true" | "on" | "yes" => Some(cfs_topology::NumaConfig::On),
        "0" | "false" | "off" | "no" => Some(cfs_topology::NumaConfig::Off),
        _ => None,
    }
}

/// `users`: the client and server sides' user ids (`client_uid`,
/// `server_uid`), which name their task groups under group scheduling.
fn apply_set(
    cfg: &mut Config,
    sockets: &mut engine::Sockets,
    boot: &mut cfs_topology::builder::BuildOptions,
    users: &mut (Option<u32>, Option<u32>),
    k: &str,
    v: &str,
) -> Result<(), String> {
    let bad = || format!("--set {k}={v}: not a valid value");
    let as_bool = || match v {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(bad()),
    };
    match k {
        "hz" => cfg.hz = v.parse().map_err(|_| bad())?,
        "hres_timers" | "hres" => cfg.hres_timers = as_bool()?,
        "nohz" => cfg.nohz = as_bool()?,
        // CONFIG_NR_CPUS (cfs_core::Config::nr_cpus): only the cap on a
        // balance interval reads it.
        "nr_cpus" => cfg.nr_cpus = v.parse().map_err(|_| bad())?,
        // CONFIG_PREEMPT (cfs_core::Config::preempt).
        "preempt" => cfg.preempt = as_bool()?,
        // CONFIG_CPUSETS with the top cpuset alone (Config::cpusets).
        "cpusets" => cfg.cpusets = as_bool()?,
        // CONFIG_FAIR_GROUP_SCHED with USER_SCHED (Config::group_sched):
        // one task group per user id.
        "group_sched" => cfg.group_sched = as_bool()?,
        // The users a built-in's two sides run as (by default both 1000,
        // cfs_machine::workloads::CLIENT_UID): with group scheduling, one
        // group or two.
        "client_uid" => users.0 = Some(v.parse().map_err(|_| bad())?),
        "server_uid" => users.1 = Some(v.parse().map_err(|_| bad())?),
        "check_invariants" => cfg.check_invariants = as_bool()?,
        "write_space_wakeups" => sockets.write_space_wakeups = as_bool()?,
        // net.ipv4.tcp_low_latency (engine::Sockets): no TCP prequeue, so
        // a reader blocked in recv gets a sync wakeup too. An int sysctl
        // (proc_dointvec): any non-zero value is on.
        "tcp_low_latency" => sockets.tcp_low_latency = v.parse::<i64>().map_or_else(|_| as_bool(), |n| Ok(n != 0))?,
        // select()'s pass as a window wakeups can race (engine::Sockets).
        "poll_window" => sockets.poll_window = as_bool()?,
        // The relax_domain_level= boot parameter (2.6.26-rc1 on): levels
        // above it lose idle balancing, levels at or below gain it
        // (cfs_topology::builder::BuildOptions::relax_domain_level).
        "relax_domain_level" => {
            boot.relax_domain_level = Some(parse_relax_domain_level(v).map_err(|e| format!("--set {k}={v}: {e}"))?)
        }
        // An edit of the SD_*_INIT initialisers (include/linux/topology.h,
        // arch/x86's SD_NODE_INIT), as a kernel built from edited source:
        // the builder applies it before group power and degenerate removal
        // read the flags, so it can keep or drop a level, where --sd-flags
        // (the sched_domain sysctl) only writes the built ones. Several
        // compose in order; a level the host does not build is edited to
        // no effect, as in the kernel.
        "sd_init" => {
            let ov = parse_sd_init(v, cfg).map_err(|e| format!("--set {k}={v}: {e}"))?;
            boot.init_flags = boot.init_flags.with_overrides(&ov);
        }
        // /sys/devices/system/cpu/sched_mc_power_savings and
        // sched_smt_power_savings, as written before the run: the domains
        // are built with them (cfs_topology::PowerSavings).
        "sched_mc_power_savings" | "sched_smt_power_savings" => {
            let level = parse_power_savings(v, cfg.version).map_err(|e| format!("--set {k}={v}: {e}"))?;
            let smt = cfs_topology::PowerSavings::knob_of(k) == Some(true);
            boot.power_savings = boot.power_savings.with(smt, level);
        }
        // CONFIG_NUMA: `auto` (the default) has it where the host has more
        // than one node; `on` is a distro kernel on a one-node box, which
        // builds a NODE level over the node (kept in 2.6.25/26, and by
        // 2.6.32 only when an edited initialiser gives it a flag CPU lacks).
        "numa" => {
            boot.numa = parse_numa(v).ok_or_else(|| format!("--set numa={v}: not a valid value (auto, on or off)"))?
        }
        // The isolcpus= boot parameter: those CPUs get no sched domain, and
        // tasks not pinned there inherit init's mask, which leaves them out.
        "isolcpus" => {
            boot.isolcpus = CpuMask::parse_list(v).map_err(|e| format!("--set isolcpus={v}: bad CPU list: {e}"))?;
        }
        // SOCK_MIN_SNDBUF (2,048) is the least a socket takes; 0 leaves
        // send buffers unbounded.
        "sndbuf" => {
            sockets.sndbuf = match v.parse::<u64>() {
                Ok(b) if b == 0 || (engine::SOCK_MIN_SNDBUF..=i32::MAX as u64).contains(&b) => b,
                _ => {
                    return Err(format!(
                        "--set sndbuf={v}: not a valid value (0 for unbounded, or 2048 to 2147483647 bytes)"
                    ));
                }
            }
        }
        _ => {
            let value: i64 = v.parse().map_err(|_| bad())?;
            match cfg.tunables.set_by_name(k, value) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(format!(
                        "unknown setting {k:?} (known: hz, hres_timers, nohz, preempt, cpusets, group_sched, client_uid, server_uid, nr_cpus, numa, isolcpus, relax_domain_level, sd_init, sched_mc_power_savings, sched_smt_power_savings, check_invariants, write_space_wakeups, \
                         poll_window, sndbuf, tcp_low_latency, sched_latency_ns, \
                         sched_min_granularity_ns, sched_wakeup_granularity_ns, sched_migration_cost, sched_nr_migrate, \
                         sched_child_runs_first, sched_compat_yield)"
                    ));
                }
                Err(e) => return Err(format!("--set {k}={v}: {e}")),
            }
        }
    }
    Ok(())
}

/// Splits `key=value` items at commas; a part without `=` continues the
/// previous item (so a comma-separated sd-flags list needs no quoting),
/// and so does one whose key holds a `;` (a fault's CPU list going on).
fn split_items(s: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    for part in s.split(',') {
        // No key has a `;`: `2;every=1ms` goes on with a fault's CPU list
        // (`irq=cpus=0,2;every=1ms;takes=50us`).
        let continues = part.split('=').next().is_some_and(|key| key.contains(';')) || !part.contains('=');
        match items.last_mut() {
            Some(last) if continues && !part.trim().is_empty() => {
                last.push(',');
                last.push_str(part);
            }
            _ if part.trim().is_empty() => {}
            _ => items.push(part.to_string()),
        }
    }
    items
}

/// Settings fixed at boot, which `--switch` cannot write mid-run.
const BOOT_ONLY: [&str; 18] = [
    "hz",
    "cpusets",
    "group_sched",
    "client_uid",
    "server_uid",
    "hres_timers",
    "hres",
    "nohz",
    "nr_cpus",
    "preempt",
    "check_invariants",
    "write_space_wakeups",
    "poll_window",
    "sndbuf",
    "isolcpus",
    "numa",
    "relax_domain_level",
    "sd_init",
];

/// The side a task setting's `--switch` key names: the plain key
/// (`policy`, `affinity`, `nice`) every task, a `client-`/`pin-client` one
/// the client side, the rest (`server-`, `pin-backends`) the server side.
fn side_of_key(key: &str) -> Option<crate::program::Side> {
    use crate::program::Side;
    match key {
        "policy" | "affinity" | "nice" => None,
        k if k.contains("client") => Some(Side::Client),
        _ => Some(Side::Server),
    }
}

/// A nice level, -20..=19. Out of range is an error here, where
/// setpriority(2) would clamp it: a typed 25 is more likely a slip than a
/// request for 19.
pub fn parse_nice_level(s: &str) -> Result<i32, String> {
    s.trim()
        .parse::<i32>()
        .ok()
        .filter(|n| (-20..=19).contains(n))
        .ok_or_else(|| format!("{s:?} is not a nice level (-20..=19)"))
}

/// Said after a fault that `--switch` could not read: written with commas,
/// it would have been split into items of its own keys.
const FAULT_HINT: &str = " (inside --switch, an irq= or slow= fault separates its own keys with ;)";

/// Parses one `--switch AT:SETTINGS` value: at simulated time `AT` (`2s`,
/// `500ms`) write each of `SETTINGS` in order, as `echo … >
/// /proc/sys/kernel/sched_*` would on the running kernel:
/// `features=MASK` or `features=NAMES` (applied to the mask of that
/// moment), `set=NAME=VALUE` (a `sched_*` tunable, or `tcp_low_latency`), `sd-flags=LEVEL:±FLAG,…`,
/// `patch=NAME` and `no-patch=NAME` (a patch switched on or off, which no
/// running kernel can do; one that edits the domain initialisers also
/// rebuilds the domains, as the patched kernel would have built them),
/// `set=sched_mc_power_savings=N` / `set=sched_smt_power_savings=N` (the
/// sysfs write, which rebuilds the domains); and, as `chrt -p` would on the running tasks,
/// `policy=P` (every live task), `server-policy=P` and `client-policy=P`
/// (the live tasks of one side; what they fork later inherits it), and as
/// `taskset -p` would, `affinity=CPUS`, `pin-client=CPUS` and
/// `pin-backends=CPUS`, and as `renice` would, `nice=N`, `client-nice=N`
/// and `server-nice=N` (N in -20..=19); and as faults, `irq=LOAD` (an
/// interrupt load starts, its keys separated by `;`:
/// `irq=cpus=0;every=1ms;takes=50us`), `irq=off` (every load stops) and
/// `slow=cpus=1;speed=50%` (`speed=100%` restores), and as CPU hotplug,
/// `offline=CPUS` (each goes down, its tasks moved off and the domains
/// rebuilt without it; never CPU 0, which x86 cannot offline) and
/// `online=CPUS` (each comes back). An item without `=`
/// continues the previous one, as in `--config` (so `pin-backends=1,3` is
/// one item).
pub fn parse_switch(s: &str) -> Result<Vec<engine::Change>, String> {
    use engine::{Change, Setting};
    let (at, spec) =
        s.split_once(':').ok_or_else(|| format!("--switch {s:?}: expected AT:SETTINGS, e.g. 2s:features=863"))?;
    let at_ns = parse_duration(at).map_err(|e| format!("--switch {s:?}: {e}"))?;
    let items = split_items(spec);
    if items.is_empty() {
        return Err(format!("--switch {s:?}: no setting after {at:?}"));
    }
    let patch = |name: &str| {
        Patch::by_name(name.trim()).ok_or_else(|| {
            let known: Vec<&str> = Patch::ALL.iter().map(|p| p.name()).collect();
            format!("--switch {s:?}: unknown patch {name:?} (known: {})", known.join(", "))
        })
    };
    let mut out = Vec::new();
    for item in items {
        let (k, v) = item.split_once('=').ok_or_else(|| format!("--switch {s:?}: {item:?} is not key=value"))?;
        let v = v.trim();
        let mut push = |setting| out.push(Change { at_ns, setting });
        match k.trim() {
            "features" | "f" if v.trim().is_empty() => return Err(format!("--switch {s:?}: empty sched_features")),
            "features" | "f" => push(Setting::Features(v.to_string())),
            "set" => {
                let (n, x) = v.split_once('=').ok_or_else(|| format!("--switch {s:?}: set {v:?} is not NAME=VALUE"))?;
                let n = n.trim();
                if BOOT_ONLY.contains(&n) {
                    return Err(format!("--switch {s:?}: {n} is fixed at boot; give it with --set instead"));
                }
                let value = x.trim().parse::<i64>().map_err(|_| format!("--switch {s:?}: {x:?} is not an integer"))?;
                // A net sysctl the engine holds, not a sched_* tunable; an
                // int (proc_dointvec), on when not 0.
                if n == "tcp_low_latency" {
                    push(Setting::TcpLowLatency(value != 0));
                } else if let Some(smt) = cfs_topology::PowerSavings::knob_of(n) {
                    // The sysfs knob; each kernel's values are checked
                    // against the columns (check_changes).
                    let level = u8::try_from(value).map_err(|_| format!("--switch {s:?}: {n} takes 0 to 2"))?;
                    push(Setting::PowerSavings { smt, level });
                } else {
                    push(Setting::Tunable(n.to_string(), value));
                }
            }
            "sd-flags" | "sd_flags" | "sd" => {
                for o in parse_flag_overrides(v).map_err(|e| format!("--switch {s:?}: {e}"))? {
                    push(Setting::DomainFlags(o.level, o.set, o.clear));
                }
            }
            "patch" | "patches" => {
                for name in v.split('+') {
                    push(Setting::Patch(patch(name)?, true));
                }
            }
            "no-patch" | "no_patch" | "unpatch" => {
                for name in v.split('+') {
                    push(Setting::Patch(patch(name)?, false));
                }
            }
            key @ ("policy" | "client-policy" | "client_policy" | "server-policy" | "server_policy") => {
                let policy = crate::workloads::policy_by_name(v).map_err(|e| format!("--switch {s:?}: {e}"))?;
                let side = side_of_key(key);
                push(Setting::Policy(side, policy));
            }
            key @ ("affinity" | "pin-client" | "pin_client" | "pin-backends" | "pin_backends") => {
                let mask = CpuMask::parse_list(v).map_err(|e| format!("--switch {s:?}: bad CPU list {v:?}: {e}"))?;
                if mask.is_empty() {
                    return Err(format!("--switch {s:?}: {key} names no CPU"));
                }
                let side = side_of_key(key);
                push(Setting::Affinity(side, mask));
            }
            key @ ("nice" | "client-nice" | "client_nice" | "server-nice" | "server_nice") => {
                let nice = parse_nice_level(v).map_err(|e| format!("--switch {s:?}: {key} {e}"))?;
                let side = side_of_key(key);
                push(Setting::Nice(side, nice));
            }
            "irq" | "irqs" if matches!(v, "off" | "none") => push(Setting::NoIrq),
            "irq" | "irqs" => push(Setting::Irq(v.parse().map_err(|e| format!("--switch {s:?}: {e}{}", FAULT_HINT))?)),
            "slow" => push(Setting::Slow(v.parse().map_err(|e| format!("--switch {s:?}: {e}{}", FAULT_HINT))?)),
            key @ ("offline" | "online") => {
                let mask = CpuMask::parse_list(v).map_err(|e| format!("--switch {s:?}: bad CPU list {v:?}: {e}"))?;
                if mask.is_empty() {
                    return Err(format!("--switch {s:?}: {key} names no CPU"));
                }
                for cpu in mask.iter() {
                    push(if key == "offline" { Setting::Offline(cpu) } else { Setting::Online(cpu) });
                }
            }
            other => {
                return Err(format!(
                    "--switch {s:?}: unknown key {other:?} (known: features, set, sd-flags, patch, no-patch, \
                     policy, client-policy, server-policy, affinity, pin-client, pin-backends, nice, client-nice, \
                     server-nice, irq, slow, offline, online)"
                ));
            }
        }
    }
    Ok(out)
}

/// Checks that every change can be written, in time order, on every
/// column's scheduler (the mask and flags exist in its kernel, the value is
/// in range, the patch applies), so a bad `--switch` fails before any run.
pub fn check_changes(columns: &[Column], changes: &[engine::Change]) -> Result<(), String> {
    for col in columns {
        // As at boot, the domain flags written at one time may name levels
        // this host lacks, but not only such levels.
        let mut times: Vec<u64> = changes.iter().map(|c| c.at_ns).collect();
        times.sort_unstable();
        times.dedup();
        for at in times {
            let levels = changes.iter().filter(|d| d.at_ns == at).filter_map(|d| match d.setting {
                engine::Setting::DomainFlags(level, ..) => Some(level),
                _ => None,
            });
            if let Some(Err(e)) = levels.map(|l| has_level(&col.domains, l)).reduce(|a, b| a.or(b)) {
                return Err(format!("--switch at {}: {e}", fmt_ns(at)));
            }
        }
        let n = col.domains.nr_cpus();
        engine::check_hotplug(n, changes).map_err(|e| format!("--switch {e}"))?;
        let mut s = cfs_core::Scheduler::new(col.config, col.domains.clone()).map_err(|e| e.to_string())?;
        for c in changes {
            if let engine::Setting::PowerSavings { smt, level } = c.setting {
                let at = fmt_ns(c.at_ns);
                let file = cfs_topology::PowerSavings::file(smt);
                if !col.power_knobs[usize::from(smt)] {
                    let why = no_knob_file(file, col.config.version, smt);
                    return Err(format!("--switch at {at}: set={file}={level}: {why}"));
                }
                parse_power_savings(&level.to_string(), col.config.version)
                    .map_err(|e| format!("--switch at {at}: set={file}={level}: {e}"))?;
            }
            // A patch switched on meets the boot's own edits (`--set
            // sd_init`, `--sd-flags`) as it would at boot: both would edit
            // one flag, and the rebuild would keep neither kernel's levels.
            if let engine::Setting::Patch(p, true) = c.setting {
                let boot: Vec<FlagOverride> = col
                    .domain_build
                    .options
                    .init_flags
                    .iter()
                    .chain(col.domain_build.overrides.iter().copied())
                    .collect();
                refuse_overlap_of(p, &boot).map_err(|e| format!("--switch at {}: patch={p}: {e}", fmt_ns(c.at_ns)))?;
            }
            if let engine::Setting::DomainFlags(level, set, clear) = c.setting {
                FlagOverride { level, set, clear }
                    .check_version(col.config.version)
                    .map_err(|e| format!("--switch at {}: {e}", fmt_ns(c.at_ns)))?;
            }
            c.setting
                .apply(&mut s)
                .map_err(|e| format!("--switch at {}: config {:?}: {e}", fmt_ns(c.at_ns), col.label))?;
        }
    }
    Ok(())
}

/// The canonical name of a `--config` key, its spellings folded
/// (`label` is `name`, `kernel` is `profile`, `sd` is `sd-flags`, ...);
/// None for an unknown key.
fn config_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "name" | "label" => "name",
        "profile" | "kernel" => "profile",
        "features" | "f" => "features",
        "patch" | "patches" => "patch",
        "policy" => "policy",
        "client-policy" | "client_policy" => "client-policy",
        "server-policy" | "server_policy" | "backend-policy" => "server-policy",
        "client-nice" | "client_nice" => "client-nice",
        "server-nice" | "server_nice" | "backend-nice" => "server-nice",
        "set" => "set",
        "cost" | "costs" => "cost",
        "irq" | "irqs" => "irq",
        "slow" => "slow",
        // Last: with_items' match takes it as its fall-through.
        "sd-flags" | "sd_flags" | "sd" => "sd-flags",
        _ => return None,
    })
}

/// A TOML sweep file: `[[config]]` tables with the `--config` keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    config: Vec<SweepEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepEntry {
    name: Option<String>,
    profile: Option<String>,
    features: Option<toml::Value>,
    #[serde(default)]
    patches: Vec<String>,
    policy: Option<String>,
    client_policy: Option<String>,
    server_policy: Option<String>,
    client_nice: Option<toml::Value>,
    server_nice: Option<toml::Value>,
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
    #[serde(default)]
    cost: BTreeMap<String, toml::Value>,
    sd_flags: Option<String>,
    #[serde(default)]
    irq: Vec<String>,
    #[serde(default)]
    slow: Vec<String>,
}

/// Reads a TOML sweep (`[[config]]` with name, profile, features, patches,
/// policy, client_policy, server_policy, client_nice, server_nice,
/// set = { NAME = VALUE }, cost = { NAME = VALUE }, sd_flags,
/// irq = [ "cpus=0,every=1ms,takes=50us" ], slow = [ "cpus=1,speed=50%" ]),
/// each entry on top of `base`. A cost table's value may be an array
/// (`dirty_line_ns = [0, 5, 15, 250, 250, 250]`) or a table of classes
/// (`xfer_line_ns = { package = 40 }`).
pub fn parse_sweep(text: &str, base: &SchedSpec) -> Result<Vec<SchedSpec>, String> {
    let f: SweepFile = toml::from_str(text)
        .map_err(|e| format!("sweep file: {}", cfs_topology::toml_host::toml_error_line(text, &e)))?;
    let scalar = |v: &toml::Value| match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if f.config.is_empty() {
        return Err("sweep file: no [[config]] table (each is one column)".into());
    }
    Ok(f.config
        .into_iter()
        .map(|e| {
            let mut s = base.clone();
            s.label = e.name.or(s.label);
            if let Some(p) = e.profile {
                s.profile = p;
            }
            if let Some(x) = e.features {
                s.features = Some(scalar(&x));
            }
            s.patches.extend(e.patches);
            s.policy = e.policy.or(s.policy);
            s.client_policy = e.client_policy.or(s.client_policy);
            s.server_policy = e.server_policy.or(s.server_policy);
            s.client_nice = e.client_nice.as_ref().map(scalar).or(s.client_nice);
            s.server_nice = e.server_nice.as_ref().map(scalar).or(s.server_nice);
            s.sets.extend(e.set.iter().map(|(k, v)| (k.clone(), scalar(v))));
            for (k, v) in &e.cost {
                match v {
                    toml::Value::Array(a) => {
                        s.costs.push((k.clone(), a.iter().map(&scalar).collect::<Vec<_>>().join("/")));
                    }
                    toml::Value::Table(t) => {
                        s.costs.extend(t.iter().map(|(class, x)| (format!("{k}.{class}"), scalar(x))));
                    }
                    x => s.costs.push((k.clone(), scalar(x))),
                }
            }
            s.sd_flags = e.sd_flags.or(s.sd_flags);
            s.irqs.extend(e.irq);
            s.slow.extend(e.slow);
            s
        })
        .collect())
}

/// Everything needed to run an experiment.
#[derive(Debug)]
pub struct Plan {
    /// The machine.
    pub host: Host,
    /// Its costs.
    pub costs: CostModel,
    /// The workload.
    pub workload: Workload,
    /// Its options.
    pub opts: WorkloadOpts,
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows.
    pub clients: Vec<u32>,
    /// Runs per cell.
    pub runs: u32,
    /// Where each run's seed comes from.
    pub seeds: Seeds,
    /// Record a trace of the first run.
    pub trace: bool,
    /// Settings written during every run (`--switch`), in time order.
    pub changes: Vec<engine::Change>,
    /// Interrupt load injected in every run (`--irq`).
    pub irqs: Vec<IrqLoad>,
    /// CPUs slowed in every run (`--slow`).
    pub slow: Vec<Slowdown>,
}

/// One run's numbers.
#[derive(Debug, Default)]
pub struct RunRecord {
    /// Column index.
    pub config: usize,
    /// Row.
    pub clients: u32,
    /// Run number.
    pub run: u32,
    /// Its seed.
    pub seed: u64,
    /// Throughput in the workload's metric.
    pub value: f64,
    /// Throughput in each phase between setting changes (empty without
    /// `--switch`): (phase start, phase end, value), times in ns.
    pub phases: Vec<(u64, u64, f64)>,
    /// The mean runqueue wait of the waits that ended in each phase, ns
    /// (None for a phase in which none did); parallel to `phases`.
    pub phase_waits: Vec<Option<f64>>,
    /// Run length, simulated ns.
    pub end_ns: u64,
    /// Busy fraction of each CPU.
    pub cpu_util: Vec<f64>,
    /// The largest CPU's share of all busy time.
    pub max_cpu_share: f64,
    /// Scheduler decisions.
    pub counters: Counters,
    /// Context switches.
    pub switches: u64,
    /// Involuntary switches.
    pub preemptions: u64,
    /// Events processed.
    pub events: u64,
    /// Per-task totals.
    pub tasks: Vec<engine::TaskStat>,
    /// Writes that blocked on a full socket send buffer.
    pub send_blocks: u64,
    /// select() passes a wakeup raced, which rescheduled and polled again.
    pub select_races: u64,
    /// The most messages queued unread at once.
    pub peak_unread: usize,
    /// Interrupts injected (`--irq`).
    pub irqs: u64,
    /// Their handlers' time taken from running tasks, ns.
    pub irq_task_ns: u64,
}

impl RunRecord {
    /// The mean runqueue wait of the run, ns: every task's ended waits
    /// (schedstat `wait_sum` over `wait_count`, summed over the tasks);
    /// 0 for a run in which nothing waited.
    pub fn wait_avg_ns(&self) -> f64 {
        let sum: u64 = self.tasks.iter().map(|t| t.wait_sum_ns).sum();
        let count: u64 = self.tasks.iter().map(|t| t.wait_count).sum();
        if count == 0 { 0.0 } else { sum as f64 / count as f64 }
    }

    /// The longest wait of any task in the run, ended or still open at its
    /// end, ns.
    pub fn wait_max_ns(&self) -> u64 {
        self.tasks.iter().map(engine::TaskStat::longest_wait_ns).max().unwrap_or(0)
    }
}

/// All runs of a plan, in (column, clients, run) order.
#[derive(Debug)]
pub struct Results {
    /// The metric.
    pub metric: Metric,
    /// The runs.
    pub runs: Vec<RunRecord>,
    /// The trace of the first run, if asked for.
    pub trace: Option<Trace>,
}

impl Results {
    /// Median value of a cell.
    pub fn median(&self, config: usize, clients: u32) -> Option<f64> {
        let mut v: Vec<f64> =
            self.runs.iter().filter(|r| r.config == config && r.clients == clients).map(|r| r.value).collect();
        median(&mut v)
    }

    /// A cell's run values: the whole run's (`phase` None) or those of one
    /// phase between setting changes (runs that ended before it have none).
    pub fn values(&self, config: usize, clients: u32, phase: Option<usize>) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.config == config && r.clients == clients)
            .filter_map(|r| match phase {
                None => Some(r.value),
                Some(k) => r.phases.get(k).map(|p| p.2).filter(|v| v.is_finite()),
            })
            .collect()
    }

    /// The run with the median value of a cell (the lower middle for an
    /// even count).
    pub fn median_run(&self, config: usize, clients: u32) -> Option<&RunRecord> {
        let mut v: Vec<&RunRecord> = self.runs.iter().filter(|r| r.config == config && r.clients == clients).collect();
        v.sort_by(|a, b| a.value.total_cmp(&b.value));
        v.get(v.len().saturating_sub(1) / 2).copied()
    }
}

/// The lowest and highest of a list (None when it is empty).
pub fn range(v: &[f64]) -> Option<(f64, f64)> {
    v.iter().fold(None, |acc, &x| match acc {
        None => Some((x, x)),
        Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
    })
}

/// The median of a list (mean of the middle two for an even count).
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where each run of a plan gets its seed.
///
/// A run is reproduced exactly by its seed plus its configuration, host,
/// workload and client count; the seed alone is what the CSV's `seed`
/// column, the JSON's runs and a failed run's message print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seeds {
    /// `--seed BASE`: run `r` at `c` clients uses [`seed_for`]`(BASE, c, r)`,
    /// the same in every column (common random numbers).
    Derived(u64),
    /// `--replay SEED`: each cell runs once, with exactly this seed, which
    /// replays the run that printed it (to trace it, log its decisions or
    /// change one setting and compare). A plan's `runs` does not apply:
    /// more runs of one seed would only repeat it ([`Plan::runs_per_cell`]).
    Exact(u64),
}

impl Seeds {
    /// The seed of run `run` at `clients` clients.
    pub fn of(self, clients: u32, run: u32) -> u64 {
        match self {
            Seeds::Derived(base) => seed_for(base, clients, run),
            Seeds::Exact(seed) => seed,
        }
    }
}

/// The seed of run `run` at `clients` clients: each input is mixed in
/// turn, so different bases never share a run's seed.
pub fn seed_for(base: u64, clients: u32, run: u32) -> u64 {
    mix(mix(mix(base) ^ clients as u64) ^ run as u64)
}

/// A job: (column, clients, run).
type Job = (usize, u32, u32);

impl Plan {
    /// How many runs each cell gets: `runs`, or one when every run would
    /// have the same seed ([`Seeds::Exact`]).
    pub fn runs_per_cell(&self) -> u32 {
        match self.seeds {
            Seeds::Derived(_) => self.runs,
            Seeds::Exact(_) => 1,
        }
    }

    /// The costs column `ci` runs on: the plan's set with the column's own
    /// [`CostSetting`]s written over it.
    pub fn costs_of(&self, ci: usize) -> CostModel {
        self.columns.get(ci).map_or_else(|| self.costs.clone(), |c| self.costs.with(&c.costs))
    }

    /// The workload column `ci` runs: the plan's with the column's own
    /// workload cost settings written into it ([`Workload::with_costs`];
    /// the plan's workload when they do not apply, which
    /// [`Plan::check_costs`] refuses before any run).
    pub fn workload_of(&self, ci: usize) -> Workload {
        self.columns
            .get(ci)
            .and_then(|c| self.workload.with_costs(&c.costs).ok())
            .unwrap_or_else(|| self.workload.clone())
    }

    /// Refuses a column whose cost settings name another workload's own
    /// costs (`pgbench.backend_ns` on a tbench run).
    pub fn check_costs(&self) -> Result<(), String> {
        for c in &self.columns {
            self.workload.with_costs(&c.costs).map_err(|e| format!("config {:?}: {e}", c.label))?;
        }
        Ok(())
    }

    /// Refuses interrupt loads that would, at some point of a run, take
    /// all of a CPU's time ([`crate::faults::check_cpu_time`]): `--irq`,
    /// `--slow`, each column's own and those `--switch` starts.
    pub fn check_faults(&self) -> Result<(), String> {
        for c in &self.columns {
            let irqs: Vec<IrqLoad> = self.irqs.iter().chain(&c.irqs).cloned().collect();
            let slow: Vec<Slowdown> = self.slow.iter().chain(&c.slow).cloned().collect();
            let steps = engine::fault_steps(&irqs, &slow, &self.changes);
            crate::faults::check_cpu_time(self.host.nr_cpus(), steps).map_err(|e| {
                let own = !(c.irqs.is_empty() && c.slow.is_empty());
                if own { format!("config {:?}: {e}", c.label) } else { e.to_string() }
            })?;
        }
        Ok(())
    }

    /// The jobs in output order.
    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs = Vec::new();
        for c in 0..self.columns.len() {
            for &n in &self.clients {
                for r in 0..self.runs_per_cell() {
                    jobs.push((c, n, r));
                }
            }
        }
        jobs
    }

    /// Runs one job.
    pub fn run_job(&self, job: Job, trace: bool) -> Result<(RunRecord, Option<Trace>), SimError> {
        let (ci, clients, run) = job;
        let col = &self.columns[ci];
        // Decision logs (RUST_LOG) of parallel runs carry their run.
        let _span = tracing::info_span!(target: "cfs_core", "run", config = %col.label, clients, run).entered();
        let seed = self.seeds.of(clients, run);
        let mut opts = self.opts.clone();
        opts.policies = col.policies.or(opts.policies);
        let workload;
        let workload = if col.costs.iter().any(CostSetting::is_workload) {
            workload = self.workload_of(ci);
            &workload
        } else {
            &self.workload
        };
        let built = workload.build(clients, self.host.nr_cpus(), &opts, seed);
        let own;
        let costs = if col.costs.is_empty() {
            &self.costs
        } else {
            own = self.costs_of(ci);
            &own
        };
        let setup = RunSetup {
            host: &self.host,
            costs,
            config: col.config,
            domains: col.domains.clone(),
            seed,
            limits: built.limits,
            trace,
            instruments: engine::Instruments::default(),
            sockets: col.sockets,
            changes: self.changes.clone(),
            irqs: self.irqs.iter().chain(&col.irqs).cloned().collect(),
            slow: self.slow.iter().chain(&col.slow).cloned().collect(),
            domain_build: col.domain_build.clone(),
        };
        let out = engine::run(&setup, built.instance)?;
        let metric = self.workload.metric();
        Ok(record(job, seed, &metric, out))
    }

    /// Runs every job, in parallel on rayon's pool; the results are in
    /// [`Plan::jobs`] order whatever the thread count. `tick` is called
    /// after each job.
    pub fn execute(&self, tick: &(dyn Fn() + Sync)) -> Result<Results, RunFailed> {
        let jobs = self.jobs();
        // Once a run has failed the plan's outcome is that error: the runs
        // not yet started are skipped (a sweep of runs that all hit the
        // time cap would otherwise spend minutes failing one by one).
        let failed = AtomicBool::new(false);
        let outs: Vec<Option<JobOutcome>> = jobs
            .par_iter()
            .enumerate()
            .map(|(i, &job)| {
                if failed.load(Ordering::Relaxed) {
                    return None;
                }
                let r = self.run_job(job, self.trace && i == 0);
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                tick();
                Some(r)
            })
            .collect();
        let mut runs = Vec::with_capacity(outs.len());
        let mut trace = None;
        // The first failed run in job order is reported. Which later runs
        // were skipped depends on the threads, but with one thread, or when
        // only one run can fail, the message is the same every time.
        let mut first_failure = None;
        for (i, o) in outs.into_iter().enumerate() {
            match o {
                Some(Ok((rec, tr))) => {
                    if tr.is_some() {
                        trace = tr;
                    }
                    runs.push(rec);
                }
                Some(Err(e)) => {
                    first_failure.get_or_insert((jobs[i], e));
                }
                None => {}
            }
        }
        if let Some(((ci, clients, run), error)) = first_failure {
            let seed = self.seeds.of(clients, run);
            return Err(RunFailed { config: self.columns[ci].label.clone(), clients, run, seed, error });
        }
        Ok(Results { metric: self.workload.metric(), runs, trace })
    }
}

/// What one job of a plan gives: its record and, for the traced run, the
/// trace.
type JobOutcome = Result<(RunRecord, Option<Trace>), SimError>;

/// A run of a plan failed: which one, and why.
#[derive(Debug)]
pub struct RunFailed {
    /// The column's label.
    pub config: String,
    /// The run's client count.
    pub clients: u32,
    /// The run's index within its cell.
    pub run: u32,
    /// The run's seed: `--replay SEED` with the same configuration and
    /// client count reproduces the run ([`Seeds::Exact`]).
    pub seed: u64,
    /// What the engine reported.
    pub error: SimError,
}

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (config {:?}, {} clients, run {}, seed {})",
            self.error, self.config, self.clients, self.run, self.seed
        )
    }
}

impl std::error::Error for RunFailed {}

fn record(job: Job, seed: u64, metric: &Metric, out: RunOutcome) -> (RunRecord, Option<Trace>) {
    let (config, clients, run) = job;
    let secs = out.window_ns as f64 / 1e9;
    let value = if secs > 0.0 { out.units as f64 / secs * metric.scale } else { 0.0 };
    let phases = out
        .phases
        .iter()
        .map(|p| {
            let secs = p.end_ns.saturating_sub(p.start_ns) as f64 / 1e9;
            let v = if secs > 0.0 { p.units as f64 / secs * metric.scale } else { f64::NAN };
            (p.start_ns, p.end_ns, v)
        })
        .collect();
    let phase_waits =
        out.phases.iter().map(|p| (p.wait_count > 0).then(|| p.wait_sum_ns as f64 / p.wait_count as f64)).collect();
    let end = out.end_ns.max(1) as f64;
    let total: u64 = out.cpu_busy_ns.iter().sum();
    let max = out.cpu_busy_ns.iter().copied().max().unwrap_or(0);
    let rec = RunRecord {
        config,
        clients,
        run,
        seed,
        value,
        phases,
        phase_waits,
        end_ns: out.end_ns,
        cpu_util: out.cpu_busy_ns.iter().map(|&b| b as f64 / end).collect(),
        max_cpu_share: if total > 0 { max as f64 / total as f64 } else { 0.0 },
        counters: out.counters,
        switches: out.switches,
        preemptions: out.preemptions,
        events: out.events,
        tasks: out.tasks,
        send_blocks: out.send_blocks,
        select_races: out.select_races,
        peak_unread: out.peak_unread,
        irqs: out.irqs,
        irq_task_ns: out.irq_task_ns,
    };
    (rec, out.trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cfs_core::Policy;

    #[test]
    fn config_items_parse_and_continue_lists() {
        let base = SchedSpec::profile("2.6.26");
        let s = base
            .with_items("profile=2.6.32-rc1,features=0x3,patch=waker+affinity-fix,sd-flags=MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,name=x")
            .unwrap();
        assert_eq!(s.profile, "2.6.32-rc1");
        assert_eq!(s.features.as_deref(), Some("0x3"));
        assert_eq!(s.patches, ["waker", "affinity-fix"]);
        assert_eq!(s.sd_flags.as_deref(), Some("MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL"));
        assert_eq!(s.label.as_deref(), Some("x"));
        assert!(base.with_items("colour=red").unwrap_err().contains("colour"));
    }

    /// `set=isolcpus=...` reaches both the boot domains and the recipe the
    /// engine rebuilds them with (after a CPU goes down or comes up), with
    /// the column's `sd-flags` beside it.
    #[test]
    fn isolcpus_and_sd_flags_are_kept_for_the_rebuilds() {
        let host = Host::preset("q6600").unwrap();
        let s = SchedSpec::profile("2.6.26").with_items("set=isolcpus=2,3,sd-flags=MC:-WAKE_AFFINE").unwrap();
        let col = s.resolve(&host).unwrap();
        assert_eq!(col.domain_build.options.isolcpus, CpuMask::from_cpus([2, 3]));
        assert_eq!(col.domain_build.overrides.len(), 1);
        assert!(col.domains.of(2).is_empty() && col.domains.of(3).is_empty());
        assert_eq!(col.domain_build.build(&host, &col.config, host.all_cpus()), col.domains);
    }

    /// A patch of the domain initialisers goes to the builder with
    /// CONFIG_NUMA, so the column's boot domains and every rebuild are the
    /// patched kernel's: Stoakley (one node) under 2.6.32-rc1 keeps a NODE
    /// level with SD_PREFER_LOCAL only when the kernel has CONFIG_NUMA and
    /// the patch (cfs-topology's builder tests derive why).
    #[test]
    fn a_patched_initialiser_and_numa_reach_the_boot_domains_and_the_rebuilds() {
        use cfs_topology::{DomainLevel as L, SdFlags};
        let host = Host::preset("stoakley").unwrap();
        let levels = |items: &str| {
            let col = SchedSpec::profile("2.6.32-rc1").with_items(items).unwrap().resolve(&host).unwrap();
            assert_eq!(col.domain_build.build(&host, &col.config, host.all_cpus()), col.domains, "{items}");
            col.domains.of(5).iter().map(|d| (d.level, d.flags.contains(SdFlags::PREFER_LOCAL))).collect::<Vec<_>>()
        };
        assert_eq!(
            levels("patch=prefer-local-to-node,set=numa=on"),
            [(L::Mc, false), (L::Cpu, false), (L::Node, true)]
        );
        assert_eq!(levels("patch=prefer-local-to-node"), [(L::Mc, false), (L::Cpu, false)]);
        assert_eq!(levels("set=numa=on"), [(L::Mc, true), (L::Cpu, true)]);
    }

    /// `set=sd_init=LIST` edits the initialisers the builder starts from,
    /// before sd_parent_degenerate reads the flags, where `sd-flags` writes
    /// the built domains. On the X2 under 2.6.32 the CPU level spans MC's
    /// two CPUs in one group, and is dropped: once the flags that need
    /// groups are masked off, it has none MC lacks (22763c5c
    /// sched.c:7879-7904). With SD_WAKE_AFFINE taken out of SD_MC_INIT, CPU
    /// has one MC lacks and is kept, still with the flag; written into the
    /// built domains, the same item leaves MC alone. The edit is kept for
    /// the rebuilds, several compose in order, and one is refused where
    /// the kernel lacks the flag, where a patch edits the same flag, and
    /// mid-run.
    #[test]
    fn sd_init_edits_the_initialisers_before_degenerate_levels_go() {
        use cfs_topology::{DomainLevel as L, SdFlags};
        let x2 = Host::preset("x2").unwrap();
        let levels = |host: &Host, items: &str| {
            let col = SchedSpec::default().with_items(items).unwrap().resolve(host).unwrap();
            assert_eq!(col.domain_build.build(host, &col.config, host.all_cpus()), col.domains, "{items}");
            col.domains.of(0).iter().map(|d| (d.level, d.flags.contains(SdFlags::WAKE_AFFINE))).collect::<Vec<_>>()
        };
        assert_eq!(levels(&x2, "profile=2.6.32"), [(L::Mc, true)]);
        assert_eq!(levels(&x2, "profile=2.6.32,set=sd_init=MC:-WAKE_AFFINE"), [(L::Mc, false), (L::Cpu, true)]);
        assert_eq!(levels(&x2, "profile=2.6.32,sd-flags=MC:-WAKE_AFFINE"), [(L::Mc, false)]);
        // Two items, and two sets, compose in order: the second set puts
        // the flag back, and the one-group CPU level goes again.
        assert_eq!(
            levels(&x2, "profile=2.6.32,set=sd_init=MC:-WAKE_AFFINE,CPU:-WAKE_AFFINE"),
            [(L::Mc, false)],
            "with neither level affine, CPU has no flag MC lacks"
        );
        assert_eq!(
            levels(&x2, "profile=2.6.32,set=sd_init=MC:-WAKE_AFFINE,set=sd_init=MC:+WAKE_AFFINE"),
            [(L::Mc, true)]
        );
        let err = |items: &str| SchedSpec::default().with_items(items).unwrap().resolve(&x2).unwrap_err();
        assert_eq!(
            err("profile=2.6.32,set=sd_init=MC:+WAKE_IDLE"),
            "--set sd_init=MC:+WAKE_IDLE: SD_WAKE_IDLE does not exist in 2.6.32"
        );
        assert_eq!(
            err("profile=2.6.32-rc1,patch=prefer-local-to-node,set=sd_init=CPU:+PREFER_LOCAL"),
            "--set sd_init=CPU:+PREFER_LOCAL: patch prefer-local-to-node already sets SD_PREFER_LOCAL at CPU; \
             give one or the other"
        );
        let e = parse_switch("1s:set=sd_init=MC:+WAKE_IDLE").unwrap_err();
        assert!(e.contains("sd_init is fixed at boot"), "{e}");
        // The same overlap made mid-run, by switching the patch on over a
        // boot edit of its flag (`sd_init`, or `sd-flags`), is refused as at
        // boot; a patch that edits other flags, or other levels, is not.
        let q6600 = Host::preset("q6600").unwrap();
        let col = |items: &str| SchedSpec::default().with_items(items).unwrap().resolve(&q6600).unwrap();
        let on = parse_switch("1s:patch=prefer-local-to-node").unwrap();
        for boot in ["set=sd_init=CPU:+PREFER_LOCAL", "sd-flags=MC:-PREFER_LOCAL"] {
            let items = format!("profile=2.6.32-rc1,set=numa=on,{boot}");
            let e = check_changes(&[col(&items)], &on).unwrap_err();
            assert!(
                e.starts_with(
                    "--switch at 1s: patch=prefer-local-to-node: patch prefer-local-to-node already sets \
                     SD_PREFER_LOCAL at "
                ),
                "{boot}: {e}"
            );
        }
        for boot in ["set=sd_init=CPU:-WAKE_AFFINE", "sd-flags=MC:-WAKE_AFFINE"] {
            let items = format!("profile=2.6.32-rc1,set=numa=on,{boot}");
            assert_eq!(check_changes(&[col(&items)], &on), Ok(()), "{boot}");
        }
    }

    /// `set=sched_mc_power_savings=1` builds the domains as the kernel does
    /// after the sysfs write (cfs-topology's builder tests derive them), for
    /// the boot and every rebuild; the values each kernel's store takes, and
    /// what is not ported, are refused with the reason, at boot and for
    /// `--switch`.
    #[test]
    fn power_savings_are_a_build_option() {
        use cfs_topology::PowerSavings;
        use cfs_topology::builder::BuildOptions;
        let stoakley = Host::preset("stoakley").unwrap();
        let nehalem = Host::preset("nehalem-ep").unwrap();
        for (host, items, ps) in [
            (&stoakley, "profile=2.6.26,set=sched_mc_power_savings=1", PowerSavings { mc: 1, smt: 0 }),
            (&nehalem, "profile=2.6.25,set=sched_smt_power_savings=1", PowerSavings { mc: 0, smt: 1 }),
            (
                &nehalem,
                "profile=2.6.32,set=sched_mc_power_savings=1,set=sched_smt_power_savings=0",
                PowerSavings { mc: 1, smt: 0 },
            ),
        ] {
            let col = SchedSpec::default().with_items(items).unwrap().resolve(host).unwrap();
            let opts = BuildOptions { power_savings: ps, ..BuildOptions::default() };
            assert_eq!(col.domains, host.build_domains_with(col.config.version, &opts), "{items}");
            assert_eq!(col.domain_build.build(host, &col.config, host.all_cpus()), col.domains, "{items}");
        }
        let err = |host: &Host, items: &str| SchedSpec::default().with_items(items).unwrap().resolve(host).unwrap_err();
        assert_eq!(
            err(&stoakley, "profile=2.6.26,set=sched_mc_power_savings=2"),
            "--set sched_mc_power_savings=2: not a valid value (0 to 1 for 2.6.26)"
        );
        assert_eq!(
            err(&nehalem, "profile=2.6.32,set=sched_smt_power_savings=3"),
            "--set sched_smt_power_savings=3: not a valid value (0 to 2 for 2.6.32)"
        );
        // The files the kernel makes (smt_capable(), mc_capable()): no SMT
        // file without SMT siblings, and under 2.6.32 no MC file on a
        // one-package machine; 2.6.26 has that one on the Q6600.
        assert_eq!(
            err(&stoakley, "profile=2.6.26,set=sched_smt_power_savings=0"),
            "--set sched_smt_power_savings: 2.6.26 makes no /sys/devices/system/cpu/sched_smt_power_savings here: \
             the host has no SMT siblings (smt_capable())"
        );
        let q6600 = Host::preset("q6600").unwrap();
        assert!(err(&q6600, "profile=2.6.32,set=sched_mc_power_savings=1").contains("(mc_capable())"));
        let on_q = SchedSpec::default().with_items("profile=2.6.26,set=sched_mc_power_savings=1").unwrap();
        assert!(on_q.resolve(&q6600).is_ok());
        // 2.6.32 reads the knob itself too (newly idle consolidation at 2,
        // the idle load balancer's nomination): the column's config has it.
        let col = SchedSpec::default()
            .with_items("profile=2.6.32,set=nohz=1,set=sched_mc_power_savings=2")
            .unwrap()
            .resolve(&stoakley)
            .unwrap();
        assert_eq!(col.config.power_savings, PowerSavings { mc: 2, smt: 0 });
        // Written mid-run, as the sysfs file can be, each kernel's values
        // and files are checked before any run.
        let changes = parse_switch("1s:set=sched_mc_power_savings=1,set=sched_smt_power_savings=0").unwrap();
        let column = |host: &Host, items: &str| SchedSpec::default().with_items(items).unwrap().resolve(host).unwrap();
        assert_eq!(check_changes(&[column(&nehalem, "profile=2.6.26")], &changes), Ok(()));
        let e = check_changes(&[column(&stoakley, "profile=2.6.26")], &changes).unwrap_err();
        assert!(e.starts_with("--switch at 1s: set=sched_smt_power_savings=0: 2.6.26 makes no"), "{e}");
        let two = parse_switch("1s:set=sched_mc_power_savings=2").unwrap();
        assert_eq!(
            check_changes(&[column(&stoakley, "profile=2.6.26")], &two),
            Err("--switch at 1s: set=sched_mc_power_savings=2: not a valid value (0 to 1 for 2.6.26)".into())
        );
        assert_eq!(check_changes(&[column(&stoakley, "profile=2.6.32,set=nohz=1")], &two), Ok(()));
        assert!(parse_switch("1s:set=sched_mc_power_savings=300").unwrap_err().contains("takes 0 to 2"));
    }

    /// `set=relax_domain_level=1` reaches the boot domains and the rebuilds:
    /// on the Q6600 under 2.6.26, MC (level 2) and CPU (3) lie above 1, so
    /// both lose SD_BALANCE_NEWIDLE (bce7f793 set_domain_attribute; neither
    /// has WAKE_IDLE); at 3 both keep it and gain SD_WAKE_IDLE_FAR. 2.6.25
    /// has no such parameter.
    #[test]
    fn relax_domain_level_is_a_boot_parameter() {
        use cfs_topology::SdFlags;
        let host = Host::preset("q6600").unwrap();
        let flags = |items: &str| {
            let col = SchedSpec::default().with_items(items).unwrap().resolve(&host).unwrap();
            assert_eq!(col.domain_build.build(&host, &col.config, host.all_cpus()), col.domains, "{items}");
            col.domains.of(0).iter().map(|d| d.flags).collect::<Vec<_>>()
        };
        let plain = flags("profile=2.6.26");
        assert!(plain.iter().all(|f| f.contains(SdFlags::BALANCE_NEWIDLE) && !f.contains(SdFlags::WAKE_IDLE_FAR)));
        let relaxed = flags("profile=2.6.26,set=relax_domain_level=1");
        assert_eq!(relaxed, plain.iter().map(|&f| f - SdFlags::BALANCE_NEWIDLE).collect::<Vec<_>>());
        let far = flags("profile=2.6.26,set=relax_domain_level=3");
        assert_eq!(far, plain.iter().map(|&f| f | SdFlags::WAKE_IDLE_FAR).collect::<Vec<_>>());
        assert_eq!(flags("profile=2.6.25,set=relax_domain_level=1"), flags("profile=2.6.25"));
        let e =
            SchedSpec::profile("2.6.26").with_items("set=relax_domain_level=-1").unwrap().resolve(&host).unwrap_err();
        assert!(e.starts_with("--set relax_domain_level=-1: not a level"), "{e}");
    }

    #[test]
    fn resolve_rejects_bad_settings() {
        let host = Host::preset("q6600").unwrap();
        let ok = SchedSpec::profile("2.6.26-rc4").with_items("features=863").unwrap();
        assert_eq!(ok.resolve(&host).unwrap().config.features.mask(), 863);
        for bad in ["features=99999999", "patch=nope", "profile=2.4.0", "set=sched_bogus=1", "policy=fifo"] {
            let s = SchedSpec::profile("2.6.26-rc4").with_items(bad).unwrap();
            assert!(s.resolve(&host).is_err(), "{bad}");
        }
        let s = SchedSpec::profile("2.6.26").with_items("patch=affinity-fix").unwrap();
        assert!(s.resolve(&host).unwrap_err().contains("already contains"));
    }

    #[test]
    fn side_policies_override_the_every_task_policy_on_their_side() {
        let host = Host::preset("q6600").unwrap();
        let col = SchedSpec::profile("2.6.26-rc4")
            .with_items("policy=idle,client-policy=batch")
            .unwrap()
            .resolve(&host)
            .unwrap();
        let p = col.policies;
        assert_eq!((p.all, p.client, p.server), (Some(Policy::Idle), Some(Policy::Batch), None));
        assert_eq!(col.label, "2.6.26-rc4 idle client:batch");
        let opts = WorkloadOpts { policies: col.policies, ..WorkloadOpts::default() };
        assert_eq!(opts.client_params().policy, Policy::Batch);
        assert_eq!(opts.server_params().policy, Policy::Idle);
        let sweep = parse_sweep("[[config]]\nserver_policy = \"batch\"\n", &SchedSpec::profile("2.6.26")).unwrap();
        assert_eq!(sweep[0].server_policy.as_deref(), Some("batch"));
    }

    #[test]
    fn side_nice_levels_parse_from_items_and_sweeps_and_reach_their_side() {
        let host = Host::preset("q6600").unwrap();
        let col =
            SchedSpec::profile("2.6.26").with_items("client-nice=-5,server_nice=3").unwrap().resolve(&host).unwrap();
        assert_eq!((col.policies.client_nice, col.policies.server_nice), (Some(-5), Some(3)));
        assert_eq!(col.label, "2.6.26 client:nice=-5 server:nice=3");
        // A sweep takes the level as a TOML integer or string.
        let sweep = parse_sweep(
            "[[config]]\nclient_nice = -5\n[[config]]\nserver_nice = \"19\"\n",
            &SchedSpec::profile("2.6.26"),
        )
        .unwrap();
        assert_eq!((sweep[0].client_nice.as_deref(), sweep[1].server_nice.as_deref()), (Some("-5"), Some("19")));
        for bad in ["client-nice=20", "server-nice=-21", "client-nice=low"] {
            let e = SchedSpec::profile("2.6.26").with_items(bad).unwrap().resolve(&host).unwrap_err();
            assert!(e.contains("is not a nice level (-20..=19)"), "{bad}: {e}");
        }
    }

    /// normalized_levenshtein = 1 - edits / longer length: "q660" → "q6600"
    /// is 1 - 1/5 = 0.8, "2.6.26rc4" → "2.6.26-rc4" 1 - 1/10 = 0.9; "2.6.99"
    /// → "2.6.26" is 1 - 2/6 = 0.67, under the 0.7 bar.
    #[test]
    fn suggestions_need_a_close_match_and_take_the_closest() {
        let presets = ["x2", "q6600", "nehalem-ep", "tigerton", "stoakley"];
        assert_eq!(suggest("q660", &presets), Some("q6600"));
        assert_eq!(suggest("Q6600", &presets), Some("q6600"));
        assert_eq!(suggest("tigerto", &presets), Some("tigerton"));
        assert_eq!(suggest("pdp11", &presets), None);
        let profiles = ["2.6.25", "2.6.26-rc4", "2.6.26", "2.6.32-rc1", "2.6.32"];
        assert_eq!(suggest("2.6.26rc4", &profiles), Some("2.6.26-rc4"));
        assert_eq!(suggest("2.6.32rc1", &profiles), Some("2.6.32-rc1"));
        assert_eq!(suggest("2.6.99", &profiles), None);
        assert_eq!(suggest("", &profiles), None);
    }

    #[test]
    fn empty_items_are_skipped() {
        let s = SchedSpec::profile("2.6.26-rc4").with_items(",features=863, ,name=x,").unwrap();
        assert_eq!((s.features.as_deref(), s.label.as_deref()), (Some("863"), Some("x")));
    }

    #[test]
    fn features_as_numbers_or_names() {
        let host = Host::preset("q6600").unwrap();
        let mask = |f: &str| {
            SchedSpec::profile("2.6.26-rc4")
                .with_items(&format!("features={f}"))
                .unwrap()
                .resolve(&host)
                .map(|c| c.config.features.mask())
        };
        // 895 without SYNC_WAKEUPS (bit 32) is 863, however it is written.
        assert_eq!(mask("863"), Ok(863));
        assert_eq!(mask("0x35f"), Ok(863));
        assert_eq!(mask("NO_SYNC_WAKEUPS"), Ok(863));
        // Something number-like that is not a number is a bad mask, not an
        // unknown feature name.
        for bad in ["-1", "1x2", "0x"] {
            assert_eq!(mask(bad), Err(format!("bad sched_features mask {bad:?}")), "{bad}");
        }
        assert!(mask("NO_SUCH").unwrap_err().starts_with("bad sched_features \"NO_SUCH\""));
    }

    #[test]
    fn cost_settings_come_from_items_and_sweeps_and_reach_their_column() {
        let host = Host::preset("q6600").unwrap();
        let base = SchedSpec::profile("2.6.26-rc4");
        let col =
            base.with_items("cost=ctx_switch_ns=3600,cost=xfer_line_ns.package=40").unwrap().resolve(&host).unwrap();
        let shown: Vec<String> = col.costs.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["ctx_switch_ns=3600", "xfer_line_ns.package=40"]);
        assert_eq!(col.label, "2.6.26-rc4 cost:ctx_switch_ns=3600 cost:xfer_line_ns.package=40");
        // A sweep takes a number, an array for a whole table, or a table of
        // classes.
        let sweep = parse_sweep(
            "[[config]]\nname = \"a\"\n[config.cost]\nctx_switch_ns = 3600\n\
             dirty_line_ns = [0, 5, 15, 250, 250, 250]\nxfer_line_ns = { package = 40, node = 30 }\n\
             [[config]]\nname = \"b\"\n",
            &base,
        )
        .unwrap();
        assert_eq!(
            sweep[0].costs,
            [
                ("ctx_switch_ns".to_string(), "3600".to_string()),
                ("dirty_line_ns".into(), "0/5/15/250/250/250".into()),
                ("xfer_line_ns.node".into(), "30".into()),
                ("xfer_line_ns.package".into(), "40".into()),
            ]
        );
        assert!(sweep[1].costs.is_empty());
        let columns: Vec<Column> = sweep.iter().map(|s| s.resolve(&host).unwrap()).collect();
        // The plan's set stays the host's; each column runs on its own.
        let plan = Plan {
            costs: CostModel::preset("q6600").unwrap(),
            host: host.clone(),
            workload: Workload::Pgbench(Default::default()),
            opts: WorkloadOpts::default(),
            columns,
            clients: vec![1],
            runs: 1,
            seeds: Seeds::Derived(1),
            trace: false,
            changes: Vec::new(),
            irqs: Vec::new(),
            slow: Vec::new(),
        };
        let (a, b) = (plan.costs_of(0), plan.costs_of(1));
        assert_eq!(
            (a.ctx_switch_ns, a.dirty_line_ns[3], a.xfer_line_ns[3], a.xfer_line_ns[4]),
            (3600.0, 250.0, 40.0, 30.0)
        );
        assert_eq!(b, plan.costs);
        // A bad one fails when the column is resolved, before any run.
        let bad = |items: &str| base.with_items(items).and_then(|s| s.resolve(&host).map(|_| ())).unwrap_err();
        assert!(bad("cost=ctx_switch_ns").contains("config cost \"ctx_switch_ns\" is not NAME=VALUE"));
        assert!(bad("cost=ctx_switch_ns=-5").contains("is not a number"));
        assert!(bad("cost=nope=1").contains("unknown cost parameter"));
    }

    #[test]
    fn engine_settings_take_numbers_and_booleans() {
        let host = Host::preset("q6600").unwrap();
        let col = |sets: &str| SchedSpec::profile("2.6.26-rc4").with_items(sets).unwrap().resolve(&host);
        let c = col("set=hz=1000,set=hres_timers=off,set=nohz=yes,set=write_space_wakeups=1").unwrap();
        assert_eq!((c.config.hz, c.config.hres_timers, c.config.nohz), (1000, false, true));
        assert!(!c.config.preempt);
        assert!(col("set=preempt=1").unwrap().config.preempt);
        assert!(c.sockets.write_space_wakeups);
        let c = col("set=nohz=on,set=nohz=no,set=hres=true,set=hres=0,set=check_invariants=true").unwrap();
        assert_eq!((c.config.nohz, c.config.hres_timers, c.config.check_invariants), (false, false, true));
        assert_eq!(col("set=nohz=maybe").unwrap_err(), "--set nohz=maybe: not a valid value");
        assert_eq!(col("set=hz=fast").unwrap_err(), "--set hz=fast: not a valid value");
        // Send buffers: SK_WMEM_MAX by default, 0 for unbounded, else from
        // SOCK_MIN_SNDBUF to the largest int a socket's sk_sndbuf holds.
        assert_eq!(col("").unwrap().sockets.sndbuf, 124_928);
        for (v, b) in [("0", 0), ("2048", 2_048), ("2147483647", 2_147_483_647)] {
            assert_eq!(col(&format!("set=sndbuf={v}")).unwrap().sockets.sndbuf, b, "{v}");
        }
        for v in ["1", "2047", "2147483648", "-1", "big"] {
            let e = col(&format!("set=sndbuf={v}")).unwrap_err();
            assert_eq!(
                e,
                format!("--set sndbuf={v}: not a valid value (0 for unbounded, or 2048 to 2147483647 bytes)")
            );
        }
    }

    #[test]
    fn seeds_follow_splitmix64() {
        // splitmix64 from state 0 (the reference implementation's first two
        // outputs): the finaliser of 0 + gamma and of 2 gamma.
        assert_eq!(mix(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(mix(0x9E37_79B9_7F4A_7C15), 0x6E78_9E6A_A1B9_65F4);
        // A run's seed, as printed in the CSV's seed column for `--seed 1`,
        // 60 clients, run 0: mix(mix(mix(1) ^ 60) ^ 0), worked out with an
        // independent splitmix64 (Python) to this value. Changing it would
        // silently change every published run.
        assert_eq!(seed_for(1, 60, 0), 458_306_496_249_086_070);
        assert_eq!(seed_for(1, 60, 1), 1_575_471_079_404_606_849);
        assert_eq!(seed_for(1, 60, 3), 15_170_265_403_481_604_847);
    }

    #[test]
    fn seeds_are_spread() {
        assert_ne!(seed_for(1, 1, 0), seed_for(1, 1, 1));
        assert_ne!(seed_for(1, 1, 0), seed_for(1, 2, 0));
        // No sharing across bases (a plain XOR made base 1 run 0 = base 2 run 3).
        let a: Vec<u64> = (0..8).map(|r| seed_for(1, 15, r)).collect();
        assert!((0..8).all(|r| !a.contains(&seed_for(2, 15, r))));
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(range(&[3.0, 1.0, 2.0]), Some((1.0, 3.0)));
        assert_eq!(range(&[]), None);
    }

    /// Ties go to the first candidate; a closer later one still wins.
    #[test]
    fn suggestions_break_ties_by_order() {
        assert_eq!(suggest("abcx", &["abcd", "abce"]), Some("abcd"));
        assert_eq!(suggest("abcd", &["abcx", "abcd"]), Some("abcd"));
    }

    /// The largest whole unit: seconds, then ms, us, ns.
    #[test]
    fn times_print_in_their_largest_whole_unit() {
        let cases = [
            (0, "0s"),
            (2_000_000_000, "2s"),
            (1_500_000_000, "1500ms"),
            (500_000_000, "500ms"),
            (2_000, "2us"),
            (1_500, "1500ns"),
            (7, "7ns"),
        ];
        for (ns, text) in cases {
            assert_eq!(fmt_ns(ns), text);
        }
    }

    fn outcome(units: u64, window_ns: u64, busy: Vec<u64>, phases: Vec<engine::Phase>) -> RunOutcome {
        RunOutcome {
            units,
            window_ns,
            end_ns: 2_000_000_000,
            cpu_busy_ns: busy,
            counters: Counters::default(),
            switches: 0,
            preemptions: 0,
            events: 0,
            tasks: Vec::new(),
            trace: None,
            probe: engine::Probe::default(),
            phases,
            send_blocks: 0,
            select_races: 0,
            peak_unread: 0,
            irqs: 0,
            irq_task_ns: 0,
        }
    }

    /// A run's record: throughput is units per second of the measured
    /// window times the metric's scale (tbench's bytes to MB/s: x 1e-6);
    /// each phase likewise; utilisation is busy time over the whole run,
    /// and the busiest CPU's share is of all busy time. An empty window
    /// measures 0, an empty phase NaN, an idle machine a share of 0. A
    /// phase's mean wait is its waits' total over their number (none
    /// without waits).
    #[test]
    fn a_record_turns_counts_into_rates() {
        let mb_s = Metric { name: "mb_s".into(), scale: 1e-6 };
        let phases = vec![
            engine::Phase { start_ns: 0, end_ns: 500_000_000, units: 1_000_000, wait_sum_ns: 9_000, wait_count: 4 },
            engine::Phase { start_ns: 500_000_000, end_ns: 500_000_000, units: 5, wait_sum_ns: 0, wait_count: 0 },
        ];
        let out = outcome(3_000_000, 1_500_000_000, vec![2_000_000_000, 1_000_000_000, 0, 1_000_000_000], phases);
        let (r, trace) = record((1, 4, 2), 99, &mb_s, out);
        assert_eq!((r.config, r.clients, r.run, r.seed), (1, 4, 2, 99));
        assert!((r.value - 2.0).abs() < 1e-12, "3 MB in 1.5 s: {}", r.value);
        assert!((r.phases[0].2 - 2.0).abs() < 1e-12 && r.phases[1].2.is_nan(), "{:?}", r.phases);
        assert_eq!(r.phase_waits, [Some(2_250.0), None]);
        assert_eq!(r.cpu_util, [1.0, 0.5, 0.0, 0.5]);
        assert_eq!(r.max_cpu_share, 0.5);
        assert!(trace.is_none());

        let tps = Metric { name: "tps".into(), scale: 1.0 };
        let (idle, _) = record((0, 1, 0), 1, &tps, outcome(5, 0, vec![0, 0], Vec::new()));
        assert_eq!((idle.value, idle.max_cpu_share), (0.0, 0.0));
    }

    /// 1 and 2 hogs on the X2 under 2.6.26 for 2 ms: a plan that runs in
    /// moments.
    fn hogs_plan(runs: u32, seeds: Seeds, trace: bool) -> Plan {
        let host = Host::preset("x2").unwrap();
        Plan {
            costs: crate::costs::CostModel::preset("x2").unwrap(),
            columns: vec![SchedSpec::profile("2.6.26").resolve(&host).unwrap()],
            host,
            workload: Workload::builtin("hogs").unwrap(),
            opts: WorkloadOpts { duration_ns: Some(2_000_000), ..WorkloadOpts::default() },
            clients: vec![1, 2],
            runs,
            seeds,
            trace,
            changes: Vec::new(),
            irqs: Vec::new(),
            slow: Vec::new(),
        }
    }

    /// A replayed plan runs each cell once, whatever its `runs` says, with
    /// the given seed; a derived one runs `runs` with seeds from the base.
    #[test]
    fn a_replayed_plan_runs_each_cell_once_with_its_seed() {
        let derived = hogs_plan(3, Seeds::Derived(4), false);
        assert_eq!(derived.jobs().len(), 6);
        let seeds: Vec<u64> = derived.execute(&|| {}).unwrap().runs.iter().map(|r| r.seed).collect();
        assert_eq!(seeds[4], seed_for(4, 2, 1));
        let replay = hogs_plan(3, Seeds::Exact(seeds[4]), false);
        assert_eq!((replay.runs_per_cell(), replay.jobs()), (1, vec![(0, 1, 0), (0, 2, 0)]));
        let runs = replay.execute(&|| {}).unwrap().runs;
        assert!(runs.iter().all(|r| r.seed == seeds[4] && r.run == 0));
    }

    /// Only the first run of a traced plan keeps its trace; an untraced
    /// plan keeps none.
    #[test]
    fn only_the_first_run_is_traced() {
        let plan = |trace| hogs_plan(1, Seeds::Derived(1), trace);
        assert!(plan(false).execute(&|| {}).unwrap().trace.is_none());
        let traced = plan(true).execute(&|| {}).unwrap().trace.unwrap();
        // The first job is 1 hog: its trace shows one task's slices.
        let first = plan(true).run_job((0, 1, 0), true).unwrap().1.unwrap();
        assert_eq!(traced, first);
    }
}
