//! `gmon dump`: print every header field and record of one or more profiles.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gmon_format::read::Detected;
use gmon_format::sidecar::{GMONX_MAGIC, SectionSpan, read_sidecar_sections};
use gmon_format::{ReadOptions, Sidecar, read_sidecar, sidecar_path};

use crate::dump::{
    Belongs, DumpOptions, JsonEntry, JsonError, JsonFile, JsonSidecar, JsonSidecarFile,
    SidecarBeside, print_beside, print_detected, print_json, print_sidecar,
};
use crate::input::{explain, read_input};
use crate::input_args::{InputFormat, header_size_parser};

/// Arguments of `gmon dump`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "EXAMPLES:\n  gmon dump gmon.out\n  gmon dump --bins gmon.out\n  \
                  gmon dump --json gmon.out gmon.2.out > profiles.json\n  \
                  gmon dump --variant bsd-old --endian big --ptr-width 4 m68k.gmon",
    after_long_help = "Prints the variant, byte order and pointer width that were detected (or \
                  forced), the header, then each record with its file offset. Addresses are in \
                  hex; histograms are summarised as runs of nonzero bins (all bins with --bins).\n\n\
                  JSON (spec/json.md): {\"version\": 1, \"files\": [...]} with one \
                  {\"file\", \"size\", \"profile\", \"reading\", \"ambiguous\", \
                  \"less_plausible\"} object per FILE; the version changes when \
                  a field changes meaning or disappears. The profile's field names are stable:\n  \
                  encoding: {endian: little|big, ptr_width: 4|8}\n  \
                  header: {variant: gnu, version, spare} | {variant: bsd44, version, prof_rate, \
                  histcounter_type, spare} | {variant: bsd-old, header_size}\n  \
                  records: in file order, each one of\n    \
                  {kind: histogram, low_pc, high_pc, prof_rate, dimension: {name, abbrev}, bins}\n    \
                  {kind: arc, from_pc, self_pc, count}\n    \
                  {kind: basic-blocks, legacy_name?, blocks: [{address, count, legacy?: \
                  {function, file, line}}]}\n  \
                  trailing: present only when a BSD file ends in a partial arc\n\
                  Next to profile: reading {variant, encoding, header_size?} (the reading chosen), \
                  ambiguous and less_plausible (the other readings the file allows: as plausible, \
                  or less; spec/gmon-out.md \"Ambiguity\"). The text output prints them as \
                  \"ambiguous:\" and \"less plausible:\" lines.\n\
                  Numbers are JSON integers (addresses too); byte strings are arrays of integers.\n\n\
                  A gmon-write sidecar (FILE.gmonx) is dumped section by section, with each \
                  section's offset (JSON: {\"file\", \"size\", \"gmonx\"}); a profile's dump \
                  names the sidecar beside it and whether it belongs to it. A file that cannot be \
                  read ends the dump with exit status 1; with --json the document is still \
                  printed, with an \"error\" object: {file, class, offset, message}.\n\n\
                  EXAMPLES:\n  gmon dump gmon.out\n  gmon dump --bins gmon.out\n  \
                  gmon dump --json gmon.out gmon.2.out > profiles.json\n  \
                  gmon dump --variant bsd-old --endian big --ptr-width 4 m68k.gmon"
)]
pub struct Args {
    /// Profiles to dump.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Print JSON instead of text (field names: see --help).
    #[arg(long)]
    pub json: bool,

    /// List every histogram bin, not only the runs of nonzero bins.
    #[arg(long)]
    pub bins: bool,

    /// How to read the files.
    #[command(flatten)]
    pub input: InputFormat,

    /// Old BSD files: the header size (12, 20 or 24). 24 (FreeBSD's padded header) is never
    /// guessed, because such a file also reads as a 20-byte header with two extra bins. Forcing
    /// it also forces the old BSD variant (unless --variant says another) and its pointer width
    /// (12: 4 bytes; 20, 24: 8 bytes); see spec/gmon-out.md.
    #[arg(long, value_name = "BYTES", value_parser = header_size_parser())]
    pub bsd_old_header_size: Option<u32>,
}

/// One file as read: a profile (and the sidecar beside it), or a sidecar.
enum Dumped {
    Profile(Detected, Option<SidecarBeside>),
    Sidecar(Box<Sidecar>, Vec<SectionSpan>),
}

/// What stopped reading a file: the message, and its class and offset for `--json`.
struct Failure {
    error: anyhow::Error,
    class: &'static str,
    offset: Option<u64>,
}

impl From<anyhow::Error> for Failure {
    /// An error before the file's bytes were parsed: it could not be read.
    fn from(error: anyhow::Error) -> Failure {
        Failure {
            error,
            class: "io",
            offset: None,
        }
    }
}

impl From<crate::Error> for Failure {
    /// An error before the file's bytes were parsed: it could not be read.
    fn from(error: crate::Error) -> Failure {
        anyhow::Error::from(error).into()
    }
}

impl Failure {
    /// The reader's error `e`, said by `say`.
    fn of(e: gmon_format::Error, say: impl FnOnce(gmon_format::Error) -> crate::Error) -> Failure {
        let (class, offset) = (e.class(), e.offset());
        Failure {
            class,
            offset,
            error: say(e).into(),
        }
    }
}

/// Reads `path`: a sidecar by its magic, else a profile by detection.
fn load(path: &Path, opts: &ReadOptions) -> Result<(Dumped, u64), Failure> {
    let bytes = read_input(path)?;
    let size = bytes.len() as u64;
    if bytes.starts_with(&GMONX_MAGIC) {
        let (sidecar, sections) = read_sidecar_sections(&bytes)
            .map_err(|e| Failure::of(e, |e| crate::Error::from(e).context(path.display())))?;
        return Ok((Dumped::Sidecar(Box::new(sidecar), sections), size));
    }
    let detected = gmon_format::read::read_detailed(&bytes, opts)
        .map_err(|e| Failure::of(e, |e| explain(path, &bytes, e)))?;
    Ok((Dumped::Profile(detected, beside(path, &bytes)), size))
}

/// The sidecar beside the profile at `path`, when one is there and reads.
fn beside(path: &Path, gmon: &[u8]) -> Option<SidecarBeside> {
    let file = sidecar_path(path);
    // A path found, not named: only a regular file of a plausible size (spec/inputs.md §1).
    let bytes = gmon_binary::open::read_found(&file).ok()?;
    let sidecar = read_sidecar(&bytes).ok()?;
    Some(SidecarBeside {
        file: file.display().to_string(),
        size: bytes.len() as u64,
        belongs: Belongs::of(&sidecar, gmon),
    })
}

/// Runs `gmon dump`. With `--json`, a file that cannot be read still gives a document: the
/// files before it and an `error` object with the class and offset (spec/json.md); the exit
/// status is 1 and stderr says the same as without `--json`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let mut read_opts = args.input.to_options();
    read_opts.bsd_old_header_size = args.bsd_old_header_size;
    let mut opts = DumpOptions::default();
    opts.all_bins = args.bins;
    let mut dumped = Vec::new();
    let mut failure = None;
    for (i, path) in args.files.iter().enumerate() {
        let (d, size) = match load(path, &read_opts) {
            Ok(loaded) => loaded,
            Err(f) if args.json => {
                failure = Some((path, f));
                break;
            }
            Err(f) => return Err(f.error),
        };
        let name = path.display().to_string();
        if args.json {
            dumped.push((name, size, d));
            continue;
        }
        if i > 0 {
            writeln!(out)?;
        }
        match &d {
            Dumped::Profile(p, beside) => {
                print_detected(out, &name, size, p, &opts)?;
                if let Some(b) = beside {
                    print_beside(out, b)?;
                }
            }
            Dumped::Sidecar(s, sections) => print_sidecar(out, &name, size, s, sections)?,
        }
    }
    if !args.json {
        return Ok(ExitCode::SUCCESS);
    }
    let files: Vec<JsonEntry<'_>> = dumped
        .iter_mut()
        .map(|(file, size, d)| match d {
            Dumped::Profile(p, beside) => {
                let mut f = JsonFile::detected(file, *size, p);
                f.sidecar = beside.take();
                JsonEntry::Profile(f)
            }
            Dumped::Sidecar(s, sections) => JsonEntry::Sidecar(JsonSidecarFile {
                file,
                size: *size,
                gmonx: Box::new(JsonSidecar::new(s, sections)),
            }),
        })
        .collect();
    let error = failure.as_ref().map(|(path, f)| JsonError {
        file: path.display().to_string(),
        class: f.class,
        offset: f.offset,
        message: format!("{:#}", f.error),
    });
    print_json(out, &files, error.as_ref())?;
    match failure {
        Some((_, f)) => Err(f.error),
        None => Ok(ExitCode::SUCCESS),
    }
}
