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
