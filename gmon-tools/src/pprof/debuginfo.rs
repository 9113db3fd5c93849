//! What pprof wants from the executable besides symbols: its GNU build id, and the source file
//! and line of each function's first instruction (DWARF, through addr2line).

use std::path::Path;

use object::Object;

/// Hex of the executable's GNU build-id note (`.note.gnu.build-id`), if it has one.
/// `data` is the whole file; a file object cannot parse yields `None`, not an error, because the
/// build id only helps `pprof -symbolize=force`.
pub fn build_id_hex(data: &[u8]) -> Option<String> {
    let file = object::File::parse(data).ok()?;
    let id = file.build_id().ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// Source lines of an executable's DWARF, looked up by link-time address.
#[allow(missing_debug_implementations)]
pub struct SourceLines {
    loader: Option<addr2line::Loader>,
}

impl SourceLines {
    /// Opens the executable's DWARF. An executable without debug information gives a lookup
    /// that finds nothing (the profile then has names but no files or lines).
    pub fn open(path: &Path) -> SourceLines {
        SourceLines {
            loader: addr2line::Loader::new(path).ok(),
        }
    }

    /// Whether any DWARF was found.
    pub fn has_dwarf(&self) -> bool {
        self.loader.is_some()
    }

    /// The file and line of the instruction at `address`, if DWARF covers it.
    pub fn locate(&self, address: u64) -> Option<(String, u32)> {
        let loc = self.loader.as_ref()?.find_location(address).ok()??;
        Some((loc.file?.to_owned(), loc.line.unwrap_or(0)))
    }
}
