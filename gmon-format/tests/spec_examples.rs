//! The worked examples of `spec/` are real files, and the spec cannot drift from them.
//!
//! * Every fenced block tagged ```` ```hex testdata/spec/NAME ```` in `spec/*.md` must be exactly
//!   `xxd` of that file, and every example file must be shown somewhere.
//! * Every example parses with `gmon_format::read` (auto-detection) to the values the spec
//!   states in its tables.
//! * Where the spec reports what GNU gprof does with an example, the claim is re-checked with
//!   `/usr/bin/gprof` when it is installed (skipped with a message otherwise).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_format::{
    CallArc, Encoding, Endian, Header, Histogram, Profile, PtrWidth, ReadOptions, Record, Variant,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn spec_dir() -> PathBuf {
    repo().join("spec")
}

fn examples_dir() -> PathBuf {
    repo().join("testdata").join("spec")
}

fn example_bytes(name: &str) -> Vec<u8> {
    let path = examples_dir().join(name);
    fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn example(name: &str) -> Profile {
    gmon_format::read(&example_bytes(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// xxd blocks

/// `xxd FILE` output: 16 bytes per line, 2-byte groups, then the printable characters.
fn xxd(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (line, chunk) in bytes.chunks(16).enumerate() {
        out.push_str(&format!("{:08x}: ", line * 16));
        for i in 0..16 {
            match chunk.get(i) {
                Some(b) => out.push_str(&format!("{b:02x}")),
                None => out.push_str("  "),
            }
            if i % 2 == 1 {
                out.push(' ');
            }
        }
        out.push(' ');
        for &b in chunk {
            out.push(if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '.'
            });
        }
        out.push('\n');
    }
    out
}

/// One ```` ```hex PATH ```` block of a spec document.
struct HexBlock {
    doc: PathBuf,
    line: usize,
    path: String,
    text: String,
}

fn hex_blocks() -> Vec<HexBlock> {
    let mut docs: Vec<PathBuf> = fs::read_dir(spec_dir())
        .expect("spec/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut blocks = Vec::new();
    for doc in docs {
        let text = fs::read_to_string(&doc).expect("read a spec document");
        let mut current: Option<HexBlock> = None;
        for (n, line) in text.lines().enumerate() {
            if let Some(block) = current.as_mut() {
                if line.trim_end() == "```" {
                    blocks.extend(current.take());
                } else {
                    block.text.push_str(line);
                    block.text.push('\n');
                }
            } else if let Some(path) = line.strip_prefix("```hex ") {
                current = Some(HexBlock {
                    doc: doc.clone(),
                    line: n + 1,
                    path: path.trim().to_string(),
                    text: String::new(),
                });
            }
        }
        assert!(
            current.is_none(),
            "{}: unterminated hex block",
            doc.display()
        );
    }
    blocks
}

#[test]
fn every_hex_dump_in_the_spec_is_xxd_of_its_file() {
    let blocks = hex_blocks();
    assert!(blocks.len() >= 17, "only {} hex blocks found", blocks.len());
    let mut shown = BTreeSet::new();
    for b in &blocks {
        let file = repo().join(&b.path);
        let bytes = fs::read(&file)
            .unwrap_or_else(|e| panic!("{}:{}: {}: {e}", b.doc.display(), b.line, b.path));
        assert_eq!(
            b.text,
            xxd(&bytes),
            "{}:{}: the dump of {} differs from the file",
            b.doc.display(),
            b.line,
            b.path
        );
        shown.insert(b.path.clone());
    }
    for entry in fs::read_dir(examples_dir())
        .expect("testdata/spec exists")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".gmon") || name.ends_with(".profile") {
            let rel = format!("testdata/spec/{name}");
            assert!(
                shown.contains(&rel),
                "{rel} is not shown in any spec document"
            );
        }
    }
}

#[test]
fn xxd_matches_the_real_tool_format() {
    // Two lines of `xxd` output checked by eye against xxd 2022-01-14: a full line and a
    // partial one with non-printable bytes.
    let got = xxd(b"gmon\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    assert_eq!(
        got,
        "00000000: 676d 6f6e 0100 0000 0000 0000 0000 0000  gmon............\n\
         00000010: 0000 0000                                ....\n"
    );
}

// ---------------------------------------------------------------------------------------------
// The values the spec states

/// The histogram shared by the examples (spec/gnu.md, "Tag 0").
const BINS: [u64; 24] = [
    0, 0, 0, 0, 0, 0, 3, 9, 14, 11, 6, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// The arcs of the complete example (spec/gnu.md, "A complete file").
const ARCS: [CallArc; 4] = [
    CallArc {
        from_pc: 0x1250,
        self_pc: 0x11f1,
        count: 5000,
    },
    CallArc {
        from_pc: 0x1280,
        self_pc: 0x11f1,
        count: 5000,
    },
    CallArc {
        from_pc: 0x12b0,
        self_pc: 0x124e,
        count: 50,
    },
    CallArc {
        from_pc: 0x12b0,
        self_pc: 0x1278,
        count: 50,
    },
];

fn histograms(p: &Profile) -> Vec<&Histogram> {
    p.histograms().collect()
}

fn arcs(p: &Profile) -> Vec<CallArc> {
    p.arcs().copied().collect()
}

fn assert_shared_histogram(name: &str, h: &Histogram) {
    assert_eq!(h.low_pc, 0x11e0, "{name}: low_pc");
    assert_eq!(h.high_pc, 0x1240, "{name}: high_pc");
    assert_eq!(h.prof_rate.0, 100, "{name}: rate");
    assert_eq!(h.dimension.name_str(), "seconds", "{name}: dimension");
    assert_eq!(h.dimension.abbrev, b's', "{name}: abbreviation");
    assert_eq!(h.bins, BINS, "{name}: bins");
    assert_eq!(h.total(), 46, "{name}: 46 samples");
    assert_eq!(h.scale(), 2.0, "{name}: scale");
}

fn gnu_version(p: &Profile) -> u32 {
    match p.header {
        Header::Gnu(h) => {
            assert_eq!(h.spare, [0; 12], "spare bytes are zero in every example");
            h.version
        }
        other => panic!("expected a GNU header, got {other:?}"),
    }
}

#[test]
fn gnu_header_only() {
    let p = example("gnu-header-only.gmon");
    assert_eq!(gnu_version(&p), 1);
    assert!(p.records.is_empty());
}

#[test]
fn gnu_histogram_record() {
    let p = example("gnu-le64-hist.gmon");
    assert_eq!(p.encoding, Encoding::LITTLE_64);
    assert_eq!(gnu_version(&p), 1);
    assert_eq!(p.records.len(), 1);
    assert_shared_histogram("gnu-le64-hist", histograms(&p)[0]);
    // Record length 25 + 2P + 2N after the 20-byte header.
    assert_eq!(example_bytes("gnu-le64-hist.gmon").len(), 20 + 25 + 16 + 48);
}

#[test]
fn gnu_arc_record() {
    let p = example("gnu-le64-arc.gmon");
    assert_eq!(p.encoding, Encoding::LITTLE_64);
    assert_eq!(p.records, vec![Record::CallArc(ARCS[1])]);
    assert_eq!(example_bytes("gnu-le64-arc.gmon").len(), 20 + 21);
}

#[test]
fn gnu_complete_file_in_four_encodings() {
    for (name, encoding, len) in [
        ("gnu-le64.gmon", Encoding::LITTLE_64, 193),
        ("gnu-be64.gmon", Encoding::BIG_64, 193),
        ("gnu-le32.gmon", Encoding::LITTLE_32, 153),
        ("gnu-be32.gmon", Encoding::BIG_32, 153),
    ] {
        let p = example(name);
        assert_eq!(p.encoding, encoding, "{name}: detected encoding");
        assert_eq!(gnu_version(&p), 1);
        assert_eq!(example_bytes(name).len(), len, "{name}: size");
        let hs = histograms(&p);
        assert_eq!(hs.len(), 1, "{name}: one histogram");
        assert_shared_histogram(name, hs[0]);
        assert_eq!(arcs(&p), ARCS, "{name}: arcs");
        assert!(
            matches!(p.records[0], Record::Histogram(_)),
            "{name}: histogram first"
        );
    }
}

#[test]
fn gnu_records_that_gprof_combines() {
    let p = example("gnu-le64-combine.gmon");
    let hs = histograms(&p);
    assert_eq!(hs.len(), 3);
    assert_eq!((hs[0].low_pc, hs[0].high_pc), (0x11e0, 0x1200));
    assert_eq!(hs[0].bins, [0, 0, 0, 0, 0, 0, 3, 9]);
    assert_eq!((hs[1].low_pc, hs[1].high_pc), (0x11e0, 0x1200));
    assert_eq!(hs[1].bins, [0, 0, 0, 0, 0, 0, 1, 1]);
    assert_eq!((hs[2].low_pc, hs[2].high_pc), (0x1200, 0x1240));
    assert_eq!(
        hs[2].bins,
        [14, 11, 6, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert!(hs.iter().all(|h| h.scale() == 2.0));
    assert_eq!(hs.iter().map(|h| h.total()).sum::<u64>(), 48);
    let a = arcs(&p);
    assert_eq!(
        a,
        [
            CallArc {
                from_pc: 0x1280,
                self_pc: 0x11f1,
                count: 3000
            },
            CallArc {
                from_pc: 0x1280,
                self_pc: 0x11f1,
                count: 2000
            },
        ]
    );
    // The record order of the table in spec/gnu.md.
    let kinds: Vec<&str> = p
        .records
        .iter()
        .map(|r| match r {
            Record::Histogram(_) => "hist",
            Record::CallArc(_) => "arc",
            Record::BasicBlocks(_) => "bb",
        })
        .collect();
    assert_eq!(kinds, ["hist", "arc", "hist", "hist", "arc"]);
}

#[test]
fn gnu_basic_blocks_version_1() {
    let p = example("gnu-le64-bb-v1.gmon");
    assert_eq!(gnu_version(&p), 1);
    let blocks: Vec<(u64, u64)> = p.basic_blocks().map(|b| (b.address, b.count)).collect();
    assert_eq!(blocks, [(0x11f1, 10000), (0x1206, 1_500_000_000)]);
    assert!(p.basic_blocks().all(|b| b.legacy.is_none()));
}

#[test]
fn gnu_basic_blocks_version_0() {
    let p = example("gnu-v0-le64-bb.gmon");
    assert_eq!(gnu_version(&p), 0);
    let [Record::BasicBlocks(rec)] = p.records.as_slice() else {
        panic!("one tag-2 record expected, got {:?}", p.records);
    };
    assert_eq!(rec.legacy_name.as_deref(), Some(&b"ties.c"[..]));
    assert_eq!(rec.blocks.len(), 1);
    let b = &rec.blocks[0];
    assert_eq!((b.address, b.count), (0x11f1, 10000));
    let legacy = b.legacy.as_ref().expect("version-0 extras");
    assert_eq!(legacy.function, b"work");
    assert_eq!(legacy.file, b"ties.c");
    assert_eq!(legacy.line, 25);
}

#[test]
fn bsd44_examples() {
    for (name, encoding, len) in [
        ("bsd44-le64.gmon", Encoding::LITTLE_64, 184),
        ("bsd44-be32.gmon", Encoding::BIG_32, 128),
    ] {
        let p = example(name);
        assert_eq!(p.encoding, encoding, "{name}: detected encoding");
        assert_eq!(example_bytes(name).len(), len, "{name}: size");
        let Header::Bsd44(h) = p.header else {
            panic!("{name}: expected a 4.4BSD header, got {:?}", p.header);
        };
        assert_eq!(h.version, 0x0005_1879);
        assert_eq!(h.prof_rate, 100);
        assert_eq!(h.histcounter_type, 0);
        assert_eq!(h.spare, [0; 8]);
        assert_shared_histogram(name, histograms(&p)[0]);
        assert_eq!(arcs(&p), ARCS, "{name}: arcs");
        assert!(p.trailing.is_empty());
    }
}

#[test]
fn bsd44_freebsd_wide_counters() {
    let p = example("bsd44-le64-u32.gmon");
    let Header::Bsd44(h) = p.header else {
        panic!("expected a 4.4BSD header, got {:?}", p.header);
    };
    assert_eq!(h.histcounter_type, 32);
    let hs = histograms(&p);
    let expected: Vec<u64> = BINS.iter().map(|b| b * 100_000).collect();
    assert_eq!(hs[0].bins, expected);
    assert_eq!(hs[0].bins[6], 300_000);
    assert_eq!(arcs(&p), [ARCS[0]]);
}

#[test]
fn bsd44_partial_last_arc_is_kept_aside() {
    let p = example("bsd44-le64-partial.gmon");
    assert_eq!(p.header.variant(), Variant::Bsd44);
    assert_eq!(arcs(&p), [ARCS[0]]);
    let bytes = example_bytes("bsd44-le64-partial.gmon");
    assert_eq!(bytes.len(), 122);
    assert_eq!(p.trailing, bytes[0x70..]);
    assert_eq!(p.trailing.len(), 10);
}

#[test]
fn old_bsd_examples() {
    for (name, encoding, header_size, len) in [
        ("bsd-old-le64.gmon", Encoding::LITTLE_64, 20, 164),
        ("bsd-old-le64-pad24.gmon", Encoding::LITTLE_64, 24, 168),
        ("bsd-old-le32.gmon", Encoding::LITTLE_32, 12, 108),
    ] {
        // The file cannot say whether its header is 20 or 24 bytes (spec/bsd.md); the reader
        // is told, as a user with the right knowledge would tell `gmon`.
        let opts = ReadOptions::new()
            .with_variant(Variant::BsdOld)
            .with_bsd_old_header_size(header_size);
        let p = gmon_format::read_with(&example_bytes(name), &opts)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(p.encoding, encoding, "{name}: detected encoding");
        assert_eq!(example_bytes(name).len(), len, "{name}: size");
        let Header::BsdOld(h) = p.header else {
            panic!("{name}: expected an old BSD header, got {:?}", p.header);
        };
        assert_eq!(h.header_size, header_size, "{name}: header size");
        let hs = histograms(&p);
        assert_eq!(hs[0].bins, BINS, "{name}: bins");
        assert_eq!((hs[0].low_pc, hs[0].high_pc), (0x11e0, 0x1240));
        assert_eq!(arcs(&p), ARCS, "{name}: arcs");
    }
}

#[test]
fn old_bsd_24_byte_header_read_as_20_gains_two_zero_bins() {
    // spec/bsd.md: "a 24-byte file read as a 20-byte one gains two leading zero bins".
    let opts = ReadOptions::new()
        .with_variant(Variant::BsdOld)
        .with_endian(Endian::Little)
        .with_ptr_width(PtrWidth::Eight)
        .with_bsd_old_header_size(20);
    let p = gmon_format::read_with(&example_bytes("bsd-old-le64-pad24.gmon"), &opts)
        .expect("the 24-byte file also parses with a 20-byte header");
    let hs = histograms(&p);
    assert_eq!(hs[0].bins.len(), 26);
    assert_eq!(hs[0].bins[..2], [0, 0]);
    assert_eq!(hs[0].bins[2..], BINS);
    assert_eq!(arcs(&p), ARCS);
}

// ---------------------------------------------------------------------------------------------
// What the spec says GNU gprof does with the examples

const GPROF: &str = "/usr/bin/gprof";

/// Says that a check could not run, past the harness's capture; a failure under
/// `GMON_TEST_NO_SKIP` (set by `.ci/run`). The same rule as the other crates' `common::skip`.
fn skip(why: &str) {
    use std::io::Write;
    if std::env::var_os("GMON_TEST_NO_SKIP").is_some_and(|v| !v.is_empty()) {
        panic!("SKIPPED spec_examples: {why} (GMON_TEST_NO_SKIP is set, so a skip fails)");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED spec_examples: {why}");
}

fn gprof_available() -> bool {
    if Path::new(GPROF).exists() {
        true
    } else {
        skip(&format!(
            "{GPROF} is not installed: the spec's claims about GNU gprof are unchecked"
        ));
        false
    }
}

/// `gprof ARGS…` → (exit code, stdout).
fn gprof(args: &[&Path]) -> (i32, String) {
    let out = Command::new(GPROF)
        .env("LC_ALL", "C")
        .arg("-b")
        .args(args)
        .output()
        .expect("run gprof");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn ties_prog() -> PathBuf {
    repo().join("testdata/cases/ties-pie-O0/prog")
}

#[test]
fn gprof_reads_every_encoding_and_layout_alike() {
    if !gprof_available() {
        return;
    }
    let ex = examples_dir();
    let (code, reference) = gprof(&[&ties_prog(), &ex.join("gnu-le64.gmon")]);
    assert_eq!(code, 0);
    assert!(
        reference.contains("100.00      0.46     0.46    10000"),
        "{reference}"
    );
    for (image, file) in [
        ("ties-le64.elf", "gnu-le64.gmon"),
        ("ties-be64.elf", "gnu-be64.gmon"),
        ("ties-le32.elf", "gnu-le32.gmon"),
        ("ties-be32.elf", "gnu-be32.gmon"),
        ("ties-be32.elf", "bsd44-be32.gmon"),
        ("ties-le32.elf", "bsd-old-le32.gmon"),
        ("ties-le64.elf", "bsd44-le64.gmon"),
        ("ties-le64.elf", "bsd-old-le64.gmon"),
    ] {
        let (code, out) = gprof(&[&ex.join(image), &ex.join(file)]);
        assert_eq!(code, 0, "{image} {file}");
        assert_eq!(out, reference, "gprof {image} {file}");
    }
    for file in ["bsd44-le64.gmon", "bsd-old-le64.gmon"] {
        let (_, out) = gprof(&[&ties_prog(), &ex.join(file)]);
        assert_eq!(out, reference, "gprof prog {file}");
    }
}

#[test]
fn gprof_observations_stated_in_the_spec() {
    if !gprof_available() {
        return;
    }
    let ex = examples_dir();
    let prog = ties_prog();
    // gnu.md: combining records.
    let (code, out) = gprof(&[&prog, &ex.join("gnu-le64-combine.gmon")]);
    assert_eq!(code, 0);
    assert!(out.contains("100.00      0.48     0.48     5000"), "{out}");
    // gnu.md: header only.
    let (code, out) = gprof(&[&prog, &ex.join("gnu-header-only.gmon")]);
    assert_eq!((code, out.as_str()), (0, ""));
    // gnu.md: arcs without a histogram.
    let (code, out) = gprof(&[&prog, &ex.join("gnu-le64-arc.gmon")]);
    assert_eq!(code, 0);
    assert!(
        out.contains("-nan    -nan    5000/5000        tie_a [9]"),
        "{out}"
    );
    // bsd.md: the 24-byte old header misread by GNU gprof.
    let (_, out) = gprof(&[&prog, &ex.join("bsd-old-le64-pad24.gmon")]);
    assert!(out.contains("105.98      0.49     0.49"), "{out}");
    // bsd.md: partial last arc ignored.
    let (code, out) = gprof(&[&prog, &ex.join("bsd44-le64-partial.gmon")]);
    assert_eq!(code, 0);
    assert!(out.contains("100.00      0.46     0.46     5000"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// testdata/variants/: real profiles converted by `gmon convert` (made by testdata/variants.sh)

fn variants_dir() -> PathBuf {
    repo().join("testdata").join("variants")
}

/// The layout and encoding a variant file's name promises, e.g. `bsd-old-be32.gmon`.
fn variant_of(name: &str) -> (Variant, Encoding) {
    let stem = name.strip_suffix(".gmon").unwrap_or(name);
    let (layout, enc) = stem.rsplit_once('-').unwrap_or((stem, ""));
    let variant = match layout {
        "gnu" => Variant::Gnu,
        "bsd44" => Variant::Bsd44,
        "bsd-old" => Variant::BsdOld,
        other => panic!("{name}: unknown layout {other}"),
    };
    let encoding = match enc {
        "le64" => Encoding::LITTLE_64,
        "be64" => Encoding::BIG_64,
        "le32" => Encoding::LITTLE_32,
        "be32" => Encoding::BIG_32,
        other => panic!("{name}: unknown encoding {other}"),
    };
    (variant, encoding)
}

/// `(case directory, variant file)` for every converted profile.
fn variant_files() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let Ok(cases) = fs::read_dir(variants_dir()) else {
        return out;
    };
    for case in cases.flatten() {
        let Ok(files) = fs::read_dir(case.path()) else {
            continue;
        };
        for f in files.flatten() {
            if f.path().extension().is_some_and(|e| e == "gmon") {
                out.push((case.path(), f.path()));
            }
        }
    }
    out.sort();
    out
}

fn original_of(case_dir: &Path) -> PathBuf {
    let case = case_dir.file_name().expect("a case directory name");
    repo().join("testdata").join("cases").join(case)
}

#[test]
fn converted_variants_read_back_to_the_original_bytes() {
    let files = variant_files();
    assert!(
        files.len() >= 80,
        "testdata/variants holds only {} files",
        files.len()
    );
    for (case_dir, file) in files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let (variant, encoding) = variant_of(name);
        let original = fs::read(original_of(&case_dir).join("gmon.out")).expect("original");
        let bytes = fs::read(&file).expect("variant");
        let opts = ReadOptions::new()
            .with_variant(variant)
            .with_endian(encoding.endian)
            .with_ptr_width(encoding.ptr_width);
        let p = gmon_format::read_with(&bytes, &opts)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(p.header.variant(), variant, "{}", file.display());
        assert_eq!(p.encoding, encoding, "{}", file.display());
        // Every glibc profile survives the trip: same histogram, same arcs in the same order.
        let back = p
            .convert_to(Variant::Gnu, Encoding::LITTLE_64)
            .and_then(|g| gmon_format::to_vec(&g))
            .unwrap_or_else(|e| panic!("{}: back to GNU: {e}", file.display()));
        assert!(
            back == original,
            "{}: converting back does not give gmon.out",
            file.display()
        );
    }
}

#[test]
fn gprof_reports_converted_bsd_files_like_the_original() {
    if !gprof_available() {
        return;
    }
    let mut compared = 0;
    for (case_dir, file) in variant_files() {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        // gprof reads a profile with the executable's encoding: x86-64, little-endian 64-bit.
        if variant_of(name).1 != Encoding::LITTLE_64 {
            continue;
        }
        let case = original_of(&case_dir);
        let prog = case.join("prog");
        let (code_a, want) = gprof(&[&prog, &case.join("gmon.out")]);
        let (code_b, got) = gprof(&[&prog, &file]);
        assert_eq!(code_b, code_a, "{}: exit status", file.display());
        assert!(
            got == want,
            "{}: gprof -b report differs from gmon.out's",
            file.display()
        );
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} BSD files compared");
}

#[test]
fn shobj_profile_is_recognised_and_refused() {
    // spec/gnu.md, "Not a gmon.out": version 0x1ffff at offset 4.
    let bytes = example_bytes("gnu-shobj-le64.profile");
    assert_eq!(bytes.len(), 120);
    match gmon_format::read(&bytes) {
        Err(gmon_format::Error::NotSupported { offset, what }) => {
            assert_eq!(offset, 4);
            assert!(what.contains("LD_PROFILE"), "{what}");
        }
        other => panic!("expected NotSupported, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// spec/glibc.md's structural claims, on every real profile of testdata/cases/

fn le_u16(b: &[u8], at: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

fn le_u32(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(
        b[at..at + 4].try_into().expect("4 bytes"),
    ))
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// `(e_type, value of the symbol etext)` of a little-endian ELF64 executable.
fn elf_type_and_etext(elf: &[u8]) -> (u64, u64) {
    assert_eq!(&elf[..6], b"\x7fELF\x02\x01", "an ELF64 little-endian file");
    let e_type = le_u16(elf, 16);
    let shoff = le_u64(elf, 0x28) as usize;
    let shentsize = le_u16(elf, 0x3a) as usize;
    let shnum = le_u16(elf, 0x3c) as usize;
    let section = |i: usize| shoff + i * shentsize;
    for i in 0..shnum {
        let sh = section(i);
        if le_u32(elf, sh + 4) != 2 {
            continue; // not SHT_SYMTAB
        }
        let (off, size, link) = (
            le_u64(elf, sh + 0x18) as usize,
            le_u64(elf, sh + 0x20) as usize,
            le_u32(elf, sh + 0x28) as usize,
        );
        let strtab = le_u64(elf, section(link) + 0x18) as usize;
        for sym in (off..off + size).step_by(24) {
            let name = strtab + le_u32(elf, sym) as usize;
            if elf[name..].starts_with(b"etext\0") {
                return (e_type, le_u64(elf, sym + 8));
            }
        }
    }
    panic!("no etext symbol");
}

#[test]
fn glibc_profiles_have_the_shape_the_spec_describes() {
    let cases = repo().join("testdata").join("cases");
    let mut checked = 0;
    let mut dirs: Vec<PathBuf> = fs::read_dir(&cases)
        .expect("testdata/cases exists")
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let (e_type, etext) = elf_type_and_etext(&fs::read(dir.join("prog")).expect("prog"));
        let mut profiles: Vec<PathBuf> = fs::read_dir(&dir)
            .expect("case dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                n.starts_with("gmon") && n.ends_with(".out")
            })
            .collect();
        profiles.sort();
        for path in profiles {
            let what = path.display().to_string();
            let p = gmon_format::read(&fs::read(&path).expect("profile"))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(p.encoding, Encoding::LITTLE_64, "{what}");
            assert_eq!(gnu_version(&p), 1, "{what}");
            // One histogram record, first; then only arcs.
            let Some((Record::Histogram(h), rest)) = p.records.split_first() else {
                panic!("{what}: the first record is not a histogram");
            };
            assert!(
                rest.iter().all(|r| matches!(r, Record::CallArc(_))),
                "{what}: only arcs"
            );
            // Range: low_pc 0 for PIE (ET_DYN), 0x400000 otherwise; high_pc = etext rounded up.
            let expected_low = if e_type == 3 { 0 } else { 0x40_0000 };
            assert_eq!(h.low_pc, expected_low, "{what}: low_pc");
            assert_eq!(h.high_pc, etext.div_ceil(4) * 4, "{what}: high_pc");
            // Bins: textsize / 2 bytes rounded up to 8, two bytes per bin; scale below 2.
            let textsize = h.high_pc - h.low_pc;
            assert_eq!(
                h.bins.len() as u64,
                (textsize / 2).div_ceil(8) * 8 / 2,
                "{what}"
            );
            assert!(
                h.scale() < 2.0 && h.scale() > 1.99,
                "{what}: scale {}",
                h.scale()
            );
            assert_eq!(h.prof_rate.0, 100, "{what}");
            assert_eq!(h.dimension.name_str(), "seconds", "{what}");
            // Arcs: callers in 16-byte buckets from low_pc, ascending.
            let froms: Vec<u64> = p.arcs().map(|a| a.from_pc).collect();
            assert!(
                froms.iter().all(|f| (f - h.low_pc) % 16 == 0),
                "{what}: buckets"
            );
            assert!(froms.windows(2).all(|w| w[0] <= w[1]), "{what}: arc order");
            assert!(
                p.arcs()
                    .all(|a| a.self_pc >= h.low_pc && a.self_pc < h.high_pc)
            );
            checked += 1;
        }
    }
    assert!(checked >= 38, "only {checked} profiles checked");
}

// ---------------------------------------------------------------------------------------------
// testdata/spec/manifest.tsv: what a reader must make of every file (spec/gmon-out.md,
// "Implementing a reader")

/// One manifest row.
struct Expectation {
    file: String,
    options: String,
    result: String,
    offset: String,
    ambiguous: String,
    less_plausible: String,
}

fn manifest() -> Vec<Expectation> {
    let text = fs::read_to_string(examples_dir().join("manifest.tsv")).expect("manifest.tsv");
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "manifest line {line:?}");
        rows.push(Expectation {
            file: f[0].to_string(),
            options: f[1].to_string(),
            result: f[2].to_string(),
            offset: f[3].to_string(),
            ambiguous: f[4].to_string(),
            less_plausible: f[5].to_string(),
        });
    }
    rows
}

fn options_of(spec: &str) -> ReadOptions {
    let mut o = ReadOptions::new();
    if spec == "-" {
        return o;
    }
    for item in spec.split(',') {
        let (key, value) = item.split_once('=').expect("key=value");
        match (key, value) {
            ("variant", "gnu") => o = o.with_variant(Variant::Gnu),
            ("variant", "bsd44") => o = o.with_variant(Variant::Bsd44),
            ("variant", "bsd-old") => o = o.with_variant(Variant::BsdOld),
            ("endian", "little") => o = o.with_endian(Endian::Little),
            ("endian", "big") => o = o.with_endian(Endian::Big),
            ("ptr-width", "4") => o = o.with_ptr_width(PtrWidth::Four),
            ("ptr-width", "8") => o = o.with_ptr_width(PtrWidth::Eight),
            ("header-size", n) => o = o.with_bsd_old_header_size(n.parse().expect("a size")),
            _ => panic!("unknown manifest option {item}"),
        }
    }
    o
}

/// A reading in the manifest's words: "VARIANT ENDIAN WIDTH [HEADER]".
fn reading_words(r: &gmon_format::read::Reading) -> String {
    let endian = match r.encoding.endian {
        Endian::Little => "le",
        Endian::Big => "be",
    };
    let mut s = format!("{} {endian} {}", r.variant, r.encoding.ptr_width.bytes());
    if let Some(h) = r.header_size {
        s.push_str(&format!(" {h}"));
    }
    s
}

fn reading_list(rs: &[gmon_format::read::Reading]) -> String {
    if rs.is_empty() {
        "-".to_string()
    } else {
        rs.iter().map(reading_words).collect::<Vec<_>>().join(";")
    }
}

#[test]
fn every_manifest_row_is_what_the_reader_makes_of_its_file() {
    let rows = manifest();
    assert!(rows.len() >= 50, "only {} manifest rows", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let bytes = example_bytes(&row.file);
        let got = match gmon_format::read::read_detailed(&bytes, &options_of(&row.options)) {
            Ok(d) => (
                reading_words(&d.reading),
                "-".to_string(),
                reading_list(&d.ambiguous),
                reading_list(&d.less_plausible),
            ),
            Err(e) => (
                e.class().to_string(),
                format!("{:#x}", e.offset().expect("a read error has an offset")),
                "-".to_string(),
                "-".to_string(),
            ),
        };
        let want = (
            row.result.clone(),
            row.offset.clone(),
            row.ambiguous.clone(),
            row.less_plausible.clone(),
        );
        if got != want {
            failures.push(format!(
                "{} [{}]: got {got:?}, the manifest says {want:?}",
                row.file, row.options
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_file_of_testdata_spec_is_in_the_manifest() {
    let listed: BTreeSet<String> = manifest().into_iter().map(|r| r.file).collect();
    for (dir, prefix) in [
        (examples_dir(), ""),
        (examples_dir().join("rules"), "rules/"),
    ] {
        for entry in fs::read_dir(&dir)
            .expect("a testdata/spec directory")
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".gmon") || name.ends_with(".profile") {
                let rel = format!("{prefix}{name}");
                assert!(listed.contains(&rel), "{rel} is missing from manifest.tsv");
            }
        }
    }
}

/// The spec states every expectation: a line of spec/*.md names the file (`` `FILE` ``), its
/// forced options unless none, the result, and the offset of an error, each in backticks.
#[test]
fn the_spec_states_every_manifest_row() {
    let mut text = String::new();
    for entry in fs::read_dir(spec_dir()).expect("spec/").flatten() {
        if entry.path().extension().is_some_and(|e| e == "md") {
            text.push_str(&fs::read_to_string(entry.path()).expect("a spec document"));
        }
    }
    let mut missing = Vec::new();
    for row in manifest() {
        let name = row.file.rsplit('/').next().unwrap_or(&row.file).to_string();
        let mut needles = vec![format!("`{name}`"), format!("`{}`", row.result)];
        if row.options != "-" {
            needles.push(format!("`{}`", row.options));
        }
        if row.offset != "-" {
            needles.push(format!("`{}`", row.offset));
        }
        for list in [&row.ambiguous, &row.less_plausible] {
            if list != "-" {
                needles.push(format!("`{list}`"));
            }
        }
        if !text
            .lines()
            .any(|l| needles.iter().all(|n| l.contains(n.as_str())))
        {
            missing.push(format!("{} [{}]: {needles:?}", row.file, row.options));
        }
    }
    assert!(
        missing.is_empty(),
        "no spec line states these rows:\n{}",
        missing.join("\n")
    );
}
