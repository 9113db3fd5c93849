//! A program whose samples are spread over a large text: each process writes one histogram
//! record per sampled cell of a fixed grid (spec/runtime.md §1), not one record over the whole
//! text. GNU gprof, `gprof -s`, `gmon merge`, `gmon convert` and every view read those records as
//! they read one record of the same counts.

use std::path::{Path, PathBuf};
use std::process::Command;

use gmon_format::{Histogram, Profile, Record};

use crate::record::{compile_c, gmon_cmd, text};
use crate::runtime_common;

/// 128 functions, each aligned to 4 KiB (512 KiB of text: bins of exactly 4 bytes, spec/runtime.md
/// §4.3); `spread A B` burns 4 ms of CPU in each of `f[A..B)`.
fn spread_source() -> String {
    let mut s = String::from(
        r#"
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
#define F(n)                                                                        \
    __attribute__((noinline, aligned(4096))) void f##n(double s) {                  \
        double t0 = cpu();                                                          \
        unsigned long x = n + 1;                                                    \
        while (cpu() - t0 < s)                                                      \
            for (int i = 0; i < 2000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; } \
        sink = x;                                                                   \
    }
"#,
    );
    for n in 0..128 {
        s.push_str(&format!("F({n})\n"));
    }
    s.push_str("static void (*const fs[])(double) = {");
    for n in 0..128 {
        s.push_str(&format!("f{n}, "));
    }
    s.push_str(
        "};\nint main(int argc, char **argv) {\n    int a = atoi(argv[1]), b = atoi(argv[2]);\n    \
         for (int i = a; i < b; i++) fs[i](0.004);\n    return 0;\n}\n",
    );
    s
}

/// Records `prog A B` into `out`.
fn record_spread(prog: &Path, out: &Path, a: u32, b: u32) {
    let run = gmon_cmd()
        .args(["record", "--hz", "1000", "-o"])
        .arg(out)
        .arg("--")
        .arg(prog)
        .args([a.to_string(), b.to_string()])
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "gmon record: {}", text(&run));
}

fn read(path: &Path) -> Profile {
    gmon_format::read(&std::fs::read(path).expect("gmon.out")).expect("a valid gmon.out")
}

fn histograms(p: &Profile) -> Vec<&Histogram> {
    p.histograms().collect()
}

/// `p`'s histogram records as one record over the range they span (zeros between them).
fn as_one_record(p: &Profile) -> Profile {
    let hists = histograms(p);
    let low = hists.iter().map(|h| h.low_pc).min().expect("a histogram");
    let high = hists.iter().map(|h| h.high_pc).max().expect("a histogram");
    let mut bins = vec![0u64; ((high - low) / 4) as usize];
    for h in &hists {
        let at = ((h.low_pc - low) / 4) as usize;
        for (b, &c) in bins[at..].iter_mut().zip(&h.bins) {
            *b += c;
        }
    }
    let mut one = Profile::new_gnu(p.encoding);
    one.records.push(Record::Histogram(Histogram {
        low_pc: low,
        high_pc: high,
        bins,
        ..hists[0].clone()
    }));
    one
}

/// Runs `cmd` (in `dir`) and returns its stdout; it must succeed.
fn stdout_of(cmd: &mut Command, dir: &Path) -> String {
    let out = cmd.current_dir(dir).output().expect("run");
    assert!(out.status.success(), "{cmd:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn gnu_gprof(args: &[&Path], dir: &Path) -> String {
    stdout_of(Command::new("gprof").arg("-b").arg("-p").args(args), dir)
}

#[test]
fn a_widely_sampled_program_writes_its_sampled_cells_which_every_reader_sums() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let prog = compile_c(d, "spread", &spread_source(), &["-O1"]);
    let (a, b) = (d.join("a.out"), d.join("b.out"));
    record_spread(&prog, &a, 0, 96);
    record_spread(&prog, &b, 32, 128);

    // Records on one grid: 2 KiB of text (512 bins) each, aligned alike in both processes, so
    // that a range of one is a range of the other or meets none of it.
    let (pa, pb) = (read(&a), read(&b));
    let (ha, hb) = (histograms(&pa), histograms(&pb));
    assert!(ha.len() >= 20, "{} records", ha.len());
    let origin = ha[0].low_pc;
    for h in ha.iter().chain(&hb) {
        assert!(h.bins.len() <= 512, "{} bins", h.bins.len());
        assert_eq!(h.high_pc - h.low_pc, 4 * h.bins.len() as u64);
        assert_eq!(h.low_pc.abs_diff(origin) % 2048, 0, "{:#x}", h.low_pc);
    }
    for x in &ha {
        for y in &hb {
            let same = (x.low_pc, x.high_pc) == (y.low_pc, y.high_pc);
            assert!(same || x.high_pc <= y.low_pc || y.high_pc <= x.low_pc);
        }
    }
    let shared = ha
        .iter()
        .filter(|x| {
            hb.iter()
                .any(|y| (x.low_pc, x.high_pc) == (y.low_pc, y.high_pc))
        })
        .count();
    assert!(shared >= 10, "{shared} ranges in both");
    // One record of all the bins, as before: 2 bytes per 4 bytes of the 512 KiB of text.
    let len = std::fs::metadata(&a).expect("a.out").len();
    assert!(len < 256 * 1024 / 2, "{len} bytes");

    // The same counts as one record, without a sidecar; and a copy of a.out without one.
    let (s, f) = (d.join("s"), d.join("f"));
    for sub in [&s, &f] {
        std::fs::create_dir(sub).expect("mkdir");
    }
    std::fs::copy(&a, s.join("p.out")).expect("copy");
    let one = gmon_format::to_vec(&as_one_record(&pa)).expect("encode");
    std::fs::write(f.join("p.out"), one).expect("write");
    let (sparse, full) = (s.join("p.out"), f.join("p.out"));
    // pprof takes the run's time from the file's: the same for both.
    let when = std::fs::metadata(&a)
        .and_then(|m| m.modified())
        .expect("mtime");
    for p in [&sparse, &full] {
        let file = std::fs::File::options().write(true).open(p).expect("open");
        file.set_modified(when).expect("set the time");
    }

    // Every view draws the same from both.
    let views: [&[&str]; 5] = [
        &["flame", "--folded"],
        &["callgrind", "-o", "-"],
        &["pprof", "-o", "-"],
        &["report", "-o", "-"],
        &["gprof", "-b"],
    ];
    for view in views {
        // Run in each file's directory, so that the name the output records is the same.
        let of = |dir: &Path| stdout_of(gmon_cmd().args(view).arg(&prog).arg("p.out"), dir);
        assert_eq!(of(&s), of(&f), "gmon {view:?}");
    }
    let dump = stdout_of(gmon_cmd().arg("dump").arg(&sparse), d);
    assert_eq!(dump.matches("histogram").count(), ha.len(), "{dump}");
    let diff = stdout_of(gmon_cmd().arg("diff").arg(&prog).arg(&sparse).arg(&full), d);
    assert!(diff.contains("\n0 changes.\n"), "{diff}");

    // gmon merge sums the two processes' records range by range.
    let merged = d.join("m.out");
    stdout_of(
        gmon_cmd()
            .arg("merge")
            .arg(&a)
            .arg(&b)
            .arg("-o")
            .arg(&merged),
        d,
    );
    let total = |p: &Profile| p.histograms().map(Histogram::total).sum::<u64>();
    assert_eq!(total(&read(&merged)), total(&pa) + total(&pb));

    if Command::new("gprof").arg("--version").output().is_err() {
        runtime_common::skip(
            "record_sparse",
            "GNU gprof is not installed: records not compared with it",
        );
        return;
    }
    // GNU gprof: the records read as one record of the same counts, and as gmon gprof reads
    // them.
    let flat = gnu_gprof(&[&prog, &sparse], d);
    assert!(flat.contains("f40"), "{flat}");
    assert_eq!(flat, gnu_gprof(&[&prog, &full], d));
    let ours = stdout_of(
        gmon_cmd()
            .args(["gprof", "-b", "-p"])
            .arg(&prog)
            .arg(&sparse),
        d,
    );
    assert_eq!(ours, flat);
    // A BSD file holds one histogram: gmon convert joins the cells into it.
    let bsd = d.join("p.bsd");
    stdout_of(
        gmon_cmd()
            .args(["convert", "--to", "bsd44", "-o"])
            .arg(&bsd)
            .arg(&sparse),
        d,
    );
    assert_eq!(gnu_gprof(&[&prog, &bsd], d), flat);
    // `gprof -s` of the two processes sums what gmon merge sums.
    stdout_of(
        Command::new("gprof").arg("-s").arg(&prog).arg(&a).arg(&b),
        d,
    );
    let summed = gnu_gprof(&[&prog, &d.join("gmon.sum")], d);
    assert_eq!(summed, gnu_gprof(&[&prog, &merged], d));
    let ours = stdout_of(
        gmon_cmd()
            .args(["gprof", "-b", "-p"])
            .arg(&prog)
            .arg(&a)
            .arg(&b),
        d,
    );
    assert_eq!(ours, summed);
}

/// A profile with no sample at all is the grid's first cell, empty: GNU gprof says of it what
/// it says of one empty record over the whole text.
#[test]
fn an_empty_sparse_profile_reads_as_an_empty_whole_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let prog = compile_c(d, "spread", &spread_source(), &["-O1"]);
    let hist = |low: u64, n: usize| Histogram {
        low_pc: low,
        high_pc: low + 4 * n as u64,
        prof_rate: gmon_format::ProfRate(1000),
        dimension: gmon_format::Dimension::SECONDS,
        bins: vec![0; n],
    };
    let write = |name: &str, h: Histogram| -> PathBuf {
        let mut p = Profile::new_gnu(gmon_format::Encoding::LITTLE_64);
        p.records.push(Record::Histogram(h));
        let path = d.join(name);
        std::fs::write(&path, gmon_format::to_vec(&p).expect("encode")).expect("write");
        path
    };
    let cell = write("cell.out", hist(0x1000, 512));
    let whole = write("whole.out", hist(0x1000, 131_072));
    if Command::new("gprof").arg("--version").output().is_err() {
        runtime_common::skip("record_sparse", "GNU gprof is not installed");
        return;
    }
    let flat = gnu_gprof(&[&prog, &cell], d);
    assert_eq!(flat, gnu_gprof(&[&prog, &whole], d));
    let ours = stdout_of(
        gmon_cmd().args(["gprof", "-b", "-p"]).arg(&prog).arg(&cell),
        d,
    );
    assert_eq!(ours, flat);
}

/// A small program (its text far under 384 KiB, not a multiple of 16 bytes) recorded: every bin
/// is 4 bytes (gprof scale exactly 2, spec/runtime.md §4.3), so GNU gprof credits each function
/// the samples its bins hold. With glibc's rounding to 4 the scale was 1.971 here and GNU gprof
/// gave `leaf` 101.45% of the time.
#[test]
fn a_small_programs_bins_are_four_bytes_and_gnu_gprof_credits_no_more_than_was_sampled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let prog = compile_c(
        d,
        "small",
        r#"
#include <stdio.h>
__attribute__((noinline)) long leaf(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i % 7; return s; }
__attribute__((noinline)) long mid_a(long n) { return leaf(n) + leaf(n / 2); }
__attribute__((noinline)) long mid_b(long n) { return leaf(3 * n); }
int main(void) {
    long t = 0;
    for (int k = 0; k < 20; k++) { t += mid_a(2000000); t += mid_b(2000000); }
    printf("%ld\n", t);
    return 0;
}
"#,
        &["-O2", "-g"],
    );
    let out = d.join("small.out");
    let run = gmon_cmd()
        .args(["record", "--hz", "1000", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "gmon record: {}", text(&run));
    let p = read(&out);
    let hists = histograms(&p);
    assert!(!hists.is_empty(), "no histogram");
    let ticks: u64 = hists.iter().flat_map(|h| h.bins.iter()).sum();
    assert!(ticks >= 100, "{ticks} ticks");
    for h in &hists {
        assert_eq!(
            h.high_pc - h.low_pc,
            4 * h.bins.len() as u64,
            "{:#x}..{:#x} over {} bins is not 4 bytes a bin",
            h.low_pc,
            h.high_pc,
            h.bins.len()
        );
    }
    if Command::new("gprof").arg("--version").output().is_err() {
        runtime_common::skip("record_sparse", "GNU gprof is not installed");
        return;
    }
    let flat = gnu_gprof(&[&prog, &out], d);
    // The flat profile's "% time" column: every row below the two header lines.
    let percent: f64 = flat
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("time"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .sum();
    // At most 100% (what rounding to two decimals allows); a tick in code no symbol covers
    // may leave it a little under.
    assert!(
        (90.0..=100.01).contains(&percent),
        "GNU gprof's shares add up to {percent}%:\n{flat}"
    );
}
