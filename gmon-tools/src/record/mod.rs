//! `gmon record`: profile an unmodified, dynamically linked program and the processes it starts
//! by preloading the gmon-write runtime (`libgmon_write.so`), as `perf record` does for its
//! process tree.
//!
//! The engine, in order:
//! 1. [`preflight`]: refuse what can only end without a profile, before anything runs (an
//!    unwritable output directory, a missing or non-executable command, a static or set-uid
//!    program), with the status a shell would give.
//! 2. [`runtime`]: the library to preload (`$GMON_WRITE_LIB`, else the copy embedded in this
//!    binary, cached in a private content-addressed directory).
//! 3. Run the command with the runtime preloaded; every process writes its own profile into a
//!    private `0700` directory made for this run (spec/runtime.md §3), never next to the user's
//!    files. [`signals`] keeps `gmon record` alive through Ctrl-C and forwards `kill`.
//! 4. [`profiles`]: sum the processes of each executable (same build id) losslessly into one
//!    profile; [`files`]: write one file per executable, `OUT`, `OUT.<name>`, with their
//!    sidecars, as a whole set or not at all.
//! 5. [`summary`]: files, processes, samples and the top functions on stderr.
//!
//! Whatever happens after the command has run, the caller gets the command's own exit status: a
//! missing profile is a note, not an error; profiles that could not be written are a note too,
//! and [`Recorded::unwritten`] says so (the `gmon record` command then fails a command that
//! succeeded).

pub mod files;
pub mod gaps;
pub mod lost;
pub mod outer_clock;
pub mod preflight;
pub mod profiles;
pub mod rundir;
pub mod runtime;
pub mod signals;
pub mod summary;

use gmon_format::sidecar::ClockReport;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};
use std::time::Duration;

use crate::error::Context;

pub use preflight::Refusal;
pub use runtime::{LIB_ENV, RuntimeSource};
pub use summary::{TopFunctions, WrittenFile};

/// The name the first process's profile gets in the private directory (the others append
/// `.<pid>`, spec/runtime.md §3).
const STEM: &str = "gmon.out";

/// What `gmon record` needs besides the command.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// The gmon.out path of the command's first process's executable (others go beside it).
    pub output: PathBuf,
    /// Sampling rate in Hz.
    pub hz: u32,
    /// Record call stacks.
    pub stacks: bool,
    /// Profile the processes the command starts too (default); `false` profiles the first
    /// process only.
    pub inherit: bool,
    /// The runtime library (found with [`runtime::locate`] when `None`).
    pub library: Option<PathBuf>,
    /// Sample the time no clock of the runtime sees (the exec, the loader, the exit) with the
    /// outer clock ([`outer_clock`], spec/runtime.md §4.7), in this scope; `None`: not.
    pub outer: Option<outer_clock::OuterMode>,
    /// Name the top functions for the summary ([`Recorded::top`]): reads each sampled
    /// executable's symbol and unwind tables after the run (about 45 ms for a stripped `cc1`).
    /// `gmon record -q`, which prints no summary, leaves it off.
    pub name_functions: bool,
}

impl RecordOptions {
    /// Options with `gmon record`'s defaults for `output`.
    pub fn new(output: impl Into<PathBuf>) -> RecordOptions {
        RecordOptions {
            output: output.into(),
            hz: 1000,
            stacks: true,
            inherit: true,
            library: None,
            outer: Some(outer_clock::OuterMode::Auto),
            name_functions: true,
        }
    }
}

/// The outcome of a recorded run.
#[derive(Debug)]
pub struct Recorded {
    /// The command's exit status.
    pub status: ExitStatus,
    /// CPU time of the command and the descendants it waited for (`wait4`).
    pub cpu: Duration,
    /// The profiles written, the one at the output path first.
    pub files: Vec<WrittenFile>,
    /// Functions with the most self samples, over every file, and the share of named samples.
    pub top: summary::TopFunctions,
    /// Executables (and their processes) with no sample, for which no file was written.
    pub idle: Idle,
    /// What the sampling clocks did, over every file (None when no runtime said).
    pub clock: Option<ClockReport>,
    /// Where the runtime library came from.
    pub runtime: RuntimeSource,
    /// What went wrong after the command ran (no profile, a profile that could not be written),
    /// one sentence each.
    pub notes: Vec<String>,
    /// The run's profiles could not be written (a note says which file and why).
    pub unwritten: bool,
    /// What the outer clock did.
    pub outer: Outer,
}

/// What the outer clock did in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outer {
    /// Not asked for.
    Off,
    /// The kernel refused it (why, in words).
    Refused(String),
    /// It ran; what became of its samples.
    Ran(gaps::GapReport),
}

impl Recorded {
    /// Ticks counted over every file.
    pub fn samples(&self) -> u64 {
        self.files.iter().map(|f| f.samples).sum()
    }

    /// Processes that wrote a profile.
    pub fn processes(&self) -> usize {
        self.files.iter().map(|f| f.processes).sum()
    }
}

/// Runs `command` with the runtime preloaded and waits for it. Signals sent to this process
/// are left alone (see [`record_in_foreground`] for what the `gmon record` command does).
/// Errors are refusals before the run ([`Refusal`] inside, with its exit status) or a failure
/// to start the command.
pub fn record(opts: &RecordOptions, command: &[OsString]) -> crate::Result<Recorded> {
    record_with(opts, command, false)
}

/// Like [`record`], and while the command runs this process ignores SIGINT and SIGQUIT and
/// forwards SIGTERM and SIGHUP to it ([`signals`], spec/runtime.md §4.5). It changes
/// process-wide signal dispositions: one call at a time per process.
pub fn record_in_foreground(opts: &RecordOptions, command: &[OsString]) -> crate::Result<Recorded> {
    record_with(opts, command, true)
}

fn record_with(
    opts: &RecordOptions,
    command: &[OsString],
    foreground: bool,
) -> crate::Result<Recorded> {
    let Some((program, args)) = command.split_first() else {
        return Err(Refusal {
            status: 2,
            message: "no command to record".into(),
        }
        .into());
    };
    if !(1..=100_000).contains(&opts.hz) {
        return Err(Refusal {
            status: 2,
            message: format!("--hz must be between 1 and 100000, not {}", opts.hz),
        }
        .into());
    }
    let output = preflight::check_output(&opts.output)?;
    let found = preflight::find_command(Path::new(program))?;
    // The library that will be preloaded decides which programs can load it.
    let given = opts.library.clone().or_else(runtime::given_library);
    preflight::check_preloadable(&found, preflight::library_target(given.as_deref()))?;
    let output = std::path::absolute(&output)
        .with_context(|| format!("{}: cannot make the path absolute", output.display()))?;

    let (library, source) = match &opts.library {
        Some(l) => (l.clone(), RuntimeSource::Given),
        None => runtime::locate().map_err(|e| Refusal {
            status: 1,
            message: format!("{e:#}; nothing was run"),
        })?,
    };
    // The run's own directory: every process writes there, and it goes when the run is over.
    let (private, private_note) = rundir::RunDir::create(&rundir::base())?;
    let library = std::path::absolute(&library)
        .with_context(|| format!("{}: cannot make the path absolute", library.display()))?;
    let mut preload = library.into_os_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let per_process = private.path().join(STEM);
    let run = |argv: &[&OsStr]| {
        let (first, rest) = argv.split_first().expect("a program");
        let mut cmd = Command::new(first);
        cmd.args(rest)
            .env("LD_PRELOAD", &preload)
            .env("GMON_RECORD_OUT", &per_process)
            // The runtime checks the run's directory before each write and notes problems
            // in it, not on the program's stderr (spec/runtime.md §3).
            .env("GMON_RECORD_PRIVATE", "1")
            .env("GMON_RECORD_HZ", opts.hz.to_string())
            .env("GMON_RECORD_STACKS", if opts.stacks { "1" } else { "0" })
            .env("GMON_RECORD_INHERIT", if opts.inherit { "1" } else { "0" })
            .env_remove("GMON_RECORD_OWNER");
        if foreground {
            signals::run_in_foreground(&mut cmd)
        } else {
            signals::run(&mut cmd)
        }
    };
    let mut argv: Vec<&OsStr> = vec![program.as_os_str()];
    argv.extend(args.iter().map(OsString::as_os_str));
    // Started on this thread, the one that spawns the command, so that it follows the command.
    let clock = opts
        .outer
        .map(|mode| outer_clock::OuterClock::start(opts.hz, mode));
    let waited = match run(&argv) {
        // A file the kernel cannot execute (a script without `#!`) is run by /bin/sh, as a
        // shell and execvp do; the command is started with posix_spawn (signals.rs), which
        // does not do that itself.
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) => {
            let mut sh: Vec<&OsStr> = vec![OsStr::new("/bin/sh"), found.as_os_str()];
            sh.extend(args.iter().map(OsString::as_os_str));
            run(&sh)
        }
        r => r,
    }
    .with_context(|| format!("cannot run {}", program.to_string_lossy()))?;
    let (samples, mut outer) = match clock {
        None => (None, Outer::Off),
        Some(Err(outer_clock::Refused(e))) => (None, Outer::Refused(e.to_string())),
        Some(Ok(c)) => (Some(c.stop()), Outer::Ran(gaps::GapReport::default())),
    };

    let mut notes = Vec::new();
    let mut unwritten = false;
    let running = lost::still_running(&per_process);
    // A cleaner of temporary files may remove the directory during a long run: what was in it
    // is gone, and a directory at its name now is not this run's (spec/runtime.md §3).
    let vanished = private.vanished();
    let mut reported = if vanished {
        Vec::new()
    } else {
        lost::reported(private.path())
    };
    let (files, top, idle, clock) = if vanished {
        notes.push(format!(
            "{}: the run's directory was removed by another program while the command ran (a \
             cleaner of temporary files?): the profiles written into it are lost",
            private.path().display()
        ));
        (Vec::new(), TopFunctions::default(), Idle::default(), None)
    } else {
        let gaps = samples.as_ref().map(|s| (s, opts.stacks));
        match write_profiles(private.path(), &output, opts, gaps) {
            Ok((w, report)) => {
                if let (Some(r), Outer::Ran(_)) = (report, &outer) {
                    outer = Outer::Ran(r);
                }
                w
            }
            Err(e) => {
                unwritten = true;
                notes.push(format!("cannot write the profile: {e:#}"));
                (Vec::new(), TopFunctions::default(), Idle::default(), None)
            }
        }
    };
    if files.is_empty() && notes.is_empty() {
        // What the processes reported (an exec that lost the runtime) is the cause; without
        // a report, the ways out that skip every exit hook are.
        let why = if reported.is_empty() {
            "it may have ended by abort, the exit_group system call or a signal other than \
             SIGINT, SIGTERM, SIGHUP and SIGPIPE"
                .to_string()
        } else {
            reported.remove(0).what
        };
        let mut note = format!(
            "{} wrote no profile ({}): {why}",
            program.to_string_lossy(),
            describe_status(waited.status)
        );
        if output.exists() {
            note.push_str(&format!(
                "; {} is left as it was (not from this run)",
                output.display()
            ));
        }
        notes.push(note);
    }
    notes.extend(lost::describe(&reported));
    notes.extend(lost::describe_running(&running));
    notes.extend(private_note);
    if let RuntimeSource::Cache(refused) = &source
        && !refused.is_empty()
    {
        notes.push(format!(
            "the runtime library was not cached in {}",
            refused.join("; ")
        ));
    }
    // Everything in the private directory was written by this run's processes.
    if let Err(e) = private.remove() {
        notes.push(format!("cannot remove the temporary directory: {e}"));
    }
    Ok(Recorded {
        status: waited.status,
        cpu: waited.cpu,
        files,
        top,
        idle,
        clock,
        runtime: source,
        notes,
        unwritten,
        outer,
    })
}

type Written = (Vec<WrittenFile>, TopFunctions, Idle, Option<ClockReport>);

/// Executables of the process tree that got no sample, and so no file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Idle {
    /// Distinct executables.
    pub executables: usize,
    /// Processes that ran them.
    pub processes: usize,
}

/// Sums and writes the per-process profiles found in `dir` (see [`profiles`]), with the outer
/// clock's samples and whether stacks were recorded, when it ran ([`gaps`]).
fn write_profiles(
    dir: &Path,
    output: &Path,
    opts: &RecordOptions,
    outer: Option<(&outer_clock::OuterSamples, bool)>,
) -> crate::Result<(Written, Option<gaps::GapReport>)> {
    let mut found = profiles::collect(dir, STEM)?;
    if !opts.inherit {
        // A forked child (no exec) keeps sampling in the runtime; its file is not kept.
        found.retain(|p| p.first);
    }
    let report = outer.map(|(samples, stacks)| {
        let mut r = gaps::attribute(samples, &mut found, stacks);
        if !opts.inherit {
            // The processes the command started were not asked for.
            r.unowned.clear();
        }
        r
    });
    Ok((write_found(found, output, opts.name_functions)?, report))
}

/// [`write_profiles`] once the profiles are read.
fn write_found(
    found: Vec<profiles::ProcessProfile>,
    output: &Path,
    name_functions: bool,
) -> crate::Result<Written> {
    if found.is_empty() {
        return Ok((Vec::new(), TopFunctions::default(), Idle::default(), None));
    }
    let mut groups = profiles::group(found)?;
    // Every process's clock report, those of executables without a sample too: what no clock
    // saw in them is part of the run's CPU time (the summary's "not sampled" lines).
    let clock = gmon_format::sidecar::merge_clocks(
        groups
            .iter()
            .map(|g| g.sidecar.as_ref().and_then(|s| s.clock)),
    );
    // Sorted with OUT's group first.
    profiles::name_groups(&mut groups);
    // An executable without a single sample (a shell shim's `readlink`, `basename`) gets no
    // file of its own; the summary counts its processes. OUT is always written.
    let mut idle = Idle::default();
    let mut kept = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        if i > 0 && g.samples == 0 {
            idle.executables += 1;
            idle.processes += g.processes;
        } else {
            kept.push(g);
        }
    }
    let mut groups = kept;
    profiles::name_groups(&mut groups);
    let paths = files::paths(output, &groups)?;
    files::write(&groups, &paths)?;
    let files = groups
        .iter()
        .zip(paths)
        .map(|(g, (path, executable))| WrittenFile {
            path,
            executable,
            processes: g.processes,
            samples: g.samples,
        })
        .collect();
    let sidecars: Vec<&gmon_format::Sidecar> =
        groups.iter().filter_map(|g| g.sidecar.as_ref()).collect();
    let top = if name_functions {
        summary::top_functions(&sidecars, 5)
    } else {
        TopFunctions::default()
    };
    Ok((files, top, idle, clock))
}

/// How the child ended, in words for a message ("it exited with status 0", "it was killed by
/// signal 9"); `ExitStatus`'s own Display already starts with "exit status:", which reads
/// doubled inside a sentence.
pub fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("it exited with status {code}"),
        (None, Some(sig)) => format!("it was killed by signal {sig}"),
        (None, None) => format!("it ended: {status}"),
    }
}

/// The exit code a shell reports for a child's status: its code, or 128 + N when signal N
/// killed it.
pub fn exit_code(status: ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

#[cfg(test)]
mod status_tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn status_is_described_once_without_the_doubled_exit_word() {
        let ok = describe_status(ExitStatus::from_raw(0));
        assert_eq!(ok, "it exited with status 0");
        assert!(!ok.contains("exit status:"));
        assert_eq!(
            describe_status(ExitStatus::from_raw(3 << 8)),
            "it exited with status 3"
        );
        assert_eq!(
            describe_status(ExitStatus::from_raw(9)),
            "it was killed by signal 9"
        );
    }
}
