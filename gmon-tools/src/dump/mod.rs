//! `gmon dump`'s printers: every header field and record of a profile, for people (text) or
//! machines (JSON). Functions over `impl Write`, so tests call them directly.
//!
//! # JSON output
//!
//! [`print_json`] prints one JSON object `{"version": 1, "files": [FILE...]}` (spec/json.md),
//! with an object per file: `{"file": NAME, "size": BYTES, "profile": PROFILE, "reading":
//! READING, "ambiguous": [READING…], "less_plausible": [READING…]}`, where `READING` is
//! `{"variant", "encoding", "header_size"?}` (`header_size` for old BSD only): the reading
//! detection chose and the other readings the file also allows, as plausible as the chosen one
//! or less (spec/gmon-out.md, "Ambiguity"; both lists are empty when only one reading was
//! accepted). `version` ([`JSON_VERSION`]) changes whenever a field changes meaning or
//! disappears (new fields may be added within a version). `PROFILE` is gmon-format's serde form
//! of [`Profile`], whose field names are stable:
//!
//! * `encoding`: `{"endian": "little"|"big", "ptr_width": 4|8}`
//! * `header`: `{"variant": "gnu", "version", "spare": [12 bytes]}`,
//!   `{"variant": "bsd44", "version", "prof_rate", "histcounter_type", "spare": [8 bytes]}` or
//!   `{"variant": "bsd-old", "header_size"}`
//! * `records`: in file order, each with a `kind`:
//!   - `{"kind": "histogram", "low_pc", "high_pc", "prof_rate", "dimension": {"name": [15 bytes],
//!     "abbrev": byte}, "bins": [counts]}`
//!   - `{"kind": "arc", "from_pc", "self_pc", "count"}`
//!   - `{"kind": "basic-blocks", "legacy_name"?: [bytes], "blocks": [{"address", "count",
//!     "legacy"?: {"function": [bytes], "file": [bytes], "line"}}]}` (`legacy*` only in
//!     version-0 GNU files)
//! * `trailing`: `[bytes]`, present only when a BSD file ends in a partial arc.
//!
//! Every number is a plain JSON integer (addresses too), every byte string an array of integers,
//! so the output reads back into a `Profile` with `serde_json`.

use std::io::{self, Write};

mod sidecar;
pub use sidecar::{Belongs, JsonSidecar, SidecarBeside, print_beside, print_sidecar};

use gmon_format::read::{Detected, Reading};
use gmon_format::{BasicBlockRecord, Header, Histogram, Profile, Record, Variant};

/// How much of the histograms to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DumpOptions {
    /// Print every bin, not only the runs of nonzero bins.
    pub all_bins: bool,
}

/// Values printed per line in bin lists.
const BINS_PER_LINE: usize = 16;

/// Prints `p` (read from the file `name` of `size` bytes) for a person: the header fields, then
/// each record with its file offset. Histograms show their nonzero runs (every bin with
/// [`DumpOptions::all_bins`]).
pub fn print_profile<W: Write + ?Sized>(
    out: &mut W,
    name: &str,
    size: u64,
    p: &Profile,
    opts: &DumpOptions,
) -> io::Result<()> {
    print_title(out, name, size, p)?;
    print_body(out, size, p, opts)
}

/// Like [`print_profile`] for a file read by detection: after the title line, the other
/// readings the file allows, as spec/gmon-out.md ("Ambiguity") says a reader reports them.
pub fn print_detected<W: Write + ?Sized>(
    out: &mut W,
    name: &str,
    size: u64,
    d: &Detected,
    opts: &DumpOptions,
) -> io::Result<()> {
    print_title(out, name, size, &d.profile)?;
    print_ambiguity(out, d)?;
    print_body(out, size, &d.profile, opts)
}

/// The `ambiguous:` and `less plausible:` lines (none when one reading was accepted).
pub fn print_ambiguity<W: Write + ?Sized>(out: &mut W, d: &Detected) -> io::Result<()> {
    for r in &d.ambiguous {
        writeln!(
            out,
            "ambiguous: also reads as {r}, as plausibly (the fixed order chose; force the \
             encoding to be sure)"
        )?;
    }
    for r in &d.less_plausible {
        writeln!(out, "less plausible: also reads as {r}")?;
    }
    Ok(())
}

fn print_title<W: Write + ?Sized>(
    out: &mut W,
    name: &str,
    size: u64,
    p: &Profile,
) -> io::Result<()> {
    let variant = p.header.variant();
    let long_name = match variant {
        Variant::Gnu => "GNU tagged format",
        Variant::Bsd44 => "4.4BSD format",
        Variant::BsdOld => "old BSD format",
    };
    writeln!(
        out,
        "{name}: {long_name} ({variant}), {}-endian, {}-byte pointers, {size} bytes, {} records",
        p.encoding.endian,
        p.encoding.ptr_width,
        p.records.len()
    )
}

fn print_body<W: Write + ?Sized>(
    out: &mut W,
    size: u64,
    p: &Profile,
    opts: &DumpOptions,
) -> io::Result<()> {
    // The offsets come from laying the profile out again; a profile that was read always can be.
    let offsets = gmon_format::write::record_offsets(p).unwrap_or_default();
    print_header(out, p, size)?;
    for (i, r) in p.records.iter().enumerate() {
        let at = offsets
            .get(i)
            .map_or(String::new(), |o| format!(" at {o:#x}"));
        match r {
            Record::Histogram(h) => {
                writeln!(out, "record {i}{at}: histogram")?;
                print_histogram(out, h, opts)?;
            }
            Record::CallArc(a) => writeln!(
                out,
                "record {i}{at}: arc  from_pc {:#x}  self_pc {:#x}  count {}",
                a.from_pc, a.self_pc, a.count
            )?,
            Record::BasicBlocks(b) => {
                writeln!(
                    out,
                    "record {i}{at}: basic-blocks ({} blocks)",
                    b.blocks.len()
                )?;
                print_blocks(out, b)?;
            }
        }
    }
    if !p.trailing.is_empty() {
        writeln!(
            out,
            "trailing: {} bytes after the last whole arc (ignored by gprof): {}",
            p.trailing.len(),
            hex_bytes(&p.trailing)
        )?;
    }
    Ok(())
}

fn print_header<W: Write + ?Sized>(out: &mut W, p: &Profile, size: u64) -> io::Result<()> {
    writeln!(out, "header")?;
    // A BSD header starts with the histogram's range and `ncnt`; they are shown here in file
    // order, and again with the histogram. `ncnt` is whatever precedes the arcs.
    let bsd_fields = |out: &mut W| -> io::Result<()> {
        if let Some(Record::Histogram(h)) = p.records.first() {
            writeln!(out, "  {:<18} {:#x}", "lpc", h.low_pc)?;
            writeln!(out, "  {:<18} {:#x}", "hpc", h.high_pc)?;
        }
        let arc_bytes =
            (p.records.len().saturating_sub(1) * 3 * p.encoding.ptr_width.bytes()) as u64;
        let ncnt = size
            .saturating_sub(arc_bytes)
            .saturating_sub(p.trailing.len() as u64);
        writeln!(out, "  {:<18} {ncnt} (header + histogram bytes)", "ncnt")
    };
    match &p.header {
        Header::Gnu(h) => {
            writeln!(out, "  {:<18} \"gmon\"", "magic")?;
            writeln!(out, "  {:<18} {}", "version", h.version)?;
            writeln!(out, "  {:<18} {}", "spare", hex_bytes(&h.spare))?;
        }
        Header::Bsd44(h) => {
            bsd_fields(out)?;
            writeln!(out, "  {:<18} {:#x}", "version", h.version)?;
            writeln!(out, "  {:<18} {}", "prof_rate", h.prof_rate)?;
            let counter = match h.histcounter_type {
                0 => "u16 bins".to_string(),
                t if t < 0 => format!("signed {}-bit bins", t.unsigned_abs()),
                t => format!("unsigned {t}-bit bins"),
            };
            writeln!(
                out,
                "  {:<18} {} ({counter})",
                "histcounter_type", h.histcounter_type
            )?;
            writeln!(out, "  {:<18} {}", "spare", hex_bytes(&h.spare))?;
        }
        Header::BsdOld(h) => {
            bsd_fields(out)?;
            writeln!(out, "  {:<18} {}", "header_size", h.header_size)?;
        }
    }
    Ok(())
}

fn print_histogram<W: Write + ?Sized>(
    out: &mut W,
    h: &Histogram,
    opts: &DumpOptions,
) -> io::Result<()> {
    writeln!(out, "  {:<18} {:#x}", "low_pc", h.low_pc)?;
    writeln!(out, "  {:<18} {:#x}", "high_pc", h.high_pc)?;
    writeln!(out, "  {:<18} {}", "bins", h.bins.len())?;
    writeln!(out, "  {:<18} {}", "prof_rate", h.prof_rate.0)?;
    // Display shows every byte up to the last non-NUL one, escaped: the JSON form keeps the raw
    // bytes, the text form must not make "seconds\0\x02" look like "seconds".
    writeln!(out, "  {:<18} {}", "dimension", h.dimension)?;
    writeln!(
        out,
        "  {:<18} {:.6} (2-byte units per bin)",
        "scale",
        h.scale()
    )?;
    writeln!(out, "  {:<18} {}", "total", h.total())?;
    let runs = nonzero_runs(&h.bins);
    let nonzero: usize = runs.iter().map(|r| r.1 - r.0).sum();
    writeln!(
        out,
        "  {:<18} {nonzero} in {} runs",
        "nonzero bins",
        runs.len()
    )?;
    if opts.all_bins {
        for start in (0..h.bins.len()).step_by(BINS_PER_LINE) {
            let end = (start + BINS_PER_LINE).min(h.bins.len());
            writeln!(
                out,
                "    [{start:>6}] {:#x}: {}",
                bin_pc(h, start),
                join(h.bins.get(start..end).unwrap_or(&[]))
            )?;
        }
    } else {
        for (start, end) in runs {
            writeln!(
                out,
                "    bins {start}..{}  pc {:#x}..{:#x}:",
                end - 1,
                bin_pc(h, start),
                bin_pc(h, end)
            )?;
            for chunk in h.bins.get(start..end).unwrap_or(&[]).chunks(BINS_PER_LINE) {
                writeln!(out, "      {}", join(chunk))?;
            }
        }
    }
    Ok(())
}

fn print_blocks<W: Write + ?Sized>(out: &mut W, b: &BasicBlockRecord) -> io::Result<()> {
    if let Some(name) = &b.legacy_name {
        writeln!(
            out,
            "  {:<18} \"{}\"",
            "legacy_name",
            String::from_utf8_lossy(name)
        )?;
    }
    for bb in &b.blocks {
        write!(out, "    address {:#x}  count {}", bb.address, bb.count)?;
        if let Some(l) = &bb.legacy {
            write!(
                out,
                "  function \"{}\"  file \"{}\"  line {}",
                String::from_utf8_lossy(&l.function),
                String::from_utf8_lossy(&l.file),
                l.line
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Half-open `(start, end)` index ranges of the maximal runs of nonzero bins.
pub fn nonzero_runs(bins: &[u64]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, &b) in bins.iter().enumerate() {
        match (b != 0, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, bins.len()));
    }
    runs
}

/// First address gprof assigns to bin `i`: `low_pc + 2 * trunc(scale * i)`.
pub fn bin_pc(h: &Histogram, i: usize) -> u64 {
    let units = (h.scale() * i as f64) as u64;
    h.low_pc.wrapping_add(units.wrapping_mul(2))
}

fn join(values: &[u64]) -> String {
    values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

fn hex_bytes(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One file of a JSON dump.
#[derive(Debug, serde::Serialize)]
pub struct JsonFile<'a> {
    /// The file name as given on the command line.
    pub file: &'a str,
    /// Its size in bytes.
    pub size: u64,
    /// The profile, in gmon-format's serde form (see the module doc).
    pub profile: &'a Profile,
    /// The reading chosen (absent when the caller did not detect).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reading: Option<&'a Reading>,
    /// Other accepted readings as plausible as the chosen one (spec/gmon-out.md, "Ambiguity").
    pub ambiguous: &'a [Reading],
    /// Other accepted readings that are less plausible.
    pub less_plausible: &'a [Reading],
    /// The runtime's sidecar beside the file, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sidecar: Option<SidecarBeside>,
}

impl<'a> JsonFile<'a> {
    /// The JSON form of a file read by detection.
    pub fn detected(file: &'a str, size: u64, d: &'a Detected) -> JsonFile<'a> {
        JsonFile {
            file,
            size,
            profile: &d.profile,
            reading: Some(&d.reading),
            ambiguous: &d.ambiguous,
            less_plausible: &d.less_plausible,
            sidecar: None,
        }
    }
}

/// One sidecar file of a JSON dump: `{"file", "size", "gmonx": SIDECAR}`.
#[derive(Debug, serde::Serialize)]
pub struct JsonSidecarFile<'a> {
    /// The file name as given on the command line.
    pub file: &'a str,
    /// Its size in bytes.
    pub size: u64,
    /// The sidecar (spec/json.md, "SIDECAR").
    pub gmonx: Box<JsonSidecar<'a>>,
}

/// One entry of a JSON dump's `files`: a profile or a sidecar.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum JsonEntry<'a> {
    /// A gmon.out.
    Profile(JsonFile<'a>),
    /// A gmon-write sidecar.
    Sidecar(JsonSidecarFile<'a>),
}

/// The file a JSON dump stopped at: `{"file", "class", "offset", "message"}`, with the class
/// and offset spec/gmon-out.md ("Error classes") fixes; `offset` is null for an error that
/// has none (`io`: the file cannot be read).
#[derive(Debug, serde::Serialize)]
pub struct JsonError {
    /// The file name as given on the command line.
    pub file: String,
    /// The error class (`gmon_format::Error::class`, or `io`).
    pub class: &'static str,
    /// The byte offset where reading stopped.
    pub offset: Option<u64>,
    /// The message stderr carries too.
    pub message: String,
}

/// The version of `gmon dump --json`'s schema (spec/json.md).
pub const JSON_VERSION: u32 = 1;

/// The whole JSON document: the schema version, the files, and the error that stopped it.
#[derive(serde::Serialize)]
struct JsonDump<'a> {
    version: u32,
    files: &'a [JsonEntry<'a>],
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a JsonError>,
}

/// Prints the files as one pretty-printed JSON object (field names in the module doc), and the
/// error that stopped the dump, if one did.
pub fn print_json<W: Write + ?Sized>(
    out: &mut W,
    files: &[JsonEntry<'_>],
    error: Option<&JsonError>,
) -> io::Result<()> {
    let doc = JsonDump {
        version: JSON_VERSION,
        files,
        error,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gmon_format::{CallArc, Dimension, Encoding, ProfRate};

    fn sample() -> Profile {
        let mut p = Profile::new_gnu(Encoding::LITTLE_64);
        p.records.push(Record::Histogram(Histogram {
            low_pc: 0x1000,
            high_pc: 0x1040,
            prof_rate: ProfRate(100),
            dimension: Dimension::SECONDS,
            bins: vec![0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9],
        }));
        p.records.push(Record::CallArc(CallArc {
            from_pc: 0x1010,
            self_pc: 0x1020,
            count: 7,
        }));
        p
    }

    #[test]
    fn runs_are_maximal_and_half_open() {
        assert_eq!(nonzero_runs(&[0, 1, 2, 0, 3]), vec![(1, 3), (4, 5)]);
        assert_eq!(nonzero_runs(&[]), vec![]);
        assert_eq!(nonzero_runs(&[5]), vec![(0, 1)]);
    }

    #[test]
    fn text_dump_shows_offsets_fields_and_runs() {
        let mut out = Vec::new();
        print_profile(&mut out, "x.out", 99, &sample(), &DumpOptions::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("x.out: GNU tagged format (gnu), little-endian, 8-byte"));
        assert!(text.contains("record 0 at 0x14: histogram"), "{text}");
        assert!(text.contains("  low_pc             0x1000\n"), "{text}");
        assert!(
            text.contains("    bins 1..2  pc 0x1004..0x100c:\n      3 4\n"),
            "{text}"
        );
        assert!(
            text.contains("    bins 15..15  pc 0x103c..0x1040:\n      9\n"),
            "{text}"
        );
        // 20 header + 41 + 2 * 16 bins = 93 = 0x5d.
        assert!(text.contains("record 1 at 0x5d: arc  from_pc 0x1010  self_pc 0x1020  count 7"));
    }

    #[test]
    fn text_dump_escapes_a_damaged_dimension_name() {
        let mut p = sample();
        if let Some(Record::Histogram(h)) = p.records.first_mut() {
            h.dimension.name[8] = 2;
        }
        let mut out = Vec::new();
        print_profile(&mut out, "x", 1, &p, &DumpOptions::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("  dimension          \"seconds\\x00\\x02\" 's'\n"),
            "{text}"
        );
    }

    #[test]
    fn bsd_header_shows_lpc_hpc_and_ncnt() {
        let p = sample()
            .convert_to(Variant::Bsd44, Encoding::BIG_32)
            .unwrap();
        let bytes = gmon_format::to_vec(&p).unwrap();
        let mut out = Vec::new();
        print_profile(
            &mut out,
            "b",
            bytes.len() as u64,
            &p,
            &DumpOptions::default(),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        // 32-byte header + 16 u16 bins = 64.
        assert!(text.contains("  lpc                0x1000\n  hpc                0x1040\n  ncnt               64 (header + histogram bytes)\n  version            0x51879\n"), "{text}");
        assert!(text.contains("record 1 at 0x40: arc"), "{text}");
    }

    #[test]
    fn all_bins_lists_every_bin() {
        let mut out = Vec::new();
        let opts = DumpOptions { all_bins: true };
        print_profile(&mut out, "x", 1, &sample(), &opts).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("    [     0] 0x1000: 0 3 4 0 0 0 0 0 0 0 0 0 0 0 0 9\n"),
            "{text}"
        );
    }

    #[test]
    fn json_reads_back_into_the_profile() {
        let p = sample();
        let mut out = Vec::new();
        print_json(
            &mut out,
            &[JsonEntry::Profile(JsonFile {
                file: "a",
                size: 1,
                profile: &p,
                reading: None,
                ambiguous: &[],
                less_plausible: &[],
                sidecar: None,
            })],
            None,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["version"], JSON_VERSION);
        let f = &v["files"][0];
        assert_eq!(f["file"], "a");
        assert_eq!(f["profile"]["header"]["variant"], "gnu");
        assert_eq!(f["profile"]["records"][1]["kind"], "arc");
        let back: Profile = serde_json::from_value(f["profile"].clone()).unwrap();
        assert_eq!(back, p);
    }
}
