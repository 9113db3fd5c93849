//! The library behind the `gmon` command.
//!
//! Every subcommand is a thin layer in [`commands`] over functions here that tests call directly:
//! the gprof engine ([`gprof`]: symbol table, histogram credit, call graph with cycles and
//! propagation, and GNU gprof's printers), [`diff`], [`flame`], [`pprof`], [`dump`] and the
//! [`record`] engine.

#![deny(missing_docs)]

pub mod cli;
pub mod commands;
pub mod diff;
pub mod dump;
pub mod flame;
pub mod gprof;
pub mod input;
#[doc(hidden)]
pub mod input_args;
pub mod merge;
pub mod output;
pub mod pprof;
pub mod record;
