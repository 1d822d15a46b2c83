//! Same seed → byte-identical output; different seeds differ; thread
//! count does not matter.

use std::process::Command;

fn csv(args: &[&str], tag: &str) -> String {
    let dir = std::env::temp_dir().join(format!("cfs-sim-det-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_cfs-sim")).args(args).arg("--csv").arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    text
}

const BASE: [&str; 9] =
    ["pgbench", "--profile", "2.6.26-rc4", "--clients", "1,3", "--transactions", "400", "--runs", "2"];

#[test]
fn same_seed_same_bytes() {
    let a = csv(&[&BASE[..], &["--seed", "5"]].concat(), "a");
    let b = csv(&[&BASE[..], &["--seed", "5"]].concat(), "b");
    assert_eq!(a, b);
    assert!(a.starts_with("config,clients,run,seed,tps,"), "{a}");
    assert_eq!(a.lines().count(), 1 + 2 * 2);
}

#[test]
fn different_seeds_differ() {
    let a = csv(&[&BASE[..], &["--seed", "5"]].concat(), "c");
    let b = csv(&[&BASE[..], &["--seed", "6"]].concat(), "d");
    assert_ne!(a, b);
}

#[test]
fn thread_count_does_not_change_results() {
    let a = csv(&[&BASE[..], &["--jobs", "1"]].concat(), "e");
    let b = csv(&[&BASE[..], &["--jobs", "3"]].concat(), "f");
    assert_eq!(a, b);
}

/// Runs BASE with `--set SETTING` twice and once without: the two with it
/// must be byte-identical and differ from the one without.
fn setting_is_deterministic_and_matters(setting: &str, tag: &str) {
    let with = [&BASE[..], &["--seed", "5", "--set", setting]].concat();
    let a = csv(&with, &format!("{tag}-a"));
    let b = csv(&with, &format!("{tag}-b"));
    assert_eq!(a, b, "{setting}");
    let without = csv(&[&BASE[..], &["--seed", "5"]].concat(), &format!("{tag}-c"));
    assert_ne!(a, without, "{setting} changed nothing");
}

#[test]
fn nohz_runs_are_deterministic_and_differ_from_ticking_ones() {
    // NO_HZ changes who balances the idle CPUs (the idle load balancer, from
    // its tick) and stops idle ticks, so with idle CPUs in the run (1 and 3
    // clients on 4 CPUs) the decisions differ; the same seed still gives the
    // same bytes.
    setting_is_deterministic_and_matters("nohz=1", "nohz");
}

#[test]
fn write_space_wakeup_runs_are_deterministic_and_differ() {
    // With write-space wakeups every backend taking its query wakes the
    // client if it sleeps in select(), so the wakeup counts (and the
    // decisions) change; the same seed still gives the same bytes.
    setting_is_deterministic_and_matters("write_space_wakeups=1", "wsw");
}

#[test]
fn send_buffers_bound_hackbench_but_never_fill_in_pgbench() {
    // pgbench has at most one message in flight per connection (360 bytes
    // of a 124,928-byte buffer), so unbounded buffers change nothing at all.
    let bounded = csv(&[&BASE[..], &["--seed", "5"]].concat(), "sb-a");
    let unbounded = csv(&[&BASE[..], &["--seed", "5", "--set", "sndbuf=0"]].concat(), "sb-b");
    // Only the column's label names the setting.
    assert_eq!(bounded, unbounded.replace("2.6.26-rc4 sndbuf=0,", "2.6.26-rc4,"));
    // hackbench's 20 senders run ahead of each receiver and block once its
    // buffer holds 348 messages; without the bound they never block, and
    // the decisions differ.
    let hb = ["messaging", "--clients", "1", "--loops", "100", "--runs", "1", "--seed", "5"];
    let a = csv(&hb, "sb-c");
    assert_eq!(a, csv(&hb, "sb-d"));
    assert_ne!(a, csv(&[&hb[..], &["--set", "sndbuf=0"]].concat(), "sb-e"));
}

/// The CSV fields of `text`'s data rows, split at commas.
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect()
}

/// Any row of a CSV replays by itself: `--replay` with the row's seed and
/// client count runs it once and prints the same row (its run number
/// aside, 0 now), without running the runs before it.
#[test]
fn a_csv_row_replays_from_its_seed() {
    let all = rows(&csv(&[&BASE[..], &["--seed", "5"]].concat(), "g"));
    // BASE has 1 and 3 clients, 2 runs each: the row of 3 clients, run 1.
    let row = &all[3];
    assert_eq!((row[1].as_str(), row[2].as_str()), ("3", "1"));
    let args = ["pgbench", "--profile", "2.6.26-rc4", "--clients", "3", "--transactions", "400", "--replay", &row[3]];
    let again = rows(&csv(&args, "h"));
    assert_eq!(again.len(), 1);
    let mut expect = row.clone();
    expect[2] = "0".into();
    assert_eq!(again[0], expect);
}

/// The same for the seed experiment's eight columns: one replayed run per
/// column, each equal to that column's row of the full run.
#[test]
fn the_seed_run_replays_every_column() {
    // --plot somewhere temporary: without it the seed run writes out/ in the
    // working directory, here the crate's source tree.
    let plot = std::env::temp_dir().join(format!("cfs-sim-det-{}-seed.svg", std::process::id()));
    let base = ["seed", "--clients", "4", "--transactions", "300", "--plot", plot.to_str().unwrap()];
    let all = rows(&csv(&[&base[..], &["--runs", "2", "--seed", "3"]].concat(), "i"));
    let run1: Vec<&Vec<String>> = all.iter().filter(|r| r[2] == "1").collect();
    assert_eq!(run1.len(), 8);
    let again = rows(&csv(&[&base[..], &["--replay", &run1[0][3]]].concat(), "j"));
    assert_eq!(again.len(), 8);
    for (a, r) in again.iter().zip(&run1) {
        let mut expect = (*r).clone();
        expect[2] = "0".into();
        assert_eq!(*a, expect);
    }
    let _ = std::fs::remove_file(&plot);
}

/// The JSON says which seeds it ran: the base seed, or the one replayed.
#[test]
fn json_names_the_base_seed_or_the_replayed_one() {
    let json = |extra: &[&str]| -> serde_json::Value {
        let args = [&["pgbench", "--clients", "1", "--transactions", "50", "--json"][..], extra].concat();
        let out = Command::new(env!("CARGO_BIN_EXE_cfs-sim")).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let derived = json(&["--seed", "4", "--runs", "2"]);
    assert_eq!((derived["seed"].as_u64(), derived["replay"].as_u64()), (Some(4), None));
    let seed = derived["runs"][1]["seed"].as_u64().unwrap();
    let replayed = json(&["--replay", &seed.to_string()]);
    assert_eq!((replayed["seed"].as_u64(), replayed["replay"].as_u64()), (None, Some(seed)));
    assert_eq!(replayed["runs_per_cell"], 1);
    assert_eq!(replayed["runs"][0]["value"], derived["runs"][1]["value"]);
    // The table says whose run its cells are.
    let table = Command::new(env!("CARGO_BIN_EXE_cfs-sim"))
        .args(["pgbench", "--clients", "1", "--transactions", "50", "--waits", "--replay", &seed.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(heads.len(), 3, "{text}");
    assert!(heads[0].ends_with(&format!("on q6600, tps of the run with seed {seed} (--replay)")), "{text}");
    assert!(heads[1..].iter().all(|h| h.ends_with(&format!(", of the run with seed {seed} (--replay)"))), "{text}");
    assert!(replayed["runs"][0]["value"].as_f64().unwrap() > 0.0);
}
