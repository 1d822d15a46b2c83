//! `core_ops`: an arbitrary sequence of API calls against cfs-core on an
//! arbitrary small host, profile, feature mask and patch set, with the
//! online invariants on. A panic or an invariant violation is a finding;
//! refusals (`SchedError` other than `Invariant`) are expected answers.
//! The calls include the run-time settings (features mask, tunables, domain
//! flags, patches switched on and off) and CPUs going down and coming back
//! up with their rebuilt domains, and the domains rebuilt in place. `nohz` switches NO_HZ on; then
//! after every call one CPU in turn runs the idle loop's
//! `nohz_stop_sched_tick`, as a driver would. (NO_HZ was bit 7 of
//! `patches` until an eighth patch needed that bit.) After every call,
//! `task_sched_runtime` is checked against the tasks' banked CPU time.
#![no_main]

use arbitrary::Arbitrary;
use cfs_core::{
    Config, CpuMask, CurrentState, Deschedule, KernelVersion, Patch, Policy, SchedError, Scheduler, TaskId, TaskParams,
    Tunables,
};
use cfs_topology::builder::{BuildOptions, NumaConfig};
use cfs_topology::{DomainLevel, SdFlags};
use libfuzzer_sys::fuzz_target;

const HOSTS: [&str; 7] = ["1s1c", "1s2c", "q6600", "x2", "1s2c2t", "2s2c", "2n1s2c2t"];

#[derive(Arbitrary, Debug)]
enum Op {
    Spawn {
        cpu: u8,
        nice: i8,
        policy: u8,
        mask: u16,
    },
    Fork {
        task: u8,
    },
    Wake {
        task: u8,
        cpu: u8,
        sync: bool,
        irq: bool,
    },
    Schedule {
        cpu: u8,
        how: u8,
    },
    Tick {
        cpu: u8,
    },
    Hrtick {
        cpu: u8,
    },
    Advance {
        ns: u32,
    },
    SetNice {
        task: u8,
        nice: i8,
    },
    SetPolicy {
        task: u8,
        policy: u8,
    },
    SetAffinity {
        task: u8,
        mask: u16,
    },
    Rebalance {
        cpu: u8,
    },
    // Settings written mid-run (cfs_core::sysctl); invalid ones are refused.
    SetFeatures {
        mask: u32,
    },
    SetTunable {
        which: u8,
        value: i32,
    },
    SetDomainFlags {
        level: u8,
        set: u32,
        clear: u32,
    },
    SetPatch {
        patch: u8,
        on: bool,
    },
    /// What APERF/MPERF read on a CPU (2.6.32's ARCH_POWER), any ratio,
    /// or no counters.
    SetFreqPower {
        cpu: u8,
        ratio: Option<u32>,
    },
    /// A CPU goes down (cfs_core::hotplug) with its rebuilt domains, or the boot ones (`stale`: refused).
    CpuDown {
        cpu: u8,
        stale: bool,
    },
    /// A CPU comes back up.
    CpuUp {
        cpu: u8,
    },
    /// The running task enters or leaves a wait loop (set_current_state).
    SetCurrentState {
        task: u8,
        interruptible: bool,
    },
    /// The domains rebuilt over the CPUs up (arch_reinit_sched_domains),
    /// as the kernel with the patches and power-savings knobs now in force
    /// builds them, with or without CONFIG_NUMA; or the boot ones (`stale`:
    /// refused once a CPU is down).
    ReinitDomains {
        numa: bool,
        stale: bool,
    },
    /// A write to sched_mc_power_savings (or, with `smt`, the SMT knob) of
    /// any level 0-3 (above the kernel's maximum: refused), with the domains
    /// built under the new knobs.
    PowerSavingsStore {
        smt: bool,
        level: u8,
    },
}

/// Every tunable, and one name no kernel has.
fn tunable(i: u8) -> &'static str {
    Tunables::NAMES.get(i as usize % (Tunables::NAMES.len() + 1)).copied().unwrap_or("sched_bogus")
}

// `Input::patches` has one bit per patch below its two build bits: a
// fifteenth patch needs a wider field.
const _: () = assert!(Patch::ALL.len() <= 14);

#[derive(Arbitrary, Debug)]
struct Input {
    host: u8,
    version: u8,
    features: u32,
    /// One bit per patch, in `Patch::ALL` order; bit 15 (past the last
    /// patch) builds the kernel with CONFIG_CPUSETS, bit 14 with group
    /// scheduling by user where the profile has it.
    patches: u16,
    nohz: bool,
    /// CONFIG_PREEMPT (2.6.32's newly-idle balancing stops at one task).
    preempt: bool,
    /// HZ: the four common values, or any Config::validate takes (1..=10000).
    hz: u16,
    /// CONFIG_NR_CPUS above the machine's count (it caps the balance interval).
    extra_nr_cpus: u8,
    start: u64,
    ops: Vec<Op>,
}

fn policy(p: u8) -> Policy {
    match p % 3 {
        0 => Policy::Normal,
        1 => Policy::Batch,
        _ => Policy::Idle,
    }
}

fuzz_target!(|input: Input| {
    let Ok(host) = cfs_topology::parse_any(HOSTS[input.host as usize % HOSTS.len()]) else { return };
    let version = KernelVersion::ALL[input.version as usize % KernelVersion::ALL.len()];
    let n = host.nr_cpus();
    let mut cfg = Config::new(version, n);
    for (i, p) in Patch::ALL.iter().enumerate() {
        if input.patches & (1 << i) != 0
            && let Ok(c) = cfg.with_patch(*p)
        {
            cfg = c;
        }
    }
    let valid = cfg.feature_table().valid_bits();
    cfg = cfg.with_features_mask(input.features & valid).expect("masked to valid bits");
    cfg.check_invariants = true;
    cfg.nohz = input.nohz;
    cfg.preempt = input.preempt;
    // The top bit of the patch set (more bits than patches) is CONFIG_CPUSETS.
    cfg.cpusets = input.patches & 0x8000 != 0;
    cfg.group_sched =
        input.patches & 0x4000 != 0 && cfs_core::config::group_sched_refusal(version, cfg.patches).is_none();
    cfg.hz = match input.hz {
        0..=3 => [100, 250, 300, 1000][input.hz as usize],
        h => 1 + u32::from(h) % 10_000,
    };
    cfg.nr_cpus = (n as u32 + u32::from(input.extra_nr_cpus)).min(cfs_topology::MAX_CPUS as u32).max(n as u32);
    let mut s = Scheduler::new(cfg, host.build_domains(version)).expect("valid config");
    let mut now = input.start;
    let task = |t: u8, s: &Scheduler| TaskId(t as u32 % (s.tasks().len().max(1) as u32));
    for (i, op) in input.ops.iter().take(512).enumerate() {
        let r: Result<(), SchedError> = match *op {
            Op::Spawn { cpu, nice, policy: p, mask } => {
                // The policy byte's quotient picks the user: 0, 1000 or 1001
                // (their task groups under group scheduling).
                let params = TaskParams::normal()
                    .nice(nice as i32)
                    .policy(policy(p))
                    .allowed(CpuMask::from_cpus((0..16).filter(|b| mask & (1 << b) != 0)))
                    .uid([0, 1000, 1001][(p / 3 % 3) as usize]);
                s.spawn(now, cpu as usize % n, params).map(|_| ())
            }
            Op::Fork { task: t } => s.fork(now, task(t, &s), None).map(|_| ()),
            Op::Wake { task: t, cpu, sync, irq } => {
                let id = task(t, &s);
                if irq {
                    s.wake_up_irq(now, id, cpu as usize % n, sync).map(|_| ())
                } else {
                    s.wake_up(now, id, cpu as usize % n, sync).map(|_| ())
                }
            }
            Op::Schedule { cpu, how } => {
                let how =
                    [Deschedule::Preempt, Deschedule::Sleep, Deschedule::Exit, Deschedule::Yield, Deschedule::Schedule]
                        [how as usize % 5];
                s.schedule(now, cpu as usize % n, how).map(|_| ())
            }
            Op::Tick { cpu } => s.tick(now, cpu as usize % n).map(|_| ()),
            Op::Hrtick { cpu } => s.hrtick(now, cpu as usize % n).map(|_| ()),
            Op::Advance { ns } => {
                now = now.wrapping_add(ns as u64);
                Ok(())
            }
            Op::SetNice { task: t, nice } => s.set_nice(now, task(t, &s), nice as i32),
            Op::SetPolicy { task: t, policy: p } => s.set_policy(now, task(t, &s), policy(p)),
            Op::SetAffinity { task: t, mask } => {
                s.set_affinity(now, task(t, &s), CpuMask::from_cpus((0..16).filter(|b| mask & (1 << b) != 0)))
            }
            Op::Rebalance { cpu } => s.rebalance(now, cpu as usize % n),
            Op::SetFeatures { mask } => s.set_features_mask(mask),
            Op::SetTunable { which, value } => s.set_tunable(tunable(which), value as i64 * 1_000),
            Op::SetDomainFlags { level, set, clear } => {
                let levels =
                    [DomainLevel::Sibling, DomainLevel::Mc, DomainLevel::Cpu, DomainLevel::Node, DomainLevel::AllNodes];
                let level = levels[level as usize % levels.len()];
                s.set_domain_flags(level, SdFlags::from_bits_truncate(set), SdFlags::from_bits_truncate(clear))
                    .map(|_| ())
            }
            Op::SetPatch { patch, on } => s.set_patch(Patch::ALL[patch as usize % Patch::ALL.len()], on),
            Op::SetFreqPower { cpu, ratio } => s.set_arch_freq_power(cpu as usize, ratio),
            Op::CpuDown { cpu, stale } => {
                let cpu = cpu as usize % (n + 1);
                let mut online = s.online_cpus();
                online.clear(cpu);
                let power_savings = s.config().power_savings;
                let opts = BuildOptions { online: Some(online), power_savings, ..BuildOptions::default() };
                let d = if stale { host.build_domains(version) } else { host.build_domains_with(version, &opts) };
                s.cpu_down(now, cpu, host.all_cpus(), d).map(|_| ())
            }
            Op::CpuUp { cpu } => {
                let cpu = cpu as usize % (n + 1);
                let mut online = s.online_cpus();
                online.set(cpu);
                let power_savings = s.config().power_savings;
                let opts = BuildOptions { online: Some(online), power_savings, ..BuildOptions::default() };
                s.cpu_up(now, cpu, host.build_domains_with(version, &opts))
            }
            Op::SetCurrentState { task: t, interruptible } => {
                let state = if interruptible { CurrentState::Interruptible } else { CurrentState::Running };
                s.set_current_state(task(t, &s), state)
            }
            Op::ReinitDomains { numa, stale } => {
                let opts = BuildOptions {
                    online: Some(s.online_cpus()),
                    numa: if numa { NumaConfig::On } else { NumaConfig::Auto },
                    init_flags: s.config().patches.init_flag_edits(),
                    power_savings: s.config().power_savings,
                    ..BuildOptions::default()
                };
                let d = if stale { host.build_domains(version) } else { host.build_domains_with(version, &opts) };
                s.arch_reinit_sched_domains(now, d)
            }
            Op::PowerSavingsStore { smt, level } => {
                let level = level % 4;
                let power_savings = s.config().power_savings.with(smt, level);
                let opts = BuildOptions {
                    online: Some(s.online_cpus()),
                    init_flags: s.config().patches.init_flag_edits(),
                    power_savings,
                    ..BuildOptions::default()
                };
                s.sched_power_savings_store(now, smt, level, host.build_domains_with(version, &opts))
            }
        };
        if let Err(SchedError::Invariant(v)) = r {
            panic!("{v}");
        }
        // task_sched_runtime: a running task's is its banked CPU time plus
        // no more than the time since its exec_start; anyone else's is its
        // banked CPU time.
        for cpu in 0..n {
            if let Some(c) = s.curr(cpu) {
                let t = s.task(c).expect("the current task exists");
                let extra = s.task_sched_runtime(now, c).expect("known").wrapping_sub(t.se.sum_exec_runtime);
                let since = now.wrapping_sub(t.se.exec_start);
                assert!(extra == 0 || extra == since, "{extra} ns unbanked, {since} since exec_start");
            }
        }
        let other = task(i as u8, &s);
        if let Some(t) = s.task(other).filter(|t| s.curr(t.cpu) != Some(other)) {
            assert_eq!(s.task_sched_runtime(now, other), Some(t.se.sum_exec_runtime));
        }
        if cfg.nohz
            && s.online_cpus().contains(i % n)
            && let Err(SchedError::Invariant(v)) = s.nohz_stop_sched_tick(now, i % n)
        {
            panic!("{v}");
        }
    }
});
