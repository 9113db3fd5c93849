//! One module per subcommand: each defines its clap `Args` and a `run` that calls the library.

pub mod convert;
pub mod diff;
pub mod dump;
pub mod flame;
pub mod gprof;
pub mod merge;
pub mod pprof;
pub mod record;
