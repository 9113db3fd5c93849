//! A CPU-bound benchmark for `scripts/bench-runtime.sh`: sorts and hashes for a fixed amount of
//! work. With `GMON_BENCH_PROFILE=1` it runs under a 1 kHz [`gmon_write::Profiler`] (output in
//! `$GMON_BENCH_OUT`, default `gmon.out`), so the two runs measure the runtime's overhead.

#![deny(clippy::undocumented_unsafe_blocks)]

use std::hint::black_box;

#[inline(never)]
fn xorshift(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    x
}

#[inline(never)]
fn sort_round(seed: u64, n: usize) -> u64 {
    let mut s = seed | 1;
    let mut v: Vec<u64> = (0..n).map(|_| xorshift(&mut s)).collect();
    v.sort_unstable();
    v[n / 2]
}

#[inline(never)]
fn fnv_round(seed: u64, n: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for i in 0..n {
        h = (h ^ i).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn main() {
    let rounds: u64 = std::env::var("GMON_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let guard = (std::env::var("GMON_BENCH_PROFILE").as_deref() == Ok("1")).then(|| {
        let out = std::env::var("GMON_BENCH_OUT").unwrap_or_else(|_| "gmon.out".into());
        gmon_write::Profiler::new()
            .hz(1000)
            .output(out)
            .start()
            .expect("start the profiler")
    });
    let mut acc = 0u64;
    for r in 0..rounds {
        acc ^= sort_round(r, 200_000);
        acc ^= fnv_round(r, 10_000_000);
    }
    println!("{}", black_box(acc));
    if let Some(g) = guard {
        let w = g.stop().expect("write the profile");
        eprintln!("{} samples", w.samples);
    }
}
