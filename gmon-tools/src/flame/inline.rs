//! Inline frames in flame graphs (spec/stacks.md §6, "Inline frames"): where a sampled address
//! is in code the compiler inlined, the inlined functions are drawn as frames above the
//! function that holds the code, innermost on top, each marked as inlined.

use crate::model::{Chains, Loaded, StackFrame, frame_name, sanitize, stacks_with_inline_frames};

/// What an inlined function's frame name ends with, so that it is never read as a call.
/// inferno's own mark, `_[i]`, is stripped from the drawn text and coloured only by the `java`
/// palette: with every other palette an inlined frame would look like a call.
pub const INLINED_MARK: &str = " [inlined]";

/// The folded lines of the profile's stacks ([`super::folded_lines`]) with the frames of the
/// functions inlined where each was sampled ([`stacks_with_inline_frames`]), each marked.
pub fn folded_lines_inlined(l: &Loaded, chains: &Chains) -> Vec<String> {
    if chains.is_empty() {
        return super::folded_lines(&l.stacks, &l.graph);
    }
    let mut lines: Vec<String> = stacks_with_inline_frames(l, chains)
        .into_iter()
        .map(|(frames, n)| {
            let names: Vec<String> = frames.iter().map(|f| stack_frame_name(l, f)).collect();
            format!("{} {n}", names.join(";"))
        })
        .collect();
    lines.sort();
    lines
}

/// A frame's name in a folded line: an inlined function's with [`INLINED_MARK`].
pub fn stack_frame_name(l: &Loaded, frame: &StackFrame) -> String {
    match frame {
        StackFrame::Called(f) => frame_name(&l.graph, *f),
        StackFrame::Inlined(name) => format!("{}{INLINED_MARK}", sanitize(name)),
    }
}
