//! `gmon diff` of two recorded process trees (spec/diff.md §11): a shell script that runs two
//! programs, recorded twice (NEW runs a third program too, and one of the two from another
//! path): each executable is compared with its counterpart, paired by path or build id, the
//! level shared among them, and the one only NEW ran is said so.

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
    // The level is shared among the executables compared.
    for e in exes {
        let level = e["diff"]["level"].as_f64().unwrap();
        assert!(
            (level - 0.05 / exes.len() as f64).abs() < 1e-12,
            "{level} {}",
            exes.len()
        );
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
    // The differential report does not draw a tree yet: it says so, rather than reading
    // every executable's profiles with the first one's.
    let page = gmon_cmd()
        .args(["report", "--diff", "-o"])
        .arg(dir.path().join("tree.html"))
        .arg("--base")
        .args(&base)
        .arg("--new")
        .args(&new)
        .output()
        .unwrap();
    assert!(!page.status.success(), "{}", text(&page));
    let said = String::from_utf8_lossy(&page.stderr);
    assert!(
        said.contains("process trees") && said.contains("gmon diff"),
        "{said}"
    );
    assert!(!dir.path().join("tree.html").exists());
}
