//! The `pcsample(2)`-style raw sample buffer: program counters stored one per tick.
//!
//! Samples are stored in order until the buffer is full; later ticks are counted as lost.
//! [`SampleBuffer::take_count`] returns the number of samples stored since its previous call
//! (the "number stored during the previous call" of the manual page), which lets a caller
//! consume the buffer incrementally. Unlike `profil`, it records addresses in any object,
//! shared libraries included.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Views a caller's `u64` buffer as atomics for the duration of the borrow.
fn as_atomic(buf: &mut [u64]) -> &[AtomicU64] {
    // SAFETY: AtomicU64 has the same size as u64; on the supported 64-bit targets also the same
    // alignment. The exclusive borrow rules out non-atomic access while the view exists.
    unsafe { std::slice::from_raw_parts(buf.as_mut_ptr().cast::<AtomicU64>(), buf.len()) }
}

/// A `pcsample`-style buffer of raw program counters.
///
/// ```
/// use gmon_write::SampleBuffer;
/// let mut raw = [0u64; 2];
/// let s = SampleBuffer::new(&mut raw);
/// assert!(s.record(0x10));
/// assert!(s.record(0x20));
/// assert!(!s.record(0x30)); // full
/// assert_eq!(s.take_count(), 2);
/// assert_eq!(s.take_count(), 0);
/// assert_eq!(s.lost(), 1);
/// ```
#[derive(Debug)]
pub struct SampleBuffer<'a> {
    slots: &'a [AtomicU64],
    /// Slots claimed so far (may exceed `slots.len()`; the excess is the lost count).
    claimed: AtomicUsize,
    /// Value of `stored()` at the previous `take_count`.
    reported: AtomicUsize,
}

impl<'a> SampleBuffer<'a> {
    /// A sample buffer over `buf`; samples go to `buf[0]`, `buf[1]`, …
    pub fn new(buf: &'a mut [u64]) -> SampleBuffer<'a> {
        SampleBuffer::from_atomic(as_atomic(buf))
    }

    pub(crate) fn from_atomic(slots: &'a [AtomicU64]) -> SampleBuffer<'a> {
        SampleBuffer {
            slots,
            claimed: AtomicUsize::new(0),
            reported: AtomicUsize::new(0),
        }
    }

    /// Stores one PC. Returns false (and counts a lost sample) when the buffer is full.
    /// Lock-free: usable from a signal handler.
    pub fn record(&self, pc: u64) -> bool {
        let i = self.claimed.fetch_add(1, Ordering::Relaxed);
        match self.slots.get(i) {
            Some(slot) => {
                slot.store(pc, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Number of samples stored so far (at most the buffer's length).
    pub fn stored(&self) -> usize {
        self.claimed.load(Ordering::Relaxed).min(self.slots.len())
    }

    /// Ticks that arrived after the buffer was full.
    pub fn lost(&self) -> usize {
        self.claimed
            .load(Ordering::Relaxed)
            .saturating_sub(self.slots.len())
    }

    /// Whether the buffer is full.
    pub fn is_full(&self) -> bool {
        self.stored() == self.slots.len()
    }

    /// Number of samples stored since the previous call (all of them on the first call).
    pub fn take_count(&self) -> usize {
        let now = self.stored();
        let before = self.reported.swap(now, Ordering::Relaxed);
        now.saturating_sub(before)
    }

    /// Sample `i`, if stored.
    pub fn get(&self, i: usize) -> Option<u64> {
        if i < self.stored() {
            self.slots.get(i).map(|s| s.load(Ordering::Relaxed))
        } else {
            None
        }
    }
}
