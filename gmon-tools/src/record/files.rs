//! The files one recorded run leaves beside `OUT` (spec/runtime.md §3): which names they get and
//! how they are written.
//!
//! Names: `OUT` for the group [`profiles::name_groups`] puts first, `OUT.<name>` for the others,
//! each with its sidecar (`.gmonx` added). A name is taken only when it
//! - differs from every other name of the run and from their sidecars' names (`foo`'s sidecar
//!   `OUT.foo.gmonx` is never `foo.gmonx`'s profile);
//! - fits `NAME_MAX` with its sidecar suffix: when the executable's name is too long and its
//!   processes also ran it by another name (a copy or link of the same build) that fits, that
//!   one is used; otherwise `<name>` is cut to the room `OUT`'s own name leaves (preflight keeps
//!   at least [`MIN_NAME_ROOM`] bytes);
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

use crate::error::Context;
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

/// The path of each group's gmon.out beside `out` (see the module documentation), and the
/// executable path its name comes from, in the order of `groups`; the first group gets `out`
/// itself.
pub fn paths(out: &Path, groups: &[Group]) -> crate::Result<Vec<(PathBuf, String)>> {
    let room = name_room(out);
    let mut taken: HashSet<OsString> = HashSet::new();
    let mut paths = Vec::with_capacity(groups.len());
    for g in groups {
        let (path, executable) = match &g.suffix {
            None => (out.to_path_buf(), g.executable.clone()),
            Some(base) => {
                let whole = g
                    .aliases
                    .iter()
                    .map(|a| (profiles::file_name_part(a), a))
                    .find(|(name, _)| base.len() > room && name.len() <= room);
                match whole {
                    Some((name, alias)) => (free_name(out, &name, room, &taken)?, alias.clone()),
                    None => (free_name(out, base, room, &taken)?, g.executable.clone()),
                }
            }
        };
        taken.insert(path.clone().into_os_string());
        taken.insert(gmon_format::sidecar_path(&path).into_os_string());
        paths.push((path, executable));
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
) -> crate::Result<PathBuf> {
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
    let mut path = out.as_os_str().to_owned();
    path.push(format!(".{base}"));
    Err(crate::Error::NoFreeName { path: path.into() })
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
pub fn write(groups: &[Group], paths: &[(PathBuf, String)]) -> crate::Result<()> {
    let total: usize = groups
        .iter()
        .map(|g| 1 + usize::from(g.sidecar.is_some()))
        .sum();
    let none = || format!("none of the {total} files of this run was written");
    let mut staged = Vec::with_capacity(total);
    for (g, (path, _)) in groups.iter().zip(paths) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn group(suffix: Option<&str>) -> Group {
        Group {
            executable: String::new(),
            aliases: Vec::new(),
            build_id: Vec::new(),
            first: false,
            processes: 1,
            gmon: GroupGmon::File(PathBuf::new()),
            sidecar: None,
            samples: 1,
            suffix: suffix.map(str::to_owned),
        }
    }

    fn names(out: &Path, suffixes: &[Option<&str>]) -> Vec<String> {
        let groups: Vec<Group> = suffixes.iter().map(|s| group(*s)).collect();
        paths(out, &groups)
            .unwrap()
            .iter()
            .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn names_are_unique_fit_and_step_around_files_that_are_not_profiles() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.out");
        // The same name twice, and a name that is the other's sidecar's once `.gmonx` is
        // added: every file and sidecar name differs.
        assert_eq!(
            names(&out, &[None, Some("foo"), Some("foo"), Some("foo.gmonx_")]),
            ["r.out", "r.out.foo", "r.out.foo.2", "r.out.foo.gmonx_"]
        );
        // A file of the user's is stepped around; a previous run's profile is replaced.
        std::fs::write(dir.path().join("r.out.foo"), "notes").unwrap();
        std::fs::write(dir.path().join("r.out.bar"), GMON_MAGIC).unwrap();
        assert_eq!(
            names(&out, &[None, Some("foo"), Some("bar")]),
            ["r.out", "r.out.foo.2", "r.out.bar"]
        );
        // A long name is cut so that its sidecar's name fits, and stays unique.
        let long = "L".repeat(300);
        let got = names(&out, &[None, Some(&long), Some(&long)]);
        for name in &got {
            assert!(name.len() + SIDECAR_SUFFIX.len() <= NAME_MAX, "{name}");
        }
        assert_ne!(got[1], got[2]);
        assert!(got[2].ends_with(".2"));
        // A name too long whole, when the same build also ran by a name that fits: that one.
        let mut copied = group(Some(&long));
        copied.executable = format!("/d/{long}");
        copied.aliases = vec!["/d/bin/foo".into()];
        let got = paths(&out, &[group(None), copied]).unwrap();
        assert_eq!(
            got[1],
            (dir.path().join("r.out.foo.2"), "/d/bin/foo".into())
        );
    }

    #[test]
    fn an_out_name_without_room_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_out(&dir.path().join("r.out")).is_ok());
        let long = dir
            .path()
            .join("x".repeat(NAME_MAX - SIDECAR_SUFFIX.len() - 10));
        assert!(check_out(&long).unwrap_err().contains("too long"));
        // An OUT.gmonx that is not a sidecar is in the way.
        std::fs::write(dir.path().join("r.out.gmonx"), "mine").unwrap();
        assert!(check_out(&dir.path().join("r.out")).is_err());
    }
}
