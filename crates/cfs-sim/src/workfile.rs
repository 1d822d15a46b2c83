//! Workload files: TOML, and the subset of rt-app JSON that maps onto the
//! [`crate::program`] vocabulary.
//!
//! [`parse_workload`] reads either (JSON if the text starts with `{`) into a
//! [`FileWorkload`]; it never panics, and every unknown key is an error
//! that names it and its place.
//!
//! # TOML
//!
//! ```toml
//! name = "pingpong"          # optional
//! duration = "1s"            # simulated run time (optional if a task has finish = true)
//! warmup = "100ms"           # progress before this is not counted
//! metric = "round_trips_s"   # column name of the throughput
//!
//! [[task]]
//! name = "ping"
//! instances = 2              # started at t=0 (0: only created by fork); default 1
//! nice = 0                   # policy = "normal" | "batch" | "idle"; cpus = "0-1"
//! ws_kb = 32                 # private working set (migration refill)
//! loop = -1                  # repeat ops forever (default), or N times then exit
//! finish = false             # the run ends when all finish tasks have exited
//! ops = [
//!   { run = "20us" },        # or { run = { mean = "20us", dist = "exp" } }, dist: fixed|exp|normal (cv)|uniform (min, max)
//!   { send = "pong", sync = true, bytes = 64 },  # instance i talks to instance i of pong
//!   { wait = "one" },        # "all" takes every pending message (select)
//!   { progress = 1 },
//! ]
//!
//! [[task]]
//! name = "pong"
//! instances = 2
//! ops = [ { wait = "one" }, { run = "30us" }, { reply = true, sync = true } ]
//! ```
//!
//! Ops: `run`, `sleep`, `timer` (`{ period = "10ms" }`: sleep to the next
//! period boundary), `send` (a task name, `name#3` for an instance, or
//! `parent`; with `sync`, `bytes`), `reply` (to the last message's
//! sender), `broadcast` (every instance of a task, woken in one call, as a
//! write on a socket they all poll wakes them: [`Action::SendAll`]; with a
//! `stream`, one write per instance), `wait` (`one`/`all`),
//! where a send, reply or broadcast with `stream = "pair"` (an AF_UNIX
//! stream socket, the writer's own connection), `stream = "shared"` (one
//! socket per receiver, shared by every writer to it, as hackbench's
//! senders share each receiver's) or `stream = "pipe"` (one pipe per
//! receiver, hackbench's `-pipe`) is a write: always sync, and blocked
//! while the socket's send buffer or the pipe's 16 pages are full
//! ([`crate::program::Stream`]),
//! `cond_wait` / `signal` / `broad` (named conditions), `fork` (a task
//! name), `exit`, `yield`, `progress`, `start_measuring` (the throughput
//! window starts here and progress so far is dropped, as a benchmark reads
//! its clock once its workers are ready: [`Action::StartMeasuring`]),
//! `nice`, `policy`, `affinity`, and `loop = { count = N, ops = [...] }`.
//! A bare string op (`"exit"`, `"yield"`, `"wait"`, `"start_measuring"`)
//! is the same as `{ exit = true }` etc.
//!
//! # rt-app JSON
//!
//! `global`: `duration` (s), `default_policy`; the rt-app housekeeping keys
//! (`calibration`, `logdir`, `log_basename`, `lock_pages`, `ftrace`,
//! `gnuplot`, `pi_enabled`, `io_device`, `mem_buffer_size`,
//! `cumulative_slack`, `log_size`) are accepted and ignored.
//! `tasks.NAME`: `instance`, `loop`, `policy`, `priority` (nice), `cpus`,
//! `delay` (µs), `ws_kb`, `phases`, and events in document order, each key
//! optionally suffixed by digits (`run0`, `sleep1`): `run`/`runtime` (µs of
//! CPU), `sleep` (µs), `timer` (`{ref, period}`), `wait` (`{ref, mutex}` or
//! a name), `signal`, `broad`, `sync` (signal then wait), `lock`/`unlock`
//! (accepted; mutex cost is not modelled), `fork` (a task name),
//! `suspend` (wait for a `resume`), `resume` (a task name), `yield`.
//! Without any progress op, every task counts one unit per loop.
//!
//! Steps that take no time (a progress count, a zero-length run) are free
//! up to [`crate::engine::FREE_STEPS`] in a row; then the engine charges a
//! system call, so a loop of nothing else is a busy loop, not a free one.
//!
//! A file is checked when it is read (at most 256 task definitions, 4,096
//! tasks at start, 100,000 ops, loops 32 deep), and its run is bounded by
//! [`crate::engine::Limits`]: a fork that would make more than 32,768
//! tasks alive (the kernel's default pid_max) or create more than 2^20 in
//! one run, or a send that would leave more than 2^24 messages unread
//! (only a socket or pipe write ever blocks), stops the run with an error that
//! says so.

use crate::dist::{Dist, parse_duration, parse_duration_with};
use crate::program::{Action, ForkSpec, Program, StepCx, Stream, TaskRef, TaskSpec};
use crate::workloads::WorkloadOpts;
use cfs_core::{CpuMask, Policy, TaskParams};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::sync::Arc;

/// Limits that keep a hostile file from exhausting memory or time.
const MAX_TASK_DEFS: usize = 256;
const MAX_INSTANCES: u64 = 4096;
const MAX_OPS: usize = 100_000;
const MAX_DEPTH: usize = 32;

/// A workload file that could not be used. Display: one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    /// Where (`task[2].ops[3]`, `tasks.thread0`), empty for the whole file.
    pub path: String,
    /// What is wrong.
    pub msg: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() { write!(f, "{}", self.msg) } else { write!(f, "at {}: {}", self.path, self.msg) }
    }
}

impl std::error::Error for WorkloadError {}

fn err<T>(path: &str, msg: impl Into<String>) -> Result<T, WorkloadError> {
    Err(WorkloadError { path: path.to_string(), msg: msg.into() })
}

// ----- an ordered value tree for both formats ----------------------------------

/// A parsed TOML/JSON value that keeps object keys in document order
/// (rt-app events are ordered by their keys' position).
#[derive(Clone, Debug, PartialEq)]
enum V {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<V>),
    Obj(Vec<(String, V)>),
}

impl V {
    fn kind(&self) -> &'static str {
        match self {
            V::Null => "null",
            V::Bool(_) => "a boolean",
            V::Int(_) => "an integer",
            V::Float(_) => "a number",
            V::Str(_) => "a string",
            V::Arr(_) => "an array",
            V::Obj(_) => "a table",
        }
    }
}

struct VVisitor;

impl<'de> Visitor<'de> for VVisitor {
    type Value = V;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V, E> {
        Ok(V::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V, E> {
        Ok(V::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V, E> {
        Ok(i64::try_from(v).map_or(V::Float(v as f64), V::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V, E> {
        Ok(V::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V, E> {
        Ok(V::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V, E> {
        Ok(V::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<V, E> {
        Ok(V::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<V, E> {
        Ok(V::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V, D::Error> {
        V::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<V, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element()? {
            v.push(x);
        }
        Ok(V::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<V, A::Error> {
        let mut v = Vec::new();
        while let Some((k, x)) = map.next_entry::<String, V>()? {
            v.push((k, x));
        }
        Ok(V::Obj(v))
    }
}

impl<'de> Deserialize<'de> for V {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<V, D::Error> {
        d.deserialize_any(VVisitor)
    }
}

/// Nesting depth of a text's brackets, a cheap guard against inputs that
/// would recurse deeply in the parsers.
fn bracket_depth(text: &str) -> usize {
    let (mut d, mut max) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '[' | '{' => {
                d += 1;
                max = max.max(d);
            }
            ']' | '}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}

// ----- the parsed workload --------------------------------------------------------

/// Who a send goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// An instance of a task definition (None: the sender's own index).
    Task { def: usize, instance: Option<u32> },
    /// Every instance of a task definition.
    All(usize),
    /// The creator of this task.
    Parent,
    /// The sender of the last message received.
    Reply,
}

/// How a send reaches its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    /// A message and a wakeup (a signal, a futex), `sync` or not.
    Message { sync: bool },
    /// An AF_UNIX stream write on the writer's own connection to the
    /// receiver (`stream = "pair"`): a sync wakeup, and a send buffer of
    /// its own.
    Pair,
    /// An AF_UNIX stream write on the receiver's one socket, whose buffer
    /// every writer to it shares (`stream = "shared"`, hackbench's
    /// inherited socketpair end).
    Shared,
    /// A write on the receiver's one pipe, shared by every writer to it
    /// (`stream = "pipe"`).
    Pipe,
}

/// One instruction of a task's flattened op list.
#[derive(Clone, Debug, PartialEq)]
enum Instr {
    Run(Dist),
    Sleep(u64),
    Timer {
        slot: usize,
        period: u64,
    },
    Send {
        to: Target,
        via: Via,
        bytes: u32,
    },
    Wait {
        all: bool,
    },
    CondWait(usize),
    CondSignal {
        cond: usize,
        all: bool,
    },
    Fork(usize),
    Exit,
    Yield,
    StartMeasuring,
    Progress(u64),
    Nice(i32),
    Policy(Policy),
    Affinity(CpuMask),
    /// Enter a loop; `end` is the index of its LoopEnd.
    LoopBegin {
        count: Option<u64>,
        end: usize,
    },
    /// Close a loop; `begin` is the index of its LoopBegin.
    LoopEnd {
        begin: usize,
    },
}

/// One task definition.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskDef {
    /// Name.
    pub name: String,
    /// Instances started at t=0.
    pub instances: u32,
    /// Nice level.
    pub nice: i32,
    /// Policy.
    pub policy: Policy,
    /// Affinity (None: all CPUs).
    pub cpus: Option<CpuMask>,
    /// Private working set, KB.
    pub ws_kb: u32,
    /// The run ends when every finish task has exited.
    pub finish: bool,
    code: Vec<Instr>,
    timers: usize,
}

/// A parsed workload file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileWorkload {
    /// Name (file `name`, or "workload").
    pub name: String,
    /// Throughput column name.
    pub metric: String,
    /// Simulated run time.
    pub duration_ns: Option<u64>,
    /// Progress before this is not counted.
    pub warmup_ns: u64,
    /// Task definitions.
    pub tasks: Vec<TaskDef>,
    /// Named conditions.
    pub conds: Vec<String>,
}

/// Parses a workload file (TOML, or rt-app JSON when it starts with `{`).
/// Never panics.
pub fn parse_workload(text: &str) -> Result<FileWorkload, WorkloadError> {
    if bracket_depth(text) > 64 {
        return err("", "nesting deeper than 64 levels");
    }
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let v: V =
            serde_json::from_str(text).map_err(|e| WorkloadError { path: String::new(), msg: format!("JSON: {e}") })?;
        RtApp::parse(&v)
    } else {
        let v: V = toml::from_str(text)
            .map_err(|e| WorkloadError { path: String::new(), msg: format!("TOML: {}", e.to_string().trim()) })?;
        TomlFile::parse(&v)
    }
}

// ----- shared helpers ---------------------------------------------------------------

fn obj<'a>(v: &'a V, path: &str) -> Result<&'a [(String, V)], WorkloadError> {
    match v {
        V::Obj(o) => Ok(o),
        other => err(path, format!("expected a table, found {}", other.kind())),
    }
}

fn as_str<'a>(v: &'a V, path: &str) -> Result<&'a str, WorkloadError> {
    match v {
        V::Str(s) => Ok(s),
        other => err(path, format!("expected a string, found {}", other.kind())),
    }
}

fn as_int(v: &V, path: &str) -> Result<i64, WorkloadError> {
    match v {
        V::Int(i) => Ok(*i),
        V::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => Ok(*f as i64),
        other => err(path, format!("expected an integer, found {}", other.kind())),
    }
}

fn as_bool(v: &V, path: &str) -> Result<bool, WorkloadError> {
    match v {
        V::Bool(b) => Ok(*b),
        other => err(path, format!("expected true or false, found {}", other.kind())),
    }
}

fn ranged(v: &V, path: &str, lo: i64, hi: i64) -> Result<i64, WorkloadError> {
    let i = as_int(v, path)?;
    if (lo..=hi).contains(&i) { Ok(i) } else { err(path, format!("{i} is out of range {lo}..={hi}")) }
}

/// A duration: a string with a unit, or a number in `bare_unit_ns`.
fn duration(v: &V, path: &str, bare_unit_ns: f64) -> Result<u64, WorkloadError> {
    let r = match v {
        V::Str(s) if bare_unit_ns > 0.0 => parse_duration_with(s, bare_unit_ns),
        V::Str(s) => parse_duration(s),
        V::Int(_) | V::Float(_) if bare_unit_ns > 0.0 => {
            let x = match v {
                V::Int(i) => *i as f64,
                V::Float(f) => *f,
                _ => 0.0,
            };
            parse_duration_with(&format!("{x}"), bare_unit_ns)
        }
        other => return err(path, format!("expected a duration such as \"20us\", found {}", other.kind())),
    };
    r.map_err(|e| WorkloadError { path: path.to_string(), msg: e.to_string() })
}

fn policy(v: &V, path: &str) -> Result<Policy, WorkloadError> {
    let s = as_str(v, path)?;
    Policy::by_name(s).ok_or_else(|| WorkloadError {
        path: path.into(),
        msg: format!("unknown policy {s:?} (known: normal, batch, idle; SCHED_OTHER, SCHED_BATCH, SCHED_IDLE)"),
    })
}

fn cpus(v: &V, path: &str) -> Result<CpuMask, WorkloadError> {
    let mask = match v {
        V::Str(s) => CpuMask::parse_list(s).map_err(|e| WorkloadError { path: path.into(), msg: e.to_string() })?,
        V::Arr(a) => {
            let mut m = CpuMask::empty();
            for (i, x) in a.iter().enumerate() {
                m.set(ranged(x, &format!("{path}[{i}]"), 0, cfs_topology::MAX_CPUS as i64 - 1)? as usize);
            }
            m
        }
        V::Int(i) => CpuMask::single(ranged(&V::Int(*i), path, 0, cfs_topology::MAX_CPUS as i64 - 1)? as usize),
        other => return err(path, format!("expected a CPU list such as \"0-3\", found {}", other.kind())),
    };
    if mask.is_empty() { err(path, "empty CPU list") } else { Ok(mask) }
}

/// Checks every key of a table is known.
fn known_keys(o: &[(String, V)], path: &str, known: &[&str]) -> Result<(), WorkloadError> {
    for (k, _) in o {
        if !known.contains(&k.as_str()) {
            return err(path, format!("unknown key {k:?} (known: {})", known.join(", ")));
        }
    }
    Ok(())
}

fn get<'a>(o: &'a [(String, V)], k: &str) -> Option<&'a V> {
    o.iter().find(|(key, _)| key == k).map(|(_, v)| v)
}

/// Collects names (task definitions, conditions) to resolve references
/// after all definitions are read.
#[derive(Debug, Default)]
struct Names {
    conds: Vec<String>,
    timers: Vec<String>,
}

impl Names {
    fn cond(&mut self, name: &str) -> usize {
        match self.conds.iter().position(|c| c == name) {
            Some(i) => i,
            None => {
                self.conds.push(name.to_string());
                self.conds.len() - 1
            }
        }
    }
}

/// Op text with unresolved task names.
#[derive(Clone, Debug, PartialEq)]
enum RawTarget {
    Name(String, Option<u32>),
    All(String),
    Parent,
    Reply,
}

#[derive(Clone, Debug, PartialEq)]
enum Raw {
    I(Instr),
    Send { to: RawTarget, via: Via, bytes: u32, path: String },
    Fork { name: String, path: String },
}

/// A task's raw ops and its top-level loop count.
type RawTask = (Vec<Raw>, Option<u64>);
/// A task definition's header and raw ops.
type ParsedTask = (TaskDef, RawTask);

fn parse_target(s: &str) -> RawTarget {
    match s.trim() {
        "parent" => RawTarget::Parent,
        t => match t.rsplit_once('#') {
            Some((n, i)) if i.parse::<u32>().is_ok() => RawTarget::Name(n.to_string(), i.parse().ok()),
            _ => RawTarget::Name(t.to_string(), None),
        },
    }
}

/// Resolves names and checks the program, producing a task's code.
fn resolve(raw: Vec<Raw>, defs: &[(String, u32)]) -> Result<Vec<Instr>, WorkloadError> {
    let find = |n: &str, p: &str| {
        defs.iter().position(|(d, _)| d == n).ok_or_else(|| WorkloadError {
            path: p.to_string(),
            msg: format!(
                "no task named {n:?} (tasks: {})",
                defs.iter().map(|(d, _)| d.as_str()).collect::<Vec<_>>().join(", ")
            ),
        })
    };
    let mut out = Vec::with_capacity(raw.len());
    for r in raw {
        out.push(match r {
            Raw::I(i) => i,
            Raw::Fork { name, path } => Instr::Fork(find(&name, &path)?),
            Raw::Send { to, via, bytes, path } => {
                let to = match to {
                    RawTarget::Parent => Target::Parent,
                    RawTarget::Reply => Target::Reply,
                    RawTarget::All(n) => Target::All(find(&n, &path)?),
                    RawTarget::Name(n, inst) => {
                        let def = find(&n, &path)?;
                        let count = defs[def].1;
                        if let Some(i) = inst.filter(|&i| i >= count) {
                            return err(&path, format!("task {n:?} has {count} instance(s), no #{i}"));
                        }
                        if count == 0 {
                            return err(&path, format!("task {n:?} has no instances started at t=0 to send to"));
                        }
                        Target::Task { def, instance: inst }
                    }
                };
                Instr::Send { to, via, bytes }
            }
        });
    }
    Ok(out)
}

/// Wraps a task body in its top-level loop, adding an implicit progress
/// count per iteration when the file has none.
fn wrap_loop(mut body: Vec<Raw>, count: Option<u64>, implicit_progress: bool) -> Vec<Raw> {
    if implicit_progress {
        body.push(Raw::I(Instr::Progress(1)));
    }
    let mut out = Vec::with_capacity(body.len() + 2);
    out.push(Raw::I(Instr::LoopBegin { count, end: 0 }));
    out.extend(body);
    out.push(Raw::I(Instr::LoopEnd { begin: 0 }));
    fix_loops(&mut out);
    out
}

/// Sets the jump targets of every LoopBegin/LoopEnd pair (they nest).
fn fix_loops(code: &mut [Raw]) {
    let mut stack = Vec::new();
    for i in 0..code.len() {
        match code[i] {
            Raw::I(Instr::LoopBegin { .. }) => stack.push(i),
            Raw::I(Instr::LoopEnd { .. }) => {
                if let Some(b) = stack.pop() {
                    if let Raw::I(Instr::LoopBegin { end, .. }) = &mut code[b] {
                        *end = i;
                    }
                    code[i] = Raw::I(Instr::LoopEnd { begin: b });
                }
            }
            _ => {}
        }
    }
}

fn has_progress(raw: &[Raw]) -> bool {
    raw.iter().any(|r| matches!(r, Raw::I(Instr::Progress(_))))
}

/// `loop = -1` (forever) or a count.
fn loop_count(v: &V, path: &str) -> Result<Option<u64>, WorkloadError> {
    let n = ranged(v, path, -1, i64::MAX)?;
    Ok(if n < 0 { None } else { Some(n as u64) })
}

/// A run-time distribution: a duration, or `{ mean, dist, cv, min, max }`.
fn run_dist(v: &V, path: &str, bare_unit_ns: f64) -> Result<Dist, WorkloadError> {
    let V::Obj(o) = v else { return Ok(Dist::Fixed(duration(v, path, bare_unit_ns)?)) };
    known_keys(o, path, &["mean", "dist", "cv", "min", "max"])?;
    let dur = |k: &str| get(o, k).map(|x| duration(x, &format!("{path}.{k}"), bare_unit_ns)).transpose();
    let kind = get(o, "dist").map(|d| as_str(d, &format!("{path}.dist"))).transpose()?.unwrap_or("fixed");
    let mean = dur("mean")?;
    let need_mean =
        || mean.ok_or_else(|| WorkloadError { path: path.into(), msg: format!("dist {kind:?} needs `mean`") });
    Ok(match kind {
        "fixed" => Dist::Fixed(need_mean()?),
        "exp" => Dist::Exp { mean: need_mean()? },
        "normal" => {
            let cv = match get(o, "cv") {
                Some(V::Float(f)) if (0.0..=10.0).contains(f) => *f,
                Some(V::Int(i)) if (0..=10).contains(i) => *i as f64,
                Some(other) => {
                    return err(&format!("{path}.cv"), format!("expected a number in 0..=10, found {}", other.kind()));
                }
                None => 0.1,
            };
            Dist::normal_cv(need_mean()? as f64, cv)
        }
        "uniform" => {
            let (lo, hi) = (dur("min")?, dur("max")?);
            match (lo, hi) {
                (Some(lo), Some(hi)) if lo <= hi => Dist::Uniform { lo, hi },
                _ => return err(path, "dist \"uniform\" needs min <= max"),
            }
        }
        other => {
            return err(
                &format!("{path}.dist"),
                format!("unknown distribution {other:?} (known: fixed, exp, normal, uniform)"),
            );
        }
    })
}

// ----- TOML ---------------------------------------------------------------------------

struct TomlFile;

impl TomlFile {
    fn parse(v: &V) -> Result<FileWorkload, WorkloadError> {
        let top = obj(v, "")?;
        known_keys(top, "", &["name", "duration", "warmup", "metric", "task"])?;
        let name = get(top, "name").map(|x| as_str(x, "name")).transpose()?.unwrap_or("workload").to_string();
        let duration_ns = get(top, "duration").map(|x| duration(x, "duration", 0.0)).transpose()?;
        if duration_ns.is_some_and(|d| d > crate::workloads::MAX_SIM_NS) {
            let cap = crate::experiment::fmt_ns(crate::workloads::MAX_SIM_NS);
            return err("duration", format!("must be at most {cap}, the simulated-time cap of a run"));
        }
        let warmup_ns = get(top, "warmup").map(|x| duration(x, "warmup", 0.0)).transpose()?.unwrap_or(0);
        let Some(V::Arr(task_vals)) = get(top, "task") else {
            return err("", "no [[task]] tables");
        };
        if task_vals.is_empty() || task_vals.len() > MAX_TASK_DEFS {
            return err("task", format!("need 1..={MAX_TASK_DEFS} tasks"));
        }
        let mut names = Names::default();
        let mut heads = Vec::new();
        let mut raws = Vec::new();
        for (i, t) in task_vals.iter().enumerate() {
            let path = format!("task[{i}]");
            let (head, raw) = Self::task(t, &path, &mut names)?;
            if heads.iter().any(|h: &TaskDef| h.name == head.name) {
                return err(&path, format!("duplicate task name {:?}", head.name));
            }
            heads.push(head);
            raws.push(raw);
        }
        let any_progress = raws.iter().any(|(r, _)| has_progress(r));
        let metric = match get(top, "metric") {
            Some(m) => as_str(m, "metric")?.to_string(),
            None if any_progress => "units_s".into(),
            None => "loops_s".into(),
        };
        finish_defs(name, metric, duration_ns, warmup_ns, heads, raws, names, any_progress)
    }

    /// One `[[task]]`: its header and raw ops with the loop count.
    fn task(v: &V, path: &str, names: &mut Names) -> Result<ParsedTask, WorkloadError> {
        let o = obj(v, path)?;
        known_keys(o, path, &["name", "instances", "nice", "policy", "cpus", "ws_kb", "loop", "finish", "ops"])?;
        let name = as_str(
            get(o, "name").ok_or_else(|| WorkloadError { path: path.into(), msg: "missing `name`".into() })?,
            &format!("{path}.name"),
        )?;
        let head = TaskDef {
            name: name.to_string(),
            instances: get(o, "instances")
                .map(|x| ranged(x, &format!("{path}.instances"), 0, MAX_INSTANCES as i64))
                .transpose()?
                .unwrap_or(1) as u32,
            nice: get(o, "nice").map(|x| ranged(x, &format!("{path}.nice"), -20, 19)).transpose()?.unwrap_or(0) as i32,
            policy: get(o, "policy")
                .map(|x| policy(x, &format!("{path}.policy")))
                .transpose()?
                .unwrap_or(Policy::Normal),
            cpus: get(o, "cpus").map(|x| cpus(x, &format!("{path}.cpus"))).transpose()?,
            ws_kb: get(o, "ws_kb").map(|x| ranged(x, &format!("{path}.ws_kb"), 0, 1 << 20)).transpose()?.unwrap_or(64)
                as u32,
            finish: get(o, "finish").map(|x| as_bool(x, &format!("{path}.finish"))).transpose()?.unwrap_or(false),
            code: Vec::new(),
            timers: 0,
        };
        let count = get(o, "loop").map(|x| loop_count(x, &format!("{path}.loop"))).transpose()?.flatten();
        let count = if get(o, "loop").is_some() { count } else { None };
        let ops = get(o, "ops").ok_or_else(|| WorkloadError { path: path.into(), msg: "missing `ops`".into() })?;
        let mut raw = Vec::new();
        Self::ops(ops, &format!("{path}.ops"), names, &mut raw, 0)?;
        Ok((head, (raw, count)))
    }

    fn ops(v: &V, path: &str, names: &mut Names, out: &mut Vec<Raw>, depth: usize) -> Result<(), WorkloadError> {
        if depth > MAX_DEPTH {
            return err(path, format!("loops nested deeper than {MAX_DEPTH}"));
        }
        let V::Arr(list) = v else { return err(path, format!("expected an array of ops, found {}", v.kind())) };
        for (i, op) in list.iter().enumerate() {
            if out.len() > MAX_OPS {
                return err(path, format!("more than {MAX_OPS} ops"));
            }
            Self::op(op, &format!("{path}[{i}]"), names, out, depth)?;
        }
        Ok(())
    }

    fn op(v: &V, path: &str, names: &mut Names, out: &mut Vec<Raw>, depth: usize) -> Result<(), WorkloadError> {
        const OPS: [&str; 19] = [
            "run",
            "sleep",
            "timer",
            "send",
            "reply",
            "broadcast",
            "wait",
            "cond_wait",
            "signal",
            "broad",
            "fork",
            "exit",
            "yield",
            "start_measuring",
            "progress",
            "nice",
            "policy",
            "affinity",
            "loop",
        ];
        let single;
        let o: &[(String, V)] = match v {
            V::Str(s) => {
                single = [(s.clone(), V::Bool(true))];
                &single
            }
            _ => obj(v, path)?,
        };
        let Some((key, val)) = o.iter().find(|(k, _)| OPS.contains(&k.as_str())) else {
            let keys: Vec<&str> = o.iter().map(|(k, _)| k.as_str()).collect();
            return err(path, format!("no op in {keys:?} (ops: {})", OPS.join(", ")));
        };
        let kp = format!("{path}.{key}");
        let allowed: &[&str] = match key.as_str() {
            "send" | "broadcast" | "reply" => &["send", "broadcast", "reply", "sync", "bytes", "stream"],
            k => &[k][..],
        };
        let allowed: Vec<&str> = allowed.iter().copied().filter(|k| *k == key || !OPS.contains(k)).collect();
        known_keys(o, path, &allowed)?;
        let sync = get(o, "sync").map(|x| as_bool(x, &format!("{path}.sync"))).transpose()?.unwrap_or(true);
        let bytes =
            get(o, "bytes").map(|x| ranged(x, &format!("{path}.bytes"), 0, 1 << 30)).transpose()?.unwrap_or(64) as u32;
        let via = match get(o, "stream") {
            None => Via::Message { sync },
            Some(s) => {
                let sp = format!("{path}.stream");
                if !sync {
                    return err(
                        &sp,
                        "a socket or pipe write always wakes its reader with the sync hint (drop `sync = false`)",
                    );
                }
                match s {
                    V::Str(x) if x == "pair" => Via::Pair,
                    V::Str(x) if x == "shared" => Via::Shared,
                    V::Str(x) if x == "pipe" => Via::Pipe,
                    _ => return err(&sp, "expected \"pair\", \"shared\" or \"pipe\""),
                }
            }
        };
        let instr = match key.as_str() {
            "run" => Instr::Run(run_dist(val, &kp, 0.0)?),
            "sleep" => Instr::Sleep(duration(val, &kp, 0.0)?),
            "timer" => {
                let period = match val {
                    V::Obj(t) => {
                        known_keys(t, &kp, &["period", "ref"])?;
                        let p = get(t, "period")
                            .ok_or_else(|| WorkloadError { path: kp.clone(), msg: "missing `period`".into() })?;
                        duration(p, &format!("{kp}.period"), 0.0)?
                    }
                    other => duration(other, &kp, 0.0)?,
                };
                if period == 0 {
                    return err(&kp, "timer period must be positive");
                }
                names.timers.push(kp.clone());
                Instr::Timer { slot: usize::MAX, period }
            }
            "send" => {
                out.push(Raw::Send { to: parse_target(as_str(val, &kp)?), via, bytes, path: kp });
                return Ok(());
            }
            "broadcast" => {
                out.push(Raw::Send { to: RawTarget::All(as_str(val, &kp)?.to_string()), via, bytes, path: kp });
                return Ok(());
            }
            "reply" => {
                as_bool(val, &kp)?;
                out.push(Raw::Send { to: RawTarget::Reply, via, bytes, path: kp });
                return Ok(());
            }
            "wait" => match val {
                V::Bool(true) => Instr::Wait { all: false },
                V::Str(s) if s == "one" => Instr::Wait { all: false },
                V::Str(s) if s == "all" => Instr::Wait { all: true },
                _ => return err(&kp, "expected \"one\" or \"all\""),
            },
            "cond_wait" => Instr::CondWait(names.cond(as_str(val, &kp)?)),
            "signal" => Instr::CondSignal { cond: names.cond(as_str(val, &kp)?), all: false },
            "broad" => Instr::CondSignal { cond: names.cond(as_str(val, &kp)?), all: true },
            "fork" => {
                out.push(Raw::Fork { name: as_str(val, &kp)?.to_string(), path: kp });
                return Ok(());
            }
            "exit" | "yield" | "start_measuring" => {
                if !as_bool(val, &kp)? {
                    return err(&kp, "only `true` makes sense here");
                }
                match key.as_str() {
                    "exit" => Instr::Exit,
                    "yield" => Instr::Yield,
                    _ => Instr::StartMeasuring,
                }
            }
            "progress" => Instr::Progress(ranged(val, &kp, 0, i64::MAX)? as u64),
            "nice" => Instr::Nice(ranged(val, &kp, -20, 19)? as i32),
            "policy" => Instr::Policy(policy(val, &kp)?),
            "affinity" => Instr::Affinity(cpus(val, &kp)?),
            _ => {
                // "loop"
                let lo = obj(val, &kp)?;
                known_keys(lo, &kp, &["count", "ops"])?;
                let count = get(lo, "count").map(|x| loop_count(x, &format!("{kp}.count"))).transpose()?.flatten();
                let count = if get(lo, "count").is_some() { count } else { None };
                let body =
                    get(lo, "ops").ok_or_else(|| WorkloadError { path: kp.clone(), msg: "missing `ops`".into() })?;
                out.push(Raw::I(Instr::LoopBegin { count, end: 0 }));
                Self::ops(body, &format!("{kp}.ops"), names, out, depth + 1)?;
                out.push(Raw::I(Instr::LoopEnd { begin: 0 }));
                return Ok(());
            }
        };
        out.push(Raw::I(instr));
        Ok(())
    }
}

/// Resolves every task's names, numbers timers, checks finish/duration.
#[allow(clippy::too_many_arguments)]
fn finish_defs(
    name: String,
    metric: String,
    duration_ns: Option<u64>,
    warmup_ns: u64,
    mut heads: Vec<TaskDef>,
    raws: Vec<RawTask>,
    names: Names,
    any_progress: bool,
) -> Result<FileWorkload, WorkloadError> {
    let defs: Vec<(String, u32)> = heads.iter().map(|h| (h.name.clone(), h.instances)).collect();
    let total: u64 = defs.iter().map(|d| d.1 as u64).sum();
    if total > MAX_INSTANCES {
        return err("", format!("{total} tasks at start; at most {MAX_INSTANCES}"));
    }
    if total == 0 {
        return err("", "no task has instances at start");
    }
    for (head, (raw, count)) in heads.iter_mut().zip(raws) {
        let raw = wrap_loop(raw, count, !any_progress);
        let mut code = resolve(raw, &defs)?;
        // Number this task's timers.
        let mut slot = 0;
        for ins in &mut code {
            if let Instr::Timer { slot: s, .. } = ins {
                *s = slot;
                slot += 1;
            }
        }
        head.timers = slot;
        head.code = code;
    }
    let wl = FileWorkload { name, metric, duration_ns, warmup_ns, tasks: heads, conds: names.conds };
    if wl.duration_ns.is_none() && !wl.tasks.iter().any(|t| t.finish && t.instances > 0) {
        return err("", "give a `duration` or mark a task started at t=0 with finish = true");
    }
    Ok(wl)
}

// ----- rt-app JSON ------------------------------------------------------------------

struct RtApp;

/// rt-app's housekeeping keys in `global`: accepted and ignored.
const RTAPP_IGNORED_GLOBAL: [&str; 11] = [
    "calibration",
    "logdir",
    "log_basename",
    "lock_pages",
    "ftrace",
    "gnuplot",
    "pi_enabled",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
    "log_size",
];

/// rt-app event names (keys may carry a numeric suffix: run0, sleep1).
const RTAPP_EVENTS: [&str; 14] = [
    "run", "runtime", "sleep", "timer", "wait", "signal", "broad", "sync", "lock", "unlock", "fork", "suspend",
    "resume", "yield",
];

impl RtApp {
    fn parse(v: &V) -> Result<FileWorkload, WorkloadError> {
        let top = obj(v, "")?;
        known_keys(top, "", &["global", "tasks"])?;
        let mut duration_ns = None;
        let mut default_policy = Policy::Normal;
        if let Some(g) = get(top, "global") {
            let g = obj(g, "global")?;
            let mut known: Vec<&str> = vec!["duration", "default_policy"];
            known.extend(RTAPP_IGNORED_GLOBAL);
            known_keys(g, "global", &known)?;
            if let Some(d) = get(g, "duration") {
                // At most the simulated-time cap of a run (600 s).
                let cap_s = (crate::workloads::MAX_SIM_NS / 1_000_000_000) as i64;
                let s = ranged(d, "global.duration", -1, cap_s)?;
                duration_ns = (s > 0).then(|| s as u64 * 1_000_000_000);
            }
            if let Some(p) = get(g, "default_policy") {
                default_policy = policy(p, "global.default_policy")?;
            }
        }
        let tasks = obj(
            get(top, "tasks").ok_or_else(|| WorkloadError { path: String::new(), msg: "missing `tasks`".into() })?,
            "tasks",
        )?;
        if tasks.is_empty() || tasks.len() > MAX_TASK_DEFS {
            return err("tasks", format!("need 1..={MAX_TASK_DEFS} tasks"));
        }
        let mut names = Names::default();
        let mut heads = Vec::new();
        let mut raws = Vec::new();
        for (tname, tv) in tasks {
            let path = format!("tasks.{tname}");
            if heads.iter().any(|h: &TaskDef| &h.name == tname) {
                return err(&path, "duplicate task name");
            }
            let (head, raw) = Self::task(tname, tv, &path, default_policy, &mut names)?;
            heads.push(head);
            raws.push(raw);
        }
        let any_progress = false;
        let metric = "loops_s".to_string();
        let duration_ns = duration_ns.or(Some(1_000_000_000));
        finish_defs("rt-app".into(), metric, duration_ns, 0, heads, raws, names, any_progress)
    }

    fn task(
        name: &str,
        v: &V,
        path: &str,
        default_policy: Policy,
        names: &mut Names,
    ) -> Result<ParsedTask, WorkloadError> {
        let o = obj(v, path)?;
        let mut head = TaskDef {
            name: name.to_string(),
            instances: 1,
            nice: 0,
            policy: default_policy,
            cpus: None,
            ws_kb: 64,
            finish: false,
            code: Vec::new(),
            timers: 0,
        };
        let mut count = None;
        let mut raw = Vec::new();
        for (k, x) in o {
            let kp = format!("{path}.{k}");
            match k.as_str() {
                "instance" => head.instances = ranged(x, &kp, 0, MAX_INSTANCES as i64)? as u32,
                "loop" => count = loop_count(x, &kp)?,
                "policy" => head.policy = policy(x, &kp)?,
                "priority" => head.nice = ranged(x, &kp, -20, 19)? as i32,
                "cpus" => head.cpus = Some(cpus(x, &kp)?),
                "ws_kb" => head.ws_kb = ranged(x, &kp, 0, 1 << 20)? as u32,
                "delay" => raw.push(Raw::I(Instr::Sleep(duration(x, &kp, 1e3)?))),
                "phases" => Self::phases(x, &kp, names, &mut raw)?,
                _ => Self::event(k, x, &kp, names, &mut raw).map_err(|e| {
                    if e.msg.starts_with("unknown key") { WorkloadError { path: path.into(), msg: e.msg } } else { e }
                })?,
            }
        }
        Ok((head, (raw, count)))
    }

    fn phases(v: &V, path: &str, names: &mut Names, out: &mut Vec<Raw>) -> Result<(), WorkloadError> {
        for (pname, pv) in obj(v, path)? {
            let pp = format!("{path}.{pname}");
            let po = obj(pv, &pp)?;
            let count = match get(po, "loop") {
                Some(l) => loop_count(l, &format!("{pp}.loop"))?,
                None => Some(1),
            };
            out.push(Raw::I(Instr::LoopBegin { count, end: 0 }));
            for (k, x) in po {
                if k != "loop" {
                    Self::event(k, x, &format!("{pp}.{k}"), names, out)?;
                }
            }
            out.push(Raw::I(Instr::LoopEnd { begin: 0 }));
            if out.len() > MAX_OPS {
                return err(path, format!("more than {MAX_OPS} events"));
            }
        }
        fix_loops(out);
        Ok(())
    }

    fn event(key: &str, v: &V, path: &str, names: &mut Names, out: &mut Vec<Raw>) -> Result<(), WorkloadError> {
        let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
        if !RTAPP_EVENTS.contains(&base) {
            let mut known = vec!["instance", "loop", "policy", "priority", "cpus", "delay", "ws_kb", "phases"];
            known.extend(RTAPP_EVENTS);
            return err(
                path,
                format!("unknown key {key:?} (known: {}, each event optionally suffixed by digits)", known.join(", ")),
            );
        }
        let cond_ref = |v: &V| -> Result<String, WorkloadError> {
            match v {
                V::Str(s) => Ok(s.clone()),
                V::Obj(o) => {
                    known_keys(o, path, &["ref", "mutex"])?;
                    let r = get(o, "ref")
                        .ok_or_else(|| WorkloadError { path: path.into(), msg: "missing `ref`".into() })?;
                    Ok(as_str(r, &format!("{path}.ref"))?.to_string())
                }
                other => err(path, format!("expected a name or {{ref, mutex}}, found {}", other.kind())),
            }
        };
        let instr = match base {
            "run" | "runtime" => Instr::Run(Dist::Fixed(duration(v, path, 1e3)?)),
            "sleep" => Instr::Sleep(duration(v, path, 1e3)?),
            "timer" => {
                let t = obj(v, path)?;
                known_keys(t, path, &["ref", "period", "mode"])?;
                let p = get(t, "period")
                    .ok_or_else(|| WorkloadError { path: path.into(), msg: "missing `period`".into() })?;
                let period = duration(p, &format!("{path}.period"), 1e3)?;
                if period == 0 {
                    return err(path, "timer period must be positive");
                }
                Instr::Timer { slot: usize::MAX, period }
            }
            "wait" | "suspend" => match base {
                "wait" => Instr::CondWait(names.cond(&cond_ref(v)?)),
                _ => Instr::Wait { all: false },
            },
            "signal" => Instr::CondSignal { cond: names.cond(&cond_ref(v)?), all: false },
            "broad" => Instr::CondSignal { cond: names.cond(&cond_ref(v)?), all: true },
            "sync" => {
                let c = names.cond(&cond_ref(v)?);
                out.push(Raw::I(Instr::CondSignal { cond: c, all: false }));
                Instr::CondWait(c)
            }
            "lock" | "unlock" => {
                as_str(v, path)?;
                return Ok(());
            }
            "fork" => {
                out.push(Raw::Fork { name: as_str(v, path)?.to_string(), path: path.into() });
                return Ok(());
            }
            "resume" => {
                out.push(Raw::Send {
                    to: RawTarget::Name(as_str(v, path)?.to_string(), None),
                    via: Via::Message { sync: false },
                    bytes: 0,
                    path: path.into(),
                });
                return Ok(());
            }
            _ => Instr::Yield,
        };
        out.push(Raw::I(instr));
        Ok(())
    }
}

// ----- running a file workload --------------------------------------------------------

impl FileWorkload {
    /// The initial tasks (every instance of every definition, in order) and
    /// the finish set.
    pub fn instantiate(self: &Arc<Self>, nr_cpus: usize, opts: &WorkloadOpts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
        let mut ids: Vec<Vec<TaskRef>> = Vec::new();
        let mut next = 0usize;
        for d in &self.tasks {
            ids.push((next..next + d.instances as usize).collect());
            next += d.instances as usize;
        }
        let ids = Arc::new(ids);
        let mut tasks = Vec::new();
        let mut finish = Vec::new();
        for (di, d) in self.tasks.iter().enumerate() {
            for inst in 0..d.instances {
                let params = self.params(di, opts);
                if d.finish {
                    finish.push(tasks.len());
                }
                tasks.push(TaskSpec {
                    name: if d.instances > 1 { format!("{}#{inst}", d.name) } else { d.name.clone() },
                    program: Box::new(Script::new(self.clone(), ids.clone(), di, inst)),
                    params,
                    cpu: params.allowed.first().unwrap_or(0).min(nr_cpus.saturating_sub(1)),
                    ws_kb: d.ws_kb,
                });
            }
        }
        (tasks, finish)
    }

    fn params(&self, def: usize, opts: &WorkloadOpts) -> TaskParams {
        let d = &self.tasks[def];
        let mut p = TaskParams::normal().nice(d.nice).policy(opts.policies.all.unwrap_or(d.policy));
        if let Some(m) = d.cpus {
            p = p.allowed(m);
        }
        p
    }
}

/// Interprets a task definition's code.
struct Script {
    wl: Arc<FileWorkload>,
    ids: Arc<Vec<Vec<TaskRef>>>,
    def: usize,
    instance: u32,
    pc: usize,
    /// Iterations left of each open loop, innermost last (None = forever).
    loops: Vec<Option<u64>>,
    /// Next deadline of each timer.
    timers: Vec<Option<u64>>,
    last_from: Option<TaskRef>,
    /// Pending sends of a broadcast.
    fanout: Vec<Action>,
}

impl Script {
    fn new(wl: Arc<FileWorkload>, ids: Arc<Vec<Vec<TaskRef>>>, def: usize, instance: u32) -> Script {
        let timers = vec![None; wl.tasks[def].timers];
        Script { wl, ids, def, instance, pc: 0, loops: Vec::new(), timers, last_from: None, fanout: Vec::new() }
    }

    fn send_to(&mut self, to: Target, via: Via, bytes: u32, cx: &StepCx<'_>) -> Action {
        let tag = 0;
        let one = |t: TaskRef| match via {
            Via::Message { sync } => Action::Send { to: t, sync, bytes, tag },
            Via::Pair => Action::Write { to: t, stream: Stream::Pair, bytes, tag },
            // Named by the receiver, whose socket or pipe it is.
            Via::Shared => Action::Write { to: t, stream: Stream::Shared(t as u32), bytes, tag },
            Via::Pipe => Action::Write { to: t, stream: Stream::Pipe(t as u32), bytes, tag },
        };
        match to {
            Target::Parent => cx.parent.map_or(Action::Progress(0), one),
            Target::Reply => self.last_from.map_or(Action::Progress(0), one),
            Target::Task { def, instance } => {
                let list = &self.ids[def];
                if list.is_empty() {
                    return Action::Progress(0);
                }
                let i = instance.unwrap_or(self.instance) as usize % list.len();
                one(list[i])
            }
            // A message to every instance is one call that wakes them all
            // (a write on a socket they all poll, a semop that releases
            // every waiter); writes on their streams are one per instance.
            Target::All(def) => match via {
                Via::Message { sync } if !self.ids[def].is_empty() => {
                    Action::SendAll { to: self.ids[def].as_slice().into(), sync, bytes, tag }
                }
                _ => {
                    let list = self.ids[def].clone();
                    self.fanout = list.iter().rev().map(|&t| one(t)).collect();
                    self.fanout.pop().unwrap_or(Action::Progress(0))
                }
            },
        }
    }

    fn fork(&self, def: usize) -> Action {
        let d = &self.wl.tasks[def];
        let mut p = TaskParams::normal().nice(d.nice).policy(d.policy);
        if let Some(m) = d.cpus {
            p = p.allowed(m);
        }
        Action::Fork(Box::new(ForkSpec {
            name: d.name.clone(),
            program: Box::new(Script::new(self.wl.clone(), self.ids.clone(), def, 0)),
            params: Some(p),
            ws_kb: d.ws_kb,
        }))
    }
}

impl Program for Script {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        if let Some(m) = cx.received.last() {
            self.last_from = Some(m.from);
        }
        if let Some(a) = self.fanout.pop() {
            return a;
        }
        let code_len = self.wl.tasks[self.def].code.len();
        // Bounded: a file of empty loops yields a free action now and then.
        for _ in 0..10_000 {
            if self.pc >= code_len {
                return Action::Exit;
            }
            let ins = self.wl.tasks[self.def].code[self.pc].clone();
            self.pc += 1;
            match ins {
                Instr::LoopBegin { count: Some(0), end } => self.pc = end + 1,
                Instr::LoopBegin { count, .. } => self.loops.push(count),
                Instr::LoopEnd { begin } => match self.loops.last_mut() {
                    Some(None) => self.pc = begin + 1,
                    Some(Some(n)) if *n > 1 => {
                        *n -= 1;
                        self.pc = begin + 1;
                    }
                    _ => {
                        self.loops.pop();
                    }
                },
                Instr::Run(d) => return Action::RunDist(d),
                Instr::Sleep(ns) => return Action::Sleep { ns, interruptible: false },
                Instr::Timer { slot, period } => {
                    let next = self.timers[slot].unwrap_or(cx.now).max(cx.now.saturating_sub(period)) + period;
                    self.timers[slot] = Some(next);
                    return Action::Sleep { ns: next.saturating_sub(cx.now).max(1), interruptible: false };
                }
                Instr::Send { to, via, bytes } => return self.send_to(to, via, bytes, cx),
                Instr::Wait { all } => return Action::Wait { all },
                Instr::CondWait(c) => return Action::CondWait(c),
                Instr::CondSignal { cond, all } => return Action::CondSignal { cond, all },
                Instr::Fork(d) => return self.fork(d),
                Instr::Exit => return Action::Exit,
                Instr::Yield => return Action::Yield,
                Instr::StartMeasuring => return Action::StartMeasuring,
                Instr::Progress(n) => return Action::Progress(n),
                Instr::Nice(n) => return Action::SetNice(n),
                Instr::Policy(p) => return Action::SetPolicy(p),
                Instr::Affinity(m) => return Action::SetAffinity(m),
            }
        }
        Action::Progress(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PINGPONG: &str = r#"
name = "pingpong"
duration = "10ms"
[[task]]
name = "ping"
ops = [ { run = "20us" }, { send = "pong", sync = true }, { wait = "one" }, { progress = 1 } ]
[[task]]
name = "pong"
ops = [ { wait = "one" }, { run = "30us" }, { reply = true } ]
"#;

    #[test]
    fn toml_pingpong_parses() {
        let w = parse_workload(PINGPONG).unwrap();
        assert_eq!(w.tasks.len(), 2);
        assert_eq!(w.metric, "units_s");
        assert_eq!(w.duration_ns, Some(10_000_000));
    }

    #[test]
    fn unknown_keys_are_named() {
        let bad = PINGPONG.replace("name = \"ping\"", "name = \"ping\"\nbogus = 3");
        let e = parse_workload(&bad).unwrap_err();
        assert!(e.to_string().contains("\"bogus\""), "{e}");
        let bad = PINGPONG.replace("{ run = \"20us\" }", "{ run = \"20us\", speed = 2 }");
        let e = parse_workload(&bad).unwrap_err();
        assert!(e.to_string().contains("\"speed\"") && e.to_string().contains("task[0].ops[0]"), "{e}");
        let e =
            parse_workload(r#"{"global": {"duration": 1, "colour": "red"}, "tasks": {"a": {"run": 10}}}"#).unwrap_err();
        assert!(e.to_string().contains("\"colour\""), "{e}");
        let e = parse_workload(r#"{"tasks": {"a": {"run": 10, "flibble0": 3}}}"#).unwrap_err();
        assert!(e.to_string().contains("\"flibble0\"") && e.to_string().contains("tasks.a"), "{e}");
    }

    #[test]
    fn rtapp_subset_parses_in_event_order() {
        let j = r#"{
          "global": {"duration": 2, "calibration": "CPU0", "default_policy": "SCHED_OTHER"},
          "tasks": {
            "thread0": {"instance": 2, "loop": -1, "run": 1000, "sleep": 500, "cpus": [0, 1], "priority": 5},
            "thread1": {"run0": 200, "signal": "q", "run1": 100, "wait": {"ref": "q", "mutex": "m"},
                        "phases": {"p1": {"loop": 3, "timer": {"ref": "t", "period": 1000}}}}
          }
        }"#;
        let w = parse_workload(j).unwrap();
        assert_eq!(w.duration_ns, Some(2_000_000_000));
        assert_eq!(w.tasks[0].instances, 2);
        assert_eq!(w.tasks[0].nice, 5);
        let c = &w.tasks[1].code;
        // loop, run0, signal, run1, wait, phase loop, timer, phase end, progress, loop end
        assert!(matches!(c[1], Instr::Run(Dist::Fixed(200_000))));
        assert!(matches!(c[2], Instr::CondSignal { .. }));
        assert!(matches!(c[3], Instr::Run(Dist::Fixed(100_000))));
        assert!(matches!(c[4], Instr::CondWait(_)));
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "",
            "{",
            "}",
            "[[task]]",
            "[[task]]\nname=1",
            "{\"tasks\": 3}",
            "a = [[[[[[[[]]]]]]]]",
            "[[task]]\nname = \"x\"\nops = [ { loop = { count = 5, ops = [] } } ]",
            "[[task]]\nname = \"x\"\nops = [ { send = \"nobody\" } ]\nfinish = true",
            "[[task]]\nname = \"x\"\nops = [ { run = \"1e30s\" } ]",
            "[[task]]\nname = \"x\"\ninstances = 99999999999\nops = []",
            "[[task]]\nname = \"x\"\ncpus = \"9999999\"\nops = []",
            "{\"tasks\": {\"a\": {\"cpus\": [-1]}}}",
            "{\"tasks\": {\"a\": {\"run\": 1.5e300}}}",
        ] {
            let _ = parse_workload(text);
        }
        let deep = "[".repeat(100_000);
        assert!(parse_workload(&format!("a = {deep}")).is_err());
    }
}

#[cfg(test)]
mod test_files {
    //! Helpers the test modules below share.
    use super::*;

    /// A TOML file with a 1 s duration and these `[[task]]` bodies.
    pub(super) fn file(tasks: &[&str]) -> String {
        let mut s = String::from("duration = \"1s\"\n");
        for t in tasks {
            s += &format!("[[task]]\n{t}\n");
        }
        s
    }

    /// The one-line error a file gets.
    pub(super) fn error(text: &str) -> String {
        parse_workload(text).unwrap_err().to_string()
    }

    /// The code of one task of a file.
    pub(super) fn code(text: &str, task: usize) -> Vec<Instr> {
        parse_workload(text).unwrap().tasks[task].code.clone()
    }

    /// The first task's ops between the implicit loop's begin and its end
    /// (the implicit progress count included, when the file has none).
    pub(super) fn body(text: &str) -> Vec<Instr> {
        let code = code(text, 0);
        code[1..code.len() - 1].to_vec()
    }
}

#[cfg(test)]
mod value_tests {
    //! Pins for the value helpers: the kind a message names, integers
    //! given as floats, booleans, durations with and without units, policies,
    //! CPU lists at the limits, and the bracket-depth guard.
    use super::test_files::{body, error, file};
    use super::*;

    /// One TOML task `x` with `extra` header lines and `ops`.
    fn toml(extra: &str, ops: &str) -> String {
        file(&[&format!("name = \"x\"\n{extra}\nops = [ {ops} ]")])
    }

    fn task(text: &str) -> TaskDef {
        parse_workload(text).unwrap().tasks.remove(0)
    }

    #[test]
    fn messages_name_what_was_found() {
        let cases = [
            (
                toml("", "{ run = \"1us\" }").replace("name = \"x\"", "name = 1"),
                "at task[0].name: expected a string, found an integer",
            ),
            (toml("finish = \"yes\"", "\"exit\""), "at task[0].finish: expected true or false, found a string"),
            (toml("nice = 1.5", "\"exit\""), "at task[0].nice: expected an integer, found a number"),
            (toml("cpus = true", "\"exit\""), "at task[0].cpus: expected a CPU list such as \"0-3\", found a boolean"),
            (toml("", "{ run = [1] }"), "at task[0].ops[0].run: expected a duration such as \"20us\", found an array"),
            (
                toml("", "{ run = { mean = { a = 1 } } }"),
                "at task[0].ops[0].run.mean: expected a duration such as \"20us\", found a table",
            ),
            (toml("", "3"), "at task[0].ops[0]: expected a table, found an integer"),
            (
                "duration = \"1s\"\n[[task]]\nname = \"x\"\nops = 3\n".to_string(),
                "at task[0].ops: expected an array of ops, found an integer",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(error(&text), want);
        }
        assert_eq!(
            error(r#"{"tasks": {"a": {"run": null}}}"#),
            "at tasks.a.run: expected a duration such as \"20us\", found null"
        );
    }

    /// JSON numbers with no fraction are integers (rt-app writes `2.0`);
    /// beyond 9e15 a float no longer holds every integer, so it is refused.
    #[test]
    fn whole_floats_are_integers_below_9e15() {
        let w = parse_workload(r#"{"tasks": {"a": {"instance": 2.0, "run": 10}}}"#).unwrap();
        assert_eq!(w.tasks[0].instances, 2);
        for bad in ["2.5", "9e15", "-9e15", "1e16"] {
            let text = format!(r#"{{"tasks": {{"a": {{"instance": {bad}, "run": 10}}}}}}"#);
            assert_eq!(error(&text), "at tasks.a.instance: expected an integer, found a number", "{bad}");
        }
        let text = r#"{"tasks": {"a": {"instance": 8999999999999998.0, "run": 10}}}"#;
        assert_eq!(error(text), "at tasks.a.instance: 8999999999999998 is out of range 0..=4096");
    }

    #[test]
    fn booleans_are_read_as_written() {
        assert!(task(&toml("finish = true", "\"exit\"")).finish);
        assert!(!task(&toml("finish = false", "\"exit\"")).finish);
        let text = "duration = \"1s\"\n[[task]]\nname = \"x\"\nops = [ { send = \"x\", sync = false, bytes = 9 }, { send = \"x\" } ]\n";
        let send = |sync, bytes| Instr::Send {
            to: Target::Task { def: 0, instance: None },
            via: Via::Message { sync },
            bytes,
        };
        assert_eq!(body(text), [send(false, 9), send(true, 64), Instr::Progress(1)]);
    }

    /// TOML durations carry a unit; rt-app's bare numbers are µs, integer
    /// or not, and its strings may carry a unit too.
    #[test]
    fn durations_with_and_without_units() {
        assert_eq!(
            body(&toml("", "{ sleep = \"2ms\" }, \"exit\"")),
            [Instr::Sleep(2_000_000), Instr::Exit, Instr::Progress(1)]
        );
        assert_eq!(
            error(&toml("", "{ sleep = 20 }")),
            "at task[0].ops[0].sleep: expected a duration such as \"20us\", found an integer"
        );
        assert_eq!(
            error(&toml("", "{ sleep = 2.5 }")),
            "at task[0].ops[0].sleep: expected a duration such as \"20us\", found a number"
        );
        // A string without a unit is µs in rt-app, and no duration in TOML.
        assert!(error(&toml("", "{ sleep = \"1000\" }")).contains("bad duration \"1000\""));
        let w = parse_workload(r#"{"tasks": {"a": {"run": "1000"}}}"#).unwrap();
        assert_eq!(w.tasks[0].code[1], Instr::Run(Dist::Fixed(1_000_000)));
        let w = parse_workload(r#"{"tasks": {"a": {"run": 1000, "sleep": 1.5, "run1": "2ms", "delay": 3}}}"#).unwrap();
        let code = &w.tasks[0].code;
        assert_eq!(
            code[1..5],
            [
                Instr::Run(Dist::Fixed(1_000_000)),
                Instr::Sleep(1_500),
                Instr::Run(Dist::Fixed(2_000_000)),
                Instr::Sleep(3_000)
            ]
        );
    }

    #[test]
    fn policies_by_name() {
        assert_eq!(task(&toml("policy = \"batch\"", "\"exit\"")).policy, Policy::Batch);
        assert_eq!(task(&toml("policy = \"SCHED_IDLE\"", "\"exit\"")).policy, Policy::Idle);
        assert_eq!(task(&toml("", "\"exit\"")).policy, Policy::Normal);
        assert!(
            error(&toml("policy = \"fifo\"", "\"exit\"")).starts_with("at task[0].policy: unknown policy \"fifo\"")
        );
    }

    /// A CPU list: a list string, an array of CPU numbers or one number,
    /// each below the 1024-CPU limit.
    #[test]
    fn cpu_lists_in_three_forms_up_to_the_limit() {
        let mask = |extra: &str| task(&toml(extra, "\"exit\"")).cpus.unwrap();
        assert_eq!(mask("cpus = \"0-2\""), CpuMask::parse_list("0-2").unwrap());
        assert_eq!(mask("cpus = [1, 3]"), CpuMask::parse_list("1,3").unwrap());
        assert_eq!(mask("cpus = 1023"), CpuMask::single(1023));
        assert_eq!(mask("cpus = [1023]"), CpuMask::single(1023));
        assert_eq!(error(&toml("cpus = 1024", "\"exit\"")), "at task[0].cpus: 1024 is out of range 0..=1023");
        assert_eq!(error(&toml("cpus = [0, 1024]", "\"exit\"")), "at task[0].cpus[1]: 1024 is out of range 0..=1023");
        assert_eq!(error(&toml("cpus = []", "\"exit\"")), "at task[0].cpus: empty CPU list");
        assert_eq!(body(&toml("", "{ affinity = [2] }")), [Instr::Affinity(CpuMask::single(2)), Instr::Progress(1)]);
    }

    /// Files nested deeper than 64 brackets are refused before parsing;
    /// brackets side by side do not add up.
    #[test]
    fn bracket_depth_guard() {
        let nested = |n: usize| format!("a = {}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(bracket_depth(&nested(65)), 65);
        assert_eq!(error(&nested(65)), "nesting deeper than 64 levels");
        assert_ne!(error(&nested(64)), "nesting deeper than 64 levels");
        assert_eq!(bracket_depth("[]{}[{}]"), 2);
        let many = vec!["{ run = \"1us\" }"; 70].join(", ");
        assert_eq!(body(&toml("", &many)).len(), 71);
    }
}

#[cfg(test)]
mod structure_tests {
    //! Pins for how a file becomes task code: names and targets, loops and
    //! their jump indices, run-time distributions, the defaults, the limits,
    //! and the rt-app events.
    use super::test_files::{body, code, error, file};
    use super::*;

    #[test]
    fn targets_and_names() {
        assert_eq!(parse_target("parent"), RawTarget::Parent);
        assert_eq!(parse_target(" pong#3 "), RawTarget::Name("pong".into(), Some(3)));
        assert_eq!(parse_target("pong#x"), RawTarget::Name("pong#x".into(), None));
        assert_eq!(parse_target("a#b#2"), RawTarget::Name("a#b".into(), Some(2)));
        let mut n = Names::default();
        assert_eq!((n.cond("a"), n.cond("b"), n.cond("a"), n.cond("b")), (0, 1, 0, 1));
        assert_eq!(n.conds, ["a", "b"]);
        let text = file(&[
            "name = \"a\"\ninstances = 2\nops = [ { send = \"b#1\" }, { broadcast = \"a\", sync = false }, { send = \"parent\" }, { reply = true, bytes = 7 } ]",
            "name = \"b\"\ninstances = 2\nops = [ { signal = \"q\" }, { broad = \"r\" }, { cond_wait = \"q\" }, { fork = \"a\" } ]",
        ]);
        let w = parse_workload(&text).unwrap();
        let send = |to, sync, bytes| Instr::Send { to, via: Via::Message { sync }, bytes };
        assert_eq!(
            w.tasks[0].code[1..5],
            [
                send(Target::Task { def: 1, instance: Some(1) }, true, 64),
                send(Target::All(0), false, 64),
                send(Target::Parent, true, 64),
                send(Target::Reply, true, 7)
            ]
        );
        assert_eq!(
            w.tasks[1].code[1..5],
            [
                Instr::CondSignal { cond: 0, all: false },
                Instr::CondSignal { cond: 1, all: true },
                Instr::CondWait(0),
                Instr::Fork(0)
            ]
        );
        assert_eq!(w.conds, ["q", "r"]);
    }

    #[test]
    fn unresolvable_targets_are_errors() {
        let e = error(&file(&["name = \"a\"\nops = [ { send = \"zz\" } ]"]));
        assert_eq!(e, "at task[0].ops[0].send: no task named \"zz\" (tasks: a)");
        let e = error(&file(&["name = \"a\"\ninstances = 2\nops = [ { send = \"a#2\" } ]"]));
        assert_eq!(e, "at task[0].ops[0].send: task \"a\" has 2 instance(s), no #2");
        assert!(parse_workload(&file(&["name = \"a\"\ninstances = 2\nops = [ { send = \"a#1\" } ]"])).is_ok());
        let e = error(&file(&[
            "name = \"a\"\nops = [ { send = \"b\" } ]",
            "name = \"b\"\ninstances = 0\nops = [ \"exit\" ]",
        ]));
        assert_eq!(e, "at task[0].ops[0].send: task \"b\" has no instances started at t=0 to send to");
        let e = error(&file(&["name = \"a\"\nops = [ { fork = \"b\" } ]"]));
        assert_eq!(e, "at task[0].ops[0].fork: no task named \"b\" (tasks: a)");
    }

    /// `start_measuring`, bare or as `= true`, is the engine's
    /// StartMeasuring; `= false` is refused like `exit = false`.
    #[test]
    fn start_measuring_is_an_op() {
        let text = file(&["name = \"a\"\nops = [ \"start_measuring\", { start_measuring = true }, { progress = 2 } ]"]);
        assert_eq!(body(&text), [Instr::StartMeasuring, Instr::StartMeasuring, Instr::Progress(2)]);
        let bad = file(&["name = \"a\"\nops = [ { start_measuring = false } ]"]);
        assert_eq!(error(&bad), "at task[0].ops[0].start_measuring: only `true` makes sense here");
    }

    /// Loops nest; each LoopBegin holds the index of its LoopEnd and back.
    /// The task's own loop wraps everything, with one implicit progress per
    /// pass when no op counts progress.
    #[test]
    fn loops_nest_and_know_their_ends() {
        let text = file(&[
            "name = \"a\"\nloop = 3\nops = [ { loop = { count = 2, ops = [ { run = \"1us\" }, { loop = { ops = [ \"yield\" ] } } ] } }, \"exit\" ]",
        ]);
        let c = code(&text, 0);
        assert_eq!(
            c,
            [
                Instr::LoopBegin { count: Some(3), end: 9 },
                Instr::LoopBegin { count: Some(2), end: 6 },
                Instr::Run(Dist::Fixed(1_000)),
                Instr::LoopBegin { count: None, end: 5 },
                Instr::Yield,
                Instr::LoopEnd { begin: 3 },
                Instr::LoopEnd { begin: 1 },
                Instr::Exit,
                Instr::Progress(1),
                Instr::LoopEnd { begin: 0 },
            ]
        );
        // With a progress op anywhere in the file, none is added; loop = -1
        // is forever, loop = 0 never.
        let text = file(&[
            "name = \"a\"\nloop = -1\nops = [ { progress = 5 } ]",
            "name = \"b\"\nloop = 0\nops = [ \"yield\" ]",
        ]);
        assert_eq!(
            code(&text, 0),
            [Instr::LoopBegin { count: None, end: 2 }, Instr::Progress(5), Instr::LoopEnd { begin: 0 }]
        );
        assert_eq!(
            code(&text, 1),
            [Instr::LoopBegin { count: Some(0), end: 2 }, Instr::Yield, Instr::LoopEnd { begin: 0 }]
        );
        assert_eq!(parse_workload(&text).unwrap().metric, "units_s");
        assert_eq!(
            error(&file(&["name = \"a\"\nloop = -2\nops = [ \"yield\" ]"])),
            "at task[0].loop: -2 is out of range -1..=9223372036854775807"
        );
    }

    #[test]
    fn run_time_distributions() {
        let run = |spec: &str| -> Result<Dist, String> {
            let text = file(&[&format!("name = \"a\"\nops = [ {{ run = {spec} }} ]")]);
            match parse_workload(&text) {
                Ok(w) => match &w.tasks[0].code[1] {
                    Instr::Run(d) => Ok(*d),
                    other => panic!("{other:?}"),
                },
                Err(e) => Err(e.to_string()),
            }
        };
        assert_eq!(run("\"5us\""), Ok(Dist::Fixed(5_000)));
        assert_eq!(run("{ mean = \"5us\" }"), Ok(Dist::Fixed(5_000)));
        assert_eq!(run("{ mean = \"5us\", dist = \"exp\" }"), Ok(Dist::Exp { mean: 5_000 }));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\" }"), Ok(Dist::normal_cv(10_000.0, 0.1)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 0.5 }"), Ok(Dist::normal_cv(10_000.0, 0.5)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 10 }"), Ok(Dist::normal_cv(10_000.0, 10.0)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 10.0 }"), Ok(Dist::normal_cv(10_000.0, 10.0)));
        assert_eq!(run("{ mean = \"10us\", dist = \"normal\", cv = 0 }"), Ok(Dist::normal_cv(10_000.0, 0.0)));
        assert_eq!(
            run("{ mean = \"10us\", dist = \"normal\", cv = 11 }"),
            Err("at task[0].ops[0].run.cv: expected a number in 0..=10, found an integer".into())
        );
        assert_eq!(
            run("{ mean = \"10us\", dist = \"normal\", cv = -0.5 }"),
            Err("at task[0].ops[0].run.cv: expected a number in 0..=10, found a number".into())
        );
        assert_eq!(
            run("{ dist = \"uniform\", min = \"1us\", max = \"3us\" }"),
            Ok(Dist::Uniform { lo: 1_000, hi: 3_000 })
        );
        assert_eq!(
            run("{ dist = \"uniform\", min = \"2us\", max = \"2us\" }"),
            Ok(Dist::Uniform { lo: 2_000, hi: 2_000 })
        );
        assert_eq!(
            run("{ dist = \"uniform\", min = \"3us\", max = \"1us\" }"),
            Err("at task[0].ops[0].run: dist \"uniform\" needs min <= max".into())
        );
        assert_eq!(run("{ dist = \"exp\" }"), Err("at task[0].ops[0].run: dist \"exp\" needs `mean`".into()));
        assert_eq!(
            run("{ mean = \"1us\", dist = \"pareto\" }"),
            Err("at task[0].ops[0].run.dist: unknown distribution \"pareto\" (known: fixed, exp, normal, uniform)"
                .into())
        );
    }

    /// A task's defaults, the file's, and what a file must have.
    #[test]
    fn defaults_and_requirements() {
        let w = parse_workload(&file(&["name = \"a\"\nops = [ \"yield\" ]"])).unwrap();
        assert_eq!((w.name.as_str(), w.metric.as_str(), w.warmup_ns), ("workload", "loops_s", 0));
        let t = &w.tasks[0];
        assert_eq!((t.instances, t.nice, t.ws_kb, t.finish, t.cpus), (1, 0, 64, false, None));
        let w = parse_workload("name = \"n\"\nmetric = \"m_s\"\nwarmup = \"5ms\"\n[[task]]\nname = \"a\"\nfinish = true\nops = [ \"exit\" ]").unwrap();
        assert_eq!((w.name.as_str(), w.metric.as_str(), w.warmup_ns, w.duration_ns), ("n", "m_s", 5_000_000, None));
        assert_eq!(
            error("[[task]]\nname = \"a\"\nops = [ \"exit\" ]"),
            "give a `duration` or mark a task started at t=0 with finish = true"
        );
        assert_eq!(
            error(
                "[[task]]\nname = \"a\"\ninstances = 0\nfinish = true\nops = [ \"exit\" ]\n[[task]]\nname = \"b\"\nops = [ \"exit\" ]"
            ),
            "give a `duration` or mark a task started at t=0 with finish = true"
        );
        assert_eq!(error("duration = \"1s\""), "no [[task]] tables");
        assert_eq!(
            error(&file(&["name = \"a\"\nops = [ \"exit\" ]", "name = \"a\"\nops = [ \"exit\" ]"])),
            "at task[1]: duplicate task name \"a\""
        );
        assert_eq!(error(&file(&["ops = [ \"exit\" ]"])), "at task[0]: missing `name`");
        assert_eq!(error(&file(&["name = \"a\""])), "at task[0]: missing `ops`");
        assert_eq!(
            error(&file(&["name = \"a\"\ninstances = 0\nops = [ \"exit\" ]"])),
            "no task has instances at start"
        );
        // 4096 instances in all at most.
        assert!(parse_workload(&file(&["name = \"a\"\ninstances = 4096\nops = [ \"exit\" ]"])).is_ok());
        assert_eq!(
            error(&file(&["name = \"a\"\ninstances = 4096\nops = [ \"exit\" ]", "name = \"b\"\nops = [ \"exit\" ]"])),
            "4097 tasks at start; at most 4096"
        );
        // At most 256 task definitions.
        let many: Vec<String> =
            (0..257).map(|i| format!("name = \"t{i}\"\ninstances = 0\nops = [ \"exit\" ]")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(error(&file(&refs)), "at task: need 1..=256 tasks");
        let mut ok = file(&refs[..256]);
        ok = ok.replacen("instances = 0", "instances = 1", 1);
        assert!(parse_workload(&ok).is_ok());
    }

    #[test]
    fn op_forms_and_their_errors() {
        let body = |ops: &str| body(&file(&[&format!("name = \"a\"\nops = [ {ops} ]")]));
        assert_eq!(
            body(
                "{ wait = \"one\" }, { wait = \"all\" }, { wait = true }, \"wait\", \"yield\", { nice = -20 }, { policy = \"idle\" }, { progress = 0 }"
            ),
            [
                Instr::Wait { all: false },
                Instr::Wait { all: true },
                Instr::Wait { all: false },
                Instr::Wait { all: false },
                Instr::Yield,
                Instr::Nice(-20),
                Instr::Policy(Policy::Idle),
                Instr::Progress(0)
            ]
        );
        assert_eq!(
            body("{ timer = \"10ms\" }, { timer = { period = \"5ms\", ref = \"t\" } }"),
            [
                Instr::Timer { slot: 0, period: 10_000_000 },
                Instr::Timer { slot: 1, period: 5_000_000 },
                Instr::Progress(1)
            ]
        );
        let e = |ops: &str| error(&file(&[&format!("name = \"a\"\nops = [ {ops} ]")]));
        assert_eq!(e("{ wait = \"some\" }"), "at task[0].ops[0].wait: expected \"one\" or \"all\"");
        assert_eq!(e("{ exit = false }"), "at task[0].ops[0].exit: only `true` makes sense here");
        assert_eq!(e("{ yield = false }"), "at task[0].ops[0].yield: only `true` makes sense here");
        assert_eq!(e("{ timer = \"0s\" }"), "at task[0].ops[0].timer: timer period must be positive");
        assert_eq!(e("{ timer = { ref = \"t\" } }"), "at task[0].ops[0].timer: missing `period`");
        assert_eq!(e("{ nice = 20 }"), "at task[0].ops[0].nice: 20 is out of range -20..=19");
        assert_eq!(e("{ loop = { count = 2 } }"), "at task[0].ops[0].loop: missing `ops`");
        assert!(
            e("{ run = \"1us\", sleep = \"1us\" }")
                .starts_with("at task[0].ops[0]: unknown key \"sleep\" (known: run)")
        );
        // Two ops in one table: TOML hands the keys over sorted, so the
        // first op key is `reply`, and `send` is then the stray one.
        assert_eq!(
            e("{ send = \"a\", reply = true }"),
            "at task[0].ops[0]: unknown key \"send\" (known: reply, sync, bytes, stream)"
        );
        assert!(e("{ fly = 1 }").starts_with("at task[0].ops[0]: no op in [\"fly\"]"));
        // Each nested loop costs three brackets, so the 64-bracket guard
        // stops a file at 22 levels, before the op parser's own limit of 32
        // (kept for values that do not come from text).
        let nest = |n: usize| format!("{}\"yield\"{}", "{ loop = { ops = [ ".repeat(n), " ] } }".repeat(n));
        assert!(parse_workload(&file(&[&format!("name = \"a\"\nops = [ {} ]", nest(21))])).is_ok());
        assert_eq!(e(&nest(22)), "nesting deeper than 64 levels");
        let mut out = Vec::new();
        let ops = V::Arr(vec![V::Str("yield".into())]);
        assert!(TomlFile::ops(&ops, "p", &mut Names::default(), &mut out, 32).is_ok());
        let deep = TomlFile::ops(&ops, "p", &mut Names::default(), &mut out, 33).unwrap_err();
        assert_eq!(deep.to_string(), "at p: loops nested deeper than 32");
    }

    #[test]
    fn rt_app_globals_tasks_and_events() {
        let w = parse_workload(r#"{"global": {"duration": -1, "default_policy": "SCHED_BATCH", "logdir": "."}, "tasks": {"a": {"run": 1}}}"#).unwrap();
        assert_eq!(
            (w.duration_ns, w.tasks[0].policy, w.metric.as_str(), w.name.as_str()),
            (Some(1_000_000_000), Policy::Batch, "loops_s", "rt-app")
        );
        let w = parse_workload(r#"{"global": {"duration": 0}, "tasks": {"a": {"run": 1}}}"#).unwrap();
        assert_eq!(w.duration_ns, Some(1_000_000_000));
        let w = parse_workload(
            r#"{"global": {"duration": 3}, "tasks": {"a": {"run": 1, "policy": "SCHED_IDLE", "ws_kb": 8, "loop": 4}}}"#,
        )
        .unwrap();
        assert_eq!((w.duration_ns, w.tasks[0].policy, w.tasks[0].ws_kb), (Some(3_000_000_000), Policy::Idle, 8));
        assert_eq!(w.tasks[0].code[0], Instr::LoopBegin { count: Some(4), end: 3 });
        assert_eq!(error(r#"{"global": {}}"#), "missing `tasks`");
        assert_eq!(error(r#"{"tasks": {}}"#), "at tasks: need 1..=256 tasks");
        assert!(error(r#"{"tasks": {"a": {"jump": 1}}}"#).starts_with("at tasks.a: unknown key \"jump\""));
        // Events in document order, suffixes allowed; a phase loops once
        // unless told; sync is signal then wait; lock and unlock cost
        // nothing; resume is a plain message; suspend waits for one.
        let w = parse_workload(
            r#"{"tasks": {
                "a": {"sync3": "c", "lock": "m", "unlock": "m", "resume": "b", "suspend0": "x", "yield": "y", "fork": "b",
                      "phases": {"p": {"runtime": 7, "timer": {"ref": "t", "period": 100, "mode": "absolute"}},
                                 "q": {"loop": 2, "broad": {"ref": "c", "mutex": "m"}}}},
                "b": {"instance": 1, "wait": "c"}
            }}"#,
        )
        .unwrap();
        let c = &w.tasks[0].code;
        assert_eq!(
            c[1..],
            [
                Instr::CondSignal { cond: 0, all: false },
                Instr::CondWait(0),
                Instr::Send {
                    to: Target::Task { def: 1, instance: None },
                    via: Via::Message { sync: false },
                    bytes: 0
                },
                Instr::Wait { all: false },
                Instr::Yield,
                Instr::Fork(1),
                Instr::LoopBegin { count: Some(1), end: 10 },
                Instr::Run(Dist::Fixed(7_000)),
                Instr::Timer { slot: 0, period: 100_000 },
                Instr::LoopEnd { begin: 7 },
                Instr::LoopBegin { count: Some(2), end: 13 },
                Instr::CondSignal { cond: 0, all: true },
                Instr::LoopEnd { begin: 11 },
                Instr::Progress(1),
                Instr::LoopEnd { begin: 0 },
            ]
        );
        assert_eq!(w.tasks[0].timers, 1);
        assert_eq!(
            error(r#"{"tasks": {"a": {"timer": {"ref": "t", "period": 0}}}}"#),
            "at tasks.a.timer: timer period must be positive"
        );
        assert_eq!(error(r#"{"tasks": {"a": {"timer": {"ref": "t"}}}}"#), "at tasks.a.timer: missing `period`");
        assert_eq!(error(r#"{"tasks": {"a": {"wait": {"mutex": "m"}}}}"#), "at tasks.a.wait: missing `ref`");
        assert_eq!(
            error(r#"{"tasks": {"a": {"wait": 3}}}"#),
            "at tasks.a.wait: expected a name or {ref, mutex}, found an integer"
        );
        assert_eq!(error(r#"{"tasks": {"a": {"run": 1}, "a": {"run": 2}}}"#), "at tasks.a: duplicate task name");
    }
}

#[cfg(test)]
mod limit_tests {
    //! The size limits, at their edges.
    use super::test_files::error;
    use super::*;

    /// `n` JSON object members, comma-separated.
    fn members(n: usize, member: impl Fn(usize) -> String) -> String {
        (0..n).map(member).collect::<Vec<_>>().join(",")
    }

    /// A run's duration is at most the simulated-time cap, 600 s: a longer
    /// one could only end in the cap's error, after ten simulated minutes.
    #[test]
    fn a_duration_is_at_most_600_s() {
        let toml = |d: &str| format!("duration = \"{d}\"\n[[task]]\nname = \"a\"\nops = [ \"yield\" ]\n");
        assert_eq!(parse_workload(&toml("600s")).unwrap().duration_ns, Some(600_000_000_000));
        assert_eq!(error(&toml("600000001us")), "at duration: must be at most 600s, the simulated-time cap of a run");
        let json = |d: u32| format!(r#"{{"global": {{"duration": {d}}}, "tasks": {{"a": {{"run": 10}}}}}}"#);
        assert_eq!(parse_workload(&json(600)).unwrap().duration_ns, Some(600_000_000_000));
        assert!(error(&json(601)).starts_with("at global.duration:"), "{}", error(&json(601)));
    }

    /// A TOML task reads at most 100,000 ops before refusing more: the
    /// check runs before each op, so 100,001 pass and 100,002 do not.
    #[test]
    fn at_most_100_000_ops_a_task() {
        let file = |n: usize| {
            format!("duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ {} ]\n", vec!["\"yield\""; n].join(","))
        };
        assert!(parse_workload(&file(100_001)).is_ok());
        assert_eq!(error(&file(100_002)), "at task[0].ops: more than 100000 ops");
    }

    /// rt-app phases count toward the same limit, checked after each
    /// phase: a delay (1 op) and 33,333 one-event phases (3 ops each: the
    /// phase's loop begin, the event, its end) make exactly 100,000.
    #[test]
    fn rt_app_phases_count_toward_the_limit() {
        let file = |phases: usize| {
            let p = members(phases, |i| format!("\"p{i}\": {{\"yield\": \"y\"}}"));
            format!("{{\"tasks\": {{\"a\": {{\"delay\": 1, \"phases\": {{ {p} }}}}}}}}")
        };
        assert!(parse_workload(&file(33_333)).is_ok());
        assert_eq!(error(&file(33_334)), "at tasks.a.phases: more than 100000 events");
    }

    /// A loop inside ops read at depth 32 is read at depth 33.
    #[test]
    fn a_loop_body_is_one_level_deeper() {
        let looped = V::Arr(vec![V::Obj(vec![(
            "loop".into(),
            V::Obj(vec![("ops".into(), V::Arr(vec![V::Str("yield".into())]))]),
        )])]);
        let mut out = Vec::new();
        assert!(TomlFile::ops(&looped, "p", &mut Names::default(), &mut out, 31).is_ok());
        let e = TomlFile::ops(&looped, "p", &mut Names::default(), &mut out, 32).unwrap_err();
        assert_eq!(e.to_string(), "at p[0].loop.ops: loops nested deeper than 32");
    }

    /// rt-app takes 1..=256 task definitions.
    #[test]
    fn rt_app_takes_up_to_256_tasks() {
        let file = |n: usize| format!("{{\"tasks\": {{ {} }}}}", members(n, |i| format!("\"t{i}\": {{\"run\": 1}}")));
        assert!(parse_workload(&file(256)).is_ok());
        assert_eq!(error(&file(257)), "at tasks: need 1..=256 tasks");
    }
}

#[cfg(test)]
mod script_tests {
    //! Pins for running a file: the initial tasks and the interpreter.
    use super::*;
    use crate::program::Msg;
    use crate::workloads::Policies;
    use rand::SeedableRng;

    fn load(text: &str, nr_cpus: usize, opts: &WorkloadOpts) -> Vec<TaskSpec> {
        Arc::new(parse_workload(text).unwrap()).instantiate(nr_cpus, opts).0
    }

    /// Steps a program `n` times at `now`, delivering `received` to the
    /// first step, as task 0 forked by `parent`; the actions as text.
    fn run(p: &mut dyn Program, n: usize, now: u64, received: &[Msg], parent: Option<TaskRef>) -> Vec<String> {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        (0..n)
            .map(|k| {
                let got = if k == 0 { received } else { &[] };
                let mut cx = StepCx { now, me: 0, rng: &mut rng, received: got, blocked: true, forked: None, parent };
                format!("{:?}", p.step(&mut cx))
            })
            .collect()
    }

    /// Every instance of every definition, in order; instances are named
    /// `name#i` when there are several; the finish set lists the finish
    /// tasks' indices; a task starts on its first allowed CPU (or the last
    /// CPU of a smaller host); `--policy` overrides the file's policy.
    #[test]
    fn instances_names_cpus_and_finish() {
        let text = "[[task]]\nname = \"a\"\ninstances = 2\ncpus = \"2-3\"\nops = [ \"exit\" ]\n\
                    [[task]]\nname = \"b\"\nfinish = true\npolicy = \"batch\"\nops = [ \"exit\" ]\n\
                    [[task]]\nname = \"c\"\ninstances = 0\nops = [ \"exit\" ]\n\
                    [[task]]\nname = \"d\"\ncpus = \"9\"\nfinish = true\nnice = 3\nws_kb = 7\nops = [ \"exit\" ]\n";
        let w = Arc::new(parse_workload(text).unwrap());
        let (tasks, finish) = w.instantiate(4, &WorkloadOpts::default());
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a#0", "a#1", "b", "d"]);
        assert_eq!(finish, [2, 3]);
        let cpus: Vec<usize> = tasks.iter().map(|t| t.cpu).collect();
        assert_eq!(cpus, [2, 2, 0, 3]);
        assert_eq!((tasks[3].params.nice, tasks[3].ws_kb, tasks[3].params.allowed), (3, 7, CpuMask::single(9)));
        assert_eq!(tasks[2].params.policy, Policy::Batch);
        assert_eq!(tasks[0].params.policy, Policy::Normal);
        let opts = WorkloadOpts {
            policies: Policies { all: Some(Policy::Idle), ..Policies::default() },
            ..WorkloadOpts::default()
        };
        let (tasks, _) = w.instantiate(4, &opts);
        assert!(tasks.iter().all(|t| t.params.policy == Policy::Idle));
    }

    /// Loops repeat their count, the task's own loop included; a zero
    /// count skips its body; past the end the task exits.
    #[test]
    fn loops_run_their_count_then_the_task_exits() {
        let text = "duration = \"1s\"\n[[task]]\nname = \"a\"\nloop = 2\nops = [ { loop = { count = 0, ops = [ \"yield\" ] } }, { loop = { count = 3, ops = [ { progress = 1 } ] } }, { run = \"1us\" } ]";
        let mut t = load(text, 1, &WorkloadOpts::default()).remove(0);
        let got = run(t.program.as_mut(), 10, 0, &[], None);
        let (unit, ran) = ("Progress(1)", "RunDist(Fixed(1000))");
        assert_eq!(got, [unit, unit, unit, ran, unit, unit, unit, ran, "Exit", "Exit"]);
    }

    /// Going round a loop jumps past its LoopBegin, so the interpreter
    /// keeps one entry per open loop however many passes it makes.
    #[test]
    fn loops_do_not_pile_up_entries() {
        let text =
            "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { loop = { count = 1000, ops = [ \"yield\" ] } } ]";
        let wl = Arc::new(parse_workload(text).unwrap());
        let mut script = Script::new(wl, Arc::new(vec![vec![0]]), 0, 0);
        run(&mut script, 500, 0, &[], None);
        assert_eq!(script.loops, [None, Some(501)], "the task's own loop and the inner one");
        let text = "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { loop = { ops = [ \"yield\" ] } } ]";
        let wl = Arc::new(parse_workload(text).unwrap());
        let mut script = Script::new(wl, Arc::new(vec![vec![0]]), 0, 0);
        run(&mut script, 500, 0, &[], None);
        assert_eq!(script.loops, [None, None]);
    }

    /// A loop with nothing in it does not hang the interpreter: it hands
    /// back a free step after 10,000 instructions.
    #[test]
    fn an_empty_loop_yields_a_free_step() {
        let text = "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { progress = 1 }, { loop = { ops = [] } } ]";
        let mut t = load(text, 1, &WorkloadOpts::default()).remove(0);
        assert_eq!(run(t.program.as_mut(), 3, 0, &[], None), ["Progress(1)", "Progress(0)", "Progress(0)"]);
    }

    /// A periodic timer sleeps to the next period boundary counted from
    /// its first use. A task that falls more than a period behind drops
    /// the missed periods: its next deadline is now (no sleep to speak of),
    /// and the period counts on from there.
    #[test]
    fn timers_keep_their_period() {
        let text = "duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ { timer = \"10ms\" } ]";
        let mut t = load(text, 1, &WorkloadOpts::default()).remove(0);
        let p = t.program.as_mut();
        let sleep = |ns: u64| format!("Sleep {{ ns: {ns}, interruptible: false }}");
        // First use at 1 ms: the deadline is 11 ms. (Each pass also counts
        // its implicit progress unit.)
        assert_eq!(run(p, 2, 1_000_000, &[], None), [sleep(10_000_000), "Progress(1)".into()]);
        // Back at 12 ms: sleep to 21 ms.
        assert_eq!(run(p, 2, 12_000_000, &[], None)[0], sleep(9_000_000));
        // At 50 ms, 29 ms late: the deadline is max(21, 50 - 10) + 10 = 50.
        assert_eq!(run(p, 2, 50_000_000, &[], None)[0], sleep(1));
        // At 55 ms: the next boundary is 60 ms.
        assert_eq!(run(p, 1, 55_000_000, &[], None)[0], sleep(5_000_000));
    }

    /// Sends: instance i of a task talks to instance i of its peer (modulo
    /// the peer's count); `#k` picks one; `parent` and `reply` need someone
    /// to go to, or they are a free step; a broadcast goes to every
    /// instance in order, in one call; fork creates the named task with its
    /// settings.
    #[test]
    fn sends_replies_broadcasts_and_forks() {
        let text = "duration = \"1s\"\n\
            [[task]]\nname = \"a\"\ninstances = 3\nops = [ { send = \"b\", sync = false, bytes = 5 }, { send = \"b#0\" }, { send = \"parent\" }, { reply = true }, { wait = \"one\" }, { reply = true }, { broadcast = \"b\" }, { fork = \"c\" } ]\n\
            [[task]]\nname = \"b\"\ninstances = 2\nops = [ \"exit\" ]\n\
            [[task]]\nname = \"c\"\ninstances = 0\nnice = 4\ncpus = \"1\"\nws_kb = 9\nops = [ \"exit\" ]";
        // Instance a#2 (task ids: a = 0, 1, 2 and b = 3, 4), no parent.
        let mut tasks = load(text, 4, &WorkloadOpts::default());
        let p = tasks[2].program.as_mut();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut step = |received: &[Msg]| {
            let mut cx = StepCx { now: 0, me: 2, rng: &mut rng, received, blocked: true, forked: None, parent: None };
            p.step(&mut cx)
        };
        let msg = Msg { from: 7, cpu: 0, bytes: 1, tag: 0, stream: None };
        let mut got: Vec<String> = Vec::new();
        for received in [&[][..], &[], &[], &[], &[], &[msg], &[]] {
            got.push(format!("{:?}", step(received)));
        }
        assert_eq!(
            got,
            [
                "Send { to: 3, sync: false, bytes: 5, tag: 0 }", // b: instance 2 mod 2 = b#0
                "Send { to: 3, sync: true, bytes: 64, tag: 0 }", // b#0
                "Progress(0)",                                   // parent: none
                "Progress(0)",                                   // reply: nothing received yet
                "Wait { all: false }",
                "Send { to: 7, sync: true, bytes: 64, tag: 0 }", // reply to the message's sender
                "SendAll { to: [3, 4], sync: true, bytes: 64, tag: 0 }", // broadcast: b#0 and b#1, one call
            ]
        );
        match step(&[]) {
            Action::Fork(f) => {
                assert_eq!((f.name.as_str(), f.ws_kb), ("c", 9));
                let params = f.params.unwrap();
                assert_eq!((params.nice, params.allowed), (4, CpuMask::single(1)));
            }
            other => panic!("{other:?}"),
        }
        // With a parent, the third op goes to it.
        let mut again = load(text, 4, &WorkloadOpts::default());
        let got = run(again[2].program.as_mut(), 3, 0, &[], Some(9));
        assert_eq!(got[2], "Send { to: 9, sync: true, bytes: 64, tag: 0 }");
        // A broadcast to a task with no instance (yet) is a free step, not
        // a call that wakes nobody.
        let none = "duration = \"1s\"\n\
            [[task]]\nname = \"a\"\nops = [ { broadcast = \"c\" } ]\n\
            [[task]]\nname = \"c\"\ninstances = 0\nops = [ \"exit\" ]";
        let mut lone = load(none, 1, &WorkloadOpts::default());
        assert_eq!(run(lone[0].program.as_mut(), 1, 0, &[], None), ["Progress(0)"]);
    }

    /// `stream` makes a send a write: on the writer's own socket
    /// connection (`pair`), or on the receiver's one socket or pipe, named
    /// by the receiver's task id (`shared`, `pipe`), for a send, a reply
    /// and each target of a broadcast.
    #[test]
    fn stream_sends_are_socket_or_pipe_writes() {
        let text = "duration = \"1s\"\n\
            [[task]]\nname = \"a\"\nops = [ { send = \"b#1\", stream = \"pair\", bytes = 100 }, { send = \"b\", stream = \"shared\" }, { wait = \"one\" }, { reply = true, stream = \"pipe\", sync = true }, { broadcast = \"b\", stream = \"pair\" } ]\n\
            [[task]]\nname = \"b\"\ninstances = 2\nops = [ \"exit\" ]";
        // Task ids: a = 0, b = 1, 2.
        let mut tasks = load(text, 3, &WorkloadOpts::default());
        let msg = Msg { from: 7, cpu: 0, bytes: 1, tag: 0, stream: None };
        let got = run(tasks[0].program.as_mut(), 2, 0, &[], None);
        assert_eq!(
            got,
            [
                "Write { to: 2, stream: Pair, bytes: 100, tag: 0 }",
                "Write { to: 1, stream: Shared(1), bytes: 64, tag: 0 }", // b: instance 0 of a
            ]
        );
        let p = tasks[0].program.as_mut();
        assert_eq!(run(p, 1, 0, &[], None), ["Wait { all: false }"]);
        assert_eq!(
            run(p, 3, 0, &[msg], None),
            [
                "Write { to: 7, stream: Pipe(7), bytes: 64, tag: 0 }",
                "Write { to: 1, stream: Pair, bytes: 64, tag: 0 }",
                "Write { to: 2, stream: Pair, bytes: 64, tag: 0 }",
            ]
        );
        let bad = |op: &str| {
            let text = format!("duration = \"1s\"\n[[task]]\nname = \"a\"\nops = [ {op} ]");
            parse_workload(&text).unwrap_err().to_string()
        };
        let expected = "at task[0].ops[0].stream: expected \"pair\", \"shared\" or \"pipe\"";
        assert_eq!(bad("{ send = \"a\", stream = \"tcp\" }"), expected);
        assert_eq!(bad("{ send = \"a\", stream = 1 }"), expected);
        assert!(
            bad("{ send = \"a\", stream = \"pipe\", sync = false }")
                .contains("always wakes its reader with the sync hint")
        );
        assert!(bad("{ wait = \"one\", stream = \"pair\" }").contains("unknown key \"stream\""));
    }
}

#[cfg(test)]
mod fuzz_regressions {
    /// Found by the `workload_spec` fuzz target: rt-app's "run forever"
    /// duration (-1) must not overflow while computing the unused value.
    #[test]
    fn rt_app_duration_minus_one_does_not_panic() {
        let r = super::parse_workload(r#"{"global": {"duration": -1}, "tasks": {"a": {"run": 1}}}"#);
        assert!(r.is_ok(), "{r:?}");
    }
}
