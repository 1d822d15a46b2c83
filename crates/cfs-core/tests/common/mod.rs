//! Shared helpers for the cfs-core integration tests: an event recorder,
//! hand-built sched-domain sets, and a tiny deterministic driver.
//!
//! The driver is deliberately dumb and kernel-shaped: every CPU takes its
//! periodic tick at each jiffy boundary (CPUs in ascending order, all at
//! the same instant), an armed hrtick fires exactly at its expiry, and a
//! CPU whose current task has TIF_NEED_RESCHED is rescheduled at once
//! (zero IPI latency, as if preemption were immediate). Tasks are CPU hogs
//! unless a test blocks them explicitly.
#![allow(dead_code)]

use cfs_core::{Config, Deschedule, Event, KernelVersion, Observer, SchedDomains, Scheduler, TaskId};
use cfs_topology::{CpuId, CpuMask, DomainLevel, DomainParams, GroupRing, SchedDomain, SchedGroup, SdFlags};

/// Records every decision with its time.
#[derive(Debug, Default)]
pub struct Recorder {
    pub events: Vec<(u64, Event)>,
    /// Set to false to stop recording (long runs).
    pub off: bool,
}

impl Observer for Recorder {
    fn event(&mut self, now: u64, event: &Event) {
        if !self.off {
            self.events.push((now, *event));
        }
    }
}

impl Recorder {
    pub fn clear(&mut self) {
        self.events.clear();
    }
}

/// `SD_MC_INIT` (2.6.26 include/linux/topology.h): min/max 1/4 ms,
/// busy_factor 64, imbalance_pct 125, cache_nice_tries 1, idx
/// busy/idle/newidle/wake/forkexec 2/0/0/1/1, balance_interval 1.
pub fn mc_params() -> DomainParams {
    DomainParams {
        min_interval: 1,
        max_interval: 4,
        busy_factor: 64,
        imbalance_pct: 125,
        cache_nice_tries: 1,
        busy_idx: 2,
        idle_idx: 0,
        newidle_idx: 0,
        wake_idx: 1,
        forkexec_idx: 1,
        smt_gain: 0,
        balance_interval: 1,
    }
}

/// `SD_CPU_INIT` (2.6.26 include/linux/topology.h): as MC but idx
/// busy/idle/newidle/wake/forkexec 2/1/2/1/1.
pub fn cpu_params() -> DomainParams {
    DomainParams { idle_idx: 1, newidle_idx: 2, ..mc_params() }
}

/// SD_MC_INIT flags with power savings off: LB | NEWIDLE | FORK | EXEC |
/// WAKE_AFFINE | SHARE_PKG_RESOURCES (559).
pub fn mc_flags() -> SdFlags {
    SdFlags::LOAD_BALANCE
        | SdFlags::BALANCE_NEWIDLE
        | SdFlags::BALANCE_FORK
        | SdFlags::BALANCE_EXEC
        | SdFlags::WAKE_AFFINE
        | SdFlags::SHARE_PKG_RESOURCES
}

/// SD_CPU_INIT flags with power savings off: LB | NEWIDLE | FORK | EXEC |
/// WAKE_AFFINE (47).
pub fn cpu_flags() -> SdFlags {
    SdFlags::LOAD_BALANCE
        | SdFlags::BALANCE_NEWIDLE
        | SdFlags::BALANCE_FORK
        | SdFlags::BALANCE_EXEC
        | SdFlags::WAKE_AFFINE
}

/// The kernel's circular group list seen from `cpu`: the groups in span
/// order, rotated so the one holding `cpu` comes first.
fn rotated(groups: &[CpuMask], cpu: CpuId, power: u32) -> GroupRing {
    let start = groups.iter().position(|g| g.contains(cpu)).expect("cpu in a group");
    let ring: GroupRing = groups.iter().map(|&cpus| SchedGroup { cpus, cpu_power: power }).collect();
    ring.entered_at(start)
}

/// A machine of `n` CPUs (n a multiple of `pair`) whose CPUs share a cache
/// in blocks of `pair` (MC level: span = the block, one group per CPU,
/// power 1024) under one CPU-level domain spanning all CPUs with one group
/// per block (power 1024 each, as 2.6.26's init_sched_groups_power gives a
/// group whose child shares package resources). `pair == n` gives a single
/// MC level; `pair == 1` a single CPU level with one group per CPU.
pub fn cache_blocks(version: KernelVersion, n: usize, pair: usize) -> SchedDomains {
    cache_blocks_online(version, n, pair, CpuMask::first_n(n))
}

/// [`cache_blocks`] rebuilt over the CPUs of `online` only, as after CPUs
/// went down: spans and groups clipped to it, a level spanning one CPU (or
/// the same CPUs as the level below) left out, no domain for an offline
/// CPU. Not the builder's exact output (cfs-topology's own tests pin
/// that), but domains the scheduler must take.
pub fn cache_blocks_online(version: KernelVersion, n: usize, pair: usize, online: CpuMask) -> SchedDomains {
    assert!(n % pair == 0);
    let online = online.and(&CpuMask::first_n(n));
    let blocks: Vec<CpuMask> = (0..n / pair)
        .map(|b| CpuMask::from_cpus(b * pair..(b + 1) * pair).and(&online))
        .filter(|b| !b.is_empty())
        .collect();
    let singles: Vec<CpuMask> = online.iter().map(CpuMask::single).collect();
    let per_cpu = (0..n)
        .map(|cpu| {
            let mut v = Vec::new();
            if !online.contains(cpu) {
                return v;
            }
            let block = *blocks.iter().find(|b| b.contains(cpu)).expect("its block");
            if pair > 1 && block.weight() > 1 {
                let members: Vec<CpuMask> = block.iter().map(CpuMask::single).collect();
                v.push(SchedDomain {
                    level: DomainLevel::Mc,
                    span: block,
                    groups: rotated(&members, cpu, 1024),
                    flags: mc_flags(),
                    params: mc_params(),
                });
            }
            if pair < n && online != block {
                let groups = if pair > 1 { &blocks } else { &singles };
                v.push(SchedDomain {
                    level: DomainLevel::Cpu,
                    span: online,
                    groups: rotated(groups, cpu, 1024),
                    flags: cpu_flags(),
                    params: cpu_params(),
                });
            }
            v
        })
        .collect();
    SchedDomains { version, per_cpu }
}

/// The Q6600 of the seed threads: CPUs {0,1} and {2,3} share an L2. MC
/// spans the pair (groups: single CPUs, power 1024); CPU spans 0-3 with
/// the two pairs as groups, power 1024 each.
pub fn q6600(version: KernelVersion) -> SchedDomains {
    cache_blocks(version, 4, 2)
}

/// One dual-core package: a single MC domain over {0,1}.
pub fn dual_core(version: KernelVersion) -> SchedDomains {
    cache_blocks(version, 2, 2)
}

/// A uniprocessor: no domains.
pub fn up(version: KernelVersion) -> SchedDomains {
    SchedDomains { version, per_cpu: vec![vec![]] }
}

/// A deterministic driver over a [`Scheduler`].
///
/// Time is kept as `elapsed` ns since the start; the scheduler sees
/// `base + elapsed` (wrapping), so runs can start near `u64::MAX`.
pub struct Sim {
    pub s: Scheduler<Recorder>,
    pub base: u64,
    pub elapsed: u64,
    pub tick_ns: u64,
    /// Jiffies processed so far (tick k happens at elapsed = k * tick_ns).
    pub next_tick: u64,
    /// CPU time given to each task, by the driver's own accounting.
    pub cpu_time: Vec<u64>,
    /// (task, since) of what each CPU is running.
    running: Vec<Option<(TaskId, u64)>>,
    /// Whether the driver reschedules CPUs automatically.
    pub auto_resched: bool,
    /// Every (elapsed, cpu, task) a task was switched in.
    pub switch_log: Vec<(u64, CpuId, Option<TaskId>)>,
    pub log_switches: bool,
}

impl Sim {
    pub fn new(cfg: Config, domains: SchedDomains, base: u64) -> Sim {
        let n = domains.nr_cpus().max(1);
        let tick_ns = cfg.tick_ns();
        let s = Scheduler::with_observer(cfg, domains, Recorder::default()).expect("valid config");
        Sim {
            s,
            base,
            elapsed: 0,
            tick_ns,
            next_tick: 1,
            cpu_time: Vec::new(),
            running: vec![None; n],
            auto_resched: true,
            switch_log: Vec::new(),
            log_switches: false,
        }
    }

    /// The scheduler's clock now.
    pub fn now(&self) -> u64 {
        self.base.wrapping_add(self.elapsed)
    }

    /// Absolute scheduler time of `elapsed`.
    pub fn at(&self, elapsed: u64) -> u64 {
        self.base.wrapping_add(elapsed)
    }

    fn ensure(&mut self, id: TaskId) {
        let i = id.0 as usize;
        if self.cpu_time.len() <= i {
            self.cpu_time.resize(i + 1, 0);
        }
    }

    /// Accounts the current run of `cpu` up to now.
    fn account(&mut self, cpu: CpuId) {
        if let Some((t, since)) = self.running[cpu] {
            self.ensure(t);
            self.cpu_time[t.0 as usize] += self.elapsed - since;
            self.running[cpu] = Some((t, self.elapsed));
        }
    }

    /// Accounts `cpu`'s current run up to now (before a direct schedule call).
    pub fn account_now(&mut self, cpu: CpuId) {
        self.account(cpu);
    }

    /// Records that `cpu` now runs `next` (after a direct schedule call).
    pub fn set_running(&mut self, cpu: CpuId, next: Option<TaskId>) {
        self.running[cpu] = next.map(|t| (t, self.elapsed));
        if let Some(t) = next {
            self.ensure(t);
        }
    }

    /// Runs `schedule(how)` on `cpu` now and tracks who runs.
    pub fn schedule(&mut self, cpu: CpuId, how: Deschedule) -> cfs_core::Switch {
        self.account(cpu);
        let now = self.now();
        let sw = self.s.schedule(now, cpu, how).expect("schedule");
        self.running[cpu] = sw.next.map(|t| (t, self.elapsed));
        if let Some(t) = sw.next {
            self.ensure(t);
        }
        if self.log_switches && sw.switched() {
            self.switch_log.push((self.elapsed, cpu, sw.next));
        }
        sw
    }

    /// Reschedules every CPU that needs it (repeatedly, in CPU order).
    pub fn resched_all(&mut self) {
        if !self.auto_resched {
            return;
        }
        for _ in 0..8 {
            let mut any = false;
            for cpu in 0..self.s.nr_cpus() {
                if self.s.need_resched(cpu) {
                    self.schedule(cpu, Deschedule::Preempt);
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
    }

    /// The earliest armed hrtick (as elapsed time) not after `limit`.
    fn next_hrtick(&self, limit: u64) -> Option<(u64, CpuId)> {
        let mut best: Option<(u64, CpuId)> = None;
        for cpu in 0..self.s.nr_cpus() {
            if let Some(e) = self.s.hrtick_expiry(cpu) {
                // Wrap-safe: elapsed of the expiry relative to the base.
                let el = e.wrapping_sub(self.base);
                let el = el.max(self.elapsed);
                if el <= limit && best.is_none_or(|(b, _)| el < b) {
                    best = Some((el, cpu));
                }
            }
        }
        best
    }

    /// Advances time to `target` (elapsed ns), processing hrticks and
    /// periodic ticks on the way.
    ///
    /// An hrtick re-armed for the instant it fired at (a slice of 0 ns:
    /// rc4's group arithmetic can give one to a task whose group entity
    /// weighs MIN_SHARES beside a heavy one) would fire for ever in a
    /// driver whose interrupts take no time; the clock event device's
    /// minimum delta makes a real one fire later, so after 64 firings at
    /// one instant the next is taken 1 ns on.
    pub fn run_to(&mut self, target: u64) {
        let mut storm = (u64::MAX, 0u32);
        loop {
            let tick_at = self.next_tick * self.tick_ns;
            let limit = tick_at.min(target);
            if let Some((mut el, cpu)) = self.next_hrtick(limit) {
                storm = if storm.0 == el { (el, storm.1 + 1) } else { (el, 0) };
                if storm.1 >= 64 {
                    el += 1;
                }
                if el < tick_at || (el == tick_at && el <= target) {
                    self.elapsed = el;
                    self.account(cpu);
                    let now = self.now();
                    self.s.hrtick(now, cpu).expect("hrtick");
                    self.resched_all();
                    continue;
                }
            }
            if tick_at > target {
                self.elapsed = target;
                for cpu in 0..self.s.nr_cpus() {
                    self.account(cpu);
                }
                return;
            }
            self.elapsed = tick_at;
            for cpu in 0..self.s.nr_cpus() {
                self.account(cpu);
                if self.s.tick_stopped(cpu) || !self.s.cpu_online(cpu) {
                    continue; // NO_HZ: this idle CPU gets no tick
                }
                let now = self.now();
                self.s.tick(now, cpu).expect("tick");
            }
            self.next_tick += 1;
            self.resched_all();
            // The idle loop (and every interrupt exit in idle) offers to stop
            // the tick; a no-op with NO_HZ off.
            for cpu in 0..self.s.nr_cpus() {
                if self.s.curr(cpu).is_none() && !self.s.need_resched(cpu) && self.s.cpu_online(cpu) {
                    let now = self.now();
                    self.s.nohz_stop_sched_tick(now, cpu).expect("nohz_stop_sched_tick");
                }
            }
        }
    }

    /// Spawns a task on `cpu` now and reschedules.
    pub fn spawn(&mut self, cpu: CpuId, params: cfs_core::TaskParams) -> TaskId {
        let now = self.now();
        let id = self.s.spawn(now, cpu, params).expect("spawn");
        self.ensure(id);
        self.resched_all();
        id
    }

    /// The task's CPU time by the scheduler's own accounting.
    pub fn sum_exec(&self, id: TaskId) -> u64 {
        self.s.task(id).unwrap().se.sum_exec_runtime
    }

    pub fn events(&self) -> &[(u64, Event)] {
        &self.s.observer().events
    }

    pub fn clear_events(&mut self) {
        self.s.observer_mut().clear();
    }

    /// How many tasks are queued (incl. running) on each CPU.
    pub fn nr_running(&self) -> Vec<u64> {
        (0..self.s.nr_cpus()).map(|c| self.s.rq(c).unwrap().nr_running).collect()
    }
}

/// A config for `version` on `n` CPUs with the invariants on.
pub fn cfg(version: KernelVersion, n: usize) -> Config {
    let mut c = Config::new(version, n);
    c.check_invariants = true;
    c
}

/// Tiny xorshift64* for deterministic randomness.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}
