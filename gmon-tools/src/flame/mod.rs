//! Flame graphs: folded stacks ([`write_folded`]) and SVG through inferno ([`write_svg`]), printed
//! from the stacks model ([`crate::model`]).

mod folded;
mod inline;
mod svg;
mod tree;
pub(crate) use svg::escape;

pub use folded::{folded_lines, write_folded};
pub use inline::{INLINED_MARK, folded_lines_inlined, stack_frame_name};
pub use svg::{
    DiffColours, NothingToDraw, SvgOptions, subtitle, write_diff_parts_svg, write_diff_svg,
    write_no_samples_svg, write_svg,
};
pub use tree::{
    ExecutableGroup, folded_samples, group_by_executable, root_names, tree_subtitle, under_root,
};
