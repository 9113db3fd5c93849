//! Strings of an ELF string table, read as goblin reads them and, where goblin gives nothing,
//! as BFD does (raw bytes up to the NUL).

use std::borrow::Cow;

use goblin::elf::{Elf, section_header};

/// The bytes goblin parses as `elf.strtab`: the string table linked from the last
/// `SHT_SYMTAB` (`SHN_XINDEX` meaning section 0's link), cut at the end of the file (which
/// only goblin's permissive mode lets through).
pub fn goblin_strtab_bytes<'a>(elf: &Elf<'_>, data: &'a [u8]) -> &'a [u8] {
    let shdrs = &elf.section_headers;
    let Some(symtab) = shdrs
        .iter()
        .rfind(|s| s.sh_type == section_header::SHT_SYMTAB)
    else {
        return &[];
    };
    let mut idx = symtab.sh_link as usize;
    if idx == section_header::SHN_XINDEX as usize {
        match shdrs.first() {
            Some(s0) => idx = s0.sh_link as usize,
            None => return &[],
        }
    }
    let Some(s) = shdrs.get(idx) else {
        return &[];
    };
    let (Ok(off), Ok(len)) = (usize::try_from(s.sh_offset), usize::try_from(s.sh_size)) else {
        return &[];
    };
    let end = off
        .checked_add(len)
        .map_or(data.len(), |e| e.min(data.len()));
    data.get(off..end).unwrap_or(&[])
}

/// The name of the symbol whose `st_name` is `offset`, as goblin's string table gives it, or,
/// when that gives none or an empty one, the raw `.strtab` bytes up to their NUL (lossily).
///
/// goblin's strings are the bytes of the string table of the *last* `SHT_SYMTAB` split at the
/// NULs (`names`), so its answer is read there directly, without its binary search over
/// every string of the table per symbol: the bytes from `offset` up to the NUL when they are
/// UTF-8 and not empty. `fallback`: the table the suffix scan reads (the first symbol table's).
pub fn symbol_name<'a>(names: &'a [u8], fallback: &'a [u8], offset: usize) -> Cow<'a, str> {
    match goblin_str_at(names, offset) {
        "" => String::from_utf8_lossy(c_string_at(fallback, offset)),
        name => Cow::Borrowed(name),
    }
}

/// The bytes of `table` from `offset` up to the next NUL (or the table's end).
fn c_string_at(table: &[u8], offset: usize) -> &[u8] {
    let rest = table.get(offset..).unwrap_or(&[]);
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    rest.get(..end).unwrap_or(&[])
}

/// `elf.strtab.get_at(offset).unwrap_or("")` read from goblin's string-table bytes
/// ([`goblin_strtab_bytes`]) without its per-call binary search: goblin splits the table at
/// the NULs (in permissive mode, a string that is not UTF-8 is an empty one and the next
/// starts one byte later), and answers an offset inside a string with its tail. Either way the
/// answer is the bytes from `offset` to the NUL when they are UTF-8, and nothing otherwise.
pub fn goblin_str_at(table: &[u8], offset: usize) -> &str {
    std::str::from_utf8(c_string_at(table, offset)).unwrap_or("")
}
