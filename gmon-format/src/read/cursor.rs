//! A bounds-checked cursor over the whole file, parameterised by byte order at run time.
//!
//! Every read returns [`Error::UnexpectedEof`] with the offset of the item when the file is too
//! short, so the parsers never index or slice unchecked. The byte order is settled once per file
//! and every integer read goes through [`Cursor::uint`], the single place that applies it.

use byteorder::{BigEndian, ByteOrder, LittleEndian};

use crate::error::{Error, Result};
use crate::model::Endian;

/// Reading position in a file.
#[derive(Clone, Debug)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    endian: Endian,
}

impl<'a> Cursor<'a> {
    /// A cursor at offset 0 of `data`.
    pub(crate) fn new(data: &'a [u8], endian: Endian) -> Cursor<'a> {
        Cursor {
            data,
            pos: 0,
            endian,
        }
    }

    /// Current file offset.
    pub(crate) fn offset(&self) -> u64 {
        self.pos as u64
    }

    /// Bytes left after the current offset.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Whether the whole file has been consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The bytes after the current offset, without consuming them.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }

    /// The error for an item of `needed` bytes that does not fit at the current offset.
    pub(crate) fn eof(&self, what: &'static str, needed: u64) -> Error {
        Error::UnexpectedEof {
            offset: self.offset(),
            what,
            needed,
            available: self.remaining() as u64,
        }
    }

    /// Takes `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or_else(|| self.eof(what, n as u64))?;
        let slice = self
            .data
            .get(self.pos..end)
            .ok_or_else(|| self.eof(what, n as u64))?;
        self.pos = end;
        Ok(slice)
    }

    /// Takes the `n` bytes of a fixed layout and decodes them with a nom parser from
    /// [`super::records`]; too few bytes is the end-of-file error at the current offset.
    pub(crate) fn parse<O>(
        &mut self,
        n: usize,
        what: &'static str,
        parser: impl nom::Parser<&'a [u8], Output = O, Error = nom::error::Error<&'a [u8]>>,
    ) -> Result<O> {
        let offset = self.offset();
        let bytes = self.bytes(n, what)?;
        super::records::run(parser, bytes, offset, what)
    }

    /// Takes `N` bytes as an array.
    pub(crate) fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N, what)?);
        Ok(out)
    }

    /// Takes one byte.
    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    /// Takes an unsigned integer of `size` bytes (1, 2, 4 or 8) in the file's byte order.
    pub(crate) fn uint(&mut self, size: usize, what: &'static str) -> Result<u64> {
        let raw = self.bytes(size, what)?;
        Ok(decode(raw, self.endian))
    }

    /// Takes a `u32`.
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        // Four bytes never exceed u32::MAX.
        Ok(self.uint(4, what)? as u32)
    }

    /// Takes a NUL-terminated string, returning it without its NUL.
    pub(crate) fn cstr(&mut self, what: &'static str) -> Result<Vec<u8>> {
        let rest = self.rest();
        let len = rest.iter().position(|&b| b == 0).ok_or_else(|| {
            // The string needs at least one byte more than is left: its NUL.
            self.eof(what, rest.len() as u64 + 1)
        })?;
        let s = self.bytes(len, what)?.to_vec();
        self.bytes(1, what)?;
        Ok(s)
    }
}

/// Decodes up to 8 bytes as an unsigned integer in `endian` order (byteorder's `read_uint`,
/// which would panic on 0 or more than 8 bytes: those give 0, and no caller passes them).
pub(crate) fn decode(raw: &[u8], endian: Endian) -> u64 {
    if raw.is_empty() || raw.len() > 8 {
        return 0;
    }
    match endian {
        Endian::Big => BigEndian::read_uint(raw, raw.len()),
        Endian::Little => LittleEndian::read_uint(raw, raw.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_both_orders() {
        assert_eq!(decode(&[1, 2, 3, 4], Endian::Big), 0x0102_0304);
        assert_eq!(decode(&[1, 2, 3, 4], Endian::Little), 0x0403_0201);
        assert_eq!(decode(&[0xff; 8], Endian::Little), u64::MAX);
    }

    #[test]
    fn eof_names_offset_and_sizes() {
        let mut c = Cursor::new(&[1, 2, 3], Endian::Little);
        assert_eq!(c.uint(2, "a").unwrap(), 0x0201);
        let err = c.u32("thing").unwrap_err();
        assert_eq!(err.offset(), Some(2));
        assert_eq!(
            err.to_string(),
            "offset 0x2: unexpected end of file in thing (needed 4 bytes, 1 left)"
        );
    }

    #[test]
    fn cstr_without_nul_is_eof() {
        let mut c = Cursor::new(b"ab\0cd", Endian::Big);
        assert_eq!(c.cstr("s").unwrap(), b"ab");
        let err = c.cstr("s").unwrap_err();
        assert_eq!(err.offset(), Some(3));
    }
}
