//! Summing profiles without losing counts (`gmon merge`).
//!
//! A [`Merger`] takes profiles one at a time and keeps a running sum in `u64`: histogram bins are
//! added bin by bin, arcs are added by their `(from_pc, self_pc)` pair and kept in the order of
//! their first appearance (gprof breaks call-graph ties by arc order, so this order is part of the
//! result), basic-block counts are added by address. Memory is one running sum plus whatever
//! profile the caller is holding, whatever the number of inputs.
//!
//! [`Merger::finish`] gives the sum as one profile whose counts may exceed what a file's fields
//! hold; [`fit_counts`] then spreads every count that does not fit over further records that GNU
//! gprof adds back together (histogram records with the same range, arcs with the same
//! addresses). The rules are in `spec/merge.md`.
//!
//! Histograms: records with the same `(low_pc, high_pc, bins)` are summed; a record that does not
//! intersect any other is kept as a separate record (as gprof does); records that overlap are
//! merged into one record over the union of their ranges when their bins line up (same whole
//! number of 2-byte units per bin, boundaries on the same grid). Otherwise the merge fails, unless
//! [`MergeOptions::rebin`] asks to redistribute the counts over one grid proportionally to the
//! address overlap; [`Merged::rebinned`] then says which records were redistributed.

use std::collections::HashMap;
use std::fmt;

use crate::model::{
    Arc, BasicBlockCount, BasicBlockRecord, Bsd44Header, BsdOldHeader, Dimension, Encoding,
    GMON_VERSION, GMONVERSION, GnuHeader, Header, Histogram, ProfRate, Profile, PtrWidth, Record,
    Variant,
};

/// The largest count one GNU or BSD histogram bin holds (`u16`).
pub const MAX_BIN_COUNT: u64 = u16::MAX as u64;

/// The largest count one GNU arc record holds (`u32`, whatever the pointer width).
pub const MAX_GNU_ARC_COUNT: u64 = u32::MAX as u64;

/// [`fit_counts`] writes at most this many records for one histogram range (bins up to about
/// 2.7 × 10⁸), so that a corrupt sum cannot make the output explode.
pub const MAX_SPLIT_HISTOGRAMS: u64 = 4096;

/// [`fit_counts`] writes at most this many records for one arc (counts up to about 2.8 × 10¹⁴,
/// some 75 years of calls at a billion per second).
pub const MAX_SPLIT_ARCS: u64 = 1 << 16;

/// [`fit_counts`] writes at most this many arc (and basic-block) records beyond one per arc in
/// all: the per-arc cap alone lets a few hundred absurd counts ask for billions of records.
/// 2¹⁶ records of at most 29 bytes: the output grows by under 2 MB, the records in memory take
/// under 6 MB (a 136-byte BSD file with four absurd 64-bit counts once asked for 88 MB and
/// 405 MB).
const MAX_EXTRA_RECORDS: u64 = 1 << 16;

/// [`fit_counts`] writes at most this many histogram bins (64-bit each while in memory) in the
/// extra histogram records that carry the excess of bins above 65535, over all ranges.
/// 2²³ bins: 16 MB of output and 64 MB of memory at most.
const MAX_EXTRA_BINS: u64 = 1 << 23;

/// Everything that stops a merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// Two inputs disagree on byte order or pointer width, so they cannot describe one program.
    #[error(
        "input {input}: byte order / pointer width {found} differs from the first input's \
         {expected}; profiles of different targets cannot be merged"
    )]
    EncodingMismatch {
        /// Index of the input (0-based, in the order given to the merger).
        input: usize,
        /// The first input's encoding.
        expected: EncodingName,
        /// This input's encoding.
        found: EncodingName,
    },

    /// A histogram was sampled at another rate than the first one.
    #[error(
        "input {input}: histogram record {record} was sampled at {found} Hz, the first histogram \
         at {expected} Hz; samples of different rates cannot be added"
    )]
    RateMismatch {
        /// Index of the input.
        input: usize,
        /// Index of the record in the input's `records`.
        record: usize,
        /// The first histogram's rate.
        expected: u32,
        /// This record's rate.
        found: u32,
    },

    /// A histogram counts another unit (dimension) than the first one.
    #[error(
        "input {input}: histogram record {record} counts {found}, the first histogram \
         {expected}; samples of different dimensions cannot be added"
    )]
    DimensionMismatch {
        /// Index of the input.
        input: usize,
        /// Index of the record in the input's `records`.
        record: usize,
        /// The first histogram's dimension, as [`Dimension`]'s Display shows it (quoted name
        /// and abbreviation, non-printable bytes escaped).
        expected: String,
        /// Its abbreviation.
        expected_abbrev: char,
        /// This record's dimension, shown the same way.
        found: String,
        /// Its abbreviation.
        found_abbrev: char,
    },

    /// A histogram overlaps another whose bins do not line up with its own.
    #[error(
        "input {input}: histogram record {record} ({new}) overlaps {existing} but their bins do \
         not line up (an exact merge needs the same whole number of 2-byte units per bin and \
         boundaries on the same grid); use --rebin to redistribute the counts proportionally"
    )]
    MisalignedHistograms {
        /// Index of the input.
        input: usize,
        /// Index of the record in the input's `records`.
        record: usize,
        /// The new record's range.
        new: HistRange,
        /// The range it overlaps in the sum so far.
        existing: HistRange,
    },

    /// The executable identity given with an input differs from the expected one.
    #[error("input {input}: profile of executable {found}, expected {expected}")]
    ExecutableMismatch {
        /// Index of the input.
        input: usize,
        /// The expected identity.
        expected: ExecutableId,
        /// The identity that came with this input.
        found: ExecutableId,
    },

    /// A sum exceeds `u64` (or an address computed for a merged range exceeds the pointer width).
    #[error("input {input}: {what} overflows")]
    Overflow {
        /// Index of the input.
        input: usize,
        /// What overflowed.
        what: &'static str,
    },

    /// The merged profile cannot be written in the requested variant.
    #[error("cannot write the merged profile as {variant}: {problem}")]
    Unrepresentable {
        /// The requested variant.
        variant: Variant,
        /// Why.
        problem: String,
    },
}

/// Result of the merge functions.
pub type MergeResult<T> = std::result::Result<T, MergeError>;

/// Byte order and pointer width, printable (`little-endian 64-bit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodingName(pub Encoding);

impl fmt::Display for EncodingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endian = match self.0.endian {
            crate::model::Endian::Little => "little-endian",
            crate::model::Endian::Big => "big-endian",
        };
        write!(f, "{endian} {}-bit", self.0.ptr_width.bytes() * 8)
    }
}

/// A histogram's range and bin count, printable (`0x1000..0x2000 in 1024 bins`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistRange {
    /// `low_pc`.
    pub low_pc: u64,
    /// `high_pc`.
    pub high_pc: u64,
    /// Number of bins.
    pub bins: usize,
}

impl fmt::Display for HistRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x}..{:#x} in {} bins",
            self.low_pc, self.high_pc, self.bins
        )
    }
}

/// What identifies the executable a profile belongs to (a GNU build id, or any other stable
/// fingerprint). gmon.out files carry none; a runtime's sidecar file or the caller may supply one
/// through [`Merger::add_identified`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExecutableId(pub Vec<u8>);

impl fmt::Display for ExecutableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

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

/// A histogram record whose counts `--rebin` redistributed onto another grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebinned {
    /// Index of the input the record came from (`None`: the running sum itself was moved onto a
    /// wider grid).
    pub input: Option<usize>,
    /// The record's own range.
    pub from: HistRange,
    /// The grid its counts went to.
    pub to: HistRange,
}

impl fmt::Display for Rebinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.input {
            Some(i) => write!(f, "input {i}: ")?,
            None => write!(f, "running sum: ")?,
        }
        write!(f, "histogram {} redistributed onto {}", self.from, self.to)
    }
}

/// The result of a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The sum: a GNU profile with one histogram record per distinct range, one arc record per
    /// distinct `(from_pc, self_pc)` in order of first appearance, and one basic-block record when
    /// any input had one. Counts are exact and may exceed the file fields; see [`fit_counts`].
    pub profile: Profile,
    /// Histogram records that were redistributed (only with [`MergeOptions::rebin`]).
    pub rebinned: Vec<Rebinned>,
    /// Number of profiles summed.
    pub inputs: usize,
}

/// A fast hasher for address keys (FxHash's multiply-rotate): the keys are program addresses,
/// not attacker-chosen, and the default SipHash dominates the time of a large merge.
#[derive(Debug, Default, Clone, Copy)]
struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

type AddrMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<AddrHasher>>;

/// One histogram range of the running sum.
#[derive(Debug, Clone)]
struct Slot {
    low_pc: u64,
    high_pc: u64,
    bins: Vec<u64>,
}

impl Slot {
    fn range(&self) -> HistRange {
        HistRange {
            low_pc: self.low_pc,
            high_pc: self.high_pc,
            bins: self.bins.len(),
        }
    }
}

/// The streaming accumulator behind [`merge`].
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
    slot_index: HashMap<(u64, u64, usize), usize>,
    arcs: Vec<Arc>,
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
            slot_index: HashMap::new(),
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
        // they do not match an existing range exactly (the common case stays cheap).
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
        match scratch {
            Some(s) => {
                self.slots = s.slots;
                self.slot_index = s.slot_index;
                self.rebinned = s.rebinned;
                self.unit = s.unit;
            }
            None => {
                // Every range exists already: check all sums (unless no sum can reach u64::MAX),
                // then add.
                let input_total = profile
                    .histograms()
                    .flat_map(|h| h.bins.iter())
                    .try_fold(0u64, |a, &b| a.checked_add(b));
                let safe = input_total
                    .and_then(|t| self.bin_total.checked_add(t))
                    .is_some();
                let passes: &[bool] = if safe { &[true] } else { &[false, true] };
                for &pass in passes {
                    for h in profile.histograms() {
                        let key = (h.low_pc, h.high_pc, h.bins.len());
                        if let Some(&i) = self.slot_index.get(&key)
                            && let Some(slot) = self.slots.get_mut(i)
                        {
                            if pass {
                                add_bins(input, &mut slot.bins, &h.bins)?;
                            } else if slot
                                .bins
                                .iter()
                                .zip(&h.bins)
                                .any(|(s, a)| s.checked_add(*a).is_none())
                            {
                                return Err(MergeError::Overflow {
                                    input,
                                    what: "a histogram bin sum",
                                });
                            }
                        }
                    }
                }
            }
        }
        let bins_added = profile
            .histograms()
            .flat_map(|h| h.bins.iter())
            .fold(0u64, |a, &b| a.saturating_add(b));
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
    pub fn finish(self) -> MergeResult<Merged> {
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
            .extend(self.arcs.into_iter().map(Record::Arc));
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

    /// Adds a GNU file seen in place ([`GnuView`]) without building a [`Profile`]: the fast path
    /// for the common case of many runs of one program. Returns `Ok(false)`, having changed
    /// nothing, whenever the view is not the simple case — encoding not yet known or different,
    /// a histogram range or unit the sum does not have yet, or totals that could come near
    /// `u64::MAX`; the caller then reads the file fully and calls [`Merger::add_identified`],
    /// which handles (or reports) every case.
    pub fn add_view(&mut self, view: &GnuView<'_>, id: Option<&ExecutableId>) -> MergeResult<bool> {
        if self.encoding != Some(view.encoding) {
            return Ok(false);
        }
        if let (Some(expected), Some(found)) = (&self.executable, id)
            && expected != found
        {
            return Ok(false);
        }
        let mut slots = Vec::with_capacity(view.histograms.len());
        let mut bins_bound = 0u64;
        for h in &view.histograms {
            if self.unit != Some((h.prof_rate, h.dimension)) {
                return Ok(false);
            }
            let n = h.bins.len() / 2;
            match self.slot_index.get(&(h.low_pc, h.high_pc, n)) {
                Some(&i) => slots.push(i),
                None => return Ok(false),
            }
            bins_bound = bins_bound.saturating_add((n as u64).saturating_mul(MAX_BIN_COUNT));
        }
        let arcs_bound = (view.arcs.len() as u64).saturating_mul(MAX_GNU_ARC_COUNT);
        // Every u16 bin and u32 count of the file together cannot overflow the sums.
        let (Some(bin_total), Some(arc_total)) = (
            self.bin_total.checked_add(bins_bound),
            self.arc_total.checked_add(arcs_bound),
        ) else {
            return Ok(false);
        };
        let big = view.encoding.endian == crate::model::Endian::Big;
        for (h, &i) in view.histograms.iter().zip(&slots) {
            if let Some(slot) = self.slots.get_mut(i) {
                add_u16_bins(&mut slot.bins, h.bins, big);
            }
        }
        self.add_arc_iter(view.arcs.iter());
        self.bin_total = bin_total;
        self.arc_total = arc_total;
        if self.executable.is_none() {
            self.executable = id.cloned();
        }
        self.inputs += 1;
        Ok(true)
    }

    fn clone_hist_state(&self) -> Merger {
        Merger {
            options: self.options.clone(),
            inputs: self.inputs,
            encoding: self.encoding,
            executable: None,
            unit: self.unit,
            slots: self.slots.clone(),
            slot_index: self.slot_index.clone(),
            arcs: Vec::new(),
            arc_index: AddrMap::default(),
            arc_total: 0,
            bin_total: 0,
            blocks: Vec::new(),
            block_index: AddrMap::default(),
            any_blocks: false,
            rebinned: self.rebinned.clone(),
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
        let mut pending: HashMap<(u64, u64), u64> = HashMap::new();
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

    /// Adds the arcs of `profile` (checked by [`Merger::check_arcs`]).
    fn add_arcs(&mut self, profile: &Profile) {
        self.add_arc_iter(profile.arcs());
    }

    fn add_arc_iter<'a>(&mut self, arcs: impl Iterator<Item = &'a Arc>) {
        // Runs of one program list their arcs in nearly the same order, so the arc after the
        // previous one matched is tried before the hash table.
        let mut next = 0usize;
        for a in arcs {
            self.arc_total = self.arc_total.saturating_add(a.count);
            let key = (a.from_pc, a.self_pc);
            let index = match self.arcs.get(next) {
                Some(x) if (x.from_pc, x.self_pc) == key => Some(next),
                _ => self.arc_index.get(&key).copied(),
            };
            match index.and_then(|i| self.arcs.get_mut(i).map(|x| (i, x))) {
                Some((i, existing)) => {
                    existing.count = existing.count.wrapping_add(a.count);
                    next = i + 1;
                }
                None => {
                    self.arc_index.insert(key, self.arcs.len());
                    self.arcs.push(*a);
                    next = self.arcs.len();
                }
            }
        }
    }

    /// Fails when adding the basic-block counts of `profile` would overflow a count.
    fn check_blocks(&self, input: usize, profile: &Profile) -> MergeResult<()> {
        let mut pending: HashMap<u64, u64> = HashMap::new();
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

/// A histogram record of a [`GnuView`]: the header fields, and the bins as the file's bytes.
#[derive(Debug, Clone)]
pub struct HistogramView<'a> {
    /// `low_pc`.
    pub low_pc: u64,
    /// `high_pc`.
    pub high_pc: u64,
    /// `prof_rate`.
    pub prof_rate: ProfRate,
    /// `dimen` and `dimen_abbrev`.
    pub dimension: Dimension,
    /// The bins: `2 × bins` bytes, `u16` in the file's byte order.
    pub bins: &'a [u8],
    /// File offset of the first bin (so a caller can keep the offsets and the bytes apart and
    /// rebuild the view later).
    pub offset: usize,
}

/// Size of the GNU header (`struct gmon_hdr`): cookie, version and 12 spare bytes.
const GNU_HEADER_SIZE: usize = 20;

/// A GNU tagged file (version 1, histogram and arc records only) seen in place, for
/// [`Merger::add_view`]. Arcs are decoded; bins stay bytes.
#[derive(Debug, Clone)]
pub struct GnuView<'a> {
    /// The byte order and pointer width the file was walked with.
    pub encoding: Encoding,
    /// Histogram records in file order.
    pub histograms: Vec<HistogramView<'a>>,
    /// Arc records in file order.
    pub arcs: Vec<Arc>,
}

impl<'a> GnuView<'a> {
    /// Walks `bytes` as a GNU version-1 file of the given encoding. `None` when it is anything
    /// else: another variant or version, a basic-block record, a bad tag, a truncated record, a
    /// `low_pc` above `high_pc` — the full reader (`crate::read`) then reads it or says exactly
    /// what is wrong.
    pub fn parse(bytes: &'a [u8], encoding: Encoding) -> Option<GnuView<'a>> {
        let big = encoding.endian == crate::model::Endian::Big;
        let p = encoding.ptr_width.bytes();
        let u32_at = |o: usize| -> Option<u32> {
            let b: [u8; 4] = bytes.get(o..o.checked_add(4)?)?.try_into().ok()?;
            Some(if big {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            })
        };
        let addr_at = |o: usize| -> Option<u64> {
            let b = bytes.get(o..o.checked_add(p)?)?;
            Some(match (<[u8; 8]>::try_from(b), <[u8; 4]>::try_from(b)) {
                (Ok(b8), _) if big => u64::from_be_bytes(b8),
                (Ok(b8), _) => u64::from_le_bytes(b8),
                (_, Ok(b4)) if big => u64::from(u32::from_be_bytes(b4)),
                (_, Ok(b4)) => u64::from(u32::from_le_bytes(b4)),
                _ => return None,
            })
        };
        // A header cut short must reach the full reader, which reports it with its offset;
        // without this check a file of 8..19 bytes looked like a valid empty profile.
        if bytes.len() < GNU_HEADER_SIZE
            || bytes.get(0..4)? != crate::model::GMON_MAGIC
            || u32_at(4)? != GMON_VERSION
        {
            return None;
        }
        let mut view = GnuView {
            encoding,
            histograms: Vec::new(),
            arcs: Vec::new(),
        };
        let mut o = GNU_HEADER_SIZE;
        while o < bytes.len() {
            match *bytes.get(o)? {
                crate::model::GMON_TAG_TIME_HIST => {
                    let low_pc = addr_at(o + 1)?;
                    let high_pc = addr_at(o + 1 + p)?;
                    let n = usize::try_from(u32_at(o + 1 + 2 * p)?).ok()?;
                    let prof_rate = ProfRate(u32_at(o + 5 + 2 * p)?);
                    let name: [u8; 15] =
                        bytes.get(o + 9 + 2 * p..o + 24 + 2 * p)?.try_into().ok()?;
                    let abbrev = *bytes.get(o + 24 + 2 * p)?;
                    let start = o + 25 + 2 * p;
                    let end = start.checked_add(n.checked_mul(2)?)?;
                    if low_pc > high_pc {
                        return None;
                    }
                    view.histograms.push(HistogramView {
                        low_pc,
                        high_pc,
                        prof_rate,
                        dimension: Dimension { name, abbrev },
                        bins: bytes.get(start..end)?,
                        offset: start,
                    });
                    o = end;
                }
                crate::model::GMON_TAG_CG_ARC => {
                    view.arcs.push(Arc {
                        from_pc: addr_at(o + 1)?,
                        self_pc: addr_at(o + 1 + p)?,
                        count: u64::from(u32_at(o + 1 + 2 * p)?),
                    });
                    o += 5 + 2 * p;
                }
                _ => return None,
            }
        }
        Some(view)
    }
}

/// Sums `profiles` (see [`Merger`]).
pub fn merge<'a, I>(profiles: I, options: &MergeOptions) -> MergeResult<Merged>
where
    I: IntoIterator<Item = &'a Profile>,
{
    let mut m = Merger::new(options.clone());
    for p in profiles {
        m.add(p)?;
    }
    m.finish()
}

/// Adds `u16` bins given as bytes into `sum` (the caller has ruled out overflow). Real
/// histograms are mostly zeros, so runs of 8 zero bins are skipped without touching `sum`, which
/// saves most of the memory traffic of a large merge.
fn add_u16_bins(sum: &mut [u64], bytes: &[u8], big: bool) {
    let decode = |c: &[u8]| {
        let pair = [
            c.first().copied().unwrap_or(0),
            c.get(1).copied().unwrap_or(0),
        ];
        u64::from(if big {
            u16::from_be_bytes(pair)
        } else {
            u16::from_le_bytes(pair)
        })
    };
    let mut sums = sum.chunks_exact_mut(8);
    let mut blocks = bytes.chunks_exact(16);
    for (s, b) in (&mut sums).zip(&mut blocks) {
        let Ok(block) = <[u8; 16]>::try_from(b) else {
            continue;
        };
        if u128::from_ne_bytes(block) == 0 {
            continue;
        }
        for (x, c) in s.iter_mut().zip(block.chunks_exact(2)) {
            *x += decode(c);
        }
    }
    let rest = sums.into_remainder();
    for (x, c) in rest.iter_mut().zip(blocks.remainder().chunks_exact(2)) {
        *x += decode(c);
    }
}

/// Adds `add` into `sum` bin by bin; on overflow `sum` is unchanged.
fn add_bins(input: usize, sum: &mut [u64], add: &[u64]) -> MergeResult<()> {
    let overflow = sum
        .iter()
        .zip(add)
        .any(|(s, a)| s.checked_add(*a).is_none());
    if overflow {
        return Err(MergeError::Overflow {
            input,
            what: "a histogram bin sum",
        });
    }
    for (s, a) in sum.iter_mut().zip(add) {
        *s = s.wrapping_add(*a);
    }
    Ok(())
}

/// Half-open ranges `[low_pc, high_pc)` share an address.
fn intersects(a: &Slot, b: &Slot) -> bool {
    a.low_pc < b.high_pc && b.low_pc < a.high_pc
}

/// gprof's view of a histogram: bin `i` covers 2-byte units
/// `[low/2 + trunc(scale*i), low/2 + trunc(scale*(i+1)))`, `scale = ((high-low)/2) / bins`.
#[derive(Debug, Clone, Copy)]
struct Grid {
    low_unit: u64,
    scale: f64,
}

impl Grid {
    fn of(slot: &Slot) -> Grid {
        let span = slot.high_pc.saturating_sub(slot.low_pc) / 2;
        let scale = if slot.bins.is_empty() {
            0.0
        } else {
            span as f64 / slot.bins.len() as f64
        };
        Grid {
            low_unit: slot.low_pc / 2,
            scale,
        }
    }

    /// Unit range of bin `i` (truncation as gprof does it, in `f64`).
    fn bin(&self, i: usize) -> (u64, u64) {
        let lo = self.low_unit.saturating_add((self.scale * i as f64) as u64);
        let hi = self
            .low_unit
            .saturating_add((self.scale * (i as f64 + 1.0)) as u64);
        (lo, hi)
    }

    /// `(first unit, units per bin)` when every bin is the same whole number of units wide.
    fn integral(slot: &Slot) -> Option<(u64, u64)> {
        let n = u64::try_from(slot.bins.len()).ok()?;
        let span = slot.high_pc.checked_sub(slot.low_pc)? / 2;
        if n == 0 || !span.is_multiple_of(n) || span / n == 0 {
            return None;
        }
        Some((slot.low_pc / 2, span / n))
    }
}

/// Merges overlapping slots exactly when their bins line up; `Ok(None)` when they do not.
fn union_exact(input: usize, group: &[&Slot]) -> MergeResult<Option<Slot>> {
    let mut grids = Vec::with_capacity(group.len());
    for s in group {
        match Grid::integral(s) {
            Some(g) => grids.push(g),
            None => return Ok(None),
        }
    }
    let Some(&(_, step)) = grids.first() else {
        return Ok(None);
    };
    let Some(base) = group
        .iter()
        .zip(&grids)
        .min_by_key(|(s, g)| (g.0, s.low_pc))
    else {
        return Ok(None);
    };
    let (low_pc, low_unit) = (base.0.low_pc, base.1.0);
    let mut end_unit = low_unit;
    for (s, &(start, w)) in group.iter().zip(&grids) {
        if w != step || !(start - low_unit).is_multiple_of(step) {
            return Ok(None);
        }
        let n = s.bins.len() as u64;
        let end =
            n.checked_mul(w)
                .and_then(|x| x.checked_add(start))
                .ok_or(MergeError::Overflow {
                    input,
                    what: "a merged histogram range",
                })?;
        end_unit = end_unit.max(end);
    }
    let n = (end_unit - low_unit) / step;
    let high_pc = (end_unit - low_unit)
        .checked_mul(2)
        .and_then(|x| x.checked_add(low_pc))
        .ok_or(MergeError::Overflow {
            input,
            what: "a merged histogram range",
        })?;
    let n_usize = usize::try_from(n).map_err(|_| MergeError::Overflow {
        input,
        what: "a merged histogram size",
    })?;
    let mut bins = vec![0u64; n_usize];
    for (s, &(start, _)) in group.iter().zip(&grids) {
        let offset =
            usize::try_from((start - low_unit) / step).map_err(|_| MergeError::Overflow {
                input,
                what: "a merged histogram size",
            })?;
        let Some(dst) = bins.get_mut(offset..offset.saturating_add(s.bins.len())) else {
            return Ok(None);
        };
        add_bins(input, dst, &s.bins)?;
    }
    Ok(Some(Slot {
        low_pc,
        high_pc,
        bins,
    }))
}

/// Redistributes the counts of `group` onto one grid covering all of them.
///
/// The grid starts at the lowest `low_pc` and has `round(scale)` units per bin, `scale` being the
/// first (oldest) slot's; every source bin's count is split over the target bins it overlaps in
/// proportion to the overlap in 2-byte units, with floor shares and the remainder handed out one
/// by one to the largest fractional parts (ties: lowest target bin), so every count stays whole
/// and the total is exact.
fn union_rebin(input: usize, group: &[&Slot]) -> MergeResult<(Slot, Vec<Rebinned>)> {
    let overflow = MergeError::Overflow {
        input,
        what: "a rebinned histogram range",
    };
    let first = group.first().ok_or(overflow.clone())?;
    let step = (Grid::of(first).scale.round() as u64).max(1);
    let (low_pc, low_unit) = group
        .iter()
        .map(|s| (s.low_pc, s.low_pc / 2))
        .min_by_key(|&(pc, unit)| (unit, pc))
        .ok_or(overflow.clone())?;
    let end_unit = group
        .iter()
        .map(|s| s.high_pc / 2)
        .max()
        .unwrap_or(low_unit)
        .max(low_unit + 1);
    let n = (end_unit - low_unit).div_ceil(step);
    // A record with a huge range and few bins must not make the grid unbounded.
    let source_bins = group.iter().map(|s| s.bins.len() as u64).sum::<u64>();
    if n > source_bins.saturating_mul(16).max(1 << 20) {
        return Err(MergeError::Overflow {
            input,
            what: "the rebinned histogram size",
        });
    }
    let high_pc = n
        .checked_mul(step)
        .and_then(|x| x.checked_mul(2))
        .and_then(|x| x.checked_add(low_pc))
        .ok_or(overflow.clone())?;
    let n_usize = usize::try_from(n).map_err(|_| overflow.clone())?;
    let mut bins = vec![0u64; n_usize];
    let target = HistRange {
        low_pc,
        high_pc,
        bins: n_usize,
    };
    let mut notes = Vec::new();
    let last = group.len().saturating_sub(1);
    for (k, s) in group.iter().enumerate() {
        let moved = redistribute(input, s, low_unit, step, &mut bins)?;
        if moved {
            notes.push(Rebinned {
                input: if k == last { Some(input) } else { None },
                from: s.range(),
                to: target,
            });
        }
    }
    Ok((
        Slot {
            low_pc,
            high_pc,
            bins,
        },
        notes,
    ))
}

/// Adds the counts of `src` onto the grid `(low_unit, step)`; returns whether any count had to
/// be split or moved (false when `src` already lies on that grid).
fn redistribute(
    input: usize,
    src: &Slot,
    low_unit: u64,
    step: u64,
    bins: &mut [u64],
) -> MergeResult<bool> {
    let grid = Grid::of(src);
    let overflow = || MergeError::Overflow {
        input,
        what: "a rebinned histogram bin sum",
    };
    let aligned = Grid::integral(src).is_some_and(|(start, w)| {
        w == step && start >= low_unit && (start - low_unit).is_multiple_of(step)
    });
    for (i, &count) in src.bins.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let (lo, hi) = grid.bin(i);
        let first = usize::try_from(lo.saturating_sub(low_unit) / step).map_err(|_| overflow())?;
        if hi <= lo {
            // A bin of zero width (scale below 1): its samples belong at its address.
            let slot = bins.get_mut(first).ok_or_else(overflow)?;
            *slot = slot.checked_add(count).ok_or_else(overflow)?;
            continue;
        }
        let width = u128::from(hi - lo);
        let last =
            usize::try_from((hi - 1).saturating_sub(low_unit) / step).map_err(|_| overflow())?;
        let mut shares: Vec<(usize, u64, u128)> = Vec::with_capacity(last - first + 1);
        let mut given = 0u64;
        for t in first..=last {
            let t_lo = low_unit + t as u64 * step;
            let t_hi = t_lo + step;
            let overlap = u128::from(hi.min(t_hi).saturating_sub(lo.max(t_lo)));
            let exact = u128::from(count) * overlap;
            let floor = u64::try_from(exact / width).map_err(|_| overflow())?;
            given += floor;
            shares.push((t, floor, exact % width));
        }
        let mut remainder = count.saturating_sub(given);
        if remainder > 0 {
            // Largest remainder first, ties to the lowest target bin.
            shares.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
            for s in shares.iter_mut() {
                if remainder == 0 {
                    break;
                }
                s.1 += 1;
                remainder -= 1;
            }
        }
        for (t, share, _) in shares {
            let slot = bins.get_mut(t).ok_or_else(overflow)?;
            *slot = slot.checked_add(share).ok_or_else(overflow)?;
        }
    }
    Ok(!aligned)
}

/// Rewrites a merged profile so that every count fits the fields of `variant`, without changing
/// the totals gprof computes from it.
///
/// GNU: a histogram whose largest bin exceeds 65535 becomes `k = ceil(max / 65535)` records of
/// the same range, record `j` holding `min(65535, max(0, count - 65535*j))` in each bin; an arc
/// whose count exceeds `u32::MAX` becomes several records with the same addresses, `u32::MAX`
/// each and the remainder last. The extra records follow the one they extend. gprof adds
/// histogram records of the same range bin by bin and arcs by their symbols, so its totals are
/// the exact sums. Basic-block counts are pointer-sized; with 4-byte pointers a count above
/// `u32::MAX` is split over further tag-2 records the same way.
///
/// BSD (one histogram per file): bins above 65535 cannot be expressed and are an error; arcs are
/// pointer-sized and split like GNU arcs when the pointer is 4 bytes.
pub fn fit_counts(profile: &Profile, variant: Variant) -> MergeResult<Profile> {
    let ptr_max = profile.encoding.ptr_width.max_address();
    let arc_max = match variant {
        Variant::Gnu => MAX_GNU_ARC_COUNT,
        Variant::Bsd44 | Variant::BsdOld => ptr_max,
    };
    let unrepresentable = |problem: String| MergeError::Unrepresentable { variant, problem };
    let mut out = Profile {
        encoding: profile.encoding,
        header: profile.header,
        records: Vec::new(),
        trailing: Vec::new(),
    };
    let histograms: Vec<&Histogram> = profile.histograms().collect();
    out.header = match variant {
        Variant::Gnu => Header::Gnu(GnuHeader {
            version: GMON_VERSION,
            spare: [0; 12],
        }),
        Variant::Bsd44 => Header::Bsd44(Bsd44Header {
            version: GMONVERSION,
            prof_rate: histograms
                .first()
                .map_or(ProfRate::DEFAULT, |h| h.prof_rate)
                .0,
            histcounter_type: 0,
            spare: [0; 8],
        }),
        Variant::BsdOld => {
            let p = profile.encoding.ptr_width.bytes() as u32;
            Header::BsdOld(BsdOldHeader {
                header_size: 2 * p + 4,
            })
        }
    };
    if variant != Variant::Gnu {
        if histograms.len() > 1 {
            return Err(unrepresentable(format!(
                "a BSD file holds one histogram, the merged profile has {} disjoint ranges \
                 (write GNU format instead)",
                histograms.len()
            )));
        }
        if profile.basic_blocks().next().is_some() {
            return Err(unrepresentable(
                "BSD files have no basic-block records (write GNU format instead)".into(),
            ));
        }
        if let Some(h) = histograms.first() {
            if let Some(&c) = h.bins.iter().find(|&&c| c > MAX_BIN_COUNT) {
                return Err(unrepresentable(format!(
                    "a histogram bin sums to {c}, more than a BSD file's 16-bit bin holds (GNU \
                     format carries the excess in further records: use --to gnu)"
                )));
            }
            if variant == Variant::BsdOld && h.prof_rate != ProfRate::DEFAULT {
                return Err(unrepresentable(format!(
                    "old BSD files store no profiling rate and are read as {} Hz, the profile \
                     was sampled at {} Hz (use bsd44 or gnu)",
                    ProfRate::DEFAULT.0,
                    h.prof_rate.0
                )));
            }
        }
        if histograms.is_empty() {
            out.records.push(Record::Histogram(Histogram {
                low_pc: 0,
                high_pc: 0,
                prof_rate: ProfRate::DEFAULT,
                dimension: Dimension::SECONDS,
                bins: Vec::new(),
            }));
        }
    }
    check_split_size(profile, arc_max, ptr_max).map_err(unrepresentable)?;
    for r in &profile.records {
        match r {
            Record::Histogram(h) => {
                let max = h.bins.iter().copied().max().unwrap_or(0);
                // check_split_size bounded `copies` and their total size.
                let copies = max.div_ceil(MAX_BIN_COUNT).max(1);
                for j in 0..copies {
                    let floor = j * MAX_BIN_COUNT;
                    let bins = h
                        .bins
                        .iter()
                        .map(|&c| c.saturating_sub(floor).min(MAX_BIN_COUNT))
                        .collect();
                    out.records
                        .push(Record::Histogram(Histogram { bins, ..h.clone() }));
                }
            }
            Record::Arc(a) => {
                let mut left = a.count;
                loop {
                    let c = left.min(arc_max);
                    out.records.push(Record::Arc(Arc { count: c, ..*a }));
                    left -= c;
                    if left == 0 {
                        break;
                    }
                }
            }
            Record::BasicBlocks(b) => {
                let block_max = ptr_max;
                let mut rest: Vec<BasicBlockCount> = b.blocks.clone();
                loop {
                    let mut this = Vec::with_capacity(rest.len());
                    let mut next = Vec::new();
                    for blk in rest {
                        let c = blk.count.min(block_max);
                        if blk.count > c {
                            next.push(BasicBlockCount {
                                count: blk.count - c,
                                ..blk.clone()
                            });
                        }
                        this.push(BasicBlockCount { count: c, ..blk });
                    }
                    out.records.push(Record::BasicBlocks(BasicBlockRecord {
                        legacy_name: b.legacy_name.clone(),
                        blocks: this,
                    }));
                    if next.is_empty() {
                        break;
                    }
                    rest = next;
                }
            }
        }
    }
    if matches!(profile.encoding.ptr_width, PtrWidth::Four) {
        for r in &out.records {
            if let Record::Histogram(h) = r
                && h.high_pc > ptr_max
            {
                return Err(unrepresentable(format!(
                    "histogram high_pc {:#x} does not fit a 4-byte address",
                    h.high_pc
                )));
            }
        }
    }
    Ok(out)
}

/// Counts, before anything is allocated, how many records [`fit_counts`] would add to carry
/// counts that do not fit one field, and refuses (with the offending range or arc) when one item
/// or the whole profile would take more than the caps allow.
fn check_split_size(profile: &Profile, arc_max: u64, ptr_max: u64) -> Result<(), String> {
    let mut extra_bins: u64 = 0;
    let mut extra_records: u64 = 0;
    // The arc or basic block with the largest count, named when the total cap is hit.
    let mut worst: Option<(u64, String)> = None;
    let mut note = |count: u64, what: String| {
        if worst.as_ref().is_none_or(|(c, _)| count > *c) {
            worst = Some((count, what));
        }
    };
    for r in &profile.records {
        match r {
            Record::Histogram(h) => {
                let max = h.bins.iter().copied().max().unwrap_or(0);
                let copies = max.div_ceil(MAX_BIN_COUNT).max(1);
                if copies > MAX_SPLIT_HISTOGRAMS {
                    return Err(format!(
                        "a histogram bin of range {:#x}-{:#x} sums to {max}, which would take \
                         {copies} records of 16-bit bins (at most {MAX_SPLIT_HISTOGRAMS} per \
                         range are written)",
                        h.low_pc, h.high_pc
                    ));
                }
                extra_bins =
                    extra_bins.saturating_add((copies - 1).saturating_mul(h.bins.len() as u64));
            }
            Record::Arc(a) => {
                let records = a.count.div_ceil(arc_max).max(1);
                let what = format!(
                    "arc from_pc {:#x} -> self_pc {:#x} (count {})",
                    a.from_pc, a.self_pc, a.count
                );
                if records > MAX_SPLIT_ARCS {
                    return Err(format!(
                        "the {what} would take {records} arc records (at most {MAX_SPLIT_ARCS} \
                         per arc are written)"
                    ));
                }
                extra_records = extra_records.saturating_add(records - 1);
                if records > 1 {
                    note(a.count, what);
                }
            }
            Record::BasicBlocks(b) => {
                for blk in &b.blocks {
                    let records = blk.count.div_ceil(ptr_max).max(1);
                    if records > MAX_SPLIT_ARCS {
                        return Err(format!(
                            "the basic block at {:#x} counts {}, too many records to write",
                            blk.address, blk.count
                        ));
                    }
                    // Every extra tag-2 record repeats the record's blocks that still carry
                    // excess; counting each block's own extra records bounds that from above.
                    extra_records = extra_records.saturating_add(records - 1);
                    if records > 1 {
                        note(
                            blk.count,
                            format!("basic block at {:#x} (count {})", blk.address, blk.count),
                        );
                    }
                }
            }
        }
    }
    if extra_bins > MAX_EXTRA_BINS {
        return Err(format!(
            "histogram bins above 65535 would take {extra_bins} further 16-bit bins in all (at \
             most {MAX_EXTRA_BINS} are written)"
        ));
    }
    if extra_records > MAX_EXTRA_RECORDS {
        let largest = worst.map_or(String::new(), |(_, w)| format!("; the largest is the {w}"));
        return Err(format!(
            "counts above the field size would take {extra_records} further arc/basic-block \
             records in all (at most {MAX_EXTRA_RECORDS} are written){largest}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(low: u64, high: u64, bins: Vec<u64>) -> Histogram {
        Histogram {
            low_pc: low,
            high_pc: high,
            prof_rate: ProfRate(100),
            dimension: Dimension::SECONDS,
            bins,
        }
    }

    fn profile(records: Vec<Record>) -> Profile {
        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.records = records;
        p
    }

    fn arc(from: u64, to: u64, count: u64) -> Record {
        Record::Arc(Arc {
            from_pc: from,
            self_pc: to,
            count,
        })
    }

    #[test]
    fn identical_ranges_sum_bin_by_bin() {
        let a = profile(vec![Record::Histogram(hist(0, 16, vec![1, 2, 3, 4]))]);
        let b = profile(vec![Record::Histogram(hist(0, 16, vec![10, 0, 0, 40]))]);
        let m = merge([&a, &b], &MergeOptions::new()).unwrap();
        let h: Vec<_> = m.profile.histograms().collect();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].bins, vec![11, 2, 3, 44]);
    }

    #[test]
    fn arcs_keep_first_appearance_order() {
        let a = profile(vec![arc(0x30, 0x10, 1), arc(0x20, 0x10, 2)]);
        let b = profile(vec![arc(0x40, 0x10, 5), arc(0x30, 0x10, 7)]);
        let m = merge([&a, &b], &MergeOptions::new()).unwrap();
        let arcs: Vec<_> = m.profile.arcs().map(|a| (a.from_pc, a.count)).collect();
        assert_eq!(arcs, vec![(0x30, 8), (0x20, 2), (0x40, 5)]);
    }

    #[test]
    fn aligned_overlap_is_a_union() {
        // 4 bytes per bin: [0,16) and [8,24) share bins at 8 and 12.
        let a = profile(vec![Record::Histogram(hist(0, 16, vec![1, 1, 1, 1]))]);
        let b = profile(vec![Record::Histogram(hist(8, 24, vec![2, 2, 2, 2]))]);
        let m = merge([&a, &b], &MergeOptions::new()).unwrap();
        let h: Vec<_> = m.profile.histograms().collect();
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].low_pc, h[0].high_pc), (0, 24));
        assert_eq!(h[0].bins, vec![1, 1, 3, 3, 2, 2]);
    }

    #[test]
    fn misaligned_overlap_is_refused_unless_rebin() {
        let a = profile(vec![Record::Histogram(hist(0, 16, vec![4, 4, 4, 4]))]);
        let b = profile(vec![Record::Histogram(hist(2, 18, vec![4, 4, 4, 4]))]);
        let err = merge([&a, &b], &MergeOptions::new()).unwrap_err();
        assert!(
            matches!(err, MergeError::MisalignedHistograms { input: 1, .. }),
            "{err}"
        );
        let m = merge([&a, &b], &MergeOptions::new().rebin(true)).unwrap();
        let h: Vec<_> = m.profile.histograms().collect();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].total(), 32);
        assert_eq!(m.rebinned.len(), 1);
    }

    #[test]
    fn rebin_rounding_gives_remainders_to_the_lowest_bins_on_ties() {
        // A: 1 unit (2 bytes) per bin. B: one bin of 3 units holding 5 samples, spread over
        // A's first three bins: floors 1, 1, 1, and the 2 left over go to bins 0 and 1.
        let a = profile(vec![Record::Histogram(hist(0, 12, vec![10; 6]))]);
        let b = profile(vec![Record::Histogram(hist(0, 6, vec![5]))]);
        let m = merge([&a, &b], &MergeOptions::new().rebin(true)).unwrap();
        let h: Vec<_> = m.profile.histograms().collect();
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].low_pc, h[0].high_pc), (0, 12));
        assert_eq!(h[0].bins, vec![12, 12, 11, 10, 10, 10]);
        // Only B was moved.
        assert_eq!(m.rebinned.len(), 1);
        assert_eq!(m.rebinned[0].input, Some(1));
    }

    #[test]
    fn disjoint_ranges_stay_separate() {
        let a = profile(vec![Record::Histogram(hist(0, 16, vec![1, 1, 1, 1]))]);
        let b = profile(vec![Record::Histogram(hist(100, 103, vec![5]))]);
        let m = merge([&a, &b], &MergeOptions::new()).unwrap();
        assert_eq!(m.profile.histograms().count(), 2);
    }

    #[test]
    fn rate_mismatch_is_refused() {
        let a = profile(vec![Record::Histogram(hist(0, 16, vec![1, 1, 1, 1]))]);
        let mut h = hist(0, 16, vec![1, 1, 1, 1]);
        h.prof_rate = ProfRate(1000);
        let b = profile(vec![Record::Histogram(h)]);
        let err = merge([&a, &b], &MergeOptions::new()).unwrap_err();
        assert!(matches!(
            err,
            MergeError::RateMismatch {
                expected: 100,
                found: 1000,
                ..
            }
        ));
    }

    #[test]
    fn fit_counts_splits_bins_and_arcs() {
        let p = profile(vec![
            Record::Histogram(hist(0, 8, vec![70_000, 3])),
            arc(1, 2, (1 << 32) + 5),
        ]);
        let out = fit_counts(&p, Variant::Gnu).unwrap();
        let bins: Vec<_> = out.histograms().map(|h| h.bins.clone()).collect();
        assert_eq!(bins, vec![vec![65535, 3], vec![70_000 - 65535, 0]]);
        let arcs: Vec<_> = out.arcs().map(|a| a.count).collect();
        assert_eq!(arcs, vec![u32::MAX as u64, 6]);
    }

    #[test]
    fn u16_bins_from_bytes_in_both_orders() {
        // 11 bins: one block of 8 (with a zero block skipped) and a remainder of 3.
        let counts: Vec<u16> = vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 0xffff, 0x1234];
        let mut counts19 = vec![7u16; 8];
        counts19.extend(&counts);
        for big in [false, true] {
            let bytes: Vec<u8> = counts19
                .iter()
                .flat_map(|c| {
                    if big {
                        c.to_be_bytes()
                    } else {
                        c.to_le_bytes()
                    }
                })
                .collect();
            let mut sum = vec![1u64; counts19.len()];
            add_u16_bins(&mut sum, &bytes, big);
            let expected: Vec<u64> = counts19.iter().map(|&c| u64::from(c) + 1).collect();
            assert_eq!(sum, expected);
        }
    }

    #[test]
    fn absurd_sums_are_refused_rather_than_written_as_millions_of_records() {
        let p = profile(vec![Record::Histogram(hist(0, 8, vec![u64::MAX, 0]))]);
        assert!(matches!(
            fit_counts(&p, Variant::Gnu),
            Err(MergeError::Unrepresentable { .. })
        ));
        let p = profile(vec![arc(1, 2, u64::MAX)]);
        assert!(matches!(
            fit_counts(&p, Variant::Gnu),
            Err(MergeError::Unrepresentable { .. })
        ));
        // A record spanning the whole address space cannot make --rebin allocate it.
        let a = profile(vec![Record::Histogram(hist(0, 16, vec![1, 1, 1, 1]))]);
        let b = profile(vec![Record::Histogram(hist(2, u64::MAX, vec![1]))]);
        let err = merge([&a, &b], &MergeOptions::new().rebin(true)).unwrap_err();
        assert!(
            matches!(err, MergeError::Overflow { input: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn many_large_arcs_are_refused_by_their_total_before_allocating() {
        // Each arc alone is within the per-arc cap (2^15 records); together they are not.
        let count = (1u64 << 15) * MAX_GNU_ARC_COUNT;
        let records: Vec<Record> = (0..10).map(|i| arc(0x10 + i, 0x100 + i, count)).collect();
        // Not unwrap_err: an accepted result would be millions of records to print.
        let Err(err) = fit_counts(&profile(records), Variant::Gnu) else {
            panic!("10 arcs of 2^15 records each were accepted");
        };
        let msg = err.to_string();
        assert!(
            msg.starts_with("cannot write the merged profile as gnu: "),
            "{msg}"
        );
        assert!(msg.contains("in all (at most 65536 are written)"), "{msg}");
        assert!(msg.contains("from_pc 0x10 -> self_pc 0x100"), "{msg}");
        // Many histogram ranges, each within its own cap, are bounded in total too.
        let bins = vec![4000 * MAX_BIN_COUNT; 1 << 10];
        let records: Vec<Record> = (0..20u64)
            .map(|i| Record::Histogram(hist(i << 20, (i << 20) + (1 << 11), bins.clone())))
            .collect();
        let Err(err) = fit_counts(&profile(records), Variant::Gnu) else {
            panic!("20 ranges of 3999 extra records each were accepted");
        };
        let msg = err.to_string();
        assert!(msg.contains("further 16-bit bins in all"), "{msg}");
    }

    #[test]
    fn dimension_mismatch_shows_the_byte_that_differs() {
        let a = profile(vec![Record::Histogram(hist(0, 8, vec![1, 1]))]);
        let mut odd = hist(0, 8, vec![1, 1]);
        odd.dimension.name[8] = 2;
        let b = profile(vec![Record::Histogram(odd)]);
        let msg = merge([&a, &b], &MergeOptions::new())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains(r#"counts "seconds\x00\x02" 's', the first histogram "seconds" 's';"#),
            "{msg}"
        );
    }

    #[test]
    fn refused_input_leaves_the_sum_untouched() {
        let a = profile(vec![
            Record::Histogram(hist(0, 16, vec![1, 1, 1, 1])),
            arc(1, 2, 3),
        ]);
        let mut bad = hist(0, 16, vec![1, 1, 1, 1]);
        bad.prof_rate = ProfRate(7);
        let b = profile(vec![arc(1, 2, 3), Record::Histogram(bad)]);
        let mut m = Merger::default();
        m.add(&a).unwrap();
        assert!(m.add(&b).is_err());
        let out = m.finish().unwrap();
        assert_eq!(out.inputs, 1);
        assert_eq!(out.profile.arcs().map(|a| a.count).sum::<u64>(), 3);
    }
}
