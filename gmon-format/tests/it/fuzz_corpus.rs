//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) on stable, with the same checks as the fuzz
//! targets in `fuzz/fuzz_targets/`, so CI covers every tricky input the fuzzer kept (including
//! the inputs of crashes that were fixed).

use std::fs;

use gmon_format::Variant;

use super::fuzz_common::{check, check_convert, options};
use super::testdata::files_below;

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    files_below(&dir)
        .into_iter()
        .map(|p| (p.display().to_string(), fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn read_corpus() {
    for (name, bytes) in corpus("read") {
        check(&name, &bytes, &gmon_format::ReadOptions::new());
    }
}

/// Replays a corpus whose first byte selects options, with the variant forced or not.
fn replay_with_selector(target: &str, variant: Option<Variant>) {
    for (name, data) in corpus(target) {
        let Some((&sel, file)) = data.split_first() else {
            continue;
        };
        check(&name, file, &options(sel, variant));
    }
}

#[test]
fn read_with_corpus() {
    replay_with_selector("read_with", None);
}

#[test]
fn read_gnu_corpus() {
    replay_with_selector("read_gnu", Some(Variant::Gnu));
}

#[test]
fn read_bsd44_corpus() {
    replay_with_selector("read_bsd44", Some(Variant::Bsd44));
}

#[test]
fn read_bsd_old_corpus() {
    replay_with_selector("read_bsd_old", Some(Variant::BsdOld));
}

#[test]
fn convert_corpus() {
    for (name, bytes) in corpus("convert") {
        check_convert(&name, &bytes);
    }
}
