//! `gmon record` and the ends of threads: a program whose last thread is not `main` ends as it
//! does without the runtime (spec/runtime.md §4.5, "The last program thread"); short threads
//! are sampled for their CPU time, and the clock that sampled them is reported (§4.1, "Clock").

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::record::{compile_c, gmon_cmd, text};
use crate::runtime_common::read_sidecar;
use gmon_format::sidecar::ClockKind;

/// `main` starts two workers of 0.2 s of CPU each and calls `pthread_exit`: the process ends
/// when the last worker does, with status 0.
const MAIN_LEAVES_FIRST: &str = r#"
#include <pthread.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
__attribute__((noinline)) static void *worker(void *arg) {
    double t0 = cpu();
    unsigned long x = 88172645463325252UL + (unsigned long)arg;
    while (cpu() - t0 < 0.2)
        for (int i = 0; i < 100000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    sink = x;
    return 0;
}
int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void *)i);
    pthread_exit(0);
}
"#;

/// Runs `cmd`, killing it (and failing) when it has not ended within `limit`.
fn run_within(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let start = Instant::now();
    let (done, waited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match waited.recv_timeout(limit) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            // SAFETY: kill takes a pid and a signal; the child is ours and not yet reaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            let out = waited.recv().expect("wait").expect("wait");
            panic!(
                "still running after {:?}, killed:\n{}",
                start.elapsed(),
                text(&out)
            );
        }
    }
}

fn record_within(out: &Path, prog: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = gmon_cmd();
    cmd.args(["record", "-o"]).arg(out).arg("--").arg(prog);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_within(cmd, Duration::from_secs(120))
}

#[test]
fn a_program_whose_main_calls_pthread_exit_ends_with_its_last_thread() {
    // Before, the runtime's own threads kept the process alive after its last thread ended
    // (they block every signal, so SIGTERM did not end it either).
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "leaves",
        MAIN_LEAVES_FIRST,
        &["-O1", "-pthread"],
    );
    let plain = run_within(Command::new(&prog), Duration::from_secs(120));
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain));

    let out = dir.path().join("leaves.gmon");
    let run = record_within(&out, &prog, &[]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(out.is_file(), "no profile: {}", text(&run));
    let sidecar = read_sidecar(&out);
    // The executable is named although its main thread was gone when the profile was written.
    let exe = &sidecar.objects.first().expect("objects").path;
    assert!(exe.ends_with("/leaves"), "{:?}", sidecar.objects);
    assert!(
        sidecar.counters.samples >= 300,
        "{:?}\n{}",
        sidecar.counters,
        text(&run)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("worker"), "{stderr}");
}

/// 500 threads of about 2 ms of CPU each, started one after another: most end within one
/// kernel tick (4 ms at CONFIG_HZ=250).
const SHORT_THREADS: &str = r#"
#include <pthread.h>
static volatile long sink;
static void *work(void *arg) {
    (void)arg;
    for (long i = 0; i < 2000000L; i++) sink += i;
    return 0;
}
int main(void) {
    pthread_t t[500];
    for (int i = 0; i < 500; i++) pthread_create(&t[i], 0, work, 0);
    for (int i = 0; i < 500; i++) pthread_join(t[i], 0);
    return 0;
}
"#;

/// The summary's clock line (`  clock: ...`).
fn clock_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("  clock: "))
        .unwrap_or_else(|| panic!("no clock line in:\n{stderr}"))
}

/// Records the short threads at 1 kHz: (samples, CPU seconds, stderr, sidecar).
fn record_short_threads(
    dir: &Path,
    env: &[(&str, &str)],
) -> (u64, f64, String, gmon_format::Sidecar) {
    let prog = compile_c(dir, "short", SHORT_THREADS, &["-O1", "-pthread"]);
    let out = dir.join("short.gmon");
    let run = record_within(&out, &prog, env);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    let (samples, cpu, _) = crate::record::summary_numbers(&stderr);
    (samples, cpu, stderr, read_sidecar(&out))
}

#[test]
fn short_threads_are_sampled_for_their_cpu_time_with_the_task_clock() {
    // Before, each thread's POSIX CPU timer was checked only at the kernel's tick: most threads
    // ended before their first signal and the samples covered 2 % to 36 % of the CPU time.
    let dir = tempfile::tempdir().expect("tempdir");
    let (samples, cpu, stderr, sidecar) = record_short_threads(dir.path(), &[]);
    let clock = sidecar.clock.expect("the runtime reports its clock");
    if clock.clock != ClockKind::PERF_TASK_CLOCK {
        crate::runtime_common::skip(
            "short_threads_are_sampled_for_their_cpu_time_with_the_task_clock",
            &format!(
                "the kernel refused the perf task clock (errno {}): {}",
                clock.refused_errno,
                clock_line(&stderr)
            ),
        );
        return;
    }
    assert!(clock_line(&stderr).contains("perf task clock"), "{stderr}");
    let due = cpu * 1000.0;
    assert!(
        samples as f64 >= 0.8 * due,
        "{samples} samples for {cpu} s of CPU at 1000 Hz:\n{stderr}"
    );
    // Each clock's first period is drawn at random, so a thread shorter than a period is
    // sampled with the probability its length gives. With the same phase for all, 35 % of
    // the CPU time was due from threads never sampled; what is left is their start-up.
    assert!(
        (clock.unsampled as f64) < 0.1 * due,
        "{} due while no clock ran:\n{stderr}",
        clock.unsampled
    );
    // Below 90 % (the sampler's own handling in a debug build), the summary says so.
    if (samples as f64) < 0.9 * due {
        assert!(stderr.contains("gmon record: samples cover "), "{stderr}");
    }
}

#[test]
fn the_timer_clock_is_used_and_reported_when_asked() {
    // GMON_RECORD_CLOCK=timer is the clock a refused task clock falls back to: the summary
    // names it, the CPU time of threads that ended unsampled is counted in the sidecar, and a
    // coverage below 90 % is said in one line.
    let dir = tempfile::tempdir().expect("tempdir");
    let (samples, cpu, stderr, sidecar) =
        record_short_threads(dir.path(), &[("GMON_RECORD_CLOCK", "timer")]);
    let clock = sidecar.clock.expect("the runtime reports its clock");
    assert_eq!(clock.clock, ClockKind::THREAD_TIMER, "{stderr}");
    assert!(clock_line(&stderr).contains("thread CPU timer"), "{stderr}");
    let due = cpu * 1000.0;
    // Nothing vanishes: what was not sampled is counted as due from unsampled threads.
    assert!(
        (samples + clock.unsampled) as f64 >= 0.8 * due,
        "{samples} samples + {} unsampled for {cpu} s of CPU:\n{stderr}",
        clock.unsampled
    );
    if (samples as f64) < 0.9 * due {
        assert!(stderr.contains("gmon record: samples cover "), "{stderr}");
    }
}
