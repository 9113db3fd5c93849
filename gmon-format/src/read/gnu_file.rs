//! A GNU file checked in place for the merge's fast path: histogram bins and arcs stay the
//! file's bytes, with only the record boundaries recorded. The full reader (`gnu.rs`) reads
//! whatever this declines.

use std::ops::Range;

use byteorder::{BigEndian, ByteOrder, LittleEndian};

use super::records;
use crate::model::{CallArc, Dimension, Encoding, Endian, GMON_VERSION, ProfRate, PtrWidth};

/// A histogram record of a [`GnuFile`]: the header fields, and the bins as the file's bytes.
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
}

/// A histogram record's header and where its bins are in the file.
#[derive(Debug, Clone)]
struct HistogramAt {
    low_pc: u64,
    high_pc: u64,
    prof_rate: ProfRate,
    dimension: Dimension,
    bins: Range<usize>,
}

/// Size of the GNU header (`struct gmon_hdr`): cookie, version and 12 spare bytes.
const GNU_HEADER_SIZE: usize = 20;

/// A GNU tagged file (version 1, histogram and arc records only) checked in place, for
/// [`Merger::add_gnu_file`](crate::merge::Merger::add_gnu_file). It owns the file's bytes (so it can be
/// handed from a reading thread to the summing one, and the buffer reused afterwards) and knows
/// where every record is; the bins and arcs are decoded only when they are added.
#[derive(Debug, Clone)]
pub struct GnuFile {
    bytes: Vec<u8>,
    encoding: Encoding,
    histograms: Vec<HistogramAt>,
    /// Runs of consecutive arc records, as byte ranges of whole records (tag bytes included).
    arc_runs: Vec<Range<usize>>,
    arcs: usize,
    /// Lowest and highest arc address, noted by the walk.
    arc_bounds: Option<(u64, u64)>,
}

impl GnuFile {
    /// Walks `bytes` as a GNU version-1 file of the given encoding. `Err` gives the bytes back
    /// when the file is anything else: another variant or version, a basic-block record, a bad
    /// tag, a truncated record, a `low_pc` above `high_pc` — the full reader (`crate::read`)
    /// then reads it or says exactly what is wrong.
    pub fn parse(bytes: Vec<u8>, encoding: Encoding) -> Result<GnuFile, Vec<u8>> {
        match Layout::of(&bytes, encoding) {
            Some(l) => Ok(GnuFile {
                bytes,
                encoding,
                histograms: l.histograms,
                arc_runs: l.arc_runs,
                arcs: l.arcs,
                arc_bounds: (l.arcs > 0).then_some(l.arc_bounds),
            }),
            None => Err(bytes),
        }
    }

    /// The byte order and pointer width the file was walked with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The file's bytes back, for reuse as a buffer.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Histogram records in file order.
    pub fn histograms(&self) -> impl ExactSizeIterator<Item = HistogramView<'_>> + '_ {
        self.histograms.iter().map(|h| HistogramView {
            low_pc: h.low_pc,
            high_pc: h.high_pc,
            prof_rate: h.prof_rate,
            dimension: h.dimension,
            bins: self.bytes.get(h.bins.clone()).unwrap_or(&[]),
        })
    }

    /// Number of arc records.
    pub fn arc_count(&self) -> usize {
        self.arcs
    }

    /// The arc records as runs of whole records (tag byte, `from_pc`, `self_pc`, `u32` count,
    /// in the file's encoding), in file order: for summing them without decoding each into a
    /// [`CallArc`] first.
    pub fn arc_runs(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.arc_runs
            .iter()
            .map(|r| self.bytes.get(r.clone()).unwrap_or(&[]))
    }

    /// The lowest and highest address (`from_pc` or `self_pc`) of all arcs, `None` without
    /// arcs, noted while the file was walked: lets a caller check every arc against an address
    /// range at once.
    pub fn arc_address_bounds(&self) -> Option<(u64, u64)> {
        self.arc_bounds
    }

    /// Call-arc records in file order, decoded from the file's bytes.
    pub fn arcs(&self) -> impl Iterator<Item = CallArc> + '_ {
        let p = self.encoding.ptr_width.bytes();
        let big = self.encoding.endian == Endian::Big;
        let wide = self.encoding.ptr_width == PtrWidth::Eight;
        self.arc_runs
            .iter()
            .flat_map(move |r| {
                self.bytes
                    .get(r.clone())
                    .unwrap_or(&[])
                    .chunks_exact(5 + 2 * p)
            })
            .map(move |record| match (big, wide) {
                (false, true) => arc_at::<LittleEndian, 8>(record),
                (true, true) => arc_at::<BigEndian, 8>(record),
                (false, false) => arc_at::<LittleEndian, 4>(record),
                (true, false) => arc_at::<BigEndian, 4>(record),
            })
    }
}

/// The arc record `record` (tag byte, `from_pc: P`, `self_pc: P`, `count: u32`), which the walk
/// has checked is whole: the fallbacks to 0 cannot be reached.
#[inline(always)]
fn arc_at<E: ByteOrder, const P: usize>(record: &[u8]) -> CallArc {
    let word = |at: usize, n: usize| record.get(at..at + n).map_or(0, |b| E::read_uint(b, n));
    CallArc {
        from_pc: word(1, P),
        self_pc: word(1 + P, P),
        count: word(1 + 2 * P, 4),
    }
}

/// Where the records of a file are.
struct Layout {
    histograms: Vec<HistogramAt>,
    arc_runs: Vec<Range<usize>>,
    arcs: usize,
    /// `(lowest, highest)` arc address (`(u64::MAX, 0)` without arcs).
    arc_bounds: (u64, u64),
}

impl Layout {
    fn of(bytes: &[u8], encoding: Encoding) -> Option<Layout> {
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
        let mut layout = Layout {
            histograms: Vec::new(),
            arc_runs: Vec::new(),
            arcs: 0,
            arc_bounds: (u64::MAX, 0),
        };
        let arc_size = 5 + 2 * p;
        let mut o = GNU_HEADER_SIZE;
        while o < bytes.len() {
            match *bytes.get(o)? {
                crate::model::GMON_TAG_TIME_HIST => {
                    // The header layout is the full reader's nom parser (records.rs).
                    let fixed = bytes.get(o + 1..o + 25 + 2 * p)?;
                    let (_, h) = records::gnu_hist_header(encoding)(fixed).ok()?;
                    let start = o + 25 + 2 * p;
                    let end = start.checked_add(usize::try_from(h.bins).ok()?.checked_mul(2)?)?;
                    if h.low_pc > h.high_pc || end > bytes.len() {
                        return None;
                    }
                    layout.histograms.push(HistogramAt {
                        low_pc: h.low_pc,
                        high_pc: h.high_pc,
                        prof_rate: h.prof_rate,
                        dimension: h.dimension,
                        bins: start..end,
                    });
                    o = end;
                }
                crate::model::GMON_TAG_CG_ARC => {
                    // A run of whole arc records, and the bounds of their addresses (read in
                    // the same pass, while the records are in cache).
                    let start = o;
                    let b = &mut layout.arc_bounds;
                    o = match (encoding.endian, encoding.ptr_width) {
                        (Endian::Little, PtrWidth::Eight) => {
                            arc_run::<LittleEndian, 8, 21>(bytes, o, b)
                        }
                        (Endian::Big, PtrWidth::Eight) => arc_run::<BigEndian, 8, 21>(bytes, o, b),
                        (Endian::Little, PtrWidth::Four) => {
                            arc_run::<LittleEndian, 4, 13>(bytes, o, b)
                        }
                        (Endian::Big, PtrWidth::Four) => arc_run::<BigEndian, 4, 13>(bytes, o, b),
                    }?;
                    layout.arcs += (o - start) / arc_size;
                    layout.arc_runs.push(start..o);
                }
                _ => return None,
            }
        }
        Some(layout)
    }
}

/// Walks the run of `R`-byte arc records (`P`-byte addresses) that starts at `o`, widening
/// `bounds` to their addresses; returns where the run ends, `None` if a record is cut short.
fn arc_run<E: ByteOrder, const P: usize, const R: usize>(
    bytes: &[u8],
    mut o: usize,
    bounds: &mut (u64, u64),
) -> Option<usize> {
    let (mut lo, mut hi) = *bounds;
    while let Some(record) = bytes.get(o..).and_then(|b| b.first_chunk::<R>()) {
        if record[0] != crate::model::GMON_TAG_CG_ARC {
            break;
        }
        let word = |at: usize| record.get(at..at + P).map_or(0, |b| E::read_uint(b, P));
        let (from_pc, self_pc) = (word(1), word(1 + P));
        lo = lo.min(from_pc).min(self_pc);
        hi = hi.max(from_pc).max(self_pc);
        o += R;
    }
    *bounds = (lo, hi);
    // A tag byte with less than a whole record after it: cut short.
    match bytes.get(o) {
        Some(&crate::model::GMON_TAG_CG_ARC) => None,
        _ => Some(o),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Histogram, Profile, Record};

    /// Two runs of arcs around a second histogram, in every encoding: the in-place walk sees
    /// what the full reader reads.
    #[test]
    fn sees_what_the_full_reader_reads() {
        for enc in [
            Encoding::LITTLE_64,
            Encoding::BIG_64,
            Encoding::LITTLE_32,
            Encoding::BIG_32,
        ] {
            let mut p = Profile::new_gnu(enc);
            let hist = |low: u64, bins: Vec<u64>| {
                Record::Histogram(Histogram {
                    low_pc: low,
                    high_pc: low + 4 * bins.len() as u64,
                    prof_rate: ProfRate(100),
                    dimension: Dimension::SECONDS,
                    bins,
                })
            };
            let arc = |from_pc: u64, self_pc: u64, count: u64| {
                Record::CallArc(CallArc {
                    from_pc,
                    self_pc,
                    count,
                })
            };
            p.records = vec![
                hist(0x1000, vec![1, 0, 65_535, 7]),
                arc(0x1004, 0x1008, 0xffff_fffe),
                arc(0x100c, 0x1000, 3),
                hist(0x8000, vec![0; 9]),
                arc(0x8010, 0x1004, 1),
            ];
            let bytes = crate::to_vec(&p).unwrap();
            let full = crate::read_with(
                &bytes,
                &crate::ReadOptions::new().with_ptr_width(enc.ptr_width),
            )
            .unwrap();
            let file = GnuFile::parse(bytes.clone(), enc).unwrap();
            assert_eq!(file.arc_count(), 3);
            assert_eq!(file.arc_address_bounds(), Some((0x1000, 0x8010)));
            assert_eq!(
                file.arcs().collect::<Vec<_>>(),
                full.arcs().copied().collect::<Vec<_>>()
            );
            let seen: Vec<(u64, u64, Vec<u64>)> = file
                .histograms()
                .map(|h| {
                    let bins = super::records::u16_bins(h.bins, enc.endian);
                    (h.low_pc, h.high_pc, bins)
                })
                .collect();
            let read: Vec<(u64, u64, Vec<u64>)> = full
                .histograms()
                .map(|h| (h.low_pc, h.high_pc, h.bins.clone()))
                .collect();
            assert_eq!(seen, read, "{enc:?}");
            assert_eq!(file.into_bytes(), bytes);
            // A record cut short anywhere is declined, the bytes given back whole.
            for cut in [bytes.len() - 1, bytes.len() - 20, 30] {
                let short = bytes[..cut].to_vec();
                assert_eq!(GnuFile::parse(short.clone(), enc).unwrap_err(), short);
            }
        }
    }
}
