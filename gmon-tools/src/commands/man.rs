//! `gmon man`: manual pages (roff) for `gmon` and each subcommand, rendered by clap_mangen from
//! the clap definitions the command line uses, so the pages cannot drift from `--help`.
//! `gmon-gprof.1` takes its options from the gprof engine's own help text, since that command
//! line is parsed by the engine, not by clap.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, roman};

use crate::output::write_output;

/// Arguments of `gmon man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    gmon man | man -l -                        read gmon(1)\n  \
    gmon man flame | man -l -                  read gmon-flame(1)\n  \
    gmon man --dir ~/.local/share/man/man1     install every page (then `man gmon-flame`)")]
pub struct Args {
    /// The subcommand whose page to print [default: gmon's own page].
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "dir")]
    pub subcommand: Option<String>,
    /// Write every page (gmon.1, gmon-SUBCOMMAND.1) into DIR, created if missing, instead of
    /// printing one.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The top-level command as the pages describe it: the built-in `help` subcommand has no page.
fn command() -> clap::Command {
    let mut cmd = crate::cli::Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Every page: (file name, roff text).
fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let top = command();
    let mut pages = vec![render(&top)?];
    for sub in top.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages.push(render(sub)?);
    }
    Ok(pages)
}

/// One page. A subcommand's page is named `gmon-SUBCOMMAND` (clap's display name).
fn render(cmd: &clap::Command) -> anyhow::Result<(String, Vec<u8>)> {
    let man = Man::new(cmd.clone());
    let mut roff = Vec::new();
    if cmd.get_name() == "gprof" {
        man.render_title(&mut roff)?;
        man.render_name_section(&mut roff)?;
        man.render_synopsis_section(&mut roff)?;
        man.render_description_section(&mut roff)?;
        gprof_options(&mut roff)?;
    } else {
        man.render(&mut roff)?;
    }
    Ok((man.get_filename(), roff))
}

/// `gmon gprof`'s options: the engine's help text, kept as it is laid out.
fn gprof_options(w: &mut dyn Write) -> std::io::Result<()> {
    let mut roff = Roff::new();
    roff.control("SH", ["OPTIONS"]).control("nf", []);
    for line in crate::gprof::report::HELP.lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    roff.to_writer(w)
}

/// Runs `gmon man`.
pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let pages = pages()?;
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("{}: {}", dir.display(), crate::output::os_reason(&e)))?;
        for (name, text) in &pages {
            write_output(&dir.join(name), |w| Ok(w.write_all(text)?))?;
        }
        eprintln!("gmon man: wrote {} pages to {}", pages.len(), dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let wanted = match &args.subcommand {
        None => "gmon.1".to_owned(),
        Some(sub) => format!("gmon-{sub}.1"),
    };
    let Some((_, text)) = pages.iter().find(|(name, _)| *name == wanted) else {
        let names: Vec<&str> = pages
            .iter()
            .filter_map(|(n, _)| n.strip_prefix("gmon-")?.strip_suffix(".1"))
            .collect();
        bail!(
            "no manual page for `{}`; the subcommands are: {}",
            args.subcommand.as_deref().unwrap_or_default(),
            names.join(", ")
        );
    };
    out.write_all(text)?;
    Ok(ExitCode::SUCCESS)
}
