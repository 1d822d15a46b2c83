//! The shapes of the seed tables (issue 5, ../shared/data) as regression
//! tests over the whole model: they fail if the 1:N pile-up, or any of its
//! cures, stops emerging from cfs-core's decisions plus the cost model.
//! Short runs (4,000-12,000 transactions, 3 runs, median) keep them CI-sized; the
//! full comparison is `cfs-sim calibrate` (docs/CALIBRATION.md).

use cfs_sim::costs::CostModel;
use cfs_sim::experiment::{Plan, Results, SchedSpec, Seeds};
use cfs_sim::workloads::{Workload, WorkloadOpts};
use cfs_topology::Host;

const TX: u64 = 4000;
/// The features table needs longer runs, and the default run's 5 runs a
/// cell: 863 at 8 clients varies by ±15-20% from run to run (its backends
/// settle on the client's CPU or not), and its margin over x2.5 is small
/// (x2.63 in the default run).
const TX_FEATURES: u64 = 12_000;

/// pgbench -S on the Q6600, one column per `--config` (on 2.6.26-rc4, the
/// features table's "2.6.26.git").
fn seed(configs: &[&str], clients: &[u32]) -> Results {
    seed_tx(configs, clients, TX, 3)
}

fn seed_tx(configs: &[&str], clients: &[u32], tx: u64, runs: u32) -> Results {
    let host = Host::preset("q6600").unwrap();
    let columns = configs
        .iter()
        .map(|c| SchedSpec::profile("2.6.26-rc4").with_items(c).unwrap().resolve(&host).unwrap())
        .collect();
    let plan = Plan {
        costs: CostModel::preset("q6600").unwrap(),
        host,
        workload: Workload::builtin("pgbench").unwrap(),
        opts: WorkloadOpts { transactions: Some(tx), ..WorkloadOpts::default() },
        columns,
        clients: clients.to_vec(),
        runs,
        seeds: Seeds::Derived(11),
        trace: false,
        changes: Vec::new(),
        irqs: Vec::new(),
        slow: Vec::new(),
    };
    plan.execute(&|| {}).unwrap()
}

/// 895's shape: flat from 1 to 60 clients (x0.75..x1.5 of 1 client) while
/// one CPU carries most of the run time (column `c` of `r`, measured at
/// `clients`, 15 among them).
fn assert_piled_flat(r: &Results, c: usize, clients: &[u32]) {
    let m = |n: u32| r.median(c, n).unwrap();
    for &n in clients {
        let ratio = m(n) / m(1);
        assert!((0.75..=1.5).contains(&ratio), "895 at {n}: x{ratio:.2}");
    }
    let share = r.median_run(c, 15).unwrap().max_cpu_share;
    assert!(share > 0.6, "895 at 15: busiest CPU share {share:.2}");
}

#[test]
fn features_table_shapes() {
    // The defconfig build, without groups (the seed experiment's build is
    // `testers_build_puts_waker_between_895_and_861`'s): the mechanisms of
    // the pile and its cures hold in both.
    // Columns: 0 = 895, 1 = 863, 2 = 861, 3 = 893, 4 = waker, and 5 = 893
    // with select()'s pass a plain stretch of work.
    let cols = [
        "name=895",
        "name=863,features=863",
        "name=861,features=861",
        "name=893,features=893",
        "name=waker,patch=waker",
        "name=893-no-window,features=893,set=poll_window=0",
    ];
    let clients = [1, 8, 15, 30, 60];
    let r = seed_tx(&cols, &clients, TX_FEATURES, 5);
    let m = |c: usize, n: u32| r.median(c, n).unwrap();
    assert_piled_flat(&r, 0, &clients);
    // 863 and 861 at 8-15 clients: >= 2.5x the 1-client value.
    for c in [1, 2] {
        for n in [8, 15] {
            assert!(m(c, n) >= 2.5 * m(c, 1), "{} at {n}: {:.0} vs {:.0}", cols[c], m(c, n), m(c, 1));
        }
    }
    // 861 is at least 863 from 30 clients on.
    for n in [30, 60] {
        assert!(m(2, n) >= m(1, n), "861 {:.0} < 863 {:.0} at {n}", m(2, n), m(1, n));
    }
    // 893 stays flat (x1.00-x1.24 here; the data x1.00-x1.32). Without
    // wakeup preemption the client, once a reply races its select() pass,
    // reschedules behind every backend queued on its CPU, which holds the
    // column down from 15 clients; with select()'s pass modelled as a
    // plain stretch of work (set poll_window=0) it reaches x1.5-x1.6
    // (docs/CALIBRATION.md §5, "893").
    for n in [8, 15, 30, 60] {
        let ratio = m(3, n) / m(3, 1);
        assert!((0.75..=1.5).contains(&ratio), "893 at {n}: x{ratio:.2}");
    }
    // Still a pile, however loose, and not the full spread that the sync
    // shortcut's absence gives (861 reaches x3.1 of 893's one client).
    assert!(m(3, 60) < 0.6 * m(2, 60), "893 {:.0} vs 861 {:.0} at 60", m(3, 60), m(2, 60));
    // The mechanism: the raced passes cost the client its place. Over 15,
    // 30 and 60 clients the window takes 893 down by 11% here (39.8K
    // against 44.5K summed); a pass that no longer reschedules when
    // raced would leave the two columns alike.
    let sum = |c: usize| [15, 30, 60].iter().map(|&n| m(c, n)).sum::<f64>();
    assert!(sum(3) < 0.95 * sum(5), "893 {:.0} vs {:.0} without the window", sum(3), sum(5));
    // waker sits between 895 and 861 at 8 and 15 clients (here 25.1K and
    // 26.3K between 11.2K and 30.1-30.6K).
    for n in [8, 15] {
        assert!(
            m(4, n) > m(0, n) && m(4, n) < m(2, n),
            "waker {:.0} not in ({:.0}, {:.0}) at {n}",
            m(4, n),
            m(0, n),
            m(2, n)
        );
    }
    // From 30 clients the model's waker is a full spread, limited like 861
    // by the one client process (32.9K and 31.6K here against 861's 32.9K
    // and 33.7K; the data has it at 18.9K and 17.5K): the "between"
    // is missed there by a hair either way in this build (Greg Smith's,
    // with groups, has it part way, as the data does). What must hold is
    // that the patch
    // lifts the pile, and that nothing lifts it past the client's limit.
    for n in [30, 60] {
        assert!(m(4, n) > 2.0 * m(0, n), "waker {:.0} vs 895 {:.0} at {n}", m(4, n), m(0, n));
        assert!(m(4, n) < 1.05 * m(2, n), "waker {:.0} past 861 {:.0} at {n}", m(4, n), m(2, n));
    }
}

/// The features table under the 2008 testers' build, the seed experiment's
/// (`calibration::TESTERS_BUILD`: rc4 with CONFIG_FAIR_GROUP_SCHED by user,
/// pgbench and the postmaster one user). With every task in one group,
/// rc4's runqueue load is the group's share of that CPU (at most its 1024
/// shares however many tasks are queued there, split by task weight at
/// each balance pass), not the tasks' summed weight. Under the waker patch
/// the sync shortcut seldom fires, and wake_affine falls to its load
/// tests, which read these small loads after the sync subtraction of the
/// waker's 1024 (unsigned): they pass far more often than with task
/// weights (`cfs-sim pgbench --profile 2.6.26-rc4 --patch waker --clients
/// 30 --runs 1 --csv -`: 6,938 affine wakeups of 20,071 with `--set
/// group_sched=1`, 501 without). So waker sits part way, 19-28K here from
/// 8 clients, as the data's 18.9-19.5K, where without groups it spreads as
/// far as 861 (31-34K from 30 clients). 895 still piles on one CPU, and 861
/// spreads.
#[test]
fn testers_build_puts_waker_between_895_and_861() {
    let build = |c: &str| format!("{},{c}", cfs_sim::calibration::TESTERS_BUILD);
    let cols = [build("name=895"), build("name=861,features=861"), build("name=waker,patch=waker")];
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    let clients = [1, 8, 15, 30, 60];
    let r = seed_tx(&cols, &clients, TX_FEATURES, 5);
    let m = |c: usize, n: u32| r.median(c, n).unwrap();
    assert_piled_flat(&r, 0, &clients);
    for n in [8, 15] {
        assert!(m(1, n) >= 2.5 * m(1, 1), "861 at {n}: {:.0} vs {:.0}", m(1, n), m(1, 1));
    }
    // Here 18.9K, 28.0K, 24.3K and 19.9K against 895's 9.0-11.3K and
    // 861's 27.8-33.6K: between, and well short of 861 from 30 clients,
    // where the build without groups reaches it.
    for n in [8, 15, 30, 60] {
        assert!(
            m(2, n) > 1.5 * m(0, n) && m(2, n) < 0.95 * m(1, n),
            "waker {:.0} not well inside (895 {:.0}, 861 {:.0}) at {n}",
            m(2, n),
            m(0, n),
            m(1, n)
        );
    }
    for n in [30, 60] {
        assert!(m(2, n) < 0.8 * m(1, n), "waker {:.0} vs 861 {:.0} at {n}", m(2, n), m(1, n));
    }
}

#[test]
fn stock_2_6_25_piles_up_as_its_runs_did() {
    // pgbench-q6600-runs.csv (Greg Smith 2008-05-21, stock kernels at their
    // default features): 2.6.25 already piles up, 11,272 TPS at 1 client,
    // 10,817 at 8, 10,208 at 15 and 8,880 at 30 (medians of 5 runs):
    // x0.79-x0.96 of one client, where a spread would reach x2.5 and more.
    // Its wake_affine has rc4's sync shortcut (4b119e21 sched_fair.c:1004:
    // a sync wakee comes to the waker's CPU when both overlap less than
    // the migration cost), and 2.6.25 has no SYNC_WAKEUPS bit to turn it
    // off.
    let r = seed(&["name=2.6.25,profile=2.6.25"], &[1, 8, 15, 30]);
    let one = r.median(0, 1).unwrap();
    for n in [8, 15, 30] {
        let ratio = r.median(0, n).unwrap() / one;
        assert!((0.75..=1.25).contains(&ratio), "2.6.25 at {n}: x{ratio:.2} of one client");
    }
    // The work is serialised: about one CPU's worth of busy time of four.
    // Unlike rc4's pile, 2.6.25's wanders: its periodic balancing moves a
    // task now and then, and the sync wakeups drag the rest after it, so no
    // single CPU carries most of the run.
    let busy: f64 = r.median_run(0, 15).unwrap().cpu_util.iter().sum();
    assert!(busy < 1.3, "2.6.25 at 15: {busy:.2} CPUs busy");
}

#[test]
fn affinity_fix_beats_895_from_8_to_20_clients() {
    let r = seed(&["name=895", "name=fix,patch=affinity-fix"], &[8, 15, 20]);
    for n in [8, 15, 20] {
        let (base, fix) = (r.median(0, n).unwrap(), r.median(1, n).unwrap());
        assert!(fix >= 1.5 * base, "affinity-fix {fix:.0} vs 895 {base:.0} at {n}");
    }
}

#[test]
fn batch_with_features_0_scales_like_the_batch_table() {
    // pgbench-q6600-batch.csv, 2.6.26.git_batch: 9,916 at 1 client, 31,071
    // at 8 (x3.1), 30,963 at 15; never below x2.5 from 8 clients on.
    let r = seed(&["name=895", "name=batch,features=0,policy=batch"], &[1, 8, 15, 30]);
    let one = r.median(1, 1).unwrap();
    for n in [8, 15, 30] {
        let v = r.median(1, n).unwrap();
        assert!(v >= 2.5 * one, "batch+0 at {n}: {v:.0} vs {one:.0} at 1");
        assert!(v >= 2.0 * r.median(0, n).unwrap(), "batch+0 at {n} should beat 895 by far");
    }
}

#[test]
fn chrt_b_on_pgbench_alone_does_not_help() {
    // Thread 1 (seeds/README.md): SCHED_BATCH for the server and pgbench
    // (plus features 0) restores throughput, but "running pgbench alone
    // under `chrt -b` does not help, because each backend still preempts
    // pgbench on wakeup". In 2.6.26-rc4's check_preempt_wakeup
    // (e490517a sched_fair.c:1247) only the *wakee's* policy exempts a
    // wakeup from preempting, and the wakees that preempt in the pile are
    // the backends, woken by pgbench's queries. So batch on the client side
    // must leave 895's pile (and its wakeup preemptions) as they are, and
    // batch on the server side must stop every wakeup preemption.
    let cols = ["name=895", "name=client-batch,client-policy=batch", "name=server-batch,server-policy=batch"];
    let r = seed(&cols, &[8, 15]);
    for n in [8, 15] {
        let (base, client) = (r.median(0, n).unwrap(), r.median(1, n).unwrap());
        assert!((client - base).abs() <= 0.05 * base, "chrt -b pgbench at {n}: {client:.0} vs 895 {base:.0}");
        let run = r.median_run(1, n).unwrap();
        assert!(run.max_cpu_share > 0.6, "chrt -b pgbench at {n} should stay piled: {:?}", run.cpu_util);
        assert!(
            run.counters.preempt_wakeup > u64::from(n),
            "the backends should still preempt pgbench: {} wakeup preemptions",
            run.counters.preempt_wakeup
        );
        let server = r.median_run(2, n).unwrap();
        assert_eq!(server.counters.preempt_wakeup, 0, "batch backends preempted on wakeup at {n}");
    }
}

/// The pile in schedstat terms (cfs-core's CONFIG_SCHEDSTATS fields). Under
/// 895 every backend pgbench wakes on its own CPU preempts it, so pgbench
/// waits out a backend run (63 µs of work plus a switch, docs/CALIBRATION.md
/// §3) for most transactions, against its own ~27 µs: it waits longer than
/// it runs, well over half a backend run per transaction. Under 861 nothing
/// preempts it: it runs, and waits a few µs per transaction at most.
#[test]
fn under_895_pgbench_waits_out_a_backend_per_transaction() {
    let r = seed(&["name=895", "name=861,features=861"], &[15]);
    let client = |ci: usize| {
        let run = r.median_run(ci, 15).unwrap();
        run.tasks.iter().find(|t| t.name == "pgbench").unwrap().clone()
    };
    let pile = client(0);
    assert!(pile.wait_sum_ns as f64 > 1.3 * pile.runtime_ns as f64, "895: {pile:?}");
    assert!(pile.wait_sum_ns / TX > 32_000, "895: {} ns a transaction, {pile:?}", pile.wait_sum_ns / TX);
    let spread = client(1);
    assert!((spread.wait_sum_ns as f64) < 0.1 * spread.runtime_ns as f64, "861: {spread:?}");
    assert!(spread.wait_sum_ns / TX < 5_000, "861: {} ns a transaction, {spread:?}", spread.wait_sum_ns / TX);
}

#[test]
fn the_clamp_table_is_a_waker_tree() {
    // pgbench-q6600-sync-load-clamp.csv (Mike Galbraith 2008-05-23), compared
    // with Peter's waker patch on (calibration.rs says why). Its one-client
    // values (8,418 and 9,210) sit at that box's cross-CPU value (863: 8,174)
    // rather than its co-located one (10,015, 2.6.26 default), and from 8
    // clients on it runs at 2.5-2.9x the default's 9,444-10,294.
    // The model shows both only with the waker patch: one client then runs
    // at 863's cross-CPU rate; the clamp alone co-locates like 895 (the rc4
    // sync shortcut returns before the subtraction it clamps) and piles up.
    // (The model's waker + clamp scales less than the data: x1.7-x2.2 of 895
    // at 8-15 clients, hence the x1.5 bound.)
    let cols = [
        "name=895",
        "name=863,features=863",
        "name=clamp,patch=sync-load-clamp",
        "name=w+clamp,patch=waker,patch=sync-load-clamp",
    ];
    let r = seed(&cols, &[1, 8, 15]);
    let m = |c: usize, n: u32| r.median(c, n).unwrap();
    let near = |a: f64, b: f64| (a / b - 1.0).abs() <= 0.05;
    assert!(near(m(3, 1), m(1, 1)), "waker+clamp at 1: {:.0} vs 863 {:.0}", m(3, 1), m(1, 1));
    assert!(near(m(2, 1), m(0, 1)), "clamp at 1: {:.0} vs 895 {:.0}", m(2, 1), m(0, 1));
    for n in [8, 15] {
        assert!(m(3, n) >= 1.5 * m(0, n), "waker+clamp at {n}: {:.0} vs 895 {:.0}", m(3, n), m(0, n));
        assert!(m(2, n) <= 1.2 * m(0, n), "clamp alone at {n}: {:.0} vs 895 {:.0}", m(2, n), m(0, n));
    }
}
