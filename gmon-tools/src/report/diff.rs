//! The differential report (`gmon report --diff`, spec/report.md §4): the comparison `gmon
//! diff` makes, as a table of functions with their shares, the change with its interval and the
//! verdict, and a differential flame graph in `gmon flame --diff`'s colours: the frames whose
//! stack is a change by the same test ([`frame_verdicts`]) coloured by the same scale
//! ([`frame_colour`]), everything else grey.

use std::collections::HashMap;

use crate::diff::{Diff, Entry, Granularity, Model, NoiseOptions, Status, Verdict};
use crate::diff::{
    FramePart, FrameVerdicts, frame_colour, frame_verdicts_of_runs, function_counts,
};
use crate::flame::folded_lines;
use crate::model::{Frame, Loaded, NodeId, StackSource, frame_name};

use super::collect::DATA_VERSION;
use super::data::{DiffData, DiffHead, Meta, ReportData};
use super::flame::{FlameTree, TOP};

/// The page's data for a comparison: `diff` made from the models `base` and `new` (one per
/// profile; empty when compared per address range, which has no stacks to draw).
pub fn build_diff_report(
    diff: &Diff,
    base: &[Loaded],
    new: &[Loaded],
    program: &str,
) -> ReportData {
    let frames = DiffFrames::of(base, new);
    let tested = frame_verdicts_of_runs(
        &frames.part.base,
        &frames.part.new,
        frames.share(),
        &frame_noise(diff),
    );
    build_diff_report_of(diff, base, new, program, &frames, &tested)
}

/// The stacks of a comparison's graph: each run's folded lines per side, as `gmon flame
/// --diff` draws them (the shape of NEW; when NEW has no samples, the shape of BASE, all blue:
/// the sides are swapped and `vanished` says so).
pub(super) struct DiffFrames {
    /// The runs of each side, swapped when `vanished`.
    pub part: FramePart,
    /// NEW has no samples and BASE has.
    pub vanished: bool,
}

impl DiffFrames {
    /// The stacks of the models `base` and `new` (one per run).
    pub fn of(base: &[Loaded], new: &[Loaded]) -> DiffFrames {
        let runs = |ls: &[Loaded]| -> Vec<Vec<String>> {
            ls.iter()
                .map(|l| folded_lines(&l.stacks, &l.graph))
                .collect()
        };
        let (b, n) = (runs(base), runs(new));
        let empty = |runs: &[Vec<String>]| runs.iter().all(Vec::is_empty);
        let vanished = empty(&n) && !empty(&b);
        let (base, new) = if vanished { (n, b) } else { (b, n) };
        DiffFrames {
            part: FramePart {
                root: String::new(),
                base,
                new,
            },
            vanished,
        }
    }

    /// Whether the colours are of the change in share (BASE has samples), not of counts.
    pub fn share(&self) -> bool {
        self.part.base.iter().any(|r| !r.is_empty())
    }
}

/// The frames are tested as the functions were: one profile a side by the sampling model with
/// the dispersion the comparison assumed, several (each model a run) by the runs' spread
/// (spec/diff.md §10), at the comparison's level.
pub(super) fn frame_noise(diff: &Diff) -> NoiseOptions {
    NoiseOptions {
        level: diff.level,
        min_samples: diff.min_samples,
        dispersion: match diff.model {
            Model::Sampling => diff.dispersion,
            Model::RunToRun => NoiseOptions::default().dispersion,
        },
    }
}

/// [`build_diff_report`] with the frames' stacks and their test given (for a process tree,
/// tested with every executable's frames together).
pub(super) fn build_diff_report_of(
    diff: &Diff,
    base: &[Loaded],
    new: &[Loaded],
    program: &str,
    frames: &DiffFrames,
    tested: &FrameVerdicts,
) -> ReportData {
    let mut d = ReportData {
        v: DATA_VERSION,
        kind: "diff",
        ..ReportData::default()
    };
    let mut x = DiffData::default();
    let mut index: HashMap<String, u32> = HashMap::new();
    let shown = graph_names(base.iter().chain(new));
    for e in &diff.entries {
        let name = shown.get(&e.name).unwrap_or(&e.name);
        index.insert(name.clone(), d.functions.name.len() as u32);
        push_function(&mut d, &mut x, name, Some(e));
    }
    let vanished = frames.vanished;
    // NEW's lines (BASE's when swapped), summed over the runs, for the totals per function.
    let n: Vec<&String> = frames.part.new.iter().flatten().collect();
    let b_is_empty = !frames.share();
    let mut rows: Vec<(Vec<&str>, u64, i64)> = Vec::new();
    let mut max = 1u64;
    for line in &tested.lines {
        let mut it = line.rsplitn(3, ' ');
        let (Some(nn), Some(bb), Some(stack)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        let (Ok(nn), Ok(bb)) = (nn.parse::<u64>(), bb.parse::<u64>()) else {
            continue;
        };
        let delta = (nn as i64).saturating_sub(bb as i64);
        max = max.max(delta.unsigned_abs());
        rows.push((
            stack.split(';').collect(),
            nn,
            if vanished { -delta } else { delta },
        ));
    }
    let mut tree = FlameTree::new();
    let mut palette: HashMap<[u8; 3], u32> = HashMap::new();
    let mut colour_of = |x: &mut DiffData, rgb: [u8; 3]| -> u32 {
        *palette.entry(rgb).or_insert_with(|| {
            x.palette
                .push(format!("rgb({},{},{})", rgb[0], rgb[1], rgb[2]));
            x.palette.len() as u32 - 1
        })
    };
    let grey = colour_of(&mut x, frame_colour(0, max));
    for (frames, samples, delta) in rows {
        // A stack NEW does not have is not drawn (no width), as in inferno's graph.
        if samples == 0 {
            continue;
        }
        let path: Vec<u32> = frames
            .iter()
            .map(|name| match index.get(*name) {
                Some(&i) => i,
                None => {
                    let i = d.functions.name.len() as u32;
                    index.insert((*name).to_owned(), i);
                    push_function(&mut d, &mut x, name, None);
                    i
                }
            })
            .collect();
        let leaf = tree.add(TOP, path, samples);
        let c = colour_of(&mut x, frame_colour(delta, max));
        tree.colour(leaf, c);
    }
    tree.write(&d.functions.name, Some(grey), &mut d.flame);
    // Totals per function: the NEW samples of the stacks through it, each stack once.
    let mut total = vec![0u64; d.functions.name.len()];
    let mut seen = Vec::new();
    for line in n {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let count: u64 = count.parse().unwrap_or(0);
        seen.clear();
        seen.extend(stack.split(';').filter_map(|name| index.get(name).copied()));
        seen.sort_unstable();
        seen.dedup();
        for &i in &seen {
            total[i as usize] += count;
        }
    }
    d.functions.total = total;
    let count = |v: Verdict| diff.entries.iter().filter(|e| e.verdict == v).count();
    let scale = if b_is_empty { "sample count" } else { "share" };
    x.head = DiffHead {
        granularity: match diff.granularity {
            Granularity::Function => "function",
            Granularity::AddressRange => "address-range",
        }
        .to_owned(),
        base: diff.base.profiles.clone(),
        new: diff.new.profiles.clone(),
        base_samples: diff.base.samples,
        new_samples: diff.new.samples,
        model: match diff.model {
            Model::Sampling => "sampling",
            Model::RunToRun => "run-to-run",
        }
        .to_owned(),
        dispersion: diff.dispersion,
        jitter: diff.jitter,
        level: diff.level,
        correction: diff.correction.to_owned(),
        min_samples: diff.min_samples,
        tested: diff.tested,
        changes: diff.changes,
        noise: count(Verdict::WithinNoise),
        too_few: count(Verdict::TooFewSamples),
        normalized: diff.normalized,
        frames_tested: tested.tested,
        frames_changed: tested.changes,
        colours: if base.is_empty() && new.is_empty() {
            "no executable: compared per address range, and there are no stacks to draw".to_owned()
        } else if vanished {
            "NEW has no samples: the shape of BASE, every frame blue (samples that went away)"
                .to_owned()
        } else {
            format!(
                "the shape of NEW; red = a larger {scale} than in BASE, blue = smaller, only where \
                 the frame's stack is a change ({} of {} stacks tested); grey = within noise, too \
                 few samples, or a caller without samples of its own",
                tested.changes, tested.tested
            )
        },
    };
    d.meta = Meta {
        program: program.to_owned(),
        profiles: diff
            .base
            .profiles
            .iter()
            .chain(&diff.new.profiles)
            .cloned()
            .collect(),
        rate: diff.hz,
        samples: d
            .flame
            .v
            .iter()
            .zip(&d.flame.parent)
            .filter(|(_, p)| **p == 0)
            .map(|(v, _)| v)
            .sum(),
        stacks: new
            .first()
            .or(base.first())
            .map_or("estimated", |l| match l.stacks.source {
                StackSource::Exact => "exact",
                StackSource::Estimated => "estimated",
            }),
        has_calls: base.iter().chain(new).any(|l| l.analysis.has_arcs),
        notes: base
            .iter()
            .chain(new)
            .flat_map(|l| l.notes.iter().cloned())
            .collect(),
        ..Meta::default()
    };
    d.meta.notes.dedup();
    d.diff = Some(x);
    d
}

/// The graph's name of each function the comparison names otherwise, so that a row and its
/// frames are one function: with estimated stacks `gmon diff` tells same-named functions (static
/// functions of several files) apart as `name [#2]`, in address order, and the graph by file,
/// `name [util.c]`. Both number the gprof engine's functions in the same order.
fn graph_names<'a>(ls: impl Iterator<Item = &'a Loaded>) -> HashMap<String, String> {
    let mut names = HashMap::new();
    for l in ls.filter(|l| l.stacks.source == StackSource::Estimated) {
        let counts = function_counts(&l.analysis, "");
        for (i, (name, ..)) in counts.entries.iter().enumerate() {
            let frame = frame_name(&l.graph, Frame::Function(NodeId(i)));
            if &frame != name {
                names.entry(name.clone()).or_insert(frame);
            }
        }
    }
    names
}

/// A function row: an entry of the comparison, or (`None`) a frame of the graph that is none
/// (a caller without samples of its own).
pub(super) fn push_function(d: &mut ReportData, x: &mut DiffData, name: &str, e: Option<&Entry>) {
    let f = &mut d.functions;
    f.name.push(name.to_owned());
    f.file.push(-1);
    f.line.push(0);
    f.addr
        .push(e.map_or_else(String::new, |e| format!("{:#x}", e.address)));
    f.self_samples
        .push(e.map_or(0, |e| e.new.self_samples.round() as u64));
    f.calls.push(e.map_or(-1, |e| e.new.calls as i64));
    f.rec.push(0);
    let c = &mut x.functions;
    let num = |get: fn(&Entry) -> f64| e.map_or(0.0, get);
    c.sb.push(num(|e| e.share_base));
    c.sn.push(num(|e| e.share_new));
    c.ds.push(num(|e| e.delta_share));
    c.lo.push(num(|e| e.delta_share_low));
    c.hi.push(num(|e| e.delta_share_high));
    c.bs.push(num(|e| e.base.self_samples));
    c.ns.push(num(|e| e.new.self_samples));
    c.p.push(e.map_or(-1.0, |e| e.p_adjusted.unwrap_or(-1.0)));
    c.cb.push(e.map_or(0, |e| e.base.calls));
    c.cn.push(e.map_or(0, |e| e.new.calls));
    c.cc.push(e.map_or(0, |e| u8::from(e.calls_changed)));
    c.vd.push(e.map_or(-1, |e| match e.verdict {
        Verdict::Change => 0,
        Verdict::WithinNoise => 1,
        Verdict::TooFewSamples => 2,
    }));
    c.st.push(e.map_or("", |e| match e.status {
        Status::Both => "both",
        Status::Added => "added",
        Status::Removed => "removed",
    }));
}
