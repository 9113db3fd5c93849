//! Keeping the profile when `gmon record`'s command is stopped by `SIGINT`, `SIGTERM` or
//! `SIGHUP` (Ctrl-C, `kill`, a closed terminal), the usual way to end a server.
//!
//! Only a signal whose disposition is still `SIG_DFL` when the runtime starts is caught: a
//! program with its own handler (or one that ignores the signal) is left alone, and a handler
//! the program installs later simply replaces ours. The handler only stores the signal number
//! and writes one byte to a pipe (both async-signal-safe); a helper thread, blocked on the
//! pipe, does the rest outside signal context: if our handler is still the disposition, it
//! stops sampling, writes the profile, puts `SIG_DFL` back and re-raises the signal, so the
//! process still ends "killed by signal N" for its parent. A second such signal while the
//! profile is being written ends the process at once (the user insists).

use std::ffi::c_int;
use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::sys;

/// The signals caught (default action: terminate without a core dump).
const STOP_SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The signal being handled (0: none yet).
static PENDING: AtomicI32 = AtomicI32::new(0);
/// The pipe's write end, -1 when there is no helper thread.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_stop_signal(sig: c_int) {
    if PENDING
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // Already writing: end now, with this signal's default action.
        terminate_with(sig);
        return;
    }
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd < 0 {
        terminate_with(sig);
        return;
    }
    let saved = sys::errno();
    if sys::write(fd, &[1]) != Ok(1) {
        terminate_with(sig);
    }
    sys::set_errno(saved);
}

/// Puts `SIG_DFL` back for `sig`, unblocks it in this thread and raises it here: the process
/// ends as if the runtime had never caught it. (sigaction, sigprocmask and raise are
/// async-signal-safe.)
fn terminate_with(sig: c_int) {
    sys::sigaction(sig, Some(&sys::action(libc::SIG_DFL, 0)), None);
    sys::thread_sigmask(libc::SIG_UNBLOCK, Some(&sys::set_of(sig)), None);
    sys::raise(sig);
}

fn ours() -> libc::sighandler_t {
    on_stop_signal as *const () as libc::sighandler_t
}

/// The current disposition of `sig` (None when it cannot be read).
fn disposition(sig: c_int) -> Option<libc::sighandler_t> {
    sys::get_action(sig).map(|a| a.sa_sigaction)
}

/// The helper thread: waits for the handler's byte, then writes the profile and re-raises.
fn helper(read_fd: c_int) {
    loop {
        let mut byte = [0u8];
        let n = sys::read(read_fd, &mut byte);
        if n == Err(libc::EINTR) {
            continue;
        }
        if n != Ok(1) {
            // The pipe was closed under us (a program closing every descriptor): stop
            // listening; the signal then keeps its default effect.
            WAKE_FD.store(-1, Ordering::SeqCst);
            return;
        }
        let sig = PENDING.load(Ordering::SeqCst);
        if sig == 0 {
            continue;
        }
        if disposition(sig) != Some(ours()) {
            // The program installed its own handler in the meantime: not ours to act on.
            PENDING.store(0, Ordering::SeqCst);
            continue;
        }
        if let Err(e) = crate::profiler::finish() {
            eprintln!("gmon-write: {e}");
        }
        terminate_with(sig);
        // Only reached if the signal could not end the process (blocked elsewhere and
        // unblockable here): end it the way a shell reports a signal death.
        sys::exit_now(128 + sig);
    }
}

/// The pipe's read end until the helper thread takes it, -1 otherwise.
static READ_FD: AtomicI32 = AtomicI32::new(-1);

/// Creates the pipe; false when it fails.
fn open_pipe() -> bool {
    let Some((read_fd, write_fd)) = sys::pipe_cloexec() else {
        return false;
    };
    READ_FD.store(read_fd, Ordering::SeqCst);
    WAKE_FD.store(write_fd, Ordering::SeqCst);
    true
}

/// Starts the helper thread on the pipe. Run by the sampler's watcher at its first scan, about
/// 10 ms after profiling started (`sampler::at_first_scan`): a process that ends sooner never
/// creates the thread, and a signal caught before it runs leaves its byte in the pipe, read as
/// soon as the helper starts.
fn start_helper() {
    let read_fd = READ_FD.swap(-1, Ordering::SeqCst);
    if read_fd < 0 {
        return;
    }
    // Every signal is blocked in the helper: it must never take a stop signal itself (it
    // would wait for its own byte), nor run the program's handlers (`spawn_runtime_thread`).
    if crate::threads::spawn_runtime_thread("gmon-stopsig", move || helper(read_fd)).is_err() {
        // No helper: the handler then ends the process with the signal's default action.
        let write_fd = WAKE_FD.swap(-1, Ordering::SeqCst);
        sys::close(read_fd);
        if write_fd >= 0 {
            sys::close(write_fd);
        }
    }
}

/// A forked child has the handler but not the helper thread, and shares the parent's pipe:
/// give it its own pipe (and, at its watcher's first scan, its own helper).
extern "C" fn after_fork_in_child() {
    let old = WAKE_FD.swap(-1, Ordering::SeqCst);
    if old < 0 {
        return;
    }
    // The child's copy of our descriptor; the read end stays open with the parent's
    // (forgotten) helper, which does not exist here, and is closed by exec (O_CLOEXEC).
    sys::close(old);
    let unread = READ_FD.swap(-1, Ordering::SeqCst);
    if unread >= 0 {
        sys::close(unread);
    }
    PENDING.store(0, Ordering::SeqCst);
    open_pipe();
}

/// Catches `SIGINT`, `SIGTERM` and `SIGHUP` while their disposition is `SIG_DFL` (see the
/// module docs). Called once profiling has started in the preloaded runtime.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let free: Vec<c_int> = STOP_SIGNALS
            .into_iter()
            .filter(|&s| disposition(s) == Some(libc::SIG_DFL))
            .collect();
        if free.is_empty() || !open_pipe() {
            return;
        }
        crate::sampler::at_first_scan(start_helper);
        sys::atfork(None, None, Some(after_fork_in_child));
        // SA_RESTART: the program's interrupted system calls go on as if nothing happened.
        let act = sys::action(ours(), libc::SA_RESTART);
        for s in free {
            sys::sigaction(s, Some(&act), None);
        }
    });
}
