//! The perf task clock: one `perf_event_open` software clock per thread
//! (`PERF_COUNT_SW_TASK_CLOCK`), the sampler's first choice (spec/runtime.md §4.1, "Clock").
//!
//! A POSIX CPU-time timer is checked only at the kernel's tick (CONFIG_HZ, 250 here): a
//! thread shorter than a tick mostly ends before its first signal, and at 1 kHz each signal
//! is a batch of ticks. The task clock is a high-resolution timer that runs while its thread
//! does, so each period of the thread's CPU time gets its own signal, at the PC it ended at.
//! Unprivileged processes may open it on their own threads while `perf_event_paranoid` ≤ 2
//! (with `exclude_kernel` at 2). When the kernel refuses it (paranoid 3, a seccomp filter,
//! `ENOSYS`), or `GMON_RECORD_CLOCK=timer` asks, the timers remain.
//!
//! The first period of each clock is drawn uniformly from `(0, period]` (then the handler
//! sets the whole period, `PERF_EVENT_IOC_PERIOD`): with the same phase for every thread, a
//! thread shorter than one period was never sampled and one of 1.9 periods sampled once, so
//! short threads and processes lost on average half a period each, and all of it for threads
//! under one period. With a uniform phase, a thread running `t` gets `t / period` samples on
//! average, each at a real PC with its stack (spec/runtime.md §4.1, "Clock").
//!
//! Each event is opened disabled and enabled for [`OVERFLOWS_PER_REFRESH`] overflows at a
//! time (`PERF_EVENT_IOC_REFRESH`): each overflow signals its thread (`F_SETOWN_EX` with
//! `F_OWNER_TID`, `F_SETSIG` the sample signal, so `si_fd` names it), and the last one of the
//! batch (`POLL_HUP`) also stops it until the handler refreshes it. The bound keeps a thread
//! that does not take its signals (blocked by a raw `rt_sigprocmask`, stopped) from queueing
//! more than a batch of real-time signals, which count against the user's pending-signal limit;
//! the batch spares the handler an `ioctl` at every sample (spec/runtime.md §6.2, eighth pass).
//! The descriptor is moved high (`F_DUPFD_CLOEXEC` at three quarters of the open-files
//! limit), away from the numbers a program gets from `open`, and closed when its thread ends;
//! before closing, the runtime checks that the number is still its own (`F_GETSIG`), since a
//! program that closed every descriptor may have a file of its own there now.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use gmon_format::sidecar::ClockKind;

use crate::sys;

/// Overflows a clock signals before it stops and waits for the handler (spec/runtime.md §4.1,
/// "Clock"): the most sample signals one thread can have pending, and the handler refreshes
/// the clock once per this many samples. Each refresh of a stopped clock restarts its timer
/// (about 5 µs in this VM, a quarter of what a sample costs the thread); 8 makes that an eighth.
const OVERFLOWS_PER_REFRESH: c_int = 8;

/// Descriptor numbers (exclusive) the runtime puts a clock at: the tables below have one bit
/// per number.
const FD_LIMIT: usize = 1 << 16;

/// Numbers whose signal is one of our ticks: set when a clock is opened there and left set
/// after it is closed (a signal of it may still be queued).
static EVER: [AtomicU64; FD_LIMIT / 64] = [const { AtomicU64::new(0) }; FD_LIMIT / 64];
/// Numbers that hold one of our clocks now: only those are refreshed.
static LIVE: [AtomicU64; FD_LIMIT / 64] = [const { AtomicU64::new(0) }; FD_LIMIT / 64];

/// Numbers whose clock runs its random first period: the handler sets [`PERIOD_NS`] before
/// enabling it again.
static FIRST: [AtomicU64; FD_LIMIT / 64] = [const { AtomicU64::new(0) }; FD_LIMIT / 64];
/// The whole period of every clock, in nanoseconds of task time.
static PERIOD_NS: AtomicU64 = AtomicU64::new(0);

/// Whether new threads get a task clock (else a timer): set when sampling starts, cleared for
/// good by a refusal.
static WANTED: AtomicBool = AtomicBool::new(false);
/// The `errno` of the kernel's refusal (0: none).
static REFUSED: AtomicI32 = AtomicI32::new(0);
/// Learned from an `EACCES`: this process may only count the user-space part.
static EXCLUDE_KERNEL: AtomicBool = AtomicBool::new(false);

/// Decides the clock when sampling starts: the task clock unless `timer` is asked for.
pub(crate) fn choose(timer: bool) {
    WANTED.store(!timer, Ordering::SeqCst);
    REFUSED.store(0, Ordering::SeqCst);
}

/// Whether new threads should get a task clock.
pub(crate) fn wanted() -> bool {
    WANTED.load(Ordering::SeqCst)
}

/// The clock that runs (for the sidecar), and the errno of the task clock's refusal.
pub(crate) fn in_use() -> (ClockKind, u32) {
    let kind = if wanted() {
        ClockKind::PERF_TASK_CLOCK
    } else {
        ClockKind::THREAD_TIMER
    };
    (kind, REFUSED.load(Ordering::SeqCst).unsigned_abs())
}

/// One thread's task clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskClock {
    fd: c_int,
    /// Its first period was drawn at random: its tick count is unbiased as it stands.
    pub phased: bool,
}

fn bit(table: &[AtomicU64; FD_LIMIT / 64], fd: c_int) -> Option<(&AtomicU64, u64)> {
    let i = usize::try_from(fd).ok().filter(|&i| i < FD_LIMIT)?;
    Some((table.get(i / 64)?, 1u64 << (i % 64)))
}

fn set(table: &[AtomicU64; FD_LIMIT / 64], fd: c_int, on: bool) {
    if let Some((w, b)) = bit(table, fd) {
        if on {
            w.fetch_or(b, Ordering::SeqCst);
        } else {
            w.fetch_and(!b, Ordering::SeqCst);
        }
    }
}

fn is_set(table: &[AtomicU64; FD_LIMIT / 64], fd: c_int) -> bool {
    bit(table, fd).is_some_and(|(w, b)| w.load(Ordering::SeqCst) & b != 0)
}

/// Where clocks are put: three quarters of the open-files limit, below [`FD_LIMIT`].
fn floor() -> c_int {
    let limit = sys::open_files_limit().unwrap_or(1024);
    let f = (limit - limit / 4).min((FD_LIMIT - 4096) as u64).max(3);
    f as c_int
}

/// Refuses the task clock for the rest of the run (`errno`): new threads get timers.
fn refuse(errno: c_int) {
    REFUSED.store(errno, Ordering::SeqCst);
    WANTED.store(false, Ordering::SeqCst);
}

/// Opens, places and starts a task clock on thread `tid`. None when this thread cannot have
/// one (its caller arms a timer); a refusal by the kernel also turns the clock off for the
/// threads to come.
pub(crate) fn open(tid: i32, period_ns: u64, signo: c_int) -> Option<TaskClock> {
    let mut opened = sys::perf_task_clock(tid, period_ns, EXCLUDE_KERNEL.load(Ordering::SeqCst));
    if opened == Err(libc::EACCES) && !EXCLUDE_KERNEL.load(Ordering::SeqCst) {
        EXCLUDE_KERNEL.store(true, Ordering::SeqCst);
        opened = sys::perf_task_clock(tid, period_ns, true);
    }
    let low = match opened {
        Ok(fd) => fd,
        // This thread only: gone, or out of descriptors.
        Err(libc::ESRCH | libc::EMFILE | libc::ENFILE) => return None,
        Err(e) => {
            refuse(e);
            return None;
        }
    };
    let high = sys::dup_at_or_above(low, floor());
    sys::close(low);
    let fd = high.ok()?;
    if fd as usize >= FD_LIMIT || sys::signal_thread_on_events(fd, tid, signo).is_err() {
        sys::close(fd);
        return None;
    }
    // A kernel without PERF_EVENT_IOC_PERIOD keeps the whole period from the start (the
    // handler could not set it back).
    PERIOD_NS.store(period_ns, Ordering::Relaxed);
    let first = sys::random_u64().map_or(period_ns, |r| 1 + r % period_ns.max(1));
    let phased = first < period_ns && sys::perf_set_period(fd, first);
    set(&FIRST, fd, phased);
    set(&EVER, fd, true);
    set(&LIVE, fd, true);
    // A random first period ends alone (its signal sets the whole period, [`rearm`]).
    let batch = if phased { 1 } else { OVERFLOWS_PER_REFRESH };
    if !sys::perf_refresh(fd, batch) {
        set(&LIVE, fd, false);
        set(&FIRST, fd, false);
        sys::close(fd);
        return None;
    }
    Some(TaskClock { fd, phased })
}

/// Whether `fd` still holds our clock (the program may have closed it and opened a file of
/// its own under the number).
fn still_ours(fd: c_int, signo: c_int) -> bool {
    sys::fd_signal(fd) == Some(signo)
}

/// Stops and closes a clock.
pub(crate) fn close(c: TaskClock, signo: c_int) {
    set(&LIVE, c.fd, false);
    set(&FIRST, c.fd, false);
    if still_ours(c.fd, signo) {
        sys::perf_disable(c.fd);
        sys::close(c.fd);
    }
}

/// In a forked child: closes the copy of a parent's clock (without disabling it: the event is
/// the parent thread's).
pub(crate) fn forget_after_fork(c: TaskClock, signo: c_int) {
    set(&LIVE, c.fd, false);
    set(&FIRST, c.fd, false);
    if still_ours(c.fd, signo) {
        sys::close(c.fd);
    }
}

/// `si_code` of a signal sent for a descriptor's events (`POLL_IN`, `POLL_HUP`: the event
/// reached its overflow limit).
const POLL_IN: c_int = 1;
const POLL_HUP: c_int = 6;

/// A signal of one of our task clocks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tick {
    fd: c_int,
    /// The clock reached the end of its batch of overflows (`POLL_HUP`) and stopped.
    stopped: bool,
}

/// The tick of a signal sent by a task clock, else None. Async-signal-safe.
pub(crate) fn tick_of(info: *const libc::siginfo_t) -> Option<Tick> {
    if info.is_null() {
        return None;
    }
    // SAFETY: the kernel passes a valid siginfo_t.
    let code = unsafe { (*info).si_code };
    if code != POLL_IN && code != POLL_HUP {
        return None;
    }
    // The poll member of the siginfo union, `long si_band; int si_fd;`, after the three
    // leading ints, aligned to the pointer size.
    let fd_at = if cfg!(target_pointer_width = "64") {
        24
    } else {
        16
    };
    // SAFETY: siginfo_t is 128 bytes; the offset is inside it.
    let fd = unsafe {
        info.cast::<u8>()
            .add(fd_at)
            .cast::<c_int>()
            .read_unaligned()
    };
    is_set(&EVER, fd).then_some(Tick {
        fd,
        stopped: code == POLL_HUP,
    })
}

/// Enables a stopped clock for its next batch of overflows, if it is still one of ours; a
/// clock still running is left alone. Async-signal-safe.
pub(crate) fn rearm(tick: Tick) {
    let fd = tick.fd;
    if !tick.stopped || !is_set(&LIVE, fd) {
        return;
    }
    if is_set(&FIRST, fd) {
        set(&FIRST, fd, false);
        sys::perf_set_period(fd, PERIOD_NS.load(Ordering::Relaxed));
    }
    sys::perf_refresh(fd, OVERFLOWS_PER_REFRESH);
}
