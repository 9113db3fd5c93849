//! Issue 27: `gmon pprof` gives every object of the run its own mapping at its real addresses
//! (file offset, build id), every location a mapping and the address that was sampled, and the
//! run's time; checked on the profile's bytes and with Go's pprof (-raw, -list, -disasm, -top).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_tools::pprof::proto::{Location, Profile};

use crate::common::{self, case_dir};
use crate::pprof::{decode_gz, find_pprof, gmon_pprof};
use crate::record::{gmon_cmd, text};

/// A shared library whose one function burns the CPU in a loop of several instructions.
const LIBRARY: &str = r#"
static volatile unsigned long lib_sink;
__attribute__((noinline)) void lib_spin(unsigned long n) {
    unsigned long x = 88172645463325252UL;
    for (unsigned long i = 0; i < n; i++) {
        x ^= x << 13;   /* the shift-xor line */
        x ^= x >> 7;
        x ^= x << 17;
    }
    lib_sink = x;
}
"#;

const PROGRAM: &str = r#"
void lib_spin(unsigned long n);
int main(void) {
    for (int k = 0; k < 40; k++)
        lib_spin(10000000UL);
    return 0;
}
"#;

fn decode(path: &Path) -> Profile {
    decode_gz(&std::fs::read(path).unwrap())
}

/// `gmon pprof` of a testdata case's executable and gmon.out, written to `out` and decoded.
fn pprof_of_case(dir: &Path, out: &Path) -> Profile {
    decode_gz(&gmon_pprof(dir, out))
}

fn run_pprof(pprof: &Path, args: &[&str], profile: &Path) -> String {
    let o = Command::new(pprof)
        .args(args)
        .arg(profile)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "pprof {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The instructions `pprof -disasm` gives samples to: lines whose flat column is not ".".
fn instructions_with_samples(disasm: &str) -> usize {
    disasm
        .lines()
        .filter(|l| l.contains(':') && !l.contains("ROUTINE"))
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 2 && f[0] != "." && f[2].ends_with(':')
        })
        .count()
}

/// The executable segment (link-time address, size, file offset) of the ELF file at `path`.
fn text_segment(path: &Path) -> (u64, u64, u64, String) {
    let data = std::fs::read(path).unwrap();
    let elf = goblin::elf::Elf::parse(&data).unwrap();
    let segs: Vec<_> = elf
        .program_headers
        .iter()
        .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD && p.is_executable())
        .collect();
    assert_eq!(segs.len(), 1, "{}", path.display());
    let id = gmon_tools::model::gnu_build_id(&elf, &data).unwrap();
    let hex = id.iter().map(|b| format!("{b:02x}")).collect();
    (segs[0].p_vaddr, segs[0].p_memsz, segs[0].p_offset, hex)
}

/// Records the program with its library and writes the pprof profile: (profile path, samples
/// the run counted).
fn recorded_profile(dir: &Path) -> (PathBuf, u64) {
    let src = dir.join("libhot.c");
    std::fs::write(&src, LIBRARY).unwrap();
    let cc = Command::new("gcc")
        .args(["-O1", "-g", "-shared", "-fPIC", "-o"])
        .arg(dir.join("libhot.so"))
        .arg(&src)
        .output()
        .expect("gcc is installed");
    assert!(cc.status.success(), "gcc: {}", text(&cc));
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let libdir = format!("-L{}", dir.display());
    std::fs::write(dir.join("uselib.c"), PROGRAM).unwrap();
    let prog = dir.join("uselib");
    let cc = Command::new("gcc")
        .args(["-O1", "-g", "-o"])
        .arg(&prog)
        .arg(dir.join("uselib.c"))
        .args([&libdir, &rpath, "-lhot"])
        .output()
        .unwrap();
    assert!(cc.status.success(), "gcc: {}", text(&cc));
    record_to_pprof(dir, &prog)
}

/// `gmon record` of `prog` into `dir/run.out`, then `gmon pprof` of it into `dir/run.pb.gz`:
/// (profile path, samples the run counted).
fn record_to_pprof(dir: &Path, prog: &Path) -> (PathBuf, u64) {
    let out = dir.join("run.out");
    let rec = gmon_cmd()
        .args(["record", "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(prog)
        .output()
        .unwrap();
    assert!(rec.status.success(), "gmon record: {}", text(&rec));
    let sidecar =
        gmon_format::read_sidecar(&std::fs::read(dir.join("run.out.gmonx")).unwrap()).unwrap();
    let pb = dir.join("run.pb.gz");
    let o = gmon_cmd()
        .args(["pprof"])
        .arg(&out)
        .arg("-o")
        .arg(&pb)
        .output()
        .unwrap();
    assert!(o.status.success(), "gmon pprof: {}", text(&o));
    (pb, sidecar.counters.samples)
}

#[test]
fn a_recorded_profile_has_a_mapping_per_object_and_every_location_its_sampled_address() {
    let tmp = tempfile::tempdir().unwrap();
    let (pb, samples) = recorded_profile(tmp.path());
    let p = decode(&pb);
    let s = |i: i64| p.string_table[i as usize].as_str();
    // The program first, then the library, each with its file, build id and code segment.
    let prog = std::fs::canonicalize(tmp.path().join("uselib")).unwrap();
    let lib = std::fs::canonicalize(tmp.path().join("libhot.so")).unwrap();
    assert!(
        p.mapping.len() >= 3,
        "program, library, libc: {:?}",
        p.mapping
    );
    assert_eq!(s(p.mapping[0].filename), prog.to_str().unwrap());
    for path in [&prog, &lib] {
        let (address, size, offset, build_id) = text_segment(path);
        let m = p
            .mapping
            .iter()
            .find(|m| s(m.filename) == path.to_str().unwrap())
            .unwrap_or_else(|| panic!("no mapping of {}: {:?}", path.display(), p.mapping));
        assert_eq!(s(m.build_id), build_id, "{}", path.display());
        assert_eq!(m.memory_limit - m.memory_start, size, "{}", path.display());
        assert_eq!(m.file_offset, offset, "{}", path.display());
        // A PIE and a shared object are loaded page-aligned, keeping the segment's offset in
        // its page: the runtime address, not the link-time one (or 0).
        assert_eq!(m.memory_start % 4096, address % 4096, "{}", path.display());
        assert!(m.memory_start > 0x10000, "{}: {m:?}", path.display());
        assert!(m.has_functions, "{}", path.display());
    }
    // Every location is in a mapping, at an address inside it; but for a root that only says
    // when its samples ran (the outer clock's `[process start and exit]`, spec/runtime.md
    // §4.7): no address, no mapping, which profile.proto allows ("mapping_id ... can be unset").
    let pseudo = |l: &&Location| {
        l.address == 0
            && l.mapping_id == 0
            && l.line.iter().all(|ln| {
                p.function
                    .iter()
                    .find(|f| f.id == ln.function_id)
                    .is_some_and(|f| s(f.name).starts_with('['))
            })
    };
    for l in p.location.iter().filter(|l| !pseudo(l)) {
        let m = p.mapping.iter().find(|m| m.id == l.mapping_id);
        assert!(
            m.is_some_and(|m| m.memory_start <= l.address && l.address < m.memory_limit),
            "location {l:?} outside its mapping {m:?}"
        );
    }
    // lib_spin's samples are at the instructions of its loop, on its source lines.
    let spin: BTreeSet<u64> = p
        .function
        .iter()
        .filter(|f| s(f.name) == "lib_spin")
        .map(|f| f.id)
        .collect();
    let leaves: Vec<_> = p
        .sample
        .iter()
        .filter(|x| x.value[0] > 0)
        .map(|x| {
            p.location
                .iter()
                .find(|l| l.id == x.location_id[0])
                .unwrap()
        })
        .filter(|l| spin.contains(&l.line[0].function_id))
        .collect();
    let addresses: BTreeSet<u64> = leaves.iter().map(|l| l.address).collect();
    assert!(addresses.len() > 1, "lib_spin sampled at {addresses:x?}");
    assert!(leaves.iter().all(|l| l.line[0].line >= 4), "{leaves:?}");
    let file = p
        .function
        .iter()
        .find(|f| spin.contains(&f.id) && s(f.filename).ends_with("libhot.c"));
    assert!(file.is_some(), "lib_spin's lines name libhot.c");
    // It says what it holds against the profile: every tick the runtime counted, or how many
    // have no stored stack (a tick can land while the program exits).
    let drawn: i64 = p.sample.iter().map(|x| x.value[0]).sum();
    let comments: Vec<&str> = p.comment.iter().map(|&c| s(c)).collect();
    let said = match drawn as u64 == samples {
        true => format!("samples: {drawn}, every sample of the profile"),
        false => format!("the runtime counted {samples} ticks"),
    };
    assert!(
        comments.iter().any(|c| c.contains(&said)),
        "{said}: {comments:?}"
    );
    assert!(drawn as u64 <= samples && drawn > 0, "{drawn} of {samples}");
    // The run's time: the CPU time of every tick counted, ending when the profile was written.
    assert_eq!(p.duration_nanos, samples as i64 * p.period);
    let written = std::fs::metadata(tmp.path().join("run.out"))
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    assert_eq!(p.time_nanos, written - p.duration_nanos);
}

#[test]
fn go_pprof_lists_and_disassembles_a_library_function_of_a_recorded_run() {
    let Some(pprof) = find_pprof() else {
        common::skip(
            "go_pprof_lists_and_disassembles_a_library_function_of_a_recorded_run",
            "Go's pprof is not on PATH and $PPROF is unset (.ci/run builds it into \
             target/tools)",
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (pb, samples) = recorded_profile(tmp.path());
    let raw = run_pprof(&pprof, &["-raw"], &pb);
    let (_, _, _, lib_id) = text_segment(&tmp.path().join("libhot.so"));
    assert!(
        raw.lines()
            .any(|l| l.contains("libhot.so") && l.contains(&lib_id)),
        "{raw}"
    );
    assert!(!raw.contains(" M=0 "), "a location without mapping\n{raw}");
    // -list finds the library's source and puts the time on the loop's lines.
    let list = run_pprof(&pprof, &["-list", "lib_spin"], &pb);
    assert!(list.contains("the shift-xor line"), "{list}");
    assert!(!list.contains("Error"), "{list}");
    // -disasm reads the library at the mapping's addresses and spreads the time over the loop.
    // (-show_from: pprof takes an object's load address from the first graph node it meets, in
    // map order, and gives up on the object when that node is in another one.)
    let disasm = run_pprof(
        &pprof,
        &["-disasm", "lib_spin", "-show_from", "lib_spin"],
        &pb,
    );
    let hot = instructions_with_samples(&disasm);
    assert!(hot > 1, "samples on {hot} instruction(s)\n{disasm}");
    // -top's total is the run's.
    let top = run_pprof(&pprof, &["-top", "-sample_index=samples"], &pb);
    assert!(
        top.contains(&format!("Total samples = {samples}"))
            || top.contains(&format!("of {samples} total")),
        "{top}"
    );
}

#[test]
fn go_pprof_disassembles_a_pg_profile_with_time_on_the_loop_body() {
    let Some(pprof) = find_pprof() else {
        common::skip(
            "go_pprof_disassembles_a_pg_profile_with_time_on_the_loop_body",
            "Go's pprof is not on PATH and $PPROF is unset (.ci/run builds it into \
             target/tools)",
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for case in ["multifile-pie-O0", "multifile-nopie-O2"] {
        let dir = case_dir(case);
        let pb = tmp.path().join(format!("{case}.pb.gz"));
        let p = pprof_of_case(&dir, &pb);
        // The executable's code segment at its link-time addresses, PIE or not.
        let (address, size, offset, _) = text_segment(&dir.join("prog"));
        let m = &p.mapping[0];
        assert_eq!(
            (m.memory_start, m.memory_limit, m.file_offset),
            (address, address + size, offset),
            "{case}"
        );
        let disasm = run_pprof(&pprof, &["-disasm", "util_checksum"], &pb);
        let hot = instructions_with_samples(&disasm);
        assert!(hot > 3, "{case}: samples on {hot} instruction(s)\n{disasm}");
    }
}

#[test]
fn code_inlined_into_a_function_is_a_location_with_its_inline_chain() {
    // testdata inlined-pie-O2: mix() (inlined.c:9-15) is inlined into work() at line 21; gprof -l
    // credits its samples to "mix (inlined.c:11)" and the like.
    let tmp = tempfile::tempdir().unwrap();
    let dir = case_dir("inlined-pie-O2");
    let p = pprof_of_case(&dir, &tmp.path().join("p.pb.gz"));
    let s = |i: i64| p.string_table[i as usize].as_str();
    let name = |id: u64| s(p.function.iter().find(|f| f.id == id).unwrap().name);
    let chains: Vec<Vec<(&str, i64)>> = p
        .location
        .iter()
        .filter(|l| l.line.len() > 1)
        .map(|l| {
            l.line
                .iter()
                .map(|x| (name(x.function_id), x.line))
                .collect()
        })
        .collect();
    assert!(!chains.is_empty(), "no location has an inline chain");
    for c in &chains {
        // The inlined function first, on its own lines; the function holding the code last,
        // on the line of the call.
        assert_eq!(c[0].0, "mix", "{c:?}");
        assert!((9..=15).contains(&c[0].1), "{c:?}");
        assert_eq!(c.last().unwrap(), &("work", 21), "{c:?}");
    }
    assert!(p.mapping[0].has_inline_frames);
    // The samples on mix's lines are gprof -l's "mix (inlined.c:N)" lines: most of work's.
    let mut inlined = 0;
    let mut total = 0;
    for smp in p.sample.iter().filter(|x| x.value[0] > 0) {
        let leaf = p
            .location
            .iter()
            .find(|l| l.id == smp.location_id[0])
            .unwrap();
        total += smp.value[0];
        if leaf.line.len() > 1 {
            inlined += smp.value[0];
        }
    }
    assert!(
        inlined * 2 > total,
        "{inlined} of {total} samples in inlined code"
    );
}

#[test]
fn unknown_addresses_get_mappings_that_overlap_no_object() {
    use gmon_tools::model::{
        CodeRange, Frame, LoadedObject, NodeId, Place, PlacedStack, StackSource, Stacks,
        WeightedCallGraph,
    };
    use gmon_tools::pprof::{PprofOptions, build_profile, check_valid};
    let mut g = WeightedCallGraph::new();
    let jit = g.add_node("[unknown]", 3);
    let object = |path: &str, main: bool, start: u64| LoadedObject {
        path: path.to_owned(),
        build_id: vec![1, 2],
        main,
        vdso: false,
        bias: 0,
        code: vec![CodeRange {
            start,
            end: start + 0x1000,
            file_offset: start,
        }],
    };
    let mut opts = PprofOptions::default();
    opts.prof_rate = 100;
    opts.objects = vec![object("/p", true, 0x1000), object("/lib.so", false, 0x5000)];
    // Generated code on both sides of the library, and far away.
    let placed = [0x4000u64, 0x4010, 0x7000, 0x9000_0000]
        .iter()
        .map(|&address| PlacedStack {
            frames: vec![Frame::Function(jit)],
            places: vec![Some(Place {
                object: None,
                address,
                line: 0,
                file: None,
            })],
            samples: 1,
        })
        .collect();
    let stacks = Stacks {
        stacks: vec![gmon_tools::model::Stack {
            frames: vec![Frame::Function(NodeId(0))],
            samples: 4,
        }],
        source: StackSource::Exact,
        outside_samples: 0,
        sampled: Vec::new(),
        call_sites: Vec::new(),
        placed,
    };
    let p = build_profile(&g, &stacks, &[], None, &opts).unwrap();
    check_valid(&p).unwrap();
    let s = |i: i64| p.string_table[i as usize].as_str();
    let unknown: Vec<(u64, u64)> = p
        .mapping
        .iter()
        .filter(|m| s(m.filename) == "[unknown]")
        .map(|m| (m.memory_start, m.memory_limit))
        .collect();
    assert_eq!(
        unknown,
        [
            (0x4000, 0x4011),
            (0x7000, 0x7001),
            (0x9000_0000, 0x9000_0001)
        ]
    );
    for l in &p.location {
        let m = p.mapping.iter().find(|m| m.id == l.mapping_id).unwrap();
        assert!(m.memory_start <= l.address && l.address < m.memory_limit);
    }
}

/// A program whose time is in libc's string functions.
const LIBC_PROGRAM: &str = r#"
#include <stdio.h>
#include <string.h>
static char src[1 << 20], dst[1 << 20];
int main(void) {
    unsigned long s = 0;
    for (int r = 0; r < 3000; r++) {
        memset(src, 'a' + (r & 7), sizeof src - 1);
        memcpy(dst, src, sizeof src);
        s += strlen(dst);
    }
    printf("%lu\n", s);
    return 0;
}
"#;

/// The separate debug file of libc (Debian's libc6-dbg), by build id, when it is installed.
fn libc_debug_file() -> Option<PathBuf> {
    let libc = std::fs::canonicalize("/lib/x86_64-linux-gnu/libc.so.6").ok()?;
    let data = std::fs::read(libc).ok()?;
    let elf = goblin::elf::Elf::parse(&data).ok()?;
    let id = gmon_tools::model::gnu_build_id(&elf, &data)?;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let path = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ));
    path.is_file().then_some(path)
}

/// Issue 27: libc's frames of a recorded run had line 0 in `pprof -raw`/`-list` although
/// libc6-dbg's debug file was found: the line of an address was kept only when a code symbol
/// named its function, and stripped libc names none of its internal functions
/// (`__memcpy_avx_unaligned_erms`, `__libc_start_call_main`): those symbols are in the debug file.
#[test]
fn libc_frames_of_a_recorded_run_have_the_debug_files_lines() {
    const TEST: &str = "libc_frames_of_a_recorded_run_have_the_debug_files_lines";
    if libc_debug_file().is_none() {
        return common::skip(
            TEST,
            "libc's debug file is not installed (apt-get install libc6-dbg)",
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let prog = crate::record::compile_c(tmp.path(), "strings", LIBC_PROGRAM, &["-O2", "-g"]);
    let (pb, _) = record_to_pprof(tmp.path(), &prog);
    let p = decode(&pb);
    let s = |i: i64| p.string_table[i as usize].as_str();
    let libc: BTreeSet<u64> = p
        .mapping
        .iter()
        .filter(|m| s(m.filename).contains("/libc.so"))
        .map(|m| m.id)
        .collect();
    let lines: Vec<(String, String, i64)> = p
        .location
        .iter()
        .filter(|l| libc.contains(&l.mapping_id))
        .flat_map(|l| &l.line)
        .map(|x| {
            let f = p.function.iter().find(|f| f.id == x.function_id).unwrap();
            (s(f.name).to_owned(), s(f.filename).to_owned(), x.line)
        })
        .collect();
    assert!(lines.len() > 3, "libc locations: {lines:?}");
    // Every libc frame, the string functions (assembly) and libc's start (C) alike.
    let unknown: Vec<_> = lines
        .iter()
        .filter(|l| l.2 == 0 || l.1.is_empty())
        .collect();
    assert!(
        unknown.is_empty(),
        "libc frames without a line: {unknown:?} of {lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.0.starts_with("__memcpy") && l.1.ends_with(".S")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.0 == "__libc_start_call_main" && l.1.ends_with("libc-start.c")),
        "{lines:?}"
    );
}

#[test]
fn a_recorded_runs_callgrind_names_a_library_functions_source_file_and_lines() {
    // A shared object's function has no source file in its symbol: before, callgrind wrote it
    // as `???` with every cost on line 0, though pprof had the lines of the same addresses.
    let tmp = tempfile::tempdir().unwrap();
    recorded_profile(tmp.path());
    let cg = tmp.path().join("run.cg");
    let o = gmon_cmd()
        .arg("callgrind")
        .arg(tmp.path().join("run.out"))
        .arg("-o")
        .arg(&cg)
        .output()
        .unwrap();
    assert!(o.status.success(), "gmon callgrind: {}", text(&o));
    let text = std::fs::read_to_string(&cg).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Names are compressed: `fn=(4) lib_spin` once, `fn=(4)` after; files likewise.
    let id_of = |prefixes: &[&str], name_ends: &str| {
        lines.iter().find_map(|l| {
            let (key, rest) = l.split_once('=')?;
            let (id, name) = rest.split_once(' ')?;
            (prefixes.contains(&key) && name.ends_with(name_ends)).then(|| id.to_owned())
        })
    };
    let function = id_of(&["fn", "cfn"], "lib_spin").unwrap_or_else(|| panic!("{text}"));
    let file = id_of(&["fl", "fi", "fe", "cfi"], "libhot.c")
        .unwrap_or_else(|| panic!("no source file libhot.c:\n{text}"));
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("fn={function}")))
        .unwrap_or_else(|| panic!("no costs of lib_spin:\n{text}"));
    let fl = lines[..at]
        .iter()
        .rev()
        .find(|l| l.starts_with("fl="))
        .unwrap_or_else(|| panic!("no fl= before lib_spin:\n{text}"));
    assert!(fl.starts_with(&format!("fl={file}")), "{fl}\n{text}");
    // Its costs sit on the loop's lines (`0xADDRESS LINE COST`, `positions: instr line`).
    let costs: Vec<u64> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with("fn=") && !l.starts_with("fl="))
        .filter(|l| l.starts_with("0x"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect();
    assert!(costs.iter().any(|&line| line > 0), "{text}");
}
