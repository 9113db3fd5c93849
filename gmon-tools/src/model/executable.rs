//! The profiled executable, read once with goblin: its path, GNU build id, byte order and
//! pointer width, and the address ranges of its code, and the check that a profile can belong
//! to it. (Symbols are the gprof engine's, `gprof::analysis::symtab`; DWARF is `gmon_binary::dwarf`.)

use std::path::{Path, PathBuf};

use gmon_format::merge::ExecutableId;
use gmon_format::{CallArc, Profile, Sidecar, read_sidecar, sidecar_path};
use goblin::elf::section_header::SHF_EXECINSTR;

use crate::Result;
use crate::error::Context;

pub use gmon_binary::elf_file::gnu_build_id;

/// What the views and `gmon merge --exe` need to know of the executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executable {
    /// The path, as given (for messages).
    pub path: PathBuf,
    /// Its GNU build id, when it has one.
    pub build_id: Option<ExecutableId>,
    /// Byte order and pointer width, which gprof also takes from the executable.
    pub encoding: gmon_format::Encoding,
    /// Link-time address ranges of its code sections (`SHF_EXECINSTR`), sorted.
    pub code: Vec<(u64, u64)>,
    /// Its executable segments (`PT_LOAD` with `PF_X`), link-time, sorted.
    pub text: Vec<super::objects::TextSegment>,
}

impl Executable {
    /// Reads the ELF file at `path`.
    pub fn open(path: &Path) -> Result<Executable> {
        // Mapped, as gprof's Image is: only the headers, notes and symbol tables are read, not
        // the whole file (16 MB of debug information for a 20,000-function program).
        let data =
            gmon_binary::open::map_named(path).with_context(|| format!("{}", path.display()))?;
        Executable::from_bytes(path, &data)
    }

    /// Like [`Executable::open`] on the file's bytes.
    pub fn from_bytes(path: &Path, data: &[u8]) -> Result<Executable> {
        let elf = gmon_binary::parse_elf(data)
            .with_context(|| format!("{}: not an ELF executable", path.display()))?;
        Ok(Executable::from_elf(path, &elf, data))
    }

    /// Like [`Executable::from_bytes`] on an ELF file already parsed (`data` is its bytes).
    pub fn from_elf(path: &Path, elf: &goblin::elf::Elf<'_>, data: &[u8]) -> Executable {
        let endian = if elf.little_endian {
            gmon_format::Endian::Little
        } else {
            gmon_format::Endian::Big
        };
        let ptr_width = if elf.is_64 {
            gmon_format::PtrWidth::Eight
        } else {
            gmon_format::PtrWidth::Four
        };
        let mut code: Vec<(u64, u64)> = elf
            .section_headers
            .iter()
            .filter(|s| s.sh_flags & u64::from(SHF_EXECINSTR) != 0 && s.sh_size > 0)
            .map(|s| (s.sh_addr, s.sh_addr.saturating_add(s.sh_size)))
            .collect();
        code.sort_unstable();
        Executable {
            path: path.to_path_buf(),
            build_id: gnu_build_id(elf, data).map(ExecutableId),
            encoding: gmon_format::Encoding { endian, ptr_width },
            code,
            text: super::objects::text_segments(elf),
        }
    }

    /// The path with links resolved (as given when that fails), as pprof's mapping names it.
    pub fn canonical_path(&self) -> String {
        std::fs::canonicalize(&self.path)
            .unwrap_or_else(|_| self.path.clone())
            .display()
            .to_string()
    }

    /// Hex of the GNU build id, if there is one.
    pub fn build_id_hex(&self) -> Option<String> {
        self.build_id.as_ref().map(ToString::to_string)
    }

    /// Refuses a profile whose addresses cannot belong to this executable: an arc endpoint
    /// outside every code section (glibc rounds `from_pc` down to 16 bytes, so 16 bytes of slack
    /// before a section are allowed), or a histogram that ends beyond the last code section
    /// (rounded up to a page). gmon.out files carry no build id, so this is the check there is.
    pub fn check(&self, profile: &Profile) -> Result<(), String> {
        self.check_parts(
            profile.histograms().map(|h| (h.low_pc, h.high_pc)),
            profile.arcs().copied(),
        )
    }

    /// [`Executable::check`] on histogram ranges `(low_pc, high_pc)` and arcs.
    pub fn check_parts(
        &self,
        histograms: impl Iterator<Item = (u64, u64)>,
        arcs: impl Iterator<Item = CallArc>,
    ) -> Result<(), String> {
        let Some(&(_, code_end)) = self.code.iter().max_by_key(|r| r.1) else {
            return Ok(());
        };
        let limit = code_end.saturating_add(0xfff) & !0xfff;
        for (i, (_, high_pc)) in histograms.enumerate() {
            if high_pc > limit {
                return Err(format!(
                    "histogram {i} ends at {high_pc:#x}, beyond the code of {} (which ends at \
                     {code_end:#x}): not a profile of this executable",
                    self.path.display()
                ));
            }
        }
        let within = |&(lo, hi): &(u64, u64), pc: u64| pc >= lo.saturating_sub(16) && pc < hi;
        // Most addresses are in the section of the previous one: try it first (a merge checks
        // millions of arcs).
        let mut last = 0;
        for (i, a) in arcs.enumerate() {
            for pc in [a.from_pc, a.self_pc] {
                if self.code.get(last).is_some_and(|r| within(r, pc)) {
                    continue;
                }
                if let Some(k) = self.code.iter().position(|r| within(r, pc)) {
                    last = k;
                } else {
                    return Err(format!(
                        "arc {i} has address {pc:#x}, outside the code of {}: not a profile of \
                         this executable",
                        self.path.display()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The build id of the main executable named by the gmon-write runtime's sidecar of the
/// profile at `path` (`PATH.gmonx`), when there is a sidecar and it records one.
pub fn sidecar_build_id(path: &Path) -> Result<Option<ExecutableId>> {
    Ok(sidecar_beside(path)?.and_then(|s| {
        s.main_object()
            .filter(|o| !o.build_id.is_empty())
            .map(|o| ExecutableId(o.build_id.clone()))
    }))
}

/// The gmon-write runtime's sidecar of the profile at `path` (`PATH.gmonx`), when there is one.
pub fn sidecar_beside(path: &Path) -> Result<Option<Sidecar>> {
    let sidecar = sidecar_path(path);
    match gmon_binary::open::read_found(&sidecar) {
        Ok(b) => Ok(Some(
            read_sidecar(&b).with_context(|| format!("{}", sidecar.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| sidecar.display()),
    }
}
