//! The runtime facing another user (issue 10): environment inputs in a set-uid program, links
//! planted at the names it writes, and the mode of what it writes (spec/runtime.md §1, §3).
//!
//! The attacks need two users: these tests run as root and play the attacker as `nobody`
//! (`setpriv`); as any other user they say SKIPPED.

#![deny(clippy::undocumented_unsafe_blocks)]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{build_program, preloaded};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A temporary directory everyone can enter (mode 755), or None (with SKIPPED) when not root
/// or `setpriv` is missing.
fn root_setup(test: &str) -> Option<tempfile::TempDir> {
    if !is_root() {
        common::skip(test, "needs root to play two users");
        return None;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        common::skip(test, "needs setpriv (util-linux) to run as nobody");
        return None;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    chmod(dir.path(), 0o755);
    Some(dir)
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `prog args` run as nobody.
fn as_nobody(prog: &Path) -> Command {
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--inh-caps=-all",
    ])
    .arg(prog);
    c
}

/// A root-only directory holding a root-only file with a secret.
fn victim(base: &Path) -> PathBuf {
    let d = base.join("rootonly");
    std::fs::create_dir(&d).expect("mkdir");
    chmod(&d, 0o700);
    let v = d.join("victim");
    std::fs::write(&v, "SECRET\n").expect("write victim");
    chmod(&v, 0o600);
    v
}

fn assert_untouched(v: &Path) {
    assert_eq!(std::fs::read_to_string(v).expect("victim"), "SECRET\n");
    let m = std::fs::symlink_metadata(v).expect("victim");
    assert_eq!((m.uid(), m.mode() & 0o7777), (0, 0o600));
}

/// suid_record_out.sh: a set-uid-root program linked with libgmon_write.so, run by nobody with
/// `GMON_RECORD_OUT` pointing at a root-only file. Before: the file was replaced by the
/// profile. Now every GMON_* input is ignored under AT_SECURE: the file is untouched (and so
/// with `GMON_OUT_PREFIX`).
#[test]
fn set_uid_program_ignores_every_gmon_variable() {
    let Some(dir) = root_setup("set_uid_program_ignores_every_gmon_variable") else {
        return;
    };
    let lib = common::library_dir().join("libgmon_write.so");
    std::fs::copy(&lib, dir.path().join("libgmon_write.so")).expect("copy library");
    let d = dir.path().to_str().expect("utf-8");
    let prog = build_program(
        dir.path(),
        "work",
        &[
            "-Wl,--no-as-needed",
            &format!("-L{d}"),
            "-lgmon_write",
            &format!("-Wl,-rpath,{d}"),
        ],
    );
    chmod(&prog, 0o4755);
    let v = victim(dir.path());
    let out = as_nobody(&prog)
        .arg("0.1")
        .current_dir("/")
        .env("GMON_RECORD_OUT", &v)
        .env("GMON_RECORD_HZ", "50000")
        .env("GMON_OUT_PREFIX", v.with_file_name("prefix"))
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert_untouched(&v);
    let left: Vec<_> = std::fs::read_dir(v.parent().expect("dir"))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, ["victim"], "files in the root-only directory");
}

/// tmp_symlink.sh: nobody plants links at the temporary names the runtime used to write
/// (`.gmon.out.tmp.<pid>` for the next 400 pids) in a shared sticky directory, pointing at a
/// root-only file; root then profiles a program there. Before: the profile went through the
/// link into the root-only file. Now temporary names are random and opened O_EXCL|O_NOFOLLOW.
#[test]
fn planted_links_at_temporary_names_are_never_followed() {
    let Some(dir) = root_setup("planted_links_at_temporary_names_are_never_followed") else {
        return;
    };
    let prog = build_program(dir.path(), "work", &[]);
    let v = victim(dir.path());
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    chmod(&shared, 0o1777);
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1);
    let plant = format!(
        "for p in $(seq {} {}); do ln -s {v} {s}/.gmon.out.tmp.$p; ln -s {v} {s}/.gmon.out.gmonx.tmp.$p; done",
        last + 1,
        last + 400,
        v = v.display(),
        s = shared.display()
    );
    let planted = as_nobody(Path::new("/bin/sh"))
        .args(["-c", &plant])
        .status()
        .expect("plant links");
    assert!(planted.success());
    let gmon = shared.join("gmon.out");
    let out = preloaded(Command::new(&prog), &gmon, 1000)
        .current_dir(&shared)
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert_untouched(&v);
    let m = std::fs::symlink_metadata(&gmon).expect("gmon.out written");
    assert!(m.file_type().is_file() && m.uid() == 0);
    assert!(common::read_sidecar(&gmon).counters.samples > 0);
}

/// A link at the final name owned by another user is neither followed nor replaced (the
/// profile is not written, and the program's status is unchanged); one the caller owns is
/// written through to its target.
#[test]
fn a_link_at_the_final_name_is_followed_only_when_the_caller_owns_it() {
    let Some(dir) = root_setup("a_link_at_the_final_name_is_followed_only_when_the_caller_owns_it")
    else {
        return;
    };
    let prog = build_program(dir.path(), "work", &[]);
    let v = victim(dir.path());
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    chmod(&shared, 0o1777);
    let theirs = shared.join("theirs.out");
    let made = as_nobody(Path::new("/bin/ln"))
        .arg("-s")
        .arg(&v)
        .arg(&theirs)
        .status()
        .expect("ln");
    assert!(made.success());
    let out = preloaded(Command::new(&prog), &theirs, 1000)
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert_untouched(&v);
    assert!(
        std::fs::symlink_metadata(&theirs)
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("owned by another user"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let real = dir.path().join("real.out");
    let mine = dir.path().join("mine.out");
    symlink(&real, &mine).expect("symlink");
    let out = preloaded(Command::new(&prog), &mine, 1000)
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::symlink_metadata(&mine).expect("link").is_symlink());
    let bytes = std::fs::read(&real).expect("written through the link");
    gmon_format::read(&bytes).expect("a gmon.out");
}

/// Profiles are created 0666 minus the umask, as glibc creates gmon.out (not a fixed mode).
#[test]
fn profiles_are_created_0666_minus_the_umask() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = build_program(dir.path(), "work", &[]);
    for (umask, want) in [("027", 0o640), ("000", 0o666), ("077", 0o600)] {
        let gmon = dir.path().join(format!("u{umask}.out"));
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" 0.05"))
            .arg(&prog);
        let out = preloaded(cmd, &gmon, 1000).output().expect("run");
        assert!(out.status.success(), "{out:?}");
        for f in [gmon.clone(), gmon_format::sidecar_path(&gmon)] {
            let mode = std::fs::metadata(&f).expect("written").mode() & 0o777;
            assert_eq!(mode, want, "{} with umask {umask}", f.display());
        }
    }
}
