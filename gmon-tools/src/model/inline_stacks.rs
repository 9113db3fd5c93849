//! The profile's stacks with inline frames (spec/stacks.md §7, "Inline frames"): where a
//! sampled address is in code the compiler inlined, the functions inlined there stand above
//! the function that holds the code, innermost on top. `gmon flame` names them in its folded
//! lines; `gmon report` draws them in its flame graph.

use std::collections::{BTreeMap, HashMap};

use super::{Frame, InlineChain, Loaded, NodeId, StackSource, split_in_proportion};

/// The inline chains of the profile's sampled addresses, by (object path, link-time address)
/// ([`super::profile_inline_chains`]).
pub type Chains = BTreeMap<(String, u64), InlineChain>;

/// One frame of a stack drawn with its inline frames.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StackFrame {
    /// A frame of the profile's stack (a function, or a collapsed cycle).
    Called(Frame),
    /// A function the compiler inlined into the frame below it: its demangled name.
    Inlined(String),
}

/// The profile's stacks with samples, each frame followed by the functions inlined where it
/// was sampled: for exact stacks at every frame's address (the leaf's program counter, each
/// caller's call instruction), for estimated stacks at the histogram pieces the leaf's samples
/// are split over, as `gmon pprof` splits them. The samples of a stack are kept: split among
/// its inline chains, never added, so the totals are those of the stacks. A stack sampled
/// nowhere in inlined code comes out as it is. In the order of the profile's stacks, each
/// stack's variants in frame order.
pub fn stacks_with_inline_frames(l: &Loaded, chains: &Chains) -> Vec<(Vec<StackFrame>, u64)> {
    let called = |frames: &[Frame]| -> Vec<StackFrame> {
        frames.iter().map(|&f| StackFrame::Called(f)).collect()
    };
    let sampled = l.stacks.stacks.iter().filter(|s| s.samples > 0);
    if chains.is_empty() {
        return sampled.map(|s| (called(&s.frames), s.samples)).collect();
    }
    // Exact stacks: the placed stacks with the same frames as each stack.
    let mut placed: HashMap<&[Frame], Vec<usize>> = HashMap::new();
    for (i, p) in l.stacks.placed.iter().enumerate() {
        placed.entry(p.frames.as_slice()).or_default().push(i);
    }
    let main = l.objects.iter().find(|o| o.main).map(|o| o.path.as_str());
    let mut out = Vec::new();
    for s in sampled {
        // Frames with inline frames -> samples; what no chain takes stays on the plain stack.
        let mut inlined: BTreeMap<Vec<StackFrame>, u64> = BTreeMap::new();
        if let Some(ids) = placed.get(s.frames.as_slice()) {
            for p in ids.iter().filter_map(|&i| l.stacks.placed.get(i)) {
                let mut frames = Vec::with_capacity(p.frames.len());
                let mut any = false;
                for (&frame, place) in p.frames.iter().zip(&p.places) {
                    frames.push(StackFrame::Called(frame));
                    let chain = place.as_ref().and_then(|pl| {
                        let object = pl.object.as_ref()?;
                        chains.get(&(object.clone(), pl.address))
                    });
                    if let Some(c) = chain {
                        frames.extend(inlined_frames(c));
                        any = true;
                    }
                }
                if any {
                    *inlined.entry(frames).or_insert(0) += p.samples;
                }
            }
        } else if l.stacks.source == StackSource::Estimated
            && let (Some(main), Some(Frame::Function(NodeId(leaf)))) = (main, s.frames.last())
            && let Some(f) = l.functions.get(*leaf)
        {
            // The pieces' weights summed per chain first (no chain: the plain stack), so that
            // the samples are rounded once per chain, not once per piece: how finely the
            // pieces are cut (at line starts when lines are credited) then hardly matters.
            let mut by_chain: Vec<(Option<&InlineChain>, u64)> = Vec::new();
            for b in f.leaf_pieces() {
                let chain = chains.get(&(main.to_owned(), b.address));
                match by_chain.iter_mut().find(|(c, _)| *c == chain) {
                    Some((_, w)) => *w = w.saturating_add(b.count),
                    None => by_chain.push((chain, b.count)),
                }
            }
            let weights: Vec<u64> = by_chain.iter().map(|&(_, w)| w).collect();
            let shares = split_in_proportion(s.samples, &weights);
            for ((chain, _), share) in by_chain.iter().zip(shares) {
                if let (Some(c), true) = (chain, share > 0) {
                    let mut frames = called(&s.frames);
                    frames.extend(inlined_frames(c));
                    *inlined.entry(frames).or_insert(0) += share;
                }
            }
        }
        let rest = s
            .samples
            .saturating_sub(inlined.values().fold(0u64, |a, &n| a.saturating_add(n)));
        if rest > 0 {
            out.push((called(&s.frames), rest));
        }
        out.extend(inlined);
    }
    out
}

/// The frames of a chain, outermost first (the order of a stack, root to leaf).
fn inlined_frames(chain: &InlineChain) -> impl Iterator<Item = StackFrame> + '_ {
    chain
        .inlined
        .iter()
        .rev()
        .map(|f| StackFrame::Inlined(f.name.clone()))
}
