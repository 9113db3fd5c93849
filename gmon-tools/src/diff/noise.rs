//! The noise model of `gmon diff` (spec/diff.md §2-§4): how far a function's share of the
//! samples may move between two profiles of the same program by chance alone.
//!
//! Sampling noise (§2): a function's samples out of a profile's total are a binomial count.
//! Given the samples two profiles put in one function, `k + j`, the number in NEW is
//! binomial with the probability NEW's total has of the pooled total, if the share did not
//! change; the two-sided exact test of that is the p-value.
//!
//! Run-to-run spread (§3): with several profiles on a side, the per-run counts of each
//! function spread more than sampling alone explains (the CPU runs a little differently each
//! time). That extra spread is one factor `φ` (the dispersion), estimated across all functions
//! from the runs' chi-square of homogeneity; every count is then worth `1/φ` of an independent
//! sample, and the same test runs on the counts divided by `φ`.

use serde::Serialize;

/// Which noise model ran (spec/diff.md §2, §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// One profile per side: sampling noise only (binomial counts).
    Sampling,
    /// Several profiles on at least one side: sampling noise times the run-to-run dispersion
    /// measured between them.
    RunToRun,
}

/// The test of one function: its change in share and how sure that is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    /// NEW's share minus BASE's share (fractions of each side's samples).
    pub delta: f64,
    /// Low end of the interval for `delta`.
    pub low: f64,
    /// High end of the interval for `delta`.
    pub high: f64,
    /// Two-sided p-value of "the share did not change".
    pub p_value: f64,
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error below
/// 1.2e-7 everywhere: far finer than any decision made with it).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// P(|Z| >= z) for a standard normal Z.
pub fn normal_two_sided(z: f64) -> f64 {
    erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
}

/// The z with P(|Z| >= z) = `p` (bisection: exact enough and never out of range).
pub fn normal_critical(p: f64) -> f64 {
    let p = p.clamp(1e-300, 1.0);
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_two_sided(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Counts up to this many are tested exactly; above it the normal approximation of the
/// binomial is closer than any sampling profile needs (and the exact sum would cost
/// O(count) per function).
const EXACT_UP_TO: u64 = 20_000;

/// Two-sided exact binomial test: the probability, if `k ~ Binomial(n, p)`, of an outcome no
/// more likely than `k`.
pub fn binomial_two_sided(k: u64, n: u64, p: f64) -> f64 {
    if n == 0 || p <= 0.0 || p >= 1.0 {
        return 1.0;
    }
    let k = k.min(n);
    if n > EXACT_UP_TO {
        // Continuity-corrected normal approximation.
        let mean = n as f64 * p;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let d = ((k as f64 - mean).abs() - 0.5).max(0.0);
        return normal_two_sided(d / sd);
    }
    // log pmf by the ratio pmf(i+1)/pmf(i) = (n-i)/(i+1) * p/(1-p), from log pmf(0).
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut logs = Vec::with_capacity(n as usize + 1);
    let mut l = n as f64 * lq;
    for i in 0..=n {
        logs.push(l);
        l += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + lp - lq;
    }
    let at = logs[k as usize];
    // Outcomes as likely as k, within rounding, count as "no more likely".
    let edge = at + 1e-7 * at.abs().max(1.0);
    let sum: f64 = logs
        .iter()
        .filter(|&&x| x <= edge)
        .map(|&x| (x - at).exp())
        .sum();
    (sum * at.exp()).min(1.0)
}

/// Wilson's score interval for a proportion `x / n` at critical value `z`.
fn wilson(x: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let p = (x / n).clamp(0.0, 1.0);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Tests one function: `base` of `base_total` samples against `new` of `new_total`, every
/// count worth `1/dispersion` of an independent sample; the interval is at critical value `z`
/// (Newcombe's hybrid of two Wilson intervals, which stays inside [-1, 1] and behaves at
/// small counts, where the plain normal interval does not).
pub fn test(base: f64, base_total: f64, new: f64, new_total: f64, dispersion: f64, z: f64) -> Test {
    let phi = dispersion.max(1.0);
    let (pb, pn) = (share(base, base_total), share(new, new_total));
    let delta = pn - pb;
    let (bl, bh) = wilson(base / phi, base_total / phi, z);
    let (nl, nh) = wilson(new / phi, new_total / phi, z);
    let low = delta - ((pn - nl).powi(2) + (bh - pb).powi(2)).sqrt();
    let high = delta + ((nh - pn).powi(2) + (pb - bl).powi(2)).sqrt();
    let n = ((base + new) / phi).round() as u64;
    let k = (new / phi).round() as u64;
    let p_value = if base_total <= 0.0 || new_total <= 0.0 {
        1.0
    } else {
        binomial_two_sided(k, n, new_total / (base_total + new_total))
    };
    Test {
        delta,
        low,
        high,
        p_value,
    }
}

/// `part / total`, 0 for an empty total.
pub fn share(part: f64, total: f64) -> f64 {
    if total > 0.0 { part / total } else { 0.0 }
}

/// The pieces of the run-to-run dispersion of one side: the chi-square of homogeneity of the
/// per-run counts and its degrees of freedom. `rows[i][j]` is function `i`'s samples in run
/// `j`, `totals[j]` run `j`'s samples. Only functions expected to hold at least
/// [`MIN_EXPECTED`] samples in every run take part (the chi-square is not a fair measure of
/// smaller counts); the samples of the others form one more row, so that the totals hold.
pub fn chi_square(rows: &[Vec<f64>], totals: &[f64]) -> (f64, f64) {
    let runs = totals.len();
    let grand: f64 = totals.iter().sum();
    if runs < 2 || grand <= 0.0 {
        return (0.0, 0.0);
    }
    let mut kept: Vec<Vec<f64>> = Vec::new();
    let mut rest = totals.to_vec();
    for row in rows {
        let pooled: f64 = row.iter().sum();
        let fits = totals.iter().all(|t| pooled * t / grand >= MIN_EXPECTED);
        if fits {
            for (r, c) in rest.iter_mut().zip(row) {
                *r -= c;
            }
            kept.push(row.clone());
        }
    }
    if kept.is_empty() {
        return (0.0, 0.0);
    }
    let rest_pooled: f64 = rest.iter().sum();
    if totals
        .iter()
        .all(|t| rest_pooled * t / grand >= MIN_EXPECTED)
    {
        kept.push(rest);
    }
    if kept.len() < 2 {
        return (0.0, 0.0);
    }
    let mut x2 = 0.0;
    for row in &kept {
        let pooled: f64 = row.iter().sum();
        for (c, t) in row.iter().zip(totals) {
            let e = pooled * t / grand;
            if e > 0.0 {
                x2 += (c - e).powi(2) / e;
            }
        }
    }
    (x2, ((kept.len() - 1) * (runs - 1)) as f64)
}

/// Functions expected to hold fewer samples than this in a run do not take part in the
/// dispersion estimate.
pub const MIN_EXPECTED: f64 = 5.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_tails_are_the_textbook_values() {
        assert!((normal_two_sided(1.959_964) - 0.05).abs() < 1e-6);
        assert!((normal_two_sided(0.0) - 1.0).abs() < 1e-6);
        assert!((normal_critical(0.05) - 1.959_964).abs() < 1e-4);
        assert!((normal_critical(0.01) - 2.575_829).abs() < 1e-4);
    }

    #[test]
    fn exact_binomial_matches_hand_sums() {
        // 0 of 5 at p = 1/2: 2 * (1/32).
        assert!((binomial_two_sided(0, 5, 0.5) - 0.0625).abs() < 1e-12);
        // 5 of 10 at p = 1/2 is the most likely outcome.
        assert!((binomial_two_sided(5, 10, 0.5) - 1.0).abs() < 1e-9);
        // 9 of 10: 2 * (10 + 1) / 1024.
        assert!((binomial_two_sided(9, 10, 0.5) - 22.0 / 1024.0).abs() < 1e-12);
        // Large n: the approximation is continuous with the exact sum.
        let exact = binomial_two_sided(10_100, 20_000, 0.5);
        let approx = binomial_two_sided(20_200, 40_001, 0.5);
        assert!(exact > 0.1 && approx > 0.01, "{exact} {approx}");
    }

    #[test]
    fn equal_shares_are_not_significant_and_a_doubling_is() {
        let same = test(400.0, 2000.0, 400.0, 2000.0, 1.0, 1.96);
        assert_eq!(same.delta, 0.0);
        assert!(same.p_value > 0.9 && same.low < 0.0 && same.high > 0.0);
        let doubled = test(100.0, 2000.0, 200.0, 2000.0, 1.0, 1.96);
        assert!(doubled.p_value < 1e-6, "{doubled:?}");
        assert!(doubled.low > 0.0 && doubled.high < 0.1, "{doubled:?}");
        // The same counts with a dispersion of 16 are worth 1/16 as much.
        let spread = test(100.0, 2000.0, 200.0, 2000.0, 16.0, 1.96);
        assert!(spread.p_value > 0.05, "{spread:?}");
        assert!(spread.high - spread.low > doubled.high - doubled.low);
    }

    #[test]
    fn chi_square_of_identical_runs_is_zero_and_of_spread_runs_large() {
        let rows = vec![vec![100.0, 100.0, 100.0], vec![300.0, 300.0, 300.0]];
        assert_eq!(chi_square(&rows, &[1000.0, 1000.0, 1000.0]), (0.0, 4.0));
        let rows = vec![vec![50.0, 150.0, 100.0], vec![300.0, 300.0, 300.0]];
        let (x2, df) = chi_square(&rows, &[1000.0, 1000.0, 1000.0]);
        assert_eq!(df, 4.0);
        assert!(x2 / df > 10.0, "{x2}");
        // A single run has no spread to measure.
        assert_eq!(chi_square(&rows, &[1000.0]), (0.0, 0.0));
    }
}
