#!/usr/bin/env bash
# scripts/qa/symspecs.sh PROGS_DIR OUT_DIR
#
# Symspec option sets built from each case's own sources and functions (file:, file:line,
# file:name, mangled names, arcs a/b), GNU gprof vs `gmon gprof`: stdout, stderr, exit status.
# The case's source files are taken from the executable's DWARF (names ending in .c/.cc/.cpp that
# exist); the functions are the most called ones of `gprof -b -p`. Both tools run with
# --no-demangle in front (EXTRA, default) so that demangling differences do not hide the rest.
# Env: GMON, GPROF as in battery.sh. Writes OUT_DIR/summary.txt and OUT_DIR/fail/*.diff.
set -uo pipefail
progs=$(cd "${1:?usage: symspecs.sh PROGS_DIR OUT_DIR}" && pwd)
out=${2:?}
mkdir -p "$out/fail" "$out/bin"; out=$(cd "$out" && pwd)
GMON=${GMON:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/gmon}; GPROF=${GPROF:-/usr/bin/gprof}
EXTRA=${EXTRA---no-demangle}
ln -sf "$GPROF" "$out/bin/gprof"
: > "$out/summary.txt"
n=0
for d in "$progs"/*/; do
    d=${d%/}; c=$(basename "$d")
    [ -f "$d/prog" ] && [ -f "$d/gmon.out" ] || continue
    w=$out/work/$c; rm -rf "$w"; mkdir -p "$w"
    # sources: DWARF names of compile units that exist on disk, our own files first
    mapfile -t srcs < <(readelf --debug-dump=info "$d/prog" 2>/dev/null | awk '/DW_AT_name/ && /\.(c|cc|cpp)$/ {print $NF}' |
        while read -r s; do [ -f "$s" ] && echo "$s"; done | awk '!seen[$0]++' | head -3)
    mapfile -t fns < <(cd "$w" && "$GPROF" --no-demangle -b -p "$d/prog" "$d/gmon.out" 2>/dev/null |
        awk 'NR>5 && NF>=7 {print $NF}' | head -4)
    sets=()
    for s in "${srcs[@]}"; do
        b=$(basename "$s")
        line=$(grep -n -m1 -E '^(int|static|double|long|void)' "$s" | cut -d: -f1)
        sets+=("-b -p$b:" "-b -q$b:" "-b -P$b:" "-b -F $b:" "-b -E $b:" "-b -n $b:" "-b -N $b:"
               "-b -f $b:" "-b -e $b:" "-b -p$b:${line:-1}" "-b -C$b:" "-b -l -p$b:" "-b -z -p$b:")
    done
    for f in "${fns[@]}"; do
        sets+=("-b -p$f" "-b -q$f" "-b -F $f" "-b -E $f" "-b -k main/$f" "-b -q$f/$f" "-b -Q$f")
        for s in "${srcs[@]:0:1}"; do sets+=("-b -p$(basename "$s"):$f"); done
    done
    sets+=("-b -k main/main" "-b -m 1000" "-b -a" "-b -D" "-b -a -c" "-b -z -c" "-b -T -z" "-b -i" "-b -w 1000" "-b -t 3 -C")
    for set in "${sets[@]}"; do
        n=$((n + 1))
        read -ra o <<< "$EXTRA $set"
        r=$w/$n; mkdir -p "$r/g" "$r/o"
        (cd "$r/g" && PATH="$out/bin:$PATH" gprof "${o[@]}" "$d/prog" "$d/gmon.out" > out 2> err; echo $? > rc)
        (cd "$r/o" && "$GMON" gprof "${o[@]}" "$d/prog" "$d/gmon.out" > out 2> err; echo $? > rc)
        if cmp -s "$r/g/out" "$r/o/out" && cmp -s "$r/g/err" "$r/o/err" && cmp -s "$r/g/rc" "$r/o/rc"; then
            echo "PASS $c [$set]" >> "$out/summary.txt"; rm -rf "$r"
        else
            echo "FAIL $c [$set] -> $out/fail/$c-$n.diff" >> "$out/summary.txt"
            { echo "cd $r/o && $GMON gprof ${o[*]} $d/prog $d/gmon.out"; echo "rc gnu $(cat "$r/g/rc") ours $(cat "$r/o/rc")";
              diff "$r/g/err" "$r/o/err" | head -10; diff "$r/g/out" "$r/o/out" | head -40; } > "$out/fail/$c-$n.diff"
        fi
    done
    echo "done $c" >&2
done
echo "symspecs: $(grep -c ^PASS "$out/summary.txt") pass, $(grep -c ^FAIL "$out/summary.txt") fail -> $out/summary.txt" >&2
