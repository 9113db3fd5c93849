//! A user-space `profil()` / `pcsample()` runtime that writes gmon.out without `-pg`.
//!
//! Use it as follows:
//!
//! 1. For a whole-process profile, start a [`Profiler`] and keep its guard alive; the profile
//!    (`gmon.out` and its sidecar `gmon.out.gmonx`) is written when the guard is dropped, on
//!    [`ProfilerGuard::flush`], or at process exit. `gprof ./prog gmon.out` reads it unchanged.
//! 2. For the kernel-service style, count ticks into your own bins with [`ProfilBuffer`]
//!    (`profil(2)` semantics) or raw PCs with [`SampleBuffer`] (`pcsample(2)`).
//! 3. From C, link `libgmon_write.so` / `libgmon_write.a` and include `include/gmon.h`; or
//!    profile an unmodified program with `gmon record -- ./prog` (it preloads this library).
//!
//! ```no_run
//! let guard = gmon_write::Profiler::new().hz(1000).start()?;
//! // ... work ...
//! let written = guard.stop()?;
//! println!("{} samples in {:?}", written.samples, written.gmon);
//! # Ok::<(), gmon_write::Error>(())
//! ```
//!
//! Sampling uses one CPU-time timer per thread delivering a real-time signal the runtime
//! reserves (`SIGRTMAX - 1`); the program's own `SIGPROF` and `ITIMER_PROF` are untouched (see
//! `spec/runtime.md`).
//! Call stacks are unwound with the loaded objects' `.eh_frame` (DWARF CFI) from a bounded
//! stack snapshot, off the signal path ([`Unwind::Dwarf`], the default), so programs built
//! without frame pointers get exact stacks; [`Unwind::FramePointers`] walks frame pointers in
//! the handler instead.
//!
//! The library defines (interposes, forwarding to libc) `sigaction`, `signal`, `sigprocmask`,
//! `pthread_sigmask`, `sigsuspend`, `sigwait`, `sigwaitinfo`, `sigtimedwait` and `signalfd`, so
//! the program can neither replace nor block the sample signal; `execve`, `execv`, `execvp`,
//! `execvpe` and `fexecve`, so that an exec never delivers a stray tick to the new program; and
//! `pthread_create`, so that a new thread is sampled from its first instruction.
//!
//! Cargo features: none.

#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

// The layers, each using only those below it (no file imports one above it):
//   capi                  the C ABI and the LD_PRELOAD constructor
//   interpose/            functions that replace libc's: the sigaction family, exec*, _exit,
//                         pthread_create, and the stand-in handler of stop signals
//   profiler              the Rust API: start, snapshot, write, the exit hook
//   engine/               sampling: clocks and timers, the reserved signal and its handler,
//                         the thread watcher, the session
//   save/                 writing gmon.out and the sidecar without allocating
//   unwind/               stack walking: frame pointers in the handler, DWARF off it
//   counts/               what the handler counts into: lock-free tables, profil, pcsample
//   arch/ env error sys zeroed   the ground: registers, inputs, errors, libc calls, memory
mod arch;
pub mod capi;
mod counts;
mod engine;
mod env;
mod error;
mod interpose;
mod profiler;
mod save;
mod sys;
mod unwind;
mod zeroed;

pub use counts::pcsample::SampleBuffer;
pub use counts::profil::{ProfilBuffer, Recorded, SCALE_ONE_TO_ONE, bin_index};
pub use engine::sampler::register_current_thread;
pub use error::{Error, Result};
pub use profiler::{DEFAULT_HZ, Profiler, ProfilerGuard, Snapshot, Written, histogram_overflows};
pub use save::output;
pub use unwind::framepointers::MAX_STACK_DEPTH;
pub use unwind::{SNAPSHOT_BYTES, Unwind};
