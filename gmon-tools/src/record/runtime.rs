//! The runtime library `gmon record` preloads: `$GMON_WRITE_LIB` when set, else the copy embedded
//! in the `gmon` binary (built by gmon-tools' `build.rs`), written once to a private,
//! content-addressed cache directory: `$XDG_CACHE_HOME/gmon/<hash>/libgmon_write.so` (or
//! `~/.cache/gmon/...`, see [`cache_dirs`]), never removed.
//!
//! The dynamic loader of every process of the recorded command opens that path again, so the
//! path must stay ours until the run ends: every directory on it is owned by root or the user
//! and not writable by others (unless sticky, like `/tmp`), the last two are `0700` and the
//! user's, the file is created exclusively and renamed into place (never written through a
//! planted link), and before each use it must still hold the embedded bytes. When any of this
//! fails the next candidate directory is tried, and when none passes nothing is run.
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

use crate::model::RUNTIME_LIBRARY;

/// The environment variable that names the runtime library explicitly.
pub const LIB_ENV: &str = "GMON_WRITE_LIB";

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
    /// The embedded copy, in the first cache directory that could be used; the reasons the
    /// ones before it were refused (`dir: why`), empty when it was the first.
    Cache(Vec<String>),
}

/// The directories the embedded library may be cached in, best first (spec/runtime.md §3):
/// `$XDG_CACHE_HOME/gmon/<hash>` when `XDG_CACHE_HOME` is an absolute path (the XDG rule),
/// `$HOME/.cache/gmon/<hash>`, the same under the home directory the password database gives
/// this user (`HOME` is unset under cron and in services), and `$XDG_RUNTIME_DIR/gmon/<hash>`.
/// Each is a place only this user (or root) can create names in, and nothing ever removes the
/// library from it: the loader of a process the command leaves running opens the path again
/// long after `gmon record` has ended.
pub fn cache_dirs() -> Vec<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let mut roots = Vec::new();
    roots.extend(absolute("XDG_CACHE_HOME"));
    roots.extend(absolute("HOME").map(|h| h.join(".cache")));
    roots.extend(home_of_euid().map(|h| h.join(".cache")));
    roots.extend(absolute("XDG_RUNTIME_DIR"));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for r in roots {
        let d = r.join("gmon").join(EMBEDDED_NAME.trim());
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs
}

/// The home directory of the effective user in the password database.
fn home_of_euid() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: `pwd` is a zeroed struct and `buf` a buffer of the given length, both filled by
    // getpwuid_r; `found` is set to `&mut pwd` or null.
    let home = unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            euid(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        );
        if rc != 0 || found.is_null() || pwd.pw_dir.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr(pwd.pw_dir).to_bytes().to_vec()
    };
    Some(PathBuf::from(std::ffi::OsString::from_vec(home))).filter(|h| h.is_absolute())
}

/// The library `$GMON_WRITE_LIB` names, when set and not empty.
pub fn given_library() -> Option<PathBuf> {
    std::env::var_os(LIB_ENV)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// The library to preload: `$GMON_WRITE_LIB` (which must exist), else the embedded copy in the
/// first of [`cache_dirs`] that can be used. When none can, nothing is run: a copy in a
/// directory that goes away with the run would leave `LD_PRELOAD` naming a path another user
/// could create once it is gone, in every process the command left running.
pub fn locate() -> crate::Result<(PathBuf, RuntimeSource)> {
    if let Some(p) = given_library() {
        if p.is_file() {
            return Ok((p, RuntimeSource::Given));
        }
        return Err(crate::Error::Runtime(format!(
            "{LIB_ENV}={}: no such file",
            p.display()
        )));
    }
    let mut refused = Vec::new();
    for dir in cache_dirs() {
        match install(&dir, true) {
            Ok(path) => return Ok((path, RuntimeSource::Cache(refused))),
            Err(e) => refused.push(format!("{}: {e}", dir.display())),
        }
    }
    if refused.is_empty() {
        refused.push(
            "none of XDG_CACHE_HOME, HOME, XDG_RUNTIME_DIR is an absolute path and the \
             password database gives no home directory"
                .into(),
        );
    }
    Err(crate::Error::Runtime(format!(
        "no private directory to keep the gmon-write runtime ({RUNTIME_LIBRARY}) in ({}); set HOME \
         or XDG_CACHE_HOME to a directory of this user, or {LIB_ENV} to a copy of the library",
        refused.join("; ")
    )))
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
    let lib = dir.join(RUNTIME_LIBRARY);
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
