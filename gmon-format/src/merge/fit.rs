//! Fitting sums into a file's fields: further records that gprof adds back together
//! (`spec/merge.md`, "Writing sums that do not fit").

use crate::model::{
    BasicBlockCount, BasicBlockRecord, Bsd44Header, BsdOldHeader, CallArc, Dimension, GMON_VERSION,
    GMONVERSION, GnuHeader, Header, Histogram, ProfRate, Profile, PtrWidth, Record, Variant,
};

use super::error::{MergeError, MergeResult};

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
    fit_counts_owned(profile.clone(), variant)
}

/// [`fit_counts`] on a profile the caller gives away: records that fit (every histogram whose
/// bins all fit, in a large merge) are moved into the result rather than copied, so that
/// writing a sum takes no second copy of it.
pub fn fit_counts_owned(profile: Profile, variant: Variant) -> MergeResult<Profile> {
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
    check_split_size(&profile, arc_max, ptr_max).map_err(unrepresentable)?;
    // Records whose counts fit (all of them, but in a sum past 16 or 32 bits) are moved, not
    // copied, so that writing a large sum takes no second copy of it.
    // (check_split_size bounded the number of pieces.)
    let total: usize = profile
        .records
        .iter()
        .map(|r| pieces(r, arc_max, ptr_max))
        .sum();
    if total == profile.records.len() {
        out.records.extend(profile.records);
    } else {
        out.records.reserve(total);
        for r in profile.records {
            split(r, arc_max, ptr_max, &mut |piece| out.records.push(piece));
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

/// How many records [`split`] makes of `r`.
fn pieces(r: &Record, arc_max: u64, ptr_max: u64) -> usize {
    let n = match r {
        Record::Histogram(h) => h
            .bins
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .div_ceil(MAX_BIN_COUNT),
        Record::CallArc(a) => a.count.div_ceil(arc_max),
        Record::BasicBlocks(b) => b
            .blocks
            .iter()
            .map(|blk| blk.count.div_ceil(ptr_max))
            .max()
            .unwrap_or(0),
    };
    usize::try_from(n.max(1)).unwrap_or(usize::MAX)
}

/// Gives `r` to `emit` as the records that carry its counts within the fields (see
/// [`fit_counts`]): `r` itself when they fit.
fn split(r: Record, arc_max: u64, ptr_max: u64, emit: &mut dyn FnMut(Record)) {
    match r {
        Record::Histogram(h) => {
            let max = h.bins.iter().copied().max().unwrap_or(0);
            if max <= MAX_BIN_COUNT {
                return emit(Record::Histogram(h));
            }
            for j in 0..max.div_ceil(MAX_BIN_COUNT) {
                let floor = j * MAX_BIN_COUNT;
                let bins = h
                    .bins
                    .iter()
                    .map(|&c| c.saturating_sub(floor).min(MAX_BIN_COUNT))
                    .collect();
                emit(Record::Histogram(Histogram {
                    low_pc: h.low_pc,
                    high_pc: h.high_pc,
                    prof_rate: h.prof_rate,
                    dimension: h.dimension,
                    bins,
                }));
            }
        }
        Record::CallArc(a) => {
            let mut left = a.count;
            loop {
                let c = left.min(arc_max);
                emit(Record::CallArc(CallArc { count: c, ..a }));
                left -= c;
                if left == 0 {
                    break;
                }
            }
        }
        Record::BasicBlocks(b) => {
            let mut rest: Vec<BasicBlockCount> = b.blocks;
            loop {
                let mut this = Vec::with_capacity(rest.len());
                let mut next = Vec::new();
                for blk in rest {
                    let c = blk.count.min(ptr_max);
                    if blk.count > c {
                        next.push(BasicBlockCount {
                            count: blk.count - c,
                            ..blk.clone()
                        });
                    }
                    this.push(BasicBlockCount { count: c, ..blk });
                }
                emit(Record::BasicBlocks(BasicBlockRecord {
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

/// Counts, before anything is allocated, how many records [`fit_counts`] would add to carry
/// counts that do not fit one field, and refuses (with the offending range or arc) when one item
/// or the whole profile would take more than the caps allow.
fn check_split_size(profile: &Profile, arc_max: u64, ptr_max: u64) -> Result<(), String> {
    let mut extra_bins: u64 = 0;
    let mut extra_records: u64 = 0;
    // The arc or basic block with the largest count, named when the total cap is hit.
    let mut worst: Option<(u64, String)> = None;
    let mut note = |count: u64, what: &dyn Fn() -> String| {
        if worst.as_ref().is_none_or(|(c, _)| count > *c) {
            worst = Some((count, what()));
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
            Record::CallArc(a) => {
                let records = a.count.div_ceil(arc_max).max(1);
                // Named only when it may be reported: formatting every arc of a large profile
                // once took longer than summing it.
                let what = || {
                    format!(
                        "arc from_pc {:#x} -> self_pc {:#x} (count {})",
                        a.from_pc, a.self_pc, a.count
                    )
                };
                if records > MAX_SPLIT_ARCS {
                    return Err(format!(
                        "the {} would take {records} arc records (at most {MAX_SPLIT_ARCS} per \
                         arc are written)",
                        what()
                    ));
                }
                if records > 1 {
                    extra_records = extra_records.saturating_add(records - 1);
                    note(a.count, &what);
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
                        note(blk.count, &|| {
                            format!("basic block at {:#x} (count {})", blk.address, blk.count)
                        });
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
