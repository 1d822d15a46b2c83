//! The task vocabulary: what a simulated task can *do*.
//!
//! A task is a [`Program`]: each time the engine needs the task's next step
//! it calls [`Program::step`] and gets one [`Action`]. The engine knows only
//! these actions; the built-in workloads (hand-written state machines) and
//! workload files (interpreted op lists, see [`crate::workfile`]) both speak
//! it. Times in actions are CPU work at the 2.4 GHz Core 2 baseline; the
//! engine scales them by the host's clock factor and adds jitter.
//!
//! Wakeups are messages: [`Action::Send`] appends a [`Msg`] to the target's
//! mailbox and, if the target is blocked in [`Action::Wait`], wakes it
//! through the scheduler. Messages are counted, never lost: a send to a task
//! that is not waiting is found by its next `Wait`. [`Action::Write`] is the
//! same for an AF_UNIX stream socket ([`Stream`]): it blocks while the
//! socket's send buffer is full, and the reader taking the data can wake
//! the writer. [`Action::Select`] is the `Wait` of a select() loop, which
//! re-polls when such a wakeup finds nothing to read.

use crate::dist::Dist;
use cfs_core::{CpuMask, Policy, TaskParams};
use rand_pcg::Pcg64Mcg;
use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;

/// A task's index in the engine (equal to its `cfs_core::TaskId` number).
pub type TaskRef = usize;

/// One wakeup/message as the receiver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    /// The sending task.
    pub from: TaskRef,
    /// The CPU the sender ran on when it sent (where the data is hot).
    pub cpu: usize,
    /// Payload bytes (they cross caches to reach the receiver).
    pub bytes: u32,
    /// A program-defined tag (e.g. query / reply / terminate).
    pub tag: u32,
    /// Written on an AF_UNIX stream socket or a pipe ([`Action::Write`]),
    /// and on which: taking it frees its share of that buffer, which can
    /// wake the writer (or every writer blocked on the buffer).
    pub stream: Option<Stream>,
}

/// What an [`Action::Write`] writes into, which decides when the write
/// blocks and when the reader taking its data wakes the writer again.
///
/// AF_UNIX stream sockets count every skb a socket has written and its
/// reader has not yet taken in the writing socket's `sk_wmem_alloc`, at
/// its truesize; a write finding that count at `sk_sndbuf` blocks
/// (`sock_alloc_send_pskb` → `sock_wait_for_wmem`) until the reader has
/// drained it to a quarter ([`crate::engine::Sockets::sndbuf`]). Whose
/// buffer that is depends on how the workload made its descriptors.
///
/// A pipe holds at most 16 pages (`PIPE_BUFFERS`); a write of less than a
/// page merges into the last page if it fits, and a write that needs a new
/// page when all 16 are in use blocks until the reader has emptied one
/// (fs/pipe.c, [`crate::engine::PIPE_BUFFERS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stream {
    /// An AF_UNIX stream socket: the writer's own connection to this
    /// reader, one socket per (writer, reader) pair, like each of
    /// pgbench's connections.
    Pair,
    /// An AF_UNIX stream socket shared by several writers, named by a
    /// workload-chosen id unique within the run: hackbench's senders all
    /// inherit the write end of each receiver's socketpair across fork, so
    /// the 20 of a group share that receiver's buffer.
    Shared(u32),
    /// A pipe, named like [`Stream::Shared`]: hackbench's `-pipe` mode
    /// gives each receiver one pipe that its group's senders share.
    Pipe(u32),
}

/// A task to create with [`Action::Fork`].
pub struct ForkSpec {
    /// Display name (trace, statistics).
    pub name: String,
    /// What the child does.
    pub program: Box<dyn Program>,
    /// Scheduling parameters; `None` inherits the parent's.
    pub params: Option<TaskParams>,
    /// Private working set in KB (what a migration must refill).
    pub ws_kb: u32,
}

impl fmt::Debug for ForkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForkSpec").field("name", &self.name).field("params", &self.params).finish_non_exhaustive()
    }
}

/// One step of a task.
#[derive(Debug)]
pub enum Action {
    /// Compute for this many ns (baseline CPU time, before clock scaling
    /// and jitter). Preemptible by interrupts (tick, IPI, hrtick).
    Run(u64),
    /// Compute for a time drawn from a distribution.
    RunDist(Dist),
    /// Send a message to `to`, waking it if it waits (a socket write, a
    /// signal, a futex wake). `sync` is the kernel's sync-wakeup hint.
    Send {
        /// Receiver.
        to: TaskRef,
        /// `wake_up_interruptible_sync` (socket data) vs plain wake_up.
        sync: bool,
        /// Payload bytes.
        bytes: u32,
        /// Program-defined tag.
        tag: u32,
    },
    /// A write on a loopback TCP connection (tbench): a message to `to`
    /// whose receive path runs as the NET_RX softirq on the sender's CPU
    /// before the write returns, so its wakeup is an interrupt-time one
    /// (in 2.6.32 the sender's wakeup statistics are not updated,
    /// try_to_wake_up's `in_interrupt()` test). A reader blocked in recv
    /// is woken through tcp_prequeue, without the sync hint; a reader in
    /// select() or poll() through sock_def_readable, with it. Unlike
    /// [`Action::Send`], it does not end an interruptible
    /// [`Action::Sleep`]: data is no signal.
    TcpSend {
        /// Receiver.
        to: TaskRef,
        /// Payload bytes.
        bytes: u32,
        /// Program-defined tag.
        tag: u32,
    },
    /// One system call that wakes several tasks: a write on a socket or
    /// pipe that all of them poll (hackbench's kick-off on `wakefd`), a
    /// semop that releases every waiter. Each of `to` gets the message
    /// and, if it sleeps in a wait, is woken as by [`Action::Send`], in
    /// the wait queue's order rather than the order given: the newest
    /// sleeper first, since poll's add_wait_queue and a wait-for-zero
    /// semop both put a sleeper at the queue's head, where the wakeup
    /// starts. The waker pays one system call and every wakeup, and a
    /// preemption any of them causes takes effect only when the call
    /// returns, after the last, as `__wake_up_common` wakes the whole
    /// queue under its lock.
    SendAll {
        /// Receivers (woken newest sleeper first, whatever their order here).
        to: std::sync::Arc<[TaskRef]>,
        /// Sync-wakeup hint, for every wakeup.
        sync: bool,
        /// Payload bytes of each message.
        bytes: u32,
        /// Program-defined tag.
        tag: u32,
    },
    /// A write of `bytes` to `to` on an AF_UNIX stream socket or a pipe
    /// ([`Stream`]): a message, and a sync wakeup of the reader if it waits
    /// (`sock_def_readable` and `pipe_write` both use
    /// `wake_up_interruptible_sync`), as `Send { sync: true }`. The write
    /// blocks while the stream's buffer is full. When the reader takes it,
    /// the kernel frees its share of the buffer, which wakes every writer
    /// blocked on it once there is room (a socket drained to a quarter, a
    /// pipe page emptied); and, on a socket, the writer too if it sleeps
    /// on it in `Select` or `Wait` (`unix_write_space`): the engine models
    /// that last wakeup when [`crate::engine::Sockets::write_space_wakeups`]
    /// is on.
    Write {
        /// Reader.
        to: TaskRef,
        /// The socket or pipe written to (whose buffer the write fills).
        stream: Stream,
        /// Payload bytes.
        bytes: u32,
        /// Program-defined tag.
        tag: u32,
    },
    /// select()/poll() over the task's sockets: a first pass (`entry_ns`,
    /// then `poll_ns` for each socket of `fds`), then take every message it
    /// found and return (`exit_ns`), or sleep until there is one, like
    /// `Wait { all: true }`. After a wakeup (or a voluntary switch) the
    /// call polls every socket again (`repoll_ns`) and, if it finds
    /// something, returns paying `slept_ns` (poll_freewait and the way
    /// out); if not (a write-space wakeup, see [`Action::Write`]) it sleeps
    /// again, as do_select's loop does. All costs are baseline ns of CPU
    /// work.
    ///
    /// The pass is a window, as in do_select (e490517a fs/select.c:184-288):
    /// the task is TASK_INTERRUPTIBLE throughout and polls its sockets one
    /// after another in `fds` order (socket `i` at `entry_ns + (i + ½) ×
    /// poll_ns`), and each socket polled until one is found ready, that one
    /// included, puts it on that socket's wait queue. A message on a socket
    /// not yet polled is found; one on a socket already polled is not, and
    /// if that socket holds the task on its wait queue, the sender's wakeup
    /// finds it running (try_to_wake_up's `out_running` path, with
    /// check_preempt_curr) and makes it TASK_RUNNING. A pass that found
    /// nothing goes to schedule_timeout straight after its last poll (so
    /// `exit_ns` is not spent then); one made TASK_RUNNING calls schedule()
    /// as a runnable task, a voluntary switch, and polls again when it runs
    /// next. That next pass is a window too, with every socket registered
    /// since the first: the first message during it takes `out_running`
    /// (later ones find the task TASK_RUNNING), and a message is found if
    /// its socket is still to be polled or was readable already. (On the
    /// 2.6.32 profiles the pass runs TASK_RUNNING,
    /// 5f820f648c9: such a wakeup only marks the poll table `triggered`,
    /// and the pass polls again without schedule().) A message from a task
    /// not in `fds` is taken when the pass ends.
    /// [`crate::engine::Sockets::poll_window`] turns the window off: then
    /// the whole call is one stretch of work, every message present
    /// when it ends is found, and a call that slept pays `repoll_ns +
    /// slept_ns` when it is back in user space.
    Select {
        /// System call entry and copying the descriptor sets in.
        entry_ns: u64,
        /// One poll of one socket.
        poll_ns: u64,
        /// Copying the results out and returning.
        exit_ns: u64,
        /// One poll pass over every socket after a wakeup.
        repoll_ns: u64,
        /// What a call that slept or rescheduled pays besides its later
        /// passes: poll_wait's registrations and poll_freewait's removals,
        /// and the way out.
        slept_ns: u64,
        /// The sockets polled, named by their peer task, in descriptor
        /// order.
        fds: std::sync::Arc<[TaskRef]>,
    },
    /// Block until a message is pending. `all`: take every pending message
    /// (select/poll); otherwise exactly one (a semaphore down).
    Wait {
        /// Drain all pending messages.
        all: bool,
    },
    /// Sleep on a timer. `interruptible`: a message ends it early (a
    /// signal interrupting nanosleep).
    Sleep {
        /// Duration, ns (not scaled: wall time).
        ns: u64,
        /// Whether a message ends the sleep.
        interruptible: bool,
    },
    /// pthread_cond_wait on a condition variable (rt-app `wait`): release
    /// `mutex` if one is named, sleep until a signal, then take the mutex
    /// again, sleeping on it if it is taken ([`crate::engine::sync`]).
    CondWait {
        /// The condition.
        cond: usize,
        /// The mutex it is used with.
        mutex: Option<usize>,
    },
    /// Signal a condition variable (rt-app `signal` / `broad`): wake its
    /// first waiter, or release every one; lost if no one waits. A
    /// broadcast wakes the first waiter and requeues the rest that wait
    /// with a mutex onto it, as glibc's FUTEX_CMP_REQUEUE does
    /// ([`crate::engine::sync`]).
    CondSignal {
        /// The condition.
        cond: usize,
        /// Release every waiter (`broad`) rather than one.
        all: bool,
    },
    /// pthread_mutex_lock: free if the mutex is, else sleep until an
    /// unlock and try again.
    Lock(usize),
    /// pthread_mutex_unlock: free, plus a futex wakeup if someone sleeps on
    /// the mutex.
    Unlock(usize),
    /// sem_post: wake the first sleeper, or count the post.
    SemPost(usize),
    /// sem_wait: take a counted post, or sleep until one is handed over.
    SemWait(usize),
    /// rt-app's `barrier`: wait until every user has arrived.
    Barrier(usize),
    /// fork(): the child is placed by the scheduler (sched_balance_self).
    Fork(Box<ForkSpec>),
    /// sched_yield().
    Yield,
    /// Exit the task.
    Exit,
    /// Stop the whole run with an error saying why, as a benchmark that
    /// exits with a failure status ends its run (rt-app's fork limit).
    Fail(Box<str>),
    /// Read `lines` cache lines last written by each of `peers` (shared
    /// state such as socket wait queues or PostgreSQL's PGPROC array): each
    /// costs a dirty-line transfer priced by the distance from this CPU to
    /// the CPU the peer last ran on. Exited peers cost nothing.
    Touch {
        /// The tasks whose lines are read.
        peers: std::sync::Arc<[TaskRef]>,
        /// Lines per peer.
        lines: f64,
    },
    /// Count units of work done (transactions, bytes, messages) towards the
    /// run's throughput. Costs nothing.
    Progress(u64),
    /// Start the throughput window now, as a benchmark reads its clock
    /// once its workers are ready (hackbench's `gettimeofday` before it
    /// kicks its children off): progress counted so far is dropped, and
    /// the run's window runs from here to its end, whatever warm-up
    /// [`crate::engine::Limits`] set. Costs nothing (a vDSO clock read).
    StartMeasuring,
    /// set_user_nice on itself.
    SetNice(i32),
    /// sched_setscheduler on itself.
    SetPolicy(Policy),
    /// sched_setaffinity on itself. The mask is boxed because a `CpuMask`
    /// is 128 bytes: held inline, it would make every `Action` that large
    /// and every push and pop of a program's step queue a 136-byte copy.
    SetAffinity(Box<CpuMask>),
}

/// What a program sees when asked for its next step.
#[derive(Debug)]
pub struct StepCx<'a> {
    /// Simulated time, ns.
    pub now: u64,
    /// This task.
    pub me: TaskRef,
    /// The run's random stream (seeded: same seed, same draws).
    pub rng: &'a mut Pcg64Mcg,
    /// Messages taken by the last `Wait` (empty after other actions).
    pub received: &'a [Msg],
    /// Whether the last `Wait`/`Sleep` actually blocked.
    pub blocked: bool,
    /// The child created by the last `Fork`.
    pub forked: Option<TaskRef>,
    /// The task that created this one (None for initial tasks).
    pub parent: Option<TaskRef>,
}

/// A task's behaviour.
pub trait Program {
    /// The next action. Called again after the previous one completed.
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action;
}

/// A program that decides a few actions at a time (work, then a send, then
/// a wait): the usual shape of a hand-written task. Run it as a
/// [`Program`] with [`Queued`].
pub trait Planner {
    /// Queues the task's next actions, in order. Called only once every
    /// action queued before has been taken, so `cx` shows what the last of
    /// them brought (the messages of a `Wait`, the child of a `Fork`).
    /// Queuing nothing ends the task.
    fn plan(&mut self, cx: &mut StepCx<'_>, queue: &mut VecDeque<Action>);
}

/// A [`Planner`] as a [`Program`]: each step takes the next queued action,
/// asking the planner for more when none is left.
pub struct Queued<P> {
    planner: P,
    queue: VecDeque<Action>,
}

impl<P: Planner> Queued<P> {
    /// `planner` with nothing queued yet.
    pub fn new(planner: P) -> Queued<P> {
        Queued { planner, queue: VecDeque::new() }
    }
}

impl<P: Planner + 'static> Queued<P> {
    /// `planner` as a boxed program, ready for a [`TaskSpec`] or [`ForkSpec`].
    pub fn boxed(planner: P) -> Box<dyn Program> {
        Box::new(Queued::new(planner))
    }
}

impl<P> fmt::Debug for Queued<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queued").field("queue", &self.queue).finish_non_exhaustive()
    }
}

impl<P: Planner> Program for Queued<P> {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        if let Some(a) = self.queue.pop_front() {
            return a;
        }
        self.planner.plan(cx, &mut self.queue);
        self.queue.pop_front().unwrap_or(Action::Exit)
    }
}

/// Steps shared by a tree of tasks: each step of any program wrapped by
/// [`StepBudget::wrap`] (its forked children included) spends one, and once
/// none is left every such program exits. Bounds the work of an arbitrary
/// workload (fuzzing, untrusted workload files) without touching its logic.
#[derive(Clone, Debug)]
pub struct StepBudget(Rc<Cell<u32>>);

impl StepBudget {
    /// A budget of `steps` steps.
    pub fn new(steps: u32) -> StepBudget {
        StepBudget(Rc::new(Cell::new(steps)))
    }

    /// Steps not yet spent.
    pub fn left(&self) -> u32 {
        self.0.get()
    }

    /// `inner`, spending this budget (and passing it on to its children).
    pub fn wrap(&self, inner: Box<dyn Program>) -> Box<dyn Program> {
        Box::new(Budgeted { inner, budget: self.clone() })
    }

    /// Wraps every task's program.
    pub fn wrap_all(&self, tasks: &mut [TaskSpec]) {
        for t in tasks {
            let inner = std::mem::replace(&mut t.program, exit_program());
            t.program = self.wrap(inner);
        }
    }
}

struct Budgeted {
    inner: Box<dyn Program>,
    budget: StepBudget,
}

/// A program that exits at once (a placeholder while a program is moved).
fn exit_program() -> Box<dyn Program> {
    Box::new(FnProgram(|_: &mut StepCx<'_>| Action::Exit))
}

impl Program for Budgeted {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        let left = self.budget.left();
        if left == 0 {
            return Action::Exit;
        }
        self.budget.0.set(left - 1);
        match self.inner.step(cx) {
            Action::Fork(mut spec) => {
                let inner = std::mem::replace(&mut spec.program, exit_program());
                spec.program = self.budget.wrap(inner);
                Action::Fork(spec)
            }
            a => a,
        }
    }
}

/// A program from a closure, handy for tests and tiny workloads.
pub struct FnProgram<F>(pub F);

impl<F> fmt::Debug for FnProgram<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnProgram")
    }
}

impl<F: FnMut(&mut StepCx<'_>) -> Action> Program for FnProgram<F> {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        (self.0)(cx)
    }
}

/// A task present at the start of a run.
pub struct TaskSpec {
    /// Display name.
    pub name: String,
    /// What it does.
    pub program: Box<dyn Program>,
    /// Scheduling parameters.
    pub params: TaskParams,
    /// CPU it is created on (then the scheduler moves it as it likes).
    pub cpu: usize,
    /// Private working set, KB.
    pub ws_kb: u32,
    /// The side of a client/server workload it belongs to, if any; what
    /// it forks belongs to the same side (a `--switch` policy for one side
    /// reaches them all).
    pub side: Option<Side>,
}

/// A side of a client/server workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The server-side daemon (postmaster, tbench_srv, mysqld) and what it
    /// forks.
    Server,
    /// The benchmark driver (pgbench, tbench, sysbench) and its clients.
    Client,
}

impl Side {
    /// `client` or `server`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Client => "client",
        }
    }
}

impl fmt::Debug for TaskSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskSpec").field("name", &self.name).field("cpu", &self.cpu).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Queues two runs per call, the second as long as the messages seen.
    struct Twice {
        calls: u64,
    }

    impl Planner for Twice {
        fn plan(&mut self, cx: &mut StepCx<'_>, queue: &mut VecDeque<Action>) {
            self.calls += 1;
            if self.calls <= 2 {
                queue.push_back(Action::Run(self.calls));
                queue.push_back(Action::Run(cx.received.len() as u64));
            }
        }
    }

    #[test]
    fn queued_takes_the_queue_first_and_exits_on_an_empty_plan() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let msg = Msg { from: 1, cpu: 0, bytes: 0, tag: 0, stream: None };
        let mut p = Queued::new(Twice { calls: 0 });
        let mut steps = Vec::new();
        for received in [&[msg][..], &[msg, msg], &[], &[msg, msg, msg], &[]] {
            let mut cx = StepCx { now: 0, me: 0, rng: &mut rng, received, blocked: false, forked: None, parent: None };
            steps.push(format!("{:?}", p.step(&mut cx)));
        }
        // Planned on the 1st (1 message) and 3rd (none) steps; the 5th plans nothing.
        assert_eq!(steps, ["Run(1)", "Run(1)", "Run(2)", "Run(0)", "Exit"]);
    }

    fn cx(rng: &mut Pcg64Mcg) -> StepCx<'_> {
        StepCx { now: 0, me: 0, rng, received: &[], blocked: false, forked: None, parent: None }
    }

    #[test]
    fn a_step_budget_is_shared_with_forked_children() {
        // A parent that forks a child on its 2nd step and otherwise runs; the child runs.
        // Budget 4: parent Run, parent Fork (its child wrapped), child Run, parent Run,
        // then both exit.
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let budget = StepBudget::new(4);
        let mut n = 0;
        let mut parent = budget.wrap(Box::new(FnProgram(move |_: &mut StepCx<'_>| {
            n += 1;
            if n == 2 {
                Action::Fork(Box::new(ForkSpec {
                    name: "child".into(),
                    program: Box::new(FnProgram(|_: &mut StepCx<'_>| Action::Run(7))),
                    params: None,
                    ws_kb: 0,
                }))
            } else {
                Action::Run(n)
            }
        })));
        assert_eq!(format!("{:?}", parent.step(&mut cx(&mut rng))), "Run(1)");
        let Action::Fork(spec) = parent.step(&mut cx(&mut rng)) else { panic!("a fork") };
        let mut child = spec.program;
        assert_eq!(format!("{:?}", child.step(&mut cx(&mut rng))), "Run(7)");
        assert_eq!(format!("{:?}", parent.step(&mut cx(&mut rng))), "Run(3)");
        assert_eq!(budget.left(), 0);
        assert_eq!(format!("{:?}", parent.step(&mut cx(&mut rng))), "Exit");
        assert_eq!(format!("{:?}", child.step(&mut cx(&mut rng))), "Exit");
    }

    #[test]
    fn wrap_all_puts_every_task_on_the_one_budget() {
        // Two tasks that would run forever, on a budget of 3: the first two
        // steps of task 0 and the first of task 1 spend it, then both exit.
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let spec = |name: &str, len: u64| TaskSpec {
            name: name.into(),
            program: Box::new(FnProgram(move |_: &mut StepCx<'_>| Action::Run(len))),
            params: TaskParams::normal(),
            cpu: 0,
            ws_kb: 0,
            side: None,
        };
        let mut tasks = vec![spec("a", 5), spec("b", 9)];
        let budget = StepBudget::new(3);
        budget.wrap_all(&mut tasks);
        let mut step = |i: usize| format!("{:?}", tasks[i].program.step(&mut cx(&mut rng)));
        assert_eq!([step(0), step(0), step(1), step(1), step(0)], ["Run(5)", "Run(5)", "Run(9)", "Exit", "Exit"]);
    }

    #[test]
    fn specs_and_programs_print_what_identifies_them() {
        // Programs are closures or planners, which have no Debug of their
        // own; the specs print their name and placement, a queued program its queue.
        let task = TaskSpec {
            name: "pgbench".into(),
            program: exit_program(),
            params: TaskParams::normal(),
            cpu: 2,
            ws_kb: 64,
            side: Some(Side::Client),
        };
        assert_eq!(format!("{task:?}"), r#"TaskSpec { name: "pgbench", cpu: 2, .. }"#);
        let fork = ForkSpec { name: "backend".into(), program: exit_program(), params: None, ws_kb: 0 };
        assert_eq!(format!("{fork:?}"), r#"ForkSpec { name: "backend", params: None, .. }"#);
        assert_eq!(format!("{:?}", FnProgram(|_: &mut StepCx<'_>| Action::Exit)), "FnProgram");
        let mut q = Queued::new(Twice { calls: 0 });
        q.queue.push_back(Action::Run(3));
        assert_eq!(format!("{q:?}"), "Queued { queue: [Run(3)], .. }");
    }
}
