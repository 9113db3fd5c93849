//! `gmon gprof`: GNU gprof's command line, passed through untouched to the engine's own
//! getopt-compatible parser ([`crate::gprof::text::args`]).

use std::io::Write;
use std::process::ExitCode;

/// Arguments of `gmon gprof`: everything after the subcommand, parsed like GNU gprof does.
#[derive(Debug, clap::Args)]
#[command(
    disable_help_flag = true,
    disable_version_flag = true,
    // gprof's own command line (its options are in `gmon gprof --help` and the manual page).
    override_usage = "gmon gprof [OPTIONS] [EXECUTABLE [GMON...]]",
    after_help = "EXAMPLES:\n  \
        gmon gprof -b ./prog gmon.out              flat profile and call graph, no blurbs\n  \
        gmon gprof -b -p -q main ./prog gmon.out   flat profile, and main's call graph only\n  \
        gmon gprof -b -l ./prog gmon.out           per source line (needs -g)\n  \
        gmon gprof -s ./prog gmon.out.*            sum the profiles into gmon.sum\n  \
        gmon gprof -b -A ./prog gmon.out           annotated source"
)]
pub struct Args {
    /// gprof's options and operands (see `gmon gprof --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub rest: Vec<std::ffi::OsString>,
}

/// Runs `gmon gprof`; gprof's messages go to stderr and its exit status is returned.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    let status = crate::gprof::run(&args.rest, out, &mut err)?;
    // After GNU's output (or error), what a recorded profile's report hides or why it has no
    // call graph (nothing for -pg profiles).
    if let crate::gprof::text::args::Parsed::Run(a) =
        crate::gprof::text::args::parse(&args.rest, crate::gprof::WHOAMI)
    {
        out.flush()?;
        for note in crate::model::recorded_profile_notes(&a.image, &a.profiles) {
            writeln!(err, "gmon gprof: {note}")?;
        }
    }
    Ok(ExitCode::from(u8::try_from(status).unwrap_or(1)))
}
