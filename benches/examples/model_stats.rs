//! Runs each whole-model benchmark (`cfs_benches::model_runs`) and prints
//! its events, the best wall time and the mean on-CPU time per run, the
//! real-time factor (simulated s per s) and events/s.
//!
//! ```text
//! cargo run --release -p cfs-benches --example model_stats [FILTER [REPS]]
//! ```
//!
//! FILTER keeps the runs whose name contains it; each is run REPS times
//! (default 5). On-CPU time comes from `/proc/thread-self/schedstat`
//! (Linux), so it leaves out the time the thread waited for a CPU on a busy
//! machine; it is updated at the kernel's tick, hence a mean over all REPS
//! rather than a minimum. This is also the binary to profile:
//!
//! ```text
//! cargo build --release -p cfs-benches --example model_stats
//! valgrind --tool=callgrind target/release/examples/model_stats pgbench 1
//! ```

use std::time::Instant;

/// This thread's on-CPU time, ns, if the kernel reports it.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let reps: u32 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    for (name, run) in cfs_benches::model_runs() {
        if !name.contains(&filter) {
            continue;
        }
        let mut events = 0;
        let mut wall = f64::MAX;
        let c0 = cpu_ns();
        for _ in 0..reps {
            let t0 = Instant::now();
            events = run.run().events;
            wall = wall.min(t0.elapsed().as_secs_f64());
        }
        let cpu = match (c0, cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9 / reps as f64,
            _ => f64::MAX,
        };
        let sim = run.simulated_s();
        let line = |what: &str, s: f64| {
            format!(
                "{what} {s:.4} s: {:.1}x real time, {:.2} M events/s, {:.0} ns/event",
                sim / s,
                events as f64 / s / 1e6,
                s * 1e9 / events as f64
            )
        };
        println!("{name}: {events} events, {sim:.3} simulated s, {reps} runs");
        println!("    best wall {}", line("", wall));
        if cpu < f64::MAX {
            println!("    mean cpu  {}", line("", cpu));
        }
    }
}
