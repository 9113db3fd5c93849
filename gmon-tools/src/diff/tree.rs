//! Comparing two recorded process trees (spec/diff.md §11): `gmon record` writes one profile
//! per process, each naming its executable in its runtime sidecar. Each side's profiles are
//! grouped by executable (a group's profiles summed, as `gmon report OUT OUT.*` reads them),
//! the executables of the two sides are paired (same path, else same build id, else the same
//! file name when it is the only one of that name on each side), and every pair is compared as
//! one program would be, at the level divided among the pairs (Bonferroni), so that the chance
//! of any false change in the whole tree stays at the level. An executable on one side only is
//! said so, with its profiles and samples, and not compared.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::text::{PrintOptions, print_text};
use super::{Diff, JSON_VERSION};

/// One side's profiles of one executable.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The executable the profiles' sidecars name.
    pub executable: PathBuf,
    /// Its build id as the sidecar records it (hex), when it does.
    pub build_id: Option<String>,
    /// Its profiles, in the order given.
    pub profiles: Vec<PathBuf>,
    /// The samples their sidecars counted.
    pub samples: u64,
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
    /// The comparison, as `gmon diff` of one program makes it (at the tree's level divided
    /// among the executables).
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
    /// The samples their sidecars counted.
    pub samples: u64,
}

impl OneSided {
    /// The record of `r` under the root name `root`.
    pub fn of(r: &Recorded, root: String) -> OneSided {
        OneSided {
            root,
            executable: r.executable.display().to_string(),
            profiles: r.profiles.iter().map(|p| p.display().to_string()).collect(),
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
        mut executables: Vec<ExecutableDiff>,
        only_base: Vec<OneSided>,
        only_new: Vec<OneSided>,
    ) -> TreeDiff {
        executables.sort_by(|a, b| a.root.cmp(&b.root));
        TreeDiff {
            version: JSON_VERSION,
            kind: "process-tree",
            level,
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
    let each = t.executables.first().map_or(t.level, |e| e.diff.level);
    writeln!(
        out,
        "Process trees: {} executable{} in both, compared each as one program at level {} \
         ({} over {}, so that the whole tree keeps it); {} only in BASE, {} only in NEW.",
        t.executables.len(),
        if t.executables.len() == 1 { "" } else { "s" },
        each,
        t.level,
        t.executables.len().max(1),
        t.only_base.len(),
        t.only_new.len()
    )?;
    for (side, list) in [("BASE", &t.only_base), ("NEW", &t.only_new)] {
        for o in list {
            writeln!(
                out,
                "Only in {side}: {} ({}; {} profile{}, {} samples): not compared.",
                o.root,
                o.executable,
                o.profiles.len(),
                if o.profiles.len() == 1 { "" } else { "s" },
                o.samples
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
        print_text(out, &e.diff, opts)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(exe: &str, id: Option<&str>) -> Recorded {
        Recorded {
            executable: exe.into(),
            build_id: id.map(str::to_owned),
            profiles: vec![format!("{exe}.out").into()],
            samples: 1,
        }
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
}
