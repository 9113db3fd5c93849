//! Issue #24, the readers: every read is bounded and only regular files are read where a path
//! was found by searching or read from another file (spec/inputs.md). Each case runs `gmon` in
//! a child with an address-space limit and a deadline, so that a regression fails quickly
//! instead of taking the machine's memory or hanging the suite.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{case_dir, skip};

/// The child's address-space limit: the bounded readers stay far below it (a 256 MiB stream
/// read is the largest), an unbounded read of /dev/zero or an inflated bomb reaches it fast.
const AS_LIMIT: u64 = 1536 << 20;

/// What a bounded run gave.
struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// `gmon ARGS` in `dir` under [`AS_LIMIT`]; killed and failed after `secs` seconds (a hang).
fn gmon_bounded(dir: &Path, args: &[&OsStr], secs: u64) -> Run {
    let out = tempfile::tempdir().unwrap();
    let (so, se) = (out.path().join("stdout"), out.path().join("stderr"));
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("gmon"));
    cmd.current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&so).unwrap())
        .stderr(std::fs::File::create(&se).unwrap());
    // SAFETY: setrlimit(2) is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: AS_LIMIT,
                rlim_max: AS_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gmon {args:?} still ran after {secs} s (killed): a read that never ends");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: std::fs::read(&so).unwrap(),
        stderr: std::fs::read_to_string(&se).unwrap(),
    }
}

/// Runs a binutils tool in `dir`; false when it is missing or fails.
fn binutils(dir: &Path, tool: &str, args: &[&OsStr]) -> bool {
    Command::new(tool)
        .current_dir(dir)
        .args(args)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A scratch directory with testdata's multifile-pie-O0 as `full` (with its DWARF), `prog`
/// (stripped of it) and `gmon.out`; `None` (skipped) without objcopy.
fn stripped_case(test: &str) -> Option<tempfile::TempDir> {
    let c = case_dir("multifile-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(c.join("prog"), d.join("full")).unwrap();
    std::fs::copy(c.join("gmon.out"), d.join("gmon.out")).unwrap();
    let args = ["--strip-debug", "full", "prog"].map(OsStr::new);
    if !binutils(d, "objcopy", &args) {
        skip(test, "objcopy (binutils) is not installed");
        return None;
    }
    Some(tmp)
}

/// `prog` with a `.gnu_debuglink` section naming `name` (any CRC: what matters is what is
/// opened to compute it), written as `out`.
fn add_debuglink(dir: &Path, name: &[u8], out: &str) {
    let mut section = name.to_vec();
    section.push(0);
    while !section.len().is_multiple_of(4) {
        section.push(0);
    }
    section.extend_from_slice(&1u32.to_le_bytes());
    std::fs::write(dir.join("dl"), section).unwrap();
    let args = ["--add-section", ".gnu_debuglink=dl", "prog", out].map(OsStr::new);
    assert!(binutils(dir, "objcopy", &args), "objcopy --add-section");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// `gmon gprof -b EXE gmon.out` in `dir`, which must succeed: its report.
fn gprof_report(dir: &Path, exe: &str) -> Run {
    let run = gmon_bounded(dir, &["gprof", "-b", exe, "gmon.out"].map(OsStr::new), 30);
    assert_eq!(run.code, Some(0), "gprof {exe}: {}", run.stderr);
    run
}

/// Repro 03 and 04: a `.gnu_debuglink` that leads to /dev/zero or to a FIFO — by a name with
/// directories (`../../dev/zero`, which BFD's writers never produce), or by a plain name that
/// is a FIFO or a link to a device in the executable's directory — is not read: the report is
/// the one without a debug file, at once and with bounded memory. Before, /dev/zero was read
/// until memory ran out and the FIFO blocked forever.
#[test]
fn debuglink_to_a_device_or_fifo_is_not_read() {
    let Some(tmp) = stripped_case("debuglink_to_a_device_or_fifo_is_not_read") else {
        return;
    };
    let d = tmp.path();
    let want = gprof_report(d, "prog").stdout;
    mkfifo(&d.join("fifo"));
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.debug")).unwrap();
    let escape = [b"../".repeat(16), b"dev/zero".to_vec()].concat();
    let fifo_escape = [
        b"../".repeat(16),
        d.join("fifo").as_os_str().as_encoded_bytes()[1..].to_vec(),
    ]
    .concat();
    for (name, exe) in [
        (&escape[..], "p-escape"),
        (&fifo_escape[..], "p-fifo-escape"),
        (b"fifo".as_slice(), "p-fifo"),
        (b"zero.debug".as_slice(), "p-zero"),
    ] {
        add_debuglink(d, name, exe);
        let run = gprof_report(d, exe);
        assert!(run.stdout == want, "{exe}: the report changed");
        for view in ["flame", "pprof"] {
            let out = format!("{exe}.{view}");
            let args = [view, "-o", &out, exe, "gmon.out"].map(OsStr::new);
            let run = gmon_bounded(d, &args, 30);
            assert_eq!(run.code, Some(0), "{view} {exe}: {}", run.stderr);
        }
    }
}

/// Repro 05: a zstd `SHF_COMPRESSED` `.debug_info` whose 4-byte RLE blocks claim 2 GiB, in an
/// executable of a few hundred kilobytes, is not inflated: the section reads as absent (the
/// reports of the file without it) and one line on stderr names the file and the section.
/// Before, the whole 2 GiB was inflated.
#[test]
fn compressed_debug_section_bomb_is_not_inflated() {
    let Some(tmp) = stripped_case("compressed_debug_section_bomb_is_not_inflated") else {
        return;
    };
    let d = tmp.path();
    let want = gprof_report(d, "prog").stdout;
    let size: u64 = 2 << 30;
    let block: u32 = 128 * 1024;
    let blocks = size / u64::from(block);
    // Elf64_Chdr: ch_type ZSTD (2), reserved, ch_size, ch_addralign.
    let mut blob = Vec::new();
    blob.extend_from_slice(&2u32.to_le_bytes());
    blob.extend_from_slice(&0u32.to_le_bytes());
    blob.extend_from_slice(&size.to_le_bytes());
    blob.extend_from_slice(&1u64.to_le_bytes());
    // A zstd frame of RLE blocks: each 3-byte block header (last, type 1 = RLE, size) and
    // the one byte repeated.
    blob.extend_from_slice(&0xFD2F_B528u32.to_le_bytes());
    blob.extend_from_slice(&[0, 0x38]);
    for i in 0..blocks {
        let header = u32::from(i == blocks - 1) | 2 | (block << 3);
        blob.extend_from_slice(&header.to_le_bytes()[..3]);
        blob.push(0);
    }
    std::fs::write(d.join("blob"), blob).unwrap();
    let args = ["--add-section", ".debug_info=blob", "prog", "bomb"].map(OsStr::new);
    assert!(binutils(d, "objcopy", &args), "objcopy --add-section");
    set_compressed(&d.join("bomb"), ".debug_info");
    let run = gprof_report(d, "bomb");
    assert!(run.stdout == want, "the report changed");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].contains("bomb: section .debug_info records 2147483648 bytes uncompressed"),
        "{}",
        run.stderr
    );
    for view in ["flame", "pprof"] {
        let out = format!("bomb.{view}");
        let run = gmon_bounded(
            d,
            &[view, "-o", &out, "bomb", "gmon.out"].map(OsStr::new),
            30,
        );
        assert_eq!(run.code, Some(0), "{view}: {}", run.stderr);
        assert!(
            run.stderr.contains(".debug_info records"),
            "{view}: {}",
            run.stderr
        );
    }
}

/// Sets `SHF_COMPRESSED` on section `name` of the ELF64 little-endian file at `path`.
fn set_compressed(path: &Path, name: &str) {
    let mut d = std::fs::read(path).unwrap();
    let u16_at = |d: &[u8], o: usize| usize::from(u16::from_le_bytes([d[o], d[o + 1]]));
    let u64_at = |d: &[u8], o: usize| {
        usize::try_from(u64::from_le_bytes(d[o..o + 8].try_into().unwrap())).unwrap()
    };
    let (shoff, entsize, count, strndx) = (
        u64_at(&d, 0x28),
        u16_at(&d, 0x3a),
        u16_at(&d, 0x3c),
        u16_at(&d, 0x3e),
    );
    let names = u64_at(&d, shoff + strndx * entsize + 0x18);
    let found = (0..count).find(|i| {
        let at = shoff + i * entsize;
        let off = names + u32::from_le_bytes(d[at..at + 4].try_into().unwrap()) as usize;
        d[off..].starts_with(name.as_bytes()) && d[off + name.len()] == 0
    });
    let at = shoff + found.expect("section added") * entsize + 8;
    let flags = u64_at(&d, at) as u64 | 0x800;
    d[at..at + 8].copy_from_slice(&flags.to_le_bytes());
    std::fs::write(path, d).unwrap();
}

/// Repro 06: an object that a sidecar names (here a library the samples fall in) and that is
/// a FIFO or /dev/zero, directly or through a symbolic link, is not read: the views draw the
/// samples as the object's and finish. Before, the FIFO blocked forever and /dev/zero was read
/// until memory ran out.
#[test]
fn sidecar_objects_that_are_not_regular_files_are_not_read() {
    let c = case_dir("multifile-pie-O0");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(c.join("prog"), d.join("prog")).unwrap();
    let gmon = std::fs::read(c.join("gmon.out")).unwrap();
    std::fs::write(d.join("gmon.out"), &gmon).unwrap();
    mkfifo(&d.join("fifo"));
    std::os::unix::fs::symlink(d.join("fifo"), d.join("libfifo.so")).unwrap();
    for lib in [
        d.join("fifo"),
        d.join("libfifo.so"),
        PathBuf::from("/dev/zero"),
    ] {
        write_sidecar_with_library(d, &gmon, &lib);
        for view in ["flame", "pprof"] {
            let args = [view, "-o", "out", "prog", "gmon.out"].map(OsStr::new);
            let run = gmon_bounded(d, &args, 30);
            assert_eq!(
                run.code,
                Some(0),
                "{view} {}: {}",
                lib.display(),
                run.stderr
            );
        }
    }
}

/// A sidecar for `gmon.out` in `dir`: the main object `prog`, and `lib` mapped high with
/// every stack's leaf in it.
fn write_sidecar_with_library(dir: &Path, gmon: &[u8], lib: &Path) {
    use gmon_format::sidecar::{
        AddressRange, GmonLink, MappedObject, OBJECT_FLAG_MAIN, PcSample, StackSample,
    };
    let base = 0x7f00_0000_0000u64;
    let profile = gmon_format::read(gmon).unwrap();
    let main_pc = profile.histograms().next().unwrap().low_pc + 0x10;
    let sidecar = gmon_format::Sidecar {
        rate_hz: 100,
        objects: vec![
            MappedObject {
                path: dir.join("prog").display().to_string(),
                build_id: Vec::new(),
                load_bias: 0,
                flags: OBJECT_FLAG_MAIN,
                ranges: vec![AddressRange {
                    start: 0,
                    end: 0x10_0000,
                }],
            },
            MappedObject {
                path: lib.display().to_string(),
                build_id: Vec::new(),
                load_bias: base,
                flags: 0,
                ranges: vec![AddressRange {
                    start: base,
                    end: base + 0x10_0000,
                }],
            },
        ],
        pc_samples: vec![PcSample {
            pc: base + 0x100,
            count: 5,
        }],
        stacks: vec![StackSample {
            count: 5,
            pcs: vec![base + 0x100, main_pc],
        }],
        gmon: Some(GmonLink::of(gmon)),
        ..Default::default()
    };
    let mut side = Vec::new();
    gmon_format::write_sidecar(&sidecar, &mut side).unwrap();
    std::fs::write(gmon_format::sidecar_path(&dir.join("gmon.out")), side).unwrap();
}

/// Item 4 of the issue: an input the user names may be a pipe, but /dev/zero is read no
/// further than the bound for streams, with an error that names it (dump, gprof's executable
/// and profile, flame's profile). Before, each read /dev/zero until memory ran out.
#[test]
fn named_inputs_that_never_end_are_bounded() {
    let c = case_dir("multifile-pie-O0");
    let d = c.as_path();
    let cases: [&[&str]; 4] = [
        &["dump", "/dev/zero"],
        &["gprof", "-b", "/dev/zero", "gmon.out"],
        &["gprof", "-b", "prog", "/dev/zero"],
        &["flame", "-o", "/dev/null", "prog", "/dev/zero"],
    ];
    for args in cases {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let run = gmon_bounded(d, &args, 30);
        assert_ne!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("/dev/zero: more than 268435456 bytes from a character device"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // A FIFO the user names is read as `cat` would.
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    mkfifo(&fifo);
    let gmon = std::fs::read(c.join("gmon.out")).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, gmon))
    };
    let args = ["dump".as_ref(), fifo.as_os_str()];
    let run = gmon_bounded(d, &args, 30);
    writer.join().unwrap().unwrap();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}
