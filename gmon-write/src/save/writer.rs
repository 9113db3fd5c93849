//! Writing a session's profile without allocating (spec/runtime.md §1, §4.5): gmon.out and the
//! sidecar are encoded straight from the counters into a file, through buffers the session
//! allocated when it started ([`OutputBuffers`]).
//!
//! Why not build a `gmon_format::Profile` and an `Sidecar` and serialise them: both allocate,
//! and the profile is written at exit, which may come from a signal handler that interrupted
//! `malloc` while it held its lock (`exit` in a handler): an allocation there never returns.
//! So this module repeats two encoders whose rules are defined elsewhere, and tests hold it to
//! them byte for byte: gmon.out as `gmon_format::to_vec(fit_counts(..))` writes the records of
//! the sampled cells ([`Grid`], spec/runtime.md §1; the split of bins above 65535 over further
//! records of the same range, spec/merge.md §3), the sidecar as
//! `gmon_format::sidecar::sidecar_to_vec` writes it (§5).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use gmon_format::merge::{MAX_BIN_COUNT, MAX_SPLIT_HISTOGRAMS};
use gmon_format::sidecar::{
    GMONX_MAGIC, GMONX_VERSION, SECTION_CLOCK, SECTION_GMON_LINK, SECTION_INFO, SECTION_MAPPINGS,
    SECTION_OBJECTS, SECTION_PC_SAMPLES, SECTION_PROCESSES, SECTION_STACK_KINDS, SECTION_STACKS,
    SECTION_THREAD_CLOCKS, SECTION_THREADS, SECTION_UNCLOCKED, SECTION_WINDOW,
};
use gmon_format::{Dimension, GMON_MAGIC, GMON_TAG_TIME_HIST, GMON_VERSION};

use gmon_format::sidecar::Counters;

use crate::counts::tables::{CountTable, StackTable};
use crate::save::files::{Scratch, Sink, write_file};
use crate::save::grid::{Cell, Grid};
use crate::save::histogram::{Bins, PcBins, copy_map, mark_sampled};
use crate::save::path::{FixedPath, OsFail};
use crate::unwind::mappings::{ExecMaps, SeenMaps};
use crate::unwind::objects::for_each_object_bounded;
use crate::zeroed::Zeroed;

/// The writer string of the sidecar's INFO section.
pub(crate) const WRITER: &str = concat!("gmon-write ", env!("CARGO_PKG_VERSION"));

/// The largest count a histogram bin keeps: what [`MAX_SPLIT_HISTOGRAMS`] records of 16-bit
/// bins can carry (≈ 2.7 × 10⁸ ticks in one bin, 75 hours of one thread at 1 kHz).
pub(crate) const MAX_BIN_TOTAL: u32 = (MAX_SPLIT_HISTOGRAMS * MAX_BIN_COUNT) as u32;

/// Bytes kept for the OBJECTS section (an object takes its path, build id and ranges, ~100
/// bytes; objects that do not fit are left out).
const OBJECTS_CAP: usize = 1 << 20;

/// Bytes of one further mapping in the MAPPINGS section (spec/runtime.md §5.13).
const MAPPING_BYTES: usize = 4 + 8 + 8 + 8 + 8;

/// Bytes kept for the MAPPINGS section: 4096 mappings (further ones are left out).
const MAPPINGS_CAP: usize = 4096 * MAPPING_BYTES;

/// Bins per bit of a session's touched-chunk map: 1 KiB of gmon.out.
pub(crate) const BIN_CHUNK: usize = 512;

/// Words of the touched-chunk map for `nbins` bins.
pub(crate) fn touched_words(nbins: usize) -> usize {
    nbins.div_ceil(BIN_CHUNK).div_ceil(64)
}

/// A byte buffer of fixed capacity.
#[derive(Debug)]
struct FixedBytes {
    buf: Zeroed<u8>,
    len: usize,
}

impl FixedBytes {
    fn new(cap: usize) -> FixedBytes {
        FixedBytes {
            buf: Zeroed::new(cap),
            len: 0,
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + bytes.len()) {
            dst.copy_from_slice(bytes);
            self.len += bytes.len();
        }
    }

    fn room(&self) -> usize {
        self.buf.len() - self.len
    }

    fn bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

/// Everything a write needs, allocated when the session starts.
#[derive(Debug)]
pub(crate) struct OutputBuffers {
    /// The gmon.out path (glibc's naming, decided when the session starts or forks).
    pub gmon: FixedPath,
    /// The sidecar path.
    pub sidecar: FixedPath,
    /// Whether the paths were renamed for an exec (`record::name_before_exec`): an exec that
    /// failed leaves them so, and the image's later writes replace that profile.
    pub named_for_exec: bool,
    files: Scratch,
    exe: FixedPath,
    bins: Zeroed<u32>,
    touched: Zeroed<u64>,
    /// The chunks of the histogram that hold a tick, directly counted or from the PC table.
    sampled: Zeroed<u64>,
    pcs: Zeroed<[u64; 2]>,
    threads: Zeroed<[u64; 2]>,
    stacks: Zeroed<u32>,
    objects: FixedBytes,
    object_count: u32,
    maps: ExecMaps,
    mappings: FixedBytes,
    mapping_count: u32,
}

impl OutputBuffers {
    pub(crate) fn new(nbins: usize, pcs: usize, threads: usize, stacks: usize) -> OutputBuffers {
        OutputBuffers {
            gmon: FixedPath::new(),
            sidecar: FixedPath::new(),
            named_for_exec: false,
            files: Scratch::new(),
            exe: FixedPath::new(),
            bins: Zeroed::new(nbins),
            touched: Zeroed::new(touched_words(nbins)),
            sampled: Zeroed::new(touched_words(nbins)),
            pcs: Zeroed::new(pcs),
            threads: Zeroed::new(threads),
            stacks: Zeroed::new(stacks),
            objects: FixedBytes::new(OBJECTS_CAP),
            object_count: 0,
            maps: ExecMaps::new(),
            mappings: FixedBytes::new(MAPPINGS_CAP),
            mapping_count: 0,
        }
    }

    /// Pages of the histogram's copy touched so far.
    #[cfg(test)]
    pub(crate) fn histogram_copy_pages(&self) -> usize {
        self.bins.resident_pages()
    }
}

/// What a write reads: a session's counters, borrowed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProfileData<'a> {
    /// The live histogram bins (the ticks counted into them directly, spec/runtime.md §4.3).
    pub bins: &'a [AtomicU32],
    /// Which [`BIN_CHUNK`]s of them were counted into (one bit each).
    pub touched: &'a [AtomicU64],
    /// Where the PC table's ticks go in the histogram; None when they were counted into the
    /// bins as well (no PC table).
    pub pc_bins: Option<PcBins>,
    /// The histogram's range and the rate.
    pub range: HistRange,
    /// The sidecar's counters.
    pub counters: Counters,
    /// Per-PC counts (when recorded).
    pub pcs: Option<&'a CountTable>,
    /// Per-thread counts.
    pub threads: &'a CountTable,
    /// Stacks (when recorded).
    pub stacks: Option<&'a StackTable>,
    /// What the sampling clock did.
    pub clock: gmon_format::sidecar::ClockReport,
    /// The mappings the watcher saw as the program ran (spec/runtime.md §5.13).
    pub seen: &'a std::sync::Mutex<SeenMaps>,
    /// When the session sampled this image (spec/runtime.md §5.16).
    pub window: gmon_format::sidecar::SamplingWindow,
    /// When each thread's clock ran (spec/runtime.md §5.17).
    pub thread_clocks: &'a crate::engine::threadclocks::ThreadClockLog,
}

/// Which further mappings of the objects' files a list of objects takes (spec/runtime.md
/// §5.13).
#[derive(Clone, Copy, Debug)]
pub(crate) enum FurtherMaps<'a> {
    /// None: the list made when a session starts, which must not cost a reading of the maps.
    Skip,
    /// Those mapped now, and those the watcher saw earlier (when its table is free: a write in
    /// a signal handler must not wait for the watcher).
    Read(&'a std::sync::Mutex<SeenMaps>),
}

/// Which file a failure is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Gmon,
    Sidecar,
}

/// Writes the sidecar, then gmon.out (when `histogram`), from the session's counters.
pub(crate) fn write_profile(
    s: &ProfileData<'_>,
    b: &mut OutputBuffers,
    histogram: bool,
) -> Result<(), (Which, OsFail)> {
    // The sorted PCs are both the sidecar's list and most of the histogram.
    let npcs = s.pcs.map_or(0, |t| t.fill_sorted(&mut b.pcs));
    let link = if histogram {
        snapshot_bins(s, &mut b.bins, &mut b.touched);
        let pcs = b.pcs.get(..npcs).unwrap_or(&[]);
        mark_sampled(&mut b.sampled, &b.touched, pcs, s.pc_bins);
        let mut probe = [0u8; 0];
        let mut measure = Sink::measure(&mut probe);
        emit_gmon(&mut measure, s.range, &histogram_of(b, npcs, s.pc_bins));
        Some(measure.digest())
    } else {
        None
    };
    collect_objects(b, FurtherMaps::Read(s.seen));
    let nthreads = s.threads.fill_sorted(&mut b.threads);
    let nstacks = s.stacks.map_or(0, |t| t.fill_sorted(&mut b.stacks));
    let OutputBuffers {
        gmon,
        sidecar,
        files,
        bins,
        touched,
        sampled,
        pcs,
        threads,
        stacks,
        objects,
        object_count,
        mappings,
        mapping_count,
        ..
    } = b;
    let parts = SidecarParts {
        objects: objects.bytes(),
        object_count: *object_count,
        mappings: mappings.bytes(),
        mapping_count: *mapping_count,
        pcs: pcs.get(..npcs).unwrap_or(&[]),
        threads: threads.get(..nthreads).unwrap_or(&[]),
        stacks: stacks.get(..nstacks).unwrap_or(&[]),
        link,
    };
    write_file(sidecar.bytes(), files, |sink| emit_sidecar(sink, s, &parts))
        .map_err(|e| (Which::Sidecar, e))?;
    if histogram {
        let h = Bins {
            copy: bins,
            direct: touched,
            sampled,
            pcs: pcs.get(..npcs).unwrap_or(&[]),
            at: s.pc_bins,
        };
        write_file(gmon.bytes(), files, |sink| emit_gmon(sink, s.range, &h))
            .map_err(|e| (Which::Gmon, e))?;
    }
    Ok(())
}

/// The histogram `b` holds once [`snapshot_bins`] and [`mark_sampled`] filled it.
fn histogram_of(b: &OutputBuffers, npcs: usize, at: Option<PcBins>) -> Bins<'_> {
    Bins {
        copy: &b.bins,
        direct: &b.touched,
        sampled: &b.sampled,
        pcs: b.pcs.get(..npcs).unwrap_or(&[]),
        at,
    }
}

/// Copies the touched-chunk map and the live bins of the chunks it marks, so that the measuring
/// pass and the writing pass see the same counts while sampling goes on. Bins of other chunks
/// are neither read (their pages are never faulted in) nor copied: the writer treats them as
/// zero.
fn snapshot_bins(s: &ProfileData<'_>, copy: &mut [u32], touched: &mut [u64]) {
    copy_map(touched, s.touched);
    for chunk in touched_chunks(touched) {
        let range = chunk * BIN_CHUNK..((chunk + 1) * BIN_CHUNK).min(copy.len());
        if let (Some(c), Some(l)) = (copy.get_mut(range.clone()), s.bins.get(range)) {
            for (c, b) in c.iter_mut().zip(l) {
                *c = b.load(Ordering::Relaxed);
            }
        }
    }
}

/// The chunks a touched-chunk map marks, ascending.
fn touched_chunks(touched: &[u64]) -> impl Iterator<Item = usize> + '_ {
    touched.iter().enumerate().flat_map(|(w, &bits)| {
        (0..64)
            .filter(move |c| bits & (1u64 << c) != 0)
            .map(move |c| w * 64 + c)
    })
}

/// gmon.out: the GNU header, then one histogram record per cell of the grid that holds a
/// sample ([`Grid`]; one record over the whole range when the histogram fits one cell), each
/// split into `k = ⌈max / 65535⌉` records of the same range when one of its bins exceeds 65535
/// (spec/merge.md §3), in the host's byte order and word size as glibc writes it. With no
/// sample at all, the first cell is written, empty: a profile always has a histogram record.
/// Only the chunks that hold a tick are put together ([`Bins::chunk`]); the others are zero,
/// put as runs of zeros (hashed in one step, left as holes in the file).
fn emit_gmon(sink: &mut Sink<'_>, h: HistRange, bins: &Bins<'_>) {
    sink.put(&GMON_MAGIC);
    sink.put(&GMON_VERSION.to_ne_bytes());
    sink.put(&[0u8; 12]);
    let grid = Grid::new(h, bins.len());
    let mut written = false;
    for k in 0..grid.len() {
        let cell = grid.cell(k);
        let max = cell_max(bins, cell.bins);
        if max > 0 {
            emit_cell(sink, h.rate, cell, max, bins);
            written = true;
        }
    }
    if !written {
        emit_cell(sink, h.rate, grid.cell(0), 0, bins);
    }
}

/// The chunks of bins `[first, end)` (a cell starts on a chunk boundary), each with the
/// number of its bins in the cell.
fn cell_chunks((first, end): (usize, usize)) -> impl Iterator<Item = (usize, usize)> {
    (first / BIN_CHUNK..end.div_ceil(BIN_CHUNK))
        .map(move |c| (c, ((c + 1) * BIN_CHUNK).min(end) - c * BIN_CHUNK))
}

/// The largest count in bins `[first, end)`.
fn cell_max(bins: &Bins<'_>, cell: (usize, usize)) -> u64 {
    let mut out = [0u32; BIN_CHUNK];
    cell_chunks(cell)
        .filter(|&(c, _)| bins.is_sampled(c))
        .filter_map(|(c, n)| {
            let counts = bins.chunk(c, &mut out);
            counts.get(..n.min(counts.len()))?.iter().copied().max()
        })
        .max()
        .map_or(0, u64::from)
}

/// The records of one cell whose largest bin is `max`.
fn emit_cell(sink: &mut Sink<'_>, rate: u32, cell: Cell, max: u64, bins: &Bins<'_>) {
    let (first, end) = cell.bins;
    let len = end.min(bins.len()).saturating_sub(first);
    let copies = max.div_ceil(MAX_BIN_COUNT).clamp(1, MAX_SPLIT_HISTOGRAMS);
    for j in 0..copies {
        sink.put(&[GMON_TAG_TIME_HIST]);
        sink.put(&(cell.low_pc as usize).to_ne_bytes());
        sink.put(&(cell.high_pc as usize).to_ne_bytes());
        sink.put(&(len as u32).to_ne_bytes());
        sink.put(&rate.to_ne_bytes());
        sink.put(&Dimension::SECONDS.name);
        sink.put(&[Dimension::SECONDS.abbrev]);
        let floor = j * MAX_BIN_COUNT;
        // In chunks: one `put` per bin costs more than the bins themselves.
        let mut counts = [0u32; BIN_CHUNK];
        let mut chunk = [0u8; 2 * BIN_CHUNK];
        let mut zeros = 0u64;
        for (c, n) in cell_chunks((first, first + len)) {
            if !bins.is_sampled(c) {
                zeros += 2 * n as u64;
                continue;
            }
            if zeros > 0 {
                sink.put_zeros(zeros);
                zeros = 0;
            }
            let group = bins.chunk(c, &mut counts);
            let group = group.get(..n.min(group.len())).unwrap_or(&[]);
            for (dst, &c) in chunk.chunks_exact_mut(2).zip(group) {
                let v = u64::from(c).saturating_sub(floor).min(MAX_BIN_COUNT) as u16;
                dst.copy_from_slice(&v.to_ne_bytes());
            }
            sink.put(chunk.get(..2 * group.len()).unwrap_or(&[]));
        }
        if zeros > 0 {
            sink.put_zeros(zeros);
        }
    }
}

/// The gmon.out histogram's range (link-time addresses) and rate.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HistRange {
    pub low_pc: u64,
    pub high_pc: u64,
    pub rate: u32,
    /// The `profil` scale the bins were counted with (spec/runtime.md §4.3).
    pub scale: u32,
}

/// The sidecar's parts gathered before writing.
struct SidecarParts<'a> {
    objects: &'a [u8],
    object_count: u32,
    mappings: &'a [u8],
    mapping_count: u32,
    pcs: &'a [[u64; 2]],
    threads: &'a [[u64; 2]],
    stacks: &'a [u32],
    link: Option<(u64, u64)>,
}

fn section(sink: &mut Sink<'_>, kind: u32, len: u64) {
    sink.put(&kind.to_le_bytes());
    sink.put(&len.to_le_bytes());
}

fn put_u32(sink: &mut Sink<'_>, v: u32) {
    sink.put(&v.to_le_bytes());
}

fn put_u64(sink: &mut Sink<'_>, v: u64) {
    sink.put(&v.to_le_bytes());
}

/// The sidecar (spec §5), little-endian.
fn emit_sidecar(sink: &mut Sink<'_>, s: &ProfileData<'_>, p: &SidecarParts<'_>) {
    sink.put(&GMONX_MAGIC);
    put_u32(sink, GMONX_VERSION);
    put_u32(sink, 0);

    section(sink, SECTION_INFO, 4 + 4 + 5 * 8 + 4 + WRITER.len() as u64);
    put_u32(sink, s.range.rate);
    put_u32(sink, std::process::id());
    let c = s.counters;
    for v in [
        c.samples,
        c.outside_histogram,
        c.dropped,
        c.truncated_stacks,
        c.saturated_bins,
    ] {
        put_u64(sink, v);
    }
    put_u32(sink, WRITER.len() as u32);
    sink.put(WRITER.as_bytes());

    section(sink, SECTION_OBJECTS, 4 + p.objects.len() as u64);
    put_u32(sink, p.object_count);
    sink.put(p.objects);

    section(sink, SECTION_PC_SAMPLES, 4 + 16 * p.pcs.len() as u64);
    put_u32(sink, p.pcs.len() as u32);
    for &[pc, count] in p.pcs {
        put_u64(sink, pc);
        put_u64(sink, count);
    }

    // Stacks: the slots are sorted by stack, so duplicates (a stack stored twice by racing
    // threads) are adjacent and merged here.
    let table = s.stacks;
    let (mut n, mut len) = (0u32, 4u64);
    if let Some(t) = table {
        for (first, _) in merged_stacks(p.stacks, t) {
            n += 1;
            len += 12 + 8 * t.stack(first).count() as u64;
        }
    }
    section(sink, SECTION_STACKS, len);
    put_u32(sink, n);
    if let Some(t) = table {
        for (first, count) in merged_stacks(p.stacks, t) {
            put_u64(sink, count);
            put_u32(sink, t.stack(first).count() as u32);
            for pc in t.stack(first) {
                put_u64(sink, pc);
            }
        }
    }

    section(sink, SECTION_THREADS, 4 + 12 * p.threads.len() as u64);
    put_u32(sink, p.threads.len() as u32);
    for &[tid, samples] in p.threads {
        put_u32(sink, tid as u32);
        put_u64(sink, samples);
    }

    if let Some((length, hash)) = p.link {
        section(sink, SECTION_GMON_LINK, 16);
        put_u64(sink, length);
        put_u64(sink, hash);
    }

    // How each stack was walked (spec §5.10), in the order of the STACKS section.
    if let Some(t) = table {
        section(sink, SECTION_STACK_KINDS, 4 + u64::from(n));
        put_u32(sink, n);
        for (first, _) in merged_stacks(p.stacks, t) {
            sink.put(&[t.kind(first).0]);
        }
    }

    // The sampling clock (spec §5.11).
    let k = s.clock;
    section(sink, SECTION_CLOCK, 4 + 4 + 8 + 8);
    put_u32(sink, k.clock.0);
    put_u32(sink, k.refused_errno);
    put_u64(sink, k.signals);
    put_u64(sink, k.unsampled);

    // Further mappings of the objects' files (spec §5.13), when there are any.
    if p.mapping_count > 0 {
        section(sink, SECTION_MAPPINGS, 4 + p.mappings.len() as u64);
        put_u32(sink, p.mapping_count);
        sink.put(p.mappings);
    }

    // One process, and the threads it sampled (spec §5.14).
    section(sink, SECTION_PROCESSES, 16);
    put_u64(sink, 1);
    put_u64(sink, p.threads.len() as u64);

    // What no clock saw, by cause (spec §5.15).
    if k.before_start_ns != 0 || k.runtime_ns != 0 {
        section(sink, SECTION_UNCLOCKED, 8 + 8);
        put_u64(sink, k.before_start_ns);
        put_u64(sink, k.runtime_ns);
    }

    // When this image was sampled (spec §5.16).
    section(sink, SECTION_WINDOW, 8 + 8);
    put_u64(sink, s.window.start_ns);
    put_u64(sink, s.window.end_ns);

    // When each thread's clock ran (spec §5.17): a clock still running ran to the window's end.
    // Without it when the log cannot be read now (a reader then judges the window alone).
    s.thread_clocks.read(|v| {
        section(sink, SECTION_THREAD_CLOCKS, 8 + 4 + 20 * v.len() as u64);
        put_u64(sink, v.dropped);
        put_u32(sink, v.len() as u32);
        for (tid, start, end) in v.entries(s.window.end_ns) {
            put_u32(sink, tid);
            put_u64(sink, start);
            put_u64(sink, end);
        }
    });
}

/// Sorted stack slots grouped into runs of equal stacks of one kind: (first slot, summed count).
fn merged_stacks<'a>(
    slots: &'a [u32],
    t: &'a StackTable,
) -> impl Iterator<Item = (usize, u64)> + 'a {
    let mut at = 0;
    std::iter::from_fn(move || {
        let first = *slots.get(at)? as usize;
        let mut count = 0u64;
        while let Some(&i) = slots.get(at) {
            if t.stack(i as usize).ne(t.stack(first)) || t.kind(i as usize) != t.kind(first) {
                break;
            }
            count = count.saturating_add(t.count(i as usize));
            at += 1;
        }
        Some((first, count))
    })
}

/// Encodes the loaded objects (sidecar §5.4, without the leading count) into `b.objects`,
/// and the further mappings of their files (§5.13) into `b.mappings`; an object or mapping
/// that does not fit is left out. When another thread keeps the runtime's loader walk
/// (`sys::dl_iterate_phdr_bounded`), the lists of the previous write, or of the session's
/// start, stay (spec/runtime.md §4.5).
pub(crate) fn collect_objects(b: &mut OutputBuffers, further: FurtherMaps<'_>) {
    // Read once per session (an exec makes a new one, a forked child runs the same file): a
    // lookup under `/proc/<pid>/task/<tid>` builds that process's entries afresh, and a second
    // one at exit was a tenth of a short process's runtime cost (spec §6.2, fifth pass). The
    // calling thread's link, not the process's: `/proc/self/exe` is gone once the main thread
    // has called `pthread_exit` (spec §4.5, "The last program thread").
    if b.exe.bytes().is_empty() {
        let _ = b.exe.read_link(c"/proc/thread-self/exe");
    }
    let read_maps = match further {
        FurtherMaps::Skip => false,
        FurtherMaps::Read(seen) => {
            let seen = seen.try_lock().ok();
            b.maps.read_keeping(seen.as_deref().map(SeenMaps::kept))
        }
    };
    let (exe, objects, count) = (&b.exe, &mut b.objects, &mut b.object_count);
    let (maps, mappings, mapping_count) = (&b.maps, &mut b.mappings, &mut b.mapping_count);
    for_each_object_bounded(|o| {
        if o.first {
            // Only once the walk is under way: a walk that could not start keeps the old list.
            objects.len = 0;
            *count = 0;
            mappings.len = 0;
            *mapping_count = 0;
        }
        let path = if o.first && !exe.bytes().is_empty() {
            exe.bytes()
        } else {
            o.name
        };
        let id = o.build_id();
        let nranges = o.exec_ranges().count();
        let need = 8 + 4 + 4 + path.len() + 4 + id.len() + 4 + 16 * nranges;
        if need > objects.room() {
            return;
        }
        objects.put(&o.bias.to_le_bytes());
        objects.put(&o.flags().to_le_bytes());
        objects.put(&(path.len() as u32).to_le_bytes());
        objects.put(path);
        objects.put(&(id.len() as u32).to_le_bytes());
        objects.put(id);
        objects.put(&(nranges as u32).to_le_bytes());
        for r in o.exec_ranges() {
            objects.put(&r.start.to_le_bytes());
            objects.put(&r.end.to_le_bytes());
        }
        if read_maps {
            for f in maps.further(o) {
                if mappings.room() < MAPPING_BYTES {
                    break;
                }
                mappings.put(&count.to_le_bytes());
                mappings.put(&f.range.start.to_le_bytes());
                mappings.put(&f.range.end.to_le_bytes());
                mappings.put(&f.file_offset.to_le_bytes());
                mappings.put(&f.load_bias.to_le_bytes());
                *mapping_count += 1;
            }
        }
        *count += 1;
    });
}

/// The byte order and word size this host's gmon.out is written in (for the tests that hold
/// the encoders to gmon-format's).
#[cfg(test)]
pub(crate) const HOST: gmon_format::Encoding = if cfg!(target_endian = "little") {
    if cfg!(target_pointer_width = "64") {
        gmon_format::Encoding::LITTLE_64
    } else {
        gmon_format::Encoding::LITTLE_32
    }
} else if cfg!(target_pointer_width = "64") {
    gmon_format::Encoding::BIG_64
} else {
    gmon_format::Encoding::BIG_32
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::save::grid::CELL_BINS;
    use gmon_format::merge::fit_counts;
    use gmon_format::{Histogram, ProfRate, Profile, Record, Variant};

    /// gmon.out as [`emit_gmon`] writes it for `counts` (bin, count) in `nbins` bins over
    /// `[low_pc, high_pc)` counted with `profil` scale `scale`.
    fn written(
        low_pc: u64,
        high_pc: u64,
        scale: u32,
        nbins: usize,
        counts: &[(usize, u32)],
    ) -> Vec<u8> {
        let mut bins = vec![0u32; nbins];
        let mut touched = vec![0u64; touched_words(nbins)];
        for &(i, c) in counts {
            bins[i] = c;
            touched[i / BIN_CHUNK / 64] |= 1 << (i / BIN_CHUNK % 64);
        }
        let h = HistRange {
            low_pc,
            high_pc,
            rate: 997,
            scale,
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("gmon.out");
        let mut files = Scratch::new();
        let b = Bins {
            copy: &bins,
            direct: &touched,
            sampled: &touched,
            pcs: &[],
            at: None,
        };
        write_file(path.as_os_str().as_encoded_bytes(), &mut files, |sink| {
            emit_gmon(sink, h, &b)
        })
        .expect("written");
        std::fs::read(&path).expect("read")
    }

    /// What gmon-format writes for these histogram records (bins above 65535 split).
    fn gmon_formats(records: Vec<Histogram>) -> Vec<u8> {
        let mut p = Profile::new_gnu(HOST);
        p.records.extend(records.into_iter().map(Record::Histogram));
        gmon_format::to_vec(&fit_counts(&p, Variant::Gnu).expect("fit")).expect("enc")
    }

    fn hist(low_pc: u64, high_pc: u64, bins: Vec<u64>) -> Histogram {
        Histogram {
            low_pc,
            high_pc,
            prof_rate: ProfRate(997),
            dimension: Dimension::SECONDS,
            bins,
        }
    }

    /// A histogram of one cell, or of bins that are not 4 bytes, is one record over glibc's
    /// range, sampled or not: what the writer wrote before the grid.
    #[test]
    fn one_cell_is_one_record_over_the_whole_range() {
        let n = CELL_BINS;
        let (low, high) = (0x1000, 0x1000 + 4 * n as u64 - 8);
        let mut bins = vec![0u64; n];
        bins[3] = 70_000;
        bins[n - 1] = 5;
        let got = written(low, high, 0x8000, n, &[(3, 70_000), (n - 1, 5)]);
        assert_eq!(got, gmon_formats(vec![hist(low, high, bins)]));
        let got = written(low, high, 0x8000, n, &[]);
        assert_eq!(got, gmon_formats(vec![hist(low, high, vec![0; n])]));
        // Three cells' worth of bins, but not 4 bytes each.
        let n = 3 * CELL_BINS;
        let high = low + 4 * n as u64 - 4;
        let mut bins = vec![0u64; n];
        bins[n - 1] = 9;
        let got = written(low, high, 0x8001, n, &[(n - 1, 9)]);
        assert_eq!(got, gmon_formats(vec![hist(low, high, bins)]));
    }

    /// A larger histogram: one record per cell that holds a sample, on the fixed grid (4 bytes
    /// a bin from `low_pc`), a cell with a bin above 65535 split over records of its range; the
    /// last cell is cut at the bin count. Before the grid: one record of all the bins.
    #[test]
    fn only_sampled_cells_are_written() {
        let n = 4 * CELL_BINS + 100;
        let low = 0x40_0000u64;
        let high = low + 4 * n as u64 - 8;
        let counts = [
            (7, 2),
            (CELL_BINS - 1, 1),
            (2 * CELL_BINS + CELL_BINS / 2, 140_000),
            (n - 1, 3),
        ];
        let got = written(low, high, 0x8000, n, &counts);
        let cell = |k: u64, bins: Vec<u64>| {
            let at = low + 4 * k * CELL_BINS as u64;
            hist(at, at + 4 * bins.len() as u64, bins)
        };
        let mut c0 = vec![0; CELL_BINS];
        (c0[7], c0[CELL_BINS - 1]) = (2, 1);
        let mut c2 = vec![0; CELL_BINS];
        c2[CELL_BINS / 2] = 140_000;
        let mut c4 = vec![0; 100];
        c4[99] = 3;
        assert_eq!(
            got,
            gmon_formats(vec![cell(0, c0), cell(2, c2), cell(4, c4)])
        );
        let p = gmon_format::read(&got).expect("read");
        assert_eq!(p.histograms().count(), 1 + 3 + 1);
        assert_eq!(p.histograms().map(Histogram::total).sum::<u64>(), 140_006);
        assert!(got.len() < 6 * 2 * CELL_BINS, "{} bytes", got.len());
    }

    /// No sample at all: still one record (the first cell's, empty), so that every reader
    /// finds a histogram, and GNU gprof says what it says of any empty profile.
    #[test]
    fn no_sample_writes_the_first_cell() {
        let n = 4 * CELL_BINS + 100;
        let low = 0x40_0000u64;
        let got = written(low, low + 4 * n as u64, 0x8000, n, &[]);
        let first = hist(low, low + 4 * CELL_BINS as u64, vec![0; CELL_BINS]);
        assert_eq!(got, gmon_formats(vec![first]));
    }
}
