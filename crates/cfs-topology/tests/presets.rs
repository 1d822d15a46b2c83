//! Each preset x each kernel profile: the full hierarchy of every CPU
//! (spans, groups in list order, cpu_power) and every level's flags (as the
//! profile's number and by name) and parameters.
//!
//! Derivations, from the kernel sources (line numbers in
//! `src/builder.rs`'s table):
//!
//! * Initialisers. 2.6.25/26 `include/linux/topology.h`:
//!   SD_SIBLING_INIT = 1/2 ms, busy_factor 64, imbalance 110, flags LB 1 +
//!   NEWIDLE 2 + FORK 8 + EXEC 4 + WAKE_AFFINE 32 + WAKE_IDLE 16 +
//!   SHARE_CPUPOWER 128 = 191. SD_MC_INIT = 1/4 ms, 64, 125, cache_nice 1,
//!   busy_idx 2, wake_idx 1, forkexec_idx 1, flags 1+2+8+4+32+512 = 559.
//!   SD_CPU_INIT = the same intervals with idle_idx 1, newidle_idx 2 and flags
//!   1+2+8+4+32 = 47. x86-64 SD_NODE_INIT (include/asm-x86/topology.h) = 8/32
//!   ms, busy_factor 32, 125, cache_nice 2 (SD_CACHE_NICE_TRIES), busy 3, idle
//!   2 (SD_IDLE_IDX), newidle SD_NEWIDLE_IDX (0 in 2.6.25, 2 from 2.6.26-rc1),
//!   wake 1, forkexec 1 (SD_FORKEXEC_IDX), flags LB 1 + EXEC 4 + FORK 8 +
//!   SERIALIZE 1024 + WAKE_BALANCE 64 = 1101.
//!   2.6.32 (`1*`/`0*` style): SIBLING LB 0x1 + NEWIDLE 0x2 + EXEC 0x4 + FORK
//!   0x8 + WAKE_AFFINE 0x20 + SHARE_CPUPOWER 0x80 = 175, smt_gain 1178. MC
//!   0x2f + SHARE_PKG 0x200 + PREFER_SIBLING 0x1000 (sd_balance_for_mc_power
//!   with smt_power_savings 0) = 4655, + PREFER_LOCAL 0x40 in rc1 = 4719;
//!   busy_idx 2, wake/forkexec 0. CPU 0x2f + PREFER_SIBLING = 4143 (rc1 4207),
//!   busy 2, idle 1, newidle 0. x86 NODE 0x2f + SERIALIZE 0x400 = 1071, busy 3
//!   idle 2, newidle/wake/forkexec 0.
//! * Spans and groups: SIBLING = thread siblings, groups = single CPUs; MC =
//!   llc_shared_map (Intel: CPUs of the L2 on Core 2, of the L3 on Nehalem;
//!   AMD before 2.6.31: the CPU alone), groups = cores; CPU = the node,
//!   groups = llc_shared_map sets (cpu_to_phys_group); NODE = the node and its
//!   nearest, groups = nodes, own first. Lists start at the CPU's own group
//!   and follow ascending first-CPU order circularly (init_sched_build_groups).
//! * Power: 2.6.25/26 init_sched_groups_power gives 1024 to every group whose
//!   child shares CPU power (SIBLING) or package resources (MC), and every
//!   leaf; NODE groups sum the phys groups they contain
//!   (init_numa_sched_groups_power): 1 phys group per Nehalem node = 1024.
//!   2.6.32: SMT leaf = 1024 * 1178 / 2 >> 10 = 589; a core = 2 * 589 = 1178;
//!   MC over 4 cores sums to 4712 = the phys group = the NODE group; without
//!   SMT a core is 1024, a die pair 2048.
//! * Removal: X2 (AMD) on 2.6.25/26 has MC span 1 (no cpu_llc_id) -> gone,
//!   SIBLING span 1 -> gone: only CPU. On 2.6.32 amd_detect_cmp sets
//!   cpu_llc_id = socket, MC = {0,1}, and CPU (same span, one group, flags
//!   WAKE_AFFINE|PREFER_SIBLING(|PREFER_LOCAL) all in MC's) is removed. Nehalem
//!   CPU level = node = MC span with one group: removed on every profile.

mod common;

use std::panic::catch_unwind;

use cfs_topology::{DomainLevel as L, DomainParams, Host, KernelVersion as V, SchedDomains};
use common::{check_level, layout, params};

fn build(preset: &str, v: V) -> SchedDomains {
    Host::preset(preset).expect("preset").build_domains(v)
}

// ----- flags and parameters per level --------------------------------------

/// A level's flags: the profile's number and the names.
type Flags = (u32, &'static [&'static str]);

const SIB_OLD: Flags = (
    191,
    &[
        "SD_LOAD_BALANCE",
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_IDLE",
        "SD_WAKE_AFFINE",
        "SD_SHARE_CPUPOWER",
    ],
);
const MC_OLD: Flags = (
    559,
    &[
        "SD_LOAD_BALANCE",
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_AFFINE",
        "SD_SHARE_PKG_RESOURCES",
    ],
);
const CPU_OLD: Flags =
    (47, &["SD_LOAD_BALANCE", "SD_BALANCE_NEWIDLE", "SD_BALANCE_EXEC", "SD_BALANCE_FORK", "SD_WAKE_AFFINE"]);
const NODE_OLD: Flags =
    (1101, &["SD_LOAD_BALANCE", "SD_BALANCE_EXEC", "SD_BALANCE_FORK", "SD_WAKE_BALANCE", "SD_SERIALIZE"]);

const SIB_NEW: Flags = (
    175,
    &[
        "SD_LOAD_BALANCE",
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_AFFINE",
        "SD_SHARE_CPUPOWER",
    ],
);
const MC_32: Flags = (
    4655,
    &[
        "SD_LOAD_BALANCE",
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_AFFINE",
        "SD_SHARE_PKG_RESOURCES",
        "SD_PREFER_SIBLING",
    ],
);
const MC_32RC1: Flags = (
    4719,
    &[
        "SD_LOAD_BALANCE",
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_AFFINE",
        "SD_SHARE_PKG_RESOURCES",
        "SD_PREFER_LOCAL",
        "SD_PREFER_SIBLING",
    ],
);
const CPU_32: Flags = (
    4143,
    &[
        "SD_LOAD_BALANCE",
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_AFFINE",
        "SD_PREFER_SIBLING",
    ],
);
const CPU_32RC1: Flags = (
    4207,
    &[
        "SD_LOAD_BALANCE",
        "SD_BALANCE_NEWIDLE",
        "SD_BALANCE_EXEC",
        "SD_BALANCE_FORK",
        "SD_WAKE_AFFINE",
        "SD_PREFER_LOCAL",
        "SD_PREFER_SIBLING",
    ],
);
const NODE_NEW: Flags = (
    1071,
    &["SD_LOAD_BALANCE", "SD_BALANCE_NEWIDLE", "SD_BALANCE_EXEC", "SD_BALANCE_FORK", "SD_WAKE_AFFINE", "SD_SERIALIZE"],
);

// SD_SIBLING_INIT: 1/2 ms, busy_factor 64, imbalance 110, every idx 0;
// smt_gain 1178 on 2.6.32 only.
const SIB_PARAMS_OLD: DomainParams = params(1, 2, 64, 110, 0, [0, 0, 0, 0, 0], 0, 1);
const SIB_PARAMS_NEW: DomainParams = params(1, 2, 64, 110, 0, [0, 0, 0, 0, 0], 1178, 1);
// SD_MC_INIT: 1/4 ms, 64, 125, cache_nice 1, busy_idx 2; wake/forkexec 1 on
// 2.6.25/26, 0 on 2.6.32.
const MC_PARAMS_OLD: DomainParams = params(1, 4, 64, 125, 1, [2, 0, 0, 1, 1], 0, 1);
const MC_PARAMS_NEW: DomainParams = params(1, 4, 64, 125, 1, [2, 0, 0, 0, 0], 0, 1);
// SD_CPU_INIT: MC's intervals, busy 2, idle 1; newidle 2 / wake 1 / forkexec
// 1 on 2.6.25/26, 0 on 2.6.32.
const CPU_PARAMS_OLD: DomainParams = params(1, 4, 64, 125, 1, [2, 1, 2, 1, 1], 0, 1);
const CPU_PARAMS_NEW: DomainParams = params(1, 4, 64, 125, 1, [2, 1, 0, 0, 0], 0, 1);
// x86-64 SD_NODE_INIT: 8/32 ms, busy_factor 32, 125, cache_nice 2, busy 3,
// idle 2; newidle 0 in 2.6.25, 2 from 2.6.26-rc1, 0 on 2.6.32; wake/forkexec
// 1 on 2.6.25/26, 0 on 2.6.32.
const NODE_PARAMS_25: DomainParams = params(8, 32, 32, 125, 2, [3, 2, 0, 1, 1], 0, 1);
const NODE_PARAMS_26: DomainParams = params(8, 32, 32, 125, 2, [3, 2, 2, 1, 1], 0, 1);
const NODE_PARAMS_32: DomainParams = params(8, 32, 32, 125, 2, [3, 2, 0, 0, 0], 0, 1);

// ----- the levels that survive, with flags and params -----------------------

/// One level: every CPU's domain of that level has these flags and params.
type LevelPin = (L, Flags, DomainParams);

/// X2 on 2.6.25/26: MC and SIBLING (span 1) removed, only CPU.
const LEVELS_CPU_OLD: &[LevelPin] = &[(L::Cpu, CPU_OLD, CPU_PARAMS_OLD)];
/// X2 on 2.6.32(-rc1): CPU (same span as MC, one group) removed, only MC.
const LEVELS_MC_32RC1: &[LevelPin] = &[(L::Mc, MC_32RC1, MC_PARAMS_NEW)];
const LEVELS_MC_32: &[LevelPin] = &[(L::Mc, MC_32, MC_PARAMS_NEW)];
/// Q6600, Tigerton, Stoakley: MC under CPU, no SMT, no NUMA.
const LEVELS_MC_CPU_OLD: &[LevelPin] = &[(L::Mc, MC_OLD, MC_PARAMS_OLD), (L::Cpu, CPU_OLD, CPU_PARAMS_OLD)];
const LEVELS_MC_CPU_32RC1: &[LevelPin] = &[(L::Mc, MC_32RC1, MC_PARAMS_NEW), (L::Cpu, CPU_32RC1, CPU_PARAMS_NEW)];
const LEVELS_MC_CPU_32: &[LevelPin] = &[(L::Mc, MC_32, MC_PARAMS_NEW), (L::Cpu, CPU_32, CPU_PARAMS_NEW)];
/// Nehalem-EP: SIBLING, MC, NODE (CPU removed on every profile).
const LEVELS_SIB_MC_NODE_25: &[LevelPin] =
    &[(L::Sibling, SIB_OLD, SIB_PARAMS_OLD), (L::Mc, MC_OLD, MC_PARAMS_OLD), (L::Node, NODE_OLD, NODE_PARAMS_25)];
const LEVELS_SIB_MC_NODE_26: &[LevelPin] =
    &[(L::Sibling, SIB_OLD, SIB_PARAMS_OLD), (L::Mc, MC_OLD, MC_PARAMS_OLD), (L::Node, NODE_OLD, NODE_PARAMS_26)];
const LEVELS_SIB_MC_NODE_32RC1: &[LevelPin] =
    &[(L::Sibling, SIB_NEW, SIB_PARAMS_NEW), (L::Mc, MC_32RC1, MC_PARAMS_NEW), (L::Node, NODE_NEW, NODE_PARAMS_32)];
const LEVELS_SIB_MC_NODE_32: &[LevelPin] =
    &[(L::Sibling, SIB_NEW, SIB_PARAMS_NEW), (L::Mc, MC_32, MC_PARAMS_NEW), (L::Node, NODE_NEW, NODE_PARAMS_32)];

// ----- layouts (one line per CPU) -------------------------------------------

const X2_OLD: &[&str] = &["CPU 0-1: 0 1", "CPU 0-1: 1 0"];

const X2_NEW: &[&str] = &["MC 0-1: 0 1", "MC 0-1: 1 0"];

const Q6600_OLD: &[&str] = &[
    "MC 0-1: 0 1 | CPU 0-3: 0-1 2-3",
    "MC 0-1: 1 0 | CPU 0-3: 0-1 2-3",
    "MC 2-3: 2 3 | CPU 0-3: 2-3 0-1",
    "MC 2-3: 3 2 | CPU 0-3: 2-3 0-1",
];

const Q6600_NEW: &[&str] = &[
    "MC 0-1: 0 1 | CPU 0-3: 0-1@2048 2-3@2048",
    "MC 0-1: 1 0 | CPU 0-3: 0-1@2048 2-3@2048",
    "MC 2-3: 2 3 | CPU 0-3: 2-3@2048 0-1@2048",
    "MC 2-3: 3 2 | CPU 0-3: 2-3@2048 0-1@2048",
];

const NEHALEM_OLD: &[&str] = &[
    "SIBLING 0,8: 0 8 | MC 0-3,8-11: 0,8 1,9 2,10 3,11 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 1,9: 1 9 | MC 0-3,8-11: 1,9 2,10 3,11 0,8 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 2,10: 2 10 | MC 0-3,8-11: 2,10 3,11 0,8 1,9 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 3,11: 3 11 | MC 0-3,8-11: 3,11 0,8 1,9 2,10 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 4,12: 4 12 | MC 4-7,12-15: 4,12 5,13 6,14 7,15 | NODE 0-15: 4-7,12-15 0-3,8-11",
    "SIBLING 5,13: 5 13 | MC 4-7,12-15: 5,13 6,14 7,15 4,12 | NODE 0-15: 4-7,12-15 0-3,8-11",
    "SIBLING 6,14: 6 14 | MC 4-7,12-15: 6,14 7,15 4,12 5,13 | NODE 0-15: 4-7,12-15 0-3,8-11",
    "SIBLING 7,15: 7 15 | MC 4-7,12-15: 7,15 4,12 5,13 6,14 | NODE 0-15: 4-7,12-15 0-3,8-11",
    "SIBLING 0,8: 8 0 | MC 0-3,8-11: 0,8 1,9 2,10 3,11 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 1,9: 9 1 | MC 0-3,8-11: 1,9 2,10 3,11 0,8 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 2,10: 10 2 | MC 0-3,8-11: 2,10 3,11 0,8 1,9 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 3,11: 11 3 | MC 0-3,8-11: 3,11 0,8 1,9 2,10 | NODE 0-15: 0-3,8-11 4-7,12-15",
    "SIBLING 4,12: 12 4 | MC 4-7,12-15: 4,12 5,13 6,14 7,15 | NODE 0-15: 4-7,12-15 0-3,8-11",
    "SIBLING 5,13: 13 5 | MC 4-7,12-15: 5,13 6,14 7,15 4,12 | NODE 0-15: 4-7,12-15 0-3,8-11",
    "SIBLING 6,14: 14 6 | MC 4-7,12-15: 6,14 7,15 4,12 5,13 | NODE 0-15: 4-7,12-15 0-3,8-11",
    "SIBLING 7,15: 15 7 | MC 4-7,12-15: 7,15 4,12 5,13 6,14 | NODE 0-15: 4-7,12-15 0-3,8-11",
];

const NEHALEM_NEW: &[&str] = &[
    "SIBLING 0,8: 0@589 8@589 | MC 0-3,8-11: 0,8@1178 1,9@1178 2,10@1178 3,11@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 1,9: 1@589 9@589 | MC 0-3,8-11: 1,9@1178 2,10@1178 3,11@1178 0,8@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 2,10: 2@589 10@589 | MC 0-3,8-11: 2,10@1178 3,11@1178 0,8@1178 1,9@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 3,11: 3@589 11@589 | MC 0-3,8-11: 3,11@1178 0,8@1178 1,9@1178 2,10@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 4,12: 4@589 12@589 | MC 4-7,12-15: 4,12@1178 5,13@1178 6,14@1178 7,15@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
    "SIBLING 5,13: 5@589 13@589 | MC 4-7,12-15: 5,13@1178 6,14@1178 7,15@1178 4,12@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
    "SIBLING 6,14: 6@589 14@589 | MC 4-7,12-15: 6,14@1178 7,15@1178 4,12@1178 5,13@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
    "SIBLING 7,15: 7@589 15@589 | MC 4-7,12-15: 7,15@1178 4,12@1178 5,13@1178 6,14@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
    "SIBLING 0,8: 8@589 0@589 | MC 0-3,8-11: 0,8@1178 1,9@1178 2,10@1178 3,11@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 1,9: 9@589 1@589 | MC 0-3,8-11: 1,9@1178 2,10@1178 3,11@1178 0,8@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 2,10: 10@589 2@589 | MC 0-3,8-11: 2,10@1178 3,11@1178 0,8@1178 1,9@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 3,11: 11@589 3@589 | MC 0-3,8-11: 3,11@1178 0,8@1178 1,9@1178 2,10@1178 | NODE 0-15: 0-3,8-11@4712 4-7,12-15@4712",
    "SIBLING 4,12: 12@589 4@589 | MC 4-7,12-15: 4,12@1178 5,13@1178 6,14@1178 7,15@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
    "SIBLING 5,13: 13@589 5@589 | MC 4-7,12-15: 5,13@1178 6,14@1178 7,15@1178 4,12@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
    "SIBLING 6,14: 14@589 6@589 | MC 4-7,12-15: 6,14@1178 7,15@1178 4,12@1178 5,13@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
    "SIBLING 7,15: 15@589 7@589 | MC 4-7,12-15: 7,15@1178 4,12@1178 5,13@1178 6,14@1178 | NODE 0-15: 4-7,12-15@4712 0-3,8-11@4712",
];

const TIGERTON_OLD: &[&str] = &[
    "MC 0-1: 0 1 | CPU 0-15: 0-1 2-3 4-5 6-7 8-9 10-11 12-13 14-15",
    "MC 0-1: 1 0 | CPU 0-15: 0-1 2-3 4-5 6-7 8-9 10-11 12-13 14-15",
    "MC 2-3: 2 3 | CPU 0-15: 2-3 4-5 6-7 8-9 10-11 12-13 14-15 0-1",
    "MC 2-3: 3 2 | CPU 0-15: 2-3 4-5 6-7 8-9 10-11 12-13 14-15 0-1",
    "MC 4-5: 4 5 | CPU 0-15: 4-5 6-7 8-9 10-11 12-13 14-15 0-1 2-3",
    "MC 4-5: 5 4 | CPU 0-15: 4-5 6-7 8-9 10-11 12-13 14-15 0-1 2-3",
    "MC 6-7: 6 7 | CPU 0-15: 6-7 8-9 10-11 12-13 14-15 0-1 2-3 4-5",
    "MC 6-7: 7 6 | CPU 0-15: 6-7 8-9 10-11 12-13 14-15 0-1 2-3 4-5",
    "MC 8-9: 8 9 | CPU 0-15: 8-9 10-11 12-13 14-15 0-1 2-3 4-5 6-7",
    "MC 8-9: 9 8 | CPU 0-15: 8-9 10-11 12-13 14-15 0-1 2-3 4-5 6-7",
    "MC 10-11: 10 11 | CPU 0-15: 10-11 12-13 14-15 0-1 2-3 4-5 6-7 8-9",
    "MC 10-11: 11 10 | CPU 0-15: 10-11 12-13 14-15 0-1 2-3 4-5 6-7 8-9",
    "MC 12-13: 12 13 | CPU 0-15: 12-13 14-15 0-1 2-3 4-5 6-7 8-9 10-11",
    "MC 12-13: 13 12 | CPU 0-15: 12-13 14-15 0-1 2-3 4-5 6-7 8-9 10-11",
    "MC 14-15: 14 15 | CPU 0-15: 14-15 0-1 2-3 4-5 6-7 8-9 10-11 12-13",
    "MC 14-15: 15 14 | CPU 0-15: 14-15 0-1 2-3 4-5 6-7 8-9 10-11 12-13",
];

const TIGERTON_NEW: &[&str] = &[
    "MC 0-1: 0 1 | CPU 0-15: 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048",
    "MC 0-1: 1 0 | CPU 0-15: 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048",
    "MC 2-3: 2 3 | CPU 0-15: 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048",
    "MC 2-3: 3 2 | CPU 0-15: 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048",
    "MC 4-5: 4 5 | CPU 0-15: 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048",
    "MC 4-5: 5 4 | CPU 0-15: 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048",
    "MC 6-7: 6 7 | CPU 0-15: 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048",
    "MC 6-7: 7 6 | CPU 0-15: 6-7@2048 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048",
    "MC 8-9: 8 9 | CPU 0-15: 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048",
    "MC 8-9: 9 8 | CPU 0-15: 8-9@2048 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048",
    "MC 10-11: 10 11 | CPU 0-15: 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048",
    "MC 10-11: 11 10 | CPU 0-15: 10-11@2048 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048",
    "MC 12-13: 12 13 | CPU 0-15: 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048",
    "MC 12-13: 13 12 | CPU 0-15: 12-13@2048 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048",
    "MC 14-15: 14 15 | CPU 0-15: 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048",
    "MC 14-15: 15 14 | CPU 0-15: 14-15@2048 0-1@2048 2-3@2048 4-5@2048 6-7@2048 8-9@2048 10-11@2048 12-13@2048",
];

const STOAKLEY_OLD: &[&str] = &[
    "MC 0-1: 0 1 | CPU 0-7: 0-1 2-3 4-5 6-7",
    "MC 0-1: 1 0 | CPU 0-7: 0-1 2-3 4-5 6-7",
    "MC 2-3: 2 3 | CPU 0-7: 2-3 4-5 6-7 0-1",
    "MC 2-3: 3 2 | CPU 0-7: 2-3 4-5 6-7 0-1",
    "MC 4-5: 4 5 | CPU 0-7: 4-5 6-7 0-1 2-3",
    "MC 4-5: 5 4 | CPU 0-7: 4-5 6-7 0-1 2-3",
    "MC 6-7: 6 7 | CPU 0-7: 6-7 0-1 2-3 4-5",
    "MC 6-7: 7 6 | CPU 0-7: 6-7 0-1 2-3 4-5",
];

const STOAKLEY_NEW: &[&str] = &[
    "MC 0-1: 0 1 | CPU 0-7: 0-1@2048 2-3@2048 4-5@2048 6-7@2048",
    "MC 0-1: 1 0 | CPU 0-7: 0-1@2048 2-3@2048 4-5@2048 6-7@2048",
    "MC 2-3: 2 3 | CPU 0-7: 2-3@2048 4-5@2048 6-7@2048 0-1@2048",
    "MC 2-3: 3 2 | CPU 0-7: 2-3@2048 4-5@2048 6-7@2048 0-1@2048",
    "MC 4-5: 4 5 | CPU 0-7: 4-5@2048 6-7@2048 0-1@2048 2-3@2048",
    "MC 4-5: 5 4 | CPU 0-7: 4-5@2048 6-7@2048 0-1@2048 2-3@2048",
    "MC 6-7: 6 7 | CPU 0-7: 6-7@2048 0-1@2048 2-3@2048 4-5@2048",
    "MC 6-7: 7 6 | CPU 0-7: 6-7@2048 0-1@2048 2-3@2048 4-5@2048",
];

// ----- one table of pins per preset, one test per preset ---------------------

/// What one preset builds under one kernel profile.
struct Pin {
    v: V,
    /// [`layout`] of every CPU: spans, groups in list order, cpu_power.
    layout: &'static [&'static str],
    /// Every level [`layout`] shows, with its flags and params.
    levels: &'static [LevelPin],
}

/// The levels of each profile, in `V::ALL` order.
type LevelsByProfile = [&'static [LevelPin]; 5];

/// A preset's pins: 2.6.25 and both 2.6.26s build `old`, both 2.6.32s
/// build `new` (the 2.6.32 domain code, cpu_power summed over groups).
const fn pins(old: &'static [&'static str], new: &'static [&'static str], levels: LevelsByProfile) -> [Pin; 5] {
    [
        Pin { v: V::V2_6_25, layout: old, levels: levels[0] },
        Pin { v: V::V2_6_26Rc4, layout: old, levels: levels[1] },
        Pin { v: V::V2_6_26, layout: old, levels: levels[2] },
        Pin { v: V::V2_6_32Rc1, layout: new, levels: levels[3] },
        Pin { v: V::V2_6_32, layout: new, levels: levels[4] },
    ]
}

/// MC + CPU hosts (Q6600, Tigerton, Stoakley): the same levels on each profile.
const MC_CPU: LevelsByProfile =
    [LEVELS_MC_CPU_OLD, LEVELS_MC_CPU_OLD, LEVELS_MC_CPU_OLD, LEVELS_MC_CPU_32RC1, LEVELS_MC_CPU_32];

/// Checks `host` against its pins, one per profile in `V::ALL` order. Every
/// profile is checked even after one fails; each failed assertion names host,
/// CPU, level and profile, and the test then fails listing the profiles.
fn check_preset(host: &str, pins: &[Pin; 5]) {
    assert_eq!(pins.each_ref().map(|pin| pin.v), V::ALL, "{host}: one pin per profile, oldest first");
    let failed: Vec<&str> =
        pins.iter().filter(|pin| catch_unwind(|| check_pin(host, pin)).is_err()).map(|pin| pin.v.name()).collect();
    assert!(failed.is_empty(), "{host} failed on {}", failed.join(", "));
}

fn check_pin(host: &str, pin: &Pin) {
    let d = build(host, pin.v);
    assert_eq!(layout(&d), pin.layout, "{host} layout on {}", pin.v);
    for &(level, (value, names), p) in pin.levels {
        check_level(host, &d, level, value, names, p);
    }
}

/// X2 on 2.6.25/26: only the CPU level, two one-CPU groups of power 1024,
/// flags 47, idx busy 2 / idle 1 / newidle 2 / wake 1 / forkexec 1.
/// X2 on 2.6.32(-rc1): MC over both cores, the CPU level removed.
const X2: [Pin; 5] =
    pins(X2_OLD, X2_NEW, [LEVELS_CPU_OLD, LEVELS_CPU_OLD, LEVELS_CPU_OLD, LEVELS_MC_32RC1, LEVELS_MC_32]);

#[test]
fn x2() {
    check_preset("x2", &X2);
    // 2.6.25/26: CPU0's only domain (CPU) has these idx, as in the doc above.
    for v in [V::V2_6_25, V::V2_6_26Rc4, V::V2_6_26] {
        let p = build("x2", v).of(0)[0].params;
        let idx = (p.busy_idx, p.idle_idx, p.newidle_idx, p.wake_idx, p.forkexec_idx);
        assert_eq!(idx, (2, 1, 2, 1, 1), "x2 CPU0 lowest level idx on {v}");
    }
}

/// Q6600: MC = each L2 pair {0,1}, {2,3} (single-CPU groups, 1024 each);
/// CPU = all four with the two pairs as groups: 1024 each on 2.6.25/26
/// ("perf policy"), 2048 each on 2.6.32 (sum of the MC groups).
const Q6600: [Pin; 5] = pins(Q6600_OLD, Q6600_NEW, MC_CPU);

#[test]
fn q6600() {
    check_preset("q6600", &Q6600);
}

/// Nehalem-EP (NUMA): SIBLING = the HT pair, MC = the socket's 8 threads,
/// CPU removed (same span as MC, one group), NODE = all 16 with the two
/// sockets as groups, own node first.
const NEHALEM_EP: [Pin; 5] = pins(
    NEHALEM_OLD,
    NEHALEM_NEW,
    [
        LEVELS_SIB_MC_NODE_25,
        LEVELS_SIB_MC_NODE_26,
        LEVELS_SIB_MC_NODE_26,
        LEVELS_SIB_MC_NODE_32RC1,
        LEVELS_SIB_MC_NODE_32,
    ],
);

#[test]
fn nehalem_ep() {
    check_preset("nehalem-ep", &NEHALEM_EP);
}

/// Tigerton: MC = die pairs, CPU = all 16 with 8 groups (the package is
/// invisible: groups are L2 pairs).
const TIGERTON: [Pin; 5] = pins(TIGERTON_OLD, TIGERTON_NEW, MC_CPU);

#[test]
fn tigerton() {
    check_preset("tigerton", &TIGERTON);
    // Every CPU's second domain (CPU) has 8 groups on every profile.
    for v in V::ALL {
        for (cpu, chain) in build("tigerton", v).per_cpu.iter().enumerate() {
            assert_eq!(chain[1].groups.len(), 8, "tigerton CPU{cpu} {} groups on {v}", chain[1].level);
        }
    }
}

/// Stoakley: MC = die pairs, CPU = all 8 with 4 groups.
const STOAKLEY: [Pin; 5] = pins(STOAKLEY_OLD, STOAKLEY_NEW, MC_CPU);

#[test]
fn stoakley() {
    check_preset("stoakley", &STOAKLEY);
}
