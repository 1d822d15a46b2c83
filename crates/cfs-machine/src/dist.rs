//! Random draws for run times, and the duration syntax (`20us`, `1.5ms`).
//!
//! Every draw comes from the run's seeded `rand_pcg` stream, so the same
//! seed gives the same times. The transcendental functions come from the
//! `libm` crate (a pure-Rust port of musl's), not from `f64::ln` and
//! `f64::cos`, which call the platform's C library. C libraries differ in
//! the last bit (glibc's `exp`, `log` and `cos` disagree with musl's for
//! 10%, 7% and 3% of random arguments in the ranges the model uses), so a
//! seed would reproduce a run only on the platform that made it.
//! `clippy.toml` forbids the std versions workspace-wide.

use rand::RngExt;
use rand_pcg::Pcg64Mcg;
use std::fmt;

/// A distribution of durations in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Always this value.
    Fixed(u64),
    /// Uniform on `[lo, hi]`.
    Uniform {
        /// Lower bound, ns.
        lo: u64,
        /// Upper bound, ns.
        hi: u64,
    },
    /// Exponential with this mean.
    Exp {
        /// Mean, ns.
        mean: u64,
    },
    /// Normal, truncated at zero.
    Normal {
        /// Mean, ns.
        mean: u64,
        /// Standard deviation, ns.
        sd: u64,
    },
}

impl Dist {
    /// A normal distribution given by its mean and coefficient of variation.
    pub fn normal_cv(mean_ns: f64, cv: f64) -> Dist {
        Dist::Normal { mean: mean_ns.max(0.0) as u64, sd: (mean_ns * cv).max(0.0) as u64 }
    }

    /// One draw.
    pub fn sample(&self, rng: &mut Pcg64Mcg) -> u64 {
        match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform { lo, hi } if hi > lo => rng.random_range(lo..=hi),
            Dist::Uniform { lo, .. } => lo,
            Dist::Exp { mean } => {
                let u: f64 = rng.random();
                (-libm::log(1.0 - u) * mean as f64) as u64
            }
            Dist::Normal { mean, sd } => {
                let v = mean as f64 + sd as f64 * std_normal(rng);
                v.max(0.0) as u64
            }
        }
    }

    /// The mean, ns.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Fixed(v) => v as f64,
            Dist::Uniform { lo, hi } => (lo as f64 + hi.max(lo) as f64) / 2.0,
            Dist::Exp { mean } | Dist::Normal { mean, .. } => mean as f64,
        }
    }
}

/// A standard normal draw (Box-Muller; one of the pair is discarded so a
/// draw always consumes exactly two uniforms, which keeps streams aligned).
pub fn std_normal(rng: &mut Pcg64Mcg) -> f64 {
    let u1: f64 = rng.random();
    let u2: f64 = rng.random();
    let r = (-2.0 * libm::log(1.0 - u1)).sqrt();
    r * libm::cos(2.0 * std::f64::consts::PI * u2)
}

/// `x.round() as u64` (round half away from zero, saturating), without
/// the call into compiler-builtins that `f64::round` becomes on baseline
/// x86-64 (no SSE4.1). Exact: below 2^52 the integer part and the
/// fraction are both exact, so comparing the fraction with 0.5 decides as
/// `round` does.
#[inline]
pub(crate) fn round_u64(x: f64) -> u64 {
    if (0.0..4_503_599_627_370_496.0).contains(&x) {
        let t = x as u64;
        if x - t as f64 >= 0.5 { t + 1 } else { t }
    } else {
        x.round() as u64
    }
}

/// A duration that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationError(pub String);

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad duration {:?} (expected a number with a unit: ns, us, ms or s, e.g. 20us, 1.5ms)", self.0)
    }
}

impl std::error::Error for DurationError {}

/// Parses `100ns`, `20us` (or `µs`), `1.5ms`, `2s` into ns. A bare number
/// is taken with `default_unit_ns` (1000 for rt-app's microseconds).
pub fn parse_duration_with(s: &str, default_unit_ns: f64) -> Result<u64, DurationError> {
    let t = s.trim();
    let err = || DurationError(s.to_string());
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num.replace('_', "").parse().map_err(|_| err())?;
    let scale = match unit.trim() {
        "" => default_unit_ns,
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(err()),
    };
    let v = num * scale;
    // Bound to ~11 days of simulated time: far beyond any run, and safe
    // from overflow in the engine's arithmetic.
    if !v.is_finite() || !(0.0..=1e15).contains(&v) {
        return Err(err());
    }
    Ok(v.round() as u64)
}

/// [`parse_duration_with`] where a bare number is an error.
pub fn parse_duration(s: &str) -> Result<u64, DurationError> {
    let t = s.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '_') {
        return Err(DurationError(s.to_string()));
    }
    parse_duration_with(s, 1.0)
}

/// A simulated time as [`parse_duration`] reads it back, in the largest
/// unit that divides it: `2s`, `1500ms`, `20us`, `7ns`.
pub fn fmt_ns(ns: u64) -> String {
    if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fmt_ns_writes_the_largest_unit_that_divides_and_parses_back() {
        assert_eq!(fmt_ns(2_000_000_000), "2s");
        assert_eq!(fmt_ns(1_500_000_000), "1500ms");
        assert_eq!(fmt_ns(20_000), "20us");
        assert_eq!(fmt_ns(7), "7ns");
        assert_eq!(fmt_ns(0), "0s");
        for ns in [1, 999, 1_000, 63_000, 4_000_000, 1_000_000_001, 60_000_000_000] {
            assert_eq!(parse_duration(&fmt_ns(ns)).unwrap(), ns, "{}", fmt_ns(ns));
        }
    }

    #[test]
    fn round_u64_is_round() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut vals = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.4,
            -0.6,
            -3.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            1e19,
            1e30,
        ];
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(f64::from_bits(x));
            vals.push((x % 100_000_000) as f64 / 64.0);
            vals.push((x % 1_000_000) as f64 + 0.5);
        }
        for v in vals {
            assert_eq!(round_u64(v), v.round() as u64, "{v:e}");
        }
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("20us").unwrap(), 20_000);
        assert_eq!(parse_duration("1.5ms").unwrap(), 1_500_000);
        assert_eq!(parse_duration("2s").unwrap(), 2_000_000_000);
        assert_eq!(parse_duration("100ns").unwrap(), 100);
        assert!(parse_duration("20").is_err());
        assert!(parse_duration("-1ms").is_err());
        assert!(parse_duration("1e400s").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert_eq!(parse_duration_with("20", 1e3).unwrap(), 20_000);
        // A bare number is an error in every spelling.
        for bare in ["1.5", "1_000", "7."] {
            assert!(parse_duration(bare).is_err(), "{bare}");
        }
        // The bound: 10^15 ns (~11.6 days) is the longest duration.
        assert_eq!(parse_duration("1000000s").unwrap(), 1_000_000_000_000_000);
        assert!(parse_duration("1000001s").is_err());
    }

    #[test]
    fn draws_are_seeded_and_centred() {
        let mut a = Pcg64Mcg::seed_from_u64(7);
        let mut b = Pcg64Mcg::seed_from_u64(7);
        let d = Dist::normal_cv(10_000.0, 0.1);
        let xs: Vec<u64> = (0..1000).map(|_| d.sample(&mut a)).collect();
        let ys: Vec<u64> = (0..1000).map(|_| d.sample(&mut b)).collect();
        assert_eq!(xs, ys);
        let mean = xs.iter().sum::<u64>() as f64 / 1000.0;
        assert!((mean - 10_000.0).abs() < 200.0, "{mean}");
        let e = Dist::Exp { mean: 5_000 };
        let m = (0..4000).map(|_| e.sample(&mut a)).sum::<u64>() as f64 / 4000.0;
        assert!((m - 5_000.0).abs() < 400.0, "{m}");
    }

    /// Sample mean and standard deviation.
    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        (m, var.sqrt())
    }

    /// `n` draws of `d`.
    fn draws(d: Dist, n: usize, rng: &mut Pcg64Mcg) -> Vec<f64> {
        (0..n).map(|_| d.sample(rng) as f64).collect()
    }

    #[test]
    fn normal_draws_have_the_asked_spread() {
        // CV 0.1 of 10 µs: sd 1 µs. With 4000 draws the sample sd is within
        // ~2% of it (its standard error is sd / sqrt(2n) = 1.1%).
        let mut r = Pcg64Mcg::seed_from_u64(3);
        let (m, sd) = moments(&draws(Dist::normal_cv(10_000.0, 0.1), 4000, &mut r));
        assert!((m - 10_000.0).abs() < 50.0, "{m}");
        assert!((sd - 1_000.0).abs() < 40.0, "{sd}");
        // The standard normal itself: mean 0, sd 1.
        let z: Vec<f64> = (0..4000).map(|_| std_normal(&mut r)).collect();
        let (zm, zsd) = moments(&z);
        assert!(zm.abs() < 0.05 && (zsd - 1.0).abs() < 0.04, "{zm} {zsd}");
    }

    #[test]
    fn exponential_draws_spread_as_much_as_their_mean() {
        // An exponential's sd equals its mean; the sample sd of 4000 draws has
        // a standard error of ~2.2% (sqrt((kurtosis 9 - 1) / 4n)).
        let mut r = Pcg64Mcg::seed_from_u64(11);
        let (m, sd) = moments(&draws(Dist::Exp { mean: 5_000 }, 4000, &mut r));
        assert!((m - 5_000.0).abs() < 250.0 && (sd - 5_000.0).abs() < 400.0, "{m} {sd}");
    }

    #[test]
    fn uniform_draws_stay_in_range_and_degenerate_ranges_give_lo() {
        // Uniform on [1000, 3000]: mean 2000, sd (3000 - 1000) / sqrt(12) = 577.
        let mut r = Pcg64Mcg::seed_from_u64(5);
        let xs = draws(Dist::Uniform { lo: 1_000, hi: 3_000 }, 4000, &mut r);
        assert!(xs.iter().all(|x| (1_000.0..=3_000.0).contains(x)));
        let (m, sd) = moments(&xs);
        assert!((m - 2_000.0).abs() < 30.0 && (sd - 577.4).abs() < 25.0, "{m} {sd}");
        // ... and draw nothing from the stream, like `Fixed`, so a workload
        // that narrows a range to a point keeps every later draw the same.
        for (lo, hi) in [(7, 7), (9, 2)] {
            let mut twin = r.clone();
            assert_eq!(Dist::Uniform { lo, hi }.sample(&mut r), lo);
            assert_eq!(r.random::<u64>(), twin.random::<u64>());
        }
    }

    #[test]
    fn means() {
        assert_eq!(Dist::Fixed(42).mean(), 42.0);
        assert_eq!(Dist::Uniform { lo: 1_000, hi: 3_000 }.mean(), 2_000.0);
        // An inverted range draws its lower bound, so that is its mean.
        assert_eq!(Dist::Uniform { lo: 9, hi: 2 }.mean(), 9.0);
        assert_eq!(Dist::Exp { mean: 5 }.mean(), 5.0);
        assert_eq!(Dist::normal_cv(10.0, 0.5).mean(), 10.0);
    }
}
