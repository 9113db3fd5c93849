//! When each thread's clock ran: the sidecar's THREAD_CLOCKS (spec/runtime.md §5.17).
//!
//! A thread's clock is armed some time after the thread starts (the kernel's return from
//! `clone`, libc's thread start, opening the clock) and deleted some time before it ends (the
//! rest of libc's thread exit, the kernel's). The runtime cannot sample either stretch, and
//! the process's WINDOW covers both: without this list an observer outside the process (`gmon
//! record`'s outer clock) takes every tick of the window as the runtime's and drops it. For a
//! pool of 2 ms threads that was about 5% of their CPU time.
//!
//! Starts and ends are noted under the engine's control lock, never in the signal handler;
//! the log has its own lock only because the writer reads it, and every use of that lock is a
//! `try_lock` so that nothing can wait on it (a fork that copied it held, a write at exit that
//! interrupted a note). What cannot be noted is counted as dropped, and a reader then knows
//! that the list is not whole. Ending a clock never allocates: its start reserved the room, so
//! the notes taken at exit (which may interrupt `malloc`) do not.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most clocks one image lists (20 bytes each in the file): a process that starts more threads
/// than this in one image gets a list marked incomplete, and its outer-clock ticks are judged
/// as before the list existed.
pub(crate) const MAX_THREAD_CLOCKS: usize = 1 << 16;

#[derive(Debug, Default)]
struct Log {
    /// Clocks running: thread, start.
    running: Vec<(u32, u64)>,
    /// Clocks stopped: thread, start, end. Its capacity always holds every running clock too.
    stopped: Vec<(u32, u64, u64)>,
}

/// The thread clocks of one process image (one session, or a forked child's reset copy).
#[derive(Debug, Default)]
pub(crate) struct ThreadClockLog {
    log: Mutex<Log>,
    /// Clocks that could not be noted (the table full, or its lock taken).
    dropped: AtomicU64,
}

/// What a write reads of the log.
pub(crate) struct ThreadClocksView<'a> {
    pub dropped: u64,
    pub running: &'a [(u32, u64)],
    pub stopped: &'a [(u32, u64, u64)],
}

impl ThreadClocksView<'_> {
    /// How many clocks are listed.
    pub(crate) fn len(&self) -> usize {
        self.running.len() + self.stopped.len()
    }

    /// Every clock as (thread, start, end): a clock still running ran until `end_ns` (the
    /// window's end, when the file is written).
    pub(crate) fn entries(&self, end_ns: u64) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        let running = self
            .running
            .iter()
            .map(move |&(tid, start)| (tid, start, end_ns.max(start)));
        self.stopped.iter().copied().chain(running)
    }

    /// The same, as the format's type.
    pub(crate) fn to_sidecar(&self, end_ns: u64) -> gmon_format::sidecar::ThreadClocks {
        gmon_format::sidecar::ThreadClocks {
            dropped: self.dropped,
            clocks: self
                .entries(end_ns)
                .map(
                    |(tid, start_ns, end_ns)| gmon_format::sidecar::ThreadClock {
                        tid,
                        start_ns,
                        end_ns,
                    },
                )
                .collect(),
        }
    }
}

impl ThreadClockLog {
    /// Thread `tid`'s clock started at `at_ns` (`CLOCK_MONOTONIC`).
    pub(crate) fn started(&self, tid: u32, at_ns: u64) {
        let Ok(mut log) = self.log.try_lock() else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let Log { running, stopped } = &mut *log;
        let listed = running.len() + stopped.len();
        let room = listed < MAX_THREAD_CLOCKS
            && stopped.try_reserve(running.len() + 1).is_ok()
            && running.try_reserve(1).is_ok();
        if !room {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        running.push((tid, at_ns));
    }

    /// Thread `tid`'s clock stopped at `at_ns`. Never allocates.
    pub(crate) fn stopped(&self, tid: u32, at_ns: u64) {
        let Ok(mut log) = self.log.try_lock() else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let Log { running, stopped } = &mut *log;
        // A clock whose start was not noted was counted as dropped then.
        let Some(i) = running.iter().position(|&(t, _)| t == tid) else {
            return;
        };
        let (_, start) = running.swap_remove(i);
        if stopped.len() < stopped.capacity() {
            stopped.push((tid, start, at_ns.max(start)));
        } else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Forgets every clock: a forked child's threads are not its parent's.
    pub(crate) fn clear(&self) {
        match self.log.try_lock() {
            Ok(mut log) => {
                log.running.clear();
                log.stopped.clear();
                self.dropped.store(0, Ordering::Relaxed);
            }
            // Held when the fork copied it: the child can never list its clocks.
            Err(_) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Runs `f` on the log, or returns None when its lock is taken (the sidecar then has no
    /// THREAD_CLOCKS, and a reader judges as before it existed).
    pub(crate) fn read<R>(&self, f: impl FnOnce(ThreadClocksView<'_>) -> R) -> Option<R> {
        let log = self.log.try_lock().ok()?;
        Some(f(ThreadClocksView {
            dropped: self.dropped.load(Ordering::Relaxed),
            running: &log.running,
            stopped: &log.stopped,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dropped, running, stopped.
    type Listed = (u64, Vec<(u32, u64)>, Vec<(u32, u64, u64)>);

    fn listed(log: &ThreadClockLog) -> Listed {
        log.read(|v| (v.dropped, v.running.to_vec(), v.stopped.to_vec()))
            .expect("free")
    }

    #[test]
    fn a_clock_is_running_until_it_stops() {
        let log = ThreadClockLog::default();
        log.started(7, 100);
        log.started(8, 150);
        log.stopped(7, 300);
        assert_eq!(listed(&log), (0, vec![(8, 150)], vec![(7, 100, 300)]));
        // The same thread armed again: a second interval.
        log.started(7, 400);
        log.stopped(7, 500);
        assert_eq!(listed(&log).2, vec![(7, 100, 300), (7, 400, 500)]);
    }

    #[test]
    fn ending_a_clock_never_allocates() {
        let log = ThreadClockLog::default();
        for tid in 0..100 {
            log.started(tid, u64::from(tid));
        }
        let cap = log.log.lock().unwrap().stopped.capacity();
        assert!(cap >= 100, "room for every running clock's end: {cap}");
        for tid in 0..100 {
            log.stopped(tid, 1000);
        }
        assert_eq!(log.log.lock().unwrap().stopped.capacity(), cap);
        assert_eq!(listed(&log).2.len(), 100);
    }

    #[test]
    fn what_cannot_be_noted_is_counted() {
        let log = ThreadClockLog::default();
        {
            let _held = log.log.lock().unwrap();
            log.started(1, 10);
            log.stopped(1, 20);
            assert!(log.read(|_| ()).is_none(), "a held log is not read");
        }
        assert_eq!(listed(&log).0, 2);
        log.clear();
        assert_eq!(listed(&log), (0, vec![], vec![]));
    }

    #[test]
    fn a_full_table_is_marked_incomplete() {
        let log = ThreadClockLog::default();
        for tid in 0..MAX_THREAD_CLOCKS as u32 + 3 {
            log.started(tid, 1);
        }
        let (dropped, running, _) = listed(&log);
        assert_eq!((dropped, running.len()), (3, MAX_THREAD_CLOCKS));
    }
}
