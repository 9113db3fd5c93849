//! The per-process profiles of one recorded run, read from the run's private directory, grouped
//! by executable (build id, else path) and summed losslessly into one profile per executable.
//!
//! Naming (documented in `gmon record --help` and spec/runtime.md §3): the executable of the
//! command's first process gets `OUT` when it has samples (a shell script's shell usually has
//! none: the work is in the programs it starts; then the executable with the most samples gets
//! it, and the shell no file); every other executable gets
//! `OUT.<name>`, where `<name>` is its file name, with `.2`, `.3`, ... added when two different
//! executables share a name (in order of samples).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context;
use gmon_format::sidecar::{
    AddressRange, ClockKind, ClockReport, GmonLink, MappedObject, PcSample, StackKind, StackSample,
    ThreadTotal,
};
use gmon_format::{MergeOptions, Merger, Sidecar, Variant, fit_counts};

/// One process's profile as the runtime wrote it.
#[derive(Debug)]
pub struct ProcessProfile {
    /// The gmon.out file in the private directory.
    pub path: PathBuf,
    /// Whether the command's first process wrote it (the unsuffixed name).
    pub first: bool,
    /// Its sidecar (`None` when missing or unreadable: the profile is then kept on its own).
    pub sidecar: Option<Sidecar>,
}

/// The profiles written into `dir` by the run's processes: `<stem>` (the first process) and
/// `<stem>.<pid>` (the others, spec/runtime.md §3), with their sidecars. Temporary files of an
/// interrupted write are ignored.
pub fn collect(dir: &Path, stem: &str) -> anyhow::Result<Vec<ProcessProfile>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry.with_context(|| format!("{}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let first = name == stem;
        let child = name
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
        });
    }
    // The first process, then the others by pid.
    found.sort_by_key(|p| (!p.first, p.sidecar.as_ref().map_or(u32::MAX, |s| s.pid)));
    Ok(found)
}

/// Profiles of one executable, summed.
#[derive(Debug)]
pub struct Group {
    /// The executable's path as the first of its processes recorded it (empty when unknown).
    pub executable: String,
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
pub fn group(profiles: Vec<ProcessProfile>) -> anyhow::Result<Vec<Group>> {
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

fn sum_group(members: &[ProcessProfile]) -> anyhow::Result<Group> {
    let gmon = match members {
        // One process: its file is the profile, byte for byte (the runtime writes it whole or
        // not at all, spec/runtime.md §1). Reading, summing and rewriting a large executable's
        // histogram cost more than a short run of it, so the file is copied, holes and all.
        [one] => GroupGmon::File(one.path.clone()),
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
    let main = members
        .iter()
        .find_map(|m| m.sidecar.as_ref().and_then(Sidecar::main_object));
    Ok(Group {
        executable: main.map(|m| m.path.clone()).unwrap_or_default(),
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
fn file_link(path: &Path, sidecar: Option<&Sidecar>) -> anyhow::Result<GmonLink> {
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
fn sum_profiles(members: &[ProcessProfile]) -> anyhow::Result<Vec<u8>> {
    let mut merger = Merger::new(MergeOptions::new());
    for m in members {
        let bytes = std::fs::read(&m.path).with_context(|| format!("{}", m.path.display()))?;
        let profile = gmon_format::read(&bytes).with_context(|| format!("{}", m.path.display()))?;
        merger
            .add(&profile)
            .with_context(|| format!("{}: cannot be summed", m.path.display()))?;
    }
    let merged = merger.finish().context("summing the processes' profiles")?;
    let profile = fit_counts(&merged.profile, Variant::Gnu).context("summing the profiles")?;
    gmon_format::to_vec(&profile).context("writing the summed profile")
}

/// The clock reports of several processes as one: signals and unsampled ticks summed; the
/// clock is theirs when they agree, else the timer (some process fell back to it) with the
/// first refusal. None when no process said.
pub fn merge_clocks(all: impl IntoIterator<Item = Option<ClockReport>>) -> Option<ClockReport> {
    let mut sum: Option<ClockReport> = None;
    for c in all.into_iter().flatten() {
        let Some(s) = sum.as_mut() else {
            sum = Some(c);
            continue;
        };
        if s.clock != c.clock {
            s.clock = ClockKind::THREAD_TIMER;
        }
        if s.refused_errno == 0 {
            s.refused_errno = c.refused_errno;
        }
        s.signals = s.signals.saturating_add(c.signals);
        s.unsampled = s.unsampled.saturating_add(c.unsampled);
    }
    sum
}

/// Sums sidecars of processes of one executable into the address space of the first: each
/// object of a later process is matched with the same object (path and build id) of the sum and
/// its addresses moved by the difference of load biases; an object the sum lacks is added at a
/// free place above every other (its link-time addresses, which views use, stay exact). A PC in
/// no object stays as it is unless it would then fall into an object, in which case it becomes 0
/// (no object): every tick is still counted. Counters, PC samples, stacks and thread totals
/// are summed.
pub fn merge_sidecars(all: &[&Sidecar]) -> Sidecar {
    let Some((first, rest)) = all.split_first() else {
        return Sidecar::default();
    };
    let mut sum: Sidecar = (*first).clone();
    let mut pcs: BTreeMap<u64, u64> = first.pc_samples.iter().map(|s| (s.pc, s.count)).collect();
    // A stack is its frames and how they were obtained (sidecar §5.10): two processes' equal
    // frames of different kinds stay two stacks, as the runtime's own writer keeps them.
    let mut stacks: HashMap<StackKey, u64> = HashMap::new();
    let mut order: Vec<StackKey> = Vec::new();
    for (i, s) in first.stacks.iter().enumerate() {
        add_stack(
            &mut stacks,
            &mut order,
            (s.pcs.clone(), first.stack_kind(i)),
            s.count,
        );
    }
    let mut threads: BTreeMap<u32, u64> =
        first.threads.iter().map(|t| (t.tid, t.samples)).collect();
    for sidecar in rest {
        let shifts: Vec<u64> = sidecar
            .objects
            .iter()
            .map(|o| place(&mut sum.objects, o))
            .collect();
        let translate = |pc: u64| -> u64 {
            match sidecar.objects.iter().position(|o| o.contains(pc)) {
                Some(i) => pc.wrapping_add(shifts.get(i).copied().unwrap_or(0)),
                None => pc,
            }
        };
        let objects = sum.objects.clone();
        let fix = |pc: u64| -> u64 {
            let moved = translate(pc);
            if moved == pc
                && !sidecar.objects.iter().any(|o| o.contains(pc))
                && objects.iter().any(|o| o.contains(pc))
            {
                0
            } else {
                moved
            }
        };
        for s in &sidecar.pc_samples {
            *pcs.entry(fix(s.pc)).or_default() += s.count;
        }
        for (i, s) in sidecar.stacks.iter().enumerate() {
            add_stack(
                &mut stacks,
                &mut order,
                (
                    s.pcs.iter().map(|&p| fix(p)).collect(),
                    sidecar.stack_kind(i),
                ),
                s.count,
            );
        }
        for t in &sidecar.threads {
            *threads.entry(t.tid).or_default() += t.samples;
        }
        let c = &mut sum.counters;
        c.samples += sidecar.counters.samples;
        c.outside_histogram += sidecar.counters.outside_histogram;
        c.dropped += sidecar.counters.dropped;
        c.truncated_stacks += sidecar.counters.truncated_stacks;
        c.saturated_bins += sidecar.counters.saturated_bins;
    }
    sum.pc_samples = pcs
        .into_iter()
        .map(|(pc, count)| PcSample { pc, count })
        .collect();
    // Kinds are written only when some input said them (an older runtime's sidecar has none).
    let any_kinds = all.iter().any(|e| !e.stack_kinds.is_empty());
    sum.stack_kinds = if any_kinds {
        order.iter().map(|k| k.1).collect()
    } else {
        Vec::new()
    };
    sum.stacks = order
        .into_iter()
        .map(|key| {
            let count = stacks.get(&key).copied().unwrap_or(0);
            StackSample { count, pcs: key.0 }
        })
        .collect();
    sum.threads = threads
        .into_iter()
        .map(|(tid, samples)| ThreadTotal { tid, samples })
        .collect();
    sum.gmon = None;
    sum.clock = merge_clocks(all.iter().map(|s| s.clock));
    sum
}

/// A stack's frames (leaf first) and its kind.
type StackKey = (Vec<u64>, StackKind);

fn add_stack(
    stacks: &mut HashMap<StackKey, u64>,
    order: &mut Vec<StackKey>,
    key: StackKey,
    n: u64,
) {
    match stacks.get_mut(&key) {
        Some(c) => *c += n,
        None => {
            order.push(key.clone());
            stacks.insert(key, n);
        }
    }
}

/// Finds `obj` (another process's) in `objects` (the sum's) or adds it at a free place; returns
/// the amount to add to `obj`'s runtime addresses.
fn place(objects: &mut Vec<MappedObject>, obj: &MappedObject) -> u64 {
    let same = objects.iter().find(|o| {
        o.path == obj.path
            && o.build_id == obj.build_id
            && o.is_main() == obj.is_main()
            && o.ranges.len() == obj.ranges.len()
    });
    if let Some(o) = same {
        let shift = o.load_bias.wrapping_sub(obj.load_bias);
        let fits = o.ranges.iter().zip(&obj.ranges).all(|(a, b)| {
            a.start == b.start.wrapping_add(shift) && a.end == b.end.wrapping_add(shift)
        });
        if fits {
            return shift;
        }
    }
    let top = objects
        .iter()
        .flat_map(|o| o.ranges.iter().map(|r| r.end))
        .max()
        .unwrap_or(0);
    let base = top.saturating_add(0xfff) & !0xfff;
    let low = obj.ranges.iter().map(|r| r.start).min().unwrap_or(0);
    let shift = base.wrapping_sub(low);
    let mut moved = obj.clone();
    moved.flags &= !gmon_format::sidecar::OBJECT_FLAG_MAIN;
    moved.load_bias = obj.load_bias.wrapping_add(shift);
    moved.ranges = obj
        .ranges
        .iter()
        .map(|r| AddressRange {
            start: r.start.wrapping_add(shift),
            end: r.end.wrapping_add(shift),
        })
        .collect();
    objects.push(moved);
    shift
}

/// Chooses each group's file name (see the module documentation) and puts the group that gets
/// `OUT` first.
pub fn name_groups(groups: &mut [Group]) {
    let sampled_first = |g: &Group| g.first && g.samples > 0;
    groups.sort_by(|a, b| {
        sampled_first(b)
            .cmp(&sampled_first(a))
            .then(b.samples.cmp(&a.samples))
            .then(b.first.cmp(&a.first))
    });
    let mut used: HashMap<String, usize> = HashMap::new();
    for (i, g) in groups.iter_mut().enumerate() {
        if i == 0 {
            g.suffix = None;
            continue;
        }
        let base = sanitize(
            Path::new(&g.executable)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("unknown"),
        );
        let n = used.entry(base.clone()).or_insert(0);
        *n += 1;
        g.suffix = Some(if *n == 1 { base } else { format!("{base}.{n}") });
    }
}

/// A file-name part made of `[A-Za-z0-9._+-]` (anything else becomes `_`) that is not `gmonx`,
/// the sidecar's suffix, nor all digits, the runtime's per-process names.
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
    if s == "gmonx" || s.bytes().all(|b| b.is_ascii_digit()) {
        s.push('_');
    }
    s
}

/// The path of a group's gmon.out next to `out`.
pub fn group_path(out: &Path, g: &Group) -> PathBuf {
    match &g.suffix {
        None => out.to_path_buf(),
        Some(s) => {
            let mut p = out.as_os_str().to_owned();
            p.push(".");
            p.push(s);
            PathBuf::from(p)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(path: &str, bias: u64, start: u64, main: bool) -> MappedObject {
        MappedObject {
            path: path.into(),
            build_id: vec![1, 2],
            load_bias: bias,
            flags: u32::from(main),
            ranges: vec![AddressRange {
                start,
                end: start + 0x1000,
            }],
        }
    }

    #[test]
    fn sidecars_are_summed_in_the_first_address_space() {
        let a = Sidecar {
            rate_hz: 1000,
            objects: vec![object("/bin/x", 0x1000, 0x2000, true)],
            pc_samples: vec![PcSample {
                pc: 0x2010,
                count: 3,
            }],
            stacks: vec![StackSample {
                count: 3,
                pcs: vec![0x2010],
            }],
            ..Sidecar::default()
        };
        let mut b = a.clone();
        b.objects = vec![
            object("/bin/x", 0x5000, 0x6000, true),
            object("/lib/y.so", 0x9000, 0x9000, false),
        ];
        b.pc_samples = vec![
            PcSample {
                pc: 0x6010,
                count: 2,
            },
            PcSample {
                pc: 0x9010,
                count: 1,
            },
        ];
        b.stacks = vec![StackSample {
            count: 2,
            pcs: vec![0x6010],
        }];
        let sum = merge_sidecars(&[&a, &b]);
        // The same link-time address in x: one entry with both counts.
        assert_eq!(
            sum.pc_samples[0],
            PcSample {
                pc: 0x2010,
                count: 5
            }
        );
        assert_eq!(sum.stacks.len(), 1);
        assert_eq!(sum.stacks[0].count, 5);
        // y.so was added where it overlaps nothing; its link-time address is unchanged.
        let (obj, link) = sum.resolve(sum.pc_samples[1].pc).expect("resolves");
        assert_eq!(obj.path, "/lib/y.so");
        assert_eq!(link, 0x9010 - 0x9000);
        assert_eq!(sum.main_object().map(|m| m.load_bias), Some(0x1000));
    }

    #[test]
    fn stack_kinds_stay_one_per_stack() {
        // Two processes whose sidecars have different numbers of stacks, with kinds: the sum
        // must keep one kind per stack (a count mismatch made the sidecar unwritable), and equal
        // frames of different kinds stay apart.
        let stack = |count, pc| StackSample {
            count,
            pcs: vec![pc],
        };
        let a = Sidecar {
            rate_hz: 1000,
            objects: vec![object("/bin/x", 0x1000, 0x2000, true)],
            stacks: vec![stack(3, 0x2010), stack(1, 0x2020)],
            stack_kinds: vec![StackKind::COMPLETE, StackKind::TRUNCATED],
            ..Sidecar::default()
        };
        let mut b = a.clone();
        b.stacks = vec![stack(2, 0x2010), stack(4, 0x2010), stack(5, 0x2030)];
        b.stack_kinds = vec![
            StackKind::COMPLETE,
            StackKind::FRAME_POINTER,
            StackKind::COMPLETE,
        ];
        let sum = merge_sidecars(&[&a, &b]);
        assert_eq!(sum.stacks.len(), sum.stack_kinds.len());
        let got: Vec<(u64, u64, StackKind)> = sum
            .stacks
            .iter()
            .zip(&sum.stack_kinds)
            .map(|(s, &k)| (s.pcs[0], s.count, k))
            .collect();
        assert_eq!(
            got,
            [
                (0x2010, 5, StackKind::COMPLETE),
                (0x2020, 1, StackKind::TRUNCATED),
                (0x2010, 4, StackKind::FRAME_POINTER),
                (0x2030, 5, StackKind::COMPLETE),
            ]
        );
        assert!(gmon_format::sidecar::sidecar_to_vec(&sum).is_ok());
    }

    fn group(executable: &str, first: bool, samples: u64) -> Group {
        Group {
            executable: executable.into(),
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
        let mut g = [group("/bin/spin", false, 900), group("/bin/dash", true, 40)];
        assert_eq!(
            out_order(&mut g),
            [own("/bin/dash"), named("/bin/spin", "spin")]
        );
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
        assert_eq!(sanitize("123"), "123_");
        assert_eq!(sanitize("a b/c"), "a_b_c");
        assert_eq!(sanitize(".hidden"), "_.hidden");
    }
}
