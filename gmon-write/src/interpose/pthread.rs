//! `pthread_create` wrapper: a thread created while profiling is active arms its own timer
//! before running its start routine, so no CPU time of it is missed. The watcher thread's scan
//! of `/proc/self/task` (every 100 ms) remains the fallback for threads created otherwise (raw
//! `clone`, or before the runtime was loaded).
//!
//! Like the exec wrappers, this definition interposes libc's through `LD_PRELOAD`, or in the
//! executable that links the library; the real function is found with `dlsym(RTLD_NEXT)`.

use std::ffi::{c_int, c_void};

use crate::engine::{sampler, signal};

thread_local! {
    /// Touched by the trampoline, so that its destructor runs when the thread ends, whether its
    /// start routine returns or it calls `pthread_exit` (glibc runs thread-local destructors in
    /// both cases).
    static SETTLE_AT_THREAD_EXIT: SettleAtThreadExit = const { SettleAtThreadExit };
}

/// Settles the ending thread's tail of ticks (`sampler::settle_current_thread`).
struct SettleAtThreadExit;

impl Drop for SettleAtThreadExit {
    fn drop(&mut self) {
        sampler::settle_current_thread();
    }
}

type StartRoutine = extern "C" fn(*mut c_void) -> *mut c_void;
type CreateFn = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    StartRoutine,
    *mut c_void,
) -> c_int;

/// The start routine and argument the program passed.
struct Start {
    routine: StartRoutine,
    arg: *mut c_void,
}

extern "C" fn trampoline(p: *mut c_void) -> *mut c_void {
    // SAFETY: `p` is the Box leaked by `pthread_create` below, handed to exactly this thread.
    let start = unsafe { Box::from_raw(p.cast::<Start>()) };
    // A mask given with pthread_attr_setsigmask_np is applied by libc directly, not through
    // our pthread_sigmask: make sure the sample signal is not blocked in this thread.
    if signal::is_owned() {
        let ours = crate::sys::set_of(signal::sample_signal());
        crate::sys::thread_sigmask(libc::SIG_UNBLOCK, Some(&ours), None);
    }
    sampler::register_current_thread();
    SETTLE_AT_THREAD_EXIT.with(|_| {});
    // Nothing of ours with a destructor stays on this frame during the call: `pthread_exit`
    // unwinds through it.
    let Start { routine, arg } = *start;
    routine(arg)
}

fn real_create() -> Option<CreateFn> {
    let p = crate::sys::real::PTHREAD_CREATE.get();
    // SAFETY: the next definition of pthread_create has this signature.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, CreateFn>(p) })
}

/// Interposed `pthread_create` (see the module docs).
///
/// # Safety
/// Same contract as libc's `pthread_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    routine: StartRoutine,
    arg: *mut c_void,
) -> c_int {
    let Some(real) = real_create() else {
        return libc::ENOSYS;
    };
    if !sampler::is_active() || sampler::is_spawning_runtime_thread() {
        // SAFETY: forwarding the caller's arguments.
        return unsafe { real(thread, attr, routine, arg) };
    }
    let start = Box::into_raw(Box::new(Start { routine, arg }));
    // SAFETY: forwarding, with our trampoline that takes ownership of `start`.
    let r = unsafe { real(thread, attr, trampoline, start.cast()) };
    if r != 0 {
        // SAFETY: the thread was not created, so the Box is still ours.
        drop(unsafe { Box::from_raw(start) });
    }
    r
}
