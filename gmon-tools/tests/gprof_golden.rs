//! Golden tests: `gmon gprof` against GNU gprof 2.40's own outputs.
//!
//! `testdata/gprof-goldens.sh` ran the real `/usr/bin/gprof` for every case and option set and
//! stored `<set>.out`, `<set>.err` and `<set>.status` under `testdata/cases/<case>/gprof/` (and
//! `testdata/cross.sh` the cross `<triplet>-gprof` under `testdata/cross/<case>/gprof/`), with
//! the exact command in `index.txt`. This harness makes one test per line of every `index.txt`:
//! it runs the `gmon` binary as `gmon gprof <same arguments>` in the case directory and compares
//!
//! * the exit status, exactly;
//! * stdout, byte for byte — except, when the command has no `-b`, the explanation blocks
//!   ("blurbs"), which are gprof's prose there and our own text here. Each blurb is replaced by
//!   one marker line in both outputs before comparing (rule below), and our blurbs are checked to
//!   be exactly [`gmon_tools::gprof::text::blurbs`]' texts (in the BSD layout the flat one follows
//!   `flat profile:`);
//! * stderr, exactly, after dropping getopt's usage text (gprof prints its usage synopsis, we
//!   print ours) — everything from a line starting with `Usage:` to the end.
//!
//! Blurb rule (FSF layout): the flat-profile blurb runs from the first empty line after the
//! flat profile's rows up to the form-feed line that starts the next section (a `\f` line
//! followed by a call-graph title or `Index by function name`) or to the end of the output; the
//! call-graph blurb runs from the line after the call graph's last dashed separator up to the
//! form-feed line before `Index by function name` (or the end). BSD layout (`-T`): a blurb is
//! what precedes the empty line before a `granularity:` line, back to the previous section
//! boundary (start of output, the `-i` lines, or the form-feed line that starts the section);
//! a form-feed line right before that empty line is kept.
//!
//! Goldens are never rewritten here (there is no bless mode): they come only from GNU gprof.
//! A golden listed in `index.txt` whose files are missing fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

use gmon_tools::gprof::text::blurbs;

const MARK: &str = "<<explanation>>";

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

fn is_title(l: &str) -> bool {
    l == "\t\t     Call graph (explanation follows)"
        || l == "\t\t\tCall graph"
        || l == "Index by function name"
}

/// A `-i` line such as `\t1 histogram record`.
fn is_info_line(l: &str) -> bool {
    let Some(rest) = l.strip_prefix('\t') else {
        return false;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.starts_with(" histogram record")
        || rest.starts_with(" call-graph record")
        || rest.starts_with(" basic-block count record")
}

/// Replaces each blurb with [`MARK`]; returns the masked text and the blurbs found.
fn mask(text: &str, bsd: bool) -> (String, Vec<String>) {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let bare = |i: usize| lines.get(i).map(|l| l.trim_end_matches('\n')).unwrap_or("");
    let n = lines.len();
    // Boundary after index i: the next "\f" line followed by a title, or the end.
    let boundary = |from: usize| {
        (from..n)
            .find(|&j| bare(j) == "\x0c" && is_title(bare(j + 1)))
            .unwrap_or(n)
    };
    let mut regions: Vec<(usize, usize)> = Vec::new();
    if !bsd {
        if let Some(h) = (0..n).find(|&i| bare(i).starts_with("  %   cumulative"))
            && let Some(s) = (h + 2..n).find(|&i| bare(i).is_empty())
        {
            regions.push((s, boundary(s)));
        }
        if let Some(t) = (0..n).find(|&i| bare(i) == "\t\t     Call graph (explanation follows)") {
            let e = boundary(t + 1);
            let d = (t..e)
                .rev()
                .find(|&i| bare(i) == "-----------------------------------------------");
            let s = match d {
                Some(d) => d + 1,
                None => (t..e)
                    .find(|&i| bare(i).starts_with("index % time"))
                    .map_or(e, |i| i + 1),
            };
            regions.push((s, e));
        }
    } else {
        for g in (0..n).filter(|&i| bare(i).starts_with("granularity: each sample hit covers")) {
            let Some(empty) = g.checked_sub(1) else {
                continue;
            };
            let prev_end = (0..g).rev().find(|&k| {
                bare(k) == "-----------------------------------------------"
                    || is_info_line(bare(k))
            });
            let mut s = prev_end.map_or(0, |k| k + 1);
            if prev_end.is_some_and(|k| bare(k).starts_with('-')) && bare(s).is_empty() {
                s += 1;
            }
            if bare(s) == "\x0c" {
                s += 1;
            }
            let e = if empty >= 1 && bare(empty - 1) == "\x0c" {
                empty - 1
            } else {
                empty
            };
            regions.push((s, e));
        }
    }
    regions.sort();
    let mut out = String::new();
    let mut found = Vec::new();
    let mut i = 0;
    for (s, e) in regions {
        if s < i || e < s {
            continue;
        }
        out.extend(lines[i..s].iter().copied());
        if e > s {
            out.push_str(MARK);
            out.push('\n');
            found.push(lines[s..e].concat());
        }
        i = e;
    }
    out.extend(lines[i..].iter().copied());
    (out, found)
}

fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let first = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let mut s = format!(
        "first difference at line {} (expected {} lines, got {}):\n",
        first + 1,
        e.len(),
        a.len()
    );
    let lo = first.saturating_sub(3);
    for (i, l) in e.iter().enumerate().take(first + 4).skip(lo) {
        s.push_str(&format!("-{:5} {l:?}\n", i + 1));
    }
    for (i, l) in a.iter().enumerate().take(first + 4).skip(lo) {
        s.push_str(&format!("+{:5} {l:?}\n", i + 1));
    }
    s
}

fn strip_usage(s: &str) -> String {
    let mut out = String::new();
    for l in s.split_inclusive('\n') {
        if l.starts_with("Usage:") {
            break;
        }
        out.push_str(l);
    }
    out
}

fn check(case_dir: &Path, name: &str, argv: &[String]) -> Result<(), Failed> {
    let gdir = case_dir.join("gprof");
    let read = |ext: &str| -> Result<Vec<u8>, Failed> {
        std::fs::read(gdir.join(format!("{name}.{ext}")))
            .map_err(|e| format!("golden {name}.{ext}: {e}").into())
    };
    let (exp_out, exp_err, exp_status) = (read("out")?, read("err")?, read("status")?);
    let exp_status: i32 = String::from_utf8_lossy(&exp_status)
        .trim()
        .parse()
        .map_err(|_| "bad .status file")?;
    let output = Command::new(env!("CARGO_BIN_EXE_gmon"))
        .arg("gprof")
        .args(argv)
        .current_dir(case_dir)
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| format!("cannot run gmon: {e}"))?;
    let status = output.status.code().unwrap_or(-1);
    let mut problems = Vec::new();
    if status != exp_status {
        problems.push(format!("exit status {status}, gprof's {exp_status}"));
    }
    let brief = argv.iter().any(|a| {
        a == "-b"
            || a == "--brief"
            || (a.starts_with('-') && !a.starts_with("--") && a[1..].starts_with('b'))
    });
    let bsd = argv
        .iter()
        .any(|a| a == "-T" || a == "--traditional" || a == "-bT" || a == "-Tb");
    let (exp, got) = (
        String::from_utf8_lossy(&exp_out),
        String::from_utf8_lossy(&output.stdout),
    );
    if brief {
        if exp_out != output.stdout {
            problems.push(format!("stdout differs\n{}", diff(&exp, &got)));
        }
    } else {
        let (me, eb) = mask(&exp, bsd);
        let (mg, gb) = mask(&got, bsd);
        if me != mg {
            problems.push(format!(
                "stdout differs outside the explanations\n{}",
                diff(&me, &mg)
            ));
        } else if eb.len() != gb.len() {
            problems.push(format!(
                "{} explanation blocks, gprof has {}",
                gb.len(),
                eb.len()
            ));
        } else {
            // The prose is ours, but its form feeds are where gprof has them: tools such as
            // gprof2dot split reports at form feeds.
            for (e, g) in eb.iter().zip(&gb) {
                let ff = |s: &str| s.matches('\x0c').count();
                if ff(e) != ff(g) {
                    problems.push(format!(
                        "an explanation block has {} form feeds, gprof's has {}",
                        ff(g),
                        ff(e)
                    ));
                }
            }
            let bsd_flat = format!("\n\n\nflat profile:\n{}", blurbs::FLAT);
            for b in &gb {
                let ours = if bsd {
                    *b == bsd_flat || b == blurbs::BSD_CALLG
                } else {
                    b == blurbs::FLAT || b == blurbs::FSF_CALLG
                };
                if !ours {
                    problems.push(format!("unexpected explanation block {b:?}"));
                }
            }
        }
    }
    let (ee, ge) = (
        strip_usage(&String::from_utf8_lossy(&exp_err)),
        strip_usage(&String::from_utf8_lossy(&output.stderr)),
    );
    if ee != ge {
        problems.push(format!("stderr differs\n{}", diff(&ee, &ge)));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    // testdata/cases: x86-64 (GNU gprof); testdata/cross: other architectures, whose goldens
    // testdata/cross.sh wrote with each target's own `<triplet>-gprof`.
    let mut dirs: Vec<PathBuf> = ["cases", "cross"]
        .iter()
        .flat_map(|d| std::fs::read_dir(testdata().join(d)).into_iter().flatten())
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    dirs.sort();
    // `case/set` names whose difference from GNU is known and explained in the file.
    let known_text =
        std::fs::read_to_string(testdata().join("cross/known-mismatches.txt")).unwrap_or_default();
    let known_mismatches: Vec<&str> = known_text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for dir in dirs {
        let Ok(index) = std::fs::read_to_string(dir.join("gprof/index.txt")) else {
            continue;
        };
        let case = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for line in index.lines() {
            let Some((name, cmd)) = line.split_once('\t') else {
                continue;
            };
            let argv: Vec<String> = cmd
                .split(' ')
                .skip(1)
                .filter(|w| !w.is_empty())
                .map(String::from)
                .collect();
            let (dir, name2) = (dir.clone(), name.to_string());
            let test = format!("{case}/{name}");
            let known = known_mismatches.iter().any(|k| *k == test);
            trials.push(Trial::test(test, move || {
                let r = check(&dir, &name2, &argv);
                if !known {
                    return r;
                }
                // A known difference must still be there: when it is fixed, the list must
                // shrink (the golden then counts as an ordinary one).
                match r {
                    Err(_) => Ok(()),
                    Ok(()) => Err("listed in testdata/cross/known-mismatches.txt but now \
                                   matches: remove it from the list"
                        .into()),
                }
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
