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
//! 1. [`read`] a whole file from a byte slice (the variant, byte order and pointer width are
//!    guessed as [`detect`] describes), or [`read_with`] and [`ReadOptions`] to force any of
//!    them, e.g. from the executable's ELF header as gprof does.
//! 2. Inspect or edit the [`Profile`]: its [`Header`] and [`Record`]s in file order.
//! 3. [`write()`] it to any [`std::io::Write`] (or [`to_vec`]) in its own variant and encoding, or
//!    [`Profile::convert_to`] another one first.
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
mod merge;
mod model;
mod read;
pub mod sidecar;
#[cfg(test)]
mod test_util;
mod write;

pub use error::{Error, Result};
pub use merge::{
    EncodingName, ExecutableId, HistRange, MAX_BIN_COUNT, MAX_GNU_ARC_COUNT, MAX_SPLIT_ARCS,
    MAX_SPLIT_HISTOGRAMS, MergeError, MergeOptions, MergeResult, Merged, Merger, Rebinned,
    fit_counts, fit_counts_owned, merge,
};
pub use model::*;
pub use read::detect::{self, Detected, Plausibility, Reading};
pub use read::gnu_file::{GnuFile, HistogramView};
pub use read::{ReadOptions, read, read_detailed, read_with};
pub use sidecar::{Sidecar, SidecarSum, merge_sidecars, read_sidecar, sidecar_path, write_sidecar};
pub use write::{record_offsets, to_vec, to_vec_unchecked, write};
