//! Frame-pointer stack walking inside the signal handler.
//!
//! Needs code built with frame pointers (`-C force-frame-pointers=yes` for Rust,
//! `-fno-omit-frame-pointer` for C/C++); a function without them hides its caller or ends the
//! walk. Every frame pointer is checked before it is dereferenced: 8-byte aligned, strictly
//! above the previous one, and inside the writable mapping that holds the interrupted stack
//! pointer (from the [`StackRanges`] snapshot). So a garbage chain ends the walk; it never
//! faults.

use crate::arch::Registers;
use crate::unwind::objects::StackRanges;

/// Maximum stack depth recorded.
pub const MAX_STACK_DEPTH: usize = 128;

/// Fills `out` with `pc` and the return addresses of the frame chain. Returns the depth and
/// whether the walk was cut short: the depth limit was reached, or the interrupted stack was not
/// in the snapshot. A frame pointer that leaves the stack ends the walk normally, since code
/// without frame pointers (libc's start-up code, for one) leaves such values at the root.
#[inline(always)]
pub(crate) fn walk(regs: &Registers, ranges: &StackRanges, out: &mut [u64]) -> (usize, bool) {
    let Some(first) = out.first_mut() else {
        return (0, true);
    };
    *first = regs.pc;
    let mut n = 1;
    let Some((lo, hi)) = ranges.stack_of(regs.sp) else {
        return (n, true);
    };
    let mut fp = regs.fp;
    loop {
        if fp == 0 {
            return (n, false);
        }
        if n >= out.len() {
            return (n, true);
        }
        let in_stack =
            fp >= lo && fp.is_multiple_of(8) && fp.checked_add(16).is_some_and(|e| e <= hi);
        if !in_stack {
            return (n, false);
        }
        // SAFETY: [fp, fp + 16) lies inside a writable mapping that holds the running stack.
        let (next, ret) = unsafe {
            let p = fp as *const u64;
            (p.read_volatile(), p.add(1).read_volatile())
        };
        if ret == 0 {
            return (n, false);
        }
        if let Some(slot) = out.get_mut(n) {
            *slot = ret;
            n += 1;
        }
        if next != 0 && next <= fp {
            return (n, false);
        }
        fp = next;
    }
}
