//! `struct cfs_rq`: the vruntime-ordered timeline of one CPU.
//!
//! The kernel's rbtree is keyed by `entity_key = vruntime - min_vruntime`
//! read as `s64`, so ordering survives u64 wraparound. We store each queued
//! entity in a `BTreeMap` under `(vruntime - base) as i64`, where `base` is
//! a snapshot of `min_vruntime` taken when the tree was last empty (or
//! rebased). All keys share one base, so the map's order is a true total
//! order, and it equals the kernel's order as long as every queued
//! vruntime lies within 2^62 ns of the base (we rebase before that could
//! fail). Equal keys go right in the kernel (FIFO); the second key field, an
//! insertion counter, does the same here.
//!
//! The kernel's `rb_leftmost` cache is kept explicitly ([`CfsRq::leftmost`])
//! and checked against the map by the invariants.
//!
//! Like the kernel, `load` and `nr_running` count `curr` while `curr` is
//! *not* in the tree.

use crate::entity::{SchedEntity, TaskId};
use crate::weights::LoadWeight;
use alloc::collections::BTreeMap;

/// `init_cfs_rq`: min_vruntime starts at `(u64)(-(1LL << 20))`, so
/// wraparound is exercised about a millisecond after boot.
pub const INITIAL_MIN_VRUNTIME: u64 = 0u64.wrapping_sub(1 << 20);

/// Keys further than this from the base trigger a rebase.
const REBASE_LIMIT: i64 = 1 << 62;

/// One CPU's fair runqueue of entities named by `K`: tasks ([`TaskId`])
/// everywhere but at the top of a group-scheduling hierarchy, where the
/// queue holds group entities ([`crate::group::GroupId`]).
#[derive(Clone, Debug)]
pub struct CfsRq<K: Copy + Eq = TaskId> {
    /// Summed weight of queued entities (including curr).
    pub load: LoadWeight,
    /// Queued entities (including curr).
    pub nr_running: u64,
    /// Monotonic floor of the timeline's vruntimes.
    pub min_vruntime: u64,
    /// The running entity, if it is a fair task.
    pub curr: Option<K>,
    /// The wakeup ("next") buddy.
    pub next: Option<K>,
    /// The backward ("last") buddy (2.6.28+, used by the 2.6.32 profiles).
    pub last: Option<K>,
    /// The cached leftmost entity of the tree (`rb_leftmost`).
    pub leftmost: Option<K>,
    timeline: BTreeMap<(i64, u64), K>,
    base: u64,
    insert_seq: u64,
    /// Counter for the `tasks` list order.
    pub(crate) group_seq: u64,
}

impl<K: Copy + Eq> Default for CfsRq<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// `max_vruntime(a, b)`: b if it is (wrap-safely) after a.
#[inline]
pub fn max_vruntime(min_vruntime: u64, vruntime: u64) -> u64 {
    if (vruntime.wrapping_sub(min_vruntime) as i64) > 0 { vruntime } else { min_vruntime }
}

/// `min_vruntime(a, b)`: b if it is (wrap-safely) before a.
#[inline]
pub fn min_vruntime(min_vruntime: u64, vruntime: u64) -> u64 {
    if (vruntime.wrapping_sub(min_vruntime) as i64) < 0 { vruntime } else { min_vruntime }
}

impl<K: Copy + Eq> CfsRq<K> {
    /// `init_cfs_rq`.
    pub fn new() -> Self {
        CfsRq {
            load: LoadWeight::lazy(0),
            nr_running: 0,
            min_vruntime: INITIAL_MIN_VRUNTIME,
            curr: None,
            next: None,
            last: None,
            leftmost: None,
            timeline: BTreeMap::new(),
            base: INITIAL_MIN_VRUNTIME,
            insert_seq: 0,
            group_seq: 0,
        }
    }

    /// An empty runqueue whose min_vruntime starts at `v` (used to test
    /// wraparound from arbitrary points).
    pub fn with_min_vruntime(v: u64) -> Self {
        CfsRq { min_vruntime: v, base: v, ..Self::new() }
    }

    /// `entity_key`: `vruntime - min_vruntime` as s64.
    pub fn entity_key(&self, se: &SchedEntity) -> i64 {
        se.vruntime.wrapping_sub(self.min_vruntime) as i64
    }

    /// Number of entities in the tree (excludes curr).
    pub fn tree_len(&self) -> usize {
        self.timeline.len()
    }

    /// The tree's entities in timeline order.
    pub fn timeline(&self) -> impl DoubleEndedIterator<Item = K> + '_ {
        self.timeline.values().copied()
    }

    /// The first entity of the tree according to the map itself.
    pub fn first_in_tree(&self) -> Option<K> {
        self.timeline.first_key_value().map(|(_, &t)| t)
    }

    /// `__pick_last_entity`: the rightmost entity.
    pub fn last_in_tree(&self) -> Option<K> {
        self.timeline.last_key_value().map(|(_, &t)| t)
    }

    /// The entity after `key` in timeline order (`rb_next`).
    fn next_after(&self, key: (i64, u64)) -> Option<K> {
        use core::ops::Bound::{Excluded, Unbounded};
        self.timeline.range((Excluded(key), Unbounded)).next().map(|(_, &t)| t)
    }

    /// Rebuilds every key relative to the current min_vruntime.
    fn rebase<F: Fn(K) -> u64>(&mut self, vruntime_of: F) -> alloc::vec::Vec<(K, (i64, u64))> {
        let old = core::mem::take(&mut self.timeline);
        self.base = self.min_vruntime;
        let mut moved = alloc::vec::Vec::with_capacity(old.len());
        for ((_, seq), t) in old {
            let key = (vruntime_of(t).wrapping_sub(self.base) as i64, seq);
            self.timeline.insert(key, t);
            moved.push((t, key));
        }
        moved
    }

    /// `__enqueue_entity`: insert into the tree. If the entity becomes the
    /// leftmost, `min_vruntime = max_vruntime(min_vruntime, se.vruntime)`
    /// (the 2.6.25/26 rule; 2.6.28+ moved this to update_min_vruntime).
    ///
    /// `rekey` is called for every other entity whose stored key changed
    /// because of a rebase.
    pub(crate) fn insert(
        &mut self,
        id: K,
        se: &mut SchedEntity,
        update_min_on_leftmost: bool,
        vruntime_of: impl Fn(K) -> u64,
        mut rekey: impl FnMut(K, (i64, u64)),
    ) {
        if self.timeline.is_empty() {
            self.base = self.min_vruntime;
        }
        let mut rel = se.vruntime.wrapping_sub(self.base) as i64;
        if !(-REBASE_LIMIT..=REBASE_LIMIT).contains(&rel) {
            for (t, k) in self.rebase(&vruntime_of) {
                rekey(t, k);
            }
            rel = se.vruntime.wrapping_sub(self.base) as i64;
        }
        self.insert_seq += 1;
        let key = (rel, self.insert_seq);
        // The new node becomes leftmost iff every existing key is strictly
        // greater (equal keys go right).
        let becomes_leftmost = match self.timeline.first_key_value() {
            None => true,
            Some((k, _)) => rel < k.0,
        };
        self.timeline.insert(key, id);
        se.tree_key = Some(key);
        if becomes_leftmost {
            self.leftmost = Some(id);
            if update_min_on_leftmost {
                self.min_vruntime = max_vruntime(self.min_vruntime, se.vruntime);
            }
        }
    }

    /// `__dequeue_entity`: remove from the tree. If it was the leftmost,
    /// the cache moves to `rb_next` and (2.6.25/26) `min_vruntime =
    /// max_vruntime(min_vruntime, next.vruntime)`. Clears the next buddy if
    /// it pointed here (making the buddy one-shot).
    pub(crate) fn remove(
        &mut self,
        id: K,
        se: &mut SchedEntity,
        update_min_on_leftmost: bool,
        vruntime_of: impl Fn(K) -> u64,
    ) {
        let Some(key) = se.tree_key.take() else { return };
        if self.leftmost == Some(id) {
            let next = self.next_after(key);
            self.leftmost = next;
            if let (Some(n), true) = (next, update_min_on_leftmost) {
                self.min_vruntime = max_vruntime(self.min_vruntime, vruntime_of(n));
            }
        }
        if self.next == Some(id) {
            self.next = None;
        }
        self.timeline.remove(&key);
    }

    /// Whether the tree holds `id` at `key`.
    pub(crate) fn tree_has(&self, key: &(i64, u64), id: K) -> bool {
        self.timeline.get(key) == Some(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_helpers() {
        let a = u64::MAX - 10;
        let b = 5; // 16 ns after a, across the wrap
        assert_eq!(max_vruntime(a, b), b);
        assert_eq!(min_vruntime(a, b), a);
        assert_eq!(max_vruntime(b, a), b);
        assert_eq!(INITIAL_MIN_VRUNTIME, u64::MAX - (1 << 20) + 1);
    }

    #[test]
    fn the_tree_holds_queued_entities_in_vruntime_order() {
        // __enqueue_entity: equal keys go right; the first insert below the
        // leftmost raises min_vruntime only with max_vruntime (2.6.25/26).
        let mut rq = CfsRq::with_min_vruntime(1_000);
        let mut ses: alloc::vec::Vec<SchedEntity> =
            [3_000u64, 2_000, 2_000].iter().map(|&v| SchedEntity { vruntime: v, ..SchedEntity::default() }).collect();
        let vr: alloc::vec::Vec<u64> = ses.iter().map(|s| s.vruntime).collect();
        for (i, se) in ses.iter_mut().enumerate() {
            rq.insert(TaskId(i as u32), se, true, |t| vr[t.0 as usize], |_, _| {});
        }
        assert_eq!(rq.tree_len(), 3);
        let order: alloc::vec::Vec<TaskId> = rq.timeline().collect();
        assert_eq!(order, [TaskId(1), TaskId(2), TaskId(0)]);
        assert_eq!(rq.leftmost, Some(TaskId(1)));
        // T0 went first into the empty tree: max_vruntime(1000, 3000) = 3000; T1 then
        // became leftmost at 2000, and max_vruntime(3000, 2000) keeps 3000.
        assert_eq!(rq.min_vruntime, 3_000);
        assert_eq!((rq.entity_key(&ses[0]), rq.entity_key(&ses[1])), (0, -1_000));
        rq.remove(TaskId(1), &mut ses[1], true, |t| vr[t.0 as usize]);
        assert_eq!((rq.tree_len(), rq.leftmost), (2, Some(TaskId(2))));
    }

    /// The keys share one base; an entity more than 2^62 ns from it makes
    /// the tree rebase on the current min_vruntime, so that the stored
    /// order stays the kernel's `entity_key` order (vruntime -
    /// min_vruntime as s64) for every queued entity. Here T0 (100) and T1
    /// (200) were queued at base 0; min_vruntime has since moved to 2^62
    /// (no rule moves it so far while they wait; the API can), and T2
    /// arrives at 2^62 + 2^61 + 50, 2^62 + 2^61 + 50 past the base: the
    /// tree rebases to 2^62, rekeying T0 to 100 - 2^62 and T1 to 200 -
    /// 2^62 (their insertion counters kept), and T2 goes in at 2^61 + 50.
    /// The order is T0, T1, T2, as entity_key gives it, and removing T1
    /// by its new key leaves T0 the leftmost.
    #[test]
    fn a_far_vruntime_rebases_every_key_on_min_vruntime() {
        let mut rq = CfsRq::with_min_vruntime(0);
        let far = (1u64 << 62) + (1 << 61) + 50;
        let mut ses: alloc::vec::Vec<SchedEntity> =
            [100u64, 200, far].iter().map(|&v| SchedEntity { vruntime: v, ..SchedEntity::default() }).collect();
        let vr: alloc::vec::Vec<u64> = ses.iter().map(|s| s.vruntime).collect();
        let mut rekeyed = alloc::vec::Vec::new();
        for (i, se) in ses.iter_mut().enumerate().take(2) {
            rq.insert(TaskId(i as u32), se, false, |t| vr[t.0 as usize], |t, k| rekeyed.push((t, k)));
        }
        assert!(rekeyed.is_empty());
        assert_eq!((ses[0].tree_key, ses[1].tree_key), (Some((100, 1)), Some((200, 2))));
        rq.min_vruntime = 1 << 62;
        rq.insert(TaskId(2), &mut ses[2], false, |t| vr[t.0 as usize], |t, k| rekeyed.push((t, k)));
        let base = 1i64 << 62;
        assert_eq!(rekeyed, [(TaskId(0), (100 - base, 1)), (TaskId(1), (200 - base, 2))]);
        assert_eq!(ses[2].tree_key, Some(((1 << 61) + 50, 3)));
        assert_eq!(rq.timeline().collect::<alloc::vec::Vec<_>>(), [TaskId(0), TaskId(1), TaskId(2)]);
        assert_eq!(rq.leftmost, Some(TaskId(0)));
        for &(t, k) in &rekeyed {
            ses[t.0 as usize].tree_key = Some(k);
            assert!(rq.tree_has(&k, t));
        }
        rq.remove(TaskId(1), &mut ses[1], false, |t| vr[t.0 as usize]);
        assert_eq!((rq.tree_len(), rq.leftmost), (2, Some(TaskId(0))));
        assert_eq!(rq.entity_key(&ses[2]), (1 << 61) + 50);
    }
}
