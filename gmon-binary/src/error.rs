//! The one error type of the crate.

use std::io;

/// Why a binary could not be read. Every variant names the file (as the caller spelled it) and
/// what was expected of it; its text is the one GNU tools print without their program name
/// (`prog: not in executable format`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or read (the text is C's `perror` text:
    /// `prog: No such file or directory`).
    #[error("{path}: {}", io_text(error))]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        error: io::Error,
    },
    /// The file is not an ELF object (BFD: "file format not recognized").
    #[error("{path}: not in executable format")]
    NotElf {
        /// The file.
        path: String,
    },
    /// The ELF file has no code section (`.text`, or `$CODE$`), which gprof needs for its
    /// address range.
    #[error("can't find .text section in {path}")]
    NoText {
        /// The file.
        path: String,
    },
    /// A section is in the ELF file but cannot be read as its header says (spec/inputs.md §3);
    /// readers take it as absent, and say so with this text.
    #[error("section {section}{problem}")]
    Section {
        /// The section's name as it is in the file (`.zdebug_info` for GNU's compressed form).
        section: String,
        /// File offset of the section's bytes (`sh_offset`).
        offset: u64,
        /// What was expected there and not found.
        problem: SectionProblem,
    },
}

/// What is wrong with a section ([`Error::Section`]). The text follows the section's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SectionProblem {
    /// Its bytes do not lie inside the file.
    #[error(" lies outside the file")]
    OutsideFile,
    /// Shorter than the compression header (`Elf32_Chdr`/`Elf64_Chdr`) it must start with.
    #[error(": compression header cut short")]
    HeaderCutShort,
    /// A compression type other than zlib (1) and zstd (2).
    #[error(": unknown compression type {0}")]
    UnknownCompression(u32),
    /// A `.zdebug_*` section that does not start with `ZLIB` and an 8-byte size.
    #[error(": no \"ZLIB\" header")]
    NoZlibHeader,
    /// The recorded uncompressed size is beyond what a file of this size may inflate to.
    #[error(
        " records {size} bytes uncompressed, more than the {limit} allowed in a \
         {file_len}-byte file"
    )]
    TooLarge {
        /// The recorded size.
        size: u64,
        /// The limit for this file (`elf_file::inflate_limit`).
        limit: u64,
        /// The file's size.
        file_len: u64,
    },
    /// The stream is damaged, or decompresses to another size than the one recorded.
    #[error(": the compressed data does not decompress to the {size} bytes recorded")]
    Damaged {
        /// The recorded size.
        size: usize,
    },
}

/// `strerror(errno)` of an I/O error as C prints it: the system's text without Rust's
/// ` (os error N)` suffix.
pub fn io_text(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => "No such file or directory".to_string(),
        io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
        _ => {
            let s = err.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    }
}
