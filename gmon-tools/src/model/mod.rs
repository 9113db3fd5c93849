//! The model every view prints (spec/stacks.md): the profiled [`Executable`], the weighted call
//! graph ([`WeightedCallGraph`]) the gprof engine's analysis gives, the stacks estimated from it
//! ([`estimate_stacks`]) or sampled exactly by the runtime, and the loading of profiles, sidecars
//! and executables that builds them ([`load`]). `gmon flame`, `gmon pprof` and `gmon diff` are
//! printers over it.

mod addresses;
mod bins;
mod drawn;
mod estimate;
mod exact;
pub use exact::{KERNEL, OUTSIDE_ROOT, is_kernel_address};
mod executable;
mod function;
mod gprof_notes;
mod graph;
mod inline;
mod inline_stacks;
mod load;
mod names;
mod objects;
mod operands;
mod place_lines;
mod plt;
mod sections;
mod symbolize;

pub use addresses::{CallSite, Place, PlacedStack, SampledAddress};
pub use drawn::drawn_samples;
pub use estimate::{
    Frame, Stack, StackSource, Stacks, estimate_stacks, largest_remainder, split_in_proportion,
};
pub use executable::{Executable, gnu_build_id, sidecar_beside, sidecar_build_id};
pub use function::{BinSample, FunctionInfo};
pub use gprof_notes::recorded_profile_notes;
pub use graph::{CycleGroup, Edge, GraphError, Node, NodeId, WeightedCallGraph};
pub use inline::{
    InlineChain, InlinedFrame, executable_inline_chains, inline_chains, profile_inline_chains,
};
pub use inline_stacks::{Chains, StackFrame, stacks_with_inline_frames};
pub use load::{
    LoadOptions, Loaded, check_profile, choose_executable, graph_from_analysis, load, load_with,
    recorded_executable, split_executable, views_symbol_table, whole_samples,
};
pub use names::{frame_name, sanitize};
pub use objects::{
    CodeRange, LoadedObject, TextSegment, executable_object, sidecar_objects, text_segments,
};
pub use operands::{OperandKind, check_executable_operand, executable_and_profiles, operand_kind};
pub use symbolize::{ObjectFunction, ObjectSymbols, display_name};

/// The file name of the gmon-write runtime library that `gmon record` preloads; its frames are
/// the profiler's, not the program's (spec/stacks.md §8). Defined here, the layer below
/// `record`, which writes the library under this name.
pub const RUNTIME_LIBRARY: &str = "libgmon_write.so";
