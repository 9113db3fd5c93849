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
    OUT.<pid>[.gmonx] left by an earlier run are removed first. Call stacks are unwound with \
    the objects' .eh_frame, so programs built without frame pointers get complete stacks \
    (GMON_RECORD_UNWIND=fp: frame pointers only).\n\n\
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

/// Runs `command` with the runtime preloaded and waits for it. Signals sent to this process
/// are left alone (see [`record_in_foreground`] for what the `gmon record` command does).
pub fn record(opts: &RecordOptions, command: &[OsString]) -> anyhow::Result<Recorded> {
    record_with(opts, command, false)
}

/// Like [`record`], and while the command runs this process ignores SIGINT and SIGQUIT and
/// forwards SIGTERM and SIGHUP to it, as `time`, `system()` and shells do: Ctrl-C in a
/// terminal reaches the whole foreground process group, so the command (whose runtime then
/// writes the profile, spec/runtime.md §4.5) decides how the run ends and this process
/// survives to report it; `kill <gmon pid>` stops the command the same way. A signal that was
/// ignored when this is called (`nohup`, a background job) stays ignored, in the command too.
/// It changes process-wide signal dispositions: one call at a time per process.
pub fn record_in_foreground(
    opts: &RecordOptions,
    command: &[OsString],
) -> anyhow::Result<Recorded> {
    record_with(opts, command, true)
}

fn record_with(
    opts: &RecordOptions,
    command: &[OsString],
    foreground: bool,
) -> anyhow::Result<Recorded> {
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
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LD_PRELOAD", preload)
        .env("GMON_RECORD_OUT", &gmon)
        .env("GMON_RECORD_HZ", opts.hz.to_string())
        .env("GMON_RECORD_STACKS", if opts.stacks { "1" } else { "0" })
        .env_remove("GMON_RECORD_OWNER");
    let status = if foreground {
        signals::run_in_foreground(&mut cmd)
    } else {
        cmd.status()
    }
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
             set-uid (LD_PRELOAD ignored), have ended by _exit, abort or a signal other than \
             SIGINT, SIGTERM and SIGHUP (SIGKILL, SIGSEGV, ...), or use SIGPROF itself \
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
    let rec = record_in_foreground(&opts, &args.command)?;
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

/// The signal dispositions of `gmon record` while its command runs.
mod signals {
    use std::io;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, ExitStatus};
    use std::sync::atomic::{AtomicI32, Ordering};

    /// The running command's pid for the forwarding handler (0: none).
    static CHILD: AtomicI32 = AtomicI32::new(0);

    /// Sends the signal on to the command; only async-signal-safe calls, and errno is kept
    /// because the handler may interrupt code that is about to read it.
    extern "C" fn forward(sig: libc::c_int) {
        let pid = CHILD.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: __errno_location returns this thread's errno; kill is async-signal-safe.
            unsafe {
                let errno = *libc::__errno_location();
                libc::kill(pid, sig);
                *libc::__errno_location() = errno;
            }
        }
    }

    /// Sets `handler` for `sig` and returns the disposition it replaces.
    fn set(sig: libc::c_int, handler: libc::sighandler_t) -> io::Result<libc::sigaction> {
        // SAFETY: zeroed sigaction structs are valid; sigemptyset and sigaction get pointers
        // to them.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            let mut old: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler;
            new.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            if libc::sigaction(sig, &new, &mut old) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(old)
        }
    }

    /// Puts back a disposition returned by [`set`].
    fn restore(sig: libc::c_int, old: &libc::sigaction) {
        // SAFETY: `old` came from sigaction for this signal.
        unsafe {
            libc::sigaction(sig, old, std::ptr::null_mut());
        }
    }

    /// Spawns `cmd` and waits for it with SIGINT/SIGQUIT ignored and SIGTERM/SIGHUP
    /// forwarded (each only when it was not ignored already), then restores the dispositions.
    pub(super) fn run_in_foreground(cmd: &mut Command) -> io::Result<ExitStatus> {
        let mut ignored = Vec::new();
        for sig in [libc::SIGINT, libc::SIGQUIT] {
            let old = set(sig, libc::SIG_IGN)?;
            if old.sa_sigaction == libc::SIG_IGN {
                restore(sig, &old);
            } else {
                ignored.push((sig, old));
            }
        }
        // SIG_IGN survives exec: the command gets the default back for the signals ignored
        // here only (one ignored by our own parent stays ignored, as `nohup` means).
        let reset: Vec<libc::c_int> = ignored.iter().map(|(sig, _)| *sig).collect();
        // SAFETY: the closure runs between fork and exec and only calls signal(2), which is
        // async-signal-safe; `reset` is read, not allocated or freed, there.
        unsafe {
            cmd.pre_exec(move || {
                for &sig in &reset {
                    if libc::signal(sig, libc::SIG_DFL) == libc::SIG_ERR {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let spawned = cmd.spawn();
        let status = spawned.and_then(|mut child| {
            // The pid is published before the handler is installed, and the handler is set
            // only after spawn, so the command itself never inherits it (exec would reset it
            // anyway) and a signal is never forwarded to a stale pid.
            CHILD.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
            let mut forwarding = Vec::new();
            for sig in [libc::SIGTERM, libc::SIGHUP] {
                match set(
                    sig,
                    forward as extern "C" fn(libc::c_int) as libc::sighandler_t,
                ) {
                    Ok(old) if old.sa_sigaction == libc::SIG_IGN => restore(sig, &old),
                    Ok(old) => forwarding.push((sig, old)),
                    Err(_) => {}
                }
            }
            let status = child.wait();
            for (sig, old) in &forwarding {
                restore(*sig, old);
            }
            CHILD.store(0, Ordering::SeqCst);
            status
        });
        for (sig, old) in &ignored {
            restore(*sig, old);
        }
        status
    }
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
