//! Properties of `merge`: associative, commutative in its totals, lossless through `fit_counts`
//! and the GNU writer, and refusing (never wrapping) sums beyond `u64`.

use std::collections::BTreeMap;

use gmon_format::merge::{
    MAX_BIN_COUNT, MAX_GNU_ARC_COUNT, MergeError, MergeOptions, Merger, fit_counts, merge,
};
use gmon_format::read::GnuFile;
use gmon_format::{CallArc, Dimension, Encoding, Histogram, ProfRate, Profile, Record, Variant};
use proptest::prelude::*;

/// Ranges that are identical, overlapping on the same grid (4 bytes per bin) or disjoint.
const RANGES: [(u64, u64, usize); 4] = [(0, 64, 16), (32, 96, 16), (200, 232, 8), (96, 128, 8)];

fn histogram(range: usize, counts: Vec<u64>) -> Histogram {
    let (low, high, n) = RANGES[range % RANGES.len()];
    let mut bins = counts;
    bins.resize(n, 0);
    Histogram {
        low_pc: low,
        high_pc: high,
        prof_rate: ProfRate(100),
        dimension: Dimension::SECONDS,
        bins,
    }
}

/// Profiles with bins up to `max_bin` and arc counts up to `max_arc`.
fn profile_strategy(max_bin: u64, max_arc: u64) -> impl Strategy<Value = Profile> {
    let hist = (0..RANGES.len(), prop::collection::vec(0..=max_bin, 0..16))
        .prop_map(|(r, c)| Record::Histogram(histogram(r, c)));
    // A small address pool so that arcs repeat within and across profiles.
    let arc = (0u64..6, 0u64..6, 0..=max_arc).prop_map(|(f, s, count)| {
        Record::CallArc(CallArc {
            from_pc: 0x1000 + 16 * f,
            self_pc: 0x2000 + 16 * s,
            count,
        })
    });
    (
        prop::collection::vec(hist, 0..3),
        prop::collection::vec(arc, 0..12),
    )
        .prop_map(|(h, a)| {
            let mut p = Profile::new_gnu(Encoding::LITTLE_64);
            p.records = h;
            p.records.extend(a);
            p
        })
}

fn sum(profiles: &[&Profile]) -> Profile {
    merge(profiles.iter().copied(), &MergeOptions::new())
        .unwrap()
        .profile
}

/// Bin totals per address (bin start) and arc totals per address pair.
type Totals = BTreeMap<(u64, u64), u64>;

fn totals(p: &Profile) -> (Totals, Totals) {
    let mut bins = BTreeMap::new();
    for h in p.histograms() {
        let width = (h.high_pc - h.low_pc) / h.bins.len().max(1) as u64;
        for (i, &c) in h.bins.iter().enumerate() {
            *bins
                .entry((h.low_pc + width * i as u64, width))
                .or_insert(0) += c;
        }
    }
    let mut arcs = BTreeMap::new();
    for a in p.arcs() {
        *arcs.entry((a.from_pc, a.self_pc)).or_insert(0) += a.count;
    }
    (bins, arcs)
}

proptest! {
    #[test]
    fn merge_is_associative(
        a in profile_strategy(1 << 40, 1 << 40),
        b in profile_strategy(1 << 40, 1 << 40),
        c in profile_strategy(1 << 40, 1 << 40),
    ) {
        let left = sum(&[&sum(&[&a, &b]), &c]);
        let right = sum(&[&a, &sum(&[&b, &c])]);
        let flat = sum(&[&a, &b, &c]);
        prop_assert_eq!(&left, &flat);
        prop_assert_eq!(&right, &flat);
    }

    #[test]
    fn merge_totals_are_commutative(
        a in profile_strategy(1 << 40, 1 << 40),
        b in profile_strategy(1 << 40, 1 << 40),
    ) {
        let ab = sum(&[&a, &b]);
        let ba = sum(&[&b, &a]);
        prop_assert_eq!(totals(&ab), totals(&ba));
        // And they are the totals of the inputs.
        let (mut bins, mut arcs) = totals(&a);
        let (b_bins, b_arcs) = totals(&b);
        for (k, v) in b_bins { *bins.entry(k).or_insert(0) += v; }
        for (k, v) in b_arcs { *arcs.entry(k).or_insert(0) += v; }
        let (ab_bins, ab_arcs) = totals(&ab);
        prop_assert_eq!(ab_arcs, arcs);
        prop_assert_eq!(
            ab_bins.values().sum::<u64>(),
            bins.values().sum::<u64>()
        );
    }

    /// Counts beyond 16 and 32 bits survive `fit_counts`, the GNU writer and the reader: summing
    /// the written file's records gives back the exact sum. (Bins stay below 2^20 so that a case
    /// needs at most 17 histogram records per range.)
    #[test]
    fn overflowing_counts_are_carried_in_further_records(
        a in profile_strategy(1 << 20, 1 << 36),
        b in profile_strategy(1 << 20, 1 << 36),
    ) {
        let merged = sum(&[&a, &b]);
        let fitted = fit_counts(&merged, Variant::Gnu).unwrap();
        for h in fitted.histograms() {
            prop_assert!(h.bins.iter().all(|&c| c <= MAX_BIN_COUNT));
        }
        prop_assert!(fitted.arcs().all(|a| a.count <= MAX_GNU_ARC_COUNT));
        let bytes = gmon_format::to_vec(&fitted).unwrap();
        let back = gmon_format::read(&bytes).unwrap();
        prop_assert_eq!(sum(&[&back]), merged);
    }
}

proptest! {
    /// The in-place fast path (`GnuFile` + `Merger::add_gnu_file`) gives exactly what reading each
    /// file and `Merger::add` give, and declines (changing nothing) what it does not handle.
    #[test]
    fn fast_path_equals_full_path(
        profiles in prop::collection::vec(profile_strategy(60_000, u64::from(u32::MAX)), 1..6),
        big in any::<bool>(),
    ) {
        let encoding = if big { Encoding::BIG_64 } else { Encoding::LITTLE_64 };
        let files: Vec<Vec<u8>> = profiles
            .iter()
            .map(|p| {
                let mut p = p.clone();
                p.encoding = encoding;
                gmon_format::to_vec(&p).unwrap()
            })
            .collect();
        let mut full = Merger::default();
        let mut fast = Merger::default();
        for f in &files {
            let p = gmon_format::read(f).unwrap();
            full.add(&p).unwrap();
            let file = GnuFile::parse(f.clone(), encoding).unwrap();
            if !fast.add_gnu_file(&file, None).unwrap() {
                fast.add(&p).unwrap();
            }
        }
        prop_assert_eq!(fast.inputs(), files.len());
        prop_assert_eq!(fast.finish().unwrap(), full.finish().unwrap());
    }
}

/// A GNU file (little-endian, 8-byte pointers) with one histogram over `RANGES[0]` and `arcs`.
fn gnu_file(bins: &[u64], arcs: &[(u64, u64, u64)]) -> Vec<u8> {
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records
        .push(Record::Histogram(histogram(0, bins.to_vec())));
    p.records
        .extend(arcs.iter().map(|&(from_pc, self_pc, count)| {
            Record::CallArc(CallArc {
                from_pc,
                self_pc,
                count,
            })
        }));
    gmon_format::to_vec(&p).unwrap()
}

proptest! {
    /// Runs of one program list nearly the same arcs in nearly the same order: the fast path's
    /// sequential matching (arc i against the sum's arc after the previous match) must give the
    /// same sum, in the same order of first appearance, as the hash-table path, whatever swaps,
    /// drops, insertions and repeats the orders differ by.
    #[test]
    fn sequential_arc_matching_equals_the_hash_path(
        base in prop::collection::vec((0u64..40, 0u64..40), 1..30),
        edits in prop::collection::vec(
            prop::collection::vec((0usize..4, 0usize..64, 0u64..40, 0u64..1 << 32), 0..8),
            1..6,
        ),
    ) {
        let mut full = Merger::default();
        let mut fast = Merger::default();
        for (k, file_edits) in edits.iter().enumerate() {
            let mut arcs: Vec<(u64, u64, u64)> = base
                .iter()
                .map(|&(f, s)| (0x1000 + 16 * f, 0x2000 + 16 * s, k as u64 + 1))
                .collect();
            for &(op, at, x, count) in file_edits {
                let at = at % arcs.len().max(1);
                match op {
                    0 if arcs.len() > 1 => {
                        let other = (at + 1) % arcs.len();
                        arcs.swap(at, other);
                    }
                    1 if arcs.len() > 1 => { arcs.remove(at); }
                    2 => arcs.insert(at, (0x1000 + 16 * x, 0x2000 + 16 * (x % 7), count)),
                    _ => { let dup = arcs[at]; arcs.insert(at, (dup.0, dup.1, count)); }
                }
            }
            let bytes = gnu_file(&[k as u64; 16], &arcs);
            full.add(&gmon_format::read(&bytes).unwrap()).unwrap();
            let file = GnuFile::parse(bytes, Encoding::LITTLE_64).unwrap();
            prop_assert!(fast.add_gnu_file(&file, None).unwrap());
        }
        prop_assert_eq!(fast.finish().unwrap(), full.finish().unwrap());
    }
}

/// The fast path keeps histogram sums in 32 bits between flushes: 65538 bins of 65535 (one more
/// file than 32 bits can hold without a flush) still sum exactly.
#[test]
fn fast_histogram_sums_stay_exact_past_32_bits() {
    let bytes = gnu_file(&[65_535, 1], &[(0x1000, 0x2000, 1)]);
    let file = GnuFile::parse(bytes, Encoding::LITTLE_64).unwrap();
    let mut m = Merger::default();
    let n = 65_538u64;
    for _ in 0..n {
        assert!(m.add_gnu_file(&file, None).unwrap());
    }
    let sum = m.finish().unwrap().profile;
    let bins = &sum.histograms().next().unwrap().bins;
    assert_eq!(bins[..3], [n * 65_535, n, 0]);
    assert!(n * 65_535 > u64::from(u32::MAX));
    assert_eq!(sum.arcs().next().unwrap().count, n);
}

proptest! {
    /// Two partial sums absorbed in order equal one sequential sum.
    #[test]
    fn absorbing_partial_sums_equals_one_sum(
        profiles in prop::collection::vec(profile_strategy(1 << 20, 1 << 36), 0..6),
        split in 0usize..6,
    ) {
        let split = split.min(profiles.len());
        let mut left = Merger::default();
        let mut right = Merger::default();
        for p in &profiles[..split] { left.add(p).unwrap(); }
        for p in &profiles[split..] { right.add(p).unwrap(); }
        left.absorb(right).unwrap();
        let all = merge(profiles.iter(), &MergeOptions::new()).unwrap();
        prop_assert_eq!(left.finish().unwrap(), all);
    }
}

#[test]
fn fast_path_is_taken_for_runs_of_one_program() {
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records.push(Record::Histogram(histogram(0, vec![3; 16])));
    p.records.push(Record::CallArc(CallArc {
        from_pc: 1,
        self_pc: 2,
        count: 5,
    }));
    let bytes = gmon_format::to_vec(&p).unwrap();
    let mut m = Merger::default();
    let file = GnuFile::parse(bytes.clone(), Encoding::LITTLE_64).unwrap();
    assert!(
        m.add_gnu_file(&file, None).unwrap(),
        "the first input sets the encoding and the ranges"
    );
    assert!(m.add_gnu_file(&file, None).unwrap());
    let mut big = p.clone();
    big.encoding = Encoding::BIG_64;
    let big = GnuFile::parse(gmon_format::to_vec(&big).unwrap(), Encoding::BIG_64).unwrap();
    assert!(
        !m.add_gnu_file(&big, None).unwrap(),
        "another encoding is declined"
    );
    let cut = bytes[..bytes.len() - 1].to_vec();
    assert_eq!(
        GnuFile::parse(cut.clone(), Encoding::LITTLE_64).unwrap_err(),
        cut,
        "a truncated file is declined and its bytes given back"
    );
    let sum = m.finish().unwrap().profile;
    assert_eq!(sum.histograms().next().unwrap().bins, vec![6; 16]);
    assert_eq!(sum.arcs().next().unwrap().count, 10);
}

#[test]
fn sums_beyond_u64_are_refused_not_wrapped() {
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records.push(Record::CallArc(CallArc {
        from_pc: 1,
        self_pc: 2,
        count: u64::MAX,
    }));
    p.records
        .push(Record::Histogram(histogram(0, vec![u64::MAX])));
    let err = merge([&p, &p], &MergeOptions::new()).unwrap_err();
    assert!(
        matches!(err, MergeError::Overflow { input: 1, .. }),
        "{err}"
    );
}

#[test]
fn a_bin_of_exactly_65536_needs_two_records() {
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records
        .push(Record::Histogram(histogram(2, vec![65_536, 65_535, 1])));
    p.records.push(Record::CallArc(CallArc {
        from_pc: 1,
        self_pc: 2,
        count: 1 << 32,
    }));
    let fitted = fit_counts(&p, Variant::Gnu).unwrap();
    let bins: Vec<Vec<u64>> = fitted.histograms().map(|h| h.bins[..3].to_vec()).collect();
    assert_eq!(bins, vec![vec![65_535, 65_535, 1], vec![1, 0, 0]]);
    let arcs: Vec<u64> = fitted.arcs().map(|a| a.count).collect();
    assert_eq!(arcs, vec![u64::from(u32::MAX), 1]);
    // BSD has one histogram per file: a 17-bit bin cannot be written there.
    assert!(matches!(
        fit_counts(&p, Variant::Bsd44),
        Err(MergeError::Unrepresentable {
            variant: Variant::Bsd44,
            ..
        })
    ));
}

fn repro(name: &str) -> Profile {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/repro")
        .join(name);
    gmon_format::read(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Issue 10: `gmon merge seed roundtrip --to bsd-old` wrote a degenerate (`lpc == hpc == 0`)
/// old BSD file that `gmon dump` could not read. Every layout the merge can be written in now
/// reads back as written (or the writer refuses with a clear error; here none needs to).
#[test]
fn degenerate_merge_reads_back_in_every_layout() {
    let inputs = [
        repro("merge-bsdold-roundtrip-seed.gmon"),
        repro("merge-bsdold-roundtrip.gmon"),
    ];
    let merged = merge(inputs.iter(), &MergeOptions::new()).unwrap().profile;
    let h = merged.histograms().next().unwrap();
    assert_eq!((h.low_pc, h.high_pc), (0, 0), "the degenerate range");
    for variant in [Variant::Gnu, Variant::Bsd44, Variant::BsdOld] {
        let fitted = fit_counts(&merged, variant).unwrap();
        let out = fitted.convert_to(variant, merged.encoding).unwrap();
        let bytes = gmon_format::to_vec(&out).unwrap_or_else(|e| panic!("{variant}: {e}"));
        let back = gmon_format::read(&bytes).unwrap_or_else(|e| panic!("{variant}: {e}"));
        assert_eq!(
            back, out,
            "{variant}: detection reads back what was written"
        );
    }
}

/// Issue 10: a 136-byte BSD file with four 64-bit counts near 2⁵² once merged into 88 MB of GNU
/// arcs (405 MB of memory); the per-arc cap of spec/merge.md now refuses it before allocating.
#[test]
fn absurd_arc_counts_are_refused_within_the_caps() {
    let p = repro("amp4.gmon");
    assert_eq!(p.arcs().count(), 4);
    let merged = merge([&p], &MergeOptions::new()).unwrap().profile;
    let e = fit_counts(&merged, Variant::Gnu).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("at most 65536 per arc"), "{text}");
    // The same file stays writable in a layout whose arc counts are 64-bit.
    assert!(fit_counts(&merged, Variant::Bsd44).is_ok());
}
