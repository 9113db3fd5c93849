//! `gmon dump` of the runtime's sidecar (`FILE.gmonx`, spec/runtime.md §5): every section with
//! its offset, for people (text) and machines (JSON, spec/json.md "SIDECAR"); and the line that
//! a gmon.out's dump gives about the sidecar beside it.

use std::io::{self, Write};

use gmon_format::Sidecar;
use gmon_format::sidecar::{
    GMONX_VERSION, SECTION_CLOCK, SECTION_GMON_LINK, SECTION_INFO, SECTION_MAPPINGS,
    SECTION_OBJECTS, SECTION_PC_SAMPLES, SECTION_PROCESSES, SECTION_STACK_KINDS, SECTION_STACKS,
    SECTION_THREAD_CLOCKS, SECTION_THREADS, SECTION_UNCLOCKED, SECTION_WINDOW, SectionSpan,
};
use serde::Serialize;

/// How a sidecar relates to the gmon.out beside it (spec/runtime.md §5.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Belongs {
    /// Its GMON_LINK matches the gmon.out's length and hash.
    Yes,
    /// Its GMON_LINK records another gmon.out: the views ignore it.
    Stale,
    /// It has no GMON_LINK: the views take it, nothing proves it belongs.
    Unlinked,
}

impl Belongs {
    /// How `sidecar` relates to the gmon.out `gmon`.
    pub fn of(sidecar: &Sidecar, gmon: &[u8]) -> Belongs {
        match sidecar.gmon {
            None => Belongs::Unlinked,
            Some(_) if sidecar.matches_gmon(gmon) => Belongs::Yes,
            Some(_) => Belongs::Stale,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Belongs::Yes => "belongs to this file",
            Belongs::Stale => "stale: it records another gmon.out, so the views ignore it",
            Belongs::Unlinked => "no link to a gmon.out: the views take it as this file's",
        }
    }
}

/// The sidecar beside a dumped gmon.out, as its JSON `FILE` object carries it.
#[derive(Debug, Serialize)]
pub struct SidecarBeside {
    /// Its path.
    pub file: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it belongs to the gmon.out.
    pub belongs: Belongs,
}

/// The line after a gmon.out's dump that names its sidecar.
pub fn print_beside<W: Write + ?Sized>(out: &mut W, s: &SidecarBeside) -> io::Result<()> {
    writeln!(
        out,
        "sidecar: {} ({} bytes): {}; `gmon dump {}` shows it",
        s.file,
        s.size,
        s.belongs.words(),
        s.file
    )
}

/// A PC as `OBJECT+0xLINK` (the object's file name and the link-time address), or bare.
fn place(sidecar: &Sidecar, pc: u64) -> String {
    match sidecar.resolve(pc) {
        Some((o, link)) => {
            let name = o.path.rsplit('/').next().unwrap_or(&o.path);
            format!("{pc:#x} ({name}+{link:#x})")
        }
        None => format!("{pc:#x} (no object)"),
    }
}

/// Prints a sidecar for a person: its header, then each section at its offset.
pub fn print_sidecar<W: Write + ?Sized>(
    out: &mut W,
    name: &str,
    size: u64,
    s: &Sidecar,
    sections: &[SectionSpan],
) -> io::Result<()> {
    writeln!(
        out,
        "{name}: gmon-write sidecar, version {GMONX_VERSION}, {size} bytes, {} sections",
        sections.len()
    )?;
    for span in sections {
        let title = span.name().unwrap_or("(unknown kind)");
        writeln!(
            out,
            "\n[{:#x}] section {} {title}, {} bytes",
            span.offset, span.kind, span.length
        )?;
        match span.kind {
            SECTION_INFO => {
                writeln!(out, "  writer: {:?}", s.writer)?;
                writeln!(out, "  rate: {} Hz", s.rate_hz)?;
                writeln!(out, "  pid: {}", s.pid)?;
                let c = &s.counters;
                writeln!(
                    out,
                    "  samples: {}  outside histogram: {}  dropped: {}  truncated stacks: {}  \
                     saturated bins: {}",
                    c.samples, c.outside_histogram, c.dropped, c.truncated_stacks, c.saturated_bins
                )?;
            }
            SECTION_OBJECTS => {
                for (i, o) in s.objects.iter().enumerate() {
                    let mut flags = Vec::new();
                    if o.is_main() {
                        flags.push("main");
                    }
                    if o.flags & gmon_format::sidecar::OBJECT_FLAG_VDSO != 0 {
                        flags.push("vdso");
                    }
                    writeln!(
                        out,
                        "  object {i}: {}  build id {}  load bias {:#x}  flags {:#x}{}",
                        o.path,
                        if o.build_id.is_empty() {
                            "(none)".to_owned()
                        } else {
                            o.build_id_hex()
                        },
                        o.load_bias,
                        o.flags,
                        if flags.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", flags.join(", "))
                        }
                    )?;
                    for r in &o.ranges {
                        writeln!(out, "    range {:#x}-{:#x}", r.start, r.end)?;
                    }
                }
            }
            SECTION_PC_SAMPLES => {
                let total: u64 = s.pc_samples.iter().map(|p| p.count).sum();
                writeln!(out, "  {} PCs, {total} ticks", s.pc_samples.len())?;
                for p in &s.pc_samples {
                    writeln!(out, "  {} {}", place(s, p.pc), p.count)?;
                }
            }
            SECTION_STACKS => {
                let total: u64 = s.stacks.iter().map(|p| p.count).sum();
                writeln!(out, "  {} stacks, {total} ticks", s.stacks.len())?;
                for (i, st) in s.stacks.iter().enumerate() {
                    writeln!(
                        out,
                        "  stack {i}: {} ticks, {} frames, {}",
                        st.count,
                        st.pcs.len(),
                        s.stack_kind(i).name()
                    )?;
                    for pc in &st.pcs {
                        writeln!(out, "    {}", place(s, *pc))?;
                    }
                }
            }
            SECTION_THREADS => {
                writeln!(out, "  {} threads", s.threads.len())?;
                for t in &s.threads {
                    writeln!(out, "  tid {}: {} ticks", t.tid, t.samples)?;
                }
            }
            SECTION_GMON_LINK => {
                if let Some(l) = s.gmon {
                    writeln!(
                        out,
                        "  gmon.out length: {}  fnv1a64: {:#018x}",
                        l.length, l.fnv1a64
                    )?;
                }
            }
            SECTION_STACK_KINDS => {
                writeln!(out, "  one kind per stack, shown with STACKS")?;
            }
            SECTION_CLOCK => {
                if let Some(c) = s.clock {
                    writeln!(
                        out,
                        "  clock: {}  refused errno: {}  signals: {}  unsampled: {}",
                        c.clock.name(),
                        c.refused_errno,
                        c.signals,
                        c.unsampled
                    )?;
                }
            }
            SECTION_MAPPINGS => {
                writeln!(
                    out,
                    "  {} further mappings of objects' files",
                    s.mappings.len()
                )?;
                for m in &s.mappings {
                    let path = s.objects.get(m.object as usize).map_or("?", |o| &o.path);
                    writeln!(
                        out,
                        "  {:#x}-{:#x} object {} ({path})  file offset {:#x}  load bias {:#x}",
                        m.range.start, m.range.end, m.object, m.file_offset, m.load_bias
                    )?;
                }
            }
            SECTION_PROCESSES => {
                if let Some(p) = s.processes {
                    writeln!(out, "  processes: {}  threads: {}", p.processes, p.threads)?;
                }
            }
            SECTION_UNCLOCKED => {
                if let Some(c) = s.clock {
                    writeln!(
                        out,
                        "  CPU time before the runtime started: {} ns  in the runtime's own work: {} ns",
                        c.before_start_ns, c.runtime_ns
                    )?;
                }
            }
            SECTION_WINDOW => {
                if let Some(w) = s.window {
                    writeln!(
                        out,
                        "  sampled from {} ns to {} ns (CLOCK_MONOTONIC): {} ns",
                        w.start_ns,
                        w.end_ns,
                        w.end_ns - w.start_ns
                    )?;
                }
            }
            SECTION_THREAD_CLOCKS => {
                if let Some(t) = &s.thread_clocks {
                    writeln!(
                        out,
                        "  {} thread clocks, {} dropped (CLOCK_MONOTONIC)",
                        t.clocks.len(),
                        t.dropped
                    )?;
                    for c in &t.clocks {
                        writeln!(
                            out,
                            "  tid {}: from {} ns to {} ns: {} ns",
                            c.tid,
                            c.start_ns,
                            c.end_ns,
                            c.end_ns - c.start_ns
                        )?;
                    }
                }
            }
            _ => writeln!(out, "  skipped: written by a later runtime")?,
        }
    }
    Ok(())
}

/// A sidecar's JSON form (spec/json.md, "SIDECAR").
#[derive(Debug, Serialize)]
pub struct JsonSidecar<'a> {
    version: u32,
    sections: Vec<JsonSection>,
    writer: &'a str,
    rate_hz: u32,
    pid: u32,
    counters: JsonCounters,
    objects: Vec<JsonObject<'a>>,
    pc_samples: Vec<[u64; 2]>,
    stacks: Vec<JsonStack<'a>>,
    threads: Vec<[u64; 2]>,
    gmon_link: Option<JsonLink>,
    clock: Option<JsonClock>,
    mappings: Vec<JsonMapping>,
    processes: Option<JsonProcesses>,
    window: Option<JsonWindow>,
    thread_clocks: Option<JsonThreadClocks>,
}

#[derive(Debug, Serialize)]
struct JsonThreadClocks {
    dropped: u64,
    clocks: Vec<[u64; 3]>,
}

#[derive(Debug, Serialize)]
struct JsonWindow {
    start_ns: u64,
    end_ns: u64,
}

#[derive(Debug, Serialize)]
struct JsonMapping {
    object: u32,
    start: u64,
    end: u64,
    file_offset: u64,
    load_bias: u64,
}

#[derive(Debug, Serialize)]
struct JsonProcesses {
    processes: u64,
    threads: u64,
}

#[derive(Debug, Serialize)]
struct JsonClock {
    clock: &'static str,
    refused_errno: u32,
    signals: u64,
    unsampled: u64,
    before_start_ns: u64,
    runtime_ns: u64,
}

#[derive(Debug, Serialize)]
struct JsonSection {
    kind: u32,
    name: Option<&'static str>,
    offset: u64,
    length: u64,
}

#[derive(Debug, Serialize)]
struct JsonCounters {
    samples: u64,
    outside_histogram: u64,
    dropped: u64,
    truncated_stacks: u64,
    saturated_bins: u64,
}

#[derive(Debug, Serialize)]
struct JsonObject<'a> {
    path: &'a str,
    build_id: String,
    load_bias: u64,
    flags: u32,
    main: bool,
    ranges: Vec<[u64; 2]>,
}

#[derive(Debug, Serialize)]
struct JsonStack<'a> {
    count: u64,
    kind: &'static str,
    pcs: &'a [u64],
}

#[derive(Debug, Serialize)]
struct JsonLink {
    length: u64,
    fnv1a64: u64,
}

impl<'a> JsonSidecar<'a> {
    /// The JSON form of `s`, whose file has `sections`.
    pub fn new(s: &'a Sidecar, sections: &[SectionSpan]) -> JsonSidecar<'a> {
        let c = &s.counters;
        JsonSidecar {
            version: GMONX_VERSION,
            sections: sections
                .iter()
                .map(|x| JsonSection {
                    kind: x.kind,
                    name: x.name(),
                    offset: x.offset,
                    length: x.length,
                })
                .collect(),
            writer: &s.writer,
            rate_hz: s.rate_hz,
            pid: s.pid,
            counters: JsonCounters {
                samples: c.samples,
                outside_histogram: c.outside_histogram,
                dropped: c.dropped,
                truncated_stacks: c.truncated_stacks,
                saturated_bins: c.saturated_bins,
            },
            objects: s
                .objects
                .iter()
                .map(|o| JsonObject {
                    path: &o.path,
                    build_id: o.build_id_hex(),
                    load_bias: o.load_bias,
                    flags: o.flags,
                    main: o.is_main(),
                    ranges: o.ranges.iter().map(|r| [r.start, r.end]).collect(),
                })
                .collect(),
            pc_samples: s.pc_samples.iter().map(|p| [p.pc, p.count]).collect(),
            stacks: s
                .stacks
                .iter()
                .enumerate()
                .map(|(i, st)| JsonStack {
                    count: st.count,
                    kind: s.stack_kind(i).name(),
                    pcs: &st.pcs,
                })
                .collect(),
            threads: s
                .threads
                .iter()
                .map(|t| [u64::from(t.tid), t.samples])
                .collect(),
            gmon_link: s.gmon.map(|l| JsonLink {
                length: l.length,
                fnv1a64: l.fnv1a64,
            }),
            clock: s.clock.map(|c| JsonClock {
                clock: c.clock.name(),
                refused_errno: c.refused_errno,
                signals: c.signals,
                unsampled: c.unsampled,
                before_start_ns: c.before_start_ns,
                runtime_ns: c.runtime_ns,
            }),
            mappings: s
                .mappings
                .iter()
                .map(|m| JsonMapping {
                    object: m.object,
                    start: m.range.start,
                    end: m.range.end,
                    file_offset: m.file_offset,
                    load_bias: m.load_bias,
                })
                .collect(),
            processes: s.processes.map(|p| JsonProcesses {
                processes: p.processes,
                threads: p.threads,
            }),
            window: s.window.map(|w| JsonWindow {
                start_ns: w.start_ns,
                end_ns: w.end_ns,
            }),
            thread_clocks: s.thread_clocks.as_ref().map(|t| JsonThreadClocks {
                dropped: t.dropped,
                clocks: t
                    .clocks
                    .iter()
                    .map(|c| [u64::from(c.tid), c.start_ns, c.end_ns])
                    .collect(),
            }),
        }
    }
}
