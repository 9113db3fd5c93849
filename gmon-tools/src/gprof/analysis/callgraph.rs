//! The call graph: arcs (`cg_tally`, `arc_add`), depth-first numbering with cycle detection
//! (`cg_dfn`), cycle headers (`cycle_link`), and the propagation of flags and time
//! (`propagate_flags`, `cycle_time`, `propagate_time`), as gprof 2.40 does them
//! (spec/gprof.md §5).
//!
//! Nodes `0..n` are the symbols (address order); nodes `n..n+cycles` are the cycle headers
//! ("cycle 1" is node `n`). Each node keeps gprof's singly linked children and parents lists:
//! a new arc is *prepended* to both, and that order drives the DFS, cycle heads and every tie.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;

use super::sort::{msort, name_ranks, ordered_f64, sort_mostly_idle};
use super::symspec::{SpecTables, TableId};
use super::symtab::{SymIdx, SymbolTable};

/// Sentinel for "no arc" / "no node" in the linked lists.
pub const NONE: u32 = u32::MAX;

/// One arc between two symbols (`struct arc`).
#[derive(Clone, Debug, PartialEq)]
pub struct CgArc {
    /// Caller symbol.
    pub parent: SymIdx,
    /// Callee symbol (always a function symbol).
    pub child: SymIdx,
    /// Number of calls (summed over records and files; 0 for `-c` static arcs).
    pub count: u64,
    /// Child's self time propagated along this arc, weighted by the parent's fraction (ticks).
    pub time: f64,
    /// Child's descendants' time propagated along this arc, weighted likewise (ticks).
    pub child_time: f64,
    /// Next arc in the parent's children list.
    pub next_child: u32,
    /// Next arc in the child's parents list.
    pub next_parent: u32,
}

/// Per-node call-graph data (`struct cg` plus `ncalls` and `hist.time`).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Calls from other functions (self-recursive calls excluded once assembled).
    pub ncalls: u64,
    /// Self-recursive calls (for a cycle header: calls between members).
    pub self_calls: u64,
    /// Self time in ticks (`hist.time`; for a cycle header the members' sum).
    pub time: f64,
    /// Unweighted time of descendants (ticks), used by the flat profile's total column.
    pub child_time: f64,
    /// Fraction of the node's time that propagates to its parents.
    pub prop_fract: f64,
    /// Self time as printed in the graph (`time × prop_fract`).
    pub prop_self: f64,
    /// Descendants' time as printed in the graph.
    pub prop_child: f64,
    /// Whether the node gets an entry in the call graph.
    pub print_flag: bool,
    /// Topological number (callees smaller); 0 = unnumbered, -1 = busy during the DFS.
    pub top_order: i64,
    /// Cycle number (1-based), 0 if not in a cycle.
    pub cyc_num: u32,
    /// Node of the cycle header once linked (the node itself when not in a cycle).
    pub cyc_head: u32,
    /// Next member in the cycle chain.
    pub cyc_next: u32,
    /// 1-based position in the call graph's sort order (`cg.index`), 0 before assembly.
    pub index: u32,
    /// First arc of the children list.
    pub children: u32,
    /// First arc of the parents list.
    pub parents: u32,
}

impl Node {
    fn new(me: u32) -> Node {
        Node {
            ncalls: 0,
            self_calls: 0,
            time: 0.0,
            child_time: 0.0,
            prop_fract: 0.0,
            prop_self: 0.0,
            prop_child: 0.0,
            print_flag: false,
            top_order: 0,
            cyc_num: 0,
            cyc_head: me,
            cyc_next: NONE,
            index: 0,
            children: NONE,
            parents: NONE,
        }
    }
}

/// The call graph of one analysis.
#[derive(Clone, Debug, Default)]
pub struct CallGraph {
    /// Symbols' nodes first, then one node per cycle header.
    pub nodes: Vec<Node>,
    /// Every arc, in creation order.
    pub arcs: Vec<CgArc>,
    /// Number of symbol nodes.
    pub nsyms: usize,
    /// Number of cycles found.
    pub ncycles: usize,
    /// All nodes (symbols and cycle headers) in the call graph's print order (`cmp_total`).
    pub time_sorted: Vec<u32>,
    /// Each symbol's name ranked in byte order (equal names, equal ranks), for sorts that end
    /// on the name.
    pub name_rank: Vec<u32>,
    /// Count of `[propagate] toporder botches` messages gprof would print on stderr.
    pub toporder_botches: usize,
    /// gprof's `print_time`: the sum of every symbol's printed self time (ticks).
    pub print_time: f64,
    /// A fatal DFS inconsistency gprof reports (`[find_cycle] ...`), if one occurred.
    pub dfn_error: Option<&'static str>,
    /// Arcs from `-c`'s MIPS scanner to gprof's `<indirect child>` (a `jalr` in the parent),
    /// which is no symbol: `(parent, number of arcs when it was made)`. Count and time are
    /// 0, so only the parent's list of children shows them.
    pub indirect: Vec<(u32, u32)>,
    dfn_counter: i64,
    /// Every arc by `(parent, child)`, once `hashed` (see [`CallGraph::arc_add`]).
    lookup: HashMap<(u32, u32), u32, FxBuildHasher>,
    /// Whether `lookup` holds the arcs; until then `last_into` finds them.
    hashed: bool,
    /// The parent whose arcs are being made ([`NONE`] before the first arc).
    run_parent: u32,
    /// Per node, the last arc made into it: `(parent, arc)`, [`NONE`]s if none.
    last_into: Vec<(u32, u32)>,
    /// The first profile's arc records in file order: `(from_pc, self_pc, arc)`, the arc
    /// being [`NONE`] when the record is dropped. Profiles of one program repeat the same
    /// records in the same order, so a later profile's record is first compared with the one
    /// at the same position: a match adds its count to `pending` (sequential memory, no look-up
    /// at all). Looking each record up in a hash table and updating its arc and callee was a
    /// cache miss or three per record: 43 % of a run over 30 profiles.
    seq: Vec<(u64, u64, u32)>,
    /// Counts matched against `seq`, by position, not yet added to their arcs and callees
    /// ([`CallGraph::flush`] adds them; wrapping sums do not depend on the order).
    pending: Vec<u64>,
    /// Position in `seq` of the next record of the current profile.
    pos: usize,
    /// Whether the first profile is being read (its records go to `seq`).
    recording: bool,
    /// Whether no other profile follows the first: then `seq` is not kept (on dense20k it
    /// was 1.5 MB written for nothing, a tenth of the run's page faults).
    only_one: bool,
    /// Records out of `seq`'s order: `(from_pc, self_pc)` → arc index or [`NONE`], filled
    /// from `seq` on the first such record.
    pc_cache: HashMap<(u64, u64), u32, FxBuildHasher>,
    /// The symbols' address ranges, for the look-ups of tallying.
    addrs: AddrIndex,
}

/// What tallying needs of the symbol table, in compact arrays: binary searches over the
/// symbols themselves, and reading them, were two or three cache misses per arc record. A
/// coarse table of buckets over the address range narrows each search to a few symbols.
#[derive(Clone, Debug, Default)]
struct AddrIndex {
    /// Each symbol's first address (ascending: the table is sorted by address).
    addr: Vec<u64>,
    /// Each symbol's last address, and the nearest function symbol at or before it
    /// ([`NONE`] if none).
    end_func: Vec<(u64, u32)>,
    /// The lowest symbol address: bucket `b` covers `base + (b << shift)` onwards.
    base: u64,
    shift: u32,
    /// For each bucket, the number of symbols that start before it (one more entry than
    /// there are buckets, the last being every symbol).
    before: Vec<u32>,
}

impl AddrIndex {
    fn new(symtab: &SymbolTable) -> AddrIndex {
        let syms = &symtab.symbols;
        let addr: Vec<u64> = syms.iter().map(|s| s.addr).collect();
        let mut func = NONE;
        let end_func = syms
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if s.is_func {
                    func = i as u32;
                }
                (s.end_addr, func)
            })
            .collect();
        let (Some(&base), Some(&last)) = (addr.first(), addr.last()) else {
            return AddrIndex::default();
        };
        // About one bucket per symbol, as a power of two of bytes each.
        let span = last.saturating_sub(base).max(1);
        let want = (addr.len() as u64).clamp(1, 1 << 24);
        let mut shift = 0u32;
        while shift < 63 && (span >> shift) >= want {
            shift += 1;
        }
        let nbuckets = (span >> shift) as usize + 1;
        let mut before = Vec::with_capacity(nbuckets + 1);
        let mut i = 0usize;
        for b in 0..nbuckets as u64 {
            let start = base.saturating_add(b << shift);
            while addr.get(i).is_some_and(|&a| a < start) {
                i += 1;
            }
            before.push(i as u32);
        }
        before.push(addr.len() as u32);
        // Sorted addresses are needed for the search; a table that is not sorted (it always
        // is) gets no buckets and plain binary searches.
        if !addr.is_sorted() {
            before.clear();
        }
        AddrIndex {
            addr,
            end_func,
            base,
            shift,
            before,
        }
    }

    fn len(&self) -> usize {
        self.addr.len()
    }

    /// `SymbolTable::lookup`: the last symbol starting at or before `a`, if `a` is not past
    /// its end.
    fn lookup(&self, a: u64) -> Option<usize> {
        // The number of symbols starting at or before `a`: those before `a`'s bucket, plus
        // those in the bucket up to `a`.
        let below = if a < self.base {
            0
        } else if self.before.is_empty() {
            self.addr.partition_point(|&x| x <= a)
        } else {
            let b = usize::try_from((a - self.base) >> self.shift).unwrap_or(usize::MAX);
            let b = b.min(self.before.len() - 2);
            let (lo, hi) = (self.before[b] as usize, self.before[b + 1] as usize);
            lo + self.addr.get(lo..hi)?.partition_point(|&x| x <= a)
        };
        let i = below.checked_sub(1)?;
        (a <= self.end_func.get(i)?.0).then_some(i)
    }

    /// The nearest function symbol at or before symbol `i`.
    fn func_at_or_before(&self, i: usize) -> Option<usize> {
        let f = self.end_func.get(i)?.1;
        (f != NONE).then_some(f as usize)
    }
}

impl CallGraph {
    /// An empty graph over `nsyms` symbols.
    pub fn new(nsyms: usize) -> CallGraph {
        // Room for the cycle headers `cycle_link` appends (a cycle has two members or more):
        // the first of them reallocated and copied the whole array, 1.9 MB and a quarter of
        // the run's page faults on dense20k. Capacity never touched costs no memory.
        let mut nodes = Vec::with_capacity(nsyms + nsyms / 2);
        nodes.extend((0..nsyms).map(|i| Node::new(i as u32)));
        CallGraph {
            nodes,
            arcs: Vec::new(),
            nsyms,
            recording: true,
            run_parent: NONE,
            ..CallGraph::default()
        }
    }

    /// Makes room for `records` more arc records (most are new arcs in a first profile):
    /// growing the tables record by record rehashed them a dozen times on a dense profile.
    pub fn reserve(&mut self, records: usize) {
        if self.recording && !self.only_one {
            self.seq.reserve(records);
        }
        if self.hashed {
            self.lookup.reserve(records);
        }
        self.arcs.reserve(records.saturating_sub(self.arcs.len()));
    }

    /// `arc_add`: adds `count` to the arc `parent → child`, creating it (prepended to both lists)
    /// when new. Returns the arc's index.
    ///
    /// Profiles list their arcs by caller address, so each parent's arcs are usually all made
    /// in one run of calls. While that holds, an existing arc `parent → child` is the last arc
    /// made into `child` (`last_into`), and no hash table is needed: hashing every arc was
    /// most of tallying a dense profile. The first parent met again after its run switches to
    /// a hash table of every arc (`hashed`).
    pub fn arc_add(&mut self, parent: SymIdx, child: SymIdx, count: u64) -> u32 {
        let key = (parent as u32, child as u32);
        if !self.hashed && key.0 != self.run_parent {
            if self.nodes[parent].children != NONE {
                self.hash_arcs();
            } else {
                self.run_parent = key.0;
            }
        }
        if self.hashed {
            if let Some(&a) = self.lookup.get(&key) {
                if let Some(arc) = self.arcs.get_mut(a as usize) {
                    arc.count = arc.count.wrapping_add(count);
                }
                return a;
            }
        } else {
            if self.last_into.len() != self.nodes.len() {
                self.last_into = vec![(NONE, NONE); self.nodes.len()];
            }
            if let Some(&(p, a)) = self.last_into.get(child)
                && p == key.0
            {
                if let Some(arc) = self.arcs.get_mut(a as usize) {
                    arc.count = arc.count.wrapping_add(count);
                }
                return a;
            }
        }
        let idx = self.arcs.len() as u32;
        let (pc, cp) = (self.nodes[parent].children, self.nodes[child].parents);
        self.arcs.push(CgArc {
            parent,
            child,
            count,
            time: 0.0,
            child_time: 0.0,
            next_child: pc,
            next_parent: cp,
        });
        self.nodes[parent].children = idx;
        self.nodes[child].parents = idx;
        if self.hashed {
            self.lookup.insert(key, idx);
        } else if let Some(slot) = self.last_into.get_mut(child) {
            *slot = (key.0, idx);
        }
        idx
    }

    /// Switches [`CallGraph::arc_add`] to the hash table of every arc.
    fn hash_arcs(&mut self) {
        self.hashed = true;
        self.last_into = Vec::new();
        self.lookup.reserve(self.arcs.capacity());
        for (i, a) in self.arcs.iter().enumerate() {
            self.lookup
                .insert((a.parent as u32, a.child as u32), i as u32);
        }
    }

    /// The arc `parent → child`, if any.
    pub fn find_arc(&self, parent: SymIdx, child: SymIdx) -> Option<u32> {
        if self.hashed {
            return self.lookup.get(&(parent as u32, child as u32)).copied();
        }
        // Without the table, the parent's list (its arcs were made in one run, next to each
        // other).
        self.children(parent as u32).find(|&a| {
            self.arcs
                .get(a as usize)
                .is_some_and(|arc| arc.child == child)
        })
    }

    /// `cg_tally`: one arc record. Both addresses must fall in a symbol; the child moves back to
    /// the nearest preceding function symbol; the INCL/EXCL_ARCS filter applies.
    pub fn tally(
        &mut self,
        symtab: &SymbolTable,
        specs: &SpecTables,
        from_pc: u64,
        self_pc: u64,
        count: u64,
    ) {
        if self.recording {
            let arc = self.resolve(symtab, specs, from_pc, self_pc, count);
            if !self.only_one {
                self.seq.push((from_pc, self_pc, arc));
            }
            return;
        }
        if let Some(&(f, s, arc)) = self.seq.get(self.pos)
            && f == from_pc
            && s == self_pc
        {
            if arc != NONE
                && let Some(p) = self.pending.get_mut(self.pos)
            {
                *p = p.wrapping_add(count);
            }
            self.pos += 1;
            return;
        }
        if self.pc_cache.is_empty() {
            self.pc_cache.reserve(self.seq.len());
            for &(f, s, arc) in &self.seq {
                self.pc_cache.insert((f, s), arc);
            }
        }
        if let Some(&a) = self.pc_cache.get(&(from_pc, self_pc)) {
            if let Some(arc) = self.arcs.get_mut(a as usize) {
                arc.count = arc.count.wrapping_add(count);
                let child = arc.child;
                self.nodes[child].ncalls = self.nodes[child].ncalls.wrapping_add(count);
            }
            return;
        }
        let arc = self.resolve(symtab, specs, from_pc, self_pc, count);
        self.pc_cache.insert((from_pc, self_pc), arc);
    }

    /// The uncached part of [`CallGraph::tally`]; returns the arc or [`NONE`].
    fn resolve(
        &mut self,
        symtab: &SymbolTable,
        specs: &SpecTables,
        from_pc: u64,
        self_pc: u64,
        count: u64,
    ) -> u32 {
        if self.addrs.len() != symtab.symbols.len() {
            self.addrs = AddrIndex::new(symtab);
        }
        let (Some(parent), Some(child)) = (self.addrs.lookup(from_pc), self.addrs.lookup(self_pc))
        else {
            return NONE;
        };
        // The child moves back to the nearest function symbol at or before it.
        let Some(child) = self.addrs.func_at_or_before(child) else {
            return NONE;
        };
        // Without arc specs every arc is selected, and the symbols need not be read.
        if !(specs.is_empty(TableId::InclArcs) && specs.is_empty(TableId::ExclArcs)) {
            let (Some(ps), Some(cs)) = (symtab.symbols.get(parent), symtab.symbols.get(child))
            else {
                return NONE;
            };
            if !specs.arc_selected(ps, cs) {
                return NONE;
            }
        }
        self.nodes[child].ncalls = self.nodes[child].ncalls.wrapping_add(count);
        self.arc_add(parent, child, count)
    }

    /// Says how many profiles will be tallied: with one, the first profile's records are not
    /// kept for matching the next ones. A profile tallied after all is still counted right,
    /// through the slower look-ups.
    pub fn expect_profiles(&mut self, count: usize) {
        self.only_one = count <= 1;
    }

    /// Records that one whole profile was tallied: the next one is matched against the first
    /// one's records from its start.
    pub fn profile_done(&mut self) {
        if self.recording {
            self.recording = false;
            self.pending = vec![0; self.seq.len()];
        }
        self.pos = 0;
    }

    /// Adds the counts matched by position (see `seq`) to their arcs and callees. Done by
    /// [`CallGraph::assemble`]; call it before reading `arcs` or `nodes` of a graph still
    /// being tallied.
    pub fn flush(&mut self) {
        for (p, &(_, _, arc)) in self.pending.iter_mut().zip(&self.seq) {
            let count = std::mem::take(p);
            if count == 0 {
                continue;
            }
            if let Some(a) = self.arcs.get_mut(arc as usize) {
                a.count = a.count.wrapping_add(count);
                if let Some(n) = self.nodes.get_mut(a.child) {
                    n.ncalls = n.ncalls.wrapping_add(count);
                }
            }
        }
    }

    /// Iterates a node's children arcs in list order.
    pub fn children(&self, node: u32) -> ArcIter<'_> {
        ArcIter {
            g: self,
            cur: self.nodes.get(node as usize).map_or(NONE, |n| n.children),
            parents: false,
        }
    }

    /// Iterates a node's parent arcs in list order.
    pub fn parents(&self, node: u32) -> ArcIter<'_> {
        ArcIter {
            g: self,
            cur: self.nodes.get(node as usize).map_or(NONE, |n| n.parents),
            parents: true,
        }
    }

    /// Iterates a cycle header's members in chain order.
    pub fn members(&self, header: u32) -> impl Iterator<Item = u32> + '_ {
        let mut cur = self.nodes.get(header as usize).map_or(NONE, |n| n.cyc_next);
        std::iter::from_fn(move || {
            if cur == NONE {
                return None;
            }
            let m = cur;
            cur = self.nodes.get(m as usize).map_or(NONE, |n| n.cyc_next);
            Some(m)
        })
    }

    /// Whether `node` is a cycle header.
    pub fn is_cycle_header(&self, node: u32) -> bool {
        node as usize >= self.nsyms
    }

    /// `cg_assemble` after all arcs were tallied: self calls, `-c` arcs (`static_arcs` is called
    /// for each symbol in address order and returns that symbol's static callees), DFS numbering,
    /// cycles, flag and time propagation, and the final sort.
    pub fn assemble(
        &mut self,
        symtab: &SymbolTable,
        specs: &SpecTables,
        time: &[f64],
        static_arcs: &mut dyn FnMut(SymIdx) -> Vec<Option<SymIdx>>,
    ) {
        let names = || name_ranks(symtab.symbols.iter().map(|s| &*s.name));
        // The names' ranks depend on the symbols alone: on a large program they are ranked on
        // a second thread while the graph is walked (each took about 1.4 ms on dense20k).
        self.name_rank = std::thread::scope(|scope| {
            let ranks =
                (symtab.len() >= crate::gprof::PARALLEL_SYMBOLS).then(|| scope.spawn(names));
            self.flush();
            let n = self.nsyms;
            for p in 0..n {
                self.nodes[p].child_time = 0.0;
                self.nodes[p].time = time.get(p).copied().unwrap_or(0.0);
                // A self arc is one of the node's children: most nodes have none to look up.
                let self_arc = if self.nodes[p].children == NONE {
                    None
                } else {
                    self.find_arc(p, p)
                };
                if let Some(a) = self_arc {
                    let c = self.arcs[a as usize].count;
                    self.nodes[p].ncalls = self.nodes[p].ncalls.wrapping_sub(c);
                    self.nodes[p].self_calls = c;
                } else {
                    self.nodes[p].self_calls = 0;
                }
                for c in static_arcs(p) {
                    match c {
                        Some(c) => {
                            self.arc_add(p, c, 0);
                        }
                        None => {
                            if self.indirect.last().is_none_or(|&(q, _)| q != p as u32) {
                                self.indirect.push((p as u32, self.arcs.len() as u32));
                            }
                        }
                    }
                }
            }
            let mut dfs = DfsScratch {
                stack: Vec::new(),
                work: Vec::new(),
                stack_pos: vec![NONE; n],
                chain_tail: (0..n as u32).collect(),
            };
            for p in 0..n {
                if self.nodes[p].top_order == 0 {
                    self.dfn(p as u32, &mut dfs);
                }
            }
            self.cycle_link();
            // msort by an integer key is the stable sort by that key (see `sort`).
            let top = self.topological_order();
            self.propagate_flags(&top, symtab, specs);
            self.cycle_time();
            for &p in &top {
                self.propagate_time(p);
            }
            match ranks {
                Some(thread) => thread
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                None => names(),
            }
        });
        let sorted = self.sort_by_total(symtab);
        for (i, &node) in sorted.iter().enumerate() {
            self.nodes[node as usize].index = (i + 1) as u32;
        }
        self.time_sorted = sorted;
    }

    /// `cg_dfn`, iteratively (deep call chains must not overflow the stack).
    fn dfn(&mut self, root: u32, dfs: &mut DfsScratch) {
        // gprof's dfn_stack is 1-based; `stack[0]` is unused.
        dfs.stack.clear();
        dfs.stack.push(NONE);
        // Work list: (node, next arc to visit) for nodes whose children are being visited.
        dfs.work.clear();
        if !self.visit(root, dfs) {
            return;
        }
        dfs.work.push((root, self.nodes[root as usize].children));
        while let Some(&mut (node, ref mut next)) = dfs.work.last_mut() {
            if *next == NONE {
                self.post_visit(node, dfs);
                dfs.work.pop();
                continue;
            }
            let arc = *next;
            *next = self.arcs[arc as usize].next_child;
            let child = self.arcs[arc as usize].child as u32;
            if self.visit(child, dfs) {
                dfs.work.push((child, self.nodes[child as usize].children));
            }
        }
    }

    /// The entry part of `cg_dfn`: returns true when `node` was pushed (its children must be
    /// visited), false when it was already numbered or closed a cycle.
    fn visit(&mut self, node: u32, dfs: &mut DfsScratch) -> bool {
        let t = self.nodes[node as usize].top_order;
        if t != 0 && t != -1 {
            return false;
        }
        if t == -1 {
            self.find_cycle(node, dfs);
            return false;
        }
        if let Some(p) = dfs.stack_pos.get_mut(node as usize) {
            *p = dfs.stack.len() as u32;
        }
        dfs.stack.push(node);
        self.nodes[node as usize].top_order = -1;
        true
    }

    fn post_visit(&mut self, node: u32, dfs: &mut DfsScratch) {
        if self.nodes[node as usize].cyc_head == node {
            let num = self.next_dfn();
            let mut m = node;
            while m != NONE {
                self.nodes[m as usize].top_order = num;
                m = self.nodes[m as usize].cyc_next;
            }
        }
        if let Some(top) = dfs.stack.pop()
            && let Some(p) = dfs.stack_pos.get_mut(top as usize)
        {
            *p = NONE;
        }
    }

    fn next_dfn(&mut self) -> i64 {
        self.dfn_counter += 1;
        self.dfn_counter
    }

    /// `find_cycle`. gprof searches the stack downwards for the child (or its cycle's head)
    /// and walks the head's cycle chain to its tail on every back arc; in a big cycle those
    /// walks were quadratic (a tenth of a dense program's run). The same positions come from
    /// `dfs`: where each node sits on the stack (a node is pushed once), and each chain's tail.
    fn find_cycle(&mut self, child: u32, dfs: &mut DfsScratch) {
        let stack = &dfs.stack;
        let depth = stack.len() - 1;
        // The topmost stack entry that is the child or, for a child already in a cycle, that
        // cycle's head: what gprof's downward search stops at.
        let on_stack = |node: u32| {
            dfs.stack_pos
                .get(node as usize)
                .copied()
                .filter(|&p| p != NONE && (p as usize) <= depth)
                .map_or(0, |p| p as usize)
        };
        let ch = self.nodes[child as usize].cyc_head;
        let mut cycle_top = on_stack(child);
        if ch != child {
            cycle_top = cycle_top.max(on_stack(ch));
        }
        if cycle_top == 0 {
            self.dfn_error = Some("[find_cycle] couldn't find head of cycle\n");
            return;
        }
        if cycle_top == depth {
            return; // a self call
        }
        let mut head = stack[cycle_top];
        // Every chain starts at the node all its members name as head, and `chain_tail` keeps
        // its last member: the end of gprof's walk from `head` along the chain.
        if self.nodes[head as usize].cyc_head != head {
            head = self.nodes[head as usize].cyc_head;
        }
        let mut tail = dfs.chain_tail.get(head as usize).copied().unwrap_or(head);
        for &c in &stack[cycle_top + 1..=depth] {
            let ch = self.nodes[c as usize].cyc_head;
            if ch == c {
                self.nodes[tail as usize].cyc_next = c;
                self.nodes[c as usize].cyc_head = head;
                tail = c;
                while self.nodes[tail as usize].cyc_next != NONE {
                    let nx = self.nodes[tail as usize].cyc_next;
                    self.nodes[nx as usize].cyc_head = head;
                    tail = nx;
                }
            } else if ch != head {
                self.dfn_error = Some("[find_cycle] glommed, but not to head\n");
            }
        }
        if let Some(t) = dfs.chain_tail.get_mut(head as usize) {
            *t = tail;
        }
    }

    /// The symbols' nodes by (`top_order`, node). The numbers are normally 1..=n, each once:
    /// then each node is put in its place. Otherwise (never seen) the pairs are sorted, the
    /// keys beside the nodes: a sort of the nodes reading the key of each through the node
    /// array was a scattered read per comparison.
    fn topological_order(&self) -> Vec<u32> {
        let n = self.nsyms;
        let mut top = vec![NONE; n];
        let placed = self.nodes.iter().take(n).enumerate().all(|(i, node)| {
            let Some(slot) = usize::try_from(node.top_order)
                .ok()
                .and_then(|t| t.checked_sub(1))
                .and_then(|t| top.get_mut(t))
            else {
                return false;
            };
            let fresh = *slot == NONE;
            *slot = i as u32;
            fresh
        });
        if placed {
            return top;
        }
        let mut keyed: Vec<(i64, u32)> = self
            .nodes
            .iter()
            .take(n)
            .enumerate()
            .map(|(i, node)| (node.top_order, i as u32))
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, i)| i).collect()
    }

    fn cycle_link(&mut self) {
        let n = self.nsyms;
        let mut num = 0u32;
        for s in 0..n {
            let node = &self.nodes[s];
            if !(node.cyc_head == s as u32 && node.cyc_next != NONE) {
                continue;
            }
            num += 1;
            let hdr = self.nodes.len() as u32;
            let mut h = Node::new(hdr);
            h.print_flag = true;
            h.cyc_num = num;
            h.cyc_next = s as u32;
            self.nodes.push(h);
            let mut m = s as u32;
            while m != NONE {
                self.nodes[m as usize].cyc_num = num;
                self.nodes[m as usize].cyc_head = hdr;
                m = self.nodes[m as usize].cyc_next;
            }
            let mut m = s as u32;
            let (mut selfc, mut calls) = (0u64, 0u64);
            while m != NONE {
                let mut a = self.nodes[m as usize].parents;
                while a != NONE {
                    let arc = &self.arcs[a as usize];
                    let p = arc.parent as u32;
                    if p != m {
                        if self.nodes[p as usize].cyc_num == num {
                            selfc = selfc.wrapping_add(arc.count);
                        } else {
                            calls = calls.wrapping_add(arc.count);
                        }
                    }
                    a = arc.next_parent;
                }
                m = self.nodes[m as usize].cyc_next;
            }
            let hn = &mut self.nodes[hdr as usize];
            hn.self_calls = selfc;
            hn.ncalls = calls;
        }
        self.ncycles = num as usize;
    }

    fn inherit_flags(&mut self, child: u32) {
        let head = self.nodes[child as usize].cyc_head;
        if head == child {
            let mut flag = false;
            let mut fract = 0.0;
            let ncalls = self.nodes[child as usize].ncalls;
            let mut a = self.nodes[child as usize].parents;
            while a != NONE {
                let arc = &self.arcs[a as usize];
                let p = arc.parent as u32;
                if p != child {
                    let pn = &self.nodes[p as usize];
                    flag |= pn.print_flag;
                    if ncalls != 0 {
                        fract += pn.prop_fract * (arc.count as f64 / ncalls as f64);
                    }
                }
                a = arc.next_parent;
            }
            let c = &mut self.nodes[child as usize];
            c.print_flag = flag;
            c.prop_fract = fract;
        } else {
            let mut flag = false;
            let mut fract = 0.0;
            let hcalls = self.nodes[head as usize].ncalls;
            let members: Vec<u32> = self.members(head).collect();
            for &m in &members {
                let mut a = self.nodes[m as usize].parents;
                while a != NONE {
                    let arc = &self.arcs[a as usize];
                    let p = arc.parent as u32;
                    if self.nodes[p as usize].cyc_head != head {
                        let pn = &self.nodes[p as usize];
                        flag |= pn.print_flag;
                        if hcalls != 0 {
                            fract += pn.prop_fract * (arc.count as f64 / hcalls as f64);
                        }
                    }
                    a = arc.next_parent;
                }
            }
            for m in std::iter::once(head).chain(members) {
                let mn = &mut self.nodes[m as usize];
                mn.print_flag = flag;
                mn.prop_fract = fract;
            }
        }
    }

    fn propagate_flags(&mut self, top: &[u32], symtab: &SymbolTable, specs: &SpecTables) {
        let mut old_head = NONE;
        self.print_time = 0.0;
        for &child in top.iter().rev() {
            let head = self.nodes[child as usize].cyc_head;
            if head != old_head {
                old_head = head;
                self.inherit_flags(child);
            }
            let addr = symtab.symbols.get(child as usize).map_or(0, |s| s.addr);
            let node = &mut self.nodes[child as usize];
            if !node.print_flag {
                if specs.selected(TableId::InclGraph, TableId::ExclGraph, addr) {
                    node.print_flag = true;
                }
            } else if !specs.contains(TableId::InclGraph, addr)
                && specs.contains(TableId::ExclGraph, addr)
            {
                node.print_flag = false;
            }
            if node.prop_fract == 0.0 {
                if specs.selected(TableId::InclTime, TableId::ExclTime, addr) {
                    node.prop_fract = 1.0;
                }
            } else if !specs.contains(TableId::InclTime, addr)
                && specs.contains(TableId::ExclTime, addr)
            {
                node.prop_fract = 0.0;
            }
            node.prop_self = node.time * node.prop_fract;
            self.print_time += node.prop_self;
        }
    }

    fn cycle_time(&mut self) {
        for c in 0..self.ncycles {
            let hdr = (self.nsyms + c) as u32;
            let mut t = self.nodes[hdr as usize].time;
            let members: Vec<u32> = self.members(hdr).collect();
            for m in members {
                let mn = &self.nodes[m as usize];
                if mn.prop_fract == 0.0 {
                    continue;
                }
                t += mn.time;
            }
            let h = &mut self.nodes[hdr as usize];
            h.time = t;
            h.prop_self = h.prop_fract * t;
        }
    }

    fn propagate_time(&mut self, parent: u32) {
        let pfract = self.nodes[parent as usize].prop_fract;
        if pfract == 0.0 {
            return;
        }
        let mut a = self.nodes[parent as usize].children;
        while a != NONE {
            let (next, count, mut child) = {
                let arc = &self.arcs[a as usize];
                (arc.next_child, arc.count, arc.child as u32)
            };
            let cur = a;
            a = next;
            if count == 0 || child == parent || self.nodes[child as usize].prop_fract == 0.0 {
                continue;
            }
            let (ptop, pnum) = (
                self.nodes[parent as usize].top_order,
                self.nodes[parent as usize].cyc_num,
            );
            let cn = &self.nodes[child as usize];
            if cn.cyc_head != child {
                if pnum == cn.cyc_num {
                    continue;
                }
                if ptop <= cn.top_order {
                    self.toporder_botches += 1;
                }
                child = cn.cyc_head;
            } else if ptop <= cn.top_order {
                self.toporder_botches += 1;
                continue;
            }
            let cn = &self.nodes[child as usize];
            if cn.ncalls == 0 {
                continue;
            }
            let ratio = count as f64 / cn.ncalls as f64;
            let at = cn.time * ratio;
            let act = cn.child_time * ratio;
            let share = at + act;
            let prop_share = pfract * share;
            let pn = &mut self.nodes[parent as usize];
            pn.child_time += share;
            pn.prop_child += prop_share;
            let phead = pn.cyc_head;
            let arc = &mut self.arcs[cur as usize];
            arc.time = at * pfract;
            arc.child_time = act * pfract;
            if phead != parent {
                let h = &mut self.nodes[phead as usize];
                h.child_time += share;
                h.prop_child += prop_share;
            }
        }
    }

    /// Name of a node for sorting: `None` for cycle headers.
    fn name<'a>(&self, symtab: &'a SymbolTable, node: u32) -> Option<&'a str> {
        if self.is_cycle_header(node) {
            None
        } else {
            symtab.symbols.get(node as usize).map(|s| &*s.name)
        }
    }

    /// Every node in `cmp_total` order: the stable sort by the key that comparator follows
    /// (see `sort`), or msort itself when a time is NaN. Nodes with no time and no calls
    /// (most line symbols) differ only by name: they are bucket-sorted by name rank.
    fn sort_by_total(&self, symtab: &SymbolTable) -> Vec<u32> {
        use std::cmp::Reverse;
        let total = (self.nsyms + self.ncycles) as u32;
        // Cycle headers first among equal times, in input order; then names not starting
        // with '_', then calls (descending), then the name.
        let class_rank = |i: u32| match self.name(symtab, i) {
            None => (0u8, 0u32),
            Some(name) => (
                1 + u8::from(name.as_bytes().first() == Some(&b'_')),
                self.name_rank.get(i as usize).copied().unwrap_or(0),
            ),
        };
        let key = |i: u32| {
            let node = &self.nodes[i as usize];
            let (class, rank) = class_rank(i);
            let calls = if class == 0 { 0 } else { node.ncalls };
            let t = ordered_f64(node.prop_self + node.prop_child)?;
            Some((Reverse(t), class, Reverse(calls), rank))
        };
        // An idle node's bucket: its name's rank, names not starting with '_' first.
        let nranks = self.name_rank.iter().max().map_or(0, |&m| m as usize + 1);
        let mut underscore = vec![false; nranks];
        for (s, &r) in symtab.symbols.iter().zip(&self.name_rank) {
            if let Some(u) = underscore.get_mut(r as usize) {
                *u = s.name.starts_with('_');
            }
        }
        let mut bucket = vec![0u32; nranks];
        let mut next = 0u32;
        for pass in [false, true] {
            for (r, &u) in underscore.iter().enumerate() {
                if u == pass
                    && let Some(b) = bucket.get_mut(r)
                {
                    *b = next;
                    next += 1;
                }
            }
        }
        let zero = ordered_f64(0.0);
        let idle = |i: u32| {
            let node = &self.nodes[i as usize];
            let (class, rank) = class_rank(i);
            (class != 0
                && node.ncalls == 0
                && ordered_f64(node.prop_self + node.prop_child) == zero)
                .then(|| bucket.get(rank as usize).copied().unwrap_or(0))
        };
        sort_mostly_idle(total, key, idle, nranks).unwrap_or_else(|| {
            let mut sorted: Vec<u32> = (0..total).collect();
            msort(&mut sorted, |&a, &b| self.cmp_total(symtab, a, b));
            sorted
        })
    }

    /// gprof's `cmp_total` (not a total order: a cycle header on the left always sorts first).
    fn cmp_total(&self, symtab: &SymbolTable, l: u32, r: u32) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        let (ln, rn) = (&self.nodes[l as usize], &self.nodes[r as usize]);
        let diff = (ln.prop_self + ln.prop_child) - (rn.prop_self + rn.prop_child);
        if diff < 0.0 {
            return Greater;
        }
        if diff > 0.0 {
            return Less;
        }
        let (lname, rname) = (self.name(symtab, l), self.name(symtab, r));
        if lname.is_none() && ln.cyc_num != 0 {
            return Less;
        }
        if rname.is_none() && rn.cyc_num != 0 {
            return Greater;
        }
        let (Some(lname), Some(rname)) = (lname, rname) else {
            return if lname.is_none() { Less } else { Greater };
        };
        let (l0, r0) = (
            lname.as_bytes().first() == Some(&b'_'),
            rname.as_bytes().first() == Some(&b'_'),
        );
        if !l0 && r0 {
            return Less;
        }
        if l0 && !r0 {
            return Greater;
        }
        if ln.ncalls > rn.ncalls {
            return Less;
        }
        if ln.ncalls < rn.ncalls {
            return Greater;
        }
        lname.as_bytes().cmp(rname.as_bytes())
    }
}

/// Scratch space of the depth-first numbering, reused across roots (most roots are lone
/// nodes, and allocating per root was a tenth of a line-mode run).
struct DfsScratch {
    /// gprof's `dfn_stack`, 1-based (`stack[0]` is unused).
    stack: Vec<u32>,
    /// (node, next arc to visit) for the nodes whose children are being visited.
    work: Vec<(u32, u32)>,
    /// Each symbol's position in `stack`, [`NONE`] when not on it.
    stack_pos: Vec<u32>,
    /// For the first node of each cycle chain, the chain's last node.
    chain_tail: Vec<u32>,
}

/// Iterator over a linked arc list.
#[derive(Debug)]
pub struct ArcIter<'a> {
    g: &'a CallGraph,
    cur: u32,
    parents: bool,
}

impl Iterator for ArcIter<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.cur == NONE {
            return None;
        }
        let a = self.cur;
        let arc = self.g.arcs.get(a as usize)?;
        self.cur = if self.parents {
            arc.next_parent
        } else {
            arc.next_child
        };
        Some(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gprof::analysis::symtab::Symbol;

    /// The key sort of [`CallGraph::sort_by_total`] against msort with `cmp_total` itself, on
    /// nodes that exercise every rule: equal times, cycle headers (with and without time),
    /// names with and without '_', repeated names, calls, and idle nodes.
    #[test]
    fn total_order_matches_msort_of_cmp_total() {
        let names = ["b", "_a", "a", "b", "__x", "c", "_a", "a"];
        for seed in 0..50u64 {
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut next = |m: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % m
            };
            let nsyms = 40 + next(40) as usize;
            let symtab = SymbolTable {
                symbols: (0..nsyms)
                    .map(|i| Symbol {
                        name: names[next(names.len() as u64) as usize].into(),
                        addr: i as u64 * 16,
                        end_addr: i as u64 * 16 + 15,
                        is_static: false,
                        is_func: true,
                        file: None,
                        line: 0,
                    })
                    .collect(),
                files: Vec::new(),
            };
            let mut g = CallGraph::new(nsyms);
            g.ncycles = 1 + next(3) as usize;
            for c in 0..g.ncycles {
                let mut n = Node::new((nsyms + c) as u32);
                n.cyc_num = c as u32 + 1;
                g.nodes.push(n);
            }
            for n in g.nodes.iter_mut() {
                // Mostly idle nodes; some times and calls, drawn from few values so they tie.
                if next(3) == 0 {
                    n.prop_self = next(3) as f64 * 0.5;
                    n.prop_child = next(2) as f64;
                }
                if next(3) == 0 {
                    n.ncalls = next(4);
                }
            }
            g.name_rank = name_ranks(symtab.symbols.iter().map(|s| &*s.name));
            let total = (nsyms + g.ncycles) as u32;
            let mut want: Vec<u32> = (0..total).collect();
            msort(&mut want, |&a, &b| g.cmp_total(&symtab, a, b));
            assert_eq!(g.sort_by_total(&symtab), want, "seed {seed}");
        }
    }
}
