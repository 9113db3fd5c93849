//! Opening the files the tools read, with every read bounded (spec/inputs.md §1).
//!
//! Two kinds of path reach a reader. A path the user *named* on the command line may be
//! anything `cat` would read: a regular file, or a pipe or device, of which at most
//! [`MAX_STREAM_BYTES`] are read. A path the tools *found* — by searching (a separate debug
//! file), or by reading it from another file (a sidecar's objects, a `.gnu_debuglink` name) —
//! was chosen by whoever wrote that file, so it must be a regular file of at most
//! [`MAX_FOUND_BYTES`]: it is opened without blocking (a FIFO would otherwise wait for a
//! writer forever) and the opened descriptor is checked, not the path, so that nothing can be
//! swapped in between the check and the read.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The bytes of an executable file.
#[derive(Debug)]
pub enum ImageBytes {
    /// The file mapped into memory: a run reads only the symbol table, the line tables and a
    /// few headers of a large executable, and a mapping loads just those pages, where reading
    /// the whole file first cost a copy and a page fault for every page of it.
    Mapped(memmap2::Mmap),
    /// Bytes read or given by the caller.
    Owned(Vec<u8>),
}

impl std::ops::Deref for ImageBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            ImageBytes::Mapped(m) => m,
            ImageBytes::Owned(v) => v,
        }
    }
}

/// A read-only mapping of `file` when it is a non-empty regular file.
fn map_file(file: &std::fs::File) -> Option<memmap2::Mmap> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    // SAFETY: the mapping is private and read-only; its contents change only if another
    // process rewrites the executable while this one runs, which gprof (whose BFD maps
    // files too) does not guard against either. Nothing here writes through it.
    unsafe { memmap2::Mmap::map(file) }.ok()
}

/// The most bytes read from a named input that is not a regular file (a pipe, a device such
/// as `/dev/zero`): no profile, sidecar or executable piped in comes near it.
pub const MAX_STREAM_BYTES: u64 = 256 << 20;

/// The largest file a found path may name: larger than any real separate debug file or
/// shared library, small enough that a sparse file of that size is read (its CRC for a
/// `.gnu_debuglink`) in seconds.
pub const MAX_FOUND_BYTES: u64 = 16 << 30;

/// Opens a path the tools found (searched for, or read from another file): it must be a
/// regular file of at most [`MAX_FOUND_BYTES`]. A FIFO, device, socket or directory is refused
/// without waiting on it.
pub fn open_found(path: &Path) -> io::Result<(File, u64)> {
    let file = OpenOptions::new()
        .read(true)
        // A FIFO opened for reading would block until some process opens it for writing.
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind_of(&meta)),
        ));
    }
    if meta.len() > MAX_FOUND_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} bytes, more than the {} a file found by name may have",
                meta.len(),
                MAX_FOUND_BYTES
            ),
        ));
    }
    Ok((file, meta.len()))
}

/// The bytes of a found path ([`open_found`]): the size `fstat` gave, never more (a file
/// that grows while it is read is cut there).
pub fn read_found(path: &Path) -> io::Result<Vec<u8>> {
    let (file, len) = open_found(path)?;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut out)?;
    Ok(out)
}

/// A found path ([`open_found`]) mapped, or read when it cannot be (an empty file).
pub fn map_found(path: &Path) -> io::Result<ImageBytes> {
    let (file, len) = open_found(path)?;
    if let Some(map) = map_file(&file) {
        return Ok(ImageBytes::Mapped(map));
    }
    let mut out = Vec::new();
    file.take(len).read_to_end(&mut out)?;
    Ok(ImageBytes::Owned(out))
}

/// The bytes of a path the user named: a regular file whole, anything else (a pipe, a
/// device) up to [`MAX_STREAM_BYTES`], beyond which it is an error that says so.
pub fn read_named(path: &Path) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let mut out = Vec::new();
    read_named_into(file, &mut out)?;
    Ok(out)
}

/// [`read_named`] on an opened file, into `buf` (emptied first), for callers that reuse one
/// allocation.
pub fn read_named_into(file: File, buf: &mut Vec<u8>) -> io::Result<()> {
    let meta = file.metadata()?;
    // A regular file is read whole even when it is larger than the stream bound (its size is
    // what the user has on disk), but no further than the bound past its size.
    let limit = if meta.is_file() {
        meta.len().max(MAX_STREAM_BYTES)
    } else {
        MAX_STREAM_BYTES
    };
    read_bounded(file, limit, kind_of(&meta), buf)
}

/// Reads `reader` (a `kind` for messages) to its end into `buf` (emptied first), or fails
/// once it gives more than `limit` bytes.
pub fn read_bounded(
    reader: impl Read,
    limit: u64,
    kind: &str,
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    buf.clear();
    reader.take(limit.saturating_add(1)).read_to_end(buf)?;
    if buf.len() as u64 > limit {
        buf.clear();
        buf.shrink_to_fit();
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("more than {limit} bytes from a {kind} (read no further)"),
        ));
    }
    Ok(())
}

/// A path the user named, mapped when it is a regular file, else read as [`read_named`] does.
pub fn map_named(path: &Path) -> io::Result<ImageBytes> {
    let file = File::open(path)?;
    if let Some(map) = map_file(&file) {
        return Ok(ImageBytes::Mapped(map));
    }
    let mut out = Vec::new();
    read_named_into(file, &mut out)?;
    Ok(ImageBytes::Owned(out))
}

/// What kind of file `meta` describes, in a few words for messages.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "regular file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_paths_must_be_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would wait forever.
        let e = read_found(&fifo).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (FIFO)");
        let e = map_found(Path::new("/dev/zero")).map(drop).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (character device)");
        let e = read_found(dir.path()).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (directory)");
        // Through a symbolic link, the target is what is checked.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert!(read_found(&link).is_err());
        let file = dir.path().join("f");
        std::fs::write(&file, b"abc").unwrap();
        std::os::unix::fs::symlink(&file, link.with_extension("2")).unwrap();
        assert_eq!(read_found(&link.with_extension("2")).unwrap(), b"abc");
        assert_eq!(&*map_found(&file).unwrap(), b"abc");
    }

    #[test]
    fn named_streams_are_bounded() {
        // (/dev/zero itself is read by the integration tests, under a memory limit.)
        let mut buf = Vec::new();
        let e = read_bounded(&[0u8; 11][..], 10, "FIFO", &mut buf).unwrap_err();
        assert_eq!(
            e.to_string(),
            "more than 10 bytes from a FIFO (read no further)"
        );
        assert!(buf.is_empty());
        read_bounded(&[7u8; 10][..], 10, "FIFO", &mut buf).unwrap();
        assert_eq!(buf, [7u8; 10]);
        assert_eq!(read_named(Path::new("/dev/null")).unwrap(), b"");
    }
}
