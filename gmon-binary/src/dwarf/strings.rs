//! Interned strings: the file and function names of the line tables, each stored once and
//! named by a small id, so that rows and functions stay small and comparisons are cheap.

use std::collections::HashMap;
use std::sync::Arc;

use rustc_hash::FxBuildHasher;

/// Interned string id (file names and function names).
pub type StrId = u32;

/// Interned strings: file and function names, each stored once.
#[derive(Debug, Default)]
pub(super) struct Strings {
    list: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, StrId, FxBuildHasher>,
}

impl Strings {
    pub(super) fn intern(&mut self, s: &str) -> StrId {
        match self.ids.get(s) {
            Some(&id) => id,
            None => self.add(Arc::from(s)),
        }
    }

    /// Interns every string of `other` (shared, not copied); the result maps `other`'s ids to
    /// this table's.
    pub(super) fn absorb(&mut self, other: &Strings) -> Vec<StrId> {
        other
            .list
            .iter()
            .map(|s| match self.ids.get(s) {
                Some(&id) => id,
                None => self.add(Arc::clone(s)),
            })
            .collect()
    }

    fn add(&mut self, s: Arc<str>) -> StrId {
        let id = StrId::try_from(self.list.len()).unwrap_or(StrId::MAX);
        self.ids.insert(Arc::clone(&s), id);
        self.list.push(s);
        id
    }

    pub(super) fn get(&self, id: StrId) -> &str {
        self.list.get(id as usize).map_or("", |s| s)
    }
}
