//! Output files as Unix tools write them, for every command that writes one (merge, convert,
//! pprof, flame, gprof -s): `-o -`, symbolic links written through, FIFOs and devices written in
//! place, /dev/stdout, a full device, default names announced; and the command line's
//! conventions: shell completions sourced in a real bash, manual pages rendered by `man -l`,
//! errors that name the real problem.
//!
//! Devices are never the system's own when the test can avoid it: as root it makes its own
//! `null` and `full` nodes (mknod) in a temporary directory, so a regression replaces those, not
//! /dev/full; /dev/stdout is reached through a link made here to `/proc/self/fd/1`.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{case_dir, gmon};

/// A command that writes a file, run with its output at a given path (`None`: its default).
struct Writer {
    name: &'static str,
    /// The arguments, given the output path.
    args: fn(&Path) -> Vec<String>,
}

fn case() -> PathBuf {
    case_dir("outside-pie-O0")
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn writers() -> Vec<Writer> {
    vec![
        Writer {
            name: "merge",
            args: |o| {
                let g = s(&case().join("gmon.out"));
                vec!["merge".into(), g.clone(), g, "-o".into(), s(o)]
            },
        },
        Writer {
            name: "convert",
            args: |o| {
                vec![
                    "convert".into(),
                    "--to".into(),
                    "bsd44".into(),
                    s(&case().join("gmon.out")),
                    "-o".into(),
                    s(o),
                ]
            },
        },
        Writer {
            name: "pprof",
            args: |o| {
                vec![
                    "pprof".into(),
                    "--exe".into(),
                    s(&case().join("prog")),
                    s(&case().join("gmon.out")),
                    "-o".into(),
                    s(o),
                ]
            },
        },
        Writer {
            name: "flame",
            args: |o| {
                vec![
                    "flame".into(),
                    "--exe".into(),
                    s(&case().join("prog")),
                    s(&case().join("gmon.out")),
                    "-o".into(),
                    s(o),
                ]
            },
        },
    ]
}

/// The binary as a std `Command`, for a standard output of the test's choosing.
fn gmon_std() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("gmon"))
}

fn run(args: &[String], dir: &Path) -> Output {
    gmon().args(args).current_dir(dir).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What the command writes to a plain new file: the bytes every other kind of output must get.
fn reference(w: &Writer, dir: &Path) -> Vec<u8> {
    let path = dir.join(format!("{}.ref", w.name));
    let o = run(&(w.args)(&path), dir);
    assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
    let bytes = fs::read(&path).unwrap();
    assert!(!bytes.is_empty(), "{}", w.name);
    fs::remove_file(&path).unwrap();
    bytes
}

/// The names in `dir`, sorted (to see that no temporary file was left behind).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A character device made here (as root), else the system's one. A failed mknod means this
/// process may not write into /dev either, so a regression could not replace the system's node.
fn device(dir: &Path, name: &str, minor: u32) -> PathBuf {
    let own = dir.join(name);
    let made = Command::new("mknod")
        .arg(&own)
        .args(["c", "1", &minor.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        own
    } else {
        PathBuf::from("/dev").join(name)
    }
}

fn is_char_device(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

#[test]
fn dash_is_standard_output_and_creates_no_file() {
    for w in writers() {
        let dir = tempfile::tempdir().unwrap();
        let want = reference(&w, dir.path());
        let o = run(&(w.args)(Path::new("-")), dir.path());
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        assert!(o.stdout == want, "{}: stdout differs from the file", w.name);
        assert!(
            names(dir.path()).is_empty(),
            "{}: {:?}",
            w.name,
            names(dir.path())
        );
    }
}

#[test]
fn a_symlink_is_written_through_to_its_target() {
    for w in writers() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let want = reference(&w, d);
        // A relative link to an existing file, through a second link.
        fs::create_dir(d.join("real")).unwrap();
        fs::write(d.join("real/target"), b"old").unwrap();
        std::os::unix::fs::symlink("real/target", d.join("inner")).unwrap();
        std::os::unix::fs::symlink(d.join("inner"), d.join("out")).unwrap();
        let o = run(&(w.args)(&d.join("out")), d);
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        assert!(
            fs::read(d.join("real/target")).unwrap() == want,
            "{}",
            w.name
        );
        assert!(fs::symlink_metadata(d.join("out")).unwrap().is_symlink());
        assert!(fs::symlink_metadata(d.join("inner")).unwrap().is_symlink());
        // The temporary file went beside the target and is gone.
        assert_eq!(names(&d.join("real")), ["target"], "{}", w.name);
        assert_eq!(names(d), ["inner", "out", "real"], "{}", w.name);
        // A dangling link: its target is created.
        std::os::unix::fs::symlink("real/new", d.join("dangling")).unwrap();
        let o = run(&(w.args)(&d.join("dangling")), d);
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        assert!(fs::read(d.join("real/new")).unwrap() == want, "{}", w.name);
        assert!(
            fs::symlink_metadata(d.join("dangling"))
                .unwrap()
                .is_symlink()
        );
    }
}

/// In a sticky directory anyone may write to (like /tmp), a link planted by another user at the
/// output's name is not followed (the kernel's fs.protected_symlinks rule, which following by
/// hand would bypass): root's `-o /tmp/x.svg` never replaces the file the link points to.
#[test]
fn another_users_link_in_a_sticky_shared_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shared = d.join("tmp");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    fs::write(d.join("precious"), b"keep").unwrap();
    let link = shared.join("report");
    std::os::unix::fs::symlink(d.join("precious"), &link).unwrap();
    // `nobody` (65534) plants the link; only root can give it away.
    if std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).is_err() {
        common::skip(
            "another_users_link_in_a_sticky_shared_directory_is_refused",
            "not root: cannot make a link owned by another user",
        );
        return;
    }
    for w in writers() {
        let o = run(&(w.args)(&link), d);
        assert_eq!(o.status.code(), Some(1), "{}: {}", w.name, stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "gmon: {}: cannot write: Permission denied: a symbolic link of another user \
                 (uid 65534) in a sticky shared directory is not followed\n",
                link.display()
            ),
            "{}",
            w.name
        );
        assert_eq!(fs::read(d.join("precious")).unwrap(), b"keep", "{}", w.name);
        assert_eq!(names(&shared), ["report"], "{}", w.name);
    }
    // The same link behind one of ours elsewhere: the rule holds at every link of a chain.
    let ours = d.join("ours");
    std::os::unix::fs::symlink(&link, &ours).unwrap();
    for w in writers() {
        let o = run(&(w.args)(&ours), d);
        assert_eq!(o.status.code(), Some(1), "{}: {}", w.name, stderr(&o));
        assert!(stderr(&o).contains("not followed"), "{}", stderr(&o));
        assert_eq!(fs::read(d.join("precious")).unwrap(), b"keep", "{}", w.name);
    }
    // Our own link there is followed as usual.
    let own = shared.join("mine");
    std::os::unix::fs::symlink(d.join("mine.out"), &own).unwrap();
    let w = &writers()[0];
    let o = run(&(w.args)(&own), d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("mine.out").is_file());
}

/// Another user's FIFO or regular file at the output's name in a sticky shared directory is
/// refused as the kernel's `protected_fifos` and `protected_regular` refuse `> /tmp/x`: the FIFO
/// would hand the output to her (or block the command without a reader), and root's rename
/// would replace her file.
#[test]
fn another_users_fifo_or_file_in_a_sticky_shared_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let test = "another_users_fifo_or_file_in_a_sticky_shared_directory_is_refused";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::set_permissions(d, fs::Permissions::from_mode(0o1777)).unwrap();
    let fifo = d.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let file = d.join("file");
    fs::write(&file, b"hers").unwrap();
    if std::os::unix::fs::lchown(&fifo, Some(65534), Some(65534)).is_err()
        || std::os::unix::fs::lchown(&file, Some(65534), Some(65534)).is_err()
    {
        common::skip(test, "not root: cannot make files owned by another user");
        return;
    }
    for w in writers() {
        // With a reader, as the other user would keep one: a command that opened the FIFO
        // would not block.
        let (o, got) = run_with_reader(&w, &fifo, d);
        assert_eq!(o.status.code(), Some(1), "{}: {}", w.name, stderr(&o));
        assert!(
            stderr(&o).contains("a FIFO of another user (uid 65534)"),
            "{}: {}",
            w.name,
            stderr(&o)
        );
        assert!(
            got.is_empty(),
            "{}: the FIFO got {} bytes",
            w.name,
            got.len()
        );
        let o = run(&(w.args)(&file), d);
        assert_eq!(o.status.code(), Some(1), "{}: {}", w.name, stderr(&o));
        assert!(stderr(&o).contains("is not replaced"), "{}", stderr(&o));
        assert_eq!(fs::read(&file).unwrap(), b"hers", "{}", w.name);
        assert_eq!(names(d), ["fifo", "file"], "{}", w.name);
    }
}

/// Runs `w` with its output at `fifo` while a thread reads the FIFO; returns what the command
/// did and what the reader got (nothing when the command never opened the FIFO: the reader is
/// then released).
fn run_with_reader(w: &Writer, fifo: &Path, dir: &Path) -> (Output, Vec<u8>) {
    let reader = {
        let fifo = fifo.to_path_buf();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            fs::File::open(&fifo)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            got
        })
    };
    let o = run(&(w.args)(fifo), dir);
    if !reader.is_finished() {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo);
    }
    (o, reader.join().unwrap())
}

#[test]
fn a_fifo_is_written_in_place_to_its_reader() {
    for w in writers() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let want = reference(&w, d);
        let fifo = d.join("fifo");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let (o, got) = run_with_reader(&w, &fifo, d);
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        assert!(
            got == want,
            "{}: the reader got {} bytes",
            w.name,
            got.len()
        );
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(names(d), ["fifo"], "{}", w.name);
    }
}

#[test]
fn null_device_and_a_link_to_standard_output_are_written_in_place() {
    for w in writers() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let want = reference(&w, d);
        let null = device(d, "null", 3);
        let o = run(&(w.args)(&null), d);
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        assert!(o.stdout.is_empty());
        assert!(
            is_char_device(&null),
            "{}: {} was replaced",
            w.name,
            null.display()
        );
        // /dev/stdout is a link to /proc/self/fd/1: the same here, through two links.
        std::os::unix::fs::symlink("/proc/self/fd/1", d.join("stdout")).unwrap();
        std::os::unix::fs::symlink(d.join("stdout"), d.join("out")).unwrap();
        let o = run(&(w.args)(&d.join("out")), d);
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        assert!(o.stdout == want, "{}: stdout differs", w.name);
        assert!(fs::symlink_metadata(d.join("stdout")).unwrap().is_symlink());
        let mut expected = vec!["out".to_owned(), "stdout".to_owned()];
        if null.starts_with(d) {
            expected.insert(0, "null".to_owned());
        }
        assert_eq!(names(d), expected, "{}", w.name);
        // Standard output redirected to a file: written there, once, at its offset.
        let file = d.join("redirected");
        fs::write(&file, b"head\n").unwrap();
        let append = fs::OpenOptions::new().append(true).open(&file).unwrap();
        let o = gmon_std()
            .args((w.args)(&d.join("stdout")))
            .current_dir(d)
            .stdout(append)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        let mut both = b"head\n".to_vec();
        both.extend_from_slice(&want);
        assert!(fs::read(&file).unwrap() == both, "{}", w.name);
    }
}

#[test]
fn a_full_device_fails_with_one_message_naming_it() {
    for w in writers() {
        let dir = tempfile::tempdir().unwrap();
        let full = device(dir.path(), "full", 7);
        let o = run(&(w.args)(&full), dir.path());
        assert_eq!(o.status.code(), Some(1), "{}: {}", w.name, stderr(&o));
        let err = stderr(&o);
        assert_eq!(
            err,
            format!(
                "gmon: {}: cannot write: No space left on device\n",
                full.display()
            ),
            "{}",
            w.name
        );
        assert!(
            is_char_device(&full),
            "{}: {} was replaced",
            w.name,
            full.display()
        );
    }
}

#[test]
fn a_failed_command_leaves_the_regular_file_as_it_was() {
    for w in writers() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let out = d.join("out");
        fs::write(&out, b"keep").unwrap();
        // The same command with its profile replaced by a file that is not one.
        let bad = d.join("bad.gmon");
        fs::write(&bad, b"this is not a profile\n").unwrap();
        let good = s(&case().join("gmon.out"));
        let args: Vec<String> = (w.args)(&out)
            .into_iter()
            .map(|a| if a == good { s(&bad) } else { a })
            .collect();
        let o = run(&args, d);
        assert_eq!(o.status.code(), Some(1), "{}: {}", w.name, stderr(&o));
        assert_eq!(fs::read(&out).unwrap(), b"keep", "{}", w.name);
        assert_eq!(names(d), ["bad.gmon", "out"], "{}", w.name);
    }
}

#[test]
fn default_output_names_are_announced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = s(&case().join("gmon.out"));
    let o = run(&["merge".into(), g.clone(), g.clone()], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "gmon merge: wrote gmon.sum (no -o given)\n");
    assert!(d.join("gmon.sum").is_file());
    let exe = s(&case().join("prog"));
    let o = run(&["pprof".into(), "--exe".into(), exe, g], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).ends_with("gmon pprof: wrote profile.pb.gz (no -o given)\n"),
        "{}",
        stderr(&o)
    );
    assert!(d.join("profile.pb.gz").is_file());
}

#[test]
fn gprof_sum_file_follows_the_same_rules() {
    let g = s(&case().join("gmon.out"));
    let exe = s(&case().join("prog"));
    let args = ["gprof".to_owned(), "-s".into(), "-b".into(), exe, g];
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run(&args, d);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = fs::read(d.join("gmon.sum")).unwrap();
    fs::remove_file(d.join("gmon.sum")).unwrap();
    // gmon.sum a link: its target gets the sum.
    std::os::unix::fs::symlink("target", d.join("gmon.sum")).unwrap();
    let o = run(&args, d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(d.join("target")).unwrap(), want);
    assert!(
        fs::symlink_metadata(d.join("gmon.sum"))
            .unwrap()
            .is_symlink()
    );
    // gmon.sum a link to a full device: exit 1, one message.
    fs::remove_file(d.join("gmon.sum")).unwrap();
    let full = device(d, "full", 7);
    std::os::unix::fs::symlink(&full, d.join("gmon.sum")).unwrap();
    let o = run(&args, d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "gprof: gmon.sum: cannot write: No space left on device\n"
    );
    assert!(is_char_device(&full));
}

#[test]
fn standard_output_on_a_full_device_is_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let full = device(dir.path(), "full", 7);
    let g = s(&case().join("gmon.out"));
    let exe = s(&case().join("prog"));
    for args in [
        vec!["dump".to_owned(), g.clone()],
        vec!["gprof".into(), "-b".into(), exe.clone(), g.clone()],
        vec!["flame".into(), "--exe".into(), exe, g],
    ] {
        let sink = fs::OpenOptions::new().write(true).open(&full).unwrap();
        let o = gmon_std().args(&args).stdout(sink).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o),
            "gmon: standard output: cannot write: No space left on device\n",
            "{args:?}"
        );
    }
}

#[test]
fn not_a_profile_is_one_line_and_verbose_lists_the_guesses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hot = d.join("hot.c");
    fs::write(&hot, "int main(void) { for (;;) ; }\n".repeat(30)).unwrap();
    let o = run(&["dump".into(), s(&hot)], d);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "gmon: {}: not a gmon.out profile: it is a text file\n",
            hot.display()
        )
    );
    let o = run(&["dump".into(), "-v".into(), s(&hot)], d);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].ends_with("not a gmon.out profile: it is a text file"),
        "{err}"
    );
    assert!(lines.len() > 2, "{err}");
    assert!(
        lines[1..].iter().all(|l| l.starts_with("  tried ")),
        "{err}"
    );
    // An executable where a profile is expected, and a directory.
    let exe = case().join("prog");
    let o = run(&["dump".into(), s(&exe)], d);
    assert!(
        stderr(&o).contains("not a gmon.out profile: it is an ELF file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = run(&["dump".into(), s(d)], d);
    assert_eq!(
        stderr(&o),
        format!("gmon: {}: is a directory\n", d.display())
    );
    // merge classifies too; -v drops the pointer to -v.
    let o = run(&["merge".into(), s(&hot), "-o".into(), "m".into()], d);
    assert_eq!(
        stderr(&o),
        format!(
            "gmon: {}: not a gmon.out profile: it is a text file\n",
            hot.display()
        )
    );
    let noise = d.join("noise");
    fs::write(&noise, [0xffu8, 0xfe, 0, 1].repeat(16)).unwrap();
    let o = run(&["merge".into(), s(&noise), "-o".into(), "m".into()], d);
    assert!(
        stderr(&o).contains("(-v lists each layout tried)\n"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = run(
        &[
            "merge".into(),
            "-v".into(),
            s(&noise),
            "-o".into(),
            "m".into(),
        ],
        d,
    );
    assert!(!stderr(&o).contains("-v lists"), "{}", stderr(&o));
    assert!(stderr(&o).lines().count() > 2, "{}", stderr(&o));
    // The library's own loaders (flame) get the one-line form too.
    let o = run(&["flame".into(), "--exe".into(), s(&exe), s(&hot)], d);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a gmon.out profile"),
        "{}",
        stderr(&o)
    );
}

/// The completions `bash` offers after `words` (the last one being completed), from the script
/// `gmon completions bash` prints, sourced in a real bash.
fn bash_complete(script: &Path, words: &[&str]) -> Vec<String> {
    let program = r#"
source "$1"; shift
spec=$(complete -p gmon) || exit 3
fn=${spec#*-F }; fn=${fn%% *}
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$fn" gmon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let o = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", program, "bash"])
        .arg(script)
        .args(words)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completion_completes_subcommands_and_every_option() {
    if Command::new("bash").arg("--version").output().is_err() {
        common::skip(
            "bash_completion_completes_subcommands_and_every_option",
            "no bash",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("gmon.bash");
    let o = gmon().args(["completions", "bash"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    fs::write(&script, &o.stdout).unwrap();
    assert_eq!(bash_complete(&script, &["gmon", "fl"]), ["flame"]);
    assert_eq!(bash_complete(&script, &["gmon", "me"]), ["merge"]);
    assert_eq!(
        bash_complete(&script, &["gmon", "merge", "--re"]),
        ["--rebin"]
    );
    // Every long option `--help` shows for a subcommand is offered after `--`.
    for sub in ["merge", "flame", "pprof", "dump", "convert", "diff", "man"] {
        let help = gmon().args([sub, "--help"]).output().unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        let offered = bash_complete(&script, &["gmon", sub, "--"]);
        let mut shown = 0;
        // Option lines: `  -o, --output <OUT>  Where ...`: the long names before the text.
        for line in help
            .lines()
            .filter(|l| l.starts_with(' '))
            .map(str::trim_start)
            .filter(|l| l.starts_with('-'))
        {
            for tok in line.split([' ', ',']).filter(|t| !t.is_empty()) {
                if let Some(long) = tok.strip_prefix("--") {
                    let word = format!("--{}", long.split(['=', '[']).next().unwrap());
                    shown += 1;
                    assert!(offered.contains(&word), "{sub}: {word} not in {offered:?}");
                } else if !tok.starts_with('-') && !tok.starts_with('<') {
                    break;
                }
            }
        }
        assert!(shown >= 2, "{sub}: {help}");
    }
    // The other shells' scripts are produced too.
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let o = gmon().args(["completions", shell]).output().unwrap();
        assert!(o.status.success() && o.stdout.len() > 1000, "{shell}");
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("rebin"),
            "{shell}"
        );
    }
}

#[test]
fn every_manual_page_renders_with_man() {
    let have_man = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_man {
        common::skip(
            "every_manual_page_renders_with_man",
            "man (man-db) is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let o = gmon().args(["man", "--dir"]).arg(&pages).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // One page per subcommand that `gmon --help` lists, plus gmon.1.
    let help = gmon().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let subs: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .collect();
    assert!(subs.len() >= 10, "{subs:?}");
    let mut want: Vec<String> = subs.iter().map(|s| format!("gmon-{s}.1")).collect();
    want.push("gmon.1".into());
    want.sort();
    assert_eq!(names(&pages), want);
    for page in &want {
        let o = Command::new("man")
            .arg("-l")
            .arg(pages.join(page))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        assert!(o.status.success(), "{page}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        // man-pages(7)'s sections, in its order; nothing under clap_mangen's "EXTRA".
        let headings: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()) && *l == l.to_uppercase())
            .filter(|l| !l.contains('(')) // the title and footer lines
            .collect();
        let order = [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "SUBCOMMANDS",
            "EXIT STATUS",
            "ENVIRONMENT",
            "FILES",
            "EXAMPLES",
            "SEE ALSO",
            "VERSION",
        ];
        let known: Vec<&str> = headings
            .iter()
            .copied()
            .filter(|h| order.contains(h))
            .collect();
        let mut sorted = known.clone();
        sorted.sort_by_key(|h| order.iter().position(|o| o == h));
        assert_eq!(known, sorted, "{page}: sections out of order");
        for required in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "EXIT STATUS",
            "EXAMPLES",
            "SEE ALSO",
        ] {
            assert!(
                known.contains(&required),
                "{page} has no {required}:\n{text}"
            );
        }
        assert!(!text.contains("\nEXTRA\n"), "{page}:\n{text}");
        // NAME says `gmon-flame - Draw a flame graph ...`.
        let name = page.trim_end_matches(".1");
        let words: Vec<&str> = text
            .split("\nNAME\n")
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect();
        assert!(
            words.len() == 3 && words[..2] == [name, "-"],
            "{page}:\n{text}"
        );
        if name == "gmon-gprof" {
            // Its options come from the gprof engine's help, not from clap.
            assert!(text.contains("--flat-profile"), "{text}");
        }
    }
    // `gmon man SUBCOMMAND` prints the same page as the one installed, `gmon man gmon` gmon.1.
    let o = gmon().args(["man", "flame"]).output().unwrap();
    assert!(o.status.success());
    assert!(o.stdout == fs::read(pages.join("gmon-flame.1")).unwrap());
    let o = gmon().args(["man", "gmon"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == fs::read(pages.join("gmon.1")).unwrap());
    let o = gmon().args(["man", "nosuch"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("flame"), "{}", stderr(&o));
}

/// The command line (cli.rs, commands/, input_args.rs) belongs to the binary: the library
/// declares none of it and no library file reaches into it (issue 13).
#[test]
fn the_command_line_is_private_to_the_binary() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let binary_only = ["cli", "commands", "input_args"];
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    for m in binary_only {
        assert!(!lib.contains(&format!("mod {m};")), "lib.rs declares {m}");
    }
    let main = fs::read_to_string(src.join("main.rs")).unwrap();
    for m in binary_only {
        assert!(
            main.contains(&format!("mod {m};")),
            "main.rs does not declare {m}"
        );
    }
    let mut stack = vec![src.clone()];
    let mut checked = 0;
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            let in_binary = rel == "main.rs"
                || rel == "cli.rs"
                || rel == "input_args.rs"
                || rel.starts_with("commands");
            if p.is_dir() {
                if !in_binary {
                    stack.push(p);
                }
            } else if !in_binary && rel.ends_with(".rs") {
                let text = fs::read_to_string(&p).unwrap();
                for m in binary_only {
                    assert!(
                        !text.contains(&format!("crate::{m}")),
                        "{rel} uses crate::{m}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "{checked} library files");
}

/// The environment variables the sources read (a `var`/`var_os` call or a `GMON_...` name in
/// gmon-tools' and gmon-write's sources), less the ones every program reads.
fn environment_read_by_the_sources() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = BTreeSet::new();
    let mut dirs = vec![root.join("gmon-tools/src"), root.join("gmon-write/src")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            for (i, _) in text.match_indices('"') {
                let name: String = text[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                let closed = text[i + 1 + name.len()..].starts_with('"');
                let before = &text[..i];
                // An environment read: `var("X")`, `var_os("X")`, or record/runtime.rs's helper
                // over them, `absolute("HOME")`.
                let read = ["var(", "var_os(", "absolute("]
                    .iter()
                    .any(|call| before.ends_with(call));
                if closed && name.len() > 2 && (name.starts_with("GMON_") || read) {
                    found.insert(name);
                }
            }
        }
    }
    // PATH is every program's; gmon record only looks the command up in it.
    found.remove("PATH");
    found
}

#[test]
fn every_environment_variable_is_documented_in_the_manual_and_readme() {
    let vars = environment_read_by_the_sources();
    // The scan finds what it must: the runtime's own variables and the cache's.
    for known in [
        "GMON_RECORD_OUT",
        "GMON_OUT_PREFIX",
        "XDG_CACHE_HOME",
        "GMON_WRITE_LIB",
    ] {
        assert!(vars.contains(known), "{vars:?}");
    }
    let page = gmon().args(["man"]).output().unwrap();
    assert!(page.status.success());
    let page = String::from_utf8(page.stdout).unwrap();
    let environment = page
        .split(".SH ENVIRONMENT")
        .nth(1)
        .and_then(|s| s.split("\n.SH ").next())
        .expect("gmon(1) has an ENVIRONMENT section");
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let readme_env = readme
        .split("\n## Environment\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README.md has an Environment section");
    for var in &vars {
        assert!(
            environment.contains(&format!("\\fB{var}\\fR")),
            "gmon(1)'s ENVIRONMENT does not document {var}"
        );
        assert!(
            readme_env.contains(&format!("`{var}`")),
            "README.md's Environment section does not document {var}"
        );
    }
}
