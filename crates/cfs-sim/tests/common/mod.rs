//! Helpers shared by the integration tests.
#![allow(dead_code)]

use cfs_sim::costs::CostModel;
use cfs_sim::experiment::{Plan, Results, SchedSpec, Seeds};
use cfs_sim::workloads::{Workload, WorkloadOpts};
use cfs_topology::Host;

/// A pgbench plan on the Q6600 over `configs` (`--config` syntax on 2.6.26-rc4).
pub fn pgbench_plan(configs: &[&str], clients: &[u32], transactions: u64, runs: u32, seed: u64) -> Plan {
    let host = Host::preset("q6600").unwrap();
    let columns = configs
        .iter()
        .map(|c| SchedSpec::profile("2.6.26-rc4").with_items(c).unwrap().resolve(&host).unwrap())
        .collect();
    Plan {
        costs: CostModel::preset("q6600").unwrap(),
        host,
        workload: Workload::builtin("pgbench").unwrap(),
        opts: WorkloadOpts { transactions: Some(transactions), ..WorkloadOpts::default() },
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
