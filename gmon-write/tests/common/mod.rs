//! Helpers shared by gmon-write's integration tests and, through `#[path]`, by gmon-tools'
//! `record` tests, which need the same runtime library. Uses only std and gmon-format, and
//! finds gmon-write's sources from the including crate's directory (both are workspace members
//! next to each other).

// Every test binary uses only some of these helpers; the rest would warn as dead code there.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use gmon_format::Sidecar;

/// The sidecar (`<gmon>.gmonx`) written with a gmon.out file, which must exist and be valid.
pub fn read_sidecar(gmon: &Path) -> Sidecar {
    let bytes = std::fs::read(gmon_format::sidecar_path(gmon)).expect("sidecar written");
    gmon_format::read_sidecar(&bytes).expect("valid sidecar")
}

/// The directory holding fresh copies of the runtime library files `libs` (e.g.
/// `libgmon_write.so`) for the cargo profile directory `profile_dir` (`<target>/<profile>`):
/// `None` when `cargo build` put them there and they are newer than gmon-write's sources.
///
/// A plain `cargo test` builds only gmon-write's rlib, so otherwise this builds the library
/// into `<profile_dir>/gmon-write-runtime` (the outer cargo holds the lock of the main target
/// directory while tests run) and returns its profile directory.
pub fn runtime_library_dir(profile_dir: &Path, libs: &[&str]) -> Option<PathBuf> {
    let newest = newest_runtime_source();
    let fresh = |lib: &str| {
        profile_dir
            .join(lib)
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|built| built >= newest)
    };
    if libs.iter().all(|lib| fresh(lib)) {
        return None;
    }
    let nested = profile_dir.join("gmon-write-runtime");
    let release = profile_dir.ends_with("release");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "-p", "gmon-write", "--lib"])
        .env("CARGO_TARGET_DIR", &nested);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("run cargo");
    assert!(status.success(), "cargo build -p gmon-write failed");
    let dir = nested.join(if release { "release" } else { "debug" });
    for lib in libs {
        assert!(
            dir.join(lib).is_file(),
            "{lib} not built in {}",
            dir.display()
        );
    }
    Some(dir)
}

/// The directory holding fresh `libgmon_write.{so,a}` for gmon-write's own integration tests.
/// The test binary lives in `<target>/<profile>/deps/`, and `cargo build` puts the libraries in
/// `<profile>/`; see [`runtime_library_dir`] for when they are built elsewhere.
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    runtime_library_dir(dir, &["libgmon_write.so", "libgmon_write.a"])
        .unwrap_or_else(|| dir.to_path_buf())
}

/// Compiles gmon-write's `tests/programs/<name>.c` into `dir/<name>`, with `extra` arguments
/// (libraries) last.
pub fn build_program(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gmon-write/tests/programs")
        .join(format!("{name}.c"));
    let prog = dir.join(name);
    let out = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o"])
        .arg(&prog)
        .arg(&src)
        .args(extra)
        .output()
        .expect("gcc is installed");
    assert!(
        out.status.success(),
        "gcc {name}.c:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    prog
}

/// `cmd` with the runtime preloaded as `gmon record` runs it, writing its profile to `gmon` at
/// `hz`.
pub fn preloaded(mut cmd: Command, gmon: &Path, hz: u32) -> Command {
    cmd.env("LD_PRELOAD", library_dir().join("libgmon_write.so"))
        .env("GMON_RECORD_OUT", gmon)
        .env("GMON_RECORD_HZ", hz.to_string())
        .env_remove("GMON_RECORD_OWNER");
    cmd
}

/// The modification time of the newest file under `gmon-write/src`: a library older than that
/// is stale (e.g. only `--test runtime` was built since the last change) and is rebuilt.
fn newest_runtime_source() -> SystemTime {
    fn walk(dir: &Path, newest: &mut SystemTime) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, newest);
            } else if let Ok(t) = e.metadata().and_then(|m| m.modified()) {
                *newest = (*newest).max(t);
            }
        }
    }
    let mut newest = SystemTime::UNIX_EPOCH;
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../gmon-write/src"),
        &mut newest,
    );
    newest
}

/// Says that a check could not run: written past the test harness's capture (straight to
/// stderr) so that `cargo test` shows it. When `GMON_TEST_NO_SKIP` is set to a non-empty value
/// (`.ci/run` sets it) a skip is a failure instead, so CI never counts an unrun check as passed.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    if std::env::var_os("GMON_TEST_NO_SKIP").is_some_and(|v| !v.is_empty()) {
        panic!("SKIPPED {test}: {why} (GMON_TEST_NO_SKIP is set, so a skip fails)");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}
