//! Fan-out workloads: `messaging` (hackbench-style groups) and
//! `volanomark` (chat rooms where one receiver wakes the 19 senders of its
//! room, hosts-and-costs.md §4.2). Both end when every receiver has all its
//! messages; throughput is messages received per second.

use super::{Tag, WorkloadOpts, ns, parent_task};
use crate::program::{Action, ForkSpec, Planner, Program, Queued, StepCx, TaskRef, TaskSpec};
use std::collections::VecDeque;

/// hackbench: senders and receivers per group.
const GROUP: usize = 20;
/// VolanoMark: users per room.
const ROOM: usize = 20;

/// hackbench's `write()` of a 100-byte message on a unix socket, and the
/// receiver's `read()` [E: syscall plus a 100-byte copy and the socket
/// locking, ~1-2 µs at 2.4 GHz].
const HB_SEND_NS: f64 = 2_000.0;
const HB_RECV_NS: f64 = 1_500.0;

/// VolanoMark per-hop CPU, JVM plus kernel [E] (§4.2: 5-15 µs per hop).
const VM_CLIENT_SEND_NS: f64 = 8_000.0;
const VM_SERVER_RECV_NS: f64 = 8_000.0;
const VM_NOTIFY_NS: f64 = 1_000.0;
const VM_SERVER_SEND_NS: f64 = 6_000.0;
const VM_CLIENT_RECV_NS: f64 = 6_000.0;

/// `messaging`: `groups` groups of 20 senders and 20 receivers; each sender
/// writes `loops` (default 100) 100-byte messages to every receiver of its
/// group over a unix socket (sync wakeups). The parent (task 0) forks them
/// all and waits for the receivers to finish. Socket buffers are taken as
/// unbounded (a sender never blocks).
pub fn messaging(groups: u32, opts: &WorkloadOpts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
    fanout_tasks(Kind::Messaging, groups, opts)
}

/// `volanomark`: `rooms` rooms of 20 users, 4 tasks per user (client
/// sender, server receiver, server sender, client receiver); each user
/// sends `loops` (default 100) messages, one at a time, waiting for the
/// server's acknowledgement; the server receiver wakes the server senders
/// of the 19 other users (Java notify: plain, non-sync wakeups), each of
/// which writes to its client receiver (TCP: sync).
pub fn volanomark(rooms: u32, opts: &WorkloadOpts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
    fanout_tasks(Kind::Volanomark, rooms, opts)
}

/// The parent (task 0, the one the run waits for), which forks `groups`
/// groups or rooms of `kind` and waits for their receivers.
fn fanout_tasks(kind: Kind, groups: u32, opts: &WorkloadOpts) -> (Vec<TaskSpec>, Vec<TaskRef>) {
    let loops = opts.loops.unwrap_or(100).max(1);
    let parent = Parent { groups: groups.max(1) as usize, loops, kind, ..Parent::default() };
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

/// Forks every group's tasks, then waits for the receivers' "done".
#[derive(Default)]
struct Parent {
    kind: Kind,
    groups: usize,
    loops: u32,
    group: usize,
    stage: Stage,
    /// Children of the current group, by stage.
    recv: Vec<TaskRef>,
    srv_send: Vec<TaskRef>,
    srv_recv: Vec<TaskRef>,
    /// Which list the last fork's child goes to.
    pending: Option<Stage>,
    forked_in_stage: usize,
    done: usize,
}

impl Parent {
    fn child(&self) -> (String, Box<dyn Program>) {
        let i = self.forked_in_stage;
        let me_group = self.group;
        match (self.kind, self.stage) {
            (Kind::Messaging, Stage::Receivers) => {
                let expect = GROUP as u64 * self.loops as u64;
                (format!("hb-recv{me_group}.{i}"), Queued::boxed(Receiver { expect, got: 0, cost: HB_RECV_NS }))
            }
            (Kind::Messaging, _) => {
                let to = self.recv.clone();
                (format!("hb-send{me_group}.{i}"), Box::new(HbSender { to, loops: self.loops, k: 0 }))
            }
            (Kind::Volanomark, Stage::Receivers) => {
                let expect = (ROOM as u64 - 1) * self.loops as u64;
                (format!("vm-crecv{me_group}.{i}"), Queued::boxed(Receiver { expect, got: 0, cost: VM_CLIENT_RECV_NS }))
            }
            (Kind::Volanomark, Stage::ServerSenders) => {
                let to = self.recv[i];
                (format!("vm-ssend{me_group}.{i}"), Queued::boxed(Relay { to }))
            }
            (Kind::Volanomark, Stage::ServerReceivers) => {
                let peers: Vec<TaskRef> =
                    self.srv_send.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, &t)| t).collect();
                (format!("vm-srecv{me_group}.{i}"), Queued::boxed(FanOut { peers }))
            }
            (Kind::Volanomark, _) => {
                let to = self.srv_recv[i];
                (format!("vm-csend{me_group}.{i}"), Queued::boxed(VmSender { to, left: self.loops }))
            }
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
        if let (Some(c), Some(stage)) = (cx.forked, self.pending.take()) {
            match stage {
                Stage::Receivers => self.recv.push(c),
                Stage::ServerSenders => self.srv_send.push(c),
                Stage::ServerReceivers => self.srv_recv.push(c),
                Stage::Senders | Stage::Waiting => {}
            }
            self.forked_in_stage += 1;
            if self.forked_in_stage == GROUP {
                self.next_stage();
            }
        }
        if self.stage == Stage::Waiting {
            self.done += cx.received.iter().filter(|m| m.tag == Tag::Done as u32).count();
            let receivers = self.groups * GROUP;
            return if self.done >= receivers { Action::Exit } else { Action::Wait { all: true } };
        }
        let (name, program) = self.child();
        self.pending = Some(self.stage);
        Action::Fork(Box::new(ForkSpec { name, program, params: None, ws_kb: 32 }))
    }
}

/// Reads messages until it has `expect`, then tells its parent.
struct Receiver {
    expect: u64,
    got: u64,
    cost: f64,
}

impl Planner for Receiver {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        for _ in cx.received.iter().filter(|m| m.tag == Tag::Data as u32) {
            self.got += 1;
            q.push_back(Action::Run(ns(self.cost)));
            q.push_back(Action::Progress(1));
        }
        if self.got >= self.expect {
            let parent = cx.parent.unwrap_or(0);
            q.push_back(Action::Send { to: parent, sync: false, bytes: 0, tag: Tag::Done as u32 });
            q.push_back(Action::Exit);
        } else {
            q.push_back(Action::Wait { all: true });
        }
    }
}

/// A hackbench sender: `loops` rounds over all receivers, then exit.
struct HbSender {
    to: Vec<TaskRef>,
    loops: u32,
    /// Messages sent so far × 2 + (1 if the write's CPU work is done).
    k: u64,
}

impl Program for HbSender {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Action {
        let total = self.loops as u64 * self.to.len() as u64;
        let (n, half) = (self.k / 2, self.k % 2);
        if n >= total {
            return Action::Exit;
        }
        self.k += 1;
        if half == 0 {
            Action::Run(ns(HB_SEND_NS))
        } else {
            let to = self.to[(n % self.to.len() as u64) as usize];
            Action::Send { to, sync: true, bytes: 100, tag: Tag::Data as u32 }
        }
    }
}

/// A VolanoMark client sender: send, wait for the ack, `left` times.
struct VmSender {
    to: TaskRef,
    left: u32,
}

impl Planner for VmSender {
    fn plan(&mut self, _cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        if self.left == 0 {
            q.push_back(Action::Exit);
            return;
        }
        self.left -= 1;
        q.push_back(Action::Run(ns(VM_CLIENT_SEND_NS)));
        q.push_back(Action::Send { to: self.to, sync: true, bytes: 100, tag: Tag::Data as u32 });
        q.push_back(Action::Wait { all: false });
    }
}

/// A VolanoMark server receiver: each message wakes the room's other 19
/// server senders, then is acknowledged.
struct FanOut {
    peers: Vec<TaskRef>,
}

impl Planner for FanOut {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        for m in cx.received.iter().filter(|m| m.tag == Tag::Data as u32) {
            q.push_back(Action::Run(ns(VM_SERVER_RECV_NS)));
            for &p in &self.peers {
                q.push_back(Action::Run(ns(VM_NOTIFY_NS)));
                q.push_back(Action::Send { to: p, sync: false, bytes: 100, tag: Tag::Data as u32 });
            }
            q.push_back(Action::Send { to: m.from, sync: true, bytes: 16, tag: Tag::Ack as u32 });
        }
        q.push_back(Action::Wait { all: true });
    }
}

/// A VolanoMark server sender: writes each message to its client.
struct Relay {
    to: TaskRef,
}

impl Planner for Relay {
    fn plan(&mut self, cx: &mut StepCx<'_>, q: &mut VecDeque<Action>) {
        for _ in cx.received.iter().filter(|m| m.tag == Tag::Data as u32) {
            q.push_back(Action::Run(ns(VM_SERVER_SEND_NS)));
            q.push_back(Action::Send { to: self.to, sync: true, bytes: 100, tag: Tag::Data as u32 });
        }
        q.push_back(Action::Wait { all: true });
    }
}
