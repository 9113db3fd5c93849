//! A GNU file seen in place for the merge's fast path: histogram bins stay bytes, arcs are
//! decoded. The full reader (`gnu.rs`) reads whatever this declines.

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
