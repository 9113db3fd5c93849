//! Verdicts (spec/diff.md §4, §5): change, within noise, or too few samples to tell, with
//! Holm's correction for testing every function at once.

use serde::Serialize;

/// What `gmon diff` concludes about one function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The share of samples changed by more than noise explains (after the correction), or
    /// the exact call count changed.
    Change,
    /// The change in share is what noise gives.
    WithinNoise,
    /// Too few samples in both profiles together for any change to be told from noise.
    TooFewSamples,
}

impl Verdict {
    /// The words the table prints.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Change => "change",
            Verdict::WithinNoise => "noise",
            Verdict::TooFewSamples => "too few",
        }
    }
}

/// The multiple-testing correction applied (spec/diff.md §4).
pub const CORRECTION: &str = "holm";

/// Holm's step-down adjustment: for p-values sorted ascending, the i-th (from 0) becomes
/// `max over j <= i of min(1, (m - j) * p_j)`. An adjusted p-value at or below the level is a
/// change, and the chance that any unchanged function is called a change stays at or below the
/// level, however many functions there are and however their samples depend on each other.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let a = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(a);
        adjusted[i] = running;
    }
    adjusted
}

/// Tarone's family (spec/diff.md §4): which of the candidates to test, given the smallest
/// p-value each could reach at all (`min_p`, from its margins alone). The smallest `K` with at
/// most `K` candidates able to reach `level / K` is found; those candidates are tested, the
/// others cannot be a change whatever their samples did and cost the correction nothing. The
/// margins do not depend on which way the samples fell, so the family stays valid.
pub fn tarone(min_p: &[f64], level: f64) -> Vec<bool> {
    let mut sorted: Vec<f64> = min_p.to_vec();
    sorted.sort_by(f64::total_cmp);
    // For K = 1, 2, ...: the count of candidates at or below level / K only falls as K grows,
    // so the first K it does not exceed is the smallest.
    let reach = |k: usize| sorted.partition_point(|&p| p <= level / k as f64);
    let k = (1..=sorted.len().max(1))
        .find(|&k| reach(k) <= k)
        .unwrap_or(1);
    min_p.iter().map(|&p| p <= level / k as f64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_multiplies_by_the_remaining_count_and_stays_monotone() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
        let want = [0.04, 0.09, 0.09, 0.5];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        assert!(holm(&[]).is_empty());
        assert_eq!(holm(&[0.9, 0.9]), vec![1.0, 1.0]);
    }

    #[test]
    fn tarone_leaves_out_what_cannot_reach_the_level() {
        // Two strong candidates and three that can reach 0.02 at best: at K = 3 only the two
        // reach 0.0167, so the family is two, not five.
        let t = tarone(&[1e-9, 1e-6, 0.02, 0.02, 0.3], 0.05);
        assert_eq!(t, vec![true, true, false, false, false]);
        // All strong: all tested.
        assert_eq!(tarone(&[1e-9; 4], 0.05), vec![true; 4]);
        // One weak alone is tested at the full level when it can reach it.
        assert_eq!(tarone(&[0.04], 0.05), vec![true]);
        assert_eq!(tarone(&[0.06], 0.05), vec![false]);
        assert!(tarone(&[], 0.05).is_empty());
    }
}
