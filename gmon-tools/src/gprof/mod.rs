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
//! The engine has two halves, and the text half only uses the analysis half:
//!
//! * [`analysis`] follows gprof's pipeline (spec/gprof.md describes each step):
//!   [`analysis::symtab`] (which ELF symbols count) → [`analysis::symspec`] (option filters) →
//!   reading profiles: [`Histograms::add`] and [`CallGraph::tally`] →
//!   [`analysis::hist::assign_samples`] → [`CallGraph::assemble`]; [`analysis::lines`] builds
//!   gprof's line symbols, [`analysis::sort`] is its copy of glibc's merge sort.
//! * [`text`] is GNU gprof's output: the printers [`text::flat`], [`text::graph`],
//!   [`text::index`] and [`text::execcount`] write GNU's exact text to any `impl Write` (names
//!   through [`text::names`], numbers through [`text::fmt`]'s C `printf` emulation);
//!   [`text::args`] parses gprof's command line; [`run`] reads the files as gprof does (layout,
//!   byte order and pointer width from the executable) and ties it all together for
//!   `gmon gprof`.
//!
//! The executable itself is read by the `gmon_binary` crate (ELF, symbols, DWARF); errors
//! are GNU gprof's exact text ([`GprofError`]).
//!
//! Extension points for the line-level features (`-l`, `-A`, `-C`, `-r`, `-R`, DWARF) are
//! marked `EXTENSION POINT (lines)` in [`run`]: line symbols go into the symbol table before
//! [`SymbolTable::finalize`], source files through [`SymbolTable::attach_source`].

pub mod analysis;
pub mod text;

pub use analysis::{
    Analysis, AnalysisBuilder, AnalysisOptions, ArcStats, CallGraph, CycleStats, FileInfo,
    FunctionStats, Histograms, SourceFile, SpecTables, SymSpec, Symbol, SymbolTable, SymtabOptions,
    TableId,
};
pub use text::run::run;

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
