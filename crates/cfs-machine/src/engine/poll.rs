//! select()'s poll pass as a window in time.
//!
//! do_select (e490517a fs/select.c:184-288; the same loop in 2.6.25 and
//! 2.6.26) works like this:
//!
//! 1. `set_current_state(TASK_INTERRUPTIBLE)` (:208), then each descriptor
//!    is polled in turn (:237). Until one is found ready (`retval` still
//!    0), the poll is given the poll table, so `poll_wait` puts the task on
//!    that socket's wait queue (unix_poll registers before it tests the
//!    queue, so the first ready one registers too); after it, the rest are
//!    polled without it.
//! 2. If something was ready, select returns it (:262), copying the
//!    results out on its way. Otherwise it calls `schedule_timeout` (:280)
//!    straight after the last poll. Back from it, it polls every descriptor
//!    again (now without registering), and so on.
//! 3. Only at the end, `poll_freewait` (:286) takes the task off the wait
//!    queues.
//!
//! So a message that lands on a socket during the pass is found if that
//! socket has not been polled yet. If it has been, this pass misses it,
//! and then it matters whether the socket holds the task on its wait
//! queue. If it does, the sender's `wake_up_interruptible_sync` reaches
//! try_to_wake_up while the task is still on its runqueue: the
//! `out_running` path (e490517a sched.c:2427, 2483), which runs
//! check_preempt_curr and sets the task TASK_RUNNING. If the pass then
//! found nothing, schedule() does not take a TASK_RUNNING task off the
//! runqueue: it is a voluntary switch, after which the second pass finds
//! the message.
//!
//! From 5f820f648c9 (2.6.29, "poll: allow f_op->poll to sleep"; so in
//! both 2.6.32 profiles) the pass runs TASK_RUNNING: do_select sets
//! TASK_INTERRUPTIBLE only inside poll_schedule_timeout, and the wait
//! queue entry's pollwake sets `pwq->triggered` before it calls
//! try_to_wake_up, which returns at once for a running task (22763c5c
//! fs/select.c:192, 237-240; kernel/sched.c:2354). A pass that found
//! nothing then sees `triggered` and polls again without calling
//! schedule(). The registering rule is the same (`wait = NULL` after the
//! first ready descriptor, :460). The engine picks the behaviour by the
//! profile (`Sim::polls_running`).
//!
//! The pass after a wakeup or a voluntary switch (the loop's second
//! iteration) registers nothing new (`wait = NULL` after the first pass,
//! :261), but every entry of the first pass stays until poll_freewait, and
//! a first pass that found nothing registered on every socket. So during
//! that pass any message, on a socket polled or not, reaches the task
//! through its wait queue: `out_running` again on 2.6.25/26 (the loop set
//! TASK_INTERRUPTIBLE again at its top), on 2.6.32 only try_to_wake_up's
//! clock update before its state test. It is found if its socket has not
//! been polled yet, or was readable already ([`PollPass::again`]). The
//! first such wakeup of a pass makes the task TASK_RUNNING; later ones
//! find it so, which on 2.6.25/26 stops try_to_wake_up before it touches
//! anything, and on 2.6.32 after its clock update, which the engine makes
//! for each of them ([`PollPass::holds`]).
//!
//! [`PollPass`] keeps the bookkeeping: which sockets were ready when
//! polled, where the first ready one is, and whether a wakeup has made the
//! task TASK_RUNNING. The engine says how far the pass has got when a
//! message lands; a socket's poll falls at a fixed share of the pass.

use crate::program::TaskRef;
use std::sync::Arc;

/// One select() pass in flight.
#[derive(Debug)]
pub(super) struct PollPass {
    /// The sockets, by peer, in the order they are polled.
    fds: Arc<[TaskRef]>,
    /// Work before the first poll (system call entry, fd_set copy), ns.
    lead: u64,
    /// The polls' work, ns.
    work: u64,
    /// Work after the polls, spent only by a pass that found something
    /// (copying the results out), ns.
    exit: u64,
    /// The most of the pass seen done: the engine's reading can dip when
    /// other work is charged to the task's CPU mid-pass, and a poll once
    /// done stays done.
    progress: u64,
    /// Per socket: found ready when polled (or sure to be).
    ready: Vec<bool>,
    /// The first socket found ready; every one polled up to it, itself
    /// included, put the task on its wait queue. `fds.len()` while none
    /// is.
    first_ready: usize,
    /// A wakeup made the task TASK_RUNNING during the pass.
    raced: bool,
    /// Every socket holds the task on its wait queue from an earlier pass
    /// of the same call ([`PollPass::again`]).
    registered: bool,
}

/// What a message landing during a pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Landing {
    /// Its socket is polled later (or is not among the polled ones): the
    /// pass finds it.
    Found,
    /// Its socket was polled without registering (after a ready one), or
    /// the task is TASK_RUNNING already: missed, and no wakeup.
    Missed,
    /// Its socket was polled and holds the task on its wait queue: missed,
    /// and the sender's wakeup takes try_to_wake_up's `out_running` path.
    Wakes,
    /// Found (its socket is polled later, or was readable already), and
    /// the socket holds the task on its wait queue (from an earlier pass,
    /// or as the first ready one, polled): the sender's wakeup takes
    /// `out_running` too.
    FoundAndWakes,
}

impl PollPass {
    /// A pass over `fds` of `lead` ns before the first poll, `work` ns of
    /// polls and, if it finds something, `exit` ns after them, started
    /// with messages pending from `pending`.
    pub(super) fn new(
        fds: Arc<[TaskRef]>,
        lead: u64,
        work: u64,
        exit: u64,
        pending: impl Iterator<Item = TaskRef>,
    ) -> PollPass {
        let n = fds.len();
        let mut pass = PollPass {
            ready: vec![false; n],
            fds,
            lead,
            work,
            exit,
            progress: 0,
            first_ready: n,
            raced: false,
            registered: false,
        };
        for from in pending {
            if let Some(i) = pass.index(from) {
                pass.ready[i] = true;
                pass.first_ready = pass.first_ready.min(i);
            }
        }
        pass
    }

    /// The next pass of the same select() call, after a first pass that
    /// found nothing and a wakeup or a voluntary switch: no entry work,
    /// `work` ns of polls, `exit` ns if it finds something, and every
    /// socket registered by the first pass.
    pub(super) fn again(fds: Arc<[TaskRef]>, work: u64, exit: u64, pending: impl Iterator<Item = TaskRef>) -> PollPass {
        PollPass { registered: true, ..PollPass::new(fds, 0, work, exit, pending) }
    }

    /// The pass's work up to its last poll, ns: what the task has to do
    /// before it finds out whether it sleeps.
    pub(super) fn total(&self) -> u64 {
        self.lead.saturating_add(self.work)
    }

    /// The work a pass that found something spends returning, ns.
    pub(super) fn exit(&self) -> u64 {
        self.exit
    }

    /// Takes the engine's reading of the work done, never going back.
    fn advance(&mut self, done: u64) -> u64 {
        self.progress = self.progress.max(done);
        self.progress
    }

    fn index(&self, from: TaskRef) -> Option<usize> {
        self.fds.iter().position(|&f| f == from)
    }

    /// How much of the pass is done when socket `i` is polled: the
    /// middle of its share of the polls, `lead + work × (2i + 1) / 2n`.
    fn polled_at(&self, i: usize) -> u64 {
        let n = self.fds.len() as u128;
        let share = u128::from(self.work) * (2 * i as u128 + 1) / (2 * n);
        self.lead.saturating_add(share as u64)
    }

    /// A message from `from` lands when `done` ns of the pass are done.
    pub(super) fn land(&mut self, from: TaskRef, done: u64) -> Landing {
        let done = self.advance(done);
        let Some(i) = self.index(from) else { return Landing::Found };
        if !self.ready[i] && done < self.polled_at(i) {
            self.ready[i] = true;
            self.first_ready = self.first_ready.min(i);
        }
        // Every message wakes the socket's wait queue (sock_def_readable,
        // e490517a net/core/sock.c:1633), found or not.
        match (self.ready[i], self.wakes_through(i, done)) {
            (true, true) => Landing::FoundAndWakes,
            (true, false) => Landing::Found,
            (false, true) => Landing::Wakes,
            (false, false) => Landing::Missed,
        }
    }

    /// The socket to `from` wakes its wait queue without becoming
    /// readable (`unix_write_space`: the task selects for reading only)
    /// when `done` ns of the pass are done: that reaches the task only if
    /// the socket has registered it.
    pub(super) fn writable(&mut self, from: TaskRef, done: u64) -> Landing {
        let done = self.advance(done);
        match self.index(from) {
            Some(i) if self.wakes_through(i, done) => Landing::Wakes,
            _ => Landing::Missed,
        }
    }

    /// Whether a wakeup on socket `i` at `done` reaches the task and makes
    /// it TASK_RUNNING, the first to do so in this pass: the socket holds
    /// the task on its wait queue if an earlier pass registered it, or if
    /// this pass has polled it with no socket before it ready (the first
    /// ready one registers too, since unix_poll calls poll_wait before it
    /// tests; a socket found ready later is polled later, so `first_ready`
    /// only moves past a polled `i`, never below it).
    fn wakes_through(&mut self, i: usize, done: u64) -> bool {
        if self.holds_at(i, done) && !self.raced {
            self.raced = true;
            return true;
        }
        false
    }

    /// Whether socket `i` holds the task on its wait queue when `done` ns
    /// of the pass are done (see [`PollPass::wakes_through`]).
    fn holds_at(&self, i: usize, done: u64) -> bool {
        self.registered || (i <= self.first_ready && done >= self.polled_at(i))
    }

    /// Whether the socket to `from` holds the task on its wait queue, as
    /// far as the pass has got: a wakeup on it reaches try_to_wake_up
    /// (pollwake), whether or not it is the one that makes the task
    /// TASK_RUNNING.
    pub(super) fn holds(&self, from: TaskRef) -> bool {
        self.index(from).is_some_and(|i| self.holds_at(i, self.progress))
    }

    /// Whether the pass finds what `from` sent.
    pub(super) fn finds(&self, from: TaskRef) -> bool {
        self.index(from).is_none_or(|i| self.ready[i])
    }

    /// Whether a wakeup made the task TASK_RUNNING during the pass.
    pub(super) fn raced(&self) -> bool {
        self.raced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four sockets (peers 10-13), 1,000 ns of entry and 4,000 of polls:
    /// socket i is polled at 1,000 + 4,000 × (2i + 1) / 8, i.e. at 1,500,
    /// 2,500, 3,500 and 4,500 ns.
    fn pass(pending: &[TaskRef]) -> PollPass {
        PollPass::new(Arc::from(vec![10, 11, 12, 13]), 1_000, 4_000, 700, pending.iter().copied())
    }

    #[test]
    fn sockets_are_polled_in_order_across_the_pass() {
        let p = pass(&[]);
        assert_eq!((0..4).map(|i| p.polled_at(i)).collect::<Vec<_>>(), [1_500, 2_500, 3_500, 4_500]);
        assert_eq!(p.total(), 5_000);
    }

    /// Nothing ready at the start: every socket polled so far holds the
    /// task. A message on socket 1 after its poll (2,600 > 2,500) wakes
    /// it; a second one (socket 0) finds it TASK_RUNNING already, though
    /// its wakeup still reaches the task through socket 0's wait queue; one
    /// on socket 3 before its poll is found, and socket 3 holds nobody yet.
    /// Only socket 3's counts as found.
    #[test]
    fn a_message_behind_the_poll_wakes_the_task_once() {
        let mut p = pass(&[]);
        assert_eq!(p.land(11, 2_600), Landing::Wakes);
        assert!(p.raced());
        assert_eq!(p.land(10, 2_700), Landing::Missed);
        assert!(p.holds(10));
        assert_eq!(p.land(13, 4_400), Landing::Found);
        assert!(!p.holds(13));
        assert_eq!([10, 11, 12, 13].map(|f| p.finds(f)), [false, false, false, true]);
    }

    /// Socket 1 had a message at the start, so sockets 2 and 3 are polled
    /// without registering: a message on socket 2 after its poll is missed
    /// and wakes nobody; one on socket 0 (polled before the ready one, so
    /// registered) wakes the task.
    #[test]
    fn sockets_after_the_first_ready_one_do_not_register() {
        let mut p = pass(&[11]);
        assert_eq!(p.land(12, 3_600), Landing::Missed);
        assert!(!p.raced() && !p.holds(12));
        assert_eq!(p.land(10, 3_700), Landing::Wakes);
        assert_eq!([10, 11, 12, 13].map(|f| p.finds(f)), [false, true, false, false]);
    }

    /// A message found before its poll makes its socket the first ready
    /// one for the sockets after it: socket 2's message lands at 3,000
    /// (before its poll at 3,500), so socket 3, polled after it, does not
    /// register, while socket 1, polled at 2,500 with nothing ready yet,
    /// did.
    #[test]
    fn a_socket_found_ready_ends_the_registering() {
        let mut p = pass(&[]);
        assert_eq!(p.land(12, 3_000), Landing::Found);
        assert_eq!(p.land(13, 4_600), Landing::Missed);
        assert_eq!(p.land(11, 4_700), Landing::Wakes);
    }

    /// Write space on a socket not yet polled wakes nobody and makes it
    /// no more readable; on one polled (and registered) it wakes the task.
    #[test]
    fn write_space_wakes_only_through_a_registered_socket() {
        let mut p = pass(&[]);
        assert_eq!(p.writable(12, 3_000), Landing::Missed);
        assert!(!p.finds(12));
        assert_eq!(p.writable(10, 3_000), Landing::Wakes);
        assert_eq!(p.writable(11, 3_000), Landing::Missed);
    }

    /// The first ready socket registered before its poll found data, so
    /// write space on it after its poll wakes the task; a socket after it
    /// did not register.
    #[test]
    fn the_first_ready_socket_registers_too() {
        let mut p = pass(&[11]);
        assert_eq!(p.writable(12, 3_600), Landing::Missed);
        assert_eq!(p.writable(11, 3_600), Landing::Wakes);
        assert_eq!(p.exit(), 700);
    }

    /// The engine's reading of the work done can dip (work charged to the
    /// CPU mid-pass); a socket once polled stays polled: a message on
    /// socket 0 read as 1,000 ns done, after one at 2,600, is still behind
    /// its poll.
    #[test]
    fn a_poll_once_done_stays_done() {
        let mut p = pass(&[]);
        assert_eq!(p.land(13, 2_600), Landing::Found);
        assert_eq!(p.land(10, 1_000), Landing::Wakes);
    }

    /// The pass after a wakeup: every socket registered in the first pass.
    /// A message on socket 3 before its poll is found, and its sender's
    /// wakeup reaches the task (TASK_INTERRUPTIBLE again); then one on
    /// socket 0, behind its poll, is missed and finds it TASK_RUNNING;
    /// write space anywhere wakes nobody once it is running.
    #[test]
    fn the_next_pass_is_registered_on_every_socket() {
        let mut p = PollPass::again(Arc::from(vec![10, 11, 12, 13]), 4_000, 900, [11].into_iter());
        assert_eq!(p.total(), 4_000);
        assert_eq!(p.land(13, 3_000), Landing::FoundAndWakes);
        assert!(p.raced());
        assert_eq!(p.land(10, 3_100), Landing::Missed);
        assert_eq!(p.writable(12, 3_200), Landing::Missed);
        assert_eq!([10, 11, 12, 13].map(|f| p.finds(f)), [false, true, false, true]);
        assert_eq!(p.exit(), 900);
        // Write space on a socket not yet polled reaches it through the
        // first pass's entry.
        let mut p = PollPass::again(Arc::from(vec![10, 11]), 2_000, 0, std::iter::empty());
        assert_eq!(p.writable(11, 100), Landing::Wakes);
    }

    /// A second message on a socket already readable is found, and reaches
    /// the task if that socket registered it: in the first pass only the
    /// first ready one does, once polled (socket 1, polled at 2,500; socket
    /// 2, after it, never registers); in a later pass every one does.
    #[test]
    fn a_second_message_on_a_ready_socket_wakes_through_a_registration() {
        let mut p = pass(&[11, 12]);
        assert_eq!(p.land(11, 2_000), Landing::Found, "socket 1 not polled yet");
        assert_eq!(p.land(12, 2_200), Landing::Found, "socket 2 does not register");
        assert_eq!(p.land(11, 2_600), Landing::FoundAndWakes);
        assert_eq!(p.land(11, 2_700), Landing::Found, "TASK_RUNNING already");
        let mut p = PollPass::again(Arc::from(vec![10, 11]), 2_000, 0, [11].into_iter());
        assert_eq!(p.land(11, 100), Landing::FoundAndWakes);
    }

    /// A sender that is not one of the polled sockets, and a second
    /// message on a socket already found ready, are simply found.
    #[test]
    fn other_senders_and_ready_sockets_are_found() {
        let mut p = pass(&[12]);
        assert_eq!(p.land(12, 3_000), Landing::Found, "before its poll: not registered yet");
        assert_eq!(p.land(99, 4_900), Landing::Found);
        assert!(p.finds(99) && p.finds(12));
    }
}
