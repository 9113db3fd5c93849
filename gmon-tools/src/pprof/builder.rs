//! Building a pprof [`Profile`] from stacks and call counts, as `spec/stacks.md` §7 describes.

use std::collections::{BTreeMap, HashMap};

use super::proto::{Function, Line, Location, Mapping, Profile, Sample, ValueType};
use crate::model::{
    Executable, Frame, FunctionInfo, NodeId, Stack, StackSource, Stacks, WeightedCallGraph,
    frame_name, split_in_proportion,
};

/// Settings of the profile that do not come from the graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PprofOptions {
    /// Histogram ticks per second (`prof_rate`); sets the period. 0 when there was no histogram.
    pub prof_rate: u32,
    /// Extra lines for `comment` (e.g. the input files).
    pub comments: Vec<String>,
    /// Stacks whose weights are CPU nanoseconds (same graph): when given, CPU samples come
    /// from them and count samples from the stacks in samples; otherwise cpu = samples × period.
    pub cpu_stacks: Option<Stacks>,
}

/// What can go wrong building a profile.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PprofError {
    /// A count does not fit pprof's signed 64-bit values.
    #[error("{0} does not fit a signed 64-bit pprof value")]
    Overflow(&'static str),
}

/// The sample types, in value order.
pub const SAMPLE_TYPES: [(&str, &str); 3] = [
    ("samples", "count"),
    ("cpu", "nanoseconds"),
    ("calls", "count"),
];

/// Nanoseconds per histogram tick at `rate` ticks per second, rounded; 0 for rate 0.
pub fn period_nanos(rate: u32) -> i64 {
    if rate == 0 {
        return 0;
    }
    let r = i64::from(rate);
    (1_000_000_000 + r / 2) / r
}

/// The string table: strings numbered in the order they are first used, "" as entry 0.
#[derive(Debug)]
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings {
            table: Vec::new(),
            index: HashMap::new(),
        };
        s.id("");
        s
    }

    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = i64::try_from(self.table.len()).unwrap_or(i64::MAX);
        self.table.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

fn to_i64(v: u64, what: &'static str) -> Result<i64, PprofError> {
    i64::try_from(v).map_err(|_| PprofError::Overflow(what))
}

/// Builds the profile: one CPU sample per stack, one `calls` sample per arc with a non-zero
/// count, one function and one location per frame that occurs, one mapping for `exe`.
/// `functions` is indexed by [`NodeId`]; missing entries mean "nothing known".
pub fn build_profile(
    graph: &WeightedCallGraph,
    stacks: &Stacks,
    functions: &[FunctionInfo],
    exe: Option<&Executable>,
    opts: &PprofOptions,
) -> Result<Profile, PprofError> {
    let mut strings = Strings::new();
    let sample_type: Vec<ValueType> = SAMPLE_TYPES
        .iter()
        .map(|&(t, u)| ValueType {
            r#type: strings.id(t),
            unit: strings.id(u),
        })
        .collect();
    let period = period_nanos(opts.prof_rate);
    let period_type = ValueType {
        r#type: strings.id("cpu"),
        unit: strings.id("nanoseconds"),
    };
    let mut comments = Vec::new();
    match stacks.source {
        StackSource::Estimated => {
            comments.push(format!(
                "{}: gmon.out has a PC histogram and call counts, not stacks (algorithm: \
                 spec/stacks.md in the gmon sources)",
                stacks.source.description()
            ));
            comments.push(format!(
                "{} histogram samples outside every function are not in any sample",
                stacks.outside_samples
            ));
        }
        StackSource::Exact => comments.push(format!(
            "{}, recorded by the gmon-write runtime (the .gmonx sidecar)",
            stacks.source.description()
        )),
    }
    comments.push("call counts: sample type calls/count on [callee, caller] samples".to_owned());
    comments.extend(opts.comments.iter().cloned());

    let mapping = exe.map(|e| Mapping {
        id: 1,
        memory_start: 0,
        memory_limit: u64::MAX,
        file_offset: 0,
        filename: strings.id(&e.canonical_path()),
        build_id: strings.id(&e.build_id_hex().unwrap_or_default()),
        has_functions: true,
        has_filenames: true,
        has_line_numbers: true,
        has_inline_frames: false,
    });

    // Every frame that occurs, in a fixed order: functions by id, then cycles by number.
    let mut used: BTreeMap<Frame, u64> = BTreeMap::new();
    let cpu_only = opts
        .cpu_stacks
        .as_ref()
        .map_or(&[][..], |c| c.stacks.as_slice());
    for s in stacks.stacks.iter().chain(cpu_only) {
        for &f in &s.frames {
            used.insert(f, 0);
        }
    }
    let arcs: Vec<_> = graph.edges().filter(|e| e.calls > 0).collect();
    for e in &arcs {
        used.insert(Frame::Function(e.caller), 0);
        used.insert(Frame::Function(e.callee), 0);
    }
    let mut function = Vec::with_capacity(used.len());
    let mut location = Vec::with_capacity(used.len());
    let mut next_id = 1u64;
    for (frame, id) in used.iter_mut() {
        *id = next_id;
        next_id = next_id.saturating_add(1);
        let info = match frame {
            Frame::Function(NodeId(i)) => functions.get(*i).cloned().unwrap_or_default(),
            Frame::Cycle(_) => FunctionInfo::default(),
        };
        let name = if info.name.is_empty() {
            frame_name(graph, *frame)
        } else {
            info.name.clone()
        };
        // A cycle has no linker name: its system name stays empty. (Were it equal to the name,
        // pprof would take "<cycle 1>" for a demangled C++ name and strip the "<...>" from it.)
        let system = match frame {
            Frame::Cycle(_) => String::new(),
            Frame::Function(_) if info.system_name.is_empty() => name.clone(),
            Frame::Function(_) => info.system_name.clone(),
        };
        let f = Function {
            id: *id,
            name: strings.id(&name),
            system_name: strings.id(&system),
            filename: strings.id(info.file.as_deref().unwrap_or("")),
            start_line: i64::from(info.start_line),
        };
        function.push(f);
        location.push(Location {
            id: *id,
            mapping_id: if info.address.is_some() && mapping.is_some() {
                1
            } else {
                0
            },
            address: info.address.unwrap_or(0),
            line: vec![Line {
                function_id: *id,
                line: i64::from(info.start_line),
                column: 0,
            }],
            is_folded: false,
        });
    }
    let loc = |f: &Frame| used.get(f).copied().unwrap_or(0);

    // Leaf locations at histogram bins: (function id, bin address) -> location id, created in
    // the order the samples first use them.
    let mut bin_locations: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    // (function id, other file) -> id of the function's copy that names that file.
    let mut file_functions: BTreeMap<(u64, String), u64> = BTreeMap::new();
    let mut sample = Vec::with_capacity(stacks.stacks.len() + arcs.len());
    let mut emit = |s: &Stack, values: &dyn Fn(i64) -> Result<Vec<i64>, PprofError>| {
        let callers: Vec<u64> = s.frames.iter().rev().skip(1).map(loc).collect();
        let leaf = s.frames.last().copied();
        let bins = match (stacks.source, leaf) {
            (StackSource::Estimated, Some(Frame::Function(NodeId(i)))) => {
                functions.get(i).map(|f| f.bins.as_slice()).unwrap_or(&[])
            }
            _ => &[],
        };
        let weights: Vec<u64> = bins.iter().map(|b| b.count).collect();
        let shares = split_in_proportion(s.samples, &weights);
        let fid = leaf.as_ref().map_or(0, loc);
        let leaf_file = match leaf {
            Some(Frame::Function(NodeId(i))) => functions.get(i).and_then(|f| f.file.clone()),
            _ => None,
        };
        let mut parts: Vec<(u64, u64)> = Vec::new();
        if bins.is_empty() || shares.iter().all(|&x| x == 0) {
            parts.push((fid, s.samples));
        } else {
            for (b, share) in bins.iter().zip(shares) {
                if share == 0 {
                    continue;
                }
                // A line from another file (inlined from a header) belongs to a copy of the
                // function that names that file, so pprof shows the right file:line.
                let line_fn = match &b.file {
                    Some(file) if Some(file) != leaf_file.as_ref() => *file_functions
                        .entry((fid, file.clone()))
                        .or_insert_with(|| {
                            let id = next_id;
                            next_id = next_id.saturating_add(1);
                            let (name, system_name) = function
                                .iter()
                                .find(|f| f.id == fid)
                                .map_or((0, 0), |f| (f.name, f.system_name));
                            let filename = strings.id(file);
                            function.push(Function {
                                id,
                                name,
                                system_name,
                                filename,
                                start_line: 0,
                            });
                            id
                        }),
                    _ => fid,
                };
                let id = *bin_locations.entry((fid, b.address)).or_insert_with(|| {
                    let id = next_id;
                    next_id = next_id.saturating_add(1);
                    location.push(Location {
                        id,
                        mapping_id: if mapping.is_some() { 1 } else { 0 },
                        address: b.address,
                        line: vec![Line {
                            function_id: line_fn,
                            line: i64::from(b.line),
                            column: 0,
                        }],
                        is_folded: false,
                    });
                    id
                });
                parts.push((id, share));
            }
        }
        for (leaf_loc, n) in parts {
            let mut location_id = Vec::with_capacity(callers.len() + 1);
            location_id.push(leaf_loc);
            location_id.extend_from_slice(&callers);
            let value = values(to_i64(n, "a stack's weight")?)?;
            sample.push(Sample {
                location_id,
                value,
                label: Vec::new(),
            });
        }
        Ok::<(), PprofError>(())
    };
    match &opts.cpu_stacks {
        Some(cpu) => {
            for s in &stacks.stacks {
                emit(s, &|n| Ok(vec![n, 0, 0]))?;
            }
            for s in &cpu.stacks {
                emit(s, &|ns| Ok(vec![0, ns, 0]))?;
            }
        }
        None => {
            for s in &stacks.stacks {
                emit(s, &|n| {
                    let cpu = n
                        .checked_mul(period)
                        .ok_or(PprofError::Overflow("a CPU time"))?;
                    Ok(vec![n, cpu, 0])
                })?;
            }
        }
    }
    for e in &arcs {
        sample.push(Sample {
            location_id: vec![
                loc(&Frame::Function(e.callee)),
                loc(&Frame::Function(e.caller)),
            ],
            value: vec![0, 0, to_i64(e.calls, "a call count")?],
            label: Vec::new(),
        });
    }
    let comment: Vec<i64> = comments.iter().map(|c| strings.id(c)).collect();
    let default_sample_type = strings.id("cpu");
    Ok(Profile {
        sample_type,
        sample,
        mapping: mapping.into_iter().collect(),
        location,
        function,
        string_table: strings.table,
        period_type: Some(period_type),
        period,
        comment,
        default_sample_type,
        ..Profile::default()
    })
}

/// Encodes a profile as gzip'd protobuf, the form pprof reads (the gzip header carries no
/// time stamp or file name, so the bytes depend on the profile only).
pub fn encode_gzip(profile: &Profile) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let raw = prost::Message::encode_to_vec(profile);
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw)?;
    gz.finish()
}
