//! The functions of a unit as BFD's `scan_unit_for_symbols` sees them: subprograms, inlined
//! subroutines and entry points with an address range, the name BFD gives each, and the
//! best-fit function of an address (`lookup_address_in_function_table`).

use std::cell::Cell;
use std::collections::HashMap;

use gimli::AttributeValue;
use rustc_hash::FxBuildHasher;

use super::die::{die_ranges, read_attributes};
use super::die_walk::DieWalk;
use super::sections::Reader;
use super::seek::seek;
use super::strings::{StrId, Strings};

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

/// One DWARF function with an address range.
#[derive(Debug)]
pub(super) struct FuncInfo {
    /// Address ranges in BFD's list order (the first one decides the name rule).
    pub(super) ranges: Vec<(u64, u64)>,
    pub(super) name: Option<StrId>,
    /// Whether `name` is used as it is (a linkage name, or a C-like `DW_AT_name`); otherwise
    /// BFD names the function after an ELF symbol on first lookup.
    pub(super) is_linkage: bool,
}

/// A unit's functions and their best fit as a step function of the address.
#[derive(Debug, Default)]
pub(super) struct Functions {
    funcs: Vec<FuncInfo>,
    /// The best-fit function as a step function of the address: (start, function) pieces.
    segments: Vec<(u64, Option<usize>)>,
    /// Where the last lookup ended in `segments`.
    segment_hint: Cell<usize>,
}

impl Functions {
    pub(super) fn new(funcs: Vec<FuncInfo>) -> Functions {
        Functions {
            segments: build_segments(&funcs),
            funcs,
            segment_hint: Cell::new(0),
        }
    }

    /// `lookup_address_in_function_table`: the smallest range containing `addr`; at equal
    /// sizes the function read later wins. Precomputed by [`build_segments`].
    pub(super) fn best_fit(&self, addr: u64) -> Option<usize> {
        let i = seek(&self.segments, |s| s.0, addr, &self.segment_hint)?;
        self.segments.get(i)?.1
    }

    pub(super) fn get(&self, i: usize) -> Option<&FuncInfo> {
        self.funcs.get(i)
    }

    pub(super) fn get_mut(&mut self, i: usize) -> Option<&mut FuncInfo> {
        self.funcs.get_mut(i)
    }

    /// Every range bound (where the best fit may change).
    pub(super) fn breakpoints(&self) -> impl Iterator<Item = u64> + '_ {
        self.funcs
            .iter()
            .flat_map(|f| f.ranges.iter().flat_map(|&(l, h)| [l, h]))
    }

    /// Gives the name ids the values `id` assigns them.
    pub(super) fn remap(&mut self, id: impl Fn(StrId) -> StrId) {
        for f in &mut self.funcs {
            f.name = f.name.map(&id);
        }
    }
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

/// Reads functions into its own string table (which the units' line tables share), so that
/// units can be read on several threads.
#[derive(Debug, Default)]
pub(super) struct FunctionReader {
    pub(super) strings: Strings,
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

impl FunctionReader {
    pub(super) fn new(strings: Strings) -> FunctionReader {
        FunctionReader {
            strings,
            ..FunctionReader::default()
        }
    }

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

    /// BFD's `scan_unit_for_symbols`: every subprogram, inlined subroutine and entry point
    /// below the unit DIE that has an address range, with the name BFD gives it. Stops at the
    /// first DIE that cannot be read, as BFD does. False when BFD would fail on the unit (a
    /// range list it cannot read).
    pub(super) fn read_functions(
        &mut self,
        dwarf: &gimli::Dwarf<Reader<'_>>,
        unit: &gimli::Unit<Reader<'_>>,
        headers: &[gimli::UnitHeader<Reader<'_>>],
        lang: Option<gimli::DwLang>,
        raw: &gimli::EntriesRaw<'_, '_, Reader<'_>>,
        funcs: &mut Vec<FuncInfo>,
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
            funcs.push(f);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_prefers_the_smallest_range() {
        let f = |lo, hi| FuncInfo {
            ranges: vec![(lo, hi)],
            name: None,
            is_linkage: true,
        };
        let mut funcs = vec![
            f(0x100, 0x200),
            f(0x140, 0x150),
            f(0x300, 0x310),
            f(0x140, 0x150),
        ];
        // Equal ranges: the later function wins.
        assert_eq!(
            Functions::new(std::mem::take(&mut funcs)).best_fit(0x145),
            Some(3)
        );
        let mut funcs = vec![f(0x100, 0x200), f(0x140, 0x150), f(0x300, 0x310)];
        let u = Functions::new(std::mem::take(&mut funcs));
        assert_eq!(u.best_fit(0x120), Some(0));
        assert_eq!(u.best_fit(0x145), Some(1));
        assert_eq!(u.best_fit(0x250), None);
        assert_eq!(u.best_fit(0x305), Some(2));
        assert_eq!(u.best_fit(0x400), None);
    }
}
