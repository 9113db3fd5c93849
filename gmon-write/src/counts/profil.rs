//! The `profil(2)`-style histogram: a caller-owned array of 16-bit bins.
//!
//! On every clock tick the bin `((pc - offset) / 2) * scale / 65536` (64-bit arithmetic) is
//! incremented, exactly as the manual page says:
//!
//! * `scale` is a 16.16 fixed-point fraction: `0x10000` maps each 2 bytes of text to one bin,
//!   `0x8000` each 4 bytes, and so on. A scale of 0 or 1 turns profiling off.
//! * A PC below `offset`, or whose bin is past the end of the buffer, is not counted.
//! * An empty buffer makes the histogram ineffective.
//! * **At the maximum** a bin stays at 65535 (`u16::MAX`): it saturates instead of wrapping to 0
//!   as glibc's `++` does, and every tick that could not be added is counted in
//!   [`ProfilBuffer::overflows`]; [`ProfilBuffer::saturated_bins`] says how many bins reached the
//!   maximum. The sidecar's per-PC counts are 64-bit and keep the exact figures.
//!
//! Bins are updated with atomic compare-and-swap, so concurrent ticks on several threads are all
//! counted (glibc's plain `++` loses some).

use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};

/// A profil scale of 1:1 (one bin per 2 bytes of text).
pub const SCALE_ONE_TO_ONE: u32 = 0x10000;

/// What [`ProfilBuffer::record`] did with a PC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// The bin was incremented by the whole weight.
    Counted,
    /// The bin reached 65535; part or all of the weight was not added.
    Saturated,
    /// The PC maps to no bin (below `offset`, past the buffer, or profiling is off).
    Outside,
}

/// The bin index for `pc`, or `None` when it maps to no bin.
///
/// `((pc - offset) / 2) * scale / 65536` in 64-bit arithmetic (the product is computed in 128
/// bits so a huge distance from `offset` cannot wrap into a valid bin).
pub fn bin_index(pc: u64, offset: u64, scale: u32, nbins: usize) -> Option<usize> {
    if scale <= 1 || nbins == 0 {
        return None;
    }
    let delta = pc.checked_sub(offset)?;
    let i = (u128::from(delta / 2) * u128::from(scale)) >> 16;
    usize::try_from(i).ok().filter(|&i| i < nbins)
}

/// Adds `weight` to one bin, saturating at `u16::MAX`. Returns how much could not be added and
/// whether this call made the bin reach the maximum. Lock-free (a compare-and-swap loop), so it
/// is safe in a signal handler.
#[inline]
fn saturating_add(bin: &AtomicU16, weight: u32) -> (u32, bool) {
    let mut cur = bin.load(Ordering::Relaxed);
    loop {
        let room = u32::from(u16::MAX - cur);
        let add = weight.min(room);
        if add == 0 {
            return (weight, false);
        }
        // `add <= room`, so the sum fits in u16.
        let new = cur + add as u16;
        match bin.compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return (weight - add, new == u16::MAX),
            Err(seen) => cur = seen,
        }
    }
}

/// Views a caller's `u16` buffer as atomics for the duration of the borrow.
pub(crate) fn as_atomic(buf: &mut [u16]) -> &[AtomicU16] {
    // SAFETY: AtomicU16 has the same size and alignment as u16, and the exclusive borrow
    // guarantees no non-atomic access happens while the atomic view exists.
    unsafe { std::slice::from_raw_parts(buf.as_mut_ptr().cast::<AtomicU16>(), buf.len()) }
}

/// A `profil`-style histogram over a caller-owned buffer of `u16` bins (named for the
/// buffer, so that it is not taken for `gmon_format::Histogram`, a gmon.out record).
///
/// ```
/// use gmon_write::ProfilBuffer;
/// let mut bins = [0u16; 8];
/// let h = ProfilBuffer::new(&mut bins, 0x1000, 0x8000); // one bin per 4 bytes
/// h.record(0x1004, 1);
/// h.record(0x1006, 1);
/// h.record(0x0fff, 1); // below the offset: not counted
/// drop(h);
/// assert_eq!(bins[1], 2);
/// ```
#[derive(Debug)]
pub struct ProfilBuffer<'a> {
    bins: &'a [AtomicU16],
    offset: u64,
    scale: u32,
    overflows: AtomicU64,
    saturated_bins: AtomicU64,
}

impl<'a> ProfilBuffer<'a> {
    /// A histogram over `buf` starting at text address `offset` with the 16.16 `scale`.
    pub fn new(buf: &'a mut [u16], offset: u64, scale: u32) -> ProfilBuffer<'a> {
        ProfilBuffer::from_atomic(as_atomic(buf), offset, scale)
    }

    pub(crate) fn from_atomic(bins: &'a [AtomicU16], offset: u64, scale: u32) -> ProfilBuffer<'a> {
        ProfilBuffer {
            bins,
            offset,
            scale,
            overflows: AtomicU64::new(0),
            saturated_bins: AtomicU64::new(0),
        }
    }

    /// Whether ticks can be counted at all (scale above 1 and a non-empty buffer).
    pub fn is_on(&self) -> bool {
        self.scale > 1 && !self.bins.is_empty()
    }

    /// The text address of bin 0.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The 16.16 scale.
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// Number of bins.
    pub fn len(&self) -> usize {
        self.bins.len()
    }

    /// Whether the buffer is empty (the histogram is then ineffective).
    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
    }

    /// The bin `pc` falls in, if any.
    pub fn bin_of(&self, pc: u64) -> Option<usize> {
        bin_index(pc, self.offset, self.scale, self.bins.len())
    }

    /// Counts `weight` ticks at `pc`. Never allocates, never blocks: usable from a signal
    /// handler.
    pub fn record(&self, pc: u64, weight: u32) -> Recorded {
        let Some(bin) = self.bin_of(pc).and_then(|i| self.bins.get(i)) else {
            return Recorded::Outside;
        };
        let (lost, reached) = saturating_add(bin, weight);
        if reached {
            self.saturated_bins.fetch_add(1, Ordering::Relaxed);
        }
        if lost == 0 {
            return Recorded::Counted;
        }
        self.overflows.fetch_add(u64::from(lost), Ordering::Relaxed);
        Recorded::Saturated
    }

    /// The current value of bin `i`.
    pub fn get(&self, i: usize) -> Option<u16> {
        self.bins.get(i).map(|b| b.load(Ordering::Relaxed))
    }

    /// Ticks that could not be added because their bin was at 65535.
    pub fn overflows(&self) -> u64 {
        self.overflows.load(Ordering::Relaxed)
    }

    /// Bins that reached 65535.
    pub fn saturated_bins(&self) -> u64 {
        self.saturated_bins.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_matches_the_manual() {
        // scale 0x10000: one bin per 2 bytes.
        assert_eq!(bin_index(0x1000, 0x1000, 0x10000, 100), Some(0));
        assert_eq!(bin_index(0x1001, 0x1000, 0x10000, 100), Some(0));
        assert_eq!(bin_index(0x1002, 0x1000, 0x10000, 100), Some(1));
        // scale 0x8000: one bin per 4 bytes.
        assert_eq!(bin_index(0x1007, 0x1000, 0x8000, 100), Some(1));
        // Odd scale: ((pc-off)/2)*scale/65536 truncated.
        assert_eq!(
            bin_index(0x1000 + 2 * 3, 0x1000, 0x5555, 100),
            Some((3 * 0x5555) >> 16)
        );
        assert_eq!(
            bin_index(0x1000 + 2 * 1000, 0x1000, 0x5555, 1000),
            Some((1000 * 0x5555) >> 16)
        );
    }

    #[test]
    fn off_and_outside() {
        assert_eq!(bin_index(0x1000, 0x1000, 0, 10), None);
        assert_eq!(bin_index(0x1000, 0x1000, 1, 10), None);
        assert_eq!(bin_index(0x1000, 0x1000, 2, 10), Some(0));
        assert_eq!(bin_index(0xfff, 0x1000, 0x10000, 10), None);
        assert_eq!(bin_index(0x1000 + 20, 0x1000, 0x10000, 10), None);
        assert_eq!(bin_index(0x1000 + 18, 0x1000, 0x10000, 10), Some(9));
        assert_eq!(bin_index(0x1000, 0x1000, 0x10000, 0), None);
        // A huge distance must not wrap into a valid bin.
        assert_eq!(bin_index(u64::MAX, 0, u32::MAX, 1000), None);
    }
}
