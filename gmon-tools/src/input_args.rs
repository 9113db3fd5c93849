//! Command-line value types shared by several subcommands: how to read input profiles
//! (`--variant`/`--from`, `--endian`, `--ptr-width`, old BSD header sizes).

use std::path::PathBuf;

use gmon_format::{Endian, PtrWidth, ReadOptions, Variant};

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

/// The inputs of a view of summed profiles (`gmon pprof`, `gmon callgrind`): the executable
/// and the gmon.out files, and whether to read a profile that fails the checks.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ViewInputs {
    /// The profiled executable (default: the one the runtime's sidecar names, else ./a.out).
    #[arg(long, value_name = "EXECUTABLE")]
    pub exe: Option<PathBuf>,
    /// gmon.out files; several are summed. gprof's order, an executable first, is accepted too.
    #[arg(value_name = "GMON", required = true)]
    pub gmon: Vec<PathBuf>,
    /// Read a profile that fails the checks that it belongs to the executable (build id,
    /// histogram range, arc addresses, samples in functions).
    #[arg(long)]
    pub force: bool,
}

impl ViewInputs {
    /// The executable (if named) and the profiles, an executable operand first taken as the
    /// executable (spec/stacks.md §10).
    pub fn split(&self) -> anyhow::Result<(Option<PathBuf>, Vec<PathBuf>)> {
        Ok(crate::model::executable_and_profiles(
            self.exe.as_deref(),
            &self.gmon,
        )?)
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
