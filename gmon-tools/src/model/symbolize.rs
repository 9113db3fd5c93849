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

use gmon_binary::ImageBytes;
use gmon_demangle::{Style, demangle};

use super::plt::{PltStub, plt_stubs};
use super::sections::{Sections, string_at};

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
            let file = gmon_binary::elf_file::ElfFile::parse(&data)?;
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
            elf.header.e_machine,
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
            gmon_binary::debuglink::separate_debug_map(path, data)
        } else {
            None
        };
        let debug_tables = debug.as_deref().and_then(Tables::read);
        let sources = [
            tables.symtab.as_ref(),
            debug_tables.as_ref().and_then(|t| t.symtab.as_ref()),
            tables.dynsym.as_ref(),
        ];
        let chosen = match wanted {
            Some(wanted) => symbols_for(&sources, wanted),
            None => all_symbols(&sources),
        };
        let functions: Vec<ObjectFunction> = chosen
            .into_iter()
            .map(|(sym, end)| ObjectFunction {
                start: sym.start,
                end,
                name: sources
                    .get(sym.table)
                    .copied()
                    .flatten()
                    .and_then(|(_, strings)| string_at(strings, sym.name))
                    .map(|n| String::from_utf8_lossy(unversioned(n)).into_owned())
                    .unwrap_or_default(),
                from_symbol: true,
            })
            .collect();
        let mut functions = functions;
        // PLT stubs have no symbols: named `SYMBOL@plt` where no symbol covers them.
        functions.extend(tables.plt.iter().map(|stub| ObjectFunction {
            start: stub.start,
            end: stub.end,
            name: stub.name.clone(),
            from_symbol: true,
        }));
        functions.sort_by_key(|f| f.start);
        functions.dedup_by(|later, first| later.start == first.start);
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
#[derive(Clone, Copy)]
struct RawSymbol {
    start: u64,
    /// The end when sized, else `start`.
    end: u64,
    /// Which table it came from, and its name's offset in that table's strings.
    table: usize,
    name: usize,
    /// How much its name is the one people know, among aliases at one address (higher wins):
    /// see [`alias_rank`].
    rank: u8,
}

/// Among symbols at one address, the name people grep for (spec/stacks.md §9): a global or weak
/// symbol over a local alias (`malloc` over `__GI___libc_malloc`, `__libc_start_main` over
/// `__libc_start_main_alias_2`), then fewer leading underscores (`munmap` over `__munmap`),
/// then global over weak.
fn alias_rank(binding: u8, name: &[u8]) -> u8 {
    use goblin::elf::sym::{STB_GLOBAL, STB_GNU_UNIQUE, STB_WEAK};
    let exported = matches!(binding, STB_GLOBAL | STB_WEAK | STB_GNU_UNIQUE);
    let underscores = name.iter().take(3).take_while(|&&b| b == b'_').count() as u8;
    (u8::from(exported) << 3) | ((3 - underscores) << 1) | u8::from(binding == STB_GLOBAL)
}

/// The symbol tables naming reads, in order of preference at one address (see
/// [`ObjectSymbols::from_tables`]).
type Sources<'s, 'a> = [Option<&'s (goblin::elf::Symtab<'a>, &'a [u8])>; 3];

/// Whether `new` replaces `kept` as the symbol at their common start: a sized symbol beats an
/// unsized one, then the better-known name ([`alias_rank`]), otherwise the first seen stays.
fn preferred(new: &RawSymbol, kept: &RawSymbol) -> bool {
    let key = |s: &RawSymbol| (s.end > s.start, s.rank);
    key(new) > key(kept)
}

/// The end of `sym`: its own when sized, else the next symbol's start (an unsized symbol, such
/// as hand-written assembly, runs up to the next one), or one byte when it is the last.
fn end_of(sym: &RawSymbol, next_start: Option<u64>) -> u64 {
    if sym.end > sym.start {
        sym.end
    } else {
        next_start.map_or(sym.start + 1, |n| n.max(sym.start + 1))
    }
}

/// Every function symbol, one per start address, sorted, each with its end.
fn all_symbols(sources: &Sources<'_, '_>) -> Vec<(RawSymbol, u64)> {
    let mut syms: Vec<RawSymbol> = Vec::new();
    for (i, table) in sources.iter().enumerate() {
        for_each_function(*table, i, |s| syms.push(s));
    }
    // At one address the preferred symbol sorts first (the sort is stable: first seen first).
    syms.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then((b.end > b.start, b.rank).cmp(&(a.end > a.start, a.rank)))
    });
    syms.dedup_by(|later, first| later.start == first.start);
    let next: Vec<Option<u64>> = syms.iter().skip(1).map(|s| Some(s.start)).collect();
    syms.into_iter()
        .zip(next.into_iter().chain([None]))
        .map(|(s, n)| {
            let end = end_of(&s, n);
            (s, end)
        })
        .collect()
}

/// The symbols that [`all_symbols`] would give for the addresses `wanted`, found in one pass
/// over the tables without sorting them: a library has tens of thousands of symbols and a
/// short run samples a few dozen addresses (sorting them was most of `gmon record`'s summary).
///
/// The wanted addresses, sorted, cut the address space into gaps; gap `j` holds the starts in
/// `(wanted[j-1], wanted[j]]`. Per gap the pass keeps the preferred symbol at the highest start
/// and the lowest start. The symbol of `wanted[j]` is then the best of gap `j`, or of the
/// nearest earlier non-empty gap, and an unsized symbol ends at the lowest start of the next
/// non-empty gap. Symbols that cover no wanted address are left out.
fn symbols_for(sources: &Sources<'_, '_>, wanted: &[u64]) -> Vec<(RawSymbol, u64)> {
    let mut wanted = wanted.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let gaps = wanted.len() + 1;
    let mut best: Vec<Option<RawSymbol>> = (0..gaps).map(|_| None).collect();
    let mut lowest: Vec<Option<u64>> = vec![None; gaps];
    for (index, table) in sources.iter().enumerate() {
        for_each_function(*table, index, |sym| {
            let gap = wanted.partition_point(|&w| w < sym.start);
            if let Some(low) = lowest.get_mut(gap) {
                *low = Some(low.map_or(sym.start, |l| l.min(sym.start)));
            }
            if gap < wanted.len()
                && let Some(slot) = best.get_mut(gap)
            {
                let replace = match slot {
                    None => true,
                    Some(kept) => {
                        sym.start > kept.start || (sym.start == kept.start && preferred(&sym, kept))
                    }
                };
                if replace {
                    *slot = Some(sym);
                }
            }
        });
    }
    // The lowest start after each gap, for the ends of unsized symbols.
    let mut next_start: Vec<Option<u64>> = vec![None; gaps];
    let mut after = None;
    for g in (0..gaps).rev() {
        if let Some(n) = next_start.get_mut(g) {
            *n = after;
        }
        after = lowest.get(g).copied().flatten().or(after);
    }
    let mut out: Vec<(RawSymbol, u64)> = Vec::new();
    let mut current: Option<usize> = None;
    for (j, &w) in wanted.iter().enumerate() {
        if best.get(j).is_some_and(Option::is_some) {
            current = Some(j);
        }
        let Some(g) = current else { continue };
        let Some(Some(sym)) = best.get(g) else {
            continue;
        };
        let end = end_of(sym, next_start.get(g).copied().flatten());
        if w < end && out.last().is_none_or(|(last, _)| last.start != sym.start) {
            out.push((*sym, end));
        }
    }
    out
}

/// Whether a symbol table defines any function ([`for_each_function`] would find one).
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

/// Calls `f` with each defined function symbol (`STT_FUNC`, `STT_GNU_IFUNC`) with a name, of
/// one symbol table (numbered `index`) and its string table's bytes.
fn for_each_function(
    table: Option<&(goblin::elf::Symtab<'_>, &[u8])>,
    index: usize,
    mut f: impl FnMut(RawSymbol),
) {
    let Some((table, strings)) = table else {
        return;
    };
    for s in table.iter() {
        // An empty name is no name (only its first byte is looked at: the name itself is read
        // when the symbol is kept). Versioned dynamic names carry no `@VERSION` here; the name
        // is kept as the linker wrote it.
        if !is_function(&s) || strings.get(s.st_name).is_none_or(|&b| b == 0) {
            continue;
        }
        let head = strings.get(s.st_name..).unwrap_or_default();
        f(RawSymbol {
            start: s.st_value,
            end: s.st_value.saturating_add(s.st_size),
            table: index,
            name: s.st_name,
            rank: alias_rank(s.st_bind(), head),
        });
    }
}

/// A `.symtab` name without the symbol version the linker appended (`__libc_start_main@@GLIBC_2.34`
/// → `__libc_start_main`): `nm -D` and perf show the bare name, and a name never holds `@`
/// otherwise.
fn unversioned(name: &[u8]) -> &[u8] {
    match name.iter().position(|&b| b == b'@') {
        Some(0) | None => name,
        Some(at) => &name[..at],
    }
}

/// An object file's bytes: mapped when it is a regular file (a view that names a few addresses
/// of a library reads only its headers, symbol tables and perhaps its unwind table), else read.
///
/// The kernel's vDSO (`linux-vdso.so.1`, `linux-gate.so.1`) has no file: it is read from this
/// process's own copy, which is the recorded one when the build ids match (callers that know
/// the recorded build id check it, as for any object).
fn object_bytes(path: &Path) -> Option<ImageBytes> {
    // The path comes from a sidecar: only a regular file is read (spec/inputs.md §1).
    match gmon_binary::open::map_found(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && is_vdso_name(path) => {
            own_vdso().map(ImageBytes::Owned)
        }
        Err(_) => None,
    }
}

/// Whether `path` is the name the loader gives the vDSO (no directory, no file).
fn is_vdso_name(path: &Path) -> bool {
    path.to_str().is_some_and(|p| {
        ["linux-vdso.so", "linux-gate.so", "[vdso]"]
            .iter()
            .any(|n| p.starts_with(n))
    })
}

/// A copy of this process's vDSO image: the whole ELF file the kernel maps at
/// `AT_SYSINFO_EHDR`, section headers included (they end the file).
fn own_vdso() -> Option<Vec<u8>> {
    // SAFETY: getauxval only reads the auxiliary vector.
    let base = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) };
    if base == 0 {
        return None;
    }
    let base = usize::try_from(base).ok()? as *const u8;
    // SAFETY: the kernel maps the vDSO image readable at `base` (at least a page); it starts
    // with an ELF header of the process's own class, 64 bytes at most.
    let ident = unsafe { std::slice::from_raw_parts(base, 64) };
    let header = Elf::parse_header(ident).ok()?;
    let end = header
        .e_shoff
        .checked_add(u64::from(header.e_shnum) * u64::from(header.e_shentsize))?;
    // A vDSO is a few pages; anything larger is not one.
    let len = usize::try_from(end).ok().filter(|&n| n <= 1 << 20)?;
    // SAFETY: the mapping holds the whole image, whose section headers end at `len`.
    Some(unsafe { std::slice::from_raw_parts(base, len) }.to_vec())
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
    /// The PLT's stubs, named after the functions they jump to.
    plt: Vec<PltStub>,
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
            header.e_machine,
        ))
    }

    fn from_sections(
        data: &'a [u8],
        headers: &[goblin::elf::SectionHeader],
        shstrndx: usize,
        ctx: goblin::container::Ctx,
        machine: u16,
    ) -> Tables<'a> {
        use goblin::elf::section_header::{SHT_DYNSYM, SHT_SYMTAB};
        let sections = Sections::new(data, headers, shstrndx);
        let bytes = |h: &goblin::elf::SectionHeader| sections.bytes(h);
        let named = |name: &str| sections.named(name);
        // The dynamic symbols also name the PLT's stubs: parsed once for both.
        let dynsym = sections.symbol_table(SHT_DYNSYM, ctx);
        let plt = dynsym
            .as_ref()
            .map(|d| plt_stubs(&sections, d, ctx, machine))
            .unwrap_or_default();
        Tables {
            symtab: sections.symbol_table(SHT_SYMTAB, ctx),
            dynsym,
            eh_frame: named(".eh_frame").and_then(|h| Some((bytes(h)?, h.sh_addr))),
            text: named(".text").map(|h| h.sh_addr),
            plt,
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
    fn the_vdso_is_named_from_this_process_own_copy() {
        // Every Linux process has a vDSO that exports clock_gettime (the symbol name differs by
        // architecture: __vdso_clock_gettime, __kernel_clock_gettime, plus aliases).
        let vdso = ObjectSymbols::open(Path::new("linux-vdso.so.1")).expect("the vDSO is read");
        assert_eq!(vdso.object, "linux-vdso.so.1");
        let f = vdso
            .functions()
            .iter()
            .find(|f| f.name.contains("clock_gettime"))
            .unwrap_or_else(|| panic!("no clock_gettime in {:?}", vdso.functions()));
        assert!(
            vdso.function_at(f.start)
                .is_some_and(|g| g.start == f.start)
        );
        // Its build id is checked like any object's.
        let bytes = own_vdso().expect("vDSO bytes");
        let id = gmon_binary::elf_file::ElfFile::parse(&bytes)
            .and_then(|e| e.gnu_build_id())
            .unwrap_or_default();
        if !id.is_empty() {
            assert!(ObjectSymbols::open_for(Path::new("linux-vdso.so.1"), &id, None).is_some());
            let mut other = id.clone();
            other[0] ^= 1;
            assert!(ObjectSymbols::open_for(Path::new("linux-vdso.so.1"), &other, None).is_none());
        }
        // A name that is not the vDSO's and no file stays unreadable.
        assert!(ObjectSymbols::open(Path::new("no-such-lib.so.1")).is_none());
    }

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
        // And evenly spaced addresses over the whole range, most inside some function, some
        // in the padding between functions.
        let (low, high) = (fs[0].start, fs[fs.len() - 1].end);
        wanted.extend((0..3000u64).map(|i| low + (high - low) / 3000 * i + i % 7));
        let lazy = ObjectSymbols::open_for(&exe, &[], Some(&wanted)).expect("readable");
        for &a in &wanted {
            assert_eq!(lazy.name_at(a), full.name_at(a), "at {a:#x}");
        }
        let few: Vec<u64> = wanted.iter().take(150).copied().collect();
        let lazy = ObjectSymbols::open_for(&exe, &[], Some(&few)).expect("readable");
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

    /// A 64-bit little-endian symbol table: (name, value, size) function symbols in order, and
    /// its string table.
    fn symtab_bytes(syms: &[(&str, u64, u64)]) -> (Vec<u8>, Vec<u8>) {
        let mut strings = vec![0u8];
        let mut table = vec![0u8; 24]; // the null symbol
        for &(name, value, size) in syms {
            let off = strings.len() as u32;
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
            table.extend_from_slice(&off.to_le_bytes());
            table.push((sym::STB_GLOBAL << 4) | sym::STT_FUNC);
            table.push(0);
            table.extend_from_slice(&1u16.to_le_bytes()); // a section: defined
            table.extend_from_slice(&value.to_le_bytes());
            table.extend_from_slice(&size.to_le_bytes());
        }
        (table, strings)
    }

    #[test]
    fn one_pass_lookup_agrees_with_the_sorted_table() {
        // Same starts with and without sizes (a sized one wins, else the first seen), unsized
        // symbols running to the next start, nested and overlapping symbols, a gap, and the
        // second table only filling in.
        let first = [
            ("a_unsized", 0x100, 0),
            ("b_sized", 0x100, 0x10),
            ("c_sized_too", 0x100, 0x20),
            ("d_asm", 0x180, 0),
            ("e_outer", 0x200, 0x80),
            ("f_inner", 0x220, 0x10),
            ("g_unsized", 0x400, 0),
            ("k_asm", 0x500, 0),
            ("l_after", 0x540, 0x10),
            ("m_last_unsized", 0x600, 0),
        ];
        let second = [
            ("h_dyn", 0x100, 0x40),
            ("i_dyn_unsized", 0x300, 0),
            ("j_dyn", 0x180, 0x8),
        ];
        let ctx = goblin::container::Ctx::new(
            goblin::container::Container::Big,
            goblin::container::Endian::Little,
        );
        let (t1, s1) = symtab_bytes(&first);
        let (t2, s2) = symtab_bytes(&second);
        let tab1 = (
            goblin::elf::Symtab::parse(&t1, 0, first.len() + 1, ctx).expect("symtab"),
            s1.as_slice(),
        );
        let tab2 = (
            goblin::elf::Symtab::parse(&t2, 0, second.len() + 1, ctx).expect("symtab"),
            s2.as_slice(),
        );
        let sources: Sources<'_, '_> = [Some(&tab1), None, Some(&tab2)];
        let names = |v: Vec<(RawSymbol, u64)>| -> Vec<(u64, u64, usize, usize)> {
            v.into_iter()
                .map(|(s, end)| (s.start, end, s.table, s.name))
                .collect()
        };
        let all = names(all_symbols(&sources));
        assert_eq!(all.len(), 9, "{all:x?}");
        let at = |table: &[(u64, u64, usize, usize)], a: u64| {
            let i = table.partition_point(|f| f.0 <= a);
            i.checked_sub(1)
                .and_then(|i| table.get(i))
                .filter(|f| a < f.1)
                .copied()
        };
        // Every address alone, all of them at once, and every third.
        let every: Vec<u64> = (0..0x620).collect();
        for wanted in [every.clone(), every.iter().step_by(3).copied().collect()] {
            let some = names(symbols_for(&sources, &wanted));
            for &a in &wanted {
                assert_eq!(at(&some, a), at(&all, a), "at {a:#x}");
            }
        }
        for a in every {
            let one = names(symbols_for(&sources, &[a]));
            assert_eq!(one.first().copied(), at(&all, a), "at {a:#x} alone");
        }
    }
}
