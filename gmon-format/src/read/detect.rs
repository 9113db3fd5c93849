//! Guessing what a file does not say about itself: its variant, byte order and pointer width.
//!
//! GNU gprof takes byte order and pointer width from the executable; without it they must be
//! guessed. `spec/gmon-out.md` ("Detection without the executable" and "Implementing a reader")
//! is the rule; this module follows it step by step:
//!
//! 1. **Empty file**: an end-of-file error at offset 0.
//! 2. **Recognised but unsupported formats** are refused before anything else (variant not
//!    forced): a Darwin "new format" file (first word `0xbeefbabe` or `0xbeefbabf` in either byte
//!    order), then a GNU header with version `GMON_SHOBJ_VERSION` (ld.so `LD_PROFILE` output).
//! 3. **Candidate readings**, in a fixed order (variant; little- before big-endian; 8- before
//!    4-byte pointers): GNU if the file starts with `"gmon"`, with the byte orders its version
//!    word allows; otherwise 4.4BSD where `GMONVERSION` sits at offset 2P+4 in that byte order
//!    (gprof's rule: the version word decides) and old BSD (12- or 20-byte header) everywhere
//!    else. Forced options narrow every set. FreeBSD's padded 24-byte old BSD header is never
//!    guessed: the same bytes always read as a 20-byte header too.
//! 4. **Acceptance**: each candidate is read in full by its layout's reader; a rejection is an
//!    [`Error`] with the offset the spec's tables give.
//! 5. **Preference** among accepted readings, by [`Plausibility`] and then the fixed order. The
//!    other accepted readings are returned as the ambiguity ([`Detected::ambiguous`]: as
//!    plausible as the chosen one; [`Detected::less_plausible`]).
//! 6. **Nothing accepted**: the first failing 4.4BSD candidate whose version word is
//!    `GMONVERSION` (the file says it is 4.4BSD); otherwise, when only one variant was tried
//!    (forced, or the `"gmon"` magic), the failure with the largest offset (the earliest
//!    candidate on a tie); otherwise [`Error::UnknownFormat`] with that largest offset, listing
//!    every candidate and its failure.

use serde::{Deserialize, Serialize};

use super::{ReadOptions, bsd_old, bsd44, gnu};
use crate::error::{Error, Result};
use crate::model::{
    Encoding, Endian, GMON_MAGIC, GMON_SHOBJ_VERSION, GMONVERSION, Header, Profile, PtrWidth,
    Variant,
};
use crate::read::cursor::decode;

/// Darwin's "new format" magic for 32-bit and 64-bit programs.
const DARWIN_MAGICS: [u32; 2] = [0xbeef_babe, 0xbeef_babf];

/// One way of reading a file: everything the file does not record about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Reading {
    /// The layout.
    pub variant: Variant,
    /// Byte order and pointer width.
    pub encoding: Encoding,
    /// Old BSD only: the header size (12, 20 or 24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_size: Option<u32>,
}

impl std::fmt::Display for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let variant = match self.variant {
            Variant::Gnu => "GNU",
            Variant::Bsd44 => "4.4BSD",
            Variant::BsdOld => "old BSD",
        };
        write!(
            f,
            "{variant} {}-endian {}-byte pointers",
            self.encoding.endian, self.encoding.ptr_width
        )?;
        if let Some(h) = self.header_size {
            write!(f, " ({h}-byte header)")?;
        }
        Ok(())
    }
}

/// A file read by detection, with the other readings it also allows.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Detected {
    /// The chosen reading's profile.
    pub profile: Profile,
    /// The chosen reading.
    pub reading: Reading,
    /// Other accepted readings exactly as plausible as the chosen one: the file is ambiguous and
    /// the choice was made by the fixed order (little- before big-endian, 8- before 4-byte).
    pub ambiguous: Vec<Reading>,
    /// Other accepted readings that lost on plausibility.
    pub less_plausible: Vec<Reading>,
}

/// How plausible an accepted reading is: compared field by field in this order, `true` beating
/// `false` (`spec/gmon-out.md`, "Preference").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Plausibility {
    /// A 4.4BSD reading (its `GMONVERSION` is evidence no old BSD reading has).
    pub bsd44: bool,
    /// Every histogram has `low_pc < high_pc`.
    pub ranges: bool,
    /// Every histogram's dimension is printable text (always true for BSD files).
    pub dimensions: bool,
    /// Every arc's `self_pc` lies inside a histogram's range (true when no histogram has a
    /// nonempty range to check against).
    pub arcs_in_range: bool,
    /// The file ends on a record boundary (no partial BSD arc).
    pub whole: bool,
}

impl Plausibility {
    /// The plausibility of a profile as read.
    pub fn of(p: &Profile) -> Plausibility {
        // One pass over the histograms, one over the arcs only when there are ranges: every
        // candidate reading of a large file is scored, and each pass walks every record.
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        let mut all_ranges = true;
        let mut dimensions = true;
        for h in p.histograms() {
            if h.low_pc < h.high_pc {
                ranges.push((h.low_pc, h.high_pc));
            } else {
                all_ranges = false;
            }
            dimensions &= printable(&h.dimension.name);
        }
        Plausibility {
            bsd44: matches!(p.header, Header::Bsd44(_)),
            ranges: all_ranges,
            dimensions,
            arcs_in_range: ranges.is_empty()
                || p.arcs()
                    .all(|a| ranges.iter().any(|&(lo, hi)| (lo..hi).contains(&a.self_pc))),
            whole: p.trailing.is_empty(),
        }
    }
}

/// The spec's "printable" dimension: 1 to 15 bytes in 0x20..=0x7e, then only NULs.
pub fn printable(name: &[u8]) -> bool {
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    len > 0
        && name[..len].iter().all(|b| (0x20..=0x7e).contains(b))
        && name[len..].iter().all(|&b| b == 0)
}

impl Reading {
    fn parse(&self, bytes: &[u8]) -> Result<Profile> {
        match self.variant {
            Variant::Gnu => gnu::read(bytes, self.encoding),
            Variant::Bsd44 => bsd44::read(bytes, self.encoding),
            Variant::BsdOld => bsd_old::read(
                bytes,
                self.encoding,
                self.header_size
                    .unwrap_or_else(|| bsd_old::header_sizes(self.encoding.ptr_width)[0]),
            ),
        }
    }

    /// Whether the file has `GMONVERSION` where this reading's 4.4BSD header has its version.
    fn keyed_bsd44(&self, bytes: &[u8]) -> bool {
        let p = self.encoding.ptr_width.bytes();
        bytes
            .get(2 * p + 4..2 * p + 8)
            .is_some_and(|w| decode(w, self.encoding.endian) == u64::from(GMONVERSION))
    }
}

/// Reads `bytes` with whatever `opts` forces, guessing the rest as the module doc describes.
pub(crate) fn read_detected(bytes: &[u8], opts: &ReadOptions) -> Result<Detected> {
    if bytes.is_empty() {
        // Every candidate fails the same way; say it once.
        return Err(Error::UnexpectedEof {
            offset: 0,
            what: "gmon.out header",
            needed: 12,
            available: 0,
        });
    }
    if opts.variant.is_none() {
        refuse_unsupported(bytes)?;
    }
    let candidates = candidates(bytes, opts)?;
    let single_variant = opts.variant.is_some()
        || opts.bsd_old_header_size.is_some()
        || bytes.starts_with(&GMON_MAGIC);

    let mut accepted: Vec<(Plausibility, Reading, Profile)> = Vec::new();
    let mut failures: Vec<(Reading, Error)> = Vec::new();
    for cand in candidates {
        match cand.parse(bytes) {
            Ok(p) => accepted.push((Plausibility::of(&p), cand, p)),
            Err(e) => failures.push((cand, e)),
        }
    }
    if !accepted.is_empty() {
        // The most plausible; on a tie the earliest candidate (max_by keeps the last maximum,
        // so search the reversed list).
        let best = accepted
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|(_, (score, _, _))| *score)
            .map_or(0, |(i, _)| i);
        let (score, reading, profile) = accepted.remove(best);
        let (ambiguous, less): (Vec<_>, Vec<_>) =
            accepted.into_iter().partition(|(s, _, _)| *s == score);
        return Ok(Detected {
            profile,
            reading,
            ambiguous: ambiguous.into_iter().map(|(_, r, _)| r).collect(),
            less_plausible: less.into_iter().map(|(_, r, _)| r).collect(),
        });
    }
    // The file says it is 4.4BSD: report why that reading failed.
    if let Some(i) = failures
        .iter()
        .position(|(c, _)| c.variant == Variant::Bsd44 && c.keyed_bsd44(bytes))
    {
        return Err(failures.swap_remove(i).1);
    }
    let furthest = failures
        .iter()
        .map(|(_, e)| e.offset().unwrap_or(0))
        .max()
        .unwrap_or(0);
    if single_variant
        && let Some(i) = failures
            .iter()
            .position(|(_, e)| e.offset().unwrap_or(0) == furthest)
    {
        return Err(failures.swap_remove(i).1);
    }
    let tried = failures
        .iter()
        .map(|(c, e)| format!("{c}: {e}"))
        .collect::<Vec<_>>()
        .join("; ");
    Err(Error::UnknownFormat {
        offset: furthest,
        tried,
    })
}

/// The writer's read-back check (`spec/gmon-out.md`, "Writers check what they write"), done
/// cheaply: `bytes` were written from `p` as `written`, and the layouts' readers give `p` back
/// under that reading by construction (the round trip the property tests check), so only the
/// other candidates are parsed, and most of them fail within a few bytes. Returns the reading
/// detection would choose instead, when that reading gives another header, records or trailing
/// bytes, or a description of the refusal when detection would reject the file outright.
pub(crate) fn misread_as(
    bytes: &[u8],
    p: &Profile,
    written: Reading,
    opts: &ReadOptions,
) -> Option<String> {
    if opts.variant.is_none()
        && let Err(e) = refuse_unsupported(bytes)
    {
        return Some(format!("nothing ({e})"));
    }
    let candidates = match candidates(bytes, opts) {
        Ok(c) => c,
        Err(e) => return Some(format!("nothing ({e})")),
    };
    let Some(at) = candidates.iter().position(|c| *c == written) else {
        // Not even a candidate (e.g. old BSD bytes with GMONVERSION at 2P+4): say what
        // detection makes of the file instead.
        return Some(match read_detected(bytes, opts) {
            Ok(d) => d.reading.to_string(),
            Err(e) => format!("nothing ({e})"),
        });
    };
    let mut best: (Plausibility, usize, Option<Profile>) = (Plausibility::of(p), at, None);
    for (i, cand) in candidates.iter().enumerate() {
        if i == at {
            continue;
        }
        if let Ok(q) = cand.parse(bytes) {
            let score = Plausibility::of(&q);
            // Strictly more plausible, or as plausible and earlier in the fixed order.
            if score > best.0 || (score == best.0 && i < best.1) {
                best = (score, i, Some(q));
            }
        }
    }
    match best.2 {
        Some(q) if q.header != p.header || q.records != p.records || q.trailing != p.trailing => {
            Some(candidates[best.1].to_string())
        }
        _ => None,
    }
}

/// The candidate readings in the spec's fixed order.
fn candidates(bytes: &[u8], opts: &ReadOptions) -> Result<Vec<Reading>> {
    if let Some(size) = opts.bsd_old_header_size {
        let fits = opts
            .ptr_width
            .is_none_or(|w| bsd_old::header_sizes(w).contains(&size));
        if !fits || ![12, 20, 24].contains(&size) {
            return Err(Error::InvalidOptions {
                problem: "an old BSD header is 12 bytes for 4-byte pointers and 20 or 24 bytes \
                          for 8-byte pointers",
            });
        }
    }
    let variants: &[Variant] = match opts.variant {
        Some(Variant::Gnu) => &[Variant::Gnu],
        Some(Variant::Bsd44) => &[Variant::Bsd44],
        Some(Variant::BsdOld) => &[Variant::BsdOld],
        // A forced old BSD header size says which variant it is.
        None if opts.bsd_old_header_size.is_some() => &[Variant::BsdOld],
        None if bytes.starts_with(&GMON_MAGIC) => &[Variant::Gnu],
        None => &[Variant::Bsd44, Variant::BsdOld],
    };
    let forced_variant = opts.variant.is_some() || opts.bsd_old_header_size.is_some();
    let mut out = Vec::new();
    for &variant in variants {
        for endian in endians(bytes, variant, opts) {
            let widths = match (opts.ptr_width, opts.bsd_old_header_size) {
                (Some(w), _) => vec![w],
                // A forced header size also says which pointer width it belongs to.
                (None, Some(12)) => vec![PtrWidth::Four],
                (None, Some(_)) => vec![PtrWidth::Eight],
                (None, None) => vec![PtrWidth::Eight, PtrWidth::Four],
            };
            for ptr_width in widths {
                let encoding = Encoding { endian, ptr_width };
                let reading = Reading {
                    variant,
                    encoding,
                    header_size: (variant == Variant::BsdOld).then(|| {
                        opts.bsd_old_header_size
                            .unwrap_or(bsd_old::header_sizes(ptr_width)[0])
                    }),
                };
                // gprof's rule: GMONVERSION at 2P+4 makes the file 4.4BSD for that encoding,
                // and its absence makes it old BSD (unless the variant is forced).
                let keyed = Reading {
                    variant: Variant::Bsd44,
                    ..reading
                }
                .keyed_bsd44(bytes);
                let applicable = forced_variant
                    || match variant {
                        Variant::Gnu => true,
                        Variant::Bsd44 => keyed,
                        Variant::BsdOld => !keyed,
                    };
                if applicable {
                    out.push(reading);
                }
            }
        }
    }
    Ok(out)
}

/// The byte orders worth trying.
fn endians(bytes: &[u8], variant: Variant, opts: &ReadOptions) -> Vec<Endian> {
    if let Some(e) = opts.endian {
        return vec![e];
    }
    if variant == Variant::Gnu
        && let Some(word) = bytes.get(4..8)
    {
        if decode(word, Endian::Little) == 1 {
            return vec![Endian::Little];
        }
        if decode(word, Endian::Big) == 1 {
            return vec![Endian::Big];
        }
        if decode(word, Endian::Little) != 0 {
            // Neither order gives a known version: the GNU reader reports the number read
            // little-endian (the first order).
            return vec![Endian::Little];
        }
    }
    vec![Endian::Little, Endian::Big]
}

/// Refuses formats that look like gmon files but are not read by this crate.
fn refuse_unsupported(bytes: &[u8]) -> Result<()> {
    if let Some(word) = bytes.get(..4) {
        for endian in [Endian::Little, Endian::Big] {
            if DARWIN_MAGICS.contains(&(decode(word, endian) as u32)) {
                return Err(Error::NotSupported {
                    offset: 0,
                    what: "Darwin gmon.out \"new format\" (magic 0xbeefbabe/0xbeefbabf), \
                           written by macOS's profiling runtime",
                });
            }
        }
    }
    if bytes.get(..4) == Some(&GMON_MAGIC[..])
        && let Some(word) = bytes.get(4..8)
    {
        for endian in [Endian::Little, Endian::Big] {
            if decode(word, endian) == u64::from(GMON_SHOBJ_VERSION) {
                gnu::check_version(GMON_SHOBJ_VERSION, 4)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::read;
    use crate::test_util::{ALL, Bytes};

    #[test]
    fn darwin_files_are_recognised_not_misparsed() {
        for magic in [[0xbe, 0xef, 0xba, 0xbe], [0xbf, 0xba, 0xef, 0xbe]] {
            let mut bytes = magic.to_vec();
            bytes.extend_from_slice(&[0; 64]);
            let e = read(&bytes).unwrap_err();
            assert!(matches!(e, Error::NotSupported { offset: 0, .. }), "{e}");
            assert!(
                e.to_string()
                    .starts_with("offset 0x0: not supported: Darwin"),
                "{e}"
            );
        }
    }

    #[test]
    fn shobj_files_are_recognised_in_both_orders() {
        for enc in [Encoding::LITTLE_64, Encoding::BIG_32] {
            let bytes = Bytes::new(enc)
                .gnu_header(GMON_SHOBJ_VERSION)
                .u32(0)
                .build();
            let e = read(&bytes).unwrap_err();
            assert!(matches!(e, Error::NotSupported { offset: 4, .. }), "{e}");
            assert!(e.to_string().contains("sprof"), "{e}");
        }
    }

    #[test]
    fn unknown_gnu_version_is_reported_not_guessed() {
        let bytes = Bytes::new(Encoding::LITTLE_64).gnu_header(3).build();
        let e = read(&bytes).unwrap_err();
        assert!(
            matches!(
                e,
                Error::UnsupportedVersion {
                    offset: 4,
                    found: 3,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn garbage_lists_every_candidate_tried() {
        let e = read(&[0xff; 64]).unwrap_err();
        let Error::UnknownFormat { tried, .. } = &e else {
            panic!("{e}")
        };
        // No GMONVERSION anywhere, so only the four old BSD readings are candidates.
        for what in [
            "old BSD little-endian 8-byte pointers (20-byte header)",
            "old BSD little-endian 4-byte pointers (12-byte header)",
            "old BSD big-endian 8-byte pointers (20-byte header)",
            "old BSD big-endian 4-byte pointers (12-byte header)",
        ] {
            assert!(tried.contains(what), "{what} missing from {tried}");
        }
        assert!(!tried.contains("4.4BSD"), "{tried}");
        // The furthest any candidate got: the 8-byte readings' ncnt at 0x10.
        assert_eq!(e.offset(), Some(0x10));
        assert!(
            e.to_string()
                .starts_with("offset 0x10: not a gmon.out file: "),
            "{e}"
        );
    }

    #[test]
    fn empty_file_is_an_error_at_0() {
        let e = read(&[]).unwrap_err();
        assert_eq!(e.offset(), Some(0), "{e}");
    }

    #[test]
    fn gnu_pointer_width_is_found_from_the_records() {
        for enc in ALL {
            // One histogram and two arcs: only the right width parses to the end.
            let bytes = Bytes::new(enc)
                .gnu_header(1)
                .gnu_hist(0x10, 0x20, 100, &[1, 2, 3, 4])
                .gnu_arc(0x10, 0x14, 1)
                .gnu_arc(0x18, 0x14, 2)
                .build();
            let p = read(&bytes).unwrap();
            assert_eq!(p.encoding, enc);
        }
    }

    #[test]
    fn gnu_error_is_the_furthest_candidates() {
        // A little-endian 8-byte file with a bad tag after one arc: the 8-byte parse reaches the
        // bad tag at 41; the 4-byte parse fails earlier.
        let bytes = Bytes::new(Encoding::LITTLE_64)
            .gnu_header(1)
            .gnu_arc(1, 2, 3)
            .raw(&[9])
            .build();
        let e = read(&bytes).unwrap_err();
        assert!(matches!(e, Error::BadTag { offset: 41, tag: 9 }), "{e}");
    }

    #[test]
    fn bsd_byte_order_and_width_are_found_from_the_header() {
        for enc in ALL {
            let p = enc.ptr_width.bytes() as u32;
            let bytes = Bytes::new(enc)
                .ptr(0x1000)
                .ptr(0x1008)
                .u32(2 * p + 4 + 4)
                .u16(1)
                .u16(2)
                .bsd_arc(0x1000, 0x1004, 3)
                .build();
            let got = read(&bytes).unwrap();
            assert_eq!(got.encoding, enc);
            assert_eq!(got.header.variant(), Variant::BsdOld);
        }
    }
}
