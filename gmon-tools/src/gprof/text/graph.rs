//! The call graph listing (`cg_print`): one entry per function (parents, the function's own
//! line, children) and per cycle (the cycle as a whole, then its members), in `cmp_total` order
//! (spec/gprof.md §8). Parent and child lines are sorted with gprof's insertion sorts over
//! its linked lists, so equal keys come out in arc-creation order.

use std::cmp::Ordering;
use std::io::{self, Write};

use super::blurbs;
use super::fmt::{put_f, put_s, put_sw, put_u, u_digits};
use super::names::{Names, PrintOptions};
use crate::gprof::Analysis;
use crate::gprof::analysis::callgraph::{CallGraph, NONE};

/// gprof's `cmp_arc`.
fn cmp_arc(g: &CallGraph, l: u32, r: u32) -> Ordering {
    use Ordering::*;
    let (la, ra) = (&g.arcs[l as usize], &g.arcs[r as usize]);
    if la.parent == la.child {
        return Less;
    }
    if ra.parent == ra.child {
        return Greater;
    }
    let in_cycle = |p: usize, c: usize| {
        let (pn, cn) = (g.nodes[p].cyc_num, g.nodes[c].cyc_num);
        pn != 0 && cn != 0 && pn == cn
    };
    let by_count = |a: u64, b: u64| a.cmp(&b);
    if in_cycle(la.parent, la.child) {
        if in_cycle(ra.parent, ra.child) {
            by_count(la.count, ra.count)
        } else {
            Less
        }
    } else if in_cycle(ra.parent, ra.child) {
        Greater
    } else {
        let (lt, rt) = (la.time + la.child_time, ra.time + ra.child_time);
        if lt < rt {
            return Less;
        }
        if lt > rt {
            return Greater;
        }
        by_count(la.count, ra.count)
    }
}

/// Each node's parent arcs and child arcs in creation order, in two flat arrays: gprof's
/// linked lists, walked entry by entry, were a cache miss per arc (a fifth of printing a
/// dense graph). Both are made by counting sorts over the arcs, which reads them in order.
struct Adjacency {
    /// Node `n`'s parent arcs are `parents[parents_at[n]..parents_at[n + 1]]`.
    parents_at: Vec<u32>,
    parents: Vec<u32>,
    children_at: Vec<u32>,
    children: Vec<u32>,
}

impl Adjacency {
    fn new(g: &CallGraph) -> Adjacency {
        let by = |end: &dyn Fn(&crate::gprof::analysis::callgraph::CgArc) -> usize| {
            let mut at = vec![0u32; g.nodes.len() + 1];
            for a in &g.arcs {
                if let Some(c) = at.get_mut(end(a) + 1) {
                    *c += 1;
                }
            }
            for k in 1..at.len() {
                at[k] += at[k - 1];
            }
            let mut next = at.clone();
            let mut list = vec![0u32; g.arcs.len()];
            for (i, a) in g.arcs.iter().enumerate() {
                if let Some(pos) = next.get_mut(end(a))
                    && let Some(slot) = list.get_mut(*pos as usize)
                {
                    *slot = i as u32;
                    *pos += 1;
                }
            }
            (at, list)
        };
        let (parents_at, parents) = by(&|a| a.child);
        let (children_at, children) = by(&|a| a.parent);
        Adjacency {
            parents_at,
            parents,
            children_at,
            children,
        }
    }

    fn slice<'s>(at: &[u32], list: &'s [u32], node: u32) -> &'s [u32] {
        let n = node as usize;
        match (at.get(n), at.get(n + 1)) {
            (Some(&lo), Some(&hi)) => list.get(lo as usize..hi as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// `node`'s parent arcs, oldest first (gprof's list reversed).
    fn parents(&self, node: u32) -> &[u32] {
        Adjacency::slice(&self.parents_at, &self.parents, node)
    }

    /// `node`'s child arcs, oldest first (gprof's list reversed).
    fn children(&self, node: u32) -> &[u32] {
        Adjacency::slice(&self.children_at, &self.children, node)
    }
}

/// `sort_parents`: gprof inserts each arc of the list before the first sorted element it is not
/// greater than: ascending order, equal keys in reverse list order. `cmp_arc` is a total
/// preorder, so a stable sort of the reversed list gives the same order in O(n log n) (gprof's
/// insertion sort is quadratic in the number of parents).
fn sorted_parents(g: &CallGraph, adj: &Adjacency, node: u32, v: &mut Vec<u32>, keyed: &mut Keyed) {
    v.clear();
    let list = adj.parents(node);
    if list.len() > 1 && sort_by_keys(g, list, keyed, false) {
        v.extend(keyed.iter().map(|&(_, a)| a));
        return;
    }
    v.extend_from_slice(list);
    v.sort_by(|&a, &b| cmp_arc(g, a, b));
}

/// [`cmp_arc`] as a key: class (self arc, arc within a cycle, other arc), then the arc's
/// time for the last class, then its count (none for a self arc, which a node has at most
/// one of). Keys are read once per arc: the comparator read the arc and both its ends at
/// every comparison, scattered reads that were most of sorting a dense graph's lines.
type ArcKey = (u8, u64, u64);

/// Arcs with their keys, for one parent or child list.
type Keyed = Vec<(ArcKey, u32)>;

/// `arc`'s [`ArcKey`], or `None` if its time is NaN (which no key orders as `cmp_arc` does).
fn arc_key(g: &CallGraph, arc: u32) -> Option<ArcKey> {
    let a = &g.arcs[arc as usize];
    if a.parent == a.child {
        return Some((0, 0, 0));
    }
    let (pn, cn) = (g.nodes[a.parent].cyc_num, g.nodes[a.child].cyc_num);
    if pn != 0 && cn != 0 && pn == cn {
        return Some((1, 0, a.count));
    }
    Some((
        2,
        crate::gprof::analysis::sort::ordered_f64(a.time + a.child_time)?,
        a.count,
    ))
}

/// Sorts `list` into `keyed` by [`ArcKey`], ascending or descending, equal keys in list
/// order: `cmp_arc`'s stable sort. False (and `keyed` undefined) if a key is missing.
fn sort_by_keys(g: &CallGraph, list: &[u32], keyed: &mut Keyed, descending: bool) -> bool {
    keyed.clear();
    for &a in list {
        let Some(k) = arc_key(g, a) else {
            return false;
        };
        keyed.push((k, a));
    }
    if descending {
        keyed.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
    } else {
        keyed.sort_by_key(|&(k, _)| k);
    }
    true
}

/// A line of a function's children: an arc, or the arc to gprof's `<indirect child>`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Child {
    Arc(u32),
    Indirect,
}

/// [`cmp_arc`] with the `<indirect child>` arc: no self call, not in a cycle, no time, count 0.
fn cmp_child(g: &CallGraph, l: Child, r: Child) -> Ordering {
    let (a, flip) = match (l, r) {
        (Child::Arc(l), Child::Arc(r)) => return cmp_arc(g, l, r),
        (Child::Indirect, Child::Indirect) => return Ordering::Equal,
        (Child::Arc(a), Child::Indirect) => (a, false),
        (Child::Indirect, Child::Arc(a)) => (a, true),
    };
    let arc = &g.arcs[a as usize];
    let (pn, cn) = (g.nodes[arc.parent].cyc_num, g.nodes[arc.child].cyc_num);
    // The real arc against the indirect one, as left operand.
    let o = if arc.parent == arc.child || (pn != 0 && cn != 0 && pn == cn) {
        Ordering::Less
    } else {
        let t = arc.time + arc.child_time;
        if t < 0.0 {
            Ordering::Less
        } else if t > 0.0 {
            Ordering::Greater
        } else {
            arc.count.cmp(&0)
        }
    };
    if flip { o.reverse() } else { o }
}

/// `sort_children`: insertion before the first element the arc is not less than: descending
/// order, equal keys in reverse list order (= arc creation order).
fn sorted_children(
    g: &CallGraph,
    adj: &Adjacency,
    node: u32,
    v: &mut Vec<Child>,
    keyed: &mut Keyed,
) {
    v.clear();
    let list = adj.children(node);
    // `indirect` is in parent order (assembly visits the symbols in order).
    let indirect = g.indirect.binary_search_by_key(&node, |&(p, _)| p).ok();
    if indirect.is_none() && list.len() > 1 && sort_by_keys(g, list, keyed, true) {
        v.extend(keyed.iter().map(|&(_, a)| Child::Arc(a)));
        return;
    }
    v.extend(list.iter().map(|&a| Child::Arc(a)));
    if let Some(i) = indirect
        && let Some(&(_, made)) = g.indirect.get(i)
    {
        let at = v
            .iter()
            .position(|c| matches!(c, Child::Arc(a) if *a >= made))
            .unwrap_or(v.len());
        v.insert(at, Child::Indirect);
    }
    v.sort_by(|&a, &b| cmp_child(g, b, a));
}

/// `sort_members`: descending by (time, calls); equal keys keep chain order.
fn sorted_members(g: &CallGraph, hdr: u32) -> Vec<u32> {
    let key = |m: u32| {
        let n = &g.nodes[m as usize];
        (
            n.prop_self + n.prop_child,
            n.ncalls.wrapping_add(n.self_calls),
        )
    };
    let mut v: Vec<u32> = g.members(hdr).collect();
    v.sort_by(|&a, &b| {
        let (ka, kb) = (key(a), key(b));
        kb.0.partial_cmp(&ka.0)
            .unwrap_or(Ordering::Equal)
            .then(kb.1.cmp(&ka.1))
    });
    v
}

struct Cols {
    bsd: bool,
}

impl Cols {
    /// The children/descendants column: `%7.2f` (FSF) or `%11.2f` (BSD).
    fn child_f(&self, b: &mut Vec<u8>, v: f64) {
        put_f(b, v, if self.bsd { 11 } else { 7 }, 2);
    }
    fn child_s(&self, b: &mut Vec<u8>) {
        let w = if self.bsd { 11 } else { 7 };
        put_sw(b, "", w);
    }
}

/// Prints the call graph. `first_output` is gprof's section-separator flag.
pub fn print_graph(
    out: &mut dyn Write,
    a: &Analysis,
    opts: &PrintOptions,
    first_output: &mut bool,
) -> io::Result<()> {
    print_graph_split(out, a, opts, first_output, PARALLEL_ENTRIES, CHUNK_ENTRIES)
}

/// [`print_graph`], on two threads from `parallel_from` entries on, in chunks of `chunk`.
fn print_graph_split(
    out: &mut dyn Write,
    a: &Analysis,
    opts: &PrintOptions,
    first_output: &mut bool,
    parallel_from: usize,
    chunk: usize,
) -> io::Result<()> {
    let g = &a.graph;
    let hz = f64::from(a.hist.hz);
    let cols = Cols { bsd: opts.bsd };
    let names = Names::new(a, *opts);
    let mut b: Vec<u8> = Vec::with_capacity(64 * 1024);
    if !opts.brief && opts.bsd {
        b.extend_from_slice(blurbs::BSD_CALLG.as_bytes());
    }
    if *first_output {
        *first_output = false;
    } else {
        b.extend_from_slice(b"\x0c\n");
    }
    if !opts.bsd {
        if !opts.brief {
            b.extend_from_slice(b"\t\t     Call graph (explanation follows)\n\n");
        } else {
            b.extend_from_slice(b"\t\t\tCall graph\n\n");
        }
    }
    b.extend_from_slice(
        format!(
            "\ngranularity: each sample hit covers {} byte(s)",
            super::fmt::c_long(a.hist.scale).wrapping_mul(2)
        )
        .as_bytes(),
    );
    let mut print_time = g.print_time;
    if print_time > 0.0 {
        b.extend_from_slice(
            format!(
                " for {}% of {} seconds\n\n",
                super::fmt::f_string(100.0 / print_time, 2),
                super::fmt::f_string(print_time / hz, 2)
            )
            .as_bytes(),
        );
    } else {
        b.extend_from_slice(b" no time propagated\n\n");
        print_time = 1.0;
    }
    if opts.bsd {
        b.extend_from_slice(b"                                  called/total       parents \n");
        b.extend_from_slice(b"index  %time    self descendants  called+self    name    \tindex\n");
        b.extend_from_slice(b"                                  called/total       children\n");
        b.extend_from_slice(b"\n");
    } else {
        b.extend_from_slice(b"index % time    self  children    called     name\n");
    }
    let adj = Adjacency::new(g);
    let entries = Entries {
        a,
        adj: &adj,
        opts,
        cols,
        print_time,
        hz,
    };
    let sorted = &g.time_sorted;
    if sorted.len() < parallel_from {
        entries.print(&mut b, &names, sorted);
    } else {
        out.write_all(&b)?;
        b.clear();
        // At least eight chunks, so that a smaller graph is shared too.
        let chunk = chunk.min(sorted.len() / 8).max(1);
        entries.print_on_two_threads(out, &names, sorted, chunk)?;
    }
    if !opts.brief && !opts.bsd {
        b.extend_from_slice(blurbs::FSF_CALLG.as_bytes());
    }
    out.write_all(&b)
}

/// Entries from which the call graph is formatted on two threads: a dense program's graph is
/// megabytes of text (dense20k: 6 MB, 20,000 entries), and even small2k's 2,048 entries
/// (600 KB) printed 0.7 ms sooner on two.
const PARALLEL_ENTRIES: usize = 1024;

/// Entries per chunk handed between the threads: about 300 KB of text on dense20k, few
/// enough chunks that the hand-overs cost nothing, small enough that the two buffers in
/// flight stay small.
const CHUNK_ENTRIES: usize = 1024;

/// What every entry of the graph is printed with.
struct Entries<'a> {
    a: &'a Analysis,
    adj: &'a Adjacency,
    opts: &'a PrintOptions,
    cols: Cols,
    print_time: f64,
    hz: f64,
}

impl Entries<'_> {
    /// Appends the entries of `nodes` (in print order) to `b`.
    fn print(&self, b: &mut Vec<u8>, names: &Names, nodes: &[u32]) {
        let (a, opts, cols, hz) = (self.a, self.opts, &self.cols, self.hz);
        let g = &a.graph;
        // Scratch lists of one entry's parent and child arcs, reused from entry to entry.
        let (mut arc_list, mut child_list, mut keyed) = (Vec::new(), Vec::new(), Vec::new());
        for &node in nodes {
            let n = &g.nodes[node as usize];
            // Only line mode reads the symbol: a cache miss per node otherwise spent for nothing.
            let line_symbol = || {
                !a.symtab
                    .symbols
                    .get(node as usize)
                    .is_some_and(|s| s.is_func)
            };
            if (opts.ignore_zeros
                && n.ncalls == 0
                && n.self_calls == 0
                && n.prop_self == 0.0
                && n.prop_child == 0.0)
                || !n.print_flag
                || (opts.line_granularity && line_symbol())
            {
                continue;
            }
            if g.is_cycle_header(node) {
                // The cycle as a whole.
                entry_head(b, cols, n, self.print_time, hz);
                b.push(b' ');
                calls_column(b, n.ncalls, n.self_calls);
                b.extend_from_slice(
                    format!(" <cycle {} as a whole> [{}]\n", n.cyc_num, n.index).as_bytes(),
                );
                for m in sorted_members(g, node) {
                    let mn = &g.nodes[m as usize];
                    put_sw(b, "", 6);
                    b.push(b' ');
                    put_sw(b, "", 5);
                    b.push(b' ');
                    put_f(b, mn.prop_self / hz, 7, 2);
                    b.push(b' ');
                    cols.child_f(b, mn.prop_child / hz);
                    b.push(b' ');
                    calls_column(b, mn.ncalls, mn.self_calls);
                    b.extend_from_slice(b"     ");
                    names.name(b, m as usize);
                    b.push(b'\n');
                }
            } else {
                self.print_parents(b, names, node, &mut arc_list, &mut keyed);
                // The function's own line.
                entry_head(b, cols, n, self.print_time, hz);
                if n.ncalls.wrapping_add(n.self_calls) != 0 {
                    b.push(b' ');
                    calls_column(b, n.ncalls, n.self_calls);
                    b.push(b' ');
                } else {
                    b.push(b' ');
                    put_sw(b, "", 7);
                    b.push(b' ');
                    put_sw(b, "", 7);
                    b.push(b' ');
                }
                names.name(b, node as usize);
                b.push(b'\n');
                self.print_children(b, names, node, &mut child_list, &mut keyed);
            }
            if opts.bsd {
                b.push(b'\n');
            }
            b.extend_from_slice(b"-----------------------------------------------\n");
            if opts.bsd {
                b.push(b'\n');
            }
        }
    }

    /// Writes the entries of `nodes` to `out`, chunk by chunk in order: a second thread formats
    /// the odd chunks while this one formats the even ones and writes every chunk. At most two
    /// chunks wait in the channel; the emptied buffers go back to be reused.
    fn print_on_two_threads(
        &self,
        out: &mut dyn Write,
        names: &Names,
        nodes: &[u32],
        chunk: usize,
    ) -> io::Result<()> {
        use std::sync::mpsc::sync_channel;
        let chunks: Vec<&[u32]> = nodes.chunks(chunk).collect();
        let helper_names = names.fork();
        let (full_tx, full_rx) = sync_channel::<Vec<u8>>(2);
        let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(4);
        std::thread::scope(|scope| {
            let chunks = &chunks;
            scope.spawn(move || {
                for chunk in chunks.iter().skip(1).step_by(2) {
                    let mut b = empty_rx.try_recv().unwrap_or_default();
                    b.clear();
                    self.print(&mut b, &helper_names, chunk);
                    if full_tx.send(b).is_err() {
                        return; // the writer stopped (a write error)
                    }
                }
            });
            // Dropped before the scope waits for the helper, so that a write error cannot leave
            // it blocked on a full channel.
            let full_rx = full_rx;
            let mut b = Vec::new();
            for (i, chunk) in chunks.iter().enumerate() {
                if i % 2 == 0 {
                    b.clear();
                    self.print(&mut b, names, chunk);
                    out.write_all(&b)?;
                } else {
                    let Ok(theirs) = full_rx.recv() else {
                        // The helper cannot stop early but by panicking (aborts the process);
                        // should it, format its chunk here.
                        b.clear();
                        self.print(&mut b, names, chunk);
                        out.write_all(&b)?;
                        continue;
                    };
                    out.write_all(&theirs)?;
                    let _ = empty_tx.try_send(theirs);
                }
            }
            Ok(())
        })
    }
}

/// The start of a primary line: `[index] %time self children`, shared by a function's own line
/// and a cycle's "as a whole" line.
fn entry_head(
    b: &mut Vec<u8>,
    cols: &Cols,
    n: &crate::gprof::analysis::callgraph::Node,
    print_time: f64,
    hz: f64,
) {
    // `%-6.6s` of "[index]", built on the stack (a String per entry added up).
    let mut tag = [0u8; 22];
    let mut digits = [0u8; 20];
    let d = u_digits(u64::from(n.index), &mut digits);
    tag[0] = b'[';
    tag[1..=d.len()].copy_from_slice(d);
    tag[d.len() + 1] = b']';
    put_s(b, &tag[..d.len() + 2], 6, Some(6), true);
    b.push(b' ');
    put_f(b, 100.0 * (n.prop_self + n.prop_child) / print_time, 5, 1);
    b.push(b' ');
    put_f(b, n.prop_self / hz, 7, 2);
    b.push(b' ');
    cols.child_f(b, n.prop_child / hz);
}

/// The `called[+self]` column: calls from others, then `+` and the recursive calls, or blanks.
fn calls_column(b: &mut Vec<u8>, ncalls: u64, self_calls: u64) {
    put_u(b, ncalls, 7, false);
    if self_calls != 0 {
        b.push(b'+');
        put_u(b, self_calls, 7, true);
    } else {
        b.push(b' ');
        put_sw(b, "", 7);
    }
}

fn count_only_line(b: &mut Vec<u8>, cols: &Cols, count: u64) {
    put_sw(b, "", 6);
    b.push(b' ');
    put_sw(b, "", 5);
    b.push(b' ');
    put_sw(b, "", 7);
    b.push(b' ');
    cols.child_s(b);
    b.push(b' ');
    put_u(b, count, 7, false);
    b.push(b' ');
    put_sw(b, "", 7);
    b.extend_from_slice(b"     ");
}

fn timed_line(b: &mut Vec<u8>, cols: &Cols, time: f64, child_time: f64, count: u64, total: u64) {
    put_sw(b, "", 6);
    b.push(b' ');
    put_sw(b, "", 5);
    b.push(b' ');
    put_f(b, time, 7, 2);
    b.push(b' ');
    cols.child_f(b, child_time);
    b.push(b' ');
    put_u(b, count, 7, false);
    b.push(b'/');
    put_u(b, total, 7, true);
    b.extend_from_slice(b"     ");
}

impl Entries<'_> {
    /// The parent lines of `child`'s entry (`arcs`, `keyed`: scratch reused between entries).
    fn print_parents(
        &self,
        b: &mut Vec<u8>,
        names: &Names,
        child: u32,
        arcs: &mut Vec<u32>,
        keyed: &mut Keyed,
    ) {
        let (g, adj, cols) = (&self.a.graph, self.adj, &self.cols);
        let cn = &g.nodes[child as usize];
        let cycle_head = if cn.cyc_head != NONE {
            cn.cyc_head
        } else {
            child
        };
        if cn.parents == NONE {
            put_sw(b, "", 6);
            b.push(b' ');
            put_sw(b, "", 5);
            b.push(b' ');
            put_sw(b, "", 7);
            b.push(b' ');
            cols.child_s(b);
            b.push(b' ');
            put_sw(b, "", 7);
            b.push(b' ');
            put_sw(b, "", 7);
            b.extend_from_slice(b"     <spontaneous>\n");
            return;
        }
        sorted_parents(g, adj, child, arcs, keyed);
        for &arc_i in arcs.iter() {
            let arc = &g.arcs[arc_i as usize];
            let parent = arc.parent;
            let pn = &g.nodes[parent];
            let inside = parent == child as usize || (cn.cyc_num != 0 && pn.cyc_num == cn.cyc_num);
            self.arc_line(b, names, arc, inside, cycle_head, parent);
        }
    }

    /// The child lines of `parent`'s entry (`children`, `keyed`: scratch reused between entries).
    fn print_children(
        &self,
        b: &mut Vec<u8>,
        names: &Names,
        parent: u32,
        children: &mut Vec<Child>,
        keyed: &mut Keyed,
    ) {
        let (g, adj, cols) = (&self.a.graph, self.adj, &self.cols);
        let pn = &g.nodes[parent as usize];
        sorted_children(g, adj, parent, children, keyed);
        for &child in children.iter() {
            let Child::Arc(arc_i) = child else {
                timed_line(b, cols, 0.0, 0.0, 0, 0);
                b.extend_from_slice(b"<indirect child>\n");
                continue;
            };
            let arc = &g.arcs[arc_i as usize];
            let child = arc.child;
            let cn = &g.nodes[child];
            let inside = child == parent as usize || (cn.cyc_num != 0 && cn.cyc_num == pn.cyc_num);
            self.arc_line(b, names, arc, inside, cn.cyc_head, child);
        }
    }

    /// One parent or child line: the count alone for an arc inside the entry's own cycle (or
    /// to itself), else the arc's times and `count/total`, `total` being the calls of the
    /// callee's cycle header (or the callee); then `other`'s name.
    fn arc_line(
        &self,
        b: &mut Vec<u8>,
        names: &Names,
        arc: &crate::gprof::analysis::callgraph::CgArc,
        inside: bool,
        callee_head: u32,
        other: usize,
    ) {
        let (g, cols, hz) = (&self.a.graph, &self.cols, self.hz);
        if inside {
            count_only_line(b, cols, arc.count);
        } else {
            let total = g.nodes[callee_head as usize].ncalls;
            timed_line(
                b,
                cols,
                arc.time / hz,
                arc.child_time / hz,
                arc.count,
                total,
            );
        }
        names.name(b, other);
        b.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gprof::AnalysisOptions;
    use gmon_binary::Image;

    /// The graph formatted on two threads, in chunks of any size, is the graph formatted on one,
    /// on the test programs (cycles, C++ names, many functions), and a failed write stops both
    /// threads with the error.
    #[test]
    fn two_threads_print_the_same_graph() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/cases");
        let mut compared = 0;
        for case in [
            "many-pie-O0",
            "cycle-pie-O0",
            "cxx-pie-O2",
            "maincycle-pie-O0",
        ] {
            let dir = root.join(case);
            let Ok(image) = Image::open(&dir.join("prog")) else {
                continue;
            };
            let bytes = std::fs::read(dir.join("gmon.out")).unwrap();
            let profile = gmon_format::read(&bytes).unwrap();
            let a = Analysis::new(&image, &[profile], &AnalysisOptions::default()).unwrap();
            for opts in [
                PrintOptions::default(),
                PrintOptions {
                    bsd: true,
                    brief: false,
                    ..PrintOptions::default()
                },
            ] {
                let print = |from: usize, chunk: usize| {
                    let mut v = Vec::new();
                    print_graph_split(&mut v, &a, &opts, &mut true, from, chunk).unwrap();
                    v
                };
                let one = print(usize::MAX, 1);
                assert!(one.len() > 200, "{case}: a graph was printed");
                for chunk in [1, 2, 3, 1000] {
                    assert_eq!(print(0, chunk), one, "{case}, chunks of {chunk}");
                }
                let mut full = [0u8; 300];
                let mut short = &mut full[..];
                assert!(print_graph_split(&mut short, &a, &opts, &mut true, 0, 1).is_err());
                compared += 1;
            }
        }
        assert!(compared >= 6, "test programs missing: {compared} compared");
    }
}
