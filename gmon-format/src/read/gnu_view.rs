//! A GNU file seen in place for the merge's fast path: histogram bins stay bytes, arcs are
//! decoded. The full reader (`gnu.rs`) reads whatever this declines.

use super::records;
use crate::model::{Arc, Dimension, Encoding, GMON_VERSION, ProfRate};

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
        let p = encoding.ptr_width.bytes();
        let version = bytes
            .get(4..8)
            .map(|w| super::cursor::decode(w, encoding.endian));
        // A header cut short must reach the full reader, which reports it with its offset;
        // without this check a file of 8..19 bytes looked like a valid empty profile.
        if bytes.len() < GNU_HEADER_SIZE
            || bytes.get(0..4)? != crate::model::GMON_MAGIC
            || version? != u64::from(GMON_VERSION)
        {
            return None;
        }
        let mut view = GnuView {
            encoding,
            histograms: Vec::new(),
            arcs: Vec::new(),
        };
        // The record layouts are the full reader's nom parsers (records.rs); any failure, a
        // bad tag or a truncated record is `None`.
        let mut o = GNU_HEADER_SIZE;
        while o < bytes.len() {
            match *bytes.get(o)? {
                crate::model::GMON_TAG_TIME_HIST => {
                    let fixed = bytes.get(o + 1..o + 25 + 2 * p)?;
                    let (_, h) = records::gnu_hist_header(encoding)(fixed).ok()?;
                    let start = o + 25 + 2 * p;
                    let end = start.checked_add(usize::try_from(h.bins).ok()?.checked_mul(2)?)?;
                    if h.low_pc > h.high_pc {
                        return None;
                    }
                    view.histograms.push(HistogramView {
                        low_pc: h.low_pc,
                        high_pc: h.high_pc,
                        prof_rate: ProfRate(h.prof_rate),
                        dimension: Dimension {
                            name: h.dimen,
                            abbrev: h.abbrev,
                        },
                        bins: bytes.get(start..end)?,
                        offset: start,
                    });
                    o = end;
                }
                crate::model::GMON_TAG_CG_ARC => {
                    let body = bytes.get(o + 1..o + 5 + 2 * p)?;
                    let (_, arc) = records::gnu_arc(encoding)(body).ok()?;
                    view.arcs.push(arc);
                    o += 5 + 2 * p;
                }
                _ => return None,
            }
        }
        Some(view)
    }
}
