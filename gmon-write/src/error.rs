//! The crate's error type.

use std::io;
use std::path::PathBuf;

/// Result of the fallible functions of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// What can go wrong when starting the runtime or writing a profile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The runtime's handler of its sample signal was replaced while profiling. The
    /// interposed `sigaction` and `signal` prevent that; only a raw `rt_sigaction` system call
    /// can do it.
    #[error(
        "gmon-write's handler of its sample signal was replaced while the program was being \
         profiled (a raw rt_sigaction system call); the profile stops at that point"
    )]
    HandlerReplaced,
    /// A `Profiler` (or another `profil`/`pcsample` scope) is already active.
    #[error("{0} is already active in this process")]
    AlreadyActive(&'static str),
    /// No `Profiler` is running (already stopped, or never started).
    #[error("no Profiler is running")]
    NotRunning,
    /// The sampling rate is out of range.
    #[error("sampling rate must be between 1 and 100000 Hz, not {0}")]
    BadRate(u32),
    /// The main executable's text could not be found with `dl_iterate_phdr`.
    #[error("cannot find the main executable's text segment (dl_iterate_phdr)")]
    NoText,
    /// A system call failed.
    #[error("{what}: {source}")]
    Os {
        /// The call.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// Writing an output file failed.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn last_os(what: &'static str) -> Error {
        Error::Os {
            what,
            source: io::Error::last_os_error(),
        }
    }
}
