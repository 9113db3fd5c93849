//! Writers: the mirror of [`mod@crate::read`]. [`write()`] emits `p.header`'s variant with
//! `p.encoding`, byte for byte what the reader accepts, so `read(write(p)) == p` and
//! `write(read(bytes)) == bytes`.
//!
//! A value that does not fit its field (an address wider than the pointer width, a count above
//! the counter's maximum) is an error naming the record, never truncated. The whole file is
//! built in memory first, so a writer error leaves nothing half-written in `w`.
//!
//! **Read-back check.** Nothing in a gmon.out file records its byte order or pointer width, so
//! some profiles lay out as bytes that detection (`spec/gmon-out.md`) reads differently: a
//! degenerate old BSD file whose bins happen to spell `GMONVERSION`, a 4-byte GNU file whose
//! arcs also parse as 8-byte ones. [`write()`] and [`to_vec`] therefore read what they built
//! back, as a tool without the executable would, and refuse with
//! [`Error::ReadsBackDifferently`] unless it gives the same header, records and trailing bytes
//! (the encoding may differ only when that changes nothing, e.g. a header-only file). A 24-byte
//! old BSD header, which detection never guesses, is read back with that size forced.
//! [`to_vec_unchecked`] skips the check for callers that always force the encoding when reading.

mod bsd44;
mod bsd_old;
mod gnu;

use std::io::Write;

use byteorder::{BigEndian, ByteOrder, LittleEndian};

use crate::error::{Error, Result};
use crate::model::{Endian, Header, Profile, PtrWidth};
use crate::read::ReadOptions;
use crate::read::detect::Reading;

/// Writes `p` in its header's variant with its encoding.
pub fn write<W: Write + ?Sized>(p: &Profile, w: &mut W) -> Result<()> {
    let bytes = to_vec(p)?;
    w.write_all(&bytes)?;
    Ok(())
}

/// Writes `p` into a new vector (see [`write()`]).
///
/// ```
/// let p = gmon_format::Profile::new_gnu(gmon_format::Encoding::LITTLE_64);
/// let bytes = gmon_format::to_vec(&p).unwrap();
/// assert_eq!(&bytes[..8], b"gmon\x01\0\0\0");
/// assert_eq!(gmon_format::read(&bytes).unwrap(), p);
/// ```
pub fn to_vec(p: &Profile) -> Result<Vec<u8>> {
    let bytes = emit(p)?.out;
    check_reads_back(p, &bytes)?;
    Ok(bytes)
}

/// Writes `p` into a new vector without the read-back check of [`to_vec`]: for files that are
/// only ever read with their encoding forced (as gprof reads with the executable's).
pub fn to_vec_unchecked(p: &Profile) -> Result<Vec<u8>> {
    Ok(emit(p)?.out)
}

/// Checks that `bytes`, read by detection with nothing forced, give `p` back.
fn check_reads_back(p: &Profile, bytes: &[u8]) -> Result<()> {
    let written = Reading {
        variant: p.header.variant(),
        encoding: p.encoding,
        header_size: match p.header {
            Header::BsdOld(h) => Some(h.header_size),
            _ => None,
        },
    };
    // A 24-byte old BSD header is never guessed (spec/bsd.md): its reader must be told, so the
    // check tells it too.
    let mut opts = ReadOptions::new();
    if written.header_size == Some(24) {
        opts = opts.with_bsd_old_header_size(24);
    }
    let Some(read_as) = crate::read::detect::misread_as(bytes, p, written, &opts) else {
        return Ok(());
    };
    Err(Error::ReadsBackDifferently {
        written: written.to_string(),
        read_as,
    })
}

/// The file offset at which each of `p.records` starts when `p` is written (for a BSD file the
/// histogram "record" starts at 0, with the header). Dumps use it to show where things are.
///
/// ```
/// let p = gmon_format::Profile::new_gnu(gmon_format::Encoding::LITTLE_64);
/// assert!(gmon_format::write::record_offsets(&p).unwrap().is_empty());
/// ```
pub fn record_offsets(p: &Profile) -> Result<Vec<u64>> {
    Ok(emit(p)?.offsets)
}

fn emit(p: &Profile) -> Result<Emitter> {
    let mut e = Emitter {
        out: Vec::new(),
        offsets: Vec::with_capacity(p.records.len()),
        endian: p.encoding.endian,
        width: p.encoding.ptr_width,
    };
    match &p.header {
        Header::Gnu(h) => gnu::write(&mut e, h, p)?,
        Header::Bsd44(h) => bsd44::write(&mut e, h, p)?,
        Header::BsdOld(h) => bsd_old::write(&mut e, h, p)?,
    }
    Ok(e)
}

/// The output buffer and the encoding: the single place that applies the byte order.
pub(crate) struct Emitter {
    pub(crate) out: Vec<u8>,
    /// Where each record started.
    offsets: Vec<u64>,
    endian: Endian,
    width: PtrWidth,
}

impl Emitter {
    /// Notes that a record starts at `offset` (the current end unless a BSD header came first).
    pub(crate) fn mark(&mut self, offset: usize) {
        self.offsets.push(offset as u64);
    }

    /// Current length of the output.
    pub(crate) fn len(&self) -> usize {
        self.out.len()
    }

    /// Appends raw bytes.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    /// Appends `value` as an integer of `size` bytes, refusing values that do not fit.
    pub(crate) fn uint(
        &mut self,
        value: u64,
        size: usize,
        record: usize,
        what: &'static str,
    ) -> Result<()> {
        let max = max_for(size);
        if value > max {
            return Err(Error::DoesNotFit {
                record,
                what,
                value,
                max,
            });
        }
        // `value <= max_for(size)` above, so the narrowing casts keep every bit; a size other
        // than 1, 2, 4 or 8 is never asked for. One fixed-width byteorder call per size: the
        // generic `write_uint` made writing several times slower.
        let mut buf = [0u8; 8];
        let field = &mut buf[..size.min(8)];
        match (self.endian, size) {
            (_, 1) => field[0] = value as u8,
            (Endian::Little, 2) => LittleEndian::write_u16(field, value as u16),
            (Endian::Big, 2) => BigEndian::write_u16(field, value as u16),
            (Endian::Little, 4) => LittleEndian::write_u32(field, value as u32),
            (Endian::Big, 4) => BigEndian::write_u32(field, value as u32),
            (Endian::Little, 8) => LittleEndian::write_u64(field, value),
            (Endian::Big, 8) => BigEndian::write_u64(field, value),
            (Endian::Little, _) => LittleEndian::write_uint(field, value, field.len()),
            (Endian::Big, _) => BigEndian::write_uint(field, value, field.len()),
        }
        self.out.extend_from_slice(field);
        Ok(())
    }

    /// Appends a `u32` known to fit.
    pub(crate) fn u32(&mut self, value: u32) {
        // Cannot fail: every u32 fits 4 bytes.
        let _ = self.uint(u64::from(value), 4, 0, "u32");
    }

    /// Appends an address (or BSD `long`) of the profile's pointer width.
    pub(crate) fn ptr(&mut self, value: u64, record: usize, what: &'static str) -> Result<()> {
        self.uint(value, self.width.bytes(), record, what)
    }

    /// The profile's pointer width.
    pub(crate) fn width(&self) -> PtrWidth {
        self.width
    }
}

/// The largest unsigned value of `size` bytes (1..=8).
pub(crate) fn max_for(size: usize) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size)) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    fn hist(bins: Vec<u64>) -> Histogram {
        Histogram {
            low_pc: 0x1000,
            high_pc: 0x1000 + 4 * bins.len() as u64,
            prof_rate: ProfRate::DEFAULT,
            dimension: Dimension::SECONDS,
            bins,
        }
    }

    fn bsd44() -> Profile {
        Profile {
            encoding: Encoding::LITTLE_64,
            header: Header::Bsd44(Bsd44Header {
                version: GMONVERSION,
                prof_rate: 100,
                histcounter_type: 0,
                spare: [0; 8],
            }),
            records: vec![Record::Histogram(hist(vec![1, 2]))],
            trailing: Vec::new(),
        }
    }

    fn old() -> Profile {
        Profile {
            header: Header::BsdOld(BsdOldHeader { header_size: 20 }),
            ..bsd44()
        }
    }

    #[test]
    fn values_that_do_not_fit_name_the_record() {
        let mut p = Profile::new_gnu(Encoding::BIG_32);
        p.records.push(Record::CallArc(CallArc {
            from_pc: 0,
            self_pc: 0,
            count: 1,
        }));
        p.records.push(Record::CallArc(CallArc {
            from_pc: 1 << 32,
            self_pc: 0,
            count: 1,
        }));
        let e = to_vec(&p).unwrap_err();
        assert!(
            matches!(
                e,
                Error::DoesNotFit {
                    record: 1,
                    value: 0x1_0000_0000,
                    max: 0xffff_ffff,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(e.offset(), None);
        assert!(
            e.to_string()
                .starts_with("record 1: arc from_pc 0x100000000 does not fit"),
            "{e}"
        );

        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.records.push(Record::CallArc(CallArc {
            from_pc: 0,
            self_pc: 0,
            count: 1 << 32,
        }));
        assert!(matches!(
            to_vec(&p),
            Err(Error::DoesNotFit { record: 0, .. })
        ));
        p.records[0] = Record::Histogram(hist(vec![0x10000]));
        assert!(matches!(
            to_vec(&p),
            Err(Error::DoesNotFit {
                record: 0,
                value: 0x10000,
                max: 0xffff,
                ..
            })
        ));

        let mut p = bsd44();
        p.records[0] = Record::Histogram(hist(vec![0x10000]));
        assert!(matches!(
            to_vec(&p),
            Err(Error::DoesNotFit { record: 0, .. })
        ));
        if let Header::Bsd44(h) = &mut p.header {
            h.histcounter_type = -32;
        }
        assert!(to_vec(&p).is_ok());
        p.records[0] = Record::Histogram(hist(vec![0x8000_0000]));
        assert!(matches!(
            to_vec(&p),
            Err(Error::DoesNotFit {
                max: 0x7fff_ffff,
                ..
            })
        ));
    }

    #[test]
    fn destination_errors_are_io_errors() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "disk full",
                ))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let e = write(&Profile::new_gnu(Encoding::LITTLE_64), &mut Full).unwrap_err();
        assert!(
            matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull),
            "{e}"
        );
        assert_eq!(e.offset(), None);
        assert_eq!(e.to_string(), "write failed: disk full");
    }

    #[test]
    fn nothing_is_written_on_error() {
        let mut p = Profile::new_gnu(Encoding::LITTLE_32);
        p.records.push(Record::CallArc(CallArc {
            from_pc: 1 << 40,
            self_pc: 0,
            count: 1,
        }));
        let mut out = Vec::new();
        assert!(write(&p, &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn gnu_shape_errors() {
        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.header = Header::Gnu(GnuHeader {
            version: 2,
            spare: [0; 12],
        });
        assert!(matches!(
            to_vec(&p),
            Err(Error::BadHeader {
                variant: Variant::Gnu,
                ..
            })
        ));

        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.trailing = vec![1];
        assert!(matches!(
            to_vec(&p),
            Err(Error::Unrepresentable { record: 0, .. })
        ));

        let legacy = LegacyBlockInfo {
            function: b"f".to_vec(),
            file: b"x.c".to_vec(),
            line: 1,
        };
        let v0_block = BasicBlockCount {
            address: 1,
            count: 2,
            legacy: Some(legacy),
        };
        let v0 = BasicBlockRecord {
            legacy_name: Some(b"n".to_vec()),
            blocks: vec![v0_block],
        };
        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.records.push(Record::BasicBlocks(v0.clone()));
        // Version-0 details in a version-1 file have no place.
        assert!(matches!(
            to_vec(&p),
            Err(Error::Unrepresentable { record: 0, .. })
        ));
        p.header = Header::Gnu(GnuHeader {
            version: 0,
            spare: [0; 12],
        });
        assert!(to_vec(&p).is_ok());
        let mut bad = v0.clone();
        bad.legacy_name = Some(b"a\0b".to_vec());
        p.records[0] = Record::BasicBlocks(bad);
        assert!(matches!(
            to_vec(&p),
            Err(Error::Unrepresentable { record: 0, .. })
        ));
        let mut bad = v0;
        bad.blocks[0].legacy = None;
        p.records[0] = Record::BasicBlocks(bad);
        assert!(matches!(
            to_vec(&p),
            Err(Error::Unrepresentable { record: 0, .. })
        ));
    }

    #[test]
    fn bsd_shape_errors() {
        assert!(to_vec(&bsd44()).is_ok());
        assert!(to_vec(&old()).is_ok());

        for base in [bsd44(), old()] {
            let variant = base.header.variant();
            let mut p = base.clone();
            p.records.clear();
            assert!(
                matches!(to_vec(&p), Err(Error::BadHeader { .. })),
                "{variant}"
            );

            let mut p = base.clone();
            p.records.push(Record::Histogram(hist(vec![])));
            assert!(
                matches!(to_vec(&p), Err(Error::Unrepresentable { record: 1, .. })),
                "{variant}"
            );

            let mut p = base.clone();
            p.records.push(Record::BasicBlocks(BasicBlockRecord {
                legacy_name: None,
                blocks: vec![],
            }));
            assert!(
                matches!(to_vec(&p), Err(Error::Unrepresentable { record: 1, .. })),
                "{variant}"
            );

            let mut p = base.clone();
            p.trailing = vec![0; 24];
            assert!(
                matches!(to_vec(&p), Err(Error::Unrepresentable { record: 1, .. })),
                "{variant}"
            );
            p.trailing = vec![0; 23];
            assert!(to_vec(&p).is_ok(), "{variant}");

            let mut p = base.clone();
            if let Some(Record::Histogram(h)) = p.records.first_mut() {
                h.dimension.abbrev = b'c';
            }
            assert!(
                matches!(to_vec(&p), Err(Error::Unrepresentable { record: 0, .. })),
                "{variant}"
            );

            let mut p = base.clone();
            if let Some(Record::Histogram(h)) = p.records.first_mut() {
                h.prof_rate = ProfRate(1000);
            }
            assert!(
                matches!(to_vec(&p), Err(Error::Unrepresentable { record: 0, .. })),
                "{variant}"
            );

            let mut p = base;
            if let Some(Record::Histogram(h)) = p.records.first_mut() {
                h.low_pc = h.high_pc + 1;
            }
            assert!(
                matches!(to_vec(&p), Err(Error::Unrepresentable { record: 0, .. })),
                "{variant}"
            );
        }

        let mut p = bsd44();
        p.header = Header::Bsd44(Bsd44Header {
            version: 1,
            prof_rate: 100,
            histcounter_type: 0,
            spare: [0; 8],
        });
        assert!(matches!(to_vec(&p), Err(Error::BadHeader { .. })));
        p.header = Header::Bsd44(Bsd44Header {
            version: GMONVERSION,
            prof_rate: 100,
            histcounter_type: 7,
            spare: [0; 8],
        });
        assert!(matches!(to_vec(&p), Err(Error::BadHeader { .. })));
        let mut p = old();
        p.header = Header::BsdOld(BsdOldHeader { header_size: 12 });
        assert!(matches!(to_vec(&p), Err(Error::BadHeader { .. })));
    }

    #[test]
    fn record_offsets_follow_the_layout() {
        let mut p = Profile::new_gnu(Encoding::LITTLE_32);
        p.records.push(Record::Histogram(hist(vec![1, 2])));
        p.records.push(Record::CallArc(CallArc {
            from_pc: 0,
            self_pc: 0,
            count: 1,
        }));
        assert_eq!(record_offsets(&p).unwrap(), vec![20, 20 + 33 + 4]);
        let mut p = old();
        p.records.push(Record::CallArc(CallArc {
            from_pc: 0,
            self_pc: 0,
            count: 1,
        }));
        assert_eq!(record_offsets(&p).unwrap(), vec![0, 24]);
    }
}
