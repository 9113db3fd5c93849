//! The loaded objects (`dl_iterate_phdr`) and the readable-stack snapshot for the frame walk.
//!
//! Neither is async-signal-safe to build (`dl_iterate_phdr` takes the loader lock, reading
//! `/proc/self/maps` allocates), so both are built outside the handler: objects when sampling
//! starts and again when the profile is written; stack ranges by the watcher thread. The
//! handler only reads the stack snapshot, through a sequence lock of atomics.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use gmon_format::sidecar::{
    AddressRange, MappedObject, OBJECT_FLAG_MAIN, OBJECT_FLAG_VDSO, ObjectMapping,
};

use crate::unwind::mappings::ExecMaps;

/// `NT_GNU_BUILD_ID`.
const NT_GNU_BUILD_ID: u32 = 3;

/// One loaded object as the loader describes it, borrowed for the duration of a
/// [`for_each_object`] callback (nothing is copied, nothing allocated).
pub(crate) struct ObjectView<'a> {
    /// The first object `dl_iterate_phdr` reports: the main executable.
    pub first: bool,
    /// `dlpi_name` (empty for the main executable and the vDSO).
    pub name: &'a [u8],
    /// `dlpi_addr`.
    pub bias: u64,
    phdrs: &'a [libc::Elf64_Phdr],
}

impl ObjectView<'_> {
    /// Runtime `[start, end)` of each `PT_LOAD` segment with `PF_X`.
    pub(crate) fn exec_ranges(&self) -> impl Iterator<Item = AddressRange> + '_ {
        self.phdrs
            .iter()
            .filter(|ph| ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0)
            .map(|ph| {
                let start = self.bias.wrapping_add(ph.p_vaddr);
                AddressRange {
                    start,
                    end: start.wrapping_add(ph.p_memsz),
                }
            })
    }

    /// Its program headers.
    pub(crate) fn phdrs(&self) -> &[libc::Elf64_Phdr] {
        self.phdrs
    }

    /// The link-time address of the byte at `offset` in the object's file: in the loadable
    /// segment (`PT_LOAD`) whose file bytes hold it. `None` when no segment loads it.
    pub(crate) fn link_address_of(&self, offset: u64) -> Option<u64> {
        self.phdrs
            .iter()
            .find(|ph| {
                ph.p_type == libc::PT_LOAD
                    && ph.p_offset <= offset
                    && offset - ph.p_offset < ph.p_filesz
            })
            .map(|ph| ph.p_vaddr.wrapping_add(offset - ph.p_offset))
    }

    /// The `NT_GNU_BUILD_ID` descriptor (empty when there is none).
    pub(crate) fn build_id(&self) -> &[u8] {
        for ph in self.phdrs {
            if ph.p_type == libc::PT_NOTE {
                let start = self.bias.wrapping_add(ph.p_vaddr);
                // SAFETY: a PT_NOTE segment lies inside a loaded, readable PT_LOAD segment,
                // which stays mapped while the loader reports the object.
                let notes =
                    unsafe { std::slice::from_raw_parts(start as *const u8, ph.p_memsz as usize) };
                if let Some(id) = find_build_id(notes) {
                    return id;
                }
            }
        }
        &[]
    }

    /// The sidecar's object flags, given whether this is the main executable.
    pub(crate) fn flags(&self) -> u32 {
        if self.first {
            OBJECT_FLAG_MAIN
        } else if self.name.is_empty()
            || self.name.starts_with(b"linux-vdso")
            || self.name.starts_with(b"linux-gate")
        {
            OBJECT_FLAG_VDSO
        } else {
            0
        }
    }
}

/// Calls `f` for every loaded object, the main executable first (`dl_iterate_phdr`; the
/// loader's lock is recursive, and `f` may not allocate if the caller must not).
pub(crate) fn for_each_object(mut f: impl FnMut(&ObjectView<'_>)) {
    let mut state: (bool, &mut dyn FnMut(&ObjectView<'_>)) = (true, &mut f);
    // SAFETY: the callback reads `data` as this `state`, which outlives the call, and only
    // reads the `dl_phdr_info` it is given, for the duration of the call.
    unsafe {
        crate::sys::dl_iterate_phdr(
            callback,
            (&mut state as *mut (bool, &mut dyn FnMut(&ObjectView<'_>))).cast(),
        );
    }
}

/// As [`for_each_object`], for the profile writer, which must not wait unboundedly for another
/// thread's walk (`sys::dl_iterate_phdr_bounded`): false, without calling `f`, when it could
/// not walk.
pub(crate) fn for_each_object_bounded(mut f: impl FnMut(&ObjectView<'_>)) -> bool {
    let mut state: (bool, &mut dyn FnMut(&ObjectView<'_>)) = (true, &mut f);
    // SAFETY: as in `for_each_object`.
    unsafe {
        crate::sys::dl_iterate_phdr_bounded(
            callback,
            (&mut state as *mut (bool, &mut dyn FnMut(&ObjectView<'_>))).cast(),
        )
    }
}

unsafe extern "C" fn callback(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid info and our `data` pointer.
    let (info, state) = unsafe {
        (
            &*info,
            &mut *data.cast::<(bool, &mut dyn FnMut(&ObjectView<'_>))>(),
        )
    };
    let name: &[u8] = if info.dlpi_name.is_null() {
        &[]
    } else {
        // SAFETY: dlpi_name is a NUL-terminated string owned by the loader.
        unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes()
    };
    let phdrs: &[libc::Elf64_Phdr] = if info.dlpi_phdr.is_null() {
        &[]
    } else {
        // SAFETY: the loader's program header table has dlpi_phnum entries.
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    };
    let view = ObjectView {
        first: state.0,
        name,
        bias: info.dlpi_addr,
        phdrs,
    };
    state.0 = false;
    (state.1)(&view);
    0
}

/// Every loaded object, the main executable first (its path from `/proc/thread-self/exe`),
/// and the further executable mappings of their files (spec/runtime.md §5.13), those mapped
/// now and those `seen` earlier.
pub(crate) fn loaded_objects(seen: Option<&ExecMaps>) -> (Vec<MappedObject>, Vec<ObjectMapping>) {
    let mut maps = ExecMaps::new();
    maps.read_keeping(seen);
    let mut out: Vec<MappedObject> = Vec::new();
    let mut further: Vec<ObjectMapping> = Vec::new();
    for_each_object(|o| {
        let object = u32::try_from(out.len()).unwrap_or(u32::MAX);
        further.extend(maps.further(o).map(|f| ObjectMapping {
            object,
            range: f.range,
            file_offset: f.file_offset,
            load_bias: f.load_bias,
        }));
        let name = String::from_utf8_lossy(o.name).into_owned();
        let path = if o.first {
            // This thread's link: the process's is gone once `main` called `pthread_exit`.
            std::fs::read_link("/proc/thread-self/exe")
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or(name)
        } else {
            name
        };
        out.push(MappedObject {
            path,
            build_id: o.build_id().to_vec(),
            load_bias: o.bias,
            flags: o.flags(),
            ranges: o.exec_ranges().collect(),
        });
    });
    (out, further)
}

/// The descriptor of the `NT_GNU_BUILD_ID` note in a note segment.
pub(crate) fn find_build_id(mut notes: &[u8]) -> Option<&[u8]> {
    let word = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let align4 = |n: usize| n.checked_add(3).map(|n| n & !3);
    while notes.len() >= 12 {
        let namesz = word(notes, 0)? as usize;
        let descsz = word(notes, 4)? as usize;
        let ty = word(notes, 8)?;
        let name_end = 12usize.checked_add(align4(namesz)?)?;
        let desc_end = name_end.checked_add(align4(descsz)?)?;
        let name = notes.get(12..12 + namesz)?;
        if ty == NT_GNU_BUILD_ID && name == b"GNU\0" {
            return notes.get(name_end..name_end + descsz);
        }
        notes = notes.get(desc_end..)?;
    }
    None
}

/// The runtime range covered by the gmon.out histogram: the main executable's executable
/// segments, from the lowest start to the highest end, and its load bias. Read from the
/// loader's list alone (no path, no build id, nothing allocated): this runs in every process
/// that starts profiling.
pub(crate) fn main_text() -> Option<(u64, u64, u64)> {
    let mut found = None;
    for_each_object(|o| {
        if o.first {
            let lo = o.exec_ranges().map(|r| r.start).min();
            let hi = o.exec_ranges().map(|r| r.end).max();
            found = lo.zip(hi).map(|(lo, hi)| (lo, hi, o.bias));
        }
    });
    found
}

/// Maximum number of writable mappings remembered for stack bounds.
const MAX_RANGES: usize = 8192;

/// Writable mappings (`rw` in `/proc/self/maps`), sorted, readable from a signal handler.
///
/// Two tables and a sequence number, so that a reader never has to give up while the tables
/// are being rewritten: `seq` is even (2k) while publication k, in table k mod 2, is the
/// latest; a writer makes it odd (2k + 1) while it fills the other table, then even (2k + 2).
/// A reader reads table (seq / 2) mod 2, which no writer touches until publication k + 2
/// starts (seq 2k + 3); only if that happened during the read (two refreshes within one
/// lookup) does it give up, and the stack is then cut at its leaf. With one table, a tick
/// that landed while another thread re-read the maps (each new thread does) lost its stack.
pub(crate) struct StackRanges {
    seq: AtomicU64,
    lens: [AtomicUsize; 2],
    starts: crate::zeroed::Zeroed<AtomicU64>,
    ends: crate::zeroed::Zeroed<AtomicU64>,
}

impl std::fmt::Debug for StackRanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let table = (self.seq.load(Ordering::Relaxed) / 2 % 2) as usize;
        f.debug_struct("StackRanges")
            .field("len", &self.lens[table].load(Ordering::Relaxed))
            .finish()
    }
}

impl StackRanges {
    pub(crate) fn new() -> StackRanges {
        StackRanges {
            seq: AtomicU64::new(0),
            lens: [AtomicUsize::new(0), AtomicUsize::new(0)],
            starts: crate::counts::tables::zeroed_u64(2 * MAX_RANGES),
            ends: crate::counts::tables::zeroed_u64(2 * MAX_RANGES),
        }
    }

    /// Knows the main thread's stack without reading `/proc/self/maps` (spec §6, "Start-up
    /// cost"): the kernel puts the program's file name (`AT_EXECFN`) at the very top of the
    /// initial stack, followed by one null word, so the stack mapping ends at the first page
    /// boundary past it. Below, the mapping reaches down at most `RLIMIT_STACK` (1 GiB when
    /// unlimited), and under that lies no other mapping (the kernel keeps that gap free), so an
    /// `sp` in `[end − limit, end)` that the thread runs on is in the stack mapping, and so is
    /// everything from it to `end`. False (nothing changed) when the layout is not the one
    /// described. Other stacks are found by the next [`StackRanges::refresh`].
    pub(crate) fn seed_main_stack(&self) -> bool {
        // SAFETY: getauxval has no preconditions; 0 means absent.
        let execfn = unsafe { libc::getauxval(libc::AT_EXECFN) };
        if execfn == 0 {
            return false;
        }
        // SAFETY: AT_EXECFN points to the NUL-terminated file name the kernel copied onto the
        // initial stack, which stays mapped for the life of the process.
        let len = unsafe { CStr::from_ptr(execfn as *const libc::c_char) }
            .to_bytes()
            .len() as u64;
        let end = execfn + len + 1 + 8;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the struct it is given.
        let got = unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut lim) } == 0;
        if page <= 0 || !end.is_multiple_of(page as u64) || !got {
            return false;
        }
        let limit = if lim.rlim_cur == libc::RLIM_INFINITY {
            1 << 30
        } else {
            lim.rlim_cur.min(1 << 30)
        };
        self.publish(&[(end.saturating_sub(limit), end)]);
        true
    }

    /// Re-reads `/proc/self/maps` (not in a signal handler).
    pub(crate) fn refresh(&self) {
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return;
        };
        let ranges: Vec<(u64, u64)> = maps
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (a, b) = f.next()?.split_once('-')?;
                let perms = f.next()?;
                perms.starts_with("rw").then_some(())?;
                Some((
                    u64::from_str_radix(a, 16).ok()?,
                    u64::from_str_radix(b, 16).ok()?,
                ))
            })
            .take(MAX_RANGES)
            .collect();
        self.publish(&ranges);
    }

    /// Adds the calling thread's own stack, found without reading `/proc/self/maps` (its
    /// thread attributes); falls back to [`StackRanges::refresh`] when they are not known or
    /// do not hold the thread's stack pointer (a thread created without `pthread_create`).
    /// Re-reading the maps for each new thread cost O(threads) each, O(threads²) in all: 500
    /// threads alive at once spent more CPU time reading maps than working.
    pub(crate) fn add_current_thread_stack(&self) {
        let here = 0u8;
        let sp = &here as *const u8 as u64;
        match crate::sys::current_thread_stack() {
            Some((lo, hi)) if lo <= sp && sp < hi => {
                // What the table had there (another thread's stack that has since been freed,
                // or the stale snapshot of this one) gives way to the range known now. The
                // table is sorted and disjoint, so the pieces below, the range and the pieces
                // above come out sorted and disjoint too; no allocation, one pass each.
                let k = self.claim();
                let below = self
                    .entries(k)
                    .filter(|&(s, _)| s < lo)
                    .map(|(s, e)| (s, e.min(lo)));
                let above = self
                    .entries(k)
                    .filter(|&(_, e)| e > hi)
                    .map(|(s, e)| (s.max(hi), e));
                let n = self.fill(k, below.chain([(lo, hi)]).chain(above));
                self.release(k, n);
            }
            _ => self.refresh(),
        }
    }

    /// Makes `ranges` (sorted, at most [`MAX_RANGES`]) the latest table.
    fn publish(&self, ranges: &[(u64, u64)]) {
        let k = self.claim();
        let n = self.fill(k, ranges.iter().copied());
        self.release(k, n);
    }

    /// Starts publication `k + 1` and returns `k`. Writers take turns: one that finds another
    /// writing waits for it (writers never run in a signal handler).
    fn claim(&self) -> u64 {
        loop {
            let s = self.seq.load(Ordering::Acquire);
            if s.is_multiple_of(2)
                && self
                    .seq
                    .compare_exchange(s, s + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            {
                return s / 2;
            }
            std::thread::yield_now();
        }
    }

    /// Writes publication `k + 1`'s table (the one readers of `k` do not use); its length.
    fn fill(&self, k: u64, ranges: impl Iterator<Item = (u64, u64)>) -> usize {
        let base = ((k + 1) % 2) as usize * MAX_RANGES;
        let mut n = 0;
        for (s, e) in ranges.take(MAX_RANGES) {
            if let (Some(ss), Some(ee)) = (self.starts.get(base + n), self.ends.get(base + n)) {
                ss.store(s, Ordering::Relaxed);
                ee.store(e, Ordering::Relaxed);
                n += 1;
            }
        }
        n
    }

    /// Ends publication `k + 1` of `len` ranges: readers switch to it.
    fn release(&self, k: u64, len: usize) {
        self.lens[((k + 1) % 2) as usize].store(len, Ordering::Relaxed);
        self.seq.store(2 * k + 2, Ordering::Release);
    }

    /// Publication `k`'s ranges (for the writer of `k + 1`, which holds off `k + 2`).
    fn entries(&self, k: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let table = (k % 2) as usize;
        let base = table * MAX_RANGES;
        let n = self.lens[table].load(Ordering::Relaxed).min(MAX_RANGES);
        (base..base + n).filter_map(|i| {
            Some((
                self.starts.get(i)?.load(Ordering::Relaxed),
                self.ends.get(i)?.load(Ordering::Relaxed),
            ))
        })
    }

    /// The writable mapping containing `sp`, as `[sp, end)`. Async-signal-safe, wait-free.
    pub(crate) fn stack_of(&self, sp: u64) -> Option<(u64, u64)> {
        let s1 = self.seq.load(Ordering::Acquire);
        let k = s1 / 2;
        let table = (k % 2) as usize;
        let base = table * MAX_RANGES;
        let n = self.lens[table].load(Ordering::Relaxed).min(MAX_RANGES);
        let at = |v: &crate::zeroed::Zeroed<AtomicU64>, i: usize| {
            v.get(base + i).map(|a| a.load(Ordering::Relaxed))
        };
        // Binary search for the last start <= sp.
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at(&self.starts, mid)? <= sp {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let i = lo.checked_sub(1)?;
        let end = at(&self.ends, i)?;
        std::sync::atomic::fence(Ordering::Acquire);
        // Table k mod 2 is rewritten only from publication k + 2 on (seq 2k + 3).
        if self.seq.load(Ordering::Relaxed) >= 2 * k + 3 || sp >= end {
            return None;
        }
        Some((sp, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_object_first_with_text() {
        let (objs, _) = loaded_objects(None);
        let main = &objs[0];
        assert!(main.is_main());
        assert!(!main.ranges.is_empty());
        let f = main_object_first_with_text as *const () as u64;
        assert!(main.contains(f), "{main:?} does not contain {f:#x}");
        assert!(objs.iter().any(|o| o.path.contains("libc")));
        let (lo, hi, bias) = main_text().unwrap();
        assert_eq!(bias, main.load_bias);
        assert!(lo <= f && f < hi);
        assert!(main.ranges.iter().all(|r| lo <= r.start && r.end <= hi));
    }

    #[test]
    fn build_id_note_is_parsed() {
        let mut note = Vec::new();
        note.extend_from_slice(&4u32.to_ne_bytes());
        note.extend_from_slice(&3u32.to_ne_bytes());
        note.extend_from_slice(&NT_GNU_BUILD_ID.to_ne_bytes());
        note.extend_from_slice(b"GNU\0");
        note.extend_from_slice(&[1, 2, 3, 0]);
        assert_eq!(find_build_id(&note), Some(&[1u8, 2, 3][..]));
        assert_eq!(find_build_id(&note[..10]), None);
    }

    #[test]
    fn the_main_stack_is_known_without_reading_the_maps() {
        let seeded = StackRanges::new();
        // The test harness runs tests on threads: the main thread's stack is the one in the
        // maps whose end the seed computes.
        assert!(seeded.seed_main_stack());
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let stack = maps.lines().find(|l| l.ends_with("[stack]")).unwrap();
        let (lo, hi) = stack
            .split_whitespace()
            .next()
            .unwrap()
            .split_once('-')
            .unwrap();
        let (lo, hi) = (
            u64::from_str_radix(lo, 16).unwrap(),
            u64::from_str_radix(hi, 16).unwrap(),
        );
        assert_eq!(seeded.stack_of(lo), Some((lo, hi)));
        assert_eq!(seeded.stack_of(hi - 8), Some((hi - 8, hi)));
        assert_eq!(seeded.stack_of(hi), None);
    }

    #[test]
    fn a_lookup_during_a_refresh_still_finds_the_stack() {
        // Another thread re-reads the maps over and over (as each new thread makes happen);
        // lookups meanwhile find this stack. With one table rewritten in place, a few per cent
        // of them failed: the ticks that landed while the table was being rewritten.
        let r = std::sync::Arc::new(StackRanges::new());
        r.refresh();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (r, done) = (r.clone(), done.clone());
            std::thread::spawn(move || {
                for _ in 0..300 {
                    r.refresh();
                }
                done.store(true, Ordering::Relaxed);
            })
        };
        let x = 0u64;
        let sp = &x as *const u64 as u64;
        let (mut lookups, mut missed) = (0u64, 0u64);
        while !done.load(Ordering::Relaxed) {
            lookups += 1;
            if r.stack_of(sp).is_none() {
                missed += 1;
            }
        }
        writer.join().unwrap();
        // Only a reader paused across two whole refreshes may miss.
        assert!(
            missed * 10_000 <= lookups,
            "{missed} of {lookups} lookups missed"
        );
    }

    #[test]
    fn a_new_thread_adds_its_own_stack_without_losing_the_others() {
        let r = std::sync::Arc::new(StackRanges::new());
        r.refresh();
        let x = 0u64;
        let main_sp = &x as *const u64 as u64;
        let before = r.entries(r.seq.load(Ordering::Relaxed) / 2).count();
        let r2 = r.clone();
        std::thread::spawn(move || {
            let y = 0u64;
            let sp = &y as *const u64 as u64;
            r2.add_current_thread_stack();
            let (lo, hi) = r2.stack_of(sp).expect("this thread's stack");
            assert_eq!(lo, sp);
            let (slo, shi) = crate::sys::current_thread_stack().unwrap();
            assert!(slo <= sp, "{slo:#x} > {sp:#x}");
            assert_eq!(hi, shi, "the table ends this stack where its attributes do");
        })
        .join()
        .unwrap();
        assert!(r.stack_of(main_sp).is_some());
        let after: Vec<_> = r.entries(r.seq.load(Ordering::Relaxed) / 2).collect();
        assert!(after.len() >= before, "{} < {before}", after.len());
        assert!(after.windows(2).all(|w| w[0].1 <= w[1].0), "{after:x?}");
    }

    #[test]
    fn stack_ranges_find_this_stack() {
        let r = StackRanges::new();
        r.refresh();
        let x = 0u64;
        let sp = &x as *const u64 as u64;
        let (lo, hi) = r.stack_of(sp).unwrap();
        assert_eq!(lo, sp);
        assert!(hi > sp);
    }
}
