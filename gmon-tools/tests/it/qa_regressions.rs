//! Regression tests for QA findings (notes/qa-findings.md), through the real `gmon` binary.
//! Self-contained: no shared helpers, so that it does not depend on tests/it/common's layout.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use gmon_format::{Profile, Record};

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/cases")
        .join(name)
}

fn gmon(args: &[&std::ffi::OsStr]) -> Output {
    Command::cargo_bin("gmon")
        .unwrap()
        .args(args)
        .output()
        .unwrap()
}

fn read(path: &Path) -> Profile {
    gmon_format::read(&std::fs::read(path).unwrap()).unwrap()
}

fn write(path: &Path, p: &Profile) {
    std::fs::write(path, gmon_format::to_vec(p).unwrap()).unwrap();
}

/// The profile with every histogram bin set to 0 (arcs kept): what a very short run writes.
fn without_samples(p: &Profile) -> Profile {
    let mut p = p.clone();
    for r in &mut p.records {
        if let Record::Histogram(h) = r {
            h.bins.iter_mut().for_each(|b| *b = 0);
        }
    }
    p
}

/// QA #11: a profile without samples gives an SVG that says so (exit 0), as --folded and
/// pprof succeed on it; a --diff with one side empty is a valid diff.
#[test]
fn flame_of_a_zero_sample_profile_is_an_svg_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let c = case("recurse-pie-O0");
    let full = c.join("gmon.out");
    let empty = dir.path().join("empty.out");
    write(&empty, &without_samples(&read(&full)));
    let exe = c.join("prog");
    let o = gmon(&[
        "flame".as_ref(),
        "--exe".as_ref(),
        exe.as_os_str(),
        empty.as_os_str(),
    ]);
    let svg = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(svg.contains("No samples in any function"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    for (base, new, says) in [
        (&full, &empty, "NEW has no samples"),
        (&empty, &full, "red = more samples"),
        (&empty, &empty, "No samples in any function"),
    ] {
        let o = gmon(&[
            "flame".as_ref(),
            "--diff".as_ref(),
            "--exe".as_ref(),
            exe.as_os_str(),
            base.as_os_str(),
            new.as_os_str(),
        ]);
        let svg = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success(),
            "{} {}: {err}",
            base.display(),
            new.display()
        );
        assert!(svg.contains(says), "{says}: {svg}");
    }
}

/// QA #10: `gmon diff --exe X A B` and `gmon flame --diff --exe X A B` refuse a NEW that cannot
/// belong to X (the check `gmon merge --exe` makes) and point to --new-exe, which flame now has.
#[test]
fn diff_refuses_a_new_profile_of_another_executable_unless_new_exe() {
    let (a, b) = (case("recurse-pie-O0"), case("cxx-pie-O0"));
    let (ea, ga, eb, gb) = (
        a.join("prog"),
        a.join("gmon.out"),
        b.join("prog"),
        b.join("gmon.out"),
    );
    for cmd in [&["diff"][..], &["flame", "--diff"][..]] {
        let mut args: Vec<&std::ffi::OsStr> = cmd.iter().map(|s| s.as_ref()).collect();
        args.extend([
            "--exe".as_ref(),
            ea.as_os_str(),
            ga.as_os_str(),
            gb.as_os_str(),
        ]);
        let o = gmon(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{cmd:?} accepted NEW of another build");
        assert!(err.contains("not a profile of"), "{err}");
        assert!(err.contains("failed check: arc addresses"), "{err}");
        assert!(err.contains("--new-exe"), "{err}");
        assert!(err.contains(&*gb.to_string_lossy()), "{err}");
        let mut with = args.clone();
        with.extend(["--new-exe".as_ref(), eb.as_os_str()]);
        let o = gmon(&with);
        // gmon diff exits 1 for "the profiles differ", as diff(1).
        assert!(
            o.status.success() || (cmd[0] == "diff" && o.status.code() == Some(1)),
            "{with:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// QA #17: `gmon gprof` takes file names that are not UTF-8 (Linux names are bytes), for the
/// executable and for the profile, and prints the same report GNU gprof printed for the case.
#[test]
fn gprof_accepts_file_names_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let c = case("recurse-pie-O0");
    let prog = dir.path().join(OsStr::from_bytes(b"pr\xffog"));
    let prof = dir.path().join(OsStr::from_bytes(b"bad\xffname.out"));
    std::fs::copy(c.join("prog"), &prog).unwrap();
    std::fs::copy(c.join("gmon.out"), &prof).unwrap();
    let golden = std::fs::read(c.join("gprof/b.out")).unwrap();
    let o = gmon(&[
        "gprof".as_ref(),
        "-b".as_ref(),
        prog.as_os_str(),
        prof.as_os_str(),
    ]);
    assert_eq!(
        (o.status.code(), String::from_utf8_lossy(&o.stderr).as_ref()),
        (Some(0), "")
    );
    assert!(o.stdout == golden, "report differs from gprof's b.out");
    // The same operands after `--`.
    let o = gmon(&[
        "gprof".as_ref(),
        "-b".as_ref(),
        "--".as_ref(),
        prog.as_os_str(),
        prof.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stdout == golden,
        "report differs from gprof's b.out (after --)"
    );
    // A missing non-UTF-8 profile is an error naming the file, not clap's UTF-8 refusal.
    let missing = dir.path().join(OsStr::from_bytes(b"no\xfe.out"));
    let o = gmon(&[
        "gprof".as_ref(),
        "-b".as_ref(),
        prog.as_os_str(),
        missing.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No such file or directory"), "{err}");
}

/// QA #15, then issue 11: with a stripped executable, flame, pprof and diff no longer refuse
/// ("has no symbols"): they name its code from .dynsym and the unwind table, and say so once,
/// with one program prefix (`gmon flame: ...`, not `gmon: ...: gprof: ...`).
#[test]
fn stripped_executable_is_read_with_one_note() {
    let dir = tempfile::tempdir().unwrap();
    let c = case("recurse-pie-O0");
    let stripped = dir.path().join("stripped");
    let status = std::process::Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(c.join("prog"))
        .status()
        .unwrap();
    assert!(status.success());
    let g1 = c.join("gmon.out");
    let g2 = c.join("gmon.2.out");
    let pb = dir.path().join("x.pb.gz");
    let runs: [Vec<&std::ffi::OsStr>; 3] = [
        vec![
            "flame".as_ref(),
            "--exe".as_ref(),
            stripped.as_os_str(),
            g1.as_os_str(),
        ],
        vec![
            "pprof".as_ref(),
            "--exe".as_ref(),
            stripped.as_os_str(),
            "-o".as_ref(),
            pb.as_os_str(),
            g1.as_os_str(),
        ],
        vec![
            "diff".as_ref(),
            "--exe".as_ref(),
            stripped.as_os_str(),
            g1.as_os_str(),
            g2.as_os_str(),
        ],
    ];
    for args in runs {
        let o = gmon(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        // gmon diff exits 1 when the profiles differ, as diff(1).
        let ok = if args[0] == "diff" { 0..=1 } else { 0..=0 };
        assert!(
            o.status.code().is_some_and(|c| ok.contains(&c)),
            "{args:?}: {err}"
        );
        let note = format!("{}: no symbol table (stripped)", stripped.display());
        assert_eq!(err.matches(&note).count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("gmon {}: ", args[0].to_string_lossy())),
            "{err}"
        );
        assert!(
            !err.contains("gprof: ") && !err.contains("has no symbols"),
            "{err}"
        );
    }
}

/// Issue 30: the "stripped" note is said only where it changes what the user sees. A program
/// linked with -rdynamic keeps every function's name in .dynsym: stripped, the views still name
/// each sampled function, so nothing is said; the note counts what the unwind table had to name.
#[test]
fn stripped_note_only_when_functions_lose_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("dyn.c");
    std::fs::write(
        &src,
        "volatile long s;\nvoid spin(long n) { for (long i = 0; i < n; i++) s += i; }\n\
         int main(void) { spin(300000000); return 0; }\n",
    )
    .unwrap();
    let prog = dir.path().join("dyn");
    let cc = std::process::Command::new("gcc")
        .args(["-O0", "-pg", "-rdynamic", "-o"])
        .arg(&prog)
        .arg(&src)
        .status()
        .unwrap();
    assert!(cc.success());
    let run = std::process::Command::new(&prog)
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(run.success());
    let stripped = dir.path().join("dyn.stripped");
    let status = std::process::Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&prog)
        .status()
        .unwrap();
    assert!(status.success());
    let gmon_out = dir.path().join("gmon.out");
    let o = gmon(&[
        "flame".as_ref(),
        "--folded".as_ref(),
        "--exe".as_ref(),
        stripped.as_os_str(),
        gmon_out.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("main;spin "));
    assert!(!err.contains("stripped"), "{err}");
}

/// Runs `gmon gprof ARGS` in DIR.
fn gprof_in(dir: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::cargo_bin("gmon")
        .unwrap()
        .current_dir(dir)
        .arg("gprof")
        .args(args)
        .output()
        .unwrap()
}

/// QA2 #5a: the directory of `-I`/`--directory-path` keeps its bytes: with the sources in a
/// directory whose name is not UTF-8, `-A` prints what GNU gprof printed with the original
/// directory (golden ln-A-cycle, made by testdata/regen.sh).
#[test]
fn gprof_source_directory_may_be_non_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let c = case("cycle-pie-O0");
    let golden = std::fs::read(c.join("gprof/ln-A-cycle.out")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join(OsStr::from_bytes(b"src\xe9"));
    std::fs::create_dir(&src).unwrap();
    let programs = c.join("../../programs/cycle");
    std::fs::copy(programs.join("cycle.c"), src.join("cycle.c")).unwrap();
    let joined = |prefix: &[u8]| {
        OsStr::from_bytes(&[prefix, src.as_os_str().as_bytes()].concat()).to_os_string()
    };
    let forms: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["-A".into(), "-I".into(), src.clone().into_os_string()],
        vec!["-A".into(), joined(b"--directory-path=/nonexistent:")],
        vec!["-A".into(), joined(b"-I")],
    ];
    for form in forms {
        let mut args: Vec<&OsStr> = form.iter().map(|s| s.as_os_str()).collect();
        args.extend([OsStr::new("prog"), OsStr::new("gmon.out")]);
        let o = gprof_in(&c, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!((o.status.code(), err.as_ref()), (Some(0), ""), "{form:?}");
        assert!(
            o.stdout == golden,
            "{form:?}: -A differs from gprof's ln-A-cycle.out"
        );
    }
}

/// QA2 #5a: the map file of `-R`/`--file-ordering` keeps its bytes: a map whose name is not
/// UTF-8 is read like the same map under a UTF-8 name (before, its name was read lossily and
/// the file was "could not open"ed).
#[test]
fn gprof_file_ordering_map_may_be_non_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let c = case("multifile-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    // The map format gprof reads: `object:address type function` lines (nm -A).
    let map = "main.o:0000000000000000 T main\nstage.o:0000000000000000 T stage_run\n\
               util.o:0000000000000000 T helper\n";
    let plain = tmp.path().join("map");
    let odd = tmp.path().join(OsStr::from_bytes(b"m\xffap"));
    std::fs::write(&plain, map).unwrap();
    std::fs::write(&odd, map).unwrap();
    let run = |m: &Path| {
        let mut r: Vec<u8> = b"--file-ordering=".to_vec();
        r.extend_from_slice(m.as_os_str().as_bytes());
        let long = gprof_in(
            &c,
            &[OsStr::from_bytes(&r), "prog".as_ref(), "gmon.out".as_ref()],
        );
        let short = gprof_in(
            &c,
            &[
                "-R".as_ref(),
                m.as_os_str(),
                "prog".as_ref(),
                "gmon.out".as_ref(),
            ],
        );
        assert_eq!(long.stdout, short.stdout);
        short
    };
    let want = run(&plain);
    assert_eq!(
        want.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&want.stderr)
    );
    assert!(!want.stdout.is_empty());
    let got = run(&odd);
    assert_eq!(
        (got.status.code(), String::from_utf8_lossy(&got.stderr)),
        (want.status.code(), String::from_utf8_lossy(&want.stderr))
    );
    assert!(
        got.stdout == want.stdout,
        "-R with a non-UTF-8 map name differs"
    );
}

/// QA2 #5b: `-d[N]`/`--debug[=N]` is accepted and changes nothing (GNU gprof's debugging trace
/// is not reproduced), and `--help` says so.
#[test]
fn gprof_debug_option_is_accepted_ignored_and_documented() {
    let c = case("recurse-pie-O0");
    let golden = std::fs::read(c.join("gprof/b.out")).unwrap();
    for d in ["-d", "-d5", "--debug", "--debug=6", "-bd"] {
        let o = gprof_in(&c, &[d.as_ref(), "-b".as_ref(), "prog".as_ref()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!((o.status.code(), err.as_ref()), (Some(0), ""), "{d}");
        assert!(o.stdout == golden, "{d}: report differs from gprof's b.out");
    }
    let o = gprof_in(&c, &["--help".as_ref()]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("-d[N], --debug[=N] is accepted and does nothing"),
        "{help}"
    );
}

/// Runs a binutils tool in DIR; false when it is missing or fails.
fn binutils(dir: &Path, tool: &str, args: &[&str]) -> bool {
    std::process::Command::new(tool)
        .current_dir(dir)
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// `gmon gprof OPTS prog gmon.out` in DIR, which must succeed; its report.
fn prog_report(dir: &Path, opts: &[&str]) -> Vec<u8> {
    let mut args: Vec<&std::ffi::OsStr> = opts.iter().map(|o| o.as_ref()).collect();
    args.extend([
        std::ffi::OsStr::new("prog"),
        std::ffi::OsStr::new("gmon.out"),
    ]);
    let o = gprof_in(dir, &args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// QA2 #1: an executable whose DWARF was moved to a separate file (`strip --strip-debug` +
/// `objcopy --add-gnu-debuglink`) is read as GNU gprof reads it: BFD follows the link (same
/// directory, then `.debug/`), so the static functions' file names in the index and the line
/// mode are those of the unstripped program — GNU gprof's goldens b.out and ln-l.out. Without
/// the debug file the report differs (no file names), so the link is really followed.
#[test]
fn gprof_follows_gnu_debuglink_like_bfd() {
    let c = case("multifile-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(c.join("prog"), d.join("prog")).unwrap();
    std::fs::copy(c.join("gmon.out"), d.join("gmon.out")).unwrap();
    let made = binutils(d, "objcopy", &["--only-keep-debug", "prog", "prog.debug"])
        && binutils(d, "strip", &["--strip-debug", "prog"])
        && binutils(d, "objcopy", &["--add-gnu-debuglink=prog.debug", "prog"]);
    assert!(made, "objcopy/strip (binutils) are needed for this test");
    let golden_b = std::fs::read(c.join("gprof/b.out")).unwrap();
    let golden_l = std::fs::read(c.join("gprof/ln-l.out")).unwrap();
    let run = |opts: &[&str]| prog_report(d, opts);
    assert!(run(&["-b"]) == golden_b, "-b differs from gprof's b.out");
    assert!(
        run(&["-b", "-l"]) == golden_l,
        "-b -l differs from gprof's ln-l.out"
    );
    // In the .debug subdirectory, from another working directory.
    std::fs::create_dir(d.join(".debug")).unwrap();
    std::fs::rename(d.join("prog.debug"), d.join(".debug/prog.debug")).unwrap();
    let o = gmon(&[
        "gprof".as_ref(),
        "-b".as_ref(),
        d.join("prog").as_os_str(),
        d.join("gmon.out").as_os_str(),
    ]);
    assert!(
        o.stdout == golden_b,
        "-b (.debug/) differs from gprof's b.out"
    );
    // A debug file whose CRC does not match is not used.
    let mut bytes = std::fs::read(d.join(".debug/prog.debug")).unwrap();
    if let Some(last) = bytes.last_mut() {
        *last ^= 0xff;
    }
    std::fs::write(d.join(".debug/prog.debug"), bytes).unwrap();
    assert!(
        run(&["-b"]) != golden_b,
        "a debug file with another CRC was used"
    );
}

/// Compressed DWARF (`objcopy --compress-debug-sections`: GNU `.zdebug_*`, ELF zlib and zstd
/// `SHF_COMPRESSED` sections), in the executable or in its separate debug file, is read as
/// BFD reads it: GNU gprof's goldens for the uncompressed program (b.out and ln-l.out; BFD
/// decompresses transparently, checked with GNU gprof 2.40 when this test was written).
#[test]
fn gprof_reads_compressed_debug_sections_like_bfd() {
    let c = case("multifile-pie-O0");
    let golden_b = std::fs::read(c.join("gprof/b.out")).unwrap();
    let golden_l = std::fs::read(c.join("gprof/ln-l.out")).unwrap();
    for kind in ["zlib-gnu", "zlib-gabi", "zstd"] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::copy(c.join("prog"), d.join("orig")).unwrap();
        std::fs::copy(c.join("gmon.out"), d.join("gmon.out")).unwrap();
        let option = format!("--compress-debug-sections={kind}");
        assert!(
            binutils(d, "objcopy", &[&option, "orig", "prog"]),
            "objcopy {option} (binutils) is needed for this test"
        );
        let packed = std::fs::read(d.join("prog")).unwrap();
        let gnu_style = packed.windows(12).any(|w| w == b".zdebug_info");
        assert_eq!(
            gnu_style,
            kind == "zlib-gnu",
            "{kind}: not compressed as asked"
        );
        let run = |opts: &[&str]| prog_report(d, opts);
        assert!(
            run(&["-b"]) == golden_b,
            "{kind}: -b differs from gprof's b.out"
        );
        assert!(
            run(&["-b", "-l"]) == golden_l,
            "{kind}: -b -l differs from gprof's ln-l.out"
        );
        // The DWARF moved, compressed, to a separate debug file.
        let made = binutils(
            d,
            "objcopy",
            &["--only-keep-debug", &option, "orig", "prog.debug"],
        ) && binutils(d, "objcopy", &["--strip-debug", "orig", "prog"])
            && binutils(d, "objcopy", &["--add-gnu-debuglink=prog.debug", "prog"]);
        assert!(made, "objcopy (binutils) is needed for this test");
        assert!(
            run(&["-b"]) == golden_b,
            "{kind}: -b (debug file) differs from gprof's b.out"
        );
        assert!(
            run(&["-b", "-l"]) == golden_l,
            "{kind}: -b -l (debug file) differs from gprof's ln-l.out"
        );
    }
}

/// A sidecar given where a profile is expected (it starts with "gmon" too): every command says
/// what it is, before looking for an executable, and writes nothing.
#[test]
fn a_sidecar_given_for_a_profile_is_named_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let side = dir.path().join("gmon.out.gmonx");
    let sidecar = gmon_format::Sidecar {
        writer: "test".into(),
        rate_hz: 1000,
        ..gmon_format::Sidecar::default()
    };
    let mut bytes = Vec::new();
    gmon_format::write_sidecar(&sidecar, &mut bytes).unwrap();
    std::fs::write(&side, &bytes).unwrap();
    let exe = case("cycle-pie-O0").join("prog");
    let good = case("cycle-pie-O0").join("gmon.out");
    let out = dir.path().join("out");
    // (`gmon dump` shows a sidecar, section by section: cli_dump_convert.rs.)
    let runs: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec!["flame".as_ref(), side.as_os_str()],
        vec!["flame".as_ref(), exe.as_os_str(), side.as_os_str()],
        vec![
            "pprof".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
            side.as_os_str(),
        ],
        vec![
            "diff".as_ref(),
            "--exe".as_ref(),
            exe.as_os_str(),
            good.as_os_str(),
            side.as_os_str(),
        ],
        vec![
            "merge".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
            good.as_os_str(),
            side.as_os_str(),
        ],
    ];
    for args in runs {
        let o = gmon(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        // gmon diff's trouble is 2, as diff(1)'s.
        let trouble = if args[0] == "diff" { 2 } else { 1 };
        assert_eq!(o.status.code(), Some(trouble), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "gmon: {}: not a gmon.out profile: it is a gmon-write sidecar (.gmonx); give the \
                 profile beside it",
                side.display()
            ),
            "{args:?}"
        );
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}

/// `gmon diff BASE NEW` with NEW missing: the reason alone, without the hint about NEW's own
/// executable (which is for a NEW that BASE's executable cannot read).
#[test]
fn a_missing_new_profile_is_said_without_the_executable_hint() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("new.out");
    let exe = case("cycle-pie-O0").join("prog");
    let good = case("cycle-pie-O0").join("gmon.out");
    let o = gmon(&[
        "diff".as_ref(),
        "--exe".as_ref(),
        exe.as_os_str(),
        good.as_os_str(),
        missing.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim_end(),
        format!("gmon: {}: No such file or directory", missing.display())
    );
}

/// Writes beside `gmon` a sidecar whose main object is `exe` with `build_id`.
fn sidecar_naming(gmon: &Path, exe: &Path, build_id: &[u8]) {
    crate::common::write_main_object_sidecar(gmon, &exe.display().to_string(), build_id);
}

/// Issue 27 (record/04, record/12): for a profile the runtime wrote, `gmon gprof` keeps GNU's
/// standard output and says on stderr what it hides: another program's build id, samples in
/// local `$` functions GNU's rules leave out, and no call graph (the runtime samples stacks).
/// A `-pg` profile without a sidecar gets none of it.
#[test]
fn gprof_on_a_recorded_profile_says_what_its_report_hides() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("d.c");
    std::fs::write(
        &src,
        "static __attribute__((noinline)) int tiny(int x) { return x + 1; }\n\
         static __attribute__((noinline)) long hot$loop(long n) { volatile long s = 0;\n\
         for (long i = 0; i < n; i++) s += i % 7; return s; }\n\
         int main(void) { return (int)(hot$loop(200000000) + tiny(1)) & 1; }\n",
    )
    .unwrap();
    let prog = dir.path().join("d");
    let cc = std::process::Command::new("gcc")
        .args(["-O1", "-pg", "-fno-reorder-functions", "-o"])
        .arg(&prog)
        .arg(&src)
        .status()
        .unwrap();
    assert!(cc.success());
    std::process::Command::new(&prog)
        .current_dir(dir.path())
        .status()
        .unwrap();
    let g = dir.path().join("gmon.out");
    let gprof = |profile: &Path| {
        gmon(&[
            "gprof".as_ref(),
            "-b".as_ref(),
            prog.as_os_str(),
            profile.as_os_str(),
        ])
    };
    // Without a sidecar: GNU's stderr (nothing).
    let plain = gprof(&g);
    assert_eq!(plain.status.code(), Some(0));
    assert!(
        plain.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );

    // With the sidecar of this program: stdout unchanged, the '$' note on stderr.
    let id = gmon_tools::model::Executable::open(&prog)
        .unwrap()
        .build_id
        .unwrap()
        .0;
    sidecar_naming(&g, &prog, &id);
    let o = gprof(&g);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.stdout, plain.stdout);
    assert!(
        err.contains("local function whose name contains '$' (hot$loop)"),
        "{err}"
    );
    assert!(!err.contains("call graph"), "{err}");
    assert!(!err.contains("build id"), "{err}");

    // The sidecar of another build: the warning.
    sidecar_naming(&g, Path::new("/elsewhere/d"), &[1, 2, 3, 4]);
    let err = String::from_utf8_lossy(&gprof(&g).stderr).into_owned();
    assert!(
        err.contains("its sidecar records build id 01020304 (/elsewhere/d)"),
        "{err}"
    );

    // No arcs (what the runtime writes): gprof has no call graph, and the note says where the
    // stacks are.
    let mut p = read(&g);
    p.records.retain(|r| !matches!(r, Record::CallArc(_)));
    let recorded = dir.path().join("rec.out");
    write(&recorded, &p);
    sidecar_naming(&recorded, &prog, &id);
    let err = String::from_utf8_lossy(&gprof(&recorded).stderr).into_owned();
    assert!(
        err.contains("there is no call graph for gprof to print"),
        "{err}"
    );
    assert!(err.contains("`gmon flame"), "{err}");
}

/// record/07: a file that is not a profile is named as such before the executable is looked
/// for (`gmon flame hot.c` blamed a missing ./a.out).
#[test]
fn a_non_profile_is_named_before_a_missing_executable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hot.c"), "int main(void) { return 0; }\n").unwrap();
    for sub in ["flame", "pprof"] {
        let o = Command::cargo_bin("gmon")
            .unwrap()
            .current_dir(dir.path())
            .args([sub, "hot.c"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("hot.c: not a gmon.out profile"),
            "{sub}: {err}"
        );
        assert!(!err.contains("a.out"), "{sub}: {err}");
    }
}

/// record/10: samples in PLT stubs are named `SYMBOL@plt`, at the addresses objdump gives them,
/// for the classic layout (stubs after PLT0 in .plt) and the IBT one (.plt.sec).
#[test]
fn plt_stubs_are_named_as_objdump_names_them() {
    let have = |tool: &str| {
        std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("objdump") || !have("gcc") {
        crate::common::skip(
            "plt_stubs_are_named_as_objdump_names_them",
            "no objdump or gcc",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
         int main(int c, char **v) { char *p = malloc(64); strcpy(p, v[0]);\n\
         printf(\"%zu\\n\", strlen(p)); puts(getenv(\"HOME\") ? \"h\" : \"n\"); free(p);\n\
         return abs(c); }\n",
    )
    .unwrap();
    for (name, flags) in [
        ("classic", vec!["-O1"]),
        ("ibt", vec!["-O1", "-fcf-protection", "-Wl,-z,ibtplt"]),
    ] {
        let prog = dir.path().join(name);
        let cc = std::process::Command::new("gcc")
            .args(&flags)
            .arg("-o")
            .arg(&prog)
            .arg(&src)
            .status()
            .unwrap();
        assert!(cc.success(), "{name}");
        let dis = std::process::Command::new("objdump")
            .arg("-d")
            .arg(&prog)
            .output()
            .unwrap();
        // `0000000000001030 <malloc@plt>:`
        let stubs: Vec<(u64, String)> = String::from_utf8_lossy(&dis.stdout)
            .lines()
            .filter_map(|l| {
                let (addr, rest) = l.split_once(" <")?;
                let label = rest.strip_suffix(">:")?;
                label
                    .ends_with("@plt")
                    .then(|| Some((u64::from_str_radix(addr, 16).ok()?, label.to_owned())))?
            })
            .collect();
        assert!(stubs.len() >= 5, "{name}: {stubs:?}");
        let symbols = gmon_tools::model::ObjectSymbols::open_for(&prog, &[], None).unwrap();
        for (addr, label) in &stubs {
            // objdump appends a version to some (`puts@GLIBC_2.2.5@plt`? no: the bare name).
            let want = label.replace("@GLIBC_2.2.5", "");
            let got = symbols.function_at(*addr + 4).map(|f| f.name.clone());
            assert_eq!(got.as_deref(), Some(want.as_str()), "{name} at {addr:#x}");
        }
    }
}
