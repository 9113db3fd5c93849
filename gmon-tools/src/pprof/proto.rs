//! The messages of `profile.proto` (package `perftools.profiles`), written by hand with prost's
//! derive so that building needs no `protoc`. Field numbers and types follow the upstream
//! google/pprof `proto/profile.proto`; `tests/it/pprof.rs` checks them against encoded bytes.

/// `Profile`: the whole profile.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    /// What each value of a sample measures, one entry per value.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// Mapped binaries; by convention the first is the main executable.
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// Locations the samples refer to.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// Functions the locations refer to.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Every string of the profile; entry 0 must be "".
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// Index of a regex of frames to drop.
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Index of a regex of frames to keep.
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// Start of collection, nanoseconds since the epoch.
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// Length of collection in nanoseconds.
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// What one period counts.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// Events between samples.
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Indices of free-form comments for people.
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// Index of the `type` of the preferred sample value.
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
    /// Index of a documentation URL.
    #[prost(int64, tag = "15")]
    pub doc_url: i64,
}

/// `ValueType`: a kind of value and its unit, as string indices.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct ValueType {
    /// Index of the type, e.g. "cpu".
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// Index of the unit, e.g. "nanoseconds".
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// `Sample`: a stack and its values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// Location ids, leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Extra information.
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// `Label`: a key with a string or a number.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Label {
    /// Index of the key.
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// Index of a string value.
    #[prost(int64, tag = "2")]
    pub str: i64,
    /// A numeric value.
    #[prost(int64, tag = "3")]
    pub num: i64,
    /// Index of the unit of `num`.
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// `Mapping`: a mapped binary.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Mapping {
    /// Non-zero unique id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// First address of the mapping.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// End of the mapping.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// File offset of `memory_start`.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// Index of the file's path.
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// Index of the build id (hex of the GNU build-id note).
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Functions are already filled in.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// File names are already filled in.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// Line numbers are already filled in.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// Inlined frames are already filled in.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// `Location`: an address and the source lines it stands for.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Location {
    /// Non-zero unique id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The mapping it is in, 0 for none.
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// The instruction address.
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// Lines, inlined first, the outermost function last.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    /// Identical code folding merged several functions here.
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

/// `Line`: a function and a line in it.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Line {
    /// The function's id.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// Line number, 0 when unknown.
    #[prost(int64, tag = "2")]
    pub line: i64,
    /// Column number, 0 when unknown.
    #[prost(int64, tag = "3")]
    pub column: i64,
}

/// `Function`: a function's names and where its source starts.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Function {
    /// Non-zero unique id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Index of the human-readable (demangled) name.
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// Index of the name as the linker knows it (mangled).
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Index of the source file name.
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// Line of the function's start.
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}
