//! The streaming accumulator: [`Merger`], its options and its result.

use std::ops::AddAssign;

use byteorder::{BigEndian, ByteOrder, LittleEndian};
use rustc_hash::FxHashMap;

use crate::model::{
    BasicBlockCount, BasicBlockRecord, CallArc, Dimension, Encoding, Histogram, ProfRate, Profile,
    Record,
};

use super::error::{EncodingName, ExecutableId, MergeError, MergeResult};
use super::fit::{MAX_BIN_COUNT, MAX_GNU_ARC_COUNT};
use super::grid::{Rebinned, Slot, add_bins, intersects, union_exact, union_rebin};
use crate::read::gnu_file::GnuFile;

/// How to merge.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MergeOptions {
    /// Redistribute the counts of overlapping histograms whose bins do not line up, proportionally
    /// to the address overlap, instead of failing.
    pub rebin: bool,
    /// The executable every input must belong to, when known. Inputs added with a different
    /// identity are refused; inputs without one are accepted.
    pub executable: Option<ExecutableId>,
}

impl MergeOptions {
    /// Default options: exact merges only, no executable check.
    pub fn new() -> MergeOptions {
        MergeOptions::default()
    }

    /// Sets [`MergeOptions::rebin`].
    pub fn rebin(mut self, rebin: bool) -> MergeOptions {
        self.rebin = rebin;
        self
    }

    /// Sets [`MergeOptions::executable`].
    pub fn executable(mut self, id: Option<ExecutableId>) -> MergeOptions {
        self.executable = id;
        self
    }
}

/// The result of a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The sum: a GNU profile with one histogram record per distinct range, one arc record per
    /// distinct `(from_pc, self_pc)` in order of first appearance, and one basic-block record when
    /// any input had one. Counts are exact and may exceed the file fields; see [`fit_counts`](super::fit_counts).
    pub profile: Profile,
    /// Histogram records that were redistributed (only with [`MergeOptions::rebin`]).
    pub rebinned: Vec<Rebinned>,
    /// Number of profiles summed.
    pub inputs: usize,
}

/// How many files the fast path adds into 32-bit sums before flushing them: 65537 × 65535 is
/// `u32::MAX`.
const PENDING_ADDS: u32 = 65_537;

/// Maps keyed by program addresses use rustc-hash's Fx hasher: the keys are not
/// attacker-chosen, and the default SipHash dominates the time of a large merge.
type AddrMap<K, V> = FxHashMap<K, V>;

/// The streaming accumulator behind [`merge()`](super::merge).
#[derive(Debug, Clone)]
pub struct Merger {
    options: MergeOptions,
    inputs: usize,
    encoding: Option<Encoding>,
    executable: Option<ExecutableId>,
    /// Rate and dimension of the first histogram seen.
    unit: Option<(ProfRate, Dimension)>,
    /// Disjoint ranges in order of first appearance.
    slots: Vec<Slot>,
    /// `(low_pc, high_pc, bins)` of each slot, for the common case of identical ranges.
    slot_index: AddrMap<(u64, u64, usize), usize>,
    /// What the fast path ([`Merger::add_gnu_file`]) added to each slot since the last
    /// [`Merger::flush`], in 32 bits: half the memory (and cache misses) of the `u64` sums, and
    /// no overflow check, since [`PENDING_ADDS`] 16-bit bins cannot overflow 32 bits. Empty
    /// when nothing is pending; else one vector per slot (empty for a slot not added to).
    pending: Vec<Vec<u32>>,
    /// Files added into `pending` since the last flush.
    pending_adds: u32,
    arcs: Vec<CallArc>,
    arc_index: AddrMap<(u64, u64), usize>,
    /// Upper bounds (saturating sums of everything added) that let most inputs skip the
    /// per-count overflow checks.
    arc_total: u64,
    bin_total: u64,
    blocks: Vec<BasicBlockCount>,
    block_index: AddrMap<u64, usize>,
    any_blocks: bool,
    rebinned: Vec<Rebinned>,
}

impl Default for Merger {
    fn default() -> Self {
        Merger::new(MergeOptions::default())
    }
}

impl Merger {
    /// An empty sum.
    pub fn new(options: MergeOptions) -> Merger {
        Merger {
            executable: options.executable.clone(),
            options,
            inputs: 0,
            encoding: None,
            unit: None,
            slots: Vec::new(),
            slot_index: AddrMap::default(),
            pending: Vec::new(),
            pending_adds: 0,
            arcs: Vec::new(),
            arc_index: AddrMap::default(),
            arc_total: 0,
            bin_total: 0,
            blocks: Vec::new(),
            block_index: AddrMap::default(),
            any_blocks: false,
            rebinned: Vec::new(),
        }
    }

    /// Number of profiles added so far.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Adds one profile. On error the sum is left as it was before the call.
    pub fn add(&mut self, profile: &Profile) -> MergeResult<()> {
        self.add_identified(profile, None)
    }

    /// Adds one profile together with the identity of the executable it belongs to, when the
    /// caller knows it (a build id from a runtime sidecar, say). The first identity seen (or
    /// [`MergeOptions::executable`]) is the reference; a different one is refused.
    pub fn add_identified(
        &mut self,
        profile: &Profile,
        id: Option<&ExecutableId>,
    ) -> MergeResult<()> {
        self.flush();
        let input = self.inputs;
        if let (Some(expected), Some(found)) = (&self.executable, id)
            && expected != found
        {
            return Err(MergeError::ExecutableMismatch {
                input,
                expected: expected.clone(),
                found: found.clone(),
            });
        }
        if let Some(expected) = self.encoding
            && expected != profile.encoding
        {
            return Err(MergeError::EncodingMismatch {
                input,
                expected: EncodingName(expected),
                found: EncodingName(profile.encoding),
            });
        }
        // Validate everything that can fail before touching the sum, so that a refused input
        // leaves no trace. Histograms are checked against a scratch copy of the slots only when
        // they do not match an existing range exactly; in the common case they are added at
        // once and undone if a bin overflows.
        self.check_units(input, profile)?;
        self.check_arcs(input, profile)?;
        self.check_blocks(input, profile)?;
        let all_known = profile.histograms().all(|h| {
            self.slot_index
                .contains_key(&(h.low_pc, h.high_pc, h.bins.len()))
        });
        let mut scratch: Option<Merger> = None;
        if !all_known {
            let mut s = self.clone_hist_state();
            for (record, r) in profile.records.iter().enumerate() {
                if let Record::Histogram(h) = r {
                    s.add_histogram(input, record, h)?;
                }
            }
            scratch = Some(s);
        }
        let bins_added = match scratch {
            Some(s) => {
                self.slots = s.slots;
                self.slot_index = s.slot_index;
                self.rebinned = s.rebinned;
                self.unit = s.unit;
                profile
                    .histograms()
                    .flat_map(|h| h.bins.iter())
                    .fold(0u64, |a, &b| a.saturating_add(b))
            }
            None => self.add_known_histograms(input, profile)?,
        };
        self.bin_total = self.bin_total.saturating_add(bins_added);
        self.add_arcs(profile);
        self.add_blocks(profile);
        self.encoding = Some(profile.encoding);
        if self.executable.is_none() {
            self.executable = id.cloned();
        }
        self.inputs += 1;
        Ok(())
    }

    /// Adds another running sum, as if its inputs had been added here one by one after the ones
    /// already added (arcs keep their order of first appearance across both).
    pub fn absorb(&mut self, other: Merger) -> MergeResult<()> {
        if other.inputs == 0 {
            return Ok(());
        }
        let profile = other.finish()?;
        let added = profile.inputs;
        let mut rebinned = profile.rebinned;
        self.add(&profile.profile)?;
        self.inputs = self.inputs.saturating_add(added).saturating_sub(1);
        self.rebinned.append(&mut rebinned);
        Ok(())
    }

    /// The sum of everything added, as one profile (see [`Merged::profile`]).
    pub fn finish(mut self) -> MergeResult<Merged> {
        self.flush();
        // The indexes go before the records are built, which is the peak of a large merge.
        drop(std::mem::take(&mut self.arc_index));
        drop(std::mem::take(&mut self.slot_index));
        drop(std::mem::take(&mut self.block_index));
        let encoding = self.encoding.unwrap_or(Encoding::LITTLE_64);
        let mut profile = Profile::new_gnu(encoding);
        let (rate, dimension) = self.unit.unwrap_or((ProfRate::DEFAULT, Dimension::SECONDS));
        profile
            .records
            .reserve(self.slots.len() + self.arcs.len() + 1);
        for slot in self.slots {
            profile.records.push(Record::Histogram(Histogram {
                low_pc: slot.low_pc,
                high_pc: slot.high_pc,
                prof_rate: rate,
                dimension,
                bins: slot.bins,
            }));
        }
        profile
            .records
            .extend(self.arcs.into_iter().map(Record::CallArc));
        if self.any_blocks {
            profile.records.push(Record::BasicBlocks(BasicBlockRecord {
                legacy_name: None,
                blocks: self.blocks,
            }));
        }
        Ok(Merged {
            profile,
            rebinned: self.rebinned,
            inputs: self.inputs,
        })
    }

    /// The byte order and pointer width of the inputs so far (`None` before the first).
    pub fn encoding(&self) -> Option<Encoding> {
        self.encoding
    }

    /// Adds a GNU file checked in place ([`GnuFile`]) without building a [`Profile`]: the fast
    /// path for the common case of many runs of one program, the first run included. Returns
    /// `Ok(false)`, having changed nothing, whenever the file is not the simple case — another
    /// encoding, a unit other than the sum's, a histogram range that overlaps a range of the sum
    /// without being equal to it (or two ranges of the file that overlap), or totals that could
    /// come near `u64::MAX`; the caller then reads the file fully and calls
    /// [`Merger::add_identified`], which handles (or reports) every case.
    pub fn add_gnu_file(&mut self, file: &GnuFile, id: Option<&ExecutableId>) -> MergeResult<bool> {
        if self.encoding.is_some_and(|e| e != file.encoding()) {
            return Ok(false);
        }
        if let (Some(expected), Some(found)) = (&self.executable, id)
            && expected != found
        {
            return Ok(false);
        }
        // Where each histogram goes: an existing slot, or a new one (a range that meets no range
        // of the sum nor another new range of this file).
        let mut targets = Vec::with_capacity(file.histograms().len());
        let mut new_ranges: Vec<(u64, u64, usize)> = Vec::new();
        let mut unit = self.unit;
        let mut bins_bound = 0u64;
        for h in file.histograms() {
            let this = (h.prof_rate, h.dimension);
            if *unit.get_or_insert(this) != this {
                return Ok(false);
            }
            let n = h.bins.len() / 2;
            let key = (h.low_pc, h.high_pc, n);
            match self.slot_index.get(&key) {
                Some(&i) => targets.push(Some(i)),
                None => {
                    let meets = |lo: u64, hi: u64| h.low_pc < hi && lo < h.high_pc;
                    if new_ranges.contains(&key)
                        || self.slots.iter().any(|s| meets(s.low_pc, s.high_pc))
                        || new_ranges.iter().any(|&(lo, hi, _)| meets(lo, hi))
                    {
                        return Ok(false);
                    }
                    new_ranges.push(key);
                    targets.push(None);
                }
            }
            bins_bound = bins_bound.saturating_add((n as u64).saturating_mul(MAX_BIN_COUNT));
        }
        let arcs_bound = (file.arc_count() as u64).saturating_mul(MAX_GNU_ARC_COUNT);
        // Every u16 bin and u32 count of the file together cannot overflow the sums.
        let (Some(bin_total), Some(arc_total)) = (
            self.bin_total.checked_add(bins_bound),
            self.arc_total.checked_add(arcs_bound),
        ) else {
            return Ok(false);
        };
        let big = file.encoding().endian == crate::model::Endian::Big;
        if self.pending_adds == PENDING_ADDS {
            self.flush();
        }
        for (h, target) in file.histograms().zip(targets) {
            let n = h.bins.len() / 2;
            let i = match target {
                Some(i) => i,
                None => {
                    // Zeros from the allocator: pages the flush touches only at the end.
                    self.slot_index
                        .insert((h.low_pc, h.high_pc, n), self.slots.len());
                    self.slots.push(Slot {
                        low_pc: h.low_pc,
                        high_pc: h.high_pc,
                        bins: vec![0; n],
                    });
                    self.slots.len() - 1
                }
            };
            self.pending.resize_with(self.slots.len(), Vec::new);
            if let Some(p) = self.pending.get_mut(i) {
                if p.len() != n {
                    *p = vec![0; n];
                }
                add_u16_bins(p, h.bins, big);
            }
        }
        self.pending_adds += 1;
        self.unit = unit;
        if self.arcs.len() < file.arc_count() {
            // The first input (or one with more arcs): room for its arcs at once, rather than
            // growing the table and rehashing it a dozen times.
            let more = file.arc_count() - self.arcs.len();
            self.arcs.reserve(more);
            self.arc_index.reserve(more);
        }
        let wide = file.encoding().ptr_width == crate::model::PtrWidth::Eight;
        match (big, wide) {
            (false, true) => self.add_arc_records::<LittleEndian, 8, 21>(file.arc_runs()),
            (true, true) => self.add_arc_records::<BigEndian, 8, 21>(file.arc_runs()),
            (false, false) => self.add_arc_records::<LittleEndian, 4, 13>(file.arc_runs()),
            (true, false) => self.add_arc_records::<BigEndian, 4, 13>(file.arc_runs()),
        }
        self.bin_total = bin_total;
        self.arc_total = arc_total;
        self.encoding = Some(file.encoding());
        if self.executable.is_none() {
            self.executable = id.cloned();
        }
        self.inputs += 1;
        Ok(true)
    }

    /// Adds GNU arc records given as runs of `R`-byte records (tag byte, two `P`-byte
    /// addresses, a `u32` count). Runs of one program list their arcs in nearly the same order
    /// (glibc writes them walking its own tables), so each record is first compared with the
    /// sum's arc after the one the previous record went to: a sequential pass over both, with
    /// the hash table only on a mismatch ([`Merger::add_arc`]).
    fn add_arc_records<'a, E: ByteOrder, const P: usize, const R: usize>(
        &mut self,
        runs: impl Iterator<Item = &'a [u8]>,
    ) {
        let mut next = 0usize;
        for run in runs {
            for record in run.as_chunks::<R>().0 {
                let word =
                    |at: usize, n: usize| record.get(at..at + n).map_or(0, |b| E::read_uint(b, n));
                let (from_pc, self_pc, count) = (word(1, P), word(1 + P, P), word(1 + 2 * P, 4));
                if let Some(x) = self.arcs.get_mut(next)
                    && x.from_pc == from_pc
                    && x.self_pc == self_pc
                {
                    x.count = x.count.wrapping_add(count);
                    next += 1;
                } else {
                    next = self.add_arc(CallArc {
                        from_pc,
                        self_pc,
                        count,
                    });
                }
            }
        }
    }

    /// Adds the pending 32-bit sums of the fast path into the slots' `u64` sums (which
    /// `bin_total` keeps from overflowing).
    fn flush(&mut self) {
        for (slot, p) in self.slots.iter_mut().zip(std::mem::take(&mut self.pending)) {
            for (sum, add) in slot.bins.iter_mut().zip(p) {
                *sum = sum.wrapping_add(u64::from(add));
            }
        }
        self.pending_adds = 0;
    }

    /// A scratch merger with this one's histogram state only (what a histogram-only trial add
    /// reads and changes); arcs, blocks and the executable start empty.
    fn clone_hist_state(&self) -> Merger {
        Merger {
            inputs: self.inputs,
            encoding: self.encoding,
            executable: None,
            unit: self.unit,
            slots: self.slots.clone(),
            slot_index: self.slot_index.clone(),
            rebinned: self.rebinned.clone(),
            ..Merger::new(self.options.clone())
        }
    }

    /// Every histogram of `profile` must have the first histogram's rate and dimension.
    fn check_units(&self, input: usize, profile: &Profile) -> MergeResult<()> {
        let mut unit = self.unit;
        for (record, r) in profile.records.iter().enumerate() {
            let Record::Histogram(h) = r else { continue };
            match unit {
                None => unit = Some((h.prof_rate, h.dimension)),
                Some((rate, dimension)) => {
                    if rate != h.prof_rate {
                        return Err(MergeError::RateMismatch {
                            input,
                            record,
                            expected: rate.0,
                            found: h.prof_rate.0,
                        });
                    }
                    if dimension != h.dimension {
                        return Err(MergeError::DimensionMismatch {
                            input,
                            record,
                            expected: dimension.to_string(),
                            expected_abbrev: char::from(dimension.abbrev),
                            found: h.dimension.to_string(),
                            found_abbrev: char::from(h.dimension.abbrev),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn add_histogram(&mut self, input: usize, record: usize, h: &Histogram) -> MergeResult<()> {
        if self.unit.is_none() {
            self.unit = Some((h.prof_rate, h.dimension));
        }
        let key = (h.low_pc, h.high_pc, h.bins.len());
        if let Some(&i) = self.slot_index.get(&key)
            && let Some(slot) = self.slots.get_mut(i)
        {
            return add_bins(input, &mut slot.bins, &h.bins);
        }
        let new = Slot {
            low_pc: h.low_pc,
            high_pc: h.high_pc,
            bins: h.bins.clone(),
        };
        let overlapping: Vec<usize> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| intersects(s, &new))
            .map(|(i, _)| i)
            .collect();
        let Some(&first) = overlapping.first() else {
            self.slots.push(new);
            self.reindex();
            return Ok(());
        };
        let mut group: Vec<&Slot> = overlapping
            .iter()
            .filter_map(|&i| self.slots.get(i))
            .collect();
        group.push(&new);
        let merged = match union_exact(input, &group)? {
            Some(slot) => slot,
            None if self.options.rebin => {
                let (slot, notes) = union_rebin(input, &group)?;
                self.rebinned.extend(notes);
                slot
            }
            None => {
                let existing = group.first().map(|s| s.range()).unwrap_or(new.range());
                return Err(MergeError::MisalignedHistograms {
                    input,
                    record,
                    new: new.range(),
                    existing,
                });
            }
        };
        // The union takes the place of the earliest slot it covers; the others go away.
        let mut kept = Vec::with_capacity(self.slots.len());
        for (i, slot) in std::mem::take(&mut self.slots).into_iter().enumerate() {
            if i == first {
                kept.push(merged.clone());
            } else if !overlapping.contains(&i) {
                kept.push(slot);
            }
        }
        self.slots = kept;
        self.reindex();
        Ok(())
    }

    fn reindex(&mut self) {
        self.slot_index = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.low_pc, s.high_pc, s.bins.len()), i))
            .collect();
    }

    /// Fails when adding the arcs of `profile` would overflow a count.
    fn check_arcs(&self, input: usize, profile: &Profile) -> MergeResult<()> {
        let input_total = profile.arcs().try_fold(0u64, |a, x| a.checked_add(x.count));
        if input_total
            .and_then(|t| self.arc_total.checked_add(t))
            .is_some()
        {
            return Ok(());
        }
        let mut pending: AddrMap<(u64, u64), u64> = AddrMap::default();
        for a in profile.arcs() {
            let key = (a.from_pc, a.self_pc);
            let base = match pending.get(&key) {
                Some(&v) => v,
                None => self
                    .arc_index
                    .get(&key)
                    .and_then(|&i| self.arcs.get(i))
                    .map_or(0, |x| x.count),
            };
            let sum = base.checked_add(a.count).ok_or(MergeError::Overflow {
                input,
                what: "an arc count sum",
            })?;
            pending.insert(key, sum);
        }
        Ok(())
    }

    /// Adds the histograms of `profile`, whose ranges the sum has, in one pass over each
    /// (wrapping, noting any wrap); a sum that wrapped undoes what this input added (wrapping
    /// arithmetic inverts exactly) and refuses it. Returns the saturating total of the bins.
    fn add_known_histograms(&mut self, input: usize, profile: &Profile) -> MergeResult<u64> {
        let mut added: Vec<(usize, &Histogram)> = Vec::new();
        let mut total = 0u64;
        let mut wrapped = false;
        for h in profile.histograms() {
            let key = (h.low_pc, h.high_pc, h.bins.len());
            let Some(&i) = self.slot_index.get(&key) else {
                continue;
            };
            let Some(slot) = self.slots.get_mut(i) else {
                continue;
            };
            added.push((i, h));
            let (w, t) = add_bins_wrapping(&mut slot.bins, &h.bins);
            total = total.saturating_add(t);
            if w {
                wrapped = true;
                break;
            }
        }
        if wrapped {
            for (i, h) in added {
                if let Some(slot) = self.slots.get_mut(i) {
                    for (s, a) in slot.bins.iter_mut().zip(&h.bins) {
                        *s = s.wrapping_sub(*a);
                    }
                }
            }
            return Err(MergeError::Overflow {
                input,
                what: "a histogram bin sum",
            });
        }
        Ok(total)
    }

    /// Adds the arcs of `profile` (checked by [`Merger::check_arcs`]).
    fn add_arcs(&mut self, profile: &Profile) {
        self.add_arc_iter(profile.arcs().copied());
    }

    fn add_arc_iter(&mut self, arcs: impl Iterator<Item = CallArc>) {
        // As in `add_arc_records`: the arc after the previous one's is tried first.
        let mut next = 0usize;
        for a in arcs {
            self.arc_total = self.arc_total.saturating_add(a.count);
            match self.arcs.get_mut(next) {
                Some(x) if x.from_pc == a.from_pc && x.self_pc == a.self_pc => {
                    x.count = x.count.wrapping_add(a.count);
                    next += 1;
                }
                _ => next = self.add_arc(a),
            }
        }
    }

    /// Adds `a` to the sum's arc of the same addresses, found by the hash table, or appends it
    /// as a new arc; returns the index after it (where the next arc is looked for first).
    #[inline(never)]
    fn add_arc(&mut self, a: CallArc) -> usize {
        let key = (a.from_pc, a.self_pc);
        match self
            .arc_index
            .get(&key)
            .and_then(|&i| self.arcs.get_mut(i).map(|x| (i, x)))
        {
            Some((i, existing)) => {
                existing.count = existing.count.wrapping_add(a.count);
                i + 1
            }
            None => {
                self.arc_index.insert(key, self.arcs.len());
                self.arcs.push(a);
                self.arcs.len()
            }
        }
    }

    /// Fails when adding the basic-block counts of `profile` would overflow a count.
    fn check_blocks(&self, input: usize, profile: &Profile) -> MergeResult<()> {
        let mut pending: AddrMap<u64, u64> = AddrMap::default();
        for b in profile.basic_blocks() {
            let base = match pending.get(&b.address) {
                Some(&v) => v,
                None => self
                    .block_index
                    .get(&b.address)
                    .and_then(|&i| self.blocks.get(i))
                    .map_or(0, |x| x.count),
            };
            let sum = base.checked_add(b.count).ok_or(MergeError::Overflow {
                input,
                what: "a basic-block count sum",
            })?;
            pending.insert(b.address, sum);
        }
        Ok(())
    }

    /// Adds the basic-block counts of `profile` (checked by [`Merger::check_blocks`]).
    fn add_blocks(&mut self, profile: &Profile) {
        for r in &profile.records {
            if matches!(r, Record::BasicBlocks(_)) {
                self.any_blocks = true;
            }
        }
        for b in profile.basic_blocks() {
            match self
                .block_index
                .get(&b.address)
                .and_then(|&i| self.blocks.get_mut(i))
            {
                Some(existing) => existing.count = existing.count.wrapping_add(b.count),
                None => {
                    self.block_index.insert(b.address, self.blocks.len());
                    self.blocks.push(BasicBlockCount {
                        address: b.address,
                        count: b.count,
                        legacy: None,
                    });
                }
            }
        }
    }
}

/// Adds `add` into `sum` bin by bin, wrapping, in one branch-free pass; returns whether a sum
/// wrapped, and the total of `add` (saturating).
fn add_bins_wrapping(sum: &mut [u64], add: &[u64]) -> (bool, u64) {
    let (mut wrapped, mut total, mut total_wrapped) = (false, 0u64, false);
    for (s, &a) in sum.iter_mut().zip(add) {
        let (x, w) = s.overflowing_add(a);
        *s = x;
        wrapped |= w;
        let (t, w) = total.overflowing_add(a);
        total = t;
        total_wrapped |= w;
    }
    (wrapped, if total_wrapped { u64::MAX } else { total })
}

/// Adds `u16` bins given as bytes into `sum` (the caller has ruled out overflow). Real
/// histograms are mostly zeros, so runs of 8 zero bins are skipped without touching `sum`, which
/// saves most of the memory traffic of a large merge. The nonzero runs of a group are first
/// listed without a branch, then added 8 bins at a time in fixed-size (vectorised) steps.
pub(super) fn add_u16_bins<T: Copy + From<u16> + AddAssign>(
    sum: &mut [T],
    bytes: &[u8],
    big: bool,
) {
    /// Runs of 8 bins looked at per group (4 KiB of bins).
    const GROUP: usize = 256;
    let decode = |c: &[u8]| {
        let pair = [
            c.first().copied().unwrap_or(0),
            c.get(1).copied().unwrap_or(0),
        ];
        T::from(if big {
            u16::from_be_bytes(pair)
        } else {
            u16::from_le_bytes(pair)
        })
    };
    let mut hits = [0u16; GROUP];
    let whole = bytes.len() / 16 * 16;
    let (runs, tail) = bytes.split_at(whole.min(bytes.len()));
    for (g, group) in runs.chunks(16 * GROUP).enumerate() {
        let mut n = 0usize;
        for (i, run) in group.chunks_exact(16).enumerate() {
            let nonzero = <[u8; 16]>::try_from(run).is_ok_and(|b| u128::from_ne_bytes(b) != 0);
            if let Some(h) = hits.get_mut(n) {
                *h = i as u16;
            }
            n += usize::from(nonzero);
        }
        let hits = hits.get(..n).unwrap_or(&[]);
        for &i in hits {
            let run = usize::from(i);
            let at = (g * GROUP + run) * 8;
            let s = sum
                .get_mut(at..at + 8)
                .and_then(|s| <&mut [T; 8]>::try_from(s).ok());
            let b = group
                .get(run * 16..run * 16 + 16)
                .and_then(|b| <&[u8; 16]>::try_from(b).ok());
            if let (Some(s), Some(b)) = (s, b) {
                add8(s, b, big);
            }
        }
    }
    let rest = sum.get_mut(whole / 2..).unwrap_or(&mut []);
    for (x, c) in rest.iter_mut().zip(tail.chunks_exact(2)) {
        *x += decode(c);
    }
}

/// Adds 8 `u16` bins given as 16 bytes into 8 sums (fixed sizes: no bounds checks, and the
/// compiler vectorises it).
#[inline(always)]
fn add8<T: Copy + From<u16> + AddAssign>(sum: &mut [T; 8], bytes: &[u8; 16], big: bool) {
    let mut bins = [0u16; 8];
    for (v, c) in bins.iter_mut().zip(bytes.as_chunks::<2>().0) {
        *v = if big {
            u16::from_be_bytes(*c)
        } else {
            u16::from_le_bytes(*c)
        };
    }
    for (x, v) in sum.iter_mut().zip(bins) {
        *x += T::from(v);
    }
}
