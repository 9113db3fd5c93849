//! Conversion: whatever reads must either convert to each variant and encoding, and then write
//! and read back unchanged (forcing the target's encoding), or fail with an error, never panic.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check_convert("input", data);
});
