//! Read and write every gmon.out variant, byte for byte.
//!
//! `gmon.out` is the file that programs built with `gcc -pg` (or linked with a `profil`-based
//! runtime) write at exit, and that `gprof` reads. This crate models it ([`Profile`]) and reads
//! and writes the GNU tagged (versions 0 and 1), 4.4BSD (with FreeBSD's wider histogram
//! counters) and old BSD layouts, in both byte orders and both pointer widths. The byte-exact
//! description lives in `spec/gmon-out.md` at the top of the repository.
//!
//! Use it as follows:
//!
//! 1. [`read()`] a whole file from a byte slice (the variant, byte order and pointer width are
//!    guessed as [`read::detect`] describes), or [`read_with`] and [`ReadOptions`] to force any
//!    of them, e.g. from the executable's ELF header as gprof does.
//! 2. Inspect or edit the [`Profile`]: its [`Header`] and [`Record`]s in file order.
//! 3. [`write()`] it to any [`std::io::Write`] (or [`to_vec`]) in its own variant and encoding, or
//!    [`Profile::convert_to`] another one first.
//!
//! The modules, one per task: [`mod@read`] (the readers, detection, [`read::read_detailed`] and
//! the in-place [`read::GnuFile`]), [`mod@write`], [`merge`] (summing profiles without losing
//! counts: [`merge::Merger`], [`merge::fit_counts`]) and [`sidecar`] (the gmon-write runtime's
//! `.gmonx` file). The model ([`Profile`] and its records) and [`Error`] are at the root, with
//! the one-call [`read()`], [`read_with`], [`write()`] and [`to_vec`].
//!
//! ```
//! use gmon_format::{CallArc, Encoding, Profile, Record, Variant};
//!
//! let mut p = Profile::new_gnu(Encoding::LITTLE_64);
//! p.records.push(Record::CallArc(CallArc { from_pc: 0x1130, self_pc: 0x1149, count: 7 }));
//! let bytes = gmon_format::to_vec(&p)?;
//! assert_eq!(bytes.len(), 20 + 21);
//! assert_eq!(gmon_format::read(&bytes)?, p);
//!
//! let old = p.convert_to(Variant::BsdOld, Encoding::BIG_32)?;
//! assert_eq!(gmon_format::read(&gmon_format::to_vec(&old)?)?, old);
//! # Ok::<(), gmon_format::Error>(())
//! ```
//!
//! Errors ([`Error`]) carry the byte offset where reading stopped and what was expected; no
//! input makes the reader panic or allocate more than the input's size allows.
//!
//! Cargo features: none.

#![deny(missing_docs)]
// Nothing here needs `unsafe`: the readers slice through one bounds-checked cursor.
#![forbid(unsafe_code)]

mod convert;
mod error;
pub mod merge;
mod model;
pub mod read;
pub mod sidecar;
#[cfg(test)]
mod test_util;
pub mod write;

pub use error::{Error, Result};
pub use model::*;
// The one-call reading and writing every caller uses, kept at the root (`gmon_format::read`,
// `gmon_format::to_vec`), and the sidecar's type and file functions that gmon-write and the
// views name there; everything else is in its module.
pub use read::{ReadOptions, read, read_with};
pub use sidecar::{Sidecar, read_sidecar, sidecar_path, write_sidecar};
pub use write::{to_vec, write};
