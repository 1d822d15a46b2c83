//! The seed experiment's mechanism in one screen, through cfs-core's API
//! alone (no simulator): one task that wakes many, as pgbench wakes its
//! backends, on a Q6600.
//!
//! A waker W runs on CPU 0; three workers last ran on CPUs 1, 2 and 3 and
//! now sleep (their CPUs are idle). W wakes each in turn with the sync hint,
//! as an AF_UNIX write does (`sock_def_readable` ->
//! `wake_up_interruptible_sync`). The program prints, for several kernels
//! and feature masks, the CPU each wakeup chose and why.
//!
//! 2.6.26-rc4's wake_affine takes a sync wakeup onto the waker's CPU
//! whenever both tasks' avg_overlap is under sysctl_sched_migration_cost
//! (fresh tasks have none), however loaded that CPU is: every worker lands
//! on CPU 0 while CPUs 1-3 stay idle. That is the pile-up of the seed
//! thread. With SYNC_WAKEUPS off (sched_features 863) try_to_wake_up drops
//! the hint first, and each worker stays on its own idle CPU. 2.6.26 final,
//! and rc4 with the affinity fix (b3137bc8e77), weigh the waker's CPU
//! first: the sync hint subtracts the waker's own weight, so the first
//! worker, woken while W is alone on CPU 0, passes the "cheap" test (tl =
//! 0) and is pulled; the next two find W plus that worker there and stay
//! where they slept.
//!
//! Run it with `cargo run -p cfs-core --example sync_wakeup`.

use cfs_core::{Config, Deschedule, Event, KernelVersion, Observer, Patch, Scheduler, TaskId, TaskParams, WakeReason};
use cfs_topology::Host;

/// Keeps each wakeup's decision (cfs-core reports every decision to an
/// [`Observer`]; a driver keeps what it needs).
#[derive(Default)]
struct Wakeups(Vec<(TaskId, usize, WakeReason)>);

impl Observer for Wakeups {
    fn event(&mut self, _now: u64, e: &Event) {
        if let Event::Wake { task, target, reason, .. } = *e {
            self.0.push((task, target, reason));
        }
    }
}

const MS: u64 = 1_000_000;

/// Runs the scene under `cfg` and returns each worker's wakeup decision.
fn scene(cfg: Config) -> Result<Vec<(usize, WakeReason)>, Box<dyn std::error::Error>> {
    let host = Host::preset("q6600")?;
    let domains = host.build_domains(cfg.version);
    let mut s = Scheduler::with_observer(cfg, domains, Wakeups::default())?;
    // The waker runs on CPU 0.
    let waker = s.spawn(0, 0, TaskParams::normal())?;
    s.schedule(0, 0, Deschedule::Preempt)?;
    // Each worker runs 1 ms on its CPU, then blocks (in recv, say).
    let mut workers = Vec::new();
    for cpu in 1..=3 {
        let w = s.spawn(0, cpu, TaskParams::normal())?;
        s.schedule(0, cpu, Deschedule::Preempt)?;
        s.schedule(MS, cpu, Deschedule::Sleep)?;
        workers.push(w);
    }
    assert_eq!(s.curr(0), Some(waker));
    // At 2 ms the waker writes to each worker's socket in turn.
    for (i, &w) in workers.iter().enumerate() {
        s.wake_up(2 * MS + i as u64 * 10_000, w, 0, true)?;
    }
    let seen = &s.observer().0;
    Ok(workers.iter().filter_map(|w| seen.iter().rev().find(|e| e.0 == *w).map(|e| (e.1, e.2))).collect())
}

/// The kernels and masks compared.
fn cases() -> Result<[(&'static str, Config); 4], Box<dyn std::error::Error>> {
    let rc4 = KernelVersion::V2_6_26Rc4;
    Ok([
        ("2.6.26-rc4, sched_features 895", Config::new(rc4, 4)),
        ("2.6.26-rc4, 863 (SYNC_WAKEUPS off)", Config::new(rc4, 4).with_features_mask(863)?),
        ("2.6.26-rc4 + affinity-fix", Config::new(rc4, 4).with_patch(Patch::AffinityFix)?),
        ("2.6.26", Config::new(KernelVersion::V2_6_26, 4)),
    ])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cases = cases()?;
    println!("worker:                               on CPU 1           on CPU 2           on CPU 3");
    for (name, cfg) in cases {
        let row: Vec<String> = scene(cfg)?.iter().map(|(cpu, why)| format!("-> {cpu} {why:?}")).collect();
        println!("{name:<37} {}", row.iter().map(|c| format!("{c:<18}")).collect::<String>());
    }
    Ok(())
}

/// `cargo test` runs this (the example is declared with `test = true`), so
/// the table above cannot drift from what cfs-core decides.
#[test]
fn the_table_is_the_kernels_decisions() {
    use WakeReason::{Affine, AffineSync, Previous};
    let want = [
        // rc4: sync && both avg_overlaps (0) < migration_cost: affine at once.
        [(0, AffineSync), (0, AffineSync), (0, AffineSync)],
        // 863: the hint is dropped; CPU 0 (1024) is not lighter than an idle
        // CPU, so each stays where it slept (idle: wake_idle keeps it).
        [(1, Previous), (2, Previous), (3, Previous)],
        // tl = 1024 - 1024 = 0 for the first, 2048 - 1024 = 1024 > 0 after.
        [(0, Affine), (2, Previous), (3, Previous)],
        [(0, Affine), (2, Previous), (3, Previous)],
    ];
    for ((name, cfg), want) in cases().unwrap().into_iter().zip(want) {
        assert_eq!(scene(cfg).unwrap(), want, "{name}");
    }
}
