//! Multi-CPU soak: random forks, wakeups (random sync hints, from task
//! context and from interrupts), blocks, exits, yields, nice / policy /
//! affinity changes and forced rebalances, interleaved with periodic ticks
//! and hrticks, on hand-built 2-, 4- and 16-CPU domain sets, for the
//! 2.6.25, 2.6.26-rc4 and 2.6.26 profiles (and the seed patches), and on
//! the x2, Q6600 and Nehalem-EP domains cfs-topology builds for the
//! 2.6.32-rc1 and 2.6.32 profiles (with feature masks that switch the
//! off-by-default 2.6.32 modes on), with `Config::check_invariants` on;
//! two of each profile's three topologies run with NO_HZ (tickless idle
//! CPUs, the idle load balancer), and two of 2.6.25's, 2.6.26-rc4's and
//! 2.6.26's with group scheduling by user (tasks of users 0, 1000 and
//! 1001).
//!
//! Every API call must return `Ok` or the refusal its documentation
//! promises for that input (never panic), and the online invariants must
//! hold after every call. A deterministic xorshift drives everything.
//!
//! Events (API calls) per profile: 102_000 by default (34_000 per topology); set
//! `CFS_SOAK_EVENTS` to raise the per-topology count, e.g.
//! `CFS_SOAK_EVENTS=2000000 cargo test -p cfs-core --release --test soak`;
//! `CFS_SOAK_SEED=<n>` varies the random streams.

mod common;

use cfs_core::{Deschedule, KernelVersion, Patch, Policy, SchedError, TaskId, TaskParams, TaskState};
use cfs_topology::{CpuMask, DomainLevel, Host, SdFlags};
use common::*;

const US: u64 = 1_000;

fn events_per_topology() -> u64 {
    std::env::var("CFS_SOAK_EVENTS").ok().and_then(|s| s.parse().ok()).unwrap_or(34_000)
}

/// `CFS_SOAK_SEED` (optional) is mixed into every run's seed.
fn seed_mix() -> u64 {
    std::env::var("CFS_SOAK_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A digest of the scheduler state a refused call must leave untouched.
fn digest(s: &cfs_core::Scheduler<Recorder>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |x: u64| {
        h ^= x;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    for t in s.tasks() {
        mix(t.state as u64);
        mix(t.cpu as u64);
        mix(t.se.vruntime);
        mix(t.se.sum_exec_runtime);
        mix(t.se.load.weight);
        mix(t.allowed.weight() as u64);
        mix(t.allowed.first().map_or(u64::MAX, |c| c as u64));
    }
    for c in 0..s.nr_cpus() {
        let rq = s.rq(c).unwrap();
        mix(rq.curr.map_or(u64::MAX, |t| t.0 as u64));
        mix(rq.nr_running);
        mix(rq.load.weight);
        mix(rq.cfs.min_vruntime);
        mix(rq.cfs.next.map_or(u64::MAX, |t| t.0 as u64));
        mix(rq.need_resched as u64);
    }
    h
}

/// The refusal each call may legitimately return; a refused call must not
/// have changed the state (`before` vs `after` digests).
fn expect_refusal_unchanged(
    what: &str,
    r: Result<(), SchedError>,
    allowed: &[&str],
    before: Option<u64>,
    s: &cfs_core::Scheduler<Recorder>,
) {
    if let (Some(before), true) = (before, r.is_err() && !matches!(r, Err(SchedError::Invariant(_)))) {
        assert_eq!(before, digest(s), "{what}: a refused call changed the state ({r:?})");
    }
    expect_refusal(what, r, allowed);
}

/// The refusal each call may legitimately return.
fn expect_refusal(what: &str, r: Result<(), SchedError>, allowed: &[&str]) {
    if let Err(e) = r {
        let kind = match &e {
            SchedError::UnknownTask(_) => "unknown",
            SchedError::BadCpu(_) => "badcpu",
            SchedError::WrongState { .. } => "state",
            SchedError::IdleCpu(_) => "idle",
            SchedError::EmptyAffinity => "empty",
            SchedError::TooManyTasks => "toomany",
            SchedError::TickStopped(_) => "tickstopped",
            SchedError::Setting(_) => "setting",
            SchedError::Offline(_) => "offline",
            SchedError::Hotplug(_) => "hotplug",
            SchedError::Invariant(v) => panic!("{what}: invariant violated:\n{v}"),
        };
        assert!(allowed.contains(&kind), "{what}: refusal {e:?} not expected here");
    }
}

fn random_mask(rng: &mut Rng, n: usize) -> CpuMask {
    match rng.below(6) {
        0 => CpuMask::empty(), // "all CPUs"
        1 => CpuMask::single(rng.below(n as u64) as usize),
        2 => {
            let b = rng.below(n as u64) as usize & !1;
            CpuMask::from_cpus([b, (b + 1) % n])
        }
        3 => CpuMask::from_cpus((0..n).filter(|_| rng.chance(500))),
        _ => CpuMask::first_n(n),
    }
}

fn random_params(rng: &mut Rng, n: usize) -> TaskParams {
    let policy = match rng.below(10) {
        0 => Policy::Batch,
        1 => Policy::Idle,
        _ => Policy::Normal,
    };
    let mut m = random_mask(rng, n);
    if m.is_empty() && rng.chance(500) {
        m = CpuMask::first_n(n);
    }
    let params = TaskParams::normal().nice(rng.below(40) as i32 - 20).policy(policy).allowed(m);
    // Users 0, 1000 and 1001, or the parent's: their own task groups under
    // group scheduling.
    match rng.below(4) {
        0 => params,
        u => params.uid([0, 1000, 1001][u as usize - 1]),
    }
}

fn soak(cfg: cfs_core::Config, domains: cfs_core::SchedDomains, seed: u64, events: u64) -> u64 {
    let n = domains.nr_cpus();
    // The cache block of the topology (`topologies`: 2 CPUs a block), for
    // the domains rebuilt after a CPU goes down or comes up.
    let pair = domains.of(0).iter().find(|d| d.level == DomainLevel::Mc).map_or(1, |d| d.span.weight());
    let version = domains.version;
    let mut sim = Sim::new(cfg, domains, seed.wrapping_mul(0x9e37_79b9) ^ (seed << 40));
    sim.s.observer_mut().off = true;
    let mut rng = Rng(seed | 1);
    let live_cap = 4 * n.min(6) + 4;
    let mut calls = 0u64;
    for cpu in 0..n {
        sim.spawn(cpu, TaskParams::normal());
        calls += 2;
    }
    while calls < events {
        // Time passes: ticks and hrticks on every CPU (each an API call).
        if rng.chance(300) {
            let before = sim.next_tick;
            let dt = rng.below(3_000) * US + 1;
            let t = sim.elapsed + dt;
            sim.run_to(t);
            calls += (sim.next_tick - before) * n as u64 + 1;
        }
        let now = sim.now();
        let cpu = rng.below(n as u64 + 1) as usize; // n = a bad CPU now and then
        let nt = sim.s.tasks().len() as u64;
        let pick = TaskId(rng.below(nt + 2) as u32); // may be unknown
        let live = sim.s.tasks().iter().filter(|t| t.state != TaskState::Dead).count();
        // One call in ten is checked for "a refusal changes nothing" (the digest
        // walks every task, as costly as the invariants themselves).
        let before = if rng.chance(100) { Some(digest(&sim.s)) } else { None };
        match rng.below(15) {
            0 | 1 => {
                // fork from the running task of `cpu` (or a random task: WrongState).
                if live >= live_cap {
                    continue; // not a call
                }
                let parent = if rng.chance(800) { sim.s.curr(cpu.min(n - 1)).unwrap_or(pick) } else { pick };
                let params = if rng.chance(500) { None } else { Some(random_params(&mut rng, n)) };
                let r = sim.s.fork(now, parent, params).map(|_| ());
                expect_refusal_unchanged("fork", r, &["state", "unknown", "empty"], before, &sim.s);
            }
            2 | 3 => {
                // wake a sleeping task (sometimes a queued / running / dead one).
                let sleepers: Vec<TaskId> =
                    sim.s.tasks().iter().filter(|t| t.state == TaskState::Sleeping).map(|t| t.id).collect();
                let t = if !sleepers.is_empty() && rng.chance(900) {
                    sleepers[rng.below(sleepers.len() as u64) as usize]
                } else {
                    pick
                };
                let sync = rng.chance(500);
                let r = if rng.chance(200) {
                    sim.s.wake_up_irq(now, t, cpu, sync)
                } else {
                    sim.s.wake_up(now, t, cpu, sync)
                }
                .map(|_| ());
                expect_refusal_unchanged("wake_up", r, &["state", "unknown", "badcpu", "offline"], before, &sim.s);
            }
            4 | 5 => {
                // the running task blocks (or yields, or is preempted).
                let how = match rng.below(4) {
                    0 => Deschedule::Yield,
                    1 => Deschedule::Preempt,
                    _ => Deschedule::Sleep,
                };
                if cpu < n {
                    sim.account_now(cpu);
                }
                let r = sim.s.schedule(now, cpu, how).map(|sw| {
                    sim.set_running(cpu, sw.next);
                });
                expect_refusal_unchanged("schedule", r, &["idle", "badcpu", "offline"], before, &sim.s);
            }
            6 => {
                // exit (rarer: dead tasks stay in the table the invariants walk)
                if !rng.chance(350) {
                    continue; // not a call
                }
                let r = sim.s.schedule(now, cpu, Deschedule::Exit).map(|sw| sim.set_running(cpu, sw.next));
                expect_refusal_unchanged("exit", r, &["idle", "badcpu", "offline"], before, &sim.s);
            }
            7 => {
                let r = sim.s.set_nice(now, pick, rng.below(44) as i32 - 22);
                expect_refusal_unchanged("set_nice", r, &["state", "unknown"], before, &sim.s);
            }
            8 => {
                let p = [Policy::Normal, Policy::Batch, Policy::Idle][rng.below(3) as usize];
                let r = sim.s.set_policy(now, pick, p);
                expect_refusal_unchanged("set_policy", r, &["state", "unknown"], before, &sim.s);
            }
            9 | 10 => {
                let mut m = random_mask(&mut rng, n);
                if rng.chance(50) {
                    m = CpuMask::single(n + 3); // no CPU of this host
                }
                let r = sim.s.set_affinity(now, pick, m);
                expect_refusal_unchanged("set_affinity", r, &["state", "unknown", "empty"], before, &sim.s);
            }
            11 => {
                let r = sim.s.rebalance(now, cpu);
                expect_refusal_unchanged("rebalance", r, &["badcpu", "offline"], before, &sim.s);
            }
            12 => {
                if live >= live_cap || !rng.chance(300) {
                    continue; // not a call
                }
                let r = sim.s.spawn(now, cpu, random_params(&mut rng, n)).map(|_| ());
                expect_refusal_unchanged("spawn", r, &["badcpu", "empty", "offline"], before, &sim.s);
            }
            14 => {
                // A setting written mid-run (sysctl, a domain's flags, a
                // patch), sometimes an invalid one that must be refused.
                if !rng.chance(200) {
                    continue; // not a call
                }
                let valid = sim.s.config().feature_table().valid_bits();
                let r = match rng.below(4) {
                    0 => {
                        let mask = if rng.chance(900) { rng.next() as u32 & valid } else { !valid };
                        sim.s.set_features_mask(mask)
                    }
                    1 => {
                        let names = [
                            "sched_latency_ns",
                            "min_granularity",
                            "wakeup_granularity",
                            "migration_cost",
                            "nr_migrate",
                            "child_runs_first",
                            "nr_latency",
                            "bogus",
                        ];
                        let name = names[rng.below(names.len() as u64) as usize];
                        let value = rng.below(80_000_000) as i64 - 2;
                        sim.s.set_tunable(name, value)
                    }
                    2 => {
                        let levels = [DomainLevel::Sibling, DomainLevel::Mc, DomainLevel::Cpu, DomainLevel::Node];
                        let level = levels[rng.below(4) as usize];
                        let set = SdFlags::from_bits_truncate(rng.next() as u32);
                        let clear = SdFlags::from_bits_truncate(rng.next() as u32);
                        sim.s.set_domain_flags(level, set, clear).map(|_| ())
                    }
                    _ => {
                        let p = Patch::ALL[rng.below(Patch::ALL.len() as u64) as usize];
                        sim.s.set_patch(p, rng.chance(500))
                    }
                };
                expect_refusal_unchanged("setting", r, &["setting"], before, &sim.s);
            }
            13 if rng.chance(30) => {
                // A CPU goes down, or comes back up (sometimes the last
                // one online, or a bad CPU: refused), with its domains
                // rebuilt over the new online map.
                let online = sim.s.online_cpus();
                if cpu < n {
                    sim.account_now(cpu);
                }
                let r = if online.contains(cpu) {
                    let mut rest = online;
                    rest.clear(cpu);
                    let d = cache_blocks_online(version, n, pair, rest);
                    sim.s.cpu_down(now, cpu, CpuMask::first_n(n), d).map(|_| sim.set_running(cpu, None))
                } else {
                    let mut more = online;
                    more.set(cpu);
                    sim.s.cpu_up(now, cpu, cache_blocks_online(version, n, pair, more))
                };
                expect_refusal_unchanged("hotplug", r, &["hotplug", "badcpu"], before, &sim.s);
            }
            _ => {
                let r = sim.s.hrtick(now, cpu).map(|_| ());
                expect_refusal_unchanged("hrtick", r, &["badcpu", "offline"], before, &sim.s);
            }
        }
        calls += 1;
        // Deliver reschedules at once (each a schedule() call), then check what runs where.
        let before: u64 = (0..n).filter(|&c| sim.s.need_resched(c)).count() as u64;
        sim.resched_all();
        calls += before;
        for c in 0..n {
            if let Some(t) = sim.s.curr(c) {
                let task = sim.s.task(t).unwrap();
                assert_eq!(task.state, TaskState::Running);
                assert!(task.allowed.contains(c), "{t} runs on CPU {c} outside {:?}", task.allowed);
                assert!(!sim.s.need_resched(c), "CPU {c} left with a pending resched");
            }
        }
    }
    // A last full check, and every live task can still be found.
    sim.s.check_invariants().unwrap();
    calls
}

fn topologies(v: KernelVersion) -> Vec<(&'static str, cfs_core::SchedDomains)> {
    vec![
        ("dual-core", dual_core(v)),
        ("q6600", q6600(v)),
        // 16 CPUs in 8 cache pairs (Tigerton-like), CPU level with 8 groups.
        ("16-cpu", cache_blocks(v, 16, 2)),
    ]
}

/// Runs one profile on the three topologies: the dual core plain, the Q6600 with
/// `patches` applied, the 16-CPU box with features 861 (no SYNC_WAKEUPS, no
/// WAKEUP_PREEMPT; 2.6.25: its default 15), alternating HZ and the hrtick.
fn soak_profile(v: KernelVersion, patches: &[Patch], seed: u64) {
    let per = events_per_topology();
    let mut total = 0;
    for (i, (name, d)) in topologies(v).into_iter().enumerate() {
        let n = d.nr_cpus();
        let mut c = cfg(v, n);
        if i == 1 {
            for p in patches {
                c = c.with_patch(*p).unwrap();
            }
        }
        c.hz = [250, 1000, 100][i % 3];
        c.hres_timers = i % 2 == 0;
        c.nohz = i != 0;
        if v != KernelVersion::V2_6_25 && i == 2 {
            c = c.with_features_mask(861).unwrap();
        }
        // Group scheduling by user on the dual core and the 16-CPU box, in
        // the profiles that port it.
        c.group_sched = !v.is_2_6_32() && i != 1;
        let calls = soak(c, d, (seed ^ seed_mix().wrapping_mul(0x9e37_79b9_7f4a_7c15)) + i as u64 * 7919, per);
        assert!(calls >= per, "{v} {name}: {calls}");
        total += calls;
    }
    assert!(total >= 3 * per);
}

#[test]
fn soak_2_6_25() {
    soak_profile(KernelVersion::V2_6_25, &[Patch::SyncWakeupsBit, Patch::SyncLoadClamp], 0xdead_beef);
}

#[test]
fn soak_2_6_26_rc4() {
    soak_profile(KernelVersion::V2_6_26Rc4, &[Patch::Waker, Patch::LastPreempter, Patch::AffinityFix], 0x0bad_cafe);
}

#[test]
fn soak_2_6_26() {
    soak_profile(KernelVersion::V2_6_26, &[Patch::LastPreempterNoDisperse, Patch::SyncLoadClamp], 0xfeed_f00d);
}

/// The 2.6.32 profiles on the domains the kernel builds for three presets: the
/// x2 with the default features, the Q6600 with the off-by-default modes on
/// (NORMALIZED_SLEEPER, WAKEUP_SYNC/OVERLAP/RUNNING, SYNC_MORE, NEXT_BUDDY, HRTICK),
/// the Nehalem-EP without WAKEUP_PREEMPT and SYNC_WAKEUPS (the analogue of 861)
/// and with migration_cost -1 (always cache hot).
fn soak_profile_32(v: KernelVersion, seed: u64) {
    const DEF: u32 = 15_834_235;
    let per = events_per_topology();
    let masks =
        [DEF, DEF | 1 << 2 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 13 | 1 << 14 | 1 << 18, DEF & !(1 << 4) & !(1 << 10)];
    let mut total = 0;
    for (i, name) in ["x2", "q6600", "nehalem-ep"].into_iter().enumerate() {
        let d = Host::preset(name).unwrap().build_domains(v);
        let mut c = cfg(v, d.nr_cpus()).with_features_mask(masks[i]).unwrap();
        c.hz = [250, 1000, 100][i];
        c.hres_timers = i % 2 == 1;
        c.nohz = i != 1;
        if i == 2 {
            c.tunables.migration_cost = cfs_core::Tunables::ALWAYS_HOT;
        }
        let calls = soak(c, d, (seed ^ seed_mix().wrapping_mul(0x9e37_79b9_7f4a_7c15)) + i as u64 * 7919, per);
        assert!(calls >= per, "{v} {name}: {calls}");
        total += calls;
    }
    assert!(total >= 3 * per);
}

#[test]
fn soak_2_6_32_rc1() {
    soak_profile_32(KernelVersion::V2_6_32Rc1, 0x2632_00c1);
}

#[test]
fn soak_2_6_32() {
    soak_profile_32(KernelVersion::V2_6_32, 0x2632_0000);
}
