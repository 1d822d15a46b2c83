//! Fault injection: disturbances the machine adds to a run that no
//! workload asked for, the way a real box's devices do.
//!
//! Two kinds:
//!
//! - **Interrupt load** ([`IrqLoad`], `--irq`): handlers that take CPU
//!   time from whatever runs on some CPUs, periodically or at random
//!   (Poisson) instants: a NIC's interrupts and softirqs steered to CPU 0,
//!   a storage controller, a noisy timer. It asks how a scheduling result
//!   depends on a CPU that is not quite free, which the seed experiment's
//!   pile on one CPU is sensitive to.
//! - **Slowed CPUs** ([`Slowdown`], `--slow`): CPUs that get through their
//!   work at a fraction of their speed: a Core 2 under thermal clock
//!   modulation, a vCPU whose host steals cycles. Everything a task does
//!   there takes longer; the scheduler is not told (but for 2.6.32 with
//!   ARCH_POWER on, below).
//!
//! Either can also start or stop mid-run (`--switch 1s:irq=...`,
//! `irq=off`, `slow=...`), so a table shows the throughput before and
//! while it acts.
//!
//! # Interrupt load
//!
//! What the kernels modelled do with that time (2.6.25-2.6.32 have no
//! IRQ_TIME_ACCOUNTING, which came with b52bfee445d in 2.6.37): `update_curr` charges the
//! whole wall time since `exec_start` to the task that was running, so
//! a handler's time counts in that task's vruntime and slice, and the
//! task's own work finishes that much later. The engine does the same:
//! the handler's time is added to the running task's stretch of work, and
//! the return from the handler is a preemption point (as a tick's is).
//! An idle CPU runs the handler without waking anything, and its C-state
//! exit is not modelled; but it is busy until the handler returns, with
//! interrupts off, so a task woken onto it meanwhile starts only then
//! (the reschedule waits for the handler's return).
//!
//! Arrivals come from their own random stream, seeded from the run's seed,
//! so a run without interrupt load draws exactly what it did before this
//! existed, and one with it is as reproducible as any other.
//!
//! Each CPU a load names is an interrupt source steered to that CPU. When
//! CPU hotplug takes one down, its sources move as the kernel's
//! `fixup_irqs` moves them, to the first online CPU, and stay there after
//! it comes back ([`IrqRoutes`]).
//!
//! # Slowed CPUs
//!
//! A slowed CPU stretches every stretch of work run on it by 1 / speed:
//! the task's own computation, the context switch and cache refill it
//! pays there, the scheduler's work charged to it and the interrupt
//! handlers it takes. Clock modulation (the Core 2's TM1, ACPI T-states)
//! gates the whole core's clock for part of each period, so a memory
//! stall stretches with the rest, and a stolen vCPU loses whole slices of
//! time; one factor for all of it is what both do.
//!
//! The kernels modelled see none of it by default. `update_curr` charges
//! wall time, so a task on a half-speed CPU accrues vruntime as fast as
//! one at full speed and does half the work for it, and the balancer
//! compares runqueue weights with every CPU's `cpu_power` at
//! SCHED_LOAD_SCALE (steal-time accounting came with 3.1). A pile on a
//! slowed CPU therefore stays there and runs slower, which is the
//! question this fault asks. The exception is 2.6.32 with its ARCH_POWER
//! feature on (off by default): on a host whose CPUs have APERF/MPERF
//! (the Intel ones here; [`crate::engine::has_aperf_mperf`]) the engine
//! tells the scheduler the clock ratio those counters would measure
//! ([`crate::engine::aperf_mperf_ratio`]), and 2.6.32's balancer scales
//! the CPU's power by it (cfs-core's `cpu_power` module).
//!
//! A slowdown touches no random stream: with every CPU at full speed a
//! run is exactly what it was before slowdowns existed.

use crate::dist::{fmt_ns, parse_duration};
use cfs_topology::CpuMask;
use std::fmt;
use std::str::FromStr;

/// Interrupt handlers on some CPUs: every `interval_ns`, or at random
/// instants that far apart on average, each taking `len_ns` of the CPU.
/// Written `cpus=0,every=1ms,takes=50us` (periodic) or
/// `cpus=0-1,mean=250us,takes=10us` (Poisson arrivals).
///
/// Only [`IrqLoad::new`] (and parsing, which calls it) makes one, so every
/// load has a CPU, at most one interrupt every [`MIN_INTERVAL_NS`] and
/// handlers shorter than the time between them: a run never spends its
/// time on interrupts alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrqLoad {
    cpus: CpuMask,
    interval_ns: u64,
    len_ns: u64,
    random: bool,
}

impl IrqLoad {
    /// A load on `cpus` (each gets its own arrivals): one handler of
    /// `len_ns` (not scaled by the host's clock: the figure is what the
    /// handler takes on this machine) every `interval_ns`, or, when
    /// `random`, at exponentially distributed gaps with that mean (Poisson
    /// arrivals). An error unless `cpus` has a CPU, `interval_ns` is at
    /// least [`MIN_INTERVAL_NS`] and `0 < len_ns < interval_ns`.
    pub fn new(cpus: CpuMask, interval_ns: u64, len_ns: u64, random: bool) -> Result<IrqLoad, FaultError> {
        let load = IrqLoad { cpus, interval_ns, len_ns, random };
        load.check().map_err(|why| FaultError(format!("interrupt load {load}: {why}")))?;
        Ok(load)
    }

    /// What [`IrqLoad::new`] refuses, as the reason.
    fn check(&self) -> Result<(), String> {
        if self.cpus.is_empty() {
            return Err("no CPU in cpus=".into());
        }
        if self.interval_ns < MIN_INTERVAL_NS {
            return Err(format!("interrupts at most every 10us on a CPU ({} is less)", fmt_ns(self.interval_ns)));
        }
        if self.len_ns == 0 {
            return Err("takes= must be more than 0".into());
        }
        if self.len_ns >= self.interval_ns {
            return Err(format!(
                "each handler ({}) must take less than the time between them ({})",
                fmt_ns(self.len_ns),
                fmt_ns(self.interval_ns)
            ));
        }
        Ok(())
    }

    /// The CPUs that take the interrupts.
    pub fn cpus(&self) -> &CpuMask {
        &self.cpus
    }

    /// The time between interrupts on each CPU, or its mean, ns.
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// Each handler's CPU time, ns.
    pub fn len_ns(&self) -> u64 {
        self.len_ns
    }

    /// Whether the gaps are exponentially distributed (Poisson arrivals)
    /// rather than a fixed period.
    pub fn random(&self) -> bool {
        self.random
    }

    /// The share of each of its CPUs the handlers take: `len / interval`.
    pub fn share(&self) -> f64 {
        self.len_ns as f64 / self.interval_ns as f64
    }

    /// The first CPU of `cpus` that `nr_cpus` CPUs do not have.
    pub fn missing_cpu(&self, nr_cpus: usize) -> Option<usize> {
        self.cpus.iter().find(|&c| c >= nr_cpus)
    }
}

/// The shortest time between interrupts on a CPU, ns: 10 µs, 100,000 a
/// second, more than a NIC with interrupt coalescing raises. Every one is
/// two engine events, so the bound also keeps a run's cost near what its
/// workload costs (a 1 µs load on 64 CPUs would be 128 million events a
/// simulated second).
pub const MIN_INTERVAL_NS: u64 = 10_000;

/// A fault's text (or values) that does not describe one, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultError(pub String);

impl fmt::Display for FaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FaultError {}

impl FromStr for IrqLoad {
    type Err = FaultError;

    /// `cpus=LIST,every=T,takes=T` or `cpus=LIST,mean=T,takes=T`, in any
    /// order; each key once. `;` separates as `,` does (a `--config`
    /// column's `irq=` item uses it, its own items being split at commas).
    fn from_str(s: &str) -> Result<IrqLoad, FaultError> {
        let err = |why: String| FaultError(format!("interrupt load {s:?}: {why}"));
        let [cpus, every, mean, takes] = fault_keys(s, &["cpus", "every", "mean", "takes"]).map_err(err)?;
        let cpus = cpus.ok_or_else(|| err("no cpus= (which CPUs take the interrupts)".into()))?;
        let cpus = CpuMask::parse_list(&cpus).map_err(|e| err(format!("bad CPU list {cpus:?}: {e}")))?;
        let (gap, random) = match (every.as_deref(), mean.as_deref()) {
            (Some(g), None) => (g, false),
            (None, Some(g)) => (g, true),
            (Some(_), Some(_)) => return Err(err("give every= (periodic) or mean= (Poisson), not both".into())),
            (None, None) => return Err(err("no every= (period) or mean= (mean gap of Poisson arrivals)".into())),
        };
        let interval_ns = parse_duration(gap).map_err(|e| err(e.to_string()))?;
        let takes = takes.ok_or_else(|| err("no takes= (each handler's CPU time)".into()))?;
        let len_ns = parse_duration(&takes).map_err(|e| err(e.to_string()))?;
        let load = IrqLoad { cpus, interval_ns, len_ns, random };
        load.check().map_err(err)?;
        Ok(load)
    }
}

/// Splits a fault's text into the values of `KEYS`, in any order, each at
/// most once: items `KEY=VALUE` separated by `,` or `;` (a `--config`
/// column's item uses `;`, its own items being split at commas). A CPU list
/// has commas of its own: after `cpus=0`, items that are only numbers or
/// ranges (`2`, `4-5`) continue it.
fn fault_keys<const N: usize>(s: &str, keys: &[&str; N]) -> Result<[Option<String>; N], String> {
    let mut got: [Option<String>; N] = std::array::from_fn(|_| None);
    let cpus = keys.iter().position(|&k| k == "cpus");
    let mut last = None;
    for item in s.split([',', ';']).map(str::trim) {
        let Some((k, v)) = item.split_once('=') else {
            let cpu_item = !item.is_empty() && item.chars().all(|c| c.is_ascii_digit() || c == '-');
            match (cpus, last) {
                (Some(i), Some(l)) if i == l && cpu_item => {
                    if let Some(list) = &mut got[i] {
                        list.push(',');
                        list.push_str(item);
                    }
                    continue;
                }
                _ => return Err(format!("{item:?} is not KEY=VALUE")),
            }
        };
        let k = k.trim();
        let Some(i) = keys.iter().position(|&x| x == k) else {
            return Err(format!("unknown key {k:?} (known: {})", keys.join(", ")));
        };
        if got[i].is_some() {
            return Err(format!("{k} is given twice"));
        }
        got[i] = Some(v.trim().to_string());
        last = Some(i);
    }
    Ok(got)
}

impl fmt::Display for IrqLoad {
    /// The text [`IrqLoad::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gap = if self.random { "mean" } else { "every" };
        write!(f, "cpus={},{gap}={},takes={}", self.cpus, fmt_ns(self.interval_ns), fmt_ns(self.len_ns))
    }
}

/// Some CPUs running at a fraction of their speed, in thousandths
/// (`speed=50%` is 500, `speed=100%` full speed again). Written
/// `cpus=1,speed=50%` (or `speed=0.5`).
///
/// Only [`Slowdown::new`] (and parsing, which calls it) makes one, so
/// every slowdown names a CPU and a speed above 0 and at most full: a CPU
/// that never finishes its work, or one faster than the host's clock,
/// is not a fault (a faster host is a cost model's `clock_factor`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slowdown {
    cpus: CpuMask,
    permille: u32,
}

/// A CPU's full speed, in the thousandths [`Slowdown`] counts in.
pub const FULL_SPEED: u32 = 1000;

/// Why no change (and no `topology --online`) may take CPU 0 down.
pub const CPU0_STAYS_UP: &str = "CPU 0 cannot go offline (x86 kernels of this era give the boot CPU no online file)";

impl Slowdown {
    /// `cpus` running at `permille` thousandths of full speed (1..=1000).
    pub fn new(cpus: CpuMask, permille: u32) -> Result<Slowdown, FaultError> {
        let s = Slowdown { cpus, permille };
        s.check().map_err(|why| FaultError(format!("slowdown {s}: {why}")))?;
        Ok(s)
    }

    fn check(&self) -> Result<(), String> {
        if self.cpus.is_empty() {
            return Err("no CPU in cpus=".into());
        }
        if !(1..=FULL_SPEED).contains(&self.permille) {
            return Err("speed= must be above 0% and at most 100% (in steps of 0.1%)".into());
        }
        Ok(())
    }

    /// The CPUs it slows.
    pub fn cpus(&self) -> &CpuMask {
        &self.cpus
    }

    /// Their speed, thousandths of full speed.
    pub fn permille(&self) -> u32 {
        self.permille
    }

    /// The first CPU of `cpus` that `nr_cpus` CPUs do not have.
    pub fn missing_cpu(&self, nr_cpus: usize) -> Option<usize> {
        self.cpus.iter().find(|&c| c >= nr_cpus)
    }
}

/// Reads a speed as thousandths of full speed: `50%`, `12.5%` or `0.5`,
/// to the nearest 0.1%.
fn parse_speed(v: &str) -> Result<u32, String> {
    let t = v.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(p) => (p.trim(), 10.0),
        None => (t, 1000.0),
    };
    let x = num
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("bad speed {v:?} (a percentage like 50% or a fraction like 0.5)"))?;
    // `as` saturates: a speed out of range stays out of range (below 1 or
    // above FULL_SPEED), and `Slowdown::check` refuses it.
    Ok((x * scale).round() as u32)
}

impl FromStr for Slowdown {
    type Err = FaultError;

    /// `cpus=LIST,speed=S`, in either order; `;` separates as `,` does.
    fn from_str(s: &str) -> Result<Slowdown, FaultError> {
        let err = |why: String| FaultError(format!("slowdown {s:?}: {why}"));
        let [cpus, speed] = fault_keys(s, &["cpus", "speed"]).map_err(err)?;
        let cpus = cpus.ok_or_else(|| err("no cpus= (which CPUs run slow)".into()))?;
        let cpus = CpuMask::parse_list(&cpus).map_err(|e| err(format!("bad CPU list {cpus:?}: {e}")))?;
        let speed = speed.ok_or_else(|| err("no speed= (e.g. speed=50%)".into()))?;
        let s = Slowdown { cpus, permille: parse_speed(&speed).map_err(err)? };
        s.check().map_err(err)?;
        Ok(s)
    }
}

impl fmt::Display for Slowdown {
    /// The text [`Slowdown::from_str`] reads back: `cpus=1,speed=50%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cpus={},speed={}", self.cpus, fmt_speed(self.permille))
    }
}

/// A speed in thousandths as the text `--slow` takes: `50%`, `87.5%`.
pub fn fmt_speed(permille: u32) -> String {
    let (whole, tenth) = (permille / 10, permille % 10);
    if tenth == 0 { format!("{whole}%") } else { format!("{whole}.{tenth}%") }
}

/// Where each interrupt source is delivered, and how CPU hotplug moves it,
/// as x86's `fixup_irqs` does (2.6.26 arch/x86/kernel/irq_64.c:194; the
/// same in 2.6.25 and 2.6.32).
///
/// Every CPU of an [`IrqLoad`] is a source of its own: an IRQ whose
/// smp_affinity is that CPU. A source interrupts the lowest-numbered
/// online CPU of its affinity (x86-64's physflat routing; the flat mode of
/// small machines lets the APIC bus pick among the affinity by lowest
/// priority, which is not modelled). When a CPU goes down, every source
/// whose affinity is not the new online map gets its affinity's online
/// part, or, where nothing of it is left, the whole online map: the
/// kernel's "Broke affinity for irq N". A CPU coming back gets nothing
/// back: a broken affinity stays broken until someone writes
/// /proc/irq/N/smp_affinity again (irqbalance; here a new `irq=` load).
/// A load started on a CPU that is down (the kernel would refuse that
/// smp_affinity write) is held until the CPU is back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IrqRoutes {
    /// Per load, in the order they started: each source's CPU (the one its
    /// load named) and its affinity now.
    sources: Vec<Vec<(usize, CpuMask)>>,
}

impl IrqRoutes {
    /// Routes for a load that starts: each of its CPUs a source steered
    /// to that CPU alone.
    pub fn add(&mut self, load: &IrqLoad) {
        self.sources.push(load.cpus.iter().map(|c| (c, CpuMask::single(c))).collect());
    }

    /// `fixup_irqs(map)`: re-routes every source for the CPUs `online`
    /// after one went down, and returns how many affinities it broke.
    pub fn cpu_down(&mut self, online: &CpuMask) -> usize {
        let mut broken = 0;
        for (_, affinity) in self.sources.iter_mut().flatten() {
            if affinity == online {
                continue;
            }
            let left = affinity.and(online);
            *affinity = if left.is_empty() {
                broken += 1;
                *online
            } else {
                left
            };
        }
        broken
    }

    /// The CPU that load `load`'s source at `cpu` interrupts while the
    /// CPUs for which `online` says yes are up: the first of its affinity.
    /// None while it has nowhere to go, or if the load has no such source.
    pub fn target(&self, load: usize, cpu: usize, online: impl Fn(usize) -> bool) -> Option<usize> {
        let (_, affinity) = self.sources.get(load)?.iter().find(|s| s.0 == cpu)?;
        affinity.iter().find(|&c| online(c))
    }

    /// Every source's target while the CPUs `online` are up, with its load
    /// index, the held ones left out.
    fn targets<'s>(&'s self, online: &'s CpuMask) -> impl Iterator<Item = (usize, usize)> + 's {
        self.sources
            .iter()
            .enumerate()
            .flat_map(move |(i, srcs)| srcs.iter().filter_map(move |(_, a)| a.and(online).first().map(|t| (i, t))))
    }
}

/// A fault as it starts acting on a run, for [`check_cpu_time`]: at boot
/// (`--irq`, `--slow`) or at a change (`--switch`).
#[derive(Clone, Copy, Debug)]
pub enum FaultStep<'a> {
    /// An interrupt load starts.
    Irq(&'a IrqLoad),
    /// Every interrupt load stops.
    NoIrq,
    /// CPUs change speed.
    Slow(&'a Slowdown),
    /// A CPU goes down: its interrupts move ([`IrqRoutes::cpu_down`]).
    Offline(usize),
    /// A CPU comes back (its broken interrupt affinities do not).
    Online(usize),
}

/// Checks that, at every instant of a run, interrupts leave every CPU of
/// `nr_cpus` some time for tasks. `steps` are the faults as they start, each
/// with its time (ns; 0 for `--irq` and `--slow`), in time order; the state
/// after the last step of each instant is what counts. The handlers' share
/// of a CPU (their time over their interval, summed over its loads, and
/// stretched by its speed) must stay below 1. One load is always below 1
/// at full speed ([`IrqLoad::new`]), but two on one CPU may not be, nor one
/// on a slowed CPU (50 µs every 100 µs at 40% speed takes 125 µs of every
/// 100), nor a CPU that a hotplug change hands another CPU's interrupts
/// ([`IrqRoutes`]). Past 1 the handlers queue up for ever and nothing else
/// runs: a livelock a real machine has too, refused here rather than run
/// until the time cap. The error names the CPU, its loads and its speed.
pub fn check_cpu_time<'a>(
    nr_cpus: usize,
    steps: impl IntoIterator<Item = (u64, FaultStep<'a>)>,
) -> Result<(), FaultError> {
    let mut speed = vec![FULL_SPEED; nr_cpus];
    let mut loads: Vec<&IrqLoad> = Vec::new();
    let mut routes = IrqRoutes::default();
    let mut online = CpuMask::first_n(nr_cpus);
    let mut steps = steps.into_iter().peekable();
    while let Some((at, step)) = steps.next() {
        match step {
            FaultStep::Irq(l) => {
                loads.push(l);
                routes.add(l);
            }
            FaultStep::NoIrq => {
                loads.clear();
                routes = IrqRoutes::default();
            }
            FaultStep::Slow(x) => {
                for c in x.cpus.iter().filter(|&c| c < nr_cpus) {
                    speed[c] = x.permille;
                }
            }
            FaultStep::Offline(c) => {
                online.clear(c);
                routes.cpu_down(&online);
            }
            FaultStep::Online(c) => online.set(c),
        }
        if steps.peek().is_some_and(|&(next, _)| next == at) {
            continue;
        }
        for (c, &permille) in speed.iter().enumerate() {
            let on_c: Vec<&IrqLoad> = routes.targets(&online).filter(|&(_, t)| t == c).map(|(i, _)| loads[i]).collect();
            let share: f64 = on_c.iter().map(|l| l.share()).sum::<f64>() * f64::from(FULL_SPEED) / f64::from(permille);
            if share >= 1.0 {
                let named: Vec<String> = on_c.iter().map(|l| l.to_string()).collect();
                return Err(FaultError(format!(
                    "interrupts would take {:.0}% of CPU {c} ({} at {} speed){}: nothing else would ever run there",
                    share * 100.0,
                    named.join(" + "),
                    fmt_speed(permille),
                    if at > 0 { format!(" from {}", fmt_ns(at)) } else { String::new() },
                )));
            }
        }
    }
    Ok(())
}

/// Checks a run's CPU hotplug changes ([`crate::engine::Setting::Offline`]
/// and [`crate::engine::Setting::Online`], in time order) before it starts:
/// each names a CPU of the `nr_cpus`, takes down only a CPU that is up and
/// brings up only one that is down, and never takes down CPU 0, which
/// x86 kernels of this era cannot offline (its sysfs directory has no
/// `online` file: `arch_register_cpu` in arch/x86/kernel/topology.c marks
/// only CPUs other than 0 hotpluggable). So one CPU is always up. An
/// affinity change (`affinity=`, `pin-client=`, `pin-backends=`) must name
/// a CPU that is up when it is written: `sched_setaffinity` refuses a mask
/// with no online CPU (EINVAL).
pub fn check_hotplug(nr_cpus: usize, changes: &[crate::engine::Change]) -> Result<(), FaultError> {
    use crate::engine::Setting;
    let mut online = vec![true; nr_cpus];
    for c in changes {
        let at = format!("{} at {}", c.setting, crate::dist::fmt_ns(c.at_ns));
        let (cpu, up) = match c.setting {
            Setting::Offline(cpu) => (cpu, false),
            Setting::Online(cpu) => (cpu, true),
            Setting::Affinity(_, mask) => {
                if !mask.iter().any(|cpu| online.get(cpu).copied().unwrap_or(false)) {
                    let down: Vec<String> = (0..nr_cpus).filter(|&c| !online[c]).map(|c| c.to_string()).collect();
                    return Err(FaultError(format!(
                        "{at}: no CPU of {mask} is online then (CPU {} down), and sched_setaffinity refuses such a \
                         mask (EINVAL)",
                        down.join(", ")
                    )));
                }
                continue;
            }
            _ => continue,
        };
        let Some(state) = online.get_mut(cpu) else {
            return Err(FaultError(format!("{at}: CPU {cpu} does not exist (the host has {nr_cpus})")));
        };
        if cpu == 0 && !up {
            return Err(FaultError(format!("{at}: {CPU0_STAYS_UP}")));
        }
        if *state == up {
            let now = if up { "online" } else { "offline" };
            return Err(FaultError(format!("{at}: CPU {cpu} is already {now}")));
        }
        *state = up;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn irq(s: &str) -> Result<IrqLoad, String> {
        s.parse::<IrqLoad>().map_err(|e| e.to_string())
    }

    #[test]
    fn reads_periodic_and_poisson_loads_and_writes_them_back() {
        let p = irq("cpus=0,every=1ms,takes=50us").unwrap();
        assert_eq!(p, IrqLoad::new(CpuMask::single(0), 1_000_000, 50_000, false).unwrap());
        // 50 µs of every 1 ms: a twentieth of the CPU.
        assert_eq!(p.share(), 0.05);
        let r = irq(" takes=10us , mean=250us, cpus=1-2 ").unwrap();
        assert_eq!(r.cpus, CpuMask::parse_list("1-2").unwrap());
        assert!(r.random);
        // A list with commas, anywhere.
        let l = irq("every=1ms,takes=1us,cpus=0,2").unwrap();
        assert_eq!(l.cpus, CpuMask::parse_list("0,2").unwrap());
        assert_eq!(irq("cpus=0,2,every=1ms,takes=1us").unwrap(), l);
        assert_eq!(irq("every=1ms;takes=1us;cpus=0,2").unwrap(), l);
        for x in [p, r, l] {
            assert_eq!(irq(&x.to_string()).unwrap(), x, "{x}");
        }
    }

    #[test]
    fn refuses_what_is_not_an_interrupt_load() {
        for (s, why) in [
            ("every=1ms,takes=1us", "no cpus="),
            ("cpus=0,takes=1us", "no every= (period) or mean="),
            ("cpus=0,every=1ms", "no takes="),
            ("cpus=0,every=1ms,mean=1ms,takes=1us", "not both"),
            ("cpus=0,every=1ms,takes=1us,every=2ms", "every is given twice"),
            ("cpus=0,every=1ms,takes=2ms", "must take less than the time between them"),
            ("cpus=0,every=1ms,takes=1ms", "must take less than the time between them"),
            ("cpus=0,every=9us,takes=1ns", "at most every 10us"),
            ("cpus=0,every=1ms,takes=0us", "more than 0"),
            ("cpus=0,every=1,takes=1us", "bad duration"),
            ("cpus=x,every=1ms,takes=1us", "bad CPU list"),
            ("cpus=0,period=1ms,takes=1us", "unknown key \"period\""),
            ("every=1ms,2,takes=1us,cpus=0", "\"2\" is not KEY=VALUE"),
            ("cpus=0,every=1ms,takes=1us,junk", "\"junk\" is not KEY=VALUE"),
        ] {
            let e = irq(s).unwrap_err();
            assert!(e.contains(why), "{s}: {e}");
        }
        // A load made in code is checked the same way: an engine can never
        // be given one that would keep it busy with interrupts alone.
        let new = |cpus: CpuMask, every: u64, takes: u64| IrqLoad::new(cpus, every, takes, false).map_err(|e| e.0);
        assert_eq!(
            new(CpuMask::empty(), 1_000_000, 1_000).unwrap_err(),
            "interrupt load cpus=,every=1ms,takes=1us: no CPU in cpus="
        );
        assert!(new(CpuMask::single(0), 0, 0).unwrap_err().ends_with("at most every 10us on a CPU (0s is less)"));
        assert!(new(CpuMask::single(0), 10_000, 10_000).unwrap_err().contains("must take less"));
        assert!(new(CpuMask::single(1), 10_000, 9_999).is_ok());
    }

    fn slow(s: &str) -> Result<Slowdown, String> {
        s.parse::<Slowdown>().map_err(|e| e.to_string())
    }

    #[test]
    fn reads_slowdowns_in_thousandths_and_writes_them_back() {
        let half = slow("cpus=1,speed=50%").unwrap();
        assert_eq!(half, Slowdown::new(CpuMask::single(1), 500).unwrap());
        // A fraction reads as its percentage: 0.5 = 50% = 500 thousandths.
        assert_eq!(slow("speed=0.5;cpus=1").unwrap(), half);
        // TM1's duty cycles come in 12.5% steps: 875 thousandths.
        let tm1 = slow("cpus=0,2,speed=87.5%").unwrap();
        assert_eq!((tm1.permille(), *tm1.cpus()), (875, CpuMask::parse_list("0,2").unwrap()));
        assert_eq!(tm1.to_string(), "cpus=0,2,speed=87.5%");
        assert_eq!(slow("cpus=3,speed=100%").unwrap().permille(), FULL_SPEED);
        // Ranges continue a CPU list as single CPUs do.
        assert_eq!(*slow("cpus=0,4-5;speed=50%").unwrap().cpus(), CpuMask::parse_list("0,4-5").unwrap());
        for x in [half, tm1] {
            assert_eq!(slow(&x.to_string()).unwrap(), x, "{x}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_slowdown() {
        for (s, why) in [
            ("speed=50%", "no cpus="),
            ("cpus=0", "no speed="),
            ("cpus=0,speed=0%", "above 0%"),
            ("cpus=0,speed=0.04%", "above 0% and at most 100% (in steps of 0.1%)"),
            ("cpus=0,speed=101%", "at most 100%"),
            ("cpus=0,speed=2", "at most 100%"),
            ("cpus=0,speed=-50%", "above 0%"),
            ("cpus=0,speed=fast", "bad speed"),
            ("cpus=0,speed=NaN", "bad speed"),
            ("cpus=0,speed=inf%", "bad speed"),
            ("cpus=0,speed=1e30%", "at most 100%"),
            ("cpus=0,junk,speed=50%", "\"junk\" is not KEY=VALUE"),
            ("cpus=0,,speed=50%", "\"\" is not KEY=VALUE"),
            ("cpus=0,speed=50%,2", "\"2\" is not KEY=VALUE"),
            ("cpus=0,speed=50%,speed=60%", "speed is given twice"),
            ("cpus=0,factor=0.5", "unknown key \"factor\" (known: cpus, speed)"),
            ("cpus=,speed=50%", "no CPU"),
            ("cpus=x,speed=50%", "bad CPU list"),
        ] {
            let e = slow(s).unwrap_err();
            assert!(e.contains(why), "{s}: {e}");
        }
        assert!(Slowdown::new(CpuMask::single(0), 0).unwrap_err().0.contains("above 0%"));
        assert!(Slowdown::new(CpuMask::single(0), 1001).is_err());
        assert!(Slowdown::new(CpuMask::empty(), 500).unwrap_err().0.contains("no CPU"));
    }

    #[test]
    fn interrupts_must_leave_every_cpu_some_time() {
        let (a, b) = (irq("cpus=0-1,every=100us,takes=50us").unwrap(), irq("cpus=1,every=1ms,takes=500us").unwrap());
        let (slow0, slow1) = (slow("cpus=0,speed=40%").unwrap(), slow("cpus=1,speed=60%").unwrap());
        use FaultStep::*;
        let at0 = |steps: &[FaultStep<'_>]| check_cpu_time(4, steps.iter().map(|&s| (0, s))).map_err(|e| e.0);
        // One load at half a CPU is fine; at 40% speed its 50 µs take
        // 125 µs of every 100: refused. CPU 1 with both loads: 50% + 50%.
        assert!(at0(&[Irq(&a)]).is_ok());
        assert_eq!(
            at0(&[Irq(&a), Slow(&slow0)]).unwrap_err(),
            "interrupts would take 125% of CPU 0 (cpus=0-1,every=100us,takes=50us at 40% speed): nothing else would \
             ever run there"
        );
        let e = at0(&[Irq(&a), Irq(&b)]).unwrap_err();
        assert!(e.starts_with("interrupts would take 100% of CPU 1 (cpus=0-1,every=100us,takes=50us + cpus=1,"), "{e}");
        // 50% at 60% speed is 83%: allowed.
        assert!(at0(&[Irq(&a), Slow(&slow1)]).is_ok());
        // What counts is each instant's outcome: stopped at the same
        // instant the loads leave the slowed CPU be; a slowdown that
        // comes later finds them still raising.
        assert!(at0(&[Irq(&a), Slow(&slow0), NoIrq]).is_ok());
        let later = check_cpu_time(4, [(0, Irq(&a)), (1_000_000_000, Slow(&slow0))]).unwrap_err().0;
        assert!(later.contains("at 40% speed) from 1s: nothing else"), "{later}");
        assert!(check_cpu_time(4, [(0, Irq(&a)), (1, NoIrq), (2, Slow(&slow0))]).is_ok());
        // A CPU the host lacks is the caller's to name (the engine's
        // FaultCpu error); here it is passed over.
        let beyond = slow("cpus=3-4,speed=10%").unwrap();
        assert!(at0(&[Irq(&a), Slow(&beyond)]).is_ok());
    }

    /// fixup_irqs on a Q6600 whose CPUs go down and up: a load on CPUs 1
    /// and 3 is two sources, affinity {1} and {3}.
    #[test]
    fn a_cpu_going_down_hands_its_interrupts_to_the_first_online_cpu() {
        let load = irq("cpus=1,3,every=1ms,takes=10us").unwrap();
        let mut r = IrqRoutes::default();
        r.add(&load);
        let up = |m: CpuMask| move |c: usize| m.contains(c);
        let all = CpuMask::first_n(4);
        assert_eq!((r.target(0, 1, up(all)), r.target(0, 3, up(all))), (Some(1), Some(3)));
        // No such source: CPU 2 is not one of the load's, and there is no
        // second load.
        assert_eq!((r.target(0, 2, up(all)), r.target(1, 1, up(all))), (None, None));
        // CPU 3 down: {3} and {0,1,2} do not meet, so the affinity breaks
        // to the whole online map and the source interrupts CPU 0, its
        // first; {1} is untouched.
        let no3 = CpuMask::from_cpus([0, 1, 2]);
        assert_eq!(r.cpu_down(&no3), 1);
        assert_eq!((r.target(0, 1, up(no3)), r.target(0, 3, up(no3))), (Some(1), Some(0)));
        // Back up, CPU 3 gets nothing back: the broken affinity stays.
        assert_eq!(r.target(0, 3, up(all)), Some(0));
        // CPU 1 down too: {1} breaks to {0,2,3}; {0,1,2} keeps {0,2}.
        let no1 = CpuMask::from_cpus([0, 2, 3]);
        assert_eq!(r.cpu_down(&no1), 1);
        assert_eq!(r.sources[0], [(1, no1), (3, CpuMask::from_cpus([0, 2]))]);
        // A source steered to a CPU that is down has nowhere to go until it
        // is back (the kernel refuses such an affinity write).
        let mut held = IrqRoutes::default();
        held.add(&irq("cpus=3,every=1ms,takes=10us").unwrap());
        assert_eq!(held.target(0, 3, up(no3)), None);
        assert_eq!(held.target(0, 3, up(all)), Some(3));
    }

    /// The CPU-time check follows the interrupts a hotplug change moves: a
    /// load at 60% of CPU 3, moved to CPU 0 beside another at 60%, would
    /// take 120% of it.
    #[test]
    fn interrupts_moved_by_hotplug_must_leave_time_too() {
        let (on0, on3) = (irq("cpus=0,every=100us,takes=60us").unwrap(), irq("cpus=3,every=100us,takes=60us").unwrap());
        use FaultStep::*;
        assert!(check_cpu_time(4, [(0, Irq(&on0)), (0, Irq(&on3))]).is_ok());
        let e = check_cpu_time(4, [(0, Irq(&on0)), (0, Irq(&on3)), (5_000_000, Offline(3))]).unwrap_err().0;
        assert_eq!(
            e,
            "interrupts would take 120% of CPU 0 (cpus=0,every=100us,takes=60us + cpus=3,every=100us,takes=60us \
             at 100% speed) from 5ms: nothing else would ever run there"
        );
        // Without the load on CPU 0 the moved one alone is fine, and it
        // stays on CPU 0 after CPU 3 is back, where a new load on CPU 0
        // would now be too much.
        let steps = [(0, Irq(&on3)), (1, Offline(3)), (2, Online(3))];
        assert!(check_cpu_time(4, steps).is_ok());
        assert!(check_cpu_time(4, [steps[0], steps[1], steps[2], (3, Irq(&on0))]).is_err());
    }
}
