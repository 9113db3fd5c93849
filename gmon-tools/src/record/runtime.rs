//! The runtime library `gmon record` preloads: `$GMON_WRITE_LIB` when set, else the copy embedded
//! in the `gmon` binary (built by gmon-tools' `build.rs`), written once to a private,
//! content-addressed cache directory: `$XDG_CACHE_HOME/gmon/<hash>/libgmon_write.so` (or
//! `~/.cache/gmon/...`).
//!
//! The dynamic loader of every process of the recorded command opens that path again, so the
//! path must stay ours until the run ends: every directory on it is owned by root or the user
//! and not writable by others (unless sticky, like `/tmp`), the last two are `0700` and the
//! user's, the file is created exclusively and renamed into place (never written through a
//! planted link), and before each use it must still hold the embedded bytes. When any of this
//! fails the library goes to the run's fresh private directory instead.
//!
//! Whether it still holds them is known without reading it when its modification time carries
//! the stamp [`install`] gave it (nanoseconds derived from the content hash; any write sets the
//! time to the clock's): comparing the bytes was a tenth of `gmon record`'s own start-up. On a
//! file system that keeps no nanoseconds, and for a copy cached before the stamp, the bytes are
//! compared (and the stamp set when they match).

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::bail;

/// The environment variable that names the runtime library explicitly.
pub const LIB_ENV: &str = "GMON_WRITE_LIB";
/// The runtime library's file name.
pub const LIB_NAME: &str = "libgmon_write.so";

/// The runtime library built with this `gmon` (gmon-write's cdylib).
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libgmon_write.so"));
/// `<fnv1a64 hex>-<length>` of [`EMBEDDED`], computed by `build.rs`.
const EMBEDDED_NAME: &str = include_str!(concat!(env!("OUT_DIR"), "/libgmon_write.hash"));

/// The runtime library embedded in this binary.
pub fn embedded_library() -> &'static [u8] {
    EMBEDDED
}

/// Where the library to preload came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeSource {
    /// `$GMON_WRITE_LIB` (or an explicit path from the caller).
    Given,
    /// The embedded copy, in the cache directory.
    Cache,
    /// The embedded copy, in the run's private directory; the reason the cache was not used.
    Private(String),
}

/// The cache directory for the embedded library: `$XDG_CACHE_HOME/gmon/<hash>` when
/// `XDG_CACHE_HOME` is an absolute path (the XDG rule), else `$HOME/.cache/gmon/<hash>`.
pub fn cache_dir() -> Option<PathBuf> {
    let root = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })?;
    Some(root.join("gmon").join(EMBEDDED_NAME.trim()))
}

/// The library to preload: `$GMON_WRITE_LIB` (which must exist), else the embedded copy in the
/// cache directory, else in `private` (the run's own `0700` directory).
pub fn locate(private: &Path) -> anyhow::Result<(PathBuf, RuntimeSource)> {
    if let Some(p) = std::env::var_os(LIB_ENV).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok((p, RuntimeSource::Given));
        }
        bail!("{LIB_ENV}={}: no such file", p.display());
    }
    let why = match cache_dir() {
        None => "neither XDG_CACHE_HOME nor HOME is an absolute path".to_string(),
        Some(dir) => match install(&dir, true) {
            Ok(path) => return Ok((path, RuntimeSource::Cache)),
            Err(e) => format!("{}: {e}", dir.display()),
        },
    };
    match install(private, false) {
        Ok(path) => Ok((path, RuntimeSource::Private(why))),
        Err(e) => bail!(
            "cannot write the gmon-write runtime ({LIB_NAME}) to {} ({e}) nor to the cache ({why})",
            private.display()
        ),
    }
}

/// Puts the embedded library into `dir` (created `0700` when `create`) and returns the path the
/// loader is to open, after checking that nobody else can change what it names.
pub fn install(dir: &Path, create: bool) -> io::Result<PathBuf> {
    if create {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let dir = dir.canonicalize()?;
    check_private(&dir, create)?;
    // LD_PRELOAD splits its list at spaces and colons.
    if dir
        .as_os_str()
        .as_bytes()
        .iter()
        .any(|b| b" :\t\n".contains(b))
    {
        return Err(other(
            "the path has a space or colon, which LD_PRELOAD cannot take",
        ));
    }
    if mounted_noexec(&dir) {
        return Err(other("the file system is mounted noexec"));
    }
    let lib = dir.join(LIB_NAME);
    if holds_embedded(&lib)? {
        return Ok(lib);
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".gmon-write-")
        .permissions(fs::Permissions::from_mode(0o644))
        .tempfile_in(&dir)?;
    tmp.write_all(EMBEDDED)?;
    stamp(tmp.as_file())?;
    tmp.as_file().sync_all()?;
    // rename(2) replaces a link planted at the name itself, never its target.
    tmp.persist(&lib).map_err(|e| e.error)?;
    if holds_embedded(&lib)? {
        Ok(lib)
    } else {
        Err(other("the library changed right after it was written"))
    }
}

fn other(msg: &str) -> io::Error {
    io::Error::other(msg.to_string())
}

/// The nanoseconds of the modification time that marks a cached library as written by
/// [`install`] and unchanged since: from the embedded library's hash, never 0 (what a file
/// system without nanoseconds stores).
fn stamp_nanos() -> u32 {
    let hash = EMBEDDED_NAME
        .split('-')
        .next()
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0);
    (hash % 999_999_999) as u32 + 1
}

/// Sets `file`'s modification time to now with [`stamp_nanos`] as its nanoseconds.
fn stamp(file: &fs::File) -> io::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::new(now, stamp_nanos()))
}

/// Whether `lib` is a regular file of ours, not writable by others, with the embedded bytes
/// (known from its stamp, else compared). Opened without following a link.
fn holds_embedded(lib: &Path) -> io::Result<bool> {
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(lib)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        // ELOOP: a link planted at the name; it is replaced by the rename.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(false),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != euid() || meta.mode() & 0o022 != 0 {
        return Ok(false);
    }
    if meta.len() != EMBEDDED.len() as u64 {
        return Ok(false);
    }
    if meta.mtime_nsec() == i64::from(stamp_nanos()) {
        return Ok(true);
    }
    // Compared a block at a time: the library is megabytes, and a buffer of its size cost more
    // page faults than the comparison itself on every run.
    let mut file = file;
    let mut block = vec![0u8; 1 << 16];
    let mut at = 0usize;
    loop {
        let n = match file.read(&mut block) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            let same = at == EMBEDDED.len();
            if same {
                // Ours (checked above): the next run can skip the comparison. A file system
                // that cannot keep the stamp simply compares again.
                let _ = stamp(&file);
            }
            return Ok(same);
        }
        let (Some(got), Some(want)) = (block.get(..n), EMBEDDED.get(at..at + n)) else {
            return Ok(false);
        };
        if got != want {
            return Ok(false);
        }
        at += n;
    }
}

/// The effective user id (the owner every private directory and cached file must have).
pub(super) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `dir` (canonical) and, for the cache, its parent (`gmon/` and `gmon/<hash>/`, both created
/// by us) are directories of this user with mode `0700` or stricter; the directories above pass
/// [`check_chain`].
fn check_private(dir: &Path, cache: bool) -> io::Result<()> {
    let private = if cache { 2 } else { 1 };
    for (i, d) in dir.ancestors().enumerate() {
        let m = fs::symlink_metadata(d)?;
        if i >= private {
            return check_chain(d);
        }
        if !m.is_dir() || m.uid() != euid() || m.mode() & 0o077 != 0 {
            return Err(other(&format!(
                "{} is not a private directory of this user (mode 0700)",
                d.display()
            )));
        }
    }
    Ok(())
}

/// Every directory from `dir` (canonical) up to `/` belongs to root or this user and cannot be
/// changed by others: not group- or world-writable unless sticky (as `/tmp` is).
fn check_chain(dir: &Path) -> io::Result<()> {
    for d in dir.ancestors() {
        let m = fs::symlink_metadata(d)?;
        let owner_ok = m.uid() == 0 || m.uid() == euid();
        let sticky = m.mode() & 0o1000 != 0;
        if !m.is_dir() || !owner_ok || (m.mode() & 0o022 != 0 && !sticky) {
            return Err(other(&format!(
                "{} can be changed by another user",
                d.display()
            )));
        }
    }
    Ok(())
}

/// Whether `dir` is on a file system mounted `noexec`, where the loader cannot map the library.
fn mounted_noexec(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path and `st` a zeroed statvfs that statvfs fills in.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        libc::statvfs(c.as_ptr(), &mut st) == 0 && st.f_flag & libc::ST_NOEXEC != 0
    }
}
