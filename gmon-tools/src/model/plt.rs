//! Names for the PLT's stubs (`malloc@plt`), as objdump and perf give them: samples in a
//! program's or library's `.plt` are otherwise one `OBJECT+0xSTART` lump for every stub
//! (spec/stacks.md §9).
//!
//! The stubs are laid out in the order of the jump-slot relocations of `.rela.plt` (`.rel.plt`
//! on 32-bit x86): relocation *i* is the *i*-th stub. Where the stubs are is per architecture:
//!
//! * x86-64 and i386: 16-byte stubs; in `.plt.sec` when it exists (`-z ibt`, Debian's default
//!   on x86-64, where `.plt` then holds the lazy-binding trampolines), else in `.plt` after the
//!   16-byte header stub `PLT0`;
//! * AArch64: 16-byte stubs in `.plt` after a 32-byte `PLT0`.
//!
//! Other architectures get no stub names. A relocation without a symbol (an `IRELATIVE` ifunc
//! slot) still takes its stub's place, unnamed.
//!
//! On x86-64, `.plt.got` holds stubs for functions whose GOT slot is bound at load time (a
//! `GLOB_DAT` relocation of `.rela.dyn`, e.g. `__cxa_finalize`): 8 bytes each (16 with IBT),
//! each an indirect `jmp *disp(%rip)` (`ff 25`, after an `endbr64` and a `bnd` prefix with IBT).
//! Its target is the GOT slot, and the relocation at that slot names the function.

use goblin::container::Ctx;
use goblin::elf::SectionHeader;
use goblin::elf::header::{EM_386, EM_AARCH64, EM_X86_64};
use goblin::elf::section_header::{SHT_REL, SHT_RELA};

use super::sections::Sections;

/// One PLT stub: its address range and the name of the function it jumps to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PltStub {
    pub start: u64,
    pub end: u64,
    /// `SYMBOL@plt`.
    pub name: String,
}

/// The PLT stubs of the ELF file `data` (see the module doc); empty when there are none or the
/// layout is not known.
/// `dynsym` is the file's dynamic symbol table, which the relocations' symbols index.
pub(super) fn plt_stubs(
    sections: &Sections<'_, '_>,
    dynsym: &(goblin::elf::Symtab<'_>, &[u8]),
    ctx: Ctx,
    machine: u16,
) -> Vec<PltStub> {
    let data = sections.data();
    let bytes = |h: &SectionHeader| sections.bytes(h);
    let named = |want: &str| sections.named(want);
    let (symbols, strings) = dynsym;
    let name_of = |r_sym: usize| {
        symbols
            .get(r_sym)
            .and_then(|s| strings.get(s.st_name..))
            .and_then(|s| s.split(|&b| b == 0).next())
            .filter(|n| !n.is_empty())
            .map(|n| format!("{}@plt", String::from_utf8_lossy(n)))
    };
    let relocations = |h: &SectionHeader| {
        let is_rela = h.sh_type == SHT_RELA;
        if !is_rela && h.sh_type != SHT_REL {
            return None;
        }
        let offset = usize::try_from(h.sh_offset).ok()?;
        let size = usize::try_from(h.sh_size).ok()?;
        goblin::elf::RelocSection::parse(data, offset, size, is_rela, ctx).ok()
    };
    let mut out = Vec::new();
    if machine == EM_X86_64
        && let Some(got_plt) = named(".plt.got")
        && let Some(code) = bytes(got_plt)
        && let Some(dyn_relocs) = named(".rela.dyn").and_then(relocations)
    {
        let slots: std::collections::HashMap<u64, usize> =
            dyn_relocs.iter().map(|r| (r.r_offset, r.r_sym)).collect();
        let entry = if code.len() % 16 == 0 && code.get(..4) == Some(&[0xf3, 0x0f, 0x1e, 0xfa]) {
            16
        } else {
            8
        };
        for (i, stub) in code.chunks_exact(entry).enumerate() {
            let Some(at) = stub.windows(2).position(|w| w == [0xff, 0x25]) else {
                continue;
            };
            let Some(&[d0, d1, d2, d3]) = stub.get(at + 2..at + 6) else {
                continue;
            };
            let disp = i64::from(i32::from_le_bytes([d0, d1, d2, d3]));
            let start = got_plt.sh_addr.saturating_add((i * entry) as u64);
            let slot = start
                .saturating_add((at + 6) as u64)
                .wrapping_add_signed(disp);
            if let Some(name) = slots.get(&slot).and_then(|&sym| name_of(sym)) {
                out.push(PltStub {
                    start,
                    end: start.saturating_add(entry as u64),
                    name,
                });
            }
        }
    }
    let layout = match machine {
        EM_X86_64 | EM_386 => named(".plt.sec")
            .map(|sec| (sec, 0, 16))
            .or_else(|| named(".plt").map(|plt| (plt, 16, 16))),
        EM_AARCH64 => named(".plt").map(|plt| (plt, 32, 16)),
        _ => None,
    };
    let jump_slots = named(".rela.plt")
        .or_else(|| named(".rel.plt"))
        .and_then(relocations);
    if let (Some((first, header_size, entry)), Some(relocs)) = (layout, jump_slots) {
        let stubs_end = first.sh_addr.saturating_add(first.sh_size);
        for (i, r) in relocs.iter().enumerate() {
            let start = first
                .sh_addr
                .saturating_add(header_size)
                .saturating_add((i as u64).saturating_mul(entry));
            let end = start.saturating_add(entry);
            if end > stubs_end {
                break;
            }
            if let Some(name) = name_of(r.r_sym) {
                out.push(PltStub { start, end, name });
            }
        }
    }
    out
}
