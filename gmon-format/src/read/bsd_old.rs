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
//! padded struct) for 8-byte pointers. The file does not say which; see [`super::detect`].

use super::bsd44::{check_range, finish, histogram_bins};
use super::cursor::Cursor;
use super::records;
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
    let ncnt_offset = 2 * enc.ptr_width.bytes() as u64;
    let (low_pc, high_pc, ncnt) = c.parse(
        2 * enc.ptr_width.bytes() + 4,
        what,
        records::bsd_old_header(enc),
    )?;
    while (c.offset() as usize) < hsize {
        let offset = c.offset();
        let found = c.u8(what)?;
        if found != 0 {
            return Err(Error::NonzeroPadding { offset, found });
        }
    }
    check_range(low_pc, high_pc)?;
    let nbins = histogram_bins(&c, ncnt, ncnt_offset, hsize, 2)?;
    let bins = records::u16_bins(c.bytes(2 * nbins, "histogram bins")?, enc.endian);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallArc, Variant};
    use crate::read::{ReadOptions, read_with};
    use crate::test_util::{ALL, Bytes};

    fn file(enc: Encoding, header_size: u32, bins: &[u16]) -> Vec<u8> {
        let mut b = Bytes::new(enc)
            .ptr(0x400000)
            .ptr(0x400000 + 4 * bins.len() as u64)
            .u32(header_size + 2 * bins.len() as u32);
        for _ in (2 * enc.ptr_width.bytes() + 4)..header_size as usize {
            b = b.raw(&[0]);
        }
        for &x in bins {
            b = b.u16(x);
        }
        b.bsd_arc(0x400000, 0x400004, 5).build()
    }

    #[test]
    fn reads_gnu_gprof_sized_headers_in_every_encoding() {
        for enc in ALL {
            let size = 2 * enc.ptr_width.bytes() as u32 + 4;
            let bytes = file(enc, size, &[3, 0, 7]);
            let forced = ReadOptions::new()
                .with_variant(Variant::BsdOld)
                .with_endian(enc.endian)
                .with_ptr_width(enc.ptr_width);
            for opts in [ReadOptions::new(), forced] {
                let p = read_with(&bytes, &opts).unwrap();
                assert_eq!(p.encoding, enc);
                assert_eq!(p.header, Header::BsdOld(BsdOldHeader { header_size: size }));
                let h = p.histograms().next().unwrap();
                assert_eq!(
                    (h.low_pc, h.high_pc, h.prof_rate),
                    (0x400000, 0x40000c, ProfRate::DEFAULT)
                );
                assert_eq!(h.bins, vec![3, 0, 7]);
                assert_eq!(
                    p.arcs().next(),
                    Some(&CallArc {
                        from_pc: 0x400000,
                        self_pc: 0x400004,
                        count: 5
                    })
                );
                assert_eq!(crate::to_vec(&p).unwrap(), bytes);
            }
        }
    }

    #[test]
    fn padded_24_byte_header_when_forced() {
        for enc in [crate::Encoding::LITTLE_64, crate::Encoding::BIG_64] {
            let bytes = file(enc, 24, &[1, 2]);
            let opts = ReadOptions::new()
                .with_bsd_old_header_size(24)
                .with_endian(enc.endian);
            let p = read_with(&bytes, &opts).unwrap();
            assert_eq!(p.header, Header::BsdOld(BsdOldHeader { header_size: 24 }));
            assert_eq!(p.histograms().next().unwrap().bins, vec![1, 2]);
            assert_eq!(crate::to_vec(&p).unwrap(), bytes);
            // Without the option the padding reads as two empty bins of a 20-byte header.
            let guessed = crate::read(&bytes).unwrap();
            assert_eq!(guessed.histograms().next().unwrap().bins, vec![0, 0, 1, 2]);
        }
    }

    #[test]
    fn nonzero_padding_is_refused_at_its_offset() {
        let mut bytes = file(crate::Encoding::LITTLE_64, 24, &[1]);
        bytes[22] = 0x5a;
        let opts = ReadOptions::new().with_bsd_old_header_size(24);
        let e = read_with(&bytes, &opts).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NonzeroPadding {
                    offset: 22,
                    found: 0x5a
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn header_size_must_match_the_pointer_width() {
        let bytes = file(crate::Encoding::LITTLE_32, 12, &[1]);
        let opts = ReadOptions::new()
            .with_bsd_old_header_size(20)
            .with_ptr_width(PtrWidth::Four)
            .with_variant(Variant::BsdOld)
            .with_endian(crate::Endian::Little);
        let e = read_with(&bytes, &opts).unwrap_err();
        assert!(matches!(e, Error::InvalidOptions { .. }), "{e}");
        assert_eq!(e.offset(), None);
    }

    #[test]
    fn short_header_is_eof_at_0() {
        let opts = ReadOptions::new()
            .with_variant(Variant::BsdOld)
            .with_ptr_width(PtrWidth::Four)
            .with_endian(crate::Endian::Big);
        let e = read_with(&[0; 11], &opts).unwrap_err();
        assert!(
            matches!(
                e,
                Error::UnexpectedEof {
                    offset: 0,
                    needed: 12,
                    available: 11,
                    ..
                }
            ),
            "{e}"
        );
    }
}
