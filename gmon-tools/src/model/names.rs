//! Frame names as every view prints them: the function's name made safe for the folded format
//! (which pprof and diff share, so one frame has one name everywhere), or `<cycle N>`.

use super::estimate::Frame;
use super::graph::WeightedCallGraph;

/// The text of one frame: the function's name made safe for the folded format, or
/// `<cycle N>`.
pub fn frame_name(graph: &WeightedCallGraph, frame: Frame) -> String {
    match frame {
        Frame::Function(id) => match graph.node(id) {
            Some(node) => sanitize(&node.name),
            None => format!("<unknown function {}>", id.0),
        },
        Frame::Cycle(n) => format!("<cycle {n}>"),
    }
}

/// Makes a name safe inside a folded line: `;` separates frames, so it becomes `,` (Rust types
/// such as `[u8; 4]` contain it); line breaks become spaces; an empty name becomes `??`.
pub fn sanitize(name: &str) -> String {
    if name.is_empty() {
        return "??".to_owned();
    }
    name.chars()
        .map(|c| match c {
            ';' => ',',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect()
}
