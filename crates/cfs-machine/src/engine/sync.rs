//! User-space synchronisation objects: what a program's condition
//! variables, mutexes, semaphores and barriers do to its tasks.
//!
//! These are the objects rt-app builds its events on (rt-app.c
//! `run_event`), with glibc's semantics as they reach the scheduler:
//!
//! - `Cond`: a pthread condition variable. A signal wakes the first
//!   waiter; a signal with no one waiting is lost. A broadcast releases
//!   every waiter as nptl's pthread_cond_broadcast does (glibc 2.3-2.24,
//!   the era of these kernels): FUTEX_CMP_REQUEUE wakes the first and
//!   moves the rest onto the futex of the mutex they wait with, so each
//!   is woken by an unlock of that mutex in turn, not all at once to race
//!   for it. The engine does the requeueing (it knows who sleeps with
//!   which mutex).
//! - `Mutex`: a default (normal, non-PI) pthread mutex over a futex.
//!   Taking a free one is an atomic instruction and no system call; a
//!   taken one puts the caller to sleep in `futex_wait`. Unlocking wakes
//!   the first sleeper (`futex_wake`, not a sync wakeup) and leaves the
//!   mutex free: the woken task takes it only if it is still free when it
//!   runs, and sleeps again otherwise, as glibc's `lll_lock` loop does. A
//!   running task can take the mutex in between (barging), which is what
//!   makes lock convoys. A normal mutex does not check its owner, so an
//!   unlock by any task frees it.
//! - `Sem`: a POSIX semaphore (rt-app `sem_post`/`sem_wait`): a post with
//!   no one waiting is counted, so a later wait passes at once. A post with
//!   a sleeper hands the count straight to the first one.
//! - `Barrier`: rt-app's `barrier` event, a counter under a mutex and a
//!   condition (rt-app.c): each arrival takes the mutex; `waiting` starts
//!   at its users minus one; a task that arrives while it is above zero
//!   takes one off and waits on the condition (which unlocks the mutex);
//!   the one that finds it at zero broadcasts and unlocks; each woken task
//!   takes the mutex again, adds its one back and unlocks. The broadcast
//!   requeues the waiters onto the mutex, as any other does, so they leave
//!   one unlock after another. (So, as in rt-app, a task that passes a barrier
//!   and reaches it again before the woken ones have run passes again.)
//!
//! The engine keeps a task's place in these queues; this file only decides
//! who is woken. A task registers with a condition or barrier *during* its
//! system call, as glibc does under the condition's internal lock, so a
//! signal that comes before it has gone to sleep is not lost: the engine
//! marks it and its sleep returns at once.

use crate::program::TaskRef;
use std::collections::VecDeque;

/// The synchronisation objects a run's programs use, by kind; each kind is
/// numbered from 0 in the order of this struct's vectors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncObjects {
    /// Condition variables.
    pub conds: usize,
    /// Mutexes.
    pub mutexes: usize,
    /// Semaphores (initial count 0).
    pub sems: usize,
    /// Barriers, each with its number of users (rt-app counts every task
    /// instance that names it, once per event that does).
    pub barriers: Vec<u32>,
}

impl SyncObjects {
    /// No objects at all (the built-in workloads use none).
    pub const NONE: SyncObjects = SyncObjects { conds: 0, mutexes: 0, sems: 0, barriers: Vec::new() };
}

/// A pthread condition variable: its sleepers in wait order.
#[derive(Debug, Default)]
pub(super) struct Cond {
    waiters: VecDeque<TaskRef>,
}

impl Cond {
    /// `t` waits (pthread_cond_wait registers before it releases its mutex).
    pub(super) fn wait(&mut self, t: TaskRef) {
        self.waiters.push_back(t);
    }

    /// pthread_cond_signal (`all`: _broadcast): the waiters to wake, none
    /// if no one waits (the signal is lost).
    pub(super) fn signal(&mut self, all: bool) -> Vec<TaskRef> {
        let n = if all { self.waiters.len() } else { self.waiters.len().min(1) };
        self.waiters.drain(..n).collect()
    }
}

/// A normal pthread mutex.
#[derive(Debug, Default)]
pub(super) struct Mutex {
    locked: bool,
    sleepers: VecDeque<TaskRef>,
}

impl Mutex {
    /// pthread_mutex_lock's fast path: take it if it is free.
    pub(super) fn try_lock(&mut self) -> bool {
        !std::mem::replace(&mut self.locked, true)
    }

    /// `t` found it taken and sleeps in futex_wait.
    pub(super) fn sleep(&mut self, t: TaskRef) {
        self.sleepers.push_back(t);
    }

    /// pthread_mutex_unlock: the mutex is free; the sleeper to wake, if
    /// any (it must take the mutex again when it runs).
    pub(super) fn unlock(&mut self) -> Option<TaskRef> {
        self.locked = false;
        self.sleepers.pop_front()
    }
}

/// A POSIX semaphore.
#[derive(Debug, Default)]
pub(super) struct Sem {
    count: u64,
    sleepers: VecDeque<TaskRef>,
}

impl Sem {
    /// sem_post: the sleeper that gets the count, or the count goes up.
    pub(super) fn post(&mut self) -> Option<TaskRef> {
        let woken = self.sleepers.pop_front();
        if woken.is_none() {
            self.count = self.count.saturating_add(1);
        }
        woken
    }

    /// sem_wait's fast path: take one if the count is above zero.
    pub(super) fn try_wait(&mut self) -> bool {
        let ok = self.count > 0;
        self.count -= u64::from(ok);
        ok
    }

    /// `t` found the count at zero and sleeps.
    pub(super) fn sleep(&mut self, t: TaskRef) {
        self.sleepers.push_back(t);
    }
}

/// What a task arriving at a barrier does.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Arrival {
    /// It is the last: wake these and go on.
    Release(Vec<TaskRef>),
    /// Others are still to come: it waits.
    Wait,
}

/// rt-app's barrier.
#[derive(Debug)]
pub(super) struct Barrier {
    /// rt-app's `res.barrier.waiting`: users still to arrive, less one.
    waiting: i64,
    cond: Cond,
    /// The mutex the counter is kept under (`res.barrier.m_obj`).
    pub(super) mutex: Mutex,
}

impl Barrier {
    /// A barrier with `users` users (rt-app starts `waiting` at -1 and adds
    /// each user).
    pub(super) fn new(users: u32) -> Barrier {
        Barrier { waiting: i64::from(users) - 1, cond: Cond::default(), mutex: Mutex::default() }
    }

    /// `t` arrives, holding the barrier's mutex.
    pub(super) fn arrive(&mut self, t: TaskRef) -> Arrival {
        if self.waiting == 0 {
            return Arrival::Release(self.cond.signal(true));
        }
        self.waiting -= 1;
        self.cond.wait(t);
        Arrival::Wait
    }

    /// A woken task leaves (it adds its one back).
    pub(super) fn leave(&mut self) {
        self.waiting += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_wakes_the_first_waiter_and_is_lost_without_one() {
        let mut c = Cond::default();
        assert!(c.signal(false).is_empty());
        assert!(c.signal(true).is_empty());
        c.wait(3);
        c.wait(5);
        c.wait(7);
        // The earlier signals were not kept: only these wake anyone.
        assert_eq!(c.signal(false), vec![3]);
        assert_eq!(c.signal(true), vec![5, 7]);
        assert!(c.signal(false).is_empty());
    }

    #[test]
    fn an_unlock_frees_the_mutex_and_wakes_one_sleeper_to_try_again() {
        let mut m = Mutex::default();
        assert!(m.try_lock());
        assert!(!m.try_lock());
        m.sleep(4);
        m.sleep(6);
        assert_eq!(m.unlock(), Some(4));
        // Free until someone takes it: a running task may barge in, and
        // then the woken one fails and sleeps again, behind 6.
        assert!(m.try_lock());
        assert!(!m.try_lock());
        m.sleep(4);
        assert_eq!(m.unlock(), Some(6));
        assert_eq!(m.unlock(), Some(4));
        assert_eq!(m.unlock(), None);
        assert!(m.try_lock());
    }

    #[test]
    fn posts_are_counted_or_handed_to_a_sleeper() {
        let mut s = Sem::default();
        assert!(!s.try_wait());
        assert_eq!(s.post(), None);
        assert_eq!(s.post(), None);
        assert!(s.try_wait());
        assert!(s.try_wait());
        assert!(!s.try_wait());
        s.sleep(9);
        assert_eq!(s.post(), Some(9));
        // Handed over: the count stays at zero.
        assert!(!s.try_wait());
    }

    /// Three users: the first two wait (2 -> 1 -> 0), the third finds 0
    /// and releases both; they add themselves back (0 -> 2), and the next
    /// round is the same. Had the releaser come round again before either
    /// left, it would have found 0 and passed alone, as in rt-app.
    #[test]
    fn a_barrier_holds_its_users_until_the_last_arrives() {
        let mut b = Barrier::new(3);
        for _ in 0..2 {
            assert_eq!(b.arrive(1), Arrival::Wait);
            assert_eq!(b.arrive(2), Arrival::Wait);
            assert_eq!(b.arrive(3), Arrival::Release(vec![1, 2]));
            b.leave();
            b.leave();
        }
        assert_eq!(b.arrive(3), Arrival::Wait);
        assert_eq!(b.arrive(1), Arrival::Wait);
        assert_eq!(b.arrive(2), Arrival::Release(vec![3, 1]));
        assert_eq!(b.arrive(2), Arrival::Release(vec![]));
        // One user never waits.
        let mut alone = Barrier::new(1);
        assert_eq!(alone.arrive(0), Arrival::Release(vec![]));
    }
}
