//! `heuristics`: an arbitrary kernel profile, `sched_features` mask (masked
//! to the profile's valid bits), tunables (written through
//! `Tunables::set_by_name`, refusals skipped), HZ and hres timers, patch set
//! (refusals skipped) and domain flag overrides, on a small host (≤ 8 CPUs),
//! driving a small workload through the real engine with the online
//! invariants on, for 1-4 ms of simulated time.
//!
//! The workload is a built-in (`Workload::builtin`, 1-4 clients (one
//! group / room for messaging and volanomark: 41 and 81 tasks), with
//! arbitrary policy, pins, nice levels and loop counts), a generated set of
//! task programs over the whole `Action` vocabulary, or both side by side
//! (the generated tasks then come after the built-in's and talk only among
//! themselves, their children and their parents).
//!
//! Settings are also written mid-run (the engine's `changes`, `--switch`),
//! dropping those the scheduler would refuse. The engine's instruments are
//! fuzzed too: a clock offset (none, just
//! below 2^64 so the scheduler's clock wraps mid-run, or arbitrary), the
//! wait / idle-gap probe and the 1:N waker watch; so is NO_HZ, and an
//! injected interrupt load on one CPU (`cfs_sim::faults`).
//!
//! Every run is timed, so the engine can neither report a stall (a timed run
//! idles to its end) nor hit its time cap; every `SimError` is therefore a
//! finding (a core invariant violation arrives as `SimError::Sched(
//! SchedError::Invariant(..))`), as is any panic or a run whose outcome is
//! inconsistent (ends after its end, a CPU busier than the elapsed time, a
//! probe stretch longer than the run).
//!
//! All programs share one step budget (children too) after which tasks exit,
//! and generated programs fork at most `MAX_FORKS` children, so one input
//! stays well under 100 ms.
#![no_main]

use arbitrary::Arbitrary;
use cfs_core::{Config, CpuMask, KernelVersion, Patch, Policy, TaskParams};
use cfs_sim::costs::CostModel;
use cfs_sim::dist::Dist;
use cfs_sim::engine::{self, Instruments, Limits, RunSetup, Sockets};
use cfs_sim::faults::IrqLoad;
use cfs_sim::program::{Action, ForkSpec, Program, StepBudget, StepCx, Stream, TaskRef, TaskSpec};
use cfs_sim::workloads::{MAX_SIM_NS, Policies, Workload, WorkloadOpts};
use cfs_topology::parse_flag_overrides_for;
use libfuzzer_sys::fuzz_target;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

/// Presets and specs, 1 to 8 CPUs, covering SMT, multi-die, multi-socket
/// and NUMA shapes and both CPU numberings.
const HOSTS: [&str; 11] = [
    "x2",
    "q6600",
    "stoakley",
    "1s1c",
    "1s2c2t",
    "2s2c",
    "2n1s2c2t",
    "1s2d2c,l2=die:4096K",
    "2n2s1c,amd,dist=40",
    "1s4c2t,order=linear",
    "1s3c",
];
const BUILTINS: [&str; 7] = ["pgbench", "tbench", "hogs", "messaging", "volanomark", "starve", "sysbench-oltp"];
const HZ: [u32; 6] = [100, 250, 300, 1000, 24, 10_000];
/// (name, lowest, highest value `set_by_name` accepts; `sched_nr_latency`,
/// no sysctl of any kernel, is set on the field, as a library caller may).
const TUNABLES: [(&str, i64, i64); 8] = [
    ("sched_latency_ns", 100_000, 1_000_000_000),
    ("sched_min_granularity_ns", 100_000, 1_000_000_000),
    ("sched_wakeup_granularity_ns", 0, 1_000_000_000),
    ("sched_migration_cost", -1, i64::MAX),
    ("sched_nr_migrate", 0, u32::MAX as i64),
    ("sched_child_runs_first", 0, 1),
    ("sched_compat_yield", 0, 1),
    ("sched_nr_latency", 1, i64::MAX),
];
const LEVELS: [&str; 5] = ["SIBLING", "MC", "CPU", "NODE", "ALLNODES"];
const FLAGS: [&str; 15] = [
    "LOAD_BALANCE",
    "BALANCE_NEWIDLE",
    "BALANCE_EXEC",
    "BALANCE_FORK",
    "WAKE_IDLE",
    "WAKE_AFFINE",
    "WAKE_BALANCE",
    "SHARE_CPUPOWER",
    "POWERSAVINGS_BALANCE",
    "SHARE_PKG_RESOURCES",
    "SERIALIZE",
    "WAKE_IDLE_FAR",
    "BALANCE_WAKE",
    "PREFER_LOCAL",
    "PREFER_SIBLING",
];
/// Program steps over all tasks of a run.
const STEP_BUDGET: u32 = 5_000;
/// Children generated programs may fork, over the run.
const MAX_FORKS: u32 = 24;
const MAX_GEN_TASKS: usize = 6;
const MAX_GEN_OPS: usize = 16;
const NR_CONDS: usize = 4;
const NR_MUTEXES: usize = 3;
const NR_SEMS: usize = 2;
/// Each barrier's users: one that never waits, and two that may never
/// fill (a generated program need not reach its barriers).
const BARRIER_USERS: [u32; 3] = [1, 2, 3];

#[derive(Arbitrary, Debug)]
struct Tunable {
    which: u8,
    how: u8,
    raw: u32,
}

#[derive(Arbitrary, Debug)]
struct Override {
    level: u8,
    set: bool,
    flag: u8,
}

#[derive(Arbitrary, Debug)]
struct Builtin {
    which: u8,
    clients: u8,
    policy: u8,
    pin_client: u8,
    pin_server: u8,
    nice: Vec<i8>,
    loops: u8,
}

#[derive(Arbitrary, Debug, Clone)]
enum GOp {
    /// `v` × 200 ns (up to 13 ms), drawn as `dist` says.
    Run {
        v: u16,
        dist: u8,
    },
    /// `v` × 100 ns.
    Sleep {
        v: u16,
        interruptible: bool,
    },
    Send {
        to: u8,
        sync: bool,
        bytes: u8,
    },
    Wait {
        all: bool,
    },
    /// With the mutex `mutex` names, if it is below NR_MUTEXES.
    CondWait {
        cond: u8,
        mutex: u8,
    },
    CondSignal {
        cond: u8,
        all: bool,
    },
    Lock(u8),
    Unlock(u8),
    SemPost(u8),
    SemWait(u8),
    Barrier(u8),
    Fork {
        def: u8,
        inherit: bool,
    },
    Yield,
    Exit,
    Touch {
        lines: u8,
    },
    Progress(u8),
    SetNice(i8),
    SetPolicy(u8),
    SetAffinity(u16),
}

#[derive(Arbitrary, Debug, Clone)]
struct GenTask {
    nice: i8,
    policy: u8,
    mask: u8,
    cpu: u8,
    ws_kb: u8,
    ops: Vec<GOp>,
}

// `Input::patches` has one bit per patch below its two build bits: a
// fifteenth patch needs a wider field.
const _: () = assert!(Patch::ALL.len() <= 14);

#[derive(Arbitrary, Debug)]
struct Input {
    version: u8,
    /// None: the profile's default `sched_features`.
    features: Option<u32>,
    /// One bit per patch, in `Patch::ALL` order; bit 15 builds the kernel
    /// with group scheduling by user where the profile has it, and bit 14
    /// then runs a built-in's two sides as two users.
    patches: u16,
    tunables: Vec<Tunable>,
    /// HZ, an index into `HZ` (modulo); bit 7 also builds the kernel with
    /// CONFIG_PREEMPT, bit 6 with CONFIG_CPUSETS (kept in this byte so the
    /// committed corpus decodes as before).
    hz: u8,
    hres_timers: bool,
    overrides: Vec<Override>,
    host: u8,
    seed: u64,
    /// Simulated run time: 1 + ms % 4 milliseconds. The upper six bits,
    /// k = ms >> 2, inject interrupt load when not 0 (`--irq`; in this
    /// byte so that the committed corpus decodes as before): on CPU k % n,
    /// every (k + 1) x 20 µs (Poisson arrivals with that mean when k is
    /// odd), each handler taking k % 8 + 1 µs.
    ms: u8,
    /// Warm-up: a quarter of the run when set.
    warmup: bool,
    /// Engine instruments: bits 0-1 the clock offset (none, none, just
    /// below 2^64, the seed), bit 2 the probe, bit 3 the 1:N watch; bit 4
    /// switches NO_HZ on and bit 5 the socket layer's write-space wakeups,
    /// under which generated sync sends are AF_UNIX writes and generated
    /// `Wait { all: true }` a select() (kernel settings, kept in this byte
    /// so that the committed corpus decodes as before).
    clock: u8,
    builtin: Option<Builtin>,
    generated: Vec<GenTask>,
    /// Settings written mid-run (`--switch`); last, so that the committed
    /// corpus decodes as before (with none).
    changes: Vec<FuzzChange>,
}

/// The interrupt load that `k` (the upper bits of `Input::ms`) asks for
/// on a host of `n` CPUs.
fn irq_loads(k: u8, n: usize) -> Vec<IrqLoad> {
    if k == 0 {
        return Vec::new();
    }
    let k = k as u64;
    // At least 40 µs apart, at most 8 µs each: always a valid load.
    let load = IrqLoad::new(CpuMask::single(k as usize % n), (k + 1) * 20_000, (k % 8 + 1) * 1_000, k % 2 == 1);
    vec![load.expect("a valid interrupt load")]
}

/// One mid-run write: at `at` x 100 ns, of kind `kind % 7` (features mask,
/// tunable, a level's domain flags, a patch on or off, a policy, CPUs or
/// a nice level for every task or one side) with operands `a`, `b`, for
/// `kind` 240-244 CPU `a` going down (even `b`) or coming up (odd), and for
/// `kind` 245 and up a fault (CPUs slowed, an interrupt load started, or
/// every load stopped). Writes the scheduler would refuse are dropped
/// before the run.
#[derive(Arbitrary, Debug, Clone)]
struct FuzzChange {
    at: u16,
    kind: u8,
    a: u32,
    b: u32,
}

/// The input's changes as engine changes, in time order, keeping only those
/// a scheduler of this configuration accepts (one after the other).
fn changes(
    input: &Input,
    config: Config,
    domains: &cfs_core::SchedDomains,
    boot_irqs: &[IrqLoad],
) -> Vec<engine::Change> {
    use cfs_topology::{DomainLevel, SdFlags};
    use engine::{Change, Setting};
    let mut all: Vec<Change> = input
        .changes
        .iter()
        .take(8)
        .filter_map(|c| {
            let side = match c.b % 3 {
                0 => None,
                1 => Some(cfs_sim::program::Side::Client),
                _ => Some(cfs_sim::program::Side::Server),
            };
            let setting = match c.kind % 7 {
                _ if c.kind >= 245 => fault(c, domains.nr_cpus())?,
                // CPU hotplug: a CPU down (even b) or up (odd b).
                _ if c.kind >= 240 => {
                    let cpu = c.a as usize % domains.nr_cpus();
                    if c.b % 2 == 0 { Setting::Offline(cpu) } else { Setting::Online(cpu) }
                }
                // net.ipv4.tcp_low_latency written mid-run (one b in 16).
                1 if c.b % 16 == 15 => Setting::TcpLowLatency(c.a & 1 != 0),
                // A power-savings knob written mid-run (one b in 16): the
                // domains are rebuilt (0 or 1, what every profile takes).
                2 if c.b % 16 == 15 => Setting::PowerSavings { smt: c.a & 2 != 0, level: (c.a & 1) as u8 },
                0 => Setting::Features((c.a & config.feature_table().valid_bits()).to_string()),
                1 => Setting::Tunable(
                    cfs_core::Tunables::NAMES[c.a as usize % cfs_core::Tunables::NAMES.len()].into(),
                    c.b as i64 % 100_000_000 - 1,
                ),
                2 => {
                    let levels = [DomainLevel::Sibling, DomainLevel::Mc, DomainLevel::Cpu, DomainLevel::Node];
                    let level = levels[c.a as usize % levels.len()];
                    Setting::DomainFlags(level, SdFlags::from_bits_truncate(c.b), SdFlags::from_bits_truncate(c.a >> 8))
                }
                3 => Setting::Patch(Patch::ALL[c.a as usize % Patch::ALL.len()], c.b & 1 != 0),
                4 => Setting::Policy(side, policy(c.a as u8)),
                5 => Setting::Affinity(side, host_mask(c.a as u16, domains.nr_cpus())?),
                // Every value, out of range too: cfs-core clamps as set_user_nice's callers do.
                _ => Setting::Nice(side, c.a as i32),
            };
            Some(Change { at_ns: c.at as u64 * 100, setting })
        })
        .collect();
    all.sort_by_key(|c| c.at_ns);
    let Ok(mut probe) = cfs_core::Scheduler::new(config, domains.clone()) else { return Vec::new() };
    let accepted: Vec<Change> = all.into_iter().filter(|c| c.setting.apply(&mut probe).is_ok()).collect();
    // Faults that would leave a CPU nothing but interrupts are refused
    // before any run (a livelock): keep each only if the run stays clear.
    let mut kept: Vec<Change> = Vec::new();
    for c in accepted {
        kept.push(c);
        let steps = engine::fault_steps(boot_irqs, &[], &kept);
        if cfs_sim::faults::check_cpu_time(domains.nr_cpus(), steps).is_err()
            || engine::check_hotplug(domains.nr_cpus(), &kept).is_err()
        {
            kept.pop();
        }
    }
    kept
}

/// The fault a change of kind 245 and up writes: CPUs `a` slowed to
/// `b` thousandths (even kinds), an interrupt load on CPUs `a` (odd), or,
/// for an odd kind with `b` a multiple of 4, every load stopped. Always a
/// valid one.
fn fault(c: &FuzzChange, n: usize) -> Option<engine::Setting> {
    use cfs_sim::faults::{IrqLoad, Slowdown};
    use engine::Setting;
    let cpus = host_mask(c.a as u16, n)?;
    Some(if c.kind.is_multiple_of(2) {
        Setting::Slow(Slowdown::new(cpus, c.b % 1000 + 1).expect("a valid slowdown"))
    } else if c.b.is_multiple_of(4) {
        Setting::NoIrq
    } else {
        // 10 µs to ~1 ms apart, each taking less than that.
        let every = 10_000 + u64::from(c.b % 1_000) * 1_000;
        let load = IrqLoad::new(cpus, every, (u64::from(c.b >> 10) % every).max(1), c.b & 2 != 0);
        Setting::Irq(load.expect("a valid interrupt load"))
    })
}

/// None for 0 (mod 4), else a policy.
fn maybe_policy(p: u8) -> Option<Policy> {
    match p % 4 {
        0 => None,
        p => Some(policy(p)),
    }
}

fn policy(p: u8) -> Policy {
    match p % 3 {
        0 => Policy::Normal,
        1 => Policy::Batch,
        _ => Policy::Idle,
    }
}

/// A mask of the host's CPUs from bits; None when no bit names one.
fn host_mask(bits: u16, n: usize) -> Option<CpuMask> {
    let m = CpuMask::from_cpus((0..n.min(16)).filter(|b| bits & (1 << b) != 0));
    (!m.is_empty()).then_some(m)
}

/// What the generated programs of a run share.
struct Gen {
    defs: Vec<GenTask>,
    /// Engine id of generated task 0.
    offset: TaskRef,
    nr_cpus: usize,
    forks_left: Cell<u32>,
    peers: Arc<[TaskRef]>,
    /// Sync sends are AF_UNIX stream writes, `Wait { all: true }` a select().
    sockets: bool,
    /// The built-in's own mutexes (sysbench's start mutex), which come
    /// first: generated mutex k is engine mutex `mutex_base + k`.
    mutex_base: usize,
}

impl Gen {
    fn params(&self, d: &GenTask) -> TaskParams {
        let mut p = TaskParams::normal().nice((d.nice % 20) as i32).policy(policy(d.policy));
        if let Some(m) = host_mask(d.mask as u16, self.nr_cpus) {
            p = p.allowed(m);
        }
        p
    }
}

/// A generated task: its definition's ops, round and round.
struct GenProg {
    shared: Rc<Gen>,
    def: usize,
    pc: usize,
    last_child: Option<TaskRef>,
}

impl Program for GenProg {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Action {
        if let Some(c) = cx.forked {
            self.last_child = Some(c);
        }
        let g = self.shared.clone();
        let ops = &g.defs[self.def].ops;
        if ops.is_empty() {
            return Action::Exit;
        }
        let op = &ops[self.pc % ops.len()];
        self.pc = (self.pc + 1) % ops.len();
        match *op {
            GOp::Run { v, dist } => {
                let mean = v as u64 * 200;
                Action::RunDist(match dist % 4 {
                    0 => Dist::Fixed(mean),
                    1 => Dist::Exp { mean },
                    2 => Dist::normal_cv(mean as f64, (dist / 4) as f64 / 16.0),
                    _ => Dist::Uniform { lo: mean / 2, hi: mean + mean / 2 },
                })
            }
            GOp::Sleep { v, interruptible } => Action::Sleep { ns: v as u64 * 100, interruptible },
            GOp::Send { to, sync, bytes } => {
                let n = g.defs.len();
                let target = match to as usize % (n + 2) {
                    i if i < n => Some(g.offset + i),
                    i if i == n => self.last_child,
                    _ => cx.parent,
                };
                match target {
                    // A socket shared by every writer to `t` (hackbench),
                    // a pipe likewise shared, or a socket pair.
                    Some(t) if sync && g.sockets => {
                        let stream = match bytes % 3 {
                            0 => Stream::Pair,
                            1 => Stream::Shared(t as u32),
                            _ => Stream::Pipe(t as u32),
                        };
                        Action::Write { to: t, stream, bytes: bytes as u32 * 16, tag: 0 }
                    }
                    // Half the plain sends go over loopback TCP, whose
                    // wakeups come from the receive softirq.
                    Some(t) if !sync && bytes % 2 == 1 => Action::TcpSend { to: t, bytes: bytes as u32 * 16, tag: 0 },
                    Some(t) => Action::Send { to: t, sync, bytes: bytes as u32 * 16, tag: 0 },
                    None => Action::Progress(0),
                }
            }
            GOp::Wait { all: true } if g.sockets => Action::Select {
                entry_ns: 500,
                poll_ns: 100,
                exit_ns: 500,
                repoll_ns: 2_000,
                slept_ns: 1_000,
                fds: g.peers.clone(),
            },
            GOp::Wait { all } => Action::Wait { all },
            GOp::CondWait { cond, mutex } => {
                let mutex = (mutex as usize % (NR_MUTEXES + 1) < NR_MUTEXES)
                    .then_some(g.mutex_base + mutex as usize % (NR_MUTEXES + 1));
                Action::CondWait { cond: cond as usize % NR_CONDS, mutex }
            }
            GOp::CondSignal { cond, all } => Action::CondSignal { cond: cond as usize % NR_CONDS, all },
            GOp::Lock(m) => Action::Lock(g.mutex_base + m as usize % NR_MUTEXES),
            GOp::Unlock(m) => Action::Unlock(g.mutex_base + m as usize % NR_MUTEXES),
            GOp::SemPost(k) => Action::SemPost(k as usize % NR_SEMS),
            GOp::SemWait(k) => Action::SemWait(k as usize % NR_SEMS),
            GOp::Barrier(b) => Action::Barrier(b as usize % BARRIER_USERS.len()),
            GOp::Fork { def, inherit } => {
                let left = g.forks_left.get();
                if left == 0 {
                    return Action::Yield;
                }
                g.forks_left.set(left - 1);
                let def = def as usize % g.defs.len();
                let d = &g.defs[def];
                Action::Fork(Box::new(ForkSpec {
                    name: format!("gen{def}-child"),
                    program: Box::new(GenProg { shared: g.clone(), def, pc: 0, last_child: None }),
                    params: (!inherit).then(|| g.params(d)),
                    ws_kb: d.ws_kb as u32 * 4,
                }))
            }
            GOp::Yield => Action::Yield,
            GOp::Exit => Action::Exit,
            GOp::Touch { lines } => Action::Touch { peers: g.peers.clone(), lines: lines as f64 / 8.0 },
            GOp::Progress(n) => Action::Progress(n as u64),
            GOp::SetNice(n) => Action::SetNice((n % 20) as i32),
            GOp::SetPolicy(p) => Action::SetPolicy(policy(p)),
            // Any bits: a mask with no CPU of the host is refused (EINVAL).
            GOp::SetAffinity(bits) => {
                Action::SetAffinity(Box::new(CpuMask::from_cpus((0..16).filter(|b| bits & (1 << b) != 0))))
            }
        }
    }
}

fuzz_target!(|input: Input| {
    // Triage: CFS_FUZZ_DEBUG=1 prints the decoded input and the outcome.
    let debug = std::env::var_os("CFS_FUZZ_DEBUG").is_some();
    if debug {
        eprintln!("{input:#?}");
    }
    // Host.
    let name = HOSTS[input.host as usize % HOSTS.len()];
    let host = cfs_topology::parse_any(name).expect("host list parses");
    let n = host.nr_cpus();
    assert!(n <= 8);
    let costs = CostModel::for_host(name, &host);

    // Configuration, in the order `SchedSpec::resolve` applies it.
    let version = KernelVersion::ALL[input.version as usize % KernelVersion::ALL.len()];
    let mut config = Config::new(version, n);
    for (i, p) in Patch::ALL.iter().enumerate() {
        if input.patches & (1 << i) != 0
            && let Ok(c) = config.with_patch(*p)
        {
            config = c;
        }
    }
    if let Some(f) = input.features {
        let valid = config.feature_table().valid_bits();
        config = config.with_features_mask(f & valid).expect("masked to valid bits");
    }
    for t in input.tunables.iter().take(8) {
        let (name, lo, hi) = TUNABLES[t.which as usize % TUNABLES.len()];
        let value = match t.how % 4 {
            0 => (lo as i128 + t.raw as i128 % (hi as i128 - lo as i128 + 1)) as i64,
            1 => t.raw as i64,
            2 => t.raw as i32 as i64,
            _ => [lo, hi][t.raw as usize % 2],
        };
        if name == "sched_nr_latency" {
            if let Ok(v @ 1..) = u64::try_from(value) {
                config.tunables.nr_latency = v;
            }
            continue;
        }
        if let Ok(known) = config.tunables.set_by_name(name, value) {
            assert!(known, "{name} is a tunable");
        }
    }
    config.hz = HZ[input.hz as usize % HZ.len()];
    config.hres_timers = input.hres_timers;
    config.nohz = input.clock & 16 != 0;
    config.preempt = input.hz & 128 != 0;
    config.cpusets = input.hz & 64 != 0;
    config.group_sched =
        input.patches & 0x8000 != 0 && cfs_core::config::group_sched_refusal(version, config.patches).is_none();
    config.check_invariants = true;
    config.validate().expect("a configuration built from accepted pieces is valid");
    // A patch's initialiser edits go to the builder; flag overrides are
    // written into the built domains, as the CLI's --sd-flags are.
    let mut domain_build = engine::DomainBuild::default();
    let mut domains = domain_build.build(&host, &config, host.all_cpus());
    for o in input.overrides.iter().take(3) {
        let item = format!(
            "{}:{}{}",
            LEVELS[o.level as usize % LEVELS.len()],
            if o.set { '+' } else { '-' },
            FLAGS[o.flag as usize % FLAGS.len()]
        );
        if let Ok(ov) = parse_flag_overrides_for(&item, version) {
            domains.apply_overrides(&ov);
            domain_build.overrides.extend(ov);
        }
    }

    // Workload.
    let run_ns = (1 + input.ms as u64 % 4) * 1_000_000;
    let warmup_ns = if input.warmup { run_ns / 4 } else { 0 };
    let mut tasks: Vec<TaskSpec> = Vec::new();
    let mut finish = Vec::new();
    let mut builtin_mutexes = 0;
    if let Some(b) = &input.builtin {
        let wl = Workload::builtin(BUILTINS[b.which as usize % BUILTINS.len()]).expect("built-in");
        let opts = WorkloadOpts {
            transactions: None,
            duration_ns: Some(run_ns),
            // Every task's policy and the two sides' from one byte's bit
            // pairs; its top two bits give the client and the server side
            // the first and last of the nice levels.
            policies: Policies {
                all: maybe_policy(b.policy),
                client: maybe_policy(b.policy >> 2),
                server: maybe_policy(b.policy >> 4),
                client_nice: b.nice.first().map(|&x| (x % 20) as i32).filter(|_| b.policy & 0x40 != 0),
                server_nice: b.nice.last().map(|&x| (x % 20) as i32).filter(|_| b.policy & 0x80 != 0),
                client_uid: None,
                server_uid: (input.patches & 0x4000 != 0).then_some(1001),
            },
            pin_client: host_mask(b.pin_client as u16, n).filter(|_| b.pin_client & 0x80 != 0),
            pin_server: host_mask(b.pin_server as u16, n).filter(|_| b.pin_server & 0x80 != 0),
            nice: b.nice.iter().take(8).map(|&x| (x % 20) as i32).collect(),
            loops: Some(1 + b.loops as u32 % 16),
            // hackbench over pipes in half the messaging runs.
            pipe: b.loops & 0x80 != 0,
        };
        // messaging and volanomark make 40 and 80 tasks per client: one.
        let clients = match wl {
            Workload::Messaging(_) | Workload::Volanomark(_) => 1,
            _ => 1 + b.clients as u32 % 4,
        };
        let built = wl.build(clients, n, &opts, input.seed);
        assert_eq!(built.limits.duration_ns, Some(run_ns), "the built-in ignored --duration");
        // A built-in's own objects are mutexes at most (sysbench's start
        // mutex); the generated tasks' come after them.
        let own = &built.instance.sync;
        assert!(own.conds == 0 && own.sems == 0 && own.barriers.is_empty(), "{own:?}");
        builtin_mutexes = own.mutexes;
        tasks = built.instance.tasks;
        finish = built.instance.finish;
    }
    let defs: Vec<GenTask> = input
        .generated
        .iter()
        .take(MAX_GEN_TASKS)
        .map(|t| GenTask { ops: t.ops.iter().take(MAX_GEN_OPS).cloned().collect(), ..t.clone() })
        .collect();
    if !defs.is_empty() {
        let offset = tasks.len();
        let shared = Rc::new(Gen {
            offset,
            nr_cpus: n,
            forks_left: Cell::new(MAX_FORKS),
            peers: (offset..offset + defs.len()).collect(),
            sockets: input.clock & 32 != 0,
            mutex_base: builtin_mutexes,
            defs,
        });
        for (i, d) in shared.defs.iter().enumerate() {
            tasks.push(TaskSpec {
                name: format!("gen{i}"),
                program: Box::new(GenProg { shared: shared.clone(), def: i, pc: 0, last_child: None }),
                params: shared.params(d),
                cpu: d.cpu as usize % n,
                ws_kb: d.ws_kb as u32 * 4,
                side: None,
            });
        }
    }
    if tasks.is_empty() {
        return;
    }
    let budget = StepBudget::new(STEP_BUDGET);
    budget.wrap_all(&mut tasks);

    // Run.
    let irqs = irq_loads(input.ms >> 2, n);
    let changes = changes(&input, config, &domains, &irqs);
    if debug {
        eprintln!("changes accepted: {changes:?}");
    }
    let setup = RunSetup {
        host: &host,
        costs: &costs,
        config,
        domains,
        seed: input.seed,
        limits: Limits::new(Some(run_ns), warmup_ns, MAX_SIM_NS),
        trace: false,
        instruments: Instruments {
            clock_offset: match input.clock % 4 {
                0 | 1 => 0,
                // Just below 2^64: the scheduler's clock wraps during the run.
                2 => u64::MAX - (input.seed % (2 * run_ns)),
                _ => input.seed,
            },
            watch: input.clock & 4 != 0,
            one_to_n_waker: (input.clock & 8 != 0)
                .then(|| if input.builtin.is_some() { "pgbench" } else { "gen0" }.into()),
        },
        // With sockets, the smallest send buffer (SOCK_MIN_SNDBUF: five
        // 100-byte skbs) or unbounded ones, so that writers block often;
        // select()'s pass a window wakeups can race, or not (a seed bit);
        // TCP readers in recv woken from the prequeue, or sync (another).
        sockets: Sockets {
            write_space_wakeups: input.clock & 32 != 0,
            sndbuf: if input.clock & 64 != 0 {
                2_048
            } else if input.clock & 128 != 0 {
                0
            } else {
                engine::SK_WMEM_MAX
            },
            poll_window: (input.seed >> 7) & 1 == 0,
            tcp_low_latency: (input.seed >> 8) & 1 != 0,
        },
        changes,
        irqs,
        slow: Vec::new(),
        domain_build,
    };
    let sync = engine::SyncObjects {
        conds: NR_CONDS,
        mutexes: builtin_mutexes + NR_MUTEXES,
        sems: NR_SEMS,
        barriers: BARRIER_USERS.to_vec(),
    };
    let inst = engine::Instance { tasks, finish, sync };
    let r = engine::run(&setup, inst);
    if debug {
        let summary = r.as_ref().map(|o| (o.end_ns, o.events, o.units, o.switches, o.tasks.len(), &o.counters));
        eprintln!("run (end_ns, events, units, switches, tasks, counters): {summary:?}; steps left {}", budget.left());
    }
    let out = match r {
        Ok(out) => out,
        Err(e) => panic!("{e}"),
    };
    assert!(out.end_ns <= run_ns, "ran to {} past the {run_ns} ns end", out.end_ns);
    for (c, &busy) in out.cpu_busy_ns.iter().enumerate() {
        assert!(busy <= out.end_ns, "CPU {c} busy {busy} ns in a {} ns run", out.end_ns);
    }
    // The phases between changes tile the measured run.
    if !out.phases.is_empty() {
        assert_eq!(out.phases.iter().map(|p| p.units).sum::<u64>(), out.units, "phase units");
        assert_eq!(out.phases.last().map(|p| p.end_ns), Some(out.end_ns), "last phase end");
        for w in out.phases.windows(2) {
            // In order, never overlapping (a phase inside the warm-up is
            // measured from its end).
            assert!(w[0].end_ns <= w[1].start_ns, "phases out of order: {:?}", out.phases);
        }
        assert!(out.phases.iter().all(|p| p.start_ns <= p.end_ns), "{:?}", out.phases);
    }
    // The probe measures stretches of engine time within the run.
    let p = &out.probe;
    for (what, ns) in [
        ("max_wait_ns", p.max_wait_ns),
        ("worst_idle_gap_ns", p.worst_idle_gap_ns),
        ("one_to_n_streak_ns", p.one_to_n_streak_ns),
    ] {
        assert!(ns <= out.end_ns, "probe {what} = {ns} in a {} ns run", out.end_ns);
    }
});
