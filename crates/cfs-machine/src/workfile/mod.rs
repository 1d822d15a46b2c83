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
//! Ops: `run`, `sleep`, `timer` (`{ period = "10ms" }`, optionally
//! `mode = "absolute"`: sleep until the next activation, one period after
//! the last, the first one period after the task's loop began; an
//! activation already past goes on at once and, in the default
//! `"relative"` mode, counts the next period from now, as rt-app's timer
//! does; with `ref = "name"` the timer is shared by every task instance
//! that names it, and each use advances it a period, as rt-app's named
//! timers are, so two instances on one 10 ms timer wake 10 ms apart, each
//! every 20 ms; without `ref`, or with `ref = "unique"`, each instance
//! keeps its own), `send` (a task name, `name#3` for an instance, or
//! `parent`; with `sync`, `bytes`), `reply` (to the last message's
//! sender), `broadcast` (every instance of a task, woken in one call, as a
//! write on a socket they all poll wakes them, the last to go to sleep
//! first: [`Action::SendAll`]; with a `stream`, one write per instance), `wait` (`one`/`all`),
//! where a send, reply or broadcast with `stream = "pair"` (an AF_UNIX
//! stream socket, the writer's own connection), `stream = "shared"` (one
//! socket per receiver, shared by every writer to it, as hackbench's
//! senders share each receiver's) or `stream = "pipe"` (one pipe per
//! receiver, hackbench's `-pipe`) is a write: always sync, and blocked
//! while the socket's send buffer or the pipe's 16 pages are full
//! ([`crate::program::Stream`]); with `stream = "tcp"` it is a write on a
//! loopback TCP connection, whose receive softirq wakes a reader blocked
//! in a read without the sync hint and one in select() with it
//! ([`Action::TcpSend`]; no send buffer is modelled),
//! `cond_wait` / `signal` / `broad` (named pthread condition variables:
//! `{ cond_wait = "q", mutex = "m" }` releases mutex `m` while it waits and
//! takes it back before it goes on; a signal wakes the first waiter and
//! `broad` releases every one, and either is lost if no one waits; as
//! glibc's broadcast does, `broad` wakes the first waiter and moves the
//! others that wait with a mutex onto it, so each unlock wakes the
//! next), `lock` /
//! `unlock` (named pthread mutexes: a taken one puts the caller to sleep
//! until an unlock, and the unlocker may take it again before the woken
//! task runs, as glibc's do), `sem_post` / `sem_wait` (named semaphores,
//! starting at 0: a post with no one waiting is counted), `barrier` (every
//! instance started at t=0 of every task that names it waits until all
//! have arrived, as rt-app's does; rt-app counts a task's instances once
//! for every op that names the barrier, so a task naming it in two ops
//! is two users and the barrier never opens; [`crate::engine::sync`]), `fork` (a task
//! name), `exit`, `yield`, `progress`, `start_measuring` (the throughput
//! window starts here and progress so far is dropped, as a benchmark reads
//! its clock once its workers are ready: [`Action::StartMeasuring`]),
//! `nice`, `policy` (`--policy` outranks it, as it does every policy a
//! file names), `affinity`, and `loop = { count = N, ops = [...] }`.
//! A bare string op (`"exit"`, `"yield"`, `"wait"`, `"start_measuring"`)
//! is the same as `{ exit = true }` etc.
//!
//! Where the instances started at t=0 begin: each is created on the first
//! CPU its `cpus` allow (CPU 0 without `cpus`), in file order, and the
//! balancer spreads them from there. A `fork` op places its child by fork
//! balancing (SD_BALANCE_FORK). An rt-app file starts as rt-app does
//! instead ([`Launch::RtApp`]): its main creates every thread, so fork
//! balancing places each, and they wait for one another at a start
//! barrier. (In 2.6.2x that piles them up: each sleeps at the barrier
//! before the next is created, so every one finds the same idle CPU the
//! idlest.)
//!
//! # rt-app JSON
//!
//! `global`: `duration` (s; without it, or with -1 or 0, rt-app runs until
//! every thread has ended, and so does the run when every task has a
//! finite `loop`, else it lasts 1 s; counted from t=0, where rt-app
//! starts its `sleep(duration)` once main has created every thread, 50 µs
//! each here), `default_policy`, `calibration` (`"CPUn"`, the default
//! `"CPU0"`: the CPU main calibrates on and so runs on; ns per loop: CPU
//! 0); the rt-app housekeeping keys
//! (`logdir`, `log_basename`, `lock_pages`, `ftrace`,
//! `gnuplot`, `pi_enabled`, `io_device`, `mem_buffer_size`,
//! `cumulative_slack`, `log_size`) are accepted and ignored.
//! `tasks.NAME`: `instance`, `loop`, `policy`, `priority` (nice; a thread
//! sets its policy and nice as it starts, after its `delay`, and once
//! more as its first pass begins if the task names either: rt-app reads
//! the task's object as its one phase too), `cpus`,
//! `delay` (µs after the first thread started, rt-app's `t_zero`, which
//! the thread's timers then count from), `ws_kb`, `phases` (each a loop, `loop` times, once by
//! default, of its events; a phase's `cpus`, `priority` and `policy` are
//! set as it begins, as rt-app's thread_body does, and only when they
//! change something: a phase without `cpus` returns to the task's, or to
//! the mask the thread started with; one that names a `policy` without a
//! `priority` brings nice 0, a `priority` without a `policy` keeps the
//! policy; one that names neither keeps what was set last; SCHED_IDLE
//! gets no nice level; `--policy` outranks every policy the file names), and events in document order, each key
//! optionally suffixed by digits (`run0`, `sleep1`): `run` (µs of CPU),
//! `runtime` (µs of wall-clock time: it computes until that much time has
//! passed since it began, preempted or not, as rt-app's `runtime` does),
//! `sleep` (µs), `timer` (`{ref, period, mode}`, as in TOML: `"unique"`
//! is each instance's own, any other name shared, and a missing `ref` is
//! the shared timer `"unknown"`, as rt-app's parser has it; a shared timer
//! is absolute if any use of it says so), `wait` (`{ref, mutex}`, or a name for a
//! wait without a mutex), `signal`, `broad`, `sync` (signal then wait),
//! `lock`/`unlock`, `barrier`, `sem_post`/`sem_wait` (all as in TOML
//! above, which follows rt-app's `run_event`), `fork` (a task name; the
//! 1,025th fork of one task fails the run, where rt-app exits),
//! `suspend` (a string naming a mutex and a condition, as `resume`'s does:
//! under that mutex, wait on that condition; an empty string names the
//! task itself, as rt-app's workgen fills it) and `resume` (under the
//! mutex its value names, broadcast the condition of that name: every
//! instance suspended on it wakes, and a resume with no one suspended is
//! lost, as in rt-app), `yield`.
//! Without any progress op, every task counts one unit per loop.
//!
//! Steps that take no time (a progress count, `start_measuring`, a
//! zero-length run) are free up to [`crate::engine::FREE_STEPS`] in a row;
//! then the engine charges a system call. A task must have at least one op
//! (rt-app: one event, in the task and in each phase), and a loop that runs
//! more than once, the task's own included, must hold an op that takes
//! time or can block (any op but those three; a 1 ns run will do): one of
//! free steps alone would spin through millions of steps per simulated
//! millisecond, so the file is refused, naming the task and the loop.
//! A send that could reach no one is refused too: to `parent` from a task
//! started at t=0, a `reply` from a task with no `wait`, a send or
//! broadcast to a task with no instance at t=0. So is a key given twice in
//! one table or object: TOML forbids it, and of a JSON file's repeats
//! rt-app (json-c) would keep only the last value, so events of one kind
//! take numbered keys (`run0`, `run1`).
//!
//! A file is checked when it is read (at most 256 task definitions, 4,096
//! tasks at start, 100,000 ops a task and 200,000 in the file, counting a
//! loop as two, loops 24 deep inside a task's own; and, counted in the
//! raw text before it is parsed (strings and comments included, to bound
//! the parsers' memory), brackets 80 deep and at most 1,000,000 commas and
//! opening brackets, five an op for a file of 200,000; a TOML
//! `duration` above 0 and a `warmup` shorter than it; rt-app durations in
//! µs from 0 to 2^31 - 1, rt-app's C int). [`FileWorkload::check_host`]
//! checks its CPU lists against a host and [`FileWorkload::check_warmup`]
//! its warmup against a run's duration. Its run is bounded by
//! [`crate::engine::Limits`]: a run that has no duration (it ends with its
//! finishing tasks, or with every rt-app thread) and has not ended by 600
//! s of simulated time stops with an error naming the tasks still to
//! finish, such as a finishing task or a phase that loops for ever; a
//! fork that would make more than 32,768
//! tasks alive (the kernel's default pid_max) or create more than 2^20 in
//! one run, or a send that would leave more than 2^24 messages unread
//! (only a socket or pipe write ever blocks), stops the run with an error that
//! says so.
//!
//! This file holds the value tree both formats parse into, the checks and
//! name resolution they share, and [`FileWorkload`]; `toml_file.rs` and
//! `rt_app.rs` read the two formats, `script.rs` runs a definition's code
//! as a [`Program`], and `tests.rs` tests all of it.

use crate::dist::{Dist, parse_duration, parse_duration_with};
use crate::program::{Action, ForkSpec, Program, Queued, StepCx, Stream, TaskRef, TaskSpec};
use crate::workloads::{Launcher, WorkloadOpts, parent_task};
use cfs_core::{CpuMask, Policy, TaskParams};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::sync::Arc;

mod rt_app;
mod script;
mod toml_file;

use rt_app::RtApp;
use script::{Origin, RunShared, Script};
use toml_file::TomlFile;

/// Limits that keep a hostile file from exhausting memory or time.
const MAX_TASK_DEFS: usize = 256;
const MAX_INSTANCES: u64 = 4096;
/// Ops of one task, counted as its code holds them: a loop is two (its
/// begin and its end), an rt-app `sync` two and a `suspend` or `resume`
/// three.
const MAX_OPS: usize = 100_000;
/// Ops of the whole file, counted the same way. Task code is shared by a
/// task's instances, so this bounds the file's code however many run.
const MAX_FILE_OPS: usize = 200_000;
/// Loops inside a task's own loop. 24, because the TOML parser refuses
/// values nested more than 80 deep, and a loop written inline
/// (`{ loop = { ops = [ ... ] } }`) is three of them: 25 such loops with a
/// `{ run = { mean = ... } }` inside still parse (78 deep), so the 25th
/// gets this limit's error rather than the parser's.
const MAX_DEPTH: usize = 24;
/// Brackets nested in the text: the TOML parser's own limit, checked before
/// either parser runs so that JSON gets the same bound and every file the
/// same message.
const MAX_NESTING: usize = 80;
/// Commas and opening brackets in the text, counted before parsing. The
/// TOML parser builds about 1.4 KB for each inline table and 150 bytes for
/// each other value before any op is read, so the op limits alone would
/// not bound memory; the richest op (`{ send = "b", sync = true, bytes =
/// 64, stream = "pair" }` and its separator) takes five, so a file within
/// [`MAX_FILE_OPS`] stays within this.
const MAX_SEPARATORS: usize = 5 * MAX_FILE_OPS;

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
        // A set, not a scan of `v`: an rt-app task may hold 100,000 events.
        let mut seen = std::collections::BTreeSet::new();
        while let Some((k, x)) = map.next_entry::<String, V>()? {
            // TOML refuses a repeated key itself. JSON allows one, and
            // json-c, which rt-app reads its files with, keeps the last
            // value at the first key's place; a run of both would not be
            // the file rt-app runs, so a repeat is refused instead.
            if !seen.insert(k.clone()) {
                let hint = if rt_app::event_name(&k).is_some() { "; number repeated events: run0, run1" } else { "" };
                return Err(de::Error::custom(format!(
                    "key \"{k}\" appears twice in one object (rt-app would keep only its last value{hint})"
                )));
            }
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
    /// A write on a loopback TCP connection (`stream = "tcp"`): the
    /// receive softirq wakes the reader ([`Action::TcpSend`]).
    Tcp,
}

/// One instruction of a task's flattened op list.
#[derive(Clone, Debug, PartialEq)]
enum Instr {
    Run(Dist),
    /// Compute until this many ns of simulated time have passed since the
    /// instruction began, however much of it the task spent preempted
    /// (rt-app's `runtime`).
    RunWall(u64),
    Sleep(u64),
    /// rt-app's `threads_barrier`, which every thread main created waits
    /// at before anything else ([`Launch::RtApp`]).
    StartupBarrier,
    /// rt-app's `delay`, and where its timers start: sleep until `t_zero`
    /// plus this many ns.
    Delay(u64),
    /// rt-app's set_thread_param with one of the file's scheduling
    /// objects: `id` 0 is the task's own (set as the thread starts), 1 + k
    /// its phase k's. A no-op when it is the object the thread set last
    /// (rt-app compares the objects, not their values); `policy` None is
    /// rt-app's `same`.
    SchedParams {
        id: u32,
        policy: Option<Policy>,
        nice: i32,
    },
    /// rt-app's set_thread_affinity as a phase begins: the phase's CPUs,
    /// else the task's, else (None) the mask the thread started with; a
    /// call only when that differs from the mask the thread set last.
    PhaseAffinity(Option<Box<CpuMask>>),
    /// rt-app's timer: the next activation is the last one plus `period`
    /// (the first, the loop's start plus `period`); sleep until it, or, if
    /// it has passed, go on at once and (unless `absolute`) count the
    /// following periods from now.
    Timer {
        slot: TimerSlot,
        period: u64,
        absolute: bool,
    },
    Send {
        to: Target,
        via: Via,
        bytes: u32,
    },
    Wait {
        all: bool,
    },
    CondWait {
        cond: usize,
        mutex: Option<usize>,
    },
    CondSignal {
        cond: usize,
        all: bool,
    },
    Lock(usize),
    Unlock(usize),
    SemPost(usize),
    SemWait(usize),
    Barrier(usize),
    Fork(usize),
    Exit,
    Yield,
    StartMeasuring,
    Progress(u64),
    Nice(i32),
    Policy(Policy),
    /// Boxed, as in [`Action::SetAffinity`]: inline, the 128-byte mask would
    /// make every instruction, cloned on every step, that large.
    Affinity(Box<CpuMask>),
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

/// Where a timer keeps its next activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerSlot {
    /// The task instance's own (rt-app's `"ref": "unique"`), numbered
    /// per task definition.
    Own(usize),
    /// A named timer every task that names it shares: each use advances
    /// it by its period, as rt-app's global timer resources are.
    Shared(usize),
}

impl TimerSlot {
    /// The slot of a timer `ref`: "unique" (or none, in TOML) is the
    /// task's own, numbered later; any other name is shared.
    fn named(name: Option<&str>, names: &mut Names) -> TimerSlot {
        match name {
            None | Some("unique") => TimerSlot::Own(usize::MAX),
            Some(n) => TimerSlot::Shared(intern(&mut names.timers, n)),
        }
    }
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

/// How the tasks a run starts with come to be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Launch {
    /// A TOML file's: each instance exists at t=0, on the first CPU its
    /// `cpus` allow, with its definition's nice, policy and mask.
    #[default]
    AtStart,
    /// rt-app's (rt-app.c `main`, `create_thread`, `thread_body`): one
    /// process, `rt-app`, on `main_cpu`, creates every instance in file order
    /// with pthread_create, each after 50 µs of its own CPU (the
    /// launchers' cost per fork), so each is placed by fork balancing
    /// (SD_BALANCE_FORK) and inherits main's nice, policy and mask; then
    /// main exits (rt-app's sleeps, in sleep() or pthread_join, which the
    /// scheduler cannot tell apart). Each thread waits at `threads_barrier` until
    /// all have been created, sleeps out its `delay`, sets its policy and
    /// nice, and its `cpus` as its first phase begins.
    RtApp {
        /// The CPU main runs on: the one it calibrates on (`global.
        /// calibration`, "CPU0" by default), where it stays once it has
        /// restored its mask; CPU 0 when the file gives ns per loop
        /// instead, or a CPU the host lacks (rt-app's sched_setaffinity
        /// then fails and main stays where it was started).
        main_cpu: usize,
    },
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
    /// Condition variables, by name.
    pub conds: Vec<String>,
    /// Mutexes, by name.
    pub mutexes: Vec<String>,
    /// Semaphores, by name.
    pub sems: Vec<String>,
    /// Barriers, by name, with their users: every instance started at t=0
    /// of a task whose code names the barrier, once per event that does,
    /// as rt-app counts them.
    pub barriers: Vec<(String, u32)>,
    /// Shared timers, by name.
    pub timers: Vec<String>,
    /// How the tasks the run starts with are created.
    pub launch: Launch,
}

/// Parses a workload file (TOML, or rt-app JSON when it starts with `{`).
/// Never panics.
pub fn parse_workload(text: &str) -> Result<FileWorkload, WorkloadError> {
    if bracket_depth(text) > MAX_NESTING {
        return err("", format!("nesting deeper than {MAX_NESTING} levels"));
    }
    let separators = text.bytes().filter(|b| matches!(b, b',' | b'[' | b'{')).count();
    if separators > MAX_SEPARATORS {
        return err(
            "",
            format!(
                "{separators} commas and brackets: too large for a workload file (at most {MAX_SEPARATORS}, \
                 five for each of {MAX_FILE_OPS} ops; comments and strings count too)"
            ),
        );
    }
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let v: V =
            serde_json::from_str(text).map_err(|e| WorkloadError { path: String::new(), msg: format!("JSON: {e}") })?;
        RtApp::parse(&v)
    } else {
        let v: V = toml::from_str(text)
            .map_err(|e| WorkloadError { path: String::new(), msg: format!("TOML: {}", toml_error(text, &e)) })?;
        TomlFile::parse(&v)
    }
}

/// A TOML error on one line: where, the parser's reason (its lines joined
/// by "; "), and the text it points at when that is short (the key of a
/// `duplicate key`). The crate's own text puts the reason under an excerpt
/// of the file, and the command line prints only an error's first line,
/// which held just the position.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let reason = e
        .message()
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let Some(span) = e.span() else { return reason };
    let Some(before) = text.get(..span.start) else { return reason };
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    match text.get(span).map(str::trim).filter(|t| !t.is_empty() && t.len() <= 40 && !t.contains('\n')) {
        Some(at) => format!("line {line}, column {column}: {reason} (at `{at}`)"),
        None => format!("line {line}, column {column}: {reason}"),
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
    crate::workloads::policy_by_name(as_str(v, path)?).map_err(|msg| WorkloadError { path: path.into(), msg })
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

/// Collects names (synchronisation objects, timers) to resolve references
/// after all definitions are read. Each kind of object has its own
/// namespace, as rt-app's resources have a type.
#[derive(Debug, Default)]
struct Names {
    conds: Vec<String>,
    mutexes: Vec<String>,
    sems: Vec<String>,
    barriers: Vec<String>,
    timers: Vec<String>,
}

/// The index of `name` in `list`, added if new.
fn intern(list: &mut Vec<String>, name: &str) -> usize {
    match list.iter().position(|c| c == name) {
        Some(i) => i,
        None => {
            list.push(name.to_string());
            list.len() - 1
        }
    }
}

impl Names {
    fn cond(&mut self, name: &str) -> usize {
        intern(&mut self.conds, name)
    }

    fn mutex(&mut self, name: &str) -> usize {
        intern(&mut self.mutexes, name)
    }

    fn sem(&mut self, name: &str) -> usize {
        intern(&mut self.sems, name)
    }

    fn barrier(&mut self, name: &str) -> usize {
        intern(&mut self.barriers, name)
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

/// A task's raw ops: what it does once before its top-level loop (rt-app's
/// `delay`), the loop's body, and the loop's count (None = forever); where
/// the task is in the file, and where each loop of its body is, in the
/// order their LoopBegins stand (for the errors that name a loop).
struct RawTask {
    prelude: Vec<Raw>,
    body: Vec<Raw>,
    count: Option<u64>,
    path: String,
    loops: Vec<String>,
}
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

/// Resolves names and checks the program of task definition `me`,
/// producing its code. A send that could never reach anyone is an error
/// rather than the free step it would be at run time: to `parent` from a
/// task started at t=0 (it has none), a `reply` from a task that never
/// waits for a message (only `wait` takes one, so there is no sender to
/// reply to), a broadcast to a task with no instance at t=0 (forked
/// instances are never its receivers).
fn resolve(raw: Vec<Raw>, defs: &[(String, u32)], me: usize) -> Result<Vec<Instr>, WorkloadError> {
    let receives = raw.iter().any(|r| matches!(r, Raw::I(Instr::Wait { .. })));
    let no_instances =
        |n: &str, path: &str| err(path, format!("task {n:?} has no instances started at t=0 to send to"));
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
                    RawTarget::Parent => {
                        let (name, count) = &defs[me];
                        if *count > 0 {
                            return err(
                                &path,
                                format!(
                                    "task {name:?} sends to its parent, but its {count} instance(s) started at t=0 \
                                     have none (only a forked task has a parent: give it instances = 0 and fork it)"
                                ),
                            );
                        }
                        Target::Parent
                    }
                    RawTarget::Reply if !receives => {
                        let name = &defs[me].0;
                        return err(
                            &path,
                            format!(
                                "task {name:?} replies but never waits for a message, so it has no sender to reply to"
                            ),
                        );
                    }
                    RawTarget::Reply => Target::Reply,
                    RawTarget::All(n) => {
                        let def = find(&n, &path)?;
                        if defs[def].1 == 0 {
                            return no_instances(&n, &path);
                        }
                        Target::All(def)
                    }
                    RawTarget::Name(n, inst) => {
                        let def = find(&n, &path)?;
                        let count = defs[def].1;
                        if let Some(i) = inst.filter(|&i| i >= count) {
                            return err(&path, format!("task {n:?} has {count} instance(s), no #{i}"));
                        }
                        if count == 0 {
                            return no_instances(&n, &path);
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

/// A shared timer is absolute if any use of it says so: rt-app keeps the
/// mode in the timer resource, which a use with `"mode": "absolute"` sets.
fn share_timer_modes(heads: &mut [TaskDef], nr_shared: usize) {
    let mut absolute = vec![false; nr_shared];
    let shared = |ins: &Instr| match *ins {
        Instr::Timer { slot: TimerSlot::Shared(k), absolute, .. } => Some((k, absolute)),
        _ => None,
    };
    for (k, abs) in heads.iter().flat_map(|h| h.code.iter().filter_map(shared)) {
        absolute[k] |= abs;
    }
    for ins in heads.iter_mut().flat_map(|h| h.code.iter_mut()) {
        if let Instr::Timer { slot: TimerSlot::Shared(k), absolute: a, .. } = ins {
            *a = absolute[*k];
        }
    }
}

/// Each barrier with its users: rt-app adds a task's instances once for
/// every event of its code that names the barrier. A barrier that no task
/// started at t=0 names would never open (a forked task does not count,
/// as in rt-app), so it is an error.
fn barrier_users(barriers: &[String], heads: &[TaskDef]) -> Result<Vec<(String, u32)>, WorkloadError> {
    let mut users = vec![0u32; barriers.len()];
    for h in heads {
        for ins in &h.code {
            if let Instr::Barrier(b) = ins {
                users[*b] = users[*b].saturating_add(h.instances);
            }
        }
    }
    barriers
        .iter()
        .zip(users)
        .map(|(b, n)| match n {
            0 => err("", format!("barrier {b:?}: no task started at t=0 uses it, so it would never open")),
            n => Ok((b.clone(), n)),
        })
        .collect()
}

/// Wraps a task body in its top-level loop, adding an implicit progress
/// count per iteration when the file has none.
fn wrap_loop(task: RawTask, implicit_progress: bool) -> Vec<Raw> {
    let RawTask { prelude, mut body, count, .. } = task;
    if implicit_progress {
        body.push(Raw::I(Instr::Progress(1)));
    }
    let mut out = Vec::with_capacity(prelude.len() + body.len() + 2);
    out.extend(prelude);
    out.push(Raw::I(Instr::LoopBegin { count, end: 0 }));
    out.extend(body);
    out.push(Raw::I(Instr::LoopEnd { begin: 0 }));
    fix_loops(&mut out);
    out
}

/// A timer's `mode`: rt-app's "relative" (the default) or "absolute".
fn timer_mode(t: &[(String, V)], path: &str) -> Result<bool, WorkloadError> {
    match get(t, "mode") {
        None => Ok(false),
        Some(m) => match as_str(m, &format!("{path}.mode"))? {
            "relative" => Ok(false),
            "absolute" => Ok(true),
            other => err(&format!("{path}.mode"), format!("expected \"relative\" or \"absolute\", found {other:?}")),
        },
    }
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
                Some(V::Int(i)) => return err(&format!("{path}.cv"), format!("{i} is not in 0..=10")),
                Some(V::Float(f)) => return err(&format!("{path}.cv"), format!("{f} is not in 0..=10")),
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
    for (me, (head, mut task)) in heads.iter_mut().zip(raws).enumerate() {
        // The task's own loop first, then its body's, as their LoopBegins stand.
        let mut loops = vec![std::mem::take(&mut task.path)];
        loops.append(&mut task.loops);
        let raw = wrap_loop(task, !any_progress);
        let mut code = resolve(raw, &defs, me)?;
        check_loops_take_time(&head.name, &code, &loops)?;
        // Number this task's own timers.
        let mut slot = 0;
        for ins in &mut code {
            if let Instr::Timer { slot: TimerSlot::Own(s), .. } = ins {
                *s = slot;
                slot += 1;
            }
        }
        head.timers = slot;
        head.code = code;
    }
    share_timer_modes(&mut heads, names.timers.len());
    let barriers = barrier_users(&names.barriers, &heads)?;
    let Names { conds, mutexes, sems, timers, .. } = names;
    let wl = FileWorkload {
        name,
        metric,
        duration_ns,
        warmup_ns,
        tasks: heads,
        conds,
        mutexes,
        sems,
        barriers,
        timers,
        launch: Launch::AtStart,
    };
    if wl.duration_ns.is_none() && !wl.tasks.iter().any(|t| t.finish && t.instances > 0) {
        return err("", "give a `duration` or mark a task started at t=0 with finish = true");
    }
    if let Some(d) = wl.duration_ns {
        wl.check_warmup(d).map_err(|msg| WorkloadError { path: "warmup".into(), msg })?;
    }
    Ok(wl)
}

/// Whether `ins` can make simulated time pass: CPU work of more than
/// nothing, a sleep or timer, or a call into the kernel or a
/// synchronisation object, which costs a system call, may block, or may
/// wake another task. Only a progress count, `start_measuring` and a run
/// that is always 0 cost nothing (the engine steps them for free; see
/// [`Action::Progress`] and [`crate::engine::FREE_STEPS`]).
fn takes_time(ins: &Instr) -> bool {
    match *ins {
        Instr::Run(Dist::Fixed(ns)) => ns > 0,
        Instr::Run(Dist::Uniform { hi, .. }) => hi > 0,
        Instr::Run(Dist::Exp { mean }) => mean > 0,
        Instr::Run(Dist::Normal { mean, sd }) => mean > 0 || sd > 0,
        Instr::RunWall(ns) => ns > 0,
        Instr::Progress(_) | Instr::StartMeasuring | Instr::LoopBegin { .. } | Instr::LoopEnd { .. } => false,
        // rt-app's set_thread_param / set_thread_affinity as a phase
        // begins: calls only when they change something, so from the
        // second pass on, nothing.
        Instr::SchedParams { .. } | Instr::PhaseAffinity(_) => false,
        _ => true,
    }
}

/// Every loop that runs more than once must hold something that makes
/// simulated time pass. One that does not would have the engine step it
/// for free until its FREE_STEPS bound charges a system call: a loop of
/// nothing, or a billion progress counts, then takes minutes of wall time
/// for a millisecond of simulated time, and measures nothing real. (A
/// loop that runs once or never is a block of ops, not a spin.) `loops`
/// names each loop, in the order their LoopBegins stand in `code`.
fn check_loops_take_time(task: &str, code: &[Instr], loops: &[String]) -> Result<(), WorkloadError> {
    let mut k = 0;
    for (b, ins) in code.iter().enumerate() {
        let Instr::LoopBegin { count, end } = *ins else { continue };
        let path = loops.get(k).map_or("", String::as_str);
        k += 1;
        if matches!(count, Some(0 | 1)) {
            continue;
        }
        // A loop inside that never runs does not count.
        let mut i = b + 1;
        let mut timed = false;
        while i < end && !timed {
            match code[i] {
                Instr::LoopBegin { count: Some(0), end: skip } => i = skip + 1,
                ref x => {
                    timed = takes_time(x);
                    i += 1;
                }
            }
        }
        if !timed {
            let times = count.map_or("for ever".to_string(), |n| format!("{n} times"));
            return err(
                path,
                format!(
                    "task {task:?} loops {times} on steps that take no simulated time (zero-length runs, \
                     progress counts, start_measuring): add one that does, such as a run or sleep of more \
                     than 0, a timer, a wait, a lock, a signal or a send"
                ),
            );
        }
    }
    Ok(())
}

// ----- running a file workload --------------------------------------------------------

impl FileWorkload {
    /// Checks the file's `warmup` against a run of `duration_ns` (the
    /// file's own, which parsing checks, or one given on the command line):
    /// a warm-up that lasts the whole run leaves nothing to measure. The
    /// error is one line naming both values.
    pub fn check_warmup(&self, duration_ns: u64) -> Result<(), String> {
        if self.warmup_ns > 0 && self.warmup_ns >= duration_ns {
            let (w, d) = (crate::dist::fmt_ns(self.warmup_ns), crate::dist::fmt_ns(duration_ns));
            return Err(format!(
                "warmup {w} is not shorter than the run's duration {d}: progress before {w} is not counted, \
                 so nothing would be measured"
            ));
        }
        Ok(())
    }

    /// Checks the file's CPU lists against a host of `nr_cpus` CPUs: a
    /// task's `cpus`, and every affinity it sets as it runs (an `affinity`
    /// op, an rt-app phase's `cpus`), must name at least one CPU the host
    /// has. The kernel refuses such a mask (sched_setaffinity's EINVAL),
    /// and rt-app exits when it is refused; a list that names some CPUs the
    /// host lacks is taken, as the kernel takes it, for the CPUs it has.
    /// The error is one line naming the task, the list and the host's CPUs.
    pub fn check_host(&self, nr_cpus: usize) -> Result<(), String> {
        let host = CpuMask::first_n(nr_cpus.min(cfs_topology::MAX_CPUS));
        let refuse = |task: &str, what: &str, m: &CpuMask| {
            Err(format!(
                "task {task:?}: {what} {m} names no CPU of this host, which has {nr_cpus} (CPUs {})",
                if nr_cpus == 0 { "none".to_string() } else { host.to_string() }
            ))
        };
        for t in &self.tasks {
            if let Some(m) = t.cpus.filter(|m| !m.intersects(&host)) {
                return refuse(&t.name, "cpus", &m);
            }
            for ins in &t.code {
                if let Instr::Affinity(m) | Instr::PhaseAffinity(Some(m)) = ins {
                    if !m.intersects(&host) {
                        return refuse(&t.name, "an affinity change to CPUs", m);
                    }
                }
            }
        }
        Ok(())
    }

    /// The synchronisation objects its tasks use, for the engine: the
    /// file's, and under [`Launch::RtApp`] one condition more, for
    /// `threads_barrier`.
    pub fn sync_objects(&self) -> crate::engine::SyncObjects {
        let startup = usize::from(self.launch != Launch::AtStart);
        crate::engine::SyncObjects {
            conds: self.conds.len() + startup,
            mutexes: self.mutexes.len(),
            sems: self.sems.len(),
            barriers: self.barriers.iter().map(|b| b.1).collect(),
        }
    }

    /// The condition rt-app's `threads_barrier` sleeps on: the one after
    /// the file's own.
    fn startup_cond(&self) -> usize {
        self.conds.len()
    }

    /// The tasks the run starts with and the finish set. Under
    /// [`Launch::AtStart`], every instance of every definition, in order;
    /// under [`Launch::RtApp`], rt-app's main alone (task 0), which
    /// creates them in that order, so that they become tasks 1, 2, ...
    pub fn instantiate(self: &Arc<Self>, nr_cpus: usize, opts: &WorkloadOpts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
        let first = usize::from(self.launch != Launch::AtStart);
        let mut ids: Vec<Vec<TaskRef>> = Vec::new();
        let mut next = first;
        for d in &self.tasks {
            ids.push((next..next + d.instances as usize).collect());
            next += d.instances as usize;
        }
        let finish =
            self.tasks.iter().zip(&ids).filter(|(d, _)| d.finish).flat_map(|(_, i)| i.iter().copied()).collect();
        let policy = opts.policies.all;
        let run = Arc::new(RunShared::new(ids, self.timers.len(), policy));
        // rt-app's main runs on every CPU, and its threads start so.
        let every_cpu = CpuMask::first_n(nr_cpus);
        let mut threads = Vec::new();
        for (di, d) in self.tasks.iter().enumerate() {
            for inst in 0..d.instances {
                let origin = Origin::Started { index: threads.len() };
                let mask = match self.launch {
                    Launch::AtStart => d.cpus.unwrap_or(every_cpu),
                    Launch::RtApp { .. } => every_cpu,
                };
                let program = Script::new(self.clone(), run.clone(), di, inst, origin, mask);
                let name = if d.instances > 1 { format!("{}#{inst}", d.name) } else { d.name.clone() };
                threads.push((name, program, di));
            }
        }
        let tasks = match self.launch {
            Launch::AtStart => threads
                .into_iter()
                .map(|(name, program, di)| {
                    let params = self.params(di, policy);
                    TaskSpec {
                        name,
                        program: Box::new(program),
                        params,
                        cpu: params.allowed.first().unwrap_or(0).min(nr_cpus.saturating_sub(1)),
                        ws_kb: self.tasks[di].ws_kb,
                        side: None,
                    }
                })
                .collect(),
            // parse_workload refuses a file that starts no thread.
            Launch::RtApp { .. } if threads.is_empty() => Vec::new(),
            Launch::RtApp { main_cpu } => {
                // Each thread inherits main's parameters (params: None).
                let specs: Vec<ForkSpec> = threads
                    .into_iter()
                    .map(|(name, program, di)| ForkSpec {
                        name,
                        program: Box::new(program),
                        params: None,
                        ws_kb: self.tasks[di].ws_kb,
                    })
                    .collect();
                let workers = specs.len() as u32;
                let mut specs = specs.into_iter();
                let main = Launcher::new(workers, move |_| specs.next().expect("the launcher forks one per thread"));
                let params = TaskParams::normal().policy(policy.unwrap_or(Policy::Normal));
                let cpu = if main_cpu < nr_cpus { main_cpu } else { 0 };
                vec![TaskSpec { cpu, ..parent_task("rt-app", params, Queued::new(main)) }]
            }
        };
        (tasks, finish)
    }

    /// Definition `def`'s parameters: its nice, mask and policy, which
    /// `policy` (`--policy`) outranks.
    fn params(&self, def: usize, policy: Option<Policy>) -> TaskParams {
        let d = &self.tasks[def];
        let mut p = TaskParams::normal().nice(d.nice).policy(policy.unwrap_or(d.policy));
        if let Some(m) = d.cpus {
            p = p.allowed(m);
        }
        p
    }
}

#[cfg(test)]
mod tests;
