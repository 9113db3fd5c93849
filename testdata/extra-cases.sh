#!/usr/bin/env bash
# Extra cases for gmon gprof's golden tests: programs and crafted profiles that
# reach the gprof traps the main corpus (regen.sh) does not reach. Writes
#   cases/traps-pie-O0/, cases/traps-nopie-O0/   testdata/programs/traps
#   cases/many-pie-O0/                           testdata/programs/many (gen.py 10050)
#   cases/names-pie-O0/                          testdata/programs/names (mangled names)
#   cases/cxxnames-pie-O0/                       testdata/programs/cxxnames (C++ names that
#                                                demangle differently: literals, lambdas, ...)
# and, in cases/traps-pie-O0/, profiles crafted from its gmon.out:
#   arcs-only.gmon   no histogram (hz = 0: -nan times)       hist-only.gmon  no arcs
#   split.gmon       the histogram as two disjoint records    overlap.gmon    two overlapping records
#   split-text.gmon  split inside a function (fatal for -c)
#   cycles-dim.gmon  dimension "cycles"/'c', rate 1000000     scale2.gmon     hist_scale exactly 2
#   lastsym.gmon     samples beyond the last symbol's start   bb.gmon         plus a basic-block record
#   rate50.gmon      prof_rate 50 (later files' rates are ignored)
#   empty.gmon       header only        short.gmon      10 bytes        badtag.gmon   tag 7
#   badversion.gmon  version 2          truncated.gmon  cut in the bins
#   negversion.gmon  version 0x80000001 (printed signed)
#   nm.txt           `nm --defined-only prog`, for -S
# Then run testdata/gprof-goldens.sh for these cases.
#
# Usage: testdata/extra-cases.sh [--no-build] [CASE...]
#   CASE   only (re)build these cases and write their goldens (default: all)
set -euo pipefail
export LC_ALL=C LANG=C TZ=UTC
unset GMON_OUT_PREFIX || true
here=$(cd "$(dirname "$0")" && pwd)
build=1
[ "${1:-}" = --no-build ] && build=0 && shift
only=("$@")

build_case() { # name program link opt sources...
	local name=$1 prog=$2 link=$3 opt=$4
	shift 4
	local src=$here/programs/$prog dir=$here/cases/$name flags cc=gcc
	if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then return 0; fi
	[[ " $* " == *.cpp\ * ]] && cc=g++
	case $link in
	pie) flags="-fPIE -pie" ;;
	nopie) flags="-fno-pie -no-pie" ;;
	esac
	mkdir -p "$dir"
	rm -f "$dir"/gmon*.out "$dir"/*.gmon
	local cmd="$cc -pg -g -$opt $flags -fdebug-prefix-map=$src=. $* -o $dir/prog"
	(cd "$src" && eval "$cmd")
	(cd "$dir" && ./prog >/dev/null)
	{
		echo "case:     $name"
		echo "program:  testdata/programs/$prog"
		echo "compile:  (cd testdata/programs/$prog && ${cmd//$here\/cases\/$name\//})"
		echo "compiler: $($cc --version | head -1)"
		echo "run 1:    ./prog -> gmon.out"
	} >"$dir/build.txt"
}

if [ $build -eq 1 ]; then
	build_case traps-pie-O0 traps pie O0 traps.c traps_asm.S
	build_case traps-nopie-O0 traps nopie O0 traps.c traps_asm.S
	(cd "$here/programs/many" && python3 gen.py 10050)
	build_case many-pie-O0 many pie O0 many.c
	build_case names-pie-O0 names pie O0 names.c
	build_case cxxnames-pie-O0 cxxnames pie O0 cxxnames.cpp
	rm -f "$here/programs/many/many.c"
fi

# An nm-style symbol file for gprof -S.
nm --defined-only "$here/cases/traps-pie-O0/prog" >"$here/cases/traps-pie-O0/nm.txt"

# The .strtab neighbours the traps rely on.
readelf -p .strtab "$here/cases/traps-pie-O0/prog" | grep -A1 -E 'aa\.constprop\.0|cc\.constprop\.0' | sed 's/^/strtab: /'

python3 - "$here/cases/traps-pie-O0" <<'PY'
import struct, sys, os
d = sys.argv[1]
data = open(os.path.join(d, "gmon.out"), "rb").read()
hdr, body = data[:20], data[20:]
# Parse the GNU records of a little-endian 64-bit file.
recs, i = [], 0
while i < len(body):
    tag = body[i]
    if tag == 0:
        lo, hi, n, rate = struct.unpack_from("<QQII", body, i + 1)
        dim, ab = body[i + 25:i + 40], body[i + 40:i + 41]
        bins = list(struct.unpack_from("<%dH" % n, body, i + 41))
        recs.append(("h", lo, hi, rate, dim, ab, bins))
        i += 41 + 2 * n
    elif tag == 1:
        recs.append(("a", body[i + 1:i + 21]))
        i += 21
    else:
        raise SystemExit("unexpected tag %d" % tag)

def hist(lo, hi, rate, dim, ab, bins):
    return bytes([0]) + struct.pack("<QQII", lo, hi, len(bins), rate) + dim + ab + struct.pack("<%dH" % len(bins), *bins)

def arcs():
    return b"".join(b"\x01" + r[1] for r in recs if r[0] == "a")

h = [r for r in recs if r[0] == "h"][0]
_, lo, hi, rate, dim, ab, bins = h
def w(name, content):
    open(os.path.join(d, name), "wb").write(content)
w("arcs-only.gmon", hdr + arcs())
w("hist-only.gmon", hdr + hist(*h[1:]))
# Two disjoint records at a bin boundary that is a multiple of 4 bytes apart.
half = len(bins) // 2
mid = lo + (hi - lo) * half // len(bins)
mid -= (mid - lo) % 4
k = (mid - lo) // 4
w("split.gmon", hdr + hist(mid, hi, rate, dim, ab, bins[k:k + (hi - mid) // 4]) + hist(lo, mid, rate, dim, ab, bins[:k]) + arcs())
# The same split at an address inside the code, so that one function spans both records.
mid2 = lo + 4 * ((0x1260 - lo) // 4)
k2 = (mid2 - lo) // 4
w("split-text.gmon", hdr + hist(lo, mid2, rate, dim, ab, bins[:k2]) + hist(mid2, hi, rate, dim, ab, bins[k2:k2 + (hi - mid2) // 4]) + arcs())
w("overlap.gmon", hdr + hist(lo, mid + 64, rate, dim, ab, bins[:k + 16]) + hist(mid, hi, rate, dim, ab, bins[k:k + (hi - mid) // 4]) + arcs())
cyc = b"cycles" + b"\0" * 9
w("cycles-dim.gmon", hdr + hist(lo, hi, 1000000, cyc, b"c", bins) + arcs())
n2 = (hi - lo) // 4
w("scale2.gmon", hdr + hist(lo, lo + 4 * n2, rate, dim, ab, bins[:n2]) + arcs())
# Extend the histogram far past the end of the text and put samples everywhere there.
extra = 4096
w("lastsym.gmon", hdr + hist(lo, hi + 4 * extra, rate, dim, ab, bins + [3] * extra) + arcs())
bb = bytes([2]) + struct.pack("<I", 1) + struct.pack("<QQ", lo + 0x1000, 5)
w("bb.gmon", data + bb)
w("rate50.gmon", hdr + hist(lo, hi, 50, dim, ab, bins) + arcs())
w("empty.gmon", hdr)
w("short.gmon", data[:10])
w("badtag.gmon", data + b"\x07")
w("badversion.gmon", b"gmon" + struct.pack("<I", 2) + data[8:])
w("truncated.gmon", data[:20 + 41 + 100])
# Version 0x80000001: gprof prints it with %d (negative).
w("negversion.gmon", b"gmon" + struct.pack("<I", 0x80000001) + data[8:])
PY
if [ ${#only[@]} -gt 0 ]; then
	bash "$here/gprof-goldens.sh" "${only[@]}"
else
	bash "$here/gprof-goldens.sh" 'traps-*' 'many-*' 'names-*' 'cxxnames-*'
fi
