//! `hogs` (CPU-bound tasks with nice levels) and `starve` (starve.c,
//! hosts-and-costs.md §4.1).

use super::{CostField, Launcher, Tag, WorkloadOpts, ns, parent_task};
use crate::program::{Action, ForkSpec, Planner, Program, Queued, StepCx, TaskRef, TaskSpec};
use cfs_core::CpuMask;
use std::collections::VecDeque;

/// One unit of hog work: 1 ms of CPU, counted as one loop.
const HOG_LOOP_NS: f64 = 1_000_000.0;

/// `hogs`: a launcher (task 0) forks N CPU-bound tasks, their nice levels
/// cycling through `opts.nice` (all 0 if empty), then exits. Throughput is
/// loops (1 ms of work each) per second; per-task CPU time is in the
/// run's task statistics.
pub fn hogs(n: u32, opts: &WorkloadOpts) -> Vec<TaskSpec> {
    let params = opts.client_params();
    let nice_levels = opts.nice.clone();
    let launcher = Launcher::new(n, move |i| {
        let i = i as usize;
        let nice = if nice_levels.is_empty() { 0 } else { nice_levels[i % nice_levels.len()] };
        ForkSpec {
            name: format!("hog{i}(nice {nice})"),
            program: Box::new(Hog { ran: false }),
            params: Some(params.nice(nice)),
            ws_kb: 64,
        }
    });
    vec![parent_task("hogs", params, Queued::new(launcher))]
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
pub fn starve(opts: &WorkloadOpts, costs: StarveCosts) -> Vec<TaskSpec> {
    let pin = opts.pin_client.unwrap_or_else(|| CpuMask::single(0));
    let parent = StarveParent { forked: false, costs };
    vec![parent_task("starve-parent", opts.params(Some(pin)), Queued::new(parent))]
}

/// starve.c's own costs, which `--cost starve.FIELD=VALUE` replaces.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct StarveCosts {
    /// Signal delivery, the handler, sigreturn and re-entering nanosleep
    /// \[E\] (§4.1: 2-4 µs).
    pub handler_ns: f64,
    /// One `kill()`: syscall plus signal queueing \[E\] (§4.1: 1-1.5 µs).
    pub kill_ns: f64,
}

impl Default for StarveCosts {
    fn default() -> Self {
        StarveCosts { handler_ns: 3_000.0, kill_ns: 1_200.0 }
    }
}

/// Every field of [`StarveCosts`], as `--cost starve.FIELD` names it.
pub const STARVE_COST_FIELDS: [CostField<StarveCosts>; 2] = [
    CostField::ns("handler_ns", "[E] §4.1: 2-4 µs of delivery, handler, sigreturn, nanosleep", |c, x| {
        c.handler_ns = x
    }),
    CostField::ns("kill_ns", "[E] §4.1: 1-1.5 µs of kill() and signal queueing", |c, x| c.kill_ns = x),
];

/// Forks the child, then sleeps, running the handler whenever signals
/// interrupt the sleep.
struct StarveParent {
    forked: bool,
    costs: StarveCosts,
}

impl Planner for StarveParent {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        if !self.forked {
            self.forked = true;
            let child = StarveChild { parent: cx.me, sent: false, kill_ns: self.costs.kill_ns };
            q.push_back(Action::Fork(Box::new(ForkSpec {
                name: "starve-child".into(),
                program: Box::new(child),
                params: None,
                ws_kb: 16,
            })));
            return;
        }
        if !cx.received.is_empty() {
            // Signals arrived (however many: they coalesce): one handler run.
            q.push_back(Action::Run(ns(self.costs.handler_ns)));
            q.push_back(Action::Progress(1));
        }
        q.push_back(Action::Sleep { ns: 1_000_000_000, interruptible: true });
    }
}

/// Work, then `kill(getppid(), SIGUSR1)`, forever.
struct StarveChild {
    parent: TaskRef,
    sent: bool,
    kill_ns: f64,
}

impl Program for StarveChild {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Action {
        self.sent = !self.sent;
        if self.sent {
            Action::Run(ns(self.kill_ns))
        } else {
            Action::Send { to: self.parent, sync: false, bytes: 0, tag: Tag::Signal as u32 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// starve.c's child: a `kill()`'s work (1.2 µs), then one SIGUSR1 to
    /// its parent, for ever, strictly alternating.
    #[test]
    fn the_starve_child_works_then_signals_its_parent() {
        let mut child = StarveChild { parent: 4, sent: false, kill_ns: StarveCosts::default().kill_ns };
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut cx =
            StepCx { now: 0, me: 5, rng: &mut rng, received: &[], blocked: false, forked: None, parent: Some(4) };
        for _ in 0..3 {
            assert!(matches!(child.step(&mut cx), Action::Run(1_200)));
            let signal = child.step(&mut cx);
            assert!(matches!(signal, Action::Send { to: 4, sync: false, bytes: 0, tag } if tag == Tag::Signal as u32));
        }
    }
}
