//! The weighted call graph that stacks are estimated from: functions with their self samples,
//! caller → callee arcs with call counts, and optional cycle groups.
//!
//! It knows nothing about executables or gmon.out: the gprof engine's analysis (or a test) fills
//! it in. Nodes are kept in the order they were added (the gprof adapter adds them in address
//! order), and that order is the tie-break everywhere, so results never depend on hash order.

use std::collections::BTreeMap;

/// Index of a function in a [`WeightedCallGraph`], in the order it was added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub usize);

/// One function: its display name and the histogram samples that fell inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The name drawn in the frame (demangled when the adapter could).
    pub name: String,
    /// Samples credited to the function itself (gprof's "self" column, in ticks).
    pub self_samples: u64,
}

/// A caller → callee arc with the number of calls the runtime counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The calling function.
    pub caller: NodeId,
    /// The called function.
    pub callee: NodeId,
    /// How many times the caller called the callee.
    pub calls: u64,
}

/// A group of functions that call each other, collapsed into one unit as gprof does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleGroup {
    /// gprof's cycle number, shown as the frame `<cycle N>`.
    pub number: u32,
    /// The member functions.
    pub members: Vec<NodeId>,
}

/// What can be wrong in a graph that a caller built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum GraphError {
    /// An arc or cycle names a node that was never added.
    #[error("node {0} does not exist (the graph has {1} nodes)")]
    UnknownNode(usize, usize),
    /// A function is listed in two cycle groups.
    #[error("function {0:?} is a member of cycle {1} and of cycle {2}")]
    TwoCycles(String, u32, u32),
    /// Two cycle groups share a number.
    #[error("cycle number {0} is used twice")]
    DuplicateCycleNumber(u32),
    /// A sum of counts does not fit in 64 bits.
    #[error("{0} overflows a 64-bit count")]
    Overflow(&'static str),
}

/// Functions, arcs and cycles: the input of [`super::estimate_stacks`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WeightedCallGraph {
    nodes: Vec<Node>,
    /// Arcs keyed by (caller, callee), so repeated arcs add up and iteration is ordered.
    edges: BTreeMap<(NodeId, NodeId), u64>,
    cycles: Vec<CycleGroup>,
    outside_samples: u64,
}

impl WeightedCallGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a function and returns its id (ids count up from 0 in insertion order).
    pub fn add_node(&mut self, name: impl Into<String>, self_samples: u64) -> NodeId {
        self.nodes.push(Node {
            name: name.into(),
            self_samples,
        });
        NodeId(self.nodes.len() - 1)
    }

    /// Records `calls` calls from `caller` to `callee`; a repeated pair adds up.
    pub fn add_calls(
        &mut self,
        caller: NodeId,
        callee: NodeId,
        calls: u64,
    ) -> Result<(), GraphError> {
        self.check(caller)?;
        self.check(callee)?;
        let slot = self.edges.entry((caller, callee)).or_insert(0);
        *slot = slot
            .checked_add(calls)
            .ok_or(GraphError::Overflow("an arc's call count"))?;
        Ok(())
    }

    /// Declares the cycles (as the gprof engine found them). Without this call, cycles are the
    /// strongly connected components of the arcs with non-zero counts.
    pub fn set_cycles(&mut self, cycles: Vec<CycleGroup>) -> Result<(), GraphError> {
        let mut owner: BTreeMap<NodeId, u32> = BTreeMap::new();
        let mut numbers = std::collections::BTreeSet::new();
        for c in &cycles {
            if !numbers.insert(c.number) {
                return Err(GraphError::DuplicateCycleNumber(c.number));
            }
            for &m in &c.members {
                self.check(m)?;
                if let Some(&other) = owner.get(&m)
                    && other != c.number
                {
                    let name = self
                        .nodes
                        .get(m.0)
                        .map(|n| n.name.clone())
                        .unwrap_or_default();
                    return Err(GraphError::TwoCycles(name, other, c.number));
                }
                owner.insert(m, c.number);
            }
        }
        self.cycles = cycles;
        Ok(())
    }

    /// Records how many histogram samples fell outside every function. They belong to no
    /// stack; they are kept only to be reported.
    pub fn set_outside_samples(&mut self, samples: u64) {
        self.outside_samples = samples;
    }

    /// Samples that fell outside every function.
    pub fn outside_samples(&self) -> u64 {
        self.outside_samples
    }

    /// The functions, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The function with this id, if it exists.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0)
    }

    /// Every arc, ordered by (caller, callee), repeated pairs summed.
    pub fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        self.edges.iter().map(|(&(caller, callee), &calls)| Edge {
            caller,
            callee,
            calls,
        })
    }

    /// The declared cycles (empty when none were declared).
    pub fn declared_cycles(&self) -> &[CycleGroup] {
        &self.cycles
    }

    /// The same graph with other self weights (e.g. nanoseconds instead of samples), one per
    /// node in id order; missing entries are 0.
    pub fn with_self_weights(&self, weights: &[u64]) -> WeightedCallGraph {
        let mut g = self.clone();
        for (i, n) in g.nodes.iter_mut().enumerate() {
            n.self_samples = weights.get(i).copied().unwrap_or(0);
        }
        g
    }

    /// Sum of every function's self samples: the total the estimated stacks add up to.
    pub fn total_self_samples(&self) -> Result<u64, GraphError> {
        self.nodes.iter().try_fold(0u64, |acc, n| {
            acc.checked_add(n.self_samples)
                .ok_or(GraphError::Overflow("the total of self samples"))
        })
    }

    fn check(&self, id: NodeId) -> Result<(), GraphError> {
        if id.0 < self.nodes.len() {
            Ok(())
        } else {
            Err(GraphError::UnknownNode(id.0, self.nodes.len()))
        }
    }
}
