//! The BsdOld parser alone: the variant is forced, the first byte chooses byte order, pointer width
//! and (old BSD) header size as in `common::options`; the rest is the file.
#![no_main]

mod common;

use gmon_format::Variant;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, file)) = data.split_first() else {
        return;
    };
    common::check("input", file, &common::options(sel, Some(Variant::BsdOld)));
});
