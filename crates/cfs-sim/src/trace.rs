//! Chrome / Perfetto trace events in simulated time: one track per CPU, a
//! slice per stretch a task ran, a flow arrow from each wakeup to the
//! woken task's next slice, an instant on a CPU's track where a task
//! blocked writing to a full socket buffer or found a mutex taken, and a machine-wide instant at
//! each setting written mid-run (`--switch`). Open the file in chrome://tracing or
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
    /// Tasks that blocked where it is worth a mark: (time, cpu, task, why).
    blocks: Vec<(u64, usize, TaskRef, Blocked)>,
}

/// Why a task blocked, for an instant on its CPU's track: the blockings
/// that tell of contention, not a task's ordinary waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// A write found its socket's send buffer full (`sock_wait_for_wmem`).
    SendBuffer,
    /// A lock found its mutex taken and slept in futex_wait.
    Mutex,
}

impl Blocked {
    /// The instant's name, its category and the argument naming the task.
    fn labels(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Blocked::SendBuffer => ("send buffer full", "socket", "writer"),
            Blocked::Mutex => ("mutex taken", "sync", "waiter"),
        }
    }
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
            blocks: Vec::new(),
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

    /// `task` blocked on `cpu`, for the reason `why`.
    pub fn blocked(&mut self, task: TaskRef, cpu: usize, now: u64, why: Blocked) {
        if self.blocks.len() < MAX_SLICES {
            self.blocks.push((now, cpu, task, why));
        }
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
        for &(t, cpu, task, why) in &self.blocks {
            let name = names.get(task).copied().unwrap_or("?");
            let (what, cat, who) = why.labels();
            ev.push(json!({"name": what, "cat": cat, "ph": "i", "s": "t", "ts": us(t), "pid": 0,
                "tid": cpu, "args": {"task": task, who: name}}));
        }
        for (t, what) in &self.marks {
            ev.push(json!({"name": what, "cat": "setting", "ph": "i", "s": "g", "ts": us(*t), "pid": 0, "tid": 0}));
        }
        json!({"traceEvents": ev, "displayTimeUnit": "ns"})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice per stretch a task ran, closed by the next task, by idle or
    /// by the end of the trace; a flow from a wakeup to the woken task's
    /// next start only; a task the names do not cover is "?".
    #[test]
    fn slices_flows_and_marks() {
        let mut t = TraceBuf::new(2);
        t.begin(0, 0, 1_000);
        t.wake(1, 0, 1_500);
        t.begin(1, 1, 2_000);
        t.begin(0, 5, 3_000);
        t.idle(1, 4_000);
        t.wake(0, 1, 4_500);
        t.mark(5_000, "features=863".into());
        t.blocked(1, 0, 5_500, Blocked::SendBuffer);
        t.blocked(0, 1, 5_600, Blocked::Mutex);
        let v = t.into_json(&["a", "b"], 6_000);
        let ev = v["traceEvents"].as_array().unwrap();
        let slices: Vec<(String, u64, f64, f64)> = ev
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                let name = e["name"].as_str().unwrap().to_string();
                (name, e["tid"].as_u64().unwrap(), e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap())
            })
            .collect();
        assert_eq!(
            slices,
            [("a".into(), 0, 1.0, 2.0), ("b".into(), 1, 2.0, 2.0), ("?".into(), 0, 3.0, 3.0)],
            "times in µs"
        );
        // One flow: task 1 woken from CPU 0 at 1.5 µs, started on CPU 1 at
        // 2 µs. Task 0's wakeup at 4.5 µs never reaches a start.
        let flows: Vec<(&str, u64, f64)> = ev
            .iter()
            .filter(|e| e["cat"] == "wake")
            .map(|e| (e["ph"].as_str().unwrap(), e["tid"].as_u64().unwrap(), e["ts"].as_f64().unwrap()))
            .collect();
        assert_eq!(flows, [("s", 0, 1.5), ("f", 1, 2.0)]);
        // Task 1 blocked writing on CPU 0 at 5.5 µs: an instant on that
        // CPU's track, naming the writer.
        let blocks: Vec<&Value> = ev.iter().filter(|e| e["cat"] == "socket").collect();
        assert_eq!(blocks.len(), 1);
        assert_eq!((blocks[0]["ph"].as_str(), blocks[0]["s"].as_str()), (Some("i"), Some("t")));
        assert_eq!((blocks[0]["tid"].as_u64(), blocks[0]["ts"].as_f64()), (Some(0), Some(5.5)));
        assert_eq!(blocks[0]["args"]["writer"].as_str(), Some("b"));
        // Task 0 found a mutex taken on CPU 1 at 5.6 µs.
        let locks: Vec<&Value> = ev.iter().filter(|e| e["cat"] == "sync").collect();
        assert_eq!(locks.len(), 1);
        assert_eq!((locks[0]["name"].as_str(), locks[0]["ph"].as_str()), (Some("mutex taken"), Some("i")));
        assert_eq!((locks[0]["tid"].as_u64(), locks[0]["ts"].as_f64()), (Some(1), Some(5.6)));
        assert_eq!(locks[0]["args"]["waiter"].as_str(), Some("a"));
        let marks: Vec<&Value> = ev.iter().filter(|e| e["cat"] == "setting").collect();
        assert_eq!(marks.len(), 1);
        assert_eq!((marks[0]["name"].as_str(), marks[0]["ts"].as_f64()), (Some("features=863"), Some(5.0)));
    }

    /// At most MAX_SLICES slices and as many flows are kept.
    #[test]
    fn slices_and_flows_are_capped() {
        let mut t = TraceBuf::new(1);
        for i in 0..MAX_SLICES as u64 + 2 {
            t.wake(0, 0, i);
            t.begin(0, 0, i);
        }
        // MAX_SLICES + 2 starts close MAX_SLICES + 1 slices and bind
        // MAX_SLICES + 2 flows.
        assert_eq!((t.slices.len(), t.flows.len()), (MAX_SLICES, MAX_SLICES));
        for i in 0..MAX_SLICES as u64 + 1 {
            t.blocked(0, 0, i, Blocked::Mutex);
        }
        assert_eq!(t.blocks.len(), MAX_SLICES);
    }
}
