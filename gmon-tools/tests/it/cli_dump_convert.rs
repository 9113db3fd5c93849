//! `gmon dump` and `gmon convert` through the real binary: exit status, output, error messages
//! naming the file and offset, and no output file after a failed convert.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::gmon;
use gmon_format::{
    CallArc, Dimension, Encoding, Header, Histogram, ProfRate, Profile, ReadOptions, Record,
    Variant,
};

/// A small GNU profile: one histogram and two arcs.
fn sample() -> Profile {
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    p.records.push(Record::Histogram(Histogram {
        low_pc: 0x1000,
        high_pc: 0x1020,
        prof_rate: ProfRate(100),
        dimension: Dimension::SECONDS,
        bins: vec![0, 0, 5, 6, 0, 0, 0, 1],
    }));
    p.records.push(Record::CallArc(CallArc {
        from_pc: 0x1010,
        self_pc: 0x1004,
        count: 3,
    }));
    p.records.push(Record::CallArc(CallArc {
        from_pc: 0x1018,
        self_pc: 0x1004,
        count: 4,
    }));
    p
}

fn write_sample(dir: &Path, name: &str, p: &Profile) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, gmon_format::to_vec(p).unwrap()).unwrap();
    path
}

/// A GNU file whose second record has the bad tag 7 at offset 0x29.
fn bad_tag_file(dir: &Path) -> PathBuf {
    let mut bytes = gmon_format::to_vec(&Profile {
        records: vec![Record::CallArc(CallArc {
            from_pc: 1,
            self_pc: 2,
            count: 3,
        })],
        ..Profile::new_gnu(Encoding::LITTLE_64)
    })
    .unwrap();
    bytes.push(7);
    let path = dir.join("bad.out");
    fs::write(&path, bytes).unwrap();
    path
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `gmon ARGS... SRC -o TARGET`, asserting that it fails with exit status 1; returns stderr.
fn convert_fails(args: &[&str], src: &Path, target: &Path) -> String {
    let out = gmon()
        .args(args)
        .arg(src)
        .arg("-o")
        .arg(target)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    err
}

/// Files in `dir` other than the ones named.
fn others(dir: &Path, known: &[&Path]) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !known.contains(&p.as_path()))
        .collect()
}

#[test]
fn dump_prints_header_and_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_sample(dir.path(), "gmon.out", &sample());
    let out = gmon().arg("dump").arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("GNU tagged format (gnu), little-endian, 8-byte pointers"),
        "{text}"
    );
    assert!(text.contains("record 0 at 0x14: histogram"), "{text}");
    assert!(
        text.contains("    bins 2..3  pc 0x1008..0x1010:\n      5 6\n"),
        "{text}"
    );
    assert!(
        text.contains("record 1 at 0x4d: arc  from_pc 0x1010  self_pc 0x1004  count 3"),
        "{text}"
    );
    assert!(
        text.contains("record 2 at 0x62: arc  from_pc 0x1018  self_pc 0x1004  count 4"),
        "{text}"
    );

    let out = gmon().args(["dump", "--bins"]).arg(&path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("    [     0] 0x1000: 0 0 5 6 0 0 0 1\n"),
        "{text}"
    );
}

#[test]
fn dump_json_is_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_sample(dir.path(), "a.out", &sample());
    let bsd = sample()
        .convert_to(Variant::Bsd44, Encoding::BIG_32)
        .unwrap();
    let b = write_sample(dir.path(), "b.gmon", &bsd);
    let out = gmon()
        .args(["dump", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The schema version that spec/json.md documents, then the files.
    assert_eq!(doc["version"], 1);
    let v = &doc["files"];
    assert_eq!(v[0]["file"], a.display().to_string());
    assert_eq!(v[1]["profile"]["header"]["variant"], "bsd44");
    assert_eq!(v[1]["profile"]["encoding"]["endian"], "big");
    assert_eq!(v[1]["profile"]["encoding"]["ptr_width"], 4);
    assert_eq!(v[0]["profile"]["records"][1]["kind"], "arc");
    assert_eq!(v[0]["profile"]["records"][1]["from_pc"], 0x1010);
    let back: Profile = serde_json::from_value(v[0]["profile"].clone()).unwrap();
    assert_eq!(back, sample());
    let back: Profile = serde_json::from_value(v[1]["profile"].clone()).unwrap();
    assert_eq!(back, bsd);
}

#[test]
fn dump_overrides_force_the_reading() {
    let dir = tempfile::tempdir().unwrap();
    let old = sample()
        .convert_to(Variant::BsdOld, Encoding::BIG_32)
        .unwrap();
    let path = write_sample(dir.path(), "old.gmon", &old);
    let out = gmon()
        .args([
            "dump",
            "--variant",
            "bsd-old",
            "--endian",
            "big",
            "--ptr-width",
            "4",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("old BSD format (bsd-old), big-endian, 4-byte")
    );
    // Forcing the wrong variant is an error naming the file and the offset.
    let out = gmon()
        .args(["dump", "--variant", "gnu"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.starts_with(&format!(
            "gmon: {}: offset 0x0: bad magic cookie",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn malformed_input_names_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let bad = bad_tag_file(dir.path());
    let out = gmon().arg("dump").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        format!(
            "gmon: {}: offset 0x29: bad tag 7 (expected 0, 1 or 2)\n",
            bad.display()
        )
    );
    let out = gmon()
        .arg("dump")
        .arg(dir.path().join("missing.out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).starts_with("gmon: "), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("missing.out"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn convert_round_trips_through_every_variant_and_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let src = write_sample(dir.path(), "gmon.out", &sample());
    let original = fs::read(&src).unwrap();
    for (to, variant) in [
        ("gnu", Variant::Gnu),
        ("bsd44", Variant::Bsd44),
        ("bsd-old", Variant::BsdOld),
    ] {
        for (endian, width) in [("little", "8"), ("little", "4"), ("big", "8"), ("big", "4")] {
            let mid = dir.path().join(format!("{to}-{endian}-{width}"));
            let out = gmon()
                .args([
                    "convert",
                    "--to",
                    to,
                    "--endian",
                    endian,
                    "--ptr-width",
                    width,
                ])
                .arg(&src)
                .arg("-o")
                .arg(&mid)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{to} {endian} {width}: {}",
                stderr_of(&out)
            );
            let opts = ReadOptions::new().with_variant(variant);
            let p = gmon_format::read_with(&fs::read(&mid).unwrap(), &opts).unwrap();
            assert_eq!(p.header.variant(), variant);
            assert_eq!(p.encoding.endian.to_string(), endian);
            assert_eq!(p.encoding.ptr_width.to_string(), width);
            assert_eq!(
                p.arcs().collect::<Vec<_>>(),
                sample().arcs().collect::<Vec<_>>()
            );

            let back = dir.path().join("back.out");
            let out = gmon()
                .args([
                    "convert",
                    "--to",
                    "gnu",
                    "--endian",
                    "little",
                    "--ptr-width",
                    "8",
                ])
                .args([
                    "--from",
                    to,
                    "--from-endian",
                    endian,
                    "--from-ptr-width",
                    width,
                ])
                .arg(&mid)
                .arg("-o")
                .arg(&back)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", stderr_of(&out));
            assert_eq!(fs::read(&back).unwrap(), original, "{to} {endian} {width}");
        }
    }
}

#[test]
fn failed_convert_creates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = bad_tag_file(dir.path());
    let target = dir.path().join("out.gmon");
    let err = convert_fails(&["convert", "--to", "bsd44"], &bad, &target);
    assert_eq!(
        err,
        format!(
            "gmon: {}: offset 0x29: bad tag 7 (expected 0, 1 or 2)\n",
            bad.display()
        )
    );
    assert!(
        others(dir.path(), &[&bad]).is_empty(),
        "{:?}",
        others(dir.path(), &[&bad])
    );

    // A conversion that cannot be done exactly (an address above 4 GiB to 4-byte pointers)
    // also leaves nothing behind, temporary files included.
    let mut p = sample();
    p.records.push(Record::CallArc(CallArc {
        from_pc: 1 << 40,
        self_pc: 0x1004,
        count: 1,
    }));
    let src = write_sample(dir.path(), "wide.out", &p);
    let err = convert_fails(
        &["convert", "--to", "gnu", "--ptr-width", "4"],
        &src,
        &target,
    );
    assert!(
        err.starts_with(&format!("gmon: {}: record 3: arc from_pc", src.display())),
        "{err}"
    );
    assert!(others(dir.path(), &[&bad, &src]).is_empty());

    // Disjoint GNU histograms whose bins do not lie on one grid have no BSD form (on one grid,
    // they are joined: gmon-format's convert tests).
    let mut p = sample();
    if let Some(Record::Histogram(h)) = p.records.first().cloned() {
        p.records.push(Record::Histogram(Histogram {
            low_pc: 0x2002,
            high_pc: 0x2022,
            ..h
        }));
    }
    let src2 = write_sample(dir.path(), "two.out", &p);
    let err = convert_fails(&["convert", "--to", "bsd-old"], &src2, &target);
    assert!(err.contains("cannot convert to bsd-old"), "{err}");
    assert!(!target.exists());
}

#[test]
fn convert_keeps_the_input_encoding_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = sample();
    p.encoding = Encoding::BIG_32;
    let src = write_sample(dir.path(), "be.out", &p);
    let dst = dir.path().join("be.bsd");
    gmon()
        .args(["convert", "--to", "bsd44"])
        .arg(&src)
        .arg("-o")
        .arg(&dst)
        .assert()
        .success();
    let q = common::read(&dst);
    assert_eq!(q.encoding, Encoding::BIG_32);
    assert!(matches!(q.header, Header::Bsd44(_)));
}

#[test]
fn padded_old_bsd_header_is_written_and_read_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let src = write_sample(dir.path(), "gmon.out", &sample());
    let padded = dir.path().join("padded.gmon");
    gmon()
        .args(["convert", "--to", "bsd-old", "--bsd-old-header-size", "24"])
        .arg(&src)
        .arg("-o")
        .arg(&padded)
        .assert()
        .success();
    // 24-byte header + 8 bins + 2 arcs of 24 bytes.
    assert_eq!(fs::read(&padded).unwrap().len(), 24 + 16 + 48);
    let out = gmon()
        .args(["dump", "--bsd-old-header-size", "24"])
        .arg(&padded)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("  header_size        24\n"), "{text}");
    assert!(text.contains("  bins               8\n"), "{text}");
    let back = dir.path().join("back.out");
    gmon()
        .args(["convert", "--to", "gnu", "--from-bsd-old-header-size", "24"])
        .arg(&padded)
        .arg("-o")
        .arg(&back)
        .assert()
        .success();
    assert_eq!(fs::read(&back).unwrap(), fs::read(&src).unwrap());

    // 24 bytes do not suit 4-byte pointers: an error, and no file.
    let bad = dir.path().join("bad.gmon");
    let err = convert_fails(
        &[
            "convert",
            "--to",
            "bsd-old",
            "--ptr-width",
            "4",
            "--bsd-old-header-size",
            "24",
        ],
        &src,
        &bad,
    );
    assert!(err.contains("the header size must be 12"), "{err}");
    assert!(!bad.exists());
}

/// spec/gmon-out.md ("Ambiguity"): `gmon dump` reports the other accepted readings exactly as
/// `testdata/spec/manifest.tsv` lists them, in text (`ambiguous:` / `less plausible:` lines)
/// and in JSON (`ambiguous` / `less_plausible`), and nothing for a file with one reading.
#[test]
fn dump_reports_the_ambiguity_the_manifest_states() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/spec");
    let manifest = fs::read_to_string(spec.join("manifest.tsv")).unwrap();
    let words = |r: &serde_json::Value| {
        let endian = if r["encoding"]["endian"] == "little" {
            "le"
        } else {
            "be"
        };
        let mut s = format!(
            "{} {endian} {}",
            r["variant"].as_str().unwrap(),
            r["encoding"]["ptr_width"]
        );
        if let Some(h) = r.get("header_size") {
            s.push_str(&format!(" {h}"));
        }
        s
    };
    let (mut checked, mut ambiguous_files) = (0, 0);
    for line in manifest.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (file, options, offset, ambiguous, less) = (f[0], f[1], f[3], f[4], f[5]);
        if options != "-" || offset != "-" {
            continue; // forced readings and errors are checked by gmon-format's spec test
        }
        let list = |s: &str| -> Vec<String> {
            if s == "-" {
                Vec::new()
            } else {
                s.split(';').map(str::to_string).collect()
            }
        };
        let path = spec.join(file);
        let out = common::run_ok(gmon().arg("dump").arg("--json").arg(&path));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let v = &doc["files"];
        assert_eq!(words(&v[0]["reading"]), f[2], "{file}: reading");
        let got = |key: &str| -> Vec<String> {
            v[0][key].as_array().unwrap().iter().map(words).collect()
        };
        assert_eq!(got("ambiguous"), list(ambiguous), "{file}: JSON ambiguous");
        assert_eq!(
            got("less_plausible"),
            list(less),
            "{file}: JSON less_plausible"
        );
        let text = String::from_utf8(common::run_ok(gmon().arg("dump").arg(&path)).stdout).unwrap();
        let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
        assert_eq!(
            count("ambiguous: also reads as "),
            list(ambiguous).len(),
            "{file}: {text}"
        );
        assert_eq!(
            count("less plausible: also reads as "),
            list(less).len(),
            "{file}: {text}"
        );
        checked += 1;
        ambiguous_files += usize::from(ambiguous != "-" || less != "-");
    }
    assert!(
        checked >= 20 && ambiguous_files >= 4,
        "{checked} files, {ambiguous_files} ambiguous"
    );
}

/// A sidecar with one of everything, and a section of a later writer (kind 99).
fn sample_sidecar(gmon: &[u8]) -> Vec<u8> {
    use gmon_format::sidecar::{
        AddressRange, Counters, GmonLink, MappedObject, OBJECT_FLAG_MAIN, PcSample, StackKind,
        StackSample, ThreadTotal, sidecar_to_vec,
    };
    let s = gmon_format::Sidecar {
        writer: "test 1".into(),
        rate_hz: 1000,
        pid: 77,
        counters: Counters {
            samples: 9,
            ..Counters::default()
        },
        objects: vec![MappedObject {
            path: "/bin/prog".into(),
            build_id: vec![0xab, 0xcd],
            load_bias: 0x1000,
            flags: OBJECT_FLAG_MAIN,
            ranges: vec![AddressRange {
                start: 0x2000,
                end: 0x3000,
            }],
        }],
        pc_samples: vec![PcSample {
            pc: 0x2010,
            count: 9,
        }],
        stacks: vec![StackSample {
            count: 9,
            pcs: vec![0x2010, 0x2100],
        }],
        threads: vec![ThreadTotal {
            tid: 77,
            samples: 9,
        }],
        stack_kinds: vec![StackKind::COMPLETE],
        gmon: Some(GmonLink::of(gmon)),
        ..gmon_format::Sidecar::default()
    };
    let mut bytes = sidecar_to_vec(&s).unwrap();
    bytes.extend_from_slice(&99u32.to_le_bytes());
    bytes.extend_from_slice(&2u64.to_le_bytes());
    bytes.extend_from_slice(b"zz");
    bytes
}

/// `gmon dump` shows a sidecar's every section at its offset (issue 30), in text and JSON, and
/// a gmon.out's dump names the sidecar beside it and whether it belongs.
#[test]
fn dump_shows_sidecars_and_the_sidecar_beside_a_profile() {
    let dir = tempfile::tempdir().unwrap();
    let gmon_path = write_sample(dir.path(), "gmon.out", &sample());
    let gmon_bytes = fs::read(&gmon_path).unwrap();
    let sidecar = gmon_format::sidecar_path(&gmon_path);
    fs::write(&sidecar, sample_sidecar(&gmon_bytes)).unwrap();

    let o = gmon().arg("dump").arg(&sidecar).output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    for want in [
        "gmon-write sidecar, version 1",
        "[0x10] section 1 INFO",
        "rate: 1000 Hz",
        "section 2 OBJECTS",
        "/bin/prog  build id abcd  load bias 0x1000",
        "0x2010 (prog+0x1010) 9",
        "stack 0: 9 ticks, 2 frames, complete",
        "tid 77: 9 ticks",
        "section 6 GMON_LINK",
        "section 7 STACK_KINDS",
        "section 99 (unknown kind), 2 bytes",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }

    let o = gmon()
        .args(["dump", "--json"])
        .arg(&sidecar)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let x = &v["files"][0]["gmonx"];
    assert_eq!(x["objects"][0]["build_id"], "abcd");
    assert_eq!(x["stacks"][0]["kind"], "complete");
    assert_eq!(x["pc_samples"][0], serde_json::json!([0x2010, 9]));
    let sections = x["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 8);
    assert_eq!(sections[7]["kind"], 99);
    assert!(sections[7]["name"].is_null());
    let mut at = 16;
    for s in sections {
        assert_eq!(s["offset"], at);
        at += 12 + s["length"].as_u64().unwrap();
    }
    assert_eq!(at, fs::metadata(&sidecar).unwrap().len());

    // The profile's dump names its sidecar; a stale one is said to be stale.
    let o = gmon().arg("dump").arg(&gmon_path).output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("belongs to this file"), "{text}");
    let json = || -> serde_json::Value {
        let o = gmon()
            .args(["dump", "--json"])
            .arg(&gmon_path)
            .output()
            .unwrap();
        serde_json::from_slice(&o.stdout).unwrap()
    };
    assert_eq!(json()["files"][0]["sidecar"]["belongs"], "yes");
    fs::write(&sidecar, sample_sidecar(b"another gmon.out")).unwrap();
    assert_eq!(json()["files"][0]["sidecar"]["belongs"], "stale");
    // Without a sidecar, the field is absent (the document is unchanged).
    fs::remove_file(&sidecar).unwrap();
    assert!(json()["files"][0].get("sidecar").is_none());
}

/// `gmon dump --json` of a file it cannot read still prints a document: the files before it
/// and an `error` with the class and offset the spec fixes, and exits 1 (issue 30).
#[test]
fn dump_json_gives_the_error_class_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_sample(dir.path(), "good.out", &sample());
    let bad = bad_tag_file(dir.path());
    let o = gmon()
        .args(["dump", "--json"])
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr_of(&o).contains("bad.out"), "{}", stderr_of(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    let e = &v["error"];
    assert_eq!(e["file"], bad.display().to_string());
    // The class and offset are the reader's own.
    let bytes = fs::read(&bad).unwrap();
    let err = gmon_format::read_with(&bytes, &ReadOptions::default()).unwrap_err();
    assert_eq!(e["class"], err.class());
    assert_eq!(e["offset"], err.offset().unwrap());
    // A file that cannot be read at all: class io, no offset.
    let o = gmon()
        .args(["dump", "--json"])
        .arg(dir.path().join("missing"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["class"], "io");
    assert!(v["error"]["offset"].is_null());
}
