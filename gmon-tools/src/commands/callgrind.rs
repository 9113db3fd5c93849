//! `gmon callgrind`: a callgrind profile (KCachegrind, callgrind_annotate) from gmon.out files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::callgrind::{callgrind_from, write_callgrind};
use crate::model;
use crate::output::write_output;

use super::diff::print_notes;

/// Arguments of `gmon callgrind`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Write a callgrind profile (KCachegrind, callgrind_annotate)",
    // The subcommand's doc comment in cli.rs sets `about` and `long_about`, so the long
    // description goes into `after_help`, which is shown with both -h and --help.
    after_help = "Write the profile in the callgrind format, which KCachegrind, QCachegrind, \
callgrind_annotate, gprof2dot -f callgrind and speedscope read, from one or more gmon.out files, \
summed.\n\n\
The one event is Samples, histogram samples (1 / rate seconds each; the header says the rate). \
Self costs sit at the sampled instructions and their source lines (positions: instr line), so \
KCachegrind's source and machine-code views and callgrind_annotate's annotated sources show the \
hot lines. For a -pg program, calls= are the exact call counts of its arcs (not estimates), and \
each call's inclusive cost is the time gprof's call graph propagates along that arc. For a \
profile with exact sampled stacks (gmon record) inclusive costs come from the stacks, and where \
-pg counted no calls (calls into shared objects, a program built without -pg) calls= counts the \
sampled stacks that hold the call; the header says which. The header also says how many samples \
are in the file and how many could not be placed, and why.\n\n\
EXAMPLES:\n  gmon callgrind ./prog gmon.out -o callgrind.out.prog\n  \
callgrind_annotate --inclusive=yes --tree=caller callgrind.out.prog\n  \
kcachegrind callgrind.out.prog\n  gprof2dot -f callgrind callgrind.out.prog | dot -Tsvg -o graph.svg"
)]
pub struct Args {
    /// The executable and the profiles.
    #[command(flatten)]
    pub inputs: crate::input_args::ViewInputs,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE",
          long_help = super::output_help!("Write to this file instead of stdout."))]
    pub output: Option<PathBuf>,
}

/// Runs `gmon callgrind`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (exe, gmon) = args.inputs.split()?;
    let load = model::LoadOptions::default().with_force(args.inputs.force);
    let l = model::load_with(exe.as_deref(), &gmon, &load)?;
    print_notes("callgrind", l.notes.iter());
    let inputs: Vec<String> = gmon.iter().map(|p| p.display().to_string()).collect();
    let command = format!("{} {}", l.executable.path.display(), inputs.join(" "));
    let (profile, _) = callgrind_from(&l, &command);
    let render = |w: &mut dyn Write| -> anyhow::Result<()> { Ok(write_callgrind(w, &profile)?) };
    match &args.output {
        Some(path) => write_output(path, render)?,
        None => render(out)?,
    }
    Ok(ExitCode::SUCCESS)
}
