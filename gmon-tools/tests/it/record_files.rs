//! The files `gmon record -o OUT` leaves (spec/runtime.md §3): the output rule every writer
//! follows (another user's link, FIFO or file in a sticky shared directory refused, at every
//! link of a chain), names that never collide and always fit, and a set written whole or not at
//! all, with a failure in the exit status.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::record::{compile_c, gmon_cmd, listing, root_or_skip, text};

/// A program that burns about a tenth of a second of CPU in `main` (samples for its own file);
/// `tag` makes builds with different build ids.
fn spinner(dir: &Path, name: &str, tag: u32) -> PathBuf {
    let source = format!(
        "static volatile long s; int tag{tag};\n\
         int main(void) {{ for (long i = 0; i < 100000000L; i++) s += i; return 0; }}\n"
    );
    compile_c(dir, name, &source, &["-O1"])
}

/// A program that spins, then runs `programs` one after the other; 0 when all exit with 0.
fn driver(dir: &Path, programs: &[&str]) -> PathBuf {
    // posix_spawn, not system(): a shell's own few samples between its fork and exec would
    // add a file of its own (spec/runtime.md §4.5, "exec"), and these tests are about names.
    let list: String = programs.iter().map(|p| format!("\"{p}\", ")).collect();
    let source = format!(
        "#include <spawn.h>\n#include <sys/wait.h>\nextern char **environ;\n\
         static volatile long s;\n\
         int main(void) {{ for (long i = 0; i < 100000000L; i++) s += i;\n\
         char *progs[] = {{{list}0}};\n\
         for (int k = 0; progs[k]; k++) {{ pid_t p; int st; char *argv[] = {{progs[k], 0}};\n\
         if (posix_spawn(&p, progs[k], 0, 0, argv, environ) != 0) return 1;\n\
         if (waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1; }}\n\
         return 0; }}\n"
    );
    compile_c(dir, "drv", &source, &["-O1"])
}

/// `gmon record -o OUT -- COMMAND` in `dir`.
fn record_in(dir: &Path, out: &Path, command: &[&str]) -> Output {
    gmon_cmd()
        .current_dir(dir)
        .args(["record", "-o"])
        .arg(out)
        .arg("--")
        .args(command)
        .output()
        .expect("run gmon record")
}

/// The files the summary lists, with the executable each is said to hold.
fn listed(run: &Output) -> Vec<(PathBuf, String)> {
    String::from_utf8_lossy(&run.stderr)
        .lines()
        .filter_map(|l| {
            let (path, rest) = l.strip_prefix("  /")?.split_once("  ")?;
            let exe = rest.split(',').next()?;
            Some((PathBuf::from(format!("/{path}")), exe.to_string()))
        })
        .collect()
}

/// Asserts that each listed file is a gmon.out whose sidecar is a sidecar naming that
/// executable: no file of the run was overwritten by another.
fn assert_each_file_is_its_own(run: &Output) -> Vec<(PathBuf, String)> {
    let files = assert_each_file_is_a_profile(run);
    for (path, exe) in &files {
        let sidecar = crate::runtime_common::read_sidecar(path);
        let main = sidecar
            .main_object()
            .map(|m| m.path.clone())
            .unwrap_or_default();
        assert!(
            main.ends_with(&format!("/{exe}")),
            "{}: sidecar of {main}, listed as {exe}",
            path.display()
        );
    }
    files
}

/// Asserts that each listed file is a gmon.out with its sidecar beside it, and returns them.
fn assert_each_file_is_a_profile(run: &Output) -> Vec<(PathBuf, String)> {
    let files = listed(run);
    for (path, _) in &files {
        let bytes = fs::read(path).unwrap_or_default();
        assert!(
            bytes.starts_with(b"gmon"),
            "{}: not a profile",
            path.display()
        );
        let sidecar = crate::runtime_common::read_sidecar(path);
        assert!(sidecar.matches_gmon(&bytes), "{}", path.display());
    }
    files
}

/// Makes `path` (a link, FIFO or file) belong to `nobody`, as if another user had made it.
fn give_to_nobody(path: &Path) {
    std::os::unix::fs::lchown(path, Some(65534), Some(65534)).expect("lchown");
}

/// A temporary directory that is sticky and world-writable, like /tmp.
fn shared_tmp() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o1777)).expect("chmod");
    dir
}

/// Another user's link in a sticky shared directory is not followed, whether it is `OUT` itself
/// or sits behind a link of ours (`~/out -> /tmp/x -> ~/precious`): the rule holds at every link
/// of the chain, before anything runs. Our own links are written through.
#[test]
fn another_users_link_is_refused_at_every_link_of_a_chain() {
    if !root_or_skip(
        "record link chain",
        "needs root to own a link as another user",
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let shared = shared_tmp();
    let precious = d.join("precious");
    fs::write(&precious, "keep me\n").expect("write");
    let hers = shared.path().join("mid");
    std::os::unix::fs::symlink(&precious, &hers).expect("symlink");
    give_to_nobody(&hers);
    let ours = d.join("out");
    std::os::unix::fs::symlink(&hers, &ours).expect("symlink");
    let marker = d.join("ran");
    for out in [&hers, &ours] {
        let run = record_in(d, out, &["touch", marker.to_str().expect("utf-8")]);
        let t = text(&run);
        assert_eq!(run.status.code(), Some(1), "{t}");
        assert!(
            t.contains(&out.display().to_string())
                && t.contains("another user (uid 65534)")
                && t.contains("nothing was run"),
            "{t}"
        );
        assert!(!marker.exists(), "the command ran");
        assert_eq!(fs::read_to_string(&precious).expect("read"), "keep me\n");
        assert_eq!(listing(d), ["out", "precious"]);
    }
    // Our own link is written through to its target, and stays a link.
    fs::remove_file(&ours).expect("rm");
    std::os::unix::fs::symlink(&precious, &ours).expect("symlink");
    let run = record_in(d, &ours, &["/bin/true"]);
    assert!(run.status.success(), "{}", text(&run));
    assert!(fs::symlink_metadata(&ours).expect("link").is_symlink());
    assert!(fs::read(&precious).expect("read").starts_with(b"gmon"));
}

/// Waits for `child` at most a minute (a run blocked on a FIFO without a reader fails the
/// test rather than hanging it).
fn finish(mut child: std::process::Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("wait");
            panic!("gmon record blocked: {}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("wait")
}

#[test]
fn a_fifo_or_another_users_file_at_out_is_refused_without_blocking() {
    if !root_or_skip(
        "record FIFO refusal",
        "needs root to own a FIFO as another user",
    ) {
        return;
    }
    let shared = shared_tmp();
    let d = shared.path();
    let marker = d.join("ran");
    let start = |out: &Path| {
        gmon_cmd()
            .current_dir(d)
            .args(["record", "-o"])
            .arg(out)
            .args(["--", "touch"])
            .arg(&marker)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start gmon record")
    };
    let mkfifo = |p: &Path| {
        assert!(
            Command::new("mkfifo")
                .arg(p)
                .status()
                .expect("mkfifo")
                .success()
        )
    };
    // Her FIFO, no reader: refused as another user's (protected_fifos), never opened.
    let hers = d.join("hers.fifo");
    mkfifo(&hers);
    give_to_nobody(&hers);
    let run = finish(start(&hers));
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(
        text(&run).contains("a FIFO of another user"),
        "{}",
        text(&run)
    );
    // Our own FIFO: a set of files cannot go to one FIFO, a usage error.
    let mine = d.join("mine.fifo");
    mkfifo(&mine);
    let run = finish(start(&mine));
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(text(&run).contains("not a regular file"), "{}", text(&run));
    // Her regular file: root's rename would replace it (protected_regular).
    let file = d.join("hers.out");
    fs::write(&file, "hers\n").expect("write");
    give_to_nobody(&file);
    let run = finish(start(&file));
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert_eq!(fs::read_to_string(&file).expect("read"), "hers\n");
    // Her link at OUT.gmonx: the sidecar's name follows the same rule.
    let precious = shared.path().join("precious");
    fs::write(&precious, "keep\n").expect("write");
    let side = d.join("free.out.gmonx");
    std::os::unix::fs::symlink(&precious, &side).expect("symlink");
    give_to_nobody(&side);
    let run = finish(start(&d.join("free.out")));
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert_eq!(fs::read_to_string(&precious).expect("read"), "keep\n");
    assert!(!marker.exists(), "the command ran");
    assert_eq!(
        listing(d),
        [
            "free.out.gmonx",
            "hers.fifo",
            "hers.out",
            "mine.fifo",
            "precious"
        ]
    );
}

#[test]
fn names_never_collide_with_each_other_their_sidecars_or_the_users_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    spinner(d, "foo", 1);
    spinner(d, "foo.gmonx", 2);
    let drv = driver(d, &["./foo", "./foo.gmonx"]);
    // A file of the user's at a name the run would take: kept.
    let notes = d.join("r.out.foo");
    fs::write(&notes, "my notes\n").expect("write");
    let run = record_in(d, &d.join("r.out"), &[drv.to_str().expect("utf-8")]);
    assert!(run.status.success(), "{}", text(&run));
    let files = assert_each_file_is_its_own(&run);
    let exes: Vec<&str> = files.iter().map(|(_, e)| e.as_str()).collect();
    assert_eq!(exes.len(), 3, "{}", text(&run));
    for exe in ["drv", "foo", "foo.gmonx"] {
        assert!(exes.contains(&exe), "{exe}: {}", text(&run));
    }
    assert_eq!(fs::read_to_string(&notes).expect("read"), "my notes\n");
    // A second run replaces its own files, and still leaves the user's.
    let again = record_in(d, &d.join("r.out"), &[drv.to_str().expect("utf-8")]);
    assert!(again.status.success(), "{}", text(&again));
    let sorted = |mut v: Vec<(PathBuf, String)>| {
        v.sort();
        v
    };
    assert_eq!(sorted(listed(&again)), sorted(files), "{}", text(&again));
    assert_eq!(fs::read_to_string(&notes).expect("read"), "my notes\n");
}

#[test]
fn a_long_executable_name_is_cut_to_fit_and_nothing_is_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let long = "L".repeat(250);
    spinner(d, &long, 1);
    let foo = spinner(d, "foo", 2);
    // The same build under a long name too, run first: its file takes the name that fits.
    let copy = "M".repeat(250);
    fs::copy(&foo, d.join(&copy)).expect("copy");
    let drv = driver(d, &[&format!("./{long}"), &format!("./{copy}"), "./foo"]);
    let run = record_in(d, &d.join("r.out"), &[drv.to_str().expect("utf-8")]);
    assert!(run.status.success(), "{}", text(&run));
    let files = assert_each_file_is_a_profile(&run);
    assert_eq!(files.len(), 3, "{}", text(&run));
    assert!(
        files.contains(&(d.join("r.out.foo"), "foo".to_string())),
        "{}",
        text(&run)
    );
    assert!(text(&run).contains("foo, 2 processes"), "{}", text(&run));
    for (path, _) in &files {
        let sidecar = gmon_format::sidecar_path(path);
        assert!(sidecar.file_name().expect("name").len() <= 255);
    }
    // An OUT whose own name leaves no room for OUT.<name>.gmonx: refused before the run.
    let marker = d.join("ran");
    let run = record_in(
        d,
        &d.join("x".repeat(240)),
        &["touch", marker.to_str().expect("utf-8")],
    );
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(text(&run).contains("too long"), "{}", text(&run));
    assert!(!marker.exists(), "the command ran");
}

/// A small tmpfs mounted for a test, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    /// Mounts a full 64 KiB tmpfs (its space taken by `fill`); `None` when mount fails.
    fn full() -> Option<SmallFs> {
        let dir = tempfile::tempdir().expect("tempdir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            return None;
        }
        let fs = SmallFs { dir };
        // Fill it up: the run's files get no room, but creating an empty file still works.
        let mut f = fs::File::create(fs.path().join("fill")).expect("create");
        while std::io::Write::write_all(&mut f, &[0; 4096]).is_ok() {}
        Some(fs)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_leaves_none_of_the_runs_files_and_fails_the_run() {
    if !root_or_skip("record on a full disk", "needs root to mount a small tmpfs") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    spinner(d, "foo", 1);
    let drv = driver(d, &["./foo"]);
    let Some(small) = SmallFs::full() else {
        crate::runtime_common::skip("record on a full disk", "mount -t tmpfs failed");
        return;
    };
    let out = small.path().join("r.out");
    let run = record_in(d, &out, &[drv.to_str().expect("utf-8")]);
    let t = text(&run);
    // The command succeeded; its profiles are lost: gmon record fails, naming the file.
    assert_eq!(run.status.code(), Some(1), "{t}");
    assert!(
        t.contains("none of the 4 files of this run was written")
            && t.contains(&format!("{}", out.display()))
            && t.contains("No space left on device"),
        "{t}"
    );
    // No sidecar without its profile, and no temporary file left.
    assert_eq!(listing(small.path()), ["fill"], "{t}");
    // A command that failed keeps its own status; the loss is still said.
    let run = record_in(d, &out, &["sh", "-c", "./foo; exit 3"]);
    assert_eq!(run.status.code(), Some(3), "{}", text(&run));
    assert!(
        text(&run).contains("No space left on device"),
        "{}",
        text(&run)
    );
    assert_eq!(listing(small.path()), ["fill"]);
}
