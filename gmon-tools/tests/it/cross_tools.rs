//! `merge`, `convert` and `dump` on the other architectures' profiles (`testdata/cross`,
//! spec/architectures.md), checked against the cross gprof's goldens stored there: the
//! profiles are big- and little-endian, 4- and 8-byte.

use std::path::{Path, PathBuf};

use crate::common::{cross_dir, gmon, run_ok};

fn cross_cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cross_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| d.join("gprof/b.out").is_file())
        .collect();
    v.sort();
    v
}

fn profiles(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let n = if name == "gmon.out" {
                1
            } else {
                name.strip_prefix("gmon.")?
                    .strip_suffix(".out")?
                    .parse()
                    .ok()?
            };
            Some((n, p))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

fn gprof_b(dir: &Path, profile: &Path) -> Vec<u8> {
    run_ok(
        gmon()
            .current_dir(dir)
            .env("LC_ALL", "C")
            .args(["gprof", "-b", "prog"])
            .arg(profile),
    )
    .stdout
}

/// `gmon merge` of a case's profiles, read by `gmon gprof -b`, prints what the cross gprof
/// printed for all of them at once (its `b-multi` golden).
#[test]
fn merged_cross_profiles_read_like_gprof_sums() {
    let cases = cross_cases();
    assert!(cases.len() >= 20, "testdata/cross is missing");
    let tmp = tempfile::tempdir().unwrap();
    for dir in cases {
        let merged = tmp.path().join("merged.out");
        run_ok(
            gmon()
                .args(["merge", "--exe"])
                .arg(dir.join("prog"))
                .args(profiles(&dir))
                .arg("-o")
                .arg(&merged),
        );
        let want = std::fs::read(dir.join("gprof/b-multi.out")).unwrap();
        assert!(
            gprof_b(&dir, &merged) == want,
            "{}: gprof -b of the merged profile differs from the cross gprof's sum",
            dir.display()
        );
    }
}

/// Converted to either BSD layout (in the profile's own byte order and width), a profile
/// gives the report the cross gprof gave for the original.
#[test]
fn bsd_conversions_keep_the_report() {
    let cases = cross_cases();
    assert!(cases.len() >= 20, "testdata/cross is missing");
    let tmp = tempfile::tempdir().unwrap();
    for dir in cases {
        let want = std::fs::read(dir.join("gprof/b.out")).unwrap();
        for to in ["bsd44", "bsd-old"] {
            let out = tmp.path().join(format!("{to}.gmon"));
            run_ok(
                gmon()
                    .args(["convert", "--to", to])
                    .arg(dir.join("gmon.out"))
                    .arg("-o")
                    .arg(&out),
            );
            assert!(
                gprof_b(&dir, &out) == want,
                "{}: gprof -b of the {to} conversion differs from the cross gprof's",
                dir.display()
            );
        }
    }
}

/// `gmon dump` finds each profile's byte order and pointer width without the executable, and
/// they are the executable's (ELF `EI_DATA`, `EI_CLASS`).
#[test]
fn dump_guesses_the_targets_encoding() {
    let cases = cross_cases();
    assert!(cases.len() >= 20, "testdata/cross is missing");
    for dir in cases {
        let elf = std::fs::read(dir.join("prog")).unwrap();
        let width = if elf[4] == 2 { "8-byte" } else { "4-byte" };
        let order = if elf[5] == 2 {
            "big-endian"
        } else {
            "little-endian"
        };
        let out = run_ok(gmon().arg("dump").arg(dir.join("gmon.out"))).stdout;
        let first = String::from_utf8_lossy(&out)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        assert!(
            first.contains(order) && first.contains(&format!("{width} pointers")),
            "{}: {first}",
            dir.display()
        );
    }
}
