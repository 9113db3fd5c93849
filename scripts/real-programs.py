#!/usr/bin/env python3
"""`gmon record` on the programs people run: the table of issue 11.

Usage: scripts/real-programs.py [--runs N] [--no-perf] [--only NAME,...]

For each program (sort of 2 million lines with -o and --parallel=2, gzip -9, xz, python3 with a
pure-Python loop and with threads, a bash loop, `make -j2` of a small Makefile, and the C
programs of gmon-tools/tests/programs/ that own SIGPROF and ITIMER_PROF, block every signal in
workers, or call exit from a signal handler) it runs the program plain and under
`gmon record --hz 1000` (DWARF stacks, the default), N times each, interleaved, and prints one
markdown row:

* status / output: exit status and output (stdout and output files) the same as unprofiled;
* samples / expected: samples over the recorded command's CPU time x 1000 (gmon record's
  summary prints both);
* named: samples in a function named by a symbol (.symtab, a separate debug file, .dynsym),
  then the share named only as OBJECT+0xSTART from the unwind table (gmon record's summary);
* perf named: the same programs under `perf record -F 1000`, share of user-space samples that
  `perf report --sort sym` names (not `[.] 0x...`);
* stacks: share of stack samples that reach the program's start or the thread start after a
  complete unwind (scripts/stack-coverage.py, weighted by ticks over every file written);
* files: profiles written (+ processes summed into them);
* overhead: median CPU time (user + system, gmon record itself included) under gmon record over
  median unprofiled, minus one. A single run's CPU time varies by 5-10 % on a shared VM, so with
  a few runs this column is noise at the 1 % level; hence the next two;
* runtime (perf): the runtime's share of the program's CPU in one recorded run, from perf's
  samples (scripts/runtime-cost.py: signal delivery, handler, start and exit, its threads);
* gmon: the CPU time of the `gmon record` process itself in that run (start, summing, naming,
  writing), a fixed cost per run rather than per second.

The programs come from PATH (`python3` resolved to its interpreter, past any shim); .ci/run
installs them. Needs a release build of gmon (built here).
"""
import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HZ = 1000


def sh(argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def timed(argv, cwd, stdout_path):
    """Runs argv with stdout to a file; (exit status, CPU seconds of it and its children,
    stderr text)."""
    with open(stdout_path, "wb") as out:
        p = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime, err.decode(errors="replace")


def interpreter(name):
    """A python3 on PATH may be a shim; the suite measures the interpreter itself."""
    r = subprocess.run([name, "-c", "import sys; print(sys.executable)"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def programs(work, only):
    lines = os.path.join(work, "lines.txt")
    with open(lines, "w") as f:
        x = 0x2545F4914F6CDD1D
        words = ["alpha", "Bravo", "charlie", "delta-9", "écho", "foxtrot", "Golf", "hotel"]
        m = (1 << 64) - 1
        for _ in range(2_000_000):
            x ^= (x << 13) & m
            x ^= x >> 7
            x ^= (x << 17) & m
            f.write(f"{words[x % 8]} {x % 1_000_003} {x >> 40:x}\n")
    small = os.path.join(work, "small.txt")
    with open(lines, "rb") as f, open(small, "wb") as g:
        g.write(f.read(12 << 20))
    tiny = os.path.join(work, "tiny.txt")
    with open(lines, "rb") as f, open(tiny, "wb") as g:
        g.write(f.read(3 << 20))
    progs = os.path.join(ROOT, "gmon-tools", "tests", "programs")
    cexe = {}
    for name, flags in [("selfprof", []), ("masked", ["-pthread"]), ("exit_in_handler", [])]:
        exe = os.path.join(work, name)
        # Built as a distribution builds: optimised, no frame pointers.
        sh(["gcc", "-O2", "-g", "-o", exe, os.path.join(progs, name + ".c")] + flags)
        cexe[name] = exe
    make_dir = os.path.join(work, "mk")
    os.makedirs(make_dir)
    with open(os.path.join(make_dir, "Makefile"), "w") as f:
        f.write(f"all: a.gz b.gz sorted.txt\n"
                f"a.gz:\n\tgzip -6 -c {small} > $@\n"
                f"b.gz:\n\tgzip -6 -c {tiny} > $@\n"
                f"sorted.txt:\n\tsort {tiny} > $@\n")
    py = interpreter("python3")
    rows = [
        ("sort -o", ["sort", "-S", "64M", lines, "-o", "OUT/sorted.txt"], ["sorted.txt"]),
        ("sort --parallel=2", ["sort", "--parallel=2", "-S", "64M", lines, "-o", "OUT/sorted.txt"],
         ["sorted.txt"]),
        ("gzip -9", ["gzip", "-9", "-c", small], []),
        ("xz", ["xz", "-6", "-T1", "-c", tiny], []),
        ("python3 loop", [py, "-c", "s = 0\nfor i in range(4_000_000):\n    s += i * i % 7\nprint(s)"],
         []),
        ("python3 threads", [py, "-c", "import threading\n"
                             "def work(n, out, k):\n    s = 0\n    for i in range(n):\n"
                             "        s += i % 13\n    out[k] = s\n"
                             "out = [0] * 4\n"
                             "ts = [threading.Thread(target=work, args=(3_000_000, out, k)) "
                             "for k in range(4)]\n"
                             "[t.start() for t in ts]\n[t.join() for t in ts]\nprint(out)"], []),
        ("bash loop", ["bash", "-c", "i=0; s=0; while [ $i -lt 150000 ]; do "
                       "s=$(( (s + i * i) % 1000003 )); i=$((i+1)); done; echo $s"], []),
        ("make -j2", ["make", "-s", "-j2", "-C", make_dir, "-B"],
         ["mk/a.gz", "mk/b.gz", "mk/sorted.txt"]),
        ("C: own SIGPROF", [cexe["selfprof"]], []),
        ("C: masked workers", [cexe["masked"]], []),
        ("C: exit in handler", [cexe["exit_in_handler"]], []),
    ]
    if py and os.path.realpath(py) != os.path.realpath("/usr/bin/python3") and \
            os.path.exists("/usr/bin/python3"):
        rows.insert(5, ("python3 loop (Debian)", ["/usr/bin/python3"] + rows[4][1][1:], []))
    if only:
        rows = [r for r in rows if any(o in r[0] for o in only)]
    return rows


def outputs(work, files):
    got = []
    for f in files:
        with open(os.path.join(work, f), "rb") as fh:
            got.append(fh.read())
    return got


def clean(work, files):
    for f in files:
        try:
            os.unlink(os.path.join(work, f))
        except FileNotFoundError:
            pass


SUMMARY = re.compile(r"gmon record: (\d+) samples at \d+ Hz \(([\d.]+) s of CPU time\) from "
                     r"(\d+) process(?:es)? in (\d+) files?")
NAMED = re.compile(r"top functions \(self; ([\d.]+)% of samples in named functions"
                   r"(?:, ([\d.]+)% more as OBJECT\+0xSTART)?")
FILE = re.compile(r"^  (/\S+)  ", re.M)


def coverage(profiles):
    """Ticks and ticks reaching the start, over the profiles' sidecars."""
    total = reach = 0
    for p in profiles:
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "stack-coverage.py"), p],
                           capture_output=True, text=True)
        m = re.search(r": (\d+) ticks", r.stdout)
        s = re.search(r"reach start\s+([\d.]+) %", r.stdout)
        if m and s:
            t = int(m.group(1))
            total += t
            reach += t * float(s.group(1)) / 100
    return 100.0 * reach / total if total else float("nan")


def perf_named(argv, work):
    data = os.path.join(work, "perf.data")
    r = subprocess.run(["perf", "record", "-q", "-F", str(HZ), "-o", data, "--"] + argv,
                       cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode not in (0, 3) and not os.path.exists(data):
        return float("nan")
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "sym",
                          "-F", "overhead,sym"], capture_output=True, text=True, cwd=work)
    user = unnamed = 0.0
    for line in rep.stdout.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            pct = float(m.group(1))
            user += pct
            if m.group(2).startswith("0x"):
                unnamed += pct
    return 100.0 * (user - unnamed) / user if user else float("nan")


def runtime_cost():
    """scripts/runtime-cost.py as a module (its name has a dash)."""
    spec = importlib.util.spec_from_file_location(
        "runtime_cost", os.path.join(ROOT, "scripts", "runtime-cost.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    sh(["cargo", "build", "--release", "-q", "-p", "gmon-tools"], cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    gmon = os.path.join(target, "release", "gmon")
    use_perf = not args.no_perf and shutil.which("perf") is not None
    cost = runtime_cost()
    work = tempfile.mkdtemp(prefix="gmon-real-")
    try:
        print("| program | status same | output same | samples / expected | named (+ OBJECT+0xSTART) "
              "| perf named | stacks reach start | files (processes) | overhead "
              "| runtime (perf) | gmon |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for name, argv, files in programs(work, [o for o in args.only.split(",") if o]):
            argv = [a.replace("OUT/", work + "/") for a in argv]
            plain_cpu, rec_cpu = [], []
            same_status = same_output = True
            last = None
            for i in range(args.runs):
                clean(work, files)
                code, cpu, _ = timed(argv, work, os.path.join(work, "plain.stdout"))
                plain_cpu.append(cpu)
                expect = (code, open(os.path.join(work, "plain.stdout"), "rb").read(),
                          outputs(work, files))
                clean(work, files)
                out = os.path.join(work, "prof.out")
                rcode, rcpu, err = timed([gmon, "record", "-o", out, "--"] + argv, work,
                                         os.path.join(work, "rec.stdout"))
                rec_cpu.append(rcpu)
                got = (rcode, open(os.path.join(work, "rec.stdout"), "rb").read(),
                       outputs(work, files))
                same_status &= expect[0] == got[0]
                same_output &= expect[1:] == got[1:]
                last = err
            s = SUMMARY.search(last or "")
            n = NAMED.search(last or "")
            written = FILE.findall(last or "")
            if s:
                samples, cpu = int(s.group(1)), float(s.group(2))
                ratio = f"{samples}/{cpu * HZ:.0f} ({100.0 * samples / max(cpu * HZ, 1):.0f}%)"
                files_col = f"{s.group(4)} ({s.group(3)})"
            else:
                ratio, files_col = "no profile", "0"
            named = (f"{float(n.group(1)):.1f}%" + (f" (+{float(n.group(2)):.1f}%)" if n.group(2)
                                                    else "")) if n else "-"
            stacks = coverage(written)
            pnamed = perf_named(argv, work) if use_perf else float("nan")
            over = statistics.median(rec_cpu) / max(statistics.median(plain_cpu), 1e-6) - 1
            direct = gmon_ms = "-"
            if use_perf:
                clean(work, files)
                freq = 4999
                counts = cost.measure(gmon, "dwarf", freq, argv, cwd=work)
                share = cost.runtime_share(counts)
                direct = f"{share:.2f}%" if share is not None else "-"
                gmon_ms = f"{counts['gmon'] * 1000 / freq:.1f} ms"
            print(f"| {name} | {'yes' if same_status else 'NO'} | {'yes' if same_output else 'NO'} "
                  f"| {ratio} | {named} | {pnamed:.1f}% | {stacks:.1f}% | {files_col} "
                  f"| {100 * over:+.1f}% | {direct} | {gmon_ms} |", flush=True)
            for w in written:
                for f in (w, w + ".gmonx"):
                    if os.path.exists(f):
                        os.unlink(f)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
