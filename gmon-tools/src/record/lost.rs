//! What the run's processes could not put into their profiles, for the summary
//! (spec/runtime.md §3): the lines they appended to the run's notes file instead of the
//! program's stderr, and the processes still running when the command ended.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The notes file the runtime appends to in the run's directory (gmon-write's record.rs).
pub const NOTES: &str = "notes";

/// At most this many bytes of the notes file are read: a line per process, and a run of
/// thousands of processes that all failed needs no more than the first ones to be understood.
const NOTES_CAP: u64 = 1 << 20;

/// A problem a process reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// The process.
    pub pid: u32,
    /// What happened, in the runtime's words.
    pub what: String,
}

/// The lines of `dir`'s notes file (none when it does not exist).
pub fn reported(dir: &Path) -> Vec<Reported> {
    let mut text = Vec::new();
    let Ok(f) = std::fs::File::open(dir.join(NOTES)) else {
        return Vec::new();
    };
    if f.take(NOTES_CAP).read_to_end(&mut text).is_err() {
        return Vec::new();
    }
    String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| {
            let (pid, what) = l.split_once(' ')?;
            Some(Reported {
                pid: pid.parse().ok()?,
                what: what.to_string(),
            })
        })
        .collect()
}

/// The notes for the summary: one per reported line, the first few only, then a count.
pub fn describe(reported: &[Reported]) -> Vec<String> {
    const SHOWN: usize = 5;
    let mut notes: Vec<String> = reported
        .iter()
        .take(SHOWN)
        .map(|r| format!("process {}: {}", r.pid, r.what))
        .collect();
    if reported.len() > SHOWN {
        notes.push(format!(
            "and {} more problems reported by the command's processes",
            reported.len() - SHOWN
        ));
    }
    notes
}

/// A process of the command that was still running when the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Its pid.
    pub pid: u32,
    /// Its name (`/proc/<pid>/comm`).
    pub name: String,
}

/// The processes of this user whose environment still names `per_process` as
/// `GMON_RECORD_OUT`: descendants of the command that outlived it (a daemon, a job left in the
/// background). Their profiles are written, if ever, after the run is over.
pub fn still_running(per_process: &Path) -> Vec<Running> {
    let mut needle = b"GMON_RECORD_OUT=".to_vec();
    needle.extend_from_slice(per_process.as_os_str().as_bytes());
    needle.push(0);
    let me = std::process::id();
    let euid = super::runtime::euid();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me || !e.metadata().is_ok_and(|m| m.uid() == euid) {
            continue;
        }
        let mut env = Vec::new();
        let read = std::fs::File::open(e.path().join("environ"))
            .and_then(|f| f.take(NOTES_CAP).read_to_end(&mut env));
        // The variable is at the start or after another one's NUL.
        let holds = read.is_ok()
            && (env.starts_with(&needle)
                || env
                    .windows(needle.len() + 1)
                    .any(|w| w.first() == Some(&0) && w.get(1..) == Some(&needle[..])));
        if holds {
            let name = std::fs::read_to_string(e.path().join("comm"))
                .map(|n| n.trim_end().to_string())
                .unwrap_or_default();
            found.push(Running { pid, name });
        }
    }
    found.sort_by_key(|r| r.pid);
    found
}

/// The summary's note for processes still running, when there are any.
pub fn describe_running(running: &[Running]) -> Option<String> {
    const SHOWN: usize = 5;
    let (first, more) = running.split_at(running.len().min(SHOWN));
    let mut list: Vec<String> = first
        .iter()
        .map(|r| format!("{} ({})", r.pid, r.name))
        .collect();
    if !more.is_empty() {
        list.push(format!("{} more", more.len()));
    }
    match running.len() {
        0 => None,
        1 => Some(format!(
            "1 process of the command was still running when it ended and is not in the \
             profile: {}",
            list.join(", ")
        )),
        n => Some(format!(
            "{n} processes of the command were still running when it ended and are not in the \
             profile: {}",
            list.join(", ")
        )),
    }
}
