#!/usr/bin/env bash
# Regenerate the profile corpus: build every program in testdata/programs/ with
# gcc/g++ -pg in the variants listed in CASES below, run it, and store
#   testdata/cases/<program>-<pie|nopie|static>-<O0|O2>/
#     prog         the executable (with -g: DWARF line info)
#     gmon.out     the profile of the first run
#     gmon.N.out   profiles of further runs of the same binary (some cases)
#     build.txt    compile command, run commands, tool versions
# then run testdata/gprof-goldens.sh (GNU gprof reference outputs; owned by the
# gprof goldens, not by this script) and the converter step (testdata/variants/).
#
# Usage: testdata/regen.sh [--no-build] [--no-post] [CASE-GLOB...]
#   CASE-GLOB   only (re)build cases whose name matches, e.g. 'recurse-*' (the goldens
#               step gets the same globs)
#   --no-build  keep cases/, only rerun the gprof-goldens and converter steps
#   --no-post   only build and run; skip the gprof-goldens and converter steps
#
# Sampling is not deterministic, so every run gives different gmon.out bytes;
# that is why the results are committed and tests never run this script.
# Everything else is fixed: flags, LC_ALL=C, build directory (the program's own
# directory, with DWARF paths mapped to "."), and the run directory.
set -euo pipefail
export LC_ALL=C LANG=C TZ=UTC
unset GMON_OUT_PREFIX || true

here=$(cd "$(dirname "$0")" && pwd)
programs=$here/programs
cases=$here/cases

# name        program    lang link   opt  runs (args of run 1; run 2; ...; "-" = no args)
# lang: c (gcc), cxx (g++), clang (Debian's clang; the case is named <program>-clang-...) or
# c-split (gcc -gsplit-dwarf, the .dwo file is not kept; <program>-split-...)
CASES=(
	"recurse    c   pie    O0  -;2;3"
	"recurse    c   nopie  O0  -"
	"recurse    c   pie    O2  -"
	"recurse    c   nopie  O2  -"
	"recurse    c   static O0  -"
	"cycle      c   pie    O0  -"
	"cycle      c   nopie  O0  -"
	"cycle      c   pie    O2  -"
	"multifile  c   pie    O0  40;20;60"
	"multifile  c   pie    O2  -"
	"multifile  c   nopie  O2  -"
	"cxx        cxx pie    O0  600;300;900"
	"cxx        cxx nopie  O0  -"
	"cxx        cxx pie    O2  -"
	"cxx        cxx nopie  O2  -"
	"cxx        cxx static O2  -"
	"threads    c   pie    O0  -"
	"threads    c   nopie  O2  -"
	"nosamples  c   pie    O0  -;-"
	"nosamples  c   nopie  O2  -"
	"outside    c   pie    O0  -"
	"outside    c   nopie  O0  -"
	"outside    c   pie    O2  -"
	"ties       c   pie    O0  -"
	"ties       c   nopie  O2  -"
	"mixed      c   pie    O0  -"
	"mixed      c   nopie  O2  -"
	"maincycle  c   pie    O0  -"
	"maincycle  c   nopie  O2  -"
	"asmsyms    c   pie    O0  -"
	"asmsyms    c   nopie  O2  -"
	"pltcalls   c   pie    O0  -"
	"pltcalls   c   nopie  O2  -"
	"inlined    c   pie    O2  -"
	"inlined    clang pie  O2  -"
	"inlined    c-split pie O2 -"
)

# Per-program extra flags (sources are every *.c / *.cpp / *.S in the directory; a file
# named *.nopg.c is compiled separately WITHOUT -pg and linked in).
program_flags() {
	case $1 in
	threads) echo "-pthread" ;;
	# The note section holding hot_outside must be executable: put headers,
	# notes and code in one R+X segment. strlen must stay a PLT call.
	outside) echo "-Wl,-z,noseparate-code -fno-builtin-strlen" ;;
	pltcalls) echo "-fno-builtin-labs" ;;
	*) echo "" ;;
	esac
}

link_flags() {
	case $1 in
	pie) echo "-fPIE -pie" ;;
	nopie) echo "-fno-pie -no-pie" ;;
	static) echo "-fno-pie -no-pie -static" ;;
	esac
}

build_only=1
post=1
while [ $# -gt 0 ]; do
	case $1 in
	--no-build) build_only=0 ;;
	--no-post) post=0 ;;
	*) break ;;
	esac
	shift
done
globs=("$@")
[ ${#globs[@]} -gt 0 ] || globs=('*')

selected() {
	local g
	for g in "${globs[@]}"; do
		# shellcheck disable=SC2254
		case $1 in $g) return 0 ;; esac
	done
	return 1
}

build_case() {
	local program=$1 lang=$2 link=$3 opt=$4 runs=$5
	local name=$program-$link-$opt
	local src=$programs/$program
	local cc sources
	case $lang in
	cxx) cc=g++ ;;
	clang) cc=clang; name=$program-clang-$link-$opt ;;
	c-split) cc="gcc -gsplit-dwarf"; name=$program-split-$link-$opt ;;
	*) cc=gcc ;;
	esac
	local dir=$cases/$name
	# Sorted, relative source names: the same command line on every machine.
	sources=$(cd "$src" && shopt -s nullglob && printf '%s\n' *.c *.cpp *.S | grep -v '\.nopg\.c$' | LC_ALL=C sort | tr '\n' ' ' || true)
	nopg=$(cd "$src" && shopt -s nullglob && printf '%s\n' *.nopg.c | LC_ALL=C sort | tr '\n' ' ')
	local objects="" precmds=() f
	for f in $nopg; do
		precmds+=("$(echo "$cc -g -$opt $(link_flags "$link" | sed 's/ -static//; s/ -no-pie//; s/ -pie//') -fdebug-prefix-map=$src=. -c $f -o ${f%.c}.o" | tr -s ' ')")
		objects+="${f%.c}.o "
	done
	local cmd="$cc -pg -g -$opt $(link_flags "$link") $(program_flags "$program") -fdebug-prefix-map=$src=. ${sources}${objects}"
	cmd=$(echo "$cmd" | tr -s ' ' | sed 's/ $//')

	echo "== $name"
	mkdir -p "$dir"
	# Only the files this script owns are replaced; gprof/ (goldens) stays.
	rm -f "$dir"/prog "$dir"/gmon.out "$dir"/gmon.*.out "$dir"/build.txt

	local tmp
	tmp=$(mktemp -d /tmp/gmon-regen.XXXXXX)
	# Unprofiled objects are built next to the sources (relative names keep the commands
	# identical everywhere) and removed afterwards.
	local pc
	for pc in "${precmds[@]}"; do
		(cd "$src" && $pc) || { rm -rf "$tmp"; return 1; }
	done
	(cd "$src" && $cmd -o "$tmp/prog" >/dev/null) || { rm -rf "$tmp"; return 1; }
	for f in $objects; do rm -f "$src/$f"; done
	# Split DWARF's .dwo files (gcc writes them beside the sources): BFD never reads them.
	rm -f "$src"/*.dwo "$tmp"/*.dwo
	mv "$tmp/prog" "$dir/prog"

	{
		echo "case:     $name"
		echo "program:  testdata/programs/$program"
		for pc in "${precmds[@]}"; do
			echo "compile:  (cd testdata/programs/$program && $pc)"
		done
		echo "compile:  (cd testdata/programs/$program && $cmd -o prog)"
		echo "compiler: $($cc --version | head -n1)"
		echo "linker:   $(ld --version | head -n1)"
		echo "libc:     $(ldd --version 2>&1 | head -n1)"
		echo "machine:  $(uname -m)"
	} >"$dir/build.txt"

	local i=0 args out
	IFS=';' read -r -a runlist <<<"$runs"
	for args in "${runlist[@]}"; do
		i=$((i + 1))
		[ "$args" = "-" ] && args=""
		if [ $i -eq 1 ]; then out=gmon.out; else out=gmon.$i.out; fi
		rm -f "$tmp/gmon.out"
		# shellcheck disable=SC2086
		(cd "$tmp" && cp "$dir/prog" ./prog && ./prog $args >/dev/null)
		rm -f "$tmp/prog"
		[ -f "$tmp/gmon.out" ] || { echo "no gmon.out from $name run $i" >&2; rm -rf "$tmp"; return 1; }
		mv "$tmp/gmon.out" "$dir/$out"
		echo "run $i:    ./prog${args:+ $args} -> $out" >>"$dir/build.txt"
	done
	rm -rf "$tmp"
}

if [ $build_only -eq 1 ]; then
	for row in "${CASES[@]}"; do
		# shellcheck disable=SC2086
		set -- $row
		case $2 in
		clang) n=$1-clang-$3-$4 ;;
		c-split) n=$1-split-$3-$4 ;;
		*) n=$1-$3-$4 ;;
		esac
		selected "$n" || continue
		build_case "$1" "$2" "$3" "$4" "$5"
	done
fi

[ $post -eq 1 ] || exit 0

# The cases of extra-cases.sh (crafted profiles, programs of their own; it writes their
# goldens itself), on a full regeneration only.
if [ "${globs[*]}" = '*' ] && [ -f "$here/extra-cases.sh" ]; then
	echo "== extra-cases.sh"
	if [ $build_only -eq 1 ]; then bash "$here/extra-cases.sh"; else bash "$here/extra-cases.sh" --no-build; fi
fi

# GNU gprof reference outputs (owned by the gprof goldens), for the selected cases.
if [ -f "$here/gprof-goldens.sh" ]; then
	echo "== gprof-goldens.sh"
	bash "$here/gprof-goldens.sh" "${globs[@]}"
fi

# BSD-layout, big-endian and 32-bit copies made by `gmon convert`.
if [ -f "$here/variants.sh" ]; then
	echo "== variants.sh"
	bash "$here/variants.sh"
fi
