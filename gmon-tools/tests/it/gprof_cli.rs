//! `gmon gprof` beyond the goldens: `-s` (gmon.sum with gmon merge's lossless rules), the help
//! text, and the library API other commands use.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_binary::Image;
use gmon_tools::gprof::{Analysis, AnalysisOptions};

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/cases")
        .join(name)
}

fn gmon(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gmon"))
        .arg("gprof")
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .expect("run gmon")
}

#[test]
fn sum_writes_lossless_gmon_sum() {
    let src = case("recurse-pie-O0");
    let tmp = tempfile::tempdir().expect("tempdir");
    let inputs = ["gmon.out", "gmon.2.out", "gmon.3.out"];
    for f in ["prog"].iter().chain(inputs.iter()) {
        std::fs::copy(src.join(f), tmp.path().join(f)).expect("copy");
    }
    let mut args = vec!["-s", "prog"];
    args.extend(inputs);
    let out = gmon(tmp.path(), &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "-s alone prints no report");
    let sum = gmon_format::read(&std::fs::read(tmp.path().join("gmon.sum")).expect("gmon.sum"))
        .expect("gmon.sum parses");
    let profiles: Vec<_> = inputs
        .iter()
        .map(|f| gmon_format::read(&std::fs::read(src.join(f)).expect("read")).expect("parse"))
        .collect();
    let merged =
        gmon_format::merge::merge(profiles.iter(), &gmon_format::merge::MergeOptions::new())
            .expect("merge");
    assert_eq!(sum, merged.profile);
    // The sum analyses to the same flat profile as the inputs.
    let flat_sum = gmon(tmp.path(), &["-b", "-p", "prog", "gmon.sum"]);
    let mut a = vec!["-b", "-p", "prog"];
    a.extend(inputs);
    let flat_all = gmon(tmp.path(), &a);
    assert_eq!(
        String::from_utf8_lossy(&flat_sum.stdout),
        String::from_utf8_lossy(&flat_all.stdout)
    );
}

#[test]
fn help_teaches_and_mentions_lossless_sum() {
    let out = gmon(Path::new("."), &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("-s writes gmon.sum with gmon merge's lossless rules"),
        "{text}"
    );
    assert!(text.contains("Usage: gmon gprof"));
    let short = gmon(Path::new("."), &["-h"]);
    assert_eq!(short.stdout, out.stdout);
}

#[test]
fn bad_option_prints_gprof_message_and_usage() {
    let out = gmon(Path::new("."), &["-X"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("gprof: invalid option -- 'X'\n"), "{err}");
    assert!(err.contains("Usage: gmon gprof"));
}

#[test]
fn analysis_api_exposes_functions_arcs_and_cycles() {
    let dir = case("recurse-pie-O0");
    let image = Image::open(&dir.join("prog")).expect("image");
    let profile =
        gmon_format::read(&std::fs::read(dir.join("gmon.out")).expect("read")).expect("parse");
    let a = Analysis::new(
        &image,
        std::slice::from_ref(&profile),
        &AnalysisOptions::default(),
    )
    .expect("analysis");
    assert_eq!(a.hz(), 100);
    let bins: u64 = profile.histograms().map(|h| h.total()).sum();
    assert_eq!(a.total_samples(), bins);
    let by_name = |n: &str| a.functions().find(|f| f.name == n).expect(n);
    let fact = by_name("fact");
    assert!(
        fact.calls > 0 && fact.self_calls > 0,
        "fact is called and recursive"
    );
    let spin = by_name("spin");
    assert!(spin.self_ticks > 0.0 && spin.is_static);
    assert!((spin.self_seconds - spin.self_ticks / 100.0).abs() < 1e-12);
    let credited: f64 = a.functions().map(|f| f.self_ticks).sum();
    assert!(credited <= a.total_time * 1.01 && credited > 0.0);
    // main -> fact exists with its count, and arcs name valid symbols.
    let main = by_name("main").index;
    assert!(
        a.arcs()
            .any(|x| x.parent == main && x.child == fact.index && x.count > 0)
    );
    // is_even <-> is_odd form one cycle.
    let cycles = a.cycles();
    assert_eq!(cycles.len(), 1);
    let names: Vec<&str> = cycles[0]
        .members
        .iter()
        .map(|&m| &*a.symtab.symbols[m].name)
        .collect();
    assert!(
        names.contains(&"is_even") && names.contains(&"is_odd"),
        "{names:?}"
    );
    assert_eq!(by_name("is_odd").cycle, Some(cycles[0].number));
}

/// Corrupted profiles and executables give gprof's errors or a report, never a panic.
#[test]
fn corrupted_inputs_never_panic() {
    let dir = case("recurse-pie-O0");
    let tmp = tempfile::tempdir().expect("tempdir");
    let gmon = std::fs::read(dir.join("gmon.out")).expect("gmon.out");
    let prog = std::fs::read(dir.join("prog")).expect("prog");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (gpath, ppath) = (tmp.path().join("g.out"), tmp.path().join("p"));
    for round in 0..300 {
        let mut g = gmon.clone();
        let mut p = prog.clone();
        let target = if round % 3 == 0 { &mut p } else { &mut g };
        for _ in 0..(1 + next() % 8) {
            let i = (next() % target.len() as u64) as usize;
            target[i] = next() as u8;
        }
        if round % 5 == 0 {
            let cut = (next() % g.len() as u64) as usize;
            g.truncate(cut);
        }
        std::fs::write(&gpath, &g).expect("write");
        std::fs::write(&ppath, &p).expect("write");
        for opts in [
            &["-b"][..],
            &["-T", "-z", "-c"][..],
            &["-b", "-O", "bsd"][..],
        ] {
            let mut args: Vec<String> = opts.iter().map(|s| s.to_string()).collect();
            args.push(ppath.display().to_string());
            args.push(gpath.display().to_string());
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let status = gmon_tools::gprof::run(&args, &mut out, &mut err).expect("io");
            assert!(
                status == 0 || (status == 1 && !err.is_empty()),
                "round {round}: status {status}"
            );
        }
    }
}

/// `-S` (an nm-style symbol file) keeps the bytes of its file name: a symbol file whose name
/// is not UTF-8 gives GNU gprof's report for the same file under a UTF-8 name (the traps-S
/// golden, from a real gprof run).
#[test]
fn external_symbol_file_name_may_be_non_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let src = case("traps-pie-O0");
    let tmp = tempfile::tempdir().expect("tempdir");
    for f in ["prog", "gmon.out"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).expect("copy");
    }
    let odd = OsStr::from_bytes(b"nm\xff.txt");
    std::fs::copy(src.join("nm.txt"), tmp.path().join(odd)).expect("copy");
    let out = Command::new(env!("CARGO_BIN_EXE_gmon"))
        .arg("gprof")
        .args(["-b".as_ref(), "-S".as_ref(), odd])
        .args(["prog", "gmon.out"])
        .current_dir(tmp.path())
        .env("LC_ALL", "C")
        .output()
        .expect("run gmon");
    let want = std::fs::read(src.join("gprof/traps-S.out")).expect("golden");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&want)
    );
}

/// An executable whose string table is not UTF-8 (here the `STT_FILE` symbol of a Latin-1
/// source name, `recurs\xe9.c`) is read as GNU gprof reads it: before, goblin's strict parse
/// refused the whole file ("not in executable format"). gprof ignores file symbols, so the
/// report is the golden of the unpatched program.
#[test]
fn string_table_need_not_be_utf8() {
    let src = case("recurse-pie-O0");
    let mut data = std::fs::read(src.join("prog")).expect("prog");
    let elf = goblin::elf::Elf::parse(&data).expect("elf");
    let strtab = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".strtab"))
        .map(|s| (s.sh_offset as usize, s.sh_size as usize))
        .expect(".strtab");
    drop(elf);
    let table = &data[strtab.0..strtab.0 + strtab.1];
    let at = table
        .windows(10)
        .position(|w| w == b"recurse.c\0")
        .expect("the file symbol's name");
    data[strtab.0 + at + 6] = 0xe9;
    assert!(
        goblin::elf::Elf::parse(&data).is_err(),
        "goblin's strict parse refuses it"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("prog"), &data).expect("write");
    std::fs::copy(src.join("gmon.out"), tmp.path().join("gmon.out")).expect("copy");
    for (args, golden) in [
        (&["-b", "prog", "gmon.out"][..], "b.out"),
        (&["-b", "-l", "prog", "gmon.out"][..], "ln-l.out"),
    ] {
        let out = gmon(tmp.path(), args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want = std::fs::read(src.join("gprof").join(golden)).expect("golden");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&want)
        );
    }
}

/// The whole command line of `gmon gprof` goes to gprof's own parser, also its first word:
/// an unknown long option that is not UTF-8 gets gprof's message with its raw bytes and exit
/// status 1 (clap used to reject it first, with its own message and status 2).
#[test]
fn first_word_may_be_a_non_utf8_option() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_gmon"))
        .arg("gprof")
        .arg(OsStr::from_bytes(b"--fo\xff"))
        .current_dir(case("recurse-pie-O0"))
        .output()
        .expect("run gmon");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr
            .starts_with(b"gprof: unrecognized option '--fo\xff'\n"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `GPROF_PATH` keeps its bytes like `-I`: sources found in a non-UTF-8 directory named there
/// give gprof's annotated source (the ln-A-cycle golden).
#[test]
fn gprof_path_may_be_non_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let c = case("cycle-pie-O0");
    let golden = std::fs::read(c.join("gprof/ln-A-cycle.out")).expect("golden");
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = tmp.path().join(OsStr::from_bytes(b"src\xe9"));
    std::fs::create_dir(&src).expect("mkdir");
    std::fs::copy(c.join("../../programs/cycle/cycle.c"), src.join("cycle.c")).expect("copy");
    let mut path = b"/nonexistent:".to_vec();
    path.extend_from_slice(src.as_os_str().as_bytes());
    let out = Command::new(env!("CARGO_BIN_EXE_gmon"))
        .args(["gprof", "-A", "prog", "gmon.out"])
        .env("GPROF_PATH", OsStr::from_bytes(&path))
        .env("LC_ALL", "C")
        .current_dir(&c)
        .output()
        .expect("run gmon");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout == golden,
        "-A with GPROF_PATH differs from gprof's ln-A-cycle.out"
    );
}

/// A basic-block record cut short (here an arc record whose tag byte became 2, so its bytes
/// read as a block count and too few blocks): GNU gprof's messages, byte for byte, with and
/// without `-l`. Before, `-l` still printed "ignoring basic-block exec counts (use -l or
/// --line)". Compared with a real GNU gprof run under LC_ALL=C (spec/gnu.md: its errno text
/// there is "Success").
#[test]
fn truncated_basic_blocks_give_gnu_gprofs_messages_with_and_without_line() {
    let have = Command::new("gprof").arg("--version").output();
    if !have.is_ok_and(|o| o.status.success()) {
        common::skip(
            "truncated_basic_blocks_give_gnu_gprofs_messages_with_and_without_line",
            "GNU gprof is not installed",
        );
        return;
    }
    let src = case("outside-pie-O0");
    let bytes = std::fs::read(src.join("gmon.out")).expect("gmon.out");
    let profile = gmon_format::read(&bytes).expect("profile");
    let offsets = gmon_format::write::record_offsets(&profile).expect("offsets");
    let arcs: Vec<usize> = profile
        .records
        .iter()
        .zip(&offsets)
        .filter(|(r, _)| matches!(r, gmon_format::Record::CallArc(_)))
        .map(|(_, &o)| o as usize)
        .collect();
    assert!(arcs.len() >= 2, "the case needs arcs");
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::copy(src.join("prog"), tmp.path().join("prog")).expect("copy");
    let mut compared = 0;
    for at in [arcs[arcs.len() - 1], arcs[arcs.len() - 2], arcs[0]] {
        let mut g = bytes.clone();
        assert_eq!(g[at], 1, "arc tag");
        g[at] = 2;
        std::fs::write(tmp.path().join("bb.gmon"), &g).expect("write");
        for opts in [
            &["-b", "-l"][..],
            &["-b"],
            &["-b", "--line", "-p"],
            &["-b", "-s"],
        ] {
            let mut args: Vec<&str> = opts.to_vec();
            args.extend(["prog", "bb.gmon"]);
            let ours = gmon(tmp.path(), &args);
            let gnu = Command::new("gprof")
                .args(&args)
                .current_dir(tmp.path())
                .env("LC_ALL", "C")
                .output()
                .expect("run gprof");
            let shown = |o: &std::process::Output| {
                format!(
                    "status {:?}\nstdout:\n{}\nstderr:\n{}",
                    o.status.code(),
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr).replace("gmon gprof", "gprof")
                )
            };
            assert_eq!(
                shown(&ours),
                shown(&gnu),
                "{args:?} with the tag at {at:#x}"
            );
            compared += usize::from(!gnu.stderr.is_empty());
        }
    }
    assert!(compared >= 4, "the cut records must give gprof errors");
}
