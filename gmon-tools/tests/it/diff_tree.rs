//! `gmon diff` of two recorded process trees (spec/diff.md §11): a shell script that runs two
//! programs, recorded twice (NEW runs a third program too, and one of the two from another
//! path): each executable is compared with its counterpart, paired by path or build id, with
//! one correction over them all, and the one only NEW ran is said so.

use serde_json::Value;

use crate::record::{compile_c, gmon_cmd, record_tree, text, two_spinning_programs};

#[test]
fn diff_of_process_trees_compares_each_executable() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_spinning_programs(dir.path());
    let c = compile_c(
        dir.path(),
        "spinc",
        "int main(void) { volatile long x = 0; for (long i = 0; i < 30000000; i++) x += i; \
         return 0; }\n",
        &[],
    );
    // NEW runs spina from another directory: the same build, paired by its build id.
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    std::fs::copy(&a, moved.join("spina")).unwrap();
    let base = record_tree(
        dir.path(),
        "base",
        &format!("{}; {}", a.display(), b.display()),
    );
    let new = record_tree(
        dir.path(),
        "new",
        &format!(
            "{}; {}; {}",
            moved.join("spina").display(),
            b.display(),
            c.display()
        ),
    );
    let diff = |extra: &[&str]| {
        gmon_cmd()
            .arg("diff")
            .args(extra)
            .arg("--base")
            .args(&base)
            .arg("--new")
            .args(&new)
            .output()
            .unwrap()
    };
    let json = diff(&["--json"]);
    assert!(matches!(json.status.code(), Some(0 | 1)), "{}", text(&json));
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["kind"], "process-tree", "{v}");
    let exes = v["executables"].as_array().unwrap();
    let roots: Vec<&str> = exes.iter().map(|e| e["root"].as_str().unwrap()).collect();
    // The shell ran on both sides too: its own executable, compared as well.
    assert!(roots.contains(&"spina") && roots.contains(&"spinb"), "{v}");
    let by = |root: &str| {
        exes.iter()
            .find(|e| e["root"] == root)
            .map(|e| e["matched_by"].as_str().unwrap().to_owned())
    };
    assert_eq!(by("spinb").as_deref(), Some("path"));
    assert_eq!(by("spina").as_deref(), Some("build-id"));
    // One correction over the whole tree: every executable's verdicts at the tree's level,
    // Holm over the entries all of them tested (spec/diff.md §4, §11).
    let tested: u64 = exes
        .iter()
        .map(|e| e["diff"]["tested"].as_u64().unwrap())
        .sum();
    for e in exes {
        assert_eq!(e["diff"]["level"], 0.05, "{e}");
        assert_eq!(e["diff"]["family"].as_u64(), Some(tested), "{e}");
        // Each executable's comparison is its own: its main holds its samples.
        let main = e["diff"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == "main");
        if e["root"] == "spina" || e["root"] == "spinb" {
            let main = main.unwrap_or_else(|| panic!("no main in {}", e["root"]));
            assert!(main["base"]["self_samples"].as_f64().unwrap() > 0.0, "{e}");
        }
    }
    // spinc ran only in NEW (and the shell, which may have no profile on a side where it
    // took no sample, may be one-sided too).
    let one_sided = |side: &str| -> Vec<String> {
        v[side]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["root"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(one_sided("only_new").contains(&"spinc".to_owned()), "{v}");
    assert!(!one_sided("only_base").contains(&"spinc".to_owned()), "{v}");
    let spinc = &v["only_new"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["root"] == "spinc")
        .unwrap();
    assert!(spinc["samples"].as_u64().unwrap() > 0, "{v}");
    // The table says the same in words, a heading per executable.
    let table = diff(&[]);
    let t = String::from_utf8_lossy(&table.stdout);
    assert!(t.contains("Only in NEW: spinc"), "{t}");
    assert!(
        t.contains("== spina (") && t.contains("the same build id"),
        "{t}"
    );
    assert!(t.contains("== spinb ("), "{t}");
    // Folded stacks: each executable's under its root.
    let folded = diff(&["--folded"]);
    assert!(folded.status.success(), "{}", text(&folded));
    let f = String::from_utf8_lossy(&folded.stdout);
    let counts = |root: &str| -> (u64, u64) {
        f.lines()
            .filter(|l| l.starts_with(&format!("{root};")))
            .map(|l| {
                let mut n = l.rsplitn(3, ' ').map(|x| x.parse::<u64>().unwrap_or(0));
                let new = n.next().unwrap();
                (n.next().unwrap(), new)
            })
            .fold((0, 0), |(b, n), (x, y)| (b + x, n + y))
    };
    let (ab, an) = counts("spina");
    assert!(ab > 0 && an > 0, "{f}");
    // The executable only NEW ran: its stacks with no samples in BASE.
    let (cb, cn) = counts("spinc");
    assert!(cb == 0 && cn > 0, "{f}");
    // The differential report: the same comparison, a root frame per executable.
    let html = dir.path().join("tree.html");
    let page = gmon_cmd()
        .args(["report", "--diff", "-o"])
        .arg(&html)
        .arg("--base")
        .args(&base)
        .arg("--new")
        .args(&new)
        .output()
        .unwrap();
    assert!(page.status.success(), "{}", text(&page));
    let r = page_data(&std::fs::read_to_string(&html).unwrap());
    check_tree_report(&r, &v);
}

/// The data a report page embeds (spec/report.md §2), parsed as the page parses it.
fn page_data(html: &str) -> Value {
    let start = "<script type=\"application/json\" id=\"gmon-data\">";
    let from = html.find(start).expect("the page embeds its data") + start.len();
    let to = from + html[from..].find("</script>").unwrap();
    serde_json::from_str(&html[from..to]).unwrap()
}

/// `gmon report --diff` of two trees says what `gmon diff --json` of them (`tree`) says: an
/// executable a root frame, each function's verdict that of its executable's comparison, the
/// noise model in the header, and the executable only NEW ran drawn red with its samples.
fn check_tree_report(r: &Value, tree: &Value) {
    assert_eq!(r["kind"], "diff");
    let x = &r["diff"];
    let exes = x["tree"].as_array().unwrap();
    let roots: Vec<&str> = exes.iter().map(|e| e["root"].as_str().unwrap()).collect();
    let pairs = tree["executables"].as_array().unwrap();
    assert_eq!(
        roots.len(),
        pairs.len()
            + tree["only_base"].as_array().unwrap().len()
            + tree["only_new"].as_array().unwrap().len(),
        "{roots:?}"
    );
    // The header: the model that ran, at the tree's level.
    let head = &x["head"];
    assert_eq!(head["model"], "sampling", "{head}");
    assert_eq!(head["dispersion"], 2.0, "{head}");
    assert_eq!(head["level"], 0.05, "{head}");
    let names = r["fn"]["name"].as_array().unwrap();
    let exe_of = r["fn"]["exe"].as_array().unwrap();
    let verdicts = ["change", "within-noise", "too-few-samples"];
    let fl = &r["flame"];
    let (parent, f, v, c) = (
        fl["parent"].as_array().unwrap(),
        fl["f"].as_array().unwrap(),
        fl["v"].as_array().unwrap(),
        fl["c"].as_array().unwrap(),
    );
    let palette = x["palette"].as_array().unwrap();
    for (k, e) in exes.iter().enumerate() {
        let root = e["root"].as_str().unwrap();
        // Its root frame: the pseudo-function named after it, at the top of the graph.
        let rf = e["f"].as_u64().unwrap() as usize;
        assert_eq!(names[rf], root);
        let node = f
            .iter()
            .zip(parent)
            .position(|(ff, p)| ff.as_u64() == Some(rf as u64) && p == 0)
            .unwrap_or_else(|| panic!("no root frame {root}"));
        let drawn = v[node].as_u64().unwrap();
        // Every row of it says it is in this executable.
        let rows: Vec<usize> = (0..names.len())
            .filter(|&i| exe_of[i].as_u64() == Some(k as u64))
            .collect();
        if let Some(d) = pairs.iter().find(|p| p["root"] == root) {
            assert_eq!(e["matched_by"], d["matched_by"]);
            assert_eq!(e["tested"], d["diff"]["tested"], "{root}");
            assert_eq!(e["changes"], d["diff"]["changes"], "{root}");
            // Each entry's verdict is the one gmon diff gave it.
            for entry in d["diff"]["entries"].as_array().unwrap() {
                let i = rows
                    .iter()
                    .copied()
                    .find(|&i| names[i] == entry["name"])
                    .unwrap_or_else(|| panic!("{root}: no row {}", entry["name"]));
                let vd = x["fn"]["vd"][i].as_i64().unwrap();
                assert_eq!(
                    verdicts[vd as usize], entry["verdict"],
                    "{root}: {}",
                    entry["name"]
                );
            }
            // NEW's stacks (samples outside every function are in no stack).
            assert!(
                drawn <= d["diff"]["new"]["samples"].as_u64().unwrap(),
                "{root}"
            );
        } else {
            // Only NEW ran it: its samples drawn, all red, its rows not compared.
            let only = tree["only_new"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["root"] == root)
                .unwrap_or_else(|| panic!("{root} is in no list"));
            assert_eq!(e["base_exe"], "");
            assert_eq!(e["new_exe"], only["executable"]);
            assert!(drawn > 0 && e["new_samples"] == drawn, "{e}");
            let below: Vec<&str> = (node + 1..parent.len())
                .take_while(|&i| parent[i].as_u64().unwrap() as usize > node)
                .map(|i| palette[c[i].as_u64().unwrap() as usize].as_str().unwrap())
                .collect();
            assert!(
                !below.is_empty() && below.iter().all(|c| *c == "rgb(255,100,100)"),
                "{below:?}"
            );
            for &i in rows.iter().filter(|&&i| i != rf) {
                assert_eq!(x["fn"]["vd"][i], -1, "{}", names[i]);
                assert_eq!(x["fn"]["st"][i], "added", "{}", names[i]);
            }
            let own: f64 = rows
                .iter()
                .map(|&i| x["fn"]["ns"][i].as_f64().unwrap())
                .sum();
            assert_eq!(own as u64, drawn, "{root}");
        }
    }
}
