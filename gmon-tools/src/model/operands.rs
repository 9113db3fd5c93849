//! The operands of the views (`gmon flame`, `gmon pprof`, `gmon diff`): one way to name the
//! executable, as gprof does (`EXE GMON...`) or with `--exe EXE`, and errors that name the real
//! problem when an operand is of the wrong kind (an executable where a profile belongs, the
//! reverse, a directory) instead of a later "cannot read a.out".

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// What a path on the command line is, by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// An ELF file (`\x7fELF`).
    Executable,
    /// A directory.
    Directory,
    /// Anything else: a profile, or a file that is not one (reading it says which).
    Other,
}

/// The kind of `path`; a path that cannot be opened is [`OperandKind::Other`] (reading it later
/// gives the system's error, with the name).
pub fn operand_kind(path: &Path) -> OperandKind {
    if path.is_dir() {
        return OperandKind::Directory;
    }
    let mut magic = [0u8; 4];
    let elf = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\x7fELF";
    if elf {
        OperandKind::Executable
    } else {
        OperandKind::Other
    }
}

/// Whether `bytes` read as a profile (any format gmon reads).
fn is_profile(path: &Path) -> bool {
    gmon_binary::open::read_named(path).is_ok_and(|b| gmon_format::read(&b).is_ok())
}

/// Splits the operands into the executable and the profiles: `--exe EXE` (`exe`), else a
/// first operand that is an ELF file followed by at least one more (gprof's order). Refuses,
/// with the reason: an ELF file among the profiles, a directory anywhere, and an `--exe` that
/// is a profile or a directory.
pub fn executable_and_profiles(
    exe: Option<&Path>,
    operands: &[PathBuf],
) -> Result<(Option<PathBuf>, Vec<PathBuf>)> {
    let (exe, profiles) = match (exe, operands.split_first()) {
        (Some(e), _) => (Some(e.to_path_buf()), operands),
        (None, Some((first, rest)))
            if !rest.is_empty() && operand_kind(first) == OperandKind::Executable =>
        {
            (Some(first.clone()), rest)
        }
        (None, _) => (None, operands),
    };
    if let Some(e) = &exe {
        check_executable_operand(e)?;
    }
    for p in profiles {
        match operand_kind(p) {
            OperandKind::Executable => {
                return Err(operand(
                    p,
                    format!(
                        "is an executable, not a profile: name the executable first \
                         (EXE GMON...) or with --exe EXE{}",
                        if exe.is_some() { ", and only once" } else { "" }
                    ),
                ));
            }
            OperandKind::Directory => {
                return Err(operand(p, "is a directory, not a profile or an executable"));
            }
            OperandKind::Other => {}
        }
    }
    Ok((exe, without_sidecars_beside_their_profiles(profiles)))
}

/// `operands` without the sidecars named beside their own profile (`gmon flame OUT OUT.*`
/// expands to `OUT.gmonx` too): such a sidecar is read with its profile (spec/stacks.md §10).
/// A sidecar named alone stays, for the reader to refuse it with a message saying what it is.
pub fn without_sidecars_beside_their_profiles(operands: &[PathBuf]) -> Vec<PathBuf> {
    let beside_its_profile = |p: &PathBuf| {
        p.to_str()
            .and_then(|s| s.strip_suffix(".gmonx"))
            .is_some_and(|profile| operands.iter().any(|o| o.as_os_str() == profile))
    };
    operands
        .iter()
        .filter(|p| !beside_its_profile(p))
        .cloned()
        .collect()
}

/// Refuses an executable operand that is a directory or a profile (or no ELF file at all),
/// saying so; a missing file is left to the reader, whose error names it.
pub fn check_executable_operand(exe: &Path) -> Result<()> {
    match operand_kind(exe) {
        OperandKind::Executable => Ok(()),
        OperandKind::Directory => Err(operand(exe, "is a directory, not an executable")),
        OperandKind::Other if is_profile(exe) => Err(operand(
            exe,
            "is a gmon.out profile, not an executable (name the executable first or with \
             --exe, then the profiles)",
        )),
        OperandKind::Other if exe.exists() => Err(operand(exe, "not an ELF executable")),
        OperandKind::Other => Ok(()),
    }
}

/// The error for the operand `path`, which is not what its place asks for.
fn operand(path: &Path, problem: impl Into<String>) -> Error {
    Error::Operand {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}
