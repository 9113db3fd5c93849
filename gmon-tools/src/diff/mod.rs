//! What changed between two profiles (`gmon diff`): per function (with an executable) or per
//! address range (without one), the self samples and call counts of both, the absolute and
//! relative change, sorted by the size of the change.
//!
//! With an executable the functions come from the gprof engine ([`crate::gprof::Analysis`]): self
//! samples are gprof's credited ticks (fractions where a bin straddles two functions), calls are
//! gprof's call counts; functions are matched by symbol name (the n-th function of a name in
//! address order matches the n-th of the same name, for same-named static functions).
//!
//! Without one, functions are approximated by address ranges: every distinct arc callee address
//! (`self_pc`, which glibc's mcount reports a few bytes after a function's entry) of either
//! profile starts a range that runs to the next one; histogram bins go to the range holding the
//! bin's first address and calls to the range their callee address starts. Profiles without arcs
//! are cut into 256-byte ranges (wider for huge histograms: at most 65536 ranges).
//!
//! When the total samples differ, the change is shown both raw and normalized (NEW scaled by
//! base total / new total), the sort uses the normalized change, and every output says so.
//! Printers: [`print_text`], [`print_json`] (fields documented on [`Diff`]), [`print_folded`].

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use gmon_format::Profile;
use serde::Serialize;

use crate::gprof::Analysis;

/// How entries were formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Granularity {
    /// One entry per function of the executable.
    Function,
    /// One entry per address range (no executable given).
    AddressRange,
}

/// Whether an entry appears in both profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Samples or calls in both.
    Both,
    /// Only in NEW (no samples and no calls in BASE).
    Added,
    /// Only in BASE.
    Removed,
}

/// One side's numbers for an entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Side {
    /// Histogram samples credited to the entry (fractional with gprof's credit).
    pub self_samples: f64,
    /// `self_samples / hz`, in the histogram's dimension (normally seconds).
    pub self_seconds: f64,
    /// Calls into the entry (gprof's call count; arc counts into the range without executable).
    pub calls: u64,
}

/// The change of one entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Function name (demangled; `name [#n]` for the n-th of several with one name), or
    /// `0xLOW-0xHIGH` for an address range.
    pub name: String,
    /// First address (function address, or range start).
    pub address: u64,
    /// Whether it is in both profiles, or added / removed.
    pub status: Status,
    /// BASE's numbers.
    pub base: Side,
    /// NEW's numbers.
    pub new: Side,
    /// `new.self_samples - base.self_samples`.
    pub delta_self_samples: f64,
    /// `new.self_samples * scale - base.self_samples` (equal to the raw delta when the totals
    /// are equal).
    pub delta_self_samples_normalized: f64,
    /// `delta_self_samples / base.self_samples` (`None` when BASE has none).
    pub relative_self: Option<f64>,
    /// `delta_self_samples_normalized / base.self_samples` (`None` when BASE has none).
    pub relative_self_normalized: Option<f64>,
    /// `new.calls - base.calls` (signed).
    pub delta_calls: i128,
    /// `delta_calls / base.calls` (`None` when BASE has none).
    pub relative_calls: Option<f64>,
}

/// Totals of one profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    /// What the profile was called on the command line.
    pub label: String,
    /// All histogram samples (inside functions or not).
    pub samples: u64,
    /// Sum of all calls of all entries.
    pub calls: u64,
}

/// The schema version of `gmon diff --json` ([`Diff::version`]; spec/diff.md): changed when a
/// field is removed, renamed or changes meaning.
pub const JSON_VERSION: u32 = 1;

/// The whole comparison. The JSON output (`--json`) is this struct; its field names are
/// stable: `version` (1), `granularity` (`function` | `address-range`), `hz`, `base` and `new`
/// (`label`, `samples`, `calls`), `normalized` (whether the totals differ and neither is 0), `scale` (factor
/// applied to NEW for the normalized columns), `sorted_by` (`self-normalized` | `self-raw`), and
/// `entries` as described on [`Entry`] (`status` is `both`, `added` or `removed`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// Format version of this structure.
    pub version: u32,
    /// Functions or address ranges.
    pub granularity: Granularity,
    /// Samples per second (of BASE; 0 without histogram).
    pub hz: u32,
    /// BASE's totals.
    pub base: Totals,
    /// NEW's totals.
    pub new: Totals,
    /// Whether the normalized changes are meaningful: the totals differ and neither is 0
    /// (compare `base.samples` with `new.samples` to tell equal totals from an empty side).
    pub normalized: bool,
    /// `base.samples / new.samples` (1 when equal or when either is 0).
    pub scale: f64,
    /// Which change the entries are sorted by.
    pub sorted_by: &'static str,
    /// Entries, largest change first.
    pub entries: Vec<Entry>,
}

/// Compares two gprof analyses function by function.
pub fn diff_functions(base: &Analysis, new: &Analysis, base_label: &str, new_label: &str) -> Diff {
    let hz = if base.hz() != 0 { base.hz() } else { new.hz() };
    let keyed = |a: &Analysis| -> Vec<(String, u64, f64, u64)> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        a.functions()
            .map(|f| {
                let n = seen.entry(f.name.to_string()).or_insert(0);
                *n += 1;
                let mut name = f.demangled();
                if *n > 1 {
                    name = format!("{name} [#{n}]");
                }
                (name, f.addr, f.self_ticks, f.calls)
            })
            .collect()
    };
    let mut rows: BTreeMap<String, (u64, Side, Side)> = BTreeMap::new();
    for (name, addr, ticks, calls) in keyed(base) {
        let e = rows
            .entry(name)
            .or_insert((addr, Side::default(), Side::default()));
        e.1 = side(ticks, calls, hz);
    }
    for (name, addr, ticks, calls) in keyed(new) {
        let e = rows
            .entry(name)
            .or_insert((addr, Side::default(), Side::default()));
        e.2 = side(ticks, calls, hz);
    }
    let rows = rows
        .into_iter()
        .map(|(name, (addr, b, n))| (name, addr, b, n))
        .collect();
    build(
        Granularity::Function,
        hz,
        (base_label, base.total_samples()),
        (new_label, new.total_samples()),
        rows,
    )
}

/// Compares two profiles without an executable, by address range (see the module docs).
pub fn diff_ranges(base: &Profile, new: &Profile, base_label: &str, new_label: &str) -> Diff {
    let hz = base
        .histograms()
        .chain(new.histograms())
        .next()
        .map_or(0, |h| h.prof_rate.0);
    let mut starts: Vec<u64> = base.arcs().chain(new.arcs()).map(|a| a.self_pc).collect();
    starts.sort_unstable();
    starts.dedup();
    let (lo, hi) = base
        .histograms()
        .chain(new.histograms())
        .fold((u64::MAX, 0u64), |(lo, hi), h| {
            (lo.min(h.low_pc), hi.max(h.high_pc))
        });
    if starts.is_empty() && lo < hi {
        // 256-byte ranges, wider when the histogram is huge (at most 65536 ranges).
        let size = (hi - lo).div_ceil(1 << 16).max(256);
        starts = (lo / size..hi.div_ceil(size)).map(|k| k * size).collect();
    }
    let end = hi.max(starts.last().map_or(0, |s| s.saturating_add(1)));
    // Bins below the first start get a range of their own, beginning at the lowest histogram.
    if lo < starts.first().copied().unwrap_or(u64::MAX) && lo < hi {
        starts.insert(0, lo);
    }
    let range_of = |addr: u64| -> Option<usize> {
        match starts.binary_search(&addr) {
            Ok(i) => Some(i),
            Err(0) => None,
            Err(i) => Some(i - 1),
        }
    };
    let collect = |p: &Profile| -> (Vec<u64>, Vec<u64>) {
        let mut samples = vec![0u64; starts.len()];
        let mut calls = vec![0u64; starts.len()];
        for h in p.histograms() {
            let scale = h.scale();
            for (i, &c) in h.bins.iter().enumerate() {
                if c == 0 {
                    continue;
                }
                let addr = h
                    .low_pc
                    .saturating_add(((scale * i as f64) as u64).saturating_mul(2));
                if let Some(s) = range_of(addr).and_then(|r| samples.get_mut(r)) {
                    *s = s.saturating_add(c);
                }
            }
        }
        for a in p.arcs() {
            if let Some(s) = range_of(a.self_pc).and_then(|r| calls.get_mut(r)) {
                *s = s.saturating_add(a.count);
            }
        }
        (samples, calls)
    };
    let (bs, bc) = collect(base);
    let (ns, nc) = collect(new);
    let mut rows = Vec::with_capacity(starts.len());
    for (i, &start) in starts.iter().enumerate() {
        let stop = starts.get(i + 1).copied().unwrap_or(end).max(start);
        let get = |v: &[u64]| v.get(i).copied().unwrap_or(0);
        rows.push((
            format!("{start:#x}-{stop:#x}"),
            start,
            side(get(&bs) as f64, get(&bc), hz),
            side(get(&ns) as f64, get(&nc), hz),
        ));
    }
    let total = |p: &Profile| {
        p.histograms()
            .map(|h| h.total())
            .fold(0u64, u64::saturating_add)
    };
    build(
        Granularity::AddressRange,
        hz,
        (base_label, total(base)),
        (new_label, total(new)),
        rows,
    )
}

fn side(samples: f64, calls: u64, hz: u32) -> Side {
    let self_seconds = if hz == 0 {
        0.0
    } else {
        samples / f64::from(hz)
    };
    Side {
        self_samples: samples,
        self_seconds,
        calls,
    }
}

fn ratio(delta: f64, base: f64) -> Option<f64> {
    (base != 0.0).then(|| delta / base)
}

fn build(
    granularity: Granularity,
    hz: u32,
    base: (&str, u64),
    new: (&str, u64),
    rows: Vec<(String, u64, Side, Side)>,
) -> Diff {
    let normalized = base.1 != new.1 && base.1 != 0 && new.1 != 0;
    let scale = if normalized {
        base.1 as f64 / new.1 as f64
    } else {
        1.0
    };
    let mut entries: Vec<Entry> = rows
        .into_iter()
        .filter_map(|(name, address, b, n)| {
            let in_base = b.self_samples != 0.0 || b.calls != 0;
            let in_new = n.self_samples != 0.0 || n.calls != 0;
            let status = match (in_base, in_new) {
                (true, true) => Status::Both,
                (false, true) => Status::Added,
                (true, false) => Status::Removed,
                (false, false) => return None,
            };
            let d = n.self_samples - b.self_samples;
            let dn = n.self_samples * scale - b.self_samples;
            let dc = i128::from(n.calls) - i128::from(b.calls);
            Some(Entry {
                name,
                address,
                status,
                base: b,
                new: n,
                delta_self_samples: d,
                delta_self_samples_normalized: dn,
                relative_self: ratio(d, b.self_samples),
                relative_self_normalized: ratio(dn, b.self_samples),
                delta_calls: dc,
                relative_calls: ratio(dc as f64, b.calls as f64),
            })
        })
        .collect();
    let key = |e: &Entry| {
        if normalized {
            e.delta_self_samples_normalized.abs()
        } else {
            e.delta_self_samples.abs()
        }
    };
    entries.sort_by(|a, b| {
        key(b)
            .total_cmp(&key(a))
            .then(
                b.delta_calls
                    .unsigned_abs()
                    .cmp(&a.delta_calls.unsigned_abs()),
            )
            .then(a.address.cmp(&b.address))
            .then(a.name.cmp(&b.name))
    });
    let calls = |side: fn(&Entry) -> u64| entries.iter().map(side).fold(0u64, u64::saturating_add);
    Diff {
        version: JSON_VERSION,
        granularity,
        hz,
        base: Totals {
            label: base.0.to_string(),
            samples: base.1,
            calls: calls(|e| e.base.calls),
        },
        new: Totals {
            label: new.0.to_string(),
            samples: new.1,
            calls: calls(|e| e.new.calls),
        },
        normalized,
        scale,
        sorted_by: if normalized {
            "self-normalized"
        } else {
            "self-raw"
        },
        entries,
    }
}

/// What the text printer shows.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PrintOptions {
    /// Show at most this many entries (0: all).
    pub limit: usize,
}

/// A relative change for the table: `+12.5%`, `new` when BASE had none, `-` when neither had.
fn percent(r: Option<f64>, delta: f64) -> String {
    match r {
        Some(r) => format!("{:+.1}%", r * 100.0),
        None if delta == 0.0 => "-".to_string(),
        None => "new".to_string(),
    }
}

/// Prints the comparison as a table, largest change first.
pub fn print_text(out: &mut dyn Write, d: &Diff, opts: &PrintOptions) -> io::Result<()> {
    let unit = if d.hz == 0 { "samples" } else { "seconds" };
    let per = |s: &Side| {
        if d.hz == 0 {
            s.self_samples
        } else {
            s.self_seconds
        }
    };
    let conv = |v: f64| if d.hz == 0 { v } else { v / f64::from(d.hz) };
    writeln!(
        out,
        "base: {} ({} samples, {} calls)\nnew:  {} ({} samples, {} calls)",
        d.base.label, d.base.samples, d.base.calls, d.new.label, d.new.samples, d.new.calls
    )?;
    writeln!(
        out,
        "{}; self time in {unit}{}.",
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
            "Total samples differ: 'self new' and 'Δself' are raw; 'Δnorm' and 'norm%' scale NEW \
             by {:.6} (base total / new total). Sorted by |Δnorm|.",
            d.scale
        )?;
    } else if d.base.samples == d.new.samples {
        writeln!(
            out,
            "Total samples are equal: changes are raw. Sorted by |Δself|."
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
    writeln!(out)?;
    writeln!(
        out,
        "{:>11} {:>11} {:>11} {:>8} {:>11} {:>8} {:>11} {:>11} {:>11} {:>8}  {:<7} name",
        "self base",
        "self new",
        "Δself",
        "Δ%",
        "Δnorm",
        "norm%",
        "calls base",
        "calls new",
        "Δcalls",
        "Δcalls%",
        "status"
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
        writeln!(
            out,
            "{:>11.4} {:>11.4} {:>+11.4} {:>8} {:>+11.4} {:>8} {:>11} {:>11} {:>+11} {:>8}  {:<7} {}",
            per(&e.base),
            per(&e.new),
            conv(e.delta_self_samples),
            percent(e.relative_self, e.delta_self_samples),
            conv(e.delta_self_samples_normalized),
            percent(e.relative_self_normalized, e.delta_self_samples_normalized),
            e.base.calls,
            e.new.calls,
            e.delta_calls,
            percent(e.relative_calls, e.delta_calls as f64),
            status,
            e.name
        )?;
    }
    if shown < d.entries.len() {
        writeln!(out, "... {} more entries", d.entries.len() - shown)?;
    }
    Ok(())
}

/// Prints the comparison as JSON (one object, see [`Diff`] for the fields).
pub fn print_json(out: &mut dyn Write, d: &Diff) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, d).map_err(io::Error::other)?;
    writeln!(out)
}

/// Joins two sets of folded stacks (`stack count` lines) into differential folded stacks
/// (`stack count_base count_new`), as inferno's differential flame graph reads them; sorted by
/// stack.
pub fn differential_folded(base: &[String], new: &[String]) -> Vec<String> {
    let mut rows: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut add = |lines: &[String], second: bool| {
        for l in lines {
            let Some((stack, count)) = l.rsplit_once(' ') else {
                continue;
            };
            let Ok(c) = count.parse::<u64>() else {
                continue;
            };
            let e = rows.entry(stack.to_string()).or_insert((0, 0));
            if second {
                e.1 = e.1.saturating_add(c);
            } else {
                e.0 = e.0.saturating_add(c);
            }
        }
    };
    add(base, false);
    add(new, true);
    rows.into_iter()
        .map(|(s, (b, n))| format!("{s} {b} {n}"))
        .collect()
}

/// Single-frame differential folded stacks from a [`Diff`]: one line per entry, `name base new`
/// with self samples rounded to whole samples (used without an executable, where no call graph
/// can be estimated).
pub fn print_folded(out: &mut dyn Write, d: &Diff) -> io::Result<()> {
    let mut lines: Vec<String> = d
        .entries
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                crate::model::sanitize(&e.name),
                e.base.self_samples.round() as u64,
                e.new.self_samples.round() as u64
            )
        })
        .collect();
    lines.sort();
    for l in lines {
        writeln!(out, "{l}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gmon_format::{CallArc, Dimension, Encoding, Histogram, ProfRate, Record};

    fn profile(bins: Vec<u64>, arcs: &[(u64, u64, u64)]) -> Profile {
        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.records.push(Record::Histogram(Histogram {
            low_pc: 0x1000,
            high_pc: 0x1000 + 4 * bins.len() as u64,
            prof_rate: ProfRate(100),
            dimension: Dimension::SECONDS,
            bins,
        }));
        for &(f, s, c) in arcs {
            p.records.push(Record::CallArc(CallArc {
                from_pc: f,
                self_pc: s,
                count: c,
            }));
        }
        p
    }

    #[test]
    fn ranges_start_at_callee_addresses_and_sort_by_change() {
        // Ranges: [0x1000,0x1008) below the first callee, [0x1008,0x1010), [0x1010,0x1020).
        let base = profile(
            vec![1, 0, 5, 0, 2, 0, 0, 0],
            &[(0x1000, 0x1008, 3), (0x1000, 0x1010, 1)],
        );
        let new = profile(
            vec![1, 0, 1, 0, 2, 6, 0, 0],
            &[(0x1000, 0x1008, 3), (0x1000, 0x1010, 4)],
        );
        let d = diff_ranges(&base, &new, "a", "b");
        assert!(d.normalized);
        let names: Vec<&str> = d.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            vec!["0x1010-0x1020", "0x1008-0x1010", "0x1000-0x1008"]
        );
        let top = &d.entries[0];
        assert_eq!((top.base.self_samples, top.new.self_samples), (2.0, 8.0));
        assert_eq!((top.base.calls, top.new.calls, top.delta_calls), (1, 4, 3));
    }

    #[test]
    fn added_and_removed() {
        let base = profile(vec![3, 0, 0, 0], &[(0x1000, 0x1004, 1)]);
        let new = profile(vec![0, 0, 3, 0], &[(0x1000, 0x1008, 1)]);
        let d = diff_ranges(&base, &new, "a", "b");
        assert!(!d.normalized);
        let st: BTreeMap<&str, Status> = d
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.status))
            .collect();
        assert_eq!(st.get("0x1004-0x1008"), Some(&Status::Removed));
        assert_eq!(st.get("0x1008-0x1010"), Some(&Status::Added));
    }

    #[test]
    fn a_side_without_samples_is_not_called_equal() {
        let base = profile(vec![0, 0, 0, 0], &[(0x1000, 0x1004, 1)]);
        let new = profile(vec![0, 2, 0, 0], &[(0x1000, 0x1004, 2)]);
        let d = diff_ranges(&base, &new, "a", "b");
        assert!(!d.normalized);
        let mut text = Vec::new();
        print_text(&mut text, &d, &PrintOptions::default()).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(!text.contains("are equal"), "{text}");
        assert!(
            text.contains("Total samples differ, BASE has none: changes are raw"),
            "{text}"
        );
        let back = diff_ranges(&new, &base, "b", "a");
        let mut text = Vec::new();
        print_text(&mut text, &back, &PrintOptions::default()).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("NEW has none"), "{text}");
    }

    #[test]
    fn huge_histograms_without_arcs_get_a_bounded_number_of_ranges() {
        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.records.push(Record::Histogram(Histogram {
            low_pc: 0,
            high_pc: u64::MAX,
            prof_rate: ProfRate(100),
            dimension: Dimension::SECONDS,
            bins: vec![1, 2],
        }));
        let d = diff_ranges(&p, &p, "a", "a");
        assert_eq!(d.entries.len(), 2);
        assert_eq!(d.base.samples, 3);
    }

    #[test]
    fn differential_folded_joins_both_sides() {
        let a = vec!["main;f 3".to_string(), "main 1".to_string()];
        let b = vec!["main;g 2".to_string(), "main 1".to_string()];
        assert_eq!(
            differential_folded(&a, &b),
            vec!["main 1 1", "main;f 3 0", "main;g 0 2"]
        );
    }
}
