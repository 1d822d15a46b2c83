//! Every built-in workload and a workload file run and make progress.

use cfs_sim::cli::{BenchArgs, plan_for};
use cfs_sim::workloads::Workload;
use clap::Parser;
use std::sync::Arc;

#[derive(Parser)]
struct Wrap {
    #[command(flatten)]
    b: BenchArgs,
}

fn args(extra: &[&str]) -> BenchArgs {
    let mut v = vec!["x", "--runs", "1"];
    v.extend_from_slice(extra);
    Wrap::parse_from(v).b
}

fn value(w: Workload, extra: &[&str]) -> f64 {
    let plan = plan_for(w, &args(extra)).unwrap();
    let res = plan.execute(&|| {}).unwrap();
    res.runs[0].value
}

#[test]
fn builtins_make_progress() {
    assert!(value(Workload::Tbench(Default::default()), &["--duration", "30ms", "--clients", "4"]) > 10.0);
    assert!(value(Workload::SysbenchOltp(Default::default()), &["--duration", "30ms", "--clients", "2"]) > 100.0);
    assert!(value(Workload::Messaging(Default::default()), &["--clients", "1", "--loops", "3"]) > 1000.0);
    assert!(value(Workload::Volanomark(Default::default()), &["--clients", "1", "--loops", "2"]) > 1000.0);
    // The child's slice is 30 ms (20 ms × (1 + log2 4) over two tasks), so
    // the parent needs a few slices before it gets going.
    assert!(value(Workload::Starve(Default::default()), &["--duration", "300ms"]) > 1000.0);
}

/// hackbench's senders outrun its receivers: each receiver's socketpair
/// end, shared by the group's 20 senders, takes 348 messages of 100 bytes
/// (360 bytes of truesize each against sk_sndbuf = 124,928) before they
/// block, so 2 groups never hold more than 2 x 20 x 348 = 13,920 unread.
/// With unbounded buffers no write blocks.
#[test]
fn hackbench_senders_block_on_their_receivers_buffers() {
    let run = |extra: &[&str]| {
        let mut a = vec!["--clients", "2", "--loops", "200"];
        a.extend_from_slice(extra);
        let plan = plan_for(Workload::Messaging(Default::default()), &args(&a)).unwrap();
        let res = plan.execute(&|| {}).unwrap();
        (res.runs[0].peak_unread, res.runs[0].send_blocks)
    };
    let (peak, blocks) = run(&[]);
    assert!(peak <= 2 * 20 * 348, "{peak}");
    assert!(blocks > 0);
    assert_eq!(run(&["--set", "sndbuf=0"]).1, 0);
    // hackbench -pipe: a pipe holds 16 pages of 40 messages, so at most
    // 2 x 20 x 640 = 25,600 unread (plus a "done" per receiver), however
    // large socket buffers are; the engine's tests pin the blocking itself.
    let pipe = run(&["--pipe", "--set", "sndbuf=0"]);
    assert!(pipe.0 <= 2 * 20 * 640 + 40, "{pipe:?}");
    assert_ne!(pipe, run(&[]));
}

/// A run may last exactly the simulated-time cap, 600 s, and not 1 ns
/// more (the plan is only built, not run).
#[test]
fn a_duration_may_reach_the_time_cap() {
    let plan = plan_for(Workload::Hogs, &args(&["--duration", "600s"])).unwrap();
    assert_eq!(plan.opts.duration_ns, Some(cfs_sim::workloads::MAX_SIM_NS));
    let e = plan_for(Workload::Hogs, &args(&["--duration", "600000000001ns"])).unwrap_err();
    assert!(e.contains("at most 600s"), "{e}");
}

#[test]
fn hogs_share_by_nice() {
    // Three hogs pinned to one CPU at nice 0, 5, -5: CPU time follows the
    // weights (1024, 335, 3121). kernel-reference.md §13's worked example
    // (forked at t=0, no costs): 248 / 76 / 676 ms in one second.
    let plan = plan_for(
        Workload::Hogs,
        &args(&["--duration", "1s", "--clients", "3", "--nice", "0,5,-5", "--pin-client", "0"]),
    )
    .unwrap();
    let res = plan.execute(&|| {}).unwrap();
    let t = &res.runs[0].tasks;
    let rt = |name: &str| t.iter().find(|x| x.name.starts_with(name)).unwrap().runtime_ns as f64;
    let (a, b, c) = (rt("hog0"), rt("hog1"), rt("hog2"));
    assert!(c > 2.0 * a && a > 2.5 * b, "nice -5 {c}, 0 {a}, 5 {b}");
    for (got, want) in [(a, 248e6), (b, 76e6), (c, 676e6)] {
        assert!((got - want).abs() / want < 0.15, "{got} vs {want}");
    }
}

#[test]
fn workload_files_run() {
    let toml = r#"
name = "pingpong"
duration = "20ms"
metric = "round_trips_s"
[[task]]
name = "ping"
instances = 2
ops = [ { run = "20us" }, { send = "pong", sync = true }, { wait = "one" }, { progress = 1 } ]
[[task]]
name = "pong"
instances = 2
ops = [ { wait = "one" }, { run = { mean = "30us", dist = "exp" } }, { reply = true } ]
"#;
    let w = cfs_sim::parse_workload(toml).unwrap();
    let rt = value(Workload::File(Arc::new(w)), &[]);
    // Two pairs of 50 µs round trips plus costs: well above 10K/s.
    assert!(rt > 10_000.0, "{rt}");
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "producer": {"loop": -1, "run": 50, "signal": "q", "sleep": 100},
        "consumer": {"loop": -1, "wait": {"ref": "q", "mutex": "m"}, "run": 20}}}"#;
    let w = cfs_sim::parse_workload(json).unwrap();
    assert!(value(Workload::File(Arc::new(w)), &["--duration", "20ms"]) > 1000.0);
}

#[test]
fn shipped_example_files_parse_and_run() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads");
    for f in ["pingpong.toml", "rtapp-periodic.json", "rtapp-sync.json", "hackbench-group.toml", "tcp-pair.toml"] {
        let text = std::fs::read_to_string(format!("{dir}/{f}")).unwrap();
        let w = cfs_sim::parse_workload(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(value(Workload::File(Arc::new(w)), &["--duration", "30ms"]) > 100.0, "{f}");
    }
}

/// The shipped TCP pair against the same pair over a unix socket, on
/// Stoakley under 2.6.32. The unix socket's sync wakeup lets wake_affine
/// pull the reader to the writer's CPU (the writer's weight comes off its
/// load), so the pair runs on one CPU: a round trip is two sides of 5 µs
/// at Stoakley's clock plus two system calls, local wakeups and context
/// switches, ~16 µs. Over TCP tcp_prequeue's wakeup is not sync, the writer
/// still counts on its CPU (1024 against an idle 0), and the pair stays on
/// the two CPUs fork placed it on: each of the two wakeups adds the IPI
/// (0.7 µs to send, 1 µs in flight within a package) and the idle CPU's
/// 5 µs exit, ~13 µs a round trip, so at most ~16 / 29 = 0.55 of the unix
/// pair's rate.
#[test]
fn a_tcp_pair_ping_pongs_across_cpus_on_2_6_32() {
    let tcp = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/tcp-pair.toml")).unwrap();
    let unix = tcp.replace(r#"stream = "tcp""#, "sync = true");
    assert_ne!(tcp, unix);
    let rate = |text: &str| {
        let w = cfs_sim::parse_workload(text).unwrap();
        value(Workload::File(Arc::new(w)), &["--host", "stoakley", "--profile", "2.6.32", "--duration", "50ms"])
    };
    let (tcp, unix) = (rate(&tcp), rate(&unix));
    assert!(tcp < 0.6 * unix, "tcp {tcp:.0} against unix {unix:.0} round trips a second");
}

#[test]
fn a_loop_that_takes_no_time_is_charged_as_a_busy_loop() {
    // Each iteration is two steps that take no time: a barrier only this
    // task uses (rt-app's counter starts at users - 1 = 0, so it opens at
    // once, a user-space check) and a progress count. A loop of steps that
    // are free by construction (zero runs, progress) is refused when the
    // file is read; this one is free only at run time. After FREE_STEPS
    // (64) such steps the engine charges a system call (100 ns on the
    // Q6600), so time advances 100 ns per 32 iterations: 32 / 100 ns = 320 M
    // iterations per second, a little less with the timer ticks the CPU
    // also takes. (Before the bound was 64 it was 10,000 steps, and this
    // 2 ms run took seconds of wall time.)
    let toml = r#"
duration = "2ms"
[[task]]
name = "spin"
ops = [ { barrier = "b" }, { progress = 1 } ]
"#;
    assert_eq!(cfs_sim::engine::FREE_STEPS, 64);
    let w = cfs_sim::parse_workload(toml).unwrap();
    let rate = value(Workload::File(Arc::new(w)), &["--host", "q6600"]);
    assert!((rate - 320e6).abs() / 320e6 < 0.01, "{rate}");
}

/// Two hogs pinned to one CPU take turns by slices, and the schedstat
/// waits say so. On the Q6600 (4 CPUs) 2.6.26's sched_latency is 20 ms x
/// (1 + ilog2 4) = 60 ms, and two nice-0 tasks get 60 x 1024 / 2048 = 30 ms
/// each. Without high-resolution timers (the default, as Kconfig has it)
/// 2.6.26's HRTICK bit does nothing, and check_preempt_tick sees the
/// overrun at the first 4 ms tick past it (HZ=250); with them the hrtick
/// would end the slice on time. So a hog waits at least 30 ms and at most
/// 34 ms (plus a context switch) while the other runs.
/// And a hog never sleeps: from its fork to the end of the run it is
/// either running or waiting, so its run time and its waits add up to the
/// run's length less its fork time (both are forked within the launcher's
/// first slices, under 70 ms).
#[test]
fn pinned_hogs_wait_one_slice_of_the_other() {
    let plan = plan_for(Workload::Hogs, &args(&["--clients", "2", "--duration", "1s", "--pin-client", "0"])).unwrap();
    let res = plan.execute(&|| {}).unwrap();
    let run = &res.runs[0];
    // The launcher ("hogs") forks hog0 and hog1, then exits.
    let hogs: Vec<_> = run.tasks.iter().filter(|t| t.name.starts_with("hog") && t.name != "hogs").collect();
    assert_eq!(hogs.len(), 2);
    for me in &hogs {
        let longest = me.longest_wait_ns();
        assert!((30_000_000..=34_100_000).contains(&longest), "{me:?}");
        let alive = me.runtime_ns + me.wait_sum_ns + me.wait_open_ns;
        assert!((run.end_ns - 70_000_000..=run.end_ns).contains(&alive), "{me:?} over {} ns", run.end_ns);
        // 1 s in 60 ms rounds: 16-17 turns each, a wait before each.
        assert!((14..=20).contains(&me.wait_count), "{me:?}");
    }
    // The run's longest wait is any task's, the launcher's included.
    assert_eq!(run.wait_max_ns(), run.tasks.iter().map(|t| t.longest_wait_ns()).max().unwrap());
    assert!(run.wait_max_ns() >= hogs[0].longest_wait_ns());
}

/// rt-app's `run` is CPU work and its `runtime` wall-clock time. Two tasks
/// pinned to one CPU, each looping on 50 ms of it, are both always
/// runnable, so the scheduler treats them alike either way: 30 ms slices
/// in turn (2.6.26 on 4 CPUs: a 60 ms period over two; HRTICK, with the
/// high-resolution timers set on here, ends each on time), ~0.5 s of CPU
/// each in a 1 s run. With `run` a loop needs 50 ms of
/// that CPU: 10 loops for 0.5 s, 9 for a little less, 19-20 in all. With
/// `runtime` a loop ends 50 ms after it began, preempted or not: it runs
/// its 30 ms slice, waits out the other's, and ends within a check
/// (32 µs) of running again, so each loop is one 60 ms round: 16 full
/// loops each in 1 s, 32-33 in all.
///
/// `delay` holds a thread back once, at its start. One task alone on CPU 0
/// after a 400 ms delay and one alone on CPU 1, each looping on 50 ms: 12
/// loops in the first's 600 ms and 20 in the second's second, 32 in all,
/// or one fewer for each whose last check lands just past the run's end
/// (a delay in every loop, 450 ms each, would leave the first 2).
#[test]
fn rt_app_runtime_is_wall_clock_and_delay_is_once() {
    let loops = |a: &str, b: &str| {
        let json = format!(r#"{{"global": {{"duration": 1}}, "tasks": {{"a": {{{a}}}, "b": {{{b}}}}}}}"#);
        let w = cfs_sim::parse_workload(&json).unwrap();
        let plan = plan_for(Workload::File(Arc::new(w)), &args(&["--set", "hres_timers=1"])).unwrap();
        plan.execute(&|| {}).unwrap().runs[0].value
    };
    let shared =
        |event: &str| loops(&format!(r#""cpus": [0], "{event}": 50000"#), &format!(r#""cpus": [0], "{event}": 50000"#));
    let run = shared("run");
    assert!((19.0..=20.0).contains(&run), "{run}");
    let wall = shared("runtime");
    assert!((32.0..=33.0).contains(&wall), "{wall}");
    let delayed = loops(r#""cpus": [0], "delay": 400000, "runtime": 50000"#, r#""cpus": [1], "runtime": 50000"#);
    assert!((30.0..=32.0).contains(&delayed), "{delayed}");
}

/// An rt-app file's loops per second over 100 ms on the Q6600.
fn rt_app(tasks: &str) -> f64 {
    let json = format!(r#"{{"global": {{"duration": 1}}, "tasks": {{ {tasks} }}}}"#);
    let w = cfs_sim::parse_workload(&json).unwrap();
    value(Workload::File(Arc::new(w)), &["--host", "q6600", "--duration", "100ms"])
}

/// rt-app's semaphores and condition variables, each task on a CPU of its
/// own. The producer computes 200 µs, then posts (or signals) twice; the
/// consumer waits and computes 50 µs. The semaphore keeps the second post,
/// so the consumer loops twice per producer loop: ~4,900 + 9,800 loops/s.
/// The second condition signal comes while the consumer is still being
/// woken by the first (an IPI and an idle exit: µs), so it is lost, as
/// pthread_cond_signal's is: ~4,900 + 4,900, at most 2 / 200 µs = 10,000.
#[test]
fn rt_app_semaphores_count_posts_and_condition_signals_are_lost() {
    let sem = rt_app(
        r#""producer": {"cpus": [0], "run": 200, "sem_post0": "s", "sem_post1": "s"},
           "consumer": {"cpus": [1], "sem_wait": "s", "run": 50}"#,
    );
    let cond = rt_app(
        r#""producer": {"cpus": [0], "run": 200, "signal0": "c", "signal1": "c"},
           "consumer": {"cpus": [1], "wait": "c", "run": 50}"#,
    );
    assert!((9_000.0..=10_000.0).contains(&cond), "{cond}");
    assert!((sem / cond - 1.5).abs() < 0.05, "{sem} {cond}");
}

/// rt-app's mutex and barrier. Two tasks that each lock, compute 100 µs,
/// unlock and sleep 50 µs never compute at the same time: at most one
/// section per 100 µs, 10,000 loops/s (without the mutex, 2 / 150 µs =
/// 13,333). Three tasks that compute 100, 200 and 300 µs and meet at a
/// barrier each loop at the slowest one's pace: at most 3 / 300 µs =
/// 10,000 loops/s (without it, 10,000 + 5,000 + 3,333).
#[test]
fn rt_app_mutexes_exclude_and_barriers_wait_for_every_user() {
    let locked = |cpu| format!(r#"{{"cpus": [{cpu}], "lock": "m", "run": 100, "unlock": "m", "sleep": 50}}"#);
    let two = rt_app(&format!(r#""a": {}, "b": {}"#, locked(0), locked(2)));
    assert!((9_000.0..=10_000.0).contains(&two), "{two}");
    let barrier = rt_app(
        r#""a": {"cpus": [0], "run": 100, "barrier": "b"},
           "b": {"cpus": [1], "run": 200, "barrier": "b"},
           "c": {"cpus": [2], "run": 300, "barrier": "b"}"#,
    );
    assert!((9_000.0..=10_000.0).contains(&barrier), "{barrier}");
}

/// `--tasks` groups a file's instances (`w#0`, `w#1`, `w#2`) under their
/// task's name, and counts a sleep still going at the end: three waiters
/// block on a condition nobody signals at their first step (after waiting
/// behind the hog on CPU 0, where every task starts, until balancing
/// spreads them) and sleep the rest of the 100 ms run: their wait and
/// sleep add up to 3 x ~1.0 of it. The hog runs ~all of it.
#[test]
fn task_table_groups_instances_and_counts_open_sleeps() {
    let toml = r#"
duration = "100ms"
[[task]]
name = "w"
instances = 3
ops = [ { cond_wait = "never" } ]
[[task]]
name = "hog"
ops = [ { run = "1ms" } ]
"#;
    let w = cfs_sim::parse_workload(toml).unwrap();
    let plan = plan_for(Workload::File(Arc::new(w)), &args(&["--host", "q6600"])).unwrap();
    let res = plan.execute(&|| {}).unwrap();
    let text = cfs_sim::report::tasks_table(&plan, &res);
    let rows: Vec<Vec<&str>> =
        text.lines().skip(2).filter(|l| !l.starts_with('#')).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(text.lines().last().is_some_and(|l| l.starts_with("# balancer: ")), "{text}");
    let num = |r: &[&str], k: usize| r[k].parse::<f64>().unwrap();
    assert_eq!((rows[0][0], rows[0][1]), ("w", "3"), "{text}");
    let w = num(&rows[0], 3) + num(&rows[0], 4);
    assert!((2.99..=3.0).contains(&w) && num(&rows[0], 4) > 2.5, "{text}");
    assert_eq!((rows[1][0], rows[1][1]), ("hog", "1"), "{text}");
    let hog = num(&rows[1], 2) + num(&rows[1], 3) + num(&rows[1], 4);
    assert!((0.99..=1.0).contains(&hog) && num(&rows[1], 2) > 0.99, "{text}");
    // The per-task figures behind it: each waiter's one sleep is open, and
    // it covers the run after its wait and its first step.
    let r = &res.runs[0];
    for t in r.tasks.iter().filter(|t| t.name.starts_with("w#")) {
        let alive = t.wait_sum_ns + t.runtime_ns + t.sleep_open_ns;
        assert!(t.sleep_sum_ns == 0 && (r.end_ns - 100_000..=r.end_ns).contains(&alive), "{t:?}");
    }
}

/// An rt-app file whose tasks all loop a finite number of times runs
/// until they are done, as rt-app does without a duration: 5 loops of
/// 1 ms (± the run-time jitter) on an otherwise idle CPU end the run
/// after ~5 ms, and its rate is those 5 loops over that time, ~1,000/s
/// (not 5 over a second).
#[test]
fn a_finite_rt_app_file_runs_until_its_tasks_end() {
    let w = cfs_sim::parse_workload(r#"{"tasks": {"a": {"cpus": [1], "loop": 5, "run": 1000}}}"#).unwrap();
    let plan = plan_for(Workload::File(Arc::new(w)), &args(&["--host", "q6600"])).unwrap();
    let res = plan.execute(&|| {}).unwrap();
    let r = &res.runs[0];
    assert!((4_850_000..5_150_000).contains(&r.end_ns), "{}", r.end_ns);
    assert!((r.value * r.end_ns as f64 / 1e9 - 5.0).abs() < 1e-6, "{} over {} ns", r.value, r.end_ns);
}

/// A task of a workload file changes its own nice level, policy or CPUs as
/// it runs (`nice`, `policy`, `affinity`; rt-app's phases do the same),
/// and the scheduler sees it at once. Two 1 ms hogs pinned to CPU 0 under
/// 2.6.26 for 1 s; only the second counts its loops, and the first makes
/// one change before its first run:
/// - none: each gets half the CPU, 500 loops less switch and refill costs;
/// - `nice = 5` (weight 335 against 1024): the counted hog gets 1024 /
///   1359 of the CPU, x1.507 the even split;
/// - `policy = "idle"` (SCHED_IDLE, weight 2): 1024 / 1026, 99.8% of the
///   CPU, at least 990 loops;
/// - `affinity = "1"`: the first hog leaves, and the counted one runs
///   alone: 999 loops (the first switch-in delays the 1,000th past 1 s).
#[test]
fn a_file_task_changes_its_own_nice_policy_and_cpus_as_it_runs() {
    let loops = |first_op: &str| {
        let text = format!(
            "duration = \"1s\"\nmetric = \"loops_s\"\n\
             [[task]]\nname = \"other\"\ncpus = \"0\"\nops = [ {first_op}{{ run = \"1ms\" }} ]\n\
             [[task]]\nname = \"counted\"\ncpus = \"0\"\nops = [ {{ run = \"1ms\" }}, {{ progress = 1 }} ]\n"
        );
        let file = cfs_sim::parse_workload(&text).unwrap();
        value(Workload::File(Arc::new(file)), &["--profile", "2.6.26"])
    };
    let even = loops("");
    assert!((480.0..=500.0).contains(&even), "{even}");
    let niced = loops("{ nice = 5 }, ");
    let want = even * (1024.0 / 1359.0) / 0.5;
    assert!((niced - want).abs() <= 0.02 * want, "{niced} against {want:.1}");
    assert!(loops("{ policy = \"idle\" }, ") >= 990.0);
    assert_eq!(loops("{ affinity = \"1\" }, "), 999.0);
}

/// A file task's `yield` is sched_yield(): under 2.6.26 without
/// sched_compat_yield it only updates the yielder's runtime (e490517a
/// sched_fair.c, yield_task_fair), so a task running 100 µs between
/// yields still shares CPU 0 evenly with a 1 ms hog (about 500 loops, as
/// two hogs get); with sched_compat_yield the yielder goes past the
/// rightmost task each time, the hog runs out its slice before the
/// yielder runs again, and it does at least 99% of its lone 1,000.
#[test]
fn a_file_task_yields_as_sched_yield_does() {
    let text = "duration = \"1s\"\nmetric = \"loops_s\"\n\
                [[task]]\nname = \"yielder\"\ncpus = \"0\"\nops = [ { run = \"100us\" }, \"yield\" ]\n\
                [[task]]\nname = \"counted\"\ncpus = \"0\"\nops = [ { run = \"1ms\" }, { progress = 1 } ]\n";
    let file = Arc::new(cfs_sim::parse_workload(text).unwrap());
    let plain = value(Workload::File(file.clone()), &["--profile", "2.6.26"]);
    assert!((480.0..=500.0).contains(&plain), "{plain}");
    let compat = value(Workload::File(file), &["--profile", "2.6.26", "--set", "sched_compat_yield=1"]);
    assert!(compat >= 990.0, "{compat}");
}

/// rt-app's threads are created by its main with pthread_create, so fork
/// balancing places them (sched_balance_self with SD_BALANCE_FORK, which
/// both of the Q6600's levels set: bce7f793 include/linux/topology.h:124,
/// 150), and each sleeps at the start barrier before main, 50 µs later,
/// creates the next. With main running on CPU 0 and the threads asleep:
/// - at the CPU level, find_idlest_group keeps the local pair {0,1} only
///   if 100 × its load < 125 × the least other group's; {2,3} carries 0,
///   and nothing is below 0, so it goes to {2,3} (sched.c:1965);
/// - at CPU 2's MC level the same test, against CPU 3's 0, goes to {3}.
///
/// So all four begin on CPU 3, where a TOML file's instances begin on
/// CPU 0, their first allowed. None of the first three starts its loop
/// (its second slice) before the fourth has been created and released
/// them. (Main runs on CPU 0, where it calibrates by default.)
#[test]
fn rt_app_threads_are_placed_by_fork_balancing_and_start_together() {
    let json = r#"{"global": {"duration": 1}, "tasks": {"w": {"instance": 4, "loop": 1, "run": 1000}}}"#;
    let first_slices = |text: &str| {
        let w = cfs_sim::parse_workload(text).unwrap();
        let mut plan =
            plan_for(Workload::File(Arc::new(w)), &args(&["--host", "q6600", "--duration", "20ms"])).unwrap();
        plan.trace = true;
        let mut res = plan.execute(&|| {}).unwrap();
        let trace = res.trace.take().expect("a trace").to_value().unwrap();
        // Each task's slices (CPU, start µs) in time order.
        let mut slices = std::collections::BTreeMap::<String, Vec<(u64, f64)>>::new();
        for e in trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X") {
            let name = e["name"].as_str().unwrap().to_string();
            slices.entry(name).or_default().push((e["tid"].as_u64().unwrap(), e["ts"].as_f64().unwrap()));
        }
        for s in slices.values_mut() {
            s.sort_by(|a, b| a.1.total_cmp(&b.1));
        }
        slices
    };
    let rt = first_slices(json);
    let threads: Vec<&Vec<(u64, f64)>> = (0..4).map(|i| &rt[&format!("w#{i}")]).collect();
    assert!(threads.iter().all(|s| s[0].0 == 3), "{rt:?}");
    assert_eq!(rt["rt-app"][0].0, 0);
    // The first three wait for the fourth, whose arrival releases them.
    let last_created = threads[3][0].1;
    assert!(threads[..3].iter().all(|s| s.len() > 1 && s[1].1 >= last_created), "{rt:?}");
    let toml = "duration = \"20ms\"\n[[task]]\nname = \"w\"\ninstances = 4\nloop = 1\nops = [ { run = \"1ms\" } ]\n";
    let at_start = first_slices(toml);
    assert!((0..4).all(|i| at_start[&format!("w#{i}")][0].0 == 0), "{at_start:?}");
}

/// A phase's policy is set once, as the phase begins, not on every pass
/// (rt-app.c set_thread_param returns when the object is the one set
/// last). Two CPU-bound tasks pinned to CPU 0, one of them in a phase
/// that names SCHED_OTHER, share the CPU as two nice-0 tasks do: ~0.5 s
/// each of a 1 s run. (Calling sched_setscheduler on every 1 ms pass
/// restarted the caller's slice each time, so the tick never preempted
/// it and it kept the CPU all along.)
#[test]
fn a_phase_policy_does_not_hold_the_cpu() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "p": {"cpus": [0], "phases": {"x": {"policy": "SCHED_OTHER", "run": 1000}}},
        "q": {"cpus": [0], "run": 1000}}}"#;
    let w = cfs_sim::parse_workload(json).unwrap();
    let plan = plan_for(Workload::File(Arc::new(w)), &args(&["--host", "q6600"])).unwrap();
    let res = plan.execute(&|| {}).unwrap();
    let cpu = |name: &str| res.runs[0].tasks.iter().find(|t| t.name == name).unwrap().runtime_ns as f64 / 1e9;
    let (p, q) = (cpu("p"), cpu("q"));
    assert!((0.4..0.6).contains(&p) && (0.4..0.6).contains(&q), "p {p:.3} s, q {q:.3} s");
}

/// rt-app exits with a failure once one `fork` resource has forked
/// FORKS_LIMIT (1024) threads (rt-app.c run_event): 1,024 forks of `f`
/// run to the end, the 1,025th fails the run with a message that says so.
#[test]
fn rt_app_fails_at_its_fork_limit() {
    let run = |forks: u32| {
        let json = format!(
            r#"{{"tasks": {{"b": {{"loop": {forks}, "fork": "f", "sleep": 10}},
                          "f": {{"instance": 0, "loop": 1, "run": 1}}}}}}"#
        );
        let w = cfs_sim::parse_workload(&json).unwrap();
        plan_for(Workload::File(Arc::new(w)), &args(&["--host", "q6600"])).unwrap().execute(&|| {})
    };
    assert!(run(1024).is_ok());
    let e = run(1025).map(|_| ()).unwrap_err().to_string();
    assert!(
        e.contains(r#"b failed at "#) && e.contains(r#""f" reached its fork limit (1024), where rt-app exits"#),
        "{e}"
    );
}
