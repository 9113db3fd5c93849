//! The flame tree the page draws: stacks merged into one node per distinct path from a root,
//! written depth first with children in name order, as flame graphs order them
//! (spec/report.md §2). The plain report, the process tree and the differential report all
//! build theirs here.

use std::collections::HashMap;

use super::data::FlameNodes;

/// A flame tree being built; function indices are the report's.
pub(super) struct FlameTree {
    nodes: Vec<Node>,
}

struct Node {
    f: u32,
    v: u64,
    /// Index into the report's palette (differential graphs only).
    colour: Option<u32>,
    children: HashMap<u32, usize>,
}

/// The tree's invisible root, above every root frame.
pub(super) const TOP: usize = 0;

impl FlameTree {
    pub(super) fn new() -> FlameTree {
        FlameTree {
            nodes: vec![Node {
                f: 0,
                v: 0,
                colour: None,
                children: HashMap::new(),
            }],
        }
    }

    /// The child of `at` for function `f`, made when missing.
    pub(super) fn child(&mut self, at: usize, f: u32) -> usize {
        if let Some(&n) = self.nodes[at].children.get(&f) {
            return n;
        }
        self.nodes.push(Node {
            f,
            v: 0,
            colour: None,
            children: HashMap::new(),
        });
        let n = self.nodes.len() - 1;
        self.nodes[at].children.insert(f, n);
        n
    }

    /// Adds a stack of `samples` along `path` below `at`; returns the node it ends in.
    pub(super) fn add(
        &mut self,
        at: usize,
        path: impl IntoIterator<Item = u32>,
        samples: u64,
    ) -> usize {
        let mut at = at;
        self.nodes[at].v = self.nodes[at].v.saturating_add(samples);
        for f in path {
            at = self.child(at, f);
            self.nodes[at].v = self.nodes[at].v.saturating_add(samples);
        }
        at
    }

    /// Colours node `n` with palette entry `c`.
    pub(super) fn colour(&mut self, n: usize, c: u32) {
        self.nodes[n].colour = Some(c);
    }

    /// Writes the tree depth first, children in name order; with `default_colour`, every node
    /// has a colour (the ones never coloured get it).
    pub(super) fn write(
        &self,
        names: &[String],
        default_colour: Option<u32>,
        out: &mut FlameNodes,
    ) {
        let sorted = |n: &Node| -> Vec<usize> {
            let mut c: Vec<(u32, usize)> = n.children.iter().map(|(&f, &i)| (f, i)).collect();
            c.sort_by(|a, b| {
                names[a.0 as usize]
                    .cmp(&names[b.0 as usize])
                    .then(a.0.cmp(&b.0))
            });
            c.into_iter().map(|(_, i)| i).collect()
        };
        // Depth first without recursion (stacks can be thousands of frames deep).
        let mut work: Vec<(usize, u32)> = sorted(&self.nodes[TOP])
            .into_iter()
            .rev()
            .map(|i| (i, 0))
            .collect();
        while let Some((i, parent)) = work.pop() {
            let node = &self.nodes[i];
            out.parent.push(parent);
            out.f.push(node.f);
            out.v.push(node.v);
            if let Some(c) = node.colour.or(default_colour) {
                out.c.push(c);
            }
            let me = out.parent.len() as u32;
            work.extend(sorted(node).into_iter().rev().map(|c| (c, me)));
        }
    }
}
