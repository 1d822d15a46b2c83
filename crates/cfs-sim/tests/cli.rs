//! Every command-line error path: one clear line on stderr, a non-zero
//! exit, never a panic.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cfs-sim")).args(args).output().unwrap()
}

/// Asserts a one-line error mentioning `needle`.
fn fails_with(args: &[&str], needle: &str) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.starts_with("cfs-sim: error:"), "{err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

const QUICK: [&str; 4] = ["--transactions", "50", "--runs", "1"];

fn pg(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec!["pgbench".into(), "--clients".into(), "1".into()];
    v.extend(QUICK.iter().map(|s| s.to_string()));
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn fails(extra: &[&str], needle: &str) {
    let v = pg(extra);
    let refs: Vec<&str> = v.iter().map(String::as_str).collect();
    fails_with(&refs, needle);
}

/// A clap error keeps what it names on its first lines: `run` without its
/// file says which argument is missing.
#[test]
fn a_missing_argument_is_named() {
    fails_with(&["run"], "the following required arguments were not provided: <FILE>");
}

#[test]
fn unknown_host() {
    fails(&["--host", "pdp11"], "unknown host");
    fails_with(&["topology", "pdp11"], "unknown host");
    // A bare word is not read as inline TOML (whose syntax error would be
    // the message); a near miss names the preset.
    fails(&["--host", "pdp11"], "not a preset, a spec or a file (presets:");
    fails(&["--host", "q660"], "did you mean \"q6600\"?");
    fails(&["--host", "nehalem"], "did you mean \"nehalem-ep\"?");
    // Something that looks like a path but is not there.
    fails(&["--host", "hosts/mine.toml"], "cannot read host file hosts/mine.toml");
    // A directory that holds no sysfs tree.
    let dir = std::env::temp_dir().join(format!("cfs-sim-nosysfs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    fails(&["--host", dir.to_str().unwrap()], "cannot read host from sysfs");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn near_miss_profiles_and_patches_are_named() {
    fails(&["--profile", "2.6.26rc4"], "did you mean \"2.6.26-rc4\"?");
    fails(&["--patch", "wakr"], "did you mean \"waker\"?");
    // Nothing close: no hint.
    let out = run(&pg(&["--profile", "2.4.0"]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("did you mean"));
}

/// `--host DIR` reads a sysfs tree: cfs-topology's Q6600 fixture, whose
/// BIOS numbers the cores of one L2 0 and 2 (hosts-and-costs.md §1.2), so
/// the 2.6.26 MC domains span {0,2} and {1,3} rather than {0,1} and {2,3}.
#[test]
fn a_sysfs_directory_is_a_host() {
    let hosts = run(&["hosts"]);
    assert!(String::from_utf8_lossy(&hosts.stdout).lines().any(|l| l.starts_with("local ")), "hosts lists `local`");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../cfs-topology/tests/fixtures/q6600");
    let out = run(&["topology", fixture, "--profile", "2.6.26"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("4 logical CPUs"), "{text}");
    assert!(text.contains("domain 0: span 0,2 level MC"), "{text}");
    assert!(text.contains("domain 0: span 1,3 level MC"), "{text}");
    let v = pg(&["--host", fixture]);
    let out = run(&v.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("sysfs:"));

    // A directory that happens to be called like a preset does not shadow it:
    // run where `./q6600` is a (CPU-less, so unreadable) sysfs tree, `--host
    // q6600` is still the preset, with its domains {0,1} and {2,3}.
    let dir = std::env::temp_dir().join(format!("cfs-sim-shadow-{}", std::process::id()));
    let q = dir.join("q6600/devices/system/cpu");
    std::fs::create_dir_all(&q).unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_cfs-sim")).args(["topology", "q6600"]).current_dir(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("domain 0: span 0-1 level MC"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_features_mask() {
    fails(&["--profile", "2.6.26-rc4", "--features", "99999"], "sched_features");
    fails(&["--features", "0x"], "sched_features");
    fails(&["--features", "NO_SUCH_FEATURE"], "sched_features");
}

#[test]
fn bad_cpu_lists() {
    fails(&["--pin-client", "7"], "CPU 7 does not exist");
    fails(&["--pin-backends", "3-1"], "bad CPU list");
    fails(&["--pin-client", "x"], "bad CPU list");
}

#[test]
fn unknown_and_inapplicable_patches() {
    fails(&["--patch", "turbo"], "unknown patch");
    fails(&["--profile", "2.6.26", "--patch", "affinity-fix"], "already contains");
    fails(&["--profile", "2.6.32", "--patch", "waker"], "does not apply");
    fails(&["--profile", "2.6.25", "--patch", "iterator-fix"], "rbtree");
    fails(&["--profile", "2.6.32", "--patch", "iterator-fix"], "already contains 38736f47507");
    fails(&["--profile", "2.6.32-rc1", "--patch", "wakeup-overlap"], "WAKEUP_OVERLAP feature bit");
    fails(&["--profile", "2.6.32", "--patch", "min-vruntime-fix"], "already contains 1af5f730fc1");
    // patches.md §6 (799e2205ec6) is rc1's alone, and sets domain flags that an
    // --sd-flags item must not contradict silently.
    fails(&["--profile", "2.6.32", "--patch", "prefer-local-to-node"], "6b9de613ae9");
    // The two postings of last_preempter are alternatives (patches.md §4).
    fails(
        &["--profile", "2.6.26-rc4", "--patch", "last-preempter", "--patch", "last-preempter-no-disperse"],
        "two versions of one patch",
    );
    fails(
        &["--profile", "2.6.26-rc4", "--patch", "last-preempter", "--switch", "1s:patch=last-preempter-no-disperse"],
        "two versions of one patch",
    );
    fails(&["--profile", "2.6.26", "--patch", "prefer-local-to-node"], "59abf02644c");
    fails(
        &["--profile", "2.6.32-rc1", "--patch", "prefer-local-to-node", "--sd-flags", "MC:+PREFER_LOCAL"],
        "patch prefer-local-to-node already sets SD_PREFER_LOCAL at MC; give one or the other",
    );
}

#[test]
fn unknown_profile_setting_policy_and_sd_flags() {
    fails(&["--profile", "2.4.0"], "unknown kernel profile");
    fails(&["--set", "sched_frobnicate=1"], "unknown setting");
    fails(&["--set", "hz"], "NAME=VALUE");
    fails(&["--set", "sched_latency_ns=1"], "out of range");
    fails(&["--set", "write_space_wakeups=maybe"], "not a valid value");
    fails(&["--set", "tcp_low_latency=maybe"], "--set tcp_low_latency=maybe: not a valid value");
    // CONFIG_NR_CPUS must cover the Q6600's 4 CPUs (cfs_core::Config::nr_cpus).
    fails(&["--set", "nr_cpus=2"], "NR_CPUS=2 must cover the machine's 4 CPUs");
    fails(&["--set", "nr_cpus=x"], "--set nr_cpus=x: not a valid value");
    fails(&["--pipe"], "--pipe does not apply to pgbench (messaging only)");
    fails(&["--set", "sndbuf=1000"], "--set sndbuf=1000: not a valid value (0 for unbounded, or 2048");
    fails(&["--switch", "1ms:set=sndbuf=0"], "sndbuf");
    fails(&["--policy", "fifo"], "policy: fifo is not a fair-class policy, and only the fair class is modelled");
    fails(&["--policy", "lazy"], "policy: unknown policy \"lazy\" (known: normal, batch, idle;");
    fails(&["--client-policy", "rr"], "client-policy: rr is not a fair-class policy");
    fails(&["--config", "server-policy=SCHED_DEADLINE"], "server-policy: SCHED_DEADLINE is not a fair-class policy");
    fails(&["--client-nice", "-21"], "client-nice: \"-21\" is not a nice level (-20..=19)");
    fails(&["--config", "server-nice=five"], "server-nice: \"five\" is not a nice level");
    fails(&["--sd-flags", "MC:-NOPE"], "sd-flags");
    fails(&["--config", "colour=red"], "unknown config key");
}

#[test]
fn bad_counts_and_durations() {
    fails_with(&["pgbench", "--clients", "0"], "bad client list");
    fails_with(&["pgbench", "--clients", "a-b"], "bad client list");
    fails_with(&["tbench", "--duration", "5 fortnights", "--runs", "1"], "bad duration");
    fails_with(&["tbench", "--duration", "0s", "--runs", "1"], "positive");
    fails_with(&["tbench", "--duration", "601s", "--runs", "1"], "at most 600s, the simulated-time cap");
    fails_with(&["messaging", "--loops", "0", "--runs", "1"], "--loops must be positive");
    // --jobs: a thread pool of 100,000 threads aborted the process.
    fails(&["--jobs", "0"], "--jobs must be 1..=1024");
    fails(&["--jobs", "100000"], "--jobs must be 1..=1024");
    assert!(run(&pg(&["--jobs", "1024"]).iter().map(String::as_str).collect::<Vec<_>>()).status.success());
    // The seed run refuses a bad --jobs before it makes its plot directory:
    // in a directory where `out` cannot be made (a file holds the name), the
    // error is still the --jobs one, not "cannot create out".
    let dir = std::env::temp_dir().join(format!("cfs-sim-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("out"), "not a directory").unwrap();
    for args in [&["--jobs", "0"][..], &["seed", "--jobs", "2000"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_cfs-sim")).args(args).current_dir(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("--jobs must be 1..=1024"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // Two columns with one label, named or not.
    fails(&["--config", "name=a", "--config", "name=a,features=863"], "two columns are both labelled \"a\"");
    // One key twice in one spec, under either of its spellings (was: the
    // last one won); keys that add up may repeat.
    fails(&["--config", "name=a,label=b"], "config key name is given twice in \"name=a,label=b\"");
    fails(&["--config", "features=863,f=861"], "config key features is given twice");
    fails(&["--config", "sd-flags=MC:-WAKE_AFFINE,sd=CPU:-WAKE_AFFINE"], "config key sd-flags is given twice");
    let ok = pg(&["--config", "set=sched_nr_migrate=8,set=sched_nr_migrate=16,cost=syscall_ns=1,cost=syscall_ns=2"]);
    assert!(run(&ok.iter().map(String::as_str).collect::<Vec<_>>()).status.success());
    fails(&["--config", "features=863", "--config", "features=863"], "give each its own name (name= in --config");
    fails_with(&["pgbench", "--runs", "0"], "runs");
    fails_with(&["hogs", "--nice", "40", "--runs", "1", "--duration", "10ms"], "bad nice");
}

#[test]
fn malformed_workload_files() {
    let dir = std::env::temp_dir().join(format!("cfs-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[[task]]\nname = \"a\"\nops = [ { run = \"1ms\", colour = 3 } ]\n").unwrap();
    fails_with(&["run", bad.to_str().unwrap(), "--runs", "1"], "colour");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{ \"tasks\": ").unwrap();
    fails_with(&["run", broken.to_str().unwrap(), "--runs", "1"], "JSON");
    fails_with(&["run", dir.join("missing.toml").to_str().unwrap()], "cannot read");
    let sweep = dir.join("sweep.toml");
    std::fs::write(&sweep, "[[config]]\nname = \"x\"\nflavour = 1\n").unwrap();
    fails(&["--sweep", sweep.to_str().unwrap()], "sweep file: line 3, column 1: unknown field `flavour`");
    // A sweep with no column at all (was: the command line's one column).
    std::fs::write(&sweep, "config = []\n").unwrap();
    fails(&["--sweep", sweep.to_str().unwrap()], "sweep file: no [[config]] table");
    // A host file's TOML error names the key and where it is, on one line.
    let host = dir.join("host.toml");
    std::fs::write(&host, "name = \"mine\"\nspec = \"1s4c\"\ncolour = 1\n").unwrap();
    fails(&["--host", host.to_str().unwrap()], "host.toml: line 3, column 1: unknown field `colour`");
    // A fork bomb is a clear error, not a machine out of memory: the fork
    // that would make 32,769 tasks alive fails (the kernel's pid_max).
    let bomb = dir.join("bomb.toml");
    let text = "name = \"bomb\"\n[[task]]\nname = \"launcher\"\nfinish = true\n\
                ops = [ { loop = { ops = [ { fork = \"worker\" } ] } } ]\n\
                [[task]]\nname = \"worker\"\ninstances = 0\nops = [ { wait = \"one\" } ]\n";
    std::fs::write(&bomb, text).unwrap();
    fails_with(&["run", bomb.to_str().unwrap(), "--runs", "1"], "32768 tasks alive, the kernel's default pid_max");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn options_that_do_not_apply() {
    fails_with(&["tbench", "--transactions", "5"], "does not apply");
    fails_with(&["pgbench", "--nice", "5"], "does not apply");
    fails_with(&["starve", "--clients", "2"], "does not apply");
    // Only the two-sided workloads have backends or servers to pin or
    // to start under chrt; a workload file pins its tasks itself.
    fails_with(&["hogs", "--pin-backends", "1"], "--pin-backends does not apply to hogs");
    fails_with(&["volanomark", "--server-policy", "batch"], "--server-policy does not apply");
    fails_with(&["messaging", "--client-policy", "batch"], "--client-policy does not apply");
    fails_with(&["hogs", "--config", "client-policy=batch"], "do not apply to hogs");
    fails_with(&["messaging", "--server-nice", "5"], "--server-nice does not apply");
    fails_with(&["hogs", "--config", "client-nice=5"], "do not apply to hogs");
    let file = std::env::temp_dir().join(format!("cfs-sim-pin-{}.toml", std::process::id()));
    std::fs::write(&file, "duration = \"10ms\"\n[[task]]\nname = \"a\"\nops = [ { run = \"1ms\" } ]\n").unwrap();
    fails_with(&["run", file.to_str().unwrap(), "--pin-client", "0"], "--pin-client does not apply");
    // A file's CPUs are checked against the host the plan read.
    std::fs::write(&file, "duration = \"10ms\"\n[[task]]\nname = \"a\"\ncpus = \"7\"\nops = [ { run = \"1ms\" } ]\n")
        .unwrap();
    fails_with(
        &["run", file.to_str().unwrap()],
        &format!("{}: task \"a\": cpus 7 names no CPU of this host, which has 4 (CPUs 0-3)", file.display()),
    );
    let _ = std::fs::remove_file(&file);
}

#[test]
fn bad_plot_extension_and_usage_errors() {
    fails(&["--plot", "/tmp/cfs-sim-plot.gif"], ".svg or .png");
    // Output files are checked before anything runs: no table is printed.
    let tmp = std::env::temp_dir();
    for (flag, path, needle) in [
        ("--plot", tmp.join("cfs-sim-plot.jpg"), "must end in .svg or .png"),
        ("--csv", tmp.clone(), "it is a directory"),
        ("--trace", tmp.clone(), "it is a directory"),
        ("--json", tmp.clone(), "it is a directory"),
        ("--plot", tmp.join("cfs-sim-dir.svg"), "it is a directory"),
    ] {
        if flag == "--plot" && needle == "it is a directory" {
            std::fs::create_dir_all(&path).unwrap();
        }
        let v = pg(&[flag, path.to_str().unwrap()]);
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        fails_with(&refs, needle);
        assert!(run(&refs).stdout.is_empty(), "{flag} {}: a table was printed", path.display());
    }
    let _ = std::fs::remove_dir(tmp.join("cfs-sim-dir.svg"));
    // The check leaves no file behind: a run that passes it and then
    // fails (a workload that deadlocks) writes no CSV, not even an empty one.
    let stuck = tmp.join(format!("cfs-sim-stuck-{}.toml", std::process::id()));
    std::fs::write(&stuck, "[[task]]\nname = \"a\"\nfinish = true\nops = [ \"wait\" ]\n").unwrap();
    let csv = tmp.join(format!("cfs-sim-never-{}.csv", std::process::id()));
    fails_with(&["run", stuck.to_str().unwrap(), "--runs", "1", "--csv", csv.to_str().unwrap()], "stalled");
    assert!(!csv.exists());
    let _ = std::fs::remove_file(&stuck);
    fails_with(&["pgbench", "--no-such-flag"], "--no-such-flag");
    fails_with(&["pgbench", "--transactions", "5", "--duration", "1s"], "cannot be used with");
    // --replay names one run's seed: it runs once, from that seed alone.
    fails(&["--replay", "7"], "'--runs <RUNS>' cannot be used with '--replay <SEED>'");
    fails_with(&["pgbench", "--replay", "7", "--seed", "2"], "cannot be used with");
    fails_with(&["seed", "--replay", "7", "--runs", "2"], "cannot be used with");
    fails_with(&["pgbench", "--replay", "seven"], "--replay");
    // --switch: a time, then settings that every column's kernel accepts.
    fails(&["--switch", "2s"], "expected AT:SETTINGS");
    fails(&["--switch", "soon:features=863"], "--switch");
    fails(&["--switch", "1s:"], "no setting");
    fails(&["--switch", "1s:colour=blue"], "unknown key \"colour\"");
    // A policy switch names a policy of the fair class, a CPU list the
    // host's CPUs, a renice a level in -20..=19 (refused, where renice(1)
    // would clamp, as --nice refuses it); a side's policy, CPUs or nice
    // level need two sides.
    fails(&["--switch", "1s:policy=fast"], "unknown policy \"fast\"");
    fails(&["--switch", "1s:server-policy=SCHED_RR"], "only the fair class is modelled");
    fails(
        &["--switch", "1s:pin-backends=4-5"],
        "--switch at 1s: pin-backends=4-5: CPU 4 does not exist (the host has 4)",
    );
    fails(&["--switch", "1s:pin-client="], "pin-client names no CPU");
    fails(&["--switch", "1s:affinity=0-"], "bad CPU list \"0-\"");
    fails(&["--switch", "1s:nice=20"], "nice \"20\" is not a nice level (-20..=19)");
    fails(&["--switch", "1s:client-nice=low"], "client-nice \"low\" is not a nice level");
    for key in ["client-policy=batch", "pin-backends=1", "server-nice=5"] {
        fails_with(
            &["hogs", "--clients", "2", "--duration", "1s", "--switch", &format!("500ms:{key}")],
            &format!("--switch at 500ms: {key} does not apply to hogs"),
        );
    }
    fails(&["--switch", "1s:set=hz=1000"], "fixed at boot");
    fails(&["--switch", "1s:set=preempt=1"], "preempt is fixed at boot");
    fails(&["--switch", "1s:set=numa=on"], "numa is fixed at boot");
    fails(&["--switch", "1s:set=relax_domain_level=1"], "relax_domain_level is fixed at boot");
    fails(&["--switch", "1s:set=sched_latency_ns=x"], "not an integer");
    fails(&["--switch", "1s:set=tcp_low_latency=on"], "\"on\" is not an integer");
    fails(&["--switch", "1s:set=sched_bogus=1"], "unknown tunable");
    fails(&["--switch", "1s:features=99999"], "sched_features mask");
    fails(&["--switch", "1s:patch=wakr"], "unknown patch");
    fails(&["--switch", "1s:patch=affinity-fix"], "b3137bc8e77");
    fails(&["--switch", "1s:sd-flags=MC:-PREFER_LOCAL"], "PREFER_LOCAL");
    fails_with(&["pgbench", "--duration", "1s", "--switch", "2s:features=863"], "not before the end of the run");
    // A ratio to the first column needs a second column.
    fails(&["--relative"], "--relative compares columns");
    fails(&["--relative", "--config", "features=895"], "two or more configurations");
    // So does a test against it, and a test needs runs to rank.
    fails(&["--significance"], "--significance tests columns");
    fails(&["--significance", "--config", "features=895", "--config", "features=861"], "--runs 2 or more");
    fails_with(
        &["pgbench", "--clients", "1", "--transactions", "50", "--replay", "7", "--significance"]
            .into_iter()
            .chain(["--config", "features=895", "--config", "features=861"])
            .collect::<Vec<_>>(),
        "--replay, cannot be tested",
    );
}

/// `--significance` against the pile: at 4 clients 861 (no sync wakeups,
/// no wakeup preemption) spreads over the Q6600 and 895 piles up, 21K
/// against 12K TPS over 1,000 transactions (the spread is still forming
/// then: 25K at 2,000, 27.9K in the default run) in every run of every
/// seed tried, so the five runs of
/// each never overlap and p = 2/C(10, 5) = 2/252 = 0.008, the least five
/// runs can give. A column equal to the baseline (same settings, same
/// seeds, so the same runs) gives p = 1.
#[test]
fn significance_marks_a_difference_beyond_the_runs_spread() {
    let out = run(&[
        "pgbench",
        "--clients",
        "4",
        "--transactions",
        "1000",
        "--runs",
        "5",
        "--config",
        "name=895,features=895",
        "--config",
        "name=861,features=861",
        "--config",
        "name=again,features=895",
        "--significance",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let row: Vec<&str> = text.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row.len(), 6, "{text}");
    assert_eq!((row[3], row[5]), ("p=0.008", "p=1.000"), "{text}");
    assert!(row[2].parse::<f64>().unwrap() > 1.5 * row[1].parse::<f64>().unwrap(), "{text}");
}

#[test]
fn good_commands_succeed() {
    for args in [
        &["hosts"][..],
        &["topology", "q6600", "--profile", "2.6.26-rc4"],
        &["topology", "2s4c2t", "--json"],
        &["starve", "--duration", "20ms", "--runs", "1"],
    ] {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // topology takes its host as HOST or, like every other command, as
    // --host, and shows the Q6600 without one: all three print the same.
    let show = |args: &[&str]| String::from_utf8(run(args).stdout).unwrap();
    let q6600 = show(&["topology", "q6600"]);
    assert!(q6600.contains("q6600"), "{q6600}");
    assert_eq!(show(&["topology", "--host", "q6600"]), q6600);
    assert_eq!(show(&["topology"]), q6600);
    assert_ne!(show(&["topology", "--host", "x2"]), q6600);
    fails_with(&["topology", "q6600", "--host", "x2"], "cannot be used with");
    // hosts --json: every preset with its description and its host as
    // topology --json gives it, then `local`, which is read only when used.
    let v: serde_json::Value = serde_json::from_slice(&run(&["hosts", "--json"]).stdout).unwrap();
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["x2", "q6600", "nehalem-ep", "tigerton", "stoakley", "local"]);
    let topo: serde_json::Value = serde_json::from_slice(&run(&["topology", "q6600", "--json"]).stdout).unwrap();
    assert_eq!(v[1]["host"], topo["host"]);
    // 2 sockets x 4 cores x 2 threads, as the preset's description says.
    assert_eq!(v[2]["host"]["cpus"].as_array().unwrap().len(), 16);
    assert!(v[5]["host"].is_null() && v[5]["description"].as_str().unwrap().contains("/sys"));
}

#[test]
fn rust_log_turns_on_decision_logging_and_a_bad_filter_is_an_error() {
    let hogs = ["hogs", "--clients", "2", "--runs", "1", "--duration", "10ms"];
    let with = |filter: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cfs-sim"));
        cmd.args(hogs).env_remove("RUST_LOG");
        if let Some(f) = filter {
            cmd.env("RUST_LOG", f);
        }
        cmd.output().unwrap()
    };
    let quiet = with(None);
    assert!(quiet.status.success());
    assert!(quiet.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet.stderr));
    // Two hogs are forked, so cfs-core reports two Fork events at TRACE.
    let loud = with(Some("cfs_core=trace"));
    assert!(loud.status.success());
    let log = String::from_utf8_lossy(&loud.stderr);
    assert!(log.lines().filter(|l| l.contains("TRACE") && l.contains("event=Fork")).count() >= 2, "{log}");
    // A level filter below TRACE hides the decision events.
    let info = with(Some("cfs_core=info"));
    assert!(!String::from_utf8_lossy(&info.stderr).contains("event="));
    let bad = with(Some("cfs_core=loud"));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("cfs-sim: error: RUST_LOG"), "{err}");
}

#[test]
fn plots_are_written_as_svg_and_png() {
    let dir = std::env::temp_dir().join(format!("cfs-sim-plot-test-{}", std::process::id()));
    let (svg, png_path) = (dir.join("hogs.svg"), dir.join("sub/hogs.png"));
    for p in [&svg, &png_path] {
        let args = ["hogs", "--clients", "1,2", "--runs", "1", "--duration", "20ms", "--plot", p.to_str().unwrap()];
        let out = run(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("<polyline"), "{}", &text[..text.len().min(200)]);
    // The PNG decodes to the 900x600 RGB image drawn, with the white
    // background, the black axes and at least one coloured line.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png_path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height, info.color_type), (900, 600, png::ColorType::Rgb));
    let pixels = || buf[..info.buffer_size()].chunks(3);
    assert!(pixels().filter(|p| p == &[255, 255, 255]).count() > 900 * 600 / 2, "mostly white background");
    assert!(pixels().any(|p| p == [0, 0, 0]), "black axes");
    assert!(pixels().any(|p| p[0] != p[1] || p[1] != p[2]), "a coloured line");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn host_names_that_look_like_files_or_inline_settings() {
    // A `.toml` name is a file name even without a directory part.
    fails(&["--host", "mine.toml"], "cannot read host file mine.toml: no such file");
    // A word with `=` that is not a spec (specs start with a count) or with
    // a line break is neither a preset nor a spec.
    fails(&["--host", "cores=4"], "not a preset or spec");
    fails(&["--host", "2s\nx"], "not a preset or spec");
    // A spec may carry `key=value` settings after its shape.
    let out = run(&pg(&["--host", "1s2c1t,mhz=2400"]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn client_lists_and_run_counts_at_their_limits() {
    use cfs_sim::cli::parse_clients;
    assert_eq!(parse_clients("1,2,4-6").unwrap(), [1, 2, 4, 5, 6]);
    assert_eq!(parse_clients("4096").unwrap(), [4096]);
    assert_eq!(parse_clients("3-3").unwrap(), [3]);
    assert_eq!(parse_clients("1-4096").unwrap().len(), 4096);
    // Ranges add up to the 4,096 counts a list may hold: 3,000 + 1,096,
    // each count once.
    assert_eq!(parse_clients("1-3000,3001-4096").unwrap().len(), 4096);
    assert!(parse_clients("1-3000,1-1097").is_err());
    assert!(parse_clients("1-3000,1-1096").unwrap_err().contains("client count 1 given twice"));
    for bad in ["0", "4097", "5-3", "1-4097", "1-4096,7", "", " , ", "1,,2", "1,2,"] {
        let e = parse_clients(bad).unwrap_err();
        assert!(e.starts_with("bad client list"), "{bad:?}: {e}");
    }
    // --runs takes 1..=1000.
    let out = run(&["pgbench", "--clients", "1", "--transactions", "10", "--runs", "1000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    fails_with(&["pgbench", "--clients", "1", "--transactions", "10", "--runs", "1001"], "--runs must be 1..=1000");
}

/// `cfs-sim ... | head`: a reader that goes away ends the command quietly
/// (exit 0, nothing on stderr), as Unix tools do. The output here (a
/// 128-CPU host's domains, ~160 KB) is larger than a pipe holds, so the
/// write fails whether or not it started before the reader left.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cfs-sim"))
        .args(["topology", "8s8c2t"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Output files go where they are asked to, directories created on the
/// way; `--stats` reports simulated seconds per wall second as the
/// quotient of the two figures it prints beside it.
#[test]
fn outputs_create_their_directories_and_stats_add_up() {
    let dir = std::env::temp_dir().join(format!("cfs-sim-out-{}", std::process::id()));
    let csv = dir.join("a/b/hogs.csv");
    let json = dir.join("c/hogs.json");
    let args = ["hogs", "--clients", "2", "--runs", "2", "--duration", "20ms", "--stats", "--csv"];
    let mut args: Vec<&str> = args.to_vec();
    args.extend([csv.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    let out = run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 1 + 2, "a header and one line per run: {text}");
    assert!(std::fs::read_to_string(&json).unwrap().contains("\"runs\""));
    // "stats: 2 runs, 0.04 simulated s in W wall s: R sim-s per wall-s, ..."
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.starts_with("stats: ")).unwrap_or_else(|| panic!("no stats line: {err}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&words[1..3], ["2", "runs,"], "{line}");
    let sim: f64 = words[3].parse().unwrap();
    let wall: f64 = words[7].parse().unwrap();
    let rate: f64 = words[10].parse().unwrap();
    assert!((sim - 0.04).abs() < 0.006, "2 runs of 20 ms: {line}");
    // The printed figures are rounded (to 0.01 s and 0.1): allow for it.
    let lo = (sim - 0.005) / (wall + 0.005).max(1e-9);
    let hi = (sim + 0.005) / (wall - 0.005).max(1e-9);
    assert!(rate >= lo - 0.05 && (wall < 0.006 || rate <= hi + 0.05), "{line}");
    // A part of the path that is a file, not a directory, is named as such.
    let file = dir.join("c/hogs.json/x.csv");
    let e = run(&["hogs", "--clients", "1", "--runs", "1", "--duration", "5ms", "--csv", file.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&e.stderr).to_string();
    assert!(e.contains(&format!("{} is not a directory", json.display())), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The seed run's own limits, and its eight columns.
#[test]
fn the_seed_run_checks_its_counts_and_has_eight_columns() {
    fails_with(&["--runs", "0"], "--runs must be 1..=1000");
    fails_with(&["--transactions", "0"], "--transactions must be positive");
    let labels: Vec<String> = cfs_sim::cli::seed_specs().into_iter().map(|s| s.label.unwrap()).collect();
    let want = ["895", "863", "861", "893", "waker", "affinity-fix", "2.6.26", "2.6.26+last-preempter"];
    assert_eq!(labels, want);
    let profiles: Vec<String> = cfs_sim::cli::seed_specs().into_iter().map(|s| s.profile).collect();
    assert_eq!(profiles, [&["2.6.26-rc4"; 6][..], &["2.6.26"; 2]].concat());
}

/// `--relative` needs two columns, and two are enough.
#[test]
fn relative_with_two_columns() {
    let out = run(&pg(&["--relative", "--config", "features=895", "--config", "features=861"])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().nth(2).unwrap().split_whitespace().nth(2).unwrap().starts_with('x'), "{text}");
}

/// `--waits` follows the throughput table with the mean and the longest
/// runqueue wait, laid out the same way (one row per client count).
#[test]
fn waits_add_two_tables() {
    let out = run(&["hogs", "--clients", "1,2", "--runs", "1", "--duration", "100ms", "--pin-client", "0", "--waits"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(heads.len(), 3, "{text}");
    assert!(heads[1].contains("mean runqueue wait") && heads[2].contains("longest runqueue wait"), "{text}");
    // Two pinned hogs take 30 ms turns (see tests/workloads.rs): the
    // longest wait at 2 hogs is at least that, in µs.
    let last: f64 = text.lines().last().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(last >= 30_000.0, "{text}");
    // --tasks: a block per cell, the launcher and its hogs (grouped by name).
    let out = run(&["hogs", "--clients", "1,2", "--runs", "1", "--duration", "100ms", "--pin-client", "0", "--tasks"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("# tasks of the median run: 2.6.26 at ").count(), 2, "{text}");
    assert!(text.lines().any(|l| l.starts_with("hog1(nice 0)")), "{text}");
}

/// A write error other than a closed pipe is an error (here: a full
/// disk, as /dev/full reports it).
#[test]
fn a_full_stdout_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_cfs-sim")).arg("hosts").stdout(full).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("cfs-sim: error: cannot write to stdout"), "{err}");
}

/// The default run, shortened: the table's eight columns, both plots
/// under out/, the comparison with the features table, and runs as long
/// as the transactions asked for (200 at ~10K TPS: ~20 ms, not the 1 s
/// a timed run would take).
#[test]
fn the_default_run_prints_plots_and_compares() {
    let dir = std::env::temp_dir().join(format!("cfs-sim-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cfs-sim"))
        .args(["--clients", "1", "--runs", "1", "--transactions", "200", "--json", "seed.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let header: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header.len(), 1 + 8, "{text}");
    assert!(text.contains("# vs pgbench-q6600-features.csv"), "{text}");
    // Issue 5's seven shapes follow; one client alone judges only the
    // two that compare columns at one client count (none applies here).
    let shapes: Vec<&str> = text.lines().filter(|l| l.starts_with("# shape: ")).collect();
    assert_eq!(shapes.len(), 7, "{text}");
    assert!(shapes.iter().all(|l| l.ends_with("(not measured)")), "{shapes:?}");
    for plot in ["out/seed.svg", "out/seed.png"] {
        assert!(dir.join(plot).is_file(), "{plot} missing");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("seed.json")).unwrap()).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r["elapsed_s"].as_f64().unwrap() < 0.1), "{runs:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cfs-sim calibrate`, shortened: every published table (one with
/// --features-only); the model's cells are the runs `cfs-sim pgbench`
/// makes with the same seed; the overall mean |error| is the mean of the
/// errors printed (to their rounding).
#[test]
fn calibrate_compares_every_table_with_the_same_runs() {
    let stdout = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let all = stdout(&["calibrate", "--runs", "1", "--transactions", "100"]);
    assert_eq!(all.lines().filter(|l| l.starts_with("#### ")).count(), 7);
    let features = stdout(&["calibrate", "--features-only", "--runs", "1", "--transactions", "100"]);
    assert_eq!(features.lines().filter(|l| l.starts_with("#### ")).count(), 1);
    // The 895 cell at 1 client: "| 1 | 11043 | <model> | <err> |".
    let row = features.lines().find(|l| l.starts_with("| 1 |")).unwrap();
    let model: f64 = row.split('|').nth(3).unwrap().trim().parse().unwrap();
    let pg = stdout(&["pgbench", "--profile", "2.6.26-rc4", "--clients", "1", "--runs", "1", "--transactions", "100"]);
    let direct: f64 = pg.lines().nth(2).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(model, direct.round());
    // Every "+12%" / "-3%" cell of every table, against the overall mean.
    let errs: Vec<f64> = all
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| clients"))
        .flat_map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| c.ends_with('%'))
                .map(|c| c.trim_end_matches('%').parse::<f64>().unwrap().abs())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(errs.len(), 218, "every expressible point");
    let mean = errs.iter().sum::<f64>() / errs.len() as f64;
    let overall = all.lines().find(|l| l.starts_with("overall:")).unwrap();
    let printed: f64 = overall.split("mean |error| ").nth(1).unwrap().split('%').next().unwrap().parse().unwrap();
    assert!((printed - mean).abs() <= 0.6, "{overall}: the printed errors average {mean:.1}%");
}

/// `calibrate --plot`: a file that is neither .svg nor .png is refused
/// before any run; otherwise the plot has a line for each configuration
/// the tables need (the features table's six with --features-only) and
/// one legend entry for the published values drawn beside them.
#[test]
fn calibrate_plots_the_model_beside_the_published_tables() {
    fails_with(&["calibrate", "--plot", "cal.txt"], "must end in .svg or .png");
    let dir = scratch("calplot");
    let svg = dir.join("cal.svg");
    let args = ["calibrate", "--features-only", "--runs", "1", "--transactions", "300", "--plot"];
    let out = run(&[&args[..], &[svg.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // Every text of the plot, in drawing order: the caption, the axes,
    // then the legend.
    let texts: Vec<&str> =
        text.split("<text ").skip(1).filter_map(|t| t.split('>').nth(1)?.split('<').next()).map(str::trim).collect();
    let legend = ["895", "waker", "0", "893", "863", "861", "published (../shared/data)"];
    assert!(texts.len() > legend.len() && texts.ends_with(&legend), "{texts:?}");
    assert_eq!(texts.iter().filter(|&&t| t.starts_with("published")).count(), 1, "{texts:?}");
}

/// A scratch directory of this test process, for files the tests write.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cfs-sim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// calibrate and seed check --runs and --transactions as pgbench does,
/// before any run starts (calibrate with --runs 100000 used to start
/// 100000 × 14 × 11 runs).
#[test]
fn calibrate_and_seed_check_their_run_counts() {
    fails_with(&["calibrate", "--runs", "0"], "--runs must be 1..=1000");
    fails_with(&["calibrate", "--runs", "100000"], "--runs must be 1..=1000");
    fails_with(&["calibrate", "--transactions", "0"], "--transactions must be positive");
    fails_with(&["seed", "--runs", "1001"], "--runs must be 1..=1000");
    fails_with(&["seed", "--transactions", "0"], "--transactions must be positive");
}

/// `seed --set` and `calibrate --set` give every column a kernel build
/// option, as pgbench's `--set` gives its columns one: each of the seed's
/// eight columns runs at HZ=1000 (the JSON's `configs`), the header names
/// the setting, and a bad item is refused with pgbench's message.
#[test]
fn seed_and_calibrate_set_a_kernel_option_for_every_column() {
    fails_with(&["seed", "--set", "hz"], "--set \"hz\" is not NAME=VALUE");
    fails_with(&["seed", "--set", "sched_frobnicate=1"], "unknown setting");
    fails_with(&["calibrate", "--set", "nr_cpus=2"], "NR_CPUS=2 must cover the machine's 4 CPUs");
    let dir = scratch("seedset");
    let plot = dir.join("s.svg");
    let base = ["seed", "--clients", "1", "--runs", "1", "--transactions", "100", "--plot", plot.to_str().unwrap()];
    let out = run(&[&base[..], &["--set", "hz=1000", "--set", "hres_timers=1", "--json"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    let configs = json["configs"].as_array().expect("configs");
    assert_eq!(configs.len(), 8);
    for c in configs {
        assert_eq!((c["hz"].as_u64(), c["hres_timers"].as_bool()), (Some(1000), Some(true)), "{c}");
    }
    let out = run(&[&base[..], &["--set", "hz=1000"]].concat());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.lines().next().is_some_and(|l| l.contains("; every column with hz=1000)")), "{table}");
    // Without --set the columns keep the defaults (HZ=250).
    let out = run(&[&base[..], &["--json"]].concat());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert!(json["configs"].as_array().unwrap().iter().all(|c| c["hz"].as_u64() == Some(250)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `seed --seeds 1-2` runs the experiment at base seeds 1 and 2 and prints
/// each seed's fidelity and shape lines, which are the lines a plain run
/// at that `--seed` prints, then per shape how many seeds met it, counted
/// from those lines. Table-shaped outputs are refused with it, as are a
/// `--seed` and a malformed or oversized list.
#[test]
fn seed_sweeps_base_seeds_and_counts_each_shapes_verdicts() {
    fails_with(&["seed", "--seeds", "1-2", "--seed", "3"], "cannot be used with");
    fails_with(&["seed", "--seeds", "1-2", "--csv", "-"], "cannot be used with");
    fails_with(&["seed", "--seeds", "1-2", "--tasks"], "cannot be used with");
    fails_with(&["seed", "--seeds", "5-1"], "bad seed list \"5-1\"");
    fails_with(&["seed", "--seeds", "x"], "bad seed list");
    // A seed given twice would count one result as two confirmations.
    fails_with(&["seed", "--seeds", "1,3,1"], "bad seed list \"1,3,1\": seed 1 given twice");
    fails_with(&["seed", "--seeds", "0-1000"], "at most 1000 seeds");
    let small = ["--clients", "1,2,8,15,30", "--runs", "1", "--transactions", "600"];
    let out = run(&[&["seed", "--seeds", "1-2"][..], &small].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sweep = String::from_utf8_lossy(&out.stdout).to_string();
    let dir = scratch("seedsweep");
    let plot = dir.join("s.svg");
    let mut met = [0usize; 7];
    for base in ["1", "2"] {
        let alone = run(&[&["seed", "--seed", base, "--plot", plot.to_str().unwrap()][..], &small].concat());
        let alone = String::from_utf8_lossy(&alone.stdout).to_string();
        let judged: Vec<&str> =
            alone.lines().filter(|l| l.starts_with("# shape: ") || l.starts_with("# vs ")).collect();
        assert_eq!(judged.len(), 8, "{alone}");
        for line in &judged {
            let mine = format!("seed {base}: {}", line.trim_start_matches("# "));
            assert!(sweep.lines().any(|l| l == mine), "{mine:?} not in {sweep}");
        }
        for (i, line) in judged.iter().filter(|l| l.starts_with("# shape: ")).enumerate() {
            met[i] += usize::from(line.ends_with("(met)"));
        }
    }
    let summary: Vec<&str> = sweep.lines().filter(|l| l.starts_with("# over the seeds: ")).collect();
    assert_eq!(summary.len(), 7, "{sweep}");
    for (line, n) in summary.iter().zip(met) {
        assert!(line.contains(&format!(": met at {n} of 2")), "{line} (met {n})");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// When stdout carries the JSON (a bare `--json`) or the CSV (`--csv -`),
/// the seed run's comparison and shape lines go to stderr, and stdout
/// parses.
#[test]
fn the_seed_runs_summary_leaves_machine_readable_stdout_alone() {
    let dir = scratch("seedjson");
    let plot = dir.join("s.svg");
    let base = ["seed", "--clients", "1", "--runs", "1", "--transactions", "100", "--plot", plot.to_str().unwrap()];
    let out = run(&[&base[..], &["--json"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(json["runs"].as_array().map(Vec::len), Some(8));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("# vs pgbench-q6600-features.csv") && err.contains("# shape: "), "{err}");
    let out = run(&[&base[..], &["--csv", "-"]].concat());
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.lines().all(|l| !l.starts_with('#')), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 8, "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--transactions` is a total split over the clients (selecttest.sh's
/// `-t $((100000 / C))`), so a total below a cell's client count would
/// leave clients with none: refused, naming the largest count, for
/// pgbench, the seed run (60 clients by default) and calibrate (1-60).
/// A total equal to the count is one transaction each, and runs.
#[test]
fn a_transaction_total_below_the_client_count_is_refused() {
    let pg = ["pgbench", "--runs", "1", "--clients", "1,5"];
    fails_with(&[&pg[..], &["--transactions", "4"]].concat(), "--transactions 4 is fewer than 5 clients");
    fails_with(&["seed", "--transactions", "59"], "--transactions 59 is fewer than 60 clients");
    fails_with(&["seed", "--clients", "1-8", "--transactions", "7"], "--transactions 7 is fewer than 8 clients");
    fails_with(&["calibrate", "--transactions", "10"], "--transactions 10 is fewer than 60 clients");
    let out = run(&[&pg[..], &["--transactions", "5", "--csv", "-"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Settings that would change nothing are refused: an empty mask, a mask
/// wider than the kernel's 32 bits, domain flags only for levels the host
/// does not build (the Q6600 builds MC and CPU under 2.6.26, no NODE), at
/// boot or mid-run, and a switch at 0, which is the starting setting.
#[test]
fn settings_that_would_change_nothing_are_refused() {
    fails(&["--features="], "empty sched_features");
    fails(&["--config", "features="], "empty sched_features");
    fails(&["--features", "0xffffffffffffffff"], "not a 32-bit number");
    fails(&["--features", "4294967296"], "not a 32-bit number");
    fails(&["--sd-flags", "NODE:-WAKE_AFFINE"], "builds no NODE domain under 2.6.26 (its levels: MC, CPU)");
    fails(&["--switch", "1ms:sd-flags=NODE:-WAKE_AFFINE"], "--switch at 1ms: this host builds no NODE domain");
    fails(&["--switch", "1ms:features="], "empty sched_features");
    // One list may serve several hosts: a level the host lacks is skipped
    // as long as another item of the list applies (NODE is skipped on the
    // Q6600 here, MC applies), at boot and mid-run.
    let mixed = run(&pg(&[
        "--sd-flags",
        "MC:-WAKE_AFFINE,NODE:-WAKE_AFFINE",
        "--switch",
        "1ms:sd-flags=NODE:-WAKE_AFFINE,MC:+WAKE_AFFINE",
    ])
    .iter()
    .map(String::as_str)
    .collect::<Vec<_>>());
    assert!(mixed.status.success(), "{}", String::from_utf8_lossy(&mixed.stderr));
    fails_with(
        &["tbench", "--clients", "1", "--runs", "1", "--switch", "0s:features=863"],
        "--switch at 0 is the starting setting",
    );
    // 0xffffffff fits in 32 bits: what is wrong with it is its undefined
    // bits, which the feature table names.
    let out = run(&pg(&["--features", "0xffffffff"]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("32-bit"));
}

/// A workload file's own duration bounds --switch, and its warmup must be
/// shorter than the run (pingpong.toml: duration 200 ms, warmup 20 ms).
#[test]
fn a_workload_files_own_duration_bounds_switches_and_warmup() {
    let f = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/pingpong.toml");
    fails_with(
        &["run", f, "--switch", "700s:features=863"],
        "not before the end of the run (the workload's duration 200ms)",
    );
    fails_with(
        &["run", f, "--duration", "20ms"],
        "warmup 20ms is not shorter than the run's duration 20ms: progress before 20ms is not counted, so nothing would be measured (--duration)",
    );
    let ok = run(&["run", f, "--duration", "21ms", "--switch", "20ms:features=863"]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}

/// Outputs never overwrite the input or each other, also when named
/// differently (`./`); `--csv -` writes to stdout in place of the table.
#[test]
fn outputs_neither_overwrite_inputs_nor_each_other() {
    let dir = scratch("clobber");
    let wl = dir.join("w.toml");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/pingpong.toml"), &wl).unwrap();
    let w = wl.to_str().unwrap();
    let dotted = format!("{}/./w.toml", dir.display());
    fails_with(&["run", w, "--csv", &dotted], "would overwrite the input file");
    let sweep = dir.join("s.toml");
    std::fs::write(&sweep, "[[config]]\nname = \"a\"\n").unwrap();
    fails(&["--sweep", sweep.to_str().unwrap(), "--json", sweep.to_str().unwrap()], "would overwrite the input file");
    let host = dir.join("h.toml");
    std::fs::write(&host, "[[socket]]\ncores = 2\n").unwrap();
    fails(&["--host", host.to_str().unwrap(), "--csv", host.to_str().unwrap()], "would overwrite the input file");
    let svg = dir.join("o.svg");
    let svg2 = format!("{}/./o.svg", dir.display());
    fails(&["--csv", svg.to_str().unwrap(), "--plot", &svg2], "--csv and --plot both name");
    fails(&["--csv", "-", "--json"], "both write to stdout");
    for flag in ["--spread", "--waits", "--tasks"] {
        fails(&["--csv", "-", flag], &format!("{flag} adds to the table, which --csv - replaces"));
    }
    let out = run(&pg(&["--csv", "-"]).iter().map(String::as_str).collect::<Vec<_>>());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.starts_with("config,clients,run,seed,tps"), "{text}");
    assert_eq!(text.lines().count(), 2, "a header and one run: {text}");
    // The refused runs left the workload as it was.
    let original = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/pingpong.toml")).unwrap();
    assert_eq!(std::fs::read_to_string(&wl).unwrap(), original);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Input files are read up to 16 MiB: /dev/zero ends in an error, not in
/// reading forever, as a workload and as a host file. A pipe is read like
/// a file.
#[test]
fn input_files_are_bounded_and_pipes_work() {
    fails_with(&["run", "/dev/zero"], "cannot read /dev/zero: larger than 16 MiB");
    fails(&["--host", "/dev/zero"], "cannot read host file /dev/zero: larger than 16 MiB");
    let f = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/pingpong.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_cfs-sim"))
        .args(["run", "/dev/stdin", "--duration", "30ms"])
        .stdin(std::fs::File::open(f).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Host spec errors say the spec is bad and why, not that the host is
/// unknown; empty items in a client list are refused.
#[test]
fn host_specs_and_client_lists_say_what_is_wrong() {
    fails(&["--host", "1s1c1t,mhz=0"], "bad host spec \"1s1c1t,mhz=0\": bad value \"0\"");
    // A shape error names the spec once, with the byte it stopped at.
    fails(&["--host", "1s0c"], "error: bad host spec \"1s0c\" at byte 2: counts must be at least 1 (e.g.");
    fails_with(&["pgbench", "--clients", "1,,2"], "bad client list \"1,,2\"");
    // A count given twice (here inside a range) would print its row twice.
    fails_with(&["pgbench", "--clients", "2,1-3"], "bad client list \"2,1-3\": client count 2 given twice");
}

/// A failed run says which cell it was (the column's label, the client
/// count, the run), and a run at the time cap names the task it waited
/// for: `hog` never blocks, `waiter` waits for a message no one sends, and
/// only `waiter` must finish, so the 600 s cap ends the run. (`hog` keeps
/// a CPU busy, so the run is not stalled: something can always happen.)
#[test]
fn a_failed_run_names_its_cell_and_what_it_waited_for() {
    let dir = scratch("stuck");
    let f = dir.join("w.toml");
    std::fs::write(
        &f,
        "[[task]]\nname = \"hog\"\nops = [ { run = \"10ms\" } ]\n\
         [[task]]\nname = \"waiter\"\nfinish = true\nops = [ \"wait\" ]\n",
    )
    .unwrap();
    fails_with(
        &["run", f.to_str().unwrap(), "--runs", "1", "--config", "name=mine"],
        "run did not finish within 600.000 s of simulated time (still to finish: waiter) (config \"mine\", 1 clients, run 0, \
         seed ",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Small things said clearly: a well-formed version that is no profile
/// gets the list, not its nearest neighbour; a mistyped one gets the hint;
/// a patch given twice, a name with a newline (it would break the table)
/// and --clients where the workload sets its own counts are refused.
#[test]
fn small_mistakes_get_plain_answers() {
    let out = run(&pg(&["--profile", "2.6.27"]).iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown kernel profile \"2.6.27\" (known: ") && !err.contains("did you mean"), "{err}");
    fails(&["--profile", "2.6.32rc1"], "did you mean \"2.6.32-rc1\"?");
    fails(&["--patch", "waker", "--patch", "waker"], "patch \"waker\" is given twice");
    fails(&["--config", "name=a\nb"], "without control characters");
    fails_with(&["starve", "--clients", "3"], "--clients does not apply to starve (it runs one parent and one child)");
    let f = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/pingpong.toml");
    fails_with(&["run", f, "--clients", "3"], "--clients does not apply to a workload file");
}

/// The input bound is exact: a file of 16 MiB is read (and then found to
/// be no workload), one byte more is refused unread.
#[test]
fn the_input_bound_is_sixteen_mib_exactly() {
    use cfs_sim::cli::{MAX_INPUT_BYTES, read_input};
    let dir = scratch("bound");
    let f = dir.join("big.toml");
    let mut text = vec![b'#'; MAX_INPUT_BYTES as usize];
    std::fs::write(&f, &text).unwrap();
    assert_eq!(read_input(&f, "").map(|t| t.len()), Ok(16 << 20));
    text.push(b'#');
    std::fs::write(&f, &text).unwrap();
    assert_eq!(read_input(&f, "").unwrap_err(), format!("cannot read {}: larger than 16 MiB", f.display()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Outputs named through `..` or relative to the working directory are
/// the same file as their plain names: the files are compared once
/// resolved, also before they exist.
#[test]
fn outputs_are_compared_once_resolved() {
    let dir = scratch("resolved");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let plain = dir.join("o.svg");
    let roundabout = dir.join("sub").join("..").join("o.svg");
    fails(&["--csv", plain.to_str().unwrap(), "--plot", roundabout.to_str().unwrap()], "--csv and --plot both name");
    let out = Command::new(env!("CARGO_BIN_EXE_cfs-sim"))
        .current_dir(&dir)
        .args([
            "pgbench",
            "--clients",
            "1",
            "--transactions",
            "50",
            "--runs",
            "1",
            "--csv",
            "a.svg",
            "--plot",
            "./a.svg",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--csv and --plot both name ./a.svg"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Of several failed runs the first in job order is reported: with two
/// threads both runs of the stuck workload start and fail, and run 0 is
/// named.
#[test]
fn the_first_failed_run_is_the_one_reported() {
    let dir = scratch("first");
    let f = dir.join("w.toml");
    std::fs::write(&f, "[[task]]\nname = \"a\"\nfinish = true\nops = [ \"wait\" ]\n").unwrap();
    for _ in 0..3 {
        fails_with(&["run", f.to_str().unwrap(), "--runs", "2", "--jobs", "2"], "1 clients, run 0, seed ");
    }
    // The command the message gives replays that run alone (no --clients:
    // a workload file sets its own counts), which fails the same way and
    // names the same seed.
    let err = String::from_utf8_lossy(&run(&["run", f.to_str().unwrap(), "--runs", "2"]).stderr).into_owned();
    let (head, hint) = err.trim_end().rsplit_once("; replay it with ").unwrap();
    let seed = head.rsplit_once("seed ").unwrap().1.trim_end_matches(')');
    assert_eq!(hint, format!("--replay {seed}"));
    let again = run(&["run", f.to_str().unwrap(), "--replay", seed]);
    assert_eq!(String::from_utf8_lossy(&again.stderr), err);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A domain flag a patch already sets at a level may not be overridden
/// there too (the patch would silently win), but other flags of that level
/// may: prefer-local-to-node (799e2205ec6) clears PREFER_LOCAL at MC.
#[test]
fn sd_flags_and_a_patch_may_share_a_level_but_not_a_flag() {
    let rc1 = ["--profile", "2.6.32-rc1", "--patch", "prefer-local-to-node"];
    fails(
        &[&rc1[..], &["--sd-flags", "MC:-PREFER_LOCAL-WAKE_AFFINE"]].concat(),
        "patch prefer-local-to-node already sets SD_PREFER_LOCAL at MC;",
    );
    let ok = run(&pg(&[&rc1[..], &["--sd-flags", "MC:-WAKE_AFFINE"]].concat())
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    // A version missing its release-candidate number is a typo of one.
    fails(&["--profile", "2.6.26-rc"], "did you mean \"2.6.26-rc4\"?");
}

/// A file that ends with its finishing tasks has no length known in
/// advance, so a late switch is not refused (its phase is empty, "-").
#[test]
fn a_run_that_ends_with_its_tasks_takes_any_switch_time() {
    let dir = scratch("ends");
    let f = dir.join("w.toml");
    std::fs::write(&f, "[[task]]\nname = \"a\"\nfinish = true\nloop = 3\nops = [ { run = \"1ms\" } ]\n").unwrap();
    let out = run(&["run", f.to_str().unwrap(), "--runs", "1", "--switch", "2s:features=863"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A change that no run reaches (200 transactions of pgbench take ~20 ms,
/// far from 5 s) leaves an empty column and a note saying why; one that
/// runs reach gets no note.
#[test]
fn a_change_no_run_reaches_is_noted() {
    let late =
        run(&["pgbench", "--clients", "2", "--runs", "2", "--transactions", "200", "--switch", "5s:features=863"]);
    let err = String::from_utf8_lossy(&late.stderr);
    assert!(late.status.success(), "{err}");
    assert_eq!(err.trim_end(), "cfs-sim: note: every run ended before the change at 5s; its column is empty");
    assert!(String::from_utf8_lossy(&late.stdout).lines().last().unwrap().trim_end().ends_with('-'));
    let early =
        run(&["pgbench", "--clients", "2", "--runs", "2", "--transactions", "200", "--switch", "5ms:features=863"]);
    assert!(early.status.success() && early.stderr.is_empty(), "{}", String::from_utf8_lossy(&early.stderr));
}

#[test]
fn cost_overrides_say_what_is_wrong_on_every_command() {
    fails(&["--cost", "ctx_switch=3600"], "--cost ctx_switch=3600: unknown cost parameter \"ctx_switch\"");
    fails(&["--cost", "ctx_switch_ns=-1"], "is not a number from 0 to 1000000000");
    fails(&["--cost", "xfer_line_ns.die=40"], "unknown distance class \"die\"");
    fails(&["--cost", "dirty_line_ns=0/5/15"], "a whole table is 6 values");
    fails(&["--config", "cost=jitter_cv=2"], "--cost jitter_cv=2: \"2\" is not a number from 0 to 1");
    fails(&["--config", "cost=idle_exit_ns"], "config cost \"idle_exit_ns\" is not NAME=VALUE");
    fails_with(&["topology", "q6600", "--cost", "clock_factor=0"], "\"0\" is not a number from 0.01 to 100");
    fails_with(&["seed", "--runs", "1", "--cost", "nope=1"], "unknown cost parameter \"nope\"");
    fails_with(&["calibrate", "--features-only", "--runs", "1", "--cost", "mem_line_ns"], "expected NAME=VALUE");
    fails(&["--cost", "pgbench.backend=1"], "did you mean \"pgbench.backend_ns\"?");
    fails_with(
        &["tbench", "--clients", "1", "--runs", "1", "--cost", "pgbench.backend_ns=1"],
        "--cost pgbench.backend_ns=1: a pgbench parameter, and this runs tbench",
    );
    fails_with(
        &["hogs", "--clients", "1", "--runs", "1", "--config", "name=x,cost=pgbench.fork_ns=1"],
        "config \"x\": --cost pgbench.fork_ns=1: a pgbench parameter, and this runs hogs",
    );
    fails_with(&["topology", "q6600", "--cost", "pgbench.backend_ns=1"], "topology shows the host's costs only");
    fails_with(&["topology", "q6600", "--cost", "tbench.side_ns=1"], "a tbench parameter; topology shows");
    fails_with(
        &["pgbench", "--clients", "1", "--runs", "1", "--cost", "sysbench-oltp.client_ns=1"],
        "--cost sysbench-oltp.client_ns=1: a sysbench-oltp parameter, and this runs pgbench",
    );
    fails_with(&["seed", "--runs", "1", "--cost", "messaging.ws_kb=1"], "a messaging parameter, and this runs pgbench");
    fails_with(&["starve", "--cost", "starve.kill=1"], "did you mean \"starve.kill_ns\"?");
    fails_with(&["volanomark", "--cost", "volanomark.ws_kb=0.5"], "ws_kb takes a whole number");
}

#[test]
fn a_pair_workloads_own_costs_lie_on_its_critical_path() {
    // One tbench pair (or one sysbench thread) is a strict ping-pong: the
    // client works, sends, sleeps; the server works, replies, sleeps. Work
    // added on either side adds to every op, so from the measured base the
    // changed column is predicted exactly as in the switch test above.
    let cols = |w: &'static str, duration: &'static str, configs: &[&'static str]| {
        let mut v = vec![w, "--clients", "1", "--runs", "1", "--duration", duration, "--config", "name=base"];
        for c in configs {
            v.extend_from_slice(&["--config", c]);
        }
        one_row(&v)
    };
    // tbench: MB/s counts 11,264 bytes per 10 ops (ReadX and WriteX
    // data), so an op takes t = 1,126.4 / MB/s µs. side_ns 5 -> 10 µs on
    // both sides is +10 µs an op; copy_ns_per_byte 0.4 -> 1.4 is +1 ns for
    // each of the 12,903 request and reply bytes of 10 ops, on both
    // sides: +2.58 µs an op. (68.5 MB/s -> 42.6 and 59.2.)
    let tb =
        cols("tbench", "100ms", &["name=side,cost=tbench.side_ns=10000", "name=copy,cost=tbench.copy_ns_per_byte=1.4"]);
    let op_us = 1_126.4 / tb[0];
    for (got, extra_us) in [(tb[1], 10.0), (tb[2], 2.0 * 12_903.0 / 10.0 / 1_000.0)] {
        let want = 1_126.4 / (op_us + extra_us);
        assert!((got / want - 1.0).abs() < 0.01, "{tb:?}: want {want:.2}");
    }
    // sysbench-oltp: a transaction is 16 statements; the server's 550 µs
    // of them (the OLTP table) doubled is +550 µs, sysbench's 5 µs a
    // statement doubled is +80 µs. (1,417 TPS -> 794 and 1,273.)
    let sb = cols(
        "sysbench-oltp",
        "200ms",
        &["name=x2,cost=sysbench-oltp.statement_scale=2", "name=c10,cost=sysbench-oltp.client_ns=10000"],
    );
    for (got, extra_us) in [(sb[1], 550.0), (sb[2], 80.0)] {
        let want = 1e6 / (1e6 / sb[0] + extra_us);
        assert!((got / want - 1.0).abs() < 0.01, "{sb:?}: want {want:.0}");
    }
}

#[test]
fn the_json_says_which_workload_costs_a_run_used() {
    // The global --cost is written into the workload's costs, which the
    // JSON lists field by field; a column's own setting is in its `cost`.
    let json = |args: &[&str]| -> serde_json::Value {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("one JSON document")
    };
    let base = ["tbench", "--clients", "1", "--runs", "1", "--duration", "20ms", "--json"];
    let extra = ["--cost", "tbench.side_ns=6000", "--config", "name=a", "--config", "name=b,cost=tbench.fork_ns=1"];
    let doc = json(&[&base[..], &extra[..]].concat());
    let costs = &doc["workload_costs"];
    assert_eq!(costs["side_ns"], 6000.0);
    assert_eq!(costs["copy_ns_per_byte"], 0.4, "the shipped value where nothing was set");
    assert_eq!(costs.as_object().map(|o| o.len()), Some(6), "every TbenchCosts field");
    assert_eq!(doc["configs"][1]["cost"], serde_json::json!(["tbench.fork_ns=1"]));
    let hogs = json(&["hogs", "--clients", "1", "--runs", "1", "--duration", "20ms", "--json"]);
    assert!(hogs["workload_costs"].is_null(), "hogs has no costs of its own");
}

/// The TPS of each column of a one-row pgbench table.
fn one_row(args: &[&str]) -> Vec<f64> {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().find(|l| l.trim_start().starts_with("1 ")).unwrap();
    row.split_whitespace().skip(1).map(|v| v.parse().unwrap()).collect()
}

#[test]
fn a_dearer_context_switch_costs_one_client_two_switches_a_transaction() {
    // One client under 2.6.26-rc4 defaults shares its CPU with its backend
    // (docs/CALIBRATION.md §3, anchor 1): every transaction is two context
    // switches, backend -> client -> backend. 10 µs more per switch is
    // then 20 µs more per transaction: TPS' = 1e6 / (1e6 / TPS + 20),
    // 10,904 -> 8,952 at the default costs.
    let args = |extra: &[&'static str]| {
        let mut v =
            vec!["pgbench", "--profile", "2.6.26-rc4", "--clients", "1", "--transactions", "2000", "--runs", "1"];
        v.extend_from_slice(extra);
        v
    };
    let cols = one_row(&args(&["--config", "name=base", "--config", "name=dear,cost=ctx_switch_ns=11800"]));
    let want = 1e6 / (1e6 / cols[0] + 20.0);
    assert!((cols[1] / want - 1.0).abs() < 0.01, "{cols:?}: want {want:.0}");
    // --cost writes the same into every column.
    let global = one_row(&args(&["--cost", "ctx_switch_ns=11800"]));
    assert_eq!(global, [cols[1]]);
    // pgbench's own backend, 10 µs dearer: one more 10 µs on the critical
    // path of every transaction.
    let slow = one_row(&args(&["--cost", "pgbench.backend_ns=73000"]));
    let want = 1e6 / (1e6 / cols[0] + 10.0);
    assert!((slow[0] / want - 1.0).abs() < 0.01, "{slow:?}: want {want:.0}");
    // Writing the preset's own value changes nothing else.
    let same = one_row(&args(&["--cost", "ctx_switch_ns=1800"]));
    assert_eq!(same, [cols[0]]);
}

/// `cfs-sim costs` as (part, name, value) rows ([`cost_listing`]).
fn cost_rows(args: &[&str]) -> Vec<(String, String, String)> {
    cost_listing(args).into_iter().map(|(p, n, v, _)| (p, n, v)).collect()
}

/// `cfs-sim costs` as (part, name, value, source) rows: a part starts at a
/// line that is not indented (`cost model: q6600` is the host, `pgbench
/// (--cost ...)` a workload); each indented line is `name value (range)
/// source`, a per-reach table's value being `a / b / c / d / e / f` and
/// its source the indented line below it. The listing ends with one
/// unindented line, the key to the source tags.
fn cost_listing(args: &[&str]) -> Vec<(String, String, String, String)> {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, key) = text.trim_end().rsplit_once('\n').unwrap();
    assert!(key.starts_with("sources: § is a section of"), "{key}");
    let mut part = String::new();
    let mut rows: Vec<(String, String, String, String)> = vec![];
    for line in body.lines().filter(|l| !l.is_empty()) {
        if !line.starts_with(' ') {
            part = if line.starts_with("cost model:") { "host".into() } else { line.split(' ').next().unwrap().into() };
            continue;
        }
        let (name, rest) = line.trim_start().split_once(' ').unwrap();
        if name == "by" {
            continue; // the header of the per-reach tables
        }
        if line.starts_with(&" ".repeat(4)) {
            // A per-reach table's source, under its values.
            rows.last_mut().unwrap().3 = line.trim().to_string();
            continue;
        }
        let (value, source) = match rest.trim_start().split_once(" (") {
            Some((v, range)) => (v.trim_end(), range.split_once(')').unwrap().1.trim()),
            None => (rest.trim(), ""),
        };
        rows.push((part.clone(), name.to_string(), value.to_string(), source.to_string()));
    }
    rows
}

/// A value other than `v` that the setting accepts: one more, or half when
/// one more would pass a bound of 1 (`jitter_cv`, `backend_cv`).
fn another(v: &str) -> String {
    let x: f64 = v.parse().unwrap();
    // Halfway to 2 for a value between 1 and 2 (smt_throughput's range
    // ends at 2).
    if x > 1.0 && x < 2.0 {
        format!("{}", (x + 2.0) / 2.0)
    } else if x + 1.0 > 1.0 && x < 1.0 {
        format!("{}", x / 2.0)
    } else {
        format!("{}", x + 1.0)
    }
}

#[test]
fn the_costs_listing_names_exactly_what_cost_sets() {
    // Every line of `cfs-sim costs` names something `--cost` accepts, and
    // setting every one of them at once to another value moves each line
    // to that value and nothing else: the listing and the setter agree
    // name for name (a workload field serialised under another name than
    // its setter's would list as `?`).
    let before = cost_rows(&["costs"]);
    let parts: Vec<&str> = before.iter().map(|(p, ..)| p.as_str()).fold(vec![], |mut v, p| {
        if v.last() != Some(&p) {
            v.push(p);
        }
        v
    });
    assert_eq!(parts, ["host", "pgbench", "tbench", "messaging", "volanomark", "starve", "sysbench-oltp"]);
    // 12 scalars and 3 per-reach tables of the host; PgbenchCosts 17,
    // TbenchCosts 6, MessagingCosts 3, VolanoCosts 6, StarveCosts 2,
    // SysbenchCosts 7 fields.
    assert_eq!(before.len(), 15 + 17 + 6 + 3 + 6 + 2 + 7);
    let mut settings = vec![];
    let mut want = vec![];
    for (part, name, value) in &before {
        assert!(!value.contains('?'), "{part}.{name} lists no value");
        let new = if value.contains(" / ") {
            // A table's same-CPU class must stay 0 (nothing travels).
            value.split(" / ").map(|v| if v == "0" { v.to_string() } else { another(v) }).collect::<Vec<_>>().join("/")
        } else {
            another(value)
        };
        let full = if part == "host" { name.clone() } else { format!("{part}.{name}") };
        settings.push(format!("{full}={new}"));
        want.push((part.clone(), name.clone(), new.replace('/', " / ")));
    }
    let mut args = vec!["costs".to_string()];
    for s in &settings {
        args.extend(["--cost".to_string(), s.clone()]);
    }
    let after = cost_rows(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(after, want);
    // The shipped values are the ones docs/CALIBRATION.md derives, e.g.
    // the backend's 63 µs of work per -S transaction (§3, anchor 1) and
    // the Q6600's 1.8 µs context switch (§2).
    let find = |part: &str, name: &str| before.iter().find(|(p, n, _)| p == part && n == name).unwrap().2.clone();
    assert_eq!(find("pgbench", "backend_ns"), "63000");
    assert_eq!(find("host", "ctx_switch_ns"), "1800");
}

#[test]
fn every_listed_cost_says_where_its_value_comes_from() {
    // Each shipped value carries a tag of hosts-and-costs.md first: [P]
    // published, [R] recalled, [C] from source code, [D] derived, [E]
    // estimate; 15 host parameters and 41 workload fields, as counted above.
    let tagged = |s: &str| ["[P] ", "[R] ", "[C] ", "[D] ", "[E] "].iter().any(|t| s.starts_with(t));
    let shipped = cost_listing(&["costs"]);
    assert_eq!(shipped.len(), 56);
    for (part, name, _, source) in &shipped {
        assert!(tagged(source) && source.len() > 8, "{part}.{name}: source {source:?}");
    }
    let source = |rows: &[(String, String, String, String)], name: &str| {
        rows.iter().find(|r| r.1 == name).map(|r| r.3.clone()).unwrap()
    };
    // The pgbench backend's 63 µs is derived from anchor 1 (CALIBRATION
    // §3), the Q6600's switch recalled from Sigoure's measurements (§2).
    assert!(source(&shipped, "backend_ns").starts_with("[D] anchor 1"));
    assert!(source(&shipped, "ctx_switch_ns").starts_with("[R] §2"));
    // A value a --cost replaced no longer cites the shipped value's
    // source; one class of a table says which, and keeps the rest's.
    let set = cost_listing(&[
        "costs",
        "--cost",
        "ctx_switch_ns=3600",
        "--cost",
        "xfer_line_ns.package=40",
        "--cost",
        "pgbench.backend_ns=70000",
    ]);
    assert_eq!(source(&set, "ctx_switch_ns"), "set by --cost");
    assert_eq!(source(&set, "backend_ns"), "set by --cost");
    let xfer = source(&set, "xfer_line_ns");
    assert!(xfer.starts_with("set by --cost (package); the rest: [E] "), "{xfer}");
    let changed: Vec<&str> = ["ctx_switch_ns", "xfer_line_ns", "backend_ns"].to_vec();
    for (a, b) in shipped.iter().zip(&set) {
        if !changed.contains(&a.1.as_str()) {
            assert_eq!(a, b, "a setting moved another row");
        }
    }
    // Writing a whole table or the shipped value: every class set, or
    // nothing changed.
    let whole = cost_listing(&["costs", "host", "--cost", "dirty_line_ns=0/5/15/250/250/250"]);
    assert_eq!(
        source(&whole, "dirty_line_ns"),
        "set by --cost (package, node, remote-node); the rest: ".to_string() + &source(&shipped, "dirty_line_ns")
    );
    let same = cost_listing(&["costs", "host", "--cost", "ctx_switch_ns=1800"]);
    assert_eq!(source(&same, "ctx_switch_ns"), source(&shipped, "ctx_switch_ns"));
    // A host the presets do not know takes the Q6600's set with its clock
    // factor derived from its MHz (2400 / 3000 = 0.8).
    let spec = cost_listing(&["costs", "host", "--host", "2s4c,mhz=3000"]);
    assert_eq!(spec[0].2, "0.8");
    assert_eq!(spec[0].3, "[D] 2400 MHz over the host's clock");
    // --json gives the same sources, part by part and field by field.
    let out = run(&["costs", "--json", "--cost", "xfer_line_ns.package=40", "--cost", "pgbench.backend_ns=70000"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = cost_listing(&["costs", "--cost", "xfer_line_ns.package=40", "--cost", "pgbench.backend_ns=70000"]);
    for (part, name, _, source) in &listed {
        assert_eq!(v["sources"][part][name], source.as_str(), "{part}.{name}");
    }
    let fields: usize = v["sources"].as_object().unwrap().values().map(|p| p.as_object().unwrap().len()).sum();
    assert_eq!(fields, listed.len());
}

#[test]
fn the_costs_listing_takes_one_part_and_refuses_what_it_does_not_show() {
    let tbench = cost_rows(&["costs", "tbench", "--cost", "tbench.side_ns=6000"]);
    assert!(tbench.iter().all(|(p, ..)| p == "tbench") && tbench.len() == 6, "{tbench:?}");
    assert_eq!(tbench[0], ("tbench".into(), "side_ns".into(), "6000".into()));
    let host = cost_rows(&["costs", "host", "--host", "nehalem-ep"]);
    assert!(host.iter().all(|(p, ..)| p == "host") && host.len() == 15, "{host:?}");
    // One distance class of a table: the Q6600's cross-die line 20 -> 40 ns.
    let q = cost_rows(&["costs", "host", "--cost", "xfer_line_ns.package=40"]);
    assert_eq!(q.last().unwrap(), &("host".into(), "xfer_line_ns".into(), "0 / 0 / 3 / 40 / 20 / 20".into()));
    // The ranges are the setter's bounds: clock_factor at least 0.01 (CPU
    // work cannot be free), times up to a second, messages up to 64 KiB
    // and in whole bytes; one blank line between parts.
    let text = String::from_utf8(run(&["costs"]).stdout).unwrap();
    for line in [
        "  clock_factor     1          (0.01 to 100)",
        "  ctx_switch_ns    1800       (0 to 1000000000)",
        "  xfer_line_ns     0 / 0 / 3 / 20 / 20 / 20 (each 0 to 1000000; same-cpu stays 0)",
        "  query_bytes            120        (0 to 65536, whole numbers)",
        "  backend_cv             0.1        (0 to 1)",
    ] {
        assert!(text.lines().any(|l| l.starts_with(line)), "no line {line:?} in\n{text}");
    }
    assert!(text.starts_with("cost model: q6600 (sources: docs/CALIBRATION.md §2)\n"), "{text}");
    assert!(!text.contains("\n\n\n"), "{text}");
    // Each part's header names where its values are derived: the pgbench
    // costs in CALIBRATION §3, a host the presets do not know in §2's
    // "Other hosts".
    assert!(text.lines().any(|l| l.starts_with("pgbench (") && l.ends_with("sources: docs/CALIBRATION.md §3)")));
    let spec = String::from_utf8(run(&["costs", "host", "--host", "2s4c"]).stdout).unwrap();
    assert!(spec.lines().next().is_some_and(|l| l.contains("(sources: docs/CALIBRATION.md §2, Other hosts")), "{spec}");
    assert_eq!(text.lines().filter(|l| l.is_empty()).count(), 7, "seven parts and the key, seven blank lines between");
    fails_with(&["costs", "hogs"], "hogs has no costs of its own");
    fails_with(&["costs", "tbnch"], "unknown part \"tbnch\"");
    fails_with(&["costs", "tbnch"], "did you mean \"tbench\"?");
    fails_with(&["costs", "--host", "pdp11"], "unknown host");
    fails_with(&["costs", "tbench", "--host", "pdp11"], "unknown host");
    fails_with(&["costs", "host", "--cost", "pgbench.backend_ns=1"], "a pgbench parameter, and this lists host");
    fails_with(&["costs", "pgbench", "--cost", "ctx_switch_ns=1"], "a host parameter, and this lists pgbench");
    fails_with(&["costs", "--cost", "starve.kill=1"], "did you mean \"starve.kill_ns\"?");
    // JSON: the host's model under "host" named with its own settings
    // only, and each workload's costs under its name.
    let out = run(&["costs", "--json", "--cost", "ctx_switch_ns=3600", "--cost", "starve.kill_ns=5"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["host"]["name"], "q6600 with ctx_switch_ns=3600");
    assert_eq!(doc["host"]["ctx_switch_ns"], 3600.0);
    assert_eq!(doc["workloads"]["starve"]["kill_ns"], 5.0);
    assert_eq!(doc["workloads"].as_object().map(|o| o.len()), Some(6));
}

#[test]
fn irq_injects_interrupt_load_and_refuses_bad_loads() {
    // One hog pinned to CPU 0: 1,000 loops of 1 ms a second. Handlers of
    // 50 µs every 1 ms on its CPU take a twentieth of it (the kernels
    // modelled charge interrupt time to the running task): 950 loops/s.
    // On CPU 1, where nothing runs, they take nothing.
    let hog = |irq: &[&str]| {
        let mut args = vec!["hogs", "--clients", "1", "--pin-client", "0", "--duration", "1s", "--runs", "1"];
        args.extend_from_slice(irq);
        one_row(&args)
    };
    assert_eq!(hog(&[]), [1000.0]);
    assert_eq!(hog(&["--irq", "cpus=0,every=1ms,takes=50us"]), [950.0]);
    assert_eq!(hog(&["--irq", "cpus=1,every=1ms,takes=50us"]), [1000.0]);
    // Two loads on the same CPU add up: 5% + 2% (20 µs every 1 ms).
    assert_eq!(hog(&["--irq", "cpus=0,every=1ms,takes=50us", "--irq", "cpus=0,every=1ms,takes=20us"]), [930.0]);
    // The table's comment line and the JSON say what was injected, and
    // each run counts its interrupts: 999 in 1 s (the one at 1 s comes
    // after the run's end).
    let args = ["hogs", "--clients", "1", "--pin-client", "0", "--duration", "1s", "--runs", "1"];
    let out = run(&[&args[..], &["--irq", "cpus=0,every=1ms,takes=50us"]].concat());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().next().unwrap().ends_with("; interrupt load cpus=0,every=1ms,takes=50us"), "{text}");
    let out = run(&[&args[..], &["--irq", "cpus=0,every=1ms,takes=50us", "--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["irq_loads"], serde_json::json!(["cpus=0,every=1ms,takes=50us"]));
    assert_eq!(v["runs"][0]["irqs"], 999);
    assert_eq!(v["runs"][0]["irq_task_ns"], 999 * 50_000);
    fails_with(&["hogs", "--irq", "cpus=4,every=1ms,takes=1us"], "CPU 4 does not exist (the host has 4)");
    fails_with(&["hogs", "--irq", "cpus=0,every=1ms"], "no takes=");
    fails_with(&["hogs", "--irq", "cpus=0,every=1ms,takes=2ms"], "must take less than the time between them");
    fails_with(&["hogs", "--irq", "every=1ms,takes=1us"], "no cpus=");
    // One column with the load and one without, side by side: `irq=` in a
    // --config separates its own keys with `;` (and takes a CPU list with
    // commas last), a sweep file's `irq` is an array of loads; both add
    // to any --irq.
    let mut cols = args.to_vec();
    cols.extend(["--config", "name=quiet", "--config", "name=noisy,irq=every=1ms;takes=50us;cpus=0,1"]);
    assert_eq!(one_row(&cols), [1000.0, 950.0]);
    // With 20 µs more every 1 ms in both: 1 s - 999 x 20 µs leaves the
    // quiet column 980.02 ms, whose last loop the hog's start-up (its
    // first switch and cache fill, a few tens of µs) may push past the
    // end: 979 or 980.
    cols.extend(["--irq", "cpus=0,every=1ms,takes=20us"]);
    let both = one_row(&cols);
    assert!((979.0..=980.0).contains(&both[0]) && (929.0..=930.0).contains(&both[1]), "{both:?}");
    let dir = std::env::temp_dir().join(format!("cfs-sim-irq-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sweep = dir.join("sweep.toml");
    std::fs::write(&sweep, "[[config]]\nname = \"quiet\"\n[[config]]\nirq = [\"cpus=0,every=1ms,takes=50us\"]\n")
        .unwrap();
    let out = run(&[&args[..], &["--sweep", sweep.to_str().unwrap(), "--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["medians"][0]["values"], serde_json::json!([1000.0, 950.0]));
    // An unnamed column's label says what it injects.
    assert_eq!(v["configs"][1]["label"], "2.6.26 irq:cpus=0,every=1ms,takes=50us");
    assert_eq!(v["configs"][1]["irq"], serde_json::json!(["cpus=0,every=1ms,takes=50us"]));
    std::fs::remove_dir_all(&dir).unwrap();
    fails_with(&["hogs", "--config", "irq=cpus=9;every=1ms;takes=1us"], "CPU 9 does not exist (the host has 4)");
    fails_with(&["hogs", "--config", "irq=cpus=0;every=1ms"], "no takes=");
}

#[test]
fn the_seed_run_takes_faults_too() {
    // One client under 895: pgbench and its backend share one CPU (the
    // sync shortcut), so all of a transaction is CPU work there (the
    // wakeups are local: no IPI, no idle exit). With 100 µs of every 1 ms
    // taken on every CPU the pile keeps 90% of its CPU: 895's TPS x 0.90;
    // with every CPU at half speed a transaction takes twice as long:
    // x 0.5. (Other columns need not: under 863 where the backend's fork
    // lands depends on timing, so it may change.)
    let dir = std::env::temp_dir().join(format!("cfs-sim-seed-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("seed.svg");
    let base = ["seed", "--clients", "1", "--runs", "1", "--plot", plot.to_str().unwrap()];
    let with = |fault: &[&'static str]| -> Vec<&str> { [&base[..], fault].concat() };
    let quiet = one_row(&base);
    for (fault, share) in [(["--irq", "cpus=0-3,every=1ms,takes=100us"], 0.90), (["--slow", "cpus=0-3,speed=50%"], 0.5)]
    {
        let faulty = one_row(&with(&fault));
        let ratio = faulty[0] / quiet[0];
        assert!((ratio - share).abs() < 0.005, "895 at 1 client, {fault:?}: {quiet:?} -> {faulty:?}");
    }
    let out = run(&with(&["--irq", "cpus=0-3,every=1ms,takes=100us"]));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().next().unwrap().ends_with("; interrupt load cpus=0-3,every=1ms,takes=100us"), "{text}");
    fails_with(&["seed", "--irq", "cpus=0,every=1us,takes=100ns"], "at most every 10us");
    fails_with(&["seed", "--slow", "cpus=0,speed=0.01%"], "must be above 0%");
    // Handlers of 50 µs every 100 µs on a CPU at half speed would take
    // all of it: refused before any run.
    fails_with(
        &["seed", "--irq", "cpus=0,every=100us,takes=50us", "--slow", "cpus=0,speed=50%"],
        "interrupts would take 100% of CPU 0 (cpus=0,every=100us,takes=50us at 50% speed): nothing else would ever run",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Whether every cell of `got` is within `tol` of `want`'s. The Q6600's
/// run-time jitter (CV 3% on every 1 ms loop) moves a second of hog loops
/// by about 0.03 x sqrt(1,000) = 0.95 ms, so a count of loops by about one
/// either way; three is three of those.
fn near(got: &[f64], want: &[f64], tol: f64) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() <= tol)
}

#[test]
fn slow_slows_cpus_and_refuses_bad_slowdowns() {
    // One hog pinned to CPU 0: 1,000 loops of 1 ms a second. At half
    // speed each loop takes 2 ms: 500. Slowing CPU 1, where nothing runs,
    // changes nothing.
    let args = ["hogs", "--clients", "1", "--pin-client", "0", "--duration", "1s", "--runs", "1"];
    let hog = |extra: &[&str]| one_row(&[&args[..], extra].concat());
    let full = hog(&[]);
    assert!(near(&full, &[1000.0], 3.0), "{full:?}");
    let check = |extra: &[&str], want: &[f64]| {
        let got = hog(extra);
        assert!(near(&got, want, 3.0), "{extra:?}: {got:?}, want {want:?}");
    };
    check(&["--slow", "cpus=0,speed=50%"], &[500.0]);
    assert_eq!(hog(&["--slow", "cpus=1,speed=50%"]), full);
    // In order: the later slowdown of CPU 0 wins (25%: 4 ms a loop).
    check(&["--slow", "cpus=0,speed=50%", "--slow", "cpus=0-1,speed=25%"], &[250.0]);
    // Four free hogs, forked on one CPU, are spread one a CPU by 200 ms;
    // two CPUs slowed to a quarter then leave 1 + 1 + 0.25 + 0.25 CPUs of
    // work: 2,500 loops/s over the last 800 ms. The balancer does not move
    // them: every runqueue holds one task of the same weight.
    let four = ["hogs", "--clients", "4", "--duration", "1s", "--runs", "1", "--json"];
    let out = run(&[&four[..], &["--switch", "200ms:slow=cpus=0-1;speed=25%"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let after = v["runs"][0]["phases"][1]["value"].as_f64().unwrap();
    assert!((after - 2500.0).abs() <= 6.0, "{after}");
    // The comment line and the JSON say what was slowed.
    let out = run(&[&args[..], &["--slow", "cpus=0,speed=12.5%"]].concat());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().next().unwrap().ends_with("; slowed cpus=0,speed=12.5%"), "{text}");
    let out = run(&[&args[..], &["--slow", "cpus=0,speed=0.5", "--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["slow"], serde_json::json!(["cpus=0,speed=50%"]));
    // Mid-run: slowed to half at 1 s of 3 and back to full speed at 2 s,
    // the phases give 1,000, 500 and 1,000 loops/s.
    let three = ["hogs", "--clients", "1", "--pin-client", "0", "--duration", "3s", "--runs", "1"];
    let sw = ["--switch", "1s:slow=cpus=0;speed=50%", "--switch", "2s:slow=cpus=0;speed=100%"];
    let got = one_row(&[&three[..], &sw[..]].concat());
    assert!(near(&got, &[1000.0, 500.0, 1000.0], 3.0), "{got:?}");
    // A column of its own (`;` between its keys in --config), or in a
    // sweep file, beside one without.
    let cols = [&args[..], &["--config", "name=full", "--config", "name=half,slow=cpus=0;speed=50%"]].concat();
    let got = one_row(&cols);
    assert!(near(&got, &[1000.0, 500.0], 3.0), "{got:?}");
    let dir = std::env::temp_dir().join(format!("cfs-sim-slow-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sweep = dir.join("sweep.toml");
    std::fs::write(&sweep, "[[config]]\nname = \"full\"\n[[config]]\nslow = [\"cpus=0,speed=50%\"]\n").unwrap();
    let out = run(&[&args[..], &["--sweep", sweep.to_str().unwrap(), "--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let medians: Vec<f64> = serde_json::from_value(v["medians"][0]["values"].clone()).unwrap();
    assert!(near(&medians, &[1000.0, 500.0], 3.0), "{medians:?}");
    assert_eq!(v["configs"][1]["label"], "2.6.26 slow:cpus=0,speed=50%");
    assert_eq!(v["configs"][1]["slow"], serde_json::json!(["cpus=0,speed=50%"]));
    std::fs::remove_dir_all(&dir).unwrap();
    fails_with(
        &["hogs", "--slow", "cpus=4,speed=50%"],
        "--slow \"cpus=4,speed=50%\": CPU 4 does not exist (the host has 4)",
    );
    fails_with(&["hogs", "--slow", "cpus=0"], "no speed=");
    fails_with(&["hogs", "--slow", "cpus=0,speed=0%"], "must be above 0% and at most 100%");
    fails_with(&["hogs", "--slow", "cpus=0,speed=150%"], "must be above 0% and at most 100%");
    fails_with(&["hogs", "--config", "slow=cpus=0;speed=fast"], "bad speed \"fast\"");
    fails_with(
        &["hogs", "--duration", "1s", "--switch", "500ms:slow=cpus=7;speed=50%"],
        "--switch at 500ms: slow=cpus=7;speed=50%: CPU 7 does not exist (the host has 4)",
    );
    fails_with(
        &["hogs", "--duration", "1s", "--switch", "500ms:slow=cpus=0,speed=50%"],
        "separates its own keys with ;",
    );
}

#[test]
fn interrupt_load_starts_and_stops_mid_run() {
    // The pinned hog for 3 s: quiet, then 50 µs every 1 ms from 1 s
    // (a twentieth: 950 loops/s), stopped at 2 s (1,000 again).
    let args = ["hogs", "--clients", "1", "--pin-client", "0", "--duration", "3s", "--runs", "1"];
    let sw = ["--switch", "1s:irq=cpus=0;every=1ms;takes=50us", "--switch", "2s:irq=off"];
    let got = one_row(&[&args[..], &sw[..]].concat());
    assert!(near(&got, &[1000.0, 950.0, 1000.0], 3.0), "{got:?}");
    // Stopped at 1 s, --irq's load leaves the last two seconds quiet.
    let stop = ["--irq", "cpus=0,every=1ms,takes=50us", "--switch", "1s:irq=off"];
    let got = one_row(&[&args[..], &stop[..]].concat());
    assert!(near(&got, &[950.0, 1000.0], 3.0), "{got:?}");
    fails_with(
        &["hogs", "--duration", "1s", "--switch", "500ms:irq=cpus=5;every=1ms;takes=1us"],
        "--switch at 500ms: irq=cpus=5;every=1ms;takes=1us: CPU 5 does not exist (the host has 4)",
    );
    // Slowed to 40% at 1 s, CPU 0's 50 µs handlers every 100 µs would
    // take 125 µs of every 100 from then on; two loads of 50% and 60% on
    // CPU 1 in one column, 110% of it. Both refused before any run.
    let half = ["--irq", "cpus=0,every=100us,takes=50us"];
    fails_with(
        &[&["hogs", "--duration", "2s", "--switch", "1s:slow=cpus=0;speed=40%"][..], &half[..]].concat(),
        "interrupts would take 125% of CPU 0 (cpus=0,every=100us,takes=50us at 40% speed) from 1s: nothing else",
    );
    fails_with(
        &["hogs", "--irq", "cpus=1,every=100us,takes=50us", "--config", "name=x,irq=cpus=1;every=100us;takes=60us"],
        "config \"x\": interrupts would take 110% of CPU 1",
    );
}

/// `--help` and `--version` succeed and print to stdout; the help lists
/// every subcommand and each subcommand has its own.
#[test]
fn help_and_version_go_to_stdout_and_succeed() {
    let out = run(&["--help"]);
    assert!(out.status.success() && out.stderr.is_empty());
    let help = String::from_utf8_lossy(&out.stdout);
    for cmd in [
        "seed",
        "pgbench",
        "tbench",
        "hogs",
        "messaging",
        "volanomark",
        "starve",
        "sysbench-oltp",
        "run",
        "topology",
        "costs",
        "hosts",
        "calibrate",
    ] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(&format!("{cmd} "))), "{cmd} missing from {help}");
    }
    let out = run(&["pgbench", "--help"]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("--transactions"));
    let out = run(&["--version"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("cfs-sim {}", env!("CARGO_PKG_VERSION")));
}

/// Error paths coverage (2026-12-04) found no test for: a workload file
/// that is a directory, an empty host name, an empty CPU list, and options
/// of another workload.
#[test]
fn error_paths_coverage_found_untested_name_what_is_wrong() {
    let dir = std::env::temp_dir();
    fails_with(&["run", dir.to_str().unwrap()], "it is a directory");
    fails(&["--host", ""], "unknown host \"\": empty (presets:");
    fails(&["--pin-client", ""], "bad CPU list \"\" for --pin-client: no CPU");
    fails(&["--loops", "3"], "--loops does not apply to pgbench (messaging, volanomark only)");
    fails_with(&["hogs", "--pin-backends", "1"], "--pin-backends does not apply to hogs");
}

#[test]
fn cpu_hotplug_switches_are_checked_before_any_run() {
    let hogs = |sw: &str| vec!["hogs".to_string(), "--duration".into(), "2s".into(), "--switch".into(), sw.into()];
    let check = |sw: &str, needle: &str| {
        let v = hogs(sw);
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        fails_with(&refs, needle);
    };
    check(
        "1s:offline=0",
        "--switch offline=0 at 1s: CPU 0 cannot go offline (x86 kernels of this era give the boot CPU no online file)",
    );
    check("1s:offline=7", "--switch offline=7 at 1s: CPU 7 does not exist (the host has 4)");
    check("1s:online=2", "--switch online=2 at 1s: CPU 2 is already online");
    check("1s:offline=2,offline=2", "--switch offline=2 at 1s: CPU 2 is already offline");
    check("1s:offline=", "offline names no CPU");
    check("1s:online=x", "bad CPU list \"x\"");
    // An affinity written while its CPUs are down is refused before the run
    // (it used to fail midway with "affinity mask contains no CPU of this
    // host"), as is a pin; written after a CPU is back, it is fine.
    let v = ["pgbench", "--clients", "2", "--duration", "20ms", "--switch", "0s:offline=1-2"];
    fails_with(
        &[&v[..], &["--switch", "10ms:affinity=1-2"]].concat(),
        "--switch affinity=1-2 at 10ms: no CPU of 1-2 is online then (CPU 1, 2 down), and sched_setaffinity refuses \
         such a mask (EINVAL)",
    );
    fails_with(&[&v[..], &["--switch", "10ms:pin-backends=2"]].concat(), "pin-backends=2 at 10ms: no CPU of 2");
    let out = run(&[&v[..], &["--runs", "1", "--switch", "5ms:online=2", "--switch", "10ms:affinity=1-2"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Down and back up is a run with three phases.
    let out = run(&["hogs", "--duration", "3s", "--runs", "1", "--switch", "1s:offline=3", "--switch", "2s:online=3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("@2s"));
    // At 0 s it is the machine the run starts on, which no boot option
    // gives: allowed, and named on the comment line.
    let out = run(&["hogs", "--duration", "1s", "--runs", "1", "--switch", "0s:offline=1-3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().next().unwrap().ends_with("; offline from 0s: CPU 1, 2, 3"), "{text}");
}

#[test]
fn isolcpus_is_a_boot_setting_of_cpus_the_host_has() {
    fails(&["--set", "isolcpus=7"], "--set isolcpus: CPU 7 does not exist (the host has 4)");
    fails(&["--set", "isolcpus=x"], "--set isolcpus=x: bad CPU list");
    fails(&["--config", "set=isolcpus=1-9"], "--set isolcpus: CPU 4 does not exist (the host has 4)");
    fails_with(
        &["hogs", "--duration", "1s", "--switch", "500ms:set=isolcpus=2"],
        "isolcpus is fixed at boot; give it with --set instead",
    );
    // Four hogs with CPU 3 isolated leave it idle (none is pinned there),
    // and the column's label names the setting.
    let out = run(&["hogs", "--clients", "4", "--duration", "1s", "--runs", "1", "--set", "isolcpus=3", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let util = v["runs"][0]["cpu_util"].as_array().unwrap();
    assert_eq!(util[3].as_f64(), Some(0.0), "{util:?}");
    assert!(v["configs"][0].to_string().contains("isolcpus=3"), "{}", v["configs"][0]);
}

/// `--set cpusets=1` (CONFIG_CPUSETS, the top cpuset alone) is a boot
/// setting. With CPU 3 isolated and CPU 1 taken down at 100 ms, 2.6.26's
/// hotplug rebuild goes through the cpuset code, which builds over the
/// online CPUs, CPU 3 included; the four hogs' masks (init's, without CPU
/// 3) still keep them off it, so CPU 3 stays idle. That the rebuild took
/// CPU 3 back shows with tasks allowed there: cfs-machine's
/// `with_cpusets_a_hotplug_rebuild_takes_the_isolated_cpus_back`.
#[test]
fn cpusets_is_a_boot_setting() {
    fails(&["--set", "cpusets=maybe"], "--set cpusets=maybe");
    fails_with(
        &["hogs", "--duration", "1s", "--switch", "500ms:set=cpusets=1"],
        "cpusets is fixed at boot; give it with --set instead",
    );
    let out = run(&[
        "hogs",
        "--clients",
        "4",
        "--duration",
        "300ms",
        "--runs",
        "1",
        "--set",
        "isolcpus=3",
        "--set",
        "cpusets=1",
        "--switch",
        "100ms:offline=1",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let util = v["runs"][0]["cpu_util"].as_array().unwrap();
    assert_eq!(util[3].as_f64(), Some(0.0), "{util:?}");
    assert!(v["configs"][0].to_string().contains("cpusets=1"), "{}", v["configs"][0]);
    // The record says what the run was given: every --set, and the run's
    // length.
    assert_eq!(v["configs"][0]["set"], serde_json::json!(["isolcpus=3", "cpusets=1"]));
    assert_eq!(v["workload_options"]["duration_ns"], 300_000_000);
    assert_eq!(v["workload_options"]["transactions"], serde_json::Value::Null);
    // pgbench with neither option ran its default 20,000 transactions, and
    // the record says so.
    let out = run(&["pgbench", "--clients", "2", "--runs", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["workload_options"]["transactions"], 20_000);
    assert_eq!(v["workload_options"]["duration_ns"], serde_json::Value::Null);
}

/// Pins change a run as much as a configuration does: the table's header
/// and the JSON record name them.
#[test]
fn pins_are_in_the_header_and_the_record() {
    let args = ["pgbench", "--clients", "2", "--runs", "1", "--transactions", "100", "--pin-client", "0"];
    let out = run(&[&args[..], &["--pin-backends", "1-3"]].concat());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().next().unwrap().ends_with("; client side pinned to 0; server side pinned to 1-3"), "{text}");
    let out = run(&[&args[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let o = &v["workload_options"];
    assert_eq!((o["pin_client"].as_str(), o["pin_server"].as_str()), (Some("0"), None));
    assert_eq!(o["transactions"], 100);
}

/// `cfs-sim topology --online/--isolcpus`: the domains the profile builds
/// over part of the host. With CPU 3 of a Q6600 down (2.6.26), CPU 2's
/// MC level would span it alone and goes; CPU 3 has none.
#[test]
fn topology_shows_the_domains_over_part_of_the_host() {
    let out = run(&["topology", "q6600", "--online", "0-2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("CPU2 attaching sched-domain:\n domain 0: span 0-2 level CPU\n  groups: 2 0-1\n"), "{text}");
    assert!(text.contains("CPU3 attaching NULL sched-domain."), "{text}");
    let out = run(&["topology", "q6600", "--isolcpus", "0"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("CPU0 attaching NULL sched-domain."));
    fails_with(&["topology", "q6600", "--online", "9"], "bad CPU list \"9\" for --online: CPU 9 does not exist");
    // No run can take CPU 0 down (`--switch T:offline=0` is refused), so no
    // topology shows it down.
    fails_with(&["topology", "q6600", "--online", "1-3"], "--online 1-3: CPU 0 cannot go offline");
    fails_with(&["topology", "q6600", "--isolcpus", "x"], "bad CPU list \"x\" for --isolcpus");
    fails_with(&["topology", "q6600", "--online", ""], "for --online: no CPU");
}

/// `topology` shows what a patched kernel builds. 799e2205ec6 moves
/// SD_PREFER_LOCAL from MC and CPU to NODE; on Stoakley (one node) built with
/// CONFIG_NUMA the NODE level over all 8 CPUs stays only with the patch
/// (sd_parent_degenerate: PREFER_LOCAL is the one flag CPU then lacks, its
/// SERIALIZE being ignored with one node), as its one group of 8 x 1024.
/// The same items as `--sd-flags` are written into the built domains, as
/// the sched_domain sysctl would: MC and CPU lose the flag, and no NODE
/// level appears. Without CONFIG_NUMA (the one-node default) there is no
/// NODE level to keep.
#[test]
fn topology_builds_the_domains_of_a_patched_kernel() {
    let show = |extra: &[&str]| {
        let mut args = vec!["topology", "stoakley", "--profile", "2.6.32-rc1", "--json"];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["domains"].clone()
    };
    let cpu0 = |d: &serde_json::Value| d["cpus"][0]["domains"].as_array().unwrap().clone();
    let patched = show(&["--numa", "on", "--patch", "prefer-local-to-node"]);
    let levels =
        |d: &serde_json::Value| cpu0(d).iter().map(|x| x["level"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(levels(&patched), ["MC", "CPU", "NODE"], "{patched}");
    let node = &cpu0(&patched)[2];
    assert!(node["flag_names"].as_array().unwrap().iter().any(|f| f == "SD_PREFER_LOCAL"), "{node}");
    assert_eq!((node["span"].as_str(), node["groups"][0]["cpu_power"].as_u64()), (Some("0-7"), Some(8192)));
    for below in &cpu0(&patched)[..2] {
        assert!(!below["flag_names"].as_array().unwrap().iter().any(|f| f == "SD_PREFER_LOCAL"), "{below}");
    }
    assert_eq!(levels(&show(&["--numa", "on"])), ["MC", "CPU"]);
    assert_eq!(levels(&show(&["--patch", "prefer-local-to-node"])), ["MC", "CPU"]);
    let written = show(&["--numa", "on", "--sd-flags", "MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,NODE:+PREFER_LOCAL"]);
    assert_eq!(levels(&written), ["MC", "CPU"]);
    assert_eq!(cpu0(&written)[..], cpu0(&patched)[..2]);
    fails_with(&["topology", "stoakley", "--numa", "maybe"], "--numa maybe: not a valid value");
    fails_with(&["topology", "stoakley", "--patch", "prefer-local-to-node"], "does not apply to 2.6.26");
    fails_with(
        &["topology", "stoakley", "--profile", "2.6.32-rc1", "--sd-flags", "NODE:+PREFER_LOCAL"],
        "no NODE domain",
    );
    fails(&["--set", "numa=maybe"], "--set numa=maybe: not a valid value");
    // relax_domain_level=1 on the Q6600 (2.6.26): MC (2) and CPU (3) lie
    // above it and lose SD_BALANCE_NEWIDLE (set_domain_attribute).
    let relaxed = String::from_utf8(run(&["topology", "q6600", "--relax-domain-level", "1"]).stdout).unwrap();
    let flag_lines: Vec<&str> = relaxed.lines().filter(|l| l.trim_start().starts_with("flags")).collect();
    assert_eq!(flag_lines.len(), 8, "{relaxed}");
    assert!(flag_lines.iter().all(|l| !l.contains("SD_BALANCE_NEWIDLE")), "{relaxed}");
    fails_with(&["topology", "q6600", "--relax-domain-level", "x"], "--relax-domain-level x: not a level");
    fails(&["--set", "relax_domain_level=-1"], "--set relax_domain_level=-1: not a level");
    // The same edits as an edited initialiser (--sd-init) keep the NODE
    // level that --sd-flags cannot add: the patched kernel's domains.
    let edited = show(&["--numa", "on", "--sd-init", "MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL,NODE:+PREFER_LOCAL"]);
    assert_eq!(cpu0(&edited), cpu0(&patched));
    fails_with(
        &["topology", "q6600", "--sd-init", "MC:+BOGUS"],
        "--sd-init MC:+BOGUS: override \"MC:+BOGUS\": unknown flag",
    );
    fails_with(
        &[
            "topology",
            "stoakley",
            "--profile",
            "2.6.32-rc1",
            "--patch",
            "prefer-local-to-node",
            "--sd-init",
            "NODE:-PREFER_LOCAL",
        ],
        "--sd-init NODE:-PREFER_LOCAL: patch prefer-local-to-node already sets SD_PREFER_LOCAL at NODE",
    );
    fails(&["--set", "sd_init=MC+WAKE_IDLE"], "--set sd_init=MC+WAKE_IDLE:");
    // sched_mc_power_savings=1: Stoakley's MC spans the socket, and the CPU
    // level's groups are the two sockets with SD_POWERSAVINGS_BALANCE.
    let out = run(&["topology", "stoakley", "--profile", "2.6.26", "--sched-mc-power-savings", "1"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(" domain 0: span 0-3 level MC\n  groups: 0 1 2 3\n"), "{text}");
    assert!(
        text.contains("  domain 1: span 0-7 level CPU\n   groups: 0-3 (cpu_power = 4096) 4-7 (cpu_power = 4096)\n"),
        "{text}"
    );
    assert!(text.contains("SD_WAKE_AFFINE|SD_POWERSAVINGS_BALANCE"), "{text}");
    // The header names the knobs' levels, or that the kernel makes no file
    // for one here (no SMT on Stoakley); the JSON gives null for it.
    assert!(text.contains("sched domains (2.6.26; sched_mc_power_savings 1, sched_smt_power_savings (no file)):"));
    let out = run(&["topology", "q6600", "--profile", "2.6.32", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let none = serde_json::json!({"sched_mc_power_savings": null, "sched_smt_power_savings": null});
    assert_eq!(v["power_savings"], none, "a one-package Q6600 has neither file under 2.6.32");
    fails_with(
        &["topology", "stoakley", "--sched-mc-power-savings", "2"],
        "--sched-mc-power-savings 2: not a valid value",
    );
    // A file the host lacks is refused under the flag given.
    fails_with(
        &["topology", "stoakley", "--sched-smt-power-savings", "1"],
        "--sched-smt-power-savings 1: 2.6.26 makes no /sys/devices/system/cpu/sched_smt_power_savings here: \
         the host has no SMT siblings (smt_capable())",
    );
    fails(
        &["--set", "sched_smt_power_savings=yes"],
        "--set sched_smt_power_savings=yes: not a valid value (0 to 1 for 2.6.26)",
    );
}

/// `--set group_sched=1` (CONFIG_FAIR_GROUP_SCHED by user) is a boot
/// setting that the 2.6.25, 2.6.26-rc4 and 2.6.26 profiles port; the
/// 2.6.32 ones, and the min-vruntime-fix patch, are refused with the
/// reason. The users are `--set client_uid=` and `server_uid=` (both
/// 1000 by default). On 2.6.26 a four-hog run of one user is one group on
/// every CPU, so it gives the same figures as without groups (cfs-core's
/// tests/groups.rs pins the arithmetic of several).
#[test]
fn group_sched_is_a_boot_setting_of_the_profiles_that_port_it() {
    fails(&["--set", "group_sched=maybe"], "--set group_sched=maybe");
    fails(&["--set", "server_uid=-1"], "--set server_uid=-1");
    fails_with(
        &["hogs", "--profile", "2.6.26", "--duration", "1s", "--switch", "500ms:set=server_uid=1"],
        "server_uid is fixed at boot; give it with --set instead",
    );
    fails(&["--profile", "2.6.32", "--set", "group_sched=1"], "group scheduling is not available on 2.6.32");
    fails(
        &["--profile", "2.6.26", "--set", "group_sched=1", "--patch", "min-vruntime-fix"],
        "the min-vruntime-fix patch's update_min_vruntime is ported for one queue per CPU",
    );
    fails_with(
        &["hogs", "--profile", "2.6.26", "--duration", "1s", "--switch", "500ms:set=group_sched=1"],
        "group_sched is fixed at boot; give it with --set instead",
    );
    let csv = |extra: &[&str]| {
        let mut args = vec!["hogs", "--profile", "2.6.26", "--clients", "4", "--duration", "200ms", "--runs", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--csv", "-"]);
        let out = run(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // Everything after the config's name: seed, loops_s, utilisation,
        // migrations, preemptions, switches, balancing.
        let line = text.lines().nth(1).expect("a data row").to_string();
        line.split(',').skip(1).collect::<Vec<_>>().join(",")
    };
    assert_eq!(csv(&[]), csv(&["--set", "group_sched=1", "--set", "check_invariants=1"]));
}
