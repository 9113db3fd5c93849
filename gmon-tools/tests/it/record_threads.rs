//! `gmon record` and the ends of threads: a program whose last thread is not `main` ends as it
//! does without the runtime (spec/runtime.md §4.5, "The last program thread").

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::record::{compile_c, gmon_cmd, text};
use crate::runtime_common::read_sidecar;

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
    run_within(cmd, Duration::from_secs(20))
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
    let plain = run_within(Command::new(&prog), Duration::from_secs(20));
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
