//! Fan-out workloads: `messaging` (hackbench-style groups) and
//! `volanomark` (chat rooms where one receiver wakes the 19 senders of its
//! room, hosts-and-costs.md §4.2). Both end when every receiver has all its
//! messages; throughput is messages received per second, from the start
//! of the test: both hold their senders until every task exists, so all
//! groups or rooms run at once.
//!
//! A hackbench sender blocks once its receiver's socket holds sk_sndbuf
//! of unread messages (348 of them at the default 124,928 bytes): the
//! group's 20 senders write on one shared socket per receiver
//! ([`Stream::Shared`]), and the engine blocks writes on a full buffer
//! ([`crate::engine::Sockets::sndbuf`]). With `--pipe` they share one
//! pipe per receiver ([`Stream::Pipe`]), which blocks them once its 16
//! pages are full (640 messages).
//!
//! hackbench also holds its children at a start barrier, and times only
//! what follows it (hackbench.c's `ready()` and `main()`): each child
//! writes one byte on the shared `ready` socketpair and polls `wakefd`;
//! the parent reads a byte per child, reads the clock, and kicks them all
//! off with one write on `wakefd`, which wakes every poller (sync, as
//! `sock_def_readable` wakes), the last to poll first (poll queues a
//! sleeper at the head of the socket's wait queue). The model does the same ([`Tag::Started`],
//! [`Action::StartMeasuring`], one [`Action::SendAll`] of a sync
//! [`Tag::Go`] to every child), so its messages per second are
//! hackbench's count over hackbench's `Time:`.

use super::{CostField, StartBarrier, Tag, WorkloadOpts, ns, parent_task};
use crate::program::{Action, ForkSpec, Planner, Program, Queued, StepCx, Stream, TaskRef, TaskSpec};
use std::collections::VecDeque;

/// hackbench: senders and receivers per group.
const GROUP: usize = 20;
/// VolanoMark: users per room.
const ROOM: usize = 20;

/// hackbench's own costs, which `--cost messaging.FIELD=VALUE` replaces.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct MessagingCosts {
    /// A sender's `write()` of a 100-byte message on a unix socket \[E:
    /// syscall plus a 100-byte copy and the socket locking, ~1-2 µs at
    /// 2.4 GHz\].
    pub send_ns: f64,
    /// A receiver's `read()` of one message \[E, the same\].
    pub recv_ns: f64,
    /// A sender's or receiver's working set, KB \[E: a forked child's
    /// stack and buffers\].
    pub ws_kb: u32,
}

impl Default for MessagingCosts {
    fn default() -> Self {
        MessagingCosts { send_ns: 2_000.0, recv_ns: 1_500.0, ws_kb: 32 }
    }
}

/// Every field of [`MessagingCosts`], as `--cost messaging.FIELD` names it.
pub const MESSAGING_COST_FIELDS: [CostField<MessagingCosts>; 3] = [
    CostField::ns("send_ns", "[E] a 100-byte unix-socket write(): syscall, copy, socket lock, ~1-2 µs", |c, x| {
        c.send_ns = x
    }),
    CostField::ns("recv_ns", "[E] the matching read()", |c, x| c.recv_ns = x),
    CostField::kb("ws_kb", "[E] a forked child's stack and buffers", |c, x| c.ws_kb = x as u32),
];

/// VolanoMark's own costs, which `--cost volanomark.FIELD=VALUE` replaces:
/// per-hop CPU, JVM plus kernel \[E\] (hosts-and-costs.md §4.2: 5-15 µs
/// per hop).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct VolanoCosts {
    /// A client sender's message out.
    pub client_send_ns: f64,
    /// The server receiver taking it in.
    pub server_recv_ns: f64,
    /// Its Java notify of one of the room's other server senders.
    pub notify_ns: f64,
    /// A server sender's write to its client.
    pub server_send_ns: f64,
    /// A client receiver taking a message in.
    pub client_recv_ns: f64,
    /// Each of the four threads' working set, KB \[E\].
    pub ws_kb: u32,
}

impl Default for VolanoCosts {
    fn default() -> Self {
        VolanoCosts {
            client_send_ns: 8_000.0,
            server_recv_ns: 8_000.0,
            notify_ns: 1_000.0,
            server_send_ns: 6_000.0,
            client_recv_ns: 6_000.0,
            ws_kb: 32,
        }
    }
}

/// Every field of [`VolanoCosts`], as `--cost volanomark.FIELD` names it.
pub const VOLANO_COST_FIELDS: [CostField<VolanoCosts>; 6] = [
    CostField::ns("client_send_ns", "[E] §4.2: 5-15 µs of JVM and kernel per hop", |c, x| c.client_send_ns = x),
    CostField::ns("server_recv_ns", "[E] §4.2: 5-15 µs of JVM and kernel per hop", |c, x| c.server_recv_ns = x),
    CostField::ns("notify_ns", "[E] a Java notify of one of the room's server senders", |c, x| c.notify_ns = x),
    CostField::ns("server_send_ns", "[E] §4.2: 5-15 µs of JVM and kernel per hop", |c, x| c.server_send_ns = x),
    CostField::ns("client_recv_ns", "[E] §4.2: 5-15 µs of JVM and kernel per hop", |c, x| c.client_recv_ns = x),
    CostField::kb("ws_kb", "[E] a Java thread's hot state", |c, x| c.ws_kb = x as u32),
];

/// `messaging`: `groups` groups of 20 senders and 20 receivers; each sender
/// writes `loops` (default 100) 100-byte messages to every receiver of its
/// group over a unix socket (sync wakeups), the write end of the
/// receiver's socketpair that all 20 inherit, so they share its send
/// buffer and block together when it is full; each receiver reads one
/// message per `read()`. With `pipe` (hackbench -pipe) each receiver has
/// a pipe instead, which holds 16 pages of 40 messages. The parent (task
/// 0) forks them all, waits until every child is ready, starts the
/// throughput window and releases them (the module's start barrier), then
/// reaps every child as hackbench's wait() loop does: each exit wakes it,
/// sync (`__wake_up_parent`).
pub fn messaging(groups: u32, opts: &WorkloadOpts, costs: MessagingCosts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
    fanout_tasks(Parent { kind: Kind::Messaging, hb: costs, ..Parent::default() }, groups, opts)
}

/// `volanomark`: `rooms` rooms of 20 users, 4 tasks per user (client
/// sender, server receiver, server sender, client receiver); each user
/// sends `loops` (default 100) messages, one at a time, waiting for the
/// server's acknowledgement; the server receiver wakes the server senders
/// of the 19 other users (Java notify: plain, non-sync wakeups), each of
/// which writes to its client receiver. Clients and server talk over
/// loopback TCP ([`Action::TcpSend`]: the receive softirq wakes a thread
/// blocked in its socket read without the sync hint). The parent forks
/// every room's threads first, and only then reads the clock and starts
/// the test, releasing every client sender at once (`Parent::kick_off`).
pub fn volanomark(rooms: u32, opts: &WorkloadOpts, costs: VolanoCosts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
    fanout_tasks(Parent { kind: Kind::Volanomark, vm: costs, ..Parent::default() }, rooms, opts)
}

/// The parent (task 0, the one the run waits for), which forks `groups`
/// groups or rooms of `parent.kind` and waits for their receivers.
fn fanout_tasks(parent: Parent, groups: u32, opts: &WorkloadOpts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
    let loops = opts.loops.unwrap_or(100).max(1);
    let kind = parent.kind;
    let parent = Parent { groups: groups.max(1) as usize, loops, pipe: opts.pipe, ..parent };
    let name = match kind {
        Kind::Messaging => "hackbench",
        Kind::Volanomark => "volano",
    };
    (vec![parent_task(name, opts.client_params(), parent)], vec![0])
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Messaging,
    Volanomark,
}

/// Which kind of child the parent is forking for the current group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Stage {
    #[default]
    Receivers,
    ServerSenders,
    ServerReceivers,
    Senders,
    Waiting,
}

/// Forks every group's tasks, then waits for their "done": every child's
/// exit under hackbench (its wait() reaps them all), the client receivers'
/// under VolanoMark.
#[derive(Default)]
struct Parent {
    kind: Kind,
    /// The costs of hackbench's children, or of VolanoMark's.
    hb: MessagingCosts,
    vm: VolanoCosts,
    groups: usize,
    loops: u32,
    /// hackbench -pipe: one pipe per receiver instead of a socketpair.
    pipe: bool,
    group: usize,
    stage: Stage,
    /// Children of the current group, by stage.
    recv: Vec<TaskRef>,
    srv_send: Vec<TaskRef>,
    srv_recv: Vec<TaskRef>,
    /// Which list the last fork's child goes to.
    pending: Option<Stage>,
    forked_in_stage: usize,
    /// hackbench's start barrier: every child forked and the ready bytes
    /// read so far.
    barrier: StartBarrier,
    /// How far the kick-off has got.
    kick: Kick,
    done: usize,
    /// VolanoMark's client senders, every room's, which wait for the
    /// start of the test.
    vm_senders: Vec<TaskRef>,
}

/// hackbench's parent between its last fork and its first wait().
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kick {
    /// Reading ready bytes.
    #[default]
    Reading,
    /// Every child is ready and the clock is read: the kick-off is next.
    ClockRead,
    /// The children are released.
    Released,
}

impl Parent {
    fn child(&self) -> (String, Box<dyn Program>) {
        let i = self.forked_in_stage;
        let me_group = self.group;
        match (self.kind, self.stage) {
            (Kind::Messaging, Stage::Receivers) => {
                let expect = GROUP as u64 * self.loops as u64;
                (
                    format!("hb-recv{me_group}.{i}"),
                    Queued::boxed(Receiver {
                        expect,
                        got: 0,
                        cost: self.hb.recv_ns,
                        all: false,
                        ready_first: Some(self.pipe),
                        done_sync: true,
                    }),
                )
            }
            (Kind::Messaging, _) => {
                let to = self.recv.clone();
                (
                    format!("hb-send{me_group}.{i}"),
                    Box::new(HbSender {
                        to,
                        loops: self.loops,
                        k: 0,
                        pipe: self.pipe,
                        ready: Ready::Unready,
                        send_ns: self.hb.send_ns,
                    }),
                )
            }
            (Kind::Volanomark, Stage::Receivers) => {
                let expect = (ROOM as u64 - 1) * self.loops as u64;
                (
                    format!("vm-crecv{me_group}.{i}"),
                    Queued::boxed(Receiver {
                        expect,
                        got: 0,
                        cost: self.vm.client_recv_ns,
                        all: true,
                        ready_first: None,
                        done_sync: false,
                    }),
                )
            }
            (Kind::Volanomark, Stage::ServerSenders) => {
                let to = self.recv[i];
                (format!("vm-ssend{me_group}.{i}"), Queued::boxed(Relay { to, send_ns: self.vm.server_send_ns }))
            }
            (Kind::Volanomark, Stage::ServerReceivers) => {
                let peers: Vec<TaskRef> =
                    self.srv_send.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, &t)| t).collect();
                (
                    format!("vm-srecv{me_group}.{i}"),
                    Queued::boxed(FanOut { peers, recv_ns: self.vm.server_recv_ns, notify_ns: self.vm.notify_ns }),
                )
            }
            (Kind::Volanomark, _) => {
                let to = self.srv_recv[i];
                (
                    format!("vm-csend{me_group}.{i}"),
                    Queued::boxed(VmSender { to, left: self.loops, send_ns: self.vm.client_send_ns, gated: true }),
                )
            }
        }
    }

    /// The parent between its last fork and its first wait, in one call a
    /// step; `None` once the children are released.
    /// - hackbench: read a ready byte per child (blocking while some are
    ///   missing), read the clock, then the one write on `wakefd` that
    ///   wakes every child polling it, sync, in one call
    ///   ([`Action::SendAll`]): all are woken before any of them can
    ///   preempt the parent.
    /// - VolanoMark: the client makes every room's connections first, and
    ///   the test, and its clock, start once all are made
    ///   (hosts-and-costs.md §4.2: "when the test starts", every client
    ///   sender sends, and the 8-way's run queue averaged about 70, which
    ///   only every room at once gives). So every thread is forked before
    ///   any sends; then the clock is read and the client senders are
    ///   released together with one plain wakeup each (a Java notifyAll:
    ///   futex wakeups, not sync).
    fn kick_off(&mut self) -> Option<Action> {
        let messaging = self.kind == Kind::Messaging;
        match self.kick {
            Kick::Reading if messaging && self.barrier.started() < self.barrier.children().len() => {
                Some(Action::Wait { all: true })
            }
            Kick::Reading => {
                self.kick = Kick::ClockRead;
                Some(Action::StartMeasuring)
            }
            Kick::ClockRead => {
                self.kick = Kick::Released;
                Some(if messaging {
                    self.barrier.release_all(true, 1)
                } else {
                    let to = std::mem::take(&mut self.vm_senders);
                    Action::SendAll { to: to.as_slice().into(), sync: false, bytes: 0, tag: Tag::Go as u32 }
                })
            }
            Kick::Released => None,
        }
    }

    fn next_stage(&mut self) {
        use Stage::*;
        self.forked_in_stage = 0;
        self.stage = match (self.kind, self.stage) {
            (Kind::Messaging, Receivers) => Senders,
            (Kind::Volanomark, Receivers) => ServerSenders,
            (Kind::Volanomark, ServerSenders) => ServerReceivers,
            (Kind::Volanomark, ServerReceivers) => Senders,
            _ => {
                self.group += 1;
                self.recv.clear();
                self.srv_send.clear();
                self.srv_recv.clear();
                if self.group == self.groups { Waiting } else { Receivers }
            }
        };
    }
}

impl Program for Parent {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        self.barrier.note(cx);
        if let (Some(c), Some(stage)) = (cx.forked, self.pending.take()) {
            match stage {
                Stage::Receivers => self.recv.push(c),
                Stage::ServerSenders => self.srv_send.push(c),
                Stage::ServerReceivers => self.srv_recv.push(c),
                Stage::Senders if self.kind == Kind::Volanomark => self.vm_senders.push(c),
                Stage::Senders | Stage::Waiting => {}
            }
            self.forked_in_stage += 1;
            if self.forked_in_stage == GROUP {
                self.next_stage();
            }
        }
        if self.stage == Stage::Waiting {
            if let Some(kick) = self.kick_off() {
                return kick;
            }
            self.done += cx.received.iter().filter(|m| m.tag == Tag::Done as u32).count();
            // hackbench reaps every child, senders too (`for (i = 0; i <
            // total_children; i++) wait(&status);`), and each exit wakes
            // it; VolanoMark's run ends with its client receivers.
            let children = match self.kind {
                Kind::Messaging => self.groups * GROUP * 2,
                Kind::Volanomark => self.groups * GROUP,
            };
            return if self.done >= children { Action::Exit } else { Action::Wait { all: true } };
        }
        let (name, program) = self.child();
        self.pending = Some(self.stage);
        let ws_kb = if self.kind == Kind::Messaging { self.hb.ws_kb } else { self.vm.ws_kb };
        Action::Fork(Box::new(ForkSpec { name, program, params: None, ws_kb }))
    }
}

/// Reads messages until it has `expect`, then tells its parent.
struct Receiver {
    expect: u64,
    got: u64,
    cost: f64,
    /// Take every pending message per wait (VolanoMark's client) rather
    /// than one per read (hackbench's `read()` of one 100-byte message,
    /// which frees one skb of the senders' shared buffer).
    all: bool,
    /// `Some(pipe)`: hackbench's `ready()` comes first (on pipes with
    /// `-pipe`): report to the parent and wait for its kick-off.
    ready_first: Option<bool>,
    /// How the parent learns it is done. A hackbench child is a process:
    /// its exit wakes the parent in wait() through `__wake_up_parent`,
    /// `wake_up_interruptible_sync` on `wait_chldexit` (bce7f793
    /// kernel/signal.c:1337-1341, 1424), so sync. A VolanoMark client is a
    /// Java thread the launcher joins: a futex wakeup, not sync.
    done_sync: bool,
}

/// hackbench's `ready()` begins with one byte written on the `ready`
/// socketpair that every child shares with the parent, or on its pipe
/// under `-pipe` (hackbench's `fdpair` makes every pair the same way), and
/// then polls `wakefd` (a `Wait`) until the parent's kick-off. The
/// parent's task id names that socket or pipe: the parent is no receiver,
/// so no data stream uses the id.
fn ready_write(parent: TaskRef, pipe: bool) -> Action {
    let stream = if pipe { Stream::Pipe(parent as u32) } else { Stream::Shared(parent as u32) };
    Action::Write { to: parent, stream, bytes: 1, tag: Tag::Started as u32 }
}

impl Planner for Receiver {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        if let Some(pipe) = self.ready_first.take() {
            q.push_back(ready_write(cx.parent.unwrap_or(0), pipe));
            q.push_back(Action::Wait { all: true });
            return;
        }
        for _ in cx.received.iter().filter(|m| m.tag == Tag::Data as u32) {
            self.got += 1;
            q.push_back(Action::Run(ns(self.cost)));
            q.push_back(Action::Progress(1));
        }
        if self.got >= self.expect {
            let parent = cx.parent.unwrap_or(0);
            q.push_back(Action::Send { to: parent, sync: self.done_sync, bytes: 0, tag: Tag::Done as u32 });
            q.push_back(Action::Exit);
        } else {
            q.push_back(Action::Wait { all: self.all });
        }
    }
}

/// A hackbench sender: `loops` rounds over all receivers, then exit.
struct HbSender {
    to: Vec<TaskRef>,
    loops: u32,
    /// Messages sent so far × 2 + (1 if the write's CPU work is done).
    k: u64,
    /// Write on each receiver's pipe rather than its socketpair.
    pipe: bool,
    /// Where it is in hackbench's `ready()`.
    ready: Ready,
    /// Each write's CPU work.
    send_ns: f64,
}

impl HbSender {
    /// The exit: like a receiver's, it wakes the parent in wait(), sync
    /// (`__wake_up_parent`).
    fn exit(&mut self, cx: &StepCx<'_>) -> Action {
        self.ready = Ready::Exiting;
        Action::Send { to: cx.parent.unwrap_or(0), sync: true, bytes: 0, tag: Tag::Done as u32 }
    }
}

/// A hackbench sender's start (`ready()`'s write, then its poll) and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ready {
    Unready,
    Reported,
    Released,
    /// Its writes are done and its parent has been told.
    Exiting,
}

impl Program for HbSender {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        match self.ready {
            Ready::Unready => {
                self.ready = Ready::Reported;
                return ready_write(cx.parent.unwrap_or(0), self.pipe);
            }
            Ready::Reported => {
                self.ready = Ready::Released;
                return Action::Wait { all: true };
            }
            Ready::Released => {}
            Ready::Exiting => return Action::Exit,
        }
        let total = self.loops as u64 * self.to.len() as u64;
        let (n, half) = (self.k / 2, self.k % 2);
        if n >= total {
            return self.exit(cx);
        }
        self.k += 1;
        if half == 0 {
            Action::Run(ns(self.send_ns))
        } else {
            let to = self.to[(n % self.to.len() as u64) as usize];
            // Every sender of the group writes on the receiver's one
            // socketpair end (or pipe), so they share its buffer.
            let stream = if self.pipe { Stream::Pipe(to as u32) } else { Stream::Shared(to as u32) };
            Action::Write { to, stream, bytes: 100, tag: Tag::Data as u32 }
        }
    }
}

/// A VolanoMark client sender: wait for the test to start, then send and
/// wait for the ack, `left` times.
struct VmSender {
    to: TaskRef,
    left: u32,
    send_ns: f64,
    /// Still to wait for the start of the test (the parent's [`Tag::Go`]).
    gated: bool,
}

impl Planner for VmSender {
    fn plan(&mut self, _cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        if std::mem::take(&mut self.gated) {
            q.push_back(Action::Wait { all: false });
            return;
        }
        if self.left == 0 {
            q.push_back(Action::Exit);
            return;
        }
        self.left -= 1;
        q.push_back(Action::Run(ns(self.send_ns)));
        q.push_back(Action::TcpSend { to: self.to, bytes: 100, tag: Tag::Data as u32 });
        q.push_back(Action::Wait { all: false });
    }
}

/// A VolanoMark server receiver: each message wakes the room's other 19
/// server senders, then is acknowledged.
struct FanOut {
    peers: Vec<TaskRef>,
    recv_ns: f64,
    notify_ns: f64,
}

impl Planner for FanOut {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        for m in cx.received.iter().filter(|m| m.tag == Tag::Data as u32) {
            q.push_back(Action::Run(ns(self.recv_ns)));
            for &p in &self.peers {
                q.push_back(Action::Run(ns(self.notify_ns)));
                q.push_back(Action::Send { to: p, sync: false, bytes: 100, tag: Tag::Data as u32 });
            }
            q.push_back(Action::TcpSend { to: m.from, bytes: 16, tag: Tag::Ack as u32 });
        }
        q.push_back(Action::Wait { all: true });
    }
}

/// A VolanoMark server sender: writes each message to its client.
struct Relay {
    to: TaskRef,
    send_ns: f64,
}

impl Planner for Relay {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        for _ in cx.received.iter().filter(|m| m.tag == Tag::Data as u32) {
            q.push_back(Action::Run(ns(self.send_ns)));
            q.push_back(Action::TcpSend { to: self.to, bytes: 100, tag: Tag::Data as u32 });
        }
        q.push_back(Action::Wait { all: true });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Msg;
    use rand::SeedableRng;

    /// Steps `p` once as task `me` (forked by task 0), with `received`
    /// delivered and `forked` as the last fork's child.
    fn step(p: &mut dyn Program, me: TaskRef, received: &[Msg], forked: Option<TaskRef>) -> Action {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut cx = StepCx { now: 0, me, rng: &mut rng, received, blocked: true, forked, parent: Some(0) };
        p.step(&mut cx)
    }

    fn msg(from: TaskRef, tag: Tag) -> Msg {
        Msg { from, cpu: 0, bytes: 100, tag: tag as u32, stream: Some(Stream::Shared(0)) }
    }

    /// A forked child: its name, program and working set (KB).
    type Child = (String, Box<dyn Program>, u32);

    /// Children get task ids from 100 on, in fork order.
    const FIRST_CHILD: TaskRef = 100;

    /// hackbench -pipe: a sender writes each receiver's pipe, named by the
    /// receiver, and otherwise does what it does on sockets.
    #[test]
    fn a_pipe_sender_writes_each_receivers_pipe() {
        let mut sender =
            HbSender { to: vec![5, 6], loops: 1, k: 0, pipe: true, ready: Ready::Released, send_ns: 2_000.0 };
        let got: Vec<String> = (0..6).map(|_| format!("{:?}", step(&mut sender, 9, &[], None))).collect();
        let write = |to| format!("Write {{ to: {to}, stream: Pipe({to}), bytes: 100, tag: {} }}", Tag::Data as u32);
        let done = format!("Send {{ to: 0, sync: true, bytes: 0, tag: {} }}", Tag::Done as u32);
        assert_eq!(got, ["Run(2000)".to_string(), write(5), "Run(2000)".into(), write(6), done, "Exit".into()]);

        // `--pipe` reaches the children the parent forks: a receiver and a
        // sender report ready on the parent's pipe, and the sender then
        // writes receiver 0's pipe.
        let opts = WorkloadOpts { loops: Some(1), pipe: true, ..WorkloadOpts::default() };
        let (mut children, _parent, _) = fork_all_with(Kind::Messaging, 1, &opts);
        assert_ready(children[0].1.as_mut(), FIRST_CHILD, true);
        let sender = children[GROUP].1.as_mut();
        assert_ready(sender, FIRST_CHILD + GROUP as TaskRef, true);
        assert!(matches!(step(sender, FIRST_CHILD + GROUP as TaskRef, &[], None), Action::Run(2_000)));
        let first = format!("{:?}", step(sender, FIRST_CHILD + GROUP as TaskRef, &[], None));
        assert_eq!(first, write(FIRST_CHILD));
    }

    /// Plays the engine for the parent of `kind` at its shipped costs:
    /// every fork succeeds at once with the next task id. Returns the
    /// children in fork order and the parent, left at its first non-fork
    /// action.
    fn fork_all(kind: Kind, groups: u32, loops: u32) -> (Vec<Child>, Box<dyn Program>, Action) {
        fork_all_with(kind, groups, &WorkloadOpts { loops: Some(loops), ..WorkloadOpts::default() })
    }

    /// [`fork_all`] with any options.
    fn fork_all_with(kind: Kind, groups: u32, opts: &WorkloadOpts) -> (Vec<Child>, Box<dyn Program>, Action) {
        let built = match kind {
            Kind::Messaging => messaging(groups, opts, MessagingCosts::default()),
            Kind::Volanomark => volanomark(groups, opts, VolanoCosts::default()),
        };
        fork_children(built, groups)
    }

    /// [`fork_all`] for the tasks a builder made.
    fn fork_children(built: (Vec<TaskSpec>, Vec<TaskRef>), groups: u32) -> (Vec<Child>, Box<dyn Program>, Action) {
        let (mut tasks, waited) = built;
        assert_eq!(waited, [0]);
        let mut parent = tasks.remove(0).program;
        let mut children = Vec::new();
        let mut forked = None;
        for _ in 0..=4 * GROUP * groups as usize {
            match step(parent.as_mut(), 0, &[], forked) {
                Action::Fork(spec) => {
                    forked = Some(FIRST_CHILD + children.len() as TaskRef);
                    children.push((spec.name, spec.program, spec.ws_kb));
                }
                other => return (children, parent, other),
            }
        }
        panic!("the parent forked more than 4 x 20 tasks a group");
    }

    /// Feeds `n` data messages one at a time to a receiver; returns the
    /// progress it counted and the task it reported "done" to (if it did),
    /// checking that it keeps waiting until then (taking every pending
    /// message per wait, or one, as `all` says) and exits after.
    fn feed(receiver: &mut dyn Program, n: u64, all: bool) -> (u64, Option<(TaskRef, bool)>) {
        let (mut units, mut done_to) = (0, None);
        for k in 0..n {
            let mut inbox = vec![msg(7, Tag::Data)];
            loop {
                match step(receiver, 50, &std::mem::take(&mut inbox), None) {
                    Action::Run(_) => {}
                    Action::Progress(u) => units += u,
                    Action::Wait { all: a } => {
                        assert_eq!(a, all, "a read takes every pending message: {a}");
                        break;
                    }
                    Action::Send { to, tag, sync, .. } if tag == Tag::Done as u32 => {
                        assert_eq!(k, n - 1, "done after {} of {n} messages", k + 1);
                        done_to = Some((to, sync));
                    }
                    Action::Exit => return (units, done_to),
                    a => panic!("receiver: {a:?}"),
                }
            }
        }
        (units, done_to)
    }

    fn names(children: &[Child], range: std::ops::Range<usize>) -> Vec<String> {
        children[range].iter().map(|(n, ..)| n.clone()).collect()
    }

    fn expected(prefix: &str, group: usize) -> Vec<String> {
        (0..GROUP).map(|i| format!("{prefix}{group}.{i}")).collect()
    }

    /// hackbench's `ready()` as a child `me` does it: one byte on the
    /// socketpair shared with the parent (task 0, which names it), or on
    /// its pipe with `-pipe`, then a poll until the parent's kick-off.
    fn assert_ready(child: &mut dyn Program, me: TaskRef, pipe: bool) {
        let kind = if pipe { "Pipe" } else { "Shared" };
        let ready = format!("Write {{ to: 0, stream: {kind}(0), bytes: 1, tag: {} }}", Tag::Started as u32);
        assert_eq!(format!("{:?}", step(child, me, &[], None)), ready);
        assert!(matches!(step(child, me, &[], None), Action::Wait { all: true }));
    }

    /// `--cost messaging.*` and `volanomark.*` reach every child the
    /// builders' parent forks: its working set, and the CPU work of each
    /// step (hackbench's write and read; VolanoMark's four hops and each
    /// notify).
    #[test]
    fn a_fan_out_workloads_own_costs_reach_its_children() {
        let opts = WorkloadOpts { loops: Some(1), ..WorkloadOpts::default() };
        let hb = MessagingCosts { send_ns: 2_222.0, recv_ns: 1_111.0, ws_kb: 7 };
        let (mut children, ..) = fork_children(messaging(1, &opts, hb), 1);
        assert!(children.iter().all(|c| c.0.starts_with("hb-") && c.2 == 7));
        let (me_r, me_s) = (FIRST_CHILD, FIRST_CHILD + GROUP as TaskRef);
        assert_ready(children[0].1.as_mut(), me_r, false);
        assert!(matches!(step(children[0].1.as_mut(), me_r, &[msg(me_s, Tag::Data)], None), Action::Run(1_111)));
        assert_ready(children[GROUP].1.as_mut(), me_s, false);
        assert!(matches!(step(children[GROUP].1.as_mut(), me_s, &[], None), Action::Run(2_222)));

        let vm = VolanoCosts {
            client_send_ns: 8_001.0,
            server_recv_ns: 8_002.0,
            notify_ns: 1_003.0,
            server_send_ns: 6_004.0,
            client_recv_ns: 6_005.0,
            ws_kb: 9,
        };
        let (mut children, ..) = fork_children(volanomark(1, &opts, vm), 1);
        assert!(children.iter().all(|c| c.0.starts_with("vm-") && c.2 == 9));
        // Fork order: client receivers, server senders, server receivers,
        // client senders, 20 of each.
        let first = |children: &mut Vec<Child>, k: usize, inbox: &[Msg]| {
            step(children[k * GROUP].1.as_mut(), FIRST_CHILD + (k * GROUP) as TaskRef, inbox, None)
        };
        let data = [msg(7, Tag::Data)];
        assert!(matches!(first(&mut children, 0, &data), Action::Run(6_005)));
        assert!(matches!(first(&mut children, 1, &data), Action::Run(6_004)));
        let fan_out = children[2 * GROUP].1.as_mut();
        let me = FIRST_CHILD + (2 * GROUP) as TaskRef;
        assert!(matches!(step(fan_out, me, &data, None), Action::Run(8_002)));
        assert!(matches!(step(fan_out, me, &[], None), Action::Run(1_003)));
        // A client sender waits for the start of the test first.
        assert!(matches!(first(&mut children, 3, &[]), Action::Wait { all: false }));
        assert!(matches!(first(&mut children, 3, &[msg(0, Tag::Go)]), Action::Run(8_001)));
    }

    /// hackbench -g 2 -l 3: the parent forks group 0's 20 receivers, then
    /// its 20 senders, then group 1's. Then comes the start barrier: it
    /// waits until all 80 children have written their ready byte, starts
    /// the throughput window (hackbench's gettimeofday) and wakes every
    /// child, sync, in fork order, in one call (the one write on `wakefd`
    /// that every child polls). It exits once all 2 x 20 receivers have said "done".
    /// Each receiver first reports ready and waits, then expects one
    /// message per sender per loop, 20 x 3 = 60, counts each, and tells
    /// the parent; each sender reports ready and waits, then writes 3
    /// rounds over its own group's receivers in order, 2 µs of CPU before
    /// each write (sync, 100 bytes), 60 writes.
    #[test]
    fn a_messaging_parent_forks_groups_in_turn_and_each_child_does_its_share() {
        let (mut children, mut parent, after) = fork_all(Kind::Messaging, 2, 3);
        assert_eq!(children.len(), 2 * 2 * GROUP);
        assert_eq!(names(&children, 0..20), expected("hb-recv", 0));
        assert_eq!(names(&children, 20..40), expected("hb-send", 0));
        assert_eq!(names(&children, 40..60), expected("hb-recv", 1));
        assert_eq!(names(&children, 60..80), expected("hb-send", 1));
        assert!(matches!(after, Action::Wait { all: true }), "{after:?}");

        // The barrier: 79 ready bytes (and a stray message) are not
        // enough; the 80th starts the window, then one call wakes all.
        let id = |k: usize| FIRST_CHILD + k as TaskRef;
        let readies: Vec<Msg> = (0..80).map(|k| msg(id(k), Tag::Started)).collect();
        assert!(matches!(step(parent.as_mut(), 0, &readies[..50], None), Action::Wait { all: true }));
        assert!(matches!(step(parent.as_mut(), 0, &[msg(7, Tag::Data)], None), Action::Wait { all: true }));
        assert!(matches!(step(parent.as_mut(), 0, &readies[50..79], None), Action::Wait { all: true }));
        assert!(matches!(step(parent.as_mut(), 0, &readies[79..], None), Action::StartMeasuring));
        match step(parent.as_mut(), 0, &[], None) {
            Action::SendAll { to, sync: true, bytes: 1, tag } if tag == Tag::Go as u32 => {
                assert_eq!(*to, (0..80).map(id).collect::<Vec<_>>())
            }
            a => panic!("the kick-off: {a:?}"),
        }

        // The receivers: ready first, then 60 messages each, one per
        // read() (each frees one skb of the senders' buffer), then "done"
        // to the parent: a process's exit, which wakes the parent in
        // wait() with the sync hint.
        assert_ready(children[0].1.as_mut(), id(0), false);
        assert_eq!(feed(children[0].1.as_mut(), 60, false), (60, Some((0, true))));

        // A sender of group 1: ready first, then to task ids 140..160,
        // round-robin, 3 times. Each write's CPU work comes before it:
        // run, send, run, send, ...
        let sender = children[60].1.as_mut();
        assert_ready(sender, id(60), false);
        let (mut sent, mut ran, mut told) = (Vec::new(), false, false);
        for _ in 0..=2 * 60 + 1 {
            match step(sender, 160, &[], None) {
                Action::Run(ns) if !ran => {
                    assert_eq!(ns, 2_000);
                    ran = true;
                }
                // On the receiver's own socketpair, which every sender
                // of the group shares.
                Action::Write { to, stream: Stream::Shared(id), bytes: 100, tag } if ran && tag == Tag::Data as u32 => {
                    assert_eq!(id, to as u32);
                    sent.push(to);
                    ran = false;
                }
                // Its exit wakes the parent in wait(), sync
                // (__wake_up_parent), after its last write.
                Action::Send { to: 0, sync: true, tag, .. } if !ran && !told && tag == Tag::Done as u32 => {
                    assert_eq!(sent.len(), 60);
                    told = true;
                }
                Action::Exit => break,
                a => panic!("sender, after {} writes (ran: {ran}): {a:?}", sent.len()),
            }
        }
        let group1: Vec<TaskRef> = (FIRST_CHILD + 40..FIRST_CHILD + 60).collect();
        assert_eq!(sent, group1.repeat(3));
        assert!(told, "the sender's exit told the parent");

        // After the release the parent counts "done" messages across
        // wake-ups, as hackbench's wait() reaps every child: 79 are not
        // enough, the 80th (2 groups x 20 receivers + 20 senders) ends it.
        let dones: Vec<Msg> = (0..79).map(|i| msg(FIRST_CHILD + i, Tag::Done)).collect();
        assert!(matches!(step(parent.as_mut(), 0, &dones[..40], None), Action::Wait { all: true }));
        assert!(matches!(step(parent.as_mut(), 0, &[msg(7, Tag::Data)], None), Action::Wait { all: true }));
        assert!(matches!(step(parent.as_mut(), 0, &dones[40..], None), Action::Wait { all: true }));
        assert!(matches!(step(parent.as_mut(), 0, &[msg(199, Tag::Done)], None), Action::Exit));
    }

    /// VolanoMark, 1 room, 2 messages per user: the parent forks the 20
    /// client receivers, the 20 server senders, the 20 server receivers and
    /// the 20 client senders, in that order. Then the test starts: the
    /// parent reads the clock and releases the client senders, which have
    /// waited since they started, with one plain wakeup each (one call).
    /// User i's client sender writes
    /// to server receiver i; that one wakes the 19 *other* server senders
    /// and acknowledges; server sender j writes to client receiver j, which
    /// expects 19 x 2 = 38 messages (one per other user's message).
    #[test]
    fn a_volanomark_room_wires_each_user_to_the_other_nineteen() {
        let (mut children, mut parent, after) = fork_all(Kind::Volanomark, 1, 2);
        assert_eq!(children.len(), 4 * ROOM);
        assert_eq!(names(&children, 0..20), expected("vm-crecv", 0));
        assert_eq!(names(&children, 20..40), expected("vm-ssend", 0));
        assert_eq!(names(&children, 40..60), expected("vm-srecv", 0));
        assert_eq!(names(&children, 60..80), expected("vm-csend", 0));
        let id = |k: usize| FIRST_CHILD + k as TaskRef;
        assert!(matches!(after, Action::StartMeasuring), "{after:?}");
        match step(parent.as_mut(), 0, &[], None) {
            Action::SendAll { to, sync: false, bytes: 0, tag } if tag == Tag::Go as u32 => {
                assert_eq!(&to[..], (60..80).map(id).collect::<Vec<_>>().as_slice());
            }
            a => panic!("the release: {a:?}"),
        }
        assert!(matches!(step(parent.as_mut(), 0, &[], None), Action::Wait { all: true }));

        // Client sender 3: a wait for the start, then 8 µs, a TCP write to
        // server receiver 3 (id 143), then a wait for the ack; twice, then
        // exit.
        let csend = children[63].1.as_mut();
        assert!(matches!(step(csend, id(63), &[], None), Action::Wait { all: false }));
        let mut to = Vec::new();
        for _ in 0..=3 * 2 {
            match step(csend, id(63), &[], None) {
                Action::Run(ns) => assert_eq!(ns, 8_000),
                Action::TcpSend { to: t, .. } => to.push(t),
                Action::Wait { all: false } => {}
                Action::Exit => break,
                a => panic!("client sender: {a:?}"),
            }
        }
        assert_eq!(to, [id(43), id(43)]);

        // Server receiver 3: one message wakes server senders 0-2 and 4-19
        // (ids 120-139 but 123), plainly, then acks the client sender over TCP.
        let srecv = children[43].1.as_mut();
        let mut woken = Vec::new();
        let mut ack = None;
        let mut inbox = vec![msg(id(63), Tag::Data)];
        loop {
            match step(srecv, id(43), &std::mem::take(&mut inbox), None) {
                Action::Run(_) => {}
                Action::Send { to, sync: false, .. } => woken.push(to),
                Action::TcpSend { to, tag, .. } if tag == Tag::Ack as u32 => ack = Some(to),
                Action::Wait { all: true } => break,
                a => panic!("server receiver: {a:?}"),
            }
        }
        let others: Vec<TaskRef> = (0..ROOM).filter(|&j| j != 3).map(|j| id(20 + j)).collect();
        assert_eq!(woken, others);
        assert_eq!(ack, Some(id(63)));

        // Server sender 5 relays to client receiver 5 (id 105).
        let relay = children[25].1.as_mut();
        let mut inbox = vec![msg(id(43), Tag::Data)];
        let mut relayed = Vec::new();
        loop {
            match step(relay, id(25), &std::mem::take(&mut inbox), None) {
                Action::Run(ns) => assert_eq!(ns, 6_000),
                Action::TcpSend { to, .. } => relayed.push(to),
                Action::Wait { all: true } => break,
                a => panic!("server sender: {a:?}"),
            }
        }
        assert_eq!(relayed, [id(5)]);

        // Client receiver 5: 38 messages, then "done".
        // A Java thread the launcher joins: a plain futex wakeup.
        assert_eq!(feed(children[5].1.as_mut(), 38, true), (38, Some((0, false))));
    }
}
