//! Reader for the old BSD layout (`spec/gmon-out.md`, "Old BSD format"): `struct phdr`.
//!
//! ```text
//! 0      lpc: P
//! P      hpc: P
//! 2P     ncnt: u32     header size + histogram bytes
//! 2P+4   (4 zero bytes of padding when the header is 24 bytes: LP64 `struct ophdr`)
//! H      ncnt - H bytes of u16 bins, then BSD arcs as in 4.4BSD
//! ```
//!
//! The header size `H` is 12 for 4-byte pointers, and 20 (GNU gprof's view) or 24 (FreeBSD's
//! padded struct) for 8-byte pointers. The file does not say which; see [`crate::detect`].

use super::bsd44::{check_range, finish, histogram_bins};
use super::cursor::Cursor;
use crate::error::{Error, Result};
use crate::model::{
    BsdOldHeader, Dimension, Encoding, Header, Histogram, ProfRate, Profile, PtrWidth,
};

/// The header sizes a pointer width allows.
pub(crate) fn header_sizes(width: PtrWidth) -> &'static [u32] {
    match width {
        PtrWidth::Four => &[12],
        PtrWidth::Eight => &[20, 24],
    }
}

/// Reads a whole old BSD file with a known byte order, pointer width and header size.
pub(crate) fn read(bytes: &[u8], enc: Encoding, header_size: u32) -> Result<Profile> {
    let mut c = Cursor::new(bytes, enc.endian);
    let hsize = header_size as usize;
    if c.remaining() < hsize {
        return Err(c.eof("old BSD header", u64::from(header_size)));
    }
    let what = "old BSD header";
    let low_pc = c.ptr(enc.ptr_width, what)?;
    let high_pc = c.ptr(enc.ptr_width, what)?;
    let ncnt_offset = c.offset();
    let ncnt = c.u32(what)?;
    while (c.offset() as usize) < hsize {
        let offset = c.offset();
        let found = c.u8(what)?;
        if found != 0 {
            return Err(Error::NonzeroPadding { offset, found });
        }
    }
    check_range(low_pc, high_pc)?;
    let nbins = histogram_bins(&c, ncnt, ncnt_offset, hsize, 2)?;
    let mut bins = Vec::with_capacity(nbins);
    for _ in 0..nbins {
        bins.push(u64::from(c.u16("histogram bins")?));
    }
    let histogram = Histogram {
        low_pc,
        high_pc,
        prof_rate: ProfRate::DEFAULT,
        dimension: Dimension::SECONDS,
        bins,
    };
    finish(
        c,
        enc,
        Header::BsdOld(BsdOldHeader { header_size }),
        histogram,
    )
}
