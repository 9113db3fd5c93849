//! Address → (source file, line, function name), with the answers GNU gprof 2.40 gets from
//! BFD's `bfd_find_nearest_line` on DWARF line information.
//!
//! gprof keeps a location only when BFD returns a file name, a function name and a non-zero
//! line (`get_src_info`); [`LineInfo::locate`] applies that rule. BFD's answers differ from what
//! a correct DWARF consumer (addr2line) gives in ways that show in gprof's output, so the line
//! programs are decoded here with BFD's rules rather than with gimli's row iterator:
//!
//! * File names are `DW_AT_comp_dir` (or the include directory) joined with the name, exactly as
//!   BFD's `concat_filename` builds them: an absolute directory is used alone, a relative one is
//!   put after the compilation directory.
//! * Every line sequence of a DWARF 5 program starts with file **0**, not 1 as the standard
//!   says; GCC 12 relies on the standard value, so code from a header that comes first in a unit
//!   is reported under the unit's primary file (observed: `hinl (a.c:3)` for a function in
//!   `h.h`). DWARF 2-4 sequences start with file 1 (table slot 0).
//! * Rows at one address: only the last of consecutive rows is kept.
//! * Line 0 rows count as "no information" for gprof.
//! * The function is the DWARF subprogram or inlined subroutine with the smallest range around
//!   the address (later DIE wins ties). Its name is used directly when it is a linkage name, or
//!   a `DW_AT_name` in a C-like language; otherwise BFD names the address after the nearest
//!   preceding ELF code symbol, and remembers, per DWARF function, either that symbol's name (if
//!   it starts exactly where the function starts) or the DWARF name for every later lookup. That
//!   memory makes answers depend on the order of lookups, so it is reproduced ([`LineInfo`] is
//!   used through `&mut self`).
//!
//! Everything is read once into plain tables; lookups are binary searches. [`LineInfo::breakpoints`]
//! lists the addresses where an answer can change, so that gprof's byte-by-byte scan of `.text`
//! for `-l` becomes one lookup per distinct region.
//!
//! The pieces, each built only on the ones listed before it (the split addr2line uses):
//! `strings` (interned names), `seek` (the search all tables use), `sections` (section
//! bytes), `die` and `die_walk` (reading entries), `lines_sparse` (a line program run for a few
//! wanted addresses only, for function-level reports), `lines` (line programs), `functions`
//! (subprograms and inlined subroutines), `units` (compilation units and which cover an
//! address), `symbols` (ELF code symbols), `line_info` (the answer for an address, with BFD's
//! name memory).

mod die;
mod die_walk;
mod functions;
mod line_info;
mod lines;
mod lines_sparse;
mod sections;
mod seek;
mod strings;
mod symbols;
mod units;

pub use line_info::{LineInfo, Location, Request};
pub use strings::StrId;
