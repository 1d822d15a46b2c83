//! The outputs: the median table in the seed's layout, the long-form CSV and
//! the JSON, checked against the runs they are printed from.

mod common;

use cfs_sim::experiment::{Plan, Results};
use cfs_sim::report;
use common::{pgbench_plan, run};

/// Two configurations, client counts 1 and 3, three runs per cell: small
/// enough for a debug build.
fn small() -> (Plan, Results) {
    let plan = pgbench_plan(&["name=895,features=895", "name=861,features=861"], &[1, 3], 300, 3, 7);
    let res = run(&plan);
    (plan, res)
}

/// The median computed here, independently of `Results::median`: the middle
/// one of the cell's three values.
fn middle_of_three(res: &Results, config: usize, clients: u32) -> f64 {
    let mut v: Vec<f64> =
        res.runs.iter().filter(|r| r.config == config && r.clients == clients).map(|r| r.value).collect();
    assert_eq!(v.len(), 3);
    v.sort_by(f64::total_cmp);
    v[1]
}

#[test]
fn table_prints_each_cells_median_under_its_column() {
    let (plan, res) = small();
    let text = report::table(&plan, &res, "seed");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# seed: pgbench on q6600, median tps of 3 run(s) per cell");
    assert_eq!(lines[1].split_whitespace().collect::<Vec<_>>(), ["clients", "895", "861"]);
    assert_eq!(lines.len(), 2 + plan.clients.len());
    for (row, &n) in lines[2..].iter().zip(&plan.clients) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], n.to_string());
        for ci in 0..2 {
            // Throughputs of 100 and more are printed as whole numbers.
            let want = format!("{:.0}", middle_of_three(&res, ci, n));
            assert_eq!(cells[1 + ci], want, "column {ci}, {n} clients");
        }
    }
    // Right-aligned columns: every row as wide as the header.
    assert!(lines[1..].iter().all(|l| l.len() == lines[1].len()), "{text}");
}

#[test]
fn table_cells_print_small_values_with_decimals_and_empty_cells_as_a_dash() {
    let (plan, mut res) = small();
    // Overwrite the measured values with known ones: column 0 at 1 client
    // gets 12.5 / 99.5 / 50.0 (median 50.0, below 100: two decimals), column
    // 1 at 1 client 100.0 three times (at the boundary: a whole number).
    let mut k = [0usize; 2];
    for r in res.runs.iter_mut().filter(|r| r.clients == 1) {
        let vals = if r.config == 0 { [12.5, 99.5, 50.0] } else { [100.0; 3] };
        r.value = vals[k[r.config]];
        k[r.config] += 1;
    }
    // Column 1 at 3 clients has no runs at all.
    res.runs.retain(|r| !(r.config == 1 && r.clients == 3));
    let text = report::table(&plan, &res, "t");
    let rows: Vec<Vec<&str>> = text.lines().skip(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0], ["1", "50.00", "100"]);
    assert_eq!(rows[1][2], "-");
}

#[test]
fn spread_and_relative_cells_are_computed_from_the_runs() {
    use report::TableStyle;
    let (plan, mut res) = small();
    // Known values: at 1 client column 0 (the baseline) ran 1000 / 1100 /
    // 1200 and column 1 ran 2400 / 3000 / 2100; at 3 clients every run of
    // both columns gave 500.
    let mut k = [0usize; 2];
    for r in res.runs.iter_mut() {
        r.value = match (r.clients, r.config) {
            (1, 0) => [1000.0, 1100.0, 1200.0][k[0]],
            (1, _) => [2400.0, 3000.0, 2100.0][k[1]],
            _ => 500.0,
        };
        if r.clients == 1 {
            k[r.config] += 1;
        }
    }
    let rows = |style| -> Vec<Vec<String>> {
        report::table_with(&plan, &res, "t", style)
            .lines()
            .skip(2)
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect()
    };
    // Spread: half the range over the median. Column 0 at 1 client:
    // (1200 - 1000) / 2 / 1100 = 9.1% -> "9%"; column 1: (3000 - 2100) / 2 /
    // 2400 = 18.75% -> "19%"; identical runs -> "0%".
    let spread = rows(TableStyle { spread: true, ..Default::default() });
    assert_eq!(spread[0], ["1", "1100", "±9%", "2400", "±19%"]);
    assert_eq!(spread[1], ["3", "500", "±0%", "500", "±0%"]);
    // Relative: the first column as measured, the others over it: 2400 /
    // 1100 = 2.1818 -> "x2.18"; 500 / 500 -> "x1.00".
    let relative = rows(TableStyle { relative: true, ..Default::default() });
    assert_eq!(relative[0], ["1", "1100", "x2.18"]);
    assert_eq!(relative[1], ["3", "500", "x1.00"]);
    // Both together, and the header says what the cells are.
    let both = report::table_with(&plan, &res, "t", TableStyle { spread: true, relative: true, significance: false });
    assert!(both.lines().next().unwrap().contains("ratio to it"), "{both}");
    assert!(both.lines().next().unwrap().contains("half the range"), "{both}");
    assert_eq!(
        rows(TableStyle { spread: true, relative: true, significance: false })[0],
        ["1", "1100", "±9%", "x2.18", "±19%"]
    );
    // Significance: column 1's three runs at 1 client all lie above the
    // baseline's, the most extreme of the C(6, 3) = 20 ways to split six
    // runs three and three, on either side: p = 2/20 = 0.100. At 3 clients
    // every run is 500, so nothing differs: p = 1. The first column has
    // nothing to be tested against.
    let sig = rows(TableStyle { significance: true, ..Default::default() });
    assert_eq!(sig[0], ["1", "1100", "2400", "p=0.100"]);
    assert_eq!(sig[1], ["3", "500", "500", "p=1.000"]);
    let head = report::table_with(&plan, &res, "t", TableStyle { significance: true, ..Default::default() });
    assert!(head.lines().next().unwrap().contains("Mann-Whitney"), "{head}");
    // The same p-values in JSON, null for the baseline.
    let doc = report::json(&plan, &res);
    assert_eq!(doc["medians"][0]["p_vs_first"], serde_json::json!([null, 0.1]));
    assert_eq!(doc["medians"][1]["p_vs_first"], serde_json::json!([null, 1.0]));
    // The plain table is unchanged by the style type's default.
    assert_eq!(report::table_with(&plan, &res, "t", TableStyle::default()), report::table(&plan, &res, "t"));
}

/// Splits one CSV line into fields, honouring double quotes.
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn csv_has_one_line_per_run_and_quotes_labels_that_need_it() {
    let (mut plan, res) = small();
    plan.columns[0].label = "a,\"b\"".into();
    let text = report::csv(&plan, &res);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "config,clients,run,seed,tps,elapsed_s,cpu0_util,cpu1_util,cpu2_util,cpu3_util,max_cpu_share,migrations,\
         preemptions,affine_wakeups,wakeups,remote_wakeups,wakeup_preempts,tick_preempts,switches,balance_passes,events,\
         wait_avg_us,wait_max_us"
    );
    // 2 configurations x 2 client counts x 3 runs.
    assert_eq!(lines.len(), 1 + 12);
    let width = fields(lines[0]).len();
    for (line, r) in lines[1..].iter().zip(&res.runs) {
        let f = fields(line);
        assert_eq!(f.len(), width, "{line}");
        assert_eq!(f[0], plan.columns[r.config].label);
        if r.config == 0 {
            assert!(line.starts_with("\"a,\"\"b\"\"\","), "{line}");
        }
        assert_eq!(f[1..4], [r.clients.to_string(), r.run.to_string(), r.seed.to_string()]);
        assert_eq!(f[4], format!("{:.3}", r.value));
        assert_eq!(f[11], r.counters.migrations.to_string());
        assert_eq!(f[width - 3], r.events.to_string());
        assert_eq!(f[width - 2], format!("{:.3}", r.wait_avg_ns() / 1e3));
        assert_eq!(f[width - 1], format!("{:.3}", r.wait_max_ns() as f64 / 1e3));
    }
}

#[test]
fn json_holds_the_setup_the_medians_and_every_run() {
    let (plan, res) = small();
    let j = report::json(&plan, &res);
    assert_eq!(j["host"], "Intel Core 2 Quad Q6600 (q6600)");
    assert_eq!(j["workload"], "pgbench");
    assert_eq!(j["metric"], "tps");
    assert_eq!(j["runs_per_cell"], 3);
    assert_eq!(j["configs"][1]["label"], "861");
    assert_eq!(j["configs"][1]["features"], 861);
    assert_eq!(j["configs"][0]["profile"], "2.6.26-rc4");
    for (i, &n) in plan.clients.iter().enumerate() {
        assert_eq!(j["medians"][i]["clients"], n);
        for ci in 0..2 {
            assert_eq!(j["medians"][i]["values"][ci].as_f64(), Some(middle_of_three(&res, ci, n)));
        }
    }
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), res.runs.len());
    for (jr, r) in runs.iter().zip(&res.runs) {
        assert_eq!(jr["config"], plan.columns[r.config].label.as_str());
        assert_eq!(jr["clients"], r.clients);
        assert_eq!(jr["value"].as_f64(), Some(r.value));
        assert_eq!(jr["events"], r.events);
        assert_eq!(jr["cpu_util"].as_array().unwrap().len(), 4);
    }
}

#[test]
fn run_records_derive_their_figures_from_the_run() {
    let (plan, res) = small();
    for r in &res.runs {
        // pgbench reports TPS including connection set-up: the 300
        // transactions over the whole simulated run.
        let tps = 300.0 / (r.end_ns as f64 / 1e9);
        assert!((r.value - tps).abs() < 1e-6 * tps, "{} vs {tps}", r.value);
        // Utilisation is busy time over the run; the busiest CPU's share is
        // its busy time over all busy time, i.e. max(util) / sum(util).
        assert_eq!(r.cpu_util.len(), 4);
        assert!(r.cpu_util.iter().all(|u| (0.0..=1.0).contains(u)));
        let (max, sum) = r.cpu_util.iter().fold((0.0f64, 0.0), |(m, s), &u| (m.max(u), s + u));
        assert!((r.max_cpu_share - max / sum).abs() < 1e-9, "{} vs {}", r.max_cpu_share, max / sum);
    }
    // The run a cell's median comes from.
    for ci in 0..2 {
        for &n in &plan.clients {
            assert_eq!(res.median_run(ci, n).map(|r| r.value), Some(middle_of_three(&res, ci, n)));
        }
    }
}

#[test]
fn medians_of_odd_and_even_counts() {
    use cfs_sim::experiment::median;
    assert_eq!(median(&mut []), None);
    assert_eq!(median(&mut [5.0]), Some(5.0));
    assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
    // Even: the mean of the middle two, as a median of 4 runs would be.
    assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
}

/// Cells with nothing to divide by: a ratio to a baseline of 0 is a dash,
/// and a cell of 0 has no spread (half its range over 0 is no number).
/// A plan with a setting change gets one column per phase, named by the
/// phase's start, and the header says so.
#[test]
fn zero_baselines_zero_cells_and_phase_columns() {
    use report::TableStyle;
    let (mut plan, mut res) = small();
    for r in res.runs.iter_mut() {
        r.value = if r.clients == 3 { 0.0 } else { 1000.0 };
    }
    let rows: Vec<Vec<String>> =
        report::table_with(&plan, &res, "t", TableStyle { spread: true, relative: true, significance: false })
            .lines()
            .skip(2)
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect();
    assert_eq!(rows[0], ["1", "1000", "±0%", "x1.00", "±0%"]);
    assert_eq!(rows[1], ["3", "0.00", "-"]);

    plan.changes = cfs_sim::experiment::parse_switch("1s:features=863").unwrap();
    let text = report::table(&plan, &res, "t");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].ends_with("; @T: from the setting change at T to the next"), "{text}");
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["clients", "895", "@0s", "895", "@1s", "861", "@0s", "861", "@1s"]
    );
}

/// The plot's axes: every integral client count up to the largest is
/// labelled, throughput labels are whole numbers, and the y axis leaves
/// head room for the legend above the highest value drawn (a median, or
/// the top of a bar spanning a cell's runs).
#[test]
fn plot_axes_cover_the_data_with_head_room() {
    let (plan, res) = small();
    let path = std::env::temp_dir().join(format!("cfs-sim-axes-{}.svg", std::process::id()));
    report::plot(&plan, &res, &path, "t", None).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap().replace('\n', "");
    let _ = std::fs::remove_file(&path);
    // (anchor, text) of every label.
    let labels: Vec<(String, String)> = svg
        .split("<text ")
        .skip(1)
        .map(|t| {
            let anchor = t.split("text-anchor=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
            let text = t.split('>').nth(1).unwrap().split('<').next().unwrap().trim().to_string();
            (anchor, text)
        })
        .collect();
    let numbers = |anchor: &str| -> Vec<String> {
        labels
            .iter()
            .filter(|(a, t)| a == anchor && t.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .map(|(_, t)| t.clone())
            .collect()
    };
    // x: client counts 1 and 3 on an axis from 0.
    assert_eq!(numbers("middle"), ["0", "1", "2", "3"]);
    // y: whole numbers from 0, topping the highest run by at least 20%.
    let y = numbers("end");
    assert!(y.iter().all(|t| t.parse::<u64>().is_ok()), "{y:?}");
    let top: f64 = y.last().unwrap().parse().unwrap();
    let highest = res.runs.iter().map(|r| r.value).fold(0.0, f64::max);
    assert!(top >= 1.2 * highest && top <= 1.6 * highest, "top tick {top} for a highest run of {highest}");
}

/// Published values drawn beside the model (the seed run's plot): the axes
/// take them in up to the plan's largest client count, points beyond it
/// are left out rather than stretching the x axis, and the legend names
/// their source once; without them the plot has no such entry.
#[test]
fn a_plot_draws_published_values_within_its_client_range() {
    let (plan, res) = small();
    let highest = (0..2).flat_map(|c| [1, 3].map(|n| res.median(c, n).unwrap())).fold(0.0, f64::max);
    // Column 0 measured at three times the model's best at one client, and
    // at 5 clients, beyond the plan's 1 and 3; column 1 not measured.
    let series: Vec<(u32, f64)> = vec![(1, 3.0 * highest), (3, highest), (5, 10.0 * highest)];
    let published = report::Published { source: "published (test)".into(), series: vec![Some(&series), None] };
    let dir = std::env::temp_dir();
    let (with, without) = (
        dir.join(format!("cfs-sim-pub-{}.svg", std::process::id())),
        dir.join(format!("cfs-sim-nopub-{}.svg", std::process::id())),
    );
    report::plot(&plan, &res, &with, "t", Some(&published)).unwrap();
    report::plot(&plan, &res, &without, "t", None).unwrap();
    let (svg, plain) = (std::fs::read_to_string(&with).unwrap(), std::fs::read_to_string(&without).unwrap());
    let _ = (std::fs::remove_file(&with), std::fs::remove_file(&without));
    assert_eq!(svg.matches("published (test)").count(), 1);
    assert!(!plain.contains("published"));
    let numbers = |svg: &str, anchor: &str| -> Vec<f64> {
        svg.split("<text ")
            .skip(1)
            .filter(|t| t.contains(&format!("text-anchor=\"{anchor}\"")))
            .filter_map(|t| t.split('>').nth(1)?.split('<').next()?.trim().parse().ok())
            .collect()
    };
    // x: still 0-3 (the 5-client point is not drawn).
    assert_eq!(numbers(&svg, "middle"), [0.0, 1.0, 2.0, 3.0]);
    // y: reaches past the published 3x, not to the undrawn 10x.
    let top = numbers(&svg, "end").into_iter().fold(0.0, f64::max);
    assert!(top >= 3.0 * highest && top < 10.0 * highest, "top tick {top}, highest median {highest}");
    let plain_top = numbers(&plain, "end").into_iter().fold(0.0, f64::max);
    assert!(plain_top < 2.0 * highest, "without published values: top tick {plain_top}");
}

/// The wait tables: a run's mean wait is all its tasks' ended waits over
/// their count (computed here from the per-task schedstats), its longest
/// the largest of any task's ended or open wait, and a cell the middle of
/// its three runs, printed in µs.
#[test]
fn wait_tables_show_the_median_run_of_each_cell() {
    let (plan, res) = small();
    let middle = |ci: usize, n: u32, f: &dyn Fn(&cfs_sim::experiment::RunRecord) -> f64| {
        let mut v: Vec<f64> = res.runs.iter().filter(|r| r.config == ci && r.clients == n).map(f).collect();
        v.sort_by(f64::total_cmp);
        v[1]
    };
    let mean = |r: &cfs_sim::experiment::RunRecord| {
        let sum: u64 = r.tasks.iter().map(|t| t.wait_sum_ns).sum();
        let count: u64 = r.tasks.iter().map(|t| t.wait_count).sum();
        sum as f64 / count as f64 / 1e3
    };
    let longest = |r: &cfs_sim::experiment::RunRecord| {
        r.tasks.iter().map(|t| t.wait_max_ns.max(t.wait_open_ns)).max().unwrap() as f64 / 1e3
    };
    for (which, f) in [(report::Wait::Mean, &mean as &dyn Fn(&_) -> f64), (report::Wait::Longest, &longest)] {
        let text = report::waits_table(&plan, &res, which, report::TableStyle::default());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("runqueue wait (us"), "{text}");
        assert_eq!(lines.len(), 2 + plan.clients.len(), "{text}");
        for (row, &n) in lines[2..].iter().zip(&plan.clients) {
            let cells: Vec<f64> = row.split_whitespace().skip(1).map(|c| c.parse().unwrap()).collect();
            assert_eq!(cells.len(), 2, "{row}");
            for (ci, cell) in cells.iter().enumerate() {
                let want = middle(ci, n, f);
                // Cells print with two decimals below 100 and none above.
                assert!((cell - want).abs() <= 0.5 + 0.005 * want, "{which:?} {n} clients col {ci}: {row} vs {want}");
            }
        }
    }
    // Every pgbench run waits somewhere: the client and its backends share CPUs.
    assert!(res.runs.iter().all(|r| r.wait_avg_ns() > 0.0 && r.wait_max_ns() > 0));
}

/// The task table: for each cell the median run, its tasks grouped by name
/// in order of appearance, times as shares of the run's length summed over
/// the group (computed here from the per-task schedstats).
#[test]
fn task_tables_sum_each_name_over_the_median_run() {
    let (plan, res) = small();
    let text = report::tasks_table(&plan, &res);
    let blocks: Vec<&str> = text.split("# tasks of the median run: ").skip(1).collect();
    assert_eq!(blocks.len(), plan.columns.len() * plan.clients.len(), "{text}");
    let mut k = 0;
    for (ci, col) in plan.columns.iter().enumerate() {
        for &n in &plan.clients {
            let block = blocks[k];
            k += 1;
            assert!(block.starts_with(&format!("{} at {n} clients", col.label)), "{block}");
            let r = res.median_run(ci, n).unwrap();
            let len = r.end_ns as f64;
            let rows: Vec<Vec<&str>> =
                block.lines().skip(2).filter(|l| !l.starts_with('#')).map(|l| l.split_whitespace().collect()).collect();
            // The last line: the run's balancing, from its counters.
            let c = &r.counters;
            let newly_idle = c.balance_passes - c.balance_periodic;
            assert_eq!(
                block.lines().last(),
                Some(
                    format!(
                        "# balancer: {} periodic and {newly_idle} newly idle passes: {} moved {} tasks; {} found a \
                         busiest queue and moved nothing",
                        c.balance_periodic, c.balance_pulled, c.balance_moved, c.balance_failed
                    )
                    .as_str()
                ),
                "{block}"
            );
            assert!(c.balance_passes > 0 && c.balance_periodic > 0, "pgbench runs balance: {c:?}");
            // pgbench's postmaster, its one client, then the backends: one
            // per client.
            let names: Vec<&str> = rows.iter().map(|r| r[0]).collect();
            assert_eq!(names, ["postmaster", "pgbench", "postgres"], "{block}");
            assert_eq!(rows[2][1], n.to_string());
            let backends: Vec<_> = r.tasks.iter().filter(|t| t.name == "postgres").collect();
            let run: u64 = backends.iter().map(|t| t.runtime_ns).sum();
            let waits: u64 = backends.iter().map(|t| t.wait_count).sum();
            assert_eq!(rows[2][2], format!("{:.3}", run as f64 / len), "{block}");
            assert_eq!(rows[2][5], waits.to_string(), "{block}");
            let client = r.tasks.iter().find(|t| t.name == "pgbench").unwrap();
            assert_eq!(
                rows[1][3],
                format!("{:.3}", (client.wait_sum_ns + client.wait_open_ns) as f64 / len),
                "{block}"
            );
            let asleep = client.sleep_sum_ns + client.sleep_open_ns;
            assert_eq!(rows[1][4], format!("{:.3}", asleep as f64 / len), "{block}");
            assert_eq!(rows[1][8], client.migrations.to_string(), "{block}");
            // Mean wait: the group's wait time over its waits; longest: the
            // group's longest, ended or open; both in µs.
            let waited: u64 = backends.iter().map(|t| t.wait_sum_ns).sum();
            assert_eq!(rows[2][6], format!("{:.1}us", waited as f64 / waits as f64 / 1e3), "{block}");
            let longest = backends.iter().map(|t| t.wait_max_ns.max(t.wait_open_ns)).max().unwrap();
            assert_eq!(rows[2][7], format!("{:.1}us", longest as f64 / 1e3), "{block}");
            let mean = client.wait_sum_ns as f64 / client.wait_count as f64 / 1e3;
            assert_eq!(rows[1][6], format!("{mean:.1}us"), "{block}");
            // Where they ran longest: CPU:count pairs in CPU order, over
            // all n backends; the client's own CPU alone.
            let mut on = std::collections::BTreeMap::new();
            for b in &backends {
                *on.entry(b.main_cpu.unwrap()).or_insert(0) += 1;
            }
            let want: Vec<String> = on.iter().map(|(c, k)| format!("{c}:{k}")).collect();
            assert_eq!(rows[2][9], want.join(","), "{block}");
            assert_eq!(on.values().sum::<u32>(), n, "{block}");
            assert_eq!(rows[1][9], format!("{}:1", client.main_cpu.unwrap()), "{block}");
        }
    }
}

/// With `--switch`, a phase in which no wait ended has no mean: its cell
/// is a dash, whatever the other phase shows. Here every run's first
/// phase had waits of 2 µs on average and its second none.
#[test]
fn a_phase_without_waits_shows_a_dash() {
    let (mut plan, mut res) = small();
    plan.changes = cfs_sim::experiment::parse_switch("1s:features=863").unwrap();
    for r in res.runs.iter_mut() {
        r.phase_waits = vec![Some(2_000.0), None];
    }
    let text = report::waits_table(&plan, &res, report::Wait::Mean, report::TableStyle::default());
    let rows: Vec<Vec<&str>> = text.lines().skip(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), plan.clients.len(), "{text}");
    for row in rows {
        // clients, then per configuration @0s and @1s.
        assert_eq!(row[1..], ["2.00", "-", "2.00", "-"], "{text}");
    }
}

/// A plot's missing directories are created (`--plot out/a/b.png`, as the
/// default run's `out/seed.svg` needs on a fresh clone).
#[test]
fn a_plot_creates_its_directories() {
    let (plan, res) = small();
    let root = std::env::temp_dir().join(format!("cfs-sim-plotdir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    for name in ["a/b/t.png", "t.svg"] {
        let path = root.join(name);
        report::plot(&plan, &res, &path, "t", None).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 0, "{name}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A plot draws each cell's runs as a bar (lowest to highest, capped at
/// both ends) behind its median, for every cell whose runs differ. Two
/// plots of the same medians, one whose runs all agree and one with three
/// cells spread, differ by exactly those three bars: three lines each (the
/// stem and two caps). The highest median (no spread in either) fixes the
/// axes, so the grid is the same in both.
#[test]
fn plots_draw_each_cells_run_range() {
    let (plan, mut res) = small();
    let dir = std::env::temp_dir().join(format!("cfs-sim-bars-{}", std::process::id()));
    let mut lines = Vec::new();
    for spread in [0.0, 100.0] {
        let mut k = std::collections::BTreeMap::new();
        for r in res.runs.iter_mut() {
            let i = k.entry((r.config, r.clients)).or_insert(0usize);
            let offset = [-spread, 0.0, spread][*i];
            *i += 1;
            r.value = match (r.config, r.clients) {
                (1, 1) => 2000.0,
                (1, _) => 1500.0 + offset,
                _ => 1000.0 + offset,
            };
        }
        let path = dir.join(format!("bars{spread}.svg"));
        report::plot(&plan, &res, &path, "t", None).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        lines.push(svg.matches("<line").count());
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(lines[1], lines[0] + 3 * 3, "{lines:?}");
}
