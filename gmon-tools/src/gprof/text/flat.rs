//! The flat profile (`hist_print`): every function's self time, calls and per-call times,
//! sorted by time (spec/gprof.md §7).

use std::cmp::Ordering;
use std::io::{self, Write};

use super::blurbs;
use super::fmt::{g_string, put_f, put_s, put_sw, put_u};
use super::names::{Names, PrintOptions};
use crate::gprof::Analysis;
use crate::gprof::analysis::sort::{msort, ordered_f64, sort_mostly_idle};
use crate::gprof::analysis::symspec::TableId;

/// SI prefixes gprof picks the per-call unit from (`SItab`).
const SI: [(u8, f64); 11] = [
    (b'T', 1e-12),
    (b'G', 1e-09),
    (b'M', 1e-06),
    (b'K', 1e-03),
    (b' ', 1.0),
    (b'm', 1e+03),
    (b'u', 1e+06),
    (b'n', 1e+09),
    (b'p', 1e+12),
    (b'f', 1e+15),
    (b'a', 1e+18),
];

/// gprof's `cmp_time`: time descending, calls descending, raw name ascending.
fn cmp_time(a: &Analysis, l: usize, r: usize) -> Ordering {
    let (ln, rn) = (&a.graph.nodes[l], &a.graph.nodes[r]);
    let diff = rn.time - ln.time;
    if diff > 0.0 {
        return Ordering::Greater;
    }
    if diff < 0.0 {
        return Ordering::Less;
    }
    if rn.ncalls > ln.ncalls {
        return Ordering::Greater;
    }
    if rn.ncalls < ln.ncalls {
        return Ordering::Less;
    }
    a.symtab.symbols[l]
        .name
        .as_bytes()
        .cmp(a.symtab.symbols[r].name.as_bytes())
}

/// Every symbol in `cmp_time` order: the stable sort by (time, calls, name) descending,
/// descending, ascending (see `sort`), or msort itself when a time is NaN. Symbols with no
/// time and no calls are bucket-sorted by name rank.
fn sort_by_time(a: &Analysis) -> Vec<usize> {
    use std::cmp::Reverse;
    let n = a.symtab.len();
    let ranks = &a.graph.name_rank;
    let sorted = match u32::try_from(n) {
        Ok(n32) if ranks.len() == n && a.graph.nodes.len() >= n => {
            let rank = |i: u32| ranks.get(i as usize).copied().unwrap_or(0);
            let key = |i: u32| {
                let node = &a.graph.nodes[i as usize];
                Some((
                    Reverse(ordered_f64(node.time)?),
                    Reverse(node.ncalls),
                    rank(i),
                ))
            };
            let zero = ordered_f64(0.0);
            let idle = |i: u32| {
                let node = &a.graph.nodes[i as usize];
                (node.ncalls == 0 && ordered_f64(node.time) == zero).then(|| rank(i))
            };
            let nranks = ranks.iter().max().map_or(0, |&m| m as usize + 1);
            sort_mostly_idle(n32, key, idle, nranks)
        }
        _ => None,
    };
    match sorted {
        Some(v) => v.into_iter().map(|i| i as usize).collect(),
        None => {
            let mut sorted: Vec<usize> = (0..n).collect();
            msort(&mut sorted, |&l, &r| cmp_time(a, l, r));
            sorted
        }
    }
}

/// Prints the flat profile. `first_output` is gprof's section-separator flag.
pub fn print_flat(
    out: &mut dyn Write,
    a: &Analysis,
    opts: &PrintOptions,
    first_output: &mut bool,
) -> io::Result<()> {
    let mut b: Vec<u8> = Vec::with_capacity(64 * 1024);
    if *first_output {
        *first_output = false;
    } else {
        b.extend_from_slice(b"\x0c\n");
    }
    let hz = f64::from(a.hist.hz);
    if opts.bsd {
        if !opts.brief {
            b.extend_from_slice(b"\n\n\nflat profile:\n");
            b.extend_from_slice(blurbs::FLAT.as_bytes());
        }
    } else {
        b.extend_from_slice(b"Flat profile:\n");
    }
    let sorted = sort_by_time(a);
    let log_scale = if opts.bsd {
        5
    } else {
        let mut top: Option<usize> = None;
        let mut top_time = 0.0;
        for &s in &sorted {
            let node = &a.graph.nodes[s];
            if node.ncalls != 0 {
                let t = (node.time + node.child_time) / node.ncalls as f64;
                if t > top_time {
                    top = Some(s);
                    top_time = t;
                }
            }
        }
        let mut ls = 0;
        if top.is_some() && top_time > 0.0 {
            top_time /= hz;
            ls = SI.len();
            for (i, (_, scale)) in SI.iter().enumerate() {
                let v = scale * top_time;
                if (1.0..1000.0).contains(&v) {
                    ls = i;
                    break;
                }
            }
        }
        // Past the table is undefined behaviour in gprof; unreachable for real data.
        ls.min(SI.len() - 1)
    };
    let (prefix, scale) = SI[log_scale];
    let dim = a.hist.dimension.name_str();
    let unit = format!("{}{}/call", prefix as char, a.hist.dimension.abbrev as char);
    let mut total_time = a.total_time;
    if opts.bsd {
        b.extend_from_slice(
            format!(
                "\ngranularity: each sample hit covers {} byte(s)",
                super::fmt::c_long(a.hist.scale).wrapping_mul(2)
            )
            .as_bytes(),
        );
        if total_time > 0.0 {
            b.extend_from_slice(
                format!(
                    " for {}% of {} {}\n\n",
                    super::fmt::f_string(100.0 / total_time, 2),
                    super::fmt::f_string(total_time / hz, 2),
                    dim
                )
                .as_bytes(),
            );
        }
    } else {
        b.extend_from_slice(
            format!("\nEach sample counts as {} {}.\n", g_string(1.0 / hz), dim).as_bytes(),
        );
    }
    if total_time <= 0.0 {
        b.extend_from_slice(b" no time accumulated\n\n");
        total_time = 1.0;
    }
    // "%5.5s %10.10s %8.8s %8.8s %8.8s %8.8s  %-8.8s"
    put_sw(&mut b, "%  ", 5);
    b.push(b' ');
    put_sw(&mut b, "cumulative", 10);
    b.push(b' ');
    put_sw(&mut b, "self  ", 8);
    b.push(b' ');
    put_sw(&mut b, "", 8);
    b.push(b' ');
    put_sw(&mut b, "self  ", 8);
    b.push(b' ');
    put_sw(&mut b, "total ", 8);
    b.extend_from_slice(b"  ");
    put_s(&mut b, b"", 8, Some(8), true);
    b.push(b'\n');
    // "%5.5s %9.9s  %8.8s %8.8s %8.8s %8.8s  %-8.8s"
    put_sw(&mut b, "time", 5);
    b.push(b' ');
    put_sw(&mut b, &dim, 9);
    b.extend_from_slice(b"  ");
    put_sw(&mut b, &dim, 8);
    b.push(b' ');
    put_sw(&mut b, "calls", 8);
    b.push(b' ');
    put_sw(&mut b, &unit, 8);
    b.push(b' ');
    put_sw(&mut b, &unit, 8);
    b.extend_from_slice(b"  ");
    put_s(&mut b, b"name", 8, Some(8), true);
    b.push(b'\n');
    let names = Names::new(a, *opts);
    // Without flat-profile specs every symbol is selected, and none need be read (a cache
    // miss each, in time order).
    let every_symbol = a.specs.is_empty(TableId::InclFlat) && a.specs.is_empty(TableId::ExclFlat);
    let mut accum = 0.0;
    for &s in &sorted {
        // Both tests only filter; the node's comes first since most idle symbols fail it and
        // their symbol need not be read.
        let node = &a.graph.nodes[s];
        if opts.ignore_zeros && node.ncalls == 0 && node.time == 0.0 {
            continue;
        }
        if !every_symbol
            && !a.specs.selected(
                TableId::InclFlat,
                TableId::ExclFlat,
                a.symtab.symbols[s].addr,
            )
        {
            continue;
        }
        accum += node.time;
        let pct = if total_time > 0.0 {
            100.0 * node.time / total_time
        } else {
            0.0
        };
        if opts.bsd {
            put_f(&mut b, pct, 5, 1);
            b.push(b' ');
            put_f(&mut b, accum / hz, 10, 2);
        } else {
            put_f(&mut b, pct, 6, 2);
            b.push(b' ');
            put_f(&mut b, accum / hz, 9, 2);
        }
        b.push(b' ');
        put_f(&mut b, node.time / hz, 8, 2);
        if node.ncalls != 0 {
            let nc = node.ncalls as f64;
            b.push(b' ');
            put_u(&mut b, node.ncalls, 8, false);
            b.push(b' ');
            put_f(&mut b, scale * node.time / hz / nc, 8, 2);
            b.push(b' ');
            put_f(
                &mut b,
                scale * (node.time + node.child_time) / hz / nc,
                8,
                2,
            );
            b.extend_from_slice(b"  ");
        } else {
            b.extend_from_slice(b"                            ");
            b.extend_from_slice(b" ");
        }
        if opts.bsd {
            names.name(&mut b, s);
        } else {
            names.name_only(&mut b, s);
        }
        b.push(b'\n');
        if b.len() > 60 * 1024 {
            out.write_all(&b)?;
            b.clear();
        }
    }
    if !opts.brief && !opts.bsd {
        b.extend_from_slice(blurbs::FLAT.as_bytes());
    }
    out.write_all(&b)
}
