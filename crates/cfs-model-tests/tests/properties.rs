//! The invariants users run on every heuristic change (issue 6), as
//! proptest properties over the whole model: cfs-core driven by the
//! cfs-sim engine, with the core's online invariants checked after every
//! scheduler call (timeline order, cached leftmost, load sums, counts,
//! affinity of every queued and running task, one state per task).
//!
//! Each failing case prints the `cfs-sim` command that replays it; proptest
//! shrinks it first (fewer tasks, smaller nice levels, earlier profiles).
//! Case counts are small for CI; set PROPTEST_CASES for deep runs.

use cfs_core::tunables::Tunables;
use cfs_core::weights::{Policy, set_load_weight};
use cfs_core::{KernelVersion, fair::sched_period};
use cfs_model_tests::{Case, HOSTS, PROFILES, watch};
use cfs_sim::costs::CostSetting;
use cfs_sim::engine::Instruments;
use cfs_sim::workloads::CostedWorkload;
use proptest::prelude::*;

/// CI-sized case counts with a fixed generator seed, so CI is
/// deterministic; PROPTEST_CASES raises the count and CFS_PROPTEST_SEED
/// explores other cases.
fn cases(n: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(n);
    let seed = std::env::var("CFS_PROPTEST_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed);
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        ..ProptestConfig::default()
    }
}

fn profile() -> impl Strategy<Value = &'static str> {
    prop::sample::select(PROFILES.to_vec())
}

const TICK_NS: u64 = 4_000_000; // HZ = 250

proptest! {
    // One-CPU runs are cheap (64 cases of both properties take well under a
    // second in release): more cases catch more planted bugs. With 16, a
    // planted unweighted vruntime and slices stretched by nr_running both
    // slipped through; 30 caught each of them.
    #![proptest_config(cases(64))]

    /// Fairness: CPU-bound tasks sharing one CPU get CPU time in proportion
    /// to their weights. Bound: every task's vruntime stays within one
    /// period of min_vruntime (it runs at most its slice past the leftmost
    /// before check_preempt_tick or the hrtick preempts it, plus a tick of
    /// lag), so its runtime differs from `T * w / W` by at most two periods
    /// plus two ticks of real time: |r_i - T w_i / W| <= 2 p(n) + 2 tick.
    /// Interrupt load (`--irq`, Poisson, up to a third of the CPU) leaves
    /// the bound as it is: the kernels modelled charge a handler's time to
    /// the task it interrupted, in its runtime and vruntime alike. So does
    /// a slowed CPU (`--slow`, 10-100%): runtime is wall time, however
    /// little work it buys.
    #[test]
    fn fairness_on_one_cpu(
        p in profile(),
        nice in prop::collection::vec(-5i32..=5, 2..=4),
        irq in prop::option::of((30u64..=1_000, 1u64..=10)),
        slow in prop::option::of(10u32..=100),
    ) {
        let mut case = Case::new("1s1c", &format!("profile={p}"), "hogs", nice.len() as u32);
        case.nice = nice.clone();
        case.duration_ms = Some(2_000);
        case.irqs = irq.map(|(mean, takes)| format!("cpus=0,mean={mean}us,takes={takes}us")).into_iter().collect();
        // Handlers stretched past the whole CPU are refused (a livelock);
        // keep them under half of it.
        let stretched = |pct: u32| irq.map_or(0.0, |(mean, takes)| takes as f64 / mean as f64 * 100.0 / pct as f64);
        case.slow = slow.filter(|&pct| stretched(pct) < 0.5).map(|pct| format!("cpus=0,speed={pct}%")).into_iter().collect();
        let out = case.run(Instruments::default()).map_err(TestCaseError::fail)?;
        let v: KernelVersion = p.parse().unwrap();
        let hogs: Vec<_> = out.tasks.iter().filter(|t| t.name.starts_with("hog") && t.name != "hogs").collect();
        prop_assert_eq!(hogs.len(), nice.len());
        let w: Vec<u64> = nice.iter().map(|&n| set_load_weight(Policy::Normal, n, v).weight).collect();
        let total_w: u64 = w.iter().sum();
        let total: u64 = hogs.iter().map(|t| t.runtime_ns).sum();
        let bound = 2 * sched_period(nice.len() as u64, &Tunables::defaults(v, 1)) + 2 * TICK_NS;
        for (t, wi) in hogs.iter().zip(&w) {
            let ideal = total as f64 * *wi as f64 / total_w as f64;
            let err = (t.runtime_ns as f64 - ideal).abs();
            prop_assert!(err <= bound as f64, "{}: ran {} ns, fair share {:.0} ns, off by {:.0} > bound {} ns\nreplay: {}",
                t.name, t.runtime_ns, ideal, err, bound, case.command());
        }
    }

    /// Latency: a runnable task runs within the kernel's latency bound. On
    /// one CPU with n hogs a task that becomes runnable waits for at most
    /// the others' slices: one period, plus the START_DEBIT placement of a
    /// new task (one more vslice), plus the tick overruns when slices end on
    /// the periodic tick (2.6.32's HRTICK is off by default): each of the n
    /// others and the launcher may run whole ticks until its vruntime passes
    /// the waiter's, and a task w_max / w_min times heavier gains that much
    /// less vruntime per tick:
    /// wait <= 2 p(n+1) + (n+1) ceil(w_max / w_min) tick.
    #[test]
    fn latency_on_one_cpu(p in profile(), nice in prop::collection::vec(-3i32..=3, 2..=4)) {
        let mut case = Case::new("1s1c", &format!("profile={p}"), "hogs", nice.len() as u32);
        case.nice = nice.clone();
        case.duration_ms = Some(1_000);
        let out = case.run(watch()).map_err(TestCaseError::fail)?;
        let v: KernelVersion = p.parse().unwrap();
        let n = nice.len() as u64;
        let w: Vec<u64> = nice.iter().map(|&x| set_load_weight(Policy::Normal, x, v).weight).chain([1024]).collect();
        let ratio = w.iter().max().unwrap().div_ceil(*w.iter().min().unwrap());
        let bound = 2 * sched_period(n + 1, &Tunables::defaults(v, 1)) + (n + 1) * ratio * TICK_NS;
        prop_assert!(out.probe.max_wait_ns <= bound, "{:?} waited {} ns > bound {} ns\nreplay: {}",
            out.probe.max_wait_task, out.probe.max_wait_ns, bound, case.command());
    }
}

/// The largest `cache_nice_tries` and top-level `max_interval` (in jiffies)
/// of a host's domains under a profile.
fn balance_params(host: &str, p: &str) -> (u64, u64) {
    let v: KernelVersion = p.parse().unwrap();
    let d = cfs_topology::parse_any(host).unwrap().build_domains(v);
    let mut tries = 0;
    let mut max_jiffies = 1;
    for doms in &d.per_cpu {
        for dom in doms {
            tries = tries.max(dom.params.cache_nice_tries as u64);
            max_jiffies = max_jiffies.max(cfs_core::balance::msecs_to_jiffies(dom.params.max_interval as u64, 250));
        }
    }
    (tries, max_jiffies)
}

proptest! {
    #![proptest_config(cases(6))]

    /// Work conservation (the "Decade of Wasted Cores" invariant): with
    /// load balancing on and no affinity limits, no CPU stays idle while
    /// another has two or more runnable tasks for longer than the balance
    /// machinery allows. An idle CPU balances every domain at its (idle,
    /// busy_factor-free) interval, which doubles on each balanced or failed
    /// pass up to max_interval; a cache-hot task becomes movable after
    /// cache_nice_tries failures and active balancing pushes after
    /// cache_nice_tries + 2. So within (cache_nice_tries + 3) passes at the
    /// top level's max_interval, plus a tick of phase, the idle CPU pulls:
    /// gap <= ((cnt + 3) * max_interval_jiffies + 1) * tick.
    /// The worst gap is reported as a metric (`Probe::worst_idle_gap_ns`).
    ///
    /// With NO_HZ the idle CPUs are balanced from the idle load balancer's
    /// tick instead of their own, at the same intervals, so the same bound
    /// applies.
    ///
    /// Two kernels are not work-conserving on Nehalem-EP (SMT + NUMA) in the
    /// model, and are pinned as findings below instead:
    /// 2.6.25 and 2.6.32-rc1 (see `known_wasted_cores_on_nehalem`).
    #[test]
    fn work_conservation(
        host in prop::sample::select(HOSTS.to_vec()),
        p in profile(),
        extra in 0u32..6,
        seed in 1u64..1000,
        nohz in any::<bool>(),
    ) {
        prop_assume!(!(host == "nehalem-ep" && (p == "2.6.25" || p == "2.6.32-rc1")));
        let n = cfs_topology::parse_any(host).unwrap().nr_cpus() as u32;
        let config = format!("profile={p}{}", if nohz { ",set=nohz=1" } else { "" });
        let mut case = Case::new(host, &config, "hogs", n / 2 + extra);
        case.duration_ms = Some(400);
        case.seed = seed;
        let out = case.run(watch()).map_err(TestCaseError::fail)?;
        let (tries, jiffies) = balance_params(host, p);
        let bound = ((tries + 3) * jiffies + 1) * TICK_NS;
        prop_assert!(out.probe.worst_idle_gap_ns <= bound, "worst idle gap {} ns > bound {} ns\nreplay: {}",
            out.probe.worst_idle_gap_ns, bound, case.command());
    }

    /// Affinity is never violated, no task is lost or duplicated, no wakeup
    /// is lost: pgbench with random pins on the client and the backends runs
    /// to its last transaction (a lost wakeup would stall it; the engine
    /// reports a stall as an error) with cfs-core's invariants (every queued
    /// or running task on a CPU its mask allows, exactly one state per task)
    /// checked after every scheduler call. Half the cases also wake the
    /// writers of socket messages (`write_space_wakeups`), which adds
    /// wakeups that find nothing to read, half model select()'s pass as a
    /// plain stretch of work rather than a window wakeups can race
    /// (`poll_window=0`), half inject interrupts on
    /// every CPU (`--irq`), whose returns are preemption points of their
    /// own, and half slow one CPU (`--slow`, 10-100%), which re-times the
    /// work in flight there; under 2.6.32 half turn ARCH_POWER on, so the
    /// balancer also reads that CPU's lower clock ratio as lower power.
    /// Half take a CPU down during the run (`--switch T:offline=C`, which
    /// moves its tasks off, breaking a side's pinning when every CPU it
    /// allows is down) and half of those bring it back up later.
    #[test]
    fn affinity_and_no_loss(
        p in profile(),
        clients in 1u32..12,
        client_mask in 1u8..16,
        server_mask in 1u8..16,
        seed in 1u64..1000,
        write_space in any::<bool>(),
        no_window in any::<bool>(),
        irq in any::<bool>(),
        slow in prop::option::of((0u8..4, 10u32..=100)),
        arch_power in any::<bool>(),
        hotplug in prop::option::of((1u8..4, 1u64..40, prop::option::of(1u64..30))),
    ) {
        let list = |m: u8| (0..4).filter(|b| m & (1 << b) != 0).map(|b: u8| b.to_string()).collect::<Vec<_>>().join(",");
        let mut config = format!("profile={p}{}", if write_space { ",set=write_space_wakeups=1" } else { "" });
        if no_window {
            config += ",set=poll_window=0";
        }
        if arch_power && p.starts_with("2.6.32") {
            config += ",features=ARCH_POWER";
        }
        let mut case = Case::new("q6600", &config, "pgbench", clients);
        case.transactions = Some(600);
        case.pin_client = Some(list(client_mask));
        case.pin_server = Some(list(server_mask));
        case.seed = seed;
        if irq {
            case.irqs.push("cpus=0-3,mean=50us,takes=3us".into());
        }
        // A CPU that goes down hands its interrupts to CPU 0 (fixup_irqs):
        // 2 x 6% there, which a CPU 0 slowed to 12% or less cannot take, a
        // livelock the run refuses. Keep a slowed CPU 0 above that.
        let slow = slow.map(|(cpu, pct)| (cpu, if irq && hotplug.is_some() && cpu == 0 { pct.max(13) } else { pct }));
        case.slow = slow.map(|(cpu, pct)| format!("cpus={cpu},speed={pct}%")).into_iter().collect();
        if let Some((cpu, down_ms, up_after)) = hotplug {
            case.switches.push(format!("{down_ms}ms:offline={cpu}"));
            if let Some(after) = up_after {
                case.switches.push(format!("{}ms:online={cpu}", down_ms + after));
            }
        }
        let out = case.run(Instruments::default()).map_err(TestCaseError::fail)?;
        prop_assert!(out.units >= 600 / clients as u64 * clients as u64, "only {} transactions\nreplay: {}", out.units, case.command());
    }

    /// Socket back-pressure neither loses nor strands anyone: hackbench
    /// groups on any host and kernel, with send buffers from
    /// SOCK_MIN_SNDBUF up, run to their last message (every receiver gets
    /// 20 x loops; a writer left blocked would stall the run, which the
    /// engine reports as an error), and no receiver's socket ever holds
    /// more than the writes a buffer admits: one goes ahead while less
    /// than `sndbuf` is charged, at 360 bytes of truesize per 100-byte
    /// message, so ceil(sndbuf / 360); with `--pipe`, 640 (16 pages of 40).
    /// Besides the data, each child holds at most one message of the start
    /// barrier's: the parent's kick-off (one `SendAll` to all 40 children of
    /// a group, which a child may not have read yet while others already
    /// send), or, for a receiver that has read everything, its "done" to
    /// the parent in its place: one per receiver and one per sender. (The
    /// ready bytes are all read before the kick-off.) A deeper run
    /// (`PROPTEST_CASES=300 CFS_PROPTEST_SEED=11`) found a run with 159
    /// unread against the older bound of one per receiver, 140: 120 data
    /// messages, 20 receivers' kick-offs and 19 senders' still unread.
    #[test]
    fn send_buffers_bound_the_backlog_and_strand_no_writer(
        p in profile(),
        host in prop::sample::select(HOSTS.to_vec()),
        groups in 1u32..=3,
        loops in 5u32..=60,
        sndbuf in prop::sample::select(vec![2_048u64, 4_096, 16_384, 124_928]),
        pipe in any::<bool>(),
        seed in 1u64..1000,
    ) {
        let mut case = Case::new(host, &format!("profile={p},set=sndbuf={sndbuf}"), "messaging", groups);
        case.loops = Some(loops);
        case.pipe = pipe;
        case.seed = seed;
        let out = case.run(Instruments::default()).map_err(TestCaseError::fail)?;
        let receivers = groups as u64 * 20;
        prop_assert_eq!(out.units, receivers * 20 * loops as u64, "replay: {}", case.command());
        // A pipe holds 16 pages of 40 100-byte messages, whatever sndbuf is.
        let per_socket = if pipe { 640 } else { sndbuf.div_ceil(360) };
        let senders = receivers;
        prop_assert!(out.peak_unread as u64 <= receivers * (per_socket + 1) + senders,
            "{} unread > {} receivers x ({per_socket} + 1) + {senders} senders\nreplay: {}",
            out.peak_unread, receivers, case.command());
    }

    /// Determinism: the same case gives the same run, event for event; a
    /// scheduler clock started just below 2^64 (so it wraps during the run)
    /// changes nothing but the offset.
    #[test]
    fn determinism_and_clock_wrap(
        p in profile(),
        host in prop::sample::select(vec!["x2", "q6600", "nehalem-ep"]),
        clients in 1u32..10,
        seed in 1u64..1000,
    ) {
        let mut case = Case::new(host, &format!("profile={p}"), "pgbench", clients);
        case.transactions = Some(400);
        case.seed = seed;
        // The schedstats too: every figure is a difference of two stamps
        // of the scheduler's clock, so where that clock starts cannot
        // matter (unless a stamp lands on exactly 0, which the kernel
        // also reads as "no stamp").
        let fp = |o: &cfs_sim::engine::RunOutcome| {
            (o.units, o.end_ns, o.events, o.switches, o.preemptions, o.cpu_busy_ns.clone(),
             o.tasks.iter().map(|t| (t.runtime_ns, t.migrations)).collect::<Vec<_>>(),
             o.tasks.iter().map(|t| (t.wait_sum_ns, t.wait_count, t.wait_max_ns, t.wait_open_ns,
                                     t.sleep_sum_ns, t.sleep_open_ns, t.sleep_max_ns, t.slice_max_ns))
                 .collect::<Vec<_>>())
        };
        // Both reference runs start the clock at 1, not 0. Every runqueue
        // clock starts at boot (the first time passed in), so a sleeper
        // moved to a CPU that has not set its clock yet has its sleep stamp
        // translated to exactly boot time (set_task_cpu's schedstat offset),
        // which a boot at 0 reads as "no stamp": the kernel's behaviour
        // then, but not a start anywhere else's.
        let one = Instruments { clock_offset: 1, ..Instruments::default() };
        let a = fp(&case.run(one.clone()).map_err(TestCaseError::fail)?);
        let b = fp(&case.run(one).map_err(TestCaseError::fail)?);
        prop_assert_eq!(&a, &b, "same seed, different runs\nreplay: {}", case.command());
        // Start the scheduler's clock 50 ms before the wrap.
        let wrap = Instruments { clock_offset: u64::MAX - 50_000_000, ..Instruments::default() };
        let c = fp(&case.run(wrap).map_err(TestCaseError::fail)?);
        prop_assert_eq!(&a, &c, "a wrapping clock changed the run\nreplay: {}", case.command());
    }
}

/// The configurations that cure the 1:N pile-up in the model: each takes
/// away the sync shortcut that pulls the backends to the client's CPU.
///
/// rc4 + the affinity fix is not among them. It only curbs the shortcut,
/// and it does not rule the pile-up out. A deep run (3,000 cases, seed 777)
/// found a 170 ms streak at 17 clients:
/// `cfs-sim pgbench --config "profile=2.6.26-rc4,patch=affinity-fix"
/// --clients 17 --seed 974 --transactions 10000` gives 16.6K TPS with one
/// CPU 86% busy. 506 more cases at 15-30 clients gave streaks of up to
/// 210 ms. Greg's own runs of the fix (about 22K TPS, between the pile's 11K
/// and the spread's 30K) fit that. Its property is the comparative one
/// below.
const FIXES: [&str; 4] = [
    "profile=2.6.26-rc4,features=863",
    "profile=2.6.26-rc4,features=861",
    "profile=2.6.26-rc4,features=0,policy=batch",
    "profile=2.6.25,patch=sync-wakeups-bit",
];

/// The window: 150 ms, more than two of the CPU level's busy balance
/// intervals (min_interval 1 ms x busy_factor 64 = 64 ms each). A transient
/// crowding that balancing or the backends' own wakeup placement undoes is
/// shorter; a pile-up that wake_affine rebuilds after every balance pass
/// lasts longer. The measure counts consecutive 10 ms windows in which at
/// least 95% of the wakees' switch-ins were on the waker's CPU
/// (`Probe::one_to_n_streak_ns`).
const ONE_TO_N_WINDOW_NS: u64 = 150_000_000;

fn one_to_n_streak(config: &str, clients: u32, seed: u64) -> Result<(u64, Case), TestCaseError> {
    let mut case = Case::new("q6600", config, "pgbench", clients);
    case.transactions = Some(10_000);
    case.seed = seed;
    let ins = Instruments { one_to_n_waker: Some("pgbench".into()), ..Instruments::default() };
    let out = case.run(ins).map_err(TestCaseError::fail)?;
    // The measure saw (nearly) every transaction: pgbench's query wakes a
    // sleeping backend, which then runs. Not every time: a query that
    // comes while its backend is still runnable (preempted after its
    // reply, before its next recv) wakes no one, and the run that follows
    // is no wakee's. A deep run (1,000 cases, seed 63) found 9,929 of
    // 10,000 at 863 and 5 clients (`--seed 681`), every transaction done.
    // Nine in ten is far above what a broken measure would count.
    prop_assert!(
        out.probe.one_to_n_wakees >= 9_000,
        "only {} wakee runs seen\nreplay: {}",
        out.probe.one_to_n_wakees,
        case.command()
    );
    Ok((out.probe.one_to_n_streak_ns, case))
}

proptest! {
    #![proptest_config(cases(4))]

    /// The 1:N waker: under the configurations that fix the pile-up, the
    /// one pgbench process serving N >= 4 backends never has (95% of) them
    /// served on its own CPU for longer than the window.
    #[test]
    fn one_to_n_waker_never_serialises(
        config in prop::sample::select(FIXES.to_vec()),
        clients in 4u32..=30,
        seed in 1u64..1000,
    ) {
        let (streak, case) = one_to_n_streak(config, clients, seed)?;
        prop_assert!(streak <= ONE_TO_N_WINDOW_NS, "all backends ran on the client's CPU for {} ns\nreplay: {}",
            streak, case.command());
    }

    /// ... and the model still reproduces the bug: under 2.6.26-rc4
    /// defaults (895) the same property fails.
    #[test]
    fn one_to_n_waker_serialises_under_895(clients in 15u32..=30, seed in 1u64..1000) {
        let (streak, case) = one_to_n_streak("profile=2.6.26-rc4", clients, seed)?;
        prop_assert!(streak > ONE_TO_N_WINDOW_NS, "895 did not pile up ({} ns)\nreplay: {}", streak, case.command());
    }

    /// The affinity fix (b3137bc8e77) makes the pile-up shorter than under
    /// rc4 without it, on the same case. (In the 506 cases above the fix's
    /// longest streak was at most 0.24 of rc4's: 210 against 880 ms at 30
    /// clients.)
    #[test]
    fn affinity_fix_piles_up_for_less_time_than_rc4(clients in 15u32..=30, seed in 1u64..1000) {
        let (fix, case) = one_to_n_streak("profile=2.6.26-rc4,patch=affinity-fix", clients, seed)?;
        let (rc4, _) = one_to_n_streak("profile=2.6.26-rc4", clients, seed)?;
        prop_assert!(fix < rc4, "affinity-fix piled up for {fix} ns, rc4 for {rc4} ns\nreplay: {}", case.command());
    }
}

/// A finding the properties document rather than hide: before 2.6.28's
/// update_min_vruntime (1af5f730fc1), a CPU's min_vruntime stays frozen
/// while one task runs alone, so a task pulled onto it later is renormalised
/// to that stale floor and the long-running task waits until the newcomer
/// catches up. The multi-CPU latency bound therefore holds on 2.6.32 but not
/// on 2.6.25/26, and the model reproduces that.
#[test]
fn multi_cpu_latency_holds_on_2_6_32_but_not_on_2_6_26() {
    let wait = |p: &str| {
        let mut case = Case::new("q6600", &format!("profile={p}"), "hogs", 6);
        case.duration_ms = Some(1_000);
        case.run(watch()).unwrap().probe.max_wait_ns
    };
    // 6 hogs on 4 CPUs: at most 2 per CPU after balancing; 2.6.32 on 4 CPUs
    // has latency 15 ms (5 ms x 3): bound 2 p(3) + 2 ticks = 38 ms.
    let bound = 2 * sched_period(3, &Tunables::defaults(KernelVersion::V2_6_32, 4)) + 2 * TICK_NS;
    assert!(wait("2.6.32") <= bound, "2.6.32 waited {} ns > {bound}", wait("2.6.32"));
    // 2.6.26 on 4 CPUs: latency 60 ms; the same bound scaled would be
    // 2 * 60 + 8 = 128 ms, and a frozen min_vruntime overshoots it.
    let bound26 = 2 * sched_period(3, &Tunables::defaults(KernelVersion::V2_6_26, 4)) + 2 * TICK_NS;
    assert!(wait("2.6.26") > bound26, "2.6.26 max wait {} ns within {bound26}", wait("2.6.26"));
}

/// Findings of the work-conservation property: on Nehalem-EP, 14-18 hogs
/// (2.6.32-rc1) or 16-17 (2.6.25) forked from one CPU leave a CPU idle
/// beside a doubly loaded one for far longer than the balance intervals
/// allow: 192 ms and 215 ms here against a bound of 164 ms. (With every
/// CPU ticking at the same instant, as the engine had it until the
/// hrtimer stagger of tick_setup_sched_timer was modelled, the same held
/// at 12-14 and 13-14 hogs; the counts move because the idle CPUs' passes
/// fall at other moments of the fork storm.)
/// - 2.6.32-rc1: SD_PREFER_LOCAL (59abf02644c) keeps fork placement inside
///   the socket while it has "spare capacity", so the hogs crowd one socket
///   and only NODE-level balancing (8-32 ms intervals, capacity clamped to
///   one task per socket group under SD_PREFER_SIBLING) drains it — the
///   mechanism behind the 2.6.32-rc1 regressions Yanmin reported;
///   2.6.32 final (PREFER_LOCAL off) spreads at once (gap 0).
/// - 2.6.25: its NODE level has no SD_BALANCE_NEWIDLE, so the other node's
///   idle CPUs only pull at the periodic NODE interval.
#[test]
fn known_wasted_cores_on_nehalem() {
    for (p, clients) in [("2.6.32-rc1", 14), ("2.6.25", 16)] {
        let mut case = Case::new("nehalem-ep", &format!("profile={p}"), "hogs", clients);
        case.duration_ms = Some(400);
        let (tries, jiffies) = balance_params("nehalem-ep", p);
        let bound = ((tries + 3) * jiffies + 1) * TICK_NS;
        let gap = case.run(watch()).unwrap().probe.worst_idle_gap_ns;
        assert!(gap > bound, "{p}: gap {gap} within {bound}: the finding no longer reproduces\n{}", case.command());
        let mut fixed = case.clone();
        fixed.config = "profile=2.6.32".into();
        let gap32 = fixed.run(watch()).unwrap().probe.worst_idle_gap_ns;
        assert!(gap32 <= bound, "2.6.32 final gap {gap32} > {bound}");
    }
}

/// `name=value` cost settings the command line accepts for `workload`:
/// each parameter `--cost` knows (the host's and the workload's own), at
/// values from nothing to the largest allowed, kept only if `CostSetting`
/// accepts them.
fn cost_settings(workload: &'static str) -> impl Strategy<Value = Vec<String>> {
    let names: Vec<String> = CostSetting::names()
        .into_iter()
        .filter(|n| match n.split_once('.').and_then(|(w, _)| CostedWorkload::by_name(w)) {
            Some(w) => w.name() == workload,
            None => true,
        })
        .collect();
    let values = vec![
        "0",
        "0.01",
        "0.5",
        "1",
        "7",
        "100",
        "1e4",
        "65536",
        "1e6",
        "1e9",
        "0/1e6/1e6/1e6/1e6/1e6",
        "0/0/3/20/20/20",
    ];
    let one = (prop::sample::select(names), prop::sample::select(values))
        .prop_filter_map("not a value of this parameter", |(n, v)| {
            CostSetting::new(&n, v).ok().map(|_| format!("cost={n}={v}"))
        });
    prop::collection::vec(one, 1..=6)
}

proptest! {
    #![proptest_config(cases(24))]

    /// Any cost the command line accepts, extreme or not, runs: the run
    /// ends, or stops at the simulated-time cap (a transaction at a second
    /// per context switch), with the scheduler's invariants checked after
    /// every call, and never panics (arithmetic overflow included: the
    /// tests build with debug assertions). The bounds `CostSetting`
    /// enforces are what keep it so: with the largest time raised from 1e9
    /// to 1e19 ns (and 1e19 among the values drawn) the first failing case
    /// is an overflowing time sum in the engine.
    #[test]
    fn any_accepted_cost_runs(
        p in profile(),
        host in prop::sample::select(vec!["q6600", "nehalem-ep", "x2"]),
        (workload, costs) in prop::sample::select(
            vec!["pgbench", "tbench", "sysbench-oltp", "messaging", "volanomark", "starve"],
        )
            .prop_flat_map(|w| (Just(w), cost_settings(w))),
    ) {
        let config = format!("profile={p},{}", costs.join(","));
        let mut case = Case::new(host, &config, workload, 2);
        match workload {
            "pgbench" => case.transactions = Some(100),
            "tbench" | "sysbench-oltp" | "starve" => case.duration_ms = Some(5),
            _ => case.loops = Some(3),
        }
        if let Err(e) = case.run(Instruments::default()) {
            prop_assert!(e.starts_with("run did not finish within"), "{e}");
        }
    }
}
