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
use crate::error::{Error, Result};
use crate::model::{
    Arc, BasicBlockCount, BasicBlockRecord, Dimension, Encoding, GMON_MAGIC, GMON_SHOBJ_VERSION,
    GMON_TAG_BB_COUNT, GMON_TAG_CG_ARC, GMON_TAG_TIME_HIST, GnuHeader, Header, Histogram,
    LegacyBlockInfo, ProfRate, Profile, Record,
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
    let tag_offset = c.offset();
    let tag = c.u8("record tag")?;
    match tag {
        GMON_TAG_TIME_HIST => read_histogram(c, enc).map(Record::Histogram),
        GMON_TAG_CG_ARC => {
            let what = "arc record";
            let needed = 2 * enc.ptr_width.bytes() + 4;
            if c.remaining() < needed {
                return Err(c.eof(what, needed as u64));
            }
            let from_pc = c.ptr(enc.ptr_width, what)?;
            let self_pc = c.ptr(enc.ptr_width, what)?;
            let count = u64::from(c.u32(what)?);
            Ok(Record::Arc(Arc {
                from_pc,
                self_pc,
                count,
            }))
        }
        GMON_TAG_BB_COUNT if version == 0 => read_blocks_v0(c, enc).map(Record::BasicBlocks),
        GMON_TAG_BB_COUNT => read_blocks_v1(c, enc).map(Record::BasicBlocks),
        tag => Err(Error::BadTag {
            offset: tag_offset,
            tag,
        }),
    }
}

/// Tag 0 after its tag byte.
fn read_histogram(c: &mut Cursor<'_>, enc: Encoding) -> Result<Histogram> {
    let what = "histogram record header";
    let header_len = 2 * enc.ptr_width.bytes() + 24;
    if c.remaining() < header_len {
        return Err(c.eof(what, header_len as u64));
    }
    let low_pc = c.ptr(enc.ptr_width, what)?;
    let high_pc = c.ptr(enc.ptr_width, what)?;
    let count_offset = c.offset();
    let nbins = c.u32(what)?;
    let prof_rate = ProfRate(c.u32(what)?);
    let name = c.array::<15>(what)?;
    let abbrev = c.u8(what)?;
    let needed = u64::from(nbins) * 2;
    if needed > c.remaining() as u64 {
        return Err(Error::HistogramTooLarge {
            offset: count_offset,
            bins: u64::from(nbins),
            needed,
            available: c.remaining() as u64,
        });
    }
    let mut bins = Vec::with_capacity(nbins as usize);
    for _ in 0..nbins {
        bins.push(u64::from(c.u16("histogram bins")?));
    }
    Ok(Histogram {
        low_pc,
        high_pc,
        prof_rate,
        dimension: Dimension { name, abbrev },
        bins,
    })
}

/// Tag 2 of a version-1 file, after its tag byte.
fn read_blocks_v1(c: &mut Cursor<'_>, enc: Encoding) -> Result<BasicBlockRecord> {
    let nblocks = c.u32("basic-block record header")?;
    let pair = 2 * enc.ptr_width.bytes() as u64;
    let needed = u64::from(nblocks) * pair;
    if needed > c.remaining() as u64 {
        return Err(c.eof("basic-block counts", needed));
    }
    let mut blocks = Vec::with_capacity(nblocks as usize);
    for _ in 0..nblocks {
        let address = c.ptr(enc.ptr_width, "basic-block count")?;
        let count = c.ptr(enc.ptr_width, "basic-block count")?;
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
        let count = c.ptr(enc.ptr_width, what)?;
        let address = c.ptr(enc.ptr_width, what)?;
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
