//! The executable's function symbols, as gprof's `core_create_function_syms` and
//! `symtab_finalize` build them, and the address lookup `sym_lookup`.
//!
//! Which ELF symbols count (spec/gprof.md §3.1): global code symbols (`T`), weak defined
//! non-object symbols (`W`, wherever they live), and local code symbols (`t`) whose name passes
//! gprof's GCC-suffix scan — a scan that, because of an off-by-one in binutils, runs on into the
//! *next string of `.strtab`*, so it is done here on the raw string table. Symbol sizes are never
//! used: a symbol owns every byte up to the next symbol.

use std::collections::HashMap;
use std::sync::Arc;

use gmon_binary::strtab::{goblin_strtab_bytes, symbol_name};
use gmon_binary::{Image, arch, parse_elf};
use goblin::elf::{Elf, section_header, sym};
use rustc_hash::FxBuildHasher;

use crate::gprof::GprofError;

/// Index of a symbol in a [`SymbolTable`] (address order).
pub type SymIdx = usize;

/// A source file named by the DWARF line information (gprof's `Source_File`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// The name as BFD builds it (usually `DW_AT_comp_dir` joined with the file name).
    pub name: String,
}

impl SourceFile {
    /// The part after the last `/`, which is what gprof prints without `-L` and what symspecs
    /// compare with.
    pub fn basename(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }
}

/// One symbol of gprof's table: a function, or (in line mode) the start of a source line.
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    /// The raw (mangled) name from the ELF string table. Shared: the line symbols of one
    /// function (hundreds of thousands in a large program) all hold its name.
    pub name: Arc<str>,
    /// Link-time address of the first byte.
    pub addr: u64,
    /// Last byte owned (next symbol's address − 1; for the last symbol, end of `.text` − 1).
    pub end_addr: u64,
    /// A local symbol (`t`).
    pub is_static: bool,
    /// An ELF `STT_FUNC` (`BSF_FUNCTION`); labels (`STT_NOTYPE`) and line symbols are not.
    pub is_func: bool,
    /// Source file from the line information, if any (index into [`SymbolTable::files`]).
    pub file: Option<usize>,
    /// Source line (0 when unknown).
    pub line: u32,
}

/// What the symbol filter needs from the command line.
#[derive(Clone, Copy, Debug, Default)]
pub struct SymtabOptions {
    /// `-a` / `--no-static`: drop every local symbol.
    pub no_static: bool,
    /// `-D` / `--ignore-non-functions`: drop local symbols that are not `STT_FUNC`.
    pub ignore_non_functions: bool,
}

/// The finalised symbol table: sorted by address, one symbol per address.
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    /// Symbols in ascending address order.
    pub symbols: Vec<Symbol>,
    /// Source files referenced by [`Symbol::file`], in order of first appearance.
    pub files: Vec<SourceFile>,
}

/// The `nm` letter class gprof's `core_sym_class` gives a symbol: `T`, `t`, or rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Global,
    Static,
}

/// Section names BFD's `coff_section_type` classifies by name before looking at the flags; only
/// whether the result is `t` matters here.
fn section_letter_is_code(name: &str, flags: u64) -> bool {
    const TABLE: &[(&str, bool)] = &[
        (".bss", false),
        (".data", false),
        ("*DEBUG*", false),
        (".debug", false),
        (".drectve", false),
        (".edata", false),
        (".fini", true),
        (".idata", false),
        (".pdata", false),
        (".rdata", false),
        (".rodata", false),
        (".sbss", false),
        (".scommon", false),
        (".sdata", false),
        (".text", true),
        ("vars", false),
        ("zerovars", false),
    ];
    for &(prefix, code) in TABLE {
        if let Some(rest) = name.strip_prefix(prefix) {
            let next = rest.bytes().next().unwrap_or(0);
            if next == 0 || b".$0123456789".contains(&next) {
                return code;
            }
        }
    }
    flags & u64::from(section_header::SHF_EXECINSTR) != 0
}

/// gprof's GCC-suffix scan of a local symbol's name, on the raw string table starting at the
/// name. Returns false when the name must be rejected. See the module doc for the overrun.
fn local_name_passes(strtab: &[u8], start: usize) -> bool {
    let at = |i: usize| strtab.get(i).copied().unwrap_or(0);
    let rest_len = |i: usize| {
        strtab
            .get(i..)
            .map_or(0, |s| s.iter().position(|&b| b == 0).unwrap_or(s.len()))
    };
    let starts = |i: usize, pat: &[u8]| strtab.get(i..).is_some_and(|s| s.starts_with(pat));
    let mut p = start;
    while at(p) != 0 {
        if at(p) == b'$' {
            return false;
        }
        while at(p) == b'.' {
            let mut digit_seen = false;
            if rest_len(p) > 7 && starts(p, b".clone.") {
                p += 6;
            } else if rest_len(p) > 11 && starts(p, b".constprop.") {
                p += 10;
            }
            p += 1;
            loop {
                let c = at(p);
                if c == 0 || (digit_seen && c == b'.') {
                    break;
                }
                if c.is_ascii_digit() {
                    digit_seen = true;
                } else {
                    return false;
                }
                p += 1;
            }
        }
        // When a dotted suffix ended at the NUL, this steps past it into the next string.
        p += 1;
        if p >= strtab.len() {
            break;
        }
    }
    true
}

impl SymbolTable {
    /// Reads the function symbols of `image` (spec/gprof.md §3.1) and finalises the table.
    pub fn from_image(
        image: &Image,
        opts: &SymtabOptions,
        whoami: &str,
    ) -> Result<SymbolTable, GprofError> {
        let elf = parse_elf(&image.data).map_err(|_| {
            GprofError::new(format!(
                "{whoami}: {}: not in executable format\n",
                image.path
            ))
        })?;
        SymbolTable::from_parsed(image, &elf, opts, whoami)
    }

    /// [`SymbolTable::from_image`] with the image already parsed by [`parse_elf`], so that a
    /// caller needing the parse too (the file order, the line information) makes it once.
    pub fn from_parsed(
        image: &Image,
        elf: &Elf<'_>,
        opts: &SymtabOptions,
        whoami: &str,
    ) -> Result<SymbolTable, GprofError> {
        // The raw `.strtab` bytes, for the suffix scan that runs past a name's end.
        let strtab_raw: &[u8] = elf
            .section_headers
            .iter()
            .find(|s| s.sh_type == section_header::SHT_SYMTAB)
            .and_then(|s| elf.section_headers.get(s.sh_link as usize))
            .and_then(|s| {
                let off = usize::try_from(s.sh_offset).ok()?;
                let len = usize::try_from(s.sh_size).ok()?;
                image.data.get(off..off.checked_add(len)?)
            })
            .unwrap_or(&[]);
        let names_raw = goblin_strtab_bytes(elf, &image.data);
        // Most symbols of a program's table are functions: room for all of them at once
        // (bounded by what the file can hold: a symbol takes at least 16 bytes).
        let mut out = Vec::with_capacity(elf.syms.len().min(image.data.len() / 16));
        let machine = elf.header.e_machine;
        // Whether each section is code by its name and flags, decided once per section
        // rather than once per symbol.
        let code: Vec<bool> = elf
            .section_headers
            .iter()
            .map(|sec| {
                let name = elf.shdr_strtab.get_at(sec.sh_name).unwrap_or("");
                section_letter_is_code(name, sec.sh_flags)
            })
            .collect();
        for s in elf.syms.iter().skip(1) {
            let Some(class) = Self::classify(&s, names_raw, strtab_raw, &code, opts) else {
                continue;
            };
            let name = symbol_name(names_raw, strtab_raw, s.st_name);
            out.push(Symbol {
                name: name.into(),
                addr: arch::symbol_value(machine, &s),
                end_addr: 0,
                is_static: class == Class::Static,
                is_func: arch::symbol_type(machine, &s) == sym::STT_FUNC,
                file: None,
                line: 0,
            });
        }
        // BFD's synthetic symbols (PowerPC64 ELFv1 entry points) follow the real ones, classed
        // like them: global and weak ones count, local ones pass the name scan (never, since
        // their names start with `.`).
        let synth = arch::synthetic_symbols(elf, &image.data);
        for s in &synth.syms {
            let local = s.bind == sym::STB_LOCAL;
            if local
                && (opts.no_static
                    || !local_name_passes(&synth.names, s.name_off)
                    || (opts.ignore_non_functions && s.typ != sym::STT_FUNC))
            {
                continue;
            }
            out.push(Symbol {
                name: synth.name(s).into(),
                addr: s.addr,
                end_addr: 0,
                is_static: local,
                is_func: s.typ == sym::STT_FUNC,
                file: None,
                line: 0,
            });
        }
        if out.is_empty() {
            return Err(GprofError::new(format!(
                "{whoami}: file `{}' has no symbols\n",
                image.path
            )));
        }
        Ok(SymbolTable::finalize(out, image.text_end()))
    }

    /// `names`, `strtab`: see [`symbol_name`]; `code`: whether each section (by header
    /// index) is a code section.
    fn classify(
        s: &sym::Sym,
        names: &[u8],
        strtab: &[u8],
        code: &[bool],
        opts: &SymtabOptions,
    ) -> Option<Class> {
        let typ = s.st_type();
        let bind = s.st_bind();
        if typ == sym::STT_FILE || typ == sym::STT_SECTION {
            return None; // BSF_DEBUGGING
        }
        let local = bind == sym::STB_LOCAL;
        if opts.no_static && local {
            return None;
        }
        let shndx = s.st_shndx;
        if shndx == section_header::SHN_UNDEF as usize
            || shndx == section_header::SHN_COMMON as usize
            || shndx >= section_header::SHN_LORESERVE as usize
        {
            return None; // U, w, v, C, a
        }
        if typ == sym::STT_GNU_IFUNC {
            return None; // i
        }
        if bind == sym::STB_WEAK {
            // W keeps, V (object) is rejected.
            return if typ == sym::STT_OBJECT || typ == sym::STT_COMMON {
                None
            } else {
                Some(Class::Global)
            };
        }
        if bind != sym::STB_GLOBAL && !local {
            return None; // u (GNU unique) and anything unknown
        }
        if !*code.get(shndx)? {
            return None;
        }
        if !local {
            return Some(Class::Global);
        }
        let name = symbol_name(names, strtab, s.st_name);
        if name.is_empty() || !local_name_passes(strtab, s.st_name) {
            return None;
        }
        if name.starts_with("__gnu_compiled") || name.starts_with("___gnu_compiled") {
            return None;
        }
        if opts.ignore_non_functions && typ != sym::STT_FUNC {
            return None;
        }
        Some(Class::Static)
    }

    /// `-S file`: symbols from `nm`-style lines `ADDRESS TYPE NAME` (only `t`/`T`; all are
    /// functions, `t` is static). The image still gives `.text`'s end.
    pub fn from_nm_file(
        path: &std::path::Path,
        image: &Image,
        whoami: &str,
    ) -> Result<SymbolTable, GprofError> {
        let text = gmon_binary::open::read_named(path)
            .map_err(|e| GprofError::perror(&path.to_string_lossy(), &e))?;
        let text = String::from_utf8_lossy(&text);
        let mut out = Vec::new();
        let mut words = text.split_whitespace();
        while let (Some(addr), Some(typ), Some(name)) = (words.next(), words.next(), words.next()) {
            let Ok(addr) = u64::from_str_radix(addr.trim_start_matches("0x"), 16) else {
                break;
            };
            if typ != "t" && typ != "T" {
                continue;
            }
            out.push(Symbol {
                name: name.into(),
                addr,
                end_addr: 0,
                is_static: typ == "t",
                is_func: true,
                file: None,
                line: 0,
            });
        }
        if out.is_empty() {
            return Err(GprofError::new(format!(
                "{whoami}: file `{}' has no symbols\n",
                image.path
            )));
        }
        Ok(SymbolTable::finalize(out, image.text_end()))
    }

    /// gprof's `symtab_finalize` for the core table: stable sort by address (functions, then
    /// globals first at equal addresses), keep one symbol per address by gprof's preference
    /// rules, and set every `end_addr` to the next symbol's address − 1 (`text_end` − 1 for the
    /// last one).
    pub fn finalize(syms: Vec<Symbol>, text_end: u64) -> SymbolTable {
        // cmp_addr is a key order (address, then a rank), so sorting small (address, rank,
        // index) keys gives msort's order, the index standing for stability; the symbols are
        // then moved once each, in that order (sorting the symbols themselves moved 56-byte
        // records through every merge: half of reading dense20k's 20,000 symbols).
        let mut keys: Vec<(u64, u8, usize)> = syms
            .iter()
            .enumerate()
            .map(|(i, s)| (s.addr, addr_rank(s), i))
            .collect();
        keys.sort_unstable();
        let mut slots: Vec<Option<Symbol>> = syms.into_iter().map(Some).collect();
        let mut dst: Vec<Symbol> = Vec::with_capacity(slots.len());
        for (_, _, i) in keys {
            let Some(src) = slots.get_mut(i).and_then(Option::take) else {
                continue;
            };
            match dst.last_mut() {
                Some(last) if last.addr == src.addr => {
                    if prefer(&src, last) {
                        *last = src;
                    }
                }
                _ => dst.push(src),
            }
        }
        let n = dst.len();
        for i in 0..n {
            let end = match dst.get(i + 1) {
                Some(next) => next.addr.wrapping_sub(1),
                None => text_end.wrapping_sub(1),
            };
            if let Some(s) = dst.get_mut(i) {
                s.end_addr = end;
            }
        }
        SymbolTable {
            symbols: dst,
            files: Vec::new(),
        }
    }

    /// gprof's `sym_lookup`: the last symbol with `addr <= a`, if `a <= end_addr`.
    pub fn lookup(&self, a: u64) -> Option<SymIdx> {
        lookup_in(&self.symbols, a)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// Extension point for line information: gives every symbol the file and line that `locate`
    /// returns for its address (gprof keeps them only when file, function name and a non-zero
    /// line are all known; `locate` must apply that rule). Files are interned by name.
    pub fn attach_source(&mut self, locate: &mut dyn FnMut(u64) -> Option<(String, u32)>) {
        let mut by_name: HashMap<String, usize, FxBuildHasher> = HashMap::default();
        for (i, f) in self.files.iter().enumerate() {
            by_name.insert(f.name.clone(), i);
        }
        for s in &mut self.symbols {
            if let Some((file, line)) = locate(s.addr) {
                // Nearly every symbol's file is known already: no copy of its name then.
                let id = match by_name.get(&file) {
                    Some(&id) => id,
                    None => {
                        let id = self.files.len();
                        by_name.insert(file.clone(), id);
                        self.files.push(SourceFile { name: file });
                        id
                    }
                };
                s.file = Some(id);
                s.line = line;
            }
        }
    }
}

/// `sym_lookup` over any address-sorted slice of symbols.
pub fn lookup_in(syms: &[Symbol], a: u64) -> Option<SymIdx> {
    let i = syms.partition_point(|s| s.addr <= a).checked_sub(1)?;
    let s = syms.get(i)?;
    (a <= s.end_addr).then_some(i)
}

/// Where [`cmp_addr`] puts a symbol among those at its address: functions first, then
/// globals first (equal ranks compare equal).
fn addr_rank(s: &Symbol) -> u8 {
    (u8::from(!s.is_func) << 1) | u8::from(s.is_static)
}

/// gprof's `cmp_addr`: address, then functions first, then globals first.
pub fn cmp_addr(l: &Symbol, r: &Symbol) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    l.addr
        .cmp(&r.addr)
        .then_with(|| match (l.is_func, r.is_func) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => match (l.is_static, r.is_static) {
                (false, true) => Ordering::Less,
                (true, false) => Ordering::Greater,
                _ => Ordering::Equal,
            },
        })
}

/// `symtab_finalize`'s rule for two symbols at one address: does `src` replace `kept`?
// Written exactly as gprof states the rule, so that it can be checked against it.
#[allow(clippy::nonminimal_bool)]
pub fn prefer(src: &Symbol, kept: &Symbol) -> bool {
    let (s, k) = (src.name.as_bytes(), kept.name.as_bytes());
    let s0 = s.first().copied().unwrap_or(0);
    let k0 = k.first().copied().unwrap_or(0);
    let s1 = s.get(1).copied().unwrap_or(0);
    let k1 = k.get(1).copied().unwrap_or(0);
    (!src.is_static && kept.is_static)
        || (src.is_static == kept.is_static
            && ((src.is_func && !kept.is_func)
                || (src.is_func == kept.is_func
                    && ((s0 != b'_' && k0 == b'_')
                        || (s0 == b'_' && k0 == b'_' && s1 != b'_' && k1 == b'_')))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_scan_overruns_into_next_string() {
        let tab = b"\0aa.constprop.0\0bb\0cc.constprop.0\0dd.x\0foo.part.0\0e$f\0";
        assert!(local_name_passes(tab, 1));
        assert!(!local_name_passes(tab, 19));
        assert!(!local_name_passes(tab, 39));
        assert!(!local_name_passes(tab, 50));
        assert!(local_name_passes(tab, 16));
    }
}
