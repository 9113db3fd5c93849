//! The demangler against libiberty, which GNU gprof prints through: `cplus_demangle(name,
//! DMGL_PARAMS | DMGL_ANSI)` for the default style, and the same call with the Java style
//! (`--demangle=java`, libiberty's `java_demangle_v3`), and the GNAT decoder of
//! `--demangle=gnat`. `testdata/demangle/cases.tsv`, `cases-java.tsv` and `cases-gnat.tsv` hold
//! `mangled<TAB>expected` rows written by `scripts/demangle-check.py` from libbfd's own
//! `bfd_demangle` (expected = the mangled name where it does not demangle it).
//!
//! `DEMANGLE_CASES=FILE` checks another such file instead (the script passes all symbols of
//! many binaries), in the style `DEMANGLE_STYLE` names (`auto` unless set), and
//! `DEMANGLE_MISMATCHES=FILE` receives the rows that differ as `mangled<TAB>expected<TAB>ours`.

use gmon_demangle::{Style, demangle};
use std::path::{Path, PathBuf};

/// Checks every row of `path` in `style`; returns (rows, mismatching rows).
fn check(path: &Path, style: Style) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read the cases file {}: {e}", path.display()));
    let mut total = 0usize;
    let mut bad = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (mangled, expected) = line
            .split_once('\t')
            .unwrap_or_else(|| panic!("no TAB in a row of {}: {line}", path.display()));
        total += 1;
        let ours = demangle(mangled, style).unwrap_or_else(|| mangled.to_string());
        if ours != expected {
            bad.push(format!("{mangled}\t{expected}\t{ours}\n"));
        }
    }
    (total, bad)
}

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/demangle")
        .join(name)
}

#[test]
fn demangler_matches_libiberty() {
    let sets: Vec<(PathBuf, Style)> = match std::env::var_os("DEMANGLE_CASES") {
        Some(p) => {
            let style = std::env::var("DEMANGLE_STYLE").unwrap_or_else(|_| "auto".into());
            let style = Style::from_name(&style)
                .unwrap_or_else(|| panic!("DEMANGLE_STYLE: unknown style {style}"));
            vec![(PathBuf::from(p), style)]
        }
        None => vec![
            (testdata("cases.tsv"), Style::Auto),
            (testdata("cases-java.tsv"), Style::Java),
            (testdata("cases-gnat.tsv"), Style::Gnat),
        ],
    };
    let mut all_bad = Vec::new();
    for (path, style) in sets {
        // The stress rows nest a thousand levels deep, more than a debug build's 2 MiB test
        // thread holds (a release build needs about 256 KiB).
        let (total, bad) = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn({
                let path = path.clone();
                move || check(&path, style)
            })
            .expect("spawn the checking thread")
            .join()
            .expect("the check does not panic");
        eprintln!("demangle: {} of {total} differ ({style:?})", bad.len());
        assert!(total > 0, "no cases in {}", path.display());
        all_bad.extend(bad);
    }
    if let Some(out) = std::env::var_os("DEMANGLE_MISMATCHES") {
        std::fs::write(out, all_bad.concat()).expect("write the mismatches");
    }
    assert!(all_bad.is_empty(), "mismatches:\n{}", all_bad.concat());
}
