//! Tells the build scripts of the crates that depend on gmon-write where its sources are:
//! `DEP_GMON_WRITE_ROOT` (see `links` in Cargo.toml). gmon-tools' build.rs runs a nested
//! `cargo build` of this crate's cdylib there, which is how the `gmon` binary embeds the runtime
//! whether gmon-tools is built in the workspace or from its published package (a crate's build
//! script cannot otherwise find the source of another crate, and cargo cannot depend on a
//! cdylib).

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo::metadata=root={root}");
    // Nothing here depends on the sources: run once.
    println!("cargo::rerun-if-changed=build.rs");
}
