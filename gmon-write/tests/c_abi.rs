//! Builds `c-tests/use_api.c` with gcc against the crate's cdylib and staticlib, runs it, and
//! reads what it wrote with GNU gprof (when installed) and gmon-format.

#![deny(clippy::undocumented_unsafe_blocks)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_format::sidecar::StackKind;

/// Builds `c-tests/use_api.c` into `dir/name`, linked with `link` (the library's arguments).
fn build_use_api(dir: &Path, name: &str, link: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/use_api.c");
    let inc = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let prog = dir.join(name);
    let mut args = vec![
        "-O1",
        "-fno-omit-frame-pointer",
        "-I",
        inc.to_str().expect("utf-8 path"),
        src.to_str().expect("utf-8 path"),
        "-o",
        prog.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(link);
    gcc(&args);
    prog
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

/// Runs the program with `walk` ("fp" selects `GMON_FRAME_POINTERS`, "dwarf" the default) and
/// checks what it wrote.
fn run_and_check(prog: &Path, env_lib: Option<&Path>, dir: &Path, walk: &str) {
    let out = dir.join("c.gmon");
    let mut cmd = Command::new(prog);
    cmd.arg(&out).arg(walk).current_dir(dir);
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
    let ticks: u64 = profile.histograms().map(|h| h.total()).sum();
    assert!(ticks > 100, "only {ticks} ticks in the histogram");
    let sidecar = common::read_sidecar(&out);
    assert!(sidecar.matches_gmon(&bytes));
    assert!(!sidecar.stacks.is_empty(), "GMON_STACKS recorded no stacks");
    // The walk asked for is the one recorded: frame-pointer stacks are never said to be
    // complete, and unwound snapshots of this small program reach main.
    let kinds = &sidecar.stack_kinds;
    let by_fp = |k: &StackKind| *k == StackKind::FRAME_POINTER || *k == StackKind::TRUNCATED;
    if walk == "fp" {
        assert!(kinds.iter().all(by_fp), "{walk}: {kinds:?}");
    } else {
        assert!(kinds.contains(&StackKind::COMPLETE), "{walk}: {kinds:?}");
    }

    // GNU gprof reads it unchanged and puts hot_loop on top.
    match Command::new("gprof")
        .args(["-b", "-p"])
        .arg(prog)
        .arg(&out)
        .output()
    {
        Err(e) => common::skip(
            "c_abi",
            &format!("GNU gprof could not run ({e}): no gprof check"),
        ),
        Ok(g) => {
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
}

#[test]
fn c_program_uses_the_shared_library() {
    let lib = common::library_dir();
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = build_use_api(
        dir.path(),
        "use_api_dyn",
        &["-L", lib.to_str().expect("utf-8 path"), "-lgmon_write"],
    );
    // The default walk, then GMON_FRAME_POINTERS: each run's sidecar must say which it used.
    run_and_check(&prog, Some(&lib), dir.path(), "dwarf");
    run_and_check(&prog, Some(&lib), dir.path(), "fp");
}

#[test]
fn c_program_uses_the_static_library() {
    let lib = common::library_dir();
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = lib.join("libgmon_write.a");
    let prog = build_use_api(
        dir.path(),
        "use_api_static",
        &[
            archive.to_str().expect("utf-8 path"),
            "-lpthread",
            "-ldl",
            "-lm",
        ],
    );
    run_and_check(&prog, None, dir.path(), "dwarf");
}
