//! The engine's event queue: a calendar queue that pops in exactly the
//! order of a binary heap over unique `(time, seq)` keys.
//!
//! A run keeps many events far ahead of the clock (ticks, sleep timers,
//! and above all superseded hrtick expiries, which stay queued until their
//! time comes: tens of thousands on a busy 16-CPU host), while it pops
//! events a few microseconds apart. One binary heap over all of them made
//! every pop walk log2(n) levels of a heap far larger than the cache.
//!
//! Here only the events of the current time slot (`2^SLOT_SHIFT` ns) are
//! ordered: the ones the slot had when it became current in a vector
//! sorted once (`sorted`; a slot can hold a thousand simultaneous ticks),
//! the ones pushed into it since in a small binary heap (`near`). Those of
//! the next `SLOTS - 1` slots wait unsorted in one bucket per slot, and
//! anything later in a binary heap (`far`). When the current slot runs dry,
//! the next non-empty bucket becomes current. Every key of the current slot
//! is below every key elsewhere, so `pop` returns the global minimum: the
//! same sequence as one `BinaryHeap` (keys are unique, so the order is
//! total). The queue does not assume that pushes are never earlier than the
//! last pop: an early key simply joins `near`.

use std::collections::BinaryHeap;

/// log2 of the slot width in ns (16.4 µs).
const SLOT_SHIFT: u32 = 14;
/// Buckets in the ring (a window of 67 ms of simulated time).
const SLOTS: usize = 4096;
const WORDS: usize = SLOTS / 64;
/// A drained bucket keeps at most this much capacity (items), so a long
/// run on a large host does not keep every bucket at its peak size.
const KEEP: usize = 128;

/// What the queue needs of an item: its time and a total order (the
/// item's `Ord` must put the earliest `(time, seq)` greatest, as for a
/// min-first `BinaryHeap`).
pub(crate) trait Timed: Ord {
    /// The item's time, ns.
    fn time(&self) -> u64;
}

/// The calendar queue (see the module docs).
#[derive(Debug)]
pub(crate) struct EventQueue<T> {
    /// The current slot's items as it became current, latest key first.
    sorted: Vec<T>,
    /// Every other item with `time < limit`.
    near: BinaryHeap<T>,
    /// `near` holds slot `cur` (and anything earlier); `limit` is the start
    /// of slot `cur + 1`.
    cur: u64,
    limit: u64,
    /// Items of slots `cur + 1 ..= cur + SLOTS - 1`, at `slot % SLOTS`.
    ring: Vec<Vec<T>>,
    /// Which ring buckets are non-empty.
    occupied: [u64; WORDS],
    /// Items of slot `cur + SLOTS` and later.
    far: BinaryHeap<T>,
    len: usize,
}

impl<T: Timed> EventQueue<T> {
    /// An empty queue whose first slot starts at time 0.
    pub(crate) fn new() -> Self {
        EventQueue {
            sorted: Vec::new(),
            near: BinaryHeap::new(),
            cur: 0,
            limit: 1 << SLOT_SHIFT,
            ring: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            far: BinaryHeap::new(),
            len: 0,
        }
    }

    /// Queued items.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Adds an item.
    #[inline]
    pub(crate) fn push(&mut self, item: T) {
        self.len += 1;
        let t = item.time();
        if t < self.limit {
            self.near.push(item);
            return;
        }
        let slot = t >> SLOT_SHIFT;
        if slot - self.cur < SLOTS as u64 {
            let i = slot as usize % SLOTS;
            self.ring[i].push(item);
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.far.push(item);
        }
    }

    /// Removes the item with the earliest `(time, seq)`.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.sorted.is_empty() && self.near.is_empty() {
            if self.len == 0 {
                return None;
            }
            self.advance();
        }
        self.len -= 1;
        // The greater item (by the min-first order) is the earlier key.
        let x = match (self.sorted.last(), self.near.peek()) {
            (Some(a), Some(b)) if b > a => self.near.pop(),
            (Some(_), _) => self.sorted.pop(),
            (None, _) => self.near.pop(),
        };
        debug_assert!(x.is_some());
        x
    }

    /// The current slot is empty and something is queued: make the
    /// earliest non-empty slot current.
    fn advance(&mut self) {
        let next = match self.next_occupied() {
            Some(slot) => slot,
            // The ring is empty: jump to the far heap's first slot.
            None => self.far.peek().map(|x| x.time() >> SLOT_SHIFT).expect("a non-empty queue has a next item"),
        };
        debug_assert!(next > self.cur);
        self.cur = next;
        self.limit = (next + 1) << SLOT_SHIFT;
        let i = next as usize % SLOTS;
        if self.occupied[i / 64] & (1 << (i % 64)) != 0 {
            self.occupied[i / 64] &= !(1 << (i % 64));
            let bucket = &mut self.ring[i];
            self.sorted.append(bucket);
            bucket.shrink_to(KEEP);
            // Ascending by the min-first order: the earliest key last.
            self.sorted.sort_unstable();
        }
        // Far items whose slot entered the window move into the ring (or
        // into near, for the current slot).
        while let Some(x) = self.far.peek() {
            let slot = x.time() >> SLOT_SHIFT;
            if slot - self.cur >= SLOTS as u64 {
                break;
            }
            let x = self.far.pop().expect("peeked");
            if slot == self.cur {
                self.near.push(x);
            } else {
                let i = slot as usize % SLOTS;
                self.ring[i].push(x);
                self.occupied[i / 64] |= 1 << (i % 64);
            }
        }
    }

    /// The first occupied ring slot after `cur`, if any.
    fn next_occupied(&self) -> Option<u64> {
        let start = (self.cur as usize + 1) % SLOTS;
        // Scan SLOTS bits from `start`, wrapping; bucket indices map back
        // to slots `cur + 1 ..= cur + SLOTS - 1` in ring order.
        let mut i = start;
        let mut scanned = 0;
        while scanned < SLOTS {
            let w = i / 64;
            let bits = self.occupied[w] >> (i % 64);
            if bits != 0 {
                let found = i + bits.trailing_zeros() as usize;
                let dist = (found + SLOTS - start) % SLOTS;
                return Some(self.cur + 1 + dist as u64);
            }
            let step = 64 - i % 64;
            scanned += step;
            i = (i + step) % SLOTS;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[derive(Debug, PartialEq, Eq)]
    struct It(u64, u64);

    impl Ord for It {
        fn cmp(&self, o: &Self) -> Ordering {
            (o.0, o.1).cmp(&(self.0, self.1))
        }
    }

    impl PartialOrd for It {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }

    impl Timed for It {
        fn time(&self) -> u64 {
            self.0
        }
    }

    /// Only far items (beyond the ring's 67 ms window) with the ring empty:
    /// the queue jumps straight to the far heap's first slot.
    #[test]
    fn jumps_to_far_items_when_the_ring_is_empty() {
        let mut q = EventQueue::new();
        for (t, seq) in [(5_000_000_000, 1), (3_000_000_000, 2), (3_000_000_000, 0), (9_000_000_000, 3)] {
            q.push(It(t, seq));
        }
        assert_eq!(q.pop(), Some(It(3_000_000_000, 0)));
        // Something just after the new current time, and one far again.
        q.push(It(3_000_000_100, 4));
        q.push(It(20_000_000_000, 5));
        let rest: Vec<It> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            rest,
            [
                It(3_000_000_000, 2),
                It(3_000_000_100, 4),
                It(5_000_000_000, 1),
                It(9_000_000_000, 3),
                It(20_000_000_000, 5)
            ]
        );
    }

    /// A key at the exact start of the next slot belongs to that slot: pushed
    /// while an equal time with a lower seq already waits in the ring, it
    /// still pops second (random times almost never hit the boundary).
    #[test]
    fn a_key_at_a_slot_boundary_waits_in_its_own_slot() {
        let slot = 1u64 << SLOT_SHIFT;
        let mut q = EventQueue::new();
        q.push(It(2 * slot, 1));
        q.push(It(slot + 5, 0));
        // Slot 1 is now current; its limit is 2 * slot.
        assert_eq!(q.pop(), Some(It(slot + 5, 0)));
        q.push(It(2 * slot, 2));
        assert_eq!(q.pop(), Some(It(2 * slot, 1)));
        assert_eq!(q.pop(), Some(It(2 * slot, 2)));
        assert_eq!(q.pop(), None);
    }

    /// Random pushes (mostly ahead of the last pop, some far ahead, some
    /// early, some at equal times) interleaved with pops: the same order as
    /// a binary heap.
    #[test]
    fn pops_in_binary_heap_order() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut q = EventQueue::new();
        let mut h = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0u64;
        for round in 0..200_000u64 {
            let r = rnd();
            if r % 5 < 3 || h.is_empty() {
                let delta = match rnd() % 10 {
                    0 => rnd() % 2_000_000_000,
                    1 => rnd() % 100_000_000,
                    2 => 0,
                    3 => rnd() % 1000,
                    _ => rnd() % 200_000,
                };
                let t = if round % 1000 == 999 { now.saturating_sub(rnd() % 50_000) } else { now + delta };
                seq += 1;
                q.push(It(t, seq));
                h.push(It(t, seq));
            } else {
                let a = q.pop();
                let b = h.pop();
                assert_eq!(a, b);
                now = a.map_or(now, |a| a.0.max(now));
            }
            assert_eq!(q.len(), h.len());
        }
        while let Some(b) = h.pop() {
            assert_eq!(q.pop(), Some(b));
        }
        assert_eq!(q.pop(), None);
    }
}
