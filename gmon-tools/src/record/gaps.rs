//! The CPU time between the runtime's windows, sampled by the outer clock and put into the
//! profiles of the images that spent it (spec/runtime.md §4.7).
//!
//! Each process image's sidecar says when its runtime sampled it (WINDOW, §5.16). An outer
//! sample inside the window was already counted by the runtime, with its stack; one outside it
//! (the exec and the loader before, the exit after) was not. Those are added to the image's
//! profile as one-frame stacks of kind [`StackKind::OUTSIDE`]: the PC is exact, the callers are
//! unknown.
//!
//! Which image: the outer clock's fork, exec and exit events cut each process's life into
//! images; a profile belongs to the image its window starts in. An image without a profile of
//! its own that began with a fork (a shell's child between `fork` and `exec`, a `vfork` child)
//! runs its parent's code in a copy of its parent's memory: its samples go to the parent's
//! image. Any other image without a profile (a static or set-uid program, which cannot load the
//! runtime) keeps its samples out of every file, and the summary counts them by program name.
//!
//! An inherited outer clock ticks [`super::outer_clock::OVERSAMPLING`] times faster than the
//! runtime's rate (see there why); of an image's samples outside its window, one in that many is
//! kept, from a random first one, so each kept sample stands for one period of the runtime's
//! rate. A CPU's clock ticks at the runtime's rate, and every sample is kept.

use std::collections::HashMap;

use gmon_format::sidecar::{PcSample, StackKind, StackSample, ThreadTotal};

use super::outer_clock::{OuterSample, OuterSamples, Scope, TaskEvent};
use super::profiles::ProcessProfile;
use crate::model::is_kernel_address;

/// What happened to the outer clock's samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GapReport {
    /// Samples kept in the profiles (after thinning: in ticks of the runtime's rate).
    pub kept: u64,
    /// Kept samples whose PC was in the kernel.
    pub kernel_kept: u64,
    /// Outer samples inside a window (the runtime counted that time itself).
    pub in_windows: u64,
    /// Ticks (after thinning) of images that wrote no profile, by program name, most first.
    pub unowned: Vec<(String, u64)>,
    /// Outer samples the kernel or the collector could not keep.
    pub lost: u64,
    /// Whether the kernel's code was sampled.
    pub kernel: bool,
    /// The outer clock's period (ns).
    pub period_ns: u64,
    /// What its events watched.
    pub scope: Scope,
}

impl GapReport {
    /// Ticks of images without a profile.
    pub fn unowned_ticks(&self) -> u64 {
        self.unowned.iter().map(|(_, n)| n).sum()
    }
}

/// How an image began.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Began {
    /// Forked from this process (same program, copied memory).
    Fork(u32),
    /// By executing the program of this name.
    Exec(String),
    /// Before the clock saw it.
    Unknown,
}

/// One image of one process: `[begin, end)`.
#[derive(Debug)]
struct Image {
    begin: u64,
    end: u64,
    began: Began,
    /// The profile whose window starts in it.
    profile: Option<usize>,
}

impl Image {
    /// A process's image from before the clock saw its start, until told otherwise.
    fn before_the_clock() -> Image {
        Image {
            begin: 0,
            end: u64::MAX,
            began: Began::Unknown,
            profile: None,
        }
    }
}

/// Adds the outer samples that fall outside the runtime's windows to `profiles` (their sidecars,
/// and the gmon.out histogram bin of a PC in the main executable when the file has that bin).
/// `stacks`: the run records stacks, so a sample gets a one-frame stack too.
pub fn attribute(outer: &OuterSamples, profiles: &mut [ProcessProfile], stacks: bool) -> GapReport {
    let mut report = GapReport {
        lost: outer.lost,
        kernel: outer.kernel,
        period_ns: outer.period_ns,
        scope: outer.scope,
        ..GapReport::default()
    };
    let mut images = images_of(&outer.tasks);
    // The runtime's own threads: sampled by no clock of the runtime, inside its window too.
    let runtime_threads: std::collections::HashSet<(u32, u32)> = outer
        .tasks
        .iter()
        .filter_map(|t| match t {
            TaskEvent::RuntimeThread { pid, tid, .. } => Some((*pid, *tid)),
            _ => None,
        })
        .collect();
    let clocks: Vec<Option<ClockIndex>> = profiles.iter().map(ClockIndex::of).collect();
    // A profile belongs to the image of its process in which its window starts.
    for (i, p) in profiles.iter().enumerate() {
        let Some((pid, w)) = p.sidecar.as_ref().and_then(|s| Some((s.pid, s.window?))) else {
            continue;
        };
        let list = images
            .entry(pid)
            .or_insert_with(|| vec![Image::before_the_clock()]);
        if let Some(img) = list
            .iter_mut()
            .find(|m| m.begin <= w.start_ns && w.start_ns < m.end)
        {
            // Two files of one image (cannot happen with one runtime): the later write wins.
            let later = img
                .profile
                .is_none_or(|j| window_of(&profiles[j]).is_none_or(|o| o.end_ns <= w.end_ns));
            if later {
                img.profile = Some(i);
            }
        }
    }
    // Each sample outside every window, by the profile that gets it (or the unowned name).
    let mut owed: HashMap<Owner, Vec<Sampled>> = HashMap::new();
    for s in &outer.samples {
        let Some(img) =
            image_at(&images, s.pid, s.time).map(|img| exec_caller(&images, profiles, s, img))
        else {
            owed.entry(Owner::Nobody(String::from("[unknown]")))
                .or_default()
                .push((s.time, s.ip, s.tid, s.user_ip));
            continue;
        };
        if let Some(i) = img.profile {
            // Inside the window, and inside the thread's own clock when the sidecar lists them
            // (before it was armed and after it was deleted, no clock of the runtime ran).
            let inside = window_of(&profiles[i])
                .is_some_and(|w| w.start_ns <= s.time && s.time <= w.end_ns)
                && clocks[i]
                    .as_ref()
                    .is_none_or(|c| c.clocked_at(s.tid, s.time));
            if inside && !runtime_threads.contains(&(s.pid, s.tid)) {
                report.in_windows += 1;
                continue;
            }
            owed.entry(Owner::Profile(i))
                .or_default()
                .push((s.time, s.ip, s.tid, s.user_ip));
            continue;
        }
        let owner = match &img.began {
            // `gmon record`'s own child between its spawn and the command's exec: the
            // recorder's work, not the command's (perf does not count its own either).
            Began::Fork(ppid) if *ppid == outer.recorder => continue,
            // A forked child that wrote nothing runs its parent's code, at its parent's addresses.
            Began::Fork(ppid) => image_at(&images, *ppid, img.begin)
                .and_then(|parent| parent.profile)
                .map(Owner::Profile)
                .unwrap_or_else(|| Owner::Nobody(name_of(&images, *ppid, img.begin))),
            Began::Exec(name) => Owner::Nobody(name.clone()),
            Began::Unknown => Owner::Nobody(String::from("[unknown]")),
        };
        owed.entry(owner)
            .or_default()
            .push((s.time, s.ip, s.tid, s.user_ip));
    }
    // The middles of long images, counted, not kept: inside their windows, unless the window
    // does not cover them (then they are lost, and said so).
    for k in &outer.skipped {
        let covered = image_at(&images, k.pid, k.from)
            .and_then(|img| img.profile)
            .and_then(|i| window_of(&profiles[i]))
            .is_some_and(|w| w.start_ns <= k.from && k.to <= w.end_ns);
        if covered {
            report.in_windows += k.count;
        } else {
            report.lost += k.count;
        }
    }
    let mut unowned: HashMap<String, u64> = HashMap::new();
    for (owner, mut samples) in owed {
        samples.sort_unstable();
        let kept = thin(&samples, outer.scope.oversampling());
        match owner {
            Owner::Profile(i) => {
                report.kept += kept.len() as u64;
                report.kernel_kept += kept.iter().filter(|k| is_kernel_address(k.1)).count() as u64;
                add_to_profile(&mut profiles[i], &kept, stacks);
            }
            Owner::Nobody(name) => *unowned.entry(name).or_default() += kept.len() as u64,
        }
    }
    report.unowned = unowned.into_iter().filter(|(_, n)| *n > 0).collect();
    report
        .unowned
        .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    report
}

/// An outer sample as kept: time, PC, thread, and the user-space PC of a tick in the kernel.
type Sampled = (u64, u64, u32, u64);

/// Who gets a sample: a profile, or nobody (the program's name, for the summary).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Owner {
    Profile(usize),
    Nobody(String),
}

/// The image a tick of `img` is charged to. The kernel names the new program at an exec before
/// it has finished loading it: until the new program's first instruction, a tick in the kernel
/// still carries the old program's registers, the `execve` call that is being served. A
/// user-space PC outside every object of the new image is that call: the tick is the image's
/// before the exec, whose objects name it, as perf charges it (spec/runtime.md §4.7).
fn exec_caller<'a>(
    images: &'a HashMap<u32, Vec<Image>>,
    profiles: &[ProcessProfile],
    s: &OuterSample,
    img: &'a Image,
) -> &'a Image {
    // Only before the runtime's window: by then the new program has run.
    let foreign = matches!(img.began, Began::Exec(_))
        && is_kernel_address(s.ip)
        && s.user_ip != 0
        && img
            .profile
            .and_then(|i| profiles[i].sidecar.as_ref())
            .is_some_and(|sc| {
                sc.window.is_some_and(|w| s.time < w.start_ns)
                    && !sc.objects.iter().any(|o| o.contains(s.user_ip))
            });
    if !foreign {
        return img;
    }
    image_at(images, s.pid, img.begin.saturating_sub(1)).unwrap_or(img)
}

fn window_of(p: &ProcessProfile) -> Option<gmon_format::sidecar::SamplingWindow> {
    p.sidecar.as_ref()?.window
}

/// A profile's thread clocks (spec/runtime.md §5.17), by thread.
struct ClockIndex {
    by_tid: HashMap<u32, Vec<(u64, u64)>>,
    /// Some clocks were not listed: a thread without a listed clock at a time may still have
    /// had one.
    incomplete: bool,
}

impl ClockIndex {
    /// `None` when the sidecar does not list its threads' clocks (a writer before the list, or
    /// a log the writer could not read): the window alone decides.
    fn of(p: &ProcessProfile) -> Option<ClockIndex> {
        let t = p.sidecar.as_ref()?.thread_clocks.as_ref()?;
        let mut by_tid: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        for c in &t.clocks {
            by_tid
                .entry(c.tid)
                .or_default()
                .push((c.start_ns, c.end_ns));
        }
        Some(ClockIndex {
            by_tid,
            incomplete: t.dropped != 0,
        })
    }

    /// Whether thread `tid` had a clock of the runtime at `time`.
    fn clocked_at(&self, tid: u32, time: u64) -> bool {
        let listed = self
            .by_tid
            .get(&tid)
            .is_some_and(|v| v.iter().any(|&(a, b)| a <= time && time <= b));
        listed || self.incomplete
    }
}

/// Each process's images, in time order, from the fork, exec and exit events.
fn images_of(tasks: &[TaskEvent]) -> HashMap<u32, Vec<Image>> {
    let mut sorted: Vec<&TaskEvent> = tasks.iter().collect();
    sorted.sort_by_key(|t| t.time());
    let mut images: HashMap<u32, Vec<Image>> = HashMap::new();
    let close = |list: &mut Vec<Image>, at: u64| {
        if let Some(last) = list.last_mut().filter(|l| l.end == u64::MAX) {
            last.end = at;
        }
    };
    for t in sorted {
        match t {
            TaskEvent::Fork { pid, ppid, time } => {
                let list = images.entry(*pid).or_default();
                close(list, *time);
                list.push(Image {
                    begin: *time,
                    end: u64::MAX,
                    began: Began::Fork(*ppid),
                    profile: None,
                });
            }
            TaskEvent::Exec { pid, comm, time } => {
                let list = images.entry(*pid).or_default();
                if list.is_empty() {
                    list.push(Image::before_the_clock());
                }
                close(list, *time);
                list.push(Image {
                    begin: *time,
                    end: u64::MAX,
                    began: Began::Exec(comm.clone()),
                    profile: None,
                });
            }
            TaskEvent::RuntimeThread { .. } => {}
            // The image lasts past its exit record: the kernel writes it before it tears the
            // address space down, and a clock of every CPU samples that too. Only a fork that
            // gives the pid to a new process ends it (the collector keeps no sample of a pid
            // given to a process outside the tree).
            TaskEvent::Exit { .. } => {}
        }
    }
    images
}

/// The image of process `pid` at `time`.
fn image_at(images: &HashMap<u32, Vec<Image>>, pid: u32, time: u64) -> Option<&Image> {
    images
        .get(&pid)?
        .iter()
        .rev()
        .find(|m| m.begin <= time && time < m.end)
}

/// The program a process was running at `time`, for the summary.
fn name_of(images: &HashMap<u32, Vec<Image>>, pid: u32, time: u64) -> String {
    match image_at(images, pid, time).map(|m| &m.began) {
        Some(Began::Exec(name)) => name.clone(),
        Some(Began::Fork(ppid)) if *ppid != pid => {
            // One level up is enough for the summary's name.
            match image_at(images, *ppid, time).map(|m| &m.began) {
                Some(Began::Exec(name)) => name.clone(),
                _ => String::from("[unknown]"),
            }
        }
        _ => String::from("[unknown]"),
    }
}

/// One sample in `k` of a time-ordered list, from a random first one.
fn thin(samples: &[Sampled], k: u64) -> Vec<Sampled> {
    use std::hash::{BuildHasher, Hasher};
    let k = k.max(1);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(samples.len());
    let phase = (h.finish() % k) as usize;
    samples
        .iter()
        .skip(phase)
        .step_by(k as usize)
        .copied()
        .collect()
}

/// Adds `kept` samples (time, PC, tid) to one process's profile.
fn add_to_profile(p: &mut ProcessProfile, kept: &[Sampled], stacks: bool) {
    let Some(s) = p.sidecar.as_mut() else {
        return;
    };
    let mut pcs: HashMap<u64, u64> = s.pc_samples.iter().map(|x| (x.pc, x.count)).collect();
    let mut threads: HashMap<u32, u64> = s.threads.iter().map(|t| (t.tid, t.samples)).collect();
    let mut alone: HashMap<Vec<u64>, u64> = HashMap::new();
    let mut binned: Vec<u64> = Vec::new();
    let main = s.main_object().cloned();
    for &(_, ip, tid, user) in kept {
        *pcs.entry(ip).or_default() += 1;
        *threads.entry(tid).or_default() += 1;
        // A tick in the kernel stands above the user-space code that entered it.
        let frames = if user != 0 { vec![ip, user] } else { vec![ip] };
        *alone.entry(frames).or_default() += 1;
        s.counters.samples += 1;
        match main.as_ref().filter(|m| m.contains(ip)) {
            Some(m) => binned.push(ip.wrapping_sub(m.load_bias)),
            None => s.counters.outside_histogram += 1,
        }
    }
    if !binned.is_empty() {
        let missed = p.add_to_histogram(&binned);
        if let Some(s) = p.sidecar.as_mut() {
            s.counters.outside_histogram += missed;
        }
    }
    let Some(s) = p.sidecar.as_mut() else {
        return;
    };
    s.pc_samples = {
        let mut v: Vec<PcSample> = pcs
            .into_iter()
            .map(|(pc, count)| PcSample { pc, count })
            .collect();
        v.sort_unstable();
        v
    };
    s.threads = {
        let mut v: Vec<ThreadTotal> = threads
            .into_iter()
            .map(|(tid, samples)| ThreadTotal { tid, samples })
            .collect();
        v.sort_unstable();
        v
    };
    if stacks {
        if s.stack_kinds.len() != s.stacks.len() {
            s.stack_kinds.resize(s.stacks.len(), StackKind::UNKNOWN);
        }
        let mut alone: Vec<(Vec<u64>, u64)> = alone.into_iter().collect();
        alone.sort_unstable();
        for (pcs, count) in alone {
            s.stacks.push(StackSample { count, pcs });
            s.stack_kinds.push(StackKind::OUTSIDE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gmon_format::Sidecar;
    use gmon_format::sidecar::{
        AddressRange, MappedObject, OBJECT_FLAG_MAIN, SamplingWindow, ThreadClock, ThreadClocks,
    };

    fn profile(pid: u32, window: (u64, u64)) -> ProcessProfile {
        ProcessProfile {
            path: std::path::PathBuf::from(format!("/nonexistent/gmon.out.{pid}")),
            first: false,
            sidecar: Some(Sidecar {
                pid,
                window: Some(SamplingWindow {
                    start_ns: window.0,
                    end_ns: window.1,
                }),
                objects: vec![MappedObject {
                    path: "/bin/prog".into(),
                    build_id: Vec::new(),
                    load_bias: 0,
                    flags: OBJECT_FLAG_MAIN,
                    ranges: vec![AddressRange {
                        start: 0x1000,
                        end: 0x2000,
                    }],
                }],
                ..Sidecar::default()
            }),
            changed: None,
        }
    }

    fn samples(pid: u32, times: impl Iterator<Item = u64>, ip: u64) -> Vec<OuterSample> {
        times
            .map(|time| OuterSample {
                time,
                ip,
                pid,
                tid: pid,
                user_ip: if is_kernel_address(ip) { 0x1800 } else { 0 },
            })
            .collect()
    }

    #[test]
    fn samples_outside_the_windows_go_to_the_image_that_spent_them() {
        let loader = 0x7f00_0000_1000;
        let kernel = 0xffff_ffff_8100_0000;
        let mut all = Vec::new();
        // Process 10 execs `prog` at 200; its runtime samples 300..=800; it ends at 1000.
        all.extend(samples(10, (210..300).step_by(10), loader)); // 9 before the window
        all.extend(samples(10, (300..=800).step_by(100), 0x1500)); // 6 inside
        // 23 after: 19 before its exit record, and 4 of the exit's teardown of its address
        // space, which the kernel does after writing the record.
        all.extend(samples(10, (810..1040).step_by(10), kernel));
        // Its child 11, forked at 500, writes nothing: its parent's code, its parent's file.
        all.extend(samples(11, (510..590).step_by(10), loader)); // 8
        // Its child 12 execs a static program at 710: no profile anywhere.
        all.extend(samples(12, (720..880).step_by(10), 0x40_1000)); // 16
        let outer = OuterSamples {
            samples: all,
            tasks: vec![
                TaskEvent::Fork {
                    pid: 10,
                    ppid: 2,
                    time: 100,
                },
                TaskEvent::Exec {
                    pid: 10,
                    comm: "prog".into(),
                    time: 200,
                },
                TaskEvent::Fork {
                    pid: 11,
                    ppid: 10,
                    time: 500,
                },
                TaskEvent::Exit { pid: 11, time: 600 },
                TaskEvent::Fork {
                    pid: 12,
                    ppid: 10,
                    time: 700,
                },
                TaskEvent::Exec {
                    pid: 12,
                    comm: "static".into(),
                    time: 710,
                },
                TaskEvent::Exit { pid: 12, time: 900 },
                TaskEvent::Exit {
                    pid: 10,
                    time: 1000,
                },
            ],
            lost: 3,
            period_ns: 250_000,
            kernel: true,
            recorder: 1,
            scope: Scope::Inherited,
            skipped: vec![super::super::outer_clock::Skipped {
                pid: 10,
                from: 400,
                to: 700,
                count: 5,
            }],
        };
        let mut profiles = vec![profile(10, (300, 800))];
        let r = attribute(&outer, &mut profiles, true);
        // 6 kept inside, and 5 counted in the middle of the image, inside its window too.
        assert_eq!(r.in_windows, 6 + 5);
        assert_eq!(r.lost, 3);
        // 9 + 23 + 8 = 40 outside the window, one in four kept.
        assert_eq!(r.kept, 10);
        assert_eq!(r.unowned, vec![("static".to_string(), 4)]);
        let s = profiles[0].sidecar.as_ref().expect("sidecar");
        assert_eq!(s.counters.samples, 10);
        assert_eq!(s.counters.outside_histogram, 10);
        let outside: u64 = (0..s.stacks.len())
            .filter(|&i| s.stack_kind(i) == StackKind::OUTSIDE)
            .map(|i| s.stacks[i].count)
            .sum();
        assert_eq!(outside, 10);
        // A tick in the kernel stands above the user-space PC that entered it.
        for st in &s.stacks {
            let want = if st.pcs[0] == kernel { 2 } else { 1 };
            assert_eq!(st.pcs.len(), want, "{st:?}");
        }
        assert_eq!(s.pc_samples.iter().map(|p| p.count).sum::<u64>(), 10);
        assert_eq!(
            r.kernel_kept,
            s.pc_samples
                .iter()
                .filter(|p| p.pc == kernel)
                .map(|p| p.count)
                .sum::<u64>()
        );
        assert_eq!(s.threads.iter().map(|t| t.samples).sum::<u64>(), 10);
    }

    #[test]
    fn a_cpus_clock_keeps_every_sample_an_inherited_one_one_in_four() {
        // 40 samples outside the window: a clock of every CPU ticks at `--hz` (each stands for
        // one tick), an inherited one at four times it.
        for (scope, kept) in [(Scope::System, 40), (Scope::Inherited, 10)] {
            let outer = OuterSamples {
                samples: samples(40, (1000..1400).step_by(10), 0x1500),
                scope,
                ..OuterSamples::default()
            };
            let mut profiles = vec![profile(40, (2000, 3000))];
            let r = attribute(&outer, &mut profiles, false);
            assert_eq!(r.kept, kept, "{scope:?}");
        }
    }

    #[test]
    fn a_tick_of_an_exec_still_in_the_old_programs_registers_is_the_callers() {
        // Process 30 is a shell's child (forked at 100 from 29, whose profile is the shell's);
        // it execs `prog` at 200. The kernel names the new program before it has loaded it:
        // ticks at 210 and 220 carry the `execve` call's address in the shell's libc, which no
        // object of `prog` holds; from 230 on, `prog`'s own addresses.
        let kernel = 0xffff_ffff_8100_0000;
        let shell_libc = 0x7f00_0000_5000;
        let mut all = Vec::new();
        for (time, user_ip) in [(210, shell_libc), (220, shell_libc), (230, 0x1800)] {
            all.push(OuterSample {
                time,
                ip: kernel,
                pid: 30,
                tid: 30,
                user_ip,
            });
        }
        // Four of each, so that thinning one in four keeps one of each.
        let all: Vec<OuterSample> = all
            .iter()
            .flat_map(|s| {
                (0..4).map(move |k| OuterSample {
                    time: s.time + k,
                    ..*s
                })
            })
            .collect();
        let outer = OuterSamples {
            samples: all,
            tasks: vec![
                TaskEvent::Fork {
                    pid: 30,
                    ppid: 29,
                    time: 100,
                },
                TaskEvent::Exec {
                    pid: 30,
                    comm: "prog".into(),
                    time: 200,
                },
            ],
            period_ns: 250_000,
            kernel: true,
            recorder: 1,
            ..OuterSamples::default()
        };
        let mut shell = profile(29, (50, 5000));
        if let Some(sc) = shell.sidecar.as_mut() {
            sc.objects[0].ranges = vec![AddressRange {
                start: 0x7f00_0000_0000,
                end: 0x7f00_0001_0000,
            }];
        }
        let mut profiles = vec![shell, profile(30, (300, 400))];
        let r = attribute(&outer, &mut profiles, true);
        assert_eq!(r.kept, 3);
        let ticks = |p: &ProcessProfile| p.sidecar.as_ref().map_or(0, |s| s.counters.samples);
        // The two ticks of the `execve` call are the shell's; the third is `prog`'s.
        assert_eq!((ticks(&profiles[0]), ticks(&profiles[1])), (2, 1));
    }

    #[test]
    fn a_threads_time_outside_its_own_clock_is_kept_inside_the_window() {
        // Process 20's window is 50..500. Its main thread's clock ran 60..480; thread 21's ran
        // 200..300 (armed after its start at 150, deleted before its end at 350). Thread 22 had
        // no clock at all (it never registered); thread 23 is not in a sidecar without the list.
        let on = |tid, times: std::ops::Range<u64>| {
            times.step_by(10).map(move |time| OuterSample {
                time,
                ip: 0x1500,
                pid: 20,
                tid,
                user_ip: 0,
            })
        };
        let outer = OuterSamples {
            samples: on(20, 100..200)
                .chain(on(21, 150..350))
                .chain(on(22, 100..130))
                .collect(),
            scope: Scope::System,
            ..OuterSamples::default()
        };
        let clock = |tid, start_ns, end_ns| ThreadClock {
            tid,
            start_ns,
            end_ns,
        };
        let listed = |clocks| {
            let mut p = profile(20, (50, 500));
            if let Some(s) = p.sidecar.as_mut() {
                s.thread_clocks = clocks;
            }
            p
        };
        let list = ThreadClocks {
            dropped: 0,
            clocks: vec![clock(20, 60, 480), clock(21, 200, 300)],
        };
        let mut profiles = vec![listed(Some(list.clone()))];
        let r = attribute(&outer, &mut profiles, true);
        // 21's 5 before its clock (150..190) and 5 after (300 is its clock's; 310..340: 4),
        // and 22's 3: kept; the main thread's 10 and 21's 11 under their clocks: the runtime's.
        assert_eq!((r.kept, r.in_windows), (5 + 4 + 3, 10 + 11), "{r:?}");
        // A list the runtime could not complete proves nothing about a thread it lacks.
        let incomplete = ThreadClocks { dropped: 1, ..list };
        let mut profiles = vec![listed(Some(incomplete))];
        let r = attribute(&outer, &mut profiles, true);
        assert_eq!((r.kept, r.in_windows), (0, 33), "{r:?}");
        // Without a list (an older runtime), the window alone decides, as before.
        let mut profiles = vec![listed(None)];
        let r = attribute(&outer, &mut profiles, true);
        assert_eq!((r.kept, r.in_windows), (0, 33), "{r:?}");
    }

    #[test]
    fn the_runtimes_own_threads_are_kept_inside_the_window_too() {
        let mut all = samples(20, (100..200).step_by(10), 0x1500);
        all.extend((100..200).step_by(10).map(|time| OuterSample {
            time,
            ip: 0x7f00_0000_2000,
            pid: 20,
            tid: 21,
            user_ip: 0,
        }));
        let outer = OuterSamples {
            samples: all,
            tasks: vec![TaskEvent::RuntimeThread {
                pid: 20,
                tid: 21,
                time: 90,
            }],
            ..OuterSamples::default()
        };
        let mut profiles = vec![profile(20, (50, 500))];
        let r = attribute(&outer, &mut profiles, false);
        assert_eq!(r.in_windows, 10);
        // The thread's 10 samples, one in four: 2 or 3 by the random first one.
        assert!((2..=3).contains(&r.kept), "{r:?}");
        // Without stacks recorded, none is made up.
        let s = profiles[0].sidecar.as_ref().expect("sidecar");
        assert!(s.stacks.is_empty());
    }
}
