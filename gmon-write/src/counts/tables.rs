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

/// Fixed-width rows of atomics in one mapping: the fields of a slot side by side. A table
/// spreads its few dozen entries over the slots by hash; with each field in an array of its
/// own, every new entry first-touched one page per field (a short `cc1` faulted in 86 pages of
/// the PC table's two arrays and 81 of the stack table's four), and with the fields of a slot
/// together it touches one (spec/runtime.md §6.2, sixth pass).
#[derive(Debug)]
struct Rows {
    words: Zeroed<AtomicU64>,
    width: usize,
}

impl Rows {
    fn new(rows: usize, width: usize) -> Rows {
        Rows {
            words: zeroed_u64(rows.saturating_mul(width)),
            width,
        }
    }

    fn len(&self) -> usize {
        self.words.len() / self.width.max(1)
    }

    /// Field `field` of row `row`; None past the end (or past the row's width).
    fn get(&self, row: usize, field: usize) -> Option<&AtomicU64> {
        if field >= self.width {
            return None;
        }
        self.words
            .get(row.checked_mul(self.width)?.checked_add(field)?)
    }

    /// Field `field` of every row.
    #[cfg(test)]
    fn column(&self, field: usize) -> impl Iterator<Item = &AtomicU64> + '_ {
        (0..self.len()).filter_map(move |r| self.get(r, field))
    }
}

/// The fields of a [`CountTable`] row: the key + 1 (0: empty), its count, and (tables made
/// with [`CountTable::noting`]) the last value noted with it.
const KEY: usize = 0;
const COUNT: usize = 1;
const LAST: usize = 2;

/// Counts per key (a PC or a thread id).
///
/// The keys are found through a hashed index of 4-byte entry numbers, and the entries (key,
/// count, last value) are packed one after another in the order the keys were first counted:
/// a short process's few dozen keys, hashed over the index, touch as many pages of it, but
/// their entries fill one page after another (spec/runtime.md §6.2, sixth pass).
#[derive(Debug)]
pub(crate) struct CountTable {
    /// Per slot, 0 when empty, else the number + 1 of the slot's entry in `rows`.
    index: Zeroed<AtomicU32>,
    /// Per entry: [`KEY`] (the key + 1; 0 for an entry not yet written), [`COUNT`] and, when
    /// noting, [`LAST`].
    rows: Rows,
    /// The first unused entry of `rows`.
    next: AtomicUsize,
    /// The groups of index slots that hold entries.
    occupied: Occupancy,
    /// Whether a key was ever inserted: a write of an empty table reads none of its pages (a
    /// short process that took no sample would otherwise fault in a megabyte of zero pages).
    used: AtomicBool,
}

impl CountTable {
    pub(crate) fn new(capacity: usize) -> CountTable {
        CountTable::with_width(capacity, 2)
    }

    /// A table that also keeps, per key, the last value noted with it (the thread table keeps
    /// each thread's last sampled PC there).
    pub(crate) fn noting(capacity: usize) -> CountTable {
        CountTable::with_width(capacity, 3)
    }

    fn with_width(capacity: usize, width: usize) -> CountTable {
        // Entry numbers + 1 are kept in 32 bits.
        let cap = capacity.next_power_of_two().clamp(2, 1 << 31);
        CountTable {
            index: zeroed_u32(cap),
            rows: Rows::new(cap, width),
            next: AtomicUsize::new(0),
            occupied: Occupancy::new(cap),
            used: AtomicBool::new(false),
        }
    }

    /// Adds `weight` to `key` and returns the key's count before it; None when the table is
    /// too full.
    pub(crate) fn add(&self, key: u64, weight: u64) -> Option<u64> {
        self.slot_of(key, true)
            .and_then(|i| self.rows.get(i, COUNT))
            .map(|c| c.fetch_add(weight, Ordering::Relaxed))
    }

    /// Adds `weight` to `key` and notes `last` for it. Returns false when the table is too full.
    pub(crate) fn add_noting(&self, key: u64, weight: u64, last: u64) -> bool {
        let Some(i) = self.slot_of(key, true) else {
            return false;
        };
        if let Some(l) = self.rows.get(i, LAST) {
            l.store(last, Ordering::Relaxed);
        }
        self.rows
            .get(i, COUNT)
            .map(|c| c.fetch_add(weight, Ordering::Relaxed))
            .is_some()
    }

    /// The count of `key` and the last value noted with it.
    pub(crate) fn get(&self, key: u64) -> Option<(u64, u64)> {
        let i = self.slot_of(key, false)?;
        let count = self.rows.get(i, COUNT)?.load(Ordering::Relaxed);
        let last = self
            .rows
            .get(i, LAST)
            .map_or(0, |l| l.load(Ordering::Relaxed));
        Some((count, last))
    }

    /// The entry of `key`, claimed for it when `insert` and it has none; None when the table
    /// is too full (or, without `insert`, when the key is absent).
    fn slot_of(&self, key: u64, insert: bool) -> Option<usize> {
        let stored = key.wrapping_add(1);
        if stored == 0 {
            return None;
        }
        let mask = self.index.len() - 1;
        let mut i = mix(key) as usize & mask;
        // The entry this call reserved and wrote its key into, not yet in the index.
        let mut mine = None;
        for _ in 0..MAX_PROBES {
            let slot = self.index.get(i)?;
            let cur = slot.load(Ordering::Acquire);
            if cur != 0 {
                if self.key_of(cur) == stored {
                    return Some(cur as usize - 1);
                }
            } else {
                if !insert {
                    return None;
                }
                let e = match mine {
                    Some(e) => e,
                    None => {
                        let e = self.next.fetch_add(1, Ordering::Relaxed);
                        self.rows.get(e, KEY)?.store(stored, Ordering::Relaxed);
                        mine = Some(e);
                        e
                    }
                };
                // The key is written before the entry is published (Release), so a thread
                // that finds the entry (Acquire) reads it.
                match slot.compare_exchange(0, e as u32 + 1, Ordering::Release, Ordering::Acquire) {
                    Ok(_) => {
                        self.occupied.mark(i);
                        self.used.store(true, Ordering::Release);
                        return Some(e);
                    }
                    // Another thread published the same key first: this call's entry stays
                    // unused, with a count of 0 (it is never listed).
                    Err(seen) if self.key_of(seen) == stored => return Some(seen as usize - 1),
                    Err(_) => {}
                }
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// The stored key (key + 1) of the entry an index slot holding `slot` names.
    fn key_of(&self, slot: u32) -> u64 {
        (slot as usize)
            .checked_sub(1)
            .and_then(|e| self.rows.get(e, KEY))
            .map_or(0, |k| k.load(Ordering::Relaxed))
    }

    /// Every (key, count) with a non-zero count, in the order first counted.
    fn filled(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let used = self.used.load(Ordering::Acquire);
        let n = if used {
            self.next.load(Ordering::Relaxed).min(self.rows.len())
        } else {
            0
        };
        (0..n).filter_map(|e| {
            let k = self.rows.get(e, KEY)?.load(Ordering::Relaxed);
            let c = self.rows.get(e, COUNT)?.load(Ordering::Relaxed);
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

    /// Zeroes the table; only with no other thread counting (a forked child).
    pub(crate) fn clear(&self) {
        if !self.used.swap(false, Ordering::AcqRel) {
            return;
        }
        for i in self.occupied.slots(self.index.len()) {
            if let Some(x) = self.index.get(i) {
                x.store(0, Ordering::Relaxed);
            }
        }
        self.occupied.clear();
        let n = self.next.swap(0, Ordering::Relaxed).min(self.rows.len());
        for e in 0..n {
            for field in [KEY, COUNT, LAST] {
                if let Some(x) = self.rows.get(e, field) {
                    x.store(0, Ordering::Relaxed);
                }
            }
        }
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
    /// Per slot: [`STATE`], [`STACK_COUNT`] and [`PLACE`].
    rows: Rows,
    /// The frames of every stored stack, back to back.
    pcs: Zeroed<AtomicU64>,
    /// The first unused entry of `pcs`.
    next: AtomicUsize,
    /// The groups of slots that hold stacks.
    occupied: Occupancy,
    /// Whether a stack was ever inserted (see [`CountTable`]'s).
    used: AtomicBool,
}

/// The fields of a [`StackTable`] row: the slot state (see [`WRITING`]), the count, and where
/// the frames are: the tag (depth in its low 16 bits, the kind above) in the high 32 bits, the
/// index in `pcs` of the first frame in the low 32.
const STATE: usize = 0;
const STACK_COUNT: usize = 1;
const PLACE: usize = 2;

impl StackTable {
    pub(crate) fn new(capacity: usize, depth: usize) -> StackTable {
        let cap = capacity.next_power_of_two().max(2);
        // The depth is kept in 16 bits of the tag, and a frame's index in 32 bits of `PLACE`.
        let depth = depth.clamp(1, usize::from(u16::MAX));
        let frames = cap.saturating_mul(depth).min(u32::MAX as usize);
        StackTable {
            depth,
            rows: Rows::new(cap, 3),
            pcs: zeroed_u64(frames),
            next: AtomicUsize::new(0),
            occupied: Occupancy::new(cap),
            used: AtomicBool::new(false),
        }
    }

    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The tag of a filled slot (its depth and kind, see [`PLACE`]).
    fn tag(&self, slot: usize) -> u32 {
        self.rows
            .get(slot, PLACE)
            .map_or(0, |p| (p.load(Ordering::Relaxed) >> 32) as u32)
    }

    /// The frames stored in a filled slot.
    fn frames(&self, slot: usize) -> &[AtomicU64] {
        let place = self
            .rows
            .get(slot, PLACE)
            .map_or(0, |p| p.load(Ordering::Relaxed));
        let n = ((place >> 32) & 0xffff) as usize;
        let start = (place & 0xffff_ffff) as usize;
        self.pcs.get(start..start + n).unwrap_or(&[])
    }

    /// Adds `weight` to the stack `pcs` obtained as `kind` (part of the key: the same frames
    /// walked two ways are two entries). Returns false when it could not be stored.
    pub(crate) fn add(&self, pcs: &[u64], kind: StackKind, weight: u64) -> bool {
        let pcs = pcs.get(..pcs.len().min(self.depth)).unwrap_or(&[]);
        // The tag holds the depth in its low 16 bits and the kind above.
        let tag = pcs.len() as u32 | u32::from(kind.0) << 16;
        let hash = pcs.iter().fold(u64::from(tag), |h, &pc| mix(h ^ pc)) | 2;
        let mask = self.rows.len() - 1;
        let mut i = hash as usize & mask;
        for _ in 0..MAX_PROBES {
            let (Some(state), Some(place), Some(count)) = (
                self.rows.get(i, STATE),
                self.rows.get(i, PLACE),
                self.rows.get(i, STACK_COUNT),
            ) else {
                return false;
            };
            let cur = state.load(Ordering::Acquire);
            if cur == hash && self.same(i, tag, pcs) {
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
                let Some(frames) = self.pcs.get(start..start + pcs.len()) else {
                    // Never with one claim per slot (see the type); should it happen, the slot
                    // stays claimed and empty, and the sample is dropped.
                    return false;
                };
                for (slot, &pc) in frames.iter().zip(pcs) {
                    slot.store(pc, Ordering::Relaxed);
                }
                place.store(u64::from(tag) << 32 | start as u64, Ordering::Relaxed);
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

    fn same(&self, slot: usize, tag: u32, pcs: &[u64]) -> bool {
        self.tag(slot) == tag
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
        StackKind((self.tag(slot) >> 16) as u8)
    }

    /// The count of a slot.
    pub(crate) fn count(&self, slot: usize) -> u64 {
        self.rows
            .get(slot, STACK_COUNT)
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
            let kind = self.kind(i);
            let c = self.count(i);
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
        for i in self.occupied.slots(self.rows.len()) {
            if let Some(s) = self.rows.get(i, STATE) {
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
            .slots(self.rows.len())
            .take_while(move |_| used)
            .filter(|&i| {
                self.rows
                    .get(i, STATE)
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
        assert!(t.add(5, 1).is_some());
        assert_eq!(t.add(5, 2), Some(1));
        assert!(t.add(0, 1).is_some());
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
        assert!(t.rows.words.iter().all(|k| k.load(Ordering::Relaxed) == 0));
        assert!(t.index.iter().all(|k| k.load(Ordering::Relaxed) == 0));
        assert_eq!(t.next.load(Ordering::Relaxed), 0);
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
        assert!(s.rows.column(STATE).all(|x| x.load(Ordering::Relaxed) == 0));
    }

    #[test]
    fn count_table_entries_are_packed_in_the_order_counted() {
        let t = CountTable::new(1 << 16);
        for k in 0..40u64 {
            assert!(t.add(k * 4096, 1).is_some());
        }
        assert!(t.add(7 * 4096, 2).is_some()); // already there: no new entry
        // 40 keys fill the first 40 entries, whatever index slots they hashed to.
        assert_eq!(t.next.load(Ordering::Relaxed), 40);
        let keys: Vec<u64> = t
            .rows
            .column(KEY)
            .take(3)
            .map(|k| k.load(Ordering::Relaxed))
            .collect();
        assert_eq!(keys, [1, 4097, 2 * 4096 + 1]);
        assert_eq!(t.entries()[7], (7 * 4096, 3));
    }

    #[test]
    fn count_table_fills_up() {
        let t = CountTable::new(4);
        let ok = (0..10u64).filter(|&k| t.add(k, 1).is_some()).count();
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
