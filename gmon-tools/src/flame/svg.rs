//! Flame-graph SVG through the inferno crate.

use std::io::Write;

use inferno::flamegraph::{self, Direction, Palette, TextTruncateDirection};

use crate::diff::{FramePart, FrameVerdicts};
use crate::model::StackSource;

/// How a differential graph colours a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DiffColours {
    /// By the change in the frame's share of all samples: BASE is scaled to NEW's total first
    /// (inferno-diff-folded `-n`), as `gmon diff` sorts by the normalized change.
    #[default]
    Share,
    /// By the change in raw sample counts (a longer run is red all over).
    Counts,
}

/// How to draw a flame graph, with inferno's option names. Deterministic colours by default.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SvgOptions {
    /// The title at the top (`--title`).
    pub title: String,
    /// Text put before the subtitle that says where stacks came from (`--subtitle`).
    pub subtitle: Option<String>,
    /// Icicle graph: roots at the top, growing down (`--inverted`).
    pub inverted: bool,
    /// Each stack reversed, leaf first, before drawing (`--reverse`).
    pub reverse_stacks: bool,
    /// Frames narrower than this percentage of the width are left out (`--minwidth`).
    pub min_width: f64,
    /// Image width in pixels; `None` is inferno's fluid width (`--width`).
    pub width: Option<usize>,
    /// Font size (`--fontsize`).
    pub font_size: usize,
    /// inferno's palette ("hot", "mem", "io", "red", ..., "rust") (`--colors`).
    pub colors: Palette,
    /// Colours from a hash of each name, so the same input gives the same bytes (`--hash`, the
    /// default here). When false, inferno picks colours at random.
    pub deterministic: bool,
    /// What a sample is called in tooltips (`--countname`).
    pub count_name: String,
    /// Notes stored in the SVG (`--notes`).
    pub notes: String,
    /// What a differential graph's colours show.
    pub diff_colours: DiffColours,
    /// How a differential graph's frames are tested (spec/diff.md §10): the level, the floor of
    /// samples and the dispersion one run a side assumes.
    pub noise: crate::diff::NoiseOptions,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions {
            title: "Flame Graph".to_owned(),
            subtitle: None,
            inverted: false,
            reverse_stacks: false,
            min_width: 0.1,
            width: None,
            font_size: 12,
            colors: Palette::default(),
            deterministic: true,
            count_name: "samples".to_owned(),
            notes: String::new(),
            diff_colours: DiffColours::default(),
            noise: crate::diff::NoiseOptions::default(),
        }
    }
}

impl SvgOptions {
    /// The subtitle: the user's text, if any, then what the graph is (never dropped: a reader
    /// must know that estimated stacks are estimated).
    fn subtitle_with(&self, ours: String) -> String {
        match &self.subtitle {
            Some(theirs) if !theirs.is_empty() => format!("{theirs} ({ours})"),
            _ => ours,
        }
    }
}

/// The error when there is nothing to draw ([`write_svg`] and [`write_diff_svg`] never write
/// inferno's error picture); `gmon flame` then draws [`write_no_samples_svg`] instead.
#[derive(Debug, thiserror::Error)]
#[error("no samples in any function: nothing to draw")]
pub struct NothingToDraw;

/// inferno's default image width, so that an empty graph has the size of a drawn one.
const EMPTY_WIDTH: u32 = 1200;

/// `text` with the five XML special characters as entities (HTML's too).
pub(crate) fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            _ => s.push(c),
        }
    }
    s
}

/// Draws a graph for a profile without samples in any function: the title, the subtitle and a
/// line that says there is nothing to draw. A quick test run is not a failure: `--folded` prints
/// nothing and `gmon pprof` writes an empty profile for it, so the SVG output says so too.
pub fn write_no_samples_svg(
    out: &mut dyn Write,
    opts: &SvgOptions,
    source: StackSource,
    outside_samples: u64,
) -> crate::Result<()> {
    let sub = opts.subtitle_with(subtitle(source, outside_samples));
    write_empty_svg(
        out,
        opts,
        &sub,
        "No samples in any function: nothing to draw",
    )
}

/// An SVG with the title, the subtitle and `message` instead of frames. inferno refuses empty
/// input (it writes an error picture and fails), so this one is written here.
fn write_empty_svg(
    out: &mut dyn Write,
    opts: &SvgOptions,
    subtitle: &str,
    message: &str,
) -> crate::Result<()> {
    let mid = EMPTY_WIDTH / 2;
    write!(
        out,
        "<?xml version=\"1.0\" standalone=\"no\"?>\n\
         <svg version=\"1.1\" width=\"{EMPTY_WIDTH}\" height=\"110\" viewBox=\"0 0 {EMPTY_WIDTH} 110\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#eeeeee\"/>\n\
         <text x=\"{mid}\" y=\"24\" text-anchor=\"middle\" font-family=\"Verdana\" \
         font-size=\"17\">{}</text>\n\
         <text x=\"{mid}\" y=\"48\" text-anchor=\"middle\" font-family=\"Verdana\" \
         font-size=\"12\" fill=\"#a0a0a0\">{}</text>\n\
         <text x=\"{mid}\" y=\"84\" text-anchor=\"middle\" font-family=\"Verdana\" \
         font-size=\"14\">{}</text>\n</svg>\n",
        escape(opts.title.as_str()),
        escape(subtitle),
        escape(message)
    )?;
    Ok(())
}

fn inferno_options(opts: &SvgOptions, subtitle: String) -> flamegraph::Options<'static> {
    let mut o = flamegraph::Options::default();
    o.title = opts.title.clone();
    o.subtitle = Some(subtitle);
    o.direction = if opts.inverted {
        Direction::Inverted
    } else {
        Direction::Straight
    };
    o.min_width = opts.min_width;
    o.colors = opts.colors;
    o.deterministic = opts.deterministic;
    o.hash = opts.deterministic;
    o.count_name = opts.count_name.clone();
    o.notes = opts.notes.clone();
    o.image_width = opts.width;
    o.font_size = opts.font_size;
    o.reverse_stack_order = opts.reverse_stacks;
    // Keep the start of a name (namespace, function) rather than its argument list's end.
    o.text_truncate_direction = TextTruncateDirection::Right;
    o
}

/// The subtitle for a graph: where the stacks came from, and what was left out.
pub fn subtitle(source: StackSource, outside_samples: u64) -> String {
    let mut s = source.description().to_owned();
    if outside_samples > 0 {
        s.push_str(&format!(
            "; {outside_samples} sample{} outside every function not drawn",
            if outside_samples == 1 { "" } else { "s" }
        ));
    }
    s
}

/// Draws folded lines (`a;b;c N`) as an SVG flame graph.
pub fn write_svg(
    out: &mut dyn Write,
    lines: &[String],
    opts: &SvgOptions,
    source: StackSource,
    outside_samples: u64,
) -> crate::Result<()> {
    let sub = opts.subtitle_with(subtitle(source, outside_samples));
    if lines.is_empty() {
        return Err(NothingToDraw.into());
    }
    let mut o = inferno_options(opts, sub);
    flamegraph::from_lines(&mut o, lines.iter().map(String::as_str), out)?;
    Ok(())
}

/// Draws inferno's differential flame graph: the shape of `new`, each frame coloured by how its
/// samples changed from `base` (red: more, blue: fewer). When `new` has no samples and `base`
/// has, everything went away: the graph has the shape of `base`, every frame blue. When neither
/// has samples the SVG says so.
pub fn write_diff_svg(
    out: &mut dyn Write,
    base: &[String],
    new: &[String],
    opts: &SvgOptions,
    source: StackSource,
) -> crate::Result<()> {
    let part = FramePart {
        root: String::new(),
        base: vec![base.to_vec()],
        new: vec![new.to_vec()],
    };
    write_diff_parts_svg(out, std::slice::from_ref(&part), opts, source)
}

/// [`write_diff_svg`] of several runs a side, or of the executables of two process trees each
/// under its root frame ([`FramePart`]): the frames are tested as `gmon diff` tests the
/// functions of those runs (spec/diff.md §3, §10, §11) and drawn summed.
pub fn write_diff_parts_svg(
    out: &mut dyn Write,
    parts: &[FramePart],
    opts: &SvgOptions,
    source: StackSource,
) -> crate::Result<()> {
    let empty = |runs: &[Vec<String>]| runs.iter().all(Vec::is_empty);
    // With NEW empty the widths come from BASE: the two are swapped for inferno and the colour
    // negated, so that "fewer samples than the base" stays blue.
    let vanished = parts.iter().all(|p| empty(&p.new));
    let swapped: Vec<FramePart>;
    let parts = if vanished {
        swapped = parts
            .iter()
            .map(|p| FramePart {
                root: p.root.clone(),
                base: p.new.clone(),
                new: p.base.clone(),
            })
            .collect();
        &swapped
    } else {
        parts
    };
    // Shares are only comparable when both sides have samples.
    let share = opts.diff_colours == DiffColours::Share && !parts.iter().all(|p| empty(&p.base));
    if parts.iter().all(|p| empty(&p.new)) {
        return Err(NothingToDraw.into());
    }
    // Only the frames whose change is more than noise keep their difference (spec/diff.md §10).
    let tested = FrameVerdicts::join(crate::diff::frame_verdicts_of_parts(
        parts,
        share,
        &opts.noise,
    ));
    // The subtitle says what the colours mean and how many frames changed, short enough for
    // the image's width; its tooltip (an SVG title) adds the test: the model, the correction,
    // the level. One line of all of it ran past both edges of a 1200-pixel graph.
    let counted = format!(
        "{} of {} frames tested a change",
        tested.changes, tested.tested
    );
    let (sub, detail) = if vanished {
        let s = format!(
            "{}; NEW has no samples: the shape of the base, blue = samples that went away",
            source.description()
        );
        (s.clone(), s)
    } else {
        let (colours, colours_in_full) = if share {
            (
                "red = larger share, blue = smaller",
                "colour: change in share of samples from the base (normalized): red = larger \
                 share, blue = smaller",
            )
        } else {
            (
                "red = more samples, blue = fewer",
                "colour: change in raw sample counts: red = more samples than the base, blue = \
                 fewer",
            )
        };
        (
            format!(
                "{}; {colours}, grey = within noise or too few samples: {counted}",
                source.description()
            ),
            format!(
                "{}; {colours_in_full}; grey = within noise or too few samples ({counted}: {}; \
                 each frame's tooltip has its interval)",
                source.description(),
                tested.noise_words()
            ),
        )
    };
    let sub = opts.subtitle_with(sub);
    let detail = opts.subtitle_with(detail);
    let mut o = inferno_options(opts, sub);
    o.negate_differentials = vanished;
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut o, tested.lines.iter().map(String::as_str), &mut svg)?;
    // Reversed stacks are drawn leaf first: the frames are no longer the stacks tested.
    let svg = if opts.reverse_stacks {
        svg
    } else {
        tested.annotate_titles(svg, opts.inverted)
    };
    let svg = crate::diff::grey_unchanged(svg);
    out.write_all(&with_subtitle_tooltip(svg, &detail))?;
    Ok(())
}

/// Gives the subtitle's text element a tooltip (an SVG `title` as its first child) holding
/// `detail`. Done last, after the frames' titles were annotated, which this one must not shift.
fn with_subtitle_tooltip(svg: Vec<u8>, detail: &str) -> Vec<u8> {
    let mut text = match String::from_utf8(svg) {
        Ok(t) => t,
        Err(e) => return e.into_bytes(),
    };
    let start = text
        .find("id=\"subtitle\"")
        .and_then(|i| Some(i + text[i..].find('>')? + 1));
    if let Some(at) = start {
        text.insert_str(at, &format!("<title>{}</title>", escape(detail)));
    }
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(f: impl FnOnce(&mut Vec<u8>) -> crate::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn no_samples_is_an_svg_that_says_so() {
        let opts = SvgOptions {
            title: "A <b> & c".to_owned(),
            ..SvgOptions::default()
        };
        let text = svg(|o| write_no_samples_svg(o, &opts, StackSource::Estimated, 3));
        assert!(text.starts_with("<?xml"), "{text}");
        assert!(text.contains("No samples in any function"), "{text}");
        assert!(text.contains("A &lt;b&gt; &amp; c"), "{text}");
        assert!(text.contains("3 samples outside every function"), "{text}");
        assert!(text.trim_end().ends_with("</svg>"), "{text}");
    }

    /// The differential graph's subtitle fits a 1200-pixel graph (inferno's glyphs are 0.59 of
    /// the 12-pixel font wide); the test behind it is in its tooltip. One line of both ran
    /// about 300 characters, past both edges.
    #[test]
    fn a_diff_subtitle_fits_the_graph_and_its_tooltip_has_the_test() {
        let base = vec!["main;a 500".to_owned(), "main;b 500".to_owned()];
        let new = vec!["main;a 700".to_owned(), "main;b 300".to_owned()];
        let text =
            svg(|o| write_diff_svg(o, &base, &new, &SvgOptions::default(), StackSource::Exact));
        let at = text.find("id=\"subtitle\"").expect("subtitle");
        let element = &text[at..at + text[at..].find("</text>").unwrap()];
        let (tooltip, visible) = element
            .split_once("<title>")
            .and_then(|(_, t)| t.split_once("</title>"))
            .expect("a title in the subtitle");
        assert!(
            tooltip.contains("Holm") && tooltip.contains("level 0.05"),
            "{tooltip}"
        );
        assert!(
            visible.contains("2 of 2 frames tested a change"),
            "{visible}"
        );
        let width = visible.chars().count() as f64 * 0.59 * 12.0;
        assert!(width <= 1180.0, "{width} px: {visible}");
    }

    /// Issue 28: every frame's tooltip carries its stack's test: the share of its own samples,
    /// BASE → NEW, the change with its interval, and the verdict.
    #[test]
    fn diff_tooltips_carry_shares_intervals_and_verdicts() {
        let lines = |v: &[(&str, u64)]| -> Vec<String> {
            v.iter().map(|(s, n)| format!("{s} {n}")).collect()
        };
        let base = lines(&[("main;a", 500), ("main;b;c", 480), ("main;d", 20)]);
        let new = lines(&[("main;a", 700), ("main;b;c", 280), ("main;d", 20)]);
        for inverted in [false, true] {
            let opts = SvgOptions {
                inverted,
                ..SvgOptions::default()
            };
            let text = svg(|o| write_diff_svg(o, &base, &new, &opts, StackSource::Exact));
            let title = |name: &str| {
                let at = text.find(&format!("<title>{name} (")).expect(name);
                text[at..at + text[at..].find("</title>").unwrap()].to_string()
            };
            let a = title("a");
            assert!(
                a.contains("own samples&apos; share 50.00% → 70.00%, change +20.00 points [+")
                    && a.ends_with(": a change"),
                "{a}"
            );
            let c = title("c");
            assert!(
                c.contains("48.00% → 28.00%, change -20.00 points [-"),
                "{c}"
            );
            let d = title("d");
            assert!(
                d.contains("2.00% → 2.00%, change +0.00 points [-")
                    && d.ends_with(": within noise"),
                "{d}"
            );
            // A caller without samples of its own says so; the root keeps inferno's title.
            assert!(
                title("b").ends_with("; no samples of its own"),
                "{}",
                title("b")
            );
            assert!(!title("all").contains("share"), "{}", title("all"));
        }
    }

    #[test]
    fn diff_with_an_empty_side_is_drawn() {
        let lines = vec!["main;f 3".to_owned(), "main;g 1".to_owned()];
        let opts = SvgOptions::default();
        // Everything went away: BASE's frames, with their sample counts, in blue.
        let gone = svg(|o| write_diff_svg(o, &lines, &[], &opts, StackSource::Estimated));
        assert!(gone.contains("NEW has no samples"), "{gone}");
        assert!(gone.contains("<title>f (3 samples, 75.00%; -"), "{gone}");
        // Everything is new.
        let added = svg(|o| write_diff_svg(o, &[], &lines, &opts, StackSource::Estimated));
        assert!(added.contains("<title>f (3 samples, 75.00%; +"), "{added}");
        let mut none = Vec::new();
        let r = write_diff_svg(&mut none, &[], &[], &opts, StackSource::Estimated);
        assert!(r.is_err_and(|e| matches!(e, crate::Error::NothingToDraw(_))));
        assert!(none.is_empty());
    }
}
