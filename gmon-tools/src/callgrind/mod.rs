//! Callgrind output: the text format that KCachegrind, QCachegrind, `callgrind_annotate`,
//! gprof2dot (`-f callgrind`) and speedscope read, printed from the view model
//! ([`crate::model::Loaded`]) as spec/stacks.md §13 describes: one cost event (histogram
//! samples) at each sampled instruction and its source line, the exact `-pg` call counts
//! (`calls=`) and each call's inclusive cost.

mod build;
mod format;

pub use build::{CallSource, callgrind_from};
pub use format::{Call, Cost, Function, Position, Profile, write_callgrind};
