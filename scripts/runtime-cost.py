#!/usr/bin/env python3
"""Where the CPU time of a recorded run goes: the program, the gmon-write runtime, gmon itself.

Usage: scripts/runtime-cost.py [--gmon PATH] [--walk fp|dwarf|none] [--freq HZ] -- CMD [ARGS...]

Runs `perf record --call-graph dwarf -- gmon record --hz 1000 -- CMD` and sorts every CPU
sample (perf's own clock, independent of the runtime's signal) into one of:

  program    the program's own work;
  handler    the runtime on the program's threads: the kernel delivering or returning from a
             signal, or expiring the CPU-time timers behind it, or an innermost frame outside
             libc in libgmon_write.so (the signal handler, the preload constructor, the exit
             write, and what they call in libc);
  threads    the runtime's own threads (gmon-watcher, gmon-unwind);
  gmon       the `gmon record` process: start, spawning, summing, naming, writing.

Why: the CPU time of one run varies by 5-10 % from the next on a shared VM, so an end-to-end
comparison needs thousands of runs to resolve 1 % (bench-runtime.sh reports it with its
confidence interval). Sorting samples of one run is precise to a fraction of a per cent. What
it cannot see: interrupt handlers (perf's clock cannot fire while interrupts are masked) and
indirect costs (caches and branch predictors disturbed by the handler, glibc's locking once a
process has more than one thread) — the end-to-end figures include those.

Needs perf (apt-get install linux-perf) and a gmon release build (default: target/release/gmon).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

SIGNAL_KERNEL = re.compile(
    r"^(arch_do_signal_or_restart|get_signal|handle_signal|setup_rt_frame|x64_setup_rt_frame|"
    r"__x64_sys_rt_sigreturn|restore_sigcontext|posix_cpu_timers_work|handle_posix_cpu_timers|"
    r"run_posix_cpu_timers|cpu_timer_fire|posixtimer_send_sigqueue|send_sigqueue|"
    r"__fpu_restore_sig|copy_fpstate_to_sigframe)$"
)
RUNTIME_THREADS = ("gmon-watcher", "gmon-unwind")
SYSTEM_LIB = re.compile(r"/(libc|libpthread|libdl|libm|ld-linux[^/]*)\.so[.0-9]*$|/ld-linux")


def samples(script_output):
    """Yields (comm, frames) per sample; frames are (symbol, dso), innermost first."""
    comm, frames = None, []
    for line in script_output.splitlines():
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif not line[0].isspace():
            comm = line.split()[0]
        else:
            m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line)
            if m:
                frames.append((re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)), m.group(2)))
    if comm is not None:
        yield comm, frames


def bucket(comm, frames):
    if comm == "gmon":
        return "gmon"
    if comm in RUNTIME_THREADS:
        return "threads"
    # The kernel's part of the sample first: delivering a signal or expiring a timer.
    if any(SIGNAL_KERNEL.match(sym) for sym, dso in frames if dso == "[kernel.kallsyms]"):
        return "handler"
    # Then the innermost user frame outside libc and the dynamic loader decides: the runtime
    # calls into libc (write, mmap), and so does the program. Frames further out do not: the
    # program's threads start in the runtime's pthread_create wrapper.
    for sym, dso in frames:
        if dso == "[kernel.kallsyms]" or SYSTEM_LIB.search(dso):
            continue
        return "handler" if dso.endswith("libgmon_write.so") else "program"
    return "program"


def measure(gmon, walk, freq, cmd, cwd=None):
    """Records `cmd` under perf and gmon record; the sample counts per bucket."""
    with tempfile.TemporaryDirectory(prefix="gmon-cost-") as tmp:
        data = os.path.join(tmp, "perf.data")
        rec = [gmon, "record", "-o", os.path.join(tmp, "rec.out"), "--hz", "1000"]
        if walk == "none":
            rec.append("--no-stacks")
        env = dict(os.environ, GMON_RECORD_UNWIND="dwarf" if walk == "dwarf" else "fp")
        # perf exits with the program's status, which need not be 0 (gmon record passes it on).
        r = subprocess.run(
            ["perf", "record", "-q", "-o", data, "-e", "cpu-clock", "-F", str(freq),
             "--call-graph", "dwarf,8192", "--", *rec, "--", *cmd],
            env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not os.path.exists(data):
            sys.exit(f"perf record failed (exit {r.returncode}): {r.stderr.strip()}")
        out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso"],
                             capture_output=True, text=True, check=True).stdout
    counts = {"program": 0, "handler": 0, "threads": 0, "gmon": 0}
    for comm, frames in samples(out):
        counts[bucket(comm, frames)] += 1
    return counts


def runtime_share(counts):
    """The runtime's share of the program's CPU samples, in per cent (None without samples)."""
    prog = counts["program"] + counts["handler"] + counts["threads"]
    return 100 * (counts["handler"] + counts["threads"]) / prog if prog else None


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gmon", default=os.path.join(root, "target/release/gmon"))
    ap.add_argument("--walk", choices=["fp", "dwarf", "none"], default="fp")
    ap.add_argument("--freq", type=int, default=4999, help="perf's sampling rate (Hz)")
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()
    counts = measure(a.gmon, a.walk, a.freq, a.cmd)
    prog = counts["program"] + counts["handler"] + counts["threads"]
    if prog == 0:
        sys.exit("perf recorded no samples of the program")
    ms = 1000 / a.freq
    print(f"{' '.join(a.cmd)} (walk {a.walk}): {prog} samples of the program's processes "
          f"({prog * ms / 1000:.2f} s of CPU)")
    for k in ("handler", "threads"):
        print(f"  runtime, {k:8} {counts[k]:7} samples  {100 * counts[k] / prog:6.2f} % of the program's CPU")
    rt = counts["handler"] + counts["threads"]
    print(f"  runtime, total    {rt:7} samples  {runtime_share(counts):6.2f} % "
          f"(± {100 * 1.96 * (rt ** 0.5) / prog:.2f} sampling error)")
    print(f"  gmon record       {counts['gmon']:7} samples  {counts['gmon'] * ms:6.1f} ms "
          f"({100 * counts['gmon'] / prog:.2f} % of the program's CPU)")


if __name__ == "__main__":
    main()
