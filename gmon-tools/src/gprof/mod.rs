//! The gprof engine: GNU gprof 2.40's analysis and reports, byte for byte.
//!
//! The analysis is a library that other commands (flame graphs, pprof, merge/diff) reuse:
//!
//! ```no_run
//! use gmon_tools::gprof::{Analysis, AnalysisOptions, Image};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let image = Image::open("./prog".as_ref(), "gprof")?;
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
//! The pipeline follows gprof (`../shared/reference/gprof-behaviour.md` describes each step):
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

pub mod annotate;
pub mod args;
pub mod blocks;
pub mod blurbs;
pub mod callgraph;
pub mod debuglink;
pub mod demangle;
mod die_walk;
pub mod dwarf;
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
pub mod symspec;
pub mod symtab;

use gmon_format::{Profile, Record, Variant};

pub use callgraph::CallGraph;
pub use hist::Histograms;
pub use report::run;
pub use symspec::{SpecTables, SymSpec, TableId};
pub use symtab::{Image, SourceFile, Symbol, SymbolTable, SymtabOptions};

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
        let text = match err.kind() {
            std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
            _ => {
                let s = err.to_string();
                match s.find(" (os error") {
                    Some(i) => s[..i].to_string(),
                    None => s,
                }
            }
        };
        GprofError::new(format!("{name}: {text}\n"))
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

/// Counts of what one profile file contained (what `-i` prints).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    /// Header version (0 for BSD files).
    pub version: u32,
    /// Histogram records.
    pub histograms: usize,
    /// Call-graph arc records.
    pub arcs: usize,
    /// Basic-block count records.
    pub bb_records: usize,
}

/// Builds an [`Analysis`] the way gprof does: symbols first, then each profile as it is read,
/// then the histogram credit and the call graph.
#[derive(Debug)]
pub struct AnalysisBuilder {
    symtab: SymbolTable,
    specs: SpecTables,
    hist: Histograms,
    graph: CallGraph,
    has_arcs: bool,
    has_bb: bool,
    whoami: String,
    static_call_graph: bool,
}

impl AnalysisBuilder {
    /// Reads `image`'s function symbols and resolves the specs.
    pub fn new(image: &Image, opts: &AnalysisOptions) -> Result<AnalysisBuilder, GprofError> {
        let symtab = SymbolTable::from_image(image, &opts.symtab, &opts.whoami)?;
        Ok(AnalysisBuilder::with_symtab(symtab, opts))
    }

    /// Starts from a symbol table built elsewhere (e.g. with line symbols added, or source files
    /// attached).
    pub fn with_symtab(symtab: SymbolTable, opts: &AnalysisOptions) -> AnalysisBuilder {
        let specs = SpecTables::build(&specs_with_defaults(&opts.specs), &symtab);
        let graph = CallGraph::new(symtab.len());
        AnalysisBuilder {
            symtab,
            specs,
            hist: Histograms::default(),
            graph,
            has_arcs: false,
            has_bb: false,
            whoami: opts.whoami.clone(),
            static_call_graph: opts.static_call_graph,
        }
    }

    /// The symbol table.
    pub fn symtab(&self) -> &SymbolTable {
        &self.symtab
    }

    /// Adds one profile (`name` is used in messages): histogram records are combined, arcs
    /// tallied in file order.
    pub fn add_profile(&mut self, name: &str, profile: &Profile) -> Result<FileInfo, GprofError> {
        let bsd = match profile.header.variant() {
            Variant::Gnu => None,
            Variant::Bsd44 => Some(true),
            Variant::BsdOld => Some(false),
        };
        let mut info = FileInfo {
            version: match profile.header {
                gmon_format::Header::Gnu(h) => h.version,
                _ => 0,
            },
            ..FileInfo::default()
        };
        // gprof's BSD reader always reports call-graph input, arcs or not.
        if bsd.is_some() {
            self.has_arcs = true;
        }
        if self.graph.arcs.is_empty() {
            let arcs = profile
                .records
                .iter()
                .filter(|r| matches!(r, Record::Arc(_)));
            self.graph.reserve(arcs.count());
        }
        for r in &profile.records {
            match r {
                Record::Histogram(h) => {
                    self.hist.add(h, name, &self.whoami, bsd)?;
                    // `-i` counts a BSD file's histogram only when it has bins.
                    if bsd.is_none() || !h.bins.is_empty() {
                        info.histograms += 1;
                    }
                }
                Record::Arc(a) => {
                    self.has_arcs = true;
                    info.arcs += 1;
                    self.graph
                        .tally(&self.symtab, &self.specs, a.from_pc, a.self_pc, a.count);
                }
                Record::BasicBlocks(_) => {
                    self.has_bb = true;
                    info.bb_records += 1;
                }
            }
        }
        self.graph.profile_done();
        Ok(info)
    }

    /// Whether some basic-block record was read (gprof warns that it ignores them without `-l`).
    pub fn has_basic_blocks(&self) -> bool {
        self.has_bb
    }

    /// The histograms read so far.
    pub fn histograms(&self) -> &Histograms {
        &self.hist
    }

    /// The arcs tallied so far (before assembly).
    pub fn graph(&mut self) -> &CallGraph {
        self.graph.flush();
        &self.graph
    }

    /// Whether any arc record was read.
    pub fn has_arcs(&self) -> bool {
        self.has_arcs
    }

    /// Credits the histogram and assembles the call graph.
    pub fn finish(self, image: Option<&Image>) -> Result<Analysis, GprofError> {
        let AnalysisBuilder {
            symtab,
            specs,
            hist,
            mut graph,
            has_arcs,
            whoami,
            static_call_graph,
            ..
        } = self;
        let credit = if hist.is_present() {
            let syms = &symtab.symbols;
            hist::assign_samples(&hist, &symtab, &|j| {
                syms.get(j)
                    .is_some_and(|s| specs.selected(TableId::InclFlat, TableId::ExclFlat, s.addr))
            })
        } else {
            hist::Credit {
                time: vec![0.0; symtab.len()],
                total_time: 0.0,
            }
        };
        let mut static_arcs: Box<dyn FnMut(usize) -> Vec<usize>> = Box::new(|_| Vec::new());
        let mut warnings = Vec::new();
        if static_call_graph && has_arcs {
            match image.map(|i| (i, i.machine)) {
                Some((img, goblin::elf::header::EM_X86_64 | goblin::elf::header::EM_386)) => {
                    let finder = StaticCalls::new(img, &symtab, &hist);
                    static_arcs = Box::new(move |p| finder.calls_from(p));
                }
                Some((_, m)) => {
                    warnings.push(format!(
                        "{whoami}: -c not supported on architecture {}\n",
                        arch_name(m)
                    ));
                }
                None => {}
            }
        }
        if has_arcs {
            graph.assemble(&symtab, &specs, &credit.time, &mut *static_arcs);
            if let Some(msg) = graph.dfn_error {
                return Err(GprofError::new(msg.to_string()));
            }
        } else {
            graph.flush();
            for (n, &t) in graph.nodes.iter_mut().zip(&credit.time) {
                n.time = t;
            }
        }
        drop(static_arcs);
        for _ in 0..graph.toporder_botches {
            warnings.push("[propagate] toporder botches\n".to_string());
        }
        Ok(Analysis {
            symtab,
            specs,
            hist,
            total_time: credit.total_time,
            graph,
            has_arcs,
            warnings,
            demangled: names::Demangled::default(),
        })
    }
}

fn arch_name(machine: u16) -> String {
    use goblin::elf::header::*;
    match machine {
        EM_AARCH64 => "aarch64".into(),
        EM_ARM => "arm".into(),
        EM_PPC => "powerpc".into(),
        EM_PPC64 => "powerpc".into(),
        EM_RISCV => "riscv".into(),
        EM_S390 => "s390".into(),
        EM_MIPS => "mips".into(),
        EM_SPARC | EM_SPARCV9 => "sparc".into(),
        m => format!("{m}"),
    }
}

/// gprof's x86 `-c` scanner: every `0xE8` byte of a symbol's code is taken as `call rel32`; the
/// 32-bit displacement is zero-extended (so only forward calls are found on a 64-bit host), the
/// target must lie in a histogram and start a symbol.
struct StaticCalls<'a> {
    text: Option<&'a [u8]>,
    text_vma: u64,
    syms: &'a SymbolTable,
    ranges: Vec<(u64, u64)>,
}

impl<'a> StaticCalls<'a> {
    fn new(image: &'a Image, syms: &'a SymbolTable, hist: &Histograms) -> StaticCalls<'a> {
        StaticCalls {
            text: image.text_bytes(),
            text_vma: image.text_vma,
            syms,
            ranges: hist.records.iter().map(|r| (r.low_pc, r.high_pc)).collect(),
        }
    }

    /// Clips `[lo, hi)` to the histogram record it intersects.
    fn clip(&self, lo: u64, hi: u64) -> Option<(u64, u64)> {
        self.ranges
            .iter()
            .find(|&&(l, h)| lo < h && l < hi)
            .map(|&(l, h)| (lo.max(l), hi.min(h)))
    }

    fn in_hist(&self, a: u64) -> bool {
        let a = a & 0xffff_ffff;
        self.ranges
            .iter()
            .any(|&(l, h)| (l & 0xffff_ffff) <= a && a < (h & 0xffff_ffff))
    }

    fn calls_from(&self, p: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let (Some(text), Some(sym)) = (self.text, self.syms.symbols.get(p)) else {
            return out;
        };
        let next = self.syms.symbols.get(p + 1).map_or(0, |s| s.addr);
        let Some((lo, hi)) = self.clip(sym.addr, next) else {
            return out;
        };
        let mut pc = lo;
        while pc < hi {
            let off = pc.wrapping_sub(self.text_vma) as usize;
            if pc >= self.text_vma
                && text.get(off) == Some(&0xe8)
                && let Some(d) = text.get(off + 1..off + 5)
            {
                let disp = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as u64;
                let dest = disp.wrapping_add(pc).wrapping_add(5);
                if self.in_hist(dest)
                    && let Some(c) = self.syms.lookup(dest)
                    && self.syms.symbols.get(c).is_some_and(|s| s.addr == dest)
                {
                    out.push(c);
                    pc += 5;
                    continue;
                }
            }
            pc += 1;
        }
        out
    }
}

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
    /// Demangled names, shared by the reports' name printers (see [`names::Demangled`]).
    pub(crate) demangled: names::Demangled,
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
        demangle::demangle(self.name, demangle::Style::Auto)
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
        self.hist
            .records
            .iter()
            .flat_map(|r| r.bins.iter())
            .fold(0u64, |a, &b| a.wrapping_add(b))
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
