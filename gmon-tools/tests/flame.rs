//! Tests of stack estimation, folded stacks and SVG output on hand-built call graphs.

use std::collections::BTreeMap;

use gmon_tools::flame::{
    CallGraph, CycleGroup, Frame, NodeId, StackSource, SvgOptions, estimate_stacks, folded_lines,
    largest_remainder, write_svg,
};
use proptest::prelude::*;

fn folded(g: &CallGraph) -> Vec<String> {
    let stacks = estimate_stacks(g).expect("estimate");
    folded_lines(&stacks, g)
}

#[test]
fn chain_keeps_every_sample_on_its_path() {
    let mut g = CallGraph::new();
    let main = g.add_node("main", 1);
    let a = g.add_node("a", 10);
    g.add_calls(main, a, 1).unwrap();
    assert_eq!(folded(&g), ["main 1", "main;a 10"]);
}

#[test]
fn self_time_follows_call_counts() {
    let mut g = CallGraph::new();
    let main = g.add_node("main", 0);
    let a = g.add_node("a", 0);
    let b = g.add_node("b", 0);
    let f = g.add_node("f", 8);
    g.add_calls(main, a, 1).unwrap();
    g.add_calls(main, b, 1).unwrap();
    g.add_calls(a, f, 3).unwrap();
    g.add_calls(b, f, 1).unwrap();
    assert_eq!(folded(&g), ["main;a;f 6", "main;b;f 2"]);
}

#[test]
fn largest_remainder_is_exact_and_breaks_ties_by_order() {
    let w = [(NodeId(0), 1), (NodeId(1), 1), (NodeId(2), 1)];
    assert_eq!(largest_remainder(10, &w, 3), [4, 3, 3]);
    // 5 * 1/3 = 1.67, 5 * 2/3 = 3.33: the larger fractional part (.67) gets the spare sample.
    let w = [(NodeId(0), 1), (NodeId(1), 2)];
    assert_eq!(largest_remainder(5, &w, 3), [2, 3]);
    // No overflow with the largest counts.
    let w = [(NodeId(0), u64::MAX - 1), (NodeId(1), 1)];
    assert_eq!(largest_remainder(u64::MAX, &w, u64::MAX), [u64::MAX - 1, 1]);
}

#[test]
fn recursive_self_arc_is_ignored() {
    let mut g = CallGraph::new();
    let main = g.add_node("main", 0);
    let f = g.add_node("f", 5);
    g.add_calls(main, f, 1).unwrap();
    g.add_calls(f, f, 1_000_000).unwrap();
    assert_eq!(folded(&g), ["main;f 5"]);
}

#[test]
fn spontaneous_functions_are_roots() {
    let mut g = CallGraph::new();
    g.add_node("handler", 3);
    let main = g.add_node("main", 2);
    let f = g.add_node("f", 1);
    g.add_calls(main, f, 0).unwrap(); // a static (count 0) arc carries no weight
    assert_eq!(folded(&g), ["f 1", "handler 3", "main 2"]);
}

fn even_odd() -> (CallGraph, [NodeId; 4]) {
    let mut g = CallGraph::new();
    let main = g.add_node("main", 0);
    let even = g.add_node("is_even", 4);
    let odd = g.add_node("is_odd", 6);
    let leaf = g.add_node("leaf", 2);
    g.add_calls(main, even, 1).unwrap();
    g.add_calls(even, odd, 10).unwrap();
    g.add_calls(odd, even, 10).unwrap();
    g.add_calls(odd, leaf, 5).unwrap();
    (g, [main, even, odd, leaf])
}

#[test]
fn cycles_are_one_unit_and_drawn_as_a_frame() {
    let (g, _) = even_odd();
    assert_eq!(
        folded(&g),
        [
            "main;<cycle 1>;is_even 4",
            "main;<cycle 1>;is_odd 6",
            "main;<cycle 1>;is_odd;leaf 2"
        ]
    );
}

#[test]
fn declared_cycle_numbers_are_used() {
    let (mut g, [_, even, odd, _]) = even_odd();
    g.set_cycles(vec![CycleGroup {
        number: 7,
        members: vec![even, odd],
    }])
    .unwrap();
    let stacks = estimate_stacks(&g).unwrap();
    assert!(
        stacks
            .stacks
            .iter()
            .all(|s| s.frames.contains(&Frame::Cycle(7)))
    );
    assert!(
        g.set_cycles(vec![
            CycleGroup {
                number: 1,
                members: vec![even]
            },
            CycleGroup {
                number: 2,
                members: vec![even, odd]
            },
        ])
        .is_err()
    );
}

#[test]
fn outside_samples_are_counted_not_drawn() {
    let (mut g, _) = even_odd();
    g.set_outside_samples(9);
    let stacks = estimate_stacks(&g).unwrap();
    assert_eq!(stacks.outside_samples, 9);
    assert_eq!(stacks.total_samples(), 12);
}

#[test]
fn svg_is_deterministic_xml_with_every_function() {
    let (g, _) = even_odd();
    let stacks = estimate_stacks(&g).unwrap();
    let lines = folded_lines(&stacks, &g);
    let mut a = Vec::new();
    let mut b = Vec::new();
    let opts = SvgOptions::default();
    write_svg(&mut a, &lines, &opts, StackSource::Estimated, 0).unwrap();
    write_svg(&mut b, &lines, &opts, StackSource::Estimated, 0).unwrap();
    assert_eq!(a, b, "same input must give the same bytes");
    let text = String::from_utf8(a).unwrap();
    let titles = svg_titles(&text);
    for name in ["main", "<cycle 1>", "is_even", "is_odd", "leaf"] {
        assert!(
            titles.iter().any(|t| t.starts_with(&format!("{name} ("))),
            "{name} missing from {titles:?}"
        );
    }
    assert!(text.contains("stacks estimated from call counts"));
}

#[test]
fn empty_graph_is_an_error_not_an_error_svg() {
    let g = CallGraph::new();
    let stacks = estimate_stacks(&g).unwrap();
    let lines = folded_lines(&stacks, &g);
    let mut out = Vec::new();
    assert!(
        write_svg(
            &mut out,
            &lines,
            &SvgOptions::default(),
            StackSource::Estimated,
            0
        )
        .is_err()
    );
    assert!(out.is_empty());
}

/// Every `<title>` text in an SVG, which must parse as XML.
pub fn svg_titles(svg: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut titles = Vec::new();
    let mut current: Option<String> = None;
    loop {
        match reader.read_event().expect("SVG must be well-formed XML") {
            Event::Start(e) if e.name().as_ref() == b"title" => current = Some(String::new()),
            Event::End(e) if e.name().as_ref() == b"title" => titles.extend(current.take()),
            Event::Text(t) => {
                if let Some(c) = current.as_mut() {
                    c.push_str(&t.decode().expect("utf-8"));
                }
            }
            Event::GeneralRef(r) => {
                if let Some(c) = current.as_mut() {
                    let name = r.decode().expect("utf-8");
                    match &*name {
                        "lt" => c.push('<'),
                        "gt" => c.push('>'),
                        "amp" => c.push('&'),
                        "quot" => c.push('"'),
                        "apos" => c.push('\''),
                        other => {
                            let ch = r.resolve_char_ref().ok().flatten();
                            match ch {
                                Some(ch) => c.push(ch),
                                None => panic!("unknown entity &{other};"),
                            }
                        }
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    titles
}

fn arb_graph() -> impl Strategy<Value = CallGraph> {
    (1usize..12).prop_flat_map(|n| {
        (
            proptest::collection::vec(0u64..50, n),
            proptest::collection::vec((0..n, 0..n, 0u64..20), 0..(n * 3)),
        )
            .prop_map(move |(samples, arcs)| {
                let mut g = CallGraph::new();
                let ids: Vec<NodeId> = samples
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| g.add_node(format!("f{i}"), s))
                    .collect();
                for (a, b, c) in arcs {
                    g.add_calls(ids[a], ids[b], c).unwrap();
                }
                g
            })
    })
}

proptest! {
    #[test]
    fn frames_of_each_leaf_sum_to_its_self_samples(g in arb_graph()) {
        let stacks = estimate_stacks(&g).unwrap();
        let mut per_leaf: BTreeMap<NodeId, u64> = BTreeMap::new();
        for s in &stacks.stacks {
            prop_assert!(s.samples > 0);
            let Some(Frame::Function(leaf)) = s.frames.last() else {
                return Err(TestCaseError::fail("a stack must end in a function"));
            };
            *per_leaf.entry(*leaf).or_insert(0) += s.samples;
        }
        for (i, node) in g.nodes().iter().enumerate() {
            prop_assert_eq!(per_leaf.get(&NodeId(i)).copied().unwrap_or(0), node.self_samples);
        }
        prop_assert_eq!(stacks.total_samples(), g.total_self_samples().unwrap());
        // Deterministic: the same graph gives the same stacks.
        prop_assert_eq!(estimate_stacks(&g).unwrap(), stacks);
    }
}
