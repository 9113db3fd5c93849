//! `gmon report`: the whole profile in one HTML file that opens in any browser, offline.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::flame::group_by_executable;
use crate::input_args::ViewInputs;
use crate::model;
use crate::output::write_output;
use crate::report::{
    ReportOptions, build_diff_report, build_report, build_tree_diff_report, build_tree_report,
    write_page,
};

use super::diff::DiffSides;

/// The file written when no -o is given.
const DEFAULT_OUTPUT: &str = "profile.html";

/// Arguments of `gmon report`.
#[derive(Debug, clap::Args)]
#[command(
    // With --base and --new the profiles are theirs: no GMON operand is needed.
    mut_arg("gmon", |a| a.required(false).required_unless_present("base")),
    override_usage = "gmon report [OPTIONS] [EXE] GMON...\n       \
                      gmon report --diff [OPTIONS] [EXE] BASE NEW\n       \
                      gmon report --diff [OPTIONS] [EXE] --base BASE... --new NEW...",
    about = "Write the whole profile as one HTML file that opens in any browser",
    after_help = "Write one self-contained HTML page from one or more gmon.out files (summed): a \
header (program, build id, when, samples and rate, exact or estimated stacks, what was left out; \
for `gmon record` runs, each recorded executable with its threads and samples), the functions as \
a table that sorts by any column and filters by name (with exact call counts for -pg programs), \
the call graph of the selected function (callers and callees with their call counts and the \
samples along each arc), an interactive flame and icicle graph in `gmon flame`'s colours (click \
a frame to zoom in and select its function; search by name or /regex/), and the selected \
function's hot source lines when the executable has line information.\n\nThe page needs nothing \
else: its script, style and data are inline, and its content security policy forbids every \
request, so it works offline, as a CI artifact or a mail attachment. Large profiles stay small \
and quick: names are stored once, the table draws only the rows in view and the graph only the \
frames wider than a third of a pixel.\n\nProfiles of several executables, as `gmon record` writes \
them for a process tree (`gmon report OUT OUT.*`), are reported together: each read with its own \
executable, the header lists the executables with their profiles, threads and samples, the table \
says which executable each function is in, and the flame graph has a root frame per executable, \
as `gmon flame OUT OUT.*` draws it (spec/stacks.md §12).\n\n--diff compares BASE with NEW as \
`gmon diff` does, with its options (--base/--new for several runs a side, --new-exe, --level, \
--min-samples) and its verdicts: the table gives per function BASE's and NEW's share of the \
samples, the change with its interval, the verdict in words (change, noise, too few) and the \
call counts of both; the header says which noise model ran, how many functions were tested, the \
correction (Holm) and how many changed; the flame graph has NEW's shape and `gmon flame --diff`'s \
colours, red or blue only where the frame's stack is a change, grey where it is noise. Two \
recorded process trees (--base OUT_a OUT_a.* --new OUT_b OUT_b.*) are compared executable by \
executable as `gmon diff` compares them: a root frame per executable, the verdicts of \
one correction over every pair's functions together, an Executable column, and the executables only one side ran drawn \
with their samples, all red (only in NEW) or all blue (only in BASE), their functions listed as \
not compared.\n\nEXIT \
STATUS: 0 when the page was written, whatever the comparison found (unlike `gmon diff`, whose \
status says whether something changed); 1 on trouble (a file that cannot be read, a profile of \
another program, bad options).\n\nThe executable and the checks that a profile belongs to \
it are those of `gmon flame` (spec/stacks.md §10); --force reads a profile that fails them.\n\n\
EXAMPLES:\n  gmon report ./prog gmon.out -o profile.html\n  gmon report gmon.out                       \
writes profile.html (said on stderr)\n  gmon record -o sort.out -- sort big.txt && gmon report sort.out -o sort.html\n  \
gmon report ./prog gmon.out -o - | gzip > profile.html.gz\n  \
gmon report build.out build.out.* -o build.html   a recorded `make`: a root per executable\n  \
gmon report --diff ./prog old.out new.out -o diff.html\n  \
gmon report --diff --exe ./prog --base a1.out a2.out --new b1.out b2.out -o diff.html\n  \
gmon report --diff --base old/OUT old/OUT.* --new new/OUT new/OUT.* -o tree.html"
)]
pub struct Args {
    /// The executable, the profiles and --force, as every view takes them.
    #[command(flatten)]
    pub inputs: ViewInputs,
    /// The page to write [default: profile.html, announced on stderr].
    #[arg(short = 'o', long, value_name = "FILE",
          long_help = super::output_help!("The page to write [default: profile.html, announced \
                                           on stderr]."))]
    pub output: Option<PathBuf>,
    /// Compare two profiles (BASE NEW, or --base/--new) as `gmon diff` does and write the
    /// differential report.
    #[arg(long)]
    pub diff: bool,
    /// With --diff: the runs of each side and the noise options, as `gmon diff` takes them.
    #[command(flatten)]
    pub sides: DiffSides,
}

/// Runs `gmon report`: exit 0 when the page was written (also for --diff, whatever changed).
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let data = if args.diff || args.sides.given() {
        if let Some(t) = args.sides.compare_tree(
            "report --diff",
            args.inputs.exe.as_deref(),
            &args.inputs.gmon,
            args.inputs.force,
        )? {
            // Recorded process trees: each executable compared with its counterpart, as gmon
            // diff compares them, under a root frame of its own.
            build_tree_diff_report(&t.tree, &t.models, &t.only_base, &t.only_new)
        } else {
            let c = args.sides.compare(
                "report --diff",
                args.inputs.exe.as_deref(),
                &args.inputs.gmon,
                args.inputs.force,
            )?;
            let program = c.exe.as_ref().map_or_else(
                || "address ranges (no executable)".to_owned(),
                |e| e.display().to_string(),
            );
            build_diff_report(&c.diff, &c.base, &c.new, &program)
        }
    } else {
        if args.sides.new_exe.is_some() {
            anyhow::bail!("--new-exe is for --diff: the executable of NEW");
        }
        let (exe, gmon) = args.inputs.split()?;
        let load = model::LoadOptions::default().with_force(args.inputs.force);
        match exe.is_none().then(|| group_by_executable(&gmon)).flatten() {
            // A recorded process tree: each executable's profiles read with it.
            Some(groups) => {
                let mut parts = Vec::new();
                for g in groups {
                    let l = model::load_with(Some(&g.executable), &g.profiles, &load)?;
                    super::diff::print_notes("report", l.notes.iter());
                    parts.push((g, l));
                }
                build_tree_report(&parts)
            }
            None => {
                let l = model::load_with(exe.as_deref(), &gmon, &load)?;
                super::diff::print_notes("report", l.notes.iter());
                build_report(
                    &l,
                    &ReportOptions {
                        profiles: gmon.clone(),
                    },
                )
            }
        }
    };
    let render = |w: &mut dyn Write| -> anyhow::Result<()> { Ok(write_page(w, &data)?) };
    match args.output.as_deref() {
        Some(p) if p.as_os_str() == "-" => render(out)?,
        Some(p) => write_output(p, render)?,
        None => {
            write_output(DEFAULT_OUTPUT.as_ref(), render)?;
            // A file the user did not name is announced, so it is not a surprise later.
            eprintln!("gmon report: wrote {DEFAULT_OUTPUT} (no -o given)");
        }
    }
    Ok(ExitCode::SUCCESS)
}
