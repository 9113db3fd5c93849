//! Tests of the pprof writer: field numbers, the invariants Go's pprof checks, totals, calls.

use crate::common;

use std::collections::BTreeMap;
use std::io::Read;

use crate::common::{case_dir, gmon, testdata_cases};
use gmon_tools::model::{Executable, FunctionInfo, WeightedCallGraph, estimate_stacks};
use gmon_tools::pprof::proto::{Function, Line, Profile, ValueType};
use gmon_tools::pprof::{PprofOptions, build_profile, check_valid, encode_gzip};
use prost::Message;

pub(crate) fn decode_gz(bytes: &[u8]) -> Profile {
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip magic");
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut raw)
        .unwrap();
    Profile::decode(raw.as_slice()).unwrap()
}

#[test]
fn field_numbers_match_profile_proto() {
    // Function: id=1 name=2 system_name=3 filename=4 start_line=5, all varints.
    let f = Function {
        id: 7,
        name: 1,
        system_name: 2,
        filename: 3,
        start_line: 4,
    };
    assert_eq!(
        f.encode_to_vec(),
        [0x08, 7, 0x10, 1, 0x18, 2, 0x20, 3, 0x28, 4]
    );
    let l = Line {
        function_id: 5,
        line: 6,
        column: 7,
    };
    assert_eq!(l.encode_to_vec(), [0x08, 5, 0x10, 6, 0x18, 7]);
    let p = Profile {
        string_table: vec![String::new(), "x".into()],
        period_type: Some(ValueType { r#type: 1, unit: 1 }),
        period: 3,
        comment: vec![1],
        default_sample_type: 1,
        doc_url: 1,
        time_nanos: 2,
        ..Profile::default()
    };
    let bytes = p.encode_to_vec();
    // string_table = 6 (length-delimited: tag 0x32), period_type = 11 (0x5a), period = 12 (0x60),
    // comment = 13 (packed: 0x6a), default_sample_type = 14 (0x70), doc_url = 15 (0x78),
    // time_nanos = 9 (0x48).
    for tag in [0x32u8, 0x5a, 0x60, 0x6a, 0x70, 0x78, 0x48] {
        assert!(bytes.contains(&tag), "tag {tag:#x} missing in {bytes:02x?}");
    }
    assert_eq!(Profile::decode(bytes.as_slice()).unwrap(), p);
}

fn sample_graph() -> (WeightedCallGraph, Vec<FunctionInfo>) {
    let mut g = WeightedCallGraph::new();
    let main = g.add_node("main", 1);
    let a = g.add_node("a", 0);
    let b = g.add_node("ns::b(int)", 3);
    let f = g.add_node("f", 8);
    g.add_calls(main, a, 1).unwrap();
    g.add_calls(main, b, 1).unwrap();
    g.add_calls(a, f, 3).unwrap();
    g.add_calls(b, f, 1).unwrap();
    g.add_calls(f, f, 5).unwrap();
    g.set_outside_samples(2);
    let infos = [
        ("main", 0x1000),
        ("a", 0x1100),
        ("_ZN2ns1bEi", 0x1200),
        ("f", 0x1300),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(sys, addr))| FunctionInfo {
        name: String::new(),
        system_name: sys.into(),
        address: Some(addr),
        file: Some("./t.c".into()),
        start_line: 10 + i as u32,
        ..FunctionInfo::default()
    })
    .collect();
    (g, infos)
}

fn build(g: &WeightedCallGraph, infos: &[FunctionInfo]) -> Vec<u8> {
    let stacks = estimate_stacks(g).unwrap();
    let exe = Executable {
        path: "/tmp/prog".into(),
        build_id: Some(gmon_format::merge::ExecutableId(vec![0xab, 0xcd])),
        encoding: gmon_format::Encoding {
            endian: gmon_format::Endian::Little,
            ptr_width: gmon_format::PtrWidth::Eight,
        },
        code: vec![(0x1000, 0x2000)],
        text: vec![gmon_tools::model::TextSegment {
            address: 0x1000,
            size: 0x1000,
            file_offset: 0x1000,
        }],
    };
    let mut opts = PprofOptions::default();
    opts.prof_rate = 100;
    let p = build_profile(g, &stacks, infos, Some(&exe), &opts).unwrap();
    encode_gzip(&p).unwrap()
}

#[test]
fn profile_is_valid_deterministic_and_keeps_totals() {
    let (g, infos) = sample_graph();
    let bytes = build(&g, &infos);
    assert_eq!(bytes, build(&g, &infos), "same input, same bytes");
    let p = decode_gz(&bytes);
    check_valid(&p).unwrap();
    let s = |i: i64| p.string_table[i as usize].as_str();
    let types: Vec<(&str, &str)> = p
        .sample_type
        .iter()
        .map(|v| (s(v.r#type), s(v.unit)))
        .collect();
    assert_eq!(
        types,
        [
            ("samples", "count"),
            ("cpu", "nanoseconds"),
            ("calls", "count")
        ]
    );
    assert_eq!(s(p.default_sample_type), "cpu");
    assert_eq!(p.period, 10_000_000);
    assert!(
        p.comment
            .iter()
            .any(|&c| s(c).contains("stacks estimated from call counts"))
    );
    assert!(
        p.comment
            .iter()
            .any(|&c| s(c).starts_with("2 histogram samples outside"))
    );
    // Flat (leaf) samples per function equal the graph's self samples.
    let fname: BTreeMap<u64, &str> = p.function.iter().map(|f| (f.id, s(f.name))).collect();
    let loc_fn: BTreeMap<u64, u64> = p
        .location
        .iter()
        .map(|l| (l.id, l.line[0].function_id))
        .collect();
    let mut flat: BTreeMap<&str, i64> = BTreeMap::new();
    let mut calls: BTreeMap<(&str, &str), i64> = BTreeMap::new();
    for smp in &p.sample {
        let names: Vec<&str> = smp.location_id.iter().map(|l| fname[&loc_fn[l]]).collect();
        if smp.value[2] != 0 {
            assert_eq!(&smp.value[..2], &[0, 0], "call samples carry no time");
            assert_eq!(names.len(), 2);
            calls.insert((names[1], names[0]), smp.value[2]);
        } else {
            assert_eq!(smp.value[1], smp.value[0] * p.period);
            *flat.entry(names[0]).or_insert(0) += smp.value[0];
        }
    }
    assert_eq!(
        flat,
        BTreeMap::from([("main", 1), ("ns::b(int)", 3), ("f", 8)])
    );
    assert_eq!(calls[&("a", "f")], 3);
    assert_eq!(calls[&("f", "f")], 5);
    assert_eq!(calls.len(), 5);
    // Names, system names, files and lines.
    let b = p
        .function
        .iter()
        .find(|f| s(f.name) == "ns::b(int)")
        .unwrap();
    assert_eq!(s(b.system_name), "_ZN2ns1bEi");
    assert_eq!(s(b.filename), "./t.c");
    assert_eq!(b.start_line, 12);
    let m = &p.mapping[0];
    assert_eq!(
        (m.id, s(m.filename), s(m.build_id)),
        (1, "/tmp/prog", "abcd")
    );
    assert!(m.has_functions && m.has_filenames && m.has_line_numbers);
    let f_loc = p
        .location
        .iter()
        .find(|l| fname[&l.line[0].function_id] == "f")
        .unwrap();
    assert_eq!((f_loc.address, f_loc.mapping_id), (0x1300, 1));
}

#[test]
fn check_valid_catches_what_go_refuses() {
    let (g, infos) = sample_graph();
    let good = decode_gz(&build(&g, &infos));
    let mut p = good.clone();
    p.string_table[0] = "x".into();
    assert!(check_valid(&p).is_err());
    let mut p = good.clone();
    p.function[1].id = p.function[0].id;
    assert!(check_valid(&p).is_err());
    let mut p = good.clone();
    p.location[0].id = 0;
    assert!(check_valid(&p).is_err());
    let mut p = good.clone();
    p.sample[0].value.pop();
    assert!(check_valid(&p).is_err());
    let mut p = good.clone();
    p.sample[0].location_id.push(999);
    assert!(check_valid(&p).is_err());
    let mut p = good;
    p.location[0].line[0].function_id = 999;
    assert!(check_valid(&p).is_err());
}

// ---- On the real testdata profiles -------------------------------------------------------

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_binary::Image;
use gmon_tools::gprof::{AnalysisBuilder, AnalysisOptions, SymbolTable, SymtabOptions};
use gmon_tools::model::load;

/// Runs `gmon pprof` through the binary and returns the written bytes.
pub(crate) fn gmon_pprof(dir: &Path, out: &Path) -> Vec<u8> {
    let o = gmon()
        .args(["pprof", "--exe"])
        .arg(dir.join("prog"))
        .arg(dir.join("gmon.out"))
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}: {}",
        dir.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read(out).unwrap()
}

#[test]
fn testdata_profiles_are_valid_and_flat_equals_self_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = testdata_cases();
    assert!(cases.len() >= 10, "testdata/cases is missing");
    for dir in cases {
        let out = tmp.path().join("p.pb.gz");
        let bytes = gmon_pprof(&dir, &out);
        assert_eq!(
            bytes,
            gmon_pprof(&dir, &out),
            "{}: same input, same bytes",
            dir.display()
        );
        let p = decode_gz(&bytes);
        check_valid(&p).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let l = load(Some(&dir.join("prog")), &[dir.join("gmon.out")]).unwrap();
        // Flat per function id (leaf location's function, the last of its lines: inlined
        // functions come first) == the graph's self samples.
        let s = |i: i64| p.string_table[i as usize].as_str();
        let loc_fn: BTreeMap<u64, u64> = p
            .location
            .iter()
            .map(|l| (l.id, l.line.last().unwrap().function_id))
            .collect();
        let fn_name: BTreeMap<u64, &str> = p
            .function
            .iter()
            .map(|f| (f.id, s(f.system_name)))
            .collect();
        let mut flat: BTreeMap<&str, u64> = BTreeMap::new();
        for smp in &p.sample {
            if smp.value[0] > 0 {
                *flat
                    .entry(fn_name[&loc_fn[&smp.location_id[0]]])
                    .or_insert(0) += smp.value[0] as u64;
            }
        }
        let mut expected: BTreeMap<&str, u64> = BTreeMap::new();
        for (node, info) in l.graph.nodes().iter().zip(&l.functions) {
            if node.self_samples > 0 {
                *expected.entry(info.system_name.as_str()).or_insert(0) += node.self_samples;
            }
        }
        assert_eq!(flat, expected, "{}", dir.display());
        // cpu per function == gprof's credit in nanoseconds (rounded once per function).
        let mut cpu: BTreeMap<&str, i64> = BTreeMap::new();
        for smp in &p.sample {
            if smp.value[1] > 0 {
                *cpu.entry(fn_name[&loc_fn[&smp.location_id[0]]])
                    .or_insert(0) += smp.value[1];
            }
        }
        let profile = common::read(&dir.join("gmon.out"));
        let a = common::views_analysis(&dir.join("prog"), profile);
        let mut credit: BTreeMap<&str, i64> = BTreeMap::new();
        for f in a.functions() {
            let ns = (f.self_ticks * 1e9 / f64::from(a.hz())).round() as i64;
            if ns > 0 {
                *credit.entry(f.name).or_insert(0) += ns;
            }
        }
        assert_eq!(cpu, credit, "{}", dir.display());
        // One mapping per code segment of the executable, each named from it with its build
        // id; every location of a function in one of them, at an address inside it.
        assert!(!p.mapping.is_empty(), "{}", dir.display());
        for m in &p.mapping {
            assert!(s(m.filename).ends_with("prog"), "{}", dir.display());
            assert_eq!(
                s(m.build_id).len(),
                40,
                "{}: GNU build id (sha1)",
                dir.display()
            );
            assert!(m.memory_start < m.memory_limit, "{}: {m:?}", dir.display());
        }
        for l in &p.location {
            if s(fn_of_id(&p, l.line.last().unwrap().function_id)).starts_with("<cycle") {
                continue;
            }
            let m = p.mapping.iter().find(|m| m.id == l.mapping_id);
            assert!(
                m.is_some_and(|m| m.memory_start <= l.address && l.address < m.memory_limit),
                "{}: location {l:?} outside its mapping {m:?}",
                dir.display()
            );
        }
    }
}

/// The name of the function with id `id`.
fn fn_of_id(p: &Profile, id: u64) -> i64 {
    p.function.iter().find(|f| f.id == id).map_or(0, |f| f.name)
}

/// Issue 12: a `calls/count` sample [callee, caller] carries exactly the call graph's count for
/// that pair, self-recursion included (it was counted twice: the arc and the function's
/// self-calls again).
#[test]
fn testdata_call_counts_equal_the_call_graphs_arcs() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = testdata_cases();
    assert!(cases.len() >= 10, "testdata/cases is missing");
    let mut self_arcs = 0;
    for dir in cases {
        let out = tmp.path().join("p.pb.gz");
        let p = decode_gz(&gmon_pprof(&dir, &out));
        let s = |i: i64| p.string_table[i as usize].clone();
        let loc_fn: BTreeMap<u64, u64> = p
            .location
            .iter()
            .map(|l| (l.id, l.line[0].function_id))
            .collect();
        let fn_name: BTreeMap<u64, String> = p
            .function
            .iter()
            .map(|f| (f.id, s(f.system_name)))
            .collect();
        let mut got: BTreeMap<(String, String), i64> = BTreeMap::new();
        for smp in &p.sample {
            if smp.value[2] != 0 {
                assert_eq!(smp.location_id.len(), 2, "{}", dir.display());
                let callee = fn_name[&loc_fn[&smp.location_id[0]]].clone();
                let caller = fn_name[&loc_fn[&smp.location_id[1]]].clone();
                *got.entry((caller, callee)).or_insert(0) += smp.value[2];
            }
        }
        let profile = common::read(&dir.join("gmon.out"));
        let a = common::views_analysis(&dir.join("prog"), profile);
        let name: BTreeMap<usize, String> = a
            .functions()
            .map(|f| (f.index, f.name.to_owned()))
            .collect();
        let mut want: BTreeMap<(String, String), i64> = BTreeMap::new();
        for arc in a.arcs() {
            if arc.count == 0 {
                continue;
            }
            if let (Some(p), Some(c)) = (name.get(&arc.parent), name.get(&arc.child)) {
                if p == c {
                    self_arcs += 1;
                }
                *want.entry((p.clone(), c.clone())).or_insert(0) += arc.count as i64;
            }
        }
        assert_eq!(got, want, "{}", dir.display());
    }
    assert!(
        self_arcs > 0,
        "the testdata has self-recursive arcs to check"
    );
}

#[test]
fn testdata_functions_have_dwarf_files_lines_and_both_names() {
    let tmp = tempfile::tempdir().unwrap();
    let p = decode_gz(&gmon_pprof(
        &case_dir("cxx-pie-O0"),
        &tmp.path().join("p.pb.gz"),
    ));
    let s = |i: i64| p.string_table[i as usize].as_str();
    let helper = p
        .function
        .iter()
        .find(|f| s(f.name).contains("helper(unsigned long)"))
        .unwrap();
    assert!(
        s(helper.system_name).starts_with("_Z"),
        "{}",
        s(helper.system_name)
    );
    assert!(
        s(helper.filename).ends_with(".cpp"),
        "{}",
        s(helper.filename)
    );
    assert!(helper.start_line > 0);
    // Its callers' frames sit at its start, on its first line.
    let loc = p
        .location
        .iter()
        .find(|l| l.line[0].function_id == helper.id && l.line[0].line == helper.start_line)
        .unwrap();
    assert!(loc.address > 0 && loc.mapping_id == 1);
}

/// Go's `pprof`, from $PPROF or PATH.
pub(crate) fn find_pprof() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PPROF") {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("pprof"))
        .find(|p| p.is_file())
}

#[test]
fn go_pprof_accepts_our_profiles() {
    let Some(pprof) = find_pprof() else {
        common::skip(
            "go_pprof_accepts_our_profiles",
            "Go's pprof is not on PATH and $PPROF is unset (.ci/run builds it into \
             target/tools)",
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for name in ["cycle-pie-O0", "cxx-nopie-O0", "recurse-pie-O0"] {
        let dir = case_dir(name);
        let out = tmp.path().join(format!("{name}.pb.gz"));
        gmon_pprof(&dir, &out);
        let run = |args: &[&str]| -> String {
            let o = Command::new(&pprof).args(args).arg(&out).output().unwrap();
            assert!(
                o.status.success(),
                "pprof {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        run(&["-traces"]);
        let raw = run(&["-raw"]);
        assert!(raw.contains("stacks estimated from call counts"), "{raw}");
        run(&["-sample_index=calls", "-top"]);
        let has_dot = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|d| d.join("dot").is_file());
        if has_dot {
            let svg = tmp.path().join("g.svg");
            run(&["-svg", "-output", svg.to_str().unwrap()]);
            assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
        } else {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "pprof -svg not run: Graphviz's dot is not on PATH"
            );
        }
        // -top flat per function, printed as gprof prints self seconds (two decimals), is
        // gprof's flat profile.
        let top = run(&[
            "-top",
            "-nodecount=100000",
            "-nodefraction=0",
            "-edgefraction=0",
            "-unit=ns",
        ]);
        // Every frame keeps its name through pprof's own clean-up of names.
        assert!(
            !top.contains("<unknown>"),
            "{name}: a frame lost its name\n{top}"
        );
        if name == "cycle-pie-O0" {
            assert!(top.contains("<cycle 1>"), "{top}");
        }
        let profile = common::read(&dir.join("gmon.out"));
        let a = common::views_analysis(&dir.join("prog"), profile);
        let mut credit: BTreeMap<String, f64> = BTreeMap::new();
        for f in a.functions().filter(|f| f.self_ticks > 0.0) {
            *credit.entry(f.demangled()).or_insert(0.0) += f.self_seconds;
        }
        let expected: BTreeMap<String, String> = credit
            .into_iter()
            .map(|(n, s)| (n, format!("{s:.2}")))
            .collect();
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let mut in_table = false;
        for line in top.lines() {
            if line.trim_start().starts_with("flat") {
                in_table = true;
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            if !in_table || f.len() < 6 {
                continue;
            }
            let Some(ns) = f[0].strip_suffix("ns") else {
                continue;
            };
            let secs = ns.parse::<f64>().unwrap() / 1e9;
            seen.insert(f[5..].join(" "), format!("{secs:.2}"));
        }
        assert_eq!(
            seen, expected,
            "{name}: pprof -top flat vs gprof self seconds\n{top}"
        );
    }
}

#[test]
fn exact_stacks_are_labelled_as_such() {
    let (g, infos) = sample_graph();
    let mut stacks = estimate_stacks(&g).unwrap();
    stacks.source = gmon_tools::model::StackSource::Exact;
    let p = build_profile(&g, &stacks, &infos, None, &PprofOptions::default()).unwrap();
    check_valid(&p).unwrap();
    let comments: Vec<&str> = p
        .comment
        .iter()
        .map(|&c| p.string_table[c as usize].as_str())
        .collect();
    assert!(
        comments[0].starts_with("exact sampled stacks"),
        "{comments:?}"
    );
    assert!(
        !comments.iter().any(|c| c.contains("estimated")),
        "{comments:?}"
    );
    // Without an executable there is no mapping, and locations point to none.
    assert!(p.mapping.is_empty());
    assert!(p.location.iter().all(|l| l.mapping_id == 0));
}

#[test]
fn testdata_leaf_samples_are_split_over_histogram_bins_and_gprof_l_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = case_dir("multifile-pie-O0");
    let p = decode_gz(&gmon_pprof(&dir, &tmp.path().join("p.pb.gz")));
    let l = load(Some(&dir.join("prog")), &[dir.join("gmon.out")]).unwrap();
    let s = |i: i64| p.string_table[i as usize].as_str();
    let loc: BTreeMap<u64, &gmon_tools::pprof::proto::Location> =
        p.location.iter().map(|l| (l.id, l)).collect();
    let file_of: BTreeMap<u64, &str> = p.function.iter().map(|f| (f.id, s(f.filename))).collect();
    let mut more_than_one_address = 0;
    for (node, info) in l.graph.nodes().iter().zip(&l.functions) {
        if node.self_samples == 0 {
            continue;
        }
        let f = p
            .function
            .iter()
            .find(|f| {
                s(f.system_name) == info.system_name
                    && s(f.filename) == info.file.as_deref().unwrap()
            })
            .unwrap();
        // Leaf samples of this function at its histogram pieces (same-named static functions
        // of other files have other addresses): all of its samples are there.
        let pieces: Vec<u64> = info.histogram.iter().map(|b| b.address).collect();
        let mut by_addr: BTreeMap<u64, i64> = BTreeMap::new();
        for smp in p.sample.iter().filter(|x| x.value[0] > 0) {
            let leaf = loc[&smp.location_id[0]];
            let named = p
                .function
                .iter()
                .any(|g| g.id == leaf.line[0].function_id && g.name == f.name);
            if named && pieces.contains(&leaf.address) {
                assert!(leaf.address >= info.address.unwrap());
                *by_addr.entry(leaf.address).or_insert(0) += smp.value[0];
            }
        }
        let total: i64 = by_addr.values().sum();
        assert_eq!(total as u64, node.self_samples, "{}", info.system_name);
        if by_addr.len() > 1 {
            more_than_one_address += 1;
        }
    }
    // The samples are at the bins, not at one address per function or per line.
    assert!(more_than_one_address >= 3, "{more_than_one_address}");
    // cpu per source line == the gprof engine's per-line credit (gprof -l) in nanoseconds, up
    // to the nanosecond rounding of each stack's share.
    let image = Image::open(&dir.join("prog")).unwrap();
    let mut symtab = SymbolTable::from_image(&image, &SymtabOptions::default(), "test").unwrap();
    let mut info = gmon_binary::dwarf::LineInfo::from_elf(&image.data);
    gmon_tools::gprof::analysis::lines::attach_function_sources(&mut symtab, &mut info);
    let lt =
        gmon_tools::gprof::analysis::lines::line_symbol_table(&symtab, &mut info, &image).unwrap();
    let mut b = AnalysisBuilder::with_symtab(lt, &AnalysisOptions::default());
    let profile = common::read(&dir.join("gmon.out"));
    b.add_profile("gmon.out", &profile).unwrap();
    let la = b.finish(Some(&image)).unwrap();
    let mut cpu_at: BTreeMap<(String, i64), i64> = BTreeMap::new();
    for smp in p.sample.iter().filter(|x| x.value[1] > 0) {
        let line = loc[&smp.location_id[0]].line[0];
        let file = file_of[&line.function_id]
            .trim_start_matches("./")
            .to_owned();
        *cpu_at.entry((file, line.line)).or_insert(0) += smp.value[1];
    }
    let mut want_at: BTreeMap<(String, i64), f64> = BTreeMap::new();
    for lf in la.functions().filter(|f| f.self_ticks > 0.0) {
        let sym = &la.symtab.symbols[lf.index];
        let file = sym
            .file
            .map(|f| la.symtab.files[f].name.trim_start_matches("./").to_owned())
            .unwrap();
        *want_at.entry((file, i64::from(sym.line))).or_insert(0.0) +=
            lf.self_ticks * 1e9 / f64::from(la.hz());
    }
    assert!(want_at.len() >= 5);
    for (line, want) in &want_at {
        let got = cpu_at.get(line).copied().unwrap_or(0) as f64;
        assert!(
            (got - want).abs() < 1000.0,
            "line {line:?}: {got} ns, gprof -l {want} ns"
        );
    }
    assert_eq!(cpu_at.len(), want_at.len(), "{cpu_at:?}");
}

#[test]
fn help_says_how_call_counts_are_kept() {
    let out = gmon().args(["pprof", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("calls/count") && text.contains("-sample_index=calls"),
        "{text}"
    );
    let out = gmon().args(["flame", "-h"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("stacks estimated from call counts"), "{text}");
}

/// `gmon pprof` (and `gmon flame`, which loads the same way) reads an executable whose DWARF
/// was moved to a separate file as GNU gprof does: following `.gnu_debuglink`, so functions
/// keep their source files and lines.
#[test]
fn separate_debug_file_gives_the_same_locations() {
    let case = case_dir("multifile-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("linked");
    std::fs::create_dir(&d).unwrap();
    for f in ["prog", "gmon.out"] {
        std::fs::copy(case.join(f), d.join(f)).unwrap();
    }
    let tool = |t: &str, args: &[&str]| {
        std::process::Command::new(t)
            .current_dir(&d)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    assert!(
        tool("objcopy", &["--only-keep-debug", "prog", "prog.debug"])
            && tool("strip", &["--strip-debug", "prog"])
            && tool("objcopy", &["--add-gnu-debuglink=prog.debug", "prog"]),
        "objcopy/strip (binutils) are needed for this test"
    );
    let places = |p: &Profile| -> Vec<(String, String, i64)> {
        let s = |i: i64| p.string_table[i as usize].clone();
        let mut v: Vec<_> = p
            .function
            .iter()
            .map(|f| (s(f.name), s(f.filename), f.start_line))
            .collect();
        v.sort();
        v
    };
    let want = decode_gz(&gmon_pprof(&case, &tmp.path().join("a.pb.gz")));
    let got = decode_gz(&gmon_pprof(&d, &tmp.path().join("b.pb.gz")));
    let want = places(&want);
    assert!(want.iter().filter(|w| !w.1.is_empty()).count() >= 3);
    assert_eq!(places(&got), want);
    // Without the debug file, the file names are gone: the link was really followed.
    std::fs::remove_file(d.join("prog.debug")).unwrap();
    let bare = decode_gz(&gmon_pprof(&d, &tmp.path().join("c.pb.gz")));
    assert_ne!(places(&bare), want);
}

/// Issue 12: without -o, `gmon pprof` writes profile.pb.gz and says so on stderr; with -o it
/// says nothing.
#[test]
fn the_default_output_name_is_announced() {
    let c = case_dir("recurse-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let o = gmon()
        .current_dir(tmp.path())
        .arg("pprof")
        .arg(c.join("prog"))
        .arg(c.join("gmon.out"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("wrote profile.pb.gz"), "{err}");
    assert!(tmp.path().join("profile.pb.gz").is_file());
    let named = tmp.path().join("x.pb.gz");
    let o = gmon()
        .arg("pprof")
        .arg(c.join("prog"))
        .arg(c.join("gmon.out"))
        .arg("-o")
        .arg(&named)
        .output()
        .unwrap();
    assert!(o.status.success() && o.stderr.is_empty());
    assert!(named.is_file());
}

/// Compressed bytes never go to a terminal (gzip's rule): `-o -` on a terminal is refused
/// before any work, and the same command into a pipe writes the profile.
#[test]
fn gzip_bytes_are_not_written_to_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        common::skip(
            "gzip_bytes_are_not_written_to_a_terminal",
            "script (util-linux) is not installed",
        );
        return;
    }
    let dir = case_dir("cycle-pie-O0");
    let gmon_bin = assert_cmd::cargo::cargo_bin("gmon");
    let line = format!(
        "{} pprof --exe {} {} -o -; echo status=$?",
        gmon_bin.display(),
        dir.join("prog").display(),
        dir.join("gmon.out").display()
    );
    // `script` runs the command with a pseudo-terminal as its standard output.
    let o = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("status=1"), "{text}");
    assert!(
        text.contains("refusing to write compressed data to a terminal (standard output)"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1f}'),
        "gzip's magic reached the terminal"
    );
    // Into a pipe, the same command writes the gzip'd profile.
    let o = gmon()
        .args(["pprof", "--exe"])
        .arg(dir.join("prog"))
        .arg(dir.join("gmon.out"))
        .args(["-o", "-"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(&o.stdout[..2], &[0x1f, 0x8b]);
}
