//! The noise test on the frames of a differential flame graph (spec/diff.md §10): every folded
//! stack is tested as `gmon diff` tests a function (its leaf's self samples in BASE and NEW,
//! sampling noise, Holm over all stacks), and only the changes keep their difference.

use std::collections::BTreeMap;

use super::NoiseOptions;
use super::noise;
use super::verdict::holm;

/// The differential folded lines to draw, and what the test found.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameVerdicts {
    /// `stack base new` lines, sorted: `base` is BASE's count (scaled to NEW's total when
    /// comparing shares) for a change, and equal to `new` otherwise, so that only changes are
    /// coloured.
    pub lines: Vec<String>,
    /// How many stacks are changes.
    pub changes: usize,
    /// How many stacks were tested.
    pub tested: usize,
}

/// `(stack, count)` of a folded line `a;b;c N`; `None` for a line without a count.
fn parse(line: &str) -> Option<(&str, u64)> {
    let (stack, n) = line.rsplit_once(' ')?;
    Some((stack, n.parse().ok()?))
}

/// Tests every stack of `base` and `new` (folded lines) and returns the lines to draw. With
/// `share`, BASE is scaled to NEW's total (the change in share is coloured), else the raw
/// counts are kept; the test is on shares either way.
pub fn frame_verdicts(
    base: &[String],
    new: &[String],
    share: bool,
    opts: &NoiseOptions,
) -> FrameVerdicts {
    let mut rows: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (lines, second) in [(base, false), (new, true)] {
        for (stack, n) in lines.iter().filter_map(|l| parse(l)) {
            let e = rows.entry(stack).or_default();
            if second {
                e.1 = e.1.saturating_add(n);
            } else {
                e.0 = e.0.saturating_add(n);
            }
        }
    }
    let bt = rows.values().map(|r| r.0 as f64).sum::<f64>();
    let nt = rows.values().map(|r| r.1 as f64).sum::<f64>();
    let tested_rows: Vec<bool> = rows
        .values()
        .map(|&(b, n)| (b + n) as f64 >= opts.min_samples && bt > 0.0 && nt > 0.0)
        .collect();
    let tested = tested_rows.iter().filter(|&&t| t).count();
    let p: Vec<f64> = rows
        .values()
        .zip(&tested_rows)
        .filter(|(_, t)| **t)
        .map(|(&(b, n), _)| noise::test(b as f64, bt, n as f64, nt, 1.0, 1.0).p_value)
        .collect();
    let mut adjusted = holm(&p).into_iter();
    // With one side empty there are no shares to compare: every frame appeared or went away.
    let one_side_empty = bt == 0.0 || nt == 0.0;
    let scale = if share && bt > 0.0 { nt / bt } else { 1.0 };
    let mut changes = 0;
    let lines = rows
        .iter()
        .zip(&tested_rows)
        .map(|((stack, &(b, n)), &is_tested)| {
            let change =
                one_side_empty || (is_tested && adjusted.next().is_some_and(|p| p <= opts.level));
            if change {
                changes += 1;
                format!("{stack} {} {n}", (b as f64 * scale).round() as u64)
            } else {
                format!("{stack} {n} {n}")
            }
        })
        .collect();
    FrameVerdicts {
        lines,
        changes,
        tested,
    }
}

/// inferno's colour for a frame without a difference (its differential palette at 0, nearly
/// white), and the grey that replaces it.
const NO_DIFFERENCE: &str = "fill=\"rgb(250,250,250)\"";
const GREY: &str = "fill=\"rgb(200,200,200)\"";

/// The colour `gmon flame --diff` gives a frame, as `[r, g, b]`: `delta` is NEW minus BASE of
/// the stack that ends in the frame, from [`frame_verdicts`]'s lines (0 unless the stack is a
/// change; 0 too for a frame no stack ends in), and `max` the largest `|delta|` of all lines (at
/// least 1). inferno's differential scale, red for more and blue for fewer, paler the smaller,
/// and grey for no difference (noise, too few samples, a caller without samples of its own).
/// `gmon report --diff` colours its frames with it, so both graphs agree.
pub fn frame_colour(delta: i64, max: u64) -> [u8; 3] {
    let max = max.max(1) as i128;
    let pale = |d: i128| (100 + 150 * (max - d.min(max)) / max) as u8;
    match delta.cmp(&0) {
        std::cmp::Ordering::Equal => [200, 200, 200],
        std::cmp::Ordering::Greater => {
            let c = pale(i128::from(delta));
            [255, c, c]
        }
        std::cmp::Ordering::Less => {
            let c = pale(-i128::from(delta));
            [c, c, 255]
        }
    }
}

/// Draws the frames without a difference (noise, too few samples, and callers without samples
/// of their own) grey instead of inferno's near-white, so that "no change" is seen as such.
pub fn grey_unchanged(svg: Vec<u8>) -> Vec<u8> {
    match String::from_utf8(svg) {
        Ok(text) => text.replace(NO_DIFFERENCE, GREY).into_bytes(),
        Err(e) => e.into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[(&str, u64)]) -> Vec<String> {
        v.iter().map(|(s, n)| format!("{s} {n}")).collect()
    }

    #[test]
    fn frame_colour_is_what_flame_diff_draws() {
        let base = lines(&[("main;a", 500), ("main;b", 500), ("main;c", 9)]);
        let new = lines(&[("main;a", 700), ("main;b", 300), ("main;c", 9)]);
        let mut svg = Vec::new();
        let opts = crate::flame::SvgOptions::default();
        let source = crate::model::StackSource::Exact;
        crate::flame::write_diff_svg(&mut svg, &base, &new, &opts, source).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        let fill = |name: &str| {
            let at = svg.find(&format!("<title>{name} (")).unwrap();
            let f = &svg[at..][svg[at..].find("fill=\"").unwrap() + 6..];
            f[..f.find('"').unwrap()].to_owned()
        };
        let rgb = |c: [u8; 3]| format!("rgb({},{},{})", c[0], c[1], c[2]);
        // Shares: a 500 -> 700 (+200), b 500 -> 300 (-200), c within noise, main no stack.
        let v = frame_verdicts(&base, &new, true, &NoiseOptions::default());
        let max = 200;
        assert_eq!(v.changes, 2);
        assert_eq!(fill("a"), rgb(frame_colour(200, max)));
        assert_eq!(fill("b"), rgb(frame_colour(-200, max)));
        assert_eq!(fill("c"), rgb(frame_colour(0, max)));
        assert_eq!(fill("main"), rgb(frame_colour(0, max)));
        assert_eq!(frame_colour(100, max), [255, 175, 175]);
        assert_eq!(frame_colour(-1, 1), [100, 100, 255]);
    }

    #[test]
    fn only_changes_keep_their_difference() {
        let base = lines(&[
            ("main;a", 500),
            ("main;b", 500),
            ("main;c", 4),
            ("main;d", 9),
        ]);
        let new = lines(&[
            ("main;a", 700),
            ("main;b", 300),
            ("main;c", 5),
            ("main;d", 9),
        ]);
        let v = frame_verdicts(&base, &new, true, &NoiseOptions::default());
        assert_eq!(
            v.lines,
            vec![
                "main;a 500 700",
                "main;b 500 300",
                // 4 -> 5 samples: too few to tell, drawn without a difference.
                "main;c 5 5",
                "main;d 9 9"
            ]
        );
        assert_eq!((v.changes, v.tested), (2, 3));
        // Within noise: 500/500 against 520/480.
        let new = lines(&[("main;a", 520), ("main;b", 480)]);
        let v = frame_verdicts(&base[..2], &new, true, &NoiseOptions::default());
        assert_eq!(v.lines, vec!["main;a 520 520", "main;b 480 480"]);
        assert_eq!(v.changes, 0);
        // One side empty: everything appeared.
        let v = frame_verdicts(&[], &new, false, &NoiseOptions::default());
        assert_eq!(v.lines, vec!["main;a 0 520", "main;b 0 480"]);
    }
}
