//! The sampling engine: the tick handler, per-thread CPU-time timers, the thread watcher,
//! and the fork/exec rules.
//!
//! * **Timers.** Each thread gets its own `timer_create` timer on its CPU-time clock
//!   (`CLOCK_THREAD_CPUTIME_ID`, or the thread CPU clock of another tid), delivering the
//!   runtime's reserved real-time signal (`engine/signal.rs`) to exactly that thread
//!   (`SIGEV_THREAD_ID`). A process-wide `ITIMER_PROF` would send one signal
//!   for all threads and lose concurrent ticks. Timer overruns (`si_overrun`, ticks that expired
//!   while the previous signal was pending, e.g. when the kernel checks CPU timers less often
//!   than the rate) are added to the tick's weight.
//! * **New threads.** Threads created with `pthread_create` arm their own timer (`interpose/pthread.rs`).
//!   A watcher thread scans `/proc/self/task` every 100 ms and arms a timer for every other
//!   thread it has not seen (and deletes timers of threads that are gone). It has no timer
//!   itself, so it is never sampled.
//! * **The handler** only touches preallocated atomics: errno is saved and restored, nothing is
//!   allocated, nothing blocks. The sinks it feeds are reached through atomic pointers; a sink
//!   is freed only after it is unpublished and no handler is in flight.
//! * **fork.** A `pthread_atfork` child handler zeroes the counters, arms a timer for the
//!   child's thread and restarts the watcher; the child writes `<name>.<pid>`.
//! * **exec.** `execve` & co. are wrapped (see `interpose/exec.rs`): timers are deleted and pending
//!   ticks discarded before the real call, so the new program is never killed by a tick.

use std::cell::{Cell, UnsafeCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

use crate::arch::Native;
use crate::counts::pcsample::SampleBuffer;
use crate::counts::profil::ProfilBuffer;
use crate::engine::session::Session;
use crate::engine::signal;
use crate::{Error, Result, sys};

/// The running profiler's session, or null.
static SESSION: AtomicPtr<Session> = AtomicPtr::new(std::ptr::null_mut());
/// The active `profil` histogram, or null.
static PROFIL: AtomicPtr<ProfilBuffer<'static>> = AtomicPtr::new(std::ptr::null_mut());
/// The active `pcsample` buffer, or null.
static PCSAMPLE: AtomicPtr<SampleBuffer<'static>> = AtomicPtr::new(std::ptr::null_mut());
/// Number of handlers currently running (a sink is freed only when this is 0).
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Set while an exec wrapper has disarmed the timers: the watcher must not re-arm.
static DISARMED: AtomicBool = AtomicBool::new(false);

/// Interval between two scans of `/proc/self/task` (threads created with `pthread_create`
/// register themselves at once, see `interpose/pthread.rs`; the scan catches the others).
const WATCH_INTERVAL: Duration = Duration::from_millis(100);
/// The first wake-up comes sooner, to read the maps the session started without (a process that
/// ends sooner never reads them).
const FIRST_WATCH: Duration = Duration::from_millis(10);
/// The interval once the main thread has ended: the process should end soon after its last
/// thread (`lastthread.rs`), and the check costs a few small reads.
const ENDING_WATCH: Duration = Duration::from_millis(10);
/// Whether any sink is active (read by the `pthread_create` wrapper without the lock).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Largest overrun counted for one tick (bounds the damage of a bogus `si_overrun`).
const MAX_WEIGHT: u32 = 10_000;
/// The most signals per CPU second a task clock delivers to one thread (spec/runtime.md §4.1,
/// "Clock"). Each signal costs the thread the handler's time, which a high-resolution clock
/// counts towards the next period: at `--hz 100000` (10 µs) the handler alone would fill the
/// periods and the program would stop progressing. Above this rate each signal stands for
/// several ticks, as a timer's overrun does.
const MAX_TASK_CLOCK_HZ: u32 = 10_000;
/// Ticks each task-clock signal counts nominally: 1 up to [`MAX_TASK_CLOCK_HZ`], more above it
/// (set with the session's rate, before any clock is armed).
static TASK_CLOCK_WEIGHT: AtomicU32 = AtomicU32::new(1);
/// One tick's period in ns of thread CPU time, for the task clock's weighting.
static TICK_PERIOD_NS: AtomicU64 = AtomicU64::new(1_000_000);

thread_local! {
    /// The thread CPU time up to which this thread's task-clock ticks are counted (0: none yet).
    static ACCOUNTED_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The ticks a task-clock signal counts (spec/runtime.md §4.1, "Clock"): the periods of this
/// thread's CPU time since the ticks counted so far, to the nearest. A clock stops at the end of
/// each batch of overflows until the handler enables it again (perfclock.rs), and the time
/// between the two (signal delivery) would otherwise never be counted; weighted by the CPU
/// clock, the ticks add up to the thread's CPU time as a timer's overruns do, and each still
/// falls where the thread was. To the nearest, not rounded down: a running clock signals after
/// whole periods of its own time, which the CPU clock may read a few microseconds short, and
/// rounding down would count such a signal as nothing. 0 for a signal whose time was already
/// counted (a batch queued while the thread could not take it: the first counts it all).
/// Async-signal-safe: a thread-local cell and `clock_gettime`.
fn task_clock_ticks() -> u32 {
    let nominal = TASK_CLOCK_WEIGHT.load(Ordering::Relaxed);
    let period = TICK_PERIOD_NS.load(Ordering::Relaxed).max(1);
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills `ts`; it is async-signal-safe.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return nominal;
    }
    let now = (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64);
    ACCOUNTED_NS.with(|accounted| {
        let last = accounted.get();
        // The first signal of this thread (or of a forked child, whose CPU time restarts: the
        // count may run up to half a period ahead of the clock, never a whole one).
        if last == 0 || now.saturating_add(period) < last {
            accounted.set(now);
            return nominal;
        }
        let ticks = (now.saturating_add(period / 2).saturating_sub(last) / period)
            .min(u64::from(MAX_WEIGHT));
        accounted.set(last + ticks * period);
        u32::try_from(ticks).unwrap_or(MAX_WEIGHT)
    })
}

/// The ticks one task-clock signal stands for at `hz`.
fn task_clock_weight(hz: u32) -> u32 {
    hz.div_ceil(MAX_TASK_CLOCK_HZ).max(1)
}

// ---------------------------------------------------------------------------------------------
// The signal handler

/// `si_overrun` of a timer signal (`si_code == SI_TIMER`), else 0.
fn overrun(info: *const libc::siginfo_t) -> u32 {
    if info.is_null() {
        return 0;
    }
    // SAFETY: the kernel passes a valid siginfo_t.
    let code = unsafe { (*info).si_code };
    if code != libc::SI_TIMER {
        return 0;
    }
    // The timer member of the siginfo union: `int si_tid; int si_overrun;`, the union starting
    // after the three leading ints, aligned to the pointer size.
    let union_at = if cfg!(target_pointer_width = "64") {
        16
    } else {
        12
    };
    // SAFETY: siginfo_t is 128 bytes; the offset is inside it.
    let raw = unsafe {
        info.cast::<u8>()
            .add(union_at + 4)
            .cast::<libc::c_int>()
            .read_unaligned()
    };
    u32::try_from(raw).unwrap_or(0).min(MAX_WEIGHT)
}

/// The handler of the sample signal: counts a tick of one of our timers into every active sink;
/// any other delivery of that signal goes to the program's own disposition.
extern "C" fn on_tick(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let clock = crate::engine::perfclock::tick_of(info);
    if clock.is_none() && !signal::is_tick(info) {
        signal::forward(sig, info, ctx);
        return;
    }
    let saved = sys::errno();
    // A task clock that ended its batch of overflows stops until enabled again (perfclock.rs):
    // at once, so that the time the handler takes counts towards the next period.
    if let Some(tick) = clock {
        crate::engine::perfclock::rearm(tick);
    }
    IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
    // SAFETY: ctx is the handler's ucontext argument.
    if let Some(regs) = unsafe { Native::registers(ctx) } {
        let weight = match clock {
            Some(_) => task_clock_ticks(),
            None => 1 + overrun(info),
        };
        if weight != 0 {
            count_tick(&regs, weight);
        }
    }
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    sys::set_errno(saved);
}

/// Counts one tick of `weight` at `regs` into the published sinks. Async-signal-safe: atomics
/// only.
#[inline(always)]
fn count_tick(regs: &crate::arch::Registers, weight: u32) {
    // SAFETY: a published sink stays alive while IN_FLIGHT > 0 (so below).
    if let Some(s) = unsafe { SESSION.load(Ordering::SeqCst).as_ref() } {
        s.record(regs, sys::gettid() as u64, weight);
    }
    // SAFETY: as above.
    if let Some(h) = unsafe { PROFIL.load(Ordering::SeqCst).as_ref() } {
        h.record(regs.pc, weight);
    }
    // SAFETY: as above.
    if let Some(b) = unsafe { PCSAMPLE.load(Ordering::SeqCst).as_ref() } {
        // One stored PC per tick: an overrun tick is stored `weight` times.
        for _ in 0..weight {
            if !b.record(regs.pc) {
                break;
            }
        }
    }
}

/// Waits until no handler is running (after a sink was unpublished).
fn quiesce() {
    while IN_FLIGHT.load(Ordering::SeqCst) != 0 {
        std::thread::yield_now();
    }
}

// ---------------------------------------------------------------------------------------------
// The control state (never touched by the handler)

/// A process-wide lock that a `pthread_atfork` prepare handler can take and the parent/child
/// handlers release (a `std::sync::Mutex` guard cannot cross those calls).
struct ControlLock {
    mutex: sys::RawMutex,
    state: UnsafeCell<Control>,
}

// SAFETY: `state` is only reached through `lock()`, which holds `mutex`.
unsafe impl Sync for ControlLock {}

static CONTROL: ControlLock = ControlLock {
    mutex: sys::RawMutex::new(),
    state: UnsafeCell::new(Control::new()),
};

struct ControlGuard(());

impl std::ops::Deref for ControlGuard {
    type Target = Control;
    fn deref(&self) -> &Control {
        // SAFETY: the mutex is held for the guard's lifetime.
        unsafe { &*CONTROL.state.get() }
    }
}

impl std::ops::DerefMut for ControlGuard {
    fn deref_mut(&mut self) -> &mut Control {
        // SAFETY: the mutex is held for the guard's lifetime.
        unsafe { &mut *CONTROL.state.get() }
    }
}

impl Drop for ControlGuard {
    fn drop(&mut self) {
        CONTROL.mutex.unlock();
    }
}

fn lock() -> ControlGuard {
    CONTROL.mutex.lock();
    ControlGuard(())
}

pub(crate) struct Control {
    /// Number of active sinks (session, profil, pcsample).
    users: u32,
    hz: u32,
    timers: Option<HashMap<i32, Armed>>,
    watcher: Option<std::thread::JoinHandle<()>>,
    watcher_stop: Option<Arc<AtomicBool>>,
    /// Our disposition, saved by an exec wrapper to reinstall if the exec fails.
    before_exec: Option<libc::sigaction>,
    /// The profiler session (published in SESSION while running).
    pub(crate) session: Option<Box<Session>>,
    /// Set in a forked child: output names get `.<pid>`.
    pub(crate) forked: bool,
    /// Set when our handler was found replaced (only a raw `rt_sigaction` can do that).
    pub(crate) replaced: bool,
    /// The process that armed the timers (a `vfork` child shares this memory but not the
    /// timers, and must leave them alone).
    pid: u32,
    /// The runtime's own threads that are never sampled (see `exclude_current_thread`).
    excluded: Vec<i32>,
}

impl Control {
    const fn new() -> Control {
        Control {
            users: 0,
            hz: 0,
            timers: None,
            watcher: None,
            watcher_stop: None,
            before_exec: None,
            session: None,
            forked: false,
            replaced: false,
            pid: 0,
            excluded: Vec::new(),
        }
    }
}

use sys::gettid;

/// The CPU-time clock of thread `tid` (the kernel's `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`).
fn thread_cpu_clock(tid: i32) -> libc::clockid_t {
    if tid == gettid() {
        libc::CLOCK_THREAD_CPUTIME_ID
    } else {
        ((!tid) << 3) | 6
    }
}

/// What signals a thread's ticks (spec §4.1, "Clock").
#[derive(Clone, Copy)]
enum Clock {
    /// A POSIX timer on the thread's CPU-time clock.
    Timer(libc::timer_t),
    /// A perf task clock (perfclock.rs).
    Task(crate::engine::perfclock::TaskClock),
}

/// One thread's clock, and that thread's CPU time when it was armed.
#[derive(Clone, Copy)]
struct Armed {
    clock: Clock,
    cpu_at_arm: u64,
    /// CPU time the thread spent starting, before its clock was armed (a thread that armed
    /// its own: `register_current_thread`): due ticks that no clock saw, counted as
    /// `unsampled` when it ends. 0 for threads armed by another (the watcher, the session's
    /// start), whose earlier time is not theirs to account for here.
    unclocked_ns: u64,
    /// `CLOCK_MONOTONIC` once the clock ran (read with `cpu_at_arm`): the start of the thread's
    /// THREAD_CLOCKS entry (spec §5.17).
    armed_ns: u64,
}

/// Stops and frees a thread's clock.
fn disarm(a: Armed) {
    match a.clock {
        Clock::Timer(id) => sys::timer_delete(id),
        Clock::Task(c) => crate::engine::perfclock::close(c, signal::sample_signal()),
    }
}

/// The CPU time of thread `tid` in nanoseconds (None when the thread is gone).
fn thread_cpu_ns(tid: i32) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills `ts`.
    (unsafe { libc::clock_gettime(thread_cpu_clock(tid), &mut ts) } == 0)
        .then(|| (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64)
}

fn period_ns(hz: u32) -> i64 {
    1_000_000_000 / i64::from(hz.max(1))
}

/// Arms thread `tid`'s clock: a task clock while the kernel gives one, else a timer.
fn arm(tid: i32, hz: u32) -> Option<Armed> {
    // Read first to learn that the thread exists; read again once its clock runs, since
    // opening a clock takes time of its own that the clock does not see.
    thread_cpu_ns(tid)?;
    let signo = signal::sample_signal();
    let task = crate::engine::perfclock::wanted()
        .then(|| {
            let weight = task_clock_weight(hz);
            TASK_CLOCK_WEIGHT.store(weight, Ordering::Relaxed);
            TICK_PERIOD_NS.store(period_ns(hz) as u64, Ordering::Relaxed);
            crate::engine::perfclock::open(tid, period_ns(hz) as u64 * u64::from(weight), signo)
        })
        .flatten();
    let clock = match task {
        Some(c) => Clock::Task(c),
        None => Clock::Timer(sys::thread_timer(
            thread_cpu_clock(tid),
            tid,
            signo,
            signal::TICK_COOKIE,
            period_ns(hz),
        )?),
    };
    let Some(cpu_at_arm) = thread_cpu_ns(tid) else {
        disarm(Armed {
            clock,
            cpu_at_arm: 0,
            unclocked_ns: 0,
            armed_ns: 0,
        });
        return None;
    };
    Some(Armed {
        clock,
        cpu_at_arm,
        unclocked_ns: 0,
        armed_ns: sys::monotonic_ns(),
    })
}

/// Keeps thread `tid`'s new clock in the table, and notes its start in the session's
/// THREAD_CLOCKS (spec §5.17).
fn keep_clock(timers: &mut HashMap<i32, Armed>, session: Option<&Session>, tid: i32, a: Armed) {
    if let Some(s) = session {
        s.thread_clocks.started(tid as u32, a.armed_ns);
    }
    timers.insert(tid, a);
}

/// Stops thread `tid`'s clock without settling anything (the thread is gone, or is one of the
/// runtime's), noting its end in the session's THREAD_CLOCKS.
fn drop_clock(session: Option<&Session>, tid: i32, a: Armed) {
    if let Some(s) = session {
        s.thread_clocks.stopped(tid as u32, sys::monotonic_ns());
    }
    disarm(a);
}

/// Deletes thread `tid`'s timer; with a session, first settles the ticks its CPU time made due
/// that the kernel had not signalled yet (spec §4.1, "The tail"). The session must no longer
/// count ticks of this thread (unpublished, or the sample signal blocked in the thread), so
/// that a tick still pending is not counted twice.
fn delete_timer(tid: i32, armed: Armed, hz: u32, settle: Option<&Session>) {
    let now = settle.and_then(|_| thread_cpu_ns(tid));
    if let Some(s) = settle {
        s.thread_clocks.stopped(tid as u32, sys::monotonic_ns());
    }
    disarm(armed);
    if let (Some(s), Some(now)) = (settle, now) {
        let used = now.saturating_sub(armed.cpu_at_arm);
        let phased = matches!(armed.clock, Clock::Task(c) if c.phased);
        s.settle_thread(tid as u64, used, period_ns(hz) as u64, phased);
        s.count_unclocked(armed.unclocked_ns);
    }
}

fn task_ids() -> Vec<i32> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Arms the calling thread's clock, in a process where it is the only thread: what a scan of
/// `/proc/self/task` would find, without the scan (its directory reads, and the `/proc`
/// entries they build, cost a short process about as much as a thread's clock).
fn arm_only_this_thread(c: &mut Control) {
    let (hz, tid) = (c.hz, gettid());
    let Control {
        timers, session, ..
    } = c;
    if let Some(timers) = timers.as_mut()
        && !timers.contains_key(&tid)
        && let Some(a) = arm(tid, hz)
    {
        keep_clock(timers, session.as_deref(), tid, a);
    }
}

/// Arms timers for threads not seen yet and deletes those of vanished threads. Returns whether
/// a new thread was found.
fn rescan(c: &mut Control, skip: i32) -> bool {
    if DISARMED.load(Ordering::SeqCst) {
        return false;
    }
    let hz = c.hz;
    let Control {
        timers,
        session,
        excluded,
        ..
    } = c;
    let Some(timers) = timers.as_mut() else {
        return false;
    };
    let session = session.as_deref();
    let live = task_ids();
    let mut new = false;
    excluded.retain(|t| live.contains(t));
    for &tid in &live {
        if tid != skip && !excluded.contains(&tid) && !timers.contains_key(&tid) {
            if let Some(a) = arm(tid, hz) {
                keep_clock(timers, session, tid, a);
            }
            new = true;
        }
    }
    timers.retain(|&tid, a| {
        let keep = live.contains(&tid);
        if !keep {
            drop_clock(session, tid, *a);
        }
        keep
    });
    new
}

thread_local! {
    /// Set while this thread creates one of the runtime's own threads (`spawn_runtime_thread`):
    /// the `pthread_create` wrapper then adds nothing.
    static RUNTIME_SPAWN: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is creating one of the runtime's own threads now.
pub(crate) fn is_spawning_runtime_thread() -> bool {
    RUNTIME_SPAWN.with(Cell::get)
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
            exclude_current_thread();
            f()
        });
    RUNTIME_SPAWN.with(|s| s.set(false));
    crate::sys::thread_sigmask(libc::SIG_SETMASK, Some(&old), None);
    r
}

/// [`spawn_runtime_thread`] as the plain function the unwinder is handed
/// ([`crate::unwind::SpawnThread`]): the unwinder sits below the engine and does not call it.
pub(crate) fn spawn_runtime_thread_boxed(
    name: &str,
    f: Box<dyn FnOnce() + Send + 'static>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    spawn_runtime_thread(name, f)
}

/// Most program threads whose CPU time the watcher reads to learn that the program was idle
/// ([`program_cpu_ns`]); with more, it checks everything at each wake-up.
const IDLE_CHECK_THREADS: usize = 64;

/// The summed CPU time of the program threads that have a clock, or None when one of them is
/// gone (or there are too many to read): what tells the watcher that nothing could have
/// changed since its last wake-up (spec/runtime.md §4.1, "New threads").
fn program_cpu_ns(c: &Control) -> Option<u64> {
    let timers = c.timers.as_ref()?;
    if timers.len() > IDLE_CHECK_THREADS {
        return None;
    }
    timers.keys().try_fold(0u64, |sum, &tid| {
        Some(sum.wrapping_add(thread_cpu_ns(tid)?))
    })
}

fn spawn_watcher(c: &mut Control) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = spawn_runtime_thread("gmon-watcher", move || {
        let me = gettid();
        let mut ticks = 0u32;
        let mut main_ended = false;
        // The program threads' CPU time when the last wake-up checked everything.
        let mut checked_at: Option<u64> = None;
        while !flag.load(Ordering::SeqCst) {
            // Parked rather than slept, so stopping (which unparks) never waits a period.
            std::thread::park_timeout(if ticks == 0 {
                FIRST_WATCH
            } else if main_ended {
                ENDING_WATCH
            } else {
                WATCH_INTERVAL
            });
            let mut c = lock();
            if flag.load(Ordering::SeqCst) {
                break;
            }
            // Threads that used no CPU time since the last check cannot have created a thread,
            // mapped a file or ended the main thread: an idle process (`make`, a compiler
            // driver waiting for `cc1`) skips the scans, which cost it about 3 ms of CPU a
            // second. Read before the scan, so that a thread created during it is seen at the
            // next wake-up (its creator's time moved on).
            let cpu = program_cpu_ns(&c);
            if ticks > 1 && !main_ended && cpu.is_some() && cpu == checked_at {
                ticks = ticks.wrapping_add(1);
                continue;
            }
            checked_at = cpu;
            // The first wake-up does not scan: threads being created then are still
            // registering themselves (the scans keep their 100 ms rhythm from the start).
            let new = ticks != 0 && rescan(&mut c, me);
            ticks = ticks.wrapping_add(1);
            // The first wake-up reads the maps the session started without (only the main
            // thread's stack was known then, `unwind/objects.rs`, `seed_main_stack`).
            if let Some(s) = c.session.as_ref()
                && s.wants_stacks()
                && (new || ticks == 1 || ticks.is_multiple_of(10))
            {
                s.ranges.refresh();
            }
            // Mappings of the objects' files the program may undo before it ends (node unmaps
            // its builtins' copy at exit, spec §5.13): every wake-up of the first second, when
            // most programs map them, and every second after.
            if let Some(s) = c.session.as_ref()
                && (new || ticks <= 10 || ticks.is_multiple_of(10))
                && let Ok(mut seen) = s.seen_maps.try_lock()
            {
                seen.refresh();
            }
            // The main thread gone (`pthread_exit`), the process lives on while the program
            // has a thread left; once none is, the runtime's threads must not keep it alive
            // (`lastthread.rs`).
            main_ended = crate::engine::lastthread::main_thread_has_ended();
            let ended = main_ended
                && crate::engine::lastthread::program_has_ended(&task_ids(), &c.excluded);
            // The unwinder's thread starts here rather than with the session: a process that
            // ends within the first period never creates it (spec/runtime.md §4.4). It excludes
            // itself once this lock is released, before the next scan.
            if !ended && let Some(s) = c.session.as_ref() {
                s.start_unwinder();
            }
            drop(c);
            if ended && !flag.load(Ordering::SeqCst) {
                crate::engine::lastthread::end_process();
            }
        }
    });
    c.watcher = handle.ok();
    c.watcher_stop = Some(stop);
}

fn handler() -> libc::sighandler_t {
    on_tick as *const () as libc::sighandler_t
}

/// Whether our handler is still the sample signal's disposition.
fn handler_is_ours() -> bool {
    signal::still_installed(handler())
}

/// Deletes every timer of the table, settling each thread's tail in `settle` (a session no
/// longer published) when sampling stops for good.
fn delete_timers(c: &mut Control, settle: Option<&Session>) {
    let hz = c.hz;
    if let Some(timers) = c.timers.as_mut() {
        for (tid, a) in timers.drain() {
            delete_timer(tid, a, hz, settle);
        }
    }
}

fn register_process_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        sys::atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child));
    });
}

/// Starts the engine for one more sink (first user: handler, timers, watcher).
fn start_engine(c: &mut Control, hz: u32) -> Result<()> {
    if !(1..=100_000).contains(&hz) {
        return Err(Error::BadRate(hz));
    }
    if c.users == 0 {
        if !signal::take(handler()) {
            return Err(Error::last_os("sigaction"));
        }
        register_process_hooks();
        crate::engine::perfclock::choose(clock_forced_to_timer());
        c.hz = hz;
        c.replaced = false;
        c.pid = std::process::id();
        SESSION_PID.store(c.pid, Ordering::SeqCst);
        c.timers = Some(HashMap::new());
        DISARMED.store(false, Ordering::SeqCst);
        // A process that never created a thread (the preload constructor's, as a rule) has
        // only this one; its watcher comes next, and is never sampled. A thread made without
        // `pthread_create` (a raw `clone`) is found by the watcher's scans.
        if sys::never_threaded() {
            arm_only_this_thread(c);
        } else {
            rescan(c, -1);
        }
        spawn_watcher(c);
    }
    c.users += 1;
    ACTIVE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Whether `GMON_RECORD_CLOCK=timer` asks for the timers instead of the task clock.
fn clock_forced_to_timer() -> bool {
    crate::env::var(crate::env::RECORD_CLOCK).is_some_and(|v| v == "timer")
}

/// Whether sampling is running (for the `pthread_create` wrapper's fast path).
pub(crate) fn is_active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Arms a timer for the calling thread now, instead of at the watcher's next scan. Threads
/// created with `pthread_create` do this themselves; call it first thing in a thread created by
/// other means to have all of its CPU time sampled.
pub fn register_current_thread() {
    let mut c = lock();
    if c.users == 0 || DISARMED.load(Ordering::SeqCst) || c.pid != std::process::id() {
        return;
    }
    // The frame walk only trusts stacks it knows: add this thread's stack to them (only while
    // recording stacks), before its clock is armed, so that its first tick finds it.
    if let Some(s) = c.session.as_ref()
        && s.wants_stacks()
    {
        s.ranges.add_current_thread_stack();
    }
    let hz = c.hz;
    let tid = gettid();
    let Control {
        timers, session, ..
    } = &mut *c;
    if let Some(timers) = timers.as_mut()
        && !timers.contains_key(&tid)
        && let Some(a) = arm(tid, hz)
    {
        let a = Armed {
            unclocked_ns: a.cpu_at_arm,
            ..a
        };
        keep_clock(timers, session.as_deref(), tid, a);
    }
}

/// Never samples the calling thread: for the runtime's own threads (watcher, unwinder, stop
/// signal helper), whose work is not the program's.
pub(crate) fn exclude_current_thread() {
    let tid = gettid();
    let mut c = lock();
    c.excluded.push(tid);
    if let Some(a) = c.timers.as_mut().and_then(|t| t.remove(&tid)) {
        drop_clock(c.session.as_deref(), tid, a);
    }
}

/// A program thread created through the `pthread_create` wrapper is ending (its start routine
/// returned, or it called `pthread_exit`): settles its tail, which the kernel never signals
/// once the thread is gone, and deletes its timer.
pub(crate) fn settle_current_thread() {
    let tid = gettid();
    let mut c = lock();
    if c.users == 0 || c.pid != std::process::id() {
        return;
    }
    let Some(a) = c.timers.as_mut().and_then(|t| t.remove(&tid)) else {
        return;
    };
    // A tick still pending for this thread is never delivered now (it ends with the thread),
    // so it is not counted twice.
    sys::thread_sigmask(
        libc::SIG_BLOCK,
        Some(&sys::set_of(signal::sample_signal())),
        None,
    );
    let hz = c.hz;
    delete_timer(tid, a, hz, c.session.as_deref());
}

/// Releases one sink; the last one stops timers and the watcher and restores the old action.
fn stop_engine(mut c: ControlGuard) -> ControlGuard {
    c.users = c.users.saturating_sub(1);
    if c.users != 0 {
        return c;
    }
    ACTIVE.store(false, Ordering::SeqCst);
    if !handler_is_ours() {
        c.replaced = true;
    }
    if let Some(stop) = c.watcher_stop.take() {
        stop.store(true, Ordering::SeqCst);
    }
    let watcher = c.watcher.take();
    drop(c);
    if let Some(w) = watcher {
        w.thread().unpark();
        let _ = w.join();
    }
    let mut c = lock();
    if c.users == 0 {
        // The session (if this stop is its) is unpublished and its handlers drained.
        let session = c.session.take();
        delete_timers(&mut c, session.as_deref());
        c.session = session;
        // A replaced handler (raw rt_sigaction) belongs to the program now: leave it alone.
        if !c.replaced {
            signal::release();
        }
        c.timers = None;
    }
    c
}

// ---------------------------------------------------------------------------------------------
// fork, exec, exit

extern "C" fn fork_prepare() {
    // Held across fork so the child never inherits a lock taken by a thread that does not
    // exist there: ours, and (through LOADER_WALK) the loader's, which a runtime thread holds
    // while inside dl_iterate_phdr.
    sys::LOADER_WALK.lock();
    CONTROL.mutex.lock();
}

extern "C" fn fork_parent() {
    // Locked by fork_prepare in this thread.
    CONTROL.mutex.unlock();
    sys::LOADER_WALK.unlock();
}

extern "C" fn fork_child() {
    IN_FLIGHT.store(0, Ordering::SeqCst);
    // Taken by fork_prepare in the parent's thread, which is this thread here (with a new tid).
    sys::LOADER_WALK.adopt_after_fork();
    sys::LOADER_WALK.unlock();
    // SAFETY: locked by fork_prepare in the parent's thread, which is this thread here.
    let mut c = ControlGuard(());
    if c.users == 0 {
        return;
    }
    // Timers and threads are not inherited: forget both (joining or detaching a thread of the
    // parent would be undefined).
    if let Some(w) = c.watcher.take() {
        std::mem::forget(w);
    }
    c.watcher_stop = None;
    c.excluded.clear();
    c.forked = true;
    // The parent's task clocks came along as descriptors: close them here (their events stay
    // the parent threads'). Its timers were not inherited.
    if let Some(old) = c.timers.take() {
        for a in old.into_values() {
            if let Clock::Task(t) = a.clock {
                crate::engine::perfclock::forget_after_fork(t, signal::sample_signal());
            }
        }
    }
    c.pid = std::process::id();
    SESSION_PID.store(c.pid, Ordering::SeqCst);
    if let Some(s) = c.session.as_ref() {
        s.reset();
        s.set_paths(true);
    }
    c.timers = Some(HashMap::new());
    // The forking thread is the child's only one.
    arm_only_this_thread(&mut c);
    spawn_watcher(&mut c);
}

/// Before an exec: delete every timer and discard pending ticks, so the new program (whose
/// disposition of the sample signal is reset to the default, terminate) never receives one.
pub(crate) fn before_exec() {
    let mut c = lock();
    if c.users == 0 || c.pid != std::process::id() {
        // Not profiling, or a vfork child: it has no timers, and the table is the parent's.
        return;
    }
    DISARMED.store(true, Ordering::SeqCst);
    // The image's profile is written next (spec/runtime.md §4.5, "exec"): each thread's tail,
    // the CPU time since its last tick, is settled into it first, as at exit. The session is
    // unpublished meanwhile, so a tick of another thread is not counted on top of its tail.
    let s = c.session.take();
    if s.is_some() {
        SESSION.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
    delete_timers(&mut c, s.as_deref());
    if let Some(s) = s.as_deref() {
        s.settle_remainder(gettid() as u64, period_ns(c.hz) as u64);
        count_runtime(&c, s);
    }
    c.session = s;
    c.before_exec = signal::before_exec();
}

/// Runs `f` on this process's session before an exec, after [`before_exec`] (the timers are
/// gone): `f` writes the image's profile. The control lock is taken with a bound, as at exit
/// (an exec may come from a signal handler that interrupted the runtime).
pub(crate) fn with_session_before_exec(f: impl FnOnce(&Session)) {
    let Some(c) = lock_at_exit() else {
        return;
    };
    if c.users == 0 || c.pid != std::process::id() {
        return;
    }
    if let Some(s) = c.session.as_deref() {
        f(s);
    }
}

/// After an exec that failed: sampling goes on.
pub(crate) fn after_failed_exec() {
    let mut c = lock();
    if c.users == 0 || c.pid != std::process::id() {
        return;
    }
    if let Some(ours) = c.before_exec.take() {
        signal::after_failed_exec(&ours);
    }
    if let Some(s) = c.session.as_deref() {
        let ptr: *const Session = s;
        SESSION.store(ptr.cast_mut(), Ordering::SeqCst);
    }
    DISARMED.store(false, Ordering::SeqCst);
    rescan(&mut c, -1);
}

/// CPU time of the runtime's own threads (never sampled) so far, in nanoseconds.
fn runtime_threads_cpu_ns(c: &Control) -> u64 {
    c.excluded.iter().filter_map(|&t| thread_cpu_ns(t)).sum()
}

/// Counts the CPU time of the runtime's own threads into `s` as a process or an image ends
/// (spec/runtime.md §4.5, "What no clock sees").
fn count_runtime(c: &Control, s: &Session) {
    s.count_runtime(runtime_threads_cpu_ns(c));
}

/// Right after the preload constructor started a session under `gmon record`: counts the CPU
/// time of this image that no clock saw before the calling thread's clock was armed. Up to
/// `at_constructor` (the process's CPU time when the constructor began) it is the exec, the
/// dynamic loader and earlier constructors, less what the image before an exec had already
/// accounted for (`handed_over`: the process's CPU time at that exec); after it, the runtime's
/// own start. Spec §4.5, "What no clock sees".
pub(crate) fn count_before_start(handed_over: Option<u64>, at_constructor: u64) {
    let process = sys::process_cpu_ns();
    let c = lock();
    let tid = gettid();
    let (Some(s), Some(a)) = (
        c.session.as_deref(),
        c.timers.as_ref().and_then(|t| t.get(&tid)),
    ) else {
        return;
    };
    let since_arm = thread_cpu_ns(tid).map_or(0, |now| now.saturating_sub(a.cpu_at_arm));
    let unclocked = process
        .saturating_sub(since_arm)
        .saturating_sub(runtime_threads_cpu_ns(&c));
    s.count_before_start(at_constructor.saturating_sub(handed_over.unwrap_or(0)));
    s.count_runtime(unclocked.saturating_sub(at_constructor));
}

/// Takes the control lock at exit without risking a hang: the interrupted code may be the
/// runtime itself holding it (exit from a signal handler), so give up after about 2 s. Polled
/// every 0.1 ms: the usual holder is a runtime thread about to let go, and a short process's
/// exit should not wait a whole millisecond for it.
/// The process the sampling state belongs to, readable without the control lock (0: none yet).
static SESSION_PID: AtomicU32 = AtomicU32::new(0);

/// Whether the sampling state is this process's own. It is not in a child made by `vfork` or
/// `posix_spawn` (which share the parent's memory until they exec or `_exit`, and run no fork
/// handlers): such a child must not take the lock, nor the session, of the parent it borrows
/// them from. Async-signal-safe.
pub(crate) fn owned_by_this_process() -> bool {
    let pid = SESSION_PID.load(Ordering::SeqCst);
    pid != 0 && pid == std::process::id()
}

fn lock_at_exit() -> Option<ControlGuard> {
    for _ in 0..20_000 {
        if CONTROL.mutex.try_lock() {
            return Some(ControlGuard(()));
        }
        sys::sleep_us(100);
    }
    None
}

/// At exit: stops sampling without waiting for anything or freeing anything (no join of the
/// watcher, no wait for handlers in flight: a handler may be the very code `exit` interrupted)
/// and returns the session, leaked: it lives until the process ends.
pub(crate) fn stop_session_at_exit() -> Option<&'static Session> {
    let mut c = lock_at_exit()?;
    let s = c.session.take()?;
    SESSION.store(std::ptr::null_mut(), Ordering::SeqCst);
    if let Some(stop) = c.watcher_stop.as_ref() {
        stop.store(true, Ordering::SeqCst);
    }
    c.users = c.users.saturating_sub(1);
    if c.users == 0 {
        ACTIVE.store(false, Ordering::SeqCst);
        delete_timers(&mut c, Some(&s));
        s.settle_remainder(gettid() as u64, period_ns(c.hz) as u64);
        count_runtime(&c, &s);
        if !c.replaced && handler_is_ours() {
            signal::release();
        }
    }
    Some(Box::leak(s))
}

// ---------------------------------------------------------------------------------------------
// Sinks

/// Publishes a session and starts sampling.
pub(crate) fn start_session(session: Box<Session>) -> Result<()> {
    let mut c = lock();
    if c.session.is_some() {
        return Err(Error::AlreadyActive("a Profiler"));
    }
    start_engine(&mut c, session.hz)?;
    c.forked = false;
    // The clocks armed before the session existed (its first, or another sink's) are its too.
    for (&tid, a) in c.timers.iter().flatten() {
        session.thread_clocks.started(tid as u32, a.armed_ns);
    }
    let ptr: *const Session = &*session;
    c.session = Some(session);
    SESSION.store(ptr.cast_mut(), Ordering::SeqCst);
    Ok(())
}

/// Runs `f` on the current session (sampling continues), if there is one.
pub(crate) fn with_session<R>(f: impl FnOnce(&Session, bool, bool) -> R) -> Option<R> {
    let c = lock();
    let replaced = c.replaced || (c.users > 0 && !handler_is_ours());
    c.session.as_deref().map(|s| f(s, c.forked, replaced))
}

/// Stops sampling and hands the session back for writing.
pub(crate) fn stop_session() -> Option<(Box<Session>, bool, bool)> {
    let c = lock();
    c.session.as_ref()?;
    SESSION.store(std::ptr::null_mut(), Ordering::SeqCst);
    quiesce();
    let mut c = stop_engine(c);
    let forked = c.forked;
    let replaced = c.replaced;
    c.session.take().map(|s| (s, forked, replaced))
}

impl ProfilBuffer<'_> {
    /// Runs `f` while the process is sampled at `hz` ticks per second (per thread of CPU time),
    /// counting every tick into this buffer; stops before returning.
    ///
    /// Fails when another `profil` buffer is already active.
    pub fn profile<R>(&self, hz: u32, f: impl FnOnce() -> R) -> Result<R> {
        let _active = ProfilScope::enter(self, hz)?;
        Ok(f())
    }
}

impl SampleBuffer<'_> {
    /// Runs `f` while every thread's PC is stored here at `hz` ticks per second of its CPU
    /// time; stops before returning.
    pub fn sample<R>(&self, hz: u32, f: impl FnOnce() -> R) -> Result<R> {
        let _active = PcSampleScope::enter(self, hz)?;
        Ok(f())
    }
}

/// While alive, ticks are counted into a `profil` buffer.
pub(crate) struct ProfilScope(());

impl ProfilScope {
    pub(crate) fn enter(h: &ProfilBuffer<'_>, hz: u32) -> Result<ProfilScope> {
        let mut c = lock();
        if !PROFIL.load(Ordering::SeqCst).is_null() {
            return Err(Error::AlreadyActive("a profil histogram"));
        }
        start_engine(&mut c, hz)?;
        // The pointer is unpublished (and handlers drained) in Drop, before `h`'s borrow ends.
        PROFIL.store(
            (h as *const ProfilBuffer<'_>).cast_mut().cast(),
            Ordering::SeqCst,
        );
        Ok(ProfilScope(()))
    }
}

impl Drop for ProfilScope {
    fn drop(&mut self) {
        let c = lock();
        PROFIL.store(std::ptr::null_mut(), Ordering::SeqCst);
        quiesce();
        drop(stop_engine(c));
    }
}

/// While alive, PCs are stored into a `pcsample` buffer.
pub(crate) struct PcSampleScope(());

impl PcSampleScope {
    pub(crate) fn enter(b: &SampleBuffer<'_>, hz: u32) -> Result<PcSampleScope> {
        let mut c = lock();
        if !PCSAMPLE.load(Ordering::SeqCst).is_null() {
            return Err(Error::AlreadyActive("a pcsample buffer"));
        }
        start_engine(&mut c, hz)?;
        PCSAMPLE.store(
            (b as *const SampleBuffer<'_>).cast_mut().cast(),
            Ordering::SeqCst,
        );
        Ok(PcSampleScope(()))
    }
}

impl Drop for PcSampleScope {
    fn drop(&mut self) {
        let c = lock();
        PCSAMPLE.store(std::ptr::null_mut(), Ordering::SeqCst);
        quiesce();
        drop(stop_engine(c));
    }
}

/// Handle used by the C ABI: publishes a leaked sink until `unpublish`.
pub(crate) mod raw {
    use super::*;

    pub(crate) fn publish_profil(h: Box<ProfilBuffer<'static>>, hz: u32) -> Result<()> {
        let mut c = lock();
        start_engine(&mut c, hz)?;
        let old = PROFIL.swap(Box::into_raw(h), Ordering::SeqCst);
        if !old.is_null() {
            quiesce();
            // SAFETY: published by this module from a Box, now unpublished and drained.
            drop(unsafe { Box::from_raw(old) });
            c.users = c.users.saturating_sub(1);
        }
        Ok(())
    }

    pub(crate) fn unpublish_profil() {
        let c = lock();
        let old = PROFIL.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if old.is_null() {
            return;
        }
        quiesce();
        // SAFETY: as above.
        drop(unsafe { Box::from_raw(old) });
        drop(stop_engine(c));
    }

    /// Publishes a new pcsample buffer (or none) and returns the count stored in the old one.
    pub(crate) fn swap_pcsample(b: Option<Box<SampleBuffer<'static>>>, hz: u32) -> Result<usize> {
        let mut c = lock();
        let new = match b {
            Some(b) => {
                start_engine(&mut c, hz)?;
                Box::into_raw(b)
            }
            None => std::ptr::null_mut(),
        };
        let old = PCSAMPLE.swap(new, Ordering::SeqCst);
        if old.is_null() {
            return Ok(0);
        }
        quiesce();
        // SAFETY: as above.
        let old = unsafe { Box::from_raw(old) };
        let n = old.stored();
        drop(stop_engine(c));
        Ok(n)
    }
}
