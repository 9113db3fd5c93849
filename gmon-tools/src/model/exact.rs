//! Exact stacks from the gmon-write runtime's sidecars (spec/stacks.md §8): each sampled
//! program counter resolved to a function, the runtime's own callers left out.

use std::collections::BTreeMap;
use std::path::Path;

use gmon_format::Sidecar;
use gmon_format::sidecar::StackKind;

use super::RUNTIME_LIBRARY;
use super::addresses::{CallSite, Place, PlacedStack, SampledAddress};
use super::estimate::{Frame, Stack, StackSource, Stacks};
use super::function::FunctionInfo;
use super::graph::{NodeId, WeightedCallGraph};
use super::symbolize::{ObjectSymbols, display_name};
use crate::gprof::Analysis;

/// The root of the outer clock's samples in every view (spec/runtime.md §4.7).
pub const OUTSIDE_ROOT: &str = "[process start and exit]";

/// The function every kernel address is named.
pub const KERNEL: &str = "[kernel]";

/// Whether `pc` is a kernel address: the upper half of the address space, on every 64-bit
/// architecture the runtime supports. Only `gmon record`'s outer clock samples the kernel
/// (spec/runtime.md §4.7).
pub fn is_kernel_address(pc: u64) -> bool {
    pc >> 63 == 1
}

/// Whether the frame at `depth` (0: the sampled program counter) of a sampled stack is a caller
/// inside the profiler's own shared library, which is left out: the runtime's thread-start
/// wrapper would otherwise be the root of every thread's stack, where users look for the thread
/// function. A sample whose program counter itself is in the runtime (its own overhead) keeps
/// that leaf. The main executable is never left out, even when it links gmon-write itself.
fn is_runtime_caller(depth: usize, obj: &gmon_format::sidecar::MappedObject, main: bool) -> bool {
    depth != 0
        && !main
        && Path::new(&obj.path)
            .file_name()
            .is_some_and(|n| n == RUNTIME_LIBRARY)
}

/// Stacks exactly as the runtime sampled them (without the runtime's own callers, see
/// [`is_runtime_caller`]), every program counter named (spec/stacks.md §8, §9): in the
/// executable, the function of the gprof engine's table unless the executable's own symbols
/// put a function gprof's rules leave out there (a compiler clone such as `f.part.0`), or the
/// executable's symbols / unwind table when gprof's table has nothing; in a shared object, the
/// object's own symbols ([`ObjectSymbols`]), `[object]` when the object cannot be read or is
/// another build than the one sampled; `[unknown]` outside every object.
pub(super) fn exact_stacks(
    analysis: &Analysis,
    main_symbols: Option<&ObjectSymbols>,
    sidecars: &[Sidecar],
    graph: &mut WeightedCallGraph,
    functions: &mut Vec<FunctionInfo>,
) -> Stacks {
    // Node k of the graph is the k-th function of the analysis (see graph_from_analysis).
    let node_of_symbol: BTreeMap<usize, NodeId> = analysis
        .functions()
        .enumerate()
        .map(|(k, f)| (f.index, NodeId(k)))
        .collect();
    let mut extra: BTreeMap<String, NodeId> = BTreeMap::new();
    let mut libraries: BTreeMap<String, Option<ObjectSymbols>> = BTreeMap::new();
    let mut out: BTreeMap<Vec<Frame>, u64> = BTreeMap::new();
    let mut sampled: BTreeMap<(NodeId, Option<String>, u64), u64> = BTreeMap::new();
    let mut call_sites: BTreeMap<(NodeId, NodeId, u64), u64> = BTreeMap::new();
    // Stacks with the (object, link-time address) of each frame, root first.
    type Placed = (Vec<Frame>, Vec<Option<(Option<String>, u64)>>);
    let mut placed: BTreeMap<Placed, u64> = BTreeMap::new();
    let mut extra_node = |(name, system): (String, String),
                          graph: &mut WeightedCallGraph,
                          functions: &mut Vec<FunctionInfo>| {
        *extra.entry(name.clone()).or_insert_with(|| {
            functions.push(FunctionInfo {
                name: name.clone(),
                system_name: system,
                ..FunctionInfo::default()
            });
            graph.add_node(name, 0)
        })
    };
    let plain = |n: &str| (n.to_owned(), n.to_owned());
    for sidecar in sidecars {
        // The main executable is the first object flagged main (spec/runtime.md §5.4); another
        // object with the flag is read as the library it is.
        let main = sidecar.main_object();
        let is_main =
            |obj: &gmon_format::sidecar::MappedObject| main.is_some_and(|m| std::ptr::eq(m, obj));
        for (index, st) in sidecar.stacks.iter().enumerate() {
            let outside = sidecar.stack_kind(index) == StackKind::OUTSIDE;
            let mut frames = Vec::with_capacity(st.pcs.len());
            // Per kept frame, leaf first: its object (`None`: the executable) and address.
            let mut places: Vec<(Option<String>, u64)> = Vec::with_capacity(st.pcs.len());
            // The same with the executable named by its path, and `None` outside every object.
            let mut whole: Vec<Option<(Option<String>, u64)>> = Vec::with_capacity(st.pcs.len());
            for (depth, &pc) in st.pcs.iter().enumerate() {
                // Return addresses point after the call: step back into it.
                // The outer clock's second frame is exact too: where the thread entered the
                // kernel, a faulting instruction as often as a system call's return address
                // (a first touch of a code page faults at a function's entry, where one byte
                // back is the padding before it; spec/runtime.md §4.7).
                let pc = if depth == 0 || outside {
                    pc
                } else {
                    pc.saturating_sub(1)
                };
                let id = match sidecar.resolve(pc) {
                    Some((obj, _)) if is_runtime_caller(depth, obj, is_main(obj)) => continue,
                    Some((obj, addr)) if is_main(obj) => {
                        let gprofs = analysis.symtab.lookup(addr).and_then(|i| {
                            Some((
                                analysis.symtab.symbols.get(i)?.addr,
                                *node_of_symbol.get(&i)?,
                            ))
                        });
                        let ours = main_symbols.and_then(|m| m.function_at(addr));
                        match (gprofs, ours) {
                            (Some((start, _)), Some(f)) if f.from_symbol && f.start > start => {
                                extra_node(
                                    (display_name(&f.name), f.name.clone()),
                                    graph,
                                    functions,
                                )
                            }
                            (Some((_, id)), _) => id,
                            (None, _) => match main_symbols {
                                Some(m) => extra_node(m.name_at(addr), graph, functions),
                                None => extra_node(plain("[unknown]"), graph, functions),
                            },
                        }
                    }
                    Some((obj, addr)) => {
                        let base = Path::new(&obj.path)
                            .file_name()
                            .map_or(obj.path.clone(), |n| n.to_string_lossy().into_owned());
                        let syms = libraries
                            .entry(obj.path.clone())
                            .or_insert_with(|| library_symbols(obj));
                        let (id, start) = match syms {
                            // The runtime's own leaf stays one frame: its overhead, visible.
                            Some(s) if base != RUNTIME_LIBRARY => (
                                extra_node(s.name_at(addr), graph, functions),
                                s.function_at(addr).map_or(addr, |f| f.start),
                            ),
                            _ => (extra_node(plain(&format!("[{base}]")), graph, functions), 0),
                        };
                        if let Some(f) = functions.get_mut(id.0)
                            && f.object.is_none()
                        {
                            f.object = Some((obj.path.clone(), start));
                        }
                        places.push((Some(obj.path.clone()), addr));
                        whole.push(Some((Some(obj.path.clone()), addr)));
                        frames.push(Frame::Function(id));
                        continue;
                    }
                    None if is_kernel_address(pc) => extra_node(plain(KERNEL), graph, functions),
                    None => extra_node(plain("[unknown]"), graph, functions),
                };
                let (object, addr) = match sidecar.resolve(pc).filter(|(obj, _)| is_main(obj)) {
                    Some((obj, a)) => (Some(obj.path.clone()), a),
                    None => (None, pc),
                };
                places.push((None, addr));
                whole.push(Some((object, addr)));
                frames.push(Frame::Function(id));
            }
            if st.count > 0 {
                for (i, (&frame, (object, addr))) in frames.iter().zip(&places).enumerate() {
                    let Frame::Function(id) = frame else { continue };
                    if i == 0 {
                        let slot = sampled.entry((id, object.clone(), *addr)).or_insert(0);
                        *slot = slot.saturating_add(st.count);
                    }
                    if let Some(Frame::Function(callee)) =
                        i.checked_sub(1).and_then(|c| frames.get(c))
                    {
                        let slot = call_sites.entry((id, *callee, *addr)).or_insert(0);
                        *slot = slot.saturating_add(st.count);
                    }
                }
            }
            frames.reverse();
            whole.reverse();
            // A PC the outer clock sampled while no clock of the runtime ran has no callers:
            // it stands under one root that says when it ran (spec/runtime.md §4.7).
            if outside {
                frames.insert(
                    0,
                    Frame::Function(extra_node(plain(OUTSIDE_ROOT), graph, functions)),
                );
                whole.insert(0, None);
            }
            if st.count == 0 {
                continue;
            }
            // A stack of depth 0 (the format allows it) keeps its samples, under a frame that
            // says so, so that the views' totals stay the profile's (spec/runtime.md §5.6).
            if frames.is_empty() {
                frames.push(Frame::Function(extra_node(
                    plain("[no stack]"),
                    graph,
                    functions,
                )));
                whole.push(None);
            }
            let slot = placed.entry((frames.clone(), whole)).or_insert(0);
            *slot = slot.saturating_add(st.count);
            let slot = out.entry(frames).or_insert(0);
            *slot = slot.saturating_add(st.count);
        }
    }
    Stacks {
        stacks: out
            .into_iter()
            .map(|(frames, samples)| Stack { frames, samples })
            .collect(),
        source: StackSource::Exact,
        outside_samples: 0,
        sampled: sampled
            .into_iter()
            .map(|((function, object, address), samples)| SampledAddress {
                function,
                address,
                object,
                samples,
                line: 0,
                file: None,
            })
            .collect(),
        call_sites: call_sites
            .into_iter()
            .map(|((caller, callee, address), samples)| CallSite {
                caller,
                callee,
                address,
                samples,
                line: 0,
                file: None,
            })
            .collect(),
        placed: placed
            .into_iter()
            .map(|((frames, places), samples)| PlacedStack {
                frames,
                places: places
                    .into_iter()
                    .map(|p| {
                        p.map(|(object, address)| Place {
                            object,
                            address,
                            line: 0,
                            file: None,
                        })
                    })
                    .collect(),
                samples,
            })
            .collect(),
    }
}

/// The symbols of a shared object the runtime recorded, when its file is still there and is
/// the build that was sampled (same build id, when the runtime recorded one).
fn library_symbols(obj: &gmon_format::sidecar::MappedObject) -> Option<ObjectSymbols> {
    ObjectSymbols::open_for(Path::new(&obj.path), &obj.build_id, None)
}

#[cfg(test)]
mod runtime_frame_tests {
    use super::*;
    use gmon_format::sidecar::{MappedObject, OBJECT_FLAG_MAIN};

    fn object(path: &str, flags: u32) -> MappedObject {
        MappedObject {
            path: path.to_owned(),
            build_id: Vec::new(),
            load_bias: 0,
            flags,
            ranges: Vec::new(),
        }
    }

    #[test]
    fn callers_inside_the_runtime_library_are_left_out_but_not_its_own_leaf() {
        let rt = object("/opt/gmon/lib/libgmon_write.so", 0);
        assert!(is_runtime_caller(1, &rt, false));
        assert!(is_runtime_caller(7, &rt, false));
        assert!(!is_runtime_caller(0, &rt, false));
        assert!(!is_runtime_caller(3, &object("/lib/libc.so.6", 0), false));
        assert!(!is_runtime_caller(
            3,
            &object("/x/libgmon_write.so", OBJECT_FLAG_MAIN),
            true
        ));
        assert!(!is_runtime_caller(
            3,
            &object("/x/libgmon_write.so.bak", 0),
            false
        ));
    }
}
