//! The unwinder thread: turns the ring's snapshots into call stacks, off the signal path.
//!
//! Every 5 to 80 ms (and when the profile is written) it takes the published snapshots, unwinds
//! each with framehop over the copied stack words, and counts the stack into the session's
//! stack table with its [`StackKind`]. The thread is excluded from sampling, like the watcher.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use framehop::{FrameAddress, Unwinder};
use gmon_format::sidecar::StackKind;

use super::modules::{Modules, NativeUnwinder};
use super::ring::{RING_SLOTS, Ring, Snapshot};
use crate::counts::tables::StackTable;

/// Shortest and longest sleep between two drains. The thread sleeps longer while few samples
/// arrive (each wake-up costs a context switch) and shorter when the ring fills up, so it keeps
/// up with many busy threads: a full ring is not lost, but falls back to frame pointers.
const MIN_INTERVAL: Duration = Duration::from_millis(5);
const MAX_INTERVAL: Duration = Duration::from_millis(80);
/// How long a final drain waits for the unwinder thread to finish its own.
const FLUSH_PATIENCE: Duration = Duration::from_millis(200);

/// What the handler and the unwinder thread share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub ring: Ring,
    pub table: Arc<StackTable>,
    /// Ticks whose stack was cut short.
    pub truncated: AtomicU64,
    /// Ticks whose stack did not fit in the table.
    pub dropped: AtomicU64,
    /// The watcher's reading of the maps: further mappings of the objects' files.
    pub seen: Arc<Mutex<crate::unwind::mappings::SeenMaps>>,
}

/// framehop's state: the loaded objects' CFI and its rule cache.
struct State {
    unwinder: NativeUnwinder,
    cache: framehop::CacheNative<framehop::MustNotAllocateDuringUnwind>,
    modules: Modules,
    pcs: Vec<u64>,
}

impl State {
    fn new() -> State {
        State {
            unwinder: NativeUnwinder::new(),
            cache: framehop::CacheNative::new_in(),
            modules: Modules::default(),
            pcs: Vec::with_capacity(crate::unwind::framepointers::MAX_STACK_DEPTH + 1),
        }
    }

    /// Unwinds every published snapshot into the table; returns how many there were. With
    /// `refresh`, first re-reads the loaded objects if any was loaded or unloaded (allocates);
    /// without, allocates nothing.
    fn drain(&mut self, shared: &Shared, refresh: bool) -> usize {
        let mut refreshed = !refresh;
        shared.ring.drain(|snap| {
            if !refreshed {
                // Only when there is work: picks up objects dlopen'ed since the last drain.
                self.modules.refresh(&mut self.unwinder, &shared.seen);
                refreshed = true;
            }
            let kind = self.unwind(&snap, shared.table.depth());
            let w = u64::from(snap.weight);
            if kind == StackKind::TRUNCATED {
                shared.truncated.fetch_add(w, Ordering::Relaxed);
            }
            if !shared.table.add(&self.pcs, kind, w) {
                shared.dropped.fetch_add(w, Ordering::Relaxed);
            }
        })
    }

    /// Fills `self.pcs` (leaf first: the PC, then return addresses) and says how complete the
    /// stack is.
    fn unwind(&mut self, snap: &Snapshot, depth: usize) -> StackKind {
        self.pcs.clear();
        let regs = native_regs(snap);
        let mut read = |addr: u64| snap.read(addr).ok_or(());
        let mut frames = self
            .unwinder
            .iter_frames(snap.regs.pc, regs, &mut self.cache, &mut read);
        let mut all_cfi = true;
        loop {
            match frames.next() {
                Ok(Some(frame)) => {
                    if self.pcs.len() >= depth {
                        return StackKind::TRUNCATED;
                    }
                    let (addr, lookup) = match frame {
                        FrameAddress::InstructionPointer(pc) => (pc, pc),
                        FrameAddress::ReturnAddress(ra) => (ra.get(), ra.get() - 1),
                    };
                    all_cfi &= self.modules.has_cfi(lookup);
                    self.pcs.push(addr);
                }
                Ok(None) if all_cfi => return StackKind::COMPLETE,
                Ok(None) => return StackKind::FRAME_POINTER,
                Err(_) => {
                    if self.pcs.is_empty() {
                        self.pcs.push(snap.regs.pc);
                    }
                    return StackKind::TRUNCATED;
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn native_regs(s: &Snapshot) -> framehop::UnwindRegsNative {
    framehop::UnwindRegsNative::new(s.regs.pc, s.regs.sp, s.regs.fp)
}

#[cfg(target_arch = "aarch64")]
fn native_regs(s: &Snapshot) -> framehop::UnwindRegsNative {
    framehop::UnwindRegsNative::new(s.regs.lr, s.regs.sp, s.regs.fp)
}

/// The running unwinder thread.
#[derive(Debug)]
pub(crate) struct Worker {
    state: Arc<Mutex<StateCell>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// `State` behind a `Debug` impl (framehop's types have none).
struct StateCell(State);

impl std::fmt::Debug for StateCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("State")
    }
}

impl Worker {
    /// The unwinder's state, without its thread ([`Worker::start_thread`]). The thread reads the
    /// loaded objects' CFI only once a snapshot waits (a drain with work): a process that takes
    /// no sample reads none (reading it, faulting in every object's `.eh_frame`, was most of a
    /// short process's start-up cost). A final drain at exit, which must not allocate and so
    /// does not read the CFI itself, unwinds with what the thread read; in a run that ended
    /// before the thread's first drain with work, its few stacks keep only their leaf.
    pub(crate) fn new() -> Worker {
        Worker {
            state: Arc::new(Mutex::new(StateCell(State::new()))),
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }

    /// Starts the thread (`gmon-unwind`), unless it runs already.
    pub(crate) fn start_thread(&mut self, shared: &Arc<Shared>, spawn: super::SpawnThread) {
        if self.thread.is_some() {
            return;
        }
        let (st, flag, shared) = (
            Arc::clone(&self.state),
            Arc::clone(&self.stop),
            Arc::clone(shared),
        );
        self.thread = spawn(
            "gmon-unwind",
            Box::new(move || {
                let mut interval = MIN_INTERVAL;
                while !flag.load(Ordering::SeqCst) {
                    let n = st
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                        .drain(&shared, true);
                    interval = if n > RING_SLOTS / 4 {
                        (interval / 2).max(MIN_INTERVAL)
                    } else if n < RING_SLOTS / 16 {
                        (interval * 2).min(MAX_INTERVAL)
                    } else {
                        interval
                    };
                    std::thread::park_timeout(interval);
                }
            }),
        )
        .ok();
    }

    /// Unwinds what is in the ring now, on the calling thread, with the objects known (the
    /// profile is being written, maybe at exit: nothing is allocated). When the unwinder thread
    /// is busy, waits for it at most [`FLUSH_PATIENCE`] (it may be stuck behind a lock the
    /// exiting thread holds), then leaves the rest: those ticks keep no stack.
    pub(crate) fn drain(&self, shared: &Shared) {
        let start = std::time::Instant::now();
        loop {
            match self.state.try_lock() {
                Ok(mut s) => {
                    s.0.drain(shared, false);
                    return;
                }
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    p.into_inner().0.drain(shared, false);
                    return;
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    if start.elapsed() > FLUSH_PATIENCE {
                        return;
                    }
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Stops and joins the thread.
    pub(crate) fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }

    /// In a forked child, where this worker's thread does not exist: a worker without a
    /// thread that keeps the objects' CFI the parent had read, when the parent's thread did not
    /// hold the state at the fork (then nothing was changing it), else starts from nothing.
    /// A child that ends before its own thread's first drain with work (a process of a few
    /// milliseconds) unwinds its stacks at exit with what the parent read; starting from
    /// nothing, they kept only their leaf and a frame-pointer guess ("[unknown]" callers).
    /// The parent's thread handle is forgotten, never detached or joined.
    pub(crate) fn after_fork(self) -> Worker {
        let consistent = match self.state.try_lock() {
            Ok(_) => true,
            Err(std::sync::TryLockError::Poisoned(_)) => true,
            Err(std::sync::TryLockError::WouldBlock) => false,
        };
        let state = if consistent {
            Arc::clone(&self.state)
        } else {
            Arc::new(Mutex::new(StateCell(State::new())))
        };
        std::mem::forget(self);
        Worker {
            state,
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }
}
