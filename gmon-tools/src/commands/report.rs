//! `gmon report`: the whole profile in one HTML file that opens in any browser, offline.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::input_args::ViewInputs;
use crate::model;
use crate::output::write_output;
use crate::report::{ReportOptions, build_report, write_page};

/// The file written when no -o is given.
const DEFAULT_OUTPUT: &str = "profile.html";

/// Arguments of `gmon report`.
#[derive(Debug, clap::Args)]
#[command(
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
frames wider than a third of a pixel.\n\nThe executable and the checks that a profile belongs to \
it are those of `gmon flame` (spec/stacks.md §10); --force reads a profile that fails them.\n\n\
EXAMPLES:\n  gmon report ./prog gmon.out -o profile.html\n  gmon report gmon.out                       \
writes profile.html (said on stderr)\n  gmon record -o sort.out -- sort big.txt && gmon report sort.out -o sort.html\n  \
gmon report ./prog gmon.out -o - | gzip > profile.html.gz"
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
}

/// Runs `gmon report`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (exe, gmon) = args.inputs.split()?;
    let load = model::LoadOptions::default().with_force(args.inputs.force);
    let l = model::load_with(exe.as_deref(), &gmon, &load)?;
    super::diff::print_notes("report", l.notes.iter());
    let data = build_report(
        &l,
        &ReportOptions {
            profiles: gmon.clone(),
        },
    );
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
