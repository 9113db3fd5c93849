//! Naming any address of any object the views meet (spec/stacks.md §9): the main executable
//! when gprof's symbol rules find nothing there, and every shared library of a sampled stack.
//!
//! The views are not bound by gprof's rules (`gmon gprof` keeps them): every function symbol
//! counts, compiler clones (`f.part.0`, `f.isra.0`, `f.constprop.0`, `f.cold`) included, so time
//! in a clone is not credited to whatever symbol precedes it. Symbols come from `.symtab`, from
//! the separate debug file when the object has no `.symtab` (found by build id or
//! `.gnu_debuglink`, by the same lookup as gprof's DWARF), and from `.dynsym`. Code no symbol
//! covers is named by its function's start from the `.eh_frame` unwind table
//! (`OBJECT+0xSTART`, so samples of one anonymous function still add up), else by the address
//! itself (`OBJECT+0xADDRESS`). Addresses are link-time addresses of the object.

use std::path::Path;

use goblin::elf::{Elf, sym};

use crate::gprof::demangle::{Style, demangle};

/// One function of an object: `[start, end)` and its linker name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectFunction {
    /// First address (link-time).
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// The symbol's (mangled) name, or `OBJECT+0xSTART` for an unnamed function.
    pub name: String,
    /// Whether the name is a symbol (not made up from the address).
    pub from_symbol: bool,
}

/// The functions of one object file, sorted by start address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectSymbols {
    /// The object's file name (no directory), used in made-up names.
    pub object: String,
    functions: Vec<ObjectFunction>,
}

impl ObjectSymbols {
    /// Reads the object at `path`; `None` when it cannot be read or is not ELF.
    pub fn open(path: &Path) -> Option<ObjectSymbols> {
        let data = std::fs::read(path).ok()?;
        ObjectSymbols::from_bytes(path, &data)
    }

    /// Like [`ObjectSymbols::open`] on the object's bytes.
    pub fn from_bytes(path: &Path, data: &[u8]) -> Option<ObjectSymbols> {
        let elf = crate::gprof::symtab::parse_elf(data).ok()?;
        Some(ObjectSymbols::from_elf(path, &elf, data))
    }

    /// Like [`ObjectSymbols::from_bytes`] on an ELF file already parsed (`data` is its bytes).
    pub fn from_elf(path: &Path, elf: &Elf<'_>, data: &[u8]) -> ObjectSymbols {
        let object = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let mut syms: Vec<(u64, u64, String)> = Vec::new();
        function_symbols(&elf.syms, &elf.strtab, &mut syms);
        if syms.is_empty()
            && let Some(debug) = crate::gprof::debuglink::separate_debug_data(path, data)
            && let Ok(delf) = crate::gprof::symtab::parse_elf(&debug)
        {
            function_symbols(&delf.syms, &delf.strtab, &mut syms);
        }
        function_symbols(&elf.dynsyms, &elf.dynstrtab, &mut syms);
        // At one address, prefer a sized symbol, then a global one (dynsym entries come last,
        // so a .symtab name wins), then the first seen.
        syms.sort_by(|a, b| a.0.cmp(&b.0).then((b.1 > a.0).cmp(&(a.1 > a.0))));
        syms.dedup_by(|later, first| later.0 == first.0);
        let mut functions: Vec<ObjectFunction> = Vec::with_capacity(syms.len());
        for (i, (start, end, name)) in syms.iter().enumerate() {
            // An unsized symbol (hand-written assembly) runs to the next symbol.
            let end = if *end > *start {
                *end
            } else {
                syms.get(i + 1).map_or(*start + 1, |n| n.0.max(*start + 1))
            };
            functions.push(ObjectFunction {
                start: *start,
                end,
                name: name.clone(),
                from_symbol: true,
            });
        }
        for (start, end) in unwind_ranges(elf, data) {
            let covered = match functions.binary_search_by(|f| f.start.cmp(&start)) {
                Ok(_) => true,
                Err(0) => false,
                Err(i) => functions.get(i - 1).is_some_and(|f| start < f.end),
            };
            if !covered {
                functions.push(ObjectFunction {
                    start,
                    end,
                    name: format!("{object}+{start:#x}"),
                    from_symbol: false,
                });
            }
        }
        functions.sort_by_key(|f| f.start);
        ObjectSymbols { object, functions }
    }

    /// The function holding `addr`, if a symbol or the unwind table covers it.
    pub fn function_at(&self, addr: u64) -> Option<&ObjectFunction> {
        let i = self.functions.partition_point(|f| f.start <= addr);
        let f = self.functions.get(i.checked_sub(1)?)?;
        (addr < f.end).then_some(f)
    }

    /// Every function, sorted by start address.
    pub fn functions(&self) -> &[ObjectFunction] {
        &self.functions
    }

    /// The display name of `addr`: the demangled function name, else `OBJECT+0xADDRESS`.
    pub fn name_at(&self, addr: u64) -> (String, String) {
        match self.function_at(addr) {
            Some(f) => (display_name(&f.name), f.name.clone()),
            None => {
                let n = format!("{}+{addr:#x}", self.object);
                (n.clone(), n)
            }
        }
    }
}

/// The name the views print for a linker name: demangled when it is a C++ or Rust name.
pub fn display_name(name: &str) -> String {
    demangle(name, Style::Auto).unwrap_or_else(|| name.to_owned())
}

/// Defined function symbols (`STT_FUNC`, `STT_GNU_IFUNC`) of one symbol table: (start, end
/// when sized else start, name).
fn function_symbols(
    table: &goblin::elf::Symtab<'_>,
    strings: &goblin::strtab::Strtab<'_>,
    out: &mut Vec<(u64, u64, String)>,
) {
    for s in table.iter() {
        let typ = s.st_type();
        if !(typ == sym::STT_FUNC || typ == sym::STT_GNU_IFUNC)
            || s.st_shndx == 0
            || s.st_value == 0
        {
            continue;
        }
        let Some(name) = strings.get_at(s.st_name).filter(|n| !n.is_empty()) else {
            continue;
        };
        // Versioned dynamic names carry no `@VERSION` here; keep the name as the linker wrote it.
        out.push((
            s.st_value,
            s.st_value.saturating_add(s.st_size),
            name.to_owned(),
        ));
    }
}

/// The `[start, end)` of every function the `.eh_frame` unwind table describes (one FDE each),
/// read with gimli from the section's bytes.
fn unwind_ranges(elf: &Elf<'_>, data: &[u8]) -> Vec<(u64, u64)> {
    use gimli::UnwindSection;
    let section = |name: &str| {
        elf.section_headers.iter().find(|s| {
            elf.shdr_strtab.get_at(s.sh_name) == Some(name)
                && s.sh_type != goblin::elf::section_header::SHT_NOBITS
        })
    };
    let Some(eh) = section(".eh_frame") else {
        return Vec::new();
    };
    let Some(bytes) = usize::try_from(eh.sh_offset)
        .ok()
        .zip(usize::try_from(eh.sh_size).ok())
        .and_then(|(o, n)| data.get(o..o.checked_add(n)?))
    else {
        return Vec::new();
    };
    let endian = if elf.little_endian {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let mut frame = gimli::EhFrame::new(bytes, endian);
    frame.set_address_size(if elf.is_64 { 8 } else { 4 });
    let mut bases = gimli::BaseAddresses::default().set_eh_frame(eh.sh_addr);
    if let Some(text) = section(".text") {
        bases = bases.set_text(text.sh_addr);
    }
    let mut out = Vec::new();
    let mut entries = frame.entries(&bases);
    // A malformed table ends the walk: what was read so far is still right.
    while let Ok(Some(entry)) = entries.next() {
        if let gimli::CieOrFde::Fde(partial) = entry
            && let Ok(fde) = partial.parse(|s, b, o| s.cie_from_offset(b, o))
            && fde.len() > 0
        {
            let start = fde.initial_address();
            out.push((start, start.saturating_add(fde.len())));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_inside_outside_and_past_the_last_function() {
        let s = ObjectSymbols {
            object: "lib.so".into(),
            functions: vec![
                ObjectFunction {
                    start: 0x100,
                    end: 0x140,
                    name: "f".into(),
                    from_symbol: true,
                },
                ObjectFunction {
                    start: 0x200,
                    end: 0x210,
                    name: "lib.so+0x200".into(),
                    from_symbol: false,
                },
            ],
        };
        assert_eq!(s.name_at(0x100).0, "f");
        assert_eq!(s.name_at(0x13f).0, "f");
        assert_eq!(s.name_at(0x140).0, "lib.so+0x140");
        assert_eq!(s.name_at(0x20f).0, "lib.so+0x200");
        assert_eq!(s.name_at(0x50).0, "lib.so+0x50");
    }
}
