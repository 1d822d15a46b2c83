//! Settings written on a running scheduler (`cfs_core::sysctl`): each takes
//! effect at the next decision that reads it, exactly as if the scheduler
//! had been built with it, and a refused write changes nothing.

mod common;

use cfs_core::{
    Config, Deschedule, FeatureTable, KernelVersion, Patch, SchedDomains, SchedError, SettingError, TaskId, TaskParams,
    TaskState,
};
use cfs_topology::{DomainLevel, SdFlags};
use common::*;

const MS: u64 = 1_000_000;

/// A 1:N-ish load on the test driver: one hog per CPU plus four tasks on
/// CPU 0; at random instants the current task of a random CPU either blocks
/// or wakes a random sleeper with the sync hint. The random draws depend on
/// the state only through who sleeps, so two schedulers that decide alike
/// see the same calls.
fn script(sim: &mut Sim, seed: u64, steps: usize) {
    let mut rng = Rng(seed);
    let n = sim.s.nr_cpus();
    for cpu in 0..n {
        sim.spawn(cpu, TaskParams::normal());
    }
    for _ in 0..4 {
        sim.spawn(0, TaskParams::normal());
    }
    for _ in 0..steps {
        let t = sim.elapsed + rng.below(400) * 1_000 + 1;
        sim.run_to(t);
        let cpu = rng.below(n as u64) as usize;
        if sim.s.curr(cpu).is_none() {
            continue;
        }
        if rng.below(3) == 0 {
            sim.schedule(cpu, Deschedule::Sleep);
        } else {
            let sleepers: Vec<TaskId> =
                sim.s.tasks().iter().filter(|t| t.state == TaskState::Sleeping).map(|t| t.id).collect();
            if sleepers.is_empty() {
                continue;
            }
            let t = sleepers[rng.below(sleepers.len() as u64) as usize];
            let now = sim.now();
            sim.s.wake_up(now, t, cpu, true).unwrap();
            sim.resched_all();
        }
    }
}

/// Runs the script on a scheduler built with `built`, on one built with
/// `plain` and then given the setting by `set` before the first task, and on
/// the plain one untouched: the first two must decide alike, event for
/// event, and differently from the third (so the setting matters here).
fn set_at_start_decides_like_built_with(
    what: &str,
    built: Config,
    plain: Config,
    domains_built: SchedDomains,
    domains_plain: SchedDomains,
    set: impl FnOnce(&mut Sim),
) {
    let run = |cfg: Config, domains: SchedDomains, set: Option<&mut dyn FnMut(&mut Sim)>| {
        let mut sim = Sim::new(cfg, domains, 0);
        if let Some(f) = set {
            f(&mut sim);
        }
        script(&mut sim, 0x5e7_c71, 1_500);
        sim.events().to_vec()
    };
    let with = run(built, domains_built, None);
    let mut set = Some(set);
    let mut apply = |sim: &mut Sim| (set.take().unwrap())(sim);
    let switched = run(plain, domains_plain.clone(), Some(&mut apply));
    let without = run(plain, domains_plain, None);
    assert!(with.len() > 500, "{what}: the script made only {} decisions", with.len());
    assert_eq!(with.len(), switched.len(), "{what}: different decision counts");
    assert!(with == switched, "{what}: switched at the start, the scheduler decides otherwise than built with it");
    assert!(with != without, "{what}: the setting changes no decision of this script");
}

#[test]
fn features_written_at_the_start_decide_like_a_built_mask() {
    let v = KernelVersion::V2_6_26Rc4;
    let d = q6600(v);
    set_at_start_decides_like_built_with(
        "rc4 features 863",
        cfg(v, 4).with_features_mask(863).unwrap(),
        cfg(v, 4),
        d.clone(),
        d,
        |sim| sim.s.set_features_mask(863).unwrap(),
    );
}

#[test]
fn a_tunable_written_at_the_start_decides_like_a_built_one() {
    let v = KernelVersion::V2_6_26;
    let d = q6600(v);
    let mut built = cfg(v, 4);
    assert!(built.tunables.set_by_name("sched_wakeup_granularity_ns", 2 * MS as i64).unwrap());
    set_at_start_decides_like_built_with("2.6.26 wakeup granularity 2 ms", built, cfg(v, 4), d.clone(), d, |sim| {
        sim.s.set_tunable("sched_wakeup_granularity_ns", 2 * MS as i64).unwrap()
    });
}

#[test]
fn domain_flags_written_at_the_start_decide_like_built_ones() {
    let v = KernelVersion::V2_6_26;
    let mut built = q6600(v);
    // Four CPUs, one MC domain each.
    assert_eq!(built.override_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::WAKE_AFFINE), 4);
    set_at_start_decides_like_built_with(
        "2.6.26 MC without WAKE_AFFINE",
        cfg(v, 4),
        cfg(v, 4),
        built,
        q6600(v),
        |sim| assert_eq!(sim.s.set_domain_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::WAKE_AFFINE).unwrap(), 4),
    );
}

#[test]
fn patches_switched_on_at_the_start_decide_like_built_ones() {
    let v = KernelVersion::V2_6_26Rc4;
    for p in [Patch::Waker, Patch::AffinityFix] {
        let d = q6600(v);
        set_at_start_decides_like_built_with(
            &format!("rc4 + {p}"),
            cfg(v, 4).with_patch(p).unwrap(),
            cfg(v, 4),
            d.clone(),
            d,
            |sim| sim.s.set_patch(p, true).unwrap(),
        );
    }
}

/// `echo 893 > sched_features` between two identical wakeups: the first
/// preempts, the second does not.
///
/// One CPU, 2.6.26 at f = 1: latency 20 ms, wakeup granularity 10 ms, HZ
/// 250. A forks B: START_DEBIT places B one vslice late, 20 ms * 1024 /
/// 2048 = 10 ms, and child_runs_first swaps the two vruntimes, so A starts
/// 10 ms ahead. B blocks at once and A runs alone to 30 ms; its vruntime
/// was last brought up to date by the tick at 28 ms, so before the wakeup
/// A leads B by 10 + 28 = 38 ms. B keeps its own vruntime: in 2.6.26
/// min_vruntime moves only when the tree changes, so it is still B's, and
/// place_entity's min_vruntime - 20 ms is below it. At the wakeup
/// update_curr brings A to 10 + 30 = 40 ms ahead, more than the 10 ms
/// granularity: WAKEUP_PREEMPT reschedules A. With the bit cleared (893)
/// the same wakeup leaves A running.
#[test]
fn a_features_write_switches_wakeup_preemption_at_the_next_wakeup() {
    let v = KernelVersion::V2_6_26;
    let wake_after_30ms = |switch_off: bool| {
        // No high-resolution timers: the hrtick would otherwise see A's
        // overrun when B is enqueued and reschedule before the wakeup check.
        let mut c = cfg(v, 1);
        c.hres_timers = false;
        let mut sim = Sim::new(c, up(v), 0);
        sim.auto_resched = false;
        let a = sim.spawn(0, TaskParams::normal());
        sim.schedule(0, Deschedule::Preempt);
        let b = sim.s.fork(0, a, None).unwrap().child;
        // The child runs first (child_runs_first) and blocks at once.
        assert_eq!(sim.schedule(0, Deschedule::Preempt).next, Some(b));
        assert_eq!(sim.schedule(0, Deschedule::Sleep).next, Some(a));
        sim.run_to(30 * MS);
        if switch_off {
            sim.s.set_features_mask(893).unwrap();
        }
        let now = sim.now();
        let lead = sim.s.task(a).unwrap().se.vruntime;
        let w = sim.s.wake_up(now, b, 0, false).unwrap();
        let placed = sim.s.task(b).unwrap().se.vruntime;
        (w.preempt, lead.wrapping_sub(placed))
    };
    let (preempt_on, lead_on) = wake_after_30ms(false);
    let (preempt_off, lead_off) = wake_after_30ms(true);
    assert_eq!(lead_on, 38 * MS, "debit plus A's run to the last tick");
    assert_eq!(lead_off, lead_on, "placement does not depend on WAKEUP_PREEMPT");
    assert!(preempt_on, "895: a 40 ms lead over a 10 ms granularity preempts");
    assert!(!preempt_off, "893: no wakeup preemption");
}

/// `sysctl -w kernel.sched_latency_ns=8000000` with two hogs on one CPU
/// (2.6.26, f = 1: latency 20 ms, min_granularity 4 ms, nr_latency 5).
/// sched_slice = period * 1024 / 2048 with period = latency while
/// nr_running <= nr_latency: 10 ms before, 4 ms after; nr_latency becomes
/// DIV_ROUND_UP(8, 4) = 2 (sched_nr_latency_handler).
#[test]
fn a_latency_write_sets_the_next_slice_and_nr_latency() {
    let v = KernelVersion::V2_6_26;
    // The slice is read off the armed hrtick, so high-resolution timers
    // must be on (they are off by default, as in Kconfig).
    let mut c = cfg(v, 1);
    c.hres_timers = true;
    let mut sim = Sim::new(c, up(v), 0);
    sim.auto_resched = false;
    sim.spawn(0, TaskParams::normal());
    sim.spawn(0, TaskParams::normal());
    sim.schedule(0, Deschedule::Preempt);
    let slice = |sim: &Sim| sim.s.hrtick_expiry(0).unwrap().wrapping_sub(sim.now());
    assert_eq!(slice(&sim), 10 * MS);
    assert_eq!(sim.s.config().tunables.nr_latency, 5);
    sim.s.set_tunable("sched_latency_ns", 8 * MS as i64).unwrap();
    assert_eq!(sim.s.config().tunables.nr_latency, 2);
    // The armed slice stays; the next pick gets the new one.
    assert_eq!(slice(&sim), 10 * MS);
    sim.schedule(0, Deschedule::Preempt);
    assert_eq!(slice(&sim), 4 * MS);
}

/// Clearing SD_WAKE_AFFINE in the MC domains on a running Q6600: a sync
/// wakeup from CPU 1 of a task that last ran on CPU 0 (its MC sibling)
/// goes to CPU 1 before (wake_affine: CPU 1's load minus the waker's is 0,
/// not above CPU 0's 0) and stays on CPU 0 after (no affine domain, no
/// WAKE_BALANCE at MC, wake_idle keeps the idle previous CPU).
#[test]
fn clearing_wake_affine_keeps_a_sync_wakee_on_its_previous_cpu() {
    let v = KernelVersion::V2_6_26;
    let target = |clear: bool| {
        let mut sim = Sim::new(cfg(v, 4), q6600(v), 0);
        let sleeper = sim.spawn(0, TaskParams::normal());
        sim.spawn(1, TaskParams::normal());
        sim.run_to(MS);
        assert_eq!(sim.schedule(0, Deschedule::Sleep).next, None);
        sim.run_to(2 * MS);
        if clear {
            assert_eq!(sim.s.set_domain_flags(DomainLevel::Mc, SdFlags::empty(), SdFlags::WAKE_AFFINE).unwrap(), 4);
        }
        let now = sim.now();
        sim.s.wake_up(now, sleeper, 1, true).unwrap().cpu
    };
    assert_eq!(target(false), 1);
    assert_eq!(target(true), 0);
}

#[test]
fn refused_writes_change_nothing_and_say_why() {
    let v = KernelVersion::V2_6_26;
    let mut sim = Sim::new(cfg(v, 4), q6600(v), 0);
    sim.spawn(0, TaskParams::normal());
    let before = *sim.s.config();
    let domains = sim.s.domains().clone();
    // 2.6.26 defines ten feature bits (1023).
    assert!(matches!(sim.s.set_features_mask(1 << 12), Err(SchedError::Setting(SettingError::Features(_)))));
    assert!(matches!(
        sim.s.set_tunable("sched_bogus_ns", 1),
        Err(SchedError::Setting(SettingError::UnknownTunable(_)))
    ));
    // sched_nr_latency is a static of sched_fair.c, not a sysctl (bce7f793 :48).
    assert!(matches!(
        sim.s.set_tunable("sched_nr_latency", 3),
        Err(SchedError::Setting(SettingError::UnknownTunable(_)))
    ));
    assert!(matches!(
        sim.s.set_tunable("sched_migration_cost", -2),
        Err(SchedError::Setting(SettingError::Tunable(_)))
    ));
    // The Q6600 has no NUMA level.
    let e = sim.s.set_domain_flags(DomainLevel::Node, SdFlags::WAKE_AFFINE, SdFlags::empty()).unwrap_err();
    assert_eq!(e, SchedError::Setting(SettingError::NoSuchLevel(DomainLevel::Node)));
    // 2.6.26 final already has the affinity fix (b3137bc8e77).
    let e = sim.s.set_patch(Patch::AffinityFix, true).unwrap_err();
    assert!(matches!(e, SchedError::Setting(SettingError::Patch(_))), "{e:?}");
    assert!(e.to_string().contains("b3137bc8e77"), "{e}");
    assert_eq!(*sim.s.config(), before);
    assert_eq!(*sim.s.domains(), domains);
}

/// The 2.6.25 SYNC_WAKEUPS back-port brings its own feature table (the
/// 2.6.25 bits plus SYNC_WAKEUPS = 32, default off): switched on, the mask
/// keeps its value in the new table; switched off, the SYNC_WAKEUPS bit is
/// dropped with the table.
#[test]
fn the_sync_wakeups_backport_switches_the_feature_table() {
    let v = KernelVersion::V2_6_25;
    let mut sim = Sim::new(cfg(v, 2), dual_core(v), 0);
    assert_eq!(sim.s.config().features.mask(), 15);
    sim.s.set_patch(Patch::SyncWakeupsBit, true).unwrap();
    assert_eq!(sim.s.config().feature_table(), FeatureTable::of(v, true));
    assert_eq!(sim.s.config().features.mask(), 15);
    sim.s.set_features_mask(15 | 32).unwrap();
    sim.s.set_patch(Patch::SyncWakeupsBit, false).unwrap();
    assert_eq!(sim.s.config().feature_table(), FeatureTable::of(v, false));
    assert_eq!(sim.s.config().features.mask(), 15);
    assert!(!sim.s.config().patches.has(Patch::SyncWakeupsBit));
}

/// `echo N > /sys/devices/system/cpu/sched_mc_power_savings`
/// (`sched_power_savings_store`): the knob takes the level and the domains
/// given (built with it) replace the old ones. 2.6.26's store takes only 0
/// and 1 (-EINVAL otherwise), 2.6.32's 0 to 2; a refused level, or
/// domains that do not fit the machine, leave the knob and the domains as
/// they were.
#[test]
fn a_power_savings_write_sets_the_knob_and_rebuilds_the_domains() {
    use cfs_core::ConfigError;
    use cfs_topology::builder::{BuildOptions, PowerSavings};
    let h = cfs_topology::Host::preset("stoakley").unwrap();
    let built = |v: KernelVersion, mc: u8| {
        h.build_domains_with(v, &BuildOptions { power_savings: PowerSavings { mc, smt: 0 }, ..BuildOptions::default() })
    };
    for v in [KernelVersion::V2_6_26, KernelVersion::V2_6_32] {
        let mut s = cfs_core::Scheduler::new(Config::new(v, 8), h.build_domains(v)).unwrap();
        s.sched_power_savings_store(MS, false, 1, built(v, 1)).unwrap();
        assert_eq!((s.config().power_savings, s.domains()), (PowerSavings { mc: 1, smt: 0 }, &built(v, 1)), "{v}");
        let two = s.sched_power_savings_store(2 * MS, false, 2, built(v, 2));
        if v == KernelVersion::V2_6_26 {
            let e = ConfigError::PowerSavings { level: 2, version: v };
            assert_eq!(two, Err(SchedError::Setting(SettingError::PowerSavings(e))));
            assert_eq!(s.config().power_savings.mc, 1);
        } else {
            assert_eq!((two, s.config().power_savings.mc), (Ok(()), 2));
        }
        let before = (s.config().power_savings, s.domains().clone());
        let t = cfs_topology::Host::preset("tigerton").unwrap().build_domains(v);
        assert!(s.sched_power_savings_store(3 * MS, true, 1, t).is_err(), "{v}: sixteen CPUs' domains on eight");
        assert_eq!((s.config().power_savings, s.domains().clone()), before, "{v}");
    }
}
