//! `gmon record` on a small C program built without -pg: GNU gprof reads the profile unchanged
//! and puts the right functions on top; `gmon gprof` prints the same flat profile.
//!
//! The runtime library is the one `cargo build` puts next to the `gmon` binary, when it is
//! there and newer than gmon-write's sources. Otherwise the test builds gmon-write into a
//! separate target directory, `<target>/<profile>/gmon-write-runtime`, shared with gmon-write's
//! C ABI tests (the outer cargo holds the lock of the main one), and points `GMON_WRITE_LIB`
//! at it. (A plain `cargo test` builds only the rlib of gmon-write, not its cdylib.)

// The runtime library's builder and the sidecar reader of gmon-write's own tests.
use crate::runtime_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::runtime_common::read_sidecar;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
#define BURNER(name)                                                              \
    __attribute__((noinline)) void name(double s) {                               \
        double t0 = cpu();                                                        \
        unsigned long x = 88172645463325252UL;                                    \
        while (cpu() - t0 < s)                                                    \
            for (int i = 0; i < 200000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; } \
        sink = x;                                                                 \
    }
BURNER(sixty)
BURNER(thirty)
BURNER(ten)
int main(void) {
    sixty(0.6);
    thirty(0.3);
    ten(0.1);
    printf("done\n");
    return 0;
}
"#;

pub(crate) fn gmon() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gmon"))
}

/// Writes `source` to `dir/name.c` and builds `dir/name` with gcc and `flags`.
pub(crate) fn compile_c(dir: &Path, name: &str, source: &str, flags: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).expect("write C source");
    let prog = dir.join(name);
    let cc = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(&prog)
        .arg(&src)
        .output()
        .expect("gcc is installed");
    assert!(cc.status.success(), "gcc: {}", text(&cc));
    prog
}

/// Two programs that only spin, `spina` (longer) and `spinb`: two executables to the runtime
/// (one program built twice would be one: the same build id).
pub(crate) fn two_spinning_programs(dir: &Path) -> (PathBuf, PathBuf) {
    let spin = |n: u32| {
        format!(
            "int main(void) {{ volatile long x = 0; for (long i = 0; i < {n}; i++) x += i; return 0; }}\n"
        )
    };
    (
        compile_c(dir, "spina", &spin(80_000_000), &[]),
        compile_c(dir, "spinb", &spin(60_000_000), &[]),
    )
}

/// Records `sh -c SCRIPT` into a directory of its own and returns every file the run wrote
/// (sidecars included, as `OUT OUT.*` names them).
pub(crate) fn record_tree(dir: &Path, name: &str, script: &str) -> Vec<PathBuf> {
    let rec = dir.join(name);
    std::fs::create_dir(&rec).unwrap();
    let run = gmon_cmd()
        .args(["record", "-o"])
        .arg(rec.join("tree.gmon"))
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&rec)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    files
}

pub(crate) fn build_program(dir: &Path) -> PathBuf {
    compile_c(dir, "split", PROGRAM, &["-O1", "-fno-omit-frame-pointer"])
}

/// `gmon` with the runtime embedded in it, cached under the test target directory.
pub(crate) fn gmon_cmd() -> Command {
    let mut c = Command::new(gmon());
    c.env_remove("GMON_WRITE_LIB")
        .env("XDG_CACHE_HOME", test_cache());
    c
}

/// The cache directory the tests' `gmon` writes its runtime library to.
/// Runs `gmon record -o OUT -- COMMAND...` and returns what it did.
fn record<S: AsRef<std::ffi::OsStr>>(out: &Path, command: impl IntoIterator<Item = S>) -> Output {
    gmon_cmd()
        .args(["record", "-o"])
        .arg(out)
        .arg("--")
        .args(command)
        .output()
        .expect("run gmon record")
}

fn test_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("record-cache")
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Function names of a flat profile, in order.
fn flat_names(flat: &str) -> Vec<String> {
    flat.lines()
        .skip_while(|l| !l.trim_start().starts_with("time"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect()
}

/// The `self %` column of a flat profile line for `name`.
fn percent_of(flat: &str, name: &str) -> f64 {
    flat.lines()
        .find(|l| l.split_whitespace().last() == Some(name))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

#[test]
fn record_a_c_program_and_read_it_with_gprof() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = build_program(dir.path());
    let out = dir.path().join("split.gmon");

    let run = gmon_cmd()
        .args(["record", "-o"])
        .arg(&out)
        .args(["--hz", "1000", "--"])
        .arg(&prog)
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "gmon record failed:\n{}", text(&run));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "done\n",
        "the program's own output"
    );
    assert!(String::from_utf8_lossy(&run.stderr).contains("samples at 1000 Hz"));

    let sidecar = read_sidecar(&out);
    assert!(sidecar.matches_gmon(&std::fs::read(&out).expect("gmon.out")));
    let main = sidecar.main_object().expect("main object");
    assert_eq!(
        Path::new(&main.path),
        prog.canonicalize().expect("canonical").as_path()
    );
    assert!(!main.build_id.is_empty(), "gcc's build id is recorded");
    assert!(!sidecar.stacks.is_empty(), "stacks are recorded by default");

    let gprof = Command::new("gprof")
        .args(["-b", "-p"])
        .arg(&prog)
        .arg(&out)
        .output();
    let Ok(gprof) = gprof else {
        runtime_common::skip("record", "GNU gprof is not installed: no gprof comparison");
        return;
    };
    assert!(gprof.status.success(), "gprof: {}", text(&gprof));
    let flat = String::from_utf8_lossy(&gprof.stdout).into_owned();
    assert!(
        flat.contains("Each sample counts as 0.001 seconds."),
        "{flat}"
    );
    let names = flat_names(&flat);
    assert_eq!(
        names.get(..3),
        Some(&["sixty", "thirty", "ten"].map(String::from)[..]),
        "{flat}"
    );
    // ~1000 ticks: ±6 points is over 4 binomial standard errors for the 60 % share.
    for (name, want) in [("sixty", 60.0), ("thirty", 30.0), ("ten", 10.0)] {
        let got = percent_of(&flat, name);
        assert!(
            (got - want).abs() < 6.0,
            "{name}: {got} % (want ~{want} %)\n{flat}"
        );
    }

    // gmon flame draws the sidecar's exact stacks with no other argument: the profile names
    // its executable. Every recorded tick is in the folded output.
    let folded = gmon_cmd().args(["flame", "--folded"]).arg(&out).output();
    let folded = folded.expect("run gmon flame");
    assert!(folded.status.success(), "gmon flame: {}", text(&folded));
    let folded = String::from_utf8_lossy(&folded.stdout).into_owned();
    let total: u64 = folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    let stacked: u64 = sidecar.stacks.iter().map(|s| s.count).sum();
    assert_eq!(total, stacked, "{folded}");
    assert!(folded.lines().any(|l| l.contains("sixty ")), "{folded}");

    // gmon gprof prints the same flat profile.
    let ours = gmon_cmd()
        .args(["gprof", "-b", "-p"])
        .arg(&prog)
        .arg(&out)
        .output();
    let ours = ours.expect("run gmon gprof");
    assert!(ours.status.success(), "gmon gprof: {}", text(&ours));
    assert_eq!(String::from_utf8_lossy(&ours.stdout), flat);
}

/// `--quiet`: no summary, the profile all the same (issue 30).
#[test]
fn quiet_prints_no_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = build_program(dir.path());
    let out = dir.path().join("q.gmon");
    let run = gmon_cmd()
        .args(["record", "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "done\n");
    assert!(run.stderr.is_empty(), "{}", text(&run));
    assert!(read_sidecar(&out).counters.samples > 0);
}

#[test]
fn exit_status_is_the_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(dir.path(), "three", "int main(void) { return 3; }\n", &[]);
    let out = dir.path().join("three.gmon");
    let run = record(&out, [&prog]);
    assert_eq!(run.status.code(), Some(3), "{}", text(&run));
    assert!(
        out.is_file(),
        "the profile is written even for a non-zero exit"
    );
}

/// Ends with `_exit` after a posix_spawn that fails and a vfork child (both of which `_exit`
/// in the parent's memory) and a forked child that works and `_exit`s: the parent and the
/// forked child are profiled, the borrowed-memory children write nothing and break nothing.
const ENDS_WITH_EXIT_UNDERSCORE: &str = r#"
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
extern char **environ;
static volatile unsigned long sink;
static void spin(double s) {
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 100000; i++) sink += i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < s);
}
int main(void) {
    spin(0.3);
    pid_t pid;
    char *argv[] = {"missing", NULL};
    int st = 0;
    if (posix_spawn(&pid, "/nonexistent/missing", NULL, NULL, argv, environ) == 0)
        waitpid(pid, &st, 0);
    pid_t v = vfork();
    if (v == 0) _exit(3);
    waitpid(v, &st, 0);
    if (WEXITSTATUS(st) != 3) return 1;
    pid_t f = fork();
    if (f == 0) { spin(0.2); _exit(5); }
    waitpid(f, &st, 0);
    if (WEXITSTATUS(st) != 5) return 1;
    spin(0.3);
    _exit(7);
}
"#;

/// The numbers of gmon record's summary line: samples, CPU seconds, processes.
pub(crate) fn summary_numbers(stderr: &str) -> (u64, f64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("gmon record: ") && l.contains(" samples at "))
        .unwrap_or_else(|| panic!("no summary in:\n{stderr}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let after = |w: &str, by: usize| {
        let i = words.iter().position(|x| *x == w).expect("summary word");
        words[i + by].trim_start_matches('(')
    };
    let samples = after("record:", 1).parse().expect("samples");
    let cpu = after("Hz", 1).parse().expect("CPU seconds");
    let procs = after("from", 1).parse().expect("processes");
    (samples, cpu, procs)
}

#[test]
fn a_program_ending_with_exit_underscore_keeps_its_profile() {
    // `_exit` skips the atexit hook that writes the profile; the runtime's own `_exit` writes it
    // first. Before, such a program (dash after every script) got no profile at all.
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(dir.path(), "ends", ENDS_WITH_EXIT_UNDERSCORE, &["-O1"]);
    let out = dir.path().join("ends.gmon");
    let run = record(&out, [&prog]);
    assert_eq!(run.status.code(), Some(7), "{}", text(&run));
    assert!(out.is_file(), "{}", text(&run));
    // The parent and its forked child; the posix_spawn and vfork children wrote nothing.
    assert_eq!(samples_cover_cpu(&run, 0.75, 0.9), 2, "{}", text(&run));

    // dash, Debian's /bin/sh, ends every script with _exit.
    let sh = std::fs::canonicalize("/bin/sh").unwrap_or_default();
    if sh.file_name().is_some_and(|n| n == "dash") {
        let out = dir.path().join("dash.gmon");
        let run = gmon_cmd()
            .args(["record", "-o"])
            .arg(&out)
            .args(["--", "sh", "-c"])
            .arg("i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exit 4")
            .output()
            .expect("run gmon record");
        assert_eq!(run.status.code(), Some(4), "{}", text(&run));
        assert!(out.is_file(), "dash wrote no profile: {}", text(&run));
    }
}

/// A C function that burns `s` seconds of the CPU clock `clock`, inlined into its caller so
/// that its samples are the caller's.
const BURN_C: &str = r#"
#include <time.h>
static volatile unsigned long sink;
static inline __attribute__((always_inline)) void burn(clockid_t clock, double s) {
    struct timespec t0, t;
    clock_gettime(clock, &t0);
    do {
        for (int i = 0; i < 1000; i++) sink += i;
        clock_gettime(clock, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < s);
}
"#;

/// Compiles `BURN_C` + `body` as `dir/name` and records it with `args` into `dir/out`; the
/// program, the profile and the run.
fn record_burner(
    dir: &Path,
    name: &str,
    body: &str,
    out: &str,
    args: &[&str],
) -> (PathBuf, PathBuf, Output) {
    let prog = compile_c(dir, name, &format!("{BURN_C}{body}"), &["-O1"]);
    let out = dir.join(out);
    let run = record(
        &out,
        std::iter::once(prog.as_os_str()).chain(args.iter().map(|a| a.as_ref())),
    );
    assert!(run.status.success(), "{}", text(&run));
    (prog, out, run)
}

/// Works for 0.3 s of CPU, then execs: `/bin/true`, or with an argument a missing file (the
/// exec fails) and works 0.2 s more.
const WORK_THEN_EXEC: &str = r#"
#include <unistd.h>
__attribute__((noinline)) static void work_before_exec(double s) {
    burn(CLOCK_PROCESS_CPUTIME_ID, s);
}
int main(int argc, char **argv) {
    work_before_exec(0.3);
    char *missing[] = {"/nonexistent/missing", NULL}, *t[] = {"/bin/true", NULL};
    if (argc > 1) {
        if (execv(missing[0], missing) == 0) return 1;
        work_before_exec(0.2);
        return 0;
    }
    execv(t[0], t);
    return 1;
}
"#;

/// Checks that a run at 1000 Hz took at least `min_cpu` s of CPU time and that its samples
/// are between `low` and 1.1 times that at the rate; its number of processes.
fn samples_cover_cpu(run: &Output, min_cpu: f64, low: f64) -> u64 {
    let (samples, cpu, procs) = summary_numbers(&String::from_utf8_lossy(&run.stderr));
    assert!(cpu >= min_cpu, "{}", text(run));
    let expected = cpu * 1000.0;
    assert!(
        (samples as f64) > low * expected && (samples as f64) < 1.1 * expected,
        "{samples} samples for {cpu} s of CPU:\n{}",
        text(run)
    );
    procs
}

#[test]
fn work_before_an_exec_is_kept_in_the_programs_own_profile() {
    // Before, the image an exec replaced lost every sample: 0 samples for 0.3 s of CPU, and
    // only `true`'s profile was written.
    let dir = tempfile::tempdir().expect("tempdir");
    let (prog, out, run) = record_burner(dir.path(), "execs", WORK_THEN_EXEC, "execs.gmon", &[]);
    samples_cover_cpu(&run, 0.25, 0.85);
    // The work is in the program's own profile, which is OUT (`true` has no sample).
    let sidecar = read_sidecar(&out);
    let main = sidecar
        .main_object()
        .map(|m| m.path.clone())
        .unwrap_or_default();
    assert_eq!(
        Path::new(&main).file_name(),
        Some("execs".as_ref()),
        "{}",
        text(&run)
    );
    let flat = gmon_cmd()
        .args(["gprof", "-b", "-p"])
        .arg(&prog)
        .arg(&out)
        .output()
        .expect("gprof");
    let flat = String::from_utf8_lossy(&flat.stdout);
    assert!(percent_of(&flat, "work_before_exec") > 80.0, "{flat}");

    // A shell that works, then execs (`sh -c '...; exec prog'`, a wrapper's usual last line).
    let out = dir.path().join("sh.gmon");
    let run = gmon_cmd()
        .args(["record", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c"])
        .arg("i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exec /bin/true")
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    samples_cover_cpu(&run, 0.1, 0.85);
}

#[test]
fn an_exec_that_fails_keeps_sampling_and_counts_nothing_twice() {
    // The profile written before the exec is replaced by the image's later write: one file,
    // its samples the CPU time of both stretches of work, not the first one twice.
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, _, run) = record_burner(dir.path(), "execs", WORK_THEN_EXEC, "fails.gmon", &["fail"]);
    assert_eq!(samples_cover_cpu(&run, 0.45, 0.85), 1, "{}", text(&run));
    assert_eq!(
        listing(dir.path()),
        ["execs", "execs.c", "fails.gmon", "fails.gmon.gmonx"],
        "{}",
        text(&run)
    );
}

/// Works 0.3 s, then execs itself to work 0.05 s more: two images of one executable, summed
/// into one profile.
const WORK_THEN_EXEC_ITSELF: &str = r#"
#include <unistd.h>
__attribute__((noinline)) static void work(double s) {
    burn(CLOCK_PROCESS_CPUTIME_ID, s);
}
int main(int argc, char **argv) {
    if (argc > 1) { work(0.35); return 0; }
    work(0.3);
    char *again[] = {argv[0], "again", NULL};
    execv(argv[0], again);
    return 1;
}
"#;

#[test]
fn the_cpu_time_before_the_runtime_started_is_measured_and_not_counted_twice() {
    // The CPU time before an image's clock runs (the exec, the dynamic loader, the runtime's
    // own start) is measured in each image (spec/runtime.md §4.5, "What no clock sees"). The
    // process's CPU clock runs on through an exec, so the image after one counts only what
    // came after the exec, which the image before it noted: not its 0.3 s of sampled work.
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, out, run) = record_burner(
        dir.path(),
        "again",
        WORK_THEN_EXEC_ITSELF,
        "again.gmon",
        &[],
    );
    let clock = read_sidecar(&out).clock.expect("a clock report");
    assert!(
        clock.before_start_ns > 0 && clock.before_start_ns < 100_000_000,
        "{} ns counted before the runtime started:\n{}",
        clock.before_start_ns,
        text(&run)
    );
    assert!(clock.runtime_ns > 0, "{}", text(&run));

    // Short processes: the summary says where the CPU time no sample holds went (without the
    // outer clock, which samples that time).
    let out = dir.path().join("short.gmon");
    let run = gmon_cmd()
        .args(["record", "--no-outer-clock", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c"])
        .arg("for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; done")
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    if stderr.contains("samples cover") {
        assert!(
            stderr.contains("before the runtime started in each program"),
            "{stderr}"
        );
    }
}

/// `gmon record --outer-clock SCOPE -o DIR/NAME -- sh -c` running `/bin/true` `n` times;
/// `None` (said SKIPPED) when the kernel refuses that clock.
fn record_true_loop(dir: &Path, name: &str, n: u32, scope: &str, test: &str) -> Option<Output> {
    let run = gmon_cmd()
        .args(["record", "--outer-clock", scope, "-o"])
        .arg(dir.join(name))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "i=0; while [ $i -lt {n} ]; do /bin/true; i=$((i+1)); done"
        ))
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    if String::from_utf8_lossy(&run.stderr).contains("outer clock: refused") {
        runtime_common::skip(
            test,
            &format!("the kernel refused the outer clock of scope {scope} (perf_event_open)"),
        );
        return None;
    }
    Some(run)
}

#[test]
fn the_outer_clock_samples_each_programs_exec_loading_and_exit() {
    // A loop of short processes spends most of its CPU time where no clock of the runtime
    // runs: the exec, the dynamic loader, the exit. Before the outer clock, 60 `/bin/true`
    // under a shell were covered at about 37 %; `true`'s profile held almost nothing. The
    // inherited scope, which any user may open, is the one tested here.
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(run) = record_true_loop(
        dir.path(),
        "loop.gmon",
        60,
        "inherited",
        "the_outer_clock_samples_each_programs_exec_loading_and_exit",
    ) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&run.stderr);
    let outer: u64 = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("outer clock: "))
        .and_then(|l| l.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no outer clock line:\n{stderr}"));
    assert!(outer >= 10, "{outer} outer samples:\n{stderr}");
    samples_cover_cpu(&run, 0.02, 0.5);
    // `true`'s own profile holds them, under one root that says when they ran, with the
    // dynamic loader's functions or the kernel's among them.
    let true_out = dir.path().join("loop.gmon.true");
    let folded = gmon_cmd()
        .args(["flame", "--folded"])
        .arg(&true_out)
        .output()
        .expect("flame");
    assert!(folded.status.success(), "{}", text(&folded));
    let folded = String::from_utf8_lossy(&folded.stdout).into_owned();
    let outside: Vec<&str> = folded
        .lines()
        .filter(|l| l.starts_with("[process start and exit];"))
        .collect();
    assert!(!outside.is_empty(), "{folded}\n{stderr}");
    let sidecar = read_sidecar(&true_out);
    let kinds: u64 = (0..sidecar.stacks.len())
        .filter(|&i| sidecar.stack_kind(i) == gmon_format::sidecar::StackKind::OUTSIDE)
        .map(|i| sidecar.stacks[i].count)
        .sum();
    assert!(kinds > 0, "{stderr}");

    // Without it, no such stack.
    let out = dir.path().join("off.gmon");
    let run = gmon_cmd()
        .args(["record", "--no-outer-clock", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c"])
        .arg("i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done")
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    assert!(!String::from_utf8_lossy(&run.stderr).contains("outer clock"));
    for f in std::fs::read_dir(dir.path()).expect("dir").flatten() {
        let p = f.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("off.gmon") && name.ends_with(".gmonx") {
            let s = gmon_format::read_sidecar(&std::fs::read(&p).expect("read")).expect("sidecar");
            assert!(
                (0..s.stacks.len())
                    .all(|i| s.stack_kind(i) != gmon_format::sidecar::StackKind::OUTSIDE),
                "{name}"
            );
        }
    }
}

#[test]
fn a_clock_of_every_cpu_sees_short_processes_to_their_end() {
    // An inherited task clock stops before a process's exit tears its address space down: 200
    // `/bin/true` under it were covered at about 70 %. A CPU clock on every CPU, keeping the
    // command's tree, sees the whole of each process: about 95 %.
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(run) = record_true_loop(
        dir.path(),
        "cpus.gmon",
        200,
        "system",
        "a_clock_of_every_cpu_sees_short_processes_to_their_end",
    ) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("; every CPU, the command's processes kept"),
        "{stderr}"
    );
    samples_cover_cpu(&run, 0.1, 0.85);
    // The end of each `true` is in `true`'s own profile: no sample is left without a file.
    assert!(!stderr.contains("in no file"), "{stderr}");
}

/// 500 threads of 2 ms of CPU each, two at a time.
const SHORT_THREADS: &str = r#"
#include <pthread.h>
__attribute__((noinline)) static void thread_work(double s) {
    burn(CLOCK_THREAD_CPUTIME_ID, s);
}
static void *worker(void *a) { (void)a; thread_work(0.002); return 0; }
int main(void) {
    for (int round = 0; round < 250; round++) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, 0);
        for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    }
    return 0;
}
"#;

#[test]
fn a_threads_start_and_end_outside_its_clock_reach_the_profile() {
    // A thread's clock is armed after the thread starts and deleted before it ends; both
    // stretches are inside the process's window, where the outer clock's ticks were taken as
    // the runtime's and dropped: 500 threads of 2 ms were covered at 92-95 %, and the outer
    // clock kept only the process's own start and exit. THREAD_CLOCKS (spec/runtime.md §5.17)
    // now tells each thread's clocked time apart, and the rest is kept.
    let test = "a_threads_start_and_end_outside_its_clock_reach_the_profile";
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "threads",
        &format!("{BURN_C}{SHORT_THREADS}"),
        &["-O1", "-pthread"],
    );
    let out = dir.path().join("threads.gmon");
    let run = gmon_cmd()
        .args(["record", "--outer-clock", "system", "--hz", "4000", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    if stderr.contains("outer clock: refused") {
        runtime_common::skip(test, "the kernel refused a clock of every CPU (not root?)");
        return;
    }
    // Every thread's clock is listed, each inside the window.
    let sidecar = read_sidecar(&out);
    let (window, clocks) = (
        sidecar.window.expect("WINDOW"),
        sidecar.thread_clocks.clone().expect("THREAD_CLOCKS"),
    );
    assert_eq!(clocks.dropped, 0);
    assert!(clocks.clocks.len() >= 501, "{} clocks", clocks.clocks.len());
    assert!(
        clocks
            .clocks
            .iter()
            .all(|c| window.start_ns <= c.start_ns && c.end_ns <= window.end_ns),
        "{clocks:?} {window:?}"
    );
    // The outer clock kept the threads' starts and ends: at 4 kHz, about 200 µs of each of 500
    // threads is about 400 ticks (432 in one run), where the process's own start and exit and
    // the runtime's threads gave 73.
    let outer = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("outer clock: "))
        .and_then(|l| l.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no outer clock line:\n{stderr}"));
    assert!(outer >= 150, "{outer} outer samples:\n{stderr}");
    // And the samples cover the CPU time (94.6 % before), without counting any twice.
    let (samples, cpu, _) = summary_numbers(&stderr);
    let due = cpu * 4000.0;
    assert!(
        samples as f64 >= 0.97 * due && samples as f64 <= 1.05 * due,
        "{samples} samples for {cpu} s of CPU at 4 kHz:\n{stderr}"
    );
}

/// 200 forked children of 2.5 ms of CPU each, waited for one at a time.
const SHORT_CHILDREN: &str = r#"
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) static void short_work(double s) {
    burn(CLOCK_THREAD_CPUTIME_ID, s);
}
int main(void) {
    for (int i = 0; i < 200; i++) {
        pid_t p = fork();
        if (p == 0) { short_work(0.0025); return 0; }
        int st;
        waitpid(p, &st, 0);
    }
    return 0;
}
"#;

#[test]
fn the_last_fraction_of_a_period_of_short_processes_is_not_lost() {
    // Each process ended with a fraction of a period that no tick counted, half a period on
    // average; a process shorter than a period was never sampled. Each clock's first period
    // is now drawn at random, so a process running `t` gets `t / period` ticks on average,
    // at real PCs with their stacks (spec/runtime.md §4.1, "Random first period").
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, out, run) = record_burner(dir.path(), "short", SHORT_CHILDREN, "short.gmon", &[]);
    // 200 x 2.5 ms at 1000 Hz is 500 ticks due in `short_work` and what it calls (the
    // clock it reads); with the same phase for all, about 250 were counted, with the last
    // fraction drawn at exit about 350.
    let folded = gmon_cmd()
        .args(["flame", "--folded"])
        .arg(&out)
        .output()
        .expect("flame");
    assert!(folded.status.success(), "{}", text(&folded));
    let folded = String::from_utf8_lossy(&folded.stdout).into_owned();
    let in_work = |l: &&str| l.contains(";short_work");
    let count = |l: &str| l.rsplit_once(' ').and_then(|(_, n)| n.parse::<u64>().ok());
    let work: u64 = folded.lines().filter(in_work).filter_map(count).sum();
    assert!(
        work >= 400,
        "{work} samples in short_work of 500 due:\n{}\n{folded}",
        text(&run)
    );
    // A child unwinds with the objects' CFI its parent had read (its own unwinder thread has
    // not read them yet when it ends): its stacks reach `_start`. Before, most ended in a
    // frame-pointer guess under `[unknown]`.
    let whole: u64 = folded
        .lines()
        .filter(in_work)
        .filter(|l| l.starts_with("_start;"))
        .filter_map(count)
        .sum();
    assert!(
        whole * 10 >= work * 9,
        "{whole} of {work} stacks in short_work are whole:\n{folded}"
    );
}

#[test]
fn every_worker_of_a_python_pool_is_profiled() {
    // Pool workers end with os._exit, and leaving the `with` block sends them SIGTERM, which
    // races their own exit: the _exit write must neither be skipped nor cut off by the signal.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("pool.gmon");
    let script = "import multiprocessing as mp\n\
        def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i % 7\n    return s\n\
        if __name__ == '__main__':\n    mp.set_start_method('fork')\n\
        \x20   with mp.Pool(2) as p:\n        print(sum(p.map(work, [600000] * 4)))\n";
    let run = gmon_cmd()
        .args(["record", "-o"])
        .arg(&out)
        .args(["--", "python3", "-c", script])
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "4799988\n");
    // python3 may be a shell shim (pyenv's runs dozens of helpers): count the interpreter's.
    let err = String::from_utf8_lossy(&run.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("pool.gmon "))
        .unwrap_or_else(|| panic!("no line for pool.gmon:\n{err}"));
    assert!(
        line.contains(", 3 processes, "),
        "the parent and both workers:\n{err}"
    );
    let (samples, _, _) = summary_numbers(&err);
    assert!(samples > 100, "{err}");
}

#[test]
fn a_script_without_an_interpreter_line_runs_as_a_shell_runs_it() {
    // The kernel refuses it (ENOEXEC); shells and execvp hand it to /bin/sh. gmon record starts
    // commands with posix_spawn, which does not, so it does that itself.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("plain-script");
    std::fs::write(&script, "echo \"$0 got $*\"\nexit 6\n").expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let run = gmon_cmd()
        .args(["record", "-o"])
        .arg(dir.path().join("s.gmon"))
        .arg("--")
        .arg(&script)
        .args(["a", "b"])
        .output()
        .expect("run gmon record");
    assert_eq!(run.status.code(), Some(6), "{}", text(&run));
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        format!("{} got a b\n", script.display()),
        "{}",
        text(&run)
    );
}

#[test]
fn a_program_that_leaves_without_any_exit_hook_is_reported_and_its_status_kept() {
    // The exit_group system call itself skips every hook, the runtime's included: no profile
    // exists. gmon record says so on stderr, leaves the old file alone, and exits with the
    // command's status.
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "raw_exit",
        "#include <sys/syscall.h>\n#include <unistd.h>\n\
         int main(void) { syscall(SYS_exit_group, 7); return 0; }\n",
        &[],
    );
    let out = dir.path().join("raw.gmon");
    std::fs::write(&out, b"stale").expect("stale file");
    let run = record(&out, [&prog]);
    assert_eq!(run.status.code(), Some(7), "{}", text(&run));
    assert_eq!(std::fs::read(&out).expect("read"), b"stale");
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("wrote no profile") && err.contains("left as it was"),
        "{}",
        text(&run)
    );
}

#[test]
fn processes_of_one_executable_are_summed_into_one_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "spin",
        "int main(void) { volatile long x = 0; for (long i = 0; i < 100000000; i++) x += i; return 0; }\n",
        &[],
    );
    let out = dir.path().join("multi.gmon");
    let p = prog.to_str().expect("utf-8 path");
    // Two children, then the shell itself ends: one file for `spin` with both processes, and
    // it is OUT, since the shell (whose profile is written too, dash's `_exit` included) has
    // no sample: the work is the children's.
    let script = format!("{p}; {p}; exit 0");
    let run = gmon_cmd()
        .args(["record", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", &script])
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    let sidecar = read_sidecar(&out);
    assert!(sidecar.matches_gmon(&std::fs::read(&out).expect("gmon.out")));
    assert_eq!(
        sidecar.main_object().map(|m| m.path.clone()),
        Some(
            prog.canonicalize()
                .expect("canonical")
                .to_string_lossy()
                .into_owned()
        )
    );
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("spin, 2 processes"), "{err}");
    // Nothing but the profile and its sidecar appeared next to the program (and the shell's
    // own, when its millisecond of start-up was sampled: spec/runtime.md §3).
    let sh = std::fs::canonicalize("/bin/sh").expect("/bin/sh");
    let sh_out = format!(
        "multi.gmon.{}",
        sh.file_name().unwrap_or_default().to_string_lossy()
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| !n.starts_with(&sh_out))
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["multi.gmon", "multi.gmon.gmonx", "spin", "spin.c"],
        "{err}"
    );
}

/// A recorded process tree is drawn as one flame graph: `gmon flame OUT OUT.*` puts each
/// executable's profile under a root frame named after it, each read with its own executable,
/// and every sample of every file is drawn (issue 26: perf + inferno draw a make/gcc tree in one
/// graph, gmon refused the second build id).
#[test]
fn a_process_tree_is_one_flame_graph_with_a_root_per_executable() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Two programs (not one built twice: the same build id is one executable to the runtime).
    let (a, b) = two_spinning_programs(dir.path());
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).expect("mkdir");
    let out = rec.join("tree.gmon");
    let script = format!("{}; {}", a.display(), b.display());
    let run = record(&out, ["sh", "-c", &script]);
    assert!(run.status.success(), "{}", text(&run));
    // Every file the run wrote, sidecars included, as `OUT OUT.*` would name them.
    let mut files: Vec<PathBuf> = std::fs::read_dir(&rec)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let profiles: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_none_or(|e| e != "gmonx"))
        .collect();
    assert!(profiles.len() >= 2, "{files:?}\n{}", text(&run));
    let o = gmon_cmd()
        .args(["flame", "--folded"])
        .args(&files)
        .output()
        .expect("run gmon flame");
    assert!(o.status.success(), "{}", text(&o));
    let mut per_root = std::collections::BTreeMap::<String, u64>::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let (stack, n) = line.rsplit_once(' ').expect("folded line");
        let root = stack.split(';').next().expect("root").to_string();
        *per_root.entry(root).or_default() += n.parse::<u64>().expect("count");
    }
    assert!(
        per_root.contains_key("spina") && per_root.contains_key("spinb"),
        "{per_root:?}"
    );
    // Each root holds exactly what its own file draws alone.
    let alone: u64 = profiles.iter().map(|p| folded_total(p)).sum();
    assert_eq!(per_root.values().sum::<u64>(), alone, "{per_root:?}");
    assert_eq!(per_root.len(), profiles.len(), "{per_root:?} {profiles:?}");
    let svg = gmon_cmd()
        .arg("flame")
        .args(&files)
        .output()
        .expect("run gmon flame");
    assert!(svg.status.success(), "{}", text(&svg));
    let svg = String::from_utf8_lossy(&svg.stdout);
    assert!(svg.contains("process tree:"), "no process-tree subtitle");
    assert!(svg.contains("a root each"), "no process-tree subtitle");
}

const THREADED: &str = r#"
#include <pthread.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) void leafwork(double s) {
    double t0 = cpu();
    unsigned long x = 1;
    while (cpu() - t0 < s)
        for (int i = 0; i < 100000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    sink = x;
}
__attribute__((noinline)) void middle(double s) { leafwork(s); sink++; }
void *worker(void *a) { (void)a; middle(0.2); return 0; }
int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    return 0;
}
"#;

/// The folded stacks' total of `gmon flame --folded PROFILE`.
fn folded_total(profile: &Path) -> u64 {
    let o = gmon_cmd()
        .args(["flame", "--folded"])
        .arg(profile)
        .output()
        .expect("run gmon flame");
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// `gmon merge` of recorded profiles sums their sidecars too (stacks, library samples), so the
/// merged flame graph draws every sample of both; an input without a sidecar, or an output
/// with no place beside it, is said, not silently dropped (issue 27, record/06).
#[test]
fn merging_recorded_profiles_keeps_their_sidecars() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Time in the program and in libc (strlen), so the sidecar holds library samples.
    let prog = compile_c(
        dir.path(),
        "libwork",
        "#include <string.h>\n#include <stdlib.h>\n\
         int main(void) { size_t len = 1 << 20; char *s = malloc(len); memset(s, 'x', len - 1);\n\
         s[len - 1] = 0; volatile size_t n = 0;\n\
         for (int i = 0; i < 3000; i++) { s[i % 4000] = 'a' + i % 7; n += strlen(s);\n\
         for (volatile int j = 0; j < 20000; j++) n += j; } return n == 0; }\n",
        &["-O1"],
    );
    let (r1, r2) = (dir.path().join("r1.out"), dir.path().join("r2.out"));
    for r in [&r1, &r2] {
        let run = record(r, [&prog]);
        assert!(run.status.success(), "{}", text(&run));
    }
    let m = dir.path().join("m.out");
    let o = gmon_cmd()
        .args(["merge", "-o"])
        .arg(&m)
        .args([&r1, &r2])
        .output()
        .expect("run gmon merge");
    assert!(o.status.success(), "{}", text(&o));
    let (s1, s2, sm) = (read_sidecar(&r1), read_sidecar(&r2), read_sidecar(&m));
    assert!(sm.matches_gmon(&std::fs::read(&m).expect("merged gmon.out")));
    assert_eq!(
        sm.counters.samples,
        s1.counters.samples + s2.counters.samples
    );
    let stacked = |s: &gmon_format::Sidecar| s.stacks.iter().map(|x| x.count).sum::<u64>();
    assert_eq!(stacked(&sm), stacked(&s1) + stacked(&s2));
    let libc = |s: &gmon_format::Sidecar| {
        s.pc_samples
            .iter()
            .filter(|p| s.resolve(p.pc).is_some_and(|(o, _)| !o.is_main()))
            .map(|p| p.count)
            .sum::<u64>()
    };
    assert!(libc(&s1) > 0, "no library samples to keep");
    assert_eq!(libc(&sm), libc(&s1) + libc(&s2));
    assert_eq!(folded_total(&m), folded_total(&r1) + folded_total(&r2));

    // An input without its sidecar: the sum gets none, and stderr says so.
    let lone = dir.path().join("lone.out");
    std::fs::copy(&r2, &lone).expect("copy");
    let p = dir.path().join("p.out");
    let o = gmon_cmd()
        .args(["merge", "-o"])
        .arg(&p)
        .args([&r1, &lone])
        .output()
        .expect("run gmon merge");
    assert!(o.status.success(), "{}", text(&o));
    assert!(!gmon_format::sidecar_path(&p).exists());
    assert!(
        text(&o).contains("1 of 2 inputs have no sidecar of their own"),
        "{}",
        text(&o)
    );
    // Standard output has no place for a sidecar: said too.
    let o = gmon_cmd()
        .args(["merge", "-o", "-"])
        .args([&r1, &r2])
        .output()
        .expect("run gmon merge");
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("no place beside standard output"),
        "{}",
        text(&o)
    );
}

#[test]
fn threads_are_sampled_with_whole_stacks_from_their_start() {
    // Threads created after the runtime started register themselves (pthread_create wrapper):
    // their ticks are counted and their frame chains walked from the first one.
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "threads",
        THREADED,
        &["-O1", "-fno-omit-frame-pointer", "-pthread"],
    );
    let out = dir.path().join("threads.gmon");
    let run = record(&out, [&prog]);
    assert!(run.status.success(), "{}", text(&run));
    let sidecar = read_sidecar(&out);
    // 2 threads × 0.2 s at 1000 Hz; the main thread only waits.
    let on_workers: u64 = sidecar
        .threads
        .iter()
        .map(|t| t.samples)
        .filter(|&n| n > 100)
        .sum();
    assert!(on_workers > 300, "{:?}", sidecar.threads);
    // A tick whose snapshot finds the unwinder's ring full (the unwinder thread fell behind on
    // a loaded machine) is walked in the handler instead, and that walk can end short: at most
    // one such tick in a hundred. The race that once cut stacks here (a lookup during a re-read
    // of the thread stacks) has its own test in gmon-write (unwind/objects.rs).
    assert!(
        sidecar.counters.truncated_stacks * 100 <= on_workers,
        "{:?}",
        sidecar.counters
    );
    let folded = gmon_cmd()
        .args(["flame", "--folded"])
        .arg(&out)
        .output()
        .expect("flame");
    let folded = String::from_utf8_lossy(&folded.stdout).into_owned();
    let whole: u64 = folded
        .lines()
        .filter(|l| l.contains("worker;middle;leafwork "))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    assert!(
        whole * 10 >= on_workers * 9,
        "{whole} of {on_workers} whole stacks:\n{folded}"
    );
}

#[test]
fn missing_library_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope/libgmon_write.so");
    let run = Command::new(gmon())
        .env("GMON_WRITE_LIB", &missing)
        .args(["record", "--", "true"])
        .current_dir(dir.path())
        .output()
        .expect("run gmon record");
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("GMON_WRITE_LIB=") && err.contains("no such file"),
        "{err}"
    );
}

#[test]
fn help_says_where_the_library_is_found() {
    let run = Command::new(gmon())
        .args(["record", "--help"])
        .output()
        .expect("run gmon");
    let help = String::from_utf8_lossy(&run.stdout);
    assert!(
        help.contains("GMON_WRITE_LIB") && help.contains("libgmon_write.so"),
        "{help}"
    );
}

/// Loops in `spin` forever; once it has used 0.5 s of CPU it writes its pid to `argv[1]` (the
/// test's cue to send SIGTERM), so the kill never races the profile's start.
/// The loop the signal tests' programs spend their CPU time in (GNU gprof must put it on top).
const SPIN: &str = r#"
static volatile unsigned long sink;
__attribute__((noinline)) void spin(void) {
    unsigned long x = 88172645463325252UL;
    for (int i = 0; i < 200000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    sink = x;
}
"#;

/// `program` (C source) with [`SPIN`] before it.
fn spinning(program: &str) -> String {
    format!("{SPIN}{program}")
}

const ENDLESS: &str = r#"
#include <stdio.h>
#include <time.h>
int main(int argc, char **argv) {
    int told = 0;
    alarm(60); /* a safety net: the test never hangs if the pid file cannot be written */
    for (;;) {
        spin();
        if (!told && argc > 1 && clock() >= CLOCKS_PER_SEC / 2) {
            FILE *f = fopen(argv[1], "w");
            if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
            told = 1;
        }
    }
}
"#;

#[test]
fn a_program_stopped_by_sigterm_keeps_its_profile_and_dies_by_the_signal() {
    use gmon_tools::record::{RecordOptions, record};
    use std::os::unix::process::ExitStatusExt;

    let dir = tempfile::tempdir().expect("tempdir");
    let source = spinning(&format!("#include <unistd.h>\n{ENDLESS}"));
    let prog = compile_c(
        dir.path(),
        "endless",
        &source,
        &["-O1", "-fno-omit-frame-pointer"],
    );
    let out = dir.path().join("endless.gmon");
    let pid_file = dir.path().join("endless.pid");
    // The embedded runtime, cached where the other tests' `gmon` caches it (not in $HOME).
    let lib = gmon_tools::record::runtime::install(&test_cache().join("gmon/in-process"), true)
        .expect("install the runtime library");
    // No summary wanted (as `gmon record -q`): the functions are not named.
    let opts = RecordOptions {
        library: Some(lib),
        name_functions: false,
        ..RecordOptions::new(&out)
    };
    let command = vec![
        prog.clone().into_os_string(),
        pid_file.clone().into_os_string(),
    ];
    let killer = {
        let pid_file = pid_file.clone();
        std::thread::spawn(move || {
            // Bounded wait for the program's cue (60 s: a loaded CI machine, not a timing).
            for _ in 0..6000 {
                if let Some(pid) = std::fs::read_to_string(&pid_file)
                    .ok()
                    .and_then(|s| s.trim().parse::<i32>().ok())
                {
                    let kill = Command::new("kill")
                        .args(["-TERM", &pid.to_string()])
                        .status()
                        .expect("run kill");
                    return kill.success();
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            false
        })
    };
    let rec = record(&opts, &command);
    let killed = killer.join().expect("killer thread");
    assert!(killed, "the program never wrote its pid file");
    let rec = rec.expect("a profile is written despite SIGTERM");
    // 15 = SIGTERM: the parent sees the same death as without the runtime.
    assert_eq!(rec.status.signal(), Some(15), "{:?}", rec.status);
    assert_eq!(rec.files.first().map(|f| f.path.clone()), Some(out.clone()));
    assert!(rec.samples() >= 400, "{rec:?}");
    assert!(
        rec.top.functions.is_empty() && rec.top.total == 0,
        "{:?}",
        rec.top
    );

    let gprof = Command::new("gprof")
        .args(["-b", "-p"])
        .arg(&prog)
        .arg(&out)
        .output()
        .expect("GNU gprof is installed");
    assert!(gprof.status.success(), "gprof: {}", text(&gprof));
    let flat = String::from_utf8_lossy(&gprof.stdout).into_owned();
    assert_eq!(
        flat_names(&flat).first().map(String::as_str),
        Some("spin"),
        "{flat}"
    );
}

/// Starts `gmon record -o OUT -- endless PIDFILE` in its own process group (as a shell puts a
/// foreground job), with SIGINT at its default whatever the test runner inherited, and returns
/// it once the program has written its pid (after 0.5 s of CPU time, so profiling has started).
fn start_endless_under_gmon(dir: &Path) -> (std::process::Child, PathBuf, PathBuf) {
    use std::os::unix::process::CommandExt;
    let source = spinning(&format!("#include <unistd.h>\n{ENDLESS}"));
    let prog = compile_c(dir, "endless", &source, &["-O1", "-fno-omit-frame-pointer"]);
    let out = dir.join("endless.gmon");
    let pid_file = dir.join("endless.pid");
    let mut cmd = gmon_cmd();
    cmd.arg("record")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .arg(&pid_file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0);
    // SAFETY: signal(2) is async-signal-safe; a runner started as a background job of a
    // non-interactive shell would otherwise pass SIGINT down ignored.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("run gmon record");
    // Bounded wait for the program's cue (60 s: a loaded CI machine, not a timing).
    for _ in 0..6000 {
        if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.trim().parse::<i32>().is_ok()) {
            return (child, prog, out);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The program's alarm(60) ends it, and so gmon record, which is reaped here.
    let ended = child.wait();
    panic!("the program never wrote its pid file ({ended:?})");
}

/// GNU gprof reads `out` and puts `spin` on top.
fn assert_gprof_reads_spin(prog: &Path, out: &Path) {
    let gprof = Command::new("gprof")
        .args(["-b", "-p"])
        .arg(prog)
        .arg(out)
        .output()
        .expect("GNU gprof is installed");
    assert!(gprof.status.success(), "gprof: {}", text(&gprof));
    let flat = String::from_utf8_lossy(&gprof.stdout).into_owned();
    assert_eq!(
        flat_names(&flat).first().map(String::as_str),
        Some("spin"),
        "{flat}"
    );
}

/// Starts an endless program under `gmon record`, sends `kill ARGS` (built from gmon record's
/// pid), and checks that gmon record exits with `status` (the program's death by that signal),
/// says how many samples it kept, and wrote a profile GNU gprof reads.
fn signal_ends_the_run(kill_args: impl Fn(u32) -> Vec<String>, status: i32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (child, prog, out) = start_endless_under_gmon(dir.path());
    let kill = Command::new("kill")
        .args(kill_args(child.id()))
        .status()
        .expect("run kill");
    assert!(kill.success());
    let run = child.wait_with_output().expect("wait for gmon record");
    assert_eq!(
        run.status.code(),
        Some(status),
        "{:?}: {}",
        run.status,
        text(&run)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("gmon record:") && stderr.contains("samples"),
        "{stderr}"
    );
    assert!(out.is_file(), "{}", text(&run));
    assert_gprof_reads_spin(&prog, &out);
}

#[test]
fn sigterm_to_gmon_record_is_forwarded_and_it_reports_the_programs_death() {
    // 128 + 15: the program died by the forwarded SIGTERM after writing its profile, and gmon
    // record survived to say so.
    signal_ends_the_run(|pid| vec!["-TERM".into(), pid.to_string()], 143);
}

#[test]
fn ctrl_c_to_the_process_group_leaves_gmon_record_to_report() {
    // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group; 128 + 2
    // from the program's death, not gmon record's own.
    signal_ends_the_run(
        |pid| vec!["-INT".into(), "--".into(), format!("-{pid}")],
        130,
    );
}

/// Spins for 0.3 s of CPU time, then prints lines until its reader goes away.
const PIPED: &str = r#"
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(void) {
    alarm(60); /* a safety net: never hangs if the reader never closes */
    while (clock() < CLOCKS_PER_SEC * 3 / 10) spin();
    for (;;) { puts("line"); fflush(stdout); }
}
"#;

#[test]
fn a_program_ended_by_sigpipe_keeps_its_profile_and_dies_by_the_signal() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "piped",
        &spinning(PIPED),
        &["-O1", "-fno-omit-frame-pointer"],
    );
    let out = dir.path().join("piped.gmon");
    let mut child = gmon_cmd()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run gmon record");
    // Read one line, then close the pipe, as `head -n 1` does.
    {
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read a line");
        assert_eq!(line, "line\n");
    }
    let run = child.wait_with_output().expect("wait for gmon record");
    // 128 + 13: the program died by SIGPIPE, as without the runtime.
    assert_eq!(
        run.status.code(),
        Some(141),
        "{:?}: {}",
        run.status,
        text(&run)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(out.is_file(), "no profile: {}", text(&run));
    assert_gprof_reads_spin(&prog, &out);
}

/// Installs a clean-up handler for SIGTERM (as `sort` does: only over a disposition that is not
/// SIG_IGN) that sets SIG_DFL and raises the signal again, then sends itself SIGTERM after 0.3 s
/// of CPU time. Without profiling it prints "cleaned" and dies by SIGTERM.
const CLEANS_UP: &str = r#"
#include <signal.h>
#include <time.h>
#include <unistd.h>
/* Blocked in its own handler, the raised signal is delivered when the handler returns. */
static void cleanup(int sig) {
    write(1, "cleaned\n", 8);
    signal(sig, SIG_DFL);
    raise(sig);
}
int main(void) {
    struct sigaction old;
    sigaction(SIGTERM, 0, &old);
    if (old.sa_handler != SIG_IGN) signal(SIGTERM, cleanup);
    alarm(60);
    while (clock() < CLOCKS_PER_SEC * 3 / 10) spin();
    kill(getpid(), SIGTERM);
    write(2, "survived the signal\n", 20);
    return 3;
}
"#;

#[test]
fn a_clean_up_handler_that_raises_again_keeps_the_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "cleans_up",
        &spinning(CLEANS_UP),
        &["-O1", "-fno-omit-frame-pointer"],
    );
    let out = dir.path().join("cleans_up.gmon");
    let run = gmon_cmd()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .output()
        .expect("run gmon record");
    // The program's handler ran, the signal it raised again ended the process by SIGTERM
    // (128 + 15), and the runtime, standing in for the SIG_DFL it set, wrote the profile.
    assert_eq!(
        run.status.code(),
        Some(143),
        "{:?}: {}",
        run.status,
        text(&run)
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout), "cleaned\n");
    assert!(
        !String::from_utf8_lossy(&run.stderr).contains("survived"),
        "{}",
        text(&run)
    );
    assert!(out.is_file(), "no profile: {}", text(&run));
    assert_gprof_reads_spin(&prog, &out);
}

/// Prints, for SIGINT, SIGTERM, SIGHUP and SIGPIPE, what `sigaction` and `signal` report as
/// the current disposition.
const DISPOSITIONS: &str = r#"
#include <signal.h>
#include <stdio.h>
static void h(int s) { (void)s; }
static const char *name(void (*f)(int)) {
    return f == SIG_DFL ? "default" : f == SIG_IGN ? "ignored" : "handler";
}
int main(void) {
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (int i = 0; i < 4; i++) {
        struct sigaction old;
        sigaction(sigs[i], NULL, &old);
        void (*was)(int) = signal(sigs[i], h);
        signal(sigs[i], was);
        printf("%d %s %s %d\n", sigs[i], name(old.sa_handler), name(was), old.sa_flags);
    }
    return 0;
}
"#;

#[test]
fn the_program_sees_the_default_disposition_the_runtime_stands_in_for() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(dir.path(), "dispositions", DISPOSITIONS, &["-O1"]);
    let defaults = |cmd: &mut Command| {
        // SAFETY: signal(2) is async-signal-safe; the runner's own dispositions (a background
        // job's ignored SIGINT) must not decide the test.
        unsafe {
            cmd.pre_exec(|| {
                for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                    libc::signal(s, libc::SIG_DFL);
                }
                Ok(())
            });
        }
    };
    let mut plain = Command::new(&prog);
    defaults(&mut plain);
    let plain = plain.output().expect("run the program");
    let mut recorded = gmon_cmd();
    recorded
        .arg("record")
        .arg("-o")
        .arg(dir.path().join("d.gmon"))
        .arg("--")
        .arg(&prog);
    defaults(&mut recorded);
    let recorded = recorded.output().expect("run gmon record");
    assert!(recorded.status.success(), "{}", text(&recorded));
    let plain = String::from_utf8_lossy(&plain.stdout).into_owned();
    assert_eq!(plain.matches(" default default 0\n").count(), 4, "{plain}");
    assert_eq!(String::from_utf8_lossy(&recorded.stdout), plain);
}

/// Builds `tests/programs/NAME.c` into `dir`.
fn suite_program(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.c"));
    let source = std::fs::read_to_string(&src).expect("program source");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let flag = format!("-I{}", include.display());
    compile_c(dir, name, &source, &["-O1", &flag])
}

/// Names of the files in `dir`, sorted.
pub(crate) fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

#[test]
fn a_command_killed_by_a_signal_gives_128_plus_the_signal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = suite_program(dir.path(), "crash");
    for (arg, code) in [("segv", 139), ("kill", 137)] {
        let out = dir.path().join(format!("{arg}.gmon"));
        let run = gmon_cmd()
            .args(["record", "-o"])
            .arg(&out)
            .arg("--")
            .arg(&prog)
            .arg(arg)
            .output()
            .expect("run gmon record");
        assert_eq!(run.status.code(), Some(code), "{arg}: {}", text(&run));
        // The profile is lost with the process; that is a note, not gmon record's failure.
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains("wrote no profile"), "{err}");
        assert!(err.contains(&format!("signal {}", code - 128)), "{err}");
        assert!(!out.exists());
    }
}

#[test]
fn files_the_run_did_not_write_are_never_deleted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let keep = dir.path().join("results.1");
    std::fs::write(&keep, "keep\n").expect("write");
    let old_style = dir.path().join("results.12345");
    std::fs::write(&old_style, "mine too\n").expect("write");
    let run = gmon_cmd()
        .current_dir(dir.path())
        .args(["record", "-o", "results", "--", "/bin/true"])
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(std::fs::read(&keep).expect("results.1 kept"), b"keep\n");
    assert_eq!(std::fs::read(&old_style).expect("kept"), b"mine too\n");
    assert_eq!(
        listing(dir.path()),
        ["results", "results.1", "results.12345", "results.gmonx"]
    );
}

#[test]
fn what_cannot_be_recorded_is_refused_before_it_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let marker = d.join("ran");
    let touch = |extra: &[&str], out: &str| {
        let mut c = gmon_cmd();
        c.current_dir(d)
            .args(["record", "-o", out])
            .args(extra)
            .arg("--")
            .arg("touch")
            .arg(&marker);
        c.output().expect("run gmon record")
    };
    // An output directory that does not exist: refused, nothing run.
    let run = touch(&[], "/nonexistent/dir/x.out");
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(text(&run).contains("/nonexistent/dir/x.out: cannot write the profile there"));
    assert!(!marker.exists(), "the command ran");
    // -o -: a usage error.
    let run = touch(&[], "-");
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(!marker.exists(), "the command ran");
    // --hz out of range: a usage error.
    let run = touch(&["--hz", "0"], "x.out");
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));

    // Not found (127) and not executable (126), as a shell says.
    let run = gmon_cmd()
        .current_dir(d)
        .args(["record", "--", "no-such-command-gmon-test"])
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(127), "{}", text(&run));
    assert!(text(&run).contains("command not found"), "{}", text(&run));
    let plain = d.join("plain.txt");
    std::fs::write(&plain, "not a program\n").expect("write");
    let run = gmon_cmd()
        .current_dir(d)
        .args(["record", "--"])
        .arg(&plain)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(126), "{}", text(&run));

    // A static program: LD_PRELOAD cannot reach it.
    let stat = compile_c(d, "static", "int main(void) { return 0; }\n", &["-static"]);
    let run = gmon_cmd()
        .current_dir(d)
        .args(["record", "--"])
        .arg(&stat)
        .output()
        .expect("run");
    if stat.is_file() {
        assert_eq!(run.status.code(), Some(1), "{}", text(&run));
        let t = text(&run);
        assert!(
            t.contains("statically linked") && t.contains("gmon-write"),
            "{t}"
        );
    }
    // Programs of another architecture or word size (testdata's cross builds, copied so that
    // they are executable): the runtime cannot be loaded into them, nothing is run, and the
    // message names both architectures. Before, an aarch64 program was handed to the kernel,
    // which refused it, and posix_spawn ran it as a shell script.
    let cross = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/cross");
    for (case, arch) in [
        ("cxx-aarch64-O2", "AARCH64 (64-bit)"),
        ("recurse-i686-O2", "386 (32-bit)"),
    ] {
        let prog = d.join(case);
        std::fs::copy(cross.join(case).join("prog"), &prog).expect("copy a cross program");
        std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let run = gmon_cmd()
            .current_dir(d)
            .args(["record", "--"])
            .arg(&prog)
            .output()
            .expect("run");
        let t = text(&run);
        assert_eq!(run.status.code(), Some(1), "{case}: {t}");
        assert!(
            t.contains(&format!("an executable for {arch}")) && t.contains("nothing was run"),
            "{case}: {t}"
        );
        std::fs::remove_file(&prog).expect("rm");
    }
    assert_eq!(listing(d), ["plain.txt", "static", "static.c"]);
}

/// Whether this test runs as root; says SKIPPED (`why`) otherwise.
pub(crate) fn root_or_skip(test: &str, why: &str) -> bool {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        runtime_common::skip(test, why);
    }
    root
}

#[test]
fn a_set_uid_program_is_refused_with_a_pointer_to_linking_gmon_write() {
    if !root_or_skip(
        "set-uid refusal",
        "needs root to make a program set-uid to another user",
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(dir.path(), "suid", "int main(void) { return 0; }\n", &[]);
    // SAFETY: a NUL-terminated path; chown to nobody (65534) and then set-uid.
    let c = std::ffi::CString::new(prog.to_str().expect("utf-8")).expect("path");
    assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o4755))
        .expect("chmod");
    let run = gmon_cmd()
        .current_dir(dir.path())
        .args(["record", "--"])
        .arg(&prog)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let t = text(&run);
    assert!(
        t.contains("set-uid") && t.contains("link the program with"),
        "{t}"
    );
    assert!(!dir.path().join("gmon.out").exists());
}

#[test]
fn a_copy_of_the_gmon_binary_alone_records_a_profile() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let lone = dir.path().join("bin");
    std::fs::create_dir(&lone).expect("mkdir");
    let copy = lone.join("gmon");
    std::fs::copy(gmon(), &copy).expect("copy gmon");
    let cache = dir.path().join("cache");
    let prog = build_program(dir.path());
    let out = dir.path().join("lone.gmon");
    let run_copy = || {
        Command::new(&copy)
            .env_remove("GMON_WRITE_LIB")
            .env("XDG_CACHE_HOME", &cache)
            .args(["record", "-o"])
            .arg(&out)
            .arg("--")
            .arg(&prog)
            .output()
            .expect("run the copy")
    };
    let run = run_copy();
    assert!(run.status.success(), "{}", text(&run));
    assert!(read_sidecar(&out).counters.samples > 500, "{}", text(&run));
    assert_eq!(
        listing(&lone),
        ["gmon"],
        "nothing was written next to the binary"
    );
    // The cache: gmon/<hash>/libgmon_write.so, directories 0700.
    let hashes = listing(&cache.join("gmon"));
    assert_eq!(hashes.len(), 1, "{hashes:?}");
    let hash_dir = cache.join("gmon").join(&hashes[0]);
    for d in [cache.join("gmon"), hash_dir.clone()] {
        let mode = std::fs::metadata(&d).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", d.display());
    }
    let lib = hash_dir.join("libgmon_write.so");
    let embedded = gmon_tools::record::runtime::embedded_library();
    assert!(
        std::fs::read(&lib).expect("cached library") == embedded,
        "the cached library differs"
    );

    // A damaged copy is replaced, not used.
    std::fs::write(&lib, b"not a library").expect("damage");
    let run = run_copy();
    assert!(run.status.success(), "{}", text(&run));
    assert!(
        std::fs::read(&lib).expect("cached library") == embedded,
        "the cached library differs"
    );
    // Also when it keeps its length (one byte changed in place, which moves its modification
    // time off the stamp gmon gave it), and when it only lost the stamp (the bytes are then
    // compared, found right and kept).
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&lib)
            .expect("open to damage");
        f.seek(std::io::SeekFrom::Start(embedded.len() as u64 / 2))
            .expect("seek");
        f.write_all(&[!embedded[embedded.len() / 2]])
            .expect("damage one byte");
    }
    assert!(std::fs::read(&lib).expect("damaged") != embedded);
    let run = run_copy();
    assert!(run.status.success(), "{}", text(&run));
    assert!(read_sidecar(&out).counters.samples > 500, "{}", text(&run));
    assert!(
        std::fs::read(&lib).expect("cached library") == embedded,
        "the cached library differs"
    );
    std::fs::File::options()
        .write(true)
        .open(&lib)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()))
        .expect("touch");
    let run = run_copy();
    assert!(run.status.success(), "{}", text(&run));
    assert!(
        std::fs::read(&lib).expect("cached library") == embedded,
        "the cached library differs"
    );

    // A link planted at the name is replaced; its target is never written.
    let target = dir.path().join("victim");
    std::fs::write(&target, b"victim").expect("victim");
    std::fs::remove_file(&lib).expect("rm");
    std::os::unix::fs::symlink(&target, &lib).expect("plant link");
    let run = run_copy();
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(std::fs::read(&target).expect("victim"), b"victim");
    assert!(!std::fs::symlink_metadata(&lib).expect("lib").is_symlink());
    assert!(
        std::fs::read(&lib).expect("cached library") == embedded,
        "the cached library differs"
    );
}

#[test]
fn a_cache_others_can_change_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let open = dir.path().join("open");
    std::fs::create_dir(&open).expect("mkdir");
    // World-writable without the sticky bit: anyone could swap gmon/ for their own.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let prog = build_program(dir.path());
    let out = dir.path().join("open.gmon");
    // The next place in line is used instead: never a copy in the run's own directory,
    // removed at the end while a process left running still preloads it.
    let home = dir.path().join("home");
    std::fs::create_dir(&home).expect("mkdir");
    let run = Command::new(gmon())
        .env_remove("GMON_WRITE_LIB")
        .env("XDG_CACHE_HOME", &open)
        .env("HOME", &home)
        .args(["record", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .output()
        .expect("run");
    assert!(run.status.success(), "{}", text(&run));
    let t = text(&run);
    assert!(
        t.contains("not cached") && t.contains("can be changed by another user"),
        "{t}"
    );
    assert!(read_sidecar(&out).counters.samples > 500, "{t}");
    assert_eq!(listing(&home.join(".cache/gmon")).len(), 1, "{t}");
}

#[test]
fn children_are_followed_by_default_and_not_with_no_inherit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let spin = compile_c(
        d,
        "spin",
        "int main(void) { volatile long x = 0; for (long i = 0; i < 150000000; i++) x += i; return 0; }\n",
        &[],
    );
    // bash runs spin as a child, then loops itself: it has samples of its own, so its
    // executable keeps OUT and spin gets OUT.spin.
    let script = format!(
        "{}; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
        spin.display()
    );
    let run = gmon_cmd()
        .current_dir(d)
        .args(["record", "-o", "tree.gmon", "--", "bash", "-c", &script])
        .output()
        .expect("run");
    assert!(run.status.success(), "{}", text(&run));
    let names = listing(d);
    assert!(
        names.contains(&"tree.gmon".to_string()) && names.contains(&"tree.gmon.spin".to_string()),
        "{names:?}\n{}",
        text(&run)
    );
    let child = read_sidecar(&d.join("tree.gmon.spin"));
    assert!(child.counters.samples > 100, "{:?}", child.counters);
    assert!(child.matches_gmon(&std::fs::read(d.join("tree.gmon.spin")).expect("read")));

    let run = gmon_cmd()
        .current_dir(d)
        .args([
            "record",
            "--no-inherit",
            "-o",
            "first.gmon",
            "--",
            "bash",
            "-c",
            &script,
        ])
        .output()
        .expect("run");
    assert!(run.status.success(), "{}", text(&run));
    let firsts: Vec<String> = listing(d)
        .into_iter()
        .filter(|n| n.starts_with("first.gmon"))
        .collect();
    assert_eq!(firsts, ["first.gmon", "first.gmon.gmonx"], "{}", text(&run));
    let sidecar = read_sidecar(&d.join("first.gmon"));
    assert!(
        sidecar
            .main_object()
            .is_some_and(|m| m.path.ends_with("bash")),
        "{:?}",
        sidecar.main_object()
    );
}

#[test]
fn a_program_behind_a_shell_shim_leaves_one_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let prog = build_program(d);
    // What pyenv's shims do: a shell runs a few helpers, then execs the real program.
    let shim = d.join("shim");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8; do /bin/true; done\nbase=$(basename \"$0\")\nexec {} \"$@\"\n",
            prog.display()
        ),
    )
    .expect("write shim");
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let run = gmon_cmd()
        .current_dir(d)
        .args(["record", "-o", "py.out", "--"])
        .arg(&shim)
        .output()
        .expect("run");
    assert!(run.status.success(), "{}", text(&run));
    // The shell's own work before its exec, when sampled, is kept in a file of its own
    // (spec/runtime.md §4.5, "exec"): a few samples, never OUT.
    let sh = std::fs::canonicalize("/bin/sh").expect("/bin/sh");
    let sh_out = format!(
        "py.out.{}",
        sh.file_name().unwrap_or_default().to_string_lossy()
    );
    // So is a helper's (`basename`, `true`): a process of 1 ms is sampled with probability
    // 1 ms / period (spec/runtime.md §4.1, "Random first period").
    let helpers = [
        sh_out.clone(),
        "py.out.basename".into(),
        "py.out.true".into(),
    ];
    let outs: Vec<String> = listing(d)
        .into_iter()
        .filter(|n| n.starts_with("py.out") && !helpers.iter().any(|h| n.starts_with(h)))
        .collect();
    // The program exec'd by the shim keeps the shell's pid: it is the first process.
    assert_eq!(outs, ["py.out", "py.out.gmonx"], "{}", text(&run));
    let sidecar = read_sidecar(&d.join("py.out"));
    assert!(
        sidecar
            .main_object()
            .is_some_and(|m| m.path.ends_with("/split")),
        "{:?}",
        sidecar.main_object()
    );
    let err = String::from_utf8_lossy(&run.stderr);
    // The eight `true`s: each sampled with the probability its CPU time gives; those that
    // were not are said.
    if !d.join("py.out.true").exists() {
        assert!(err.contains("had no samples: no file"), "{err}");
    }
}

/// `gmon flame OUT OUT.*` of a one-program run names OUT and OUT.gmonx: the sidecar beside its
/// profile is read with it, not refused as an operand (the process-tree form, spec/stacks.md
/// §10, for a tree of one executable). Alone, a sidecar is still "not a gmon.out profile".
#[test]
fn a_sidecar_named_beside_its_profile_is_read_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = build_program(dir.path());
    let out = dir.path().join("one.gmon");
    let run = record(&out, [&prog]);
    assert!(run.status.success(), "{}", text(&run));
    let sidecar = dir.path().join("one.gmon.gmonx");
    for cmd in [&["flame", "--folded"][..], &["pprof", "-o", "-"][..]] {
        let both = gmon_cmd()
            .args(cmd)
            .arg(&out)
            .arg(&sidecar)
            .output()
            .expect("run gmon");
        assert!(both.status.success(), "{cmd:?}: {}", text(&both));
        let alone = gmon_cmd().args(cmd).arg(&out).output().expect("run gmon");
        assert_eq!(both.stdout, alone.stdout, "{cmd:?}");
    }
    let refused = gmon_cmd()
        .args(["flame", "--folded"])
        .arg(&sidecar)
        .output()
        .expect("run gmon");
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("not a gmon.out profile"),
        "{}",
        text(&refused)
    );
}
