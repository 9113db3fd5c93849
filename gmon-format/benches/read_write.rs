//! Throughput of reading (with detection) and writing, per variant, on a large synthetic profile
//! (1 Mi bins, 100 000 arcs). Run with `cargo bench -p gmon-format --bench read_write`; it prints
//! MB/s per operation. No assertions: the numbers are for the report, not for CI.

use std::hint::black_box;
use std::time::{Duration, Instant};

use gmon_format::{CallArc, Dimension, Encoding, Histogram, ProfRate, Profile, Record, Variant};

fn big_profile() -> Profile {
    let mut p = Profile::new_gnu(Encoding::LITTLE_64);
    let bins = (0..1u64 << 20).map(|i| (i * 7919) % 50).collect();
    p.records.push(Record::Histogram(Histogram {
        low_pc: 0x40_0000,
        high_pc: 0x40_0000 + (4 << 20),
        prof_rate: ProfRate(100),
        dimension: Dimension::SECONDS,
        bins,
    }));
    for i in 0..100_000u64 {
        p.records.push(Record::CallArc(CallArc {
            from_pc: 0x40_0000 + (i * 16) % (4 << 20),
            self_pc: 0x40_0000 + (i * 97) % (4 << 20),
            count: i % 1000,
        }));
    }
    p
}

/// Runs `f` repeatedly for about a second and returns the mean time per run.
fn time<F: FnMut()>(mut f: F) -> Duration {
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_secs(1) || runs < 3 {
        f();
        runs += 1;
    }
    start.elapsed() / runs
}

fn main() {
    let gnu = big_profile();
    for (name, variant, enc) in [
        ("gnu le64", Variant::Gnu, Encoding::LITTLE_64),
        ("gnu be32", Variant::Gnu, Encoding::BIG_32),
        ("bsd44 le64", Variant::Bsd44, Encoding::LITTLE_64),
        ("bsd-old be32", Variant::BsdOld, Encoding::BIG_32),
    ] {
        let p = gnu
            .convert_to(variant, enc)
            .expect("the synthetic profile converts");
        let bytes = gmon_format::to_vec(&p).expect("writes");
        let mb = bytes.len() as f64 / 1e6;
        let read = time(|| {
            black_box(gmon_format::read(black_box(&bytes)).expect("reads"));
        });
        let write = time(|| {
            black_box(gmon_format::to_vec(black_box(&p)).expect("writes"));
        });
        // The layout alone, without the read-back check (spec/gmon-out.md).
        let raw = time(|| {
            black_box(gmon_format::write::to_vec_unchecked(black_box(&p)).expect("writes"));
        });
        println!(
            "{name:<13} {mb:6.2} MB  read+detect {:8.1} MB/s ({:?})  write {:8.1} MB/s ({:?})  \
             unchecked {:8.1} MB/s",
            mb / read.as_secs_f64(),
            read,
            mb / write.as_secs_f64(),
            write,
            mb / raw.as_secs_f64(),
        );
    }
}
