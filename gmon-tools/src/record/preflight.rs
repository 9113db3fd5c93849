//! What `gmon record` checks before it runs anything: that the profile can be written where the
//! user asked, that the command exists and can be executed (found on `PATH` as `execvp` finds
//! it), and that `LD_PRELOAD` can reach it (not static, not set-uid or set-gid). A run that could
//! only end without a profile is refused up front, with the exit status a shell would give.

use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use crate::error::Refusal;

fn refuse(status: u8, message: String) -> Refusal {
    Refusal { status, message }
}

/// Checks that the run's files can be created as `output` names them, and returns the regular
/// file (or new name) that `OUT` is once its links are followed: the output rule of every
/// writer (crate::output: another user's link, FIFO or file in a sticky shared directory is
/// refused), plus what a set of files needs (spec/runtime.md §3): `OUT` must name a regular file,
/// since `OUT.gmonx` and `OUT.<name>` are made beside it and written whole or not at all (a FIFO
/// or device would receive one file of the set, and a FIFO without a reader would block the end
/// of the run); `OUT.gmonx` must be a sidecar or free; and the names must fit. The directory is
/// tried by creating and removing a temporary file there, which is what the final write does.
pub fn check_output(output: &Path) -> Result<PathBuf, Refusal> {
    let name = output.display();
    if output.as_os_str() == "-" {
        return Err(refuse(
            2,
            "-o -: the profile cannot go to standard output (the command's output goes there); \
             give a file name"
                .to_string(),
        ));
    }
    let target = match crate::output::resolve(output) {
        Ok(crate::output::Sink::Replace(target)) => target,
        Ok(_) => {
            return Err(refuse(
                2,
                format!(
                    "{name}: not a regular file (a FIFO, a device or a descriptor): gmon record \
                     writes a set of files named after it (OUT, OUT.gmonx, OUT.<name>); give a \
                     file name: nothing was run"
                ),
            ));
        }
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {
            return Err(refuse(
                1,
                format!("{name}: is a directory; give a file name"),
            ));
        }
        Err(e) => {
            return Err(refuse(
                1,
                format!(
                    "{name}: cannot write the profile there ({}): nothing was run",
                    crate::output::os_reason(&e)
                ),
            ));
        }
    };
    super::files::check_out(&target).map_err(|why| refuse(1, format!("{why}: nothing was run")))?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match tempfile::Builder::new()
        .prefix(".gmon-record-check-")
        .tempfile_in(dir)
    {
        Ok(_) => Ok(target),
        Err(e) => Err(refuse(
            1,
            format!(
                "{name}: cannot write the profile there ({}): nothing was run",
                crate::output::os_reason(&e)
            ),
        )),
    }
}

/// Finds `program` as `execvp` does: a name with a slash is used as it is; otherwise each
/// directory of `PATH` (default `/bin:/usr/bin`, an empty entry meaning the current directory)
/// is tried in order and the first executable regular file wins. Not found: 127; found only
/// without execute permission: 126.
pub fn find_command(program: &Path) -> Result<PathBuf, Refusal> {
    let name = program.display();
    if program.as_os_str().is_empty() {
        return Err(refuse(127, "'': command not found".to_string()));
    }
    if program.as_os_str().as_bytes().contains(&b'/') {
        return match executable(program) {
            Ok(()) => Ok(program.to_path_buf()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(refuse(
                127,
                format!("{name}: no such file: nothing was run"),
            )),
            Err(e) => Err(refuse(126, format!("{name}: cannot execute: {e}"))),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    let mut denied = None;
    for dir in path.as_bytes().split(|&b| b == b':') {
        let dir = if dir.is_empty() {
            Path::new(".")
        } else {
            Path::new(std::ffi::OsStr::from_bytes(dir))
        };
        let candidate = dir.join(program);
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                denied.get_or_insert((candidate, e));
            }
            Err(_) => {}
        }
    }
    match denied {
        Some((c, e)) => Err(refuse(126, format!("{}: cannot execute: {e}", c.display()))),
        None => Err(refuse(
            127,
            format!("{name}: command not found (searched PATH): nothing was run"),
        )),
    }
}

/// Ok when `path` is a regular file this process may execute.
fn executable(path: &Path) -> io::Result<()> {
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EACCES));
    }
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::ENOENT))?;
    // SAFETY: `c` is a NUL-terminated path; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Checks that `LD_PRELOAD` reaches `program` (found by [`find_command`]): an ELF executable
/// must have an interpreter (`PT_INTERP`: dynamically linked) and must not change identity
/// (set-uid to another user, set-gid to another group: the loader ignores `LD_PRELOAD` then) and
/// must be of the runtime library's machine and class (`library`, from [`library_target`]); a
/// `#!` script is judged by its interpreter. Other files are left to the kernel.
pub fn check_preloadable(program: &Path, library: Option<(u16, u8)>) -> Result<(), Refusal> {
    check_preloadable_depth(program, library, 0)
}

fn check_preloadable_depth(
    program: &Path,
    library: Option<(u16, u8)>,
    depth: u32,
) -> Result<(), Refusal> {
    let name = program.display();
    let meta =
        fs::metadata(program).map_err(|e| refuse(127, format!("{name}: {e}: nothing was run")))?;
    // SAFETY: geteuid/getegid have no preconditions and cannot fail.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let setuid = meta.mode() & 0o4000 != 0 && meta.uid() != euid;
    let setgid = meta.mode() & 0o2000 != 0 && meta.gid() != egid;
    if setuid || setgid {
        return Err(refuse(
            1,
            format!(
                "{name} is set-{}: the dynamic loader ignores LD_PRELOAD for it, so gmon record \
                 cannot profile it; link the program with the gmon-write library instead (see \
                 README: gmon-write) and run it directly: nothing was run",
                if setuid { "uid" } else { "gid" }
            ),
        ));
    }
    let mut head = Vec::new();
    {
        use std::io::Read;
        let f = fs::File::open(program);
        if let Ok(f) = f {
            let _ = f.take(256).read_to_end(&mut head);
        }
    }
    if head.starts_with(b"#!") && depth < 4 {
        let line = head
            .get(2..)
            .unwrap_or_default()
            .split(|&b| b == b'\n')
            .next()
            .unwrap_or_default();
        let interp = line
            .split(|b| b.is_ascii_whitespace())
            .find(|w| !w.is_empty());
        if let Some(interp) = interp {
            return check_preloadable_depth(
                Path::new(std::ffi::OsStr::from_bytes(interp)),
                library,
                depth + 1,
            );
        }
        return Ok(());
    }
    if !head.starts_with(b"\x7fELF") {
        return Ok(());
    }
    // Only the ELF header and the program headers are needed: reading the whole file (python3
    // is 7 MB) cost gmon record more than a short run of the program.
    let Ok(header) = goblin::elf::Elf::parse_header(&head) else {
        return Ok(());
    };
    let Ok(ctx) = header_ctx(&header) else {
        return Ok(());
    };
    let table_end = header
        .e_phoff
        .saturating_add(u64::from(header.e_phnum) * u64::from(header.e_phentsize));
    let bytes = read_prefix(program, table_end.min(1 << 20))
        .map_err(|e| refuse(126, format!("{name}: {e}")))?;
    let Ok(phdrs) = goblin::elf::ProgramHeader::parse(
        &bytes,
        usize::try_from(header.e_phoff).unwrap_or(usize::MAX),
        usize::from(header.e_phnum),
        ctx,
    ) else {
        return Ok(());
    };
    if let Some(refusal) = library.and_then(|l| other_architecture(&name, &header, l)) {
        return Err(refusal);
    }
    let has_interp = phdrs
        .iter()
        .any(|p| p.p_type == goblin::elf::program_header::PT_INTERP);
    if !has_interp && header.e_type == goblin::elf::header::ET_EXEC
        || !has_interp && header.e_type == goblin::elf::header::ET_DYN && is_static_pie(&phdrs)
    {
        return Err(refuse(
            1,
            format!(
                "{name} is statically linked: LD_PRELOAD cannot reach it, so gmon record cannot \
                 profile it; link the program with the gmon-write library instead (see README: \
                 gmon-write) and run it directly: nothing was run"
            ),
        ));
    }
    Ok(())
}

/// The ELF machine and class (`e_machine`, `EI_CLASS`) of the runtime library that will be
/// preloaded: `library` (given, or `GMON_WRITE_LIB`), else the copy embedded in this binary, built for
/// the target `gmon` is built for (gmon-tools/build.rs). Only programs of the same machine and
/// class can load it. None when the library's header cannot be read: the loader will say.
pub fn library_target(library: Option<&Path>) -> Option<(u16, u8)> {
    let given;
    let bytes = match library {
        Some(path) => {
            given = read_prefix(path, 64).ok()?;
            &given[..]
        }
        None => super::runtime::embedded_library(),
    };
    let header = goblin::elf::Elf::parse_header(bytes).ok()?;
    Some((
        header.e_machine,
        header.e_ident[goblin::elf::header::EI_CLASS],
    ))
}

/// A refusal for an executable of another architecture or word size than the runtime
/// library's (`library`, from [`library_target`]): its loader cannot load the library into it
/// (a 32-bit program, an aarch64 one run through qemu), and under an emulator the library would
/// land in the emulator, not in the program.
fn other_architecture(
    name: &impl std::fmt::Display,
    header: &goblin::elf::header::Header,
    library: (u16, u8),
) -> Option<Refusal> {
    let theirs = (
        header.e_machine,
        header.e_ident[goblin::elf::header::EI_CLASS],
    );
    if theirs == library {
        return None;
    }
    let describe = |(m, c): (u16, u8)| {
        let bits = if c == goblin::elf::header::ELFCLASS64 {
            64
        } else {
            32
        };
        format!("{} ({bits}-bit)", goblin::elf::header::machine_to_str(m))
    };
    Some(refuse(
        1,
        format!(
            "{name} is an executable for {}, and the runtime library gmon preloads is built for \
             {}: it cannot be loaded into the program; record it with a gmon built for that \
             architecture (cargo build --target ...): nothing was run",
            describe(theirs),
            describe(library)
        ),
    ))
}

/// The first `n` bytes of the file at `path` (fewer when it is shorter).
fn read_prefix(path: &Path, n: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    fs::File::open(path)?.take(n).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// An `ET_DYN` without `PT_INTERP` is either a shared library or a static PIE; a static PIE has
/// a `PT_DYNAMIC` too, so tell them apart by what a library lacks: being run at all. A shared
/// library that is run directly crashes with or without us, so only the common case is refused:
/// a file with `PT_TLS` or `PT_GNU_RELRO` and no `PT_INTERP` that is being executed.
fn is_static_pie(phdrs: &[goblin::elf::ProgramHeader]) -> bool {
    use goblin::elf::program_header::{PT_GNU_RELRO, PT_LOAD};
    phdrs.iter().any(|p| p.p_type == PT_GNU_RELRO) && phdrs.iter().any(|p| p.p_type == PT_LOAD)
}

fn header_ctx(header: &goblin::elf::Header) -> Result<goblin::container::Ctx, ()> {
    use goblin::container::{Container, Ctx, Endian};
    let container = match header.e_ident[goblin::elf::header::EI_CLASS] {
        goblin::elf::header::ELFCLASS64 => Container::Big,
        goblin::elf::header::ELFCLASS32 => Container::Little,
        _ => return Err(()),
    };
    let le = match header.e_ident[goblin::elf::header::EI_DATA] {
        goblin::elf::header::ELFDATA2LSB => Endian::Little,
        goblin::elf::header::ELFDATA2MSB => Endian::Big,
        _ => return Err(()),
    };
    Ok(Ctx::new(container, le))
}
