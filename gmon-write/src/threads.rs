//! `pthread_create` wrapper: a thread created while profiling is active arms its own timer
//! before running its start routine, so no CPU time of it is missed. The watcher thread's scan
//! of `/proc/self/task` (every 100 ms) remains the fallback for threads created otherwise (raw
//! `clone`, or before the runtime was loaded).
//!
//! Like the exec wrappers, this definition interposes libc's through `LD_PRELOAD`, or in the
//! executable that links the library; the real function is found with `dlsym(RTLD_NEXT)`.

use std::cell::Cell;
use std::ffi::{c_int, c_void};

thread_local! {
    /// Set while this thread creates one of the runtime's own threads (`spawn_runtime_thread`):
    /// the `pthread_create` wrapper then adds nothing.
    static RUNTIME_SPAWN: Cell<bool> = const { Cell::new(false) };
    /// Touched by the trampoline, so that its destructor runs when the thread ends, whether its
    /// start routine returns or it calls `pthread_exit` (glibc runs thread-local destructors in
    /// both cases).
    static SETTLE_AT_THREAD_EXIT: SettleAtThreadExit = const { SettleAtThreadExit };
}

/// Settles the ending thread's tail of ticks (`sampler::settle_current_thread`).
struct SettleAtThreadExit;

impl Drop for SettleAtThreadExit {
    fn drop(&mut self) {
        crate::sampler::settle_current_thread();
    }
}

/// Starts one of the runtime's own threads (`gmon-watcher`, `gmon-unwind`):
/// never sampled, and with every signal blocked, so that the program's handlers never run on it
/// (a process-directed signal, `alarm` or `kill`, goes to a thread of the program, as without
/// the runtime; a handler calling `exit` on a runtime thread could interrupt it inside one of
/// its locks). It bypasses the `pthread_create` trampoline: no timer is armed for it and no
/// stack map is re-read for it (that work, under the control lock, made a short process's
/// exit wait for its threads' start).
pub(crate) fn spawn_runtime_thread<F: FnOnce() + Send + 'static>(
    name: &str,
    f: F,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    // Blocked around the spawn, so the thread inherits the mask from its first instruction.
    let old = crate::sys::block_all_signals();
    RUNTIME_SPAWN.with(|s| s.set(true));
    let r = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            crate::sampler::exclude_current_thread();
            f()
        });
    RUNTIME_SPAWN.with(|s| s.set(false));
    crate::sys::thread_sigmask(libc::SIG_SETMASK, Some(&old), None);
    r
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
    if crate::signals::is_owned() {
        let ours = crate::sys::set_of(crate::signals::sample_signal());
        crate::sys::thread_sigmask(libc::SIG_UNBLOCK, Some(&ours), None);
    }
    crate::sampler::register_current_thread();
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
    if !crate::sampler::is_active() || RUNTIME_SPAWN.with(Cell::get) {
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
