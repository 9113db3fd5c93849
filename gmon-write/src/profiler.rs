//! The high-level [`Profiler`]: sample the whole process, write gmon.out and its sidecar.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use gmon_format::sidecar::Sidecar;

use std::os::unix::ffi::OsStrExt;

use crate::engine::sampler;
use crate::engine::session::{OutputConfig, Recording, Session};
use crate::save::writer::{OutputBuffers, Which, write_profile};
use crate::unwind::Unwind;
use crate::unwind::framepointers::MAX_STACK_DEPTH;
use crate::{Error, Result};

/// The default sampling rate of [`Profiler`]: 1000 Hz (gprof prints "Each sample counts as
/// 0.001 seconds").
pub const DEFAULT_HZ: u32 = 1000;

/// Builder of a process-wide profiling run.
///
/// ```no_run
/// let guard = gmon_write::Profiler::new().hz(1000).output("gmon.out").start()?;
/// // ... the work to profile ...
/// guard.stop()?; // or drop it, or let the process exit
/// # Ok::<(), gmon_write::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Profiler {
    hz: u32,
    output: Option<PathBuf>,
    append_pid: bool,
    histogram: bool,
    shared_libraries: bool,
    stacks: bool,
    max_depth: usize,
    unwind: Unwind,
}

impl Default for Profiler {
    fn default() -> Self {
        Profiler::new()
    }
}

impl Profiler {
    /// 1000 Hz, glibc's file naming, histogram + per-PC samples + stacks recorded.
    pub fn new() -> Profiler {
        Profiler {
            hz: DEFAULT_HZ,
            output: None,
            append_pid: false,
            histogram: true,
            shared_libraries: true,
            stacks: true,
            max_depth: 64,
            unwind: Unwind::Dwarf,
        }
    }

    /// Ticks per second of each thread's CPU time (1..=100000).
    pub fn hz(mut self, hz: u32) -> Profiler {
        self.hz = hz;
        self
    }

    /// Write to this path instead of `gmon.out` / `$GMON_OUT_PREFIX.<pid>` (made absolute now,
    /// so a later `chdir` does not move it).
    pub fn output(mut self, path: impl AsRef<Path>) -> Profiler {
        let p = path.as_ref();
        self.output = Some(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
        self
    }

    /// Append `.<pid>` to the output name (used for descendants of `gmon record`'s command).
    pub fn append_pid(mut self, yes: bool) -> Profiler {
        self.append_pid = yes;
        self
    }

    /// Write gmon.out (default true). When false only the sidecar is written.
    pub fn histogram(mut self, yes: bool) -> Profiler {
        self.histogram = yes;
        self
    }

    /// Record every sampled PC, shared libraries included, in the sidecar (default true).
    pub fn shared_libraries(mut self, yes: bool) -> Profiler {
        self.shared_libraries = yes;
        self
    }

    /// Record call stacks (default true), walked as [`Profiler::unwind`] says.
    pub fn stacks(mut self, yes: bool) -> Profiler {
        self.stacks = yes;
        self
    }

    /// How call stacks are walked (default [`Unwind::Dwarf`]: a stack snapshot unwound with
    /// the objects' `.eh_frame` on a runtime thread; see `spec/runtime.md` §4.4).
    pub fn unwind(mut self, how: Unwind) -> Profiler {
        self.unwind = how;
        self
    }

    /// Deepest stack recorded (1..=128, default 64).
    pub fn max_stack_depth(mut self, depth: usize) -> Profiler {
        self.max_depth = depth.clamp(1, MAX_STACK_DEPTH);
        self
    }

    /// Starts sampling every thread of the process.
    pub fn start(self) -> Result<ProfilerGuard> {
        if !(1..=100_000).contains(&self.hz) {
            return Err(Error::BadRate(self.hz));
        }
        let rec = Recording {
            pcs: self.shared_libraries || self.stacks,
            stacks: self.stacks,
            max_depth: self.max_depth,
            unwind: self.unwind,
        };
        let out = OutputConfig {
            output: self.output,
            append_pid: self.append_pid,
            histogram: self.histogram,
        };
        let session = Session::new(self.hz, rec, out, sampler::spawn_runtime_thread_boxed)?;
        sampler::start_session(Box::new(session))?;
        register_at_exit();
        Ok(ProfilerGuard { done: false })
    }
}

/// What a write produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The gmon.out path (None when the histogram was disabled).
    pub gmon: Option<PathBuf>,
    /// The sidecar path.
    pub sidecar: PathBuf,
    /// Ticks recorded.
    pub samples: u64,
}

/// The profile so far, in memory.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The gmon.out histogram (link-time addresses).
    pub histogram: gmon_format::Histogram,
    /// The sidecar's contents.
    pub sidecar: Sidecar,
}

/// Keeps the profiler running; writes the profile when dropped (errors go to stderr).
#[derive(Debug)]
#[must_use = "dropping the guard stops profiling at once"]
pub struct ProfilerGuard {
    done: bool,
}

impl ProfilerGuard {
    /// Writes the profile recorded so far; sampling continues.
    pub fn flush(&self) -> Result<Written> {
        flush()
    }

    /// The profile recorded so far, without writing anything.
    pub fn snapshot(&self) -> Option<Snapshot> {
        sampler::with_session(|s, _, _| Snapshot {
            histogram: s.histogram(),
            sidecar: s.sidecar(),
        })
    }

    /// Stops sampling and writes the profile.
    pub fn stop(mut self) -> Result<Written> {
        self.done = true;
        finish()?.ok_or(Error::NotRunning)
    }
}

impl Drop for ProfilerGuard {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = finish()
        {
            eprintln!("gmon-write: {e}");
        }
    }
}

fn write_session(s: &Session, replaced: bool) -> Result<Written> {
    let histogram = s.out.histogram;
    let mut b = s.buffers.lock().unwrap_or_else(|e| e.into_inner());
    let path =
        |p: &crate::save::path::FixedPath| PathBuf::from(std::ffi::OsStr::from_bytes(p.bytes()));
    if let Err((which, fail)) = write_profile(&s.data(), &mut b, histogram) {
        return Err(Error::Write {
            path: path(match which {
                Which::Gmon => &b.gmon,
                Which::Sidecar => &b.sidecar,
            }),
            source: fail.to_io(),
        });
    }
    if replaced {
        return Err(Error::HandlerReplaced);
    }
    Ok(Written {
        gmon: histogram.then(|| path(&b.gmon)),
        sidecar: path(&b.sidecar),
        samples: s.samples(),
    })
}

/// Writes the running profile (sampling continues).
pub(crate) fn flush() -> Result<Written> {
    sampler::with_session(|s, _, replaced| write_session(s, replaced))
        .unwrap_or(Err(Error::NotRunning))
}

/// Stops and writes; Ok(None) when nothing was running.
pub(crate) fn finish() -> Result<Option<Written>> {
    match sampler::stop_session() {
        Some((s, _, replaced)) => write_session(&s, replaced).map(Some),
        None => Ok(None),
    }
}

/// Registers [`finish_at_exit`] with `atexit`, once per process.
fn register_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    extern "C" fn at_exit() {
        finish_on_the_way_out();
    }
    ONCE.call_once(|| crate::sys::atexit(at_exit));
}

/// Set while `exit` or `_exit` writes the profile (not a stop signal, spec §4.5).
static EXIT_WRITE: AtomicBool = AtomicBool::new(false);

/// Whether `exit` or `_exit` is writing the profile right now: the process is ending by its
/// own decision, and a stop signal that arrives meanwhile (a parent's `kill` racing a child's
/// own exit, as Python's `Pool.terminate` does) is left to that write instead of cutting it
/// off: the process then ends as it was about to, an outcome the race allows without the
/// runtime too. Async-signal-safe.
pub(crate) fn exit_write_in_progress() -> bool {
    EXIT_WRITE.load(Ordering::SeqCst)
}

/// [`finish_at_exit`] for `exit` (the `atexit` hook) and `_exit` (interpose/exit.rs).
pub(crate) fn finish_on_the_way_out() {
    EXIT_WRITE.store(true, Ordering::SeqCst);
    finish_at_exit();
    EXIT_WRITE.store(false, Ordering::SeqCst);
}

/// The `atexit` hook: writes a profile whose guard was leaked or never dropped.
///
/// `exit` may be called from a signal handler that interrupted anything, `malloc` included
/// (holding its lock), or the runtime itself: this path allocates nothing, waits for nothing
/// unbounded and frees nothing (spec §4.5). Failures are reported with `write(2)`.
pub(crate) fn finish_at_exit() {
    let Some(s) = sampler::stop_session_at_exit() else {
        return;
    };
    let Ok(mut b) = s.buffers.try_lock() else {
        crate::save::record::report(&[b"profile not written: a write was in progress at exit"]);
        return;
    };
    write_reporting(s, &mut b);
}

/// Before an exec replaces this image (spec/runtime.md §4.5, "exec"): writes its profile, so
/// the work done before the exec keeps its samples. Under `gmon record` the profile takes a
/// name of its own (`record::name_before_exec`): the next image writes the process's usual
/// name. If the exec fails, sampling goes on into the same counts and later writes replace
/// this file, so nothing is counted twice. An image without a sample writes nothing (a shell's
/// child between `fork` and `exec`). Same rules as [`finish_at_exit`]: no allocation, no
/// unbounded wait. Whether a profile was written: this image's CPU time is accounted for.
pub(crate) fn write_before_exec() -> bool {
    let mut written = false;
    sampler::with_session_before_exec(|s| {
        if s.samples() == 0 {
            return;
        }
        let Ok(mut b) = s.buffers.try_lock() else {
            crate::save::record::report(&[b"profile not written: a write was in progress at exec"]);
            return;
        };
        if crate::save::record::dir().is_some() && !b.named_for_exec {
            let b = &mut *b;
            b.named_for_exec = crate::save::record::name_before_exec(&mut b.gmon, &mut b.sidecar);
        }
        write_reporting(s, &mut b);
        written = true;
    });
    written
}

/// Writes `s` with the buffers `b`; a failure is reported (`record::report`), never returned:
/// the process is on its way out or into another program.
fn write_reporting(s: &Session, b: &mut OutputBuffers) {
    if let Err((which, fail)) = write_profile(&s.data(), b, s.out.histogram) {
        let path = match which {
            Which::Gmon => b.gmon.bytes(),
            Which::Sidecar => b.sidecar.bytes(),
        };
        let mut num = [0u8; 12];
        crate::save::record::report(&[
            path,
            b": ",
            fail.what.as_bytes(),
            b" (errno ",
            crate::save::record::decimal(fail.errno.unsigned_abs(), &mut num),
            b")",
        ]);
    }
}

/// Ticks that a saturated gmon.out bin could not hold, in the running session.
pub fn histogram_overflows() -> u64 {
    sampler::with_session(|s, _, _| s.overflows()).unwrap_or(0)
}
