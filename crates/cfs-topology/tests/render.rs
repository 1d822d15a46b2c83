//! The kernel-style debug dump, the host summary and the JSON forms.
#![cfg(feature = "std")]

use cfs_topology::{Host, KernelVersion as V, domains_to_json, host_to_json, render_host_summary, render_kernel_debug};

/// sched_domain_debug_one: "%*s domain %d: " with the level as width, then
/// "span %s level %s"; the groups line is indented one more. 2.6.32 prints
/// "(cpu_power = N)" after a group whose power is not SCHED_LOAD_SCALE.
#[test]
fn kernel_debug_x2_2_6_26() {
    let d = Host::preset("x2").unwrap().build_domains(V::V2_6_26);
    let expected = "\
CPU0 attaching sched-domain:
 domain 0: span 0-1 level CPU
  groups: 0 1
  flags 47 (0x2f): SD_LOAD_BALANCE|SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE
  min_interval 1 max_interval 4 busy_factor 64 imbalance_pct 125 cache_nice_tries 1 busy_idx 2 idle_idx 1 newidle_idx 2 wake_idx 1 forkexec_idx 1 balance_interval 1
CPU1 attaching sched-domain:
 domain 0: span 0-1 level CPU
  groups: 1 0
  flags 47 (0x2f): SD_LOAD_BALANCE|SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE
  min_interval 1 max_interval 4 busy_factor 64 imbalance_pct 125 cache_nice_tries 1 busy_idx 2 idle_idx 1 newidle_idx 2 wake_idx 1 forkexec_idx 1 balance_interval 1
";
    assert_eq!(render_kernel_debug(&d), expected);
}

#[test]
fn kernel_debug_nehalem_2_6_32_cpu0() {
    let d = Host::preset("nehalem-ep").unwrap().build_domains(V::V2_6_32);
    let text = render_kernel_debug(&d);
    let cpu0: Vec<&str> = text.lines().take(10).collect();
    assert_eq!(cpu0[0], "CPU0 attaching sched-domain:");
    assert_eq!(cpu0[1], " domain 0: span 0,8 level SIBLING");
    assert_eq!(cpu0[2], "  groups: 0 (cpu_power = 589) 8 (cpu_power = 589)");
    assert!(cpu0[4].ends_with("smt_gain 1178"));
    assert_eq!(cpu0[5], "  domain 1: span 0-3,8-11 level MC");
    assert_eq!(
        cpu0[6],
        "   groups: 0,8 (cpu_power = 1178) 1,9 (cpu_power = 1178) 2,10 (cpu_power = 1178) 3,11 (cpu_power = 1178)"
    );
    assert_eq!(
        cpu0[7],
        "   flags 4655 (0x122f): SD_LOAD_BALANCE|SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SHARE_PKG_RESOURCES|SD_PREFER_SIBLING"
    );
    assert_eq!(cpu0[9], "   domain 2: span 0-15 level NODE");
    assert_eq!(text.lines().filter(|l| l.ends_with("attaching sched-domain:")).count(), 16);
}

#[test]
fn host_summary() {
    let s = render_host_summary(&Host::preset("nehalem-ep").unwrap());
    assert!(s.starts_with("host: 2 x Intel Xeon X5570 Nehalem-EP (nehalem-ep)\n"), "{s}");
    assert!(
        s.contains("intel 2930 MHz, 16 logical CPUs: 2 package(s), 8 core(s), 2 thread(s) per core, 2 NUMA node(s)"),
        "{s}"
    );
    assert!(s.contains("  L3 unified       8192 KB x2: 0-3,8-11 4-7,12-15"), "{s}");
    assert!(s.contains("  node 1: cpus 4-7,12-15  distances 21 10"), "{s}");
    assert!(s.contains(" 12        1    0     0       1     1"), "{s}");
}

#[test]
fn json_forms() {
    let h = Host::preset("q6600").unwrap();
    let j = domains_to_json(&h.build_domains(V::V2_6_32));
    assert_eq!(j["version"], "2.6.32");
    assert_eq!(j["commit"], "22763c5cf3690a681551162c15d34d935308c8d7");
    let cpu_level = &j["cpus"][2]["domains"][1];
    assert_eq!(cpu_level["level"], "CPU");
    assert_eq!(cpu_level["span"], "0-3");
    assert_eq!(cpu_level["flags"], 4143);
    assert_eq!(cpu_level["groups"][0]["cpus"], "2-3");
    assert_eq!(cpu_level["groups"][0]["cpu_power"], 2048);
    assert_eq!(cpu_level["params"]["idle_idx"], 1);
    assert_eq!(cpu_level["flag_names"][5], "SD_PREFER_SIBLING");

    let hj = host_to_json(&h);
    assert_eq!(hj["vendor"], "intel");
    assert_eq!(hj["cpus"][3]["die"], 1);
    assert_eq!(hj["caches"][2]["instances"][1], "2-3");
    assert_eq!(hj["nodes"][0]["distances"][0], 10);
    // Round trip through text.
    let text = serde_json::to_string_pretty(&hj).unwrap();
    assert!(text.contains("\"size_kb\": 4096"));
}
