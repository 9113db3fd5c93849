//! How gprof prints a symbol's name: `print_name_only` (demangled unless `-T`, plus
//! ` (file:line)` in line mode or with `--inline-file-names`) and `print_name` (plus
//! ` <cycle N>` and ` [index]` / ` (index)`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::fmt::put_u;
use crate::gprof::analysis::Analysis;
use crate::gprof::analysis::names_shown::Shown;
use gmon_demangle::{Style, demangle};

/// Printing switches shared by every report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrintOptions {
    /// `-b`: no explanations.
    pub brief: bool,
    /// `-T`: BSD layout (no demangling, `ms/call`, graph before flat).
    pub bsd: bool,
    /// Not `-z`: hide functions with no calls and no time.
    pub ignore_zeros: bool,
    /// Demangling style, `None` with `--no-demangle`.
    pub demangle: Option<Style>,
    /// `-l`: line granularity.
    pub line_granularity: bool,
    /// `--inline-file-names`.
    pub inline_file_names: bool,
    /// `-L`: full paths.
    pub print_path: bool,
    /// `-w`: index width.
    pub width: i32,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            brief: false,
            bsd: false,
            ignore_zeros: true,
            demangle: Some(Style::Auto),
            line_granularity: false,
            inline_file_names: false,
            print_path: false,
            width: 80,
        }
    }
}

/// Whether `demangle(name, style)` can return a name at all: every style but GNAT demangles
/// only names that start with `_` once bfd's leading `.`/`$` are skipped (`_Z`, `_R`,
/// `_GLOBAL_`). C programs print hundreds of thousands of names that cannot be mangled;
/// this keeps them away from the cache's lock and hash.
fn may_demangle(name: &str, style: Style) -> bool {
    // Bytes, not chars: '.' and '$' are ASCII, and decoding UTF-8 for every symbol was most
    // of `Names::new` on a 20,000-function program.
    style == Style::Gnat || name.as_bytes().iter().find(|&&b| b != b'.' && b != b'$') == Some(&b'_')
}

/// A [`Shown`] slot for `len` bytes at `start`, `None` past 4 GiB.
fn store(start: usize, len: usize) -> Option<u64> {
    let (s, l) = (u32::try_from(start).ok()?, u32::try_from(len + 1).ok()?);
    Some(u64::from(s) << 32 | u64::from(l))
}

/// Name printer over one analysis.
#[derive(Debug)]
pub struct Names<'a> {
    a: &'a Analysis,
    opts: PrintOptions,
    shown: RefCell<Shown>,
}

impl<'a> Names<'a> {
    /// A printer for `a` with `opts`.
    pub fn new(a: &'a Analysis, opts: PrintOptions) -> Names<'a> {
        let names = Names {
            a,
            opts,
            shown: RefCell::new(Shown {
                at: vec![0; a.symtab.len()],
                bytes: Vec::new(),
            }),
        };
        names.copy_plain_names();
        names
    }

    /// A printer with the names this one has rendered so far, for another thread.
    pub fn fork(&self) -> Names<'a> {
        Names {
            a: self.a,
            opts: self.opts,
            shown: RefCell::new(self.shown.borrow().clone()),
        }
    }

    /// Copies every name printed as it is (no demangling, no `(file:line)`) into the arena in
    /// one pass in address order. Rendering on first print reached the symbols and their names
    /// in the reports' order, a cache miss or three per name (the top cost of printing a dense
    /// call graph); copying them in table order reads both nearly sequentially.
    fn copy_plain_names(&self) {
        if self.opts.line_granularity || self.opts.inline_file_names {
            return; // line symbols: far more than are printed, and each needs formatting
        }
        let style = match (self.opts.bsd, self.opts.demangle) {
            (false, Some(style)) => Some(style),
            _ => None,
        };
        // A poisoned lock only means another printer panicked; the copy is still whole.
        let mut plain = self
            .a
            .demangled
            .plain
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut shown = self.shown.borrow_mut();
        if let Some((s, copied)) = &*plain
            && *s == style
            && copied.at.len() == shown.at.len()
        {
            shown.clone_from(copied);
            return;
        }
        let Shown { at, bytes } = &mut *shown;
        for (slot, sym) in at.iter_mut().zip(&self.a.symtab.symbols) {
            if style.is_some_and(|st| may_demangle(&sym.name, st)) {
                continue;
            }
            let Some(s) = store(bytes.len(), sym.name.len()) else {
                return; // past 4 GiB of names: the rest are rendered when printed
            };
            bytes.extend_from_slice(sym.name.as_bytes());
            *slot = s;
        }
        *plain = Some((style, shown.clone()));
    }

    /// The file name as printed: basename unless `-L`.
    pub fn file_name(&self, file: usize) -> Option<&'a str> {
        let f = self.a.symtab.files.get(file)?;
        Some(if self.opts.print_path {
            f.name.as_str()
        } else {
            f.basename()
        })
    }

    /// `print_name_only`: appends the name and returns the number of bytes written. Cycle
    /// headers (nodes past the symbols) have no name and print nothing.
    pub fn name_only(&self, buf: &mut Vec<u8>, node: usize) -> usize {
        let mut shown = self.shown.borrow_mut();
        let Shown { at, bytes } = &mut *shown;
        let Some(slot) = at.get_mut(node) else {
            return 0;
        };
        if *slot == 0 {
            let start = bytes.len();
            let len = self.render(bytes, node);
            match store(start, len) {
                Some(s) => *slot = s,
                // Past 4 GiB of names: print without keeping.
                None => {
                    buf.extend_from_slice(&bytes[start..]);
                    bytes.truncate(start);
                    return len;
                }
            }
        }
        let (start, len) = ((*slot >> 32) as usize, (*slot as u32 - 1) as usize);
        buf.extend_from_slice(&bytes[start..start + len]);
        len
    }

    /// Appends what `print_name_only` prints for `node` and returns its length.
    fn render(&self, buf: &mut Vec<u8>, node: usize) -> usize {
        let Some(sym) = self.a.symtab.symbols.get(node) else {
            return 0;
        };
        let start = buf.len();
        let shown: Option<Arc<str>> = match (self.opts.bsd, self.opts.demangle) {
            (false, Some(style)) => self.demangled(&sym.name, style),
            _ => None,
        };
        buf.extend_from_slice(shown.as_deref().unwrap_or(&sym.name).as_bytes());
        if (self.opts.line_granularity || self.opts.inline_file_names)
            && let Some(fname) = sym.file.and_then(|f| self.file_name(f))
        {
            let s = if self.opts.line_granularity {
                format!(" ({}:{} @ {:x})", fname, sym.line, sym.addr)
            } else {
                format!(" ({}:{})", fname, sym.line)
            };
            buf.extend_from_slice(s.as_bytes());
        }
        buf.len() - start
    }

    /// `name` demangled in `style`, through the analysis' cache.
    fn demangled(&self, name: &Arc<str>, style: Style) -> Option<Arc<str>> {
        if !may_demangle(name, style) {
            return None;
        }
        let key = (name.as_ptr() as usize, name.len());
        // A poisoned lock only means another printer panicked; the map is still usable.
        let mut cache = self
            .a
            .demangled
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (cached_style, map) = cache.get_or_insert_with(|| (style, HashMap::default()));
        if *cached_style != style {
            return demangle(name, style).map(Arc::from);
        }
        map.entry(key)
            .or_insert_with(|| demangle(name, style).map(Arc::from))
            .clone()
    }

    /// `print_name`: the name, ` <cycle N>` for cycle members, and the graph index.
    pub fn name(&self, buf: &mut Vec<u8>, node: usize) {
        self.name_only(buf, node);
        let Some(n) = self.a.graph.nodes.get(node) else {
            return;
        };
        if n.cyc_num != 0 {
            buf.extend_from_slice(b" <cycle ");
            put_u(buf, u64::from(n.cyc_num), 0, false);
            buf.push(b'>');
        }
        if n.index != 0 {
            let (open, close) = if n.print_flag {
                (b" [", b']')
            } else {
                (b" (", b')')
            };
            buf.extend_from_slice(open);
            put_u(buf, u64::from(n.index), 0, false);
            buf.push(close);
        }
    }
}
