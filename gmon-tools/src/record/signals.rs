//! The signal dispositions of `gmon record` while its command runs (spec/runtime.md §4.5): as
//! `time`, `system()` and shells do, SIGINT and SIGQUIT are ignored (Ctrl-C reaches the whole
//! foreground process group, so the command decides how the run ends and `gmon record` survives
//! to report it) and SIGTERM and SIGHUP are forwarded to the command.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

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

/// Stands in for SIG_IGN while the command runs (see [`run_in_foreground`]).
extern "C" fn ignore(_sig: libc::c_int) {}

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
pub fn run_in_foreground(cmd: &mut Command) -> io::Result<Waited> {
    // A handler that does nothing ignores the signal here, and unlike SIG_IGN it is not
    // inherited: exec (and glibc's posix_spawn, before it) puts SIG_DFL back in the command,
    // so the command needs no `pre_exec` hook, and the standard library can spawn it with
    // posix_spawn instead of copying this process with fork (spec/runtime.md §6.1). A signal
    // ignored by our own parent stays ignored, as `nohup` means.
    let mut ignored = Vec::new();
    for sig in [libc::SIGINT, libc::SIGQUIT] {
        let old = set(
            sig,
            ignore as extern "C" fn(libc::c_int) as libc::sighandler_t,
        )?;
        if old.sa_sigaction == libc::SIG_IGN {
            restore(sig, &old);
        } else {
            ignored.push((sig, old));
        }
    }
    let spawned = cmd.spawn();
    let status = spawned.and_then(|child| {
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
        let status = wait(&child);
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

/// How the command ended and the CPU time it and its waited-for descendants used.
#[derive(Debug, Clone, Copy)]
pub struct Waited {
    /// The command's exit status.
    pub status: ExitStatus,
    /// User + system CPU time from `wait4`'s resource usage (the command and every descendant
    /// it waited for).
    pub cpu: Duration,
}

/// Spawns `cmd` and waits for it, leaving signal dispositions alone.
pub fn run(cmd: &mut Command) -> io::Result<Waited> {
    let child = cmd.spawn()?;
    wait(&child)
}

/// Waits for `child` with `wait4`, which also gives its resource usage.
pub fn wait(child: &Child) -> io::Result<Waited> {
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: a zeroed rusage is valid; wait4 fills both out-pointers for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pointers to live locals; `pid` is a child of this process not yet reaped.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            let tv = |t: libc::timeval| {
                Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                    + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
            };
            return Ok(Waited {
                status: ExitStatus::from_raw(status),
                cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
            });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
