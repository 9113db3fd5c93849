//! Flame-graph SVG through the inferno crate.

use std::io::{self, Write};

use inferno::flamegraph::{self, Direction, Palette, TextTruncateDirection};

use super::estimate::StackSource;

/// How to draw a flame graph. Deterministic colours by default.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SvgOptions {
    /// The title at the top.
    pub title: String,
    /// Replaces the subtitle that says where stacks came from (not recommended).
    pub subtitle: Option<String>,
    /// Draw an icicle graph: roots at the top, growing down.
    pub reverse: bool,
    /// Frames narrower than this percentage of the width are left out.
    pub min_width: f64,
    /// inferno's palette ("hot", "mem", "io", "red", ..., "rust").
    pub colors: Palette,
    /// Colours from a hash of each name, so the same input gives the same bytes. When false,
    /// inferno picks colours at random.
    pub deterministic: bool,
    /// What a sample is called in tooltips.
    pub count_name: String,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions {
            title: "Flame Graph".to_owned(),
            subtitle: None,
            reverse: false,
            min_width: 0.1,
            colors: Palette::default(),
            deterministic: true,
            count_name: "samples".to_owned(),
        }
    }
}

/// The error when there is nothing to draw.
#[derive(Debug, thiserror::Error)]
#[error("no samples in any function: nothing to draw")]
pub struct NothingToDraw;

fn inferno_options(opts: &SvgOptions, subtitle: String) -> flamegraph::Options<'static> {
    let mut o = flamegraph::Options::default();
    o.title = opts.title.clone();
    o.subtitle = Some(subtitle);
    o.direction = if opts.reverse {
        Direction::Inverted
    } else {
        Direction::Straight
    };
    o.min_width = opts.min_width;
    o.colors = opts.colors;
    o.deterministic = opts.deterministic;
    o.hash = opts.deterministic;
    o.count_name = opts.count_name.clone();
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
) -> anyhow::Result<()> {
    if lines.is_empty() {
        return Err(NothingToDraw.into());
    }
    let sub = opts
        .subtitle
        .clone()
        .unwrap_or_else(|| subtitle(source, outside_samples));
    let mut o = inferno_options(opts, sub);
    flamegraph::from_lines(&mut o, lines.iter().map(String::as_str), out)?;
    Ok(())
}

/// Draws inferno's differential flame graph: the shape of `new`, each frame coloured by how its
/// samples changed from `base` (red: more, blue: fewer).
pub fn write_diff_svg(
    out: &mut dyn Write,
    base: &[String],
    new: &[String],
    opts: &SvgOptions,
    source: StackSource,
) -> anyhow::Result<()> {
    if new.is_empty() {
        return Err(NothingToDraw.into());
    }
    let join = |lines: &[String]| {
        let mut s = lines.join("\n");
        s.push('\n');
        s
    };
    let (b, n) = (join(base), join(new));
    let mut both = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        io::Cursor::new(b.into_bytes()),
        io::Cursor::new(n.into_bytes()),
        &mut both,
    )?;
    let text = String::from_utf8_lossy(&both).into_owned();
    let sub = opts.subtitle.clone().unwrap_or_else(|| {
        format!(
            "{}; colour: red = more samples than the base, blue = fewer",
            source.description()
        )
    });
    let mut o = inferno_options(opts, sub);
    flamegraph::from_lines(&mut o, text.lines(), out)?;
    Ok(())
}
