//! Where in each function the histogram's samples fell, address by address (spec/stacks.md
//! §7, "Leaf locations"): every non-zero bin, cut at function starts as the gprof engine
//! credits it, and cut again where a `gprof -l` line entry begins, so that the pieces of a
//! function add up to its credit and the pieces of a line to `gprof -l`'s credit of that line.

use std::collections::BTreeMap;

use super::function::{BinSample, FunctionInfo};
use super::graph::NodeId;
use crate::gprof::Analysis;

/// Fills [`FunctionInfo::histogram`] of every function with samples: one piece per
/// (non-zero bin, function, line entry) overlap, at its first address, weighted in billionths
/// of a tick, on the source line of the last line entry ([`FunctionInfo::bins`]) at or before
/// it. `node_of_symbol` maps the analysis's symbol indices to graph nodes.
pub(super) fn attach_histogram_pieces(
    analysis: &Analysis,
    node_of_symbol: &BTreeMap<usize, NodeId>,
    functions: &mut [FunctionInfo],
) {
    let syms = &analysis.symtab.symbols;
    // gprof's arithmetic is in UNITs of two bytes (`hist_assign_samples`); so is this, so
    // that every piece is credited exactly as the engine credits it.
    let unit = |a: u64| a / 2;
    let scale = analysis.hist.scale;
    if !(scale.is_finite() && scale > 0.0) {
        return;
    }
    // (node, address) -> (weight, line, file).
    type Piece = (u64, u32, Option<String>);
    let mut pieces: BTreeMap<(usize, u64), Piece> = BTreeMap::new();
    let view: &[FunctionInfo] = functions;
    // Per node: its line entries by address.
    let mut sorted: BTreeMap<usize, Vec<&BinSample>> = BTreeMap::new();
    for r in &analysis.hist.records {
        let lowpc = unit(r.low_pc);
        r.bins.for_each_nonzero(|i, count| {
            let bin_lo = lowpc.wrapping_add((scale * i as f64) as u64);
            let bin_hi = lowpc.wrapping_add((scale * (i + 1) as f64) as u64);
            // The first symbol whose range (up to the next symbol's start) ends after bin_lo.
            let mut j = syms
                .partition_point(|s| unit(s.addr) <= bin_lo)
                .saturating_sub(1);
            while let Some(sym) = syms.get(j) {
                let sym_lo = unit(sym.addr);
                if sym_lo >= bin_hi {
                    break;
                }
                let Some(sym_hi) = syms.get(j + 1).map(|s| unit(s.addr)) else {
                    break;
                };
                j += 1;
                let (lo, hi) = (bin_lo.max(sym_lo), bin_hi.min(sym_hi));
                let Some(&node) = node_of_symbol.get(&(j - 1)) else {
                    continue;
                };
                if lo >= hi {
                    continue;
                }
                let Some(f) = view.get(node.0) else {
                    continue;
                };
                // Cut where a credited line entry begins, in UNITs as the engine's `-l`
                // credit does; each piece is on the last entry whose UNIT is at or before it.
                let entries = sorted.entry(node.0).or_insert_with(|| {
                    let mut v: Vec<&BinSample> = f.bins.iter().collect();
                    v.sort_by_key(|b| b.address);
                    v
                });
                let mut start = lo;
                while start < hi {
                    let at = entries.partition_point(|b| unit(b.address) <= start);
                    let entry = at.checked_sub(1).and_then(|i| entries.get(i));
                    let end = entries.get(at).map_or(hi, |b| unit(b.address).min(hi));
                    let ticks = (end - start) as f64 * count as f64 / scale;
                    let weight = (ticks * 1e9).round();
                    if weight.is_finite() && weight >= 1.0 {
                        // The piece's first byte inside the function and its line entry (a
                        // symbol or entry at an odd address starts inside its first UNIT).
                        let mut addr = (start * 2).max(sym.addr);
                        if let Some(e) = entry {
                            addr = addr.max(e.address);
                        }
                        let (line, file) =
                            entry.map_or((f.start_line, None), |e| (e.line, e.file.clone()));
                        let slot = pieces.entry((node.0, addr)).or_insert((0, line, file));
                        slot.0 = slot.0.saturating_add(weight as u64);
                    }
                    start = end;
                }
            }
        });
    }
    for ((k, address), (count, line, file)) in pieces {
        if let Some(f) = functions.get_mut(k) {
            f.histogram.push(BinSample {
                address,
                count,
                line,
                file,
            });
        }
    }
}
