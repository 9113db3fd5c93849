//! `gmon record`: profile an unmodified, dynamically linked program by preloading the gmon-write
//! runtime (`libgmon_write.so`).
//!
//! The runtime's constructor sees `GMON_RECORD_OUT` and starts profiling before `main`; at exit
//! the program writes a GNU gmon.out (the main executable's histogram, for `gprof`) and its
//! sidecar `OUT.gmonx` (shared libraries, call stacks). See `spec/runtime.md`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};

use anyhow::{Context, bail};

/// The environment variable that names the runtime library explicitly.
pub const LIB_ENV: &str = "GMON_WRITE_LIB";
/// The runtime library's file name.
pub const LIB_NAME: &str = "libgmon_write.so";

/// Arguments of `gmon record`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "WHERE THE RUNTIME LIBRARY IS FOUND (first that exists):\n  \
    1. $GMON_WRITE_LIB (a path to libgmon_write.so; an error if it does not exist)\n  \
    2. libgmon_write.so next to the gmon executable (target/release/ after \
       `cargo build --release --workspace`)\n  \
    3. ../lib/libgmon_write.so and ../lib/gmon/libgmon_write.so relative to the gmon executable\n\n\
    The program must be dynamically linked and not set-uid. Every process the command starts \
    is profiled: the first writes OUT, the others OUT.<pid>; files OUT, OUT.gmonx and \
    OUT.<pid>[.gmonx] left by an earlier run are removed first. Call stacks need frame pointers \
    (-fno-omit-frame-pointer, -C force-frame-pointers=yes).\n\n\
    EXAMPLES:\n  gmon record -- ./prog arg1 arg2\n  gmon record -o run1.out --hz 4000 -- ./prog\n  \
    gprof -b ./prog gmon.out\n  gmon flame gmon.out > flame.svg"
)]
pub struct Args {
    /// Where to write the profile (the sidecar goes to OUT.gmonx).
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
    /// The program to run and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

/// What `gmon record` needs besides the command.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// The gmon.out path.
    pub output: PathBuf,
    /// Sampling rate in Hz.
    pub hz: u32,
    /// Record call stacks.
    pub stacks: bool,
    /// The runtime library (found with [`find_runtime_library`] when `None`).
    pub library: Option<PathBuf>,
}

/// The outcome of a recorded run.
#[derive(Debug)]
pub struct Recorded {
    /// The command's exit status.
    pub status: ExitStatus,
    /// The gmon.out written.
    pub gmon: PathBuf,
    /// Ticks recorded, from the sidecar (`None` when it is unreadable).
    pub samples: Option<u64>,
}

/// The places searched for the runtime library, in order (without `$GMON_WRITE_LIB`).
pub fn library_candidates() -> Vec<PathBuf> {
    let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    vec![
        dir.join(LIB_NAME),
        dir.join("../lib").join(LIB_NAME),
        dir.join("../lib/gmon").join(LIB_NAME),
    ]
}

/// Finds `libgmon_write.so`: `$GMON_WRITE_LIB`, else the first of [`library_candidates`].
pub fn find_runtime_library() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os(LIB_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        bail!("{LIB_ENV}={}: no such file", p.display());
    }
    let candidates = library_candidates();
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let looked: Vec<String> = candidates
        .iter()
        .map(|p| format!("  {}", p.display()))
        .collect();
    bail!(
        "cannot find the gmon-write runtime ({LIB_NAME}); looked in:\n{}\n\
         build it with `cargo build --release --workspace` (it lands next to gmon), \
         or set {LIB_ENV} to its path",
        looked.join("\n")
    )
}

/// Runs `command` with the runtime preloaded and waits for it.
pub fn record(opts: &RecordOptions, command: &[OsString]) -> anyhow::Result<Recorded> {
    let Some((program, args)) = command.split_first() else {
        bail!("no command to record")
    };
    if !(1..=100_000).contains(&opts.hz) {
        bail!("--hz must be between 1 and 100000, not {}", opts.hz);
    }
    let library = match &opts.library {
        Some(l) => l.clone(),
        None => find_runtime_library()?,
    };
    let library = std::path::absolute(&library)
        .with_context(|| format!("{}: cannot make the path absolute", library.display()))?;
    let gmon = std::path::absolute(&opts.output)
        .with_context(|| format!("{}: cannot make the path absolute", opts.output.display()))?;
    let sidecar = gmon_format::sidecar_path(&gmon);
    // A profile left by an earlier run (OUT, OUT.gmonx, OUT.<pid>[.gmonx]) must not pass for
    // this run's.
    let stale_children: Vec<PathBuf> = child_profiles(&gmon)
        .into_iter()
        .flat_map(|p| [gmon_format::sidecar_path(&p), p])
        .collect();
    for stale in [&gmon, &sidecar].into_iter().chain(&stale_children) {
        match std::fs::remove_file(stale) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("{}: cannot remove", stale.display())),
        }
    }
    let mut preload = library.into_os_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let status = Command::new(program)
        .args(args)
        .env("LD_PRELOAD", preload)
        .env("GMON_RECORD_OUT", &gmon)
        .env("GMON_RECORD_HZ", opts.hz.to_string())
        .env("GMON_RECORD_STACKS", if opts.stacks { "1" } else { "0" })
        .env_remove("GMON_RECORD_OWNER")
        .status()
        .with_context(|| format!("cannot run {}", program.to_string_lossy()))?;
    if !gmon.exists() {
        let children = child_profiles(&gmon);
        if !children.is_empty() {
            let list: Vec<String> = children
                .iter()
                .map(|p| format!("  {}", p.display()))
                .collect();
            eprintln!(
                "gmon record: the command's own process wrote no profile (it ended with _exit?); \
                 its child processes wrote:\n{}",
                list.join("\n")
            );
            return Ok(Recorded {
                status,
                gmon: children[0].clone(),
                samples: None,
            });
        }
        bail!(
            "{} wrote no profile to {} ({}): it may be statically linked or \
             set-uid (LD_PRELOAD ignored), have ended by a signal or _exit, or use SIGPROF itself \
             (see its stderr)",
            program.to_string_lossy(),
            gmon.display(),
            describe_status(status)
        );
    }
    let samples = std::fs::read(&sidecar)
        .ok()
        .and_then(|b| gmon_format::read_extension(&b).ok())
        .map(|e| e.counters.samples);
    Ok(Recorded {
        status,
        gmon,
        samples,
    })
}

/// Profiles written by descendants of the recorded command: `OUT.<pid>`, sorted.
pub fn child_profiles(gmon: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (gmon.parent(), gmon.file_name()) else {
        return Vec::new();
    };
    let prefix = format!("{}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let n = e.file_name().to_string_lossy().into_owned();
            let pid = n.strip_prefix(&prefix)?;
            (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| e.path())
        })
        .collect();
    found.sort();
    found
}

/// How the child ended, in words for an error message ("exited with status 0", "killed by
/// signal 9"); `ExitStatus`'s own Display already starts with "exit status:", which reads
/// doubled inside a sentence.
fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("it exited with status {code}"),
        (None, Some(sig)) => format!("it was killed by signal {sig}"),
        (None, None) => format!("it ended: {status}"),
    }
}

/// The exit code that mirrors a child's status (128 + signal when it was killed).
fn exit_code(status: ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Runs `gmon record`: the command's output goes where it would without gmon; a one-line
/// summary goes to stderr; the exit status is the command's.
pub fn run(args: Args, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let opts = RecordOptions {
        output: args.output,
        hz: args.hz,
        stacks: !args.no_stacks,
        library: None,
    };
    let rec = record(&opts, &args.command)?;
    match rec.samples {
        Some(n) => eprintln!(
            "gmon record: {n} samples at {} Hz in {} (+ .gmonx)",
            opts.hz,
            rec.gmon.display()
        ),
        None => eprintln!("gmon record: wrote {}", rec.gmon.display()),
    }
    Ok(exit_code(rec.status))
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
