//! `gmon record` on the programs people run: distribution programs (`sort`, `gzip`, `xz`,
//! `python3`, `bash`, a shell script running several children, `make -j2`) and C programs that use signals
//! themselves (tests/programs/). Each runs twice, as it is and under `gmon record` at 1 kHz, and
//! must:
//! * exit with the same status and write byte-identical output (stdout and its files);
//! * leave profiles that `gmon dump` and GNU gprof (`gprof -i`) read;
//! * have samples within 10 % of its CPU time (from `wait4`'s resource usage of the recorded
//!   run) times the rate;
//! * on python3, sort and gzip, have at least 95 % of the samples in named functions (gmon
//!   record's summary: symbols, or `OBJECT+0xSTART` from the unwind table for sort and gzip,
//!   whose symbols Debian ships only in the dbgsym archive).
//!
//! Each test prints one row to stderr (`--nocapture` shows it): status, output, samples /
//! expected, files written, and the CPU-time ratio of the two runs.

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use gmon_tools::record::{RecordOptions, Recorded, record, runtime};

const HZ: u32 = 1000;

fn gmon() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gmon"))
}

fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// The runtime library embedded in gmon, installed once in the tests' cache directory.
fn library() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        runtime::install(&scratch().join("record-cache/gmon/suite"), true)
            .expect("install the runtime library")
    })
    .clone()
}

/// 2 million lines of pseudo-random words and numbers (about 30 MB), made once.
fn lines_file() -> PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = scratch().join("record-suite-lines.txt");
        let mut text = String::with_capacity(32 << 20);
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        const WORDS: [&str; 8] = [
            "alpha", "Bravo", "charlie", "delta-9", "écho", "foxtrot", "Golf", "hotel",
        ];
        for _ in 0..2_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = WORDS[(x % 8) as usize];
            text.push_str(&format!("{w} {} {:x}\n", x % 1_000_003, x >> 40));
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).expect("write lines");
        std::fs::rename(&tmp, &path).expect("rename lines");
        path
    })
    .clone()
}

/// The first `n` bytes of [`lines_file`], in `dir`.
fn head_of_lines(dir: &Path, n: usize) -> PathBuf {
    let bytes = std::fs::read(lines_file()).expect("lines");
    let path = dir.join("input.txt");
    std::fs::write(&path, &bytes[..n.min(bytes.len())]).expect("write input");
    path
}

/// Builds `tests/programs/NAME.c` into `dir`.
fn c_program(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.c"));
    let exe = dir.join(name);
    let cc = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer"])
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("gcc is installed");
    assert!(
        cc.status.success(),
        "gcc {name}: {}",
        String::from_utf8_lossy(&cc.stderr)
    );
    exe
}

/// The python3 interpreter itself: a `python3` on PATH may be a shim (pyenv's runs dozens of
/// bash helpers before it execs the interpreter; `a_program_behind_a_shell_shim_leaves_one_
/// profile` in record.rs covers that case), and this suite measures the interpreter.
fn python3() -> OsString {
    let out = Command::new("python3")
        .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(out.status.success());
    std::os::unix::ffi::OsStringExt::from_vec(out.stdout)
}

/// Whether `tool` is on PATH; says SKIPPED otherwise.
fn have(test: &str, tool: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
    if !found {
        common::skip(
            test,
            &format!("{tool} is not installed (.ci/run installs it)"),
        );
    }
    found
}

/// One run's observable behaviour.
#[derive(Debug)]
struct Observed {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: Vec<u8>,
    files: Vec<Vec<u8>>,
    cpu: Duration,
}

/// A program run: `argv` in `dir`, its stdout and the files `outputs` compared.
struct Case<'a> {
    name: &'a str,
    dir: &'a Path,
    argv: Vec<OsString>,
    outputs: Vec<PathBuf>,
    /// The least share of samples gmon record's summary must name (issue 11: 95% on python3,
    /// sort and gzip), counting `OBJECT+0xSTART` names when `fallback` is set (stripped
    /// programs whose debug files the distribution ships only in its dbgsym archive).
    named: Option<Named>,
}

#[derive(Clone, Copy)]
struct Named {
    least: f64,
    fallback: bool,
}

impl Case<'_> {
    /// `sh -c 'exec "$@" > STDOUT'`: the shell execs the program (same pid, so the program is
    /// the recorded command's first process) with stdout in a file.
    fn wrapped(&self, stdout: &Path) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec![
            "sh".into(),
            "-c".into(),
            "out=$1; shift; exec \"$@\" > \"$out\"".into(),
            "sh".into(),
            stdout.into(),
        ];
        v.extend(self.argv.iter().cloned());
        v
    }

    fn clean_outputs(&self) {
        for o in &self.outputs {
            let _ = std::fs::remove_file(o);
        }
    }

    fn collect(&self, stdout: &Path) -> (Vec<u8>, Vec<Vec<u8>>) {
        let out = std::fs::read(stdout).expect("stdout file");
        let files = self
            .outputs
            .iter()
            .map(|o| std::fs::read(o).unwrap_or_else(|e| panic!("{}: {e}", o.display())))
            .collect();
        (out, files)
    }

    fn plain(&self) -> Observed {
        use std::os::unix::process::ExitStatusExt;
        self.clean_outputs();
        let stdout = self.dir.join("plain.stdout");
        let argv = self.wrapped(&stdout);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(self.dir);
        let w = gmon_tools::record::signals::run(&mut cmd).expect("run the program");
        let (stdout, files) = self.collect(&stdout);
        Observed {
            code: w.status.code(),
            signal: w.status.signal(),
            stdout,
            files,
            cpu: w.cpu,
        }
    }

    fn recorded(&self, out: &Path) -> (Observed, Recorded) {
        use std::os::unix::process::ExitStatusExt;
        self.clean_outputs();
        let stdout = self.dir.join("recorded.stdout");
        let argv = self.wrapped(&stdout);
        let opts = RecordOptions {
            library: Some(library()),
            ..RecordOptions::new(out)
        };
        let rec = record(&opts, &argv).expect("gmon record runs the program");
        let (stdout, files) = self.collect(&stdout);
        (
            Observed {
                code: rec.status.code(),
                signal: rec.status.signal(),
                stdout,
                files,
                cpu: rec.cpu,
            },
            rec,
        )
    }

    /// Runs both ways and checks everything the module promises.
    fn check(&self) {
        let plain = self.plain();
        let out = self.dir.join(format!("{}.gmon", self.name));
        let (prof, rec) = self.recorded(&out);
        let same_status = (plain.code, plain.signal) == (prof.code, prof.signal);
        let same_output = plain.stdout == prof.stdout && plain.files == prof.files;
        let expected = prof.cpu.as_secs_f64() * f64::from(HZ);
        let samples = rec.samples() as f64;
        let ratio = prof.cpu.as_secs_f64() / plain.cpu.as_secs_f64().max(1e-3);
        let names: Vec<String> = rec
            .files
            .iter()
            .map(|f| {
                f.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        eprintln!(
            "ROW {:<14} status {:<4} output {:<4} samples {:>6}/{:<6.0} ({:+.1}%) named {:.1}%+{:.1}% files {} [{}] procs {}+{} cpu {:.3}s/{:.3}s ({:+.1}%)",
            self.name,
            if same_status { "same" } else { "DIFF" },
            if same_output { "same" } else { "DIFF" },
            samples,
            expected,
            (samples / expected.max(1.0) - 1.0) * 100.0,
            rec.top.by_symbol as f64 * 100.0 / rec.top.total.max(1) as f64,
            rec.top.by_unwind_table as f64 * 100.0 / rec.top.total.max(1) as f64,
            rec.files.len(),
            names.join(" "),
            rec.processes(),
            rec.idle.processes,
            prof.cpu.as_secs_f64(),
            plain.cpu.as_secs_f64(),
            (ratio - 1.0) * 100.0,
        );
        assert!(
            same_status,
            "{}: exit {:?}/{:?} unprofiled, {:?}/{:?} under gmon record",
            self.name, plain.code, plain.signal, prof.code, prof.signal
        );
        assert!(
            plain.stdout == prof.stdout,
            "{}: stdout differs:\n{}\n---\n{}",
            self.name,
            String::from_utf8_lossy(&plain.stdout),
            String::from_utf8_lossy(&prof.stdout)
        );
        assert!(
            plain.files == prof.files,
            "{}: output files differ",
            self.name
        );
        assert!(
            !rec.files.is_empty(),
            "{}: no profile: {:?}",
            self.name,
            rec.notes
        );
        assert!(
            (samples - expected).abs() <= expected * 0.10,
            "{}: {samples} samples for {:.3} s of CPU time at {HZ} Hz ({expected:.0} expected)",
            self.name,
            prof.cpu.as_secs_f64()
        );
        for f in &rec.files {
            assert_readers_accept(self.dir, &f.path);
        }
        if let Some(named) = self.named {
            let top = &rec.top;
            let share = if named.fallback {
                top.named_share()
            } else {
                top.by_symbol as f64 / top.total.max(1) as f64
            };
            assert!(
                share >= named.least,
                "{}: {:.1}% of {} samples named ({} by symbol, {} as OBJECT+0xSTART), {:.0}% \
                 wanted; top: {:?}",
                self.name,
                share * 100.0,
                top.total,
                top.by_symbol,
                top.by_unwind_table,
                named.least * 100.0,
                top.functions
            );
        }
    }
}

/// `gmon dump` and GNU gprof (`-i`: the profile's records, with any executable that has
/// symbols) read the profile.
fn assert_readers_accept(dir: &Path, profile: &Path) {
    let dump = Command::new(gmon())
        .arg("dump")
        .arg(profile)
        .stdout(Stdio::null())
        .output()
        .expect("gmon dump");
    assert!(
        dump.status.success(),
        "gmon dump {}: {}",
        profile.display(),
        String::from_utf8_lossy(&dump.stderr)
    );
    let Ok(gprof) = Command::new("gprof")
        .arg("-i")
        .arg(symbols_exe(dir))
        .arg(profile)
        .output()
    else {
        common::skip("record_programs", "GNU gprof is not installed");
        return;
    };
    // One record per sampled cell of the text (spec/runtime.md §1): gprof counts them all.
    let bytes = std::fs::read(profile).expect("the profile");
    let records = gmon_format::read(&bytes)
        .expect("a gmon.out")
        .histograms()
        .count();
    let text = String::from_utf8_lossy(&gprof.stdout);
    assert!(
        gprof.status.success() && text.contains(&format!("\t{records} histogram record")),
        "gprof -i {}: {text}{}",
        profile.display(),
        String::from_utf8_lossy(&gprof.stderr)
    );
}

/// Any executable with a symbol table (gprof insists on one even to list a profile's records).
fn symbols_exe(dir: &Path) -> PathBuf {
    let exe = dir.join("crash");
    if !exe.is_file() {
        c_program(dir, "crash", &[]);
    }
    exe
}

fn os(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

fn path_arg(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

#[test]
fn sort_two_million_lines_in_parallel_to_a_file() {
    if !have("sort", "sort") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let sorted = dir.path().join("sorted.txt");
    let mut argv = os(&["sort", "--parallel=2", "-S", "64M"]);
    argv.push(path_arg(&lines_file()));
    argv.push("-o".into());
    argv.push(path_arg(&sorted));
    Case {
        name: "sort",
        dir: dir.path(),
        argv,
        outputs: vec![sorted],
        named: Some(Named {
            least: 0.95,
            fallback: true,
        }),
    }
    .check();
}

#[test]
fn gzip_best_compression() {
    if !have("gzip", "gzip") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let input = head_of_lines(dir.path(), 12 << 20);
    let mut argv = os(&["gzip", "-9", "-c"]);
    argv.push(path_arg(&input));
    Case {
        name: "gzip-9",
        dir: dir.path(),
        argv,
        outputs: vec![],
        named: Some(Named {
            least: 0.95,
            fallback: true,
        }),
    }
    .check();
}

#[test]
fn xz_compression() {
    if !have("xz", "xz") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let input = head_of_lines(dir.path(), 2 << 20);
    let mut argv = os(&["xz", "-6", "-T1", "-c"]);
    argv.push(path_arg(&input));
    Case {
        name: "xz",
        dir: dir.path(),
        argv,
        outputs: vec![],
        named: None,
    }
    .check();
}

#[test]
fn python3_pure_loop() {
    if !have("python3", "python3") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    Case {
        name: "python3",
        dir: dir.path(),
        argv: [python3()]
            .into_iter()
            .chain(os(&[
                "-c",
                "s = 0\nfor i in range(4_000_000):\n    s += i * i % 7\nprint(s)",
            ]))
            .collect(),
        outputs: vec![],
        named: Some(Named {
            least: 0.95,
            fallback: false,
        }),
    }
    .check();
}

#[test]
fn python3_with_threads() {
    if !have("python3", "python3") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "import threading\n\
        def work(n, out, k):\n    s = 0\n    for i in range(n):\n        s += i % 13\n    out[k] = s\n\
        out = [0] * 4\n\
        ts = [threading.Thread(target=work, args=(3_000_000, out, k)) for k in range(4)]\n\
        [t.start() for t in ts]\n[t.join() for t in ts]\nprint(out)";
    Case {
        name: "python3-thr",
        dir: dir.path(),
        argv: [python3()].into_iter().chain(os(&["-c", script])).collect(),
        outputs: vec![],
        named: Some(Named {
            least: 0.95,
            fallback: false,
        }),
    }
    .check();
}

#[test]
fn bash_loop() {
    if !have("bash", "bash") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    Case {
        name: "bash",
        dir: dir.path(),
        argv: os(&[
            "bash",
            "-c",
            "i=0; s=0; while [ $i -lt 150000 ]; do s=$(( (s + i * i) % 1000003 )); i=$((i+1)); done; echo $s",
        ]),
        outputs: vec![],
        named: None,
    }
    .check();
}

#[test]
fn a_make_style_process_tree() {
    if !(have("make-tree", "gzip") && have("make-tree", "sort")) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let input = head_of_lines(d, 4 << 20);
    let burner = c_program(d, "masked", &["-pthread"]);
    // What a build does: a shell running several tools one after another, some twice.
    let script = d.join("build.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nset -e\nin={in}\nfor n in 1 2; do gzip -6 -c \"$in\" > {d}/part$n.gz; done\n\
             sort \"$in\" > {d}/sorted.txt\n{burner}\necho built\n",
            in = input.display(),
            d = d.display(),
            burner = burner.display()
        ),
    )
    .expect("write script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    Case {
        name: "make-tree",
        dir: d,
        argv: vec![path_arg(&script)],
        outputs: vec![d.join("part1.gz"), d.join("part2.gz"), d.join("sorted.txt")],
        named: None,
    }
    .check();
}

#[test]
fn make_j2_runs_its_recipes_in_parallel() {
    if !(have("make-j2", "make") && have("make-j2", "gzip") && have("make-j2", "sort")) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let input = head_of_lines(d, 6 << 20);
    std::fs::copy(&input, d.join("b.txt")).expect("copy input");
    std::fs::rename(&input, d.join("a.txt")).expect("rename input");
    // Three recipes, two at a time; make runs each tool itself (no shell: no redirection), so
    // the tree is make, two gzip and one sort, one profile per executable.
    std::fs::write(
        d.join("Makefile"),
        "all: a.txt.gz b.txt.gz sorted.txt\n\
         a.txt.gz:\n\tgzip -9 -k -f a.txt\n\
         b.txt.gz:\n\tgzip -9 -k -f b.txt\n\
         sorted.txt:\n\tsort -o sorted.txt a.txt\n",
    )
    .expect("write Makefile");
    Case {
        name: "make-j2",
        dir: d,
        argv: os(&["make", "-s", "-B", "-j2", "-C"])
            .into_iter()
            .chain([path_arg(d)])
            .collect(),
        outputs: vec![d.join("a.txt.gz"), d.join("b.txt.gz"), d.join("sorted.txt")],
        named: None,
    }
    .check();
}

#[test]
fn a_program_with_its_own_sigprof_handler_and_itimer_prof() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = c_program(dir.path(), "selfprof", &[]);
    Case {
        name: "selfprof",
        dir: dir.path(),
        argv: vec![path_arg(&exe)],
        outputs: vec![],
        named: None,
    }
    .check();
}

#[test]
fn worker_threads_that_block_every_signal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = c_program(dir.path(), "masked", &["-pthread"]);
    Case {
        name: "masked",
        dir: dir.path(),
        argv: vec![path_arg(&exe)],
        outputs: vec![],
        named: None,
    }
    .check();
}

#[test]
fn exit_from_a_signal_handler_in_malloc_never_hangs() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = c_program(dir.path(), "exit_in_handler", &[]);
    let plain = Command::new(&exe).status().expect("run");
    assert_eq!(plain.code(), Some(3));
    let out = dir.path().join("exitsig.gmon");
    let runs = 20;
    let mut hung = 0;
    for _ in 0..runs {
        let _ = std::fs::remove_file(&out);
        let mut child = Command::new(gmon())
            .args(["record", "-o"])
            .arg(&out)
            .arg("--")
            .arg(&exe)
            .env("XDG_CACHE_HOME", scratch().join("record-cache"))
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("gmon record");
        let mut status = None;
        // 30 s for a program that ends after 0.3 s: only a deadlock reaches it.
        for _ in 0..3000 {
            if let Some(s) = child.try_wait().expect("wait") {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        match status {
            Some(s) => {
                assert_eq!(s.code(), Some(3), "gmon record's status is the program's");
                assert!(out.is_file(), "exit() runs the at-exit writer");
            }
            None => {
                hung += 1;
                // SAFETY: kill(2) on the process group this test created.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
            }
        }
    }
    eprintln!("ROW exitsig        {hung} of {runs} runs hung");
    assert_eq!(hung, 0, "{hung} of {runs} runs hung");
}
