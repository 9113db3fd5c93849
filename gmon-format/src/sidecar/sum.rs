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
use super::{Sidecar, StackKind};
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
}

impl SidecarSum {
    /// An empty sum.
    pub fn new() -> SidecarSum {
        SidecarSum::default()
    }

    /// Adds one sidecar.
    pub fn add(&mut self, sidecar: &Sidecar) {
        self.any_kinds |= !sidecar.stack_kinds.is_empty();
        self.clock = merge_clocks([self.clock.take(), sidecar.clock]);
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
        let shifts: Vec<u64> = sidecar
            .objects
            .iter()
            .map(|o| place(&mut sum.objects, o))
            .collect();
        let objects = sum.objects.clone();
        let fix = |pc: u64| -> u64 {
            match sidecar.objects.iter().position(|o| o.contains(pc)) {
                Some(i) => pc.wrapping_add(shifts.get(i).copied().unwrap_or(0)),
                // In no object of its own process, it must not land in one of the sum's.
                None if objects.iter().any(|o| o.contains(pc)) => 0,
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
        sum.gmon = None;
        sum
    }
}

/// Several processes' clock reports as one: signals and unsampled ticks summed (saturating);
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

/// Finds `obj` (another process's) in `objects` (the sum's) or adds it at a free place; returns
/// the amount to add to `obj`'s runtime addresses.
fn place(objects: &mut Vec<MappedObject>, obj: &MappedObject) -> u64 {
    let same = objects.iter().find(|o| {
        o.path == obj.path
            && o.build_id == obj.build_id
            && o.is_main() == obj.is_main()
            && o.ranges.len() == obj.ranges.len()
    });
    if let Some(o) = same {
        let shift = o.load_bias.wrapping_sub(obj.load_bias);
        let fits = o.ranges.iter().zip(&obj.ranges).all(|(a, b)| {
            a.start == b.start.wrapping_add(shift) && a.end == b.end.wrapping_add(shift)
        });
        if fits {
            return shift;
        }
    }
    let top = objects
        .iter()
        .flat_map(|o| o.ranges.iter().map(|r| r.end))
        .max()
        .unwrap_or(0);
    let base = top.saturating_add(0xfff) & !0xfff;
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
    objects.push(moved);
    shift
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
}
