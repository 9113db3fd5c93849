//! Writing the profile without allocating (spec/runtime.md §1, §4.5): output names, files
//! created safely, gmon.out and sidecar encoders, and what a process `gmon record` started
//! does differently. Reads the engine's counts and the loaded objects; never calls the engine.

pub(crate) mod files;
pub(crate) mod grid;
pub(crate) mod histogram;
pub mod output;
pub(crate) mod path;
pub(crate) mod record;
pub(crate) mod writer;
