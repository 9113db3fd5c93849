//! The addresses exact stacks were sampled at (spec/stacks.md §8): each leaf's program counter
//! and each caller's call site, in the object that holds them, so that views can place samples
//! at instructions rather than at function entries.

use super::graph::NodeId;

/// A program counter where samples fell.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SampledAddress {
    /// The function it is in.
    pub function: NodeId,
    /// The address, link-time in its object (the executable's, or [`SampledAddress::object`]'s).
    pub address: u64,
    /// The shared object's path; `None` for the executable.
    pub object: Option<String>,
    /// How many samples.
    pub samples: u64,
    /// Its source line in the executable's DWARF (0: unknown, or in a shared object).
    pub line: u32,
    /// Its source file, when DWARF names one.
    pub file: Option<String>,
}

/// Where `caller` called `callee` on the sampled stacks: the call instruction's address (one
/// byte before the return address) in the caller's object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CallSite {
    /// The calling function.
    pub caller: NodeId,
    /// The called function.
    pub callee: NodeId,
    /// The address inside the call instruction, link-time in the caller's object.
    pub address: u64,
    /// The samples of the stacks with this call (once per frame).
    pub samples: u64,
    /// Its source line in the executable's DWARF (0: unknown, or in a shared object).
    pub line: u32,
    /// Its source file, when DWARF names one.
    pub file: Option<String>,
}

/// Where one frame of an exact stack was: the sampled program counter (the leaf) or the call
/// instruction (a caller), in the object that holds it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    /// The path of the object, as its [`super::LoadedObject`] names it; `None` outside every
    /// recorded object, where `address` is the runtime address itself.
    pub object: Option<String>,
    /// The address, link-time in the object.
    pub address: u64,
    /// Its source line in the object's DWARF (0: unknown).
    pub line: u32,
    /// Its source file, when DWARF names one.
    pub file: Option<String>,
}

/// An exact stack with the address of every frame: the same frames and samples as one of
/// [`super::Stacks::stacks`] (several of these can add up to one of those, having sampled
/// other addresses in the same functions).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PlacedStack {
    /// Frames from the root to the leaf, as in [`super::Stack::frames`].
    pub frames: Vec<super::Frame>,
    /// One place per frame, in the same order; `None` where a frame has no address (a stack
    /// the runtime recorded without frames).
    pub places: Vec<Option<Place>>,
    /// Number of samples.
    pub samples: u64,
}
