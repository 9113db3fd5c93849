#!/usr/bin/env bash
# Benchmark: summing many profiles. `gmon merge` against `cat` of the same files (how close to
# reading speed) and against `gprof -s`; `gmon gprof -s` and `gmon gprof -b` over all the
# profiles against GNU gprof doing the same. Everything in the same run, interleaved.
#
#   scripts/bench-merge.sh [--files N] [--runs R] [--gprof-runs G] [--no-check]
#
# Inputs: N (default 100) profiles of a dense generated program (scripts/random-compare/gen.py
# --dense --functions 20000 --tus 80 --seed 1, built -O2 -g: about 63,000 arcs and 737,000
# histogram bins, a 2.8 MB gmon.out). The program is run once for a real gmon.out; the N inputs
# are that profile with varied counts (each file: 2,000 random bins and 500 random arc counts
# rewritten, seeded by the file number), so every input is a valid profile of the same executable
# and the sums differ from N times one file (arc sums exceed 32 bits: the sum needs the extra
# records `gmon merge` writes for them).
#
# Each round runs every command once, in this order (page cache warm), R rounds (default 5);
# GNU gprof's commands take seconds each, so they run in the first G rounds only (default R):
#   cat FILES > /dev/null
#   gmon merge --exe prog FILES -o merged.out
#   gmon gprof -s prog FILES        (in a scratch directory: writes gmon.sum)
#   gmon gprof -b prog FILES
#   gprof -s prog FILES
#   gprof -b prog FILES
# Reported per command: the median wall and cpu (user + system) time, MB/s of input, and the
# peak memory (max RSS, from one more run under /usr/bin/time). Other work on the machine
# inflates wall times, which is why the commands are interleaved and the ratios are taken
# within the run.
# Check (unless --no-check): `gprof -b` on gmon merge's output and on gmon gprof -s's gmon.sum
# equals `gprof -b` on the N inputs, and `gmon gprof -b` equals `gprof -b` on the N inputs.
# Results go to stdout and $BENCH_WORKDIR/results.txt (default target/bench-merge in this checkout).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${BENCH_WORKDIR:-$root/target/bench-merge}
target=${CARGO_TARGET_DIR:-$root/target}
gprof=${GPROF:-/usr/bin/gprof}
files=100
runs=5
gprof_runs=
check=1
while [ $# -gt 0 ]; do
    case $1 in
        --files) files=$2; shift ;;
        --runs) runs=$2; shift ;;
        --gprof-runs) gprof_runs=$2; shift ;;
        --no-check) check=0 ;;
        *) echo "usage: $0 [--files N] [--runs R] [--gprof-runs G] [--no-check]" >&2; exit 2 ;;
    esac
    shift
done
gprof_runs=${gprof_runs:-$runs}
export LC_ALL=C
mkdir -p "$work"
results=$work/results.txt
: > "$results"
say() { echo "$@" | tee -a "$results"; }

cargo build --release -p gmon-tools --manifest-path "$root/Cargo.toml" >&2
gmon=$target/release/gmon

# --- the program and one real profile -------------------------------------------------------
gen=$work/dense
prog=$gen/prog
if [ ! -f "$gen/prog.gmon" ]; then
    if [ ! -f "$gen/build.sh" ]; then
        rm -rf "$gen"
        python3 "$root/scripts/random-compare/gen.py" "$gen" --dense --functions 20000 --tus 80 \
            --seed 1 >&2
    fi
    [ -x "$prog" ] || (cd "$gen" && sh build.sh prog -O2 -g >&2)
    rm -f "$gen/gmon.out"
    (cd "$gen" && ./prog 100 > /dev/null)
    if [ ! -f "$gen/gmon.out" ]; then
        echo "the dense program wrote no gmon.out (arc table overflow?)" >&2
        exit 1
    fi
    mv "$gen/gmon.out" "$gen/prog.gmon"
fi

# --- N inputs with varied counts --------------------------------------------------------------
inputs=$work/inputs
stamp="$files $(cksum < "$gen/prog.gmon")"
if [ "$(cat "$inputs/.made" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$inputs"
    mkdir -p "$inputs"
    python3 - "$gen/prog.gmon" "$inputs" "$files" <<'EOF'
import random, struct, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, "rb").read()
assert data[:4] == b"gmon"
# Offsets of every u16 bin and every u32 arc count (GNU, 8-byte pointers, little-endian).
bins, arcs, o = [], [], 20
while o < len(data):
    tag = data[o]
    if tag == 0:
        nbins = struct.unpack_from("<I", data, o + 17)[0]
        bins.extend(range(o + 41, o + 41 + 2 * nbins, 2))
        o += 41 + 2 * nbins
    elif tag == 1:
        arcs.append(o + 17)
        o += 21
    else:
        sys.exit("unexpected tag %d" % tag)
for k in range(n):
    rnd = random.Random(k)
    b = bytearray(data)
    for off in rnd.sample(bins, min(2000, len(bins))):
        struct.pack_into("<H", b, off, rnd.randrange(0, 200))
    for off in rnd.sample(arcs, min(500, len(arcs))):
        struct.pack_into("<I", b, off, rnd.randrange(0, 1 << 31))
    open("%s/p%04d.out" % (out, k), "wb").write(b)
EOF
    echo "$stamp" > "$inputs/.made"
fi
mapfile -t paths < <(ls "$inputs"/*.out)
bytes=$(cat "${paths[@]}" | wc -c)

# --- timings ------------------------------------------------------------------------------------
# `run NAME CMD...`: runs CMD once and appends "NAME wall cpu" to the log, timed by the parent's
# clock and wait4's resource usage (microseconds: /usr/bin/time's %e counts in 10 ms steps, a
# quarter of `cat`'s whole time here). `peak NAME CMD...`: runs CMD once more under
# /usr/bin/time for its peak memory (a child forked from Python would count Python's pages).
log=$work/times.txt
peaks=$work/peaks.txt
: > "$log"
: > "$peaks"
run() {
    python3 - "$log" "$@" <<'PY'
import os, subprocess, sys, time
log, name, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
start = time.perf_counter()
child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
with open(log, "a") as f:
    f.write(f"{name} {wall:.4f} {usage.ru_utime + usage.ru_stime:.4f}\n")
sys.exit(os.waitstatus_to_exitcode(status))
PY
}
peak() {
    local name=$1
    shift
    /usr/bin/time -f "%M" -o "$work/time.txt" "$@" > /dev/null
    echo "$name $(tail -1 "$work/time.txt")" >> "$peaks"
}
s_gmon=$work/sum-gmon
s_gprof=$work/sum-gprof
mkdir -p "$s_gmon" "$s_gprof"
cat "${paths[@]}" > /dev/null # warm the page cache
for r in $(seq "$runs"); do
    run cat cat "${paths[@]}"
    run "gmon merge" "$gmon" merge --exe "$prog" "${paths[@]}" -o "$work/merged.out"
    (cd "$s_gmon" && run "gmon gprof -s" "$gmon" gprof -s "$prog" "${paths[@]}")
    run "gmon gprof -b" "$gmon" gprof -b "$prog" "${paths[@]}"
    if [ "$r" -le "$gprof_runs" ]; then
        (cd "$s_gprof" && run "gprof -s" "$gprof" -s "$prog" "${paths[@]}")
        run "gprof -b" "$gprof" -b "$prog" "${paths[@]}"
    fi
done
peak cat cat "${paths[@]}"
peak "gmon merge" "$gmon" merge --exe "$prog" "${paths[@]}" -o "$work/merged.out"
(cd "$s_gmon" && peak "gmon gprof -s" "$gmon" gprof -s "$prog" "${paths[@]}")
peak "gmon gprof -b" "$gmon" gprof -b "$prog" "${paths[@]}"
(cd "$s_gprof" && peak "gprof -s" "$gprof" -s "$prog" "${paths[@]}")
peak "gprof -b" "$gprof" -b "$prog" "${paths[@]}"

say "inputs: $files profiles of the dense 20,000-function program, $((bytes / 1000000)) MB in" \
    "total, $((bytes / files / 1000)) kB each; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$log" "$bytes" "$runs" "$gprof_runs" "$peaks" <<'EOF' | tee -a "$results"
import statistics, sys
log, total, runs, gruns, peaks = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rows = {}
for line in open(log):
    *name, wall, cpu = line.split()
    rows.setdefault(" ".join(name), []).append((float(wall), float(cpu)))
peak = {}
for line in open(peaks):
    *name, rss = line.split()
    peak[" ".join(name)] = int(rss)
med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v),
           peak.get(k, 0), len(v)) for k, v in rows.items()}
print(f"median of {runs} interleaved rounds ({gruns} for GNU gprof); MB/s = input bytes / wall")
print(f"{'command':<15}{'wall s':>8}{'cpu s':>8}{'MB/s':>8}{'peak MB':>9}  ratio")
ratio_to = {"gmon merge": [("cat", "cat"), ("gprof -s", "gprof -s")],
            "gmon gprof -s": [("gprof -s", "gprof -s")], "gmon gprof -b": [("gprof -b", "gprof -b")]}
for k, (w, c, m, n) in med.items():
    parts = []
    for other, label in ratio_to.get(k, []):
        if other in med:
            ow = med[other][0]
            if other == "cat":
                parts.append(f"{w / max(ow, 1e-3):.1f}x cat's time")
            else:
                parts.append(f"{ow / max(w, 1e-3):.1f}x faster than {label}")
    print(f"{k:<15}{w:>8.4f}{c:>8.3f}{total / 1e6 / max(w, 1e-3):>8.0f}{m / 1024:>9.1f}  "
          + "; ".join(parts))
EOF

if [ "$check" = 1 ]; then
    "$gprof" -b "$prog" "${paths[@]}" > "$work/report-inputs.txt"
    "$gmon" gprof -b "$prog" "${paths[@]}" > "$work/report-gmon.txt"
    ok=1
    for what in "gmon merge's output:$work/merged.out" "gmon gprof -s's gmon.sum:$s_gmon/gmon.sum"; do
        "$gprof" -b "$prog" "${what#*:}" > "$work/report-sum.txt"
        if cmp -s "$work/report-inputs.txt" "$work/report-sum.txt"; then
            say "check: gprof -b on ${what%%:*} == gprof -b on the $files inputs"
        else
            say "check: FAILED: gprof -b on ${what%%:*} differs (see $work/report-*.txt)"
            ok=0
        fi
    done
    if cmp -s "$work/report-inputs.txt" "$work/report-gmon.txt"; then
        say "check: gmon gprof -b == gprof -b on the $files inputs"
    else
        say "check: FAILED: gmon gprof -b differs from gprof -b (see $work/report-*.txt)"
        ok=0
    fi
    [ "$ok" = 1 ] || exit 1
fi
