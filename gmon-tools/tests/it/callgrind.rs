//! `gmon callgrind` read by Valgrind's own reader, `callgrind_annotate` (issue 27): the exact
//! `-pg` call counts of every testdata case, the profile's totals, and a `gmon record` profile.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::{self, gmon, run_ok, testdata_cases};

/// What `callgrind_annotate --tree=caller` says: the total, and per (caller, callee) function
/// names (without their `file:` prefix) the calls and inclusive cost.
#[derive(Debug, Default)]
struct Annotated {
    total: u64,
    calls: BTreeMap<(String, String), (u64, u64)>,
    /// Per function: its cost (inclusive with `--inclusive=yes`).
    cost: BTreeMap<String, u64>,
}

/// A `1,234` count.
fn number(s: &str) -> u64 {
    s.trim()
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("{s:?}"))
}

/// `file:function [object]` → `function`.
fn function_of(s: &str) -> String {
    let s = s.rsplit_once(" [").map_or(s, |(n, _)| n);
    s.split_once(':').map_or(s, |(_, f)| f).to_owned()
}

/// Runs `callgrind_annotate` on `file`; `None` (after a visible skip) when it is missing.
fn annotate(test: &str, file: &Path, inclusive: bool) -> Option<Annotated> {
    let o = match Command::new("callgrind_annotate")
        .args(["--threshold=100", "--tree=caller", "--auto=no"])
        .arg(format!(
            "--inclusive={}",
            if inclusive { "yes" } else { "no" }
        ))
        .arg(file)
        .output()
    {
        Ok(o) => o,
        Err(_) => {
            common::skip(
                test,
                "callgrind_annotate is not installed (valgrind; .ci/run installs it)",
            );
            return None;
        }
    };
    let text = String::from_utf8(o.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(!stderr.contains("malformed"), "{stderr}");
    let mut a = Annotated::default();
    // The callers listed above a function's `*` line: (name, calls, inclusive cost).
    let mut callers: Vec<(String, u64, u64)> = Vec::new();
    for line in text.lines() {
        // `COST (PERCENT)  REST`, the percentage absent for a cost of 0.
        let Some((cost, rest)) = line.trim_start().split_once(' ') else {
            continue;
        };
        let Ok(cost) = cost.replace(',', "").parse::<u64>() else {
            continue;
        };
        let rest = rest.trim_start();
        let rest = match rest.strip_prefix('(') {
            Some(r) => r.split_once(')').map_or(r, |(_, r)| r).trim_start(),
            None => rest,
        };
        if rest == "PROGRAM TOTALS" {
            a.total = cost;
        } else if let Some(caller) = rest.strip_prefix("< ") {
            // `file:caller (N x) [object]`
            let body = caller.rsplit_once(" [").map_or(caller, |(n, _)| n);
            let (name, count) = body.rsplit_once(" (").unwrap();
            callers.push((
                function_of(name),
                number(count.trim_end_matches("x)")),
                cost,
            ));
        } else if let Some(f) = rest.strip_prefix("*  ") {
            let callee = function_of(f);
            for (caller, calls, inclusive) in callers.drain(..) {
                let slot = a.calls.entry((caller, callee.clone())).or_insert((0, 0));
                slot.0 += calls;
                slot.1 += inclusive;
            }
            a.cost.insert(callee, cost);
        }
    }
    Some(a)
}

/// Every testdata case: callgrind_annotate reads the file without a complaint, its total is
/// the profile's samples in functions (gprof's self ticks, rounded), and every caller → callee
/// pair whose callee has samples shows the exact sum of its `-pg` arc counts.
#[test]
fn callgrind_annotate_shows_every_testdata_arcs_exact_count_and_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut arcs) = (0, 0);
    for case in testdata_cases() {
        let prog = case.join("prog");
        let profile = case.join("gmon.out");
        let out = dir.path().join("callgrind.out");
        run_ok(
            gmon()
                .arg("callgrind")
                .arg(&prog)
                .arg(&profile)
                .arg("-o")
                .arg(&out),
        );
        let Some(got) = annotate("callgrind_annotate_exact_counts", &out, true) else {
            return;
        };
        let a = common::views_analysis(&prog, common::read(&profile));
        let ticks: f64 = a.functions().map(|f| f.self_ticks).sum();
        assert_eq!(got.total, ticks.round() as u64, "{}", case.display());
        // Expected counts by demangled names; cases where two functions share a name (the
        // views tell them apart by file) are compared by total only.
        let names: Vec<String> = a.functions().map(|f| f.demangled()).collect();
        let unique = names.len()
            == names
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len();
        if !unique {
            continue;
        }
        let mut want: BTreeMap<(String, String), u64> = BTreeMap::new();
        // callgrind_annotate lists only functions with a cost: callees without samples (inclusive)
        // are not in its output, whatever the file says.
        for arc in a.arcs().filter(|a| a.count > 0) {
            if !got.cost.contains_key(&names[arc.child]) {
                continue;
            }
            let key = (names[arc.parent].clone(), names[arc.child].clone());
            *want.entry(key).or_insert(0) += arc.count;
        }
        let got_calls: BTreeMap<(String, String), u64> = got
            .calls
            .iter()
            .map(|(k, &(n, _))| (k.clone(), n))
            .collect();
        assert_eq!(got_calls, want, "{}", case.display());
        arcs += want.len();
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} cases compared");
    assert!(arcs >= 200, "only {arcs} arcs compared");
}

/// The inclusive costs of a -pg profile: the root's is the whole profile, and a function's is
/// gprof's "self + children" for it in whole samples.
#[test]
fn callgrind_inclusive_costs_are_gprofs_propagated_time() {
    let case = common::case_dir("inlined-pie-O2");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("callgrind.out");
    run_ok(
        gmon()
            .arg("callgrind")
            .arg(case.join("prog"))
            .arg(case.join("gmon.out"))
            .arg("-o")
            .arg(&out),
    );
    let Some(got) = annotate("callgrind_inclusive", &out, true) else {
        return;
    };
    assert_eq!(got.total, 16);
    assert_eq!(got.cost.get("main"), Some(&16), "{got:?}");
    assert_eq!(got.cost.get("twice"), Some(&16), "{got:?}");
    assert_eq!(
        got.calls.get(&("main".to_owned(), "twice".to_owned())),
        Some(&(30_000, 16))
    );
    assert_eq!(
        got.calls.get(&("twice".to_owned(), "work".to_owned())),
        Some(&(60_000, 16))
    );
    // The header says where the calls come from and that every sample is in the file.
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("# calls: exact -pg arc counts"), "{text}");
    assert!(
        text.contains("# samples: 16, every sample of the profile"),
        "{text}"
    );
    assert!(text.contains("\npositions: instr line\n"), "{text}");
}

/// A `gmon record` profile (exact stacks, no `-pg` arcs): callgrind_annotate's total is every
/// recorded sample (the folded stacks' sum), each caller → callee count is the number of
/// sampled stacks holding that call, and the header says that these are not call counts.
#[test]
fn callgrind_of_a_recorded_run_counts_every_sample_and_says_where_calls_come_from() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/programs/inlined/inlined.c"),
    )
    .unwrap();
    let prog = crate::record::compile_c(dir.path(), "inlined", &source, &["-O2", "-g"]);
    let out = dir.path().join("rec.out");
    let rec = crate::record::gmon_cmd()
        .args(["record", "-q", "--hz", "1000", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .arg("60000")
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", crate::record::text(&rec));
    let folded = run_ok(gmon().args(["flame", "--folded"]).arg(&out)).stdout;
    let folded = String::from_utf8(folded).unwrap();
    let (mut total, mut with_call) = (0u64, 0u64);
    for line in folded.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let n: u64 = n.parse().unwrap();
        total += n;
        if stack.contains("main;twice;") || stack.ends_with("main;twice") {
            with_call += n;
        }
    }
    assert!(total > 50 && with_call > 0, "{folded}");
    let cg = dir.path().join("callgrind.out");
    run_ok(gmon().arg("callgrind").arg(&out).arg("-o").arg(&cg));
    let Some(got) = annotate("callgrind_of_a_recorded_run", &cg, true) else {
        return;
    };
    assert_eq!(got.total, total, "{folded}");
    assert_eq!(
        got.calls.get(&("main".to_owned(), "twice".to_owned())),
        Some(&(with_call, with_call)),
        "{got:?}"
    );
    let text = std::fs::read_to_string(&cg).unwrap();
    assert!(
        text.contains(
            "# calls: no -pg arcs were recorded; each count is the number of sampled stacks"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!("# samples: {total}, every sample")),
        "{text}"
    );
}
