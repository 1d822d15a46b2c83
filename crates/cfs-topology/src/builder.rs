//! The domain builder: [`Host::build_domains`] builds the `sched_domain`
//! hierarchy each modelled kernel's x86-64 code builds at boot.
//!
//! Configuration modelled: `CONFIG_SCHED_SMT=y`, `CONFIG_SCHED_MC=y`,
//! `CONFIG_NUMA=y` exactly when the host has more than one NUMA node (see
//! [`NumaConfig`] to force it), `sched_mc_power_savings` =
//! `sched_smt_power_savings` = 0 unless [`BuildOptions::power_savings`]
//! sets them ([`PowerSavings`]), no cpusets (one root domain), and, unless
//! [`BuildOptions`] says otherwise, every CPU online, no `isolcpus=` and
//! `relax_domain_level` untouched. With CPUs down or isolated the domains
//! are built over the rest (`arch_init_sched_domains`: online less
//! isolated), every span and group clipped to that map, and the CPUs outside
//! it keep no domain at all, as `cpu_attach_domain(NULL, ...)` leaves them.
//!
//! Sources, read at each release (kernel/sched.c line numbers):
//!
//! | step | 2.6.25 4b119e21d0c6 | 2.6.26-rc4 e490517a039a | 2.6.26 bce7f793daec | 2.6.32-rc1 17d857be649a | 2.6.32 22763c5cf369 |
//! |---|---|---|---|---|---|
//! | `sd_degenerate`, `sd_parent_degenerate` | 6074-6127 | 6642-6695 | 6302-6355 | 7825-7874 | 7855-7904 |
//! | `cpu_attach_domain` | 6198-6225 | 6766-6793 | 6426-6453 | 7981-8010 | 8011-8040 |
//! | `init_sched_build_groups` | 6256-6289 | 6824-6860 | 6484-6520 | 8035-8072 | 8065-8102 |
//! | `find_next_best_node`, `sched_domain_node_span` | 6305-6365 | 6876-6933 | 6536-6593 | 8088-8143 | 8118-8173 |
//! | `cpu_to_*_group`, `init_numa_sched_groups_power` (2.6.32: + `build_numa_sched_groups`) | 6378-6489 | 6946-7062 | 6606-6722 | 8205-8383 | 8235-8413 |
//! | `init_sched_groups_power` | 6547-6583 | 7120-7156 | 6780-6816 | 8438-8480 | 8468-8510 |
//! | `set_domain_attribute` | (none) | 7227-7246 | 6892-6911 | 8530-8549 | 8560-8579 |
//! | `__build_sched_domains` (2.6.32: with its `__build_*` helpers) | 6589-6841 | 7252-7562 | 6917-7222 | 8622-8847 | 8652-8877 |
//!
//! plus the initialisers: `include/linux/topology.h` `SD_SIBLING_INIT`,
//! `SD_MC_INIT`, `SD_CPU_INIT`, `SD_ALLNODES_INIT` (2.6.25 lines 91-202,
//! 2.6.26/rc4 92-174, 2.6.32/rc1 88-200), the x86-64 `SD_NODE_INIT` (and
//! `SD_*_IDX`) in `include/asm-x86/topology.h` (2.6.25 119-161, 2.6.26/rc4
//! 143-176) or `arch/x86/include/asm/topology.h` (2.6.32/rc1 117-155); the
//! power-savings helpers of `include/linux/sched.h` (2.6.32 862-890); and
//! `set_cpu_sibling_map` / `cpu_coregroup_map` in
//! `arch/x86/kernel/smpboot.c` (2.6.26 482-556, 2.6.32 366-443; 2.6.25
//! `smpboot_64.c` 248-324), with `cpu_llc_id` set by
//! `arch/x86/kernel/cpu/intel_cacheinfo.c` (2.6.26 419-430) and, in 2.6.32,
//! `arch/x86/kernel/cpu/amd.c` `amd_detect_cmp` (317-334).
//!
//! # The steps
//!
//! 1. **Topology maps.** `cpu_sibling_map` = SMT threads of the core.
//!    `llc_shared_map` = the siblings plus every CPU with the same
//!    `cpu_llc_id`; `set_cpu_sibling_map` skips the LLC part when the boot
//!    CPU has one core per package (`x86_max_cores == 1`). The LLC id is set
//!    by `intel_cacheinfo.c` on Intel (the highest cache level: L3 if any,
//!    else L2), and on AMD only from 2.6.31 (`amd_detect_cmp`, commit
//!    99bd0c0fc4b: the socket, or the internal node on Magny-Cours, which we
//!    take as the die). So an AMD host gets no MC level before 2.6.32.
//!    `cpu_coregroup_map` = `llc_shared_map` with power savings off, the
//!    package's CPUs (`cpu_core_map`) with them on ([`PowerSavings`]).
//! 2. **Domains per CPU**, top down: ALLNODES (NUMA, and more than 16 times
//!    this node's CPUs online) over all CPUs; NODE over this node plus its 15
//!    nearest nodes; CPU over this node; MC over `cpu_coregroup_map`; SIBLING
//!    over the SMT siblings. Each starts from its `SD_*_INIT` and then
//!    `set_domain_attribute` (2.6.26+).
//! 3. **Groups.** SIBLING: one per CPU. MC: one per core. CPU: one per
//!    coregroup (LLC), *not* per package. NODE: this node first, then the
//!    other nodes of the span in cyclic node order. ALLNODES: one per node.
//!    Each domain's list starts at the group holding the CPU and follows the
//!    kernel's circular order.
//! 4. **Group power** (`init_sched_groups_power`). 2.6.25/26 "perf policy":
//!    1024 for a group whose domain has no child or whose child shares CPU
//!    power or package resources, else the sum of the child's groups.
//!    2.6.32: the sum of the child's groups, the SMT leaf being
//!    `1024 * smt_gain / threads >> 10` (589 per thread of a 2-way core).
//!    NODE and ALLNODES groups sum the CPU-level groups they contain
//!    (`init_numa_sched_groups_power`).
//! 5. **Degenerate removal** (`cpu_attach_domain`), see
//!    [`sd_degenerate`], [`sd_parent_degenerate`] and [`attach_domain`].
//!
//! Two consequences of the literal port worth knowing:
//!
//! - 2.6.25/26's removal loop does not re-check a domain against its new
//!   parent after removing the old one (fixed in 2.6.28 by f29c9b1ccb5), so
//!   e.g. a 1-core HT box keeps a one-group CPU level above SIBLING, and a
//!   one-CPU node keeps a one-CPU CPU level under NODE.
//! - 2.6.32 keeps a one-group MC level whose span equals SIBLING's (one core
//!   per package, or one core per LLC): MC carries `SD_PREFER_SIBLING`,
//!   which SIBLING lacks, so `sd_parent_degenerate` says it adds something.
//!
//! # Choices where the kernel does not decide
//!
//! - A single-node host is built with `CONFIG_NUMA` off by default. With
//!   [`NumaConfig::On`] (a distro kernel on a UMA box), 2.6.25/26 keep a
//!   one-group NODE level (its `SD_SERIALIZE` is not in the child's flags)
//!   while 2.6.32 drops it (`SD_SERIALIZE` is ignored when `nr_node_ids == 1`)
//!   unless an edited initialiser gives NODE a flag CPU lacks (2.6.32-rc1
//!   with 799e2205ec6).
//! - Edits to the initialisers ([`BuildOptions::init_flags`]) are applied to
//!   each domain's flags as it is made, before `set_domain_attribute`, so a
//!   patched initialiser is what the `relax_domain_level=` boot parameter
//!   then edits.
//! - The MC span is clipped to the node (`coregroup ∩ node`). The 2.6 kernels
//!   never met a last-level cache wider than a node; later kernels split it
//!   there too. Without the clip MC would not nest inside CPU. Under power
//!   savings the coregroup is the package, and a package spanning two nodes
//!   (an AMD multi-node part, which only a host file describes here) gets
//!   an MC wider than its CPU parent in 2.6.25/26, a malformed hierarchy
//!   that 2.6.32's AMD_DCM test avoided; the port clips it to the node
//!   instead.

use crate::cpumask::{CpuId, CpuMask};
use crate::domain::{DomainLevel, DomainParams, GroupRing, SchedDomain, SchedDomains, SchedGroup, SdFlags};
use crate::host::{Host, Vendor};
use crate::overrides::InitFlagEdits;
use crate::version::KernelVersion;
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

/// `SCHED_LOAD_SCALE`: the power of one full CPU.
pub const SCHED_LOAD_SCALE: u32 = 1024;
/// `SD_NODES_PER_DOMAIN`: nodes in a NODE domain (this one + 15 nearest).
pub const SD_NODES_PER_DOMAIN: usize = 16;

/// Whether the modelled kernel has `CONFIG_NUMA`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NumaConfig {
    /// On when the host has more than one NUMA node, off otherwise.
    #[default]
    Auto,
    /// Always on (a distro kernel, even on a UMA box).
    On,
    /// Always off: all CPUs form one node (NUMA hosts with node interleaving).
    Off,
}

impl NumaConfig {
    /// Whether the kernel has CONFIG_NUMA on `host`.
    pub fn enabled_on(self, host: &Host) -> bool {
        match self {
            NumaConfig::Auto => host.nr_nodes() > 1,
            NumaConfig::On => true,
            NumaConfig::Off => false,
        }
    }
}

/// `sched_mc_power_savings` and `sched_smt_power_savings`
/// (`/sys/devices/system/cpu/sched_*_power_savings`): 0 is off, the
/// default. 2.6.25/26 take 0 or 1 (their store refuses anything else with
/// -EINVAL); 2.6.32 also takes 2, POWERSAVINGS_BALANCE_WAKEUP. Writing either file
/// rebuilds the domains (`arch_reinit_sched_domains`), and the builder reads
/// them in two places:
/// - `cpu_coregroup_map`, the MC span: the package (`cpu_core_map`) when
///   either is on, the last-level-cache siblings otherwise (x86
///   smpboot.c, bce7f793 :545-556; 2.6.32 22763c5c :431-443 keeps the LLC
///   map on an AMD multi-node package, X86_FEATURE_AMD_DCM);
/// - the initialisers: SD_MC_INIT gains SD_POWERSAVINGS_BALANCE with the
///   SMT knob, SD_CPU_INIT with either (2.6.26 include/linux/sched.h:717-723
///   BALANCE_FOR_MC_POWER / BALANCE_FOR_PKG_POWER); 2.6.32's
///   sd_balance_for_mc_power / sd_balance_for_package_power (sched.h
///   862-890) give the flag in place of SD_PREFER_SIBLING, MC's only with
///   the SMT knob (see [`PowerSavings::initialiser_flags`]).
///
/// An `sd_init` edit ([`BuildOptions::init_flags`]) applies to the
/// initialiser's value with these knobs in (clearing a flag a knob sets
/// clears it), a choice: in the kernel's source the helpers are calls
/// inside the initialiser that an edit of its constant flags leaves alone.
///
/// The balancer then reads SD_POWERSAVINGS_BALANCE (cfs-core's
/// find_busiest_group), and group power follows the flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PowerSavings {
    /// `sched_mc_power_savings`.
    pub mc: u8,
    /// `sched_smt_power_savings`.
    pub smt: u8,
}

impl PowerSavings {
    /// Whether `version` on `host` has the knob's sysfs file at all
    /// (`sched_create_sysfs_power_savings_entries`, bce7f793
    /// sched.c:7457-7472, 22763c5c :9127-9142): the SMT one when the boot
    /// CPU has SMT siblings (`smt_capable()`), the MC one when its package
    /// has several cores (`mc_capable()`), and in 2.6.32 also when that
    /// package is not the whole machine (arch/x86/include/asm/topology.h
    /// 200-202; 2.6.26 include/asm-x86/topology.h 206-207). So only
    /// Nehalem-EP among the presets has the SMT file, and under 2.6.32 a
    /// one-socket Q6600 or X2 has neither.
    pub fn knob_exists(host: &Host, version: KernelVersion, smt: bool) -> bool {
        if smt {
            host.thread_siblings(0).weight() > 1
        } else {
            host.max_cores_per_package() > 1
                && (!version.is_2_6_32() || host.package_cpus(0).weight() != host.nr_cpus())
        }
    }

    /// These knobs after a write of `level` to one of them: the SMT knob
    /// when `smt`, else the MC one.
    #[must_use]
    pub fn with(mut self, smt: bool, level: u8) -> Self {
        *(if smt { &mut self.smt } else { &mut self.mc }) = level;
        self
    }

    /// The sysfs file of a knob (`/sys/devices/system/cpu/NAME`).
    pub fn file(smt: bool) -> &'static str {
        if smt { "sched_smt_power_savings" } else { "sched_mc_power_savings" }
    }

    /// The knob a file name names: `Some(smt)`, or `None` for any other
    /// name.
    pub fn knob_of(name: &str) -> Option<bool> {
        [false, true].into_iter().find(|&smt| Self::file(smt) == name)
    }

    /// Either knob on.
    pub fn any(self) -> bool {
        self.mc != 0 || self.smt != 0
    }

    /// `flags` of a `level` initialiser (as [`initialiser`] gives them, for
    /// both knobs off) with these knobs. 2.6.32's SD_MC_INIT trades
    /// SD_PREFER_SIBLING for SD_POWERSAVINGS_BALANCE only with the SMT knob
    /// (sd_balance_for_mc_power), so under the MC knob alone MC keeps
    /// PREFER_SIBLING and find_busiest_group caps the CPU level's groups at
    /// a capacity of one task, which leaves its power pick nothing to
    /// consolidate; sd_power_saving_flags adds SD_BALANCE_NEWIDLE to MC and
    /// CPU under either knob (both have it already).
    pub fn initialiser_flags(self, level: DomainLevel, v: KernelVersion, flags: SdFlags) -> SdFlags {
        let (mc, smt, ps, sib) = (self.mc != 0, self.smt != 0, SdFlags::POWERSAVINGS_BALANCE, SdFlags::PREFER_SIBLING);
        let newidle = if v.is_2_6_32() && (mc || smt) { SdFlags::BALANCE_NEWIDLE } else { SdFlags::empty() };
        match (level, v.is_2_6_32()) {
            (DomainLevel::Mc, false) if smt => flags | ps,
            (DomainLevel::Cpu, false) if mc || smt => flags | ps,
            (DomainLevel::Mc, true) if smt => (flags - sib) | ps | newidle,
            (DomainLevel::Cpu, true) if mc || smt => (flags - sib) | ps | newidle,
            (DomainLevel::Mc, true) => flags | newidle,
            _ => flags,
        }
    }
}

/// Build-time knobs beyond the kernel version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct BuildOptions {
    /// `CONFIG_NUMA`.
    pub numa: NumaConfig,
    /// The `relax_domain_level=` boot parameter (2.6.26-rc1 and later; no
    /// effect on 2.6.25). Levels above it lose idle balancing (2.6.26:
    /// `WAKE_IDLE`, `NEWIDLE`; 2.6.32: `BALANCE_WAKE`, `NEWIDLE`), levels
    /// at or below gain it (2.6.26: `WAKE_IDLE_FAR`, `NEWIDLE`). The levels
    /// are SIBLING 1, MC 2, CPU 3, NODE 4, ALLNODES 5; 2.6.26 final and 2.6.32
    /// ignore values of 6 and up, 2.6.26-rc4 accepts them.
    pub relax_domain_level: Option<u8>,
    /// `cpu_online_map`: the CPUs up, `None` for all of the host's (as at
    /// boot). The domains are rebuilt over it after a CPU goes down or comes
    /// up (`update_sched_domains` → `arch_init_sched_domains(&cpu_online_map)`),
    /// and a CPU outside it has none. CPUs the host lacks are ignored.
    pub online: Option<CpuMask>,
    /// The `isolcpus=` boot parameter (`cpu_isolated_map`): CPUs left out of
    /// every domain (`arch_init_sched_domains` builds over the online CPUs
    /// minus these), so no balancing ever moves a task to or from them and
    /// only affinity puts one there.
    pub isolcpus: CpuMask,
    /// Edits to the `SD_*_INIT` initialisers (a patch such as 799e2205ec6),
    /// applied as each domain is made: before `relax_domain_level`, group
    /// power and degenerate removal, so they can keep or drop a level as
    /// the edited kernel would. (Flags written into built domains, as the
    /// `sched_domain` sysctl does, are [`SchedDomains::apply_overrides`].)
    pub init_flags: InitFlagEdits,
    /// `sched_mc_power_savings` and `sched_smt_power_savings`
    /// ([`PowerSavings`]).
    pub power_savings: PowerSavings,
}

impl BuildOptions {
    /// The CPUs the domains are built over (`doms_cur[0]`): the online ones
    /// less the isolated ones, of the `n` CPUs a host has.
    pub fn domain_cpus(&self, n: usize) -> CpuMask {
        let all = CpuMask::first_n(n);
        self.online.map_or(all, |o| o.and(&all)).and_not(&self.isolcpus)
    }
}

impl Host {
    /// The domains `version` builds for this host, default options.
    pub fn build_domains(&self, version: KernelVersion) -> SchedDomains {
        self.build_domains_with(version, &BuildOptions::default())
    }

    /// The domains `version` builds for this host under `opts`.
    pub fn build_domains_with(&self, version: KernelVersion, opts: &BuildOptions) -> SchedDomains {
        let view = KernelView::new(self, version, opts);
        let mut rings = Rings::new();
        // A CPU outside the map stays attached to the NULL domain.
        let mut chains: Vec<Vec<SchedDomain>> = (0..view.n)
            .map(|cpu| if view.cpu_map.contains(cpu) { view.raw_chain(cpu, &mut rings) } else { Vec::new() })
            .collect();
        set_group_powers(&view, &mut chains);
        let per_cpu = chains
            .into_iter()
            .enumerate()
            .map(|(cpu, chain)| attach_domain(version, chain, view.nr_node_ids, cpu))
            .collect();
        SchedDomains { version, per_cpu }
    }
}

/// Chain positions of the levels before removal (bottom-up).
const SIB: usize = 0;
const MC: usize = 1;
const PHYS: usize = 2;

/// Group lists already built, by level (`kernel_level`), span and, for
/// NODE, the node (each node's list starts at that node): the CPUs of one
/// span share one list, as they share one `sched_group` list in the kernel.
type Rings = BTreeMap<(u8, CpuMask, usize), GroupRing>;

/// The shared group list under `key`, built by `groups` the first time.
fn ring(rings: &mut Rings, key: (u8, CpuMask, usize), groups: impl FnOnce() -> Vec<CpuMask>) -> GroupRing {
    let built = rings
        .entry(key)
        .or_insert_with(|| groups().into_iter().map(|cpus| SchedGroup { cpus, cpu_power: 0 }).collect());
    built.clone()
}

/// The host as `__build_sched_domains(cpu_map)` sees it: every map below
/// is already `∩ cpu_map`, as the kernel clips each span and group to it.
struct KernelView<'h> {
    host: &'h Host,
    v: KernelVersion,
    opts: BuildOptions,
    n: usize,
    /// The CPUs the domains are built over.
    cpu_map: CpuMask,
    /// `num_online_cpus()` (ALLNODES' `max_interval`).
    nr_online: usize,
    /// Node CPUs that are online, isolated or not: what
    /// `find_next_best_node`'s `nr_cpus_node` counts.
    node_online: Vec<CpuMask>,
    numa: bool,
    nr_node_ids: usize,
    /// Node of each CPU (all 0 without NUMA).
    node_of: Vec<usize>,
    /// CPUs of each node (one node of all CPUs without NUMA).
    node_mask: Vec<CpuMask>,
    /// `node_mask[node_of[cpu]]` per CPU (the ALLNODES group key).
    by_node: Vec<CpuMask>,
    /// `cpu_sibling_map`.
    sibling: Vec<CpuMask>,
    /// `cpu_coregroup_map` ∩ node.
    coregroup: Vec<CpuMask>,
}

impl<'h> KernelView<'h> {
    fn new(host: &'h Host, v: KernelVersion, opts: &BuildOptions) -> Self {
        let n = host.nr_cpus();
        let numa = opts.numa.enabled_on(host);
        let (node_of, node_mask) = if numa {
            let node_of = host.cpus().iter().map(|c| c.node as usize).collect();
            (node_of, (0..host.nr_nodes()).map(|i| host.node_cpus(i)).collect())
        } else {
            (vec![0; n], vec![host.all_cpus()])
        };
        // The kernel's node maps lose a CPU that goes down (numa_remove_cpu)
        // and its spans are then clipped to cpu_map, so clipping the node
        // maps to cpu_map here builds the same spans and groups.
        let cpu_map = opts.domain_cpus(n);
        let online = opts.online.map_or(host.all_cpus(), |o| o.and(&host.all_cpus()));
        let node_online = node_mask.iter().map(|m| m.and(&online)).collect();
        let node_mask: Vec<CpuMask> = node_mask.iter().map(|m| m.and(&cpu_map)).collect();
        let sibling: Vec<CpuMask> = (0..n).map(|c| host.thread_siblings(c).and(&cpu_map)).collect();
        let llc = llc_shared_maps(host, v);
        // cpu_coregroup_map: the package (cpu_core_map, the siblings on a
        // one-core-per-package box) under power savings, unless 2.6.32
        // finds an AMD multi-node package; the LLC siblings otherwise.
        let dcm =
            v.is_2_6_32() && host.vendor() == Vendor::Amd && (0..n).any(|c| host.die_cpus(c) != host.package_cpus(c));
        let core_map = |c: CpuId| {
            if host.max_cores_per_package() == 1 { host.thread_siblings(c) } else { host.package_cpus(c) }
        };
        let coregroup_of = |c: CpuId| if opts.power_savings.any() && !dcm { core_map(c) } else { llc[c] };
        let coregroup = (0..n).map(|c| coregroup_of(c).and(&node_mask[node_of[c]])).collect();
        let by_node = (0..n).map(|c| node_mask[node_of[c]]).collect();
        let nr_node_ids = if numa { host.nr_nodes() } else { 1 };
        KernelView {
            host,
            v,
            opts: *opts,
            n,
            cpu_map,
            nr_online: online.weight(),
            node_online,
            numa,
            nr_node_ids,
            node_of,
            node_mask,
            by_node,
            sibling,
            coregroup,
        }
    }

    /// The domains of `cpu` before group powers and removal, bottom-up.
    fn raw_chain(&self, cpu: CpuId, rings: &mut Rings) -> Vec<SchedDomain> {
        use DomainLevel as L;
        let node = self.node_of[cpu];
        let (sib, cg, nm) = (self.sibling[cpu], self.coregroup[cpu], self.node_mask[node]);
        let mut chain = vec![
            self.domain(L::Sibling, sib, ring(rings, (kernel_level(L::Sibling), sib, 0), || singletons(sib))),
            self.domain(L::Mc, cg, ring(rings, (kernel_level(L::Mc), cg, 0), || partition(cg, &self.sibling))),
            self.domain(L::Cpu, nm, ring(rings, (kernel_level(L::Cpu), nm, 0), || partition(nm, &self.coregroup))),
        ];
        if self.numa {
            let span = self.node_span(node);
            let groups = ring(rings, (kernel_level(L::Node), span, node), || self.node_groups(node, span));
            chain.push(self.domain(L::Node, span, groups));
            if self.cpu_map.weight() > SD_NODES_PER_DOMAIN * nm.weight() {
                let all = self.cpu_map;
                let groups = ring(rings, (kernel_level(L::AllNodes), all, 0), || partition(all, &self.by_node));
                chain.push(self.domain(L::AllNodes, all, groups));
            }
        }
        chain
    }

    /// A domain from its initialiser, after `set_domain_attribute`.
    fn domain(&self, level: DomainLevel, span: CpuMask, groups: GroupRing) -> SchedDomain {
        let (flags, params) = initialiser(level, self.v, self.nr_online);
        let flags = self.opts.power_savings.initialiser_flags(level, self.v, flags);
        let flags = self.opts.init_flags.apply(level, flags);
        SchedDomain {
            level,
            span,
            groups,
            flags: relax_domain_level(level, self.v, self.opts.relax_domain_level, flags),
            params,
        }
    }

    /// `sched_domain_node_span`: this node and the nearest 15 others with CPUs.
    fn node_span(&self, node: usize) -> CpuMask {
        let mut used = vec![false; self.node_mask.len()];
        used[node] = true;
        let mut span = self.node_mask[node];
        for _ in 1..SD_NODES_PER_DOMAIN {
            if let Some(next) = self.find_next_best_node(node, &used) {
                used[next] = true;
                span = span.or(&self.node_mask[next]);
            }
        }
        span
    }

    /// `find_next_best_node`: the closest unused node with CPUs; ties go to
    /// the first met scanning upwards (cyclically) from `node`.
    fn find_next_best_node(&self, node: usize, used: &[bool]) -> Option<usize> {
        let nn = self.node_mask.len();
        let mut best: Option<(u32, usize)> = None;
        for n in (0..nn).map(|i| (node + i) % nn) {
            if self.node_online[n].is_empty() || used[n] {
                continue;
            }
            let d = self.host.node_distance(node, n);
            if best.is_none_or(|(min, _)| d < min) {
                best = Some((d, n));
            }
        }
        best.map(|(_, n)| n)
    }

    /// The NODE groups of `node`'s domain: the node itself, then each other
    /// node meeting the span, in cyclic node order (`__build_sched_domains`
    /// 2.6.26 lines 7098-7162; `build_numa_sched_groups` in 2.6.32).
    fn node_groups(&self, node: usize, span: CpuMask) -> Vec<CpuMask> {
        let nn = self.node_mask.len();
        let mut groups = vec![self.node_mask[node]];
        let mut covered = self.node_mask[node];
        for n in (0..nn).map(|j| (node + j) % nn) {
            let left = span.and_not(&covered);
            if left.is_empty() {
                break;
            }
            let g = left.and(&self.node_mask[n]);
            if !g.is_empty() {
                covered = covered.or(&g);
                groups.push(g);
            }
        }
        groups
    }
}

/// `llc_shared_map` of every CPU as `set_cpu_sibling_map` leaves it: the
/// SMT siblings, plus (unless the boot CPU has one core per package) every
/// CPU with the same valid `cpu_llc_id`.
fn llc_shared_maps(host: &Host, v: KernelVersion) -> Vec<CpuMask> {
    let n = host.nr_cpus();
    let ids: Vec<Option<(u32, u32)>> = (0..n).map(|c| llc_id(host, v, c)).collect();
    let single_core = host.max_cores_per_package() == 1;
    (0..n)
        .map(|cpu| {
            let mut map = host.thread_siblings(cpu);
            if let (false, Some(id)) = (single_core, ids[cpu]) {
                map = map.or(&CpuMask::from_cpus((0..n).filter(|&o| ids[o] == Some(id))));
            }
            map
        })
        .collect()
}

/// `cpu_llc_id`, or `None` for BAD_APICID.
fn llc_id(host: &Host, v: KernelVersion, cpu: CpuId) -> Option<(u32, u32)> {
    match host.vendor() {
        Vendor::Intel => host.llc_slot(cpu).map(|(level, inst)| (level as u32, inst)),
        Vendor::Amd if v.is_2_6_32() => Some((host.cpu(cpu).package, host.cpu(cpu).die)),
        Vendor::Amd => None,
    }
}

/// Groups of one CPU each (the SIBLING level's `cpu_to_cpu_group`).
fn singletons(span: CpuMask) -> Vec<CpuMask> {
    span.iter().map(CpuMask::single).collect()
}

/// `init_sched_build_groups`: splits `span` by the first CPU of `key[cpu]`
/// (the `cpu_to_*_group` function), groups in order of their first CPU.
fn partition(span: CpuMask, key: &[CpuMask]) -> Vec<CpuMask> {
    let mut groups: Vec<(CpuId, CpuMask)> = Vec::new();
    for cpu in span.iter() {
        let id = key[cpu].first().unwrap_or(cpu);
        match groups.iter_mut().find(|(g, _)| *g == id) {
            Some((_, m)) => m.set(cpu),
            None => groups.push((id, CpuMask::single(cpu))),
        }
    }
    groups.into_iter().map(|(_, m)| m).collect()
}

/// The `SD_*_INIT` flags and parameters of `level` in `v` (x86-64, power
/// savings off: [`PowerSavings::initialiser_flags`] adds the knobs). See
/// the tables in kernel-reference.md §10.2 / §10.3.
pub fn initialiser(level: DomainLevel, v: KernelVersion, nr_cpus: usize) -> (SdFlags, DomainParams) {
    use SdFlags as F;
    let new = v.is_2_6_32();
    let base = F::LOAD_BALANCE | F::BALANCE_NEWIDLE | F::BALANCE_FORK | F::BALANCE_EXEC | F::WAKE_AFFINE;
    // 2.6.32-rc1 had SD_PREFER_LOCAL on MC and CPU; 2.6.32 final turned it off.
    let prefer_local = if v == KernelVersion::V2_6_32Rc1 { F::PREFER_LOCAL } else { F::empty() };
    match level {
        DomainLevel::Sibling => {
            let flags = base | F::SHARE_CPUPOWER | if new { F::empty() } else { F::WAKE_IDLE };
            (flags, params(1, 2, 64, 110, 0, [0, 0, 0, 0, 0], if new { 1178 } else { 0 }, 1))
        }
        DomainLevel::Mc if new => {
            let flags = base | F::SHARE_PKG_RESOURCES | F::PREFER_SIBLING | prefer_local;
            (flags, params(1, 4, 64, 125, 1, [2, 0, 0, 0, 0], 0, 1))
        }
        DomainLevel::Mc => (base | F::SHARE_PKG_RESOURCES, params(1, 4, 64, 125, 1, [2, 0, 0, 1, 1], 0, 1)),
        DomainLevel::Cpu if new => {
            (base | F::PREFER_SIBLING | prefer_local, params(1, 4, 64, 125, 1, [2, 1, 0, 0, 0], 0, 1))
        }
        DomainLevel::Cpu => (base, params(1, 4, 64, 125, 1, [2, 1, 2, 1, 1], 0, 1)),
        DomainLevel::Node if new => (base | F::SERIALIZE, params(8, 32, 32, 125, 2, [3, 2, 0, 0, 0], 0, 1)),
        DomainLevel::Node => {
            // x86-64 SD_NEWIDLE_IDX: 0 in 2.6.25, 2 from 2.6.26-rc1.
            let newidle = if v == KernelVersion::V2_6_25 { 0 } else { 2 };
            let flags = F::LOAD_BALANCE | F::BALANCE_EXEC | F::BALANCE_FORK | F::SERIALIZE | F::WAKE_BALANCE;
            (flags, params(8, 32, 32, 125, 2, [3, 2, newidle, 1, 1], 0, 1))
        }
        DomainLevel::AllNodes => {
            (allnodes_flags(v), params(64, 64 * nr_cpus as u32, 128, 133, 1, [3, 3, 0, 0, 0], 0, 64))
        }
    }
}

/// SD_ALLNODES_INIT flags: LB | SERIALIZE in 2.6.25 and 2.6.26-rc4;
/// commit ea3f01f8afd ("sched: re-tune NUMA topologies", after rc4) added
/// NEWIDLE and WAKE_AFFINE for 2.6.26; 2.6.32 has LB | NEWIDLE | SERIALIZE.
fn allnodes_flags(v: KernelVersion) -> SdFlags {
    use SdFlags as F;
    match v {
        KernelVersion::V2_6_25 | KernelVersion::V2_6_26Rc4 => F::LOAD_BALANCE | F::SERIALIZE,
        KernelVersion::V2_6_26 => F::LOAD_BALANCE | F::BALANCE_NEWIDLE | F::WAKE_AFFINE | F::SERIALIZE,
        KernelVersion::V2_6_32Rc1 | KernelVersion::V2_6_32 => F::LOAD_BALANCE | F::BALANCE_NEWIDLE | F::SERIALIZE,
    }
}

#[allow(clippy::too_many_arguments)]
fn params(
    min: u32,
    max: u32,
    busy_factor: u32,
    imb: u32,
    cnt: u32,
    idx: [u8; 5],
    smt_gain: u32,
    bi: u32,
) -> DomainParams {
    DomainParams {
        min_interval: min,
        max_interval: max,
        busy_factor,
        imbalance_pct: imb,
        cache_nice_tries: cnt,
        busy_idx: idx[0],
        idle_idx: idx[1],
        newidle_idx: idx[2],
        wake_idx: idx[3],
        forkexec_idx: idx[4],
        smt_gain,
        balance_interval: bi,
    }
}

/// `enum sched_domain_level` numbers.
const fn kernel_level(level: DomainLevel) -> u8 {
    match level {
        DomainLevel::Sibling => 1,
        DomainLevel::Mc => 2,
        DomainLevel::Cpu => 3,
        DomainLevel::Node => 4,
        DomainLevel::AllNodes => 5,
    }
}

/// `set_domain_attribute` with the boot-time `relax_domain_level`.
fn relax_domain_level(level: DomainLevel, v: KernelVersion, request: Option<u8>, flags: SdFlags) -> SdFlags {
    use SdFlags as F;
    let Some(req) = request else { return flags };
    let accepted = match v {
        KernelVersion::V2_6_25 => false,
        KernelVersion::V2_6_26Rc4 => true,
        _ => req < 6,
    };
    if !accepted {
        return flags;
    }
    let (off, on) = if v.is_2_6_32() {
        (F::BALANCE_WAKE | F::BALANCE_NEWIDLE, F::BALANCE_WAKE | F::BALANCE_NEWIDLE)
    } else {
        (F::WAKE_IDLE | F::BALANCE_NEWIDLE, F::WAKE_IDLE_FAR | F::BALANCE_NEWIDLE)
    };
    if req < kernel_level(level) { flags - off } else { flags | on }
}

/// Fills every group's `cpu_power` (`init_sched_groups_power` for the
/// SIBLING, MC and CPU levels, `init_numa_sched_groups_power` above).
fn set_group_powers(view: &KernelView<'_>, chains: &mut [Vec<SchedDomain>]) {
    // power[level][first cpu of group], as the group's first CPU computes it.
    let mut power = vec![vec![0u32; view.n]; 3];
    for level in [SIB, MC, PHYS] {
        for f in view.cpu_map.iter() {
            let local = &chains[f][level].groups[chains[f][level].group_of(f).unwrap_or(0)];
            if local.cpus.first() == Some(f) {
                power[level][f] = group_power(view.v, &chains[f], level, &power);
            }
        }
    }
    let phys_power = |cpu: CpuId| {
        let Some(phys) = chains[cpu].get(PHYS) else { return 0 };
        let g = &phys.groups[phys.group_of(cpu).unwrap_or(0)];
        if g.cpus.first() == Some(cpu) { power[PHYS][cpu] } else { 0 }
    };
    let numa_power: Vec<u32> = (0..view.n).map(phys_power).collect();
    // Each shared list is powered once; the domains sharing it then share
    // the powered list (keyed by the unpowered list they held, which
    // `rings` keeps alive, so no two lists meet at one address).
    let mut powered: BTreeMap<*const SchedGroup, GroupRing> = BTreeMap::new();
    for chain in chains.iter_mut() {
        for (level, sd) in chain.iter_mut().enumerate() {
            let built = sd.groups.built_order();
            let done = powered.entry(built.as_ptr()).or_insert_with(|| {
                let power_of = |g: &SchedGroup| match level {
                    SIB | MC | PHYS => g.cpus.first().map_or(0, |f| power[level][f]),
                    _ => g.cpus.iter().map(|c| numa_power[c]).sum(),
                };
                built.iter().map(|g| SchedGroup { cpus: g.cpus, cpu_power: power_of(g) }).collect()
            });
            sd.groups = done.entered_at(sd.groups.entry());
        }
    }
}

/// `init_sched_groups_power` for the local group of `chain[level]`, whose
/// first CPU owns `chain`; `power` holds the lower levels already.
fn group_power(v: KernelVersion, chain: &[SchedDomain], level: usize, power: &[Vec<u32>]) -> u32 {
    let sd = &chain[level];
    if level == SIB {
        return leaf_power(v, sd);
    }
    let child = &chain[level - 1];
    let shares = child.flags.intersects(SdFlags::SHARE_CPUPOWER | SdFlags::SHARE_PKG_RESOURCES);
    if !v.is_2_6_32() && !sd.flags.contains(SdFlags::POWERSAVINGS_BALANCE) && shares {
        return SCHED_LOAD_SCALE;
    }
    child.groups.iter().filter_map(|g| g.cpus.first()).map(|f| power[level - 1][f]).sum()
}

/// Power of a group of a domain without a child: 1024, or on 2.6.32 an SMT
/// domain's share of `smt_gain` (`1024 * 1178 / 2 >> 10` = 589).
fn leaf_power(v: KernelVersion, sd: &SchedDomain) -> u32 {
    let weight = sd.span.weight() as u64;
    if v.is_2_6_32() && sd.flags.contains(SdFlags::SHARE_CPUPOWER) && weight > 1 {
        ((SCHED_LOAD_SCALE as u64 * sd.params.smt_gain as u64 / weight) >> 10) as u32
    } else {
        SCHED_LOAD_SCALE
    }
}

/// Flags that need at least two groups to do anything.
const NEEDS_GROUPS: SdFlags = SdFlags::LOAD_BALANCE
    .union(SdFlags::BALANCE_NEWIDLE)
    .union(SdFlags::BALANCE_FORK)
    .union(SdFlags::BALANCE_EXEC)
    .union(SdFlags::SHARE_CPUPOWER)
    .union(SdFlags::SHARE_PKG_RESOURCES);

/// Wakeup flags that make a domain useful even with one group.
fn groupless_flags(v: KernelVersion) -> SdFlags {
    if v.is_2_6_32() { SdFlags::WAKE_AFFINE } else { SdFlags::WAKE_IDLE | SdFlags::WAKE_AFFINE | SdFlags::WAKE_BALANCE }
}

/// `sd_degenerate`: the domain spans one CPU, or has one group and no
/// wakeup flag (2.6.25/26: WAKE_IDLE, WAKE_AFFINE, WAKE_BALANCE; 2.6.32:
/// WAKE_AFFINE).
pub fn sd_degenerate(v: KernelVersion, sd: &SchedDomain) -> bool {
    if sd.span.weight() == 1 {
        return true;
    }
    if sd.flags.intersects(NEEDS_GROUPS) && sd.groups.len() > 1 {
        return false;
    }
    !sd.flags.intersects(groupless_flags(v))
}

/// `sd_parent_degenerate`: `parent` adds nothing to `child`. It is
/// degenerate itself, or it has the same span and no flag the child lacks,
/// not counting group flags when it has one group, nor (2.6.25/26)
/// WAKE_BALANCE under a WAKE_AFFINE child, nor (2.6.32) SERIALIZE when
/// `nr_node_ids == 1`.
pub fn sd_parent_degenerate(v: KernelVersion, child: &SchedDomain, parent: &SchedDomain, nr_node_ids: usize) -> bool {
    if sd_degenerate(v, parent) {
        return true;
    }
    if child.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags;
    if !v.is_2_6_32() && child.flags.contains(SdFlags::WAKE_AFFINE) {
        pflags.remove(SdFlags::WAKE_BALANCE);
    }
    if parent.groups.len() == 1 {
        pflags.remove(NEEDS_GROUPS);
        if v.is_2_6_32() && nr_node_ids == 1 {
            pflags.remove(SdFlags::SERIALIZE);
        }
    }
    (pflags - child.flags).is_empty()
}

/// `cpu_attach_domain`'s removal pass over one CPU's chain (bottom-up), then
/// local-group-first ordering. Returns the surviving domains bottom-up.
///
/// After removing a parent, 2.6.25/26 step on to the *new* parent (the old
/// grandparent) without comparing it with the current domain; 2.6.28's
/// f29c9b1ccb5 ("sched: fix a bug in sched domain degenerate") made the loop
/// re-examine the current domain, as 2.6.32 does. So 2.6.25/26 can keep a
/// level that 2.6.32 removes (e.g. a one-CPU CPU level above a removed MC).
/// Finally the bottom domain goes if it is degenerate (checked once).
pub fn attach_domain(v: KernelVersion, chain: Vec<SchedDomain>, nr_node_ids: usize, cpu: CpuId) -> Vec<SchedDomain> {
    if chain.is_empty() {
        return chain;
    }
    let len = chain.len();
    let mut parent: Vec<Option<usize>> = (0..len).map(|i| (i + 1 < len).then_some(i + 1)).collect();
    let mut tmp = Some(0);
    while let Some(t) = tmp {
        let Some(p) = parent[t] else { break };
        if sd_parent_degenerate(v, &chain[t], &chain[p], nr_node_ids) {
            parent[t] = parent[p];
            if v.is_2_6_32() {
                continue;
            }
        }
        tmp = parent[t];
    }
    let base = if sd_degenerate(v, &chain[0]) { parent[0] } else { Some(0) };
    let mut keep = vec![false; len];
    let mut at = base;
    while let Some(i) = at {
        keep[i] = true;
        at = parent[i];
    }
    chain.into_iter().zip(keep).filter(|(_, k)| *k).map(|(sd, _)| local_group_first(sd, cpu)).collect()
}

/// Rotates the circular group list so that it starts at `cpu`'s group, as
/// `sd->groups` does. NODE lists are built that way already.
fn local_group_first(mut sd: SchedDomain, cpu: CpuId) -> SchedDomain {
    if let Some(i) = sd.group_of(cpu) {
        sd.groups = sd.groups.entered_at(i);
    }
    sd
}
