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
use crate::gprof::symtab::ImageBytes;

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
        let data = object_bytes(path)?;
        let tables = Tables::read(&data)?;
        Some(ObjectSymbols::from_tables(path, &data, &tables, None))
    }

    /// Like [`ObjectSymbols::open`], for an object a profile recorded: `None` also when
    /// `build_id` is given and is not the file's (a rebuilt library). With `wanted` (link-time
    /// addresses), only for naming those: the `.eh_frame` unwind table is then read only when a
    /// symbol does not cover one of them.
    pub fn open_for(path: &Path, build_id: &[u8], wanted: Option<&[u64]>) -> Option<ObjectSymbols> {
        let data = object_bytes(path)?;
        if !build_id.is_empty() {
            let file = crate::gprof::elf_file::ElfFile::parse(&data)?;
            if file.gnu_build_id().as_deref() != Some(build_id) {
                return None;
            }
        }
        let tables = Tables::read(&data)?;
        Some(ObjectSymbols::from_tables(path, &data, &tables, wanted))
    }

    /// Like [`ObjectSymbols::open`] on the object's bytes.
    pub fn from_bytes(path: &Path, data: &[u8]) -> Option<ObjectSymbols> {
        let tables = Tables::read(data)?;
        Some(ObjectSymbols::from_tables(path, data, &tables, None))
    }

    /// Like [`ObjectSymbols::from_bytes`] on an ELF file already parsed (`data` is its bytes).
    pub fn from_elf(path: &Path, elf: &Elf<'_>, data: &[u8]) -> ObjectSymbols {
        let ctx = goblin::container::Ctx::new(
            if elf.is_64 {
                goblin::container::Container::Big
            } else {
                goblin::container::Container::Little
            },
            if elf.little_endian {
                goblin::container::Endian::Little
            } else {
                goblin::container::Endian::Big
            },
        );
        let tables = Tables::from_sections(
            data,
            &elf.section_headers,
            usize::from(elf.header.e_shstrndx),
            ctx,
        );
        ObjectSymbols::from_tables(path, data, &tables, None)
    }

    /// The functions of one object: every function symbol (`.symtab`, else the separate debug
    /// file's, plus `.dynsym`), then the unwind table's functions no symbol covers. With
    /// `wanted`, the unwind table is read only if some wanted address needs it.
    fn from_tables(
        path: &Path,
        data: &[u8],
        tables: &Tables<'_>,
        wanted: Option<&[u64]>,
    ) -> ObjectSymbols {
        let object = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        // Names stay offsets into their string table until a function is kept: a large
        // library has tens of thousands of symbols and a short run samples a few of them.
        let debug = if tables.symtab.as_ref().is_none_or(|t| !has_functions(t)) {
            crate::gprof::debuglink::separate_debug_map(path, data)
        } else {
            None
        };
        let debug_tables = debug.as_deref().and_then(Tables::read);
        let sources = [
            tables.symtab.as_ref(),
            debug_tables.as_ref().and_then(|t| t.symtab.as_ref()),
            tables.dynsym.as_ref(),
        ];
        let mut syms: Vec<RawSymbol> = Vec::new();
        for (i, table) in sources.iter().enumerate() {
            function_symbols(*table, i, &mut syms);
        }
        // At one address, prefer a sized symbol, then a global one (dynsym entries come last,
        // so a .symtab name wins), then the first seen.
        syms.sort_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then((b.end > a.start).cmp(&(a.end > a.start)))
        });
        syms.dedup_by(|later, first| later.start == first.start);
        let mut wanted_sorted: Vec<u64> = wanted.map(<[u64]>::to_vec).unwrap_or_default();
        wanted_sorted.sort_unstable();
        let mut functions: Vec<ObjectFunction> = Vec::new();
        for (i, sym) in syms.iter().enumerate() {
            // An unsized symbol (hand-written assembly) runs to the next symbol.
            let end = if sym.end > sym.start {
                sym.end
            } else {
                syms.get(i + 1)
                    .map_or(sym.start + 1, |n| n.start.max(sym.start + 1))
            };
            if wanted.is_some() {
                let first = wanted_sorted.partition_point(|&x| x < sym.start);
                if wanted_sorted.get(first).is_none_or(|&x| x >= end) {
                    continue;
                }
            }
            let name = sources
                .get(sym.table)
                .copied()
                .flatten()
                .and_then(|(_, strings)| string_at(strings, sym.name))
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default();
            functions.push(ObjectFunction {
                start: sym.start,
                end,
                name,
                from_symbol: true,
            });
        }
        let mut symbols = ObjectSymbols { object, functions };
        // Parsing every FDE costs more than the symbols on a large library; skip it when the
        // symbols already name every address asked about.
        let need_unwind =
            wanted.is_none_or(|a| a.iter().any(|&x| symbols.function_at(x).is_none()));
        if need_unwind {
            symbols.add_unwind_functions(tables);
        }
        symbols
    }

    /// Adds a function `OBJECT+0xSTART` for each unwind-table function no symbol covers.
    fn add_unwind_functions(&mut self, tables: &Tables<'_>) {
        let functions = &mut self.functions;
        // Only the symbols (sorted) are searched: what is pushed below is not in order yet.
        let symbols = functions.len();
        for (start, end) in unwind_ranges(tables) {
            let named = functions.get(..symbols).unwrap_or_default();
            let covered = match named.binary_search_by(|f| f.start.cmp(&start)) {
                Ok(_) => true,
                Err(0) => false,
                Err(i) => named.get(i - 1).is_some_and(|f| start < f.end),
            };
            if !covered {
                functions.push(ObjectFunction {
                    start,
                    end,
                    name: format!("{}+{start:#x}", self.object),
                    from_symbol: false,
                });
            }
        }
        functions.sort_by_key(|f| f.start);
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

/// A function symbol before its name is needed.
struct RawSymbol {
    start: u64,
    /// The end when sized, else `start`.
    end: u64,
    /// Which table it came from, and its name's offset in that table's strings.
    table: usize,
    name: usize,
}

/// Whether a symbol table defines any function ([`function_symbols`] would find one).
fn has_functions(table: &(goblin::elf::Symtab<'_>, &[u8])) -> bool {
    table.0.iter().any(|s| is_function(&s))
}

fn is_function(s: &goblin::elf::Sym) -> bool {
    let typ = s.st_type();
    (typ == sym::STT_FUNC || typ == sym::STT_GNU_IFUNC)
        && s.st_shndx != 0
        && s.st_value != 0
        && s.st_name != 0
}

/// Defined function symbols (`STT_FUNC`, `STT_GNU_IFUNC`) with a name, of one symbol table
/// (numbered `index`) and its string table's bytes.
fn function_symbols(
    table: Option<&(goblin::elf::Symtab<'_>, &[u8])>,
    index: usize,
    out: &mut Vec<RawSymbol>,
) {
    let Some((table, strings)) = table else {
        return;
    };
    for s in table.iter() {
        // An empty name is no name. Versioned dynamic names carry no `@VERSION` here; the
        // name is kept as the linker wrote it.
        if !is_function(&s) || string_at(strings, s.st_name).is_none_or(<[u8]>::is_empty) {
            continue;
        }
        out.push(RawSymbol {
            start: s.st_value,
            end: s.st_value.saturating_add(s.st_size),
            table: index,
            name: s.st_name,
        });
    }
}

/// The NUL-terminated string at `offset` of a string table.
fn string_at(strings: &[u8], offset: usize) -> Option<&[u8]> {
    let tail = strings.get(offset..)?;
    tail.split(|&b| b == 0).next()
}

/// An object file's bytes: mapped when it is a regular file (a view that names a few addresses
/// of a library reads only its headers, symbol tables and perhaps its unwind table), else read.
fn object_bytes(path: &Path) -> Option<ImageBytes> {
    let file = std::fs::File::open(path).ok()?;
    match crate::gprof::symtab::map_file(&file) {
        Some(m) => Some(ImageBytes::Mapped(m)),
        None => std::fs::read(path).ok().map(ImageBytes::Owned),
    }
}

/// What naming needs from an ELF file, found through its section headers alone: goblin's full
/// parse also reads relocations, notes and dynamic entries and splits every string table into
/// strings up front, which on a large library costs more than the names asked for.
struct Tables<'a> {
    /// `.symtab` and its string table.
    symtab: Option<(goblin::elf::Symtab<'a>, &'a [u8])>,
    /// `.dynsym` and its string table.
    dynsym: Option<(goblin::elf::Symtab<'a>, &'a [u8])>,
    /// `.eh_frame`'s bytes and address.
    eh_frame: Option<(&'a [u8], u64)>,
    /// `.text`'s address.
    text: Option<u64>,
    little_endian: bool,
    is_64: bool,
}

impl<'a> Tables<'a> {
    /// The tables of the ELF file `data`; `None` when it is not ELF.
    fn read(data: &'a [u8]) -> Option<Tables<'a>> {
        let header = Elf::parse_header(data).ok()?;
        let ctx = goblin::container::Ctx::new(header.container().ok()?, header.endianness().ok()?);
        let headers = goblin::elf::SectionHeader::parse(
            data,
            usize::try_from(header.e_shoff).ok()?,
            usize::from(header.e_shnum),
            ctx,
        )
        .ok()?;
        Some(Tables::from_sections(
            data,
            &headers,
            usize::from(header.e_shstrndx),
            ctx,
        ))
    }

    fn from_sections(
        data: &'a [u8],
        headers: &[goblin::elf::SectionHeader],
        shstrndx: usize,
        ctx: goblin::container::Ctx,
    ) -> Tables<'a> {
        use goblin::elf::section_header::{SHT_DYNSYM, SHT_NOBITS, SHT_SYMTAB};
        let bytes = |h: &goblin::elf::SectionHeader| -> Option<&'a [u8]> {
            if h.sh_type == SHT_NOBITS {
                return None;
            }
            let o = usize::try_from(h.sh_offset).ok()?;
            let n = usize::try_from(h.sh_size).ok()?;
            data.get(o..o.checked_add(n)?)
        };
        let names = headers.get(shstrndx).and_then(bytes).unwrap_or_default();
        let named = |name: &str| {
            headers.iter().find(|h| {
                string_at(names, h.sh_name) == Some(name.as_bytes()) && h.sh_type != SHT_NOBITS
            })
        };
        let table = |typ: u32| {
            let h = headers.iter().find(|h| h.sh_type == typ)?;
            let strings = headers
                .get(usize::try_from(h.sh_link).ok()?)
                .and_then(bytes)?;
            let entsize = usize::try_from(h.sh_entsize).ok().filter(|&e| e > 0)?;
            let count = usize::try_from(h.sh_size).ok()? / entsize;
            let syms =
                goblin::elf::Symtab::parse(data, usize::try_from(h.sh_offset).ok()?, count, ctx)
                    .ok()?;
            Some((syms, strings))
        };
        Tables {
            symtab: table(SHT_SYMTAB),
            dynsym: table(SHT_DYNSYM),
            eh_frame: named(".eh_frame").and_then(|h| Some((bytes(h)?, h.sh_addr))),
            text: named(".text").map(|h| h.sh_addr),
            little_endian: ctx.is_little_endian(),
            is_64: ctx.container.is_big(),
        }
    }
}

/// The `[start, end)` of every function the `.eh_frame` unwind table describes (one FDE each),
/// read with gimli from the section's bytes.
fn unwind_ranges(tables: &Tables<'_>) -> Vec<(u64, u64)> {
    use gimli::UnwindSection;
    let Some((bytes, addr)) = tables.eh_frame else {
        return Vec::new();
    };
    let endian = if tables.little_endian {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let mut frame = gimli::EhFrame::new(bytes, endian);
    frame.set_address_size(if tables.is_64 { 8 } else { 4 });
    let mut bases = gimli::BaseAddresses::default().set_eh_frame(addr);
    if let Some(text) = tables.text {
        bases = bases.set_text(text);
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

    #[test]
    fn naming_only_the_wanted_addresses_names_them_as_the_full_table_does() {
        let exe = std::env::current_exe().expect("test executable");
        let full = ObjectSymbols::open(&exe).expect("readable");
        let fs = full.functions();
        assert!(fs.len() > 100, "{} functions", fs.len());
        // Starts, middles and one-past-the-end of functions of both kinds, and an address in
        // no function.
        let mut wanted: Vec<u64> = fs
            .iter()
            .step_by(fs.len() / 50)
            .flat_map(|f| [f.start, f.start + (f.end - f.start) / 2, f.end])
            .collect();
        wanted.extend(
            fs.iter()
                .filter(|f| !f.from_symbol)
                .map(|f| f.start + 1)
                .take(5),
        );
        wanted.push(1);
        let lazy = ObjectSymbols::open_for(&exe, &[], Some(&wanted)).expect("readable");
        for &a in &wanted {
            assert_eq!(lazy.name_at(a), full.name_at(a), "at {a:#x}");
        }
        let kept = lazy.functions().iter().filter(|f| f.from_symbol).count();
        assert!(kept < fs.len() / 10, "{kept} of {} symbols kept", fs.len());
        // Addresses every symbol covers: the unwind table is not read at all.
        let covered: Vec<u64> = fs
            .iter()
            .filter(|f| f.from_symbol)
            .map(|f| f.start)
            .collect();
        let lazy = ObjectSymbols::open_for(&exe, &[], Some(&covered)).expect("readable");
        assert!(lazy.functions().iter().all(|f| f.from_symbol));
        assert_eq!(lazy.functions().len(), covered.len());
        // Another build id: not this file.
        assert!(ObjectSymbols::open_for(&exe, &[1, 2, 3, 4], Some(&wanted)).is_none());
    }
}
