//! `gmon diff`: what changed between two profiles (library: [`crate::diff`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use crate::diff::{PrintOptions, diff_functions, diff_ranges, differential_folded};
use crate::gprof::{Analysis, AnalysisOptions, Image};
use crate::output::read_input;

/// Arguments of `gmon diff`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "EXAMPLES:\n  gmon diff --exe ./prog old/gmon.out new/gmon.out\n  \
                  gmon diff --exe ./prog-v1 --new-exe ./prog-v2 v1.out v2.out --json\n  \
                  gmon diff --exe ./prog a.out b.out --folded | inferno-flamegraph > diff.svg",
    after_long_help = "Per function (with --exe; without it, per address range starting at arc \
                  callee addresses): self time and calls in BASE and NEW, the change and the \
                  relative change, largest change first. When the total samples differ, the \
                  changes are shown raw and normalized (NEW scaled by base total / new total), \
                  sorted by the normalized change, and the header says so. Functions with \
                  samples or calls in one profile only are marked added / removed.\n\n\
                  --json prints one object with stable field names (version 1; see the \
                  `gmon_tools::diff::Diff` documentation). --folded prints differential folded \
                  stacks (`stack base_count new_count`), estimated from the call graph with \
                  --exe, single frames without, for inferno's differential flame graph.\n\n\
                  EXAMPLES:\n  gmon diff --exe ./prog old/gmon.out new/gmon.out\n  \
                  gmon diff --exe ./prog-v1 --new-exe ./prog-v2 v1.out v2.out --json\n  \
                  gmon diff --exe ./prog a.out b.out --folded | inferno-flamegraph > diff.svg"
)]
pub struct Args {
    /// The baseline profile.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,

    /// The profile to compare with it.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    /// The executable of BASE (and of NEW unless --new-exe is given): compare per function.
    #[arg(long, value_name = "EXE")]
    pub exe: Option<PathBuf>,

    /// The executable of NEW, when it is another build.
    #[arg(long, value_name = "EXE", requires = "exe")]
    pub new_exe: Option<PathBuf>,

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

fn analyse(exe: &Path, profile: gmon_format::Profile) -> anyhow::Result<Analysis> {
    // gprof's messages name the file; only their own program prefix is dropped (QA #15).
    let image = Image::open(exe, "gmon")
        .map_err(|e| anyhow::anyhow!("{}", e.without_program("gmon")))
        .context("cannot read the executable")?;
    let opts = AnalysisOptions {
        whoami: "gmon".to_owned(),
        ..AnalysisOptions::default()
    };
    Analysis::new(&image, &[profile], &opts)
        .map_err(|e| anyhow::anyhow!("{}", e.without_program("gmon")))
        .with_context(|| format!("analysing {}", exe.display()))
}

/// [`crate::merge::check_belongs`] for NEW when no `--new-exe` was given; shared with
/// `gmon flame --diff`.
pub fn check_new_against(
    exe: &Path,
    path: &Path,
    profile: &gmon_format::Profile,
) -> anyhow::Result<()> {
    let info = crate::stacks::Executable::open(exe)?;
    crate::merge::check_belongs(&info, path, profile).map_err(|e| {
        anyhow::anyhow!("{e:#} (NEW is read with --exe's executable; give its own with --new-exe)")
    })
}

/// Runs `gmon diff`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let base = read_profile(&args.base)?;
    let new = read_profile(&args.new)?;
    let (bl, nl) = (
        args.base.display().to_string(),
        args.new.display().to_string(),
    );
    let new_exe = args.new_exe.as_ref().or(args.exe.as_ref());
    // NEW read with BASE's executable: refuse it when it cannot belong there (as merge --exe
    // does), rather than crediting its samples to whatever lies at the same addresses.
    if args.new_exe.is_none()
        && let Some(exe) = &args.exe
    {
        check_new_against(exe, &args.new, &new)?;
    }
    let diff = match (&args.exe, new_exe) {
        (Some(be), Some(ne)) => {
            if args.folded {
                let b = crate::stacks::load(Some(be), std::slice::from_ref(&args.base))?;
                let n = crate::stacks::load(Some(ne), std::slice::from_ref(&args.new))?;
                let lines = differential_folded(
                    &crate::flame::folded_lines(&b.stacks, &b.graph),
                    &crate::flame::folded_lines(&n.stacks, &n.graph),
                );
                for l in lines {
                    writeln!(out, "{l}")?;
                }
                return Ok(ExitCode::SUCCESS);
            }
            diff_functions(&analyse(be, base)?, &analyse(ne, new)?, &bl, &nl)
        }
        _ => diff_ranges(&base, &new, &bl, &nl),
    };
    if args.json {
        crate::diff::print_json(out, &diff)?;
    } else if args.folded {
        crate::diff::print_folded(out, &diff)?;
    } else {
        crate::diff::print_text(out, &diff, &PrintOptions { limit: args.limit })?;
    }
    Ok(ExitCode::SUCCESS)
}
