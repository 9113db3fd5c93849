//! Stack estimation: spreading each function's self samples over its callers in proportion to
//! call counts, up to the roots, with cycles collapsed. The algorithm is specified in
//! `spec/stacks.md`; this file follows it step by step.

use std::collections::BTreeMap;

use super::addresses::{CallSite, PlacedStack, SampledAddress};
use super::graph::{GraphError, NodeId, WeightedCallGraph};

/// One frame of a stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Frame {
    /// A function of the graph.
    Function(NodeId),
    /// A collapsed cycle, drawn as `<cycle N>`; its members are the frames above it.
    Cycle(u32),
}

/// A stack and the samples it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stack {
    /// Frames from the root (outermost caller) to the leaf (where the samples fell).
    pub frames: Vec<Frame>,
    /// Number of histogram samples.
    pub samples: u64,
}

/// Where a set of stacks came from, which the outputs state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackSource {
    /// Estimated from call counts (gmon.out has no stacks).
    Estimated,
    /// Sampled by the runtime, exactly as they were.
    Exact,
}

impl StackSource {
    /// The phrase the outputs use to say where stacks come from.
    pub fn description(self) -> &'static str {
        match self {
            StackSource::Estimated => "stacks estimated from call counts",
            StackSource::Exact => "exact sampled stacks",
        }
    }
}

/// The result of estimation: stacks sorted by frames, each with at least one sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stacks {
    /// The stacks, sorted by their frames; no two are equal.
    pub stacks: Vec<Stack>,
    /// Estimated or exact.
    pub source: StackSource,
    /// Histogram samples outside every function: in no stack, reported only.
    pub outside_samples: u64,
    /// Exact stacks: the sampled program counters, each with its function and samples (empty
    /// for estimated stacks, whose addresses are the histogram's bins).
    pub sampled: Vec<SampledAddress>,
    /// Exact stacks: where each caller called each callee, from the stacks' return addresses.
    pub call_sites: Vec<CallSite>,
    /// Exact stacks: the stacks again, with the address of every frame (empty for estimated
    /// stacks). Their samples add up to those of [`Stacks::stacks`].
    pub placed: Vec<PlacedStack>,
}

impl Stacks {
    /// Sum of the samples of every stack.
    pub fn total_samples(&self) -> u64 {
        self.stacks
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.samples))
    }
}

/// Estimates stacks from a call graph, as `spec/stacks.md` describes: every function's self
/// samples become stacks that end in it, their sum equal to its self samples exactly.
pub fn estimate_stacks(graph: &WeightedCallGraph) -> Result<Stacks, GraphError> {
    graph.total_self_samples()?;
    let units = Units::build(graph);
    // Finished stacks. Every split extends its pieces by different callers, and stacks of
    // different functions end in different leaves, so no stack is produced twice; they are
    // sorted (and, defensively, equal ones merged) at the end.
    let mut out: Vec<Stack> = Vec::new();
    // Partial stacks share their leaf-side frames: each is an index into `arena`, whose entries
    // are (frame, index of the frame below it). Extending a stack is O(1), so the work is
    // proportional to the frames of the finished stacks, not to their squares.
    let mut arena: Vec<(Frame, usize)> = Vec::new();
    // Depth-first work list: (outermost arena entry, samples, unit of that entry).
    let mut work: Vec<(usize, u64, usize)> = Vec::new();
    for (i, node) in graph.nodes().iter().enumerate() {
        if node.self_samples == 0 {
            continue;
        }
        let id = NodeId(i);
        let unit = units.unit_of(id);
        arena.clear();
        let top = units.push_frames(&mut arena, id, unit, NO_PARENT);
        work.push((top, node.self_samples, unit));
        while let Some((top, samples, unit)) = work.pop() {
            let callers = units.callers(unit);
            let total: u64 = callers.iter().fold(0u64, |a, &(_, w)| a.saturating_add(w));
            if total == 0 {
                // A root: nobody (known) called this unit, so the stack ends here. Walking
                // from the root entry down to the leaf gives root-first order directly.
                let mut root_first = Vec::new();
                let mut at = top;
                while let Some(&(frame, below)) = arena.get(at) {
                    root_first.push(frame);
                    at = below;
                }
                out.push(Stack {
                    frames: root_first,
                    samples,
                });
                continue;
            }
            if let [(caller, _)] = callers {
                // One caller (the common case): everything goes to it, no split to compute.
                let caller_unit = units.unit_of(*caller);
                let next = units.push_frames(&mut arena, *caller, caller_unit, top);
                work.push((next, samples, caller_unit));
                continue;
            }
            let shares = largest_remainder(samples, callers, total);
            // Pushed in reverse so that callers are processed in id order (cosmetic only:
            // the result is a sorted map either way).
            for (&(caller, _), share) in callers.iter().zip(shares).rev() {
                if share == 0 {
                    continue;
                }
                let caller_unit = units.unit_of(caller);
                let next = units.push_frames(&mut arena, caller, caller_unit, top);
                work.push((next, share, caller_unit));
            }
        }
    }
    out.sort_unstable_by(|a, b| a.frames.cmp(&b.frames));
    let mut merged: Vec<Stack> = Vec::with_capacity(out.len());
    for s in out {
        match merged.last_mut() {
            Some(last) if last.frames == s.frames => {
                last.samples = last
                    .samples
                    .checked_add(s.samples)
                    .ok_or(GraphError::Overflow("a stack's samples"))?;
            }
            _ => merged.push(s),
        }
    }
    Ok(Stacks {
        stacks: merged,
        source: StackSource::Estimated,
        outside_samples: graph.outside_samples(),
        sampled: Vec::new(),
        call_sites: Vec::new(),
        placed: Vec::new(),
    })
}

/// Splits `samples` over `weights` in proportion, in whole samples: each gets the floor of its
/// exact share, and the samples left over (fewer than the number of weights) go one each to the
/// largest fractional parts, ties to the earlier entry. The result adds up to `samples`.
/// `total` is the sum of the weights.
pub fn largest_remainder(samples: u64, weights: &[(NodeId, u64)], total: u64) -> Vec<u64> {
    split(samples, weights.iter().map(|&(_, w)| w), u128::from(total))
}

/// [`largest_remainder`] over plain weights (their sum is computed here).
pub fn split_in_proportion(samples: u64, weights: &[u64]) -> Vec<u64> {
    let total = weights.iter().map(|&w| u128::from(w)).sum();
    split(samples, weights.iter().copied(), total)
}

fn split(samples: u64, weights: impl ExactSizeIterator<Item = u64>, total: u128) -> Vec<u64> {
    let n = weights.len();
    if total == 0 {
        return vec![0; n];
    }
    let mut shares = Vec::with_capacity(n);
    let mut remainders = Vec::with_capacity(n);
    let mut given: u64 = 0;
    for (i, w) in weights.enumerate() {
        let exact = u128::from(samples) * u128::from(w);
        // exact / total <= samples because w <= total, so it fits in u64.
        let q = u64::try_from(exact / total).unwrap_or(samples);
        shares.push(q);
        remainders.push((exact % total, i));
        given = given.saturating_add(q);
    }
    let left = samples.saturating_sub(given);
    // Largest remainder first; equal remainders keep entry order.
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in remainders
        .iter()
        .take(usize::try_from(left).unwrap_or(usize::MAX))
    {
        if let Some(s) = shares.get_mut(i) {
            *s = s.saturating_add(1);
        }
    }
    shares
}

/// The units of propagation: single functions, or whole cycles.
struct Units {
    /// For each node, the index of its unit.
    unit: Vec<usize>,
    /// For each unit, its cycle number when it is a cycle.
    cycle: Vec<Option<u32>>,
    /// For each unit, the functions outside it that call into it, with summed counts, in id
    /// order. Arcs inside a unit (recursion, calls within a cycle) are not in here.
    callers: Vec<Vec<(NodeId, u64)>>,
}

impl Units {
    fn build(graph: &WeightedCallGraph) -> Units {
        let n = graph.nodes().len();
        let mut uf = UnionFind::new(n);
        let mut declared_number: BTreeMap<usize, u32> = BTreeMap::new();
        for c in graph.declared_cycles() {
            for w in c.members.windows(2) {
                if let [a, b] = w {
                    uf.union(a.0, b.0);
                }
            }
        }
        // Any cycle left among the declared units (arcs with counts that the declared groups
        // do not cover) is merged too, so that propagation always terminates.
        let edges: Vec<(usize, usize)> = graph
            .edges()
            .filter(|e| e.calls > 0)
            .map(|e| (e.caller.0, e.callee.0))
            .collect();
        for scc in strongly_connected(n, &mut uf, &edges) {
            for w in scc.windows(2) {
                if let [a, b] = w {
                    uf.union(*a, *b);
                }
            }
        }
        // Number the units by their first member.
        let mut unit_index: BTreeMap<usize, usize> = BTreeMap::new();
        let mut unit = vec![0; n];
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (v, slot) in unit.iter_mut().enumerate() {
            let root = uf.find(v);
            let idx = *unit_index.entry(root).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            *slot = idx;
            if let Some(m) = members.get_mut(idx) {
                m.push(v);
            }
        }
        for c in graph.declared_cycles() {
            if let Some(first) = c.members.first().and_then(|m| unit.get(m.0)) {
                let e = declared_number.entry(*first).or_insert(c.number);
                *e = (*e).min(c.number);
            }
        }
        let mut next_number = graph
            .declared_cycles()
            .iter()
            .map(|c| c.number)
            .max()
            .unwrap_or(0)
            .saturating_add(1);
        let cycle: Vec<Option<u32>> = members
            .iter()
            .enumerate()
            .map(|(idx, m)| {
                if let Some(&num) = declared_number.get(&idx) {
                    Some(num)
                } else if m.len() > 1 {
                    let num = next_number;
                    next_number = next_number.saturating_add(1);
                    Some(num)
                } else {
                    None
                }
            })
            .collect();
        let mut callers_map: Vec<BTreeMap<NodeId, u64>> = vec![BTreeMap::new(); members.len()];
        for e in graph.edges() {
            let (Some(&cu), Some(&ku)) = (unit.get(e.caller.0), unit.get(e.callee.0)) else {
                continue;
            };
            if e.calls == 0 || cu == ku {
                continue;
            }
            if let Some(m) = callers_map.get_mut(ku) {
                let slot = m.entry(e.caller).or_insert(0);
                *slot = slot.saturating_add(e.calls);
            }
        }
        let callers = callers_map
            .into_iter()
            .map(|m| m.into_iter().collect())
            .collect();
        Units {
            unit,
            cycle,
            callers,
        }
    }

    fn unit_of(&self, id: NodeId) -> usize {
        self.unit.get(id.0).copied().unwrap_or(0)
    }

    fn callers(&self, unit: usize) -> &[(NodeId, u64)] {
        self.callers.get(unit).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Adds the frames a function contributes on top of `below` (itself, then its cycle if it
    /// is in one) and returns the outermost new entry.
    fn push_frames(
        &self,
        arena: &mut Vec<(Frame, usize)>,
        id: NodeId,
        unit: usize,
        below: usize,
    ) -> usize {
        arena.push((Frame::Function(id), below));
        if let Some(num) = self.cycle.get(unit).copied().flatten() {
            arena.push((Frame::Cycle(num), arena.len() - 1));
        }
        arena.len() - 1
    }
}

/// The "no frame below" link of the leaf's arena entry.
const NO_PARENT: usize = usize::MAX;

/// Disjoint sets over node indices (path halving, union by smaller root so results are stable).
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut v: usize) -> usize {
        while let Some(&p) = self.parent.get(v) {
            if p == v {
                break;
            }
            let gp = self.parent.get(p).copied().unwrap_or(p);
            if let Some(slot) = self.parent.get_mut(v) {
                *slot = gp;
            }
            v = gp;
        }
        v
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        if let Some(slot) = self.parent.get_mut(hi) {
            *slot = lo;
        }
    }
}

/// Strongly connected components (with more than one unit) of the graph whose vertices are the
/// current union-find classes, by Kosaraju's two passes with explicit stacks (no recursion, so
/// deep call chains cannot overflow). Each component is returned as a list of node indices.
fn strongly_connected(n: usize, uf: &mut UnionFind, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let rep: Vec<usize> = (0..n).map(|v| uf.find(v)).collect();
    let mut fwd: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut back: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        let (Some(&ra), Some(&rb)) = (rep.get(a), rep.get(b)) else {
            continue;
        };
        if ra == rb {
            continue;
        }
        if let Some(l) = fwd.get_mut(ra) {
            l.push(rb);
        }
        if let Some(l) = back.get_mut(rb) {
            l.push(ra);
        }
    }
    let roots: Vec<usize> = (0..n).filter(|&v| rep.get(v) == Some(&v)).collect();
    // Pass 1: finishing order on the forward graph.
    let mut seen = vec![false; n];
    let mut order = Vec::new();
    for &start in &roots {
        if seen.get(start).copied().unwrap_or(true) {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        if let Some(s) = seen.get_mut(start) {
            *s = true;
        }
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            let next = fwd.get(v).and_then(|l| l.get(i)).copied();
            top.1 += 1;
            match next {
                Some(w) => {
                    if !seen.get(w).copied().unwrap_or(true) {
                        if let Some(s) = seen.get_mut(w) {
                            *s = true;
                        }
                        stack.push((w, 0));
                    }
                }
                None => {
                    order.push(v);
                    stack.pop();
                }
            }
        }
    }
    // Pass 2: on the reversed graph, in reverse finishing order.
    let mut assigned = vec![false; n];
    let mut out = Vec::new();
    for &start in order.iter().rev() {
        if assigned.get(start).copied().unwrap_or(true) {
            continue;
        }
        let mut comp = Vec::new();
        let mut stack = vec![start];
        if let Some(s) = assigned.get_mut(start) {
            *s = true;
        }
        while let Some(v) = stack.pop() {
            comp.push(v);
            for &w in back.get(v).map(Vec::as_slice).unwrap_or(&[]) {
                if !assigned.get(w).copied().unwrap_or(true) {
                    if let Some(s) = assigned.get_mut(w) {
                        *s = true;
                    }
                    stack.push(w);
                }
            }
        }
        if comp.len() > 1 {
            comp.sort_unstable();
            out.push(comp);
        }
    }
    out
}
