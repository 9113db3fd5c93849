//! Geometry of histogram ranges: which overlap, when their bins line up (an exact union), and
//! how counts are redistributed over one grid when they do not (`MergeOptions::rebin`).

use std::fmt;

use super::error::{HistRange, MergeError, MergeResult};

/// A histogram record whose counts `--rebin` redistributed onto another grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebinned {
    /// Index of the input the record came from (`None`: the running sum itself was moved onto a
    /// wider grid).
    pub input: Option<usize>,
    /// The record's own range.
    pub from: HistRange,
    /// The grid its counts went to.
    pub to: HistRange,
}

impl fmt::Display for Rebinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.input {
            Some(i) => write!(f, "input {i}: ")?,
            None => write!(f, "running sum: ")?,
        }
        write!(f, "histogram {} redistributed onto {}", self.from, self.to)
    }
}

/// One histogram range of the running sum.
#[derive(Debug, Clone)]
pub(super) struct Slot {
    pub(super) low_pc: u64,
    pub(super) high_pc: u64,
    pub(super) bins: Vec<u64>,
}

impl Slot {
    pub(super) fn range(&self) -> HistRange {
        HistRange {
            low_pc: self.low_pc,
            high_pc: self.high_pc,
            bins: self.bins.len(),
        }
    }
}

/// Adds `add` into `sum` bin by bin; on overflow `sum` is unchanged.
pub(super) fn add_bins(input: usize, sum: &mut [u64], add: &[u64]) -> MergeResult<()> {
    let overflow = sum
        .iter()
        .zip(add)
        .any(|(s, a)| s.checked_add(*a).is_none());
    if overflow {
        return Err(MergeError::Overflow {
            input,
            what: "a histogram bin sum",
        });
    }
    for (s, a) in sum.iter_mut().zip(add) {
        *s = s.wrapping_add(*a);
    }
    Ok(())
}

/// Half-open ranges `[low_pc, high_pc)` share an address.
pub(super) fn intersects(a: &Slot, b: &Slot) -> bool {
    a.low_pc < b.high_pc && b.low_pc < a.high_pc
}

/// gprof's view of a histogram: bin `i` covers 2-byte units
/// `[low/2 + trunc(scale*i), low/2 + trunc(scale*(i+1)))`, `scale = ((high-low)/2) / bins`.
#[derive(Debug, Clone, Copy)]
struct Grid {
    low_unit: u64,
    scale: f64,
}

impl Grid {
    fn of(slot: &Slot) -> Grid {
        let span = slot.high_pc.saturating_sub(slot.low_pc) / 2;
        let scale = if slot.bins.is_empty() {
            0.0
        } else {
            span as f64 / slot.bins.len() as f64
        };
        Grid {
            low_unit: slot.low_pc / 2,
            scale,
        }
    }

    /// Unit range of bin `i` (truncation as gprof does it, in `f64`).
    fn bin(&self, i: usize) -> (u64, u64) {
        let lo = self.low_unit.saturating_add((self.scale * i as f64) as u64);
        let hi = self
            .low_unit
            .saturating_add((self.scale * (i as f64 + 1.0)) as u64);
        (lo, hi)
    }

    /// `(first unit, units per bin)` when every bin is the same whole number of units wide.
    fn integral(slot: &Slot) -> Option<(u64, u64)> {
        let n = u64::try_from(slot.bins.len()).ok()?;
        let span = slot.high_pc.checked_sub(slot.low_pc)? / 2;
        if n == 0 || !span.is_multiple_of(n) || span / n == 0 {
            return None;
        }
        Some((slot.low_pc / 2, span / n))
    }
}

/// Merges overlapping slots exactly when their bins line up; `Ok(None)` when they do not.
pub(super) fn union_exact(input: usize, group: &[&Slot]) -> MergeResult<Option<Slot>> {
    let mut grids = Vec::with_capacity(group.len());
    for s in group {
        match Grid::integral(s) {
            Some(g) => grids.push(g),
            None => return Ok(None),
        }
    }
    let Some(&(_, step)) = grids.first() else {
        return Ok(None);
    };
    let Some(base) = group
        .iter()
        .zip(&grids)
        .min_by_key(|(s, g)| (g.0, s.low_pc))
    else {
        return Ok(None);
    };
    let (low_pc, low_unit) = (base.0.low_pc, base.1.0);
    let mut end_unit = low_unit;
    for (s, &(start, w)) in group.iter().zip(&grids) {
        if w != step || !(start - low_unit).is_multiple_of(step) {
            return Ok(None);
        }
        let n = s.bins.len() as u64;
        let end =
            n.checked_mul(w)
                .and_then(|x| x.checked_add(start))
                .ok_or(MergeError::Overflow {
                    input,
                    what: "a merged histogram range",
                })?;
        end_unit = end_unit.max(end);
    }
    let n = (end_unit - low_unit) / step;
    let high_pc = (end_unit - low_unit)
        .checked_mul(2)
        .and_then(|x| x.checked_add(low_pc))
        .ok_or(MergeError::Overflow {
            input,
            what: "a merged histogram range",
        })?;
    let n_usize = usize::try_from(n).map_err(|_| MergeError::Overflow {
        input,
        what: "a merged histogram size",
    })?;
    let mut bins = vec![0u64; n_usize];
    for (s, &(start, _)) in group.iter().zip(&grids) {
        let offset =
            usize::try_from((start - low_unit) / step).map_err(|_| MergeError::Overflow {
                input,
                what: "a merged histogram size",
            })?;
        let Some(dst) = bins.get_mut(offset..offset.saturating_add(s.bins.len())) else {
            return Ok(None);
        };
        add_bins(input, dst, &s.bins)?;
    }
    Ok(Some(Slot {
        low_pc,
        high_pc,
        bins,
    }))
}

/// Redistributes the counts of `group` onto one grid covering all of them.
///
/// The grid starts at the lowest `low_pc` and has `round(scale)` units per bin, `scale` being the
/// first (oldest) slot's; every source bin's count is split over the target bins it overlaps in
/// proportion to the overlap in 2-byte units, with floor shares and the remainder handed out one
/// by one to the largest fractional parts (ties: lowest target bin), so every count stays whole
/// and the total is exact.
pub(super) fn union_rebin(input: usize, group: &[&Slot]) -> MergeResult<(Slot, Vec<Rebinned>)> {
    let overflow = MergeError::Overflow {
        input,
        what: "a rebinned histogram range",
    };
    let first = group.first().ok_or(overflow.clone())?;
    let step = (Grid::of(first).scale.round() as u64).max(1);
    let (low_pc, low_unit) = group
        .iter()
        .map(|s| (s.low_pc, s.low_pc / 2))
        .min_by_key(|&(pc, unit)| (unit, pc))
        .ok_or(overflow.clone())?;
    let end_unit = group
        .iter()
        .map(|s| s.high_pc / 2)
        .max()
        .unwrap_or(low_unit)
        .max(low_unit + 1);
    let n = (end_unit - low_unit).div_ceil(step);
    // A record with a huge range and few bins must not make the grid unbounded.
    let source_bins = group.iter().map(|s| s.bins.len() as u64).sum::<u64>();
    if n > source_bins.saturating_mul(16).max(1 << 20) {
        return Err(MergeError::Overflow {
            input,
            what: "the rebinned histogram size",
        });
    }
    let high_pc = n
        .checked_mul(step)
        .and_then(|x| x.checked_mul(2))
        .and_then(|x| x.checked_add(low_pc))
        .ok_or(overflow.clone())?;
    let n_usize = usize::try_from(n).map_err(|_| overflow.clone())?;
    let mut bins = vec![0u64; n_usize];
    let target = HistRange {
        low_pc,
        high_pc,
        bins: n_usize,
    };
    let mut notes = Vec::new();
    let last = group.len().saturating_sub(1);
    for (k, s) in group.iter().enumerate() {
        let moved = redistribute(input, s, low_unit, step, &mut bins)?;
        if moved {
            notes.push(Rebinned {
                input: if k == last { Some(input) } else { None },
                from: s.range(),
                to: target,
            });
        }
    }
    Ok((
        Slot {
            low_pc,
            high_pc,
            bins,
        },
        notes,
    ))
}

/// Adds the counts of `src` onto the grid `(low_unit, step)`; returns whether any count had to
/// be split or moved (false when `src` already lies on that grid).
fn redistribute(
    input: usize,
    src: &Slot,
    low_unit: u64,
    step: u64,
    bins: &mut [u64],
) -> MergeResult<bool> {
    let grid = Grid::of(src);
    let overflow = || MergeError::Overflow {
        input,
        what: "a rebinned histogram bin sum",
    };
    let aligned = Grid::integral(src).is_some_and(|(start, w)| {
        w == step && start >= low_unit && (start - low_unit).is_multiple_of(step)
    });
    for (i, &count) in src.bins.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let (lo, hi) = grid.bin(i);
        let first = usize::try_from(lo.saturating_sub(low_unit) / step).map_err(|_| overflow())?;
        if hi <= lo {
            // A bin of zero width (scale below 1): its samples belong at its address.
            let slot = bins.get_mut(first).ok_or_else(overflow)?;
            *slot = slot.checked_add(count).ok_or_else(overflow)?;
            continue;
        }
        let width = u128::from(hi - lo);
        let last =
            usize::try_from((hi - 1).saturating_sub(low_unit) / step).map_err(|_| overflow())?;
        let mut shares: Vec<(usize, u64, u128)> = Vec::with_capacity(last - first + 1);
        let mut given = 0u64;
        for t in first..=last {
            let t_lo = low_unit + t as u64 * step;
            let t_hi = t_lo + step;
            let overlap = u128::from(hi.min(t_hi).saturating_sub(lo.max(t_lo)));
            let exact = u128::from(count) * overlap;
            let floor = u64::try_from(exact / width).map_err(|_| overflow())?;
            given += floor;
            shares.push((t, floor, exact % width));
        }
        let mut remainder = count.saturating_sub(given);
        if remainder > 0 {
            // Largest remainder first, ties to the lowest target bin.
            shares.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
            for s in shares.iter_mut() {
                if remainder == 0 {
                    break;
                }
                s.1 += 1;
                remainder -= 1;
            }
        }
        for (t, share, _) in shares {
            let slot = bins.get_mut(t).ok_or_else(overflow)?;
            *slot = slot.checked_add(share).ok_or_else(overflow)?;
        }
    }
    Ok(!aligned)
}
