//! `gmon merge` through the real binary: GNU gprof reports the same for the merged file as for
//! the inputs (testdata cases, many runs, sums beyond 16 and 32 bits), histogram ranges that line
//! up or not, mismatched rates, 10,000 inputs, malformed inputs, `--exe`.
//!
//! The reference is always a real `/usr/bin/gprof` run on the inputs at test time; tests that need
//! it say so and pass vacuously when it is not installed.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{cases_dir, gmon, read};
use gmon_format::{CallArc, Dimension, Encoding, Histogram, ProfRate, Profile, Record};

const GPROF: &str = "/usr/bin/gprof";

fn have_gprof() -> bool {
    let ok = Path::new(GPROF).exists();
    if !ok {
        common::skip(
            "merge_cli",
            &format!("{GPROF} is not installed: no comparison with GNU gprof"),
        );
    }
    ok
}

/// `gprof -b EXE FILES...` (LC_ALL=C): its stdout, prefixed with its exit status when it is not
/// 0 (gprof's fatal errors must then match too).
fn gprof_report(exe: &Path, files: &[PathBuf]) -> String {
    let out = Command::new(GPROF)
        .env("LC_ALL", "C")
        .arg("-b")
        .arg(exe)
        .args(files)
        .output()
        .unwrap();
    status_and_stdout(&out)
}

fn status_and_stdout(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    match out.status.code() {
        Some(0) => stdout,
        code => format!("exit status {code:?}\n{stdout}"),
    }
}

/// `gmon gprof -b EXE FILES...`, as [`gprof_report`].
fn gmon_gprof_report(exe: &Path, files: &[PathBuf]) -> String {
    let out = gmon()
        .args(["gprof", "-b"])
        .arg(exe)
        .args(files)
        .output()
        .unwrap();
    status_and_stdout(&out)
}

/// Runs `gmon merge EXTRA... INPUTS... -o OUT`.
fn merge(inputs: &[PathBuf], out: &Path, extra: &[&str]) -> std::process::Output {
    gmon()
        .arg("merge")
        .args(extra)
        .args(inputs)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

/// Runs `gmon merge` as [`merge`], asserting that it fails with exit status 1; returns stderr.
fn merge_fails(inputs: &[PathBuf], out: &Path, extra: &[&str]) -> String {
    let o = merge(inputs, out, extra);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    err
}

/// Runs `gmon merge` as [`merge`], asserting success.
fn merge_ok(inputs: &[PathBuf], out: &Path, extra: &[&str]) -> std::process::Output {
    let o = merge(inputs, out, extra);
    assert!(
        o.status.success(),
        "gmon merge failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The runs of a testdata case: gmon.out, gmon.2.out, gmon.3.out, ...
fn runs(case: &Path) -> Vec<PathBuf> {
    let mut v = vec![case.join("gmon.out")];
    for i in 2.. {
        let p = case.join(format!("gmon.{i}.out"));
        if !p.exists() {
            break;
        }
        v.push(p);
    }
    v
}

fn multi_run_cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("prog").exists() && p.join("gmon.2.out").exists())
        .collect();
    cases.sort();
    cases
}

fn write(path: &Path, p: &Profile) {
    std::fs::write(path, gmon_format::to_vec(p).unwrap()).unwrap();
}

#[test]
fn gprof_report_of_merged_equals_report_of_all_inputs() {
    if !have_gprof() {
        return;
    }
    let cases = multi_run_cases();
    assert!(!cases.is_empty(), "no testdata case has several runs");
    let tmp = tempfile::tempdir().unwrap();
    for case in cases {
        let exe = case.join("prog");
        let inputs = runs(&case);
        let merged = tmp.path().join("merged.out");
        merge_ok(&inputs, &merged, &[]);
        let expected = gprof_report(&exe, &inputs);
        assert_eq!(
            gprof_report(&exe, std::slice::from_ref(&merged)),
            expected,
            "{}: gprof on the merged file differs from gprof on the inputs",
            case.display()
        );
        assert_eq!(
            gmon_gprof_report(&exe, std::slice::from_ref(&merged)),
            expected,
            "{}: gmon gprof on the merged file differs from gprof on the inputs",
            case.display()
        );
    }
}

#[test]
fn many_runs_of_one_case() {
    if !have_gprof() {
        return;
    }
    let case = cases_dir().join("recurse-pie-O0");
    let exe = case.join("prog");
    let runs = runs(&case);
    // 60 inputs, the runs interleaved, so arcs first appear in different files.
    let inputs: Vec<PathBuf> = (0..60)
        .map(|i| runs[(i * 7) % runs.len()].clone())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let merged = tmp.path().join("merged.out");
    merge_ok(&inputs, &merged, &[]);
    assert_eq!(
        gprof_report(&exe, std::slice::from_ref(&merged)),
        gprof_report(&exe, &inputs)
    );
}

/// Sums past 65535 in a bin and past 2^32 in an arc: the merged file has extra records, and gprof
/// reports exactly the totals it reports for the inputs.
#[test]
fn sums_beyond_16_and_32_bits_reach_gprof_exactly() {
    if !have_gprof() {
        return;
    }
    let case = cases_dir().join("recurse-pie-O0");
    let exe = case.join("prog");
    let base = read(&case.join("gmon.out"));
    let tmp = tempfile::tempdir().unwrap();
    let hot_max = base
        .histograms()
        .flat_map(|h| h.bins.iter().copied())
        .max()
        .unwrap();
    assert!(hot_max > 0);
    // Scale bins so that the hottest is 40000 per file: three files sum past 65535.
    let scale = 40_000 / hot_max;
    let mut inputs = Vec::new();
    for (i, first_arc) in [u64::from(u32::MAX), u64::from(u32::MAX), 7]
        .into_iter()
        .enumerate()
    {
        let mut p = base.clone();
        let mut seen_arc = false;
        for r in &mut p.records {
            match r {
                Record::Histogram(h) => h.bins.iter_mut().for_each(|b| *b *= scale),
                Record::CallArc(a) if !seen_arc => {
                    a.count = first_arc;
                    seen_arc = true;
                }
                _ => {}
            }
        }
        let path = tmp.path().join(format!("in{i}.out"));
        write(&path, &p);
        inputs.push(path);
    }
    let merged = tmp.path().join("merged.out");
    merge_ok(&inputs, &merged, &[]);
    let out = read(&merged);
    assert_eq!(
        out.histograms().count(),
        2,
        "a 17-bit bin sum needs a second histogram record"
    );
    let first = base.arcs().next().unwrap();
    let split: Vec<u64> = out
        .arcs()
        .filter(|a| (a.from_pc, a.self_pc) == (first.from_pc, first.self_pc))
        .map(|a| a.count)
        .collect();
    assert_eq!(split.iter().sum::<u64>(), 2 * u64::from(u32::MAX) + 7);
    assert_eq!(split.len(), 3);
    let expected = gprof_report(&exe, &inputs);
    assert!(expected.contains(&(2 * u64::from(u32::MAX) + 7).to_string()));
    assert_eq!(gprof_report(&exe, std::slice::from_ref(&merged)), expected);
    assert_eq!(
        gmon_gprof_report(&exe, std::slice::from_ref(&merged)),
        expected
    );
    // `gmon gprof -s` sums with the same rules: its gmon.sum (which once failed with "arc count
    // does not fit") reports the same.
    let dir = tmp.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    let s = gmon()
        .current_dir(&dir)
        .args(["gprof", "-s"])
        .arg(&exe)
        .args(&inputs)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    assert_eq!(gprof_report(&exe, &[dir.join("gmon.sum")]), expected);
}

fn hist(low: u64, high: u64, rate: u32, bins: Vec<u64>) -> Record {
    Record::Histogram(Histogram {
        low_pc: low,
        high_pc: high,
        prof_rate: ProfRate(rate),
        dimension: Dimension::SECONDS,
        bins,
    })
}

fn profile(records: Vec<Record>) -> Profile {
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records = records;
    p
}

#[test]
fn ranges_that_line_up_are_merged_over_their_union() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.out");
    let b = tmp.path().join("b.out");
    // 4 bytes per bin; b starts 32 bins into a.
    write(&a, &profile(vec![hist(0x1000, 0x1100, 100, vec![1; 64])]));
    write(&b, &profile(vec![hist(0x1080, 0x1180, 100, vec![2; 64])]));
    let out = tmp.path().join("sum.out");
    merge_ok(&[a, b], &out, &[]);
    let p = read(&out);
    let h: Vec<&Histogram> = p.histograms().collect();
    assert_eq!(h.len(), 1);
    assert_eq!(
        (h[0].low_pc, h[0].high_pc, h[0].bins.len()),
        (0x1000, 0x1180, 96)
    );
    let expected: Vec<u64> = (0..96)
        .map(|i| {
            if i < 32 {
                1
            } else if i < 64 {
                3
            } else {
                2
            }
        })
        .collect();
    assert_eq!(h[0].bins, expected);
}

#[test]
fn ranges_that_do_not_line_up_need_rebin() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.out");
    let b = tmp.path().join("b.out");
    write(&a, &profile(vec![hist(0x1000, 0x1100, 100, vec![3; 64])]));
    // Shifted by one 2-byte unit: overlapping, but on another grid.
    write(&b, &profile(vec![hist(0x1002, 0x1102, 100, vec![5; 64])]));
    let out = tmp.path().join("sum.out");
    let err = merge_fails(&[a.clone(), b.clone()], &out, &[]);
    assert!(
        err.contains("b.out") && err.contains("do not line up") && err.contains("--rebin"),
        "{err}"
    );
    assert!(!out.exists());

    let o = merge_ok(&[a, b], &out, &["--rebin"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--rebin") && err.contains("redistributed"),
        "{err}"
    );
    let p = read(&out);
    let total: u64 = p.histograms().map(|h| h.total()).sum();
    assert_eq!(total, 64 * 3 + 64 * 5, "rebinning keeps the total exact");
}

#[test]
fn mismatched_rates_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.out");
    let b = tmp.path().join("b.out");
    write(&a, &profile(vec![hist(0x1000, 0x1100, 100, vec![1; 64])]));
    write(&b, &profile(vec![hist(0x1000, 0x1100, 1000, vec![1; 64])]));
    let out = tmp.path().join("sum.out");
    let err = merge_fails(&[a, b], &out, &[]);
    assert!(
        err.contains("b.out") && err.contains("1000 Hz") && err.contains("100 Hz"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn malformed_input_in_the_middle_names_the_file_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for i in 0..9 {
        let p = tmp.path().join(format!("run{i}.out"));
        write(&p, &profile(vec![hist(0x1000, 0x1010, 100, vec![1; 4])]));
        inputs.push(p);
    }
    // Truncate run4 in the middle of its histogram.
    let bad = &inputs[4];
    let bytes = std::fs::read(bad).unwrap();
    std::fs::write(bad, &bytes[..bytes.len() - 3]).unwrap();
    let out = tmp.path().join("sum.out");
    let err = merge_fails(&inputs, &out, &[]);
    assert!(
        err.contains("run4.out") && err.contains("offset 0x"),
        "{err}"
    );
    assert!(!out.exists(), "no output on error");
    // Not even a temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".gmon-tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

/// A GNU header cut anywhere after its magic and version (8..19 bytes) must be an error, wherever
/// the file stands in the list (the fast path once took it for an empty profile).
#[test]
fn truncated_gnu_header_after_the_first_input_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.out");
    write(&good, &profile(vec![hist(0x1000, 0x1010, 100, vec![1; 4])]));
    let bytes = std::fs::read(&good).unwrap();
    for cut in [0usize, 4, 8, 12, 19] {
        let bad = tmp.path().join(format!("cut{cut}.out"));
        std::fs::write(&bad, &bytes[..cut]).unwrap();
        let out = tmp.path().join("sum.out");
        let err = merge_fails(&[good.clone(), bad], &out, &[]);
        assert!(
            err.contains(&format!("cut{cut}.out")) && err.contains("offset"),
            "{err}"
        );
        assert!(!out.exists(), "no output on error (cut at {cut})");
    }
}

/// 10,000 tiny inputs, given through a list file, and arc totals beyond 2^32.
#[test]
fn ten_thousand_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut list = String::new();
    let n = 10_000u64;
    for i in 0..n {
        let p = tmp.path().join(format!("r{i}.out"));
        write(
            &p,
            &profile(vec![
                hist(0x1000, 0x1010, 100, vec![i % 7, 1, 0, 2]),
                Record::CallArc(CallArc {
                    from_pc: 0x1000,
                    self_pc: 0x1008,
                    count: i * 1000,
                }),
                Record::CallArc(CallArc {
                    from_pc: 0x1004,
                    self_pc: 0x1008,
                    count: 1,
                }),
            ]),
        );
        list.push_str(&p.to_string_lossy());
        list.push('\n');
    }
    let list_path = tmp.path().join("list.txt");
    std::fs::write(&list_path, list).unwrap();
    let out = tmp.path().join("sum.out");
    let list_arg = list_path.to_str().unwrap();
    merge_ok(&[], &out, &["--from-list", list_arg]);
    let p = read(&out);
    let mut bins = [0u64; 4];
    for h in p.histograms() {
        for (s, b) in bins.iter_mut().zip(&h.bins) {
            *s += b;
        }
    }
    let sevens: u64 = (0..n).map(|i| i % 7).sum();
    assert_eq!(bins, [sevens, n, 0, 2 * n]);
    let mut arcs = BTreeMap::new();
    for a in p.arcs() {
        *arcs.entry((a.from_pc, a.self_pc)).or_insert(0u64) += a.count;
    }
    let first = 1000 * n * (n - 1) / 2;
    assert!(first > u64::from(u32::MAX));
    assert_eq!(
        arcs,
        BTreeMap::from([((0x1000, 0x1008), first), ((0x1004, 0x1008), n)])
    );
    // The first arc record stays first (order of first appearance).
    assert_eq!(p.arcs().next().map(|a| a.from_pc), Some(0x1000));

    // The same list as an @LISTFILE argument gives the same bytes.
    let out2 = tmp.path().join("sum2.out");
    let at = format!("@{}", list_path.display());
    merge_ok(&[], &out2, &[&at]);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&out2).unwrap());
}

/// `--exe` passes the arcs of a file at once when all their addresses lie in one code section;
/// arcs spread over several sections are checked one by one, so an address between sections is
/// still refused.
#[test]
fn exe_checks_arcs_one_by_one_when_they_span_sections() {
    let case = cases_dir().join("recurse-pie-O0");
    let prog = case.join("prog");
    let data = std::fs::read(&prog).unwrap();
    let elf = goblin::elf::Elf::parse(&data).unwrap();
    let section = |exec: bool| {
        elf.section_headers
            .iter()
            .filter(|s| s.sh_size > 0 && s.sh_addr > 0)
            .filter(|s| {
                (s.sh_flags & u64::from(goblin::elf::section_header::SHF_EXECINSTR) != 0) == exec
            })
            .map(|s| (s.sh_addr, s.sh_addr + s.sh_size))
            .collect::<Vec<_>>()
    };
    let code = section(true);
    assert!(code.len() > 1, "{code:x?}");
    let in_code = |pc: u64| code.iter().any(|&(lo, hi)| pc + 16 >= lo && pc < hi);
    // The end of the first code section and the start of the last one, and an address of a
    // data section outside every code section.
    let (first, last) = (code[0], code[code.len() - 1]);
    let data_pc = section(false)
        .into_iter()
        .map(|(lo, _)| lo + 8)
        .find(|&pc| !in_code(pc) && pc > first.0 && pc < last.1)
        .or_else(|| {
            section(false)
                .into_iter()
                .map(|(lo, _)| lo + 8)
                .find(|&pc| !in_code(pc))
        })
        .expect("a data section outside the code");
    let arc = |from_pc: u64, self_pc: u64| {
        Record::CallArc(CallArc {
            from_pc,
            self_pc,
            count: 1,
        })
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sum.out");
    let prog_arg = prog.to_str().unwrap();
    let spanning = tmp.path().join("spanning.out");
    write(
        &spanning,
        &profile(vec![arc(first.1 - 4, last.0), arc(last.0, first.0)]),
    );
    merge_ok(std::slice::from_ref(&spanning), &out, &["--exe", prog_arg]);
    let stray = tmp.path().join("stray.out");
    write(
        &stray,
        &profile(vec![arc(first.0, last.0), arc(first.0, data_pc)]),
    );
    let err = merge_fails(&[spanning, stray], &out, &["--exe", prog_arg]);
    assert!(
        err.contains("stray.out") && err.contains("not a profile of this executable"),
        "{err}"
    );
}

#[test]
fn exe_refuses_a_profile_of_another_program() {
    let case = cases_dir().join("recurse-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let foreign = tmp.path().join("foreign.out");
    write(
        &foreign,
        &profile(vec![Record::CallArc(CallArc {
            from_pc: 0x7f00_0000,
            self_pc: 0x7f00_0100,
            count: 1,
        })]),
    );
    let out = tmp.path().join("sum.out");
    let prog = case.join("prog");
    let prog = prog.to_str().unwrap();
    let err = merge_fails(&[case.join("gmon.out"), foreign], &out, &["--exe", prog]);
    assert!(
        err.contains("foreign.out") && err.contains("not a profile of this executable"),
        "{err}"
    );
    assert!(!out.exists());
    // Its own runs are accepted.
    merge_ok(&runs(&case), &out, &["--exe", prog]);
}

#[test]
fn bsd_output_round_trips_and_refuses_17_bit_bins() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.out");
    write(
        &a,
        &profile(vec![hist(0x1000, 0x1010, 100, vec![40_000, 1, 0, 0])]),
    );
    let out = tmp.path().join("sum.bsd");
    merge_ok(std::slice::from_ref(&a), &out, &["--to", "bsd44"]);
    let p = read(&out);
    assert_eq!(p.header.variant(), gmon_format::Variant::Bsd44);
    let err = merge_fails(&[a.clone(), a], &out, &["--to", "bsd44"]);
    assert!(err.contains("--to gnu"));
}

/// The gmon-write runtime's sidecar (`FILE.gmonx`) names the executable by build id: two runs of
/// different builds are refused.
#[test]
fn sidecar_build_ids_must_agree() {
    use gmon_format::sidecar::{MappedObject, OBJECT_FLAG_MAIN};
    let tmp = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for (i, id) in [[1u8; 20], [1u8; 20], [2u8; 20]].into_iter().enumerate() {
        let p = tmp.path().join(format!("run{i}.out"));
        write(&p, &profile(vec![hist(0x1000, 0x1010, 100, vec![1; 4])]));
        let sidecar = gmon_format::Sidecar {
            objects: vec![MappedObject {
                path: "/bin/prog".into(),
                build_id: id.to_vec(),
                load_bias: 0,
                flags: OBJECT_FLAG_MAIN,
                ranges: Vec::new(),
            }],
            ..Default::default()
        };
        let mut bytes = Vec::new();
        gmon_format::write_sidecar(&sidecar, &mut bytes).unwrap();
        std::fs::write(gmon_format::sidecar_path(&p), bytes).unwrap();
        inputs.push(p);
    }
    let out = tmp.path().join("sum.out");
    merge_ok(&inputs[..2], &out, &[]);
    let err = merge_fails(&inputs, &out, &[]);
    assert!(
        err.contains("run2.out") && err.contains(&"02".repeat(20)),
        "{err}"
    );
}

/// Inputs of any variant: a GNU run, a 4.4BSD and an old BSD copy of the other runs merge to
/// what gprof reports for the three GNU runs.
#[test]
fn inputs_of_mixed_variants() {
    if !have_gprof() {
        return;
    }
    let case = cases_dir().join("recurse-pie-O0");
    let exe = case.join("prog");
    let runs = runs(&case);
    let tmp = tempfile::tempdir().unwrap();
    let mut inputs = vec![runs[0].clone()];
    for (run, to) in runs[1..].iter().zip(["bsd44", "bsd-old"]) {
        let out = tmp.path().join(format!("{to}.gmon"));
        let o = gmon()
            .args(["convert", "--to", to])
            .arg(run)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        inputs.push(out);
    }
    assert_eq!(inputs.len(), 3);
    let merged = tmp.path().join("merged.out");
    merge_ok(&inputs, &merged, &[]);
    assert_eq!(read(&merged).header.variant(), gmon_format::Variant::Gnu);
    let expected = gprof_report(&exe, &runs);
    assert_eq!(gprof_report(&exe, &inputs), expected);
    assert_eq!(gprof_report(&exe, std::slice::from_ref(&merged)), expected);
}
