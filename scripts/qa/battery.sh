#!/usr/bin/env bash
# scripts/qa/battery.sh PROGS_DIR [OUT_DIR]
#
# QA battery: runs `gmon` against GNU gprof 2.40 and checks every other subcommand on profiles
# of real programs that the test suite has never seen. Nothing here builds or runs the programs
# themselves: PROGS_DIR holds one directory per case, prepared beforehand (by hand or by a
# local recipe that is not committed), each with
#   prog                 the executable, built with -pg -g
#   gmon.out             the first run's profile; gmon.2.out, gmon.3.out ... further runs (optional)
#   plain + record.args  optional: the same program without -pg and the arguments (one per line)
#                        of a run, for `gmon record` (record.stdin: optional stdin for it)
#   gmon.out with sources: -A is tried only when the file `sources` exists (a directory to run in)
#
# Env: GMON (default: this checkout's target/release/gmon), GPROF (default /usr/bin/gprof),
#      PPROF (Go pprof; optional), SKIP_LINE=1 to leave out -l (slow in GNU gprof on big -O2 code),
#      ONLY=gprof|other|broken to run one part.
# Writes OUT_DIR/summary.txt (one line per check: PASS/FAIL/TIME and what), OUT_DIR/fail/<n>.txt
# (command, first differing lines) and OUT_DIR/times.tsv. Exit status 1 when anything failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
progs=$(cd "${1:?usage: battery.sh PROGS_DIR [OUT_DIR]}" && pwd)
out=${2:-$(mktemp -d /tmp/qa-battery.XXXXXX)}
mkdir -p "$out/fail" "$out/work"
out=$(cd "$out" && pwd)
GMON=${GMON:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/gmon}
GPROF=${GPROF:-/usr/bin/gprof}
PPROF=${PPROF:-}
ONLY=${ONLY:-}
export GMON GPROF PPROF out here
: > "$out/summary.txt"
printf 'case\topts\ttool\twall_s\tmaxrss_kb\n' > "$out/times.tsv"
nfail=0

for d in "$progs"/*/; do
    c=$(basename "$d")
    [ -f "$d/prog" ] && [ -f "$d/gmon.out" ] || continue
    echo "== $c" >&2
    for part in gprof other broken; do
        [ -n "$ONLY" ] && [ "$ONLY" != "$part" ] && continue
        "$here/$part.sh" "$d" "$c" || nfail=$((nfail + 1))
    done
done
echo "summary: $(grep -c '^PASS' "$out/summary.txt") pass, $(grep -c '^FAIL' "$out/summary.txt") fail -> $out/summary.txt" >&2
[ "$(grep -c '^FAIL' "$out/summary.txt")" -eq 0 ]
