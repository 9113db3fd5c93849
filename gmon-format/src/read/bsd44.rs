//! Reader for the 4.4BSD layout (`spec/gmon-out.md`, "4.4BSD format"), and the BSD arc list that
//! it shares with the old BSD layout.
//!
//! Layout, with `P` the pointer width and every integer in the file's byte order:
//!
//! ```text
//! 0      lpc: P
//! P      hpc: P
//! 2P     ncnt: u32             header size (2P + 24) + histogram bytes
//! 2P+4   version: u32          GMONVERSION = 0x00051879
//! 2P+8   profrate: u32
//! 2P+12  histcounter_type: i32 FreeBSD: 0 = u16 bins, else ±bits (negative = signed)
//! 2P+16  spare: 8 bytes
//! 2P+24  bins, then `struct rawarc { from_pc: P, self_pc: P, count: P }` to the end; a partial
//!        last arc is kept in `Profile::trailing`
//! ```

use super::cursor::Cursor;
use super::records;
use crate::error::{Error, Result};
use crate::model::{
    Bsd44Header, Dimension, Encoding, GMONVERSION, Header, Histogram, ProfRate, Profile, PtrWidth,
    Record,
};

/// Size of `struct gmonhdr` for a pointer width.
pub(crate) fn header_size(width: PtrWidth) -> usize {
    2 * width.bytes() + 24
}

/// Size in bytes and signedness of a histogram counter for a FreeBSD `histcounter_type`.
pub(crate) fn counter_format(histcounter_type: i32) -> Option<(usize, bool)> {
    let signed = histcounter_type < 0;
    let size = match histcounter_type.unsigned_abs() {
        0 | 16 => 2,
        8 => 1,
        32 => 4,
        64 => 8,
        _ => return None,
    };
    Some((size, signed))
}

/// Reads a whole 4.4BSD file with a known byte order and pointer width.
pub(crate) fn read(bytes: &[u8], enc: Encoding) -> Result<Profile> {
    let mut c = Cursor::new(bytes, enc.endian);
    let hsize = header_size(enc.ptr_width);
    if c.remaining() < hsize {
        return Err(c.eof("4.4BSD header", hsize as u64));
    }
    let what = "4.4BSD header";
    let ncnt_offset = 2 * enc.ptr_width.bytes() as u64;
    let version_offset = ncnt_offset + 4;
    let type_offset = ncnt_offset + 12;
    let h = c.parse(hsize, what, records::bsd44_header(enc))?;
    let (low_pc, high_pc, ncnt, version) = (h.low_pc, h.high_pc, h.ncnt, h.version);
    if version != GMONVERSION {
        return Err(Error::UnsupportedVersion {
            offset: version_offset,
            found: version,
            expected: "0x51879 (GMONVERSION)",
        });
    }
    let (prof_rate, histcounter_type, spare) = (h.prof_rate, h.histcounter_type, h.spare);
    let (size, signed) = counter_format(histcounter_type).ok_or(Error::BadHistCounterType {
        offset: type_offset,
        found: histcounter_type,
    })?;
    check_range(low_pc, high_pc)?;
    let nbins = histogram_bins(&c, ncnt, ncnt_offset, hsize, size)?;
    let bins = if size == 2 && !signed {
        records::u16_bins(c.bytes(2 * nbins, "histogram bins")?, enc.endian)
    } else {
        let mut bins = Vec::with_capacity(nbins);
        for _ in 0..nbins {
            let offset = c.offset();
            let raw = c.uint(size, "histogram bins")?;
            bins.push(if signed {
                non_negative(raw, size, offset)?
            } else {
                raw
            });
        }
        bins
    };
    let histogram = Histogram {
        low_pc,
        high_pc,
        prof_rate: ProfRate(prof_rate),
        dimension: Dimension::SECONDS,
        bins,
    };
    let header = Header::Bsd44(Bsd44Header {
        version,
        prof_rate,
        histcounter_type,
        spare,
    });
    finish(c, enc, header, histogram)
}

/// Checks BSD `lpc <= hpc`, as gprof does (`lowpc > highpc`: "not in gmon.out format").
pub(crate) fn check_range(low_pc: u64, high_pc: u64) -> Result<()> {
    if low_pc > high_pc {
        return Err(Error::BadRange {
            offset: 0,
            low_pc,
            high_pc,
        });
    }
    Ok(())
}

/// Number of bins described by `ncnt`, checked against the header size, the counter size and the
/// bytes left in the file (the cursor is just after the header).
pub(crate) fn histogram_bins(
    c: &Cursor<'_>,
    ncnt: u32,
    ncnt_offset: u64,
    header_size: usize,
    counter_size: usize,
) -> Result<usize> {
    let hist_bytes = (ncnt as usize)
        .checked_sub(header_size)
        .ok_or(Error::BadNcnt {
            offset: ncnt_offset,
            ncnt,
            expected: "at least the header size",
        })?;
    if !hist_bytes.is_multiple_of(counter_size) {
        return Err(Error::BadNcnt {
            offset: ncnt_offset,
            ncnt,
            expected: "header size plus a whole number of histogram counters",
        });
    }
    if hist_bytes > c.remaining() {
        return Err(Error::HistogramTooLarge {
            offset: ncnt_offset,
            bins: (hist_bytes / counter_size) as u64,
            needed: hist_bytes as u64,
            available: c.remaining() as u64,
        });
    }
    Ok(hist_bytes / counter_size)
}

/// Interprets a signed counter of `size` bytes, refusing negative values.
fn non_negative(raw: u64, size: usize, offset: u64) -> Result<u64> {
    let shift = 64 - 8 * size as u32;
    let value = ((raw << shift) as i64) >> shift;
    if value < 0 {
        return Err(Error::NegativeCount {
            offset,
            found: value,
        });
    }
    Ok(raw)
}

/// Reads the arcs after a BSD histogram and builds the profile; a partial last arc is kept as
/// trailing bytes, as gprof ignores it.
pub(crate) fn finish(
    mut c: Cursor<'_>,
    enc: Encoding,
    header: Header,
    histogram: Histogram,
) -> Result<Profile> {
    let arc_size = 3 * enc.ptr_width.bytes();
    let mut records = Vec::with_capacity(1 + c.remaining() / arc_size);
    records.push(Record::Histogram(histogram));
    while c.remaining() >= arc_size {
        records.push(Record::CallArc(c.parse(
            arc_size,
            "arc record",
            super::records::bsd_arc(enc),
        )?));
    }
    let trailing = c.rest().to_vec();
    Ok(Profile {
        encoding: enc,
        header,
        records,
        trailing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CallArc;
    use crate::model::Variant;
    use crate::read::{ReadOptions, read_with};
    use crate::test_util::{ALL, Bytes};

    fn forced(enc: Encoding) -> ReadOptions {
        ReadOptions::new()
            .with_variant(Variant::Bsd44)
            .with_endian(enc.endian)
            .with_ptr_width(enc.ptr_width)
    }

    /// A 4.4BSD header with `ncnt` computed from the bins and counter size.
    fn header(enc: Encoding, nbins: u32, counter: i32, rate: u32) -> Bytes {
        let size = counter_format(counter).map_or(2, |f| f.0) as u32;
        let ncnt = header_size(enc.ptr_width) as u32 + nbins * size;
        Bytes::new(enc)
            .ptr(0x1000)
            .ptr(0x1000 + 4 * u64::from(nbins))
            .u32(ncnt)
            .u32(GMONVERSION)
            .u32(rate)
            .u32(counter as u32)
            .raw(&[1, 2, 3, 4, 5, 6, 7, 8])
    }

    #[test]
    fn reads_header_bins_arcs_and_partial_arc_in_every_encoding() {
        for enc in ALL {
            let bytes = header(enc, 3, 0, 1000)
                .u16(1)
                .u16(0)
                .u16(0xffff)
                .bsd_arc(0x1000, 0x1008, 1 << 31)
                .raw(&[9, 9, 9])
                .build();
            for opts in [ReadOptions::new(), forced(enc)] {
                let p = read_with(&bytes, &opts).unwrap();
                assert_eq!(p.encoding, enc);
                let Header::Bsd44(h) = p.header else {
                    panic!("not 4.4BSD")
                };
                assert_eq!(
                    (h.version, h.prof_rate, h.histcounter_type),
                    (GMONVERSION, 1000, 0)
                );
                assert_eq!(h.spare, [1, 2, 3, 4, 5, 6, 7, 8]);
                let hist = p.histograms().next().unwrap();
                assert_eq!(
                    (hist.low_pc, hist.high_pc, hist.prof_rate.0),
                    (0x1000, 0x100c, 1000)
                );
                assert_eq!(hist.bins, vec![1, 0, 0xffff]);
                assert_eq!(
                    p.arcs().next(),
                    Some(&CallArc {
                        from_pc: 0x1000,
                        self_pc: 0x1008,
                        count: 1 << 31
                    })
                );
                assert_eq!(p.trailing, vec![9, 9, 9]);
                assert_eq!(crate::to_vec(&p).unwrap(), bytes);
            }
        }
    }

    #[test]
    fn reads_freebsd_counter_types() {
        for enc in ALL {
            for (counter, value) in [
                (8, 0xffu64),
                (-8, 0x7f),
                (16, 0xffff),
                (-16, 0x7fff),
                (32, 0xffff_ffff),
                (-32, 0x7fff_ffff),
                (64, u64::MAX),
                (-64, i64::MAX as u64),
            ] {
                let size = counter_format(counter).unwrap().0;
                let bytes = header(enc, 2, counter, 100)
                    .uint(value, size)
                    .uint(3, size)
                    .build();
                let p = read_with(&bytes, &forced(enc)).unwrap();
                assert_eq!(
                    p.histograms().next().unwrap().bins,
                    vec![value, 3],
                    "{counter}"
                );
                assert_eq!(crate::to_vec(&p).unwrap(), bytes, "{counter}");
            }
        }
    }

    #[test]
    fn negative_signed_counter_is_refused_at_its_offset() {
        for enc in ALL {
            let bytes = header(enc, 2, -32, 100).u32(1).u32(0xffff_fffe).build();
            let at = header_size(enc.ptr_width) as u64 + 4;
            let e = read_with(&bytes, &forced(enc)).unwrap_err();
            assert!(
                matches!(e, Error::NegativeCount { offset, found: -2 } if offset == at),
                "{e}"
            );
        }
    }

    #[test]
    fn bad_counter_type_is_at_2p_plus_12() {
        for enc in ALL {
            let bytes = header(enc, 0, 24, 100).build();
            let at = 2 * enc.ptr_width.bytes() as u64 + 12;
            let e = read_with(&bytes, &forced(enc)).unwrap_err();
            assert!(
                matches!(e, Error::BadHistCounterType { offset, found: 24 } if offset == at),
                "{e}"
            );
        }
    }

    #[test]
    fn wrong_version_when_forced_is_at_2p_plus_4() {
        for enc in ALL {
            let mut bytes = header(enc, 0, 0, 100).build();
            let at = 2 * enc.ptr_width.bytes() + 4;
            bytes[at] ^= 0x40;
            let e = read_with(&bytes, &forced(enc)).unwrap_err();
            assert!(
                matches!(e, Error::UnsupportedVersion { offset, .. } if offset == at as u64),
                "{e}"
            );
        }
    }

    #[test]
    fn ncnt_errors_name_the_ncnt_offset() {
        for enc in ALL {
            let p = enc.ptr_width.bytes();
            let at = 2 * p as u64;
            let h = header_size(enc.ptr_width) as u32;
            let with_ncnt = |ncnt: u32| {
                Bytes::new(enc)
                    .ptr(0)
                    .ptr(8)
                    .u32(ncnt)
                    .u32(GMONVERSION)
                    .u32(100)
                    .u32(0)
                    .raw(&[0; 8])
                    .u16(0)
                    .build()
            };
            let e = read_with(&with_ncnt(h - 1), &forced(enc)).unwrap_err();
            assert!(
                matches!(e, Error::BadNcnt { offset, .. } if offset == at),
                "{e}"
            );
            let e = read_with(&with_ncnt(h + 1), &forced(enc)).unwrap_err();
            assert!(
                matches!(e, Error::BadNcnt { offset, .. } if offset == at),
                "{e}"
            );
            let e = read_with(&with_ncnt(u32::MAX - 1), &forced(enc)).unwrap_err();
            assert!(
                matches!(e, Error::HistogramTooLarge { offset, available: 2, .. } if offset == at),
                "{e}"
            );
        }
    }

    #[test]
    fn low_above_high_is_bad_range_at_0() {
        let enc = Encoding::BIG_64;
        let mut bytes = header(enc, 0, 0, 100).build();
        bytes[..8].copy_from_slice(&[0xff; 8]);
        let e = read_with(&bytes, &forced(enc)).unwrap_err();
        assert!(matches!(e, Error::BadRange { offset: 0, .. }), "{e}");
    }

    #[test]
    fn short_header_is_eof_at_0() {
        let e = read_with(&[0; 39], &forced(Encoding::LITTLE_64)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::UnexpectedEof {
                    offset: 0,
                    needed: 40,
                    ..
                }
            ),
            "{e}"
        );
    }
}
