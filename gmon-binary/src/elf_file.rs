//! An ELF file's sections by name (decompressed where they are compressed) and its notes:
//! what the DWARF reader and the separate-debug-file lookup need, for any class and byte order.
//!
//! goblin reads the file header, the section headers and the program headers, and nothing
//! else: its full parse also decodes the symbol tables, relocations and dynamic section, which
//! these readers do not look at (and which a separate debug file may not even have intact).
//!
//! Debug sections come compressed in two forms, both of which BFD reads: the ELF standard one
//! (`SHF_COMPRESSED`: an `Elf32_Chdr`/`Elf64_Chdr` naming zlib or zstd and the uncompressed
//! size, then the stream), as `objcopy --compress-debug-sections` and `ld
//! --compress-debug-sections` write by default; and GNU's older `.zdebug_*` sections (`ZLIB`,
//! the size as an 8-byte big-endian number, then a zlib stream). A section that cannot be
//! decompressed, whose size differs from the one recorded, or whose recorded size is beyond
//! [`inflate_limit`] reads as absent, with the reason ([`ElfFile::read_section`];
//! spec/inputs.md §3).

use std::borrow::Cow;
use std::io::Read;

use goblin::container::Ctx;
use goblin::elf::compression_header::{
    CompressionHeader, ELFCOMPRESS_ZLIB, ELFCOMPRESS_ZSTD, compression_header32,
    compression_header64,
};
use goblin::elf::section_header::{SHF_COMPRESSED, SHN_XINDEX, SHT_NOBITS};
use goblin::elf::{Elf, ProgramHeader, SectionHeader};

use crate::{Error, SectionProblem};

/// An ELF file, read as far as its section and program headers.
pub struct ElfFile<'data> {
    data: &'data [u8],
    /// goblin's view with only the header, section headers and program headers filled in.
    elf: Elf<'data>,
    /// Class and byte order.
    ctx: Ctx,
    /// The section-name string table.
    names: &'data [u8],
}

impl std::fmt::Debug for ElfFile<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElfFile")
            .field("len", &self.data.len())
            .field("sections", &self.elf.section_headers.len())
            .finish()
    }
}

impl<'data> ElfFile<'data> {
    /// Reads the headers of the ELF file `data`; `None` when it is not one, or its section
    /// or program headers lie outside it.
    pub fn parse(data: &'data [u8]) -> Option<ElfFile<'data>> {
        let header = Elf::parse_header(data).ok()?;
        let container = header.container().ok()?;
        let endian = header.endianness().ok()?;
        let ctx = Ctx::new(container, endian);
        let mut elf = Elf::lazy_parse(header).ok()?;
        let shoff = usize::try_from(header.e_shoff).ok()?;
        elf.section_headers =
            SectionHeader::parse(data, shoff, usize::from(header.e_shnum), ctx).ok()?;
        let phoff = usize::try_from(header.e_phoff).ok()?;
        elf.program_headers =
            ProgramHeader::parse(data, phoff, usize::from(header.e_phnum), ctx).ok()?;
        // With more sections than the header can count, the name table's index is in the
        // first section header's link field.
        let mut strndx = u32::from(header.e_shstrndx);
        if strndx == SHN_XINDEX {
            strndx = elf.section_headers.first().map_or(0, |s| s.sh_link);
        }
        let names = elf
            .section_headers
            .get(usize::try_from(strndx).unwrap_or(usize::MAX))
            .and_then(|s| file_range(data, s))
            .unwrap_or(&[]);
        Some(ElfFile {
            data,
            elf,
            ctx,
            names,
        })
    }

    /// Whether multi-byte fields are little-endian.
    pub fn is_little_endian(&self) -> bool {
        self.ctx.is_little_endian()
    }

    /// The first section named `name` (names compared as bytes).
    fn section_header(&self, name: &str) -> Option<&SectionHeader> {
        self.elf
            .section_headers
            .iter()
            .find(|s| self.name_of(s) == Some(name.as_bytes()))
    }

    fn name_of(&self, s: &SectionHeader) -> Option<&'data [u8]> {
        let rest = self.names.get(s.sh_name..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        rest.get(..end)
    }

    /// Whether the file has a section named `name`.
    pub fn has_section(&self, name: &str) -> bool {
        self.section_header(name).is_some()
    }

    /// The stored bytes of section `name` (empty for a section that occupies no file space),
    /// as they are in the file.
    pub fn raw_section(&self, name: &str) -> Option<&'data [u8]> {
        file_range(self.data, self.section_header(name)?)
    }

    /// The contents of section `name`, decompressed; for a `.debug_*` name also its GNU
    /// compressed twin `.zdebug_*`. `None` when there is no such section or it cannot be read.
    pub fn section_data(&self, name: &str) -> Option<Cow<'data, [u8]>> {
        self.read_section(name).ok().flatten()
    }

    /// [`ElfFile::section_data`], telling a missing section (`Ok(None)`) from one that is
    /// there but cannot be read: `Err` says why, naming the section as it is in the file.
    pub fn read_section(&self, name: &str) -> Result<Option<Cow<'data, [u8]>>, Error> {
        if let Some(s) = self.section_header(name) {
            let fail = |problem| section_error(name, s, problem);
            let bytes =
                file_range(self.data, s).ok_or_else(|| fail(SectionProblem::OutsideFile))?;
            if s.sh_flags & u64::from(SHF_COMPRESSED) == 0 {
                return Ok(Some(Cow::Borrowed(bytes)));
            }
            let bad_header = || fail(SectionProblem::HeaderCutShort);
            let chdr = CompressionHeader::parse(bytes, 0, self.ctx).map_err(|_| bad_header())?;
            let chdr_size = if self.ctx.is_big() {
                compression_header64::SIZEOF_CHDR
            } else {
                compression_header32::SIZEOF_CHDR
            };
            let stream = bytes.get(chdr_size..).ok_or_else(bad_header)?;
            let size = self.checked_size(chdr.ch_size).map_err(fail)?;
            let out = match chdr.ch_type {
                ELFCOMPRESS_ZLIB => inflate(stream, size),
                ELFCOMPRESS_ZSTD => unzstd(stream, size),
                other => return Err(fail(SectionProblem::UnknownCompression(other))),
            };
            return out
                .map(|b| Some(Cow::Owned(b)))
                .ok_or_else(|| fail(SectionProblem::Damaged { size }));
        }
        let Some(tail) = name.strip_prefix(".debug_") else {
            return Ok(None);
        };
        let gnu = format!(".zdebug_{tail}");
        let Some(s) = self.section_header(&gnu) else {
            return Ok(None);
        };
        let fail = |problem| section_error(&gnu, s, problem);
        let bytes = file_range(self.data, s).ok_or_else(|| fail(SectionProblem::OutsideFile))?;
        // `ZLIB`, then the size in 8 big-endian bytes (BFD and object both want the upper
        // half zero, keeping the size below 4 GiB).
        let header = bytes
            .split_first_chunk::<8>()
            .and_then(|(magic, rest)| Some((magic, rest.split_first_chunk::<4>()?)))
            .filter(|(magic, _)| *magic == b"ZLIB\0\0\0\0");
        let Some((_, (size, stream))) = header else {
            return Err(fail(SectionProblem::NoZlibHeader));
        };
        let size = self
            .checked_size(u64::from(u32::from_be_bytes(*size)))
            .map_err(fail)?;
        inflate(stream, size)
            .map(|b| Some(Cow::Owned(b)))
            .ok_or_else(|| fail(SectionProblem::Damaged { size }))
    }

    /// The uncompressed size a compressed section records, if it is within [`inflate_limit`].
    fn checked_size(&self, size: u64) -> Result<usize, SectionProblem> {
        let file_len = self.data.len() as u64;
        let limit = inflate_limit(file_len);
        match usize::try_from(size) {
            Ok(n) if size <= limit => Ok(n),
            _ => Err(SectionProblem::TooLarge {
                size,
                limit,
                file_len,
            }),
        }
    }

    /// The `.gnu_debuglink` section: the debug file's name and the CRC-32 of its contents.
    pub fn gnu_debuglink(&self) -> Option<(&'data [u8], u32)> {
        let bytes = self.raw_section(".gnu_debuglink")?;
        let len = bytes.iter().position(|&b| b == 0)?;
        // The CRC follows the name and its NUL, aligned to 4 bytes.
        let crc_at = (len + 1).div_ceil(4) * 4;
        let crc = *bytes.get(crc_at..)?.first_chunk::<4>()?;
        let crc = if self.is_little_endian() {
            u32::from_le_bytes(crc)
        } else {
            u32::from_be_bytes(crc)
        };
        Some((bytes.get(..len)?, crc))
    }

    /// The GNU build ID (see [`gnu_build_id`]).
    pub fn gnu_build_id(&self) -> Option<Vec<u8>> {
        gnu_build_id(&self.elf, self.data)
    }
}

/// The file bytes of section `s`: empty for `SHT_NOBITS`, `None` when outside the file.
fn file_range<'data>(data: &'data [u8], s: &SectionHeader) -> Option<&'data [u8]> {
    if s.sh_type == SHT_NOBITS {
        return Some(&[]);
    }
    let start = usize::try_from(s.sh_offset).ok()?;
    let len = usize::try_from(s.sh_size).ok()?;
    data.get(start..start.checked_add(len)?)
}

/// The reason a compressed stream did not give the `size` bytes it records.
/// The error for section `name` (its header `s`).
fn section_error(name: &str, s: &SectionHeader, problem: SectionProblem) -> Error {
    Error::Section {
        section: name.to_string(),
        offset: s.sh_offset,
        problem,
    }
}

/// The most bytes one compressed section of a `file_len`-byte file may decompress to: 64
/// times the file (debug information compresses 2 to 10 times, while a few kilobytes of zstd
/// can claim gigabytes), at least 16 MiB (a small file's), at most 4 GiB (what a `.zdebug`
/// size or 32-bit DWARF can address). spec/inputs.md §3.
pub fn inflate_limit(file_len: u64) -> u64 {
    file_len.saturating_mul(64).clamp(16 << 20, 4 << 30)
}

/// Room reserved up front for a decompressed section: its recorded size, but no more than a
/// stream of this length can give (zlib's best case is about 1:1032), so that a corrupt size
/// cannot make us reserve gigabytes.
fn reserve_for(stream: &[u8], size: usize) -> Vec<u8> {
    Vec::with_capacity(size.min(stream.len().saturating_mul(1032).saturating_add(64)))
}

/// Inflates a zlib stream that must give exactly `size` bytes.
fn inflate(stream: &[u8], size: usize) -> Option<Vec<u8>> {
    let mut out = reserve_for(stream, size);
    let limit = u64::try_from(size).ok()?.saturating_add(1);
    flate2::read::ZlibDecoder::new(stream)
        .take(limit)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() == size).then_some(out)
}

/// Decodes zstd frames (skippable frames skipped) that must give exactly `size` bytes.
fn unzstd(mut stream: &[u8], size: usize) -> Option<Vec<u8>> {
    use ruzstd::decoding::StreamingDecoder;
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    let mut out = reserve_for(stream, size);
    while !stream.is_empty() {
        let decoder = match StreamingDecoder::new(&mut stream) {
            Ok(d) => d,
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => {
                stream = stream.get(usize::try_from(length).ok()?..)?;
                continue;
            }
            Err(_) => return None,
        };
        let room = u64::try_from(size.checked_sub(out.len())?).ok()?;
        decoder.take(room + 1).read_to_end(&mut out).ok()?;
    }
    (out.len() == size).then_some(out)
}

/// The descriptor of the ELF file's GNU build-id note (`NT_GNU_BUILD_ID`, owner "GNU"), read from
/// the note sections, else the note segments (a file stripped of its section headers).
pub fn gnu_build_id(elf: &Elf<'_>, data: &[u8]) -> Option<Vec<u8>> {
    use goblin::elf::note::NT_GNU_BUILD_ID;
    let pick = |n: goblin::error::Result<goblin::elf::note::Note<'_>>| {
        n.ok()
            .filter(|n| n.n_type == NT_GNU_BUILD_ID && n.name == "GNU" && !n.desc.is_empty())
            .map(|n| n.desc.to_vec())
    };
    if let Some(found) = elf
        .iter_note_sections(data, None)
        .into_iter()
        .flatten()
        .find_map(pick)
    {
        return Some(found);
    }
    elf.iter_note_headers(data)
        .into_iter()
        .flatten()
        .find_map(pick)
}

/// Test support: compressed copies of an ELF file, made without external tools so that every
/// architecture of testdata/cross can be tried.
#[cfg(test)]
pub(crate) mod compress {
    use std::io::Write as _;

    use super::ElfFile;

    /// How the `.debug_*` sections are compressed.
    #[derive(Clone, Copy, Debug)]
    pub(crate) enum Kind {
        /// `SHF_COMPRESSED` with `ELFCOMPRESS_ZLIB`.
        Zlib,
        /// `SHF_COMPRESSED` with `ELFCOMPRESS_ZSTD`.
        Zstd,
        /// GNU `.zdebug_*` sections.
        Gnu,
    }

    fn put(buf: &mut [u8], at: usize, width: usize, value: u64, little: bool) {
        let bytes = value.to_le_bytes();
        let field = &mut buf[at..at + width];
        field.copy_from_slice(&bytes[..width]);
        if !little {
            field.reverse();
        }
    }

    /// Every ELF file of testdata (x86-64 and the 13 other architectures of testdata/cross:
    /// both byte orders, 32 and 64 bits).
    pub(crate) fn testdata_elf_files() -> Vec<std::path::PathBuf> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
        let mut v: Vec<_> = ["cases", "cross"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).into_iter().flatten())
            .filter_map(|e| e.ok().map(|e| e.path().join("prog")))
            .filter(|p| p.is_file())
            .collect();
        v.sort();
        v
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// `data` with every `.debug_*` section compressed as `kind`: the compressed bytes (and,
    /// for `Gnu`, a new section-name table) are appended to the file and the section headers
    /// pointed at them; the old bytes stay where they were, unused.
    pub(crate) fn compress_debug_sections(data: &[u8], kind: Kind) -> Vec<u8> {
        let file = ElfFile::parse(data).unwrap();
        let little = file.is_little_endian();
        let is64 = file.ctx.is_big();
        let header = &file.elf.header;
        let (shoff, shentsize) = (header.e_shoff as usize, usize::from(header.e_shentsize));
        // (flags, offset, size) field offsets and widths in a section header.
        let (flags, offset, size, width) = if is64 { (8, 24, 32, 8) } else { (8, 16, 20, 4) };
        let mut out = data.to_vec();
        let mut names = file.names.to_vec();
        let mut renamed = false;
        for (i, s) in file.elf.section_headers.iter().enumerate() {
            let Some(name) = file.name_of(s) else {
                continue;
            };
            let Some(tail) = name.strip_prefix(b".debug_") else {
                continue;
            };
            let raw = super::file_range(data, s).unwrap();
            let sh = shoff + i * shentsize;
            let mut payload = Vec::new();
            match kind {
                Kind::Zlib | Kind::Zstd => {
                    let (ch_type, stream) = match kind {
                        Kind::Zlib => (super::ELFCOMPRESS_ZLIB, zlib(raw)),
                        _ => (
                            super::ELFCOMPRESS_ZSTD,
                            ruzstd::encoding::compress_to_vec(
                                raw,
                                ruzstd::encoding::CompressionLevel::Fastest,
                            ),
                        ),
                    };
                    let mut chdr = vec![0u8; if is64 { 24 } else { 12 }];
                    put(&mut chdr, 0, 4, u64::from(ch_type), little);
                    put(
                        &mut chdr,
                        if is64 { 8 } else { 4 },
                        width,
                        raw.len() as u64,
                        little,
                    );
                    put(&mut chdr, if is64 { 16 } else { 8 }, width, 1, little);
                    payload.extend(chdr);
                    payload.extend(stream);
                    let f = s.sh_flags | u64::from(super::SHF_COMPRESSED);
                    put(&mut out, sh + flags, width, f, little);
                }
                Kind::Gnu => {
                    payload.extend_from_slice(b"ZLIB");
                    payload.extend_from_slice(&(raw.len() as u64).to_be_bytes());
                    payload.extend(zlib(raw));
                    let at = names.len() as u64;
                    names.extend_from_slice(b".zdebug_");
                    names.extend_from_slice(tail);
                    names.push(0);
                    put(&mut out, sh, 4, at, little);
                    renamed = true;
                }
            }
            while !out.len().is_multiple_of(8) {
                out.push(0);
            }
            let at = out.len() as u64;
            put(&mut out, sh + offset, width, at, little);
            put(&mut out, sh + size, width, payload.len() as u64, little);
            out.extend(payload);
        }
        if renamed {
            let sh = shoff + usize::from(header.e_shstrndx) * shentsize;
            let at = out.len() as u64;
            put(&mut out, sh + offset, width, at, little);
            put(&mut out, sh + size, width, names.len() as u64, little);
            out.extend(names);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::compress::{Kind, compress_debug_sections, testdata_elf_files};
    use super::*;

    const DEBUG: [&str; 5] = [
        ".debug_info",
        ".debug_abbrev",
        ".debug_line",
        ".debug_str",
        ".debug_line_str",
    ];

    /// Compressed sections (ELF zlib and zstd, GNU `.zdebug`) read back as the uncompressed
    /// bytes, on every architecture.
    #[test]
    fn compressed_sections_read_as_the_originals() {
        let files = testdata_elf_files();
        assert!(files.len() > 40, "only {} testdata programs", files.len());
        let (mut classes, mut orders) = (std::collections::BTreeSet::new(), 0u32);
        let mut compared = 0;
        for path in &files {
            let data = std::fs::read(path).unwrap();
            let plain = ElfFile::parse(&data).unwrap();
            classes.insert((plain.ctx.is_big(), plain.is_little_endian()));
            orders += u32::from(!plain.is_little_endian());
            for kind in [Kind::Zlib, Kind::Zstd, Kind::Gnu] {
                let packed = compress_debug_sections(&data, kind);
                let file = ElfFile::parse(&packed).unwrap();
                for name in DEBUG {
                    let want = plain.section_data(name);
                    let got = file.section_data(name);
                    assert_eq!(got, want, "{} {kind:?} {name}", path.display());
                    if want.as_ref().is_some_and(|w| !w.is_empty()) {
                        compared += 1;
                        assert_ne!(
                            file.raw_section(name).map(<[u8]>::to_vec),
                            want.map(|w| w.to_vec()),
                            "{} {kind:?} {name}: not compressed",
                            path.display()
                        );
                    }
                }
            }
        }
        assert!(compared > 500, "only {compared} sections compared");
        assert_eq!(
            classes.len(),
            4,
            "not every class and byte order: {classes:?}"
        );
        assert!(orders > 0);
    }

    /// A compressed section whose stream is cut short, or whose recorded size is wrong, reads
    /// as absent rather than as wrong bytes.
    #[test]
    fn damaged_compressed_sections_read_as_absent() {
        let path = &testdata_elf_files()[0];
        let data = std::fs::read(path).unwrap();
        let packed = compress_debug_sections(&data, Kind::Zlib);
        let file = ElfFile::parse(&packed).unwrap();
        let sh = file.section_header(".debug_info").unwrap().clone();
        let (start, len) = (sh.sh_offset as usize, sh.sh_size as usize);
        // Recorded size one byte larger (ELF64 LE: ch_size at +8).
        let mut bad = packed.clone();
        bad[start + 8] = bad[start + 8].wrapping_add(1);
        assert_eq!(
            ElfFile::parse(&bad).unwrap().section_data(".debug_info"),
            None
        );
        // Stream cut in half (the section header says so too: still within the file).
        let mut cut = packed.clone();
        for b in &mut cut[start + 24 + (len - 24) / 2..start + len] {
            *b = 0;
        }
        assert_eq!(
            ElfFile::parse(&cut).unwrap().section_data(".debug_info"),
            None
        );
        // An unknown compression type.
        let mut odd = packed;
        odd[start] = 9;
        assert_eq!(
            ElfFile::parse(&odd).unwrap().section_data(".debug_info"),
            None
        );
    }

    /// A recorded size beyond [`inflate_limit`] is refused before anything is decompressed,
    /// with a reason that names the section; the limit follows the file's size.
    #[test]
    fn recorded_sizes_beyond_the_limit_are_refused() {
        assert_eq!(inflate_limit(1000), 16 << 20);
        assert_eq!(inflate_limit(1 << 20), 64 << 20);
        assert_eq!(inflate_limit(1 << 40), 4 << 30);
        let data = std::fs::read(&testdata_elf_files()[0]).unwrap();
        let packed = compress_debug_sections(&data, Kind::Zstd);
        let file = ElfFile::parse(&packed).unwrap();
        let start = file.section_header(".debug_info").unwrap().sh_offset as usize;
        let limit = inflate_limit(packed.len() as u64);
        let mut bad = packed.clone();
        // ELF64 LE: ch_size at +8.
        bad[start + 8..start + 16].copy_from_slice(&(limit + 1).to_le_bytes());
        let why = ElfFile::parse(&bad)
            .unwrap()
            .read_section(".debug_info")
            .unwrap_err();
        assert_eq!(
            why.to_string(),
            format!(
                "section .debug_info records {} bytes uncompressed, more than the {limit} \
                 allowed in a {}-byte file",
                limit + 1,
                bad.len()
            )
        );
        // The error carries the section, its offset and what was wrong.
        assert!(matches!(
            why,
            crate::Error::Section { ref section, offset, problem: crate::SectionProblem::TooLarge { .. } }
                if section == ".debug_info" && offset == start as u64
        ));
        // Absent and unreadable are told apart.
        assert!(matches!(file.read_section(".debug_nothing"), Ok(None)));
        assert!(matches!(file.read_section(".debug_info"), Ok(Some(_))));
    }

    #[test]
    fn not_elf_and_truncated_headers_are_refused() {
        assert!(ElfFile::parse(b"not an ELF file").is_none());
        let data = std::fs::read(&testdata_elf_files()[0]).unwrap();
        // Section headers sit at the end of the file: cutting the file loses them.
        assert!(ElfFile::parse(&data[..data.len() - 10]).is_none());
        let full = ElfFile::parse(&data).unwrap();
        assert!(full.has_section(".text"));
        assert!(full.gnu_build_id().is_some());
        assert_eq!(full.gnu_debuglink(), None);
    }
}
