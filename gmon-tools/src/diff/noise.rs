//! The noise model of `gmon diff` (spec/diff.md §2-§4): how far a function's share of the
//! samples may move between two profiles of the same program by chance alone.
//!
//! Sampling noise (§2): a function's samples out of a profile's total are a binomial count.
//! Given the samples two profiles put in one function, `k + j`, and both totals, the number in
//! NEW is hypergeometric if the share did not change (Fisher's exact test of the 2×2 table
//! function / rest × BASE / NEW); the two-sided exact test of that is the p-value. The same
//! margins say how small a p-value the function could reach at all ([`min_p_value`], for
//! Tarone's family, §4) and how large a change it would show nine times in ten
//! ([`min_detectable`], §9).
//!
//! Run-to-run spread (§3): with several profiles on a side, the per-run counts of each
//! function spread more than sampling alone explains (the CPU runs a little differently each
//! time). Two parts of it are measured across all functions ([`spread`]): a factor `φ` on the
//! binomial variance, and a per-run jitter `τ` of each function's own time, whose variance in
//! shares grows with the square of the share (the largest functions spread most). Each
//! function gets its own dispersion from both ([`Spread::of_function`]): every count is then
//! worth `1/φ_i` of an independent sample, and the same test runs on the counts divided by it.

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

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: relative error below 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (modified
/// Lentz), on the side of x where it converges fast.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0f64, 1.0 - (a + b) * x / (a + 1.0));
    d = 1.0 / if d.abs() < tiny { tiny } else { d };
    let mut f = d;
    for m in 1..300 {
        let m = f64::from(m);
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = 1.0 / if d.abs() < tiny { tiny } else { d };
            c = 1.0 + num / c;
            c = if c.abs() < tiny { tiny } else { c };
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f / a
}

/// P(|T| >= t) for Student's T with `df` degrees of freedom.
pub fn student_two_sided(t: f64, df: f64) -> f64 {
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The t with P(|T| >= t) = `p` for Student's T with `df` degrees of freedom (bisection).
pub fn student_critical(p: f64, df: f64) -> f64 {
    let p = p.clamp(1e-300, 1.0);
    let (mut lo, mut hi) = (0.0f64, 1e6f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_two_sided(mid, df) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The dispersion a test runs with (spec/diff.md §3): the variance of a change in share over
/// its binomial variance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dispersion {
    /// As measured (may be below 1): the chi-square of homogeneity over its degrees of
    /// freedom, or the line of [`spread`] at a function's share.
    pub measured: f64,
    /// Its degrees of freedom; 0 when nothing was measured (one profile per side).
    pub df: f64,
}

impl Dispersion {
    /// One profile per side: the sampling model, nothing measured.
    pub const SAMPLING: Dispersion = Dispersion {
        measured: 1.0,
        df: 0.0,
    };

    /// The factor the counts are divided by: never below 1, so that a test never claims more
    /// precision than the binomial gives.
    pub fn phi(&self) -> f64 {
        self.measured.max(1.0)
    }

    /// The dispersion of one function whose own runs spread by `own` (its chi-square of
    /// homogeneity over its degrees of freedom, and those; `None` when its counts are too small
    /// to measure): the model's value, worth [`FUNCTION_PRIOR_DF`] degrees of freedom, and the
    /// function's own, weighted by their degrees of freedom (spec/diff.md §3, "Each function's
    /// own spread"). Nothing measured (one profile per side): unchanged.
    pub fn with_own(self, own: Option<(f64, f64)>) -> Dispersion {
        if self.df <= 0.0 {
            return self;
        }
        let (y, d) = own.unwrap_or((0.0, 0.0));
        let prior = FUNCTION_PRIOR_DF;
        Dispersion {
            measured: (prior * self.measured + d * y) / (prior + d),
            df: (prior + d).min(self.df),
        }
    }

    /// The critical value at two-sided level `p`: the normal one, or Student's with the
    /// dispersion's degrees of freedom when it was measured (an estimated variance has a
    /// wider tail than a known one).
    pub fn critical(&self, p: f64) -> f64 {
        if self.df > 0.0 {
            student_critical(p, self.df).max(normal_critical(p))
        } else {
            normal_critical(p)
        }
    }
}

/// The degrees of freedom a function's dispersion takes from the other functions' (spec/diff.md
/// §3, "Each function's own spread"). The model's line gives the dispersion of a typical
/// function at its share; over 41 runs of each workload (spec/diff.md §9) single functions
/// spread up to 1.75 times the typical one (the Python interpreter's `_PyLong_Add`, 1.98 against
/// 1.13), which one chi-square over 10 degrees of freedom reaches one time in twenty (its 95th
/// percentile over its degrees of freedom is 1.83). However many functions the line was fitted
/// through, it is worth this much to any one of them.
pub const FUNCTION_PRIOR_DF: f64 = 10.0;

/// The dispersion assumed with one profile per side (spec/diff.md §2, "Run-to-run spread
/// that one profile cannot measure"): two runs' shares of a function differed by up to twice
/// the binomial variance on both workloads measured (spec/diff.md §9: 1.53 and 1.69 for the C
/// program's functions, 1.75 and 1.98 for a Python interpreter's), which one profile per side
/// cannot see; at 1 the A/A comparisons of the Python runs reported a change in 9% of pairs.
pub const ASSUMED_DISPERSION: f64 = 2.0;

/// Counts up to this many are tested exactly; above it the normal approximation is closer
/// than any sampling profile needs (and the exact sum would cost O(count) per function).
const EXACT_UP_TO: u64 = 20_000;

/// Two-sided Fisher exact test (spec/diff.md §2): `k` of the `n` samples of a function fell in
/// NEW, which holds `new_total` of all `total` samples. If the share did not change, `k` is
/// hypergeometric (`n` drawn from `total`, `new_total` of them NEW's); the p-value is the
/// probability of an outcome no more likely than `k`.
///
/// This conditions on both profiles' totals, as the binomial model of each profile's counts
/// asks. The binomial test of `k` against `n` and `new_total / total` alone treats the totals
/// as free, and so overstates the noise of a function holding a share `s` of the samples by
/// a factor `1 / √(1 − s)` (1.35 at 45%): large functions lost most of their power to it.
pub fn fisher_two_sided(k: u64, n: u64, new_total: u64, total: u64) -> f64 {
    let Some((lo, hi)) = support(n, new_total, total) else {
        return 1.0;
    };
    if lo == hi {
        return 1.0;
    }
    let k = k.clamp(lo, hi);
    if n > EXACT_UP_TO {
        // Continuity-corrected normal approximation with the hypergeometric variance.
        let (n, kk, nn) = (n as f64, new_total as f64, total as f64);
        let p = kk / nn;
        let mean = n * p;
        let var = n * p * (1.0 - p) * (nn - n) / (nn - 1.0).max(1.0);
        if var <= 0.0 {
            return 1.0;
        }
        let d = ((k as f64 - mean).abs() - 0.5).max(0.0);
        return normal_two_sided(d / var.sqrt());
    }
    let logs = hypergeometric_logs(lo, hi, n, new_total, total);
    let at = logs[(k - lo) as usize];
    // Outcomes as likely as k, within rounding, count as "no more likely".
    let edge = at + 1e-7 * at.abs().max(1.0);
    let sum: f64 = logs
        .iter()
        .filter(|&&x| x <= edge)
        .map(|&x| (x - at).exp())
        .sum();
    (sum * at.exp()).min(1.0)
}

/// The outcomes `k` can take: `n` samples of `total`, `new_total` of them NEW's (`None` for
/// margins that hold no table).
fn support(n: u64, new_total: u64, total: u64) -> Option<(u64, u64)> {
    if total == 0 || new_total == 0 || new_total >= total || n == 0 || n > total {
        return None;
    }
    Some((n.saturating_sub(total - new_total), n.min(new_total)))
}

/// log P(k) for k in `lo..=hi` (relative: the largest is not normalized to anything, only the
/// ratios matter), by the ratio P(k+1)/P(k) = (n−k)(K−k) / ((k+1)(N−K−n+k+1)).
fn hypergeometric_logs(lo: u64, hi: u64, n: u64, new_total: u64, total: u64) -> Vec<f64> {
    let mut logs = Vec::with_capacity((hi - lo) as usize + 1);
    // log P(lo) up to a constant that cancels: start at 0 and normalize at the end.
    let mut l = 0.0f64;
    for k in lo..=hi {
        logs.push(l);
        if k < hi {
            let num = ((n - k) as f64).ln() + ((new_total - k) as f64).ln();
            let den = ((k + 1) as f64).ln() + ((total - new_total + k + 1 - n) as f64).ln();
            l += num - den;
        }
    }
    // Normalize so that the probabilities sum to 1.
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let norm = top + logs.iter().map(|&x| (x - top).exp()).sum::<f64>().ln();
    for x in &mut logs {
        *x -= norm;
    }
    logs
}

/// The smallest p-value [`fisher_two_sided`] can give for any outcome with these margins:
/// that of the more extreme end of the support. A function whose smallest p-value is above
/// the level it is tested at cannot be a change whatever its samples did, so it costs the
/// family nothing to leave it out (Tarone's procedure, spec/diff.md §4).
pub fn min_p_value(n: u64, new_total: u64, total: u64) -> f64 {
    let Some((lo, hi)) = support(n, new_total, total) else {
        return 1.0;
    };
    if n > EXACT_UP_TO {
        return fisher_two_sided(lo, n, new_total, total)
            .min(fisher_two_sided(hi, n, new_total, total));
    }
    let logs = hypergeometric_logs(lo, hi, n, new_total, total);
    // The two ends are the least likely outcomes on their sides; the p-value of an end is the
    // sum of every outcome no more likely than it.
    let p_of = |at: f64| {
        let edge = at + 1e-7 * at.abs().max(1.0);
        logs.iter()
            .filter(|&&x| x <= edge)
            .map(|&x| x.exp())
            .sum::<f64>()
            .min(1.0)
    };
    p_of(logs[0]).min(p_of(logs[logs.len() - 1]))
}

/// The power `min_detectable` asks for: a change seen nine times in ten.
pub const POWER: f64 = 0.9;

/// The smallest growth of a share `share` (points, as a fraction) that a comparison of
/// `base_total` against `new_total` samples, each worth `1/dispersion` of an independent one,
/// reports as a change with probability [`POWER`] when tested at critical value `z` (spec/diff.md
/// §9): the `Δ` with `Δ = z·√V₀ + z_power·√V₁`, `V₀` the variance of the change in share if
/// nothing changed and `V₁` if the share grew by `Δ`. At least the growth that brings the two
/// profiles' expected samples in the function to `min_samples` (fewer are never tested).
pub fn min_detectable(
    share: f64,
    base_total: f64,
    new_total: f64,
    dispersion: f64,
    z: f64,
    min_samples: f64,
) -> f64 {
    if base_total <= 0.0 || new_total <= 0.0 {
        return 1.0;
    }
    let phi = dispersion.max(1.0);
    let s = share.clamp(0.0, 1.0);
    let zp = normal_critical(2.0 * (1.0 - POWER));
    let v = |p: f64, t: f64| phi * p * (1.0 - p) / t;
    let v0 = v(s, base_total) + v(s, new_total);
    let mut delta = 0.0f64;
    // Fixed-point iteration: V₁ grows with Δ; a few rounds settle to far below a point.
    for _ in 0..50 {
        let s1 = (s + delta).min(1.0);
        let next = z * v0.sqrt() + zp * (v(s, base_total) + v(s1, new_total)).sqrt();
        if (next - delta).abs() < 1e-9 {
            delta = next;
            break;
        }
        delta = next;
    }
    let reach = (min_samples - s * base_total) / new_total - s;
    delta.max(reach).min(1.0 - s)
}

/// The relative slowdown of a function holding share `share` that moves its share by `delta`:
/// it takes `(1 + r)` times its time while the rest stays, so its share becomes
/// `s(1 + r) / (1 + r·s)`; solved for `r`. `None` when no slowdown moves it that far.
pub fn slowdown_for(share: f64, delta: f64) -> Option<f64> {
    let room = share * (1.0 - share - delta);
    (share > 0.0 && room > 0.0).then(|| delta / room)
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
pub fn test(
    base: f64,
    base_total: f64,
    new: f64,
    new_total: f64,
    dispersion: Dispersion,
    z: f64,
) -> Test {
    let phi = dispersion.phi();
    let (pb, pn) = (share(base, base_total), share(new, new_total));
    let delta = pn - pb;
    let (bl, bh) = wilson(base / phi, base_total / phi, z);
    let (nl, nh) = wilson(new / phi, new_total / phi, z);
    let low = delta - ((pn - nl).powi(2) + (bh - pb).powi(2)).sqrt();
    let high = delta + ((nh - pn).powi(2) + (pb - bl).powi(2)).sqrt();
    let (k, n, kt, t) = table(base, base_total, new, new_total, phi);
    let mut p_value = fisher_two_sided(k, n, kt, t);
    if dispersion.df > 0.0 {
        // The dispersion was estimated: the quasi-binomial test, the change in share over its
        // standard error with the measured φ, against Student's t with φ's degrees of freedom.
        // The larger of the two p-values is valid whether the spread is the binomial one
        // (the exact test) or φ times it (this one).
        let pooled = share(base + new, base_total + new_total);
        let var = dispersion.measured
            * pooled
            * (1.0 - pooled)
            * (1.0 / base_total.max(1e-300) + 1.0 / new_total.max(1e-300));
        if var > 0.0 {
            let p_t = student_two_sided(delta.abs() / var.sqrt(), dispersion.df);
            p_value = p_value.max(p_t);
        }
    }
    Test {
        delta,
        low,
        high,
        p_value,
    }
}

/// The whole-sample table of a comparison, every count worth `1/dispersion` of a sample:
/// `(NEW's samples in the function, both profiles' samples in it, NEW's total, both totals)`.
pub fn table(
    base: f64,
    base_total: f64,
    new: f64,
    new_total: f64,
    dispersion: f64,
) -> (u64, u64, u64, u64) {
    let phi = dispersion.max(1.0);
    let whole = |x: f64| (x.max(0.0) / phi).round() as u64;
    let (k, n) = (whole(new), whole(base + new));
    let (kt, t) = (whole(new_total), whole(base_total + new_total));
    (k, n, kt.max(k), t.max(n).max(kt))
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

/// The run-to-run spread of a comparison (spec/diff.md §3): a run's share of function `i`
/// varies by `φ · s(1 − s) / T` (sampling, widened by `φ`) plus `τ² · s²(1 − 2s + H)` (each
/// function's own time varying by a factor `1 + ε`, `ε` of variance `τ²`, from run to run;
/// `H` is the sum of the squared shares, the part the other functions' jitter adds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// `φ` and its degrees of freedom.
    pub dispersion: Dispersion,
    /// `τ²`, the variance of the per-run factor on a function's own time (0: none measured).
    pub jitter: f64,
    /// The degrees of freedom of `τ²` (0 when it is 0).
    pub jitter_df: f64,
}

impl Spread {
    /// The bare sampling model: binomial counts, nothing measured.
    pub const SAMPLING: Spread = Spread {
        dispersion: Dispersion::SAMPLING,
        jitter: 0.0,
        jitter_df: 0.0,
    };

    /// One profile per side: the run-to-run spread cannot be measured, so a dispersion
    /// `phi` is assumed for it (spec/diff.md §2, [`ASSUMED_DISPERSION`]): every count is worth
    /// `1/phi` of an independent sample, and no degrees of freedom (the normal and the exact
    /// test, not Student's t: nothing was estimated).
    pub fn assumed(phi: f64) -> Spread {
        Spread {
            dispersion: Dispersion {
                measured: phi,
                df: 0.0,
            },
            ..Spread::SAMPLING
        }
    }

    /// The dispersion of one function's change in share: the variance of the change over its
    /// binomial variance, `φ + τ²·B / A`, with Satterthwaite's degrees of freedom for a sum of
    /// two estimated variances. `share` is its share of both sides' samples together,
    /// `herfindahl` the sum of all functions' squared shares, `totals` both sides' sums of
    /// samples and `weights` each side's `Σ T_j² / (Σ T_j)²` (`1/R` for `R` equal runs: the
    /// jitter of a side's summed runs averages over them).
    pub fn of_function(
        &self,
        share: f64,
        herfindahl: f64,
        totals: (f64, f64),
        weights: (f64, f64),
    ) -> Dispersion {
        let phi = self.dispersion.measured;
        let s = share.clamp(0.0, 1.0);
        let binomial = s * (1.0 - s) * (1.0 / totals.0.max(1e-300) + 1.0 / totals.1.max(1e-300));
        let jitter =
            self.jitter * s * s * (1.0 - 2.0 * s + herfindahl).max(0.0) * (weights.0 + weights.1);
        if self.jitter <= 0.0 || binomial <= 0.0 || jitter <= 0.0 {
            return self.dispersion;
        }
        let (a, b) = (phi * binomial, jitter);
        // Both parts come from the same runs: together they have no more degrees of freedom
        // than the chi-square of homogeneity, less the two the line through it costs.
        let df = (a + b).powi(2) / (a * a / self.dispersion.df + b * b / self.jitter_df);
        let df = df.min(self.dispersion.df - 2.0).max(1.0);
        Dispersion {
            measured: (a + b) / binomial,
            df,
        }
    }
}

/// One side's runs for [`spread`]: `rows[i][j]` is function `i`'s samples in run `j`,
/// `totals[j]` run `j`'s samples.
pub struct SideRuns {
    /// Per function, its samples in each run.
    pub rows: Vec<Vec<f64>>,
    /// Each run's samples.
    pub totals: Vec<f64>,
}

/// Measures `φ` and `τ²` from the runs of both sides (spec/diff.md §3). Each function that
/// every run expects [`MIN_EXPECTED`] samples of gives one point per side: its chi-square of
/// homogeneity over its degrees of freedom, `y = Σ_j T_j (p_j − s)² / ((R − 1) s(1 − s))`,
/// whose expectation under the model is `φ + τ²·x` with `x = s²(1 − 2s + H)(Σ T − Σ T²/Σ T) /
/// ((R − 1) s(1 − s))`. The line through the points, weighted by the inverse of each point's
/// variance (a chi-square's: `2 y² / (R − 1)`, iterated), gives both. A negative `τ²` is 0,
/// leaving `φ` the chi-square of homogeneity of all functions; a `φ` below 1 is 1, so that the
/// jitter does not borrow precision the binomial does not give.
pub fn spread(sides: &[SideRuns]) -> Spread {
    let (mut x2, mut df) = (0.0, 0.0);
    for side in sides {
        let (x, d) = chi_square(&side.rows, &side.totals);
        x2 += x;
        df += d;
    }
    if df <= 0.0 {
        return Spread::SAMPLING;
    }
    let homogeneity = Dispersion {
        measured: x2 / df,
        df,
    };
    let (points, jitter_df) = jitter_points(sides);
    // The jitter is measured from the same runs as the chi-square: never more freely.
    let jitter_df = jitter_df.min(df - 1.0);
    if let Some((phi, tau2)) = fit_line(&points)
        && tau2 > 0.0
        && jitter_df > 0.0
    {
        let (phi, tau2) = if phi >= 1.0 {
            (phi, tau2)
        } else {
            (1.0, fit_slope(&points, 1.0))
        };
        if tau2 > 0.0 {
            return Spread {
                dispersion: Dispersion { measured: phi, df },
                jitter: tau2,
                jitter_df,
            };
        }
    }
    Spread {
        dispersion: homogeneity,
        ..Spread::SAMPLING
    }
}

/// The points `(x, y, R − 1)` of [`spread`]'s line, and the degrees of freedom of its slope:
/// per side `(R − 1)` times Kish's effective number of points, `(Σ x)² / Σ x²` (the slope
/// rests on the few functions with the largest shares, not on all of them equally), less the
/// one the shares' sum takes. A side of fewer than three functions gives none.
fn jitter_points(sides: &[SideRuns]) -> (Vec<(f64, f64, f64)>, f64) {
    let mut points = Vec::new();
    let mut df = 0.0;
    for side in sides {
        let runs = side.totals.len();
        let grand: f64 = side.totals.iter().sum();
        if runs < 2 || grand <= 0.0 {
            continue;
        }
        let r1 = (runs - 1) as f64;
        let k = grand - side.totals.iter().map(|t| t * t).sum::<f64>() / grand;
        let shares: Vec<f64> = side
            .rows
            .iter()
            .map(|row| row.iter().sum::<f64>() / grand)
            .collect();
        let h: f64 = shares.iter().map(|s| s * s).sum();
        let mut here = Vec::new();
        for (row, &s) in side.rows.iter().zip(&shares) {
            let fits = side.totals.iter().all(|t| s * t >= MIN_EXPECTED);
            if !fits || s >= 1.0 {
                continue;
            }
            let a = s * (1.0 - s);
            let q: f64 = row
                .iter()
                .zip(&side.totals)
                .filter(|(_, t)| **t > 0.0)
                .map(|(c, t)| t * (c / t - s).powi(2))
                .sum();
            let x = s * s * (1.0 - 2.0 * s + h).max(0.0) * k / (r1 * a);
            here.push((x, q / (r1 * a), r1));
        }
        // The shares of a side sum to 1: of `n` functions, `n − 1` vary freely, and two are one
        // (a function and the rest): a line needs three.
        if here.len() < 3 {
            continue;
        }
        let sx: f64 = here.iter().map(|p| p.0).sum();
        let sxx: f64 = here.iter().map(|p| p.0 * p.0).sum();
        if sxx > 0.0 {
            df += r1 * (sx * sx / sxx - 1.0).max(0.0);
        }
        points.extend(here);
    }
    (points, df)
}

/// One function's own spread over the runs of each side (spec/diff.md §3): its chi-square of
/// homogeneity, `Σ_j T_j (p_j − s)² / (s(1 − s))` summed over the sides whose every run expects
/// [`MIN_EXPECTED`] of its samples, over the degrees of freedom `Σ (R − 1)`; `None` when no side
/// of several runs does. `sides` are `(its samples per run, the runs' totals)`.
pub fn own_spread(sides: &[(&[f64], &[f64])]) -> Option<(f64, f64)> {
    let (mut q, mut df) = (0.0, 0.0);
    for (counts, totals) in sides {
        let grand: f64 = totals.iter().sum();
        if totals.len() < 2 || grand <= 0.0 {
            continue;
        }
        let s = counts.iter().sum::<f64>() / grand;
        if s >= 1.0 || totals.iter().any(|t| s * t < MIN_EXPECTED) {
            continue;
        }
        q += counts
            .iter()
            .zip(*totals)
            .map(|(c, t)| t * (c / t - s).powi(2))
            .sum::<f64>()
            / (s * (1.0 - s));
        df += (totals.len() - 1) as f64;
    }
    (df > 0.0).then(|| (q / df, df))
}

/// The weighted least-squares line `y = φ + τ²·x` through `(x, y, R − 1)` points, each
/// weighted by the inverse variance of a chi-square over its degrees of freedom at the line's
/// value; `None` when the `x` do not spread enough to tell a slope.
fn fit_line(points: &[(f64, f64, f64)]) -> Option<(f64, f64)> {
    let (mut phi, mut tau2) = (1.0f64, 0.0f64);
    for _ in 0..8 {
        let (mut sw, mut swx, mut swy, mut swxx, mut swxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(x, y, r1) in points {
            let at = (phi + tau2 * x).max(0.1);
            let w = r1 / (2.0 * at * at);
            sw += w;
            swx += w * x;
            swy += w * y;
            swxx += w * x * x;
            swxy += w * x * y;
        }
        let det = sw * swxx - swx * swx;
        if det <= 1e-12 * sw * swxx || sw <= 0.0 {
            return None;
        }
        tau2 = (sw * swxy - swx * swy) / det;
        phi = (swy - tau2 * swx) / sw;
    }
    Some((phi, tau2))
}

/// The slope of the line through `(0, phi)` (weighted as [`fit_line`]), at least 0.
fn fit_slope(points: &[(f64, f64, f64)], phi: f64) -> f64 {
    let mut tau2 = 0.0f64;
    for _ in 0..8 {
        let (mut num, mut den) = (0.0, 0.0);
        for &(x, y, r1) in points {
            let at = phi + tau2 * x;
            let w = r1 / (2.0 * at * at);
            num += w * x * (y - phi);
            den += w * x * x;
        }
        tau2 = if den > 0.0 { (num / den).max(0.0) } else { 0.0 };
    }
    tau2
}

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
    fn student_tails_are_the_textbook_values() {
        // t tables: 2.228 at 10 df, 2.042 at 30 df (5% two-sided); 3.169 at 10 df (1%).
        assert!((student_two_sided(2.228_139, 10.0) - 0.05).abs() < 1e-5);
        assert!((student_two_sided(2.042_272, 30.0) - 0.05).abs() < 1e-5);
        assert!((student_critical(0.01, 10.0) - 3.169_273).abs() < 1e-4);
        // Many degrees of freedom: the normal.
        assert!((student_critical(0.05, 1e6) - 1.959_964).abs() < 1e-3);
        assert!((student_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
        // An estimated dispersion widens the critical value; a floor of 1 for phi.
        let d = Dispersion {
            measured: 0.5,
            df: 10.0,
        };
        assert_eq!(d.phi(), 1.0);
        assert!(d.critical(0.05) > 2.2 && Dispersion::SAMPLING.critical(0.05) < 1.97);
    }

    #[test]
    fn fisher_matches_hand_sums() {
        // Fisher's tea tasting: 3 of 4 against 1 of 4, P(k) = C(4,k)C(4,4-k)/70 for
        // 1, 16, 36, 16, 1; two-sided p of k = 1 is (1 + 16 + 16 + 1) / 70.
        assert!((fisher_two_sided(1, 4, 4, 8) - 34.0 / 70.0).abs() < 1e-12);
        assert!((fisher_two_sided(2, 4, 4, 8) - 1.0).abs() < 1e-9);
        assert!((min_p_value(4, 4, 8) - 2.0 / 70.0).abs() < 1e-12);
        // 0 samples against 5 at equal, large totals: close to the binomial's 2/32.
        let p = fisher_two_sided(0, 5, 2000, 4000);
        assert!((p - 0.0625).abs() < 0.001, "{p}");
        // Margins without a table, and an outcome outside the support.
        assert_eq!(fisher_two_sided(0, 0, 10, 20), 1.0);
        assert_eq!(fisher_two_sided(3, 5, 20, 20), 1.0);
        assert_eq!(min_p_value(5, 5, 5), 1.0);
        // Large n: the approximation is continuous with the exact sum.
        let exact = fisher_two_sided(10_100, 20_000, 50_000, 100_000);
        let approx = fisher_two_sided(10_101, 20_001, 50_000, 100_000);
        assert!((exact - approx).abs() < 0.02, "{exact} {approx}");
    }

    #[test]
    fn fisher_is_sharper_than_the_binomial_for_a_large_share() {
        // A function with 45% of 2,250 samples per side grows by 4.2 points: the binomial test
        // of the pooled count (the variance without 1 − s) gave p = 0.041; the exact test of
        // the whole table gives 0.005, the 2.8 standard errors the two-proportion z says.
        let (b, n) = (0.45 * 2250.0, 0.492 * 2250.0);
        let t = test(b, 2250.0, n, 2250.0, Dispersion::SAMPLING, 1.96);
        assert!(t.p_value < 0.01, "{t:?}");
        let z = 0.042 / (2.0 * 0.471 * 0.529 / 2250.0f64).sqrt();
        assert!(
            (normal_two_sided(z) / t.p_value - 1.0).abs() < 0.3,
            "{z} {t:?}"
        );
    }

    #[test]
    fn min_detectable_is_the_textbook_power_arithmetic() {
        // 5% of 2,000 samples per side, one test at 5%: (1.96 + 1.28) standard errors of the
        // difference, √(2 · 0.05 · 0.95 / 2000) = 0.69 points, a little more for the growth.
        let z = normal_critical(0.05);
        let d = min_detectable(0.05, 2000.0, 2000.0, 1.0, z, 10.0);
        assert!((d - 0.0232).abs() < 0.001, "{d}");
        // Four times the samples halve it; a dispersion of 4 doubles it.
        let quarter = min_detectable(0.05, 8000.0, 8000.0, 1.0, z, 10.0);
        assert!((d / quarter - 2.0).abs() < 0.05, "{quarter}");
        let wide = min_detectable(0.05, 2000.0, 2000.0, 4.0, z, 10.0);
        assert!((wide / d - 2.0).abs() < 0.1, "{wide}");
        // A function never sampled needs at least min_samples in the two profiles together.
        let none = min_detectable(0.0, 2000.0, 2000.0, 1.0, z, 10.0);
        assert!(none >= 10.0 / 2000.0, "{none}");
        // A 20% slowdown of a 5% function moves its share by 0.94 points.
        let r = slowdown_for(0.05, 0.05 * 1.2 / 1.01 - 0.05).unwrap();
        assert!((r - 0.2).abs() < 1e-9, "{r}");
        assert_eq!(slowdown_for(0.0, 0.01), None);
    }

    #[test]
    fn equal_shares_are_not_significant_and_a_doubling_is() {
        let same = test(400.0, 2000.0, 400.0, 2000.0, Dispersion::SAMPLING, 1.96);
        assert_eq!(same.delta, 0.0);
        assert!(same.p_value > 0.9 && same.low < 0.0 && same.high > 0.0);
        let doubled = test(100.0, 2000.0, 200.0, 2000.0, Dispersion::SAMPLING, 1.96);
        assert!(doubled.p_value < 1e-6, "{doubled:?}");
        assert!(doubled.low > 0.0 && doubled.high < 0.1, "{doubled:?}");
        // The same counts with a dispersion of 16 are worth 1/16 as much.
        let sixteen = Dispersion {
            measured: 16.0,
            df: 30.0,
        };
        let spread = test(100.0, 2000.0, 200.0, 2000.0, sixteen, 1.96);
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
