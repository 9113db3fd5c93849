//! Command-line front end: one subcommand per module in [`crate::commands`].

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::commands;
use crate::input::{NO_LAYOUT_FITS, NotAProfile, VERBOSE_HINT};
use crate::output::{Checked, WriteError};

/// Tools for the gmon.out profile format.
#[derive(Debug, Parser)]
#[command(
    name = "gmon",
    version,
    about = "Tools for gmon.out profiles: gprof-compatible reports, merge, diff, flame graphs, pprof",
    after_help = "EXAMPLES:\n  gmon gprof -b ./prog gmon.out      flat profile and call graph, as GNU gprof prints them\n  gmon dump gmon.out                 every record of a profile\n  gmon merge run1.out run2.out -o all.out\n  gmon flame ./prog gmon.out > out.svg\n  gmon report ./prog gmon.out -o profile.html   the whole profile in one HTML page"
)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,

    /// Say more when something fails (e.g. every layout tried for a file that is not a profile).
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print GNU gprof's reports (flat profile, call graph, ...), byte for byte.
    Gprof(commands::gprof::Args),
    /// Sum several profiles without losing counts.
    Merge(commands::merge::Args),
    /// Show what changed between two profiles.
    Diff(commands::diff::Args),
    /// Draw a flame graph (SVG) or print folded stacks.
    Flame(commands::flame::Args),
    /// Write a pprof profile (profile.proto, gzip'd).
    Pprof(commands::pprof::Args),
    /// Write a callgrind profile (KCachegrind, callgrind_annotate).
    Callgrind(commands::callgrind::Args),
    /// Write the whole profile as one HTML file that opens in any browser.
    Report(commands::report::Args),
    /// Print every record of a profile.
    Dump(commands::dump::Args),
    /// Rewrite a profile in another variant, byte order or pointer width.
    Convert(commands::convert::Args),
    /// Profile an unmodified program with the gmon-write runtime (LD_PRELOAD).
    Record(commands::record::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::completions::Args),
    /// Print or install the manual pages (gmon.1 and gmon-SUBCOMMAND.1).
    Man(commands::man::Args),
}

/// Entry point of the binary: runs the command and maps errors to `gmon: ...` and exit 1
/// (2 for `gmon diff`, whose 1 means "different").
pub fn main() -> ExitCode {
    keep_freed_memory();
    // `gmon gprof` takes GNU gprof's command line as it is, bytes included: clap does not see
    // it (it refuses a first word such as a non-UTF-8 `--fo\xff`, which gprof reports in its
    // own words).
    let mut argv = std::env::args_os();
    let (command, verbose) = match (argv.next(), argv.next()) {
        (Some(_), Some(sub)) if sub == "gprof" => (
            Command::Gprof(commands::gprof::Args {
                rest: argv.collect(),
            }),
            false,
        ),
        _ => {
            let cli = Cli::parse();
            (cli.command, cli.verbose)
        }
    };
    // Standard output through a writer that keeps its first error, so that a full disk or
    // /dev/full is reported once, as standard output's, whatever the command made of it.
    let stdout = io::stdout();
    let mut out = Checked::new(stdout.lock());
    // `gmon diff` exits as diff(1) does: 1 means "different", so its trouble is 2.
    let trouble = match command {
        Command::Diff(_) => ExitCode::from(2),
        _ => ExitCode::FAILURE,
    };
    let result = match command {
        Command::Gprof(args) => commands::gprof::run(args, &mut out),
        Command::Merge(args) => commands::merge::run(args, &mut out),
        Command::Diff(args) => commands::diff::run(args, &mut out),
        Command::Flame(args) => commands::flame::run(args, &mut out),
        Command::Pprof(args) => commands::pprof::run(args, &mut out),
        Command::Callgrind(args) => commands::callgrind::run(args, &mut out),
        Command::Report(args) => commands::report::run(args, &mut out),
        Command::Dump(args) => commands::dump::run(args, &mut out),
        Command::Convert(args) => commands::convert::run(args, &mut out),
        Command::Record(args) => commands::record::run(args, &mut out),
        Command::Completions(args) => commands::completions::run(args, Cli::command(), &mut out),
        Command::Man(args) => commands::man::run(args, Cli::command(), &mut out),
    };
    let result = result.and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    let result = match (result, out.take_error()) {
        (Err(_), Some(e)) => Err(WriteError::new(Path::new("-"), "cannot write", &e).into()),
        (result, _) => result,
    };
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = out.flush();
            eprintln!("gmon: {}", message(&err, verbose));
            trouble
        }
    }
}

/// The error as one line (`{:#}`), except that a file no gmon.out layout explains is said in
/// a few words; with `-v`, every layout tried follows, one per line.
fn message(err: &anyhow::Error, verbose: bool) -> String {
    // The first link of the chain that says "not a profile": ours, classified by input.rs, or
    // the reader's own from a loader that does not classify (its contexts name the file).
    let found = links(err).enumerate().find_map(|(i, e)| {
        if let Some(e) = e.downcast_ref::<NotAProfile>() {
            return Some((i, e.to_string(), e.tried.as_str()));
        }
        match e.downcast_ref::<gmon_format::Error>() {
            Some(gmon_format::Error::UnknownFormat { tried, .. }) => Some((
                i,
                format!("not a gmon.out profile: {NO_LAYOUT_FITS}"),
                tried.as_str(),
            )),
            _ => None,
        }
    });
    let Some((i, last, tried)) = found else {
        return format!("{err:#}");
    };
    let mut parts: Vec<String> = links(err).take(i).map(|e| e.to_string()).collect();
    parts.push(last);
    let text = parts.join(": ");
    if !verbose {
        return text;
    }
    let lines: Vec<String> = tried.split("; ").map(|t| format!("  tried {t}")).collect();
    format!("{}\n{}", text.replace(VERBOSE_HINT, ""), lines.join("\n"))
}

/// glibc's malloc gives every block of 128 KiB or more its own mapping and unmaps it when it is
/// freed, so the next one is faulted in page by page again. gprof's line mode builds and drops
/// several vectors of megabytes; on objdump (-b -l) those page faults were a sixth of the run.
/// Blocks up to 32 MiB (glibc's maximum) now come from the heap, which keeps freed memory for
/// reuse.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const KEEP: libc::c_int = 32 << 20;
        // SAFETY: mallopt only sets malloc parameters; it is called before any other thread
        // exists and returns 0 (ignored) when a value is refused.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, KEEP);
            libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP);
        }
    }
}

/// The links of `err`'s chain, each library [`crate::Error`] that wraps another error as it is
/// seen as that error (its `inner`), so that the reader's or the OS's error is found by type.
fn links(err: &anyhow::Error) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    err.chain().map(|e| {
        e.downcast_ref::<crate::Error>()
            .or_else(|| e.downcast_ref::<Box<crate::Error>>().map(|b| &**b))
            .map_or(e, crate::Error::inner)
    })
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    links(err).any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || e.downcast_ref::<WriteError>()
                .is_some_and(|e| e.kind == io::ErrorKind::BrokenPipe)
    })
}
