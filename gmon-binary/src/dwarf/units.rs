//! Compilation units: reading them (on two threads when there is much DWARF), and which units
//! cover an address, in the order BFD consults them.

use std::cell::Cell;

use gimli::AttributeValue;

use super::die::{add_range, die_ranges, read_attributes};
use super::functions::{FunctionReader, Functions};
use super::lines::{self, Lines};
use super::sections::Reader;
use super::seek::seek;
use super::strings::{StrId, Strings};

/// `.debug_info` size from which units are read on several threads.
pub(super) const PARALLEL_DEBUG_INFO: usize = 1 << 20;

/// One compilation unit: its address ranges (its own and those of its line sequences), its
/// line table and its functions.
#[derive(Debug, Default)]
pub(super) struct Unit {
    ranges: Vec<(u64, u64)>,
    pub(super) lines: Lines,
    pub(super) functions: Functions,
}

/// The units of a program, and which of them cover an address.
#[derive(Debug, Default)]
pub(super) struct Units {
    units: Vec<Unit>,
    /// Which units cover an address, as a step function: from each start address on (until
    /// the next), the units `cover_units[first..first + len]`, in unit order.
    cover: Vec<(u64, u32, u32)>,
    cover_units: Vec<u32>,
    /// Where the last [`Units::find`] ended in `cover` (lookups mostly ascend).
    cover_hint: Cell<usize>,
    /// Units with no address range at all (BFD tries them after the ones that cover).
    rangeless: Vec<usize>,
}

/// What the unit that answers for an address holds there: its index, the row (file, line) and
/// the best-fit function.
pub(super) type Found = (usize, Option<(Option<StrId>, u32)>, Option<usize>);

impl Units {
    /// Indexes `units` (in `.debug_info` order) by their ranges.
    pub(super) fn new(units: Vec<Unit>) -> Units {
        let mut us = Units {
            units,
            ..Units::default()
        };
        // (point, is_end, unit): at one point, ends are applied before starts.
        let mut events: Vec<(u64, bool, u32)> = Vec::new();
        for (ui, u) in us.units.iter().enumerate() {
            if u.ranges.is_empty() {
                us.rangeless.push(ui);
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
            let first = u32::try_from(us.cover_units.len()).unwrap_or(u32::MAX);
            us.cover_units.extend(active.keys().copied());
            let len = u32::try_from(active.len()).unwrap_or(u32::MAX);
            us.cover.push((point, first, len));
        }
        us
    }

    /// How many units' line tables were read for wanted addresses only.
    #[cfg(test)]
    pub(super) fn sparse_count(&self) -> usize {
        self.units.iter().filter(|u| u.lines.is_sparse()).count()
    }

    /// Whether there is no unit.
    pub(super) fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    pub(super) fn get_mut(&mut self, ui: usize) -> Option<&mut Unit> {
        self.units.get_mut(ui)
    }

    pub(super) fn get(&self, ui: usize) -> Option<&Unit> {
        self.units.get(ui)
    }

    /// Finds the unit that answers for `addr`: its row (file, line) and best-fit function.
    pub(super) fn find(&self, addr: u64) -> Option<Found> {
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
            .chain(self.rangeless.iter().copied());
        for ui in candidates {
            let Some(u) = self.units.get(ui) else {
                continue;
            };
            let func = u.functions.best_fit(addr);
            let row = u.lines.find(addr);
            if row.is_some() || func.is_some() {
                return Some((ui, row, func));
            }
        }
        None
    }

    /// Every address where the unit, row or function found may change.
    pub(super) fn breakpoints(&self) -> impl Iterator<Item = u64> + '_ {
        self.units.iter().flat_map(|u| {
            u.ranges
                .iter()
                .flat_map(|&(l, h)| [l, h])
                .chain(u.lines.breakpoints())
                .chain(u.functions.breakpoints())
        })
    }
}

/// Reads one unit with `r`; without `functions`, its functions are not read.
fn read_unit(
    r: &mut FunctionReader,
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    headers: &[gimli::UnitHeader<Reader<'_>>],
    functions: bool,
    want: Option<&[u64]>,
) -> Unit {
    let mut u = Unit::default();
    let mut funcs = Vec::new();
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
        if complete && functions && !r.read_functions(dwarf, unit, headers, lang, &raw, &mut funcs)
        {
            return Unit::default();
        }
    }
    u.functions = Functions::new(funcs);
    if let Some(program) = &unit.line_program {
        let comp_dir = unit
            .comp_dir
            .map(|d| String::from_utf8_lossy(d.slice()).into_owned());
        u.lines = lines::decode(
            dwarf,
            unit,
            program.header(),
            comp_dir.as_deref(),
            &mut r.strings,
            want,
        );
    }
    for (lo, hi) in u.lines.ranges() {
        add_range(&mut u.ranges, lo, hi);
    }
    u
}

/// Reads the units of `headers` into `strings`, in unit order; with `parallel`, a second thread
/// reads about half of the DWARF (by unit size) into a table of its own, merged afterwards.
/// `want`: see [`lines::decode`].
pub(super) fn read_units(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    headers: &[gimli::UnitHeader<Reader<'_>>],
    functions: bool,
    want: Option<&[u64]>,
    parallel: bool,
    strings: Strings,
) -> (Vec<Unit>, Strings) {
    // One reader for many units: its caches (strings by place, names by origin) are shared.
    let read = |indices: &[usize], strings: Strings| -> (Vec<(usize, Unit)>, Strings) {
        let mut r = FunctionReader::new(strings);
        let mut out = Vec::with_capacity(indices.len());
        for &i in indices {
            if let Some(unit) = headers.get(i).and_then(|h| dwarf.unit(*h).ok()) {
                out.push((i, read_unit(&mut r, dwarf, &unit, headers, functions, want)));
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
            let map = strings.absorb(&their_strings);
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
    u.lines.remap(id);
    u.functions.remap(id);
}
