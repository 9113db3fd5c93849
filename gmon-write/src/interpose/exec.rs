//! `exec` wrappers: disarm before the real call so a queued tick never kills the new program.
//!
//! After `execve` the handler of the sample signal is reset to the default action (terminate), while a
//! signal already queued for the calling thread stays pending. These definitions interpose the
//! libc functions of the same name (in the executable for a static link, through `LD_PRELOAD`
//! for the preload library): they delete every timer and discard queued ticks, call the real
//! function (found with `dlsym(RTLD_NEXT)`), and re-arm if it returns (exec failed). When no
//! profiling is active they only forward.
//!
//! The variadic `execl`, `execlp` and `execle` cannot be defined in stable Rust; glibc
//! implements them with its internal `execve`, so a program that calls them while profiled
//! relies on the kernel dropping the signals of deleted timers (Linux deletes POSIX timers at
//! exec; what is already queued may still arrive). `system()` and `posix_spawn` start a new
//! process without our timers and are not affected.

use std::ffi::{c_char, c_int};

use crate::save::record;
use crate::sys;

type ExecFn = unsafe extern "C" fn(*const c_char, *const *const c_char) -> c_int;
type ExecEnvFn =
    unsafe extern "C" fn(*const c_char, *const *const c_char, *const *const c_char) -> c_int;
type FexecFn = unsafe extern "C" fn(c_int, *const *const c_char, *const *const c_char) -> c_int;

fn enosys() -> c_int {
    sys::set_errno(libc::ENOSYS);
    -1
}

macro_rules! wrap {
    ($name:ident, $real:expr, $ty:ty, ($($arg:ident : $argty:ty),*), $check:expr) => {
        /// Interposed exec function (see the module docs).
        ///
        /// # Safety
        /// Same contract as the libc function of the same name.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $argty),*) -> c_int {
            let real = $real.get();
            if real.is_null() {
                return enosys();
            }
            // Under gmon record: note a program that will not be profiled (save/record.rs).
            $check;
            crate::engine::sampler::before_exec();
            // This image's work is kept: its profile is written now (spec/runtime.md §4.5).
            let written = crate::profiler::write_before_exec();
            // The next image counts what no clock saw before it started, from this exec on
            // when this image's profile accounts for the time before (spec §4.5, "What no
            // clock sees"); else (a shell's child between fork and exec, unsampled) from the
            // process's start. (Only the process the session belongs to writes: never a vfork
            // child.)
            if written {
                record::note_cpu_at_exec();
            }
            // SAFETY: `real` is the next definition of this very function.
            let r = unsafe { std::mem::transmute::<*mut libc::c_void, $ty>(real)($($arg),*) };
            let saved = sys::errno();
            if written {
                record::forget_cpu_at_exec();
            }
            crate::engine::sampler::after_failed_exec();
            sys::set_errno(saved);
            r
        }
    };
}

wrap!(execve, sys::real::EXECVE, ExecEnvFn, (path: *const c_char, argv: *const *const c_char, envp: *const *const c_char),
    record::before_exec(path, None, envp));
wrap!(execvpe, sys::real::EXECVPE, ExecEnvFn, (file: *const c_char, argv: *const *const c_char, envp: *const *const c_char),
    record::before_exec(file, None, envp));
wrap!(execv, sys::real::EXECV, ExecFn, (path: *const c_char, argv: *const *const c_char),
    record::before_exec(path, None, std::ptr::null()));
wrap!(execvp, sys::real::EXECVP, ExecFn, (file: *const c_char, argv: *const *const c_char),
    record::before_exec(file, None, std::ptr::null()));
wrap!(fexecve, sys::real::FEXECVE, FexecFn, (fd: c_int, argv: *const *const c_char, envp: *const *const c_char),
    record::before_exec(std::ptr::null(), Some(fd), envp));
