# Helpers shared by the battery parts (sourced). Needs $out (battery output dir).

# pass WHAT / fail WHAT DETAILFILE: one summary line; a failure's details go to fail/<n>.txt.
pass() { echo "PASS $*" >> "$out/summary.txt"; }
fail() {
    local what=$1 detail=${2:-}
    local n
    n=$(($(grep -c '^FAIL' "$out/summary.txt") + 1))
    { echo "FAIL #$n: $what"; [ -n "$detail" ] && [ -f "$detail" ] && head -c 4000 "$detail"; } > "$out/fail/$n.txt"
    echo "FAIL #$n $what" >> "$out/summary.txt"
    echo "FAIL #$n $what" >&2
}

# panic_check FILE: non-empty output if FILE (stderr) shows a Rust panic or abort.
panicked() { grep -qE 'panicked|RUST_BACKTRACE|stack backtrace|Aborted|core dumped' "$1"; }

# run3 DIR CMD...: runs CMD in the current directory with stdout/stderr/exit status saved
# to DIR/{out,err,rc}.
run3() {
    local dir=$1; shift
    mkdir -p "$dir"
    "$@" > "$dir/out" 2> "$dir/err"
    echo $? > "$dir/rc"
}

# firstdiff A B: the first differing lines of two files (diff -u, 40 lines).
firstdiff() { diff -u "$1" "$2" | head -40; }
