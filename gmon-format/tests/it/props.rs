//! Property tests: for every variant and encoding, `read(write(p)) == p`, and for any bytes the
//! reader accepts (written profiles with random bytes overwritten), `write(read(bytes)) == bytes`.

use gmon_format::{
    BasicBlockCount, BasicBlockRecord, Bsd44Header, BsdOldHeader, CallArc, Dimension, Encoding,
    Endian, GMONVERSION, GnuHeader, Header, Histogram, LegacyBlockInfo, ProfRate, Profile,
    PtrWidth, ReadOptions, Record,
};
use proptest::collection::vec;
use proptest::prelude::*;

use super::fuzz_common::{check_read_back, exact};

fn encoding() -> impl Strategy<Value = Encoding> {
    (any::<bool>(), any::<bool>()).prop_map(|(big, wide)| Encoding {
        endian: if big { Endian::Big } else { Endian::Little },
        ptr_width: if wide {
            PtrWidth::Eight
        } else {
            PtrWidth::Four
        },
    })
}

/// An address (or pointer-sized count) that fits `w`.
fn addr(w: PtrWidth) -> impl Strategy<Value = u64> {
    prop_oneof![0..=w.max_address(), Just(w.max_address()), 0u64..0x10000]
}

fn nul_free() -> impl Strategy<Value = Vec<u8>> {
    vec(1u8..=255, 0..6)
}

fn gnu_histogram(w: PtrWidth) -> impl Strategy<Value = Histogram> {
    (
        addr(w),
        addr(w),
        any::<u32>(),
        any::<[u8; 15]>(),
        any::<u8>(),
        vec(any::<u16>(), 0..40),
    )
        .prop_map(|(low_pc, high_pc, rate, name, abbrev, bins)| Histogram {
            low_pc,
            high_pc,
            prof_rate: ProfRate(rate),
            dimension: Dimension { name, abbrev },
            bins: bins.into_iter().map(u64::from).collect(),
        })
}

fn arc(w: PtrWidth, count_max: u64) -> impl Strategy<Value = CallArc> {
    (
        addr(w),
        addr(w),
        prop_oneof![0..=count_max, Just(count_max)],
    )
        .prop_map(|(from_pc, self_pc, count)| CallArc {
            from_pc,
            self_pc,
            count,
        })
}

fn blocks(w: PtrWidth, v0: bool) -> impl Strategy<Value = BasicBlockRecord> {
    let block = (addr(w), addr(w), nul_free(), nul_free(), any::<i32>()).prop_map(
        move |(address, count, function, file, line)| BasicBlockCount {
            address,
            count,
            legacy: v0.then_some(LegacyBlockInfo {
                function,
                file,
                line,
            }),
        },
    );
    (nul_free(), vec(block, 0..5)).prop_map(move |(name, blocks)| BasicBlockRecord {
        legacy_name: v0.then_some(name),
        blocks,
    })
}

fn gnu_profile() -> impl Strategy<Value = Profile> {
    (encoding(), any::<bool>(), any::<[u8; 12]>()).prop_flat_map(|(enc, v0, spare)| {
        let w = enc.ptr_width;
        let record = prop_oneof![
            gnu_histogram(w).prop_map(Record::Histogram),
            arc(w, u64::from(u32::MAX)).prop_map(Record::CallArc),
            blocks(w, v0).prop_map(Record::BasicBlocks),
        ];
        vec(record, 0..8).prop_map(move |records| Profile {
            encoding: enc,
            header: Header::Gnu(GnuHeader {
                version: if v0 { 0 } else { 1 },
                spare,
            }),
            records,
            trailing: Vec::new(),
        })
    })
}

/// A BSD histogram: `low <= high`, seconds, counts below `bin_max`.
fn bsd_histogram(w: PtrWidth, rate: u32, bin_max: u64) -> impl Strategy<Value = Histogram> {
    (
        addr(w),
        addr(w),
        vec(prop_oneof![0..=bin_max, Just(bin_max)], 0..40),
    )
        .prop_map(move |(a, b, bins)| Histogram {
            low_pc: a.min(b),
            high_pc: a.max(b),
            prof_rate: ProfRate(rate),
            dimension: Dimension::SECONDS,
            bins,
        })
}

fn bsd_profile(
    enc: Encoding,
    header: Header,
    rate: u32,
    bin_max: u64,
) -> impl Strategy<Value = Profile> {
    let w = enc.ptr_width;
    (
        bsd_histogram(w, rate, bin_max),
        vec(arc(w, w.max_address()), 0..8),
        vec(any::<u8>(), 0..3 * w.bytes()),
    )
        .prop_map(move |(h, arcs, trailing)| {
            let mut records = vec![Record::Histogram(h)];
            records.extend(arcs.into_iter().map(Record::CallArc));
            Profile {
                encoding: enc,
                header,
                records,
                trailing,
            }
        })
}

fn bsd44_profile() -> impl Strategy<Value = Profile> {
    let counter = prop::sample::select(vec![0i32, 8, -8, 16, -16, 32, -32, 64, -64]);
    (encoding(), counter, any::<u32>(), any::<[u8; 8]>()).prop_flat_map(
        |(enc, histcounter_type, prof_rate, spare)| {
            let bits = if histcounter_type == 0 {
                16
            } else {
                histcounter_type.unsigned_abs()
            };
            let max = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let max = if histcounter_type < 0 { max >> 1 } else { max };
            let header = Header::Bsd44(Bsd44Header {
                version: GMONVERSION,
                prof_rate,
                histcounter_type,
                spare,
            });
            bsd_profile(enc, header, prof_rate, max)
        },
    )
}

fn bsd_old_profile() -> impl Strategy<Value = Profile> {
    (encoding(), any::<bool>()).prop_flat_map(|(enc, padded)| {
        let header_size = match (enc.ptr_width, padded) {
            (PtrWidth::Four, _) => 12,
            (PtrWidth::Eight, false) => 20,
            (PtrWidth::Eight, true) => 24,
        };
        let header = Header::BsdOld(BsdOldHeader { header_size });
        bsd_profile(enc, header, ProfRate::DEFAULT.0, u64::from(u16::MAX))
    })
}

fn any_profile() -> impl Strategy<Value = Profile> {
    prop_oneof![gnu_profile(), bsd44_profile(), bsd_old_profile()]
}

proptest! {
    #[test]
    fn read_of_write_is_identity(p in any_profile()) {
        let bytes = gmon_format::write::to_vec_unchecked(&p).unwrap();
        let back = gmon_format::read_with(&bytes, &exact(&p)).unwrap();
        prop_assert_eq!(&back, &p);
        check_read_back("proptest", &p, &bytes);
    }

    #[test]
    fn write_of_read_gives_the_same_bytes(
        p in any_profile(),
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        detect in any::<bool>(),
    ) {
        let mut bytes = gmon_format::write::to_vec_unchecked(&p).unwrap();
        if !bytes.is_empty() {
            for (i, b) in edits {
                let at = i.index(bytes.len());
                bytes[at] = b;
            }
        }
        let opts = if detect { ReadOptions::new() } else { exact(&p) };
        if let Ok(q) = gmon_format::read_with(&bytes, &opts) {
            prop_assert_eq!(gmon_format::write::to_vec_unchecked(&q).unwrap(), bytes);
        }
    }

    #[test]
    fn conversions_keep_counts_or_fail_cleanly(p in any_profile(), enc in encoding()) {
        for v in [gmon_format::Variant::Gnu, gmon_format::Variant::Bsd44, gmon_format::Variant::BsdOld] {
            if let Ok(c) = p.convert_to(v, enc) {
                let bytes = gmon_format::write::to_vec_unchecked(&c).unwrap();
                let back = gmon_format::read_with(&bytes, &exact(&c)).unwrap();
                prop_assert_eq!(&back, &c);
                check_read_back("proptest", &c, &bytes);
                prop_assert_eq!(c.arcs().collect::<Vec<_>>(), p.arcs().collect::<Vec<_>>());
                // Identical-range histograms may be summed, never lose samples.
                let total = |q: &Profile| q.histograms().map(|h| u128::from(h.total())).sum::<u128>();
                prop_assert_eq!(total(&c), total(&p));
            }
        }
    }
}

/// A profile shaped like glibc's output: one histogram over `[low, high)` with
/// `ceil8((high - low) / 2) / 2` bins and "seconds", then arcs whose addresses lie in the range.
fn realistic_profile() -> impl Strategy<Value = Profile> {
    (0u64..0x1000_0000, 1u64..0x4000)
        .prop_flat_map(|(low, text)| {
            let low = low & !3;
            let high = low + ((text + 3) & !3);
            let nbins = (((high - low) / 2 + 7) & !7) / 2;
            let bins = vec(0u64..200, nbins as usize);
            let arcs = vec((low..high, low..high, 1u64..100_000), 0..30);
            (Just((low, high)), bins, arcs)
        })
        .prop_map(|((low_pc, high_pc), bins, arcs)| {
            let mut p = Profile::new_gnu(Encoding::LITTLE_64);
            p.records.push(Record::Histogram(Histogram {
                low_pc,
                high_pc,
                prof_rate: ProfRate::DEFAULT,
                dimension: Dimension::SECONDS,
                bins,
            }));
            for (from_pc, self_pc, count) in arcs {
                p.records.push(Record::CallArc(CallArc {
                    from_pc: from_pc & !15,
                    self_pc,
                    count,
                }));
            }
            p
        })
}

proptest! {
    #[test]
    fn detection_finds_variant_and_encoding_of_realistic_profiles(
        p in realistic_profile(),
        enc in encoding(),
        v in prop::sample::select(vec![
            gmon_format::Variant::Gnu,
            gmon_format::Variant::Bsd44,
            gmon_format::Variant::BsdOld,
        ]),
    ) {
        let c = p.convert_to(v, enc).unwrap();
        let bytes = gmon_format::to_vec(&c).unwrap();
        let got = gmon_format::read(&bytes).unwrap();
        prop_assert_eq!(got, c);
    }
}

/// Degenerate profiles (issue 10): `lpc == hpc`, empty or zero-bin histograms, ranges at 0,
/// arcs whose addresses are 0 or all ones, a few counts, in every variant and encoding.
fn degenerate_profile() -> impl Strategy<Value = Profile> {
    let addr = prop::sample::select(vec![0u64, 1, 0x1000, 0x1879, 0x0005_1879, 0xffff_ffff]);
    (
        encoding(),
        0..3usize,
        addr.clone(),
        0u64..3,
        vec(prop::sample::select(vec![0u64, 1, 0x1879, 5, 0xffff]), 0..6),
        vec((addr.clone(), addr, 0u64..3), 0..5),
        0..2usize,
    )
        .prop_map(|(enc, v, low, span, bins, arcs, partial)| {
            let hist = Histogram {
                low_pc: low,
                high_pc: low + span * 4,
                prof_rate: ProfRate::DEFAULT,
                dimension: Dimension::SECONDS,
                bins,
            };
            let header = match v {
                0 => Header::Gnu(GnuHeader {
                    version: 1,
                    spare: [0; 12],
                }),
                1 => Header::Bsd44(Bsd44Header {
                    version: GMONVERSION,
                    prof_rate: 100,
                    histcounter_type: 0,
                    spare: [0; 8],
                }),
                _ => Header::BsdOld(BsdOldHeader {
                    header_size: 2 * enc.ptr_width.bytes() as u32 + 4,
                }),
            };
            let mut records = vec![Record::Histogram(hist)];
            records.extend(arcs.into_iter().map(|(from_pc, self_pc, count)| {
                Record::CallArc(CallArc {
                    from_pc,
                    self_pc,
                    count,
                })
            }));
            let bsd = v != 0;
            Profile {
                encoding: enc,
                header,
                records,
                trailing: if bsd && partial == 1 {
                    vec![0; 3]
                } else {
                    Vec::new()
                },
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// The checked writer never writes a file that detection reads as anything but what was
    /// written, and refuses (never panics) otherwise; what it refuses still reads back when the
    /// encoding is forced.
    #[test]
    fn writers_refuse_what_does_not_read_back(p in degenerate_profile()) {
        let Ok(bytes) = gmon_format::write::to_vec_unchecked(&p) else {
            return Ok(()); // an address that does not fit: refused before the check
        };
        prop_assert_eq!(gmon_format::read_with(&bytes, &exact(&p)).unwrap(), p.clone());
        check_read_back("degenerate", &p, &bytes);
    }
}

/// The degenerate strategy exercises both outcomes of the check, so the property above is not
/// vacuous.
#[test]
fn degenerate_profiles_are_both_written_and_refused() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut written, mut refused) = (0, 0);
    for _ in 0..2000 {
        let p = degenerate_profile()
            .new_tree(&mut runner)
            .unwrap()
            .current();
        match gmon_format::to_vec(&p) {
            Ok(_) => written += 1,
            Err(gmon_format::Error::ReadsBackDifferently { .. }) => refused += 1,
            Err(_) => {}
        }
    }
    assert!(
        written > 100 && refused > 10,
        "written {written}, refused {refused}"
    );
}
