//! The floor: a bare event loop (a binary heap of timestamped events with
//! trivial handlers). Every model benchmark is reported as a ratio to this
//! per-event cost on the same machine (BENCHMARKS.md).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

/// Pops an event, "handles" it by scheduling a follow-up a pseudo-random
/// delay later (as a simulator's handler would), `events` times.
fn bare_loop(events: u64) -> u64 {
    let mut heap = BinaryHeap::with_capacity(64);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..32u64 {
        heap.push(Reverse((i * 1000, i)));
    }
    let mut handled = 0;
    let mut seq = 32;
    while handled < events {
        let Some(Reverse((t, _))) = heap.pop() else { break };
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        seq += 1;
        heap.push(Reverse((t + (x % 10_000), seq)));
        handled += 1;
    }
    handled
}

fn floor(c: &mut Criterion) {
    let mut g = c.benchmark_group("floor");
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("bare_event_loop_100k", |b| b.iter(|| black_box(bare_loop(100_000))));
    g.finish();
}

criterion_group!(benches, floor);
criterion_main!(benches);
