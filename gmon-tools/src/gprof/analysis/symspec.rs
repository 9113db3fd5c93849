//! Symbol specifications (`sym_ids.c`): the `-p/-P/-q/-Q/-e/-E/-f/-F/-n/-N/-k/-A/-J/-C/-Z`
//! arguments, resolved into address-range tables that the analysis consults.
//!
//! A spec is `[FILE:](FUNC|LINE)`, split at the last `:`. Without a colon it is a file when it
//! contains a `.`, a line number when it starts with a digit, a function otherwise. Files compare
//! by basename, functions by raw (mangled) name. `a/b` specs describe arcs. Runs of consecutive
//! matching symbols become one range; a table whose spec matched nothing stays empty, and an
//! empty INCL table means "no filter" (spec/gprof.md §10.3).

use super::symtab::{Symbol, SymbolTable, cmp_addr, prefer};

/// gprof's symbol tables, in its own enumeration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(usize)]
pub enum TableId {
    /// `-q spec`, `-f`, `-F`: only these (and what they call) in the call graph.
    InclGraph = 0,
    /// `-Q spec`, `-e`, `-E`: hide these entries in the call graph.
    ExclGraph,
    /// `-q a/b`: keep only these arcs.
    InclArcs,
    /// `-Q a/b`, `-k a/b`: drop these arcs.
    ExclArcs,
    /// `-p spec`: only these in the flat profile (and only they get histogram credit).
    InclFlat,
    /// `-P spec`: not these in the flat profile (nor credited).
    ExclFlat,
    /// `-n spec`, `-F`: only these propagate time.
    InclTime,
    /// `-N spec`, `-E`: these propagate no time.
    ExclTime,
    /// `-A spec`: annotate only these.
    InclAnno,
    /// `-J spec`: do not annotate these.
    ExclAnno,
    /// `-C spec`: exec counts only for these.
    InclExec,
    /// `-Z spec`: no exec counts for these.
    ExclExec,
}

/// Number of [`TableId`]s.
pub const NUM_TABLES: usize = 12;

/// A parsed half of a spec (gprof fills a `Sym` as the pattern).
#[derive(Clone, Debug, Default, PartialEq)]
struct Pattern {
    /// `Some(None)`: a file was named but is unknown (`<non-existent-file>`, matches nothing).
    file: Option<Option<usize>>,
    line: u32,
    name: Option<String>,
}

impl Pattern {
    fn parse(spec: &str, symtab: &SymbolTable) -> Pattern {
        let mut p = Pattern::default();
        let lookup_file = |f: &str| -> Option<usize> {
            // gprof's file list is prepended to, so the most recently created file wins.
            symtab
                .files
                .iter()
                .enumerate()
                .rev()
                .find(|(_, sf)| sf.basename() == f)
                .map(|(i, _)| i)
        };
        let atoi = |s: &str| -> u32 {
            let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse::<u64>().map(|v| v as u32).unwrap_or(0)
        };
        if let Some(colon) = spec.rfind(':') {
            let (file, rest) = (&spec[..colon], &spec[colon + 1..]);
            if !file.is_empty() {
                p.file = Some(lookup_file(file));
            }
            if !rest.is_empty() {
                if rest.as_bytes()[0].is_ascii_digit() {
                    p.line = atoi(rest);
                } else {
                    p.name = Some(rest.to_string());
                }
            }
        } else if !spec.is_empty() {
            if spec.contains('.') {
                p.file = Some(lookup_file(spec));
            } else if spec.as_bytes()[0].is_ascii_digit() {
                p.line = atoi(spec);
            } else {
                p.name = Some(spec.to_string());
            }
        }
        p
    }

    fn matches(&self, sym: &Symbol) -> bool {
        if let Some(f) = self.file {
            match f {
                None => return false,
                Some(f) => {
                    if sym.file != Some(f) {
                        return false;
                    }
                }
            }
        }
        if self.line != 0 && self.line != sym.line {
            return false;
        }
        if let Some(n) = &self.name
            && n.as_str() != &*sym.name
        {
            return false;
        }
        true
    }
}

/// One range of a spec table, with the right-hand ranges of `a/b` specs (its "arcs").
#[derive(Clone, Debug, PartialEq)]
pub struct SpecEntry {
    /// The first matching symbol's fields (used for the finalisation rules).
    pub sym: Symbol,
    /// Right-hand ranges `(addr, end_addr)`, most recently added first.
    pub arcs: Vec<(u64, u64)>,
}

/// All spec tables, ready for lookups.
#[derive(Clone, Debug, Default)]
pub struct SpecTables {
    tables: Vec<Vec<SpecEntry>>,
    /// Number of `a/b` arcs gprof creates between spec copies (they take slots in its global
    /// arc array, which `-r` walks).
    pub spec_arc_count: usize,
}

/// A user spec in command-line order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymSpec {
    /// The spec text.
    pub spec: String,
    /// The table it goes into.
    pub table: TableId,
}

struct MatchState {
    prev: Option<usize>,
    entry: usize,
    chain: Vec<usize>,
}

impl SpecTables {
    /// Resolves `specs` (command-line order) against `symtab` like `sym_id_parse`.
    pub fn build(specs: &[SymSpec], symtab: &SymbolTable) -> SpecTables {
        let mut tables: Vec<Vec<SpecEntry>> = vec![Vec::new(); NUM_TABLES];
        let mut right_ids: Vec<SpecEntry> = Vec::new();
        // gprof prepends each spec to its list, so the list runs in reverse command-line order.
        struct Id {
            table: TableId,
            left: Pattern,
            right: Option<Pattern>,
            lm: MatchState,
            rm: MatchState,
        }
        let mut ids: Vec<Id> = specs
            .iter()
            .rev()
            .map(|s| {
                let (l, r) = match s.spec.find('/') {
                    Some(i) => (&s.spec[..i], Some(&s.spec[i + 1..])),
                    None => (s.spec.as_str(), None),
                };
                Id {
                    table: s.table,
                    left: Pattern::parse(l, symtab),
                    right: r.map(|r| Pattern::parse(r, symtab)),
                    lm: MatchState {
                        prev: None,
                        entry: 0,
                        chain: Vec::new(),
                    },
                    rm: MatchState {
                        prev: None,
                        entry: 0,
                        chain: Vec::new(),
                    },
                }
            })
            .collect();
        fn extend(m: &mut MatchState, i: usize, sym: &Symbol, tab: &mut Vec<SpecEntry>) {
            if m.prev.is_none() || m.prev != i.checked_sub(1) {
                tab.push(SpecEntry {
                    sym: sym.clone(),
                    arcs: Vec::new(),
                });
                m.entry = tab.len() - 1;
                m.chain.push(m.entry);
            }
            if let Some(e) = tab.get_mut(m.entry) {
                e.sym.end_addr = sym.end_addr;
            }
            m.prev = Some(i);
        }
        // When every pattern names a symbol (the usual case: gprof's default exclusions), a
        // symbol whose name length no pattern has matches none of them.
        let mut lengths: Option<Vec<bool>> = Some(Vec::new());
        for p in ids
            .iter()
            .flat_map(|id| std::iter::once(&id.left).chain(id.right.as_ref()))
        {
            match (&mut lengths, &p.name) {
                (Some(l), Some(name)) => {
                    if l.len() <= name.len() {
                        l.resize(name.len() + 1, false);
                    }
                    if let Some(slot) = l.get_mut(name.len()) {
                        *slot = true;
                    }
                }
                _ => lengths = None,
            }
        }
        for (i, sym) in symtab.symbols.iter().enumerate() {
            if let Some(l) = &lengths
                && !l.get(sym.name.len()).copied().unwrap_or(false)
            {
                continue;
            }
            for id in ids.iter_mut() {
                if id.left.matches(sym) {
                    extend(&mut id.lm, i, sym, &mut tables[id.table as usize]);
                }
                if let Some(r) = &id.right
                    && r.matches(sym)
                {
                    extend(&mut id.rm, i, sym, &mut right_ids);
                }
            }
        }
        let mut spec_arc_count = 0;
        for id in &ids {
            if id.right.is_none() {
                continue;
            }
            // gprof walks both match chains from the most recent match.
            for &l in id.lm.chain.iter().rev() {
                for &r in id.rm.chain.iter().rev() {
                    let Some(re) = right_ids.get(r) else { continue };
                    let range = (re.sym.addr, re.sym.end_addr);
                    if let Some(le) = tables[id.table as usize].get_mut(l)
                        && !le.arcs.contains(&range)
                    {
                        le.arcs.insert(0, range);
                        spec_arc_count += 1;
                    }
                }
            }
        }
        for t in tables.iter_mut() {
            finalize(t);
        }
        SpecTables {
            tables,
            spec_arc_count,
        }
    }

    fn table(&self, t: TableId) -> &[SpecEntry] {
        self.tables.get(t as usize).map_or(&[], |v| v.as_slice())
    }

    /// Whether table `t` has no entries.
    pub fn is_empty(&self, t: TableId) -> bool {
        self.table(t).is_empty()
    }

    /// `sym_lookup(&syms[t], addr) != NULL`.
    pub fn contains(&self, t: TableId, addr: u64) -> bool {
        let tab = self.table(t);
        let i = tab.partition_point(|e| e.sym.addr <= addr);
        i.checked_sub(1)
            .and_then(|i| tab.get(i))
            .is_some_and(|e| addr <= e.sym.end_addr)
    }

    /// The usual include/exclude rule: in the INCL table, or the INCL table is empty and the
    /// address is not in the EXCL table.
    pub fn selected(&self, incl: TableId, excl: TableId, addr: u64) -> bool {
        self.contains(incl, addr) || (self.is_empty(incl) && !self.contains(excl, addr))
    }

    /// `sym_id_arc_is_present`: some entry covers the parent and has an arc to a range that
    /// contains the child.
    pub fn arc_present(&self, t: TableId, parent: &Symbol, child: &Symbol) -> bool {
        self.table(t).iter().any(|e| {
            parent.addr >= e.sym.addr
                && parent.addr <= e.sym.end_addr
                && e.arcs
                    .iter()
                    .any(|&(a, end)| child.addr >= a && child.end_addr <= end)
        })
    }

    /// Whether an arc from `parent` to `child` is kept (INCL_ARCS / EXCL_ARCS).
    pub fn arc_selected(&self, parent: &Symbol, child: &Symbol) -> bool {
        self.arc_present(TableId::InclArcs, parent, child)
            || (self.is_empty(TableId::InclArcs)
                && !self.arc_present(TableId::ExclArcs, parent, child))
    }
}

/// `symtab_finalize` on a spec table: sort by address, one entry per address (gprof's
/// preference rule), and entries keep their own `end_addr`.
fn finalize(tab: &mut Vec<SpecEntry>) {
    if tab.is_empty() {
        return;
    }
    let mut order: Vec<usize> = (0..tab.len()).collect();
    // A key order: the standard stable sort gives msort's result.
    order.sort_by(|&a, &b| cmp_addr(&tab[a].sym, &tab[b].sym));
    let sorted: Vec<SpecEntry> = order.iter().filter_map(|&i| tab.get(i).cloned()).collect();
    let mut out: Vec<SpecEntry> = Vec::with_capacity(sorted.len());
    let mut prev_addr: Option<u64> = None;
    for src in sorted {
        if prev_addr == Some(src.sym.addr) {
            if let Some(last) = out.last_mut()
                && prefer(&src.sym, &last.sym)
            {
                *last = src;
            }
        } else if src.sym.end_addr == 0 || src.sym.addr <= src.sym.end_addr {
            prev_addr = Some(src.sym.addr);
            out.push(src);
        }
    }
    *tab = out;
}
