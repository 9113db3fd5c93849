//! Line programs, decoded with BFD's `decode_line_info` rules (see the module docs of
//! [`super`]), and the lookup of an address's row.

use std::cell::Cell;
use std::collections::HashMap;

use gimli::AttributeValue;

use super::lines_sparse as sparse;
use super::sections::Reader;
use super::seek::seek;
use super::strings::{StrId, Strings};

#[derive(Clone, Copy, Debug)]
struct Row {
    addr: u64,
    op_index: u8,
    file: Option<StrId>,
    line: u32,
    end_sequence: bool,
}

#[derive(Debug)]
struct Sequence {
    /// Lowest address (possibly trimmed where sequences overlap, as BFD does).
    low: u64,
    /// The address of the first row (before trimming).
    first: u64,
    /// The address of the last row (the end of the sequence).
    end: u64,
    /// Every row, or with [`Lines::sparse`] none.
    rows: Vec<Row>,
    /// With [`Lines::sparse`]: the answer of [`Lines::find`] at each wanted address of
    /// `[first, end)`, by address.
    answers: Vec<(u64, Option<StrId>, u32)>,
}

impl Sequence {
    fn end(&self) -> u64 {
        self.end
    }
}

/// A unit's line table: its sequences, sorted by low address with BFD's trimming, and where the
/// last lookups ended.
#[derive(Debug, Default)]
pub(super) struct Lines {
    sequences: Vec<Sequence>,
    /// Decoded for a list of wanted addresses only (see [`decode`]): the sequences keep their
    /// extents and the answers at those addresses, not their rows.
    sparse: bool,
    sequence_hint: Cell<usize>,
    row_hint: Cell<(usize, usize)>,
}

impl Lines {
    /// The file and line of the row holding `addr`, if a sequence covers it.
    pub(super) fn find(&self, addr: u64) -> Option<(Option<StrId>, u32)> {
        let si = seek(&self.sequences, |s| s.low, addr, &self.sequence_hint)?;
        let s = self.sequences.get(si)?;
        if addr < s.low || addr >= s.end() {
            return None;
        }
        if self.sparse {
            let i = s.answers.binary_search_by_key(&addr, |a| a.0).ok()?;
            return s.answers.get(i).map(|&(_, file, line)| (file, line));
        }
        // The row hint belongs to one sequence.
        let (hint_seq, hint_row) = self.row_hint.get();
        let row_hint = Cell::new(if hint_seq == si { hint_row } else { 0 });
        let found = seek(&s.rows, |r| r.addr, addr, &row_hint);
        self.row_hint.set((si, row_hint.get()));
        let i = found?;
        let r = s.rows.get(i)?;
        let next = s.rows.get(i + 1)?;
        if addr >= r.addr && addr < next.addr && !r.end_sequence {
            Some((r.file, r.line))
        } else {
            None
        }
    }

    /// Whether the table was read for wanted addresses only.
    #[cfg(test)]
    pub(super) fn is_sparse(&self) -> bool {
        self.sparse
    }

    /// Each sequence's address range `[first row, end)` (the ranges a unit's line table adds
    /// to the unit's own).
    pub(super) fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sequences.iter().map(|s| (s.first, s.end()))
    }

    /// Every address where the answer of [`Lines::find`] may change.
    pub(super) fn breakpoints(&self) -> impl Iterator<Item = u64> + '_ {
        self.sequences
            .iter()
            .flat_map(|s| std::iter::once(s.low).chain(s.rows.iter().map(|r| r.addr)))
    }

    /// Gives the file ids the values `id` assigns them.
    pub(super) fn remap(&mut self, id: impl Fn(StrId) -> StrId) {
        for seq in &mut self.sequences {
            for r in &mut seq.rows {
                r.file = r.file.map(&id);
            }
            for a in &mut seq.answers {
                a.1 = a.1.map(&id);
            }
        }
    }
}

/// Runs a line program with BFD's `decode_line_info` rules; file names are interned into
/// `strings`. With `want` (ascending addresses), only the sequences' extents and the answers
/// at those addresses are kept, not the rows: [`Lines::find`] then answers only there. A
/// function-level run needs the line of a few function entries, and storing every row was
/// most of the decoding time. A program whose rows are not in address order (which GCC does
/// not produce) is decoded in full all the same.
pub(super) fn decode(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    header: &gimli::LineProgramHeader<Reader<'_>>,
    comp_dir: Option<&str>,
    strings: &mut Strings,
    want: Option<&[u64]>,
) -> Lines {
    let version = header.version();
    let direct = version >= 5;
    let text = |v: AttributeValue<Reader<'_>>| -> Option<String> {
        dwarf
            .attr_string(unit, v)
            .ok()
            .map(|s| String::from_utf8_lossy(s.slice()).into_owned())
    };
    let dirs: Vec<Option<String>> = header
        .include_directories()
        .iter()
        .map(|d| text(*d))
        .collect();
    let mut files: Vec<(Option<String>, u64)> = header
        .file_names()
        .iter()
        .map(|f| (text(f.path_name()), f.directory_index()))
        .collect();
    let mut names: HashMap<u64, Option<StrId>> = HashMap::new();
    let min_len = u64::from(header.minimum_instruction_length());
    let max_ops = u64::from(header.maximum_operations_per_instruction()).max(1);
    let line_range = u64::from(header.line_range());
    let line_base = i64::from(header.line_base());
    let opcode_base = u64::from(header.opcode_base());
    let mut seqs: Vec<Sequence> = Vec::new();
    if let Some(want) = want
        && let Some(seqs) = sparse::scan(header, want)
    {
        let files: Vec<(Option<String>, u64)> = files;
        let mut resolve = |n: Option<u64>| match n {
            Some(n) => file_name(strings, &mut names, &files, &dirs, comp_dir, direct, n),
            None => None,
        };
        let seqs = seqs
            .into_iter()
            .map(|q| Sequence {
                low: q.first,
                first: q.first,
                end: q.end,
                rows: Vec::new(),
                answers: q
                    .answers
                    .into_iter()
                    .map(|(a, f, l)| (a, resolve(f), l))
                    .collect(),
            })
            .collect();
        return Lines {
            sequences: bfd_order(seqs),
            sparse: true,
            ..Lines::default()
        };
    }
    let mut current: Vec<Row> = Vec::new();
    let mut prog = header.raw_program_buf();
    'outer: loop {
        // A new sequence: registers reset; DWARF 5 starts at file 0, older versions at 1.
        let mut address = 0u64;
        let mut op_index = 0u64;
        let mut line: u32 = 1;
        let initial = if files.is_empty() {
            None
        } else if direct {
            Some(0)
        } else {
            Some(1)
        };
        let mut file: Option<StrId> = match initial {
            Some(i) => file_name(strings, &mut names, &files, &dirs, comp_dir, direct, i),
            None => None,
        };
        // GCC's rows take about three bytes of program each: room for them up front
        // saves a dozen regrowths of a unit's long sequence (trimmed when it ends).
        current.reserve(prog.len() / 3);
        loop {
            let insn = match next_step(&mut prog, header) {
                Ok(Some(i)) => i,
                _ => break 'outer,
            };
            use Step as L;
            match insn {
                L::Special(op) => {
                    if line_range == 0 {
                        break 'outer;
                    }
                    let adj = u64::from(op).saturating_sub(opcode_base);
                    let adv = adj / line_range;
                    (address, op_index) = sparse::advance(address, op_index, adv, min_len, max_ops);
                    let delta = line_base + i64::try_from(adj % line_range).unwrap_or(0);
                    line = i64::from(line).wrapping_add(delta) as u32;
                    push_row(&mut current, row(address, op_index, line, false, file));
                }
                L::Copy => push_row(&mut current, row(address, op_index, line, false, file)),
                L::AdvancePc(n) => {
                    if max_ops == 1 {
                        address = address.wrapping_add(min_len.wrapping_mul(n));
                    } else {
                        address = (op_index.wrapping_add(n) / max_ops).wrapping_mul(min_len);
                        op_index = op_index.wrapping_add(n) % max_ops;
                    }
                }
                L::AdvanceLine(d) => line = i64::from(line).wrapping_add(d) as u32,
                L::SetFile(n) => {
                    file = file_name(strings, &mut names, &files, &dirs, comp_dir, direct, n);
                }
                L::ConstAddPc => {
                    if line_range == 0 {
                        break 'outer;
                    }
                    let adv = (255 - opcode_base.min(255)) / line_range;
                    (address, op_index) = sparse::advance(address, op_index, adv, min_len, max_ops);
                }
                L::FixedAddPc(n) => {
                    address = address.wrapping_add(u64::from(n));
                    op_index = 0;
                }
                L::EndSequence => {
                    push_row(&mut current, row(address, op_index, line, true, file));
                    let rows = std::mem::take(&mut current);
                    if let Some(seq) = finish_sequence(rows) {
                        seqs.push(seq);
                    }
                    continue 'outer;
                }
                L::SetAddress(a) => {
                    address = a;
                    op_index = 0;
                }
                L::DefineFile(path, dir) => {
                    files.push((text(AttributeValue::String(path)), dir));
                }
                L::Other => {}
            }
        }
    }
    Lines {
        sequences: bfd_order(seqs),
        ..Lines::default()
    }
}

/// BFD: sequences sorted by low address, larger ranges first, then later sequences first;
/// nested ones dropped and overlapping ones trimmed.
fn bfd_order(seqs: Vec<Sequence>) -> Vec<Sequence> {
    let n = seqs.len();
    let mut order: Vec<usize> = (0..n).collect();
    let keys: Vec<(u64, u64)> = seqs.iter().map(|s| (s.low, s.end())).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (keys.get(a), keys.get(b));
        let low = |k: Option<&(u64, u64)>| k.map_or(0, |k| k.0);
        let end = |k: Option<&(u64, u64)>| k.map_or(0, |k| k.1);
        low(ka)
            .cmp(&low(kb))
            .then(end(kb).cmp(&end(ka)))
            .then(b.cmp(&a))
    });
    let mut sequences = Vec::with_capacity(n);
    let mut slots: Vec<Option<Sequence>> = seqs.into_iter().map(Some).collect();
    let mut last_high: Option<u64> = None;
    for i in order {
        let Some(mut s) = slots.get_mut(i).and_then(Option::take) else {
            continue;
        };
        if let Some(h) = last_high
            && s.low < h
        {
            if s.end() <= h {
                continue;
            }
            s.low = h;
        }
        last_high = Some(s.end());
        sequences.push(s);
    }
    sequences
}

/// BFD's `concat_filename` for file number `n`, interned (memoised per program).
fn file_name(
    strings: &mut Strings,
    memo: &mut HashMap<u64, Option<StrId>>,
    files: &[(Option<String>, u64)],
    dirs: &[Option<String>],
    comp_dir: Option<&str>,
    direct: bool,
    n: u64,
) -> Option<StrId> {
    if let Some(&id) = memo.get(&n) {
        return id;
    }
    let name = concat_filename(files, dirs, comp_dir, direct, n);
    let id = Some(strings.intern(&name));
    memo.insert(n, id);
    id
}

/// One line-program instruction, as far as the decoder needs it (the others are `Other`).
/// Decoding them here rather than through `gimli::LineInstructions` avoids building gimli's
/// large instruction value per step, which was a quarter of a function-level run's time.
enum Step<'a> {
    Special(u8),
    Copy,
    AdvancePc(u64),
    AdvanceLine(i64),
    SetFile(u64),
    ConstAddPc,
    FixedAddPc(u16),
    EndSequence,
    SetAddress(u64),
    DefineFile(Reader<'a>, u64),
    Other,
}

/// The next instruction of `prog`, read with gimli's rules (`LineInstruction::parse`):
/// `None` at the end, an error for a truncated instruction (the caller stops there).
fn next_step<'a>(
    prog: &mut Reader<'a>,
    header: &gimli::LineProgramHeader<Reader<'a>>,
) -> Result<Option<Step<'a>>, gimli::Error> {
    use gimli::Reader as _;
    if prog.is_empty() {
        return Ok(None);
    }
    let opcode = prog.read_u8()?;
    if opcode == 0 {
        let length = prog
            .read_uleb128()
            .and_then(<usize as gimli::ReaderOffset>::from_u64)?;
        let mut rest = prog.split(length)?;
        let sub = rest.read_u8()?;
        return Ok(Some(match gimli::DwLne(sub) {
            gimli::DW_LNE_end_sequence => Step::EndSequence,
            gimli::DW_LNE_set_address => {
                Step::SetAddress(rest.read_address(header.address_size())?)
            }
            gimli::DW_LNE_define_file if header.version() <= 4 => {
                let path = rest.read_null_terminated_slice()?;
                let dir = rest.read_uleb128()?;
                // Modification time and length: read only to fail on truncation, as gimli.
                rest.read_uleb128()?;
                rest.read_uleb128()?;
                Step::DefineFile(path, dir)
            }
            gimli::DW_LNE_set_discriminator => {
                rest.read_uleb128()?;
                Step::Other
            }
            _ => Step::Other,
        }));
    }
    if opcode >= header.opcode_base() {
        return Ok(Some(Step::Special(opcode)));
    }
    Ok(Some(match gimli::DwLns(opcode) {
        gimli::DW_LNS_copy => Step::Copy,
        gimli::DW_LNS_advance_pc => Step::AdvancePc(prog.read_uleb128()?),
        gimli::DW_LNS_advance_line => Step::AdvanceLine(prog.read_sleb128()?),
        gimli::DW_LNS_set_file => Step::SetFile(prog.read_uleb128()?),
        gimli::DW_LNS_set_column | gimli::DW_LNS_set_isa => {
            prog.read_uleb128()?;
            Step::Other
        }
        gimli::DW_LNS_const_add_pc => Step::ConstAddPc,
        gimli::DW_LNS_fixed_advance_pc => Step::FixedAddPc(prog.read_u16()?),
        gimli::DW_LNS_negate_stmt
        | gimli::DW_LNS_set_basic_block
        | gimli::DW_LNS_set_prologue_end
        | gimli::DW_LNS_set_epilogue_begin => Step::Other,
        _ => {
            // An opcode this reader does not know: skip its arguments, whose count the
            // header's standard_opcode_lengths gives.
            let mut lengths = *header.standard_opcode_lengths();
            lengths.skip(usize::from(opcode.saturating_sub(1)))?;
            for _ in 0..lengths.read_u8()? {
                prog.read_uleb128()?;
            }
            Step::Other
        }
    }))
}

/// `concat_filename` without interning.
fn concat_filename(
    files: &[(Option<String>, u64)],
    dirs: &[Option<String>],
    comp_dir: Option<&str>,
    direct: bool,
    n: u64,
) -> String {
    let idx = if direct {
        n
    } else {
        if n == 0 {
            return "<unknown>".to_string();
        }
        n - 1
    };
    let Some((Some(name), dir)) = usize::try_from(idx).ok().and_then(|i| files.get(i)) else {
        return "<unknown>".to_string();
    };
    if name.starts_with('/') {
        return name.clone();
    }
    let dir = if direct {
        Some(*dir)
    } else {
        dir.checked_sub(1)
    };
    let subdir = dir
        .and_then(|d| usize::try_from(d).ok())
        .and_then(|d| dirs.get(d))
        .and_then(|d| d.as_deref());
    let mut dir_name = None;
    let mut sub = subdir;
    if sub.is_none_or(|s| !s.starts_with('/')) {
        dir_name = comp_dir;
    }
    if dir_name.is_none() {
        dir_name = sub;
        sub = None;
    }
    match (dir_name, sub) {
        (None, _) => name.clone(),
        (Some(d), Some(s)) => format!("{d}/{s}/{name}"),
        (Some(d), None) => format!("{d}/{name}"),
    }
}

fn row(addr: u64, op_index: u64, line: u32, end_sequence: bool, file: Option<StrId>) -> Row {
    Row {
        addr,
        op_index: u8::try_from(op_index).unwrap_or(u8::MAX),
        file,
        line,
        end_sequence,
    }
}

/// `add_line_info` for the usual in-order case: consecutive rows at one address (same
/// `op_index` and end flag) keep only the last.
fn push_row(rows: &mut Vec<Row>, row: Row) {
    if let Some(last) = rows.last_mut()
        && last.addr == row.addr
        && last.op_index == row.op_index
        && last.end_sequence == row.end_sequence
    {
        *last = row;
        return;
    }
    rows.push(row);
}

fn finish_sequence(mut rows: Vec<Row>) -> Option<Sequence> {
    let sorted = rows
        .windows(2)
        .all(|w| (w[0].addr, w[0].op_index) <= (w[1].addr, w[1].op_index));
    if !sorted {
        // Out-of-order rows (not produced by GCC): keep them address-sorted.
        rows.sort_by_key(|r| (r.addr, r.op_index));
    }
    let low = rows.first()?.addr;
    let end = rows.last()?.addr;
    rows.shrink_to_fit();
    Some(Sequence {
        low,
        first: low,
        end,
        rows,
        answers: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_filename_follows_bfd() {
        let files = vec![
            (Some("a.c".to_string()), 0),
            (Some("h.h".to_string()), 1),
            (Some("/abs/x.c".to_string()), 0),
        ];
        let dirs = vec![Some("/comp".to_string()), Some("inc".to_string())];
        // DWARF 5: direct indices; dir 0 is absolute and used alone.
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 0),
            "/comp/a.c"
        );
        // A relative include dir goes after the compilation directory.
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 1),
            "/cd/inc/h.h"
        );
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 2),
            "/abs/x.c"
        );
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), true, 7),
            "<unknown>"
        );
        // DWARF 4: 1-based files, dir 0 = no subdirectory.
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), false, 1),
            "/cd/a.c"
        );
        assert_eq!(
            concat_filename(&files, &dirs, Some("/cd"), false, 0),
            "<unknown>"
        );
        assert_eq!(concat_filename(&files, &dirs, None, false, 1), "a.c");
    }

    #[test]
    fn rows_at_one_address_keep_the_last() {
        let mut rows = Vec::new();
        for line in [7, 2, 3] {
            push_row(
                &mut rows,
                Row {
                    addr: 0x10,
                    op_index: 0,
                    file: Some(0),
                    line,
                    end_sequence: false,
                },
            );
        }
        push_row(
            &mut rows,
            Row {
                addr: 0x14,
                op_index: 0,
                file: Some(0),
                line: 9,
                end_sequence: true,
            },
        );
        let seq = finish_sequence(rows).unwrap_or(Sequence {
            low: 1,
            first: 1,
            end: 0,
            rows: Vec::new(),
            answers: Vec::new(),
        });
        let lines = Lines {
            sequences: vec![seq],
            ..Lines::default()
        };
        assert_eq!(lines.find(0x10), Some((Some(0), 3)));
        assert_eq!(lines.find(0x13), Some((Some(0), 3)));
        assert_eq!(lines.find(0x14), None);
        assert_eq!(lines.find(0xf), None);
    }
}
