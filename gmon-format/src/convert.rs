//! Converting a profile to another variant, byte order or pointer width (`gmon convert`).
//!
//! What carries over and what does not:
//!
//! * **Records** keep their order. Arcs and histograms carry over between every pair of
//!   variants; basic-block records only exist in GNU files, so converting a profile that has
//!   any to a BSD layout is an error.
//! * **Several histograms → BSD.** A BSD file holds exactly one histogram. GNU histogram records
//!   with the same `low_pc`, `high_pc`, bin count and dimension are summed bin by bin (what
//!   gprof does when it reads them). Disjoint records whose bins all cover the same even number
//!   of bytes and lie on one grid (the cells the gmon-write runtime writes, spec/runtime.md §1)
//!   are joined into one histogram over their span, zeros between them: gprof maps every bin to
//!   the same addresses as before. Any other combination (ranges that partly overlap, or bins
//!   of different sizes or off the grid) is an error, because the single BSD histogram cannot
//!   hold it without changing what gprof reports. A profile without a histogram gets an empty
//!   one (`lpc = hpc = 0`, no bins).
//! * **Values that do not fit** the target (an address above 4 GiB for 4-byte pointers, an arc
//!   count above `u32::MAX` for GNU, a bin above `u16::MAX` for GNU or a 16-bit BSD counter) are
//!   errors naming the record; nothing is truncated or wrapped.
//! * **Headers.** Converting within a family keeps the header (GNU version and spare bytes; the
//!   4.4BSD spare words and `histcounter_type`; the old BSD header size when the target pointer
//!   width allows it). A new GNU header is version 1 with zero spare bytes; a new 4.4BSD header
//!   has `GMONVERSION`, the histogram's rate, `histcounter_type` 0 (`u16` bins, which GNU gprof
//!   assumes) and zero spare words; a new old BSD header is 12 or 20 bytes (GNU gprof's view).
//! * **Rate and dimension.** Old BSD files store no rate, so only a 100 Hz histogram converts to
//!   old BSD (use 4.4BSD otherwise); BSD files store no dimension, so it must be seconds.
//! * **Trailing bytes** (a BSD file's partial last arc) are kept only when nothing changes.

use crate::error::{Error, Result};
use crate::model::{
    Bsd44Header, BsdOldHeader, Dimension, Encoding, GMON_VERSION, GMONVERSION, GnuHeader, Header,
    Histogram, ProfRate, Profile, PtrWidth, Record, Variant,
};
use crate::read::bsd_old::header_sizes;
use crate::write::to_vec;

impl Profile {
    /// This profile in `variant` with `encoding`, checked to be writable (see the module doc of
    /// `convert.rs` for what carries over).
    ///
    /// ```
    /// use gmon_format::{CallArc, Encoding, Profile, Record, Variant};
    /// let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    /// p.records.push(Record::CallArc(CallArc { from_pc: 0x1000, self_pc: 0x2000, count: 3 }));
    /// let bsd = p.convert_to(Variant::Bsd44, Encoding::BIG_32).unwrap();
    /// assert_eq!(bsd.arcs().count(), 1);
    /// assert!(gmon_format::to_vec(&bsd).is_ok());
    /// ```
    pub fn convert_to(&self, variant: Variant, encoding: Encoding) -> Result<Profile> {
        let trailing = if variant == self.header.variant() && encoding == self.encoding {
            self.trailing.clone()
        } else {
            Vec::new()
        };
        let converted = match variant {
            Variant::Gnu => Profile {
                encoding,
                header: match self.header {
                    Header::Gnu(h) => Header::Gnu(h),
                    _ => Header::Gnu(GnuHeader {
                        version: GMON_VERSION,
                        spare: [0; 12],
                    }),
                },
                records: self.records.clone(),
                trailing,
            },
            Variant::Bsd44 | Variant::BsdOld => {
                let mut records = vec![Record::Histogram(self.single_histogram(variant)?)];
                records.extend(self.arcs().map(|a| Record::CallArc(*a)));
                let header = bsd_header(&self.header, variant, encoding.ptr_width, &records);
                Profile {
                    encoding,
                    header,
                    records,
                    trailing,
                }
            }
        };
        to_vec(&converted)?;
        Ok(converted)
    }

    /// The one histogram a BSD file can hold, summing identical-range GNU records.
    fn single_histogram(&self, variant: Variant) -> Result<Histogram> {
        if self
            .records
            .iter()
            .any(|r| matches!(r, Record::BasicBlocks(_)))
        {
            return Err(Error::CannotConvert {
                variant,
                problem: "BSD files have no basic-block records",
            });
        }
        let mut hists = self.histograms();
        let Some(first) = hists.next() else {
            return Ok(Histogram {
                low_pc: 0,
                high_pc: 0,
                prof_rate: ProfRate::DEFAULT,
                dimension: Dimension::SECONDS,
                bins: Vec::new(),
            });
        };
        let mut sum = first.clone();
        let mut others = Vec::new();
        for h in hists {
            if (h.low_pc, h.high_pc, h.bins.len(), h.dimension)
                != (sum.low_pc, sum.high_pc, sum.bins.len(), sum.dimension)
            {
                others.push(h);
                continue;
            }
            add_bins(&mut sum.bins, &h.bins, variant)?;
        }
        if others.is_empty() {
            return Ok(sum);
        }
        let all: Vec<&Histogram> = std::iter::once(&sum).chain(others).collect();
        let Some((mut one, at)) = join_on_grid(&all) else {
            return Err(Error::CannotConvert {
                variant,
                problem: "BSD files hold one histogram, and these histogram records cover \
                          different ranges that do not lie on one grid of bins, or span more \
                          than 2^25 bins (only identical ranges are summed)",
            });
        };
        for (h, i) in all.iter().zip(at) {
            let dst = one.bins.get_mut(i..i + h.bins.len()).unwrap_or_default();
            add_bins(dst, &h.bins, variant)?;
        }
        Ok(one)
    }
}

/// The most bins [`join_on_grid`] makes (8 bytes each in memory): a text of 128 MiB at 4
/// bytes a bin.
const MAX_JOINED_BINS: u64 = 1 << 25;

/// Adds `bins` into `acc`, refusing a sum that overflows.
fn add_bins(acc: &mut [u64], bins: &[u64], variant: Variant) -> Result<()> {
    for (a, &b) in acc.iter_mut().zip(bins) {
        *a = a.checked_add(b).ok_or(Error::CannotConvert {
            variant,
            problem: "summing the histogram records overflows a bin",
        })?;
    }
    Ok(())
}

/// An empty histogram over the span of `hists`, and where each one's bins start in it, when all
/// their bins cover the same even number of bytes, start on one grid of that size, and no two
/// ranges partly overlap (identical ones are summed); `None` otherwise.
fn join_on_grid(hists: &[&Histogram]) -> Option<(Histogram, Vec<usize>)> {
    let first = hists.first()?;
    let width = first.high_pc.checked_sub(first.low_pc)?;
    let step = width.checked_div(first.bins.len() as u64)?;
    let low = hists.iter().map(|h| h.low_pc).min()?;
    let high = hists.iter().map(|h| h.high_pc).max()?;
    let on_grid = |h: &&Histogram| {
        h.dimension == first.dimension
            && h.high_pc.checked_sub(h.low_pc) == step.checked_mul(h.bins.len() as u64)
            && (h.low_pc - low).is_multiple_of(step)
    };
    if step == 0 || !step.is_multiple_of(2) || !hists.iter().all(on_grid) {
        return None;
    }
    for (i, a) in hists.iter().enumerate() {
        for b in hists.get(i + 1..).unwrap_or_default() {
            let same = (a.low_pc, a.high_pc) == (b.low_pc, b.high_pc);
            if !same && a.low_pc < b.high_pc && b.low_pc < a.high_pc {
                return None;
            }
        }
    }
    let nbins = usize::try_from((high - low) / step)
        .ok()
        .filter(|&n| n as u64 <= MAX_JOINED_BINS)?;
    let at = hists
        .iter()
        .map(|h| ((h.low_pc - low) / step) as usize)
        .collect();
    let one = Histogram {
        low_pc: low,
        high_pc: high,
        prof_rate: first.prof_rate,
        dimension: first.dimension,
        bins: vec![0; nbins],
    };
    Some((one, at))
}

/// The header of a BSD conversion target, keeping what the source's header has in common.
fn bsd_header(source: &Header, variant: Variant, width: PtrWidth, records: &[Record]) -> Header {
    let rate = match records.first() {
        Some(Record::Histogram(h)) => h.prof_rate.0,
        _ => ProfRate::DEFAULT.0,
    };
    match (variant, source) {
        (Variant::Bsd44, Header::Bsd44(h)) => Header::Bsd44(Bsd44Header {
            prof_rate: rate,
            ..*h
        }),
        (Variant::Bsd44, _) => Header::Bsd44(Bsd44Header {
            version: GMONVERSION,
            prof_rate: rate,
            histcounter_type: 0,
            spare: [0; 8],
        }),
        (_, Header::BsdOld(h)) if header_sizes(width).contains(&h.header_size) => {
            Header::BsdOld(*h)
        }
        _ => Header::BsdOld(BsdOldHeader {
            header_size: 2 * width.bytes() as u32 + 4,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BasicBlockRecord, CallArc};

    fn hist(low: u64, bins: Vec<u64>) -> Histogram {
        Histogram {
            low_pc: low,
            high_pc: low + 4 * bins.len() as u64,
            prof_rate: ProfRate::DEFAULT,
            dimension: Dimension::SECONDS,
            bins,
        }
    }

    fn gnu(records: Vec<Record>) -> Profile {
        Profile {
            records,
            ..Profile::new_gnu(Encoding::LITTLE_64)
        }
    }

    #[test]
    fn identical_ranges_are_summed_for_bsd() {
        let arc = Record::CallArc(CallArc {
            from_pc: 1,
            self_pc: 2,
            count: 3,
        });
        let p = gnu(vec![
            Record::Histogram(hist(0x10, vec![1, 2])),
            arc.clone(),
            Record::Histogram(hist(0x10, vec![10, 20])),
        ]);
        for v in [Variant::Bsd44, Variant::BsdOld] {
            let c = p.convert_to(v, Encoding::BIG_32).unwrap();
            assert_eq!(
                c.records,
                vec![Record::Histogram(hist(0x10, vec![11, 22])), arc.clone()]
            );
        }
    }

    /// The cells the gmon-write runtime writes (disjoint records of 4-byte bins on one grid,
    /// some repeated) become one histogram over their span, zeros between them.
    #[test]
    fn disjoint_records_on_one_grid_are_joined_for_bsd() {
        let p = gnu(vec![
            Record::Histogram(hist(0x20, vec![1, 2])),
            Record::Histogram(hist(0x10, vec![3])),
            Record::Histogram(hist(0x20, vec![10, 20])),
            Record::Histogram(hist(0x30, vec![5])),
        ]);
        for v in [Variant::Bsd44, Variant::BsdOld] {
            let c = p.convert_to(v, Encoding::LITTLE_64).unwrap();
            assert_eq!(
                c.records,
                vec![Record::Histogram(hist(
                    0x10,
                    vec![3, 0, 0, 0, 11, 22, 0, 0, 5]
                ))]
            );
        }
    }

    #[test]
    fn disjoint_ranges_and_basic_blocks_are_refused_for_bsd() {
        // Off the grid of the first record's 4-byte bins.
        let p = gnu(vec![
            Record::Histogram(hist(0x10, vec![1])),
            Record::Histogram(hist(0x22, vec![1])),
        ]);
        let e = p
            .convert_to(Variant::Bsd44, Encoding::LITTLE_64)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::CannotConvert {
                    variant: Variant::Bsd44,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("cannot convert to bsd44: BSD files hold one"),
            "{e}"
        );
        let p = gnu(vec![Record::BasicBlocks(BasicBlockRecord {
            legacy_name: None,
            blocks: vec![],
        })]);
        let e = p
            .convert_to(Variant::BsdOld, Encoding::LITTLE_64)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::CannotConvert {
                    variant: Variant::BsdOld,
                    ..
                }
            ),
            "{e}"
        );
        // Bins of other sizes; ranges that partly overlap; a span too large to hold.
        let wide = Histogram {
            high_pc: 0x40,
            ..hist(0x30, vec![1])
        };
        for other in [
            wide,
            hist(0x12, vec![1, 1]),
            hist(0x14, vec![1, 1]),
            hist(1 << 40, vec![1]),
        ] {
            let p = gnu(vec![
                Record::Histogram(hist(0x10, vec![1, 1])),
                Record::Histogram(other),
            ]);
            assert!(matches!(
                p.convert_to(Variant::Bsd44, Encoding::LITTLE_64),
                Err(Error::CannotConvert { .. })
            ));
        }
        // Summing must not wrap.
        let p = gnu(vec![
            Record::Histogram(hist(0x10, vec![u64::MAX])),
            Record::Histogram(hist(0x10, vec![1])),
        ]);
        assert!(matches!(
            p.convert_to(Variant::Bsd44, Encoding::LITTLE_64),
            Err(Error::CannotConvert { .. })
        ));
    }

    #[test]
    fn no_histogram_becomes_an_empty_one() {
        let p = gnu(vec![Record::CallArc(CallArc {
            from_pc: 1,
            self_pc: 2,
            count: 3,
        })]);
        let c = p.convert_to(Variant::BsdOld, Encoding::LITTLE_32).unwrap();
        assert_eq!(c.histograms().next(), Some(&hist(0, vec![])));
        assert_eq!(c.header, Header::BsdOld(BsdOldHeader { header_size: 12 }));
    }

    #[test]
    fn counts_that_do_not_fit_are_errors_not_wrapped() {
        let mut p = gnu(vec![Record::Histogram(hist(0x10, vec![1]))]);
        p.header = Header::Bsd44(Bsd44Header {
            version: GMONVERSION,
            prof_rate: 100,
            histcounter_type: 32,
            spare: [0; 8],
        });
        p.records.push(Record::CallArc(CallArc {
            from_pc: 1,
            self_pc: 2,
            count: 1 << 33,
        }));
        assert!(matches!(
            p.convert_to(Variant::Gnu, Encoding::LITTLE_64),
            Err(Error::DoesNotFit { record: 1, .. })
        ));
        p.records[1] = Record::CallArc(CallArc {
            from_pc: 1,
            self_pc: 2,
            count: 1,
        });
        p.records[0] = Record::Histogram(hist(0x10, vec![70000]));
        assert!(matches!(
            p.convert_to(Variant::Gnu, Encoding::LITTLE_64),
            Err(Error::DoesNotFit { record: 0, .. })
        ));
        assert!(matches!(
            p.convert_to(Variant::BsdOld, Encoding::LITTLE_64),
            Err(Error::DoesNotFit { record: 0, .. })
        ));
        // Within 4.4BSD the wide counter is kept.
        let c = p.convert_to(Variant::Bsd44, Encoding::BIG_64).unwrap();
        assert!(matches!(
            c.header,
            Header::Bsd44(Bsd44Header {
                histcounter_type: 32,
                ..
            })
        ));
    }

    #[test]
    fn old_bsd_needs_100_hz() {
        let mut h = hist(0x10, vec![1]);
        h.prof_rate = ProfRate(1000);
        let p = gnu(vec![Record::Histogram(h)]);
        assert!(matches!(
            p.convert_to(Variant::BsdOld, Encoding::LITTLE_64),
            Err(Error::Unrepresentable { record: 0, .. })
        ));
        let c = p.convert_to(Variant::Bsd44, Encoding::LITTLE_64).unwrap();
        assert!(matches!(
            c.header,
            Header::Bsd44(Bsd44Header {
                prof_rate: 1000,
                ..
            })
        ));
    }

    #[test]
    fn headers_and_trailing_bytes() {
        let mut p = gnu(vec![]);
        p.header = Header::Gnu(GnuHeader {
            version: 1,
            spare: [7; 12],
        });
        let c = p.convert_to(Variant::Gnu, Encoding::BIG_32).unwrap();
        assert_eq!(c.header, p.header);
        let bsd = p.convert_to(Variant::BsdOld, Encoding::LITTLE_64).unwrap();
        let mut with_tail = bsd.clone();
        with_tail.trailing = vec![1, 2];
        assert_eq!(
            with_tail
                .convert_to(Variant::BsdOld, Encoding::LITTLE_64)
                .unwrap()
                .trailing,
            vec![1, 2]
        );
        assert!(
            with_tail
                .convert_to(Variant::BsdOld, Encoding::BIG_64)
                .unwrap()
                .trailing
                .is_empty()
        );
        let back = with_tail
            .convert_to(Variant::Gnu, Encoding::LITTLE_64)
            .unwrap();
        assert_eq!(
            back.header,
            Header::Gnu(GnuHeader {
                version: 1,
                spare: [0; 12]
            })
        );
        assert!(back.trailing.is_empty());
        // A 24-byte old header stays 24 bytes while the pointers stay 8 bytes wide.
        let mut padded = bsd;
        padded.header = Header::BsdOld(BsdOldHeader { header_size: 24 });
        let c = padded
            .convert_to(Variant::BsdOld, Encoding::BIG_64)
            .unwrap();
        assert_eq!(c.header, padded.header);
        let c = padded
            .convert_to(Variant::BsdOld, Encoding::BIG_32)
            .unwrap();
        assert_eq!(c.header, Header::BsdOld(BsdOldHeader { header_size: 12 }));
    }
}
