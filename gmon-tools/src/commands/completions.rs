//! `gmon completions SHELL`: a completion script generated from the same clap definitions as
//! the command line itself, so the two cannot drift.

use std::io::Write;
use std::process::ExitCode;

use clap_complete::Shell;

/// Arguments of `gmon completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    bash:  gmon completions bash > ~/.local/share/bash-completion/completions/gmon\n  \
    zsh:   gmon completions zsh > ~/.zfunc/_gmon   (with fpath+=~/.zfunc before compinit)\n  \
    fish:  gmon completions fish > ~/.config/fish/completions/gmon.fish\n  \
    elvish: gmon completions elvish >> ~/.config/elvish/rc.elv\n  \
    powershell: gmon completions powershell >> $PROFILE")]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// Runs `gmon completions`: the script for `cli`, the whole command line (given by the caller,
/// which defines it: this module does not import it), goes to standard output.
pub fn run(args: Args, mut cli: clap::Command, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    clap_complete::generate(args.shell, &mut cli, "gmon", out);
    Ok(ExitCode::SUCCESS)
}
