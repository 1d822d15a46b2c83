//! The seed threads' patches, and three later mainline changes for
//! behaviour the 2.6.25/26 profiles keep, as switchable variants (all off
//! by default).
//!
//! Each seed patch is specified by its posting in
//! `../shared/seeds/patches.md`, and the code it changes carries a
//! `patches.md §N` comment; the mainline fixes are specified by their
//! commits, which the [`crate::profile::Rules`] switch they turn off names.
//! One patch changes no code but the sched-domain initialisers
//! ([`Patch::PreferLocalToNode`]). Build the domains with its edits
//! ([`Patches::init_flag_edits`] as `BuildOptions::init_flags`) to get the
//! patched kernel's levels: the builder applies them before degenerate
//! removal, so on a one-node host built with CONFIG_NUMA the NODE level that
//! gains SD_PREFER_LOCAL stays. A scheduler also writes the edits into the
//! levels it is given ([`Patch::domain_flags`]), which is all it can do for
//! domains built without them, and writes them, or their inverse, when the
//! patch is switched at run time. That adds or drops no level; a caller
//! that wants the levels the edit keeps or drops rebuilds the domains with
//! [`crate::Scheduler::arch_reinit_sched_domains`] (cfs-machine does, at
//! every switch of such a patch).

use cfs_topology::{DomainLevel, InitFlagEdits, KernelVersion, SdFlags};
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
    /// wakeups are refused ("disperse"). The tag goes on the kernel's
    /// `current` only: the waker at a wakeup, the parent at a fork onto its
    /// own CPU, and the pulling CPU's current task when a balance pass
    /// pulls a task that would preempt it (schedule()'s prev in a newly
    /// idle pass). Posted against rc5, whose wake_affine already has
    /// b3137bc8e77's `balanced` test; on the rc4 profile the shortcut
    /// stays unbalanced unless `AffinityFix` is applied too. On 2.6.25,
    /// whose check_preempt_wakeup has no wakeup_preempt_entity, the
    /// check_preempt_wakeup hunk hangs on its `pse->vruntime + gran <
    /// se->vruntime` test instead (4b119e21 sched_fair.c:1142-1151), as a
    /// hand-applied backport would.
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
    /// honoured. 2.6.26 final already contains it. Also accepted on 2.6.25
    /// as a what-if the commit could not build on: 2.6.25 has no
    /// AFFINE_WAKEUPS bit, so only the `balanced` half acts there.
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
    /// 15afe09bf49 (Peter Zijlstra, 2008-09-20, merged for 2.6.28-rc1, not 2.6.27):
    /// "sched: wakeup preempt when small overlap", there as the
    /// WAKEUP_OVERLAP feature bit. A sync wakeup preempts the current task
    /// at once, whatever the vruntimes, when both it and the wakee have an
    /// avg_overlap below migration_cost: the waker is about to sleep, so
    /// the wakee runs now rather than after it. The commit answers a 10%
    /// OLTP regression (Lin Ming, against 2.6.27-rc4). Applied to the
    /// 2.6.25 / 2.6.26 check_preempt_wakeup at the same place, right after
    /// the WAKEUP_PREEMPT test (2.6.25's ends in its own unsigned vruntime
    /// test rather than wakeup_preempt_entity, which the patch precedes
    /// either way), so it needs that bit on.
    WakeupOverlap,
    /// 1af5f730fc1 (Peter Zijlstra, 2008-10-24, merged for 2.6.28): "sched:
    /// more accurate min_vruntime accounting", with its follow-up
    /// e17036dac18 (2009-01-15, "sched: fix update_min_vruntime"), which
    /// together give 2.6.32's update_min_vruntime. 2.6.25/26 keep
    /// min_vruntime only in `__enqueue_entity` / `__dequeue_entity`, from
    /// the tree's leftmost entity, so it "can go wrong and skip the current
    /// task" (Mike Galbraith's report in the commit): it runs ahead of a
    /// current task further left, and tasks woken or placed after that land
    /// too far right. With the fix, update_curr and dequeue_entity recompute
    /// it from the current task and the leftmost, the tree operations leave
    /// it alone, and place_entity starts from min_vruntime alone.
    MinVruntimeFix,
    /// Peter Zijlstra, 2009-10-09, merged as 799e2205ec6 ("sched: Disable
    /// SD_PREFER_LOCAL for MC/CPU domains"; patches.md §6): SD_MC_INIT and
    /// SD_CPU_INIT lose SD_PREFER_LOCAL, x86's SD_NODE_INIT gains it. A
    /// change of the domain initialisers only, so it acts through the
    /// flags ([`Patch::domain_flags`]). Against 2.6.32-rc1 only: 2.6.32
    /// final has it, and has 6b9de613ae9 (Mike Galbraith, 2009-11-02,
    /// "sched: Disable SD_PREFER_LOCAL at node level") on top, which took
    /// the NODE half back out after Yanmin reported "an order of magnitude
    /// increase in select_task_rq_fair() overhead" under tbench and
    /// VolanoMark.
    PreferLocalToNode,
}

/// 799e2205ec6: include/linux/topology.h SD_MC_INIT and SD_CPU_INIT go
/// from `1*SD_PREFER_LOCAL` to `0*`; arch/x86/include/asm/topology.h
/// SD_NODE_INIT gains `1*SD_PREFER_LOCAL`.
const PREFER_LOCAL_TO_NODE: [(DomainLevel, SdFlags, SdFlags); 3] = [
    (DomainLevel::Mc, SdFlags::empty(), SdFlags::PREFER_LOCAL),
    (DomainLevel::Cpu, SdFlags::empty(), SdFlags::PREFER_LOCAL),
    (DomainLevel::Node, SdFlags::PREFER_LOCAL, SdFlags::empty()),
];

impl Patch {
    /// Every patch.
    pub const ALL: [Patch; 10] = [
        Patch::Waker,
        Patch::LastPreempter,
        Patch::LastPreempterNoDisperse,
        Patch::SyncLoadClamp,
        Patch::SyncWakeupsBit,
        Patch::AffinityFix,
        Patch::IteratorFix,
        Patch::WakeupOverlap,
        Patch::MinVruntimeFix,
        Patch::PreferLocalToNode,
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
            Patch::WakeupOverlap => "wakeup-overlap",
            Patch::MinVruntimeFix => "min-vruntime-fix",
            Patch::PreferLocalToNode => "prefer-local-to-node",
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
            (Patch::PreferLocalToNode, V2_6_32Rc1) => None,
            (Patch::PreferLocalToNode, V2_6_32) => {
                Some("2.6.32 final contains 799e2205ec6, and 6b9de613ae9 took SD_PREFER_LOCAL back off the NODE level")
            }
            (Patch::PreferLocalToNode, _) => Some("SD_PREFER_LOCAL came in 2.6.32-rc1 (59abf02644c)"),
            (Patch::IteratorFix, V2_6_25) => Some(
                "2.6.25's balance iterator walks the rbtree and returns every task; the list iterator came in 2.6.26-rc1",
            ),
            (Patch::IteratorFix, V2_6_32Rc1 | V2_6_32) => Some("2.6.32 already contains 38736f47507"),
            (Patch::MinVruntimeFix, V2_6_32Rc1 | V2_6_32) => {
                Some("2.6.32 already contains 1af5f730fc1 and e17036dac18")
            }
            (Patch::WakeupOverlap, V2_6_32Rc1 | V2_6_32) => {
                Some("2.6.32 has 15afe09bf49 as the WAKEUP_OVERLAP feature bit (off by default); use the features mask")
            }
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

    /// The patch that cannot be applied together with this one: the two
    /// postings of last_preempter (with and without the disperse hunk) are
    /// alternatives, not layers. Their common hunks would apply twice, so
    /// a tree can carry one or the other. `None` for every other patch.
    pub const fn conflicts_with(self) -> Option<Patch> {
        match self {
            Patch::LastPreempter => Some(Patch::LastPreempterNoDisperse),
            Patch::LastPreempterNoDisperse => Some(Patch::LastPreempter),
            _ => None,
        }
    }

    /// The domain flags the patch changes, as (level, set, clear): the
    /// initialiser hunks of a patch that changes no code. Switching the
    /// patch off writes the inverse (each `set` cleared, each `clear` set),
    /// which restores the flags the kernel built at those levels.
    pub const fn domain_flags(self) -> &'static [(DomainLevel, SdFlags, SdFlags)] {
        match self {
            Patch::PreferLocalToNode => &PREFER_LOCAL_TO_NODE,
            _ => &[],
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Patch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of patches.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Patches(u16);

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

    /// The applied patch that `p` cannot join ([`Patch::conflicts_with`]).
    pub fn conflict(&self, p: Patch) -> Option<Patch> {
        p.conflicts_with().filter(|&o| self.has(o))
    }

    /// The applied patches in [`Patch::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = Patch> + '_ {
        Patch::ALL.into_iter().filter(|p| self.has(*p))
    }

    /// Whether the last_preempter preemption avoidance is on (either form).
    pub fn last_preempter(&self) -> bool {
        self.has(Patch::LastPreempter) || self.has(Patch::LastPreempterNoDisperse)
    }

    /// The initialiser edits of these patches ([`Patch::domain_flags`]),
    /// for the builder's `BuildOptions::init_flags`: domains built with
    /// them are the patched kernel's, including a level the edits keep
    /// that the unpatched flags would have dropped.
    pub fn init_flag_edits(&self) -> InitFlagEdits {
        self.iter()
            .flat_map(|p| p.domain_flags().iter())
            .fold(InitFlagEdits::none(), |e, &(level, set, clear)| e.with(level, set, clear))
    }
}

impl fmt::Debug for Patches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{Patch, Patches};
    use alloc::format;
    use alloc::vec::Vec;

    #[test]
    fn a_patch_set_adds_and_removes_one_patch_at_a_time() {
        let set = Patches::none().with(Patch::Waker).with(Patch::AffinityFix).with(Patch::IteratorFix);
        assert_eq!(set.iter().collect::<Vec<_>>(), [Patch::Waker, Patch::AffinityFix, Patch::IteratorFix]);
        let less = set.without(Patch::AffinityFix);
        assert_eq!(less.iter().collect::<Vec<_>>(), [Patch::Waker, Patch::IteratorFix]);
        assert!(less.has(Patch::Waker) && !less.has(Patch::AffinityFix));
        // Removing one that is not there changes nothing.
        assert_eq!(less.without(Patch::SyncLoadClamp), less);
        assert_eq!(format!("{less:?}"), "[Waker, IteratorFix]");
    }

    #[test]
    fn names_round_trip_and_either_last_preempter_form_counts() {
        for p in Patch::ALL {
            assert_eq!(Patch::by_name(p.name()), Some(p));
            assert_eq!(Patch::by_name(&format!(" {} ", p.name().to_uppercase())), Some(p));
        }
        assert_eq!(Patch::by_name("turbo"), None);
        assert!(Patches::none().with(Patch::LastPreempterNoDisperse).last_preempter());
        assert!(Patches::none().with(Patch::LastPreempter).last_preempter());
        assert!(!Patches::none().with(Patch::Waker).last_preempter());
    }

    #[test]
    fn later_mainline_changes_apply_to_the_kernels_before_them() {
        // wakeup-overlap (2.6.28) and min-vruntime-fix (2.6.28/29) patch
        // 2.6.25, rc4 and 2.6.26; 2.6.32 has both already.
        use cfs_topology::KernelVersion::*;
        for (p, why) in [
            (Patch::WakeupOverlap, "WAKEUP_OVERLAP feature bit"),
            (Patch::MinVruntimeFix, "already contains 1af5f730fc1"),
        ] {
            for v in [V2_6_25, V2_6_26Rc4, V2_6_26] {
                assert_eq!(p.incompatibility(v), None, "{p} on {v}");
            }
            for v in [V2_6_32Rc1, V2_6_32] {
                assert!(p.incompatibility(v).unwrap().contains(why), "{p} on {v}");
            }
        }
        // Ten patches: the set is wider than a byte.
        let all = Patch::ALL.iter().fold(Patches::none(), |set, p| set.with(*p));
        assert_eq!(all.iter().count(), 10);
        assert!(all.has(Patch::MinVruntimeFix) && !all.without(Patch::MinVruntimeFix).has(Patch::MinVruntimeFix));
        assert!(
            all.has(Patch::PreferLocalToNode) && !all.without(Patch::PreferLocalToNode).has(Patch::PreferLocalToNode)
        );
    }

    #[test]
    fn prefer_local_to_node_is_799e2205ec6_on_rc1_only() {
        // patches.md §6, merged as 799e2205ec6 after 2.6.32-rc1 (17d857be); 2.6.32
        // final (22763c5c) has it and 6b9de613ae9 on top; no earlier kernel has the flag.
        use cfs_topology::KernelVersion::*;
        use cfs_topology::{DomainLevel, SdFlags};
        let p = Patch::PreferLocalToNode;
        assert_eq!(p.incompatibility(V2_6_32Rc1), None);
        assert!(p.incompatibility(V2_6_32).unwrap().contains("6b9de613ae9"));
        for v in [V2_6_25, V2_6_26Rc4, V2_6_26] {
            assert!(p.incompatibility(v).unwrap().contains("59abf02644c"), "{v}");
        }
        let pl = SdFlags::PREFER_LOCAL;
        assert_eq!(
            p.domain_flags(),
            [
                (DomainLevel::Mc, SdFlags::empty(), pl),
                (DomainLevel::Cpu, SdFlags::empty(), pl),
                (DomainLevel::Node, pl, SdFlags::empty())
            ]
        );
        // Every other patch changes code, not the domains.
        assert!(Patch::ALL.iter().filter(|q| **q != p).all(|q| q.domain_flags().is_empty()));
    }
}
