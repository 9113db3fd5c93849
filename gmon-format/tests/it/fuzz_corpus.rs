//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) on stable, with the same checks as the fuzz
//! targets in `fuzz/fuzz_targets/`, so CI covers every tricky input the fuzzer kept (including
//! the inputs of crashes that were fixed).

use std::fs;

use gmon_format::{Encoding, Endian, Header, Profile, PtrWidth, ReadOptions, Variant};

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

/// Options that force exactly what `p` was read as.
fn exact(p: &Profile) -> ReadOptions {
    let o = ReadOptions::new()
        .with_variant(p.header.variant())
        .with_endian(p.encoding.endian)
        .with_ptr_width(p.encoding.ptr_width);
    match p.header {
        Header::BsdOld(h) => o.with_bsd_old_header_size(h.header_size),
        _ => o,
    }
}

/// What both fuzz targets assert for a file that reads: same bytes back, same profile back.
fn check_round_trip(name: &str, bytes: &[u8], p: &Profile) {
    let out = gmon_format::to_vec(p).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(out, bytes, "{name}: write(read(bytes)) != bytes");
    let again = gmon_format::read_with(&out, &exact(p)).unwrap();
    assert_eq!(&again, p, "{name}: read(write(p)) != p");
}

#[test]
fn read_corpus() {
    for (name, bytes) in corpus("read") {
        if let Ok(p) = gmon_format::read(&bytes) {
            check_round_trip(&name, &bytes, &p);
        }
    }
}

/// Read options from a selector byte, as `fuzz/fuzz_targets/common.rs` decodes it.
fn options(sel: u8, variant: Option<Variant>) -> ReadOptions {
    let mut opts = ReadOptions::new();
    opts.variant = variant.or([
        None,
        Some(Variant::Gnu),
        Some(Variant::Bsd44),
        Some(Variant::BsdOld),
    ][usize::from(sel & 3)]);
    opts.endian =
        [None, Some(Endian::Little), Some(Endian::Big), None][usize::from((sel >> 2) & 3)];
    opts.ptr_width =
        [None, Some(PtrWidth::Four), Some(PtrWidth::Eight), None][usize::from((sel >> 4) & 3)];
    opts.bsd_old_header_size = [None, Some(12), Some(20), Some(24)][usize::from(sel >> 6)];
    opts
}

/// Replays a corpus whose first byte selects options, with the variant forced or not.
fn replay_with_selector(target: &str, variant: Option<Variant>) {
    for (name, data) in corpus(target) {
        let Some((&sel, file)) = data.split_first() else {
            continue;
        };
        let opts = options(sel, variant);
        if let Ok(p) = gmon_format::read_with(file, &opts) {
            if let Some(v) = opts.variant {
                assert_eq!(p.header.variant(), v, "{name}");
            }
            if let Some(e) = opts.endian {
                assert_eq!(p.encoding.endian, e, "{name}");
            }
            if let Some(w) = opts.ptr_width {
                assert_eq!(p.encoding.ptr_width, w, "{name}");
            }
            check_round_trip(&name, file, &p);
        }
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
        let Ok(p) = gmon_format::read(&bytes) else {
            continue;
        };
        for variant in [Variant::Gnu, Variant::Bsd44, Variant::BsdOld] {
            for enc in [
                Encoding::LITTLE_64,
                Encoding::LITTLE_32,
                Encoding::BIG_64,
                Encoding::BIG_32,
            ] {
                let Ok(c) = p.convert_to(variant, enc) else {
                    continue;
                };
                let out = gmon_format::to_vec(&c).unwrap();
                let back = gmon_format::read_with(&out, &exact(&c)).unwrap();
                assert_eq!(back, c, "{name} -> {variant} {enc:?}");
                assert_eq!(c.arcs().count(), p.arcs().count(), "{name}");
            }
        }
    }
}
