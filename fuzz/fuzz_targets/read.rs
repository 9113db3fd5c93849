//! Auto-detecting reader: must never panic; whatever it accepts must write back to the same
//! bytes and read back to the same profile.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = gmon_format::read(data) {
        let out = gmon_format::to_vec(&p).expect("a profile that was read can be written");
        assert_eq!(out, data, "write(read(bytes)) != bytes");
        let again = gmon_format::read(&out).expect("written bytes read back");
        assert_eq!(again, p, "read(write(p)) != p");
    }
});
