#!/usr/bin/env bash
# scripts/qa/optionsets.sh PROGS_DIR OUT_DIR
#
# Runs every generic option set of testdata/gprof-optionsets.txt (PROGRAMS `*` or `*,-x`) on
# every case of PROGS_DIR (battery.sh's layout) with GNU gprof and `gmon gprof`, in a scratch
# directory holding links to the case's files, and compares stdout bytes, stderr bytes and exit
# status. GNU gprof runs as `gprof` (a link), so messages carry the same program name.
# Env: GMON (default: this checkout's target/release/gmon), GPROF (/usr/bin/gprof),
#      EXTRA="--no-demangle" to put options in front of every set (both tools) — separates
#      demangling differences from the rest; SKIP_LINE=1 leaves out the ln-* sets;
#      JOBS (default 2) cases at a time.
# Writes OUT_DIR/summary.txt (PASS/FAIL lines) and OUT_DIR/fail/<case>-<set>.diff.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
progs=$(cd "${1:?usage: optionsets.sh PROGS_DIR OUT_DIR}" && pwd)
out=${2:?usage: optionsets.sh PROGS_DIR OUT_DIR}
mkdir -p "$out/fail" "$out/bin"
out=$(cd "$out" && pwd)
export GMON=${GMON:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/gmon} GPROF=${GPROF:-/usr/bin/gprof}
export EXTRA=${EXTRA:-} SKIP_LINE=${SKIP_LINE:-} out here
export SETS=$here/../../testdata/gprof-optionsets.txt
ln -sf "$GPROF" "$out/bin/gprof"

one_case() {
    local d=$1 c; c=$(basename "$d")
    local w=$out/work/$c
    rm -rf "$w"; mkdir -p "$w"
    local all
    all=$(cd "$d" && { ls gmon.out gmon.[0-9]*.out 2>/dev/null || true; } | sort -t. -k2,2n | tr '\n' ' ')
    : > "$out/summary-$c.txt"
    while IFS= read -r line; do
        case $line in '#'* | '') continue ;; esac
        local name rest plist args
        name=$(echo "${line%%|*}" | tr -d ' ')
        rest=${line#*|}
        plist=$(echo "${rest%%|*}" | tr -d ' ')
        args=$(echo "${rest#*|}" | sed 's/^ *//; s/ *$//')
        [[ $plist == '*' || $plist == '*,-'* ]] || continue
        [[ $SKIP_LINE == 1 && $name == ln-* ]] && continue
        if [[ $args == '='* ]]; then args=${args#=}
        elif [[ " $args " != *' prog '* && $args != *'{ALL}'* ]]; then args="$args prog gmon.out"; fi
        args=${args//\{ALL\}/prog $all}
        args=${args//\{CASE\}/$c}
        local argv; read -ra argv <<< "${args//\'/}"
        local ex=(); [ -n "$EXTRA" ] && read -ra ex <<< "$EXTRA"
        for tool in gnu ours; do
            local r=$w/$name/$tool
            mkdir -p "$r"
            for f in "$d"/prog "$d"/gmon*.out; do ln -sf "$f" "$r/"; done
            if [ $tool = gnu ]; then
                (cd "$r" && PATH="$out/bin:$PATH" gprof "${ex[@]}" "${argv[@]}" > out 2> err; echo $? > rc)
            else
                (cd "$r" && "$GMON" gprof "${ex[@]}" "${argv[@]}" > out 2> err; echo $? > rc)
            fi
        done
        local g=$w/$name/gnu o=$w/$name/ours
        # Without -b the explanations are ours by design: prose.py compares the rest.
        local same_out=0
        if cmp -s "$g/out" "$o/out"; then same_out=1
        elif [[ " ${argv[*]} " != *' -b '* && " ${argv[*]} " != *' --brief '* && " ${argv[*]} " != *' -b'[a-zA-Z]* ]] &&
             python3 "$here/prose.py" "$g/out" "$o/out" > /dev/null 2>&1; then same_out=1; fi
        if [ $same_out = 1 ] && cmp -s "$g/err" "$o/err" && cmp -s "$g/rc" "$o/rc"; then
            echo "PASS $c $name" >> "$out/summary-$c.txt"
            rm -rf "$w/$name"
        else
            echo "FAIL $c $name [${ex[*]} ${argv[*]}]" >> "$out/summary-$c.txt"
            { echo "cd $o && $GMON gprof ${ex[*]} ${argv[*]}"; echo "rc gnu $(cat "$g/rc") ours $(cat "$o/rc")";
              diff "$g/err" "$o/err" | head -10; diff "$g/out" "$o/out" | head -40; } > "$out/fail/$c-$name.diff"
        fi
    done < "$SETS"
    echo "done $c: $(grep -c ^PASS "$out/summary-$c.txt") pass, $(grep -c ^FAIL "$out/summary-$c.txt") fail" >&2
}
export -f one_case
ls -d "$progs"/*/ | sed 's#/$##' | xargs -P "${JOBS:-2}" -I{} bash -c 'one_case {}'
cat "$out"/summary-*.txt > "$out/summary.txt"
echo "optionsets: $(grep -c ^PASS "$out/summary.txt") pass, $(grep -c ^FAIL "$out/summary.txt") fail -> $out/summary.txt" >&2
