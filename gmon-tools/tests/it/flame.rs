//! Tests of stack estimation, folded stacks and SVG output on hand-built call graphs.

use crate::common;

use std::collections::BTreeMap;

use crate::common::{case_dir, gmon as gmon_cmd, run_ok, scaled_profile, testdata_cases};
use gmon_tools::flame::{DiffColours, SvgOptions, folded_lines, write_diff_svg, write_svg};
use gmon_tools::model::{
    CycleGroup, Frame, NodeId, StackSource, WeightedCallGraph, estimate_stacks, largest_remainder,
};
use proptest::prelude::*;

fn folded(g: &WeightedCallGraph) -> Vec<String> {
    let stacks = estimate_stacks(g).expect("estimate");
    folded_lines(&stacks, g)
}

#[test]
fn chain_keeps_every_sample_on_its_path() {
    let mut g = WeightedCallGraph::new();
    let main = g.add_node("main", 1);
    let a = g.add_node("a", 10);
    g.add_calls(main, a, 1).unwrap();
    assert_eq!(folded(&g), ["main 1", "main;a 10"]);
}

#[test]
fn self_time_follows_call_counts() {
    let mut g = WeightedCallGraph::new();
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
    let mut g = WeightedCallGraph::new();
    let main = g.add_node("main", 0);
    let f = g.add_node("f", 5);
    g.add_calls(main, f, 1).unwrap();
    g.add_calls(f, f, 1_000_000).unwrap();
    assert_eq!(folded(&g), ["main;f 5"]);
}

#[test]
fn spontaneous_functions_are_roots() {
    let mut g = WeightedCallGraph::new();
    g.add_node("handler", 3);
    let main = g.add_node("main", 2);
    let f = g.add_node("f", 1);
    g.add_calls(main, f, 0).unwrap(); // a static (count 0) arc carries no weight
    assert_eq!(folded(&g), ["f 1", "handler 3", "main 2"]);
}

fn even_odd() -> (WeightedCallGraph, [NodeId; 4]) {
    let mut g = WeightedCallGraph::new();
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
    let g = WeightedCallGraph::new();
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

fn arb_graph() -> impl Strategy<Value = WeightedCallGraph> {
    (1usize..12).prop_flat_map(|n| {
        (
            proptest::collection::vec(0u64..50, n),
            proptest::collection::vec((0..n, 0..n, 0u64..20), 0..(n * 3)),
        )
            .prop_map(move |(samples, arcs)| {
                let mut g = WeightedCallGraph::new();
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

// ---- On the real testdata profiles -------------------------------------------------------

use std::path::{Path, PathBuf};

use gmon_tools::flame::write_folded;
use gmon_tools::model::{LoadOptions, Loaded, load_with};

/// Flame graphs load without per-line credit, as `gmon flame` does.
fn load_stacks(exe: Option<&Path>, gmon: &[PathBuf]) -> gmon_tools::Result<Loaded> {
    load_with(exe, gmon, &LoadOptions::STACKS_ONLY)
}
use gmon_binary::Image;
use gmon_tools::gprof::{Analysis, AnalysisOptions};

#[test]
fn testdata_stacks_keep_the_gprof_engines_totals() {
    let cases = testdata_cases();
    assert!(
        cases.len() >= 10,
        "testdata/cases is missing ({} cases)",
        cases.len()
    );
    for case in cases {
        let prog = case.join("prog");
        let gmon = vec![case.join("gmon.out")];
        let l =
            load_stacks(Some(&prog), &gmon).unwrap_or_else(|e| panic!("{}: {e:#}", case.display()));
        // The gprof engine's own numbers, independently of the graph built from them.
        let profile = common::read(&gmon[0]);
        let a = common::views_analysis(&prog, profile);
        // The graph has one node per symbol, in the engine's order, so node k is function k.
        let mut per_leaf: BTreeMap<usize, u64> = BTreeMap::new();
        for s in &l.stacks.stacks {
            let Some(&Frame::Function(leaf)) = s.frames.last() else {
                panic!("{}: a stack ends in a cycle frame", case.display())
            };
            *per_leaf.entry(leaf.0).or_insert(0) += s.samples;
        }
        let mut in_functions = 0.0;
        for (k, f) in a.functions().enumerate() {
            in_functions += f.self_ticks;
            let ours = per_leaf.get(&k).copied().unwrap_or(0);
            // gprof credits whole ticks unless a bin straddles two functions.
            assert!(
                (ours as f64 - f.self_ticks).abs() < 1.0,
                "{}: {} has {} samples in stacks, gprof credits {}",
                case.display(),
                f.demangled(),
                ours,
                f.self_ticks
            );
            if f.self_ticks.fract() == 0.0 {
                assert_eq!(
                    ours as f64,
                    f.self_ticks,
                    "{}: {}",
                    case.display(),
                    f.demangled()
                );
            }
        }
        let total = l.stacks.total_samples();
        assert_eq!(
            total,
            in_functions.round() as u64,
            "{}: total in stacks",
            case.display()
        );
        // gprof's credit can exceed the bins by a fraction (its flat profile then shows
        // 100.15%); outside samples are the bins left over, never negative.
        assert_eq!(
            l.stacks.outside_samples,
            a.total_samples().saturating_sub(total),
            "{}: outside samples",
            case.display()
        );
    }
}

fn case(name: &str) -> (PathBuf, PathBuf) {
    let dir = case_dir(name);
    (dir.join("prog"), dir.join("gmon.out"))
}

#[test]
fn testdata_svg_has_every_frame_above_the_threshold() {
    for name in [
        "cycle-pie-O0",
        "cxx-pie-O2",
        "recurse-nopie-O0",
        "multifile-pie-O2",
    ] {
        let (prog, gmon) = case(name);
        let l = load_stacks(Some(&prog), &[gmon]).unwrap();
        let lines = folded_lines(&l.stacks, &l.graph);
        let mut opts = SvgOptions::default();
        opts.min_width = 0.5;
        let mut svg = Vec::new();
        write_svg(
            &mut svg,
            &lines,
            &opts,
            l.stacks.source,
            l.stacks.outside_samples,
        )
        .unwrap();
        let titles = svg_titles(&String::from_utf8(svg).unwrap());
        // Width of every frame of the merged graph: the samples of all stacks through its path.
        let mut width: BTreeMap<Vec<String>, u64> = BTreeMap::new();
        let mut total = 0;
        for line in &lines {
            let (stack, n) = line.rsplit_once(' ').unwrap();
            let n: u64 = n.parse().unwrap();
            total += n;
            let frames: Vec<String> = stack.split(';').map(str::to_owned).collect();
            for depth in 1..=frames.len() {
                *width.entry(frames[..depth].to_vec()).or_insert(0) += n;
            }
        }
        assert!(total > 0, "{name}: no samples");
        for (path, w) in width {
            if w as f64 * 100.0 / total as f64 >= opts.min_width {
                let leaf = path.last().unwrap();
                assert!(
                    titles.iter().any(|t| t.starts_with(&format!("{leaf} ("))),
                    "{name}: frame {path:?} ({w} of {total}) is not drawn"
                );
            }
        }
    }
}

#[test]
fn testdata_every_case_draws_or_says_why_not() {
    for dir in testdata_cases() {
        let l = load_stacks(Some(&dir.join("prog")), &[dir.join("gmon.out")]).unwrap();
        let lines = folded_lines(&l.stacks, &l.graph);
        let mut folded = Vec::new();
        write_folded(&mut folded, &l.stacks, &l.graph).unwrap();
        assert_eq!(
            String::from_utf8(folded).unwrap().lines().count(),
            lines.len()
        );
        let mut svg = Vec::new();
        let r = write_svg(&mut svg, &lines, &SvgOptions::default(), l.stacks.source, 0);
        if lines.is_empty() {
            let e = r.unwrap_err();
            assert!(
                e.to_string().contains("nothing to draw"),
                "{}: {e}",
                dir.display()
            );
        } else {
            r.unwrap();
            svg_titles(&String::from_utf8(svg).unwrap());
        }
    }
}

// ---- Through the binary -------------------------------------------------------------------

#[test]
fn cli_folded_and_svg_are_deterministic() {
    let (prog, gmon) = case("cycle-pie-O0");
    let l = load_stacks(Some(&prog), std::slice::from_ref(&gmon)).unwrap();
    let expected: String = folded_lines(&l.stacks, &l.graph)
        .iter()
        .map(|s| format!("{s}\n"))
        .collect();
    let out = run_ok(
        gmon_cmd()
            .args(["flame", "--folded", "--exe"])
            .arg(&prog)
            .arg(&gmon),
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
    assert!(
        expected.contains("<cycle 1>"),
        "the cycle program draws its cycle:\n{expected}"
    );
    let svg = |extra: &[&str]| {
        let out = run_ok(
            gmon_cmd()
                .arg("flame")
                .args(extra)
                .arg("--exe")
                .arg(&prog)
                .arg(&gmon),
        );
        out.stdout
    };
    let a = svg(&[]);
    assert_eq!(a, svg(&[]), "same input, same bytes");
    let text = String::from_utf8(a).unwrap();
    assert!(text.contains("stacks estimated from call counts"));
    let icicle =
        String::from_utf8(svg(&["--inverted", "--colors", "mem", "--title", "T"])).unwrap();
    assert!(icicle.contains(">T<") && icicle != text);
    svg_titles(&icicle);
}

#[test]
fn cli_defaults_to_a_out_and_sums_profiles() {
    let dir = case_dir("recurse-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("prog"), tmp.path().join("a.out")).unwrap();
    let runs: Vec<PathBuf> = ["gmon.out", "gmon.2.out"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    let out = run_ok(
        gmon_cmd()
            .current_dir(tmp.path())
            .args(["flame", "--folded"])
            .args(&runs),
    );
    let total = |s: &[u8]| -> u64 {
        String::from_utf8_lossy(s)
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum()
    };
    // The summed profile carries the gprof engine's credit of both runs together.
    let a_out = tmp.path().join("a.out");
    let both = load_stacks(Some(&a_out), &runs).unwrap();
    assert_eq!(total(&out.stdout), both.stacks.total_samples());
    let image = Image::open(&a_out).unwrap();
    let profiles: Vec<_> = runs.iter().map(|r| common::read(r)).collect();
    let a = Analysis::new(&image, &profiles, &AnalysisOptions::default()).unwrap();
    let credit: f64 = a.functions().map(|f| f.self_ticks).sum();
    assert_eq!(both.stacks.total_samples(), credit.round() as u64);
    let one = |f: &Path| {
        let out = gmon_cmd()
            .current_dir(tmp.path())
            .args(["flame", "--folded"])
            .arg(f)
            .output();
        total(&out.unwrap().stdout)
    };
    // Each run alone is rounded on its own, so the sum may differ by the rounding only.
    assert!((one(&runs[0]) + one(&runs[1])).abs_diff(total(&out.stdout)) <= 1);
    // Without a.out and without --exe: a clear error naming the missing executable.
    let empty = tempfile::tempdir().unwrap();
    let out = gmon_cmd()
        .current_dir(empty.path())
        .arg("flame")
        .arg(&runs[0])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("a.out"));
}

#[test]
fn cli_diff_draws_a_differential_graph() {
    let dir = case_dir("recurse-pie-O0");
    let out = run_ok(
        gmon_cmd()
            .args(["flame", "--diff", "--exe"])
            .arg(dir.join("prog"))
            .arg(dir.join("gmon.out"))
            .arg(dir.join("gmon.2.out")),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let titles = svg_titles(&text);
    // inferno labels differential frames with the change in percent; these two runs of one
    // program differ by noise only, drawn without a difference (issue 28).
    assert!(titles.iter().any(|t| t.contains("%; ")), "{titles:?}");
    assert!(text.contains("grey = within noise"), "{text}");
    let out = gmon_cmd()
        .args(["flame", "--diff"])
        .arg(dir.join("gmon.out"))
        .output()
        .unwrap();
    assert!(!out.status.success());
}

// ---- Exact stacks from the runtime's sidecar ----------------------------------------------

#[test]
fn sidecar_stacks_are_drawn_exactly_and_name_the_executable() {
    use gmon_format::sidecar::AddressRange;
    use gmon_format::sidecar::{GmonLink, MappedObject, OBJECT_FLAG_MAIN, StackSample};
    let dir = case_dir("cycle-nopie-O0");
    let prog = std::fs::canonicalize(dir.join("prog")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let gmon = tmp.path().join("gmon.out");
    std::fs::copy(dir.join("gmon.out"), &gmon).unwrap();
    let bytes = std::fs::read(&gmon).unwrap();
    // Addresses of three functions, from the gprof engine's symbol table (non-PIE: bias 0).
    let image = Image::open(&prog).unwrap();
    let a = Analysis::new(
        &image,
        &[gmon_format::read(&bytes).unwrap()],
        &AnalysisOptions::default(),
    )
    .unwrap();
    let addr = |n: &str| a.functions().find(|f| f.name == n).unwrap().addr;
    // A library that is gone since the run: its frames are named by the object alone.
    let lib = MappedObject {
        path: tmp.path().join("gone/libc.so.6").display().to_string(),
        build_id: vec![],
        load_bias: 0x7f00_0000_0000,
        flags: 0,
        ranges: vec![AddressRange {
            start: 0x7f00_0000_1000,
            end: 0x7f00_0001_0000,
        }],
    };
    let main_obj = MappedObject {
        path: prog.display().to_string(),
        build_id: vec![],
        load_bias: 0,
        flags: OBJECT_FLAG_MAIN,
        ranges: vec![AddressRange {
            start: 0x400000,
            end: 0x500000,
        }],
    };
    let sidecar = gmon_format::Sidecar {
        rate_hz: 100,
        objects: vec![main_obj, lib],
        stacks: vec![
            // Leaf PC inside work; return addresses just after calls in cyc_a and main.
            StackSample {
                count: 5,
                pcs: vec![addr("work") + 2, addr("cyc_a") + 9, addr("main") + 9],
            },
            StackSample {
                count: 2,
                pcs: vec![0x7f00_0000_2000, addr("main") + 9],
            },
        ],
        gmon: Some(GmonLink::of(&bytes)),
        ..Default::default()
    };
    let mut side = Vec::new();
    gmon_format::write_sidecar(&sidecar, &mut side).unwrap();
    std::fs::write(gmon_format::sidecar_path(&gmon), side).unwrap();

    // No --exe and no a.out: the sidecar names the executable.
    let out = run_ok(
        gmon_cmd()
            .current_dir(tmp.path())
            .args(["flame", "--folded", "gmon.out"]),
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "main;[libc.so.6] 2\nmain;cyc_a;work 5\n"
    );
    let out = gmon_cmd()
        .current_dir(tmp.path())
        .args(["flame", "gmon.out"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("exact sampled stacks")
    );

    // A sidecar that belongs to another gmon.out is ignored, with a note on stderr.
    let mut stale = sidecar.clone();
    stale.gmon = Some(GmonLink {
        length: 1,
        fnv1a64: 2,
    });
    let mut side = Vec::new();
    gmon_format::write_sidecar(&stale, &mut side).unwrap();
    std::fs::write(gmon_format::sidecar_path(&gmon), side).unwrap();
    let out = gmon_cmd()
        .current_dir(tmp.path())
        .args(["flame", "--folded", "gmon.out"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ignored"));
    assert!(
        String::from_utf8(out.stdout).unwrap().contains("<cycle 1>"),
        "estimated again"
    );

    // A second object flagged main is read as the library it is (the first flagged is the
    // executable), and a stack of depth 0 keeps its samples under [no stack] (issue 30).
    let mut odd = sidecar.clone();
    odd.objects[1].flags = OBJECT_FLAG_MAIN;
    odd.stacks.push(StackSample {
        count: 3,
        pcs: vec![],
    });
    let mut side = Vec::new();
    gmon_format::write_sidecar(&odd, &mut side).unwrap();
    std::fs::write(gmon_format::sidecar_path(&gmon), side).unwrap();
    let out = run_ok(
        gmon_cmd()
            .current_dir(tmp.path())
            .args(["flame", "--folded", "gmon.out"]),
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        ["[no stack] 3", "main;[libc.so.6] 2", "main;cyc_a;work 5"]
    );
}

#[test]
fn testdata_variants_give_the_same_stacks_as_the_original() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut checked = 0;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("variants"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.retain(|d| d.is_dir());
    dirs.sort();
    for dir in dirs {
        let case = root.join("cases").join(dir.file_name().unwrap());
        let prog = case.join("prog");
        let original = load_stacks(Some(&prog), &[case.join("gmon.out")]).unwrap();
        let expected = folded_lines(&original.stacks, &original.graph);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "gmon"))
            .collect();
        files.sort();
        for f in files {
            let l = load_stacks(Some(&prog), std::slice::from_ref(&f))
                .unwrap_or_else(|e| panic!("{}: {e:#}", f.display()));
            assert_eq!(
                folded_lines(&l.stacks, &l.graph),
                expected,
                "{}",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 40,
        "testdata/variants is missing ({checked} files)"
    );
}

#[test]
fn cli_accepts_gprofs_order_executable_first() {
    let (prog, gmon) = case("recurse-pie-O0");
    let a = run_ok(gmon_cmd().args(["flame", "--folded"]).arg(&prog).arg(&gmon));
    let b = gmon_cmd()
        .args(["flame", "--folded", "--exe"])
        .arg(&prog)
        .arg(&gmon)
        .output()
        .unwrap();
    assert_eq!(a.stdout, b.stdout);
    assert!(!a.stdout.is_empty());
}

#[test]
fn whole_samples_round_gprofs_credit_to_its_rounded_total() {
    use gmon_tools::model::whole_samples;
    // 2.2 ticks in all -> 2 samples; the spare one goes to the first of the equal fractions.
    assert_eq!(whole_samples(&[0.5, 0.5, 1.2]), [1, 0, 1]);
    // The traps case: 4.507 + 4.007 + 0.501 = 9.015 -> 9.
    assert_eq!(whole_samples(&[4.507, 4.007, 0.501]), [5, 4, 0]);
    assert_eq!(whole_samples(&[f64::NAN, -1.0, 3.0]), [0, 0, 3]);
    assert!(whole_samples(&[]).is_empty());
}

#[test]
fn cli_output_file_is_written_whole() {
    let (prog, gmon) = case("cycle-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("out.svg");
    let out = run_ok(
        gmon_cmd()
            .args(["flame", "-o"])
            .arg(&file)
            .arg("--exe")
            .arg(&prog)
            .arg(&gmon),
    );
    assert!(out.stdout.is_empty());
    let stdout = gmon_cmd()
        .args(["flame", "--exe"])
        .arg(&prog)
        .arg(&gmon)
        .output()
        .unwrap()
        .stdout;
    assert_eq!(std::fs::read(&file).unwrap(), stdout);
    // A failure leaves no file behind.
    let bad = tmp.path().join("bad.svg");
    let out = gmon_cmd()
        .args(["flame", "-o"])
        .arg(&bad)
        .arg("--exe")
        .arg(&prog)
        .arg(tmp.path().join("missing.out"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!bad.exists());
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

/// The estimate makes gprof's assumption, so the width of a function's frames (the samples of
/// every stack it is in) is gprof's call-graph "self + children" for it, up to the rounding to
/// whole samples (at most 1.89 samples apart on the testdata when this was written).
#[test]
fn testdata_frame_widths_agree_with_gprofs_propagated_time() {
    for dir in testdata_cases() {
        let prog = dir.join("prog");
        let l = load_stacks(Some(&prog), &[dir.join("gmon.out")]).unwrap();
        let p = common::read(&dir.join("gmon.out"));
        let a = common::views_analysis(&prog, p);
        for (k, f) in a.functions().enumerate() {
            if f.cycle.is_some() {
                continue; // gprof prints cycle members' times differently; the cycle is one unit
            }
            let me = Frame::Function(NodeId(k));
            let width: u64 = l
                .stacks
                .stacks
                .iter()
                .filter(|s| s.frames.contains(&me))
                .map(|s| s.samples)
                .sum();
            let gprof = f.graph_self_ticks + f.graph_child_ticks;
            assert!(
                (width as f64 - gprof).abs() <= 3.0 + 0.02 * gprof,
                "{}: {} is {} samples wide, gprof propagates {:.2}",
                dir.display(),
                f.demangled(),
                width,
                gprof
            );
        }
    }
}

// ---- Every sample named (issue 11 item 3) ----------------------------------------------------

use std::process::Command;

use crate::common::record;

/// `gmon flame --folded PROFILE`, which must succeed.
fn folded_of(profile: &Path) -> String {
    let o = run_ok(gmon_cmd().args(["flame", "--folded"]).arg(profile));
    String::from_utf8(o.stdout).unwrap()
}

/// (samples, samples whose leaf is a named function): not `[object]`, `[unknown]` or
/// `OBJECT+0xADDRESS`.
fn named_leaves(folded: &str) -> (u64, u64) {
    let (mut total, mut named) = (0, 0);
    for line in folded.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let n: u64 = n.parse().unwrap();
        let leaf = stack.rsplit(';').next().unwrap();
        total += n;
        let anonymous = leaf.starts_with('[')
            || leaf
                .rsplit_once("+0x")
                .is_some_and(|(_, hex)| u64::from_str_radix(hex, 16).is_ok());
        if !anonymous {
            named += n;
        }
    }
    (total, named)
}

#[test]
fn recorded_python3_samples_are_named_by_the_librarys_own_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("py.out");
    let script = "s=0\nfor i in range(2000000): s+=i*i%7\nprint(s)";
    if record("recorded_python3", &out, &["python3", "-c", script]).is_none() {
        return;
    }
    let folded = folded_of(&out);
    let (total, named) = named_leaves(&folded);
    assert!(total > 100, "{folded}");
    // Before: 97.8% of samples were one frame, [libpython3.11.so.1.0].
    assert!(
        named * 100 >= total * 95,
        "{named} of {total} samples named:\n{folded}"
    );
}

#[test]
fn a_stripped_executable_is_drawn_with_dynsym_and_unwind_table_names_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let text: String = (0..400_000u64)
        .map(|i| format!("{}\n", i.wrapping_mul(2654435761) % 1_000_003))
        .collect();
    std::fs::write(&data, text).unwrap();
    let out = dir.path().join("gz.out");
    let data_arg = data.display().to_string();
    if record("stripped_gzip", &out, &["gzip", "-9", "-c", &data_arg]).is_none() {
        return;
    }
    let folded = folded_of(&out);
    assert!(!folded.is_empty());
    assert!(!folded.contains("[gzip]"), "{folded}");
    let pprof = gmon_cmd()
        .args(["pprof", "-o"])
        .arg(dir.path().join("p.pb.gz"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        pprof.status.success(),
        "{}",
        String::from_utf8_lossy(&pprof.stderr)
    );
    let svg = gmon_cmd().args(["flame"]).arg(&out).output().unwrap();
    assert!(svg.status.success());
}

#[test]
fn compiler_clones_keep_their_own_names() {
    let prog = case_dir("recurse-pie-O2").join("prog");
    let nm = match Command::new("nm").arg(&prog).output() {
        Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap(),
        _ => return common::skip("compiler_clones_keep_their_own_names", "nm is missing"),
    };
    let clones: Vec<(u64, &str)> = nm
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let addr = u64::from_str_radix(f.next()?, 16).ok()?;
            let _kind = f.next()?;
            let name = f.next()?;
            [".part.", ".isra.", ".constprop.", ".cold"]
                .iter()
                .any(|c| name.contains(c))
                .then_some((addr, name))
        })
        .collect();
    assert!(
        !clones.is_empty(),
        "recurse-pie-O2 has a clone (spin.isra.0)"
    );
    let syms = gmon_tools::model::ObjectSymbols::open(&prog).unwrap();
    for (addr, name) in clones {
        assert_eq!(syms.name_at(addr).1, name);
        assert_eq!(syms.name_at(addr + 1).1, name);
    }
    // From gmon.out alone too: gprof's rules credit spin.isra.0's samples to frame_dummy, the
    // symbol before it; the views keep the clone.
    let o = run_ok(
        gmon_cmd()
            .args(["flame", "--folded"])
            .arg(&prog)
            .arg(prog.with_file_name("gmon.out")),
    );
    let folded = String::from_utf8(o.stdout).unwrap();
    assert!(folded.contains(";spin.isra.0 "), "{folded}");
    assert!(!folded.contains("frame_dummy"), "{folded}");
}

// ---- Operands and the executable a profile belongs to (issue 12) ------------------------------

/// Runs `gmon ARGS` in `dir` and returns (success, stderr).
fn gmon_in(dir: &Path, args: &[&std::ffi::OsStr]) -> (bool, String) {
    let o = gmon_cmd().current_dir(dir).args(args).output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn operands_of_the_wrong_kind_are_named_as_such() {
    let c = case_dir("recurse-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(c.join("prog"), tmp.path().join("hot")).unwrap();
    std::fs::copy(c.join("gmon.out"), tmp.path().join("gmon.out")).unwrap();
    std::fs::create_dir(tmp.path().join("somedir")).unwrap();
    for cmd in [
        &["flame"][..],
        &["pprof", "-o", "p.pb.gz"][..],
        &["diff"][..],
    ] {
        let with = |ops: &[&str]| -> Vec<std::ffi::OsString> {
            cmd.iter().chain(ops).map(|s| s.into()).collect()
        };
        for (ops, says) in [
            // Operands swapped: the executable after the profile.
            (
                &["gmon.out", "hot"][..],
                "hot: is an executable, not a profile",
            ),
            (&["somedir", "gmon.out"][..], "somedir: is a directory"),
            (&["hot", "somedir"][..], "somedir: is a directory"),
            (
                &["--exe", "gmon.out", "gmon.out"][..],
                "gmon.out: is a gmon.out profile, not an executable",
            ),
            (
                &["--exe", "somedir", "gmon.out"][..],
                "somedir: is a directory, not an executable",
            ),
        ] {
            let args = with(ops);
            let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
            // diff needs two profiles: add one where only one is given.
            let mut refs = refs;
            if cmd[0] == "diff" && !ops.contains(&"hot") {
                refs.push("gmon.out".as_ref());
            }
            let (ok, err) = gmon_in(tmp.path(), &refs);
            assert!(!ok, "{refs:?} was accepted");
            assert!(err.contains(says), "{refs:?}: {err}");
            assert!(!err.contains("a.out"), "{refs:?}: {err}");
        }
    }
}

#[test]
fn flame_and_pprof_refuse_a_profile_of_another_program_and_force_reads_it() {
    let exe = case_dir("recurse-pie-O0").join("prog");
    let other = case_dir("cxx-pie-O0").join("gmon.out");
    let tmp = tempfile::tempdir().unwrap();
    let pb = tmp.path().join("p.pb.gz");
    for cmd in [&["flame"][..], &["pprof", "-o", pb.to_str().unwrap()][..]] {
        let args: Vec<&std::ffi::OsStr> = cmd
            .iter()
            .map(|s| s.as_ref())
            .chain([exe.as_os_str(), other.as_os_str()])
            .collect();
        let (ok, err) = gmon_in(tmp.path(), &args);
        assert!(!ok, "{cmd:?} accepted another program's profile");
        assert!(err.contains("not a profile of"), "{err}");
        assert!(err.contains("failed check: arc"), "{err}");
        let mut forced = args.clone();
        forced.insert(1, "--force".as_ref());
        let (ok, err) = gmon_in(tmp.path(), &forced);
        assert!(ok, "{err}");
        assert!(err.contains("although a check failed (--force)"), "{err}");
    }
    assert!(!pb.exists() || std::fs::metadata(&pb).unwrap().len() > 0);
}

#[test]
fn a_sidecar_with_another_build_id_is_refused_and_a_corrupt_one_explains_a_out() {
    let c = case_dir("recurse-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let gmon = tmp.path().join("gmon.out");
    std::fs::copy(c.join("gmon.out"), &gmon).unwrap();
    crate::common::write_main_object_sidecar(&gmon, "/gone/prog", &[0xde, 0xad, 0xbe, 0xef]);
    let (ok, err) = gmon_in(
        tmp.path(),
        &[
            "flame".as_ref(),
            c.join("prog").as_os_str(),
            "gmon.out".as_ref(),
        ],
    );
    assert!(!ok);
    assert!(err.contains("failed check: build id"), "{err}");
    assert!(err.contains("deadbeef"), "{err}");
    // Corrupt: without an executable, the error says why a.out was tried.
    std::fs::write(gmon_format::sidecar_path(&gmon), b"garbage").unwrap();
    let (ok, err) = gmon_in(tmp.path(), &["flame".as_ref(), "gmon.out".as_ref()]);
    assert!(!ok);
    assert!(
        err.contains("sidecar gmon.out.gmonx cannot be read"),
        "{err}"
    );
    assert!(err.contains("so a.out is used"), "{err}");
}

// ---- inferno's option names and meanings (issue 12) -----------------------------------------

/// The SVG `write_svg` draws for `lines` with `opts`.
fn draw(lines: &[&str], opts: &SvgOptions) -> String {
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut out = Vec::new();
    write_svg(&mut out, &lines, opts, StackSource::Estimated, 0).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn inverted_draws_an_icicle_and_reverse_reverses_the_stacks() {
    let lines = ["main;a 3", "main;b 1"];
    let plain = draw(&lines, &SvgOptions::default());
    let count = |svg: &str, name: &str| {
        svg_titles(svg)
            .iter()
            .filter(|t| t.starts_with(&format!("{name} (")))
            .count()
    };
    assert_eq!(count(&plain, "main"), 1);
    // Reversed stacks (a;main, b;main): main is drawn twice, above a and above b.
    let mut o = SvgOptions::default();
    o.reverse_stacks = true;
    assert_eq!(count(&draw(&lines, &o), "main"), 2);
    // Inverted: the same frames, drawn top-down.
    let mut o = SvgOptions::default();
    o.inverted = true;
    let icicle = draw(&lines, &o);
    assert_eq!(count(&icicle, "main"), 1);
    assert_ne!(icicle, plain);
}

#[test]
fn flame_takes_inferno_option_names() {
    let c = case_dir("recurse-pie-O0");
    let run = |extra: &[&str]| -> String {
        let o = run_ok(
            gmon_cmd()
                .arg("flame")
                .args(extra)
                .arg(c.join("prog"))
                .arg(c.join("gmon.out")),
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let svg = run(&[
        "--title",
        "TT",
        "--subtitle",
        "SUB",
        "--width",
        "900",
        "--fontsize",
        "15",
        "--countname",
        "ticks",
        "--notes",
        "NOTE",
        "--colors",
        "blue",
        "--hash",
        "--minwidth",
        "0.5",
    ]);
    assert!(svg.contains(">TT<"), "title");
    assert!(
        svg.contains("SUB (stacks estimated from call counts"),
        "the subtitle keeps where stacks came from"
    );
    assert!(svg.contains("width=\"900\""), "width");
    assert!(svg.contains("font-size:15px"), "fontsize");
    assert!(
        svg_titles(&svg).iter().any(|t| t.contains(" ticks, ")),
        "countname"
    );
    assert!(svg.contains("NOTE"), "notes");
    // The old spelling of --minwidth still works and means the same.
    assert_eq!(run(&["--minwidth", "2"]), run(&["--min-width", "2"]));
    // --reverse is inferno's (stacks reversed), no longer the icicle graph.
    assert_ne!(run(&["--reverse"]), run(&["--inverted"]));
    let help = run_ok(gmon_cmd().args(["flame", "--help"])).stdout;
    let help = String::from_utf8(help).unwrap();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("--inverted") && help.contains("that is --inverted now"),
        "{help}"
    );
}

/// The fill of the frame whose title starts with `name (`: (red, blue).
fn fill_of(svg: &str, name: &str) -> (u8, u8) {
    let at = svg.find(&format!("<title>{name} (")).expect("frame drawn");
    let rest = &svg[at..];
    let rgb = rest.find("fill=\"rgb(").expect("a fill") + "fill=\"rgb(".len();
    let parts: Vec<u8> = rest[rgb..]
        .split(')')
        .next()
        .unwrap()
        .split(',')
        .map(|p| p.trim().parse().unwrap())
        .collect();
    (parts[0], parts[2])
}

#[test]
fn differential_graph_colours_by_share_by_default_and_raw_counts_on_request() {
    // a: 8300 of 10000 samples, then 15800 of 20000: more samples, a smaller share (83% ->
    // 79%), far beyond sampling noise at these counts.
    let base = vec!["main;a 8300".to_owned(), "main;b 1700".to_owned()];
    let new = vec!["main;a 15800".to_owned(), "main;b 4200".to_owned()];
    let svg = |colours: DiffColours| {
        let mut o = SvgOptions::default();
        o.diff_colours = colours;
        let mut out = Vec::new();
        write_diff_svg(&mut out, &base, &new, &o, StackSource::Estimated).unwrap();
        String::from_utf8(out).unwrap()
    };
    let share = svg(DiffColours::Share);
    let (r, b) = fill_of(&share, "a");
    assert!(b > r, "share fell: blue, got rgb({r},_,{b})");
    assert!(share.contains("change in share of samples"));
    let counts = svg(DiffColours::Counts);
    let (r, b) = fill_of(&counts, "a");
    assert!(r > b, "count rose: red, got rgb({r},_,{b})");
    assert!(counts.contains("change in raw sample counts"));
}

/// Issue 28: the differential graph colours only what is a change; noise is grey, and the
/// subtitle says so. Before, two runs of one program drew 4 -> 5 samples red at +25%.
#[test]
fn differential_graph_draws_noise_grey() {
    let base = vec![
        "main;a 4".to_owned(),
        "main;b 5000".to_owned(),
        "main;c 5000".to_owned(),
        "main;d 300".to_owned(),
    ];
    let new = vec![
        "main;a 5".to_owned(),
        "main;b 5020".to_owned(),
        "main;c 4980".to_owned(),
        "main;d 400".to_owned(),
    ];
    let mut opts = SvgOptions::default();
    opts.min_width = 0.0;
    let mut out = Vec::new();
    write_diff_svg(&mut out, &base, &new, &opts, StackSource::Exact).unwrap();
    let svg = String::from_utf8(out).unwrap();
    for noise in ["a", "b", "c"] {
        assert_eq!(fill_of(&svg, noise), (200, 200), "{noise} is noise: grey");
    }
    let (r, b) = fill_of(&svg, "d");
    assert!(r > b, "d's share grew by a third: red, got rgb({r},_,{b})");
    assert!(
        svg.contains("grey = within noise or too few samples"),
        "{svg}"
    );
    // a (4 -> 5 samples) is too few to test.
    assert!(svg.contains("1 of 3 frames tested a change"), "{svg}");
}

/// Issue 28: `gmon flame --diff` takes several runs a side, as `gmon diff` does, and tests every
/// frame by the several-runs model (spec/diff.md §3, §10). Three runs a side of a program whose
/// `untracked_hot` spreads from 39% to 53% of the samples between runs: NEW's runs hold it 7
/// points higher on average, a change many times over when the runs are summed into one
/// profile a side (about 4,800 samples), and within the spread the runs themselves show.
/// Before, more than one profile a side was refused.
#[test]
fn flame_diff_takes_several_runs_a_side_and_tests_by_their_spread() {
    let dir = tempfile::tempdir().unwrap();
    let prog = case_dir("mixed-pie-O0").join("prog");
    let run = |name: &str, hot: u64, others: u64| {
        let out = dir.path().join(name);
        scaled_profile("mixed-pie-O0", "untracked_hot", hot, others, &out)
    };
    let base: Vec<PathBuf> = [7, 13, 10]
        .iter()
        .enumerate()
        .map(|(i, &f)| run(&format!("a{i}.out"), f, 10))
        .collect();
    let new: Vec<PathBuf> = [10, 16, 13]
        .iter()
        .enumerate()
        .map(|(i, &f)| run(&format!("b{i}.out"), f, 10))
        .collect();
    let svg = |args: &mut assert_cmd::Command| {
        String::from_utf8(run_ok(args.args(["--minwidth", "0"])).stdout).unwrap()
    };
    // The runs summed into one profile a side: the sampling model calls the growth a change.
    let summed = svg(gmon_cmd()
        .args(["flame", "--diff", "--exe"])
        .arg(&prog)
        .arg(run("a.out", 30, 30))
        .arg(run("b.out", 39, 30)));
    let (r, b) = fill_of(&summed, "untracked_hot");
    assert!(r > b, "summed: a change, red; got rgb({r},_,{b})");
    assert!(summed.contains("sampling noise times 2"), "{summed}");
    // The runs as runs: their spread says the growth is noise, drawn grey; the subtitle names
    // the model and the number of runs.
    let runs = svg(gmon_cmd()
        .args(["flame", "--exe"])
        .arg(&prog)
        .arg("--base")
        .args(&base)
        .arg("--new")
        .args(&new));
    assert_eq!(fill_of(&runs, "untracked_hot"), (200, 200), "{runs}");
    assert!(
        runs.contains("run-to-run spread measured between 3 runs a side (dispersion "),
        "{runs}"
    );
    assert!(runs.contains("grey = within noise"), "{runs}");
    // The tooltip says the verdict of the several-runs test.
    let title = &runs[runs.find("<title>untracked_hot (").unwrap()..];
    assert!(
        title[..title.find("</title>").unwrap()].ends_with(": within noise"),
        "{title}"
    );
    // --diff with --base/--new is the same graph; one operand without them is refused.
    let with_diff = svg(gmon_cmd()
        .args(["flame", "--diff", "--exe"])
        .arg(&prog)
        .arg("--base")
        .args(&base)
        .arg("--new")
        .args(&new));
    assert_eq!(with_diff, runs);
}

/// Issue 12: a profile of an earlier build of the same program (one small function added
/// before the others) is refused: its arcs' callee addresses no longer follow a call.
#[test]
fn a_profile_of_an_earlier_build_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let src = |extra: &str| {
        format!(
            "#include <stdio.h>\nstatic volatile long sink;\n{extra}\
             __attribute__((noinline)) long leaf(long x) {{ for (int i = 0; i < 1000; i++) \
             sink += x * i; return sink; }}\n\
             __attribute__((noinline)) long mid(long x) {{ return leaf(x) + leaf(x + 1); }}\n\
             int main(void) {{ long s = 0; for (long i = 0; i < 20000; i++) s += mid(i); \
             printf(\"%ld\\n\", s); return 0; }}\n"
        )
    };
    let build = |code: &str| -> bool {
        std::fs::write(tmp.path().join("p.c"), code).unwrap();
        Command::new("gcc")
            .args(["-pg", "-O1", "-o", "prog", "p.c"])
            .current_dir(tmp.path())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !build(&src("")) {
        return common::skip("a_profile_of_an_earlier_build_is_refused", "gcc -pg failed");
    }
    let run = Command::new(tmp.path().join("prog"))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(run.status.success());
    let (ok, err) = gmon_in(
        tmp.path(),
        &["flame".as_ref(), "prog".as_ref(), "gmon.out".as_ref()],
    );
    assert!(ok, "its own build is accepted: {err}");
    assert!(build(&src(
        "__attribute__((noinline)) long extra(long y) { for (int i = 0; i < 50; i++) sink ^= y + i; \
         return sink; }\n"
    )));
    let (ok, err) = gmon_in(
        tmp.path(),
        &["flame".as_ref(), "prog".as_ref(), "gmon.out".as_ref()],
    );
    assert!(!ok, "the earlier build's profile was accepted");
    assert!(err.contains("failed check: arc callees"), "{err}");
}
