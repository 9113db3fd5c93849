//! Helpers shared by the gmon-tools integration tests (the modules of `tests/it`; the
//! golden suite, `tests/gprof_golden.rs`, is a binary of its own).

// Every test binary uses only some of these helpers; the rest would warn as dead code there.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gmon_format::Profile;

/// `testdata/cases`, one directory per profiled program.
pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/cases")
}

/// One testdata case's directory (`prog`, `gmon.out`, ...).
pub fn case_dir(name: &str) -> PathBuf {
    cases_dir().join(name)
}

/// `testdata/cross`: the same programs built for other architectures (testdata/cross.sh).
pub fn cross_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/cross")
}

/// Every testdata case that has both a `prog` and a `gmon.out`, sorted (empty when the
/// directory is missing, so each test states how many it needs): the x86-64 cases of
/// `testdata/cases`, then the other architectures' of `testdata/cross`.
pub fn testdata_cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [cases_dir(), cross_dir()]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten())
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.retain(|d| d.join("gmon.out").is_file() && d.join("prog").is_file());
    v.sort();
    v
}

/// The `gmon` binary built for these tests.
pub fn gmon() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("gmon").unwrap()
}

/// Reads a gmon.out file that must be valid.
pub fn read(path: &Path) -> Profile {
    gmon_format::read(&std::fs::read(path).unwrap()).unwrap()
}

/// Runs a command and asserts that it succeeded (showing its stderr when not).
pub fn run_ok(cmd: &mut assert_cmd::Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
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

/// The gprof engine's analysis of one profile with the views' symbol table (gprof's plus the
/// compiler clones its rules leave out: spec/stacks.md §9), computed independently of
/// `gmon_tools::model::load`.
pub fn views_analysis(prog: &Path, profile: Profile) -> gmon_tools::gprof::Analysis {
    let image = gmon_binary::Image::open(prog).unwrap();
    let opts = gmon_tools::gprof::AnalysisOptions::default();
    let functions = gmon_tools::model::ObjectSymbols::open(prog);
    let (table, _) =
        gmon_tools::model::views_symbol_table(&image, functions.as_ref(), &opts).unwrap();
    let mut b = gmon_tools::gprof::AnalysisBuilder::with_symtab(table, &opts);
    b.add_profile("gmon.out", &profile).unwrap();
    b.finish(Some(&image)).unwrap()
}

/// Writes beside `gmon` the sidecar `gmon record` would: the main object `exe` with `build_id`
/// (empty: none recorded), no stacks.
pub fn write_main_object_sidecar(gmon: &Path, exe: &str, build_id: &[u8]) {
    use gmon_format::sidecar::{MappedObject, OBJECT_FLAG_MAIN};
    let sidecar = gmon_format::Sidecar {
        rate_hz: 100,
        objects: vec![MappedObject {
            path: exe.into(),
            build_id: build_id.to_vec(),
            load_bias: 0,
            flags: OBJECT_FLAG_MAIN,
            ranges: Vec::new(),
        }],
        ..Default::default()
    };
    let mut side = Vec::new();
    gmon_format::write_sidecar(&sidecar, &mut side).unwrap();
    std::fs::write(gmon_format::sidecar_path(gmon), side).unwrap();
}

/// Records `args` with `gmon record` (its embedded runtime) into `out`; `None` (after a visible
/// skip) when the program is missing.
pub fn record(test: &str, out: &Path, args: &[&str]) -> Option<()> {
    use std::process::Command;
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gmon"));
    if Command::new(args[0]).arg("--version").output().is_err() {
        skip(test, &format!("{} is not installed", args[0]));
        return None;
    }
    let o = Command::new(&bin)
        .args(["record", "-o"])
        .arg(out)
        .arg("--")
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(())
}

/// A profile of testdata case `case` written to `out`: its `gmon.out` with every histogram bin
/// of function `name` multiplied by `factor` and every other bin by `others`, so that tests can
/// make runs of any size in which one function's share moves.
pub fn scaled_profile(case: &str, name: &str, factor: u64, others: u64, out: &Path) -> PathBuf {
    use gmon_tools::gprof::{Analysis, AnalysisOptions};
    let dir = case_dir(case);
    let p = read(&dir.join("gmon.out"));
    let image = gmon_binary::Image::open(&dir.join("prog")).unwrap();
    let a = Analysis::new(
        &image,
        std::slice::from_ref(&p),
        &AnalysisOptions::default(),
    )
    .unwrap();
    let f = a.functions().find(|f| f.name == name).unwrap();
    let (lo, hi) = (f.addr, f.end_addr);
    let mut scaled = p.clone();
    for r in &mut scaled.records {
        if let gmon_format::Record::Histogram(h) = r {
            let scale = h.scale();
            let low = h.low_pc;
            for (i, b) in h.bins.iter_mut().enumerate() {
                let at = low + ((scale * i as f64) as u64) * 2;
                *b *= if at >= lo && at < hi { factor } else { others };
            }
        }
    }
    std::fs::write(out, gmon_format::to_vec(&scaled).unwrap()).unwrap();
    out.to_path_buf()
}
