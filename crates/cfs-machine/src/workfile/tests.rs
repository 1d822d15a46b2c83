//! The workload-file tests: parsing both formats, their errors and limits,
//! and running the resulting scripts.

use super::toml_file::RawOps;
use super::*;

const PINGPONG: &str = r#"
name = "pingpong"
duration = "10ms"
[[task]]
name = "ping"
ops = [ { run = "20us" }, { send = "pong", sync = true }, { wait = "one" }, { progress = 1 } ]
[[task]]
name = "pong"
ops = [ { wait = "one" }, { run = "30us" }, { reply = true } ]
"#;

/// An rt-app task's events: its code after what every thread does before
/// its first phase ([`Launch::RtApp`]: the barrier, the delay, its
/// parameters), which this checks is there.
fn rt_events(w: &FileWorkload, task: usize) -> &[Instr] {
    let code = &w.tasks[task].code;
    assert!(
        matches!(code[..3], [Instr::StartupBarrier, Instr::Delay(_), Instr::SchedParams { id: 0, .. }]),
        "{code:?}"
    );
    &code[3..]
}

#[test]
fn toml_pingpong_parses() {
    let w = parse_workload(PINGPONG).unwrap();
    assert_eq!(w.tasks.len(), 2);
    assert_eq!(w.metric, "units_s");
    assert_eq!(w.duration_ns, Some(10_000_000));
}

#[test]
fn unknown_keys_are_named() {
    let bad = PINGPONG.replace("name = \"ping\"", "name = \"ping\"\nbogus = 3");
    let e = parse_workload(&bad).unwrap_err();
    assert!(e.to_string().contains("\"bogus\""), "{e}");
    let bad = PINGPONG.replace("{ run = \"20us\" }", "{ run = \"20us\", speed = 2 }");
    let e = parse_workload(&bad).unwrap_err();
    assert!(e.to_string().contains("\"speed\"") && e.to_string().contains("task[0].ops[0]"), "{e}");
    let e = parse_workload(r#"{"global": {"duration": 1, "colour": "red"}, "tasks": {"a": {"run": 10}}}"#).unwrap_err();
    assert!(e.to_string().contains("\"colour\""), "{e}");
    let e = parse_workload(r#"{"tasks": {"a": {"run": 10, "flibble0": 3}}}"#).unwrap_err();
    assert!(e.to_string().contains("\"flibble0\"") && e.to_string().contains("tasks.a"), "{e}");
}

#[test]
fn rtapp_subset_parses_in_event_order() {
    let j = r#"{
      "global": {"duration": 2, "calibration": "CPU0", "default_policy": "SCHED_OTHER"},
      "tasks": {
        "thread0": {"instance": 2, "loop": -1, "run": 1000, "sleep": 500, "cpus": [0, 1], "priority": 5},
        "thread1": {"run0": 200, "signal": "q", "run1": 100, "wait": {"ref": "q", "mutex": "m"},
                    "phases": {"p1": {"loop": 3, "timer": {"ref": "t", "period": 1000}}}}
      }
    }"#;
    let w = parse_workload(j).unwrap();
    assert_eq!(w.duration_ns, Some(2_000_000_000));
    assert_eq!(w.tasks[0].instances, 2);
    assert_eq!(w.tasks[0].nice, 5);
    let c = rt_events(&w, 1);
    // loop, run0, signal, run1, wait, phase loop, timer, phase end, progress, loop end
    assert!(matches!(c[1], Instr::Run(Dist::Fixed(200_000))));
    assert!(matches!(c[2], Instr::CondSignal { .. }));
    assert!(matches!(c[3], Instr::Run(Dist::Fixed(100_000))));
    assert_eq!(c[4], Instr::CondWait { cond: 0, mutex: Some(0) });
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        "{",
        "}",
        "[[task]]",
        "[[task]]\nname=1",
        "{\"tasks\": 3}",
        "a = [[[[[[[[]]]]]]]]",
        "[[task]]\nname = \"x\"\nops = [ { loop = { count = 5, ops = [] } } ]",
        "[[task]]\nname = \"x\"\nops = [ { send = \"nobody\" } ]\nfinish = true",
        "[[task]]\nname = \"x\"\nops = [ { run = \"1e30s\" } ]",
        "[[task]]\nname = \"x\"\ninstances = 99999999999\nops = []",
        "[[task]]\nname = \"x\"\ncpus = \"9999999\"\nops = []",
        "{\"tasks\": {\"a\": {\"cpus\": [-1]}}}",
        "{\"tasks\": {\"a\": {\"run\": 1.5e300}}}",
    ] {
        let _ = parse_workload(text);
    }
    let deep = "[".repeat(100_000);
    assert!(parse_workload(&format!("a = {deep}")).is_err());
}

mod test_files {
    //! Helpers the test modules below share.
    use super::*;

    /// A TOML file with a 1 s duration and these `[[task]]` bodies.
    pub(super) fn file(tasks: &[&str]) -> String {
        let mut s = String::from("duration = \"1s\"\n");
        for t in tasks {
            s += &format!("[[task]]\n{t}\n");
        }
        s
    }

    /// The one-line error a file gets.
    pub(super) fn error(text: &str) -> String {
        parse_workload(text).unwrap_err().to_string()
    }

    /// The code of one task of a file.
    pub(super) fn code(text: &str, task: usize) -> Vec<Instr> {
        parse_workload(text).unwrap().tasks[task].code.clone()
    }

    /// The first task's ops between the implicit loop's begin and its end
    /// (the implicit progress count included, when the file has none).
    pub(super) fn body(text: &str) -> Vec<Instr> {
        let code = code(text, 0);
        code[1..code.len() - 1].to_vec()
    }
}

mod value_tests {
    //! Pins for the value helpers: the kind a message names, integers
    //! given as floats, booleans, durations with and without units, policies,
    //! CPU lists at the limits, and the bracket-depth guard.
    use super::test_files::{body, error, file};
    use super::*;

    /// One TOML task `x` with `extra` header lines and `ops`.
    fn toml(extra: &str, ops: &str) -> String {
        file(&[&format!("name = \"x\"\n{extra}\nops = [ {ops} ]")])
    }

    fn task(text: &str) -> TaskDef {
        parse_workload(text).unwrap().tasks.remove(0)
    }

    #[test]
    fn messages_name_what_was_found() {
        let cases = [
            (
                toml("", "{ run = \"1us\" }").replace("name = \"x\"", "name = 1"),
                "at task[0].name: expected a string, found an integer",
            ),
            (toml("finish = \"yes\"", "\"exit\""), "at task[0].finish: expected true or false, found a string"),
            (toml("nice = 1.5", "\"exit\""), "at task[0].nice: expected an integer, found a number"),
            (toml("cpus = true", "\"exit\""), "at task[0].cpus: expected a CPU list such as \"0-3\", found a boolean"),
            (toml("", "{ run = [1] }"), "at task[0].ops[0].run: expected a duration such as \"20us\", found an array"),
            (
                toml("", "{ run = { mean = { a = 1 } } }"),
                "at task[0].ops[0].run.mean: expected a duration such as \"20us\", found a table",
            ),
            (toml("", "3"), "at task[0].ops[0]: expected a table, found an integer"),
            (
                "duration = \"1s\"\n[[task]]\nname = \"x\"\nops = 3\n".to_string(),
                "at task[0].ops: expected an array of ops, found an integer",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(error(&text), want);
        }
        assert_eq!(
            error(r#"{"tasks": {"a": {"run": null}}}"#),
            "at tasks.a.run: expected a duration such as \"20us\", found null"
        );
    }

    /// JSON numbers with no fraction are integers (rt-app writes `2.0`);
    /// beyond 9e15 a float no longer holds every integer, so it is refused.
    #[test]
    fn whole_floats_are_integers_below_9e15() {
        let w = parse_workload(r#"{"tasks": {"a": {"instance": 2.0, "run": 10}}}"#).unwrap();
        assert_eq!(w.tasks[0].instances, 2);
        for bad in ["2.5", "9e15", "-9e15", "1e16"] {
            let text = format!(r#"{{"tasks": {{"a": {{"instance": {bad}, "run": 10}}}}}}"#);
            assert_eq!(error(&text), "at tasks.a.instance: expected an integer, found a number", "{bad}");
        }
        let text = r#"{"tasks": {"a": {"instance": 8999999999999998.0, "run": 10}}}"#;
        assert_eq!(error(text), "at tasks.a.instance: 8999999999999998 is out of range 0..=4096");
    }

    #[test]
    fn booleans_are_read_as_written() {
        assert!(task(&toml("finish = true", "\"exit\"")).finish);
        assert!(!task(&toml("finish = false", "\"exit\"")).finish);
        let text = "duration = \"1s\"\n[[task]]\nname = \"x\"\nops = [ { send = \"x\", sync = false, bytes = 9 }, { send = \"x\" } ]\n";
        let send = |sync, bytes| Instr::Send {
            to: Target::Task { def: 0, instance: None },
            via: Via::Message { sync },
            bytes,
        };
        assert_eq!(body(text), [send(false, 9), send(true, 64), Instr::Progress(1)]);
    }

    /// TOML durations carry a unit; rt-app's bare numbers are µs, integer
    /// or not, and its strings may carry a unit too.
    #[test]
    fn durations_with_and_without_units() {
        assert_eq!(
            body(&toml("", "{ sleep = \"2ms\" }, \"exit\"")),
            [Instr::Sleep(2_000_000), Instr::Exit, Instr::Progress(1)]
        );
        assert_eq!(
            error(&toml("", "{ sleep = 20 }")),
            "at task[0].ops[0].sleep: expected a duration such as \"20us\", found an integer"
        );
        assert_eq!(
            error(&toml("", "{ sleep = 2.5 }")),
            "at task[0].ops[0].sleep: expected a duration such as \"20us\", found a number"
        );
        // A string without a unit is µs in rt-app, and no duration in TOML.
        assert!(error(&toml("", "{ sleep = \"1000\" }")).contains("bad duration \"1000\""));
        let w = parse_workload(r#"{"tasks": {"a": {"run": "1000"}}}"#).unwrap();
        assert_eq!(rt_events(&w, 0)[1], Instr::Run(Dist::Fixed(1_000_000)));
        let w = parse_workload(r#"{"tasks": {"a": {"run": 1000, "sleep": 1.5, "run1": "2ms", "delay": 3}}}"#).unwrap();
        let code = &w.tasks[0].code;
        // `delay` is rt-app's initial delay: once, after the start barrier
        // and before the thread sets its parameters and loops, wherever it
        // stands among the keys; the events loop in document order.
        assert_eq!(
            code[..3],
            [
                Instr::StartupBarrier,
                Instr::Delay(3_000),
                Instr::SchedParams { id: 0, policy: Some(Policy::Normal), nice: 0 }
            ]
        );
        assert!(matches!(code[3], Instr::LoopBegin { count: None, .. }), "{code:?}");
        assert_eq!(
            code[4..7],
            [Instr::Run(Dist::Fixed(1_000_000)), Instr::Sleep(1_500), Instr::Run(Dist::Fixed(2_000_000))]
        );
        assert_eq!(code[7], Instr::Progress(1));
        assert!(matches!(code[8], Instr::LoopEnd { begin: 3 }), "{code:?}");
        // A string with a unit is held to rt-app's C-int bound on µs, as a
        // number is: 2^31 - 1 µs is the longest (about 36 minutes).
        let run = |s: &str| parse_workload(&format!(r#"{{"tasks": {{"a": {{"run": "{s}"}}}}}}"#));
        assert_eq!(rt_events(&run("3ms").unwrap(), 0)[1], Instr::Run(Dist::Fixed(3_000_000)));
        assert_eq!(rt_events(&run("2147483647us").unwrap(), 0)[1], Instr::Run(Dist::Fixed(2_147_483_647_000)));
        let e = run("2147483648us").unwrap_err().to_string();
        assert!(e.contains("is too long; rt-app durations are µs from 0 to 2147483647"), "{e}");
    }

    #[test]
    fn policies_by_name() {
        assert_eq!(task(&toml("policy = \"batch\"", "\"exit\"")).policy, Policy::Batch);
        assert_eq!(task(&toml("policy = \"SCHED_IDLE\"", "\"exit\"")).policy, Policy::Idle);
        assert_eq!(task(&toml("", "\"exit\"")).policy, Policy::Normal);
        // A real-time policy is named as such; anything else is unknown.
        assert_eq!(
            error(&toml("policy = \"fifo\"", "\"exit\"")),
            "at task[0].policy: fifo is not a fair-class policy, and only the fair class is modelled (use normal, \
             batch, idle; SCHED_OTHER, SCHED_BATCH, SCHED_IDLE)"
        );
        assert!(error(&toml("policy = \"SCHED_RR\"", "\"exit\"")).contains("SCHED_RR is not a fair-class policy"));
        assert!(
            error(&toml("policy = \"lazy\"", "\"exit\"")).starts_with("at task[0].policy: unknown policy \"lazy\"")
        );
    }

    /// A CPU list: a list string, an array of CPU numbers or one number,
    /// each below the 1024-CPU limit.
    #[test]
    fn cpu_lists_in_three_forms_up_to_the_limit() {
        let mask = |extra: &str| task(&toml(extra, "\"exit\"")).cpus.unwrap();
        assert_eq!(mask("cpus = \"0-2\""), CpuMask::parse_list("0-2").unwrap());
        assert_eq!(mask("cpus = [1, 3]"), CpuMask::parse_list("1,3").unwrap());
        assert_eq!(mask("cpus = 1023"), CpuMask::single(1023));
        assert_eq!(mask("cpus = [1023]"), CpuMask::single(1023));
        assert_eq!(error(&toml("cpus = 1024", "\"exit\"")), "at task[0].cpus: 1024 is out of range 0..=1023");
        assert_eq!(error(&toml("cpus = [0, 1024]", "\"exit\"")), "at task[0].cpus[1]: 1024 is out of range 0..=1023");
        assert_eq!(error(&toml("cpus = []", "\"exit\"")), "at task[0].cpus: empty CPU list");
        assert_eq!(
            body(&toml("", "{ affinity = [2] }")),
            [Instr::Affinity(Box::new(CpuMask::single(2))), Instr::Progress(1)]
        );
    }

    /// Files nested deeper than 80 brackets (the TOML parser's own limit)
    /// are refused before parsing; brackets side by side do not add up.
    #[test]
    fn bracket_depth_guard() {
        let nested = |n: usize| format!("a = {}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(bracket_depth(&nested(81)), 81);
        assert_eq!(error(&nested(81)), "nesting deeper than 80 levels");
        // 80 pass the guard and reach the TOML reader, which refuses the
        // unknown key `a`.
        assert!(error(&nested(80)).starts_with("unknown key \"a\""), "{}", error(&nested(80)));
        assert_eq!(bracket_depth("[]{}[{}]"), 2);
        let many = vec!["{ run = \"1us\" }"; 70].join(", ");
        assert_eq!(body(&toml("", &many)).len(), 71);
    }
}

mod structure_tests {
    //! Pins for how a file becomes task code: names and targets, loops and
    //! their jump indices, run-time distributions, the defaults, the limits,
    //! and the rt-app events.
    use super::test_files::{body, code, error, file};
    use super::*;

    #[test]
    fn targets_and_names() {
        assert_eq!(parse_target("parent"), RawTarget::Parent);
        assert_eq!(parse_target(" pong#3 "), RawTarget::Name("pong".into(), Some(3)));
        assert_eq!(parse_target("pong#x"), RawTarget::Name("pong#x".into(), None));
        assert_eq!(parse_target("a#b#2"), RawTarget::Name("a#b".into(), Some(2)));
        let mut n = Names::default();
        assert_eq!((n.cond("a"), n.cond("b"), n.cond("a"), n.cond("b")), (0, 1, 0, 1));
        assert_eq!(n.conds, ["a", "b"]);
        // `a` is only forked (by b), so it has a parent to send to.
        let text = file(&[
            "name = \"a\"\ninstances = 0\nops = [ { send = \"b#1\" }, { broadcast = \"b\", sync = false }, { send = \"parent\" }, { reply = true, bytes = 7 }, \"wait\" ]",
            "name = \"b\"\ninstances = 2\nops = [ { signal = \"q\" }, { broad = \"r\" }, { cond_wait = \"q\" }, { fork = \"a\" } ]",
        ]);
        let w = parse_workload(&text).unwrap();
        let send = |to, sync, bytes| Instr::Send { to, via: Via::Message { sync }, bytes };
        assert_eq!(
            w.tasks[0].code[1..5],
            [
                send(Target::Task { def: 1, instance: Some(1) }, true, 64),
                send(Target::All(1), false, 64),
                send(Target::Parent, true, 64),
                send(Target::Reply, true, 7)
            ]
        );
        assert_eq!(
            w.tasks[1].code[1..5],
            [
                Instr::CondSignal { cond: 0, all: false },
                Instr::CondSignal { cond: 1, all: true },
                Instr::CondWait { cond: 0, mutex: None },
                Instr::Fork(0)
            ]
        );
        assert_eq!(w.conds, ["q", "r"]);
    }

    #[test]
    fn unresolvable_targets_are_errors() {
        let e = error(&file(&["name = \"a\"\nops = [ { send = \"zz\" } ]"]));
        assert_eq!(e, "at task[0].ops[0].send: no task named \"zz\" (tasks: a)");
        let e = error(&file(&["name = \"a\"\ninstances = 2\nops = [ { send = \"a#2\" } ]"]));
        assert_eq!(e, "at task[0].ops[0].send: task \"a\" has 2 instance(s), no #2");
        assert!(parse_workload(&file(&["name = \"a\"\ninstances = 2\nops = [ { send = \"a#1\" } ]"])).is_ok());
        let e = error(&file(&[
            "name = \"a\"\nops = [ { send = \"b\" } ]",
            "name = \"b\"\ninstances = 0\nops = [ \"exit\" ]",
        ]));
        assert_eq!(e, "at task[0].ops[0].send: task \"b\" has no instances started at t=0 to send to");
        let e = error(&file(&["name = \"a\"\nops = [ { fork = \"b\" } ]"]));
        assert_eq!(e, "at task[0].ops[0].fork: no task named \"b\" (tasks: a)");
    }

    /// `start_measuring`, bare or as `= true`, is the engine's
    /// StartMeasuring; `= false` is refused like `exit = false`.
    #[test]
    fn start_measuring_is_an_op() {
        let text = file(&[
            "name = \"a\"\nops = [ \"start_measuring\", { start_measuring = true }, { progress = 2 }, { run = \"1us\" } ]",
        ]);
        assert_eq!(
            body(&text),
            [Instr::StartMeasuring, Instr::StartMeasuring, Instr::Progress(2), Instr::Run(Dist::Fixed(1_000))]
        );
        let bad = file(&["name = \"a\"\nops = [ { start_measuring = false } ]"]);
        assert_eq!(error(&bad), "at task[0].ops[0].start_measuring: only `true` makes sense here");
    }

    /// Loops nest; each LoopBegin holds the index of its LoopEnd and back.
    /// The task's own loop wraps everything, with one implicit progress per
    /// pass when no op counts progress.
    #[test]
    fn loops_nest_and_know_their_ends() {
        let text = file(&[
            "name = \"a\"\nloop = 3\nops = [ { loop = { count = 2, ops = [ { run = \"1us\" }, { loop = { ops = [ \"yield\" ] } } ] } }, \"exit\" ]",
        ]);
        let c = code(&text, 0);
        assert_eq!(
            c,
            [
                Instr::LoopBegin { count: Some(3), end: 9 },
                Instr::LoopBegin { count: Some(2), end: 6 },
                Instr::Run(Dist::Fixed(1_000)),
                Instr::LoopBegin { count: None, end: 5 },
                Instr::Yield,
                Instr::LoopEnd { begin: 3 },
                Instr::LoopEnd { begin: 1 },
                Instr::Exit,
                Instr::Progress(1),
                Instr::LoopEnd { begin: 0 },
            ]
        );
        // With a progress op anywhere in the file, none is added; loop = -1
        // is forever, loop = 0 never.
        let text = file(&[
            "name = \"a\"\nloop = -1\nops = [ { progress = 5 }, \"yield\" ]",
            "name = \"b\"\nloop = 0\nops = [ \"yield\" ]",
        ]);
        assert_eq!(
            code(&text, 0),
            [Instr::LoopBegin { count: None, end: 3 }, Instr::Progress(5), Instr::Yield, Instr::LoopEnd { begin: 0 }]
        );
        assert_eq!(
            code(&text, 1),
            [Instr::LoopBegin { count: Some(0), end: 2 }, Instr::Yield, Instr::LoopEnd { begin: 0 }]
        );
        assert_eq!(parse_workload(&text).unwrap().metric, "units_s");
        assert_eq!(
            error(&file(&["name = \"a\"\nloop = -2\nops = [ \"yield\" ]"])),
            "at task[0].loop: -2 is out of range -1..=9223372036854775807"
        );
    }

    #[test]
    fn run_time_distributions() {
        let run = |spec: &str| -> Result<Dist, String> {
            let text = file(&[&format!("name = \"a\"\nops = [ {{ run = {spec} }} ]")]);
            match parse_workload(&text) {
                Ok(w) => match &w.tasks[0].code[1] {
                    Instr::Run(d) => Ok(*d),
                    other => panic!("{other:?}"),
                },
                Err(e) => Err(e.to_string()),
            }
        };
        assert_eq!(run("\"5us\""), Ok(Dist::Fixed(5_000)));
        assert_eq!(run("{ mean = \"5us\" }"), Ok(Dist::Fixed(5_000)));
        assert_eq!(run("{ mean = \"5us\", dist = \"exp\" }"), Ok(Dist::Exp { mean: 5_000 }));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\" }"), Ok(Dist::normal_cv(10_000.0, 0.1)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 0.5 }"), Ok(Dist::normal_cv(10_000.0, 0.5)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 10 }"), Ok(Dist::normal_cv(10_000.0, 10.0)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 10.0 }"), Ok(Dist::normal_cv(10_000.0, 10.0)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 0 }"), Ok(Dist::normal_cv(10_000.0, 0.0)));
        assert_eq!(
            run("{ mean = \"10us\", dist = \"normal\", cv = 11 }"),
            Err("at task[0].ops[0].run.cv: 11 is not in 0..=10".into())
        );
        assert_eq!(
            run("{ mean = \"10us\", dist = \"normal\", cv = -0.5 }"),
            Err("at task[0].ops[0].run.cv: -0.5 is not in 0..=10".into())
        );
        assert_eq!(
            run("{ mean = \"10us\", dist = \"normal\", cv = \"high\" }"),
            Err("at task[0].ops[0].run.cv: expected a number in 0..=10, found a string".into())
        );
        assert_eq!(
            run("{ dist = \"uniform\", min = \"1us\", max = \"3us\" }"),
            Ok(Dist::Uniform { lo: 1_000, hi: 3_000 })
        );
        assert_eq!(
            run("{ dist = \"uniform\", min = \"2us\", max = \"2us\" }"),
            Ok(Dist::Uniform { lo: 2_000, hi: 2_000 })
        );
        assert_eq!(
            run("{ dist = \"uniform\", min = \"3us\", max = \"1us\" }"),
            Err("at task[0].ops[0].run: dist \"uniform\" needs min <= max".into())
        );
        assert_eq!(run("{ dist = \"exp\" }"), Err("at task[0].ops[0].run: dist \"exp\" needs `mean`".into()));
        assert_eq!(
            run("{ mean = \"1us\", dist = \"pareto\" }"),
            Err("at task[0].ops[0].run.dist: unknown distribution \"pareto\" (known: fixed, exp, normal, uniform)"
                .into())
        );
    }

    /// A task's defaults, the file's, and what a file must have.
    #[test]
    fn defaults_and_requirements() {
        let w = parse_workload(&file(&["name = \"a\"\nops = [ \"yield\" ]"])).unwrap();
        assert_eq!((w.name.as_str(), w.metric.as_str(), w.warmup_ns), ("workload", "loops_s", 0));
        let t = &w.tasks[0];
        assert_eq!((t.instances, t.nice, t.ws_kb, t.finish, t.cpus), (1, 0, 64, false, None));
        let w = parse_workload("name = \"n\"\nmetric = \"m_s\"\nwarmup = \"5ms\"\n[[task]]\nname = \"a\"\nfinish = true\nops = [ \"exit\" ]").unwrap();
        assert_eq!((w.name.as_str(), w.metric.as_str(), w.warmup_ns, w.duration_ns), ("n", "m_s", 5_000_000, None));
        assert_eq!(
            error("[[task]]\nname = \"a\"\nops = [ \"exit\" ]"),
            "give a `duration` or mark a task started at t=0 with finish = true"
        );
        assert_eq!(
            error(
                "[[task]]\nname = \"a\"\ninstances = 0\nfinish = true\nops = [ \"exit\" ]\n[[task]]\nname = \"b\"\nops = [ \"exit\" ]"
            ),
            "give a `duration` or mark a task started at t=0 with finish = true"
        );
        assert_eq!(error("duration = \"1s\""), "no [[task]] tables");
        assert_eq!(
            error(&file(&["name = \"a\"\nops = [ \"exit\" ]", "name = \"a\"\nops = [ \"exit\" ]"])),
            "at task[1]: duplicate task name \"a\""
        );
        assert_eq!(error(&file(&["ops = [ \"exit\" ]"])), "at task[0]: missing `name`");
        assert_eq!(error(&file(&["name = \"a\""])), "at task[0]: missing `ops`");
        assert_eq!(
            error(&file(&["name = \"a\"\ninstances = 0\nops = [ \"exit\" ]"])),
            "no task has instances at start"
        );
        // 4096 instances in all at most.
        assert!(parse_workload(&file(&["name = \"a\"\ninstances = 4096\nops = [ \"exit\" ]"])).is_ok());
        assert_eq!(
            error(&file(&["name = \"a\"\ninstances = 4096\nops = [ \"exit\" ]", "name = \"b\"\nops = [ \"exit\" ]"])),
            "4097 tasks at start; at most 4096"
        );
        // At most 256 task definitions.
        let many: Vec<String> =
            (0..257).map(|i| format!("name = \"t{i}\"\ninstances = 0\nops = [ \"exit\" ]")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(error(&file(&refs)), "at task: need 1..=256 tasks");
        let mut ok = file(&refs[..256]);
        ok = ok.replacen("instances = 0", "instances = 1", 1);
        assert!(parse_workload(&ok).is_ok());
    }

    #[test]
    fn op_forms_and_their_errors() {
        let body = |ops: &str| body(&file(&[&format!("name = \"a\"\nops = [ {ops} ]")]));
        assert_eq!(
            body(
                "{ wait = \"one\" }, { wait = \"all\" }, { wait = true }, \"wait\", \"yield\", { nice = -20 }, { policy = \"idle\" }, { progress = 0 }"
            ),
            [
                Instr::Wait { all: false },
                Instr::Wait { all: true },
                Instr::Wait { all: false },
                Instr::Wait { all: false },
                Instr::Yield,
                Instr::Nice(-20),
                Instr::Policy(Policy::Idle),
                Instr::Progress(0)
            ]
        );
        assert_eq!(
            body("{ timer = \"10ms\" }, { timer = { period = \"5ms\", ref = \"t\" } }"),
            [
                Instr::Timer { slot: TimerSlot::Own(0), period: 10_000_000, absolute: false },
                Instr::Timer { slot: TimerSlot::Shared(0), period: 5_000_000, absolute: false },
                Instr::Progress(1)
            ]
        );
        let e = |ops: &str| error(&file(&[&format!("name = \"a\"\nops = [ {ops} ]")]));
        assert_eq!(e("{ wait = \"some\" }"), "at task[0].ops[0].wait: expected \"one\" or \"all\"");
        assert_eq!(e("{ exit = false }"), "at task[0].ops[0].exit: only `true` makes sense here");
        assert_eq!(e("{ yield = false }"), "at task[0].ops[0].yield: only `true` makes sense here");
        assert_eq!(e("{ timer = \"0s\" }"), "at task[0].ops[0].timer: timer period must be positive");
        assert_eq!(
            e("{ timer = { period = \"1ms\", mode = \"soon\" } }"),
            "at task[0].ops[0].timer.mode: expected \"relative\" or \"absolute\", found \"soon\""
        );
        assert_eq!(e("{ timer = { ref = \"t\" } }"), "at task[0].ops[0].timer: missing `period`");
        assert_eq!(e("{ nice = 20 }"), "at task[0].ops[0].nice: 20 is out of range -20..=19");
        assert_eq!(e("{ loop = { count = 2 } }"), "at task[0].ops[0].loop: missing `ops`");
        assert!(
            e("{ run = \"1us\", sleep = \"1us\" }")
                .starts_with("at task[0].ops[0]: unknown key \"sleep\" (known: run)")
        );
        // Two ops in one table: TOML hands the keys over sorted, so the
        // first op key is `reply`, and `send` is then the stray one.
        assert_eq!(
            e("{ send = \"a\", reply = true }"),
            "at task[0].ops[0]: unknown key \"send\" (known: reply, sync, bytes, stream)"
        );
        assert!(e("{ fly = 1 }").starts_with("at task[0].ops[0]: no op in [\"fly\"]"));
        let mut out = RawOps::default();
        let ops = V::Arr(vec![V::Str("yield".into())]);
        assert!(TomlFile::ops(&ops, "p", &mut Names::default(), &mut out, MAX_DEPTH).is_ok());
        let deep = TomlFile::ops(&ops, "p", &mut Names::default(), &mut out, MAX_DEPTH + 1).unwrap_err();
        assert_eq!(deep.to_string(), "at p: loops nested deeper than 24");
    }

    #[test]
    fn rt_app_globals_tasks_and_events() {
        let w = parse_workload(r#"{"global": {"duration": -1, "default_policy": "SCHED_BATCH", "logdir": "."}, "tasks": {"a": {"run": 1}}}"#).unwrap();
        assert_eq!(
            (w.duration_ns, w.tasks[0].policy, w.metric.as_str(), w.name.as_str()),
            (Some(1_000_000_000), Policy::Batch, "loops_s", "rt-app")
        );
        let w = parse_workload(r#"{"global": {"duration": 0}, "tasks": {"a": {"run": 1}}}"#).unwrap();
        assert_eq!(w.duration_ns, Some(1_000_000_000));
        let w = parse_workload(
            r#"{"global": {"duration": 3}, "tasks": {"a": {"run": 1, "policy": "SCHED_IDLE", "ws_kb": 8, "loop": 4}}}"#,
        )
        .unwrap();
        assert_eq!((w.duration_ns, w.tasks[0].policy, w.tasks[0].ws_kb), (Some(3_000_000_000), Policy::Idle, 8));
        assert_eq!(rt_events(&w, 0)[0], Instr::LoopBegin { count: Some(4), end: 7 });
        assert_eq!(error(r#"{"global": {}}"#), "missing `tasks`");
        assert_eq!(error(r#"{"tasks": {}}"#), "at tasks: need 1..=256 tasks");
        assert!(error(r#"{"tasks": {"a": {"jump": 1}}}"#).starts_with("at tasks.a: unknown key \"jump\""));
        // An unknown key inside a task-level event object is that object's,
        // reported at its place with its own known keys.
        let e = error(r#"{"tasks": {"a": {"timer": {"ref": "t", "period": 1000, "foo": 1}}}}"#);
        assert!(e.starts_with("at tasks.a.timer: unknown key \"foo\" (known: ref, period, mode"), "{e}");
        // Events in document order, suffixes allowed; a phase loops once
        // unless told; sync is signal then wait; suspend waits, under the
        // mutex its value names, on the condition of that name (its task's
        // own when the value is empty, as rt-app's workgen fills it);
        // resume broadcasts the condition it names under the mutex of that
        // name, as rt-app's do.
        let w = parse_workload(
            r#"{"tasks": {
                "a": {"sync3": "c", "lock": "m", "unlock": "m", "resume": "b", "suspend0": "x", "yield": "y", "fork": "b",
                      "phases": {"p": {"runtime": 7, "timer": {"ref": "t", "period": 100, "mode": "absolute"}},
                                 "q": {"loop": 2, "broad": {"ref": "c", "mutex": "m"}}}},
                "b": {"instance": 1, "wait": "c", "suspend": ""}
            }}"#,
        )
        .unwrap();
        let c = rt_events(&w, 0);
        let wait = |cond, mutex| Instr::CondWait { cond, mutex };
        assert_eq!(
            c[1..],
            [
                Instr::CondSignal { cond: 0, all: false },
                wait(0, None),
                Instr::Lock(0),
                Instr::Unlock(0),
                // resume "b": condition b (1) under mutex b (1)
                Instr::Lock(1),
                Instr::CondSignal { cond: 1, all: true },
                Instr::Unlock(1),
                // suspend "x": condition x (2) under mutex x (2)
                Instr::Lock(2),
                wait(2, Some(2)),
                Instr::Unlock(2),
                Instr::Yield,
                Instr::Fork(1),
                Instr::LoopBegin { count: Some(1), end: 19 },
                // `runtime` is wall-clock time, `run` CPU work.
                Instr::RunWall(7_000),
                Instr::Timer { slot: TimerSlot::Shared(0), period: 100_000, absolute: true },
                Instr::LoopEnd { begin: 16 },
                Instr::LoopBegin { count: Some(2), end: 22 },
                Instr::CondSignal { cond: 0, all: true },
                Instr::LoopEnd { begin: 20 },
                Instr::Progress(1),
                Instr::LoopEnd { begin: 3 },
            ]
        );
        // "t" is a shared timer: the task has none of its own.
        assert_eq!((w.tasks[0].timers, w.timers.as_slice()), (0, &["t".to_string()][..]));
        // b waits on c, then suspends on its own name's condition, which a resumes.
        assert_eq!(rt_events(&w, 1)[1..5], [wait(0, None), Instr::Lock(1), wait(1, Some(1)), Instr::Unlock(1)]);
        // a's `suspend0: "x"` names condition and mutex x, which a
        // `resume: "x"` would wake (rt-app pairs them by that string).
        assert_eq!(w.conds, ["c", "b", "x"]);
        assert_eq!(w.mutexes, ["m", "b", "x"]);
        assert_eq!(
            error(r#"{"tasks": {"a": {"timer": {"ref": "t", "period": 0}}}}"#),
            "at tasks.a.timer: timer period must be positive"
        );
        assert_eq!(error(r#"{"tasks": {"a": {"timer": {"ref": "t"}}}}"#), "at tasks.a.timer: missing `period`");
        assert_eq!(error(r#"{"tasks": {"a": {"wait": {"mutex": "m"}}}}"#), "at tasks.a.wait: missing `ref`");
        assert_eq!(
            error(r#"{"tasks": {"a": {"wait": 3}}}"#),
            "at tasks.a.wait: expected a name or {ref, mutex}, found an integer"
        );
        // A key given twice in one object, a task's or an event's, is
        // refused where it is read (json-c would keep the last value only).
        // serde_json places the error at the end of the repeated key's value.
        assert_eq!(
            error(r#"{"tasks": {"a": {"run": 1}, "a": {"run": 2}}}"#),
            "JSON: key \"a\" appears twice in one object (rt-app would keep only its last value) at line 1 column 44"
        );
        assert_eq!(
            error(r#"{"tasks": {"a": {"run": 10, "sleep2": 5, "sleep2": 20}}}"#),
            "JSON: key \"sleep2\" appears twice in one object (rt-app would keep only its last value; number \
             repeated events: run0, run1) at line 1 column 54"
        );
    }
}

mod limit_tests {
    //! The size limits, at their edges.
    use super::test_files::error;
    use super::*;

    /// `n` JSON object members, comma-separated.
    fn members(n: usize, member: impl Fn(usize) -> String) -> String {
        (0..n).map(member).collect::<Vec<_>>().join(",")
    }

    /// A run's duration is at most the simulated-time cap, 600 s: a longer
    /// one could only end in the cap's error, after ten simulated minutes.
    #[test]
    fn a_duration_is_at_most_600_s() {
        let toml = |d: &str| format!("duration = \"{d}\"\n[[task]]\nname = \"a\"\nops = [ \"yield\" ]\n");
        assert_eq!(parse_workload(&toml("600s")).unwrap().duration_ns, Some(600_000_000_000));
        assert_eq!(error(&toml("600000001us")), "at duration: must be at most 600s, the simulated-time cap of a run");
        let json = |d: u32| format!(r#"{{"global": {{"duration": {d}}}, "tasks": {{"a": {{"run": 10}}}}}}"#);
        assert_eq!(parse_workload(&json(600)).unwrap().duration_ns, Some(600_000_000_000));
        assert!(error(&json(601)).starts_with("at global.duration:"), "{}", error(&json(601)));
    }

    /// A TOML task holds at most 100,000 ops: the count is checked after
    /// each op, so 100,000 pass and 100,001 do not (before, it was checked
    /// before each op, and 100,001 passed). A loop counts two, its begin
    /// and its end: 99,997 yields and a loop of one make 100,000.
    #[test]
    fn at_most_100_000_ops_a_task() {
        let file = |n: usize, tail: &str| {
            format!("duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ {}{tail} ]\n", vec!["\"yield\""; n].join(","))
        };
        assert!(parse_workload(&file(100_000, "")).is_ok());
        assert_eq!(error(&file(100_001, "")), "at task[0].ops: more than 100000 ops");
        let looped = ", { loop = { count = 2, ops = [ \"yield\" ] } }";
        assert!(parse_workload(&file(99_997, looped)).is_ok());
        assert_eq!(error(&file(99_998, looped)), "at task[0].ops: more than 100000 ops");
    }

    /// A file holds at most 200,000 ops in all, whatever each task holds:
    /// two tasks of 100,000 pass, and one more op in a third task does not;
    /// the error names the task that crossed the line.
    #[test]
    fn at_most_200_000_ops_a_file() {
        let task = |name: &str, n: usize| {
            format!("[[task]]\nname = \"{name}\"\nops = [ {} ]\n", vec!["\"yield\""; n].join(","))
        };
        let two = format!("duration = \"1s\"\n{}{}", task("a", 100_000), task("b", 100_000));
        assert_eq!(parse_workload(&two).unwrap().tasks.len(), 2);
        let three = format!("{two}{}", task("c", 1));
        assert_eq!(error(&three), "at task[2]: more than 200000 ops in the file, with this task's");
        // rt-app the same: 2 x 100,000 events, then 1.
        let rt = |n: usize| members(n, |i| format!("\"run{i}\": 1"));
        let two = format!(r#"{{"tasks": {{"a": {{ {} }}, "b": {{ {} }}"#, rt(100_000), rt(100_000));
        assert_eq!(parse_workload(&format!("{two}}}}}")).unwrap().tasks.len(), 2);
        let three = format!(r#"{two}, "c": {{ {} }}}}}}"#, rt(1));
        assert_eq!(error(&three), "at tasks.c: more than 200000 events in the file, with this task's");
    }

    /// Before parsing, a file may hold at most 1,000,000 commas and opening
    /// brackets (5 for each of 200,000 ops), since the TOML parser would
    /// build ~1.4 KB for each inline table before any op count is checked.
    /// Commas in a comment count too: the scan does not parse. The file
    /// below has 4 brackets of its own (`[[task]]`, `[` and `{`), so a
    /// comment of 999,996 commas makes it 1,000,000, and one more 1,000,001.
    #[test]
    fn at_most_a_million_separators_before_parsing() {
        let file = |commas: usize| {
            format!(
                "# {}\nduration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ {{ run = \"1us\" }} ]\n",
                ",".repeat(commas)
            )
        };
        assert!(parse_workload(&file(999_996)).is_ok());
        assert_eq!(
            error(&file(999_997)),
            "1000001 commas and brackets: too large for a workload file (at most 1000000, five for each of 200000 ops; comments and strings count too)"
        );
    }

    /// rt-app events count toward the same limit: the phases' code is
    /// checked after each phase, and the task's whole code once it is read.
    /// A one-event phase is 3 ops (its loop's begin, the event, its end),
    /// a two-event one 4: 33,332 of the first and one of the second make
    /// exactly 100,000, one more event in the last phase 100,001. 33,333
    /// one-event phases (99,999) and one event of the task's own also make
    /// 100,000; a second event of its own, 100,001. (A `delay` runs once,
    /// before the loop, and is not counted.)
    #[test]
    fn rt_app_phases_count_toward_the_limit() {
        let file = |phases: usize, last: &str, own: &str| {
            let p = members(phases, |i| format!("\"p{i}\": {{\"yield\": \"y\"}}"));
            format!(r#"{{"tasks": {{"a": {{"delay": 1, {own} "phases": {{ {p}, "z": {{ {last} }} }}}}}}}}"#)
        };
        let two = r#""yield": "y", "run": 1"#;
        let three = r#""yield": "y", "run": 1, "sleep": 1"#;
        assert!(parse_workload(&file(33_332, two, "")).is_ok());
        assert_eq!(error(&file(33_332, three, "")), "at tasks.a.phases: more than 100000 events");
        let one = r#""yield": "y""#;
        assert!(parse_workload(&file(33_332, one, r#""run": 1,"#)).is_ok());
        assert_eq!(error(&file(33_332, one, r#""run": 1, "sleep": 1,"#)), "at tasks.a: more than 100000 events");
    }

    /// A loop inside ops read at depth 24 is read at depth 25.
    #[test]
    fn a_loop_body_is_one_level_deeper() {
        let looped = V::Arr(vec![V::Obj(vec![(
            "loop".into(),
            V::Obj(vec![("ops".into(), V::Arr(vec![V::Str("yield".into())]))]),
        )])]);
        let mut out = RawOps::default();
        assert!(TomlFile::ops(&looped, "p", &mut Names::default(), &mut out, MAX_DEPTH - 1).is_ok());
        let e = TomlFile::ops(&looped, "p", &mut Names::default(), &mut out, MAX_DEPTH).unwrap_err();
        assert_eq!(e.to_string(), "at p[0].loop.ops: loops nested deeper than 24");
    }

    /// rt-app takes 1..=256 task definitions.
    #[test]
    fn rt_app_takes_up_to_256_tasks() {
        let file = |n: usize| format!("{{\"tasks\": {{ {} }}}}", members(n, |i| format!("\"t{i}\": {{\"run\": 1}}")));
        assert!(parse_workload(&file(256)).is_ok());
        assert_eq!(error(&file(257)), "at tasks: need 1..=256 tasks");
    }
}

mod script_tests {
    //! Pins for running a file: the initial tasks and the interpreter.
    use super::*;
    use crate::program::Msg;
    use crate::workloads::Policies;
    use rand::SeedableRng;

    fn load(text: &str, nr_cpus: usize, opts: &WorkloadOpts) -> Vec<TaskSpec> {
        Arc::new(parse_workload(text).unwrap()).instantiate(nr_cpus, opts).0
    }

    /// Steps a program `n` times at `now`, delivering `received` to the
    /// first step, as task 0 forked by `parent`; the actions as text.
    fn run(p: &mut dyn Program, n: usize, now: u64, received: &[Msg], parent: Option<TaskRef>) -> Vec<String> {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        (0..n)
            .map(|k| {
                let got = if k == 0 { received } else { &[] };
                let mut cx = StepCx { now, me: 0, rng: &mut rng, received: got, blocked: true, forked: None, parent };
                format!("{:?}", p.step(&mut cx))
            })
            .collect()
    }

    /// The threads rt-app's main (task 0 of an rt-app file) creates, in
    /// creation order, stepped by `main` to its exit: each fork's child
    /// (the program, with its name and parameters).
    fn rt_threads(text: &str, opts: &WorkloadOpts) -> Vec<ForkSpec> {
        let mut tasks = load(text, 4, opts);
        assert_eq!(tasks.len(), 1, "rt-app's main alone");
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut out = Vec::new();
        for _ in 0..10_000 {
            let mut cx =
                StepCx { now: 0, me: 0, rng: &mut rng, received: &[], blocked: false, forked: None, parent: None };
            match tasks[0].program.step(&mut cx) {
                Action::Fork(spec) => out.push(*spec),
                Action::Exit => return out,
                _ => {}
            }
        }
        panic!("main never exits");
    }

    /// Steps an rt-app thread through what it does before its first
    /// phase, at `now`: the barrier (`arrival`: its call there), then
    /// sched_setscheduler and the nice level (here SCHED_OTHER, nice 0).
    fn start(p: &mut dyn Program, now: u64, arrival: &str) {
        let steps = run(p, 3, now, &[], None);
        assert_eq!(steps, [arrival, "SetPolicy(Normal)", "SetNice(0)"]);
    }

    /// Every instance of every definition, in order; instances are named
    /// `name#i` when there are several; the finish set lists the finish
    /// tasks' indices; a task starts on its first allowed CPU (or the last
    /// CPU of a smaller host); `--policy` overrides the file's policy.
    #[test]
    fn instances_names_cpus_and_finish() {
        let text = "[[task]]\nname = \"a\"\ninstances = 2\ncpus = \"2-3\"\nops = [ \"exit\" ]\n\
                    [[task]]\nname = \"b\"\nfinish = true\npolicy = \"batch\"\nops = [ \"exit\" ]\n\
                    [[task]]\nname = \"c\"\ninstances = 0\nops = [ \"exit\" ]\n\
                    [[task]]\nname = \"d\"\ncpus = \"9\"\nfinish = true\nnice = 3\nws_kb = 7\nops = [ \"exit\" ]\n";
        let w = Arc::new(parse_workload(text).unwrap());
        let (tasks, finish) = w.instantiate(4, &WorkloadOpts::default());
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a#0", "a#1", "b", "d"]);
        assert_eq!(finish, [2, 3]);
        let cpus: Vec<usize> = tasks.iter().map(|t| t.cpu).collect();
        assert_eq!(cpus, [2, 2, 0, 3]);
        assert_eq!((tasks[3].params.nice, tasks[3].ws_kb, tasks[3].params.allowed), (3, 7, CpuMask::single(9)));
        assert_eq!(tasks[2].params.policy, Policy::Batch);
        assert_eq!(tasks[0].params.policy, Policy::Normal);
        let opts = WorkloadOpts {
            policies: Policies { all: Some(Policy::Idle), ..Policies::default() },
            ..WorkloadOpts::default()
        };
        let (tasks, _) = w.instantiate(4, &opts);
        assert!(tasks.iter().all(|t| t.params.policy == Policy::Idle));
    }

    /// An rt-app file starts as rt-app does: its main alone (task 0, on
    /// CPU 0, SCHED_OTHER unless `--policy` says otherwise) creates every
    /// instance in file order, each after 50 µs of its own work, the
    /// children inheriting its parameters (`params: None`) and keeping
    /// their working sets, then exits. The threads are tasks 1, 2, ... in
    /// that order, so the finish set and every send name them so; the
    /// start barrier's condition comes after the file's own.
    #[test]
    fn rt_app_main_creates_every_thread_in_file_order_then_exits() {
        let text = r#"{"tasks": {"a": {"instance": 2, "loop": 1, "run": 10, "ws_kb": 7, "signal": "c"},
                                  "f": {"instance": 0, "loop": 1, "run": 10},
                                  "b": {"loop": 2, "wait": "c", "cpus": [2]}}}"#;
        let w = Arc::new(parse_workload(text).unwrap());
        assert_eq!(w.launch, Launch::RtApp { main_cpu: 0 });
        let (tasks, finish) = w.instantiate(4, &WorkloadOpts::default());
        assert_eq!(tasks.len(), 1);
        assert_eq!((tasks[0].name.as_str(), tasks[0].cpu, tasks[0].params), ("rt-app", 0, TaskParams::normal()));
        assert_eq!(finish, [1, 2, 3]);
        assert_eq!(w.sync_objects().conds, 2, "the file's c, then threads_barrier");
        let mut main = tasks.into_iter().next().unwrap().program;
        let steps = run(main.as_mut(), 7, 0, &[], None);
        let fork = |name: &str| format!("Fork(ForkSpec {{ name: {name:?}, params: None, .. }})");
        assert_eq!(steps, ["Run(50000)", &fork("a#0"), "Run(50000)", &fork("a#1"), "Run(50000)", &fork("b"), "Exit"]);
        let threads = rt_threads(text, &WorkloadOpts::default());
        assert_eq!(threads.iter().map(|t| t.ws_kb).collect::<Vec<_>>(), [7, 7, 64]);
        let opts = WorkloadOpts {
            policies: Policies { all: Some(Policy::Batch), ..Policies::default() },
            ..WorkloadOpts::default()
        };
        let (tasks, _) = w.instantiate(4, &opts);
        assert_eq!(tasks[0].params.policy, Policy::Batch);
        // A TOML file's instances exist at t=0 themselves.
        assert_eq!(parse_workload(PINGPONG).unwrap().launch, Launch::AtStart);
    }

    /// What an rt-app thread does before its first phase (rt-app.c
    /// thread_body). Thread 0 reads the clock into t_zero, here at 5 µs;
    /// each thread main created then waits at the start barrier, and the
    /// last to arrive (the third) wakes the others with one broadcast. Each
    /// then sleeps until t_zero + its delay (a thread at 50 µs with a
    /// 100 µs delay sleeps 55 µs; one past its time does not sleep), and
    /// set_thread_param sets its own scheduling object: sched_setscheduler
    /// (the first call always; `--policy batch` outranks the file's) and
    /// its nice. Then its one phase begins: its CPUs, and, as the task
    /// names a priority, that phase's scheduling object, a different one
    /// to rt-app, so the nice is set again (the policy is the same, so no
    /// sched_setscheduler). Neither happens again on the next pass. A
    /// thread forked by a `fork` event skips the barrier, and its delay
    /// also counts from t_zero.
    #[test]
    fn rt_app_threads_meet_at_the_start_then_sleep_their_delay_and_set_their_parameters() {
        let text = r#"{"tasks": {"a": {"instance": 2, "delay": 100, "priority": 5, "cpus": [1, 2], "run": 10},
                                  "b": {"run": 20, "fork": "f"},
                                  "f": {"instance": 0, "delay": 10, "run": 30}}}"#;
        let opts = WorkloadOpts {
            policies: Policies { all: Some(Policy::Batch), ..Policies::default() },
            ..WorkloadOpts::default()
        };
        let mut t = rt_threads(text, &opts);
        let sleep = |ns: u64| format!("Sleep {{ ns: {ns}, interruptible: false }}");
        let step = |t: &mut ForkSpec, n, now| run(t.program.as_mut(), n, now, &[], None);
        assert_eq!(step(&mut t[0], 1, 5_000), ["CondWait { cond: 0, mutex: None }"]);
        assert_eq!(step(&mut t[1], 1, 6_000), ["CondWait { cond: 0, mutex: None }"]);
        assert_eq!(step(&mut t[2], 1, 7_000), ["CondSignal { cond: 0, all: true }"]);
        let start = ["SetPolicy(Batch)", "SetNice(5)", "SetAffinity(CpuMask(1-2))", "SetNice(5)"];
        let work = "RunDist(Fixed(10000))";
        assert_eq!(step(&mut t[0], 5, 50_000), [sleep(55_000).as_str(), start[0], start[1], start[2], start[3]]);
        assert_eq!(step(&mut t[1], 5, 200_000), [start[0], start[1], start[2], start[3], work]);
        // The next pass: its implicit progress unit, then straight to work.
        assert_eq!(step(&mut t[1], 2, 300_000), ["Progress(1)", work]);
        // b has no delay, no priority (nice 0) and no CPUs of its own.
        assert_eq!(step(&mut t[2], 3, 8_000), ["SetPolicy(Batch)", "SetNice(0)", "RunDist(Fixed(20000))"]);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut cx =
            StepCx { now: 9_000, me: 0, rng: &mut rng, received: &[], blocked: false, forked: None, parent: None };
        let Action::Fork(mut f) = t[2].program.step(&mut cx) else { panic!("b forks f") };
        assert_eq!(f.params, None, "pthread_create: f inherits b's parameters");
        // No barrier; its 10 µs delay runs from t_zero (5 µs) to 15 µs.
        let f_start = run(f.program.as_mut(), 4, 12_000, &[], None);
        assert_eq!(f_start, [sleep(3_000).as_str(), "SetPolicy(Batch)", "SetNice(0)", "RunDist(Fixed(30000))"]);
    }

    /// A phase's scheduling object is set once, as the phase is first
    /// entered, not on every pass (set_thread_param returns when the
    /// object is the one set last, rt-app.c:1202): a one-phase task that
    /// names SCHED_BATCH calls sched_setscheduler as it starts (its own
    /// object, the default policy) and once more as the phase begins, and
    /// never again. SCHED_IDLE gets no nice level (_set_thread_cfs sets
    /// one for SCHED_OTHER and SCHED_BATCH only). Switching between two
    /// phases sets each phase's object on each entry.
    #[test]
    fn a_phase_sets_its_scheduling_object_once_per_entry() {
        let text = r#"{"tasks": {"a": {"phases": {"p": {"policy": "SCHED_BATCH", "run": 10}}},
                                  "i": {"policy": "SCHED_IDLE", "run": 20},
                                  "s": {"phases": {"x": {"priority": 3, "run": 30}, "y": {"priority": 4, "run": 40}}}}}"#;
        let mut t = rt_threads(text, &WorkloadOpts::default());
        let step = |t: &mut ForkSpec, n, now| run(t.program.as_mut(), n, now, &[], None);
        for th in t.iter_mut() {
            step(th, 1, 0);
        }
        let a = step(&mut t[0], 7, 10);
        assert_eq!(
            a,
            [
                "SetPolicy(Normal)",
                "SetNice(0)",
                "SetPolicy(Batch)",
                "SetNice(0)",
                "RunDist(Fixed(10000))",
                "Progress(1)",
                "RunDist(Fixed(10000))"
            ]
        );
        // i: its own object and its one phase's are both SCHED_IDLE.
        assert_eq!(
            step(&mut t[1], 4, 10),
            ["SetPolicy(Idle)", "RunDist(Fixed(20000))", "Progress(1)", "RunDist(Fixed(20000))"]
        );
        let s = step(&mut t[2], 7, 10);
        assert_eq!(
            s,
            [
                "SetPolicy(Normal)",
                "SetNice(0)",
                "SetNice(3)",
                "RunDist(Fixed(30000))",
                "SetNice(4)",
                "RunDist(Fixed(40000))",
                "Progress(1)"
            ]
        );
        assert_eq!(step(&mut t[2], 2, 20), ["SetNice(3)", "RunDist(Fixed(30000))"]);
    }

    /// `--policy` is the policy of every task: it outranks a TOML file's
    /// `policy` op as it does rt-app's policies (whose object is still set
    /// once, so the thread's first call is its only sched_setscheduler).
    #[test]
    fn policy_outranks_every_policy_a_file_names() {
        let opts = WorkloadOpts {
            policies: Policies { all: Some(Policy::Batch), ..Policies::default() },
            ..WorkloadOpts::default()
        };
        let toml = "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { policy = \"idle\" }, { run = \"1ms\" } ]";
        let mut t = load(toml, 1, &opts).remove(0);
        assert_eq!(run(t.program.as_mut(), 2, 0, &[], None), ["SetPolicy(Batch)", "RunDist(Fixed(1000000))"]);
        let json = r#"{"tasks": {"a": {"phases": {"p": {"policy": "SCHED_IDLE", "run": 10}}}}}"#;
        let mut t = rt_threads(json, &opts);
        let steps = run(t[0].program.as_mut(), 5, 0, &[], None);
        let want = [
            "CondSignal { cond: 0, all: true }",
            "SetPolicy(Batch)",
            "SetNice(0)",
            "SetNice(0)",
            "RunDist(Fixed(10000))",
        ];
        assert_eq!(steps, want);
    }

    /// The CPU rt-app's main runs on is the one it calibrates on: "CPU2"
    /// puts it on CPU 2, ns per loop (no calibration) and a CPU the host
    /// lacks leave it on CPU 0, and a value rt-app cannot read is an error.
    #[test]
    fn rt_app_main_runs_on_its_calibration_cpu() {
        let main_cpu = |cal: &str| {
            let text = format!(r#"{{"global": {{"calibration": {cal}}}, "tasks": {{"a": {{"run": 10}}}}}}"#);
            parse_workload(&text).map(|w| Arc::new(w).instantiate(4, &WorkloadOpts::default()).0[0].cpu)
        };
        assert_eq!(main_cpu(r#""CPU2""#), Ok(2));
        assert_eq!(main_cpu(r#""CPU 3 (fast)""#), Ok(3));
        assert_eq!(main_cpu("150"), Ok(0));
        assert_eq!(main_cpu(r#""CPU9""#), Ok(0));
        assert_eq!(main_cpu(r#""CPU-1""#), Ok(0));
        let e = main_cpu(r#""core2""#).unwrap_err().to_string();
        assert_eq!(e, r#"at global.calibration: "core2" is neither "CPUn" nor ns per loop (rt-app refuses it too)"#);
        assert!(main_cpu(r#""CPU""#).unwrap_err().to_string().contains("names no CPU"));
        assert!(main_cpu("1.5").unwrap_err().to_string().contains("expected \"CPUn\" or ns per loop"));
    }

    /// Loops repeat their count, the task's own loop included; a zero
    /// count skips its body; past the end the task exits.
    #[test]
    fn loops_run_their_count_then_the_task_exits() {
        let text = "duration = \"1s\"\n[[task]]\nname = \"a\"\nloop = 2\nops = [ { loop = { count = 0, ops = [ \"yield\" ] } }, { loop = { count = 3, ops = [ { run = \"2us\" } ] } }, { progress = 1 } ]";
        let mut t = load(text, 1, &WorkloadOpts::default()).remove(0);
        let got = run(t.program.as_mut(), 10, 0, &[], None);
        let (unit, ran) = ("Progress(1)", "RunDist(Fixed(2000))");
        assert_eq!(got, [ran, ran, ran, unit, ran, ran, ran, unit, "Exit", "Exit"]);
    }

    /// Going round a loop jumps past its LoopBegin, so the interpreter
    /// keeps one entry per open loop however many passes it makes.
    #[test]
    fn loops_do_not_pile_up_entries() {
        let text =
            "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { loop = { count = 1000, ops = [ \"yield\" ] } } ]";
        let wl = Arc::new(parse_workload(text).unwrap());
        let mut script = Script::new(
            wl,
            Arc::new(RunShared::new(vec![vec![0]], 0, None)),
            0,
            0,
            Origin::Started { index: 0 },
            CpuMask::first_n(1),
        );
        run(&mut script, 500, 0, &[], None);
        assert_eq!(script.loops, [None, Some(501)], "the task's own loop and the inner one");
        let text = "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { loop = { ops = [ \"yield\" ] } } ]";
        let wl = Arc::new(parse_workload(text).unwrap());
        let mut script = Script::new(
            wl,
            Arc::new(RunShared::new(vec![vec![0]], 0, None)),
            0,
            0,
            Origin::Started { index: 0 },
            CpuMask::first_n(1),
        );
        run(&mut script, 500, 0, &[], None);
        assert_eq!(script.loops, [None, None]);
    }

    /// A loop with nothing in it does not hang the interpreter: it hands
    /// back a free step after 10,000 instructions. No file parses into one
    /// any more (an empty loop, or one of free steps, is refused), so the
    /// code is set by hand: a progress count, then an empty endless loop.
    #[test]
    fn an_empty_loop_yields_a_free_step() {
        let text = "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ \"yield\" ]";
        let mut wl = parse_workload(text).unwrap();
        wl.tasks[0].code =
            vec![Instr::Progress(1), Instr::LoopBegin { count: None, end: 2 }, Instr::LoopEnd { begin: 1 }];
        let mut script = Script::new(
            Arc::new(wl),
            Arc::new(RunShared::new(vec![vec![0]], 0, None)),
            0,
            0,
            Origin::Started { index: 0 },
            CpuMask::first_n(1),
        );
        assert_eq!(run(&mut script, 3, 0, &[], None), ["Progress(1)", "Progress(0)", "Progress(0)"]);
    }

    /// A named timer is shared, as rt-app's global timer resources are: two
    /// instances of a task that each wait on "tick" (10 ms) advance the
    /// same next activation, so they wake 10 ms apart, each every 20 ms.
    /// With `"ref": "unique"` each keeps its own and both wake every 10 ms.
    #[test]
    fn named_timers_are_shared_and_unique_ones_are_not() {
        let sleep = |ns: u64| format!("Sleep {{ ns: {ns}, interruptible: false }}");
        let text =
            |r: &str| format!(r#"{{"tasks": {{"p": {{"instance": 2, "timer": {{"ref": "{r}", "period": 10000}}}}}}}}"#);
        let wait = "CondWait { cond: 0, mutex: None }";
        let last = "CondSignal { cond: 0, all: true }";
        let mut shared = rt_threads(&text("tick"), &WorkloadOpts::default());
        let mut unique = rt_threads(&text("unique"), &WorkloadOpts::default());
        for (threads, second) in [(&mut shared, 20_000_000), (&mut unique, 10_000_000)] {
            // Both threads pass the start barrier at 0, where thread 0
            // read t_zero, so both loops begin there: the first sleeps to
            // 10 ms, the second (shared) to 20 ms.
            start(threads[0].program.as_mut(), 0, wait);
            start(threads[1].program.as_mut(), 0, last);
            assert_eq!(run(threads[0].program.as_mut(), 1, 0, &[], None), [sleep(10_000_000)]);
            assert_eq!(run(threads[1].program.as_mut(), 1, 0, &[], None), [sleep(second)]);
        }
        // Shared: the first, back at 10 ms, goes on to 30 ms.
        assert_eq!(run(shared[0].program.as_mut(), 2, 10_000_000, &[], None)[1], sleep(20_000_000));
    }

    /// rt-app's timer: each activation is the last plus a period, the first
    /// one period after the loop began. An activation already past is not
    /// slept for; a relative timer (the default) then counts the next
    /// period from now, dropping the missed ones, while an absolute one
    /// keeps its grid and catches up without sleeping.
    #[test]
    fn timers_keep_their_period() {
        let sleep = |ns: u64| format!("Sleep {{ ns: {ns}, interruptible: false }}");
        let progress = || "Progress(1)".to_string();
        for mode in ["relative", "absolute"] {
            let text = format!(
                "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ {{ timer = {{ period = \"10ms\", mode = \"{mode}\" }} }} ]"
            );
            let mut t = load(&text, 1, &WorkloadOpts::default()).remove(0);
            let p = t.program.as_mut();
            // The loop begins at 1 ms: the first activation is at 11 ms.
            // (Each pass also counts its implicit progress unit.)
            assert_eq!(run(p, 2, 1_000_000, &[], None), [sleep(10_000_000), progress()]);
            // Back at 12 ms: sleep to 21 ms.
            assert_eq!(run(p, 2, 12_000_000, &[], None), [sleep(9_000_000), progress()]);
            // At 50 ms the activation at 31 ms has passed: no sleep.
            if mode == "relative" {
                // The next is 10 ms from now.
                assert_eq!(run(p, 2, 50_000_000, &[], None), [progress(), sleep(10_000_000)]);
            } else {
                // The grid holds: 41 ms has passed too, 51 ms has not.
                assert_eq!(run(p, 3, 50_000_000, &[], None), [progress(), progress(), sleep(1_000_000)]);
            }
        }
        // An activation reached exactly counts as passed (rt-app sleeps
        // only while now is strictly before it): after the activation at
        // 11 ms the task is back at 21 ms on the dot, the next activation,
        // so it goes on at once and counts the following one from there.
        let mut t = load(
            "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { timer = \"10ms\" } ]",
            1,
            &WorkloadOpts::default(),
        )
        .remove(0);
        let p = t.program.as_mut();
        assert_eq!(run(p, 2, 1_000_000, &[], None), [sleep(10_000_000), progress()]);
        assert_eq!(run(p, 2, 21_000_000, &[], None), [progress(), sleep(10_000_000)]);
    }

    /// rt-app's `runtime`: CPU work in 32 µs pieces until its wall-clock
    /// time is up, then the next event. A task that got the CPU all along
    /// needs ceil(100 / 32) = 4 pieces for 100 µs (32, 32, 32, 4); one
    /// that was preempted past its end goes straight on.
    #[test]
    fn runtime_computes_in_pieces_until_its_time_is_up() {
        let text = r#"{"global": {"duration": 1}, "tasks": {"a": {"runtime": 100, "sleep": 50}}}"#;
        let mut t = rt_threads(text, &WorkloadOpts::default()).remove(0);
        let p = t.program.as_mut();
        start(p, 0, "CondSignal { cond: 0, all: true }");
        let piece = |ns: u64| format!("Run({ns})");
        let mut seen = Vec::new();
        for now in [0, 32_000, 64_000, 96_000, 100_000] {
            seen.extend(run(p, 1, now, &[], None));
        }
        let sleep = "Sleep { ns: 50000, interruptible: false }".to_string();
        assert_eq!(seen, [piece(32_000), piece(32_000), piece(32_000), piece(4_000), sleep.clone()]);
        // The next loop (after its progress unit) begins a runtime at
        // 150 µs, due to end at 250 µs; its task is back only at 450 µs.
        assert_eq!(run(p, 2, 150_000, &[], None), ["Progress(1)".to_string(), piece(32_000)]);
        assert_eq!(run(p, 1, 450_000, &[], None), [sleep]);
    }

    /// Sends: instance i of a task talks to instance i of its peer (modulo
    /// the peer's count); `#k` picks one; a `reply` goes to the sender of
    /// the last message taken, and is a free step before there is one; a
    /// broadcast goes to every instance in order, in one call; fork creates
    /// the named task with its settings, and the forked task's `parent`
    /// send goes to its creator.
    #[test]
    fn sends_replies_broadcasts_and_forks() {
        let text = "duration = \"1s\"\n\
            [[task]]\nname = \"a\"\ninstances = 3\nops = [ { send = \"b\", sync = false, bytes = 5 }, { send = \"b#0\" }, { reply = true }, { wait = \"one\" }, { reply = true }, { broadcast = \"b\" }, { fork = \"c\" } ]\n\
            [[task]]\nname = \"b\"\ninstances = 2\nops = [ \"exit\" ]\n\
            [[task]]\nname = \"c\"\ninstances = 0\nnice = 4\ncpus = \"1\"\nws_kb = 9\nops = [ { send = \"parent\" }, \"exit\" ]";
        // Instance a#2 (task ids: a = 0, 1, 2 and b = 3, 4), no parent.
        let mut tasks = load(text, 4, &WorkloadOpts::default());
        let p = tasks[2].program.as_mut();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut step = |received: &[Msg]| {
            let mut cx = StepCx { now: 0, me: 2, rng: &mut rng, received, blocked: true, forked: None, parent: None };
            p.step(&mut cx)
        };
        let msg = Msg { from: 7, cpu: 0, bytes: 1, tag: 0, stream: None };
        let mut got: Vec<String> = Vec::new();
        for received in [&[][..], &[], &[], &[], &[msg], &[]] {
            got.push(format!("{:?}", step(received)));
        }
        assert_eq!(
            got,
            [
                "Send { to: 3, sync: false, bytes: 5, tag: 0 }", // b: instance 2 mod 2 = b#0
                "Send { to: 3, sync: true, bytes: 64, tag: 0 }", // b#0
                "Progress(0)",                                   // reply: nothing received yet
                "Wait { all: false }",
                "Send { to: 7, sync: true, bytes: 64, tag: 0 }", // reply to the message's sender
                "SendAll { to: [3, 4], sync: true, bytes: 64, tag: 0 }", // broadcast: b#0 and b#1, one call
            ]
        );
        let child = match step(&[]) {
            Action::Fork(f) => {
                assert_eq!((f.name.as_str(), f.ws_kb), ("c", 9));
                let params = f.params.unwrap();
                assert_eq!((params.nice, params.allowed), (4, CpuMask::single(1)));
                f
            }
            other => panic!("{other:?}"),
        };
        // The child, created by task 9, sends to it.
        let mut program = child.program;
        assert_eq!(run(program.as_mut(), 1, 0, &[], Some(9)), ["Send { to: 9, sync: true, bytes: 64, tag: 0 }"]);
        // `--policy` reaches a forked child as it does the tasks present
        // at the start (a#0 forks after its 6 other ops, two of them free
        // steps here: the reply with nothing received, then the wait).
        let opts = WorkloadOpts {
            policies: Policies { all: Some(Policy::Batch), ..Policies::default() },
            ..WorkloadOpts::default()
        };
        let mut tasks = load(text, 4, &opts);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let fork = (0..7)
            .map(|_| {
                let mut cx =
                    StepCx { now: 0, me: 0, rng: &mut rng, received: &[], blocked: true, forked: None, parent: None };
                tasks[0].program.step(&mut cx)
            })
            .find_map(|a| if let Action::Fork(f) = a { Some(f) } else { None })
            .expect("a#0 forks c");
        assert_eq!(fork.params.map(|p| p.policy), Some(Policy::Batch));
    }

    /// `stream` makes a send a write: on the writer's own socket
    /// connection (`pair`), or on the receiver's one socket or pipe, named
    /// by the receiver's task id (`shared`, `pipe`), or on a loopback TCP
    /// connection (`tcp`), for a send, a reply and each target of a
    /// broadcast.
    #[test]
    fn stream_sends_are_socket_or_pipe_writes() {
        let text = "duration = \"1s\"\n\
            [[task]]\nname = \"a\"\nops = [ { send = \"b#1\", stream = \"pair\", bytes = 100 }, { send = \"b\", stream = \"shared\" }, { wait = \"one\" }, { reply = true, stream = \"pipe\", sync = true }, { broadcast = \"b\", stream = \"pair\" }, { send = \"b\", stream = \"tcp\", bytes = 8 } ]\n\
            [[task]]\nname = \"b\"\ninstances = 2\nops = [ \"exit\" ]";
        // Task ids: a = 0, b = 1, 2.
        let mut tasks = load(text, 3, &WorkloadOpts::default());
        let msg = Msg { from: 7, cpu: 0, bytes: 1, tag: 0, stream: None };
        let got = run(tasks[0].program.as_mut(), 2, 0, &[], None);
        assert_eq!(
            got,
            [
                "Write { to: 2, stream: Pair, bytes: 100, tag: 0 }",
                "Write { to: 1, stream: Shared(1), bytes: 64, tag: 0 }", // b: instance 0 of a
            ]
        );
        let p = tasks[0].program.as_mut();
        assert_eq!(run(p, 1, 0, &[], None), ["Wait { all: false }"]);
        assert_eq!(
            run(p, 3, 0, &[msg], None),
            [
                "Write { to: 7, stream: Pipe(7), bytes: 64, tag: 0 }",
                "Write { to: 1, stream: Pair, bytes: 64, tag: 0 }",
                "Write { to: 2, stream: Pair, bytes: 64, tag: 0 }",
            ]
        );
        assert_eq!(run(p, 1, 0, &[], None), ["TcpSend { to: 1, bytes: 8, tag: 0 }"]);
        let bad = |op: &str| {
            let text = format!("duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ {op} ]");
            parse_workload(&text).unwrap_err().to_string()
        };
        let expected = "at task[0].ops[0].stream: expected \"pair\", \"shared\", \"pipe\" or \"tcp\"";
        assert_eq!(bad("{ send = \"a\", stream = \"udp\" }"), expected);
        assert_eq!(bad("{ send = \"a\", stream = 1 }"), expected);
        assert!(
            bad("{ send = \"a\", stream = \"pipe\", sync = false }").contains("wakes its reader as the kernel does")
        );
        assert!(bad("{ wait = \"one\", stream = \"pair\" }").contains("unknown key \"stream\""));
    }
}

mod fuzz_regressions {
    /// Found by the `workload_spec` fuzz target: rt-app's "run forever"
    /// duration (-1) must not overflow while computing the unused value.
    #[test]
    fn rt_app_duration_minus_one_does_not_panic() {
        let r = super::parse_workload(r#"{"global": {"duration": -1}, "tasks": {"a": {"run": 1}}}"#);
        assert!(r.is_ok(), "{r:?}");
    }
}

mod sync_objects {
    //! Mutexes, semaphores, condition variables with their mutex, and
    //! barriers with their users, in both formats.
    use super::test_files::{body, error, file};
    use super::*;

    #[test]
    fn toml_sync_ops_name_their_objects() {
        let text = file(&[
            "name = \"a\"\ninstances = 2\nops = [ { lock = \"m\" }, { cond_wait = \"q\", mutex = \"m\" }, { unlock = \"m\" }, \
             { sem_post = \"s\" }, { sem_wait = \"t\" }, { barrier = \"b\" }, { cond_wait = \"q\" }, { progress = 1 } ]",
            "name = \"b\"\ninstances = 3\nops = [ { barrier = \"b\" }, { barrier = \"c\" }, { barrier = \"b\" } ]",
            "name = \"c\"\ninstances = 0\nops = [ { barrier = \"c\" } ]",
        ]);
        assert_eq!(
            body(&text),
            [
                Instr::Lock(0),
                Instr::CondWait { cond: 0, mutex: Some(0) },
                Instr::Unlock(0),
                Instr::SemPost(0),
                Instr::SemWait(1),
                Instr::Barrier(0),
                Instr::CondWait { cond: 0, mutex: None },
                Instr::Progress(1),
            ]
        );
        let w = parse_workload(&text).unwrap();
        assert_eq!((w.conds.len(), w.mutexes.len(), w.sems.len()), (1, 1, 2));
        // Users as rt-app counts them: b is named once by a's 2 instances
        // and twice by b's 3 (2 + 3 + 3 = 8); c once by b's 3 and once by
        // c, which has none at start.
        assert_eq!(w.barriers, [("b".to_string(), 8), ("c".to_string(), 3)]);
        let objs = w.sync_objects();
        assert_eq!((objs.conds, objs.mutexes, objs.sems, objs.barriers), (1, 1, 2, vec![8, 3]));
    }

    #[test]
    fn bad_sync_ops_are_errors_that_say_where() {
        let one = |ops: &str| error(&file(&[&format!("name = \"a\"\nops = [ {ops} ]")]));
        assert_eq!(one("{ lock = 3 }"), "at task[0].ops[0].lock: expected a string, found an integer");
        assert_eq!(
            one("{ cond_wait = \"q\", mutex = 3 }"),
            "at task[0].ops[0].mutex: expected a string, found an integer"
        );
        assert!(
            one("{ lock = \"m\", mutex = \"m\" }").contains("unknown key \"mutex\""),
            "{}",
            one("{ lock = \"m\", mutex = \"m\" }")
        );
        // A barrier only forked tasks use would never open.
        let text = file(&[
            "name = \"a\"\nops = [ { fork = \"b\" } ]",
            "name = \"b\"\ninstances = 0\nops = [ { barrier = \"x\" } ]",
        ]);
        assert_eq!(error(&text), "barrier \"x\": no task started at t=0 uses it, so it would never open");
        let rt = |events: &str| error(&format!(r#"{{"tasks": {{"a": {{ {events} }}}}}}"#));
        assert_eq!(rt(r#""barrier": 1"#), "at tasks.a.barrier: expected a string, found an integer");
        assert_eq!(rt(r#""sem_wait": []"#), "at tasks.a.sem_wait: expected a string, found an array");
        assert_eq!(
            rt(r#""wait": {"ref": "q", "mutex": 2}"#),
            "at tasks.a.wait.mutex: expected a string, found an integer"
        );
    }

    /// rt-app's timers without a `ref` share the timer "unknown", as
    /// rt-app's parser defaults it; a shared timer is absolute if any use
    /// of it says so.
    #[test]
    fn rt_app_timer_refs() {
        let w = parse_workload(
            r#"{"tasks": {
                "a": {"timer0": {"period": 10}, "timer1": {"ref": "t", "period": 20, "mode": "absolute"}},
                "b": {"timer": {"ref": "t", "period": 30}, "timer1": {"ref": "unique", "period": 40}}
            }}"#,
        )
        .unwrap();
        assert_eq!(w.timers, ["unknown", "t"]);
        let timer = |slot, period, absolute| Instr::Timer { slot, period, absolute };
        assert_eq!(
            rt_events(&w, 0)[1..3],
            [timer(TimerSlot::Shared(0), 10_000, false), timer(TimerSlot::Shared(1), 20_000, true)]
        );
        assert_eq!(
            rt_events(&w, 1)[1..3],
            [timer(TimerSlot::Shared(1), 30_000, true), timer(TimerSlot::Own(0), 40_000, false)]
        );
        assert_eq!((w.tasks[0].timers, w.tasks[1].timers), (0, 1));
    }

    /// rt-app counts a barrier's users by instances, once per event.
    #[test]
    fn rt_app_barriers_and_semaphores() {
        let w = parse_workload(
            r#"{"tasks": {
                "a": {"instance": 2, "barrier": "b", "sem_post": "s", "phases": {"p": {"barrier": "b"}}},
                "b": {"instance": 3, "barrier": "b", "sem_wait": "s"}
            }}"#,
        )
        .unwrap();
        assert_eq!(w.barriers, [("b".to_string(), 2 + 2 + 3)]);
        assert_eq!(w.sems, ["s"]);
        assert_eq!(rt_events(&w, 0)[1..3], [Instr::Barrier(0), Instr::SemPost(0)]);
        assert_eq!(rt_events(&w, 1)[1..3], [Instr::Barrier(0), Instr::SemWait(0)]);
    }
}

mod rt_app_phases {
    //! rt-app phases with their own `cpus`, `priority` and `policy`.
    use super::test_files::error;
    use super::*;

    /// Each phase sets its CPUs, policy and priority as it begins
    /// (rt-app.c thread_body: set_thread_affinity, set_thread_param); a
    /// phase without CPUs returns to the task's (here CPU 1), and without
    /// task CPUs to the mask the thread started with; a phase without
    /// priority or policy has no scheduling object (parse_sched_data
    /// returns NULL) and keeps the current one; a policy without a
    /// priority brings nice 0, a priority without a policy keeps the
    /// policy (`same`). Phases stand where they are among the task's events.
    #[test]
    fn phases_set_their_cpus_policy_and_priority_as_they_begin() {
        let w = parse_workload(
            r#"{"tasks": {
                "a": {"phases": {
                        "p0": {"loop": 2, "cpus": [0, 2], "priority": 5, "run": 10},
                        "p1": {"policy": "SCHED_BATCH", "run": 20},
                        "p2": {"cpus": "3", "run": 30}},
                      "cpus": [1], "sleep": 40},
                "b": {"phases": {"q0": {"cpus": [2], "run": 1}, "q1": {"run": 2}}},
                "c": {"phases": {"r0": {"priority": -3, "run": 1}, "r1": {"run": 2}}}
            }}"#,
        )
        .unwrap();
        let run = |us: u64| Instr::Run(Dist::Fixed(us * 1_000));
        let lb = |count, end| Instr::LoopBegin { count: Some(count), end };
        let le = |begin| Instr::LoopEnd { begin };
        assert_eq!(
            rt_events(&w, 0)[1..17],
            [
                // p0 names a priority alone: rt-app's `same` policy.
                Instr::PhaseAffinity(Some(Box::new(CpuMask::from_cpus([0, 2])))),
                Instr::SchedParams { id: 1, policy: None, nice: 5 },
                lb(2, 8),
                run(10),
                le(6),
                // p1 names a policy alone, which brings nice 0
                // (DEFAULT_THREAD_NICE); without CPUs it returns to the task's.
                Instr::PhaseAffinity(Some(Box::new(CpuMask::single(1)))),
                Instr::SchedParams { id: 2, policy: Some(Policy::Batch), nice: 0 },
                lb(1, 13),
                run(20),
                le(11),
                Instr::PhaseAffinity(Some(Box::new(CpuMask::single(3)))),
                lb(1, 17),
                run(30),
                le(15),
                Instr::Sleep(40_000),
                Instr::Progress(1),
            ]
        );
        // b's q1 names no CPUs, and b has none: back to the mask the
        // thread started with (None).
        assert_eq!(rt_events(&w, 1)[1..3], [Instr::PhaseAffinity(Some(Box::new(CpuMask::single(2)))), lb(1, 7)]);
        assert_eq!(rt_events(&w, 1)[5..7], [Instr::PhaseAffinity(None), lb(1, 11)]);
        // No phase names CPUs, nor the task: no affinity call at all.
        assert_eq!(rt_events(&w, 2)[1..3], [Instr::SchedParams { id: 1, policy: None, nice: -3 }, lb(1, 7)]);
        assert_eq!(rt_events(&w, 2)[5], lb(1, 10));
    }

    #[test]
    fn a_phase_names_the_keys_it_takes() {
        let e = error(r#"{"tasks": {"a": {"phases": {"p": {"taskgroup": "/x", "run": 1}}}}}"#);
        assert!(
            e.starts_with(
                "at tasks.a.phases.p.taskgroup: unknown key \"taskgroup\" (known: loop, cpus, priority, policy, run,"
            ),
            "{e}"
        );
        let e = error(r#"{"tasks": {"a": {"phases": {"p": {"cpus": [], "run": 1}}}}}"#);
        assert_eq!(e, "at tasks.a.phases.p.cpus: empty CPU list");
        let e = error(r#"{"tasks": {"a": {"phases": {"p": {"priority": 20, "run": 1}}}}}"#);
        assert_eq!(e, "at tasks.a.phases.p.priority: 20 is out of range -20..=19");
    }
}

mod rt_app_duration {
    //! How long an rt-app file runs.
    use super::*;

    /// Without a positive duration rt-app runs until its threads end: when
    /// every task has a finite loop, the tasks started at t=0 finish the
    /// run; with one looping for ever (rt-app's default), it lasts 1 s; a
    /// positive duration is the run's.
    #[test]
    fn without_a_duration_finite_tasks_end_the_run() {
        let finite = r#""a": {"loop": 5, "run": 1000}, "b": {"instance": 0, "loop": 2, "run": 1}"#;
        for global in ["", r#""global": {"duration": -1}, "#, r#""global": {"duration": 0}, "#] {
            let w = parse_workload(&format!(r#"{{{global}"tasks": {{{finite}}}}}"#)).unwrap();
            assert_eq!(w.duration_ns, None, "{global}");
            assert_eq!((w.tasks[0].finish, w.tasks[1].finish), (true, false), "{global}");
        }
        let w = parse_workload(&format!(r#"{{"tasks": {{{finite}, "c": {{"run": 1}}}}}}"#)).unwrap();
        assert_eq!(w.duration_ns, Some(1_000_000_000));
        assert!(w.tasks.iter().all(|t| !t.finish));
        let w = parse_workload(&format!(r#"{{"global": {{"duration": 2}}, "tasks": {{{finite}}}}}"#)).unwrap();
        assert_eq!(w.duration_ns, Some(2_000_000_000));
        assert!(w.tasks.iter().all(|t| !t.finish));
    }
}

mod timeless_loops {
    //! Tasks and loops that could make no progress in simulated time are
    //! refused when the file is read, naming the task and the loop.
    use super::test_files::{error, file};
    use super::*;

    /// The message for a loop of task `a` at `path` that runs `times`.
    fn spins(path: &str, times: &str) -> String {
        format!(
            "at {path}: task \"a\" loops {times} on steps that take no simulated time (zero-length runs, progress \
             counts, start_measuring): add one that does, such as a run or sleep of more than 0, a timer, a wait, a \
             lock, a signal or a send"
        )
    }

    /// A task or loop with no ops at all, in either format; rt-app's own
    /// parser exits on a task or phase without events too.
    #[test]
    fn a_task_or_loop_needs_ops() {
        assert_eq!(error(&file(&["name = \"a\"\nops = []"])), "at task[0].ops: task \"a\" has no ops");
        assert_eq!(
            error(&file(&["name = \"a\"\nops = [ { run = \"1ms\" }, { loop = { count = 3, ops = [] } } ]"])),
            "at task[0].ops[1].loop.ops: a loop with no ops"
        );
        assert_eq!(
            error(r#"{"tasks": {"a": {}}}"#),
            "at tasks.a: task \"a\" has no events (rt-app refuses such a task too)"
        );
        // Keys that are not events do not make one.
        assert_eq!(
            error(r#"{"tasks": {"a": {"loop": 3, "delay": 10, "cpus": [0]}}}"#),
            "at tasks.a: task \"a\" has no events (rt-app refuses such a task too)"
        );
        assert_eq!(
            error(r#"{"tasks": {"a": {"phases": {"p0": {"run": 10}, "p1": {"loop": 2}}}}}"#),
            "at tasks.a.phases.p1: phase \"p1\" of task \"a\" has no events (rt-app refuses such a phase too)"
        );
    }

    /// A loop that runs more than once, on nothing but free steps, is
    /// refused: the task's own loop (for ever, or `loop = N`), a nested
    /// one however large its count, an rt-app task or phase. Each case is
    /// what the tester ran: `ops = [{ run = "0s" }]` took 50.9 s of wall
    /// time for 1 s, a finish task counting progress 10^9 times never
    /// ended.
    #[test]
    fn a_loop_of_free_steps_is_refused() {
        let toml = |head: &str, ops: &str| error(&file(&[&format!("name = \"a\"\n{head}\nops = [ {ops} ]")]));
        assert_eq!(toml("", "{ run = \"0s\" }"), spins("task[0].ops", "for ever"));
        assert_eq!(toml("loop = 2", "{ run = \"0s\" }, { progress = 1 }"), spins("task[0].loop", "2 times"));
        // Every distribution that can only draw 0.
        for zero in [
            "{ mean = \"0us\", dist = \"exp\" }",
            "{ mean = \"0us\", dist = \"normal\", cv = 0.5 }",
            "{ dist = \"uniform\", min = \"0us\", max = \"0us\" }",
        ] {
            assert_eq!(toml("", &format!("{{ run = {zero} }}")), spins("task[0].ops", "for ever"), "{zero}");
        }
        assert_eq!(toml("", "\"start_measuring\""), spins("task[0].ops", "for ever"));
        // A nested loop is named by its place; the task's own loop takes
        // time (the run), the inner one does not.
        assert_eq!(
            toml("", "{ run = \"1ms\" }, { loop = { count = 1000000000, ops = [ { progress = 1 } ] } }"),
            spins("task[0].ops[1].loop", "1000000000 times")
        );
        // The tester's finish task: its own loop runs once, the inner one 10^9 times.
        let finish = "[[task]]\nname = \"a\"\nfinish = true\nloop = 1\n\
                      ops = [ { loop = { count = 1000000000, ops = [ { progress = 1 } ] } } ]";
        assert_eq!(error(finish), spins("task[0].ops[0].loop", "1000000000 times"));
        // A run inside a loop that never runs does not count.
        assert_eq!(
            toml("", "{ loop = { count = 0, ops = [ { run = \"1ms\" } ] } }, { progress = 1 }"),
            spins("task[0].ops", "for ever")
        );
        // rt-app: `"run": 0` alone, a task's `loop`, a phase's.
        assert_eq!(error(r#"{"tasks": {"a": {"run": 0}}}"#), spins("tasks.a", "for ever"));
        assert_eq!(error(r#"{"tasks": {"a": {"loop": 5, "run0": 0, "runtime": 0}}}"#), spins("tasks.a", "5 times"));
        assert_eq!(
            error(r#"{"tasks": {"a": {"phases": {"p": {"loop": 3, "run": 0}}, "sleep": 10}}}"#),
            spins("tasks.a.phases.p", "3 times")
        );
    }

    /// What is not refused: a 1 ns run (the user's choice), a loop of free
    /// steps that runs once or never (a block, not a spin), free steps
    /// beside any op that takes time or can block, or with one in a loop
    /// inside, and every op but the three free ones, each alone in a loop.
    #[test]
    fn a_loop_with_anything_that_takes_time_is_taken() {
        let ok = |head: &str, ops: &str| {
            let text = file(&[
                &format!("name = \"a\"\n{head}\nops = [ {ops} ]"),
                "name = \"b\"\nops = [ { wait = \"one\" } ]",
                "name = \"f\"\ninstances = 0\nops = [ { wait = \"one\" }, { reply = true }, { send = \"parent\" } ]",
            ]);
            parse_workload(&text).unwrap_or_else(|e| panic!("{ops}: {e}"));
        };
        ok("", "{ run = \"1ns\" }");
        ok("", "{ run = { dist = \"uniform\", min = \"0us\", max = \"1ns\" } }");
        ok("", "{ run = { mean = \"0us\", dist = \"normal\" } }, { sleep = \"0s\" }");
        ok("loop = 1", "{ progress = 1 }");
        ok("loop = 0", "{ progress = 1 }");
        // rt-app's `runtime` (CPU time measured on the clock) of 1 µs.
        parse_workload(r#"{"tasks": {"a": {"runtime": 1}}, "global": {"duration": 1}}"#).unwrap();
        ok("", "{ run = \"1us\" }, { loop = { count = 1, ops = [ { progress = 1 } ] } }");
        ok("", "{ loop = { count = 5, ops = [ { progress = 1 }, { loop = { count = 2, ops = [ \"yield\" ] } } ] } }");
        for op in [
            "{ sleep = \"1ms\" }",
            "{ timer = \"1ms\" }",
            "{ send = \"b\" }",
            "{ broadcast = \"b\" }",
            "{ wait = \"one\" }",
            "{ cond_wait = \"q\" }",
            "{ signal = \"q\" }",
            "{ broad = \"q\" }",
            "{ lock = \"m\" }",
            "{ unlock = \"m\" }",
            "{ sem_post = \"s\" }",
            "{ sem_wait = \"s\" }",
            "{ barrier = \"x\" }",
            "{ fork = \"f\" }",
            "\"exit\"",
            "\"yield\"",
            "{ nice = 1 }",
            "{ policy = \"batch\" }",
            "{ affinity = \"0\" }",
        ] {
            ok("", &format!("{{ progress = 1 }}, {op}"));
        }
        assert!(parse_workload(r#"{"tasks": {"a": {"run": 1}}}"#).is_ok());
        assert!(parse_workload(r#"{"tasks": {"a": {"loop": 1, "run": 0}}}"#).is_ok());
    }

    /// A send that could never reach anyone: to `parent` from a task whose
    /// instances start at t=0 (only a forked task has a parent), a reply
    /// from a task that never takes a message, a broadcast to a task with
    /// no instance at t=0 (forked ones never receive it).
    #[test]
    fn sends_to_no_one_are_refused() {
        assert_eq!(
            error(&file(&["name = \"a\"\ninstances = 2\nops = [ { run = \"1ms\" }, { send = \"parent\" } ]"])),
            "at task[0].ops[1].send: task \"a\" sends to its parent, but its 2 instance(s) started at t=0 have \
             none (only a forked task has a parent: give it instances = 0 and fork it)"
        );
        assert_eq!(
            error(&file(&["name = \"a\"\nops = [ { run = \"1ms\" }, { reply = true } ]"])),
            "at task[0].ops[1].reply: task \"a\" replies but never waits for a message, so it has no sender to \
             reply to"
        );
        assert_eq!(
            error(&file(&[
                "name = \"a\"\nops = [ { broadcast = \"c\" }, { fork = \"c\" } ]",
                "name = \"c\"\ninstances = 0\nops = [ \"exit\" ]",
            ])),
            "at task[0].ops[0].broadcast: task \"c\" has no instances started at t=0 to send to"
        );
        // The same task only forked may send to its parent.
        assert!(
            parse_workload(&file(&[
                "name = \"p\"\nops = [ { fork = \"a\" }, { wait = \"one\" } ]",
                "name = \"a\"\ninstances = 0\nops = [ { run = \"1ms\" }, { send = \"parent\" }, \"exit\" ]",
            ]))
            .is_ok()
        );
    }
}

mod run_length {
    //! A TOML file's duration and warmup.
    use super::test_files::error;
    use super::*;

    fn toml(head: &str) -> String {
        format!("{head}\n[[task]]\nname = \"a\"\nops = [ {{ run = \"1ms\" }} ]\n")
    }

    /// `duration = "0s"` ran nothing and printed 0.00; it is refused, as
    /// the command line's `--duration 0s` is. 1 ns is the shortest run.
    #[test]
    fn a_duration_of_zero_is_refused() {
        assert_eq!(error(&toml("duration = \"0s\"")), "at duration: must be more than 0");
        assert_eq!(error(&toml("duration = \"0.4ns\"")), "at duration: must be more than 0");
        assert_eq!(parse_workload(&toml("duration = \"1ns\"")).unwrap().duration_ns, Some(1));
    }

    /// A warmup as long as the run, or longer, counts nothing: refused,
    /// naming both; 1 ns shorter is taken. `check_warmup` does the same for
    /// a duration given elsewhere (the command line's).
    #[test]
    fn a_warmup_must_be_shorter_than_the_run() {
        assert_eq!(
            error(&toml("duration = \"100ms\"\nwarmup = \"100ms\"")),
            "at warmup: warmup 100ms is not shorter than the run's duration 100ms: progress before 100ms is not \
             counted, so nothing would be measured"
        );
        assert!(error(&toml("duration = \"100ms\"\nwarmup = \"2s\"")).starts_with("at warmup: warmup 2s is not"));
        let w = parse_workload(&toml("duration = \"100ms\"\nwarmup = \"99999999ns\"")).unwrap();
        assert_eq!(w.warmup_ns, 99_999_999);
        assert_eq!(w.check_warmup(100_000_000), Ok(()));
        assert_eq!(
            w.check_warmup(99_999_999),
            Err("warmup 99999999ns is not shorter than the run's duration 99999999ns: progress before 99999999ns \
                 is not counted, so nothing would be measured"
                .into())
        );
        // No warmup: any run will do.
        assert_eq!(parse_workload(&toml("duration = \"1ms\"")).unwrap().check_warmup(1), Ok(()));
    }
}

mod host_cpus {
    //! CPU lists against the host a file runs on.
    use super::*;

    fn check(text: &str, nr_cpus: usize) -> Result<(), String> {
        parse_workload(text).unwrap().check_host(nr_cpus)
    }

    /// A task's `cpus`, an `affinity` op and an rt-app phase's `cpus` must
    /// each name a CPU of the host: on 4 CPUs (0-3), CPU 7 alone is
    /// refused with the task and the list, where the static one was a bare
    /// "affinity mask contains no CPU of this host" from the scheduler and
    /// the op was ignored. A list with any of 0-3 in it is taken, as
    /// sched_setaffinity takes it.
    #[test]
    fn every_cpu_list_needs_a_cpu_of_the_host() {
        let toml = |head: &str, ops: &str| {
            format!("duration = \"1s\"\n[[task]]\nname = \"a\"\n{head}\nops = [ {{ run = \"1ms\" }}, {ops} ]\n")
        };
        assert_eq!(
            check(&toml("cpus = \"7\"", "\"yield\""), 4),
            Err("task \"a\": cpus 7 names no CPU of this host, which has 4 (CPUs 0-3)".into())
        );
        assert_eq!(
            check(&toml("", "{ affinity = \"7\" }"), 4),
            Err("task \"a\": an affinity change to CPUs 7 names no CPU of this host, which has 4 (CPUs 0-3)".into())
        );
        assert_eq!(check(&toml("cpus = \"3-7\"", "{ affinity = \"3,9\" }"), 4), Ok(()));
        assert_eq!(check(&toml("cpus = \"7\"", "{ affinity = \"7\" }"), 8), Ok(()));
        assert_eq!(
            check(r#"{"tasks": {"t": {"cpus": [7], "run": 10}}}"#, 4),
            Err("task \"t\": cpus 7 names no CPU of this host, which has 4 (CPUs 0-3)".into())
        );
        assert_eq!(
            check(r#"{"tasks": {"t": {"phases": {"p": {"cpus": [4, 5], "run": 10}}}}}"#, 4),
            Err("task \"t\": an affinity change to CPUs 4-5 names no CPU of this host, which has 4 (CPUs 0-3)".into())
        );
        // A phase without CPUs returns to every CPU: that is fine anywhere.
        assert_eq!(
            check(r#"{"tasks": {"t": {"phases": {"p": {"cpus": [1], "run": 10}, "q": {"run": 1}}}}}"#, 2),
            Ok(())
        );
    }
}

mod toml_errors {
    //! The TOML parser's errors, on one line with their reason.
    use super::test_files::error;

    /// The command line prints an error's first line, which held only
    /// "TOML parse error at line 2, column 12"; now the line has the
    /// position, the parser's reason and the text it points at.
    #[test]
    fn a_syntax_error_says_why_on_one_line() {
        let e = error("name = \"x\"\nduration = 1s\n");
        assert_eq!(e, "TOML: line 2, column 12: string values must be quoted, expected literal string (at `1s`)");
        let e = error("duration = \"1s\"\nduration = \"2s\"\n");
        assert_eq!(e, "TOML: line 2, column 1: duplicate key (at `duration`)");
        // At the end of the text there is nothing to show.
        let e = error("a = [1,\n");
        assert_eq!(e, "TOML: line 1, column 8: unclosed array, expected `]`");
        assert!(!e.contains('\n'));
    }
}

mod rt_app_durations {
    //! rt-app durations: plain µs, 0 or more, at most rt-app's C int.
    use super::test_files::error;
    use super::*;

    fn event(key: &str, value: &str) -> String {
        format!(r#"{{"tasks": {{"a": {{"run0": 1, "{key}": {value}}}}}}}"#)
    }

    /// A negative or huge number was "bad duration \"-1000\" (expected a
    /// number with a unit ...)", or 301 digits for 1e300; now the message
    /// says what rt-app takes. 2,147,483,647 µs (i32::MAX) is the longest.
    #[test]
    fn negative_and_huge_durations_say_what_rt_app_takes() {
        let limit = "rt-app durations are µs from 0 to 2147483647 (a C int, about 36 minutes)";
        assert_eq!(error(&event("run", "-1000")), format!("at tasks.a.run: -1000 is negative; {limit}"));
        assert_eq!(error(&event("delay", "-1")), format!("at tasks.a.delay: -1 is negative; {limit}"));
        assert_eq!(error(&event("sleep", "-0.5")), format!("at tasks.a.sleep: -0.5 is negative; {limit}"));
        assert_eq!(error(&event("runtime", "1e300")), format!("at tasks.a.runtime: 1e300 is too long; {limit}"));
        assert_eq!(
            error(&event("timer", r#"{"ref": "t", "period": 2147483648}"#)),
            format!("at tasks.a.timer.period: 2147483648 is too long; {limit}")
        );
        assert_eq!(error(&event("run", "\"3000s\"")), format!("at tasks.a.run: 3000s is too long; {limit}"));
        // The longest there is, and 0 (beside a run that takes time).
        let w = parse_workload(&event("run", "2147483647")).unwrap();
        assert_eq!(rt_events(&w, 0)[2], Instr::Run(Dist::Fixed(2_147_483_647_000)));
        let w = parse_workload(&event("sleep", "0")).unwrap();
        assert_eq!(rt_events(&w, 0)[2], Instr::Sleep(0));
    }
}

mod loop_depth {
    //! How deep loops nest, at the edge, in both ways TOML writes them.
    use super::test_files::error;
    use super::*;

    /// `n` loops, each inside the last, around a run with a distribution
    /// (the deepest op: two more levels), written inline.
    fn inline(n: usize) -> String {
        let mut op = "{ run = { mean = \"1us\", dist = \"exp\" } }".to_string();
        for _ in 0..n {
            op = format!("{{ loop = {{ count = 2, ops = [ {op} ] }} }}");
        }
        format!("duration = \"10ms\"\n[[task]]\nname = \"a\"\nops = [ {op} ]\n")
    }

    /// The same with table headers, which nest no brackets.
    fn headers(n: usize) -> String {
        let mut s = String::from("duration = \"10ms\"\n[[task]]\nname = \"a\"\n");
        let mut at = String::from("task.ops");
        for _ in 0..n {
            s += &format!("[[{at}]]\n[{at}.loop]\ncount = 2\n");
            at += ".loop.ops";
        }
        s + &format!("[[{at}]]\nrun = \"1us\"\n")
    }

    /// The docs said 32, but 21 inline loops hit the old 64-bracket guard,
    /// and the TOML parser itself stops at 80 levels: 26 inline loops.
    /// The limit is now 24 in every form. 24 inline loops nest
    /// 1 (the task's ops) + 3 x 24 + 2 (the run and its distribution) = 75
    /// brackets deep and parse; 25 nest 78, within both the guard (80) and
    /// the TOML parser, and get the limit's own error at the 25th loop's
    /// body.
    #[test]
    fn loops_nest_24_deep_in_either_form() {
        assert_eq!(bracket_depth(&inline(24)), 75);
        assert_eq!(bracket_depth(&inline(25)), 78);
        let deepest = |text: &str| {
            let w = parse_workload(text).unwrap();
            w.tasks[0].code.iter().filter(|i| matches!(i, Instr::LoopBegin { .. })).count()
        };
        // The task's own loop and 24.
        assert_eq!(deepest(&inline(24)), 25);
        assert_eq!(deepest(&headers(24)), 25);
        let at = format!("task[0].ops[0]{}", ".loop.ops[0]".repeat(24));
        let want = format!("at {at}.loop.ops: loops nested deeper than 24");
        assert_eq!(error(&inline(25)), want);
        assert_eq!(error(&headers(25)), want);
    }
}
