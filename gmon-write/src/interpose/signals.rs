//! The libc functions interposed so that the program can neither replace nor block the
//! sampler's reserved signal (spec/runtime.md §4.2; the signal itself: `engine/signal.rs`).
//! While the runtime owns the signal ([`is_owned`]):
//!
//! * `sigaction` and `signal` on it act on a *recorded* disposition, the program's view,
//!   which they report back; the kernel keeps our handler.
//! * `sigprocmask` and `pthread_sigmask` never block it (it is removed from the set of
//!   `SIG_BLOCK` and `SIG_SETMASK`); so a thread that blocks every signal is still sampled, as
//!   glibc silently keeps its own internal signals out of every mask.
//! * `sigsuspend` keeps it blocked while waiting: the thread uses no CPU time then, so no tick
//!   is due, and a pending tick cannot end the wait early.
//! * `sigwait`, `sigwaitinfo`, `sigtimedwait` and `signalfd` never take it.

use std::ffi::c_int;

use crate::engine::signal::{is_owned, load_program, sample_signal, store_program};
use crate::sys;

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
    let stand_in = unsafe { act.as_ref() }
        .and_then(|a| crate::interpose::stopsig::stand_in(sig, a.sa_sigaction));
    let act = stand_in
        .as_ref()
        .map_or(act, |a| a as *const libc::sigaction);
    // SAFETY: forwarding the caller's arguments (or our stand-in for its SIG_DFL).
    let r = unsafe { real(sig, act, old) };
    if r == 0 && !old.is_null() {
        // SAFETY: the caller's out pointer, just filled by libc.
        let old = unsafe { &mut *old };
        if crate::interpose::stopsig::shown(old.sa_sigaction) != old.sa_sigaction {
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
    if let Some(act) = crate::interpose::stopsig::stand_in(sig, handler) {
        let mut old = sys::empty_action();
        if !sys::sigaction(sig, Some(&act), Some(&mut old)) {
            return libc::SIG_ERR;
        }
        return crate::interpose::stopsig::shown(old.sa_sigaction);
    }
    // SAFETY: forwarding the caller's arguments.
    crate::interpose::stopsig::shown(unsafe { real(sig, handler) })
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
