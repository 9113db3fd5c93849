#!/usr/bin/env bash
# Make BSD-layout, big-endian and 32-bit copies of real profiles with `gmon convert`:
#   testdata/variants/<case>/<layout>-<endian><bits>.gmon
# for the cases listed below (the gmon.out of each). Called by regen.sh; can be run alone.
#
# Layouts: bsd44 (4.4BSD gmonhdr), bsd-old (old BSD header: 20 bytes for 64-bit, 12 for
# 32-bit), gnu (GNU tagged). The x86-64 profiles convert losslessly to every encoding: their
# addresses fit in 32 bits and their counts in the target fields.
#
# gmon-format/tests/spec_examples.rs checks that every file here reads back to the original
# profile, and that GNU gprof prints the same report for the little-endian 64-bit BSD copies
# as for the original gmon.out.
#
# The `gmon` binary: $GMON if set, else built with cargo (release profile).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out=$here/variants

CASES=(
	recurse-pie-O0
	recurse-nopie-O2
	cycle-pie-O0
	multifile-pie-O0
	cxx-pie-O0
	cxx-nopie-O2
	threads-pie-O0
	nosamples-pie-O0
	outside-pie-O0
	ties-nopie-O2
)

# layout endian pointer-width(bytes) file-stem
TARGETS=(
	"bsd44   little 8 bsd44-le64"
	"bsd-old little 8 bsd-old-le64"
	"bsd44   big    8 bsd44-be64"
	"gnu     big    8 gnu-be64"
	"gnu     little 4 gnu-le32"
	"gnu     big    4 gnu-be32"
	"bsd44   big    4 bsd44-be32"
	"bsd-old big    4 bsd-old-be32"
)

if [ -z "${GMON:-}" ]; then
	(cd "$repo" && cargo build --quiet --release -p gmon-tools)
	GMON=${CARGO_TARGET_DIR:-$repo/target}/release/gmon
fi

# Replace the case directories only (README.md stays).
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
for c in "${CASES[@]}"; do
	src=$here/cases/$c/gmon.out
	[ -f "$src" ] || { echo "variants.sh: missing $src" >&2; exit 1; }
	mkdir -p "$out/$c"
	for t in "${TARGETS[@]}"; do
		# shellcheck disable=SC2086
		set -- $t
		"$GMON" convert --to "$1" --endian "$2" --ptr-width "$3" "$src" -o "$out/$c/$4.gmon"
	done
done
echo "variants.sh: $(find "$out" -name '*.gmon' | wc -l) files in testdata/variants"
