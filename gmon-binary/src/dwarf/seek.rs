//! The one search every table here uses: the last entry at or below an address, remembering
//! where the previous search ended.

use std::cell::Cell;

/// The last element of `v` (sorted by `key`) whose key is at most `addr`. `hint` is where the
/// previous search ended; lookups mostly ascend, so the search gallops forward from there
/// (a scan of `.text` then costs amortised constant time per lookup) and falls back to a
/// binary search below it.
pub(super) fn seek<T>(
    v: &[T],
    key: impl Fn(&T) -> u64,
    addr: u64,
    hint: &Cell<usize>,
) -> Option<usize> {
    let n = v.len();
    let mut lo = hint.get().min(n);
    let p = if lo > 0 && v.get(lo - 1).is_some_and(|x| key(x) > addr) {
        v.get(..lo)?.partition_point(|x| key(x) <= addr)
    } else {
        // Everything before `lo` is <= addr; probe lo, lo+1, lo+3, lo+7, ...
        let mut step = 1usize;
        loop {
            let probe = lo.saturating_add(step - 1);
            if probe >= n || v.get(probe).is_none_or(|x| key(x) > addr) {
                let hi = probe.min(n);
                break lo + v.get(lo..hi)?.partition_point(|x| key(x) <= addr);
            }
            lo = probe + 1;
            step = step.saturating_mul(2);
        }
    };
    hint.set(p);
    p.checked_sub(1)
}
