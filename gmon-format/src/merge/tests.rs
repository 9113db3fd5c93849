//! Unit tests of the merge.

use super::merger::add_u16_bins;
use super::*;
use crate::model::{CallArc, Dimension, Encoding, Histogram, ProfRate, Record, Variant};

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
    Record::CallArc(CallArc {
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
    // 11 bins: one block of 8 (with a zero block skipped) and a remainder of 3; then a sparse
    // histogram over several groups of 256 blocks, nonzero bins at group edges and the end.
    let counts: Vec<u16> = vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 0xffff, 0x1234];
    let mut counts19 = vec![7u16; 8];
    counts19.extend(&counts);
    let mut sparse = vec![0u16; 3 * 2048 + 5];
    for i in [0, 7, 2047, 2048, 4095, 4100, 6143, 6144, 6148] {
        sparse[i] = (i as u16) | 1;
    }
    for counts19 in [counts19, sparse] {
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
            // The fast path's 32-bit pending sums.
            let mut sum = vec![1u32; counts19.len()];
            add_u16_bins(&mut sum, &bytes, big);
            let expected: Vec<u32> = counts19.iter().map(|&c| u32::from(c) + 1).collect();
            assert_eq!(sum, expected);
        }
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

#[test]
fn a_bin_overflow_undoes_the_histograms_already_added() {
    let a = profile(vec![
        Record::Histogram(hist(0, 16, vec![1, 1, 1, 1])),
        Record::Histogram(hist(100, 108, vec![u64::MAX - 1, 0])),
    ]);
    let b = profile(vec![
        Record::Histogram(hist(0, 16, vec![5, 5, 5, 5])),
        Record::Histogram(hist(100, 108, vec![0, 1])),
        Record::Histogram(hist(100, 108, vec![2, 0])),
    ]);
    let mut m = Merger::default();
    m.add(&a).unwrap();
    let err = m.add(&b).unwrap_err();
    assert!(
        matches!(err, MergeError::Overflow { input: 1, .. }),
        "{err}"
    );
    let out = m.finish().unwrap();
    assert_eq!(out.inputs, 1);
    let bins: Vec<Vec<u64>> = out.profile.histograms().map(|h| h.bins.clone()).collect();
    assert_eq!(bins, vec![vec![1, 1, 1, 1], vec![u64::MAX - 1, 0]]);
}
