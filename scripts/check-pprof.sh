#!/usr/bin/env bash
# check-pprof.sh [CASE...]
# Runs Go's real `pprof` on what `gmon pprof` writes for testdata cases, and checks that
# `pprof -top` shows, per function, the same flat (self) time as the gprof flat profile.
# Also runs `pprof -traces`, `-raw`, `-svg` and `-sample_index=calls -top`, which must succeed.
#
# Needs `pprof` on PATH or in $PPROF (.ci/run builds one into target/tools).
# Uses $GMON as the gmon binary if set, else builds it.
# Default cases: every testdata/cases/* with a gmon.out. Prints one line per function compared
# and a summary; exits non-zero on the first mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
pprof=${PPROF:-$(command -v pprof || true)}
if [ -z "$pprof" ] || [ ! -x "$pprof" ]; then
    echo "check-pprof: no pprof (set PPROF or put it on PATH; see .ci/run)" >&2
    exit 2
fi
if [ -n "${GMON:-}" ]; then
    gmon=$GMON
else
    cargo build -q -p gmon-tools --bin gmon
    gmon=${CARGO_TARGET_DIR:-target}/debug/gmon
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
    for d in testdata/cases/*/; do [ -f "$d/gmon.out" ] && cases+=("$(basename "$d")"); done
fi

compared=0
lines_compared=0
for c in "${cases[@]}"; do
    dir=testdata/cases/$c
    out=$work/$c.pb.gz
    "$gmon" pprof --exe "$dir/prog" "$dir/gmon.out" -o "$out"
    # Every view must work on our file.
    for view in -traces -raw; do "$pprof" "$view" "$out" > "$work/$c$view.txt"; done
    if command -v dot >/dev/null; then
        "$pprof" -svg -output "$work/$c.svg" "$out" 2>/dev/null
        grep -q '<svg' "$work/$c.svg"
    else
        [ "$c" = "${cases[0]}" ] && echo "check-pprof: pprof -svg skipped: it needs Graphviz's dot (apt-get install graphviz)" >&2
    fi
    "$pprof" -sample_index=calls -top "$out" > "$work/$c.calls.txt"
    # -noinlines: gprof credits a function with the code inlined into it.
    "$pprof" -top -noinlines -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=ns "$out" \
        > "$work/$c.top.txt" 2>/dev/null
    if grep -q '<unknown>' "$work/$c.top.txt"; then
        echo "check-pprof: $c: a frame lost its name in pprof (<unknown>)" >&2
        exit 1
    fi
    /usr/bin/gprof -b -p "$dir/prog" "$dir/gmon.out" > "$work/$c.flat.txt" 2>/dev/null || true
    n=$(python3 - "$work/$c.top.txt" "$work/$c.flat.txt" "$c" <<'PY'
import re, sys
top, flat, case = sys.argv[1:4]
def pprof_flat(path):
    res = {}
    started = False
    for line in open(path):
        if re.match(r'\s*flat\s+flat%', line):
            started = True
            continue
        if not started or not line.strip():
            continue
        m = re.match(r'\s*(\d+)ns\s+\S+\s+\S+\s+\S+\s+\S+\s+(.*)$', line)
        if m:
            v = int(m.group(1)) / 1e9
            res[m.group(2).strip()] = res.get(m.group(2).strip(), 0.0) + v
    return res
def gprof_flat(path):
    res = {}
    for line in open(path):
        m = re.match(r'\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+(?:\d+\s+[\d.]+\s+[\d.]+\s+)?(\S.*)$', line)
        if m and not line.lstrip().startswith('%'):
            # Same-named functions (statics of two files): pprof adds them up by name.
            res[m.group(2).strip()] = res.get(m.group(2).strip(), 0.0) + float(m.group(1))
    return res
p, g = pprof_flat(top), gprof_flat(flat)
bad = 0
n = 0
for name, secs in sorted(g.items()):
    if secs == 0.0:
        continue
    ours = p.get(name)
    if ours is None:
        # pprof may drop the parameter list of a C++ name.
        short = re.sub(r'\(.*\)( const)?$', '', name)
        ours = p.get(short, 0.0)
    n += 1
    # gprof prints self seconds with two decimals; pprof's value must print the same.
    status = 'ok' if f"{ours:.2f}" == f"{secs:.2f}" else 'MISMATCH'
    if status != 'ok':
        bad += 1
    print(f"{case}: {name}: gprof self {secs:.2f}s, pprof flat {ours:.6f}s {status}", file=sys.stderr)
for name, secs in p.items():
    base = re.sub(r'\(.*\)( const)?$', '', name)
    if secs > 0 and name not in g and not any(re.sub(r'\(.*\)( const)?$', '', k) == base for k in g):
        print(f"{case}: {name}: only in pprof ({secs:.3f}s) MISMATCH", file=sys.stderr)
        bad += 1
print(n)
sys.exit(1 if bad else 0)
PY
)
    compared=$((compared + n))
    # Per source line: pprof -lines against gprof -l (when gprof -l accepts the program; it
    # prints one entry per line-table address, added up here per line, while pprof's
    # locations are the histogram's bins: spec/stacks.md §7).
    if /usr/bin/gprof -b -l -p "$dir/prog" "$dir/gmon.out" > "$work/$c.lflat.txt" 2>/dev/null; then
        "$pprof" -top -lines -nodecount=100000 -nodefraction=0 -edgefraction=0 -unit=ns "$out" \
            > "$work/$c.ltop.txt" 2>/dev/null
        n=$(python3 - "$work/$c.ltop.txt" "$work/$c.lflat.txt" "$c" <<'PY'
import re, sys
top, flat, case = sys.argv[1:4]
p, g, entries = {}, {}, {}
started = False
for line in open(top):
    if re.match(r'\s*flat\s+flat%', line):
        started = True
        continue
    # An inlined function's line ends in " (inline)".
    m = re.match(r'\s*(\d+)ns\s+\S+\s+\S+\s+\S+\s+\S+\s+.*\s(\S+:\d+)(?: \(inline\))?$', line) if started else None
    if m:
        key = m.group(2).split('/')[-1]
        p[key] = p.get(key, 0.0) + int(m.group(1)) / 1e9
for line in open(flat):
    m = re.match(r'\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+(?:\d+\s+[\d.]+\s+[\d.]+\s+)?.*\((\S+:\d+) @ ([0-9a-f]+)\)$', line)
    if m and float(m.group(1)) > 0:
        key = m.group(2)
        g[key] = g.get(key, 0.0) + float(m.group(1))
        entries[key] = entries.get(key, 0) + 1
bad = 0
for key in sorted(set(p) | set(g)):
    ours, theirs = p.get(key, 0.0), g.get(key, 0.0)
    # gprof prints each entry rounded to 0.01 s: a line of k entries may differ by k halves.
    ok = abs(ours - theirs) <= 0.005 * max(entries.get(key, 1), 1) + 1e-9
    bad += not ok
    print(f"{case}: line {key}: gprof -l {theirs:.2f}s, pprof -lines {ours:.6f}s {'ok' if ok else 'MISMATCH'}", file=sys.stderr)
print(len(set(p) | set(g)))
sys.exit(1 if bad else 0)
PY
)
        lines_compared=$((lines_compared + n))
    fi
done
echo "check-pprof: $lines_compared source lines: pprof -lines flat == gprof -l self seconds"
echo "check-pprof: ${#cases[@]} cases, $compared functions: pprof -top flat == gprof self seconds"
