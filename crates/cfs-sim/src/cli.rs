//! The command line: argument types (clap) and what each command does.
//! `main.rs` only calls [`main_with`]; everything here returns errors as
//! one-line strings instead of panicking, so every error path is testable.

use crate::calibration;
use crate::costs::{CostModel, CostSetting};
use crate::dist::fmt_ns;
use crate::dist::parse_duration;
use crate::experiment::{
    Plan, Results, RunFailed, SchedSpec, Seeds, check_changes, parse_irq, parse_nice_level, parse_profile, parse_slow,
    parse_sweep, parse_switch,
};
use crate::faults::{IrqLoad, Slowdown};
use crate::names::suggest;
use crate::report;
use crate::workfile::parse_workload;
use crate::workloads::{
    CostedWorkload, DEFAULT_PGBENCH_TRANSACTIONS, MAX_SIM_NS, Policies, SELECTTEST_CLIENTS, Workload, WorkloadOpts,
};
use cfs_core::CpuMask;
use cfs_topology::{Host, PRESET_NAMES, PRESETS};
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// A deterministic simulator of the Linux CFS scheduler (2.6.25-2.6.32) on
/// 2008-era hosts. With no command it runs the seed experiment: pgbench -S
/// on a Q6600 under 2.6.26-rc4 and its fixes (plots in out/seed.svg and
/// out/seed.png unless --plot is given).
#[derive(Debug, Parser)]
#[command(name = "cfs-sim", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to run (default: seed).
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
    /// The seed experiment's options, usable without the `seed` command.
    #[command(flatten)]
    pub seed: SeedArgs,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// The seed experiment: pgbench -S on the Q6600, eight configurations (plots in out/ unless --plot).
    Seed(SeedArgs),
    /// pgbench -S: one client process, N backends over unix sockets.
    Pgbench(BenchArgs),
    /// tbench: N client/server pairs over loopback TCP (MB/s).
    Tbench(BenchArgs),
    /// N CPU-bound tasks (nice levels with --nice).
    Hogs(BenchArgs),
    /// hackbench-style groups of 20 senders and 20 receivers, timed from the kick-off once all are ready
    Messaging(BenchArgs),
    /// VolanoMark-style chat rooms over loopback TCP (one receiver wakes 19 senders).
    Volanomark(BenchArgs),
    /// starve.c: a child signalling its sleeping parent on one CPU.
    Starve(BenchArgs),
    /// sysbench OLTP read-only: N client/server pairs over unix sockets, 16 round trips per transaction.
    #[command(name = "sysbench-oltp")]
    SysbenchOltp(BenchArgs),
    /// Run a workload file (TOML or rt-app JSON).
    ///
    /// The format is documented in crates/cfs-machine/src/workfile/mod.rs
    /// (`cargo doc`: cfs_sim::workfile), with examples in
    /// crates/cfs-sim/workloads/. An rt-app file runs as rt-app runs it:
    /// a main process creates the threads (so fork balancing places them)
    /// and they start together from a barrier, `run` is CPU work and `runtime` wall-clock time, named timers are
    /// shared, condition signals are lost when no one waits, mutexes sleep
    /// and let their unlocker barge, semaphores count, barriers wait for
    /// every user, and a file whose tasks all loop a finite number of
    /// times runs until they end. Unknown keys and events are errors that
    /// name them.
    Run(RunArgs),
    /// Show a host, its sched domains under a profile, and its cost model.
    Topology(TopoArgs),
    /// List every parameter --cost can set, with its value: the host's cost
    /// model and each workload's own costs (after any --cost given).
    Costs(CostsArgs),
    /// List the host presets.
    Hosts(HostsArgs),
    /// Compare the model with the published Q6600 tables (markdown).
    Calibrate(CalArgs),
}

/// Output options shared by the experiment commands.
#[derive(Debug, Clone, Default, Args)]
pub struct OutArgs {
    /// Write every run as CSV (long form); `-` writes it to stdout instead of the table.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write JSON to FILE, or to stdout instead of the table when no FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Plot throughput against clients (.svg or .png): a line through each
    /// configuration's medians, with a bar spanning each cell's runs.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Chrome trace of the first run (open in ui.perfetto.dev).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Print simulated seconds per wall second and events per second.
    #[arg(long)]
    pub stats: bool,
    /// Follow each table cell with its run-to-run spread (± half the range
    /// of its runs, % of the median).
    #[arg(long)]
    pub spread: bool,
    /// Print every column after the first as a ratio to the first (the
    /// baseline), e.g. x1.52; needs two or more configurations.
    #[arg(long)]
    pub relative: bool,
    /// Follow every cell after the first column with the two-sided p-value
    /// of a Mann-Whitney U test of its runs against the first column's, e.g.
    /// p=0.008: how likely so clear a difference is if the change did
    /// nothing. Exact (ties included) up to 30 runs a cell, a normal
    /// approximation beyond; 5 runs give 0.008 at the least, 4 runs 0.029,
    /// 3 runs 0.1 (never below 5%). Also in --json (p_vs_first). Needs two
    /// or more configurations and two or more runs
    #[arg(long)]
    pub significance: bool,
    /// Follow the table with two more: each cell's mean and longest
    /// runqueue wait in µs (CONFIG_SCHEDSTATS wait_sum / wait_count and
    /// wait_max over all tasks, medians of the runs)
    #[arg(long)]
    pub waits: bool,
    /// Follow the table with each cell's median run, task by task (tasks
    /// of one name together): run, runqueue-wait and sleep time as shares
    /// of the run, waits, mean and longest wait, CPU changes, and the
    /// CPUs they ran on longest (mostly_on, e.g. 1:15 for a pile on CPU 1)
    #[arg(long)]
    pub tasks: bool,
    /// Worker threads, 1..=1024 (default: all CPUs; results are identical either way).
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
}

/// `cfs-sim seed`.
#[derive(Debug, Clone, Args)]
pub struct SeedArgs {
    /// Runs per cell (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// Transactions per run, total over all clients (pgbench -t × clients), at least one per client.
    #[arg(long, default_value_t = DEFAULT_PGBENCH_TRANSACTIONS)]
    pub transactions: u64,
    /// Client counts, e.g. 1,2,4-8.
    #[arg(long)]
    pub clients: Option<String>,
    /// A kernel build option or tunable for every column (repeatable), as
    /// pgbench's --set takes it: hz=1000, hres_timers=1, nohz=1, nr_cpus=64,
    /// sched_wakeup_granularity_ns=5000000, write_space_wakeups=1,
    /// group_sched=0 (the defconfig build; the 2.6.26-rc4 columns are built
    /// with group scheduling by user, as the 2008 testers' kernels most
    /// likely were). The published columns stay the comparison; the header
    /// names the settings.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub sets: Vec<String>,
    /// Judge the shapes at each of these base seeds (e.g. 1-8): the whole
    /// experiment runs once per base seed, and instead of the table each
    /// seed's fidelity and shape lines are printed, then how many seeds met
    /// each shape. No plot is written.
    #[arg(
        long = "seeds",
        value_name = "LIST",
        conflicts_with_all = ["seed", "replay", "csv", "json", "plot", "trace", "stats", "spread", "relative", "significance", "waits", "tasks"]
    )]
    pub seed_list: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub cost: CostOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub faults: FaultOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub seeds: SeedOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out: OutArgs,
}

impl Default for SeedArgs {
    fn default() -> Self {
        SeedArgs {
            runs: 5,
            transactions: DEFAULT_PGBENCH_TRANSACTIONS,
            clients: None,
            sets: Vec::new(),
            seed_list: None,
            cost: CostOpts::default(),
            faults: FaultOpts::default(),
            seeds: SeedOpts { seed: 1, replay: None },
            out: OutArgs::default(),
        }
    }
}

/// Faults injected on the command line (`--irq`, `--slow`).
#[derive(Debug, Clone, Default, Args)]
pub struct FaultOpts {
    /// Inject interrupt load (repeatable; every column): handlers on the
    /// given CPUs that take CPU time from whatever runs there, as a NIC's
    /// interrupts steered to CPU 0 would. cpus=0,every=1ms,takes=50us
    /// (periodic) or cpus=0-1,mean=250us,takes=10us (Poisson arrivals,
    /// from their own seeded stream); at most one every 10us on a CPU. The
    /// time counts as the running task's, as 2.6.2x's update_curr counts it.
    #[arg(long = "irq", value_name = "SPEC")]
    pub irqs: Vec<String>,
    /// Slow CPUs down (repeatable, in order; every column): cpus=1,speed=50%
    /// makes everything on CPU 1 take twice as long, as thermal clock
    /// modulation or a host stealing a vCPU's time would. The scheduler
    /// is not told: it charges tasks wall time and balances runqueue
    /// weights, as 2.6.2x does (only 2.6.32 with ARCH_POWER on reads the
    /// lower clock, from an Intel CPU's APERF/MPERF).
    #[arg(long = "slow", value_name = "SPEC")]
    pub slow: Vec<String>,
}

impl FaultOpts {
    /// The interrupt loads, each on CPUs `host` has.
    pub fn loads(&self, host: &Host) -> Result<Vec<IrqLoad>, String> {
        self.irqs.iter().map(|s| parse_irq(s, host, "--irq")).collect()
    }

    /// The slowdowns, each of CPUs `host` has.
    pub fn slowdowns(&self, host: &Host) -> Result<Vec<Slowdown>, String> {
        self.slow.iter().map(|s| parse_slow(s, host, "--slow")).collect()
    }
}

/// Cost-model parameters replaced on the command line (`--cost`).
#[derive(Debug, Clone, Default, Args)]
pub struct CostOpts {
    /// Replace one parameter of the host's cost model (repeatable): a
    /// scalar (ctx_switch_ns=3600), one distance class of a per-reach table
    /// (xfer_line_ns.package=40) or a whole table
    /// (dirty_line_ns=0/5/15/250/250/250), or one of the workload's own
    /// costs as WORKLOAD.FIELD (pgbench.backend_ns=70000,
    /// tbench.side_ns=6000: the fields of the *Costs structs in
    /// cfs_sim::workloads); `cfs-sim costs` lists them all. Every
    /// column runs on it; one column alone takes cost=NAME=VALUE in
    /// --config.
    #[arg(long = "cost", value_name = "NAME=VALUE")]
    pub costs: Vec<String>,
}

impl CostOpts {
    /// The settings, checked.
    pub fn settings(&self) -> Result<Vec<CostSetting>, String> {
        self.costs.iter().map(|s| CostSetting::parse(s)).collect()
    }

    /// The preset or derived set of `host` (named `name` on the command
    /// line) with these settings written over it.
    pub fn for_host(&self, name: &str, host: &Host) -> Result<CostModel, String> {
        Ok(CostModel::for_host(name, host).with(&self.settings()?))
    }
}

/// Where a command's runs get their seeds: a base (`--seed`) or one run's
/// own seed replayed (`--replay`).
#[derive(Debug, Clone, Args)]
pub struct SeedOpts {
    /// Base random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Replay one run: every cell runs once with exactly this seed, as a
    /// CSV's seed column or a failed run's message prints it (give the
    /// run's --clients and configuration too); instead of --seed and --runs.
    #[arg(long, value_name = "SEED", conflicts_with_all = ["seed", "runs"])]
    pub replay: Option<u64>,
}

impl SeedOpts {
    /// The plan's seeds.
    pub fn seeds(&self) -> Seeds {
        self.replay.map_or(Seeds::Derived(self.seed), Seeds::Exact)
    }
}

/// Options of the workload commands.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Host: a preset (x2, q6600, nehalem-ep, tigerton, stoakley), a spec
    /// such as 2s4c2t,mhz=2930, a TOML host file, `local` (this machine,
    /// from /sys) or a directory holding a copy of another machine's sysfs.
    #[arg(long, default_value = "q6600")]
    pub host: String,
    /// Kernel profile: 2.6.25, 2.6.26-rc4, 2.6.26, 2.6.32-rc1, 2.6.32.
    #[arg(long, default_value = "2.6.26")]
    pub profile: String,
    /// sched_features: a number (895, 0x37f) or names (NO_SYNC_WAKEUPS).
    #[arg(long, value_name = "MASK")]
    pub features: Option<String>,
    /// A patch (repeatable): the seed threads' waker, last-preempter,
    /// last-preempter-no-disperse, sync-load-clamp, sync-wakeups-bit,
    /// affinity-fix (b3137bc8e77) and, on 2.6.32-rc1, prefer-local-to-node
    /// (799e2205ec6: SD_PREFER_LOCAL off at MC and CPU, on at NODE), or the
    /// later mainline iterator-fix (38736f47507), wakeup-overlap
    /// (15afe09bf49) and min-vruntime-fix (1af5f730fc1 + e17036dac18).
    #[arg(long = "patch", value_name = "NAME")]
    pub patches: Vec<String>,
    /// Policy of every task: normal, batch or idle.
    #[arg(long)]
    pub policy: Option<String>,
    /// Policy of the client side only (`chrt -b pgbench`); overrides
    /// --policy there.
    #[arg(long, value_name = "POLICY")]
    pub client_policy: Option<String>,
    /// Policy of the server side only (the postmaster or server under
    /// `chrt -b`; what it forks inherits it); overrides --policy there.
    #[arg(long, value_name = "POLICY", alias = "backend-policy")]
    pub server_policy: Option<String>,
    /// Nice level of the client side only (`nice -n -5 pgbench`), -20..=19.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub client_nice: Option<String>,
    /// Nice level of the server side only (the postmaster or server under
    /// `nice -n`; what it forks inherits it), -20..=19.
    #[arg(long, value_name = "N", allow_hyphen_values = true, alias = "backend-nice")]
    pub server_nice: Option<String>,
    /// Client counts (clients, pairs, hogs, groups, rooms), e.g. 1,2,4-8.
    #[arg(long, value_name = "LIST")]
    pub clients: Option<String>,
    /// Runs per cell (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Transactions per run, total over all clients (pgbench), at least one per client.
    #[arg(long, conflicts_with = "duration")]
    pub transactions: Option<u64>,
    /// Simulated run time, e.g. 2s or 500ms. For messaging, volanomark and a
    /// workload file with finishing tasks, which end when their work is
    /// done, a cap: the run stops at the earlier of the two.
    #[arg(long)]
    pub duration: Option<String>,
    /// CPUs of the client side (pgbench, benchmark drivers), e.g. 0.
    #[arg(long, value_name = "CPUS")]
    pub pin_client: Option<String>,
    /// CPUs of the server side (postmaster and backends, servers), e.g. 1-3.
    #[arg(long, value_name = "CPUS", alias = "pin-server")]
    pub pin_backends: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub seeds: SeedOpts,
    /// A configuration column (repeatable), on top of the options above:
    /// "name=X,profile=2.6.26-rc4,features=863,patch=waker,policy=batch,client-policy=batch,server-policy=batch,client-nice=-5,server-nice=5,set=NAME=VALUE,cost=NAME=VALUE,sd-flags=MC:-PREFER_LOCAL,irq=cpus=0;every=1ms;takes=50us,slow=cpus=1;speed=50%".
    #[arg(long = "config", value_name = "SPEC")]
    pub configs: Vec<String>,
    /// A TOML sweep file of `[[config]]` tables (name, profile, features,
    /// patches, policy, client_policy, server_policy, client_nice,
    /// server_nice, set, cost, sd_flags, irq, slow).
    #[arg(long, value_name = "FILE")]
    pub sweep: Option<PathBuf>,
    /// A tunable or engine setting (repeatable): sched_wakeup_granularity_ns=5000000, hz=1000, hres_timers=1 (CONFIG_HIGH_RES_TIMERS; off by default, as in Kconfig), nohz=1, cpusets=1 (CONFIG_CPUSETS with the top cpuset alone, as distribution kernels boot: sched_setaffinity keeps only the CPUs online, a task whose CPUs all went down falls back to those online rather than every CPU, and from 2.6.26 final a hotplug rebuild, from 2.6.32 any rebuild, takes the isolcpus= CPUs back into the domains), nr_cpus=64 (CONFIG_NR_CPUS; it caps a balance interval at HZ*NR_CPUS/10 jiffies), preempt=1 (CONFIG_PREEMPT: 2.6.32's newly-idle balancing pulls one task), write_space_wakeups=1, poll_window=0 (a select() pass finds every message that came before it ended, so no wakeup races its polls), sndbuf=0 (unbounded AF_UNIX send buffers; default 124928), tcp_low_latency=1 (net.ipv4.tcp_low_latency: no TCP prequeue, so a loopback TCP reader blocked in recv gets the sync wakeup too; --switch can write it mid-run), isolcpus=3 (the boot parameter: those CPUs get no sched domain, and only tasks pinned there run there), group_sched=1 (CONFIG_FAIR_GROUP_SCHED by user id; 2.6.25, 2.6.26-rc4 and 2.6.26), client_uid=N and server_uid=N (the users a built-in's two sides run as; both 1000 unless set, one group), numa=on (CONFIG_NUMA on a one-node host: a NODE level over the node; auto, the default, has it only where the host has several nodes), relax_domain_level=2 (the boot parameter: levels above it lose idle balancing, those at or below gain it; 2.6.26-rc1 on), sd_init=MC:+WAKE_IDLE (an edit of the SD_*_INIT domain initialisers, as a kernel built from edited topology.h: applied before degenerate levels are dropped, so it can keep or drop a level, where --sd-flags writes the built domains as the sched_domain sysctl does), sched_mc_power_savings=1 and sched_smt_power_savings=1 (the sysfs files, written before the run, or mid-run with --switch: MC spans the package, the CPU level, and with the SMT knob MC, balance for power savings, consolidating work onto fewer packages where the domains group packages at a level with the flag (not Nehalem-EP's, whose packages meet only at NODE; under 2.6.32 only with the SMT knob); 2.6.32 also takes 2, where newly idle CPUs consolidate too).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub sets: Vec<String>,
    /// Domain flag overrides, e.g. MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL.
    #[arg(long, value_name = "LIST")]
    pub sd_flags: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub cost: CostOpts,
    /// Write settings into the running scheduler at a simulated time, as
    /// echo > /proc/sys/kernel/sched_* would (repeatable; every column):
    /// 2s:features=863, 1s:set=sched_wakeup_granularity_ns=5000000,
    /// 1s:set=tcp_low_latency=1 (as echo > /proc/sys/net/ipv4/...),
    /// 1s:set=sched_mc_power_savings=1 (as echo > /sys/devices/system/cpu/...,
    /// which rebuilds the domains),
    /// 1s:sd-flags=MC:-WAKE_AFFINE, 1s:patch=waker, 1s:no-patch=waker, or as
    /// chrt -p, taskset -p and renice would on the running tasks:
    /// 1s:policy=batch (every task), 1s:server-policy=batch,
    /// 1s:client-policy=batch, 1s:affinity=0-3, 1s:pin-client=0,
    /// 1s:pin-backends=1-3, 1s:nice=5 (every task), 1s:client-nice=-5,
    /// 1s:server-nice=5, or as faults: 1s:irq=cpus=0;every=1ms;takes=50us
    /// (an interrupt load starts), 2s:irq=off (every load stops),
    /// 1s:slow=cpus=1;speed=50% (speed=100% restores), or as CPU hotplug:
    /// 1s:offline=3 (CPU 3 goes down: its tasks move off, the domains
    /// are rebuilt without it and its interrupt loads move to the first
    /// online CPU, for good, as fixup_irqs moves them; never CPU 0, which
    /// x86 cannot offline),
    /// 2s:online=3. The table then shows each column's throughput before
    /// and after.
    #[arg(long = "switch", value_name = "AT:SETTINGS", allow_hyphen_values = true)]
    pub switches: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub faults: FaultOpts,
    /// Nice levels cycled over the tasks (hogs), e.g. 0,5,-5.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub nice: Option<String>,
    /// Messages per sender (messaging, volanomark).
    #[arg(long)]
    pub loops: Option<u32>,
    /// Messaging over pipes instead of socketpairs, as hackbench -pipe (messaging).
    #[arg(long)]
    pub pipe: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub out: OutArgs,
}

/// `cfs-sim run FILE`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The workload file.
    pub file: PathBuf,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub bench: BenchArgs,
}

/// `cfs-sim topology`.
#[derive(Debug, Clone, Args)]
pub struct TopoArgs {
    /// Host: a preset, a spec, a TOML file, `local` or a sysfs directory
    /// [default: q6600].
    #[arg(value_name = "HOST")]
    pub host: Option<String>,
    /// The host given the way every other command takes it (`--host
    /// q6600`), instead of HOST.
    #[arg(long = "host", value_name = "HOST", conflicts_with = "host")]
    pub host_opt: Option<String>,
    /// Kernel profile whose domains to build.
    #[arg(long, default_value = "2.6.26")]
    pub profile: String,
    /// The CPUs up, e.g. 0-2: the domains the kernel rebuilds after the
    /// others went down (`--switch T:offline=3` in a run). CPU 0 among
    /// them: it cannot go down.
    #[arg(long, value_name = "CPUS")]
    pub online: Option<String>,
    /// The isolcpus= boot parameter, e.g. 3: those CPUs get no domain.
    #[arg(long, value_name = "CPUS")]
    pub isolcpus: Option<String>,
    /// The relax_domain_level= boot parameter (2.6.26-rc1 on): levels above
    /// it (SIBLING 1, MC 2, CPU 3, NODE 4, ALLNODES 5) lose idle balancing,
    /// those at or below gain it.
    #[arg(long, value_name = "LEVEL")]
    pub relax_domain_level: Option<String>,
    /// CONFIG_NUMA: auto (on where the host has several nodes), on (a
    /// distro kernel on a one-node box: a NODE level over the node) or off.
    #[arg(long, value_name = "MODE", default_value = "auto")]
    pub numa: String,
    /// A patch the kernel is built with (repeatable); one that edits the
    /// domain initialisers (prefer-local-to-node) changes what is built.
    #[arg(long = "patch", value_name = "NAME")]
    pub patches: Vec<String>,
    /// Flags written into the built domains, as a run's --sd-flags (the
    /// sched_domain sysctl: no level is added or dropped), e.g.
    /// MC:-PREFER_LOCAL,CPU:-PREFER_LOCAL.
    #[arg(long, value_name = "LIST")]
    pub sd_flags: Option<String>,
    /// An edit of the SD_*_INIT domain initialisers, as a run's --set
    /// sd_init (a kernel built from edited source: applied before
    /// degenerate levels are dropped), e.g. MC:+WAKE_IDLE.
    #[arg(long, value_name = "LIST")]
    pub sd_init: Option<String>,
    /// /sys/devices/system/cpu/sched_mc_power_savings (0 or 1; 2.6.32 up to
    /// 2), as a run's --set: MC spans the package and the CPU level gets
    /// SD_POWERSAVINGS_BALANCE.
    #[arg(long, value_name = "LEVEL")]
    pub sched_mc_power_savings: Option<String>,
    /// /sys/devices/system/cpu/sched_smt_power_savings (0 or 1; 2.6.32 up to
    /// 2), as a run's --set: MC gets SD_POWERSAVINGS_BALANCE too.
    #[arg(long, value_name = "LEVEL")]
    pub sched_smt_power_savings: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub cost: CostOpts,
}

/// `cfs-sim hosts`.
#[derive(Debug, Clone, Args)]
pub struct HostsArgs {
    /// Print JSON: an array of `{name, description, host}`, `host` as
    /// `topology --json` gives it (null for `local`, which is read when used).
    #[arg(long)]
    pub json: bool,
}

/// `cfs-sim costs`.
#[derive(Debug, Clone, Args)]
pub struct CostsArgs {
    /// What to list: `host` (the host's cost model), a workload (pgbench,
    /// tbench, messaging, volanomark, starve, sysbench-oltp), or, when
    /// left out, all of them.
    pub what: Option<String>,
    /// Host whose cost model to list: a preset, a spec, a TOML file,
    /// `local` or a sysfs directory.
    #[arg(long, default_value = "q6600")]
    pub host: String,
    /// Print JSON: {"host": {...}, "workloads": {"pgbench": {...}, ...},
    /// "sources": {"host": {...}, "pgbench": {...}, ...}}, the sources being
    /// the listing's source column, field by field.
    #[arg(long)]
    pub json: bool,
    /// Show the values after this setting (repeatable), in the forms every
    /// command's --cost takes: ctx_switch_ns=3600, xfer_line_ns.package=40,
    /// dirty_line_ns=0/5/15/250/250/250, pgbench.backend_ns=70000.
    #[arg(long = "cost", value_name = "NAME=VALUE")]
    pub costs: Vec<String>,
}

/// `cfs-sim calibrate`.
#[derive(Debug, Clone, Args)]
pub struct CalArgs {
    /// Runs per cell.
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// Transactions per run, total over all clients, at least one per client (60).
    #[arg(long, default_value_t = DEFAULT_PGBENCH_TRANSACTIONS)]
    pub transactions: u64,
    /// Only the features table.
    #[arg(long)]
    pub features_only: bool,
    /// A kernel build option or tunable for every column (repeatable), as
    /// pgbench's --set takes it: hz=1000, hres_timers=1, nohz=1, nr_cpus=64,
    /// sched_wakeup_granularity_ns=5000000, write_space_wakeups=1,
    /// group_sched=0 (the defconfig build; the 2.6.26-rc4 columns are built
    /// with group scheduling by user, as the 2008 testers' kernels most
    /// likely were). The published columns stay the comparison; the header
    /// names the settings.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub sets: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub cost: CostOpts,
    /// Base random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Follow the table with two more: each cell's mean and longest
    /// runqueue wait in µs (CONFIG_SCHEDSTATS wait_sum / wait_count and
    /// wait_max over all tasks, medians of the runs)
    #[arg(long)]
    pub waits: bool,
    /// Follow the table with each cell's median run, task by task (tasks
    /// of one name together): run, runqueue-wait and sleep time as shares
    /// of the run, waits, mean and longest wait, CPU changes, and the
    /// CPUs they ran on longest (mostly_on, e.g. 1:15 for a pile on CPU 1)
    #[arg(long)]
    pub tasks: bool,
    /// Worker threads, 1..=1024 (default: all CPUs; results are identical either way).
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Plot the model's medians against clients (.svg or .png), each
    /// configuration's published values dashed beside it (the first table
    /// that has it; clearest with --features-only)
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

impl OutArgs {
    /// The files to be written, with the option naming each (`-`, stdout,
    /// is not a file).
    fn files(&self) -> Vec<(&'static str, &Path)> {
        [("--csv", &self.csv), ("--json", &self.json), ("--plot", &self.plot), ("--trace", &self.trace)]
            .into_iter()
            .filter_map(|(flag, p)| p.as_deref().filter(|p| *p != Path::new("-")).map(|p| (flag, p)))
            .collect()
    }

    /// Whether the CSV or the JSON goes to stdout in place of the table.
    fn to_stdout(&self) -> bool {
        [&self.csv, &self.json].iter().any(|p| p.as_deref() == Some(Path::new("-")))
    }
}

/// Parses `args` (program name first) and runs the command; returns the
/// one-line error message on failure. Clap's own usage errors (unknown
/// flags) are returned as its rendered message.
pub fn main_with(args: &[String]) -> Result<(), String> {
    let cli = Cli::try_parse_from(args).map_err(|e| {
        if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) {
            // Through `say`, so that a full disk is an error and a closed
            // pipe (`--help | head`) is not.
            say(&e.render().to_string()).err().unwrap_or_default()
        } else {
            e.render().to_string().trim_end().to_string()
        }
    })?;
    match cli.cmd.unwrap_or(Cmd::Seed(cli.seed)) {
        Cmd::Seed(a) => seed(&a),
        Cmd::Pgbench(a) => bench(Workload::Pgbench(Default::default()), &a),
        Cmd::Tbench(a) => bench(Workload::Tbench(Default::default()), &a),
        Cmd::Hogs(a) => bench(Workload::Hogs, &a),
        Cmd::Messaging(a) => bench(Workload::Messaging(Default::default()), &a),
        Cmd::Volanomark(a) => bench(Workload::Volanomark(Default::default()), &a),
        Cmd::Starve(a) => bench(Workload::Starve(Default::default()), &a),
        Cmd::SysbenchOltp(a) => bench(Workload::SysbenchOltp(Default::default()), &a),
        Cmd::Run(a) => {
            let text = read_input(&a.file, "")?;
            let wl = Arc::new(parse_workload(&text).map_err(|e| format!("{}: {e}", a.file.display()))?);
            check_not_overwritten(&a.file, &a.bench.out)?;
            // The plan reads the host once (a `local` host walks sysfs).
            let plan = plan_for(Workload::File(Arc::clone(&wl)), &a.bench)?;
            wl.check_host(plan.host.nr_cpus()).map_err(|e| format!("{}: {e}", a.file.display()))?;
            run_plan(&plan, &a.bench)
        }
        Cmd::Topology(a) => topology(&a),
        Cmd::Costs(a) => costs(&a),
        Cmd::Hosts(a) => hosts(&a),
        Cmd::Calibrate(a) => calibrate(&a),
    }
}

// ----- output -------------------------------------------------------------------

/// Writes to stdout. A closed pipe (`cfs-sim | head`) ends the command
/// quietly: the empty error makes `main` exit 0 without a message.
fn say(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(String::new()),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}

// ----- argument parsing helpers ------------------------------------------------

/// The largest input file read (a workload, sweep or host file): far above
/// any real one, and it keeps `run /dev/zero` from reading forever.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Reads a text input of at most [`MAX_INPUT_BYTES`]. Pipes and process
/// substitutions (`run <(gen)`) work as files do.
pub fn read_input(path: &Path, what: &str) -> Result<String, String> {
    use std::io::Read;
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read {what}{}: {e}", path.display());
    if path.is_dir() {
        return Err(cannot(&"it is a directory"));
    }
    let file = std::fs::File::open(path).map_err(|e| cannot(&e))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| cannot(&e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(cannot(&format_args!("larger than {} MiB", MAX_INPUT_BYTES >> 20)));
    }
    String::from_utf8(bytes).map_err(|_| cannot(&"not UTF-8 text"))
}

/// The `--host` name of the machine cfs-sim runs on (read from /sys).
pub const LOCAL_HOST: &str = "local";

/// A host from a preset name, `local` (this machine's /sys), a TOML file
/// path, a directory holding a sysfs tree (its `devices/system/{cpu,node}`,
/// as [`Host::from_sysfs`] reads them) or a spec string, tried in that order.
pub fn parse_host(name: &str) -> Result<Host, String> {
    let bad = |why: String| {
        format!(
            "unknown host {name:?}: {why} (presets: {}; or a spec such as 2s4c2t, a TOML host file, `local` or a sysfs directory)",
            PRESET_NAMES.join(", ")
        )
    };
    if name.trim().is_empty() {
        return Err(bad("empty".into()));
    }
    let word = name.trim();
    // Names first, so a file or directory that happens to be called `q6600`
    // or `local` does not shadow them.
    if cfs_topology::presets::preset_shape(word).is_some() {
        return cfs_topology::parse_any(word).map_err(|e| bad(e.to_string()));
    }
    let from_sysfs = |root: &Path| {
        Host::from_sysfs(root).map_err(|e| format!("cannot read host from sysfs {}: {e}", root.display()))
    };
    if word == LOCAL_HOST {
        return from_sysfs(Path::new("/sys"));
    }
    // Any path that exists and is not a directory is read as a host file
    // (a pipe or a process substitution too).
    if Path::new(name).exists() && !Path::new(name).is_dir() {
        let text = read_input(Path::new(name), "host file ")?;
        // TopologyError's own text starts "host file: " too.
        return Host::from_toml(&text)
            .map_err(|e| format!("host file {name}: {}", e.to_string().trim_start_matches("host file: ")));
    }
    // A sysfs tree copied from another machine.
    if Path::new(name).is_dir() {
        return from_sysfs(Path::new(name));
    }
    if word.contains(['/', '\\']) || word.ends_with(".toml") {
        return Err(format!("cannot read host file {name}: no such file"));
    }
    if word.contains('\n') || word.contains('=') && !word.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(bad("not a preset or spec".into()));
    }
    if !word.starts_with(|c: char| c.is_ascii_digit()) {
        // A bare word that is no preset: say so (parse_any would read it as
        // inline TOML and report a TOML syntax error), with the nearest preset.
        let hint = suggest(word, &PRESET_NAMES).map(|p| format!(", did you mean {p:?}?")).unwrap_or_default();
        return Err(bad(format!("not a preset, a spec or a file{hint}")));
    }
    // It starts with a digit: a spec, so say what is wrong with it.
    cfs_topology::parse_any(name).map_err(|e| {
        let why = e.to_string().replace('\n', " ");
        // A syntax error already names the spec and the byte it stopped at.
        let prefix = match e {
            cfs_topology::TopologyError::SpecSyntax { .. } => String::new(),
            _ => format!("bad host spec {name:?}: "),
        };
        format!("{prefix}{why} (e.g. 2s4c2t or 2s4c2t,mhz=2930)")
    })
}

/// `1,2,4-8` → [1, 2, 4, 5, 6, 7, 8], or None when an item is malformed
/// or empty, a range runs backwards, or the list would pass `max_len`
/// entries (checked before each range is added, so a wide range is refused
/// without being built).
fn parse_ranges(s: &str, max_len: u64) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: u64 = a.trim().parse().ok()?;
        let b: u64 = b.trim().parse().ok()?;
        if b < a || out.len() as u64 + (b - a) >= max_len {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// The first value a list gives twice, if any.
fn first_repeat(v: &[u64]) -> Option<u64> {
    let mut seen = std::collections::BTreeSet::new();
    v.iter().copied().find(|&x| !seen.insert(x))
}

/// `1,2,4-8` → [1, 2, 4, 5, 6, 7, 8]: counts 1..=4096, at most 4,096 of
/// them, each once (a repeat would print the same row twice).
pub fn parse_clients(s: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("bad client list {s:?} (expected e.g. 1,2,4-8; counts 1..=4096)");
    let counts = parse_ranges(s, 4096).filter(|v| v.iter().all(|n| (1..=4096).contains(n))).ok_or_else(bad)?;
    if let Some(n) = first_repeat(&counts) {
        return Err(format!("bad client list {s:?}: client count {n} given twice"));
    }
    Ok(counts.into_iter().map(|n| n as u32).collect())
}

/// A CPU list that must name CPUs of `host`.
pub fn parse_cpus(s: &str, host: &Host, what: &str) -> Result<CpuMask, String> {
    let m = CpuMask::parse_list(s).map_err(|e| format!("bad CPU list {s:?} for {what}: {e}"))?;
    if m.is_empty() {
        return Err(format!("bad CPU list {s:?} for {what}: no CPU"));
    }
    if let Some(c) = m.iter().find(|&c| c >= host.nr_cpus()) {
        return Err(format!("bad CPU list {s:?} for {what}: CPU {c} does not exist (the host has {})", host.nr_cpus()));
    }
    Ok(m)
}

fn parse_nice(s: &str) -> Result<Vec<i32>, String> {
    s.split(',').map(|x| parse_nice_level(x).map_err(|_| format!("bad nice list {s:?} (values -20..=19)"))).collect()
}

/// `--set NAME=VALUE` items as (name, value) pairs; the names and values
/// are checked where a column resolves them (`SchedSpec::resolve`).
fn parse_sets(items: &[String]) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set {kv:?} is not NAME=VALUE"))?;
            Ok((k.trim().into(), v.trim().into()))
        })
        .collect()
}

/// The base configuration from the command-line options.
fn base_spec(a: &BenchArgs) -> Result<SchedSpec, String> {
    let mut s = SchedSpec::profile(&a.profile);
    s.features = a.features.clone();
    s.patches = a.patches.clone();
    s.policy = a.policy.clone();
    s.client_policy = a.client_policy.clone();
    s.server_policy = a.server_policy.clone();
    s.client_nice = a.client_nice.clone();
    s.server_nice = a.server_nice.clone();
    s.sets = parse_sets(&a.sets)?;
    s.sd_flags = a.sd_flags.clone();
    Ok(s)
}

/// Rejects options the workload would silently ignore.
fn check_applicable(w: &Workload, a: &BenchArgs) -> Result<(), String> {
    let name = w.name();
    let only = |opt: &str, ok: bool, who: &str| {
        if ok { Ok(()) } else { Err(format!("{opt} does not apply to {name} ({who} only)")) }
    };
    only("--transactions", a.transactions.is_none() || matches!(w, Workload::Pgbench(_)), "pgbench")?;
    only("--nice", a.nice.is_none() || matches!(w, Workload::Hogs), "hogs")?;
    only(
        "--loops",
        a.loops.is_none() || matches!(w, Workload::Messaging(_) | Workload::Volanomark(_)),
        "messaging, volanomark",
    )?;
    only("--pipe", !a.pipe || matches!(w, Workload::Messaging(_)), "messaging")?;
    if a.clients.is_some() {
        match w {
            Workload::File(_) => {
                return Err("--clients does not apply to a workload file (its tasks' instances set the counts)".into());
            }
            Workload::Starve(_) => {
                return Err("--clients does not apply to starve (it runs one parent and one child)".into());
            }
            _ => {}
        }
    }
    // A workload file pins and sets the policy of each of its tasks itself.
    let builtin = !matches!(w, Workload::File(_));
    only("--pin-client", a.pin_client.is_none() || builtin, "built-ins; a workload file has per-task cpus")?;
    let two_sided = "pgbench, tbench, sysbench-oltp";
    only("--pin-backends", a.pin_backends.is_none() || w.has_server_side(), two_sided)?;
    only("--client-policy", a.client_policy.is_none() || w.has_server_side(), two_sided)?;
    only("--server-policy", a.server_policy.is_none() || w.has_server_side(), two_sided)?;
    only("--client-nice", a.client_nice.is_none() || w.has_server_side(), two_sided)?;
    only("--server-nice", a.server_nice.is_none() || w.has_server_side(), two_sided)?;
    Ok(())
}

/// The task settings of `--switch` against the workload and host, as
/// their boot flags are checked: a side's policy, nice level or CPUs need a workload
/// with two sides, and a CPU list may name only the host's CPUs.
fn check_task_settings(changes: &[crate::engine::Change], workload: &Workload, host: &Host) -> Result<(), String> {
    use crate::engine::Setting;
    for c in changes {
        let missing = |m: Option<usize>| match m {
            Some(cpu) => Err(format!(
                "--switch at {}: {}: CPU {cpu} does not exist (the host has {})",
                fmt_ns(c.at_ns),
                c.setting,
                host.nr_cpus()
            )),
            None => Ok(()),
        };
        let side = match &c.setting {
            Setting::Irq(load) => {
                missing(load.missing_cpu(host.nr_cpus()))?;
                None
            }
            Setting::Slow(x) => {
                missing(x.missing_cpu(host.nr_cpus()))?;
                None
            }
            Setting::Policy(side, _) | Setting::Nice(side, _) => *side,
            Setting::Affinity(side, mask) => {
                missing(mask.iter().find(|&cpu| cpu >= host.nr_cpus()))?;
                *side
            }
            _ => None,
        };
        if side.is_some() && !workload.has_server_side() {
            return Err(format!(
                "--switch at {}: {} does not apply to {} (pgbench, tbench, sysbench-oltp only)",
                fmt_ns(c.at_ns),
                c.setting,
                workload.name()
            ));
        }
    }
    Ok(())
}

/// Builds the plan of a workload command.
pub fn plan_for(workload: Workload, a: &BenchArgs) -> Result<Plan, String> {
    check_applicable(&workload, a)?;
    if Path::new(&a.host).is_file() {
        check_not_overwritten(Path::new(&a.host), &a.out)?;
    }
    let host = parse_host(&a.host)?;
    let costs = a.cost.for_host(&a.host, &host)?;
    let workload = workload.with_costs(&a.cost.settings()?)?;
    let base = base_spec(a)?;
    let mut specs = Vec::new();
    for c in &a.configs {
        specs.push(base.with_items(c)?);
    }
    if let Some(path) = &a.sweep {
        check_not_overwritten(path, &a.out)?;
        let text = read_input(path, "")?;
        specs.extend(parse_sweep(&text, &base)?);
    }
    if specs.is_empty() {
        specs.push(base);
    }
    let columns = specs.iter().map(|s| s.resolve(&host)).collect::<Result<Vec<_>, _>>()?;
    // Columns are told apart by their labels in the table, the CSV and
    // the JSON, so two columns may not share one.
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].iter().any(|d| d.label == c.label) {
            return Err(format!(
                "two columns are both labelled {:?}: give each its own name (name= in --config, name = in a sweep file)",
                c.label
            ));
        }
    }
    if let Some(c) = columns.iter().find(|c| c.policies.per_side()) {
        if !workload.has_server_side() {
            return Err(format!(
                "config {:?}: client-policy, server-policy, client-nice and server-nice do not apply to {} \
                 (pgbench, tbench, sysbench-oltp only; use policy, or --nice for hogs)",
                c.label,
                workload.name()
            ));
        }
    }
    let clients = match (&a.clients, &workload) {
        (Some(c), _) => parse_clients(c)?,
        (None, w) => w.default_clients(host.nr_cpus()),
    };
    let duration_ns = a.duration.as_deref().map(parse_duration).transpose().map_err(|e| format!("--duration: {e}"))?;
    if duration_ns == Some(0) {
        return Err("--duration must be positive".into());
    }
    if duration_ns.is_some_and(|d| d > MAX_SIM_NS) {
        return Err(format!("--duration must be at most {}, the simulated-time cap of a run", fmt_ns(MAX_SIM_NS)));
    }

    if a.loops == Some(0) {
        return Err("--loops must be positive".into());
    }
    check_runs(a.runs, a.transactions, &clients)?;
    let opts = WorkloadOpts {
        transactions: a.transactions,
        duration_ns,
        policies: Policies::default(),
        pin_client: a.pin_client.as_deref().map(|s| parse_cpus(s, &host, "--pin-client")).transpose()?,
        pin_server: a.pin_backends.as_deref().map(|s| parse_cpus(s, &host, "--pin-backends")).transpose()?,
        nice: a.nice.as_deref().map(parse_nice).transpose()?.unwrap_or_default(),
        loops: a.loops,
        pipe: a.pipe,
    };
    let mut changes = Vec::new();
    for sw in &a.switches {
        changes.extend(parse_switch(sw)?);
    }
    changes.sort_by_key(|c| c.at_ns);
    // A write at 0 is the column's starting setting; as a switch it would
    // leave the column labelled with settings it never ran under. CPUs
    // taken down at 0 are the exception: no boot option gives that
    // machine (maxcpus= would also scale the tunables to fewer CPUs), and
    // the table's comment line names them.
    let hotplug = |s: &crate::engine::Setting| {
        matches!(s, crate::engine::Setting::Offline(_) | crate::engine::Setting::Online(_))
    };
    if changes.iter().any(|c| c.at_ns == 0 && !hotplug(&c.setting)) {
        return Err("--switch at 0 is the starting setting: give it with --features, --set, --sd-flags, \
                    --patch, --policy, --client-policy, --server-policy, --client-nice, --server-nice, \
                    --pin-client, --pin-backends or --config"
            .into());
    }
    check_task_settings(&changes, &workload, &host)?;
    // Where the run's length is known (a --duration, a timed built-in's
    // default, a workload file's own duration), a change at or after it
    // would leave an empty column, and a warmup as long would count nothing.
    let known = workload.known_duration_ns(&opts);
    let whose = if duration_ns.is_some() { "--duration" } else { "the workload's duration" };
    if let (Some(d), Some(late)) = (known, changes.iter().find(|c| Some(c.at_ns) >= known)) {
        return Err(format!(
            "--switch at {} is not before the end of the run ({whose} {})",
            fmt_ns(late.at_ns),
            fmt_ns(d)
        ));
    }
    if let (Workload::File(w), Some(d)) = (&workload, known) {
        w.check_warmup(d).map_err(|e| format!("{e} ({whose})"))?;
    }
    check_changes(&columns, &changes)?;
    let irqs = a.faults.loads(&host)?;
    let slow = a.faults.slowdowns(&host)?;
    let plan = Plan {
        host,
        costs,
        workload,
        opts,
        columns,
        clients,
        runs: a.runs,
        seeds: a.seeds.seeds(),
        trace: a.out.trace.is_some(),
        changes,
        irqs,
        slow,
    };
    plan.check_costs()?;
    plan.check_faults()?;
    Ok(plan)
}

/// The options that run a failed run alone, with the rest of its command
/// line: its seed and, for a built-in, its client count (a workload file
/// sets its own counts and refuses --clients).
fn replay_options(workload: &Workload, failed: &RunFailed) -> String {
    match workload {
        Workload::File(_) => format!("--replay {}", failed.seed),
        _ => format!("--replay {} --clients {}", failed.seed, failed.clients),
    }
}

/// `--runs` and `--transactions`, as every command that takes them
/// checks them. The total is split over the clients as selecttest.sh
/// splits its 100,000 (`-t` = total / C each), so it must give every
/// client of every cell at least one transaction.
fn check_runs(runs: u32, transactions: Option<u64>, clients: &[u32]) -> Result<(), String> {
    if runs == 0 || runs > 1000 {
        return Err("--runs must be 1..=1000".into());
    }
    if transactions == Some(0) {
        return Err("--transactions must be positive".into());
    }
    if let (Some(t), Some(&most)) = (transactions, clients.iter().max()) {
        if t < u64::from(most) {
            return Err(format!(
                "--transactions {t} is fewer than {most} clients: the total is split as selecttest.sh splits it \
                 ({t} / clients each), so every client needs at least one"
            ));
        }
    }
    Ok(())
}

// ----- running and output --------------------------------------------------------

/// The most worker threads `--jobs` may ask for.
const MAX_JOBS: usize = 1024;

/// `--jobs N`, checked while the arguments are read, before anything is
/// written (the seed run makes its plot directory first).
fn parse_jobs(s: &str) -> Result<usize, String> {
    s.parse::<usize>()
        .ok()
        .filter(|j| (1..=MAX_JOBS).contains(j))
        .ok_or_else(|| format!("--jobs must be 1..={MAX_JOBS}"))
}

/// Runs a plan with an optional progress bar and thread count.
fn execute(plan: &Plan, jobs: Option<usize>) -> Result<(Results, f64), String> {
    let n = plan.jobs().len() as u64;
    let bar = if std::io::stderr().is_terminal() && n > 1 {
        let b = indicatif::ProgressBar::new(n);
        b.set_style(
            indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} runs ({eta} left)")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let start = Instant::now();
    let tick = || bar.inc(1);
    let res = match jobs {
        Some(j) => {
            // `j` is 1..=MAX_JOBS (parse_jobs). No more threads than runs: the rest would only idle.
            let threads = j.min(n.max(1) as usize);
            let pool =
                rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("--jobs {j}: {e}"))?;
            pool.install(|| plan.execute(&tick))
        }
        None => plan.execute(&tick),
    };
    bar.finish_and_clear();
    let res = res.map_err(|e| format!("{e}; replay it with {}", replay_options(&plan.workload, &e)))?;
    Ok((res, start.elapsed().as_secs_f64()))
}

/// Makes the directory `path` is to be written in, if it names one.
fn create_parent(path: &Path) -> Result<(), String> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => crate::report::make_dir(dir),
        None => Ok(()),
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    create_parent(path)?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes the requested outputs; prints the table unless JSON goes to stdout.
fn output(
    plan: &Plan,
    res: &Results,
    out: &OutArgs,
    what: &str,
    wall: f64,
    published: Option<&report::Published<'_>>,
) -> Result<(), String> {
    // A change past the end of every run (possible where the length is not
    // known in advance, as with pgbench's transactions) leaves its column
    // empty; say why.
    for at in unreached_changes(plan, res) {
        eprintln!("cfs-sim: note: every run ended before the change at {}; its column is empty", fmt_ns(at));
    }
    let json_stdout = out.json.as_deref() == Some(Path::new("-"));
    if !out.to_stdout() {
        let style = report::TableStyle { spread: out.spread, relative: out.relative, significance: out.significance };
        say(&report::table_with(plan, res, what, style))?;
        if out.waits {
            say(&report::waits_table(plan, res, report::Wait::Mean, style))?;
            say(&report::waits_table(plan, res, report::Wait::Longest, style))?;
        }
        if out.tasks {
            say(&report::tasks_table(plan, res))?;
        }
    }
    match &out.csv {
        Some(p) if p.as_path() == Path::new("-") => say(&report::csv(plan, res))?,
        Some(p) => write_file(p, &report::csv(plan, res))?,
        None => {}
    }
    if let Some(p) = &out.json {
        let text = serde_json::to_string_pretty(&report::json(plan, res)).map_err(|e| e.to_string())?;
        if json_stdout {
            say(&format!("{text}\n"))?;
        } else {
            write_file(p, &text)?;
        }
    }
    if let Some(p) = &out.plot {
        let title = format!("{what}: {} on {}", plan.workload.name(), plan.costs.name);
        report::plot(plan, res, p, &title, published)?;
    }
    if let (Some(p), Some(t)) = (&out.trace, &res.trace) {
        // Streamed: a capped trace is some 3 million events, too many to
        // hold as one string.
        create_parent(p)?;
        let cannot = |e: std::io::Error| format!("cannot write {}: {e}", p.display());
        let file = std::fs::File::create(p).map_err(cannot)?;
        t.write_json(std::io::BufWriter::new(file)).map_err(cannot)?;
        if let Some(note) = t.cut_note() {
            eprintln!("cfs-sim: note: {note}");
        }
    }
    if out.stats {
        let sim: f64 = res.runs.iter().map(|r| r.end_ns as f64 / 1e9).sum();
        let events: u64 = res.runs.iter().map(|r| r.events).sum();
        eprintln!(
            "stats: {} runs, {sim:.2} simulated s in {wall:.2} wall s: {:.1} sim-s per wall-s, {:.2} M events/s",
            res.runs.len(),
            sim / wall.max(1e-9),
            events as f64 / wall.max(1e-9) / 1e6
        );
    }
    Ok(())
}

/// The `--switch` times no run reached.
pub fn unreached_changes(plan: &Plan, res: &Results) -> Vec<u64> {
    let starts = report::phase_starts(plan);
    starts.into_iter().filter(|&at| at > 0 && !res.runs.iter().any(|r| r.phases.iter().any(|p| p.0 == at))).collect()
}

/// Output options that depend on the plan, checked before anything runs.
fn check_out(plan: &Plan, out: &OutArgs) -> Result<(), String> {
    if out.csv.as_deref() == Some(Path::new("-")) && out.json.as_deref() == Some(Path::new("-")) {
        return Err("--csv - and --json both write to stdout: give one of them a file".into());
    }
    // `--csv -` prints the CSV in place of the table, so the options that
    // only decorate the table would be dropped without a word.
    if out.csv.as_deref() == Some(Path::new("-")) {
        let table_only = [
            ("--spread", out.spread),
            ("--relative", out.relative),
            ("--significance", out.significance),
            ("--waits", out.waits),
            ("--tasks", out.tasks),
        ];
        if let Some((flag, _)) = table_only.iter().find(|(_, on)| *on) {
            return Err(format!("{flag} adds to the table, which --csv - replaces: write the CSV to a file instead"));
        }
    }
    if out.relative && plan.columns.len() < 2 {
        return Err("--relative compares columns with the first one: give two or more configurations \
                    (--config or --sweep)"
            .into());
    }
    if out.significance && plan.columns.len() < 2 {
        return Err("--significance tests columns against the first one: give two or more configurations \
                    (--config or --sweep)"
            .into());
    }
    if out.significance && plan.runs_per_cell() < 2 {
        return Err("--significance compares the runs of two cells: give --runs 2 or more (5 runs can show \
                    p=0.008; one run, or --replay, cannot be tested)"
            .into());
    }
    check_files(out)
}

/// The output files, checked before anything runs, so that a sweep does
/// not end in "cannot write" after its last run: a plot's format, and that
/// each file can be created where it is asked for.
fn check_files(out: &OutArgs) -> Result<(), String> {
    if let Some(p) = &out.plot {
        report::plot_format(p)?;
    }
    let files = out.files();
    for (i, (flag, p)) in files.iter().enumerate() {
        if let Some((other, _)) = files[..i].iter().find(|(_, q)| same_path(p, q)) {
            return Err(format!("{other} and {flag} both name {}: give each output its own file", p.display()));
        }
        check_writable(p)?;
    }
    Ok(())
}

/// Refuses an output option naming the input file `input` (`run w.toml
/// --csv w.toml` would replace the workload with its results).
fn check_not_overwritten(input: &Path, out: &OutArgs) -> Result<(), String> {
    for (flag, p) in out.files() {
        if same_path(p, input) {
            return Err(format!("{flag} {} would overwrite the input file", p.display()));
        }
    }
    Ok(())
}

/// Two paths naming one file: equal as given, or once resolved (links,
/// `./`, `..`; a file yet to be made by its directory's resolved path).
fn same_path(a: &Path, b: &Path) -> bool {
    fn resolved(p: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(p).ok().or_else(|| {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
        })
    }
    a == b || matches!((resolved(a), resolved(b)), (Some(x), Some(y)) if x == y)
}

/// Whether a file can be written at `path`: not a directory, its
/// directory exists or can be made, and a file can be opened there. A
/// file made only to find that out is removed again.
fn check_writable(path: &Path) -> Result<(), String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    if path.is_dir() {
        return Err(cannot(&"it is a directory"));
    }
    create_parent(path)?;
    let existed = path.exists();
    std::fs::OpenOptions::new().append(true).create(true).open(path).map_err(|e| cannot(&e))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

fn bench(workload: Workload, a: &BenchArgs) -> Result<(), String> {
    run_plan(&plan_for(workload, a)?, a)
}

/// Runs a plan and writes what `a` asks for.
fn run_plan(plan: &Plan, a: &BenchArgs) -> Result<(), String> {
    check_out(plan, &a.out)?;
    let (res, wall) = execute(plan, a.out.jobs)?;
    output(plan, &res, &a.out, "cfs-sim", wall, None)
}

/// The eight columns of the seed experiment. The 2.6.26-rc4 ones are built
/// as the 2008 testers' kernels most likely were: CONFIG_FAIR_GROUP_SCHED
/// by user, kept from a 2.6.25 configuration, with pgbench and the
/// postmaster one user (`calibration::TESTERS_BUILD`; docs/CALIBRATION.md
/// §1). 2.6.26 final with one user's tasks in one group schedules as
/// without groups.
pub fn seed_specs() -> Vec<SchedSpec> {
    let rc4 = SchedSpec::profile("2.6.26-rc4").with_items(calibration::TESTERS_BUILD).expect("a valid build");
    let fin = SchedSpec::profile("2.6.26");
    [
        (&rc4, "name=895"),
        (&rc4, "name=863,features=863"),
        (&rc4, "name=861,features=861"),
        (&rc4, "name=893,features=893"),
        (&rc4, "name=waker,patch=waker"),
        (&rc4, "name=affinity-fix,patch=affinity-fix"),
        (&fin, "name=2.6.26"),
        (&fin, "name=2.6.26+last-preempter,patch=last-preempter"),
    ]
    .iter()
    .map(|(b, s)| b.with_items(s).unwrap_or_else(|_| (*b).clone()))
    .collect()
}

/// What the seed run's plot draws beside the model: each column's published
/// values where ../shared/data has them (`calibration::published_for`).
fn seed_published() -> report::Published<'static> {
    report::Published {
        source: "published (Greg Smith, 2008)".into(),
        series: seed_specs().iter().map(|s| calibration::published_for(s).map(|c| c.values)).collect(),
    }
}

/// `specs` with every `--set` item appended to each column's own settings
/// (the seed and calibration columns set none of their own).
fn with_sets(mut specs: Vec<SchedSpec>, sets: &[String]) -> Result<Vec<SchedSpec>, String> {
    let sets = parse_sets(sets)?;
    for s in &mut specs {
        s.sets.extend(sets.iter().cloned());
    }
    Ok(specs)
}

/// What the seed experiment's header says of its build: Greg Smith's
/// (group scheduling by user) unless a `--set group_sched=` overrides it,
/// and the `--set` items.
fn seed_what(sets: &[String]) -> String {
    let build = if sets.iter().any(|s| s.trim_start().starts_with("group_sched")) {
        ""
    } else {
        ", built with group scheduling by user"
    };
    format!("2.6.26-rc4 = the features table's 2.6.26.git{build}{}", sets_note(sets))
}

/// What the table's header adds for `--set` items: "" or "; every column
/// with hz=1000 nohz=1".
fn sets_note(sets: &[String]) -> String {
    if sets.is_empty() { String::new() } else { format!("; every column with {}", sets.join(" ")) }
}

/// The seed experiment's plan.
pub fn seed_plan(a: &SeedArgs) -> Result<Plan, String> {
    let host = parse_host("q6600")?;
    let columns = with_sets(seed_specs(), &a.sets)?.iter().map(|s| s.resolve(&host)).collect::<Result<Vec<_>, _>>()?;
    let clients = match &a.clients {
        Some(c) => parse_clients(c)?,
        None => SELECTTEST_CLIENTS.to_vec(),
    };
    check_runs(a.runs, Some(a.transactions), &clients)?;
    let irqs = a.faults.loads(&host)?;
    let slow = a.faults.slowdowns(&host)?;
    let plan = Plan {
        costs: a.cost.for_host("q6600", &host)?,
        host,
        workload: Workload::Pgbench(Default::default()).with_costs(&a.cost.settings()?)?,
        opts: WorkloadOpts { transactions: Some(a.transactions), ..WorkloadOpts::default() },
        columns,
        clients,
        runs: a.runs,
        seeds: a.seeds.seeds(),
        trace: a.out.trace.is_some(),
        changes: Vec::new(),
        irqs,
        slow,
    };
    plan.check_faults()?;
    Ok(plan)
}

/// Issue 5's two fidelity figures as the seed run prints them ("vs
/// pgbench-q6600-features.csv (...): median |error| 7.4%, ordering
/// agreement 97% (57/59 pairs)"), or None when the run lacks the cells.
fn fidelity_line(plan: &Plan, res: &Results) -> Option<String> {
    let (med, frac, agree, pairs) = calibration::fidelity(plan, res);
    med.is_finite().then(|| {
        format!(
            "vs {} (895, 863, 861, 893, waker at 1,2,4,8,15,30,60): median |error| {:.1}%, ordering agreement {:.0}% ({agree}/{pairs} pairs)",
            calibration::FEATURES.file,
            med * 100.0,
            frac * 100.0
        )
    })
}

/// `--seeds 1-8` → [1, ..., 8]: base seeds, at most 1,000 of them, each
/// once (a repeated seed would count one result as two confirmations).
pub fn parse_seed_list(s: &str) -> Result<Vec<u64>, String> {
    let seeds = parse_ranges(s, 1000)
        .ok_or_else(|| format!("bad seed list {s:?} (expected e.g. 1-8 or 3,7,11; at most 1000 seeds)"))?;
    match first_repeat(&seeds) {
        Some(x) => Err(format!("bad seed list {s:?}: seed {x} given twice")),
        None => Ok(seeds),
    }
}

/// `seed --seeds LIST`: the experiment at each base seed, each seed's
/// fidelity and shape lines, then how many seeds met each shape.
fn seed_sweep(a: &SeedArgs, list: &str) -> Result<(), String> {
    let bases = parse_seed_list(list)?;
    let mut plan = seed_plan(a)?;
    say(&format!(
        "# seed experiment ({}) at {} base seed(s), {} run(s) per cell\n",
        seed_what(&a.sets),
        bases.len(),
        plan.runs
    ))?;
    // Per shape, in seed_shapes' order: its criterion and the seeds that
    // met it, missed it, or could not judge it.
    let mut tally: Vec<(&'static str, Vec<u64>, Vec<u64>)> = Vec::new();
    let start = Instant::now();
    for &b in &bases {
        plan.seeds = Seeds::Derived(b);
        let (res, _) = execute(&plan, a.out.jobs)?;
        let mut text = String::new();
        if let Some(line) = fidelity_line(&plan, &res) {
            text += &format!("seed {b}: {line}\n");
        }
        for (i, shape) in calibration::seed_shapes(&plan, &res).into_iter().enumerate() {
            text += &format!("seed {b}: shape: {shape}\n");
            if tally.len() <= i {
                tally.push((shape.what, Vec::new(), Vec::new()));
            }
            match shape.met {
                Some(true) => tally[i].1.push(b),
                Some(false) => tally[i].2.push(b),
                None => {}
            }
        }
        say(&text)?;
    }
    let mut summary = String::new();
    for (what, met, missed) in &tally {
        let judged = met.len() + missed.len();
        let seeds = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        summary += &format!("# over the seeds: {what}: met at {} of {judged}", met.len());
        if !missed.is_empty() {
            let s = if missed.len() == 1 { "" } else { "s" };
            summary += &format!(" (not at seed{s} {})", seeds(missed));
        }
        summary += "\n";
    }
    say(&summary)?;
    eprintln!("({} base seeds in {:.1} s)", bases.len(), start.elapsed().as_secs_f64());
    Ok(())
}

fn seed(a: &SeedArgs) -> Result<(), String> {
    if let Some(list) = &a.seed_list {
        return seed_sweep(a, list);
    }
    let plan = seed_plan(a)?;
    let mut out = a.out.clone();
    if out.plot.is_none() {
        out.plot = Some(PathBuf::from("out/seed.svg"));
    }
    check_out(&plan, &out)?;
    let (res, wall) = execute(&plan, a.out.jobs)?;
    let published = seed_published();
    let what = format!("seed experiment ({})", seed_what(&a.sets));
    output(&plan, &res, &out, &what, wall, Some(&published))?;
    if a.out.plot.is_none() {
        // The PNG too, labelled with the embedded font.
        report::plot(
            &plan,
            &res,
            Path::new("out/seed.png"),
            "pgbench -S on the Q6600: the model, and published results dashed",
            Some(&published),
        )?;
        eprintln!("plots: out/seed.svg out/seed.png");
    }
    // The comparison with the features table and issue 5's shapes follow
    // the table; when stdout carries CSV or JSON instead they go to stderr,
    // so that the machine-readable stream stays parseable.
    let mut summary = String::new();
    if let Some(line) = fidelity_line(&plan, &res) {
        summary += &format!("# {line}\n");
    }
    for shape in calibration::seed_shapes(&plan, &res) {
        summary += &format!("# shape: {shape}\n");
    }
    if a.out.to_stdout() {
        eprint!("{summary}")
    } else {
        say(&summary)?
    }
    Ok(())
}

/// What `local` stands for in the `hosts` listing.
const LOCAL_DESCRIPTION: &str = "this machine, read from /sys (or give a directory holding a sysfs copy)";

fn hosts(a: &HostsArgs) -> Result<(), String> {
    if a.json {
        let mut list = Vec::new();
        for p in &PRESETS {
            let host = parse_host(p.name)?;
            list.push(serde_json::json!({
                "name": p.name, "description": p.description, "host": cfs_topology::host_to_json(&host)
            }));
        }
        list.push(serde_json::json!({ "name": LOCAL_HOST, "description": LOCAL_DESCRIPTION, "host": null }));
        let text = serde_json::to_string_pretty(&list).map_err(|e| e.to_string())?;
        return say(&format!("{text}\n"));
    }
    let mut list: String = PRESETS.iter().map(|p| format!("{:<11} {}\n", p.name, p.description)).collect();
    list.push_str(&format!("{LOCAL_HOST:<11} {LOCAL_DESCRIPTION}\n"));
    say(&list)
}

fn topology(a: &TopoArgs) -> Result<(), String> {
    let name = a.host.as_deref().or(a.host_opt.as_deref()).unwrap_or("q6600");
    let host = parse_host(name)?;
    let version = parse_profile(&a.profile)?;
    let cpus = |list: &Option<String>, what: &str| list.as_deref().map(|s| parse_cpus(s, &host, what)).transpose();
    if crate::experiment::parse_numa(&a.numa).is_none() {
        return Err(format!("--numa {}: not a valid value (auto, on or off)", a.numa));
    }
    if let Some(r) = &a.relax_domain_level {
        crate::experiment::parse_relax_domain_level(r).map_err(|e| format!("--relax-domain-level {r}: {e}"))?;
    }
    // The build a run's column would make (its patches' initialiser edits
    // and --sd-init's, the boot parameters, CONFIG_NUMA, then --sd-flags
    // written in), over
    // the CPUs asked for.
    let mut sets = vec![("numa".to_string(), a.numa.clone())];
    sets.extend(a.relax_domain_level.iter().map(|r| ("relax_domain_level".to_string(), r.clone())));
    for (name, level) in
        [("sched_mc_power_savings", &a.sched_mc_power_savings), ("sched_smt_power_savings", &a.sched_smt_power_savings)]
    {
        if let Some(l) = level {
            let flag = format!("--{}", name.replace('_', "-"));
            crate::experiment::parse_power_savings(l, version).map_err(|e| format!("{flag} {l}: {e}"))?;
            // Checked here, not left to the column's `--set` check, so the
            // error names the flag given.
            let smt = cfs_topology::PowerSavings::knob_of(name) == Some(true);
            if !cfs_topology::PowerSavings::knob_exists(&host, version, smt) {
                return Err(format!("{flag} {l}: {}", crate::experiment::no_knob_file(name, version, smt)));
            }
            sets.push((name.to_string(), l.clone()));
        }
    }
    let spec =
        SchedSpec { patches: a.patches.clone(), sd_flags: a.sd_flags.clone(), sets, ..SchedSpec::profile(&a.profile) };
    let column = spec.resolve(&host)?;
    let mut build = column.domain_build;
    if let Some(list) = &a.sd_init {
        let edits =
            crate::experiment::parse_sd_init(list, &column.config).map_err(|e| format!("--sd-init {list}: {e}"))?;
        build.options.init_flags = build.options.init_flags.with_overrides(&edits);
    }
    build.options.isolcpus = cpus(&a.isolcpus, "--isolcpus")?.unwrap_or_default();
    let online = cpus(&a.online, "--online")?.unwrap_or_else(|| host.all_cpus());
    if !online.contains(0) {
        // As `--switch T:offline=0` is refused: no run can get there.
        let list = a.online.as_deref().unwrap_or_default();
        return Err(format!("--online {list}: {}", crate::faults::CPU0_STAYS_UP));
    }
    let domains = build.build(&host, &column.config, online);
    if let Some((s, (w, ..))) = a.cost.settings()?.iter().find_map(|s| Some((s, s.workload_field()?))) {
        return Err(format!("--cost {s}: a {} parameter; topology shows the host's costs only", w.name()));
    }
    let costs = a.cost.for_host(name, &host)?;
    // The power-savings files this kernel makes on this host, and the
    // levels the domains were built with.
    let [mc, smt] = [false, true].map(|smt| cfs_topology::PowerSavings::knob_exists(&host, version, smt));
    let knobs = build.options.power_savings;
    if a.json {
        let v = serde_json::json!({
            "host": cfs_topology::host_to_json(&host),
            "domains": cfs_topology::domains_to_json(&domains),
            "power_savings": {
                "sched_mc_power_savings": mc.then_some(knobs.mc),
                "sched_smt_power_savings": smt.then_some(knobs.smt),
            },
            "costs": costs,
        });
        say(&format!("{}\n", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?))?;
    } else {
        let file = |exists: bool, level: u8| if exists { level.to_string() } else { "(no file)".into() };
        say(&format!(
            "{}sched domains ({version}; sched_mc_power_savings {}, sched_smt_power_savings {}):\n{}{}",
            cfs_topology::render_host_summary(&host),
            file(mc, knobs.mc),
            file(smt, knobs.smt),
            cfs_topology::render_kernel_debug(&domains),
            costs.render()
        ))?;
    }
    Ok(())
}

/// `cfs-sim costs`: the host's prices and every built-in workload's own
/// costs, each after the `--cost` settings that name it. A setting for a
/// part the listing leaves out is an error, as it would be on a run of
/// the other workload, rather than silently not shown.
fn costs(a: &CostsArgs) -> Result<(), String> {
    let settings = CostOpts { costs: a.costs.clone() }.settings()?;
    let what = a.what.as_deref();
    let workloads: Vec<CostedWorkload> = match what {
        None => CostedWorkload::ALL.to_vec(),
        Some("host") => vec![],
        Some(name) => match CostedWorkload::by_name(name) {
            Some(w) => vec![w],
            None if name == "hogs" => return Err("hogs has no costs of its own (its tasks only run)".into()),
            None => {
                let mut names = vec!["host"];
                names.extend(CostedWorkload::ALL.iter().map(|w| w.name()));
                let hint = suggest(name, &names).map(|n| format!(", did you mean {n:?}?")).unwrap_or_default();
                return Err(format!("costs: unknown part {name:?} (host, or one of {}){hint}", names[1..].join(", ")));
            }
        },
    };
    let listed: Vec<Workload> = workloads
        .iter()
        .map(|w| {
            let own: Vec<CostSetting> =
                settings.iter().filter(|s| s.workload_field().is_some_and(|(of, ..)| of == *w)).cloned().collect();
            w.shipped().with_costs(&own)
        })
        .collect::<Result<_, _>>()?;
    // With one part named, a setting for another is refused.
    if let Some(part) = what {
        let elsewhere = |s: &&CostSetting| match s.workload_field() {
            Some((of, ..)) => !workloads.contains(&of),
            None => part != "host",
        };
        if let Some(s) = settings.iter().find(elsewhere) {
            let of = s.workload_field().map_or("host", |(w, ..)| w.name());
            return Err(format!("--cost {s}: a {of} parameter, and this lists {part}"));
        }
    }
    let host_shown = what.is_none_or(|part| part == "host");
    // The host is read even when not shown, so that a bad --host is an
    // error everywhere; its name carries only the host's own settings.
    let host_settings: Vec<CostSetting> = settings.iter().filter(|s| !s.is_workload()).cloned().collect();
    let shipped = CostModel::for_host(&a.host, &parse_host(&a.host)?);
    let model = shipped.with(&host_settings);
    let host = host_shown.then_some(model);
    if a.json {
        let own: serde_json::Map<String, serde_json::Value> =
            listed.iter().filter_map(|w| Some((w.name(), w.own_costs()?))).collect();
        // Where each value comes from, as the listing's source column.
        let mut sources = serde_json::Map::new();
        if let Some(h) = &host {
            let by_field = h.field_sources(&shipped, &a.host).into_iter().map(|(f, s)| (f.to_string(), s.into()));
            sources.insert("host".into(), serde_json::Value::Object(by_field.collect()));
        }
        for w in &listed {
            let by_field = w.cost_sources().unwrap_or_default().into_iter().map(|(f, s)| (f.to_string(), s.into()));
            sources.insert(w.name(), serde_json::Value::Object(by_field.collect()));
        }
        let v = serde_json::json!({ "host": host, "workloads": own, "sources": sources });
        return say(&format!("{}\n", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?));
    }
    let mut text = host.map(|h| h.render_with_sources(&shipped, &a.host)).unwrap_or_default();
    for w in &listed {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&w.render_costs().unwrap_or_default());
    }
    text.push_str(&format!("\n{}\n", cfs_machine::costs::SOURCE_KEY));
    say(&text)
}

fn calibrate(a: &CalArgs) -> Result<(), String> {
    check_runs(a.runs, Some(a.transactions), &SELECTTEST_CLIENTS)?;
    if let Some(p) = &a.plot {
        report::plot_format(p)?;
    }
    let host = parse_host("q6600")?;
    let mut tables = vec![&calibration::FEATURES];
    if !a.features_only {
        tables.extend(calibration::OTHERS.iter());
    }
    // The published columns are found by their specs as the tables give
    // them, before any --set is appended.
    let specs = calibration::specs_for(&tables);
    let columns = with_sets(specs.clone(), &a.sets)?.iter().map(|s| s.resolve(&host)).collect::<Result<Vec<_>, _>>()?;
    let plan = Plan {
        costs: a.cost.for_host("q6600", &host)?,
        host,
        workload: Workload::Pgbench(Default::default()).with_costs(&a.cost.settings()?)?,
        opts: WorkloadOpts { transactions: Some(a.transactions), ..WorkloadOpts::default() },
        columns,
        clients: SELECTTEST_CLIENTS.to_vec(),
        runs: a.runs,
        seeds: Seeds::Derived(a.seed),
        trace: false,
        changes: Vec::new(),
        irqs: Vec::new(),
        slow: Vec::new(),
    };
    let (res, wall) = execute(&plan, a.jobs)?;
    if !a.sets.is_empty() {
        say(&format!("# every column with {}\n", a.sets.join(" ")))?;
    }
    let mut all = Vec::new();
    for t in &tables {
        let (text, errs) = calibration::compare_table(&plan, &res, t);
        say(&text)?;
        all.extend(errs);
    }
    let med = crate::experiment::median(&mut all.clone()).unwrap_or(f64::NAN);
    let mean = all.iter().sum::<f64>() / all.len().max(1) as f64;
    let (fm, ff, agree, pairs) = calibration::fidelity(&plan, &res);
    say(&format!(
        "overall: median |error| {:.1}%, mean |error| {:.1}% over {} points\n\
         fidelity (895, 863, 861, 893, waker at 1,2,4,8,15,30,60): median |error| {:.1}%, ordering {:.0}% ({agree}/{pairs})\n",
        med * 100.0,
        mean * 100.0,
        all.len(),
        fm * 100.0,
        ff * 100.0
    ))?;
    if let Some(p) = &a.plot {
        let published = report::Published {
            source: "published (../shared/data)".into(),
            series: specs.iter().map(|s| calibration::published_for(s).map(|c| c.values)).collect(),
        };
        report::plot(&plan, &res, p, "the model beside the published Q6600 tables (pgbench -S)", Some(&published))?;
    }
    eprintln!("({} runs in {wall:.1} s)", res.runs.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimError;

    /// A failed built-in run is replayed at its client count; a workload
    /// file's without one, since the file sets the counts.
    #[test]
    fn a_failed_run_says_how_to_replay_it() {
        let failed = RunFailed {
            config: "895".into(),
            clients: 15,
            run: 3,
            seed: 42,
            error: SimError::Stalled { at: 1, writers: 0 },
        };
        assert_eq!(replay_options(&Workload::builtin("pgbench").unwrap(), &failed), "--replay 42 --clients 15");
        let text = include_str!("../workloads/pingpong.toml");
        let file = Workload::File(Arc::new(parse_workload(text).unwrap()));
        assert_eq!(replay_options(&file, &failed), "--replay 42");
    }
}
