//! A walk over a compilation unit's DIEs that stops only at the ones the caller wants.
//!
//! gprof's line information needs the subprograms and inlined subroutines of a unit, about one
//! DIE in ten; the others (types, members, variables, parameters) only have to be stepped over.
//! gimli decodes or sizes every attribute of every DIE one by one; here each abbreviation is
//! turned once into a plan — "the attributes take N bytes", or a short list of steps where a
//! size depends on the data (LEB128 numbers, strings, blocks) — so that most DIEs cost one
//! LEB128 read and an addition. The wanted DIEs are read with gimli, from their offset.

use gimli::{DwForm, Encoding, RunTimeEndian, constants as dw};

/// How to step over one abbreviation's attributes.
#[derive(Clone, Debug)]
enum Plan {
    /// A DIE the caller wants: stop there.
    Want,
    /// Attributes whose sizes depend on the data, in order; fixed sizes are summed into runs.
    Steps(Vec<Step>),
}

#[derive(Clone, Copy, Debug)]
enum Step {
    Bytes(usize),
    Form(DwForm),
}

/// The walk over one unit's entries (`.debug_info` bytes after the unit header).
#[derive(Debug)]
pub struct DieWalk<'a> {
    cursor: Cursor<'a>,
    /// Plans by abbreviation code (codes are small and dense in practice).
    plans: Vec<Option<Plan>>,
}

/// A position in the entries, with what sizes depend on.
#[derive(Debug)]
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    encoding: Encoding,
    big_endian: bool,
}

/// Codes above this are planned at every use instead of getting a table slot.
const MAX_TABLED_CODE: usize = 1 << 16;

impl<'a> DieWalk<'a> {
    /// A walk over `entries`, the unit's DIE bytes.
    pub fn new(entries: &'a [u8], encoding: Encoding, endian: RunTimeEndian) -> DieWalk<'a> {
        DieWalk {
            cursor: Cursor {
                buf: entries,
                pos: 0,
                encoding,
                big_endian: matches!(endian, RunTimeEndian::Big),
            },
            plans: Vec::new(),
        }
    }

    /// Continues at `pos` (bytes from the start of the entries), after the caller read a DIE.
    pub fn resume_at(&mut self, pos: usize) {
        self.cursor.pos = pos;
    }

    /// The position (bytes from the start of the entries) of the next DIE whose abbreviation
    /// `want` accepts, or `None` at the end. `Err` when a DIE cannot be stepped over (an unknown
    /// abbreviation or form, or truncated data): the rest of the unit is unreadable.
    pub fn next_wanted(
        &mut self,
        abbrevs: &gimli::Abbreviations,
        want: impl Fn(&gimli::Abbreviation) -> bool,
    ) -> Result<Option<usize>, ()> {
        loop {
            let c = &mut self.cursor;
            if c.pos >= c.buf.len() {
                return Ok(None);
            }
            let at = c.pos;
            let code = c.uleb()?;
            if code == 0 {
                continue;
            }
            let slot = usize::try_from(code).map_err(|_| ())?;
            let planned = self.plans.get(slot).and_then(Option::as_ref);
            let fresh;
            let plan = match planned {
                Some(p) => p,
                None => {
                    let abbrev = abbrevs.get(code).ok_or(())?;
                    fresh = plan(abbrev, &want, &self.cursor);
                    if slot <= MAX_TABLED_CODE {
                        if self.plans.len() <= slot {
                            self.plans.resize(slot + 1, None);
                        }
                        if let Some(p) = self.plans.get_mut(slot) {
                            *p = Some(fresh.clone());
                        }
                    }
                    &fresh
                }
            };
            match plan {
                Plan::Want => return Ok(Some(at)),
                Plan::Steps(steps) => {
                    for &s in steps {
                        match s {
                            Step::Bytes(n) => self.cursor.skip(n)?,
                            Step::Form(f) => self.cursor.skip_form(f, 0)?,
                        }
                    }
                }
            }
        }
    }
}

fn plan(
    abbrev: &gimli::Abbreviation,
    want: &impl Fn(&gimli::Abbreviation) -> bool,
    cursor: &Cursor<'_>,
) -> Plan {
    if want(abbrev) {
        return Plan::Want;
    }
    let mut steps: Vec<Step> = Vec::new();
    for spec in abbrev.attributes() {
        match cursor.fixed_size(spec.form()) {
            Some(n) => match steps.last_mut() {
                Some(Step::Bytes(m)) => *m += n,
                _ => steps.push(Step::Bytes(n)),
            },
            None => steps.push(Step::Form(spec.form())),
        }
    }
    Plan::Steps(steps)
}

impl Cursor<'_> {
    /// The size of a value of `form` when it does not depend on the data.
    fn fixed_size(&self, form: DwForm) -> Option<usize> {
        let addr = usize::from(self.encoding.address_size);
        let offset = usize::from(self.encoding.format.word_size());
        Some(match form {
            dw::DW_FORM_addr => addr,
            dw::DW_FORM_flag_present | dw::DW_FORM_implicit_const => 0,
            dw::DW_FORM_data1
            | dw::DW_FORM_ref1
            | dw::DW_FORM_flag
            | dw::DW_FORM_strx1
            | dw::DW_FORM_addrx1 => 1,
            dw::DW_FORM_data2 | dw::DW_FORM_ref2 | dw::DW_FORM_strx2 | dw::DW_FORM_addrx2 => 2,
            dw::DW_FORM_strx3 | dw::DW_FORM_addrx3 => 3,
            dw::DW_FORM_data4
            | dw::DW_FORM_ref4
            | dw::DW_FORM_ref_sup4
            | dw::DW_FORM_strx4
            | dw::DW_FORM_addrx4 => 4,
            dw::DW_FORM_data8 | dw::DW_FORM_ref8 | dw::DW_FORM_ref_sig8 | dw::DW_FORM_ref_sup8 => 8,
            dw::DW_FORM_data16 => 16,
            dw::DW_FORM_strp
            | dw::DW_FORM_line_strp
            | dw::DW_FORM_sec_offset
            | dw::DW_FORM_strp_sup
            | dw::DW_FORM_GNU_ref_alt
            | dw::DW_FORM_GNU_strp_alt => offset,
            // DWARF 2 sized references to other units like addresses.
            dw::DW_FORM_ref_addr if self.encoding.version <= 2 => addr,
            dw::DW_FORM_ref_addr => offset,
            _ => return None,
        })
    }

    fn skip_form(&mut self, form: DwForm, depth: u32) -> Result<(), ()> {
        if let Some(n) = self.fixed_size(form) {
            return self.skip(n);
        }
        match form {
            dw::DW_FORM_udata
            | dw::DW_FORM_sdata
            | dw::DW_FORM_ref_udata
            | dw::DW_FORM_strx
            | dw::DW_FORM_addrx
            | dw::DW_FORM_loclistx
            | dw::DW_FORM_rnglistx
            | dw::DW_FORM_GNU_addr_index
            | dw::DW_FORM_GNU_str_index => self.uleb().map(|_| ()),
            dw::DW_FORM_string => {
                let rest = self.buf.get(self.pos..).ok_or(())?;
                let nul = rest.iter().position(|&b| b == 0).ok_or(())?;
                self.skip(nul + 1)
            }
            dw::DW_FORM_block1 => {
                let n = self.fixed(1)?;
                self.skip(n)
            }
            dw::DW_FORM_block2 => {
                let n = self.fixed(2)?;
                self.skip(n)
            }
            dw::DW_FORM_block4 => {
                let n = self.fixed(4)?;
                self.skip(n)
            }
            dw::DW_FORM_block | dw::DW_FORM_exprloc => {
                let n = usize::try_from(self.uleb()?).map_err(|_| ())?;
                self.skip(n)
            }
            dw::DW_FORM_indirect if depth < 8 => {
                let f = u16::try_from(self.uleb()?).map_err(|_| ())?;
                self.skip_form(DwForm(f), depth + 1)
            }
            _ => Err(()),
        }
    }

    fn skip(&mut self, n: usize) -> Result<(), ()> {
        let end = self.pos.checked_add(n).ok_or(())?;
        if end > self.buf.len() {
            return Err(());
        }
        self.pos = end;
        Ok(())
    }

    /// An unsigned number of `n` bytes in the unit's byte order.
    fn fixed(&mut self, n: usize) -> Result<usize, ()> {
        let bytes = self
            .buf
            .get(self.pos..self.pos.checked_add(n).ok_or(())?)
            .ok_or(())?;
        self.pos += n;
        let mut v = 0usize;
        if self.big_endian {
            for &b in bytes {
                v = (v << 8) | usize::from(b);
            }
        } else {
            for &b in bytes.iter().rev() {
                v = (v << 8) | usize::from(b);
            }
        }
        Ok(v)
    }

    fn uleb(&mut self) -> Result<u64, ()> {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let b = *self.buf.get(self.pos).ok_or(())?;
            self.pos += 1;
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Abbreviations: 1 = base type (name: string, size: data1), 2 = subprogram (name: strp,
    /// low_pc: addr), 3 = variable (location: exprloc, const: sdata, x: indirect),
    /// 4 = lexical block with children (no attributes), 5 = inlined subroutine (block2).
    fn abbrevs() -> gimli::Abbreviations {
        #[rustfmt::skip]
        let bytes: Vec<u8> = vec![
            1, 0x24, 0, 0x03, 0x08, 0x0b, 0x0b, 0, 0,
            2, 0x2e, 0, 0x03, 0x0e, 0x11, 0x01, 0, 0,
            3, 0x34, 0, 0x02, 0x18, 0x1c, 0x0d, 0x40, 0x16, 0, 0,
            4, 0x0b, 1, 0, 0,
            5, 0x1d, 0, 0x02, 0x0a, 0, 0,
            0,
        ];
        let abbrev = gimli::DebugAbbrev::new(&bytes, gimli::LittleEndian);
        abbrev
            .abbreviations(gimli::DebugAbbrevOffset(0))
            .unwrap_or_default()
    }

    fn encoding() -> Encoding {
        Encoding {
            format: gimli::Format::Dwarf32,
            version: 4,
            address_size: 8,
        }
    }

    #[test]
    fn stops_at_wanted_tags_only() {
        let mut entries: Vec<u8> = Vec::new();
        entries.extend([1, b'i', b'n', b't', 0, 4]); // base type "int", size 4
        let first = entries.len();
        entries.extend([2, 0x10, 0, 0, 0]); // subprogram, strp
        entries.extend(0x401000u64.to_le_bytes());
        entries.extend([4]); // lexical block with children
        // variable: exprloc of 3 bytes, sdata -2 (one byte), indirect → data2
        entries.extend([3, 3, 0x91, 0x7c, 0x06, 0x7e, 0x05, 0x34, 0x12]);
        let second = entries.len();
        entries.extend([5, 2, 0, 0xaa, 0xbb]); // inlined subroutine, block2 of 2 bytes
        entries.extend([0, 0]); // end of children, end of unit
        let abbrevs = abbrevs();
        let want = |a: &gimli::Abbreviation| {
            a.tag() == gimli::DW_TAG_subprogram || a.tag() == gimli::DW_TAG_inlined_subroutine
        };
        let mut walk = DieWalk::new(&entries, encoding(), RunTimeEndian::Little);
        assert_eq!(walk.next_wanted(&abbrevs, want), Ok(Some(first)));
        // The caller reads the subprogram (code + 4 + 8 bytes) and resumes after it.
        walk.resume_at(first + 13);
        assert_eq!(walk.next_wanted(&abbrevs, want), Ok(Some(second)));
        walk.resume_at(second + 5);
        assert_eq!(walk.next_wanted(&abbrevs, want), Ok(None));
    }

    #[test]
    fn unknown_codes_and_truncation_stop_the_walk() {
        let abbrevs = abbrevs();
        let want = |a: &gimli::Abbreviation| a.tag() == gimli::DW_TAG_subprogram;
        let mut walk = DieWalk::new(&[9, 0], encoding(), RunTimeEndian::Little);
        assert_eq!(walk.next_wanted(&abbrevs, want), Err(()));
        // A string without its terminating NUL.
        let mut walk = DieWalk::new(&[1, b'i', b'n'], encoding(), RunTimeEndian::Little);
        assert_eq!(walk.next_wanted(&abbrevs, want), Err(()));
        // An exprloc longer than the data.
        let mut walk = DieWalk::new(&[3, 0x7f, 1], encoding(), RunTimeEndian::Little);
        assert_eq!(walk.next_wanted(&abbrevs, want), Err(()));
    }
}
