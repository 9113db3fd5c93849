//! The runtime's calls into libc and the kernel, in one place.
//!
//! The runtime defines (interposes) several libc functions itself: `sigaction`, `signal`,
//! `sigprocmask`, `pthread_sigmask`, the `sigwait` family, `signalfd`, `pthread_create` and the
//! `exec` family (see `signals.rs`, `threads.rs`, `exec.rs`). Inside the executable or library
//! that defines them, a plain `libc::sigaction(..)` would call our own definition, so every
//! call the runtime itself makes to one of those goes through [`real`], the next definition
//! (`dlsym(RTLD_NEXT)`: libc's). [`resolve_all`] looks them all up once, before sampling starts,
//! because `dlsym` is not async-signal-safe; the signal handler only loads the cached pointers.

use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

/// One lazily resolved libc function.
pub(crate) struct Real {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl Real {
    const fn new(name: &'static CStr) -> Real {
        Real {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The next definition of the function (libc's), or null when there is none.
    pub(crate) fn get(&self) -> *mut c_void {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return p;
        }
        // SAFETY: dlsym with a valid NUL-terminated name; RTLD_NEXT searches the objects loaded
        // after the one defining this code, which is where libc's definition is.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        self.ptr.store(p, Ordering::Release);
        p
    }
}

/// The real definitions of the functions the runtime interposes.
pub(crate) mod real {
    use super::Real;

    pub(crate) static SIGACTION: Real = Real::new(c"sigaction");
    pub(crate) static SIGNAL: Real = Real::new(c"signal");
    pub(crate) static SIGPROCMASK: Real = Real::new(c"sigprocmask");
    pub(crate) static PTHREAD_SIGMASK: Real = Real::new(c"pthread_sigmask");
    pub(crate) static SIGSUSPEND: Real = Real::new(c"sigsuspend");
    pub(crate) static SIGWAIT: Real = Real::new(c"sigwait");
    pub(crate) static SIGWAITINFO: Real = Real::new(c"sigwaitinfo");
    pub(crate) static SIGTIMEDWAIT: Real = Real::new(c"sigtimedwait");
    pub(crate) static SIGNALFD: Real = Real::new(c"signalfd");
    pub(crate) static PTHREAD_CREATE: Real = Real::new(c"pthread_create");
    pub(crate) static EXECVE: Real = Real::new(c"execve");
    pub(crate) static EXECVPE: Real = Real::new(c"execvpe");
    pub(crate) static EXECV: Real = Real::new(c"execv");
    pub(crate) static EXECVP: Real = Real::new(c"execvp");
    pub(crate) static FEXECVE: Real = Real::new(c"fexecve");

    /// Every function above, for [`super::resolve_all`].
    pub(crate) static ALL: [&Real; 15] = [
        &SIGACTION,
        &SIGNAL,
        &SIGPROCMASK,
        &PTHREAD_SIGMASK,
        &SIGSUSPEND,
        &SIGWAIT,
        &SIGWAITINFO,
        &SIGTIMEDWAIT,
        &SIGNALFD,
        &PTHREAD_CREATE,
        &EXECVE,
        &EXECVPE,
        &EXECV,
        &EXECVP,
        &FEXECVE,
    ];
}

/// Looks up every real function now (outside any signal handler).
pub(crate) fn resolve_all() {
    for r in real::ALL {
        r.get();
    }
}

type SigactionFn =
    unsafe extern "C" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int;
type SigmaskFn = unsafe extern "C" fn(c_int, *const libc::sigset_t, *mut libc::sigset_t) -> c_int;

/// libc's `sigaction` (never the runtime's own definition). Returns false on failure.
pub(crate) fn sigaction(
    sig: c_int,
    act: Option<&libc::sigaction>,
    old: Option<&mut libc::sigaction>,
) -> bool {
    let p = real::SIGACTION.get();
    if p.is_null() {
        return false;
    }
    // SAFETY: the next definition of `sigaction` has this signature; the pointers are null or
    // point to valid structures for the duration of the call.
    unsafe {
        let f = std::mem::transmute::<*mut c_void, SigactionFn>(p);
        f(
            sig,
            act.map_or(std::ptr::null(), |a| a as *const _),
            old.map_or(std::ptr::null_mut(), |o| o as *mut _),
        ) == 0
    }
}

/// The current disposition of `sig`.
pub(crate) fn get_action(sig: c_int) -> Option<libc::sigaction> {
    let mut cur = empty_action();
    sigaction(sig, None, Some(&mut cur)).then_some(cur)
}

/// A disposition with handler `handler`, flags `flags` and an empty mask.
pub(crate) fn action(handler: libc::sighandler_t, flags: c_int) -> libc::sigaction {
    let mut act = empty_action();
    act.sa_sigaction = handler;
    act.sa_flags = flags;
    act
}

/// A zeroed `sigaction` (handler `SIG_DFL`, no flags, empty mask).
pub(crate) fn empty_action() -> libc::sigaction {
    // SAFETY: sigaction is plain data; all-zero is SIG_DFL with no flags and an empty mask.
    unsafe { std::mem::zeroed() }
}

/// An empty signal set.
pub(crate) fn empty_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it.
    let mut s: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid, writable set.
    unsafe { libc::sigemptyset(&mut s) };
    s
}

/// The set holding only `sig`.
pub(crate) fn set_of(sig: c_int) -> libc::sigset_t {
    let mut s = empty_set();
    // SAFETY: a valid, writable set.
    unsafe { libc::sigaddset(&mut s, sig) };
    s
}

/// Removes `sig` from `set`.
pub(crate) fn remove(set: &mut libc::sigset_t, sig: c_int) {
    // SAFETY: a valid, writable set.
    unsafe { libc::sigdelset(set, sig) };
}

/// Adds `sig` to `set`.
pub(crate) fn add(set: &mut libc::sigset_t, sig: c_int) {
    // SAFETY: a valid, writable set.
    unsafe { libc::sigaddset(set, sig) };
}

/// libc's `pthread_sigmask` (never the runtime's own definition): 0 or an error number.
pub(crate) fn thread_sigmask(
    how: c_int,
    set: Option<&libc::sigset_t>,
    old: Option<&mut libc::sigset_t>,
) -> c_int {
    let p = real::PTHREAD_SIGMASK.get();
    if p.is_null() {
        return libc::ENOSYS;
    }
    // SAFETY: the next definition of `pthread_sigmask` has this signature; the pointers are
    // null or valid for the call.
    unsafe {
        std::mem::transmute::<*mut c_void, SigmaskFn>(p)(
            how,
            set.map_or(std::ptr::null(), |s| s as *const _),
            old.map_or(std::ptr::null_mut(), |o| o as *mut _),
        )
    }
}

/// The calling thread's `errno`.
pub(crate) fn errno() -> c_int {
    // SAFETY: __errno_location is always valid for the calling thread.
    unsafe { *libc::__errno_location() }
}

/// Sets the calling thread's `errno`.
pub(crate) fn set_errno(e: c_int) {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = e };
}

/// The calling thread's kernel id. Async-signal-safe.
pub(crate) fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Whether the process runs in secure-execution mode (set-uid/set-gid or file capabilities:
/// `getauxval(AT_SECURE)`), where no environment input of the runtime is trusted.
pub(crate) fn is_secure() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}
