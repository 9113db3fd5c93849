//! Auto-detecting reader: must never panic; whatever it accepts must write back to the same
//! bytes and read back to the same profile.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check("input", data, &gmon_format::ReadOptions::new());
});
