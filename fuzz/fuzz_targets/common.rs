//! Shared by the fuzz targets and by gmon-format's `it` test, which includes this file to replay
//! the corpus on stable with the same checks: how the first input byte selects read options, and
//! the round-trip assertions. It depends on nothing but gmon-format.

// Each target uses part of this module.
#![allow(dead_code)]

use gmon_format::{Encoding, Endian, Header, Profile, PtrWidth, ReadOptions, Variant};

/// Options from a selector byte: bits 0–1 variant (detect, GNU, 4.4BSD, old BSD), bits 2–3 byte
/// order (detect, little, big, detect), bits 4–5 pointer width (detect, 4, 8, detect), bits 6–7
/// old BSD header size (detect, 12, 20, 24). `variant` overrides bits 0–1 when given.
pub fn options(sel: u8, variant: Option<Variant>) -> ReadOptions {
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

/// Options that read back exactly what `p` is.
pub fn exact(p: &Profile) -> ReadOptions {
    let o = ReadOptions::new()
        .with_variant(p.header.variant())
        .with_endian(p.encoding.endian)
        .with_ptr_width(p.encoding.ptr_width);
    match p.header {
        Header::BsdOld(h) => o.with_bsd_old_header_size(h.header_size),
        _ => o,
    }
}

/// Reads `file` with `opts`; if that works, the result must honour every forced option, write
/// back to the same bytes and read back to the same profile. `name` labels the input in the
/// assertion messages (the corpus file when replayed).
pub fn check(name: &str, file: &[u8], opts: &ReadOptions) {
    let Ok(p) = gmon_format::read_with(file, opts) else {
        return;
    };
    if let Some(v) = opts.variant {
        assert_eq!(p.header.variant(), v, "{name}");
    }
    if let Some(e) = opts.endian {
        assert_eq!(p.encoding.endian, e, "{name}");
    }
    if let Some(w) = opts.ptr_width {
        assert_eq!(p.encoding.ptr_width, w, "{name}");
    }
    let out = gmon_format::write::to_vec_unchecked(&p)
        .unwrap_or_else(|e| panic!("{name}: a profile that was read cannot be written: {e}"));
    assert_eq!(out, file, "{name}: write(read(bytes)) != bytes");
    check_read_back(name, &p, &out);
    let again = gmon_format::read_with(&out, &exact(&p))
        .unwrap_or_else(|e| panic!("{name}: written bytes do not read back: {e}"));
    assert_eq!(again, p, "{name}: read(write(p)) != p");
}

/// Whatever reads must either convert to each variant and encoding, and then write and read back
/// unchanged (forcing the target's encoding) with as many arcs, or fail with an error.
pub fn check_convert(name: &str, data: &[u8]) {
    let Ok(p) = gmon_format::read(data) else {
        return;
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
            let bytes = gmon_format::write::to_vec_unchecked(&c).unwrap_or_else(|e| {
                panic!("{name} -> {variant} {enc:?}: convert_to did not check: {e}")
            });
            check_read_back(name, &c, &bytes);
            let back = gmon_format::read_with(&bytes, &exact(&c)).unwrap_or_else(|e| {
                panic!("{name} -> {variant} {enc:?}: converted bytes do not read back: {e}")
            });
            assert_eq!(back, c, "{name} -> {variant} {enc:?}");
            // Counts survive every conversion that succeeds.
            assert_eq!(c.arcs().count(), p.arcs().count(), "{name}");
        }
    }
}

/// The checked writer gives the same bytes when detection reads them back as `p` (same header,
/// records and trailing bytes), and otherwise refuses with `ReadsBackDifferently`.
pub fn check_read_back(name: &str, p: &Profile, bytes: &[u8]) {
    let same = gmon_format::read(bytes)
        .is_ok_and(|q| q.header == p.header && q.records == p.records && q.trailing == p.trailing);
    let reads_back_24 = matches!(p.header, Header::BsdOld(h) if h.header_size == 24);
    match gmon_format::to_vec(p) {
        Ok(checked) => {
            assert_eq!(
                checked, bytes,
                "{name}: checked and unchecked writers differ"
            );
            assert!(
                same || reads_back_24,
                "{name}: the check let a misread file through"
            );
        }
        Err(gmon_format::Error::ReadsBackDifferently { .. }) => {
            assert!(!same, "{name}: the check refused a file that reads back");
        }
        Err(e) => panic!("{name}: the checked writer failed otherwise: {e}"),
    }
}
