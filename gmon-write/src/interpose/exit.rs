//! `_exit` and `_Exit` wrappers: write the profile of a program that ends without `exit`.
//!
//! The profile is written by an `atexit` hook, and `_exit` skips those hooks. Some programs end
//! that way as a rule: dash, Debian's `/bin/sh`, leaves through `_exit` after every script and
//! every subshell, so `gmon record -- sh -c 'a shell loop'` got no profile at all. These
//! definitions interpose libc's (through `LD_PRELOAD`, or in the executable for a static link):
//! they write the profile on the same path `exit` and the stop signals take
//! (`profiler::finish_at_exit`: no allocation, bounded waits), then end the process with the
//! system call. glibc's own `exit` reaches its `_exit` internally, not through these.
//!
//! A child made by `vfork` or `posix_spawn` that fails to exec calls `_exit` while it still
//! runs in its parent's memory: it writes nothing and touches none of the parent's state
//! (`sampler::owned_by_this_process`).

use std::ffi::c_int;

fn end(status: c_int) -> ! {
    if crate::engine::sampler::owned_by_this_process() {
        crate::profiler::finish_on_the_way_out();
    }
    crate::sys::exit_now(status)
}

/// Interposed `_exit` (see the module docs).
#[unsafe(no_mangle)]
pub extern "C" fn _exit(status: c_int) -> ! {
    end(status)
}

/// Interposed `_Exit`, the same function under its C99 name.
#[unsafe(no_mangle)]
pub extern "C" fn _Exit(status: c_int) -> ! {
    end(status)
}
