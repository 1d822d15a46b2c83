//! Thread 2 of the seeds ("tbench regression with 2.6.32-rc1", Zhang
//! Yanmin, October 2009) as a regression test over the whole model: tbench
//! with 2 x CPUs pairs lost throughput on 2.6.32-rc1, bisected to
//! SD_PREFER_LOCAL (59abf02644c), and clearing the flag in the MC and CPU
//! domains recovered most of it on the Core 2 servers (Tigerton, Stoakley).
//!
//! In the model the loss is mostly what rc1's select_task_rq_fair does on
//! every wakeup (kernel-reference.md §9.2, 9.4): at each PREFER_LOCAL
//! domain it walks the domain's whole span summing power and nr_running,
//! though with SD_BALANCE_WAKE off the answer can never move a wakeup.
//! tbench keeps every CPU busy and wakes twice per op, so that reading is
//! pure overhead, priced by the cost model's `scan_ns_per_cpu` per CPU
//! read. The rest is where the flag places forked children, which split
//! pairs that tbench's non-sync TCP wakeups do not always bring together.
//! No parameter of the cost model was set from thread 2 (its numbers are
//! held back).

use cfs_model_tests::Case;
use cfs_sim::costs::CostModel;
use cfs_sim::engine::{Instruments, RunOutcome};

const NO_PREFER_LOCAL: &str = "sd-flags=MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL";

fn tbench(host: &str, config: &str, pairs: u32) -> RunOutcome {
    let mut case = Case::new(host, config, "tbench", pairs);
    case.duration_ms = Some(200);
    case.run(Instruments::default()).unwrap()
}

fn throughput(o: &RunOutcome) -> f64 {
    o.units as f64 / o.window_ns as f64
}

/// The Core 2 servers: (host, CPUs, CPUs a wakeup's walk reads when it
/// reaches the top). 2.6.32-rc1 builds MC over the two cores of one L2 and
/// CPU over the whole machine (`cfs-sim topology HOST --profile
/// 2.6.32-rc1`), both with PREFER_LOCAL: Stoakley 2 + 8, Tigerton 2 + 16.
const CORE2: [(&str, u32, u32); 2] = [("stoakley", 8, 2 + 8), ("tigerton", 16, 2 + 16)];

#[test]
fn prefer_local_costs_tbench_its_span_walk_on_core2() {
    let mut losses = Vec::new();
    for (host, cpus, walk) in CORE2 {
        let pairs = 2 * cpus; // tbench -t 600 <2 x CPUs>
        let rc1 = tbench(host, "profile=2.6.32-rc1", pairs);
        let cleared = tbench(host, &format!("profile=2.6.32-rc1,{NO_PREFER_LOCAL}"), pairs);
        let fin = tbench(host, "profile=2.6.32", pairs);
        let loss = 1.0 - throughput(&rc1) / throughput(&cleared);

        // The walk's price, from the cost model: every wakeup that reaches
        // the top reads `walk` runqueues at scan_ns_per_cpu (scaled by the
        // host's clock). As a share of the CPU time the run had, that is
        // what the flag costs when every walk reaches the top; a walk cut
        // short where a domain still has spare capacity (nr_running < its
        // CPUs) costs less, but with 2 x CPUs pairs it rarely is, and the
        // MC level is always read. The price depends on how many wakeups
        // an op takes, which depends on whether the partners preempt each
        // other, and that on how the pairs started, so it is taken from
        // the run itself.
        let costs = CostModel::preset(host).unwrap();
        let per_wakeup = walk as f64 * costs.cpu(costs.scan_ns_per_cpu);
        let busy: u64 = rc1.cpu_busy_ns.iter().sum();
        let ceiling = rc1.counters.wakeups as f64 * per_wakeup / busy as f64;
        // dbench releases every client at once (create_procs' barrier), and
        // the balancer takes ~10 ms to spread the herd over the CPUs, so a
        // 200 ms run is 94-95% busy in all, and fully busy after that.
        assert!(
            busy as f64 > 0.93 * (cpus as u64 * rc1.end_ns) as f64,
            "{host}: tbench should keep every CPU busy ({busy} ns of {} x {} ns)",
            cpus,
            rc1.end_ns
        );

        // The flag also decides fork placement: sched_balance_fork stops
        // at the first PREFER_LOCAL domain with spare capacity (nr_running
        // below its CPUs), so rc1 leaves more of tbench_srv's children
        // near the listener (200 ms runs: Stoakley 19 of 32 forks moved
        // against 32, Tigerton 39 against 64). A child away from its
        // client is a pair split over two CPUs, and 2.6.32's TCP wakeups
        // come from the receive softirq without the sync hint, so
        // wake_affine regathers such a pair only when the two loads allow
        // it. What that costs is measured with the walk made free
        // (scan_ns_per_cpu = 0) in both kernels: Stoakley 1.5%, Tigerton
        // nothing (-0.1%). The loss is the walk's price plus that
        // placement, within a point (Stoakley 11.9% against 10.1% +
        // 1.5%, Tigerton 15.8% against 16.5%), and at least half the price.
        // The placement part is the model's own measurement, so this bound
        // checks that the two parts account for the loss, not the size of
        // either against the kernel.
        assert!(
            rc1.counters.mig_fork < cleared.counters.mig_fork,
            "{host}: rc1 moved {} forked tasks, without PREFER_LOCAL {}",
            rc1.counters.mig_fork,
            cleared.counters.mig_fork
        );
        let free = "cost=scan_ns_per_cpu=0";
        let rc1_free = tbench(host, &format!("profile=2.6.32-rc1,{free}"), pairs);
        let cleared_free = tbench(host, &format!("profile=2.6.32-rc1,{NO_PREFER_LOCAL},{free}"), pairs);
        let placement = (1.0 - throughput(&rc1_free) / throughput(&cleared_free)).max(0.0);
        assert!(
            loss > 0.5 * ceiling && loss < ceiling + placement + 0.01,
            "{host}: PREFER_LOCAL costs {:.1}% of tbench; the span walk's price is {:.1}% and its placement {:.1}%",
            100.0 * loss,
            100.0 * ceiling,
            100.0 * placement
        );
        // Clearing the flag at MC and CPU is 2.6.32 final for tbench once
        // the pairs have settled (the rest of rc1 -> final does not touch
        // the ping-pong's path; 200 ms runs agree within 0.1%).
        let rest = throughput(&fin) / throughput(&cleared);
        assert!((0.975..=1.025).contains(&rest), "{host}: 2.6.32 final at x{rest:.3} of rc1 without PREFER_LOCAL");
        losses.push(loss);
    }
    // The wider the CPU domain, the longer the walk: Tigerton loses more.
    assert!(losses[1] > losses[0], "Tigerton {:.3} vs Stoakley {:.3}", losses[1], losses[0]);
}

/// patches.md §6, merged as 799e2205ec6 (2009-10-09): Peter's answer to the
/// report clears SD_PREFER_LOCAL at MC and CPU and sets it for x86's NODE
/// level. On the Core 2 servers, which build no NODE level, that is the
/// cleared case above. On Nehalem-EP the walk then reads NODE's 16 threads
/// on every wakeup instead of MC's 8, and the model's tbench falls below
/// rc1's (200 ms, 32 pairs: 523 MB/s against 750, and 805 with the flag
/// cleared everywhere; 2026-12-05, with tbench's TCP wakeups from the
/// receive softirq, dbench's barrier waking its newest sleeper first and
/// a remote wakeup paying the reschedule IPI only when it sends one). Mainline took the NODE half back out three weeks
/// later (6b9de613ae9, "Yanmin Zhang reported that SD_PREFER_LOCAL induces
/// an order of magnitude increase in select_task_rq_fair() overhead while
/// running heavy wakeup benchmarks (tbench and vmark)"). No parameter was
/// set from this.
#[test]
fn prefer_local_at_node_costs_nehalem_more_than_rc1_did() {
    let pairs = 32;
    let rc1 = tbench("nehalem-ep", "profile=2.6.32-rc1", pairs);
    let cleared = tbench("nehalem-ep", &format!("profile=2.6.32-rc1,{NO_PREFER_LOCAL}"), pairs);
    let patched = tbench("nehalem-ep", "profile=2.6.32-rc1,patch=prefer-local-to-node", pairs);
    assert!(
        throughput(&patched) < throughput(&rc1),
        "Nehalem under 799e2205ec6 {:.0} should fall below rc1 {:.0}",
        throughput(&patched),
        throughput(&rc1)
    );
    // At least half the NODE walk's price (16 runqueues a wakeup, taken from
    // the run's own wakeups), as on the Core 2 servers above.
    let costs = CostModel::preset("nehalem-ep").unwrap();
    let busy: u64 = patched.cpu_busy_ns.iter().sum();
    let price = patched.counters.wakeups as f64 * 16.0 * costs.cpu(costs.scan_ns_per_cpu) / busy as f64;
    let loss = 1.0 - throughput(&patched) / throughput(&cleared);
    assert!(
        loss > 0.5 * price,
        "799e2205ec6 costs Nehalem {:.1}%; the NODE walk's price is {:.1}%",
        100.0 * loss,
        100.0 * price
    );
}
