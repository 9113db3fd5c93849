#!/usr/bin/env bash
# broken.sh CASE_DIR CASE_NAME: broken inputs made from the case's real gmon.out (see battery.sh).
# Truncations, byte flips, an empty file, a directory, a missing file, an unwritable output path,
# a huge bin count in a tiny file. Every command must exit non-zero with `gmon: FILE: ...` (or
# succeed when the damage leaves a valid profile), never panic/abort, never leave an output file
# behind on failure.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
d=${1%/}; c=$2
prog=$d/prog
w=$out/work/$c/broken
rm -rf "$w"; mkdir -p "$w/in"
bad=0
# Damaged headers can claim gigabytes: keep every process here (ours and GNU gprof) under 4 GB of
# address space, so a missing bound shows up as a crash here instead of waking the OOM killer.
ulimit -v 4000000
orig=$d/gmon.out
size=$(stat -c %s "$orig")

# inputs
: > "$w/in/empty"
mkdir -p "$w/in/adir"
for off in 1 4 8 12 19 20 21 24 30 40 $((size / 3)) $((size / 2)) $((size - 1)) $((size - 5)); do
    [ "$off" -lt "$size" ] && head -c "$off" "$orig" > "$w/in/trunc-$off"
done
python3 - "$orig" "$w/in" <<'PY'
import random, struct, sys
data = open(sys.argv[1], "rb").read()
rnd = random.Random(12345)
for i in range(8):
    b = bytearray(data)
    for _ in range(rnd.choice([1, 3, 16])):
        # flips concentrated in the headers, where they matter most
        pos = rnd.randrange(0, min(len(b), 64)) if rnd.random() < 0.6 else rnd.randrange(len(b))
        b[pos] ^= 1 << rnd.randrange(8)
    open(f"{sys.argv[2]}/flip-{i}", "wb").write(b)
# GNU header + a histogram record that claims 2^32-1 bins in a few bytes
hdr = b"gmon" + struct.pack("<I", 1) + bytes(12)
hist = bytes([0]) + struct.pack("<QQI", 0x1000, 0x2000, 0xFFFFFFFF) + struct.pack("<I", 100) + b"seconds".ljust(15, b"\0") + b"s"
open(f"{sys.argv[2]}/hugebins", "wb").write(hdr + hist + bytes(16))
# a histogram with a range 2^64 wide and 4 bins
hist2 = bytes([0]) + struct.pack("<QQI", 0, 0xFFFFFFFFFFFFFFFF, 4) + struct.pack("<I", 100) + b"seconds".ljust(15, b"\0") + b"s" + bytes(8)
open(f"{sys.argv[2]}/hugerange", "wb").write(hdr + hist2)
# an arc record truncated in the middle; an unknown tag
open(f"{sys.argv[2]}/badtag", "wb").write(hdr + bytes([7]) + bytes(20))
# BSD 4.4 header claiming a huge ncnt
bsd = struct.pack("<QQiiiii", 0x1000, 0x2000, 0x7FFFFFF0, 0x00051879, 100, 0, 0) + bytes(12)
open(f"{sys.argv[2]}/bsdhuge", "wb").write(bsd + bytes(40))
PY

# 64-bit BSD copy whose first 300 arcs count 2^51 each: merging it to GNU would need ~1.6e8 arc
# records (each arc alone stays under the per-arc cap). Must be refused, not allocated.
if "$GMON" convert "$orig" --to bsd44 -o "$w/bsd44.tmp" 2> /dev/null; then
    "$GMON" dump "$w/bsd44.tmp" | grep -oE 'record [0-9]+ at 0x[0-9a-f]+: arc' | awk '{print $4}' | tr -d : > "$w/arcoffs"
    python3 - "$w/bsd44.tmp" "$w/arcoffs" "$w/in/manyarcs" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
for o in open(sys.argv[2]).read().split()[:300]:
    o = int(o, 16) + 16  # from_pc, self_pc, then the 8-byte count
    b[o:o + 8] = (1 << 51).to_bytes(8, "little")
open(sys.argv[3], "wb").write(b)
PY
    rm -f "$w/bsd44.tmp" "$w/arcoffs"
fi

check() { # check WHAT DIR EXPECT_FAIL OUTFILE INPUT
    local what=$1 dir=$2 must=$3 of=${4:-} in=${5:-}
    local rc; rc=$(cat "$dir/rc")
    local det=$dir/det
    { echo "cmd: $what"; echo "exit $rc"; head -3 "$dir/err"; } > "$det"
    if panicked "$dir/err" || [ "$rc" = 101 ] || [ "$rc" -ge 128 ]; then fail "$what: PANIC/crash (exit $rc)" "$det"; bad=1; return; fi
    if [ "$rc" = 0 ]; then
        if [ "$must" = 1 ]; then fail "$what: exit 0 on bad input" "$det"; bad=1; else pass "$what (accepted)"; fi
        return
    fi
    if [ -n "$of" ] && [ -e "$of" ]; then fail "$what: failed but left output $of" "$det"; bad=1; fi
    if ! grep -q '^gmon: ' "$dir/err"; then fail "$what: error not 'gmon: ...'" "$det"; bad=1; return; fi
    # merge may name the other input, whose combination with IN is what fails
    if [ -n "$in" ] && ! grep -qF "$in" "$dir/err" && ! { [[ $what == *merge* ]] && grep -qE "$orig|the sum of" "$dir/err"; }; then fail "$what: error does not name $in" "$det"; bad=1; return; fi
    if [ "$(wc -l < "$dir/err")" -gt 3 ]; then fail "$what: error spans $(wc -l < "$dir/err") lines" "$det"; bad=1; return; fi
    pass "$what: $(head -1 "$dir/err")"
}

gprof_like() { # gprof_like WHAT OURS GNU: same exit status and stderr (program name aside)
    local det=$2/det
    { echo "cmd: $1"; echo "exit ours $(cat "$2/rc") gnu $(cat "$3/rc")"; echo "ours:"; head -3 "$2/err"; echo "gnu:"; head -3 "$3/err"; } > "$det"
    if panicked "$2/err" || [ "$(cat "$2/rc")" = 101 ] || [ "$(cat "$2/rc")" -ge 128 ]; then fail "$1: PANIC/crash" "$det"; bad=1; return; fi
    if grep -qiE 'memory exhausted|cannot allocate|out of memory' "$3/err" && [ "$(cat "$2/rc")" = 1 ]; then
        pass "$1: GNU gprof runs out of memory, we fail cleanly: $(head -1 "$2/err")"; return; fi
    if [ "$(cat "$2/rc")" != "$(cat "$3/rc")" ]; then fail "$1: exit status differs from GNU gprof" "$det"; bad=1; return; fi
    if ! diff -q <(sed -E 's#^(/usr/bin/)?gprof: ##' "$3/err") <(sed -E 's#^(/usr/bin/)?gprof: ##; s#^gmon( gprof)?: ##' "$2/err") > /dev/null; then
        fail "$1: stderr differs from GNU gprof" "$det"; bad=1; return; fi
    if [ "$(cat "$2/rc")" = 0 ] && ! cmp -s "$2/out" "$3/out"; then fail "$1: stdout differs from GNU gprof" "$det"; bad=1; return; fi
    pass "$1: like GNU gprof (exit $(cat "$2/rc"))"
}

n=0
for f in "$w"/in/*; do
    b=$(basename "$f")
    must=0
    case $b in
        empty|adir|hugebins|badtag|bsdhuge) must=1 ;;
        # a truncation is bad unless it falls on a record boundary: GNU gprof is the judge
        trunc-*) (ulimit -v 2000000; "$GPROF" -b "$prog" "$f" > /dev/null 2>&1) || must=1 ;;
    esac
    for cmd in dump dumpjson gprof convert merge mergefirst flame folded pprof diff; do
        n=$((n + 1)); r=$w/r$n; o=$w/o$n; mkdir -p "$r"
        case $cmd in
            dump) run3 "$r" "$GMON" dump "$f"; of= ;;
            dumpjson) run3 "$r" "$GMON" dump --json "$f"; of= ;;
            gprof) run3 "$r" "$GMON" gprof -b "$prog" "$f"; of=
                   # gmon gprof speaks gprof's words: compare with GNU gprof instead
                   # GNU gprof allocates what the header claims (16 GB for hugebins: OOM killer),
                   # so it runs under a 2 GB address-space limit
                   (ulimit -v 2000000; run3 "$r/gnu" "$GPROF" -b "$prog" "$f")
                   gprof_like "gmon gprof $c/$b" "$r" "$r/gnu"; continue ;;
            convert) run3 "$r" "$GMON" convert "$f" --to bsd44 -o "$o"; of=$o ;;
            merge) run3 "$r" "$GMON" merge -o "$o" "$orig" "$f"; of=$o ;;
            mergefirst) run3 "$r" "$GMON" merge -o "$o" "$f" "$orig"; of=$o ;;
            flame) run3 "$r" "$GMON" flame --exe "$prog" -o "$o" "$f"; of=$o ;;
            folded) run3 "$r" "$GMON" flame --folded --exe "$prog" "$f"; of= ;;
            pprof) run3 "$r" "$GMON" pprof --exe "$prog" -o "$o" "$f"; of=$o ;;
            diff) run3 "$r" "$GMON" diff --exe "$prog" "$orig" "$f"; of= ;;
        esac
        check "gmon $cmd $c/$b" "$r" "$must" "$of" "$f"
    done
done

# missing input, missing executable, output into a directory that cannot exist
run3 "$w/m1" "$GMON" dump "$w/in/nonexistent"; check "gmon dump missing" "$w/m1" 1 "" "$w/in/nonexistent"
run3 "$w/m2" "$GMON" gprof -b "$w/in/noexe" "$orig"; run3 "$w/m2/gnu" "$GPROF" -b "$w/in/noexe" "$orig"; gprof_like "gmon gprof missing exe" "$w/m2" "$w/m2/gnu"
run3 "$w/m3" "$GMON" convert "$orig" --to gnu -o "$w/in/empty/x"; check "gmon convert into non-dir" "$w/m3" 1 "" "$w/in/empty/x"
run3 "$w/m4" "$GMON" merge -o "$w/in/adir" "$orig" "$orig"; check "gmon merge -o DIRECTORY" "$w/m4" 1 "" "$w/in/adir"
run3 "$w/m5" "$GMON" flame --exe "$prog" -o /proc/version "$orig"; check "gmon flame -o /proc/version" "$w/m5" 1 "" ""
run3 "$w/m6" "$GMON" gprof -b "$orig" "$orig"; run3 "$w/m6/gnu" "$GPROF" -b "$orig" "$orig"; gprof_like "gmon gprof with gmon.out as the executable" "$w/m6" "$w/m6/gnu"
run3 "$w/m7" "$GMON" gprof -b "$prog" "$w/in/adir"; run3 "$w/m7/gnu" "$GPROF" -b "$prog" "$w/in/adir"; gprof_like "gmon gprof with a directory as gmon" "$w/m7" "$w/m7/gnu"
run3 "$w/m8" "$GMON" pprof --exe "$prog" -o "$w/in/adir" "$orig"; check "gmon pprof -o DIRECTORY" "$w/m8" 1 "" "$w/in/adir"
exit $bad
