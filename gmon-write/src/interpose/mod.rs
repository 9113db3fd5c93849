//! Functions the library defines in place of libc's (spec/runtime.md §4.2), found first through
//! `LD_PRELOAD` or in an executable that links the library; each forwards to the next
//! definition (`sys::real`). The top layer: they call into the engine and the public API.

pub(crate) mod exec;
pub(crate) mod exit;
pub(crate) mod pthread;
pub(crate) mod signals;
pub(crate) mod stopsig;
