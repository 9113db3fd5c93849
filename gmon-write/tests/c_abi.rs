//! Builds `c-tests/use_api.c` with gcc against the crate's cdylib and staticlib, runs it, and
//! reads what it wrote with GNU gprof (when installed) and gmon-format.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding `libgmon_write.{so,a}` for this build. The test binary lives in
/// `<target>/<profile>/deps/`; `cargo build` puts the cdylib and staticlib in `<profile>/`, but a
/// plain `cargo test` builds only the rlib. When they are missing or older than the sources,
/// builds them into `<target>/<profile>/gmon-write-runtime` (shared with gmon-tools' record
/// tests; the outer cargo holds the lock of the main target directory while tests run).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf();
    let fresh = |lib: &Path| {
        lib.metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|built| built >= newest_source())
    };
    if fresh(&dir.join("libgmon_write.so")) && fresh(&dir.join("libgmon_write.a")) {
        return dir;
    }
    let nested = dir.join("gmon-write-runtime");
    let release = dir.ends_with("release");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "-p", "gmon-write", "--lib"])
        .env("CARGO_TARGET_DIR", &nested);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("run cargo");
    assert!(status.success(), "cargo build -p gmon-write failed");
    nested.join(if release { "release" } else { "debug" })
}

/// The modification time of the newest file under `gmon-write/src` (a library older than that
/// is stale: e.g. only `--test runtime` was built since the last change).
fn newest_source() -> std::time::SystemTime {
    fn walk(dir: &Path, newest: &mut std::time::SystemTime) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, newest);
            } else if let Ok(t) = e.metadata().and_then(|m| m.modified()) {
                *newest = (*newest).max(t);
            }
        }
    }
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut newest,
    );
    newest
}

fn gcc(args: &[&str]) {
    let out = Command::new("gcc")
        .args(args)
        .output()
        .expect("gcc is installed");
    assert!(
        out.status.success(),
        "gcc {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run_and_check(prog: &Path, env_lib: Option<&Path>, dir: &Path) {
    let out = dir.join("c.gmon");
    let mut cmd = Command::new(prog);
    cmd.arg(&out).current_dir(dir);
    if let Some(lib) = env_lib {
        cmd.env("LD_LIBRARY_PATH", lib);
    }
    let res = cmd.output().expect("run the C test");
    assert!(
        res.status.success(),
        "C test failed ({}):\n{}{}",
        res.status,
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    let bytes = std::fs::read(&out).expect("gmon.out written by gmon_stop");
    let profile = gmon_format::read(&bytes).expect("valid gmon.out");
    let hist = profile.histograms().next().expect("a histogram");
    assert!(
        hist.total() > 100,
        "only {} ticks in the histogram",
        hist.total()
    );
    let ext = gmon_format::read_extension(
        &std::fs::read(gmon_format::sidecar_path(&out)).expect("sidecar"),
    )
    .expect("valid sidecar");
    assert!(ext.matches_gmon(&bytes));
    assert!(!ext.stacks.is_empty(), "GMON_STACKS recorded no stacks");

    // GNU gprof reads it unchanged and puts hot_loop on top.
    if let Ok(g) = Command::new("gprof")
        .args(["-b", "-p"])
        .arg(prog)
        .arg(&out)
        .output()
    {
        let text = String::from_utf8_lossy(&g.stdout);
        assert!(
            g.status.success(),
            "gprof failed: {}",
            String::from_utf8_lossy(&g.stderr)
        );
        let first = text
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("time"))
            .nth(1)
            .unwrap_or_default();
        assert!(first.ends_with("hot_loop"), "gprof's top function:\n{text}");
    }
}

#[test]
fn c_program_uses_the_shared_library() {
    let lib = library_dir();
    let dir = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/use_api.c");
    let inc = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let prog = dir.path().join("use_api_dyn");
    gcc(&[
        "-O1",
        "-fno-omit-frame-pointer",
        "-I",
        inc.to_str().expect("utf-8 path"),
        src.to_str().expect("utf-8 path"),
        "-o",
        prog.to_str().expect("utf-8 path"),
        "-L",
        lib.to_str().expect("utf-8 path"),
        "-lgmon_write",
    ]);
    run_and_check(&prog, Some(&lib), dir.path());
}

#[test]
fn c_program_uses_the_static_library() {
    let lib = library_dir();
    let dir = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/use_api.c");
    let inc = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let prog = dir.path().join("use_api_static");
    let archive = lib.join("libgmon_write.a");
    gcc(&[
        "-O1",
        "-fno-omit-frame-pointer",
        "-I",
        inc.to_str().expect("utf-8 path"),
        src.to_str().expect("utf-8 path"),
        "-o",
        prog.to_str().expect("utf-8 path"),
        archive.to_str().expect("utf-8 path"),
        "-lpthread",
        "-ldl",
        "-lm",
    ]);
    run_and_check(&prog, None, dir.path());
}
