//! Annotated source (`-A`, with `-J`, `-x`, `-y`, `-I`, `-m`, `-t`), as gprof's
//! `print_annotated_source` writes it (spec/gprof.md §13).
//!
//! Every symbol with a source position (function symbols, and line symbols with `-l`) that the
//! `-A`/`-J` specs select puts its call count on its line; several symbols on one line are
//! summed. Each source file with such lines (and, without `-z`, a non-zero total) is printed with
//! a 16-column annotation before every line, then the "Top N Lines" table and an execution
//! summary. Files are visited in gprof's list order (most recently created first) and searched
//! for along the `-I` / `GPROF_PATH` list like gprof does.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::gprof::Analysis;
use crate::gprof::analysis::blocks::{BasicBlocks, NBBS};
use crate::gprof::analysis::symspec::TableId;

/// What the annotated-source report needs from the command line.
#[derive(Clone, Debug)]
pub struct AnnotateOptions {
    /// `-z` not given: files with no calls at all are skipped.
    pub ignore_zeros: bool,
    /// `-m N`: counts below this print as `#####`.
    pub min_count: u64,
    /// `-t N`: rows of the "Top N Lines" table (0 = no table).
    pub table_length: i32,
    /// `-x`: repeat the count on every line of a block.
    pub all_lines: bool,
    /// `-y`: write `<basename>-ann` files in the current directory instead of stdout.
    pub separate_files: bool,
    /// Source search path: `-I` entries, then `GPROF_PATH`, each split at `:`; bytes, since
    /// directory names need not be UTF-8.
    pub search_path: Vec<OsString>,
    /// `argv[0]` for messages.
    pub whoami: String,
}

impl AnnotateOptions {
    /// Splits `-I` arguments and `GPROF_PATH` at `:` as gprof's `search_list_append` does.
    pub fn search_path_from<D: AsRef<OsStr>, P: AsRef<OsStr>>(
        dirs: &[D],
        gprof_path: Option<P>,
    ) -> Vec<OsString> {
        let gprof_path = gprof_path.as_ref().map(|p| p.as_ref());
        dirs.iter()
            .map(|d| d.as_ref())
            .chain(gprof_path)
            .flat_map(|d| d.as_bytes().split(|&b| b == b':'))
            .map(|d| OsStr::from_bytes(d).to_os_string())
            .collect()
    }
}

/// One annotated line: the first symbol on it, or the sum of several (`merged`).
#[derive(Clone, Copy, Debug)]
struct Slot {
    line: u32,
    ncalls: u64,
    is_func: bool,
    /// The first symbol's address; gprof replaces the symbol by a copy with address 0 once a
    /// second one arrives on the same line.
    addr: u64,
    /// The first symbol's basic blocks (address, count); `nbb` of them are used.
    bb: [(u64, u64); NBBS],
    nbb: usize,
}

/// The state gprof keeps in statics across files.
#[derive(Debug, Default)]
struct Counters {
    last_count: u64,
    executable: u64,
    executed: u64,
}

/// Writes the annotated source. Messages (`could not locate`) go to `err`.
pub fn print_annotated_source(
    out: &mut dyn Write,
    err: &mut dyn Write,
    a: &Analysis,
    opts: &AnnotateOptions,
    blocks: &BasicBlocks,
    first_output: &mut bool,
) -> io::Result<()> {
    let nfiles = a.symtab.files.len();
    let selected = |i: usize| -> bool {
        a.symtab.symbols.get(i).is_some_and(|s| {
            a.specs
                .selected(TableId::InclAnno, TableId::ExclAnno, s.addr)
        })
    };
    let mut num_lines = vec![0u32; nfiles];
    for (i, s) in a.symtab.symbols.iter().enumerate() {
        if let Some(f) = s.file
            && let Some(n) = num_lines.get_mut(f)
            && s.line > *n
            && selected(i)
        {
            *n = s.line;
        }
    }
    // Sparse per-file line slots (gprof allocates `num_lines` of them; a corrupt line number
    // must not make us allocate gigabytes).
    let mut slots: Vec<std::collections::BTreeMap<u32, Slot>> =
        vec![std::collections::BTreeMap::new(); nfiles];
    let mut file_calls = vec![0u64; nfiles];
    for (i, s) in a.symtab.symbols.iter().enumerate() {
        let Some(f) = s.file else { continue };
        if num_lines.get(f).is_none_or(|&n| n == 0) || !selected(i) {
            continue;
        }
        let ncalls = a.graph.nodes.get(i).map_or(0, |n| n.ncalls);
        if let Some(t) = file_calls.get_mut(f) {
            *t = t.wrapping_add(ncalls);
        }
        let Some(file_map) = slots.get_mut(f) else {
            continue;
        };
        match file_map.get_mut(&s.line) {
            None => {
                let mut bb = [(0u64, 0u64); NBBS];
                let own = blocks.of(i);
                for (d, &b) in bb.iter_mut().zip(own) {
                    *d = b;
                }
                file_map.insert(
                    s.line,
                    Slot {
                        line: s.line,
                        ncalls,
                        is_func: s.is_func,
                        addr: s.addr,
                        bb,
                        nbb: own.len().min(NBBS),
                    },
                );
            }
            Some(l) => {
                l.ncalls = l.ncalls.wrapping_add(ncalls);
                l.addr = 0;
            }
        }
    }
    let mut counters = Counters::default();
    let mut first_file = true;
    // gprof's list has the most recently created file first.
    for f in (0..nfiles).rev() {
        let total = file_calls.get(f).copied().unwrap_or(0);
        if num_lines.get(f).is_none_or(|&n| n == 0) || (opts.ignore_zeros && total == 0) {
            continue;
        }
        let Some(file) = a.symtab.files.get(f) else {
            continue;
        };
        let name = file.name.as_str();
        let Some(source) = open_source(name, &opts.search_path) else {
            err.write_all(format!("{}: could not locate `{name}'\n", opts.whoami).as_bytes())?;
            continue;
        };
        let source = match source {
            Ok(bytes) => bytes,
            Err(e) => {
                err.write_all(
                    crate::gprof::GprofError::perror(name, &e)
                        .message
                        .as_bytes(),
                )?;
                continue;
            }
        };
        let mut b: Vec<u8> = Vec::with_capacity(source.len() * 2);
        if !opts.separate_files {
            if first_file {
                first_file = false;
            } else {
                b.push(b'\n');
            }
            if *first_output {
                *first_output = false;
            } else {
                b.extend_from_slice(b"\x0c\n");
            }
            b.extend_from_slice(format!("*** File {name}:\n").as_bytes());
        }
        counters.executable = 0;
        counters.executed = 0;
        let empty = std::collections::BTreeMap::new();
        let file_slots = slots.get(f).unwrap_or(&empty);
        let mut line_num: usize = 1;
        let mut new_line = true;
        for &byte in &source {
            if new_line {
                let slot = u32::try_from(line_num)
                    .ok()
                    .and_then(|l| file_slots.get(&l))
                    .copied();
                annotation(&mut b, slot, opts, &mut counters);
                line_num += 1;
            }
            new_line = byte == b'\n';
            b.push(byte);
        }
        if opts.table_length > 0 {
            b.extend_from_slice(
                format!(
                    "\n\nTop {} Lines:\n\n     Line      Count\n\n",
                    opts.table_length
                )
                .as_bytes(),
            );
            // cmp_ncalls: empty slots last (they end the table), then calls descending, then
            // line ascending; at most min(-t, number of line slots) rows.
            let mut top: Vec<Slot> = file_slots.values().copied().collect();
            top.sort_by(|l, r| r.ncalls.cmp(&l.ncalls).then(l.line.cmp(&r.line)));
            let nslots = num_lines.get(f).copied().unwrap_or(0) as usize;
            let n = usize::try_from(opts.table_length).unwrap_or(0).min(nslots);
            for s in top.iter().take(n) {
                if s.ncalls == 0 {
                    break;
                }
                b.extend_from_slice(format!("{:9} {:10}\n", s.line, s.ncalls).as_bytes());
            }
        }
        let exec = counters.executable;
        let done = counters.executed;
        let percent = if exec != 0 {
            100.0 * done as f64 / exec as f64
        } else {
            100.0
        };
        let average = if exec != 0 {
            total as f64 / exec as f64
        } else {
            0.0
        };
        b.extend_from_slice(b"\nExecution Summary:\n\n");
        b.extend_from_slice(format!("{exec:9}   Executable lines in this file\n").as_bytes());
        b.extend_from_slice(format!("{done:9}   Lines executed\n").as_bytes());
        b.extend_from_slice(format!("{percent:9.2}   Percent of the file executed\n").as_bytes());
        b.extend_from_slice(format!("\n{total:9}   Total number of line executions\n").as_bytes());
        b.extend_from_slice(format!("{average:9.2}   Average executions per line\n").as_bytes());
        if opts.separate_files {
            let base = name.rsplit('/').next().unwrap_or(name);
            let target = format!("{base}-ann");
            if let Err(e) = std::fs::write(&target, &b) {
                err.write_all(
                    crate::gprof::GprofError::perror(&target, &e)
                        .message
                        .as_bytes(),
                )?;
            }
        } else {
            out.write_all(&b)?;
        }
    }
    Ok(())
}

/// gprof's `annotate_source` search: the name itself, then every search directory with the
/// name, then (for a name with a `/`) every directory with the base name. Absolute names are
/// only tried as they are. `None` when nothing exists (gprof's "could not locate").
fn open_source(name: &str, search: &[OsString]) -> Option<io::Result<Vec<u8>>> {
    // `DIR/NAME` joined as bytes (not Path::join, which drops DIR when NAME is absolute).
    let join = |d: &OsString, n: &str| {
        let mut p = d.as_bytes().to_vec();
        p.push(b'/');
        p.extend_from_slice(n.as_bytes());
        OsString::from_vec(p)
    };
    let mut candidates: Vec<OsString> = vec![OsString::from(name)];
    if !name.starts_with('/') {
        candidates.extend(search.iter().map(|d| join(d, name)));
    }
    if let Some(pos) = name.rfind('/') {
        let base = name.get(pos + 1..).unwrap_or("");
        candidates.extend(search.iter().map(|d| join(d, base)));
    }
    let mut last_err = None;
    for c in &candidates {
        // The names come from the DWARF: only a regular file is read (spec/inputs.md §1).
        match gmon_binary::open::read_found(std::path::Path::new(c)) {
            Ok(bytes) => return Some(Ok(bytes)),
            Err(e) => last_err = Some(e),
        }
    }
    match last_err {
        Some(e) if e.kind() != io::ErrorKind::NotFound => Some(Err(e)),
        _ => None,
    }
}

/// `annotate_with_count`: the 16-column prefix of one source line.
fn annotation(b: &mut Vec<u8>, slot: Option<Slot>, opts: &AnnotateOptions, c: &mut Counters) {
    const WIDTH: usize = 16;
    let Some(s) = slot else {
        b.extend_from_slice(&[b' '; WIDTH]);
        return;
    };
    c.executable += 1;
    let mut text = String::new();
    let mut ncalls: Option<u64> = None;
    let mut last_print: Option<u64> = None;
    let first_bb = s.bb.first().map_or(0, |x| x.0);
    if s.is_func {
        text = s.ncalls.to_string();
        c.last_count = s.ncalls;
        last_print = Some(c.last_count);
        ncalls = Some(s.ncalls);
    } else if opts.all_lines && s.nbb > 0 && first_bb != 0 && first_bb > s.addr {
        // The line starts inside the previous block: repeat that block's count.
        text = c.last_count.to_string();
        last_print = Some(c.last_count);
        ncalls = Some(c.last_count);
    }
    for &(_, count) in s.bb.iter().take(s.nbb) {
        c.last_count = count;
        let n = ncalls.get_or_insert(0);
        *n = n.wrapping_add(count);
        if opts.all_lines && Some(count) == last_print {
            continue;
        }
        if !text.is_empty() {
            text.push(',');
        }
        text.push_str(&count.to_string());
        last_print = Some(count);
    }
    if opts.all_lines && text.is_empty() {
        text = c.last_count.to_string();
        ncalls = Some(c.last_count);
    }
    let Some(ncalls) = ncalls else {
        b.extend_from_slice(&[b' '; WIDTH]);
        return;
    };
    c.executed += 1;
    if ncalls < opts.min_count {
        text = "#####".to_string();
    }
    text.push_str(" -> ");
    if text.len() >= WIDTH {
        b.extend_from_slice(text.as_bytes().get(..WIDTH).unwrap_or(text.as_bytes()));
    } else {
        b.extend(std::iter::repeat_n(b' ', WIDTH - text.len()));
        b.extend_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(all_lines: bool, min_count: u64) -> AnnotateOptions {
        AnnotateOptions {
            ignore_zeros: true,
            min_count,
            table_length: 10,
            all_lines,
            separate_files: false,
            search_path: Vec::new(),
            whoami: "gprof".to_string(),
        }
    }

    fn slot(ncalls: u64, is_func: bool, addr: u64, blocks: &[(u64, u64)]) -> Option<Slot> {
        let mut bb = [(0, 0); NBBS];
        for (d, &b) in bb.iter_mut().zip(blocks) {
            *d = b;
        }
        Some(Slot {
            line: 1,
            ncalls,
            is_func,
            addr,
            bb,
            nbb: blocks.len(),
        })
    }

    fn text(s: Option<Slot>, o: &AnnotateOptions, c: &mut Counters) -> String {
        let mut b = Vec::new();
        annotation(&mut b, s, o, c);
        String::from_utf8_lossy(&b).into_owned()
    }

    #[test]
    fn annotations_are_right_aligned_in_16_columns() {
        let mut c = Counters::default();
        assert_eq!(text(None, &opts(false, 1), &mut c), " ".repeat(16));
        assert_eq!(
            text(slot(42, true, 0x10, &[]), &opts(false, 1), &mut c),
            format!("{:>16}", "42 -> ")
        );
        // Below -m: #####, but the line still counts as executed.
        assert_eq!(
            text(slot(2, true, 0x10, &[]), &opts(false, 3), &mut c),
            format!("{:>16}", "##### -> ")
        );
        // A line symbol without blocks is executable but not executed (blank) without -x ...
        assert_eq!(
            text(slot(0, false, 0x20, &[]), &opts(false, 1), &mut c),
            " ".repeat(16)
        );
        assert_eq!((c.executable, c.executed), (3, 2));
        // ... and repeats the last count with -x.
        assert_eq!(
            text(slot(0, false, 0x20, &[]), &opts(true, 1), &mut c),
            format!("{:>16}", "2 -> ")
        );
    }

    #[test]
    fn block_counts_are_listed_and_truncated() {
        let mut c = Counters::default();
        let long = slot(0, false, 0x20, &[(0x20, 300000005), (0x24, 299000)]);
        assert_eq!(text(long, &opts(false, 1), &mut c), "300000005,299000");
        // -x drops a block count equal to the one just printed.
        let s = slot(7, true, 0x20, &[(0x20, 7), (0x28, 9)]);
        assert_eq!(
            text(s, &opts(true, 1), &mut c),
            format!("{:>16}", "7,9 -> ")
        );
    }

    #[test]
    fn search_path_splits_at_colons() {
        let dirs = vec!["a:b".to_string(), "c".to_string()];
        assert_eq!(
            AnnotateOptions::search_path_from(&dirs, Some("d:")),
            vec!["a", "b", "c", "d", ""]
        );
        // Bytes that are not UTF-8 survive (a Latin-1 directory name).
        let dirs = vec![OsString::from_vec(b"src\xe9:x".to_vec())];
        assert_eq!(
            AnnotateOptions::search_path_from(&dirs, None::<&str>),
            vec![OsString::from_vec(b"src\xe9".to_vec()), OsString::from("x")]
        );
    }
}
