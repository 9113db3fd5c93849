//! The noise test on the frames of a differential flame graph (spec/diff.md §10): every folded
//! stack is tested as `gmon diff` tests a function (its leaf's self samples in BASE and NEW,
//! the same test, family and correction, by [`diff_runs`]), and only the changes keep their
//! difference.

use std::collections::BTreeMap;

use super::{
    Entry, Granularity, Model, NoiseOptions, RunCounts, Verdict, diff_runs, diff_tree_runs,
};

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
    /// Each stack's test as `gmon diff` reports a function's (`name` is the stack, `a;b;c`),
    /// by stack.
    pub stacks: BTreeMap<String, Entry>,
    /// The noise model each part's frames were tested by, in the order of the parts.
    pub models: Vec<PartModel>,
}

/// The part of a differential graph tested as one program: an executable of a process tree
/// under its root frame, or (root `""`) the whole graph of one program. Each side is a list of
/// runs, each run its folded lines (`a;b;c N`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FramePart {
    /// The root frame the part's stacks are drawn under (`""`: none).
    pub root: String,
    /// BASE's runs.
    pub base: Vec<Vec<String>>,
    /// NEW's runs.
    pub new: Vec<Vec<String>>,
}

/// The noise model one part's frames were tested by, as the subtitle says it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartModel {
    /// The part's root frame (`""`: none).
    pub root: String,
    /// Sampling noise (one run a side) or the runs' spread (several).
    pub model: Model,
    /// The runs of each side that have samples.
    pub runs: (usize, usize),
    /// The dispersion, assumed (one run a side) or measured.
    pub dispersion: f64,
    /// The per-run jitter measured (0 with one run a side).
    pub jitter: f64,
    /// The level the part's frames were tested at.
    pub level: f64,
    /// How many stacks the correction ran over (every part's tested stacks).
    pub family: usize,
    /// Whether a side had no samples at all: then every frame appeared or went away, untested.
    pub one_sided: bool,
}

impl PartModel {
    /// The model in words: the sampling noise and the dispersion assumed (one run a side), or
    /// the runs' spread measured.
    fn words(&self) -> String {
        let runs = match self.runs {
            (b, n) if b == n => format!("{b} runs a side"),
            (b, n) => format!("{b} runs in BASE and {n} in NEW"),
        };
        match self.model {
            Model::Sampling => format!(
                "sampling noise times {} for the spread between runs, Fisher's exact test",
                self.dispersion
            ),
            Model::RunToRun => format!(
                "run-to-run spread measured between {runs} (dispersion {:.2}, jitter {:.1}%)",
                self.dispersion,
                self.jitter * 100.0
            ),
        }
    }
}

/// `(stack, count)` of a folded line `a;b;c N`; `None` for a line without a count.
fn parse(line: &str) -> Option<(&str, u64)> {
    let (stack, n) = line.rsplit_once(' ')?;
    Some((stack, n.parse().ok()?))
}

/// One side's folded lines as the counts of one profile: one entry per stack.
fn counts(lines: &[String], label: &str) -> RunCounts {
    let mut by_stack: BTreeMap<&str, u64> = BTreeMap::new();
    for (stack, n) in lines.iter().filter_map(|l| parse(l)) {
        let c = by_stack.entry(stack).or_default();
        *c = c.saturating_add(n);
    }
    RunCounts {
        label: label.to_string(),
        total: by_stack.values().fold(0u64, |a, &n| a.saturating_add(n)),
        hz: 0,
        entries: by_stack
            .into_iter()
            .map(|(s, n)| (s.to_string(), 0, n as f64, 0))
            .collect(),
    }
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
    frame_verdicts_of_runs(&[base.to_vec()], &[new.to_vec()], share, opts)
}

/// [`frame_verdicts`] of several runs a side (each run's folded lines): the stacks are tested
/// as `gmon diff` tests the functions of those runs, by the several-runs model when a side has
/// more than one (spec/diff.md §3, §10), and drawn summed. Runs without samples are no runs.
pub fn frame_verdicts_of_runs(
    base: &[Vec<String>],
    new: &[Vec<String>],
    share: bool,
    opts: &NoiseOptions,
) -> FrameVerdicts {
    let part = FramePart {
        root: String::new(),
        base: base.to_vec(),
        new: new.to_vec(),
    };
    let mut v = frame_verdicts_of_parts(std::slice::from_ref(&part), share, opts);
    // One part gives one result.
    v.pop().expect("a result per part")
}

/// [`frame_verdicts_of_runs`] of the parts of one graph (the executables of two process trees,
/// each under its root frame), one result per part, its stacks without the root: each part's
/// stacks are tested as `gmon diff` tests that executable's functions, with one correction over
/// the stacks of every part ([`diff_tree_runs`], spec/diff.md §11), and each part's share is of
/// its own samples. A part with no samples on one side (an executable only one side ran) is not
/// tested: every frame of it appeared or went away. [`FrameVerdicts::join`] puts the parts
/// under their roots.
pub fn frame_verdicts_of_parts(
    parts: &[FramePart],
    share: bool,
    opts: &NoiseOptions,
) -> Vec<FrameVerdicts> {
    let runs = |side: &[Vec<String>], label: &str| -> Vec<RunCounts> {
        let all: Vec<RunCounts> = side.iter().map(|lines| counts(lines, label)).collect();
        let some: Vec<RunCounts> = all.iter().filter(|r| r.total > 0).cloned().collect();
        if some.is_empty() {
            vec![RunCounts {
                label: label.to_string(),
                ..RunCounts::default()
            }]
        } else {
            some
        }
    };
    let sides: Vec<(Vec<RunCounts>, Vec<RunCounts>)> = parts
        .iter()
        .map(|p| (runs(&p.base, "base"), runs(&p.new, "new")))
        .collect();
    let total = |rs: &[RunCounts]| rs.iter().map(|r| r.total as f64).sum::<f64>();
    // With one side empty there are no shares to compare: every frame appeared or went away.
    let one_sided: Vec<bool> = sides
        .iter()
        .map(|(b, n)| total(b) == 0.0 || total(n) == 0.0)
        .collect();
    let compared: Vec<(&[RunCounts], &[RunCounts])> = sides
        .iter()
        .zip(&one_sided)
        .filter(|(_, o)| !**o)
        .map(|((b, n), _)| (b.as_slice(), n.as_slice()))
        .collect();
    let mut tested_diffs = diff_tree_runs(Granularity::Function, &compared, opts).into_iter();
    let mut out = Vec::new();
    for ((part, (b, n)), &one_sided) in parts.iter().zip(&sides).zip(&one_sided) {
        // A one-sided part is compared alone only for its tooltips' shares; its verdicts are
        // not used, so it costs the others nothing.
        let d = match one_sided {
            true => diff_runs(Granularity::Function, b, n, opts),
            false => match tested_diffs.next() {
                Some(d) => d,
                None => continue,
            },
        };
        let (bt, nt) = (total(b), total(n));
        let scale = if share && bt > 0.0 { nt / bt } else { 1.0 };
        let mut changes = 0;
        let lines = d
            .entries
            .iter()
            .map(|e| {
                let (bs, ns) = (e.base.self_samples, e.new.self_samples as u64);
                let line = if one_sided || e.time_verdict == Verdict::Change {
                    changes += 1;
                    format!("{} {} {ns}", e.name, (bs * scale).round() as u64)
                } else {
                    format!("{} {ns} {ns}", e.name)
                };
                (e.name.clone(), line)
            })
            .collect::<BTreeMap<String, String>>();
        out.push(FrameVerdicts {
            // In the order inferno draws them: by stack.
            lines: lines.into_values().collect(),
            changes,
            tested: d.tested,
            models: vec![PartModel {
                root: part.root.clone(),
                model: d.model,
                runs: (b.len(), n.len()),
                dispersion: d.dispersion,
                jitter: d.jitter,
                level: d.level,
                family: d.family,
                one_sided,
            }],
            stacks: d.entries.into_iter().map(|e| (e.name.clone(), e)).collect(),
        });
    }
    out
}

impl FrameVerdicts {
    /// The parts of a graph as one, each part's stacks under its root frame (a part whose root
    /// is `""` stays as it is).
    pub fn join(parts: Vec<FrameVerdicts>) -> FrameVerdicts {
        let mut lines: BTreeMap<String, String> = BTreeMap::new();
        let mut out = FrameVerdicts {
            lines: Vec::new(),
            changes: 0,
            tested: 0,
            stacks: BTreeMap::new(),
            models: Vec::new(),
        };
        for part in parts {
            let root = part.models.first().map_or("", |m| m.root.as_str());
            let under = |stack: &str| match root {
                "" => stack.to_owned(),
                root => format!("{root};{stack}"),
            };
            for line in &part.lines {
                let stack = line.rsplitn(3, ' ').nth(2).unwrap_or(line);
                lines.insert(under(stack), under(line));
            }
            for (stack, e) in part.stacks {
                out.stacks.insert(under(&stack), e);
            }
            out.changes += part.changes;
            out.tested += part.tested;
            out.models.extend(part.models);
        }
        // In the order inferno draws them: by stack.
        out.lines = lines.into_values().collect();
        out
    }

    /// The noise model in the subtitle's words: which model tested the frames (spec/diff.md §2,
    /// §3), the correction and the level; for a process tree, each executable's model.
    pub fn noise_words(&self) -> String {
        let tested: Vec<&PartModel> = self.models.iter().filter(|m| !m.one_sided).collect();
        let level = tested.first().map_or(0.0, |m| m.level);
        match tested.as_slice() {
            [] => "nothing tested".to_owned(),
            [m] if m.root.is_empty() => format!(
                "{}, Holm, level {}",
                m.words(),
                super::text::level_text(level)
            ),
            parts => {
                let each: Vec<String> = parts
                    .iter()
                    .map(|m| format!("{}: {}", m.root, m.words()))
                    .collect();
                format!(
                    "{}; Holm over the {} frames tested in all {} executables, level {}",
                    each.join("; "),
                    parts[0].family,
                    parts.len(),
                    super::text::level_text(level),
                )
            }
        }
    }

    /// Each frame's tooltip (the `title` inferno gives it) with the test of its stack: the
    /// share of the samples, BASE → NEW, of the frame's own samples, the change with its
    /// interval, and the verdict (spec/diff.md §10). Frames are found by where inferno drew
    /// them: the depth (from `y`, counted from the root's row, upwards unless `inverted`) and
    /// the offset and width in samples (`fg:x`, `fg:w`) pick one stack of [`Self::lines`].
    pub fn annotate_titles(&self, svg: Vec<u8>, inverted: bool) -> Vec<u8> {
        let text = match String::from_utf8(svg) {
            Ok(t) => t,
            Err(e) => return e.into_bytes(),
        };
        let frames = self.layout();
        let mut rows: Vec<&str> = frame_tags(&text)
            .filter_map(|t| attr(t.rect, "y"))
            .collect();
        rows.sort_by(|a, b| {
            let (a, b) = (a.parse().unwrap_or(0.0f64), b.parse().unwrap_or(0.0f64));
            if inverted {
                a.total_cmp(&b)
            } else {
                b.total_cmp(&a)
            }
        });
        rows.dedup();
        let mut out = String::with_capacity(text.len() + text.len() / 4);
        let mut done = 0;
        for t in frame_tags(&text) {
            let key = (|| {
                let depth = rows.iter().position(|&y| Some(y) == attr(t.rect, "y"))?;
                let x: u64 = attr(t.rect, "fg:x")?.parse().ok()?;
                let w: u64 = attr(t.rect, "fg:w")?.parse().ok()?;
                frames.get(&(depth, x, w))
            })();
            let Some(stack) = key else { continue };
            out.push_str(&text[done..t.title_end]);
            out.push_str(&crate::flame::escape(&self.words(stack)));
            done = t.title_end;
        }
        out.push_str(&text[done..]);
        out.into_bytes()
    }

    /// Where inferno draws each stack prefix: `(depth, offset, width)` in NEW's samples (the
    /// widths of a differential graph), depth 1 the first frame (0 is inferno's `all`).
    fn layout(&self) -> BTreeMap<(usize, u64, u64), String> {
        // (depth, prefix) -> (first offset, width), in the sorted order inferno draws.
        let mut at: BTreeMap<(usize, String), (u64, u64)> = BTreeMap::new();
        let mut offset = 0u64;
        // Each line is `stack base new`: the width is `new`.
        let drawn = self.lines.iter().filter_map(|l| {
            let (rest, n) = parse(l)?;
            Some((rest.rsplit_once(' ')?.0, n))
        });
        for (stack, n) in drawn {
            let mut prefix = String::new();
            for (d, frame) in stack.split(';').enumerate() {
                if d > 0 {
                    prefix.push(';');
                }
                prefix.push_str(frame);
                let e = at.entry((d + 1, prefix.clone())).or_insert((offset, 0));
                e.1 = e.1.saturating_add(n);
            }
            offset = offset.saturating_add(n);
        }
        at.into_iter()
            .filter(|(_, (_, w))| *w > 0)
            .map(|((d, prefix), (x, w))| ((d, x, w), prefix))
            .collect()
    }

    /// What a frame's tooltip adds for the stack `stack`.
    fn words(&self, stack: &str) -> String {
        let Some(e) = self.stacks.get(stack) else {
            return "; no samples of its own".to_string();
        };
        let in_part = |m: &&PartModel| {
            m.root.is_empty()
                || stack
                    .strip_prefix(m.root.as_str())
                    .is_some_and(|rest| rest.starts_with(';'))
        };
        if self
            .models
            .iter()
            .find(in_part)
            .is_some_and(|m| m.one_sided)
        {
            return "; only one side has samples here: not tested".to_string();
        }
        let verdict = match e.time_verdict {
            Verdict::Change => "a change",
            Verdict::WithinNoise => "within noise",
            Verdict::TooFewSamples => "too few samples to tell",
        };
        format!(
            "; own samples' share {:.2}% → {:.2}%, change {:+.2} points [{:+.2}, {:+.2}]: {verdict}",
            e.share_base * 100.0,
            e.share_new * 100.0,
            e.delta_share * 100.0,
            e.delta_share_low * 100.0,
            e.delta_share_high * 100.0,
        )
    }
}

/// One frame of inferno's SVG: its rect tag and where its title's text ends.
struct FrameTag<'a> {
    rect: &'a str,
    title_end: usize,
}

/// inferno's frames, `<g><title>…</title><rect …/>`, in the order of the file.
fn frame_tags(svg: &str) -> impl Iterator<Item = FrameTag<'_>> {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let start = from + svg[from..].find("<g><title>")?;
            let title_end = start + svg[start..].find("</title>")?;
            let rest = &svg[title_end..];
            from = title_end;
            let Some(r) = rest
                .strip_prefix("</title>")
                .filter(|r| r.starts_with("<rect "))
            else {
                continue;
            };
            let end = r.find("/>")?;
            return Some(FrameTag {
                rect: &r[..end],
                title_end,
            });
        }
    })
}

/// The value of attribute `name` in a tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[at..].find('"')?;
    Some(&tag[at..at + len])
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
