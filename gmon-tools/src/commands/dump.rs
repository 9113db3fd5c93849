//! `gmon dump`: print every header field and record of one or more profiles.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::dump::{DumpOptions, JsonFile, print_detected, print_json};
use crate::input::read_detected;
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

/// Runs `gmon dump`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let mut read_opts = args.input.to_options();
    read_opts.bsd_old_header_size = args.bsd_old_header_size;
    let mut opts = DumpOptions::default();
    opts.all_bins = args.bins;
    let mut profiles = Vec::new();
    for (i, path) in args.files.iter().enumerate() {
        let (p, size) = read_detected(path, &read_opts)?;
        if args.json {
            profiles.push((path.display().to_string(), size, p));
        } else {
            if i > 0 {
                writeln!(out)?;
            }
            print_detected(out, &path.display().to_string(), size, &p, &opts)?;
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
