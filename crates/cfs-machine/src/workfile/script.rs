//! Running a file workload: the [`Program`] that interprets one task
//! definition's resolved code for one instance.

use super::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One run's shared timer: its next activation, shared by every task
/// instance that uses it (u64::MAX until one first does).
#[derive(Debug)]
pub(super) struct SharedTimer(AtomicU64);

impl Default for SharedTimer {
    fn default() -> Self {
        SharedTimer(AtomicU64::new(u64::MAX))
    }
}

impl SharedTimer {
    fn get(&self) -> Option<u64> {
        Some(self.0.load(Ordering::Relaxed)).filter(|&t| t != u64::MAX)
    }

    fn set(&self, t: u64) {
        self.0.store(t.min(u64::MAX - 1), Ordering::Relaxed);
    }
}

/// What one run of a file shares among its tasks' interpreters.
#[derive(Debug)]
pub(super) struct RunShared {
    /// Each definition's instances started with the run, by task number.
    pub(super) ids: Vec<Vec<TaskRef>>,
    /// The run's shared timers, not yet started.
    pub(super) timers: Box<[SharedTimer]>,
    /// `--policy` for every task: it outranks every policy the file
    /// names (a TOML `policy` op, rt-app's set_thread_param).
    pub(super) policy: Option<Policy>,
    /// rt-app's `threads_barrier`: threads created by main still to arrive.
    pub(super) to_arrive: AtomicU32,
    /// rt-app's `t_zero`: when the first thread main created began, which
    /// every thread's `delay` and first timer count from.
    pub(super) t_zero: SharedTimer,
    /// Forks of each definition so far (rt-app's `res.fork.nforks`, one
    /// resource per forked task).
    forks: Box<[AtomicU32]>,
}

/// rt-app.c's FORKS_LIMIT: the forks one `fork` resource may make; the
/// next makes rt-app exit with a failure.
const FORKS_LIMIT: u32 = 1024;

impl RunShared {
    pub(super) fn new(ids: Vec<Vec<TaskRef>>, timers: usize, policy: Option<Policy>) -> RunShared {
        let started: usize = ids.iter().map(Vec::len).sum();
        RunShared {
            forks: ids.iter().map(|_| AtomicU32::new(0)).collect(),
            ids,
            timers: (0..timers).map(|_| SharedTimer::default()).collect(),
            policy,
            to_arrive: AtomicU32::new(u32::try_from(started).unwrap_or(u32::MAX)),
            t_zero: SharedTimer::default(),
        }
    }
}

/// How an interpreted task came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// One of the instances the run starts with; `index` counts them in
    /// creation order (rt-app's `data->ind`: index 0 sets `t_zero`).
    Started { index: usize },
    /// Forked by a `fork` op (rt-app: `forked`, so it skips the barrier).
    Forked,
}

/// Interprets a task definition's code.
pub(super) struct Script {
    wl: Arc<FileWorkload>,
    run: Arc<RunShared>,
    def: usize,
    instance: u32,
    origin: Origin,
    pc: usize,
    /// Iterations left of each open loop, innermost last (None = forever).
    pub(super) loops: Vec<Option<u64>>,
    /// Next deadline of each of the instance's own timers.
    timers: Vec<Option<u64>>,
    last_from: Option<TaskRef>,
    /// Actions one instruction makes after its first, last first: the
    /// other sends of a broadcast written one stream at a time, a
    /// thread's second start-up call.
    queued: Vec<Action>,
    /// When the `RunWall` in progress ends.
    wall_until: Option<u64>,
    /// The scheduling object rt-app's set_thread_param set last (its id)
    /// and the policy it set then ([`Instr::SchedParams`]).
    sched: Option<(u32, Policy)>,
    /// The mask the thread started with (rt-app's `def_cpu_data`), and
    /// the one it set last (`curr_cpu_data`).
    start_mask: CpuMask,
    mask: CpuMask,
    /// When the task's top-level loop first began (rt-app's `t_first`,
    /// which its timers count from).
    t_first: Option<u64>,
}

/// The piece of CPU work a `RunWall` does between two looks at the clock,
/// ns (baseline): rt-app's runtime loop does `loadwait(32)`, 32 µs of work,
/// then reads CLOCK_MONOTONIC. A piece that is preempted finishes when its
/// task runs again, so a `runtime` event ends at most this much after its
/// time is up, in rt-app as here.
const WALL_CHECK_NS: u64 = 32_000;

impl Script {
    /// The interpreter of definition `def`'s instance `instance`, a task
    /// that starts with CPU mask `mask`.
    pub(super) fn new(
        wl: Arc<FileWorkload>,
        run: Arc<RunShared>,
        def: usize,
        instance: u32,
        origin: Origin,
        mask: CpuMask,
    ) -> Script {
        let timers = vec![None; wl.tasks[def].timers];
        Script {
            sched: None,
            start_mask: mask,
            mask,
            wl,
            run,
            def,
            instance,
            origin,
            pc: 0,
            loops: Vec::new(),
            timers,
            last_from: None,
            queued: Vec::new(),
            wall_until: None,
            t_first: None,
        }
    }

    /// A timer's next activation, if it has one yet.
    fn timer(&self, slot: TimerSlot) -> Option<u64> {
        match slot {
            TimerSlot::Own(k) => self.timers[k],
            TimerSlot::Shared(k) => self.run.timers[k].get(),
        }
    }

    fn set_timer(&mut self, slot: TimerSlot, next: u64) {
        match slot {
            TimerSlot::Own(k) => self.timers[k] = Some(next),
            TimerSlot::Shared(k) => self.run.timers[k].set(next),
        }
    }

    fn send_to(&mut self, to: Target, via: Via, bytes: u32, cx: &StepCx<'_>) -> Action {
        let tag = 0;
        let one = |t: TaskRef| match via {
            Via::Message { sync } => Action::Send { to: t, sync, bytes, tag },
            Via::Pair => Action::Write { to: t, stream: Stream::Pair, bytes, tag },
            // Named by the receiver, whose socket or pipe it is.
            Via::Shared => Action::Write { to: t, stream: Stream::Shared(t as u32), bytes, tag },
            Via::Pipe => Action::Write { to: t, stream: Stream::Pipe(t as u32), bytes, tag },
            Via::Tcp => Action::TcpSend { to: t, bytes, tag },
        };
        match to {
            Target::Parent => cx.parent.map_or(Action::Progress(0), one),
            Target::Reply => self.last_from.map_or(Action::Progress(0), one),
            Target::Task { def, instance } => {
                let list = &self.run.ids[def];
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
                Via::Message { sync } if !self.run.ids[def].is_empty() => {
                    Action::SendAll { to: self.run.ids[def].as_slice().into(), sync, bytes, tag }
                }
                _ => {
                    let list = self.run.ids[def].clone();
                    self.queued = list.iter().rev().map(|&t| one(t)).collect();
                    self.queued.pop().unwrap_or(Action::Progress(0))
                }
            },
        }
    }

    /// A `fork` op. In a TOML file the child starts with its definition's
    /// parameters (`--policy` outranking its policy); an rt-app thread is
    /// created by pthread_create, so it inherits its creator's and sets
    /// its own as it starts ([`Instr::SchedParams`]).
    ///
    /// rt-app exits once a `fork` resource has made FORKS_LIMIT forks
    /// (rt-app.c run_event): the next fork of that task fails the run.
    fn fork(&self, def: usize) -> Action {
        let d = &self.wl.tasks[def];
        if self.wl.launch != Launch::AtStart && self.run.forks[def].fetch_add(1, Ordering::Relaxed) >= FORKS_LIMIT {
            let why = format!("{:?} reached its fork limit ({FORKS_LIMIT}), where rt-app exits (FORKS_LIMIT)", d.name);
            return Action::Fail(why.into());
        }
        let params = match self.wl.launch {
            Launch::AtStart => Some(self.wl.params(def, self.run.policy)),
            Launch::RtApp { .. } => None,
        };
        // An rt-app thread inherits its creator's mask, as this thread last set it.
        let mask = params.map_or(self.mask, |p| p.allowed);
        let program = Script::new(self.wl.clone(), self.run.clone(), def, 0, Origin::Forked, mask);
        Action::Fork(Box::new(ForkSpec { name: d.name.clone(), program: Box::new(program), params, ws_kb: d.ws_kb }))
    }

    /// rt-app's `threads_barrier` (glibc's pthread_barrier_wait): a
    /// thread main created counts itself in; all but the last sleep in
    /// futex_wait, and the last wakes them all with one futex_wake, oldest
    /// sleeper first (the futex hash bucket's order at one priority), as
    /// a broadcast to waiters without a mutex does. Thread 0 first reads
    /// the clock into `t_zero`. A forked thread passes (rt-app checks
    /// `data->forked`).
    fn startup_barrier(&mut self, now: u64) -> Option<Action> {
        let Origin::Started { index } = self.origin else { return None };
        if index == 0 {
            self.run.t_zero.set(now);
        }
        let cond = self.wl.startup_cond();
        let before = self.run.to_arrive.fetch_sub(1, Ordering::Relaxed);
        Some(if before > 1 { Action::CondWait { cond, mutex: None } } else { Action::CondSignal { cond, all: true } })
    }

    /// rt-app's `delay`: sleep until `t_zero` plus the delay
    /// (clock_nanosleep, TIMER_ABSTIME), which is also when the thread's
    /// timers start; none if that has passed. `t_zero` is the run's start
    /// until thread 0 has read it.
    fn delay(&mut self, ns: u64, now: u64) -> Option<Action> {
        let until = self.run.t_zero.get().unwrap_or(0).saturating_add(ns);
        self.t_first = Some(until);
        (until > now).then(|| Action::Sleep { ns: until - now, interruptible: false })
    }

    /// rt-app's set_thread_param (rt-app.c, with _set_thread_cfs) with
    /// scheduling object `id`: nothing if it is the object set last;
    /// else sched_setscheduler when the policy changes (always at the
    /// first call, when rt-app has no object yet), then the nice level for
    /// SCHED_OTHER and SCHED_BATCH (SCHED_IDLE keeps it). `policy` None
    /// (rt-app's `same`) keeps the policy set last; `--policy` outranks
    /// every policy the file names.
    fn sched_params(&mut self, id: u32, policy: Option<Policy>, nice: i32) -> Option<Action> {
        if self.sched.is_some_and(|(last, _)| last == id) {
            return None;
        }
        let last = self.sched.map(|(_, p)| p);
        let p = self.run.policy.or(policy).or(last).unwrap_or(Policy::Normal);
        self.sched = Some((id, p));
        let set_nice = matches!(p, Policy::Normal | Policy::Batch).then_some(Action::SetNice(nice));
        if last == Some(p) {
            return set_nice;
        }
        self.queued.extend(set_nice);
        Some(Action::SetPolicy(p))
    }

    /// rt-app's set_thread_affinity as a phase begins: `mask`, or the
    /// thread's starting mask, unless that is the mask it set last.
    fn phase_affinity(&mut self, mask: Option<CpuMask>) -> Option<Action> {
        let m = mask.unwrap_or(self.start_mask);
        (m != self.mask).then(|| {
            self.mask = m;
            Action::SetAffinity(Box::new(m))
        })
    }
}

impl Program for Script {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        if let Some(m) = cx.received.last() {
            self.last_from = Some(m.from);
        }
        if let Some(a) = self.queued.pop() {
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
                Instr::LoopBegin { count, .. } => {
                    self.t_first.get_or_insert(cx.now);
                    self.loops.push(count);
                }
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
                Instr::RunWall(ns) => {
                    let end = *self.wall_until.get_or_insert(cx.now.saturating_add(ns));
                    let left = end.saturating_sub(cx.now);
                    if left == 0 {
                        self.wall_until = None;
                        continue;
                    }
                    // Stay on this instruction: compute a piece, then
                    // look at the clock again.
                    self.pc -= 1;
                    return Action::Run(left.min(WALL_CHECK_NS));
                }
                Instr::Sleep(ns) => return Action::Sleep { ns, interruptible: false },
                Instr::StartupBarrier => {
                    if let Some(a) = self.startup_barrier(cx.now) {
                        return a;
                    }
                }
                Instr::Delay(ns) => {
                    if let Some(a) = self.delay(ns, cx.now) {
                        return a;
                    }
                }
                Instr::SchedParams { id, policy, nice } => {
                    if let Some(a) = self.sched_params(id, policy, nice) {
                        return a;
                    }
                }
                Instr::PhaseAffinity(m) => {
                    if let Some(a) = self.phase_affinity(m.map(|m| *m)) {
                        return a;
                    }
                }
                Instr::Timer { slot, period, absolute } => {
                    let last = self.timer(slot).or(self.t_first).unwrap_or(cx.now);
                    let next = last.saturating_add(period);
                    // Overrun: no sleep; a relative timer starts over from now.
                    let (stored, sleep) = if cx.now < next {
                        (next, Some(next - cx.now))
                    } else {
                        (if absolute { next } else { cx.now }, None)
                    };
                    self.set_timer(slot, stored);
                    if let Some(ns) = sleep {
                        return Action::Sleep { ns, interruptible: false };
                    }
                }
                Instr::Send { to, via, bytes } => return self.send_to(to, via, bytes, cx),
                Instr::Wait { all } => return Action::Wait { all },
                Instr::CondWait { cond, mutex } => return Action::CondWait { cond, mutex },
                Instr::CondSignal { cond, all } => return Action::CondSignal { cond, all },
                Instr::Lock(m) => return Action::Lock(m),
                Instr::Unlock(m) => return Action::Unlock(m),
                Instr::SemPost(k) => return Action::SemPost(k),
                Instr::SemWait(k) => return Action::SemWait(k),
                Instr::Barrier(b) => return Action::Barrier(b),
                Instr::Fork(d) => return self.fork(d),
                Instr::Exit => return Action::Exit,
                Instr::Yield => return Action::Yield,
                Instr::StartMeasuring => return Action::StartMeasuring,
                Instr::Progress(n) => return Action::Progress(n),
                Instr::Nice(n) => return Action::SetNice(n),
                // `--policy` outranks every policy the file names.
                Instr::Policy(p) => return Action::SetPolicy(self.run.policy.unwrap_or(p)),
                Instr::Affinity(m) => return Action::SetAffinity(m),
            }
        }
        Action::Progress(0)
    }
}

#[cfg(test)]
mod tests {
    use super::SharedTimer;

    /// A shared timer reads as not started until set; a deadline past the
    /// end of time (a period added to an activation near u64::MAX) stays a
    /// deadline rather than turning into "not started".
    #[test]
    fn a_shared_timer_keeps_any_deadline() {
        let t = SharedTimer::default();
        assert_eq!(t.get(), None);
        t.set(0);
        assert_eq!(t.get(), Some(0));
        t.set(u64::MAX);
        assert_eq!(t.get(), Some(u64::MAX - 1));
    }
}
