//! Source positions of symbols and gprof's line symbols (`-l` / `--line`, implied by `-s`).
//!
//! gprof asks BFD for the position of every function symbol (`core_create_function_syms`), and
//! in line mode walks `.text` one byte at a time, starting a new *line symbol* wherever the
//! (line, function name, file) answer changes (`core_create_line_syms`, gprof-behaviour.md
//! §2.4). The byte walk is done here over [`LineInfo::breakpoints`] — the answer is constant
//! between two of them — which gives the same symbols at a fraction of the cost.
//!
//! gprof walks `.text` twice (a counting pass, then the real one). BFD's name memory (see
//! [`super::dwarf`]) is filled by the first pass, so the second can name a region differently;
//! the symbols come from the second pass, and so they do here.

use std::collections::HashMap;

use super::dwarf::{LineInfo, Location};
use super::symtab::{Image, SourceFile, Symbol, SymbolTable};

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
pub fn attach_function_sources(table: &mut SymbolTable, info: &mut LineInfo) {
    let mut locate = |addr: u64| -> Option<(String, u32)> {
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

/// gprof's two walks over `[lo, hi)`: returns the line symbols' start addresses and answers
/// from the second walk.
pub fn scan_line_regions(info: &mut LineInfo, lo: u64, hi: u64) -> Vec<LineRegion> {
    let points = info.breakpoints(lo, hi);
    // First walk: only for BFD's memory of names.
    for &a in &points {
        let _ = info.locate(a);
    }
    let mut out: Vec<LineRegion> = Vec::new();
    let mut prev: Option<Location> = None;
    for &a in &points {
        let Some(loc) = info.locate(a) else { continue };
        if let Some(p) = prev
            && p.line == loc.line
            && p.function == loc.function
            && p.file == loc.file
        {
            continue;
        }
        prev = Some(loc);
        out.push(LineRegion { addr: a, loc });
    }
    out
}

/// Builds the line-mode symbol table: the function symbols of `functions` (with their source
/// positions attached) plus one symbol per line region of `.text`, finalised together so that
/// a function symbol wins over a line symbol at the same address.
pub fn line_symbol_table(
    functions: &SymbolTable,
    info: &mut LineInfo,
    image: &Image,
) -> SymbolTable {
    let regions = scan_line_regions(info, image.text_vma, image.text_end());
    let mut files = FileInterner::from_files(&functions.files);
    let mut syms: Vec<Symbol> = Vec::with_capacity(regions.len() + functions.symbols.len());
    let mut prev: Option<(usize, u32, bool)> = None; // (file, function name id, is_static)
    for r in &regions {
        let file = files.id(info.string(r.loc.file));
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
            name: info.string(r.loc.function).to_string(),
            addr: r.addr,
            end_addr: 0,
            is_static,
            is_func: false,
            file: Some(file),
            line: r.loc.line,
        });
    }
    syms.extend(functions.symbols.iter().cloned());
    SymbolTable {
        symbols: finalize_merged(syms, image.text_end()),
        files: files.into_files(),
    }
}

/// gprof's `symtab_finalize` run a second time, on line symbols (`end_addr` 0) merged with
/// function symbols that keep the `end_addr` of the first run: only unset ends are filled in,
/// and a symbol whose kept end lies before its address is dropped — which removes the last
/// function symbol (usually `data_start`, beyond `.text`) in line mode.
pub fn finalize_merged(syms: Vec<Symbol>, text_end: u64) -> Vec<Symbol> {
    use super::symtab::{cmp_addr, prefer};
    let mut order: Vec<usize> = (0..syms.len()).collect();
    super::sort::msort(&mut order, |&a, &b| match (syms.get(a), syms.get(b)) {
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

/// Line mode (`-l`, `-s`): `functions` plus the line symbols of `image`'s `.text`.
pub fn with_line_symbols(functions: &SymbolTable, image: &Image) -> SymbolTable {
    let mut info = LineInfo::from_elf(&image.data);
    // gprof looks up the function symbols first (this also primes BFD's name memory).
    let mut functions = functions.clone();
    functions.files.clear();
    for s in &mut functions.symbols {
        s.file = None;
        s.line = 0;
    }
    attach_function_sources(&mut functions, &mut info);
    line_symbol_table(&functions, &mut info, image)
}
