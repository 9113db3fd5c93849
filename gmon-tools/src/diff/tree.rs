//! Comparing two recorded process trees (spec/diff.md §11): `gmon record` writes one profile
//! per executable of the process tree, each naming its executable in its runtime sidecar. Each
//! side's profiles are told into recordings (`recordings.rs`) and grouped by executable: within
//! one recording an executable's profiles are summed (parts of one run, as `gmon report OUT
//! OUT.*` reads them), across recordings they are the several runs of spec/diff.md §3. The
//! executables of the two sides are paired (same path, else same build id, else the same file
//! name when it is the only one of that name on each side), and every pair is compared as one
//! program would be, with Tarone's family and Holm's correction over the entries of every pair
//! together, so that the chance of any false change in the whole tree stays at the level. An
//! executable on one side only is said so, with its profiles and samples, and not compared; one
//! that ran in some recordings of a side only is compared on the recordings it ran in, and the
//! others are named.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::recordings::Recording;
use super::text::{PrintOptions, print_text};
use super::{Diff, JSON_VERSION};

/// One side's profiles of one executable.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The executable the profiles' sidecars name.
    pub executable: PathBuf,
    /// Its build id as the sidecar records it (hex), when it does.
    pub build_id: Option<String>,
    /// Its profiles, one list per recording of the side it ran in, in the order given: the
    /// profiles of one recording are one run (summed), the recordings its runs.
    pub runs: Vec<Vec<PathBuf>>,
    /// The recordings of the side it did not run in (their `OUT`).
    pub absent_from: Vec<PathBuf>,
    /// The samples their sidecars counted.
    pub samples: u64,
}

impl Recorded {
    /// All its profiles, run after run.
    pub fn profiles(&self) -> impl Iterator<Item = &PathBuf> {
        self.runs.iter().flatten()
    }
}

/// The executables of a side's recordings, in the order first named: each with its profiles
/// per recording it ran in, and the recordings it did not.
pub fn by_executable(recordings: &[Recording]) -> Vec<Recorded> {
    let mut groups: Vec<Recorded> = Vec::new();
    for (k, r) in recordings.iter().enumerate() {
        for f in &r.files {
            let g = match groups.iter().position(|g| g.executable == f.executable) {
                Some(g) => &mut groups[g],
                None => {
                    groups.push(Recorded {
                        executable: f.executable.clone(),
                        build_id: f.build_id.clone(),
                        runs: Vec::new(),
                        // Marked run by run below: every recording before this one lacked it.
                        absent_from: recordings[..k].iter().map(|r| r.out.clone()).collect(),
                        samples: 0,
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            g.samples = g.samples.saturating_add(f.samples);
            // Runs are in recording order: a new run when this recording has none yet.
            if g.runs.len() + g.absent_from.len() <= k {
                g.runs.push(Vec::new());
            }
            if let Some(run) = g.runs.last_mut() {
                run.push(f.path.clone());
            }
        }
        for g in &mut groups {
            if g.runs.len() + g.absent_from.len() <= k {
                g.absent_from.push(r.out.clone());
            }
        }
    }
    groups
}

/// How the executables of two sides pair up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pairing {
    /// `(BASE's, NEW's, how they were matched)`.
    pub pairs: Vec<(Recorded, Recorded, MatchedBy)>,
    /// Executables only BASE ran.
    pub only_base: Vec<Recorded>,
    /// Executables only NEW ran.
    pub only_new: Vec<Recorded>,
    /// BASE's recordings (their `OUT`), in the order given.
    pub base_recordings: Vec<PathBuf>,
    /// NEW's recordings.
    pub new_recordings: Vec<PathBuf>,
}

/// What made two executables one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchedBy {
    /// The same path.
    Path,
    /// The same build id at another path.
    BuildId,
    /// The same file name (another build: the only executable of that name on each side).
    FileName,
}

/// Paths as the JSON and the text show them.
pub fn shown(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Pairs BASE's executables with NEW's: by path, then by build id, then by a file name that
/// is unique among the executables left on each side.
pub fn pair_executables(base: Vec<Recorded>, new: Vec<Recorded>) -> Pairing {
    let mut base: Vec<Option<Recorded>> = base.into_iter().map(Some).collect();
    let mut new: Vec<Option<Recorded>> = new.into_iter().map(Some).collect();
    let mut pairs = Vec::new();
    let unique = |side: &[Option<Recorded>], name: &str| {
        side.iter()
            .flatten()
            .filter(|r| file_name(&r.executable) == name)
            .count()
            == 1
    };
    for by in [MatchedBy::Path, MatchedBy::BuildId, MatchedBy::FileName] {
        for i in 0..base.len() {
            let Some(b) = base[i].as_ref() else { continue };
            let found = new.iter().position(|n| {
                n.as_ref().is_some_and(|n| match by {
                    MatchedBy::Path => n.executable == b.executable,
                    MatchedBy::BuildId => b.build_id.is_some() && n.build_id == b.build_id,
                    MatchedBy::FileName => {
                        let name = file_name(&b.executable);
                        file_name(&n.executable) == name
                            && unique(&base, &name)
                            && unique(&new, &name)
                    }
                })
            });
            if let Some(j) = found
                && let (Some(b), Some(n)) = (base[i].take(), new[j].take())
            {
                pairs.push((b, n, by));
            }
        }
    }
    Pairing {
        pairs,
        only_base: base.into_iter().flatten().collect(),
        only_new: new.into_iter().flatten().collect(),
        ..Pairing::default()
    }
}

/// The comparison of one executable of the tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecutableDiff {
    /// The executable's root frame: its file name, or its path when two of the tree share one.
    pub root: String,
    /// BASE's executable.
    pub base_executable: String,
    /// NEW's executable.
    pub new_executable: String,
    /// How the two were paired.
    pub matched_by: MatchedBy,
    /// The recordings of BASE it did not run in (their `OUT`): it is compared on the others.
    pub absent_from_base: Vec<String>,
    /// The recordings of NEW it did not run in.
    pub absent_from_new: Vec<String>,
    /// The comparison, as `gmon diff` of one program makes it, its verdicts corrected over the
    /// entries of every executable of the tree (`diff.family`).
    pub diff: Diff,
}

/// An executable only one side ran: not compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OneSided {
    /// Its root frame name.
    pub root: String,
    /// The executable.
    pub executable: String,
    /// Its profiles.
    pub profiles: Vec<String>,
    /// How many recordings of its side it ran in.
    pub recordings: usize,
    /// The recordings of its side it did not run in (their `OUT`).
    pub absent_from: Vec<String>,
    /// The samples their sidecars counted.
    pub samples: u64,
}

impl OneSided {
    /// The record of `r` under the root name `root`.
    pub fn of(r: &Recorded, root: String) -> OneSided {
        OneSided {
            root,
            executable: r.executable.display().to_string(),
            profiles: r.profiles().map(|p| p.display().to_string()).collect(),
            recordings: r.runs.len(),
            absent_from: shown(&r.absent_from),
            samples: r.samples,
        }
    }
}

/// The comparison of two process trees (`gmon diff --json` of recorded trees; spec/json.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeDiff {
    /// Format version (the same as a single comparison's).
    pub version: u32,
    /// `process-tree`: tells this document from a single comparison's.
    pub kind: &'static str,
    /// The family-wise level over the whole tree.
    pub level: f64,
    /// BASE's recordings (their `OUT`): each executable's runs are its profiles of each.
    pub base_recordings: Vec<String>,
    /// NEW's recordings.
    pub new_recordings: Vec<String>,
    /// One comparison per executable both sides ran, in root name order.
    pub executables: Vec<ExecutableDiff>,
    /// Executables only BASE ran.
    pub only_base: Vec<OneSided>,
    /// Executables only NEW ran.
    pub only_new: Vec<OneSided>,
}

impl TreeDiff {
    /// Assembles the tree's document.
    pub fn new(
        level: f64,
        recordings: [&[PathBuf]; 2],
        mut executables: Vec<ExecutableDiff>,
        only_base: Vec<OneSided>,
        only_new: Vec<OneSided>,
    ) -> TreeDiff {
        executables.sort_by(|a, b| a.root.cmp(&b.root));
        TreeDiff {
            version: JSON_VERSION,
            kind: "process-tree",
            level,
            base_recordings: shown(recordings[0]),
            new_recordings: shown(recordings[1]),
            executables,
            only_base,
            only_new,
        }
    }

    /// Whether any executable changed (`gmon diff`'s exit status 1).
    pub fn changed(&self) -> bool {
        self.executables.iter().any(|e| e.diff.changes > 0)
    }

    /// The `--fail-above` gate over every executable ([`Diff::grew_above`]).
    pub fn grew_above(&self, points: f64) -> bool {
        self.executables.iter().any(|e| e.diff.grew_above(points))
    }
}

/// Prints the tree's comparison: what was paired and what was not, then each executable's
/// table under a heading.
pub fn print_tree_text(out: &mut dyn Write, t: &TreeDiff, opts: &PrintOptions) -> io::Result<()> {
    writeln!(
        out,
        "Process trees: {} executable{} in both, each compared as one program, with one \
         correction over the {} entries tested in all of them at level {}, so that the whole \
         tree keeps it; {} only in BASE, {} only in NEW.",
        t.executables.len(),
        if t.executables.len() == 1 { "" } else { "s" },
        t.executables.first().map_or(0, |e| e.diff.family),
        super::text::level_text(t.level),
        t.only_base.len(),
        t.only_new.len()
    )?;
    for (side, list) in [("BASE", &t.base_recordings), ("NEW", &t.new_recordings)] {
        writeln!(
            out,
            "{side}: {}.",
            recordings_line(list.len(), &list.join(", "))
        )?;
    }
    for (side, list) in [("BASE", &t.only_base), ("NEW", &t.only_new)] {
        for o in list {
            writeln!(
                out,
                "Only in {side}: {} ({}; {} profile{}, {} samples{}{}): not compared.",
                o.root,
                o.executable,
                o.profiles.len(),
                if o.profiles.len() == 1 { "" } else { "s" },
                o.samples,
                if o.absent_from.is_empty() {
                    ""
                } else {
                    "; ran "
                },
                absent_line(o.recordings, &o.absent_from),
            )?;
        }
    }
    for e in &t.executables {
        let how = match e.matched_by {
            MatchedBy::Path => e.base_executable.clone(),
            MatchedBy::BuildId => format!(
                "{} against {}, the same build id",
                e.base_executable, e.new_executable
            ),
            MatchedBy::FileName => format!(
                "{} against {}, the same file name",
                e.base_executable, e.new_executable
            ),
        };
        writeln!(out, "\n== {} ({how}) ==", e.root)?;
        for (side, runs, absent) in [
            ("BASE", e.diff.base.profiles.len(), &e.absent_from_base),
            ("NEW", e.diff.new.profiles.len(), &e.absent_from_new),
        ] {
            if !absent.is_empty() {
                writeln!(
                    out,
                    "In {side} it ran {}: compared on those it ran in.",
                    absent_line(runs, absent)
                )?;
            }
        }
        print_text(out, &e.diff, opts)?;
    }
    Ok(())
}

/// "3 recordings (a1/OUT, ...): each executable's profiles of one recording are one run",
/// as the tree's header says a side.
fn recordings_line(n: usize, outs: &str) -> String {
    match n {
        1 => format!("1 recording ({outs}): each executable's profiles summed, one run"),
        n => format!(
            "{n} recordings ({outs}): each executable's profiles of one recording summed, the \
             recordings its {n} runs (their spread is measured, spec/diff.md §3)"
        ),
    }
}

/// "in 2 of 3 recordings, not in a3/OUT" (empty when it ran in every one).
fn absent_line(ran: usize, absent: &[String]) -> String {
    if absent.is_empty() {
        return String::new();
    }
    format!(
        "in {ran} of {} recordings, not in {}",
        ran + absent.len(),
        absent.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(exe: &str, id: Option<&str>) -> Recorded {
        Recorded {
            executable: exe.into(),
            build_id: id.map(str::to_owned),
            runs: vec![vec![format!("{exe}.out").into()]],
            absent_from: Vec::new(),
            samples: 1,
        }
    }

    #[test]
    fn an_executables_runs_are_its_profiles_per_recording() {
        use super::super::recordings::Profiled;
        let f = |path: &str, exe: &str| Profiled {
            path: path.into(),
            executable: exe.into(),
            build_id: None,
            samples: 10,
            pid: 1,
        };
        let rec = |out: &str, files: Vec<Profiled>| Recording {
            out: out.into(),
            given: true,
            files,
        };
        let recordings = [
            rec("a1/OUT", vec![f("a1/OUT", "/p"), f("a1/OUT.cc1", "/cc1")]),
            rec("a2/OUT", vec![f("a2/OUT", "/p")]),
            rec(
                "a3/OUT",
                vec![
                    f("a3/OUT", "/p"),
                    f("a3/OUT.cc1", "/cc1"),
                    f("a3/OUT.123", "/cc1"),
                    f("a3/OUT.as", "/as"),
                ],
            ),
        ];
        let g = by_executable(&recordings);
        let show = |r: &Recorded| {
            (
                r.executable.display().to_string(),
                r.runs
                    .iter()
                    .map(|run| shown(run).join("+"))
                    .collect::<Vec<_>>(),
                shown(&r.absent_from),
                r.samples,
            )
        };
        let got: Vec<_> = g.iter().map(show).collect();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            [
                (
                    "/p".to_string(),
                    s(&["a1/OUT", "a2/OUT", "a3/OUT"]),
                    s(&[]),
                    30
                ),
                (
                    "/cc1".to_string(),
                    s(&["a1/OUT.cc1", "a3/OUT.cc1+a3/OUT.123"]),
                    s(&["a2/OUT"]),
                    30
                ),
                (
                    "/as".to_string(),
                    s(&["a3/OUT.as"]),
                    s(&["a1/OUT", "a2/OUT"]),
                    10
                ),
            ]
        );
    }

    #[test]
    fn executables_pair_by_path_then_build_id_then_a_unique_file_name() {
        let base = vec![
            rec("/bin/sh", Some("aa")),
            rec("/a/prog", Some("bb")),
            rec("/a/tool", Some("cc")),
            rec("/x/as", None),
            rec("/y/as", None),
            rec("/a/gone", None),
        ];
        let new = vec![
            rec("/bin/sh", Some("aa")),
            rec("/b/renamed", Some("bb")),
            rec("/b/tool", Some("dd")),
            rec("/z/as", None),
            rec("/b/fresh", None),
        ];
        let p = pair_executables(base, new);
        let pairs: Vec<(&str, &str, MatchedBy)> = p
            .pairs
            .iter()
            .map(|(b, n, by)| {
                (
                    b.executable.to_str().unwrap(),
                    n.executable.to_str().unwrap(),
                    *by,
                )
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("/bin/sh", "/bin/sh", MatchedBy::Path),
                ("/a/prog", "/b/renamed", MatchedBy::BuildId),
                ("/a/tool", "/b/tool", MatchedBy::FileName),
            ]
        );
        // Two `as` in BASE: neither is the one `as` of NEW.
        let only = |v: &[Recorded]| -> Vec<String> {
            v.iter()
                .map(|r| r.executable.display().to_string())
                .collect()
        };
        assert_eq!(only(&p.only_base), ["/x/as", "/y/as", "/a/gone"]);
        assert_eq!(only(&p.only_new), ["/z/as", "/b/fresh"]);
    }

    fn run(total: u64, entries: &[(&str, f64)]) -> super::super::RunCounts {
        super::super::RunCounts {
            label: String::new(),
            total,
            hz: 1000,
            entries: entries
                .iter()
                .map(|&(n, c)| (n.to_owned(), 0, c, 0))
                .collect(),
        }
    }

    /// Issue 28: one correction over the whole tree. `prog`'s `hot` grows from 45% to 50.7% of
    /// 2,200 samples (one profile a side): p = 0.0081, 0.033 after Holm over its four
    /// functions. The tree's other executables (a shell and a helper) have too few samples to
    /// be tested at all. Split among the three executables (0.05/3 each, Holm within each) hot
    /// was within noise; with Holm over the union of every executable's Tarone family it is a
    /// change, and the shell and the helper cost nothing. Two runs of the same tree (the same
    /// counts on both sides) have no change either way.
    #[test]
    fn one_correction_over_the_tree_finds_what_the_split_level_missed() {
        use super::super::{Granularity, NoiseOptions, Verdict, diff_runs, diff_tree_runs};
        let prog_base = [run(
            2200,
            &[
                ("hot", 990.0),
                ("warm", 550.0),
                ("mild", 440.0),
                ("cool", 220.0),
            ],
        )];
        let rest = 2200.0 - 1115.0;
        let prog_new = [run(
            2200,
            &[
                ("hot", 1115.0),
                ("warm", rest * 0.45),
                ("mild", rest * 0.37),
                ("cool", rest * 0.18),
            ],
        )];
        let sh = [run(6, &[("main", 4.0), ("read", 2.0)])];
        let helper = [run(7, &[("main", 4.0), ("work", 3.0)])];
        let opts = NoiseOptions::default();
        let hot = |d: &super::super::Diff| {
            let e = d.entries.iter().find(|e| e.name == "hot").unwrap();
            (e.verdict, e.p_adjusted)
        };
        let tree = diff_tree_runs(
            Granularity::Function,
            &[(&prog_base, &prog_new), (&sh, &sh), (&helper, &helper)],
            &opts,
        );
        let (verdict, p) = hot(&tree[0]);
        assert_eq!(verdict, Verdict::Change, "{p:?}");
        assert!(p.is_some_and(|p| p > 0.05 / 3.0 && p <= 0.05), "{p:?}");
        // The tree's family is prog's four functions: the others cannot reach the level.
        assert_eq!(tree.iter().map(|d| d.tested).collect::<Vec<_>>(), [4, 0, 0]);
        assert!(tree.iter().all(|d| d.family == 4 && d.level == 0.05));
        // The rule before: each executable at the level divided among the three.
        let mut split = opts;
        split.level = 0.05 / 3.0;
        let alone = diff_runs(Granularity::Function, &prog_base, &prog_new, &split);
        assert_eq!(hot(&alone).0, Verdict::WithinNoise);
        // A/A: the same counts both sides, nothing either way.
        let same = diff_tree_runs(
            Granularity::Function,
            &[(&prog_base, &prog_base), (&sh, &sh), (&helper, &helper)],
            &opts,
        );
        assert!(same.iter().all(|d| d.changes == 0));
        let alone = diff_runs(Granularity::Function, &prog_base, &prog_base, &split);
        assert_eq!(alone.changes, 0);
    }
}
