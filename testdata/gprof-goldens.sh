#!/usr/bin/env bash
# GNU gprof 2.40 reference outputs for `gmon gprof`'s golden tests.
#
# For every case directory testdata/cases/<case>/ (and every option set of
# testdata/gprof-optionsets.txt that applies to its program) this runs the REAL
# /usr/bin/gprof inside the case directory, as `gprof` (so messages start with
# "gprof:"), with LC_ALL=C, and stores
#   cases/<case>/gprof/<set>.out      stdout
#   cases/<case>/gprof/<set>.err      stderr
#   cases/<case>/gprof/<set>.status   exit status
#   cases/<case>/gprof/index.txt      "<set><TAB><exact command>" for every golden
# Goldens come only from gprof: nothing else may write them (gmon-tools'
# tests/gprof_golden.rs compares against them and never rewrites them).
#
# Usage: testdata/gprof-goldens.sh [CASE-GLOB...]
# Environment (for testdata/cross.sh): GPROF_GOLDENS_CASES, the directory holding the case
# directories (default testdata/cases); GPROF_GOLDENS_BIN, the gprof to run (default
# /usr/bin/gprof; a cross `<triplet>-gprof` of binutils 2.40).
set -euo pipefail
export LC_ALL=C LANG=C TZ=UTC
unset GPROF_PATH || true

here=$(cd "$(dirname "$0")" && pwd)
sets=$here/gprof-optionsets.txt
gprof_bin=${GPROF_GOLDENS_BIN:-/usr/bin/gprof}
cases_dir=${GPROF_GOLDENS_CASES:-$here/cases}
"$gprof_bin" --version | head -1 | grep -q ' 2\.40$' || {
	echo "gprof-goldens.sh: $gprof_bin is not GNU gprof 2.40" >&2
	exit 1
}
# A directory whose `gprof` is the real one, so that argv[0] is "gprof".
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
ln -s "$gprof_bin" "$bindir/gprof"

globs=("$@")
[ ${#globs[@]} -eq 0 ] && globs=('*')

count=0
for dir in "$cases_dir"/*/; do
	case_name=$(basename "$dir")
	match=0
	for g in "${globs[@]}"; do
		# shellcheck disable=SC2053
		[[ $case_name == $g ]] && match=1
	done
	[ $match -eq 1 ] || continue
	[ -f "$dir/prog" ] && [ -f "$dir/gmon.out" ] || continue
	program=${case_name%-*-*}
	all=$(cd "$dir" && { ls gmon.out gmon.[0-9]*.out 2>/dev/null || true; } | sort -t. -k2,2n | tr '\n' ' ')
	rm -rf "$dir/gprof"
	mkdir -p "$dir/gprof"
	: >"$dir/gprof/index.txt"
	while IFS= read -r line; do
		case $line in '#'* | '') continue ;; esac
		name=$(echo "${line%%|*}" | tr -d ' ')
		rest=${line#*|}
		progs=$(echo "${rest%%|*}" | tr -d ' ')
		args=${rest#*|}
		args=$(echo "$args" | sed 's/^ *//; s/ *$//')
		ok=0
		IFS=, read -ra plist <<<"$progs"
		for p in "${plist[@]}"; do
			if [[ $p == '-'* ]]; then
				[ "${p#-}" = "$program" ] && ok=0 && break
			elif [[ $p == *'!' ]]; then
				[ "${p%!}" = "$case_name" ] && ok=1
			elif [ "$p" = '*' ] || [ "$p" = "$program" ]; then
				ok=1
			fi
		done
		[ $ok -eq 1 ] || continue
		if [[ $args == '='* ]]; then
			args=${args#=}
		elif [[ " $args " != *' prog '* && $args != *'{ALL}'* ]]; then
			args="$args prog gmon.out"
		fi
		args=${args//\{ALL\}/prog $all}
		args=${args//\{CASE\}/$case_name}
		missing=0
		for w in $args; do
			if [[ $w == *variants/* ]] && [ ! -f "$dir/$w" ]; then missing=1; fi
		done
		[ $missing -eq 0 ] || continue
		args=$(echo "$args" | sed 's/^ *//; s/ *$//; s/  */ /g')
		# Word splitting on blanks only; single quotes in the set protect nothing
		# but are removed, so -p'mix(int)' reaches gprof as -pmix(int).
		read -ra argv <<<"${args//\'/}"
		status=0
		(cd "$dir" && PATH="$bindir:$PATH" gprof "${argv[@]}" >"gprof/$name.out" 2>"gprof/$name.err") || status=$?
		echo "$status" >"$dir/gprof/$name.status"
		printf '%s\tgprof %s\n' "$name" "${argv[*]}" >>"$dir/gprof/index.txt"
		count=$((count + 1))
	done <"$sets"
	rm -f "$dir/gmon.sum"
done
echo "gprof-goldens.sh: $count goldens written"
