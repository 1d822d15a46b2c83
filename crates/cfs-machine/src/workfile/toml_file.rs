//! The TOML workload format (see the module doc of [`super`]): its keys,
//! ops and their checks, into a [`FileWorkload`].

use super::*;

pub(super) struct TomlFile;

/// Ops as they are read, with the place of each loop among them.
#[derive(Debug, Default)]
pub(super) struct RawOps {
    pub(super) ops: Vec<Raw>,
    /// Where each loop op is, in the order of their LoopBegins.
    pub(super) loops: Vec<String>,
}

impl TomlFile {
    pub(super) fn parse(v: &V) -> Result<FileWorkload, WorkloadError> {
        let top = obj(v, "")?;
        known_keys(top, "", &["name", "duration", "warmup", "metric", "task"])?;
        let name = get(top, "name").map(|x| as_str(x, "name")).transpose()?.unwrap_or("workload").to_string();
        let duration_ns = get(top, "duration").map(|x| duration(x, "duration", 0.0)).transpose()?;
        // As the command line's --duration: a run of no time measures nothing.
        if duration_ns == Some(0) {
            return err("duration", "must be more than 0");
        }
        if duration_ns.is_some_and(|d| d > crate::workloads::MAX_SIM_NS) {
            let cap = crate::dist::fmt_ns(crate::workloads::MAX_SIM_NS);
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
        let mut total = 0;
        for (i, t) in task_vals.iter().enumerate() {
            let path = format!("task[{i}]");
            let (head, raw) = Self::task(t, &path, &mut names)?;
            if heads.iter().any(|h: &TaskDef| h.name == head.name) {
                return err(&path, format!("duplicate task name {:?}", head.name));
            }
            total += raw.body.len();
            if total > MAX_FILE_OPS {
                return err(&path, format!("more than {MAX_FILE_OPS} ops in the file, with this task's"));
            }
            heads.push(head);
            raws.push(raw);
        }
        let any_progress = raws.iter().any(|r: &RawTask| has_progress(&r.body));
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
        let mut raw = RawOps::default();
        Self::ops(ops, &format!("{path}.ops"), names, &mut raw, 0)?;
        if raw.ops.is_empty() {
            return err(&format!("{path}.ops"), format!("task {name:?} has no ops"));
        }
        let loop_path = if get(o, "loop").is_some() { format!("{path}.loop") } else { format!("{path}.ops") };
        Ok((head, RawTask { prelude: Vec::new(), body: raw.ops, count, path: loop_path, loops: raw.loops }))
    }

    /// Reads an array of ops into `out`, at most [`MAX_OPS`] in all: the
    /// count is checked after each op, a loop's end included, so a task
    /// holds 100,000 and the op that makes 100,001 is refused.
    pub(super) fn ops(
        v: &V,
        path: &str,
        names: &mut Names,
        out: &mut RawOps,
        depth: usize,
    ) -> Result<(), WorkloadError> {
        if depth > MAX_DEPTH {
            return err(path, format!("loops nested deeper than {MAX_DEPTH}"));
        }
        let V::Arr(list) = v else { return err(path, format!("expected an array of ops, found {}", v.kind())) };
        for (i, op) in list.iter().enumerate() {
            Self::op(op, &format!("{path}[{i}]"), names, out, depth)?;
            if out.ops.len() > MAX_OPS {
                return err(path, format!("more than {MAX_OPS} ops"));
            }
        }
        Ok(())
    }

    fn op(v: &V, path: &str, names: &mut Names, out: &mut RawOps, depth: usize) -> Result<(), WorkloadError> {
        const OPS: [&str; 24] = [
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
            "lock",
            "unlock",
            "sem_post",
            "sem_wait",
            "barrier",
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
            "cond_wait" => &["cond_wait", "mutex"],
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
                        "a socket or pipe write wakes its reader as the kernel does (drop `sync = false`)",
                    );
                }
                match s {
                    V::Str(x) if x == "pair" => Via::Pair,
                    V::Str(x) if x == "shared" => Via::Shared,
                    V::Str(x) if x == "pipe" => Via::Pipe,
                    V::Str(x) if x == "tcp" => Via::Tcp,
                    _ => return err(&sp, "expected \"pair\", \"shared\", \"pipe\" or \"tcp\""),
                }
            }
        };
        let instr = match key.as_str() {
            "run" => Instr::Run(run_dist(val, &kp, 0.0)?),
            "sleep" => Instr::Sleep(duration(val, &kp, 0.0)?),
            "timer" => {
                let (period, absolute, name) = match val {
                    V::Obj(t) => {
                        known_keys(t, &kp, &["period", "ref", "mode"])?;
                        let p = get(t, "period")
                            .ok_or_else(|| WorkloadError { path: kp.clone(), msg: "missing `period`".into() })?;
                        let name = get(t, "ref").map(|r| as_str(r, &format!("{kp}.ref"))).transpose()?;
                        (duration(p, &format!("{kp}.period"), 0.0)?, timer_mode(t, &kp)?, name)
                    }
                    other => (duration(other, &kp, 0.0)?, false, None),
                };
                if period == 0 {
                    return err(&kp, "timer period must be positive");
                }
                Instr::Timer { slot: TimerSlot::named(name, names), period, absolute }
            }
            "send" => {
                out.ops.push(Raw::Send { to: parse_target(as_str(val, &kp)?), via, bytes, path: kp });
                return Ok(());
            }
            "broadcast" => {
                out.ops.push(Raw::Send { to: RawTarget::All(as_str(val, &kp)?.to_string()), via, bytes, path: kp });
                return Ok(());
            }
            "reply" => {
                as_bool(val, &kp)?;
                out.ops.push(Raw::Send { to: RawTarget::Reply, via, bytes, path: kp });
                return Ok(());
            }
            "wait" => match val {
                V::Bool(true) => Instr::Wait { all: false },
                V::Str(s) if s == "one" => Instr::Wait { all: false },
                V::Str(s) if s == "all" => Instr::Wait { all: true },
                _ => return err(&kp, "expected \"one\" or \"all\""),
            },
            "cond_wait" => Instr::CondWait {
                cond: names.cond(as_str(val, &kp)?),
                mutex: get(o, "mutex")
                    .map(|m| as_str(m, &format!("{path}.mutex")).map(|m| names.mutex(m)))
                    .transpose()?,
            },
            "signal" => Instr::CondSignal { cond: names.cond(as_str(val, &kp)?), all: false },
            "broad" => Instr::CondSignal { cond: names.cond(as_str(val, &kp)?), all: true },
            "lock" => Instr::Lock(names.mutex(as_str(val, &kp)?)),
            "unlock" => Instr::Unlock(names.mutex(as_str(val, &kp)?)),
            "sem_post" => Instr::SemPost(names.sem(as_str(val, &kp)?)),
            "sem_wait" => Instr::SemWait(names.sem(as_str(val, &kp)?)),
            "barrier" => Instr::Barrier(names.barrier(as_str(val, &kp)?)),
            "fork" => {
                out.ops.push(Raw::Fork { name: as_str(val, &kp)?.to_string(), path: kp });
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
            "affinity" => Instr::Affinity(Box::new(cpus(val, &kp)?)),
            _ => {
                // "loop"
                let lo = obj(val, &kp)?;
                known_keys(lo, &kp, &["count", "ops"])?;
                let count = get(lo, "count").map(|x| loop_count(x, &format!("{kp}.count"))).transpose()?.flatten();
                let count = if get(lo, "count").is_some() { count } else { None };
                let body =
                    get(lo, "ops").ok_or_else(|| WorkloadError { path: kp.clone(), msg: "missing `ops`".into() })?;
                if matches!(body, V::Arr(a) if a.is_empty()) {
                    return err(&format!("{kp}.ops"), "a loop with no ops");
                }
                out.ops.push(Raw::I(Instr::LoopBegin { count, end: 0 }));
                out.loops.push(kp.clone());
                Self::ops(body, &format!("{kp}.ops"), names, out, depth + 1)?;
                out.ops.push(Raw::I(Instr::LoopEnd { begin: 0 }));
                return Ok(());
            }
        };
        out.ops.push(Raw::I(instr));
        Ok(())
    }
}
