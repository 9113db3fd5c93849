//! Builds the gmon-write runtime (`libgmon_write.so`, gmon-write's cdylib) so that the `gmon`
//! binary can embed it (`include_bytes!` in `src/record/runtime.rs`): `gmon record` then works
//! from the binary alone (`cargo install gmon-tools`, `cargo install --path gmon-tools`, or a copy
//! of `target/release/gmon`).
//!
//! Cargo cannot depend on another crate's cdylib, so this runs a nested `cargo build -p
//! gmon-write --lib` with its own target directory inside `OUT_DIR` (the outer cargo holds the
//! lock of the main one) and the same profile. gmon-write is a dependency of this crate only so
//! that its build script can tell this one where its sources are (`DEP_GMON_WRITE_ROOT`): the
//! workspace's `gmon-write/`, or the unpacked package in cargo's registry cache when gmon-tools
//! is built from its own package (the `../gmon-write` of the workspace is not part of that
//! package). Cargo reruns this script only when those sources change, and the nested cargo is
//! itself incremental.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let runtime =
        PathBuf::from(env::var_os("DEP_GMON_WRITE_ROOT").expect(
            "gmon-write's build script sets DEP_GMON_WRITE_ROOT (`links` in its Cargo.toml)",
        ));
    // The runtime's sources, its lock file (a packaged crate carries one), and in the workspace
    // the gmon-format and Cargo.lock beside it. Only paths that exist: cargo reruns a script
    // every time for a missing one.
    let parent = runtime.join("..");
    for watched in [
        runtime.join("src"),
        runtime.join("Cargo.toml"),
        runtime.join("Cargo.lock"),
        parent.join("gmon-format/src"),
        parent.join("gmon-format/Cargo.toml"),
        parent.join("Cargo.lock"),
    ] {
        if watched.exists() {
            println!("cargo:rerun-if-changed={}", watched.display());
        }
    }
    println!("cargo:rerun-if-env-changed=GMON_EMBED_LIB");

    let embedded = out_dir.join("libgmon_write.so");
    // A prebuilt library can be given instead (a packager's build, or a target where the nested
    // build cannot run).
    if let Some(prebuilt) = env::var_os("GMON_EMBED_LIB").filter(|p| !p.is_empty()) {
        copy(Path::new(&prebuilt), &embedded);
        write_hash(&embedded, &out_dir);
        return;
    }

    // A packaged gmon-write (cargo's registry cache, a vendored copy: its Cargo.toml.orig says so)
    // must stay as it is, but the nested cargo would rewrite its Cargo.lock there (cargo's
    // package verification and vendored sources' checksums reject that). It is built from a copy
    // in OUT_DIR instead, made its own workspace so that no Cargo.toml above OUT_DIR claims it.
    // The workspace's gmon-write is built in place, as a member of its workspace.
    let runtime = if runtime.join("Cargo.toml.orig").exists() {
        let copied = out_dir.join("runtime-src");
        copy_tree(&runtime, &copied);
        let manifest = copied.join("Cargo.toml");
        let mut text = std::fs::read_to_string(&manifest)
            .unwrap_or_else(|e| panic!("{}: cannot read: {e}", manifest.display()));
        text.push_str("\n[workspace]\n");
        write_if_changed(&manifest, text.as_bytes());
        copied
    } else {
        runtime
    };

    let release = env::var("PROFILE").as_deref() == Ok("release");
    // The runtime is loaded into the programs `gmon record` runs, so it is built for the
    // architecture the `gmon` binary is built for: a cross build of gmon (`--target
    // aarch64-unknown-linux-gnu`) embeds an aarch64 runtime, not one for the build machine.
    let target = env::var("TARGET").expect("cargo sets TARGET for build scripts");
    let cross = env::var("HOST").ok().as_deref() != Some(target.as_str());
    let target_dir = out_dir.join("runtime-target");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(runtime.join("Cargo.toml"))
        .args(["-p", "gmon-write", "--lib"])
        .arg("--target-dir")
        .arg(&target_dir);
    if release {
        cmd.arg("--release");
    }
    if cross {
        cmd.args(["--target", &target]);
    }
    // Without debug information the embedded copy is a few times smaller: less to compare
    // before each run and to map into every recorded process. (GMON_WRITE_LIB can name a build
    // with it for debugging the runtime.)
    let profile = if release { "release" } else { "dev" };
    cmd.args([
        "--config",
        &format!("profile.{profile}.strip=\"debuginfo\""),
    ]);
    // The outer build's settings for its own crates are not the runtime's: clippy's wrapper
    // (under `cargo clippy`), the outer target directory, and per-crate variables cargo sets for
    // this build script would otherwise leak into the nested build.
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        // CARGO_TARGET_<TRIPLE>_LINKER and its kind say how to link for the target; the
        // nested build needs them as the outer one did.
        let keep = key == "CARGO_HOME"
            || key == "CARGO_MAKEFLAGS"
            || key == "CARGO_NET_OFFLINE"
            || (key.starts_with("CARGO_TARGET_") && key != "CARGO_TARGET_DIR")
            || key.starts_with("CARGO_REGISTRIES_")
            || key.starts_with("CARGO_HTTP_");
        if (key.starts_with("CARGO_") && !keep)
            || key.starts_with("DEP_")
            || matches!(
                key,
                "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "CLIPPY_ARGS"
                    | "CLIPPY_CONF_DIR"
                    | "TARGET"
                    | "HOST"
                    | "OUT_DIR"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "NUM_JOBS"
            )
        {
            cmd.env_remove(key);
        }
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the gmon-write runtime: {e}"));
    assert!(
        status.success(),
        "building the gmon-write runtime (cargo build -p gmon-write --lib) failed: {status}"
    );
    let built = if cross {
        target_dir.join(&target)
    } else {
        target_dir
    }
    .join(if release { "release" } else { "debug" })
    .join("libgmon_write.so");
    copy(&built, &embedded);
    write_hash(&embedded, &out_dir);
}

/// Writes `OUT_DIR/libgmon_write.hash`: the library's FNV-1a 64 hash and length, which name its
/// content-addressed cache directory at run time (the content itself is compared byte for byte
/// before use, so the hash only needs to tell versions apart).
fn write_hash(lib: &Path, out_dir: &Path) {
    let bytes = std::fs::read(lib)
        .unwrap_or_else(|e| panic!("{}: cannot read the runtime library: {e}", lib.display()));
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let name = format!("{hash:016x}-{}", bytes.len());
    let path = out_dir.join("libgmon_write.hash");
    if std::fs::read_to_string(&path).is_ok_and(|old| old == name) {
        return;
    }
    std::fs::write(&path, name).unwrap_or_else(|e| panic!("{}: cannot write: {e}", path.display()));
}

/// Copies `from` to `to` only when the bytes differ, so that an unchanged library does not make
/// cargo recompile the `include_bytes!` that reads it.
fn copy(from: &Path, to: &Path) {
    let bytes = std::fs::read(from)
        .unwrap_or_else(|e| panic!("{}: cannot read the runtime library: {e}", from.display()));
    write_if_changed(to, &bytes);
}

/// Writes `bytes` to `path` unless it holds them already (an unchanged file keeps its time, so
/// cargo does not rebuild what reads it).
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return;
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: cannot write: {e}", path.display()));
}

/// Copies the directory tree `from` into `to`, file by file with [`write_if_changed`]. A package's
/// files never change under one version, so nothing is ever left over to delete.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: cannot create: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: cannot list: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("{}: cannot list: {e}", from.display()));
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_tree(&source, &target);
        } else {
            let bytes = std::fs::read(&source)
                .unwrap_or_else(|e| panic!("{}: cannot read: {e}", source.display()));
            write_if_changed(&target, &bytes);
        }
    }
}
