//! `gmon dump`: print every header field and record of one or more profiles.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gmon_format::{Endian, PtrWidth, ReadOptions, Variant};

use crate::dump::{DumpOptions, JsonFile, print_detected, print_json};
use crate::output::read_input;

/// Arguments of `gmon dump`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "EXAMPLES:\n  gmon dump gmon.out\n  gmon dump --bins gmon.out\n  \
                  gmon dump --json gmon.out gmon.2.out > profiles.json\n  \
                  gmon dump --variant bsd-old --endian big --ptr-width 4 m68k.gmon",
    after_long_help = "Prints the variant, byte order and pointer width that were detected (or \
                  forced), the header, then each record with its file offset. Addresses are in \
                  hex; histograms are summarised as runs of nonzero bins (all bins with --bins).\n\n\
                  JSON: an array with one {\"file\", \"size\", \"profile\"} object per FILE. \
                  The profile's field names are stable:\n  \
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
    /// guessed, because such a file also reads as a 20-byte header with two extra bins.
    #[arg(long, value_name = "BYTES", value_parser = header_size_parser())]
    pub bsd_old_header_size: Option<u32>,
}

/// Options that force how input files are read (each one detected when not given).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InputFormat {
    /// Read the files as this variant instead of detecting it.
    #[arg(long, value_name = "VARIANT")]
    pub variant: Option<VariantArg>,

    /// Read the files with this byte order instead of guessing it.
    #[arg(long, value_name = "ORDER")]
    pub endian: Option<EndianArg>,

    /// Read the files with this pointer width (bytes) instead of guessing it.
    #[arg(long, value_name = "BYTES")]
    pub ptr_width: Option<PtrWidthArg>,
}

impl InputFormat {
    /// The library's read options.
    pub fn to_options(&self) -> ReadOptions {
        let mut o = ReadOptions::new();
        o.variant = self.variant.map(Variant::from);
        o.endian = self.endian.map(Endian::from);
        o.ptr_width = self.ptr_width.map(PtrWidth::from);
        o
    }
}

/// Accepts the old BSD header sizes 12, 20 and 24.
pub fn header_size_parser() -> impl clap::builder::TypedValueParser<Value = u32> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(["12", "20", "24"])
        .map(|s| s.parse::<u32>().unwrap_or_default())
}

/// A gmon.out layout, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VariantArg {
    /// GNU tagged format ("gmon" magic; glibc, binutils gprof).
    Gnu,
    /// 4.4BSD `gmonhdr` with GMONVERSION and the profiling rate.
    Bsd44,
    /// Old BSD `phdr` (lpc, hpc, ncnt).
    BsdOld,
}

impl From<VariantArg> for Variant {
    fn from(v: VariantArg) -> Variant {
        match v {
            VariantArg::Gnu => Variant::Gnu,
            VariantArg::Bsd44 => Variant::Bsd44,
            VariantArg::BsdOld => Variant::BsdOld,
        }
    }
}

/// A byte order, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EndianArg {
    /// Least significant byte first (x86, ARM).
    Little,
    /// Most significant byte first (s390x, SPARC, m68k).
    Big,
}

impl From<EndianArg> for Endian {
    fn from(e: EndianArg) -> Endian {
        match e {
            EndianArg::Little => Endian::Little,
            EndianArg::Big => Endian::Big,
        }
    }
}

/// A pointer width in bytes, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PtrWidthArg {
    /// 4-byte addresses (32-bit programs).
    #[value(name = "4")]
    Four,
    /// 8-byte addresses (64-bit programs).
    #[value(name = "8")]
    Eight,
}

impl From<PtrWidthArg> for PtrWidth {
    fn from(w: PtrWidthArg) -> PtrWidth {
        match w {
            PtrWidthArg::Four => PtrWidth::Four,
            PtrWidthArg::Eight => PtrWidth::Eight,
        }
    }
}

/// Runs `gmon dump`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let mut read_opts = args.input.to_options();
    read_opts.bsd_old_header_size = args.bsd_old_header_size;
    let opts = DumpOptions {
        all_bins: args.bins,
    };
    let mut profiles = Vec::new();
    for (i, path) in args.files.iter().enumerate() {
        let bytes = read_input(path)?;
        let p = gmon_format::read_detailed(&bytes, &read_opts)
            .with_context(|| path.display().to_string())?;
        if args.json {
            profiles.push((path.display().to_string(), bytes.len() as u64, p));
        } else {
            if i > 0 {
                writeln!(out)?;
            }
            print_detected(
                out,
                &path.display().to_string(),
                bytes.len() as u64,
                &p,
                &opts,
            )?;
        }
    }
    if args.json {
        let files: Vec<JsonFile<'_>> = profiles
            .iter()
            .map(|(file, size, detected)| JsonFile::detected(file, *size, detected))
            .collect();
        print_json(out, &files)?;
    }
    Ok(ExitCode::SUCCESS)
}
