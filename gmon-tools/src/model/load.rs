//! From files to stacks: reads the gmon.out files, runs the gprof engine's analysis on the
//! executable, and turns its result into a [`WeightedCallGraph`] and [`Stacks`] (exact ones when the
//! runtime's sidecar has them, estimated ones otherwise). Shared by `gmon flame` and
//! `gmon pprof`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gmon_format::sidecar::Counters;
use gmon_format::{Sidecar, read_sidecar, sidecar_path};

use super::addresses::CallSite;
use super::bins::attach_histogram_pieces;
use super::estimate::{StackSource, Stacks, estimate_stacks};
use super::exact::exact_stacks;
use super::executable::Executable;
use super::function::{BinSample, FunctionInfo};
use super::graph::{CycleGroup, GraphError, NodeId, WeightedCallGraph};
use super::objects::{LoadedObject, executable_object, sidecar_objects};
use super::operands::{OperandKind, executable_and_profiles, operand_kind};
use super::place_lines::{line_at, locate_places, share_place_lines};
use super::symbolize::{ObjectFunction, ObjectSymbols};
use crate::error::Context;
use crate::gprof::analysis::lines::{attach_function_sources, line_symbol_table};
use crate::gprof::analysis::symtab::Symbol;
use crate::gprof::{Analysis, AnalysisBuilder, AnalysisOptions, SymbolTable};
use crate::{Error, Result};
use gmon_binary::Image;
use gmon_binary::dwarf::LineInfo;

/// Everything the flame and pprof writers need.
#[derive(Debug)]
pub struct Loaded {
    /// One node per symbol of the executable (address order), plus nodes for shared objects
    /// and unknown code when exact stacks reach them.
    pub graph: WeightedCallGraph,
    /// The stacks to draw, in whole samples.
    pub stacks: Stacks,
    /// For estimated stacks: the same estimation weighted by each function's CPU time in
    /// nanoseconds, gprof's fractional credit × 10⁹ / rate, so that pprof's `cpu` values are
    /// gprof's self seconds exactly (whole samples cannot always be: see spec/stacks.md §7).
    pub cpu_stacks: Option<Stacks>,
    /// Per node: mangled name, address, DWARF file and line.
    pub functions: Vec<FunctionInfo>,
    /// The executable: path and build id.
    pub executable: Executable,
    /// Histogram ticks per second (0 without a histogram).
    pub prof_rate: u32,
    /// Things the user should know (stale sidecar, build-id mismatch), one sentence each.
    pub notes: Vec<String>,
    /// The gprof engine's analysis the graph was made from (what `gmon diff` compares).
    pub analysis: Analysis,
    /// The runtime's counters summed over the sidecars whose exact stacks are drawn (ticks
    /// counted, dropped, stacks cut short); `None` for estimated stacks.
    pub runtime_counters: Option<Counters>,
    /// The objects the addresses are placed in (spec/stacks.md §7, "Mappings"): the
    /// executable first, at link-time addresses; with exact stacks every object the sidecars
    /// record, at the load address of the first process that mapped it.
    pub objects: Vec<LoadedObject>,
    /// The objects among [`Loaded::objects`] (by path) whose places got source lines from
    /// their DWARF.
    pub objects_with_lines: Vec<String>,
}

/// Which executable to use: the one given, else the one the first profile's sidecar names (if
/// it still exists), else `a.out` as gprof does.
pub fn choose_executable(exe: Option<&Path>, gmon: &[PathBuf]) -> PathBuf {
    choose_executable_saying_why(exe, gmon)
        .0
        .path()
        .to_path_buf()
}

/// The executable the runtime's sidecar of `profile` names, when it is still there: `Ok(None)`
/// when the profile has no sidecar, `Err(why)` when the sidecar cannot give one.
fn sidecar_executable(profile: &Path) -> Result<Option<PathBuf>, String> {
    let side = sidecar_path(profile);
    let Ok(bytes) = gmon_binary::open::read_found(&side) else {
        return Ok(None);
    };
    match read_sidecar(&bytes) {
        Err(e) => Err(format!(
            "its sidecar {} cannot be read ({e})",
            side.display()
        )),
        Ok(sidecar) => match sidecar.main_object() {
            None => Err(format!(
                "its sidecar {} names no executable",
                side.display()
            )),
            Some(main) if Path::new(&main.path).is_file() => Ok(Some(PathBuf::from(&main.path))),
            Some(main) => Err(format!(
                "the executable its sidecar {} names, {}, is not there",
                side.display(),
                main.path
            )),
        },
    }
}

/// The executable the runtime recorded for `profile` (its sidecar names it and it still
/// exists), for commands that have a view without an executable and prefer it to `a.out`.
pub fn recorded_executable(profile: &Path) -> Option<PathBuf> {
    sidecar_executable(profile).ok().flatten()
}

/// [`choose_executable`], with the reason when it falls back to `a.out` although the first
/// profile has a sidecar (unreadable, naming no executable, or naming one that is gone).
fn choose_executable_saying_why(exe: Option<&Path>, gmon: &[PathBuf]) -> (Chosen, Option<String>) {
    if let Some(e) = exe {
        return (Chosen::Named(e.to_path_buf()), None);
    }
    let a_out = Chosen::Named(PathBuf::from("a.out"));
    let Some(first) = gmon.first() else {
        return (a_out, None);
    };
    match sidecar_executable(first) {
        Ok(Some(recorded)) => (Chosen::Recorded(recorded), None),
        Ok(None) => (a_out, None),
        Err(why) => (
            a_out,
            Some(format!(
                "no executable was given for {} and {why}, so a.out is used",
                first.display()
            )),
        ),
    }
}

/// Where the executable's path came from, which decides how it may be opened
/// (spec/inputs.md §1).
enum Chosen {
    /// Given by the user (or gprof's default `a.out`): read as `cat` would.
    Named(PathBuf),
    /// Read from a sidecar: only a regular file is read.
    Recorded(PathBuf),
}

impl Chosen {
    fn path(&self) -> &Path {
        match self {
            Chosen::Named(p) | Chosen::Recorded(p) => p,
        }
    }
}

/// The same operands as [`executable_and_profiles`], for callers that only want the split:
/// an ELF file first (with more operands after it) is the executable. Kinds are not checked.
pub fn split_executable(exe: Option<&Path>, paths: &[PathBuf]) -> (Option<PathBuf>, Vec<PathBuf>) {
    if exe.is_none()
        && let Some((first, rest)) = paths.split_first()
        && !rest.is_empty()
        && operand_kind(first) == OperandKind::Executable
    {
        return (Some(first.clone()), rest.to_vec());
    }
    (exe.map(Path::to_path_buf), paths.to_vec())
}

/// Converts gprof's fractional per-function credit into whole samples that add up to the
/// rounded total: floors first, the rest one each to the largest fractional parts (ties to the
/// lower index). gprof's credit is fractional only where a bin straddles two functions.
pub fn whole_samples(ticks: &[f64]) -> Vec<u64> {
    let clean: Vec<f64> = ticks
        .iter()
        .map(|&t| if t.is_finite() && t > 0.0 { t } else { 0.0 })
        .collect();
    let total: f64 = clean.iter().sum();
    let target = total.round() as u64;
    let mut out: Vec<u64> = clean.iter().map(|&t| t.floor() as u64).collect();
    let given = out.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let mut order: Vec<(f64, usize)> = clean
        .iter()
        .enumerate()
        .map(|(i, &t)| (t - t.floor(), i))
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let left = usize::try_from(target.saturating_sub(given)).unwrap_or(usize::MAX);
    for &(_, i) in order.iter().take(left) {
        if let Some(o) = out.get_mut(i) {
            *o = o.saturating_add(1);
        }
    }
    out
}

/// What [`load_with`] computes beyond the stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Run the gprof engine a second time per source line (as `gprof -l`) to fill
    /// [`FunctionInfo::bins`] for pprof's line-level leaves. Flame graphs do not need it.
    pub line_credit: bool,
    /// Read a profile that fails the checks that it belongs to the executable
    /// ([`check_profile`]), with a note instead of an error (`--force`).
    pub force: bool,
}

impl LoadOptions {
    /// Only what flame graphs need: no per-line credit.
    pub const STACKS_ONLY: LoadOptions = LoadOptions {
        line_credit: false,
        force: false,
    };

    /// The same options with `force` set as given.
    pub fn with_force(self, force: bool) -> LoadOptions {
        LoadOptions { force, ..self }
    }
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            line_credit: true,
            force: false,
        }
    }
}

/// [`load_with`] with every option on.
pub fn load(exe: Option<&Path>, gmon: &[PathBuf]) -> Result<Loaded> {
    load_with(exe, gmon, &LoadOptions::default())
}

/// Reads `gmon` (summed; a leading executable is taken as in [`split_executable`]), analyses
/// them against the executable, and builds the graph and the stacks.
pub fn load_with(exe: Option<&Path>, gmon: &[PathBuf], load: &LoadOptions) -> Result<Loaded> {
    let (exe, gmon) = executable_and_profiles(exe, gmon)?;
    let gmon = gmon.as_slice();
    for path in gmon {
        crate::input::refuse_sidecar(path)?;
    }
    let (chosen, why) = choose_executable_saying_why(exe.as_deref(), gmon);
    let exe_path = chosen.path().to_path_buf();
    let mut notes: Vec<String> = why.iter().cloned().collect();
    // gprof's messages name the file; only their own "gmon: " prefix is dropped (QA #15).
    let opened = match chosen {
        Chosen::Named(_) => Image::open(&exe_path),
        Chosen::Recorded(_) => Image::open_found(&exe_path),
    };
    let image = match opened {
        Ok(image) => image,
        Err(e) => {
            // A profile that is no profile at all is the real problem (`gmon flame hot.c`
            // looked for ./a.out and blamed it): said first, naming that file.
            for path in gmon {
                let bytes = crate::input::read_input(path)?;
                crate::input::parse_profile(path, &bytes, &gmon_format::ReadOptions::default())?;
            }
            return Err(e).with_context(|| match &why {
                Some(why) => format!("cannot read the executable ({why})"),
                None => "cannot read the executable".to_owned(),
            });
        }
    };
    // One parse of the executable for the views (the gprof engine's symbol table and DWARF
    // reader take theirs from the same goblin parse function).
    let elf = gmon_binary::parse_elf(&image.data)
        .with_context(|| format!("{}: not an ELF executable", exe_path.display()))?;
    let executable = Executable::from_elf(&exe_path, &elf, &image.data);
    // The executable's own functions, by the views' rules (clones kept, .dynsym and the unwind
    // table when stripped): spec/stacks.md §9.
    let main_symbols = Some(ObjectSymbols::from_elf(&exe_path, &elf, &image.data));
    let mut profiles = Vec::with_capacity(gmon.len());
    let mut raw = Vec::with_capacity(gmon.len());
    for path in gmon {
        let bytes = crate::input::read_input(path)?;
        // Read as every command reads a profile, so that a file that is none (a sidecar, an
        // executable, text) is said to be what it is.
        let p = crate::input::parse_profile(path, &bytes, &gmon_format::ReadOptions::default())?;
        let checked = check_profile(&executable, path, &p)
            .and_then(|()| check_arc_entries(main_symbols.as_ref(), &image, &p, &exe_path));
        if let Err(failed) = checked {
            refuse_unless_forced(load.force, path, &exe_path, &failed, &mut notes)?;
        }
        profiles.push(p);
        raw.push(bytes);
    }
    // The gprof engine twice: per function (as `gprof` reports), and per source line (as
    // `gprof -l` reports) for pprof's line-level leaf locations. Symbols get their source file
    // and line as gprof attaches them (BFD's lookup, in gmon_binary::dwarf).
    let opts = AnalysisOptions {
        whoami: "gmon".to_owned(),
        ..AnalysisOptions::default()
    };
    // A stripped executable has nothing gprof's rules accept: the views name its code from
    // .dynsym and the unwind table instead of refusing it.
    let (mut symtab, stripped) = views_symbol_table(&image, main_symbols.as_ref(), &opts)
        .map_err(|e| without_program(&e))
        .context("reading symbols")?;
    let mut line_info = LineInfo::for_executable(&exe_path, &image.data, Some(&elf), true);
    notes.extend(line_info.unreadable_sections().iter().cloned());
    attach_function_sources(&mut symtab, &mut line_info);
    let line_table = if load.line_credit {
        line_symbol_table(&symtab, &mut line_info, &image).ok()
    } else {
        None
    };
    let analysis = run_analysis(symtab, &image, gmon, &profiles, &opts)
        .map_err(|e| without_program(&e))
        .with_context(|| format!("analysing {}", exe_path.display()))?;
    // Without line symbols (no DWARF, or a layout gprof -l refuses) leaves stay per function.
    let line_analysis =
        line_table.and_then(|t| run_analysis(t, &image, gmon, &profiles, &opts).ok());

    let (mut graph, mut functions) = graph_from_analysis(&analysis, line_analysis.as_ref())?;
    if stripped && let Some(note) = stripped_note(&exe_path, &graph) {
        notes.push(note);
    }
    if let Err(failed) = check_samples_in_functions(&graph, &exe_path) {
        let names: Vec<String> = gmon.iter().map(|p| p.display().to_string()).collect();
        refuse_unless_forced(
            load.force,
            Path::new(&names.join(", ")),
            &exe_path,
            &failed,
            &mut notes,
        )?;
    }
    let sidecars = matching_sidecars(gmon, &raw, &mut notes);
    let mut runtime_counters = None;
    let mut objects = vec![executable_object(
        &executable.canonical_path(),
        executable
            .build_id
            .as_ref()
            .map_or(&[][..], |b| b.0.as_slice()),
        &executable.text,
    )];
    let stacks = match sidecars {
        Some(sidecars) if sidecars.iter().any(|e| !e.stacks.is_empty()) => {
            runtime_counters = Some(sum_counters(&sidecars));
            objects = sidecar_objects(&sidecars);
            exact_stacks(
                &analysis,
                main_symbols.as_ref(),
                &sidecars,
                &mut graph,
                &mut functions,
            )
        }
        _ => estimate_stacks(&graph)?,
    };
    let mut stacks = stacks;
    locate_sampled(&mut stacks, &functions, &mut line_info);
    let main_path = objects.iter().find(|o| o.main).map(|o| o.path.clone());
    let build_id_of = |path: &str| {
        objects
            .iter()
            .find(|o| o.path == path)
            .map(|o| o.build_id.clone())
            .unwrap_or_default()
    };
    let objects_with_lines = locate_places(
        &mut stacks.placed,
        main_path.as_deref(),
        &mut line_info,
        &build_id_of,
    );
    share_place_lines(&mut stacks, &functions);
    let cpu_stacks = match stacks.source {
        StackSource::Estimated if analysis.hz() > 0 => {
            let per_tick = 1e9 / f64::from(analysis.hz());
            let mut nanos: Vec<u64> = analysis
                .functions()
                .map(|f| {
                    let ns = (f.self_ticks * per_tick).round();
                    if ns.is_finite() && ns > 0.0 {
                        ns as u64
                    } else {
                        0
                    }
                })
                .collect();
            nanos.resize(graph.nodes().len(), 0);
            Some(estimate_stacks(&graph.with_self_weights(&nanos))?)
        }
        _ => None,
    };
    Ok(Loaded {
        graph,
        stacks,
        cpu_stacks,
        functions,
        executable,
        prof_rate: analysis.hz(),
        notes,
        analysis,
        runtime_counters,
        objects,
        objects_with_lines,
    })
}

/// The runtime's counters of several sidecars, added up.
fn sum_counters(sidecars: &[Sidecar]) -> Counters {
    sidecars.iter().fold(Counters::default(), |a, s| {
        let c = &s.counters;
        Counters {
            samples: a.samples.saturating_add(c.samples),
            outside_histogram: a.outside_histogram.saturating_add(c.outside_histogram),
            dropped: a.dropped.saturating_add(c.dropped),
            truncated_stacks: a.truncated_stacks.saturating_add(c.truncated_stacks),
            saturated_bins: a.saturated_bins.saturating_add(c.saturated_bins),
        }
    })
}

/// What a stripped executable changes in what the views show: how many of its sampled functions
/// have no name but `OBJECT+0xSTART` (from the unwind table), and their share of its samples.
/// `None` when every sampled function has a name (.dynsym had them all): then the stripping
/// changed nothing the user sees, and nothing is said.
fn stripped_note(exe: &Path, graph: &WeightedCallGraph) -> Option<String> {
    let base = exe.file_name()?.to_string_lossy();
    let prefix = format!("{base}+0x");
    let total: u64 = graph.nodes().iter().map(|n| n.self_samples).sum();
    let (count, samples) = graph
        .nodes()
        .iter()
        .filter(|n| n.self_samples > 0 && n.name.starts_with(&prefix))
        .fold((0usize, 0u64), |(c, s), n| (c + 1, s + n.self_samples));
    (samples > 0).then(|| {
        format!(
            "{}: no symbol table (stripped): {count} sampled function{} ({:.1}% of its samples) \
             named {base}+0xSTART from the unwind table; its debug symbols (a -dbgsym or -dbg \
             package) would name them",
            exe.display(),
            if count == 1 { "" } else { "s" },
            100.0 * samples as f64 / total.max(1) as f64
        )
    })
}

/// The gprof analysis as a call graph: a node per symbol (address order) with its self
/// samples, the arcs with their counts (self-arcs too, for pprof's call counts), gprof's
/// cycles, and the samples that fell outside every function.
pub fn graph_from_analysis(
    analysis: &Analysis,
    lines: Option<&Analysis>,
) -> Result<(WeightedCallGraph, Vec<FunctionInfo>), GraphError> {
    let stats: Vec<_> = analysis.functions().collect();
    let ticks: Vec<f64> = stats.iter().map(|f| f.self_ticks).collect();
    let samples = whole_samples(&ticks);
    let mut graph = WeightedCallGraph::new();
    let mut functions = Vec::with_capacity(stats.len());
    let mut by_index: BTreeMap<usize, NodeId> = BTreeMap::new();
    let demangled: Vec<String> = stats.iter().map(|f| f.demangled()).collect();
    let mut uses: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &demangled {
        *uses.entry(d.as_str()).or_insert(0) += 1;
    }
    for ((f, &s), name) in stats.iter().zip(&samples).zip(&demangled) {
        let (file, line) = source_of(&analysis.symtab, f.index);
        // Two functions with one name (static functions of different files) would merge into
        // one frame; the flame graph tells them apart by file, or by address.
        let shown = if uses.get(name.as_str()).copied().unwrap_or(0) > 1 {
            match &file {
                Some(file) => format!("{name} [{file}]"),
                None => format!("{name} [{:#x}]", f.addr),
            }
        } else {
            name.clone()
        };
        let id = graph.add_node(shown, s);
        by_index.insert(f.index, id);
        functions.push(FunctionInfo {
            name: name.clone(),
            system_name: f.name.to_owned(),
            address: Some(f.addr),
            file,
            start_line: line,
            ..FunctionInfo::default()
        });
    }
    if let Some(la) = lines {
        add_line_credit(analysis, la, &by_index, &mut functions);
    }
    attach_histogram_pieces(analysis, &by_index, &mut functions);
    // The engine's arcs include self-arcs (recursion); a function's `self_calls` is the same
    // count again, so it is not added (issue 12: pprof showed recursive calls twice).
    for arc in analysis.arcs() {
        if let (Some(&p), Some(&c)) = (by_index.get(&arc.parent), by_index.get(&arc.child)) {
            graph.add_calls(p, c, arc.count)?;
        }
    }
    let cycles: Vec<CycleGroup> = analysis
        .cycles()
        .into_iter()
        .map(|c| CycleGroup {
            number: c.number,
            members: c
                .members
                .iter()
                .filter_map(|m| by_index.get(m).copied())
                .collect(),
        })
        .collect();
    // gprof's cycles are disjoint with distinct numbers; if not, estimation finds its own.
    let _ = graph.set_cycles(cycles);
    let in_functions = samples.iter().fold(0u64, |a, &b| a.saturating_add(b));
    graph.set_outside_samples(analysis.total_samples().saturating_sub(in_functions));
    Ok((graph, functions))
}

/// The source lines of the exact stacks' sampled addresses and call sites in the executable,
/// from its DWARF line table (as `addr2line` gives them).
fn locate_sampled(stacks: &mut Stacks, functions: &[FunctionInfo], line_info: &mut LineInfo) {
    let mut locate = |addr: u64| line_at(line_info, addr);
    for a in stacks.sampled.iter_mut().filter(|a| a.object.is_none()) {
        if let Some((line, file)) = locate(a.address) {
            (a.line, a.file) = (line, Some(file));
        }
    }
    let in_executable = |c: &CallSite| {
        functions
            .get(c.caller.0)
            .is_some_and(|f| f.object.is_none())
    };
    for c in stacks.call_sites.iter_mut().filter(|c| in_executable(c)) {
        if let Some((line, file)) = locate(c.address) {
            (c.line, c.file) = (line, Some(file));
        }
    }
}

/// Runs the gprof engine over `profiles` with the given symbol table.
fn run_analysis(
    symtab: SymbolTable,
    image: &Image,
    names: &[PathBuf],
    profiles: &[gmon_format::Profile],
    opts: &AnalysisOptions,
) -> Result<Analysis, crate::gprof::GprofError> {
    let mut b = AnalysisBuilder::with_symtab(symtab, opts);
    for (name, p) in names.iter().zip(profiles) {
        b.add_profile(&name.display().to_string(), p)?;
    }
    b.finish(Some(image))
}

/// The source file and line gprof attached to symbol `i`, the file name without BFD's leading
/// `./` segments (`././util.c` → `util.c`).
fn source_of(symtab: &SymbolTable, i: usize) -> (Option<String>, u32) {
    let Some(sym) = symtab.symbols.get(i) else {
        return (None, 0);
    };
    let file = sym.file.and_then(|f| symtab.files.get(f)).map(|f| {
        let mut name = f.name.as_str();
        while let Some(rest) = name.strip_prefix("./") {
            name = rest;
        }
        name.to_owned()
    });
    (file, sym.line)
}

/// Attaches to each function the source lines inside it that `gprof -l` credits with samples:
/// the line symbol's address, file and line, weighted by its credit (in billionths of a tick,
/// so that fractional credit keeps its proportions).
fn add_line_credit(
    analysis: &Analysis,
    lines: &Analysis,
    by_index: &BTreeMap<usize, NodeId>,
    functions: &mut [FunctionInfo],
) {
    for lf in lines.functions() {
        let weight = (lf.self_ticks * 1e9).round();
        if !(weight.is_finite() && weight >= 1.0) {
            continue;
        }
        let Some(node) = analysis
            .symtab
            .lookup(lf.addr)
            .and_then(|s| by_index.get(&s))
        else {
            continue;
        };
        let (file, line) = source_of(&lines.symtab, lf.index);
        if let Some(f) = functions.get_mut(node.0) {
            f.bins.push(BinSample {
                address: lf.addr,
                count: weight as u64,
                line,
                file,
            });
        }
    }
}

/// The sidecars of every profile, when each has one that belongs to it; `None` otherwise.
fn matching_sidecars(
    gmon: &[PathBuf],
    raw: &[Vec<u8>],
    notes: &mut Vec<String>,
) -> Option<Vec<Sidecar>> {
    let mut sidecars = Vec::with_capacity(gmon.len());
    for (path, bytes) in gmon.iter().zip(raw) {
        let side = sidecar_path(path);
        let data = gmon_binary::open::read_found(&side).ok()?;
        match read_sidecar(&data) {
            Ok(sidecar) if sidecar.gmon.is_none() || sidecar.matches_gmon(bytes) => {
                sidecars.push(sidecar)
            }
            Ok(_) => {
                notes.push(format!(
                    "{}: ignored, it belongs to another version of {}",
                    side.display(),
                    path.display()
                ));
                return None;
            }
            Err(e) => {
                notes.push(format!("{}: ignored: {e}", side.display()));
                return None;
            }
        }
    }
    Some(sidecars)
}

/// The symbol table the views credit samples with (spec/stacks.md §9): gprof's, plus the
/// functions gprof's rules leave out (compiler clones such as `f.part.0` or `f.isra.0`, whose
/// samples gprof credits to the symbol before them), or, for a stripped executable, the views'
/// functions alone (`.dynsym` and the unwind table). The flag says it was stripped. `gmon gprof`
/// does not use this: it keeps GNU gprof's rules.
pub fn views_symbol_table(
    image: &Image,
    functions: Option<&ObjectSymbols>,
    opts: &AnalysisOptions,
) -> Result<(SymbolTable, bool), crate::gprof::GprofError> {
    let views = |f: &ObjectFunction| Symbol {
        name: f.name.as_str().into(),
        addr: f.start,
        end_addr: 0,
        is_static: true,
        is_func: true,
        file: None,
        line: 0,
    };
    match SymbolTable::from_image(image, &opts.symtab, &opts.whoami) {
        Ok(table) => {
            let Some(functions) = functions else {
                return Ok((table, false));
            };
            let known: std::collections::HashSet<u64> =
                table.symbols.iter().map(|s| s.addr).collect();
            let missing: Vec<Symbol> = functions
                .functions()
                .iter()
                .filter(|f| f.from_symbol && !known.contains(&f.start))
                .map(views)
                .collect();
            if missing.is_empty() {
                return Ok((table, false));
            }
            let mut all = table.symbols;
            all.extend(missing);
            Ok((SymbolTable::finalize(all, image.text_end()), false))
        }
        Err(e) => match functions {
            Some(f) if !f.functions().is_empty() => {
                let all = f.functions().iter().map(views).collect();
                Ok((SymbolTable::finalize(all, image.text_end()), true))
            }
            _ => Err(e),
        },
    }
}

/// The checks that a profile can belong to `exe` before it is analysed: the build id its
/// runtime sidecar records (when both have one; an unreadable sidecar is not a verdict), then
/// its addresses ([`Executable::check`]: histogram within the code, arcs inside it). The error
/// names the check that failed.
pub fn check_profile(
    exe: &Executable,
    path: &Path,
    profile: &gmon_format::Profile,
) -> Result<(), String> {
    let recorded = gmon_binary::open::read_found(&sidecar_path(path))
        .ok()
        .and_then(|b| read_sidecar(&b).ok())
        .and_then(|sidecar| {
            sidecar
                .main_object()
                .map(|m| (m.build_id.clone(), m.path.clone()))
        });
    if let (Some(ours), Some((theirs, program))) = (&exe.build_id, recorded)
        && !theirs.is_empty()
        && ours.0 != theirs
    {
        return Err(format!(
            "build id: its sidecar records build id {} ({program}), {} has {ours}",
            gmon_format::merge::ExecutableId(theirs),
            exe.path.display()
        ));
    }
    exe.check(profile).map_err(|e| {
        let e = e.trim_end_matches(": not a profile of this executable");
        if e.starts_with("histogram") {
            format!("histogram range: {e}")
        } else {
            format!("arc addresses: {e}")
        }
    })
}

/// How far after a function's first byte the profiling call's return address may be: the
/// `mcount` / `__fentry__` call comes first in the prologue (after `endbr64`, `push %rbp`,
/// `mov %rsp,%rbp` and the like), so glibc records a callee address a few bytes into the
/// function: 9 to 22 bytes on the 41 testdata programs (gcc and clang, -O0 and -O2, PIE,
/// non-PIE and static); 32 bytes leaves room.
const ENTRY_SLACK: u64 = 32;

/// ELF `e_machine` of x86-64, the machine [`ENTRY_SLACK`] and [`after_a_call`] were measured on.
const EM_X86_64: u16 = 62;

/// The arcs' callee addresses (`self_pc`) must be at function entries, just after a call
/// instruction (x86-64, [`after_a_call`]): a profile of another program (or of an earlier build)
/// has them wherever its own functions began, which are mostly not entries here (and where dense small functions make a hit likely by chance, not all).
/// Refused when more than a quarter of the arcs miss; on a profile of its own executable none
/// do, and a few arcs into code without symbols are no verdict.
fn check_arc_entries(
    functions: Option<&ObjectSymbols>,
    image: &Image,
    profile: &gmon_format::Profile,
    exe: &Path,
) -> Result<(), String> {
    let Some(functions) = functions else {
        return Ok(());
    };
    let (mut arcs, mut missed, mut example) = (0u64, 0u64, None);
    for a in profile.arcs().filter(|a| a.count > 0) {
        arcs += 1;
        // The slack and the call-instruction test were measured on x86-64; elsewhere the
        // profiling call can sit deeper in the prologue (MIPS saves $ra and sets up $gp first),
        // so there the callee only has to be inside a function.
        let at_entry = functions.function_at(a.self_pc).is_some_and(|f| {
            image.machine != EM_X86_64
                || (a.self_pc - f.start <= ENTRY_SLACK
                    && after_a_call(image, a.self_pc) != Some(false))
        });
        if !at_entry {
            missed += 1;
            example.get_or_insert(a.self_pc);
        }
    }
    if missed * 4 > arcs {
        return Err(format!(
            "arc callees: {missed} of {arcs} arcs call an address that is no function entry of \
             {} (e.g. {:#x})",
            exe.display(),
            example.unwrap_or(0)
        ));
    }
    Ok(())
}

/// On x86-64, whether the bytes before `addr` in `.text` are a call instruction, as they are
/// before the return address of the profiling call that glibc records as an arc's callee:
/// `call rel32` (`e8`, 5 bytes: `mcount`, `__fentry__`, `mcount@plt`) or `call *disp32(%rip)`
/// (`ff 15`, 6 bytes: PIE's `call *mcount@GOTPCREL(%rip)`). In another build the same address
/// is most often in the middle of some instruction. `None` where it cannot be told (another
/// machine, outside `.text`).
fn after_a_call(image: &Image, addr: u64) -> Option<bool> {
    if image.machine != EM_X86_64 {
        return None;
    }
    let text = image.text_bytes()?;
    let at = usize::try_from(addr.checked_sub(image.text_vma)?).ok()?;
    if at > text.len() {
        return None;
    }
    let before = |n: usize| at.checked_sub(n).and_then(|i| text.get(i..at));
    Some(
        before(5).is_some_and(|b| b.first() == Some(&0xe8))
            || before(6).is_some_and(|b| b.starts_with(&[0xff, 0x15])),
    )
}

/// The check after analysis: at most 90% of the histogram's samples may fall outside every
/// function of the executable. A profile of another program lands in gaps, padding and PLT
/// stubs; a real one can have many samples there (testdata's outside-* programs: 57%, code
/// run outside the symbol table), so only a clear majority is a verdict.
fn check_samples_in_functions(graph: &WeightedCallGraph, exe: &Path) -> Result<(), String> {
    let inside = graph.total_self_samples().unwrap_or(u64::MAX);
    let outside = graph.outside_samples();
    let total = inside.saturating_add(outside);
    if mostly_outside(outside, total) {
        return Err(format!(
            "samples in functions: {outside} of {total} histogram samples fall outside every \
             function of {}",
            exe.display()
        ));
    }
    Ok(())
}

/// Fewest histogram samples on which the samples-in-functions check gives a verdict. A real
/// profile with 57% of its samples outside every function has its only sample there 57% of
/// the time, and all of 10 there 0.4% of the time; a profile of another program has nearly all
/// of them there (spec/stacks.md §10, check 5).
const SAMPLES_FOR_A_VERDICT: u64 = 10;

/// Whether `outside` of `total` histogram samples is more than 90%, on enough samples to tell.
fn mostly_outside(outside: u64, total: u64) -> bool {
    total >= SAMPLES_FOR_A_VERDICT && u128::from(outside) * 10 > u128::from(total) * 9
}

/// The gprof engine's error as the views say it: gprof's messages name the file; only their own
/// "gmon: " prefix is dropped (QA #15).
fn without_program(e: &crate::gprof::GprofError) -> Error {
    crate::gprof::GprofError::new(e.without_program("gmon").to_owned()).into()
}

/// An error naming the profile, the executable and the failed check, or with `force` a note.
fn refuse_unless_forced(
    force: bool,
    path: &Path,
    exe: &Path,
    failed: &str,
    notes: &mut Vec<String>,
) -> Result<()> {
    if force {
        notes.push(format!(
            "{}: read with {} although a check failed (--force): {failed}",
            path.display(),
            exe.display()
        ));
        return Ok(());
    }
    Err(Error::OtherExecutable {
        path: path.to_path_buf(),
        reason: format!(
            "not a profile of {} (failed check: {failed}); name its executable (EXE GMON... or \
             --exe EXE), or --force to read it anyway",
            exe.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_samples_outside_every_function_are_no_verdict() {
        // A recorded shell's profile with its one histogram sample outside its functions was
        // refused as "not a profile of /usr/bin/dash": one sample says nothing either way.
        assert!(!mostly_outside(1, 1));
        assert!(!mostly_outside(9, 9));
        // Enough samples, nearly all outside: another program's profile.
        assert!(mostly_outside(10, 10));
        assert!(mostly_outside(91, 100));
        // A real profile with many samples outside (57% in testdata's outside-* programs).
        assert!(!mostly_outside(90, 100));
        assert!(!mostly_outside(57, 100));
    }
}
