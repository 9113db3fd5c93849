//! The differential report of two process trees (`gmon report --diff` of `gmon record` runs
//! of a command that starts other programs; spec/report.md §6). Each executable both sides
//! ran is reported as `gmon report --diff` reports one program, from the comparison `gmon diff`
//! made of the pair (spec/diff.md §11: paired by path, build id or file name, one correction
//! over every pair's functions and over every pair's frames), and the reports are joined as a process tree's are: a root frame
//! per executable, the table's rows saying which executable each function is in. An
//! executable only one side ran is drawn with that side's samples, all red (NEW only) or all
//! blue (BASE only), and its functions are rows that say so: nothing it sampled is left out.

use std::collections::HashMap;

use crate::diff::{
    ASSUMED_DISPERSION, FramePart, MatchedBy, NoiseOptions, OneSided, TreeDiff, Verdict,
    frame_colour, frame_verdicts_of_parts,
};
use crate::flame::folded_lines;
use crate::model::Loaded;

use super::collect::DATA_VERSION;
use super::data::{DiffData, DiffExecutable, DiffHead, Meta, ReportData};
use super::diff::{DiffFrames, build_diff_report_of, frame_noise, push_function};
use super::flame::{FlameTree, TOP};

/// The page's data for two process trees: `tree` as `gmon diff` compared them, with each
/// pair's models (BASE's, NEW's, in `tree.executables`' order) and the models of the
/// executables only one side ran (in `tree.only_base`'s and `tree.only_new`'s order).
pub fn build_tree_diff_report(
    tree: &TreeDiff,
    models: &[(Vec<Loaded>, Vec<Loaded>)],
    only_base: &[Vec<Loaded>],
    only_new: &[Vec<Loaded>],
) -> ReportData {
    let mut parts: Vec<(ReportData, DiffExecutable)> = Vec::new();
    // Every executable's frames tested together, as its functions were (spec/diff.md §11).
    let frames: Vec<DiffFrames> = models.iter().map(|(b, n)| DiffFrames::of(b, n)).collect();
    let stacks: Vec<FramePart> = frames.iter().map(|f| f.part.clone()).collect();
    let noise = tree
        .executables
        .first()
        .map_or_else(NoiseOptions::default, |e| frame_noise(&e.diff));
    let share = frames.iter().all(DiffFrames::share);
    let tested = frame_verdicts_of_parts(&stacks, share, &noise);
    for (((e, (b, n)), f), t) in tree
        .executables
        .iter()
        .zip(models)
        .zip(&frames)
        .zip(&tested)
    {
        let part = build_diff_report_of(&e.diff, b, n, &e.new_executable, f, t);
        let count = |v: Verdict| e.diff.entries.iter().filter(|x| x.verdict == v).count();
        let exe = DiffExecutable {
            root: e.root.clone(),
            base_exe: e.base_executable.clone(),
            new_exe: e.new_executable.clone(),
            matched_by: match e.matched_by {
                MatchedBy::Path => "path",
                MatchedBy::BuildId => "build-id",
                MatchedBy::FileName => "file-name",
            }
            .to_owned(),
            base_samples: e.diff.base.samples,
            new_samples: e.diff.new.samples,
            level: e.diff.level,
            tested: e.diff.tested,
            changes: e.diff.changes,
            noise: count(Verdict::WithinNoise),
            too_few: count(Verdict::TooFewSamples),
            f: 0,
        };
        parts.push((part, exe));
    }
    for (list, models, added) in [
        (&tree.only_base, only_base, false),
        (&tree.only_new, only_new, true),
    ] {
        for (o, l) in list.iter().zip(models) {
            parts.push(one_sided(o, l, added));
        }
    }
    // The roots in name order, as the flame graph orders its children.
    parts.sort_by(|a, b| a.1.root.cmp(&b.1.root));
    join(tree, parts)
}

/// The part of an executable only one side ran: its stacks on that side (its runs together),
/// every frame in the colour of samples that came (red) or went (blue), every function a row
/// with its samples and share of the executable's, not tested.
fn one_sided(o: &OneSided, runs: &[Loaded], added: bool) -> (ReportData, DiffExecutable) {
    let mut d = ReportData::default();
    let mut x = DiffData::default();
    let lines: Vec<String> = runs
        .iter()
        .flat_map(|l| folded_lines(&l.stacks, &l.graph))
        .collect();
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut tree = FlameTree::new();
    let mut own: Vec<f64> = Vec::new();
    let mut samples = 0u64;
    for line in &lines {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.parse::<u64>() else {
            continue;
        };
        samples = samples.saturating_add(count);
        let path: Vec<u32> = stack
            .split(';')
            .map(|name| {
                *index.entry(name.to_owned()).or_insert_with(|| {
                    push_function(&mut d, &mut x, name, None);
                    own.push(0.0);
                    d.functions.name.len() as u32 - 1
                })
            })
            .collect();
        if let Some(&leaf) = path.last() {
            own[leaf as usize] += count as f64;
        }
        tree.add(TOP, path, count);
    }
    x.palette
        .push(rgb(frame_colour(if added { 1 } else { -1 }, 1)));
    tree.write(&d.functions.name, Some(0), &mut d.flame);
    // Totals: the samples of the stacks through each function, each stack once.
    let mut total = vec![0u64; d.functions.name.len()];
    let mut seen: Vec<u32> = Vec::new();
    for line in &lines {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        seen.clear();
        seen.extend(stack.split(';').filter_map(|n| index.get(n).copied()));
        seen.sort_unstable();
        seen.dedup();
        for &i in &seen {
            total[i as usize] += count.parse::<u64>().unwrap_or(0);
        }
    }
    d.functions.total = total;
    let c = &mut x.functions;
    for (i, &s) in own.iter().enumerate() {
        let share = if samples > 0 { s / samples as f64 } else { 0.0 };
        d.functions.self_samples[i] = s.round() as u64;
        let (sb, sn) = if added { (0.0, share) } else { (share, 0.0) };
        (c.sb[i], c.sn[i], c.ds[i], c.lo[i], c.hi[i]) = (sb, sn, sn - sb, sn - sb, sn - sb);
        (c.bs[i], c.ns[i]) = if added { (0.0, s) } else { (s, 0.0) };
        c.st[i] = if added { "added" } else { "removed" };
    }
    d.meta.samples = samples;
    d.meta.rate = runs.first().map_or(0, |l| l.analysis.hz());
    d.meta.notes = runs.iter().flat_map(|l| l.notes.iter().cloned()).collect();
    d.meta.notes.dedup();
    d.diff = Some(x);
    let exe = DiffExecutable {
        root: o.root.clone(),
        base_exe: if added {
            String::new()
        } else {
            o.executable.clone()
        },
        new_exe: if added {
            o.executable.clone()
        } else {
            String::new()
        },
        base_samples: if added { 0 } else { samples },
        new_samples: if added { samples } else { 0 },
        ..DiffExecutable::default()
    };
    (d, exe)
}

fn rgb(c: [u8; 3]) -> String {
    format!("rgb({},{},{})", c[0], c[1], c[2])
}

/// The parts side by side: functions, verdicts and palettes in one table each, every part's
/// graph under a grey root frame named after its executable.
fn join(tree: &TreeDiff, parts: Vec<(ReportData, DiffExecutable)>) -> ReportData {
    let mut d = ReportData {
        v: DATA_VERSION,
        kind: "diff",
        ..ReportData::default()
    };
    let mut x = DiffData::default();
    let mut palette: HashMap<String, u32> = HashMap::new();
    let mut colour_of = |x: &mut DiffData, c: &str| -> u32 {
        *palette.entry(c.to_owned()).or_insert_with(|| {
            x.palette.push(c.to_owned());
            x.palette.len() as u32 - 1
        })
    };
    let grey = colour_of(&mut x, &rgb(frame_colour(0, 1)));
    let mut meta = Meta {
        program: format!("process tree of {} executables", parts.len()),
        rate: 0,
        stacks: "exact",
        ..Meta::default()
    };
    let mut head = DiffHead {
        granularity: "function".to_owned(),
        model: "sampling".to_owned(),
        level: tree.level,
        correction: "holm".to_owned(),
        ..DiffHead::default()
    };
    for (k, (part, mut exe)) in parts.into_iter().enumerate() {
        let Some(px) = part.diff else { continue };
        let offset = d.functions.name.len() as u32;
        d.functions.append(&part.functions, |_| -1, k as u32);
        x.functions.append(&px.functions);
        // The part's colours in the one palette.
        let remap: Vec<u32> = px.palette.iter().map(|c| colour_of(&mut x, c)).collect();
        // The root frame: a pseudo-function, grey (it is no function of the comparison).
        let samples: u64 = part
            .flame
            .v
            .iter()
            .zip(&part.flame.parent)
            .filter(|(_, p)| **p == 0)
            .map(|(v, _)| v)
            .sum();
        exe.f = d.functions.name.len() as u32;
        push_function(&mut d, &mut x, &exe.root, None);
        if let Some(t) = d.functions.total.last_mut() {
            *t = samples;
        }
        d.functions.exe.push(k as u32);
        d.flame.graft(exe.f, samples, &part.flame, offset);
        d.flame.c.push(grey);
        d.flame
            .c
            .extend(part.flame.c.iter().map(|&c| remap[c as usize]));
        // The header: sums over the pairs, and the model they share.
        let h = &px.head;
        if exe.matched_by.is_empty() {
            let side = if exe.new_exe.is_empty() {
                &mut head.base_samples
            } else {
                &mut head.new_samples
            };
            *side += samples;
        } else {
            head.model = h.model.clone();
            head.dispersion = h.dispersion;
            head.jitter = head.jitter.max(h.jitter);
            head.min_samples = h.min_samples;
            head.base_samples += h.base_samples;
            head.new_samples += h.new_samples;
            head.base.extend(h.base.iter().cloned());
            head.new.extend(h.new.iter().cloned());
            head.tested += h.tested;
            head.changes += h.changes;
            head.noise += h.noise;
            head.too_few += h.too_few;
            head.normalized |= h.normalized;
            head.frames_tested += h.frames_tested;
            head.frames_changed += h.frames_changed;
        }
        meta.profiles.extend(part.meta.profiles);
        if meta.rate == 0 {
            meta.rate = part.meta.rate;
        }
        meta.samples = meta.samples.saturating_add(samples);
        if part.meta.stacks == "estimated" {
            meta.stacks = "estimated";
        }
        meta.has_calls |= part.meta.has_calls;
        let mine = |s: String| format!("{}: {s}", exe.root);
        meta.notes.extend(part.meta.notes.into_iter().map(mine));
        x.tree.push(exe);
    }
    for o in tree.only_base.iter().chain(&tree.only_new) {
        meta.profiles.extend(o.profiles.iter().cloned());
    }
    for o in &tree.only_base {
        head.base.extend(o.profiles.iter().cloned());
    }
    for o in &tree.only_new {
        head.new.extend(o.profiles.iter().cloned());
    }
    if head.dispersion == 0.0 {
        // No pair compared: the model a pair would have run.
        head.dispersion = ASSUMED_DISPERSION;
    }
    head.colours = format!(
        "a root frame per executable, grey; under each, the shape of NEW: red = a larger share of \
         its executable's samples than in BASE, blue = smaller, only where the frame's stack is a \
         change ({} of {} stacks tested); grey = within noise, too few samples, or a caller \
         without samples of its own; an executable only one side ran: all red (only in NEW, its \
         samples) or all blue (only in BASE, drawn with BASE's samples), not tested",
        head.frames_changed, head.frames_tested
    );
    x.head = head;
    d.meta = meta;
    d.diff = Some(x);
    d
}
