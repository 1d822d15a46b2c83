//! # cfs-sim
//!
//! Experiments over the deterministic machine model of [`cfs_machine`],
//! which drives the [`cfs_core`] fair class over a [`cfs_topology`] host:
//! scheduler configurations side by side, client counts, seeded runs in
//! parallel, tables, CSV, JSON, plots, the comparison with the published
//! Q6600 data, and the `cfs-sim` command line, a thin layer over this
//! library. With no arguments it runs the seed experiment (pgbench -S on a
//! Q6600 under 2.6.26-rc4 and its fixes).
//!
//! ## Layers
//!
//! | layer | modules | what |
//! |---|---|---|
//! | vocabulary | [`program`], [`dist`], [`names`] (from [`cfs_machine`]) | what a task can do: run, send/wake (with or without the sync hint), wait, sleep, fork, exit, touch shared lines, count progress |
//! | workloads | [`workloads`], [`workfile`] (from [`cfs_machine`]) | built-ins (pgbench, tbench, hogs, messaging, volanomark, starve, sysbench-oltp) as programs; TOML and rt-app JSON files |
//! | costs | [`costs`] (from [`cfs_machine`]) | one parameter set per host, priced by [`cfs_topology::Host::distance`] |
//! | engine | [`engine`], [`observe`], [`trace`] (from [`cfs_machine`]) | the event loop around [`cfs_core::Scheduler`]: ticks, segments, IPIs, idle exit, hrtick, timers |
//! | experiments | [`experiment`] | configurations as columns, client counts as rows, seeded runs in parallel, medians |
//! | report | [`report`], [`significance`], [`calibration`] | table, CSV, JSON, plots, the rank test behind `--significance`, and the comparison with the published Q6600 tables |
//! | command line | [`cli`] | argument types and commands; every error is one line |
//!
//! The machine model's own documentation ([`cfs_machine`]) explains the
//! engine, the costs and what makes a run a pure function of its seed.
//! Runs execute in parallel (rayon) but are collected in a fixed order, so
//! output is byte-identical whatever the thread count.
//!
//! ## Example
//!
//! ```
//! use cfs_sim::costs::CostModel;
//! use cfs_sim::experiment::{Plan, SchedSpec, Seeds};
//! use cfs_sim::workloads::{Workload, WorkloadOpts};
//! use cfs_topology::Host;
//!
//! let host = Host::preset("q6600").unwrap();
//! let columns = ["name=895", "name=861,features=861"]
//!     .iter()
//!     .map(|c| SchedSpec::profile("2.6.26-rc4").with_items(c).unwrap().resolve(&host).unwrap())
//!     .collect();
//! let plan = Plan {
//!     costs: CostModel::preset("q6600").unwrap(),
//!     host,
//!     workload: Workload::builtin("pgbench").unwrap(),
//!     opts: WorkloadOpts { transactions: Some(200), ..WorkloadOpts::default() },
//!     columns,
//!     clients: vec![2],
//!     runs: 1,
//!     seeds: Seeds::Derived(1),
//!     trace: false,
//!     changes: vec![],
//!     irqs: vec![],
//!     slow: vec![],
//! };
//! let res = plan.execute(&|| {}).unwrap();
//! assert!(res.median(0, 2).unwrap() > 1000.0);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod calibration;
pub mod cli;
pub mod experiment;
pub mod report;
pub mod significance;

pub use cfs_machine::{FileWorkload, WorkloadError, parse_workload};
pub use cfs_machine::{costs, dist, engine, faults, names, observe, program, trace, workfile, workloads};
