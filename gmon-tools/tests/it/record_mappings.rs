//! What the sidecar says beyond the loader's list (spec/runtime.md §5.13, §5.14): code run
//! from a second mapping of an object's file is named from that object, and unwound with its
//! CFI (V8 maps node's builtins a second time; they came out `[unknown]`, issue 27, record/03),
//! and a summed profile says
//! how many processes and threads it holds, through `gmon record`, `gmon merge`, `gmon dump`
//! and the report's header.

use std::path::Path;

use crate::record::{compile_c, gmon_cmd, text};
use crate::runtime_common::read_sidecar;

/// Maps the page that holds `spin` a second time, from its own file (as V8 does), and spends
/// half a second of CPU in the copy; prints the copy's address. With an argument, unmaps the
/// copy before it ends (as node does with its builtins' copy).
const SECOND_COPY: &str = r#"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
/* Registers only: it runs the same from any copy of its page. */
__attribute__((noinline, aligned(4096))) long spin(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) { x = x * 31 + i; __asm__ volatile("" : "+r"(x)); }
    return x;
}
int main(int argc, char **argv) {
    (void)argv;
    uintptr_t f = (uintptr_t)spin, page = f & ~(uintptr_t)4095;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    long off = -1;
    unsigned long s, e, o;
    char perms[8];
    while (maps && fgets(line, sizeof line, maps))
        if (sscanf(line, "%lx-%lx %7s %lx", &s, &e, perms, &o) == 4 && s <= f && f < e) {
            off = (long)(o + (page - s));
            break;
        }
    int fd = open("/proc/self/exe", O_RDONLY);
    void *copy = mmap(0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off);
    if (off < 0 || copy == MAP_FAILED) { perror("mmap"); return 1; }
    long (*again)(long) = (long (*)(long))((char *)copy + (f - page));
    printf("copy %#lx\n", (unsigned long)copy);
    fflush(stdout);
    double t0 = cpu();
    long r = 0;
    while (cpu() - t0 < 0.5) r += again(1000000);
    if (argc > 1) munmap(copy, 4096);
    return (int)(r & 0);
}
"#;

/// The `gmon flame --folded` lines of `profile`: (stack, count).
fn folded(profile: &Path) -> Vec<(String, u64)> {
    let o = gmon_cmd()
        .args(["flame", "--folded"])
        .arg(profile)
        .output()
        .expect("run gmon flame");
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((stack.to_owned(), n.parse().ok()?))
        })
        .collect()
}

#[test]
fn code_run_from_a_second_mapping_of_the_executable_is_named_from_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(
        dir.path(),
        "copy",
        SECOND_COPY,
        &["-O1", "-fno-omit-frame-pointer"],
    );
    // Still mapped when the profile is written, and unmapped before: the runtime remembers it.
    second_mapping_named(&prog, &dir.path().join("kept.out"), &[]);
    second_mapping_named(&prog, &dir.path().join("unmapped.out"), &["unmap"]);
}

/// Records `prog ARGS` into `out` and checks that the copy's samples are named `spin`.
fn second_mapping_named(prog: &Path, out: &Path, args: &[&str]) {
    let out = out.to_path_buf();
    let run = gmon_cmd()
        .args(["record", "-o"])
        .arg(&out)
        .arg("--")
        .arg(prog)
        .args(args)
        .output()
        .expect("run gmon record");
    assert!(run.status.success(), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let copy = stdout
        .lines()
        .find_map(|l| l.strip_prefix("copy 0x"))
        .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        .unwrap_or_else(|| panic!("no copy address: {}", text(&run)));

    // The sidecar lists the copy as a mapping of the executable, at the file offset it maps.
    let sidecar = read_sidecar(&out);
    let main = sidecar
        .objects
        .iter()
        .position(|o| o.is_main())
        .expect("main object");
    let m = sidecar
        .mappings
        .iter()
        .find(|m| m.range.start == copy)
        .unwrap_or_else(|| panic!("no mapping at {copy:#x}: {:x?}", sidecar.mappings));
    assert_eq!(m.object as usize, main);
    assert_eq!(m.range.end - m.range.start, 4096);
    let in_copy: u64 = sidecar
        .pc_samples
        .iter()
        .filter(|p| m.range.contains(p.pc))
        .map(|p| p.count)
        .sum();
    assert!(
        in_copy * 2 > sidecar.counters.samples,
        "{in_copy} of {} samples in the copy",
        sidecar.counters.samples
    );

    // Every view names them `spin`: the flame graph's leaves, `[unknown]` for none of them.
    let stacks = folded(&out);
    let total: u64 = stacks.iter().map(|s| s.1).sum();
    let leaf = |name: &str| -> u64 {
        stacks
            .iter()
            .filter(|(s, _)| s.rsplit(';').next() == Some(name))
            .map(|s| s.1)
            .sum()
    };
    assert!(
        leaf("spin") * 2 > total && leaf("[unknown]") * 10 < total,
        "spin {} and [unknown] {} of {total}: {stacks:?}",
        leaf("spin"),
        leaf("[unknown]")
    );

    // The copy unwinds with the executable's CFI: its callers are there (without, the frame
    // of `main` was lost in every stack). Ticks before the watcher first read the maps (10 ms)
    // go without.
    let under_main: u64 = stacks
        .iter()
        .filter(|(s, _)| s.ends_with(";main;spin"))
        .map(|s| s.1)
        .sum();
    assert!(
        under_main * 10 >= leaf("spin") * 9,
        "{under_main} of {} spin samples under main: {stacks:?}",
        leaf("spin")
    );

    // `gmon dump` of the sidecar shows the section and names the copy's samples.
    let dump = gmon_cmd()
        .arg("dump")
        .arg(gmon_format::sidecar_path(&out))
        .output()
        .expect("run gmon dump");
    assert!(dump.status.success(), "{}", text(&dump));
    let d = String::from_utf8_lossy(&dump.stdout);
    assert!(d.contains("section 9 MAPPINGS"), "{d}");
    assert!(
        d.contains(&format!("{copy:#x}-{:#x} object {main} (", copy + 4096)),
        "{d}"
    );
    assert!(
        !d.contains(&format!("{:#x} (no object)", copy + 0x10)),
        "{d}"
    );
}

/// Runs as N processes of itself (it forks N − 1 children), each spinning for a while.
const FORKS: &str = r#"
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void spin(void) { volatile long x = 0; for (long i = 0; i < 30000000; i++) x += i; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1;
    for (int i = 1; i < n; i++)
        if (fork() == 0) { spin(); return 0; }
    spin();
    while (wait(0) > 0) {}
    return 0;
}
"#;

#[test]
fn a_summed_profile_says_how_many_processes_and_threads_it_holds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile_c(dir.path(), "forks", FORKS, &[]);
    let record = |out: &Path, n: &str| {
        let run = gmon_cmd()
            .args(["record", "-o"])
            .arg(out)
            .arg("--")
            .arg(&prog)
            .arg(n)
            .output()
            .expect("run gmon record");
        assert!(run.status.success(), "{}", text(&run));
    };
    let (three, two) = (dir.path().join("three.out"), dir.path().join("two.out"));
    record(&three, "3");
    record(&two, "2");
    let count = |out: &Path| {
        read_sidecar(out)
            .processes
            .map(|c| (c.processes, c.threads))
    };
    assert_eq!(count(&three), Some((3, 3)));
    assert_eq!(count(&two), Some((2, 2)));

    // `gmon merge` sums them; `gmon dump` shows the count.
    let merged = dir.path().join("merged.out");
    let o = gmon_cmd()
        .args(["merge", "-o"])
        .arg(&merged)
        .args([&three, &two])
        .output()
        .expect("run gmon merge");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(count(&merged), Some((5, 5)));
    let dump = gmon_cmd()
        .arg("dump")
        .arg(gmon_format::sidecar_path(&merged))
        .output()
        .expect("run gmon dump");
    let d = String::from_utf8_lossy(&dump.stdout);
    assert!(
        d.contains("section 10 PROCESSES") && d.contains("processes: 5  threads: 5"),
        "{d}"
    );

    // The report's header: the recorded executable with its 3 processes, not its first pid
    // alone.
    let html = dir.path().join("r.html");
    let o = gmon_cmd()
        .arg("report")
        .arg(&three)
        .arg("-o")
        .arg(&html)
        .output()
        .expect("run gmon report");
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&html).expect("report");
    assert!(
        page.contains("\"processes\":3,\"threads\":3"),
        "no process count in the page's data"
    );
}
