//! Is a column's difference from the baseline more than run-to-run noise?
//!
//! Several cells of the seed experiment are bistable ("luck of the draw": a
//! run either piles up or spreads), so a median alone can mislead. This
//! module gives `--significance` its number: the two-sided p-value of a
//! Mann-Whitney U (Wilcoxon rank-sum) test of one cell's runs against the
//! baseline cell's. It needs no assumption about the runs' distribution,
//! which for a bistable cell is two humps.
//!
//! The statistic is the rank sum W of the first list in the pooled,
//! sorted runs, tied values sharing their mean rank. The p-value is the
//! chance that a random split of the same pooled ranks puts W at least as
//! far from its mean, n₁(N+1)/2, as the runs did.
//! - Up to [`EXACT_MAX`] runs in all, that chance is counted exactly over
//!   every split (a subset-sum count over the ranks, ties included, as R's
//!   `coin::wilcox_test(distribution = exact())` does).
//! - Past it, W is taken as normal with the tie-corrected variance
//!   n₁n₂/12 · ((N+1) − Σ(t³−t)/(N(N−1))) and a continuity correction of ½,
//!   as scipy's `mannwhitneyu` does.
//!
//! Without ties the exact p is 2·#{splits with W ≤ w}/C(N, n₁) for a w
//! below the mean: five runs against five that do not overlap give
//! 2/C(10, 5) = 2/252 = 0.0079, the least five runs can show; three
//! against three give 2/20 = 0.1, so `--runs 3` can never reach 5%.
//!
//! The columns of a plan share their seeds (common random numbers); the
//! test ignores that pairing, which only makes it cautious where the shared
//! draws make two columns' runs move together. (statrs 0.19.1 has this test
//! too, but its exact branch returns the complement of the p-value when the
//! first list is no longer than the second, e.g. p = 1 for five runs
//! against five that do not overlap, and it cannot handle ties exactly.)

/// Runs in all (both lists) up to which the p-value is counted exactly:
/// 30 runs a cell. The count takes N × min(n₁, n₂) × N(N+1) steps, 6.6
/// million at 60.
pub const EXACT_MAX: usize = 60;

/// The two-sided Mann-Whitney p-value of `a` against `b` (see the module
/// doc). Lists whose values are all one number give 1; None when a list is
/// empty or holds a NaN.
pub fn rank_test_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| x.is_nan()) {
        return None;
    }
    // Count over the shorter list's subsets: the same splits, fewer steps.
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let ranks = doubled_midranks(a, b);
    let n = ranks.len();
    // Doubled ranks keep every tie's mean rank an integer, and with it W,
    // its mean and every split's distance from the mean.
    let w: u64 = ranks.iter().filter(|r| r.1).map(|r| r.0).sum();
    let mean = (a.len() * (n + 1)) as u64;
    let dist = w.abs_diff(mean);
    if dist == 0 {
        return Some(1.0);
    }
    let all: Vec<u64> = ranks.iter().map(|r| r.0).collect();
    let p = if n <= EXACT_MAX { exact_p(&all, a.len(), mean, dist) } else { normal_p(&all, a.len(), dist) };
    Some(p.min(1.0))
}

/// Every value's rank in the pooled list, doubled (ties get the doubled
/// mean of the ranks they span), with whether it came from `a`.
fn doubled_midranks(a: &[f64], b: &[f64]) -> Vec<(u64, bool)> {
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out = Vec::with_capacity(pooled.len());
    let mut i = 0;
    while i < pooled.len() {
        let j = i + pooled[i..].iter().take_while(|v| v.0 == pooled[i].0).count();
        // Ranks i+1 ..= j: their mean doubled is (i + 1) + j.
        out.extend(pooled[i..j].iter().map(|v| ((i + 1 + j) as u64, v.1)));
        i = j;
    }
    out
}

/// The share of the C(N, k) ways to pick `k` of the doubled ranks `all`
/// whose sum lies at least `dist` from `mean`: a count of subsets by size
/// and sum, one rank at a time.
fn exact_p(all: &[u64], k: usize, mean: u64, dist: u64) -> f64 {
    let total: u64 = all.iter().sum();
    let width = total as usize + 1;
    // ways[j * width + s]: subsets of j ranks seen so far summing to s.
    // f64 holds C(60, 30) ≈ 1.2e17 to 16 digits, plenty for a p-value.
    let mut ways = vec![0f64; (k + 1) * width];
    ways[0] = 1.0;
    for (seen, &r) in all.iter().enumerate() {
        let r = r as usize;
        for j in (1..=k.min(seen + 1)).rev() {
            let (lower, upper) = ways.split_at_mut(j * width);
            let from = &lower[(j - 1) * width..];
            for s in (r..width).rev() {
                upper[s] += from[s - r];
            }
        }
    }
    let row = &ways[k * width..];
    let (mut far, mut all_ways) = (0.0, 0.0);
    for (s, &c) in row.iter().enumerate() {
        all_ways += c;
        if (s as u64).abs_diff(mean) >= dist {
            far += c;
        }
    }
    far / all_ways
}

/// The normal approximation: W's tie-corrected standard deviation (in
/// doubled ranks, so twice the textbook one), the distance less the
/// continuity correction (½ a rank, 1 doubled), two tails.
fn normal_p(all: &[u64], k: usize, dist: u64) -> f64 {
    let n = all.len() as f64;
    let (n1, n2) = (k as f64, n - k as f64);
    // Tie groups: equal doubled ranks are one group.
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let t = all[i..].iter().take_while(|&&r| r == all[i]).count();
        tie_term += (t * t * t - t) as f64;
        i += t;
    }
    let var = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = (dist as f64 - 1.0).max(0.0) / (2.0 * var.sqrt());
    libm::erfc(z / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: Option<f64>, want: f64) {
        let got = got.expect("a p-value");
        assert!((got - want).abs() < 1e-12, "p = {got}, want {want}");
    }

    /// Two lists that do not overlap: the split is the most extreme of
    /// C(N, n) on one side, so p = 2 / C(N, n).
    #[test]
    fn lists_apart_give_two_over_the_number_of_splits() {
        let low = [1.0, 2.0, 3.0, 4.0, 5.0];
        let high = [6.0, 7.0, 8.0, 9.0, 10.0];
        close(rank_test_p(&low, &high), 2.0 / 252.0); // C(10, 5) = 252
        close(rank_test_p(&high, &low), 2.0 / 252.0); // either order
        close(rank_test_p(&low[..3], &high[..3]), 2.0 / 20.0); // C(6, 3) = 20
        close(rank_test_p(&low[..4], &high[..4]), 2.0 / 70.0); // C(8, 4) = 70
    }

    /// scipy's own example (the `mannwhitneyu` docs): U = 17 of at most
    /// 20 for the first list; 7 of the C(9, 4) = 126 splits are at least
    /// as extreme on each side, so p = 14/126 = 0.1111.
    #[test]
    fn the_scipy_example() {
        close(rank_test_p(&[19.0, 22.0, 16.0, 29.0, 24.0], &[20.0, 11.0, 17.0, 12.0]), 14.0 / 126.0);
    }

    /// With ties: a = {1, 2, 2}, b = {2, 3, 3}. Pooled ranks 1, 3, 3, 3,
    /// 5.5, 5.5 (doubled 2, 6, 6, 6, 11, 11); W(a) doubled = 2 + 6 + 6 =
    /// 14 against a mean of 3 × 7 = 21. Of the 20 splits, the three {2, 6,
    /// 6} (sum 14) and the three {6, 11, 11} (sum 28) are 7 or more from
    /// 21, so p = 6/20.
    #[test]
    fn ties_are_counted_exactly() {
        close(rank_test_p(&[1.0, 2.0, 2.0], &[2.0, 3.0, 3.0]), 6.0 / 20.0);
    }

    /// Lists that interleave evenly sit at the mean: nothing to see.
    #[test]
    fn no_difference_gives_one() {
        close(rank_test_p(&[1.0, 4.0, 5.0, 8.0], &[2.0, 3.0, 6.0, 7.0]), 1.0);
        close(rank_test_p(&[7.0, 7.0], &[7.0, 7.0, 7.0]), 1.0);
        assert_eq!(rank_test_p(&[], &[1.0]), None);
        assert_eq!(rank_test_p(&[f64::NAN], &[1.0]), None);
    }

    /// Past EXACT_MAX the normal approximation: 31 against 31 apart.
    /// W = 1 + ... + 31 = 496, mean 31 × 63 / 2 = 976.5, variance
    /// 31 × 31 × 63 / 12 = 5045.25 (sd 71.03), z = (480.5 − 0.5) / 71.03
    /// = 6.758, p = erfc(6.758 / √2) = 1.40e-11.
    #[test]
    fn large_lists_use_the_normal_approximation() {
        let low: Vec<f64> = (1..=31).map(f64::from).collect();
        let high: Vec<f64> = (32..=62).map(f64::from).collect();
        let p = rank_test_p(&low, &high).unwrap();
        assert!((1.3e-11..1.5e-11).contains(&p), "p = {p:e}");
    }

    /// The normal approximation with ties: a = 20 × 1 and 11 × 2, b = 10
    /// × 2 and 21 × 3 (62 runs). Mean ranks 10.5 (ranks 1-20), 31 (21-41)
    /// and 52 (42-62); W = 20 × 10.5 + 11 × 31 = 551 against 31 × 63 / 2
    /// = 976.5. Ties: (20³ − 20) + 2 × (21³ − 21) = 26,460, so the
    /// variance is 31 × 31 / 12 × (63 − 26,460 / (62 × 61)) = 4,484.96
    /// (sd 66.970), z = (425.5 − 0.5) / 66.970 = 6.3461 and p =
    /// erfc(z / √2) = 2.2079e-10 (without the tie correction 2.19e-9).
    #[test]
    fn the_normal_approximation_corrects_for_ties() {
        let a: Vec<f64> = [1.0; 20].into_iter().chain([2.0; 11]).collect();
        let b: Vec<f64> = [2.0; 10].into_iter().chain([3.0; 21]).collect();
        let p = rank_test_p(&a, &b).unwrap();
        assert!((p / 2.207_876_116_759_414_6e-10 - 1.0).abs() < 1e-9, "p = {p:e}");
    }

    /// At EXACT_MAX the two methods agree on a moderate difference to
    /// within the approximation's error (7% of p here).
    #[test]
    fn exact_and_normal_agree_where_they_meet() {
        // 26 against 34 of the pooled 1..=60: `a` takes every multiple of
        // 3 and the ten highest, so it sits a little above `b`. W = 3 + 6
        // + ... + 48 + 51 + 52 + ... + 60 = 408 + 555 = 963 against a mean
        // of 26 × 61 / 2 = 793. The exact p, 0.0107061 (a subset-sum count
        // of the same splits written separately in Python for this
        // check), against the normal 0.0114539 (z = (170 − 0.5) /
        // √(26 × 34 × 61 / 12) = 2.5297).
        let a: Vec<f64> = (1..=60).filter(|i| i % 3 == 0 || *i > 50).map(f64::from).collect();
        let b: Vec<f64> = (1..=60).filter(|i| !(i % 3 == 0 || *i > 50)).map(f64::from).collect();
        assert_eq!((a.len(), b.len()), (26, 34));
        let exact = rank_test_p(&a, &b).unwrap();
        let ranks = doubled_midranks(&a, &b);
        let all: Vec<u64> = ranks.iter().map(|r| r.0).collect();
        let w: u64 = ranks.iter().filter(|r| r.1).map(|r| r.0).sum();
        let normal = normal_p(&all, a.len(), w.abs_diff((a.len() * 61) as u64));
        assert!((exact - 0.010_706_076_340_340).abs() < 1e-12, "exact p = {exact}");
        assert!((normal - 0.011_453_908_420_104).abs() < 1e-9, "normal p = {normal}");
    }
}
