//! `-c`: gprof's static call graph, found by scanning the machine code for calls.

use super::hist::Histograms;
use gmon_binary::Image;
use gmon_binary::arch;

use super::symtab::SymbolTable;

/// gprof's `-c` scanners. x86: every `0xE8` byte of a symbol's code is taken as `call rel32`;
/// the 32-bit displacement is zero-extended (so only forward calls are found on a 64-bit host).
/// AArch64, MIPS and SPARC: see [`arch::CallScanner`]. The target must lie in a histogram and
/// start a symbol.
pub(super) struct StaticCalls<'a> {
    text: Option<&'a [u8]>,
    text_vma: u64,
    syms: &'a SymbolTable,
    ranges: Vec<(u64, u64)>,
    scanner: arch::CallScanner,
    big_endian: bool,
}

impl<'a> StaticCalls<'a> {
    pub(super) fn new(
        image: &'a Image,
        syms: &'a SymbolTable,
        hist: &Histograms,
        scanner: arch::CallScanner,
    ) -> StaticCalls<'a> {
        StaticCalls {
            text: image.text_bytes(),
            text_vma: image.text_vma,
            syms,
            ranges: hist.records.iter().map(|r| (r.low_pc, r.high_pc)).collect(),
            scanner,
            big_endian: image.encoding.endian == gmon_format::Endian::Big,
        }
    }

    /// Clips `[lo, hi)` to the histogram record it intersects.
    fn clip(&self, lo: u64, hi: u64) -> Option<(u64, u64)> {
        self.ranges
            .iter()
            .find(|&&(l, h)| lo < h && l < hi)
            .map(|&(l, h)| (lo.max(l), hi.min(h)))
    }

    fn in_hist(&self, a: u64) -> bool {
        let a = a & 0xffff_ffff;
        self.ranges
            .iter()
            .any(|&(l, h)| (l & 0xffff_ffff) <= a && a < (h & 0xffff_ffff))
    }

    /// The symbols `p`'s code calls, in address order; `None` for an indirect call that gprof
    /// records as an arc to its `<indirect child>` (MIPS `jalr`).
    pub(super) fn calls_from(&self, p: usize) -> Vec<Option<usize>> {
        let mut out = Vec::new();
        let (Some(text), Some(sym)) = (self.text, self.syms.symbols.get(p)) else {
            return out;
        };
        let next = self.syms.symbols.get(p + 1).map_or(0, |s| s.addr);
        let Some((lo, hi)) = self.clip(sym.addr, next) else {
            return out;
        };
        if self.scanner != arch::CallScanner::X86 {
            let mut pc = self.scanner.start(lo);
            while pc < hi {
                let off = pc.wrapping_sub(self.text_vma) as usize;
                let insn = text
                    .get(off..off.wrapping_add(4))
                    .filter(|_| pc >= self.text_vma);
                match insn.map(|b| self.scanner.decode(pc, b, self.big_endian)) {
                    Some(arch::Call::Direct(dest)) => {
                        if self.in_hist(dest)
                            && let Some(c) = self.syms.lookup(dest)
                            && self.syms.symbols.get(c).is_some_and(|s| s.addr == dest)
                        {
                            out.push(Some(c));
                        }
                    }
                    Some(arch::Call::Indirect) => out.push(None),
                    _ => {}
                }
                pc += 4;
            }
            return out;
        }
        let mut pc = lo;
        while pc < hi {
            let off = pc.wrapping_sub(self.text_vma) as usize;
            if pc >= self.text_vma
                && text.get(off) == Some(&0xe8)
                && let Some(d) = text.get(off + 1..off + 5)
            {
                let disp = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as u64;
                let dest = disp.wrapping_add(pc).wrapping_add(5);
                if self.in_hist(dest)
                    && let Some(c) = self.syms.lookup(dest)
                    && self.syms.symbols.get(c).is_some_and(|s| s.addr == dest)
                {
                    out.push(Some(c));
                    pc += 5;
                    continue;
                }
            }
            pc += 1;
        }
        out
    }
}
