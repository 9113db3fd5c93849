//! Writer for the 4.4BSD layout (and the arc list it shares with old BSD); the layout is in
//! [`crate::read`]'s `bsd44` module doc.

use super::{Emitter, max_for};
use crate::error::{Error, Result};
use crate::model::{Bsd44Header, Dimension, GMONVERSION, Histogram, Profile, Record, Variant};
use crate::read::bsd44::{counter_format, header_size};

pub(crate) fn write(e: &mut Emitter, h: &Bsd44Header, p: &Profile) -> Result<()> {
    let variant = Variant::Bsd44;
    if h.version != GMONVERSION {
        return Err(Error::BadHeader {
            variant,
            problem: "the version must be GMONVERSION",
        });
    }
    let (size, signed) = counter_format(h.histcounter_type).ok_or(Error::BadHeader {
        variant,
        problem: "histcounter_type must be 0, 8, 16, 32, 64 or their negatives",
    })?;
    let hist = the_histogram(p, variant)?;
    if hist.prof_rate.0 != h.prof_rate {
        return Err(Error::Unrepresentable {
            record: 0,
            variant,
            problem: "the histogram's prof_rate differs from the header's profrate",
        });
    }
    let hsize = header_size(e.width()) as u64;
    let ncnt = (hist.bins.len() as u64)
        .checked_mul(size as u64)
        .and_then(|b| b.checked_add(hsize))
        .unwrap_or(u64::MAX);
    e.mark(0);
    e.ptr(hist.low_pc, 0, "histogram low_pc")?;
    e.ptr(hist.high_pc, 0, "histogram high_pc")?;
    e.uint(ncnt, 4, 0, "ncnt (header plus histogram bytes)")?;
    e.u32(h.version);
    e.u32(h.prof_rate);
    e.u32(h.histcounter_type as u32);
    e.bytes(&h.spare);
    let max = if signed {
        max_for(size) >> 1
    } else {
        max_for(size)
    };
    for &b in &hist.bins {
        if b > max {
            return Err(Error::DoesNotFit {
                record: 0,
                what: "histogram bin",
                value: b,
                max,
            });
        }
        e.uint(b, size, 0, "histogram bin")?;
    }
    arcs(e, p, variant)
}

/// The first record, which must be the histogram, in seconds.
pub(crate) fn the_histogram(p: &Profile, variant: Variant) -> Result<&Histogram> {
    let Some(Record::Histogram(hist)) = p.records.first() else {
        return Err(Error::BadHeader {
            variant,
            problem: "a BSD file starts with its histogram: the first record must be one",
        });
    };
    if hist.dimension != Dimension::SECONDS {
        return Err(Error::Unrepresentable {
            record: 0,
            variant,
            problem: "BSD files have no dimension field: it must be \"seconds\"/'s'",
        });
    }
    if hist.low_pc > hist.high_pc {
        return Err(Error::Unrepresentable {
            record: 0,
            variant,
            problem: "BSD readers refuse low_pc above high_pc",
        });
    }
    Ok(hist)
}

/// Writes records 1.. as `struct rawarc`s, then the trailing bytes.
pub(crate) fn arcs(e: &mut Emitter, p: &Profile, variant: Variant) -> Result<()> {
    for (i, r) in p.records.iter().enumerate().skip(1) {
        let Record::CallArc(a) = r else {
            return Err(Error::Unrepresentable {
                record: i,
                variant,
                problem: "a BSD file holds one histogram followed by arcs only",
            });
        };
        e.mark(e.len());
        e.ptr(a.from_pc, i, "arc from_pc")?;
        e.ptr(a.self_pc, i, "arc self_pc")?;
        e.ptr(a.count, i, "arc count (pointer-sized in BSD files)")?;
    }
    if p.trailing.len() >= 3 * e.width().bytes() {
        return Err(Error::Unrepresentable {
            record: p.records.len(),
            variant,
            problem: "trailing bytes must be shorter than one arc, or they would read as arcs",
        });
    }
    e.bytes(&p.trailing);
    Ok(())
}
