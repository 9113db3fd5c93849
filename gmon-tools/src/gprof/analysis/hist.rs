//! Histograms: combining the records of several files (`hist_read_rec`) and crediting samples
//! to symbols (`hist_assign_samples`), exactly as gprof 2.40 does (spec/gprof.md §4).
//!
//! Addresses are handled as gprof's "scaled addresses" (`addr / 2`, the 2-byte `UNIT`); a bin's
//! credit is split between symbols in proportion to the overlap in UNITs, divided by the
//! *global* `hist_scale`, so a bin can credit slightly more than its count (the famous 100.15 %).
//! The last symbol of the table never gets credit (gprof reads one slot past its array).

use gmon_format::read::HistogramView;
use gmon_format::{Dimension, Endian, Histogram, ProfRate, Variant};

use super::symtab::SymbolTable;
use crate::gprof::GprofError;

/// Adds `bins` to `acc` (wrapping), skipping runs of 8 zero bins without touching `acc`:
/// most of a histogram is zero, and summing 100 profiles of a large program was a tenth of
/// the run with every bin written back.
fn sum_into(acc: &mut [u64], bins: &[u64]) {
    let (mut a8, mut b8) = (acc.chunks_exact_mut(8), bins.chunks_exact(8));
    for (a, b) in (&mut a8).zip(&mut b8) {
        if b.iter().fold(0, |x, &y| x | y) == 0 {
            continue;
        }
        for (x, &y) in a.iter_mut().zip(b) {
            *x = x.wrapping_add(y);
        }
    }
    for (x, &y) in a8.into_remainder().iter_mut().zip(b8.remainder()) {
        *x = x.wrapping_add(y);
    }
}

/// [`sum_into`] for bins still in a file's bytes (`u16`, `endian`), skipping runs of 8 zero bins
/// (16 bytes) likewise.
fn sum_u16_into(acc: &mut [u64], bytes: &[u8], endian: Endian) {
    fn sum<const BIG: bool>(acc: &mut [u64], bytes: &[u8]) {
        let read = |y: &[u8]| {
            let v = [y[0], y[1]];
            u64::from(if BIG {
                u16::from_be_bytes(v)
            } else {
                u16::from_le_bytes(v)
            })
        };
        let (mut a8, mut b8) = (acc.chunks_exact_mut(8), bytes.chunks_exact(16));
        for (a, b) in (&mut a8).zip(&mut b8) {
            if b.iter().fold(0, |x, &y| x | y) == 0 {
                continue;
            }
            for (x, y) in a.iter_mut().zip(b.chunks_exact(2)) {
                *x = x.wrapping_add(read(y));
            }
        }
        let rest = b8.remainder().chunks_exact(2);
        for (x, y) in a8.into_remainder().iter_mut().zip(rest) {
            *x = x.wrapping_add(read(y));
        }
    }
    match endian {
        Endian::Little => sum::<false>(acc, bytes),
        Endian::Big => sum::<true>(acc, bytes),
    }
}

/// A histogram record being added: its header, and its bins decoded or as the file's bytes.
struct Incoming<'a> {
    low_pc: u64,
    high_pc: u64,
    prof_rate: ProfRate,
    dimension: Dimension,
    bins: Bins<'a>,
}

/// The bins of an [`Incoming`] record.
enum Bins<'a> {
    Decoded(&'a [u64]),
    /// `u16` in the given byte order.
    Raw(&'a [u8], Endian),
}

impl Bins<'_> {
    fn len(&self) -> usize {
        match self {
            Bins::Decoded(b) => b.len(),
            Bins::Raw(b, _) => b.len() / 2,
        }
    }

    fn add_to(&self, acc: &mut [u64]) {
        match *self {
            Bins::Decoded(b) => sum_into(acc, b),
            Bins::Raw(b, endian) => sum_u16_into(acc, b, endian),
        }
    }
}

impl<'a> Incoming<'a> {
    fn of(h: &'a Histogram) -> Incoming<'a> {
        Incoming {
            low_pc: h.low_pc,
            high_pc: h.high_pc,
            prof_rate: h.prof_rate,
            dimension: h.dimension,
            bins: Bins::Decoded(&h.bins),
        }
    }
}

/// One distinct histogram range with its summed bins (`struct histogram`).
#[derive(Clone, Debug, PartialEq)]
pub struct HistRecord {
    /// First address covered.
    pub low_pc: u64,
    /// End of the covered range.
    pub high_pc: u64,
    /// Bin counts summed over every file (gprof sums in an `int`; no 16-bit wrap here).
    pub bins: BinCounts,
}

/// The bin counts of a [`HistRecord`].
#[derive(Clone, Debug)]
pub enum BinCounts {
    /// Counts summed (or decoded) into words.
    Summed(Vec<u64>),
    /// The bins of the one file read so far, left in that file's bytes: `u16` in `endian` at
    /// `at`. A profile's bins are mostly zero and most of its size; widening them to words
    /// was a third of the page faults of a dense20k run (720,000 bins, 5.8 MB).
    InFile {
        /// The whole file.
        bytes: Vec<u8>,
        /// Where the bins are in it.
        at: std::ops::Range<usize>,
        /// Their byte order.
        endian: Endian,
    },
}

impl BinCounts {
    /// The number of bins.
    pub fn len(&self) -> usize {
        match self {
            BinCounts::Summed(v) => v.len(),
            BinCounts::InFile { at, .. } => at.len() / 2,
        }
    }

    /// Whether there is no bin.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f(index, count)` for every bin whose count is not zero, in order.
    pub fn for_each_nonzero(&self, mut f: impl FnMut(usize, u64)) {
        match self {
            BinCounts::Summed(v) => {
                for (i, &c) in v.iter().enumerate() {
                    if c != 0 {
                        f(i, c);
                    }
                }
            }
            BinCounts::InFile { bytes, at, endian } => {
                let raw = bytes.get(at.clone()).unwrap_or(&[]);
                for (i, c) in raw.chunks_exact(2).enumerate() {
                    let c = match endian {
                        Endian::Little => u16::from_le_bytes([c[0], c[1]]),
                        Endian::Big => u16::from_be_bytes([c[0], c[1]]),
                    };
                    if c != 0 {
                        f(i, u64::from(c));
                    }
                }
            }
        }
    }

    /// Lets `f` change the counts as words, decoding bins still in a file's bytes first.
    pub fn update(&mut self, f: impl FnOnce(&mut [u64])) {
        match self {
            BinCounts::Summed(v) => f(v),
            BinCounts::InFile { bytes, at, endian } => {
                let mut v = vec![0; at.len() / 2];
                sum_u16_into(&mut v, bytes.get(at.clone()).unwrap_or(&[]), *endian);
                f(&mut v);
                *self = BinCounts::Summed(v);
            }
        }
    }
}

impl PartialEq for BinCounts {
    /// Equal counts, whichever way they are kept.
    fn eq(&self, other: &BinCounts) -> bool {
        let nonzero = |b: &BinCounts| {
            let mut v = Vec::new();
            b.for_each_nonzero(|i, c| v.push((i, c)));
            v
        };
        self.len() == other.len() && nonzero(self) == nonzero(other)
    }
}

/// All histogram data read so far: the records and the values the first record fixed.
#[derive(Clone, Debug, Default)]
pub struct Histograms {
    /// Distinct ranges in first-seen order.
    pub records: Vec<HistRecord>,
    /// Ticks per second (`hz`): the first record's rate; 0 when no histogram was read.
    pub hz: u32,
    /// The first record's dimension (`"seconds"`, `'s'`).
    pub dimension: Dimension,
    /// `hist_scale`: UNITs per bin, from the first record.
    pub scale: f64,
}

impl Histograms {
    /// Whether any histogram record was read.
    pub fn is_present(&self) -> bool {
        !self.records.is_empty()
    }

    /// Adds one histogram record read from `file` (`hist_read_rec`): the first fixes rate,
    /// dimension and scale; later ones must agree; identical ranges are summed, disjoint ranges
    /// kept apart, overlapping ones are fatal. A BSD `variant` adds the BSD reader's compatibility
    /// rule (identical range and bin count, and for 4.4BSD the same rate).
    pub fn add(
        &mut self,
        h: &Histogram,
        file: &str,
        whoami: &str,
        variant: Variant,
    ) -> Result<(), GprofError> {
        if self.check_and_sum(&Incoming::of(h), file, whoami, variant)? {
            self.push(h.low_pc, h.high_pc, BinCounts::Summed(h.bins.clone()));
        }
        Ok(())
    }

    /// [`Histograms::add`] for a GNU record still in its file's bytes (`endian`: the file's
    /// byte order): a new range's bins are decoded once, straight into the sum.
    pub fn add_view(
        &mut self,
        h: &HistogramView<'_>,
        endian: Endian,
        file: &str,
        whoami: &str,
    ) -> Result<(), GprofError> {
        if self.check_view(h, endian, file, whoami)? {
            let bins = Bins::Raw(h.bins, endian);
            let mut v = vec![0; bins.len()];
            bins.add_to(&mut v);
            self.push(h.low_pc, h.high_pc, BinCounts::Summed(v));
        }
        Ok(())
    }

    /// [`Histograms::add_view`] for the only histogram record of a file whose bytes the caller
    /// gives up afterwards: `Ok(true)` when it is a new range, which the caller then adds with
    /// [`Histograms::push_in_file`] (its bins stay in the file's bytes); otherwise it was
    /// summed into the range read before.
    pub fn check_view(
        &mut self,
        h: &HistogramView<'_>,
        endian: Endian,
        file: &str,
        whoami: &str,
    ) -> Result<bool, GprofError> {
        let incoming = Incoming {
            low_pc: h.low_pc,
            high_pc: h.high_pc,
            prof_rate: h.prof_rate,
            dimension: h.dimension,
            bins: Bins::Raw(h.bins, endian),
        };
        self.check_and_sum(&incoming, file, whoami, Variant::Gnu)
    }

    /// Adds a new range whose bins are `u16` in `endian` at `at` in a file's `bytes` (see
    /// [`Histograms::check_view`]).
    pub fn push_in_file(
        &mut self,
        low_pc: u64,
        high_pc: u64,
        bytes: Vec<u8>,
        at: std::ops::Range<usize>,
        endian: Endian,
    ) {
        self.push(low_pc, high_pc, BinCounts::InFile { bytes, at, endian });
    }

    /// [`Histograms::add`] that takes a new range's bins out of `h` (leaving them empty) rather
    /// than copying them: a profile's bins are most of its size (megabytes for a large program).
    pub fn add_taking(
        &mut self,
        h: &mut Histogram,
        file: &str,
        whoami: &str,
        variant: Variant,
    ) -> Result<(), GprofError> {
        if self.check_and_sum(&Incoming::of(h), file, whoami, variant)? {
            self.push(
                h.low_pc,
                h.high_pc,
                BinCounts::Summed(std::mem::take(&mut h.bins)),
            );
        }
        Ok(())
    }

    fn push(&mut self, low_pc: u64, high_pc: u64, bins: BinCounts) {
        self.records.push(HistRecord {
            low_pc,
            high_pc,
            bins,
        });
    }

    /// The checks of [`Histograms::add`], and the sum into an identical range already read.
    /// Returns whether `h` is a new range, to be pushed by the caller.
    fn check_and_sum(
        &mut self,
        h: &Incoming<'_>,
        file: &str,
        whoami: &str,
        variant: Variant,
    ) -> Result<bool, GprofError> {
        let n = h.bins.len();
        let scale = (h.high_pc.wrapping_sub(h.low_pc) / 2) as f64 / n as f64;
        let first = self.records.is_empty();
        if variant != Variant::Gnu && !first {
            let r = &self.records[0];
            if r.low_pc != h.low_pc || r.high_pc != h.high_pc || r.bins.len() != n {
                return Err(GprofError::new(format!(
                    "{file}: incompatible with first gmon file\n"
                )));
            }
            if variant == Variant::Bsd44 && self.hz != h.prof_rate.0 {
                return Err(GprofError::new(format!(
                    "{file}: profiling rate incompatible with first gmon file\n"
                )));
            }
        }
        if first {
            self.hz = h.prof_rate.0;
            self.dimension = h.dimension;
            self.scale = scale;
        } else {
            let (old, new) = (self.dimension.name_str(), h.dimension.name_str());
            if old != new {
                return Err(GprofError::new(format!(
                    "{whoami}: dimension unit changed between histogram records\n{whoami}: from '{old}'\n{whoami}: to '{new}'\n"
                )));
            }
            if self.dimension.abbrev != h.dimension.abbrev {
                return Err(GprofError::new(format!(
                    "{whoami}: dimension abbreviation changed between histogram records\n{whoami}: from '{}'\n{whoami}: to '{}'\n",
                    self.dimension.abbrev as char, h.dimension.abbrev as char
                )));
            }
            if (self.scale - scale).abs() > 0.000001 {
                return Err(GprofError::new(format!(
                    "{whoami}: different scales in histogram records"
                )));
            }
        }
        if let Some(r) = self
            .records
            .iter_mut()
            .find(|r| r.low_pc == h.low_pc && r.high_pc == h.high_pc)
        {
            r.bins.update(|acc| h.bins.add_to(acc));
            return Ok(false);
        }
        let overlaps = self
            .records
            .iter()
            .any(|r| h.low_pc < r.high_pc && r.low_pc < h.high_pc);
        if overlaps {
            return Err(GprofError::new(format!(
                "{whoami}: overlapping histogram records\n"
            )));
        }
        Ok(true)
    }
}

/// Result of crediting the histogram to the symbols.
#[derive(Clone, Debug, Default)]
pub struct Credit {
    /// Ticks credited to each symbol (`hist.time`), by symbol index.
    pub time: Vec<f64>,
    /// `total_time`: every sampled bin counts, minus the credit of symbols filtered out by
    /// `-p`/`-P` specs.
    pub total_time: f64,
}

/// `hist_assign_samples`: credits every record's bins to `symtab`'s symbols. `credited(i)` says
/// whether symbol `i` may receive credit (the INCL_FLAT / EXCL_FLAT rule); a symbol that may not
/// has its share subtracted from the total instead.
pub fn assign_samples(
    hists: &Histograms,
    symtab: &SymbolTable,
    credited: &dyn Fn(usize) -> bool,
) -> Credit {
    let syms = &symtab.symbols;
    let n = syms.len();
    let scaled: Vec<u64> = syms.iter().map(|s| s.addr / 2).collect();
    // gprof reads `scaled_addr[j + 1]` for the last symbol too: a zeroed slot past the array.
    let sym_hi = |j: usize| scaled.get(j + 1).copied().unwrap_or(0);
    let mut credit = Credit {
        time: vec![0.0; n],
        total_time: 0.0,
    };
    let scale = hists.scale;
    for r in &hists.records {
        let lowpc = r.low_pc / 2;
        let mut k: usize = 1;
        r.bins.for_each_nonzero(|i, count| {
            let bin_lo = lowpc.wrapping_add((scale * i as f64) as u64);
            let bin_hi = lowpc.wrapping_add((scale * (i + 1) as f64) as u64);
            let c = count as f64;
            credit.total_time += c;
            let mut j = k - 1;
            while j < n {
                let sym_lo = scaled[j];
                let hi = sym_hi(j);
                if bin_hi < sym_lo {
                    break;
                }
                if bin_lo < hi {
                    let overlap = bin_hi.min(hi).wrapping_sub(bin_lo.max(sym_lo));
                    if overlap > 0 {
                        let cr = overlap as f64 * c / scale;
                        if credited(j) {
                            credit.time[j] += cr;
                        } else {
                            credit.total_time -= cr;
                        }
                    }
                }
                j += 1;
                k = j;
            }
        });
    }
    credit
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bins summed from the file's bytes equal bins decoded first and then summed, in both byte
    /// orders, with runs of zeros (skipped) and a length that is not a multiple of 8.
    #[test]
    fn raw_bins_sum_like_decoded_ones() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0usize, 1, 7, 8, 9, 61, 200] {
            let bytes: Vec<u8> = (0..2 * n)
                .map(|i| if (i / 16) % 3 == 0 { 0 } else { next() as u8 })
                .collect();
            for endian in [Endian::Little, Endian::Big] {
                let decoded: Vec<u64> = bytes
                    .chunks_exact(2)
                    .map(|c| {
                        u64::from(match endian {
                            Endian::Little => u16::from_le_bytes([c[0], c[1]]),
                            Endian::Big => u16::from_be_bytes([c[0], c[1]]),
                        })
                    })
                    .collect();
                let start: Vec<u64> = (0..n).map(|_| (u64::MAX - 4) + next() % 5).collect();
                let (mut want, mut got) = (start.clone(), start);
                sum_into(&mut want, &decoded);
                sum_u16_into(&mut got, &bytes, endian);
                assert_eq!(got, want, "{n} bins, {endian:?}");
            }
        }
    }

    /// Bins left in a file's bytes read as the same counts as decoded ones, and summing into
    /// them decodes them first.
    #[test]
    fn bins_in_a_file_are_the_decoded_bins() {
        let counts: Vec<u16> = vec![0, 3, 0, 0, 65535, 0, 0, 0, 0, 7, 1];
        for endian in [Endian::Little, Endian::Big] {
            let mut bytes = vec![9u8; 5];
            for &c in &counts {
                bytes.extend(match endian {
                    Endian::Little => c.to_le_bytes(),
                    Endian::Big => c.to_be_bytes(),
                });
            }
            bytes.push(9);
            let at = 5..5 + 2 * counts.len();
            let mut in_file = BinCounts::InFile { bytes, at, endian };
            let summed = BinCounts::Summed(counts.iter().map(|&c| u64::from(c)).collect());
            assert_eq!(in_file.len(), counts.len());
            assert_eq!(in_file, summed);
            let mut seen = Vec::new();
            in_file.for_each_nonzero(|i, c| seen.push((i, c)));
            assert_eq!(seen, [(1, 3), (4, 65535), (9, 7), (10, 1)]);
            in_file.update(|acc| acc[4] += 1);
            let BinCounts::Summed(v) = &in_file else {
                panic!("still in the file after an update");
            };
            assert_eq!(v[4], 65536);
            assert_ne!(in_file, summed);
        }
    }
}
