#!/usr/bin/env bash
# Benchmark: `gmon merge` against `gprof -s`, in the same run, on the same inputs, and both
# against a plain `cat` of the same files (throughput in MB/s).
#
#   scripts/bench-merge.sh [--files N] [--opt LEVEL] [--no-check]
#
# Inputs: N (default 1000) profiles of a generated 20,000-function C program
# (scripts/random-compare/gen.py --bench, built with -O0 -g -pg so that one profile is about
# 3 MB). The program is run once for a real gmon.out; the N inputs are that profile with varied
# counts (each file: 2,000 random bins and 500 random arc counts rewritten, seeded by the file
# number), so every input is a valid profile of the same executable and the sums differ from N
# times one file.
#
# Measured (wall clock, page cache warm, best of 3 for cat and gmon, one run of gprof -s):
#   cat FILES > /dev/null
#   gmon merge --exe prog FILES -o merged.out
#   gprof -s prog FILES                        (writes gmon.sum)
# Check (unless --no-check): `gprof -b prog merged.out` equals `gprof -b prog FILES`.
# Results go to stdout and $BENCH_WORKDIR/results.txt (default /tmp/gmon-bench-merge).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${BENCH_WORKDIR:-/tmp/gmon-bench-merge}
target=${CARGO_TARGET_DIR:-$root/target}
gprof=${GPROF:-/usr/bin/gprof}
files=1000
opt=-O0
check=1
while [ $# -gt 0 ]; do
    case $1 in
        --files) files=$2; shift ;;
        --opt) opt=$2; shift ;;
        --no-check) check=0 ;;
        *) echo "usage: $0 [--files N] [--opt LEVEL] [--no-check]" >&2; exit 2 ;;
    esac
    shift
done
export LC_ALL=C
mkdir -p "$work"
results=$work/results.txt
: > "$results"
say() { echo "$@" | tee -a "$results"; }

cargo build --release -p gmon-tools --manifest-path "$root/Cargo.toml" >&2
gmon=$target/release/gmon

# --- the program and one real profile -------------------------------------------------------
gen=$work/gen
prog=$gen/prog$opt
if [ ! -f "$prog.gmon" ]; then
    if [ ! -f "$gen/build.sh" ]; then
        rm -rf "$gen"
        python3 "$root/scripts/random-compare/gen.py" "$gen" --bench --functions 20000 --seed 1 \
            --target-work 3e9 >&2
    fi
    [ -x "$prog" ] || (cd "$gen" && sh build.sh "prog$opt" "$opt" -g >&2)
    rm -f "$gen/gmon.out"
    (cd "$gen" && "./prog$opt" 200 > /dev/null)
    mv "$gen/gmon.out" "$prog.gmon"
fi

# --- N inputs with varied counts --------------------------------------------------------------
inputs=$work/inputs$opt
if [ "$(ls "$inputs" 2>/dev/null | wc -l)" != "$files" ]; then
    rm -rf "$inputs"
    mkdir -p "$inputs"
    python3 - "$prog.gmon" "$inputs" "$files" <<'EOF'
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
fi
list=$work/list$opt.txt
ls "$inputs"/*.out > "$list"
mapfile -t paths < "$list"
bytes=$(cat "${paths[@]}" | wc -c)
mb=$(python3 -c "print(f'{$bytes / 1e6:.1f}')")

# --- timings ------------------------------------------------------------------------------------
# `runs N CMD...`: prints "wall cpu" (seconds) of the run with the smallest wall time; cpu is
# user + system time, which is what to compare when other work shares the machine.
runs() {
    local n=$1 best= t
    shift
    for _ in $(seq "$n"); do
        /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$@" > /dev/null
        t=$(awk '{printf "%s %.2f", $1, $2 + $3}' "$work/time.txt")
        if [ -z "$best" ] || python3 -c "import sys; sys.exit(not ${t%% *} < ${best%% *})"; then
            best=$t
        fi
    done
    echo "$best"
}
cat "${paths[@]}" > /dev/null # warm the page cache
read -r t_cat c_cat <<< "$(runs 3 cat "${paths[@]}")"
read -r t_gmon c_gmon <<< "$(runs 3 "$gmon" merge --exe "$prog" "${paths[@]}" -o "$work/merged.out")"
sumdir=$work/gprof-s
rm -rf "$sumdir"
mkdir -p "$sumdir"
read -r t_gprof c_gprof <<< "$(cd "$sumdir" && runs 1 "$gprof" -s "$prog" "${paths[@]}")"

rate() { python3 -c "print(f'{$bytes / 1e6 / $1:.0f}')"; }
say "inputs:      $files profiles of $(basename "$prog") (20,000 functions), $mb MB in total," \
    "$(python3 -c "print(f'{$bytes / $files / 1e6:.2f}')") MB each; $(nproc) cores"
say "load:        $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates wall times)"
say "cat:         $t_cat s wall, $c_cat s cpu  $(rate "$t_cat") MB/s"
say "gmon merge:  $t_gmon s wall, $c_gmon s cpu  $(rate "$t_gmon") MB/s"
say "gprof -s:    $t_gprof s wall, $c_gprof s cpu  $(rate "$t_gprof") MB/s"
say "ratio:       gmon merge is $(python3 -c "print(f'{$t_gprof / $t_gmon:.1f}')")x faster than" \
    "gprof -s in wall time, $(python3 -c "print(f'{$c_gprof / max($c_gmon, 0.01):.1f}')")x in" \
    "cpu time; its throughput is $(python3 -c "print(f'{$t_cat / $t_gmon * 100:.0f}')")% of cat's"

if [ "$check" = 1 ]; then
    "$gprof" -b "$prog" "${paths[@]}" > "$work/report-inputs.txt"
    "$gprof" -b "$prog" "$work/merged.out" > "$work/report-merged.txt"
    if cmp -s "$work/report-inputs.txt" "$work/report-merged.txt"; then
        say "check:       gprof -b on the merged file == gprof -b on the $files inputs"
    else
        say "check:       FAILED: gprof -b reports differ (see $work/report-*.txt)"
        exit 1
    fi
    "$gprof" -b "$prog" "$sumdir/gmon.sum" > "$work/report-gprof-s.txt"
    if cmp -s "$work/report-inputs.txt" "$work/report-gprof-s.txt"; then
        say "             gprof -b on gprof -s's gmon.sum == too"
    else
        say "             gprof -b on gprof -s's gmon.sum differs (u16 bins / arc order)"
    fi
fi
