//! cfs-core operations: the runqueue at 1..10000 tasks, the wakeup path on
//! every preset, one load_balance pass on hosts of 2..1024 CPUs.

use cfs_benches::{block_wake_cycle, imbalanced, presets, runqueue_with};
use cfs_core::{Config, Deschedule, KernelVersion, Scheduler, TaskParams};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn runqueue(c: &mut Criterion) {
    let mut g = c.benchmark_group("enqueue_dequeue_pick");
    for n in [1usize, 10, 100, 1000, 10000] {
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let (mut s, mut now) = runqueue_with(n);
            b.iter(|| black_box(block_wake_cycle(&mut s, &mut now)));
        });
    }
    g.finish();
}

fn wakeup_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("wakeup_select_task_rq_fair");
    for (name, host) in presets() {
        let v = KernelVersion::V2_6_26;
        let n = host.nr_cpus();
        let mut s = Scheduler::new(Config::new(v, n), host.build_domains(v)).expect("config");
        // One running task per CPU plus a sleeper that last ran on the last CPU.
        for cpu in 0..n {
            s.spawn(0, cpu, TaskParams::normal()).expect("spawn");
            s.schedule(0, cpu, Deschedule::Preempt).expect("schedule");
        }
        let sleeper = s.curr(n - 1).expect("running");
        let _ = s.fork(0, sleeper, None);
        let mut now = 1_000;
        g.bench_function(name, |b| {
            b.iter(|| {
                now += 1_000;
                // The forked child runs on the last CPU: it sleeps, CPU 0 wakes it.
                let cpu = s.tasks().last().map(|t| t.cpu).unwrap_or(0);
                let child = s.tasks().last().map(|t| t.id).expect("child");
                if s.curr(cpu) == Some(child) {
                    let _ = s.schedule(now, cpu, Deschedule::Sleep);
                } else {
                    let _ = s.schedule(now, cpu, Deschedule::Preempt);
                }
                black_box(s.wake_up(now, child, 0, true).ok())
            })
        });
    }
    g.finish();
}

fn load_balance(c: &mut Criterion) {
    let mut g = c.benchmark_group("load_balance_pass");
    for (cpus, spec) in [(2, "1s2c"), (16, "2s8c"), (64, "4s16c"), (256, "8n2s16c"), (1024, "16n4s16c")] {
        let s = imbalanced(spec, 2 * cpus);
        g.bench_with_input(BenchmarkId::from_parameter(cpus), &cpus, |b, &cpus| {
            b.iter_batched(|| s.clone(), |mut s| black_box(s.rebalance(10_000_000, cpus - 1)), BatchSize::LargeInput)
        });
    }
    g.finish();
}

criterion_group!(benches, runqueue, wakeup_path, load_balance);
criterion_main!(benches);
