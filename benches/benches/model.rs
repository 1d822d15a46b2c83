//! The whole model: cfs-core driven by cfs-sim's engine, cost model and
//! built-in workloads, exactly as the `cfs-sim` command line runs them.
//!
//! - pgbench -S on the Q6600 at 50 clients for one simulated second;
//! - tbench on Nehalem-EP at 32 clients;
//! - 1024 hogs plus messaging groups on a 1024-CPU spec host (16n4s16c).
//!
//! The runs are defined in `cfs_benches::model_runs`; `cargo run --release
//! -p cfs-benches --example model_stats` times each once and prints its
//! real-time factor and events/s (and is what to profile).
//!
//! Each reports events/s (criterion's elements/s, one element per engine
//! event), to compare with the floor (`floor.rs`); the simulated time of a
//! run is printed once per benchmark, so real-time factors are simulated
//! seconds over the measured time per run (BENCHMARKS.md).
//!
//! Debug builds (`cargo test --benches`, which runs each once) use much
//! shorter runs.

use cfs_benches::model_runs;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn model(c: &mut Criterion) {
    let mut g = c.benchmark_group("model");
    g.sample_size(10);
    for (name, run) in model_runs() {
        let out = run.run();
        eprintln!(
            "model/{name}: {} events, {:.3} simulated s, {} units, {} switches per run",
            out.events,
            run.simulated_s(),
            out.units,
            out.switches
        );
        g.throughput(Throughput::Elements(out.events));
        g.bench_function(name, |b| b.iter(|| black_box(run.run().events)));
    }
    g.finish();
}

criterion_group!(benches, model);
criterion_main!(benches);
