//! `gmon record` (not yet implemented).

use std::io::Write;
use std::process::ExitCode;

/// Arguments of `gmon record`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Arguments (not yet interpreted).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

/// Runs `gmon record`.
pub fn run(_args: Args, _out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`gmon record` is not implemented yet")
}
