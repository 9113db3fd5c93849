//! `gmon report` opened in a real browser (Debian's chromium, headless): the page loads with no
//! error and no request, the table sorts, search highlights frames, a click on a frame selects
//! its function, and the call graph shows a known function's callers with their exact counts;
//! for a -pg program, a `gmon record` run of python3 and a 20,000-function profile.
//!
//! The page has a test hook: `#test=<JSON actions>` makes it run the actions through its real
//! event handlers (clicks on the canvas at a frame's place, clicks on column headers, typing in
//! the search box) and write what it then shows into a hidden `<pre>`, which
//! `chromium --dump-dom` prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_format::{CallArc, Dimension, Encoding, Histogram, ProfRate, Profile, Record};
use serde_json::{Value, json};

use crate::common::{self, case_dir, gmon, run_ok};

/// The browser, or `None` (said as a skip) when none is installed.
pub(crate) fn chromium(test: &str) -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(o) = Command::new("which").arg(name).output()
            && o.status.success()
        {
            return Some(PathBuf::from(String::from_utf8(o.stdout).ok()?.trim()));
        }
    }
    common::skip(test, "no chromium installed (apt-get install chromium)");
    None
}

/// Opens `page` headless with the test hook running `actions`; returns what the hook wrote.
pub(crate) fn open(browser: &Path, page: &Path, actions: &Value) -> Value {
    let profile = tempfile::tempdir().unwrap();
    let hash: String = actions
        .to_string()
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let url = format!("file://{}#test={hash}", page.display());
    let o = Command::new(browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--window-size=1280,900",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", &url])
        // No session bus here: without this, chromium waits for one on every start.
        .env("DBUS_SESSION_BUS_ADDRESS", "disabled:")
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"gmon-test-result\">")
        .unwrap_or_else(|| {
            panic!(
                "the page wrote no test result; stderr:\n{}\nDOM:\n{}",
                String::from_utf8_lossy(&o.stderr),
                &dom[..dom.len().min(4000)]
            )
        });
    let text = &dom[start + "<pre id=\"gmon-test-result\">".len()..];
    let text = &text[..text.find("</pre>").unwrap()];
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["errors"], json!([]), "errors on the page: {v}");
    assert_eq!(v["violations"], json!([]), "requests the page tried: {v}");
    assert_eq!(v["resources"], json!(0), "resources loaded: {v}");
    v
}

/// `gmon report ARGS... -o DIR/NAME`, checked to be one self-contained file.
pub(crate) fn report(dir: &Path, name: &str, args: &[&Path]) -> PathBuf {
    let out = dir.join(name);
    run_ok(gmon().arg("report").args(args).arg("-o").arg(&out));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("content=\"default-src 'none'; script-src 'sha256-"),
        "no policy forbidding requests"
    );
    for outside in ["src=\"", "href=\"http", "url(", "@import"] {
        assert!(!html.contains(outside), "the page names {outside}");
    }
    out
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The fill of each frame of `gmon flame`'s SVG, by function name.
pub(crate) fn flame_colours(svg: &str, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| {
            let at = svg.find(&format!("<title>{n} (")).unwrap();
            let fill = &svg[at..][svg[at..].find("fill=\"").unwrap() + 6..];
            fill[..fill.find('"').unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn report_of_a_pg_program_sorts_searches_selects_and_shows_exact_callers() {
    let Some(browser) = chromium("report_of_a_pg_program") else {
        return;
    };
    let case = case_dir("multifile-pie-O0");
    let dir = tempfile::tempdir().unwrap();
    let (prog, profile) = (case.join("prog"), case.join("gmon.out"));
    let page = report(dir.path(), "mf.html", &[&prog, &profile]);
    let names = ["main", "util_mix", "helper [util.c]"];
    let v = open(
        &browser,
        &page,
        &json!([
            {"sort": "calls", "dir": "desc", "rows": 12},
            {"sort": "name", "dir": "asc", "rows": 12},
            {"search": "util"},
            {"clickFrame": "util_mix"},
            {"view": "icicle"},
            {"clickRow": "helper [util.c]"},
            {"colours": names},
        ]),
    );
    let steps = v["steps"].as_array().unwrap();
    // Sorted by calls, descending: gprof's counts (80,000 ... 640,000), exact.
    let calls: Vec<i64> = steps[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r[5].as_str()
                .unwrap()
                .replace(',', "")
                .parse()
                .unwrap_or(-1)
        })
        .collect();
    assert_eq!(calls[0], 640_000, "{}", steps[0]);
    assert!(calls.windows(2).all(|w| w[0] >= w[1]), "{calls:?}");
    let by_name = strings(&steps[1]["order"]);
    let mut sorted = by_name.clone();
    sorted.sort();
    assert_eq!(by_name, sorted);
    // Search: util_mix, util_hash and util_checksum, helper [util.c] under two callers.
    assert!(steps[2]["matched"].as_u64().unwrap() >= 4, "{}", steps[2]);
    assert!(
        steps[2]["status"]
            .as_str()
            .unwrap()
            .contains("frames match"),
        "{}",
        steps[2]
    );
    // A click on util_mix's frame selects it in the table and the call graph.
    assert_eq!(steps[3]["found"], json!(true));
    assert_eq!(steps[3]["selected"], json!("util_mix"));
    assert_eq!(strings(&steps[3]["tableSelected"]), ["util_mix"]);
    assert_eq!(steps[3]["details"], json!("util_mix"));
    assert_eq!(steps[3]["callers"][0][0], json!("stage_transform"));
    assert_eq!(steps[3]["callers"][0][1], json!("320,000"));
    // The call graph of helper [util.c] (gprof -q: 320000/640000 from each of util_hash and
    // util_mix), and its hot lines (the program has DWARF).
    assert_eq!(steps[5]["selected"], json!("helper [util.c]"));
    let callers: Vec<(String, String)> = steps[5]["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        callers,
        [
            ("util_hash".to_owned(), "320,000".to_owned()),
            ("util_mix".to_owned(), "320,000".to_owned())
        ]
    );
    assert!(
        steps[5]["lines"][0][0]
            .as_str()
            .unwrap()
            .starts_with("util.c:"),
        "{}",
        steps[5]
    );
    // The same colours as gmon flame's.
    let svg =
        String::from_utf8(run_ok(gmon().arg("flame").arg(&prog).arg(&profile)).stdout).unwrap();
    assert_eq!(strings(&steps[6]["colours"]), flame_colours(&svg, &names));
}

/// Issue 29: the hot lines of a function say which were code inlined into it, from which
/// function and line, into which line of it (testdata inlined-pie-O2: mix(), inlined.c:9-15,
/// inlined into work() at line 21; gprof -l credits "mix (inlined.c:11)" and the like).
#[test]
fn report_hot_lines_say_where_code_was_inlined_from() {
    let Some(browser) = chromium("report_hot_lines_say_where_code_was_inlined_from") else {
        return;
    };
    let case = case_dir("inlined-pie-O2");
    let dir = tempfile::tempdir().unwrap();
    let page = report(
        dir.path(),
        "inlined.html",
        &[&case.join("prog"), &case.join("gmon.out")],
    );
    let v = open(&browser, &page, &json!([{"clickRow": "work"}]));
    let step = &v["steps"][0];
    assert_eq!(step["selected"], json!("work"));
    let rows: Vec<Vec<String>> = step["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(strings)
        .collect();
    let inlined: Vec<&Vec<String>> = rows.iter().filter(|r| !r[3].is_empty()).collect();
    assert!(!inlined.is_empty(), "no hot line is inlined code: {rows:?}");
    for r in &inlined {
        // The line is mix's own, and the chain ends at work's call of it.
        let line: u32 = r[0].strip_prefix("inlined.c:").unwrap().parse().unwrap();
        assert!((9..=15).contains(&line), "{r:?}");
        assert_eq!(
            r[3],
            format!("inlined from mix at inlined.c:{line} into work at inlined.c:21"),
            "{rows:?}"
        );
    }
    // The inlined lines have most of work's samples (as gprof -l credits them).
    let samples = |rs: &mut dyn Iterator<Item = &Vec<String>>| -> f64 {
        rs.map(|r| r[1].parse::<f64>().unwrap()).sum()
    };
    let all = samples(&mut rows.iter());
    assert!(samples(&mut inlined.into_iter()) * 2.0 > all, "{rows:?}");
}

#[test]
fn report_flame_graph_draws_inlined_functions_above_the_function_that_holds_them() {
    let Some(browser) = chromium("report_flame_graph_draws_inlined_functions") else {
        return;
    };
    let case = case_dir("inlined-pie-O2");
    let args = [case.join("prog"), case.join("gmon.out")];
    let dir = tempfile::tempdir().unwrap();
    let page = report(
        dir.path(),
        "inlined-flame.html",
        &[args[0].as_path(), args[1].as_path()],
    );
    // What `gmon flame` draws: the samples of the stacks ending in mix inlined into work.
    // (Before inline frames, the report drew work alone, with all 16.)
    let folded = run_ok(gmon().args(["flame", "--folded"]).args(&args));
    let folded = String::from_utf8(folded.stdout).unwrap();
    let in_mix: u64 = folded
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(stack, _)| stack.ends_with(";work;mix [inlined]"))
        .map(|(_, n)| n.parse::<u64>().unwrap())
        .sum();
    assert!(in_mix > 0, "{folded}");
    let v = open(&browser, &page, &json!([{"frames": true}]));
    let frames = v["steps"][0]["frames"].as_array().unwrap();
    let named = |name: &str| -> Vec<(f64, f64)> {
        frames
            .iter()
            .filter(|f| f[0] == json!(name))
            .map(|f| (f[1].as_f64().unwrap(), f[2].as_f64().unwrap()))
            .collect()
    };
    let mix = named("mix [inlined]");
    let work = named("work");
    assert_eq!(mix.len(), 1, "{frames:?}");
    assert_eq!(work.len(), 1, "{frames:?}");
    let ((mx, mw), (wx, ww)) = (mix[0], work[0]);
    // The same split as `gmon flame`'s, to the rounding of one sample: the report credits
    // lines (its hot lines need them), which cuts the histogram's pieces at line starts.
    assert!((mw as u64).abs_diff(in_mix) <= 1, "{in_mix} in {frames:?}");
    // Above work, inside its width: work keeps every sample, mix takes part of them.
    assert!(wx <= mx && mx + mw <= wx + ww, "{frames:?}");
    assert!(mw < ww, "{frames:?}");
}

#[test]
fn report_of_a_recorded_python3_run_shows_its_executable_and_sampled_callers() {
    let Some(browser) = chromium("report_of_a_recorded_python3_run") else {
        return;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        common::skip(
            "report_of_a_recorded_python3_run",
            "python3 is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("py.out");
    let script = "s=0\nfor i in range(1500000): s+=i*i%7\nprint(s)";
    run_ok(
        gmon()
            .args(["record", "-q", "-o"])
            .arg(&out)
            .args(["--", "python3", "-c", script]),
    );
    let page = report(dir.path(), "py.html", &[&out]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("\"stacks\":\"exact\""), "not exact stacks");
    let v = open(
        &browser,
        &page,
        &json!([
            {"sort": "self", "dir": "desc", "rows": 5},
            {"search": "PyEval"},
            {"clickFrame": "_PyEval_EvalFrameDefault"},
        ]),
    );
    let steps = v["steps"].as_array().unwrap();
    assert!(steps[1]["matched"].as_u64().unwrap() > 0, "{}", steps[1]);
    assert_eq!(steps[2]["found"], json!(true), "{}", steps[0]);
    assert_eq!(steps[2]["selected"], json!("_PyEval_EvalFrameDefault"));
    // Self samples are those of the stacks ending in a function, shared libraries' included
    // (before: 0 everywhere, the executable's histogram alone, which a python3 that runs in
    // libpython does not reach).
    let top_self: u64 = steps[0]["rows"][0][1]
        .as_str()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(top_self > 0, "{}", steps[0]);
    // The runtime counts no calls: callers come from the sampled stacks, without counts.
    let callers = steps[2]["callers"].as_array().unwrap();
    assert!(!callers.is_empty(), "{}", steps[2]);
    assert!(
        callers.iter().all(|r| r[1] == json!("\u{2014}")),
        "{callers:?}"
    );
    // The header lists the recorded executable.
    assert!(
        html.contains("\"processes\":[{\"exe\":\""),
        "no recorded executable"
    );
}

/// Functions of the large program; index [`LARGE`] is `main`.
const LARGE: usize = 20_000;

/// Functions per layer of the large program's call graph.
const WIDTH: usize = 4000;

/// The large program's 64,000 arcs (caller, callee, count): 5 layers of 4,000 functions, main
/// calls the first, each function of the first three calls four of the next layer, of the
/// fourth three. Real call graphs are about this deep; much deeper ones make stack estimation
/// (not the report) the slow part.
fn large_arcs() -> Vec<(usize, usize, u64)> {
    let mut arcs: Vec<(usize, usize, u64)> = (0..WIDTH).map(|i| (LARGE, i, 1)).collect();
    for i in 0..LARGE - WIDTH {
        let next = (i / WIDTH + 1) * WIDTH;
        for k in 0..if i < 3 * WIDTH { 4 } else { 3 } {
            let to = next + (i * 7 + k * 331) % WIDTH;
            arcs.push((i, to, (i as u64 % 5 + 1) * (k as u64 + 1)));
        }
    }
    arcs
}

/// A 20,000-function executable (assembled: each function calls `mcount` first, as -pg code
/// does) and a profile with a sample in every function and 64,000 arcs.
fn large_program(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    const N: usize = LARGE;
    let mut asm = String::from(".text\n.globl mcount\n.type mcount,@function\nmcount: ret\n");
    for i in 0..N {
        asm.push_str(&format!(
            ".globl f{i}\n.type f{i},@function\nf{i}:\ncall mcount\nnop\nnop\nnop\nnop\nnop\n\
             nop\nnop\nnop\nnop\nnop\nret\n.size f{i}, .-f{i}\n"
        ));
    }
    asm.push_str(".globl main\n.type main,@function\nmain:\ncall mcount\nxor %eax,%eax\nret\n.size main, .-main\n");
    let src = dir.join("big.s");
    std::fs::write(&src, asm).unwrap();
    let exe = dir.join("big");
    let o = Command::new("gcc")
        .args(["-no-pie", "-o"])
        .arg(&exe)
        .arg(&src)
        .output();
    match o {
        Ok(o) if o.status.success() => {}
        _ => {
            common::skip("large_report", "gcc cannot assemble the large program");
            return None;
        }
    }
    let nm = Command::new("nm").arg(&exe).output().unwrap();
    let mut addr = vec![0u64; N + 1];
    for line in String::from_utf8_lossy(&nm.stdout).lines() {
        let mut w = line.split_whitespace();
        let (Some(a), Some(_), Some(name)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        let a = u64::from_str_radix(a, 16).unwrap();
        if name == "main" {
            addr[N] = a;
        } else if let Some(i) = name.strip_prefix('f').and_then(|n| n.parse::<usize>().ok()) {
            addr[i] = a;
        }
    }
    // Each function is 16 bytes; bins of 4 bytes, 1 to 9 samples in each function's body.
    let (low, high) = (addr[0], addr[N - 1] + 16);
    let mut bins = vec![0u64; ((high - low) / 4) as usize];
    for (i, &a) in addr[..N].iter().enumerate() {
        bins[((a + 8 - low) / 4) as usize] = 1 + (i as u64 * 2_654_435_761 % 9);
    }
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records.push(Record::Histogram(Histogram {
        low_pc: low,
        high_pc: high,
        prof_rate: ProfRate(100),
        dimension: Dimension::SECONDS,
        bins,
    }));
    for &(from, to, count) in &large_arcs() {
        p.records.push(Record::CallArc(CallArc {
            // An address inside the caller, and the return address of the callee's mcount call.
            from_pc: addr[from] + 5,
            self_pc: addr[to] + 5,
            count,
        }));
    }
    let gmon_out = dir.join("gmon.out");
    std::fs::write(&gmon_out, gmon_format::to_vec(&p).unwrap()).unwrap();
    Some((exe, gmon_out))
}

#[test]
fn large_report_of_20000_functions_opens_sorts_and_selects() {
    let Some(browser) = chromium("large_report") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, profile)) = large_program(dir.path()) else {
        return;
    };
    let page = report(dir.path(), "big.html", &[&exe, &profile]);
    let size = std::fs::metadata(&page).unwrap().len();
    // Compact data: names once, columns of numbers (measured: see the commit message).
    assert!(size < 8 << 20, "{size} bytes");
    let v = open(
        &browser,
        &page,
        &json!([
            {"sort": "calls", "dir": "desc", "rows": 5},
            {"filter": "f1999"},
            {"clickRow": "f19999"},
            {"filter": ""},
            {"search": "/^f1/"},
            {"clickFrame": "main"},
        ]),
    );
    let steps = v["steps"].as_array().unwrap();
    assert!(steps[0]["order"].as_array().unwrap().len() == 5);
    assert_eq!(steps[1]["rows"], json!(11), "{}", steps[1]);
    // f19999's callers with their counts, as the profile has them (repeated arcs summed).
    let mut expected: std::collections::BTreeMap<String, u64> = Default::default();
    for (from, to, count) in large_arcs() {
        if to == LARGE - 1 {
            let name = if from == LARGE {
                "main".to_owned()
            } else {
                format!("f{from}")
            };
            *expected.entry(name).or_insert(0) += count;
        }
    }
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|(n, c)| (n, c.to_string()))
        .collect();
    assert_eq!(steps[2]["selected"], json!("f19999"));
    let mut callers: Vec<(String, String)> = steps[2]["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()))
        .collect();
    callers.sort();
    assert_eq!(callers, expected);
    assert!(steps[4]["matched"].as_u64().unwrap() > 0, "{}", steps[4]);
    assert_eq!(steps[5]["found"], json!(true), "{}", steps[5]);
    assert_eq!(steps[5]["selected"], json!("main"));
    eprintln!(
        "large report: {size} bytes, first view {} ms after navigation ({} ms in the script)",
        v["loadMs"], v["scriptMs"]
    );
}

#[test]
fn report_to_stdout_with_dash_and_default_name_announced() {
    let case = case_dir("cycle-pie-O0");
    let dir = tempfile::tempdir().unwrap();
    let o = run_ok(
        gmon()
            .arg("report")
            .arg(case.join("prog"))
            .arg(case.join("gmon.out"))
            .args(["-o", "-"]),
    );
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(html.contains("<cycle 1>") || html.contains("\\u003ccycle 1>"));
    let o = run_ok(
        gmon()
            .current_dir(dir.path())
            .arg("report")
            .arg(case.join("prog"))
            .arg(case.join("gmon.out")),
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("wrote profile.html (no -o given)"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dir.path().join("profile.html").is_file());
}
