#!/usr/bin/env bash
# scripts/qa/build-progs2-variants.sh [OUT_DIR]
#
# Build-option traps for the second QA round (same drivers as build-progs2.sh): compressed
# debug sections (-gz), DWARF 4, split DWARF (.dwo files), LTO, a separate debug file reached
# through .gnu_debuglink, -ffunction-sections with --gc-sections, clang (when installed) and
# -m32 (when g++-multilib is installed). ONLY_M32=1 builds only the -m32 cases.
# Each case: OUT_DIR/<name>/{prog,gmon.out,gmon.2.out,sources}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/progs2
QA_SCRATCH=${QA_SCRATCH:-$(cd "$(dirname "$0")/../.." && pwd)/target/qa-scratch}
out=${1:-$QA_SCRATCH/progs2v}
ZSTD_SDIST=${ZSTD_SDIST:-$QA_SCRATCH/src2/zstandard-0.25.0}
mkdir -p "$out"; out=$(cd "$out" && pwd)

runs() { # runs DIR CMD...: two runs -> gmon.out, gmon.2.out
    local d=$1; shift
    (cd "$d" && "$@" 1.0 > run1.txt && mv gmon.out gmon.first && "$@" 0.5 > run2.txt &&
        mv gmon.out gmon.2.out && mv gmon.first gmon.out)
    echo "$d" > "$d/sources"
}
zstd() { # zstd NAME CC FLAGS...
    local name=$1 cc=$2; shift 2
    local d=$out/$name; rm -rf "$d"; mkdir -p "$d"
    (cd "$d" && $cc -pg "$@" -pthread -DZSTD_MULTITHREAD -I"$ZSTD_SDIST/zstd" "$ZSTD_SDIST/zstd/zstd.c" "$src/zstdq.c" -o prog)
    runs "$d" ./prog
    echo "built $d" >&2
}
json() { # json NAME CXX FLAGS...
    local name=$1 cxx=$2; shift 2
    local d=$out/$name; rm -rf "$d"; mkdir -p "$d"
    (cd "$d" && $cxx -std=c++17 -pg "$@" -pthread "$src/json.cc" -o prog)
    runs "$d" ./prog
    echo "built $d" >&2
}
[ -n "${ONLY_M32:-}" ] || {
zstd zstd-gz-O2 gcc -g -O2 -gz
json json-gz-O0 g++ -g -O0 -gz
zstd zstd-dwarf4-O2 gcc -gdwarf-4 -O2
json json-dwarf4-O2 g++ -gdwarf-4 -O2
zstd zstd-lto-O2 gcc -g -O2 -flto=2
zstd zstd-gcsec-O2 gcc -g -O2 -ffunction-sections -fdata-sections -Wl,--gc-sections
json json-split-O2 g++ -g -O2 -gsplit-dwarf
json json-g3-O0 g++ -g3 -O0 -no-pie
# separate debug file: prog keeps symbols, its DWARF is in prog.debug (found via .gnu_debuglink)
zstd zstd-debuglink-O2 gcc -g -O2
(cd "$out/zstd-debuglink-O2" && objcopy --only-keep-debug prog prog.debug && strip --strip-debug prog &&
    objcopy --add-gnu-debuglink=prog.debug prog)
if command -v clang > /dev/null; then
    zstd zstd-clang-O2 clang -g -O2
    zstd zstd-clang-O0 clang -g -O0
    json json-clang-O2 clang++ -g -O2
    json json-clang-O0 clang++ -g -O0
fi
}
# 32-bit (needs g++-multilib): C++ names and DWARF in a 32-bit ELF, 32-bit gmon.out
if echo 'int main(){}' | g++ -m32 -x c++ - -o /dev/null 2> /dev/null; then
    json json-m32-O2 g++ -m32 -g -O2 -no-pie
    json json-m32-O0 g++ -m32 -g -O0
fi
