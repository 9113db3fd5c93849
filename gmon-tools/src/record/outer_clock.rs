//! The outer clock: `gmon record`'s own sampler of the whole process tree (spec/runtime.md
//! §4.7).
//!
//! The runtime samples a process image only between its start and its last write: the exec,
//! the dynamic loader, the constructors that run before the runtime's and the exit are outside
//! every clock it has, and in a build or a shell loop of short processes that is half the CPU
//! time. The kernel can sample that time for us: a task clock opened by `gmon record` on itself
//! with `inherit` follows every process and thread the command starts, from its first
//! instruction to its last, and its samples (PC, pid, tid, time) land in rings that this module
//! drains. [`super::gaps`] keeps the samples that fall outside every window the runtime sampled.
//!
//! Two scopes (spec/runtime.md §4.7, "Scope"). Where the kernel allows it (root, or
//! `CAP_PERFMON`, or `perf_event_paranoid` ≤ 0) the clock is one CPU clock per CPU that samples
//! whatever runs there, and only the command's process tree is kept: it follows the tree by the
//! fork records, from `gmon record`'s child down. This clock also sees what an inherited task
//! clock cannot: a process's exit tears its address space down after the kernel has detached
//! its own events, which is a tenth of a short process's CPU time. Elsewhere it is an inherited
//! task clock, which an unprivileged user may open on their own processes.
//!
//! The kernel refuses to map a ring for an inherited event that counts on every CPU, so either
//! way there is one event and one ring per CPU, as `perf record` has. The events also report the
//! forks, execs (`comm` with `comm_exec`) and exits, which tell which image of a process a
//! sample belongs to. The rings are drained together and each round's records handled in time
//! order, so that a process is known (by its fork) before its samples are judged.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How many times faster than `--hz` an inherited outer clock ticks: a process's task clock
/// starts at zero when it is forked, so a clock at `--hz` would sample every short process at
/// the same moments of its life (1 ms, 2 ms, ...) and never the first millisecond, where the
/// exec and the loader are. At four times the rate a sample falls every quarter period, and one
/// in four of those outside the runtime's windows is kept (`gaps`), with a random phase per
/// image. A CPU's clock ([`Scope::System`]) runs whatever starts or ends on it, so its phase is
/// already random to each process: it ticks at `--hz` and every sample is kept, at a quarter
/// of the cost (each tick is a timer interrupt the program pays for, about 14 µs in a VM).
pub const OVERSAMPLING: u64 = 4;

impl Scope {
    /// How many outer ticks stand for one tick at `--hz`.
    pub fn oversampling(self) -> u64 {
        match self {
            Scope::System => 1,
            Scope::Inherited => OVERSAMPLING,
        }
    }
}

/// The outer clock's shortest period: 10 kHz (a sample costs the kernel about a microsecond).
const MIN_PERIOD_NS: u64 = 100_000;

/// Samples kept at most (32 bytes each, 256 MiB): a build of about 30 minutes of CPU time in
/// short processes at 4 kHz. Beyond, samples are counted in [`OuterSamples::lost`].
const MAX_SAMPLES: usize = 8 << 20;

/// A process image's samples are all kept for its first 2 s (the runtime's window starts
/// within milliseconds of the exec); after that, only its last [`TAIL`] samples are, for the
/// time after its window ends (the write and the exit). What falls between is counted in
/// [`OuterSamples::skipped`], to be checked against the window once it is known: a long
/// program then costs the collector a bounded amount of memory.
const HEAD_NS: u64 = 2_000_000_000;

/// Samples kept at the end of each image: half a second at 4 kHz.
const TAIL: usize = 2000;

/// After an image's first [`HEAD_NS`], each of its threads other than the main one still has
/// the samples of its own first 20 ms kept, and its last [`THREAD_TAIL`]: where its clock was
/// not yet armed or already deleted (spec/runtime.md §4.7, "Long images"), which the sidecar's
/// THREAD_CLOCKS tells apart afterwards. A pool that starts threads all along keeps them.
const THREAD_HEAD_NS: u64 = 20_000_000;

/// Samples kept at the end of each thread (its exit record flushes them).
const THREAD_TAIL: usize = 4;

/// Data pages of each CPU's ring (256 KiB: within the kernel's default locked-memory allowance
/// for an unprivileged user, 516 KiB per CPU, even with another profiler running).
const RING_PAGES: usize = 64;

/// How often the rings are drained: each holds about 8,000 samples, 2 s at 4 kHz.
const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// The names the runtime gives its own threads (gmon-write's engine).
const RUNTIME_THREADS: [&[u8]; 2] = [b"gmon-watcher", b"gmon-unwind"];

/// Which outer clock to run (`gmon record --outer-clock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OuterMode {
    /// [`Scope::System`] where the kernel allows it, else [`Scope::Inherited`].
    Auto,
    /// This scope only: refused when the kernel refuses it.
    Only(Scope),
}

/// What the outer clock's events watch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Every CPU, everything that runs there; the command's tree is kept.
    System,
    /// The command's tree, by task clocks it inherits.
    #[default]
    Inherited,
}

impl Scope {
    /// How the summary names it.
    pub fn describe(self) -> &'static str {
        match self {
            Scope::System => "every CPU, the command's processes kept",
            Scope::Inherited => "task clocks inherited by the command's processes",
        }
    }
}

/// One sample of the outer clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OuterSample {
    /// `CLOCK_MONOTONIC`, ns (the runtime's windows use the same clock).
    pub time: u64,
    /// The program counter (a kernel address when the kernel was sampled).
    pub ip: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// For a sample in the kernel, the user-space PC where the thread entered it (a system
    /// call's return address, a faulting instruction); 0 when unknown or not in the kernel.
    pub user_ip: u64,
}

/// A change in the process tree that the events reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskEvent {
    /// A process was created (a thread's creation is not listed).
    Fork {
        /// The new process.
        pid: u32,
        /// The process that created it.
        ppid: u32,
        /// When.
        time: u64,
    },
    /// A process executed a program.
    Exec {
        /// The process.
        pid: u32,
        /// The program's name as the kernel keeps it (at most 15 bytes).
        comm: String,
        /// When.
        time: u64,
    },
    /// A thread named itself as one of the runtime's own (`gmon-watcher`, `gmon-unwind`):
    /// no clock of the runtime samples it, so the outer clock's samples of it are kept.
    RuntimeThread {
        /// Its process.
        pid: u32,
        /// The thread.
        tid: u32,
        /// When.
        time: u64,
    },
    /// A process ended (its main thread exited).
    Exit {
        /// The process.
        pid: u32,
        /// When.
        time: u64,
    },
}

impl TaskEvent {
    /// When it happened (`CLOCK_MONOTONIC`, ns).
    pub fn time(&self) -> u64 {
        match *self {
            TaskEvent::Fork { time, .. }
            | TaskEvent::Exec { time, .. }
            | TaskEvent::RuntimeThread { time, .. }
            | TaskEvent::Exit { time, .. } => time,
        }
    }
}

/// What the outer clock collected.
#[derive(Debug, Default)]
pub struct OuterSamples {
    /// Samples of the command's processes, in no particular order.
    pub samples: Vec<OuterSample>,
    /// Forks, execs and exits, in no particular order.
    pub tasks: Vec<TaskEvent>,
    /// Samples the kernel could not put into a full ring, or beyond the most kept (32 Mi).
    pub lost: u64,
    /// The outer clock's period (ns).
    pub period_ns: u64,
    /// Whether the kernel's own code was sampled too (else `exclude_kernel`: a tick that ends in
    /// the kernel is not recorded).
    pub kernel: bool,
    /// The pid of `gmon record` itself, whose own samples were not kept.
    pub recorder: u32,
    /// What the events watched.
    pub scope: Scope,
    /// Samples not kept from the middle of long images (see `HEAD_NS`), each run with its
    /// process and its first and last time.
    pub skipped: Vec<Skipped>,
}

/// Samples of one image's middle that were counted, not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// The process.
    pub pid: u32,
    /// The first one's time.
    pub from: u64,
    /// The last one's time.
    pub to: u64,
    /// How many.
    pub count: u64,
}

/// What the collector keeps per live process: when its image began, its last samples, and
/// the run it skipped.
#[derive(Debug, Default)]
struct Live {
    began: u64,
    tail: std::collections::VecDeque<OuterSample>,
    skipped: Option<Skipped>,
    /// Its threads (not the main one) seen after its first [`HEAD_NS`].
    threads: std::collections::HashMap<u32, LiveThread>,
}

/// A thread of a long image: when it was first seen, and its last samples.
#[derive(Debug, Default)]
struct LiveThread {
    first: u64,
    tail: std::collections::VecDeque<OuterSample>,
}

/// The reader's state: what it collected, and the live processes.
#[derive(Debug, Default)]
struct Collector {
    out: OuterSamples,
    live: std::collections::HashMap<u32, Live>,
    /// With a clock of every CPU, the processes of the command's tree: `gmon record` and, from
    /// their fork records, its descendants (an exited one stays, for the samples of its last
    /// moments, until its pid is given to a process outside the tree). `None`: every record is
    /// the tree's (inherited task clocks).
    tree: Option<std::collections::HashSet<u32>>,
}

impl Collector {
    fn keep(&mut self, mut s: OuterSample) {
        let live = self.live.entry(s.pid).or_insert_with(|| Live {
            began: s.time,
            ..Live::default()
        });
        if s.time < live.began.saturating_add(HEAD_NS) {
            push(&mut self.out, s);
            return;
        }
        if s.tid != s.pid {
            let t = live.threads.entry(s.tid).or_insert_with(|| LiveThread {
                first: s.time,
                ..LiveThread::default()
            });
            if s.time < t.first.saturating_add(THREAD_HEAD_NS) {
                push(&mut self.out, s);
                return;
            }
            t.tail.push_back(s);
            if t.tail.len() <= THREAD_TAIL {
                return;
            }
            // Older than the thread's last few: one of the image's middle, as any other.
            let Some(old) = t.tail.pop_front() else {
                return;
            };
            s = old;
        }
        live.tail.push_back(s);
        if live.tail.len() > TAIL
            && let Some(old) = live.tail.pop_front()
        {
            let run = live.skipped.get_or_insert(Skipped {
                pid: old.pid,
                from: old.time,
                to: old.time,
                count: 0,
            });
            run.from = run.from.min(old.time);
            run.to = run.to.max(old.time);
            run.count += 1;
        }
    }

    /// Thread `tid` of `pid` ended: its last samples are kept.
    fn thread_ends(&mut self, pid: u32, tid: u32) {
        if let Some(t) = self.live.get_mut(&pid).and_then(|l| l.threads.remove(&tid)) {
            push_all(&mut self.out, t.tail);
        }
    }

    /// The image of `pid` ends at `time` (an exec, an exit, or a fork that reuses the pid).
    fn image_ends(&mut self, pid: u32, time: u64, next: bool) {
        if let Some(mut live) = self.live.remove(&pid) {
            for (_, t) in live.threads.drain() {
                push_all(&mut self.out, t.tail);
            }
            push_all(&mut self.out, live.tail);
            self.out.skipped.extend(live.skipped);
        }
        if next {
            self.live.insert(
                pid,
                Live {
                    began: time,
                    ..Live::default()
                },
            );
        }
    }

    fn finish(mut self) -> OuterSamples {
        let pids: Vec<u32> = self.live.keys().copied().collect();
        for pid in pids {
            self.image_ends(pid, 0, false);
        }
        self.out
    }
}

fn push_all(out: &mut OuterSamples, samples: impl IntoIterator<Item = OuterSample>) {
    for s in samples {
        push(out, s);
    }
}

fn push(out: &mut OuterSamples, s: OuterSample) {
    if out.samples.len() >= MAX_SAMPLES {
        out.lost += 1;
    } else {
        out.samples.push(s);
    }
}

/// A running outer clock.
#[derive(Debug)]
pub struct OuterClock {
    events: Vec<OwnedFd>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<OuterSamples>>,
    period_ns: u64,
    kernel: bool,
}

impl Drop for OuterClock {
    /// A clock dropped without [`OuterClock::stop`] (the command could not start) still ends
    /// its reader thread.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Why the outer clock did not run.
#[derive(Debug)]
pub struct Refused(pub io::Error);

impl OuterClock {
    /// Starts the clock on the calling thread, for every process and thread it creates from now
    /// on, at [`OVERSAMPLING`] times `hz`, in the scope `mode` asks for. Call it on the thread
    /// that spawns the command, just before.
    pub fn start(hz: u32, mode: OuterMode) -> Result<OuterClock, Refused> {
        let period_of = |scope: Scope| {
            (1_000_000_000 / (u64::from(hz.max(1)) * scope.oversampling())).max(MIN_PERIOD_NS)
        };
        // The reader thread exists before the events do, so it does not inherit them.
        let (tx, rx) = mpsc::channel::<(Vec<Ring>, Scope)>();
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("gmon-outer".into())
                .spawn(move || match rx.recv() {
                    Ok((rings, scope)) => read_rings(&rings, &stop, scope),
                    Err(_) => OuterSamples::default(),
                })
                .map_err(Refused)?
        };
        let scopes: &[Scope] = match mode {
            OuterMode::Auto => &[Scope::System, Scope::Inherited],
            OuterMode::Only(Scope::System) => &[Scope::System],
            OuterMode::Only(Scope::Inherited) => &[Scope::Inherited],
        };
        let mut opened = Err(io::Error::from_raw_os_error(libc::ENODEV));
        for &scope in scopes {
            opened = open_all(period_of(scope), scope).map(|o| (o, scope));
            match &opened {
                // Not allowed to watch every CPU: the next scope.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {}
                _ => break,
            }
        }
        let sent = opened.and_then(|((events, rings, kernel), scope)| {
            tx.send((rings, scope))
                .map_err(|_| io::Error::other("the reader thread ended"))?;
            Ok((events, kernel, scope))
        });
        match sent {
            Ok((events, kernel, scope)) => Ok(OuterClock {
                events,
                stop,
                reader: Some(reader),
                period_ns: period_of(scope),
                kernel,
            }),
            Err(e) => {
                drop(tx);
                stop.store(true, Ordering::SeqCst);
                let _ = reader.join();
                Err(Refused(e))
            }
        }
    }

    /// Stops the clock and returns what it collected.
    pub fn stop(mut self) -> OuterSamples {
        for fd in &self.events {
            // SAFETY: PERF_EVENT_IOC_DISABLE takes no argument; `fd` is our open event.
            unsafe { libc::ioctl(fd.as_raw_fd(), PERF_EVENT_IOC_DISABLE as _, 0) };
        }
        self.stop.store(true, Ordering::SeqCst);
        let mut out = self
            .reader
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or_default();
        out.period_ns = self.period_ns;
        out.kernel = self.kernel;
        out
    }
}

/// The CPUs the kernel may run a task on (`/sys/devices/system/cpu/possible`, e.g. `0-3`).
fn possible_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
            cpus.extend(a..=b.min(a + 4095));
        }
    }
    if cpus.is_empty() {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        cpus.extend(0..i32::try_from(n.max(1)).unwrap_or(1));
    }
    cpus
}

/// One event and its ring on every CPU that is online, in `scope`; and whether the kernel's
/// code is sampled (an unprivileged user's inherited clock sees user space only).
fn open_all(period_ns: u64, scope: Scope) -> io::Result<(Vec<OwnedFd>, Vec<Ring>, bool)> {
    let mut events = Vec::new();
    let mut rings = Vec::new();
    let mut kernel = true;
    for cpu in possible_cpus() {
        let fd = match open_event(period_ns, cpu, kernel, scope) {
            // Unprivileged (perf_event_paranoid 2): user space only.
            Err(e)
                if kernel
                    && scope == Scope::Inherited
                    && e.raw_os_error() == Some(libc::EACCES) =>
            {
                kernel = false;
                open_event(period_ns, cpu, false, scope)
            }
            // A CPU that is possible but offline.
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => continue,
            r => r,
        }?;
        rings.push(Ring::map(&fd)?);
        events.push(fd);
    }
    if events.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    Ok((events, rings, kernel))
}

// ---------------------------------------------------------------------------------------------
// The kernel's interface (include/uapi/linux/perf_event.h)

/// `struct perf_event_attr` up to `sample_max_stack` (`PERF_ATTR_SIZE_VER5`, 112 bytes).
#[repr(C)]
#[derive(Default)]
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
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const SAMPLE_IP: u64 = 1 << 0;
const SAMPLE_TID: u64 = 1 << 1;
const SAMPLE_TIME: u64 = 1 << 2;
const SAMPLE_CALLCHAIN: u64 = 1 << 5;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const FLAG_EXCLUDE_IDLE: u64 = 1 << 7;
const FLAG_COMM: u64 = 1 << 9;
const FLAG_TASK: u64 = 1 << 13;
const FLAG_SAMPLE_ID_ALL: u64 = 1 << 18;
const FLAG_EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
const FLAG_COMM_EXEC: u64 = 1 << 24;
const FLAG_USE_CLOCKID: u64 = 1 << 25;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `_IO('$', 1)`.
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;

const RECORD_LOST: u32 = 2;
const RECORD_COMM: u32 = 3;
const RECORD_EXIT: u32 = 4;
const RECORD_FORK: u32 = 7;
const RECORD_SAMPLE: u32 = 9;
const MISC_COMM_EXEC: u16 = 1 << 13;
/// The call chain's marker before its user-space part (`PERF_CONTEXT_USER`, -512); every value
/// from `PERF_CONTEXT_MAX` (-4095) up is a marker, not an address.
const CONTEXT_USER: u64 = (-512i64) as u64;
const CONTEXT_MAX: u64 = (-4095i64) as u64;

/// The event on `cpu`: for everything that runs there ([`Scope::System`]), or for the calling
/// thread and everything it creates ([`Scope::Inherited`]).
fn open_event(period_ns: u64, cpu: i32, kernel: bool, scope: Scope) -> io::Result<OwnedFd> {
    let (config, pid, watch) = match scope {
        Scope::System => (PERF_COUNT_SW_CPU_CLOCK, -1, FLAG_EXCLUDE_IDLE),
        Scope::Inherited => (PERF_COUNT_SW_TASK_CLOCK, 0, FLAG_INHERIT),
    };
    let attr = PerfEventAttr {
        kind: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        sample_period: period_ns,
        // The call chain's user part, one entry deep: for a tick in the kernel, where the thread
        // entered it (regs->ip at entry, exact; a deeper walk would follow frame pointers that
        // Debian's libraries do not keep).
        sample_type: SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_CALLCHAIN,
        sample_max_stack: 1,
        flags: watch
            | FLAG_EXCLUDE_CALLCHAIN_KERNEL
            | FLAG_EXCLUDE_HV
            | FLAG_COMM
            | FLAG_COMM_EXEC
            | FLAG_TASK
            | FLAG_SAMPLE_ID_ALL
            | FLAG_USE_CLOCKID
            | if kernel { 0 } else { FLAG_EXCLUDE_KERNEL },
        // Woken by the drain's timer, not by the kernel.
        wakeup_events: 0,
        clockid: libc::CLOCK_MONOTONIC,
        ..PerfEventAttr::default()
    };
    // SAFETY: a valid attr of the size it says; pid 0 (this thread) or -1 (every task), one
    // CPU, no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            pid as libc::pid_t,
            cpu,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just gave us, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// One CPU's ring: a control page, then [`RING_PAGES`] pages of records.
struct Ring {
    base: *mut u8,
    len: usize,
    data: usize,
}

// SAFETY: the mapping is only read (and its tail written) by the reader thread that owns it.
unsafe impl Send for Ring {}

/// Offsets of `data_head` and `data_tail` in the control page (`struct perf_event_mmap_page`).
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

impl Ring {
    fn map(fd: &OwnedFd) -> io::Result<Ring> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = page * (RING_PAGES + 1);
        // SAFETY: a shared read-write mapping of a perf event, as the kernel documents; the
        // result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Ring {
            base: base.cast(),
            len,
            data: page,
        })
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: the control page is mapped, 8-aligned at this offset, and lives as long as
        // `self`; the kernel writes it atomically.
        unsafe { &*self.base.add(DATA_HEAD).cast::<AtomicU64>() }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: as `head`; only this reader writes it.
        unsafe { &*self.base.add(DATA_TAIL).cast::<AtomicU64>() }
    }

    /// Hands every complete record to `each`, then frees their space.
    fn drain(&self, mut each: impl FnMut(&[u8])) {
        let size = self.len - self.data;
        let head = self.head().load(Ordering::Acquire);
        let mut tail = self.tail().load(Ordering::Relaxed);
        // SAFETY: the data pages are mapped for `size` bytes after the control page.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(self.data), size) };
        let mut record = Vec::new();
        while tail < head {
            let at = (tail % size as u64) as usize;
            let byte = |i: usize| data[(at + i) % size];
            let len = usize::from(u16::from_le_bytes([byte(6), byte(7)]));
            if len < 8 || tail + len as u64 > head {
                break;
            }
            record.clear();
            record.extend((0..len).map(byte));
            each(&record);
            tail += len as u64;
        }
        self.tail().store(tail, Ordering::Release);
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// A record of the rings, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Record {
    Sample(OuterSample),
    /// A thread's new name; `exec` when a process executed a program.
    Comm {
        pid: u32,
        tid: u32,
        exec: bool,
        name: Vec<u8>,
        time: u64,
    },
    /// A process (not a thread) was created.
    Fork {
        pid: u32,
        ppid: u32,
        time: u64,
    },
    /// A process's main thread ended.
    Exit {
        pid: u32,
        time: u64,
    },
    /// Another thread of a process ended.
    ThreadExit {
        pid: u32,
        tid: u32,
        time: u64,
    },
    /// Samples the kernel could not put into a full ring.
    Lost {
        count: u64,
        time: u64,
    },
}

impl Record {
    fn time(&self) -> u64 {
        match *self {
            Record::Sample(s) => s.time,
            Record::Comm { time, .. }
            | Record::Fork { time, .. }
            | Record::Exit { time, .. }
            | Record::ThreadExit { time, .. }
            | Record::Lost { time, .. } => time,
        }
    }

    /// The process whose membership of the tree decides the record: a fork's parent.
    fn owner(&self) -> Option<u32> {
        match *self {
            Record::Sample(s) => Some(s.pid),
            Record::Comm { pid, .. }
            | Record::Exit { pid, .. }
            | Record::ThreadExit { pid, .. } => Some(pid),
            Record::Fork { ppid, .. } => Some(ppid),
            Record::Lost { .. } => None,
        }
    }
}

/// Rounds a record of a process not (yet) known to be the tree's waits for its fork record,
/// which another CPU's ring may hold and the previous round may have read just before it was
/// written. After that it is another process's, and dropped.
const WAIT_ROUNDS: u8 = 2;

/// The reader thread: drains every ring until told to stop, then once more.
fn read_rings(rings: &[Ring], stop: &AtomicBool, scope: Scope) -> OuterSamples {
    let me = std::process::id();
    let mut c = Collector::default();
    c.out.recorder = me;
    c.out.scope = scope;
    if scope == Scope::System {
        c.tree = Some(std::collections::HashSet::from([me]));
    }
    let mut waiting: Vec<(u8, Record)> = Vec::new();
    loop {
        let last = stop.load(Ordering::SeqCst);
        let mut round: Vec<(u8, Record)> = std::mem::take(&mut waiting);
        for ring in rings {
            ring.drain(|r| round.extend(decode(r).map(|rec| (0, rec))));
        }
        waiting = c.round(round, me, last);
        if last {
            break;
        }
        std::thread::sleep(DRAIN_EVERY);
    }
    c.finish()
}

/// Decodes one record of a ring; `None` for kinds the clock does not use.
fn decode(r: &[u8]) -> Option<Record> {
    let u16_at = |i: usize| {
        r.get(i..i + 2)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |i: usize| {
        r.get(i..i + 4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    let u64_at = |i: usize| {
        r.get(i..i + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    let kind = u32_at(0);
    let misc = u16_at(4);
    // Records other than samples end with the sample id: pid, tid, time (sample_id_all).
    let trailer_time = u64_at(r.len().saturating_sub(8));
    Some(match kind {
        RECORD_SAMPLE => {
            let (ip, pid, tid, time) = (u64_at(8), u32_at(16), u32_at(20), u64_at(24));
            // The call chain: its length, then entries; the first address after the user marker.
            let nr = usize::try_from(u64_at(32)).unwrap_or(0).min(r.len() / 8);
            let chain = (0..nr).map(|k| u64_at(40 + 8 * k));
            let user_ip = chain
                .skip_while(|&e| e != CONTEXT_USER)
                .find(|&e| e < CONTEXT_MAX)
                .filter(|_| crate::model::is_kernel_address(ip))
                .unwrap_or(0);
            Record::Sample(OuterSample {
                time,
                ip,
                pid,
                tid,
                user_ip,
            })
        }
        RECORD_LOST => Record::Lost {
            count: u64_at(16),
            time: trailer_time,
        },
        RECORD_COMM => {
            // The name, NUL-padded to 8 bytes, before the 16-byte sample id.
            let name = r.get(16..r.len().saturating_sub(16)).unwrap_or_default();
            let name = name.split(|&b| b == 0).next().unwrap_or_default();
            Record::Comm {
                pid: u32_at(8),
                tid: u32_at(12),
                exec: misc & MISC_COMM_EXEC != 0,
                name: name.to_vec(),
                time: trailer_time,
            }
        }
        RECORD_FORK | RECORD_EXIT => {
            // pid, ppid, tid, ptid, time.
            let (pid, ppid, tid, time) = (u32_at(8), u32_at(12), u32_at(16), u64_at(24));
            if pid != tid {
                // A thread's: its samples carry its process's pid. Its end flushes its last
                // samples (`Collector::thread_ends`).
                return (kind == RECORD_EXIT).then_some(Record::ThreadExit { pid, tid, time });
            }
            if kind == RECORD_FORK {
                Record::Fork { pid, ppid, time }
            } else {
                Record::Exit { pid, time }
            }
        }
        _ => return None,
    })
}

impl Collector {
    /// Whether `owner` is the tree's; a fork's child joins it here, and a pid the tree had
    /// that a process outside it now has leaves it.
    fn in_tree(&mut self, rec: &Record) -> bool {
        let Some(tree) = self.tree.as_mut() else {
            return true;
        };
        let Some(owner) = rec.owner() else {
            return true;
        };
        if let Record::Fork { pid, .. } = *rec {
            if tree.contains(&owner) {
                tree.insert(pid);
                return true;
            }
            tree.remove(&pid);
            return false;
        }
        tree.contains(&owner)
    }

    /// Handles one round's records (each with the rounds it has waited) in time order, and
    /// returns those that wait for another round.
    fn round(&mut self, mut records: Vec<(u8, Record)>, me: u32, last: bool) -> Vec<(u8, Record)> {
        records.sort_by_key(|(_, r)| r.time());
        let mut waiting = Vec::new();
        for (age, rec) in records {
            if !self.handle(&rec, me) && age < WAIT_ROUNDS && !last {
                waiting.push((age + 1, rec));
            }
        }
        waiting
    }

    /// Adds one record (those of `gmon record` itself, `me`, are skipped). `false`: the record
    /// is of a process not known to be the tree's.
    fn handle(&mut self, rec: &Record, me: u32) -> bool {
        if !self.in_tree(rec) {
            return false;
        }
        match rec {
            Record::Sample(s) => {
                if s.pid != me {
                    self.keep(*s);
                }
            }
            Record::Lost { count, .. } => self.out.lost += count,
            &Record::Comm {
                pid,
                tid,
                exec,
                ref name,
                time,
            } => {
                if pid == me {
                    // gmon record's own threads.
                } else if exec && pid == tid {
                    self.image_ends(pid, time, true);
                    self.out.tasks.push(TaskEvent::Exec {
                        pid,
                        comm: String::from_utf8_lossy(name).into_owned(),
                        time,
                    });
                } else if pid != tid && RUNTIME_THREADS.contains(&name.as_slice()) {
                    self.out
                        .tasks
                        .push(TaskEvent::RuntimeThread { pid, tid, time });
                }
            }
            &Record::Fork { pid, ppid, time } => {
                self.image_ends(pid, time, true);
                self.out.tasks.push(TaskEvent::Fork { pid, ppid, time });
            }
            &Record::ThreadExit { pid, tid, .. } => self.thread_ends(pid, tid),
            &Record::Exit { pid, time } => {
                if pid != me {
                    self.image_ends(pid, time, false);
                    self.out.tasks.push(TaskEvent::Exit { pid, time });
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pid: u32, time: u64) -> OuterSample {
        OuterSample {
            time,
            ip: 0x1000,
            pid,
            tid: pid,
            user_ip: 0,
        }
    }

    #[test]
    fn a_clock_of_every_cpu_keeps_the_tree_only_and_waits_for_a_late_fork_record() {
        let me = 100;
        let mut c = Collector {
            tree: Some(std::collections::HashSet::from([me])),
            ..Collector::default()
        };
        let s = |pid, time| (0, Record::Sample(sample(pid, time)));
        let fork = |pid, ppid, time| (0, Record::Fork { pid, ppid, time });
        // Round 1: the command (200) forked by gmon record; another user's process (300) and
        // the idle task; a sample of 201 whose fork record another ring has not given yet.
        let waiting = c.round(
            vec![
                s(200, 20),
                fork(200, me, 10),
                s(300, 15),
                s(0, 16),
                s(201, 40),
            ],
            me,
            false,
        );
        // Round 2: 201's fork record (by 200, before its sample); 300 is still nobody's.
        let waiting = c.round(
            [waiting, vec![fork(201, 200, 30), s(201, 50)]].concat(),
            me,
            false,
        );
        // Round 3: 200 exits; its address space is torn down after; then its pid is given to a
        // process outside the tree, whose samples are not kept.
        let waiting = c.round(
            [
                waiting,
                vec![
                    (0, Record::Exit { pid: 200, time: 60 }),
                    s(200, 61),
                    fork(200, 1, 70),
                    s(200, 71),
                ],
            ]
            .concat(),
            me,
            false,
        );
        let waiting = c.round(waiting, me, false);
        let waiting = c.round(waiting, me, true);
        assert!(waiting.is_empty());
        let out = c.finish();
        let mut kept: Vec<(u32, u64)> = out.samples.iter().map(|s| (s.pid, s.time)).collect();
        kept.sort_unstable();
        assert_eq!(kept, vec![(200, 20), (200, 61), (201, 40), (201, 50)]);
        assert_eq!(
            out.tasks,
            vec![
                TaskEvent::Fork {
                    pid: 200,
                    ppid: me,
                    time: 10
                },
                TaskEvent::Fork {
                    pid: 201,
                    ppid: 200,
                    time: 30
                },
                TaskEvent::Exit { pid: 200, time: 60 },
            ]
        );
    }

    #[test]
    fn a_long_images_threads_keep_their_starts_and_ends() {
        // Process 7 runs 3 s. After its first 2 s, its main thread's samples are the middle
        // (the image's last TAIL kept); thread 8, started at 2.5 s, keeps its first 20 ms and,
        // once its exit record comes, its last THREAD_TAIL; what lies between is the middle.
        let mut c = Collector::default();
        let ms = 1_000_000u64;
        let at = |tid, time| {
            (
                0,
                Record::Sample(OuterSample {
                    tid,
                    ..sample(7, time)
                }),
            )
        };
        let mut records = vec![at(7, 0)];
        records.extend((2_500..2_600).map(|t| at(8, t * ms)));
        records.push((
            0,
            Record::ThreadExit {
                pid: 7,
                tid: 8,
                time: 2_600 * ms,
            },
        ));
        let rest = c.round(records, 1, true);
        assert!(rest.is_empty());
        let kept_of_8 = |c: &Collector| c.out.samples.iter().filter(|s| s.tid == 8).count();
        // Its first 20 ms (2500..2519) and its last 4 (2596..2599).
        assert_eq!(kept_of_8(&c), 20 + THREAD_TAIL);
        // The 76 between went to the image's tail, kept at its end while it holds so few.
        let out = c.finish();
        assert_eq!(out.samples.iter().filter(|s| s.tid == 8).count(), 100);
        assert!(out.skipped.is_empty());
    }

    #[test]
    fn an_inherited_clock_keeps_every_record_in_time_order() {
        let mut c = Collector::default();
        let rest = c.round(
            vec![
                (0, Record::Sample(sample(7, 30))),
                (
                    0,
                    Record::Comm {
                        pid: 7,
                        tid: 7,
                        exec: true,
                        name: b"true".to_vec(),
                        time: 20,
                    },
                ),
                (0, Record::Sample(sample(7, 10))),
            ],
            1,
            false,
        );
        assert!(rest.is_empty());
        let out = c.finish();
        assert_eq!(out.samples.len(), 2);
        assert_eq!(
            out.tasks,
            vec![TaskEvent::Exec {
                pid: 7,
                comm: "true".into(),
                time: 20
            }]
        );
    }

    #[test]
    fn a_long_image_keeps_its_first_two_seconds_and_its_end_and_counts_its_middle() {
        let mut c = Collector::default();
        let ms = 1_000_000;
        c.image_ends(7, 0, true);
        // 10 s at one sample per ms.
        for t in 0..10_000 {
            c.keep(sample(7, t * ms));
        }
        c.image_ends(7, 10_000 * ms, false);
        // A short process alongside keeps everything.
        for t in 0..50 {
            c.keep(sample(8, t * ms));
        }
        let out = c.finish();
        let of = |pid| out.samples.iter().filter(|s| s.pid == pid).count();
        assert_eq!(of(7), 2000 + TAIL);
        assert_eq!(of(8), 50);
        assert_eq!(
            out.skipped,
            vec![Skipped {
                pid: 7,
                from: 2000 * ms,
                to: (10_000 - TAIL as u64 - 1) * ms,
                count: 8000 - TAIL as u64,
            }]
        );
        // The last samples are the image's last.
        assert!(
            out.samples
                .iter()
                .any(|s| s.pid == 7 && s.time == 9_999 * ms)
        );
    }
}
