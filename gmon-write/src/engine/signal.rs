//! The sampler's reserved signal (spec/runtime.md §4.2): which signal it is, taking it from the
//! program and giving it back, telling a tick from any other delivery, and the program's recorded
//! disposition of it, which the interposed `sigaction` family (`interpose/signals.rs`) shows the
//! program instead of ours.
//!
//! Samples arrive as the real-time signal [`sample_signal`] (`SIGRTMAX - 1`), never `SIGPROF`:
//! the program's own `SIGPROF`, `ITIMER_PROF` and `profil` keep working untouched, and a program
//! that installs a handler on "every catchable signal" (GNU `sort` does, for SIGPROF among
//! others) does not take our ticks.
//!
//! A tick is recognised by its `siginfo` (`SI_TIMER` with our cookie in `si_value`). Any other
//! instance of the signal (the program's own `kill`, `sigqueue` or timer on that number) is
//! handed to the program's recorded disposition.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

use crate::sys;

/// Marks our timers' signals (`sigev_value.sival_ptr`): "gmon" in ASCII.
pub(crate) const TICK_COOKIE: usize = 0x676d_6f6e;

/// Whether the runtime's handler is installed for the sample signal.
static OWNED: AtomicBool = AtomicBool::new(false);

/// The signal the sampler's timers deliver: `SIGRTMAX - 1`. Real-time signals are never sent
/// by the kernel or libc for their own events, the top of the range is the least used by
/// programs (which allocate from `SIGRTMIN` up), and `SIGRTMAX` itself is left alone because
/// some programs take "the last one".
pub(crate) fn sample_signal() -> c_int {
    static SIG: AtomicI32 = AtomicI32::new(0);
    let s = SIG.load(Ordering::Relaxed);
    if s != 0 {
        return s;
    }
    let s = sys::sigrtmax() - 1;
    SIG.store(s, Ordering::Relaxed);
    s
}

/// Whether the runtime's handler owns the sample signal now.
pub(crate) fn is_owned() -> bool {
    OWNED.load(Ordering::Acquire)
}

/// The program's view of the sample signal's disposition, stored as atomics so that the
/// signal handler can read it (a sequence count detects a torn read).
struct ProgramAction {
    seq: AtomicU64,
    handler: AtomicUsize,
    flags: AtomicI32,
    mask: [AtomicU64; 16],
}

static PROGRAM: ProgramAction = ProgramAction {
    seq: AtomicU64::new(0),
    handler: AtomicUsize::new(libc::SIG_DFL),
    flags: AtomicI32::new(0),
    mask: [const { AtomicU64::new(0) }; 16],
};

fn mask_words(set: &libc::sigset_t) -> [u64; 16] {
    // SAFETY: sigset_t is 128 bytes of plain data on Linux (glibc's 1024-bit set).
    unsafe { std::mem::transmute_copy(set) }
}

pub(crate) fn store_program(act: &libc::sigaction) {
    let w = mask_words(&act.sa_mask);
    PROGRAM.seq.fetch_add(1, Ordering::AcqRel);
    PROGRAM.handler.store(act.sa_sigaction, Ordering::Relaxed);
    PROGRAM.flags.store(act.sa_flags, Ordering::Relaxed);
    for (m, v) in PROGRAM.mask.iter().zip(w) {
        m.store(v, Ordering::Relaxed);
    }
    PROGRAM.seq.fetch_add(1, Ordering::AcqRel);
}

pub(crate) fn load_program() -> libc::sigaction {
    loop {
        let s1 = PROGRAM.seq.load(Ordering::Acquire);
        let mut act = sys::empty_action();
        act.sa_sigaction = PROGRAM.handler.load(Ordering::Relaxed);
        act.sa_flags = PROGRAM.flags.load(Ordering::Relaxed);
        let w: [u64; 16] = std::array::from_fn(|i| PROGRAM.mask[i].load(Ordering::Relaxed));
        // SAFETY: sigset_t is 128 bytes of plain data (see mask_words).
        act.sa_mask = unsafe { std::mem::transmute_copy(&w) };
        std::sync::atomic::fence(Ordering::Acquire);
        if s1 & 1 == 0 && PROGRAM.seq.load(Ordering::Relaxed) == s1 {
            return act;
        }
        std::hint::spin_loop();
    }
}

/// Installs `handler` for the sample signal and records the disposition found as the
/// program's. Returns false when `sigaction` fails.
pub(crate) fn take(handler: libc::sighandler_t) -> bool {
    sys::resolve_all();
    let sig = sample_signal();
    let mut old = sys::empty_action();
    if !sys::sigaction(sig, None, Some(&mut old)) {
        return false;
    }
    if !is_owned() {
        store_program(&old);
    }
    let act = sys::action(handler, libc::SA_SIGINFO | libc::SA_RESTART);
    if !sys::sigaction(sig, Some(&act), None) {
        return false;
    }
    OWNED.store(true, Ordering::Release);
    // The thread that starts sampling may have blocked the signal before we owned it.
    sys::thread_sigmask(libc::SIG_UNBLOCK, Some(&sys::set_of(sig)), None);
    true
}

/// Discards every queued instance of the sample signal (by ignoring it for a moment), then
/// installs `then`.
pub(crate) fn flush_queued(then: &libc::sigaction) {
    let sig = sample_signal();
    sys::sigaction(
        sig,
        Some(&sys::action(libc::SIG_IGN, 0)),
        Some(&mut sys::empty_action()),
    );
    sys::sigaction(sig, Some(then), None);
}

/// Gives the sample signal back to the program: queued ticks are discarded and its recorded
/// disposition is installed.
pub(crate) fn release() {
    if OWNED.swap(false, Ordering::AcqRel) {
        flush_queued(&load_program());
    }
}

/// Whether the kernel's disposition of the sample signal is still `handler` (only a raw
/// `rt_sigaction` system call can change it while we own it).
pub(crate) fn still_installed(handler: libc::sighandler_t) -> bool {
    sys::get_action(sample_signal()).is_some_and(|a| a.sa_sigaction == handler)
}

/// Before an exec: discard queued ticks and leave the disposition the program would have
/// passed on (ignored stays ignored; a handler becomes the default at exec either way).
/// Returns what to reinstall if the exec fails.
pub(crate) fn before_exec() -> Option<libc::sigaction> {
    if !is_owned() {
        return None;
    }
    let sig = sample_signal();
    let ours = sys::get_action(sig)?;
    let program = load_program();
    let keep = if program.sa_sigaction == libc::SIG_IGN {
        program
    } else {
        ours
    };
    flush_queued(&keep);
    Some(ours)
}

/// After a failed exec: our handler again.
pub(crate) fn after_failed_exec(ours: &libc::sigaction) {
    sys::sigaction(sample_signal(), Some(ours), None);
}

/// Whether this delivery is one of our timers' ticks.
pub(crate) fn is_tick(info: *const libc::siginfo_t) -> bool {
    if info.is_null() {
        return false;
    }
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    if code != libc::SI_TIMER {
        return false;
    }
    // SAFETY: for SI_TIMER the union holds {si_tid, si_overrun, si_sigval}; si_value reads it.
    let value = unsafe { (*info).si_value() };
    value.sival_ptr as usize == TICK_COOKIE
}

/// Hands a delivery that is not ours to the program's recorded disposition: its handler is
/// called (with its own mask blocked meanwhile); `SIG_DFL` ends the process as the default
/// action of a real-time signal would; `SIG_IGN` drops it.
pub(crate) fn forward(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let act = load_program();
    match act.sa_sigaction {
        libc::SIG_IGN => {}
        libc::SIG_DFL => {
            // The default action of a real-time signal is to terminate the process.
            release();
            sys::sigaction(sig, Some(&sys::action(libc::SIG_DFL, 0)), None);
            sys::thread_sigmask(libc::SIG_UNBLOCK, Some(&sys::set_of(sig)), None);
            sys::raise(sig);
        }
        h => {
            let mut old = sys::empty_set();
            sys::thread_sigmask(libc::SIG_BLOCK, Some(&act.sa_mask), Some(&mut old));
            if act.sa_flags & libc::SA_RESETHAND != 0 {
                store_program(&sys::empty_action());
            }
            if act.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the program installed this SA_SIGINFO handler for this signal.
                let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(h) };
                f(sig, info, ctx);
            } else {
                // SAFETY: the program installed this plain handler for this signal.
                let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(h) };
                f(sig);
            }
            sys::thread_sigmask(libc::SIG_SETMASK, Some(&old), None);
        }
    }
}
