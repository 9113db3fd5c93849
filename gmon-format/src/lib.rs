//! Read and write every gmon.out variant, byte for byte.
//!
//! `gmon.out` is the file that programs built with `gcc -pg` (or linked with a `profil`-based
//! runtime) write at exit, and that `gprof` reads. This crate models it ([`Profile`]) and will
//! read and write the GNU tagged, 4.4BSD and old BSD layouts in both byte orders and both pointer
//! widths. The byte-exact description lives in `spec/gmon-out.md` at the top of the repository.

#![deny(missing_docs)]

pub mod ext;
mod model;

pub use ext::{Extension, read_extension, sidecar_path, write_extension};
pub use model::*;
