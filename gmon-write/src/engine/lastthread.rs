//! The process ends when its last *program* thread does (spec/runtime.md §4.5, "The last
//! program thread").
//!
//! glibc ends the process with `exit(0)` when the thread count it keeps reaches zero: the last
//! thread to return from its start routine or to call `pthread_exit` (the main thread
//! included) does it. The runtime's own threads (`gmon-watcher`, `gmon-unwind`) are threads to
//! glibc too, so a program whose last thread ended that way — `main` calling `pthread_exit`,
//! then its workers finishing — went on forever with only the runtime's threads, which block
//! every signal, so not even `SIGTERM` ended it. The watcher therefore checks, at each wake-up
//! while the main thread is gone, whether any thread of the program is left, and when none is
//! calls `exit(0)` itself: what glibc would have done in the last thread, `atexit` hooks (the
//! profile's among them) included.

use crate::sys;

/// Whether the task `tid` of this process has ended: gone from `/proc`, a zombie (a main
/// thread that called `pthread_exit` stays one until the whole process ends) or dead.
fn has_ended(tid: i32) -> bool {
    match std::fs::read(format!("/proc/self/task/{tid}/stat")) {
        // The state follows the command name, which ends with the last ')'.
        Ok(stat) => stat
            .iter()
            .rposition(|&b| b == b')')
            .is_some_and(|close| matches!(stat.get(close + 2), Some(b'Z' | b'X' | b'x'))),
        // Gone (ENOENT, or ESRCH while it is being reaped); any other failure (no /proc) is
        // no evidence that it ended.
        Err(e) => matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)),
    }
}

/// Whether the main thread has ended (called `pthread_exit`): the cheap first test, so that a
/// running program costs the watcher one small read per wake-up.
pub(crate) fn main_thread_has_ended() -> bool {
    has_ended(std::process::id() as i32)
}

/// Whether every thread of the program has ended: each task of `live` (the process's tasks,
/// from `/proc/self/task`) is either one of the runtime's own (`runtime`) or has ended.
pub(crate) fn program_has_ended(live: &[i32], runtime: &[i32]) -> bool {
    live.iter()
        .filter(|t| !runtime.contains(t))
        .all(|&t| has_ended(t))
}

/// Ends the process as glibc would have in the program's last thread: `exit(0)`, which runs
/// the `atexit` hooks (the runtime's writes the profile). Called by the watcher, holding no
/// lock of the runtime.
pub(crate) fn end_process() -> ! {
    sys::exit(0)
}
