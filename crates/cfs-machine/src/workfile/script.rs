//! Running a file workload: the [`Program`] that interprets one task
//! definition's resolved code for one instance.

use super::*;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Interprets a task definition's code.
pub(super) struct Script {
    wl: Arc<FileWorkload>,
    ids: Arc<Vec<Vec<TaskRef>>>,
    def: usize,
    instance: u32,
    pc: usize,
    /// Iterations left of each open loop, innermost last (None = forever).
    pub(super) loops: Vec<Option<u64>>,
    /// Next deadline of each of the instance's own timers.
    timers: Vec<Option<u64>>,
    /// The run's shared timers.
    shared: Arc<[SharedTimer]>,
    last_from: Option<TaskRef>,
    /// Pending sends of a broadcast.
    fanout: Vec<Action>,
    /// When the `RunWall` in progress ends.
    wall_until: Option<u64>,
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
    pub(super) fn new(
        wl: Arc<FileWorkload>,
        ids: Arc<Vec<Vec<TaskRef>>>,
        shared: Arc<[SharedTimer]>,
        def: usize,
        instance: u32,
    ) -> Script {
        let timers = vec![None; wl.tasks[def].timers];
        Script {
            wl,
            ids,
            def,
            instance,
            pc: 0,
            loops: Vec::new(),
            timers,
            shared,
            last_from: None,
            fanout: Vec::new(),
            wall_until: None,
            t_first: None,
        }
    }

    /// A timer's next activation, if it has one yet.
    fn timer(&self, slot: TimerSlot) -> Option<u64> {
        match slot {
            TimerSlot::Own(k) => self.timers[k],
            TimerSlot::Shared(k) => self.shared[k].get(),
        }
    }

    fn set_timer(&mut self, slot: TimerSlot, next: u64) {
        match slot {
            TimerSlot::Own(k) => self.timers[k] = Some(next),
            TimerSlot::Shared(k) => self.shared[k].set(next),
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
            program: Box::new(Script::new(self.wl.clone(), self.ids.clone(), self.shared.clone(), def, 0)),
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
                Instr::Policy(p) => return Action::SetPolicy(p),
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
