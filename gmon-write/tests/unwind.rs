//! DWARF unwinding (spec/runtime.md §4.4): a C program built with `-O2 -fomit-frame-pointer`,
//! profiled through the preloaded runtime, gets complete stacks from its `.eh_frame`.

#![deny(clippy::undocumented_unsafe_blocks)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_format::Sidecar;
use gmon_format::sidecar::StackKind;

/// The directory holding a fresh `libgmon_write.so` (see `common::runtime_library_dir`).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    common::runtime_library_dir(dir, &["libgmon_write.so"]).unwrap_or_else(|| dir.to_path_buf())
}

/// Builds `c-tests/<name>.c` into `dir`, or None (after saying SKIPPED) without gcc.
fn build(dir: &Path, name: &str) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("c-tests/{name}.c"));
    let prog = dir.join(name);
    match Command::new("gcc")
        .args(["-O2", "-fomit-frame-pointer", "-pthread"])
        .arg(&src)
        .arg("-ldl")
        .arg("-o")
        .arg(&prog)
        .output()
    {
        Err(e) => {
            common::skip("unwind", &format!("gcc could not run: {e}"));
            None
        }
        Ok(o) => {
            assert!(
                o.status.success(),
                "gcc: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            Some(prog)
        }
    }
}

/// Runs `prog` under the preloaded runtime with `GMON_RECORD_UNWIND=unwind`.
fn record(prog: &Path, dir: &Path, unwind: &str) -> Sidecar {
    let out = dir.join(format!("{unwind}.out"));
    let lib = library_dir().join("libgmon_write.so");
    let res = Command::new(prog)
        .env("LD_PRELOAD", &lib)
        .env("GMON_RECORD_OUT", &out)
        .env("GMON_RECORD_UNWIND", unwind)
        .env_remove("GMON_RECORD_OWNER")
        .output()
        .expect("run the C program");
    assert!(
        res.status.success(),
        "{}: {}",
        res.status,
        String::from_utf8_lossy(&res.stderr)
    );
    common::read_sidecar(&out)
}

/// The program's function symbols: (link-time start, end, name).
fn functions(prog: &Path) -> Vec<(u64, u64, String)> {
    let bytes = std::fs::read(prog).expect("read the program");
    let elf = goblin::elf::Elf::parse(&bytes).expect("an ELF file");
    elf.syms
        .iter()
        .filter(|s| s.is_function() && s.st_size > 0)
        .filter_map(|s| {
            let name = elf.strtab.get_at(s.st_name)?;
            Some((s.st_value, s.st_value + s.st_size, name.to_string()))
        })
        .collect()
}

/// The names of a stack's frames in the program (`?` elsewhere), leaf first. Return addresses
/// are looked up one byte back, inside the call instruction.
fn names(sidecar: &Sidecar, funcs: &[(u64, u64, String)], pcs: &[u64]) -> Vec<String> {
    pcs.iter()
        .enumerate()
        .map(|(i, &pc)| {
            let pc = if i == 0 { pc } else { pc - 1 };
            sidecar
                .resolve(pc)
                .filter(|(o, _)| o.is_main())
                .and_then(|(_, a)| funcs.iter().find(|f| f.0 <= a && a < f.1))
                .map_or_else(|| "?".to_string(), |f| f.2.clone())
        })
        .collect()
}

#[test]
fn stacks_without_frame_pointers_reach_main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(prog) = build(dir.path(), "no_frame_pointers") else {
        return;
    };
    let funcs = functions(&prog);
    let sidecar = record(&prog, dir.path(), "dwarf");
    assert_eq!(sidecar.stack_kinds.len(), sidecar.stacks.len());
    let total: u64 = sidecar.stacks.iter().map(|s| s.count).sum();
    assert!(total > 300, "only {total} ticks with stacks");
    let (mut reached, mut in_leaf) = (0, 0);
    for (i, s) in sidecar.stacks.iter().enumerate() {
        let n = names(&sidecar, &funcs, &s.pcs);
        if n.first().map(String::as_str) != Some("leaf") {
            continue;
        }
        in_leaf += s.count;
        let main_chain = ["leaf", "middle", "outer", "burn", "main"];
        let thread_chain = ["leaf", "middle", "outer", "burn", "thread_main"];
        // Frames in the program up to main or thread_main (below them: libc's start code and
        // `_start`). `burn` is static and may be inlined into its callers: dropped if absent.
        let mut ours: Vec<&str> = n.iter().map(String::as_str).filter(|&f| f != "?").collect();
        if let Some(end) = ours.iter().position(|&f| f == "main" || f == "thread_main") {
            ours.truncate(end + 1);
        }
        let want = |chain: &[&str]| {
            let chain: Vec<&str> = chain
                .iter()
                .copied()
                .filter(|&f| f != "burn" || ours.contains(&"burn"))
                .collect();
            ours == chain
        };
        if sidecar.stack_kind(i) == StackKind::COMPLETE
            && (want(&main_chain) || want(&thread_chain))
        {
            reached += s.count;
        }
    }
    assert!(in_leaf > total / 2, "{in_leaf} of {total} ticks in leaf");
    assert!(
        reached * 100 >= in_leaf * 90,
        "only {reached} of {in_leaf} ticks in leaf unwound to main or thread_main: {:?}",
        sidecar
            .stacks
            .iter()
            .enumerate()
            .take(10)
            .map(|(i, s)| (sidecar.stack_kind(i), names(&sidecar, &funcs, &s.pcs)))
            .collect::<Vec<_>>()
    );

    // The same program walked through frame pointers: never said to be complete.
    let fp = record(&prog, dir.path(), "fp");
    assert!(!fp.stacks.is_empty());
    assert!(
        fp.stack_kinds
            .iter()
            .all(|&k| k == StackKind::FRAME_POINTER || k == StackKind::TRUNCATED),
        "{:?}",
        fp.stack_kinds
    );
}

#[test]
fn objects_loaded_later_are_unwound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(prog) = build(dir.path(), "dlopen_late") else {
        return;
    };
    let sidecar = record(&prog, dir.path(), "dwarf");
    // Ticks whose leaf is in libm, dlopen'ed after the unwinder read the objects at start.
    let in_libm = |pc: u64| {
        sidecar
            .resolve(pc)
            .is_some_and(|(o, _)| o.path.contains("libm.so"))
    };
    let (mut leaf_libm, mut complete) = (0, 0);
    for (i, s) in sidecar.stacks.iter().enumerate() {
        if s.pcs.first().is_some_and(|&pc| in_libm(pc)) {
            leaf_libm += s.count;
            if sidecar.stack_kind(i) == StackKind::COMPLETE {
                complete += s.count;
            }
        }
    }
    assert!(leaf_libm > 50, "only {leaf_libm} ticks in libm");
    assert!(
        complete * 100 >= leaf_libm * 90,
        "{complete} of {leaf_libm} ticks in libm complete"
    );
}
