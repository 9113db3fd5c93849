//! `gmon diff`: what changed between two profiles (library: [`crate::diff`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use crate::diff::{PrintOptions, diff_functions, diff_ranges, differential_folded};
use crate::input::read_input;
use crate::model::{self, LoadOptions};

/// Arguments of `gmon diff`.
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "gmon diff [OPTIONS] [EXE] BASE NEW",
    after_help = "EXAMPLES:\n  gmon diff ./prog old/gmon.out new/gmon.out\n  \
                  gmon diff --exe ./prog-v1 --new-exe ./prog-v2 v1.out v2.out --json\n  \
                  gmon diff --exe ./prog a.out b.out --folded | inferno-flamegraph > diff.svg",
    after_long_help = "Per function (with the executable, named first as gprof takes it, with \
                  --exe, or recorded in BASE's runtime sidecar by gmon record; without one, per \
                  address range starting at arc callee addresses): self time and calls in BASE and NEW, the change and the \
                  relative change, largest change first. When the total samples differ, the \
                  changes are shown raw and normalized (NEW scaled by base total / new total), \
                  sorted by the normalized change, and the header says so. Functions with \
                  samples or calls in one profile only are marked added / removed.\n\n\
                  A profile that cannot belong to its executable is refused, naming the check \
                  that failed (the build id its runtime sidecar records, a histogram beyond the \
                  code, arcs outside it, most samples outside every function); --force reads \
                  it anyway.\n\n\
                  --json prints one object with stable field names and a schema version \
                  (`version`, 1; every field is described in spec/diff.md). --folded prints differential folded \
                  stacks (`stack base_count new_count`), estimated from the call graph with \
                  --exe, single frames without, for inferno's differential flame graph.\n\n\
                  EXAMPLES:\n  gmon diff ./prog old/gmon.out new/gmon.out\n  \
                  gmon diff --exe ./prog-v1 --new-exe ./prog-v2 v1.out v2.out --json\n  \
                  gmon diff --exe ./prog a.out b.out --folded | inferno-flamegraph > diff.svg"
)]
pub struct Args {
    /// `[EXE] BASE NEW`: the baseline profile and the one to compare with it, after the
    /// executable when it is named first (as gprof takes it; or give it with --exe).
    #[arg(value_name = "FILE", num_args = 2..=3, required = true)]
    pub operands: Vec<PathBuf>,

    /// The executable of BASE (and of NEW unless --new-exe is given): compare per function.
    #[arg(long, value_name = "EXE")]
    pub exe: Option<PathBuf>,

    /// The executable of NEW, when it is another build.
    #[arg(long, value_name = "EXE")]
    pub new_exe: Option<PathBuf>,

    /// Read a profile that fails the checks that it belongs to the executable.
    #[arg(long)]
    pub force: bool,

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

fn read_profile(path: &Path) -> anyhow::Result<gmon_format::Profile> {
    let bytes = read_input(path)?;
    gmon_format::read(&bytes).with_context(|| format!("{}", path.display()))
}

/// Loads NEW with `exe` (BASE's, when `own` is false: the error then says how to give NEW's).
pub fn load_new(
    exe: &Path,
    new: &Path,
    own: bool,
    opts: &LoadOptions,
) -> anyhow::Result<model::Loaded> {
    model::load_with(Some(exe), std::slice::from_ref(&new.to_path_buf()), opts).map_err(|e| {
        // A file that cannot be read, or is no profile at all, is not a matter of which
        // executable reads it.
        let not_the_executable = e.downcast_ref::<crate::input::NotAProfile>().is_some()
            || e.downcast_ref::<crate::input::ReadError>().is_some();
        if own || not_the_executable {
            e
        } else {
            anyhow::anyhow!(
                "{e:#} (NEW is read with --exe's executable; give its own with --new-exe)"
            )
        }
    })
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

/// Runs `gmon diff`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (exe, profiles) = model::executable_and_profiles(args.exe.as_deref(), &args.operands)?;
    let [base_path, new_path] = profiles.as_slice() else {
        anyhow::bail!(
            "gmon diff takes two profiles, BASE NEW (after the executable, if it is named \
             first); got {}",
            profiles.len()
        );
    };
    // A profile `gmon record` wrote names its executable in its sidecar: compare per function,
    // as gmon flame and gmon pprof do for it, rather than per address range.
    let exe = exe.or_else(|| model::recorded_executable(base_path));
    if args.new_exe.is_some() && exe.is_none() {
        anyhow::bail!("--new-exe needs BASE's executable too (EXE BASE NEW, or --exe EXE)");
    }
    if let Some(ne) = &args.new_exe {
        model::check_executable_operand(ne)?;
    }
    let (bl, nl) = (
        base_path.display().to_string(),
        new_path.display().to_string(),
    );
    let diff = match &exe {
        Some(be) => {
            let opts = LoadOptions::STACKS_ONLY.with_force(args.force);
            let b = model::load_with(Some(be), std::slice::from_ref(base_path), &opts)?;
            let ne = args.new_exe.as_ref().unwrap_or(be);
            let n = load_new(ne, new_path, args.new_exe.is_some(), &opts)?;
            print_notes("diff", b.notes.iter().chain(&n.notes));
            if args.folded {
                let lines = differential_folded(
                    &crate::flame::folded_lines(&b.stacks, &b.graph),
                    &crate::flame::folded_lines(&n.stacks, &n.graph),
                );
                for l in lines {
                    writeln!(out, "{l}")?;
                }
                return Ok(ExitCode::SUCCESS);
            }
            diff_functions(&b.analysis, &n.analysis, &bl, &nl)
        }
        None => diff_ranges(
            &read_profile(base_path)?,
            &read_profile(new_path)?,
            &bl,
            &nl,
        ),
    };
    if args.json {
        crate::diff::print_json(out, &diff)?;
    } else if args.folded {
        crate::diff::print_folded(out, &diff)?;
    } else {
        let mut opts = PrintOptions::default();
        opts.limit = args.limit;
        crate::diff::print_text(out, &diff, &opts)?;
    }
    Ok(ExitCode::SUCCESS)
}
