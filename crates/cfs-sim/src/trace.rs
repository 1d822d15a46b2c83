//! Chrome / Perfetto trace events in simulated time: one track per CPU, a
//! slice per stretch a task ran, a flow arrow from each wakeup to the
//! woken task's next slice, and a machine-wide instant at each setting
//! written mid-run (`--switch`). Open the file in chrome://tracing or
//! ui.perfetto.dev. Times are microseconds (the format's unit).

use crate::program::TaskRef;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Slices recorded at most (a trace is for looking at, not for archiving).
pub const MAX_SLICES: usize = 1_000_000;

/// Trace events collected during one run.
#[derive(Debug)]
pub struct TraceBuf {
    open: Vec<Option<(TaskRef, u64)>>,
    slices: Vec<(usize, TaskRef, u64, u64)>,
    /// Wakeups not yet bound to a slice: task -> (flow id, waker cpu, time).
    pending_flows: BTreeMap<TaskRef, (u64, usize, u64)>,
    flows: Vec<(u64, usize, u64, usize, u64)>,
    next_flow: u64,
    /// Machine-wide instants: (time, what), e.g. a `--switch` setting.
    marks: Vec<(u64, String)>,
}

impl TraceBuf {
    /// An empty trace for `nr_cpus` CPUs.
    pub fn new(nr_cpus: usize) -> Self {
        TraceBuf {
            open: vec![None; nr_cpus],
            slices: Vec::new(),
            pending_flows: BTreeMap::new(),
            flows: Vec::new(),
            next_flow: 0,
            marks: Vec::new(),
        }
    }

    fn close(&mut self, cpu: usize, now: u64) {
        if let Some((t, start)) = self.open[cpu].take() {
            if self.slices.len() < MAX_SLICES {
                self.slices.push((cpu, t, start, now));
            }
        }
    }

    /// `task` starts running on `cpu`.
    pub fn begin(&mut self, cpu: usize, task: TaskRef, now: u64) {
        self.close(cpu, now);
        self.open[cpu] = Some((task, now));
        if let Some((id, from, t0)) = self.pending_flows.remove(&task) {
            if self.flows.len() < MAX_SLICES {
                self.flows.push((id, from, t0, cpu, now));
            }
        }
    }

    /// `cpu` goes idle.
    pub fn idle(&mut self, cpu: usize, now: u64) {
        self.close(cpu, now);
    }

    /// `task` was woken from `cpu`.
    pub fn wake(&mut self, task: TaskRef, cpu: usize, now: u64) {
        self.next_flow += 1;
        self.pending_flows.insert(task, (self.next_flow, cpu, now));
    }

    /// A machine-wide instant, drawn across every track (a setting written
    /// mid-run).
    pub fn mark(&mut self, now: u64, what: String) {
        self.marks.push((now, what));
    }

    /// The Chrome trace JSON.
    pub fn into_json(mut self, names: &[&str], end: u64) -> Value {
        for cpu in 0..self.open.len() {
            self.close(cpu, end);
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        let mut ev = vec![json!({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "cfs-sim"}})];
        for cpu in 0..self.open.len() {
            ev.push(
                json!({"name": "thread_name", "ph": "M", "pid": 0, "tid": cpu, "args": {"name": format!("CPU{cpu}")}}),
            );
        }
        for &(cpu, t, s, e) in &self.slices {
            let name = names.get(t).copied().unwrap_or("?");
            ev.push(json!({"name": name, "ph": "X", "ts": us(s), "dur": us(e - s), "pid": 0, "tid": cpu, "args": {"task": t}}));
        }
        for &(id, from, t0, to, t1) in &self.flows {
            ev.push(json!({"name": "wakeup", "cat": "wake", "ph": "s", "id": id, "ts": us(t0), "pid": 0, "tid": from}));
            ev.push(json!({"name": "wakeup", "cat": "wake", "ph": "f", "bp": "e", "id": id, "ts": us(t1), "pid": 0, "tid": to}));
        }
        for (t, what) in &self.marks {
            ev.push(json!({"name": what, "cat": "setting", "ph": "i", "s": "g", "ts": us(*t), "pid": 0, "tid": 0}));
        }
        json!({"traceEvents": ev, "displayTimeUnit": "ns"})
    }
}
