//! Conversion: whatever reads must either convert to each variant and encoding, and then write
//! and read back unchanged (forcing the target's encoding), or fail with an error, never panic.
#![no_main]

use gmon_format::{Encoding, Header, ReadOptions, Variant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
            let bytes = gmon_format::to_vec(&c).expect("convert_to checks that it can be written");
            let mut opts = ReadOptions::new()
                .with_variant(variant)
                .with_endian(enc.endian)
                .with_ptr_width(enc.ptr_width);
            if let Header::BsdOld(h) = c.header {
                opts = opts.with_bsd_old_header_size(h.header_size);
            }
            let back = gmon_format::read_with(&bytes, &opts).expect("converted bytes read back");
            assert_eq!(back, c);
            // Counts survive every conversion that succeeds.
            assert_eq!(c.arcs().count(), p.arcs().count());
        }
    }
});
