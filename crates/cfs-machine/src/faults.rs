//! Fault injection: disturbances the machine adds to a run that no
//! workload asked for, the way a real box's devices do.
//!
//! The one kind so far is **interrupt load** ([`IrqLoad`]): handlers that
//! take CPU time from whatever runs on some CPUs, periodically or at
//! random (Poisson) instants: a NIC's interrupts and softirqs steered to
//! CPU 0, a storage controller, a noisy timer. It asks how a scheduling
//! result depends on a CPU that is not quite free, which the seed
//! experiment's pile on one CPU is sensitive to.
//!
//! What the kernels modelled do with that time (2.6.25-2.6.32 have no
//! IRQ_TIME_ACCOUNTING, which came with b52bfee445d in 2.6.37): `update_curr` charges the
//! whole wall time since `exec_start` to the task that was running, so
//! a handler's time counts in that task's vruntime and slice, and the
//! task's own work finishes that much later. The engine does the same:
//! the handler's time is added to the running task's stretch of work, and
//! the return from the handler is a preemption point (as a tick's is).
//! An idle CPU runs the handler without waking anything; its C-state exit
//! and the time it is busy are not modelled (nothing waits for it).
//!
//! Arrivals come from their own random stream, seeded from the run's seed,
//! so a run without interrupt load draws exactly what it did before this
//! existed, and one with it is as reproducible as any other.

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
    pub fn new(cpus: CpuMask, interval_ns: u64, len_ns: u64, random: bool) -> Result<IrqLoad, IrqLoadError> {
        let load = IrqLoad { cpus, interval_ns, len_ns, random };
        load.check().map_err(|why| IrqLoadError(format!("interrupt load {load}: {why}")))?;
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

/// An interrupt-load text that does not describe one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrqLoadError(pub String);

impl fmt::Display for IrqLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IrqLoadError {}

impl FromStr for IrqLoad {
    type Err = IrqLoadError;

    /// `cpus=LIST,every=T,takes=T` or `cpus=LIST,mean=T,takes=T`, in any
    /// order; each key once. `;` separates as `,` does (a `--config`
    /// column's `irq=` item uses it, its own items being split at commas).
    fn from_str(s: &str) -> Result<IrqLoad, IrqLoadError> {
        let err = |why: String| IrqLoadError(format!("interrupt load {s:?}: {why}"));
        const KEYS: [&str; 4] = ["cpus", "every", "mean", "takes"];
        let mut got: [Option<String>; 4] = Default::default();
        let mut last = None;
        for item in s.split([',', ';']).map(str::trim) {
            let Some((k, v)) = item.split_once('=') else {
                // A CPU list has commas of its own: `cpus=0,2` goes on
                // with items that are only numbers or ranges.
                let cpu_item = !item.is_empty() && item.chars().all(|c| c.is_ascii_digit() || c == '-');
                match (&mut got[0], last) {
                    (Some(list), Some(0)) if cpu_item => {
                        list.push(',');
                        list.push_str(item);
                        continue;
                    }
                    _ => return Err(err(format!("{item:?} is not KEY=VALUE"))),
                }
            };
            let k = k.trim();
            let Some(i) = KEYS.iter().position(|&x| x == k) else {
                return Err(err(format!("unknown key {k:?} (known: {})", KEYS.join(", "))));
            };
            if got[i].is_some() {
                return Err(err(format!("{k} is given twice")));
            }
            got[i] = Some(v.trim().to_string());
            last = Some(i);
        }
        let [cpus, every, mean, takes] = got;
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

impl fmt::Display for IrqLoad {
    /// The text [`IrqLoad::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gap = if self.random { "mean" } else { "every" };
        write!(f, "cpus={},{gap}={},takes={}", self.cpus, fmt_ns(self.interval_ns), fmt_ns(self.len_ns))
    }
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
}
