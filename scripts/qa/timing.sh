#!/usr/bin/env bash
# timing.sh CASE_DIR... : wall time, CPU time and max RSS of GNU gprof and `gmon gprof` for -b and
# -b -l on each case's gmon.out, and for -b on the sum of 100 profiles (the case's runs repeated).
# Best of REPS (default 3) runs by wall time. Prints a TSV table on stdout.
# Env: GMON (default: this checkout's target/release/gmon), GPROF (default /usr/bin/gprof), REPS.
set -uo pipefail
GMON=${GMON:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/gmon}
GPROF=${GPROF:-/usr/bin/gprof}
REPS=${REPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'case\topts\ttool\twall_s\tcpu_s\tmaxrss_kb\n'
measure() { # measure CASE LABEL TOOL CMD...: best-of-REPS line
    local c=$1 label=$2 tool=$3; shift 3
    local best="" line
    for _ in $(seq "$REPS"); do
        /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" > /dev/null 2> /dev/null
        line=$(tail -1 "$tmp/t" | awk '{printf "%.2f\t%.2f\t%d", $1, $2 + $3, $4}' )
        if [ -z "$best" ] || awk -v a="${line%%$'\t'*}" -v b="${best%%$'\t'*}" 'BEGIN{exit !(a < b)}'; then best=$line; fi
    done
    printf '%s\t%s\t%s\t%s\n' "$c" "$label" "$tool" "$best"
}
for d in "$@"; do
    d=${d%/}; c=$(basename "$d")
    for opts in "-b" "-b -l"; do
        read -ra o <<< "$opts"
        measure "$c" "$opts" gnu "$GPROF" "${o[@]}" "$d/prog" "$d/gmon.out"
        measure "$c" "$opts" gmon "$GMON" gprof "${o[@]}" "$d/prog" "$d/gmon.out"
    done
    runs=("$d"/gmon.out "$d"/gmon.[0-9]*.out)
    many=()
    for i in $(seq 0 99); do many+=("${runs[$((i % ${#runs[@]}))]}"); done
    measure "$c" "-b x100" gnu "$GPROF" -b "$d/prog" "${many[@]}"
    measure "$c" "-b x100" gmon "$GMON" gprof -b "$d/prog" "${many[@]}"
done
