//! Zero-filled buffers mapped straight from the kernel (spec/runtime.md §6, "Start-up cost").
//!
//! A session preallocates everything the signal handler counts into and everything a write
//! needs (spec §1): about 30 MB of tables, rings and buffers, of which a short process touches a
//! few pages. Allocated with `calloc`, the middle-sized ones came from the heap, where glibc
//! clears them with `memset` (it cannot know heap memory is still zero): that alone was about a
//! third of the runtime's start-up cost, in page faults of memory never used. An anonymous
//! private mapping is zero by definition and costs one system call; its pages are faulted in
//! only when the handler or the writer first touches them. A forked child gets them
//! copy-on-write, as it would heap memory.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// Types for which all-zero bytes are a valid value.
///
/// # Safety
/// Implement only for types whose every bit pattern of zeros is a valid value.
pub(crate) unsafe trait Zeroable {}

// SAFETY: zero is a valid value of each of these.
unsafe impl Zeroable for u8 {}
// SAFETY: as above.
unsafe impl Zeroable for u32 {}
// SAFETY: as above.
unsafe impl Zeroable for u64 {}
// SAFETY: as above.
unsafe impl Zeroable for [u64; 2] {}
// SAFETY: as above.
unsafe impl Zeroable for crate::unwind::mappings::FileMapping {}
// SAFETY: as above (an atomic has the layout of its integer).
unsafe impl Zeroable for AtomicU32 {}
// SAFETY: as above.
unsafe impl Zeroable for AtomicU64 {}

/// `len` zeroed values of `T` in their own anonymous mapping, unmapped on drop.
pub(crate) struct Zeroed<T: Zeroable> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: `Zeroed` owns its values like a `Box<[T]>`.
unsafe impl<T: Zeroable + Send> Send for Zeroed<T> {}
// SAFETY: as above.
unsafe impl<T: Zeroable + Sync> Sync for Zeroed<T> {}

impl<T: Zeroable> Zeroed<T> {
    /// `len` zeroed values. Out of memory ends the process, as `vec!` does.
    pub(crate) fn new(len: usize) -> Zeroed<T> {
        let Ok(layout) = std::alloc::Layout::array::<T>(len) else {
            panic!("gmon-write: a table of {len} values is too large");
        };
        if layout.size() == 0 {
            return Zeroed {
                ptr: NonNull::dangling(),
                len,
            };
        }
        // SAFETY: an anonymous private mapping of `layout.size()` bytes; the kernel picks the
        // address. The result is checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                layout.size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        match NonNull::new(p.cast::<T>()) {
            // Page-aligned, so aligned for every `Zeroable` type.
            Some(ptr) if p != libc::MAP_FAILED => Zeroed { ptr, len },
            _ => std::alloc::handle_alloc_error(layout),
        }
    }

    fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// How many of its pages were touched (made resident) so far.
    #[cfg(test)]
    pub(crate) fn resident_pages(&self) -> usize {
        if self.bytes() == 0 {
            return 0;
        }
        crate::sys::resident_pages(self.ptr.as_ptr().cast(), self.bytes())
    }
}

impl<T: Zeroable> Deref for Zeroed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` values (zeroed, hence valid, or written since), owned by
        // `self`; dangling only when they take no bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> DerefMut for Zeroed<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> Drop for Zeroed<T> {
    fn drop(&mut self) {
        if self.bytes() != 0 {
            // SAFETY: the mapping made in `new`, of this size, no longer borrowed.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.bytes()) };
        }
    }
}

impl<T: Zeroable> std::fmt::Debug for Zeroed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Zeroed({} values)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn zeroed_values_are_zero_and_writable() {
        let mut v: Zeroed<u64> = Zeroed::new(100_000);
        assert_eq!(v.len(), 100_000);
        assert!(v.iter().all(|&x| x == 0));
        v[99_999] = 7;
        assert_eq!(v[99_999], 7);
        let a: Zeroed<AtomicU32> = Zeroed::new(3);
        a[2].fetch_add(5, Ordering::Relaxed);
        assert_eq!(a[2].load(Ordering::Relaxed), 5);
        let empty: Zeroed<[u64; 2]> = Zeroed::new(0);
        assert!(empty.is_empty());
    }
}
