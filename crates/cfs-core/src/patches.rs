//! The seed threads' patches, and two mainline fixes for behaviour the
//! profiles keep, as switchable variants (all off by default).
//!
//! Each seed patch is specified by its posting in
//! `../shared/seeds/patches.md`, and the code it changes carries a
//! `patches.md §N` comment; the mainline fixes are specified by their
//! commits, which the [`crate::profile::Rules`] switch they turn off names.

use cfs_topology::KernelVersion;
use core::fmt;

/// One patch from the seed threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "fuzzing", derive(arbitrary::Arbitrary))]
pub enum Patch {
    /// Peter Zijlstra, 2008-05-22: `se->waker`. check_preempt_wakeup records
    /// the wakee as the current task's `waker`; wake_affine's sync +
    /// avg_overlap shortcut fires only when `p.waker == curr.waker`.
    Waker,
    /// Mike Galbraith, 2008-06-07: `last_preempter`. A current task that is
    /// preempted by several different wakees before it has run
    /// migration_cost is not preempted again, and its further affine sync
    /// wakeups are refused ("disperse").
    LastPreempter,
    /// The same without the wake_affine ("disperse") hunk.
    LastPreempterNoDisperse,
    /// Mike Galbraith, 2008-05-23: wake_affine subtracts the waker's weight
    /// from this_load only when this_load exceeds it.
    SyncLoadClamp,
    /// Mike Galbraith, 2008-05-24: a SYNC_WAKEUPS feature bit (32, default
    /// off) for 2.6.25. Only meaningful on the 2.6.25 profile.
    SyncWakeupsBit,
    /// Mike Galbraith's 2008-05-27 affinity fix, merged as b3137bc8e77
    /// ("sched: stop wake_affine from causing serious imbalance"), applied
    /// on top of 2.6.26-rc4 alone (without the rc5 reverts f9305d4a096 and
    /// 6363ca57c76): the sync shortcut needs `balanced`, AFFINE_WAKEUPS is
    /// honoured. 2.6.26 final already contains it.
    AffinityFix,
    /// 38736f47507 (Gautham R Shenoy, 2008-09-06, merged for 2.6.28):
    /// "sched: fix __load_balance_iterator() for cfq with only one task".
    /// The 2.6.26 fair load-balance iterator never returns the last (oldest)
    /// entry of the cfs_rq's task list, so a runqueue's oldest task cannot
    /// be pulled and a lone task never moves (the commit names the
    /// sched_mc regression against 2.6.25 this caused). With the fix the
    /// last entry is returned when it is a task, which without group
    /// scheduling it always is. Only the rc4 and 2.6.26 profiles have the
    /// bug (it came with 4a55bd5e97b in 2.6.26-rc1).
    IteratorFix,
}

impl Patch {
    /// Every patch.
    pub const ALL: [Patch; 7] = [
        Patch::Waker,
        Patch::LastPreempter,
        Patch::LastPreempterNoDisperse,
        Patch::SyncLoadClamp,
        Patch::SyncWakeupsBit,
        Patch::AffinityFix,
        Patch::IteratorFix,
    ];

    /// The name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Patch::Waker => "waker",
            Patch::LastPreempter => "last-preempter",
            Patch::LastPreempterNoDisperse => "last-preempter-no-disperse",
            Patch::SyncLoadClamp => "sync-load-clamp",
            Patch::SyncWakeupsBit => "sync-wakeups-bit",
            Patch::AffinityFix => "affinity-fix",
            Patch::IteratorFix => "iterator-fix",
        }
    }

    /// Looks a patch up by name.
    pub fn by_name(s: &str) -> Option<Patch> {
        Patch::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(s.trim()))
    }

    /// The kernels the posting applies to. `None` = fine; otherwise why not.
    pub fn incompatibility(self, v: KernelVersion) -> Option<&'static str> {
        use KernelVersion::*;
        match (self, v) {
            (Patch::IteratorFix, V2_6_25) => Some(
                "2.6.25's balance iterator walks the rbtree and returns every task; the list iterator came in 2.6.26-rc1",
            ),
            (Patch::IteratorFix, V2_6_32Rc1 | V2_6_32) => Some("2.6.32 already contains 38736f47507"),
            (_, V2_6_32Rc1 | V2_6_32) => {
                Some("the seed patches were posted against 2.6.25/2.6.26; 2.6.32's wakeup path differs")
            }
            (Patch::SyncWakeupsBit, V2_6_26Rc4 | V2_6_26) => {
                Some("2.6.26 already has SYNC_WAKEUPS (bit 32, default on); use the features mask")
            }
            (Patch::AffinityFix, V2_6_26) => Some("2.6.26 final already contains b3137bc8e77"),
            _ => None,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Patch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of patches.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Patches(u8);

impl Patches {
    /// No patches.
    pub const fn none() -> Self {
        Patches(0)
    }

    /// Adds a patch.
    pub fn with(mut self, p: Patch) -> Self {
        self.0 |= p.bit();
        self
    }

    /// Removes a patch.
    pub fn without(mut self, p: Patch) -> Self {
        self.0 &= !p.bit();
        self
    }

    /// Whether `p` is applied.
    pub fn has(&self, p: Patch) -> bool {
        self.0 & p.bit() != 0
    }

    /// The applied patches in [`Patch::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = Patch> + '_ {
        Patch::ALL.into_iter().filter(|p| self.has(*p))
    }

    /// Whether the last_preempter preemption avoidance is on (either form).
    pub fn last_preempter(&self) -> bool {
        self.has(Patch::LastPreempter) || self.has(Patch::LastPreempterNoDisperse)
    }
}

impl fmt::Debug for Patches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
