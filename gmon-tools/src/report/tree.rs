//! The report of a process tree (spec/stacks.md §12, spec/report.md §5): the profiles of each
//! executable a recorded command ran are loaded with that executable and reported as one
//! program would be; the reports are then put side by side, each executable's stacks under a
//! root frame named after it, and the header lists the executables with their processes and
//! samples.

use std::collections::HashMap;

use crate::flame::ExecutableGroup;
use crate::model::Loaded;

use super::collect::{DATA_VERSION, ReportOptions, build_report};
use super::data::{Meta, RecordedExecutable, ReportData, TreeExecutable};

/// One report of every group (each loaded with its own executable), a root frame each.
pub fn build_tree_report(groups: &[(ExecutableGroup, Loaded)]) -> ReportData {
    let mut d = ReportData {
        v: DATA_VERSION,
        kind: "profile",
        ..ReportData::default()
    };
    let mut files: HashMap<String, i64> = HashMap::new();
    let mut metas = Vec::new();
    // The roots in name order, as the flame graph orders its children.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&a, &b| groups[a].0.root.cmp(&groups[b].0.root));
    for (k, &gi) in order.iter().enumerate() {
        let (g, l) = &groups[gi];
        let part = build_report(
            l,
            &ReportOptions {
                profiles: g.profiles.clone(),
            },
        );
        let offset = d.functions.name.len() as u32;
        let exe = k as u32;
        // The part's functions, their files put into the one table.
        let fmap: Vec<i64> = part
            .files
            .iter()
            .map(|name| {
                *files.entry(name.clone()).or_insert_with(|| {
                    d.files.push(name.clone());
                    d.files.len() as i64 - 1
                })
            })
            .collect();
        let file = |i: i64| if i < 0 { -1 } else { fmap[i as usize] };
        d.functions.append(&part.functions, file, exe);
        d.arcs
            .from
            .extend(part.arcs.from.iter().map(|&i| i + offset));
        d.arcs.to.extend(part.arcs.to.iter().map(|&i| i + offset));
        d.arcs.calls.extend(&part.arcs.calls);
        d.arcs.samples.extend(&part.arcs.samples);
        d.lines.f.extend(part.lines.f.iter().map(|&i| i + offset));
        d.lines
            .file
            .extend(part.lines.file.iter().map(|&i| file(i)));
        d.lines.line.extend(&part.lines.line);
        d.lines.samples.extend(&part.lines.samples);
        // The root frame: a pseudo-function, as `<cycle N>` is one.
        let samples = part.meta.samples;
        let root_f = d.functions.push_pseudo(g.root.clone(), samples);
        d.functions.exe.push(exe);
        d.flame.graft(root_f, samples, &part.flame, offset);
        let sum = |f: fn(&RecordedExecutable) -> u64| {
            part.meta
                .processes
                .iter()
                .map(f)
                .fold(0u64, u64::saturating_add)
        };
        d.meta.tree.push(TreeExecutable {
            root: g.root.clone(),
            exe: g.executable.display().to_string(),
            profiles: g.profiles.iter().map(|p| p.display().to_string()).collect(),
            processes: sum(|p| p.processes),
            threads: sum(|p| p.threads),
            samples,
            f: root_f,
        });
        metas.push(part.meta);
    }
    let tree = std::mem::take(&mut d.meta.tree);
    d.meta = joined(metas, tree);
    d
}

/// The header of the whole tree: sums, and every part's notes under its executable's name.
fn joined(metas: Vec<Meta>, tree: Vec<TreeExecutable>) -> Meta {
    let mut m = Meta {
        program: format!("process tree of {} executables", tree.len()),
        stacks: "exact",
        ..Meta::default()
    };
    for (part, t) in metas.into_iter().zip(&tree) {
        m.profiles.extend(part.profiles);
        m.when = m.when.max(part.when);
        if m.rate == 0 {
            m.rate = part.rate;
        }
        m.samples = m.samples.saturating_add(part.samples);
        m.outside = m.outside.saturating_add(part.outside);
        if part.stacks != "exact" {
            m.stacks = part.stacks;
        }
        m.has_calls |= part.has_calls;
        let mine = |s: String| format!("{}: {s}", t.root);
        m.dropped.extend(part.dropped.into_iter().map(mine));
        m.notes.extend(part.notes.into_iter().map(mine));
        m.processes.extend(part.processes);
    }
    m.tree = tree;
    m
}
