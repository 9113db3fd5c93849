#!/usr/bin/env bash
# other.sh CASE_DIR CASE_NAME: every subcommand but gprof on one case (see battery.sh).
#   dump (+ --json parses), convert to every variant/endian/width and back (byte-identical),
#   GNU gprof on BSD-converted files, merge of the runs vs gprof on all runs, diff, flame
#   (well-formed, deterministic), flame --folded totals, pprof (+ Go pprof -top), record.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
d=${1%/}; c=$2
prog=$d/prog
gmons=("$d"/gmon.out)
for g in "$d"/gmon.[0-9]*.out; do [ -f "$g" ] && gmons+=("$g"); done
w=$out/work/$c/other
rm -rf "$w"; mkdir -p "$w"
bad=0
ok() { # ok WHAT DIR: the run in DIR (run3) exited 0 without a panic
    if panicked "$2/err"; then fail "$1: PANIC" "$2/err"; bad=1; return 1; fi
    if [ "$(cat "$2/rc")" != 0 ]; then fail "$1: exit $(cat "$2/rc")" "$2/err"; bad=1; return 1; fi
    return 0
}

# dump
run3 "$w/dump" "$GMON" dump "$d/gmon.out"
ok "dump $c" "$w/dump" && pass "dump $c"
run3 "$w/dumpj" "$GMON" dump --json "$d/gmon.out"
if ok "dump --json $c" "$w/dumpj"; then
    if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$w/dumpj/out" 2> "$w/dumpj/jerr"; then pass "dump --json $c parses"
    else fail "dump --json $c: not JSON" "$w/dumpj/jerr"; bad=1; fi
fi

# convert: every target and back to GNU in the input's encoding must give the input bytes again.
orig=$d/gmon.out
# the way back: the input's own byte order and pointer width (from dump's first line)
first=$("$GMON" dump "$orig" | head -1)
oe=little; [[ $first == *big-endian* ]] && oe=big
ow=8; [[ $first == *"4-byte pointers"* ]] && ow=4
for v in gnu bsd44 bsd-old; do for e in little big; do for p in 4 8; do
    t=$w/conv-$v-$e-$p
    run3 "$t" "$GMON" convert "$orig" --to $v --endian $e --ptr-width $p -o "$t/file"
    what="convert $c --to $v --endian $e --ptr-width $p"
    if panicked "$t/err"; then fail "$what: PANIC" "$t/err"; bad=1; continue; fi
    if [ "$(cat "$t/rc")" != 0 ]; then
        # Refusing is fine when a value does not fit (4-byte pointers of a PIE): say so, no file.
        if [ -e "$t/file" ]; then fail "$what: failed ($(head -1 "$t/err")) but left $t/file" "$t/err"; bad=1
        else echo "INFO $what refused: $(head -1 "$t/err")" >> "$out/summary.txt"; fi
        continue
    fi
    run3 "$t/back" "$GMON" convert "$t/file" --to gnu --endian $oe --ptr-width $ow -o "$t/back.out"
    if ok "$what and back" "$t/back"; then
        if cmp -s "$orig" "$t/back.out"; then pass "$what: round trip byte-identical"
        else { echo "cmd: $GMON convert $t/file --to gnu --endian $oe --ptr-width $ow -o $t/back.out"; cmp "$orig" "$t/back.out"; } > "$t/cmp"
             fail "$what: round trip differs" "$t/cmp"; bad=1; fi
    fi
    # dump reads every variant
    run3 "$t/dump" "$GMON" dump "$t/file"; ok "dump of $what" "$t/dump" > /dev/null
    # GNU gprof reads BSD files of the host's byte order and width.
    if [ $v != gnu ] && [ $e = $oe ] && [ $p = $ow ]; then
        run3 "$t/g1" "$GPROF" -b "$prog" "$t/file"
        run3 "$t/g0" "$GPROF" -b "$prog" "$orig"
        run3 "$t/o1" "$GMON" gprof -b "$prog" "$t/file"
        if cmp -s "$t/g1/out" "$t/o1/out" && cmp -s "$t/g1/rc" "$t/o1/rc"; then pass "gprof -b on $what: gmon == GNU"
        else { echo "cmd: $GMON gprof -b $prog $t/file"; firstdiff "$t/g1/out" "$t/o1/out"; } > "$t/d"; fail "gprof -b on $what: gmon != GNU" "$t/d"; bad=1; fi
        if ! cmp -s "$t/g1/out" "$t/g0/out"; then
            { echo "GNU gprof itself: BSD copy vs original"; firstdiff "$t/g0/out" "$t/g1/out"; } > "$t/d0"
            echo "INFO GNU gprof -b on $what differs from the original (GNU's BSD reading)" >> "$out/summary.txt"
        fi
    fi
done; done; done

# merge of all runs == gprof summing them
if [ ${#gmons[@]} -gt 1 ]; then
    run3 "$w/merge" "$GMON" merge -o "$w/merged.out" "${gmons[@]}"
    if ok "merge $c (${#gmons[@]} runs)" "$w/merge"; then
        run3 "$w/gm" "$GPROF" -b "$prog" "$w/merged.out"
        run3 "$w/ga" "$GPROF" -b "$prog" "${gmons[@]}"
        if cmp -s "$w/gm/out" "$w/ga/out"; then pass "merge $c: gprof -b merged == gprof -b A B C"
        else { echo "cmd: $GMON merge -o $w/merged.out ${gmons[*]}"; firstdiff "$w/ga/out" "$w/gm/out"; } > "$w/merge/d"; fail "merge $c: gprof -b merged != gprof -b A B C" "$w/merge/d"; bad=1; fi
    fi
    run3 "$w/mergex" "$GMON" merge --exe "$prog" -o "$w/mergedx.out" "${gmons[@]}"
    if ok "merge --exe $c" "$w/mergex"; then
        cmp -s "$w/merged.out" "$w/mergedx.out" && pass "merge --exe $c == merge" || { fail "merge --exe $c != merge without --exe"; bad=1; }
    fi
    # diff
    run3 "$w/diff" "$GMON" diff "${gmons[0]}" "${gmons[1]}"; ok "diff $c (no exe)" "$w/diff" && pass "diff $c (no exe)"
    run3 "$w/diffe" "$GMON" diff --exe "$prog" "${gmons[0]}" "${gmons[1]}"; ok "diff --exe $c" "$w/diffe" && pass "diff --exe $c"
    run3 "$w/diffj" "$GMON" diff --json --exe "$prog" "${gmons[0]}" "${gmons[1]}"
    if ok "diff --json $c" "$w/diffj"; then
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$w/diffj/out" 2> "$w/diffj/jerr" && pass "diff --json $c parses" || { fail "diff --json $c: not JSON" "$w/diffj/jerr"; bad=1; }
    fi
    run3 "$w/diffs" "$GMON" diff --exe "$prog" "${gmons[0]}" "${gmons[0]}"
    if ok "diff self $c" "$w/diffs"; then echo "INFO diff of a file with itself: $(wc -l < "$w/diffs/out") lines" >> "$out/summary.txt"; fi
    run3 "$w/diffflame" "$GMON" flame --diff --exe "$prog" "${gmons[0]}" "${gmons[1]}"; ok "flame --diff $c" "$w/diffflame" && pass "flame --diff $c"
fi

# flame: well-formed XML, same bytes twice; folded totals
run3 "$w/flame1" "$GMON" flame --exe "$prog" "${gmons[@]}"
run3 "$w/flame2" "$GMON" flame --exe "$prog" "${gmons[@]}"
if ok "flame $c" "$w/flame1"; then
    python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$w/flame1/out" 2> "$w/flame1/xerr" && pass "flame $c: well-formed SVG" || { fail "flame $c: not well-formed XML" "$w/flame1/xerr"; bad=1; }
    cmp -s "$w/flame1/out" "$w/flame2/out" && pass "flame $c: deterministic" || { fail "flame $c: two runs differ"; bad=1; }
fi
run3 "$w/folded" "$GMON" flame --folded --exe "$prog" "$d/gmon.out"
if ok "flame --folded $c" "$w/folded"; then
    # total samples in folded stacks vs the histogram total (gprof's "Each sample counts as")
    run3 "$w/flat" "$GPROF" -b -p "$prog" "$d/gmon.out"
    python3 - "$w/folded/out" "$w/dumpj/out" "$w/flat/out" > "$w/folded/check" 2>&1 <<'PY'
import json, re, sys
folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[1]) if l.strip())
flat = open(sys.argv[3]).read()
m = re.search(r"Each sample counts as ([0-9.]+) seconds", flat)
per = float(m.group(1)) if m else 0.01
# Seconds credited to functions: the flat profile's last cumulative value (the self column is
# rounded per row, so summing it overstates small profiles).
selfsum = 0.0
for line in flat.splitlines():
    f = line.split()
    if len(f) >= 3 and re.fullmatch(r"[0-9.]+", f[0]) and re.fullmatch(r"[0-9.]+", f[1]):
        selfsum = max(selfsum, float(f[1]))
print(f"folded total {folded}, gprof flat self total {selfsum:.2f} s = {selfsum / per:.0f} samples")
sys.exit(0 if abs(folded - selfsum / per) <= max(1, 0.005 * folded) else 1)
PY
    if [ $? = 0 ]; then pass "flame --folded $c: $(cat "$w/folded/check")"
    else fail "flame --folded $c: total != gprof's" "$w/folded/check"; bad=1; fi
fi

# pprof
run3 "$w/pprof" "$GMON" pprof --exe "$prog" -o "$w/p.pb.gz" "${gmons[@]}"
if ok "pprof $c" "$w/pprof"; then
    pass "pprof $c"
    if [ -n "$PPROF" ] && [ -x "$PPROF" ]; then
        run3 "$w/pptop" "$PPROF" -top "$w/p.pb.gz"
        [ "$(cat "$w/pptop/rc")" = 0 ] && pass "Go pprof -top on gmon pprof $c" || { fail "Go pprof -top $c" "$w/pptop/err"; bad=1; }
    fi
fi

# record: an unmodified build of the program
if [ -x "$d/plain" ] && [ -f "$d/record.args" ]; then
    mapfile -t args < "$d/record.args"
    stdin=/dev/null; [ -f "$d/record.stdin" ] && stdin=$d/record.stdin
    mkdir -p "$w/rec"
    (cd "$w/rec" && "$GMON" record -o rec.out -- "$d/plain" "${args[@]}" < "$stdin" > out 2> err; echo $? > rc)
    if ok "record $c" "$w/rec"; then
        run3 "$w/rec/g" "$GPROF" -b "$d/plain" "$w/rec/rec.out"
        run3 "$w/rec/o" "$GMON" gprof -b "$d/plain" "$w/rec/rec.out"
        if [ "$(cat "$w/rec/g/rc")" = 0 ] && cmp -s "$w/rec/g/out" "$w/rec/o/out"; then pass "record $c: GNU gprof reads it, gmon gprof == GNU ($(grep -c . "$w/rec/g/out") lines)"
        else { echo "gnu rc $(cat "$w/rec/g/rc")"; head -3 "$w/rec/g/err"; firstdiff "$w/rec/g/out" "$w/rec/o/out"; } > "$w/rec/d"; fail "record $c: gprof on the result" "$w/rec/d"; bad=1; fi
        run3 "$w/rec/f" "$GMON" flame --folded --exe "$d/plain" "$w/rec/rec.out"; ok "flame on record $c" "$w/rec/f" && pass "flame --folded on record $c: $(wc -l < "$w/rec/f/out") stacks"
    fi
fi
exit $bad
