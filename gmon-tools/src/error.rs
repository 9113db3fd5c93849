//! The one error type of the library ([`Error`]) and [`Context`], which puts what was being done
//! (the file, the step) before an error's own message.
//!
//! An error prints as one line, its parts joined by ": " (`{:#}`, of an [`Error`] or of the
//! command's `anyhow::Error`):
//! `gmon.out: truncated histogram record at offset 0x1c: 400 bytes expected, 12 left`. The
//! wrapped errors of the layers below (the reader's, the merger's, the OS's) keep their own
//! message and stay reachable as they are, so a caller can match on them.

use std::fmt::{self, Display};
use std::io;
use std::path::PathBuf;

use crate::flame::NothingToDraw;
use crate::gprof::GprofError;
use crate::input::{NotAProfile, ReadError};
use crate::model::GraphError;
use crate::output::WriteError;

/// Why `gmon record` refuses a command before it runs, with the exit status to report (here,
/// not in `record`, so that the error type depends on no module that returns it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 127: not found; 126: found but not executable; 1: cannot be profiled or the profile
    /// cannot be written.
    pub status: u8,
    /// What is wrong, in a sentence naming the file.
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refusal {}

/// What went wrong in the gmon-tools library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input file that could not be read (`PATH: is a directory`).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A file that no gmon.out layout explains (`PATH: not a gmon.out profile: ...`).
    #[error(transparent)]
    NotAProfile(#[from] NotAProfile),
    /// An output that could not be written, created or renamed (`OUT: cannot write: ...`).
    #[error(transparent)]
    Write(#[from] WriteError),
    /// `gmon record` refused the command before running it, with the exit status to give.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A flame graph with no samples in any function.
    #[error(transparent)]
    NothingToDraw(#[from] NothingToDraw),
    /// A system call failed; [`Error::Context`] around it names the file.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The reader refused a profile or sidecar (its message names the byte offset and what
    /// was expected); [`Error::Context`] around it names the file.
    #[error(transparent)]
    Format(#[from] gmon_format::Error),
    /// Profiles that cannot be summed.
    #[error(transparent)]
    Merge(#[from] gmon_format::merge::MergeError),
    /// A binary that cannot be read (its text is GNU's, without the program's name).
    #[error(transparent)]
    Binary(#[from] gmon_binary::Error),
    /// A file goblin cannot parse as ELF.
    #[error(transparent)]
    Elf(#[from] goblin::error::Error),
    /// A call graph that breaks the model's rules (an arc to a node that does not exist, a
    /// count that overflows).
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The gprof engine refused the executable or the profiles (its message without the
    /// program's name).
    #[error(transparent)]
    Gprof(#[from] GprofError),
    /// An operand that is not what its place on the command line asks for (`PATH: is a
    /// directory, not an executable`).
    #[error("{}: {problem}", path.display())]
    Operand {
        /// The operand.
        path: PathBuf,
        /// What it is and what was expected.
        problem: String,
    },
    /// A profile that does not belong to the executable it is read with.
    #[error("{}: {reason}", path.display())]
    OtherExecutable {
        /// The profile.
        path: PathBuf,
        /// The check that failed, naming the executable.
        reason: String,
    },
    /// No input profile was named.
    #[error("no input profiles (give files, @LISTFILE or --from-list LISTFILE)")]
    NoInputs,
    /// `gmon record` found no free name for an executable's profile beside `OUT`.
    #[error("{}: no free name for this executable's profile", path.display())]
    NoFreeName {
        /// `OUT.<name>`, the name wanted.
        path: PathBuf,
    },
    /// `gmon record` cannot find or install the gmon-write runtime library.
    #[error("{0}")]
    Runtime(String),
    /// An error of one step, after what was being done (the file, or what the failure left:
    /// `none of the 3 files of this run was written`). Its `Display` is `context`; with `{:#}`,
    /// the whole chain, as `anyhow` prints one.
    #[error(fmt = context_and_chain)]
    Context {
        /// What was being done.
        context: String,
        /// The error of the step.
        #[source]
        source: Box<Error>,
    },
}

/// [`Error::Context`]'s text: the context; with `{:#}`, then every error of its chain after ": ".
fn context_and_chain(context: &str, source: &Error, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.write_str(context)?;
    if f.alternate() {
        let mut next: Option<&dyn std::error::Error> = Some(source);
        while let Some(e) = next {
            write!(f, ": {e}")?;
            next = e.source();
        }
    }
    Ok(())
}

/// The library's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// This error after `context` (what was being done: the file, the step).
    pub fn context(self, context: impl Display) -> Error {
        Error::Context {
            context: context.to_string(),
            source: Box::new(self),
        }
    }

    /// The error this one wraps as it is ([`Error::Io`]'s `io::Error`, [`Error::Read`]'s
    /// [`ReadError`], ...), else itself ([`Error::Context`] too: its source follows in the
    /// chain): what a caller walking an error chain downcasts.
    pub fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            Error::Read(e) => e,
            Error::NotAProfile(e) => e,
            Error::Write(e) => e,
            Error::Refused(e) => e,
            Error::NothingToDraw(e) => e,
            Error::Io(e) => e,
            Error::Format(e) => e,
            Error::Merge(e) => e,
            Error::Binary(e) => e,
            Error::Elf(e) => e,
            Error::Graph(e) => e,
            Error::Gprof(e) => e,
            e => e,
        }
    }
}

/// Adds what was being done before an error's message (anything that converts into an
/// [`Error`]): `.context("summing the profiles")`, `.with_context(|| path.display())`.
pub trait Context<T> {
    /// The error after `context`.
    fn context(self, context: impl Display) -> Result<T>;
    /// The error after the context `f` makes (only on error).
    fn with_context<C: Display>(self, f: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Display) -> Result<T> {
        self.with_context(|| context)
    }

    fn with_context<C: Display>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| e.into().context(f()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_display_is_the_whole_chain_as_anyhow_prints_it() {
        let e = Error::from(io::Error::other("No space left on device"))
            .context("out.gmonx: write failed")
            .context("none of the 2 files of this run was written");
        assert_eq!(e.to_string(), "none of the 2 files of this run was written");
        let whole = "none of the 2 files of this run was written: out.gmonx: write failed: No \
                     space left on device";
        assert_eq!(format!("{e:#}"), whole);
        assert_eq!(format!("{:#}", anyhow::Error::from(e)), whole);
    }
}
