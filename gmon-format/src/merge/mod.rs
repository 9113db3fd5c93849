//! Summing profiles without losing counts (`gmon merge`).
//!
//! A [`Merger`] takes profiles one at a time and keeps a running sum in `u64`: histogram bins are
//! added bin by bin, arcs are added by their `(from_pc, self_pc)` pair and kept in the order of
//! their first appearance (gprof breaks call-graph ties by arc order, so this order is part of the
//! result), basic-block counts are added by address. Memory is one running sum plus whatever
//! profile the caller is holding, whatever the number of inputs.
//!
//! [`Merger::finish`] gives the sum as one profile whose counts may exceed what a file's fields
//! hold; [`fit_counts`] then spreads every count that does not fit over further records that GNU
//! gprof adds back together (histogram records with the same range, arcs with the same
//! addresses). The rules are in `spec/merge.md`.
//!
//! Histograms: records with the same `(low_pc, high_pc, bins)` are summed; a record that does not
//! intersect any other is kept as a separate record (as gprof does); records that overlap are
//! merged into one record over the union of their ranges when their bins line up (same whole
//! number of 2-byte units per bin, boundaries on the same grid). Otherwise the merge fails, unless
//! [`MergeOptions::rebin`] asks to redistribute the counts over one grid proportionally to the
//! address overlap; [`Merged::rebinned`] then says which records were redistributed.
//!
//! The module's files follow its seams: [`Merger`] and its options and result (`merger.rs`), the
//! errors (`error.rs`), the geometry of overlapping ranges, exact unions and rebinning
//! (`grid.rs`), and fitting sums into a file's fields (`fit.rs`). Reading a GNU file in place for
//! the fast path ([`GnuFile`](crate::read::GnuFile)) is a reader, in `read/gnu_file.rs`.

mod error;
mod fit;
mod grid;
mod merger;
#[cfg(test)]
mod tests;

pub use error::{EncodingName, ExecutableId, HistRange, MergeError, MergeResult};
pub use fit::{
    MAX_BIN_COUNT, MAX_GNU_ARC_COUNT, MAX_SPLIT_ARCS, MAX_SPLIT_HISTOGRAMS, fit_counts,
    fit_counts_owned,
};
pub use grid::Rebinned;
pub use merger::{MergeOptions, Merged, Merger};

use crate::model::Profile;

/// Sums `profiles` (see [`Merger`]).
pub fn merge<'a, I>(profiles: I, options: &MergeOptions) -> MergeResult<Merged>
where
    I: IntoIterator<Item = &'a Profile>,
{
    let mut m = Merger::new(options.clone());
    for p in profiles {
        m.add(p)?;
    }
    m.finish()
}
