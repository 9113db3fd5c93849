//! The compact JSON the report page reads (spec/report.md §2): one string table for names and
//! one for files, then column arrays indexed by function, arc, flame node and hot line, so that
//! a 20,000-function profile is a few hundred kilobytes and the page parses it in one
//! `JSON.parse`. Field names are short because each is written once per array, not per row.

use serde::Serialize;

/// Everything the page shows; serialized into a `<script type="application/json">` element.
#[derive(Debug, Default, Serialize)]
pub struct ReportData {
    /// Layout version of this data (the page refuses another).
    pub v: u32,
    /// The header.
    pub meta: Meta,
    /// Source file names, indexed by [`Functions::file`] and [`HotLines::file`].
    pub files: Vec<String>,
    /// The functions (columns).
    #[serde(rename = "fn")]
    pub functions: Functions,
    /// The caller → callee arcs (columns).
    pub arcs: Arcs,
    /// The merged stacks as a tree in depth-first order (columns).
    pub flame: FlameNodes,
    /// Source lines with samples (columns), grouped by function.
    pub lines: HotLines,
}

/// What the header says.
#[derive(Debug, Default, Serialize)]
pub struct Meta {
    /// The executable's path.
    pub program: String,
    /// Its GNU build id in hex, when it has one.
    pub build_id: Option<String>,
    /// The profiles read (summed).
    pub profiles: Vec<String>,
    /// When the newest profile was written (UTC, `YYYY-MM-DD HH:MM:SS`), from its mtime.
    pub when: Option<String>,
    /// Histogram samples per second (0 without a histogram).
    pub rate: u32,
    /// Samples in the stacks drawn.
    pub samples: u64,
    /// Samples outside every function: in no stack.
    pub outside: u64,
    /// `exact` or `estimated`.
    pub stacks: &'static str,
    /// Whether call counts exist (a `-pg` program; the runtime samples stacks, not calls).
    pub has_calls: bool,
    /// What the report could not keep or show, one sentence each.
    pub dropped: Vec<String>,
    /// The notes the loader gave (stale sidecar, stripped executable, ...).
    pub notes: Vec<String>,
    /// For recorded runs: one entry per executable profiled.
    pub processes: Vec<RecordedExecutable>,
}

/// One executable of a `gmon record` run, from its profile's sidecar.
#[derive(Debug, Default, Serialize)]
pub struct RecordedExecutable {
    /// The executable's path as the runtime recorded it.
    pub exe: String,
    /// The profile it was written to.
    pub profile: String,
    /// The (first) process id.
    pub pid: u32,
    /// Threads that took samples.
    pub threads: usize,
    /// Samples the runtime counted.
    pub samples: u64,
    /// Samples dropped (a full table, a busy handler).
    pub dropped: u64,
    /// The sampling clock.
    pub clock: String,
}

/// Per function, one entry per column; function `i` is entry `i` of each.
#[derive(Debug, Default, Serialize)]
pub struct Functions {
    /// Name table: the frame name (demangled, told apart when two functions share a name).
    pub name: Vec<String>,
    /// Index into [`ReportData::files`], or -1.
    pub file: Vec<i64>,
    /// First line (0 unknown).
    pub line: Vec<u32>,
    /// Start address, as `0x…` hex (empty when unknown, e.g. a cycle).
    pub addr: Vec<String>,
    /// Samples in the function itself.
    #[serde(rename = "self")]
    pub self_samples: Vec<u64>,
    /// Samples of the stacks it is on (counted once per stack).
    pub total: Vec<u64>,
    /// Calls from other functions (-1: not counted).
    pub calls: Vec<i64>,
    /// Recursive calls to itself.
    pub rec: Vec<u64>,
}

/// Per arc, one entry per column.
#[derive(Debug, Default, Serialize)]
pub struct Arcs {
    /// Caller's function index.
    pub from: Vec<u32>,
    /// Callee's function index.
    pub to: Vec<u32>,
    /// Calls counted (-1: not counted, the arc only seen in sampled stacks).
    pub calls: Vec<i64>,
    /// Samples of the stacks where the caller directly calls the callee.
    pub samples: Vec<u64>,
}

/// The flame tree: node `i`'s parent is `parent[i] - 1` (0: a root), its function `f[i]`, its
/// samples `v[i]` (its own plus its children's). Nodes are in depth-first order, children in
/// name order, so a parent always comes before its children.
#[derive(Debug, Default, Serialize)]
pub struct FlameNodes {
    /// Parent index + 1 (0 for a root).
    pub parent: Vec<u32>,
    /// Function index.
    pub f: Vec<u32>,
    /// Samples.
    pub v: Vec<u64>,
}

/// Per hot source line, one entry per column, grouped by function in function order.
#[derive(Debug, Default, Serialize)]
pub struct HotLines {
    /// Function index.
    pub f: Vec<u32>,
    /// Index into [`ReportData::files`], or -1.
    pub file: Vec<i64>,
    /// Line number.
    pub line: Vec<u32>,
    /// Samples credited to the line (hundredths, as gprof -l credits fractions).
    pub samples: Vec<f64>,
}
