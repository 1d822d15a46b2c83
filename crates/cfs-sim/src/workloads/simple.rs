//! `hogs` (CPU-bound tasks with nice levels) and `starve` (starve.c,
//! hosts-and-costs.md §4.1).

use super::{Tag, WorkloadOpts, ns};
use crate::program::{Action, ForkSpec, Program, StepCx, TaskRef, TaskSpec};
use cfs_core::CpuMask;
use std::collections::VecDeque;

/// One unit of hog work: 1 ms of CPU, counted as one loop.
const HOG_LOOP_NS: f64 = 1_000_000.0;

/// `hogs`: a launcher (task 0) forks N CPU-bound tasks, their nice levels
/// cycling through `opts.nice` (all 0 if empty), then exits. Throughput is
/// loops (1 ms of work each) per second; per-task CPU time is in the
/// run's task statistics.
pub fn hogs(n: u32, opts: &WorkloadOpts) -> Vec<TaskSpec> {
    let params = opts.params(opts.pin_client);
    let launcher =
        Launcher { left: n.max(1), index: 0, nice: opts.nice.clone(), opts: opts.clone(), q: VecDeque::new() };
    vec![TaskSpec {
        name: "hogs".into(),
        program: Box::new(launcher),
        params,
        cpu: params.allowed.first().unwrap_or(0),
        ws_kb: 16,
    }]
}

struct Launcher {
    left: u32,
    index: usize,
    nice: Vec<i32>,
    opts: WorkloadOpts,
    q: VecDeque<Action>,
}

impl Program for Launcher {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Action {
        if let Some(a) = self.q.pop_front() {
            return a;
        }
        if self.left == 0 {
            return Action::Exit;
        }
        self.left -= 1;
        let nice = if self.nice.is_empty() { 0 } else { self.nice[self.index % self.nice.len()] };
        let params = self.opts.params(self.opts.pin_client).nice(nice);
        let name = format!("hog{}(nice {nice})", self.index);
        self.index += 1;
        self.q.push_back(Action::Fork(Box::new(ForkSpec {
            name,
            program: Box::new(Hog { ran: false }),
            params: Some(params),
            ws_kb: 64,
        })));
        Action::Run(ns(50_000.0))
    }
}

/// Work 1 ms, count it, repeat.
struct Hog {
    ran: bool,
}

impl Program for Hog {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Action {
        self.ran = !self.ran;
        if self.ran { Action::Run(ns(HOG_LOOP_NS)) } else { Action::Progress(1) }
    }
}

/// `starve`: the parent (task 0) forks a child that loops on
/// `kill(getppid(), SIGUSR1)` forever and never sleeps (a non-sync
/// wakeup); the parent loops on `sleep(1)`, each signal interrupting it to
/// run the handler. Both pinned to one CPU (CPU 0 unless `--pin-client`),
/// as the LTP port runs it. Throughput: handler runs per second (pending
/// signals of one kind coalesce, as standard signals do).
pub fn starve(opts: &WorkloadOpts) -> Vec<TaskSpec> {
    let pin = opts.pin_client.unwrap_or_else(|| CpuMask::single(0));
    let params = opts.params(Some(pin));
    vec![TaskSpec {
        name: "starve-parent".into(),
        program: Box::new(StarveParent { forked: false, q: VecDeque::new() }),
        params,
        cpu: pin.first().unwrap_or(0),
        ws_kb: 16,
    }]
}

/// Signal delivery, the handler, sigreturn and re-entering nanosleep [E]
/// (§4.1: 2-4 µs).
const HANDLER_NS: f64 = 3_000.0;
/// One `kill()`: syscall plus signal queueing [E] (§4.1: 1-1.5 µs).
const KILL_NS: f64 = 1_200.0;

struct StarveParent {
    forked: bool,
    q: VecDeque<Action>,
}

impl Program for StarveParent {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        if let Some(a) = self.q.pop_front() {
            return a;
        }
        if !self.forked {
            self.forked = true;
            let child = StarveChild { parent: cx.me, sent: false };
            return Action::Fork(Box::new(ForkSpec {
                name: "starve-child".into(),
                program: Box::new(child),
                params: None,
                ws_kb: 16,
            }));
        }
        if !cx.received.is_empty() {
            // Signals arrived (however many: they coalesce): one handler run.
            self.q.push_back(Action::Progress(1));
            self.q.push_back(Action::Sleep { ns: 1_000_000_000, interruptible: true });
            return Action::Run(ns(HANDLER_NS));
        }
        Action::Sleep { ns: 1_000_000_000, interruptible: true }
    }
}

struct StarveChild {
    parent: TaskRef,
    sent: bool,
}

impl Program for StarveChild {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Action {
        self.sent = !self.sent;
        if self.sent {
            Action::Run(ns(KILL_NS))
        } else {
            Action::Send { to: self.parent, sync: false, bytes: 0, tag: Tag::Signal as u32 }
        }
    }
}
