//! Folded stacks, the text format flame-graph tools read: `root;caller;leaf N` per line.

use std::io::{self, Write};

use super::estimate::{Frame, Stacks};
use super::graph::CallGraph;

/// The text of one frame: the function's name made safe for the folded format, or
/// `<cycle N>`.
pub fn frame_name(graph: &CallGraph, frame: Frame) -> String {
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

/// The folded lines of a set of stacks, sorted bytewise, without line ends.
pub fn folded_lines(stacks: &Stacks, graph: &CallGraph) -> Vec<String> {
    let mut lines: Vec<String> = stacks
        .stacks
        .iter()
        .filter(|s| s.samples > 0)
        .map(|s| {
            let names: Vec<String> = s.frames.iter().map(|&f| frame_name(graph, f)).collect();
            format!("{} {}", names.join(";"), s.samples)
        })
        .collect();
    lines.sort();
    lines
}

/// Writes the folded lines, one per line.
pub fn write_folded(out: &mut dyn Write, stacks: &Stacks, graph: &CallGraph) -> io::Result<()> {
    for line in folded_lines(stacks, graph) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
