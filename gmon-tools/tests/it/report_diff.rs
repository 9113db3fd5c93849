//! `gmon report --diff` opened in headless chromium: the table gives `gmon diff`'s verdicts in
//! words, the flame graph has `gmon flame --diff`'s colours (red or blue only where the stack is
//! a change, grey for noise), a click on a frame selects its function, and the header says which
//! noise model ran, how many functions were tested and with which correction.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{case_dir, gmon, run_ok, scaled_profile};
use crate::report::{chromium, flame_colours, open, report, strings};

/// The program: `tracked_leaf` (84 samples, called from `tracked_caller`) and `untracked_hot`
/// (74 samples, compiled without -pg: no calls counted, so a root of its own).
fn case() -> PathBuf {
    case_dir("mixed-pie-O0")
}

/// BASE is the testdata profile; NEW is the same with `untracked_hot`'s samples times `factor`.
fn profiles(dir: &Path, factor: u64) -> (PathBuf, PathBuf) {
    let new = scaled_profile(
        "mixed-pie-O0",
        "untracked_hot",
        factor,
        1,
        &dir.join("new.out"),
    );
    (case().join("gmon.out"), new)
}

/// `gmon report --diff PROG BASE NEW` opened with the test hook running `actions`; the steps
/// it recorded, or `None` (said as a skip) without a browser.
fn diff_page(
    test: &str,
    dir: &Path,
    base: &Path,
    new: &Path,
    actions: &Value,
) -> Option<Vec<Value>> {
    let browser = chromium(test)?;
    let prog = case().join("prog");
    let page = report(dir, "diff.html", &[Path::new("--diff"), &prog, base, new]);
    let v = open(&browser, &page, actions);
    Some(v["steps"].as_array().unwrap().clone())
}

/// `gmon diff --json`'s verdict of each function, in the words the table prints.
fn diff_verdicts(args: &[&Path]) -> Vec<(String, String)> {
    let o = gmon()
        .arg("diff")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let words = match e["verdict"].as_str().unwrap() {
                "change" if e["calls_changed"] == json!(true) => "change (calls)",
                "change" => "change",
                "within-noise" => "noise",
                _ => "too few",
            };
            (e["name"].as_str().unwrap().to_owned(), words.to_owned())
        })
        .collect()
}

/// The rows' (function, verdict) cells, in the table's order.
fn table_verdicts(rows: &Value) -> Vec<(String, String)> {
    rows.as_array()
        .unwrap()
        .iter()
        .filter(|r| r[4] != json!("\u{2014}"))
        .map(|r| {
            (
                r[0].as_str()
                    .unwrap()
                    .trim_start_matches("\u{25B6} ")
                    .to_owned(),
                r[4].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Each frame of an inferno SVG but the root: name, first sample, samples and fill.
fn svg_frames(svg: &str) -> Vec<(String, u64, u64, String)> {
    let attr = |g: &str, name: &str| -> String {
        let at = g.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        g[at..][..g[at..].find('"').unwrap()].to_owned()
    };
    svg.split("<g><title>")
        .skip(1)
        .filter(|g| !g.starts_with("all ("))
        .map(|g| {
            let name = &g[..g.find(" (").unwrap()];
            (
                name.to_owned(),
                attr(g, "fg:x").parse().unwrap(),
                attr(g, "fg:w").parse().unwrap(),
                attr(g, "fill"),
            )
        })
        .collect()
}

#[test]
fn diff_report_shows_verdicts_in_words_greys_noise_and_selects() {
    let dir = tempfile::tempdir().unwrap();
    let prog = case().join("prog");
    let (base, new) = profiles(dir.path(), 3);
    let names = ["untracked_hot", "untracked_calls_back", "main"];
    let Some(steps) = diff_page(
        "diff_report",
        dir.path(),
        &base,
        &new,
        &json!([
            {"header": true},
            {"sort": "verdict", "dir": "asc", "rows": 10},
            {"frameColours": names},
            {"frames": true},
            {"clickFrame": "untracked_hot"},
            {"clickRow": "tracked_leaf"},
            {"sort": "ds", "dir": "desc", "rows": 10},
        ]),
    ) else {
        return;
    };
    // The header: the noise model, the tests and their correction, the count of changes.
    let header = steps[0]["header"].as_str().unwrap();
    for words in [
        "sampling noise: one profile a side",
        "functions tested at level 0.05",
        "Holm's correction",
        "2 changes",
    ] {
        assert!(header.contains(words), "{words:?} not in {header}");
    }
    // Every function's verdict in words, as gmon diff gives it.
    let mut expected = diff_verdicts(&[&prog, &base, &new]);
    let mut shown = table_verdicts(&steps[1]["rows"]);
    expected.sort();
    shown.sort();
    assert_eq!(shown, expected, "{}", steps[1]);
    assert!(shown.contains(&("untracked_hot".into(), "change".into())));
    assert!(shown.contains(&("tracked_leaf".into(), "change".into())));
    // Changes first.
    assert_eq!(steps[1]["rows"][0][4], json!("change"), "{}", steps[1]);
    // gmon flame --diff's colours: red for the grown share, blue for the shrunk one, grey for
    // the callers without samples of their own.
    let svg = run_ok(
        gmon()
            .args(["flame", "--diff", "--exe"])
            .arg(&prog)
            .arg(&base)
            .arg(&new),
    );
    let svg = String::from_utf8(svg.stdout).unwrap();
    let colours = strings(&steps[2]["frameColours"]);
    assert_eq!(colours, flame_colours(&svg, &names));
    assert!(colours[0].starts_with("rgb(255,"), "{colours:?}");
    assert_eq!(colours[2], "rgb(200,200,200)");
    // Every frame: the same place, width and colour as in gmon flame --diff's SVG.
    let svg = run_ok(
        gmon()
            .args(["flame", "--diff", "--minwidth", "0", "--exe"])
            .arg(&prog)
            .arg(&base)
            .arg(&new),
    );
    let mut drawn = svg_frames(&String::from_utf8(svg.stdout).unwrap());
    let mut shown: Vec<(String, u64, u64, String)> = steps[3]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f[0].as_str().unwrap().to_owned(),
                f[1].as_u64().unwrap(),
                f[2].as_u64().unwrap(),
                f[3].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    drawn.sort();
    shown.sort();
    assert_eq!(shown, drawn);
    assert!(
        shown.iter().any(|f| f.3.ends_with(",255)")),
        "no blue frame: {shown:?}"
    );
    // A click on a frame selects its function in the table and the details.
    assert_eq!(steps[4]["found"], json!(true));
    assert_eq!(steps[4]["selected"], json!("untracked_hot"));
    assert_eq!(strings(&steps[4]["tableSelected"]), ["untracked_hot"]);
    assert_eq!(steps[4]["details"], json!("untracked_hot"));
    let info = steps[4]["frameInfo"].as_str().unwrap();
    assert!(
        info.contains("function: change, 46.84% \u{2192} 72.55%"),
        "{info}"
    );
    assert_eq!(steps[5]["selected"], json!("tracked_leaf"));
    // Sorted by the change: the grown share first, with its interval above 0.
    let top = &steps[6]["rows"][0];
    assert_eq!(top[0], json!("untracked_hot"), "{}", steps[6]);
    let change = top[3].as_str().unwrap();
    assert!(change.starts_with('+') && change.contains(" [+"), "{top}");
}

#[test]
fn diff_report_of_equal_profiles_is_grey_and_within_noise() {
    let dir = tempfile::tempdir().unwrap();
    let base = case().join("gmon.out");
    let Some(steps) = diff_page(
        "diff_report_equal",
        dir.path(),
        &base,
        &base,
        &json!([
            {"header": true},
            {"sort": "verdict", "dir": "asc", "rows": 10},
            {"frameColours": ["untracked_hot", "tracked_leaf", "main"]},
        ]),
    ) else {
        return;
    };
    assert!(
        steps[0]["header"].as_str().unwrap().contains("0 changes"),
        "{}",
        steps[0]
    );
    let shown = table_verdicts(&steps[1]["rows"]);
    assert!(
        shown.contains(&("untracked_hot".into(), "noise".into())),
        "{shown:?}"
    );
    assert!(
        shown.iter().all(|(_, v)| v == "noise" || v == "too few"),
        "{shown:?}"
    );
    assert_eq!(strings(&steps[2]["frameColours"]), ["rgb(200,200,200)"; 3]);
}

/// Several runs a side, as `gmon diff --base ... --new ...` takes them: the run-to-run model,
/// and the exit status says the page was written, not whether something changed.
#[test]
fn diff_report_takes_several_runs_a_side_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let prog = case().join("prog");
    let (base, new) = profiles(dir.path(), 3);
    let out = dir.path().join("runs.html");
    let o = gmon()
        .args(["report", "--exe"])
        .arg(&prog)
        .arg("--base")
        .args([&base, &base])
        .arg("--new")
        .args([&new, &new])
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("\"model\":\"run-to-run\""),
        "not the run-to-run model"
    );
    assert!(html.contains("\"kind\":\"diff\""));
    // Trouble is not a verdict: a missing profile fails.
    let o = gmon()
        .args(["report", "--diff"])
        .arg(&prog)
        .arg(&base)
        .arg(dir.path().join("missing.out"))
        .arg("-o")
        .arg(dir.path().join("x.html"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.out"));
    assert!(!dir.path().join("x.html").exists());
}

/// Same-named static functions of a -pg program: `gmon diff` numbers them (`helper [#2]`), the
/// flame graph names them by file (`helper [util.c]`). The report's rows take the graph's names,
/// so that a row and its frames are one function (before: each had a row of its own, the
/// frames' rows without a verdict).
#[test]
fn diff_report_names_same_named_functions_as_the_graph_does() {
    let case = case_dir("multifile-pie-O0");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mf.html");
    run_ok(
        gmon()
            .args(["report", "--diff"])
            .arg(case.join("prog"))
            .arg(case.join("gmon.out"))
            .arg(case.join("gmon.2.out"))
            .arg("-o")
            .arg(&out),
    );
    let html = std::fs::read_to_string(&out).unwrap();
    let start = html.find("id=\"gmon-data\">").unwrap() + "id=\"gmon-data\">".len();
    let data: Value =
        serde_json::from_str(&html[start..][..html[start..].find("</script>").unwrap()]).unwrap();
    let names = strings(&data["fn"]["name"]);
    for file in ["util.c", "stage.c", "main.c"] {
        assert!(names.contains(&format!("helper [{file}]")), "{names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("[#")), "{names:?}");
    // Every function with samples or calls has a verdict: only callers without either may not.
    let verdicts = data["diff"]["fn"]["vd"].as_array().unwrap();
    let helpers = names
        .iter()
        .zip(verdicts)
        .filter(|(n, _)| n.starts_with("helper"));
    assert!(
        helpers.clone().count() == 3 && helpers.into_iter().all(|(_, v)| v.as_i64() >= Some(0))
    );
}
