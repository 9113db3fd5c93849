//! `gmon record`'s runtime library and private run directory (spec/runtime.md §3): no path the
//! runtime is given can be made by another user during the run or after it, a killed run's
//! directory is cleaned by the next run, a directory removed during the run is reported in one
//! line, and nothing of the runtime's appears in the program's own output.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::record::{compile_c, gmon_cmd, root_or_skip, text};

/// The hostile local user.
const NOBODY: u32 = 65534;

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `sh -c script` as `nobody`; whether it succeeded.
fn as_nobody(script: &str) -> bool {
    Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
        ])
        .arg(script)
        .status()
        .expect("setpriv")
        .success()
}

/// Waits (at most 20 s) for `path` to exist.
fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_line(path: &Path) -> PathBuf {
    PathBuf::from(std::fs::read_to_string(path).expect("read").trim_end())
}

/// The shared scene of the orphan tests: a sticky, world-writable temporary directory (as
/// /tmp), the attacker's library that records whose code it ran as, and a victim's (root's)
/// `gmon record` run with HOME unset (as under cron) whose command leaves a process behind.
/// The process waits for `go`, then starts `/bin/true` (which the loader gives LD_PRELOAD)
/// and creates `done`.
struct Orphan {
    dir: tempfile::TempDir,
    preload: PathBuf,
    run_dir: PathBuf,
}

impl Orphan {
    /// `cache`: the library is cached in a directory of the victim's (else HOME is unset).
    fn start(cache: bool, before: impl FnOnce(&Path)) -> Orphan {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        chmod(d, 0o755);
        let tmp = d.join("tmp");
        std::fs::create_dir(&tmp).expect("mkdir");
        chmod(&tmp, 0o1777);
        let evil = format!(
            "#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void p(void) \
             {{ FILE *f = fopen(\"{}/pwned\", \"a\"); if (f) {{ fprintf(f, \"uid=%d\\n\", getuid()); fclose(f); }} }}\n",
            d.display()
        );
        std::fs::write(d.join("evil.c"), evil).expect("write");
        let cc = Command::new("gcc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(d.join("evil.so"))
            .arg(d.join("evil.c"))
            .status()
            .expect("gcc");
        assert!(cc.success());
        chmod(&d.join("evil.so"), 0o755);
        before(&tmp);
        let script = format!(
            "echo \"$LD_PRELOAD\" > {d}/preload; echo \"$GMON_RECORD_OUT\" > {d}/name; \
             (while [ -d {d} ] && [ ! -e {d}/go ]; do sleep 0.02; done; /bin/true; touch {d}/done) \
             >/dev/null 2>&1 &",
            d = d.display()
        );
        let mut cmd = gmon_cmd();
        cmd.env_remove("HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_RUNTIME_DIR");
        if cache {
            let home = d.join("home");
            std::fs::create_dir(&home).expect("mkdir");
            chmod(&home, 0o700);
            cmd.env("HOME", &home);
        }
        let run = cmd
            .env("TMPDIR", &tmp)
            .current_dir(d)
            .args(["record", "-o", "v.out", "--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .output()
            .expect("gmon record");
        assert!(run.status.success(), "{}", text(&run));
        let preload = read_line(&d.join("preload"));
        let run_dir = read_line(&d.join("name"))
            .parent()
            .expect("dir")
            .to_path_buf();
        Orphan {
            dir,
            preload,
            run_dir,
        }
    }

    /// Lets the orphan start its program and waits for it.
    fn finish(&self) {
        std::fs::write(self.dir.path().join("go"), b"").expect("go");
        wait_for(&self.dir.path().join("done"));
        // The orphan's own shell writes its profile as it exits.
        std::thread::sleep(Duration::from_millis(300));
    }

    fn pwned(&self) -> bool {
        self.dir.path().join("pwned").exists()
    }
}

#[test]
fn a_process_left_running_never_loads_a_library_another_user_could_plant() {
    if !root_or_skip(
        "orphan library hijack",
        "needs root to play the victim and nobody the attacker",
    ) {
        return;
    }
    let o = Orphan::start(false, |_| {});
    // The attacker makes every directory of the library path she can, and puts her library at
    // its name (as when the run directory, removed at the end of the run, held the library).
    let lib = o.preload.to_str().expect("utf-8").to_string();
    let evil = o.dir.path().join("evil.so");
    as_nobody(&format!(
        "mkdir -p -m 777 \"$(dirname '{lib}')\" && cp '{}' '{lib}'",
        evil.display()
    ));
    as_nobody(&format!("mkdir -m 777 '{}'", o.run_dir.display()));
    o.finish();
    assert!(!o.pwned(), "the attacker's library ran as root via {lib}");
    // Every directory above the library is root's and nobody else can write into it.
    for d in o.preload.ancestors().skip(1) {
        let m = std::fs::symlink_metadata(d).expect("stat");
        assert!(m.is_dir() && m.uid() == 0, "{}", d.display());
        assert!(
            m.mode() & 0o022 == 0 || m.mode() & 0o1000 != 0,
            "{} is writable by others",
            d.display()
        );
    }
    assert!(
        !o.preload.starts_with(o.dir.path()),
        "the library is in the temporary directory: {lib}"
    );
}

#[test]
fn a_process_left_running_never_writes_into_a_directory_another_user_made() {
    if !root_or_skip(
        "orphan writes into the attacker's directory",
        "needs root to play the victim and nobody the attacker",
    ) {
        return;
    }
    // The library is cached (as when HOME is set), so the orphan's runtime loads. The attacker
    // takes the per-user directory's name first: the run directory then goes into the shared
    // directory itself, and after the run she makes one at its name.
    let o = Orphan::start(true, |tmp| {
        assert!(as_nobody(&format!(
            "mkdir -m 777 '{}/gmon-0'",
            tmp.display()
        )));
    });
    assert!(!o.run_dir.exists(), "the run's directory was not removed");
    assert!(as_nobody(&format!(
        "mkdir -m 777 '{}'",
        o.run_dir.display()
    )));
    o.finish();
    let written: Vec<String> = std::fs::read_dir(&o.run_dir)
        .expect("list")
        .filter_map(|e| e.ok())
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() != NOBODY))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        written.is_empty(),
        "root wrote {written:?} into the attacker's {}",
        o.run_dir.display()
    );
    assert!(!o.pwned());
}

#[test]
fn without_a_private_home_nothing_is_run_and_the_message_says_what_to_set() {
    if !root_or_skip(
        "no private cache",
        "needs root to run as nobody, whose home does not exist",
    ) {
        return;
    }
    if std::fs::metadata("/nonexistent").is_ok() {
        crate::runtime_common::skip("no private cache", "nobody's home /nonexistent exists");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    chmod(dir.path(), 0o777);
    let run = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg("env")
        .args([
            "-u",
            "HOME",
            "-u",
            "XDG_CACHE_HOME",
            "-u",
            "XDG_RUNTIME_DIR",
        ])
        .args(["-u", "GMON_WRITE_LIB"])
        .arg(crate::record::gmon())
        .args(["record", "-o"])
        .arg(dir.path().join("n.out"))
        .args(["--", "sh", "-c", "touch ran"])
        .current_dir(dir.path())
        .output()
        .expect("run");
    let t = text(&run);
    assert_eq!(run.status.code(), Some(1), "{t}");
    assert!(
        t.contains("nothing was run") && t.contains("HOME") && t.contains("GMON_WRITE_LIB"),
        "{t}"
    );
    assert!(!dir.path().join("ran").exists());
}

/// Runs `gmon record -o OUT -- COMMAND...` in `dir`, which must succeed; its stderr.
fn record_ok(dir: &Path, out: &str, command: &[&str]) -> String {
    let run = gmon_cmd()
        .current_dir(dir)
        .args(["record", "-o", out, "--"])
        .args(command)
        .output()
        .expect("gmon record");
    let err = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{err}");
    err
}

#[test]
fn a_killed_runs_directory_is_removed_by_the_next_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).expect("mkdir");
    let script = format!(
        "echo \"$GMON_RECORD_OUT\" > {d}/name; while [ -d {d} ] && [ ! -e {d}/stop ]; do sleep 0.02; done",
        d = d.display()
    );
    let mut killed = gmon_cmd()
        .env("TMPDIR", &tmp)
        .current_dir(d)
        .args(["record", "-o", "k.out", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gmon record");
    wait_for(&d.join("name"));
    std::thread::sleep(Duration::from_millis(100));
    killed.kill().expect("SIGKILL");
    killed.wait().expect("wait");
    let left = read_line(&d.join("name"))
        .parent()
        .expect("dir")
        .to_path_buf();
    // Left where only this user can reach it, while the command runs on.
    assert!(left.is_dir(), "{}", left.display());
    let per_user = left.parent().expect("parent");
    let m = std::fs::symlink_metadata(per_user).expect("stat");
    // SAFETY: geteuid cannot fail.
    assert_eq!(m.uid(), unsafe { libc::geteuid() });
    assert_eq!(m.mode() & 0o777, 0o700, "{}", per_user.display());
    if crate::record::root_or_skip("killed run, attacker part", "needs root to play nobody") {
        assert!(!as_nobody(&format!("ls '{}'", per_user.display())));
    }
    // The next run, while another is alive, removes the killed one's directory only.
    let next = gmon_cmd()
        .env("TMPDIR", &tmp)
        .current_dir(d)
        .args(["record", "-o", "n.out", "--", "true"])
        .output()
        .expect("gmon record");
    std::fs::write(d.join("stop"), b"").expect("stop");
    assert!(next.status.success(), "{}", text(&next));
    assert!(!left.exists(), "{} is still there", left.display());
    let rest: Vec<_> = std::fs::read_dir(per_user)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn a_run_directory_removed_during_the_run_is_one_line_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let spin = compile_c(
        d,
        "spin",
        "int main(void) { volatile long x = 0; for (long i = 0; i < 30000000; i++) x += i; return 0; }\n",
        &[],
    );
    // The command plays the cleaner of temporary files.
    let script = format!(
        "rm -rf \"$(dirname \"$GMON_RECORD_OUT\")\"; {}",
        spin.display()
    );
    let err = record_ok(d, "r.out", &["sh", "-c", &script]);
    assert!(
        err.contains("removed by another program") && err.contains("lost"),
        "{err}"
    );
    assert!(!err.contains("gmon-write"), "{err}");
    assert!(
        !err.contains("cannot write") && !err.contains("cannot remove"),
        "{err}"
    );
    assert!(!d.join("r.out").exists());
}

#[test]
fn a_process_outliving_the_command_prints_nothing_and_is_in_the_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // `output` reads stderr to its end: it also waits for the sleep left in the background,
    // which writes (and used to complain on that stderr) after gmon record has ended.
    let err = record_ok(d, "d.out", &["sh", "-c", "sleep 1 & exit 0"]);
    assert!(!err.contains("gmon-write"), "{err}");
    assert!(
        // The background child is `sleep`, or still the shell's copy when it has not yet
        // reached its exec on a loaded machine.
        err.contains("1 process of the command was still running")
            && (err.contains("(sleep)") || err.contains("(sh)")),
        "{err}"
    );
}

#[test]
fn a_lost_preload_is_named_as_the_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let loop_ = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";
    let err = record_ok(
        d,
        "e.out",
        &["env", "-i", "PATH=/usr/bin:/bin", "sh", "-c", loop_],
    );
    // `env` itself runs a millisecond with the runtime: sampled or not (probability its CPU
    // time / period), the shell it execs without the runtime is named with the cause.
    assert!(
        err.contains("exec /usr/bin/sh") || err.contains("exec /bin/sh"),
        "{err}"
    );
    assert!(
        err.contains("no LD_PRELOAD") && err.contains("not profiled"),
        "{err}"
    );
    if !d.join("e.out").exists() {
        assert!(err.contains("wrote no profile"), "{err}");
    }
    assert!(!err.contains("exit_group"), "{err}");

    let stat = compile_c(d, "static", "int main(void) { return 0; }\n", &["-static"]);
    let script = format!("{}; exit 0", stat.display());
    let err = record_ok(d, "s.out", &["sh", "-c", &script]);
    assert!(
        err.contains("statically linked") && err.contains(stat.to_str().expect("utf-8")),
        "{err}"
    );
}
