//! Writers: the mirror of [`crate::read`]. [`write`] emits `p.header`'s variant with
//! `p.encoding`, byte for byte what the reader accepts, so `read(write(p)) == p` and
//! `write(read(bytes)) == bytes`.
//!
//! A value that does not fit its field (an address wider than the pointer width, a count above
//! the counter's maximum) is an error naming the record, never truncated. The whole file is
//! built in memory first, so a writer error leaves nothing half-written in `w`.

mod bsd44;
mod bsd_old;
mod gnu;

use std::io::Write;

use crate::error::{Error, Result};
use crate::model::{Endian, Header, Profile, PtrWidth};

/// Writes `p` in its header's variant with its encoding.
pub fn write<W: Write>(p: &Profile, w: &mut W) -> Result<()> {
    let bytes = to_vec(p)?;
    w.write_all(&bytes)?;
    Ok(())
}

/// Writes `p` into a new vector (see [`write`]).
///
/// ```
/// let p = gmon_format::Profile::new_gnu(gmon_format::Encoding::LITTLE_64);
/// let bytes = gmon_format::to_vec(&p).unwrap();
/// assert_eq!(&bytes[..8], b"gmon\x01\0\0\0");
/// assert_eq!(gmon_format::read(&bytes).unwrap(), p);
/// ```
pub fn to_vec(p: &Profile) -> Result<Vec<u8>> {
    let mut e = Emitter {
        out: Vec::new(),
        endian: p.encoding.endian,
        width: p.encoding.ptr_width,
    };
    match &p.header {
        Header::Gnu(h) => gnu::write(&mut e, h, p)?,
        Header::Bsd44(h) => bsd44::write(&mut e, h, p)?,
        Header::BsdOld(h) => bsd_old::write(&mut e, h, p)?,
    }
    Ok(e.out)
}

/// The output buffer and the encoding: the single place that applies the byte order.
pub(crate) struct Emitter {
    pub(crate) out: Vec<u8>,
    endian: Endian,
    width: PtrWidth,
}

impl Emitter {
    /// Appends raw bytes.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    /// Appends `value` as an integer of `size` bytes, refusing values that do not fit.
    pub(crate) fn uint(
        &mut self,
        value: u64,
        size: usize,
        record: usize,
        what: &'static str,
    ) -> Result<()> {
        let max = max_for(size);
        if value > max {
            return Err(Error::DoesNotFit {
                record,
                what,
                value,
                max,
            });
        }
        let all = match self.endian {
            Endian::Little => value.to_le_bytes(),
            Endian::Big => value.to_be_bytes(),
        };
        let range = match self.endian {
            Endian::Little => 0..size,
            Endian::Big => 8 - size..8,
        };
        self.out.extend_from_slice(&all[range]);
        Ok(())
    }

    /// Appends a `u32` known to fit.
    pub(crate) fn u32(&mut self, value: u32) {
        // Cannot fail: every u32 fits 4 bytes.
        let _ = self.uint(u64::from(value), 4, 0, "u32");
    }

    /// Appends an address (or BSD `long`) of the profile's pointer width.
    pub(crate) fn ptr(&mut self, value: u64, record: usize, what: &'static str) -> Result<()> {
        self.uint(value, self.width.bytes(), record, what)
    }

    /// The profile's pointer width.
    pub(crate) fn width(&self) -> PtrWidth {
        self.width
    }
}

/// The largest unsigned value of `size` bytes (1..=8).
pub(crate) fn max_for(size: usize) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size)) - 1
    }
}
