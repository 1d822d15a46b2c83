//! `struct rq`: one CPU's runqueue, with the fair cfs_rq inside it.

use crate::cfs_rq::CfsRq;
use crate::entity::TaskId;
use crate::weights::LoadWeight;
use cfs_topology::CpuId;

/// `CPU_LOAD_IDX_MAX`.
pub const CPU_LOAD_IDX_MAX: usize = 5;

/// Per-CPU runqueue (only the fair class and idle are modelled).
#[derive(Clone, Debug)]
pub struct Rq {
    /// This CPU.
    pub cpu: CpuId,
    /// `rq->clock`, ns; set from the caller's `now` on every event.
    pub clock: u64,
    /// The running task; `None` = the idle task.
    pub curr: Option<TaskId>,
    /// The fair runqueue.
    pub cfs: CfsRq,
    /// Under group scheduling ([`crate::group`]), the kernel's `rq->cfs`:
    /// the top queue, holding one entity per task group with tasks here
    /// (the tasks are in their groups' queues, and [`Rq::cfs`] stays
    /// empty). Empty without group scheduling.
    pub top: CfsRq<crate::group::GroupId>,
    /// 2.6.26-rc4's `rq->cfs.aggregate`: the root group's aggregate for
    /// the domains whose first CPU this is (see [`crate::group`]).
    pub top_aggregate: crate::group::Aggregate,
    /// `rq->nr_running` (all classes; equals `cfs.nr_running` here).
    pub nr_running: u64,
    /// `rq->load`: summed weight of runnable tasks.
    pub load: LoadWeight,
    /// `cpu_load[]`, decayed every tick by update_cpu_load.
    pub cpu_load: [u64; CPU_LOAD_IDX_MAX],
    /// TIF_NEED_RESCHED of the current task.
    pub need_resched: bool,
    /// TIF_NEED_RESCHED of this CPU's idle task while another task runs:
    /// set by a pull in a schedule() the idle task made (idle_balance's
    /// check_preempt_curr finds the idle task current), and acted on when
    /// the idle task is switched back in (see `do_schedule`).
    pub idle_need_resched: bool,
    /// Armed hrtick expiry (absolute ns), if any.
    pub hrtick_expire: Option<u64>,
    /// `idle_at_tick`.
    pub idle_at_tick: bool,
    /// `next_balance`, in jiffies.
    pub next_balance: u64,
    /// `active_balance`: a push to `push_cpu` is pending.
    pub active_balance: bool,
    /// `push_cpu`.
    pub push_cpu: CpuId,
    /// Context switches.
    pub nr_switches: u64,
    /// `in_nohz_recently` (NO_HZ): set when the CPU entered nohz mode,
    /// cleared at its first busy tick after that.
    pub in_nohz_recently: bool,
    /// `ts->tick_stopped` (NO_HZ, kernel/time/tick-sched.c): this idle
    /// CPU's scheduler tick is off until it leaves idle.
    pub tick_stopped: bool,
}

impl Rq {
    /// An idle runqueue for `cpu`.
    pub fn new(cpu: CpuId) -> Self {
        Rq {
            cpu,
            clock: 0,
            curr: None,
            cfs: CfsRq::new(),
            top: CfsRq::new(),
            top_aggregate: crate::group::Aggregate::default(),
            nr_running: 0,
            load: LoadWeight::lazy(0),
            cpu_load: [0; CPU_LOAD_IDX_MAX],
            need_resched: false,
            idle_need_resched: false,
            hrtick_expire: None,
            idle_at_tick: true,
            next_balance: 0,
            active_balance: false,
            push_cpu: cpu,
            nr_switches: 0,
            in_nohz_recently: false,
            tick_stopped: false,
        }
    }

    /// `idle_cpu()` (2.6.26 sched.c:4698): the idle task is current. A CPU
    /// that has tasks queued but has not switched to one yet is idle.
    pub fn is_idle(&self) -> bool {
        self.curr.is_none()
    }

    /// `update_cpu_load` (2.6.26 sched.c:2570), once per tick:
    /// `cpu_load[i] = (old * (2^i - 1) + new) >> i`, rounding up when the
    /// load rises so the average can reach it.
    pub fn update_cpu_load(&mut self) {
        let this_load = self.load.weight;
        for i in 0..CPU_LOAD_IDX_MAX {
            let scale = 1u64 << i;
            let old = self.cpu_load[i];
            let mut new = this_load;
            if new > old {
                new += scale - 1;
            }
            self.cpu_load[i] = old.wrapping_mul(scale - 1).wrapping_add(new) >> i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_load_decay() {
        let mut rq = Rq::new(0);
        rq.load.weight = 1024;
        rq.update_cpu_load();
        // i=0: 1024. i=1: (0*1 + 1024+1)>>1 = 512. i=2: (0 + 1024+3)>>2 = 256.
        // i=3: (1024+7)>>3 = 128. i=4: (1024+15)>>4 = 64.
        assert_eq!(rq.cpu_load, [1024, 512, 256, 128, 64]);
        rq.update_cpu_load();
        // i=1: (512 + 1025)>>1 = 768. i=2: (256*3 + 1027)>>2 = 448.
        assert_eq!(rq.cpu_load[1], 768);
        assert_eq!(rq.cpu_load[2], 448);
        rq.load.weight = 0;
        rq.update_cpu_load();
        // falling: no round-up. i=1: 768>>1 = 384.
        assert_eq!(rq.cpu_load[0], 0);
        assert_eq!(rq.cpu_load[1], 384);
    }
}
