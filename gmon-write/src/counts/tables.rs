//! Preallocated lock-free tables the signal handler counts into.
//!
//! Every table is open addressing over fixed arrays of atomics, allocated before sampling
//! starts. Inserting never allocates and never waits: a full table or a slot that another thread
//! is filling makes the handler drop the sample (and count it), never block.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use gmon_format::sidecar::StackKind;

use crate::zeroed::Zeroed;

/// `n` zeroed atomics in their own mapping, so a large table costs no page faults until the
/// handler touches a slot (`zeroed.rs`).
pub(crate) fn zeroed_u64(n: usize) -> Zeroed<AtomicU64> {
    Zeroed::new(n)
}

/// `n` zeroed `AtomicU32`s (see [`zeroed_u64`]).
pub(crate) fn zeroed_u32(n: usize) -> Zeroed<AtomicU32> {
    Zeroed::new(n)
}

/// How many slots are probed before a sample is dropped.
const MAX_PROBES: usize = 64;

/// Slots per bit of an [`Occupancy`] map: 512 bytes of 8-byte slots, eight groups to a page.
const GROUP: usize = 64;

/// One bit per group of [`GROUP`] slots, set when a slot of the group is claimed. Listing or
/// clearing a table visits the marked groups only: a short process fills a few dozen slots,
/// and a scan of every slot read (or, clearing in a forked child, copied) each page of the
/// table, about 300 page faults per process for the PC, thread and stack tables
/// (spec/runtime.md §6, "Start-up cost").
#[derive(Debug)]
struct Occupancy {
    words: Zeroed<AtomicU64>,
}

impl Occupancy {
    fn new(slots: usize) -> Occupancy {
        Occupancy {
            words: zeroed_u64(slots.div_ceil(GROUP).div_ceil(64)),
        }
    }

    /// Marks the group of `slot`; called once per claimed slot, after the claim.
    fn mark(&self, slot: usize) {
        let group = slot / GROUP;
        if let Some(w) = self.words.get(group / 64) {
            w.fetch_or(1 << (group % 64), Ordering::Release);
        }
    }

    /// The slot indices of every marked group, ascending (a superset of the claimed slots).
    fn slots(&self, len: usize) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(move |(w, word)| {
            let bits = word.load(Ordering::Acquire);
            (0..64)
                .filter(move |b| bits & (1u64 << b) != 0)
                .flat_map(move |b| {
                    let start = (w * 64 + b) * GROUP;
                    start..(start + GROUP).min(len)
                })
        })
    }

    fn clear(&self) {
        for w in self.words.iter() {
            w.store(0, Ordering::Relaxed);
        }
    }
}

fn mix(mut x: u64) -> u64 {
    // splitmix64 finaliser: cheap and spreads nearby PCs over the table.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Counts per key (a PC or a thread id). Key 0 marks an empty slot, so keys are stored + 1.
#[derive(Debug)]
pub(crate) struct CountTable {
    keys: Zeroed<AtomicU64>,
    counts: Zeroed<AtomicU64>,
    /// The groups of slots that hold keys.
    occupied: Occupancy,
    /// Whether a key was ever inserted: a write of an empty table reads none of its pages (a
    /// short process that took no sample would otherwise fault in a megabyte of zero pages).
    used: AtomicBool,
    /// Per slot, the last value given to [`CountTable::add_noting`] (the thread table keeps each
    /// thread's last sampled PC there); empty for tables made with [`CountTable::new`].
    last: Zeroed<AtomicU64>,
}

impl CountTable {
    pub(crate) fn new(capacity: usize) -> CountTable {
        let cap = capacity.next_power_of_two().max(2);
        CountTable {
            keys: zeroed_u64(cap),
            counts: zeroed_u64(cap),
            occupied: Occupancy::new(cap),
            used: AtomicBool::new(false),
            last: Zeroed::new(0),
        }
    }

    /// A table that also keeps, per key, the last value noted with it.
    pub(crate) fn noting(capacity: usize) -> CountTable {
        let t = CountTable::new(capacity);
        CountTable {
            last: zeroed_u64(t.keys.len()),
            ..t
        }
    }

    /// Adds `weight` to `key`. Returns false when the table is too full.
    pub(crate) fn add(&self, key: u64, weight: u64) -> bool {
        self.slot_of(key, true)
            .and_then(|i| self.counts.get(i))
            .map(|c| c.fetch_add(weight, Ordering::Relaxed))
            .is_some()
    }

    /// Adds `weight` to `key` and notes `last` for it. Returns false when the table is too full.
    pub(crate) fn add_noting(&self, key: u64, weight: u64, last: u64) -> bool {
        let Some(i) = self.slot_of(key, true) else {
            return false;
        };
        if let Some(l) = self.last.get(i) {
            l.store(last, Ordering::Relaxed);
        }
        self.counts
            .get(i)
            .map(|c| c.fetch_add(weight, Ordering::Relaxed))
            .is_some()
    }

    /// The count of `key` and the last value noted with it.
    pub(crate) fn get(&self, key: u64) -> Option<(u64, u64)> {
        let i = self.slot_of(key, false)?;
        let count = self.counts.get(i)?.load(Ordering::Relaxed);
        let last = self.last.get(i).map_or(0, |l| l.load(Ordering::Relaxed));
        Some((count, last))
    }

    /// The slot holding `key`, claimed for it when `insert` and it has none; None when the
    /// table is too full (or, without `insert`, when the key is absent).
    fn slot_of(&self, key: u64, insert: bool) -> Option<usize> {
        let stored = key.wrapping_add(1);
        if stored == 0 {
            return None;
        }
        let mask = self.keys.len() - 1;
        let mut i = mix(key) as usize & mask;
        for _ in 0..MAX_PROBES {
            let k = self.keys.get(i)?;
            let cur = k.load(Ordering::Relaxed);
            if cur == stored {
                return Some(i);
            }
            if cur == 0 {
                if !insert {
                    return None;
                }
                match k.compare_exchange(0, stored, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        self.occupied.mark(i);
                        self.used.store(true, Ordering::Release);
                        return Some(i);
                    }
                    Err(seen) if seen == stored => return Some(i),
                    Err(_) => {}
                }
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Every (key, count) with a non-zero count, in slot order.
    fn filled(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let used = self.used.load(Ordering::Acquire);
        self.occupied
            .slots(self.keys.len())
            .take_while(move |_| used)
            .filter_map(|i| {
                let k = self.keys.get(i)?.load(Ordering::Relaxed);
                let c = self.counts.get(i)?.load(Ordering::Relaxed);
                (k != 0 && c != 0).then(|| (k - 1, c))
            })
    }

    /// Every (key, count) with a non-zero count, ascending by key.
    pub(crate) fn entries(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.filled().collect();
        v.sort_unstable();
        v
    }

    /// Copies every (key, count) with a non-zero count into `out`, ascending by key, and
    /// returns how many; no allocation (`out` has the table's capacity).
    pub(crate) fn fill_sorted(&self, out: &mut [[u64; 2]]) -> usize {
        let mut n = 0;
        for ((k, c), slot) in self.filled().zip(out.iter_mut()) {
            *slot = [k, c];
            n += 1;
        }
        let filled = out.get_mut(..n).unwrap_or(&mut []);
        filled.sort_unstable();
        n
    }

    pub(crate) fn clear(&self) {
        if !self.used.swap(false, Ordering::AcqRel) {
            return;
        }
        for i in self.occupied.slots(self.keys.len()) {
            for table in [&self.keys, &self.counts, &self.last] {
                if let Some(x) = table.get(i) {
                    x.store(0, Ordering::Relaxed);
                }
            }
        }
        self.occupied.clear();
    }
}

/// Slot state of [`StackTable`]: 0 empty, 1 being written, otherwise the stack's hash | 2.
const WRITING: u64 = 1;

/// Counts per distinct call stack (arrays of PCs up to `depth` long).
///
/// The frames are not kept at `slot × depth` but packed one stack after another in the order
/// the stacks were first stored, each slot holding where its frames start: slots are spread
/// over the table by hash, and at 128 frames of 8 bytes four of them share a page, so nearly
/// every new stack faulted in (and the kernel cleared) a fresh page, in the signal handler or
/// the unwinder thread. Packed, the same stacks fill pages in turn: python3's 30-60-frame
/// stacks ten or more to a page (spec/runtime.md §6.1). The space is the same, `capacity ×
/// depth`, and cannot run out before the slots do.
#[derive(Debug)]
pub(crate) struct StackTable {
    depth: usize,
    states: Zeroed<AtomicU64>,
    lens: Zeroed<AtomicU32>,
    counts: Zeroed<AtomicU64>,
    /// Per slot, the index in `pcs` of its first frame.
    starts: Zeroed<AtomicU32>,
    /// The frames of every stored stack, back to back.
    pcs: Zeroed<AtomicU64>,
    /// The first unused entry of `pcs`.
    next: AtomicUsize,
    /// The groups of slots that hold stacks.
    occupied: Occupancy,
    /// Whether a stack was ever inserted (see [`CountTable`]'s).
    used: AtomicBool,
}

impl StackTable {
    pub(crate) fn new(capacity: usize, depth: usize) -> StackTable {
        let cap = capacity.next_power_of_two().max(2);
        // The depth is kept in 16 bits of `lens`, and a frame's index in 32 bits of `starts`.
        let depth = depth.clamp(1, usize::from(u16::MAX));
        let frames = cap.saturating_mul(depth).min(u32::MAX as usize);
        StackTable {
            depth,
            states: zeroed_u64(cap),
            lens: zeroed_u32(cap),
            counts: zeroed_u64(cap),
            starts: zeroed_u32(cap),
            pcs: zeroed_u64(frames),
            next: AtomicUsize::new(0),
            occupied: Occupancy::new(cap),
            used: AtomicBool::new(false),
        }
    }

    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The frames stored in a filled slot.
    fn frames(&self, slot: usize) -> &[AtomicU64] {
        let n = self
            .lens
            .get(slot)
            .map_or(0, |l| (l.load(Ordering::Relaxed) & 0xffff) as usize);
        let start = self
            .starts
            .get(slot)
            .map_or(0, |s| s.load(Ordering::Relaxed) as usize);
        self.pcs.get(start..start + n).unwrap_or(&[])
    }

    /// Adds `weight` to the stack `pcs` obtained as `kind` (part of the key: the same frames
    /// walked two ways are two entries). Returns false when it could not be stored.
    pub(crate) fn add(&self, pcs: &[u64], kind: StackKind, weight: u64) -> bool {
        let pcs = pcs.get(..pcs.len().min(self.depth)).unwrap_or(&[]);
        // `lens` holds the depth in its low 16 bits and the kind above.
        let tag = pcs.len() as u32 | u32::from(kind.0) << 16;
        let hash = pcs.iter().fold(u64::from(tag), |h, &pc| mix(h ^ pc)) | 2;
        let mask = self.states.len() - 1;
        let mut i = hash as usize & mask;
        for _ in 0..MAX_PROBES {
            let (Some(state), Some(len), Some(count)) =
                (self.states.get(i), self.lens.get(i), self.counts.get(i))
            else {
                return false;
            };
            let cur = state.load(Ordering::Acquire);
            if cur == hash && self.same(i, len, tag, pcs) {
                count.fetch_add(weight, Ordering::Relaxed);
                return true;
            }
            if cur == 0
                && state
                    .compare_exchange(0, WRITING, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                self.occupied.mark(i);
                let start = self.next.fetch_add(pcs.len(), Ordering::Relaxed);
                let (Some(frames), Some(at)) =
                    (self.pcs.get(start..start + pcs.len()), self.starts.get(i))
                else {
                    // Never with one claim per slot (see the type); should it happen, the slot
                    // stays claimed and empty, and the sample is dropped.
                    return false;
                };
                for (slot, &pc) in frames.iter().zip(pcs) {
                    slot.store(pc, Ordering::Relaxed);
                }
                at.store(start as u32, Ordering::Relaxed);
                len.store(tag, Ordering::Relaxed);
                count.store(weight, Ordering::Relaxed);
                state.store(hash, Ordering::Release);
                self.used.store(true, Ordering::Release);
                return true;
            }
            // Another stack, or one being written by another thread: probe on. (A stack being
            // written may get a duplicate slot; the writer merges duplicates.)
            i = (i + 1) & mask;
        }
        false
    }

    fn same(&self, slot: usize, len: &AtomicU32, tag: u32, pcs: &[u64]) -> bool {
        len.load(Ordering::Relaxed) == tag
            && self
                .frames(slot)
                .iter()
                .zip(pcs)
                .all(|(a, &b)| a.load(Ordering::Relaxed) == b)
    }

    /// The frames of a filled slot.
    pub(crate) fn stack(&self, slot: usize) -> impl Iterator<Item = u64> + '_ {
        self.frames(slot).iter().map(|p| p.load(Ordering::Relaxed))
    }

    /// How the stack of a filled slot was obtained.
    pub(crate) fn kind(&self, slot: usize) -> StackKind {
        StackKind(
            self.lens
                .get(slot)
                .map_or(0, |l| (l.load(Ordering::Relaxed) >> 16) as u8),
        )
    }

    /// The count of a slot.
    pub(crate) fn count(&self, slot: usize) -> u64 {
        self.counts
            .get(slot)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Puts the indices of the filled slots into `out`, sorted by stack and kind (so duplicates
    /// are adjacent), and returns how many; no allocation (`out` has the table's capacity).
    pub(crate) fn fill_sorted(&self, out: &mut [u32]) -> usize {
        let mut n = 0;
        for (i, slot) in self
            .filled_slots()
            .filter(|&i| self.count(i) != 0)
            .zip(out.iter_mut())
        {
            *slot = i as u32;
            n += 1;
        }
        let filled = out.get_mut(..n).unwrap_or(&mut []);
        filled.sort_unstable_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            self.stack(a)
                .cmp(self.stack(b))
                .then(self.kind(a).cmp(&self.kind(b)))
        });
        n
    }

    /// Every stored stack with its kind and count, duplicates merged, sorted by stack.
    pub(crate) fn entries(&self) -> Vec<(Vec<u64>, StackKind, u64)> {
        let mut v: Vec<(Vec<u64>, StackKind, u64)> = Vec::new();
        for i in self.filled_slots() {
            let tag = self.lens.get(i).map_or(0, |l| l.load(Ordering::Relaxed));
            let kind = StackKind((tag >> 16) as u8);
            let c = self.counts.get(i).map_or(0, |c| c.load(Ordering::Relaxed));
            let pcs: Vec<u64> = self.stack(i).collect();
            if c != 0 {
                v.push((pcs, kind, c));
            }
        }
        v.sort();
        let mut merged: Vec<(Vec<u64>, StackKind, u64)> = Vec::with_capacity(v.len());
        for (pcs, kind, c) in v {
            match merged.last_mut() {
                Some((last, lk, lc)) if *last == pcs && *lk == kind => *lc += c,
                _ => merged.push((pcs, kind, c)),
            }
        }
        merged
    }

    pub(crate) fn clear(&self) {
        if !self.used.swap(false, Ordering::AcqRel) {
            return;
        }
        for i in self.occupied.slots(self.states.len()) {
            if let Some(s) = self.states.get(i) {
                s.store(0, Ordering::Relaxed);
            }
        }
        self.occupied.clear();
        self.next.store(0, Ordering::Relaxed);
    }

    /// The slots that hold a complete stack (not one another thread is still writing).
    fn filled_slots(&self) -> impl Iterator<Item = usize> + '_ {
        let used = self.used.load(Ordering::Acquire);
        self.occupied
            .slots(self.states.len())
            .take_while(move |_| used)
            .filter(|&i| {
                self.states
                    .get(i)
                    .map(|s| s.load(Ordering::Acquire))
                    .is_some_and(|s| s != 0 && s != WRITING)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_table_adds_and_lists() {
        let t = CountTable::new(16);
        assert!(t.add(5, 1));
        assert!(t.add(5, 2));
        assert!(t.add(0, 1));
        assert_eq!(t.entries(), vec![(0, 1), (5, 3)]);
        t.clear();
        assert!(t.entries().is_empty());
    }

    #[test]
    fn listing_and_clearing_visit_every_claimed_slot() {
        // Keys spread over many occupancy groups (and the last, partial word of the map).
        let t = CountTable::noting(5000);
        let keys: Vec<u64> = (0..3000u64).map(|k| k * 7919).collect();
        for &k in &keys {
            assert!(t.add_noting(k, 2, k + 1));
        }
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        let want: Vec<(u64, u64)> = sorted.iter().map(|&k| (k, 2)).collect();
        assert_eq!(t.entries(), want);
        let mut out = vec![[0u64; 2]; 8192];
        assert_eq!(t.fill_sorted(&mut out), 3000);
        assert_eq!(out[2999], [want[2999].0, 2]);
        t.clear();
        assert!(t.entries().is_empty());
        assert!(t.keys.iter().all(|k| k.load(Ordering::Relaxed) == 0));
        assert!(t.last.iter().all(|k| k.load(Ordering::Relaxed) == 0));
        assert!(t.add_noting(keys[5], 1, 9));
        assert_eq!(t.get(keys[5]), Some((1, 9)));
        assert_eq!(t.entries(), vec![(keys[5], 1)]);

        let s = StackTable::new(1024, 2);
        for k in 0..600u64 {
            assert!(s.add(&[k, k + 1], StackKind::COMPLETE, 1));
        }
        assert_eq!(s.entries().len(), 600);
        let mut idx = vec![0u32; 1024];
        assert_eq!(s.fill_sorted(&mut idx), 600);
        s.clear();
        assert!(s.entries().is_empty());
        assert!(s.states.iter().all(|x| x.load(Ordering::Relaxed) == 0));
    }

    #[test]
    fn count_table_fills_up() {
        let t = CountTable::new(4);
        let ok = (0..10u64).filter(|&k| t.add(k, 1)).count();
        assert_eq!(ok, 4);
    }

    #[test]
    fn stacks_are_packed_in_the_order_stored() {
        let t = StackTable::new(64, 128);
        for k in 0..40u64 {
            assert!(t.add(&[k, 100, 200], StackKind::COMPLETE, 1));
        }
        assert!(t.add(&[7, 100, 200], StackKind::COMPLETE, 4)); // already stored: no new frames
        // 40 stacks of 3 frames fill the first 120 entries, whatever slots they hashed to.
        assert_eq!(t.next.load(Ordering::Relaxed), 120);
        let pcs: Vec<u64> = t
            .pcs
            .iter()
            .take(6)
            .map(|p| p.load(Ordering::Relaxed))
            .collect();
        assert_eq!(pcs, [0, 100, 200, 1, 100, 200]);
        let e = t.entries();
        assert_eq!(e.len(), 40);
        assert_eq!(e[7], (vec![7, 100, 200], StackKind::COMPLETE, 5));
        t.clear();
        assert_eq!(t.next.load(Ordering::Relaxed), 0);
        assert!(t.add(&[1, 2], StackKind::COMPLETE, 1));
        assert_eq!(t.entries(), vec![(vec![1, 2], StackKind::COMPLETE, 1)]);
    }

    #[test]
    fn stack_table_merges() {
        let (c, f) = (StackKind::COMPLETE, StackKind::FRAME_POINTER);
        let t = StackTable::new(8, 4);
        assert!(t.add(&[1, 2, 3], c, 1));
        assert!(t.add(&[1, 2, 3], c, 1));
        assert!(t.add(&[1, 2, 3], f, 7)); // same frames, other kind: another entry
        assert!(t.add(&[1, 2], c, 5));
        assert!(t.add(&[9, 9, 9, 9, 9, 9], f, 1)); // cut to depth 4
        assert_eq!(
            t.entries(),
            vec![
                (vec![1, 2], c, 5),
                (vec![1, 2, 3], c, 2),
                (vec![1, 2, 3], f, 7),
                (vec![9, 9, 9, 9], f, 1)
            ]
        );
    }
}
