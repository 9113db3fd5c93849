#!/usr/bin/env bash
# Cross-architecture cases: a few of testdata/programs/ built with Debian's cross compilers,
# run under qemu-user, and the matching cross gprof's outputs as goldens.
#
#   testdata/cross/<program>-<target>-<opt>/
#     prog, gmon.out, gmon.N.out, build.txt   as in testdata/cases/ (see README.md)
#     gprof/                                  <triplet>-gprof 2.40 outputs (gprof-goldens.sh)
#
# gmon-tools' tests/gprof_golden.rs checks these goldens like the native ones: CI needs
# neither the cross tools nor qemu. Only this script needs them:
#   apt-get install qemu-user gcc-<triplet> g++-<triplet> binutils-<triplet>
# A target whose tools are missing is skipped with a note.
#
# Usage: testdata/cross.sh [--no-build] [TARGET...]     (default: every target below)
#   --no-build  keep the built cases, only rewrite the goldens
set -euo pipefail
export LC_ALL=C LANG=C TZ=UTC
unset GMON_OUT_PREFIX || true

here=$(cd "$(dirname "$0")" && pwd)
programs=$here/programs
out=$here/cross

# target     triplet                    qemu        what is specific (spec/architectures.md)
TARGETS=(
	"ppc64      powerpc64-linux-gnu        ppc64       big-endian, ELFv1 .opd descriptors"
	"ppc64el    powerpc64le-linux-gnu      ppc64le     ELFv2 local entry points"
	"aarch64    aarch64-linux-gnu          aarch64     -"
	"armhf      arm-linux-gnueabihf        arm         Thumb-2 code (odd addresses)"
	"armel      arm-linux-gnueabi          arm         ARM code, 32-bit"
	"i686       i686-linux-gnu             i386        32-bit"
	"s390x      s390x-linux-gnu            s390x       big-endian"
	"mips       mips-linux-gnu             mips        32-bit big-endian"
	"mipsel     mipsel-linux-gnu           mipsel      32-bit"
	"mips64el   mips64el-linux-gnuabi64    mips64el    -"
	"riscv64    riscv64-linux-gnu          riscv64     -"
	"powerpc    powerpc-linux-gnu          ppc         32-bit big-endian"
	"sparc64    sparc64-linux-gnu          sparc64     big-endian, -c scanner"
)

# program   lang  opt  runs (args of run 1; run 2; ...; "-" = no args)
# Small arguments: qemu runs the code 5-20 times slower than the host.
CASES=(
	"recurse    c     O2   -;2"
	"cycle      c     O0   -"
	"multifile  c     O0   40;20"
	"cxx        cxx   O2   300"
)

build=1
if [ "${1:-}" = --no-build ]; then
	build=0
	shift
fi
wanted=("$@")

build_case() {
	local target=$1 triplet=$2 qemu=$3 program=$4 lang=$5 opt=$6 runs=$7
	local name=$program-$target-$opt src=$programs/$program
	local dir=$out/$name cc
	case $lang in
	cxx) cc=$triplet-g++ ;;
	*) cc=$triplet-gcc ;;
	esac
	local sources
	sources=$(cd "$src" && shopt -s nullglob && printf '%s\n' *.c *.cpp | LC_ALL=C sort | tr '\n' ' ')
	# The cross compiler's defaults (PIE, Thumb on armhf, ...) are what its users get.
	local cmd="$cc -pg -g -$opt -fdebug-prefix-map=$src=. ${sources}"
	cmd=$(echo "$cmd" | tr -s ' ' | sed 's/ $//')
	echo "== $name"
	mkdir -p "$dir"
	rm -f "$dir"/prog "$dir"/gmon.out "$dir"/gmon.*.out "$dir"/build.txt
	local tmp
	tmp=$(mktemp -d /tmp/gmon-cross.XXXXXX)
	(cd "$src" && $cmd -o "$tmp/prog") || { rm -rf "$tmp"; return 1; }
	mv "$tmp/prog" "$dir/prog"
	{
		echo "case:     $name"
		echo "program:  testdata/programs/$program"
		echo "target:   $triplet"
		echo "compile:  (cd testdata/programs/$program && $cmd -o prog)"
		echo "compiler: $($cc --version | head -n1)"
		echo "linker:   $("$triplet-ld" --version | head -n1)"
		echo "run with: qemu-$qemu -L /usr/$triplet ($("qemu-$qemu" --version | head -n1))"
	} >"$dir/build.txt"
	local i=0 args f
	IFS=';' read -r -a runlist <<<"$runs"
	for args in "${runlist[@]}"; do
		i=$((i + 1))
		[ "$args" = "-" ] && args=""
		if [ $i -eq 1 ]; then f=gmon.out; else f=gmon.$i.out; fi
		rm -f "$tmp/gmon.out"
		# shellcheck disable=SC2086
		(cd "$tmp" && cp "$dir/prog" ./prog && "qemu-$qemu" -L "/usr/$triplet" ./prog $args >/dev/null)
		rm -f "$tmp/prog"
		[ -f "$tmp/gmon.out" ] || { echo "no gmon.out from $name run $i" >&2; rm -rf "$tmp"; return 1; }
		mv "$tmp/gmon.out" "$dir/$f"
		echo "run $i:    ./prog${args:+ $args} -> $f" >>"$dir/build.txt"
	done
	rm -rf "$tmp"
}

for row in "${TARGETS[@]}"; do
	# shellcheck disable=SC2086
	set -- $row
	target=$1 triplet=$2 qemu=$3
	if [ ${#wanted[@]} -gt 0 ] && [[ " ${wanted[*]} " != *" $target "* ]]; then
		continue
	fi
	if [ $build -eq 1 ]; then
		missing=""
		for t in "$triplet-gcc" "$triplet-g++" "$triplet-gprof" "qemu-$qemu"; do
			command -v "$t" >/dev/null || missing="$missing $t"
		done
		if [ -n "$missing" ]; then
			echo "cross.sh: skipping $target (not installed:$missing)" >&2
			continue
		fi
		for c in "${CASES[@]}"; do
			# shellcheck disable=SC2086
			set -- $c
			build_case "$target" "$triplet" "$qemu" "$1" "$2" "$3" "$4"
		done
	fi
	command -v "$triplet-gprof" >/dev/null || {
		echo "cross.sh: no $triplet-gprof, goldens of $target not written" >&2
		continue
	}
	GPROF_GOLDENS_CASES=$out GPROF_GOLDENS_BIN=$(command -v "$triplet-gprof") \
		bash "$here/gprof-goldens.sh" "*-$target-*"
done
