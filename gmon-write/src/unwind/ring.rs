//! The snapshot ring: what the signal handler hands to the unwinder thread.
//!
//! A fixed array of slots, each holding the interrupted registers and a copy of the top of the
//! thread's stack (at most [`SNAPSHOT_BYTES`]). The handler claims a free slot with one
//! compare-and-swap, fills it with plain atomic stores and publishes it; the unwinder thread
//! (the only consumer) takes published slots and frees them. Nothing allocates, nothing waits:
//! when no free slot is found within a few probes the handler gives up and counts the miss
//! (the caller then walks frame pointers instead).

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::arch::Registers;
use crate::counts::tables::zeroed_u64;
use crate::unwind::objects::StackRanges;

/// Bytes of stack copied per sample, from the interrupted stack pointer upwards (bounded by the
/// end of the stack's mapping). `perf record --call-graph dwarf` copies 8 KiB by default; twice
/// that reaches `main` through deep interpreter frames (measured on python3, see
/// `spec/runtime.md` §4.4) and costs about a microsecond to copy.
pub const SNAPSHOT_BYTES: usize = 16 * 1024;
/// [`SNAPSHOT_BYTES`] in 64-bit words.
pub(crate) const SNAPSHOT_WORDS: usize = SNAPSHOT_BYTES / 8;
/// Number of slots: the unwinder thread empties the ring at least every 80 ms, down to every
/// 5 ms when it fills (see `worker.rs`), and a thread is signalled at most once per kernel tick
/// (≤ 1000 Hz), so 256 slots hold 5 ms of 50 busy threads. The memory (4 MiB) is allocated
/// zeroed, and handlers probe from the first slot after each drain, so only the slots needed
/// are ever touched.
pub(crate) const RING_SLOTS: usize = 256;
/// Slots tried before the handler gives up.
const PROBES: usize = 8;

const FREE: u32 = 0;
const WRITING: u32 = 1;
const READY: u32 = 2;

/// One slot's header (the stack words live in [`Ring::words`]).
#[derive(Debug, Default)]
struct Slot {
    state: AtomicU32,
    weight: AtomicU32,
    pc: AtomicU64,
    sp: AtomicU64,
    fp: AtomicU64,
    lr: AtomicU64,
    /// Number of stack words copied from `sp` (rounded down to 8) upwards.
    words: AtomicUsize,
}

/// A published sample, read in place by the unwinder thread (its slot is freed afterwards).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot<'a> {
    pub regs: Registers,
    pub weight: u32,
    /// Address of `stack[0]`: the interrupted `sp` rounded down to 8.
    pub base: u64,
    stack: &'a [AtomicU64],
}

impl Snapshot<'_> {
    /// The 64-bit word at `addr` if the snapshot holds it (what the unwinder may read).
    pub(crate) fn read(&self, addr: u64) -> Option<u64> {
        let off = addr.checked_sub(self.base)?;
        let i = usize::try_from(off / 8).ok()?;
        let rem = (off % 8) as u32;
        let lo = self.stack.get(i)?.load(Ordering::Relaxed);
        if rem == 0 {
            return Some(lo);
        }
        let hi = self.stack.get(i + 1)?.load(Ordering::Relaxed);
        Some((lo >> (8 * rem)) | (hi << (64 - 8 * rem)))
    }
}

/// The preallocated ring of stack snapshots.
#[derive(Debug)]
pub(crate) struct Ring {
    slots: Box<[Slot]>,
    words: crate::zeroed::Zeroed<AtomicU64>,
    next: AtomicUsize,
    /// Samples the handler could not queue because every probed slot was busy.
    pub full: AtomicU64,
}

impl Ring {
    pub(crate) fn new() -> Ring {
        Ring {
            slots: (0..RING_SLOTS).map(|_| Slot::default()).collect(),
            words: zeroed_u64(RING_SLOTS * SNAPSHOT_WORDS),
            next: AtomicUsize::new(0),
            full: AtomicU64::new(0),
        }
    }

    /// Queues the registers and the top of the interrupted stack. Called from the signal
    /// handler: atomics only. Returns false (nothing queued) when `sp` is not in a known stack
    /// mapping or the ring is full.
    #[inline(always)]
    pub(crate) fn capture(&self, regs: &Registers, ranges: &StackRanges, weight: u32) -> bool {
        let base = regs.sp & !7;
        let Some((_, end)) = ranges.stack_of(base) else {
            return false;
        };
        let avail = usize::try_from((end - base) / 8).unwrap_or(usize::MAX);
        let n = avail.min(SNAPSHOT_WORDS);
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for k in 0..PROBES {
            let i = (start.wrapping_add(k)) % RING_SLOTS;
            let Some(slot) = self.slots.get(i) else {
                continue;
            };
            if slot
                .state
                .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            let dst = self
                .words
                .get(i * SNAPSHOT_WORDS..i * SNAPSHOT_WORDS + n)
                .unwrap_or(&[]);
            let src = base as *const u64;
            for (j, w) in dst.iter().enumerate() {
                // SAFETY: [base, base + 8n) lies inside the writable mapping that holds the
                // interrupted stack pointer (from the maps snapshot), below its end.
                w.store(unsafe { src.add(j).read_volatile() }, Ordering::Relaxed);
            }
            slot.pc.store(regs.pc, Ordering::Relaxed);
            slot.sp.store(regs.sp, Ordering::Relaxed);
            slot.fp.store(regs.fp, Ordering::Relaxed);
            slot.lr.store(regs.lr, Ordering::Relaxed);
            slot.weight.store(weight, Ordering::Relaxed);
            slot.words.store(dst.len(), Ordering::Relaxed);
            slot.state.store(READY, Ordering::Release);
            return true;
        }
        self.full.fetch_add(u64::from(weight), Ordering::Relaxed);
        false
    }

    /// Passes every published snapshot to `f`, then frees its slot (the single consumer: the
    /// caller holds the unwinder's lock). Returns how many there were.
    pub(crate) fn drain(&self, mut f: impl FnMut(Snapshot<'_>)) -> usize {
        let mut taken = 0;
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.state.load(Ordering::Acquire) != READY {
                continue;
            }
            let n = slot.words.load(Ordering::Relaxed).min(SNAPSHOT_WORDS);
            let stack = self
                .words
                .get(i * SNAPSHOT_WORDS..i * SNAPSHOT_WORDS + n)
                .unwrap_or(&[]);
            let regs = Registers {
                pc: slot.pc.load(Ordering::Relaxed),
                sp: slot.sp.load(Ordering::Relaxed),
                fp: slot.fp.load(Ordering::Relaxed),
                lr: slot.lr.load(Ordering::Relaxed),
            };
            let weight = slot.weight.load(Ordering::Relaxed);
            f(Snapshot {
                base: regs.sp & !7,
                regs,
                weight,
                stack,
            });
            slot.state.store(FREE, Ordering::Release);
            taken += 1;
        }
        if taken != 0 {
            // Handlers start probing from the first slots again, so a program that is sampled
            // slowly keeps using (and faulting in) a few slots rather than all 4 MiB.
            self.next.store(0, Ordering::Relaxed);
        }
        taken
    }

    /// Frees every slot (a forked child: the writers of half-filled slots do not exist there).
    pub(crate) fn clear(&self) {
        for s in self.slots.iter() {
            s.state.store(FREE, Ordering::Relaxed);
        }
        self.next.store(0, Ordering::Relaxed);
        self.full.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_this_stack_and_reads_it_back() {
        let ranges = StackRanges::new();
        ranges.refresh();
        let marker = [0x1122_3344_5566_7788u64, 0x99aa_bbcc_ddee_ff00];
        let sp = marker.as_ptr() as u64;
        let regs = Registers {
            pc: 1,
            sp,
            fp: 2,
            lr: 3,
        };
        let ring = Ring::new();
        assert!(ring.capture(&regs, &ranges, 4));
        let taken = ring.drain(|s| {
            assert_eq!((s.regs.pc, s.regs.fp, s.regs.lr, s.weight), (1, 2, 3, 4));
            assert_eq!(s.read(sp), Some(marker[0]));
            assert_eq!(s.read(sp + 8), Some(marker[1]));
            // Unaligned reads straddle two words; nothing below sp or past the copy is readable.
            assert_eq!(s.read(sp + 4), Some(0xddee_ff00_1122_3344));
            assert_eq!(s.read(sp - 8), None);
            assert_eq!(s.read(sp + SNAPSHOT_BYTES as u64), None);
        });
        assert_eq!(taken, 1);
        // Drained slots are free again: the ring takes RING_SLOTS more before it is full.
        for _ in 0..RING_SLOTS {
            assert!(ring.capture(&regs, &ranges, 1));
        }
        assert!(!ring.capture(&regs, &ranges, 5));
        assert_eq!(ring.full.load(Ordering::Relaxed), 5);
        // A stack pointer outside every known stack is not captured.
        let outside = Registers { sp: 8, ..regs };
        ring.clear();
        assert!(!ring.capture(&outside, &ranges, 1));
    }
}
