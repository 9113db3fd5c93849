//! Integration tests of the runtime: profil/pcsample semantics, the handler's hygiene, accuracy,
//! threads, fork and exec.
//!
//! Tests that start sampling run one at a time (the `serial()` lock): the runtime is
//! process-global. Timing-based tests measure each thread's CPU time with
//! `CLOCK_THREAD_CPUTIME_ID` and compare the samples with it, so a loaded machine changes how
//! long they take but not what they expect. Their bounds are several standard deviations wide
//! (binomial sampling error, stated at each test) and each is retried up to 3 times, so a
//! spurious failure needs three unlucky runs in a row.

#![deny(clippy::undocumented_unsafe_blocks)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::read_sidecar;
use gmon_format::sidecar::{Sidecar, StackKind};
use gmon_write::{ProfilBuffer, Profiler, Recorded, SampleBuffer, Unwind};

// ---------------------------------------------------------------------------------------------
// Helpers

/// Counts allocations made by threads that set `WATCH`.
struct CountingAllocator;

thread_local! {
    static WATCH: Cell<bool> = const { Cell::new(false) };
}
static WATCHED_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn note_allocation() {
    if WATCH.try_with(|w| w.get()).unwrap_or(false) {
        WATCHED_ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: forwards to the system allocator.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's layout, passed on unchanged (GlobalAlloc::alloc's contract).
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note_allocation();
        // SAFETY: `ptr` came from this allocator, which is the system's, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: `ptr` came from this allocator, which is the system's, with this layout.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn gettid() -> u32 {
    // SAFETY: no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// Defines a function that burns `cpu` of this thread's CPU time in its own loop (so its
/// samples land in its own code) and returns the CPU time it really used. The loop uses only
/// operators on integers and a `while`, which stay inline even in unoptimised test builds
/// (iterator and `black_box` calls would put the samples in other functions).
macro_rules! burner {
    ($name:ident, $seed:literal) => {
        #[inline(never)]
        fn $name(cpu: Duration) -> Duration {
            let start = thread_cpu();
            let mut x: u64 = $seed;
            loop {
                let mut i = 0u32;
                while i < 200_000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    i += 1;
                }
                let used = thread_cpu() - start;
                if used >= cpu {
                    black_box(x);
                    return used;
                }
            }
        }
    };
}

burner!(burn_sixty, 6364136223846793005);
burner!(burn_thirty, 2862933555777941757);
burner!(burn_ten, 3202034522624059733);
burner!(burn_other, 1442695040888963407);

/// Runs `f` up to 3 times until it returns Ok; panics with every failure message otherwise.
fn with_retries(what: &str, f: impl Fn() -> Result<(), String>) {
    let mut errors = Vec::new();
    for _ in 0..3 {
        match f() {
            Ok(()) => return,
            Err(e) => errors.push(e),
        }
    }
    panic!("{what} failed 3 times:\n{}", errors.join("\n"));
}

/// (link-time start, size) of the function whose symbol name contains `name`.
fn symbol_range(name: &str) -> (u64, u64) {
    let data = std::fs::read("/proc/self/exe").expect("read /proc/self/exe");
    let elf = goblin::elf::Elf::parse(&data).expect("parse own executable");
    elf.syms
        .iter()
        .find(|s| {
            s.st_size > 0
                && elf
                    .strtab
                    .get_at(s.st_name)
                    .is_some_and(|n| n.contains(name))
        })
        .map(|s| (s.st_value, s.st_size))
        .unwrap_or_else(|| panic!("no symbol {name}"))
}

/// Ticks whose PC falls in the function `name` of this executable.
fn samples_in(sidecar: &Sidecar, name: &str) -> u64 {
    let (start, size) = symbol_range(name);
    sidecar
        .pc_samples
        .iter()
        .filter(|s| {
            sidecar
                .resolve(s.pc)
                .is_some_and(|(o, a)| o.is_main() && a >= start && a < start + size)
        })
        .map(|s| s.count)
        .sum()
}

// ---------------------------------------------------------------------------------------------
// profil / pcsample semantics (no signals)

#[test]
fn profil_bin_formula_scale_and_offset() {
    let mut bins = [0u16; 64];
    let h = ProfilBuffer::new(&mut bins, 0x4000, 0x10000);
    assert_eq!(h.bin_of(0x4000), Some(0));
    assert_eq!(h.bin_of(0x4003), Some(1));
    assert_eq!(h.bin_of(0x3fff), None);
    assert_eq!(h.bin_of(0x4000 + 128), None);
    let h = ProfilBuffer::new(&mut bins, 0x4000, 0x4000); // one bin per 8 bytes
    assert_eq!(h.bin_of(0x4000 + 7), Some(0));
    assert_eq!(h.bin_of(0x4000 + 8), Some(1));
    // An odd scale uses ((pc - offset) / 2) * scale / 65536, truncated.
    let h = ProfilBuffer::new(&mut bins, 0, 0x6000);
    for pc in [0u64, 1, 2, 10, 11, 100, 101] {
        let want = ((pc / 2) * 0x6000 / 65536) as usize;
        assert_eq!(h.bin_of(pc), Some(want), "pc {pc}");
    }
    assert_eq!(h.record(10, 1), Recorded::Counted);
    let _ = h; // end the borrow of the bins
    assert_eq!(bins[(5 * 0x6000 / 65536) as usize], 1);
}

#[test]
fn profil_off_and_empty() {
    let mut bins = [0u16; 4];
    for scale in [0, 1] {
        let h = ProfilBuffer::new(&mut bins, 0, scale);
        assert!(!h.is_on());
        assert_eq!(h.record(0, 1), Recorded::Outside);
    }
    let mut empty: [u16; 0] = [];
    let h = ProfilBuffer::new(&mut empty, 0, 0x10000);
    assert!(!h.is_on());
    assert_eq!(h.record(0, 1), Recorded::Outside);
    assert_eq!(bins, [0; 4]);
}

#[test]
fn profil_saturates_never_wraps() {
    let mut bins = [u16::MAX - 2, 0];
    let h = ProfilBuffer::new(&mut bins, 0, 0x10000);
    assert_eq!(h.record(0, 2), Recorded::Counted);
    assert_eq!(h.get(0), Some(u16::MAX));
    assert_eq!(h.record(0, 5), Recorded::Saturated);
    assert_eq!(h.record(1, 1), Recorded::Saturated);
    assert_eq!(h.get(0), Some(u16::MAX));
    assert_eq!(h.overflows(), 6);
    assert_eq!(h.saturated_bins(), 1);
    assert_eq!(h.record(2, 1), Recorded::Counted);
    let _ = h; // end the borrow of the bins
    assert_eq!(bins, [u16::MAX, 1]);
}

#[test]
fn pcsample_stops_when_full_and_counts_since_last_call() {
    let mut raw = [0u64; 3];
    let b = SampleBuffer::new(&mut raw);
    assert_eq!(b.take_count(), 0);
    assert!(b.record(0xa));
    assert!(b.record(0xb));
    assert_eq!(b.take_count(), 2);
    assert!(b.record(0xc));
    assert!(!b.record(0xd));
    assert!(b.is_full());
    assert_eq!(b.take_count(), 1);
    assert_eq!(b.take_count(), 0);
    assert_eq!(b.lost(), 1);
    assert_eq!(b.get(2), Some(0xc));
    assert_eq!(b.get(3), None);
    let _ = b; // end the borrow of the buffer
    assert_eq!(raw, [0xa, 0xb, 0xc]);
}

// ---------------------------------------------------------------------------------------------
// Live sampling

#[test]
fn profil_live_counts_into_callers_bins() {
    let _s = serial();
    let (start, size) = symbol_range("burn_ten");
    let objects_bias = {
        // The runtime address of burn_ten minus its link-time address.
        (burn_ten as *const () as u64).wrapping_sub(start)
    };
    let mut bins = vec![0u16; (size as usize).div_ceil(2)];
    let h = ProfilBuffer::new(&mut bins, start.wrapping_add(objects_bias), 0x10000);
    let used = h
        .profile(1000, || burn_ten(Duration::from_millis(300)))
        .expect("profil starts");
    let total: u64 = (0..h.len()).filter_map(|i| h.get(i)).map(u64::from).sum();
    // ~300 ticks expected at 1 kHz; the loop's vDSO clock reads fall outside.
    let expected = used.as_secs_f64() * 1000.0;
    assert!(
        total as f64 > 0.7 * expected,
        "{total} ticks in burn_ten, expected ~{expected}"
    );
}

#[test]
fn pcsample_live_stores_pcs() {
    let _s = serial();
    let mut raw = vec![0u64; 50];
    let b = SampleBuffer::new(&mut raw);
    b.sample(1000, || burn_other(Duration::from_millis(200)))
        .expect("pcsample starts");
    assert!(b.is_full(), "stored {}", b.stored());
    assert!(b.lost() > 0);
    assert_eq!(b.take_count(), 50);
    assert!((0..50).filter_map(|i| b.get(i)).all(|pc| pc != 0));
}

/// Counts allocations on a sampled thread while it burns CPU under `unwind`; returns the
/// snapshot taken afterwards.
fn handler_allocations(unwind: Unwind) -> gmon_write::Snapshot {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("gmon.out");
    let guard = Profiler::new()
        .hz(1000)
        .output(&out)
        .stacks(true)
        .unwind(unwind)
        .start()
        .expect("start");
    let (tid, allocations) = std::thread::spawn(|| {
        // Let the watcher arm this thread's timer, then count every allocation on this thread
        // while it burns CPU: only the signal handler could allocate here.
        std::thread::sleep(Duration::from_millis(50));
        WATCHED_ALLOCATIONS.store(0, Ordering::SeqCst);
        WATCH.with(|w| w.set(true));
        burn_other(Duration::from_millis(300));
        WATCH.with(|w| w.set(false));
        (gettid(), WATCHED_ALLOCATIONS.load(Ordering::SeqCst))
    })
    .join()
    .expect("thread");
    let snap = guard.snapshot().expect("running");
    drop(guard);
    let on_thread = snap
        .sidecar
        .threads
        .iter()
        .find(|t| t.tid == tid)
        .map_or(0, |t| t.samples);
    assert!(
        on_thread > 100,
        "only {on_thread} samples on the watched thread"
    );
    assert_eq!(allocations, 0, "the signal handler allocated ({unwind:?})");
    snap
}

#[test]
fn handler_does_not_allocate() {
    let _s = serial();
    let snap = handler_allocations(Unwind::FramePointers);
    let sidecar = &snap.sidecar;
    assert!((0..sidecar.stacks.len()).all(|i| sidecar.stack_kind(i) != StackKind::COMPLETE));
}

#[test]
fn handler_does_not_allocate_when_unwinding_dwarf() {
    // The handler only copies registers and the stack into the ring; the unwinder thread,
    // which allocates, is another thread. Complete stacks show the snapshots were unwound.
    let _s = serial();
    let snap = handler_allocations(Unwind::Dwarf);
    let sidecar = &snap.sidecar;
    let complete: u64 = (0..sidecar.stacks.len())
        .filter(|&i| sidecar.stack_kind(i) == StackKind::COMPLETE)
        .map(|i| sidecar.stacks[i].count)
        .sum();
    assert!(complete > 100, "only {complete} ticks with complete stacks");
}

#[test]
fn split_60_30_10_within_3_points() {
    // n ≈ 2000 ticks: the binomial standard error of a 60 % share is 1.1 points, so ±3 points
    // is 2.7 σ (≈ 0.7 % false failures per attempt, ~4e-7 after 3 attempts).
    let _s = serial();
    with_retries("60/30/10 split", || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = dir.path().join("gmon.out");
        let guard = Profiler::new()
            .hz(1000)
            .output(&out)
            .start()
            .map_err(|e| e.to_string())?;
        let used = [
            burn_sixty(Duration::from_millis(1200)),
            burn_thirty(Duration::from_millis(600)),
            burn_ten(Duration::from_millis(200)),
        ];
        guard.stop().map_err(|e| e.to_string())?;
        let sidecar = read_sidecar(&out);
        let got = [
            samples_in(&sidecar, "burn_sixty"),
            samples_in(&sidecar, "burn_thirty"),
            samples_in(&sidecar, "burn_ten"),
        ];
        let total_used: f64 = used.iter().map(Duration::as_secs_f64).sum();
        let total_got: u64 = got.iter().sum();
        if total_got < 1000 {
            return Err(format!("only {total_got} samples"));
        }
        for (i, name) in ["sixty", "thirty", "ten"].iter().enumerate() {
            let want = 100.0 * used[i].as_secs_f64() / total_used;
            let have = 100.0 * got[i] as f64 / total_got as f64;
            if (want - have).abs() > 3.0 {
                return Err(format!(
                    "{name}: {have:.1} % sampled vs {want:.1} % of CPU; {got:?}"
                ));
            }
        }
        eprintln!("split: samples {got:?}, CPU {used:?}");
        Ok(())
    });
}

#[test]
fn four_threads_record_four_times_the_samples() {
    // Expected ≈ 4 × 0.5 s × 1000 Hz = 2000 ticks; Poisson-like noise is ~2 %, and ±5 % also
    // absorbs the ≤ 1 tick per thread lost at the start and end of the measured interval.
    let _s = serial();
    with_retries("4-thread sample count", || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = dir.path().join("gmon.out");
        let guard = Profiler::new()
            .hz(1000)
            .output(&out)
            .start()
            .map_err(|e| e.to_string())?;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    // Give the watcher (10 ms period) time to arm every thread's timer.
                    std::thread::sleep(Duration::from_millis(60));
                    barrier.wait();
                    let used = burn_other(Duration::from_millis(500));
                    (gettid(), used)
                })
            })
            .collect();
        let results: Vec<(u32, Duration)> = handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect();
        let snap = guard.snapshot().ok_or("no snapshot")?;
        drop(guard);
        let cpu: f64 = results.iter().map(|(_, d)| d.as_secs_f64()).sum();
        let samples: u64 = results
            .iter()
            .map(|(tid, _)| {
                snap.sidecar
                    .threads
                    .iter()
                    .find(|t| t.tid == *tid)
                    .map_or(0, |t| t.samples)
            })
            .sum();
        let expected = cpu * 1000.0;
        let ratio = samples as f64 / expected;
        eprintln!("threads: {samples} samples for {cpu:.3} s of CPU (ratio {ratio:.3})");
        if (ratio - 1.0).abs() > 0.05 {
            return Err(format!(
                "{samples} samples, expected {expected:.0} (ratio {ratio:.3})"
            ));
        }
        Ok(())
    });
}

#[test]
fn fork_child_writes_its_own_file() {
    let _s = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("prof.out");
    let guard = Profiler::new()
        .hz(1000)
        .output(&out)
        .start()
        .expect("start");
    burn_other(Duration::from_millis(400));
    // SAFETY: the child only burns CPU, writes its profile and _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        burn_ten(Duration::from_millis(150));
        let code = match gmon_write::capi::gmon_stop() {
            0 => 0,
            _ => 1,
        };
        // SAFETY: leave without running the parent's atexit handlers or test harness.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status}"
    );
    burn_other(Duration::from_millis(100));
    let written = guard.stop().expect("parent writes");
    assert_eq!(written.gmon.as_deref(), Some(out.as_path()));

    let child_out = dir.path().join(format!("prof.out.{pid}"));
    assert!(
        child_out.exists(),
        "child file {} missing",
        child_out.display()
    );
    let child = read_sidecar(&child_out);
    let parent = read_sidecar(&out);
    assert_eq!(child.pid, pid as u32);
    assert_eq!(parent.pid, std::process::id());
    // The child started from zero: its ~150 ticks, not the parent's 400 before the fork.
    assert!(
        child.counters.samples > 50 && child.counters.samples < 350,
        "child samples {}",
        child.counters.samples
    );
    assert!(
        parent.counters.samples > 400,
        "parent samples {}",
        parent.counters.samples
    );
    assert!(child.matches_gmon(&std::fs::read(&child_out).expect("child gmon")));
    assert!(parent.matches_gmon(&std::fs::read(&out).expect("parent gmon")));
}

#[test]
fn exec_while_profiled_is_not_killed_by_a_tick() {
    let _s = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let guard = Profiler::new()
        .hz(5000)
        .output(dir.path().join("gmon.out"))
        .start()
        .expect("start");
    let sh = c"/bin/sh";
    let script = c"i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";
    for round in 0..10 {
        // SAFETY: the child burns CPU (so its re-armed timer fires often) and execs at once.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            burn_ten(Duration::from_millis(20));
            let argv = [
                c"sh".as_ptr(),
                c"-c".as_ptr(),
                script.as_ptr(),
                std::ptr::null(),
            ];
            // SAFETY: valid NUL-terminated arguments.
            unsafe {
                libc::execv(sh.as_ptr(), argv.as_ptr());
                libc::_exit(127);
            }
        }
        let mut status = 0;
        // SAFETY: waiting for our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "round {round}: child status {status:#x} (signal {})",
            if libc::WIFSIGNALED(status) {
                libc::WTERMSIG(status)
            } else {
                0
            }
        );
    }
    drop(guard);
}

#[test]
fn failed_exec_keeps_profiling() {
    // The exec wrappers disarm every timer before the real call; when the exec fails the
    // program goes on and so must sampling.
    let _s = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let guard = Profiler::new()
        .hz(1000)
        .output(dir.path().join("gmon.out"))
        .start()
        .expect("start");
    burn_other(Duration::from_millis(50));
    let argv = [c"nope".as_ptr(), std::ptr::null()];
    // SAFETY: valid NUL-terminated arguments; the path does not exist, so execv returns.
    let r = unsafe { libc::execv(c"/nonexistent/gmon-write-test".as_ptr(), argv.as_ptr()) };
    let errno = std::io::Error::last_os_error().raw_os_error();
    assert_eq!(
        (r, errno),
        (-1, Some(libc::ENOENT)),
        "errno is the exec's, not the re-arm's"
    );
    let before = guard.snapshot().expect("running").sidecar.counters.samples;
    let used = burn_other(Duration::from_millis(200));
    let after = guard.snapshot().expect("running").sidecar.counters.samples;
    drop(guard);
    let expected = used.as_secs_f64() * 1000.0;
    assert!(
        (after - before) as f64 > 0.7 * expected,
        "{} ticks after the failed exec, expected ~{expected:.0}",
        after - before
    );
}

/// The program's own SIGPROF handler and ITIMER_PROF run next to the profiler, and the
/// sample signal's disposition is the program's as far as it can see: what it sets while we own
/// the signal is what it reads back, and is installed for real when profiling stops. (Before
/// the redesign, starting the profiler with a SIGPROF handler present was refused.)
#[test]
fn program_sigprof_and_the_sample_signal_stay_the_programs() {
    let _s = serial();
    static HITS: AtomicUsize = AtomicUsize::new(0);
    extern "C" fn theirs(_: libc::c_int) {
        HITS.fetch_add(1, Ordering::SeqCst);
    }
    extern "C" fn their_rt(_: libc::c_int) {}
    let sample_sig = libc::SIGRTMAX() - 1;
    let dir = tempfile::tempdir().expect("tempdir");
    // SAFETY: installing and later restoring dispositions and ITIMER_PROF in this serialised
    // test; every structure is local.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = theirs as *const () as libc::sighandler_t;
        let mut old_prof: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPROF, &act, &mut old_prof);
        let tick = libc::timeval {
            tv_sec: 0,
            tv_usec: 10_000,
        };
        let it = libc::itimerval {
            it_interval: tick,
            it_value: tick,
        };
        libc::setitimer(libc::ITIMER_PROF, &it, std::ptr::null_mut());
        let guard = Profiler::new()
            .output(dir.path().join("p.out"))
            .start()
            .expect("a SIGPROF handler and ITIMER_PROF are the program's business");

        let mut seen: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sample_sig, std::ptr::null(), &mut seen);
        assert_eq!(
            seen.sa_sigaction,
            libc::SIG_DFL,
            "the program's view starts as found"
        );
        act.sa_sigaction = their_rt as *const () as libc::sighandler_t;
        assert_eq!(libc::sigaction(sample_sig, &act, std::ptr::null_mut()), 0);
        libc::sigaction(sample_sig, std::ptr::null(), &mut seen);
        assert_eq!(
            seen.sa_sigaction, act.sa_sigaction,
            "reads back what it set"
        );

        HITS.store(0, Ordering::SeqCst);
        let used = burn_other(Duration::from_millis(300));
        let hits = HITS.load(Ordering::SeqCst);
        let written = guard.stop().expect("written");
        let zero: libc::itimerval = std::mem::zeroed();
        libc::setitimer(libc::ITIMER_PROF, &zero, std::ptr::null_mut());
        libc::sigaction(libc::SIGPROF, &old_prof, std::ptr::null_mut());

        // A loaded machine alone costs ITIMER_PROF up to half of its ticks (a pending SIGPROF
        // absorbs the expirations behind it: 15 of 30 were seen), and the timer counts the
        // runtime's threads too; the sampler's own 1 kHz ticks handed to this handler would
        // make it about eleven times as many, and a sampler that steals SIGPROF none.
        let expected_hits = used.as_secs_f64() * 100.0;
        assert!(
            (hits as f64) > 0.25 * expected_hits && (hits as f64) < 2.0 * expected_hits,
            "the program's SIGPROF handler saw {hits} ticks in {used:?} at 100 Hz"
        );
        let expected = used.as_secs_f64() * 1000.0;
        assert!(
            (written.samples as f64) > 0.7 * expected,
            "{} samples in {used:?} at 1 kHz",
            written.samples
        );
        // Stopped: the disposition the program set is the real one now.
        libc::sigaction(sample_sig, std::ptr::null(), &mut seen);
        assert_eq!(seen.sa_sigaction, act.sa_sigaction);
        act.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sample_sig, &act, std::ptr::null_mut());
    }
}

#[test]
fn gmon_out_prefix_names_the_file_with_the_pid() {
    let _s = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let prefix = dir.path().join("myprof");
    // SAFETY: tests touching the environment are serialised.
    unsafe { std::env::set_var("GMON_OUT_PREFIX", &prefix) };
    let res = Profiler::new().hz(1000).start().and_then(|g| {
        burn_other(Duration::from_millis(50));
        g.stop()
    });
    // SAFETY: as above.
    unsafe { std::env::remove_var("GMON_OUT_PREFIX") };
    let written = res.expect("written");
    let want = dir.path().join(format!("myprof.{}", std::process::id()));
    assert_eq!(written.gmon.as_deref(), Some(want.as_path()));
    let bytes = std::fs::read(&want).expect("gmon.out written");
    assert_eq!(&bytes[..4], b"gmon");
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp.")), "{names:?}");
}

#[test]
fn gmon_out_histogram_is_link_time_and_matches_samples() {
    let _s = serial();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("gmon.out");
    let guard = Profiler::new()
        .hz(1000)
        .output(&out)
        .start()
        .expect("start");
    burn_sixty(Duration::from_millis(200));
    guard.stop().expect("stop");
    let bytes = std::fs::read(&out).expect("gmon.out");
    let profile = gmon_format::read(&bytes).expect("gmon_format reads it");
    let sidecar = read_sidecar(&out);
    let main = sidecar.main_object().expect("main object");
    // Link-time addresses: the histogram covers the main executable's text minus the bias. This
    // test program's text is megabytes, so the histogram is written as the cells of its fixed
    // grid that hold a sample (spec/runtime.md §1): 2 KiB of text each from the text's start.
    let text_lo = main.ranges.iter().map(|r| r.start).min().expect("range") - main.load_bias;
    let hists: Vec<_> = profile.histograms().collect();
    assert!(!hists.is_empty(), "no histogram");
    for h in &hists {
        assert_eq!((h.low_pc - (text_lo & !3)) % 0x800, 0, "{:#x}", h.low_pc);
        assert_eq!(h.high_pc - h.low_pc, 4 * h.bins.len() as u64);
        assert_eq!(h.prof_rate.0, 1000);
    }
    let (start, size) = symbol_range("burn_sixty");
    assert!(
        hists
            .iter()
            .any(|h| h.low_pc <= start && start < h.high_pc && h.total() > 0),
        "burn_sixty at {start:#x}+{size:#x} in no sampled cell"
    );
    // Every main-executable tick inside the histogram range is in a bin.
    let in_main: u64 = sidecar
        .pc_samples
        .iter()
        .filter(|s| sidecar.resolve(s.pc).is_some_and(|(o, _)| o.is_main()))
        .map(|s| s.count)
        .sum();
    assert_eq!(hists.iter().map(|h| h.total()).sum::<u64>(), in_main);
    assert_eq!(
        sidecar.counters.samples - sidecar.counters.outside_histogram,
        in_main
    );
}
