//! `gmon merge`: sum profiles without losing counts (see `spec/merge.md`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gmon_format::merge::{MergeOptions, fit_counts_owned};
use gmon_format::sidecar::{GmonLink, sidecar_to_vec};
use gmon_format::{Variant, sidecar_path};

use crate::commands::write_output;
use crate::input_args::{InputFormat, VariantArg};
use crate::merge::{MergeFilesOptions, MergedFiles, expand_inputs, merge_files};
use crate::model::Executable;
use crate::output::Staged;

/// The output when no `-o` is given (said on stderr, since nothing on the command line named it).
const DEFAULT_OUTPUT: &str = "gmon.sum";

/// Arguments of `gmon merge`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "EXAMPLES:\n  gmon merge gmon.1 gmon.2 gmon.3                 writes gmon.sum\n  \
                  gmon merge --exe ./prog run*/gmon.out -o all.out\n  \
                  ls runs/*.out > list; gmon merge --from-list list -o all.out",
    after_long_help = "Counts are summed exactly (in 64 bits). A histogram bin above 65535 or an \
                  arc count above 2^32-1 does not fit one GNU record, so the excess is carried in \
                  further records of the same range / addresses, which GNU gprof adds back \
                  together: `gprof EXE merged` reports exactly what `gprof EXE A B C` reports. \
                  Arcs keep their order of first appearance (gprof breaks ties by it).\n\n\
                  Histograms with the same range are summed, disjoint ones are kept as separate \
                  records, overlapping ones are merged over the union of their ranges when their \
                  bins line up; otherwise the merge fails unless --rebin is given, which \
                  redistributes counts proportionally to the address overlap (and says so on \
                  stderr). Different profiling rates, dimensions, byte orders or pointer widths \
                  are refused. With --exe, inputs whose addresses lie outside the executable's \
                  code, or whose runtime sidecar (FILE.gmonx) names another build id, are \
                  refused.\n\n\
                  Each input is read while the previous one is added, so at most two are in memory. Long lists: an \
                  argument @LISTFILE, or --from-list LISTFILE (- for stdin), reads one path per \
                  line. Any unreadable or malformed input stops the merge with its name (and \
                  byte offset), and OUT is left as it was (see -o).\n\n\
                  Profiles written by gmon record have a sidecar (FILE.gmonx: call stacks, \
                  shared-library samples); when every input has one, their sum is written to \
                  OUT.gmonx, linked to OUT, so the views draw every stack. When only some have \
                  one, or OUT is standard output, no sidecar is written and stderr says so.\n\n\
                  EXAMPLES:\n  gmon merge gmon.1 gmon.2 gmon.3                 writes gmon.sum\n  \
                  gmon merge --exe ./prog run*/gmon.out -o all.out\n  \
                  ls runs/*.out > list; gmon merge --from-list list -o all.out"
)]
pub struct Args {
    /// Input profiles (any variant); @LISTFILE reads paths from LISTFILE, one per line.
    #[arg(value_name = "PROFILE", required_unless_present = "from_list")]
    pub inputs: Vec<PathBuf>,

    /// Read further input paths from LISTFILE, one per line (- for stdin). May be repeated.
    #[arg(long, value_name = "LISTFILE")]
    pub from_list: Vec<PathBuf>,

    /// Where to write the sum [default: gmon.sum, announced on stderr].
    #[arg(short, long, value_name = "OUT",
          long_help = super::output_help!("Where to write the sum [default: gmon.sum, announced \
                                           on stderr]."))]
    pub output: Option<PathBuf>,

    /// The executable the profiles belong to: inputs are read with its byte order and pointer
    /// width, and refused when they cannot belong to it.
    #[arg(long, value_name = "EXE")]
    pub exe: Option<PathBuf>,

    /// Variant to write.
    #[arg(long, value_name = "VARIANT", default_value = "gnu")]
    pub to: VariantArg,

    /// Redistribute overlapping histograms whose bins do not line up, instead of failing.
    #[arg(long)]
    pub rebin: bool,

    /// Read inputs as this variant instead of detecting it.
    #[arg(long, value_name = "VARIANT")]
    pub from: Option<VariantArg>,
}

/// Runs `gmon merge`.
pub fn run(args: Args, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let paths = expand_inputs(&args.inputs, &args.from_list)?;
    let executable = args.exe.as_deref().map(Executable::open).transpose()?;
    let mut opts = MergeFilesOptions::default();
    opts.merge = MergeOptions::new().rebin(args.rebin);
    opts.read = InputFormat {
        variant: args.from,
        endian: None,
        ptr_width: None,
    }
    .to_options();
    opts.executable = executable;
    opts.progress = true;
    let MergedFiles {
        merged,
        sidecar,
        without_sidecar,
        ..
    } = merge_files(&paths, &opts)?;
    for note in &merged.rebinned {
        eprintln!("gmon: notice: --rebin: {note} (counts split proportionally, totals exact)");
    }
    if let Some((first, why)) = without_sidecar.first() {
        eprintln!(
            "gmon merge: {} of {} inputs have no sidecar of their own ({}: {why}); the sum \
             gets none, so the others' call stacks and shared-library samples are not kept",
            without_sidecar.len(),
            paths.len(),
            first.display()
        );
    }
    let variant: Variant = args.to.into();
    // The sum has no provenance: name the input when there is one, else how many were summed.
    let profile =
        fit_counts_owned(merged.profile, variant).with_context(|| match paths.as_slice() {
            [one] => one.display().to_string(),
            many => format!("the sum of {} inputs", many.len()),
        })?;
    let output = args.output.as_deref().unwrap_or(DEFAULT_OUTPUT.as_ref());
    // A sidecar goes beside a file; standard output, a FIFO or a device has no "beside".
    let stream = output.as_os_str() == "-"
        || std::fs::metadata(output).is_ok_and(|m| !m.file_type().is_file());
    if sidecar.is_some() && stream {
        eprintln!(
            "gmon merge: the sum of the inputs' sidecars has no place beside {}: call stacks \
             and shared-library samples are not kept (give -o FILE)",
            match stream && output.as_os_str() == "-" {
                true => "standard output".into(),
                false => output.display().to_string(),
            }
        );
    }
    match sidecar.filter(|_| !stream) {
        None => write_output(output, |w| {
            gmon_format::write(&profile, w).context("writing the merged profile")?;
            Ok(())
        })?,
        Some(mut sidecar) => {
            // The profile and its sidecar, linked to the bytes written (spec/runtime.md §5.8),
            // as one set: both staged, then renamed, so a failure leaves neither.
            let bytes = gmon_format::to_vec(&profile).context("writing the merged profile")?;
            sidecar.gmon = Some(GmonLink::of(&bytes));
            let sidecar_bytes =
                sidecar_to_vec(&sidecar).context("writing the sum of the sidecars")?;
            let mut gmon = Staged::new(output)?;
            let mut side = Staged::new(&sidecar_path(output))?;
            gmon.fill(|w| Ok::<_, crate::Error>(w.write_all(&bytes)?))?;
            side.fill(|w| Ok::<_, crate::Error>(w.write_all(&sidecar_bytes)?))?;
            gmon.commit()?;
            side.commit()?;
        }
    }
    if args.output.is_none() {
        eprintln!("gmon merge: wrote {DEFAULT_OUTPUT} (no -o given)");
    }
    Ok(ExitCode::SUCCESS)
}
