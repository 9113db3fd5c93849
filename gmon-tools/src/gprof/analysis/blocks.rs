//! Basic-block counts (`bb_read_rec` in line mode): the blocks each symbol owns, for the exec
//! counts (`-C`) and the annotated source (`-A`).

use std::collections::HashMap;

use super::symtab::SymbolTable;

/// gprof's basic-block slots per symbol (`NBBS`).
pub const NBBS: usize = 10;

/// Basic-block counts attached to symbols (`bb_read_rec` with `-l`): each block goes to the
/// symbol that owns its address, into the first free slot or the slot with the same address
/// (at most [`NBBS`] per symbol; more are dropped, as in gprof).
#[derive(Clone, Debug, Default)]
pub struct BasicBlocks {
    /// Symbol index → (block address, summed count) slots, in slot order.
    pub slots: HashMap<usize, Vec<(u64, u64)>>,
}

impl BasicBlocks {
    /// Adds every basic-block count of `profile` (gprof keeps them only in line mode).
    pub fn add_profile(&mut self, profile: &gmon_format::Profile, table: &SymbolTable) {
        for b in profile.basic_blocks() {
            let Some(sym) = table.lookup(b.address) else {
                continue;
            };
            let slots = self.slots.entry(sym).or_default();
            // gprof tests `bb_addr[i] == 0` for a free slot, so a block at address 0 always
            // takes the next slot.
            let full = slots.len() >= NBBS;
            match slots
                .iter_mut()
                .find(|(addr, _)| *addr == b.address && *addr != 0)
            {
                Some(slot) => slot.1 = slot.1.wrapping_add(b.count),
                None if !full => slots.push((b.address, b.count)),
                None => {}
            }
        }
    }

    /// Whether no block was recorded.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The blocks of symbol `sym` (gprof stops at the first zero address).
    pub fn of(&self, sym: usize) -> &[(u64, u64)] {
        let s = self.slots.get(&sym).map_or(&[][..], |v| v.as_slice());
        let end = s.iter().position(|&(a, _)| a == 0).unwrap_or(s.len());
        s.get(..end).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gprof::analysis::symtab::Symbol;

    #[test]
    fn basic_blocks_fill_ten_slots_per_symbol() {
        let table = SymbolTable {
            symbols: vec![Symbol {
                name: "f".into(),
                addr: 0x100,
                end_addr: 0x1ff,
                is_static: false,
                is_func: true,
                file: None,
                line: 0,
            }],
            files: Vec::new(),
        };
        let mut records = Vec::new();
        for a in 0..12u64 {
            records.push(gmon_format::BasicBlockCount {
                address: 0x100 + a,
                count: 1,
                legacy: None,
            });
        }
        for address in [0x100, 0x900] {
            records.push(gmon_format::BasicBlockCount {
                address,
                count: 5,
                legacy: None,
            });
        }
        let mut profile = gmon_format::Profile::new_gnu(gmon_format::Encoding {
            endian: gmon_format::Endian::Little,
            ptr_width: gmon_format::PtrWidth::Eight,
        });
        profile.records = vec![gmon_format::Record::BasicBlocks(
            gmon_format::BasicBlockRecord {
                legacy_name: None,
                blocks: records,
            },
        )];
        let mut bb = BasicBlocks::default();
        bb.add_profile(&profile, &table);
        let got = bb.of(0);
        assert_eq!(got.len(), NBBS);
        assert_eq!(got.first(), Some(&(0x100, 6)));
        assert_eq!(got.last(), Some(&(0x109, 1)));
        assert!(bb.of(1).is_empty());
    }
}
