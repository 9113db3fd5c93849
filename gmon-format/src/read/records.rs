//! The fixed layouts of the records, as nom parsers: GNU histogram headers, arcs and
//! basic-block entries, the 4.4BSD and old BSD headers and the BSD arc.
//!
//! Each parser takes exactly the bytes of its layout. The readers first take those bytes from
//! the [`Cursor`](super::cursor::Cursor), which checks that they are there and names the offset
//! the spec gives when they are not (`spec/gnu.md` and `spec/bsd.md`, "Rejections"); nom then
//! decodes the fields in the file's byte order. So a nom failure cannot happen on the slices
//! the readers pass; [`run`] still turns one into the cursor's end-of-file error rather than a
//! panic.

use byteorder::{BigEndian, ByteOrder, LittleEndian};
use nom::bytes::complete::take;
use nom::number::Endianness;
use nom::number::complete::{u8 as byte, u32, u64};
use nom::{IResult, Parser};

use crate::error::Error;
use crate::model::{CallArc, Dimension, Encoding, Endian, ProfRate, PtrWidth};

type Input<'a> = &'a [u8];

/// nom's name for a byte order.
fn endianness(e: Endian) -> Endianness {
    match e {
        Endian::Little => Endianness::Little,
        Endian::Big => Endianness::Big,
    }
}

/// An address (or BSD `long`) of the encoding's width.
fn ptr<'a>(enc: Encoding) -> impl Fn(Input<'a>) -> IResult<Input<'a>, u64> {
    let e = endianness(enc.endian);
    move |i| match enc.ptr_width {
        PtrWidth::Four => u32(e).map(u64::from).parse(i),
        PtrWidth::Eight => u64(e).parse(i),
    }
}

/// Runs `parser` on `bytes`, which the caller took from the cursor at `offset` for `what`.
pub(crate) fn run<'a, O>(
    mut parser: impl Parser<Input<'a>, Output = O, Error = nom::error::Error<Input<'a>>>,
    bytes: Input<'a>,
    offset: u64,
    what: &'static str,
) -> Result<O, Error> {
    parser
        .parse(bytes)
        .map(|(_, out)| out)
        .map_err(|_| Error::UnexpectedEof {
            offset,
            what,
            needed: bytes.len() as u64 + 1,
            available: bytes.len() as u64,
        })
}

/// The fields of a GNU histogram record after its tag byte (`2P + 24` bytes).
pub(crate) struct GnuHistHeader {
    pub(crate) low_pc: u64,
    pub(crate) high_pc: u64,
    pub(crate) bins: u32,
    pub(crate) prof_rate: ProfRate,
    pub(crate) dimension: Dimension,
}

/// `low_pc: P | high_pc: P | hist_size: u32 | prof_rate: u32 | dimen: 15 | dimen_abbrev: u8`.
pub(crate) fn gnu_hist_header<'a>(
    enc: Encoding,
) -> impl Fn(Input<'a>) -> IResult<Input<'a>, GnuHistHeader> {
    let e = endianness(enc.endian);
    move |i| {
        let (i, (low_pc, high_pc, bins, prof_rate, dimen, abbrev)) =
            (ptr(enc), ptr(enc), u32(e), u32(e), take(15usize), byte).parse(i)?;
        let mut name = [0u8; 15];
        name.copy_from_slice(dimen);
        Ok((
            i,
            GnuHistHeader {
                low_pc,
                high_pc,
                bins,
                prof_rate: ProfRate(prof_rate),
                dimension: Dimension { name, abbrev },
            },
        ))
    }
}

/// A GNU arc after its tag byte: `from_pc: P | self_pc: P | count: u32`.
pub(crate) fn gnu_arc<'a>(enc: Encoding) -> impl Fn(Input<'a>) -> IResult<Input<'a>, CallArc> {
    let e = endianness(enc.endian);
    move |i| {
        let (i, (from_pc, self_pc, count)) = (ptr(enc), ptr(enc), u32(e)).parse(i)?;
        Ok((
            i,
            CallArc {
                from_pc,
                self_pc,
                count: u64::from(count),
            },
        ))
    }
}

/// A version-1 basic-block entry: `address: P | count: P`.
pub(crate) fn gnu_block_v1<'a>(
    enc: Encoding,
) -> impl Fn(Input<'a>) -> IResult<Input<'a>, (u64, u64)> {
    move |i| (ptr(enc), ptr(enc)).parse(i)
}

/// The start of a version-0 basic-block entry: `count: P | address: P`.
pub(crate) fn gnu_block_v0_counts<'a>(
    enc: Encoding,
) -> impl Fn(Input<'a>) -> IResult<Input<'a>, (u64, u64)> {
    move |i| (ptr(enc), ptr(enc)).parse(i)
}

/// A 4.4BSD `struct gmonhdr` (`2P + 24` bytes).
pub(crate) struct Bsd44Fields {
    pub(crate) low_pc: u64,
    pub(crate) high_pc: u64,
    pub(crate) ncnt: u32,
    pub(crate) version: u32,
    pub(crate) prof_rate: u32,
    pub(crate) histcounter_type: i32,
    pub(crate) spare: [u8; 8],
}

/// `lpc: P | hpc: P | ncnt: u32 | version: u32 | profrate: u32 | histcounter_type: i32 |
/// spare: 8`.
pub(crate) fn bsd44_header<'a>(
    enc: Encoding,
) -> impl Fn(Input<'a>) -> IResult<Input<'a>, Bsd44Fields> {
    let e = endianness(enc.endian);
    move |i| {
        let (i, (low_pc, high_pc, ncnt, version, prof_rate, histcounter_type, spare)) = (
            ptr(enc),
            ptr(enc),
            u32(e),
            u32(e),
            u32(e),
            // Signed in FreeBSD; the bits are kept and read as i32 (spec/bsd.md).
            u32(e).map(|v| v as i32),
            take(8usize),
        )
            .parse(i)?;
        let mut sp = [0u8; 8];
        sp.copy_from_slice(spare);
        Ok((
            i,
            Bsd44Fields {
                low_pc,
                high_pc,
                ncnt,
                version,
                prof_rate,
                histcounter_type,
                spare: sp,
            },
        ))
    }
}

/// The `2P + 4` bytes every old BSD header starts with: `lpc: P | hpc: P | ncnt: u32`.
pub(crate) fn bsd_old_header<'a>(
    enc: Encoding,
) -> impl Fn(Input<'a>) -> IResult<Input<'a>, (u64, u64, u32)> {
    let e = endianness(enc.endian);
    move |i| (ptr(enc), ptr(enc), u32(e)).parse(i)
}

/// A BSD `struct rawarc`: `from_pc: P | self_pc: P | count: P`.
pub(crate) fn bsd_arc<'a>(enc: Encoding) -> impl Fn(Input<'a>) -> IResult<Input<'a>, CallArc> {
    move |i| {
        let (i, (from_pc, self_pc, count)) = (ptr(enc), ptr(enc), ptr(enc)).parse(i)?;
        Ok((
            i,
            CallArc {
                from_pc,
                self_pc,
                count,
            },
        ))
    }
}

/// `n` unsigned 16-bit bins in the file's byte order (the caller has taken `2n` bytes), decoded
/// in bulk: a histogram is most of a file, and one parser call per bin cost most of a read.
pub(crate) fn u16_bins(bytes: Input<'_>, endian: Endian) -> Vec<u64> {
    // `chunks_exact(2)` gives byteorder exactly the two bytes it reads.
    let pairs = bytes.chunks_exact(2);
    match endian {
        Endian::Little => pairs
            .map(|c| u64::from(LittleEndian::read_u16(c)))
            .collect(),
        Endian::Big => pairs.map(|c| u64::from(BigEndian::read_u16(c))).collect(),
    }
}
