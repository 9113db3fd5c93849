//! From the view model to the page's data: functions with their totals, the arcs with exact
//! call counts and the samples along them, the stacks merged into the flame tree, the hot
//! lines, and a header that says what was left out.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crate::flame::INLINED_MARK;
use crate::model::{
    Frame, Loaded, NodeId, StackFrame, StackSource, executable_inline_chains,
    profile_inline_chains, sidecar_beside, stacks_with_inline_frames,
};

use super::data::{RecordedExecutable, ReportData};
use super::flame::{FlameTree, TOP};
use super::when::utc_timestamp;

/// Layout version of [`ReportData`]; app.js checks it. Version 2 added `kind`, the process
/// tree and the differential report.
pub(super) const DATA_VERSION: u32 = 2;

/// What the report is made of besides the model.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// The profiles that were read (summed), as the user named them.
    pub profiles: Vec<PathBuf>,
}

/// Where a frame of the model went in the report: functions first, then one pseudo-function
/// per cycle (`<cycle N>`); the flame tree adds one per inlined function after them.
struct Index {
    /// Report index of each graph node, `None` when the node is not listed.
    of_node: Vec<Option<u32>>,
    /// Report index of each cycle number's `<cycle N>`.
    of_cycle: BTreeMap<u32, u32>,
}

impl Index {
    fn of(&self, f: Frame) -> Option<u32> {
        match f {
            Frame::Function(NodeId(n)) => self.of_node.get(n).copied().flatten(),
            Frame::Cycle(c) => self.of_cycle.get(&c).copied(),
        }
    }
}

/// The page's data for a loaded profile.
pub fn build_report(l: &Loaded, opts: &ReportOptions) -> ReportData {
    let mut d = ReportData {
        v: DATA_VERSION,
        kind: "profile",
        ..ReportData::default()
    };
    let nodes = l.graph.nodes();
    // Per node: calls and recursive calls, from the gprof analysis (same order as the graph's
    // first nodes: graph_from_analysis adds one node per analysed symbol).
    let mut calls = vec![(None::<u64>, 0u64); nodes.len()];
    let has_calls = l.analysis.has_arcs;
    for (slot, f) in calls.iter_mut().zip(l.analysis.functions()) {
        if has_calls {
            *slot = (Some(f.calls), f.self_calls);
        }
    }
    let totals = node_totals(l);
    // Functions with neither samples nor calls are left out (a 20,000-symbol program has
    // thousands); the header says how many.
    let mut of_node = vec![None; nodes.len()];
    let mut files: HashMap<String, i64> = HashMap::new();
    let mut left_out = 0usize;
    for (i, node) in nodes.iter().enumerate() {
        let (c, rec) = calls[i];
        let total = totals.node.get(i).copied().unwrap_or(0);
        let self_samples = totals.leaf.get(i).copied().unwrap_or(0);
        if self_samples == 0 && total == 0 && c.unwrap_or(0) == 0 && rec == 0 {
            left_out += 1;
            continue;
        }
        of_node[i] = Some(d.functions.name.len() as u32);
        let info = l.functions.get(i);
        let file = info
            .and_then(|f| f.file.as_deref())
            .map_or(-1, |f| file_index(&mut d.files, &mut files, f));
        d.functions.name.push(node.name.clone());
        d.functions.file.push(file);
        d.functions.line.push(info.map_or(0, |f| f.start_line));
        d.functions.addr.push(
            info.and_then(|f| f.address)
                .map_or_else(String::new, |a| format!("{a:#x}")),
        );
        d.functions.self_samples.push(self_samples);
        d.functions.total.push(total);
        d.functions.calls.push(c.map_or(-1, |c| c as i64));
        d.functions.rec.push(rec);
    }
    let mut of_cycle = BTreeMap::new();
    for (&number, &total) in &totals.cycle {
        let f = d.functions.push_pseudo(format!("<cycle {number}>"), total);
        of_cycle.insert(number, f);
    }
    let index = Index { of_node, of_cycle };
    add_arcs(l, &index, &totals.pairs, &mut d);
    add_flame(l, &index, &mut d);
    add_lines(l, &index, &mut files, &mut d);
    d.meta = meta(l, opts, has_calls, left_out);
    d
}

/// Samples per node, per cycle and per direct caller → callee pair of frames, each counted once
/// per stack however often the stack passes through it (recursion).
struct Totals {
    node: Vec<u64>,
    /// Samples of the stacks that end in the node: its self samples as the graphs draw them
    /// (exact stacks credit code in shared objects that no histogram covers).
    leaf: Vec<u64>,
    cycle: BTreeMap<u32, u64>,
    pairs: HashMap<(Frame, Frame), u64>,
}

fn node_totals(l: &Loaded) -> Totals {
    let mut t = Totals {
        node: vec![0; l.graph.nodes().len()],
        leaf: vec![0; l.graph.nodes().len()],
        cycle: BTreeMap::new(),
        pairs: HashMap::new(),
    };
    let mut seen: Vec<Frame> = Vec::new();
    let mut seen_pairs: Vec<(Frame, Frame)> = Vec::new();
    for s in &l.stacks.stacks {
        if let Some(Frame::Function(NodeId(n))) = s.frames.last()
            && let Some(x) = t.leaf.get_mut(*n)
        {
            *x = x.saturating_add(s.samples);
        }
        seen.clear();
        seen.extend(s.frames.iter().copied());
        seen.sort_unstable();
        seen.dedup();
        for &f in &seen {
            match f {
                Frame::Function(NodeId(n)) => {
                    if let Some(x) = t.node.get_mut(n) {
                        *x = x.saturating_add(s.samples);
                    }
                }
                Frame::Cycle(c) => {
                    let x = t.cycle.entry(c).or_insert(0);
                    *x = x.saturating_add(s.samples);
                }
            }
        }
        seen_pairs.clear();
        seen_pairs.extend(s.frames.windows(2).map(|w| (w[0], w[1])));
        seen_pairs.sort_unstable();
        seen_pairs.dedup();
        for &p in &seen_pairs {
            let x = t.pairs.entry(p).or_insert(0);
            *x = x.saturating_add(s.samples);
        }
    }
    t
}

fn file_index(files: &mut Vec<String>, index: &mut HashMap<String, i64>, name: &str) -> i64 {
    if let Some(&i) = index.get(name) {
        return i;
    }
    let i = files.len() as i64;
    files.push(name.to_owned());
    index.insert(name.to_owned(), i);
    i
}

/// The arcs: every counted arc (gprof's, exact counts), then the caller → callee pairs seen
/// only in stacks (a recorded run counts no calls), each with the samples along it.
fn add_arcs(l: &Loaded, index: &Index, pairs: &HashMap<(Frame, Frame), u64>, d: &mut ReportData) {
    let mut arcs: BTreeMap<(u32, u32), (i64, u64)> = BTreeMap::new();
    for e in l.graph.edges() {
        let from = index.of(Frame::Function(e.caller));
        let to = index.of(Frame::Function(e.callee));
        if let (Some(from), Some(to)) = (from, to) {
            let slot = arcs.entry((from, to)).or_insert((0, 0));
            slot.0 = slot.0.saturating_add(e.calls as i64);
        }
    }
    for (&(a, b), &samples) in pairs {
        if let (Some(from), Some(to)) = (index.of(a), index.of(b)) {
            let slot = arcs.entry((from, to)).or_insert((-1, 0));
            slot.1 = slot.1.saturating_add(samples);
        }
    }
    for ((from, to), (calls, samples)) in arcs {
        d.arcs.from.push(from);
        d.arcs.to.push(to);
        d.arcs.calls.push(calls);
        d.arcs.samples.push(samples);
    }
}

/// The stacks merged into a tree, with the frames of inlined functions above the function
/// that holds their code (spec/report.md §2). Each inlined function is a pseudo-function
/// `NAME [inlined]`, as `gmon flame` names it, whose total is the samples of the stacks through
/// it; its self samples stay with the function that holds the code, as the table counts them.
fn add_flame(l: &Loaded, index: &Index, d: &mut ReportData) {
    let chains = profile_inline_chains(l);
    let mut tree = FlameTree::new();
    let mut inlined: HashMap<String, (u32, u64)> = HashMap::new();
    let mut path: Vec<u32> = Vec::new();
    // The inlined functions already counted in this stack's total (once however often on it).
    let mut counted: Vec<u32> = Vec::new();
    for (frames, samples) in stacks_with_inline_frames(l, &chains) {
        path.clear();
        counted.clear();
        for frame in &frames {
            match frame {
                StackFrame::Called(f) => path.extend(index.of(*f)),
                StackFrame::Inlined(name) => {
                    let (f, total) = inlined.entry(name.clone()).or_insert_with(|| {
                        (
                            d.functions.push_pseudo(format!("{name}{INLINED_MARK}"), 0),
                            0,
                        )
                    });
                    path.push(*f);
                    if !counted.contains(f) {
                        counted.push(*f);
                        *total = total.saturating_add(samples);
                    }
                }
            }
        }
        tree.add(TOP, path.iter().copied(), samples);
    }
    for (f, total) in inlined.into_values() {
        d.functions.total[f as usize] = total;
    }
    tree.write(&d.functions.name, None, &mut d.flame);
}

/// The source lines with samples, per function, most samples first; lines of one function
/// at several addresses are added up. A line of inlined code says where it was inlined from
/// and into (spec/report.md §2, `lines`).
fn add_lines(l: &Loaded, index: &Index, files: &mut HashMap<String, i64>, d: &mut ReportData) {
    let listed = |n: usize| index.of(Frame::Function(NodeId(n))).is_some();
    let addresses = l
        .functions
        .iter()
        .enumerate()
        .filter(|&(n, _)| listed(n))
        .flat_map(|(_, info)| info.bins.iter().map(|b| b.address))
        .collect::<Vec<u64>>();
    let chains = match addresses.is_empty() {
        true => BTreeMap::new(),
        false => executable_inline_chains(l, addresses),
    };
    for (n, info) in l.functions.iter().enumerate() {
        let Some(f) = index.of(Frame::Function(NodeId(n))) else {
            continue;
        };
        let holder = l
            .graph
            .node(NodeId(n))
            .map_or("", |node| node.name.as_str());
        // (file, line) -> (samples, inline chain in words -> samples).
        type Line = (u64, BTreeMap<String, u64>);
        let mut by_line: BTreeMap<(Option<&str>, u32), Line> = BTreeMap::new();
        for b in &info.bins {
            let file = b.file.as_deref().or(info.file.as_deref());
            let slot = by_line.entry((file, b.line)).or_default();
            slot.0 += b.count;
            if let Some(c) = chains.get(&b.address) {
                *slot.1.entry(c.describe(holder)).or_insert(0) += b.count;
            }
        }
        let mut lines: Vec<_> = by_line.into_iter().filter(|(k, _)| k.1 != 0).collect();
        lines.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
        for ((file, line), (weight, inlined)) in lines {
            let file = file.map_or(-1, |name| file_index(&mut d.files, files, name));
            d.lines.f.push(f);
            d.lines.file.push(file);
            d.lines.line.push(line);
            // Bins are weighted in billionths of a tick (gprof -l's fractional credit).
            d.lines.samples.push((weight as f64 / 1e7).round() / 100.0);
            // The same line inlined at several places: each chain, the heaviest first.
            let mut inlined: Vec<_> = inlined.into_iter().collect();
            inlined.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let words: Vec<String> = inlined.into_iter().map(|(w, _)| w).collect();
            d.lines.inlined.push(words.join("; "));
        }
    }
    if d.lines.inlined.iter().all(String::is_empty) {
        d.lines.inlined.clear();
    }
}

fn meta(l: &Loaded, opts: &ReportOptions, has_calls: bool, left_out: usize) -> super::data::Meta {
    let mut dropped = Vec::new();
    if left_out > 0 {
        dropped.push(format!(
            "{left_out} function{} with neither samples nor calls {} not listed",
            if left_out == 1 { "" } else { "s" },
            if left_out == 1 { "is" } else { "are" },
        ));
    }
    if l.stacks.outside_samples > 0 {
        dropped.push(format!(
            "{} samples fell outside every function and are in no stack",
            l.stacks.outside_samples
        ));
    }
    let mut processes = Vec::new();
    for p in &opts.profiles {
        let Ok(Some(side)) = sidecar_beside(p) else {
            continue;
        };
        if side.counters.dropped > 0 {
            dropped.push(format!(
                "{}: the runtime dropped {} samples (a full table or a busy handler)",
                p.display(),
                side.counters.dropped
            ));
        }
        if side.counters.truncated_stacks > 0 {
            dropped.push(format!(
                "{}: {} stacks were cut short (deeper than the runtime keeps)",
                p.display(),
                side.counters.truncated_stacks
            ));
        }
        processes.push(RecordedExecutable {
            exe: side
                .main_object()
                .map(|m| m.path.clone())
                .unwrap_or_default(),
            profile: p.display().to_string(),
            pid: side.pid,
            processes: side.process_count().processes,
            threads: side.process_count().threads,
            samples: side.counters.samples,
            dropped: side.counters.dropped,
            clock: side
                .clock
                .map(|c| c.clock.name().to_owned())
                .unwrap_or_default(),
        });
    }
    let when = opts
        .profiles
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok()?.modified().ok())
        .max()
        .and_then(utc_timestamp);
    super::data::Meta {
        program: l.executable.path.display().to_string(),
        build_id: l.executable.build_id.as_ref().map(|b| b.to_string()),
        profiles: opts
            .profiles
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        when,
        rate: l.prof_rate,
        samples: l.stacks.total_samples(),
        outside: l.stacks.outside_samples,
        stacks: match l.stacks.source {
            StackSource::Exact => "exact",
            StackSource::Estimated => "estimated",
        },
        has_calls,
        dropped,
        notes: l.notes.clone(),
        processes,
        tree: Vec::new(),
    }
}
