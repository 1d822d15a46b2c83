//! `--switch`: settings written into the running scheduler at a simulated
//! time, and the throughput of each phase between two changes.

mod common;

use cfs_sim::engine::{Change, Setting};
use cfs_sim::experiment::{Plan, parse_switch};
use cfs_sim::report;
use common::{pgbench_plan, plan_on, run};

/// A pgbench plan over a fixed simulated duration (so phases have a known
/// length) with the given changes.
fn timed(configs: &[&str], clients: u32, duration_ms: u64, runs: u32, changes: Vec<Change>) -> Plan {
    let mut plan = pgbench_plan(configs, &[clients], 1, runs, 3);
    plan.opts.transactions = None;
    plan.opts.duration_ns = Some(duration_ms * 1_000_000);
    plan.changes = changes;
    plan
}

#[test]
fn a_switch_at_time_zero_runs_like_the_configured_column() {
    // 895 and 863 differ only in SYNC_WAKEUPS, which nothing reads before
    // the first wakeup, so writing 863 at 0 s must give the very runs of a
    // column built with it.
    let switched = run(&timed(&["name=895"], 6, 300, 2, parse_switch("0s:features=863").unwrap()));
    let built = run(&timed(&["name=863,features=863"], 6, 300, 2, Vec::new()));
    let v = |r: &cfs_sim::experiment::Results| r.runs.iter().map(|x| x.value).collect::<Vec<_>>();
    assert_eq!(v(&switched), v(&built));
    // One change time at 0 s: a single phase, so no phase columns.
    assert!(switched.runs.iter().all(|r| r.phases.len() == 1));
}

#[test]
fn the_phases_add_up_to_the_run() {
    let plan = timed(&["name=895"], 8, 400, 2, parse_switch("150ms:features=863").unwrap());
    let res = run(&plan);
    for r in &res.runs {
        assert_eq!(r.phases.len(), 2, "{:?}", r.phases);
        let (a, b) = (r.phases[0], r.phases[1]);
        // Phase 0 runs from the end of the warm-up to the change, phase 1
        // from the change to the end.
        assert_eq!((a.1, b.0, b.1), (150_000_000, 150_000_000, r.end_ns));
        // Throughput x time, summed over the phases, is the run's units:
        // value x window.
        let window = (r.end_ns - a.0) as f64 / 1e9;
        let sum = a.2 * (a.1 - a.0) as f64 / 1e9 + b.2 * (b.1 - b.0) as f64 / 1e9;
        assert!((sum - r.value * window).abs() < 1e-6 * r.value * window, "{sum} vs {}", r.value * window);
    }
}

/// A run that ends before its only change has one phase, the whole run,
/// and the table shows it under "@0s" with a dash under the change.
#[test]
fn a_run_that_ends_before_its_change_is_one_phase() {
    let mut plan = pgbench_plan(&["name=895"], &[2], 1, 1, 3);
    plan.opts.transactions = Some(1_000);
    plan.changes = parse_switch("5s:features=863").unwrap();
    let res = run(&plan);
    let r = &res.runs[0];
    assert!(r.end_ns < 5_000_000_000, "{}", r.end_ns);
    assert_eq!(r.phases.len(), 1, "{:?}", r.phases);
    assert_eq!((r.phases[0].0, r.phases[0].1), (0, r.end_ns));
    assert!((r.phases[0].2 - r.value).abs() < 1e-9 * r.value, "{:?} vs {}", r.phases, r.value);
    let text = report::table(&plan, &res, "t");
    let row: Vec<&str> = text.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row, ["2", &format!("{:.0}", r.value), "-"]);
}

/// The thread: "as soon as the load jams up it avalanches into a
/// serialized mess". Writing 895 into a running 863 pgbench at 15 clients
/// brings the pile-up back within the next phase. The published steady
/// states at 15 clients are 28,651 (863) and 11,414 (895) TPS
/// (pgbench-q6600-features.csv), a ratio of 0.40; the phase after the
/// change must fall at least to 0.6 of the one before it.
#[test]
fn writing_895_into_a_running_863_load_piles_it_up_again() {
    let plan = timed(&["name=863,features=863"], 15, 1_200, 3, parse_switch("600ms:features=895").unwrap());
    let res = run(&plan);
    let before = cfs_sim::experiment::median(&mut res.values(0, 15, Some(0))).unwrap();
    let after = cfs_sim::experiment::median(&mut res.values(0, 15, Some(1))).unwrap();
    assert!(after <= 0.6 * before, "863 -> 895 at 600 ms: {before:.0} then {after:.0} TPS");
}

#[test]
fn the_table_csv_and_json_show_each_phase() {
    let plan = timed(&["name=895", "name=861,features=861"], 4, 300, 1, parse_switch("100ms:features=863").unwrap());
    let res = run(&plan);
    let text = report::table(&plan, &res, "t");
    let header: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header, ["clients", "895", "@0s", "895", "@100ms", "861", "@0s", "861", "@100ms"]);
    // Each cell is the phase's value of the single run.
    let row: Vec<f64> = text.lines().nth(2).unwrap().split_whitespace().skip(1).map(|c| c.parse().unwrap()).collect();
    let want: Vec<f64> = res.runs.iter().flat_map(|r| r.phases.iter().map(|p| p.2.round())).collect();
    assert_eq!(row, want);
    let csv = report::csv(&plan, &res);
    assert!(csv.lines().next().unwrap().ends_with(",events,wait_avg_us,wait_max_us,tps@0s,tps@100ms"), "{csv}");
    for (line, r) in csv.lines().skip(1).zip(&res.runs) {
        let f: Vec<&str> = line.rsplit(',').take(2).collect();
        assert_eq!(f[0].parse::<f64>().unwrap(), (r.phases[1].2 * 1000.0).round() / 1000.0);
        assert_eq!(f[1].parse::<f64>().unwrap(), (r.phases[0].2 * 1000.0).round() / 1000.0);
    }
    let json = report::json(&plan, &res);
    assert_eq!(json["runs"][0]["phases"].as_array().unwrap().len(), 2);
    assert_eq!(json["runs"][0]["phases"][1]["wait_avg_ns"].as_f64(), res.runs[0].phase_waits[1]);
    assert_eq!(json["switches"][0], serde_json::json!({"at_s": 0.1, "features": "863"}));
    // The mean wait has a column per phase (of the waits that ended in
    // it); the longest is the whole run's, one column per configuration.
    let style = report::TableStyle::default();
    let mean = report::waits_table(&plan, &res, report::Wait::Mean, style);
    let header: Vec<&str> = mean.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header, ["clients", "895", "@0s", "895", "@100ms", "861", "@0s", "861", "@100ms"], "{mean}");
    let row: Vec<f64> = mean.lines().nth(2).unwrap().split_whitespace().skip(1).map(|c| c.parse().unwrap()).collect();
    let want: Vec<f64> = res.runs.iter().flat_map(|r| r.phase_waits.iter().map(|w| w.unwrap() / 1e3)).collect();
    for (got, want) in row.iter().zip(&want) {
        // Cells print with two decimals below 100 and none above.
        let tol = if *want >= 100.0 { 0.5 } else { 0.005 };
        assert!((got - want).abs() <= tol, "{mean}: {want}");
    }
    let longest = report::waits_table(&plan, &res, report::Wait::Longest, style);
    let header: Vec<&str> = longest.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header, ["clients", "895", "861"], "{longest}");
}

#[test]
fn switch_specs_parse_in_order() {
    let c = parse_switch("2s:features=NO_SYNC_WAKEUPS,set=sched_migration_cost=0,sd-flags=MC:-WAKE_AFFINE,CPU:-WAKE_AFFINE,patch=waker,no-patch=affinity-fix,policy=batch,client-policy=normal,server-policy=idle").unwrap();
    assert!(c.iter().all(|c| c.at_ns == 2_000_000_000));
    let kinds: Vec<&str> = c
        .iter()
        .map(|c| match &c.setting {
            Setting::Features(_) => "features",
            Setting::Tunable(..) => "tunable",
            Setting::DomainFlags(..) => "flags",
            Setting::Patch(_, true) => "patch",
            Setting::Patch(_, false) => "no-patch",
            Setting::Policy(None, _) => "policy",
            Setting::Policy(Some(_), _) => "side-policy",
            Setting::Affinity(None, _) => "affinity",
            Setting::Affinity(Some(_), _) => "pin",
            Setting::Nice(..) => "nice",
            Setting::Irq(_) | Setting::NoIrq | Setting::Slow(_) => "fault",
            Setting::Offline(_) | Setting::Online(_) => "hotplug",
            Setting::TcpLowLatency(_) => "tcp_low_latency",
            Setting::PowerSavings { .. } => "power_savings",
        })
        .collect();
    assert_eq!(
        kinds,
        ["features", "tunable", "flags", "flags", "patch", "no-patch", "policy", "side-policy", "side-policy"]
    );
    // As JSON (cfs-sim --json "switches"): the flags by name.
    assert_eq!(c[2].to_json(), serde_json::json!({"at_s": 2.0, "level": "MC", "set": [], "clear": ["SD_WAKE_AFFINE"]}));
    assert_eq!(c[5].to_json(), serde_json::json!({"at_s": 2.0, "patch": "affinity-fix", "on": false}));
    assert_eq!(c[6].to_json(), serde_json::json!({"at_s": 2.0, "policy": "batch", "side": "all"}));
    assert_eq!(c[7].to_json(), serde_json::json!({"at_s": 2.0, "policy": "normal", "side": "client"}));
    // And back in the --switch form.
    let text: Vec<String> = c[6..].iter().map(|c| c.setting.to_string()).collect();
    assert_eq!(text, ["policy=batch", "client-policy=normal", "server-policy=idle"]);
    // CPU lists: a part without `=` continues the list before it.
    let c = parse_switch("1s:pin-backends=1,3,pin-client=0,affinity=0-3").unwrap();
    let text: Vec<String> = c.iter().map(|c| c.setting.to_string()).collect();
    assert_eq!(text, ["pin-backends=1,3", "pin-client=0", "affinity=0-3"]);
    assert_eq!(c[0].to_json(), serde_json::json!({"at_s": 1.0, "cpus": "1,3", "side": "server"}));
    // renice: every task, or one side.
    let c = parse_switch("500ms:nice=5,client-nice=-5,server_nice=19").unwrap();
    let text: Vec<String> = c.iter().map(|c| c.setting.to_string()).collect();
    assert_eq!(text, ["nice=5", "client-nice=-5", "server-nice=19"]);
    assert_eq!(c[1].to_json(), serde_json::json!({"at_s": 0.5, "nice": -5, "side": "client"}));
}

/// The power-savings knobs are sysfs files the engine writes (rebuilding
/// the domains): `set=` names them mid-run, and they read back in the
/// same form and as JSON.
#[test]
fn power_savings_switch_as_settings_of_their_own() {
    let c = parse_switch("1s:set=sched_mc_power_savings=1,set=sched_smt_power_savings=0").unwrap();
    assert_eq!(c[0].setting, Setting::PowerSavings { smt: false, level: 1 });
    assert_eq!(c[1].setting, Setting::PowerSavings { smt: true, level: 0 });
    let text: Vec<String> = c.iter().map(|c| c.setting.to_string()).collect();
    assert_eq!(text, ["set=sched_mc_power_savings=1", "set=sched_smt_power_savings=0"]);
    assert_eq!(c[0].to_json(), serde_json::json!({"at_s": 1.0, "tunable": "sched_mc_power_savings", "value": 1}));
}

/// tcp_low_latency is a net sysctl the engine holds: `set=` writes it
/// mid-run like a sched_* tunable, and it reads back in the same form.
#[test]
fn tcp_low_latency_switches_as_a_setting_of_its_own() {
    // An int sysctl: any value but 0 is on, as proc_dointvec stores it.
    let c = parse_switch("1s:set=tcp_low_latency=1,set=tcp_low_latency=0,set=tcp_low_latency=2").unwrap();
    assert_eq!(c[0].setting, Setting::TcpLowLatency(true));
    assert_eq!(c[1].setting, Setting::TcpLowLatency(false));
    assert_eq!(c[2].setting, Setting::TcpLowLatency(true));
    assert_eq!(c[0].setting.to_string(), "set=tcp_low_latency=1");
    assert_eq!(c[0].to_json(), serde_json::json!({"at_s": 1.0, "tunable": "tcp_low_latency", "value": 1}));
    assert_eq!(parse_switch(&format!("1s:{}", c[1].setting)).unwrap(), c[1..2]);
}

/// Faults as `--switch` items: a load's own keys go with `;` (the items
/// split at commas), and the text written back parses to the same change.
#[test]
fn switch_faults_parse_and_write_back() {
    let c = parse_switch("1s:irq=cpus=0,2;every=1ms;takes=50us,slow=cpus=1;speed=50%,irq=off").unwrap();
    let text: Vec<String> = c.iter().map(|c| c.setting.to_string()).collect();
    assert_eq!(text, ["irq=cpus=0;2;every=1ms;takes=50us", "slow=cpus=1;speed=50%", "irq=off"]);
    assert_eq!(
        c.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
        [
            serde_json::json!({"at_s": 1.0, "irq": "cpus=0,2,every=1ms,takes=50us"}),
            serde_json::json!({"at_s": 1.0, "slow": "cpus=1,speed=50%"}),
            serde_json::json!({"at_s": 1.0, "irq": null}),
        ]
    );
    let again = parse_switch(&format!("1s:{}", text.join(","))).unwrap();
    assert_eq!(again, c);
    for (bad, why) in [
        (
            "1s:irq=cpus=0,every=1ms,takes=50us",
            "no every= (period) or mean= (mean gap of Poisson arrivals) (inside --switch, an irq= or slow= fault separates its own keys with ;)",
        ),
        ("1s:slow=cpus=1;speed=0%", "above 0%"),
        ("1s:irq=cpus=0;every=5us;takes=1us", "at most every 10us"),
        ("1s:slow=speed=50%", "no cpus="),
    ] {
        let e = parse_switch(bad).unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

/// Thread 2's fix as one list for every host: on Nehalem-EP, 2.6.32-rc1
/// builds SIBLING, MC and NODE but no CPU level, so `CPU:-PREFER_LOCAL`
/// is skipped there, as `--sd-flags` skips it at boot; written at 0 s the
/// list gives the runs of the column built with it.
#[test]
fn sd_flags_for_a_level_the_host_lacks_are_skipped_like_at_boot() {
    let list = "MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL";
    let plan = |item: &str, changes: Vec<Change>| {
        let mut plan = plan_on("nehalem-ep", "tbench", "2.6.32-rc1", &[item], &[8], 2, 9);
        plan.opts.duration_ns = Some(60_000_000);
        plan.changes = changes;
        plan
    };
    let at_boot = run(&plan(&format!("sd-flags={list}"), Vec::new()));
    let switched = run(&plan("name=x", parse_switch(&format!("0s:sd-flags={list}")).unwrap()));
    let plain = run(&plan("name=x", Vec::new()));
    let v = |r: &cfs_sim::experiment::Results| r.runs.iter().map(|x| x.value).collect::<Vec<_>>();
    assert_eq!(v(&switched), v(&at_boot));
    assert_ne!(v(&switched), v(&plain), "clearing PREFER_LOCAL in MC changes nothing here");
}

/// Several settings written at one time close one phase, not one each: two
/// at 100 ms and one at 200 ms make three phases, each starting where the
/// last ended.
#[test]
fn settings_written_at_one_time_close_one_phase() {
    let mut changes = parse_switch("100ms:features=863,set=sched_migration_cost=0").unwrap();
    changes.extend(parse_switch("200ms:features=895").unwrap());
    let res = run(&timed(&["name=895"], 6, 300, 1, changes));
    let r = &res.runs[0];
    let bounds: Vec<(u64, u64)> = r.phases.iter().map(|p| (p.0, p.1)).collect();
    assert_eq!(bounds.len(), 3, "{bounds:?}");
    assert_eq!((bounds[0].1, bounds[1]), (100_000_000, (100_000_000, 200_000_000)));
    assert_eq!(bounds[2], (200_000_000, r.end_ns));
}

/// A policy or nice level written at 0 s reaches the tasks that exist
/// then (the daemon and the driver), and what they fork inherits it, as
/// `chrt -b -p` or `renice` on the running processes would: the runs are
/// those of the column booted with that setting (`chrt -b` or `nice -n` at
/// their start). tbench (4 pairs, 200 ms) is used because there each
/// side's setting changes the runs: a SCHED_BATCH wakee never
/// wakeup-preempts (check_preempt_wakeup), a side's weight changes its
/// wakeup granularity, and each side wakes the other. (In pgbench the
/// client's policy changes nothing, as the seed thread found for `chrt -b
/// pgbench` alone.)
#[test]
fn a_task_switch_at_time_zero_runs_like_the_booted_setting() {
    let tbench = |item: &str, changes: Vec<Change>| {
        let mut plan = timed(&[item], 4, 200, 2, changes);
        plan.workload = cfs_sim::workloads::Workload::builtin("tbench").unwrap();
        run(&plan)
    };
    let v = |r: &cfs_sim::experiment::Results| r.runs.iter().map(|x| x.value).collect::<Vec<_>>();
    let normal = v(&tbench("name=n", Vec::new()));
    for (switch, item) in [
        ("0s:policy=batch", "name=b,policy=batch"),
        ("0s:server-policy=batch", "name=s,server-policy=batch"),
        ("0s:client-policy=batch", "name=c,client-policy=batch"),
        ("0s:server-nice=5", "name=s,server-nice=5"),
        ("0s:client-nice=-5", "name=c,client-nice=-5"),
    ] {
        let switched = v(&tbench("name=n", parse_switch(switch).unwrap()));
        assert_eq!(switched, v(&tbench(item, Vec::new())), "{switch}");
        // The setting matters here, so a switch that wrote nothing fails.
        assert_ne!(switched, normal, "{switch}");
    }
}

/// `taskset -p` mid-run: pgbench on 2.6.26-rc4 piles onto one CPU (895);
/// pinning the client to CPU 0 and the backends to CPUs 1-3 at 100 ms, as
/// the seed thread did with taskset at start, moves the running and queued
/// tasks at once and makes every later wakeup start from an allowed CPU.
/// The phase after the switch then runs like the column booted with those
/// pins (within 10%: the runs differ in how they start), at least 1.5x the
/// pile before it.
#[test]
fn pinning_the_sides_mid_run_spreads_the_pile() {
    let pins = parse_switch("100ms:pin-client=0,pin-backends=1-3").unwrap();
    let switched = run(&timed(&["name=895"], 8, 400, 1, pins));
    let mut booted = timed(&["name=895"], 8, 400, 1, Vec::new());
    booted.opts.pin_client = Some(cfs_topology::CpuMask::single(0));
    booted.opts.pin_server = Some(cfs_topology::CpuMask::from_cpus([1, 2, 3]));
    let pinned = run(&booted).runs[0].value;
    let (before, after) = (switched.runs[0].phases[0].2, switched.runs[0].phases[1].2);
    assert!(after > 1.5 * before, "{before} -> {after}");
    assert!((after - pinned).abs() < 0.1 * pinned, "{after} vs booted {pinned}");
}

/// CPU hotplug mid-run. Under 861 at 15 clients the one pgbench process
/// limits throughput (~27 µs of its own CPU a transaction, ~36K TPS). With
/// CPUs 1-3 down it shares CPU 0 with every backend (~63 µs each), so at
/// most 1 / (27 + 63 µs) ≈ 11K TPS: between a quarter and 0.35 of before.
/// Back up, the backends spread again (idle CPUs pull them) and the rate
/// returns to within a tenth of the first phase.
#[test]
fn cpus_taken_down_and_brought_back_mid_run() {
    let changes =
        parse_switch("300ms:offline=1-3").unwrap().into_iter().chain(parse_switch("600ms:online=1-3").unwrap());
    let res = run(&timed(&["name=861,features=861"], 15, 900, 1, changes.collect()));
    let p = &res.runs[0].phases;
    let (before, down, back) = (p[0].2, p[1].2, p[2].2);
    assert!(down > 0.25 * before && down < 0.35 * before, "{before:.0} -> {down:.0}");
    assert!((back - before).abs() < 0.1 * before, "{before:.0} -> {back:.0}");
    // Written back and as JSON.
    let c = parse_switch("1s:offline=2-3,online=2").unwrap();
    let text: Vec<String> = c.iter().map(|c| c.setting.to_string()).collect();
    assert_eq!(text, ["offline=2", "offline=3", "online=2"]);
    assert_eq!(c[2].to_json(), serde_json::json!({"at_s": 1.0, "online": 2}));
    assert_eq!(parse_switch("1s:offline=").unwrap_err(), "--switch \"1s:offline=\": offline names no CPU");
}

/// `cfs-sim hogs --host x2 --pin-client 1 --switch 0s:offline=1`: the
/// launcher, pinned to CPU 1 and running there when CPU 1 goes down, has
/// its mask widened to every CPU as move_task_off_dead_cpu widens it, and
/// each hog it forks with its own pin to CPU 1 is refused that mask as
/// sched_setaffinity refuses it (EINVAL: no CPU of it online) and keeps
/// the launcher's. All four run on CPU 0: 1 ms loops, at most 1,000 a
/// second on one CPU, less the context switches and ticks. Until the
/// thirteenth session the first fork failed the run.
#[test]
fn hogs_pinned_to_a_cpu_taken_down_run_on_the_cpu_left() {
    let mut plan = plan_on("x2", "hogs", "2.6.26", &["name=2.6.26"], &[4], 1, 3);
    plan.opts.duration_ns = Some(100_000_000);
    plan.opts.pin_client = Some(cfs_core::CpuMask::single(1));
    plan.changes = parse_switch("0s:offline=1").unwrap();
    let loops_s = run(&plan).runs[0].value;
    assert!((800.0..=1_000.0).contains(&loops_s), "{loops_s}");
}
