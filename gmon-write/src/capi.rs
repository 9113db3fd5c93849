//! The C ABI (`include/gmon.h`) and the `LD_PRELOAD` constructor.
//!
//! Every function returns 0 (or a count) on success and -1 with `errno` set on failure; the
//! reason is also printed to stderr with a `gmon-write:` prefix.

use std::ffi::{CStr, c_char, c_int, c_long, c_uint};
use std::sync::atomic::{AtomicU16, AtomicU64};

use crate::counts::pcsample::SampleBuffer;
use crate::counts::profil::ProfilBuffer;
use crate::{Error, Profiler, env};

/// `gmon_start` flag: record call stacks.
pub const GMON_STACKS: c_int = 1;
/// `gmon_start` flag: do not record per-PC samples (shared libraries) in the sidecar.
pub const GMON_NO_SHLIBS: c_int = 2;
/// `gmon_start` flag: walk frame pointers in the signal handler instead of unwinding a stack
/// snapshot with `.eh_frame` (what `GMON_RECORD_UNWIND=fp` selects for `gmon record`).
pub const GMON_FRAME_POINTERS: c_int = 4;

/// The rate `gmon_profil` and `gmon_pcsample` sample at when no profiler runs
/// (`GMON_PROFIL_HZ` overrides it).
const PROFIL_HZ: u32 = 100;

fn fail(e: &Error, errno: c_int) -> c_int {
    eprintln!("gmon-write: {e}");
    crate::sys::set_errno(errno);
    -1
}

fn errno_of(e: &Error) -> c_int {
    match e {
        Error::AlreadyActive(_) => libc::EBUSY,
        Error::NotRunning => libc::ESRCH,
        Error::BadRate(_) => libc::EINVAL,
        Error::Os { source, .. } | Error::Write { source, .. } => {
            source.raw_os_error().unwrap_or(libc::EIO)
        }
        _ => libc::EIO,
    }
}

fn profil_hz() -> u32 {
    env::number(env::PROFIL_HZ).unwrap_or(PROFIL_HZ)
}

/// `profil(2)` in user space: count ticks into `buf` (`bufsiz` bytes of `unsigned short`
/// bins) at bin `((pc - offset) / 2) * scale / 65536`. `scale` 0 or 1, or a null `buf`, stops.
///
/// # Safety
/// `buf` must stay valid and writable for `bufsiz` bytes until profiling is stopped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gmon_profil(
    buf: *mut u16,
    bufsiz: libc::size_t,
    offset: libc::size_t,
    scale: c_uint,
) -> c_int {
    if buf.is_null() || scale <= 1 {
        crate::engine::sampler::raw::unpublish_profil();
        return 0;
    }
    if buf.align_offset(std::mem::align_of::<u16>()) != 0 {
        crate::sys::set_errno(libc::EFAULT);
        return -1;
    }
    // SAFETY: the caller guarantees `buf` lives until profiling stops; AtomicU16 has u16's
    // layout.
    let bins: &'static [AtomicU16] =
        unsafe { std::slice::from_raw_parts(buf.cast::<AtomicU16>(), bufsiz / 2) };
    let h = Box::new(ProfilBuffer::from_atomic(bins, offset as u64, scale));
    match crate::engine::sampler::raw::publish_profil(h, profil_hz()) {
        Ok(()) => 0,
        Err(e) => fail(&e, errno_of(&e)),
    }
}

/// `pcsample(2)` in user space: store one PC per tick into `samples[0..nsamples]` until it is
/// full. Returns the number of samples stored into the previous buffer (0 the first time);
/// `nsamples == 0` or a null `samples` stops sampling.
///
/// # Safety
/// `samples` must stay valid and writable for `nsamples` elements until the next call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gmon_pcsample(samples: *mut usize, nsamples: c_long) -> c_long {
    let new = if samples.is_null() || nsamples <= 0 {
        None
    } else {
        // SAFETY: the caller guarantees the buffer; AtomicU64 has usize's layout on 64-bit.
        let slots: &'static [AtomicU64] =
            unsafe { std::slice::from_raw_parts(samples.cast::<AtomicU64>(), nsamples as usize) };
        Some(Box::new(SampleBuffer::from_atomic(slots)))
    };
    match crate::engine::sampler::raw::swap_pcsample(new, profil_hz()) {
        Ok(n) => n as c_long,
        Err(e) => c_long::from(fail(&e, errno_of(&e))),
    }
}

/// Starts the process-wide profiler. `out` may be null (glibc naming: `gmon.out` or
/// `$GMON_OUT_PREFIX.<pid>`); `hz` 0 means 1000; `flags` is a mask of `GMON_STACKS`,
/// `GMON_NO_SHLIBS`, `GMON_FRAME_POINTERS`. The profile is written by `gmon_stop`, `gmon_flush`
/// or at exit.
///
/// # Safety
/// `out` is null or a NUL-terminated path.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gmon_start(out: *const c_char, hz: c_uint, flags: c_int) -> c_int {
    let mut p = Profiler::new()
        .hz(if hz == 0 { crate::DEFAULT_HZ } else { hz })
        .stacks(flags & GMON_STACKS != 0)
        .shared_libraries(flags & GMON_NO_SHLIBS == 0);
    if flags & GMON_FRAME_POINTERS != 0 {
        p = p.unwind(crate::Unwind::FramePointers);
    }
    if !out.is_null() {
        // SAFETY: the caller passes a NUL-terminated string.
        let s = unsafe { CStr::from_ptr(out) };
        p = p.output(std::path::Path::new(&*s.to_string_lossy()));
    }
    match p.start() {
        Ok(g) => {
            // The guard's job (writing) is done by gmon_stop or the atexit hook.
            std::mem::forget(g);
            0
        }
        Err(e) => fail(&e, errno_of(&e)),
    }
}

/// Stops the profiler and writes the profile.
#[unsafe(no_mangle)]
pub extern "C" fn gmon_stop() -> c_int {
    match crate::profiler::finish() {
        Ok(_) => 0,
        Err(e) => fail(&e, errno_of(&e)),
    }
}

/// Writes the profile recorded so far; sampling continues.
#[unsafe(no_mangle)]
pub extern "C" fn gmon_flush() -> c_int {
    match crate::profiler::flush() {
        Ok(_) => 0,
        Err(e) => fail(&e, errno_of(&e)),
    }
}

/// The preload constructor: when `GMON_RECORD_OUT` is set (by `gmon record`) and this copy of
/// the runtime is a shared library (not linked into the executable), start profiling
/// with `GMON_RECORD_HZ` (default 1000), `GMON_RECORD_STACKS` (default on) and
/// `GMON_RECORD_UNWIND` (`dwarf`, the default, or `fp`); the profile is
/// written at exit. The first process claims `GMON_RECORD_OUT` and records its pid in
/// `GMON_RECORD_OWNER`; other processes (children of the command) write `OUT.<pid>`.
extern "C" fn preload_init() {
    // The interposed signal functions may first be called from a signal handler, where dlsym
    // is not safe: look libc's definitions up now, profiling or not.
    crate::sys::resolve_all();
    // What the exec and the loader cost before this constructor ran (spec §4.5).
    let at_constructor = crate::sys::process_cpu_ns();
    // Nothing is read in a set-uid/set-gid process (env.rs).
    let Some(out) = env::var(env::RECORD_OUT) else {
        return;
    };
    // Only the shared library (the copy `gmon record` preloads) starts profiling: a copy linked
    // into the executable itself (rlib or staticlib) leaves it to the preloaded one, so one
    // process never runs two runtimes.
    let here = preload_init as *const () as u64;
    if crate::unwind::objects::main_text().is_some_and(|(lo, hi, _)| (lo..hi).contains(&here)) {
        return;
    }
    let pid = std::process::id();
    let owner = env::number::<u32>(env::RECORD_OWNER);
    let append_pid = match owner {
        // `gmon record --no-inherit`: a process other than the first is not profiled.
        Some(o) if o != pid && env::var(env::RECORD_INHERIT).is_some_and(|v| v == "0") => {
            return;
        }
        Some(o) => o != pid,
        None => {
            // SAFETY: constructors run before main, while the process is single-threaded.
            unsafe { std::env::set_var(env::RECORD_OWNER, pid.to_string()) };
            false
        }
    };
    // Started by gmon record: it writes into the run's directory only, and notes problems
    // there instead of on the program's stderr (save/record.rs).
    if env::var(env::RECORD_PRIVATE).is_some_and(|v| v == "1") {
        crate::save::record::enter(std::os::unix::ffi::OsStrExt::as_bytes(out.as_os_str()));
    }
    let hz = env::number(env::RECORD_HZ);
    let stacks = env::var(env::RECORD_STACKS).is_none_or(|v| v != "0");
    let unwind = env::var(env::RECORD_UNWIND)
        .and_then(|v| crate::Unwind::parse(v.to_str()?))
        .unwrap_or_default();
    // DWARF stacks of interpreters run deep: python3's start-up imports nest past 64 frames
    // (7 % of a short script's ticks were cut there), so the preloaded runtime keeps the
    // most the tables allow (spec §4.4).
    let depth = match unwind {
        crate::Unwind::Dwarf => crate::MAX_STACK_DEPTH,
        crate::Unwind::FramePointers => 64,
    };
    let p = Profiler::new()
        .unwind(unwind)
        .max_stack_depth(depth)
        .hz(hz.unwrap_or(crate::DEFAULT_HZ))
        .output(std::path::Path::new(&out))
        .append_pid(append_pid)
        .stacks(stacks);
    match p.start() {
        Ok(g) => {
            std::mem::forget(g);
            if crate::save::record::dir().is_some() {
                crate::engine::sampler::count_before_start(
                    crate::save::record::take_cpu_at_exec(),
                    at_constructor,
                );
            }
            // A command stopped by Ctrl-C or `kill` keeps its profile too.
            crate::interpose::stopsig::install();
        }
        Err(e) => crate::save::record::report(&[
            b"cannot profile this process: ",
            e.to_string().as_bytes(),
        ]),
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static PRELOAD_INIT: extern "C" fn() = preload_init;
