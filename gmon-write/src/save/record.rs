//! What the preloaded runtime does differently in a process `gmon record` started
//! (`GMON_RECORD_PRIVATE=1` beside `GMON_RECORD_OUT`, spec/runtime.md §3).
//!
//! * It writes only into the run's directory (the directory of `GMON_RECORD_OUT`), and only
//!   while that directory is still a directory of this user that nobody else can write into:
//!   it is opened without following a link and checked, and the files are created relative to
//!   that descriptor ([`open_own_dir`]). A process the command left running may end long after
//!   `gmon record` removed the directory, and by then another user may have made one at the
//!   same path.
//! * What goes wrong is appended to the run's notes file ([`NOTES`]), which `gmon record`
//!   reads for its summary, instead of the program's stderr: that belongs to the program, and a
//!   daemon's stderr may be read long after `gmon record` has ended.
//! * An `exec` that loses the runtime (an environment without `LD_PRELOAD`, a statically
//!   linked program) is noted, so that `gmon record` can say why a program has no profile.
//!
//! Everything here may run after `fork` in a multi-threaded program or at exit from a signal
//! handler: fixed buffers, direct system calls, no allocation after [`enter`].

use std::ffi::{CStr, c_char, c_int};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::save::path::{FixedPath, OsFail};
use crate::sys;

/// The notes file in the run directory: one line per problem, `<pid> <what>`.
pub const NOTES: &CStr = c"notes";

/// The run directory, set once by [`enter`] and never freed.
static DIR: AtomicPtr<FixedPath> = AtomicPtr::new(std::ptr::null_mut());

/// Marks this process as one of `gmon record`'s: `out` is `GMON_RECORD_OUT`. Called by the
/// preload constructor, before profiling starts, when `GMON_RECORD_PRIVATE` is `1`.
pub(crate) fn enter(out: &[u8]) {
    let mut dir = Box::new(FixedPath::new());
    let ok = match out.iter().rposition(|&b| b == b'/') {
        Some(0) => dir.set(b"/"),
        Some(i) => dir.set(out.get(..i).unwrap_or_default()),
        None => dir.set(b"."),
    };
    if ok {
        DIR.store(Box::into_raw(dir), Ordering::SeqCst);
    }
}

/// The run directory, when this process is one of `gmon record`'s.
pub(crate) fn dir() -> Option<&'static FixedPath> {
    let p = DIR.load(Ordering::SeqCst);
    // SAFETY: set once from a leaked Box by `enter` and never freed or changed afterwards.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Opens `dir` (never through a link at its name) and checks that it is a directory of this
/// user that neither group nor others can write into; the descriptor, to be closed.
pub(crate) fn open_own_dir(dir: &CStr) -> Result<c_int, OsFail> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let fd = sys::open_at(libc::AT_FDCWD, dir, flags, 0).map_err(|errno| OsFail {
        what: "open the run's directory",
        errno,
    })?;
    match sys::fstat(fd) {
        Ok((_, owner, perm)) if owner == sys::geteuid() && perm & 0o022 == 0 => Ok(fd),
        r => {
            sys::close(fd);
            Err(OsFail {
                what: "the run's directory is no longer this user's own",
                errno: r.err().unwrap_or(libc::EPERM),
            })
        }
    }
}

/// Before an exec under `gmon record` (spec/runtime.md §4.5, "exec"): renames this image's
/// profile `<gmon>.exec-<k>` (its sidecar beside it), `k` the first number for which neither file
/// exists yet, so that each image a process runs keeps a profile of its own: the next image
/// writes the process's usual name, and an image that execs again takes the next `k`. False
/// (paths unchanged) when no name is free. Fixed buffers and `lstat` only: async-signal-safe.
pub(crate) fn name_before_exec(gmon: &mut FixedPath, sidecar: &mut FixedPath) -> bool {
    let base = gmon.bytes().len();
    let mut num = [0u8; 12];
    for k in 1..=999u32 {
        gmon.truncate(base);
        let named = gmon.push(b".exec-")
            && gmon.push(decimal(k, &mut num))
            && sidecar.set(gmon.bytes())
            && sidecar.push(gmon_format::sidecar::GMONX_SUFFIX.as_bytes());
        if !named {
            break;
        }
        let free = |p: &FixedPath| matches!(sys::lstat(p.c_str()), Err(libc::ENOENT));
        if free(gmon) && free(sidecar) {
            return true;
        }
    }
    gmon.truncate(base);
    sidecar.set(gmon.bytes());
    sidecar.push(gmon_format::sidecar::GMONX_SUFFIX.as_bytes());
    false
}

/// Reports a problem: under `gmon record` a line `<pid> <parts>` appended to the run's notes
/// file (dropped when the directory is gone or not ours), otherwise `gmon-write: <parts>` on
/// stderr. Async-signal-safe.
pub(crate) fn report(parts: &[&[u8]]) {
    let Some(d) = dir() else {
        let _ = sys::write(2, b"gmon-write: ");
        for p in parts {
            let _ = sys::write(2, p);
        }
        let _ = sys::write(2, b"\n");
        return;
    };
    let mut line = [0u8; 1024];
    let mut num = [0u8; 12];
    let mut at = 0;
    let pid = decimal(std::process::id(), &mut num);
    for p in [pid, b" "].iter().chain(parts) {
        let room = line.len() - 1 - at;
        let take = p.len().min(room);
        if let (Some(dst), Some(src)) = (line.get_mut(at..at + take), p.get(..take)) {
            dst.copy_from_slice(src);
        }
        at += take;
    }
    if let Some(nl) = line.get_mut(at) {
        *nl = b'\n';
    }
    let Ok(fd) = open_own_dir(d.c_str()) else {
        return;
    };
    let flags =
        libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    if let Ok(f) = sys::open_at(fd, NOTES, flags, 0o600) {
        // One write per line: O_APPEND keeps the lines of concurrent processes whole.
        let _ = sys::write(f, line.get(..=at).unwrap_or_default());
        sys::close(f);
    }
    sys::close(fd);
}

/// The file of the run directory through which an image about to exec tells the next image of
/// the process how much CPU time the process had used (spec/runtime.md §4.5, "What no clock
/// sees"): `exec-cpu.<pid>`, 16 bytes, the process's CPU time and `CLOCK_MONOTONIC` at the exec
/// (nanoseconds, little-endian).
fn exec_cpu_name(buf: &mut [u8; 32]) -> Option<&CStr> {
    let mut num = [0u8; 12];
    let pid = decimal(std::process::id(), &mut num);
    let prefix = b"exec-cpu.";
    let len = prefix.len() + pid.len();
    buf.get_mut(..prefix.len())?.copy_from_slice(prefix);
    buf.get_mut(prefix.len()..len)?.copy_from_slice(pid);
    *buf.get_mut(len)? = 0;
    CStr::from_bytes_with_nul(buf.get(..=len)?).ok()
}

/// Runs `f` on the run directory's descriptor and the exec-cpu file's name, under `gmon record`.
fn with_exec_cpu_file(f: impl FnOnce(c_int, &CStr)) {
    let Some(d) = dir() else {
        return;
    };
    let mut buf = [0u8; 32];
    let (Ok(fd), Some(name)) = (open_own_dir(d.c_str()), exec_cpu_name(&mut buf)) else {
        return;
    };
    f(fd, name);
    sys::close(fd);
}

/// Before an exec of a profiled image under `gmon record`: leaves the process's CPU time for the
/// next image ([`take_cpu_at_exec`]), whose clock starts only once the loader has run its
/// constructors. Async-signal-safe.
pub(crate) fn note_cpu_at_exec() {
    with_exec_cpu_file(|fd, name| {
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        if let Ok(f) = sys::open_at(fd, name, flags, 0o600) {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&sys::process_cpu_ns().to_le_bytes());
            b[8..].copy_from_slice(&sys::monotonic_ns().to_le_bytes());
            let _ = sys::write(f, &b);
            sys::close(f);
        }
    });
}

/// After an exec that failed: the note of [`note_cpu_at_exec`] is not for anyone.
pub(crate) fn forget_cpu_at_exec() {
    with_exec_cpu_file(sys::unlink_at);
}

/// How long a note of [`note_cpu_at_exec`] stays believable: an exec and a loader take far
/// less; an older note is another process's of the same pid whose next image ran without the
/// runtime.
const EXEC_CPU_NOTE_LIFETIME_NS: u64 = 60_000_000_000;

/// At the start of an image under `gmon record`: the process's CPU time at the exec that
/// started it, when the image before it left a note ([`note_cpu_at_exec`]), which is then
/// removed.
pub(crate) fn take_cpu_at_exec() -> Option<u64> {
    let mut b = [0u8; 16];
    let mut read = 0;
    with_exec_cpu_file(|fd, name| {
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        if let Ok(f) = sys::open_at(fd, name, flags, 0) {
            read = sys::pread(f, &mut b, 0).unwrap_or(0);
            sys::close(f);
            sys::unlink_at(fd, name);
        }
    });
    let word = |at: usize| {
        b.get(at..at + 8)
            .and_then(|w| w.try_into().ok())
            .map(u64::from_le_bytes)
    };
    let (cpu, at) = (word(0)?, word(8)?);
    (read == b.len() && sys::monotonic_ns().wrapping_sub(at) < EXEC_CPU_NOTE_LIFETIME_NS)
        .then_some(cpu)
}

/// `n` in decimal, in `buf`.
pub(crate) fn decimal(mut n: u32, buf: &mut [u8; 12]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// Before an exec under `gmon record`: notes when the program about to run will not be
/// profiled because `envp` (null: the current environment) lost `LD_PRELOAD` or
/// `GMON_RECORD_OUT`, or because it is statically linked (the loader, which reads
/// `LD_PRELOAD`, never runs). `path` is the program (`file` searched in `PATH` when it has no
/// `/`, as `execvp` does; null for `fexecve`), `fd` the descriptor of `fexecve`.
pub(crate) fn before_exec(path: *const c_char, fd: Option<c_int>, envp: *const *const c_char) {
    if dir().is_none() {
        return;
    }
    // SAFETY: exec's contract: `path` is null or a NUL-terminated string that outlives the call.
    let path = (!path.is_null()).then(|| unsafe { CStr::from_ptr(path) });
    let envp = if envp.is_null() { sys::environ() } else { envp };
    let mut found = [0u8; libc::PATH_MAX as usize];
    let program = path.and_then(|p| find_program(p, &mut found));
    // A name that is not there (a shell tries each directory of PATH in turn) is an exec that
    // fails and returns: nothing to note.
    if program.is_none() && fd.is_none() {
        return;
    }
    let name = program.map_or(&b"a program"[..], CStr::to_bytes);
    if var_in(envp, b"LD_PRELOAD=").is_none() || var_in(envp, b"GMON_RECORD_OUT=").is_none() {
        report(&[
            b"exec ",
            name,
            b": the environment it gets has no LD_PRELOAD or GMON_RECORD_OUT (cleared, as \
              env -i does): it and the processes it starts are not profiled",
        ]);
        return;
    }
    let opened = match (fd, program) {
        (Some(fd), _) => Some((fd, false)),
        (None, Some(p)) => sys::open_at(libc::AT_FDCWD, p, libc::O_RDONLY | libc::O_CLOEXEC, 0)
            .ok()
            .map(|fd| (fd, true)),
        (None, None) => None,
    };
    if let Some((fd, close)) = opened {
        let fixed = is_static_elf(fd);
        if close {
            sys::close(fd);
        }
        if fixed {
            report(&[
                b"exec ",
                name,
                b": statically linked, so LD_PRELOAD cannot load the runtime into it: it is \
                  not profiled",
            ]);
        }
    }
}

/// The non-empty value of `name=` (`name` ends with `=`) in `envp`.
fn var_in<'a>(envp: *const *const c_char, name: &[u8]) -> Option<&'a [u8]> {
    if envp.is_null() {
        return None;
    }
    let mut at = envp;
    loop {
        // SAFETY: `envp` is a null-terminated array of NUL-terminated strings (exec's contract).
        let entry = unsafe { *at };
        if entry.is_null() {
            return None;
        }
        // SAFETY: as above; the strings outlive the exec call this runs in.
        let bytes = unsafe { CStr::from_ptr(entry) }.to_bytes();
        if bytes.len() > name.len() && bytes.starts_with(name) {
            return bytes.get(name.len()..);
        }
        // SAFETY: the array goes on until its null entry, not reached yet.
        at = unsafe { at.add(1) };
    }
}

/// The executable file `exec` would run for `path`: itself when it has a `/`, else the first
/// executable `<dir>/<path>` of `PATH` (written into `buf`).
fn find_program<'a>(path: &'a CStr, buf: &'a mut [u8]) -> Option<&'a CStr> {
    let name = path.to_bytes();
    if name.contains(&b'/') {
        return sys::executable(path).then_some(path);
    }
    // execvp searches the caller's PATH, whatever environment the program gets.
    let search = var_in(sys::environ(), b"PATH=")?;
    let mut found = None;
    for d in search.split(|&b| b == b':') {
        let d: &[u8] = if d.is_empty() { b"." } else { d };
        let len = d.len() + 1 + name.len();
        if len + 1 > buf.len() {
            continue;
        }
        buf[..d.len()].copy_from_slice(d);
        buf[d.len()] = b'/';
        buf[d.len() + 1..len].copy_from_slice(name);
        buf[len] = 0;
        if let Ok(c) = CStr::from_bytes_with_nul(&buf[..=len])
            && sys::executable(c)
        {
            found = Some(len);
            break;
        }
    }
    let len = found?;
    CStr::from_bytes_with_nul(buf.get(..=len)?).ok()
}

/// Whether `fd` is a little-endian ELF executable without a program interpreter (`PT_INTERP`):
/// statically linked, static-pie included. Anything else (a script, another format) is not.
fn is_static_elf(fd: c_int) -> bool {
    let mut h = [0u8; 64];
    if sys::pread(fd, &mut h, 0) != Ok(h.len()) || h.get(..4) != Some(b"\x7fELF") || h[5] != 1 {
        return false;
    }
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let (phoff, entsize, count) = match h[4] {
        1 => (u64::from(u32_at(&h, 28)), u16_at(&h, 42), u16_at(&h, 44)),
        2 => (
            u64::from(u32_at(&h, 32)) | u64::from(u32_at(&h, 36)) << 32,
            u16_at(&h, 54),
            u16_at(&h, 56),
        ),
        _ => return false,
    };
    // ET_EXEC or ET_DYN only: a shared library or an object file is not run this way.
    if !matches!(u16_at(&h, 16), 2 | 3) || entsize < 4 || count == 0 {
        return false;
    }
    // The program headers in one read (a dozen of 56 bytes in a usual executable).
    let mut table = [0u8; 2048];
    let want = (usize::from(entsize) * usize::from(count)).min(table.len());
    let Ok(got) = sys::pread(fd, table.get_mut(..want).unwrap_or_default(), phoff) else {
        return false;
    };
    let interp = table
        .get(..got)
        .unwrap_or_default()
        .chunks_exact(usize::from(entsize))
        .any(|e| e.get(..4).map(|t| u32_at(t, 0)) == Some(libc::PT_INTERP));
    // Headers past the part read: not known to be static.
    !interp && got == usize::from(entsize) * usize::from(count)
}
