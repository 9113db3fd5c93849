//! `gmon convert`: rewrite a profile in another variant, byte order or pointer width.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gmon_format::{Encoding, Endian, Header, PtrWidth, Variant};

use crate::commands::write_output;
use crate::input::read_profile;
use crate::input_args::{EndianArg, InputFormat, PtrWidthArg, VariantArg, header_size_parser};

/// Arguments of `gmon convert`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "EXAMPLES:\n  gmon convert --to bsd44 gmon.out -o gmon.bsd\n  \
                  gmon convert --to gnu --endian big --ptr-width 4 gmon.out -o m68k.out\n  \
                  gmon convert --to gnu --from bsd-old --from-endian big old.gmon -o new.out",
    after_long_help = "Records keep their order and every count is kept exactly: a value that does \
                  not fit the target (an address above 4 GiB for --ptr-width 4, an arc count \
                  above 2^32-1 or a bin above 65535 for GNU files) is an error, never truncated. \
                  A BSD file holds one histogram: GNU histogram records with identical ranges \
                  are summed, other combinations are refused, as are basic-block records. Old \
                  BSD files store no profiling rate, so only 100 Hz profiles convert to bsd-old. \
                  A BSD file's partial last arc (which gprof ignores) is dropped.\n\n\
                  EXAMPLES:\n  gmon convert --to bsd44 gmon.out -o gmon.bsd\n  \
                  gmon convert --to gnu --endian big --ptr-width 4 gmon.out -o m68k.out\n  \
                  gmon convert --to gnu --from bsd-old --from-endian big old.gmon -o new.out"
)]
pub struct Args {
    /// The input profile.
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// Where to write the converted profile.
    #[arg(short, long, value_name = "OUT",
          long_help = super::output_help!("Where to write the converted profile."))]
    pub output: PathBuf,

    /// Variant to write.
    #[arg(long, value_name = "VARIANT")]
    pub to: VariantArg,

    /// Byte order to write [default: the input's].
    #[arg(long, value_name = "ORDER")]
    pub endian: Option<EndianArg>,

    /// Pointer width to write, in bytes [default: the input's].
    #[arg(long, value_name = "BYTES")]
    pub ptr_width: Option<PtrWidthArg>,

    /// With --to bsd-old: the header size to write (12 for 4-byte pointers, 20 or 24 for 8)
    /// [default: the input's if it is old BSD and fits, else 12 or 20 as GNU gprof expects].
    #[arg(long, value_name = "BYTES", value_parser = header_size_parser())]
    pub bsd_old_header_size: Option<u32>,

    /// Read IN as this variant instead of detecting it.
    #[arg(long, value_name = "VARIANT")]
    pub from: Option<VariantArg>,

    /// Read IN with this byte order instead of guessing it.
    #[arg(long, value_name = "ORDER")]
    pub from_endian: Option<EndianArg>,

    /// Read IN with this pointer width (bytes) instead of guessing it.
    #[arg(long, value_name = "BYTES")]
    pub from_ptr_width: Option<PtrWidthArg>,

    /// Read IN as old BSD with this header size (12, 20 or 24; 24 is never guessed).
    #[arg(long, value_name = "BYTES", value_parser = header_size_parser())]
    pub from_bsd_old_header_size: Option<u32>,
}

impl Args {
    /// How to read IN, as the library's options.
    pub fn read_options(&self) -> gmon_format::ReadOptions {
        let mut o = InputFormat {
            variant: self.from,
            endian: self.from_endian,
            ptr_width: self.from_ptr_width,
        }
        .to_options();
        o.bsd_old_header_size = self.from_bsd_old_header_size;
        o
    }
}

/// Runs `gmon convert`.
pub fn run(args: Args, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let name = args.input.display().to_string();
    let (p, _) = read_profile(&args.input, &args.read_options())?;
    let encoding = Encoding {
        endian: args.endian.map_or(p.encoding.endian, Endian::from),
        ptr_width: args.ptr_width.map_or(p.encoding.ptr_width, PtrWidth::from),
    };
    let mut converted = p
        .convert_to(Variant::from(args.to), encoding)
        .with_context(|| name.clone())?;
    if let Some(header_size) = args.bsd_old_header_size {
        let Header::BsdOld(h) = &mut converted.header else {
            anyhow::bail!("--bsd-old-header-size only applies with --to bsd-old");
        };
        h.header_size = header_size;
        // The writer checks that the size suits the pointer width.
        gmon_format::to_vec(&converted).with_context(|| name.clone())?;
    }
    write_output(&args.output, |w| {
        gmon_format::write(&converted, w)
            .with_context(|| format!("{}: write failed", args.output.display()))
    })?;
    Ok(ExitCode::SUCCESS)
}
