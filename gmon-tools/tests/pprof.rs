//! Tests of the pprof writer: field numbers, the invariants Go's pprof checks, totals, calls.

use std::collections::BTreeMap;
use std::io::Read;

use gmon_tools::flame::{CallGraph, estimate_stacks};
use gmon_tools::pprof::proto::{Function, Line, Profile, ValueType};
use gmon_tools::pprof::{
    Executable, FunctionInfo, PprofOptions, build_profile, check_valid, encode_gzip,
};
use prost::Message;

fn decode_gz(bytes: &[u8]) -> Profile {
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

fn sample_graph() -> (CallGraph, Vec<FunctionInfo>) {
    let mut g = CallGraph::new();
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
    })
    .collect();
    (g, infos)
}

fn build(g: &CallGraph, infos: &[FunctionInfo]) -> Vec<u8> {
    let stacks = estimate_stacks(g).unwrap();
    let exe = Executable {
        path: "/tmp/prog".into(),
        build_id: Some("abcd".into()),
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
