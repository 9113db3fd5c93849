//! From the view model to a callgrind [`Profile`] (spec/stacks.md §13): self costs at the
//! sampled instructions, calls with the exact `-pg` counts and their inclusive costs.

use std::collections::{BTreeMap, BTreeSet};

use super::format::{Call, Cost, Function, Position, Profile};
use crate::model::{Frame, FunctionInfo, Loaded, NodeId, StackSource, split_in_proportion};

/// Where the `calls=` counts of a profile come from, which its header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallSource {
    /// Every count is an exact `-pg` arc count.
    Arcs,
    /// No arc was recorded: each count is the number of sampled stacks holding the call.
    Stacks,
    /// Exact arc counts where the executable has arcs, sampled stacks elsewhere (calls into
    /// and inside shared objects, which `-pg` does not count).
    Both,
}

/// The callgrind profile of `l`; `command` is what the header's `cmd:` says (the inputs).
pub fn callgrind_from(l: &Loaded, command: &str) -> (Profile, CallSource) {
    let exe = l.executable.path.display().to_string();
    let mut functions: Vec<Function> = l
        .graph
        .nodes()
        .iter()
        .enumerate()
        .map(|(k, node)| {
            let info = l.functions.get(k);
            // A shared object's function is at its address in that object.
            let (object, address) = match info.and_then(|f| f.object.as_ref()) {
                Some((path, start)) => (path.clone(), *start),
                None => (exe.clone(), info.and_then(|f| f.address).unwrap_or(0)),
            };
            let entry = Position {
                address,
                line: info.map_or(0, |f| f.start_line),
            };
            Function {
                name: node.name.clone(),
                object,
                file: info.and_then(|f| f.file.clone()).unwrap_or_default(),
                entry,
                costs: Vec::new(),
                calls: Vec::new(),
            }
        })
        .collect();
    let mut comments = Vec::new();
    let source = match l.stacks.source {
        StackSource::Estimated => {
            histogram_costs(l, &mut functions);
            comments.push(
                "costs: histogram samples at the sampled instructions (bins), each \
                 function's total as gprof credits it, in whole samples"
                    .to_owned(),
            );
            arc_calls(l, &mut functions);
            comments.push(
                "calls: exact -pg arc counts; inclusive costs: gprof's time propagated along \
                 each arc (self + children), in whole samples"
                    .to_owned(),
            );
            CallSource::Arcs
        }
        StackSource::Exact => {
            let source = stack_calls(l, &mut functions);
            comments.push(
                "costs: the samples of the exact sampled stacks, at their sampled program \
                 counters (source lines from each object's DWARF, or its debug file's)"
                    .to_owned(),
            );
            comments.push(match source {
                CallSource::Stacks => "calls: no -pg arcs were recorded; each count is the \
                                       number of sampled stacks holding the call, not a \
                                       number of calls; inclusive costs from the sampled \
                                       stacks"
                    .to_owned(),
                CallSource::Arcs => "calls: exact -pg arc counts; inclusive costs from the \
                                     sampled stacks"
                    .to_owned(),
                CallSource::Both => "calls: exact -pg arc counts inside the executable, \
                                     elsewhere the number of sampled stacks holding the call; \
                                     inclusive costs from the sampled stacks"
                    .to_owned(),
            });
            source
        }
    };
    name_files_from_costs(&mut functions);
    let mut profile = Profile {
        command: command.to_owned(),
        comments,
        event: "Samples".to_owned(),
        event_long: match l.prof_rate {
            0 => "samples".to_owned(),
            hz => format!("samples at {hz} Hz ({} s each)", 1.0 / f64::from(hz)),
        },
        functions,
    };
    let drawn = profile.total();
    profile.comments.push(crate::model::drawn_samples(l, drawn));
    (profile, source)
}

/// Estimated stacks: each function's self samples (the graph's, gprof's credit in whole
/// samples) spread over the histogram bins that start inside it, in proportion to their counts,
/// each at its bin's first address and source line.
fn histogram_costs(l: &Loaded, functions: &mut [Function]) {
    let symtab = &l.analysis.symtab;
    let node_of = node_of_symbol(l);
    // Per node: (bin address, count).
    let mut bins: BTreeMap<usize, Vec<(u64, u64)>> = BTreeMap::new();
    for r in &l.analysis.hist.records {
        let n = r.bins.len() as u128;
        let span = u128::from(r.high_pc.saturating_sub(r.low_pc));
        r.bins.for_each_nonzero(|i, count| {
            let offset = u64::try_from(span * i as u128 / n.max(1)).unwrap_or(0);
            let addr = r.low_pc.saturating_add(offset);
            if let Some(k) = symtab.lookup(addr).and_then(|s| node_of.get(&s)) {
                bins.entry(*k).or_default().push((addr, count));
            }
        });
    }
    for (k, node) in l.graph.nodes().iter().enumerate() {
        let Some(f) = functions.get_mut(k) else {
            continue;
        };
        if node.self_samples == 0 {
            continue;
        }
        let info = l.functions.get(k);
        let mine = bins.remove(&k).unwrap_or_default();
        if mine.is_empty() {
            // Its samples came from bins that start in the function before it.
            f.costs.push(Cost {
                position: f.entry,
                file: None,
                samples: node.self_samples,
            });
            continue;
        }
        let weights: Vec<u64> = mine.iter().map(|&(_, c)| c).collect();
        for (&(addr, _), samples) in mine
            .iter()
            .zip(split_in_proportion(node.self_samples, &weights))
        {
            if samples == 0 {
                continue;
            }
            f.costs.push(cost_at(info, f.entry, addr, samples));
        }
    }
}

/// Estimated stacks: every arc with its exact count, its inclusive cost gprof's propagated time
/// (`time + child time` of the arc), called from the caller's entry. A caller's inclusive costs
/// are whole samples that add up to its rounded total ([`split_in_proportion`]), so a root's
/// inclusive cost is never more than the profile's samples (rounding each arc on its own made
/// `main` 177 of 175 samples).
fn arc_calls(l: &Loaded, functions: &mut [Function]) {
    let node_of = node_of_symbol(l);
    let mut calls: BTreeMap<usize, BTreeMap<usize, (u64, f64)>> = BTreeMap::new();
    for arc in l.analysis.arcs() {
        let (Some(&p), Some(&c)) = (node_of.get(&arc.parent), node_of.get(&arc.child)) else {
            continue;
        };
        let slot = calls.entry(p).or_default().entry(c).or_insert((0, 0.0));
        slot.0 = slot.0.saturating_add(arc.count);
        let ticks = arc.time_ticks + arc.child_ticks;
        if ticks.is_finite() && ticks > 0.0 {
            slot.1 += ticks;
        }
    }
    for (p, callees) in calls {
        let Some(caller) = functions.get_mut(p) else {
            continue;
        };
        let total: f64 = callees.values().map(|&(_, t)| t).sum();
        // Millionths of a tick keep the proportions; the rounded total is what is split.
        let weights: Vec<u64> = callees
            .values()
            .map(|&(_, t)| (t * 1e6).round() as u64)
            .collect();
        let whole = split_in_proportion(total.round() as u64, &weights);
        for ((&c, &(count, _)), inclusive) in callees.iter().zip(whole) {
            caller.calls.push(Call {
                callee: c,
                count,
                site: caller.entry,
                inclusive,
            });
        }
    }
}

/// Exact stacks: self costs at each stack's leaf, and a call for every caller → callee pair on
/// a stack, its inclusive cost the samples of the stacks holding it (once per stack, however
/// often recursion repeats it) and its count the arc's when `-pg` counted one, else that
/// number of stacks. Arcs on no stack are calls with no inclusive cost.
fn stack_calls(l: &Loaded, functions: &mut [Function]) -> CallSource {
    let mut on_stacks: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    // Per leaf function: its samples.
    let mut leaves: BTreeMap<usize, u64> = BTreeMap::new();
    for s in &l.stacks.stacks {
        let ids: Vec<usize> = s
            .frames
            .iter()
            .filter_map(|f| match f {
                Frame::Function(NodeId(k)) => Some(*k),
                Frame::Cycle(_) => None,
            })
            .collect();
        if let Some(&leaf) = ids.last() {
            let slot = leaves.entry(leaf).or_insert(0);
            *slot = slot.saturating_add(s.samples);
        }
        let pairs: BTreeSet<(usize, usize)> = ids.windows(2).map(|w| (w[0], w[1])).collect();
        for pair in pairs {
            let slot = on_stacks.entry(pair).or_insert(0);
            *slot = slot.saturating_add(s.samples);
        }
    }
    sampled_costs(l, &leaves, functions);
    // Each pair's call site: the one most of its stacks called from.
    let mut sites: BTreeMap<(usize, usize), (u64, Position)> = BTreeMap::new();
    for c in &l.stacks.call_sites {
        let at = Position {
            address: c.address,
            line: c.line,
        };
        let slot = sites.entry((c.caller.0, c.callee.0)).or_insert((0, at));
        if c.samples > slot.0 {
            *slot = (c.samples, at);
        }
    }
    let arcs: BTreeMap<(usize, usize), u64> = l
        .graph
        .edges()
        .filter(|e| e.calls > 0)
        .map(|e| ((e.caller.0, e.callee.0), e.calls))
        .collect();
    let mut pairs: BTreeMap<(usize, usize), (u64, u64)> = BTreeMap::new();
    for (&pair, &samples) in &on_stacks {
        pairs.insert(pair, (arcs.get(&pair).copied().unwrap_or(samples), samples));
    }
    for (&pair, &count) in &arcs {
        pairs.entry(pair).or_insert((count, 0));
    }
    for ((p, c), (count, inclusive)) in pairs {
        let Some(caller) = functions.get_mut(p) else {
            continue;
        };
        let site = sites.get(&(p, c)).map_or(caller.entry, |&(_, at)| at);
        caller.calls.push(Call {
            callee: c,
            count,
            site,
            inclusive,
        });
    }
    match (
        arcs.is_empty(),
        on_stacks.keys().all(|p| arcs.contains_key(p)),
    ) {
        (true, _) => CallSource::Stacks,
        (false, true) => CallSource::Arcs,
        (false, false) => CallSource::Both,
    }
}

/// Graph node of each symbol of the analysis: node k is the k-th function (see
/// `graph_from_analysis`).
fn node_of_symbol(l: &Loaded) -> BTreeMap<usize, usize> {
    l.analysis
        .functions()
        .enumerate()
        .map(|(k, f)| (f.index, k))
        .collect()
}

/// A cost of `samples` at `addr` of a function of the executable, on the source line of the
/// last `gprof -l` line entry at or before it (spec/stacks.md §7), else the entry's line.
fn cost_at(info: Option<&FunctionInfo>, entry: Position, addr: u64, samples: u64) -> Cost {
    let line = info.and_then(|i| {
        i.bins
            .iter()
            .filter(|b| b.address <= addr)
            .max_by_key(|b| b.address)
    });
    Cost {
        position: Position {
            address: addr,
            line: line.map_or(entry.line, |b| b.line),
        },
        file: line.and_then(|b| b.file.clone()),
        samples,
    }
}

/// Exact stacks: each leaf function's samples at the program counters they were sampled at
/// (with their source lines in the executable); what no sampled address accounts for (a stack
/// of depth 0) at the function's entry, so that the costs add up to the stacks' samples.
fn sampled_costs(l: &Loaded, leaves: &BTreeMap<usize, u64>, functions: &mut [Function]) {
    let mut placed: BTreeMap<usize, u64> = BTreeMap::new();
    for a in &l.stacks.sampled {
        let k = a.function.0;
        let Some(f) = functions.get_mut(k) else {
            continue;
        };
        f.costs.push(Cost {
            position: Position {
                address: a.address,
                line: a.line,
            },
            file: a.file.clone(),
            samples: a.samples,
        });
        let slot = placed.entry(k).or_insert(0);
        *slot = slot.saturating_add(a.samples);
    }
    for (&k, &samples) in leaves {
        let rest = samples.saturating_sub(placed.get(&k).copied().unwrap_or(0));
        if rest > 0
            && let Some(f) = functions.get_mut(k)
        {
            f.costs.push(Cost {
                position: f.entry,
                file: None,
                samples: rest,
            });
        }
    }
}

/// A function whose symbol names no source file (a shared object's: only its DWARF lines
/// were read) takes the file most of its samples' lines are in, so that callgrind_annotate
/// and KCachegrind show `file:function` and its annotated source instead of `???`.
fn name_files_from_costs(functions: &mut [Function]) {
    for f in functions.iter_mut().filter(|f| f.file.is_empty()) {
        let mut by_file: BTreeMap<&str, u64> = BTreeMap::new();
        for c in &f.costs {
            if let Some(file) = &c.file {
                *by_file.entry(file.as_str()).or_insert(0) += c.samples;
            }
        }
        let Some(file) = by_file
            .into_iter()
            .max_by_key(|&(_, n)| n)
            .map(|(file, _)| file.to_owned())
        else {
            continue;
        };
        // Costs in that file no longer say it (`fi=` is for lines of another file).
        for c in &mut f.costs {
            if c.file.as_deref() == Some(file.as_str()) {
                c.file = None;
            }
        }
        f.file = file;
    }
}
