//! Inline frames in flame graphs (spec/stacks.md §6, "Inline frames"): where a sampled address
//! is in code the compiler inlined, the inlined functions are drawn as frames above the
//! function that holds the code, innermost on top, each marked as inlined.

use std::collections::{BTreeMap, HashMap};

use crate::model::{
    Frame, InlineChain, Loaded, NodeId, StackSource, frame_name, sanitize, split_in_proportion,
};

/// What an inlined function's frame name ends with, so that it is never read as a call.
/// inferno's own mark, `_[i]`, is stripped from the drawn text and coloured only by the `java`
/// palette: with every other palette an inlined frame would look like a call.
pub const INLINED_MARK: &str = " [inlined]";

/// The inline chains of the profile's sampled addresses, by (object path, link-time address)
/// ([`crate::model::profile_inline_chains`]).
pub type Chains = BTreeMap<(String, u64), InlineChain>;

/// The folded lines of the profile's stacks ([`super::folded_lines`]), each frame followed by
/// the functions inlined where it was sampled: for exact stacks at every frame's address (the
/// leaf's program counter, each caller's call instruction), for estimated stacks at the
/// histogram pieces the leaf's samples are split over, as `gmon pprof` splits them. The
/// samples of a stack are kept: split among its inline chains, never added. A stack sampled
/// nowhere in inlined code gives the same line as without chains.
pub fn folded_lines_inlined(l: &Loaded, chains: &Chains) -> Vec<String> {
    let plain = |frames: &[Frame]| -> Vec<String> {
        frames.iter().map(|&f| frame_name(&l.graph, f)).collect()
    };
    if chains.is_empty() {
        return super::folded_lines(&l.stacks, &l.graph);
    }
    // Exact stacks: the placed stacks with the same frames as each stack.
    let mut placed: HashMap<&[Frame], Vec<usize>> = HashMap::new();
    for (i, p) in l.stacks.placed.iter().enumerate() {
        placed.entry(p.frames.as_slice()).or_default().push(i);
    }
    let main = l.objects.iter().find(|o| o.main).map(|o| o.path.as_str());
    let mut lines = Vec::new();
    for s in l.stacks.stacks.iter().filter(|s| s.samples > 0) {
        // Names with inline frames -> samples; what no chain takes stays on the plain stack.
        let mut inlined: BTreeMap<Vec<String>, u64> = BTreeMap::new();
        if let Some(ids) = placed.get(s.frames.as_slice()) {
            for p in ids.iter().filter_map(|&i| l.stacks.placed.get(i)) {
                let mut names = Vec::with_capacity(p.frames.len());
                let mut any = false;
                for (&frame, place) in p.frames.iter().zip(&p.places) {
                    names.push(frame_name(&l.graph, frame));
                    let chain = place.as_ref().and_then(|pl| {
                        let object = pl.object.as_ref()?;
                        chains.get(&(object.clone(), pl.address))
                    });
                    if let Some(c) = chain {
                        names.extend(inlined_names(c));
                        any = true;
                    }
                }
                if any {
                    *inlined.entry(names).or_insert(0) += p.samples;
                }
            }
        } else if l.stacks.source == StackSource::Estimated
            && let (Some(main), Some(Frame::Function(NodeId(leaf)))) = (main, s.frames.last())
            && let Some(f) = l.functions.get(*leaf)
        {
            let pieces = f.leaf_pieces();
            let weights: Vec<u64> = pieces.iter().map(|b| b.count).collect();
            let shares = split_in_proportion(s.samples, &weights);
            for (b, share) in pieces.iter().zip(shares) {
                if share == 0 {
                    continue;
                }
                if let Some(c) = chains.get(&(main.to_owned(), b.address)) {
                    let mut names = plain(&s.frames);
                    names.extend(inlined_names(c));
                    *inlined.entry(names).or_insert(0) += share;
                }
            }
        }
        let rest = s
            .samples
            .saturating_sub(inlined.values().fold(0u64, |a, &n| a.saturating_add(n)));
        if rest > 0 {
            lines.push(format!("{} {rest}", plain(&s.frames).join(";")));
        }
        for (names, n) in inlined {
            lines.push(format!("{} {n}", names.join(";")));
        }
    }
    lines.sort();
    lines
}

/// The frames of a chain, outermost first (the order of a folded stack), each marked.
fn inlined_names(chain: &InlineChain) -> impl Iterator<Item = String> + '_ {
    chain
        .inlined
        .iter()
        .rev()
        .map(|f| format!("{}{INLINED_MARK}", sanitize(&f.name)))
}
