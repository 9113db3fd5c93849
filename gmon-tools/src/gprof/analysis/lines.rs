//! Source positions of symbols and gprof's line symbols (`-l` / `--line`, implied by `-s`).
//!
//! gprof asks BFD for the position of every function symbol (`core_create_function_syms`), and
//! in line mode walks `.text` one byte at a time, starting a new *line symbol* wherever the
//! (line, function name, file) answer changes (`core_create_line_syms`, spec/gprof.md
//! §3.4). The byte walk is done here over [`LineInfo::breakpoints`] — the answer is constant
//! between two of them — which gives the same symbols at a fraction of the cost.
//!
//! gprof walks `.text` twice (a counting pass, then the real one). BFD's name memory (see
//! [`gmon_binary::dwarf`]) is filled by the first pass, so the second can name a region differently;
//! the symbols come from the second pass, and so they do here.

use std::collections::HashMap;
use std::sync::Arc;

use rustc_hash::FxBuildHasher;

use gmon_binary::Image;
use gmon_binary::dwarf::{LineInfo, Location};

use super::symtab::{SourceFile, Symbol, SymbolTable};

/// Interns source file names in order of first appearance, as [`SymbolTable::files`] holds them.
#[derive(Debug, Default)]
pub struct FileInterner {
    files: Vec<SourceFile>,
    ids: HashMap<String, usize>,
}

impl FileInterner {
    /// Starts from the files a table already has.
    pub fn from_files(files: &[SourceFile]) -> FileInterner {
        let mut f = FileInterner::default();
        for s in files {
            f.id(&s.name);
        }
        f
    }

    /// The index of `name`, added if new.
    pub fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.files.len();
        self.files.push(SourceFile {
            name: name.to_string(),
        });
        self.ids.insert(name.to_string(), i);
        i
    }

    /// The interned files.
    pub fn into_files(self) -> Vec<SourceFile> {
        self.files
    }
}

/// Gives every function symbol the file and line BFD finds at its address (gprof keeps them
/// only with a file, a function name and a non-zero line). This is what the index's `(file)`
/// suffix of static functions, `--inline-file-names`, `-C`, `-A` and file symspecs use.
/// When `info` was read for some addresses only ([`LineInfo::wanted`]), only the symbols there
/// get theirs.
pub fn attach_function_sources(table: &mut SymbolTable, info: &mut LineInfo) {
    let wanted = info.wanted().map(<[u64]>::to_vec);
    let mut locate = |addr: u64| -> Option<(String, u32)> {
        if let Some(w) = &wanted
            && w.binary_search(&addr).is_err()
        {
            return None;
        }
        let loc = info.locate(addr)?;
        Some((info.string(loc.file).to_string(), loc.line))
    };
    table.attach_source(&mut locate);
}

/// One region of `.text` with a constant BFD answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineRegion {
    /// First address of the region.
    pub addr: u64,
    /// What BFD answered there.
    pub loc: Location,
}

/// The result of gprof's two walks over `.text`.
#[derive(Clone, Debug, Default)]
pub struct LineScan {
    /// Line symbols of the second walk: start address and BFD's answer.
    pub regions: Vec<LineRegion>,
    /// How many symbols the first (counting) walk saw. gprof sizes its table with it and
    /// fails with "somebody miscounted" when the second walk finds a different number, which
    /// happens when BFD's name memory renames a region between the walks (C++ inlined code).
    pub first_count: usize,
}

/// Whether `loc` starts a new line symbol after `prev`.
fn starts_symbol(prev: Option<Location>, loc: Location) -> bool {
    prev.is_none_or(|p| p.line != loc.line || p.function != loc.function || p.file != loc.file)
}

/// gprof's two walks over `[lo, hi)`. When the first walk changes nothing in BFD's name
/// memory, the second would repeat it answer for answer, and is skipped.
pub fn scan_line_regions(info: &mut LineInfo, lo: u64, hi: u64) -> LineScan {
    let points = info.breakpoints(lo, hi);
    let mut scan = LineScan::default();
    // First walk: counts, and fills BFD's name memory. A lookup that changes the memory can
    // make the very next byte answer differently, so that byte is looked up too.
    let mut prev: Option<Location> = None;
    let mut memory_changed = false;
    for (k, &a) in points.iter().enumerate() {
        let next = points.get(k + 1).copied().unwrap_or(hi);
        let (loc, changed) = info.locate_noting_memory(a);
        if let Some(loc) = loc
            && starts_symbol(prev, loc)
        {
            scan.first_count += 1;
            prev = Some(loc);
            if !memory_changed {
                scan.regions.push(LineRegion { addr: a, loc });
            }
        }
        if changed {
            memory_changed = true;
            if a.wrapping_add(1) < next
                && let Some(loc) = info.locate(a + 1)
                && starts_symbol(prev, loc)
            {
                scan.first_count += 1;
                prev = Some(loc);
            }
        }
    }
    if !memory_changed && info.lookups_replay() {
        return scan;
    }
    scan.regions.clear();
    let mut prev: Option<Location> = None;
    for &a in &points {
        let Some(loc) = info.locate(a) else { continue };
        if !starts_symbol(prev, loc) {
            continue;
        }
        prev = Some(loc);
        scan.regions.push(LineRegion { addr: a, loc });
    }
    scan
}

/// Builds the line-mode symbol table: the function symbols of `functions` (with their source
/// positions attached) plus one symbol per line region of `.text`, finalised together so that
/// a function symbol wins over a line symbol at the same address.
pub fn line_symbol_table(
    functions: &SymbolTable,
    info: &mut LineInfo,
    image: &Image,
) -> Result<SymbolTable, crate::gprof::GprofError> {
    let scan = scan_line_regions(info, image.text_vma, image.text_end());
    if scan.first_count != scan.regions.len() {
        let n = functions.symbols.len();
        return Err(crate::gprof::GprofError::new(format!(
            "{}: somebody miscounted: ltab.len={} instead of {}\n",
            crate::gprof::WHOAMI,
            scan.first_count + n,
            scan.regions.len() + n
        )));
    }
    let regions = scan.regions;
    let mut files = FileInterner::from_files(&functions.files);
    let mut syms: Vec<Symbol> = Vec::with_capacity(regions.len() + functions.symbols.len());
    let mut prev: Option<(usize, u32, bool)> = None; // (file, function name id, is_static)
    // Regions repeat a few files: intern each once per LineInfo string.
    let mut file_of: HashMap<u32, usize, FxBuildHasher> = HashMap::default();
    // And one shared name per function.
    let mut name_of: HashMap<u32, Arc<str>, FxBuildHasher> = HashMap::default();
    for r in &regions {
        let file = *file_of
            .entry(r.loc.file)
            .or_insert_with(|| files.id(info.string(r.loc.file)));
        // is_static comes from the previous line symbol of the same function and file, else
        // from the function symbol that owns the address.
        let is_static = match prev {
            Some((f, n, s)) if f == file && n == r.loc.function => s,
            _ => functions
                .lookup(r.addr)
                .and_then(|i| functions.symbols.get(i))
                .is_some_and(|s| s.is_static),
        };
        prev = Some((file, r.loc.function, is_static));
        syms.push(Symbol {
            name: Arc::clone(
                name_of
                    .entry(r.loc.function)
                    .or_insert_with(|| Arc::from(info.string(r.loc.function))),
            ),
            addr: r.addr,
            end_addr: 0,
            is_static,
            is_func: false,
            file: Some(file),
            line: r.loc.line,
        });
    }
    syms.extend(functions.symbols.iter().cloned());
    Ok(SymbolTable {
        symbols: finalize_merged(syms, image.text_end()),
        files: files.into_files(),
    })
}

/// gprof's `symtab_finalize` run a second time, on line symbols (`end_addr` 0) merged with
/// function symbols that keep the `end_addr` of the first run: only unset ends are filled in,
/// and a symbol whose kept end lies before its address is dropped — which removes the last
/// function symbol (usually `data_start`, beyond `.text`) in line mode.
pub fn finalize_merged(syms: Vec<Symbol>, text_end: u64) -> Vec<Symbol> {
    use super::symtab::{cmp_addr, prefer};
    let mut order: Vec<usize> = (0..syms.len()).collect();
    // A key order: the standard stable sort gives msort's result, and merges the two sorted
    // runs (line symbols, function symbols) in linear time.
    order.sort_by(|&a, &b| match (syms.get(a), syms.get(b)) {
        (Some(l), Some(r)) => cmp_addr(l, r),
        _ => std::cmp::Ordering::Equal,
    });
    let mut slots: Vec<Option<Symbol>> = syms.into_iter().map(Some).collect();
    let mut dst: Vec<Symbol> = Vec::with_capacity(slots.len());
    let mut prev_addr: Option<u64> = None;
    for i in order {
        let Some(src) = slots.get_mut(i).and_then(Option::take) else {
            continue;
        };
        if prev_addr == Some(src.addr) {
            if let Some(last) = dst.last_mut()
                && prefer(&src, last)
            {
                *last = src;
            }
            continue;
        }
        if let Some(last) = dst.last_mut()
            && last.end_addr == 0
        {
            last.end_addr = src.addr.wrapping_sub(1);
        }
        if src.end_addr == 0 || src.addr <= src.end_addr {
            prev_addr = Some(src.addr);
            dst.push(src);
        }
    }
    if let Some(last) = dst.last_mut()
        && last.end_addr == 0
    {
        last.end_addr = text_end.wrapping_sub(1);
    }
    dst
}

/// Puts [`SymbolTable::files`] in the order gprof creates its source files: first the files of
/// the function symbols in ELF symbol-table order (`core_create_function_syms` looks each up),
/// then those first met by line symbols (address order). gprof prepends each new file to its
/// list, so `-A` walks this order backwards and a file symspec finds the last match.
/// `elf`: the executable, parsed, with its bytes (for the symbols BFD adds, see
/// [`gmon_binary::arch::symbol_addresses`]).
pub fn order_files_like_gprof(
    table: &mut SymbolTable,
    elf: Option<(&goblin::elf::Elf<'_>, &[u8])>,
) {
    let n = table.files.len();
    if n == 0 {
        return;
    }
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut take = |f: usize, order: &mut Vec<usize>| {
        if let Some(s) = seen.get_mut(f)
            && !*s
        {
            *s = true;
            order.push(f);
        }
    };
    if let Some((elf, data)) = elf {
        // Only symbols with a file can place one: a few hundred static functions in a
        // function-level run, where looking up each of 20,000 ELF symbols in the table was
        // the larger part of this function (dense20k: 3.5 % of a run). The table holds one
        // symbol per address.
        let mut with_file: HashMap<u64, (bool, usize), FxBuildHasher> = HashMap::default();
        for s in &table.symbols {
            if let Some(f) = s.file {
                // The first at an address, as a search from below finds it.
                with_file.entry(s.addr).or_insert((s.is_func, f));
            }
        }
        for (addr, is_func) in gmon_binary::arch::symbol_addresses(elf, data) {
            if order.len() == n {
                break; // every file is placed: the rest changes nothing
            }
            if let Some(&(func, f)) = with_file.get(&addr)
                && func == is_func
            {
                take(f, &mut order);
            }
        }
    }
    for s in &table.symbols {
        if order.len() == n {
            break;
        }
        if let Some(f) = s.file {
            take(f, &mut order);
        }
    }
    if order.len() == n && order.iter().enumerate().all(|(new, &old)| new == old) {
        return; // already in gprof's order
    }
    let mut remap = vec![0usize; n];
    for (new, &old) in order.iter().enumerate() {
        if let Some(r) = remap.get_mut(old) {
            *r = new;
        }
    }
    let mut files: Vec<Option<SourceFile>> = std::mem::take(&mut table.files)
        .into_iter()
        .map(Some)
        .collect();
    table.files = order
        .iter()
        .filter_map(|&old| files.get_mut(old).and_then(Option::take))
        .collect();
    for s in &mut table.symbols {
        s.file = s.file.and_then(|f| remap.get(f).copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, addr: u64, end_addr: u64, is_func: bool) -> Symbol {
        Symbol {
            name: name.into(),
            addr,
            end_addr,
            is_static: false,
            is_func,
            file: None,
            line: 0,
        }
    }

    #[test]
    fn second_finalize_keeps_function_ends_and_drops_inverted_ones() {
        let syms = vec![
            sym("main", 0x100, 0x1ff, true),
            sym("main", 0x100, 0, false),
            sym("main", 0x110, 0, false),
            sym("work", 0x200, 0x2ff, true),
            // Beyond .text: its first-run end (text end - 1) lies before it.
            sym("data_start", 0x4000, 0x2ff, false),
        ];
        let out = finalize_merged(syms, 0x300);
        let got: Vec<(&str, u64, u64, bool)> = out
            .iter()
            .map(|s| (&*s.name, s.addr, s.end_addr, s.is_func))
            .collect();
        assert_eq!(
            got,
            vec![
                ("main", 0x100, 0x1ff, true),
                ("main", 0x110, 0x1ff, false),
                ("work", 0x200, 0x2ff, true),
            ]
        );
    }
}
