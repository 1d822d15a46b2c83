//! Property tests over random hosts: the domain invariants every kernel's
//! builder keeps, and parsers that never panic.
#![cfg(feature = "std")]

use cfs_topology::builder::{BuildOptions, NumaConfig, sd_degenerate, sd_parent_degenerate};
use cfs_topology::{
    CpuMask, Distance, DomainLevel, Host, HostDesc, InitFlagEdits, KernelVersion, LogicalCpu, SchedDomain, SdFlags,
    Vendor, parse_any,
};
use proptest::prelude::*;

/// A random spec string: shape plus vendor, numbering and cache options.
fn spec_strategy() -> impl Strategy<Value = String> {
    (1u32..=3, 1u32..=3, 1u32..=2, 1u32..=4, 1u32..=2, any::<bool>(), any::<bool>(), 0usize..3, 0usize..3, 11u32..=60)
        .prop_map(|(n, s, d, c, t, amd, linear, l2, l3, dist)| {
            let l2 = ["core", "die", "socket"][l2];
            let l3 = ["none", "die", "socket"][l3];
            let vendor = if amd { ",amd" } else { "" };
            let order = if linear { ",order=linear" } else { "" };
            format!("{n}n{s}s{d}d{c}c{t}t{vendor}{order},l2={l2},l3={l3},dist={dist}")
        })
}

fn numa_strategy() -> impl Strategy<Value = NumaConfig> {
    prop_oneof![Just(NumaConfig::Auto), Just(NumaConfig::On), Just(NumaConfig::Off)]
}

/// Levels in the order the builder creates them, bottom-up.
const ORDER: [DomainLevel; 5] =
    [DomainLevel::Sibling, DomainLevel::Mc, DomainLevel::Cpu, DomainLevel::Node, DomainLevel::AllNodes];

fn below(level: DomainLevel) -> Option<DomainLevel> {
    let i = ORDER.iter().position(|&l| l == level)?;
    i.checked_sub(1).map(|j| ORDER[j])
}

/// Spans nest, groups partition the span with the CPU's group first, powers
/// are positive, and no removable level survives (2.6.32 exactly; for
/// 2.6.25/26 a level may survive un-checked only where the level below it
/// was removed, which is the old loop's skip).
fn check_chain(v: KernelVersion, cpu: usize, chain: &[SchedDomain], nr_node_ids: usize) -> Result<(), TestCaseError> {
    for (k, sd) in chain.iter().enumerate() {
        prop_assert!(sd.span.contains(cpu), "CPU{} not in its {} span", cpu, sd.level);
        prop_assert!(
            sd.groups.first().is_some_and(|g| g.cpus.contains(cpu)),
            "CPU{} {}: local group not first",
            cpu,
            sd.level
        );
        let mut union = CpuMask::empty();
        for g in &sd.groups {
            prop_assert!(!g.cpus.is_empty() && g.cpu_power > 0);
            prop_assert!(!g.cpus.intersects(&union), "CPU{} {}: groups overlap", cpu, sd.level);
            union = union.or(&g.cpus);
        }
        prop_assert_eq!(union, sd.span, "CPU{} {}: groups do not cover the span", cpu, sd.level);
        if k == 0 {
            continue;
        }
        let child = &chain[k - 1];
        prop_assert!(child.level < sd.level);
        prop_assert!(child.span.is_subset_of(&sd.span), "CPU{} {} not inside {}", cpu, child.level, sd.level);
        let checked = v.is_2_6_32() || below(sd.level) == Some(child.level);
        if checked {
            prop_assert!(
                !sd_parent_degenerate(v, child, sd, nr_node_ids),
                "CPU{} {} is redundant over {}",
                cpu,
                sd.level,
                child.level
            );
        }
    }
    if let Some(base) = chain.first() {
        if v.is_2_6_32() {
            prop_assert!(!sd_degenerate(v, base), "CPU{} base {} is degenerate", cpu, base.level);
        }
    }
    Ok(())
}

fn nr_node_ids(h: &Host, numa: NumaConfig) -> usize {
    match numa {
        NumaConfig::Off => 1,
        NumaConfig::On => h.nr_nodes(),
        NumaConfig::Auto if h.nr_nodes() > 1 => h.nr_nodes(),
        NumaConfig::Auto => 1,
    }
}

/// A mask of up to 300 CPUs, sometimes packed into a few words and
/// sometimes spread over all sixteen.
fn mask_strategy() -> impl Strategy<Value = CpuMask> {
    (proptest::collection::vec(0usize..1024, 0..300), 1usize..=16)
        .prop_map(|(cpus, words)| CpuMask::from_cpus(cpus.into_iter().map(|c| c % (64 * words))))
}

proptest! {
    /// The set tests that build no intermediate mask agree with the masks
    /// they avoid: `iter_and` lists `and`'s CPUs in ascending order, and
    /// `intersects` and `is_subset_of` answer as `and` and `and_not` do.
    #[test]
    fn set_tests_without_an_intermediate_mask_agree_with_it(a in mask_strategy(), b in mask_strategy()) {
        let both: Vec<usize> = a.iter_and(&b).collect();
        prop_assert_eq!(&both, &a.and(&b).iter().collect::<Vec<_>>());
        prop_assert!(both.windows(2).all(|p| p[0] < p[1]));
        prop_assert_eq!(a.intersects(&b), !both.is_empty());
        prop_assert_eq!(a.is_subset_of(&b), a.and_not(&b).is_empty());
        prop_assert!(a.and(&b).is_subset_of(&a) && a.is_subset_of(&a.or(&b)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// With either power-savings knob too (MC over the package).
    #[test]
    fn domains_are_well_formed(spec in spec_strategy(), numa in numa_strategy(), mc in 0u8..2, smt in 0u8..2) {
        let h = Host::from_spec(&spec).unwrap();
        let power_savings = cfs_topology::PowerSavings { mc, smt };
        let opts = BuildOptions { numa, power_savings, ..BuildOptions::default() };
        for v in KernelVersion::ALL {
            let d = h.build_domains_with(v, &opts);
            prop_assert_eq!(d.nr_cpus(), h.nr_cpus());
            for cpu in 0..h.nr_cpus() {
                check_chain(v, cpu, d.of(cpu), nr_node_ids(&h, numa))?;
            }
            // 2.6.32 never keeps a level that spans one CPU.
            if v.is_2_6_32() {
                prop_assert!(d.per_cpu.iter().flatten().all(|sd| sd.span.weight() > 1));
            }
        }
    }

    /// Any edit of the initialisers (a patch of SD_*_INIT)
    /// builds domains that keep the same invariants: an edit may keep or
    /// drop a level and change group power, never break the structure.
    #[test]
    fn domains_are_well_formed_under_any_initialiser_edit(
        spec in spec_strategy(),
        numa in numa_strategy(),
        edits in proptest::collection::vec((0usize..5, any::<u32>(), any::<u32>()), 0..6),
    ) {
        let h = Host::from_spec(&spec).unwrap();
        let init_flags = edits.iter().fold(InitFlagEdits::none(), |e, &(level, set, clear)| {
            e.with(ORDER[level], SdFlags::from_bits_truncate(set), SdFlags::from_bits_truncate(clear))
        });
        let opts = BuildOptions { numa, init_flags, ..BuildOptions::default() };
        for v in KernelVersion::ALL {
            let d = h.build_domains_with(v, &opts);
            prop_assert_eq!(d.nr_cpus(), h.nr_cpus());
            for cpu in 0..h.nr_cpus() {
                check_chain(v, cpu, d.of(cpu), nr_node_ids(&h, numa))?;
                // Every level that is left carries its edits (no relax_domain_level here).
                for sd in d.of(cpu) {
                    let (set, clear) = init_flags.iter().find(|o| o.level == sd.level).map_or(
                        (SdFlags::empty(), SdFlags::empty()),
                        |o| (o.set, o.clear),
                    );
                    prop_assert!(sd.flags.contains(set) && !sd.flags.intersects(clear - set), "{} {}", cpu, sd.level);
                }
            }
        }
    }

    /// Domains built over part of the host (CPUs down, `isolcpus=`) keep
    /// the same invariants inside the map; a CPU outside it has none, and
    /// no span or group names a CPU outside it
    /// (`__build_sched_domains(cpu_map)` clips every span to the map).
    #[test]
    fn domains_over_a_partial_map_stay_inside_it(
        spec in spec_strategy(),
        numa in numa_strategy(),
        down in proptest::collection::vec(0usize..64, 0..6),
        isolated in proptest::collection::vec(0usize..64, 0..3),
    ) {
        let h = Host::from_spec(&spec).unwrap();
        let n = h.nr_cpus();
        let online = h.all_cpus().and_not(&CpuMask::from_cpus(down.iter().map(|c| c % n)));
        let isolcpus = CpuMask::from_cpus(isolated.iter().map(|c| c % n));
        let opts = BuildOptions { numa, online: Some(online), isolcpus, ..BuildOptions::default() };
        let map = opts.domain_cpus(n);
        prop_assert_eq!(map, online.and_not(&isolcpus));
        for v in KernelVersion::ALL {
            let d = h.build_domains_with(v, &opts);
            prop_assert_eq!(d.nr_cpus(), n);
            for cpu in 0..n {
                if !map.contains(cpu) {
                    prop_assert!(d.of(cpu).is_empty(), "CPU{} is outside the map but has domains", cpu);
                    continue;
                }
                check_chain(v, cpu, d.of(cpu), nr_node_ids(&h, numa))?;
                for sd in d.of(cpu) {
                    prop_assert!(sd.span.is_subset_of(&map), "CPU{} {} spans CPUs outside the map", cpu, sd.level);
                }
            }
        }
    }

    #[test]
    fn distance_matches_the_ids(spec in spec_strategy()) {
        let h = Host::from_spec(&spec).unwrap();
        for a in 0..h.nr_cpus() {
            for b in 0..h.nr_cpus() {
                let d = h.distance(a, b);
                prop_assert_eq!(d, h.distance(b, a));
                prop_assert_eq!(d <= Distance::SameCore, h.thread_siblings(a).contains(b));
                let (ca, cb) = (h.cpu(a), h.cpu(b));
                prop_assert_eq!(matches!(d, Distance::RemoteNode { .. }), ca.node != cb.node);
                if d == Distance::SamePackage { prop_assert_eq!(ca.package, cb.package); }
            }
        }
    }

    /// Many one-socket nodes with random symmetric SLIT distances: NODE spans
    /// hold the own node plus at most 15 others, ALLNODES appears when
    /// CPUs > 16 x node CPUs, and the invariants hold.
    #[test]
    fn many_nodes(nodes in 2usize..40, cores in 1u32..=2, seed in proptest::collection::vec(11u32..=80, 40 * 40)) {
        let cpus: Vec<LogicalCpu> = (0..nodes as u32)
            .flat_map(|n| (0..cores).map(move |c| LogicalCpu { package: n, die: 0, core: c, thread: 0, node: n }))
            .collect();
        let dist = (0..nodes).map(|a| (0..nodes).map(|b| match a.cmp(&b) {
            std::cmp::Ordering::Equal => 10,
            std::cmp::Ordering::Less => seed[a * 40 + b],
            std::cmp::Ordering::Greater => seed[b * 40 + a],
        }).collect()).collect();
        let h = Host::new(HostDesc { name: "numa".into(), vendor: Vendor::Intel, mhz: 2000, cpus, caches: vec![], node_distances: dist }).unwrap();
        for v in [KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
            let d = h.build_domains(v);
            for cpu in 0..h.nr_cpus() {
                let chain = d.of(cpu);
                check_chain(v, cpu, chain, nodes)?;
                let node_span = chain.iter().find(|sd| sd.level == DomainLevel::Node).map(|sd| sd.span);
                if let Some(span) = node_span {
                    prop_assert!(span.weight() <= 16 * cores as usize);
                }
                let has_allnodes = chain.iter().any(|sd| sd.level == DomainLevel::AllNodes);
                prop_assert_eq!(has_allnodes, nodes > 16);
            }
        }
    }

    #[test]
    fn parse_any_never_panics(s in "\\PC{0,40}") {
        let _ = parse_any(&s);
    }

    #[test]
    fn spec_like_input_never_panics(s in "[0-9]{0,4}[nsdct]?[0-9]{0,5}[nsdctx]?[0-9]{0,3}[nsdct]?(,[a-z0-9=:]{0,12}){0,3}") {
        if let Ok(h) = parse_any(&s) {
            prop_assert!(h.nr_cpus() >= 1);
        }
    }

    #[test]
    fn toml_like_input_never_panics(s in "(spec = \"[0-9nsdct,=a-z]{0,10}\"\n)?(\\[\\[cpu\\]\\]\npackage = [0-9]{1,3}\ncore = [0-9]{1,2}\n(node = [0-9]{1,5}\n)?){0,3}(\\[\\[cache\\]\\]\nlevel = [0-9]\nsize_kb = [0-9]{1,3}\nshared = \\[\"[0-9,-]{0,6}\"\\]\n)?") {
        let _ = parse_any(&s);
    }
}
