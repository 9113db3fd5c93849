//! Summing sidecars without losing a count (spec/runtime.md §5.12): what `gmon record` does
//! with the processes of one executable and `gmon merge` with recorded profiles.
//!
//! The sum lives in the address space of the first sidecar. Each object of a later sidecar is
//! matched with the same object (path, build id, main flag and ranges moved by one amount) of the
//! sum, and its addresses are moved by the difference of load biases; an object the sum lacks
//! is added at a free, page-aligned place above every other (its link-time addresses, which the
//! views use, stay exact, since the load bias moves with it). A PC in no object stays as it is
//! unless it would then fall into an object, in which case it becomes 0 (no object): every tick
//! is still counted. Counters, PC samples, stacks (per frames *and* kind) and thread totals are
//! summed, saturating at 2^64 − 1.

use std::collections::{BTreeMap, HashMap};

use super::{AddressRange, ClockKind, ClockReport, MappedObject, OBJECT_FLAG_MAIN, PcSample};
use super::{ObjectMapping, ProcessCount, Sidecar, StackKind};
use super::{StackSample, ThreadTotal};

/// A stack's frames (leaf first) and its kind: two processes' equal frames of different kinds
/// stay two stacks, as the runtime's own writer keeps them.
type StackKey = (Vec<u64>, StackKind);

/// A running sum of sidecars: [`SidecarSum::add`] each in turn, then [`SidecarSum::finish`].
#[derive(Debug, Default)]
pub struct SidecarSum {
    /// The first sidecar, whose objects grow as later ones add theirs.
    sum: Option<Sidecar>,
    pcs: BTreeMap<u64, u64>,
    stacks: HashMap<StackKey, u64>,
    /// Stacks in order of first appearance (the output keeps it).
    order: Vec<StackKey>,
    threads: BTreeMap<u32, u64>,
    /// Whether any input said how its stacks were obtained.
    any_kinds: bool,
    /// The inputs' clock reports, summed ([`merge_clocks`]).
    clock: Option<ClockReport>,
    /// The inputs' processes and threads, summed ([`Sidecar::process_count`]).
    processes: ProcessCount,
    /// Sidecars added: the window of one process image means nothing for a sum of several.
    inputs: usize,
}

impl SidecarSum {
    /// An empty sum.
    pub fn new() -> SidecarSum {
        SidecarSum::default()
    }

    /// Adds one sidecar.
    pub fn add(&mut self, sidecar: &Sidecar) {
        self.inputs += 1;
        self.any_kinds |= !sidecar.stack_kinds.is_empty();
        self.clock = merge_clocks([self.clock.take(), sidecar.clock]);
        let p = sidecar.process_count();
        self.processes.processes = self.processes.processes.saturating_add(p.processes);
        self.processes.threads = self.processes.threads.saturating_add(p.threads);
        let Some(sum) = self.sum.as_mut() else {
            let mut first = sidecar.clone();
            first.pc_samples.clear();
            first.stacks.clear();
            first.stack_kinds.clear();
            first.threads.clear();
            first.counters = Default::default();
            self.sum = Some(first);
            self.add_moved(sidecar, &|pc| pc);
            self.add_counters(sidecar);
            return;
        };
        let placed: Vec<(usize, u64)> = sidecar.objects.iter().map(|o| place(sum, o)).collect();
        let mapping_shifts: Vec<u64> = sidecar
            .mappings
            .iter()
            .map(|m| match placed.get(m.object as usize) {
                Some(&(object, shift)) => place_mapping(sum, m, object, shift),
                None => 0,
            })
            .collect();
        let before = self.sum.clone().unwrap_or_default();
        let fix = |pc: u64| -> u64 {
            if let Some(i) = sidecar.objects.iter().position(|o| o.contains(pc)) {
                return pc.wrapping_add(placed.get(i).map_or(0, |p| p.1));
            }
            match sidecar.mappings.iter().position(|m| m.range.contains(pc)) {
                Some(i) => pc.wrapping_add(mapping_shifts.get(i).copied().unwrap_or(0)),
                // In no object of its own process, it must not land in one of the sum's.
                None if before.in_object(pc) => 0,
                None => pc,
            }
        };
        self.add_moved(sidecar, &fix);
        self.add_counters(sidecar);
    }

    /// Adds `sidecar`'s samples, stacks and threads, each PC moved by `fix`.
    fn add_moved(&mut self, sidecar: &Sidecar, fix: &dyn Fn(u64) -> u64) {
        for s in &sidecar.pc_samples {
            let c = self.pcs.entry(fix(s.pc)).or_default();
            *c = c.saturating_add(s.count);
        }
        for (i, s) in sidecar.stacks.iter().enumerate() {
            let key = (
                s.pcs.iter().map(|&p| fix(p)).collect(),
                sidecar.stack_kind(i),
            );
            match self.stacks.get_mut(&key) {
                Some(c) => *c = c.saturating_add(s.count),
                None => {
                    self.order.push(key.clone());
                    self.stacks.insert(key, s.count);
                }
            }
        }
        for t in &sidecar.threads {
            let c = self.threads.entry(t.tid).or_default();
            *c = c.saturating_add(t.samples);
        }
    }

    fn add_counters(&mut self, sidecar: &Sidecar) {
        let Some(sum) = self.sum.as_mut() else {
            return;
        };
        let (c, d) = (&mut sum.counters, &sidecar.counters);
        c.samples = c.samples.saturating_add(d.samples);
        c.outside_histogram = c.outside_histogram.saturating_add(d.outside_histogram);
        c.dropped = c.dropped.saturating_add(d.dropped);
        c.truncated_stacks = c.truncated_stacks.saturating_add(d.truncated_stacks);
        c.saturated_bins = c.saturated_bins.saturating_add(d.saturated_bins);
    }

    /// The sum ([`Sidecar::default`] when nothing was added). Its link to a gmon.out is unset:
    /// the caller knows the file it goes with.
    pub fn finish(self) -> Sidecar {
        let Some(mut sum) = self.sum else {
            return Sidecar::default();
        };
        sum.pc_samples = self
            .pcs
            .into_iter()
            .map(|(pc, count)| PcSample { pc, count })
            .collect();
        // Kinds are written only when some input said them (an older runtime's sidecar has none).
        sum.stack_kinds = if self.any_kinds {
            self.order.iter().map(|k| k.1).collect()
        } else {
            Vec::new()
        };
        let stacks = self.stacks;
        sum.stacks = self
            .order
            .into_iter()
            .map(|key| {
                let count = stacks.get(&key).copied().unwrap_or(0);
                StackSample { count, pcs: key.0 }
            })
            .collect();
        sum.threads = self
            .threads
            .into_iter()
            .map(|(tid, samples)| ThreadTotal { tid, samples })
            .collect();
        sum.clock = self.clock;
        sum.processes = Some(self.processes);
        if self.inputs > 1 {
            sum.window = None;
            sum.thread_clocks = None;
        }
        sum.gmon = None;
        sum
    }
}

/// Several processes' clock reports as one: signals, unsampled ticks and unclocked CPU time
/// summed (saturating);
/// the clock is theirs when they agree, else the timer (some process fell back to it), with the
/// first refusal's errno. `None` when no input said.
pub fn merge_clocks(all: impl IntoIterator<Item = Option<ClockReport>>) -> Option<ClockReport> {
    let mut sum: Option<ClockReport> = None;
    for c in all.into_iter().flatten() {
        let Some(s) = sum.as_mut() else {
            sum = Some(c);
            continue;
        };
        if s.clock != c.clock {
            s.clock = ClockKind::THREAD_TIMER;
        }
        if s.refused_errno == 0 {
            s.refused_errno = c.refused_errno;
        }
        s.signals = s.signals.saturating_add(c.signals);
        s.unsampled = s.unsampled.saturating_add(c.unsampled);
        s.before_start_ns = s.before_start_ns.saturating_add(c.before_start_ns);
        s.runtime_ns = s.runtime_ns.saturating_add(c.runtime_ns);
    }
    sum
}

/// The sum of `all` (see the module's description).
pub fn merge_sidecars(all: &[&Sidecar]) -> Sidecar {
    let mut sum = SidecarSum::new();
    for s in all {
        sum.add(s);
    }
    sum.finish()
}

/// The first page boundary above every object range and mapping of the sum: where something
/// the sum lacks is added without overlapping anything.
fn free_base(sum: &Sidecar) -> u64 {
    let top = sum
        .objects
        .iter()
        .flat_map(|o| o.ranges.iter().map(|r| r.end))
        .chain(sum.mappings.iter().map(|m| m.range.end))
        .max()
        .unwrap_or(0);
    top.saturating_add(0xfff) & !0xfff
}

/// Finds mapping `m` (another process's, of the object now at `object` in the sum, moved by
/// `shift`) in the sum, or adds it at a free place; returns the amount to add to its runtime
/// addresses. The same mapping is one of the same object, file offset, length and link-time
/// addresses; when the object itself moved, so does the mapping (its link-time addresses stay).
fn place_mapping(sum: &mut Sidecar, m: &ObjectMapping, object: usize, shift: u64) -> u64 {
    let link = m.range.start.wrapping_sub(m.load_bias);
    let len = m.range.end.saturating_sub(m.range.start);
    let same = sum.mappings.iter().find(|k| {
        k.object as usize == object
            && k.file_offset == m.file_offset
            && k.range.end.saturating_sub(k.range.start) == len
            && k.range.start.wrapping_sub(k.load_bias) == link
    });
    if let Some(k) = same {
        return k.range.start.wrapping_sub(m.range.start);
    }
    let moved = |by: u64| ObjectMapping {
        object: u32::try_from(object).unwrap_or(u32::MAX),
        range: AddressRange {
            start: m.range.start.wrapping_add(by),
            end: m.range.end.wrapping_add(by),
        },
        file_offset: m.file_offset,
        load_bias: m.load_bias.wrapping_add(by),
    };
    // Where the object's move puts it, when that overlaps nothing of the sum; else above all.
    let overlaps = |r: AddressRange| {
        sum.objects
            .iter()
            .flat_map(|o| o.ranges.iter())
            .chain(sum.mappings.iter().map(|k| &k.range))
            .any(|k| k.start < r.end && r.start < k.end)
    };
    let by = if overlaps(moved(shift).range) {
        free_base(sum).wrapping_sub(m.range.start)
    } else {
        shift
    };
    let at = sum
        .mappings
        .partition_point(|k| k.range.start < m.range.start.wrapping_add(by));
    sum.mappings.insert(at, moved(by));
    by
}

/// Finds `obj` (another process's) in the sum's objects or adds it at a free place; returns
/// its index in the sum and the amount to add to `obj`'s runtime addresses.
fn place(sum: &mut Sidecar, obj: &MappedObject) -> (usize, u64) {
    let objects = &sum.objects;
    let same = objects.iter().position(|o| {
        o.path == obj.path
            && o.build_id == obj.build_id
            && o.is_main() == obj.is_main()
            && o.ranges.len() == obj.ranges.len()
    });
    if let Some((i, o)) = same.and_then(|i| Some((i, objects.get(i)?))) {
        let shift = o.load_bias.wrapping_sub(obj.load_bias);
        let fits = o.ranges.iter().zip(&obj.ranges).all(|(a, b)| {
            a.start == b.start.wrapping_add(shift) && a.end == b.end.wrapping_add(shift)
        });
        if fits {
            return (i, shift);
        }
    }
    let base = free_base(sum);
    let low = obj.ranges.iter().map(|r| r.start).min().unwrap_or(0);
    let shift = base.wrapping_sub(low);
    let mut moved = obj.clone();
    moved.flags &= !OBJECT_FLAG_MAIN;
    moved.load_bias = obj.load_bias.wrapping_add(shift);
    moved.ranges = obj
        .ranges
        .iter()
        .map(|r| AddressRange {
            start: r.start.wrapping_add(shift),
            end: r.end.wrapping_add(shift),
        })
        .collect();
    sum.objects.push(moved);
    (sum.objects.len() - 1, shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(path: &str, bias: u64, start: u64, main: bool) -> MappedObject {
        MappedObject {
            path: path.into(),
            build_id: vec![1, 2],
            load_bias: bias,
            flags: u32::from(main),
            ranges: vec![AddressRange {
                start,
                end: start + 0x1000,
            }],
        }
    }

    #[test]
    fn sidecars_are_summed_in_the_first_address_space() {
        let a = Sidecar {
            rate_hz: 1000,
            objects: vec![object("/bin/x", 0x1000, 0x2000, true)],
            pc_samples: vec![PcSample {
                pc: 0x2010,
                count: 3,
            }],
            stacks: vec![StackSample {
                count: 3,
                pcs: vec![0x2010],
            }],
            ..Sidecar::default()
        };
        let mut b = a.clone();
        b.objects = vec![
            object("/bin/x", 0x5000, 0x6000, true),
            object("/lib/y.so", 0x9000, 0x9000, false),
        ];
        b.pc_samples = vec![
            PcSample {
                pc: 0x6010,
                count: 2,
            },
            PcSample {
                pc: 0x9010,
                count: 1,
            },
        ];
        b.stacks = vec![StackSample {
            count: 2,
            pcs: vec![0x6010],
        }];
        let sum = merge_sidecars(&[&a, &b]);
        // The same link-time address in x: one entry with both counts.
        assert_eq!(
            sum.pc_samples[0],
            PcSample {
                pc: 0x2010,
                count: 5
            }
        );
        assert_eq!(sum.stacks.len(), 1);
        assert_eq!(sum.stacks[0].count, 5);
        // y.so was added where it overlaps nothing; its link-time address is unchanged.
        let (obj, link) = sum.resolve(sum.pc_samples[1].pc).expect("resolves");
        assert_eq!(obj.path, "/lib/y.so");
        assert_eq!(link, 0x9010 - 0x9000);
        assert_eq!(sum.main_object().map(|m| m.load_bias), Some(0x1000));
    }

    #[test]
    fn stack_kinds_stay_one_per_stack() {
        // Two processes whose sidecars have different numbers of stacks, with kinds: the sum
        // must keep one kind per stack (a count mismatch made the sidecar unwritable), and equal
        // frames of different kinds stay apart.
        let stack = |count, pc| StackSample {
            count,
            pcs: vec![pc],
        };
        let a = Sidecar {
            rate_hz: 1000,
            objects: vec![object("/bin/x", 0x1000, 0x2000, true)],
            stacks: vec![stack(3, 0x2010), stack(1, 0x2020)],
            stack_kinds: vec![StackKind::COMPLETE, StackKind::TRUNCATED],
            ..Sidecar::default()
        };
        let mut b = a.clone();
        b.stacks = vec![stack(2, 0x2010), stack(4, 0x2010), stack(5, 0x2030)];
        b.stack_kinds = vec![
            StackKind::COMPLETE,
            StackKind::FRAME_POINTER,
            StackKind::COMPLETE,
        ];
        let sum = merge_sidecars(&[&a, &b]);
        assert_eq!(sum.stacks.len(), sum.stack_kinds.len());
        let got: Vec<(u64, u64, StackKind)> = sum
            .stacks
            .iter()
            .zip(&sum.stack_kinds)
            .map(|(s, &k)| (s.pcs[0], s.count, k))
            .collect();
        assert_eq!(
            got,
            [
                (0x2010, 5, StackKind::COMPLETE),
                (0x2020, 1, StackKind::TRUNCATED),
                (0x2010, 4, StackKind::FRAME_POINTER),
                (0x2030, 5, StackKind::COMPLETE),
            ]
        );
        assert!(super::super::sidecar_to_vec(&sum).is_ok());
    }

    #[test]
    fn further_mappings_and_process_counts_are_summed() {
        // Two processes of one executable, each with its text mapped a second time at its own
        // address: the sum keeps one mapping and both processes' samples in it, named from
        // the executable at the same link-time address; the process and thread counts add up
        // (a sidecar that does not say counts as one process of its THREADS).
        let mapping = |start: u64| ObjectMapping {
            object: 0,
            range: AddressRange {
                start,
                end: start + 0x1000,
            },
            file_offset: 0x1000,
            load_bias: start - 0x1000,
        };
        let a = Sidecar {
            objects: vec![object("/bin/node", 0x1000, 0x2000, true)],
            mappings: vec![mapping(0x7000_0000)],
            pc_samples: vec![PcSample {
                pc: 0x7000_0010,
                count: 3,
            }],
            threads: vec![ThreadTotal { tid: 1, samples: 3 }],
            ..Sidecar::default()
        };
        let mut b = a.clone();
        b.objects = vec![object("/bin/node", 0x5000, 0x6000, true)];
        b.mappings = vec![mapping(0x9000_0000)];
        b.pc_samples = vec![PcSample {
            pc: 0x9000_0010,
            count: 2,
        }];
        b.processes = Some(ProcessCount {
            processes: 4,
            threads: 9,
        });
        let sum = merge_sidecars(&[&a, &b]);
        assert_eq!(sum.mappings, vec![mapping(0x7000_0000)]);
        assert_eq!(
            sum.pc_samples,
            vec![PcSample {
                pc: 0x7000_0010,
                count: 5
            }]
        );
        let (obj, link) = sum.resolve(0x7000_0010).expect("named");
        assert_eq!((obj.path.as_str(), link), ("/bin/node", 0x1010));
        assert_eq!(
            sum.processes,
            Some(ProcessCount {
                processes: 5,
                threads: 10
            })
        );
        // A mapping the sum lacks (another file offset) is added where it overlaps nothing,
        // its link-time addresses unchanged.
        let mut c = b.clone();
        c.mappings[0].file_offset = 0x2000;
        c.mappings[0].load_bias -= 0x1000;
        let sum = merge_sidecars(&[&a, &c]);
        assert_eq!(sum.mappings.len(), 2);
        let (obj, link) = sum.resolve(sum.pc_samples[1].pc).expect("named");
        assert_eq!((obj.path.as_str(), link), ("/bin/node", 0x2010));
        assert!(super::super::sidecar_to_vec(&sum).is_ok());
    }
}
