//! Writer for the old BSD layout; the layout is in [`crate::read`]'s `bsd_old` module doc.

use super::Emitter;
use super::bsd44::{arcs, the_histogram};
use crate::error::{Error, Result};
use crate::model::{BsdOldHeader, ProfRate, Profile, Variant};
use crate::read::bsd_old::header_sizes;

pub(crate) fn write(e: &mut Emitter, h: &BsdOldHeader, p: &Profile) -> Result<()> {
    let variant = Variant::BsdOld;
    if !header_sizes(e.width()).contains(&h.header_size) {
        return Err(Error::BadHeader {
            variant,
            problem: "the header size must be 12 (4-byte pointers), 20 or 24 (8-byte pointers)",
        });
    }
    let hist = the_histogram(p, variant)?;
    if hist.prof_rate != ProfRate::DEFAULT {
        return Err(Error::Unrepresentable {
            record: 0,
            variant,
            problem: "old BSD files store no profiling rate, so it must be 100 (use bsd44)",
        });
    }
    let ncnt = (hist.bins.len() as u64)
        .checked_mul(2)
        .and_then(|b| b.checked_add(u64::from(h.header_size)))
        .unwrap_or(u64::MAX);
    e.mark(0);
    e.ptr(hist.low_pc, 0, "histogram low_pc")?;
    e.ptr(hist.high_pc, 0, "histogram high_pc")?;
    e.uint(ncnt, 4, 0, "ncnt (header plus histogram bytes)")?;
    let written = 2 * e.width().bytes() + 4;
    for _ in written..h.header_size as usize {
        e.bytes(&[0]);
    }
    for &b in &hist.bins {
        e.uint(b, 2, 0, "histogram bin (u16 in old BSD files)")?;
    }
    arcs(e, p, variant)
}
