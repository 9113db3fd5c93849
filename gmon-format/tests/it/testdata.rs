//! Every gmon file under `testdata/` reads, and writes back byte for byte.
//!
//! The files are found by walking the directory, so new cases are covered without editing this
//! test; a missing directory is not an error (the checkout may not have generated data yet).

use std::fs;
use std::path::{Path, PathBuf};

/// The repository's `testdata/` directory.
pub fn testdata_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("testdata")
}

/// Every regular file below `dir` (recursively), sorted, or nothing if `dir` does not exist.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Whether a file name looks like a profile: `gmon*.out`, `*.gmon`, `gmon.sum`, or anything in a
/// directory named after a variant.
fn is_profile(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    (name.starts_with("gmon") && (name.ends_with(".out") || name.ends_with(".sum")))
        || name.ends_with(".gmon")
}

/// Whether a profile must read: real runtime output (`gmon*.out`) and the converter's and the
/// spec's examples (`testdata/variants/`, `testdata/spec/`). Other `*.gmon` files (e.g. the
/// hand-made traps of `testdata/extra-cases.sh`, some broken on purpose to test gprof's error
/// messages, and the spec's one-rule files in `testdata/spec/rules/`, whose expected errors
/// `spec_examples.rs` checks) only have to fail cleanly, with an offset, if they do not read.
fn must_read(dir: &Path, path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("gmon")
        || path.starts_with(dir.join("variants"))
        || (path.starts_with(dir.join("spec")) && !path.starts_with(dir.join("spec").join("rules")))
}

#[test]
fn every_testdata_profile_round_trips_byte_exactly() {
    let dir = testdata_dir();
    let files: Vec<PathBuf> = files_below(&dir)
        .into_iter()
        .filter(|p| is_profile(p) && !p.starts_with(dir.join("malformed")))
        .collect();
    let mut failures = Vec::new();
    let (mut round_tripped, mut refused) = (0, 0);
    for path in &files {
        let bytes = fs::read(path).expect("read a testdata file");
        match gmon_format::read(&bytes) {
            Err(e) if must_read(&dir, path) => failures.push(format!("{}: {e}", path.display())),
            Err(e) => {
                // Broken on purpose: the error must still say where.
                if e.offset().is_none() || !e.to_string().starts_with("offset 0x") {
                    failures.push(format!("{}: error without offset: {e}", path.display()));
                }
                refused += 1;
            }
            Ok(p) => match gmon_format::to_vec(&p) {
                Err(e) => failures.push(format!("{}: write: {e}", path.display())),
                Ok(out) if out != bytes => {
                    failures.push(format!("{}: written bytes differ", path.display()))
                }
                Ok(_) => round_tripped += 1,
            },
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!("{round_tripped} testdata profiles round-tripped, {refused} malformed traps refused");
}
