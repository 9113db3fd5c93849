//! `gmon diff` through the real binary and the library, on testdata profiles.

use std::path::{Path, PathBuf};

use crate::common::{case_dir, gmon, read, run_ok, write_main_object_sidecar};
use gmon_binary::Image;
use gmon_format::{Profile, Record};
use gmon_tools::diff::{Status, diff_functions, diff_ranges};
use gmon_tools::gprof::{Analysis, AnalysisOptions};

fn case() -> PathBuf {
    case_dir("recurse-pie-O0")
}

fn analysis(profile: Profile) -> Analysis {
    let image = Image::open(&case().join("prog")).unwrap();
    Analysis::new(&image, &[profile], &AnalysisOptions::default()).unwrap()
}

/// Runs `gmon diff`, which exits 0 (no change) or 1 (changes), never 2 (trouble) here.
fn diff_ok(cmd: &mut assert_cmd::Command) -> std::process::Output {
    let o = cmd.output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn gmon_diff(args: &[&str], base: &Path, new: &Path) -> String {
    let o = diff_ok(gmon().arg("diff").args(args).arg(base).arg(new));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn functions_with_different_totals_are_compared_raw_and_normalized() {
    let base = read(&case().join("gmon.out"));
    let new = read(&case().join("gmon.3.out"));
    let (ab, an) = (analysis(base.clone()), analysis(new.clone()));
    let d = diff_functions(&ab, &an, "base", "new");
    assert_ne!(ab.total_samples(), an.total_samples());
    assert!(d.normalized);
    assert_eq!(
        d.scale,
        ab.total_samples() as f64 / an.total_samples() as f64
    );
    // Each function's numbers are gprof's.
    for f in an.functions() {
        if let Some(e) = d.entries.iter().find(|e| e.name == f.demangled()) {
            assert_eq!(e.new.calls, f.calls);
            assert_eq!(e.new.self_samples, f.self_ticks);
        }
    }
    // Sorted by the normalized change, largest first.
    let keys: Vec<f64> = d
        .entries
        .iter()
        .map(|e| e.delta_self_samples_normalized.abs())
        .collect();
    assert!(keys.windows(2).all(|w| w[0] >= w[1]), "{keys:?}");
    let spin = d.entries.iter().find(|e| e.name == "spin").unwrap();
    assert!(spin.new.self_samples > spin.base.self_samples);
    assert_eq!(
        spin.delta_calls,
        i128::from(spin.new.calls) - i128::from(spin.base.calls)
    );
}

#[test]
fn removed_and_added_functions() {
    let base = read(&case().join("gmon.out"));
    let image = Image::open(&case().join("prog")).unwrap();
    let a = Analysis::new(
        &image,
        std::slice::from_ref(&base),
        &AnalysisOptions::default(),
    )
    .unwrap();
    let fib = a.functions().find(|f| f.name == "fib").unwrap();
    let (lo, hi) = (fib.addr, fib.end_addr);
    // NEW: every arc into fib dropped, so fib has neither samples nor calls there.
    let mut new = base.clone();
    new.records
        .retain(|r| !matches!(r, Record::CallArc(x) if x.self_pc >= lo && x.self_pc < hi));
    let d = diff_functions(&analysis(base.clone()), &analysis(new.clone()), "b", "n");
    let e = d.entries.iter().find(|e| e.name == "fib").unwrap();
    assert_eq!(e.status, Status::Removed);
    let d = diff_functions(&analysis(new), &analysis(base), "n", "b");
    assert_eq!(
        d.entries.iter().find(|e| e.name == "fib").unwrap().status,
        Status::Added
    );
}

#[test]
fn identical_profiles_show_no_change() {
    let p = case().join("gmon.out");
    let d = diff_ranges(&read(&p), &read(&p), "a", "a");
    assert!(!d.normalized);
    assert!(
        d.entries
            .iter()
            .all(|e| e.delta_self_samples == 0.0 && e.delta_calls == 0)
    );
    assert!(d.entries.iter().all(|e| e.status == Status::Both));
    let text = gmon_diff(&["--exe", case().join("prog").to_str().unwrap()], &p, &p);
    assert!(text.contains("Total samples are equal"), "{text}");
}

#[test]
fn json_has_the_documented_fields() {
    let c = case();
    let out = gmon_diff(
        &["--json", "--exe", c.join("prog").to_str().unwrap()],
        &c.join("gmon.out"),
        &c.join("gmon.2.out"),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], 4);
    assert_eq!(v["granularity"], "function");
    for k in [
        "hz",
        "base",
        "new",
        "normalized",
        "scale",
        "sorted_by",
        "entries",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    let e = &v["entries"][0];
    for k in [
        "name",
        "address",
        "status",
        "base",
        "new",
        "delta_self_samples",
        "delta_self_samples_normalized",
        "relative_self",
        "relative_self_normalized",
        "delta_calls",
        "relative_calls",
    ] {
        assert!(e.get(k).is_some(), "missing entries[].{k}");
    }
    for k in ["self_samples", "self_seconds", "calls"] {
        assert!(e["base"].get(k).is_some(), "missing entries[].base.{k}");
    }
    // Without an executable: address ranges.
    let out = gmon_diff(&["--json"], &c.join("gmon.out"), &c.join("gmon.2.out"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["granularity"], "address-range");
}

#[test]
fn folded_lines_have_two_counts_that_add_up() {
    let c = case();
    let (b, n) = (c.join("gmon.out"), c.join("gmon.3.out"));
    let out = gmon_diff(
        &["--folded", "--exe", c.join("prog").to_str().unwrap()],
        &b,
        &n,
    );
    let (mut sb, mut sn) = (0u64, 0u64);
    for line in out.lines() {
        let mut parts = line.rsplitn(3, ' ');
        let new: u64 = parts.next().unwrap().parse().unwrap();
        let base: u64 = parts.next().unwrap().parse().unwrap();
        assert!(!parts.next().unwrap().is_empty());
        sb += base;
        sn += new;
    }
    // The estimated stacks carry every sample credited to a function.
    let whole = |p: &Path| {
        let a = analysis(read(p));
        let ticks: Vec<f64> = a.functions().map(|f| f.self_ticks).collect();
        gmon_tools::model::whole_samples(&ticks).iter().sum::<u64>()
    };
    assert_eq!((sb, sn), (whole(&b), whole(&n)));
    // Without an executable: one frame per address range.
    let out = gmon_diff(&["--folded"], &b, &n);
    assert!(
        out.lines()
            .all(|l| l.split(' ').count() == 3 && !l.contains(';')),
        "{out}"
    );
}

/// inferno's flame graph reads the differential folded lines (two counts per line) and draws
/// both profiles' frames.
#[test]
fn inferno_reads_the_differential_folded_output() {
    let c = case();
    let out = gmon_diff(
        &["--folded", "--exe", c.join("prog").to_str().unwrap()],
        &c.join("gmon.out"),
        &c.join("gmon.3.out"),
    );
    let mut opts = inferno::flamegraph::Options::default();
    opts.deterministic = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, out.lines(), &mut svg).unwrap();
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.contains("spin") && svg.contains("fact"));
    // Differential mode: titles carry the change ("…; +12.34%)").
    assert!(
        svg.contains("%; +") || svg.contains("%; -"),
        "not drawn as a differential graph"
    );
}

/// Issue 12: `gmon diff EXE BASE NEW` names the executable as gprof does, and means the same as
/// `--exe EXE`.
#[test]
fn the_executable_can_be_named_first_as_gprof_takes_it() {
    let (exe, b, n) = (
        case().join("prog"),
        case().join("gmon.out"),
        case().join("gmon.3.out"),
    );
    let first = diff_ok(gmon().arg("diff").arg(&exe).arg(&b).arg(&n));
    let flag = diff_ok(gmon().arg("diff").arg("--exe").arg(&exe).arg(&b).arg(&n));
    assert_eq!(first.stdout, flag.stdout);
    assert!(String::from_utf8_lossy(&first.stdout).contains("fib"));
    // Too many or too few operands, and an executable twice, are refused with the reason.
    for (args, says) in [
        (vec![exe.clone(), b.clone()], "takes two profiles"),
        (
            vec![exe.clone(), b.clone(), n.clone(), n.clone()],
            "no more were expected",
        ),
        (
            vec![b.clone(), n.clone(), exe.clone()],
            "is an executable, not a profile",
        ),
    ] {
        let o = gmon().arg("diff").args(&args).output().unwrap();
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let o = gmon()
        .arg("diff")
        .arg("--exe")
        .arg(&exe)
        .arg(&exe)
        .arg(&b)
        .arg(&n)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("and only once"));
}

/// Issue 12: a profile of another program is refused by diff with the check that failed, and
/// read with --force.
#[test]
fn diff_refuses_a_profile_of_another_program_unless_forced() {
    let exe = case().join("prog");
    let other = case_dir("cxx-pie-O0").join("gmon.out");
    let o = gmon()
        .arg("diff")
        .arg(&exe)
        .arg(&other)
        .arg(&other)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("failed check: arc"), "{err}");
    assert!(err.contains("--force"), "{err}");
    let forced = run_ok(
        gmon()
            .args(["diff", "--force"])
            .arg(&exe)
            .arg(&other)
            .arg(&other),
    );
    assert!(String::from_utf8_lossy(&forced.stderr).contains("--force"));
}

/// Issue 28: a NEW that is no profile at all is said in the one line every command prints
/// (`FILE: not a gmon.out profile: ...`), not as the list of every layout tried with a hint
/// about --new-exe; a NEW of another program keeps that hint.
#[test]
fn a_new_that_is_not_a_profile_is_said_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let text = tmp.path().join("passwd");
    std::fs::write(&text, "root:x:0:0:root:/root:/bin/bash\n".repeat(30)).unwrap();
    let (exe, base) = (case().join("prog"), case().join("gmon.out"));
    let o = gmon()
        .arg("diff")
        .arg(&exe)
        .arg(&base)
        .arg(&text)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "gmon: {}: not a gmon.out profile: ",
            text.display()
        )),
        "{err}"
    );
    assert!(
        !err.contains("--new-exe") && !err.contains("little-endian"),
        "{err}"
    );
    // The same words as gmon flame's for the same file.
    let flame = gmon().arg("flame").arg(&exe).arg(&text).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&flame.stderr), err);
    // A profile of another program is a matter of the executable: the hint stays.
    let other = case_dir("cxx-pie-O0").join("gmon.out");
    let o = gmon()
        .arg("diff")
        .arg(&exe)
        .arg(&base)
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("failed check") && err.contains("--new-exe"),
        "{err}"
    );
}

/// The fields spec/json.md lists in the table under `heading` (first column, in backticks).
fn spec_fields(spec: &str, heading: &str) -> std::collections::BTreeSet<String> {
    let start = spec.find(heading).expect("section in spec/json.md");
    let rest = &spec[start + heading.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

fn keys(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// Issue 12: `gmon diff --json` carries a schema version, and spec/json.md documents every field
/// of the output, and nothing the output lacks.
#[test]
fn json_schema_version_and_fields_are_the_spec() {
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/json.md"))
            .unwrap();
    let c = case();
    let out = gmon_diff(
        &["--json", c.join("prog").to_str().unwrap()],
        &c.join("gmon.out"),
        &c.join("gmon.3.out"),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], gmon_tools::diff::JSON_VERSION);
    assert!(spec.contains(&format!(
        "describes **version {}**",
        gmon_tools::diff::JSON_VERSION
    )));
    assert_eq!(keys(&v), spec_fields(&spec, "## Diff: top level"));
    assert_eq!(keys(&v["base"]), spec_fields(&spec, "## Diff: totals"));
    assert_eq!(
        keys(&v["entries"][0]),
        spec_fields(&spec, "## Diff: entries")
    );
    assert_eq!(
        keys(&v["entries"][0]["new"]),
        spec_fields(&spec, "## Diff: one side of an entry")
    );
}

/// Issue 11: a profile `gmon record` wrote names its executable in the runtime sidecar, so
/// `gmon diff` without an executable compares per function, as `--exe` does, not per range.
#[test]
fn the_executable_a_sidecar_records_is_used_without_exe() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = case().join("prog");
    let (b, n) = (tmp.path().join("base.out"), tmp.path().join("new.out"));
    std::fs::copy(case().join("gmon.out"), &b).unwrap();
    std::fs::copy(case().join("gmon.3.out"), &n).unwrap();
    let with_exe = gmon_diff(&["--exe", exe.to_str().unwrap()], &b, &n);
    let by_range = gmon_diff(&[], &b, &n);
    assert!(by_range.contains("per address range"), "{by_range}");

    write_main_object_sidecar(&b, &exe.display().to_string(), &[]);
    let recorded = gmon_diff(&[], &b, &n);
    assert_eq!(recorded, with_exe);
    assert!(recorded.contains("fib"), "{recorded}");
}

/// A profile with two address ranges (an arc into each): `a` samples in the first, `b` in the
/// second, `calls` into the second; written to `dir/name`.
fn two_ranges(dir: &Path, name: &str, a: u64, b: u64, calls: u64) -> PathBuf {
    use gmon_format::{CallArc, Dimension, Encoding, Histogram, ProfRate};
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records.push(Record::Histogram(Histogram {
        low_pc: 0x1000,
        high_pc: 0x1010,
        prof_rate: ProfRate(1000),
        dimension: Dimension::SECONDS,
        bins: vec![a, 0, b, 0],
    }));
    for (self_pc, count) in [(0x1000, 1), (0x1008, calls)] {
        p.records.push(Record::CallArc(CallArc {
            from_pc: 0x1000,
            self_pc,
            count,
        }));
    }
    let path = dir.join(name);
    let mut bytes = Vec::new();
    gmon_format::write(&p, &mut bytes).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

fn status(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let o = gmon().arg("diff").args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Issue 28: the exit status says change (1) or not (0) as diff(1), trouble is 2, and
/// --fail-above fails only on a growth beyond PCT points that is a change, not noise.
#[test]
fn exit_status_is_diffs_and_fail_above_gates_on_changes_only() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let base = two_ranges(d, "base", 500, 500, 7);
    let noise = two_ranges(d, "noise", 520, 480, 7);
    let grown = two_ranges(d, "grown", 650, 350, 7);
    let calls = two_ranges(d, "calls", 500, 500, 8);
    let os = |p: &PathBuf| p.as_os_str().to_owned();
    let run = |extra: &[&str], b: &PathBuf, n: &PathBuf| {
        let mut args: Vec<std::ffi::OsString> = extra.iter().map(Into::into).collect();
        args.extend([os(b), os(n)]);
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        status(&refs)
    };
    // Same calls, a 2-point move at 1000 samples a side: noise, exit 0.
    let (code, out, _) = run(&[], &base, &noise);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("0 changes.") && out.contains(" noise "),
        "{out}"
    );
    // A 15-point move: a change, exit 1.
    let (code, out, _) = run(&[], &base, &grown);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(" change "), "{out}");
    // The gate: 15 points grew, as a change; above 10 fails, above 20 does not.
    assert_eq!(run(&["--fail-above", "10"], &base, &grown).0, Some(1));
    assert_eq!(run(&["--fail-above", "20"], &base, &grown).0, Some(0));
    // A growth within noise never fails the gate, however low the threshold.
    assert_eq!(run(&["--fail-above", "0"], &base, &noise).0, Some(0));
    // A changed call count is a change (exit 1), but no growth of time for the gate.
    let (code, out, _) = run(&[], &base, &calls);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("change (calls)"), "{out}");
    assert_eq!(run(&["--fail-above", "0"], &base, &calls).0, Some(0));
    // Trouble: 2, with the reason.
    let (code, _, err) = run(&[], &base, &d.join("missing"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("missing"), "{err}");
    let (code, _, err) = run(&["--fail-above", "-1"], &base, &grown);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, _) = run(&["--no-such-option"], &base, &grown);
    assert_eq!(code, Some(2));
    // One profile a side assumes the runs' spread (spec/diff.md §2) and says so; a dispersion
    // below 1 would claim more precision than sampling gives.
    let (_, out, _) = run(&[], &base, &grown);
    assert!(out.contains("run-to-run dispersion of 2 assumed"), "{out}");
    let (_, out, _) = run(&["--dispersion", "1"], &base, &grown);
    assert!(out.contains("sampling noise alone"), "{out}");
    let (code, _, err) = run(&["--dispersion", "0.5"], &base, &grown);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--dispersion must be a factor of at least 1"),
        "{err}"
    );
}

/// Issue 28: several profiles per side are compared with their run-to-run spread, and the
/// output says which model ran.
#[test]
fn several_profiles_per_side_use_the_spread_between_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Runs that disagree among themselves by far more than sampling explains.
    let base: Vec<PathBuf> = [(400, 600), (600, 400), (500, 500)]
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| two_ranges(d, &format!("b{i}"), a, b, 1))
        .collect();
    let new: Vec<PathBuf> = [(550, 450), (700, 300), (600, 400)]
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| two_ranges(d, &format!("n{i}"), a, b, 1))
        .collect();
    let o = diff_ok(
        gmon()
            .args(["diff", "--json", "--base"])
            .args(&base)
            .arg("--new")
            .args(&new),
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["model"], "run-to-run");
    assert!(v["dispersion"].as_f64().unwrap() > 10.0, "{v}");
    assert_eq!(v["base"]["profiles"].as_array().unwrap().len(), 3);
    assert_eq!(v["base"]["samples"], 3000);
    for e in v["entries"].as_array().unwrap() {
        assert_eq!(e["verdict"], "within-noise", "{e}");
        assert!(e["delta_share_low"].as_f64() < Some(0.0), "{e}");
    }
    // The same samples summed into one profile a side: sampling noise alone calls it a change.
    let (bs, ns) = (
        two_ranges(d, "bsum", 1500, 1500, 3),
        two_ranges(d, "nsum", 1850, 1150, 3),
    );
    let o = diff_ok(gmon().arg("diff").arg("--json").arg(&bs).arg(&ns));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["model"], "sampling");
    assert_eq!(v["changes"], 2);
    // Operands and --base/--new do not mix, except for the executable.
    let o = gmon()
        .arg("diff")
        .arg(&bs)
        .arg("--base")
        .arg(&bs)
        .arg("--new")
        .arg(&ns)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an executable"));
}

/// Issue 28: `--help` teaches the verdicts, the models, the exit status and a CI gate.
#[test]
fn help_explains_verdicts_exit_status_and_a_gate() {
    let o = run_ok(gmon().args(["diff", "--help"]));
    let help = String::from_utf8_lossy(&o.stdout);
    for says in [
        "VERDICTS",
        "too few",
        "Holm",
        "EXIT STATUS",
        "2  trouble",
        "--fail-above 2",
        "--base",
    ] {
        assert!(help.contains(says), "{says}: {help}");
    }
}

/// Issue 28: two recorded runs are compared by their exact stacks, every object's samples
/// included: python3 spends its time in libpython, which the main executable's histogram (all
/// the comparison had before) does not see.
#[test]
fn recorded_profiles_compare_every_objects_samples() {
    let dir = tempfile::tempdir().unwrap();
    let script = "s=0\nfor i in range(1500000): s+=i*i%7\nprint(s)";
    let (a, b) = (dir.path().join("a.out"), dir.path().join("b.out"));
    for out in [&a, &b] {
        if crate::common::record("recorded_diff", out, &["python3", "-c", script]).is_none() {
            return;
        }
    }
    let o = diff_ok(gmon().args(["diff", "--json"]).arg(&a).arg(&b));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["granularity"], "function");
    let total = v["base"]["samples"].as_f64().unwrap();
    let credited: f64 = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["base"]["self_samples"].as_f64().unwrap())
        .sum();
    let main_histogram: u64 = read(&a).histograms().map(|h| h.total()).sum();
    // Before: the comparison's samples were the main executable's histogram only.
    assert!(total > 100.0, "{v}");
    assert!(
        total > 2.0 * main_histogram as f64,
        "{total} samples against {main_histogram} in the main histogram"
    );
    assert!(credited >= 0.95 * total, "{credited} of {total} credited");
}

/// A `gmon record` sidecar (`OUT.gmonx`) given where a profile goes, as `--base a/OUT.gmonx`
/// or a shell glob that picked it alone: said to be a sidecar, as every other command says it,
/// not "unsupported version 0x747865" (its magic's "ext\0" read as a version), which `gmon
/// diff` said when it compared per address range (no executable).
#[test]
fn a_sidecar_given_as_a_profile_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let sidecar = dir.path().join("run.out.gmonx");
    let mut bytes = b"gmonext\0".to_vec();
    bytes.extend([1, 0, 0, 0, 0, 0, 0, 0]);
    std::fs::write(&sidecar, &bytes).unwrap();
    let profile = case().join("gmon.out");
    // With the executable (per function) and without (per address range).
    let prog = case().join("prog");
    for (exe, base, new) in [
        (Some(&prog), &sidecar, &profile),
        (Some(&prog), &profile, &sidecar),
        (None, &sidecar, &profile),
        (None, &profile, &sidecar),
    ] {
        let o = gmon()
            .arg("diff")
            .args(exe)
            .arg(base)
            .arg(new)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains("run.out.gmonx: not a gmon.out profile") && said.contains("sidecar"),
            "{said}"
        );
    }
}
