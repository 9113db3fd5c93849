//! What every DIE reader here needs from one entry: its attributes, and the address ranges
//! they give, with BFD's rules for the ranges it cannot read and for adjacent ranges.

use gimli::AttributeValue;

use super::sections::Reader;

/// Reads every attribute of the entry whose abbreviation was just read into `attrs`; false
/// when one cannot be read (the rest of the unit is then unreadable too).
pub(super) fn read_attributes<'a>(
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
pub(super) fn die_ranges(
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
pub(super) fn add_range(ranges: &mut Vec<(u64, u64)>, lo: u64, hi: u64) {
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
