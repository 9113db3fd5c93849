//! The runtime's sidecar file (`<gmon path>.gmonx`): what GNU gmon.out cannot hold.
//!
//! GNU gprof 2.40 stops on any record tag other than 0, 1 and 2 ("found bad tag"), and tag-2
//! records change its `-l` output, so the data the gmon-write runtime records beyond the main
//! executable's histogram lives in a separate file written next to gmon.out:
//!
//! * the writer, the sampling rate, the pid and the sample counters ([`Sidecar`]);
//! * every object mapped when the profile was written — the main executable first — with its
//!   path, GNU build id, load bias and executable ranges ([`MappedObject`]);
//! * every sampled program counter with its count, in every object ([`PcSample`]);
//! * sampled call stacks as arrays of program counters, leaf first ([`StackSample`]);
//! * per-thread sample totals ([`ThreadTotal`]);
//! * how each stack was obtained and whether it is complete ([`StackKind`], one per stack);
//! * the length and FNV-1a hash of the gmon.out it belongs to ([`GmonLink`]), so a reader can
//!   tell a stale sidecar from a matching one.
//!
//! All addresses in the sidecar are **runtime** addresses (what the program counter held);
//! [`Sidecar::resolve`] finds the object and turns one into a link-time address (runtime
//! address − load bias), which is what symbol tables and gmon.out use.
//!
//! Layout (all integers little-endian, byte-exact description in `spec/runtime.md`):
//!
//! ```text
//! file    = magic "gmonext\0" (8) | version u32 (= 1) | flags u32 (= 0) | section*
//! section = kind u32 | length u64 | body (length bytes)
//! ```
//!
//! Sections may come in any order; a reader skips kinds it does not know, so later writers can
//! add sections without breaking old readers. Each known kind may appear at most once.
//!
//! This module is sans-IO: it parses `&[u8]` and writes into `impl Write`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

mod sections;
mod sum;
pub use sections::{SectionSpan, read_sidecar_sections, sidecar_sections};
pub use sum::{SidecarSum, merge_clocks, merge_sidecars};

/// The eight bytes that open a sidecar file.
pub const GMONX_MAGIC: [u8; 8] = *b"gmonext\0";
/// The version of the sidecar layout this module reads and writes.
pub const GMONX_VERSION: u32 = 1;
/// What [`Error::UnsupportedVersion`] says a sidecar's version should be ([`GMONX_VERSION`]).
const SIDECAR_VERSION_TEXT: &str = "sidecar version 1";
/// The file name suffix appended to the gmon.out path (see [`sidecar_path`]).
pub const GMONX_SUFFIX: &str = ".gmonx";

/// Section kind of [`Sidecar`]'s scalar fields (`SECTION_INFO`).
pub const SECTION_INFO: u32 = 1;
/// Section kind of the mapped objects (`SECTION_OBJECTS`).
pub const SECTION_OBJECTS: u32 = 2;
/// Section kind of the per-PC sample counts (`SECTION_PC_SAMPLES`).
pub const SECTION_PC_SAMPLES: u32 = 3;
/// Section kind of the sampled call stacks (`SECTION_STACKS`).
pub const SECTION_STACKS: u32 = 4;
/// Section kind of the per-thread totals (`SECTION_THREADS`).
pub const SECTION_THREADS: u32 = 5;
/// Section kind of the link to the gmon.out file (`SECTION_GMON_LINK`).
pub const SECTION_GMON_LINK: u32 = 6;
/// Section kind of the per-stack [`StackKind`]s (`SECTION_STACK_KINDS`), added after the first
/// writers: readers that predate it skip it.
pub const SECTION_STACK_KINDS: u32 = 7;
/// Section kind of the sampling clock's report ([`ClockReport`], `SECTION_CLOCK`), added
/// after [`SECTION_STACK_KINDS`]: readers that predate it skip it.
pub const SECTION_CLOCK: u32 = 8;
/// Section kind of the further executable mappings of the objects' files
/// ([`ObjectMapping`], `SECTION_MAPPINGS`), added after [`SECTION_CLOCK`]: readers that predate
/// it skip it (and name those addresses `[unknown]`).
pub const SECTION_MAPPINGS: u32 = 9;
/// Section kind of the number of processes and threads a sidecar covers ([`ProcessCount`],
/// `SECTION_PROCESSES`), added with [`SECTION_MAPPINGS`]: readers that predate it skip it.
pub const SECTION_PROCESSES: u32 = 10;
/// Section kind of the CPU time no clock of the program saw, by cause
/// ([`ClockReport::before_start_ns`], [`ClockReport::runtime_ns`]; `SECTION_UNCLOCKED`),
/// added after [`SECTION_PROCESSES`]: readers that predate it skip it.
pub const SECTION_UNCLOCKED: u32 = 11;
/// Section kind of the time the runtime sampled the image ([`SamplingWindow`],
/// `SECTION_WINDOW`), added after [`SECTION_UNCLOCKED`]: readers that predate it skip it.
pub const SECTION_WINDOW: u32 = 12;
/// Section kind of the times each thread's clock ran ([`ThreadClocks`], `SECTION_THREAD_CLOCKS`),
/// added after [`SECTION_WINDOW`]: readers that predate it skip it.
pub const SECTION_THREAD_CLOCKS: u32 = 13;
/// The last section kind this reader knows (each known kind may appear once).
const LAST_KNOWN_SECTION: u32 = SECTION_THREAD_CLOCKS;

/// The clock that drove the samples (spec/runtime.md §4.1, "Clock"; §5.11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClockKind(pub u32);

impl ClockKind {
    /// Not said.
    pub const UNKNOWN: ClockKind = ClockKind(0);
    /// One POSIX CPU-time timer per thread, checked by the kernel at its tick.
    pub const THREAD_TIMER: ClockKind = ClockKind(1);
    /// One `perf_event_open` task clock per thread (a high-resolution timer).
    pub const PERF_TASK_CLOCK: ClockKind = ClockKind(2);

    /// How the summary names it.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::THREAD_TIMER => "thread CPU timer",
            ClockKind::PERF_TASK_CLOCK => "perf task clock",
            _ => "unknown clock",
        }
    }
}

/// What the sampling clock did (`SECTION_CLOCK`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClockReport {
    /// The clock in use when the profile was written.
    pub clock: ClockKind,
    /// Why the perf task clock was not used: the `errno` of its refusal, 0 when it was used or
    /// not asked for.
    pub refused_errno: u32,
    /// Sample signals taken (each counts one tick, or `1 + overrun` with the timer): with the
    /// CPU time, the rate the clock really ran at.
    pub signals: u64,
    /// Ticks due from CPU time no clock saw with a PC to give it: threads that ended before
    /// their first sample, and the start-up of threads before their clocks ran.
    pub unsampled: u64,
    /// CPU time (ns) of a process image before the runtime started sampling it: the `exec`,
    /// the dynamic loader, the constructors that ran first (spec/runtime.md §4.5, "What no
    /// clock sees"). Written in the UNCLOCKED section (§5.15); 0 when not said.
    pub before_start_ns: u64,
    /// CPU time (ns) of the runtime's own work that no clock sees: its start in an image before
    /// the first clock runs, and its threads (the unwinder, the watcher), which are never
    /// sampled. Part of the process's CPU time, not of the program's work (§5.15).
    pub runtime_ns: u64,
}

/// A further executable mapping of an object's file, beyond the object's own segments
/// (spec/runtime.md §5.13): the program mapped part of the file again, at another address
/// (V8 maps its builtins from the node binary a second time). Its addresses are named from the
/// object, through their own load bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectMapping {
    /// Index of the object in [`Sidecar::objects`].
    pub object: u32,
    /// The runtime addresses it covers.
    pub range: AddressRange,
    /// Offset in the object's file of the byte at `range.start`.
    pub file_offset: u64,
    /// Runtime − link-time address in this mapping: what subtracting from an address in it
    /// gives the object's link-time address (the `PT_LOAD` segment whose file bytes it maps).
    pub load_bias: u64,
}

/// When one process image's clocks ran (spec/runtime.md §5.16): `CLOCK_MONOTONIC` times, in
/// ns, of the session's start and of the write that made the file. What an observer outside
/// the process sampled in that window the runtime sampled too; what it sampled outside the
/// window (the exec, the dynamic loader, the exit) no clock of the runtime saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SamplingWindow {
    /// When the session started (its first clock was being armed).
    pub start_ns: u64,
    /// When the profile was written (the clocks had stopped, or a flush read them running).
    pub end_ns: u64,
}

/// When one thread's clock ran (spec/runtime.md §5.17): `CLOCK_MONOTONIC` times, in ns, from
/// the moment it was armed to the moment it was deleted (or the file was written, for a clock
/// still running). A tick of the thread between the two was the runtime's to sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ThreadClock {
    /// The thread.
    pub tid: u32,
    /// When its clock started.
    pub start_ns: u64,
    /// When its clock stopped.
    pub end_ns: u64,
}

/// Every thread clock one process image ran (spec/runtime.md §5.17): what tells an observer
/// outside the process the time a thread spent before its clock was armed (its start) or after
/// it was deleted (its end) from the time the runtime sampled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ThreadClocks {
    /// Clocks the runtime could not list (its table was full): when not 0, the list is not the
    /// whole story and a reader must not conclude that a thread was unclocked.
    pub dropped: u64,
    /// The clocks, in no particular order; a thread id may appear several times (a clock
    /// deleted and armed again, or a thread id reused).
    pub clocks: Vec<ThreadClock>,
}

/// How many processes and threads a sidecar covers (spec/runtime.md §5.14): 1 and the threads
/// the runtime armed a clock for in one process's file; the sums of the inputs in a summed one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProcessCount {
    /// Processes whose samples the sidecar holds.
    pub processes: u64,
    /// Threads of those processes that were sampled.
    pub threads: u64,
}

/// Bit of [`MappedObject::flags`]: this is the main executable (the first `dl_iterate_phdr`
/// entry).
pub const OBJECT_FLAG_MAIN: u32 = 1;
/// Bit of [`MappedObject::flags`]: the kernel's vDSO (no file on disk).
pub const OBJECT_FLAG_VDSO: u32 = 2;

/// Returns the sidecar path for a gmon.out path: the same path with `.gmonx` appended
/// (`gmon.out` → `gmon.out.gmonx`, `prof.1234` → `prof.1234.gmonx`).
pub fn sidecar_path(gmon: &Path) -> PathBuf {
    let mut s = gmon.as_os_str().to_owned();
    s.push(GMONX_SUFFIX);
    PathBuf::from(s)
}

/// A runtime-address range `[start, end)` of an object's executable segment (`PT_LOAD` with
/// `PF_X`, plus the load bias).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AddressRange {
    /// First runtime address in the range.
    pub start: u64,
    /// One past the last runtime address.
    pub end: u64,
}

impl AddressRange {
    /// Whether `addr` is inside the range.
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }
}

/// One loaded ELF object (`struct dl_phdr_info` at the time the profile was written).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MappedObject {
    /// Absolute path of the file (`/proc/self/exe` resolved for the main executable; the loader's
    /// name for libraries; `linux-vdso.so.1` style names for the vDSO).
    pub path: String,
    /// Contents of the `NT_GNU_BUILD_ID` note, empty when the object has none.
    pub build_id: Vec<u8>,
    /// `dlpi_addr`: runtime address − link-time address (0 for a non-PIE executable).
    pub load_bias: u64,
    /// [`OBJECT_FLAG_MAIN`], [`OBJECT_FLAG_VDSO`]; other bits are reserved (written 0, ignored).
    pub flags: u32,
    /// Executable ranges, in runtime addresses.
    pub ranges: Vec<AddressRange>,
}

impl MappedObject {
    /// Whether this is the main executable.
    pub fn is_main(&self) -> bool {
        self.flags & OBJECT_FLAG_MAIN != 0
    }

    /// Whether a runtime address falls in one of the executable ranges.
    pub fn contains(&self, addr: u64) -> bool {
        self.ranges.iter().any(|r| r.contains(addr))
    }

    /// The build id as lowercase hex (what `file`/`readelf -n` print), empty when none.
    pub fn build_id_hex(&self) -> String {
        self.build_id.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// How many times the program counter was sampled at one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PcSample {
    /// The runtime address.
    pub pc: u64,
    /// Number of clock ticks attributed to it (timer overruns included).
    pub count: u64,
}

/// A sampled call stack and how many ticks it received.
///
/// `pcs[0]` is the interrupted program counter; `pcs[1..]` are return addresses read from the
/// frame-pointer chain (each points just after a call instruction: subtract 1 before looking up
/// a line). The stack may be cut short (see [`Counters::truncated_stacks`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StackSample {
    /// Ticks attributed to this exact stack.
    pub count: u64,
    /// Runtime addresses, leaf first.
    pub pcs: Vec<u64>,
}

/// How a sampled stack was obtained, and whether it is known to be complete
/// (`spec/runtime.md` §4.4, §5.10). Values other than the constants below may be written by
/// later runtimes; treat them like [`StackKind::UNKNOWN`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackKind(pub u8);

impl StackKind {
    /// Not said (a sidecar written before stack kinds existed).
    pub const UNKNOWN: StackKind = StackKind(0);
    /// Exact: every frame was unwound with the objects' DWARF call-frame information
    /// (`.eh_frame`) up to the outermost frame (`_start` or the thread's start routine).
    pub const COMPLETE: StackKind = StackKind(1);
    /// Walked (at least partly) through frame pointers and ended where the chain ended: a
    /// function built without frame pointers may hide its caller.
    pub const FRAME_POINTER: StackKind = StackKind(2);
    /// Cut short: the depth limit, the stack snapshot's end, or an unreadable frame.
    pub const TRUNCATED: StackKind = StackKind(3);
    /// The program counter alone, sampled from outside the process while no clock of the
    /// runtime ran (the exec, the dynamic loader, the exit: `gmon record`'s outer clock,
    /// spec/runtime.md §4.7). Its callers are unknown.
    pub const OUTSIDE: StackKind = StackKind(4);

    /// A short name for reports: `complete`, `frame-pointer`, `truncated`, `outside` or
    /// `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            StackKind::COMPLETE => "complete",
            StackKind::FRAME_POINTER => "frame-pointer",
            StackKind::TRUNCATED => "truncated",
            StackKind::OUTSIDE => "outside",
            _ => "unknown",
        }
    }
}

/// Samples taken on one thread (by kernel thread id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadTotal {
    /// The kernel thread id (`gettid()`).
    pub tid: u32,
    /// Ticks taken on it.
    pub samples: u64,
}

/// Counters the runtime kept while sampling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Every tick counted (a timer overrun of *n* counts *n* + 1 ticks).
    pub samples: u64,
    /// Ticks whose PC fell outside the gmon.out histogram's range (other objects, kernel).
    pub outside_histogram: u64,
    /// Ticks dropped because a table was full or the handler was busy.
    pub dropped: u64,
    /// Stacks cut short (frame chain left the stack, or the depth limit was reached).
    pub truncated_stacks: u64,
    /// Histogram bins that reached 65535 and stopped counting (saturated, never wrapped).
    pub saturated_bins: u64,
}

/// Ties a sidecar to the gmon.out written with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GmonLink {
    /// Length of the gmon.out file in bytes.
    pub length: u64,
    /// 64-bit FNV-1a hash of the whole gmon.out file (see [`fnv1a64`]).
    pub fnv1a64: u64,
}

impl GmonLink {
    /// The link for the given gmon.out bytes.
    pub fn of(gmon: &[u8]) -> GmonLink {
        GmonLink {
            length: gmon.len() as u64,
            fnv1a64: fnv1a64(gmon),
        }
    }
}

/// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Everything in a sidecar file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sidecar {
    /// The program that wrote it, e.g. `gmon-write 0.1.0`.
    pub writer: String,
    /// Sampling rate in Hz (also the gmon.out histogram's `prof_rate`).
    pub rate_hz: u32,
    /// Process id of the profiled process.
    pub pid: u32,
    /// Sample counters.
    pub counters: Counters,
    /// Loaded objects, the main executable first.
    pub objects: Vec<MappedObject>,
    /// Sample counts per runtime PC, ascending by PC.
    pub pc_samples: Vec<PcSample>,
    /// Sampled call stacks (empty when stacks were not recorded).
    pub stacks: Vec<StackSample>,
    /// Per-thread totals, ascending by tid.
    pub threads: Vec<ThreadTotal>,
    /// How each stack of [`Sidecar::stacks`] was obtained, in the same order; empty when the
    /// writer did not say (see [`Sidecar::stack_kind`]).
    pub stack_kinds: Vec<StackKind>,
    /// The gmon.out this sidecar belongs to, when known.
    pub gmon: Option<GmonLink>,
    /// What the sampling clock did, when the writer said.
    pub clock: Option<ClockReport>,
    /// Further executable mappings of the objects' files, ascending by start.
    pub mappings: Vec<ObjectMapping>,
    /// How many processes and threads it covers, when the writer said.
    pub processes: Option<ProcessCount>,
    /// When the runtime sampled the one process image it covers (`None` for a sum of several,
    /// or when the writer did not say).
    pub window: Option<SamplingWindow>,
    /// When each thread's clock ran in that image (`None` for a sum of several, or when the
    /// writer did not say).
    pub thread_clocks: Option<ThreadClocks>,
}

impl Sidecar {
    /// The main executable, if recorded.
    pub fn main_object(&self) -> Option<&MappedObject> {
        self.objects.iter().find(|o| o.is_main())
    }

    /// The object whose executable ranges, or further mappings ([`ObjectMapping`]), hold `pc`,
    /// and `pc` as a link-time address in it.
    pub fn resolve(&self, pc: u64) -> Option<(&MappedObject, u64)> {
        if let Some(obj) = self.objects.iter().find(|o| o.contains(pc)) {
            return Some((obj, pc.wrapping_sub(obj.load_bias)));
        }
        let m = self.mapping_of(pc)?;
        let obj = self.objects.get(m.object as usize)?;
        Some((obj, pc.wrapping_sub(m.load_bias)))
    }

    /// The processes and threads it covers: what the PROCESSES section says, else one process
    /// (the runtime writes a file per process) with the threads THREADS lists.
    pub fn process_count(&self) -> ProcessCount {
        self.processes.unwrap_or(ProcessCount {
            processes: 1,
            threads: self.threads.len() as u64,
        })
    }

    /// The further mapping ([`Sidecar::mappings`]) that holds `pc`.
    pub fn mapping_of(&self, pc: u64) -> Option<&ObjectMapping> {
        self.mappings.iter().find(|m| m.range.contains(pc))
    }

    /// Whether `pc` lies in an object's code: its segments or a further mapping.
    pub fn in_object(&self, pc: u64) -> bool {
        self.resolve(pc).is_some()
    }

    /// The kind of `stacks[i]` ([`StackKind::UNKNOWN`] when not recorded).
    pub fn stack_kind(&self, i: usize) -> StackKind {
        self.stack_kinds.get(i).copied().unwrap_or_default()
    }

    /// Whether this sidecar was written with the given gmon.out bytes (false when it records no
    /// link).
    pub fn matches_gmon(&self, gmon: &[u8]) -> bool {
        self.gmon == Some(GmonLink::of(gmon))
    }
}

// ---------------------------------------------------------------------------------------------
// Writing

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) -> io::Result<()> {
    let len = u32::try_from(b.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "sidecar string over 4 GiB"))?;
    put_u32(out, len);
    out.extend_from_slice(b);
    Ok(())
}

fn put_count(out: &mut Vec<u8>, n: usize, what: &str) -> io::Result<()> {
    let n = u32::try_from(n).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("more than 2^32 {what}"),
        )
    })?;
    put_u32(out, n);
    Ok(())
}

fn section(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    put_u32(out, kind);
    put_u64(out, body.len() as u64);
    out.extend_from_slice(body);
}

/// Serialises an extension into bytes (see [`write_sidecar`]).
pub fn sidecar_to_vec(sidecar: &Sidecar) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    out.extend_from_slice(&GMONX_MAGIC);
    put_u32(&mut out, GMONX_VERSION);
    put_u32(&mut out, 0);

    let mut b = Vec::new();
    put_u32(&mut b, sidecar.rate_hz);
    put_u32(&mut b, sidecar.pid);
    let c = &sidecar.counters;
    for v in [
        c.samples,
        c.outside_histogram,
        c.dropped,
        c.truncated_stacks,
        c.saturated_bins,
    ] {
        put_u64(&mut b, v);
    }
    put_bytes(&mut b, sidecar.writer.as_bytes())?;
    section(&mut out, SECTION_INFO, &b);

    b.clear();
    put_count(&mut b, sidecar.objects.len(), "objects")?;
    for o in &sidecar.objects {
        put_u64(&mut b, o.load_bias);
        put_u32(&mut b, o.flags);
        put_bytes(&mut b, o.path.as_bytes())?;
        put_bytes(&mut b, &o.build_id)?;
        put_count(&mut b, o.ranges.len(), "ranges")?;
        for r in &o.ranges {
            put_u64(&mut b, r.start);
            put_u64(&mut b, r.end);
        }
    }
    section(&mut out, SECTION_OBJECTS, &b);

    b.clear();
    put_count(&mut b, sidecar.pc_samples.len(), "PC samples")?;
    for s in &sidecar.pc_samples {
        put_u64(&mut b, s.pc);
        put_u64(&mut b, s.count);
    }
    section(&mut out, SECTION_PC_SAMPLES, &b);

    b.clear();
    put_count(&mut b, sidecar.stacks.len(), "stacks")?;
    for s in &sidecar.stacks {
        put_u64(&mut b, s.count);
        put_count(&mut b, s.pcs.len(), "frames")?;
        for &pc in &s.pcs {
            put_u64(&mut b, pc);
        }
    }
    section(&mut out, SECTION_STACKS, &b);

    b.clear();
    put_count(&mut b, sidecar.threads.len(), "threads")?;
    for t in &sidecar.threads {
        put_u32(&mut b, t.tid);
        put_u64(&mut b, t.samples);
    }
    section(&mut out, SECTION_THREADS, &b);

    if let Some(link) = sidecar.gmon {
        b.clear();
        put_u64(&mut b, link.length);
        put_u64(&mut b, link.fnv1a64);
        section(&mut out, SECTION_GMON_LINK, &b);
    }

    if !sidecar.stack_kinds.is_empty() {
        if sidecar.stack_kinds.len() != sidecar.stacks.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} stack kinds for {} stacks",
                    sidecar.stack_kinds.len(),
                    sidecar.stacks.len()
                ),
            ));
        }
        b.clear();
        put_count(&mut b, sidecar.stack_kinds.len(), "stack kinds")?;
        b.extend(sidecar.stack_kinds.iter().map(|k| k.0));
        section(&mut out, SECTION_STACK_KINDS, &b);
    }
    if let Some(c) = &sidecar.clock {
        b.clear();
        put_u32(&mut b, c.clock.0);
        put_u32(&mut b, c.refused_errno);
        put_u64(&mut b, c.signals);
        put_u64(&mut b, c.unsampled);
        section(&mut out, SECTION_CLOCK, &b);
    }
    if !sidecar.mappings.is_empty() {
        b.clear();
        put_count(&mut b, sidecar.mappings.len(), "mappings")?;
        for m in &sidecar.mappings {
            put_u32(&mut b, m.object);
            put_u64(&mut b, m.range.start);
            put_u64(&mut b, m.range.end);
            put_u64(&mut b, m.file_offset);
            put_u64(&mut b, m.load_bias);
        }
        section(&mut out, SECTION_MAPPINGS, &b);
    }
    if let Some(p) = &sidecar.processes {
        b.clear();
        put_u64(&mut b, p.processes);
        put_u64(&mut b, p.threads);
        section(&mut out, SECTION_PROCESSES, &b);
    }
    // Last, as the runtime writes it (spec/runtime.md §5.15).
    if let Some(c) = sidecar
        .clock
        .filter(|c| c.before_start_ns != 0 || c.runtime_ns != 0)
    {
        b.clear();
        put_u64(&mut b, c.before_start_ns);
        put_u64(&mut b, c.runtime_ns);
        section(&mut out, SECTION_UNCLOCKED, &b);
    }
    if let Some(w) = &sidecar.window {
        b.clear();
        put_u64(&mut b, w.start_ns);
        put_u64(&mut b, w.end_ns);
        section(&mut out, SECTION_WINDOW, &b);
    }
    if let Some(t) = &sidecar.thread_clocks {
        b.clear();
        put_u64(&mut b, t.dropped);
        put_count(&mut b, t.clocks.len(), "thread clocks")?;
        for c in &t.clocks {
            put_u32(&mut b, c.tid);
            put_u64(&mut b, c.start_ns);
            put_u64(&mut b, c.end_ns);
        }
        section(&mut out, SECTION_THREAD_CLOCKS, &b);
    }
    Ok(out)
}

/// Writes an extension as a sidecar file's bytes.
pub fn write_sidecar<W: Write>(sidecar: &Sidecar, mut out: W) -> io::Result<()> {
    out.write_all(&sidecar_to_vec(sidecar)?)
}

// ---------------------------------------------------------------------------------------------
// Reading

/// A cursor over the whole file that knows its absolute offset.
struct Cursor<'a> {
    whole: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Cursor<'a> {
    fn offset(&self) -> u64 {
        self.pos as u64
    }

    fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let eof = || Error::UnexpectedEof {
            offset: self.offset(),
            what,
            needed: n as u64,
            available: self.remaining() as u64,
        };
        let stop = self
            .pos
            .checked_add(n)
            .filter(|&s| s <= self.end)
            .ok_or_else(eof)?;
        let s = self.whole.get(self.pos..stop).ok_or_else(eof)?;
        self.pos = stop;
        Ok(s)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        let b = self.take(4, what)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(u32::from_le_bytes(a))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn bytes(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let n = self.u32(what)?;
        self.take(n as usize, what)
    }

    fn string(&mut self, what: &'static str) -> Result<String> {
        let at = self.offset() + 4;
        let b = self.bytes(what)?;
        String::from_utf8(b.to_vec()).map_err(|_| Error::NotUtf8 { offset: at, what })
    }

    /// A count of items each at least `min_size` bytes long; refuses counts the section cannot
    /// hold, so a corrupt count never makes the reader reserve huge vectors.
    fn count(&mut self, what: &'static str, min_size: usize) -> Result<usize> {
        let at = self.offset();
        let n = self.u32(what)? as usize;
        if n.checked_mul(min_size)
            .is_none_or(|need| need > self.remaining())
        {
            return Err(Error::BadValue {
                offset: at,
                what,
                found: n as u64,
                expected: "a count that fits in the section",
            });
        }
        Ok(n)
    }
}

/// Parses a sidecar file.
///
/// Errors name the byte offset, from the start of the sidecar, where reading stopped.
pub fn read_sidecar(bytes: &[u8]) -> Result<Sidecar> {
    let mut c = Cursor {
        whole: bytes,
        pos: 0,
        end: bytes.len(),
    };
    let magic = bytes.get(..8).unwrap_or(bytes);
    if magic != GMONX_MAGIC {
        return Err(Error::SidecarBadMagic {
            offset: 0,
            found: magic.to_vec(),
        });
    }
    c.take(8, "magic")?;
    let version_at = c.offset();
    let version = c.u32("version")?;
    if version != GMONX_VERSION {
        return Err(Error::UnsupportedVersion {
            offset: version_at,
            found: version,
            expected: SIDECAR_VERSION_TEXT,
        });
    }
    c.u32("flags")?;

    let mut sidecar = Sidecar::default();
    let mut seen: Vec<u32> = Vec::new();
    let mut kinds_at = None;
    let mut mappings_at = Vec::new();
    // An UNCLOCKED section read before the CLOCK section it completes.
    let mut unclocked: Option<ClockReport> = None;
    while c.remaining() > 0 {
        let header_at = c.offset();
        let kind = c.u32("section kind")?;
        let len_at = c.offset();
        let len = c.u64("section length")?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= c.remaining())
            .ok_or(Error::UnexpectedEof {
                offset: len_at + 8,
                what: "section body",
                needed: len,
                available: c.remaining() as u64,
            })?;
        let body_end = c.pos + len;
        if (SECTION_INFO..=LAST_KNOWN_SECTION).contains(&kind) {
            if seen.contains(&kind) {
                return Err(Error::SidecarDuplicateSection {
                    offset: header_at,
                    kind,
                });
            }
            seen.push(kind);
        }
        let mut s = Cursor {
            whole: bytes,
            pos: c.pos,
            end: body_end,
        };
        match kind {
            SECTION_INFO => read_info(&mut s, &mut sidecar)?,
            SECTION_OBJECTS => sidecar.objects = read_objects(&mut s)?,
            SECTION_PC_SAMPLES => {
                let n = s.count("PC sample count", 16)?;
                sidecar.pc_samples = (0..n)
                    .map(|_| {
                        Ok(PcSample {
                            pc: s.u64("PC")?,
                            count: s.u64("PC count")?,
                        })
                    })
                    .collect::<Result<_>>()?;
            }
            SECTION_STACKS => {
                let n = s.count("stack count", 12)?;
                sidecar.stacks = (0..n)
                    .map(|_| {
                        let count = s.u64("stack sample count")?;
                        let depth = s.count("stack depth", 8)?;
                        let pcs = (0..depth)
                            .map(|_| s.u64("stack PC"))
                            .collect::<Result<_>>()?;
                        Ok(StackSample { count, pcs })
                    })
                    .collect::<Result<_>>()?;
            }
            SECTION_THREADS => {
                let n = s.count("thread count", 12)?;
                sidecar.threads = (0..n)
                    .map(|_| {
                        Ok(ThreadTotal {
                            tid: s.u32("tid")?,
                            samples: s.u64("thread samples")?,
                        })
                    })
                    .collect::<Result<_>>()?;
            }
            SECTION_GMON_LINK => {
                sidecar.gmon = Some(GmonLink {
                    length: s.u64("gmon.out length")?,
                    fnv1a64: s.u64("gmon.out hash")?,
                });
            }
            SECTION_STACK_KINDS => {
                let n = s.count("stack kind count", 1)?;
                kinds_at = Some(s.offset() - 4);
                sidecar.stack_kinds = s
                    .take(n, "stack kinds")?
                    .iter()
                    .map(|&k| StackKind(k))
                    .collect();
            }
            SECTION_CLOCK => {
                sidecar.clock = Some(ClockReport {
                    clock: ClockKind(s.u32("clock kind")?),
                    refused_errno: s.u32("clock refusal")?,
                    signals: s.u64("signal count")?,
                    unsampled: s.u64("unsampled ticks")?,
                    ..unclocked.unwrap_or_default()
                });
            }
            SECTION_MAPPINGS => {
                let n = s.count("mapping count", 36)?;
                for _ in 0..n {
                    mappings_at.push(s.offset());
                    let object = s.u32("mapping object")?;
                    let at = s.offset();
                    let start = s.u64("mapping start")?;
                    let end = s.u64("mapping end")?;
                    if end < start {
                        return Err(Error::BadValue {
                            offset: at,
                            what: "mapping",
                            found: end,
                            expected: "end >= start",
                        });
                    }
                    sidecar.mappings.push(ObjectMapping {
                        object,
                        range: AddressRange { start, end },
                        file_offset: s.u64("mapping file offset")?,
                        load_bias: s.u64("mapping load bias")?,
                    });
                }
            }
            SECTION_PROCESSES => {
                sidecar.processes = Some(ProcessCount {
                    processes: s.u64("process count")?,
                    threads: s.u64("thread count")?,
                });
            }
            SECTION_UNCLOCKED => {
                let u = ClockReport {
                    before_start_ns: s.u64("CPU time before the runtime started")?,
                    runtime_ns: s.u64("CPU time of the runtime's own work")?,
                    ..ClockReport::default()
                };
                match sidecar.clock.as_mut() {
                    Some(c) => {
                        c.before_start_ns = u.before_start_ns;
                        c.runtime_ns = u.runtime_ns;
                    }
                    None => unclocked = Some(u),
                }
            }
            SECTION_WINDOW => {
                let at = s.offset();
                let start_ns = s.u64("window start")?;
                let end_ns = s.u64("window end")?;
                if end_ns < start_ns {
                    return Err(Error::BadValue {
                        offset: at,
                        what: "window",
                        found: end_ns,
                        expected: "end >= start",
                    });
                }
                sidecar.window = Some(SamplingWindow { start_ns, end_ns });
            }
            SECTION_THREAD_CLOCKS => {
                let dropped = s.u64("dropped thread clocks")?;
                let n = s.count("thread clocks", 20)?;
                let mut clocks = Vec::with_capacity(n);
                for _ in 0..n {
                    let tid = s.u32("thread clock tid")?;
                    let at = s.offset();
                    let start_ns = s.u64("thread clock start")?;
                    let end_ns = s.u64("thread clock end")?;
                    if end_ns < start_ns {
                        return Err(Error::BadValue {
                            offset: at,
                            what: "thread clock",
                            found: end_ns,
                            expected: "end >= start",
                        });
                    }
                    clocks.push(ThreadClock {
                        tid,
                        start_ns,
                        end_ns,
                    });
                }
                sidecar.thread_clocks = Some(ThreadClocks { dropped, clocks });
            }
            // Unknown kinds: skipped, so newer writers can add sections.
            _ => s.pos = body_end,
        }
        if s.pos != body_end {
            return Err(Error::SidecarTrailingBytes {
                offset: s.offset(),
                kind,
                extra: (body_end - s.pos) as u64,
            });
        }
        c.pos = body_end;
    }
    if sidecar.clock.is_none() {
        sidecar.clock = unclocked;
    }
    if let Some(offset) = kinds_at
        && sidecar.stack_kinds.len() != sidecar.stacks.len()
    {
        return Err(Error::BadValue {
            offset,
            what: "stack kind count",
            found: sidecar.stack_kinds.len() as u64,
            expected: "the number of stacks in the STACKS section",
        });
    }
    // Whichever order the sections came in, a mapping names an object of OBJECTS.
    for (m, &offset) in sidecar.mappings.iter().zip(&mappings_at) {
        if m.object as usize >= sidecar.objects.len() {
            return Err(Error::BadValue {
                offset,
                what: "mapping object",
                found: u64::from(m.object),
                expected: "the index of an object of the OBJECTS section",
            });
        }
    }
    Ok(sidecar)
}

fn read_info(s: &mut Cursor<'_>, sidecar: &mut Sidecar) -> Result<()> {
    sidecar.rate_hz = s.u32("rate")?;
    sidecar.pid = s.u32("pid")?;
    sidecar.counters = Counters {
        samples: s.u64("samples counter")?,
        outside_histogram: s.u64("outside-histogram counter")?,
        dropped: s.u64("dropped counter")?,
        truncated_stacks: s.u64("truncated-stacks counter")?,
        saturated_bins: s.u64("saturated-bins counter")?,
    };
    sidecar.writer = s.string("writer")?;
    Ok(())
}

fn read_objects(s: &mut Cursor<'_>) -> Result<Vec<MappedObject>> {
    let n = s.count("object count", 24)?;
    (0..n)
        .map(|_| {
            let load_bias = s.u64("load bias")?;
            let flags = s.u32("object flags")?;
            let path = s.string("object path")?;
            let build_id = s.bytes("build id")?.to_vec();
            let nr = s.count("range count", 16)?;
            let ranges = (0..nr)
                .map(|_| {
                    let at = s.offset();
                    let start = s.u64("range start")?;
                    let end = s.u64("range end")?;
                    if end < start {
                        return Err(Error::BadValue {
                            offset: at,
                            what: "range",
                            found: end,
                            expected: "end >= start",
                        });
                    }
                    Ok(AddressRange { start, end })
                })
                .collect::<Result<_>>()?;
            Ok(MappedObject {
                path,
                build_id,
                load_bias,
                flags,
                ranges,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Sidecar {
        Sidecar {
            writer: "gmon-write 0.1.0".into(),
            rate_hz: 1000,
            pid: 4242,
            counters: Counters {
                samples: 10,
                outside_histogram: 2,
                dropped: 1,
                truncated_stacks: 3,
                saturated_bins: 0,
            },
            objects: vec![
                MappedObject {
                    path: "/tmp/prog".into(),
                    build_id: vec![0xab, 0xcd],
                    load_bias: 0x5555_0000_0000,
                    flags: OBJECT_FLAG_MAIN,
                    ranges: vec![AddressRange {
                        start: 0x5555_0000_1000,
                        end: 0x5555_0000_2000,
                    }],
                },
                MappedObject {
                    path: "/lib/libc.so.6".into(),
                    build_id: vec![],
                    load_bias: 0x7f00_0000_0000,
                    flags: 0,
                    ranges: vec![AddressRange {
                        start: 0x7f00_0002_0000,
                        end: 0x7f00_0003_0000,
                    }],
                },
            ],
            pc_samples: vec![
                PcSample {
                    pc: 0x5555_0000_1234,
                    count: 7,
                },
                PcSample {
                    pc: 0x7f00_0002_0010,
                    count: 3,
                },
            ],
            stacks: vec![StackSample {
                count: 7,
                pcs: vec![0x5555_0000_1234, 0x5555_0000_1100],
            }],
            threads: vec![ThreadTotal {
                tid: 4242,
                samples: 10,
            }],
            stack_kinds: vec![StackKind::COMPLETE],
            gmon: Some(GmonLink::of(b"gmon\x01")),
            clock: Some(ClockReport {
                clock: ClockKind::PERF_TASK_CLOCK,
                refused_errno: 0,
                signals: 9,
                unsampled: 4,
                before_start_ns: 1_200_000,
                runtime_ns: 300_000,
            }),
            mappings: vec![ObjectMapping {
                object: 0,
                range: AddressRange {
                    start: 0x7fff_0000_0000,
                    end: 0x7fff_0000_1000,
                },
                file_offset: 0x1000,
                load_bias: 0x7fff_0000_0000 - 0x1000,
            }],
            processes: Some(ProcessCount {
                processes: 1,
                threads: 1,
            }),
            window: None,
            thread_clocks: None,
        }
    }

    #[test]
    fn an_address_in_a_further_mapping_is_named_from_its_object() {
        // The executable's text mapped a second time, high up (as V8 does with node's builtins):
        // an address there is the executable's, at the link-time address of the same file byte.
        let e = sample();
        let (obj, link) = e.resolve(0x7fff_0000_0234).expect("in the second mapping");
        assert!(obj.is_main());
        assert_eq!(link, 0x1234);
        assert_eq!(e.resolve(0x7fff_0000_1000), None);
        // Older readers skip the section: without it the address is in no object.
        let mut old = e.clone();
        old.mappings.clear();
        assert_eq!(old.resolve(0x7fff_0000_0234), None);
        // Kind 9 is 4 + 36 bytes per mapping; kind 10 is 16 bytes, and both come last but
        // for kind 11 (16 bytes).
        let bytes = sidecar_to_vec(&e).unwrap();
        let end = bytes.len() - (12 + 16);
        assert_eq!(bytes[end..end + 4], SECTION_UNCLOCKED.to_le_bytes());
        let tail = &bytes[end - (12 + 16) - (12 + 4 + 36)..end];
        assert_eq!(tail[..4], SECTION_MAPPINGS.to_le_bytes());
        assert_eq!(tail[4..12], 40u64.to_le_bytes());
        assert_eq!(tail[52..56], SECTION_PROCESSES.to_le_bytes());
        assert_eq!(read_sidecar(&bytes).unwrap(), e);
    }

    #[test]
    fn a_mapping_must_name_an_object() {
        let mut e = sample();
        e.mappings[0].object = 2;
        let bytes = sidecar_to_vec(&e).unwrap();
        let err = read_sidecar(&bytes).unwrap_err();
        assert!(err.to_string().contains("mapping object"), "{err}");
        // A range that ends before it starts.
        let mut e = sample();
        e.mappings[0].range.end = 0;
        let err = read_sidecar(&sidecar_to_vec(&e).unwrap()).unwrap_err();
        assert!(err.to_string().contains("end >= start"), "{err}");
    }

    #[test]
    fn the_clock_section_is_optional() {
        // An older writer's sidecar has no section 8: it reads as None, and writes back without.
        let mut s = sample();
        let with = sidecar_to_vec(&s).unwrap();
        assert_eq!(read_sidecar(&with).unwrap().clock, s.clock);
        s.clock = None;
        let without = sidecar_to_vec(&s).unwrap();
        assert_eq!(with.len(), without.len() + 12 + 24 + 12 + 16);
        assert_eq!(read_sidecar(&without).unwrap(), s);
    }

    #[test]
    fn the_unclocked_section_completes_the_clock_in_either_order() {
        // Section 11 after section 8 (as written), before it, or absent (an older writer:
        // the two times read as 0); alone it gives a report of an unknown clock.
        let mut s = sample();
        s.mappings.clear();
        s.processes = None;
        let c = s.clock.unwrap();
        let bytes = sidecar_to_vec(&s).unwrap();
        let (clock_len, unclocked_len) = (12 + 24, 12 + 16);
        let end = bytes.len();
        let (clock, unclocked) = (
            &bytes[end - unclocked_len - clock_len..end - unclocked_len],
            &bytes[end - unclocked_len..],
        );
        let body = &bytes[..end - unclocked_len - clock_len];
        let swapped = [body, unclocked, clock].concat();
        assert_eq!(read_sidecar(&swapped).unwrap().clock, Some(c));
        let older = [body, clock].concat();
        let read = read_sidecar(&older).unwrap().clock.unwrap();
        assert_eq!((read.before_start_ns, read.runtime_ns), (0, 0));
        assert_eq!(read.signals, c.signals);
        let alone = [body, unclocked].concat();
        let read = read_sidecar(&alone).unwrap().clock.unwrap();
        assert_eq!(read.clock, ClockKind::UNKNOWN);
        assert_eq!(
            (read.before_start_ns, read.runtime_ns),
            (c.before_start_ns, c.runtime_ns)
        );
        // Twice is an error, as for every known section.
        let twice = [&bytes[..], unclocked].concat();
        assert!(read_sidecar(&twice).is_err());
    }

    #[test]
    fn thread_clocks_round_trip_and_are_optional() {
        let clock = |tid, start_ns, end_ns| ThreadClock {
            tid,
            start_ns,
            end_ns,
        };
        let mut e = sample();
        e.thread_clocks = Some(ThreadClocks {
            dropped: 2,
            clocks: vec![clock(7, 10, 90), clock(8, 20, 20), clock(7, 95, 99)],
        });
        let bytes = sidecar_to_vec(&e).unwrap();
        assert_eq!(read_sidecar(&bytes).unwrap(), e);
        // Last: kind 13, 8 + 4 + 20 per clock.
        let len = 12 + 8 + 4 + 3 * 20;
        let at = bytes.len() - len;
        assert_eq!(bytes[at..at + 4], SECTION_THREAD_CLOCKS.to_le_bytes());
        assert_eq!(bytes[at + 4..at + 12], 72u64.to_le_bytes());
        // Without it (an older writer): nothing known of the threads' clocks.
        let older = read_sidecar(&bytes[..at]).unwrap();
        assert_eq!(older.thread_clocks, None);
        // A clock that ends before it starts is refused at its start field.
        let mut bad = bytes.clone();
        let third_end = bytes.len() - 8;
        bad[third_end..].copy_from_slice(&94u64.to_le_bytes());
        let err = read_sidecar(&bad).unwrap_err();
        assert_eq!(err.offset(), Some((third_end - 8) as u64), "{err}");
    }

    #[test]
    fn stack_kinds_are_optional_and_must_match_the_stacks() {
        // Without kinds (an older writer): no section 7, and every stack reads as unknown.
        let mut e = sample();
        e.stack_kinds.clear();
        let bytes = sidecar_to_vec(&e).unwrap();
        let back = read_sidecar(&bytes).unwrap();
        assert!(back.stack_kinds.is_empty());
        assert_eq!(back.stack_kind(0), StackKind::UNKNOWN);
        // With kinds: section 7 is last (without section 8), `count u32` then one byte per
        // stack.
        let mut e = sample();
        e.clock = None;
        e.mappings.clear();
        e.processes = None;
        let bytes = sidecar_to_vec(&e).unwrap();
        assert_eq!(bytes[bytes.len() - 5..], [1, 0, 0, 0, 1]);
        assert_eq!(
            read_sidecar(&bytes).unwrap().stack_kind(0),
            StackKind::COMPLETE
        );
        // A count that disagrees with the stacks is an error, on both sides.
        let mut bad = e.clone();
        bad.stack_kinds.push(StackKind::TRUNCATED);
        assert!(sidecar_to_vec(&bad).is_err());
        let mut bytes = sidecar_to_vec(&e).unwrap();
        bytes.truncate(bytes.len() - 17);
        bytes.extend_from_slice(&7u32.to_le_bytes());
        bytes.extend_from_slice(&6u64.to_le_bytes());
        bytes.extend_from_slice(&[2, 0, 0, 0, 2, 3]);
        let err = read_sidecar(&bytes).unwrap_err();
        assert!(err.to_string().contains("stack kind count"), "{err}");
    }

    #[test]
    fn round_trip() {
        let e = sample();
        let bytes = sidecar_to_vec(&e).unwrap();
        assert_eq!(read_sidecar(&bytes).unwrap(), e);
        let mut w = Vec::new();
        write_sidecar(&e, &mut w).unwrap();
        assert_eq!(w, bytes);
    }

    #[test]
    fn header_bytes_are_fixed() {
        let bytes = sidecar_to_vec(&Sidecar::default()).unwrap();
        assert_eq!(&bytes[..16], b"gmonext\0\x01\0\0\0\0\0\0\0");
        // First section: INFO, little-endian kind and length.
        assert_eq!(&bytes[16..20], &1u32.to_le_bytes());
    }

    #[test]
    fn resolve_gives_link_time_address() {
        let e = sample();
        let (obj, addr) = e.resolve(0x5555_0000_1234).unwrap();
        assert!(obj.is_main());
        assert_eq!(addr, 0x1234);
        assert_eq!(e.resolve(0x10), None);
        assert_eq!(e.main_object().unwrap().build_id_hex(), "abcd");
    }

    #[test]
    fn gmon_link_matches() {
        let e = sample();
        assert!(e.matches_gmon(b"gmon\x01"));
        assert!(!e.matches_gmon(b"gmon\x02"));
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn sidecar_path_appends_suffix() {
        assert_eq!(
            sidecar_path(Path::new("gmon.out")),
            PathBuf::from("gmon.out.gmonx")
        );
        assert_eq!(
            sidecar_path(Path::new("/a/p.12")),
            PathBuf::from("/a/p.12.gmonx")
        );
    }

    #[test]
    fn unknown_sections_are_skipped() {
        let mut bytes = sidecar_to_vec(&sample()).unwrap();
        section(&mut bytes, 99, b"future");
        assert_eq!(read_sidecar(&bytes).unwrap(), sample());
    }

    #[test]
    fn errors_name_offsets() {
        assert!(matches!(
            read_sidecar(b"gmon"),
            Err(Error::SidecarBadMagic { offset: 0, .. })
        ));
        let mut v = sidecar_to_vec(&Sidecar::default()).unwrap();
        v[8] = 2;
        let err = read_sidecar(&v).unwrap_err();
        assert!(
            matches!(
                err,
                Error::UnsupportedVersion {
                    offset: 8,
                    found: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "offset 0x8: unsupported version 0x2 (expected sidecar version {GMONX_VERSION})"
            )
        );

        let full = sidecar_to_vec(&sample()).unwrap();
        // A cut at a section boundary is a valid (shorter) file: 11 such points before the end
        // (after the header and after each of the first ten sections). Every other cut fails.
        // A cut between a mapping and OBJECTS is still checked: sections come in order here.
        let mut whole = 0;
        for cut in 16..full.len() {
            match read_sidecar(&full[..cut]) {
                Ok(_) => whole += 1,
                Err(err) => assert!(
                    matches!(err, Error::UnexpectedEof { .. } | Error::BadValue { .. }),
                    "cut at {cut}: {err}"
                ),
            }
        }
        assert_eq!(whole, 11);

        let mut dup = sidecar_to_vec(&Sidecar::default()).unwrap();
        let info_len = 4 + 4 + 5 * 8 + 4;
        let first = dup[16..16 + 12 + info_len].to_vec();
        dup.extend_from_slice(&first);
        assert!(matches!(
            read_sidecar(&dup),
            Err(Error::SidecarDuplicateSection {
                kind: SECTION_INFO,
                ..
            })
        ));

        let mut extra = GMONX_MAGIC.to_vec();
        extra.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        section(&mut extra, SECTION_GMON_LINK, &[0; 17]);
        assert!(matches!(
            read_sidecar(&extra),
            Err(Error::SidecarTrailingBytes {
                extra: 1,
                kind: SECTION_GMON_LINK,
                ..
            })
        ));

        let mut huge = GMONX_MAGIC.to_vec();
        huge.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        section(&mut huge, SECTION_PC_SAMPLES, &u32::MAX.to_le_bytes());
        assert!(matches!(
            read_sidecar(&huge),
            Err(Error::BadValue { offset: 28, .. })
        ));
    }
}
