//! The C++ demangler against libiberty's `cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI)` (what
//! GNU gprof prints). `testdata/demangle/cases.tsv` holds `mangled<TAB>expected` rows written by
//! `scripts/demangle-check.py` from libiberty itself; `DEMANGLE_CASES=FILE` checks another such
//! file instead (the script passes all symbols of many binaries) and `DEMANGLE_MISMATCHES=FILE`
//! receives the rows that differ as `mangled<TAB>expected<TAB>ours`.

use gmon_tools::gprof::demangle::{Style, demangle};
use std::path::PathBuf;

#[test]
fn demangler_matches_libiberty() {
    let path = std::env::var_os("DEMANGLE_CASES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/demangle/cases.tsv")
        });
    let text = std::fs::read_to_string(&path).expect("read the cases file");
    let mut total = 0usize;
    let mut bad = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (mangled, expected) = line.split_once('\t').expect("a TAB in every row");
        total += 1;
        let ours = demangle(mangled, Style::Auto).unwrap_or_else(|| mangled.to_string());
        if ours != expected {
            bad.push(format!("{mangled}\t{expected}\t{ours}\n"));
        }
    }
    if let Some(out) = std::env::var_os("DEMANGLE_MISMATCHES") {
        std::fs::write(out, bad.concat()).expect("write the mismatches");
    }
    eprintln!("demangle: {} of {total} differ", bad.len());
    assert!(total > 0, "no cases in {}", path.display());
    assert!(bad.is_empty(), "mismatches:\n{}", bad.concat());
}
