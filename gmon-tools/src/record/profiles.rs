//! The per-process profiles of one recorded run, read from the run's private directory, grouped
//! by executable (build id, else path) and summed losslessly into one profile per executable.
//!
//! Naming (documented in `gmon record --help` and spec/runtime.md §3): the executable of the
//! command's first process gets `OUT` when it holds work of its own (a shell script's shell
//! usually has a sample or two of start-up at most: the work is in the programs it starts;
//! then the executable with the most samples gets it); every other executable gets
//! `OUT.<name>`, where `<name>` is its file name (sanitized; made unique, fitting and free by
//! `record::files`).

use std::path::{Path, PathBuf};

use crate::error::Context;
use gmon_format::merge::{MergeOptions, Merger, fit_counts};
use gmon_format::sidecar::merge_sidecars;
use gmon_format::sidecar::{GmonLink, MappedObject};
use gmon_format::{Sidecar, Variant};

/// One process's profile as the runtime wrote it.
#[derive(Debug)]
pub struct ProcessProfile {
    /// The gmon.out file in the private directory.
    pub path: PathBuf,
    /// Whether the command's first process wrote it (the unsuffixed name).
    pub first: bool,
    /// Its sidecar (`None` when missing or unreadable: the profile is then kept on its own).
    pub sidecar: Option<Sidecar>,
    /// Its gmon.out as changed after the run (outer samples added to its histogram,
    /// `record::gaps`); `None`: the file as the runtime wrote it.
    pub changed: Option<Vec<u8>>,
}

impl ProcessProfile {
    /// The gmon.out bytes: as changed, else as written.
    fn bytes(&self) -> crate::Result<Vec<u8>> {
        match &self.changed {
            Some(b) => Ok(b.clone()),
            None => std::fs::read(&self.path).with_context(|| format!("{}", self.path.display())),
        }
    }

    /// Adds one tick to the histogram bin of each link-time address of the main executable in
    /// `addresses`. The runtime writes only the histogram cells it counted into (spec/runtime.md
    /// §1), so an address may have no bin in the file, or its bin may be full: those are
    /// returned as a count, for the caller to count outside the histogram.
    pub fn add_to_histogram(&mut self, addresses: &[u64]) -> u64 {
        let Ok(mut profile) = self
            .bytes()
            .and_then(|b| gmon_format::read(&b).context("reading the profile"))
        else {
            return addresses.len() as u64;
        };
        let mut missed = 0;
        for &pc in addresses {
            let bin = profile.records.iter_mut().find_map(|r| match r {
                gmon_format::Record::Histogram(h) if h.low_pc <= pc && pc < h.high_pc => {
                    let span = u128::from(h.high_pc - h.low_pc);
                    let i = u128::from(pc - h.low_pc) * h.bins.len() as u128 / span;
                    h.bins.get_mut(usize::try_from(i).ok()?)
                }
                _ => None,
            });
            match bin {
                Some(b) if *b < u64::from(u16::MAX) => *b += 1,
                _ => missed += 1,
            }
        }
        match gmon_format::to_vec(&profile) {
            Ok(bytes) if missed < addresses.len() as u64 => {
                self.changed = Some(bytes);
                missed
            }
            _ => addresses.len() as u64,
        }
    }
}

/// The profiles written into `dir` by the run's processes: `<stem>` (the first process) and
/// `<stem>.<pid>` (the others, spec/runtime.md §3), each maybe followed by `.exec-<k>` (an
/// image that exec'd: it counts as its process's), with their sidecars. Temporary files of an
/// interrupted write are ignored.
pub fn collect(dir: &Path, stem: &str) -> crate::Result<Vec<ProcessProfile>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry.with_context(|| format!("{}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // An image that exec'd wrote `<its name>.exec-<k>` (spec/runtime.md §4.5, "exec").
        let image = strip_exec_suffix(name);
        let first = image == stem;
        let child = image
            .strip_prefix(stem)
            .and_then(|r| r.strip_prefix('.'))
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        if !first && !child {
            continue;
        }
        let path = entry.path();
        let sidecar = std::fs::read(gmon_format::sidecar_path(&path))
            .ok()
            .and_then(|b| gmon_format::read_sidecar(&b).ok());
        found.push(ProcessProfile {
            path,
            first,
            sidecar,
            changed: None,
        });
    }
    // The first process, then the others by pid.
    found.sort_by_key(|p| (!p.first, p.sidecar.as_ref().map_or(u32::MAX, |s| s.pid)));
    Ok(found)
}

/// `name` without the `.exec-<k>` that the runtime appends to the profile of an image that
/// exec'd another program.
fn strip_exec_suffix(name: &str) -> &str {
    match name.rsplit_once(".exec-") {
        Some((image, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => image,
        _ => name,
    }
}

/// Profiles of one executable, summed.
#[derive(Debug)]
pub struct Group {
    /// The executable's path as the first of its processes recorded it (empty when unknown).
    pub executable: String,
    /// The other paths its processes ran it by (a copy or a link of the same build), in order
    /// of first use: a name for its file when the first does not fit whole (record::files).
    pub aliases: Vec<String>,
    /// Its build id (empty when none).
    pub build_id: Vec<u8>,
    /// Whether the command's first process ran it.
    pub first: bool,
    /// The processes summed.
    pub processes: usize,
    /// The group's gmon.out.
    pub gmon: GroupGmon,
    /// The summed sidecar, linked to [`Group::gmon`] (`None` when a member had none).
    pub sidecar: Option<Sidecar>,
    /// Ticks counted (from the sidecars).
    pub samples: u64,
    /// The file name suffix chosen by [`name_groups`] (`None`: `OUT` itself).
    pub suffix: Option<String>,
}

/// Where a group's gmon.out is.
#[derive(Debug)]
pub enum GroupGmon {
    /// One process's file, which is the group's profile byte for byte: copied, not read (a
    /// large executable's histogram is mostly holes the runtime left, spec/runtime.md §1).
    File(PathBuf),
    /// The sum of several processes' profiles.
    Summed(Vec<u8>),
}

/// Groups `profiles` by executable and sums each group.
pub fn group(profiles: Vec<ProcessProfile>) -> crate::Result<Vec<Group>> {
    let mut keyed: Vec<(Vec<u8>, Vec<ProcessProfile>)> = Vec::new();
    for p in profiles {
        let key = match p.sidecar.as_ref().and_then(Sidecar::main_object) {
            Some(main) if !main.build_id.is_empty() => [b"id:".as_slice(), &main.build_id].concat(),
            Some(main) => [b"path:".as_slice(), main.path.as_bytes()].concat(),
            // Without a sidecar nothing says which executable it is: kept alone.
            None => [b"file:".as_slice(), p.path.as_os_str().as_encoded_bytes()].concat(),
        };
        match keyed.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(p),
            None => keyed.push((key, vec![p])),
        }
    }
    keyed
        .into_iter()
        .map(|(_, members)| sum_group(&members))
        .collect()
}

fn sum_group(members: &[ProcessProfile]) -> crate::Result<Group> {
    let gmon = match members {
        // One process: its file is the profile, byte for byte (the runtime writes it whole or
        // not at all, spec/runtime.md §1). Reading, summing and rewriting a large executable's
        // histogram cost more than a short run of it, so the file is copied, holes and all.
        [one] => match &one.changed {
            Some(bytes) => GroupGmon::Summed(bytes.clone()),
            None => GroupGmon::File(one.path.clone()),
        },
        _ => GroupGmon::Summed(sum_profiles(members)?),
    };
    let sidecars: Option<Vec<&Sidecar>> = members.iter().map(|m| m.sidecar.as_ref()).collect();
    let mut sidecar = sidecars.map(|s| merge_sidecars(&s));
    if let Some(s) = sidecar.as_mut() {
        s.gmon = Some(match &gmon {
            GroupGmon::Summed(bytes) => GmonLink::of(bytes),
            GroupGmon::File(path) => {
                file_link(path, members.first().and_then(|m| m.sidecar.as_ref()))?
            }
        });
    }
    let mains: Vec<&MappedObject> = members
        .iter()
        .filter_map(|m| m.sidecar.as_ref().and_then(Sidecar::main_object))
        .collect();
    let main = mains.first();
    let mut aliases: Vec<String> = Vec::new();
    for m in &mains {
        if main.is_some_and(|first| first.path != m.path) && !aliases.contains(&m.path) {
            aliases.push(m.path.clone());
        }
    }
    Ok(Group {
        executable: main.map(|m| m.path.clone()).unwrap_or_default(),
        aliases,
        build_id: main.map(|m| m.build_id.clone()).unwrap_or_default(),
        first: members.iter().any(|m| m.first),
        processes: members.len(),
        samples: sidecar.as_ref().map_or(0, |s| s.counters.samples),
        gmon,
        sidecar,
        suffix: None,
    })
}

/// The link of a process's own gmon.out: the one its runtime wrote into its sidecar (the runtime
/// hashes the file it writes, spec/runtime.md §5.8; hashing again cost 2 ms for python3's 1.4 MB
/// histogram), unless the file's length says otherwise.
fn file_link(path: &Path, sidecar: Option<&Sidecar>) -> crate::Result<GmonLink> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("{}", path.display()))?
        .len();
    match sidecar.and_then(|s| s.gmon) {
        Some(link) if link.length == len => Ok(link),
        _ => Ok(GmonLink::of(
            &std::fs::read(path).with_context(|| format!("{}", path.display()))?,
        )),
    }
}

/// The gmon.out bytes of `members` summed losslessly (GNU gprof's count widths kept).
fn sum_profiles(members: &[ProcessProfile]) -> crate::Result<Vec<u8>> {
    let mut merger = Merger::new(MergeOptions::new());
    for m in members {
        let bytes = m.bytes()?;
        let profile = gmon_format::read(&bytes).with_context(|| format!("{}", m.path.display()))?;
        merger
            .add(&profile)
            .with_context(|| format!("{}: cannot be summed", m.path.display()))?;
    }
    let merged = merger.finish().context("summing the processes' profiles")?;
    let profile = fit_counts(&merged.profile, Variant::Gnu).context("summing the profiles")?;
    gmon_format::to_vec(&profile).context("writing the summed profile")
}

/// Chooses each group's file name part (see the module documentation; `record::files` makes
/// it unique and fitting) and puts the group that gets `OUT` first.
pub fn name_groups(groups: &mut [Group]) {
    let total: u64 = groups.iter().map(|g| g.samples).sum();
    // Work of its own: a shell's start-up gets a sample with probability its CPU time over
    // the period, so "any sample" would hand OUT to the shell by chance.
    let sampled_first =
        |g: &Group| g.first && g.samples >= FIRST_KEEPS_OUT_SAMPLES && g.samples * 20 >= total;
    groups.sort_by(|a, b| {
        sampled_first(b)
            .cmp(&sampled_first(a))
            .then(b.samples.cmp(&a.samples))
            .then(b.first.cmp(&a.first))
    });
    for (i, g) in groups.iter_mut().enumerate() {
        g.suffix = (i > 0).then(|| file_name_part(&g.executable));
    }
}

/// The fewest samples with which the first process's executable keeps `OUT` (with 5 % of the
/// run's).
const FIRST_KEEPS_OUT_SAMPLES: u64 = 3;

/// The `<name>` of `OUT.<name>` for the executable at `path`: its file name, sanitized (`sanitize`).
pub fn file_name_part(path: &str) -> String {
    sanitize(
        Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("unknown"),
    )
}

/// A file-name part made of `[A-Za-z0-9._+-]` (anything else becomes `_`) that passes
/// [`acceptable_name`].
fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    if !acceptable_name(&s) {
        s.push('_');
    }
    s
}

/// Whether `OUT.<name>` may be a profile's name: not hidden, not ending in `gmonx` (a sidecar's
/// name: `OUT.foo.gmonx` is `foo`'s sidecar), not all digits (a process's own file,
/// spec/runtime.md §3).
pub fn acceptable_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with("gmonx")
        && !name.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(executable: &str, first: bool, samples: u64) -> Group {
        Group {
            executable: executable.into(),
            aliases: Vec::new(),
            build_id: Vec::new(),
            first,
            processes: 1,
            gmon: GroupGmon::File(PathBuf::new()),
            sidecar: None,
            samples,
            suffix: None,
        }
    }

    fn out_order(groups: &mut [Group]) -> Vec<(String, Option<String>)> {
        name_groups(groups);
        groups
            .iter()
            .map(|g| (g.executable.clone(), g.suffix.clone()))
            .collect()
    }

    #[test]
    fn out_goes_to_the_first_process_when_it_has_samples_else_to_the_most_sampled() {
        let own = |s: &str| (s.to_string(), None);
        let named = |s: &str, n: &str| (s.to_string(), Some(n.to_string()));
        // The shell looped itself: it keeps OUT.
        let mut g = [group("/bin/spin", false, 900), group("/bin/dash", true, 60)];
        assert_eq!(
            out_order(&mut g),
            [own("/bin/dash"), named("/bin/spin", "spin")]
        );
        // A sample or two of the shell's start-up do not make it the work.
        for dash in [1, 2, 40] {
            let mut g = [
                group("/bin/spin", false, 900),
                group("/bin/dash", true, dash),
            ];
            assert_eq!(
                out_order(&mut g),
                [own("/bin/spin"), named("/bin/dash", "dash")]
            );
        }
        // The shell only started programs: the work gets OUT.
        let mut g = [
            group("/bin/dash", true, 0),
            group("/bin/a", false, 10),
            group("/bin/b", false, 900),
        ];
        assert_eq!(
            out_order(&mut g),
            [
                own("/bin/b"),
                named("/bin/a", "a"),
                named("/bin/dash", "dash")
            ]
        );
        // Nothing sampled anywhere: the first process's file is OUT.
        let mut g = [group("/bin/a", false, 0), group("/bin/true", true, 0)];
        assert_eq!(out_order(&mut g), [own("/bin/true"), named("/bin/a", "a")]);
    }

    #[test]
    fn names_never_collide_with_the_sidecar_or_pids() {
        assert_eq!(sanitize("gmonx"), "gmonx_");
        assert_eq!(sanitize("foo.gmonx"), "foo.gmonx_");
        assert_eq!(sanitize("123"), "123_");
        assert_eq!(sanitize("a b/c"), "a_b_c");
        assert_eq!(sanitize(".hidden"), "_.hidden");
    }
}
