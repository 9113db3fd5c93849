//! The files one recorded run leaves beside `OUT` (spec/runtime.md §3): which names they get and
//! how they are written.
//!
//! Names: `OUT` for the group [`profiles::name_groups`] puts first, `OUT.<name>` for the others,
//! each with its sidecar (`.gmonx` added). A name is taken only when it
//! - differs from every other name of the run and from their sidecars' names (`foo`'s sidecar
//!   `OUT.foo.gmonx` is never `foo.gmonx`'s profile);
//! - fits `NAME_MAX` with its sidecar suffix: `<name>` is cut to the room `OUT`'s own name
//!   leaves (preflight keeps at least [`MIN_NAME_ROOM`] bytes);
//! - is free, or holds a profile (resp. a sidecar) that may be replaced: a previous run's file
//!   is rewritten, but a file of the user's that is not a profile is never overwritten, nor is
//!   anything the output rule refuses (another user's link, FIFO or file in a sticky shared
//!   directory).
//!
//! Otherwise `.2`, `.3`, ... is added (within the room) until a name is taken.
//!
//! Writing: every file is first written whole to an exclusive temporary file beside its target
//! ([`crate::output::Staged`]), and only when all of them are does any get renamed into place,
//! so a full disk leaves none of the run's files (never a sidecar without its profile) and
//! removes only the temporary files this run created.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;
use gmon_format::GMON_MAGIC;
use gmon_format::sidecar::GMONX_MAGIC;

use super::profiles::{self, Group, GroupGmon};
use crate::output::{Sink, Staged};

/// The longest file name (one path component) Linux file systems take, in bytes.
const NAME_MAX: usize = 255;

/// The sidecar's suffix, as `gmon_format::sidecar_path` adds it.
const SIDECAR_SUFFIX: &str = ".gmonx";

/// The least room `OUT`'s name must leave for `<name>` in `OUT.<name>.gmonx` (preflight).
pub const MIN_NAME_ROOM: usize = 16;

/// The bytes `OUT.<name>.gmonx` leaves for `<name>` within `NAME_MAX`.
fn name_room(out: &Path) -> usize {
    let base = out.file_name().map_or(0, |n| n.len());
    NAME_MAX.saturating_sub(base + 1 + SIDECAR_SUFFIX.len())
}

/// What preflight asks of `OUT` (its links followed): room for the other executables' names,
/// and an `OUT.gmonx` that is free or a sidecar. The reason, naming the file, otherwise.
pub fn check_out(out: &Path) -> Result<(), String> {
    let room = name_room(out);
    if room < MIN_NAME_ROOM {
        return Err(format!(
            "{}: the file name is too long: gmon record needs {MIN_NAME_ROOM} bytes more for \
             OUT.<name>.gmonx within the {NAME_MAX}-byte limit of a file name; give a shorter one",
            out.display()
        ));
    }
    let sidecar = gmon_format::sidecar_path(out);
    if !replaceable(&sidecar, &GMONX_MAGIC) {
        return Err(format!(
            "{}: exists and is not a sidecar gmon may replace (another kind of file, or another \
             user's in a shared directory); remove it or give another name",
            sidecar.display()
        ));
    }
    Ok(())
}

/// The path of each group's gmon.out beside `out` (see the module documentation), in the order
/// of `groups`; the first group gets `out` itself.
pub fn paths(out: &Path, groups: &[Group]) -> anyhow::Result<Vec<PathBuf>> {
    let room = name_room(out);
    let mut taken: HashSet<OsString> = HashSet::new();
    let mut paths = Vec::with_capacity(groups.len());
    for g in groups {
        let path = match &g.suffix {
            None => out.to_path_buf(),
            Some(base) => free_name(out, base, room, &taken)?,
        };
        taken.insert(path.clone().into_os_string());
        taken.insert(gmon_format::sidecar_path(&path).into_os_string());
        paths.push(path);
    }
    Ok(paths)
}

/// The first of `OUT.<base>`, `OUT.<base>.2`, ... that fits `room`, is not `taken` (with its
/// sidecar) and can be written without replacing a file that is not a profile.
fn free_name(
    out: &Path,
    base: &str,
    room: usize,
    taken: &HashSet<OsString>,
) -> anyhow::Result<PathBuf> {
    // Enough tries for every group of any run and as many files in the way.
    for n in 1..=100_000u32 {
        let number = if n == 1 {
            String::new()
        } else {
            format!(".{n}")
        };
        let Some(keep) = room.checked_sub(number.len()).filter(|&k| k > 0) else {
            break;
        };
        // `base` is ASCII (profiles::sanitize), so any byte is a character boundary.
        let name = format!("{}{number}", base.get(..keep).unwrap_or(base));
        if !profiles::acceptable_name(&name) {
            continue;
        }
        let mut path = out.as_os_str().to_owned();
        path.push(".");
        path.push(&name);
        let path = PathBuf::from(path);
        let sidecar = gmon_format::sidecar_path(&path);
        if taken.contains(path.as_os_str())
            || taken.contains(sidecar.as_os_str())
            || !replaceable(&path, &GMON_MAGIC)
            || !replaceable(&sidecar, &GMONX_MAGIC)
        {
            continue;
        }
        return Ok(path);
    }
    anyhow::bail!(
        "{}.{base}: no free name for this executable's profile",
        out.display()
    )
}

/// Whether writing `path` may replace what is there: nothing, or (its links followed by the
/// output rule) a regular file that starts with `magic`. Opened without blocking, in case it
/// became a FIFO since it was looked at.
fn replaceable(path: &Path, magic: &[u8]) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return true;
    }
    let Ok(Sink::Replace(target)) = crate::output::resolve(path) else {
        return false;
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&target);
    let file = match file {
        Ok(f) => f,
        // A link of ours to a name that does not exist yet.
        Err(e) => return e.kind() == std::io::ErrorKind::NotFound,
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = Vec::with_capacity(magic.len());
    file.take(magic.len() as u64).read_to_end(&mut head).is_ok() && head == magic
}

/// Writes every group's sidecar and gmon.out to its path: all to temporary files first, then
/// all renamed into place (sidecar before profile, as the runtime does: a gmon.out is never
/// newer than its sidecar). On failure the error names the file and says how many of the run's
/// files were written (none, unless a rename itself failed).
pub fn write(groups: &[Group], paths: &[PathBuf]) -> anyhow::Result<()> {
    let total: usize = groups
        .iter()
        .map(|g| 1 + usize::from(g.sidecar.is_some()))
        .sum();
    let none = || format!("none of the {total} files of this run was written");
    let mut staged = Vec::with_capacity(total);
    for (g, path) in groups.iter().zip(paths) {
        if let Some(s) = &g.sidecar {
            let sidecar = gmon_format::sidecar_path(path);
            let mut file = Staged::new(&sidecar).with_context(none)?;
            file.fill(|w| {
                gmon_format::write_sidecar(s, w)
                    .with_context(|| format!("{}: write failed", sidecar.display()))
            })
            .with_context(none)?;
            staged.push(file);
        }
        let mut file = Staged::new(path).with_context(none)?;
        match &g.gmon {
            GroupGmon::File(from) => {
                let source = std::fs::File::open(from)
                    .with_context(|| format!("{}", from.display()))
                    .with_context(none)?;
                file.copy(&source).with_context(none)?;
            }
            GroupGmon::Summed(bytes) => file
                .fill(|w| {
                    w.write_all(bytes)
                        .with_context(|| format!("{}: write failed", path.display()))
                })
                .with_context(none)?,
        }
        staged.push(file);
    }
    for (done, file) in staged.into_iter().enumerate() {
        file.commit().with_context(|| {
            format!("only {done} of the {total} files of this run were written")
        })?;
    }
    Ok(())
}
