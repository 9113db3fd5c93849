//! The histogram a write emits, put together from where the ticks were counted
//! (spec/runtime.md §4.3, "Bins from the PC table").
//!
//! The signal handler counts each tick once by its exact PC in the PC table, whose entries are
//! packed in the order first counted, and not also into the histogram's bins: those span the
//! whole text (4 bytes of bins per 4 bytes of code, 33 MB for `cc1`), so a tick in a part of
//! the code not sampled before first-touched a page of bins, and the write's copy of the
//! counted chunks a page more. A short `cc1` faulted in about 2,000 + 1,000 pages for them.
//! The write places the table's ticks in their bins instead, chunk by chunk, from the sorted
//! list of PCs it makes for the sidecar anyway. The bins are still counted into directly for
//! a tick the table cannot take (it is full, or the session keeps no PC table) and for the
//! ticks of one PC beyond [`TABLE_TICKS_PER_PC`].

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::save::writer::{BIN_CHUNK, MAX_BIN_TOTAL};

/// The ticks of one PC that the histogram takes from the PC table; the handler counts further
/// ones into the bins, where they saturate as every bin does ([`DIRECT_BIN_CAP`]). 2²⁰ ticks
/// are 17 minutes of one thread at 1 kHz on one instruction.
pub(crate) const TABLE_TICKS_PER_PC: u64 = 1 << 20;

/// The most PCs a bin covers: the runtime's bins are 4 bytes of text (spec/runtime.md §4.3).
const PCS_PER_BIN: u64 = 4;

/// The cap of a bin counted into directly: with the table's ticks of its (at most four) PCs
/// added at the write, a bin never exceeds [`MAX_BIN_TOTAL`], so the handler's saturation
/// count stays the whole account of what a bin could not keep.
pub(crate) const DIRECT_BIN_CAP: u32 = MAX_BIN_TOTAL - (PCS_PER_BIN * TABLE_TICKS_PER_PC) as u32;

/// Where a PC's ticks go in the histogram: the bins' runtime start, `profil` scale and count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PcBins {
    pub low: u64,
    pub scale: u32,
    pub nbins: usize,
}

impl PcBins {
    /// A key that orders PCs as their bins do: 0 below the histogram, else the bin + 1 (at or
    /// above `nbins + 1` past its end).
    fn key(&self, pc: u64) -> u128 {
        match pc.checked_sub(self.low) {
            Some(delta) => ((u128::from(delta / 2) * u128::from(self.scale)) >> 16) + 1,
            None => 0,
        }
    }

    /// The bin of `pc`, if it has one.
    pub(crate) fn bin(&self, pc: u64) -> Option<usize> {
        usize::try_from(self.key(pc).checked_sub(1)?)
            .ok()
            .filter(|&b| b < self.nbins)
    }
}

/// The histogram of one write: what the handler counted into the bins (copied, in the chunks
/// it marked) and the PC table's ticks (the sorted list the sidecar gets).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bins<'a> {
    /// The copy of the bins counted into directly, valid in the chunks `direct` marks.
    pub copy: &'a [u32],
    /// One bit per [`BIN_CHUNK`] of `copy` that holds ticks.
    pub direct: &'a [u64],
    /// One bit per chunk that holds a tick from either source ([`mark_sampled`]).
    pub sampled: &'a [u64],
    /// (PC, ticks), ascending by PC.
    pub pcs: &'a [[u64; 2]],
    /// Where the PCs' ticks go; None when the table's ticks were counted into the bins too.
    pub at: Option<PcBins>,
}

fn is_set(map: &[u64], chunk: usize) -> bool {
    map.get(chunk / 64)
        .is_some_and(|w| w & (1u64 << (chunk % 64)) != 0)
}

impl Bins<'_> {
    /// Number of bins.
    pub(crate) fn len(&self) -> usize {
        self.copy.len()
    }

    /// Whether chunk `chunk` holds a tick.
    pub(crate) fn is_sampled(&self, chunk: usize) -> bool {
        is_set(self.sampled, chunk)
    }

    /// The counts of chunk `chunk` (its first `BIN_CHUNK` bins, fewer at the end), put
    /// together in `out`.
    pub(crate) fn chunk<'b>(&self, chunk: usize, out: &'b mut [u32; BIN_CHUNK]) -> &'b [u32] {
        let start = chunk.saturating_mul(BIN_CHUNK).min(self.len());
        let end = start.saturating_add(BIN_CHUNK).min(self.len());
        let n = end - start;
        let out = out.get_mut(..n).unwrap_or(&mut []);
        match self.copy.get(start..end) {
            Some(c) if is_set(self.direct, chunk) => out.copy_from_slice(c),
            _ => out.fill(0),
        }
        if let Some(at) = self.at {
            // The PCs of this chunk's bins: a run of the sorted list.
            let (lo, hi) = (start as u128 + 1, end as u128 + 1);
            let first = self.pcs.partition_point(|&[pc, _]| at.key(pc) < lo);
            let last = self.pcs.partition_point(|&[pc, _]| at.key(pc) < hi);
            for &[pc, ticks] in self.pcs.get(first..last.max(first)).unwrap_or(&[]) {
                if let Some(b) = at.bin(pc).and_then(|b| out.get_mut(b - start)) {
                    let add = ticks.min(TABLE_TICKS_PER_PC) as u32;
                    *b = b.saturating_add(add);
                }
            }
        }
        out
    }
}

/// Marks in `sampled` every chunk that `direct` marks or that holds a PC of `pcs`.
pub(crate) fn mark_sampled(
    sampled: &mut [u64],
    direct: &[u64],
    pcs: &[[u64; 2]],
    at: Option<PcBins>,
) {
    for (s, &d) in sampled.iter_mut().zip(direct) {
        *s = d;
    }
    let Some(at) = at else {
        return;
    };
    for &[pc, ticks] in pcs {
        if let Some(b) = at.bin(pc).filter(|_| ticks != 0) {
            let chunk = b / BIN_CHUNK;
            if let Some(w) = sampled.get_mut(chunk / 64) {
                *w |= 1u64 << (chunk % 64);
            }
        }
    }
}

/// The whole histogram as dense bins, live (not for the signal handler: it allocates): the
/// direct bins plus the PC table's ticks.
pub(crate) fn dense(
    direct: &[AtomicU32],
    pcs: impl Iterator<Item = (u64, u64)>,
    at: Option<PcBins>,
) -> Vec<u64> {
    let mut bins: Vec<u64> = direct
        .iter()
        .map(|b| u64::from(b.load(Ordering::Relaxed)))
        .collect();
    if let Some(at) = at {
        for (pc, ticks) in pcs {
            if let Some(b) = at.bin(pc).and_then(|b| bins.get_mut(b)) {
                *b += ticks.min(TABLE_TICKS_PER_PC);
            }
        }
    }
    bins
}

/// Copies `live` into `copy` (a snapshot of a touched-chunk map).
pub(crate) fn copy_map(copy: &mut [u64], live: &[AtomicU64]) {
    for (c, l) in copy.iter_mut().zip(live) {
        *c = l.load(Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_ticks_land_in_their_bins() {
        let at = PcBins {
            low: 0x1000,
            scale: 0x8000,
            nbins: 2 * BIN_CHUNK + 7,
        };
        assert_eq!(at.bin(0xfff), None);
        assert_eq!(at.bin(0x1000), Some(0));
        assert_eq!(at.bin(0x1003), Some(0));
        assert_eq!(at.bin(0x1004), Some(1));
        assert_eq!(at.bin(0x1000 + 4 * at.nbins as u64), None);
        let n = at.nbins;
        let mut copy = vec![0u32; n];
        copy[3] = 5;
        copy[2 * BIN_CHUNK + 1] = 9;
        let direct = vec![1u64 | 1 << 2];
        // PCs of bins 3 (twice, one over the per-PC limit), BIN_CHUNK + 1, past the end, below.
        let pcs = [
            [0x800, 4],
            [0x1000 + 12, 2],
            [0x1000 + 13, TABLE_TICKS_PER_PC + 3],
            [0x1000 + 4 * (BIN_CHUNK as u64 + 1), 6],
            [0x1000 + 4 * n as u64 + 8, 1],
        ];
        let mut sampled = vec![0u64];
        mark_sampled(&mut sampled, &direct, &pcs, Some(at));
        assert_eq!(sampled, [0b111]);
        let b = Bins {
            copy: &copy,
            direct: &direct,
            sampled: &sampled,
            pcs: &pcs,
            at: Some(at),
        };
        let mut out = [0u32; BIN_CHUNK];
        let c0 = b.chunk(0, &mut out).to_vec();
        assert_eq!(c0.len(), BIN_CHUNK);
        assert_eq!(c0[3], 5 + 2 + TABLE_TICKS_PER_PC as u32);
        assert_eq!(
            c0.iter().map(|&x| u64::from(x)).sum::<u64>(),
            7 + TABLE_TICKS_PER_PC
        );
        let c1 = b.chunk(1, &mut out).to_vec();
        assert_eq!((c1[1], c1.iter().sum::<u32>()), (6, 6));
        let c2 = b.chunk(2, &mut out).to_vec();
        assert_eq!((c2.len(), c2[1], c2.iter().sum::<u32>()), (7, 9, 9));
        let whole = dense(
            &copy.iter().map(|&c| AtomicU32::new(c)).collect::<Vec<_>>(),
            pcs.iter().map(|&[p, t]| (p, t)),
            Some(at),
        );
        let chunks: Vec<u64> = [c0, c1, c2].concat().into_iter().map(u64::from).collect();
        assert_eq!(whole, chunks);
    }
}
