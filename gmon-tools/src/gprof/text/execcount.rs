//! Execution counts (`-C`, and gprof's fallback report for a profile with neither histogram
//! nor arcs): `print_exec_counts` over the function symbols, sorted by `cmp_bb`
//! (spec/gprof.md §10.4). Basic-block lines (`-l` with basic-block records) are the
//! line-level extension of this report.

use std::cmp::Ordering;
use std::io::{self, Write};

use crate::gprof::Analysis;
use crate::gprof::analysis::blocks::BasicBlocks;
use crate::gprof::analysis::sort::msort;
use crate::gprof::analysis::symspec::TableId;

/// gprof's `cmp_bb`: file name and line when both symbols have a file, else address (not a
/// total order; glibc's merge sort makes the result deterministic).
pub(super) fn cmp_bb(a: &Analysis, l: usize, r: usize) -> Ordering {
    let (Some(ls), Some(rs)) = (a.symtab.symbols.get(l), a.symtab.symbols.get(r)) else {
        return Ordering::Equal;
    };
    if let (Some(lf), Some(rf)) = (ls.file, rs.file) {
        let name = |f: usize| a.symtab.files.get(f).map_or("", |x| x.name.as_str());
        match name(lf).as_bytes().cmp(name(rf).as_bytes()) {
            Ordering::Equal => {}
            o => return o,
        }
        if ls.line != rs.line {
            return ls.line.cmp(&rs.line);
        }
    }
    ls.addr.cmp(&rs.addr)
}

/// `print_exec_counts`: one `FILE:LINE: (NAME:0xADDR) N executions` line per selected symbol
/// with calls (all unless `ignore_zeros`), and with `blocks` (line mode), one such line per
/// basic block of the symbol after it (the block's address and count).
pub fn print_exec_counts(
    out: &mut dyn Write,
    a: &Analysis,
    ignore_zeros: bool,
    blocks: Option<&BasicBlocks>,
    first_output: &mut bool,
) -> io::Result<()> {
    let mut b: Vec<u8> = Vec::new();
    if *first_output {
        *first_output = false;
    } else {
        b.extend_from_slice(b"\x0c\n");
    }
    let mut syms: Vec<usize> = (0..a.symtab.len())
        .filter(|&i| {
            a.specs.selected(
                TableId::InclExec,
                TableId::ExclExec,
                a.symtab.symbols[i].addr,
            )
        })
        .collect();
    msort(&mut syms, |&l, &r| cmp_bb(a, l, r));
    for s in syms {
        let sym = &a.symtab.symbols[s];
        let file = sym
            .file
            .and_then(|f| a.symtab.files.get(f))
            .map_or("<unknown>", |f| f.name.as_str());
        let calls = a.graph.nodes.get(s).map_or(0, |n| n.ncalls);
        if calls > 0 || !ignore_zeros {
            b.extend_from_slice(
                format!(
                    "{file}:{}: ({}:0x{:x}) {calls} executions\n",
                    sym.line, sym.name, sym.addr
                )
                .as_bytes(),
            );
        }
        for &(addr, count) in blocks.map_or(&[][..], |bb| bb.of(s)) {
            if count > 0 || !ignore_zeros {
                b.extend_from_slice(
                    format!(
                        "{file}:{}: ({}:0x{addr:x}) {count} executions\n",
                        sym.line, sym.name
                    )
                    .as_bytes(),
                );
            }
        }
    }
    out.write_all(&b)
}
