//! Flame graphs from gmon.out: a weighted call graph ([`CallGraph`]), the stack estimation
//! that spreads self samples over callers ([`estimate_stacks`], specified in
//! `spec/stacks.md`), folded stacks ([`write_folded`]) and SVG through inferno ([`write_svg`]).

mod estimate;
mod folded;
mod graph;
mod input;
mod svg;

pub use estimate::{
    Frame, Stack, StackSource, Stacks, estimate_stacks, largest_remainder, split_in_proportion,
};
pub use folded::{folded_lines, frame_name, sanitize, write_folded};
pub use graph::{CallGraph, CycleGroup, Edge, GraphError, Node, NodeId};
pub use input::{
    LoadOptions, Loaded, choose_executable, graph_from_analysis, load, load_with, split_executable,
    whole_samples,
};
pub use svg::{
    NothingToDraw, SvgOptions, subtitle, write_diff_svg, write_no_samples_svg, write_svg,
};
