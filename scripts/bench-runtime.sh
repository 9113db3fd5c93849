#!/usr/bin/env bash
# Overhead of the gmon-write runtime at 1 kHz.
#
#   1. A CPU-bound Rust benchmark (gmon-write/examples/bench_cpu.rs, release build) with and
#      without the Profiler started in-process.
#   2. A C program (calls, recursion, sorting) run plain, under `gmon record --hz 1000` with each
#      stack walk (GMON_RECORD_UNWIND=fp: frame pointers in the handler; dwarf, the default: stack
#      snapshot + .eh_frame unwinding on a runtime thread), and as its own -pg build (glibc's
#      mcount + 100 Hz profil) for comparison; the same program built -fomit-frame-pointer.
#   3. Distribution programs built without frame pointers: `sort` of 1 million lines, `gzip -9`
#      of the same file and python3 running a pure-Python loop, plain and under `gmon record` with
#      each stack walk. The recorded CPU time includes gmon's own (summing and naming the
#      profiles).
#
#   4. The fixed cost per recorded process (`/bin/true`, `python3 -c pass`): gmon's start,
#      loading the runtime, writing and naming, in milliseconds. A recorded run of T seconds
#      costs about this plus the per-second overhead, so a short run shows a larger percentage.
#   5. With perf installed (DIRECT=0 leaves it out): scripts/runtime-cost.py on the python3 loop
#      and sort, which sorts perf's samples of one recorded run into the program, the runtime
#      and gmon itself. Precise to a fraction of a per cent where the end-to-end comparison is
#      not, but blind to indirect costs (see that script).
#
# Needs gcc and hyperfine (apt-get install -y hyperfine). Usage: scripts/bench-runtime.sh
# [RUNS]; prints the interleaved CPU-time medians first (robust to other load on the machine),
# with the median of the per-round ratios ("paired": each round's runs are close in time, so
# slow drifts of the machine cancel) and its bootstrap 95 % confidence interval, then
# hyperfine's wall-clock tables and ratios. On a shared VM one run's CPU time varies by 5-10 %,
# so resolving 1 % takes hundreds of rounds: read the interval, not the median alone.
# BENCH_ONLY=python3,gzip (prefixes of the group names) runs some groups only;
# SKIP_HYPERFINE=1 leaves the wall-clock tables out.
set -euo pipefail

RUNS=${1:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

[ "${SKIP_HYPERFINE:-0}" = 1 ] || command -v hyperfine >/dev/null ||
    { echo "hyperfine not found (apt-get install -y hyperfine, or SKIP_HYPERFINE=1)" >&2; exit 1; }

(cd "$ROOT" && cargo build --release -q -p gmon-write --lib --example bench_cpu && cargo build --release -q -p gmon-tools)
BENCH=$TARGET/release/examples/bench_cpu
GMON=$TARGET/release/gmon
# gmon embeds the runtime library it preloads (gmon-tools/build.rs): nothing else to find.
unset GMON_WRITE_LIB

cat > "$WORK/work.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static unsigned long state = 88172645463325252UL;
__attribute__((noinline)) static unsigned long next(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state;
}
__attribute__((noinline)) static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int cmp(const void *a, const void *b) {
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return (x > y) - (x < y);
}
__attribute__((noinline)) static unsigned long sort_round(size_t n) {
    unsigned long *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = next();
    qsort(v, n, sizeof *v, cmp);
    unsigned long m = v[n / 2];
    free(v);
    return m;
}
__attribute__((noinline)) static unsigned long mix_round(unsigned long n) {
    unsigned long h = 1469598103934665603UL;
    for (unsigned long i = 0; i < n; i++) h = (h ^ i) * 1099511628211UL;
    return h;
}
int main(void) {
    unsigned long acc = 0;
    for (int r = 0; r < 18; r++) {
        acc ^= (unsigned long)fib(30);
        acc ^= sort_round(400000);
        acc ^= mix_round(60000000UL);
    }
    printf("%lu\n", acc);
    return 0;
}
C
gcc -O2 -fno-omit-frame-pointer -o "$WORK/work" "$WORK/work.c"
# A process tree of short processes: the fixed cost per recorded process, as a build or a
# shell loop pays it (spec/runtime.md §6.2, fifth pass).
cat > "$WORK/spawn.c" <<'C'
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
extern char **environ;
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    char *args[] = {"/bin/true", NULL};
    for (int i = 0; i < n; i++) {
        pid_t p;
        int st;
        if (posix_spawn(&p, "/bin/true", NULL, NULL, args, environ) || waitpid(p, &st, 0) < 0)
            return 1;
    }
    return 0;
}
C
gcc -O2 -o "$WORK/spawn" "$WORK/spawn.c"
gcc -O2 -fno-omit-frame-pointer -pg -o "$WORK/work-pg" "$WORK/work.c"
gcc -O2 -fomit-frame-pointer -o "$WORK/work-nofp" "$WORK/work.c"
python3 -c '
import random, sys
r = random.Random(1)
with open(sys.argv[1], "w") as f:
    for i in range(1000000):
        f.write("%08x %d line\n" % (r.getrandbits(32), i))
' "$WORK/lines.txt"
cat > "$WORK/loop.py" <<'PY'
def f(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
print(sum(f(100000) for _ in range(180)))
PY
# The interpreter itself, not a shim in front of it (pyenv's runs dozens of bash helpers).
PYTHON=$(python3 -c 'import sys; print(sys.executable)')

cd "$WORK"
# 1. Interleaved CPU-time measurement (the primary figure): each round runs every variant once,
#    in turn, and takes the child's user + sys time from wait4(), so load that comes and goes
#    hits all variants alike. Reports the median of each and the ratio of medians.
python3 - "$RUNS" "$BENCH" "$GMON" "$WORK" "$PYTHON" <<'PY'
import os, random, statistics, subprocess, sys
runs, bench, gmon, work, python = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
env_prof = dict(os.environ, GMON_BENCH_PROFILE="1", GMON_BENCH_OUT=f"{work}/rust.gmon")
env_fp = dict(os.environ, GMON_RECORD_UNWIND="fp")
env_dwarf = dict(os.environ, GMON_RECORD_UNWIND="dwarf")
def rec(prog, *args):
    return [gmon, "record", "-o", f"{work}/rec.gmon", "--hz", "1000", "--", prog, *args]
def walks(prog, *args):
    return [
        ("plain", [prog, *args], None),
        ("record 1 kHz, fp", rec(prog, *args), env_fp),
        ("record 1 kHz, dwarf", rec(prog, *args), env_dwarf),
    ]
def tree(prog, *args):
    perf = [("perf record -F 1000 -g", ["perf", "record", "-q", "-F", "1000", "-g", "-o",
             f"{work}/tree.perf", "--", prog, *args], None)] if have_perf else []
    return [("plain", [prog, *args], None), ("gmon record --hz 1000", rec(prog, *args), None),
            *perf]
have_perf = subprocess.run(["perf", "record", "-q", "-o", f"{work}/probe.perf", "--", "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           cwd=work).returncode == 0 if any(
    os.access(os.path.join(d, "perf"), os.X_OK)
    for d in os.environ.get("PATH", "").split(os.pathsep)) else False
groups = {
    "rust": [("plain", [bench], None), ("profiled 1 kHz", [bench], env_prof)],
    "c": walks(f"{work}/work") + [("gcc -pg", [f"{work}/work-pg"], None)],
    "c -fomit-frame-pointer": walks(f"{work}/work-nofp"),
    "sort (1e6 lines)": walks("sort", f"{work}/lines.txt", "-o", f"{work}/sorted.txt"),
    "gzip -9 (same file)": walks("gzip", "-9", "-k", "-f", f"{work}/lines.txt"),
    "python3 loop": walks(python, f"{work}/loop.py"),
    # The fixed cost of `gmon record` (gmon itself, loading the runtime, writing the files),
    # separate from the per-second cost of sampling.
    "fixed cost (/bin/true)": [
        ("plain", ["/bin/true"], None),
        ("gmon record --hz 1000", [gmon, "record", "-o", f"{work}/true.gmon", "--", "/bin/true"], None),
    ],
    "fixed cost (python3 -c pass)": walks(python, "-c", "pass"),
    # The same per process of a tree: 200 `/bin/true` spawned one after another, and a shell
    # loop of 200 `perl -e 1` (each a fork of the shell, then an exec), against perf recording
    # the same tree at the same rate where perf may run.
    "fixed cost per process (200 x posix_spawn /bin/true)": tree(f"{work}/spawn", "200"),
    "fixed cost per process (sh loop of 200 perl -e 1)":
        tree("sh", "-c", "for i in $(seq 200); do perl -e 1; done"),
}
# Processes per run of each tree group (the cost added is divided by it).
per_run = {name: 200 for name in groups if name.startswith("fixed cost per process")}
def interval(ratios, rounds=2000):
    """Bootstrap 95 % interval of the median of the paired ratios."""
    rnd = random.Random(1)
    meds = sorted(statistics.median(rnd.choices(ratios, k=len(ratios))) for _ in range(rounds))
    return meds[int(0.025 * rounds)], meds[int(0.975 * rounds) - 1]
def cpu(cmd, env):
    p = subprocess.Popen(cmd, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, cmd
    return ru.ru_utime + ru.ru_stime
only = [g for g in os.environ.get("BENCH_ONLY", "").split(",") if g]
for name, variants in groups.items():
    if only and not any(name.startswith(g) for g in only):
        continue
    times = {v[0]: [] for v in variants}
    for r in range(runs):
        # The order rotates every round, so that no variant always runs first (or right after
        # the same other one).
        k = r % len(variants)
        for label, cmd, env in variants[k:] + variants[:k]:
            times[label].append(cpu(cmd, env))
    plain = times[variants[0][0]]
    base = statistics.median(plain)
    fixed = name.startswith("fixed")
    print(f"== {name}: median CPU time (user+sys) over {runs} interleaved rounds;"
          + (" the cost added, in ms" if fixed else
             " paired: the median of each round's own ratio to plain, with its 95 % interval"))
    for label, _, _ in variants:
        m = statistics.median(times[label])
        if fixed:
            n = per_run.get(name, 1)
            added = statistics.median(t - p for t, p in zip(times[label], plain)) / n
            print(f"  {label:24} {m * 1e3:8.2f} ms  {added * 1e3:+.2f} ms per process"
                  f"  [min {min(times[label]) * 1e3:.2f}, max {max(times[label]) * 1e3:.2f}]")
            continue
        paired = [t / p - 1 for t, p in zip(times[label], plain)]
        lo, hi = interval(paired)
        print(f"  {label:24} {m:.4f} s  ({(m / base - 1) * 100:+.2f} %)"
              f"  paired {statistics.median(paired) * 100:+.2f} % [95 %: {lo * 100:+.2f} .. {hi * 100:+.2f}]"
              f"  [min {min(times[label]):.3f}, max {max(times[label]):.3f}]")
PY

# 2. Where one recorded run's CPU time goes, from perf's samples (DIRECT=0 leaves it out).
if [ "${DIRECT:-1}" = 1 ]; then
    if command -v perf >/dev/null && perf record -q -o "$WORK/probe.data" -e cpu-clock -- true 2>/dev/null; then
        echo "== direct cost, from perf's samples of one recorded run (scripts/runtime-cost.py)"
        for walk in none fp dwarf; do
            python3 "$ROOT/scripts/runtime-cost.py" --gmon "$GMON" --walk "$walk" -- "$PYTHON" "$WORK/loop.py"
            python3 "$ROOT/scripts/runtime-cost.py" --gmon "$GMON" --walk "$walk" -- \
                sort "$WORK/lines.txt" -o "$WORK/sorted.txt"
        done
    else
        echo "== direct cost: SKIPPED (perf not installed or not permitted; apt-get install linux-perf)"
    fi
fi

# 3. hyperfine's wall-clock tables, for reference (SKIP_HYPERFINE=1 leaves them out).
[ "${SKIP_HYPERFINE:-0}" = 1 ] && exit 0
echo "== Rust CPU-bound benchmark: in-process Profiler at 1 kHz vs none"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json rust.json \
    -n plain "$BENCH" \
    -n profiled "env GMON_BENCH_PROFILE=1 GMON_BENCH_OUT=$WORK/rust.gmon $BENCH"

echo "== C program: plain vs gmon record --hz 1000 vs -pg build"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json c.json \
    -n plain "$WORK/work" \
    -n gmon-record "$GMON record -o $WORK/rec.gmon --hz 1000 -- $WORK/work" \
    -n gcc-pg "$WORK/work-pg"

python3 - <<'PY'
import json
for name in ("rust.json", "c.json"):
    res = json.load(open(name))["results"]
    base = res[0]
    print(f"{name[:-5]}: baseline {base['command']} mean {base['mean']:.3f} s ± {base['stddev']:.3f}")
    bcpu = base["user"] + base["system"]
    print(f"  CPU (user+sys) {bcpu:.3f} s")
    for r in res[1:]:
        ratio = r["mean"] / base["mean"]
        cpu = r["user"] + r["system"]
        print(f"  {r['command']}: mean {r['mean']:.3f} s ± {r['stddev']:.3f}  ratio {ratio:.4f}"
              f"  ({(ratio - 1) * 100:+.2f} %);  CPU {cpu:.3f} s  ratio {cpu / bcpu:.4f}"
              f"  ({(cpu / bcpu - 1) * 100:+.2f} %)")
PY
