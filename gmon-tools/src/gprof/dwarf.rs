//! Address → (source file, line, function name), with the answers GNU gprof 2.40 gets from
//! BFD's `bfd_find_nearest_line` on DWARF line information.
//!
//! gprof keeps a location only when BFD returns a file name, a function name and a non-zero
//! line (`get_src_info`); [`LineInfo::locate`] applies that rule. BFD's answers differ from what
//! a correct DWARF consumer (addr2line) gives in ways that show in gprof's output, so the line
//! programs are decoded here with BFD's rules rather than with gimli's row iterator:
//!
//! * File names are `DW_AT_comp_dir` (or the include directory) joined with the name, exactly as
//!   BFD's `concat_filename` builds them: an absolute directory is used alone, a relative one is
//!   put after the compilation directory.
//! * Every line sequence of a DWARF 5 program starts with file **0**, not 1 as the standard
//!   says; GCC 12 relies on the standard value, so code from a header that comes first in a unit
//!   is reported under the unit's primary file (observed: `hinl (a.c:3)` for a function in
//!   `h.h`). DWARF 2-4 sequences start with file 1 (table slot 0).
//! * Rows at one address: only the last of consecutive rows is kept.
//! * Line 0 rows count as "no information" for gprof.
//! * The function is the DWARF subprogram or inlined subroutine with the smallest range around
//!   the address (later DIE wins ties). Its name is used directly when it is a linkage name, or
//!   a `DW_AT_name` in a C-like language; otherwise BFD names the address after the nearest
//!   preceding ELF code symbol, and remembers, per DWARF function, either that symbol's name (if
//!   it starts exactly where the function starts) or the DWARF name for every later lookup. That
//!   memory makes answers depend on the order of lookups, so it is reproduced ([`LineInfo`] is
//!   used through `&mut self`).
//!
//! Everything is read once into plain tables; lookups are binary searches. [`LineInfo::breakpoints`]
//! lists the addresses where an answer can change, so that gprof's byte-by-byte scan of `.text`
//! for `-l` becomes one lookup per distinct region.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use gimli::{AttributeValue, EndianSlice, RunTimeEndian};

use super::die_walk::DieWalk;
use object::{Object, ObjectSection};
use rustc_hash::FxBuildHasher;

/// Interned string id (file names and function names).
pub type StrId = u32;

/// One answer of `get_src_info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file name as BFD builds it (see [`LineInfo::string`]).
    pub file: StrId,
    /// The line (never 0).
    pub line: u32,
    /// The function name BFD reports.
    pub function: StrId,
}

#[derive(Clone, Copy, Debug)]
struct Row {
    addr: u64,
    op_index: u8,
    file: Option<StrId>,
    line: u32,
    end_sequence: bool,
}

#[derive(Debug)]
struct Sequence {
    /// Lowest address (possibly trimmed where sequences overlap, as BFD does).
    low: u64,
    rows: Vec<Row>,
}

impl Sequence {
    fn end(&self) -> u64 {
        self.rows.last().map_or(0, |r| r.addr)
    }
}

#[derive(Debug)]
struct FuncInfo {
    /// Address ranges in BFD's list order (the first one decides the name rule).
    ranges: Vec<(u64, u64)>,
    name: Option<StrId>,
    is_linkage: bool,
    /// Lowest and highest address over all ranges (for the sorted lookup).
    low: u64,
    high: u64,
}

#[derive(Debug, Default)]
struct Unit {
    ranges: Vec<(u64, u64)>,
    sequences: Vec<Sequence>,
    funcs: Vec<FuncInfo>,
    /// Function indices sorted by (low, high, index), and the running maximum of `high`.
    /// The best-fit function as a step function of the address: (start, function) pieces.
    segments: Vec<(u64, Option<usize>)>,
    /// Where the last lookups ended in `segments`, `sequences` and that sequence's rows.
    segment_hint: Cell<usize>,
    sequence_hint: Cell<usize>,
    row_hint: Cell<(usize, usize)>,
}

#[derive(Clone, Debug)]
struct ElfFunc {
    value: u64,
    size: u64,
    name: StrId,
    /// The symbol's value in its own section, which BFD compares with where it means the
    /// code's offset (its cache, and the renaming of a DWARF function that starts there):
    /// for a PowerPC64 descriptor, its place in `.opd`, not its entry.
    cache_value: u64,
}

/// BFD's view of an executable's DWARF line information and code symbols.
#[derive(Debug)]
pub struct LineInfo {
    strings: Strings,
    units: Vec<Unit>,
    /// Which units cover an address, as a step function: from each start address on (until
    /// the next), the units `cover_units[first..first + len]`, in unit order.
    cover: Vec<(u64, u32, u32)>,
    cover_units: Vec<u32>,
    /// Where the last [`LineInfo::find`] ended in `cover` (lookups mostly ascend).
    cover_hint: Cell<usize>,
    /// Units with no address range at all (BFD tries them after the ones that cover).
    rangeless_units: Vec<usize>,
    /// Candidate symbols for `_bfd_elf_find_function`, in symbol-table order.
    elf_funcs: Vec<ElfFunc>,
    /// `elf_funcs` indices sorted by value.
    elf_sorted: Vec<usize>,
    /// `_bfd_elf_find_function`'s one-entry cache: (offset range start, end, symbol).
    elf_cache: Option<(u64, u64, usize)>,
    /// Whether a hit in `elf_cache` always gives what a fresh search would (no code symbol's
    /// extent covers a later symbol's start): then only the name memory makes answers depend
    /// on the order of lookups.
    elf_cache_transparent: bool,
    text_vma: u64,
    /// How many DWARF functions BFD's name memory has settled so far.
    resolved: u64,
}

/// Interned strings: file and function names, each stored once.
#[derive(Debug, Default)]
struct Strings {
    list: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, StrId, FxBuildHasher>,
}

impl Strings {
    fn intern(&mut self, s: &str) -> StrId {
        match self.ids.get(s) {
            Some(&id) => id,
            None => self.add(Arc::from(s)),
        }
    }

    /// [`Strings::intern`] for a string another table holds (shared, not copied).
    fn intern_shared(&mut self, s: &Arc<str>) -> StrId {
        match self.ids.get(s) {
            Some(&id) => id,
            None => self.add(Arc::clone(s)),
        }
    }

    fn add(&mut self, s: Arc<str>) -> StrId {
        let id = StrId::try_from(self.list.len()).unwrap_or(StrId::MAX);
        self.ids.insert(Arc::clone(&s), id);
        self.list.push(s);
        id
    }

    fn get(&self, id: StrId) -> &str {
        self.list.get(id as usize).map_or("", |s| s)
    }
}

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// `.debug_info` size from which units are read on several threads.
const PARALLEL_DEBUG_INFO: usize = 1 << 20;

/// `mangle_style (lang) == 0`: languages whose `DW_AT_name` BFD takes as the linkage name (the
/// numeric ones are UPC, HP Basic91, HP IMacro and HP Assembler, which gimli does not name).
#[allow(non_upper_case_globals)] // gimli names DWARF constants as the standard spells them
fn c_like(lang: Option<gimli::DwLang>) -> bool {
    use gimli::constants::*;
    matches!(
        lang,
        Some(
            DW_LANG_C89
                | DW_LANG_C
                | DW_LANG_Cobol74
                | DW_LANG_Cobol85
                | DW_LANG_Fortran77
                | DW_LANG_Pascal83
                | DW_LANG_PLI
                | DW_LANG_C99
                | DW_LANG_UPC
                | DW_LANG_C11
                | DW_LANG_Mips_Assembler
        )
    ) || lang.is_some_and(|l| matches!(l.0, 0x8765 | 0x8004 | 0x8006 | 0x8007))
}

impl LineInfo {
    /// Reads the DWARF sections and code symbols of an ELF image. An image without
    /// `.debug_info` gives an empty table (every lookup fails, as in gprof without `-g`).
    /// Malformed DWARF is skipped unit by unit, as BFD skips what it cannot read.
    pub fn from_elf(data: &[u8]) -> LineInfo {
        LineInfo::from_elf_with(data, true)
    }

    /// [`LineInfo::from_parsed_elf`] for the executable at `path` (`data`, parsed as `elf`):
    /// its own DWARF, or when it has none, that of its separate debug file (build ID or
    /// `.gnu_debuglink`, see [`super::debuglink`]), with the executable's symbols, as BFD
    /// reads it.
    pub fn for_executable(
        path: &std::path::Path,
        data: &[u8],
        elf: Option<&goblin::elf::Elf<'_>>,
        functions: bool,
    ) -> LineInfo {
        let separate = super::debuglink::separate_debug_data(path, data);
        let mut info =
            LineInfo::from_parsed_elf(separate.as_deref().unwrap_or(data), elf, functions);
        // The code symbols are the executable's, and so are the descriptors they may need.
        if separate.is_some()
            && let Some(elf) = elf
        {
            info.read_elf_symbols(elf, data);
        }
        info
    }

    /// [`LineInfo::from_elf`] for function-level work (no `-l`): without `functions`, the
    /// DWARF functions are not read, which is most of the reading time. The file and line of
    /// an address are then the same; only the function *name* may differ (the nearest ELF
    /// symbol is used), and function-level gprof never looks at it: an address in `.text`
    /// always has a preceding ELF symbol, so the name is never missing.
    pub fn from_elf_with(data: &[u8], functions: bool) -> LineInfo {
        let elf = super::symtab::parse_elf(data).ok();
        LineInfo::from_parsed_elf(data, elf.as_ref(), functions)
    }

    /// [`LineInfo::from_elf_with`] with the ELF file already parsed by goblin (`None` when
    /// it could not be), so that a caller needing it too parses it only once.
    pub fn from_parsed_elf(
        data: &[u8],
        elf: Option<&goblin::elf::Elf<'_>>,
        functions: bool,
    ) -> LineInfo {
        LineInfo::read(data, elf, functions, None)
    }

    /// The reader behind the constructors. `threads`: read units on several threads or not;
    /// `None` decides by the size of the DWARF.
    fn read(
        data: &[u8],
        elf: Option<&goblin::elf::Elf<'_>>,
        functions: bool,
        threads: Option<bool>,
    ) -> LineInfo {
        let mut info = LineInfo {
            strings: Strings::default(),
            units: Vec::new(),
            cover: Vec::new(),
            cover_units: Vec::new(),
            cover_hint: Cell::new(0),
            rangeless_units: Vec::new(),
            elf_funcs: Vec::new(),
            elf_sorted: Vec::new(),
            elf_cache: None,
            elf_cache_transparent: true,
            text_vma: 0,
            resolved: 0,
        };
        let Ok(file) = object::File::parse(data) else {
            return info;
        };
        if let Some(elf) = elf {
            info.read_elf_symbols(elf, data);
        }
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let mut owned: HashMap<&'static str, Cow<'_, [u8]>> = HashMap::new();
        for id in [
            gimli::SectionId::DebugInfo,
            gimli::SectionId::DebugAbbrev,
            gimli::SectionId::DebugLine,
            gimli::SectionId::DebugLineStr,
            gimli::SectionId::DebugStr,
            gimli::SectionId::DebugStrOffsets,
            gimli::SectionId::DebugRanges,
            gimli::SectionId::DebugRngLists,
            gimli::SectionId::DebugAddr,
        ] {
            let bytes = file
                .section_by_name(id.name())
                .and_then(|s| s.uncompressed_data().ok())
                .unwrap_or(Cow::Borrowed(&[]));
            owned.insert(id.name(), bytes);
        }
        let load = |id: gimli::SectionId| -> Result<Reader<'_>, gimli::Error> {
            let bytes: &[u8] = owned.get(id.name()).map_or(&[], |c| c.as_ref());
            Ok(EndianSlice::new(bytes, endian))
        };
        let Ok(dwarf) = gimli::Dwarf::load(load) else {
            return info;
        };
        let mut headers = Vec::new();
        let mut iter = dwarf.units();
        while let Ok(Some(h)) = iter.next() {
            headers.push(h);
        }
        // Threads pay off once there is DWARF to share (objdump's 4.5 MB: about half the time).
        let size = owned
            .get(gimli::SectionId::DebugInfo.name())
            .map_or(0, |c| c.len());
        let parallel = threads.unwrap_or(functions && size >= PARALLEL_DEBUG_INFO);
        let strings = std::mem::take(&mut info.strings);
        let (units, strings) = read_units(&dwarf, &headers, functions, parallel, strings);
        info.strings = strings;
        info.units = units;
        info.index_unit_ranges();
        info
    }

    fn index_unit_ranges(&mut self) {
        // (point, is_end, unit): at one point, ends are applied before starts.
        let mut events: Vec<(u64, bool, u32)> = Vec::new();
        for (ui, u) in self.units.iter().enumerate() {
            if u.ranges.is_empty() {
                self.rangeless_units.push(ui);
            }
            let ui = u32::try_from(ui).unwrap_or(u32::MAX);
            for &(l, h) in &u.ranges {
                if l < h {
                    events.push((l, false, ui));
                    events.push((h, true, ui));
                }
            }
        }
        events.sort_unstable_by_key(|e| (e.0, !e.1));
        // A unit's ranges can overlap each other (BFD keeps them as given): count per unit.
        let mut active: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
        let mut k = 0;
        while let Some(&(point, _, _)) = events.get(k) {
            while let Some(&(p, is_end, ui)) = events.get(k) {
                if p != point {
                    break;
                }
                if is_end {
                    if let Some(c) = active.get_mut(&ui) {
                        *c -= 1;
                        if *c == 0 {
                            active.remove(&ui);
                        }
                    }
                } else {
                    *active.entry(ui).or_insert(0) += 1;
                }
                k += 1;
            }
            let first = u32::try_from(self.cover_units.len()).unwrap_or(u32::MAX);
            self.cover_units.extend(active.keys().copied());
            let len = u32::try_from(active.len()).unwrap_or(u32::MAX);
            self.cover.push((point, first, len));
        }
    }

    /// The text of an interned string.
    pub fn string(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// Whether any DWARF compilation unit was read.
    pub fn has_dwarf(&self) -> bool {
        !self.units.is_empty()
    }

    /// Code symbols of `.text` that `_bfd_elf_find_function` considers (the machine's
    /// `maybe_function_sym`, see [`super::arch::function_symbols`]), in gprof's order.
    /// `data`: the bytes `elf` was parsed from (PowerPC64 descriptors are read there).
    fn read_elf_symbols(&mut self, elf: &goblin::elf::Elf<'_>, data: &[u8]) {
        let Some((text_idx, text)) = elf
            .section_headers
            .iter()
            .enumerate()
            .find(|(_, s)| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
        else {
            return;
        };
        self.text_vma = text.sh_addr;
        self.elf_funcs.clear();
        self.elf_cache = None;
        let synthetic = super::arch::synthetic_symbols(elf, data);
        for f in super::arch::function_symbols(elf, data, text_idx, &synthetic) {
            let name = self.strings.intern(&f.name);
            self.elf_funcs.push(ElfFunc {
                value: f.offset,
                size: f.size,
                name,
                cache_value: f.cache_value,
            });
        }
        let mut order: Vec<usize> = (0..self.elf_funcs.len()).collect();
        order.sort_by_key(|&i| self.elf_funcs.get(i).map_or(0, |f| f.value));
        self.elf_sorted = order;
        self.elf_cache_transparent =
            self.cache_is_transparent() && self.elf_funcs.iter().all(|f| f.cache_value == f.value);
    }

    /// See [`LineInfo::elf_cache_transparent`]: for each symbol value, the symbol a search
    /// picks there must end at or before the next symbol value.
    fn cache_is_transparent(&self) -> bool {
        let mut k = 0;
        while let Some(&first) = self.elf_sorted.get(k) {
            let Some(value) = self.elf_funcs.get(first).map(|f| f.value) else {
                return false;
            };
            let mut size = 0u64;
            while let Some(f) = self.elf_sorted.get(k).and_then(|&i| self.elf_funcs.get(i)) {
                if f.value != value {
                    break;
                }
                size = size.max(f.size);
                k += 1;
            }
            if let Some(next) = self.elf_sorted.get(k).and_then(|&i| self.elf_funcs.get(i))
                && next.value < value.saturating_add(size)
            {
                return false;
            }
        }
        true
    }

    /// `_bfd_elf_find_function` on `.text` at a section offset, with its cache.
    fn elf_find_function(&mut self, offset: u64) -> Option<usize> {
        if let Some((lo, hi, idx)) = self.elf_cache
            && offset >= lo
            && offset < hi
        {
            return Some(idx);
        }
        // The symbol with the greatest value <= offset; at equal values the first (in table
        // order) with the largest size.
        let n = self
            .elf_sorted
            .partition_point(|&i| self.elf_funcs.get(i).is_some_and(|f| f.value <= offset));
        let last = n.checked_sub(1)?;
        let best_value = self.elf_funcs.get(*self.elf_sorted.get(last)?)?.value;
        let mut best: Option<usize> = None;
        let mut best_size = 0u64;
        for &i in self.elf_sorted.get(..n)?.iter().rev() {
            let f = self.elf_funcs.get(i)?;
            if f.value != best_value {
                break;
            }
            // Table order: a later symbol replaces only with a strictly larger size, so among
            // equal sizes the lowest table index wins.
            if best.is_none() || f.size > best_size || (f.size == best_size && Some(i) < best) {
                best = Some(i);
                best_size = f.size;
            }
        }
        // BFD's scan also starts from low_func = 0 with func_size 0: a value-0 symbol qualifies.
        let idx = best?;
        let f = self.elf_funcs.get(idx)?;
        self.elf_cache = Some((f.cache_value, f.cache_value.saturating_add(f.size), idx));
        Some(idx)
    }

    /// `get_src_info(addr)`: BFD's nearest line, kept only with a file, a function and a
    /// non-zero line. Updates BFD's per-function name memory (see the module docs).
    pub fn locate(&mut self, addr: u64) -> Option<Location> {
        self.locate_noting_memory(addr).0
    }

    /// Whether repeating a sequence of lookups gives the same answers as long as no lookup
    /// of the first run changed BFD's name memory ([`LineInfo::locate_noting_memory`]).
    pub fn lookups_replay(&self) -> bool {
        self.elf_cache_transparent
    }

    /// [`LineInfo::locate`], also telling whether this lookup changed BFD's name memory (then
    /// the next address may be named differently although nothing else changes there).
    pub fn locate_noting_memory(&mut self, addr: u64) -> (Option<Location>, bool) {
        let before = self.resolved;
        let loc = self.locate_inner(addr);
        (loc, self.resolved != before)
    }

    fn locate_inner(&mut self, addr: u64) -> Option<Location> {
        let Some((ui, row, func)) = self.find(addr) else {
            // BFD still consults the ELF symbols (and its cache) when no unit answers.
            let _ = self.elf_find_function(addr.wrapping_sub(self.text_vma));
            return None;
        };
        let (file, line) = match row {
            Some((f, l)) => (f, l),
            None => (None, 0),
        };
        let function = self.function_name(ui, func, addr);
        match (file, function) {
            (Some(file), Some(function)) if line != 0 => Some(Location {
                file,
                line,
                function,
            }),
            _ => None,
        }
    }

    /// Finds the unit that answers for `addr`: its row (file, line) and best-fit function.
    #[allow(clippy::type_complexity)]
    fn find(&self, addr: u64) -> Option<(usize, Option<(Option<StrId>, u32)>, Option<usize>)> {
        // Units whose ranges contain the address (in unit order), then units without ranges,
        // as BFD consults its address trie and then its list of range-less units.
        let covering = seek(&self.cover, |c| c.0, addr, &self.cover_hint)
            .and_then(|i| self.cover.get(i))
            .and_then(|&(_, first, len)| {
                self.cover_units
                    .get(first as usize..(first as usize).saturating_add(len as usize))
            })
            .unwrap_or(&[]);
        let candidates = covering
            .iter()
            .map(|&ui| ui as usize)
            .chain(self.rangeless_units.iter().copied());
        for ui in candidates {
            let Some(u) = self.units.get(ui) else {
                continue;
            };
            let func = best_fit(u, addr);
            let row = lookup_row(u, addr);
            if row.is_some() || func.is_some() {
                return Some((ui, row, func));
            }
        }
        None
    }

    /// The name BFD reports for `addr` given the best-fit function of unit `ui`.
    fn function_name(&mut self, ui: usize, func: Option<usize>, addr: u64) -> Option<StrId> {
        if let Some(fi) = func
            && let Some(f) = self.units.get(ui).and_then(|u| u.funcs.get(fi))
            && f.is_linkage
        {
            return f.name;
        }
        let offset = addr.wrapping_sub(self.text_vma);
        let sym = self.elf_find_function(offset);
        let sym_name = sym
            .and_then(|i| self.elf_funcs.get(i))
            .map(|s| (s.name, s.cache_value));
        let text_vma = self.text_vma;
        if let Some(fi) = func
            && let Some(f) = self.units.get_mut(ui).and_then(|u| u.funcs.get_mut(fi))
        {
            let result = match sym_name {
                None => f.name,
                Some((name, value)) => {
                    if f.ranges
                        .first()
                        .is_some_and(|r| value.wrapping_add(text_vma) == r.0)
                    {
                        f.name = Some(name);
                    }
                    Some(name)
                }
            };
            if !f.is_linkage {
                f.is_linkage = true;
                self.resolved += 1;
            }
            return result;
        }
        sym_name.map(|(n, _)| n)
    }

    /// Every address in `[lo, hi)` where [`LineInfo::locate`]'s answer may change, ascending,
    /// starting with `lo`.
    pub fn breakpoints(&self, lo: u64, hi: u64) -> Vec<u64> {
        let mut v = vec![lo];
        let mut add = |a: u64| {
            if a > lo && a < hi {
                v.push(a);
            }
        };
        for u in &self.units {
            for &(l, h) in &u.ranges {
                add(l);
                add(h);
            }
            for s in &u.sequences {
                add(s.low);
                for r in &s.rows {
                    add(r.addr);
                }
            }
            for f in &u.funcs {
                for &(l, h) in &f.ranges {
                    add(l);
                    add(h);
                }
            }
        }
        for f in &self.elf_funcs {
            add(f.value.wrapping_add(self.text_vma));
            add(f.value.wrapping_add(self.text_vma).wrapping_add(f.size));
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Reads compilation units into its own string table, so that units can be read on several
/// threads; [`LineInfo::from_parsed_elf`] merges the tables.
#[derive(Debug, Default)]
struct UnitReader {
    strings: Strings,
    /// Strings by where their bytes are (`.debug_str` and friends): a C++ program names the
    /// same long mangled function in thousands of DIEs, and this skips decoding and hashing
    /// it again each time.
    by_place: HashMap<(usize, usize), StrId, FxBuildHasher>,
    /// The names an abstract origin or specification gives, by its `.debug_info` offset
    /// (every inlined copy of a function refers to the same one).
    origins: HashMap<usize, Vec<NameEvent>, FxBuildHasher>,
}

/// A name found while following `DW_AT_abstract_origin` / `DW_AT_specification`, in the
/// order BFD meets them.
#[derive(Clone, Copy, Debug)]
enum NameEvent {
    /// `DW_AT_name`: used when no name was found before.
    Name(StrId),
    /// `DW_AT_linkage_name` / `DW_AT_MIPS_linkage_name`: always used.
    Linkage(StrId),
}

impl UnitReader {
    /// Interns the string whose bytes are `b` (a slice of a DWARF section).
    fn intern_bytes(&mut self, b: &[u8]) -> StrId {
        let place = (b.as_ptr() as usize, b.len());
        if let Some(&id) = self.by_place.get(&place) {
            return id;
        }
        let id = self.strings.intern(&String::from_utf8_lossy(b));
        self.by_place.insert(place, id);
        id
    }

    fn read_unit(
        &mut self,
        dwarf: &gimli::Dwarf<Reader<'_>>,
        unit: &gimli::Unit<Reader<'_>>,
        headers: &[gimli::UnitHeader<Reader<'_>>],
        functions: bool,
    ) -> Unit {
        let mut u = Unit::default();
        let mut lang = None;
        // The raw entry reader skips the attributes of DIEs that cannot name code (types,
        // variables, parameters: nine in ten DIEs) by their encoded sizes, without decoding
        // them; that was most of the time spent reading DWARF.
        let mut attrs: Vec<gimli::Attribute<Reader<'_>>> = Vec::new();
        let Ok(mut raw) = unit.entries_raw(None) else {
            return u;
        };
        if let Ok(Some(abbrev)) = raw.read_abbreviation() {
            let complete = read_attributes(&mut raw, abbrev, &mut attrs);
            if let Some(AttributeValue::Language(l)) = attrs
                .iter()
                .find(|a| a.name() == gimli::DW_AT_language)
                .map(gimli::Attribute::value)
            {
                lang = Some(l);
            }
            // A range list BFD cannot read makes it drop the whole unit (parse_comp_unit or
            // scan_unit_for_symbols fails): no lines, no functions from it.
            if complete && !die_ranges(dwarf, unit, &attrs, &mut u.ranges) {
                return Unit::default();
            }
            if complete
                && functions
                && !self.read_functions(dwarf, unit, headers, lang, &raw, &mut u)
            {
                return Unit::default();
            }
        }
        u.segments = build_segments(&u.funcs);
        if let Some(program) = &unit.line_program {
            let comp_dir = unit
                .comp_dir
                .map(|d| String::from_utf8_lossy(d.slice()).into_owned());
            self.decode_lines(dwarf, unit, program.header(), comp_dir.as_deref(), &mut u);
        }
        for s in &u.sequences {
            if let Some(first) = s.rows.first() {
                add_range(&mut u.ranges, first.addr, s.end());
            }
        }
        u
    }

    /// BFD's `scan_unit_for_symbols`: every subprogram, inlined subroutine and entry point
    /// below the unit DIE that has an address range, with the name BFD gives it. Stops at the
    /// first DIE that cannot be read, as BFD does. False when BFD would fail on the unit (a
    /// range list it cannot read).
    fn read_functions(
        &mut self,
        dwarf: &gimli::Dwarf<Reader<'_>>,
        unit: &gimli::Unit<Reader<'_>>,
        headers: &[gimli::UnitHeader<Reader<'_>>],
        lang: Option<gimli::DwLang>,
        raw: &gimli::EntriesRaw<'_, '_, Reader<'_>>,
        u: &mut Unit,
    ) -> bool {
        let mut attrs: Vec<gimli::Attribute<Reader<'_>>> = Vec::new();
        let start = unit.header.header_size();
        let Ok(entries) = unit.header.range_from(gimli::UnitOffset(start)..) else {
            return true;
        };
        let endian = gimli::Reader::endian(&entries);
        let mut walk = DieWalk::new(entries.slice(), unit.encoding(), endian);
        walk.resume_at(raw.next_offset().0.saturating_sub(start));
        // Only DIEs that can have an address range: in C++ most subprograms are member
        // declarations without one, and BFD keeps no function without a range.
        let wanted = |a: &gimli::Abbreviation| {
            let tag = a.tag();
            (tag == gimli::DW_TAG_subprogram
                || tag == gimli::DW_TAG_inlined_subroutine
                || tag == gimli::DW_TAG_entry_point)
                && a.attributes()
                    .iter()
                    .any(|s| s.name() == gimli::DW_AT_low_pc || s.name() == gimli::DW_AT_ranges)
        };
        loop {
            let pos = match walk.next_wanted(&unit.abbreviations, wanted) {
                Ok(Some(pos)) => pos,
                Ok(None) | Err(()) => return true,
            };
            let Ok(mut raw) = unit.entries_raw(Some(gimli::UnitOffset(start + pos))) else {
                return true;
            };
            let Ok(Some(abbrev)) = raw.read_abbreviation() else {
                return true;
            };
            if !read_attributes(&mut raw, abbrev, &mut attrs) {
                return true;
            }
            walk.resume_at(raw.next_offset().0.saturating_sub(start));
            let mut f = FuncInfo {
                ranges: Vec::new(),
                name: None,
                is_linkage: false,
                low: 0,
                high: 0,
            };
            // Names cost (C++ names are long); a function without a range is not kept.
            if !die_ranges(dwarf, unit, &attrs, &mut f.ranges) {
                return false;
            }
            if f.ranges.is_empty() {
                continue;
            }
            for attr in &attrs {
                match attr.name() {
                    gimli::DW_AT_abstract_origin | gimli::DW_AT_specification => {
                        self.abstract_name(dwarf, unit, headers, attr.value(), lang, &mut f);
                    }
                    gimli::DW_AT_name => {
                        if f.name.is_none()
                            && let Ok(s) = dwarf.attr_string(unit, attr.value())
                        {
                            f.name = Some(self.intern_bytes(s.slice()));
                            if c_like(lang) {
                                f.is_linkage = true;
                            }
                        }
                    }
                    gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                        if let Ok(s) = dwarf.attr_string(unit, attr.value()) {
                            f.name = Some(self.intern_bytes(s.slice()));
                            f.is_linkage = true;
                        }
                    }
                    _ => {}
                }
            }
            if let Some(&(lo, hi)) = f.ranges.first() {
                f.low = f.ranges.iter().fold(lo, |m, r| m.min(r.0));
                f.high = f.ranges.iter().fold(hi, |m, r| m.max(r.1));
                u.funcs.push(f);
            }
        }
    }

    /// BFD's `find_abstract_instance`: names from the referenced DIE (and its specification).
    #[allow(clippy::too_many_arguments)]
    fn abstract_name(
        &mut self,
        dwarf: &gimli::Dwarf<Reader<'_>>,
        unit: &gimli::Unit<Reader<'_>>,
        headers: &[gimli::UnitHeader<Reader<'_>>],
        value: AttributeValue<Reader<'_>>,
        lang: Option<gimli::DwLang>,
        f: &mut FuncInfo,
    ) {
        let key = match value {
            AttributeValue::UnitRef(o) => unit
                .header
                .offset()
                .as_debug_info_offset()
                .map(|u| u.0.saturating_add(o.0)),
            AttributeValue::DebugInfoRef(o) => Some(o.0),
            _ => None,
        };
        let events = match key.and_then(|k| self.origins.get(&k)) {
            Some(e) => e.clone(),
            None => {
                let mut e = Vec::new();
                self.name_events(dwarf, unit, headers, value, 0, &mut e);
                if let Some(k) = key {
                    self.origins.insert(k, e.clone());
                }
                e
            }
        };
        for ev in events {
            match ev {
                NameEvent::Name(id) => {
                    if f.name.is_none() {
                        f.name = Some(id);
                        if c_like(lang) {
                            f.is_linkage = true;
                        }
                    }
                }
                NameEvent::Linkage(id) => {
                    f.name = Some(id);
                    f.is_linkage = true;
                }
            }
        }
    }

    /// The names of the DIE `value` refers to, following its specification, in order.
    fn name_events(
        &mut self,
        dwarf: &gimli::Dwarf<Reader<'_>>,
        unit: &gimli::Unit<Reader<'_>>,
        headers: &[gimli::UnitHeader<Reader<'_>>],
        value: AttributeValue<Reader<'_>>,
        depth: u32,
        out: &mut Vec<NameEvent>,
    ) {
        if depth > 100 {
            return;
        }
        let other;
        let (target_unit, offset) = match value {
            AttributeValue::UnitRef(o) => (unit, o),
            AttributeValue::DebugInfoRef(o) => {
                let Some(h) = headers.iter().rev().find(|h| {
                    h.offset()
                        .as_debug_info_offset()
                        .is_some_and(|start| start.0 <= o.0)
                }) else {
                    return;
                };
                let Ok(u) = dwarf.unit(*h) else { return };
                let Some(uo) = o.to_unit_offset(h) else {
                    return;
                };
                other = u;
                (&other, uo)
            }
            _ => return,
        };
        let Ok(entry) = target_unit.entry(offset) else {
            return;
        };
        let mut attrs = entry.attrs();
        while let Ok(Some(attr)) = attrs.next() {
            match attr.name() {
                gimli::DW_AT_name => {
                    if let Ok(s) = dwarf.attr_string(target_unit, attr.value()) {
                        out.push(NameEvent::Name(self.intern_bytes(s.slice())));
                    }
                }
                gimli::DW_AT_specification => {
                    self.name_events(dwarf, target_unit, headers, attr.value(), depth + 1, out);
                }
                gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                    if let Ok(s) = dwarf.attr_string(target_unit, attr.value()) {
                        out.push(NameEvent::Linkage(self.intern_bytes(s.slice())));
                    }
                }
                _ => {}
            }
        }
    }

    /// Runs a line program with BFD's `decode_line_info` rules.
    fn decode_lines(
        &mut self,
        dwarf: &gimli::Dwarf<Reader<'_>>,
        unit: &gimli::Unit<Reader<'_>>,
        header: &gimli::LineProgramHeader<Reader<'_>>,
        comp_dir: Option<&str>,
        u: &mut Unit,
    ) {
        let version = header.version();
        let direct = version >= 5;
        let text = |v: AttributeValue<Reader<'_>>| -> Option<String> {
            dwarf
                .attr_string(unit, v)
                .ok()
                .map(|s| String::from_utf8_lossy(s.slice()).into_owned())
        };
        let dirs: Vec<Option<String>> = header
            .include_directories()
            .iter()
            .map(|d| text(*d))
            .collect();
        let mut files: Vec<(Option<String>, u64)> = header
            .file_names()
            .iter()
            .map(|f| (text(f.path_name()), f.directory_index()))
            .collect();
        let mut names: HashMap<u64, Option<StrId>> = HashMap::new();
        let min_len = u64::from(header.minimum_instruction_length());
        let max_ops = u64::from(header.maximum_operations_per_instruction()).max(1);
        let line_range = u64::from(header.line_range());
        let line_base = i64::from(header.line_base());
        let opcode_base = u64::from(header.opcode_base());
        let mut seqs: Vec<Sequence> = Vec::new();
        let mut current: Vec<Row> = Vec::new();
        let mut prog = header.raw_program_buf();
        'outer: loop {
            // A new sequence: registers reset; DWARF 5 starts at file 0, older versions at 1.
            let mut address = 0u64;
            let mut op_index = 0u64;
            let mut line: u32 = 1;
            let initial = if files.is_empty() {
                None
            } else if direct {
                Some(0)
            } else {
                Some(1)
            };
            let mut file: Option<StrId> = match initial {
                Some(i) => self.file_name(&mut names, &files, &dirs, comp_dir, direct, i),
                None => None,
            };
            // GCC's rows take about three bytes of program each: room for them up front
            // saves a dozen regrowths of a unit's long sequence (trimmed when it ends).
            current.reserve(prog.len() / 3);
            loop {
                let insn = match next_step(&mut prog, header) {
                    Ok(Some(i)) => i,
                    _ => break 'outer,
                };
                use Step as L;
                match insn {
                    L::Special(op) => {
                        if line_range == 0 {
                            break 'outer;
                        }
                        let adj = u64::from(op).saturating_sub(opcode_base);
                        let adv = adj / line_range;
                        if max_ops == 1 {
                            address = address.wrapping_add(adv.wrapping_mul(min_len));
                        } else {
                            address = address.wrapping_add(
                                (op_index.wrapping_add(adv) / max_ops).wrapping_mul(min_len),
                            );
                            op_index = op_index.wrapping_add(adv) % max_ops;
                        }
                        let delta = line_base + i64::try_from(adj % line_range).unwrap_or(0);
                        line = i64::from(line).wrapping_add(delta) as u32;
                        push_row(&mut current, row(address, op_index, line, false, file));
                    }
                    L::Copy => push_row(&mut current, row(address, op_index, line, false, file)),
                    L::AdvancePc(n) => {
                        if max_ops == 1 {
                            address = address.wrapping_add(min_len.wrapping_mul(n));
                        } else {
                            address = (op_index.wrapping_add(n) / max_ops).wrapping_mul(min_len);
                            op_index = op_index.wrapping_add(n) % max_ops;
                        }
                    }
                    L::AdvanceLine(d) => line = i64::from(line).wrapping_add(d) as u32,
                    L::SetFile(n) => {
                        file = self.file_name(&mut names, &files, &dirs, comp_dir, direct, n);
                    }
                    L::ConstAddPc => {
                        if line_range == 0 {
                            break 'outer;
                        }
                        let adv = (255 - opcode_base.min(255)) / line_range;
                        if max_ops == 1 {
                            address = address.wrapping_add(min_len.wrapping_mul(adv));
                        } else {
                            address = address.wrapping_add(
                                min_len.wrapping_mul(op_index.wrapping_add(adv) / max_ops),
                            );
                            op_index = op_index.wrapping_add(adv) % max_ops;
                        }
                    }
                    L::FixedAddPc(n) => {
                        address = address.wrapping_add(u64::from(n));
                        op_index = 0;
                    }
                    L::EndSequence => {
                        push_row(&mut current, row(address, op_index, line, true, file));
                        let rows = std::mem::take(&mut current);
                        if let Some(seq) = finish_sequence(rows) {
                            seqs.push(seq);
                        }
                        continue 'outer;
                    }
                    L::SetAddress(a) => {
                        address = a;
                        op_index = 0;
                    }
                    L::DefineFile(path, dir) => {
                        files.push((text(AttributeValue::String(path)), dir));
                    }
                    L::Other => {}
                }
            }
        }
        // BFD: sequences sorted by low address, larger ranges first, then later sequences first;
        // nested ones dropped and overlapping ones trimmed.
        let n = seqs.len();
        let mut order: Vec<usize> = (0..n).collect();
        let keys: Vec<(u64, u64)> = seqs.iter().map(|s| (s.low, s.end())).collect();
        order.sort_by(|&a, &b| {
            let (ka, kb) = (keys.get(a), keys.get(b));
            let low = |k: Option<&(u64, u64)>| k.map_or(0, |k| k.0);
            let end = |k: Option<&(u64, u64)>| k.map_or(0, |k| k.1);
            low(ka)
                .cmp(&low(kb))
                .then(end(kb).cmp(&end(ka)))
                .then(b.cmp(&a))
        });
        let mut slots: Vec<Option<Sequence>> = seqs.into_iter().map(Some).collect();
        let mut last_high: Option<u64> = None;
        for i in order {
            let Some(mut s) = slots.get_mut(i).and_then(Option::take) else {
                continue;
            };
            if let Some(h) = last_high
                && s.low < h
            {
                if s.end() <= h {
                    continue;
                }
                s.low = h;
            }
            last_high = Some(s.end());
            u.sequences.push(s);
        }
    }

    /// BFD's `concat_filename` for file number `n`, interned (memoised per program).
    fn file_name(
        &mut self,
        memo: &mut HashMap<u64, Option<StrId>>,
        files: &[(Option<String>, u64)],
        dirs: &[Option<String>],
        comp_dir: Option<&str>,
        direct: bool,
        n: u64,
    ) -> Option<StrId> {
        if let Some(&id) = memo.get(&n) {
            return id;
        }
        let name = concat_filename(files, dirs, comp_dir, direct, n);
        let id = Some(self.strings.intern(&name));
        memo.insert(n, id);
        id
    }
}

/// Reads the units of `headers` into `strings`, in unit order; with `parallel`, a second thread
/// reads about half of the DWARF (by unit size) into a table of its own, merged afterwards.
fn read_units(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    headers: &[gimli::UnitHeader<Reader<'_>>],
    functions: bool,
    parallel: bool,
    strings: Strings,
) -> (Vec<Unit>, Strings) {
    // One reader for many units: its caches (strings by place, names by origin) are shared.
    let read = |indices: &[usize], strings: Strings| -> (Vec<(usize, Unit)>, Strings) {
        let mut r = UnitReader {
            strings,
            ..UnitReader::default()
        };
        let mut out = Vec::with_capacity(indices.len());
        for &i in indices {
            if let Some(unit) = headers.get(i).and_then(|h| dwarf.unit(*h).ok()) {
                out.push((i, r.read_unit(dwarf, &unit, headers, functions)));
            }
        }
        (out, r.strings)
    };
    let all: Vec<usize> = (0..headers.len()).collect();
    if !parallel || headers.len() < 2 {
        let (units, strings) = read(&all, strings);
        return (units.into_iter().map(|(_, u)| u).collect(), strings);
    }
    // Largest units first, each to the lighter share.
    let mut by_size = all;
    by_size.sort_by_key(|&i| {
        std::cmp::Reverse(headers.get(i).map_or(0, |h| h.length_including_self()))
    });
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    let (mut my_load, mut their_load) = (0usize, 0usize);
    for i in by_size {
        let size = headers.get(i).map_or(0, |h| h.length_including_self());
        if my_load <= their_load {
            mine.push(i);
            my_load += size;
        } else {
            theirs.push(i);
            their_load += size;
        }
    }
    mine.sort_unstable();
    theirs.sort_unstable();
    let ((mut units, mut strings), other) = std::thread::scope(|scope| {
        let helper = scope.spawn(|| read(&theirs, Strings::default()));
        let here = read(&mine, strings);
        (here, helper.join())
    });
    match other {
        Ok((their_units, their_strings)) => {
            let map: Vec<StrId> = their_strings
                .list
                .iter()
                .map(|s| strings.intern_shared(s))
                .collect();
            for (i, mut u) in their_units {
                remap_strings(&mut u, &map);
                units.push((i, u));
            }
        }
        // The helper cannot panic on input (every lookup is checked); should it ever, read its
        // share here rather than lose it.
        Err(_) => {
            let (again, s) = read(&theirs, strings);
            strings = s;
            units.extend(again);
        }
    }
    units.sort_unstable_by_key(|(i, _)| *i);
    (units.into_iter().map(|(_, u)| u).collect(), strings)
}

/// Gives `u`'s string ids the values `map` assigns them (a unit's table → the merged one).
fn remap_strings(u: &mut Unit, map: &[StrId]) {
    let id = |s: StrId| map.get(s as usize).copied().unwrap_or(StrId::MAX);
    for seq in &mut u.sequences {
        for r in &mut seq.rows {
            r.file = r.file.map(id);
        }
    }
    for f in &mut u.funcs {
        f.name = f.name.map(id);
    }
}

/// One line-program instruction, as far as the decoder needs it (the others are `Other`).
/// Decoding them here rather than through `gimli::LineInstructions` avoids building gimli's
/// large instruction value per step, which was a quarter of a function-level run's time.
enum Step<'a> {
    Special(u8),
    Copy,
    AdvancePc(u64),
    AdvanceLine(i64),
    SetFile(u64),
    ConstAddPc,
    FixedAddPc(u16),
    EndSequence,
    SetAddress(u64),
    DefineFile(Reader<'a>, u64),
    Other,
}

/// The next instruction of `prog`, read with gimli's rules (`LineInstruction::parse`):
/// `None` at the end, an error for a truncated instruction (the caller stops there).
fn next_step<'a>(
    prog: &mut Reader<'a>,
    header: &gimli::LineProgramHeader<Reader<'a>>,
) -> Result<Option<Step<'a>>, gimli::Error> {
    use gimli::Reader as _;
    if prog.is_empty() {
        return Ok(None);
    }
    let opcode = prog.read_u8()?;
    if opcode == 0 {
        let length = prog
            .read_uleb128()
            .and_then(<usize as gimli::ReaderOffset>::from_u64)?;
        let mut rest = prog.split(length)?;
        let sub = rest.read_u8()?;
        return Ok(Some(match gimli::DwLne(sub) {
            gimli::DW_LNE_end_sequence => Step::EndSequence,
            gimli::DW_LNE_set_address => {
                Step::SetAddress(rest.read_address(header.address_size())?)
            }
            gimli::DW_LNE_define_file if header.version() <= 4 => {
                let path = rest.read_null_terminated_slice()?;
                let dir = rest.read_uleb128()?;
                // Modification time and length: read only to fail on truncation, as gimli.
                rest.read_uleb128()?;
                rest.read_uleb128()?;
                Step::DefineFile(path, dir)
            }
            gimli::DW_LNE_set_discriminator => {
                rest.read_uleb128()?;
                Step::Other
            }
            _ => Step::Other,
        }));
    }
    if opcode >= header.opcode_base() {
        return Ok(Some(Step::Special(opcode)));
    }
    Ok(Some(match gimli::DwLns(opcode) {
        gimli::DW_LNS_copy => Step::Copy,
        gimli::DW_LNS_advance_pc => Step::AdvancePc(prog.read_uleb128()?),
        gimli::DW_LNS_advance_line => Step::AdvanceLine(prog.read_sleb128()?),
        gimli::DW_LNS_set_file => Step::SetFile(prog.read_uleb128()?),
        gimli::DW_LNS_set_column | gimli::DW_LNS_set_isa => {
            prog.read_uleb128()?;
            Step::Other
        }
        gimli::DW_LNS_const_add_pc => Step::ConstAddPc,
        gimli::DW_LNS_fixed_advance_pc => Step::FixedAddPc(prog.read_u16()?),
        gimli::DW_LNS_negate_stmt
        | gimli::DW_LNS_set_basic_block
        | gimli::DW_LNS_set_prologue_end
        | gimli::DW_LNS_set_epilogue_begin => Step::Other,
        _ => {
            // An opcode this reader does not know: skip its arguments, whose count the
            // header's standard_opcode_lengths gives.
            let mut lengths = *header.standard_opcode_lengths();
            lengths.skip(usize::from(opcode.saturating_sub(1)))?;
            for _ in 0..lengths.read_u8()? {
                prog.read_uleb128()?;
            }
            Step::Other
        }
    }))
}

/// `concat_filename` without interning.
fn concat_filename(
    files: &[(Option<String>, u64)],
    dirs: &[Option<String>],
    comp_dir: Option<&str>,
    direct: bool,
    n: u64,
) -> String {
    let idx = if direct {
        n
    } else {
        if n == 0 {
            return "<unknown>".to_string();
        }
        n - 1
    };
    let Some((Some(name), dir)) = usize::try_from(idx).ok().and_then(|i| files.get(i)) else {
        return "<unknown>".to_string();
    };
    if name.starts_with('/') {
        return name.clone();
    }
    let dir = if direct {
        Some(*dir)
    } else {
        dir.checked_sub(1)
    };
    let subdir = dir
        .and_then(|d| usize::try_from(d).ok())
        .and_then(|d| dirs.get(d))
        .and_then(|d| d.as_deref());
    let mut dir_name = None;
    let mut sub = subdir;
    if sub.is_none_or(|s| !s.starts_with('/')) {
        dir_name = comp_dir;
    }
    if dir_name.is_none() {
        dir_name = sub;
        sub = None;
    }
    match (dir_name, sub) {
        (None, _) => name.clone(),
        (Some(d), Some(s)) => format!("{d}/{s}/{name}"),
        (Some(d), None) => format!("{d}/{name}"),
    }
}

/// Reads every attribute of the entry whose abbreviation was just read into `attrs`; false
/// when one cannot be read (the rest of the unit is then unreadable too).
fn read_attributes<'a>(
    raw: &mut gimli::EntriesRaw<'_, '_, Reader<'a>>,
    abbrev: &gimli::Abbreviation,
    attrs: &mut Vec<gimli::Attribute<Reader<'a>>>,
) -> bool {
    attrs.clear();
    for spec in abbrev.attributes() {
        match raw.read_attribute(*spec) {
            Ok(a) => attrs.push(a),
            Err(_) => return false,
        }
    }
    true
}

/// The address ranges of an entry from its `DW_AT_low_pc`, `DW_AT_high_pc` (an address or a
/// length) and `DW_AT_ranges`, added to `out` with [`add_range`]. Same rules as gimli's
/// `Dwarf::die_ranges`: a range list wins as soon as it is met, and an address attribute of
/// an unexpected form makes the entry rangeless. False when BFD 2.40 fails on the range list:
/// it does not read the DWARF 5 entries that index `.debug_addr` (split DWARF skeletons use
/// them).
fn die_ranges(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    attrs: &[gimli::Attribute<Reader<'_>>],
    out: &mut Vec<(u64, u64)>,
) -> bool {
    let (mut low, mut high, mut size) = (None, None, None);
    for attr in attrs {
        match attr.name() {
            gimli::DW_AT_low_pc => match dwarf.attr_address(unit, attr.value()) {
                Ok(Some(a)) => low = Some(a),
                _ => return true,
            },
            gimli::DW_AT_high_pc => match attr.value() {
                AttributeValue::Udata(n) => size = Some(n),
                v => match dwarf.attr_address(unit, v) {
                    Ok(Some(a)) => high = Some(a),
                    _ => return true,
                },
            },
            // BFD 2.40 reads DW_FORM_rnglistx (clang's DWARF 5) but does not take it for an
            // offset it knows (`is_int_form` leaves it out): such an entry has no range there.
            gimli::DW_AT_ranges
                if matches!(attr.value(), AttributeValue::DebugRngListsIndex(_)) => {}
            gimli::DW_AT_ranges => match dwarf.attr_ranges_offset(unit, attr.value()) {
                Ok(Some(offset)) => {
                    if unit.header.version() >= 5 && indexes_debug_addr(dwarf, unit, offset) {
                        return false;
                    }
                    if let Ok(mut list) = dwarf.ranges(unit, offset) {
                        while let Ok(Some(r)) = list.next() {
                            add_range(out, r.begin, r.end);
                        }
                    }
                    return true;
                }
                Ok(None) => {}
                Err(_) => return true,
            },
            _ => {}
        }
    }
    if let Some(begin) = low
        && let Some(end) = size.map(|n| begin.wrapping_add(n)).or(high)
    {
        add_range(out, begin, end);
    }
    true
}

/// Whether the range list at `offset` has an entry that takes its address from `.debug_addr`
/// (`DW_RLE_base_addressx`, `DW_RLE_startx_endx`, `DW_RLE_startx_length`).
fn indexes_debug_addr(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    offset: gimli::RangeListsOffset,
) -> bool {
    let Ok(mut raw) = dwarf.raw_ranges(unit, offset) else {
        return false;
    };
    while let Ok(Some(e)) = raw.next() {
        if matches!(
            e,
            gimli::RawRngListEntry::BaseAddressx { .. }
                | gimli::RawRngListEntry::StartxEndx { .. }
                | gimli::RawRngListEntry::StartxLength { .. }
        ) {
            return true;
        }
    }
    false
}

/// `arange_add`: ignores empty ranges and extends an adjacent one.
fn add_range(ranges: &mut Vec<(u64, u64)>, lo: u64, hi: u64) {
    if lo == hi {
        return;
    }
    for r in ranges.iter_mut() {
        if lo == r.1 {
            r.1 = hi;
            return;
        }
        if hi == r.0 {
            r.0 = lo;
            return;
        }
    }
    ranges.push((lo, hi));
}

fn row(addr: u64, op_index: u64, line: u32, end_sequence: bool, file: Option<StrId>) -> Row {
    Row {
        addr,
        op_index: u8::try_from(op_index).unwrap_or(u8::MAX),
        file,
        line,
        end_sequence,
    }
}

/// `add_line_info` for the usual in-order case: consecutive rows at one address (same
/// `op_index` and end flag) keep only the last.
fn push_row(rows: &mut Vec<Row>, row: Row) {
    if let Some(last) = rows.last_mut()
        && last.addr == row.addr
        && last.op_index == row.op_index
        && last.end_sequence == row.end_sequence
    {
        *last = row;
        return;
    }
    rows.push(row);
}

fn finish_sequence(mut rows: Vec<Row>) -> Option<Sequence> {
    let sorted = rows
        .windows(2)
        .all(|w| (w[0].addr, w[0].op_index) <= (w[1].addr, w[1].op_index));
    if !sorted {
        // Out-of-order rows (not produced by GCC): keep them address-sorted.
        rows.sort_by_key(|r| (r.addr, r.op_index));
    }
    let low = rows.first()?.addr;
    rows.shrink_to_fit();
    Some(Sequence { low, rows })
}

fn lookup_row(u: &Unit, addr: u64) -> Option<(Option<StrId>, u32)> {
    let si = seek(&u.sequences, |s| s.low, addr, &u.sequence_hint)?;
    let s = u.sequences.get(si)?;
    if addr < s.low || addr >= s.end() {
        return None;
    }
    // The row hint belongs to one sequence.
    let (hint_seq, hint_row) = u.row_hint.get();
    let row_hint = Cell::new(if hint_seq == si { hint_row } else { 0 });
    let found = seek(&s.rows, |r| r.addr, addr, &row_hint);
    u.row_hint.set((si, row_hint.get()));
    let i = found?;
    let r = s.rows.get(i)?;
    let next = s.rows.get(i + 1)?;
    if addr >= r.addr && addr < next.addr && !r.end_sequence {
        Some((r.file, r.line))
    } else {
        None
    }
}

/// `lookup_address_in_function_table`: the smallest range containing `addr`; at equal sizes the
/// function read later wins. Precomputed by [`build_segments`].
fn best_fit(u: &Unit, addr: u64) -> Option<usize> {
    let i = seek(&u.segments, |s| s.0, addr, &u.segment_hint)?;
    u.segments.get(i)?.1
}

/// The last element of `v` (sorted by `key`) whose key is at most `addr`. `hint` is where the
/// previous search ended; lookups mostly ascend, so the search gallops forward from there
/// (a scan of `.text` then costs amortised constant time per lookup) and falls back to a
/// binary search below it.
fn seek<T>(v: &[T], key: impl Fn(&T) -> u64, addr: u64, hint: &Cell<usize>) -> Option<usize> {
    let n = v.len();
    let mut lo = hint.get().min(n);
    let p = if lo > 0 && v.get(lo - 1).is_some_and(|x| key(x) > addr) {
        v.get(..lo)?.partition_point(|x| key(x) <= addr)
    } else {
        // Everything before `lo` is <= addr; probe lo, lo+1, lo+3, lo+7, ...
        let mut step = 1usize;
        loop {
            let probe = lo.saturating_add(step - 1);
            if probe >= n || v.get(probe).is_none_or(|x| key(x) > addr) {
                let hi = probe.min(n);
                break lo + v.get(lo..hi)?.partition_point(|x| key(x) <= addr);
            }
            lo = probe + 1;
            step = step.saturating_mul(2);
        }
    };
    hint.set(p);
    p.checked_sub(1)
}

/// Sweeps every function range once: between two consecutive range ends the best fit (shortest
/// range, then the later function) is constant.
fn build_segments(funcs: &[FuncInfo]) -> Vec<(u64, Option<usize>)> {
    use std::cmp::Reverse;
    use std::collections::BTreeSet;
    // (point, is_start, key); keys (length, later function first, range) are unique per range.
    type Key = (u64, Reverse<usize>, usize);
    let mut events: Vec<(u64, bool, Key)> = Vec::new();
    for (fi, f) in funcs.iter().enumerate() {
        for (ri, &(l, h)) in f.ranges.iter().enumerate() {
            if l < h {
                let key = (h - l, Reverse(fi), ri);
                events.push((l, true, key));
                events.push((h, false, key));
            }
        }
    }
    events.sort_unstable_by_key(|e| e.0);
    let mut active: BTreeSet<Key> = BTreeSet::new();
    let mut out: Vec<(u64, Option<usize>)> = Vec::new();
    let mut k = 0;
    while let Some(&(point, _, _)) = events.get(k) {
        while let Some(&(p, start, key)) = events.get(k) {
            if p != point {
                break;
            }
            if start {
                active.insert(key);
            } else {
                active.remove(&key);
            }
            k += 1;
        }
        let best = active.first().map(|key| key.1.0);
        if out.last().is_none_or(|l| l.1 != best) {
            out.push((point, best));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Units read on several threads (string tables merged afterwards) answer every lookup as
    /// units read one after the other.
    #[test]
    fn threads_do_not_change_answers() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/cases/multifile-pie-O2/prog"
        );
        let Ok(data) = std::fs::read(path) else {
            panic!("{path} is part of the repository");
        };
        let elf = crate::gprof::symtab::parse_elf(&data).ok();
        let mut one = LineInfo::read(&data, elf.as_ref(), true, Some(false));
        let mut many = LineInfo::read(&data, elf.as_ref(), true, Some(true));
        assert!(one.units.len() > 1);
        let text = elf
            .as_ref()
            .and_then(|e| {
                e.section_headers
                    .iter()
                    .find(|s| e.shdr_strtab.get_at(s.sh_name) == Some(".text"))
            })
            .map(|s| (s.sh_addr, s.sh_addr + s.sh_size))
            .unwrap_or((0, 0));
        let points = one.breakpoints(text.0, text.1);
        assert_eq!(points, many.breakpoints(text.0, text.1));
        let mut located = 0;
        for &a in &points {
            let (x, y) = (one.locate(a), many.locate(a));
            let show = |info: &LineInfo, l: Option<Location>| {
                l.map(|l| {
                    (
                        info.string(l.file).to_string(),
                        l.line,
                        info.string(l.function).to_string(),
                    )
                })
            };
            assert_eq!(show(&one, x), show(&many, y), "at {a:#x}");
            located += usize::from(x.is_some());
        }
        assert!(located > 10, "only {located} addresses located");
    }

    #[test]
    fn concat_filename_follows_bfd() {
        let files = vec![
            (Some("a.c".to_string()), 0),
            (Some("h.h".to_string()), 1),
            (Some("/abs/x.c".to_string()), 0),
        ];
        let dirs = vec![Some("/comp".to_string()), Some("inc".to_string())];
        // DWARF 5: direct indices; dir 0 is absolute and used alone.
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 0),
            "/comp/a.c"
        );
        // A relative include dir goes after the compilation directory.
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 1),
            "/cd/inc/h.h"
        );
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 2),
            "/abs/x.c"
        );
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 7),
            "<unknown>"
        );
        // DWARF 4: 1-based files, dir 0 = no subdirectory.
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), false, 1),
            "/cd/a.c"
        );
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), false, 0),
            "<unknown>"
        );
        assert_eq!(concat_filename(&files, &dirs, None, false, 1), "a.c");
    }

    #[test]
    fn rows_at_one_address_keep_the_last() {
        let mut rows = Vec::new();
        for line in [7, 2, 3] {
            push_row(
                &mut rows,
                Row {
                    addr: 0x10,
                    op_index: 0,
                    file: Some(0),
                    line,
                    end_sequence: false,
                },
            );
        }
        push_row(
            &mut rows,
            Row {
                addr: 0x14,
                op_index: 0,
                file: Some(0),
                line: 9,
                end_sequence: true,
            },
        );
        let seq = finish_sequence(rows).unwrap_or(Sequence {
            low: 1,
            rows: Vec::new(),
        });
        let u = Unit {
            sequences: vec![seq],
            ..Unit::default()
        };
        assert_eq!(lookup_row(&u, 0x10), Some((Some(0), 3)));
        assert_eq!(lookup_row(&u, 0x13), Some((Some(0), 3)));
        assert_eq!(lookup_row(&u, 0x14), None);
        assert_eq!(lookup_row(&u, 0xf), None);
    }

    #[test]
    fn best_fit_prefers_the_smallest_range() {
        let f = |lo, hi| FuncInfo {
            ranges: vec![(lo, hi)],
            name: None,
            is_linkage: true,
            low: lo,
            high: hi,
        };
        let mut u = Unit {
            funcs: vec![
                f(0x100, 0x200),
                f(0x140, 0x150),
                f(0x300, 0x310),
                f(0x140, 0x150),
            ],
            ..Unit::default()
        };
        u.segments = build_segments(&u.funcs);
        // Equal ranges: the later function wins.
        assert_eq!(best_fit(&u, 0x145), Some(3));
        u.funcs.pop();
        u.segments = build_segments(&u.funcs);
        assert_eq!(best_fit(&u, 0x120), Some(0));
        assert_eq!(best_fit(&u, 0x145), Some(1));
        assert_eq!(best_fit(&u, 0x250), None);
        assert_eq!(best_fit(&u, 0x305), Some(2));
        assert_eq!(best_fit(&u, 0x400), None);
    }
}
