//! `gmon report OUT OUT.*` of a recorded process tree (spec/stacks.md §12) opened in headless
//! chromium: the header lists the executables with their profiles, threads and samples, the
//! table says which executable each function is in, and the flame graph has a root frame per
//! executable holding exactly what `gmon flame OUT OUT.*` draws under it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::record::{gmon_cmd, record_tree, text, two_spinning_programs};
use crate::report::{chromium, open, report, strings};

#[test]
fn report_of_a_process_tree_has_a_root_per_executable() {
    let Some(browser) = chromium("report_of_a_process_tree") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_spinning_programs(dir.path());
    // Every file of the run, sidecars included, as `OUT OUT.*` names them.
    let files = record_tree(
        dir.path(),
        "rec",
        &format!("{}; {}", a.display(), b.display()),
    );
    let args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let page = report(dir.path(), "tree.html", &args);
    // What gmon flame draws under each root.
    let folded = gmon_cmd()
        .args(["flame", "--folded"])
        .args(&files)
        .output()
        .unwrap();
    assert!(folded.status.success(), "{}", text(&folded));
    let mut per_root = BTreeMap::<String, u64>::new();
    for line in String::from_utf8_lossy(&folded.stdout).lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let root = stack.split(';').next().unwrap().to_owned();
        *per_root.entry(root).or_default() += n.parse::<u64>().unwrap();
    }
    assert!(
        per_root.contains_key("spina") && per_root.contains_key("spinb"),
        "{per_root:?}"
    );
    let v = open(
        &browser,
        &page,
        &json!([
            {"header": true},
            {"frames": true},
            {"filter": "/^main$/"},
            {"sort": "exe", "dir": "asc", "rows": 5},
            {"filter": ""},
            {"clickFrame": "spinb"},
        ]),
    );
    let steps = v["steps"].as_array().unwrap();
    // The header: the tree, each executable with its samples.
    let header = steps[0]["header"].as_str().unwrap();
    assert!(
        header.contains(&format!("Process tree: {} executables", per_root.len())),
        "{header}"
    );
    for (root, n) in &per_root {
        assert!(header.contains(root.as_str()), "{root} not in {header}");
        assert!(
            header.contains(&format_thousands(*n)),
            "{root}'s {n} samples not in {header}"
        );
    }
    // A root frame per executable, with what gmon flame draws under it.
    let roots: BTreeMap<String, u64> = steps[1]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| per_root.contains_key(f[0].as_str().unwrap()))
        .map(|f| (f[0].as_str().unwrap().to_owned(), f[2].as_u64().unwrap()))
        .collect();
    assert_eq!(roots, per_root);
    // main is in both programs: two rows, each saying its executable.
    assert_eq!(steps[2]["rows"], json!(2), "{}", steps[2]);
    let rows = steps[3]["rows"].as_array().unwrap();
    let exes: Vec<String> = rows.iter().map(|r| r[1].as_str().unwrap().into()).collect();
    assert_eq!(exes, ["spina", "spinb"], "{}", steps[3]);
    // A click on a root frame selects the executable's pseudo-function.
    assert_eq!(steps[5]["found"], json!(true), "{}", steps[5]);
    assert_eq!(steps[5]["selected"], json!("spinb"));
    assert_eq!(strings(&steps[5]["tableSelected"]), ["spinb"]);
}

/// `n` with thousands separators, as the page prints numbers.
fn format_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
