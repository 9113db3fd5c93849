//! Reader with forced options: the first byte chooses the variant, byte order, pointer width and
//! old BSD header size, each possibly left to detection (see `common::options`); the rest is the
//! file.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, file)) = data.split_first() else {
        return;
    };
    common::check("input", file, &common::options(sel, None));
});
