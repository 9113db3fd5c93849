//! The DWARF sections of an ELF file, as gimli reads them: goblin finds the bytes
//! ([`ElfFile::section_data`], which also decompresses them), gimli reads the DWARF.

use std::borrow::Cow;

use gimli::{EndianSlice, RunTimeEndian};

use crate::elf_file::ElfFile;

/// How every DWARF reader here reads: straight from the section bytes.
pub(super) type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// The sections gprof's line information reads.
const WANTED: [gimli::SectionId; 9] = [
    gimli::SectionId::DebugInfo,
    gimli::SectionId::DebugAbbrev,
    gimli::SectionId::DebugLine,
    gimli::SectionId::DebugLineStr,
    gimli::SectionId::DebugStr,
    gimli::SectionId::DebugStrOffsets,
    gimli::SectionId::DebugRanges,
    gimli::SectionId::DebugRngLists,
    gimli::SectionId::DebugAddr,
];

/// The DWARF sections of one ELF file (decompressed where they are compressed; a missing or
/// unreadable section is empty).
#[derive(Debug)]
pub(super) struct Sections<'data> {
    endian: RunTimeEndian,
    bytes: Vec<(gimli::SectionId, Cow<'data, [u8]>)>,
    /// Why each section that is there but could not be read reads as empty (one message per
    /// section, naming it): a compressed section too large or damaged (spec/inputs.md §3).
    pub(super) unreadable: Vec<String>,
}

impl<'data> Sections<'data> {
    /// The sections of the ELF file `data`, or `None` when it is not one.
    pub(super) fn read(data: &'data [u8]) -> Option<Sections<'data>> {
        let file = ElfFile::parse(data)?;
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let mut unreadable = Vec::new();
        let bytes = WANTED
            .iter()
            .map(|&id| {
                let b = file.read_section(id.name()).unwrap_or_else(|why| {
                    unreadable.push(format!("{why}; read as absent"));
                    None
                });
                (id, b.unwrap_or(Cow::Borrowed(&[])))
            })
            .collect();
        Some(Sections {
            endian,
            bytes,
            unreadable,
        })
    }

    /// The bytes of section `id` (empty when absent).
    pub(super) fn get(&self, id: gimli::SectionId) -> &[u8] {
        self.bytes
            .iter()
            .find(|(i, _)| *i == id)
            .map_or(&[], |(_, b)| b.as_ref())
    }

    /// gimli's view of the sections.
    pub(super) fn dwarf(&self) -> Option<gimli::Dwarf<Reader<'_>>> {
        gimli::Dwarf::load(|id| -> Result<Reader<'_>, gimli::Error> {
            Ok(EndianSlice::new(self.get(id), self.endian))
        })
        .ok()
    }
}
