//! The subset of rt-app JSON that maps onto the vocabulary (see the module
//! doc of [`super`]), into a [`FileWorkload`].

use super::*;

pub(super) struct RtApp;

/// rt-app's housekeeping keys in `global`: accepted and ignored.
const RTAPP_IGNORED_GLOBAL: [&str; 10] = [
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

/// A task's keys besides its events.
const TASK_KEYS: &[&str] = &["instance", "loop", "policy", "priority", "cpus", "delay", "ws_kb", "phases"];

/// A phase's keys besides its events.
const PHASE_KEYS: &[&str] = &["loop", "cpus", "priority", "policy"];

/// rt-app event names (keys may carry a numeric suffix: run0, sleep1).
const RTAPP_EVENTS: [&str; 17] = [
    "run", "runtime", "sleep", "timer", "wait", "signal", "broad", "sync", "lock", "unlock", "barrier", "sem_post",
    "sem_wait", "fork", "suspend", "resume", "yield",
];

/// The rt-app event `key` names, its numeric suffix dropped (`run1` is
/// `run`); None when it names none.
pub(super) fn event_name(key: &str) -> Option<&str> {
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    RTAPP_EVENTS.contains(&base).then_some(base)
}

impl RtApp {
    pub(super) fn parse(v: &V) -> Result<FileWorkload, WorkloadError> {
        let top = obj(v, "")?;
        known_keys(top, "", &["global", "tasks"])?;
        let mut duration_ns = None;
        let mut default_policy = Policy::Normal;
        let mut main_cpu = 0;
        if let Some(g) = get(top, "global") {
            let g = obj(g, "global")?;
            let mut known: Vec<&str> = vec!["duration", "default_policy", "calibration"];
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
            if let Some(c) = get(g, "calibration") {
                main_cpu = Self::calibration_cpu(c)?;
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
        let mut total = 0;
        for (tname, tv) in tasks {
            // Two tasks of one name cannot reach here: the JSON reader
            // refuses a repeated key (VVisitor::visit_map).
            let path = format!("tasks.{tname}");
            let (head, raw) = Self::task(tname, tv, &path, default_policy, &mut names)?;
            total += raw.body.len();
            if total > MAX_FILE_OPS {
                return err(&path, format!("more than {MAX_FILE_OPS} events in the file, with this task's"));
            }
            heads.push(head);
            raws.push(raw);
        }
        let any_progress = false;
        let metric = "loops_s".to_string();
        // Without a positive duration rt-app runs until every thread has
        // ended (main() joins them). When every task loops a finite number
        // of times that is the run here too; a task that loops for ever
        // would make it endless, so such a file runs 1 s.
        let finite = raws.iter().all(|r| r.count.is_some());
        let duration_ns = match duration_ns {
            None if finite => {
                for h in &mut heads {
                    h.finish = h.instances > 0;
                }
                None
            }
            d => d.or(Some(1_000_000_000)),
        };
        let mut wl = finish_defs("rt-app".into(), metric, duration_ns, 0, heads, raws, names, any_progress)?;
        wl.launch = Launch::RtApp { main_cpu };
        Ok(wl)
    }

    /// `global.calibration`: the CPU rt-app's main calibrates on, and so
    /// runs on ("CPU2": sscanf's `CPU%d`, trailing text ignored), or an
    /// integer of ns per loop, which needs no calibration (main stays on
    /// CPU 0). Anything else makes rt-app exit ("Invalid calibration").
    /// A CPU number that is negative or too large for an int is kept as
    /// one the host lacks, which leaves main on CPU 0.
    fn calibration_cpu(v: &V) -> Result<usize, WorkloadError> {
        let path = "global.calibration";
        match v {
            V::Int(_) => Ok(0),
            V::Str(s) => {
                let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
                let rest = s.strip_prefix("CPU").map(str::trim_start);
                let Some(rest) = rest else {
                    return err(path, format!("{s:?} is neither \"CPUn\" nor ns per loop (rt-app refuses it too)"));
                };
                let (negative, body) = match rest.as_bytes().first() {
                    Some(b'-') => (true, &rest[1..]),
                    Some(b'+') => (false, &rest[1..]),
                    _ => (false, rest),
                };
                let n = digits(body);
                if n == 0 {
                    return err(path, format!("{s:?} names no CPU (rt-app refuses it too)"));
                }
                Ok(if negative { usize::MAX } else { body[..n].parse().unwrap_or(usize::MAX) })
            }
            other => err(path, format!("expected \"CPUn\" or ns per loop, found {}", other.kind())),
        }
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
        // A thread loops forever unless told otherwise (rt-app's default).
        let mut count = None;
        let mut raw = Vec::new();
        let mut delay = 0;
        // The task's own `policy` and `priority` as written: rt-app also
        // reads them as its one phase's when it has no `phases`.
        let (mut own_policy, mut own_priority) = (None, None);
        // The phases go where they stand, but are read once the task's own
        // `cpus` (which a phase without any returns to) is known.
        let mut phases = None;
        for (k, x) in o {
            let kp = format!("{path}.{k}");
            match k.as_str() {
                "instance" => head.instances = ranged(x, &kp, 0, MAX_INSTANCES as i64)? as u32,
                "loop" => count = loop_count(x, &kp)?,
                "policy" => {
                    head.policy = policy(x, &kp)?;
                    own_policy = Some(head.policy);
                }
                "priority" => {
                    head.nice = ranged(x, &kp, -20, 19)? as i32;
                    own_priority = Some(head.nice);
                }
                "cpus" => head.cpus = Some(cpus(x, &kp)?),
                "ws_kb" => head.ws_kb = ranged(x, &kp, 0, 1 << 20)? as u32,
                // rt-app: "initial delay before a thread starts execution",
                // once, not every loop.
                "delay" => delay = rt_duration(x, &kp)?,
                "phases" => phases = Some((raw.len(), x, kp)),
                // A key that names no event is the task's own unknown key
                // (reported at the task); one inside an event object is
                // that object's, and keeps the object's place.
                _ => Self::event(name, k, x, &kp, TASK_KEYS, names, &mut raw).map_err(|e| {
                    if event_name(k).is_none() { WorkloadError { path: path.into(), msg: e.msg } } else { e }
                })?,
            }
        }
        // What thread_body does before its first phase (the Launch::RtApp
        // doc): the barrier, the delay, set_thread_param with the task's
        // own scheduling object (the global default policy and nice 0
        // unless it names others: parse_sched_data always makes one).
        let prelude = vec![
            Raw::I(Instr::StartupBarrier),
            Raw::I(Instr::Delay(delay)),
            Raw::I(Instr::SchedParams { id: 0, policy: Some(head.policy), nice: head.nice }),
        ];
        let mut loops = Vec::new();
        if let Some((at, v, kp)) = phases {
            let mut code = Vec::new();
            loops = Self::phases(name, v, &kp, head.cpus, names, &mut code)?;
            raw.splice(at..at, code);
        }
        // As rt-app's parser: "No events found. Task must have events or
        // it's useless", and it exits.
        if raw.is_empty() {
            return err(path, format!("task {name:?} has no events (rt-app refuses such a task too)"));
        }
        if loops.is_empty() {
            // Without `phases` rt-app reads the task's object as its one
            // phase too: as that phase begins, each pass, it sets the
            // task's `cpus` and, if the task names a policy or priority,
            // that phase's scheduling object (no-ops after the first).
            let start = head.cpus.map(|m| Raw::I(Instr::PhaseAffinity(Some(Box::new(m)))));
            let start: Vec<Raw> = start.into_iter().chain(Self::phase_sched(1, own_policy, own_priority)).collect();
            raw.splice(0..0, start);
        }
        if raw.len() > MAX_OPS {
            return err(path, format!("more than {MAX_OPS} events"));
        }
        Ok((head, RawTask { prelude, body: raw, count, path: path.to_string(), loops }))
    }

    /// The phases, each a loop. A phase's own `cpus`, `priority` and
    /// `policy` are set as it begins, as rt-app's thread_body does before
    /// each phase (set_thread_affinity, set_thread_param): a phase without
    /// `cpus` returns to the task's (or to the mask the thread started
    /// with), one without a priority or policy keeps the scheduling object
    /// set last. Each is a call only when it changes something (rt-app.c
    /// set_thread_affinity's CPU_EQUAL, set_thread_param's object test).
    ///
    /// Returns each phase's place, for the errors that name its loop.
    fn phases(
        me: &str,
        v: &V,
        path: &str,
        task_cpus: Option<CpuMask>,
        names: &mut Names,
        out: &mut Vec<Raw>,
    ) -> Result<Vec<String>, WorkloadError> {
        let phases = obj(v, path)?;
        let mut loops = Vec::with_capacity(phases.len());
        // Where no phase and not the task name CPUs, every phase's mask is
        // the one the thread started with, and no call is ever made.
        let any_cpus =
            task_cpus.is_some() || phases.iter().any(|(_, pv)| matches!(pv, V::Obj(po) if get(po, "cpus").is_some()));
        for (pname, pv) in phases {
            let pp = format!("{path}.{pname}");
            let po = obj(pv, &pp)?;
            let count = match get(po, "loop") {
                Some(l) => loop_count(l, &format!("{pp}.loop"))?,
                None => Some(1),
            };
            let mask = match get(po, "cpus") {
                Some(c) => Some(cpus(c, &format!("{pp}.cpus"))?),
                None => task_cpus,
            };
            if any_cpus {
                out.push(Raw::I(Instr::PhaseAffinity(mask.map(Box::new))));
            }
            let p = get(po, "policy").map(|p| policy(p, &format!("{pp}.policy"))).transpose()?;
            let n = get(po, "priority").map(|n| ranged(n, &format!("{pp}.priority"), -20, 19)).transpose()?;
            let id = u32::try_from(loops.len() + 1).unwrap_or(u32::MAX);
            out.extend(Self::phase_sched(id, p, n.map(|n| n as i32)));
            out.push(Raw::I(Instr::LoopBegin { count, end: 0 }));
            let begin = out.len();
            for (k, x) in po {
                if !PHASE_KEYS.contains(&k.as_str()) {
                    Self::event(me, k, x, &format!("{pp}.{k}"), PHASE_KEYS, names, out)?;
                }
            }
            // rt-app refuses a phase without events as it does a task.
            if out.len() == begin {
                return err(
                    &pp,
                    format!("phase {pname:?} of task {me:?} has no events (rt-app refuses such a phase too)"),
                );
            }
            out.push(Raw::I(Instr::LoopEnd { begin: 0 }));
            loops.push(pp);
            if out.len() > MAX_OPS {
                return err(path, format!("more than {MAX_OPS} events"));
            }
        }
        fix_loops(out);
        Ok(loops)
    }

    /// A phase's scheduling object (rt-app's parse_sched_data with the
    /// policy `same` by default): none when it names neither a policy nor
    /// a priority; a named policy without a priority brings nice 0
    /// (DEFAULT_THREAD_NICE).
    fn phase_sched(id: u32, policy: Option<Policy>, priority: Option<i32>) -> Option<Raw> {
        (policy.is_some() || priority.is_some())
            .then(|| Raw::I(Instr::SchedParams { id, policy, nice: priority.unwrap_or(0) }))
    }

    /// One event of task `me`; `keys` are the other keys its table may
    /// hold (named in the error for an unknown one).
    fn event(
        me: &str,
        key: &str,
        v: &V,
        path: &str,
        keys: &[&str],
        names: &mut Names,
        out: &mut Vec<Raw>,
    ) -> Result<(), WorkloadError> {
        let Some(base) = event_name(key) else {
            let mut known = keys.to_vec();
            known.extend(RTAPP_EVENTS);
            return err(
                path,
                format!("unknown key {key:?} (known: {}, each event optionally suffixed by digits)", known.join(", ")),
            );
        };
        // A condition, by name or as `{ref, mutex}`, with its mutex if any.
        let cond_ref = |v: &V, names: &mut Names| -> Result<(usize, Option<usize>), WorkloadError> {
            match v {
                V::Str(s) => Ok((names.cond(s), None)),
                V::Obj(o) => {
                    known_keys(o, path, &["ref", "mutex"])?;
                    let r = get(o, "ref")
                        .ok_or_else(|| WorkloadError { path: path.into(), msg: "missing `ref`".into() })?;
                    let cond = names.cond(as_str(r, &format!("{path}.ref"))?);
                    let mutex = get(o, "mutex")
                        .map(|m| as_str(m, &format!("{path}.mutex")).map(|m| names.mutex(m)))
                        .transpose()?;
                    Ok((cond, mutex))
                }
                other => err(path, format!("expected a name or {{ref, mutex}}, found {}", other.kind())),
            }
        };
        let instr = match base {
            "run" => Instr::Run(Dist::Fixed(rt_duration(v, path)?)),
            "runtime" => Instr::RunWall(rt_duration(v, path)?),
            "sleep" => Instr::Sleep(rt_duration(v, path)?),
            "timer" => {
                let t = obj(v, path)?;
                known_keys(t, path, &["ref", "period", "mode"])?;
                let p = get(t, "period")
                    .ok_or_else(|| WorkloadError { path: path.into(), msg: "missing `period`".into() })?;
                let period = rt_duration(p, &format!("{path}.period"))?;
                if period == 0 {
                    return err(path, "timer period must be positive");
                }
                // rt-app takes a missing `ref` as the shared timer "unknown".
                let name = get(t, "ref").map(|r| as_str(r, &format!("{path}.ref"))).transpose()?.unwrap_or("unknown");
                Instr::Timer { slot: TimerSlot::named(Some(name), names), period, absolute: timer_mode(t, path)? }
            }
            "wait" => {
                let (cond, mutex) = cond_ref(v, names)?;
                Instr::CondWait { cond, mutex }
            }
            // rt-app's suspend ignores its value: under the mutex named
            // after the task, it waits on the condition named after the
            // task; resume takes the mutex named by its value and
            // broadcasts the condition of that name (so every instance of
            // the task that is suspended wakes). A resume with no one
            // suspended is lost, as any condition's signal is.
            // rt-app's parse_task_event: suspend and resume both name a
            // wait resource and a mutex by their string; an empty one is
            // what rt-app's workgen fills with the thread's own name.
            "suspend" => {
                let name = as_str(v, path)?;
                let name = if name.is_empty() { me } else { name };
                let (cond, mutex) = (names.cond(name), names.mutex(name));
                out.push(Raw::I(Instr::Lock(mutex)));
                out.push(Raw::I(Instr::CondWait { cond, mutex: Some(mutex) }));
                Instr::Unlock(mutex)
            }
            "resume" => {
                let name = as_str(v, path)?;
                let (cond, mutex) = (names.cond(name), names.mutex(name));
                out.push(Raw::I(Instr::Lock(mutex)));
                out.push(Raw::I(Instr::CondSignal { cond, all: true }));
                Instr::Unlock(mutex)
            }
            "signal" => Instr::CondSignal { cond: cond_ref(v, names)?.0, all: false },
            "broad" => Instr::CondSignal { cond: cond_ref(v, names)?.0, all: true },
            "sync" => {
                let (cond, mutex) = cond_ref(v, names)?;
                out.push(Raw::I(Instr::CondSignal { cond, all: false }));
                Instr::CondWait { cond, mutex }
            }
            "lock" => Instr::Lock(names.mutex(as_str(v, path)?)),
            "unlock" => Instr::Unlock(names.mutex(as_str(v, path)?)),
            "barrier" => Instr::Barrier(names.barrier(as_str(v, path)?)),
            "sem_post" => Instr::SemPost(names.sem(as_str(v, path)?)),
            "sem_wait" => Instr::SemWait(names.sem(as_str(v, path)?)),
            "fork" => {
                out.push(Raw::Fork { name: as_str(v, path)?.to_string(), path: path.into() });
                return Ok(());
            }
            _ => Instr::Yield,
        };
        out.push(Raw::I(instr));
        Ok(())
    }
}

/// rt-app's longest duration, µs: its parser reads every duration with
/// json_object_get_int, a C int.
const RTAPP_MAX_US: i64 = i32::MAX as i64;

/// An rt-app duration (`run`, `runtime`, `sleep`, a timer's `period`,
/// `delay`), ns. rt-app writes them as plain numbers of µs, which must be
/// 0 or more and fit its C int; a string may carry a unit (`"2ms"`) and is
/// held to the same bound.
fn rt_duration(v: &V, path: &str) -> Result<u64, WorkloadError> {
    let limit = || format!("rt-app durations are µs from 0 to {RTAPP_MAX_US} (a C int, about 36 minutes)");
    let us = match *v {
        V::Int(i) => i as f64,
        V::Float(f) => f,
        _ => {
            let ns = duration(v, path, 1e3)?;
            if ns / 1_000 > RTAPP_MAX_US as u64 {
                return err(path, format!("{} is too long; {}", crate::dist::fmt_ns(ns), limit()));
            }
            return Ok(ns);
        }
    };
    // Large floats in exponent form, so that 1e300 is not printed as 301 digits.
    let shown = match *v {
        V::Float(f) if f.abs() >= 1e15 => format!("{f:e}"),
        V::Float(f) => format!("{f}"),
        _ => format!("{us:.0}"),
    };
    if us < 0.0 {
        return err(path, format!("{shown} is negative; {}", limit()));
    }
    if us.is_nan() || us > RTAPP_MAX_US as f64 {
        return err(path, format!("{shown} is too long; {}", limit()));
    }
    Ok((us * 1e3).round() as u64)
}
