//! Reader with forced options: the first byte chooses the variant, byte order, pointer width and
//! old BSD header size (each possibly left to detection); the rest is the file.
#![no_main]

use gmon_format::{Endian, PtrWidth, ReadOptions, Variant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, file)) = data.split_first() else {
        return;
    };
    let mut opts = ReadOptions::new();
    opts.variant = [
        None,
        Some(Variant::Gnu),
        Some(Variant::Bsd44),
        Some(Variant::BsdOld),
    ][usize::from(sel & 3)];
    opts.endian =
        [None, Some(Endian::Little), Some(Endian::Big), None][usize::from((sel >> 2) & 3)];
    opts.ptr_width =
        [None, Some(PtrWidth::Four), Some(PtrWidth::Eight), None][usize::from((sel >> 4) & 3)];
    opts.bsd_old_header_size = [None, Some(12), Some(20), Some(24)][usize::from(sel >> 6)];
    if let Ok(p) = gmon_format::read_with(file, &opts) {
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
        // Forcing exactly what was read must read the same profile.
        let exact = ReadOptions::new()
            .with_variant(p.header.variant())
            .with_endian(p.encoding.endian)
            .with_ptr_width(p.encoding.ptr_width);
        let exact = match p.header {
            gmon_format::Header::BsdOld(h) => exact.with_bsd_old_header_size(h.header_size),
            _ => exact,
        };
        let again = gmon_format::read_with(&out, &exact).expect("written bytes read back");
        assert_eq!(again, p, "read(write(p)) != p");
    }
});
