//! Helpers shared by the integration tests.
#![allow(dead_code)]

use cfs_sim::costs::CostModel;
use cfs_sim::experiment::{Plan, Results, SchedSpec, Seeds};
use cfs_sim::workloads::{Workload, WorkloadOpts};
use cfs_topology::Host;

/// A pgbench plan on the Q6600 over `configs` (`--config` syntax on 2.6.26-rc4).
pub fn pgbench_plan(configs: &[&str], clients: &[u32], transactions: u64, runs: u32, seed: u64) -> Plan {
    let mut plan = plan_on("q6600", "pgbench", "2.6.26-rc4", configs, clients, runs, seed);
    plan.opts.transactions = Some(transactions);
    plan
}

/// A plan of built-in `workload` on preset `host` over `configs`
/// (`--config` syntax on `profile`), with the workload's default options.
pub fn plan_on(
    host: &str,
    workload: &str,
    profile: &str,
    configs: &[&str],
    clients: &[u32],
    runs: u32,
    seed: u64,
) -> Plan {
    let h = Host::preset(host).unwrap();
    let columns =
        configs.iter().map(|c| SchedSpec::profile(profile).with_items(c).unwrap().resolve(&h).unwrap()).collect();
    Plan {
        costs: CostModel::preset(host).unwrap(),
        host: h,
        workload: Workload::builtin(workload).unwrap(),
        opts: WorkloadOpts::default(),
        columns,
        clients: clients.to_vec(),
        runs,
        seeds: Seeds::Derived(seed),
        trace: false,
        changes: Vec::new(),
        irqs: Vec::new(),
        slow: Vec::new(),
    }
}

/// Runs a plan.
pub fn run(plan: &Plan) -> Results {
    plan.execute(&|| {}).unwrap()
}
