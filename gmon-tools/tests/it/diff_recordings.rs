//! `gmon diff` of several recordings of a process tree per side (spec/diff.md §11,
//! "Recordings"): each recording's profile of an executable is one run, and the runs of a side
//! are compared by the several-runs model (§3), not summed into one. Three recordings a side of
//! `sh -c 'burn H C; other'`, where `burn` spends H and C seconds of CPU in `hot` and `cold`:
//! `hot`'s share spreads from 35% to 65% between BASE's recordings and from 50% to 80% between
//! NEW's. Summed, 50% against 65% of about 1,200 samples a side is a change many times over
//! (z ≈ 4.6 with the dispersion one profile per side assumes); the runs say their spread is
//! that large, and 15 points are within it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::record::{compile_c, gmon_cmd, text};

const BURN: &str = r#"
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
#define BURNER(name)                                                              \
    __attribute__((noinline)) void name(double s) {                               \
        double t0 = cpu();                                                        \
        unsigned long x = 88172645463325252UL;                                    \
        while (cpu() - t0 < s)                                                    \
            for (int i = 0; i < 20000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; } \
        sink = x;                                                                 \
    }
BURNER(hot)
BURNER(cold)
int main(int argc, char **argv) {
    hot(atof(argv[1]));
    cold(atof(argv[2]));
    return 0;
}
"#;

/// Records `sh -c SCRIPT` at 1 kHz as `dir/name/OUT` and returns the profiles it wrote.
fn record(dir: &Path, name: &str, script: &str) -> Vec<PathBuf> {
    let rec = dir.join(name);
    std::fs::create_dir(&rec).unwrap();
    let run = gmon_cmd()
        .args(["record", "-q", "--hz", "1000", "-o"])
        .arg(rec.join("OUT"))
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&rec)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_none_or(|x| x != "gmonx"))
        .collect();
    files.sort();
    files
}

#[test]
fn several_recordings_a_side_are_the_runs_of_each_executable() {
    let dir = tempfile::tempdir().unwrap();
    let burn = compile_c(dir.path(), "burn", BURN, &["-O1"]);
    let other = compile_c(
        dir.path(),
        "other",
        &BURN.replace("hot(atof(argv[1]))", "hot(0.03)"),
        &["-O1"],
    );
    let extra = compile_c(
        dir.path(),
        "extra",
        // Other code than `other`'s: another build, not one executable at two paths.
        &BURN.replace("hot(atof(argv[1]))", "hot(0.02)"),
        &["-O1"],
    );
    let run = |hot: f64, with_other: bool, with_extra: bool| {
        let mut s = format!("{} {hot} {}", burn.display(), 0.4 - hot);
        if with_other {
            s += &format!("; {} 0 0.02", other.display());
        }
        if with_extra {
            s += &format!("; {} 0 0.02", extra.display());
        }
        s
    };
    // `other` is missing from BASE's third recording; `extra` ran in NEW's third only.
    let mut base = Vec::new();
    for (k, hot) in [0.14, 0.2, 0.26].into_iter().enumerate() {
        base.extend(record(
            dir.path(),
            &format!("b{k}"),
            &run(hot, k < 2, false),
        ));
    }
    let mut new = Vec::new();
    for (k, hot) in [0.2, 0.26, 0.32].into_iter().enumerate() {
        new.extend(record(
            dir.path(),
            &format!("n{k}"),
            &run(hot, true, k == 2),
        ));
    }
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
    let exe = |root: &str| -> &Value {
        v["executables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["root"] == root)
            .unwrap_or_else(|| panic!("no {root} in {v}"))
    };
    // Three runs a side, compared by the several-runs model.
    let b = &exe("burn")["diff"];
    assert_eq!(b["model"], "run-to-run", "{b}");
    assert_eq!(b["base"]["profiles"].as_array().unwrap().len(), 3, "{b}");
    assert_eq!(b["new"]["profiles"].as_array().unwrap().len(), 3, "{b}");
    let hot = b["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "hot")
        .unwrap_or_else(|| panic!("no hot in {b}"));
    let delta = hot["delta_share"].as_f64().unwrap();
    assert!((0.08..0.22).contains(&delta), "{hot}");
    // The runs spread as much as the change: noise, where the summed sides called it a change.
    assert!(hot["dispersion"].as_f64().unwrap() > 4.0, "{hot}");
    assert_eq!(hot["verdict"], "within-noise", "{hot}");
    let outs = |side: &str, names: &[&str]| {
        let got: Vec<&str> = v[side]
            .as_array()
            .unwrap_or_else(|| panic!("no {side} in {v}"))
            .iter()
            .map(|o| o.as_str().unwrap())
            .collect();
        let want: Vec<String> = names
            .iter()
            .map(|n| dir.path().join(n).join("OUT").display().to_string())
            .collect();
        assert_eq!(got, want, "{v}");
    };
    outs("base_recordings", &["b0", "b1", "b2"]);
    outs("new_recordings", &["n0", "n1", "n2"]);
    // An executable missing from one recording of a side: compared on the recordings it ran
    // in, and the other named.
    let o = exe("other");
    assert_eq!(
        o["diff"]["base"]["profiles"].as_array().unwrap().len(),
        2,
        "{o}"
    );
    let b2 = dir.path().join("b2").join("OUT").display().to_string();
    assert_eq!(o["absent_from_base"], serde_json::json!([b2]), "{o}");
    assert_eq!(o["absent_from_new"], serde_json::json!([]), "{o}");
    // One NEW ran in one recording only: not compared, and said so.
    let only: Vec<&Value> = v["only_new"].as_array().unwrap().iter().collect();
    let x = only
        .iter()
        .find(|o| o["root"] == "extra")
        .unwrap_or_else(|| panic!("no extra in {v}"));
    assert_eq!(x["recordings"], 1, "{x}");
    assert_eq!(x["absent_from"].as_array().unwrap().len(), 2, "{x}");
    // The gate agrees: 15 points within the runs' spread do not fail it.
    let gate = diff(&["--fail-above", "5"]);
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));
    // The table says the recordings and the model in words.
    let t = diff(&[]);
    let t = String::from_utf8_lossy(&t.stdout);
    assert!(t.contains("BASE: 3 recordings ("), "{t}");
    assert!(
        t.contains("In BASE it ran in 2 of 3 recordings, not in "),
        "{t}"
    );
    assert!(
        t.contains("measured between the profiles of each side"),
        "{t}"
    );
    // The differential report: the same model in its header.
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
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains("\"model\":\"run-to-run\""),
        "no run-to-run in the page"
    );
    // The differential flame graph takes the same sides (before, it refused more than one
    // profile a side): a root per executable, each tested by its runs' spread, `burn`'s hot
    // grey, the executable only NEW ran red.
    let svg = gmon_cmd()
        .args(["flame", "--diff", "--minwidth", "0", "--base"])
        .args(&base)
        .arg("--new")
        .args(&new)
        .output()
        .unwrap();
    assert!(svg.status.success(), "{}", text(&svg));
    let svg = String::from_utf8(svg.stdout).unwrap();
    for words in [
        "burn: run-to-run spread measured between 3 runs a side (dispersion ",
        "other: run-to-run spread measured between 2 runs in BASE and 3 in NEW",
        "grey = within noise",
    ] {
        assert!(svg.contains(words), "no {words:?} in {svg}");
    }
    // Each frame as (title, fill).
    let frames: Vec<(&str, &str)> = svg
        .split("<g><title>")
        .skip(1)
        .filter_map(|g| {
            let (title, rest) = g.split_once("</title>")?;
            let fill = rest.split_once("fill=\"")?.1.split_once('"')?.0;
            Some((title, fill))
        })
        .collect();
    let samples = |t: &str| -> u64 {
        let n = t.split_once(" (").map_or("", |x| x.1);
        n.split(' ')
            .next()
            .unwrap_or("")
            .replace(',', "")
            .parse()
            .unwrap_or(0)
    };
    let (hot, fill) = frames
        .iter()
        .filter(|(t, _)| t.starts_with("hot ("))
        .max_by_key(|(t, _)| samples(t))
        .unwrap_or_else(|| panic!("no hot in {svg}"));
    assert!(hot.ends_with(": within noise"), "{hot}");
    assert_eq!(*fill, "rgb(200,200,200)", "{hot}");
    let appeared: Vec<&(&str, &str)> = frames
        .iter()
        .filter(|(t, _)| t.ends_with("only one side has samples here: not tested"))
        .collect();
    assert!(!appeared.is_empty(), "{svg}");
    for (t, fill) in appeared {
        assert!(fill.starts_with("rgb(255,"), "{t}: {fill}");
    }
}
