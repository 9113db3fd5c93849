//! The few lines `gmon record` prints at the end: files written, processes, samples, and the
//! functions with the most self samples over every file (named as the views name them;
//! `[object]` when the object cannot be read).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use gmon_format::Sidecar;
use gmon_format::sidecar::{ClockKind, ClockReport};

use super::Outer;
use super::outer_clock::Scope;
use crate::model::{ObjectSymbols, display_name};

/// One written profile, as the summary shows it.
#[derive(Debug, Clone)]
pub struct WrittenFile {
    /// The gmon.out path.
    pub path: std::path::PathBuf,
    /// The executable's path as recorded.
    pub executable: String,
    /// Processes summed into it.
    pub processes: usize,
    /// Ticks counted.
    pub samples: u64,
}

/// The functions with the most self samples, and how well the samples are named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopFunctions {
    /// (display name, self samples), most first.
    pub functions: Vec<(String, u64)>,
    /// PC samples in a function a symbol names.
    pub by_symbol: u64,
    /// PC samples in a function only the unwind table knows (`OBJECT+0xSTART`).
    pub by_unwind_table: u64,
    /// Every PC sample.
    pub total: u64,
}

impl TopFunctions {
    /// The share (0..=1) of samples in a function with a name of either kind: a symbol's, or
    /// `OBJECT+0xSTART` from the unwind table.
    pub fn named_share(&self) -> f64 {
        (self.by_symbol + self.by_unwind_table) as f64 / self.total.max(1) as f64
    }
}

/// Self samples per function name over `sidecars`, most first (at most `limit`). Names come
/// from the views' symbolizer ([`ObjectSymbols`]: `.symtab`, a separate debug file, `.dynsym`,
/// then the unwind table's `OBJECT+0xSTART`), so the summary names what `gmon flame` and
/// `gmon pprof` draw. Only objects with samples are read, each once, and only for the addresses
/// sampled in it (so a large library's unwind table is parsed only when a symbol misses).
pub fn top_functions(sidecars: &[&Sidecar], limit: usize) -> TopFunctions {
    // (object path, build id) -> (link-time address -> samples)
    type Key<'a> = (&'a str, &'a [u8]);
    let mut by_object: HashMap<Key<'_>, HashMap<u64, u64>> = HashMap::new();
    let mut unknown = 0u64;
    let mut kernel = 0u64;
    let mut total = 0u64;
    for sidecar in sidecars {
        for s in &sidecar.pc_samples {
            total = total.saturating_add(s.count);
            match sidecar.resolve(s.pc) {
                Some((obj, link)) => {
                    let slot = by_object
                        .entry((obj.path.as_str(), obj.build_id.as_slice()))
                        .or_default()
                        .entry(link)
                        .or_default();
                    *slot = slot.saturating_add(s.count);
                }
                // Only the outer clock samples the kernel (spec/runtime.md §4.7).
                None if crate::model::is_kernel_address(s.pc) => {
                    kernel = kernel.saturating_add(s.count)
                }
                None => unknown = unknown.saturating_add(s.count),
            }
        }
    }
    let mut top = TopFunctions {
        total,
        ..TopFunctions::default()
    };
    let mut counts: HashMap<String, u64> = HashMap::new();
    if unknown > 0 {
        counts.insert("[unknown]".to_string(), unknown);
    }
    if kernel > 0 {
        counts.insert(crate::model::KERNEL.to_string(), kernel);
    }
    for ((path, build_id), addrs) in by_object {
        let wanted: Vec<u64> = addrs.keys().copied().collect();
        let syms = ObjectSymbols::open_for(Path::new(path), build_id, Some(&wanted));
        for (link, n) in addrs {
            let name = match &syms {
                Some(t) => match t.function_at(link) {
                    Some(f) => {
                        if f.from_symbol {
                            top.by_symbol = top.by_symbol.saturating_add(n);
                        } else {
                            top.by_unwind_table = top.by_unwind_table.saturating_add(n);
                        }
                        display_name(&f.name)
                    }
                    None => t.name_at(link).0,
                },
                None => {
                    let base = Path::new(path)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| path.to_owned());
                    format!("[{base}]")
                }
            };
            *counts.entry(name).or_default() += n;
        }
    }
    let mut v: Vec<(String, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(limit);
    top.functions = v;
    top
}

/// The summary text (each line starts with `gmon record:` or two spaces).
pub fn render(
    files: &[WrittenFile],
    idle: (usize, usize),
    hz: u32,
    cpu: std::time::Duration,
    top: &TopFunctions,
    clock: Option<&ClockReport>,
    outer: &Outer,
) -> String {
    let processes: usize = files.iter().map(|f| f.processes).sum::<usize>() + idle.1;
    let samples: u64 = files.iter().map(|f| f.samples).sum();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "gmon record: {samples} samples at {hz} Hz ({:.3} s of CPU time) from {processes} process{} in {} file{} (+ .gmonx):",
        cpu.as_secs_f64(),
        if processes == 1 { "" } else { "es" },
        files.len(),
        if files.len() == 1 { "" } else { "s" },
    );
    if let Some(c) = clock {
        s.push_str(&clock_lines(c, samples, hz, cpu.as_secs_f64(), outer));
    }
    s.push_str(&outer_lines(outer));
    for f in files {
        let exe = Path::new(&f.executable)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "?".into());
        let _ = writeln!(
            s,
            "  {}  {exe}, {} process{}, {} samples",
            f.path.display(),
            f.processes,
            if f.processes == 1 { "" } else { "es" },
            f.samples
        );
    }
    if idle.0 > 0 {
        let _ = writeln!(
            s,
            "  ({} process{} of {} other executable{} had no samples: no file)",
            idle.1,
            if idle.1 == 1 { "" } else { "es" },
            idle.0,
            if idle.0 == 1 { "" } else { "s" },
        );
    }
    if samples > 0 && !top.functions.is_empty() {
        let _ = write!(
            s,
            "  top functions (self; {:.1}% of samples in named functions",
            top.by_symbol as f64 * 100.0 / top.total.max(1) as f64
        );
        if top.by_unwind_table > 0 {
            let _ = write!(
                s,
                ", {:.1}% more as OBJECT+0xSTART",
                top.by_unwind_table as f64 * 100.0 / top.total.max(1) as f64
            );
        }
        let _ = writeln!(s, "):");
        for (name, n) in &top.functions {
            let pct = *n as f64 * 100.0 / samples as f64;
            let _ = writeln!(s, "    {pct:5.1}%  {n:>8}  {name}");
        }
    }
    s
}

/// Below this share of `CPU time × rate`, the summary says that samples are missing.
const COVERAGE_WARNING: f64 = 0.9;

/// Which clock drove the samples and at what real rate (signals per CPU second); and, when the
/// samples cover less than [`COVERAGE_WARNING`] of `cpu × hz`, one line that says so with the
/// likely reason (spec/runtime.md §4.1, "Clock").
fn clock_lines(c: &ClockReport, samples: u64, hz: u32, cpu: f64, outer: &Outer) -> String {
    let mut s = String::new();
    let rate = if cpu > 0.0 {
        format!("{:.0}", c.signals as f64 / cpu)
    } else {
        "?".into()
    };
    let _ = write!(
        s,
        "  clock: {}, {rate} signals per CPU second for {hz} Hz",
        c.clock.name()
    );
    if c.clock == ClockKind::THREAD_TIMER && c.refused_errno != 0 {
        let why = std::io::Error::from_raw_os_error(c.refused_errno as i32);
        let _ = write!(s, " (the perf task clock was refused: {why})");
    }
    // With the outer clock, the time outside the runtime's windows is its (one kept tick per
    // period at `hz`): the runtime's own rate is over the rest. A short process spends most of
    // its time outside, where the overall rate above says little of the runtime's clock.
    if let Outer::Ran(r) = outer {
        let inside = cpu - r.kept as f64 / f64::from(hz.max(1));
        if r.kept > 0 && inside > 0.01 && inside >= 0.05 * cpu {
            let _ = write!(
                s,
                "; about {:.0} inside the runtime's windows, the rest sampled by the outer clock",
                c.signals as f64 / inside
            );
        }
    }
    s.push('\n');
    let due = cpu * f64::from(hz);
    if due >= 10.0 && (samples as f64) < COVERAGE_WARNING * due {
        let _ = writeln!(
            s,
            "gmon record: samples cover {:.0}% of the CPU time ({samples} of {due:.0} ticks due); \
             not sampled:",
            samples as f64 * 100.0 / due,
        );
        let ticks = |ns: u64| ns as f64 * f64::from(hz) / 1e9;
        // With the outer clock, the time before each runtime started and the runtime's own
        // work are sampled; what is left of them is the programs that wrote no profile.
        let mut known: Vec<(f64, &str)> = match outer {
            Outer::Ran(r) => vec![(
                r.unowned_ticks() as f64,
                "programs that wrote no profile (too short for a sample of their own, static or set-uid, or killed)",
            )],
            _ => vec![
                (
                    ticks(c.before_start_ns),
                    "before the runtime started in each program (fork to exec, exec, dynamic \
                     loading)",
                ),
                (
                    ticks(c.runtime_ns),
                    "the sampler's own work: its start in each process, and its threads",
                ),
            ],
        };
        // With the outer clock, a thread's start before its clock was armed is sampled too
        // (THREAD_CLOCKS, spec/runtime.md §5.17).
        if !matches!(outer, Outer::Ran(_)) {
            known.push((
                c.unsampled as f64,
                "threads starting, or ending before their first sample",
            ));
        }
        for (n, what) in known.iter().filter(|(n, _)| *n >= 0.5) {
            let _ = writeln!(s, "  {n:>9.0}  {what}");
        }
        let rest = due - samples as f64 - known.iter().map(|(n, _)| n).sum::<f64>();
        if rest >= 0.5 {
            let why = if let Outer::Ran(r) = outer {
                if !r.kernel {
                    "the kernel's work in each process (exec, page faults, exit): an \
                     unprivileged user's outer clock samples user space only \
                     (perf_event_paranoid 2 or more)"
                } else if r.scope == Scope::Inherited {
                    "CPU time an inherited task clock cannot see: each process's exit after \
                     the kernel detaches it (the address space torn down), set-uid programs; \
                     as root, --outer-clock system sees it"
                } else {
                    "each thread's last period of the outer clock, the variation of its \
                     sampling, and the time between gmon record's fork of the command and \
                     its exec"
                }
            } else if c.clock == ClockKind::THREAD_TIMER {
                "the thread CPU timer is checked at the kernel's tick, so threads shorter \
                 than a tick end before their first sample"
            } else {
                "writing the profile and the kernel's work at process exit, the sampler's \
                 signal handling, or processes without the runtime"
            };
            let _ = writeln!(s, "  {rest:>9.0}  the rest: {why}");
        }
    }
    s
}

/// What the outer clock did: one line, and one more for samples no file holds.
fn outer_lines(outer: &Outer) -> String {
    let mut s = String::new();
    match outer {
        Outer::Off => {}
        Outer::Refused(why) => {
            let _ = writeln!(
                s,
                "  outer clock: refused by the kernel ({why}): each program's exec, loading and \
                 exit are not sampled"
            );
        }
        Outer::Ran(r) => {
            let _ = write!(
                s,
                "  outer clock: {} samples of process start and exit",
                r.kept
            );
            if r.kernel {
                let _ = write!(s, " ({} in the kernel)", r.kernel_kept);
            } else {
                let _ = write!(s, " (user space only: the kernel refused its own part)");
            }
            let _ = write!(s, "; {}", r.scope.describe());
            if r.lost > 0 {
                let _ = write!(s, "; {} of its samples lost (ring full)", r.lost);
            }
            s.push('\n');
            let unowned = r.unowned_ticks();
            if unowned > 0 {
                let names: Vec<String> = r
                    .unowned
                    .iter()
                    .take(5)
                    .map(|(name, n)| format!("{name} {n}"))
                    .collect();
                let more = if r.unowned.len() > 5 { ", ..." } else { "" };
                let _ = writeln!(
                    s,
                    "gmon record: {unowned} sample{} of programs that wrote no profile {} in no \
                     file: {}{more}",
                    if unowned == 1 { "" } else { "s" },
                    if unowned == 1 { "is" } else { "are" },
                    names.join(", ")
                );
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(clock: ClockKind, refused_errno: u32, signals: u64, unsampled: u64) -> ClockReport {
        ClockReport {
            clock,
            refused_errno,
            signals,
            unsampled,
            ..ClockReport::default()
        }
    }

    #[test]
    fn the_clock_and_its_real_rate_are_said() {
        let c = report(ClockKind::PERF_TASK_CLOCK, 0, 990, 0);
        let s = clock_lines(&c, 990, 1000, 1.0, &Outer::Off);
        assert_eq!(
            s,
            "  clock: perf task clock, 990 signals per CPU second for 1000 Hz\n"
        );
        let c = report(ClockKind::THREAD_TIMER, 13, 250, 0);
        let s = clock_lines(&c, 995, 1000, 1.0, &Outer::Off);
        assert!(s.starts_with("  clock: thread CPU timer, 250 signals per CPU second for 1000 Hz (the perf task clock was refused: Permission denied"), "{s}");
        assert_eq!(s.lines().count(), 1, "{s}");
        // With the outer clock holding 600 of 1000 ticks, the runtime's 380 signals were taken
        // in the other 0.4 s.
        let c = report(ClockKind::PERF_TASK_CLOCK, 0, 380, 0);
        let outer = Outer::Ran(super::super::gaps::GapReport {
            kept: 600,
            ..Default::default()
        });
        let s = clock_lines(&c, 980, 1000, 1.0, &outer);
        assert_eq!(
            s,
            "  clock: perf task clock, 380 signals per CPU second for 1000 Hz; about 950 inside \
             the runtime's windows, the rest sampled by the outer clock\n"
        );
    }

    #[test]
    fn samples_below_ninety_percent_of_the_cpu_time_are_said_with_each_cause() {
        let c = report(ClockKind::THREAD_TIMER, 0, 300, 700);
        let s = clock_lines(&c, 350, 1000, 1.3, &Outer::Off);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[1],
            "gmon record: samples cover 27% of the CPU time (350 of 1300 ticks due); not sampled:"
        );
        assert_eq!(
            lines[2],
            "        700  threads starting, or ending before their first sample"
        );
        assert!(
            lines[3].starts_with("        250  the rest: the thread CPU timer"),
            "{s}"
        );
        assert_eq!(lines.len(), 4, "{s}");
        // 90 % and more: nothing to say.
        assert_eq!(
            clock_lines(&c, 1170, 1000, 1.3, &Outer::Off)
                .lines()
                .count(),
            1
        );

        // The task clock, with the time before the runtime started and the sampler's threads
        // measured: each cause on its own line, the rest what none of them explains.
        let c = ClockReport {
            before_start_ns: 400_000_000,
            runtime_ns: 100_000_000,
            ..report(ClockKind::PERF_TASK_CLOCK, 0, 400, 50)
        };
        let s = clock_lines(&c, 400, 1000, 1.0, &Outer::Off);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            &lines[2..],
            [
                "        400  before the runtime started in each program (fork to exec, exec, dynamic \
                 loading)",
                "        100  the sampler's own work: its start in each process, and its threads",
                "         50  threads starting, or ending before their first sample",
                "         50  the rest: writing the profile and the kernel's work at process \
                 exit, the sampler's signal handling, or processes without the runtime",
            ],
            "{s}"
        );
    }
}
