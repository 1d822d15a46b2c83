//! `Host::from_sysfs` on fixture trees (tests/fixtures), on this machine's
//! /sys, and on broken copies of the fixtures.
#![cfg(feature = "std")]

use cfs_topology::{CacheKind, CpuMask, DomainLevel as L, Host, KernelVersion as V, TopologyError, Vendor};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A 2-socket Nehalem-EP whose BIOS interleaves the sockets: CPU number =
/// 8 * thread + 2 * core + socket, so node 0 is the even CPUs and CPU n's HT
/// sibling is n ^ 8. No die_id files (2.6-era sysfs), 4 cache indexes, 2 nodes with
/// SLIT 10/21.
#[test]
fn nehalem_ep_fixture() {
    let h = Host::from_sysfs(&fixture("nehalem-ep")).unwrap();
    assert_eq!((h.nr_cpus(), h.nr_nodes(), h.nr_packages(), h.nr_cores()), (16, 2, 2, 8));
    assert_eq!((h.vendor(), h.mhz()), (Vendor::Intel, 2934));
    assert_eq!(h.node_cpus(0).to_string(), "0,2,4,6,8,10,12,14");
    assert_eq!(h.node_distance(0, 1), 21);
    assert_eq!(h.thread_siblings(3), CpuMask::from_cpus([3, 11]));
    assert_eq!(h.cpu(11).thread, 1);
    let levels: Vec<(u8, usize)> = h.caches().iter().map(|c| (c.level, c.instances.len())).collect();
    assert_eq!(levels, [(1, 8), (1, 8), (2, 8), (3, 2)]);
    assert_eq!(h.llc_cpus(5).unwrap().to_string(), "1,3,5,7,9,11,13,15");

    // The same hierarchy as the preset, on the interleaved numbering.
    let d = h.build_domains(V::V2_6_32);
    let kinds: Vec<L> = d.of(0).iter().map(|sd| sd.level).collect();
    assert_eq!(kinds, [L::Sibling, L::Mc, L::Node]);
    assert_eq!(d.of(0)[1].span.to_string(), "0,2,4,6,8,10,12,14");
    let node = &d.of(1)[2];
    assert_eq!((node.groups[0].cpus.to_string().as_str(), node.groups[0].cpu_power), ("1,3,5,7,9,11,13,15", 4712));
}

/// A Q6600 whose BIOS lists the dies' cores alternately: CPUs 0 and 2 share
/// one L2, 1 and 3 the other (hosts-and-costs.md §1.2: "do not assume {0,1}
/// and {2,3}"). No node directory: one node.
#[test]
fn q6600_fixture() {
    let h = Host::from_sysfs(&fixture("q6600")).unwrap();
    assert_eq!((h.nr_cpus(), h.nr_nodes(), h.mhz()), (4, 1, 2400));
    let d = h.build_domains(V::V2_6_26);
    assert_eq!(d.of(0)[0].span, CpuMask::from_cpus([0, 2]));
    assert_eq!(d.of(3)[1].groups.iter().map(|g| g.cpus.to_string()).collect::<Vec<_>>(), ["1,3", "0,2"]);
}

/// Offline CPUs leave gaps in `online`; the host numbers the online ones
/// 0..n in order, maps every list the same way, and says so in its name.
/// In the Q6600 fixture the L2s are {0,2} and {1,3} (BIOS order).
#[test]
fn offline_cpus_are_closed_up() {
    let s = Scratch::new("q6600", "offline");
    let online = format!("{CPU}/online");
    // CPUs 0 and 2 online: one die, so one L2 over both, and one MC domain.
    s.write(&online, "0,2\n");
    let h = Host::from_sysfs(&s.0).unwrap();
    assert!(h.name().ends_with(" (online CPUs 0,2 as 0-1)"), "{}", h.name());
    assert_eq!(h.nr_cpus(), 2);
    let l2 = h.caches().iter().find(|c| c.level == 2).unwrap();
    assert_eq!(l2.instances.iter().map(|m| m.to_string()).collect::<Vec<_>>(), ["0-1"]);
    assert_eq!(h.build_domains(V::V2_6_26).of(0)[0].span, CpuMask::from_cpus([0, 1]));
    // CPUs 1 and 2 online: one on each die, an L2 each; the host's CPU 0 is
    // sysfs CPU 1 (core 2), its CPU 1 sysfs CPU 2 (core 1).
    s.write(&online, "1-2\n");
    let h = Host::from_sysfs(&s.0).unwrap();
    assert!(h.name().ends_with(" (online CPUs 1-2 as 0-1)"), "{}", h.name());
    let l2 = h.caches().iter().find(|c| c.level == 2).unwrap();
    assert_eq!(l2.instances.iter().map(|m| m.to_string()).collect::<Vec<_>>(), ["0", "1"]);
    assert_eq!((h.cpu(0).core, h.cpu(1).core), (2, 1));
    // Dense already: the name is the plain one.
    s.write(&online, "0-1\n");
    assert!(!Host::from_sysfs(&s.0).unwrap().name().contains("online CPUs"));
}

/// Whatever this machine is, reading it must not panic; when it parses, the
/// domains must build for every profile.
#[test]
fn real_sys_does_not_panic() {
    match Host::from_sysfs(Path::new("/sys")) {
        Ok(h) => {
            for v in V::ALL {
                let d = h.build_domains(v);
                assert_eq!(d.nr_cpus(), h.nr_cpus());
            }
        }
        Err(e) => eprintln!("this machine's /sys did not parse: {e}"),
    }
}

/// Copies a fixture to a fresh temporary directory for breaking.
struct Scratch(PathBuf);

impl Scratch {
    fn new(fixture_name: &str, tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cfs-topology-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&fixture(fixture_name), &dir);
        Scratch(dir)
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.0.join(rel), text).unwrap();
    }

    fn remove(&self, rel: &str) {
        let p = self.0.join(rel);
        if p.is_dir() { std::fs::remove_dir_all(p).unwrap() } else { std::fs::remove_file(p).unwrap() }
    }

    fn error(&self) -> String {
        match Host::from_sysfs(&self.0) {
            Ok(_) => panic!("expected an error"),
            Err(e @ TopologyError::Sysfs { .. }) => e.to_string(),
            Err(e) => e.to_string(),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest)
        } else {
            std::fs::copy(e.path(), dest).map(|_| ()).unwrap()
        }
    }
}

const CPU: &str = "devices/system/cpu";

/// Each case replaces one file of a single scratch copy of the Nehalem-EP
/// tree (`None` deletes it), checks the error names it, and restores it.
#[test]
fn broken_trees_name_the_file() {
    let s = Scratch::new("nehalem-ep", "broken");
    let cases: [(&str, Option<&str>, &str); 12] = [
        ("cpu2/topology/core_id", None, "cpu2/topology/core_id: cannot read"),
        ("cpu1/topology/physical_package_id", Some("one"), "physical_package_id: expected an integer, found \"one\""),
        ("cpu3/topology/thread_siblings_list", Some("3-1"), "thread_siblings_list: CPU range 3-1 runs backwards"),
        ("cpu3/topology/thread_siblings_list", Some("11"), "does not contain CPU 3 itself"),
        ("cpu3/topology/core_siblings_list", Some("0-2"), "core_siblings_list: does not contain CPU 3 itself"),
        ("online", Some("0-15,99"), "cpu99/topology/thread_siblings_list: cannot read"),
        ("cpu0/cache/index2/size", Some("big"), "index2/size: expected a size like 32K"),
        ("cpu2/cache/index3/shared_cpu_list", Some("0-3"), "overlaps"),
        ("../node/node1/distance", Some("21"), "node1/distance: has 1 distances for 2 nodes"),
        ("../node/node1/cpulist", Some("1,3,5"), "CPU 7 is in no node's cpulist"),
        // node0 holds the even CPUs, node1 the odd ones (smt-last numbering).
        ("../node/node1/cpulist", Some("1-15"), "node1/cpulist: lists CPU 2, which node0 lists too"),
        ("cpu0/cache/index2/size", Some("0K"), "index2/size: expected a size like 32K or 8M, above 0"),
    ];
    for (file, content, needle) in cases {
        let rel = format!("{CPU}/{file}");
        let original = std::fs::read_to_string(s.0.join(&rel)).unwrap();
        match content {
            Some(text) => s.write(&rel, &format!("{text}\n")),
            None => s.remove(&rel),
        }
        let msg = s.error();
        s.write(&rel, &original);
        assert!(msg.contains(needle), "{file}: {msg:?} should mention {needle:?}");
    }
    assert!(Host::from_sysfs(&s.0).is_ok(), "restored tree parses");
}

#[test]
fn sibling_ids_must_match_thread_siblings() {
    let s = Scratch::new("q6600", "core-ids");
    // CPU 1 claims core 0, making it CPU 0's SMT sibling by ids, while
    // thread_siblings_list says each CPU is alone.
    s.write(&format!("{CPU}/cpu1/topology/core_id"), "0\n");
    let msg = s.error();
    assert!(msg.contains("CPU 1 and CPU 0 are both package 0 die 0 core 0 thread 0"), "{msg}");
    s.write(&format!("{CPU}/cpu1/topology/core_id"), "2\n");
    s.write(&format!("{CPU}/cpu0/topology/thread_siblings_list"), "0,2\n");
    let msg = s.error();
    assert!(
        msg.contains("cpu0/topology/thread_siblings_list: lists 0,2, but package/die/core ids make CPUs 0 one core"),
        "{msg}"
    );
}

#[test]
fn empty_tree_is_an_error() {
    let dir = std::env::temp_dir().join(format!("cfs-topology-{}-empty", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let msg = Host::from_sysfs(&dir).unwrap_err().to_string();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(msg.contains("devices/system/cpu: cannot list"), "{msg}");
    // The directory there, but neither an `online` list nor a cpuN/topology
    // directory in it.
    let dir = std::env::temp_dir().join(format!("cfs-topology-{}-nocpus", std::process::id()));
    std::fs::create_dir_all(dir.join("devices/system/cpu/cpufreq")).unwrap();
    let msg = Host::from_sysfs(&dir).unwrap_err().to_string();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        msg.contains("devices/system/cpu: no CPUs found (no `online` list and no cpuN/topology directories)"),
        "{msg}"
    );
}

/// The L2 of a Q6600 tree as read back.
fn l2_kb(h: &Host) -> u32 {
    h.caches().iter().find(|c| c.level == 2).map(|c| c.size_kb).unwrap()
}

#[test]
fn cache_sizes_take_k_m_and_g_suffixes() {
    // sysfs writes "4096K"; other trees (and hand-made copies) use M or G.
    let s = Scratch::new("q6600", "sizes");
    for (text, kb) in [("4096K", 4096), ("4M", 4096), ("4m", 4096), ("1G", 1024 * 1024), ("512", 512)] {
        for cpu in 0..4 {
            s.write(&format!("{CPU}/cpu{cpu}/cache/index2/size"), &format!("{text}\n"));
        }
        assert_eq!(l2_kb(&Host::from_sysfs(&s.0).unwrap()), kb, "{text}");
    }
}

#[test]
fn a_cache_without_size_or_level_is_skipped() {
    // The kernel hides `size` and `level` when it does not know them (an
    // arm64 machine whose firmware gives no sizes): that cache is left out,
    // and the rest of the tree still makes a host. Without the L2's size on
    // every CPU the Q6600 tree has its two L1s only.
    let s = Scratch::new("q6600", "no-size");
    for cpu in 0..4 {
        s.remove(&format!("{CPU}/cpu{cpu}/cache/index2/size"));
    }
    let h = Host::from_sysfs(&s.0).unwrap();
    let levels: Vec<u8> = h.caches().iter().map(|c| c.level).collect();
    assert_eq!(levels, [1, 1]);
    // Without one CPU's L1d level, that CPU alone has no L1d.
    s.remove(&format!("{CPU}/cpu3/cache/index0/level"));
    let h = Host::from_sysfs(&s.0).unwrap();
    let l1d = h.caches().iter().find(|c| c.level == 1 && c.kind == CacheKind::Data).unwrap();
    assert_eq!(l1d.instances.iter().map(|m| m.to_string()).collect::<Vec<_>>(), ["0", "1", "2"]);
}

#[test]
fn without_an_online_list_the_cpu_directories_count() {
    // count_cpus falls back to the cpuN directories that have a topology/.
    let s = Scratch::new("q6600", "no-online");
    s.remove(&format!("{CPU}/online"));
    let h = Host::from_sysfs(&s.0).unwrap();
    assert_eq!(h.nr_cpus(), 4);
}

#[test]
fn cpufreq_gives_the_clock_and_a_zero_mhz_reading_is_ignored() {
    // cpuinfo_max_freq is in kHz: 2403000 -> 2403 MHz. Below 1 MHz (999 kHz
    // rounds down to 0) the reading is unusable and the default clock is kept.
    let s = Scratch::new("q6600", "mhz");
    std::fs::create_dir_all(s.0.join(format!("{CPU}/cpu0/cpufreq"))).unwrap();
    s.write(&format!("{CPU}/cpu0/cpufreq/cpuinfo_max_freq"), "2403000\n");
    assert_eq!(Host::from_sysfs(&s.0).unwrap().mhz(), 2403);
    s.write(&format!("{CPU}/cpu0/cpufreq/cpuinfo_max_freq"), "999\n");
    assert_eq!(Host::from_sysfs(&s.0).unwrap().mhz(), Host::from_sysfs(&fixture("q6600")).unwrap().mhz());
}

#[test]
fn more_node_directories_than_max_nodes_are_refused() {
    // 1025 empty nodeN directories: refused by count before any is read.
    let s = Scratch::new("q6600", "many-nodes");
    for n in 0..1025 {
        std::fs::create_dir_all(s.0.join(format!("devices/system/node/node{n}"))).unwrap();
    }
    let msg = s.error();
    assert!(msg.contains("1025 nodes; the limit is 1024"), "{msg}");
    // 1024 pass the count, and the first node's missing cpulist is reported.
    s.remove("devices/system/node/node1024");
    let msg = s.error();
    assert!(msg.contains("node0/cpulist"), "{msg}");
}
