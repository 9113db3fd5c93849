//! One flame graph of a whole process tree: the profiles `gmon record` wrote for each executable
//! a command ran (`OUT`, `OUT.cc1`, `OUT.as`, ...), each drawn under a root frame named after
//! its executable (spec/stacks.md §12).
//!
//! Each executable's profiles are loaded with that executable, as a single-program flame graph
//! would load them; only the root frame is added. Profiles without a sidecar naming their
//! executable (a `gcc -pg` gmon.out) are not grouped: the caller reads them as before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::recorded_executable;

/// The profiles of one executable and the root frame they are drawn under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutableGroup {
    /// The executable the profiles' sidecars name.
    pub executable: PathBuf,
    /// The root frame: the executable's file name, or its whole path when two executables of
    /// the tree share a file name.
    pub root: String,
    /// Its profiles, in the order given.
    pub profiles: Vec<PathBuf>,
}

/// Groups `profiles` by the executable their sidecars name, when they name more than one;
/// `None` when any profile has no usable sidecar or all name the same executable (then the
/// profiles are one program's, read as usual).
pub fn group_by_executable(profiles: &[PathBuf]) -> Option<Vec<ExecutableGroup>> {
    let mut groups: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut order = Vec::new();
    for p in profiles {
        let exe = recorded_executable(p)?;
        let entry = groups.entry(exe.clone()).or_default();
        if entry.is_empty() {
            order.push(exe);
        }
        entry.push(p.clone());
    }
    if groups.len() < 2 {
        return None;
    }
    let roots = root_names(&order);
    Some(
        order
            .into_iter()
            .zip(roots)
            .map(|(exe, root)| ExecutableGroup {
                profiles: groups.remove(&exe).unwrap_or_default(),
                executable: exe,
                root,
            })
            .collect(),
    )
}

/// File names, or whole paths where a file name is not unique in the tree. Frame separators
/// (`;`) are replaced, since folded stacks split on them.
pub fn root_names(executables: &[PathBuf]) -> Vec<String> {
    let name = |e: &Path| {
        e.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| e.display().to_string())
    };
    executables
        .iter()
        .map(|e| {
            let short = name(e);
            let shared = executables.iter().filter(|o| name(o) == short).count() > 1;
            let root = if shared {
                e.display().to_string()
            } else {
                short
            };
            root.replace(';', ":")
        })
        .collect()
}

/// `lines` (folded stacks `a;b;c N`) under the root frame `root`.
pub fn under_root(root: &str, lines: &[String]) -> impl Iterator<Item = String> {
    lines.iter().map(move |l| format!("{root};{l}"))
}

/// The samples of folded `lines` (the count after each stack's last space).
pub fn folded_samples(lines: &[String]) -> u64 {
    lines
        .iter()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

/// The subtitle's account of the tree: "process tree: 3 executables (make 120, cc1 800, as 40
/// samples), a root each".
pub fn tree_subtitle(groups: &[ExecutableGroup], samples: &[u64]) -> String {
    let each = groups
        .iter()
        .zip(samples)
        .map(|(g, n)| format!("{} {n}", g.root))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "process tree: {} executables ({each} samples), a root each",
        groups.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_file_names_unless_two_executables_share_one() {
        let exes = [
            PathBuf::from("/usr/bin/make"),
            PathBuf::from("/usr/lib/gcc/cc1"),
            PathBuf::from("/usr/bin/as"),
            PathBuf::from("/opt/x/as"),
        ];
        assert_eq!(
            root_names(&exes),
            ["make", "cc1", "/usr/bin/as", "/opt/x/as"]
        );
    }

    #[test]
    fn lines_go_under_their_root() {
        let l = vec!["main;f 3".to_string(), "main 1".to_string()];
        assert_eq!(
            under_root("cc1", &l).collect::<Vec<_>>(),
            ["cc1;main;f 3", "cc1;main 1"]
        );
    }
}
