//! GNU gprof's text output, byte for byte: its command line ([`args`]), its driver ([`run`],
//! gprof's `main`), and the reports it prints from an [`Analysis`](crate::gprof::Analysis):
//! the flat profile, the call graph, the index, execution counts, annotated source, the
//! suggested orderings, and the explanations printed without `-b`.

pub mod annotate;
pub mod args;
pub mod blurbs;
pub mod execcount;
pub mod flat;
pub mod fmt;
pub mod graph;
pub mod index;
pub mod names;
pub mod ordering;
pub mod run;
