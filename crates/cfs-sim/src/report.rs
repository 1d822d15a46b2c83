//! Output: the table in the seed's layout (clients rows × configuration
//! columns, median of the runs), the long-form CSV, JSON, and plots.
//!
//! Every number is printed with fixed precision, so the same results give
//! byte-identical files.

use crate::dist::fmt_ns;
use crate::engine::TaskStat;
use crate::experiment::{Plan, Results, RunRecord, Seeds, median, range};
use crate::significance::rank_test_p;
use plotters::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Formats a throughput for the table.
fn cell(v: f64) -> String {
    if v >= 100.0 { format!("{v:.0}") } else { format!("{v:.2}") }
}

/// How the median table shows its cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStyle {
    /// Follow each cell with its run-to-run spread: half the range of the
    /// cell's runs as a percentage of its median (`11258 ±3%`), so that a
    /// difference between two columns can be read against the noise.
    pub spread: bool,
    /// Show every column after the first as the ratio of its median to the
    /// first column's median at the same client count (`x1.52`): the first
    /// column is the baseline a change is measured against.
    pub relative: bool,
    /// Follow every cell after the first column with the two-sided p-value
    /// of a Mann-Whitney U test of its runs against the first column's runs
    /// at the same client count (`p=0.008`, [`rank_test_p`]): how likely a
    /// difference at least this clear would be if the change did nothing.
    pub significance: bool,
}

/// The median table: a comment line, a header, one row per client count.
pub fn table(plan: &Plan, res: &Results, what: &str) -> String {
    table_with(plan, res, what, TableStyle::default())
}

/// What a table's cells hold: the median of the plan's runs, or the one
/// run that a `--replay` seed gave (`metric` is "tps " or empty).
fn per_cell(plan: &Plan, metric: &str) -> String {
    match plan.seeds {
        Seeds::Derived(_) => format!("median {metric}of {} run(s) per cell", plan.runs_per_cell()),
        Seeds::Exact(seed) => format!("{metric}of the run with seed {seed} (--replay)"),
    }
}

/// [`table`] with cells shown as `style` asks. A plan with `--switch`
/// changes gets one column per configuration and phase (`895 @0s`,
/// `895 @2s`): the throughput between one change time and the next.
pub fn table_with(plan: &Plan, res: &Results, what: &str, style: TableStyle) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "# {what}: {} on {}, {}",
        plan.workload.name(),
        plan.costs.name,
        per_cell(plan, &format!("{} ", res.metric.name))
    );
    // Pins change the run as much as a configuration does, so the header
    // names them.
    if let Some(m) = plan.opts.pin_client {
        let _ = write!(s, "; client side pinned to {m}");
    }
    if let Some(m) = plan.opts.pin_server {
        let _ = write!(s, "; server side pinned to {m}");
    }
    for irq in &plan.irqs {
        let _ = write!(s, "; interrupt load {irq}");
    }
    for x in &plan.slow {
        let _ = write!(s, "; slowed {x}");
    }
    let down: Vec<String> = plan
        .changes
        .iter()
        .filter(|c| c.at_ns == 0)
        .filter_map(|c| match c.setting {
            crate::engine::Setting::Offline(cpu) => Some(cpu.to_string()),
            _ => None,
        })
        .collect();
    if !down.is_empty() {
        let _ = write!(s, "; offline from 0s: CPU {}", down.join(", "));
    }
    let starts = phase_starts(plan);
    if starts.len() > 1 {
        let _ = write!(s, "; @T: from the setting change at T to the next");
    }
    body(&mut s, plan, &starts, starts.len() > 1, style, |ci, n, k| res.values(ci, n, k));
    s
}

/// The rest of a table after its comment line's own words: what `style`
/// adds to that line, then a column per configuration, or per
/// configuration and phase when `phased`, under a header of labels, and a
/// row per client count, each cell from `values(column, clients, phase)`
/// as [`cell_text`] shows it, every column as wide as its widest entry
/// (at least 8).
fn body(
    s: &mut String,
    plan: &Plan,
    starts: &[u64],
    phased: bool,
    style: TableStyle,
    values: impl Fn(usize, u32, Option<usize>) -> Vec<f64>,
) {
    if style.relative {
        let _ = write!(s, "; columns after the first as a ratio to it");
    }
    if style.spread {
        let _ = write!(s, "; ± half the range of the runs, % of the median");
    }
    if style.significance {
        let _ = write!(s, "; p: two-sided Mann-Whitney U test of the runs against the first column's");
    }
    s.push('\n');
    let phases = if phased { starts.len() } else { 1 };
    let keys: Vec<(usize, Option<usize>)> =
        (0..plan.columns.len()).flat_map(|ci| (0..phases).map(move |k| (ci, phased.then_some(k)))).collect();
    let labels: Vec<String> = keys
        .iter()
        .map(|&(ci, k)| match k {
            Some(k) => format!("{} @{}", plan.columns[ci].label, fmt_ns(starts[k])),
            None => plan.columns[ci].label.clone(),
        })
        .collect();
    let cells: Vec<Vec<String>> = plan
        .clients
        .iter()
        .map(|&n| {
            keys.iter()
                .map(|&(ci, k)| {
                    let relative = ci > 0 && style.relative;
                    let significance = ci > 0 && style.significance;
                    let base = if relative || significance { values(0, n, k) } else { Vec::new() };
                    let vals = values(ci, n, k);
                    let mut t = cell_text(&vals, &base, relative, style.spread);
                    if significance {
                        t.push(' ');
                        t.push_str(&p_text(rank_test_p(&vals, &base)));
                    }
                    t
                })
                .collect()
        })
        .collect();
    let widest_cell = cells.iter().flatten().map(|c| c.chars().count()).max().unwrap_or(0);
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(8).max(8).max(widest_cell);
    let _ = write!(s, "{:>7}", "clients");
    for l in &labels {
        let _ = write!(s, "  {l:>width$}");
    }
    s.push('\n');
    for (&n, row) in plan.clients.iter().zip(&cells) {
        let _ = write!(s, "{n:>7}");
        for v in row {
            let _ = write!(s, "  {v:>width$}");
        }
        s.push('\n');
    }
}

/// What a run waited for the CPU, for [`waits_table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The run's mean runqueue wait (all tasks' schedstat `wait_sum` over
    /// their `wait_count`).
    Mean,
    /// The run's longest single wait, ended or open at its end.
    Longest,
}

/// A table of runqueue waits in µs, laid out like [`table_with`]: per
/// cell the median over its runs of each run's mean or longest wait
/// (cfs-core's CONFIG_SCHEDSTATS fields, start-up included). With
/// `--switch` the mean has a column per phase, of the waits that ended in
/// it; the longest is the whole run's (schedstats keep one maximum).
/// `relative` and `spread` work as for throughput.
pub fn waits_table(plan: &Plan, res: &Results, which: Wait, style: TableStyle) -> String {
    let mut s = String::new();
    let starts = phase_starts(plan);
    let phased = which == Wait::Mean && starts.len() > 1;
    let what = match (which, phased) {
        (Wait::Mean, false) => "mean runqueue wait (us, schedstats over the whole run)",
        (Wait::Mean, true) => "mean runqueue wait (us, schedstats; @T: waits ended from the change at T to the next)",
        (Wait::Longest, _) => "longest runqueue wait (us, schedstats over the whole run)",
    };
    let _ = write!(s, "# {what}, {}", per_cell(plan, ""));
    let of = |ci: usize, n: u32, phase: Option<usize>| -> Vec<f64> {
        res.runs
            .iter()
            .filter(|r| r.config == ci && r.clients == n)
            .filter_map(|r| match (which, phase) {
                (Wait::Mean, None) => Some(r.wait_avg_ns() / 1e3),
                (Wait::Mean, Some(k)) => r.phase_waits.get(k).copied().flatten().map(|w| w / 1e3),
                (Wait::Longest, _) => Some(r.wait_max_ns() as f64 / 1e3),
            })
            .collect()
    };
    body(&mut s, plan, &starts, phased, style, of);
    s
}

/// The start of each phase: 0 and every distinct change time after it, in
/// time order (just `[0]` without changes), as the engine cuts the runs.
pub fn phase_starts(plan: &Plan) -> Vec<u64> {
    let mut v: Vec<u64> = plan.changes.iter().map(|c| c.at_ns).collect();
    v.push(0);
    v.sort_unstable();
    v.dedup();
    v
}

/// One cell: the median of `vals` (or its ratio to the median of `base`),
/// then the spread if asked for; `-` for a cell without values.
fn cell_text(vals: &[f64], base: &[f64], relative: bool, spread: bool) -> String {
    let Some(m) = median(&mut vals.to_vec()) else { return "-".into() };
    let mut t = match (relative, median(&mut base.to_vec())) {
        (true, Some(b)) if b > 0.0 => format!("x{:.2}", m / b),
        (true, _) => "-".into(),
        (false, _) => cell(m),
    };
    if let (true, Some((lo, hi))) = (spread && m > 0.0, range(vals)) {
        let _ = write!(t, " ±{:.0}%", (hi - lo) / 2.0 / m * 100.0);
    }
    t
}

/// A p-value as a cell shows it: three decimals, `p<0.001` below that,
/// `p=-` where there is no test (a cell without runs).
fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "p<0.001".into(),
        Some(p) => format!("p={p:.3}"),
        None => "p=-".into(),
    }
}

/// Per-task schedstats of each cell's median run, tasks of one name
/// taken together (`postgres x60`; a workload file's instances `a#0`,
/// `a#1`... as `a`), in the order they first appear: their run,
/// runqueue-wait and sleep time as shares of the run's length (summed over
/// the group, so a group of 60 can exceed 1; a wait or sleep still going
/// at the end included), the waits they ended, the mean and longest wait,
/// their CPU changes, and where each ran longest (`cpu:tasks` pairs, CPU
/// by CPU: `1:7,2:1` is seven that ran mostly on CPU 1 and one on CPU 2).
/// What `/proc/<pid>/sched` and `perf sched latency` show of a real run.
/// A last line sums up the run's load balancing: its periodic and newly
/// idle passes, those that pulled and the tasks they moved, and those that
/// found a busiest queue and could move nothing from it (`lb_failed`).
pub fn tasks_table(plan: &Plan, res: &Results) -> String {
    let mut s = String::new();
    for (ci, col) in plan.columns.iter().enumerate() {
        for &n in &plan.clients {
            let Some(r) = res.median_run(ci, n) else { continue };
            let len = r.end_ns.max(1) as f64;
            let _ = writeln!(
                s,
                "# tasks of the median run: {} at {n} clients (run {}, seed {}, {:.3} s)",
                col.label,
                r.run,
                r.seed,
                r.end_ns as f64 / 1e9
            );
            let _ = writeln!(
                s,
                "{:<24} {:>5} {:>7} {:>7} {:>7} {:>9} {:>10} {:>10} {:>6}  mostly_on",
                "task", "count", "run", "wait", "asleep", "waits", "avg_wait", "max_wait", "moves"
            );
            let mut groups: Vec<(&str, Vec<&TaskStat>)> = Vec::new();
            for t in &r.tasks {
                let name = instance_of(&t.name);
                match groups.iter_mut().find(|g| g.0 == name) {
                    Some(g) => g.1.push(t),
                    None => groups.push((name, vec![t])),
                }
            }
            for (name, ts) in groups {
                let sum = |f: fn(&TaskStat) -> u64| ts.iter().map(|t| f(t)).sum::<u64>();
                let (waited, waits) = (sum(|t| t.wait_sum_ns), sum(|t| t.wait_count));
                // (A group that never waited shows 0 / 1.)
                let avg_us = waited as f64 / waits.max(1) as f64 / 1e3;
                let max_us = ts.iter().map(|t| t.longest_wait_ns()).max().unwrap_or(0) as f64 / 1e3;
                let _ = writeln!(
                    s,
                    "{:<24} {:>5} {:>7.3} {:>7.3} {:>7.3} {:>9} {:>8.1}us {:>8.1}us {:>6}  {}",
                    name.chars().take(24).collect::<String>(),
                    ts.len(),
                    sum(|t| t.runtime_ns) as f64 / len,
                    (waited + sum(|t| t.wait_open_ns)) as f64 / len,
                    (sum(|t| t.sleep_sum_ns) + sum(|t| t.sleep_open_ns)) as f64 / len,
                    waits,
                    avg_us,
                    max_us,
                    sum(|t| t.migrations),
                    main_cpus(&ts)
                );
            }
            let c = &r.counters;
            let _ = writeln!(
                s,
                "# balancer: {} periodic and {} newly idle passes: {} moved {} tasks; {} found a busiest queue \
                 and moved nothing",
                c.balance_periodic,
                c.balance_passes - c.balance_periodic,
                c.balance_pulled,
                c.balance_moved,
                c.balance_failed
            );
        }
    }
    s
}

/// Where a group's tasks ran longest, as `cpu:tasks` pairs in CPU order
/// (`1:7,2:1`); on a wide spread the first 8 CPUs, then `+N` for the N
/// other CPUs; a dash when none of them ran.
fn main_cpus(ts: &[&TaskStat]) -> String {
    const SHOWN: usize = 8;
    let mut on: BTreeMap<usize, usize> = BTreeMap::new();
    for cpu in ts.iter().filter_map(|t| t.main_cpu) {
        *on.entry(cpu).or_default() += 1;
    }
    if on.is_empty() {
        return "-".into();
    }
    let mut text: Vec<String> = on.iter().take(SHOWN).map(|(c, n)| format!("{c}:{n}")).collect();
    if on.len() > SHOWN {
        text.push(format!("+{}", on.len() - SHOWN));
    }
    text.join(",")
}

/// The task a workload file's instance `name#i` is an instance of.
fn instance_of(name: &str) -> &str {
    match name.rsplit_once('#') {
        Some((base, i)) if !base.is_empty() && !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

/// The long-form CSV: one line per run, with the columns
///
/// - `config`, `clients`, `run`, `seed`: the cell and the run's own seed
///   (`--replay` with that seed, the row's client count and its
///   configuration reproduces it);
/// - the workload's metric (`tps`, `mb_s`, ...) and `elapsed_s`, the
///   simulated length of the run;
/// - `cpuN_util`: each CPU's busy fraction; `max_cpu_share`: the busiest
///   CPU's share of all busy time (1/N when spread evenly, 1 when piled);
/// - the scheduler's decisions: `migrations`, `preemptions` (involuntary
///   switches), `affine_wakeups` (wake_affine pulled the wakee),
///   `wakeups`, `remote_wakeups` (woken on another CPU than the waker's),
///   `wakeup_preempts` (preemption checks, at a wakeup, a fork or a
///   balance pull, that rescheduled a busy CPU's task, counted when set:
///   several can set one reschedule, and a task that blocks before it
///   takes effect is switched out by its sleep, not counted in
///   `preemptions`, so this can exceed that), `tick_preempts`, `switches`,
///   `balance_passes`;
/// - `events`: engine events processed;
/// - `wait_avg_us`, `wait_max_us`: the mean and the longest runqueue wait
///   (schedstats, [`RunRecord::wait_avg_ns`], [`RunRecord::wait_max_ns`]);
/// - with `--switch`, the metric in each phase (`tps@0s`, `tps@2s`, ...).
pub fn csv(plan: &Plan, res: &Results) -> String {
    let ncpu = plan.host.nr_cpus();
    let mut s = String::new();
    let _ = write!(s, "config,clients,run,seed,{},elapsed_s", res.metric.name);
    for c in 0..ncpu {
        let _ = write!(s, ",cpu{c}_util");
    }
    s.push_str(
        ",max_cpu_share,migrations,preemptions,affine_wakeups,wakeups,remote_wakeups,wakeup_preempts,tick_preempts,\
         switches,balance_passes,events,wait_avg_us,wait_max_us",
    );
    // With --switch: the throughput of each phase, `tps@0s,tps@2s`.
    let starts = phase_starts(plan);
    let phased = starts.len() > 1;
    if phased {
        for &t in &starts {
            let _ = write!(s, ",{}@{}", res.metric.name, fmt_ns(t));
        }
    }
    s.push('\n');
    for r in &res.runs {
        let label = csv_field(&plan.columns[r.config].label);
        let _ = write!(s, "{label},{},{},{},{:.3},{:.6}", r.clients, r.run, r.seed, r.value, r.end_ns as f64 / 1e9);
        for u in &r.cpu_util {
            let _ = write!(s, ",{u:.4}");
        }
        let k = &r.counters;
        let _ = write!(
            s,
            ",{:.4},{},{},{},{},{},{},{},{},{},{},{:.3},{:.3}",
            r.max_cpu_share,
            k.migrations,
            r.preemptions,
            k.wake_affine,
            k.wakeups,
            k.wake_remote,
            k.preempt_wakeup,
            k.preempt_tick,
            r.switches,
            k.balance_passes,
            r.events,
            r.wait_avg_ns() / 1e3,
            r.wait_max_ns() as f64 / 1e3
        );
        if phased {
            for k in 0..starts.len() {
                match r.phases.get(k).map(|p| p.2).filter(|v| v.is_finite()) {
                    Some(v) => {
                        let _ = write!(s, ",{v:.3}");
                    }
                    None => s.push(','),
                }
            }
        }
        s.push('\n');
    }
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn run_json(plan: &Plan, r: &RunRecord) -> Value {
    json!({
        "config": plan.columns[r.config].label,
        "clients": r.clients,
        "run": r.run,
        "seed": r.seed,
        "value": r.value,
        "elapsed_s": r.end_ns as f64 / 1e9,
        "cpu_util": r.cpu_util,
        "max_cpu_share": r.max_cpu_share,
        "counters": r.counters,
        "switches": r.switches,
        "preemptions": r.preemptions,
        "events": r.events,
        "send_blocks": r.send_blocks,
        "select_races": r.select_races,
        "peak_unread": r.peak_unread,
        "irqs": r.irqs,
        "irq_task_ns": r.irq_task_ns,
        "wait_avg_ns": r.wait_avg_ns(),
        "wait_max_ns": r.wait_max_ns(),
        "tasks": r.tasks,
        "phases": r.phases.iter().zip(&r.phase_waits).map(|(&(from, to, v), w)| json!({
            "from_s": from as f64 / 1e9,
            "to_s": to as f64 / 1e9,
            "value": v.is_finite().then_some(v),
            "wait_avg_ns": w,
        })).collect::<Vec<_>>(),
    })
}

/// Everything as JSON: the setup, every run, and the medians.
pub fn json(plan: &Plan, res: &Results) -> Value {
    let configs: Vec<Value> = plan
        .columns
        .iter()
        .map(|c| {
            json!({
                "label": c.label,
                "profile": c.config.version.name(),
                "features": c.config.features.mask(),
                "patches": c.config.patches.iter().map(|p| p.name()).collect::<Vec<_>>(),
                "policy": c.policies.all.map(|p| format!("{p:?}").to_lowercase()),
                "client_policy": c.policies.client.map(|p| format!("{p:?}").to_lowercase()),
                "server_policy": c.policies.server.map(|p| format!("{p:?}").to_lowercase()),
                "client_nice": c.policies.client_nice,
                "server_nice": c.policies.server_nice,
                "hz": c.config.hz,
                "hres_timers": c.config.hres_timers,
                "nohz": c.config.nohz,
                "nr_cpus": c.config.nr_cpus,
                "preempt": c.config.preempt,
                "write_space_wakeups": c.sockets.write_space_wakeups,
                "poll_window": c.sockets.poll_window,
                "sndbuf": c.sockets.sndbuf,
                "tcp_low_latency": c.sockets.tcp_low_latency,
                "sd_flags": c.spec.sd_flags,
                // Every `--set` the column has, as given (boot options
                // such as isolcpus, cpusets, numa and sd_init included).
                "set": c.spec.sets.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
                // The column's own cost settings; the top level's `costs`
                // is the set every column starts from.
                "cost": c.costs.iter().map(ToString::to_string).collect::<Vec<_>>(),
                // The column's own interrupt loads; the top level's
                // `irq_loads` every column has.
                "irq": c.irqs.iter().map(ToString::to_string).collect::<Vec<_>>(),
                // The column's own slowdowns, after the top level's `slow`.
                "slow": c.slow.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        })
        .collect();
    let medians: Vec<Value> = plan
        .clients
        .iter()
        .map(|&n| {
            let row: Vec<Value> = (0..plan.columns.len()).map(|ci| json!(res.median(ci, n))).collect();
            // Each column's runs against the first column's (null for the
            // first): the p-value `--significance` prints.
            let base = res.values(0, n, None);
            let p: Vec<Value> = (0..plan.columns.len())
                .map(|ci| json!(if ci == 0 { None } else { rank_test_p(&res.values(ci, n, None), &base) }))
                .collect();
            json!({"clients": n, "values": row, "p_vs_first": p})
        })
        .collect();
    let mut doc = json!({
        "host": plan.host.name(),
        "costs": plan.costs,
        "workload": plan.workload.name(),
        // The workload's own costs every column starts from (a column's
        // `cost` list names what it changed); null for hogs and files.
        "workload_costs": plan.workload.own_costs(),
        "metric": res.metric.name,
        "runs_per_cell": plan.runs_per_cell(),
        // What the workload was told, so that a run can be repeated from
        // its record: pgbench's total transactions or the run's simulated
        // length (ns), the pins, nice levels and message loops.
        "workload_options": {
            // The transactions and the length as the run used them
            // (pgbench's default 20,000, a timed workload's default 1 s;
            // null where the run ended with its work); the rest as given.
            "transactions": effective_transactions(plan),
            "duration_ns": plan.workload.known_duration_ns(&plan.opts),
            "pin_client": plan.opts.pin_client.map(|m| m.to_string()),
            "pin_server": plan.opts.pin_server.map(|m| m.to_string()),
            "nice": plan.opts.nice,
            "loops": plan.opts.loops,
            "pipe": plan.opts.pipe,
        },
        "configs": configs,
        "switches": plan.changes.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
        "irq_loads": plan.irqs.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "slow": plan.slow.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "medians": medians,
        "runs": res.runs.iter().map(|r| run_json(plan, r)).collect::<Vec<_>>(),
    });
    // The base seed, or the one seed every run replayed (`--replay`).
    match plan.seeds {
        Seeds::Derived(base) => doc["seed"] = json!(base),
        Seeds::Exact(seed) => doc["replay"] = json!(seed),
    }
    doc
}

/// pgbench's total transactions as the run used them (the default when
/// none was given and the run is not timed); None for other workloads.
fn effective_transactions(plan: &Plan) -> Option<u64> {
    match plan.workload {
        crate::workloads::Workload::Pgbench(_) if plan.opts.duration_ns.is_none() => {
            Some(plan.opts.transactions.unwrap_or(crate::workloads::DEFAULT_PGBENCH_TRANSACTIONS))
        }
        _ => None,
    }
}

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Width and height of every plot, pixels.
const PLOT_SIZE: (u32, u32) = (900, 600);

/// The image formats a plot can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotFormat {
    /// Scalable vector graphics.
    Svg,
    /// A 900 x 600 RGB bitmap.
    Png,
}

/// The plot format a file name asks for, by its extension (any case).
pub fn plot_format(path: &Path) -> Result<PlotFormat, String> {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase().as_str() {
        "svg" => Ok(PlotFormat::Svg),
        "png" => Ok(PlotFormat::Png),
        _ => Err(format!("plot file {} must end in .svg or .png", path.display())),
    }
}

/// Published results drawn beside the model's lines: for each of the
/// plan's columns, the values measured for that configuration, if any,
/// dashed in the column's colour.
#[derive(Clone, Debug)]
pub struct Published<'a> {
    /// Where the values come from, for the legend.
    pub source: String,
    /// One entry per plan column: (clients, value) points.
    pub series: Vec<Option<&'a [(u32, f64)]>>,
}

impl Published<'_> {
    /// Column `ci`'s points up to `xmax` clients (none without a series).
    fn points(&self, ci: usize, xmax: f64) -> Vec<(f64, f64)> {
        let series = self.series.get(ci).copied().flatten().unwrap_or(&[]);
        series.iter().filter(|&&(n, _)| f64::from(n) <= xmax).map(|&(n, v)| (f64::from(n), v)).collect()
    }
}

/// Creates `dir` and its missing parents, as an output path asks; when a
/// part of the path is a file rather than a directory, says which.
pub fn make_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| {
        match dir.ancestors().find(|a| !a.as_os_str().is_empty() && a.exists() && !a.is_dir()) {
            Some(file) => format!("cannot create directory {}: {} is not a directory", dir.display(), file.display()),
            None => format!("cannot create directory {}: {e}", dir.display()),
        }
    })
}

/// Draws throughput against clients, one line per configuration, into an
/// SVG or PNG (by extension), with `published` results dashed beside them.
pub fn plot(
    plan: &Plan,
    res: &Results,
    path: &Path,
    title: &str,
    published: Option<&Published<'_>>,
) -> Result<(), String> {
    let format = plot_format(path)?;
    let err = |e: &dyn std::fmt::Display| format!("cannot write plot {}: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_dir(dir).map_err(|e| err(&e))?;
    }
    // Text is laid out with ab_glyph (both backends), which knows only
    // registered fonts: register the embedded one (again is harmless).
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).map_err(|_| err(&"bad font"))?;
    match format {
        PlotFormat::Svg => {
            draw(SVGBackend::new(path, PLOT_SIZE).into_drawing_area(), plan, res, title, published).map_err(|e| err(&e))
        }
        PlotFormat::Png => {
            // Rendered into memory, then encoded by the png crate (plotters'
            // own encoder would pull in the whole image crate).
            let (w, h) = PLOT_SIZE;
            let mut rgb = vec![0u8; (w * h * 3) as usize];
            draw(BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area(), plan, res, title, published)
                .map_err(|e| err(&e))?;
            write_png(path, w, h, &rgb).map_err(|e| err(&e))
        }
    }
}

/// Writes 8-bit RGB pixels as a PNG file.
fn write_png(path: &Path, w: u32, h: u32, rgb: &[u8]) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())
}

/// Column `ci`'s cells whose runs differ, as (clients, lowest, median,
/// highest): the bars a plot draws behind the medians.
fn run_bars(plan: &Plan, res: &Results, ci: usize) -> Vec<(f64, f64, f64, f64)> {
    plan.clients
        .iter()
        .filter_map(|&n| {
            let vals = res.values(ci, n, None);
            let (lo, hi) = range(&vals).filter(|(lo, hi)| hi > lo)?;
            Some((f64::from(n), lo, median(&mut vals.clone())?, hi))
        })
        .collect()
}

fn draw<DB: DrawingBackend>(
    area: DrawingArea<DB, plotters::coord::Shift>,
    plan: &Plan,
    res: &Results,
    title: &str,
    published: Option<&Published<'_>>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: &dyn std::fmt::Display| x.to_string();
    area.fill(&WHITE).map_err(|x| e(&x))?;
    let xmax = plan.clients.iter().copied().max().unwrap_or(1) as f64;
    let published_points = |ci: usize| published.map(|p| p.points(ci, xmax)).unwrap_or_default();
    let ymax = (0..plan.columns.len())
        .flat_map(|ci| plan.clients.iter().filter_map(move |&n| res.median(ci, n)))
        .chain((0..plan.columns.len()).flat_map(|ci| run_bars(plan, res, ci).into_iter().map(|b| b.3)))
        .chain((0..plan.columns.len()).flat_map(|ci| published_points(ci).into_iter().map(|(_, v)| v)))
        .fold(0.0f64, f64::max)
        .max(1.0)
        // Head room for the legend in the upper right.
        * 1.6;
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax * 1.02, 0.0..ymax)
        .map_err(|x| e(&x))?;
    let ylabel = |y: &f64| if ymax >= 100.0 { format!("{y:.0}") } else { format!("{y:.2}") };
    chart
        .configure_mesh()
        .x_desc("clients")
        .y_desc(res.metric.name.as_str())
        // Client counts are integers: label only integral ticks. A tick's
        // value is a sum of float steps (2.0 can come out as 1.9999999), so
        // "integral" allows for rounding.
        .x_label_formatter(&|x| if (x - x.round()).abs() < 1e-6 { format!("{:.0}", x.round()) } else { String::new() })
        .y_label_formatter(&ylabel)
        .draw()
        .map_err(|x| e(&x))?;
    for (ci, col) in plan.columns.iter().enumerate() {
        let color = Palette99::pick(ci).to_rgba();
        let pts: Vec<(f64, f64)> =
            plan.clients.iter().filter_map(|&n| res.median(ci, n).map(|v| (n as f64, v))).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|x| e(&x))?
            .label(col.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|x| e(&x))?;
        // The runs' range behind each median: a bistable cell ("luck of
        // the draw") shows as a long bar.
        let bar_style = color.mix(0.6).stroke_width(1);
        chart
            .draw_series(
                run_bars(plan, res, ci)
                    .into_iter()
                    .map(|(x, lo, m, hi)| ErrorBar::new_vertical(x, lo, m, hi, bar_style, 6)),
            )
            .map_err(|x| e(&x))?;
        let measured = published_points(ci);
        if !measured.is_empty() {
            chart
                .draw_series(DashedLineSeries::new(measured.clone(), 6, 4, color.stroke_width(2)))
                .map_err(|x| e(&x))?;
            chart.draw_series(measured.iter().map(|&p| Cross::new(p, 4, color.stroke_width(1)))).map_err(|x| e(&x))?;
        }
    }
    if let Some(p) = published.filter(|p| p.series.iter().any(Option::is_some)) {
        // A legend entry of its own: dashed lines and crosses are the
        // published values, in the colour of the configuration measured.
        chart
            .draw_series(LineSeries::new(Vec::<(f64, f64)>::new(), BLACK))
            .map_err(|x| e(&x))?
            .label(p.source.clone())
            .legend(|(x, y)| {
                plotters::element::DashedPathElement::new(vec![(x, y), (x + 20, y)], 6, 4, BLACK.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| e(&x))?;
    area.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{TaskStat, instance_of, main_cpus};

    /// `mostly_on`: CPU:count pairs in CPU order; past 8 CPUs a `+N` for the
    /// rest; a dash when no task of the group ran.
    #[test]
    fn main_cpus_count_tasks_by_cpu() {
        let on = |cpus: &[Option<usize>]| {
            let ts: Vec<TaskStat> = cpus.iter().map(|&c| TaskStat { main_cpu: c, ..TaskStat::default() }).collect();
            main_cpus(&ts.iter().collect::<Vec<_>>())
        };
        assert_eq!(on(&[Some(3), Some(1), Some(3), None]), "1:1,3:2");
        assert_eq!(on(&[None, None]), "-");
        let wide: Vec<Option<usize>> = (0..11).map(Some).chain([Some(2)]).collect();
        assert_eq!(on(&wide), "0:1,1:1,2:2,3:1,4:1,5:1,6:1,7:1,+3");
        // Exactly 8 CPUs: all shown, nothing left to count.
        let eight: Vec<Option<usize>> = (0..8).map(Some).collect();
        assert_eq!(on(&eight), "0:1,1:1,2:1,3:1,4:1,5:1,6:1,7:1");
    }

    /// Only a `#` followed by digits, after a name, marks an instance.
    #[test]
    fn instance_names_drop_their_number() {
        assert_eq!(instance_of("w#0"), "w");
        assert_eq!(instance_of("a#b#12"), "a#b");
        assert_eq!(instance_of("postgres"), "postgres");
        for whole in ["#3", "a#", "a#b", "a#1x"] {
            assert_eq!(instance_of(whole), whole);
        }
    }
}
