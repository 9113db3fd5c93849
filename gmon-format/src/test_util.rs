//! Builds byte-exact files for unit tests, in either byte order and pointer width.

use crate::model::{Encoding, Endian};

/// A file under construction.
pub(crate) struct Bytes {
    pub(crate) buf: Vec<u8>,
    enc: Encoding,
}

impl Bytes {
    pub(crate) fn new(enc: Encoding) -> Bytes {
        Bytes {
            buf: Vec::new(),
            enc,
        }
    }

    pub(crate) fn raw(mut self, b: &[u8]) -> Bytes {
        self.buf.extend_from_slice(b);
        self
    }

    /// An integer of `size` bytes in the file's byte order.
    pub(crate) fn uint(mut self, v: u64, size: usize) -> Bytes {
        let all = v.to_le_bytes();
        let mut b: Vec<u8> = all[..size].to_vec();
        if self.enc.endian == Endian::Big {
            b.reverse();
        }
        self.buf.extend_from_slice(&b);
        self
    }

    pub(crate) fn u16(self, v: u16) -> Bytes {
        self.uint(v.into(), 2)
    }

    pub(crate) fn u32(self, v: u32) -> Bytes {
        self.uint(v.into(), 4)
    }

    pub(crate) fn ptr(self, v: u64) -> Bytes {
        let w = self.enc.ptr_width.bytes();
        self.uint(v, w)
    }

    /// `struct gmon_hdr` with zero spare bytes.
    pub(crate) fn gnu_header(self, version: u32) -> Bytes {
        self.raw(b"gmon").u32(version).raw(&[0; 12])
    }

    /// A tag-0 record with "seconds" and the given bins.
    pub(crate) fn gnu_hist(self, low: u64, high: u64, rate: u32, bins: &[u16]) -> Bytes {
        let mut b = self
            .raw(&[0])
            .ptr(low)
            .ptr(high)
            .u32(bins.len() as u32)
            .u32(rate);
        b = b.raw(b"seconds\0\0\0\0\0\0\0\0").raw(b"s");
        for &x in bins {
            b = b.u16(x);
        }
        b
    }

    /// A tag-1 record.
    pub(crate) fn gnu_arc(self, from: u64, to: u64, count: u32) -> Bytes {
        self.raw(&[1]).ptr(from).ptr(to).u32(count)
    }

    /// A BSD `rawarc`.
    pub(crate) fn bsd_arc(self, from: u64, to: u64, count: u64) -> Bytes {
        self.ptr(from).ptr(to).ptr(count)
    }

    pub(crate) fn build(self) -> Vec<u8> {
        self.buf
    }
}

/// The four encodings.
pub(crate) const ALL: [Encoding; 4] = [
    Encoding::LITTLE_64,
    Encoding::LITTLE_32,
    Encoding::BIG_64,
    Encoding::BIG_32,
];
