//! Chrome / Perfetto trace events in simulated time: one track per CPU, a
//! slice per stretch a task ran, a flow arrow from each wakeup to the
//! woken task's next slice, an instant on a CPU's track where a task
//! blocked writing to a full socket buffer or found a mutex taken, an
//! instant on a CPU's track where the balancer (or an affinity change)
//! brought a task there, a slice named `irq` on a CPU's track for each
//! injected interrupt's handler (`--irq`, inside the slice of the task it
//! interrupted), and a machine-wide instant at
//! each setting written mid-run (`--switch`). Open the file in chrome://tracing or
//! ui.perfetto.dev. Times are microseconds (the format's unit).
//!
//! The file is streamed event by event ([`Trace::write_json`]): a capped
//! trace holds some 3 million events, and as one `serde_json::Value` tree
//! they took about 6 GB.

use crate::program::TaskRef;
use cfs_core::MigrateReason;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Slices recorded at most (a trace is for looking at, not for archiving);
/// flows, blocking instants and moves are capped at as many each.
pub const MAX_SLICES: usize = 1_000_000;

/// Trace events collected during one run.
#[derive(Debug, PartialEq)]
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
    /// Tasks the balancer or an affinity change moved: (time, to, from,
    /// task, why).
    moves: Vec<(u64, usize, usize, TaskRef, MigrateReason)>,
    /// Injected interrupts' handlers: (cpu, start, end).
    irqs: Vec<(usize, u64, u64)>,
    /// CPUs changing speed (`--slow`): (time, cpu, thousandths of full
    /// speed). Few by nature (one per fault), so not capped.
    speeds: Vec<(u64, usize, u32)>,
    /// What the caps turned away, so that a cut trace says it is cut.
    dropped: Dropped,
}

/// Events left out of a trace because their kind had reached
/// [`MAX_SLICES`]: always the latest ones, so the trace is the run's
/// beginning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Slices closed after the cap.
    pub slices: u64,
    /// Wakeup flows bound to a slice after the cap (a wakeup that never
    /// reached a start is not a flow, and not counted).
    pub flows: u64,
    /// Blocking instants after the cap.
    pub blocks: u64,
    /// Move instants after the cap.
    pub moves: u64,
    /// Interrupt handler slices after the cap.
    pub irqs: u64,
}

impl Dropped {
    /// Whether any cap was hit.
    pub fn any(&self) -> bool {
        *self != Dropped::default()
    }
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

/// A move instant's name: what brought the task to this CPU.
fn move_label(why: MigrateReason) -> &'static str {
    match why {
        MigrateReason::Periodic => "pulled (periodic balance)",
        MigrateReason::NewIdle => "pulled (newly idle)",
        MigrateReason::Active => "pushed (active balance)",
        MigrateReason::Affinity => "moved (affinity)",
        MigrateReason::Hotplug => "moved (its CPU went down)",
        MigrateReason::Wakeup => "placed (wakeup)",
        MigrateReason::Fork => "placed (fork)",
    }
}

/// Counts one event a cap turned away (saturating: a count this large
/// is already the whole message).
fn bump(n: &mut u64) {
    *n = n.saturating_add(1);
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
            moves: Vec::new(),
            irqs: Vec::new(),
            speeds: Vec::new(),
            dropped: Dropped::default(),
        }
    }

    fn close(&mut self, cpu: usize, now: u64) {
        if let Some((t, start)) = self.open[cpu].take() {
            if self.slices.len() < MAX_SLICES {
                self.slices.push((cpu, t, start, now));
            } else {
                bump(&mut self.dropped.slices);
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
            } else {
                bump(&mut self.dropped.flows);
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
        } else {
            bump(&mut self.dropped.blocks);
        }
    }

    /// `task` was moved from `from` to `to` by the balancer or an affinity
    /// change (`why`).
    pub fn moved(&mut self, task: TaskRef, from: usize, to: usize, now: u64, why: MigrateReason) {
        if self.moves.len() < MAX_SLICES {
            self.moves.push((now, to, from, task, why));
        } else {
            bump(&mut self.dropped.moves);
        }
    }

    /// An injected interrupt's handler ran on `cpu` from `start` to `end`.
    pub fn irq(&mut self, cpu: usize, start: u64, end: u64) {
        if self.irqs.len() < MAX_SLICES {
            self.irqs.push((cpu, start, end));
        } else {
            bump(&mut self.dropped.irqs);
        }
    }

    /// `cpu` runs at `permille` thousandths of its speed from `now`: an
    /// instant on its track.
    pub fn speed(&mut self, cpu: usize, now: u64, permille: u32) {
        self.speeds.push((now, cpu, permille));
    }

    /// A machine-wide instant, drawn across every track (a setting written
    /// mid-run).
    pub fn mark(&mut self, now: u64, what: String) {
        self.marks.push((now, what));
    }

    /// The finished trace of a run that ended at `end`: the slices still
    /// open are closed there, and `names` (by task) label them.
    pub fn finish(mut self, names: &[&str], end: u64) -> Trace {
        for cpu in 0..self.open.len() {
            self.close(cpu, end);
        }
        // A handler still running when the run ends is cut there, as the
        // task slices are.
        for irq in &mut self.irqs {
            irq.2 = irq.2.min(end);
        }
        self.irqs.retain(|&(_, start, stop)| start < stop);
        Trace { buf: self, names: names.iter().map(|n| n.to_string()).collect() }
    }
}

/// A run's finished trace, written out with [`Trace::write_json`].
#[derive(Debug, PartialEq)]
pub struct Trace {
    buf: TraceBuf,
    names: Vec<String>,
}

/// One trace event. The fields are in byte order of their keys, as a
/// `serde_json::Value` (a sorted map) printed them: a trace written before
/// streaming and one written now are the same bytes.
#[derive(Clone, Copy, Default, Serialize)]
struct Event<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Args<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    name: &'a str,
    ph: &'static str,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tid: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
}

/// An event's `args`. A map by hand, not a derive: a blocking instant's
/// second key ("writer", "waiter") depends on why the task blocked.
#[derive(Clone, Copy)]
enum Args<'a> {
    Name(&'a str),
    Task(TaskRef),
    TaskAnd(TaskRef, &'static str, &'a str),
    /// A move: the CPU it came from, the task's name, the task.
    Move(usize, &'a str, TaskRef),
}

impl Serialize for Args<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match *self {
            Args::Name(n) => m.serialize_entry("name", n)?,
            Args::Task(t) => m.serialize_entry("task", &t)?,
            // "task" sorts before "waiter" and "writer".
            Args::TaskAnd(t, key, name) => {
                m.serialize_entry("task", &t)?;
                m.serialize_entry(key, name)?;
            }
            // "from" < "name" < "task".
            Args::Move(from, name, t) => {
                m.serialize_entry("from", &from)?;
                m.serialize_entry("name", name)?;
                m.serialize_entry("task", &t)?;
            }
        }
        m.end()
    }
}

/// The top-level `otherData` of a cut trace (the format's slot for
/// metadata; viewers list it and ignore keys they do not know). Its keys
/// are in byte order too, like every other object in the file.
#[derive(Serialize)]
struct CutNote {
    dropped_blocks: u64,
    dropped_flows: u64,
    dropped_irqs: u64,
    dropped_moves: u64,
    dropped_slices: u64,
    trace_cap_per_kind: usize,
}

impl Trace {
    /// What the caps left out.
    pub fn dropped(&self) -> Dropped {
        self.buf.dropped
    }

    /// A line for the user when a cap cut the trace, naming what and how
    /// much was left out; `None` for a whole trace.
    pub fn cut_note(&self) -> Option<String> {
        let d = self.dropped();
        if !d.any() {
            return None;
        }
        let parts: Vec<String> = [
            (d.slices, "later slices"),
            (d.flows, "flows"),
            (d.blocks, "blocking instants"),
            (d.moves, "moves"),
            (d.irqs, "interrupts"),
        ]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        Some(format!(
            "trace cut at {MAX_SLICES} events per kind ({} dropped); use a shorter --duration",
            parts.join(", ")
        ))
    }

    /// Writes the Chrome trace JSON to `w`, one event at a time, and
    /// flushes it. The events keep their order: CPU names, slices, flows,
    /// blocking instants, moves, interrupts, speed changes, settings.
    pub fn write_json<W: Write>(&self, mut w: W) -> io::Result<()> {
        let buf = &self.buf;
        let us = |ns: u64| ns as f64 / 1000.0;
        let name = |t: TaskRef| self.names.get(t).map_or("?", String::as_str);
        w.write_all(br#"{"displayTimeUnit":"ns","#)?;
        let d = buf.dropped;
        if d.any() {
            w.write_all(br#""otherData":"#)?;
            let note = CutNote {
                dropped_blocks: d.blocks,
                dropped_flows: d.flows,
                dropped_irqs: d.irqs,
                dropped_moves: d.moves,
                dropped_slices: d.slices,
                trace_cap_per_kind: MAX_SLICES,
            };
            serde_json::to_writer(&mut w, &note)?;
            w.write_all(b",")?;
        }
        w.write_all(br#""traceEvents":["#)?;
        let mut first = true;
        let mut put = |w: &mut W, e: Event<'_>| -> io::Result<()> {
            if !first {
                w.write_all(b",")?;
            }
            first = false;
            // serde_json's error carries the io::Error it met, if that is
            // what it was.
            serde_json::to_writer(&mut *w, &e).map_err(io::Error::from)
        };
        put(&mut w, Event { args: Some(Args::Name("cfs-sim")), name: "process_name", ph: "M", ..Event::default() })?;
        for cpu in 0..buf.open.len() {
            let cpu_name = format!("CPU{cpu}");
            put(
                &mut w,
                Event {
                    args: Some(Args::Name(&cpu_name)),
                    name: "thread_name",
                    ph: "M",
                    tid: Some(cpu),
                    ..Event::default()
                },
            )?;
        }
        for &(cpu, t, s, e) in &buf.slices {
            put(
                &mut w,
                Event {
                    args: Some(Args::Task(t)),
                    dur: Some(us(e - s)),
                    name: name(t),
                    ph: "X",
                    tid: Some(cpu),
                    ts: Some(us(s)),
                    ..Event::default()
                },
            )?;
        }
        for &(id, from, t0, to, t1) in &buf.flows {
            let flow = Event { cat: Some("wake"), id: Some(id), name: "wakeup", ..Event::default() };
            put(&mut w, Event { ph: "s", tid: Some(from), ts: Some(us(t0)), ..flow })?;
            put(&mut w, Event { bp: Some("e"), ph: "f", tid: Some(to), ts: Some(us(t1)), ..flow })?;
        }
        // An instant on one CPU's track ("s": "t").
        let on_track = |cpu: usize, t: u64, name: &'static str, cat: &'static str, args| Event {
            args: Some(args),
            cat: Some(cat),
            name,
            ph: "i",
            s: Some("t"),
            tid: Some(cpu),
            ts: Some(us(t)),
            ..Event::default()
        };
        for &(t, cpu, task, why) in &buf.blocks {
            let (what, cat, who) = why.labels();
            put(&mut w, on_track(cpu, t, what, cat, Args::TaskAnd(task, who, name(task))))?;
        }
        for &(t, to, from, task, why) in &buf.moves {
            let cat = match why {
                MigrateReason::Affinity => "affinity",
                MigrateReason::Hotplug => "hotplug",
                _ => "balance",
            };
            put(&mut w, on_track(to, t, move_label(why), cat, Args::Move(from, name(task), task)))?;
        }
        for &(cpu, s, e) in &buf.irqs {
            let irq = Event { cat: Some("irq"), dur: Some(us(e - s)), name: "irq", ph: "X", ..Event::default() };
            put(&mut w, Event { tid: Some(cpu), ts: Some(us(s)), ..irq })?;
        }
        for &(t, cpu, permille) in &buf.speeds {
            let what = format!("speed {}", crate::faults::fmt_speed(permille));
            let e = Event { cat: Some("slow"), name: &what, ph: "i", s: Some("t"), ..Event::default() };
            put(&mut w, Event { tid: Some(cpu), ts: Some(us(t)), ..e })?;
        }
        for (t, what) in &buf.marks {
            put(
                &mut w,
                Event {
                    cat: Some("setting"),
                    name: what,
                    ph: "i",
                    s: Some("g"),
                    tid: Some(0),
                    ts: Some(us(*t)),
                    ..Event::default()
                },
            )?;
        }
        w.write_all(b"]}")?;
        w.flush()
    }

    /// The Chrome trace JSON as bytes (what [`Trace::write_json`] writes).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail; if it somehow did, the bytes so
        // far are what there is.
        let _ = self.write_json(&mut out);
        out
    }

    /// The trace parsed back into a JSON value, for looking into it in
    /// tests and tools. It holds the whole trace in memory, many times
    /// the file's size.
    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_slice(&self.to_json_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

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
        let v = t.finish(&["a", "b"], 6_000).to_value().unwrap();
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
        // The end binds to the slice it falls in ("bp": "e"), as the viewer
        // needs to draw the arrow into the woken task's run.
        let bp: Vec<(Option<&str>, Option<&str>)> =
            ev.iter().filter(|e| e["cat"] == "wake").map(|e| (e["name"].as_str(), e["bp"].as_str())).collect();
        assert_eq!(bp, [(Some("wakeup"), None), (Some("wakeup"), Some("e"))]);
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
        // A machine-wide instant ("s": "g"), filed under CPU 0's thread as
        // the JSON importer wants a tid for every event.
        assert_eq!((marks[0]["s"].as_str(), marks[0]["tid"].as_u64()), (Some("g"), Some(0)));
    }

    /// The streamed file is JSON: one event per CPU name, slice, flow end,
    /// blocking instant, move and setting, no `otherData` when nothing was
    /// dropped, and every object's keys in byte order, as the
    /// `serde_json::Value` the file used to be built as printed them.
    #[test]
    fn the_streamed_trace_is_json_with_every_event() {
        let mut t = TraceBuf::new(3);
        t.begin(0, 0, 1_000);
        t.wake(1, 0, 1_200);
        t.begin(2, 1, 1_500);
        t.idle(0, 2_000);
        t.blocked(1, 2, 2_500, Blocked::SendBuffer);
        t.blocked(0, 1, 2_600, Blocked::Mutex);
        t.moved(0, 0, 1, 2_700, MigrateReason::NewIdle);
        t.mark(3_000, "features=863".into());
        let trace = t.finish(&["a", "b"], 4_000);
        let mut bytes = Vec::new();
        trace.write_json(&mut bytes).unwrap();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        // 1 process name + 3 CPU names + 2 slices (task 0 on CPU 0 until
        // it idles, task 1 on CPU 2 until the end) + 2 ends of task 1's
        // one flow + 2 blocking instants + 1 move + 1 setting = 12.
        assert_eq!(v["traceEvents"].as_array().map(Vec::len), Some(12));
        // The metadata first: the process, then each CPU's track by its tid.
        let ev = &v["traceEvents"];
        let head = |i: usize| (ev[i]["name"].as_str(), ev[i]["ph"].as_str(), ev[i]["tid"].as_u64());
        assert_eq!(
            (head(0), ev[0]["args"]["name"].as_str()),
            ((Some("process_name"), Some("M"), None), Some("cfs-sim"))
        );
        for cpu in 0..3 {
            assert_eq!(head(1 + cpu), (Some("thread_name"), Some("M"), Some(cpu as u64)));
            assert_eq!(ev[1 + cpu]["args"]["name"].as_str(), Some(format!("CPU{cpu}").as_str()));
        }
        // Then the slices, each named for its task.
        assert_eq!((head(4), head(5)), ((Some("a"), Some("X"), Some(0)), (Some("b"), Some("X"), Some(2))));
        let mv = &ev[10];
        assert_eq!(
            (mv["name"].as_str(), mv["tid"].as_u64(), mv["ts"].as_f64()),
            (Some("pulled (newly idle)"), Some(1), Some(2.7))
        );
        assert_eq!((mv["args"]["from"].as_u64(), mv["args"]["name"].as_str()), (Some(0), Some("a")));
        assert_eq!(v.get("otherData"), None);
        assert_eq!(trace.dropped(), Dropped::default());
        assert_eq!(trace.cut_note(), None);
        // A cut names only the kinds it dropped.
        let mut cut = TraceBuf::new(1);
        cut.dropped = Dropped { moves: 3, ..Dropped::default() };
        assert_eq!(
            cut.finish(&["a"], 10).cut_note().as_deref(),
            Some("trace cut at 1000000 events per kind (3 moves dropped); use a shorter --duration")
        );
        // A Value prints its maps sorted: printing the parsed file again
        // gives the same bytes only if the stream kept that order.
        assert_eq!(serde_json::to_string(&v).unwrap(), String::from_utf8(bytes.clone()).unwrap());
        assert_eq!(trace.to_json_bytes(), bytes);
    }

    /// A writer with room for `room` bytes, then a full disk.
    struct Head {
        got: Vec<u8>,
        room: usize,
    }

    impl Write for Head {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::other("disk full"));
            }
            let n = b.len().min(self.room);
            self.got.extend_from_slice(&b[..n]);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// At most MAX_SLICES slices, as many flows, as many blocking instants,
    /// as many moves and as many interrupts are kept: the first ones. Each one turned away is counted,
    /// and the file and the user's note say how many.
    #[test]
    fn caps_keep_the_first_events_and_count_the_rest() {
        let mut t = TraceBuf::new(1);
        for i in 0..MAX_SLICES as u64 + 2 {
            t.wake(0, 0, i);
            t.begin(0, 0, i);
        }
        // MAX_SLICES + 2 starts close MAX_SLICES + 1 slices (the first
        // start closes none) and bind MAX_SLICES + 2 flows: 1 slice and 2
        // flows over.
        assert_eq!((t.slices.len(), t.flows.len()), (MAX_SLICES, MAX_SLICES));
        assert_eq!(t.dropped, Dropped { slices: 1, flows: 2, ..Dropped::default() });
        assert_eq!((t.slices[0].2, t.flows[0].2), (0, 0), "the first ones kept");
        // A wakeup that never reaches a start is no flow, kept or dropped.
        t.wake(1, 0, MAX_SLICES as u64 + 2);
        // MAX_SLICES + 5 blockings: 5 over.
        for i in 0..MAX_SLICES as u64 + 5 {
            t.blocked(0, 0, i, Blocked::Mutex);
        }
        assert_eq!(t.blocks.len(), MAX_SLICES);
        // MAX_SLICES + 3 moves: 3 over.
        for i in 0..MAX_SLICES as u64 + 3 {
            t.moved(0, 0, 0, i, MigrateReason::NewIdle);
        }
        assert_eq!((t.moves.len(), t.moves[0].0), (MAX_SLICES, 0));
        // MAX_SLICES + 4 interrupts: 4 over.
        for i in 0..MAX_SLICES as u64 + 4 {
            t.irq(0, i, i + 1);
        }
        assert_eq!((t.irqs.len(), t.irqs[0].1), (MAX_SLICES, 0));
        // The end closes the last start's slice: a second slice over.
        let trace = t.finish(&["a"], MAX_SLICES as u64 + 10);
        assert_eq!(trace.dropped(), Dropped { slices: 2, flows: 2, blocks: 5, moves: 3, irqs: 4 });
        assert_eq!(
            trace.cut_note().as_deref(),
            Some(
                "trace cut at 1000000 events per kind (2 later slices, 2 flows, 5 blocking instants, 3 moves, \
                 4 interrupts dropped); use a shorter --duration"
            )
        );
        // The counts lead the file. The writer's disk fills after 200
        // bytes, inside the first event (the 3 million after it are not
        // needed here): its error comes back as it was, not as a panic.
        let mut head = Head { got: Vec::new(), room: 200 };
        let err = trace.write_json(&mut head).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        let want = r#"{"displayTimeUnit":"ns","otherData":{"dropped_blocks":5,"dropped_flows":2,"dropped_irqs":4,"dropped_moves":3,"dropped_slices":2,"trace_cap_per_kind":1000000},"traceEvents":[{"args""#;
        assert_eq!(String::from_utf8_lossy(&head.got[..want.len()]), want);
    }
}
