//! What pprof wants from the executable besides symbols: its GNU build id. (Source files and
//! lines come from the gprof engine's DWARF lookup, `gprof/dwarf.rs`.)

use object::Object;

/// Hex of the executable's GNU build-id note (`.note.gnu.build-id`), if it has one.
/// `data` is the whole file; a file object cannot parse yields `None`, not an error, because the
/// build id only helps `pprof -symbolize=force`.
pub fn build_id_hex(data: &[u8]) -> Option<String> {
    let file = object::File::parse(data).ok()?;
    let id = file.build_id().ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}
