//! The `gmon` command: the command line (`cli`: parse arguments, run the subcommand, turn errors
//! into a message and an exit status) and one thin module per subcommand (`commands`). They are
//! private to this binary; all the work is in the `gmon_tools` library, which never sees them.

// The doc comments of the commands' arguments are clap's help texts, printed as written
// (`OUT.<name>`), not markdown that rustdoc renders.
#![allow(rustdoc::invalid_html_tags)]

mod cli;
mod commands;
mod input_args;

// The library's modules at this crate's root, so that the commands name them `crate::flame`,
// `crate::output`, ... as any module of the library would (a glob: a module the library adds
// is reachable the same way).
use gmon_tools::*;

fn main() -> std::process::ExitCode {
    cli::main()
}
