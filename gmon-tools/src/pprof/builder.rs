//! Building a pprof [`Profile`] from stacks and call counts, as `spec/stacks.md` §7 describes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::proto::{Function, Line, Location, Mapping, Profile, Sample, ValueType};
use crate::model::{
    Executable, Frame, FunctionInfo, InlineChain, InlinedFrame, LoadedObject, NodeId, PlacedStack,
    Stack, StackSource, Stacks, WeightedCallGraph, executable_object, frame_name,
    split_in_proportion,
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
    /// The objects addresses are placed in ([`crate::model::Loaded::objects`]); empty: the
    /// executable alone, at its link-time addresses.
    pub objects: Vec<LoadedObject>,
    /// `time_nanos`: when the run started, nanoseconds since the epoch (0: unknown).
    pub time_nanos: i64,
    /// `duration_nanos`: how long it was sampled (0: unknown).
    pub duration_nanos: i64,
    /// The inline chains of the addresses, by (object path, link-time address)
    /// ([`crate::model::profile_inline_chains`]); empty: no inline frames.
    pub inline: BTreeMap<(String, u64), InlineChain>,
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

/// The profile's mappings (spec/stacks.md §7, "Mappings"): one per code range of each object
/// that a location uses, the main executable's first; and `[unknown]` mappings over the
/// addresses outside every object, one per run of them that no object's code interrupts.
struct Mappings<'a> {
    objects: &'a [LoadedObject],
    /// (object index, range index) -> mapping id; `None` as object: an `[unknown]` run.
    ids: BTreeMap<(Option<usize>, usize), u64>,
    /// Runs of the addresses outside every object, `[lo, hi)`, ascending.
    unknown: Vec<(u64, u64)>,
}

impl<'a> Mappings<'a> {
    fn new(objects: &'a [LoadedObject], placed: &[PlacedStack]) -> Self {
        let mut m = Mappings {
            objects,
            ids: BTreeMap::new(),
            unknown: Vec::new(),
        };
        // The main executable's mappings come first, used or not: pprof takes the first
        // mapping for the program.
        if let Some(main) = objects.iter().position(|o| o.main) {
            for r in 0..objects.get(main).map_or(0, |o| o.code.len()) {
                m.id(Some(main), r);
            }
        }
        let mut unknown: Vec<u64> = placed
            .iter()
            .flat_map(|s| s.places.iter().flatten())
            .filter(|p| p.object.is_none())
            .map(|p| p.address)
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        // A run ends where an object's code lies between two addresses (mappings must not
        // overlap) or after a gap of more than 1 MiB (separate regions of generated code).
        let code: Vec<(u64, u64)> = objects
            .iter()
            .flat_map(|o| o.code.iter().map(|r| (r.start, r.end)))
            .collect();
        for a in unknown {
            let end = a.saturating_add(1);
            match m.unknown.last_mut() {
                Some((_, hi))
                    if a - *hi < 1 << 20 && !code.iter().any(|&(s, _)| *hi <= s && s <= a) =>
                {
                    *hi = end
                }
                _ => m.unknown.push((a, end)),
            }
        }
        m
    }

    fn id(&mut self, object: Option<usize>, range: usize) -> u64 {
        let next = u64::try_from(self.ids.len()).unwrap_or(u64::MAX - 1) + 1;
        *self.ids.entry((object, range)).or_insert(next)
    }

    /// The mapping and the placed address of a link-time address of the object named `path`
    /// (`None`: outside every object, a runtime address); mapping 0 when no object's code
    /// holds it.
    fn place(&mut self, path: Option<&str>, address: u64) -> (u64, u64) {
        let Some(path) = path else {
            return match self
                .unknown
                .iter()
                .position(|&(lo, hi)| lo <= address && address < hi)
            {
                Some(run) => (self.id(None, run), address),
                None => (0, address),
            };
        };
        let Some(k) = self.objects.iter().position(|o| o.path == path) else {
            return (0, address);
        };
        let Some(o) = self.objects.get(k) else {
            return (0, address);
        };
        let placed = address.wrapping_add(o.bias);
        match o
            .code
            .iter()
            .position(|r| r.start <= placed && placed < r.end)
        {
            Some(r) => (self.id(Some(k), r), placed),
            None => (0, placed),
        }
    }

    /// The mappings, in id order. `used` says per mapping id whether a location uses it and
    /// what its locations were given: (functions, file names, line numbers).
    fn finish(
        self,
        strings: &mut Strings,
        filled: &BTreeMap<u64, (bool, bool, bool)>,
    ) -> Vec<Mapping> {
        let mut by_id: Vec<((Option<usize>, usize), u64)> = self.ids.into_iter().collect();
        by_id.sort_by_key(|&(_, id)| id);
        by_id
            .into_iter()
            .filter_map(|((object, range), id)| {
                let (functions, files, lines) = filled.get(&id).copied().unwrap_or_default();
                let (start, limit, offset, file, build_id) = match object {
                    None => {
                        let &(lo, hi) = self.unknown.get(range)?;
                        (lo, hi, 0, "[unknown]".to_owned(), String::new())
                    }
                    Some(k) => {
                        let o = self.objects.get(k)?;
                        let r = o.code.get(range)?;
                        (
                            r.start,
                            r.end,
                            r.file_offset,
                            o.path.clone(),
                            o.build_id_hex(),
                        )
                    }
                };
                Some(Mapping {
                    id,
                    memory_start: start,
                    memory_limit: limit,
                    file_offset: offset,
                    filename: strings.id(&file),
                    build_id: strings.id(&build_id),
                    has_functions: functions,
                    has_filenames: files,
                    has_line_numbers: lines,
                    has_inline_frames: false,
                })
            })
            .collect()
    }
}

/// What the samples refer to, filled as they first use it.
struct Tables<'a> {
    strings: Strings,
    function: Vec<Function>,
    next_function: u64,
    /// Function id of every frame that occurs.
    used: &'a BTreeMap<Frame, u64>,
    functions: &'a [FunctionInfo],
    /// The main executable's path, the object of the executable's functions.
    main_path: Option<&'a str>,
    mappings: Mappings<'a>,
    location: Vec<Location>,
    /// (mapping, address, function, line) -> location id.
    location_ids: BTreeMap<(u64, u64, u64, i64), u64>,
    /// Per mapping id: whether its locations were given functions, file names, line numbers.
    filled: BTreeMap<u64, (bool, bool, bool)>,
    /// (function id, other file) -> id of the function's copy that names that file.
    file_functions: BTreeMap<(u64, String), u64>,
    /// The inline chains of addresses, by (object path, link-time address).
    inline: &'a BTreeMap<(String, u64), InlineChain>,
    /// (name, system name, file) of an inlined function -> its id.
    inlined_functions: BTreeMap<(String, String, String), u64>,
    /// The mappings with a location whose inline chain was expanded.
    inline_mappings: BTreeSet<u64>,
}

impl<'a> Tables<'a> {
    /// What is known of the function of `frame` (nothing for a cycle).
    fn info(&self, frame: Frame) -> Option<&'a FunctionInfo> {
        match frame {
            Frame::Function(NodeId(i)) => self.functions.get(i),
            Frame::Cycle(_) => None,
        }
    }

    /// The function id of `frame` on a line of `file`: a line from another file than the
    /// function's (e.g. inlined from a header) belongs to a copy of the function that names
    /// that file, so that pprof shows the right file:line.
    fn function_in(&mut self, frame: Frame, file: Option<&str>) -> u64 {
        let fid = self.used.get(&frame).copied().unwrap_or(0);
        let own_file = match frame {
            Frame::Function(NodeId(i)) => self.functions.get(i).and_then(|f| f.file.as_deref()),
            Frame::Cycle(_) => None,
        };
        let Some(file) = file.filter(|&f| Some(f) != own_file) else {
            return fid;
        };
        if let Some(&id) = self.file_functions.get(&(fid, file.to_owned())) {
            return id;
        }
        let id = self.next_function;
        self.next_function = self.next_function.saturating_add(1);
        let (name, system_name) = self
            .function
            .iter()
            .find(|f| f.id == fid)
            .map_or((0, 0), |f| (f.name, f.system_name));
        let filename = self.strings.id(file);
        self.function.push(Function {
            id,
            name,
            system_name,
            filename,
            start_line: 0,
        });
        self.file_functions.insert((fid, file.to_owned()), id);
        id
    }

    /// The location of `frame` at the link-time `address` of the object named `object`
    /// (`None`: outside every object, a runtime address), on `line` of `file`.
    fn locate(
        &mut self,
        frame: Frame,
        object: Option<&str>,
        address: u64,
        line: u32,
        file: Option<&str>,
    ) -> u64 {
        // Code inlined here: the frame's own line is the call's, the inlined functions come
        // before it (spec/stacks.md §7, "Inline frames").
        let chain = object.and_then(|o| self.inline.get(&(o.to_owned(), address)));
        let (line, file) = match chain {
            Some(c) => (c.call_line, self.call_file(frame, c.call_file.as_deref())),
            None => (line, file),
        };
        let line_fn = self.function_in(frame, file);
        let (mapping_id, address) = match (address, frame) {
            (0, _) | (_, Frame::Cycle(_)) => (0, 0),
            _ => self.mappings.place(object, address),
        };
        let line = i64::from(line);
        let next = u64::try_from(self.location.len()).unwrap_or(u64::MAX - 1) + 1;
        let id = *self
            .location_ids
            .entry((mapping_id, address, line_fn, line))
            .or_insert(next);
        if id != next {
            return id;
        }
        let mut lines = Vec::new();
        for f in chain.map_or(&[][..], |c| c.inlined.as_slice()) {
            lines.push(Line {
                function_id: self.inlined_function(f),
                line: i64::from(f.line),
                column: 0,
            });
        }
        if chain.is_some() && mapping_id != 0 {
            self.inline_mappings.insert(mapping_id);
        }
        lines.push(Line {
            function_id: line_fn,
            line,
            column: 0,
        });
        self.location.push(Location {
            id,
            mapping_id,
            address,
            line: lines,
            is_folded: false,
        });
        if mapping_id != 0 {
            let info = self.info(frame);
            // Names made up from the object (`[libc.so.6]`) are no function names.
            let named = info.is_some_and(|i| !i.name.starts_with('['));
            let own_file = info.and_then(|i| i.file.as_deref());
            let has_file = file.or(own_file).is_some_and(|f| !f.is_empty());
            let e = self.filled.entry(mapping_id).or_default();
            *e = (e.0 || named, e.1 || has_file, e.2 || line != 0);
        }
        id
    }

    /// The file of a call in `frame`'s function: its own file when DWARF names the same file
    /// (the line tables and the inline entries can spell one file differently).
    fn call_file<'f>(&self, frame: Frame, call_file: Option<&'f str>) -> Option<&'f str>
    where
        'a: 'f,
    {
        let own = self.info(frame).and_then(|i| i.file.as_deref());
        match (own, call_file) {
            (Some(own), Some(call)) if call == own || call.ends_with(&format!("/{own}")) => {
                Some(own)
            }
            (_, call) => call,
        }
    }

    /// The function id of an inlined function, one per (name, file).
    fn inlined_function(&mut self, f: &InlinedFrame) -> u64 {
        let key = (
            f.name.clone(),
            f.system_name.clone(),
            f.file.clone().unwrap_or_default(),
        );
        if let Some(&id) = self.inlined_functions.get(&key) {
            return id;
        }
        let id = self.next_function;
        self.next_function = self.next_function.saturating_add(1);
        let function = Function {
            id,
            name: self.strings.id(&key.0),
            system_name: self.strings.id(&key.1),
            filename: self.strings.id(&key.2),
            start_line: 0,
        };
        self.function.push(function);
        self.inlined_functions.insert(key, id);
        id
    }

    /// The location of `frame` at its function's start: in the executable, or in the shared
    /// object it is in; without an address for a cycle or a frame of no known code.
    fn at_start(&mut self, frame: Frame) -> u64 {
        let info = self.info(frame);
        let (object, address) = match info.map(|i| (&i.object, i.address)) {
            Some((Some((path, start)), _)) => (Some(path.as_str()), *start),
            Some((None, Some(a))) => (self.main_path, a),
            _ => (None, 0),
        };
        self.locate(
            frame,
            object,
            address,
            info.map_or(0, |i| i.start_line),
            None,
        )
    }
}

/// Builds the profile: CPU samples from the stacks (with exact stacks, every frame at its
/// sampled address; with estimated ones, each leaf split over its function's histogram
/// pieces), one `calls` sample per arc with a non-zero count, one function per frame that
/// occurs, one location per address used, one mapping per object's code range used.
/// `functions` is indexed by [`NodeId`]; missing entries mean "nothing known". Without
/// [`PprofOptions::objects`], the objects are `exe` alone at its link-time addresses.
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

    let exe_objects: Vec<LoadedObject>;
    let objects: &[LoadedObject] = if opts.objects.is_empty() {
        exe_objects = exe
            .map(|e| {
                executable_object(
                    &e.canonical_path(),
                    e.build_id.as_ref().map_or(&[][..], |b| b.0.as_slice()),
                    &e.text,
                )
            })
            .into_iter()
            .collect();
        &exe_objects
    } else {
        &opts.objects
    };
    let main_path = objects.iter().find(|o| o.main).map(|o| o.path.as_str());
    let mappings = Mappings::new(objects, &stacks.placed);

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
    let mut next_function = 1u64;
    for (frame, id) in used.iter_mut() {
        *id = next_function;
        next_function = next_function.saturating_add(1);
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
        function.push(Function {
            id: *id,
            name: strings.id(&name),
            system_name: strings.id(&system),
            filename: strings.id(info.file.as_deref().unwrap_or("")),
            start_line: i64::from(info.start_line),
        });
    }

    let mut t = Tables {
        strings,
        function,
        next_function,
        used: &used,
        functions,
        main_path,
        mappings,
        location: Vec::new(),
        location_ids: BTreeMap::new(),
        filled: BTreeMap::new(),
        file_functions: BTreeMap::new(),
        inline: &opts.inline,
        inlined_functions: BTreeMap::new(),
        inline_mappings: BTreeSet::new(),
    };
    let mut sample = Vec::with_capacity(stacks.stacks.len() + arcs.len());
    let cpu_of = |n: i64| -> Result<Vec<i64>, PprofError> {
        let cpu = n
            .checked_mul(period)
            .ok_or(PprofError::Overflow("a CPU time"))?;
        Ok(vec![n, cpu, 0])
    };
    if !stacks.placed.is_empty() {
        // Exact stacks: every frame at the address it was sampled at.
        for s in &stacks.placed {
            let mut location_id = Vec::with_capacity(s.frames.len());
            for (&frame, place) in s.frames.iter().zip(&s.places).rev() {
                location_id.push(match place {
                    Some(p) => t.locate(
                        frame,
                        p.object.as_deref(),
                        p.address,
                        p.line,
                        p.file.as_deref(),
                    ),
                    None => t.at_start(frame),
                });
            }
            sample.push(Sample {
                location_id,
                value: cpu_of(to_i64(s.samples, "a stack's weight")?)?,
                label: Vec::new(),
            });
        }
    } else {
        let mut emit = |s: &Stack,
                        values: &dyn Fn(i64) -> Result<Vec<i64>, PprofError>,
                        t: &mut Tables<'_>| {
            let callers: Vec<u64> = s
                .frames
                .iter()
                .rev()
                .skip(1)
                .map(|&f| t.at_start(f))
                .collect();
            let Some(&leaf) = s.frames.last() else {
                return Ok(());
            };
            // The leaf's samples split over where its function's samples fell: the
            // histogram's pieces, else the `gprof -l` line entries.
            let bins = match (stacks.source, leaf) {
                (StackSource::Estimated, Frame::Function(NodeId(i))) => {
                    functions.get(i).map_or(&[][..], |f| f.leaf_pieces())
                }
                _ => &[],
            };
            let weights: Vec<u64> = bins.iter().map(|b| b.count).collect();
            let shares = split_in_proportion(s.samples, &weights);
            let mut parts: Vec<(u64, u64)> = Vec::new();
            if bins.is_empty() || shares.iter().all(|&x| x == 0) {
                parts.push((t.at_start(leaf), s.samples));
            } else {
                for (b, share) in bins.iter().zip(shares) {
                    if share == 0 {
                        continue;
                    }
                    let id = t.locate(leaf, t.main_path, b.address, b.line, b.file.as_deref());
                    parts.push((id, share));
                }
            }
            for (leaf_loc, n) in parts {
                let mut location_id = Vec::with_capacity(callers.len() + 1);
                location_id.push(leaf_loc);
                location_id.extend_from_slice(&callers);
                sample.push(Sample {
                    location_id,
                    value: values(to_i64(n, "a stack's weight")?)?,
                    label: Vec::new(),
                });
            }
            Ok::<(), PprofError>(())
        };
        match &opts.cpu_stacks {
            Some(cpu) => {
                for s in &stacks.stacks {
                    emit(s, &|n| Ok(vec![n, 0, 0]), &mut t)?;
                }
                for s in &cpu.stacks {
                    emit(s, &|ns| Ok(vec![0, ns, 0]), &mut t)?;
                }
            }
            None => {
                for s in &stacks.stacks {
                    emit(s, &cpu_of, &mut t)?;
                }
            }
        }
    }
    for e in &arcs {
        let callee = t.at_start(Frame::Function(e.callee));
        let caller = t.at_start(Frame::Function(e.caller));
        sample.push(Sample {
            location_id: vec![callee, caller],
            value: vec![0, 0, to_i64(e.calls, "a call count")?],
            label: Vec::new(),
        });
    }
    let mut strings = t.strings;
    let mut mapping = t.mappings.finish(&mut strings, &t.filled);
    for m in &mut mapping {
        m.has_inline_frames = t.inline_mappings.contains(&m.id);
    }
    let comment: Vec<i64> = comments.iter().map(|c| strings.id(c)).collect();
    let default_sample_type = strings.id("cpu");
    Ok(Profile {
        sample_type,
        sample,
        mapping,
        location: t.location,
        function: t.function,
        string_table: strings.table,
        time_nanos: opts.time_nanos,
        duration_nanos: opts.duration_nanos,
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
