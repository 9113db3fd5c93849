//! Shared by the fuzz targets (and mirrored by gmon-format's `fuzz_corpus` replay test): how the
//! first input byte selects read options, and the round-trip assertions.

// Each target uses part of this module.
#![allow(dead_code)]

use gmon_format::{Endian, Header, Profile, PtrWidth, ReadOptions, Variant};

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
/// back to the same bytes and read back to the same profile.
pub fn check(file: &[u8], opts: &ReadOptions) {
    let Ok(p) = gmon_format::read_with(file, opts) else {
        return;
    };
    if let Some(v) = opts.variant {
        assert_eq!(p.header.variant(), v);
    }
    if let Some(e) = opts.endian {
        assert_eq!(p.encoding.endian, e);
    }
    if let Some(w) = opts.ptr_width {
        assert_eq!(p.encoding.ptr_width, w);
    }
    let out = gmon_format::to_vec(&p).expect("a profile that was read can be written");
    assert_eq!(out, file, "write(read(bytes)) != bytes");
    let again = gmon_format::read_with(&out, &exact(&p)).expect("written bytes read back");
    assert_eq!(again, p, "read(write(p)) != p");
}
