//! Reading executables the way GNU binutils' BFD reads them for gprof: the ELF file and its
//! compressed sections, the symbol values and synthetic symbols of each architecture, separate
//! debug files (build ID, `.gnu_debuglink`), and DWARF line information with BFD's answers.
//!
//! ```no_run
//! use gmon_binary::Image;
//! use gmon_binary::dwarf::LineInfo;
//!
//! # fn main() -> Result<(), gmon_binary::Error> {
//! let path = std::path::Path::new("./prog");
//! let image = Image::open(path)?;
//! println!("{}: .text is {} bytes at {:#x}", image.path, image.text_size, image.text_vma);
//! // Source positions, from the executable's DWARF or its separate debug file.
//! let elf = gmon_binary::parse_elf(&image.data).ok();
//! let mut lines = LineInfo::for_executable(path, &image.data, elf.as_ref(), true);
//! if let Some(at) = lines.locate(image.text_vma) {
//!     let (file, function) = (lines.string(at.file), lines.string(at.function));
//!     println!("{function} at {file}:{}", at.line);
//! }
//! # Ok(()) }
//! ```
//!
//! The pieces, each built only on those before it: [`open`] (bounded reads of named and found
//! paths), [`strtab`] (string-table bytes), [`elf_file`] (sections by name, decompressed;
//! notes and build IDs), [`image`] (the executable gprof reads), [`arch`] (what differs between
//! architectures), [`debuglink`] (finding a separate debug file), [`dwarf`] (addresses to
//! file, line and function). Every fallible entry point returns the one [`Error`].

#![deny(missing_docs)]

pub mod arch;
pub mod debuglink;
pub mod dwarf;
pub mod elf_file;
mod error;
pub mod image;
pub mod open;
pub mod strtab;

pub use error::{Error, SectionProblem, io_text};
pub use image::{Image, parse_elf};
pub use open::ImageBytes;
