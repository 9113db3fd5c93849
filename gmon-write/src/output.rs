//! Output file names (as glibc chooses them) and atomic writes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

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

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// crash never leaves a torn file (the rules are in `files.rs`).
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut scratch = crate::files::Scratch::new();
    crate::files::write_file(path.as_os_str().as_bytes(), &mut scratch, |sink| {
        sink.put(bytes)
    })
    .map_err(|f| Error::Write {
        path: path.to_path_buf(),
        source: f.to_io(),
    })
}

/// The encoding of this host (glibc writes gmon.out in the host's byte order and word size).
pub(crate) const HOST_ENCODING: gmon_format::Encoding = gmon_format::Encoding {
    endian: if cfg!(target_endian = "little") {
        gmon_format::Endian::Little
    } else {
        gmon_format::Endian::Big
    },
    ptr_width: if cfg!(target_pointer_width = "64") {
        gmon_format::PtrWidth::Eight
    } else {
        gmon_format::PtrWidth::Four
    },
};

/// The GNU gmon.out bytes for one histogram in the host's byte order and pointer width
/// (what glibc's `_mcleanup` writes without arcs: header, then one tag-0 record).
pub(crate) fn gnu_bytes(h: &gmon_format::Histogram) -> Result<Vec<u8>> {
    let mut p = gmon_format::Profile::new_gnu(HOST_ENCODING);
    p.records.push(gmon_format::Record::Histogram(h.clone()));
    gmon_format::to_vec(&p).map_err(|e| Error::Write {
        path: PathBuf::from("gmon.out"),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
    })
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

    #[test]
    fn gnu_layout() {
        let h = gmon_format::Histogram {
            low_pc: 0,
            high_pc: 0x1458,
            prof_rate: gmon_format::ProfRate(100),
            dimension: gmon_format::Dimension::SECONDS,
            bins: vec![0; 0x518],
        };
        let b = gnu_bytes(&h).unwrap();
        assert_eq!(b.len(), 20 + 41 + 2 * 0x518);
        assert_eq!(&b[..8], b"gmon\x01\0\0\0");
        assert_eq!(&b[29..37], &[0x58, 0x14, 0, 0, 0, 0, 0, 0]);
    }
}
