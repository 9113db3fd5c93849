//! A line program run for a few wanted addresses: the extent of each sequence and the row
//! that [`super::lines`]' table would answer at each wanted address inside it, without
//! keeping the rows. A function-level report needs the line of a few function entries, and
//! building every row of every program was most of the time spent reading line tables.
//!
//! The rules are those of `lines::decode` (BFD's), on the raw bytes. Whatever this scan does not
//! handle the same way cheaply — a malformed or truncated instruction, `DW_LNE_define_file`, an
//! opcode unknown here, rows out of address order — makes it give up (`None`), and the
//! program is then decoded in full.

use gimli::{Endianity as _, Reader as _};

use super::sections::Reader;

/// One sequence: its first and last row address, and `(wanted address, file number, line)`
/// for each wanted address in `[first, end)` (the file number as `DW_LNS_set_file` gives it;
/// `None` when the program names no file).
#[derive(Debug)]
pub(super) struct SparseSequence {
    pub(super) first: u64,
    pub(super) end: u64,
    pub(super) answers: Vec<(u64, Option<u64>, u32)>,
}

/// The last row kept so far (`push_row`'s rule: of consecutive rows at one place, the last).
#[derive(Clone, Copy)]
struct Row {
    addr: u64,
    op_index: u8,
    file: Option<u64>,
    line: u32,
    end_sequence: bool,
}

/// A byte cursor with gimli's reading rules; every failure is `None`.
struct Bytes<'a> {
    b: &'a [u8],
    big_endian: bool,
}

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&x, rest) = self.b.split_first()?;
        self.b = rest;
        Some(x)
    }

    /// gimli's `read_uleb128`, which refuses bits beyond 64.
    fn uleb(&mut self) -> Option<u64> {
        let mut result = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = self.u8()?;
            if shift == 63 && byte > 1 {
                return None;
            }
            result |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(result);
            }
            shift += 7;
        }
    }

    /// gimli's `read_sleb128`.
    fn sleb(&mut self) -> Option<i64> {
        let mut result = 0i64;
        let mut shift = 0u32;
        loop {
            let byte = self.u8()?;
            if shift == 63 && byte != 0 && byte != 0x7f {
                return None;
            }
            result |= i64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                if shift < 64 && byte & 0x40 != 0 {
                    result |= !0 << shift;
                }
                return Some(result);
            }
        }
    }

    /// An unsigned value of `n` bytes in the file's byte order.
    fn uint(&mut self, n: usize) -> Option<u64> {
        if !matches!(n, 1 | 2 | 4 | 8) || self.b.len() < n {
            return None;
        }
        let (v, rest) = self.b.split_at(n);
        self.b = rest;
        let fold = |acc: u64, &x: &u8| (acc << 8) | u64::from(x);
        Some(if self.big_endian {
            v.iter().fold(0, fold)
        } else {
            v.iter().rev().fold(0, fold)
        })
    }
}

/// The address and op_index after an operation advance of `adv` (a special opcode's, or
/// `DW_LNS_const_add_pc`'s), by DWARF's formula.
pub(super) fn advance(
    address: u64,
    op_index: u64,
    adv: u64,
    min_len: u64,
    max_ops: u64,
) -> (u64, u64) {
    if max_ops == 1 {
        (address.wrapping_add(adv.wrapping_mul(min_len)), op_index)
    } else {
        (
            address.wrapping_add((op_index.wrapping_add(adv) / max_ops).wrapping_mul(min_len)),
            op_index.wrapping_add(adv) % max_ops,
        )
    }
}

/// Runs the program of `header`, answering at `want` (ascending); `None`: decode in full.
pub(super) fn scan(
    header: &gimli::LineProgramHeader<Reader<'_>>,
    want: &[u64],
) -> Option<Vec<SparseSequence>> {
    let raw = header.raw_program_buf();
    let mut prog = Bytes {
        b: raw.slice(),
        big_endian: raw.endian().is_big_endian(),
    };
    let version = header.version();
    let address_size = usize::from(header.address_size());
    let min_len = u64::from(header.minimum_instruction_length());
    let max_ops = u64::from(header.maximum_operations_per_instruction()).max(1);
    let line_range = u64::from(header.line_range());
    let line_base = i64::from(header.line_base());
    let opcode_base = header.opcode_base();
    if opcode_base == 0 {
        // Opcode 0 would be both extended and special: left to the full decoder.
        return None;
    }
    let initial_file = if header.file_names().is_empty() {
        None
    } else if version >= 5 {
        Some(0)
    } else {
        Some(1)
    };
    // Each special opcode's operation advance and line delta, divided out once (the two
    // divisions per row were a third of the scan).
    let special: Vec<(u64, i64)> = (0..=255u8)
        .map(|op| {
            let adj = u64::from(op.saturating_sub(opcode_base));
            match (adj.checked_div(line_range), adj.checked_rem(line_range)) {
                (Some(adv), Some(rem)) => (adv, line_base + i64::try_from(rem).unwrap_or(0)),
                _ => (0, 0),
            }
        })
        .collect();
    let mut seqs = Vec::new();
    while !prog.b.is_empty() {
        // A new sequence: registers reset.
        let mut address = 0u64;
        let mut op_index = 0u64;
        let mut line: u32 = 1;
        let mut file = initial_file;
        let mut last: Option<Row> = None;
        let mut first = 0u64;
        let mut next_want = 0usize;
        let mut answers = Vec::new();
        loop {
            // While rows move forward with no wanted address behind them, each row only
            // becomes the last one: this loop runs the instructions GCC writes between rows
            // (special opcodes, copy, column, is_stmt, discriminator, line, file and address
            // advances) without the general step's row bookkeeping. Anything else, a row that
            // goes backwards or passes a wanted address, or an instruction cut short, is left
            // unread to the general step below. The operation index stays 0 when there is one
            // operation per instruction.
            if max_ops == 1
                && line_range != 0
                && let Some(l) = &mut last
            {
                let bound = want.get(next_want).copied().unwrap_or(u64::MAX);
                while let Some((&op, rest)) = prog.b.split_first() {
                    let mut p = Bytes {
                        b: rest,
                        big_endian: prog.big_endian,
                    };
                    let row_at = if op >= opcode_base {
                        let (adv, delta) = special.get(usize::from(op)).copied().unwrap_or((0, 0));
                        let a = address.wrapping_add(adv.wrapping_mul(min_len));
                        if a < l.addr || bound < a {
                            break;
                        }
                        address = a;
                        line = i64::from(line).wrapping_add(delta) as u32;
                        true
                    } else {
                        match op {
                            1 => {
                                if address < l.addr || bound < address {
                                    break;
                                }
                                true
                            }
                            2 => {
                                let Some(n) = p.uleb() else { break };
                                address = address.wrapping_add(min_len.wrapping_mul(n));
                                false
                            }
                            3 => {
                                let Some(d) = p.sleb() else { break };
                                line = i64::from(line).wrapping_add(d) as u32;
                                false
                            }
                            4 => {
                                let Some(n) = p.uleb() else { break };
                                file = Some(n);
                                false
                            }
                            5 | 12 => {
                                if p.uleb().is_none() {
                                    break;
                                }
                                false
                            }
                            6 | 7 | 10 | 11 => false,
                            0 => {
                                // Only DW_LNE_set_discriminator, read as the step below reads it.
                                let Some(len) = p.uleb().and_then(|n| usize::try_from(n).ok())
                                else {
                                    break;
                                };
                                let Some((body, after)) = p.b.split_at_checked(len) else {
                                    break;
                                };
                                let mut body = Bytes {
                                    b: body,
                                    big_endian: prog.big_endian,
                                };
                                if body.u8() != Some(4) || body.uleb().is_none() {
                                    break;
                                }
                                p.b = after;
                                false
                            }
                            _ => break,
                        }
                    };
                    prog.b = p.b;
                    if row_at {
                        *l = Row {
                            addr: address,
                            op_index: u8::try_from(op_index).unwrap_or(u8::MAX),
                            file,
                            line,
                            end_sequence: false,
                        };
                    }
                }
            }
            if prog.b.is_empty() {
                // An unfinished sequence is dropped.
                return Some(seqs);
            }
            let opcode = prog.u8()?;
            let mut end_sequence = false;
            let emit = if opcode >= opcode_base {
                if line_range == 0 {
                    return None;
                }
                let (adv, delta) = special.get(usize::from(opcode)).copied().unwrap_or((0, 0));
                (address, op_index) = advance(address, op_index, adv, min_len, max_ops);
                line = i64::from(line).wrapping_add(delta) as u32;
                true
            } else {
                match opcode {
                    0 => {
                        let len = usize::try_from(prog.uleb()?).ok()?;
                        if prog.b.len() < len {
                            return None;
                        }
                        let (body, rest) = prog.b.split_at(len);
                        prog.b = rest;
                        let mut body = Bytes {
                            b: body,
                            big_endian: prog.big_endian,
                        };
                        match body.u8()? {
                            1 => {
                                end_sequence = true;
                                true
                            }
                            2 => {
                                address = body.uint(address_size)?;
                                op_index = 0;
                                false
                            }
                            3 if version <= 4 => return None,
                            4 => {
                                body.uleb()?;
                                false
                            }
                            _ => false,
                        }
                    }
                    1 => true,
                    2 => {
                        let n = prog.uleb()?;
                        if max_ops == 1 {
                            address = address.wrapping_add(min_len.wrapping_mul(n));
                        } else {
                            // As `lines::decode` (and BFD) compute it.
                            address = (op_index.wrapping_add(n) / max_ops).wrapping_mul(min_len);
                            op_index = op_index.wrapping_add(n) % max_ops;
                        }
                        false
                    }
                    3 => {
                        line = i64::from(line).wrapping_add(prog.sleb()?) as u32;
                        false
                    }
                    4 => {
                        file = Some(prog.uleb()?);
                        false
                    }
                    5 | 12 => {
                        prog.uleb()?;
                        false
                    }
                    6 | 7 | 10 | 11 => false,
                    8 => {
                        if line_range == 0 {
                            return None;
                        }
                        let adv = (255 - u64::from(opcode_base)) / line_range;
                        (address, op_index) = advance(address, op_index, adv, min_len, max_ops);
                        false
                    }
                    9 => {
                        address = address.wrapping_add(prog.uint(2)?);
                        op_index = 0;
                        false
                    }
                    _ => return None,
                }
            };
            if !emit {
                continue;
            }
            let row = Row {
                addr: address,
                op_index: u8::try_from(op_index).unwrap_or(u8::MAX),
                file,
                line,
                end_sequence,
            };
            match last {
                None => {
                    first = row.addr;
                    next_want = want.partition_point(|&a| a < row.addr);
                }
                Some(l)
                    if l.addr == row.addr
                        && l.op_index == row.op_index
                        && l.end_sequence == row.end_sequence => {}
                Some(l) => {
                    if (l.addr, l.op_index) > (row.addr, row.op_index) {
                        return None;
                    }
                    // The table answers with `l` from its address up to the next row's.
                    while let Some(&a) = want.get(next_want) {
                        if a >= row.addr {
                            break;
                        }
                        if !l.end_sequence {
                            answers.push((a, l.file, l.line));
                        }
                        next_want += 1;
                    }
                }
            }
            last = Some(row);
            if end_sequence {
                seqs.push(SparseSequence {
                    first,
                    end: row.addr,
                    answers,
                });
                break;
            }
        }
    }
    Some(seqs)
}
