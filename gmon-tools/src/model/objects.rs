//! The objects of the profiled process as the views place addresses in them (spec/stacks.md
//! §7, "Mappings"): the executable and, for a recorded run, every shared object and the vDSO,
//! each with the address its code was loaded at and the file offset of that code.

use std::path::Path;

use gmon_format::Sidecar;
use goblin::elf::program_header::{PF_X, PT_LOAD};

/// An executable segment (`PT_LOAD` with `PF_X`) of an ELF file, in link-time addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TextSegment {
    /// `p_vaddr`.
    pub address: u64,
    /// `p_memsz`.
    pub size: u64,
    /// `p_offset`.
    pub file_offset: u64,
}

/// The executable segments of an ELF file already parsed, sorted by address.
pub fn text_segments(elf: &goblin::elf::Elf<'_>) -> Vec<TextSegment> {
    segments_of(&elf.program_headers)
}

fn segments_of(headers: &[goblin::elf::ProgramHeader]) -> Vec<TextSegment> {
    let mut v: Vec<TextSegment> = headers
        .iter()
        .filter(|p| p.p_type == PT_LOAD && p.p_flags & PF_X != 0 && p.p_memsz > 0)
        .map(|p| TextSegment {
            address: p.p_vaddr,
            size: p.p_memsz,
            file_offset: p.p_offset,
        })
        .collect();
    v.sort_unstable();
    v
}

/// The executable segments of the ELF file `data`, reading only its program headers; empty
/// when it is not ELF or they lie outside it.
fn text_segments_of_bytes(data: &[u8]) -> Vec<TextSegment> {
    let Ok(header) = goblin::elf::Elf::parse_header(data) else {
        return Vec::new();
    };
    let (Ok(container), Ok(endian)) = (header.container(), header.endianness()) else {
        return Vec::new();
    };
    let ctx = goblin::container::Ctx::new(container, endian);
    let Ok(phoff) = usize::try_from(header.e_phoff) else {
        return Vec::new();
    };
    goblin::elf::ProgramHeader::parse(data, phoff, usize::from(header.e_phnum), ctx)
        .map(|h| segments_of(&h))
        .unwrap_or_default()
}

/// One loaded range of an object's code, in the addresses the views place samples at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeRange {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Offset in the file of the byte at `start`.
    pub file_offset: u64,
}

/// One object of the profiled process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedObject {
    /// Its path as recorded (the executable's as given when there is no sidecar).
    pub path: String,
    /// Its GNU build id, empty when unknown.
    pub build_id: Vec<u8>,
    /// The main executable.
    pub main: bool,
    /// The kernel's vDSO (no file).
    pub vdso: bool,
    /// Added to a link-time address of the object to give the address the views place it
    /// at: the load bias of the first recorded process that mapped it, 0 without a sidecar.
    pub bias: u64,
    /// Its code, in placed addresses.
    pub code: Vec<CodeRange>,
}

impl LoadedObject {
    /// The build id in lowercase hex, empty when unknown.
    pub fn build_id_hex(&self) -> String {
        self.build_id.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The code range holding the placed address `addr`, if any.
    pub fn range_of(&self, addr: u64) -> Option<&CodeRange> {
        self.code.iter().find(|r| r.start <= addr && addr < r.end)
    }
}

/// The executable alone, at its link-time addresses (a gmon.out without sidecar records no
/// load address): one range per executable segment.
pub fn executable_object(path: &str, build_id: &[u8], text: &[TextSegment]) -> LoadedObject {
    LoadedObject {
        path: path.to_owned(),
        build_id: build_id.to_vec(),
        main: true,
        vdso: false,
        bias: 0,
        code: text
            .iter()
            .map(|s| CodeRange {
                start: s.address,
                end: s.address.saturating_add(s.size),
                file_offset: s.file_offset,
            })
            .collect(),
    }
}

/// Every object the sidecars record, once per path, in the order first met (the main
/// executable first): its code ranges at the load bias of the first sidecar that has it, file
/// offsets from the file's program headers when it is there and the recorded build, else
/// taken equal to the link-time address (as the GNU linker lays out shared objects).
pub fn sidecar_objects(sidecars: &[Sidecar]) -> Vec<LoadedObject> {
    let mut out: Vec<LoadedObject> = Vec::new();
    for sidecar in sidecars {
        let mut objects: Vec<_> = sidecar.objects.iter().collect();
        // The main executable first, as pprof expects of its first mapping.
        objects.sort_by_key(|o| !o.is_main());
        for o in objects {
            if out.iter().any(|k| k.path == o.path) {
                continue;
            }
            let text = if o.flags & gmon_format::sidecar::OBJECT_FLAG_VDSO != 0 {
                Vec::new()
            } else {
                recorded_segments(Path::new(&o.path), &o.build_id)
            };
            let code = o
                .ranges
                .iter()
                .map(|r| {
                    let link = r.start.wrapping_sub(o.load_bias);
                    let file_offset = text
                        .iter()
                        .find(|s| s.address <= link && link < s.address.saturating_add(s.size))
                        .map_or(link, |s| s.file_offset.saturating_add(link - s.address));
                    CodeRange {
                        start: r.start,
                        end: r.end,
                        file_offset,
                    }
                })
                .collect();
            out.push(LoadedObject {
                path: o.path.clone(),
                build_id: o.build_id.clone(),
                main: o.is_main() && !out.iter().any(|k| k.main),
                vdso: o.flags & gmon_format::sidecar::OBJECT_FLAG_VDSO != 0,
                bias: o.load_bias,
                code,
            });
        }
    }
    out
}

/// The executable segments of a recorded object, when its file is there and is the recorded
/// build (same build id, when one was recorded).
fn recorded_segments(path: &Path, build_id: &[u8]) -> Vec<TextSegment> {
    // The path comes from a sidecar: only a regular file is read (spec/inputs.md §1).
    let Ok(data) = gmon_binary::open::map_found(path) else {
        return Vec::new();
    };
    if !build_id.is_empty() {
        let same = gmon_binary::elf_file::ElfFile::parse(&data)
            .and_then(|f| f.gnu_build_id())
            .is_some_and(|b| b == build_id);
        if !same {
            return Vec::new();
        }
    }
    text_segments_of_bytes(&data)
}
