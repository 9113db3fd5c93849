//! [`LineInfo`]: BFD's view of an executable's line information, and its answer for an
//! address (see the module docs of [`super`] for the rules reproduced).

use super::sections::Sections;
use super::strings::{StrId, Strings};
use super::symbols::ElfSymbols;
use super::units::{PARALLEL_DEBUG_INFO, Units, read_units};

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

/// What [`LineInfo::for_executable_when`] learns once its caller knows.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Read the DWARF functions (`-l`: their names are reported); without them, the file
    /// and line of an address are the same, only BFD's function name may differ.
    pub functions: bool,
    /// When only the answers at these addresses will be asked for, and in any order (no
    /// `functions`), the line tables keep just those answers, which makes reading several
    /// times faster. Whether that was done is [`LineInfo::wanted`]: not when the answers
    /// could depend on the order of lookups (ELF symbols that make BFD's one-entry cache
    /// answer differently from a fresh search).
    pub want: Option<Vec<u64>>,
}

/// BFD's view of an executable's DWARF line information and code symbols.
#[derive(Debug)]
pub struct LineInfo {
    strings: Strings,
    units: Units,
    /// Candidate symbols for `_bfd_elf_find_function`.
    symbols: ElfSymbols,
    /// How many DWARF functions BFD's name memory has settled so far.
    resolved: u64,
    /// The only addresses [`LineInfo::locate`] answers for, when it was read for them alone
    /// (see [`Request::want`]); ascending.
    wanted: Option<Vec<u64>>,
    /// Why DWARF sections that are there could not be read (see
    /// [`LineInfo::unreadable_sections`]).
    unreadable: Vec<String>,
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
    /// `.gnu_debuglink`, see [`crate::debuglink`]), with the executable's symbols, as BFD
    /// reads it.
    pub fn for_executable(
        path: &std::path::Path,
        data: &[u8],
        elf: Option<&goblin::elf::Elf<'_>>,
        functions: bool,
    ) -> LineInfo {
        LineInfo::for_executable_when(path, data, elf, || {
            Some(Request {
                functions,
                want: None,
            })
        })
    }

    /// [`LineInfo::for_executable`] started before the caller knows what it will ask: the
    /// debug file, its sections, unit headers and the ELF code symbols are read first, then
    /// `request` is called (it may wait for the caller, e.g. on a channel) and the rest is
    /// read as it says. `request` giving `None` (the caller stopped) gives an empty table.
    pub fn for_executable_when(
        path: &std::path::Path,
        data: &[u8],
        elf: Option<&goblin::elf::Elf<'_>>,
        request: impl FnOnce() -> Option<Request>,
    ) -> LineInfo {
        let separate = crate::debuglink::separate_debug_data(path, data);
        // The code symbols are the executable's, and so are the descriptors they may need.
        let symbols = elf.map(|e| (e, data));
        let (dwarf_path, dwarf_data) = match &separate {
            Some((p, bytes)) => (p.as_path(), bytes.as_slice()),
            None => (path, data),
        };
        let mut info = LineInfo::read_when(dwarf_data, symbols, None, request);
        for m in &mut info.unreadable {
            *m = format!("{}: {m}", dwarf_path.display());
        }
        info
    }

    /// One message per DWARF section that is in the file but could not be read, and was
    /// read as absent: a compressed section that records more bytes than it may inflate to, or
    /// whose data is damaged (spec/inputs.md §3). Named by file when the table was read by
    /// [`LineInfo::for_executable`] or [`LineInfo::for_executable_when`].
    pub fn unreadable_sections(&self) -> &[String] {
        &self.unreadable
    }

    /// [`LineInfo::from_elf`] for function-level work (no `-l`): without `functions`, the
    /// DWARF functions are not read, which is most of the reading time. The file and line of
    /// an address are then the same; only the function *name* may differ (the nearest ELF
    /// symbol is used), and function-level gprof never looks at it: an address in `.text`
    /// always has a preceding ELF symbol, so the name is never missing.
    pub fn from_elf_with(data: &[u8], functions: bool) -> LineInfo {
        let elf = crate::parse_elf(data).ok();
        LineInfo::from_parsed_elf(data, elf.as_ref(), functions)
    }

    /// [`LineInfo::from_elf_with`] with the ELF file already parsed by goblin (`None` when
    /// it could not be), so that a caller needing it too parses it only once.
    pub fn from_parsed_elf(
        data: &[u8],
        elf: Option<&goblin::elf::Elf<'_>>,
        functions: bool,
    ) -> LineInfo {
        LineInfo::read(data, elf.map(|e| (e, data)), functions, None, None)
    }

    /// The reader behind the constructors: the DWARF of the ELF file `dwarf_data`, and the
    /// code symbols of `symbols` (goblin's parse and the bytes it was parsed from; the same
    /// file unless the DWARF is in a separate debug file). `want`: see [`Request::want`].
    /// `threads`: read units on several threads or not; `None` decides by the size of the
    /// DWARF.
    fn read(
        dwarf_data: &[u8],
        symbols: Option<(&goblin::elf::Elf<'_>, &[u8])>,
        functions: bool,
        want: Option<Vec<u64>>,
        threads: Option<bool>,
    ) -> LineInfo {
        LineInfo::read_when(dwarf_data, symbols, threads, || {
            Some(Request { functions, want })
        })
    }

    /// [`LineInfo::read`] with the request known after the sections, unit headers and code
    /// symbols were read (see [`LineInfo::for_executable_when`]).
    fn read_when(
        dwarf_data: &[u8],
        symbols: Option<(&goblin::elf::Elf<'_>, &[u8])>,
        threads: Option<bool>,
        request: impl FnOnce() -> Option<Request>,
    ) -> LineInfo {
        let mut info = LineInfo {
            strings: Strings::default(),
            units: Units::default(),
            symbols: ElfSymbols::default(),
            resolved: 0,
            wanted: None,
            unreadable: Vec::new(),
        };
        // What does not depend on the request, read while the caller works out the request.
        let synthetic = symbols.map(|(elf, data)| crate::arch::synthetic_symbols(elf, data));
        let collected = match (symbols, &synthetic) {
            (Some((elf, data)), Some(synthetic)) => Some(ElfSymbols::collect(elf, data, synthetic)),
            _ => None,
        };
        let sections = Sections::read(dwarf_data);
        if let Some(s) = &sections {
            info.unreadable.clone_from(&s.unreadable);
        }
        let dwarf = sections.as_ref().and_then(Sections::dwarf);
        let mut headers = Vec::new();
        if let Some(dwarf) = &dwarf {
            let mut iter = dwarf.units();
            while let Ok(Some(h)) = iter.next() {
                headers.push(h);
            }
        }
        let Some(Request { functions, want }) = request() else {
            return info;
        };
        if let Some((mut syms, found)) = collected {
            // Without functions, the names are needed at the wanted addresses alone.
            let only = want.as_deref().filter(|_| !functions);
            syms.name(&found, &mut info.strings, only);
            info.symbols = syms;
        }
        // Lookups of some addresses give the answers of a full walk only when no lookup
        // depends on the ones before it: no name memory (no functions), a transparent cache.
        if !functions && info.symbols.cache_transparent() {
            info.wanted = want.map(|mut w| {
                w.sort_unstable();
                w.dedup();
                w
            });
        }
        let (Some(sections), Some(dwarf)) = (&sections, &dwarf) else {
            return info;
        };
        // Threads pay off once there is DWARF to share (objdump's 4.5 MB: about half the time).
        let size = sections.get(gimli::SectionId::DebugInfo).len();
        let parallel = threads.unwrap_or(functions && size >= PARALLEL_DEBUG_INFO);
        let strings = std::mem::take(&mut info.strings);
        let want = info.wanted.as_deref();
        let (units, strings) = read_units(dwarf, &headers, functions, want, parallel, strings);
        info.strings = strings;
        info.units = Units::new(units);
        info
    }

    /// The text of an interned string.
    pub fn string(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// The addresses the line tables were read for (ascending), when they were read for some
    /// addresses only: [`LineInfo::locate`] answers nowhere else.
    pub fn wanted(&self) -> Option<&[u64]> {
        self.wanted.as_deref()
    }

    /// Whether any DWARF compilation unit was read.
    pub fn has_dwarf(&self) -> bool {
        !self.units.is_empty()
    }

    /// The file and line of `addr` in the line tables, as `addr2line` answers: unlike
    /// [`LineInfo::locate`], no function name is needed. A stripped shared object whose
    /// DWARF is in a separate debug file has no code symbol for its internal functions
    /// (`__memcpy_avx_unaligned_erms`), so BFD's rule, which drops a line without a
    /// function, would leave every line of them unknown. Leaves BFD's name memory alone.
    pub fn source_line(&self, addr: u64) -> Option<(StrId, u32)> {
        match self.units.find(addr)? {
            (_, Some((Some(file), line)), _) if line != 0 => Some((file, line)),
            _ => None,
        }
    }

    /// `get_src_info(addr)`: BFD's nearest line, kept only with a file, a function and a
    /// non-zero line. Updates BFD's per-function name memory (see the module docs).
    pub fn locate(&mut self, addr: u64) -> Option<Location> {
        self.locate_noting_memory(addr).0
    }

    /// Whether repeating a sequence of lookups gives the same answers as long as no lookup
    /// of the first run changed BFD's name memory ([`LineInfo::locate_noting_memory`]).
    pub fn lookups_replay(&self) -> bool {
        self.symbols.cache_transparent()
    }

    /// [`LineInfo::locate`], also telling whether this lookup changed BFD's name memory (then
    /// the next address may be named differently although nothing else changes there).
    pub fn locate_noting_memory(&mut self, addr: u64) -> (Option<Location>, bool) {
        let before = self.resolved;
        let loc = self.locate_inner(addr);
        (loc, self.resolved != before)
    }

    fn locate_inner(&mut self, addr: u64) -> Option<Location> {
        let Some((ui, row, func)) = self.units.find(addr) else {
            // BFD still consults the ELF symbols (and its cache) when no unit answers.
            let _ = self
                .symbols
                .find_function(addr.wrapping_sub(self.symbols.text_vma));
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

    /// The name BFD reports for `addr` given the best-fit function of unit `ui`.
    fn function_name(&mut self, ui: usize, func: Option<usize>, addr: u64) -> Option<StrId> {
        if let Some(fi) = func
            && let Some(f) = self.units.get(ui).and_then(|u| u.functions.get(fi))
            && f.is_linkage
        {
            return f.name;
        }
        let text_vma = self.symbols.text_vma;
        let sym = self.symbols.find_function(addr.wrapping_sub(text_vma));
        let sym_name = sym.and_then(|i| self.symbols.name_and_value(i));
        if let Some(fi) = func
            && let Some(f) = self.units.get_mut(ui).and_then(|u| u.functions.get_mut(fi))
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
        v.extend(
            self.units
                .breakpoints()
                .chain(self.symbols.breakpoints())
                .filter(|&a| a > lo && a < hi),
        );
        // The list is a concatenation of ascending runs (each unit's line rows, its function
        // ranges, the symbols): the stable sort finds the runs and merges them, where the
        // unstable one sorted from scratch (dense20k `-b -l`: 2.2 % -> 1.7 % of the samples).
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `info` answers at every breakpoint of `.text` (in `data`), as text.
    #[allow(clippy::type_complexity)]
    fn answers(info: &mut LineInfo, data: &[u8]) -> Vec<(u64, Option<(String, u32, String)>)> {
        let elf = crate::parse_elf(data).ok();
        let text = elf
            .as_ref()
            .and_then(|e| {
                e.section_headers
                    .iter()
                    .find(|s| e.shdr_strtab.get_at(s.sh_name) == Some(".text"))
            })
            .map(|s| (s.sh_addr, s.sh_addr + s.sh_size))
            .unwrap_or((0, 0));
        let points = info.breakpoints(text.0, text.1);
        points
            .into_iter()
            .map(|a| {
                let l = info.locate(a).map(|l| {
                    (
                        info.string(l.file).to_string(),
                        l.line,
                        info.string(l.function).to_string(),
                    )
                });
                (a, l)
            })
            .collect()
    }

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
        let elf = crate::parse_elf(&data).ok();
        let syms = elf.as_ref().map(|e| (e, &data[..]));
        let mut one = LineInfo::read(&data, syms, true, None, Some(false));
        let mut many = LineInfo::read(&data, syms, true, None, Some(true));
        assert!(one.units.get(1).is_some());
        let (x, y) = (answers(&mut one, &data), answers(&mut many, &data));
        assert_eq!(x, y);
        let located = x.iter().filter(|a| a.1.is_some()).count();
        assert!(located > 10, "only {located} addresses located");
    }

    /// Read for some addresses only, the tables answer there as the full ones do, on every
    /// program of testdata (several architectures and byte orders, DWARF 2 to 5), and the
    /// line programs GCC writes are scanned without being decoded in full.
    #[test]
    fn wanted_addresses_get_the_full_answers() {
        use crate::elf_file::compress::testdata_elf_files;
        let (mut compared, mut located, mut sparse_units) = (0usize, 0usize, 0usize);
        let files = testdata_elf_files();
        for path in &files {
            let data = std::fs::read(path).unwrap_or_default();
            let elf = crate::parse_elf(&data).ok();
            let syms = elf.as_ref().map(|e| (e, &data[..]));
            let mut full = LineInfo::read(&data, syms, false, None, None);
            let all = full.breakpoints(0, u64::MAX);
            // Every breakpoint, the byte after it, and the byte before the next one.
            let mut want: Vec<u64> = all
                .iter()
                .flat_map(|&a| [a, a.wrapping_add(1), a.wrapping_sub(1)])
                .collect();
            want.sort_unstable();
            want.dedup();
            let mut part = LineInfo::read(&data, syms, false, Some(want.clone()), None);
            if part.wanted().is_none() {
                continue;
            }
            sparse_units += part.units.sparse_count();
            for &a in &want {
                let f = full
                    .locate(a)
                    .map(|l| (full.string(l.file).to_string(), l.line));
                let p = part
                    .locate(a)
                    .map(|l| (part.string(l.file).to_string(), l.line));
                assert!(f == p, "{} at {a:#x}: {f:?} / {p:?}", path.display());
                compared += 1;
                located += usize::from(f.is_some());
            }
        }
        assert!(compared > 10_000, "only {compared} addresses compared");
        assert!(located > 5_000, "only {located} addresses located");
        assert!(
            sparse_units > 40,
            "only {sparse_units} units scanned sparsely"
        );
    }

    /// DWARF in compressed sections (ELF zlib and zstd, GNU `.zdebug`) gives the answers of
    /// the uncompressed file, on every architecture of testdata.
    #[test]
    fn compressed_dwarf_gives_the_same_answers() {
        use crate::elf_file::compress::{Kind, compress_debug_sections, testdata_elf_files};
        let mut located = 0;
        let files = testdata_elf_files();
        for path in &files {
            let data = std::fs::read(path).unwrap_or_default();
            let want = answers(&mut LineInfo::from_elf(&data), &data);
            for kind in [Kind::Zlib, Kind::Zstd, Kind::Gnu] {
                let packed = compress_debug_sections(&data, kind);
                let got = answers(&mut LineInfo::from_elf(&packed), &packed);
                assert!(got == want, "{} {kind:?}", path.display());
            }
            located += want.iter().filter(|a| a.1.is_some()).count();
        }
        assert!(files.len() > 40, "only {} programs", files.len());
        assert!(located > 1000, "only {located} addresses located");
    }
}
