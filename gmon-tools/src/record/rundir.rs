//! The run's private directory, where every process of the recorded command writes its profile
//! (spec/runtime.md §3).
//!
//! Run directories are grouped under one directory per user, `<base>/gmon-<uid>` (`0700`, this
//! user's, checked at each use), as `record-<random>`. A run holds an exclusive `flock` on its
//! directory while it lasts; the kernel drops it when `gmon record` ends, however it ends. A run
//! killed before it could clean up (SIGKILL) leaves its directory there, where no other user
//! can reach it, and the next run removes every `record-*` directory whose lock it can take:
//! only directories of this user, named as gmon makes them, that no live run holds.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::Context;

/// The prefix of a run directory in the per-user directory.
const RUN_PREFIX: &str = "record-";
/// The prefix a run directory has until it is locked (a cleaning run never looks at it).
const NEW_PREFIX: &str = ".new-";

/// A run's private directory, locked while it exists.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    /// The directory itself, opened and `flock`ed exclusively for the whole run.
    lock: fs::File,
    /// (device, inode) when created: another directory at the path later is not ours.
    id: (u64, u64),
}

impl RunDir {
    /// Makes a fresh run directory under `base` (see [`base`]), after removing what killed
    /// runs left there. The note says why the per-user directory could not be used, if so.
    pub fn create(base: &Path) -> crate::Result<(RunDir, Option<String>)> {
        let per_user = base.join(format!("gmon-{}", super::runtime::euid()));
        let (parent, note) = match own_private_dir(&per_user) {
            Ok(()) => {
                remove_left_over(&per_user);
                (per_user, None)
            }
            // Someone else's directory at our name (in a sticky /tmp anyone can create it):
            // not a reason to refuse the run; the run directory goes into `base` itself.
            Err(e) => (
                base.to_path_buf(),
                Some(format!(
                    "{}: {e}; the run's directory was made in {} instead, where nothing cleans \
                     up after a killed run",
                    per_user.display(),
                    base.display()
                )),
            ),
        };
        let run = make_locked(&parent).with_context(|| {
            format!(
                "cannot create a private temporary directory in {}",
                parent.display()
            )
        })?;
        Ok((run, note))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the directory was removed or replaced since it was made (by a cleaner of
    /// temporary files, say).
    pub fn vanished(&self) -> bool {
        fs::symlink_metadata(&self.path).map_or(true, |m| (m.dev(), m.ino()) != self.id)
    }

    /// Removes the directory and what the run's processes wrote in it; a directory that is no
    /// longer the one this run made is left alone.
    ///
    /// Processes the command left running may still be writing into it (a shell's background
    /// loop starts a preloaded `sleep` every few milliseconds, each writing its profile as it
    /// exits): the directory is first moved to a fresh name beside it, so that a process that
    /// opens it by its name from then on finds nothing and writes nothing (spec/runtime.md §3),
    /// and the removal is tried again while a writer that had it open already adds files.
    pub fn remove(self) -> io::Result<()> {
        if self.vanished() {
            return Ok(());
        }
        let mut gone = self.path.clone();
        gone.set_file_name(format!(".gone-{}", random_suffix()));
        let path = match rename_noreplace(&self.path, &gone) {
            Ok(()) => gone,
            Err(_) => self.path.clone(),
        };
        let mut r = fs::remove_dir_all(&path);
        for _ in 0..100 {
            match &r {
                Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    r = fs::remove_dir_all(&path);
                }
                _ => break,
            }
        }
        drop(self.lock);
        r
    }
}

/// Where run directories go (spec/runtime.md §3): `$TMPDIR` when set; else a memory file
/// system the user can use safely, `$XDG_RUNTIME_DIR` (the user's own `0700` directory) or
/// `/dev/shm` (sticky, like `/tmp`); else the usual temporary directory. Every recorded process
/// creates and renames two files there: on tmpfs that costs about half a millisecond less per
/// process than on ext4 (/bin/true preloaded: 1.16 -> 0.60 ms of CPU over the runtime merely
/// loaded, 200 interleaved runs), which adds up in a process tree.
pub fn base() -> PathBuf {
    if std::env::var_os("TMPDIR").is_some_and(|t| !t.is_empty()) {
        return std::env::temp_dir();
    }
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && usable_tmpfs(d, true));
    runtime_dir
        .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|d| usable_tmpfs(d, false)))
        .unwrap_or_else(std::env::temp_dir)
}

/// Whether `dir` is a real directory (not a link) on tmpfs, not mounted `noexec`, and either
/// this user's own `0700` directory (`own`) or root's and sticky, as `/tmp` is.
// `statfs::f_type` is an i64 on x86_64 and narrower elsewhere: the conversion is needed there.
#[allow(clippy::useless_conversion)]
fn usable_tmpfs(dir: &Path, own: bool) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let Ok(m) = fs::symlink_metadata(dir) else {
        return false;
    };
    let safe = if own {
        m.uid() == super::runtime::euid() && m.mode() & 0o077 == 0
    } else {
        m.uid() == 0 && m.mode() & 0o1000 != 0
    };
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path; `fs` and `vfs` are zeroed structs the calls fill.
    let (fs_ok, vfs_ok, fs, vfs) = unsafe {
        let mut fs: libc::statfs = std::mem::zeroed();
        let mut vfs: libc::statvfs = std::mem::zeroed();
        (
            libc::statfs(c.as_ptr(), &mut fs) == 0,
            libc::statvfs(c.as_ptr(), &mut vfs) == 0,
            fs,
            vfs,
        )
    };
    m.is_dir()
        && safe
        && fs_ok
        && vfs_ok
        && i64::from(fs.f_type) == TMPFS_MAGIC
        && vfs.f_flag & libc::ST_NOEXEC == 0
}

/// Creates `dir` (`0700`) unless it exists, and checks that it is a directory of this user
/// that nobody else can open or change (not a link).
fn own_private_dir(dir: &Path) -> io::Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let m = fs::symlink_metadata(dir)?;
    if !m.is_dir() || m.uid() != super::runtime::euid() || m.mode() & 0o077 != 0 {
        return Err(io::Error::other(
            "not a private directory of this user (mode 0700)",
        ));
    }
    Ok(())
}

/// Opens a directory without following a link at its name.
fn open_dir(path: &Path) -> io::Result<fs::File> {
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
}

/// `flock(fd, op)`.
fn flock(dir: &fs::File, op: libc::c_int) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor `dir` owns.
    if unsafe { libc::flock(dir.as_raw_fd(), op) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A new `0700` directory in `parent`, locked before it gets the name a cleaning run looks at
/// (so no run ever sees it unlocked under that name).
fn make_locked(parent: &Path) -> io::Result<RunDir> {
    loop {
        let new = tempfile::Builder::new()
            .prefix(NEW_PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(parent)?
            .keep();
        let lock = open_dir(&new)?;
        flock(&lock, libc::LOCK_EX)?;
        let suffix = new
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(NEW_PREFIX))
            .unwrap_or_default()
            .to_string();
        let path = parent.join(format!("{RUN_PREFIX}{suffix}"));
        let (from, to) = (cstring(&new)?, cstring(&path)?);
        // SAFETY: two NUL-terminated paths; RENAME_NOREPLACE never replaces a directory a
        // killed run left at the same name.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            let _ = fs::remove_dir(&new);
            if e.kind() == io::ErrorKind::AlreadyExists {
                continue;
            }
            return Err(e);
        }
        let m = lock.metadata()?;
        return Ok(RunDir {
            path,
            lock,
            id: (m.dev(), m.ino()),
        });
    }
}

fn cstring(p: &Path) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::other("a path with a NUL byte"))
}

/// Removes the run directories in `per_user` that no live run holds: left by a `gmon record`
/// that was killed. Failures are ignored (another run may be removing the same ones).
fn remove_left_over(per_user: &Path) {
    let Ok(entries) = fs::read_dir(per_user) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(RUN_PREFIX)) {
            continue;
        }
        let path = e.path();
        let ours = fs::symlink_metadata(&path)
            .is_ok_and(|m| m.is_dir() && m.uid() == super::runtime::euid());
        if !ours {
            continue;
        }
        let Ok(dir) = open_dir(&path) else {
            continue;
        };
        if flock(&dir, libc::LOCK_EX | libc::LOCK_NB).is_ok() {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// A name part nobody can guess in advance: std's per-process random hash keys, and the pid.
fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// `rename(2)` that fails instead of replacing what is at `to` (`RENAME_NOREPLACE`): in a shared
/// directory, another user's planted name is never replaced.
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: both are NUL-terminated paths; renameat2 reads them and touches nothing else.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
