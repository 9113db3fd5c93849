//! The fixed grid that cuts a large histogram into the records gmon.out carries
//! (spec/runtime.md §1, "Only the sampled cells").
//!
//! A process writes one histogram record per cell of its histogram that holds a sample, not one
//! record over the whole text. The grid depends only on the histogram's geometry (the same for
//! every process of an executable), so the records of two processes are either of the same range,
//! which GNU gprof, `gprof -s` and `gmon merge` add bin by bin, or disjoint; never overlapping,
//! which they refuse.

use crate::save::writer::{BIN_CHUNK, HistRange};

/// Bins per cell: one chunk of the touched map, 1 KiB of gmon.out and 2 KiB of text per
/// record.
///
/// Smaller cells write fewer zeros but more records. A record's header is 41 bytes (4 % of a
/// cell), and GNU gprof walks the symbol table from its start once per record
/// (`hist_assign_samples`), so its cost grows as records × symbols. Measured on `gcc -O2 -c` of a
/// 300-function file (cc1: 5.2 million bins, 3152 samples in 2703 bins): 1270 cells of 512 bins
/// hold a sample (1.35 MB of records), 194 of 16384 (6.4 MB), against 10.4 MB for one record.
/// GNU gprof on 5210 records of 512 bins over an executable of 40 719 symbols took the same time
/// as on one record of the same counts (reading the symbols dominates), and printed the same.
pub(crate) const CELL_BINS: usize = BIN_CHUNK;

/// Text bytes per bin in a cell record. Every cell's record must have the same gprof scale
/// (gprof refuses records whose scales differ by more than 10⁻⁶), and a cell's bins must land
/// on the addresses the runtime counted them at. So cells are used only when the runtime's bins
/// are exactly 4 bytes ([`FOUR_BYTE_BINS`]), and a cell record claims 4 bytes per bin (gprof
/// scale 2). The runtime's geometry gives every text such bins (spec/runtime.md §4.3); glibc's
/// rounded its bin count up, which made the scale slightly under 2 below 384 KiB of text.
const CELL_BIN_BYTES: u64 = 4;

/// The `profil` scale of 4-byte bins: `bin = (pc − lowpc) / 2 × scale / 65536`, the scale of
/// every histogram the runtime keeps (spec/runtime.md §4.3).
const FOUR_BYTE_BINS: u32 = crate::counts::profil::SCALE_ONE_TO_ONE / 2;

/// How a histogram of `nbins` bins over `range` is written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    range: HistRange,
    nbins: usize,
}

/// One record's worth of a histogram: its bins and the addresses it claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cell {
    /// The bins, as indices of the whole histogram.
    pub bins: (usize, usize),
    /// The record's `low_pc` and `high_pc`.
    pub low_pc: u64,
    pub high_pc: u64,
}

impl Grid {
    pub(crate) fn new(range: HistRange, nbins: usize) -> Grid {
        Grid { range, nbins }
    }

    /// Whether the histogram is written as one record over the whole range (as before the
    /// grid, byte for byte): it fits one cell, or its bins are not 4 bytes (a geometry other
    /// than the runtime's, which cells could not place).
    fn whole(&self) -> bool {
        self.nbins <= CELL_BINS || self.range.scale != FOUR_BYTE_BINS
    }

    /// The number of cells.
    pub(crate) fn len(&self) -> usize {
        if self.whole() {
            1
        } else {
            self.nbins.div_ceil(CELL_BINS)
        }
    }

    /// Cell `k`: bins `[k·CELL_BINS, (k+1)·CELL_BINS)`, the last one cut at the histogram's end;
    /// its addresses start `4·k·CELL_BINS` bytes above `lowpc` and span 4 bytes per bin (the
    /// last one may end up to 12 bytes above `highpc`, where glibc's rounding of the bin count
    /// put bins no text reaches).
    pub(crate) fn cell(&self, k: usize) -> Cell {
        if self.whole() {
            return Cell {
                bins: (0, self.nbins),
                low_pc: self.range.low_pc,
                high_pc: self.range.high_pc,
            };
        }
        let first = k * CELL_BINS;
        let end = (first + CELL_BINS).min(self.nbins);
        let at = |bin: usize| {
            self.range
                .low_pc
                .wrapping_add(CELL_BIN_BYTES.wrapping_mul(bin as u64))
        };
        Cell {
            bins: (first, end),
            low_pc: at(first),
            high_pc: at(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(low_pc: u64, high_pc: u64) -> HistRange {
        HistRange {
            low_pc,
            high_pc,
            rate: 1000,
            scale: FOUR_BYTE_BINS,
        }
    }

    /// One cell: glibc's record, unchanged.
    #[test]
    fn a_small_histogram_is_one_cell_over_glibcs_range() {
        let g = Grid::new(range(0x1000, 0x1000 + 4 * 500 - 8), 500);
        assert_eq!(g.len(), 1);
        let c = g.cell(0);
        assert_eq!(c.bins, (0, 500));
        assert_eq!((c.low_pc, c.high_pc), (0x1000, 0x1000 + 1992));
        let g = Grid::new(range(0x1000, 0x1000 + 4 * CELL_BINS as u64), CELL_BINS);
        assert_eq!(g.len(), 1);
        // Bins not of 4 bytes (a geometry other than the runtime's): one record, whatever its
        // size.
        let r = HistRange {
            scale: FOUR_BYTE_BINS + 1,
            ..range(0x1000, 0x1000 + 4 * 3 * CELL_BINS as u64 - 4)
        };
        let g = Grid::new(r, 3 * CELL_BINS);
        assert_eq!(g.len(), 1);
        assert_eq!(g.cell(0).bins, (0, 3 * CELL_BINS));
    }

    /// Cells tile the bins, every full cell has the same size and gprof scale (2), and the
    /// last is cut at the bin count.
    #[test]
    fn cells_tile_the_histogram_with_one_scale() {
        let nbins = 3 * CELL_BINS + 7;
        let low = 0x40_0000u64;
        let g = Grid::new(range(low, low + 4 * nbins as u64 - 12), nbins);
        assert_eq!(g.len(), 4);
        let mut next = (0, low);
        for k in 0..g.len() {
            let c = g.cell(k);
            assert_eq!((c.bins.0, c.low_pc), next);
            let n = c.bins.1 - c.bins.0;
            assert_eq!(((c.high_pc - c.low_pc) / 2) as f64 / n as f64, 2.0);
            next = (c.bins.1, c.high_pc);
        }
        assert_eq!(next, (nbins, low + 4 * nbins as u64));
    }
}
