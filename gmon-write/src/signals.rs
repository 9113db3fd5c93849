//! The sampler's reserved signal, and the libc functions interposed so that the program can
//! neither replace nor block it (spec/runtime.md §4.2).
//!
//! Samples arrive as the real-time signal [`sample_signal`] (`SIGRTMAX - 1`), never `SIGPROF`:
//! the program's own `SIGPROF`, `ITIMER_PROF` and `profil` keep working untouched, and a program
//! that installs a handler on "every catchable signal" (GNU `sort` does, for SIGPROF among
//! others) does not take our ticks. While the runtime owns the signal ([`is_owned`]):
//!
//! * `sigaction` and `signal` on it act on a *recorded* disposition, the program's view,
//!   which they report back; the kernel keeps our handler.
//! * `sigprocmask` and `pthread_sigmask` never block it (it is removed from the set of
//!   `SIG_BLOCK` and `SIG_SETMASK`); so a thread that blocks every signal is still sampled, as
//!   glibc silently keeps its own internal signals out of every mask.
//! * `sigsuspend` keeps it blocked while waiting: the thread uses no CPU time then, so no tick
//!   is due, and a pending tick cannot end the wait early.
//! * `sigwait`, `sigwaitinfo`, `sigtimedwait` and `signalfd` never take it.
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

fn store_program(act: &libc::sigaction) {
    let w = mask_words(&act.sa_mask);
    PROGRAM.seq.fetch_add(1, Ordering::AcqRel);
    PROGRAM.handler.store(act.sa_sigaction, Ordering::Relaxed);
    PROGRAM.flags.store(act.sa_flags, Ordering::Relaxed);
    for (m, v) in PROGRAM.mask.iter().zip(w) {
        m.store(v, Ordering::Relaxed);
    }
    PROGRAM.seq.fetch_add(1, Ordering::AcqRel);
}

fn load_program() -> libc::sigaction {
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

/// A copy of `set` without the sample signal, when the runtime owns it.
fn without_ours(set: *const libc::sigset_t) -> Option<libc::sigset_t> {
    if set.is_null() || !is_owned() {
        return None;
    }
    // SAFETY: a non-null set from the caller, valid for the call.
    let mut copy = unsafe { *set };
    sys::remove(&mut copy, sample_signal());
    Some(copy)
}

fn ptr_or(set: &Option<libc::sigset_t>, orig: *const libc::sigset_t) -> *const libc::sigset_t {
    set.as_ref().map_or(orig, |s| s as *const _)
}

/// The real function `$real` as `$ty`, or return `$missing` from the wrapper when there is none.
macro_rules! real_or {
    ($real:expr, $ty:ty, $missing:expr) => {{
        let p = $real.get();
        if p.is_null() {
            return $missing;
        }
        // SAFETY: the next definition of this very function has this signature.
        unsafe { std::mem::transmute::<*mut libc::c_void, $ty>(p) }
    }};
}

/// What a wrapper of a function that fails with -1 and `errno` returns when libc has none.
fn enosys() -> c_int {
    sys::set_errno(libc::ENOSYS);
    -1
}

/// Calls `f` with `set`, or with a copy of it without the sample signal when we own it.
fn filtered<R>(set: *const libc::sigset_t, f: impl FnOnce(*const libc::sigset_t) -> R) -> R {
    let copy = without_ours(set);
    f(ptr_or(&copy, set))
}

/// `sigprocmask` and `pthread_sigmask`: the set of `SIG_BLOCK` and `SIG_SETMASK` loses the
/// sample signal.
fn set_mask(
    real: MaskFn,
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    let run = |s| {
        // SAFETY: forwarding the caller's arguments, the set possibly a local copy.
        unsafe { real(how, s, old) }
    };
    if how == libc::SIG_UNBLOCK {
        run(set)
    } else {
        filtered(set, run)
    }
}

type SigactionFn =
    unsafe extern "C" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int;
type SignalFn = unsafe extern "C" fn(c_int, libc::sighandler_t) -> libc::sighandler_t;
type MaskFn = unsafe extern "C" fn(c_int, *const libc::sigset_t, *mut libc::sigset_t) -> c_int;
type SuspendFn = unsafe extern "C" fn(*const libc::sigset_t) -> c_int;
type SigwaitFn = unsafe extern "C" fn(*const libc::sigset_t, *mut c_int) -> c_int;
type SigwaitinfoFn = unsafe extern "C" fn(*const libc::sigset_t, *mut libc::siginfo_t) -> c_int;
type SigtimedwaitFn = unsafe extern "C" fn(
    *const libc::sigset_t,
    *mut libc::siginfo_t,
    *const libc::timespec,
) -> c_int;
type SignalfdFn = unsafe extern "C" fn(c_int, *const libc::sigset_t, c_int) -> c_int;

/// Interposed `sigaction`: the sample signal's disposition is the program's recorded one while
/// the runtime owns the signal (see the module docs); other signals go to libc, with the
/// runtime's stop handler standing in for `SIG_DFL` and shown as the `SIG_DFL` it stands for
/// (`stopsig.rs`).
///
/// # Safety
/// Same contract as libc's `sigaction`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if sig == sample_signal() && is_owned() {
        if !old.is_null() {
            // SAFETY: the caller's out pointer.
            unsafe { *old = load_program() };
        }
        if !act.is_null() {
            // SAFETY: the caller's structure.
            store_program(unsafe { &*act });
        }
        return 0;
    }
    let real = real_or!(sys::real::SIGACTION, SigactionFn, enosys());
    // SAFETY: the caller's structure, when not null.
    let stand_in =
        unsafe { act.as_ref() }.and_then(|a| crate::stopsig::stand_in(sig, a.sa_sigaction));
    let act = stand_in
        .as_ref()
        .map_or(act, |a| a as *const libc::sigaction);
    // SAFETY: forwarding the caller's arguments (or our stand-in for its SIG_DFL).
    let r = unsafe { real(sig, act, old) };
    if r == 0 && !old.is_null() {
        // SAFETY: the caller's out pointer, just filled by libc.
        let old = unsafe { &mut *old };
        if crate::stopsig::shown(old.sa_sigaction) != old.sa_sigaction {
            // Our stop handler stands for the default it replaced (stopsig.rs).
            *old = sys::empty_action();
        }
    }
    r
}

/// Interposed `signal` (BSD semantics, as glibc's: `SA_RESTART`).
///
/// # Safety
/// Same contract as libc's `signal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn signal(sig: c_int, handler: libc::sighandler_t) -> libc::sighandler_t {
    if sig == sample_signal() && is_owned() {
        let old = load_program().sa_sigaction;
        store_program(&sys::action(handler, libc::SA_RESTART));
        return old;
    }
    let real = real_or!(sys::real::SIGNAL, SignalFn, {
        sys::set_errno(libc::ENOSYS);
        libc::SIG_ERR
    });
    if let Some(act) = crate::stopsig::stand_in(sig, handler) {
        let mut old = sys::empty_action();
        if !sys::sigaction(sig, Some(&act), Some(&mut old)) {
            return libc::SIG_ERR;
        }
        return crate::stopsig::shown(old.sa_sigaction);
    }
    // SAFETY: forwarding the caller's arguments.
    crate::stopsig::shown(unsafe { real(sig, handler) })
}

/// Interposed `sigprocmask`: never blocks the sample signal.
///
/// # Safety
/// Same contract as libc's `sigprocmask`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    set_mask(
        real_or!(sys::real::SIGPROCMASK, MaskFn, enosys()),
        how,
        set,
        old,
    )
}

/// Interposed `pthread_sigmask`: never blocks the sample signal.
///
/// # Safety
/// Same contract as libc's `pthread_sigmask`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    set_mask(
        real_or!(sys::real::PTHREAD_SIGMASK, MaskFn, libc::ENOSYS),
        how,
        set,
        old,
    )
}

/// Interposed `sigsuspend`: the sample signal stays blocked during the wait.
///
/// # Safety
/// Same contract as libc's `sigsuspend`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigsuspend(mask: *const libc::sigset_t) -> c_int {
    let real = real_or!(sys::real::SIGSUSPEND, SuspendFn, enosys());
    let copy = (!mask.is_null() && is_owned()).then(|| {
        // SAFETY: the caller's set.
        let mut m = unsafe { *mask };
        sys::add(&mut m, sample_signal());
        m
    });
    // SAFETY: forwarding, with the mask possibly replaced by a local copy.
    unsafe { real(ptr_or(&copy, mask)) }
}

/// Interposed `sigwait`: never takes the sample signal.
///
/// # Safety
/// Same contract as libc's `sigwait`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int {
    let real = real_or!(sys::real::SIGWAIT, SigwaitFn, libc::ENOSYS);
    // SAFETY: forwarding, with the set possibly replaced by a local copy.
    filtered(set, |s| unsafe { real(s, sig) })
}

/// Interposed `sigwaitinfo`: never takes the sample signal.
///
/// # Safety
/// Same contract as libc's `sigwaitinfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigwaitinfo(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    let real = real_or!(sys::real::SIGWAITINFO, SigwaitinfoFn, enosys());
    // SAFETY: forwarding, with the set possibly replaced by a local copy.
    filtered(set, |s| unsafe { real(s, info) })
}

/// Interposed `sigtimedwait`: never takes the sample signal.
///
/// # Safety
/// Same contract as libc's `sigtimedwait`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> c_int {
    let real = real_or!(sys::real::SIGTIMEDWAIT, SigtimedwaitFn, enosys());
    // SAFETY: forwarding, with the set possibly replaced by a local copy.
    filtered(set, |s| unsafe { real(s, info, timeout) })
}

/// Interposed `signalfd`: the descriptor never reads the sample signal.
///
/// # Safety
/// Same contract as libc's `signalfd`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn signalfd(fd: c_int, mask: *const libc::sigset_t, flags: c_int) -> c_int {
    let real = real_or!(sys::real::SIGNALFD, SignalfdFn, enosys());
    // SAFETY: forwarding, with the mask possibly replaced by a local copy.
    filtered(mask, |m| unsafe { real(fd, m, flags) })
}
