//! The Chrome / Perfetto trace of a run: a track per CPU, slices that
//! account for exactly the CPU's busy time, and wakeup flows that end where
//! the woken task starts running.

mod common;

use common::{pgbench_plan, run};
use serde_json::Value;

/// One traced run (4 clients, 300 transactions), shared by the tests.
fn traced() -> &'static (Value, cfs_sim::experiment::Results) {
    static TRACED: std::sync::OnceLock<(Value, cfs_sim::experiment::Results)> = std::sync::OnceLock::new();
    TRACED.get_or_init(|| {
        let mut plan = pgbench_plan(&["name=861,features=861"], &[4], 300, 1, 3);
        plan.trace = true;
        let mut res = run(&plan);
        let trace = res.trace.take().expect("a trace of the first run").to_value().unwrap();
        (trace, res)
    })
}

fn events<'a>(t: &'a Value, ph: &str) -> Vec<&'a Value> {
    t["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == ph).collect()
}

#[test]
fn one_named_track_per_cpu() {
    let (t, _) = traced();
    let names: Vec<&str> = events(t, "M")
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["CPU0", "CPU1", "CPU2", "CPU3"]);
}

#[test]
fn slices_do_not_overlap_and_add_up_to_each_cpus_busy_time() {
    let (t, res) = traced();
    let r = &res.runs[0];
    let end_us = r.end_ns as f64 / 1000.0;
    for cpu in 0..4u64 {
        let mut s: Vec<(f64, f64)> = events(t, "X")
            .iter()
            .filter(|e| e["tid"] == cpu)
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect();
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(!s.is_empty(), "CPU{cpu} never ran anything");
        for w in s.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0 + 1e-6, "CPU{cpu}: {w:?} overlap");
        }
        assert!(s.iter().all(|&(ts, dur)| dur >= 0.0 && ts + dur <= end_us + 1e-6));
        // The run record's utilisation is busy time over the run: the
        // slices are the same busy time, stretch by stretch.
        let busy: f64 = s.iter().map(|x| x.1).sum();
        let want = r.cpu_util[cpu as usize] * end_us;
        assert!((busy - want).abs() <= 1e-6 * end_us, "CPU{cpu}: slices {busy} us, utilisation says {want} us");
    }
}

#[test]
fn every_wakeup_flow_ends_where_the_woken_task_starts() {
    let (t, _) = traced();
    let starts: Vec<(u64, f64)> =
        events(t, "X").iter().map(|e| (e["tid"].as_u64().unwrap(), e["ts"].as_f64().unwrap())).collect();
    let s = events(t, "s");
    let f = events(t, "f");
    assert_eq!(s.len(), f.len());
    // pgbench -S: every one of the 300 transactions wakes its backend.
    assert!(f.len() >= 300, "{} flows", f.len());
    // Each flow has its own id, or the viewer would join them all up.
    let ids: std::collections::BTreeSet<u64> = s.iter().map(|e| e["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), s.len());
    for (a, b) in s.iter().zip(&f) {
        assert_eq!(a["id"], b["id"]);
        assert!(a["ts"].as_f64() <= b["ts"].as_f64());
        let end = (b["tid"].as_u64().unwrap(), b["ts"].as_f64().unwrap());
        assert!(starts.contains(&end), "flow {} ends at {end:?}, where no slice starts", b["id"]);
    }
}

/// The machine-wide instants ("s": "g"): settings written mid-run.
fn settings(t: &Value) -> Vec<&Value> {
    events(t, "i").into_iter().filter(|e| e["s"] == "g").collect()
}

/// Every task the balancer moved is an instant on the track of the CPU it
/// moved to ("s": "t"), naming the CPU it left and the task: as many as
/// the run's counters hold (periodic, newly idle and active moves).
#[test]
fn every_balancer_move_is_an_instant_on_its_destination() {
    let (t, res) = traced();
    let c = &res.runs[0].counters;
    let moves: Vec<&Value> = events(t, "i").into_iter().filter(|e| e["cat"] == "balance").collect();
    assert_eq!(moves.len() as u64, c.mig_periodic + c.mig_newidle + c.mig_active);
    assert!(!moves.is_empty(), "861 at 4 clients: idle CPUs pull queued backends");
    let slices = events(t, "X");
    for m in &moves {
        assert_ne!(m["tid"], m["args"]["from"]);
        assert_eq!(m["s"], "t");
        // The name is the task's, as its slices carry it.
        let named = slices.iter().find(|e| e["args"]["task"] == m["args"]["task"]).map(|e| &e["name"]);
        assert_eq!(named, Some(&m["args"]["name"]), "{m}");
    }
}

/// A `--switch` setting shows as one machine-wide instant at its time,
/// named in the `--switch` form; a run without switches has none.
#[test]
fn a_setting_written_mid_run_is_an_instant_across_the_tracks() {
    assert!(settings(&traced().0).is_empty());
    let mut plan = pgbench_plan(&["name=895"], &[4], 400, 1, 3);
    plan.trace = true;
    plan.changes =
        cfs_sim::experiment::parse_switch("5ms:features=863,sd-flags=MC:-WAKE_AFFINE,no-patch=waker").unwrap();
    let t = run(&plan).trace.expect("a trace").to_value().unwrap();
    let marks = settings(&t);
    let names: Vec<&str> = marks.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["features=863", "sd-flags=MC:-SD_WAKE_AFFINE", "no-patch=waker"]);
    // 5 ms in the format's microseconds; "s": "g" draws it across every track.
    assert!(marks.iter().all(|e| e["ts"].as_f64() == Some(5_000.0) && e["s"] == "g"));
}

/// An injected interrupt handler runs on a CPU by itself: on a busy CPU
/// its slice sits inside the slice of the task it interrupted (whose
/// time it takes), and on an idle CPU a task woken there starts only when
/// the handler has returned, interrupts being off until then. Every irq
/// slice ends by the end of the run. pgbench under 2.6.26, 8 clients,
/// 20 ms, a 10 µs
/// handler every 100 µs on average on each CPU (Poisson): hundreds of
/// handlers, some of them on idle CPUs as wakeups arrive (until the
/// twentieth session 11 of 785 such slices overlapped a task's start).
#[test]
fn an_interrupt_handler_never_overlaps_a_task_partly() {
    let mut plan = pgbench_plan(&["name=2.6.26,profile=2.6.26"], &[8], 1, 1, 1);
    plan.opts.transactions = None;
    plan.opts.duration_ns = Some(20_000_000);
    plan.irqs = vec!["cpus=0-3,mean=100us,takes=10us".parse().unwrap()];
    plan.trace = true;
    let mut res = run(&plan);
    let end_us = res.runs[0].end_ns as f64 / 1000.0;
    let t = res.trace.take().unwrap().to_value().unwrap();
    let slices = events(&t, "X");
    let (mut irqs, mut checked) = (0, 0);
    for cpu in 0..4u64 {
        let on = |irq: bool| -> Vec<(f64, f64)> {
            slices
                .iter()
                .filter(|e| e["tid"] == cpu && (e["name"] == "irq") == irq)
                .map(|e| (e["ts"].as_f64().unwrap(), e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()))
                .collect()
        };
        let tasks = on(false);
        for (a, b) in on(true) {
            irqs += 1;
            assert!(b <= end_us + 1e-6, "CPU{cpu}: a handler ends at {b} us, after the run's {end_us}");
            for &(s, e) in &tasks {
                let inside = s <= a + 1e-6 && b <= e + 1e-6;
                let apart = b <= s + 1e-6 || e <= a + 1e-6;
                assert!(inside || apart, "CPU{cpu}: handler {a}-{b} us and task slice {s}-{e} us overlap in part");
                checked += usize::from(!apart);
            }
        }
    }
    assert!(irqs > 500 && checked > 100, "{irqs} handlers, {checked} inside tasks");
}
