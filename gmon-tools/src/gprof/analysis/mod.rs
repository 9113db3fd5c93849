//! gprof's analysis: the symbol table, the option filters, the histograms credited to
//! symbols, the call graph with its cycles and propagated time, and the result every view
//! reads ([`Analysis`]: per-function statistics, arcs and cycles). Nothing here prints.

pub mod blocks;
mod builder;
pub mod callgraph;
pub mod hist;
pub mod lines;
pub(crate) mod names_shown;
pub mod sort;
mod static_calls;
pub mod symspec;
pub mod symtab;

use gmon_binary::Image;
use gmon_format::Profile;

pub use builder::{AnalysisBuilder, FileInfo};
pub use callgraph::CallGraph;
pub use hist::Histograms;
pub use symspec::{SpecTables, SymSpec, TableId};
pub use symtab::{SourceFile, Symbol, SymbolTable, SymtabOptions};

use crate::gprof::GprofError;

/// The result of gprof's analysis of one executable and its profiles.
#[derive(Debug)]
pub struct Analysis {
    /// The symbol table (function symbols, plus line symbols in line mode).
    pub symtab: SymbolTable,
    /// The resolved symspec tables.
    pub specs: SpecTables,
    /// The combined histograms (rate, dimension, scale, bins).
    pub hist: Histograms,
    /// gprof's `total_time`: all sampled ticks (minus filtered-out credit), before the flat
    /// profile's "no time" fix-up.
    pub total_time: f64,
    /// Call graph: per-symbol nodes (self time, calls, propagated times, cycles) and arcs.
    pub graph: CallGraph,
    /// Whether any arc record was read (gprof prints the call graph only then).
    pub has_arcs: bool,
    /// Non-fatal messages gprof prints on stderr during the analysis.
    pub warnings: Vec<String>,
    /// Demangled names, shared by the reports' name printers (see `names_shown::Demangled`).
    pub(crate) demangled: names_shown::Demangled,
}

/// One function's numbers, as the reports use them.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionStats<'a> {
    /// Index in [`SymbolTable::symbols`] (address order).
    pub index: usize,
    /// Raw (mangled) name.
    pub name: &'a str,
    /// First address.
    pub addr: u64,
    /// Last address owned (inclusive).
    pub end_addr: u64,
    /// A local (`static`) symbol.
    pub is_static: bool,
    /// Histogram ticks credited to the function itself.
    pub self_ticks: f64,
    /// `self_ticks / hz`.
    pub self_seconds: f64,
    /// Calls from other functions (self-recursive calls excluded).
    pub calls: u64,
    /// Self-recursive calls.
    pub self_calls: u64,
    /// Unweighted descendants' ticks (the flat profile's "total" column uses this).
    pub child_ticks: f64,
    /// Self ticks as the call graph prints them (weighted by the propagation fraction).
    pub graph_self_ticks: f64,
    /// Descendants' ticks as the call graph prints them.
    pub graph_child_ticks: f64,
    /// Cycle number (1-based), if the function is in a cycle.
    pub cycle: Option<u32>,
    /// Index in the call graph listing (`[n]`), 0 when no call graph was assembled.
    pub graph_index: u32,
}

impl FunctionStats<'_> {
    /// The name as gprof prints it (binutils-style demangling; the raw name if not mangled).
    pub fn demangled(&self) -> String {
        gmon_demangle::demangle(self.name, gmon_demangle::Style::Auto)
            .unwrap_or_else(|| self.name.to_string())
    }
}

/// One arc between two functions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArcStats {
    /// Caller's index in [`SymbolTable::symbols`].
    pub parent: usize,
    /// Callee's index.
    pub child: usize,
    /// Number of calls.
    pub count: u64,
    /// Callee self ticks propagated to the caller along this arc.
    pub time_ticks: f64,
    /// Callee descendants' ticks propagated along this arc.
    pub child_ticks: f64,
}

/// A cycle of mutually recursive functions.
#[derive(Clone, Debug, PartialEq)]
pub struct CycleStats {
    /// Cycle number (1-based).
    pub number: u32,
    /// Member symbol indices (head first).
    pub members: Vec<usize>,
    /// Calls into the cycle from outside.
    pub calls: u64,
    /// Calls between members.
    pub internal_calls: u64,
    /// Members' self ticks summed.
    pub self_ticks: f64,
    /// Descendants' ticks (weighted) outside the cycle.
    pub graph_child_ticks: f64,
}

impl Analysis {
    /// Runs the whole analysis over `profiles` (in order) for `image`.
    pub fn new(
        image: &Image,
        profiles: &[Profile],
        opts: &AnalysisOptions,
    ) -> Result<Analysis, GprofError> {
        let mut b = AnalysisBuilder::new(image, opts)?;
        for (i, p) in profiles.iter().enumerate() {
            b.add_profile(&format!("profile #{}", i + 1), p)?;
        }
        b.finish(Some(image))
    }

    /// Sampling rate (ticks per second); 0 when no histogram was read.
    pub fn hz(&self) -> u32 {
        self.hist.hz
    }

    /// Total histogram samples over all bins (in or outside functions).
    pub fn total_samples(&self) -> u64 {
        let mut total = 0u64;
        for r in &self.hist.records {
            r.bins
                .for_each_nonzero(|_, c| total = total.wrapping_add(c));
        }
        total
    }

    /// Converts ticks to seconds (`ticks / hz`; unchanged when `hz` is 0).
    pub fn seconds(&self, ticks: f64) -> f64 {
        if self.hist.hz == 0 {
            ticks
        } else {
            ticks / self.hist.hz as f64
        }
    }

    /// Statistics of symbol `i`.
    pub fn function(&self, i: usize) -> Option<FunctionStats<'_>> {
        let s = self.symtab.symbols.get(i)?;
        let n = self.graph.nodes.get(i)?;
        Some(FunctionStats {
            index: i,
            name: &s.name,
            addr: s.addr,
            end_addr: s.end_addr,
            is_static: s.is_static,
            self_ticks: n.time,
            self_seconds: self.seconds(n.time),
            calls: n.ncalls,
            self_calls: n.self_calls,
            child_ticks: n.child_time,
            graph_self_ticks: n.prop_self,
            graph_child_ticks: n.prop_child,
            cycle: (n.cyc_num != 0).then_some(n.cyc_num),
            graph_index: n.index,
        })
    }

    /// Every symbol's statistics, in address order.
    pub fn functions(&self) -> impl Iterator<Item = FunctionStats<'_>> + '_ {
        (0..self.symtab.len()).filter_map(|i| self.function(i))
    }

    /// Every arc, in creation order (first appearance in the input).
    pub fn arcs(&self) -> impl Iterator<Item = ArcStats> + '_ {
        self.graph.arcs.iter().map(|a| ArcStats {
            parent: a.parent,
            child: a.child,
            count: a.count,
            time_ticks: a.time,
            child_ticks: a.child_time,
        })
    }

    /// Every cycle, by number.
    pub fn cycles(&self) -> Vec<CycleStats> {
        (0..self.graph.ncycles)
            .filter_map(|c| {
                let hdr = (self.graph.nsyms + c) as u32;
                let n = self.graph.nodes.get(hdr as usize)?;
                Some(CycleStats {
                    number: n.cyc_num,
                    members: self.graph.members(hdr).map(|m| m as usize).collect(),
                    calls: n.ncalls,
                    internal_calls: n.self_calls,
                    self_ticks: n.time,
                    graph_child_ticks: n.prop_child,
                })
            })
            .collect()
    }
}

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
