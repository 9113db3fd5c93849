//! Separate debug files: where GNU gprof (through BFD) finds an executable's DWARF when the
//! executable carries none.
//!
//! `strip --strip-debug` plus `objcopy --add-gnu-debuglink=prog.debug`, and distributions'
//! `-dbg` packages, leave the symbols in the executable and move `.debug_*` to another file. BFD
//! looks for that file only when the executable has no `.debug_info`: first by build ID
//! (`/usr/lib/debug/.build-id/ab/cdef….debug`, accepted when its build ID is the same), then by
//! the `.gnu_debuglink` name in the executable's directory, in its `.debug/` subdirectory and
//! under `/usr/lib/debug` followed by the executable's real directory (each accepted when its
//! CRC-32 is the one the link records). gprof then reads line information, source files and
//! function names from that file, while the symbols stay the executable's.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::elf_file::ElfFile;

/// BFD's global debug directory as Debian's binutils is configured (`DEBUGDIR`).
const DEBUG_DIR: &str = "/usr/lib/debug";

/// The path and bytes of the separate debug file for the executable at `exe_path` whose
/// contents are `data`, or `None` when the executable has its own DWARF (`.debug_info`), is
/// not an object file, names no debug file, or none of the candidates is a regular file with
/// the right build ID / CRC.
pub fn separate_debug_data(exe_path: &Path, data: &[u8]) -> Option<(PathBuf, Vec<u8>)> {
    find_debug_file(exe_path, data, |p| {
        Some((p.to_path_buf(), crate::open::read_found(p).ok()?))
    })
}

/// Like [`separate_debug_data`], with the file mapped rather than read: a view that needs only
/// a debug file's symbol table then touches just those pages of a file of many megabytes.
pub fn separate_debug_map(exe_path: &Path, data: &[u8]) -> Option<crate::ImageBytes> {
    find_debug_file(exe_path, data, |p| crate::open::map_found(p).ok())
}

/// The lookup behind [`separate_debug_data`], with `load` giving a candidate's bytes. Every
/// candidate is opened as a found path ([`crate::open::open_found`]): a regular file, never
/// waited on.
fn find_debug_file<B: AsBytes>(
    exe_path: &Path,
    data: &[u8],
    load: impl Fn(&Path) -> Option<B>,
) -> Option<B> {
    let file = ElfFile::parse(data)?;
    if file.has_section(".debug_info") || file.has_section(".zdebug_info") {
        return None;
    }
    if let Some(id) = file.gnu_build_id()
        && let Some(found) = by_build_id(&id, &load)
    {
        return Some(found);
    }
    let (name, crc) = file.gnu_debuglink()?;
    if !is_file_name(name) {
        return None;
    }
    candidates(exe_path, name)
        .into_iter()
        .find_map(|p| load(&p).filter(|b| crc32(b.bytes()) == crc))
}

/// Whether a `.gnu_debuglink` name is a file name, the only form objcopy and ld write (they
/// drop the directories): one with a `/` (`../../dev/zero`) would leave the directories
/// searched, so it is not followed (spec/inputs.md §2).
fn is_file_name(name: &[u8]) -> bool {
    !name.is_empty() && !name.contains(&b'/') && name != b"." && name != b".."
}

/// A loaded candidate: its bytes, with whatever the caller keeps alongside them.
trait AsBytes {
    fn bytes(&self) -> &[u8];
}

impl AsBytes for crate::ImageBytes {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl AsBytes for (PathBuf, Vec<u8>) {
    fn bytes(&self) -> &[u8] {
        &self.1
    }
}

/// `/usr/lib/debug/.build-id/<first byte>/<rest>.debug`, if that file has the same build ID.
fn by_build_id<B: AsBytes>(id: &[u8], load: impl Fn(&Path) -> Option<B>) -> Option<B> {
    let (first, rest) = id.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let path = format!(
        "{DEBUG_DIR}/.build-id/{}/{}.debug",
        hex(&[*first]),
        hex(rest)
    );
    let bytes = load(Path::new(&path))?;
    let same = ElfFile::parse(bytes.bytes())
        .and_then(|f| f.gnu_build_id())
        .is_some_and(|b| b == id);
    same.then_some(bytes)
}

/// The `.gnu_debuglink` candidates in BFD's order: DIR/NAME, DIR/.debug/NAME and
/// /usr/lib/debug/REALDIR/NAME, where DIR is the executable's directory as given and REALDIR
/// the same directory with links resolved. Paths are joined as bytes (names need not be UTF-8).
fn candidates(exe_path: &Path, name: &[u8]) -> Vec<PathBuf> {
    let dir = match exe_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let join = |base: &Path, tail: &[u8]| {
        let mut p = base.as_os_str().as_bytes().to_vec();
        if p.last() != Some(&b'/') {
            p.push(b'/');
        }
        p.extend_from_slice(tail);
        PathBuf::from(OsString::from_vec(p))
    };
    let mut out = vec![
        join(&dir, name),
        join(&dir, &[b".debug/".as_slice(), name].concat()),
    ];
    if let Ok(real) = std::fs::canonicalize(&dir) {
        let mut global = DEBUG_DIR.as_bytes().to_vec();
        global.extend_from_slice(real.as_os_str().as_bytes());
        out.push(join(Path::new(std::ffi::OsStr::from_bytes(&global)), name));
    }
    out
}

/// The CRC-32 that `.gnu_debuglink` records (zlib's polynomial).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_follow_bfds_order() {
        let c = candidates(Path::new("prog"), b"prog.debug");
        assert_eq!(c.first(), Some(&PathBuf::from("./prog.debug")));
        assert_eq!(c.get(1), Some(&PathBuf::from("./.debug/prog.debug")));
        let real = std::fs::canonicalize(".").unwrap_or_default();
        assert_eq!(
            c.get(2),
            Some(&PathBuf::from(format!(
                "{DEBUG_DIR}{}/prog.debug",
                real.display()
            )))
        );
        let c = candidates(Path::new("/a/b/prog"), b"x\xff.debug");
        assert_eq!(
            c.first().map(|p| p.as_os_str().as_bytes()),
            Some(b"/a/b/x\xff.debug".as_slice())
        );
    }

    /// Only a file name is followed: a name with directories would leave the directories BFD
    /// searches (spec/inputs.md §2).
    #[test]
    fn debuglink_names_must_be_file_names() {
        assert!(is_file_name(b"prog.debug"));
        assert!(is_file_name(b"..prog.debug"));
        for bad in [
            &b""[..],
            b".",
            b"..",
            b"../../dev/zero",
            b"/dev/zero",
            b"sub/prog.debug",
        ] {
            assert!(!is_file_name(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn crc_is_zlibs() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn not_an_object_or_with_dwarf_gives_none() {
        assert!(separate_debug_data(Path::new("x"), b"not elf").is_none());
    }
}
