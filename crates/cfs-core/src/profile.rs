//! Kernel profiles: the code-path switches that differ between releases.
//!
//! A profile is a [`KernelVersion`]; this module names each behavioural
//! difference once, with the commit that made it, so the fair-class code
//! reads `if rules.weight_math_rc()` rather than comparing versions.

use crate::patches::{Patch, Patches};
use cfs_topology::KernelVersion;

/// The code-path rules of a kernel version plus its patches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// The kernel.
    pub version: KernelVersion,
    /// Applied patches.
    pub patches: Patches,
}

impl Rules {
    /// 2.6.26-rc1..rc4 ran 8f1bc385cfb ("sched: fair: weight
    /// calculations"): vruntime advances by delta·W/w, slices and
    /// granularities are computed with calc_delta_mine/calc_delta_asym, the
    /// sleeper credit is normalised (NORMALIZED_SLEEPER). Reverted in rc5 by
    /// f9305d4a096.
    pub fn weight_math_rc(&self) -> bool {
        self.version == KernelVersion::V2_6_26Rc4
    }

    /// wake_affine's sync + avg_overlap shortcut requires the `balanced`
    /// test and AFFINE_WAKEUPS is honoured: b3137bc8e77 (2.6.26-rc5), or
    /// the `affinity-fix` patch.
    pub fn affine_needs_balance(&self) -> bool {
        self.version >= KernelVersion::V2_6_26 || self.patches.has(Patch::AffinityFix)
    }

    /// 2.6.25's forms: buddy pick and wakeup preemption use the
    /// queue-scaled / curr-scaled granularity directly; sched_slice uses
    /// calc_delta_mine; enqueue places and inserts before accounting.
    pub fn is_2_6_25(&self) -> bool {
        self.version == KernelVersion::V2_6_25
    }

    /// `update_rq_clock(rq)` called from another CPU updates that
    /// runqueue's clock: from 2.6.26 it reads `sched_clock_cpu(cpu_of(rq))`
    /// from anywhere (bce7f793 sched.c:596-599), while 2.6.25 updates only
    /// the calling CPU's own runqueue and leaves a remote one at its last
    /// local update (4b119e21 sched.c:543-547).
    pub fn remote_clock_update(&self) -> bool {
        !self.is_2_6_25()
    }

    /// The 2.6.32 family.
    pub fn is_2_6_32(&self) -> bool {
        self.version.is_2_6_32()
    }

    /// try_to_wake_up re-locks the runqueue it chose and updates its clock
    /// when that is not the task's previous CPU: f5dc37530ba (2.6.32-rc5),
    /// 22763c5c sched.c:2384-2385. 2.6.32-rc1 does not (17d857be
    /// sched.c:2352-2354), so enqueue_entity and check_preempt_wakeup run
    /// update_curr on that CPU's last clock. Earlier kernels never change
    /// runqueue inside try_to_wake_up's lock, so the question is 2.6.32's.
    pub fn wakeup_updates_new_rq_clock(&self) -> bool {
        self.version == KernelVersion::V2_6_32
    }

    /// task_hot counts the next and last buddies as cache hot only while the
    /// CPU executing the balance has tasks: f685ceacab0 (2.6.32-rc7),
    /// 22763c5c sched.c:2040-2043. 2.6.32-rc1 counts them always (17d857be
    /// sched.c:2010-2013).
    pub fn hot_buddy_needs_busy_balancer(&self) -> bool {
        self.version == KernelVersion::V2_6_32
    }

    /// The load-balance iterator walks the cfs_rq `tasks` list (2.6.26,
    /// 4a55bd5e97b) instead of the rbtree (2.6.25), and in 2.6.26 it never
    /// returns the last (oldest) list entry: a bug fixed in 2.6.28
    /// (38736f47507). We keep it deliberately; the `iterator-fix` patch
    /// applies that fix.
    pub fn balance_iterator_skips_last(&self) -> bool {
        matches!(self.version, KernelVersion::V2_6_26Rc4 | KernelVersion::V2_6_26)
            && !self.patches.has(Patch::IteratorFix)
    }

    /// min_vruntime follows the current task and the leftmost through
    /// update_min_vruntime, called from update_curr and dequeue_entity, and
    /// the tree operations leave it alone: 1af5f730fc1 (2.6.28) with
    /// e17036dac18 (2.6.29), in 2.6.32; the `min-vruntime-fix` patch on
    /// 2.6.25/26.
    pub fn min_vruntime_tracks_curr(&self) -> bool {
        self.is_2_6_32() || self.patches.has(Patch::MinVruntimeFix)
    }

    /// Group scheduling's balancing by aggregates (18d95a2832c, 2.6.26-rc1,
    /// reverted by 6363ca57c76 in rc5): `rq->load` counts the top-level
    /// entities (`inc_cpu_load` in account_entity_enqueue, e490517a
    /// sched_fair.c:555-578), each group's per-CPU weight is its shares
    /// split by the CPUs' task weight at every periodic balance pass
    /// (`get_aggregate`), and load_balance_fair converts between the two
    /// (see [`crate::group`]). 2.6.26-rc4 alone.
    pub fn group_aggregates(&self) -> bool {
        self.version == KernelVersion::V2_6_26Rc4
    }

    /// cpu_avg_load_per_task on an empty runqueue: SCHED_LOAD_SCALE in
    /// 2.6.25/26, 0 in 2.6.32.
    pub fn empty_rq_load_per_task(&self) -> u64 {
        if self.is_2_6_32() { 0 } else { 1024 }
    }
}
