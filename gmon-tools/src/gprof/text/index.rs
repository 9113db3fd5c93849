//! The index by function name (`cg_print_index`): functions with calls or time (all with `-z`)
//! sorted by raw name, then the cycles, in a column-major table (spec/gprof.md §9).

use std::io::{self, Write};

use super::fmt::{put_s, put_u};
use super::names::{Names, PrintOptions};
use crate::gprof::Analysis;
use crate::gprof::analysis::sort::msort;

/// Prints the index. It always starts with a form feed line.
pub fn print_index(out: &mut dyn Write, a: &Analysis, opts: &PrintOptions) -> io::Result<()> {
    format_index(a, opts, &mut |b| out.write_all(b))
}

/// The index, formatted into memory (for a second thread while the other reports print).
pub fn index_bytes(a: &Analysis, opts: &PrintOptions) -> Vec<u8> {
    let mut all = Vec::new();
    let _ = format_index(a, opts, &mut |b| {
        all.extend_from_slice(b);
        Ok(())
    });
    all
}

/// The index in pieces of about 60 KiB, each given to `emit`.
fn format_index(
    a: &Analysis,
    opts: &PrintOptions,
    emit: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let g = &a.graph;
    let column_width = (opts.width - 1) / 3;
    let mut syms: Vec<usize> = (0..a.symtab.len())
        .filter(|&i| !(opts.ignore_zeros && g.nodes[i].ncalls == 0 && g.nodes[i].time == 0.0))
        .collect();
    if g.name_rank.len() == a.symtab.len() {
        // msort by name is the stable sort by name: by the names' ranks (computed once for
        // the call graph), then by position. Comparing the names' bytes again cost more
        // than printing the index.
        syms.sort_unstable_by_key(|&i| (g.name_rank[i], i));
    } else {
        msort(&mut syms, |&l, &r| {
            a.symtab.symbols[l]
                .name
                .as_bytes()
                .cmp(a.symtab.symbols[r].name.as_bytes())
        });
    }
    let nnames = syms.len();
    let mut entries: Vec<usize> = syms;
    entries.extend((0..g.ncycles).map(|c| g.nsyms + c));
    let todo = entries.len();
    let names = Names::new(a, *opts);
    let mut b: Vec<u8> = Vec::with_capacity(64 * 1024);
    b.extend_from_slice(b"\x0c\nIndex by function name\n\n");
    let rows = todo.div_ceil(3);
    let mut tag = Vec::with_capacity(16);
    for i in 0..rows {
        let mut col: i64 = 0;
        let mut starting_col: i64 = 0;
        let mut j = i;
        while j < todo {
            let node = entries[j];
            let n = &g.nodes[node];
            tag.clear();
            tag.push(if n.print_flag { b'[' } else { b'(' });
            put_u(&mut tag, u64::from(n.index), 0, false);
            tag.push(if n.print_flag { b']' } else { b')' });
            if opts.bsd {
                put_s(&mut b, &tag, 6, Some(6), false);
                b.push(b' ');
                if j < nnames {
                    put_s(
                        &mut b,
                        a.symtab.symbols[node].name.as_bytes(),
                        19,
                        Some(19),
                        true,
                    );
                } else {
                    put_s(
                        &mut b,
                        format!("<cycle {}>", n.cyc_num).as_bytes(),
                        19,
                        Some(19),
                        true,
                    );
                }
            } else {
                col += tag.len() as i64;
                while col < starting_col + 5 {
                    b.push(b' ');
                    col += 1;
                }
                b.push(b' ');
                b.extend_from_slice(&tag);
                b.push(b' ');
                if j < nnames {
                    col += names.name_only(&mut b, node) as i64;
                    let sym = &a.symtab.symbols[node];
                    if !opts.line_granularity
                        && sym.is_static
                        && let Some(f) = sym.file.and_then(|f| names.file_name(f))
                    {
                        b.extend_from_slice(format!(" ({f})").as_bytes());
                        col += f.len() as i64 + 3;
                    }
                } else {
                    let s = format!("<cycle {}>", n.cyc_num);
                    b.extend_from_slice(s.as_bytes());
                    col += s.len() as i64;
                }
            }
            starting_col += i64::from(column_width);
            j += rows;
        }
        b.push(b'\n');
        if b.len() > 60 * 1024 {
            emit(&b)?;
            b.clear();
        }
    }
    emit(&b)
}
