//! `gmon pprof`: a gzip'd profile.proto from gmon.out files.

use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::commands::write_output;
use crate::{model, pprof};

/// The file written without `-o`.
const DEFAULT_OUTPUT: &str = "profile.pb.gz";

/// Arguments of `gmon pprof`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Write a pprof profile (profile.proto, gzip'd)",
    // The subcommand's doc comment in cli.rs sets `about` and `long_about`, so the long
    // description goes into `after_help`, which is shown with both -h and --help.
    after_help = "Write a pprof profile (gzip'd profile.proto) from one or more gmon.out files, summed.\n\n\
Sample types, in order: samples/count, cpu/nanoseconds (period = 1e9 / profiling rate), \
calls/count; cpu is the default. CPU samples carry the stacks `gmon flame` draws: estimated from \
call counts (said so in the profile's comment) unless the runtime stored exact stacks. The leaf of \
each stack is where the ticks fell. With estimated stacks a function's leaf CPU time is gprof's \
fractional credit to the nanosecond, so `pprof -top` flat time equals gprof's self seconds; leaves \
sit at the source lines `gprof -l` credits, so `pprof -lines` shows the hot lines. With exact \
stacks each sample counts whole for the function holding its sampled PC, while gprof splits a \
histogram bin that straddles a function boundary between the two functions, so flat time is \
only close to gprof's self seconds (pigz: 766 ms vs 763.8 ms for its hottest function). Call \
counts are not passed off as time: each caller -> callee arc is a sample [callee, caller] with \
calls = the count and samples = cpu = 0; see them with `pprof -sample_index=calls`. Functions \
carry demangled and mangled names and DWARF file and line. Each object (the executable, and for a \
recorded run every shared library and the vDSO) is a mapping at its real addresses with its file \
offset and build id, and every location is at the address that was sampled (exact stacks) or at \
a histogram bin (estimated ones), so `pprof -disasm` shows the hot instructions; for a function \
of a shared library add -show_from=FUNCTION, since pprof takes an object's load address from the \
first sample it meets, which may be in another object. time_nanos is the newest input's \
modification time minus the sampled CPU time (an estimate). The same input gives the same bytes. \
Details: spec/stacks.md.\n\nEXAMPLES:\n  gmon pprof --exe ./prog gmon.out -o profile.pb.gz\n  pprof -top profile.pb.gz\n  pprof -lines -top profile.pb.gz\n  pprof -sample_index=calls -traces profile.pb.gz\n  pprof -disasm lib_fn -show_from lib_fn profile.pb.gz"
)]
pub struct Args {
    /// The executable and the profiles.
    #[command(flatten)]
    pub inputs: crate::input_args::ViewInputs,
    /// The profile to write (gzip'd protobuf) [default: profile.pb.gz, announced on stderr].
    #[arg(short = 'o', long, value_name = "FILE",
          long_help = super::output_help!("The profile to write (gzip'd protobuf) [default: \
                                           profile.pb.gz, announced on stderr]."))]
    pub output: Option<PathBuf>,
}

/// Runs `gmon pprof`.
pub fn run(args: Args, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (exe, gmon) = args.inputs.split()?;
    let output = args.output.as_deref().unwrap_or(DEFAULT_OUTPUT.as_ref());
    refuse_terminal(output)?;
    let load = model::LoadOptions::default().with_force(args.inputs.force);
    let l = model::load_with(exe.as_deref(), &gmon, &load)?;
    let mut opts = pprof::PprofOptions::default();
    opts.prof_rate = l.prof_rate;
    opts.cpu_stacks = l.cpu_stacks.clone();
    opts.objects = l.objects.clone();
    opts.inline = model::profile_inline_chains(&l);
    (opts.time_nanos, opts.duration_nanos) = run_time(&l, &gmon);
    opts.comments = gmon
        .iter()
        .map(|p| format!("input: {}", p.display()))
        .collect();
    opts.comments
        .push(model::drawn_samples(&l, l.stacks.total_samples()));
    for note in &l.notes {
        eprintln!("gmon pprof: {note}");
    }
    let profile = pprof::build_profile(
        &l.graph,
        &l.stacks,
        &l.functions,
        Some(&l.executable),
        &opts,
    )?;
    pprof::check_valid(&profile).map_err(|e| {
        anyhow::anyhow!("internal error: the profile would be refused by pprof: {e}")
    })?;
    let bytes = pprof::encode_gzip(&profile)?;
    write_output(output, |w| Ok(w.write_all(&bytes)?))?;
    if args.output.is_none() {
        // A file the user did not name is announced, so it is not a surprise later.
        eprintln!("gmon pprof: wrote {DEFAULT_OUTPUT} (no -o given)");
    }
    Ok(ExitCode::SUCCESS)
}

/// When the run started and how long it was sampled (spec/stacks.md §7, "Time"): the CPU
/// time of every tick (the runtime's count with exact stacks, the histogram's otherwise) at
/// the profiling rate, before the last profile's modification time (written at exit). Neither
/// gmon.out nor the sidecar records a start time, so the start is an estimate: earlier than the
/// real one when threads or processes ran at once. (0, 0) when there is no rate.
fn run_time(l: &model::Loaded, gmon: &[PathBuf]) -> (i64, i64) {
    let ticks = match &l.runtime_counters {
        Some(c) => c.samples,
        None => l.analysis.total_samples(),
    };
    let duration = i64::try_from(ticks)
        .ok()
        .and_then(|t| t.checked_mul(pprof::period_nanos(l.prof_rate)))
        .unwrap_or(0);
    let written = gmon
        .iter()
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .max()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok());
    match written {
        Some(end) if duration > 0 => (end.saturating_sub(duration).max(0), duration),
        _ => (0, duration),
    }
}

/// gzip's rule: compressed bytes are never written to a terminal, where they are garbage and
/// can leave the terminal in a strange state. Checked before any work is done.
fn refuse_terminal(output: &Path) -> anyhow::Result<()> {
    let terminal = if output.as_os_str() == "-" {
        std::io::stdout().is_terminal()
    } else {
        // A terminal named by path (/dev/tty, /dev/pts/N, /dev/stdout on one).
        std::fs::metadata(output).is_ok_and(|m| m.file_type().is_char_device())
            && std::fs::OpenOptions::new()
                .write(true)
                .open(output)
                .is_ok_and(|f| f.is_terminal())
    };
    if terminal {
        let name = match output.as_os_str() == "-" {
            true => "standard output".to_owned(),
            false => output.display().to_string(),
        };
        anyhow::bail!(
            "refusing to write compressed data to a terminal ({name}); redirect it to a file \
             or a pipe, or give -o FILE"
        );
    }
    Ok(())
}
