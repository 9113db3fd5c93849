//! Reading input files, with errors that name the file and the real problem: a directory, a
//! file that is not a profile at all (and what it looks like instead), or a profile broken at a
//! byte offset.

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::Path;

use crate::Result;
use crate::output::os_reason;

/// An input that could not be read: `PATH: is a directory`, `PATH: No such file or directory`.
#[derive(Debug)]
pub struct ReadError {
    /// The path as given.
    pub name: String,
    /// The OS error's kind.
    pub kind: io::ErrorKind,
    reason: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.reason)
    }
}

// No `source()`: the OS reason is already in the message.
impl std::error::Error for ReadError {}

/// Reads a whole input file the user named, naming it in the error (a directory says so; a
/// pipe or device is read up to [`gmon_binary::open::MAX_STREAM_BYTES`]).
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    gmon_binary::open::read_named(path).map_err(|e| read_error(path, &e).into())
}

/// An error when `path` is a gmon-write sidecar rather than a profile, said before anything
/// else is looked for (the views would otherwise first go looking for an executable). A file
/// that cannot be read is left to the reading that follows, which says why.
pub fn refuse_sidecar(path: &Path) -> Result<()> {
    let mut head = [0u8; 8];
    let read = fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
    if read.is_ok() && head == gmon_format::sidecar::GMONX_MAGIC {
        return Err(NotAProfile {
            name: path.display().to_string(),
            reason: what_it_is(&head).to_owned(),
            tried: String::new(),
        }
        .into());
    }
    Ok(())
}

/// [`read_input`] into `buf` (emptied first), so that a caller reading many files reuses one
/// allocation instead of faulting in fresh pages for every file.
pub fn read_input_into(path: &Path, buf: &mut Vec<u8>) -> Result<()> {
    buf.clear();
    fs::File::open(path)
        .and_then(|f| gmon_binary::open::read_named_into(f, buf))
        .map_err(|e| read_error(path, &e).into())
}

fn read_error(path: &Path, e: &io::Error) -> ReadError {
    let reason = if e.kind() == io::ErrorKind::IsADirectory {
        "is a directory".to_owned()
    } else {
        os_reason(e)
    };
    ReadError {
        name: path.display().to_string(),
        kind: e.kind(),
        reason,
    }
}

/// A file that no gmon.out layout explains. Its message is one line (the best reason); the
/// layouts tried and why each failed are kept for `-v`.
#[derive(Debug)]
pub struct NotAProfile {
    /// The path as given.
    pub name: String,
    /// Why, in a few words.
    pub reason: String,
    /// Every layout tried and why it failed ([`gmon_format::Error::UnknownFormat`]'s list).
    pub tried: String,
}

impl fmt::Display for NotAProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: not a gmon.out profile: {}", self.name, self.reason)
    }
}

impl std::error::Error for NotAProfile {}

/// The generic reason when the bytes say nothing more specific.
pub const NO_LAYOUT_FITS: &str = "no GNU (\"gmon\" magic), 4.4BSD or old BSD header fits its first \
                                  bytes (-v lists each layout tried)";

/// The end of [`NO_LAYOUT_FITS`] that points at `-v` (left out when `-v` was given).
pub const VERBOSE_HINT: &str = " (-v lists each layout tried)";

/// What a file that is not a profile looks like, from its first bytes.
fn what_it_is(bytes: &[u8]) -> &'static str {
    let head = &bytes[..bytes.len().min(4096)];
    if head.starts_with(b"\x7fELF") {
        "it is an ELF file (an executable or library?)"
    } else if head.starts_with(&gmon_format::sidecar::GMONX_MAGIC) {
        "it is a gmon-write sidecar (.gmonx); give the profile beside it"
    } else if head.starts_with(&[0x1f, 0x8b]) {
        "it is gzip-compressed data (a pprof profile?)"
    } else if is_text(head) {
        "it is a text file"
    } else {
        NO_LAYOUT_FITS
    }
}

/// No NUL byte and valid UTF-8 (a character cut at the end of the sample is allowed).
fn is_text(head: &[u8]) -> bool {
    !head.contains(&0)
        && match std::str::from_utf8(head) {
            Ok(_) => true,
            Err(e) => e.error_len().is_none(),
        }
}

/// Reads and parses a profile: returns it with the file's size. A file that no layout explains
/// gives a [`NotAProfile`]; a profile broken at some offset (an empty file too: a header was
/// expected at offset 0) gives the reader's error after the file's name.
pub fn read_profile(
    path: &Path,
    opts: &gmon_format::ReadOptions,
) -> Result<(gmon_format::Profile, u64)> {
    let bytes = read_input(path)?;
    Ok((parse_profile(path, &bytes, opts)?, bytes.len() as u64))
}

/// Like [`read_profile`], and also which reading detection chose and which others the file
/// allows ([`gmon_format::read::read_detailed`]).
pub fn read_detected(
    path: &Path,
    opts: &gmon_format::ReadOptions,
) -> Result<(gmon_format::read::Detected, u64)> {
    let bytes = read_input(path)?;
    let detected =
        gmon_format::read::read_detailed(&bytes, opts).map_err(|e| explain(path, &bytes, e))?;
    Ok((detected, bytes.len() as u64))
}

/// Parses the bytes of the profile at `path`, with [`read_profile`]'s errors.
pub fn parse_profile(
    path: &Path,
    bytes: &[u8],
    opts: &gmon_format::ReadOptions,
) -> Result<gmon_format::Profile> {
    gmon_format::read_with(bytes, opts).map_err(|e| explain(path, bytes, e))
}

/// The reader's error for the file at `path`: a [`NotAProfile`] when no layout explains it,
/// else the error after the file's name.
///
/// A gmon-write sidecar starts with "gmon" too, so the GNU reader takes it and stops at its
/// version word ("unsupported version 0x747865"): it is said to be a sidecar instead.
pub fn explain(path: &Path, bytes: &[u8], e: gmon_format::Error) -> crate::Error {
    match e {
        gmon_format::Error::UnknownFormat { tried, .. } => NotAProfile {
            name: path.display().to_string(),
            reason: what_it_is(bytes).to_owned(),
            tried,
        }
        .into(),
        e if bytes.starts_with(&gmon_format::sidecar::GMONX_MAGIC) => NotAProfile {
            name: path.display().to_string(),
            reason: what_it_is(bytes).to_owned(),
            tried: format!("GNU: {e}"),
        }
        .into(),
        e => crate::Error::from(e).context(path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_from_the_first_bytes() {
        assert!(what_it_is(b"\x7fELF\x02\x01\x01\0\0\0\0\0").contains("ELF"));
        assert!(what_it_is(b"gmonext\0\x01\0\0\0").contains("sidecar"));
        assert!(what_it_is(&[0x1f, 0x8b, 8, 0]).contains("gzip"));
        assert_eq!(
            what_it_is("int main() { return 0; } // é".as_bytes()),
            "it is a text file"
        );
        // A multi-byte character cut by the 4096-byte sample is still text.
        let mut cut = vec![b'a'; 4095];
        cut.extend_from_slice("é".as_bytes());
        assert_eq!(what_it_is(&cut), "it is a text file");
        assert_eq!(what_it_is(&[0xff, 0xfe, 0, 1, 2, 3]), NO_LAYOUT_FITS);
    }

    #[test]
    fn a_directory_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let msg = format!("{:#}", read_input(dir.path()).unwrap_err());
        assert_eq!(msg, format!("{}: is a directory", dir.path().display()));
    }

    #[test]
    fn source_text_is_not_a_profile_in_one_line_with_the_guesses_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hot.c");
        fs::write(&path, "int main(void) { for (;;) ; }\n".repeat(20)).unwrap();
        let err = read_profile(&path, &gmon_format::ReadOptions::new()).unwrap_err();
        let msg = format!("{err:#}");
        assert_eq!(
            msg,
            format!(
                "{}: not a gmon.out profile: it is a text file",
                path.display()
            )
        );
        let crate::Error::NotAProfile(NotAProfile { tried, .. }) = &err else {
            panic!("{err:?}")
        };
        assert!(tried.contains("old BSD"), "{tried}");
    }
}
