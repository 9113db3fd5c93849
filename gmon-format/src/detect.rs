//! Guessing what a file does not say about itself: its variant, byte order and pointer width.
//!
//! GNU gprof takes byte order and pointer width from the executable; without it they must be
//! guessed (`spec/gmon-out.md`, "How byte order and pointer width are decided"). The rules, in
//! order:
//!
//! 1. **Recognised but unsupported formats** are refused before anything else (auto mode only): a
//!    Darwin "new format" file (first word `0xbeefbabe` or `0xbeefbabf` in either byte order), and
//!    a GNU header with version `GMON_SHOBJ_VERSION` (ld.so `LD_PROFILE` output).
//! 2. **Variant.** A file starting with `"gmon"` is GNU; anything else is 4.4BSD or old BSD.
//! 3. **GNU byte order** comes from the version word: `01 00 00 00` is little-endian, `00 00 00
//!    01` big-endian. Version 0 reads the same in both orders, so both are tried.
//! 4. **Candidates.** Every remaining combination of variant, byte order and pointer width is
//!    parsed in full. A candidate only survives if the whole file parses: GNU records must have
//!    tags 0–2 and end exactly at the end of the file; a 4.4BSD header needs `GMONVERSION` at
//!    offset 2P+4; BSD headers need `lpc <= hpc` and an `ncnt` equal to the header size plus
//!    whole counters, within the file. An old BSD header is taken to be 12 bytes (4-byte
//!    pointers) or 20 bytes (8-byte pointers), as GNU gprof does; FreeBSD's padded 24-byte header
//!    is never guessed, because the same bytes always parse as a 20-byte header too (its padding
//!    then reads as two empty bins) and no bin-count rule separates the two reliably (glibc rounds
//!    its bin count up, FreeBSD does not). Force it with [`ReadOptions::bsd_old_header_size`].
//! 5. **Choosing** among survivors, by score and then by the order they were tried in
//!    (little-endian before big-endian, 8-byte before 4-byte pointers, 4.4BSD before old BSD):
//!    * a 4.4BSD parse beats an old BSD one (gprof's rule: `GMONVERSION` decides), and a file
//!      with `GMONVERSION` at 2P+4 whose 4.4BSD parse fails is not read as old BSD at all;
//!    * a BSD file whose arcs end exactly at the end of the file beats one with a partial arc;
//!    * a histogram whose `low_pc <= high_pc` and whose dimension is printable text beats one
//!      that is not (this separates GNU pointer widths).
//! 6. **Nothing fits.** If the file singles out one candidate (a 4.4BSD version word that is
//!    `GMONVERSION` in that byte order and width; a GNU histogram whose dimension text sits
//!    where that pointer width puts it), that candidate's error is returned. Otherwise, if the
//!    variant was certain (forced, or the `"gmon"` magic), the error of
//!    the candidate that read furthest is returned as is; otherwise
//!    [`Error::UnknownFormat`] lists every candidate tried and why it failed.

use crate::error::{Error, Result};
use crate::model::{
    Encoding, Endian, GMON_MAGIC, GMON_SHOBJ_VERSION, GMONVERSION, Header, Profile, PtrWidth,
    Variant,
};
use crate::read::cursor::decode;
use crate::read::{ReadOptions, bsd_old, bsd44, gnu};

/// Darwin's "new format" magic for 32-bit and 64-bit programs.
const DARWIN_MAGICS: [u32; 2] = [0xbeef_babe, 0xbeef_babf];

/// One way of reading the file.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    variant: Variant,
    encoding: Encoding,
    /// Old BSD only.
    header_size: u32,
}

impl Candidate {
    fn parse(&self, bytes: &[u8]) -> Result<Profile> {
        match self.variant {
            Variant::Gnu => gnu::read(bytes, self.encoding),
            Variant::Bsd44 => bsd44::read(bytes, self.encoding),
            Variant::BsdOld => bsd_old::read(bytes, self.encoding, self.header_size),
        }
    }

    fn describe(&self) -> String {
        let endian = match self.encoding.endian {
            Endian::Little => "little-endian",
            Endian::Big => "big-endian",
        };
        let variant = match self.variant {
            Variant::Gnu => "GNU".to_string(),
            Variant::Bsd44 => "4.4BSD".to_string(),
            Variant::BsdOld => format!("old BSD ({}-byte header)", self.header_size),
        };
        format!(
            "{variant} {endian} {}-byte pointers",
            self.encoding.ptr_width.bytes()
        )
    }
}

/// Reads `bytes` with whatever `opts` forces, guessing the rest as the module doc describes.
pub(crate) fn read_detected(bytes: &[u8], opts: &ReadOptions) -> Result<Profile> {
    if bytes.is_empty() {
        // Every variant fails the same way; say it once.
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
    let starts_gnu = bytes.get(..4) == Some(&GMON_MAGIC[..]);
    let variants: &[Variant] = match opts.variant {
        Some(Variant::Gnu) => &[Variant::Gnu],
        Some(Variant::Bsd44) => &[Variant::Bsd44],
        Some(Variant::BsdOld) => &[Variant::BsdOld],
        // A forced old BSD header size says which variant it is.
        None if opts.bsd_old_header_size.is_some() => &[Variant::BsdOld],
        None if starts_gnu => &[Variant::Gnu],
        None => &[Variant::Bsd44, Variant::BsdOld],
    };
    let variant_certain = variants.len() == 1;

    let mut candidates = Vec::new();
    for &variant in variants {
        for endian in endians(bytes, variant, opts) {
            let widths = match (opts.ptr_width, opts.bsd_old_header_size) {
                (Some(w), _) => vec![w],
                // A forced header size also says which pointer width it belongs to.
                (None, Some(12)) if variant == Variant::BsdOld => vec![PtrWidth::Four],
                (None, Some(_)) if variant == Variant::BsdOld => vec![PtrWidth::Eight],
                (None, _) => vec![PtrWidth::Eight, PtrWidth::Four],
            };
            for ptr_width in widths {
                let encoding = Encoding { endian, ptr_width };
                if variant == Variant::BsdOld {
                    let sizes = match opts.bsd_old_header_size {
                        Some(s) => vec![s],
                        // The first allowed size: 12 or 20 (see the module doc).
                        None => bsd_old::header_sizes(ptr_width)[..1].to_vec(),
                    };
                    for header_size in sizes {
                        candidates.push(Candidate {
                            variant,
                            encoding,
                            header_size,
                        });
                    }
                } else {
                    candidates.push(Candidate {
                        variant,
                        encoding,
                        header_size: 0,
                    });
                }
            }
        }
    }

    let mut best: Option<(u32, Profile)> = None;
    let mut failures: Vec<(Candidate, Error)> = Vec::new();
    for cand in candidates {
        if cand.variant == Variant::BsdOld
            && !bsd_old::header_sizes(cand.encoding.ptr_width).contains(&cand.header_size)
        {
            return Err(Error::InvalidOptions {
                problem: "an old BSD header is 12 bytes for 4-byte pointers and 20 or 24 bytes \
                          for 8-byte pointers",
            });
        }
        // A 4.4BSD parse always beats an old BSD one (score rule), so skip the work.
        if cand.variant == Variant::BsdOld
            && best
                .as_ref()
                .is_some_and(|(_, p)| p.header.variant() == Variant::Bsd44)
        {
            continue;
        }
        match cand.parse(bytes) {
            Ok(p) => {
                let s = score(&p);
                // Strictly greater: on a tie the earlier (preferred) candidate stays.
                if best.as_ref().is_none_or(|(b, _)| s > *b) {
                    best = Some((s, p));
                }
            }
            Err(e) => failures.push((cand, e)),
        }
    }
    // gprof's rule: `GMONVERSION` where 4.4BSD has its version makes the file 4.4BSD, so a
    // broken 4.4BSD file is reported as such rather than read as old BSD.
    let broken_bsd44 = failures
        .iter()
        .position(|(c, _)| c.variant == Variant::Bsd44 && is_hinted(c, bytes));
    if let Some((_, p)) = best {
        match broken_bsd44 {
            Some(i) if p.header.variant() == Variant::BsdOld => {
                return Err(failures.swap_remove(i).1);
            }
            _ => return Ok(p),
        }
    }
    // A candidate the file itself points at explains the failure best.
    if let Some(i) = failures.iter().position(|(c, _)| is_hinted(c, bytes)) {
        return Err(failures.swap_remove(i).1);
    }
    let furthest = failures
        .iter()
        .map(|(_, e)| e.offset().unwrap_or(0))
        .max()
        .unwrap_or(0);
    if variant_certain
        && let Some(i) = failures
            .iter()
            .position(|(_, e)| e.offset().unwrap_or(0) == furthest)
    {
        return Err(failures.swap_remove(i).1);
    }
    let tried = failures
        .iter()
        .map(|(c, e)| format!("{}: {e}", c.describe()))
        .collect::<Vec<_>>()
        .join("; ");
    Err(Error::UnknownFormat {
        offset: furthest,
        tried,
    })
}

/// Whether the file's own bytes single out this candidate: a 4.4BSD header whose version word
/// is `GMONVERSION` in this encoding, or a GNU file whose first record is a histogram with its
/// dimension text where this pointer width puts it (offset 45 for 8 bytes, 37 for 4).
fn is_hinted(c: &Candidate, bytes: &[u8]) -> bool {
    let p = c.encoding.ptr_width.bytes();
    match c.variant {
        Variant::Bsd44 => bytes
            .get(2 * p + 4..2 * p + 8)
            .is_some_and(|w| decode(w, c.encoding.endian) == u64::from(GMONVERSION)),
        Variant::Gnu => {
            let at = gnu::HEADER_SIZE + 1 + 2 * p + 8;
            bytes.get(gnu::HEADER_SIZE) == Some(&0)
                && bytes.get(at..at + 15).is_some_and(|d| {
                    d.first().is_some_and(u8::is_ascii_alphabetic)
                        && d.iter().all(|&b| b == 0 || b.is_ascii_graphic())
                })
        }
        Variant::BsdOld => false,
    }
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
            // Neither order gives a known version: the GNU reader reports it (little-endian
            // is as good a guess as any for the number it prints).
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

/// How plausible a successful parse is; higher is better.
fn score(p: &Profile) -> u32 {
    let mut s = 0;
    if matches!(p.header, Header::Bsd44(_)) {
        s += 1000;
    }
    if p.trailing.is_empty() {
        s += 100;
    }
    for h in p.histograms() {
        if h.low_pc <= h.high_pc {
            s += 10;
        }
        let name = &h.dimension.name;
        let text_len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let printable = name[..text_len]
            .iter()
            .all(|b| b.is_ascii_graphic() || *b == b' ');
        let padded = name[text_len..].iter().all(|&b| b == 0);
        if printable && padded {
            s += 10;
        }
    }
    s
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
        for what in [
            "4.4BSD little-endian 8-byte",
            "4.4BSD big-endian 4-byte",
            "old BSD (20-byte header)",
            "old BSD (12-byte header) big-endian",
        ] {
            assert!(tried.contains(what), "{what} missing from {tried}");
        }
        // The furthest any candidate got: the 8-byte 4.4BSD version word at 0x14.
        assert_eq!(e.offset(), Some(0x14));
        assert!(
            e.to_string()
                .starts_with("offset 0x14: not a gmon.out file: "),
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
