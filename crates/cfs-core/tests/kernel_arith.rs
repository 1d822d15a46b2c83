//! Unit pins of the fair class's pure arithmetic against the kernel
//! formulas, with the working shown.
//!
//! Kernel lines used (2.6.26 = bce7f793, 2.6.26-rc4 = e490517a, 2.6.25 =
//! 4b119e21):
//! - calc_delta_mine / SRR / WMULT_CONST: 2.6.26 sched.c:1326-1370,
//!   rc4 sched.c (same, no `w >= 2^32` guard), 2.6.25 sched.c (no `1 +`);
//! - prio_to_weight / prio_to_wmult, set_load_weight: 2.6.26 sched.c:1395-1545;
//! - __sched_period, sched_slice, sched_vslice_add: 2.6.26 sched_fair.c:344-406;
//!   rc4 calc_delta_weight/calc_delta_fair/calc_delta_asym sched_fair.c:336-421;
//!   2.6.25 sched_fair.c:270-310;
//! - wakeup_gran / wakeup_preempt_entity: 2.6.26 sched_fair.c:1109-1150;
//! - update_avg: 2.6.26 sched_fair.c:642-646;
//! - update_cpu_load: 2.6.26 sched.c:2570-2595;
//! - sched_init_granularity: 2.6.26 sched.c (5861 in rc4), tunables
//!   sched_fair.c:25-74;
//! - sched_features.h (2.6.26) and the 2.6.25 enum in sched.c;
//! - msecs_to_jiffies (HZ=250/1000 round up), reciprocal_value /
//!   sg_div_cpu_power (2.6.26 sched.c, lib/reciprocal_div.c).

use cfs_core::balance::msecs_to_jiffies;
use cfs_core::entity::update_avg;
use cfs_core::fair::{sched_period, sched_slice, sched_vslice_add, wakeup_gran, wakeup_preempt_entity};
use cfs_core::features::{Feature, FeatureTable, Features};
use cfs_core::patches::Patches;
use cfs_core::profile::Rules;
use cfs_core::rq::Rq;
use cfs_core::tunables::Tunables;
use cfs_core::wakeup::{half_imbalance, reciprocal_value, sg_div_cpu_power};
use cfs_core::weights::{LoadWeight, Policy, calc_delta_fair, calc_delta_mine, lazy_inverse, set_load_weight};
use cfs_core::{KernelVersion, Patch};

const V25: KernelVersion = KernelVersion::V2_6_25;
const RC4: KernelVersion = KernelVersion::V2_6_26Rc4;
const V26: KernelVersion = KernelVersion::V2_6_26;

fn rules(v: KernelVersion) -> Rules {
    Rules { version: v, patches: Patches::none() }
}

fn w(nice: i32) -> u64 {
    set_load_weight(Policy::Normal, nice, V26).weight
}

// ---------------------------------------------------------------------
// calc_delta_mine
// ---------------------------------------------------------------------

#[test]
fn calc_delta_mine_small_path_with_lazy_queue_inverse() {
    // Queue W = 1024 + 335 + 3121 = 4480 (nice 0, 5, -5).
    // 2.6.26 lazy inverse: 1 + (2^32 - 4480/2) / (4480 + 1)
    //   = 1 + 4294965056 / 4481 = 1 + 958483 = 958484.
    assert_eq!(lazy_inverse(4480, V26), 958_484);
    // 2.6.25 has no "+ 1": 958483.
    assert_eq!(lazy_inverse(4480, V25), 958_483);
    // delta = 4 ms, weight 1024: tmp = 4_096_000_000 <= 2^32 (4_294_967_296),
    // so SRR(tmp * inv, 32) = (4_096_000_000 * 958_484 + 2^31) >> 32
    //   = (3_925_950_464_000_000 + 2_147_483_648) >> 32 = 914_082
    // (exact 4e6 * 1024 / 4480 = 914_285.7: the inverse is a little small).
    let mut lw = LoadWeight::lazy(4480);
    assert_eq!(calc_delta_mine(4_000_000, 1024, &mut lw, V26), 914_082);
    assert_eq!(lw.inv_weight, 958_484, "the lazily computed inverse is cached");
}

#[test]
fn calc_delta_mine_boundary_between_the_two_paths() {
    // tmp == 2^32 exactly takes the small path (the test is `tmp > WMULT_CONST`):
    // delta = 4_194_304, weight 1024 -> tmp = 2^32;
    // SRR(2^32 * 958_484, 32) = 958_484 (the product is an exact multiple of 2^32).
    let mut lw = LoadWeight::lazy(4480);
    assert_eq!(calc_delta_mine(4_194_304, 1024, &mut lw, V26), 958_484);
    // One ns more: tmp = 2^32 + 1024 > 2^32, the large path:
    // SRR(tmp, 16) = (4_294_968_320 + 32_768) >> 16 = 65_536 (4_295_001_088 / 65_536 = 65_536.5);
    // SRR(65_536 * 958_484, 16) = (62_815_002_624 + 32_768) >> 16 = 958_484.
    assert_eq!(calc_delta_mine(4_194_305, 1024, &mut lw, V26), 958_484);
    // Large path for a realistic value: delta = 10 ms on W = 3072 (tmp = 10_240_000_000):
    // inv = 1 + (2^32 - 1536)/3073 = 1_397_646; SRR(tmp,16) = 156_250;
    // SRR(156_250 * 1_397_646, 16) = (218_382_187_500 + 32_768) >> 16 = 3_332_248.
    let mut lw = LoadWeight::lazy(3072);
    assert_eq!(calc_delta_mine(10_000_000, 1024, &mut lw, V26), 3_332_248);
}

#[test]
fn calc_delta_mine_2_6_25_inverse_differs_by_one_ns() {
    // W = 3072: 2.6.26 inv 1_397_646, 2.6.25 inv 1_397_645.
    // delta 4 ms, weight 1024, tmp = 4_096_000_000 (small path):
    //   2.6.26: (4_096_000_000 * 1_397_646 + 2^31) >> 32 = 1_332_899
    //   2.6.25: (4_096_000_000 * 1_397_645 + 2^31) >> 32 = 1_332_898
    assert_eq!(calc_delta_mine(4_000_000, 1024, &mut LoadWeight::lazy(3072), V26), 1_332_899);
    assert_eq!(calc_delta_mine(4_000_000, 1024, &mut LoadWeight::lazy(3072), V25), 1_332_898);
    // 20 ms: 6_664_495 vs 6_664_491 (large path: SRR(20_480_000_000,16) = 312_500,
    // then (312_500 * inv + 32_768) >> 16).
    assert_eq!(calc_delta_mine(20_000_000, 1024, &mut LoadWeight::lazy(3072), V26), 6_664_495);
    assert_eq!(calc_delta_mine(20_000_000, 1024, &mut LoadWeight::lazy(3072), V25), 6_664_491);
}

#[test]
fn calc_delta_mine_task_inverses_and_overflow() {
    // A nice-19 task (w 15, wmult 286_331_153) charged 3 ms: calc_delta_fair =
    // calc_delta_mine(3e6, 1024, {15, 286_331_153}): tmp = 3_072_000_000 (small path)
    // (3_072_000_000 * 286_331_153 + 2^31) >> 32 = 204_800_000 = 3e6 * 1024/15 to the ns.
    let mut lw = set_load_weight(Policy::Normal, 19, V26);
    assert_eq!(calc_delta_fair(3_000_000, &mut lw, V26), 204_800_000);
    // SCHED_IDLE (weight 2, inv 2^31): 1 ms -> tmp = 1_024_000_000,
    // (1_024_000_000 * 2^31 + 2^31) >> 32 = 512_000_000.
    let mut lw = set_load_weight(Policy::Idle, 0, V26);
    assert_eq!((lw.weight, lw.inv_weight), (2, 1 << 31));
    assert_eq!(calc_delta_fair(1_000_000, &mut lw, V26), 512_000_000);
    // Large path with a big product: delta 2^40, weight 88761 (nice -20), lw nice 0
    // (inv 2^22): tmp = 2^40 * 88761; SRR(tmp,16) = 2^24 * 88761 = 1_489_155_653_632;
    // * 2^22 -> 6.2e18 < 2^64; SRR(.., 16) = 2^30 * 88761 = 95_306_398_040_064.
    let mut lw = set_load_weight(Policy::Normal, 0, V26);
    assert_eq!(calc_delta_mine(1 << 40, 88_761, &mut lw, V26), 95_306_398_040_064);
    // u64 wrap of delta * weight, as C does: 2^63 * 1024 = 2^73 = 0 mod 2^64,
    // so the small path returns SRR(0, 32) = 0.
    assert_eq!(calc_delta_mine(1 << 63, 1024, &mut lw, V26), 0);
    // The 64-bit guard: a queue weight >= 2^32 gets inverse 1 (2.6.26 only).
    assert_eq!(lazy_inverse(1 << 32, V26), 1);
    assert_eq!(lazy_inverse((1 << 32) - 1, V26), 1); // 1 + (2^32 - (2^31-1)) / 2^32 = 1 + 0
}

#[test]
fn weight_tables_spot_values() {
    // prio_to_weight[nice+20] and prio_to_wmult: nice -20, -5, 0, 5, 19.
    for (nice, weight, wmult) in [
        (-20, 88_761, 48_388),
        (-5, 3121, 1_376_151),
        (0, 1024, 4_194_304),
        (5, 335, 12_820_798),
        (19, 15, 286_331_153),
    ] {
        let lw = set_load_weight(Policy::Normal, nice, V26);
        assert_eq!((lw.weight, lw.inv_weight), (weight, wmult), "nice {nice}");
        // SCHED_BATCH uses the same table (set_load_weight only special-cases RT and IDLE).
        assert_eq!(set_load_weight(Policy::Batch, nice, V26), lw);
    }
}

// ---------------------------------------------------------------------
// tunables, sched_period, sched_slice, sched_vslice_add
// ---------------------------------------------------------------------

#[test]
fn tunables_scale_with_one_plus_ilog2_ncpus() {
    // f = 1 + ilog2(n): 1 -> 1, 2 -> 2, 3 -> 2, 4 -> 3, 8 -> 4, 16 -> 5.
    // latency/min_granularity capped at 200 ms, wakeup gran uncapped; nr_latency stays 5.
    let table = [
        // (online CPUs, f)
        (1usize, 1u64),
        (2, 2),
        (3, 2),
        (4, 3),
        (8, 4),
        (16, 5),
    ];
    for (n, f) in table {
        assert_eq!(Tunables::scale_factor(n), f);
        for (v, wake) in [(V25, 5_000_000u64), (RC4, 10_000_000), (V26, 10_000_000)] {
            let t = Tunables::defaults(v, n);
            assert_eq!(t.latency, 20_000_000 * f, "{v} n={n}");
            assert_eq!(t.min_granularity, 4_000_000 * f);
            assert_eq!(t.wakeup_granularity, wake * f);
            assert_eq!(t.nr_latency, 5);
            assert_eq!(t.migration_cost, 500_000);
            assert_eq!(t.nr_migrate, 32);
            assert!(t.child_runs_first);
        }
    }
    // 64 CPUs: f = 7: latency 140 ms (under the cap), 2.6.26 wakeup 70 ms.
    let t = Tunables::defaults(V26, 64);
    assert_eq!((t.latency, t.min_granularity, t.wakeup_granularity), (140_000_000, 28_000_000, 70_000_000));
    // 4096 CPUs: f = 13: latency 260 ms -> capped 200; min 52 ms; wakeup 130 ms uncapped.
    let t = Tunables::defaults(V26, 4096);
    assert_eq!((t.latency, t.min_granularity, t.wakeup_granularity), (200_000_000, 52_000_000, 130_000_000));
}

#[test]
fn sched_period_stretches_past_nr_latency() {
    let t = Tunables::defaults(V26, 1);
    // nr <= 5: the latency (the test is `nr_running > sched_nr_latency`).
    for nr in 0..=5 {
        assert_eq!(sched_period(nr, &t), 20_000_000);
    }
    // nr = 6: 6 * 4 ms = 24 ms; nr = 100: 400 ms.
    assert_eq!(sched_period(6, &t), 24_000_000);
    assert_eq!(sched_period(100, &t), 400_000_000);
    // 16 CPUs (f = 5): 100 ms up to 5 tasks, then 20 ms each.
    let t = Tunables::defaults(V26, 16);
    assert_eq!(sched_period(5, &t), 100_000_000);
    assert_eq!(sched_period(7, &t), 140_000_000);
    // At the defaults latency = nr_latency * min_granularity, so nr = nr_latency gives
    // the same period on either side of the test. A latency of 10 ms over a 4 ms
    // minimum granularity does not: sched_nr_latency_handler sets nr_latency =
    // DIV_ROUND_UP(10, 4) = 3, so 3 tasks get the latency (10 ms, not 3 * 4 = 12 ms)
    // and 4 tasks get 4 * 4 = 16 ms.
    let mut t = Tunables::defaults(V26, 1);
    t.set_min_granularity(4_000_000).unwrap();
    t.set_latency(10_000_000).unwrap();
    assert_eq!(t.nr_latency, 3);
    assert_eq!(sched_period(3, &t), 10_000_000);
    assert_eq!(sched_period(4, &t), 16_000_000);
}

/// sched_slice for the queue {nice 0, nice 5, nice -5} (W = 4480, nr = 3).
fn slices(v: KernelVersion, ncpus: usize) -> [u64; 3] {
    let t = Tunables::defaults(v, ncpus);
    let r = rules(v);
    [0, 5, -5].map(|nice| {
        let mut lw = LoadWeight::lazy(4480);
        sched_slice(3, &mut lw, w(nice), &t, &r)
    })
}

#[test]
fn sched_slice_mixed_nice_2_6_26_final_truncates() {
    // 2.6.26: slice = period * w, do_div by W (truncating). period = latency (nr 3 <= 5).
    // 1 CPU, period 20 ms: 20e6*1024/4480 = 4_571_428.57 -> 4_571_428;
    //   20e6*335/4480 = 1_495_535.7 -> 1_495_535; 20e6*3121/4480 = 13_933_035.7 -> 13_933_035.
    assert_eq!(slices(V26, 1), [4_571_428, 1_495_535, 13_933_035]);
    // 2 CPUs (f = 2, 40 ms): 9_142_857, 2_991_071, 27_866_071.
    assert_eq!(slices(V26, 2), [9_142_857, 2_991_071, 27_866_071]);
    // 4 CPUs (f = 3, 60 ms): 13_714_285, 4_486_607, 41_799_107.
    assert_eq!(slices(V26, 4), [13_714_285, 4_486_607, 41_799_107]);
    // 16 CPUs (f = 5, 100 ms): 22_857_142, 7_477_678, 69_665_178.
    assert_eq!(slices(V26, 16), [22_857_142, 7_477_678, 69_665_178]);
}

#[test]
fn sched_slice_mixed_nice_rc4_uses_calc_delta_mine() {
    // rc1..rc4 calc_delta_weight: calc_delta_mine(period, w, &cfs_rq.load), lazy inv 958_484.
    // 1 CPU, nice 0: tmp = 20e6 * 1024 = 20_480_000_000 > 2^32 -> large path:
    //   SRR(tmp,16) = 312_500; (312_500 * 958_484 + 32_768) >> 16 = 4_570_408.
    // nice 5: tmp = 6_700_000_000 -> SRR(tmp,16) = floor(102_233.89 + 0.5) = 102_234;
    //   (102_234 * 958_484 + 32_768) >> 16 = 1_495_203.
    // nice -5: tmp = 62_420_000_000 -> SRR = floor(952_453.61 + 0.5) = 952_454;
    //   (952_454 * 958_484 + 32_768) >> 16 = 13_929_930.
    assert_eq!(slices(RC4, 1), [4_570_408, 1_495_203, 13_929_930]);
    assert_eq!(slices(RC4, 2), [9_140_816, 2_990_407, 27_859_846]);
    assert_eq!(slices(RC4, 4), [13_711_224, 4_485_610, 41_789_777]);
    assert_eq!(slices(RC4, 16), [22_852_039, 7_476_003, 69_649_623]);
}

#[test]
fn sched_slice_mixed_nice_2_6_25_uses_the_older_inverse() {
    // 2.6.25: calc_delta_mine(period, w, &cfs_rq.load) with inv = (2^32 - 2240)/4481 = 958_483.
    // 1 CPU nice 0: (312_500 * 958_483 + 32_768) >> 16 = 4_570_403.
    assert_eq!(slices(V25, 1), [4_570_403, 1_495_202, 13_929_916]);
    assert_eq!(slices(V25, 2), [9_140_806, 2_990_404, 27_859_817]);
    assert_eq!(slices(V25, 4), [13_711_209, 4_485_606, 41_789_733]);
    assert_eq!(slices(V25, 16), [22_852_015, 7_475_995, 69_649_550]);
}

#[test]
fn sched_slice_seven_tasks_stretch_the_period() {
    // Queue nice {-5,0,0,5,5,10,19}: W = 3121+1024+1024+335+335+110+15 = 5964, nr 7 > 5.
    // 4 CPUs (f = 3): period = 7 * 12 ms = 84 ms.
    let ws = [w(-5), w(0), w(0), w(5), w(5), w(10), w(19)];
    assert_eq!(ws.iter().sum::<u64>(), 5964);
    let expect = [
        (V26, [43_957_746u64, 14_422_535, 14_422_535, 4_718_309, 4_718_309, 1_549_295, 211_267]),
        (RC4, [43_950_372, 14_420_116, 14_420_116, 4_717_515, 4_717_515, 1_549_034, 211_232]),
        (V25, [43_950_311, 14_420_096, 14_420_096, 4_717_508, 4_717_508, 1_549_031, 211_232]),
    ];
    for (v, e) in expect {
        let t = Tunables::defaults(v, 4);
        assert_eq!(sched_period(7, &t), 84_000_000);
        let got: Vec<u64> =
            ws.iter().map(|&wt| sched_slice(7, &mut LoadWeight::lazy(5964), wt, &t, &rules(v))).collect();
        // 2.6.26: e.g. 84e6 * 3121 / 5964 = 43_957_746.48 -> 43_957_746 (do_div truncates).
        assert_eq!(got, e, "{v}");
    }
}

#[test]
fn sched_vslice_add_per_profile() {
    // Fork of a nice-0 task onto {0, 5, -5} (W = 4480, nr = 3), 1 CPU.
    let t = Tunables::defaults(V26, 1);
    // 2.6.26: not on_rq -> n = 4, W' = 5504: period(4) * 1024 / 5504
    //   = 20_480_000_000 / 5504 = 3_720_930.2 -> 3_720_930.
    assert_eq!(sched_vslice_add(3, 4480, 1024, false, &t, &rules(V26)), 3_720_930);
    // Already on_rq: n = 3, W' = 4480: 20_480_000_000 / 4480 = 4_571_428.
    assert_eq!(sched_vslice_add(3, 4480, 1024, true, &t, &rules(V26)), 4_571_428);
    // rc1..rc4: the un-normalised period(n') = 20 ms.
    assert_eq!(sched_vslice_add(3, 4480, 1024, false, &t, &rules(RC4)), 20_000_000);
    // 2.6.25: __sched_vslice(W + w, nr + 1) regardless of on_rq: 3_720_930 both ways.
    let t25 = Tunables::defaults(V25, 1);
    assert_eq!(sched_vslice_add(3, 4480, 1024, false, &t25, &rules(V25)), 3_720_930);
    assert_eq!(sched_vslice_add(3, 4480, 1024, true, &t25, &rules(V25)), 3_720_930);
    // 2.6.25 into a 5-task queue (W = 5120): nr + 1 = 6 > 5 -> period(6) = 24 ms,
    // 24e6 * 1024 / (5120 + 1024) = 24_576_000_000 / 6144 = 4_000_000 (period(5) would
    // give 20 ms and 3_333_333).
    assert_eq!(sched_vslice_add(5, 5120, 1024, false, &t25, &rules(V25)), 4_000_000);
    // Into a 5-task queue, 2.6.26 (n' = 6 > 5 -> period 24 ms), W = 5 * 1024, nice 5 child:
    // 24e6 * 1024 / (5120 + 335) = 24_576_000_000 / 5455 = 4_505_224.5 -> 4_505_224.
    assert_eq!(sched_vslice_add(5, 5120, 335, false, &t, &rules(V26)), 4_505_224);
    // Re-placing a queued entity (on_rq): n = nr_running, not + 1. Five queued tasks,
    // W = 4480 + 1024 + 1024 = 6528: period(5) = 20 ms -> 20_480_000_000 / 6528
    // = 3_137_254.9 -> 3_137_254 (counting it again would give period(6) = 24 ms).
    assert_eq!(sched_vslice_add(5, 6528, 1024, true, &t, &rules(V26)), 3_137_254);
    // First task on an empty queue: period(1) * 1024 / w; nice 0 -> 20 ms.
    assert_eq!(sched_vslice_add(0, 0, 1024, false, &t, &rules(V26)), 20_000_000);
}

// ---------------------------------------------------------------------
// wakeup_gran and wakeup_preempt_entity
// ---------------------------------------------------------------------

#[test]
fn wakeup_gran_2_6_26_shrinks_only_for_heavy_tasks() {
    let t = Tunables::defaults(V26, 1); // 10 ms
    let r = rules(V26);
    let g = |nice| wakeup_gran(&mut set_load_weight(Policy::Normal, nice, V26), 4480, &t, &r);
    // nice 0 and lighter: the full 10 ms.
    assert_eq!(g(0), 10_000_000);
    assert_eq!(g(5), 10_000_000);
    assert_eq!(g(19), 10_000_000);
    // nice -5: calc_delta_fair(10e6, {3121, 1_376_151}): tmp = 10_240_000_000 (large path),
    // SRR(tmp,16) = 156_250; (156_250 * 1_376_151 + 32_768) >> 16 = 3_281_000.
    assert_eq!(g(-5), 3_281_000);
    // nice -20: (156_250 * 48_388 + 32_768) >> 16 = 115_366.
    assert_eq!(g(-20), 115_366);
    // Scaled to 4 CPUs (30 ms): nice 0 keeps 30 ms.
    let t4 = Tunables::defaults(V26, 4);
    assert_eq!(wakeup_gran(&mut set_load_weight(Policy::Normal, 0, V26), 4480, &t4, &r), 30_000_000);
}

#[test]
fn wakeup_gran_rc4_is_calc_delta_asym() {
    // rc1..rc4 calc_delta_asym: calc_delta_mine(gran, W, w < 1024 ? {1024, 2^22} : se.load).
    let t = Tunables::defaults(RC4, 1);
    let r = rules(RC4);
    let g = |nice| wakeup_gran(&mut set_load_weight(Policy::Normal, nice, RC4), 4480, &t, &r);
    // nice 0 on W = 4480: tmp = 10e6 * 4480 = 44_800_000_000, SRR(tmp,16) = 683_594
    // (683_593.75 + 0.5 -> 683_594); (683_594 * 2^22 + 32_768) >> 16 = 43_750_016.
    assert_eq!(g(0), 43_750_016);
    // Lighter tasks are clamped to nice 0: the same.
    assert_eq!(g(5), 43_750_016);
    // nice -5: (683_594 * 1_376_151 + 32_768) >> 16 = 14_354_379.
    assert_eq!(g(-5), 14_354_379);
}

#[test]
fn wakeup_preempt_entity_boundaries() {
    let gran = 10_000_000u64;
    let c = 5_000_000_000u64; // curr vruntime
    // vdiff = curr - se < 0: se is right of curr -> -1.
    assert_eq!(wakeup_preempt_entity(c, c + 1, gran), -1);
    // vdiff == 0 -> 0 (not -1: the test is `vdiff < 0`).
    assert_eq!(wakeup_preempt_entity(c, c, gran), 0);
    // vdiff == gran -> 0 (the test is `vdiff > gran`).
    assert_eq!(wakeup_preempt_entity(c, c - gran, gran), 0);
    // vdiff == gran + 1 -> 1: preempt.
    assert_eq!(wakeup_preempt_entity(c, c - gran - 1, gran), 1);
    // Across the u64 wrap the difference is taken as s64: curr just past 0,
    // se just before 2^64, gran + 1 behind.
    let curr = 5u64;
    let se = curr.wrapping_sub(gran + 1);
    assert!(se > curr, "se's raw value is huge");
    assert_eq!(wakeup_preempt_entity(curr, se, gran), 1);
    assert_eq!(wakeup_preempt_entity(curr, se.wrapping_add(1), gran), 0);
    assert_eq!(wakeup_preempt_entity(se, curr, gran), -1);
    // A heavier-than-nice-0 curr (nice -5) has gran 3_281_000 (see above):
    // a lead of 3_281_001 preempts, 3_281_000 does not.
    let g5 = wakeup_gran(&mut set_load_weight(Policy::Normal, -5, V26), 4480, &Tunables::defaults(V26, 1), &rules(V26));
    assert_eq!(wakeup_preempt_entity(c, c - 3_281_001, g5), 1);
    assert_eq!(wakeup_preempt_entity(c, c - 3_281_000, g5), 0);
}

// ---------------------------------------------------------------------
// update_avg, update_cpu_load
// ---------------------------------------------------------------------

#[test]
fn update_avg_is_a_signed_eighth_ewma() {
    // avg += (sample - avg) >> 3 with s64 arithmetic.
    let mut a = 0u64;
    update_avg(&mut a, 1_000_000); // +125_000
    assert_eq!(a, 125_000);
    update_avg(&mut a, 1_000_000); // +(875_000 >> 3) = +109_375
    assert_eq!(a, 234_375);
    update_avg(&mut a, 0); // -(234_375 >> 3): -234_375 >> 3 = -29_297 (floor), 234_375 - 29_297
    assert_eq!(a, 205_078);
    // A sample 7 below the average: -7 >> 3 = -1 (arithmetic shift floors).
    let mut a = 100;
    update_avg(&mut a, 93);
    assert_eq!(a, 99);
    // 7 above: 7 >> 3 = 0.
    let mut a = 100;
    update_avg(&mut a, 107);
    assert_eq!(a, 100);
}

#[test]
fn update_cpu_load_decays_with_round_up_on_rise() {
    // cpu_load[i] = (old * (2^i - 1) + new') >> i, new' = new + 2^i - 1 if new > old.
    let mut rq = Rq::new(0);
    rq.load.weight = 3072;
    rq.update_cpu_load();
    // i0 3072; i1 (0 + 3073) >> 1 = 1536; i2 (3075) >> 2 = 768; i3 (3079) >> 3 = 384;
    // i4 (3087) >> 4 = 192.
    assert_eq!(rq.cpu_load, [3072, 1536, 768, 384, 192]);
    rq.update_cpu_load();
    // i1 (1536 + 3073) >> 1 = 2304; i2 (768*3 + 3075) >> 2 = 1344;
    // i3 (384*7 + 3079) >> 3 = 720; i4 (192*15 + 3087) >> 4 = 372.
    assert_eq!(rq.cpu_load, [3072, 2304, 1344, 720, 372]);
    // Constant load converges to it exactly thanks to the round-up (no getting stuck
    // one below the target): after enough ticks every index reads 3072.
    for _ in 0..200 {
        rq.update_cpu_load();
    }
    assert_eq!(rq.cpu_load, [3072; 5]);
    // Falling load: no round-up. load 1024: i1 (3072 + 1024) >> 1 = 2048;
    // i4 (3072 * 15 + 1024) >> 4 = 2944.
    rq.load.weight = 1024;
    rq.update_cpu_load();
    assert_eq!(rq.cpu_load, [1024, 2048, 2560, 2816, 2944]);
}

// ---------------------------------------------------------------------
// features
// ---------------------------------------------------------------------

#[test]
fn feature_masks_of_the_seed_threads() {
    let t = FeatureTable::V2_6_26;
    // 895 = NEW_FAIR_SLEEPERS 1 + WAKEUP_PREEMPT 2 + START_DEBIT 4 + AFFINE_WAKEUPS 8
    //     + CACHE_HOT_BUDDY 16 + SYNC_WAKEUPS 32 + HRTICK 64 + NORMALIZED_SLEEPER 256
    //     + DEADLINE 512 (DOUBLE_TICK 128 off).
    assert_eq!(Features::default_for(t).mask(), 895);
    let on = |m: u32| {
        let f = Features::from_mask(t, m).unwrap();
        [
            Feature::NewFairSleepers,
            Feature::WakeupPreempt,
            Feature::StartDebit,
            Feature::AffineWakeups,
            Feature::CacheHotBuddy,
            Feature::SyncWakeups,
            Feature::Hrtick,
            Feature::DoubleTick,
            Feature::NormalizedSleeper,
            Feature::Deadline,
        ]
        .map(|x| f.has(x))
    };
    assert_eq!(on(895), [true, true, true, true, true, true, true, false, true, true]);
    // 863 = 895 - 32: SYNC_WAKEUPS off.
    assert_eq!(on(863), [true, true, true, true, true, false, true, false, true, true]);
    // 893 = 895 - 2: WAKEUP_PREEMPT off.
    assert_eq!(on(893), [true, false, true, true, true, true, true, false, true, true]);
    // 861 = 895 - 34: both off.
    assert_eq!(on(861), [true, false, true, true, true, false, true, false, true, true]);
    // 0: everything off.
    assert_eq!(on(0), [false; 10]);
    // 1024 is not a 2.6.26 bit.
    assert!(Features::from_mask(t, 1024).is_err());
    // Printable as names, in bit order.
    let f = Features::from_mask(t, 861).unwrap();
    assert_eq!(f.names()[1], "NO_WAKEUP_PREEMPT");
    assert_eq!(f.names()[5], "NO_SYNC_WAKEUPS");
    assert_eq!(f.names()[3], "AFFINE_WAKEUPS");
}

#[test]
fn feature_masks_of_2_6_25_and_the_backport() {
    // 2.6.25: NEW_FAIR_SLEEPERS 1 | WAKEUP_PREEMPT 2 | START_DEBIT 4 | HRTICK 8 = 15;
    // no SYNC_WAKEUPS bit: sync always honoured, affine wakeups always allowed.
    let f = Features::default_for(FeatureTable::V2_6_25);
    assert_eq!(f.mask(), 15);
    assert!(f.has(Feature::SyncWakeups) && f.has(Feature::AffineWakeups) && f.has(Feature::CacheHotBuddy));
    assert!(Features::from_mask(FeatureTable::V2_6_25, 32).is_err());
    // With Mike's back-port the bit is 32, default off: 15 still, 47 turns it on.
    let cfg = cfs_core::Config::new(V25, 1).with_patch(Patch::SyncWakeupsBit).unwrap();
    assert_eq!(cfg.features.mask(), 15);
    assert!(!cfg.features.has(Feature::SyncWakeups));
    let cfg = cfg.with_features_mask(47).unwrap();
    assert!(cfg.features.has(Feature::SyncWakeups));
    // The back-port does not apply to 2.6.26, which has the bit already.
    assert!(cfs_core::Config::new(V26, 1).with_patch(Patch::SyncWakeupsBit).is_err());
    assert!(cfs_core::Config::new(V26, 1).with_patch(Patch::AffinityFix).is_err());
    assert!(cfs_core::Config::new(RC4, 1).with_patch(Patch::AffinityFix).is_ok());
    // 38736f47507 fixes the list iterator of 2.6.26-rc1..2.6.27: not in 2.6.25 (rbtree
    // iterator), already in 2.6.32.
    for (v, ok) in [(V25, false), (RC4, true), (V26, true), (KernelVersion::V2_6_32, false)] {
        assert_eq!(cfs_core::Config::new(v, 1).with_patch(Patch::IteratorFix).is_ok(), ok, "{v}");
    }
    assert_eq!(Patch::by_name("iterator-fix"), Some(Patch::IteratorFix));
    assert_eq!(Patch::IteratorFix.to_string(), "iterator-fix");
    let why = |p: Patch, v| p.incompatibility(v).unwrap_or_default();
    assert!(why(Patch::IteratorFix, KernelVersion::V2_6_32).contains("already contains 38736f47507"));
    assert!(why(Patch::IteratorFix, V25).contains("rbtree"));
    // The seed patches were posted against 2.6.25/26: none applies to 2.6.32.
    for p in [Patch::Waker, Patch::LastPreempter, Patch::SyncLoadClamp, Patch::AffinityFix] {
        for v in [KernelVersion::V2_6_32Rc1, KernelVersion::V2_6_32] {
            assert!(why(p, v).contains("2.6.32's wakeup path differs"), "{p} on {v}");
        }
    }
    let set = Patches::none().with(Patch::Waker).with(Patch::IteratorFix);
    assert_eq!(format!("{set:?}"), "[Waker, IteratorFix]");
}

// ---------------------------------------------------------------------
// balancing arithmetic
// ---------------------------------------------------------------------

#[test]
fn balancing_arithmetic() {
    // msecs_to_jiffies rounds up: HZ=250 (4 ms per jiffy): 1 ms -> 1, 64 ms -> 16, 65 -> 17.
    assert_eq!(msecs_to_jiffies(1, 250), 1);
    assert_eq!(msecs_to_jiffies(64, 250), 16);
    assert_eq!(msecs_to_jiffies(65, 250), 17);
    assert_eq!(msecs_to_jiffies(64, 1000), 64);
    // reciprocal_value(k) = ceil(2^32 / k): 1024 -> 2^22, 3 -> 1_431_655_766.
    assert_eq!(reciprocal_value(1024), 1 << 22);
    assert_eq!(reciprocal_value(3), 1_431_655_766);
    // sg_div_cpu_power(power, load) = (u32)load * R >> 32: 3 * 1024 / 3
    // = (3072 * 1_431_655_766) >> 32 = 1024 (4_398_046_513_152 >> 32 = 1024.0000000005).
    assert_eq!(sg_div_cpu_power(3, 3072), 1024);
    // half the imbalance margin: 125 -> 112, 110 -> 105, 133 -> 116.
    assert_eq!(half_imbalance(125), 112);
    assert_eq!(half_imbalance(110), 105);
    assert_eq!(half_imbalance(133), 116);
}
