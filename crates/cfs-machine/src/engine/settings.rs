//! Settings written into a running simulation (`--switch`): what each
//! one writes to the scheduler (or, for a policy, nice level or CPUs, to the tasks),
//! its text and JSON forms, and the throughput phases the run is cut into
//! at each change.

use crate::faults::{IrqLoad, Slowdown};
use crate::program::Side;
use cfs_core::features::FeatureError;
use cfs_core::{Features, Patch, Policy, SchedError, Scheduler, SettingError};
use cfs_topology::{CpuMask, DomainLevel, SdFlags};
use std::fmt;

/// A setting written on the running scheduler (cfs-core's `sysctl`
/// module), as `echo … > /proc/sys/kernel/sched_*` would be mid-run, or
/// on its running tasks, as `chrt -p`, `renice` and `taskset -p` would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `sched_features`: a numeric mask (`863`, `0x35f`) or debugfs-style
    /// names applied to the value current at that moment
    /// (`NO_SYNC_WAKEUPS`).
    Features(String),
    /// A `sched_*` tunable by its `/proc` name.
    Tunable(String, i64),
    /// Flags of every domain at a level: set, then clear (nothing on a
    /// host without that level, as with `--sd-flags`).
    DomainFlags(DomainLevel, SdFlags, SdFlags),
    /// A seed patch switched on (`true`) or off. One that edits the domain
    /// initialisers ([`Patch::domain_flags`]) also has the engine rebuild
    /// the domains as the kernel now built would
    /// (`Scheduler::arch_reinit_sched_domains`): levels appear or go as at
    /// boot with or without it, and flags written by an earlier
    /// [`Setting::DomainFlags`] are lost with the old domains, as on a
    /// hotplug rebuild.
    Patch(Patch, bool),
    /// `chrt -p` on every live task of a workload side (every live task
    /// when `None`). This one is the tasks', not the scheduler's: it names
    /// tasks, which only the engine knows, so [`Setting::apply`] leaves it
    /// to the engine.
    Policy(Option<Side>, Policy),
    /// `taskset -p` on every live task of a side (every live task when
    /// `None`): a task running or queued on a CPU outside the mask moves, a
    /// sleeping one wakes from inside it. Like [`Setting::Policy`], written
    /// by the engine.
    Affinity(Option<Side>, CpuMask),
    /// `renice -n N -p` on every live task of a side (every live task when
    /// `None`): `set_user_nice`, which reweights a queued or running task
    /// where it is. A nice level in -20..=19. Like [`Setting::Policy`],
    /// written by the engine.
    Nice(Option<Side>, i32),
    /// An interrupt load that starts now ([`crate::faults::IrqLoad`]),
    /// beside any already raising. Written by the engine.
    Irq(IrqLoad),
    /// Every interrupt load stops, `--irq`'s and those started before.
    /// Written by the engine.
    NoIrq,
    /// CPUs that run at another speed from now on
    /// ([`crate::faults::Slowdown`]; `speed=100%` restores them). Written
    /// by the engine.
    Slow(Slowdown),
    /// The CPU goes down (`echo 0 > /sys/devices/system/cpu/cpuN/online`):
    /// its task is preempted, every task on it moves off, and the domains
    /// are rebuilt without it (cfs-core's `hotplug`). Written by the
    /// engine, which also builds the new domains.
    Offline(usize),
    /// `echo N > /sys/devices/system/cpu/sched_mc_power_savings` (or,
    /// with `smt`, `sched_smt_power_savings`): the knob takes the level and
    /// the domains are rebuilt with it (`sched_power_savings_store` →
    /// `arch_reinit_sched_domains`, bce7f793 sched.c:7397-7428), as
    /// cfs-topology's `PowerSavings` builds them. Written by the engine.
    PowerSavings {
        /// The SMT knob rather than the MC one.
        smt: bool,
        /// The level written.
        level: u8,
    },
    /// The CPU comes back up, idle, and the domains are rebuilt with it.
    /// Written by the engine.
    Online(usize),
    /// `echo N > /proc/sys/net/ipv4/tcp_low_latency`
    /// ([`super::Sockets::tcp_low_latency`]): on, loopback TCP wakeups of
    /// a reader blocked in recv are sync from the next write on; off, for
    /// readers that block after it (one asleep since before installed no
    /// `ucopy.task`). Written by the engine.
    TcpLowLatency(bool),
}

/// A [`Setting`] written at a simulated time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// When, ns from the start of the run.
    pub at_ns: u64,
    /// What.
    pub setting: Setting,
}

impl Setting {
    /// Writes the setting to `s` at its next decision.
    pub fn apply<O: cfs_core::Observer>(&self, s: &mut Scheduler<O>) -> Result<(), SchedError> {
        match self {
            Setting::Features(text) => {
                let f = features_from_text(s.config().features, text)
                    .map_err(|e| SchedError::Setting(SettingError::Features(e)))?;
                s.set_features_mask(f.mask())
            }
            Setting::Tunable(name, v) => s.set_tunable(name, *v),
            // As with --sd-flags at boot, a level this host does not build
            // (CPU on a NUMA Nehalem, NODE on a Q6600) is skipped, so one
            // list serves every host.
            Setting::DomainFlags(level, set, clear) => match s.set_domain_flags(*level, *set, *clear) {
                Err(SchedError::Setting(SettingError::NoSuchLevel(_))) => Ok(()),
                r => r.map(|_| ()),
            },
            Setting::Patch(p, on) => s.set_patch(*p, *on),
            Setting::Policy(..)
            | Setting::Affinity(..)
            | Setting::Nice(..)
            | Setting::Irq(_)
            | Setting::NoIrq
            | Setting::Slow(_)
            | Setting::Offline(_)
            | Setting::Online(_)
            | Setting::PowerSavings { .. }
            | Setting::TcpLowLatency(_) => Ok(()),
        }
    }
}

/// The `--switch` key (and boot flag) that pins one side.
fn pin_key(side: Side) -> &'static str {
    match side {
        Side::Client => "pin-client",
        Side::Server => "pin-backends",
    }
}

/// `sched_features` as text, as written to `/proc` (a numeric mask of
/// `current`'s table: `863`, `0x35f`) or to debugfs (names applied to
/// `current`: `NO_SYNC_WAKEUPS WAKEUP_PREEMPT`).
pub fn features_from_text(current: Features, text: &str) -> Result<Features, FeatureError> {
    let t = text.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => t.parse::<u32>().ok(),
    };
    match mask {
        Some(m) => Features::from_mask(current.table(), m),
        None => current.apply_names(t),
    }
}

impl fmt::Display for Setting {
    /// The `--switch` form: `features=863`, `set=NAME=VALUE`,
    /// `sd-flags=MC:+SD_X-SD_Y`, `patch=waker`, `no-patch=waker`,
    /// `policy=batch`, `client-policy=batch`, `server-policy=batch`,
    /// `affinity=0-3`, `pin-client=0`, `pin-backends=1-3`, `nice=5`,
    /// `client-nice=-5`, `server-nice=5`, `irq=cpus=0;every=1ms;takes=50us`,
    /// `irq=off`, `slow=cpus=1;speed=50%` (a fault's own commas become `;`,
    /// since `--switch` splits its items at commas).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Setting::Features(m) => write!(f, "features={m}"),
            Setting::Tunable(n, v) => write!(f, "set={n}={v}"),
            Setting::DomainFlags(level, set, clear) => {
                write!(f, "sd-flags={}:", level.name())?;
                for n in set.names() {
                    write!(f, "+{n}")?;
                }
                for n in clear.names() {
                    write!(f, "-{n}")?;
                }
                Ok(())
            }
            Setting::Patch(p, true) => write!(f, "patch={}", p.name()),
            Setting::Patch(p, false) => write!(f, "no-patch={}", p.name()),
            Setting::Policy(None, p) => write!(f, "policy={}", p.name()),
            Setting::Policy(Some(side), p) => write!(f, "{}-policy={}", side.name(), p.name()),
            Setting::Affinity(None, m) => write!(f, "affinity={m}"),
            Setting::Affinity(Some(side), m) => write!(f, "{}={m}", pin_key(*side)),
            Setting::Nice(None, n) => write!(f, "nice={n}"),
            Setting::Nice(Some(side), n) => write!(f, "{}-nice={n}", side.name()),
            Setting::Irq(load) => write!(f, "irq={}", load.to_string().replace(',', ";")),
            Setting::NoIrq => f.write_str("irq=off"),
            Setting::Slow(x) => write!(f, "slow={}", x.to_string().replace(',', ";")),
            Setting::Offline(c) => write!(f, "offline={c}"),
            Setting::Online(c) => write!(f, "online={c}"),
            Setting::TcpLowLatency(on) => write!(f, "set=tcp_low_latency={}", u8::from(*on)),
            Setting::PowerSavings { smt, level } => write!(f, "set={}={level}", cfs_topology::PowerSavings::file(*smt)),
        }
    }
}

impl Change {
    /// The change as JSON: `{"at_s": 1.0, "features": "863"}`,
    /// `{"at_s": 1.0, "tunable": NAME, "value": V}`, `{"at_s": 1.0, "level":
    /// "MC", "set": [FLAGS], "clear": [FLAGS]}`, `{"at_s": 1.0, "patch":
    /// NAME, "on": true}`, `{"at_s": 1.0, "policy": "batch", "side":
    /// "all" | "client" | "server"}`, `{"at_s": 1.0, "cpus": "1-3", "side":
    /// …}`, `{"at_s": 1.0, "nice": 5, "side": …}`, `{"at_s": 1.0, "irq":
    /// "cpus=0,every=1ms,takes=50us"}`, `{"at_s": 1.0, "irq": null}` (every
    /// load stops), `{"at_s": 1.0, "slow": "cpus=1,speed=50%"}`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let at_s = self.at_ns as f64 / 1e9;
        match &self.setting {
            Setting::Features(f) => json!({"at_s": at_s, "features": f}),
            Setting::Tunable(n, v) => json!({"at_s": at_s, "tunable": n, "value": v}),
            Setting::DomainFlags(level, set, clear) => json!({
                "at_s": at_s,
                "level": level.name(),
                "set": set.names().collect::<Vec<_>>(),
                "clear": clear.names().collect::<Vec<_>>(),
            }),
            Setting::Patch(p, on) => json!({"at_s": at_s, "patch": p.name(), "on": on}),
            Setting::Policy(side, p) => {
                json!({"at_s": at_s, "policy": p.name(), "side": side.map_or("all", Side::name)})
            }
            Setting::Affinity(side, m) => {
                json!({"at_s": at_s, "cpus": m.to_string(), "side": side.map_or("all", Side::name)})
            }
            Setting::Nice(side, n) => json!({"at_s": at_s, "nice": n, "side": side.map_or("all", Side::name)}),
            Setting::Irq(load) => json!({"at_s": at_s, "irq": load.to_string()}),
            Setting::NoIrq => json!({"at_s": at_s, "irq": null}),
            Setting::Slow(x) => json!({"at_s": at_s, "slow": x.to_string()}),
            Setting::Offline(c) => json!({"at_s": at_s, "offline": c}),
            Setting::Online(c) => json!({"at_s": at_s, "online": c}),
            Setting::TcpLowLatency(on) => json!({"at_s": at_s, "tunable": "tcp_low_latency", "value": u8::from(*on)}),
            Setting::PowerSavings { smt, level } => {
                json!({"at_s": at_s, "tunable": cfs_topology::PowerSavings::file(*smt), "value": level})
            }
        }
    }
}

/// Throughput bookkeeping between two setting changes: the run is cut into
/// phases at each distinct change time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Start of the phase's measured part, ns (a phase that starts within
    /// the warm-up is measured from its end).
    pub start_ns: u64,
    /// End, ns (the next change, or the end of the run).
    pub end_ns: u64,
    /// Progress units counted within it.
    pub units: u64,
    /// Runqueue waits that ended within it, over all tasks: their total,
    /// ns, and their number (schedstat `wait_sum` / `wait_count` deltas,
    /// from the phase's change time, warm-up included).
    pub wait_sum_ns: u64,
    /// See `wait_sum_ns`.
    pub wait_count: u64,
}
