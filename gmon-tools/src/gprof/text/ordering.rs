//! Suggested link orders: `-r` / `--function-ordering` and `-R map` / `--file-ordering`
//! (spec/gprof.md §10.5, §3.6).
//!
//! `-r` groups the unused functions last, pulls out "hub" functions called from many sites,
//! then chains callers and callees along the heaviest arcs (gprof's
//! `order_and_dump_functions_by_arcs`), printing one raw symbol name per line. `-R` reads an
//! `nm --print-file-name` map, renames each object file's first function to the object's name
//! (dropping its other functions from the symbol table), and runs the same chaining over the
//! arcs between objects. Every sort is stable (glibc's `qsort` is a merge sort), and ties keep
//! the arc creation order, so the output is the same as gprof's.

use std::io::{self, Write};

use crate::gprof::analysis::symtab::{Symbol, SymbolTable};
use crate::gprof::{Analysis, GprofError};

/// One line of the `-R` map: object file and function name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapEntry {
    /// The object file (text before the first `:`).
    pub file_name: String,
    /// The function (text after the last space).
    pub function_name: String,
    /// The first entry of its file (in file order).
    pub is_first: bool,
}

/// Reads a `-R` map file the way gprof's `read_function_mappings` scans it, and sorts it by
/// function name (stable). `could not open` / `unable to parse` are gprof's messages.
/// The path is bytes (Linux file names need not be UTF-8); messages show it lossily.
pub fn read_function_map(
    path: &std::path::Path,
    whoami: &str,
) -> Result<Vec<MapEntry>, GprofError> {
    let bytes = gmon_binary::open::read_named(path).map_err(|_| {
        GprofError::new(format!(
            "{whoami}: could not open {}.\n",
            path.to_string_lossy()
        ))
    })?;
    let path = path.to_string_lossy();
    let parse_error =
        || GprofError::new(format!("{whoami}: unable to parse mapping file {path}.\n"));
    let text = String::from_utf8_lossy(&bytes);
    let mut entries: Vec<MapEntry> = Vec::new();
    let mut rest: &str = &text;
    loop {
        // The previous record's "\n" directive skipped all whitespace.
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
        if rest.is_empty() {
            break;
        }
        let end = rest.find([':', '\n']).unwrap_or(rest.len());
        let file = rest.get(..end).unwrap_or("");
        if file.is_empty() {
            return Err(parse_error());
        }
        rest = rest.get(end..).unwrap_or("");
        if file.starts_with("No symbols in ") {
            continue;
        }
        let line_end = rest.find('\n').unwrap_or(rest.len());
        let tail = rest.get(..line_end).unwrap_or("");
        if tail.is_empty() {
            return Err(parse_error());
        }
        rest = rest.get(line_end..).unwrap_or("");
        let name = tail.rsplit(' ').next().unwrap_or(tail);
        entries.push(MapEntry {
            file_name: file.to_string(),
            function_name: name.to_string(),
            is_first: false,
        });
    }
    for i in 0..entries.len() {
        let first = i == 0
            || entries.get(i - 1).map(|e| &e.file_name) != entries.get(i).map(|e| &e.file_name);
        if let Some(e) = entries.get_mut(i) {
            e.is_first = first;
        }
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    crate::gprof::analysis::sort::msort(&mut order, |&a, &b| {
        let name = |i: usize| entries.get(i).map_or("", |e| e.function_name.as_str());
        name(a).as_bytes().cmp(name(b).as_bytes())
    });
    Ok(order
        .into_iter()
        .filter_map(|i| entries.get(i).cloned())
        .collect())
}

/// glibc's `bsearch` over the name-sorted map: the probe sequence decides which of several
/// same-named entries answers.
fn bsearch<'a>(map: &'a [MapEntry], name: &str) -> Option<&'a MapEntry> {
    let (mut l, mut u) = (0usize, map.len());
    while l < u {
        let idx = (l + u) / 2;
        let e = map.get(idx)?;
        match name.as_bytes().cmp(e.function_name.as_bytes()) {
            std::cmp::Ordering::Less => u = idx,
            std::cmp::Ordering::Greater => l = idx + 1,
            std::cmp::Ordering::Equal => return Some(e),
        }
    }
    None
}

/// Applies a `-R` map to the function symbols: a function found in the map (by glibc's
/// `bsearch`, so with several same-named statics one entry answers for all) is renamed to that
/// entry's object file if the entry is its object's first, and dropped otherwise (its bytes then
/// belong to the preceding symbol).
///
/// This is gprof's intent. GNU gprof 2.40 sets `is_first` only for first entries and never
/// clears it for the others (`xmalloc`ed memory), so which non-first functions it keeps depends
/// on leftover heap contents: observed, an arbitrary subset survives. That cannot be reproduced,
/// so `-R` output matches gprof only when the map has one function per object file.
pub fn apply_function_map(table: &mut SymbolTable, map: &[MapEntry], text_end: u64) {
    if map.is_empty() {
        return;
    }
    let mut kept: Vec<Symbol> = Vec::with_capacity(table.symbols.len());
    for s in std::mem::take(&mut table.symbols) {
        match bsearch(map, &s.name) {
            Some(e) if !e.is_first => {}
            Some(e) => kept.push(Symbol {
                name: e.file_name.as_str().into(),
                end_addr: 0,
                ..s
            }),
            None => kept.push(Symbol { end_addr: 0, ..s }),
        }
    }
    let files = std::mem::take(&mut table.files);
    *table = SymbolTable::finalize(kept, text_end);
    table.files = files;
}

/// The placement state gprof keeps in its symbols and arcs.
struct Placer<'a> {
    a: &'a Analysis,
    placed: Vec<bool>,
    next: Vec<Option<usize>>,
    prev: Vec<Option<usize>>,
    arc_placed: Vec<bool>,
    out: Vec<u8>,
}

impl Placer<'_> {
    fn name(&self, s: usize) -> &str {
        self.a.symtab.symbols.get(s).map_or("", |x| &*x.name)
    }

    fn print(&mut self, s: usize) {
        let line = format!("{}\n", self.name(s));
        self.out.extend_from_slice(line.as_bytes());
    }

    fn arc(&self, i: usize) -> (usize, usize, u64) {
        self.a
            .graph
            .arcs
            .get(i)
            .map_or((0, 0, 0), |x| (x.parent, x.child, x.count))
    }

    fn is_placed(&self, s: usize) -> bool {
        self.placed.get(s).copied().unwrap_or(true)
    }

    fn set_placed(&mut self, s: usize, v: bool) {
        if let Some(p) = self.placed.get_mut(s) {
            *p = v;
        }
    }

    fn nx(&self, s: usize) -> Option<usize> {
        self.next.get(s).copied().flatten()
    }

    fn pv(&self, s: usize) -> Option<usize> {
        self.prev.get(s).copied().flatten()
    }

    fn link(&mut self, first: usize, second: usize) {
        if let Some(n) = self.next.get_mut(first) {
            *n = Some(second);
        }
        if let Some(p) = self.prev.get_mut(second) {
            *p = Some(first);
        }
    }

    /// The end of `s`'s chain and how many steps away it is, following `next` or `prev`.
    fn chain_end(&self, s: usize, forward: bool) -> (usize, usize) {
        let mut cur = s;
        let mut steps = 0;
        while let Some(n) = if forward { self.nx(cur) } else { self.pv(cur) } {
            cur = n;
            steps += 1;
            if steps > self.placed.len() {
                break;
            }
        }
        (cur, steps)
    }

    /// gprof's `order_and_dump_functions_by_arcs`.
    fn order_and_dump(&mut self, arcs: &[usize], all: bool, unplaced: &mut Vec<usize>) {
        let total: u64 = if all {
            0
        } else {
            arcs.iter()
                .fold(0u64, |t, &i| t.wrapping_add(self.arc(i).2))
        };
        let mut tmp: u64 = 0;
        for &ai in arcs {
            let (p0, c0, count) = self.arc(ai);
            tmp = tmp.wrapping_add(count);
            if self.arc_placed.get(ai).copied().unwrap_or(true) {
                continue;
            }
            let (mut parent, mut child) = (p0, c0);
            if (!all && tmp as f64 / total as f64 > 0.99)
                || self.is_placed(child)
                || self.is_placed(parent)
            {
                unplaced.push(ai);
                continue;
            }
            if self.nx(parent).is_some()
                && self.pv(parent).is_some()
                && self.nx(child).is_some()
                && self.pv(child).is_some()
            {
                unplaced.push(ai);
                continue;
            }
            if self.nx(parent).is_none() && self.pv(parent).is_none() {
                let (next, nc) = self.chain_end(child, true);
                let (prev, pc) = self.chain_end(child, false);
                child = if nc < pc { next } else { prev };
            } else if self.nx(child).is_none() && self.pv(child).is_none() {
                let (next, nc) = self.chain_end(parent, true);
                let (prev, pc) = self.chain_end(parent, false);
                parent = if pc < nc { prev } else { next };
            } else {
                unplaced.push(ai);
                continue;
            }
            let sym1 = self.chain_end(parent, self.nx(parent).is_some()).0;
            let sym2 = self.chain_end(child, self.nx(child).is_some()).0;
            if sym1 == child && sym2 == parent {
                unplaced.push(ai);
                continue;
            }
            let mut done = false;
            if self.nx(parent).is_some() {
                if self.nx(child).is_none() {
                    self.link(child, parent);
                    done = true;
                }
            } else if self.pv(parent).is_some() {
                if self.pv(child).is_none() {
                    self.link(parent, child);
                    done = true;
                }
            } else if self.pv(child).is_some() {
                self.link(child, parent);
                done = true;
            } else {
                self.link(parent, child);
                done = true;
            }
            if done && let Some(p) = self.arc_placed.get_mut(ai) {
                *p = true;
            }
        }
        for &ai in arcs {
            let (parent, child, _) = self.arc(ai);
            if self.is_placed(parent) || self.is_placed(child) {
                continue;
            }
            if self.nx(parent).is_none() && self.pv(parent).is_none() {
                continue;
            }
            let mut sym = self.chain_end(parent, false).0;
            let mut guard = 0;
            loop {
                self.set_placed(sym, true);
                self.print(sym);
                guard += 1;
                match self.nx(sym) {
                    Some(n) if guard <= self.placed.len() => sym = n,
                    _ => break,
                }
            }
        }
        if all {
            for &ai in arcs {
                let (parent, child, _) = self.arc(ai);
                if self.is_placed(parent) || self.is_placed(child) {
                    continue;
                }
                self.set_placed(parent, true);
                self.print(parent);
            }
        }
    }
}

/// The arcs of gprof's global `arcs` array: every arc except self calls, in creation order.
fn global_arcs(a: &Analysis) -> Vec<usize> {
    a.graph
        .arcs
        .iter()
        .enumerate()
        .filter(|(_, x)| x.parent != x.child)
        .map(|(i, _)| i)
        .collect()
}

fn new_placer(a: &Analysis) -> Placer<'_> {
    let n = a.symtab.symbols.len();
    Placer {
        a,
        placed: vec![false; n],
        next: vec![None; n],
        prev: vec![None; n],
        arc_placed: vec![false; a.graph.arcs.len()],
        out: Vec::new(),
    }
}

/// `-r`: gprof's `cg_print_function_ordering`.
pub fn print_function_ordering(out: &mut dyn Write, a: &Analysis) -> io::Result<()> {
    let n = a.symtab.symbols.len();
    let ncalls = |s: usize| a.graph.nodes.get(s).map_or(0, |x| x.ncalls);
    let mut p = new_placer(a);
    let mut used: Vec<usize> = Vec::new();
    let mut unused: Vec<usize> = Vec::new();
    for s in 0..n {
        if ncalls(s) == 0 {
            unused.push(s);
            p.set_placed(s, true);
        } else {
            used.push(s);
        }
    }
    let mut arcs = global_arcs(a);
    crate::gprof::analysis::sort::msort(&mut arcs, |&l, &r| p.arc(r).2.cmp(&p.arc(l).2));
    let total: u64 = arcs.iter().fold(0u64, |t, &i| t.wrapping_add(p.arc(i).2));
    let mut nuses = vec![0u64; n];
    let mut tmp: u64 = 0;
    for &ai in &arcs {
        let (_, child, count) = p.arc(ai);
        tmp = tmp.wrapping_add(count);
        if tmp as f64 / total as f64 > 0.90 {
            break;
        }
        if let Some(u) = nuses.get_mut(child) {
            *u += 1;
        }
    }
    let uses = |s: usize| nuses.get(s).copied().unwrap_or(0);
    let mut scratch_syms = used.clone();
    crate::gprof::analysis::sort::msort(&mut scratch_syms, |&l, &r| uses(r).cmp(&uses(l)));
    let mut scratch_arcs: Vec<usize> = Vec::new();
    let mut scratch_index = 0usize;
    for (k, &s) in scratch_syms.iter().enumerate().take(used.len() / 80) {
        if uses(s) == 5 {
            break;
        }
        let node = a.graph.nodes.get(s);
        let mut ai = node.map_or(crate::gprof::analysis::callgraph::NONE, |x| x.children);
        while let Some(arc) = a.graph.arcs.get(ai as usize) {
            if arc.parent != arc.child {
                scratch_arcs.push(ai as usize);
            }
            if let Some(f) = p.arc_placed.get_mut(ai as usize) {
                *f = true;
            }
            ai = arc.next_child;
        }
        let mut ai = node.map_or(crate::gprof::analysis::callgraph::NONE, |x| x.parents);
        while let Some(arc) = a.graph.arcs.get(ai as usize) {
            if arc.parent != arc.child {
                scratch_arcs.push(ai as usize);
            }
            if let Some(f) = p.arc_placed.get_mut(ai as usize) {
                *f = true;
            }
            ai = arc.next_parent;
        }
        scratch_index = k;
        p.set_placed(s, true);
    }
    let mut high_arcs: Vec<usize> = Vec::new();
    for &ai in &scratch_arcs {
        let (parent, child, _) = p.arc(ai);
        if p.is_placed(child) && p.is_placed(parent) {
            high_arcs.push(ai);
            p.set_placed(child, false);
            p.set_placed(parent, false);
        }
    }
    for &s in scratch_syms.iter().take(scratch_index) {
        if p.is_placed(s) {
            p.print(s);
        }
    }
    crate::gprof::analysis::sort::msort(&mut high_arcs, |&l, &r| p.arc(r).2.cmp(&p.arc(l).2));
    let mut unplaced: Vec<usize> = Vec::new();
    p.order_and_dump(&high_arcs, true, &mut unplaced);
    p.order_and_dump(&arcs, false, &mut unplaced);
    let rest = unplaced.clone();
    p.order_and_dump(&rest, true, &mut scratch_arcs);
    for &s in &used {
        if !p.is_placed(s) {
            p.print(s);
        }
    }
    for &s in &unused {
        p.print(s);
    }
    out.write_all(&p.out)
}

/// `-R`: gprof's `cg_print_file_ordering`. `map` is the name-sorted map from
/// [`read_function_map`].
pub fn print_file_ordering(out: &mut dyn Write, a: &Analysis, map: &[MapEntry]) -> io::Result<()> {
    let files: std::collections::HashSet<&str> = map.iter().map(|e| e.file_name.as_str()).collect();
    let mapped: Vec<bool> = a
        .symtab
        .symbols
        .iter()
        .map(|s| files.contains(&*s.name))
        .collect();
    let is_mapped = |s: usize| mapped.get(s).copied().unwrap_or(false);
    let mapped_names: std::collections::HashSet<&str> = a
        .symtab
        .symbols
        .iter()
        .enumerate()
        .filter(|&(s, _)| is_mapped(s))
        .map(|(_, sym)| &*sym.name)
        .collect();
    let mut p = new_placer(a);
    let arcs = global_arcs(a);
    for &ai in &arcs {
        let (parent, child, _) = p.arc(ai);
        if (!is_mapped(parent) || !is_mapped(child))
            && let Some(f) = p.arc_placed.get_mut(ai)
        {
            *f = true;
        }
    }
    let mut scratch: Vec<usize> = Vec::new();
    p.order_and_dump(&arcs, false, &mut scratch);
    for s in 0..a.symtab.symbols.len() {
        if is_mapped(s) && !p.is_placed(s) {
            p.print(s);
        }
    }
    let mut by_file: Vec<usize> = (0..map.len()).collect();
    crate::gprof::analysis::sort::msort(&mut by_file, |&l, &r| {
        let f = |i: usize| map.get(i).map_or("", |e| e.file_name.as_str());
        f(l).as_bytes().cmp(f(r).as_bytes())
    });
    let mut last: Option<&str> = None;
    for i in by_file {
        let Some(e) = map.get(i) else { continue };
        if last == Some(e.file_name.as_str()) {
            continue;
        }
        let found = mapped_names.contains(e.file_name.as_str());
        if !found {
            p.out
                .extend_from_slice(format!("{}\n", e.file_name).as_bytes());
        }
        last = Some(e.file_name.as_str());
    }
    out.write_all(&p.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("temp file: {e}"));
        f.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("write: {e}"));
        f
    }

    #[test]
    fn map_is_read_like_gprof_and_sorted_by_function() {
        let f = map_file(
            "b.o:0000 T zeta\nb.o:0010 t helper\nNo symbols in c.o\na.o:0000 T alpha\n\n  a.o:0020 t helper\n",
        );
        let map = read_function_map(f.path(), "gprof").unwrap_or_default();
        let got: Vec<(&str, &str, bool)> = map
            .iter()
            .map(|e| (e.function_name.as_str(), e.file_name.as_str(), e.is_first))
            .collect();
        assert_eq!(
            got,
            vec![
                ("alpha", "a.o", true),
                ("helper", "b.o", false),
                ("helper", "a.o", false),
                ("zeta", "b.o", true),
            ]
        );
        // glibc's bsearch probes the middle first: of the two `helper`s it finds index 2.
        assert_eq!(
            bsearch(&map, "helper").map(|e| e.file_name.as_str()),
            Some("a.o")
        );
        assert!(bsearch(&map, "nope").is_none());
    }

    #[test]
    fn map_errors_use_gprofs_words() {
        let err = read_function_map("/nonexistent/map".as_ref(), "gprof").err();
        assert_eq!(
            err.map(|e| e.message),
            Some("gprof: could not open /nonexistent/map.\n".to_string())
        );
        let f = map_file("a.o:0000 T alpha\n:x\n");
        let err = read_function_map(f.path(), "gprof").err();
        let path = f.path().to_string_lossy();
        assert_eq!(
            err.map(|e| e.message),
            Some(format!("gprof: unable to parse mapping file {path}.\n"))
        );
    }
}
