//! Output file names (as glibc chooses them).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Whether the process runs set-uid/set-gid (`getauxval(AT_SECURE)`): then `GMON_OUT_PREFIX`
/// is ignored, as glibc ignores it.
pub fn is_secure() -> bool {
    crate::sys::is_secure()
}

/// Where a profile goes.
///
/// * `explicit` (the builder's `output`, `gmon record -o`): that path, with `.<pid>` appended when
///   `append_pid` (a forked child, or a descendant of the recorded command).
/// * else `$GMON_OUT_PREFIX.<pid>` when set and the process is not set-uid/set-gid;
/// * else `gmon.out` (in the current directory), `gmon.out.<pid>` when `append_pid`.
pub fn output_path(explicit: Option<&Path>, append_pid: bool, pid: u32) -> PathBuf {
    let with_pid = |p: &Path| {
        let mut s: OsString = p.as_os_str().to_owned();
        s.push(format!(".{pid}"));
        PathBuf::from(s)
    };
    if let Some(p) = explicit {
        return if append_pid {
            with_pid(p)
        } else {
            p.to_path_buf()
        };
    }
    if let Some(prefix) = crate::env::var(crate::env::OUT_PREFIX) {
        return with_pid(Path::new(&prefix));
    }
    let p = Path::new("gmon.out");
    if append_pid {
        with_pid(p)
    } else {
        p.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let p = output_path(Some(Path::new("/x/out")), false, 7);
        assert_eq!(p, PathBuf::from("/x/out"));
        let p = output_path(Some(Path::new("/x/out")), true, 7);
        assert_eq!(p, PathBuf::from("/x/out.7"));
    }
}
