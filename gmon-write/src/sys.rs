//! The runtime's calls into libc and the kernel, in one place.
//!
//! The runtime defines (interposes) several libc functions itself: `sigaction`, `signal`,
//! `sigprocmask`, `pthread_sigmask`, the `sigwait` family, `signalfd`, `pthread_create` and the
//! `exec` family (see `interpose/`). Inside the executable or library
//! that defines them, a plain `libc::sigaction(..)` would call our own definition, so every
//! call the runtime itself makes to one of those goes through [`real`], the next definition
//! (`dlsym(RTLD_NEXT)`: libc's). [`resolve_all`] looks them all up once, before sampling starts,
//! because `dlsym` is not async-signal-safe; the signal handler only loads the cached pointers.

use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, Ordering};

/// One lazily resolved libc function.
pub(crate) struct Real {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl Real {
    const fn new(name: &'static CStr) -> Real {
        Real {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The next definition of the function (libc's), or null when there is none.
    pub(crate) fn get(&self) -> *mut c_void {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return p;
        }
        // SAFETY: dlsym with a valid NUL-terminated name; RTLD_NEXT searches the objects loaded
        // after the one defining this code, which is where libc's definition is.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        self.ptr.store(p, Ordering::Release);
        p
    }
}

/// The real definitions of the functions the runtime interposes.
pub(crate) mod real {
    use super::Real;

    pub(crate) static SIGACTION: Real = Real::new(c"sigaction");
    pub(crate) static SIGNAL: Real = Real::new(c"signal");
    pub(crate) static SIGPROCMASK: Real = Real::new(c"sigprocmask");
    pub(crate) static PTHREAD_SIGMASK: Real = Real::new(c"pthread_sigmask");
    pub(crate) static SIGSUSPEND: Real = Real::new(c"sigsuspend");
    pub(crate) static SIGWAIT: Real = Real::new(c"sigwait");
    pub(crate) static SIGWAITINFO: Real = Real::new(c"sigwaitinfo");
    pub(crate) static SIGTIMEDWAIT: Real = Real::new(c"sigtimedwait");
    pub(crate) static SIGNALFD: Real = Real::new(c"signalfd");
    pub(crate) static PTHREAD_CREATE: Real = Real::new(c"pthread_create");
    pub(crate) static EXECVE: Real = Real::new(c"execve");
    pub(crate) static EXECVPE: Real = Real::new(c"execvpe");
    pub(crate) static EXECV: Real = Real::new(c"execv");
    pub(crate) static EXECVP: Real = Real::new(c"execvp");
    pub(crate) static FEXECVE: Real = Real::new(c"fexecve");

    /// Every function above, for [`super::resolve_all`].
    pub(crate) static ALL: [&Real; 15] = [
        &SIGACTION,
        &SIGNAL,
        &SIGPROCMASK,
        &PTHREAD_SIGMASK,
        &SIGSUSPEND,
        &SIGWAIT,
        &SIGWAITINFO,
        &SIGTIMEDWAIT,
        &SIGNALFD,
        &PTHREAD_CREATE,
        &EXECVE,
        &EXECVPE,
        &EXECV,
        &EXECVP,
        &FEXECVE,
    ];
}

/// Whether the process has never created a thread with `pthread_create`: glibc's
/// `__libc_single_threaded` (2.32 and later), cleared when the first thread is created. False
/// when this C library has no such flag. Not async-signal-safe (the first call looks it up).
pub(crate) fn never_threaded() -> bool {
    static FLAG: Real = Real::new(c"__libc_single_threaded");
    let p = FLAG.get();
    // SAFETY: glibc's one-byte flag, which lives as long as the process; only read here.
    !p.is_null() && unsafe { std::ptr::read_volatile(p.cast::<std::ffi::c_char>()) } != 0
}

/// Looks up every real function now (outside any signal handler).
pub(crate) fn resolve_all() {
    for r in real::ALL {
        r.get();
    }
}

type SigactionFn =
    unsafe extern "C" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int;
type SigmaskFn = unsafe extern "C" fn(c_int, *const libc::sigset_t, *mut libc::sigset_t) -> c_int;

/// libc's `sigaction` (never the runtime's own definition). Returns false on failure.
pub(crate) fn sigaction(
    sig: c_int,
    act: Option<&libc::sigaction>,
    old: Option<&mut libc::sigaction>,
) -> bool {
    let p = real::SIGACTION.get();
    if p.is_null() {
        return false;
    }
    // SAFETY: the next definition of `sigaction` has this signature; the pointers are null or
    // point to valid structures for the duration of the call.
    unsafe {
        let f = std::mem::transmute::<*mut c_void, SigactionFn>(p);
        f(
            sig,
            act.map_or(std::ptr::null(), |a| a as *const _),
            old.map_or(std::ptr::null_mut(), |o| o as *mut _),
        ) == 0
    }
}

/// The current disposition of `sig`.
pub(crate) fn get_action(sig: c_int) -> Option<libc::sigaction> {
    let mut cur = empty_action();
    sigaction(sig, None, Some(&mut cur)).then_some(cur)
}

/// A disposition with handler `handler`, flags `flags` and an empty mask.
pub(crate) fn action(handler: libc::sighandler_t, flags: c_int) -> libc::sigaction {
    let mut act = empty_action();
    act.sa_sigaction = handler;
    act.sa_flags = flags;
    act
}

/// A zeroed `sigaction` (handler `SIG_DFL`, no flags, empty mask).
pub(crate) fn empty_action() -> libc::sigaction {
    // SAFETY: sigaction is plain data; all-zero is SIG_DFL with no flags and an empty mask.
    unsafe { std::mem::zeroed() }
}

/// An empty signal set.
pub(crate) fn empty_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it.
    let mut s: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid, writable set.
    unsafe { libc::sigemptyset(&mut s) };
    s
}

/// The set holding only `sig`.
pub(crate) fn set_of(sig: c_int) -> libc::sigset_t {
    let mut s = empty_set();
    // SAFETY: a valid, writable set.
    unsafe { libc::sigaddset(&mut s, sig) };
    s
}

/// Removes `sig` from `set`.
pub(crate) fn remove(set: &mut libc::sigset_t, sig: c_int) {
    // SAFETY: a valid, writable set.
    unsafe { libc::sigdelset(set, sig) };
}

/// Adds `sig` to `set`.
pub(crate) fn add(set: &mut libc::sigset_t, sig: c_int) {
    // SAFETY: a valid, writable set.
    unsafe { libc::sigaddset(set, sig) };
}

/// libc's `pthread_sigmask` (never the runtime's own definition): 0 or an error number.
pub(crate) fn thread_sigmask(
    how: c_int,
    set: Option<&libc::sigset_t>,
    old: Option<&mut libc::sigset_t>,
) -> c_int {
    let p = real::PTHREAD_SIGMASK.get();
    if p.is_null() {
        return libc::ENOSYS;
    }
    // SAFETY: the next definition of `pthread_sigmask` has this signature; the pointers are
    // null or valid for the call.
    unsafe {
        std::mem::transmute::<*mut c_void, SigmaskFn>(p)(
            how,
            set.map_or(std::ptr::null(), |s| s as *const _),
            old.map_or(std::ptr::null_mut(), |o| o as *mut _),
        )
    }
}

/// `SIGRTMAX` (glibc decides it at run time).
pub(crate) fn sigrtmax() -> c_int {
    libc::SIGRTMAX()
}

/// The calling thread's `errno`.
pub(crate) fn errno() -> c_int {
    // SAFETY: __errno_location is always valid for the calling thread.
    unsafe { *libc::__errno_location() }
}

/// Sets the calling thread's `errno`.
pub(crate) fn set_errno(e: c_int) {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = e };
}

/// The calling thread's kernel id. Async-signal-safe.
pub(crate) fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// The calling thread's stack as `[low, high)`, from its thread attributes (for a thread
/// created by `pthread_create`: its descriptor, no file read). Not async-signal-safe (may
/// allocate).
pub(crate) fn current_thread_stack() -> Option<(u64, u64)> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: pthread_getattr_np initialises `attr` when it returns 0; on failure it is not
    // used nor destroyed.
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) } != 0 {
        return None;
    }
    let mut addr: *mut c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: `attr` was initialised above; the out-pointers are valid locals. It is destroyed
    // once, after its last use.
    let got = unsafe {
        let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        got
    };
    let low = addr as u64;
    (got && size > 0).then(|| (low, low.saturating_add(size as u64)))
}

/// Whether the process runs in secure-execution mode (set-uid/set-gid or file capabilities:
/// `getauxval(AT_SECURE)`), where no environment input of the runtime is trusted.
pub(crate) fn is_secure() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

// ---------------------------------------------------------------------------------------------
// Files and descriptors (all async-signal-safe system calls)

/// `openat(dir, path, flags, mode)`: the descriptor, or the `errno`. `dir` is a directory
/// descriptor or `AT_FDCWD` (then it is `open`).
pub(crate) fn open_at(
    dir: c_int,
    path: &CStr,
    flags: c_int,
    mode: libc::mode_t,
) -> Result<c_int, c_int> {
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), flags, libc::c_uint::from(mode)) };
    if fd >= 0 { Ok(fd) } else { Err(errno()) }
}

/// `fstat(fd)`: (file type bits, owner uid, permission bits), or the `errno`.
pub(crate) fn fstat(fd: c_int) -> Result<(libc::mode_t, libc::uid_t, libc::mode_t), c_int> {
    // SAFETY: stat is plain data, filled by fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `fd` is the caller's descriptor.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(errno());
    }
    Ok((st.st_mode & libc::S_IFMT, st.st_uid, st.st_mode & 0o7777))
}

/// `pread(fd, buf, at)`: bytes read, or the `errno`.
pub(crate) fn pread(fd: c_int, buf: &mut [u8], at: u64) -> Result<usize, c_int> {
    let at = libc::off_t::try_from(at).map_err(|_| libc::EINVAL)?;
    // SAFETY: pread writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), at) };
    usize::try_from(n).map_err(|_| errno())
}

/// `read(fd, buf)`: bytes read (0 at the end of the file), or the `errno`.
pub(crate) fn read(fd: c_int, buf: &mut [u8]) -> Result<usize, c_int> {
    // SAFETY: read writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(n).map_err(|_| errno())
}

/// `access(path, X_OK)`: whether the caller may execute `path`.
pub(crate) fn executable(path: &CStr) -> bool {
    // SAFETY: a NUL-terminated path.
    unsafe { libc::access(path.as_ptr(), libc::X_OK) == 0 }
}

/// The process's environment (`environ`), a null-terminated array of `NAME=value` strings.
pub(crate) fn environ() -> *const *const libc::c_char {
    unsafe extern "C" {
        static environ: *const *const libc::c_char;
    }
    // SAFETY: reading the pointer glibc keeps; the caller walks it as exec would.
    unsafe { environ }
}

/// `write(fd, bytes)`: bytes written, or the `errno`.
pub(crate) fn write(fd: c_int, bytes: &[u8]) -> Result<usize, c_int> {
    // SAFETY: writing initialised bytes from a valid slice.
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    usize::try_from(n).map_err(|_| errno())
}

/// `lseek(fd, by, SEEK_CUR)`: moves the file offset forward (a hole when written past).
pub(crate) fn seek_forward(fd: c_int, by: u64) -> Result<(), c_int> {
    let by = libc::off_t::try_from(by).map_err(|_| libc::EFBIG)?;
    // SAFETY: no memory is passed.
    if unsafe { libc::lseek(fd, by, libc::SEEK_CUR) } < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// `ftruncate(fd, len)`.
pub(crate) fn set_len(fd: c_int, len: u64) -> Result<(), c_int> {
    let len = libc::off_t::try_from(len).map_err(|_| libc::EFBIG)?;
    // SAFETY: no memory is passed.
    if unsafe { libc::ftruncate(fd, len) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// `close(fd)`; false on failure.
pub(crate) fn close(fd: c_int) -> bool {
    // SAFETY: closing a descriptor the caller owns.
    unsafe { libc::close(fd) == 0 }
}

/// `lstat(path)`: (file type bits, owner uid), or the `errno`.
pub(crate) fn lstat(path: &CStr) -> Result<(libc::mode_t, libc::uid_t), c_int> {
    // SAFETY: stat is plain data, filled by lstat from a NUL-terminated path.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::lstat(path.as_ptr(), &mut st) } != 0 {
        return Err(errno());
    }
    Ok((st.st_mode & libc::S_IFMT, st.st_uid))
}

/// `readlink(path)` into `buf` (not NUL-terminated): the length, or the `errno`.
pub(crate) fn readlink(path: &CStr, buf: &mut [u8]) -> Result<usize, c_int> {
    // SAFETY: readlink writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::readlink(path.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(n).map_err(|_| errno())
}

/// `renameat(dir, from, dir, to)` (`rename` with `AT_FDCWD`); the `errno` on failure.
pub(crate) fn rename_at(dir: c_int, from: &CStr, to: &CStr) -> Result<(), c_int> {
    // SAFETY: two NUL-terminated paths.
    if unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// `unlinkat(dir, path, 0)` (`unlink` with `AT_FDCWD`), ignoring failure.
pub(crate) fn unlink_at(dir: c_int, path: &CStr) {
    // SAFETY: a NUL-terminated path.
    unsafe { libc::unlinkat(dir, path.as_ptr(), 0) };
}

/// The effective uid.
pub(crate) fn geteuid() -> libc::uid_t {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() }
}

/// 8 bytes from `getrandom` (without blocking), if available.
pub(crate) fn random_u64() -> Option<u64> {
    let mut v = 0u64;
    // SAFETY: getrandom writes at most 8 bytes into `v`.
    let n = unsafe {
        libc::syscall(
            libc::SYS_getrandom,
            (&mut v as *mut u64).cast::<c_void>(),
            8usize,
            libc::GRND_NONBLOCK,
        )
    };
    (n == 8).then_some(v)
}

/// `CLOCK_MONOTONIC` in nanoseconds.
pub(crate) fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The CPU time of the whole process (every thread, the ended ones too, and the images it ran
/// before an exec) in nanoseconds. Async-signal-safe.
pub(crate) fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills `ts`.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Sleeps `ms` milliseconds (async-signal-safe, unlike `std::thread::sleep`'s bookkeeping).
pub(crate) fn sleep_ms(ms: u32) {
    sleep_us(ms.saturating_mul(1000));
}

/// Sleeps `us` microseconds (async-signal-safe).
pub(crate) fn sleep_us(us: u32) {
    let t = libc::timespec {
        tv_sec: libc::time_t::from(us / 1_000_000),
        tv_nsec: libc::c_long::from(us % 1_000_000) * 1000,
    };
    // SAFETY: sleeping with a valid duration.
    unsafe { libc::nanosleep(&t, std::ptr::null_mut()) };
}

// ---------------------------------------------------------------------------------------------
// Process

/// `raise(sig)`.
pub(crate) fn raise(sig: c_int) {
    // SAFETY: no preconditions.
    unsafe { libc::raise(sig) };
}

/// Ends the process at once, as `_exit(status)` does, with the system call itself: the runtime
/// defines `_exit` (interpose/exit.rs), so calling it by name would come back to that definition.
pub(crate) fn exit_now(status: c_int) -> ! {
    loop {
        // SAFETY: exit_group takes a status and does not return.
        unsafe { libc::syscall(libc::SYS_exit_group, status) };
    }
}

/// libc's `exit(status)`: `atexit` hooks, stdio flushed, then the process ends.
pub(crate) fn exit(status: c_int) -> ! {
    // SAFETY: exit may be called from any thread; the callers hold none of the runtime's locks.
    unsafe { libc::exit(status) }
}

/// `pthread_atfork(prepare, parent, child)`.
pub(crate) fn atfork(
    prepare: Option<extern "C" fn()>,
    parent: Option<extern "C" fn()>,
    child: Option<extern "C" fn()>,
) {
    // SAFETY: registering plain extern "C" functions.
    unsafe {
        libc::pthread_atfork(
            prepare.map(|f| f as unsafe extern "C" fn()),
            parent.map(|f| f as unsafe extern "C" fn()),
            child.map(|f| f as unsafe extern "C" fn()),
        )
    };
}

/// `atexit(f)`.
pub(crate) fn atexit(f: extern "C" fn()) {
    // SAFETY: registering a plain extern "C" function.
    unsafe { libc::atexit(f) };
}

/// A `pthread_mutex_t` that can be locked in one call and unlocked in another (a `pthread_atfork`
/// prepare handler and the parent/child handlers), which `std::sync::Mutex` cannot do.
#[derive(Debug)]
pub(crate) struct RawMutex(std::cell::UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be shared between threads.
unsafe impl Sync for RawMutex {}

impl RawMutex {
    pub(crate) const fn new() -> RawMutex {
        RawMutex(std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER))
    }

    pub(crate) fn lock(&self) {
        // SAFETY: a statically initialised mutex.
        unsafe { libc::pthread_mutex_lock(self.0.get()) };
    }

    /// Whether the lock was free (and is now taken).
    pub(crate) fn try_lock(&self) -> bool {
        // SAFETY: as above.
        unsafe { libc::pthread_mutex_trylock(self.0.get()) == 0 }
    }

    /// Releases the lock (taken by this thread, or inherited locked by a forked child).
    pub(crate) fn unlock(&self) {
        // SAFETY: as above.
        unsafe { libc::pthread_mutex_unlock(self.0.get()) };
    }
}

// ---------------------------------------------------------------------------------------------
// Timers and the loader

/// A POSIX timer on `clock` delivering `signo` with `cookie` in `si_value` to thread `tid`
/// (`SIGEV_THREAD_ID`), every `period_ns`. None when the kernel refuses.
pub(crate) fn thread_timer(
    clock: libc::clockid_t,
    tid: i32,
    signo: c_int,
    cookie: usize,
    period_ns: i64,
) -> Option<libc::timer_t> {
    // SAFETY: sigevent is plain data; zero is a valid start (libc hides the union's padding).
    let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
    sev.sigev_notify = libc::SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev.sigev_notify_thread_id = tid;
    sev.sigev_value = libc::sigval {
        sival_ptr: cookie as *mut c_void,
    };
    let mut id: libc::timer_t = std::ptr::null_mut();
    // SAFETY: valid pointers to local data.
    if unsafe { libc::timer_create(clock, &mut sev, &mut id) } != 0 {
        return None;
    }
    let period = libc::timespec {
        tv_sec: period_ns / 1_000_000_000,
        tv_nsec: period_ns % 1_000_000_000,
    };
    let spec = libc::itimerspec {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: `id` was just created.
    if unsafe { libc::timer_settime(id, 0, &spec, std::ptr::null_mut()) } != 0 {
        timer_delete(id);
        return None;
    }
    Some(id)
}

/// Deletes a timer made by [`thread_timer`].
pub(crate) fn timer_delete(id: libc::timer_t) {
    // SAFETY: a timer this process created and has not deleted.
    unsafe { libc::timer_delete(id) };
}

// ---------------------------------------------------------------------------------------------
// The perf task clock (spec/runtime.md §4.1, "Clock")

/// `struct perf_event_attr` as of its first version (`PERF_ATTR_SIZE_VER0`, 64 bytes): every
/// field the task clock needs is in it, and every kernel with `perf_event_open` takes it.
#[repr(C)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
/// `perf_event_attr` flag bits: `disabled`, `exclude_kernel`, `exclude_hv`.
const PERF_FLAG_DISABLED: u64 = 1 << 0;
const PERF_FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const PERF_FLAG_EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `_IO('$', 1)` and `_IO('$', 2)`.
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_EVENT_IOC_REFRESH: libc::c_ulong = 0x2402;
/// `_IOW('$', 4, __u64)`.
const PERF_EVENT_IOC_PERIOD: libc::c_ulong = 0x4008_2404;
/// fcntl commands and owner type not in every libc crate's list for glibc.
const F_SETSIG: c_int = 10;
const F_GETSIG: c_int = 11;
const F_SETOWN_EX: c_int = 15;
const F_OWNER_TID: c_int = 0;

/// A `PERF_COUNT_SW_TASK_CLOCK` event on thread `tid` overflowing every `period_ns` of its
/// CPU time, created disabled, close-on-exec; `exclude_kernel` when the kernel refuses an
/// unprivileged user the kernel's part (`perf_event_paranoid` ≥ 2). The descriptor, or the
/// `errno`.
pub(crate) fn perf_task_clock(
    tid: i32,
    period_ns: u64,
    exclude_kernel: bool,
) -> Result<c_int, c_int> {
    let attr = PerfEventAttr {
        kind: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: PERF_COUNT_SW_TASK_CLOCK,
        sample_period: period_ns,
        sample_type: 0,
        read_format: 0,
        flags: PERF_FLAG_DISABLED
            | PERF_FLAG_EXCLUDE_HV
            | if exclude_kernel {
                PERF_FLAG_EXCLUDE_KERNEL
            } else {
                0
            },
        wakeup_events: 0,
        bp_type: 0,
        config1: 0,
    };
    // SAFETY: a valid attr of the size it says; pid = tid, any CPU, no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            tid,
            -1 as c_int,
            -1 as c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd >= 0 {
        Ok(fd as c_int)
    } else {
        Err(errno())
    }
}

/// Sets perf event `fd`'s sampling period (its next period, once enabled). Async-signal-safe.
pub(crate) fn perf_set_period(fd: c_int, period: u64) -> bool {
    // SAFETY: PERF_EVENT_IOC_PERIOD reads one u64 from the pointer, a valid local.
    unsafe { libc::ioctl(fd, PERF_EVENT_IOC_PERIOD as _, &period as *const u64) == 0 }
}

/// `fcntl(fd, F_DUPFD_CLOEXEC, floor)`: a copy at the lowest free number ≥ `floor`.
pub(crate) fn dup_at_or_above(fd: c_int, floor: c_int) -> Result<c_int, c_int> {
    // SAFETY: no memory is passed.
    let r = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, floor) };
    if r >= 0 { Ok(r) } else { Err(errno()) }
}

/// Has `fd`'s events signalled to thread `tid` as `signo` (with `si_fd`): `O_ASYNC`,
/// `F_SETSIG`, `F_SETOWN_EX` with `F_OWNER_TID`.
pub(crate) fn signal_thread_on_events(fd: c_int, tid: i32, signo: c_int) -> Result<(), c_int> {
    let owner = [F_OWNER_TID, tid];
    // SAFETY: plain fcntl commands; F_SETOWN_EX reads a `struct f_owner_ex` {int type; pid_t
    // pid}, which `owner` is.
    let ok = unsafe {
        libc::fcntl(fd, libc::F_SETFL, libc::O_ASYNC) == 0
            && libc::fcntl(fd, F_SETSIG, signo) == 0
            && libc::fcntl(fd, F_SETOWN_EX, owner.as_ptr()) == 0
    };
    if ok { Ok(()) } else { Err(errno()) }
}

/// Enables a perf event for `overflows` more overflows (`PERF_EVENT_IOC_REFRESH`): it signals
/// each, and disables itself at the last until refreshed again. Async-signal-safe.
pub(crate) fn perf_refresh(fd: c_int, overflows: c_int) -> bool {
    // SAFETY: no memory is passed.
    unsafe { libc::ioctl(fd, PERF_EVENT_IOC_REFRESH, overflows) == 0 }
}

/// Stops a perf event (`PERF_EVENT_IOC_DISABLE`).
pub(crate) fn perf_disable(fd: c_int) {
    // SAFETY: no memory is passed.
    unsafe { libc::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0 as c_int) };
}

/// The signal `fd`'s events are sent as (`F_GETSIG`; None when `fd` is not open): a
/// descriptor of ours has the sample signal, which the program cannot use, so a file the
/// program opened under the number after closing ours is told apart.
pub(crate) fn fd_signal(fd: c_int) -> Option<c_int> {
    // SAFETY: no memory is passed.
    let r = unsafe { libc::fcntl(fd, F_GETSIG) };
    (r >= 0).then_some(r)
}

/// The soft `RLIMIT_NOFILE` (None when it cannot be read).
pub(crate) fn open_files_limit() -> Option<u64> {
    // SAFETY: rlimit is plain data, filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to local data.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0).then_some(r.rlim_cur as u64)
}

/// The callback type of `dl_iterate_phdr`.
pub(crate) type PhdrCallback =
    unsafe extern "C" fn(*mut libc::dl_phdr_info, libc::size_t, *mut c_void) -> c_int;

/// `dl_iterate_phdr(callback, data)`, holding [`LOADER_WALK`] (waits for it).
///
/// # Safety
/// `callback` must treat `data` as what the caller passes.
pub(crate) unsafe fn dl_iterate_phdr(callback: PhdrCallback, data: *mut c_void) {
    LOADER_WALK.lock();
    // SAFETY: the caller's contract.
    unsafe { libc::dl_iterate_phdr(Some(callback), data) };
    LOADER_WALK.unlock();
}

/// How long the at-exit path waits for another thread's walk of the loaded objects.
pub(crate) const EXIT_WALK_PATIENCE_MS: u32 = 300;

/// `dl_iterate_phdr(callback, data)` for a path that must not wait unboundedly (the profile
/// writer, which may run at exit from a signal handler): walks at once when this thread already
/// holds [`LOADER_WALK`] (the handler interrupted the runtime's own walk on this thread; glibc's
/// loader lock is recursive), else waits for it at most [`EXIT_WALK_PATIENCE_MS`]. Returns
/// false, without walking, when another thread kept it (spec/runtime.md §4.5: the holder may be
/// waiting for glibc's loader lock, which the exiting thread itself may hold).
///
/// # Safety
/// As [`dl_iterate_phdr`].
pub(crate) unsafe fn dl_iterate_phdr_bounded(callback: PhdrCallback, data: *mut c_void) -> bool {
    if !LOADER_WALK.lock_within(EXIT_WALK_PATIENCE_MS) {
        return false;
    }
    // SAFETY: the caller's contract.
    unsafe { libc::dl_iterate_phdr(Some(callback), data) };
    LOADER_WALK.unlock();
    true
}

/// A lock that its holding thread may take again (a signal handler that calls `exit` while
/// this thread is inside the runtime's own walk), and that a forked child can release although
/// its thread id changed.
///
/// Not a `PTHREAD_MUTEX_RECURSIVE_NP` mutex: glibc records the owner's tid in it, and in a
/// child forked while the `fork` prepare handler held it, the thread has a new tid, so
/// `pthread_mutex_unlock` fails with `EPERM` and the child's next walk waits forever. Here the
/// owner and depth are ours: [`WalkLock::adopt_after_fork`] hands them to the child's thread.
#[derive(Debug)]
pub(crate) struct WalkLock {
    mutex: RawMutex,
    /// tid of the holder, 0 when free.
    owner: AtomicI32,
    /// How many times the holder took it (only touched by the holder).
    depth: AtomicU32,
}

impl WalkLock {
    pub(crate) const fn new() -> WalkLock {
        WalkLock {
            mutex: RawMutex::new(),
            owner: AtomicI32::new(0),
            depth: AtomicU32::new(0),
        }
    }

    /// Takes it again when this thread holds it; false otherwise.
    fn reenter(&self, me: i32) -> bool {
        if self.owner.load(Ordering::SeqCst) == me {
            self.depth.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        false
    }

    fn own(&self, me: i32) {
        self.depth.store(1, Ordering::Relaxed);
        self.owner.store(me, Ordering::SeqCst);
    }

    /// Waits for the lock (or takes it again).
    pub(crate) fn lock(&self) {
        let me = gettid();
        if !self.reenter(me) {
            self.mutex.lock();
            self.own(me);
        }
    }

    /// Takes the lock, waiting at most about `ms` milliseconds; false when it stayed held by
    /// another thread.
    pub(crate) fn lock_within(&self, ms: u32) -> bool {
        let me = gettid();
        if self.reenter(me) {
            return true;
        }
        for waited in 0..=ms {
            if self.mutex.try_lock() {
                self.own(me);
                return true;
            }
            if waited < ms {
                sleep_ms(1);
            }
        }
        false
    }

    /// Releases one level; the last releases the lock.
    pub(crate) fn unlock(&self) {
        // A handler on this thread may run between any two of these steps: it takes the lock
        // again while `owner` is still this thread (and leaves `depth` as it found it), and
        // waits boundedly for the mutex after (the at-exit writer then keeps its last list).
        let depth = self.depth.load(Ordering::Relaxed);
        if depth > 1 {
            self.depth.store(depth - 1, Ordering::Relaxed);
            return;
        }
        self.owner.store(0, Ordering::SeqCst);
        self.depth.store(0, Ordering::Relaxed);
        self.mutex.unlock();
    }

    /// In a forked child: the lock taken by the `fork` prepare handler belongs to this thread
    /// (the parent's thread, under a new tid).
    pub(crate) fn adopt_after_fork(&self) {
        if self.owner.load(Ordering::SeqCst) != 0 {
            self.owner.store(gettid(), Ordering::SeqCst);
        }
    }
}

/// Held by every runtime walk of the loaded objects (`dl_iterate_phdr`), and by the `fork`
/// prepare handler across the fork. `dl_iterate_phdr` holds the loader's lock while it runs; a
/// fork at that moment (a shell forking a command substitution while the `gmon-unwind` thread
/// refreshes its object list) gave a child whose loader lock was held by a thread that does not
/// exist there, and the child hung in its first `dl_iterate_phdr` (at exit, writing its
/// profile). Re-entrant for its holder, and the writer waits for it only boundedly
/// ([`dl_iterate_phdr_bounded`]).
pub(crate) static LOADER_WALK: WalkLock = WalkLock::new();

/// Blocks every signal in the calling thread (libc's `pthread_sigmask`, which leaves glibc's
/// internal signals alone) and returns the previous mask.
pub(crate) fn block_all_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigfillset initialises it.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid, writable set.
    unsafe { libc::sigfillset(&mut all) };
    let mut old = empty_set();
    thread_sigmask(libc::SIG_SETMASK, Some(&all), Some(&mut old));
    old
}

/// How many pages of `[ptr, ptr + len)` (page-aligned `ptr`) are resident (`mincore`): of an
/// anonymous mapping, those first touched. For the tests of what the runtime touches.
#[cfg(test)]
pub(crate) fn resident_pages(ptr: *const u8, len: usize) -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let mut v = vec![0u8; len.div_ceil(page)];
    // SAFETY: `v` holds one byte per page of the range, which the caller owns mapped.
    let r = unsafe { libc::mincore(ptr.cast_mut().cast(), len, v.as_mut_ptr()) };
    assert_eq!(r, 0, "mincore");
    v.iter().filter(|&&b| b & 1 != 0).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    static IN_HANDLER_WALKED: AtomicBool = AtomicBool::new(false);

    extern "C" fn nothing(_: *mut libc::dl_phdr_info, _: libc::size_t, _: *mut c_void) -> c_int {
        0
    }

    /// What a program's handler calling `exit` does: the writer's bounded walk.
    extern "C" fn exit_like_handler(_: c_int) {
        // SAFETY: a callback that touches nothing.
        let walked = unsafe { dl_iterate_phdr_bounded(nothing, std::ptr::null_mut()) };
        IN_HANDLER_WALKED.store(walked, Ordering::SeqCst);
    }

    extern "C" fn raise_inside(
        _: *mut libc::dl_phdr_info,
        _: libc::size_t,
        _: *mut c_void,
    ) -> c_int {
        raise(libc::SIGUSR2);
        1
    }

    /// A signal handler that walks the objects while the same thread is inside the runtime's
    /// walk (exit from a handler) takes the walk lock again at once: the lock used to be a
    /// plain mutex, and this waited forever.
    #[test]
    fn a_handler_inside_our_walk_walks_again_at_once() {
        let act = action(exit_like_handler as *const () as libc::sighandler_t, 0);
        assert!(sigaction(libc::SIGUSR2, Some(&act), None));
        // SAFETY: a callback that only raises a signal.
        unsafe { dl_iterate_phdr(raise_inside, std::ptr::null_mut()) };
        // Walked, not gave up: a lock that did not know its owner would have made the handler's
        // bounded walk wait out its patience and return false (no clock read here: a loaded
        // machine must not fail this).
        assert!(IN_HANDLER_WALKED.load(Ordering::SeqCst));
        // Released in full: another thread takes it at once.
        assert!(
            std::thread::spawn(|| {
                let ok = LOADER_WALK.lock_within(0);
                LOADER_WALK.unlock();
                ok
            })
            .join()
            .unwrap()
        );
    }

    /// Another thread's hold makes the bounded walk give up after its patience, not wait.
    #[test]
    fn the_bounded_walk_gives_up_on_another_threads_hold() {
        let lock = WalkLock::new();
        lock.lock();
        lock.lock();
        lock.unlock();
        let start = std::time::Instant::now();
        let other = std::thread::scope(|s| s.spawn(|| lock.lock_within(50)).join().unwrap());
        assert!(!other);
        assert!(start.elapsed() >= std::time::Duration::from_millis(50));
        lock.unlock();
        assert!(std::thread::scope(|s| s
            .spawn(|| {
                let ok = lock.lock_within(0);
                lock.unlock();
                ok
            })
            .join()
            .unwrap()));
    }
}
