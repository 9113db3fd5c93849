//! A path and a failure that need no allocation: what `save/` passes around while writing a
//! profile (spec/runtime.md §1, §4.5).

use std::ffi::{CStr, c_int};

use crate::sys;
use crate::zeroed::Zeroed;

/// Longest path handled (`PATH_MAX` plus room for the temporary suffix).
const PATH_CAP: usize = libc::PATH_MAX as usize + 64;

/// A NUL-terminated path in a buffer allocated once.
#[derive(Debug)]
pub(crate) struct FixedPath {
    buf: Zeroed<u8>,
    len: usize,
}

impl FixedPath {
    pub(crate) fn new() -> FixedPath {
        FixedPath {
            buf: Zeroed::new(PATH_CAP),
            len: 0,
        }
    }

    /// Replaces the path; false (path emptied) when it holds a NUL or is too long.
    pub(crate) fn set(&mut self, bytes: &[u8]) -> bool {
        self.len = 0;
        self.push(bytes)
    }

    /// Appends bytes; false (path unchanged) when they hold a NUL or do not fit.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> bool {
        let end = self.len + bytes.len();
        if bytes.contains(&0) || end >= self.buf.len() {
            return false;
        }
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(bytes);
        }
        self.truncate(end);
        true
    }

    /// Sets the path to the target of the link at `link` (`readlink`).
    pub(crate) fn read_link(&mut self, link: &CStr) -> Result<(), c_int> {
        let cap = self.buf.len() - 1;
        let n = sys::readlink(link, self.buf.get_mut(..cap).unwrap_or(&mut []))?;
        self.truncate(n);
        Ok(())
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = len.min(self.buf.len() - 1);
        if let Some(b) = self.buf.get_mut(self.len) {
            *b = 0;
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// The path with its NUL, for the kernel.
    pub(crate) fn c_str(&self) -> &CStr {
        self.buf
            .get(..=self.len)
            .and_then(|b| CStr::from_bytes_with_nul(b).ok())
            .unwrap_or(c"")
    }

    /// The path from byte `from` on (a name relative to its directory), with its NUL.
    pub(crate) fn c_str_from(&self, from: usize) -> &CStr {
        self.buf
            .get(from.min(self.len)..=self.len)
            .and_then(|b| CStr::from_bytes_with_nul(b).ok())
            .unwrap_or(c"")
    }

    /// Length of the directory part, trailing `/` included (0: the current directory).
    pub(crate) fn dir_len(&self) -> usize {
        self.bytes()
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(0, |i| i + 1)
    }
}

/// A failed step, without allocation: what failed and the `errno`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OsFail {
    pub what: &'static str,
    pub errno: c_int,
}

impl OsFail {
    pub(crate) fn last(what: &'static str) -> OsFail {
        OsFail {
            what,
            errno: sys::errno(),
        }
    }

    pub(crate) fn to_io(self) -> std::io::Error {
        let e = std::io::Error::from_raw_os_error(self.errno);
        std::io::Error::new(e.kind(), format!("{}: {e}", self.what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_part() {
        let mut p = FixedPath::new();
        assert!(p.set(b"/a/b/c"));
        assert_eq!(p.dir_len(), 5);
        assert!(p.set(b"c"));
        assert_eq!(p.dir_len(), 0);
        assert!(!p.set(b"a\0b"));
        assert!(!p.push(&vec![b'x'; PATH_CAP]));
    }
}
