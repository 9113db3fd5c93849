//! What differs between architectures when gprof reads an executable's symbols
//! (spec/architectures.md): the symbol values and types BFD reports, and the symbols it adds.
//!
//! * ARM: a Thumb function's `st_value` has bit 0 set (the interworking bit). BFD clears it
//!   when it reads the symbol, so the function starts at the even address; the old
//!   `STT_ARM_TFUNC` type is read as `STT_FUNC`.
//! * 64-bit PowerPC, ELFv1 (big-endian `powerpc64`): a function symbol names its descriptor
//!   in `.opd` (data); the code has no symbol. BFD's synthetic symbol table adds a code symbol
//!   `.name` at the entry address the descriptor holds, and gprof reads those too.
//! * ELFv2 (`powerpc64le`) has no descriptors: `st_value` is the global entry point, and the
//!   local entry point (`st_other`) lies inside the same symbol.
//!
//! Every other target gprof knows reads the symbol table as it is.

use goblin::elf::{Elf, header, section_header, sym};

/// `STT_ARM_TFUNC` (`STT_LOPROC`): a Thumb function in old ARM objects.
const STT_ARM_TFUNC: u8 = 13;

/// The value BFD gives a symbol of `machine`: `st_value`, without ARM's Thumb bit.
pub fn symbol_value(machine: u16, s: &sym::Sym) -> u64 {
    if machine == header::EM_ARM && matches!(s.st_type(), sym::STT_FUNC | sym::STT_GNU_IFUNC) {
        s.st_value & !1
    } else {
        s.st_value
    }
}

/// The symbol type BFD gives a symbol of `machine` (ARM's `STT_ARM_TFUNC` is a function).
pub fn symbol_type(machine: u16, s: &sym::Sym) -> u8 {
    let t = s.st_type();
    if machine == header::EM_ARM && t == STT_ARM_TFUNC {
        sym::STT_FUNC
    } else {
        t
    }
}

/// A symbol of BFD's synthetic table: a PowerPC64 ELFv1 code entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntheticSym {
    /// Offset of the name (`.` + the descriptor's name) in [`Synthetic::names`].
    pub name_off: usize,
    /// The entry address read from the descriptor.
    pub addr: u64,
    /// The descriptor symbol's binding (`STB_LOCAL`, `STB_GLOBAL`, `STB_WEAK`).
    pub bind: u8,
    /// The descriptor symbol's type (`STT_FUNC` normally).
    pub typ: u8,
    /// The code section the entry lies in (section header index).
    pub section: usize,
}

/// BFD's synthetic symbols, in the order gprof appends them after the real ones.
#[derive(Clone, Debug, Default)]
pub struct Synthetic {
    /// The names, each NUL-terminated, one after the other (as BFD lays them out: gprof's
    /// local-name scan can run from one into the next).
    pub names: Vec<u8>,
    /// The symbols.
    pub syms: Vec<SyntheticSym>,
}

impl Synthetic {
    /// The name of `s`.
    pub fn name(&self, s: &SyntheticSym) -> String {
        let rest = self.names.get(s.name_off..).unwrap_or(&[]);
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        String::from_utf8_lossy(rest.get(..end).unwrap_or(&[])).into_owned()
    }
}

/// BFD's synthetic symbol table as gprof asks for it (static symbols only, no dynamic ones,
/// so no `@plt` entries): for ELFv1 PowerPC64, one `.name` symbol per `.opd` descriptor
/// symbol whose entry address has no code symbol yet; empty for every other file.
pub fn synthetic_symbols(elf: &Elf<'_>, data: &[u8]) -> Synthetic {
    let mut out = Synthetic::default();
    if elf.header.e_machine != header::EM_PPC64 {
        return out;
    }
    let shdrs = &elf.section_headers;
    let Some(opd_idx) = shdrs
        .iter()
        .position(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".opd"))
    else {
        return out;
    };
    let opd = &shdrs[opd_idx];
    // A descriptor section without contents makes BFD's whole synthetic table fail.
    if opd.sh_type == section_header::SHT_NOBITS {
        return out;
    }
    let Some(contents) = usize::try_from(opd.sh_offset).ok().and_then(|off| {
        let len = usize::try_from(opd.sh_size).ok()?;
        data.get(off..off.checked_add(len)?)
    }) else {
        return out;
    };
    let flags = |i: usize| shdrs.get(i).map_or(0, |s| s.sh_flags);
    let is_code = |i: usize| {
        let f = flags(i);
        let want = u64::from(section_header::SHF_EXECINSTR | section_header::SHF_ALLOC);
        f & (want | u64::from(section_header::SHF_TLS)) == want
    };
    // Symbols as BFD's synthetic-table builder sees them: no file, object or TLS symbols,
    // undefined/absolute ones have no section of ours.
    #[derive(Clone, Copy)]
    struct S {
        index: usize,
        addr: u64,
        shndx: Option<usize>,
        section_sym: bool,
        global: bool,
        func: bool,
        weak: bool,
        ifunc: bool,
    }
    let mut syms: Vec<S> = Vec::new();
    for (index, s) in elf.syms.iter().enumerate().skip(1) {
        let t = s.st_type();
        if matches!(t, sym::STT_FILE | sym::STT_OBJECT | sym::STT_TLS) {
            continue;
        }
        let shndx = (s.st_shndx != section_header::SHN_UNDEF as usize
            && s.st_shndx < section_header::SHN_LORESERVE as usize)
            .then_some(s.st_shndx);
        syms.push(S {
            index,
            addr: s.st_value,
            shndx,
            section_sym: t == sym::STT_SECTION,
            global: s.st_bind() == sym::STB_GLOBAL,
            func: t == sym::STT_FUNC || t == sym::STT_GNU_IFUNC,
            weak: s.st_bind() == sym::STB_WEAK,
            ifunc: t == sym::STT_GNU_IFUNC,
        });
    }
    // BFD's order: section symbols, then `.opd` symbols, then code symbols, then the rest;
    // by address; at one address global, function, strong symbols first; then table order.
    let group = |s: &S| {
        if s.section_sym {
            0
        } else if s.shndx == Some(opd_idx) {
            1
        } else if s.shndx.is_some_and(is_code) {
            2
        } else {
            3
        }
    };
    syms.sort_by(|a, b| {
        let (sa, sb) = (a.section_sym, b.section_sym);
        sb.cmp(&sa)
            .then_with(|| (b.shndx == Some(opd_idx)).cmp(&(a.shndx == Some(opd_idx))))
            .then_with(|| {
                let ca = a.shndx.is_some_and(is_code);
                let cb = b.shndx.is_some_and(is_code);
                cb.cmp(&ca)
            })
            .then_with(|| a.addr.cmp(&b.addr))
            .then_with(|| b.global.cmp(&a.global))
            .then_with(|| b.func.cmp(&a.func))
            .then_with(|| a.weak.cmp(&b.weak))
            .then_with(|| a.index.cmp(&b.index))
    });
    // Symbols at one address are duplicates (the first is kept), unless only one is an ifunc.
    syms.dedup_by(|b, a| a.addr == b.addr && a.ifunc == b.ifunc);
    let opd_syms: Vec<&S> = syms.iter().filter(|s| group(s) == 1).collect();
    let code_syms: Vec<u64> = syms
        .iter()
        .filter(|s| group(s) == 2)
        .map(|s| s.addr)
        .collect();
    // Code sections that have a section symbol, by address: where the walk below starts.
    let code_sec_syms: Vec<usize> = syms
        .iter()
        .filter(|s| s.section_sym && s.shndx.is_some_and(is_code))
        .filter_map(|s| s.shndx)
        .collect();
    let big = !elf.little_endian;
    for s in opd_syms {
        let off = s.addr.wrapping_sub(opd.sh_addr);
        if off > opd.sh_size.wrapping_sub(8) {
            continue;
        }
        let Some(bytes) = usize::try_from(off)
            .ok()
            .and_then(|o| contents.get(o..o.checked_add(8)?))
        else {
            continue;
        };
        let mut w = [0u8; 8];
        w.copy_from_slice(bytes);
        let ent = if big {
            u64::from_be_bytes(w)
        } else {
            u64::from_le_bytes(w)
        };
        if code_syms.binary_search(&ent).is_ok() {
            continue;
        }
        // The section: from the last code section (with a section symbol) starting at or
        // below the entry, or from the first section, walk on in header order while the
        // sections are allocated and start at or below the entry; the last code one wins.
        let start = code_sec_syms
            .iter()
            .rev()
            .find(|&&i| shdrs.get(i).is_some_and(|h| h.sh_addr <= ent))
            .copied()
            .unwrap_or(1);
        let mut sec = None;
        for (i, h) in shdrs.iter().enumerate().skip(start) {
            if h.sh_addr > ent || h.sh_flags & u64::from(section_header::SHF_ALLOC) == 0 {
                break;
            }
            if h.sh_flags & u64::from(section_header::SHF_EXECINSTR) != 0 {
                sec = Some(i);
            }
        }
        // Left in `.opd` (data), the symbol is of no interest to gprof.
        let Some(section) = sec else {
            continue;
        };
        let Some(orig) = elf.syms.get(s.index) else {
            continue;
        };
        let name = elf.strtab.get_at(orig.st_name).unwrap_or("");
        let name_off = out.names.len();
        out.names.push(b'.');
        out.names.extend_from_slice(name.as_bytes());
        out.names.push(0);
        out.syms.push(SyntheticSym {
            name_off,
            addr: ent,
            bind: orig.st_bind(),
            typ: orig.st_type(),
            section,
        });
    }
    out
}

/// A candidate of BFD's `_bfd_elf_find_function` (the function name of a line when DWARF
/// gives none): offset in the code section, extent (at least 1), name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionSym<'a> {
    /// Offset from the start of the section.
    pub offset: u64,
    /// `st_size`, or 1 when it is 0.
    pub size: u64,
    /// The symbol's name.
    pub name: std::borrow::Cow<'a, str>,
    /// The symbol's value in its own section, which BFD compares with code offsets (its
    /// one-entry cache; whether a DWARF function starts at the symbol):
    /// [`FunctionSym::offset`] except for a descriptor (its offset in `.opd`).
    pub cache_value: u64,
}

/// The symbols BFD's `maybe_function_sym` of `elf`'s machine accepts as functions of section
/// `sec` (its header index), in the order gprof passes them (the symbol table, then the
/// synthetic symbols). Common rule: no section, file, object or TLS symbols, no hidden local
/// untyped zero-size labels, only symbols of `sec`. ARM: only untyped and function symbols,
/// no mapping symbols (`$a`, `$t`, `$d`), Thumb bit cleared. PowerPC64 ELFv1: a descriptor
/// symbol in `.opd` stands for its entry when that lies in `sec` (size 24 counts as 1).
pub fn function_symbols<'a>(
    elf: &Elf<'a>,
    data: &'a [u8],
    sec: usize,
    synthetic: &'a Synthetic,
) -> Vec<FunctionSym<'a>> {
    let machine = elf.header.e_machine;
    let Some(shdr) = elf.section_headers.get(sec) else {
        return Vec::new();
    };
    let (vma, end) = (shdr.sh_addr, shdr.sh_addr.wrapping_add(shdr.sh_size));
    let opd = (machine == header::EM_PPC64)
        .then(|| {
            elf.section_headers
                .iter()
                .enumerate()
                .find(|(_, s)| elf.shdr_strtab.get_at(s.sh_name) == Some(".opd"))
        })
        .flatten()
        .filter(|(_, s)| s.sh_type != section_header::SHT_NOBITS);
    let mut out = Vec::new();
    let strtab = crate::strtab::goblin_strtab_bytes(elf, data);
    for s in elf.syms.iter().skip(1) {
        let typ = symbol_type(machine, &s);
        if matches!(
            typ,
            sym::STT_SECTION | sym::STT_FILE | sym::STT_OBJECT | sym::STT_TLS
        ) {
            continue;
        }
        let local = s.st_bind() == sym::STB_LOCAL;
        if s.st_size == 0 && local && typ == sym::STT_NOTYPE && s.st_visibility() == sym::STV_HIDDEN
        {
            continue;
        }
        let name = crate::strtab::goblin_str_at(strtab, s.st_name);
        let mut size = s.st_size;
        let mut cache_value = None;
        let offset = match opd {
            Some((oi, o)) if s.st_shndx == oi => {
                let off = s.st_value.wrapping_sub(o.sh_addr);
                let ent = (off.wrapping_add(7) < o.sh_size && off.wrapping_add(7) >= off)
                    .then(|| {
                        let at = usize::try_from(o.sh_offset.checked_add(off)?).ok()?;
                        let b: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
                        Some(if elf.little_endian {
                            u64::from_le_bytes(b)
                        } else {
                            u64::from_be_bytes(b)
                        })
                    })
                    .flatten();
                match ent {
                    Some(e) if vma <= e && e < end => {
                        if size == 24 {
                            size = 1;
                        }
                        cache_value = Some(off);
                        e - vma
                    }
                    _ => continue,
                }
            }
            _ => {
                if s.st_shndx != sec {
                    continue;
                }
                if machine == header::EM_ARM {
                    if !matches!(typ, sym::STT_NOTYPE | sym::STT_FUNC) {
                        continue;
                    }
                    let b = name.as_bytes();
                    if local
                        && b.first() == Some(&b'$')
                        && b.get(1).is_some_and(|c| b"atd".contains(c))
                        && matches!(b.get(2), None | Some(b'.'))
                    {
                        continue;
                    }
                }
                symbol_value(machine, &s).wrapping_sub(vma)
            }
        };
        out.push(FunctionSym {
            offset,
            size: size.max(1),
            name: std::borrow::Cow::Borrowed(name),
            cache_value: cache_value.unwrap_or(offset),
        });
    }
    for s in &synthetic.syms {
        if s.section == sec {
            out.push(FunctionSym {
                offset: s.addr.wrapping_sub(vma),
                size: 1,
                name: std::borrow::Cow::Owned(synthetic.name(s)),
                cache_value: s.addr.wrapping_sub(vma),
            });
        }
    }
    out
}

/// The machine-code scanners of gprof's `-c` (static call graph).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallScanner {
    /// i386 and x86-64: `call rel32` at any byte.
    X86,
    /// AArch64: `b` and `bl` (`insn & 0x7c000000 == 0x14000000`), every 4 bytes.
    Aarch64,
    /// SPARC: any instruction with one of the two top bits set is taken as `call`, every 4
    /// bytes from the first aligned address; target `pc + sign_extend(disp30)` (gprof does not
    /// scale the displacement by 4).
    Sparc,
    /// MIPS: `jal` (`insn & 0xfc000000 == 0x0c000000`), every 4 bytes, target in the current
    /// 256 MB region; `jalr` (`insn & 0xfc00f83f == 0x0000f809`) is an indirect call.
    Mips,
}

/// What a `-c` scanner makes of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Not a call.
    None,
    /// A call to this address.
    Direct(u64),
    /// An indirect call (MIPS `jalr`): gprof adds an arc to its `<indirect child>`.
    Indirect,
}

impl CallScanner {
    /// The 4-byte instruction `insn` at `pc` as a call.
    pub fn decode(self, pc: u64, insn: &[u8], big_endian: bool) -> Call {
        let Ok(b) = <[u8; 4]>::try_from(insn) else {
            return Call::None;
        };
        let w = if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        };
        if self == CallScanner::Mips && w & 0xfc00_f83f == 0x0000_f809 {
            return Call::Indirect;
        }
        self.target(pc, &b, big_endian)
            .map_or(Call::None, Call::Direct)
    }

    /// Where the scan of a function clipped to `lo` starts (SPARC rounds up to 4).
    pub fn start(self, lo: u64) -> u64 {
        if self == CallScanner::Sparc {
            lo.wrapping_add(3) & !3
        } else {
            lo
        }
    }

    /// The call target of the 4-byte instruction `insn` at `pc`, if it is a direct call.
    pub fn target(self, pc: u64, insn: &[u8], big_endian: bool) -> Option<u64> {
        let b: [u8; 4] = insn.try_into().ok()?;
        let w = if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        };
        match self {
            CallScanner::X86 => None,
            CallScanner::Aarch64 => (w & 0x7c00_0000 == 0x1400_0000).then(|| {
                let imm =
                    ((u64::from(w & 0x03ff_ffff) ^ 0x0200_0000).wrapping_sub(0x0200_0000)) << 2;
                pc.wrapping_add(imm)
            }),
            CallScanner::Sparc => (w & 0xc000_0000 != 0).then(|| {
                pc.wrapping_add(
                    (u64::from(w & 0x3fff_ffff) ^ 0x2000_0000).wrapping_sub(0x2000_0000),
                )
            }),
            CallScanner::Mips => (w & 0xfc00_0000 == 0x0c00_0000)
                .then(|| (pc & !0x0fff_ffff) | (u64::from(w & 0x03ff_ffff) << 2)),
        }
    }
}

/// The `-c` scanner gprof has for `machine`, if any.
pub fn call_scanner(machine: u16) -> Option<CallScanner> {
    match machine {
        header::EM_X86_64 | header::EM_386 => Some(CallScanner::X86),
        header::EM_AARCH64 => Some(CallScanner::Aarch64),
        header::EM_MIPS => Some(CallScanner::Mips),
        header::EM_SPARC | header::EM_SPARC32PLUS | header::EM_SPARCV9 => Some(CallScanner::Sparc),
        _ => None,
    }
}

/// BFD's printable name of the image's architecture (`bfd_printable_name`), as gprof's
/// "-c not supported" message shows it.
/// `elf_data`: the executable's bytes; `wide`: an ELF64 file.
pub fn printable_name(machine: u16, wide: bool, elf_data: &[u8]) -> String {
    match machine {
        header::EM_PPC64 => "powerpc:common64".into(),
        header::EM_PPC => "powerpc:common".into(),
        header::EM_S390 if wide => "s390:64-bit".into(),
        header::EM_S390 => "s390:31-bit".into(),
        header::EM_RISCV if wide => "riscv:rv64".into(),
        header::EM_RISCV => "riscv:rv32".into(),
        header::EM_ARM => arm_arch_name(elf_data).into(),
        header::EM_SPARC | header::EM_SPARCV9 => "sparc".into(),
        m => format!("{m}"),
    }
}

/// Every symbol's address and whether it is a function, as BFD gives them to gprof: the
/// symbol table (Thumb bit cleared) followed by the synthetic symbols.
pub fn symbol_addresses<'a>(
    elf: &'a Elf<'_>,
    data: &'a [u8],
) -> impl Iterator<Item = (u64, bool)> + 'a {
    let machine = elf.header.e_machine;
    // Lazily: a caller that has what it needs early (the file order, once every file is
    // placed) stops without going through the rest of a large table.
    let synthetic = std::iter::once(()).flat_map(move |()| {
        synthetic_symbols(elf, data)
            .syms
            .into_iter()
            .map(|s| (s.addr, s.typ == sym::STT_FUNC))
    });
    elf.syms
        .iter()
        .skip(1)
        .map(move |s| {
            (
                symbol_value(machine, &s),
                symbol_type(machine, &s) == sym::STT_FUNC,
            )
        })
        .chain(synthetic)
}

/// BFD's name of an ARM image's architecture: from the `Tag_CPU_arch` build attribute in
/// `.ARM.attributes` ("arm" when there is none).
fn arm_arch_name(data: &[u8]) -> &'static str {
    const NAMES: [&str; 22] = [
        "armv3m",
        "armv4",
        "armv4t",
        "armv5t",
        "armv5te",
        "armv5tej",
        "armv6",
        "armv6kz",
        "armv6t2",
        "armv6k",
        "armv7",
        "armv6-m",
        "armv6s-m",
        "armv7e-m",
        "armv8-a",
        "armv8-r",
        "armv8-m.base",
        "armv8-m.main",
        "arm",
        "arm",
        "armv8.1-m.main",
        "armv9-a",
    ];
    let arch = Elf::parse(data).ok().and_then(|elf| {
        let sec = elf
            .section_headers
            .iter()
            .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".ARM.attributes"))?;
        let off = usize::try_from(sec.sh_offset).ok()?;
        let len = usize::try_from(sec.sh_size).ok()?;
        cpu_arch_attribute(data.get(off..off.checked_add(len)?)?, elf.little_endian)
    });
    arch.and_then(|a| NAMES.get(usize::try_from(a).ok()?).copied())
        .unwrap_or("arm")
}

/// `Tag_CPU_arch` of the "aeabi" file attributes in an `.ARM.attributes` section.
fn cpu_arch_attribute(sec: &[u8], little: bool) -> Option<u64> {
    fn uleb(b: &[u8], p: &mut usize) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let byte = *b.get(*p)?;
            *p += 1;
            if shift < 64 {
                v |= u64::from(byte & 0x7f) << shift;
            }
            shift += 7;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
    }
    fn ntbs(b: &[u8], p: &mut usize) -> Option<()> {
        let n = b.get(*p..)?.iter().position(|&c| c == 0)?;
        *p += n + 1;
        Some(())
    }
    let u32_at = |b: &[u8], p: usize| -> Option<usize> {
        let w: [u8; 4] = b.get(p..p + 4)?.try_into().ok()?;
        usize::try_from(if little {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        })
        .ok()
    };
    if sec.first() != Some(&b'A') {
        return None;
    }
    let mut p = 1;
    while p < sec.len() {
        let len = u32_at(sec, p)?;
        let sub = sec.get(p..p.checked_add(len)?)?;
        p += len.max(1);
        let name_end = sub.get(4..)?.iter().position(|&c| c == 0)? + 4;
        if sub.get(4..name_end)? != b"aeabi" {
            continue;
        }
        let mut q = name_end + 1;
        while q < sub.len() {
            let start = q;
            let tag = uleb(sub, &mut q)?;
            let size = u32_at(sub, q)?;
            q += 4;
            let end = start.checked_add(size)?.min(sub.len());
            if tag != 1 {
                q = end.max(q);
                continue;
            }
            while q < end {
                let t = uleb(sub, &mut q)?;
                match t {
                    6 => return uleb(sub, &mut q),
                    4 | 5 | 65 | 67 => ntbs(sub, &mut q)?,
                    32 => {
                        uleb(sub, &mut q)?;
                        ntbs(sub, &mut q)?;
                    }
                    t if t > 32 && t % 2 == 1 => ntbs(sub, &mut q)?,
                    _ => {
                        uleb(sub, &mut q)?;
                    }
                }
            }
        }
    }
    None
}
