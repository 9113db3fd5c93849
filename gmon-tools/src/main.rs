//! The `gmon` command. All the work is in the `gmon_tools` library; this is only the boundary:
//! parse arguments, run the subcommand, turn errors into a message and an exit status.

use std::process::ExitCode;

fn main() -> ExitCode {
    gmon_tools::cli::main()
}
