//! The names the reports have printed, kept with the analysis so that every report of one run
//! (flat profile, call graph, index) renders each name once. The printer that fills them is
//! `text/names.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gmon_demangle::Style;
use rustc_hash::FxBuildHasher;

/// Demangled names (`None`: printed as it is), worked out on a name's first print and kept for
/// the whole analysis: the call graph prints a name many times (as parent, child and entry),
/// the flat profile and the index print it again, and demangling a C++ name costs far more than
/// copying it. Keyed by the shared name itself (`Arc<str>` address and length; a function's
/// line symbols share one), so only printed names take room. One demangling style per
/// analysis (the first one asked for); a printer with another style demangles on every print.
#[derive(Debug, Default)]
pub(crate) struct Demangled {
    /// Per name, its demangling, for the one style (see above).
    pub(crate) cache: Mutex<Option<(Style, DemangleMap)>>,
    /// The plain names copied by the first printer (see `Names::copy_plain_names`), and the
    /// demangling style they were copied for: the flat profile, the call graph and the index
    /// each made the same copy, reading every symbol's name.
    pub(crate) plain: Mutex<Option<(Option<Style>, Shown)>>,
}

pub(crate) type DemangleMap = HashMap<(usize, usize), Option<Arc<str>>, FxBuildHasher>;

/// What `Names::name_only` (text/names.rs) printed for each node, kept in one contiguous
/// arena: a call graph prints each name several times (as parent, child and entry), and reading
/// it again from its own allocation and its symbol was a cache miss each time (the top cost of
/// a large report).
#[derive(Clone, Debug, Default)]
pub(crate) struct Shown {
    /// Per node: `start << 32 | (len + 1)` in `bytes`, 0 before the first print.
    pub(crate) at: Vec<u64>,
    /// The printed names, one after the other.
    pub(crate) bytes: Vec<u8>,
}
