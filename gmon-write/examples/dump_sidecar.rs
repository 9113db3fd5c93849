//! Prints a gmon-write sidecar file (`gmon.out.gmonx`) in a readable form.
//!
//! `cargo run -p gmon-write --example dump_sidecar -- gmon.out.gmonx`

#![deny(clippy::undocumented_unsafe_blocks)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: dump_sidecar FILE.gmonx");
        return ExitCode::FAILURE;
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}: {e}", path.to_string_lossy());
            return ExitCode::FAILURE;
        }
    };
    let sidecar = match gmon_format::read_sidecar(&bytes) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{}: {e}", path.to_string_lossy());
            return ExitCode::FAILURE;
        }
    };
    println!(
        "writer {}  rate {} Hz  pid {}",
        sidecar.writer, sidecar.rate_hz, sidecar.pid
    );
    println!("counters {:?}", sidecar.counters);
    for o in &sidecar.objects {
        println!(
            "object {} bias {:#x} flags {} build-id {} ranges {:x?}",
            o.path,
            o.load_bias,
            o.flags,
            o.build_id_hex(),
            o.ranges
                .iter()
                .map(|r| (r.start, r.end))
                .collect::<Vec<_>>()
        );
    }
    for s in &sidecar.pc_samples {
        let (obj, addr) = sidecar
            .resolve(s.pc)
            .map_or(("?", 0), |(o, a)| (o.path.as_str(), a));
        println!("pc {:#x} {} ({obj}+{addr:#x})", s.pc, s.count);
    }
    for s in &sidecar.stacks {
        println!("stack {} {:x?}", s.count, s.pcs);
    }
    for t in &sidecar.threads {
        println!("thread {} {}", t.tid, t.samples);
    }
    println!("gmon link {:?}", sidecar.gmon);
    ExitCode::SUCCESS
}
