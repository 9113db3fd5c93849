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
    /// `profile` (one program or a process tree) or `diff` (BASE against NEW).
    pub kind: &'static str,
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
    /// A differential report's verdicts (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffData>,
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
    /// For a process tree (profiles of several executables): one entry per executable, whose
    /// root frame the flame graph draws; empty otherwise.
    pub tree: Vec<TreeExecutable>,
}

/// One executable of a process tree (spec/stacks.md §12).
#[derive(Debug, Default, Serialize)]
pub struct TreeExecutable {
    /// Its root frame's name (the file name, or the path when two share one).
    pub root: String,
    /// The executable's path.
    pub exe: String,
    /// Its profiles (`gmon record` sums the processes of one executable into one).
    pub profiles: Vec<String>,
    /// Processes that ran it: the sum of its profiles' process counts (spec/runtime.md §5.14;
    /// a sidecar that does not say counts as one).
    pub processes: u64,
    /// Threads that took samples.
    pub threads: u64,
    /// Samples drawn under its root.
    pub samples: u64,
    /// Its function's index in [`Functions`] (the root frame's pseudo-function).
    pub f: u32,
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
    /// The processes its profile sums (`gmon record` writes one profile per executable).
    pub processes: u64,
    /// Threads that took samples.
    pub threads: u64,
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
    /// For a process tree: the index in [`Meta::tree`] of the executable the function is in
    /// (absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exe: Vec<u32>,
}

impl Functions {
    /// Adds a pseudo-function (a `<cycle N>`, a process tree's root frame): a name and the
    /// samples of the stacks through it, nothing else known.
    pub(super) fn push_pseudo(&mut self, name: String, total: u64) -> u32 {
        let i = self.name.len() as u32;
        self.name.push(name);
        self.file.push(-1);
        self.line.push(0);
        self.addr.push(String::new());
        self.self_samples.push(0);
        self.total.push(total);
        self.calls.push(-1);
        self.rec.push(0);
        i
    }

    /// Appends a part's functions (a process tree's executable), their files through `file`
    /// into this report's table, all of executable `exe`.
    pub(super) fn append(&mut self, part: &Functions, file: impl Fn(i64) -> i64, exe: u32) {
        self.name.extend(part.name.iter().cloned());
        self.file.extend(part.file.iter().map(|&i| file(i)));
        self.line.extend(&part.line);
        self.addr.extend(part.addr.iter().cloned());
        self.self_samples.extend(&part.self_samples);
        self.total.extend(&part.total);
        self.calls.extend(&part.calls);
        self.rec.extend(&part.rec);
        self.exe.extend(std::iter::repeat_n(exe, part.name.len()));
    }
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
    /// Differential graphs: each node's colour, an index into [`DiffData::palette`] (absent
    /// otherwise: the page colours by name, as `gmon flame` does).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub c: Vec<u32>,
}

impl FlameNodes {
    /// Appends a part's tree (a process tree's executable) under a new root node of function
    /// `root_f` holding `samples`; the part's functions start at `offset`. The part is depth
    /// first already, so the root goes just before its nodes. Colours are the caller's.
    pub(super) fn graft(&mut self, root_f: u32, samples: u64, part: &FlameNodes, offset: u32) {
        let root_node = self.parent.len() as u32 + 1;
        self.parent.push(0);
        self.f.push(root_f);
        self.v.push(samples);
        self.parent.extend(
            part.parent
                .iter()
                .map(|&p| if p == 0 { root_node } else { p + root_node }),
        );
        self.f.extend(part.f.iter().map(|&i| i + offset));
        self.v.extend(&part.v);
    }
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
    /// Where the line's code was inlined from and into ("inlined from mix at inlined.c:11
    /// into work at inlined.c:21"; several places joined by "; "), empty for a function's own
    /// code. Absent when no line is inlined code.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlined: Vec<String>,
}

/// What a differential report adds (spec/report.md §4): the comparison's header, the palette of
/// the flame graph's colours, and per function the verdict's numbers.
#[derive(Debug, Default, Serialize)]
pub struct DiffData {
    /// How the verdicts were made and what they found.
    pub head: DiffHead,
    /// Colours (`rgb(r,g,b)`) of the flame graph's frames, indexed by [`FlameNodes::c`].
    pub palette: Vec<String>,
    /// Per function, one entry per column.
    #[serde(rename = "fn")]
    pub functions: DiffColumns,
    /// For two process trees: one entry per executable, whose root frame the flame graph draws
    /// and whose index [`Functions::exe`] gives (absent otherwise; spec/report.md §6).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tree: Vec<DiffExecutable>,
}

/// One executable of two compared process trees: a pair, or one only a side ran.
#[derive(Debug, Default, Serialize)]
pub struct DiffExecutable {
    /// Its root frame's name (the file name, or the path when two share one).
    pub root: String,
    /// Its function's index in [`Functions`] (the root frame's pseudo-function).
    pub f: u32,
    /// BASE's executable (empty: only NEW ran it).
    pub base_exe: String,
    /// NEW's executable (empty: only BASE ran it).
    pub new_exe: String,
    /// How the two were paired: `path`, `build-id`, `file-name`; empty for one side only.
    pub matched_by: String,
    /// BASE's samples of it.
    pub base_samples: u64,
    /// NEW's samples of it.
    pub new_samples: u64,
    /// The level its comparison ran at (the tree's, with one correction over every pair's
    /// functions; 0: not compared).
    pub level: f64,
    /// Its functions tested.
    pub tested: usize,
    /// Its functions called a change.
    pub changes: usize,
    /// Its functions within noise.
    pub noise: usize,
    /// Its functions with too few samples.
    pub too_few: usize,
}

/// The comparison's header.
#[derive(Debug, Default, Serialize)]
pub struct DiffHead {
    /// `function` or `address-range`.
    pub granularity: String,
    /// BASE's profiles.
    pub base: Vec<String>,
    /// NEW's profiles.
    pub new: Vec<String>,
    /// BASE's samples.
    pub base_samples: u64,
    /// NEW's samples.
    pub new_samples: u64,
    /// `sampling` or `run-to-run`.
    pub model: String,
    /// The run-to-run dispersion (assumed for the sampling model, measured for run-to-run).
    pub dispersion: f64,
    /// The per-run jitter of a function's own time (0: none measured; spec/diff.md §3).
    pub jitter: f64,
    /// The family-wise level.
    pub level: f64,
    /// The multiple-testing correction (`holm`).
    pub correction: String,
    /// Entries with fewer samples (both sides) are not tested.
    pub min_samples: f64,
    /// Entries tested.
    pub tested: usize,
    /// Entries called a change.
    pub changes: usize,
    /// Entries within noise.
    pub noise: usize,
    /// Entries with too few samples.
    pub too_few: usize,
    /// Whether the totals differ (changes are of shares; BASE scaled for the graph).
    pub normalized: bool,
    /// Stacks of the flame graph tested, and how many are changes (coloured).
    pub frames_tested: usize,
    /// Stacks that are changes.
    pub frames_changed: usize,
    /// What the colours of the graph mean, one sentence.
    pub colours: String,
}

/// Per function of a differential report (function `i` is entry `i` of each; functions that
/// are frames of the graph but no entry of the comparison have verdict -1).
#[derive(Debug, Default, Serialize)]
pub struct DiffColumns {
    /// BASE's share of its samples (0 to 1).
    pub sb: Vec<f64>,
    /// NEW's share.
    pub sn: Vec<f64>,
    /// The change in share, with its interval's low and high ends.
    pub ds: Vec<f64>,
    /// Low end of the interval.
    pub lo: Vec<f64>,
    /// High end of the interval.
    pub hi: Vec<f64>,
    /// BASE's self samples.
    pub bs: Vec<f64>,
    /// NEW's self samples.
    pub ns: Vec<f64>,
    /// BASE's calls.
    pub cb: Vec<u64>,
    /// NEW's calls.
    pub cn: Vec<u64>,
    /// The verdict: 0 change, 1 within noise, 2 too few samples, -1 not compared.
    pub vd: Vec<i8>,
    /// Whether the exact call count changed (1) or not (0).
    pub cc: Vec<u8>,
    /// Holm-adjusted p-value (-1: not tested).
    pub p: Vec<f64>,
    /// `both`, `added` or `removed` (empty: not compared).
    pub st: Vec<&'static str>,
}

impl DiffColumns {
    /// Appends a part's rows (a process tree's executable).
    pub(super) fn append(&mut self, part: &DiffColumns) {
        self.sb.extend(&part.sb);
        self.sn.extend(&part.sn);
        self.ds.extend(&part.ds);
        self.lo.extend(&part.lo);
        self.hi.extend(&part.hi);
        self.bs.extend(&part.bs);
        self.ns.extend(&part.ns);
        self.cb.extend(&part.cb);
        self.cn.extend(&part.cn);
        self.vd.extend(&part.vd);
        self.cc.extend(&part.cc);
        self.p.extend(&part.p);
        self.st.extend(&part.st);
    }
}
