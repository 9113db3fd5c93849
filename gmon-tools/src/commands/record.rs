//! `gmon record`: the command line over [`crate::record`].

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::record::outer_clock::{OuterMode, Scope};
use crate::record::{self, RecordOptions};

/// `--outer-clock`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OuterClockArg {
    /// `system` where the kernel allows it, else `inherited`.
    Auto,
    /// A CPU clock on every CPU, keeping the command's processes (root, CAP_PERFMON, or
    /// perf_event_paranoid <= 0): sees each process to its very end.
    System,
    /// Task clocks the command's processes inherit (any user; misses the end of each
    /// process's exit).
    Inherited,
    /// No outer clock (as --no-outer-clock).
    Off,
}

/// Arguments of `gmon record`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
PROCESSES AND FILES:
  Every process the command starts is profiled (--no-inherit: the first only), each into a \
private temporary directory that is removed afterwards. Processes running the same executable \
(same build id) are summed into one profile without losing a count. The executable of the \
command's first process gets OUT when it holds its own work (at least 3 samples and 5% of the \
run's: a shell that only starts other programs has a sample or two at most; then the executable \
with the most samples gets it); every other executable gets OUT.<name> (its file \
name, cut to fit the file-name limit, with .2, .3, ... when the name is taken by another \
executable or a sidecar, or by a file that is not a profile); an executable other than OUT's \
with no sample at all gets no file. Each profile has its sidecar (OUT.gmonx). OUT must be a \
regular file or a new name (a FIFO or device is refused). The files are written whole to \
temporary files and renamed into place only when all are complete: a full disk leaves none. No \
other file is written, and none is removed. A summary goes to stderr.

THE RUNTIME LIBRARY (libgmon_write.so):
  $GMON_WRITE_LIB when set (an error if it does not exist); otherwise the copy embedded in this \
gmon binary, written once to $XDG_CACHE_HOME/gmon/<hash>/ (default ~/.cache/gmon/<hash>/; \
directories 0700, checked to be the user's, file created exclusively and checked before each \
use; never removed), else ~/.cache/gmon/<hash>/ under the home the password database gives \
(HOME unset, as under cron), else $XDG_RUNTIME_DIR/gmon/<hash>/. When none of them can be \
used safely, nothing is run: a process the command leaves running keeps the library's path \
in LD_PRELOAD, so it must never be one another user could create later.

EXIT STATUS:
  The command's own status, or 128+N when it was killed by signal N, whether or not a profile \
was written (a missing profile is reported on stderr; SIGINT, SIGTERM, SIGHUP and SIGPIPE let \
the program write its profile before it dies of them). When the profiles cannot be written \
after the run (a full disk), the error is on stderr and the status is 1 if the command's was 0. \
Before running anything: 127 when the command is not found, 126 when it cannot be executed, 2 \
for a usage error (e.g. -o -, -o FIFO), 1 when the profile cannot be written (unwritable \
directory, another user's link, FIFO or file in a sticky shared directory) or LD_PRELOAD cannot \
reach the program (static, set-uid or set-gid: link it with gmon-write instead; built for \
another architecture or word size than this gmon: use a gmon built for it).

Call stacks are unwound with each object's .eh_frame, so programs built without frame pointers \
get complete stacks (GMON_RECORD_UNWIND=fp: walk frame pointers only).

EXAMPLES:
  gmon record -- ./prog arg1 arg2
  gmon record -o run1.out --hz 4000 -- ./prog
  gmon flame gmon.out > flame.svg              the executable is found from the sidecar
  gmon pprof gmon.out -o prof.pb.gz && pprof -top prof.pb.gz
  gmon gprof -b ./prog gmon.out                gprof's reports, for a program with symbols")]
pub struct Args {
    /// Where to write the profile (the sidecar goes to OUT.gmonx; other executables of the
    /// process tree to OUT.<name>).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT",
        default_value = "gmon.out"
    )]
    pub output: PathBuf,
    /// Sampling rate: ticks per second of each thread's CPU time.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub hz: u32,
    /// Do not record call stacks.
    #[arg(long)]
    pub no_stacks: bool,
    /// Profile the command's first process only, not the processes it starts.
    #[arg(long)]
    pub no_inherit: bool,
    /// gmon record's own clock on the whole process tree, which samples what the runtime cannot
    /// see (each program's exec, dynamic loading and exit).
    #[arg(long, value_name = "SCOPE", value_enum, default_value_t = OuterClockArg::Auto)]
    pub outer_clock: OuterClockArg,
    /// Do not run the outer clock (--outer-clock off).
    #[arg(long, conflicts_with = "outer_clock")]
    pub no_outer_clock: bool,
    /// Print no summary: only problems (a profile lost or not written) are said on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// The program to run and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

/// Runs `gmon record`: the command's output goes where it would without gmon; the summary goes
/// to stderr; the exit status is the command's (or a refusal's, before anything ran; or 1 for a
/// command that succeeded but whose profiles could not be written).
pub fn run(args: Args, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let opts = RecordOptions {
        output: args.output,
        hz: args.hz,
        stacks: !args.no_stacks,
        inherit: !args.no_inherit,
        library: None,
        name_functions: !args.quiet,
        outer: match args.outer_clock {
            _ if args.no_outer_clock => None,
            OuterClockArg::Off => None,
            OuterClockArg::Auto => Some(OuterMode::Auto),
            OuterClockArg::System => Some(OuterMode::Only(Scope::System)),
            OuterClockArg::Inherited => Some(OuterMode::Only(Scope::Inherited)),
        },
    };
    let rec = match record::record_in_foreground(&opts, &args.command) {
        Ok(rec) => rec,
        Err(crate::Error::Refused(refusal)) => {
            eprintln!("gmon record: {refusal}");
            return Ok(ExitCode::from(refusal.status));
        }
        Err(e) => return Err(e.into()),
    };
    let mut err = std::io::stderr().lock();
    if !args.quiet && !rec.files.is_empty() {
        let _ = write!(
            err,
            "{}",
            record::summary::render(
                &rec.files,
                (rec.idle.executables, rec.idle.processes),
                opts.hz,
                rec.cpu,
                &rec.top,
                rec.clock.as_ref(),
                &rec.outer
            )
        );
    }
    for note in &rec.notes {
        let _ = writeln!(err, "gmon record: {note}");
    }
    if rec.unwritten && rec.status.success() {
        return Ok(ExitCode::from(1));
    }
    Ok(record::exit_code(rec.status))
}
