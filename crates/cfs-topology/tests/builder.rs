//! Builder behaviour beyond the presets: NUMA on/off, ALLNODES and node
//! spans, AMD before and after 2.6.31, relax_domain_level, the
//! `x86_max_cores == 1` shortcut, and the 2.6.25/26 removal loop.
#![cfg(feature = "std")]

mod common;

use cfs_topology::builder::{BuildOptions, NumaConfig};
use cfs_topology::{
    Cache, CacheKind, CpuMask, DomainLevel as L, Host, HostDesc, InitFlagEdits, KernelVersion as V, LogicalCpu,
    SdFlags, Vendor, parse_flag_overrides, render_kernel_debug,
};
use common::{layout, levels};

fn spec(s: &str) -> Host {
    Host::from_spec(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn with_numa(numa: NumaConfig) -> BuildOptions {
    BuildOptions { numa, ..BuildOptions::default() }
}

/// kernel-reference.md §10.5: on a single-node box with CONFIG_NUMA=y,
/// 2.6.26 keeps a one-group NODE level: sd_parent_degenerate(CPU, NODE)
/// strips NODE's group flags (LB, EXEC, FORK) and WAKE_BALANCE (the CPU
/// child has WAKE_AFFINE), leaving SERIALIZE, which CPU lacks. Its one group
/// sums the node's two phys (L2-pair) groups: 2 x 1024
/// (init_numa_sched_groups_power). 2.6.32 also strips SERIALIZE when
/// nr_node_ids == 1, so NODE goes.
#[test]
fn single_node_with_numa_on() {
    let q = Host::preset("q6600").unwrap();
    for v in [V::V2_6_25, V::V2_6_26Rc4, V::V2_6_26] {
        let d = q.build_domains_with(v, &with_numa(NumaConfig::On));
        assert_eq!(levels(&d, 0), [L::Mc, L::Cpu, L::Node], "{v}");
        let node = &d.of(0)[2];
        assert_eq!((node.span, node.groups.len(), node.groups[0].cpu_power), (CpuMask::first_n(4), 1, 2048));
        assert_eq!(node.flags.kernel_value(v), 1101);
    }
    for v in [V::V2_6_32Rc1, V::V2_6_32] {
        let d = q.build_domains_with(v, &with_numa(NumaConfig::On));
        assert_eq!(levels(&d, 0), [L::Mc, L::Cpu], "{v}");
    }
    // Auto = off for one node: no NODE level anywhere.
    assert_eq!(levels(&q.build_domains(V::V2_6_26), 0), [L::Mc, L::Cpu]);
}

/// 799e2205ec6 (patches.md §6) edits the initialisers: SD_MC_INIT and
/// SD_CPU_INIT lose SD_PREFER_LOCAL, x86's SD_NODE_INIT gains it. On a
/// one-node box built with CONFIG_NUMA (Stoakley, 2.6.32-rc1) the NODE level
/// spans the same 8 CPUs as CPU with one group. Unedited, its flags are
/// base | SERIALIZE; sd_parent_degenerate strips the group flags and, with
/// nr_node_ids == 1, SERIALIZE (17d857be sched.c:7849-7874), leaving
/// WAKE_AFFINE, which CPU has: NODE goes. Edited, PREFER_LOCAL is left too,
/// CPU no longer has it, and NODE stays, its one group the whole node
/// (init_numa_sched_groups_power: 4 L2 pairs x 2048).
#[test]
fn an_edited_initialiser_can_keep_a_level_that_the_kernel_would_drop() {
    let h = Host::preset("stoakley").unwrap();
    let items = parse_flag_overrides("MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,NODE:+PREFER_LOCAL").unwrap();
    let numa_on = with_numa(NumaConfig::On);
    let edited = BuildOptions { init_flags: InitFlagEdits::none().with_overrides(&items), ..numa_on };

    let plain = h.build_domains_with(V::V2_6_32Rc1, &numa_on);
    assert_eq!(levels(&plain, 0), [L::Mc, L::Cpu]);

    let d = h.build_domains_with(V::V2_6_32Rc1, &edited);
    for cpu in 0..8 {
        assert_eq!(levels(&d, cpu), [L::Mc, L::Cpu, L::Node], "CPU {cpu}");
        let node = &d.of(cpu)[2];
        assert_eq!((node.span, node.groups.len(), node.groups[0].cpu_power), (CpuMask::first_n(8), 1, 8192));
        let base = SdFlags::LOAD_BALANCE
            | SdFlags::BALANCE_NEWIDLE
            | SdFlags::BALANCE_EXEC
            | SdFlags::BALANCE_FORK
            | SdFlags::WAKE_AFFINE;
        assert_eq!(node.flags, base | SdFlags::SERIALIZE | SdFlags::PREFER_LOCAL);
        assert!(
            !d.of(cpu)[0].flags.contains(SdFlags::PREFER_LOCAL) && !d.of(cpu)[1].flags.contains(SdFlags::PREFER_LOCAL)
        );
    }
    // Without CONFIG_NUMA there is no NODE level to keep: the edit of
    // SD_NODE_INIT changes nothing, the other two do.
    let off = h.build_domains_with(V::V2_6_32Rc1, &BuildOptions { numa: NumaConfig::Off, ..edited });
    assert_eq!(levels(&off, 0), [L::Mc, L::Cpu]);
    assert_eq!(off.of(0)[1].flags, plain.of(0)[1].flags - SdFlags::PREFER_LOCAL);
}

/// An edited initialiser is read by group power, as the kernel's is. In
/// 2.6.25/26 a CPU-level group's cpu_power is SCHED_LOAD_SCALE when its
/// child (MC) shares package resources, else the sum of the child's groups
/// (init_sched_groups_power's "perf policy", bce7f793 sched.c:6780-6815):
/// on the Q6600 each L2 pair's group is 1024, or 2 x 1024 once SD_MC_INIT
/// loses SD_SHARE_PKG_RESOURCES. 2.6.32 sums the children either way.
#[test]
fn an_edited_initialiser_is_what_group_power_reads() {
    let q = Host::preset("q6600").unwrap();
    let edit = BuildOptions {
        init_flags: InitFlagEdits::none().with(L::Mc, SdFlags::empty(), SdFlags::SHARE_PKG_RESOURCES),
        ..BuildOptions::default()
    };
    let power = |v, o: &BuildOptions| {
        q.build_domains_with(v, o).of(0)[1].groups.iter().map(|g| g.cpu_power).collect::<Vec<_>>()
    };
    for v in [V::V2_6_25, V::V2_6_26Rc4, V::V2_6_26] {
        assert_eq!(power(v, &BuildOptions::default()), [1024, 1024], "{v}");
        assert_eq!(power(v, &edit), [2048, 2048], "{v}");
    }
    assert_eq!(power(V::V2_6_32, &BuildOptions::default()), [2048, 2048]);
    assert_eq!(power(V::V2_6_32, &edit), [2048, 2048]);
}

/// hosts-and-costs.md §1.5: with NUMA off (or node interleaving), Nehalem-EP
/// gets SIBLING, MC, then CPU over all 16 with the two sockets as groups.
/// On 2.6.32 each socket group sums 4 cores x 1178 = 4712.
#[test]
fn nehalem_with_numa_off() {
    let h = Host::preset("nehalem-ep").unwrap();
    let d = h.build_domains_with(V::V2_6_32, &with_numa(NumaConfig::Off));
    assert_eq!(levels(&d, 0), [L::Sibling, L::Mc, L::Cpu]);
    assert_eq!(
        layout(&d)[5],
        "SIBLING 5,13: 5@589 13@589 | MC 4-7,12-15: 5,13@1178 6,14@1178 7,15@1178 4,12@1178 | CPU 0-15: 4-7,12-15@4712 0-3,8-11@4712"
    );
    let d = h.build_domains_with(V::V2_6_26, &with_numa(NumaConfig::Off));
    assert_eq!(layout(&d)[0], "SIBLING 0,8: 0 8 | MC 0-3,8-11: 0,8 1,9 2,10 3,11 | CPU 0-15: 0-3,8-11 4-7,12-15");
}

/// 32 one-CPU nodes: 32 > SD_NODES_PER_DOMAIN(16) x 1, so every CPU gets an
/// ALLNODES domain over all CPUs, one group per node; max_interval =
/// 64 * num_online_cpus = 2048, balance_interval 64. Flags: LB|SERIALIZE
/// (1025) in 2.6.25 and 2.6.26-rc4, + NEWIDLE + WAKE_AFFINE (1059) in 2.6.26
/// (commit ea3f01f8afd), LB|NEWIDLE|SERIALIZE = 0x403 = 1027 in 2.6.32.
/// With equal distances, find_next_best_node takes the next node ids
/// cyclically, so node 20's span is nodes 20..31,0..3.
///
/// Removal: 2.6.25/26 remove MC (span 1) above SIBLING and then step to NODE
/// without comparing SIBLING with CPU, so the one-CPU CPU domain survives
/// (the bug f29c9b1ccb5 fixed in 2.6.28); 2.6.32 removes it.
#[test]
fn allnodes_on_32_single_cpu_nodes() {
    let h = spec("32n1c");
    for (v, allnodes) in
        [(V::V2_6_25, 1025), (V::V2_6_26Rc4, 1025), (V::V2_6_26, 1059), (V::V2_6_32Rc1, 1027), (V::V2_6_32, 1027)]
    {
        let d = h.build_domains(v);
        let chain = d.of(20);
        let expect_levels: &[L] = if v.is_2_6_32() { &[L::Node, L::AllNodes] } else { &[L::Cpu, L::Node, L::AllNodes] };
        assert_eq!(levels(&d, 20), expect_levels, "{v}");
        let top = chain.last().unwrap();
        assert_eq!(top.flags.kernel_value(v), allnodes, "{v}");
        assert_eq!((top.params.max_interval, top.params.balance_interval, top.groups.len()), (2048, 64, 32));
        assert_eq!(top.groups[0].cpus, CpuMask::single(20), "local group first");
        let node = &chain[chain.len() - 2];
        assert_eq!(format!("{}", node.span), "0-3,20-31");
        let order: Vec<String> = node.groups.iter().map(|g| format!("{}", g.cpus)).collect();
        assert_eq!(order.join(" "), "20 21 22 23 24 25 26 27 28 29 30 31 0 1 2 3");
        assert!(node.groups.iter().all(|g| g.cpu_power == 1024));
    }
}

/// Explicit 18 one-CPU nodes with distance 10 + |i - j|: node 9's NODE
/// span is itself plus the 15 nearest: distances 11..17 give nodes 2..8
/// and 10..16; at distance 18 nodes 1 and 17 tie and the scan upwards from
/// 9 meets 17 first. Groups: 9, then 10..17, then (wrapping) 2..8.
#[test]
fn node_span_takes_nearest_nodes() {
    let cpus = (0..18).map(|i| LogicalCpu { package: i, die: 0, core: 0, thread: 0, node: i }).collect();
    let dist = (0..18i32).map(|a| (0..18i32).map(|b| 10 + (a - b).unsigned_abs()).collect()).collect();
    let h = Host::new(HostDesc {
        name: "line".into(),
        vendor: Vendor::Intel,
        mhz: 2000,
        cpus,
        caches: vec![],
        node_distances: dist,
    })
    .unwrap();
    let d = h.build_domains(V::V2_6_32);
    let node = d.of(9).iter().find(|sd| sd.level == L::Node).unwrap();
    assert_eq!(format!("{}", node.span), "2-17");
    let order: Vec<String> = node.groups.iter().map(|g| format!("{}", g.cpus)).collect();
    assert_eq!(order.join(" "), "9 10 11 12 13 14 15 16 17 2 3 4 5 6 7 8");
    assert_eq!(format!("{}", d.of(0).iter().find(|sd| sd.level == L::Node).unwrap().span), "0-15");
}

/// AMD before 2.6.31 sets no cpu_llc_id: a 2-socket dual-core AMD gets only
/// the CPU level with 4 single-CPU groups. 2.6.32 uses the socket as LLC:
/// MC per socket, CPU with the two sockets as groups (2048 each).
#[test]
fn amd_llc_by_version() {
    let h = spec("2s2c,amd");
    assert_eq!(layout(&h.build_domains(V::V2_6_26))[0], "CPU 0-3: 0 1 2 3");
    assert_eq!(layout(&h.build_domains(V::V2_6_32))[2], "MC 2-3: 2 3 | CPU 0-3: 2-3@2048 0-1@2048");
    // The same machine from Intel: MC follows the (default per-die) L3.
    assert_eq!(layout(&spec("2s2c").build_domains(V::V2_6_26))[0], "MC 0-1: 0 1 | CPU 0-3: 0-1 2-3");
}

/// set_domain_attribute: levels above the request lose idle balancing, the
/// others gain it. 2.6.26: off = WAKE_IDLE|NEWIDLE, on = WAKE_IDLE_FAR (2048)
/// |NEWIDLE. 2.6.32: BALANCE_WAKE (0x10)|NEWIDLE both ways. 2.6.25 has no
/// relax_domain_level. 2.6.26 final ignores requests >= SD_LV_MAX (6);
/// 2.6.26-rc4 does not check.
#[test]
fn relax_domain_level() {
    let q = Host::preset("q6600").unwrap();
    let flags = |v: V, req: u8| {
        let d = q.build_domains_with(v, &BuildOptions { relax_domain_level: Some(req), ..BuildOptions::default() });
        d.of(0).iter().map(|sd| sd.flags.kernel_value(v)).collect::<Vec<_>>()
    };
    assert_eq!(flags(V::V2_6_26, 1), [559 - 2, 47 - 2]);
    assert_eq!(flags(V::V2_6_26, 2), [559 + 2048, 47 - 2]);
    assert_eq!(flags(V::V2_6_26, 3), [559 + 2048, 47 + 2048]);
    assert_eq!(flags(V::V2_6_26, 6), [559, 47]);
    assert_eq!(flags(V::V2_6_26Rc4, 6), [559 + 2048, 47 + 2048]);
    assert_eq!(flags(V::V2_6_25, 1), [559, 47]);
    assert_eq!(flags(V::V2_6_32, 2), [4655 + 0x10, 4143 - 2]);
}

/// set_cpu_sibling_map returns before the LLC loop when the boot CPU has
/// one core per package (x86_max_cores == 1): even with an L3 shared by
/// both packages, MC is just the SMT pair, and the CPU level's groups are
/// the cores. On 2.6.26 that MC (one group, SIBLING's span, flags within
/// SIBLING's once the group flags are ignored) is removed; on 2.6.32 it
/// stays, because MC carries SD_PREFER_SIBLING and SIBLING does not.
#[test]
fn one_core_per_package_ignores_llc() {
    let cpus = (0..4).map(|i| LogicalCpu { package: i / 2, die: 0, core: 0, thread: i % 2, node: 0 }).collect();
    let l3 = Cache { level: 3, kind: CacheKind::Unified, size_kb: 2048, instances: vec![CpuMask::first_n(4)] };
    let h = Host::new(HostDesc {
        name: "p4".into(),
        vendor: Vendor::Intel,
        mhz: 3000,
        cpus,
        caches: vec![l3],
        node_distances: vec![],
    })
    .unwrap();
    assert_eq!(layout(&h.build_domains(V::V2_6_26))[0], "SIBLING 0-1: 0 1 | CPU 0-3: 0-1 2-3");
    assert_eq!(
        layout(&h.build_domains(V::V2_6_32))[0],
        "SIBLING 0-1: 0@589 1@589 | MC 0-1: 0-1@1178 | CPU 0-3: 0-1@1178 2-3@1178"
    );
}

/// One core with two threads. 2.6.25/26: MC (SIBLING's span, one group) is
/// removed, then the loop steps past the CPU level (one group, same span)
/// without checking it against SIBLING, so it survives. 2.6.32: MC stays
/// (its SD_PREFER_SIBLING is not in SIBLING's flags), and CPU, whose flags
/// without the group flags (WAKE_AFFINE, PREFER_SIBLING) are all in MC's,
/// is removed.
#[test]
fn removal_loop_differs_between_26_and_32() {
    let h = spec("1s1c2t");
    assert_eq!(
        layout(&h.build_domains(V::V2_6_26)),
        ["SIBLING 0-1: 0 1 | CPU 0-1: 0-1", "SIBLING 0-1: 1 0 | CPU 0-1: 0-1"]
    );
    assert_eq!(
        layout(&h.build_domains(V::V2_6_32)),
        ["SIBLING 0-1: 0@589 1@589 | MC 0-1: 0-1@1178", "SIBLING 0-1: 1@589 0@589 | MC 0-1: 0-1@1178"]
    );
}

/// A one-CPU host: 2.6.32 attaches no domain ("attaching NULL"); 2.6.26's
/// loop leaves the one-CPU CPU level (the first case in f29c9b1ccb5's log).
#[test]
fn single_cpu_host() {
    let h = spec("1c");
    let d = h.build_domains(V::V2_6_32);
    assert!(d.of(0).is_empty());
    assert_eq!(render_kernel_debug(&d), "CPU0 attaching NULL sched-domain.\n");
    assert_eq!(layout(&h.build_domains(V::V2_6_26)), ["CPU 0: 0"]);
}

/// 2.6.32 SMT leaf power with 4 threads: 1024 * 1178 / 4 >> 10 = 294; a
/// core sums to 1176.
#[test]
fn four_way_smt_power() {
    let d = spec("1s2c4t").build_domains(V::V2_6_32);
    assert_eq!(layout(&d)[0], "SIBLING 0,2,4,6: 0@294 2@294 4@294 6@294 | MC 0-7: 0,2,4,6@1176 1,3,5,7@1176");
}

/// An LLC wider than a node (sub-NUMA clustering): MC is clipped to the node
/// so that it nests inside CPU.
#[test]
fn llc_wider_than_node_is_clipped() {
    let toml = r#"
        spec = "1s4c"
        [[cache]]
        level = 3
        size_kb = 8192
        shared = ["0-3"]
        [numa]
        distances = [[10, 11], [11, 10]]
    "#;
    // The spec puts everything on node 0; move CPUs 2-3 to node 1 by hand.
    let mut desc = Host::from_toml(toml).unwrap().desc().clone();
    desc.cpus[2].node = 1;
    desc.cpus[3].node = 1;
    let h = Host::new(desc).unwrap();
    assert_eq!(layout(&h.build_domains(V::V2_6_32))[3], "MC 2-3: 3 2 | NODE 0-3: 2-3@2048 0-1@2048");
}

/// `__build_sched_domains` adds ALLNODES only when the machine has *more*
/// than SD_NODES_PER_DOMAIN (16) times this node's CPUs (2.6.26 sched.c
/// 6978-6979: `cpus_weight(*cpu_map) > SD_NODES_PER_DOMAIN*cpus_weight(*nodemask)`).
/// 16 one-CPU nodes: 16 > 16 is false, so the top level is NODE; 17: ALLNODES.
#[test]
fn allnodes_needs_more_than_sixteen_nodes_worth_of_cpus() {
    for v in V::ALL {
        let top = |s: &str| *levels(&spec(s).build_domains(v), 0).last().unwrap();
        assert_eq!(top("16n1c"), L::Node, "{v}");
        assert_eq!(top("17n1c"), L::AllNodes, "{v}");
    }
}

mod degenerate {
    use cfs_topology::builder::{initialiser, sd_degenerate, sd_parent_degenerate};
    use cfs_topology::{CpuMask, DomainLevel as L, KernelVersion as V, SchedDomain, SchedGroup, SdFlags as F};

    /// A domain over CPUs 0-1 with the given flags and `groups` groups (one
    /// of both CPUs, or one per CPU).
    fn sd(flags: F, groups: usize) -> SchedDomain {
        let cpus: Vec<CpuMask> =
            if groups == 1 { vec![CpuMask::first_n(2)] } else { vec![CpuMask::single(0), CpuMask::single(1)] };
        SchedDomain {
            level: L::Cpu,
            span: CpuMask::first_n(2),
            groups: cpus.into_iter().map(|cpus| SchedGroup { cpus, cpu_power: 1024 }).collect(),
            flags,
            params: initialiser(L::Cpu, V::V2_6_26, 2).1,
        }
    }

    /// sd_degenerate (2.6.26 sched.c:6302-6325): balancing flags count only
    /// with two or more groups; the wakeup flags (WAKE_IDLE, WAKE_AFFINE,
    /// WAKE_BALANCE; 2.6.32 WAKE_AFFINE alone) keep even a one-group domain.
    #[test]
    fn a_one_group_domain_lives_only_by_its_wakeup_flags() {
        let v = V::V2_6_26;
        assert!(sd_degenerate(v, &sd(F::LOAD_BALANCE | F::BALANCE_NEWIDLE, 1)));
        assert!(!sd_degenerate(v, &sd(F::LOAD_BALANCE | F::BALANCE_NEWIDLE, 2)));
        // Two groups but no flag that uses them, and no wakeup flag.
        assert!(sd_degenerate(v, &sd(F::SERIALIZE, 2)));
        for wake in [F::WAKE_IDLE, F::WAKE_AFFINE, F::WAKE_BALANCE] {
            assert!(!sd_degenerate(v, &sd(F::LOAD_BALANCE | wake, 1)), "{wake:?}");
        }
        // 2.6.32 (sched.c:7855-7876): only WAKE_AFFINE counts.
        assert!(sd_degenerate(V::V2_6_32, &sd(F::LOAD_BALANCE | F::WAKE_IDLE, 1)));
        assert!(!sd_degenerate(V::V2_6_32, &sd(F::LOAD_BALANCE | F::WAKE_AFFINE, 1)));
    }

    /// sd_parent_degenerate (2.6.26 sched.c:6328-6355): "WAKE_BALANCE is a
    /// subset of WAKE_AFFINE" — a parent over the same span whose only extra
    /// flag is WAKE_BALANCE adds nothing to a WAKE_AFFINE child, but does
    /// to a child without it. 2.6.32 has no such exemption.
    #[test]
    fn wake_balance_is_covered_by_a_wake_affine_child() {
        let base = F::LOAD_BALANCE | F::BALANCE_NEWIDLE;
        let parent = sd(base | F::WAKE_AFFINE | F::WAKE_BALANCE, 2);
        let affine_child = sd(base | F::WAKE_AFFINE, 2);
        let plain_child = sd(base, 2);
        assert!(sd_parent_degenerate(V::V2_6_26, &affine_child, &parent, 1));
        assert!(!sd_parent_degenerate(V::V2_6_26, &plain_child, &parent, 1));
        assert!(!sd_parent_degenerate(V::V2_6_32, &affine_child, &parent, 1));
    }
}

/// `SdFlags::from_kernel_value` reads a `flags` integer as
/// /proc/sys/kernel/sched_domain/cpuN/domainM/flags shows it. 2.6.26 MC:
/// LB 1 + NEWIDLE 2 + EXEC 4 + FORK 8 + WAKE_AFFINE 32 + SHARE_PKG 512 = 559;
/// 2.6.32 renumbered them (include/linux/sched.h): the same set plus
/// PREFER_SIBLING 0x1000 is 0x122f = 4655. A bit the kernel does not define
/// (2.6.26: 4096 and up) is refused.
#[test]
fn kernel_flag_values_decode_both_numberings() {
    use cfs_topology::SdFlags as F;
    let mc = F::LOAD_BALANCE | F::BALANCE_NEWIDLE | F::BALANCE_EXEC | F::BALANCE_FORK | F::WAKE_AFFINE;
    let mc26 = mc | F::SHARE_PKG_RESOURCES;
    assert_eq!(F::from_kernel_value(V::V2_6_26, 559), Some(mc26));
    assert_eq!(mc26.kernel_value(V::V2_6_26), 559);
    assert_eq!(F::from_kernel_value(V::V2_6_26, 1), Some(F::LOAD_BALANCE));
    assert_eq!(F::from_kernel_value(V::V2_6_26, 0), Some(F::empty()));
    assert_eq!(F::from_kernel_value(V::V2_6_26, 559 | 4096), None);
    let mc32 = mc26 | F::PREFER_SIBLING;
    assert_eq!(F::from_kernel_value(V::V2_6_32, 0x122f), Some(mc32));
    assert_eq!(mc32.kernel_value(V::V2_6_32), 0x122f);
}

/// The kernel links one `sched_group` list per level and span, and every
/// CPU of the span enters it at its own group (`sd->groups`). The builder
/// shares the list the same way: on a flat 1,024-CPU host the CPU level's
/// 1,024 groups exist once, not once per CPU. CPU 700 enters at its own
/// group, and the list goes round from there: 700, 701, ..., 1023, 0, ...
/// The Q6600's two MC domains (dies {0,1} and {2,3}) have different spans,
/// so they do not share; CPUs 0 and 1 do, entering at groups 0 and 1.
#[test]
fn cpus_of_a_span_share_one_group_list() {
    let flat = spec("1024s1c1t");
    for v in [V::V2_6_26, V::V2_6_32] {
        let d = flat.build_domains(v);
        let (a, b) = (&d.of(0)[0], &d.of(700)[0]);
        assert_eq!((a.level, a.groups.len()), (L::Cpu, 1024), "{v}");
        assert!(a.groups.shares_list_with(&b.groups), "{v}");
        let from_700: Vec<usize> = b.groups.iter().map(|g| g.cpus.first().unwrap()).take(326).collect();
        let expect: Vec<usize> = (700..1024).chain(0..2).collect();
        assert_eq!(from_700, expect, "{v}");
        assert_eq!(b.groups[324].cpus, CpuMask::single(0), "{v}: index counts from the entry");
        assert_ne!(a.groups, b.groups, "{v}: same list, different entries");
    }
    let d = Host::preset("q6600").unwrap().build_domains(V::V2_6_26);
    let mc = |cpu: usize| &d.of(cpu)[0];
    assert!(mc(0).groups.shares_list_with(&mc(1).groups));
    assert!(!mc(0).groups.shares_list_with(&mc(2).groups));
    assert_eq!(mc(1).groups.first().map(|g| g.cpus), Some(CpuMask::single(1)));
    // The CPU level spans all four: one list, two groups (the dies), cpu_power
    // 1024 each (the MC child shares package resources, 2.6.26 perf policy).
    let top = |cpu: usize| &d.of(cpu)[1];
    assert!(top(0).groups.shares_list_with(&top(3).groups));
    assert_eq!(
        top(3).groups.iter().map(|g| (g.cpus.to_string(), g.cpu_power)).collect::<Vec<_>>(),
        [("2-3".to_string(), 1024), ("0-1".to_string(), 1024)]
    );
}

/// `override_flags` sets after clearing: setting a flag a domain already
/// has leaves it set (`(flags - clear) | set`), and clearing and setting
/// one flag at once sets it. The Q6600 under 2.6.26 has an MC domain on
/// each of its 4 CPUs, each with WAKE_AFFINE.
#[test]
fn overriding_a_flag_already_set_keeps_it() {
    use cfs_topology::SdFlags as F;
    let mut d = Host::preset("q6600").unwrap().build_domains(V::V2_6_26);
    assert_eq!(d.override_flags(L::Mc, F::WAKE_AFFINE, F::empty()), 4);
    assert!((0..4).all(|c| d.of(c)[0].flags.contains(F::WAKE_AFFINE)));
    assert_eq!(d.override_flags(L::Mc, F::BALANCE_FORK, F::BALANCE_FORK), 4);
    assert!((0..4).all(|c| d.of(c)[0].flags.contains(F::BALANCE_FORK)));
}

/// A Q6600 with CPU 3 down (2.6.26, `update_sched_domains` rebuilding over
/// `cpu_online_map` = {0,1,2}). `__build_sched_domains` clips every span to
/// the map: CPUs 0 and 1 keep MC {0,1} and get CPU {0,1,2} with the die
/// groups {0,1} and {2}; CPU 2's MC spans itself alone, so
/// `cpu_attach_domain` removes it (`sd_degenerate`: one CPU) and CPU 2 has
/// only the CPU level, its own group first. CPU 3 is attached to the NULL
/// domain. 2.6.26's perf-policy powers are 1024 a group (the MC child
/// shares the package); 2.6.32 sums the child's groups: 2 x 1024 for
/// {0,1} and 1024 for {2}.
#[test]
fn a_cpu_down_leaves_the_domains_of_the_others_clipped() {
    let q = Host::preset("q6600").unwrap();
    let opts = BuildOptions { online: Some(CpuMask::first_n(3)), ..BuildOptions::default() };
    let d = q.build_domains_with(V::V2_6_26, &opts);
    assert_eq!(layout(&d), ["MC 0-1: 0 1 | CPU 0-2: 0-1 2", "MC 0-1: 1 0 | CPU 0-2: 0-1 2", "CPU 0-2: 2 0-1", ""]);
    assert!(d.of(3).is_empty());
    let power = |d: &cfs_topology::SchedDomains, cpu: usize| -> Vec<u32> {
        d.of(cpu).last().map(|sd| sd.groups.iter().map(|g| g.cpu_power).collect()).unwrap_or_default()
    };
    assert_eq!(power(&d, 0), [1024, 1024]);
    let d = q.build_domains_with(V::V2_6_32, &opts);
    assert_eq!(power(&d, 0), [2048, 1024]);
    assert_eq!(power(&d, 2), [1024, 2048]);
    // All CPUs up is the boot build.
    let all = BuildOptions { online: Some(CpuMask::first_n(4)), ..BuildOptions::default() };
    assert_eq!(layout(&q.build_domains_with(V::V2_6_26, &all)), layout(&q.build_domains(V::V2_6_26)));
}

/// `isolcpus=0` on a Q6600 (2.6.26): `arch_init_sched_domains` builds over
/// the online CPUs less the isolated ones, {1,2,3}. CPU 0 has no domain, so
/// nothing balances to or from it; CPU 1's MC would span itself alone and
/// goes, leaving CPU {1,2,3} with groups {1} and {2,3}; CPUs 2 and 3 keep
/// their MC.
#[test]
fn isolcpus_leaves_a_cpu_out_of_every_domain() {
    let q = Host::preset("q6600").unwrap();
    let opts = BuildOptions { isolcpus: CpuMask::single(0), ..BuildOptions::default() };
    assert_eq!(opts.domain_cpus(4), CpuMask::from_cpus([1, 2, 3]));
    let d = q.build_domains_with(V::V2_6_26, &opts);
    assert_eq!(layout(&d), ["", "CPU 1-3: 1 2-3", "MC 2-3: 2 3 | CPU 1-3: 2-3 1", "MC 2-3: 3 2 | CPU 1-3: 2-3 1"]);
}

/// Nehalem-EP (two nodes, NUMA on) with socket 1 down (CPUs 4-7 and
/// 12-15): `find_next_best_node` skips node 1, which has no CPU online
/// (`nr_cpus_node` = 0), so no domain of CPU 0 reaches past socket 0, and
/// the socket's CPUs build the same chain below NODE as with both up.
#[test]
fn a_node_with_every_cpu_down_leaves_no_span_across_nodes() {
    let h = Host::preset("nehalem-ep").unwrap();
    let socket0 = CpuMask::from_cpus([0, 1, 2, 3, 8, 9, 10, 11]);
    let opts = BuildOptions { online: Some(socket0), ..BuildOptions::default() };
    for v in V::ALL {
        let d = h.build_domains_with(v, &opts);
        let full = h.build_domains(v);
        for cpu in socket0.iter() {
            assert!(d.of(cpu).iter().all(|sd| sd.span.is_subset_of(&socket0)), "{v} CPU{cpu}");
            let below_node = |d: &cfs_topology::SchedDomains| -> Vec<String> {
                d.of(cpu)
                    .iter()
                    .filter(|sd| sd.level < L::Node)
                    .map(|sd| format!("{} {:?}", sd.level, sd.span))
                    .collect()
            };
            assert_eq!(below_node(&d), below_node(&full), "{v} CPU{cpu}");
        }
        for cpu in [4, 5, 6, 7, 12, 13, 14, 15] {
            assert!(d.of(cpu).is_empty());
        }
    }
}

/// Thread 2's clearing of SD_PREFER_LOCAL at MC and CPU builds the same
/// domains as an edit of the initialisers (a rebuilt kernel) as written into
/// built domains (the sched_domain sysctl, `--sd-flags`), on every preset
/// and profile and with CONFIG_NUMA either way: SD_PREFER_LOCAL takes no
/// part in group power, and taking it off both MC and CPU changes no
/// comparison sd_parent_degenerate makes between them. So it does not matter
/// which way the reporter cleared it. Adding it to NODE can keep a level
/// (`an_edited_initialiser_can_keep_a_level_that_the_kernel_would_drop`).
#[test]
fn taking_prefer_local_off_mc_and_cpu_builds_the_same_domains_either_way() {
    let items = parse_flag_overrides("MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL").unwrap();
    for name in cfs_topology::PRESET_NAMES {
        let h = Host::preset(name).unwrap();
        for v in [V::V2_6_25, V::V2_6_26Rc4, V::V2_6_26, V::V2_6_32Rc1, V::V2_6_32] {
            for numa in [NumaConfig::Auto, NumaConfig::On, NumaConfig::Off] {
                let plain = with_numa(numa);
                let mut written = h.build_domains_with(v, &plain);
                written.apply_overrides(&items);
                let edited = BuildOptions { init_flags: InitFlagEdits::none().with_overrides(&items), ..plain };
                assert_eq!(h.build_domains_with(v, &edited), written, "{name} {v} {numa:?}");
            }
        }
    }
}

/// sched_mc_power_savings = 1 (`PowerSavings`), worked by hand:
/// - cpu_coregroup_map becomes the package (bce7f793 smpboot.c:545-556), so
///   on Stoakley MC spans the socket's four cores (one group each) and the
///   CPU level's groups are the two sockets, not the four L2 pairs.
/// - BALANCE_FOR_PKG_POWER puts SD_POWERSAVINGS_BALANCE on SD_CPU_INIT only
///   (sched.h:717-723; MC gets it from the SMT knob). The CPU groups then
///   sum their MC groups (init_sched_groups_power's power policy,
///   sched.c:6780-6815): 4 x 1024 = 4096, against 1024 per L2 pair.
/// - On the Q6600 (one socket) MC spans all four cores and CPU has one
///   group of 4096, kept: once the group flags are masked it still has
///   POWERSAVINGS_BALANCE, which MC lacks (sd_parent_degenerate).
/// - The X2 (AMD, no LLC id before 2.6.31) gets an MC level it lacks
///   without the knob: cpu_core_map is the package.
/// - 2.6.32 swaps SD_PREFER_SIBLING for POWERSAVINGS_BALANCE on CPU with
///   either knob, and on MC only with the SMT one (sd_balance_for_mc_power /
///   _package_power, 22763c5c sched.h:862-876).
#[test]
fn power_savings_widen_mc_to_the_package_and_flag_the_levels() {
    use cfs_topology::PowerSavings;
    let mc1 = BuildOptions { power_savings: PowerSavings { mc: 1, smt: 0 }, ..BuildOptions::default() };
    let smt1 = BuildOptions { power_savings: PowerSavings { mc: 0, smt: 1 }, ..BuildOptions::default() };
    let stoakley = Host::preset("stoakley").unwrap();
    let d = stoakley.build_domains_with(V::V2_6_26, &BuildOptions::default());
    assert_eq!(layout(&d)[0], "MC 0-1: 0 1 | CPU 0-7: 0-1 2-3 4-5 6-7");
    let d = stoakley.build_domains_with(V::V2_6_26, &mc1);
    assert_eq!(layout(&d)[0], "MC 0-3: 0 1 2 3 | CPU 0-7: 0-3@4096 4-7@4096");
    let flags = |d: &cfs_topology::SchedDomains| {
        d.of(0).iter().map(|x| (x.level, x.flags.contains(SdFlags::POWERSAVINGS_BALANCE))).collect::<Vec<_>>()
    };
    assert_eq!(flags(&d), [(L::Mc, false), (L::Cpu, true)]);
    assert_eq!(flags(&stoakley.build_domains_with(V::V2_6_26, &smt1)), [(L::Mc, true), (L::Cpu, true)]);
    let q = Host::preset("q6600").unwrap();
    assert_eq!(layout(&q.build_domains_with(V::V2_6_25, &mc1))[2], "MC 0-3: 2 3 0 1 | CPU 0-3: 0-3@4096");
    let x2 = Host::preset("x2").unwrap();
    assert_eq!(levels(&x2.build_domains(V::V2_6_26), 0), [L::Cpu]);
    assert_eq!(levels(&x2.build_domains_with(V::V2_6_26, &mc1), 0), [L::Mc, L::Cpu]);
    let sib = |d: &cfs_topology::SchedDomains| {
        d.of(0).iter().map(|x| (x.level, x.flags.contains(SdFlags::PREFER_SIBLING))).collect::<Vec<_>>()
    };
    let d = stoakley.build_domains_with(V::V2_6_32, &mc1);
    assert_eq!(sib(&d), [(L::Mc, true), (L::Cpu, false)]);
    assert_eq!(flags(&d), [(L::Mc, false), (L::Cpu, true)]);
    assert_eq!(sib(&stoakley.build_domains(V::V2_6_32)), [(L::Mc, true), (L::Cpu, true)]);
    let d = stoakley.build_domains_with(V::V2_6_32, &smt1);
    assert_eq!((sib(&d), flags(&d)), (vec![(L::Mc, false), (L::Cpu, false)], vec![(L::Mc, true), (L::Cpu, true)]));
}

/// Which presets have the power-savings files (`PowerSavings::knob_exists`,
/// sched_create_sysfs_power_savings_entries): the SMT file needs SMT
/// siblings (smt_capable(): only Nehalem-EP's threads); the MC file a
/// multi-core package (mc_capable(): all five presets), and in 2.6.32 also
/// a first package smaller than the machine (22763c5c
/// arch/x86/include/asm/topology.h:200-201), which the one-socket Q6600
/// and X2 are not.
#[test]
fn the_power_savings_files_exist_where_the_kernel_makes_them() {
    use cfs_topology::PowerSavings;
    let files = |name: &str, v: V| {
        let h = Host::preset(name).unwrap();
        (PowerSavings::knob_exists(&h, v, false), PowerSavings::knob_exists(&h, v, true))
    };
    for v in [V::V2_6_25, V::V2_6_26Rc4, V::V2_6_26] {
        for name in ["q6600", "x2", "stoakley", "tigerton"] {
            assert_eq!(files(name, v), (true, false), "{name} {v}");
        }
        assert_eq!(files("nehalem-ep", v), (true, true), "{v}");
    }
    for v in [V::V2_6_32Rc1, V::V2_6_32] {
        for (name, mc) in [("q6600", false), ("x2", false), ("stoakley", true), ("tigerton", true)] {
            assert_eq!(files(name, v), (mc, false), "{name} {v}");
        }
        assert_eq!(files("nehalem-ep", v), (true, true), "{v}");
    }
    // One core per package: no MC file in any version.
    assert!(!PowerSavings::knob_exists(&spec("2s1c"), V::V2_6_26, false));
}
