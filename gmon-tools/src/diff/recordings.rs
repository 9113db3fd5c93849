//! Which recording each profile of a side came from (spec/diff.md §11, "Recordings"). `gmon
//! record -o OUT` writes `OUT` and, for each other executable of the process tree, `OUT.<name>`
//! beside it: one file per executable (build) per recording, its processes already summed. So a
//! side's files are told apart by their names: a file named as another given file followed by
//! `.<name>`, in the same directory, belongs to that file's recording. Within a recording an
//! executable's profiles are one run (the parts of one run of the command); across recordings
//! they are the several runs of spec/diff.md §3.

use std::path::{Path, PathBuf};

/// One profile of a side, with what its sidecar says.
#[derive(Debug, Clone, PartialEq)]
pub struct Profiled {
    /// The profile, as named on the command line.
    pub path: PathBuf,
    /// The executable its sidecar names.
    pub executable: PathBuf,
    /// That executable's build id (hex), when the sidecar records one.
    pub build_id: Option<String>,
    /// The samples the sidecar counted.
    pub samples: u64,
    /// The process id the sidecar records (of its first process, for a sum of several).
    pub pid: u32,
}

/// One `gmon record` run of a side: its `OUT` and the `OUT.<name>` files given with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Its `OUT`: the shortest name of its files, or the file on disk they are all named after
    /// when it was not given itself (`given` false).
    pub out: PathBuf,
    /// Whether `out` is one of the given profiles.
    pub given: bool,
    /// Its profiles, in the order given.
    pub files: Vec<Profiled>,
}

/// `(directory, file name)` of `p`, the directory as the file system resolves it when it can
/// (so that `a/OUT` and `./a/OUT.cc1` are beside each other).
fn place(p: &Path) -> (PathBuf, String) {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let name = p
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    (dir, name)
}

/// The `<name>` of `file` when it is named `<out>.<name>` beside `out` (`<name>` not empty).
fn suffix_of<'a>(out: &(PathBuf, String), file: &'a (PathBuf, String)) -> Option<&'a str> {
    if out.0 != file.0 {
        return None;
    }
    file.1
        .strip_prefix(out.1.as_str())?
        .strip_prefix('.')
        .filter(|s| !s.is_empty())
}

/// Whether a suffix is the runtime's own name for the file of process `pid`, `<pid>` maybe
/// followed by `.exec-<k>` (spec/runtime.md §3): several of these are processes of one
/// executable in one recording, not recordings of their own. (`run.2` of a `gmon record -o
/// run.2` is not: its sidecar's process is not process 2.)
fn is_process_suffix(suffix: &str, pid: u32) -> bool {
    let image = match suffix.split_once(".exec-") {
        Some((image, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => image,
        _ => suffix,
    };
    image.parse::<u32>().is_ok_and(|n| n == pid)
}

/// Groups a side's profiles into recordings, in the order their first file was given. A file
/// named `<out>.<name>` beside a recording's `out` joins it (the longest such `out`), unless
/// that recording already holds the same build (executable and build id) under a name that is
/// its process's id: `gmon record` writes each build once per recording, so that file is a
/// recording of its own (`run` and `run.2`, two recordings of one program). A file beside no
/// given `out` is the `out` of a recording, or joins the one named after a profile on disk
/// (`has_sidecar`, the `OUT` a user left out of `OUT OUT.*`).
pub fn recordings(files: Vec<Profiled>, has_sidecar: impl Fn(&Path) -> bool) -> Vec<Recording> {
    let places: Vec<(PathBuf, String)> = files.iter().map(|f| place(&f.path)).collect();
    // Shorter names first, so that every `OUT` comes before the files named after it.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| places[i].1.len());
    let mut found: Vec<Found> = Vec::new();
    for i in order {
        let f = &files[i];
        let same_build = |members: &[usize]| {
            members
                .iter()
                .any(|&k| files[k].executable == f.executable && files[k].build_id == f.build_id)
        };
        let joins = found
            .iter()
            .enumerate()
            .filter_map(|(r, found)| {
                let suffix = suffix_of(&found.place, &places[i])?;
                (is_process_suffix(suffix, f.pid) || !same_build(&found.members))
                    .then_some((r, found.place.1.len()))
            })
            .max_by_key(|&(_, len)| len);
        if let Some((r, _)) = joins {
            found[r].members.push(i);
            continue;
        }
        // Beside no given `out`: the longest name it is `<name>.<suffix>` of that is a profile
        // on disk is its recording's `out`, not given.
        // A given file is a recording's `out` by being given, not one to look for.
        let (dir, name) = &places[i];
        let missing = name
            .match_indices('.')
            .map(|(k, _)| &name[..k])
            .filter(|stem| !stem.is_empty())
            .filter(|stem| !places.contains(&(dir.clone(), (*stem).to_owned())))
            .map(|stem| f.path.with_file_name(stem))
            .rfind(|p| has_sidecar(p));
        found.push(match missing {
            Some(out) => Found {
                place: place(&out),
                out,
                given: false,
                members: vec![i],
            },
            None => Found {
                place: (dir.clone(), name.clone()),
                out: f.path.clone(),
                given: true,
                members: vec![i],
            },
        });
    }
    for r in &mut found {
        r.members.sort_unstable();
    }
    found.sort_by_key(|r| r.members[0]);
    let mut files: Vec<Option<Profiled>> = files.into_iter().map(Some).collect();
    found
        .into_iter()
        .map(|r| Recording {
            out: r.out,
            given: r.given,
            files: r.members.iter().filter_map(|&k| files[k].take()).collect(),
        })
        .collect()
}

/// A recording being found: its `out`'s place, and the indices of its files.
struct Found {
    place: (PathBuf, String),
    out: PathBuf,
    given: bool,
    members: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(path: &str, exe: &str) -> Profiled {
        Profiled {
            path: path.into(),
            executable: exe.into(),
            build_id: Some(format!("id-{exe}")),
            samples: 1,
            pid: path
                .rsplit('.')
                .find_map(|x| x.parse().ok())
                .filter(|_| path.contains("raw"))
                .unwrap_or(77),
        }
    }

    fn outs(rs: &[Recording]) -> Vec<(String, Vec<String>)> {
        rs.iter()
            .map(|r| {
                (
                    r.out.display().to_string(),
                    r.files
                        .iter()
                        .map(|f| f.path.display().to_string())
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_recording_is_its_out_and_the_files_named_after_it() {
        let files = vec![
            p("/nowhere/a1/OUT", "/bin/prog"),
            p("/nowhere/a1/OUT.cc1", "/bin/cc1"),
            p("/nowhere/a2/OUT", "/bin/prog"),
            p("/nowhere/a2/OUT.cc1", "/bin/cc1"),
            p("/nowhere/base.1.out", "/bin/prog"),
            p("/nowhere/base.1.out.as", "/bin/as"),
            p("/nowhere/base.10.out", "/bin/prog"),
        ];
        let rs = recordings(files, |_| false);
        assert_eq!(
            outs(&rs),
            [
                (
                    "/nowhere/a1/OUT".into(),
                    vec!["/nowhere/a1/OUT".into(), "/nowhere/a1/OUT.cc1".into()]
                ),
                (
                    "/nowhere/a2/OUT".into(),
                    vec!["/nowhere/a2/OUT".into(), "/nowhere/a2/OUT.cc1".into()]
                ),
                (
                    "/nowhere/base.1.out".into(),
                    vec![
                        "/nowhere/base.1.out".into(),
                        "/nowhere/base.1.out.as".into()
                    ]
                ),
                (
                    "/nowhere/base.10.out".into(),
                    vec!["/nowhere/base.10.out".into()]
                ),
            ]
        );
        assert!(rs.iter().all(|r| r.given));
    }

    #[test]
    fn the_same_build_twice_is_two_recordings_unless_named_by_process_id() {
        let files = vec![
            p("/nowhere/run", "/bin/prog"),
            p("/nowhere/run.sh", "/bin/sh"),
            p("/nowhere/run.2", "/bin/prog"),
            p("/nowhere/run.2.sh", "/bin/sh"),
            // The runtime's own files, one per process: one recording.
            p("/nowhere/raw", "/bin/prog"),
            p("/nowhere/raw.1234", "/bin/prog"),
            p("/nowhere/raw.1235.exec-1", "/bin/prog"),
        ];
        let rs = recordings(files, |_| false);
        assert_eq!(
            outs(&rs),
            [
                (
                    "/nowhere/run".into(),
                    vec!["/nowhere/run".into(), "/nowhere/run.sh".into()]
                ),
                (
                    "/nowhere/run.2".into(),
                    vec!["/nowhere/run.2".into(), "/nowhere/run.2.sh".into()]
                ),
                (
                    "/nowhere/raw".into(),
                    vec![
                        "/nowhere/raw".into(),
                        "/nowhere/raw.1234".into(),
                        "/nowhere/raw.1235.exec-1".into()
                    ]
                ),
            ]
        );
    }

    #[test]
    fn files_of_an_out_that_was_not_given_are_its_recording() {
        let files = vec![
            p("/nowhere/a1/OUT.cc1", "/bin/cc1"),
            p("/nowhere/a1/OUT.as", "/bin/as"),
            p("/nowhere/a2/OUT.cc1", "/bin/cc1"),
        ];
        let rs = recordings(files, |p| p.file_name().is_some_and(|n| n == "OUT"));
        assert_eq!(
            outs(&rs),
            [
                (
                    "/nowhere/a1/OUT".into(),
                    vec!["/nowhere/a1/OUT.cc1".into(), "/nowhere/a1/OUT.as".into()]
                ),
                ("/nowhere/a2/OUT".into(), vec!["/nowhere/a2/OUT.cc1".into()]),
            ]
        );
        assert!(rs.iter().all(|r| !r.given));
        // Without them on disk nothing says the two are one recording.
        let rs = recordings(
            vec![
                p("/nowhere/a1/OUT.cc1", "/bin/cc1"),
                p("/nowhere/a1/OUT.as", "/bin/as"),
            ],
            |_| false,
        );
        assert_eq!(rs.len(), 2);
    }
}
