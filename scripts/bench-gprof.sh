#!/usr/bin/env bash
# Benchmark: `gmon gprof` against GNU gprof, in the same run, on the same inputs.
#
#   scripts/bench-gprof.sh [--no-real] [--no-line] [--runs N] [--extra DIR]
#                          [--programs "gen20k dense20k small2k"]
#
# Programs:
#   gen20k   a generated 20,000-function C program (scripts/random-compare/gen.py --bench), -O2 -g,
#            PIE. Few executed arcs per function so that glibc's arc table (textsize * 3 %) does
#            not overflow ("call graph buffer size limit exceeded" would leave no gmon.out).
#   dense20k a dense one (gen.py --dense): 20,000 functions in 80 files, about 23,000 call
#            edges and 63,000 arcs, 133 cycles, 100 self-recursive and 200 never-called
#            functions, same-named statics in every file. Also run on a stale profile (every
#            address 64 bytes off, as after a rebuild) and on three profiles at once.
#   small2k  a dense 2,000-function program in 20 files: Lua- or SQLite-sized, where start-up
#            and fixed costs count.
#   objdump  GNU objdump from Debian's binutils-source package, built with -O2 -g -pg and run as
#            `objdump -d -l` on gen20k (skipped with --no-real or when the package is unavailable).
#   --extra  every DIR/*/ holding `prog` and `gmon.out` (e.g. the C++ programs that
#            scripts/qa/build-progs2.sh builds): `-b` and `-b -l` on each.
# Cases per program: `-b`, `-b -l` (not with --no-line), and `-b` over a sum of 100 profiles.
#
# For each case: both outputs are compared (cmp), timed with hyperfine (at least N runs and
# at least 3 s per tool: small2k's 5 ms runs need hundreds to settle) or, when hyperfine is
# missing, N interleaved runs of the two tools; the times are medians (a busy VM's stray slow
# runs move a mean by 10 %). Peak memory (max RSS) is taken from /usr/bin/time.
# Results go to stdout and $BENCH_WORKDIR/results.txt (default target/bench-gprof in this checkout).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${BENCH_WORKDIR:-$root/target/bench-gprof}
target=${CARGO_TARGET_DIR:-$root/target}
gprof=${GPROF:-/usr/bin/gprof}
runs=5
real=1
line=1
extra=
programs="gen20k dense20k small2k"
while [ $# -gt 0 ]; do
    case $1 in
        --no-real) real=0 ;;
        --no-line) line=0 ;;
        --runs) runs=$2; shift ;;
        --extra) extra=$2; shift ;;
        --programs) programs=$2; shift ;;
        *) echo "usage: $0 [--no-real] [--no-line] [--runs N] [--extra DIR] [--programs LIST]" >&2; exit 2 ;;
    esac
    shift
done
export LC_ALL=C
mkdir -p "$work"
results=$work/results.txt
: > "$results"

cargo build --release -p gmon-tools --manifest-path "$root/Cargo.toml" >&2
gmon=$target/release/gmon

say() { echo "$@" | tee -a "$results"; }

# --- generated programs ----------------------------------------------------------------------
# make_gen NAME ROUNDS GEN_ARGS...: generates, builds (-O2 -g, PIE) and runs a program four
# times (ROUNDS, 2 x ROUNDS, ... rounds: different histograms and arc counts) into
# $work/NAME/prog.gmon1..4.
make_gen() {
    local name=$1 rounds=$2
    shift 2
    local dir=$work/$name
    [ -f "$dir/prog.gmon4" ] && return 0
    rm -rf "$dir"
    python3 "$root/scripts/random-compare/gen.py" "$dir" "$@" >&2
    (cd "$dir" && sh build.sh prog -O2 -g >&2)
    for i in 1 2 3 4; do
        rm -f "$dir/gmon.out"
        (cd "$dir" && ./prog $((i * rounds)) > /dev/null)
        if [ ! -f "$dir/gmon.out" ]; then
            echo "$name wrote no gmon.out (arc table overflow?)" >&2
            exit 1
        fi
        mv "$dir/gmon.out" "$dir/prog.gmon$i"
    done
}
wanted() { case " $programs " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
gen=$work/gen20k
wanted gen20k && make_gen gen20k 500 --bench --functions 20000 --seed 1 --target-work 1.5e10
dense=$work/dense20k
wanted dense20k && make_gen dense20k 500 --dense --functions 20000 --tus 80 --seed 1
small=$work/small2k
wanted small2k && make_gen small2k 100 --dense --functions 2000 --tus 20 --seed 2
# A stale profile: every address 64 bytes off, as after a rebuild that moved the code.
if wanted dense20k && [ ! -f "$dense/stale.gmon" ]; then
    python3 - "$dense/prog.gmon4" "$dense/stale.gmon" 64 <<'EOF'
import struct, sys
src, dst, delta = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, "rb").read())
o = 20  # GNU header; 64-bit little-endian records (the program was built here)
while o < len(b):
    if b[o] == 0:
        lo, hi, n = struct.unpack_from("<QQI", b, o + 1)
        struct.pack_into("<QQ", b, o + 1, lo + delta, hi + delta)
        o += 41 + 2 * n
    elif b[o] == 1:
        frm, to = struct.unpack_from("<QQ", b, o + 1)
        struct.pack_into("<QQ", b, o + 1, frm + delta, to + delta)
        o += 21
    else:
        sys.exit("unexpected tag %d at %d" % (b[o], o))
open(dst, "wb").write(b)
EOF
fi

# --- objdump from binutils-source ----------------------------------------------------------
build_objdump() {
    local dir=$work/binutils
    [ -x "$dir/build/binutils/objdump" ] && return 0
    if ! ls /usr/src/binutils/binutils-*.tar.* > /dev/null 2>&1; then
        if [ "$(id -u)" = 0 ]; then
            apt-get install -y binutils-source >&2 || return 1
        else
            return 1
        fi
    fi
    rm -rf "$dir"
    mkdir -p "$dir/build"
    tar -C "$dir" -xf /usr/src/binutils/binutils-*.tar.* || return 1
    local src
    src=$(ls -d "$dir"/binutils-*/ | head -1)
    (cd "$dir/build" &&
        CFLAGS="-O2 -g -pg" LDFLAGS="-pg" "$src/configure" --disable-nls --disable-werror \
            --disable-gdb --disable-gdbserver --disable-sim --disable-gprofng --disable-ld \
            --disable-gold --disable-gas --disable-gprof --without-zstd --disable-shared \
            > configure.log 2>&1 &&
        { make -j"$(nproc)" all-binutils > make.log 2>&1 || true; } &&
        # all-binutils also wants flex for ar's lexer; objdump alone does not.
        make -C binutils objdump >> make.log 2>&1) || return 1
}
obj=
if [ "$real" = 1 ]; then
    if build_objdump; then
        obj=$work/binutils/run
        if [ ! -f "$obj/objdump.gmon1" ]; then
            mkdir -p "$obj"
            cp "$work/binutils/build/binutils/objdump" "$obj/objdump"
            for i in 1 2 3 4; do
                rm -f "$obj/gmon.out"
                if [ $i -le 2 ]; then what=-dl; else what=-d; fi
                (cd "$obj" && ./objdump $what "$gen/prog" > /dev/null)
                [ -f "$obj/gmon.out" ] || { echo "objdump wrote no gmon.out" >&2; exit 1; }
                mv "$obj/gmon.out" "$obj/objdump.gmon$i"
            done
        fi
    else
        echo "objdump from binutils-source could not be built; skipping the real program" >&2
    fi
fi

# 100 profiles: the four real runs, repeated (a sum is a sum; gprof reads every file).
make_sum_set() {
    local dir=$1 base=$2
    mkdir -p "$dir/sum100"
    for i in $(seq 1 100); do
        ln -f "$dir/$base.gmon$(( (i - 1) % 4 + 1 ))" "$dir/sum100/p$i.gmon"
    done
}

have_hyperfine=0
command -v hyperfine > /dev/null && have_hyperfine=1

# bench NAME DIR RUNS ARGS... : compares outputs, times both tools, measures peak memory.
bench() {
    local name=$1 dir=$2 n=$3
    shift 3
    local args="$*"
    (cd "$dir" && "$gprof" $args > "$work/out.gprof" 2> /dev/null) || true
    (cd "$dir" && "$gmon" gprof $args > "$work/out.gmon" 2> /dev/null) || true
    local same=no
    cmp -s "$work/out.gprof" "$work/out.gmon" && same=yes
    local t_gprof t_gmon
    if [ $have_hyperfine = 1 ]; then
        local warm=1
        [ "$n" -le 2 ] && warm=0
        (cd "$dir" && hyperfine -N --style none --warmup $warm --min-runs "$n" -i \
            --export-json "$work/hf.json" \
            -n gprof "$gprof $args" -n gmon "$gmon gprof $args" > /dev/null 2>&1)
        read -r t_gprof t_gmon c_gprof c_gmon < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
cpu = lambda x: x["user"] + x["system"]
# hyperfine gives the CPU times as means only.
print(r[0]["median"], r[1]["median"], cpu(r[0]), cpu(r[1]))' "$work/hf.json")
    else
        # Interleaved runs (gprof, gmon, gprof, ...) so that both see the same load; medians
        # of wall and CPU (user + system) time.
        read -r t_gprof t_gmon c_gprof c_gmon < <(cd "$dir" && python3 -c '
import os, statistics, subprocess, sys, time
n, gprof, gmon, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
runs = {0: ([], []), 1: ([], [])}
for _ in range(n):
    for k, cmd in ((0, [gprof] + args), (1, [gmon, "gprof"] + args)):
        t = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        runs[k][0].append(time.time() - t)
        runs[k][1].append(ru.ru_utime + ru.ru_stime)
m = statistics.median
print(m(runs[0][0]), m(runs[1][0]), m(runs[0][1]), m(runs[1][1]))' "$n" "$gprof" "$gmon" $args)
    fi
    local m_gprof m_gmon
    # A run may fail as gprof does (e.g. "somebody miscounted" on C++ -O2 in line mode): the
    # time and memory of the failing run are still measured.
    m_gprof=$(cd "$dir" && /usr/bin/time -f %M "$gprof" $args 2>&1 > /dev/null | tail -1 || true)
    m_gmon=$(cd "$dir" && /usr/bin/time -f %M "$gmon" gprof $args 2>&1 > /dev/null | tail -1 || true)
    # Wall time can be distorted on a busy machine; CPU time (user + system) less so.
    python3 -c '
import sys
name, tg, tm, cg, cm, mg, mm, same = sys.argv[1:]
tg, tm, cg, cm = float(tg), float(tm), float(cg), float(cm)
print(f"{name:26s} wall gprof {tg:8.3f} s gmon {tm:7.3f} s = {tg / tm:5.1f}x | "
      f"cpu {cg:8.3f} s / {cm:7.3f} s = {cg / cm:5.1f}x | "
      f"maxrss {int(mg) // 1024} / {int(mm) // 1024} MiB | same output: {same}")
' "$name" "$t_gprof" "$t_gmon" "$c_gprof" "$c_gmon" "$m_gprof" "$m_gmon" "$same" | tee -a "$results"
}

# describe NAME EXE: the program's size.
describe() {
    say "$1: $(nm "$2" | grep -c ' [Tt] ' || true) text symbols," \
        ".text $(size -A "$2" | awk '$1==".text"{print $2}') bytes"
}

say "gmon gprof vs $("$gprof" --version | head -1); runs per case: at least $runs (line mode: 2), medians"
if wanted gen20k; then
    describe gen20k "$gen/prog"
    make_sum_set "$gen" prog
    bench "gen20k -b" "$gen" "$runs" -b prog prog.gmon1
    [ "$line" = 0 ] || bench "gen20k -b -l" "$gen" 2 -b -l prog prog.gmon1
    bench "gen20k -b (100 profiles)" "$gen" "$runs" -b prog $(cd "$gen" && ls sum100/*.gmon | sort -V)
fi
if wanted dense20k; then
    describe dense20k "$dense/prog"
    make_sum_set "$dense" prog
    bench "dense20k -b" "$dense" "$runs" -b prog prog.gmon4
    [ "$line" = 0 ] || bench "dense20k -b -l" "$dense" 2 -b -l prog prog.gmon4
    bench "dense20k -b (3 profiles)" "$dense" "$runs" -b prog prog.gmon1 prog.gmon2 prog.gmon3
    bench "dense20k -b (stale)" "$dense" "$runs" -b prog stale.gmon
    bench "dense20k -b (100 profiles)" "$dense" "$runs" -b prog \
        $(cd "$dense" && ls sum100/*.gmon | sort -V)
fi
if wanted small2k; then
    describe small2k "$small/prog"
    bench "small2k -b" "$small" "$runs" -b prog prog.gmon4
    [ "$line" = 0 ] || bench "small2k -b -l" "$small" "$runs" -b -l prog prog.gmon4
fi
if [ -n "$obj" ]; then
    describe objdump "$obj/objdump"
    make_sum_set "$obj" objdump
    bench "objdump -b" "$obj" "$runs" -b objdump objdump.gmon1
    [ "$line" = 0 ] || bench "objdump -b -l" "$obj" 2 -b -l objdump objdump.gmon1
    bench "objdump -b (100 profiles)" "$obj" "$runs" -b objdump $(cd "$obj" && ls sum100/*.gmon | sort -V)
fi
if [ -n "$extra" ]; then
    for d in "$extra"/*/; do
        [ -f "$d/prog" ] && [ -f "$d/gmon.out" ] || continue
        name=$(basename "$d")
        describe "$name" "$d/prog"
        bench "$name -b" "$d" "$runs" -b prog gmon.out
        [ "$line" = 0 ] || bench "$name -b -l" "$d" 2 -b -l prog gmon.out
    done
fi
echo "results in $results" >&2
