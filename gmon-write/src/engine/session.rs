//! What a running [`crate::Profiler`] counts into, and how it turns into gmon.out + sidecar.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gmon_format::sidecar::{
    ClockReport, Counters, PcSample, ProcessCount, Sidecar, StackSample, ThreadTotal,
};
use gmon_format::{Dimension, ProfRate};

use crate::arch::Registers;
use crate::counts::profil::bin_index;
use crate::save::histogram::{DIRECT_BIN_CAP, PcBins, TABLE_TICKS_PER_PC};
use crate::save::writer::{
    BIN_CHUNK, FurtherMaps, HistRange, OutputBuffers, ProfileData, touched_words,
};
use crate::unwind::framepointers::{MAX_STACK_DEPTH, walk};
use crate::unwind::mappings::SeenMaps;
use crate::unwind::objects::{StackRanges, loaded_objects, main_text};
use crate::unwind::{DwarfStacks, SpawnThread, Unwind, frame_pointer_kind};
use crate::{Error, Result};

/// Capacity of the per-PC table.
const PC_TABLE_SLOTS: usize = 1 << 16;
/// Capacity of the per-thread table.
const THREAD_TABLE_SLOTS: usize = 1 << 12;
/// Capacity of the stack table.
const STACK_TABLE_SLOTS: usize = 1 << 14;
/// Most ticks one thread's settling adds (bounds the effect of a clock read gone wrong).
const MAX_TAIL: u64 = 10_000;

/// The histogram geometry for a runtime text range: glibc's `__monstartup` arithmetic, with
/// the ends rounded to 16 bytes so that every bin is exactly 4 (spec/runtime.md §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// `lowpc`, runtime, rounded down to 16.
    pub low: u64,
    /// `highpc`, runtime, rounded up to 16.
    pub high: u64,
    /// Number of u16 bins (`kcountsize / 2`).
    pub nbins: usize,
    /// `s_scale`, 16.16.
    pub scale: u32,
}

impl Geometry {
    /// glibc's `kcountsize = ROUNDUP(textsize / 2, 8)`, `s_scale = (float) kcountsize /
    /// textsize * 65536`, over `[lowpc, highpc)` rounded out to 16 bytes where glibc rounds to
    /// 4. glibc's rounding of the bin count made the bins slightly narrower than 4 bytes in
    /// every text that is not a multiple of 16: GNU gprof credits each bin over its whole
    /// (integer) width divided by the (fractional) scale, and so gave a small program's one
    /// function 101.45% of the time. With a multiple of 16, `kcountsize` is exactly half the
    /// text and the scale exactly 1:2.
    pub(crate) fn for_text(low: u64, high: u64) -> Geometry {
        let low = low & !15;
        let high = high.saturating_add(15) & !15;
        let textsize = high.saturating_sub(low);
        let kcountsize = (textsize / 2).saturating_add(7) & !7;
        let scale = if kcountsize < textsize {
            ((kcountsize as f32 / textsize as f32) * 65536.0) as u32
        } else {
            crate::counts::profil::SCALE_ONE_TO_ONE
        };
        Geometry {
            low,
            high,
            nbins: (kcountsize / 2) as usize,
            scale,
        }
    }
}

/// What to record besides the histogram.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Recording {
    pub pcs: bool,
    pub stacks: bool,
    pub max_depth: usize,
    pub unwind: Unwind,
}

/// Where and what a session writes.
#[derive(Clone, Debug)]
pub(crate) struct OutputConfig {
    /// Explicit gmon.out path (else glibc naming).
    pub output: Option<std::path::PathBuf>,
    /// Append `.<pid>` to the name.
    pub append_pid: bool,
    /// Write gmon.out (else only the sidecar).
    pub histogram: bool,
}

/// The preallocated counters of one profiling run.
#[derive(Debug)]
pub(crate) struct Session {
    pub hz: u32,
    pub out: OutputConfig,
    pub geometry: Geometry,
    pub bias: u64,
    /// 32-bit bins: a count above 65535 is written as further records (`save/writer.rs`).
    bins: crate::zeroed::Zeroed<AtomicU32>,
    /// One bit per [`BIN_CHUNK`] bins, set when a tick lands there: a write reads, hashes and
    /// writes only those chunks (the others are zero), and a fork clears only those.
    touched: crate::zeroed::Zeroed<AtomicU64>,
    pcs: Option<crate::counts::tables::CountTable>,
    stacks: Option<Arc<crate::counts::tables::StackTable>>,
    /// The snapshot ring and unwinder thread (stacks on, [`Unwind::Dwarf`]).
    dwarf: Option<DwarfStacks>,
    threads: crate::counts::tables::CountTable,
    pub ranges: StackRanges,
    /// Buffers for writing the profile, allocated now so that writing never allocates.
    pub buffers: Mutex<OutputBuffers>,
    /// The executable file mappings the watcher saw as the program ran (spec §5.13).
    pub seen_maps: Arc<Mutex<SeenMaps>>,
    samples: AtomicU64,
    outside: AtomicU64,
    dropped: AtomicU64,
    truncated: AtomicU64,
    overflows: AtomicU64,
    saturated: AtomicU64,
    /// Sample signals taken (a timer's counts `1 + overrun` ticks).
    signals: AtomicU64,
    /// Ticks due from threads that ended before their first sample (spec §4.1, "The tail").
    unsampled: AtomicU64,
    /// CPU time of ended threads less than a period, carried to the next (`settle_thread`).
    carried_ns: AtomicU64,
    /// CPU time of threads before their clocks were armed (`count_unclocked`).
    unclocked_ns: AtomicU64,
    /// CPU time of this image before the runtime started (`count_before_start`).
    before_start_ns: AtomicU64,
    /// CPU time of the runtime's own start and threads (`count_runtime`).
    runtime_ns: AtomicU64,
    /// `CLOCK_MONOTONIC` when the session started, or a forked child's copy of it was reset:
    /// the start of the sidecar's WINDOW (spec/runtime.md §5.16).
    started_ns: AtomicU64,
    /// When each thread's clock ran: the sidecar's THREAD_CLOCKS (spec/runtime.md §5.17).
    pub(crate) thread_clocks: crate::engine::threadclocks::ThreadClockLog,
}

impl Session {
    pub(crate) fn new(
        hz: u32,
        rec: Recording,
        out: OutputConfig,
        spawn: SpawnThread,
    ) -> Result<Session> {
        let (lo, hi, bias) = main_text().ok_or(Error::NoText)?;
        let geometry = Geometry::for_text(lo, hi);
        let ranges = StackRanges::new();
        // Started on the main thread (the preload constructor, or a program's `main`), only
        // its stack is needed before the watcher's first wake-up re-reads the maps (threads
        // created later do that when they register themselves).
        let on_main = crate::sys::gettid() == std::process::id() as i32;
        if rec.stacks && !(on_main && ranges.seed_main_stack()) {
            ranges.refresh();
        }
        let stacks = rec.stacks.then(|| {
            Arc::new(crate::counts::tables::StackTable::new(
                STACK_TABLE_SLOTS,
                rec.max_depth.clamp(1, MAX_STACK_DEPTH),
            ))
        });
        let seen_maps = Arc::new(Mutex::new(SeenMaps::new()));
        let dwarf = stacks
            .as_ref()
            .filter(|_| rec.unwind == Unwind::Dwarf)
            .map(|t| DwarfStacks::start(Arc::clone(t), spawn, Arc::clone(&seen_maps)));
        let mut buffers = OutputBuffers::new(
            geometry.nbins,
            if rec.pcs { PC_TABLE_SLOTS } else { 0 },
            THREAD_TABLE_SLOTS,
            if rec.stacks { STACK_TABLE_SLOTS } else { 0 },
        );
        // The objects as they are now: what a write at exit keeps when it cannot list them
        // again (another thread kept the loader walk, spec §4.5).
        crate::save::writer::collect_objects(&mut buffers, FurtherMaps::Skip);
        let session = Session {
            hz,
            out,
            geometry,
            bias,
            bins: crate::counts::tables::zeroed_u32(geometry.nbins),
            touched: crate::counts::tables::zeroed_u64(touched_words(geometry.nbins)),
            pcs: rec
                .pcs
                .then(|| crate::counts::tables::CountTable::new(PC_TABLE_SLOTS)),
            stacks,
            dwarf,
            threads: crate::counts::tables::CountTable::noting(THREAD_TABLE_SLOTS),
            ranges,
            buffers: Mutex::new(buffers),
            seen_maps,
            samples: AtomicU64::new(0),
            outside: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            truncated: AtomicU64::new(0),
            overflows: AtomicU64::new(0),
            saturated: AtomicU64::new(0),
            signals: AtomicU64::new(0),
            unsampled: AtomicU64::new(0),
            carried_ns: AtomicU64::new(0),
            unclocked_ns: AtomicU64::new(0),
            before_start_ns: AtomicU64::new(0),
            runtime_ns: AtomicU64::new(0),
            started_ns: AtomicU64::new(crate::sys::monotonic_ns()),
            thread_clocks: Default::default(),
        };
        session.set_paths(false);
        Ok(session)
    }

    /// Decides the output paths (glibc's naming, `forked`: append `.<pid>`), so that writing
    /// does not have to. Called when the session starts and in a forked child.
    pub(crate) fn set_paths(&self, forked: bool) {
        use std::os::unix::ffi::OsStrExt;
        let cfg = &self.out;
        let path = crate::save::output::output_path(
            cfg.output.as_deref(),
            cfg.append_pid || forked,
            std::process::id(),
        );
        let sidecar = gmon_format::sidecar_path(&path);
        let mut b = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        b.gmon.set(path.as_os_str().as_bytes());
        b.sidecar.set(sidecar.as_os_str().as_bytes());
        b.named_for_exec = false;
    }

    pub(crate) fn wants_stacks(&self) -> bool {
        self.stacks.is_some()
    }

    /// Starts the unwinder thread, when stacks are unwound from DWARF and it is not running yet
    /// (the watcher calls this, spec/runtime.md §4.4).
    pub(crate) fn start_unwinder(&self) {
        if let Some(d) = &self.dwarf {
            d.start_thread();
        }
    }

    /// Counts one tick of `weight` (1 + timer overruns). Called from the signal handler:
    /// atomics only, no allocation, no locks.
    #[inline(always)]
    pub(crate) fn record(&self, regs: &Registers, tid: u64, weight: u32) {
        let w = u64::from(weight);
        self.signals.fetch_add(1, Ordering::Relaxed);
        self.count_pc(regs.pc, tid, weight);
        if let Some(stacks) = &self.stacks {
            if let Some(d) = &self.dwarf
                && d.capture(regs, &self.ranges, weight)
            {
                // Unwound and counted later by the unwinder thread.
                return;
            }
            let mut buf = [0u64; MAX_STACK_DEPTH];
            let depth = stacks.depth().min(buf.len());
            let (n, cut) = walk(regs, &self.ranges, buf.get_mut(..depth).unwrap_or(&mut []));
            if cut {
                self.truncated.fetch_add(w, Ordering::Relaxed);
            }
            if !stacks.add(buf.get(..n).unwrap_or(&[]), frame_pointer_kind(cut), w) {
                self.dropped.fetch_add(w, Ordering::Relaxed);
            }
        }
    }

    /// Counts `weight` ticks at `pc` in thread `tid`: everything but the stack.
    ///
    /// The PC table's ticks reach the histogram when it is written (spec/runtime.md §4.3, "Bins
    /// from the PC table"): only what the table cannot take is counted into the bins here.
    #[inline(always)]
    fn count_pc(&self, pc: u64, tid: u64, weight: u32) {
        let w = u64::from(weight);
        self.samples.fetch_add(w, Ordering::Relaxed);
        let in_table = match self.pcs.as_ref().map(|pcs| pcs.add(pc, w)) {
            Some(Some(before)) => w.min(TABLE_TICKS_PER_PC.saturating_sub(before)),
            Some(None) => {
                self.dropped.fetch_add(w, Ordering::Relaxed);
                0
            }
            None => 0,
        };
        let g = &self.geometry;
        match bin_index(pc, g.low, g.scale, self.bins.len())
            .and_then(|i| Some((i, self.bins.get(i)?)))
        {
            Some((i, bin)) => {
                let direct = u32::try_from(w - in_table).unwrap_or(weight);
                if direct != 0 {
                    self.touch(i);
                    let (lost, reached) = add_capped(bin, direct);
                    if reached {
                        self.saturated.fetch_add(1, Ordering::Relaxed);
                    }
                    if lost != 0 {
                        self.overflows.fetch_add(u64::from(lost), Ordering::Relaxed);
                    }
                }
            }
            None => {
                self.outside.fetch_add(w, Ordering::Relaxed);
            }
        }
        self.threads.add_noting(tid, w, pc);
    }

    /// Where the PC table's ticks go in the histogram (None without a table: then every tick
    /// is counted into the bins).
    fn pc_bins(&self) -> Option<PcBins> {
        self.pcs.as_ref().map(|_| PcBins {
            low: self.geometry.low,
            scale: self.geometry.scale,
            nbins: self.bins.len(),
        })
    }

    /// Marks bin `i`'s chunk as touched (async-signal-safe: one load, rarely an `or`).
    #[inline(always)]
    fn touch(&self, i: usize) {
        let chunk = i / BIN_CHUNK;
        if let Some(w) = self.touched.get(chunk / 64) {
            let bit = 1u64 << (chunk % 64);
            if w.load(Ordering::Relaxed) & bit == 0 {
                w.fetch_or(bit, Ordering::Relaxed);
            }
        }
    }

    /// Settles thread `tid` whose clock is being deleted (spec §4.1, "The tail"): it used
    /// `used_ns` of CPU time since its clock was armed, worth `used_ns / period_ns` ticks;
    /// those not counted yet are counted at the PC of its last tick, without a stack (counted
    /// in `dropped`). The fraction of a period left over is carried to the next thread that
    /// ends: over many threads shorter than a few periods, the fractions add up to whole
    /// periods that rounding each thread down would lose. A thread never sampled has no PC to
    /// give its ticks: they are counted in `unsampled`, as is a tail above [`MAX_TAIL`].
    ///
    /// A clock whose first period was drawn at random (`phased`: the perf task clock) already
    /// counts `used / period` ticks on average, the last fraction included: only whole
    /// periods it missed (a thread that blocked the sample signal stops its clock) are owed,
    /// and no fraction is carried, which would count the last fraction twice.
    pub(crate) fn settle_thread(&self, tid: u64, used_ns: u64, period_ns: u64, phased: bool) {
        let period = period_ns.max(1);
        let (counted, pc) = self.threads.get(tid).unwrap_or((0, 0));
        let owed_ns = used_ns.saturating_sub(counted.saturating_mul(period));
        let mut owed = owed_ns / period;
        if !phased && self.carry(owed_ns % period, period) {
            owed += 1;
        }
        if counted == 0 {
            self.unsampled.fetch_add(owed, Ordering::Relaxed);
            return;
        }
        let tail = owed.min(MAX_TAIL);
        self.unsampled.fetch_add(owed - tail, Ordering::Relaxed);
        if tail == 0 {
            return;
        }
        self.count_pc(pc, tid, tail as u32);
        if self.stacks.is_some() {
            self.dropped.fetch_add(tail, Ordering::Relaxed);
        }
    }

    /// At the end of the image (exit, or an exec; spec/runtime.md §4.1, "The tail"): the
    /// fraction of a period still carried after every thread was settled is counted as one
    /// tick with probability `fraction / period`, at the PC of thread `tid`'s last tick (else
    /// the main thread's). Rounding it down lost half a period per process on average: 17 %
    /// of a 3 ms process at 1000 Hz. Unbiased, so a run of many short processes adds up.
    /// Async-signal-safe (`getrandom`, atomics).
    pub(crate) fn settle_remainder(&self, tid: u64, period_ns: u64) {
        let period = period_ns.max(1);
        let rem = self.carried_ns.swap(0, Ordering::Relaxed);
        let draw = crate::sys::random_u64().unwrap_or(u64::MAX) % period;
        if draw >= rem {
            return;
        }
        let main = u64::from(std::process::id());
        let Some((tid, pc)) = [tid, main].into_iter().find_map(|t| {
            self.threads
                .get(t)
                .filter(|(n, _)| *n > 0)
                .map(|(_, pc)| (t, pc))
        }) else {
            self.unsampled.fetch_add(1, Ordering::Relaxed);
            return;
        };
        self.count_pc(pc, tid, 1);
        if self.stacks.is_some() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts `ns` of CPU time a thread spent before its clock was armed (its start-up: the
    /// kernel's return from `clone`, libc's thread start, opening the clock): due ticks no
    /// clock could see, reported in `unsampled` (spec/runtime.md §4.1, "The tail").
    pub(crate) fn count_unclocked(&self, ns: u64) {
        self.unclocked_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Counts `ns` of this image's CPU time spent before the runtime started sampling it (the
    /// exec, the dynamic loader, earlier constructors): spec/runtime.md §4.5, "What no clock
    /// sees".
    pub(crate) fn count_before_start(&self, ns: u64) {
        self.before_start_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Counts `ns` of CPU time of the runtime's own work that no clock samples: its start before
    /// the first clock, its threads (§4.5).
    pub(crate) fn count_runtime(&self, ns: u64) {
        self.runtime_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Adds `rem_ns` to the carried fraction of a period; true when that made a whole period
    /// (then taken out of it).
    fn carry(&self, rem_ns: u64, period: u64) -> bool {
        let mut whole = false;
        let _ = self
            .carried_ns
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                let t = c.saturating_add(rem_ns);
                whole = t >= period;
                Some(if whole { t - period } else { t })
            });
        whole
    }

    /// Zeroes every counter (a forked child starts from nothing).
    pub(crate) fn reset(&self) {
        for (w, word) in self.touched.iter().enumerate() {
            let bits = word.swap(0, Ordering::Relaxed);
            for chunk in (0..64).filter(|c| bits & (1 << c) != 0) {
                let start = (w * 64 + chunk) * BIN_CHUNK;
                for b in self.bins.iter().skip(start).take(BIN_CHUNK) {
                    b.store(0, Ordering::Relaxed);
                }
            }
        }
        if let Some(p) = &self.pcs {
            p.clear();
        }
        if let Some(s) = &self.stacks {
            s.clear();
        }
        if let Some(d) = &self.dwarf {
            d.reset();
        }
        self.threads.clear();
        for c in [
            &self.samples,
            &self.outside,
            &self.dropped,
            &self.truncated,
            &self.overflows,
            &self.saturated,
            &self.signals,
            &self.unsampled,
            &self.unclocked_ns,
            &self.before_start_ns,
            &self.runtime_ns,
            &self.carried_ns,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        self.started_ns
            .store(crate::sys::monotonic_ns(), Ordering::Relaxed);
        self.thread_clocks.clear();
    }

    /// The sidecar's WINDOW: from the session's start until now (spec §5.16).
    fn window_until_now(&self) -> gmon_format::sidecar::SamplingWindow {
        gmon_format::sidecar::SamplingWindow {
            start_ns: self.started_ns.load(Ordering::Relaxed),
            end_ns: crate::sys::monotonic_ns(),
        }
    }

    /// What a write reads (queued stack snapshots are unwound first).
    pub(crate) fn data(&self) -> ProfileData<'_> {
        // The window ends before the queued stacks are unwound: that work at exit is the
        // runtime's, which an observer outside the process may sample (spec §5.16).
        let window = self.window_until_now();
        if let Some(d) = &self.dwarf {
            d.flush();
        }
        ProfileData {
            bins: &self.bins,
            touched: &self.touched,
            pc_bins: self.pc_bins(),
            range: self.histogram_range(),
            counters: self.counters(),
            pcs: self.pcs.as_ref(),
            threads: &self.threads,
            stacks: self.stacks.as_deref(),
            clock: self.clock_report(),
            seen: &self.seen_maps,
            window,
            thread_clocks: &self.thread_clocks,
        }
    }

    /// What the sampling clock did so far (sidecar §5.11).
    pub(crate) fn clock_report(&self) -> ClockReport {
        let (clock, refused_errno) = crate::engine::perfclock::in_use();
        ClockReport {
            clock,
            refused_errno,
            signals: self.signals.load(Ordering::Relaxed),
            unsampled: self.unsampled.load(Ordering::Relaxed)
                + self.unclocked_ns.load(Ordering::Relaxed)
                    / (1_000_000_000 / u64::from(self.hz.max(1))).max(1),
            before_start_ns: self.before_start_ns.load(Ordering::Relaxed),
            runtime_ns: self.runtime_ns.load(Ordering::Relaxed),
        }
    }

    /// The gmon.out histogram's range (link-time) and rate.
    pub(crate) fn histogram_range(&self) -> HistRange {
        HistRange {
            low_pc: self.geometry.low.wrapping_sub(self.bias),
            high_pc: self.geometry.high.wrapping_sub(self.bias),
            rate: self.hz,
            scale: self.geometry.scale,
        }
    }

    /// The sidecar's counters so far.
    pub(crate) fn counters(&self) -> Counters {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (truncated, dropped, _) = self.dwarf.as_ref().map_or((0, 0, 0), |d| d.counters());
        Counters {
            samples: load(&self.samples),
            outside_histogram: load(&self.outside),
            dropped: load(&self.dropped) + dropped,
            truncated_stacks: load(&self.truncated) + truncated,
            saturated_bins: load(&self.saturated),
        }
    }

    /// Total ticks counted so far.
    pub(crate) fn samples(&self) -> u64 {
        self.samples.load(Ordering::Relaxed)
    }

    /// The histogram as gmon.out stores it: link-time addresses (runtime − load bias, as glibc
    /// writes them).
    pub(crate) fn histogram(&self) -> gmon_format::Histogram {
        let r = self.histogram_range();
        gmon_format::Histogram {
            low_pc: r.low_pc,
            high_pc: r.high_pc,
            prof_rate: ProfRate(r.rate),
            dimension: Dimension::SECONDS,
            bins: crate::save::histogram::dense(
                &self.bins,
                self.pcs.iter().flat_map(|t| t.entries()),
                self.pc_bins(),
            ),
        }
    }

    /// The sidecar's contents (without the gmon.out link).
    pub(crate) fn sidecar(&self) -> Sidecar {
        let window = self.window_until_now();
        if let Some(d) = &self.dwarf {
            d.flush();
        }
        let stacks = self
            .stacks
            .as_ref()
            .map(|t| t.entries())
            .unwrap_or_default();
        let seen = self.seen_maps.lock().unwrap_or_else(|e| e.into_inner());
        let (objects, mappings) = loaded_objects(Some(seen.kept()));
        drop(seen);
        let threads: Vec<ThreadTotal> = self
            .threads
            .entries()
            .into_iter()
            .map(|(tid, samples)| ThreadTotal {
                tid: tid as u32,
                samples,
            })
            .collect();
        Sidecar {
            writer: crate::save::writer::WRITER.to_string(),
            rate_hz: self.hz,
            pid: std::process::id(),
            counters: self.counters(),
            objects,
            mappings,
            processes: Some(ProcessCount {
                processes: 1,
                threads: threads.len() as u64,
            }),
            pc_samples: self
                .pcs
                .as_ref()
                .map(|t| {
                    t.entries()
                        .into_iter()
                        .map(|(pc, count)| PcSample { pc, count })
                        .collect()
                })
                .unwrap_or_default(),
            stack_kinds: stacks.iter().map(|&(_, kind, _)| kind).collect(),
            stacks: stacks
                .into_iter()
                .map(|(pcs, _, count)| StackSample { count, pcs })
                .collect(),
            threads,
            gmon: None,
            clock: Some(self.clock_report()),
            window: Some(window),
            thread_clocks: self.thread_clocks.read(|v| v.to_sidecar(window.end_ns)),
        }
    }

    /// Ticks that a bin at its cap could not hold.
    pub(crate) fn overflows(&self) -> u64 {
        self.overflows.load(Ordering::Relaxed)
    }
}

/// Adds `weight` to a bin, up to [`DIRECT_BIN_CAP`]. Returns the part that did not fit and
/// whether this call made the bin reach the cap. Lock-free, for the signal handler.
#[inline]
fn add_capped(bin: &AtomicU32, weight: u32) -> (u32, bool) {
    let r = bin.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cur| {
        let add = weight.min(DIRECT_BIN_CAP.saturating_sub(cur));
        (add != 0).then(|| cur + add)
    });
    match r {
        Ok(prev) => {
            let add = weight.min(DIRECT_BIN_CAP - prev);
            (weight - add, prev + add == DIRECT_BIN_CAP)
        }
        Err(_) => (weight, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bin_is_four_bytes() {
        // textsize 0x1458 (observed t1): glibc's geometry gave 1304 bins, a scale just under
        // 1:2 (GNU gprof then credited a function up to 101.45%); rounded to 16: 0x1460 bytes.
        let g = Geometry::for_text(0, 0x1458);
        assert_eq!(g.nbins, 0x1460 / 4);
        assert_eq!(g.scale, 0x8000);
        // Both ends rounded out to 16.
        let g = Geometry::for_text(0x1001, 0x1005);
        assert_eq!((g.low, g.high), (0x1000, 0x1010));
        assert_eq!((g.nbins, g.scale), (4, 0x8000));
        for (lo, hi) in [(0x400000, 0x400123), (0x1040, 0x9_0001), (0x7, 0x8)] {
            let g = Geometry::for_text(lo, hi);
            assert_eq!(g.scale, 0x8000, "{lo:#x}..{hi:#x}");
            assert_eq!((g.high - g.low) / 4, g.nbins as u64, "{lo:#x}..{hi:#x}");
        }
    }
}

/// The allocation-free encoders of `save/writer.rs` against gmon-format's.
#[cfg(test)]
mod writer_tests {
    use super::*;
    use crate::arch::Registers;
    use crate::save::grid::CELL_BINS;
    use crate::save::writer::HOST;
    use crate::save::writer::write_profile;
    use gmon_format::merge::fit_counts;
    use gmon_format::sidecar::{GmonLink, sidecar_to_vec};
    use gmon_format::{Histogram, Profile, Record, Variant};

    fn session(dir: &std::path::Path) -> Session {
        let rec = Recording {
            pcs: true,
            stacks: true,
            max_depth: 8,
            unwind: Unwind::FramePointers,
        };
        let out = OutputConfig {
            output: Some(dir.join("t.out")),
            append_pid: false,
            histogram: true,
        };
        // A plain thread for the unwinder: no sampling runs in these tests.
        let spawn: crate::unwind::SpawnThread =
            |name, f| std::thread::Builder::new().name(name.into()).spawn(f);
        Session::new(997, rec, out, spawn).expect("session")
    }

    /// The records of `full`'s grid cells that hold a sample, derived here from the grid's
    /// definition (spec/runtime.md §1): cell `k` is bins `[k·CELL_BINS, (k+1)·CELL_BINS)` over 4
    /// bytes of text per bin from `low_pc`.
    fn sampled_cells(full: &Histogram) -> impl Iterator<Item = Histogram> + '_ {
        full.bins
            .chunks(CELL_BINS)
            .enumerate()
            .filter(|(_, b)| b.iter().any(|&c| c > 0))
            .map(|(k, b)| {
                let low_pc = full.low_pc + 4 * (k * CELL_BINS) as u64;
                Histogram {
                    low_pc,
                    high_pc: low_pc + 4 * b.len() as u64,
                    prof_rate: full.prof_rate,
                    dimension: full.dimension,
                    bins: b.to_vec(),
                }
            })
    }

    /// The allocation-free encoders write exactly what gmon-format's do: gmon.out as
    /// `to_vec(fit_counts(..))` (bins above 65535 split over further records), the sidecar as
    /// `sidecar_to_vec`.
    #[test]
    fn bytes_are_gmon_formats() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = session(dir.path());
        let bins = &s.bins;
        let n = bins.len();
        for (i, v) in [(0, 70_000u32), (1, 2), (n / 2, 200_000), (n - 1, 65_535)] {
            bins[i].store(v, Ordering::Relaxed);
            s.touch(i);
        }
        let main = s.geometry.low;
        for (k, pc) in [main + 8, main + 8, main + 40, 0x7f00_0000_1000, main + 8]
            .into_iter()
            .enumerate()
        {
            let regs = Registers {
                pc,
                fp: 0,
                sp: 0,
                lr: 0,
            };
            s.record(&regs, 100 + (k as u64 % 2), 1 + k as u32);
        }
        // A second mapping of the executable's code, which both encoders must list.
        let _one = crate::unwind::mappings::tests::MAPS_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let copy = crate::unwind::mappings::tests::SecondCopy::of(main);
        let mut b = s.buffers.lock().expect("buffers");
        write_profile(&s.data(), &mut b, true).expect("written");
        let gmon = std::fs::read(dir.path().join("t.out")).expect("gmon.out");
        let written = std::fs::read(dir.path().join("t.out.gmonx")).expect("sidecar");

        // The test executable's text is megabytes: 4-byte bins, many cells, of which three
        // hold samples (the first with a bin above 65535, the middle one two records' worth).
        assert_eq!(s.geometry.scale, 0x8000);
        assert!(n > 3 * CELL_BINS, "{n} bins");
        let mut p = Profile::new_gnu(HOST);
        p.records
            .extend(sampled_cells(&s.histogram()).map(Record::Histogram));
        let want = gmon_format::to_vec(&fit_counts(&p, Variant::Gnu).expect("fit")).expect("enc");
        assert_eq!(gmon, want);
        let read = gmon_format::read(&gmon).expect("read");
        assert_eq!(read.histograms().count(), 2 + 4 + 1);
        assert_eq!(
            read.histograms().map(Histogram::total).sum::<u64>(),
            s.histogram().total()
        );

        let mut sidecar = s.sidecar();
        sidecar.gmon = Some(GmonLink::of(&gmon));
        // Both say when the session started; each its own moment of writing.
        let window = gmon_format::read_sidecar(&written)
            .expect("read")
            .window
            .expect("a window");
        let now = sidecar.window.expect("a window");
        assert_eq!(window.start_ns, now.start_ns);
        assert!(window.start_ns <= window.end_ns && window.end_ns <= now.end_ns);
        sidecar.window = Some(window);
        assert_eq!(written, sidecar_to_vec(&sidecar).expect("enc"));
        assert_eq!(sidecar.stacks.len(), 3);
        assert!(
            sidecar.mappings.iter().any(|m| m.range.start == copy.at),
            "{:x?}",
            sidecar.mappings
        );
        assert_eq!(sidecar.processes.map(|p| p.processes), Some(1));
    }

    /// Ticks spread over the text touch no page of the histogram's bins, in the handler or at
    /// the write: they are counted in the PC table, whose entries are packed, and put in their
    /// bins as the histogram is written (spec/runtime.md §4.3, "Bins from the PC table"). Each
    /// of them first-touched a page of bins and one of the write's copy before (a short `cc1`:
    /// about 3,000 page faults).
    #[test]
    fn ticks_over_the_text_touch_no_page_of_bins() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = session(dir.path());
        let g = s.geometry;
        let pcs: Vec<u64> = (g.low..g.high).step_by(8192).take(200).collect();
        assert!(pcs.len() >= 100, "{} PCs: text too small", pcs.len());
        let mut weights = 0;
        for (k, &pc) in pcs.iter().enumerate() {
            let regs = Registers {
                pc: pc + 2,
                fp: 0,
                sp: 0,
                lr: 0,
            };
            let w = 1 + (k % 3) as u32;
            s.record(&regs, 100, w);
            weights += u64::from(w);
        }
        assert_eq!(s.bins.resident_pages(), 0, "bins touched by the handler");
        let mut b = s.buffers.lock().expect("buffers");
        write_profile(&s.data(), &mut b, true).expect("written");
        assert_eq!(b.histogram_copy_pages(), 0, "bins touched by the write");
        drop(b);
        assert_eq!(s.bins.resident_pages(), 0, "bins read by the write");
        let gmon = gmon_format::read(&std::fs::read(dir.path().join("t.out")).expect("gmon.out"))
            .expect("read");
        // Every tick in the bin of its PC: one record per sampled cell.
        let mut p = Profile::new_gnu(HOST);
        p.records
            .extend(sampled_cells(&s.histogram()).map(Record::Histogram));
        assert_eq!(gmon.histograms().count(), pcs.len());
        assert!(gmon.histograms().eq(p.histograms()));
        assert_eq!(
            gmon.histograms().map(Histogram::total).sum::<u64>(),
            weights
        );
    }
}
