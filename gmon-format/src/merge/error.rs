//! Why a merge stops, and the values its messages name.

use std::fmt;

use crate::model::{Encoding, Variant};

/// Everything that stops a merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// Two inputs disagree on byte order or pointer width, so they cannot describe one program.
    #[error(
        "input {input}: byte order / pointer width {found} differs from the first input's \
         {expected}; profiles of different targets cannot be merged"
    )]
    EncodingMismatch {
        /// Index of the input (0-based, in the order given to the merger).
        input: usize,
        /// The first input's encoding.
        expected: EncodingName,
        /// This input's encoding.
        found: EncodingName,
    },

    /// A histogram was sampled at another rate than the first one.
    #[error(
        "input {input}: histogram record {record} was sampled at {found} Hz, the first histogram \
         at {expected} Hz; samples of different rates cannot be added"
    )]
    RateMismatch {
        /// Index of the input.
        input: usize,
        /// Index of the record in the input's `records`.
        record: usize,
        /// The first histogram's rate.
        expected: u32,
        /// This record's rate.
        found: u32,
    },

    /// A histogram counts another unit (dimension) than the first one.
    #[error(
        "input {input}: histogram record {record} counts {found}, the first histogram \
         {expected}; samples of different dimensions cannot be added"
    )]
    DimensionMismatch {
        /// Index of the input.
        input: usize,
        /// Index of the record in the input's `records`.
        record: usize,
        /// The first histogram's dimension, as [`Dimension`](crate::Dimension)'s Display shows it (quoted name
        /// and abbreviation, non-printable bytes escaped).
        expected: String,
        /// Its abbreviation.
        expected_abbrev: char,
        /// This record's dimension, shown the same way.
        found: String,
        /// Its abbreviation.
        found_abbrev: char,
    },

    /// A histogram overlaps another whose bins do not line up with its own.
    #[error(
        "input {input}: histogram record {record} ({new}) overlaps {existing} but their bins do \
         not line up (an exact merge needs the same whole number of 2-byte units per bin and \
         boundaries on the same grid); use --rebin to redistribute the counts proportionally"
    )]
    MisalignedHistograms {
        /// Index of the input.
        input: usize,
        /// Index of the record in the input's `records`.
        record: usize,
        /// The new record's range.
        new: HistRange,
        /// The range it overlaps in the sum so far.
        existing: HistRange,
    },

    /// The executable identity given with an input differs from the expected one.
    #[error("input {input}: profile of executable {found}, expected {expected}")]
    ExecutableMismatch {
        /// Index of the input.
        input: usize,
        /// The expected identity.
        expected: ExecutableId,
        /// The identity that came with this input.
        found: ExecutableId,
    },

    /// A sum exceeds `u64` (or an address computed for a merged range exceeds the pointer width).
    #[error("input {input}: {what} overflows")]
    Overflow {
        /// Index of the input.
        input: usize,
        /// What overflowed.
        what: &'static str,
    },

    /// The merged profile cannot be written in the requested variant.
    #[error("cannot write the merged profile as {variant}: {problem}")]
    Unrepresentable {
        /// The requested variant.
        variant: Variant,
        /// Why.
        problem: String,
    },
}

/// Result of the merge functions.
pub type MergeResult<T> = std::result::Result<T, MergeError>;

/// Byte order and pointer width, printable (`little-endian 64-bit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodingName(pub Encoding);

impl fmt::Display for EncodingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endian = match self.0.endian {
            crate::model::Endian::Little => "little-endian",
            crate::model::Endian::Big => "big-endian",
        };
        write!(f, "{endian} {}-bit", self.0.ptr_width.bytes() * 8)
    }
}

/// A histogram's range and bin count, printable (`0x1000..0x2000 in 1024 bins`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistRange {
    /// `low_pc`.
    pub low_pc: u64,
    /// `high_pc`.
    pub high_pc: u64,
    /// Number of bins.
    pub bins: usize,
}

impl fmt::Display for HistRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x}..{:#x} in {} bins",
            self.low_pc, self.high_pc, self.bins
        )
    }
}

/// What identifies the executable a profile belongs to (a GNU build id, or any other stable
/// fingerprint). gmon.out files carry none; a runtime's sidecar file or the caller may supply one
/// through [`Merger::add_identified`](super::Merger::add_identified).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExecutableId(pub Vec<u8>);

impl fmt::Display for ExecutableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}
