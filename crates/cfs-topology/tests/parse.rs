//! Spec strings, TOML host files, presets and `parse_any`: what they build
//! and the errors they give.
#![cfg(feature = "std")]

use cfs_topology::{
    CacheKind, CpuMask, Host, KernelVersion, Numbering, PRESET_NAMES, PRESETS, TopologyError, Vendor, parse_any,
    parse_spec, spec::spec_string,
};

fn err_text(r: Result<Host, TopologyError>) -> String {
    match r {
        Ok(h) => panic!("expected an error, got host {}", h.name()),
        Err(e) => e.to_string(),
    }
}

fn l2(h: &Host) -> Vec<String> {
    let c = h.caches().iter().find(|c| c.level == 2).expect("an L2");
    c.instances.iter().map(|m| m.to_string()).collect()
}

#[test]
fn spec_shapes() {
    let h = Host::from_spec("2s4c2t").unwrap();
    assert_eq!((h.nr_cpus(), h.nr_packages(), h.nr_cores(), h.nr_nodes()), (16, 2, 8, 1));
    // SMT-last numbering: siblings n and n + 8; package 0 = 0-3,8-11.
    assert_eq!(h.thread_siblings(3), CpuMask::from_cpus([3, 11]));
    assert_eq!(h.package_cpus(0).to_string(), "0-3,8-11");
    assert_eq!(h.cpu(12).package, 1);
    assert_eq!(h.cpu(12).thread, 1);

    let q = Host::from_spec("1s2d2c").unwrap();
    assert_eq!((q.nr_cpus(), q.cpu(2).die, q.cpu(2).core), (4, 1, 2));
    // Default caches: L2 per core, L3 per die.
    assert_eq!(l2(&q), ["0", "1", "2", "3"]);
    assert_eq!(q.llc_cpus(0), Some(CpuMask::first_n(2)));

    let n = Host::from_spec("2n2s4c2t").unwrap();
    assert_eq!((n.nr_cpus(), n.nr_nodes(), n.nr_packages()), (32, 2, 4));
    assert_eq!(n.node_cpus(1).to_string(), "8-15,24-31");
    assert_eq!(n.node_distance(0, 1), 20);

    // Defaults: every unit 1.
    assert_eq!(Host::from_spec("4c").unwrap().nr_cpus(), 4);
    assert_eq!(Host::from_spec(" 2S 4C ".replace(' ', "").as_str()).unwrap().nr_cpus(), 8);
}

#[test]
fn spec_options() {
    let h = Host::from_spec("1s2d2c, l2=die:4M, mhz=2400, amd").unwrap();
    assert_eq!((h.vendor(), h.mhz()), (Vendor::Amd, 2400));
    assert_eq!(l2(&h), ["0-1", "2-3"]);
    assert!(h.caches().iter().all(|c| c.level < 3), "a shared L2 drops the default L3");
    assert_eq!(h.caches().iter().find(|c| c.level == 2).unwrap().size_kb, 4096);

    let h = Host::from_spec("1s2d2c,l2=die,l3=socket:16M").unwrap();
    assert_eq!(h.llc_cpus(0), Some(CpuMask::first_n(4)));

    let h = Host::from_spec("1s2c2t,order=linear").unwrap();
    assert_eq!(h.thread_siblings(0), CpuMask::from_cpus([0, 1]));

    let h = Host::from_spec("2n1s2c,dist=31,l3=none").unwrap();
    assert_eq!(h.node_distance(1, 0), 31);
    assert!(h.llc_cpus(0).is_some_and(|m| m == CpuMask::single(0)), "LLC = private L2");

    let shape = parse_spec("2n2s2d3c2t,amd,mhz=3100,order=linear,l2=die:6M,l3=none,dist=40").unwrap();
    assert_eq!(shape.numbering, Numbering::Linear);
    let again = parse_spec(&spec_string(&shape)).unwrap();
    assert_eq!(again.to_host().unwrap().desc(), shape.to_host().unwrap().desc());
}

#[test]
fn spec_limits_and_defaults() {
    // Exactly the CPU limit in one count is fine.
    assert_eq!(Host::from_spec("1024c").unwrap().nr_cpus(), 1024);
    // Options may come in any order and any case.
    assert_eq!(Host::from_spec("2c,MHZ=3000,amd").unwrap().vendor(), Vendor::Amd);
    // A cache scope without a size: 256 KB for a core-private cache, 2 MB per
    // core sharing it otherwise (2 cores per die: 4 MB; 2 dies of 2: 8 MB).
    let kb = |spec: &str, level: u8| {
        Host::from_spec(spec).unwrap().caches().iter().find(|c| c.level == level).map(|c| c.size_kb)
    };
    assert_eq!(kb("1s2d2c,l2=core", 2), Some(256));
    assert_eq!(kb("1s2d2c,l2=die", 2), Some(4096));
    assert_eq!(kb("1s2d2c,l3=socket", 3), Some(8192));
    assert_eq!(kb("1s2d2c,l3=none", 3), None);
    assert_eq!(kb("1s2d2c,l2=none", 2), None);
    // The spec parser itself refuses a product past the CPU limit.
    assert_eq!(parse_spec("1024s1024d1024c").unwrap_err(), TopologyError::TooManyCpus(1 << 30));
}

#[test]
fn spec_errors_name_the_problem() {
    let cases = [
        ("", "empty host spec"),
        ("2x", "unknown unit"),
        ("s4c", "expected a count"),
        ("4c2s", "order n, s, d, c, t"),
        ("2s2s", "order n, s, d, c, t"),
        ("0c", "at least 1"),
        ("4", "followed by a unit"),
        ("99999999999c", "count too large"),
        ("32s32c2t", "2048 logical CPUs; the limit is 1024"),
        ("2c,foo", "unknown host spec option \"foo\""),
        ("2c,mhz=fast", "bad value \"fast\" for host spec option `mhz`"),
        ("2c,l2=chip", "option `l2`: expected core, die or socket"),
        ("2c,order=random", "smt-last or linear"),
        ("2n2c,dist=5", "remote distance 11..=255"),
        ("2c,", "unknown host spec option \"\""),
        // One count past the CPU limit is refused where it is read...
        ("1025c", "count too large (the CPU limit is 1024)"),
        // ...and a product past it (2^30, 2^50 CPUs) before any CPU is built.
        ("1024s1024d1024c", "1073741824 logical CPUs; the limit is 1024"),
        ("1024n1024s1024d1024c1024t", "1125899906842624 logical CPUs; the limit is 1024"),
        ("2c,l2=die:0K", "option `l2`: expected core, die or socket"),
        // An option given twice is refused rather than the last one winning,
        // whichever spelling (intel and amd both set the vendor).
        ("2c,mhz=1,mhz=2", "option `mhz` is given twice"),
        ("2c,intel,AMD", "option `vendor` is given twice"),
        ("2c,l3=none,l3=die", "option `l3` is given twice"),
    ];
    for (spec, needle) in cases {
        let msg = err_text(Host::from_spec(spec));
        assert!(msg.contains(needle), "{spec:?}: {msg:?} should mention {needle:?}");
    }
}

#[test]
fn presets_and_listing() {
    assert_eq!(PRESET_NAMES.len(), PRESETS.len());
    for (name, info) in PRESET_NAMES.iter().zip(PRESETS) {
        assert_eq!(*name, info.name);
        let h = Host::preset(name).unwrap();
        assert!(!info.description.is_empty());
        assert!(h.name().contains(name));
    }
    let x2 = Host::preset("X2").unwrap();
    assert_eq!((x2.vendor(), x2.mhz(), x2.nr_cpus()), (Vendor::Amd, 2400, 2));
    assert_eq!(l2(&x2), ["0", "1"]);
    let n = Host::preset("nehalem-ep").unwrap();
    assert_eq!((n.mhz(), n.nr_nodes(), n.node_distance(0, 1)), (2930, 2, 21));
    assert_eq!(n.llc_cpus(9).unwrap().to_string(), "0-3,8-11");
    assert_eq!(Host::preset("tigerton").unwrap().nr_cpus(), 16);
    assert_eq!(Host::preset("stoakley").unwrap().mhz(), 3000);
    let msg = err_text(Host::preset("pentium"));
    assert!(msg.contains("unknown host preset \"pentium\"") && msg.contains("q6600"), "{msg}");
}

const Q6600_BIOS: &str = r#"
name = "q6600, BIOS order"
vendor = "intel"
mhz = 2400

[[cpu]]
package = 0
core = 0
[[cpu]]
package = 0
core = 2
die = 1
[[cpu]]
package = 0
core = 1
[[cpu]]
package = 0
core = 3
die = 1

[[cache]]
level = 2
size_kb = 4096
shared = ["0,2", "1,3"]

[[cache]]
level = 1
type = "data"
size_kb = 32
shared = ["0", "1", "2", "3"]
"#;

#[test]
fn toml_explicit_cpus() {
    let h = Host::from_toml(Q6600_BIOS).unwrap();
    assert_eq!((h.name(), h.nr_cpus()), ("q6600, BIOS order", 4));
    assert_eq!(h.caches()[0].kind, CacheKind::Data, "caches sorted by level");
    let d = h.build_domains(KernelVersion::V2_6_26);
    assert_eq!(d.of(0)[0].span, CpuMask::from_cpus([0, 2]));
    assert_eq!(d.of(1)[1].groups[0].cpus, CpuMask::from_cpus([1, 3]));
}

#[test]
fn toml_ids_and_spec() {
    let with_ids = r#"
        [[cpu]]
        id = 1
        package = 0
        core = 1
        [[cpu]]
        id = 0
        package = 0
        core = 0
    "#;
    let h = Host::from_toml(with_ids).unwrap();
    assert_eq!((h.cpu(0).core, h.cpu(1).core), (0, 1));

    let spec = r#"
        name = "big box"
        spec = "2n1s4c2t"
        mhz = 2930
        [numa]
        distances = [[10, 21], [21, 10]]
    "#;
    let h = Host::from_toml(spec).unwrap();
    assert_eq!((h.name(), h.mhz(), h.node_distance(0, 1), h.nr_cpus()), ("big box", 2930, 21, 16));
}

#[test]
fn toml_errors_name_the_problem() {
    let cases = [
        ("nmae = \"x\"\nspec = \"2c\"", "unknown field `nmae`"),
        ("spec = \"2c\"\n[numa]\ndistance = [[10]]", "unknown field `distance`"),
        ("spec = \"2c\"\n[[cache]]\nlevel = 2\nsize_kb = 1\nshared = [\"0\"]\nsharing = 1", "unknown field `sharing`"),
        ("[[cpu]]\ncore = 0", "missing field `package`"),
        ("vendor = \"via\"\nspec = \"2c\"", "unknown variant `via`"),
        ("name = \"x\"", "needs a `spec` string or [[cpu]] tables"),
        ("spec = \"2c\"\n[[cpu]]\npackage = 0\ncore = 0", "either `spec` or [[cpu]] tables"),
        ("spec = \"2q\"", "unknown unit"),
        ("[[cpu]]\nid = 3\npackage = 0\ncore = 0", "id 3 is out of range"),
        (
            "[[cpu]]\nid = 1\npackage = 0\ncore = 0\n[[cpu]]\nid = 1\npackage = 0\ncore = 1",
            "[[cpu]] id 1 appears twice",
        ),
        ("[[cpu]]\nid = 0\npackage = 0\ncore = 0\n[[cpu]]\npackage = 0\ncore = 1", "every [[cpu]] has an `id` or none"),
        // Mixed ids are refused at the first entry, before its id is used.
        ("[[cpu]]\nid = 5\npackage = 0\ncore = 0\n[[cpu]]\npackage = 0\ncore = 1", "every [[cpu]] has an `id` or none"),
        (
            "[[cpu]]\npackage = 0\ncore = 0\n[[cpu]]\npackage = 0\ncore = 0",
            "CPU 1 and CPU 0 are both package 0 die 0 core 0 thread 0",
        ),
        (
            "[[cpu]]\npackage = 0\ncore = 0\nnode = 1\n[numa]\ndistances = [[10]]",
            "CPU 0 is on node 1, but the distance table has only 1 nodes",
        ),
        (
            "[[cpu]]\npackage = 0\ncore = 0\nthread = 0\n[[cpu]]\npackage = 0\ncore = 0\nthread = 1\nnode = 1",
            "threads of one core but on different NUMA nodes",
        ),
        ("spec = \"2n2c\"\n[numa]\ndistances = [[10, 20], [20]]", "row 1 has 1 entries; expected 2"),
        ("spec = \"2n2c\"\n[numa]\ndistances = [[10, 20], [20, 12]]", "node 1 to itself is 12"),
        ("spec = \"2n2c\"\n[numa]\ndistances = [[10, 5], [20, 10]]", "node 0 to node 1 is 5"),
        (
            "spec = \"2c\"\n[[cache]]\nlevel = 2\nsize_kb = 1\nshared = [\"0-1\", \"1\"]",
            "L2 unified cache: CPU 1 is in two instances",
        ),
        (
            "spec = \"2c\"\n[[cache]]\nlevel = 2\nsize_kb = 1\nshared = [\"0-2\"]",
            "names CPU 2, but the host has 2 CPUs",
        ),
        ("spec = \"2c\"\n[[cache]]\nlevel = 2\nsize_kb = 1\nshared = [\"x\"]", "bad `shared` list \"x\""),
        (
            "spec = \"1c2t\"\n[[cache]]\nlevel = 1\ntype = \"data\"\nsize_kb = 1\nshared = [\"0\", \"1\"]",
            "splits the core of CPUs 0-1",
        ),
        ("spec = \"2c\"\nmhz = 0", "clock 0 MHz is outside 1..=100000 MHz"),
        // A clock the cost model cannot scale by (2400 / MHz) sensibly.
        ("spec = \"2c\"\nmhz = 4000000000", "clock 4000000000 MHz is outside 1..=100000 MHz"),
        (
            "spec = \"2c\"\n[[cache]]\nlevel = 2\nsize_kb = 0\nshared = [\"0-1\"]",
            "L2 unified cache: size must be above 0 KB",
        ),
        ("spec = \"2c\"\n[[cache]]\nlevel = 0\nsize_kb = 1\nshared = [\"0\"]", "level must be 1..=9"),
        ("this is not toml", "host file"),
        ("[[cpu]]\npackage = 0\ncore = 0\nnode = 5000", "CPU 0 is on node 5000; node ids must be below 1024"),
    ];
    for (text, needle) in cases {
        let msg = err_text(Host::from_toml(text));
        assert!(msg.contains(needle), "{text:?}:\n{msg}\nshould mention {needle:?}");
    }
    // From a file: the text is read, or the error names the file.
    let dir = std::env::temp_dir().join(format!("cfs-topology-{}-toml", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("host.toml");
    std::fs::write(&file, "spec = \"1s2d2c\"\n").unwrap();
    assert_eq!(Host::from_toml_file(&file).unwrap().nr_cpus(), 4);
    let missing = dir.join("none.toml");
    let msg = err_text(Host::from_toml_file(&missing));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(msg.contains(&format!("cannot read {}", missing.display())), "{msg}");
}

/// A TOML error is one line that starts with where the parser stopped:
/// the line, and the column counted in characters (the `é` below is two
/// bytes but one column).
#[test]
fn toml_errors_are_one_line_with_their_position() {
    let cases = [
        ("nmae = \"x\"\nspec = \"2c\"", "host file: line 1, column 1: unknown field `nmae`, expected one of `name`"),
        ("spec = \"2c\"\n[numa]\ndistance = [[10]]", "host file: line 3, column 1: unknown field `distance`"),
        ("name = \"\u{e9}\" x", "host file: line 1, column 12: unexpected key or value"),
    ];
    for (text, start) in cases {
        let msg = err_text(Host::from_toml(text));
        assert_eq!(msg.lines().count(), 1, "{msg}");
        assert!(msg.starts_with(start), "{text:?}: {msg}");
    }
}

#[test]
fn parse_any_dispatches() {
    assert_eq!(parse_any(" q6600 ").unwrap().nr_cpus(), 4);
    assert_eq!(parse_any("2s4c2t,mhz=2930").unwrap().mhz(), 2930);
    assert_eq!(parse_any("spec = \"2c\"\nname = \"t\"").unwrap().name(), "t");
    assert!(parse_any("").is_err());
    assert!(parse_any("\u{0}\u{ffff}[[[").is_err());
}
