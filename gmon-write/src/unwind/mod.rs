//! Call stacks from DWARF call-frame information (`.eh_frame`), for code built without frame
//! pointers (distribution binaries: python3, coreutils, libc).
//!
//! Unwinding with CFI means interpreting each object's tables, which allocates and takes the
//! loader's lock: it cannot run in a signal handler. So the work is split as
//! `perf record --call-graph dwarf` splits it (`spec/runtime.md` §4.4):
//!
//! 1. **In the handler** ([`ring`]): copy the registers the unwinder starts from (pc, sp, frame
//!    pointer, and the link register on aarch64) and at most 16 KiB of the stack from `sp`
//!    upwards, bounded by the end of the stack's mapping, into a preallocated slot. Atomics
//!    only; a full ring makes the handler fall back to the frame-pointer walk.
//! 2. **On the `gmon-unwind` thread** ([`worker`]): unwind each snapshot with framehop over the
//!    CFI of every loaded object ([`modules`], read from memory, re-read after a `dlopen`) and
//!    count the stack into the session's stack table, with its [`StackKind`].

//!
//! Also here: the frame-pointer walk the handler does itself ([`framepointers`]) and the loaded
//! objects and stack ranges both walks read ([`objects`]). The unwinder's thread is started
//! through a [`SpawnThread`] the engine hands it, so nothing here calls up into the engine.

pub(crate) mod framepointers;
pub(crate) mod mappings;
mod modules;
pub(crate) mod objects;
mod ring;
mod worker;

use std::sync::{Arc, Mutex, PoisonError};

use gmon_format::sidecar::StackKind;

use crate::arch::Registers;
use crate::counts::tables::StackTable;
use crate::unwind::objects::StackRanges;

pub use ring::SNAPSHOT_BYTES;

/// Starts one of the runtime's own threads, never sampled (the engine's
/// `sampler::spawn_runtime_thread_boxed`).
pub(crate) type SpawnThread =
    fn(&str, Box<dyn FnOnce() + Send + 'static>) -> std::io::Result<std::thread::JoinHandle<()>>;

/// How call stacks are walked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unwind {
    /// In the signal handler, through frame pointers: cheap, but a function built without them
    /// hides its caller.
    FramePointers,
    /// From a stack snapshot, with the objects' `.eh_frame` (framehop), on a runtime thread;
    /// frame pointers where an object has no CFI. Exact on distribution binaries.
    #[default]
    Dwarf,
}

impl Unwind {
    /// `fp` or `dwarf` (as `GMON_RECORD_UNWIND` spells them).
    pub fn parse(s: &str) -> Option<Unwind> {
        match s {
            "fp" => Some(Unwind::FramePointers),
            "dwarf" => Some(Unwind::Dwarf),
            _ => None,
        }
    }
}

/// The DWARF unwinding of one session: the ring the handler fills and the thread that empties
/// it.
#[derive(Debug)]
pub(crate) struct DwarfStacks {
    shared: Arc<worker::Shared>,
    /// Replaced in a forked child (see [`DwarfStacks::reset`]); only taken by the session's
    /// owner under the sampler's control lock or after sampling stopped, never by the handler.
    worker: Mutex<Option<worker::Worker>>,
    spawn: SpawnThread,
}

impl DwarfStacks {
    /// Allocates the ring. The unwinder thread is started later by [`DwarfStacks::start_thread`]
    /// (the watcher's first wake-up, spec/runtime.md §4.4): a process that ends sooner never
    /// creates it, and unwinds its few snapshots at exit.
    pub(crate) fn start(
        table: Arc<StackTable>,
        spawn: SpawnThread,
        seen: Arc<Mutex<mappings::SeenMaps>>,
    ) -> DwarfStacks {
        let shared = Arc::new(worker::Shared {
            ring: ring::Ring::new(),
            table,
            truncated: Default::default(),
            dropped: Default::default(),
            seen,
        });
        DwarfStacks {
            shared,
            worker: Mutex::new(Some(worker::Worker::new())),
            spawn,
        }
    }

    /// Starts the unwinder thread (`gmon-unwind`) unless it runs already. Called by the
    /// watcher at each wake-up, the first of which comes 10 ms after the session (or a forked
    /// child) started: the thread's first drain with work came no sooner when it was started
    /// with the session, as it slept 10 ms after finding the ring empty at its start.
    pub(crate) fn start_thread(&self) {
        let mut w = self.worker.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(w) = w.as_mut() {
            w.start_thread(&self.shared, self.spawn);
        }
    }

    /// Queues a snapshot for unwinding. Signal handler: atomics only. False when it could not
    /// (the caller walks frame pointers instead).
    #[inline(always)]
    pub(crate) fn capture(&self, regs: &Registers, ranges: &StackRanges, weight: u32) -> bool {
        self.shared.ring.capture(regs, ranges, weight)
    }

    /// Unwinds every queued snapshot now (before the stack table is read).
    pub(crate) fn flush(&self) {
        let w = self.worker.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(w) = w.as_ref() {
            w.drain(&self.shared);
        }
    }

    /// (truncated, dropped, ring full) ticks counted on the unwinding side.
    pub(crate) fn counters(&self) -> (u64, u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.shared.truncated.load(Relaxed),
            self.shared.dropped.load(Relaxed),
            self.shared.ring.full.load(Relaxed),
        )
    }

    /// In a forked child: empties the ring, zeroes the counters and replaces the worker by one
    /// without a thread (the parent's is not there, and its lock may be held); the child's
    /// watcher starts its thread ([`DwarfStacks::start_thread`]).
    pub(crate) fn reset(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        self.shared.ring.clear();
        self.shared.truncated.store(0, Relaxed);
        self.shared.dropped.store(0, Relaxed);
        let mut w = self.worker.lock().unwrap_or_else(PoisonError::into_inner);
        *w = Some(
            w.take()
                .map_or_else(worker::Worker::new, worker::Worker::after_fork),
        );
    }
}

impl Drop for DwarfStacks {
    fn drop(&mut self) {
        let w = self
            .worker
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(w) = w {
            w.stop();
        }
    }
}

/// The kind of a stack walked through frame pointers in the handler.
pub(crate) fn frame_pointer_kind(cut: bool) -> StackKind {
    if cut {
        StackKind::TRUNCATED
    } else {
        StackKind::FRAME_POINTER
    }
}
