//! Folded stacks, the text format flame-graph tools read: `root;caller;leaf N` per line.

use std::io::{self, Write};

use crate::model::{Stacks, WeightedCallGraph, frame_name};

/// The folded lines of a set of stacks, sorted bytewise, without line ends.
pub fn folded_lines(stacks: &Stacks, graph: &WeightedCallGraph) -> Vec<String> {
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
pub fn write_folded(
    out: &mut dyn Write,
    stacks: &Stacks,
    graph: &WeightedCallGraph,
) -> io::Result<()> {
    for line in folded_lines(stacks, graph) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
