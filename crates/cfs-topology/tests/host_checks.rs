//! `Host::new`'s validation at its limits, and the small lookups other
//! crates lean on (vendor and cache-kind names, a CPU's die).

use cfs_topology::{
    Cache, CacheKind, CpuMask, Host, HostDesc, LogicalCpu, MAX_CPUS, TopologyError, Vendor, error::MAX_NODES,
};

/// `n` one-thread cores in one package, all on node `node`.
fn flat(n: usize, node: u32) -> HostDesc {
    let cpus = (0..n as u32).map(|core| LogicalCpu { package: 0, die: 0, core, thread: 0, node }).collect();
    HostDesc { name: "flat".into(), vendor: Vendor::Intel, mhz: 2400, cpus, caches: vec![], node_distances: vec![] }
}

#[test]
fn cpu_count_runs_from_one_to_max_cpus() {
    assert_eq!(Host::new(flat(0, 0)).unwrap_err(), TopologyError::NoCpus { host: "flat".into() });
    assert_eq!(Host::new(flat(MAX_CPUS, 0)).unwrap().nr_cpus(), MAX_CPUS);
    assert_eq!(Host::new(flat(MAX_CPUS + 1, 0)).unwrap_err(), TopologyError::TooManyCpus(MAX_CPUS + 1));
}

#[test]
fn node_ids_stay_below_max_nodes() {
    // A CPU on node MAX_NODES - 1 is fine (the default distance table then has
    // MAX_NODES rows); MAX_NODES itself is refused, naming the CPU.
    let mut desc = flat(2, 0);
    desc.cpus[1].node = (MAX_NODES - 1) as u32;
    assert_eq!(Host::new(desc.clone()).unwrap().nr_nodes(), MAX_NODES);
    desc.cpus[1].node = MAX_NODES as u32;
    assert_eq!(Host::new(desc).unwrap_err(), TopologyError::NodeIdTooLarge { cpu: 1, node: MAX_NODES as u64 });
    // A distance table of MAX_NODES rows is the largest taken; one more row
    // names its last node id, MAX_NODES.
    let table = |n: usize| -> Vec<Vec<u32>> {
        (0..n).map(|a| (0..n).map(|b| if a == b { 10 } else { 20 }).collect()).collect()
    };
    let mut desc = flat(2, 0);
    desc.node_distances = table(MAX_NODES);
    assert_eq!(Host::new(desc).unwrap().nr_nodes(), MAX_NODES);
    let mut desc = flat(2, 0);
    desc.node_distances = table(MAX_NODES + 1);
    assert_eq!(Host::new(desc).unwrap_err(), TopologyError::NodeIdTooLarge { cpu: 0, node: MAX_NODES as u64 });
}

#[test]
fn without_a_distance_table_the_nodes_come_from_the_cpus() {
    // CPUs on nodes 0 and 2: three nodes (node 1 has no CPUs), Linux's
    // no-SLIT table of 10 local / 20 remote.
    let mut desc = flat(2, 0);
    desc.cpus[1].node = 2;
    let h = Host::new(desc).unwrap();
    assert_eq!(h.nr_nodes(), 3);
    assert_eq!((h.node_distance(0, 2), h.node_distance(2, 2)), (20, 10));
}

#[test]
fn cache_levels_run_from_one_to_nine() {
    let with_level = |level: u8| {
        let mut desc = flat(2, 0);
        desc.caches =
            vec![Cache { level, kind: CacheKind::Unified, size_kb: 4096, instances: vec![CpuMask::first_n(2)] }];
        Host::new(desc)
    };
    assert!(with_level(9).is_ok());
    for bad in [0, 10] {
        let err = with_level(bad).unwrap_err();
        assert_eq!(err.to_string(), format!("L{bad} unified cache: level must be 1..=9"));
    }
}

#[test]
fn vendor_and_cache_kind_names() {
    for (s, v) in [
        ("intel", Some(Vendor::Intel)),
        (" GenuineIntel ", Some(Vendor::Intel)),
        ("AMD", Some(Vendor::Amd)),
        ("AuthenticAMD", Some(Vendor::Amd)),
        ("arm", None),
    ] {
        assert_eq!(Vendor::by_name(s), v, "{s:?}");
    }
    // Only data-holding caches (data, unified) count as a last-level cache.
    assert!(CacheKind::Data.holds_data() && CacheKind::Unified.holds_data());
    assert!(!CacheKind::Instruction.holds_data());
}

#[test]
fn a_die_is_numbered_within_its_package() {
    // Two packages of two single-core dies: die ids 0 and 1 repeat in each
    // package, so CPU 2's die is {2} alone, not every CPU with die id 0.
    let h = Host::from_spec("2s2d1c").unwrap();
    assert_eq!(h.nr_cpus(), 4);
    for cpu in 0..4 {
        assert_eq!(h.die_cpus(cpu), CpuMask::single(cpu), "CPU {cpu}");
    }
    let q = Host::preset("q6600").unwrap();
    assert_eq!(q.die_cpus(3), CpuMask::from_cpus([2, 3]));
}
