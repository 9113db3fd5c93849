#!/usr/bin/env bash
# gprof.sh CASE_DIR CASE_NAME: `gmon gprof` vs GNU gprof on one case (see battery.sh).
# Compares stdout bytes, stderr and exit status for each option set; -b/-b -l are also timed.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
d=${1%/}; c=$2
prog=$d/prog
gmons=("$d"/gmon.out)
for g in "$d"/gmon.[0-9]*.out; do [ -f "$g" ] && gmons+=("$g"); done
w=$out/work/$c/gprof
mkdir -p "$w"
bad=0

# compare NAME OPTS... -- FILES...: runs both tools in fresh directories.
compare() {
    local name=$1; shift
    local opts=() files=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
    files=("$@")
    local g=$w/$name/gnu o=$w/$name/ours
    rm -rf "$w/$name"; mkdir -p "$g" "$o"
    local rundir=$g
    (cd "$g" && run3 . "$GPROF" "${opts[@]}" "$prog" "${files[@]}")
    (cd "$o" && run3 . "$GMON" gprof "${opts[@]}" "$prog" "${files[@]}")
    local what="gprof $c [${opts[*]}] ${#files[@]} file(s)"
    local det=$w/$name/detail
    {
        echo "cmd: cd $o && $GMON gprof ${opts[*]} $prog ${files[*]}"
        echo "ref: cd $g && $GPROF ${opts[*]} $prog ${files[*]}"
        echo "exit: gnu=$(cat "$g/rc") ours=$(cat "$o/rc")"
        echo "stderr gnu:";  head -5 "$g/err"
        echo "stderr ours:"; head -5 "$o/err"
    } > "$det"
    if panicked "$o/err"; then fail "$what: PANIC" "$det"; bad=1; return; fi
    if [ "$(cat "$g/rc")" != "$(cat "$o/rc")" ]; then fail "$what: exit status" "$det"; bad=1; fi
    # stderr: same text once the program name is taken off.
    sed -E 's#^(/usr/bin/)?gprof: ##' "$g/err" > "$g/err.n"
    sed -E 's#^gmon( gprof)?: ##; s#^gprof: ##' "$o/err" > "$o/err.n"
    if ! cmp -s "$g/err.n" "$o/err.n"; then
        { cat "$det"; firstdiff "$g/err.n" "$o/err.n"; } > "$det.2"
        fail "$what: stderr differs" "$det.2"; bad=1
    fi
    if [ "${NOPROSE:-}" = 1 ]; then
        # Without -b the explanations are ours by design: compare the -b lines (in order) and
        # the form feeds only.
        if ! python3 "$here/prose.py" "$g/out" "$o/out" > "$det.3" 2>&1; then
            { cat "$det"; cat "$det.3"; } > "$det.4"; fail "$what: report (non-prose) differs" "$det.4"; bad=1
        else pass "$what"; fi
    elif ! cmp -s "$g/out" "$o/out"; then
        { cat "$det"; echo "stdout: gnu $(wc -c < "$g/out") bytes, ours $(wc -c < "$o/out") bytes"; firstdiff "$g/out" "$o/out"; } > "$det.2"
        fail "$what: stdout differs" "$det.2"; bad=1
    else
        pass "$what"
    fi
    # -s: both wrote gmon.sum; ours must read back like the inputs.
    if [ -f "$g/gmon.sum" ] || [ -f "$o/gmon.sum" ]; then
        if [ ! -f "$o/gmon.sum" ]; then fail "$what: no gmon.sum written" "$det"; bad=1
        else
            (cd "$o" && run3 sumread "$GPROF" -b "$prog" gmon.sum)
            (cd "$g" && run3 direct "$GPROF" -b "$prog" "${files[@]}")
            if cmp -s "$o/sumread/out" "$g/direct/out"; then pass "$what: gprof -b on our gmon.sum == gprof -b on the inputs"
            else { cat "$det"; firstdiff "$g/direct/out" "$o/sumread/out"; } > "$det.5"; fail "$what: gprof -b on our gmon.sum != on the inputs" "$det.5"; bad=1; fi
        fi
    fi
}

# timed NAME OPTS...: wall seconds and max RSS of both tools (one run each).
timed() {
    local name=$1; shift
    local t
    for tool in gnu ours; do
        t=$w/time-$name-$tool
        if [ $tool = gnu ]; then /usr/bin/time -v "$GPROF" "$@" "$prog" "$d/gmon.out" > /dev/null 2> "$t"
        else /usr/bin/time -v "$GMON" gprof "$@" "$prog" "$d/gmon.out" > /dev/null 2> "$t"; fi
        python3 - "$t" "$c" "$*" "$tool" >> "$out/times.tsv" <<'PY'
import sys, re
t = open(sys.argv[1]).read()
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1)
secs = 0.0
for part in wall.split(":"):
    secs = secs * 60 + float(part)
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{sys.argv[4]}\t{secs:.2f}\t{rss}")
PY
    done
}

NOPROSE=1 compare none -- "$d/gmon.out"
for set in "-b" "-b -p" "-b -q" "-b -z" "-b -c" "-b -T" "-b -i" "-b -C" "-b -x" "-b -r" "-b -s"; do
    read -ra o <<< "$set"
    compare "$(echo "$set" | tr -d ' -')" "${o[@]}" -- "$d/gmon.out"
done
if [ "${SKIP_LINE:-}" != 1 ]; then
    compare bl -b -l -- "$d/gmon.out"
    compare blx -b -l -x -- "$d/gmon.out"
fi
if [ ${#gmons[@]} -gt 1 ]; then
    compare multi -b -- "${gmons[@]}"
    compare multiq -b -q -- "${gmons[@]}"
    compare multis -b -s -- "${gmons[@]}"
fi
if [ -f "$d/sources" ]; then
    compare A -A -- "$d/gmon.out"
    compare Ax -A -x -- "$d/gmon.out"
fi
timed b -b
[ "${SKIP_LINE:-}" != 1 ] && timed bl -b -l
exit $bad
