//! Where each section of a sidecar lies: for `gmon dump`, which shows every section with its
//! offset, the ones this reader does not know included (spec/runtime.md §5.2).

use super::{
    GMONX_MAGIC, SECTION_CLOCK, SECTION_GMON_LINK, SECTION_INFO, SECTION_MAPPINGS, SECTION_OBJECTS,
    SECTION_PC_SAMPLES, SECTION_PROCESSES, SECTION_STACK_KINDS, SECTION_STACKS,
    SECTION_THREAD_CLOCKS, SECTION_THREADS, SECTION_UNCLOCKED, SECTION_WINDOW, read_sidecar,
};
use crate::Result;

/// One section of a sidecar file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionSpan {
    /// Its kind (`SECTION_*`; any other value is a section of a later writer).
    pub kind: u32,
    /// File offset of its 12-byte header (kind, length).
    pub offset: u64,
    /// Length of its body, which follows the header.
    pub length: u64,
}

impl SectionSpan {
    /// The kind's name in spec/runtime.md §5 (`INFO`, `OBJECTS`, ...), `None` for a kind this
    /// reader does not know.
    pub fn name(&self) -> Option<&'static str> {
        Some(match self.kind {
            SECTION_INFO => "INFO",
            SECTION_OBJECTS => "OBJECTS",
            SECTION_PC_SAMPLES => "PC_SAMPLES",
            SECTION_STACKS => "STACKS",
            SECTION_THREADS => "THREADS",
            SECTION_GMON_LINK => "GMON_LINK",
            SECTION_STACK_KINDS => "STACK_KINDS",
            SECTION_CLOCK => "CLOCK",
            SECTION_MAPPINGS => "MAPPINGS",
            SECTION_PROCESSES => "PROCESSES",
            SECTION_UNCLOCKED => "UNCLOCKED",
            SECTION_WINDOW => "WINDOW",
            SECTION_THREAD_CLOCKS => "THREAD_CLOCKS",
            _ => return None,
        })
    }
}

/// The sections of a sidecar file, in file order. The file is checked in full first
/// ([`read_sidecar`]'s errors), so a section list is only given for a file that reads.
pub fn sidecar_sections(bytes: &[u8]) -> Result<Vec<SectionSpan>> {
    read_sidecar_sections(bytes).map(|(_, spans)| spans)
}

/// [`read_sidecar`] and [`sidecar_sections`] in one reading of the file.
pub fn read_sidecar_sections(bytes: &[u8]) -> Result<(super::Sidecar, Vec<SectionSpan>)> {
    let sidecar = read_sidecar(bytes)?;
    let mut spans = Vec::new();
    // 16-byte file header: magic, version, flags.
    let mut at = GMONX_MAGIC.len() + 8;
    while let Some(header) = bytes.get(at..at + 12) {
        let kind = u32::from_le_bytes(header[..4].try_into().unwrap_or_default());
        let length = u64::from_le_bytes(header[4..].try_into().unwrap_or_default());
        spans.push(SectionSpan {
            kind,
            offset: at as u64,
            length,
        });
        // read_sidecar checked that every body fits in the file.
        at = match usize::try_from(length)
            .ok()
            .and_then(|l| (at + 12).checked_add(l))
        {
            Some(next) => next,
            None => break,
        };
    }
    Ok((sidecar, spans))
}

#[cfg(test)]
mod tests {
    use super::super::{Sidecar, sidecar_to_vec};
    use super::*;

    #[test]
    fn sections_are_listed_in_file_order_with_unknown_kinds() {
        let s = Sidecar {
            writer: "w".into(),
            ..Sidecar::default()
        };
        let mut bytes = sidecar_to_vec(&s).unwrap();
        // A section of a later writer: kind 99, 3 bytes.
        bytes.extend_from_slice(&99u32.to_le_bytes());
        bytes.extend_from_slice(&3u64.to_le_bytes());
        bytes.extend_from_slice(b"abc");
        let spans = sidecar_sections(&bytes).unwrap();
        assert_eq!(
            spans.first().map(|s| (s.offset, s.name())),
            Some((16, Some("INFO")))
        );
        let last = spans.last().unwrap();
        assert_eq!((last.kind, last.length, last.name()), (99, 3, None));
        assert_eq!(last.offset as usize, bytes.len() - 15);
        let mut at = 16;
        for s in &spans {
            assert_eq!(s.offset, at);
            at += 12 + s.length;
        }
        assert_eq!(at as usize, bytes.len());
        // A file that does not read has no section list.
        assert!(sidecar_sections(&bytes[..bytes.len() - 1]).is_err());
    }
}
