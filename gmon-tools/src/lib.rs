//! The library behind the `gmon` command.
//!
//! Every subcommand of the binary (`src/main.rs`, with `src/cli.rs`, `src/commands/` and
//! `src/input_args.rs`, which are private to it) is a thin layer over functions here that tests
//! call directly:
//! the gprof engine ([`gprof`]: its analysis — symbol table, histogram credit, call graph with
//! cycles and propagation — and GNU gprof's text output), [`model`] (the model the views
//! print), [`diff`], [`flame`], [`pprof`], [`callgrind`], [`dump`] and the [`record`] engine.
//! Executables are read by the `gmon_binary` crate, demangling is the `gmon_demangle` crate.

#![deny(missing_docs)]

pub use error::{Error, Result};

pub mod callgrind;
pub mod diff;
pub mod dump;
pub mod error;
pub mod flame;
pub mod gprof;
pub mod input;
pub mod merge;
pub mod model;
pub mod output;
pub mod pprof;
pub mod record;
pub mod report;
