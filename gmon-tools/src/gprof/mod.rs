//! The gprof engine: GNU gprof 2.40's analysis and reports, byte for byte.
//!
//! The analysis is a library that other commands (flame graphs, pprof, merge/diff) reuse:
//!
//! ```no_run
//! use gmon_binary::Image;
//! use gmon_tools::gprof::{Analysis, AnalysisOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let image = Image::open("./prog".as_ref())?;
//! let bytes = std::fs::read("gmon.out")?;
//! let profile = gmon_format::read(&bytes)?;
//! let a = Analysis::new(&image, &[profile], &AnalysisOptions::default())?;
//! for f in a.functions() {
//!     println!("{} {} self={}s calls={}", f.name, f.demangled(), f.self_seconds, f.calls);
//! }
//! for arc in a.arcs() {
//!     println!("{} -> {}: {}", arc.parent, arc.child, arc.count);
//! }
//! # Ok(()) }
//! ```
//!
//! [`Analysis`] exposes, per function (index = position in [`SymbolTable::symbols`], address
//! order): the raw and demangled name, the address range, the self time credited from the
//! histogram ([`FunctionStats::self_ticks`], divide by [`Analysis::hz`] for seconds), the call
//! count, the descendants' time, the cycle it belongs to and its index in the call graph; the
//! arcs between functions with their counts and propagated times; the cycles with their members;
//! the total number of samples and the sampling rate.
//!
//! The pipeline follows gprof (spec/gprof.md describes each step):
//! [`symtab`] (which ELF symbols count) → [`symspec`] (option filters) → reading profiles:
//! [`hist::Histograms::add`] and [`callgraph::CallGraph::tally`] → [`hist::assign_samples`] →
//! [`callgraph::CallGraph::assemble`]. The printers [`flat`], [`graph`], [`index`] and
//! [`execcount`] write GNU's exact text to any `impl Write` (names through [`names`], numbers
//! through [`fmt`]'s C `printf` emulation, sorts through [`sort`]'s copy of glibc's merge sort);
//! [`args`] parses gprof's command line; [`report::run`] reads the files as gprof does (layout,
//! byte order and pointer width from the executable) and ties it all together for `gmon gprof`.
//!
//! Extension points for the line-level features (`-l`, `-A`, `-C`, `-r`, `-R`, DWARF) are
//! marked `EXTENSION POINT (lines)` in [`run`]: line symbols go into the symbol table before
//! [`SymbolTable::finalize`], source files through [`SymbolTable::attach_source`].

mod analysis;
pub mod annotate;
pub mod args;
pub mod blocks;
pub mod blurbs;
mod builder;
pub mod callgraph;
pub mod execcount;
pub mod flat;
pub mod fmt;
pub mod graph;
pub mod hist;
pub mod index;
pub mod lines;
pub mod names;
pub mod ordering;
pub mod report;
pub mod sort;
mod static_calls;
pub mod symspec;
pub mod symtab;

pub use analysis::{Analysis, ArcStats, CycleStats, FunctionStats};
pub use builder::{AnalysisBuilder, FileInfo};
pub use callgraph::CallGraph;
pub use hist::Histograms;
pub use report::run;
pub use symspec::{SpecTables, SymSpec, TableId};
pub use symtab::{SourceFile, Symbol, SymbolTable, SymtabOptions};

/// Symbols from which a step that reads or writes every symbol's entry is worth a thread of its
/// own: matching the specs, ranking the names, freeing the analysis (spec/gprof.md §17). Below
/// it a thread (clone, its stack, its malloc arena) cost more than the step on small2k.
pub(crate) const PARALLEL_SYMBOLS: usize = 5000;

/// The name gprof's messages start with (`argv[0]` in GNU gprof).
pub const WHOAMI: &str = "gprof";

/// A fatal gprof error: `message` is exactly what GNU gprof writes on stderr (with its
/// trailing newline, or without one where gprof has none), and the exit status is 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GprofError {
    /// The stderr text.
    pub message: String,
}

impl GprofError {
    /// An error with gprof's exact stderr text.
    pub fn new(message: String) -> GprofError {
        GprofError { message }
    }

    /// `perror(name)`: `name: strerror(errno)`.
    pub fn perror(name: &str, err: &std::io::Error) -> GprofError {
        GprofError::new(format!("{name}: {}\n", gmon_binary::io_text(err)))
    }

    /// GNU gprof's text for an executable it could not read: `perror`'s for a file it could
    /// not open, its own (prefixed with `whoami`) for one that is not what it expects.
    pub fn binary(err: &gmon_binary::Error, whoami: &str) -> GprofError {
        match err {
            gmon_binary::Error::Io { path, error } => GprofError::perror(path, error),
            other => GprofError::new(format!("{whoami}: {other}\n")),
        }
    }

    /// The message without its leading `whoami: ` and trailing newline, for tools that print
    /// their own program prefix (`gmon: ...`): wrapping the whole message would print the
    /// program name twice. Every gprof message names the file it is about, so the rest stands
    /// on its own.
    pub fn without_program(&self, whoami: &str) -> &str {
        let m = self.message.trim_end();
        m.strip_prefix(whoami)
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(m)
    }
}

impl std::fmt::Display for GprofError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

impl std::error::Error for GprofError {}

/// What the analysis needs from the command line (library users: `AnalysisOptions::default()`
/// is plain `gprof prog gmon.out`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AnalysisOptions {
    /// Symbol selection (`-a`, `-D`).
    pub symtab: SymtabOptions,
    /// `-c`: add the static call graph found by scanning the code for calls.
    pub static_call_graph: bool,
    /// User symspecs in command-line order.
    pub specs: Vec<SymSpec>,
    /// `argv[0]` as gprof uses it in messages.
    pub whoami: String,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            symtab: SymtabOptions::default(),
            static_call_graph: false,
            specs: Vec::new(),
            whoami: "gprof".to_string(),
        }
    }
}

/// Symbols gprof always keeps out of time, graph and flat (added after the user's specs).
pub const DEFAULT_EXCLUDED: [&str; 6] = [
    "_gprof_mcount",
    "mcount",
    "_mcount",
    "__mcount",
    "__mcount_internal",
    "__mcleanup",
];

/// The user specs plus gprof's default exclusions, in the order gprof adds them.
pub fn specs_with_defaults(user: &[SymSpec]) -> Vec<SymSpec> {
    let mut v = user.to_vec();
    for name in DEFAULT_EXCLUDED {
        for table in [TableId::ExclTime, TableId::ExclGraph, TableId::ExclFlat] {
            v.push(SymSpec {
                spec: name.to_string(),
                table,
            });
        }
    }
    v
}
