//! Reader for the GNU tagged format (`spec/gmon-out.md`, "GNU tagged format").
//!
//! Layout, with `P` the pointer width and every integer in the file's byte order:
//!
//! ```text
//! header   "gmon" | version: u32 | spare: 12 bytes                      (20 bytes)
//! tag 0    0u8 | low_pc: P | high_pc: P | bins: u32 | prof_rate: u32
//!          | dimen: 15 bytes | dimen_abbrev: u8 | bins × u16               (25 + 2P + 2·bins)
//! tag 1    1u8 | from_pc: P | self_pc: P | count: u32                     (13 + 2P - 8 … 21)
//! tag 2    2u8 | nblocks: u32 | nblocks × (address: P, count: P)          (version 1)
//!          2u8 | nblocks: u32 | name\0 | nblocks × (count: P, address: P,
//!          function\0, file\0, line: i32)                                 (version 0)
//! ```
//!
//! Records follow each other to the end of the file, which must end on a record boundary.

use super::cursor::Cursor;
use super::records;
use crate::error::{Error, Result};
use crate::model::{
    BasicBlockCount, BasicBlockRecord, Encoding, GMON_MAGIC, GMON_SHOBJ_VERSION, GMON_TAG_BB_COUNT,
    GMON_TAG_CG_ARC, GMON_TAG_TIME_HIST, GnuHeader, Header, Histogram, LegacyBlockInfo, Profile,
    Record,
};

/// Size of `struct gmon_hdr`.
pub(crate) const HEADER_SIZE: usize = 20;

/// Reads a whole GNU file with a known byte order and pointer width.
pub(crate) fn read(bytes: &[u8], encoding: Encoding) -> Result<Profile> {
    let mut c = Cursor::new(bytes, encoding.endian);
    let header = read_header(&mut c)?;
    let mut records = Vec::new();
    while !c.is_empty() {
        records.push(read_record(&mut c, encoding, header.version)?);
    }
    Ok(Profile {
        encoding,
        header: Header::Gnu(header),
        records,
        trailing: Vec::new(),
    })
}

/// Reads and checks `struct gmon_hdr`.
fn read_header(c: &mut Cursor<'_>) -> Result<GnuHeader> {
    if c.remaining() < HEADER_SIZE {
        return Err(c.eof("GNU header", HEADER_SIZE as u64));
    }
    let magic = c.array::<4>("GNU header")?;
    if magic != GMON_MAGIC {
        return Err(Error::BadMagic {
            offset: 0,
            found: magic,
        });
    }
    let version_offset = c.offset();
    let version = c.u32("GNU header")?;
    check_version(version, version_offset)?;
    let spare = c.array::<12>("GNU header")?;
    Ok(GnuHeader { version, spare })
}

/// Accepts versions 0 and 1, and names `GMON_SHOBJ_VERSION` files instead of misreading them.
pub(crate) fn check_version(version: u32, offset: u64) -> Result<()> {
    match version {
        0 | 1 => Ok(()),
        GMON_SHOBJ_VERSION => Err(Error::NotSupported {
            offset,
            what: "GMON_SHOBJ_VERSION (0x1ffff) file, written by ld.so for LD_PROFILE; \
                   read it with sprof",
        }),
        found => Err(Error::UnsupportedVersion {
            offset,
            found,
            expected: "0 or 1",
        }),
    }
}

fn read_record(c: &mut Cursor<'_>, enc: Encoding, version: u32) -> Result<Record> {
    // A record whose fixed part does not fit is reported at its tag byte (spec/gnu.md,
    // "Rejections"), so the check comes before the tag is consumed.
    let tag_offset = c.offset();
    let p = enc.ptr_width.bytes();
    let tag = *c.rest().first().ok_or_else(|| c.eof("record tag", 1))?;
    let (what, fixed) = match tag {
        GMON_TAG_TIME_HIST => ("histogram record header", 1 + 2 * p + 24),
        GMON_TAG_CG_ARC => ("arc record", 1 + 2 * p + 4),
        GMON_TAG_BB_COUNT => ("basic-block record header", 1 + 4),
        tag => {
            return Err(Error::BadTag {
                offset: tag_offset,
                tag,
            });
        }
    };
    if c.remaining() < fixed {
        return Err(c.eof(what, fixed as u64));
    }
    c.u8(what)?;
    match tag {
        GMON_TAG_TIME_HIST => read_histogram(c, enc).map(Record::Histogram),
        GMON_TAG_CG_ARC => c
            .parse(fixed - 1, what, records::gnu_arc(enc))
            .map(Record::CallArc),
        _ if version == 0 => read_blocks_v0(c, enc).map(Record::BasicBlocks),
        _ => read_blocks_v1(c, enc).map(Record::BasicBlocks),
    }
}

/// Tag 0 after its tag byte.
fn read_histogram(c: &mut Cursor<'_>, enc: Encoding) -> Result<Histogram> {
    let what = "histogram record header";
    let p = enc.ptr_width.bytes();
    let count_offset = c.offset() + 2 * p as u64;
    let h = c.parse(2 * p + 24, what, records::gnu_hist_header(enc))?;
    let nbins = h.bins;
    let needed = u64::from(nbins) * 2;
    if needed > c.remaining() as u64 {
        return Err(Error::HistogramTooLarge {
            offset: count_offset,
            bins: u64::from(nbins),
            needed,
            available: c.remaining() as u64,
        });
    }
    let bins = records::u16_bins(c.bytes(needed as usize, "histogram bins")?, enc.endian);
    Ok(Histogram {
        low_pc: h.low_pc,
        high_pc: h.high_pc,
        prof_rate: h.prof_rate,
        dimension: h.dimension,
        bins,
    })
}

/// Tag 2 of a version-1 file, after its tag byte.
fn read_blocks_v1(c: &mut Cursor<'_>, enc: Encoding) -> Result<BasicBlockRecord> {
    let count_field = c.clone();
    let nblocks = c.u32("basic-block record header")?;
    let pair = 2 * enc.ptr_width.bytes() as u64;
    let needed = u64::from(nblocks) * pair;
    if needed > c.remaining() as u64 {
        // Reported at the count that claims too much, like a histogram's bin count.
        return Err(Error::UnexpectedEof {
            offset: count_field.offset(),
            what: "basic-block counts",
            needed,
            available: c.remaining() as u64,
        });
    }
    let mut blocks = Vec::with_capacity(nblocks as usize);
    for _ in 0..nblocks {
        let (address, count) = c.parse(
            pair as usize,
            "basic-block count",
            records::gnu_block_v1(enc),
        )?;
        blocks.push(BasicBlockCount {
            address,
            count,
            legacy: None,
        });
    }
    Ok(BasicBlockRecord {
        legacy_name: None,
        blocks,
    })
}

/// Tag 2 of a version-0 file, after its tag byte. Blocks are variable-sized, so the vector only
/// grows as blocks are actually read (bounded by the file size).
fn read_blocks_v0(c: &mut Cursor<'_>, enc: Encoding) -> Result<BasicBlockRecord> {
    let nblocks = c.u32("basic-block record header")?;
    let legacy_name = Some(c.cstr("basic-block record name")?);
    let mut blocks = Vec::new();
    for _ in 0..nblocks {
        let what = "version-0 basic block";
        // Count and address are one unit: a block cut short in them is reported at its start.
        let (count, address) = c.parse(
            2 * enc.ptr_width.bytes(),
            what,
            records::gnu_block_v0_counts(enc),
        )?;
        let function = c.cstr("version-0 basic-block function name")?;
        let file = c.cstr("version-0 basic-block file name")?;
        // The host `int` is 4 bytes on every system gprof ran on; the bits are kept as is.
        let line = c.u32(what)? as i32;
        blocks.push(BasicBlockCount {
            address,
            count,
            legacy: Some(LegacyBlockInfo {
                function,
                file,
                line,
            }),
        });
    }
    Ok(BasicBlockRecord {
        legacy_name,
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CallArc, Dimension, Endian, ProfRate, PtrWidth};
    use crate::read::{ReadOptions, read_with};
    use crate::test_util::{ALL, Bytes};

    fn forced(enc: Encoding) -> ReadOptions {
        ReadOptions::new()
            .with_variant(crate::Variant::Gnu)
            .with_endian(enc.endian)
            .with_ptr_width(enc.ptr_width)
    }

    #[test]
    fn reads_every_record_kind_in_every_encoding() {
        for enc in ALL {
            let bytes = Bytes::new(enc)
                .gnu_header(1)
                .gnu_hist(0x1000, 0x1010, 100, &[0, 5, 0, 0xffff])
                .gnu_arc(0x1004, 0x1008, 42)
                .raw(&[2])
                .u32(1)
                .ptr(0x100c)
                .ptr(9)
                .build();
            for opts in [ReadOptions::new(), forced(enc)] {
                let p = read_with(&bytes, &opts).unwrap();
                assert_eq!(p.encoding, enc);
                assert_eq!(
                    p.header,
                    Header::Gnu(GnuHeader {
                        version: 1,
                        spare: [0; 12]
                    })
                );
                let hist = p.histograms().next().unwrap();
                assert_eq!(
                    (hist.low_pc, hist.high_pc, hist.prof_rate),
                    (0x1000, 0x1010, ProfRate(100))
                );
                assert_eq!(hist.bins, vec![0, 5, 0, 0xffff]);
                assert_eq!(hist.dimension, Dimension::SECONDS);
                assert_eq!(
                    p.arcs().next(),
                    Some(&CallArc {
                        from_pc: 0x1004,
                        self_pc: 0x1008,
                        count: 42
                    })
                );
                let bb = p.basic_blocks().next().unwrap();
                assert_eq!((bb.address, bb.count, &bb.legacy), (0x100c, 9, &None));
                assert_eq!(crate::to_vec(&p).unwrap(), bytes);
            }
        }
    }

    #[test]
    fn reads_version_0_basic_blocks() {
        for enc in ALL {
            let bytes = Bytes::new(enc)
                .gnu_header(0)
                .raw(&[2])
                .u32(2)
                .raw(b"bb\0")
                .ptr(7)
                .ptr(0x40)
                .raw(b"f\0a.c\0")
                .u32(12)
                .ptr(8)
                .ptr(0x48)
                .raw(b"\0\0")
                .u32(0xffff_fffe)
                .build();
            let p = read_with(&bytes, &forced(enc)).unwrap();
            let Record::BasicBlocks(b) = &p.records[0] else {
                panic!("not blocks")
            };
            assert_eq!(b.legacy_name.as_deref(), Some(&b"bb"[..]));
            let legacy = b.blocks[0].legacy.as_ref().unwrap();
            assert_eq!((b.blocks[0].address, b.blocks[0].count), (0x40, 7));
            assert_eq!(
                (&legacy.function[..], &legacy.file[..], legacy.line),
                (&b"f"[..], &b"a.c"[..], 12)
            );
            assert_eq!(b.blocks[1].legacy.as_ref().unwrap().line, -2);
            assert_eq!(crate::to_vec(&p).unwrap(), bytes);
            // Version 0 reads the same in both byte orders, yet detection finds the right one.
            assert_eq!(crate::read(&bytes).unwrap(), p);
        }
    }

    fn err(bytes: &[u8], enc: Encoding) -> Error {
        read_with(bytes, &forced(enc)).unwrap_err()
    }

    #[test]
    fn short_header_is_eof_at_0() {
        let e = err(b"gmon\x01\0\0", Encoding::LITTLE_64);
        assert!(
            matches!(
                e,
                Error::UnexpectedEof {
                    offset: 0,
                    needed: 20,
                    available: 7,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn bad_magic_when_forced_is_at_0() {
        let e = err(&[b'x'; 20], Encoding::LITTLE_64);
        assert!(matches!(e, Error::BadMagic { offset: 0, .. }), "{e}");
        assert!(e.to_string().starts_with("offset 0x0: bad magic cookie"));
    }

    #[test]
    fn unsupported_version_is_at_4() {
        for enc in ALL {
            let e = err(&Bytes::new(enc).gnu_header(2).build(), enc);
            assert!(
                matches!(
                    e,
                    Error::UnsupportedVersion {
                        offset: 4,
                        found: 2,
                        ..
                    }
                ),
                "{e}"
            );
            let e = err(&Bytes::new(enc).gnu_header(GMON_SHOBJ_VERSION).build(), enc);
            assert!(matches!(e, Error::NotSupported { offset: 4, .. }), "{e}");
        }
    }

    #[test]
    fn bad_tag_names_its_offset() {
        for enc in ALL {
            let bytes = Bytes::new(enc)
                .gnu_header(1)
                .gnu_arc(1, 2, 3)
                .raw(&[7])
                .build();
            let e = err(&bytes, enc);
            let at = 20 + 1 + 2 * enc.ptr_width.bytes() as u64 + 4;
            assert!(
                matches!(e, Error::BadTag { offset, tag: 7 } if offset == at),
                "{e}"
            );
            assert_eq!(
                e.to_string(),
                format!("offset {at:#x}: bad tag 7 (expected 0, 1 or 2)")
            );
        }
    }

    #[test]
    fn truncated_records_are_eof_at_their_tag() {
        for enc in ALL {
            let full = Bytes::new(enc).gnu_header(1).gnu_arc(1, 2, 3).build();
            let e = err(&full[..full.len() - 1], enc);
            assert!(
                matches!(
                    e,
                    Error::UnexpectedEof {
                        offset: 20,
                        what: "arc record",
                        ..
                    }
                ),
                "{e}"
            );
            let full = Bytes::new(enc)
                .gnu_header(1)
                .gnu_hist(0, 8, 100, &[])
                .build();
            let e = err(&full[..full.len() - 1], enc);
            assert!(matches!(e, Error::UnexpectedEof { offset: 20, .. }), "{e}");
            let e = err(&Bytes::new(enc).gnu_header(1).raw(&[2, 0]).build(), enc);
            assert!(matches!(e, Error::UnexpectedEof { offset: 20, .. }), "{e}");
        }
    }

    #[test]
    fn huge_bin_count_fails_before_allocating() {
        for enc in ALL {
            let p = enc.ptr_width.bytes();
            let bytes = Bytes::new(enc)
                .gnu_header(1)
                .raw(&[0])
                .ptr(0)
                .ptr(8)
                .u32(u32::MAX)
                .u32(100)
                .raw(&[0; 16])
                .u16(1)
                .build();
            let e = err(&bytes, enc);
            let at = (21 + 2 * p) as u64;
            assert!(
                matches!(e, Error::HistogramTooLarge { offset, bins, available: 2, .. }
                    if offset == at && bins == u64::from(u32::MAX)),
                "{e}"
            );
        }
    }

    #[test]
    fn huge_block_count_fails_before_allocating() {
        let enc = Encoding {
            endian: Endian::Big,
            ptr_width: PtrWidth::Eight,
        };
        let bytes = Bytes::new(enc)
            .gnu_header(1)
            .raw(&[2])
            .u32(u32::MAX)
            .build();
        let e = err(&bytes, enc);
        assert!(
            matches!(
                e,
                Error::UnexpectedEof {
                    offset: 21,
                    available: 0,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn version_0_string_without_nul_is_eof() {
        let enc = Encoding::LITTLE_32;
        let bytes = Bytes::new(enc)
            .gnu_header(0)
            .raw(&[2])
            .u32(1)
            .raw(b"abc")
            .build();
        let e = err(&bytes, enc);
        assert!(
            matches!(
                e,
                Error::UnexpectedEof {
                    offset: 25,
                    needed: 4,
                    ..
                }
            ),
            "{e}"
        );
    }
}
