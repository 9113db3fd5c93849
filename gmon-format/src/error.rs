//! The crate's one error type.
//!
//! Every error found while reading carries the byte offset (from the start of the file) where the
//! reader stopped, and its `Display` text starts with `offset 0x…: ` so that a command line tool
//! can print `gmon: FILE: offset 0x1a4: bad tag 7 (expected 0, 1 or 2)`. Errors found while
//! writing or converting name the record (its index in [`crate::Profile::records`]) instead,
//! because there is no file offset yet.
//!
//! The runtime's sidecar file ([`crate::sidecar`]) is read into the same type: it shares
//! [`Error::UnexpectedEof`] and [`Error::UnsupportedVersion`] with gmon.out and has a few
//! variants of its own (`Sidecar…`, [`Error::BadValue`], [`Error::NotUtf8`]), all with offsets
//! from the start of the sidecar file.

use crate::model::Variant;

/// Result of every fallible function in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong while reading, writing or converting a gmon.out file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file ends in the middle of something.
    #[error(
        "offset {offset:#x}: unexpected end of file in {what} (needed {needed} bytes, {available} left)"
    )]
    UnexpectedEof {
        /// Where the truncated item starts.
        offset: u64,
        /// What was being read (e.g. "histogram record header").
        what: &'static str,
        /// Bytes the item needs.
        needed: u64,
        /// Bytes the file still has at `offset`.
        available: u64,
    },

    /// A GNU record starts with a tag other than 0, 1 or 2.
    #[error("offset {offset:#x}: bad tag {tag} (expected 0, 1 or 2)")]
    BadTag {
        /// Offset of the tag byte.
        offset: u64,
        /// The tag found.
        tag: u8,
    },

    /// A file forced to be GNU does not start with `"gmon"`.
    #[error("offset {offset:#x}: bad magic cookie {found:02x?} (expected \"gmon\")")]
    BadMagic {
        /// Always 0.
        offset: u64,
        /// The first four bytes.
        found: [u8; 4],
    },

    /// A header's version word is not one this crate reads.
    #[error("offset {offset:#x}: unsupported version {found:#x} (expected {expected})")]
    UnsupportedVersion {
        /// Offset of the version word.
        offset: u64,
        /// The version found, decoded in the byte order being tried.
        found: u32,
        /// What would have been accepted.
        expected: &'static str,
    },

    /// The file is a known gmon-like format that this crate recognises but does not read.
    #[error("offset {offset:#x}: not supported: {what}")]
    NotSupported {
        /// Offset of the field that identified the format.
        offset: u64,
        /// Which format it is and what to use instead.
        what: &'static str,
    },

    /// A histogram claims more bins than the rest of the file holds (checked before allocating).
    #[error(
        "offset {offset:#x}: histogram of {bins} bins needs {needed} bytes but only {available} \
         are left"
    )]
    HistogramTooLarge {
        /// Offset of the bin count (GNU) or `ncnt` (BSD).
        offset: u64,
        /// The number of bins claimed.
        bins: u64,
        /// Bytes those bins need.
        needed: u64,
        /// Bytes left in the file after the histogram header.
        available: u64,
    },

    /// A BSD `ncnt` field (header plus histogram bytes) does not describe a whole histogram.
    #[error("offset {offset:#x}: bad ncnt {ncnt} (expected {expected})")]
    BadNcnt {
        /// Offset of `ncnt`.
        offset: u64,
        /// The value found.
        ncnt: u32,
        /// What it should have been.
        expected: &'static str,
    },

    /// A histogram's `low_pc` is above its `high_pc`.
    #[error("offset {offset:#x}: low_pc {low_pc:#x} is above high_pc {high_pc:#x}")]
    BadRange {
        /// Offset of `low_pc`.
        offset: u64,
        /// The low PC found.
        low_pc: u64,
        /// The high PC found.
        high_pc: u64,
    },

    /// FreeBSD's `histcounter_type` holds a value other than 0 or ±8/16/32/64.
    #[error(
        "offset {offset:#x}: bad histcounter_type {found} (expected 0, 8, 16, 32, 64 or their \
         negatives)"
    )]
    BadHistCounterType {
        /// Offset of the field.
        offset: u64,
        /// The value found.
        found: i32,
    },

    /// A signed FreeBSD histogram counter is negative, which no runtime writes.
    #[error("offset {offset:#x}: negative histogram count {found} (expected a count >= 0)")]
    NegativeCount {
        /// Offset of the counter.
        offset: u64,
        /// The value found.
        found: i64,
    },

    /// Bytes that must be zero are not (the padding of a 24-byte old BSD header).
    #[error("offset {offset:#x}: nonzero padding byte {found:#04x} (expected 0)")]
    NonzeroPadding {
        /// Offset of the byte.
        offset: u64,
        /// The byte found.
        found: u8,
    },

    /// No variant, byte order and pointer width make sense of the file.
    #[error("offset {offset:#x}: not a gmon.out file: {tried}")]
    UnknownFormat {
        /// The offset of the error of the candidate that got furthest (0 if none started).
        offset: u64,
        /// What was tried and why each failed.
        tried: String,
    },

    /// A sidecar file does not start with [`crate::sidecar::GMONX_MAGIC`].
    #[error("offset {offset:#x}: bad sidecar magic {found:02x?} (expected \"gmonext\\0\")")]
    SidecarBadMagic {
        /// Always 0.
        offset: u64,
        /// The first eight bytes (or fewer, when the file is shorter).
        found: Vec<u8>,
    },

    /// A known sidecar section kind appears twice.
    #[error("offset {offset:#x}: duplicate sidecar section kind {kind}")]
    SidecarDuplicateSection {
        /// Offset of the second section's header.
        offset: u64,
        /// Its kind.
        kind: u32,
    },

    /// A sidecar section's body is longer than its items need.
    #[error("offset {offset:#x}: {extra} unused bytes at the end of sidecar section kind {kind}")]
    SidecarTrailingBytes {
        /// Offset of the first unused byte.
        offset: u64,
        /// The section kind.
        kind: u32,
        /// How many bytes were left.
        extra: u64,
    },

    /// A field holds a value the format does not allow (a count larger than its section, a
    /// range that ends before it starts).
    #[error("offset {offset:#x}: bad {what}: {found} (expected {expected})")]
    BadValue {
        /// Offset of the field.
        offset: u64,
        /// The field.
        what: &'static str,
        /// The value found.
        found: u64,
        /// What was expected.
        expected: &'static str,
    },

    /// A text field is not UTF-8.
    #[error("offset {offset:#x}: {what} is not UTF-8")]
    NotUtf8 {
        /// Offset of the text's bytes.
        offset: u64,
        /// The field.
        what: &'static str,
    },

    /// A value does not fit in the field the target layout has for it.
    #[error("record {record}: {what} {value:#x} does not fit (at most {max:#x})")]
    DoesNotFit {
        /// Index of the record in [`crate::Profile::records`].
        record: usize,
        /// Which field (e.g. "arc count").
        what: &'static str,
        /// The value.
        value: u64,
        /// The largest value the field holds.
        max: u64,
    },

    /// A record (or header field) has no place in the target variant.
    #[error("record {record}: cannot be written as {variant}: {problem}")]
    Unrepresentable {
        /// Index of the record in [`crate::Profile::records`] (one past the last for the trailing
        /// bytes).
        record: usize,
        /// The target variant.
        variant: Variant,
        /// What is wrong.
        problem: &'static str,
    },

    /// A header field has a value the target variant cannot write (or its reader would refuse).
    #[error("header: cannot be written as {variant}: {problem}")]
    BadHeader {
        /// The target variant.
        variant: Variant,
        /// What is wrong.
        problem: &'static str,
    },

    /// The profile cannot be converted as asked.
    #[error("cannot convert to {variant}: {problem}")]
    CannotConvert {
        /// The target variant.
        variant: Variant,
        /// What is wrong.
        problem: &'static str,
    },

    /// A written file would be read back, without the executable, as something else
    /// (`spec/gmon-out.md`, "Detection without the executable"); the writer refuses it.
    #[error(
        "refusing to write a file that reads back differently: written as {written}, it would be \
         read as {read_as} by a reader without the executable; choose another variant or \
         encoding (GNU is the least ambiguous)"
    )]
    ReadsBackDifferently {
        /// The reading the file was written for.
        written: String,
        /// What detection would make of it.
        read_as: String,
    },

    /// [`crate::ReadOptions`] that contradict each other.
    #[error("invalid read options: {problem}")]
    InvalidOptions {
        /// What is wrong.
        problem: &'static str,
    },

    /// The writer's destination failed.
    #[error("write failed: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// The error's class: a stable short name for what went wrong, the same for every wording
    /// of it (`spec/gmon-out.md`, "Implementing a reader", lists the classes a reader reports).
    pub fn class(&self) -> &'static str {
        match self {
            Error::UnexpectedEof { .. } => "eof",
            Error::BadTag { .. } => "bad-tag",
            Error::BadMagic { .. } => "bad-magic",
            Error::UnsupportedVersion { .. } => "bad-version",
            Error::NotSupported { .. } => "not-supported",
            Error::HistogramTooLarge { .. } => "too-large",
            Error::BadNcnt { .. } => "bad-ncnt",
            Error::BadRange { .. } => "bad-range",
            Error::BadHistCounterType { .. } => "bad-counter-type",
            Error::NegativeCount { .. } => "negative-count",
            Error::NonzeroPadding { .. } => "nonzero-padding",
            Error::UnknownFormat { .. } => "unknown-format",
            Error::SidecarBadMagic { .. } => "sidecar-bad-magic",
            Error::SidecarDuplicateSection { .. } => "sidecar-duplicate-section",
            Error::SidecarTrailingBytes { .. } => "sidecar-trailing-bytes",
            Error::BadValue { .. } => "bad-value",
            Error::NotUtf8 { .. } => "not-utf8",
            Error::DoesNotFit { .. } => "does-not-fit",
            Error::Unrepresentable { .. } => "unrepresentable",
            Error::BadHeader { .. } => "bad-header",
            Error::CannotConvert { .. } => "cannot-convert",
            Error::InvalidOptions { .. } => "invalid-options",
            Error::ReadsBackDifferently { .. } => "reads-back-differently",
            Error::Io(_) => "io",
        }
    }

    /// The file offset of a read error, `None` for write and conversion errors.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::UnexpectedEof { offset, .. }
            | Error::BadTag { offset, .. }
            | Error::BadMagic { offset, .. }
            | Error::UnsupportedVersion { offset, .. }
            | Error::NotSupported { offset, .. }
            | Error::HistogramTooLarge { offset, .. }
            | Error::BadNcnt { offset, .. }
            | Error::BadRange { offset, .. }
            | Error::BadHistCounterType { offset, .. }
            | Error::NegativeCount { offset, .. }
            | Error::NonzeroPadding { offset, .. }
            | Error::UnknownFormat { offset, .. }
            | Error::SidecarBadMagic { offset, .. }
            | Error::SidecarDuplicateSection { offset, .. }
            | Error::SidecarTrailingBytes { offset, .. }
            | Error::BadValue { offset, .. }
            | Error::NotUtf8 { offset, .. } => Some(*offset),
            Error::DoesNotFit { .. }
            | Error::Unrepresentable { .. }
            | Error::BadHeader { .. }
            | Error::InvalidOptions { .. }
            | Error::ReadsBackDifferently { .. }
            | Error::CannotConvert { .. }
            | Error::Io(_) => None,
        }
    }
}
