//! The library behind the `gmon` command.
//!
//! Every subcommand is a thin layer in [`commands`] over functions here that tests call directly:
//! the gprof engine ([`gprof`]: symbol table, histogram credit, call graph with cycles and
//! propagation, and GNU gprof's printers), [`stacks`] (the model the views print),
//! [`diff`], [`flame`], [`pprof`] and [`dump`].

#![deny(missing_docs)]

pub mod cli;
pub mod commands;
pub mod diff;
pub mod dump;
pub mod flame;
pub mod gprof;
pub mod merge;
pub mod output;
pub mod pprof;
pub mod stacks;
