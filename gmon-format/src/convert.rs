//! Converting a profile to another variant, byte order or pointer width (`gmon convert`).
//!
//! What carries over and what does not:
//!
//! * **Records** keep their order. Arcs and histograms carry over between every pair of
//!   variants; basic-block records only exist in GNU files, so converting a profile that has
//!   any to a BSD layout is an error.
//! * **Several histograms → BSD.** A BSD file holds exactly one histogram. GNU histogram records
//!   with the same `low_pc`, `high_pc`, bin count and dimension are summed bin by bin (what
//!   gprof does when it reads them); any other combination (e.g. disjoint ranges) is an error,
//!   because the single BSD histogram cannot hold it without changing what gprof reports. A
//!   profile without a histogram gets an empty one (`lpc = hpc = 0`, no bins).
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
    /// use gmon_format::{Arc, Encoding, Profile, Record, Variant};
    /// let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    /// p.records.push(Record::Arc(Arc { from_pc: 0x1000, self_pc: 0x2000, count: 3 }));
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
                records.extend(self.arcs().map(|a| Record::Arc(*a)));
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
        for h in hists {
            if (h.low_pc, h.high_pc, h.bins.len(), h.dimension)
                != (sum.low_pc, sum.high_pc, sum.bins.len(), sum.dimension)
            {
                return Err(Error::CannotConvert {
                    variant,
                    problem: "BSD files hold one histogram, and these histogram records cover \
                              different ranges (only identical ranges are summed)",
                });
            }
            for (acc, &b) in sum.bins.iter_mut().zip(&h.bins) {
                *acc = acc.checked_add(b).ok_or(Error::CannotConvert {
                    variant,
                    problem: "summing the histogram records overflows a bin",
                })?;
            }
        }
        Ok(sum)
    }
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
