//! One module per subcommand: each defines its clap `Args` and a `run` that calls the library.

/// The long help of an `-o` option: `$what` (one sentence), then what every output path means
/// (`crate::output`), in the same words for every command.
macro_rules! output_help {
    ($what:literal) => {
        concat!(
            $what,
            "\n\n`-` is standard output. A symbolic link is written through to its target. A \
             FIFO or a device (/dev/null, /dev/stdout, a terminal) is written in place. A \
             regular file is written to a temporary file beside it and renamed over it only \
             when complete, so an error never leaves a partial file. A write error (a full \
             disk, /dev/full) is reported with the file's name and the exit status is 1."
        )
    };
}
pub(crate) use output_help;

/// [`crate::output::write_output`] for a command, whose `fill` fails with an `anyhow::Error`.
pub(crate) fn write_output(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    crate::output::write_output(path, fill)
}

pub mod callgrind;
pub mod completions;
pub mod convert;
pub mod diff;
pub mod dump;
pub mod flame;
pub mod gprof;
pub mod man;
pub mod merge;
pub mod pprof;
pub mod record;
pub mod report;
