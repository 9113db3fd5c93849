#!/usr/bin/env bash
# scripts/qa/build-progs2.sh [OUT_DIR] [CASE_PATTERN]
#
# Builds the second QA round's programs (large C++ and C code bases from Debian packages and a
# PyPI sdist, with the drivers in scripts/qa/progs2/) with -pg -g in several link modes and
# optimization levels, runs each three times, and lays out OUT_DIR (default
# $QA_SCRATCH/progs2) the way battery.sh expects: OUT_DIR/<case>/{prog,gmon.out,gmon.2.out,
# gmon.3.out,sources}. Needs: apt-get install googletest libeigen3-dev libboost-dev
# libboost-graph-dev nlohmann-json3-dev rapidjson-dev; the zstd case needs the `zstandard`
# sdist unpacked (pip download --no-binary :all: --no-deps zstandard) at $ZSTD_SDIST
# (default $QA_SCRATCH/src2/zstandard-0.25.0). Cases are built two at a time (JOBS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/progs2
QA_SCRATCH=${QA_SCRATCH:-$(cd "$(dirname "$0")/../.." && pwd)/target/qa-scratch}
out=${1:-$QA_SCRATCH/progs2}
pat=${2:-.}
ZSTD_SDIST=${ZSTD_SDIST:-$QA_SCRATCH/src2/zstandard-0.25.0}
JOBS=${JOBS:-2}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The cases: NAME LINK OPT. LINK is pie (-fPIE -pie), nopie (-fno-pie -no-pie) or static
# (-static; objects as for pie).
cases="
eigen pie O0
eigen nopie O0
eigen nopie O2
eigen static O2
boostg pie O2
boostg nopie O0
boostg static O2
json pie O0
json nopie O2
json static O0
gtest pie O0
gtest nopie O2
gtest static O2
zstd pie O2
zstd nopie O0
zstd static O2
"

build_one() {
    local name=$1 link=$2 opt=$3
    local d=$out/$name-$link-$opt
    local cf=(-pg -g "-$opt") lf=(-pg)
    case $link in
        pie) cf+=(-fPIE); lf+=(-pie) ;;
        nopie) cf+=(-fno-pie); lf+=(-no-pie) ;;
        static) cf+=(-fPIE); lf+=(-static) ;;
    esac
    rm -rf "$d"; mkdir -p "$d/obj"
    local cxx=(g++ -std=c++17 "${cf[@]}")
    local log=$d/build.log
    {
    case $name in
        eigen)  "${cxx[@]}" -I/usr/include/eigen3 -c "$src/eigen.cc" -o "$d/obj/eigen.o"
                g++ "${lf[@]}" "$d/obj/eigen.o" -o "$d/prog" ;;
        boostg) "${cxx[@]}" -pthread -c "$src/boostg.cc" -o "$d/obj/boostg.o"
                g++ "${lf[@]}" -pthread "$d/obj/boostg.o" -o "$d/prog" ;;
        json)   "${cxx[@]}" -pthread -c "$src/json.cc" -o "$d/obj/json.o"
                g++ "${lf[@]}" -pthread "$d/obj/json.o" -o "$d/prog" ;;
        gtest)
            local gt=/usr/src/googletest
            local inc=(-I"$gt/googletest/include" -I"$gt/googletest" -I"$gt/googlemock/include" -I"$gt/googlemock")
            local objs=()
            for f in "$gt/googletest/src/gtest-all.cc" "$gt/googlemock/src/gmock-all.cc" \
                     "$gt/googlemock/src/gmock_main.cc" "$src/gtest_heavy.cc" \
                     "$gt"/googletest/samples/sample{1,2,4}.cc \
                     "$gt"/googletest/samples/sample{1,2,3,4,5,6,7,8}_unittest.cc; do
                local o=$d/obj/$(basename "$f" .cc).o
                "${cxx[@]}" -pthread "${inc[@]}" -c "$f" -o "$o"
                objs+=("$o")
            done
            g++ "${lf[@]}" -pthread "${objs[@]}" -o "$d/prog" ;;
        zstd)
            gcc "${cf[@]}" -pthread -DZSTD_MULTITHREAD -I"$ZSTD_SDIST/zstd" -c "$ZSTD_SDIST/zstd/zstd.c" -o "$d/obj/zstd.o"
            gcc "${cf[@]}" -I"$ZSTD_SDIST/zstd" -c "$src/zstdq.c" -o "$d/obj/zstdq.o"
            gcc "${lf[@]}" -pthread "$d/obj/zstd.o" "$d/obj/zstdq.o" -o "$d/prog" ;;
    esac
    # Three runs of different lengths: gmon.out, gmon.2.out, gmon.3.out.
    local i=0
    for budget in 1.5 0.6 1.0; do
        i=$((i + 1))
        rm -f "$d/gmon.out.tmp"
        if [ "$name" = gtest ]; then
            (cd "$d" && QA_BUDGET=$budget ./prog --gtest_brief=1 > "run$i.txt")
        else
            (cd "$d" && ./prog "$budget" > "run$i.txt")
        fi
        [ $i -gt 1 ] && mv "$d/gmon.out" "$d/gmon.$i.out.new"
        [ $i -eq 1 ] && mv "$d/gmon.out" "$d/gmon.first"
    done
    mv "$d/gmon.first" "$d/gmon.out"
    for j in 2 3; do mv "$d/gmon.$j.out.new" "$d/gmon.$j.out"; done
    echo "$d" > "$d/sources"
    } > "$log" 2>&1 || { echo "FAILED: $d (see $log)" >&2; return 1; }
    echo "built $d" >&2
}
export -f build_one
export out src ZSTD_SDIST

echo "$cases" | grep -E . | grep -E -- "$pat" |
    xargs -P "$JOBS" -L 1 bash -c 'build_one "$@"' _
