//! Issue 27: `gmon flame` draws the functions the compiler inlined as frames above the function
//! that holds their code, marked `[inlined]`, for a `-pg` profile (estimated stacks, the leaf
//! split over the histogram's bins) and a `gmon record` one (exact stacks, every frame at its
//! address), without changing any stack's samples; `--no-inline` leaves them out.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{case_dir, gmon, run_ok};
use crate::flame::svg_titles;
use crate::record::{compile_c, gmon_cmd, text};

/// Folded stacks: stack -> samples.
fn parse(folded: &str) -> BTreeMap<String, u64> {
    folded
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            (stack.to_owned(), n.parse().unwrap())
        })
        .collect()
}

/// The stacks with the `[inlined]` frames taken out, samples added up.
fn without_inlined(stacks: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (stack, n) in stacks {
        let kept: Vec<&str> = stack
            .split(';')
            .filter(|f| !f.ends_with(" [inlined]"))
            .collect();
        *out.entry(kept.join(";")).or_insert(0) += n;
    }
    out
}

/// Checks the folded stacks and the SVG of `args` (an executable and profile, or a recorded
/// profile) for the testdata program `inlined`: mix() is inlined into work(), hot.
fn check_inline_frames(args: &[&Path], from_gmon: impl Fn() -> assert_cmd::Command) {
    let folded = |extra: &[&str]| -> BTreeMap<String, u64> {
        let o = run_ok(
            from_gmon()
                .arg("flame")
                .arg("--folded")
                .args(extra)
                .args(args),
        );
        parse(&String::from_utf8(o.stdout).unwrap())
    };
    let with = folded(&[]);
    let plain = folded(&["--no-inline"]);
    assert!(
        plain.keys().all(|s| !s.contains("[inlined]")),
        "--no-inline: {plain:?}"
    );
    // The same stacks and samples once the inline frames are taken out: nothing added or lost.
    assert_eq!(without_inlined(&with), plain, "{with:?}");
    // mix is drawn above work, which holds its code, and has most of work's samples.
    let work: u64 = plain
        .iter()
        .filter(|(s, _)| s.ends_with(";work"))
        .map(|(_, n)| n)
        .sum();
    let mix: u64 = with
        .iter()
        .filter(|(s, _)| s.ends_with(";work;mix [inlined]"))
        .map(|(_, n)| n)
        .sum();
    assert!(mix * 2 > work, "mix {mix} of work's {work}: {with:?}");
    // Nothing else is inlined into work (libc's own inlined functions may be sampled).
    assert!(
        with.keys()
            .filter(|s| s.contains(";work;"))
            .all(|s| s.ends_with(";work;mix [inlined]")),
        "{with:?}"
    );
    let svg = run_ok(from_gmon().arg("flame").args(args));
    let titles = svg_titles(&String::from_utf8(svg.stdout).unwrap());
    assert!(
        titles.iter().any(|t| t.starts_with("mix [inlined] (")),
        "{titles:?}"
    );
}

#[test]
fn a_pg_profiles_inlined_function_is_a_frame_above_its_caller() {
    let dir = case_dir("inlined-pie-O2");
    let (prog, profile) = (dir.join("prog"), dir.join("gmon.out"));
    check_inline_frames(&[&prog, &profile], gmon);
}

#[test]
fn a_recorded_runs_inlined_function_is_a_frame_above_its_caller() {
    let tmp = tempfile::tempdir().unwrap();
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/programs/inlined/inlined.c");
    let source = std::fs::read_to_string(source).unwrap();
    let prog = compile_c(tmp.path(), "inlined", &source, &["-O2", "-g"]);
    let out = tmp.path().join("run.out");
    let rec = gmon_cmd()
        .args(["record", "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .output()
        .unwrap();
    assert!(rec.status.success(), "gmon record: {}", text(&rec));
    check_inline_frames(&[&out], || assert_cmd::Command::from_std(gmon_cmd()));
}
