//! `gmon diff`: what changed between two profiles (library: [`crate::diff`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::diff::{
    ASSUMED_DISPERSION, ExecutableDiff, Granularity, NoiseOptions, OneSided, Pairing, PrintOptions,
    Profiled, Recorded, RunCounts, TreeDiff, by_executable, diff_runs, diff_tree_runs,
    differential_folded, pair_executables, range_counts, recordings, stack_counts,
};
use crate::flame::{root_names, under_root};
use crate::model::{self, LoadOptions};

/// What `gmon diff --help` teaches: the verdicts, the models, the exit status, a CI gate.
const LONG_HELP: &str = "Per function (with the executable, named first as gprof takes it, with \
--exe, or recorded in BASE's runtime sidecar by gmon record; without one, per address range \
starting at arc callee addresses): each side's share of the samples, the change in share with an \
interval, a verdict, self time and exact calls, largest change first. Profiles gmon record wrote \
with stacks are compared by their exact stacks: every object's samples count, shared libraries \
included.

VERDICTS:
  change          the share moved by more than noise explains, or the exact call count changed
                  ('change (calls)': the program took another path, whatever the time says)
  noise           the share moved no more than noise moves it: equal calls and a small change
                  in time is what two runs of the same program give
  too few         too few samples in both profiles together (--min-samples, default 10) to tell

NOISE MODELS (the header says which ran; spec/diff.md):
  One profile per side (BASE NEW): sampling noise, widened for the spread between runs that one \
profile cannot measure. A function's samples are a binomial count of its side's samples; two \
runs of one program spread up to twice as much (--dispersion, default 2: each sample counts as \
half of one; 1 for sampling noise alone). The test is Fisher's exact test of the function's \
samples against the rest, BASE against NEW, on the counts divided by it.
  Several per side (--base A1 A2 A3 --new B1 B2 B3): the runs also differ from each other (CPU \
time varies from run to run). That spread is measured across all functions in two parts: a \
dispersion factor on the sampling noise, and a per-run jitter of each function's own time, which \
spreads a function's share the more the larger the share is. Each function's samples count \
less by its own part of both.
  Every function is tested, so the verdicts use Holm's correction: the chance that any unchanged \
function is called a change stays at --level (default 0.05) however many functions there are. \
Functions too small to reach the level whatever their samples did are not tested (Tarone) and \
cost the others nothing. The intervals hold together at that level. Fewer samples make wider \
intervals: at 1 kHz, a few seconds of CPU time tell a 20% change apart only in a function with \
a large share. The 'detectable' column says, for what is not a change, the smallest growth of \
its share (and the slowdown of it alone) that these samples would show 9 times in 10.

EXIT STATUS (as diff(1)):
  0  no change (with --fail-above: no function's share grew by more than PCT points as a change)
  1  some change (with --fail-above: some function's share grew by more than PCT points, and the \
samples call it a change, not noise)
  2  trouble (a file that cannot be read, a profile of another program, bad options)

--json prints one object with stable field names and a schema version (`version`, 3; every field \
is described in spec/json.md). --folded prints differential folded stacks (`stack base_count \
new_count`), estimated from the call graph with --exe, single frames without, for inferno's \
differential flame graph; gmon flame --diff draws one that greys out noise.

Profiles of a recorded process tree (gmon record of a script: OUT OUT.*, a profile per \
executable) are compared executable by executable: --base OUT_a OUT_a.* --new OUT_b OUT_b.*. \
Several recordings a side (--base a1/OUT a1/OUT.* a2/OUT a2/OUT.* a3/OUT a3/OUT.* --new ...) \
are told apart by their names: OUT and the OUT.<name> files beside it are one recording. Within \
a recording an executable's profiles are summed (one run); its recordings are its runs, and \
with several a side their spread is measured (the several-runs model above). An executable \
missing from some recordings of a side is compared on those it ran in, and the others are \
named. Executables are paired by path, else by build id, else by a file name unique on both \
sides; each pair is compared as one program, with one correction over the functions of every \
pair together, so that the whole tree keeps the level. An executable only one side ran is named, with its samples, and not \
compared. --json then prints a document of kind `process-tree` (spec/json.md); --folded puts \
each executable's stacks under its root frame.

A profile that cannot belong to its executable is refused, naming the check that failed (the \
build id its runtime sidecar records, a histogram beyond the code, arcs outside it, most samples \
outside every function); --force reads it anyway.

EXAMPLES:
  gmon diff ./prog old/gmon.out new/gmon.out
  gmon diff --exe ./prog --base a1.out a2.out a3.out --new b1.out b2.out b3.out
  gmon diff --exe ./prog-v1 --new-exe ./prog-v2 v1.out v2.out --json
  gmon diff --exe ./prog a.out b.out --folded | inferno-flamegraph > diff.svg
  gmon diff --base old/OUT old/OUT.* --new new/OUT new/OUT.*
  gmon diff --base a?/OUT a?/OUT.* --new b?/OUT b?/OUT.*    three recordings a side: a1/ a2/ a3/

A CI GATE (fail the job when a function got more than 2 points of the time, beyond noise):
  for i in 1 2 3; do gmon record -o base.$i.out -- ./prog-main; done
  for i in 1 2 3; do gmon record -o new.$i.out -- ./prog-branch; done
  gmon diff --base base.*.out --new new.*.out --fail-above 2 || exit 1";

/// Arguments of `gmon diff`.
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "gmon diff [OPTIONS] [EXE] BASE NEW\n       \
                      gmon diff [OPTIONS] [EXE] --base BASE... --new NEW...",
    after_help = "Exit status: 0 no change, 1 change, 2 trouble (see --help for the verdicts \
                  and a CI gate).\n\nEXAMPLES:\n  gmon diff ./prog old/gmon.out new/gmon.out\n  \
                  gmon diff --exe ./prog --base a1.out a2.out --new b1.out b2.out\n  \
                  gmon diff --exe ./prog a.out b.out --fail-above 2",
    after_long_help = LONG_HELP
)]
pub struct Args {
    /// `[EXE] BASE NEW`: the baseline profile and the one to compare with it, after the
    /// executable when it is named first (as gprof takes it; or give it with --exe). With
    /// --base and --new: only the executable, if any.
    #[arg(value_name = "FILE", num_args = 0..=3)]
    pub operands: Vec<PathBuf>,

    /// --base/--new, --new-exe and the noise options, as `gmon report --diff` takes them too.
    #[command(flatten)]
    pub sides: DiffSides,

    /// The executable of BASE (and of NEW unless --new-exe is given): compare per function.
    #[arg(long, value_name = "EXE")]
    pub exe: Option<PathBuf>,

    /// Read a profile that fails the checks that it belongs to the executable.
    #[arg(long)]
    pub force: bool,

    /// Exit 1 only when some function's share of the samples grew by more than PCT percentage
    /// points and the growth is a change, not noise; 0 otherwise.
    #[arg(long, value_name = "PCT")]
    pub fail_above: Option<f64>,

    /// Print JSON instead of a table.
    #[arg(long, conflicts_with = "folded")]
    pub json: bool,

    /// Print differential folded stacks (`stack base new`).
    #[arg(long)]
    pub folded: bool,

    /// Show at most N entries in the table (0: all).
    #[arg(short = 'n', long, value_name = "N", default_value_t = 0)]
    pub limit: usize,
}

/// The runs of each side and the noise options of a comparison, shared by `gmon diff` and
/// `gmon report --diff` so that both take the same options with the same meaning. The
/// operands (`[EXE] BASE NEW`) and --exe stay each command's own.
#[derive(Debug, Clone, clap::Args)]
pub struct DiffSides {
    /// Several profiles of the baseline (runs of the same program): their spread is part of
    /// the noise.
    #[arg(long, value_name = "BASE", num_args = 1.., requires = "new")]
    pub base: Vec<PathBuf>,

    /// Several profiles of the version to compare with the baseline.
    #[arg(long, value_name = "NEW", num_args = 1.., requires = "base")]
    pub new: Vec<PathBuf>,

    /// The executable of NEW, when it is another build.
    #[arg(long, value_name = "EXE")]
    pub new_exe: Option<PathBuf>,

    /// The chance, over the whole comparison, of calling any unchanged function a change.
    #[arg(long, value_name = "P", default_value_t = 0.05)]
    pub level: f64,

    /// Functions with fewer samples than this in both sides together are "too few samples to
    /// tell".
    #[arg(long, value_name = "N", default_value_t = 10.0)]
    pub min_samples: f64,

    /// One profile per side: the run-to-run spread assumed, as a factor on the sampling
    /// noise's variance (1: sampling noise alone). Several profiles a side measure it instead.
    #[arg(long, value_name = "PHI", default_value_t = ASSUMED_DISPERSION)]
    pub dispersion: f64,
}

/// The comparison of two recorded process trees, with each executable's models (one per run:
/// its profiles of one recording summed) for the views that draw stacks.
#[derive(Debug)]
pub struct TreeComparison {
    /// The verdicts, per executable.
    pub tree: TreeDiff,
    /// Per entry of `tree.executables`: BASE's and NEW's models, one per recording it ran in.
    pub models: Vec<(Vec<model::Loaded>, Vec<model::Loaded>)>,
    /// Per entry of `tree.only_base`: its models, one per recording.
    pub only_base: Vec<Vec<model::Loaded>>,
    /// Per entry of `tree.only_new`: its models.
    pub only_new: Vec<Vec<model::Loaded>>,
}

/// A comparison with its inputs: the executable and, with one, each profile's model (for the
/// views that draw stacks: `--folded`, `gmon report --diff`).
#[derive(Debug)]
pub struct Comparison {
    /// The executable BASE was read with (`None`: compared per address range).
    pub exe: Option<PathBuf>,
    /// One model per BASE profile (empty without an executable).
    pub base: Vec<model::Loaded>,
    /// One model per NEW profile (empty without an executable).
    pub new: Vec<model::Loaded>,
    /// The verdicts.
    pub diff: crate::diff::Diff,
}

impl DiffSides {
    /// Whether --base and --new name the sides (rather than the operands).
    pub fn given(&self) -> bool {
        !self.base.is_empty()
    }

    /// The noise options, checked.
    pub fn noise(&self) -> anyhow::Result<NoiseOptions> {
        if !(self.level > 0.0 && self.level < 1.0) {
            anyhow::bail!(
                "--level must be a probability between 0 and 1, not {}",
                self.level
            );
        }
        if !(self.min_samples >= 0.0 && self.min_samples.is_finite()) {
            anyhow::bail!(
                "--min-samples must be a number of samples, not {}",
                self.min_samples
            );
        }
        if !(self.dispersion >= 1.0 && self.dispersion.is_finite()) {
            anyhow::bail!(
                "--dispersion must be a factor of at least 1 (1: sampling noise alone), not {}",
                self.dispersion
            );
        }
        let mut noise = NoiseOptions::default();
        noise.level = self.level;
        noise.min_samples = self.min_samples;
        noise.dispersion = self.dispersion;
        Ok(noise)
    }

    /// The executable (if any) and the profiles of each side, from the operands (`[EXE] BASE
    /// NEW`) or --base/--new; `command` (`diff`) names the command in the errors.
    #[allow(clippy::type_complexity)]
    pub fn split(
        &self,
        command: &str,
        exe: Option<&Path>,
        operands: &[PathBuf],
    ) -> anyhow::Result<(Option<PathBuf>, Vec<PathBuf>, Vec<PathBuf>)> {
        if !self.given() {
            let (exe, profiles) = model::executable_and_profiles(exe, operands)?;
            let [base, new] = profiles.as_slice() else {
                anyhow::bail!(
                    "gmon {command} takes two profiles, BASE NEW (after the executable, if it is \
                     named first), or --base BASE... --new NEW...; got {}",
                    profiles.len()
                );
            };
            return Ok((exe, vec![base.clone()], vec![new.clone()]));
        }
        let exe = match (exe, operands) {
            (e, []) => e.map(Path::to_path_buf),
            (None, [e]) => Some(e.clone()),
            _ => anyhow::bail!(
                "with --base and --new, the only operand is the executable (or give it with --exe)"
            ),
        };
        let (exe, base) = model::executable_and_profiles(exe.as_deref(), &self.base)?;
        let (_, new) = model::executable_and_profiles(exe.as_deref(), &self.new)?;
        Ok((exe, base, new))
    }

    /// When no executable is named and the profiles' sidecars name more than one executable
    /// on a side (`gmon record` of a process tree: a profile per process), compares the trees
    /// executable by executable (spec/diff.md §11); `None` otherwise.
    pub fn compare_tree(
        &self,
        command: &str,
        exe: Option<&Path>,
        operands: &[PathBuf],
        force: bool,
    ) -> anyhow::Result<Option<TreeComparison>> {
        let noise = self.noise()?;
        let Some(pairing) = self.tree_pairing(command, exe, operands)? else {
            return Ok(None);
        };
        let executables: Vec<PathBuf> = pairing
            .pairs
            .iter()
            .map(|(b, _, _)| &b.executable)
            .chain(pairing.only_base.iter().map(|r| &r.executable))
            .chain(pairing.only_new.iter().map(|r| &r.executable))
            .cloned()
            .collect();
        let mut roots = root_names(&executables).into_iter();
        let opts = LoadOptions::STACKS_ONLY.with_force(force);
        // One model per run: an executable's profiles of one recording, summed.
        let load = |r: &Recorded| -> anyhow::Result<Vec<model::Loaded>> {
            r.runs
                .iter()
                .map(|run| {
                    let l = model::load_with(Some(&r.executable), run, &opts)?;
                    print_notes(command, l.notes.iter());
                    Ok(l)
                })
                .collect()
        };
        let counts = |r: &Recorded, ls: &[model::Loaded]| -> Vec<RunCounts> {
            ls.iter()
                .zip(&r.runs)
                .map(|(l, run)| stack_counts(l, &crate::diff::shown(run).join(" + ")))
                .collect()
        };
        let mut models = Vec::new();
        let mut runs = Vec::new();
        for (b, n, _) in &pairing.pairs {
            let (bl, nl) = (load(b)?, load(n)?);
            // The recordings are the runs (spec/diff.md §11): several on a side, and the
            // comparison measures their spread (§3).
            runs.push((counts(b, &bl), counts(n, &nl)));
            models.push((bl, nl));
        }
        let parts: Vec<(&[RunCounts], &[RunCounts])> = runs
            .iter()
            .map(|(b, n)| (b.as_slice(), n.as_slice()))
            .collect();
        // One correction over the whole tree, so that it keeps the level (spec/diff.md §11).
        let tested = diff_tree_runs(Granularity::Function, &parts, &noise);
        let mut diffs = Vec::new();
        for ((b, n, by), diff) in pairing.pairs.iter().zip(tested) {
            diffs.push(ExecutableDiff {
                root: roots.next().unwrap_or_default(),
                base_executable: b.executable.display().to_string(),
                new_executable: n.executable.display().to_string(),
                matched_by: *by,
                absent_from_base: crate::diff::shown(&b.absent_from),
                absent_from_new: crate::diff::shown(&n.absent_from),
                diff,
            });
        }
        let mut one_sided = |list: &[Recorded]| -> Vec<OneSided> {
            list.iter()
                .map(|r| OneSided::of(r, roots.next().unwrap_or_default()))
                .collect()
        };
        let only_base = one_sided(&pairing.only_base);
        let only_new = one_sided(&pairing.only_new);
        let load_all = |list: &[Recorded]| -> anyhow::Result<Vec<Vec<model::Loaded>>> {
            list.iter().map(load).collect()
        };
        let (only_base_models, only_new_models) =
            (load_all(&pairing.only_base)?, load_all(&pairing.only_new)?);
        // The models follow their comparisons into root name order.
        type Models = (Vec<model::Loaded>, Vec<model::Loaded>);
        let mut both: Vec<(ExecutableDiff, Models)> = diffs.into_iter().zip(models).collect();
        both.sort_by(|a, b| a.0.root.cmp(&b.0.root));
        let (diffs, models): (Vec<_>, Vec<_>) = both.into_iter().unzip();
        let recordings = [
            pairing.base_recordings.as_slice(),
            pairing.new_recordings.as_slice(),
        ];
        Ok(Some(TreeComparison {
            tree: TreeDiff::new(noise.level, recordings, diffs, only_base, only_new),
            models,
            only_base: only_base_models,
            only_new: only_new_models,
        }))
    }

    /// The executables of two recorded process trees, paired (`None` when the sides are no
    /// trees: an executable is named, or a side's profiles name at most one each).
    pub fn tree_pairing(
        &self,
        command: &str,
        exe: Option<&Path>,
        operands: &[PathBuf],
    ) -> anyhow::Result<Option<Pairing>> {
        if exe.is_some() || self.new_exe.is_some() {
            return Ok(None);
        }
        let (exe, base_paths, new_paths) = self.split(command, None, operands)?;
        if exe.is_some() {
            return Ok(None);
        }
        let (Some(base), Some(new)) = (recorded(&base_paths), recorded(&new_paths)) else {
            return Ok(None);
        };
        let (base_exes, new_exes) = (by_executable(&base), by_executable(&new));
        if base_exes.len() < 2 && new_exes.len() < 2 {
            return Ok(None);
        }
        // A recording whose OUT was left out is named after it anyway: said, since the user
        // may have meant another grouping (spec/diff.md §11, "Recordings").
        for r in base.iter().chain(&new).filter(|r| !r.given) {
            let files: Vec<String> = r
                .files
                .iter()
                .map(|f| f.path.display().to_string())
                .collect();
            eprintln!(
                "gmon {command}: {}: taken as one recording, {}, whose OUT was not given",
                files.join(", "),
                r.out.display()
            );
        }
        let outs = |rs: &[crate::diff::Recording]| rs.iter().map(|r| r.out.clone()).collect();
        Ok(Some(Pairing {
            base_recordings: outs(&base),
            new_recordings: outs(&new),
            ..pair_executables(base_exes, new_exes)
        }))
    }

    /// Reads both sides and compares them: per function with an executable (named, or the one
    /// BASE's sidecar records), else per address range. Notes from loading go to stderr under
    /// `command`'s name.
    pub fn compare(
        &self,
        command: &str,
        exe: Option<&Path>,
        operands: &[PathBuf],
        force: bool,
    ) -> anyhow::Result<Comparison> {
        let noise = self.noise()?;
        let (exe, base_paths, new_paths) = self.split(command, exe, operands)?;
        // A profile `gmon record` wrote names its executable in its sidecar: compare per
        // function, as gmon flame and gmon pprof do for it, rather than per address range.
        let exe = exe.or_else(|| model::recorded_executable(&base_paths[0]));
        if self.new_exe.is_some() && exe.is_none() {
            anyhow::bail!("--new-exe needs BASE's executable too (EXE BASE NEW, or --exe EXE)");
        }
        if let Some(ne) = &self.new_exe {
            model::check_executable_operand(ne)?;
        }
        let label = |p: &PathBuf| p.display().to_string();
        let Some(be) = &exe else {
            let read = |paths: &[PathBuf]| -> anyhow::Result<Vec<_>> {
                paths.iter().map(|p| read_profile(p)).collect()
            };
            let (bp, np) = (read(&base_paths)?, read(&new_paths)?);
            let (bl, nl): (Vec<String>, Vec<String>) = (
                base_paths.iter().map(label).collect(),
                new_paths.iter().map(label).collect(),
            );
            let (b, n) = range_counts(&pair(&bp, &bl), &pair(&np, &nl));
            let diff = diff_runs(Granularity::AddressRange, &b, &n, &noise);
            return Ok(Comparison {
                exe,
                base: Vec::new(),
                new: Vec::new(),
                diff,
            });
        };
        let opts = LoadOptions::STACKS_ONLY.with_force(force);
        let ne = self.new_exe.as_ref().unwrap_or(be);
        let base = base_paths
            .iter()
            .map(|p| model::load_with(Some(be), std::slice::from_ref(p), &opts))
            .collect::<crate::Result<Vec<_>>>()?;
        let new = new_paths
            .iter()
            .map(|p| load_new(ne, p, self.new_exe.is_some(), &opts))
            .collect::<anyhow::Result<Vec<_>>>()?;
        print_notes(command, base.iter().chain(&new).flat_map(|l| &l.notes));
        let counts = |ls: &[model::Loaded], paths: &[PathBuf]| -> Vec<_> {
            ls.iter()
                .zip(paths)
                .map(|(l, p)| stack_counts(l, &label(p)))
                .collect()
        };
        let diff = diff_runs(
            Granularity::Function,
            &counts(&base, &base_paths),
            &counts(&new, &new_paths),
            &noise,
        );
        Ok(Comparison {
            exe,
            base,
            new,
            diff,
        })
    }
}

fn read_profile(path: &Path) -> anyhow::Result<gmon_format::Profile> {
    // As every command reads a profile: a file that is none (a sidecar given in its profile's
    // place, an executable, text) is said to be what it is.
    let (profile, _) = crate::input::read_profile(path, &gmon_format::ReadOptions::default())?;
    Ok(profile)
}

/// Loads NEW with `exe` (BASE's, when `own` is false: the error then says how to give NEW's).
pub fn load_new(
    exe: &Path,
    new: &Path,
    own: bool,
    opts: &LoadOptions,
) -> anyhow::Result<model::Loaded> {
    model::load_with(Some(exe), std::slice::from_ref(&new.to_path_buf()), opts).map_err(|e| {
        // Only a failed check that the profile belongs to the executable is a matter of which
        // executable read it; any other error (a file that cannot be read, one that is no
        // profile at all) goes on as it is, so that it reads as every command says it.
        if own || !about_the_executable(&e) {
            e.into()
        } else {
            anyhow::anyhow!(
                "{e:#} (NEW is read with --exe's executable; give its own with --new-exe)"
            )
        }
    })
}

/// Whether `e` (or the error it wraps) says that a profile is not one of the executable.
fn about_the_executable(e: &crate::Error) -> bool {
    match e {
        crate::Error::OtherExecutable { .. } => true,
        crate::Error::Context { source, .. } => about_the_executable(source),
        _ => false,
    }
}

/// Notes from loading (a stripped executable, a stale sidecar, a --force) go to stderr, each
/// once even when both profiles gave it: they are about the input, not part of the output.
pub fn print_notes<'a>(command: &str, notes: impl Iterator<Item = &'a String>) {
    let mut seen: Vec<&String> = Vec::new();
    for note in notes {
        if !seen.contains(&note) {
            eprintln!("gmon {command}: {note}");
            seen.push(note);
        }
    }
}

/// The profiles told into the recordings they came from (spec/diff.md §11), in the order
/// given; `None` when a profile has no usable sidecar (then they are no recorded tree).
fn recorded(profiles: &[PathBuf]) -> Option<Vec<crate::diff::Recording>> {
    let mut files = Vec::new();
    for p in profiles {
        let executable = model::recorded_executable(p)?;
        let side = model::sidecar_beside(p).ok().flatten();
        let samples = side.as_ref().map_or(0, |s| s.counters.samples);
        let build_id = side
            .as_ref()
            .and_then(|s| s.main_object())
            .map(|m| m.build_id_hex())
            .filter(|id| !id.is_empty());
        files.push(Profiled {
            path: p.clone(),
            executable,
            build_id,
            samples,
            pid: side.as_ref().map_or(0, |s| s.pid),
        });
    }
    // An `OUT` left out of `OUT OUT.*` is still the name its recording's files share.
    Some(recordings(files, |out| {
        model::recorded_executable(out).is_some()
    }))
}

/// Each profile with its label.
fn pair<'a>(
    ps: &'a [gmon_format::Profile],
    ls: &'a [String],
) -> Vec<(&'a gmon_format::Profile, &'a str)> {
    ps.iter().zip(ls.iter().map(String::as_str)).collect()
}

/// Runs `gmon diff`: exit 0 when nothing changed, 1 when something did (or, with
/// --fail-above, when a share grew beyond it as a change); trouble is an error (exit 2).
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if let Some(p) = args.fail_above
        && !(p.is_finite() && p >= 0.0)
    {
        anyhow::bail!("--fail-above must be a number of percentage points, not {p}");
    }
    if let Some(t) =
        args.sides
            .compare_tree("diff", args.exe.as_deref(), &args.operands, args.force)?
    {
        return print_tree(&args, &t, out);
    }
    let c = args
        .sides
        .compare("diff", args.exe.as_deref(), &args.operands, args.force)?;
    let diff = c.diff;
    if args.folded && c.exe.is_some() {
        let fold = |ls: &[model::Loaded]| -> Vec<String> {
            ls.iter()
                .flat_map(|l| crate::flame::folded_lines(&l.stacks, &l.graph))
                .collect()
        };
        for l in differential_folded(&fold(&c.base), &fold(&c.new)) {
            writeln!(out, "{l}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        crate::diff::print_json(out, &diff)?;
    } else if args.folded {
        crate::diff::print_folded(out, &diff)?;
    } else {
        let mut opts = PrintOptions::default();
        opts.limit = args.limit;
        crate::diff::print_text(out, &diff, &opts)?;
    }
    let changed = match args.fail_above {
        Some(points) => diff.grew_above(points),
        None => diff.changes > 0,
    };
    Ok(if changed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

impl TreeComparison {
    /// Each side's folded stacks, each executable's under its root frame (as `gmon flame OUT
    /// OUT.*` draws a tree); an executable one side did not run has no stacks on that side.
    pub fn folded(&self) -> (Vec<String>, Vec<String>) {
        let under = |root: &str, runs: &[model::Loaded]| -> Vec<String> {
            let lines: Vec<String> = runs
                .iter()
                .flat_map(|l| crate::flame::folded_lines(&l.stacks, &l.graph))
                .collect();
            under_root(root, &lines).collect()
        };
        type Models = (Vec<model::Loaded>, Vec<model::Loaded>);
        let paired = |pick: fn(&Models) -> &[model::Loaded]| {
            self.tree
                .executables
                .iter()
                .zip(&self.models)
                .flat_map(move |(e, m)| under(&e.root, pick(m)))
        };
        let alone = |list: &[OneSided], models: &[Vec<model::Loaded>]| -> Vec<String> {
            list.iter()
                .zip(models)
                .flat_map(|(o, l)| under(&o.root, l))
                .collect()
        };
        let mut base: Vec<String> = paired(|m| &m.0).collect();
        base.extend(alone(&self.tree.only_base, &self.only_base));
        let mut new: Vec<String> = paired(|m| &m.1).collect();
        new.extend(alone(&self.tree.only_new, &self.only_new));
        (base, new)
    }
}

/// Prints a comparison of two process trees as `run` prints one of two programs, and exits as
/// it does: 1 when any executable changed (or, with --fail-above, grew beyond it).
fn print_tree(args: &Args, t: &TreeComparison, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if args.folded {
        let (base, new) = t.folded();
        for l in differential_folded(&base, &new) {
            writeln!(out, "{l}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &t.tree)?;
        writeln!(out)?;
    } else {
        let mut opts = PrintOptions::default();
        opts.limit = args.limit;
        crate::diff::print_tree_text(out, &t.tree, &opts)?;
    }
    let changed = match args.fail_above {
        Some(points) => t.tree.grew_above(points),
        None => t.tree.changed(),
    };
    Ok(if changed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
