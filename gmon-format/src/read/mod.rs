//! Readers: [`read`] guesses the variant, byte order and pointer width ([`detect`] says
//! how); [`read_with`] takes any of them from [`ReadOptions`], as a tool that has the executable
//! should (GNU gprof takes byte order and pointer width from the ELF header).
//!
//! Each variant has its own module with its byte layout in the module doc. All of them read from
//! a whole-file `&[u8]` through one bounds-checked cursor whose byte order is chosen at run time,
//! so there is a single code path for both byte orders, and every error names its file offset.

pub(crate) mod bsd44;
pub(crate) mod bsd_old;
pub(crate) mod cursor;
pub mod detect;
pub(crate) mod gnu;
pub(crate) mod gnu_file;
pub(crate) mod records;

pub use detect::{Detected, Plausibility, Reading};
pub use gnu_file::{GnuFile, HistogramView};

use crate::error::Result;
use crate::model::{Endian, Profile, PtrWidth, Variant};

/// What a reader may be told instead of guessing. Every field left `None` is detected.
///
/// ```
/// use gmon_format::{Endian, PtrWidth, ReadOptions, Variant};
/// let opts = ReadOptions::new()
///     .with_variant(Variant::Gnu)
///     .with_endian(Endian::Little)
///     .with_ptr_width(PtrWidth::Eight);
/// assert_eq!(opts.endian, Some(Endian::Little));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ReadOptions {
    /// The layout; `None` = GNU if the file starts with `"gmon"`, else 4.4BSD or old BSD.
    pub variant: Option<Variant>,
    /// The byte order; `None` = from the GNU version word or the BSD header's consistency.
    pub endian: Option<Endian>,
    /// The pointer width; `None` = whichever parses the whole file (see [`detect`]).
    pub ptr_width: Option<PtrWidth>,
    /// Old BSD only: the header size (12, 20 or 24); `None` = guessed.
    pub bsd_old_header_size: Option<u32>,
}

impl ReadOptions {
    /// Nothing forced: detect everything.
    pub fn new() -> ReadOptions {
        ReadOptions::default()
    }

    /// Forces the layout.
    pub fn with_variant(mut self, variant: Variant) -> ReadOptions {
        self.variant = Some(variant);
        self
    }

    /// Forces the byte order.
    pub fn with_endian(mut self, endian: Endian) -> ReadOptions {
        self.endian = Some(endian);
        self
    }

    /// Forces the pointer width.
    pub fn with_ptr_width(mut self, ptr_width: PtrWidth) -> ReadOptions {
        self.ptr_width = Some(ptr_width);
        self
    }

    /// Forces the old BSD header size (12, 20 or 24 bytes).
    pub fn with_bsd_old_header_size(mut self, size: u32) -> ReadOptions {
        self.bsd_old_header_size = Some(size);
        self
    }
}

/// Reads a whole gmon.out file, detecting its variant, byte order and pointer width.
///
/// ```
/// let bytes = b"gmon\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
/// let p = gmon_format::read(bytes).unwrap();
/// assert_eq!(p.header.variant(), gmon_format::Variant::Gnu);
/// assert!(p.records.is_empty());
/// ```
pub fn read(bytes: &[u8]) -> Result<Profile> {
    read_with(bytes, &ReadOptions::default())
}

/// Reads a whole gmon.out file, taking from `opts` whatever it forces and detecting the rest.
pub fn read_with(bytes: &[u8], opts: &ReadOptions) -> Result<Profile> {
    detect::read_detected(bytes, opts).map(|d| d.profile)
}

/// Like [`read_with`], and also says which reading was chosen and which other readings the
/// file allows (its ambiguity, `spec/gmon-out.md` "Preference").
pub fn read_detailed(bytes: &[u8], opts: &ReadOptions) -> Result<detect::Detected> {
    detect::read_detected(bytes, opts)
}
