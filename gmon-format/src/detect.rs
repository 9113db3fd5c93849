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
//! 4. **Candidates.** Every remaining combination of variant, byte order, pointer width (and, for
//!    old BSD with 8-byte pointers, header size 20 or 24) is parsed in full. A candidate only
//!    survives if the whole file parses: GNU records must have tags 0–2 and end exactly at the
//!    end of the file; a 4.4BSD header needs `GMONVERSION` at offset 2P+4; BSD headers need
//!    `lpc <= hpc` and an `ncnt` equal to the header size plus whole counters, within the file.
//! 5. **Choosing** among survivors, by score and then by the order they were tried in
//!    (little-endian before big-endian, 8-byte before 4-byte pointers, 4.4BSD before old BSD,
//!    20-byte before 24-byte old headers):
//!    * a 4.4BSD parse beats an old BSD one (gprof's rule: `GMONVERSION` decides);
//!    * a BSD file whose arcs end exactly at the end of the file beats one with a partial arc;
//!    * a histogram whose `low_pc <= high_pc` and whose dimension is printable text beats one
//!      that is not (this separates GNU pointer widths);
//!    * a BSD histogram with exactly one bin per 4 bytes of text (the BSD runtimes' ratio) beats
//!      one without, which is what picks a 24-byte old header over a 20-byte one.
//! 6. **Nothing fits.** If the variant was certain (forced, or the `"gmon"` magic), the error of
//!    the candidate that read furthest is returned as is; otherwise
//!    [`Error::UnknownFormat`] lists every candidate tried and why it failed.

use crate::error::{Error, Result};
use crate::model::{
    Encoding, Endian, GMON_MAGIC, GMON_SHOBJ_VERSION, Header, Profile, PtrWidth, Variant,
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
    if opts.variant.is_none() {
        refuse_unsupported(bytes)?;
    }
    let starts_gnu = bytes.get(..4) == Some(&GMON_MAGIC[..]);
    let variants: &[Variant] = match opts.variant {
        Some(Variant::Gnu) => &[Variant::Gnu],
        Some(Variant::Bsd44) => &[Variant::Bsd44],
        Some(Variant::BsdOld) => &[Variant::BsdOld],
        None if starts_gnu => &[Variant::Gnu],
        None => &[Variant::Bsd44, Variant::BsdOld],
    };
    let variant_certain = variants.len() == 1;

    let mut candidates = Vec::new();
    for &variant in variants {
        for endian in endians(bytes, variant, opts) {
            for ptr_width in opts
                .ptr_width
                .map_or(vec![PtrWidth::Eight, PtrWidth::Four], |w| vec![w])
            {
                let encoding = Encoding { endian, ptr_width };
                if variant == Variant::BsdOld {
                    let sizes = match opts.bsd_old_header_size {
                        Some(s) => vec![s],
                        None => bsd_old::header_sizes(ptr_width).to_vec(),
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
            failures.push((
                cand,
                Error::BadNcnt {
                    offset: 0,
                    ncnt: cand.header_size,
                    expected: "an old BSD header size of 12 (4-byte pointers), 20 or 24 \
                               (8-byte pointers)",
                },
            ));
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
    if let Some((_, p)) = best {
        return Ok(p);
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
        let bsd = !matches!(p.header, Header::Gnu(_));
        if bsd && (h.bins.len() as u64).checked_mul(4) == Some(h.high_pc.wrapping_sub(h.low_pc)) {
            s += 1;
        }
    }
    s
}
