//! Writing a command's output file the way users expect of Unix tools (`-o PATH`):
//!
//! - `-` is standard output;
//! - a symbolic link is written through to its target (followed link by link), never replaced;
//! - in a sticky directory others may write to (/tmp), a link, a FIFO or a regular file that
//!   belongs to neither this user nor the directory's owner is refused, at every link of a chain
//!   and at its end, as the kernel's `fs.protected_symlinks`, `protected_fifos` and
//!   `protected_regular` refuse them to `open`: another user planted it there;
//! - a FIFO, a character device (`/dev/null`, a terminal) or a socket is opened and written in
//!   place: never created, truncated or replaced;
//! - `/dev/stdout`, `/dev/fd/N` and `/proc/self/fd/N` are this process's descriptor N, written
//!   as it is (same offset and append mode as the shell's redirection);
//! - a regular file (or a new name) is written to a temporary file beside it, created
//!   exclusively, and renamed over it only when everything was written, so a failure never leaves
//!   a half-written file and a link planted at the temporary name is never followed. A writer of
//!   several files ([`Staged`]) writes every temporary before it renames any.
//!
//! A write error is reported once, naming the file: `OUT: cannot write: No space left on
//! device`.

use std::fmt;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::Error;

/// Symbolic links followed before giving up, as the kernel's own limit (`ELOOP` after 40).
const MAX_LINKS: usize = 40;

/// A failed write (or open, or rename) of an output, with the OS reason said once.
#[derive(Debug)]
pub struct WriteError {
    /// The output as the user named it (`standard output` for `-`).
    pub name: String,
    /// What was being done: "cannot write", "cannot create", ...
    pub action: &'static str,
    /// The OS error's kind (a closed pipe is not worth a message).
    pub kind: io::ErrorKind,
    reason: String,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.name, self.action, self.reason)
    }
}

// No `source()`: the reason is already in the message, and `{:#}` would print it twice.
impl std::error::Error for WriteError {}

impl WriteError {
    /// The error of `action` on the output named `name` (`-`: standard output).
    pub fn new(name: &Path, action: &'static str, e: &io::Error) -> WriteError {
        WriteError {
            name: display_name(name),
            action,
            kind: e.kind(),
            reason: os_reason(e),
        }
    }
}

/// The name an output is shown by.
fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard output".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Where the bytes for `-o PATH` go, decided before anything is written.
#[derive(Debug, PartialEq, Eq)]
pub enum Sink {
    /// This process's standard output.
    Stdout,
    /// Another descriptor of this process (`/dev/stderr`, `/dev/fd/3`).
    Descriptor(i32),
    /// An existing file that is not a regular file, written in place.
    InPlace(PathBuf),
    /// A regular file or a new name: temporary file beside it, then rename.
    Replace(PathBuf),
}

/// Decides where `-o path` writes: follows symbolic links one at a time (so the temporary file
/// can be created beside the final target, and each link is judged by `refuse_planted`) and
/// stops at the first thing that is not a link.
pub fn resolve(path: &Path) -> io::Result<Sink> {
    if path.as_os_str() == "-" {
        return Ok(Sink::Stdout);
    }
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = own_descriptor(&p) {
            return Ok(if fd == 1 {
                Sink::Stdout
            } else {
                Sink::Descriptor(fd)
            });
        }
        let meta = match fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Sink::Replace(p)),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            refuse_planted(&p, &meta, "symbolic link", "followed")?;
            let target = fs::read_link(&p)?;
            let next = match p.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            if own_descriptor(&next).is_none() && fs::symlink_metadata(&next).is_err() {
                // /proc's magic links (`pipe:[123]`) have no path to follow textually: a FIFO
                // or device behind one is opened through the link.
                match fs::metadata(&p) {
                    Ok(m) if m.is_dir() => return Err(is_a_directory()),
                    Ok(m) if !m.is_file() => return Ok(Sink::InPlace(p)),
                    _ => {}
                }
            }
            p = next;
            continue;
        }
        return if meta.is_dir() {
            Err(is_a_directory())
        } else if meta.is_file() {
            refuse_planted(&p, &meta, "file", "replaced")?;
            Ok(Sink::Replace(p))
        } else {
            if std::os::unix::fs::FileTypeExt::is_fifo(&kind) {
                refuse_planted(&p, &meta, "FIFO", "written")?;
            }
            Ok(Sink::InPlace(p))
        };
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// The kernel's `fs.protected_symlinks`, `protected_fifos` and `protected_regular` rule, which
/// following a link by hand, opening a FIFO without `O_CREAT` or renaming over a file as root
/// would otherwise bypass: in a sticky directory that others may write to (/tmp), a link, FIFO
/// or regular file is used only when it belongs to us or to the directory's owner. Another
/// user's `/tmp/report.svg -> ~/.profile`, or her FIFO at the name, is refused with
/// `PermissionDenied`, as `> /tmp/report.svg` is. `what` names the kind of file and `action`
/// what was not done to it, for the message.
fn refuse_planted(path: &Path, meta: &fs::Metadata, what: &str, action: &str) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir_meta = fs::metadata(dir)?;
    let shared_sticky = dir_meta.mode() & 0o1002 == 0o1002;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if shared_sticky && meta.uid() != me && meta.uid() != dir_meta.uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "Permission denied: a {what} of another user (uid {}) in a sticky shared \
                 directory is not {action}",
                meta.uid()
            ),
        ));
    }
    Ok(())
}

fn is_a_directory() -> io::Error {
    io::Error::from_raw_os_error(libc::EISDIR)
}

/// `N` when `p` names this process's descriptor N: `/dev/fd/N`, `/proc/self/fd/N`,
/// `/proc/thread-self/fd/N` or `/proc/PID/fd/N` with our own PID (`/dev/stdout` is a link to
/// `/proc/self/fd/1` and arrives here after one step).
fn own_descriptor(p: &Path) -> Option<i32> {
    let s = p.to_str()?;
    let pid = std::process::id().to_string();
    let rest = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
        .iter()
        .find_map(|prefix| s.strip_prefix(prefix))
        .or_else(|| {
            s.strip_prefix("/proc/")?
                .strip_prefix(pid.as_str())?
                .strip_prefix("/fd/")
        })?;
    rest.parse().ok()
}

/// Writes an output file as the module documentation says: `fill` writes the content. On
/// error, a regular file is left untouched (a new one is not created); standard output, a
/// descriptor or a FIFO may have received part of it, as with any Unix tool.
///
/// `fill`'s error type is the caller's (a command's `anyhow::Error`, or [`Error`]): this
/// function's own errors convert into it.
pub fn write_output<F, E>(path: &Path, fill: F) -> Result<(), E>
where
    F: FnOnce(&mut dyn Write) -> Result<(), E>,
    E: From<Error>,
{
    let cannot_write = |e: &io::Error| Error::from(WriteError::new(path, "cannot write", e));
    let sink = resolve(path).map_err(|e| cannot_write(&e))?;
    match sink {
        Sink::Stdout => {
            let stdout = io::stdout();
            write_to(path, stdout.lock(), fill)
        }
        Sink::Descriptor(fd) => write_to(path, dup(fd).map_err(|e| cannot_write(&e))?, fill),
        Sink::InPlace(target) => {
            let file = open_in_place(&target).map_err(|e| cannot_write(&e))?;
            write_to(path, file, fill)
        }
        Sink::Replace(target) => {
            let mut staged = Staged::beside(path, &target)?;
            staged.fill(fill)?;
            Ok(staged.commit()?)
        }
    }
}

/// A second descriptor for this process's `fd` (an error if it is not open).
fn dup(fd: i32) -> io::Result<fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) only reads `fd` and returns a new descriptor or -1.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just created by fcntl and nothing else owns it.
    Ok(unsafe { fs::File::from_raw_fd(new) })
}

/// Opens an existing non-regular file for writing: no O_CREAT (nothing is created if it
/// vanished), no O_TRUNC, no controlling terminal; and refuses it if it turned into a regular
/// file since it was looked at (that one must be replaced, not overwritten in place).
fn open_in_place(target: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(target)?;
    if file.metadata()?.is_file() {
        return Err(io::Error::other("became a regular file while being opened"));
    }
    Ok(file)
}

/// Runs `fill` over `sink` (buffered); any write error becomes one [`WriteError`] naming `name`.
fn write_to<W: Write, E: From<Error>>(
    name: &Path,
    sink: W,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), E>,
) -> Result<(), E> {
    let cannot_write = |e: &io::Error| Error::from(WriteError::new(name, "cannot write", e));
    let mut w = BufWriter::new(Checked::new(sink));
    let filled = fill(&mut w);
    let flushed = w.flush();
    let failed = w.get_mut().take_error();
    if let Some(e) = failed {
        return Err(cannot_write(&e).into());
    }
    filled?;
    flushed.map_err(|e| cannot_write(&e))?;
    Ok(())
}

/// An output being written: a temporary file beside the file it will replace, created
/// exclusively (a link planted at its name is an error, never followed). [`Staged::commit`]
/// renames it over its target; dropped uncommitted, it is removed, and nothing else. A writer of
/// several files stages them all and commits none until every one is written, so a full disk
/// leaves none of them rather than a sidecar without its profile.
///
/// Not synced: like `cp`, `sort -o`, the compilers and GNU gprof's own `gmon.sum`, durability
/// across a crash of the machine is left to the file system (ext4 writes the data of a file
/// renamed over another out with the rename, `auto_da_alloc`). The `fsync` cost `gmon record`
/// about 1 ms of CPU per run, a fifth of its own time after a short program.
#[derive(Debug)]
pub struct Staged {
    /// The output as the user named it, for messages.
    name: PathBuf,
    /// The regular file (or new name) it replaces, its links followed.
    target: PathBuf,
    /// The temporary file, open until it is written (a set of many files does not hold a
    /// descriptor per file).
    file: Option<fs::File>,
    /// The temporary file's name; the file is removed when this is dropped.
    tmp: tempfile::TempPath,
}

impl Staged {
    /// Stages the output `path`, which must be a regular file or a new name once its links are
    /// followed by the rules of this module: a FIFO, a device or a descriptor cannot be one of a
    /// set written whole or not at all.
    pub fn new(path: &Path) -> Result<Staged, Error> {
        let fail = |e: &io::Error| WriteError::new(path, "cannot write", e);
        match resolve(path).map_err(|e| fail(&e))? {
            Sink::Replace(target) => Staged::beside(path, &target),
            _ => Err(fail(&io::Error::other("not a regular file")).into()),
        }
    }

    /// A temporary file beside `target` (the regular file or new name `name` resolved to).
    fn beside(name: &Path, target: &Path) -> Result<Staged, Error> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".gmon-tmp-");
        // tempfile creates 0600 files; an output file should get the mode any other program's
        // new file gets (0666 less the umask, which open(2) applies to this mode), or keep the
        // mode of the file it replaces.
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(target)
                .map(|m| m.permissions().mode() & 0o7777)
                .unwrap_or(0o666);
            builder.permissions(fs::Permissions::from_mode(mode));
        }
        // The temporary file is our detail: an error names the path the user gave.
        let (file, tmp) = builder
            .tempfile_in(dir)
            .map_err(|e| WriteError::new(name, "cannot write", &e))?
            .into_parts();
        Ok(Staged {
            name: name.to_path_buf(),
            target: target.to_path_buf(),
            file: Some(file),
            tmp,
        })
    }

    /// The file the output will replace (its links followed).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Writes the content with `fill`, once, and closes the temporary file.
    pub fn fill<E: From<Error>>(
        &mut self,
        fill: impl FnOnce(&mut dyn Write) -> Result<(), E>,
    ) -> Result<(), E> {
        let file = self.take_file()?;
        write_to(&self.name, file, fill)
    }

    /// Writes the content of `source`, once, and closes the temporary file. Only `source`'s
    /// data is written, its holes left as holes (`SEEK_DATA`/`SEEK_HOLE`, as `cp
    /// --sparse=auto`, `copy_sparse`): the histogram of a large executable is mostly zero bins
    /// that the runtime left unwritten (spec/runtime.md §1), and reading and writing them cost
    /// more than a short recorded run.
    pub fn copy(&mut self, source: &fs::File) -> Result<(), Error> {
        let file = self.take_file()?;
        copy_sparse(source, &file)
            .map_err(|e| WriteError::new(&self.name, "cannot write", &e).into())
    }

    fn take_file(&mut self) -> Result<fs::File, Error> {
        self.file.take().ok_or_else(|| {
            Error::from(io::Error::other("written twice")).context(self.name.display())
        })
    }

    /// Renames the temporary file over the target: rename(2) replaces whatever is there now, a
    /// link included, without following it.
    pub fn commit(self) -> Result<(), Error> {
        let name = self.name;
        self.tmp
            .persist(&self.target)
            .map_err(|e| WriteError::new(&name, "cannot create", &e.error))?;
        Ok(())
    }
}

/// Copies `source` into the empty file `dest` extent by extent: data is read and written at
/// its offset, holes are skipped and stay holes (the length is set at the end). A file system
/// that cannot tell holes (`SEEK_DATA` unsupported) has its whole file copied.
fn copy_sparse(source: &fs::File, dest: &fs::File) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let len = source.metadata()?.len();
    let mut buf = vec![0u8; 1 << 16];
    let mut at = 0;
    while at < len {
        let Some((data, hole)) = data_extent(source, at, len)? else {
            break;
        };
        let mut off = data;
        while off < hole {
            let want = usize::try_from(hole - off).map_or(buf.len(), |n| n.min(buf.len()));
            let got = source.read_at(&mut buf[..want], off)?;
            if got == 0 {
                break; // shorter than it said: the rest stays zero
            }
            dest.write_all_at(&buf[..got], off)?;
            off += got as u64;
        }
        at = hole;
    }
    dest.set_len(len)
}

/// The data extent `[start, end)` of `file` at or after `from` (`end` at most `len`); `None`
/// past the last data.
fn data_extent(file: &fs::File, from: u64, len: u64) -> io::Result<Option<(u64, u64)>> {
    use std::os::fd::AsRawFd;
    let seek = |offset: u64, whence: i32| -> io::Result<Option<u64>> {
        let offset = libc::off_t::try_from(offset).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: lseek only reads the descriptor, which `file` keeps open; `pread` does not
        // depend on the offset it moves.
        let r = unsafe { libc::lseek(file.as_raw_fd(), offset, whence) };
        if r >= 0 {
            return Ok(u64::try_from(r).ok());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        }
    };
    let start = match seek(from, libc::SEEK_DATA) {
        Ok(Some(d)) => d,
        Ok(None) => return Ok(None),
        // No hole support: all of it is data.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(Some((from, len))),
        Err(e) => return Err(e),
    };
    let end = seek(start, libc::SEEK_HOLE)?.unwrap_or(len).min(len);
    Ok((start < end).then_some((start, end)))
}

/// A writer that remembers its first error, so that the error is reported once with the file's
/// name however the caller wrapped it on the way out.
#[derive(Debug)]
pub struct Checked<W> {
    inner: W,
    error: Option<io::Error>,
}

impl<W: Write> Checked<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Checked<W> {
        Checked { inner, error: None }
    }

    /// The first write or flush error, if any (taken: a second call returns `None`).
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r
            && self.error.is_none()
            && e.kind() != io::ErrorKind::Interrupted
        {
            self.error = Some(match e.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(e.kind(), e.to_string()),
            });
        }
        r
    }
}

impl<W: Write> Write for Checked<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

/// The operating system's reason for `e`, without the "(os error N)" suffix and without the
/// path tempfile adds: tempfile reports "REASON at path \"TMP\"" as a custom error (its inner
/// error is private), so the suffix is cut from the text.
pub fn os_reason(e: &io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        let text = io::Error::from_raw_os_error(code).to_string();
        return match text.rfind(" (os error ") {
            Some(cut) => text.get(..cut).unwrap_or(&text).to_string(),
            None => text,
        };
    }
    let text = e.to_string();
    match text.rfind(" at path ") {
        Some(cut) => text.get(..cut).unwrap_or(&text).to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn new_file_gets_the_umask_mode_and_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh.out");
        write_output(&fresh, |w| Ok::<_, Error>(w.write_all(b"x")?)).unwrap();
        // The umask can only remove bits from 0666, and never the owner's read/write here.
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o600, 0o600);
        assert_eq!(mode & !0o666, 0);
        let replaced = dir.path().join("replaced.out");
        fs::write(&replaced, b"old").unwrap();
        fs::set_permissions(&replaced, fs::Permissions::from_mode(0o640)).unwrap();
        write_output(&replaced, |w| Ok::<_, Error>(w.write_all(b"new")?)).unwrap();
        assert_eq!(
            fs::metadata(&replaced).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(fs::read(&replaced).unwrap(), b"new");
    }

    /// A sparse source: 1 MiB, data at its start, in its middle and in its last bytes.
    fn sparse_source(dir: &Path) -> (fs::File, Vec<u8>) {
        use std::os::unix::fs::FileExt;
        let path = dir.join("source");
        let file = fs::File::create(&path).unwrap();
        let len = 1 << 20;
        file.set_len(len).unwrap();
        let mut want = vec![0u8; len as usize];
        for (at, n) in [(0usize, 300usize), (400_000, 5000), (len as usize - 7, 7)] {
            let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8 + 1).collect();
            file.write_all_at(&data, at as u64).unwrap();
            want[at..at + n].copy_from_slice(&data);
        }
        (fs::File::open(&path).unwrap(), want)
    }

    #[test]
    fn a_copied_output_has_the_source_bytes_and_keeps_its_holes() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let (source, want) = sparse_source(dir.path());
        let out = dir.path().join("copy.out");
        let copy = |out: &Path, source: &fs::File| {
            let mut staged = Staged::new(out).unwrap();
            staged.copy(source).unwrap();
            staged.commit().unwrap();
        };
        copy(&out, &source);
        assert!(
            fs::read(&out).unwrap() == want,
            "the copy differs from its source"
        );
        // Where the file system keeps holes (the source has them), so does the copy: its
        // blocks hold the three data runs, not the megabyte of zeros between them.
        let allocated = |p: &Path| fs::metadata(p).unwrap().blocks() * 512;
        if allocated(&dir.path().join("source")) < 1 << 19 {
            assert!(
                allocated(&out) < 1 << 19,
                "{} bytes allocated",
                allocated(&out)
            );
        }
        // Through a link to an existing file, as write_output does; a device is not staged.
        let target = dir.path().join("target.out");
        fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.out");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let (source, _) = sparse_source(dir.path());
        copy(&link, &source);
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            fs::read(&target).unwrap() == want,
            "the link's target differs"
        );
        let err = Staged::new(Path::new("/dev/null")).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "/dev/null: cannot write: not a regular file"
        );
    }

    #[test]
    fn error_under_a_regular_file_names_the_requested_path_not_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        fs::write(&file, b"x").unwrap();
        let target = file.join("out");
        let err = write_output(&target, |w| Ok::<_, Error>(w.write_all(b"y")?)).unwrap_err();
        let msg = format!("{err:#}");
        assert_eq!(
            msg,
            format!("{}: cannot write: Not a directory", target.display())
        );
    }

    #[test]
    fn failed_fill_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let err = write_output(&target, |w| {
            w.write_all(b"partial")?;
            Err(Error::from(io::Error::other("boom")))
        });
        assert_eq!(format!("{:#}", err.unwrap_err()), "boom");
        assert!(!target.exists());
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            0,
            "temporary file left behind"
        );
    }

    #[test]
    fn resolution_of_each_kind_of_path() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(resolve(Path::new("-")).unwrap(), Sink::Stdout);
        assert_eq!(resolve(Path::new("/dev/stdout")).unwrap(), Sink::Stdout);
        assert_eq!(resolve(Path::new("/dev/fd/1")).unwrap(), Sink::Stdout);
        assert_eq!(
            resolve(Path::new("/dev/stderr")).unwrap(),
            Sink::Descriptor(2)
        );
        let own = format!("/proc/{}/fd/7", std::process::id());
        assert_eq!(resolve(Path::new(&own)).unwrap(), Sink::Descriptor(7));
        assert_eq!(
            resolve(Path::new("/dev/null")).unwrap(),
            Sink::InPlace("/dev/null".into())
        );
        // A chain of links, one relative, ending at a name that does not exist yet.
        std::os::unix::fs::symlink("b", d.join("a")).unwrap();
        std::os::unix::fs::symlink(d.join("c"), d.join("b")).unwrap();
        assert_eq!(resolve(&d.join("a")).unwrap(), Sink::Replace(d.join("c")));
        fs::create_dir(d.join("sub")).unwrap();
        assert_eq!(
            resolve(&d.join("sub")).unwrap_err().raw_os_error(),
            Some(libc::EISDIR)
        );
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        assert_eq!(
            resolve(&d.join("loop")).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
    }

    #[test]
    fn os_reason_has_no_error_number() {
        let e = io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(os_reason(&e), "No space left on device");
    }
}
