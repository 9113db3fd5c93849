//! Keeping the profile when `gmon record`'s command is ended by a signal whose default action
//! ends the process: `SIGINT`, `SIGTERM` or `SIGHUP` (Ctrl-C, `kill`, a closed terminal: the
//! usual way to end a server) and `SIGPIPE` (the usual end of a program in a pipeline,
//! `prog | head`). spec/runtime.md §4.5 gives the rule and the reasons.
//!
//! While the program's disposition of one of these signals is `SIG_DFL`, the runtime's handler
//! stands in for it: when the runtime starts (a signal the program ignores or handles is left
//! alone), and whenever the program sets `SIG_DFL` again through the interposed `sigaction` or
//! `signal` (the clean-up idiom of `sort` and many others: undo, set `SIG_DFL`, `raise`). The
//! program asking for the disposition is told `SIG_DFL` ([`shown`]), and a handler it installs
//! replaces ours.
//!
//! The handler writes the profile itself, on the path `exit` takes (no allocation, bounded
//! waits: `profiler::finish_at_exit`, safe in a handler that interrupted `malloc`), puts
//! `SIG_DFL` back, unblocks the signal and raises it: the process ends "killed by signal N"
//! for its parent, as without the runtime, and before the interrupted code runs on. (Returning
//! first would not do: a `write` that raised `SIGPIPE` would fail with `EPIPE` and the program
//! go on; a `raise` at the end of a clean-up handler would return into a program that expects
//! to be dead.) The handler runs with `SA_NODEFER`: the same signal again while the profile is
//! being written ends the process at once (the user insists).

use std::ffi::c_int;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::sys;

/// The signals caught (default action: terminate without a core dump).
const STOP_SIGNALS: [c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE];

/// Whether [`install`] ran: the runtime stands in for `SIG_DFL` from then on.
static INSTALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(sig: c_int) {
    // The process is already ending by `exit` or `_exit`, whose write this signal may have
    // interrupted: let that write finish and end the process (profiler::exit_write_in_progress).
    if crate::profiler::exit_write_in_progress() {
        return;
    }
    // Nothing is written when the profile already was (or is being written: a second signal).
    crate::profiler::finish_at_exit();
    terminate_with(sig);
    // Only reached if the signal could not end the process: end it the way a shell reports a
    // signal death.
    sys::exit_now(128 + sig);
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

/// Our disposition: the handler, re-entered by the same signal (`SA_NODEFER`).
fn our_action() -> libc::sigaction {
    sys::action(ours(), libc::SA_NODEFER)
}

/// The disposition the program is shown for `handler`: `SIG_DFL` for our stop handler, which
/// stands in for the default (a program that installs its handler only over `SIG_DFL`, as
/// many do, decides as it would without the runtime).
pub(crate) fn shown(handler: libc::sighandler_t) -> libc::sighandler_t {
    if handler == ours() {
        libc::SIG_DFL
    } else {
        handler
    }
}

/// What to install when the program sets `handler` for `sig`: our action when that is
/// `SIG_DFL` for one of the stop signals under the preloaded runtime, else `None` (the
/// program's own request goes to libc as it is).
pub(crate) fn stand_in(sig: c_int, handler: libc::sighandler_t) -> Option<libc::sigaction> {
    (handler == libc::SIG_DFL && STOP_SIGNALS.contains(&sig) && INSTALLED.load(Ordering::SeqCst))
        .then(our_action)
}

/// The current disposition of `sig` (None when it cannot be read).
fn disposition(sig: c_int) -> Option<libc::sighandler_t> {
    sys::get_action(sig).map(|a| a.sa_sigaction)
}

/// Catches `SIGINT`, `SIGTERM`, `SIGHUP` and `SIGPIPE` while their disposition is `SIG_DFL`
/// (see the module docs). Called once profiling has started in the preloaded runtime.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let act = our_action();
        for s in STOP_SIGNALS {
            if disposition(s) == Some(libc::SIG_DFL) {
                sys::sigaction(s, Some(&act), None);
            }
        }
        INSTALLED.store(true, Ordering::SeqCst);
    });
}
