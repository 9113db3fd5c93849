//! The table `gmon diff` prints: what was compared, which noise model ran, then one line per
//! function with its shares, the change with its interval, the verdict, and the exact calls.

use std::io::{self, Write};

use super::{Diff, Granularity, Model, Status, Totals, Verdict};

/// What the text printer shows.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PrintOptions {
    /// Show at most this many entries (0: all).
    pub limit: usize,
}

fn side_line(t: &Totals) -> String {
    let what = match t.profiles.len() {
        1 => t.label.clone(),
        n => format!("{n} profiles: {}", t.label),
    };
    format!("{what} ({} samples, {} calls)", t.samples, t.calls)
}

/// The model in words, as the header says it.
fn model_line(d: &Diff) -> String {
    let model = match d.model {
        Model::Sampling if d.dispersion > 1.0 => format!(
            "sampling noise times a run-to-run dispersion of {} assumed (one profile per side: \
             binomial counts, each worth 1/{} of a sample for the spread between runs that one \
             profile cannot measure, --dispersion; spec/diff.md §2)",
            d.dispersion, d.dispersion
        ),
        Model::Sampling => {
            "sampling noise alone (one profile per side: binomial counts, --dispersion 1; \
             spec/diff.md §2)"
                .to_string()
        }
        Model::RunToRun if d.jitter > 0.0 => format!(
            "sampling noise times the run-to-run dispersion ({:.2}), plus a per-run jitter of \
             each function's own time ({:.1}%, which spreads a function's share the more the \
             larger it is), both measured between the profiles of each side (with {} and {:.1} \
             degrees of freedom: Student's t; spec/diff.md §3)",
            d.dispersion,
            d.jitter * 100.0,
            d.dispersion_df,
            d.jitter_df
        ),
        Model::RunToRun => format!(
            "sampling noise times the run-to-run dispersion measured between the profiles of \
             each side ({:.2}, estimated with {} degrees of freedom: Student's t; no jitter of \
             single functions beyond it; spec/diff.md §3)",
            d.dispersion, d.dispersion_df
        ),
    };
    let family = if d.family == d.tested {
        format!("the {} tested entries", d.tested)
    } else {
        // A process tree's executable: one correction over the whole tree (spec/diff.md §11).
        format!(
            "the {} entries tested in the whole process tree ({} of them here)",
            d.family, d.tested
        )
    };
    format!(
        "Noise: {model}. Verdicts at level {} over {family} (Holm's correction); entries with \
         fewer than {} samples in both sides together, or too few to reach the level whatever \
         they did (Tarone), are 'too few'. Intervals of Δshare hold together at that level. A \
         changed call count is a change whatever the time did ('change (calls)').",
        level_text(d.level),
        d.min_samples
    )
}

/// A test level as people write one: four significant digits at most (0.05, 0.01667), not
/// the float's seventeen.
pub fn level_text(level: f64) -> String {
    let digits = if level > 0.0 && level < 1.0 {
        (3.0 - level.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        4
    };
    let s = format!("{level:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// What the `detectable` column means, when some entry is not a change: "noise" is not "no
/// change", only none as large as the column says.
fn detectable_line(d: &Diff) -> Option<String> {
    let unseen = d
        .entries
        .iter()
        .filter(|e| e.time_verdict != Verdict::Change)
        .count();
    if unseen == 0 {
        return None;
    }
    let shown = |share: f64| {
        let e = d
            .entries
            .iter()
            .filter(|e| e.detectable_slowdown.is_some())
            .min_by(|a, b| {
                (a.share_base - share)
                    .abs()
                    .total_cmp(&(b.share_base - share).abs())
            })?;
        Some(format!(
            "{}, holding {:.1}%, needs +{:.1} points, {}",
            e.name,
            e.share_base * 100.0,
            e.detectable_delta_share * 100.0,
            slowdown_words(e.detectable_slowdown)
        ))
    };
    let example = shown(0.05).map_or(String::new(), |s| format!(" (here: {s})"));
    Some(format!(
        "'noise' and 'too few' do not rule out a smaller change: 'detectable' is the smallest \
         growth of an entry's share, in points, that these samples show as a change {:.0} times \
         in 10, and the slowdown of that entry alone that gives it{example}. Record longer, at \
         a higher --hz, or several runs per side (--base/--new) to see smaller changes.",
        super::POWER * 10.0
    ))
}

/// A slowdown as the table says it: `+56% slower`, or `none` when no slowdown is enough.
fn slowdown_words(r: Option<f64>) -> String {
    match r {
        Some(r) if r < 100.0 => format!("{:.0}% slower", r * 100.0),
        Some(_) | None => "no slowdown is enough".to_string(),
    }
}

/// Prints the comparison as a table, largest change first.
pub fn print_text(out: &mut dyn Write, d: &Diff, opts: &PrintOptions) -> io::Result<()> {
    let unit = if d.hz == 0 { "samples" } else { "seconds" };
    let per = |v: f64| if d.hz == 0 { v } else { v / f64::from(d.hz) };
    writeln!(
        out,
        "base: {}\nnew:  {}",
        side_line(&d.base),
        side_line(&d.new)
    )?;
    writeln!(
        out,
        "{}; self time in {unit}{}; share = self samples / all samples of the side.",
        match d.granularity {
            Granularity::Function => "per function",
            Granularity::AddressRange =>
                "per address range (no executable: ranges start at arc callee addresses)",
        },
        if d.hz == 0 {
            String::new()
        } else {
            format!(" ({} samples per second)", d.hz)
        }
    )?;
    if d.normalized {
        writeln!(
            out,
            "Total samples differ: shares compare them (NEW scaled by {:.6}, base total / new \
             total). Sorted by |Δshare|.",
            d.scale
        )?;
    } else if d.base.samples == d.new.samples {
        writeln!(
            out,
            "Total samples are equal: changes are raw. Sorted by |Δshare|."
        )?;
    } else {
        // The totals differ but one is 0: there is nothing to scale by, so the changes stay raw.
        let empty = if d.base.samples == 0 { "BASE" } else { "NEW" };
        writeln!(
            out,
            "Total samples differ, {empty} has none: changes are raw (no normalization). \
             Sorted by |Δself|."
        )?;
    }
    writeln!(out, "{}", model_line(d))?;
    writeln!(
        out,
        "{} change{}.",
        d.changes,
        if d.changes == 1 { "" } else { "s" }
    )?;
    if let Some(line) = detectable_line(d) {
        writeln!(out, "{line}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:>7} {:>7} {:>7} {:>17}  {:<14} {:>15} {:>11} {:>11} {:>11} {:>11} {:>11}  {:<7} name",
        "share",
        "share",
        "Δshare",
        "interval",
        "verdict",
        "detectable",
        "self base",
        "self new",
        "calls base",
        "calls new",
        "Δcalls",
        "status"
    )?;
    writeln!(
        out,
        "{:>7} {:>7} {:>7} {:>17}  {:<14} {:>15}",
        "base%", "new%", "points", "(points)", "", "points (slower)"
    )?;
    let shown = if opts.limit == 0 {
        d.entries.len()
    } else {
        opts.limit.min(d.entries.len())
    };
    for e in d.entries.iter().take(shown) {
        let status = match e.status {
            Status::Both => "",
            Status::Added => "added",
            Status::Removed => "removed",
        };
        let verdict = match (e.verdict, e.calls_changed, e.time_verdict) {
            (Verdict::Change, true, Verdict::Change) => "change (both)",
            (Verdict::Change, true, _) => "change (calls)",
            (v, _, _) => v.words(),
        };
        let interval = format!(
            "[{:+.2}, {:+.2}]",
            e.delta_share_low * 100.0,
            e.delta_share_high * 100.0
        );
        let detectable = if e.time_verdict == Verdict::Change {
            String::new()
        } else {
            format!(
                "{:.2} ({})",
                e.detectable_delta_share * 100.0,
                match e.detectable_slowdown {
                    Some(r) if r < 100.0 => format!("{:.0}%", r * 100.0),
                    _ => "-".to_string(),
                }
            )
        };
        writeln!(
            out,
            "{:>7.2} {:>7.2} {:>+7.2} {:>17}  {:<14} {:>15} {:>11.4} {:>11.4} {:>11} {:>11} {:>+11}  {:<7} {}",
            e.share_base * 100.0,
            e.share_new * 100.0,
            e.delta_share * 100.0,
            interval,
            verdict,
            detectable,
            per(e.base.self_samples),
            per(e.new.self_samples),
            e.base.calls,
            e.new.calls,
            e.delta_calls,
            status,
            e.name
        )?;
    }
    if shown < d.entries.len() {
        writeln!(out, "... {} more entries", d.entries.len() - shown)?;
    }
    Ok(())
}

#[cfg(test)]
mod level_tests {
    use super::level_text;

    #[test]
    fn levels_are_written_as_people_write_them() {
        assert_eq!(level_text(0.05), "0.05");
        assert_eq!(level_text(0.05 / 3.0), "0.01667");
        assert_eq!(level_text(0.001), "0.001");
        assert_eq!(level_text(0.1), "0.1");
    }
}
