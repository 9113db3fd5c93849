//! What the views know about one function of the graph beyond its frame name: linker name,
//! address, source file and line, and the source lines its samples fell on.

/// What the profile knows about one function of the graph, beyond its display name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionInfo {
    /// The human-readable (demangled) name; empty means "the graph's frame name". It differs
    /// from the frame name when the flame graph had to tell same-named functions apart.
    pub name: String,
    /// The symbol as the linker knows it (mangled); empty means "same as the display name".
    pub system_name: String,
    /// The function's start address (link-time), if known.
    pub address: Option<u64>,
    /// Source file of the function, from DWARF.
    pub file: Option<String>,
    /// Line of the function's first instruction, from DWARF (0 when unknown).
    pub start_line: u32,
    /// The lines inside the function that have samples. When present, the leaf of each CPU
    /// stack ending in this function is split over them in proportion to their weights.
    pub bins: Vec<BinSample>,
    /// Where the histogram's samples fell inside the function, address by address: its
    /// non-zero bins cut at line entries (spec/stacks.md §7), weighted in billionths of a tick,
    /// each with its line. Empty for exact stacks and when not asked for.
    pub histogram: Vec<BinSample>,
    /// The shared object the function is in, as the runtime recorded its path, with the
    /// function's start address in that object (link-time); `None` for the executable's own
    /// functions, whose start is [`FunctionInfo::address`].
    pub object: Option<(String, u64)>,
}

impl FunctionInfo {
    /// Where the samples of a stack that ends in this function are split (spec/stacks.md §7,
    /// "Leaf locations"): the histogram's pieces, else the `gprof -l` line entries; empty when
    /// neither is known (the stack's leaf is then the function's start).
    pub fn leaf_pieces(&self) -> &[BinSample] {
        match self.histogram.is_empty() {
            true => &self.bins,
            false => &self.histogram,
        }
    }
}

/// A place inside a function where samples fell: a source line as `gprof -l` credits it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BinSample {
    /// First address of the line's code (link-time).
    pub address: u64,
    /// Its weight: the samples credited to it, in any unit (only proportions matter).
    pub count: u64,
    /// Its source line (0 when unknown).
    pub line: u32,
    /// Its source file when DWARF names one (code inlined from a header can differ from the
    /// function's own file).
    pub file: Option<String>,
}
