//! An executable as gprof reads it: its bytes (mapped), byte order and pointer width, and its
//! code section `.text`.

use std::path::Path;

use gmon_format::{Encoding, Endian, PtrWidth};
use goblin::elf::{Elf, section_header};

use crate::Error;
use crate::open::ImageBytes;

/// The executable as gprof sees it: byte order, pointer width, `.text`, symbols.
#[derive(Debug)]
pub struct Image {
    /// The path the image was read from (used in messages).
    pub path: String,
    /// The whole file.
    pub data: ImageBytes,
    /// Byte order and pointer width of the ELF file: what every gmon file is decoded with.
    pub encoding: Encoding,
    /// ELF `e_machine`.
    pub machine: u16,
    /// `.text`: address, size and file offset (`None` for `SHT_NOBITS`).
    pub text_vma: u64,
    /// Size of `.text` in bytes.
    pub text_size: u64,
    /// File offset of `.text`'s bytes.
    pub text_offset: Option<u64>,
}

impl Image {
    /// Reads and checks an executable the user named ([`crate::open::map_named`]): an
    /// [`Error::Io`] when it cannot be read, [`Error::NotElf`] when it is not ELF,
    /// [`Error::NoText`] when it has no code section.
    pub fn open(path: &Path) -> Result<Image, Error> {
        // Not a mappable regular file (a directory, a pipe, an empty file): read, so that
        // errors are the ones `read` gives (e.g. "Is a directory"), and bounded.
        Image::open_with(path, crate::open::map_named)
    }

    /// Like [`Image::open`] for a path read from a file (a sidecar's executable): it must be
    /// a regular file ([`crate::open::open_found`]).
    pub fn open_found(path: &Path) -> Result<Image, Error> {
        Image::open_with(path, crate::open::map_found)
    }

    fn open_with(
        path: &Path,
        map: fn(&Path) -> std::io::Result<ImageBytes>,
    ) -> Result<Image, Error> {
        let shown = path.display().to_string();
        match map(path) {
            Ok(data) => Image::from_data(shown, data),
            Err(error) => Err(Error::Io { path: shown, error }),
        }
    }

    /// Like [`Image::open`] on bytes already read; `path` names them in errors.
    pub fn from_bytes(path: String, data: Vec<u8>) -> Result<Image, Error> {
        Image::from_data(path, ImageBytes::Owned(data))
    }

    fn from_data(path: String, data: ImageBytes) -> Result<Image, Error> {
        let Ok(elf) = parse_elf(&data) else {
            return Err(Error::NotElf { path });
        };
        let encoding = Encoding {
            endian: if elf.little_endian {
                Endian::Little
            } else {
                Endian::Big
            },
            ptr_width: if elf.is_64 {
                PtrWidth::Eight
            } else {
                PtrWidth::Four
            },
        };
        let text = elf
            .section_headers
            .iter()
            .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
            .or_else(|| {
                elf.section_headers
                    .iter()
                    .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some("$CODE$"))
            })
            .ok_or_else(|| Error::NoText { path: path.clone() })?;
        let text_offset = if text.sh_type == section_header::SHT_NOBITS {
            None
        } else {
            Some(text.sh_offset)
        };
        Ok(Image {
            encoding,
            machine: elf.header.e_machine,
            text_vma: text.sh_addr,
            text_size: text.sh_size,
            text_offset,
            path,
            data,
        })
    }

    /// One past the last byte of `.text`.
    pub fn text_end(&self) -> u64 {
        self.text_vma.wrapping_add(self.text_size)
    }

    /// The bytes of `.text`, if present in the file.
    pub fn text_bytes(&self) -> Option<&[u8]> {
        let off = usize::try_from(self.text_offset?).ok()?;
        let len = usize::try_from(self.text_size).ok()?;
        self.data.get(off..off.checked_add(len)?)
    }
}

/// goblin's ELF parse, also accepting string tables that are not UTF-8 (BFD takes any bytes:
/// a Latin-1 source file name in an `STT_FILE` symbol is enough for goblin's strict mode to
/// refuse the whole file). Only that error is retried, in goblin's permissive mode, which
/// gives such strings as "" ([`crate::strtab::symbol_name`] reads them from the raw bytes).
pub fn parse_elf(data: &[u8]) -> goblin::error::Result<Elf<'_>> {
    match Elf::parse(data) {
        Err(e) if e.to_string().contains("invalid utf8") => {
            Elf::parse_with_opts(data, &goblin::options::ParseOptions::permissive())
        }
        r => r,
    }
}
