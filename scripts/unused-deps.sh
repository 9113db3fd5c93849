#!/usr/bin/env bash
# Fails when a crate declares a dependency its code never names (what `cargo machete` checks,
# without building a tool in CI): every [dependencies] entry must appear as `name::` or
# `use name` / `extern crate name` in the crate's src/ (or build.rs); every [dev-dependencies]
# entry in its tests/, benches/, examples/ or src/. Crate names are compared with '-' as '_'.
#
# One documented exception: gmon-tools depends on gmon-write only so that its build.rs learns where
# gmon-write's sources are (DEP_GMON_WRITE_ROOT) to build the runtime library it embeds. Its src/
# must NOT name gmon_write (that would link the runtime's libc replacements into `gmon`), so
# that dependency must be unused, and this script checks that it is.
#
# Usage: scripts/unused-deps.sh [CRATE_DIR...]   (default: every workspace member)
set -euo pipefail
cd "$(dirname "$0")/.."

crates=("$@")
# Default: the workspace members, from the one list in Cargo.toml.
[ ${#crates[@]} -gt 0 ] || read -r -a crates <<<"$(sed -n 's/^members = \[\(.*\)\]$/\1/p' Cargo.toml | tr -d '",')"
[ ${#crates[@]} -gt 0 ] || { echo "unused-deps: no members = [...] line in Cargo.toml" >&2; exit 1; }

# Prints the names in one [section] of a Cargo.toml (keys only, `name = ...` or `name.workspace`).
section_deps() {
	awk -v want="[$2]" '
		/^\[/ { on = ($0 == want); next }
		on && /^[A-Za-z0-9_-]+[ .=]/ { sub(/[ .=].*/, ""); print }
	' "$1"
}

used_in() { # used_in NAME DIR...
	local ident=${1//-/_} dirs=()
	shift
	for d in "$@"; do [ -e "$d" ] && dirs+=("$d"); done
	[ ${#dirs[@]} -gt 0 ] || return 1
	grep -rqE --include='*.rs' "(^|[^A-Za-z0-9_])${ident}::|use ${ident}( |;|::)|extern crate ${ident}" "${dirs[@]}"
}

bad=0
for c in "${crates[@]}"; do
	for dep in $(section_deps "$c/Cargo.toml" dependencies); do
		if [ "$c $dep" = "gmon-tools gmon-write" ]; then # the exception above
			if used_in "$dep" "$c/src"; then
				echo "$c/src names $dep: it would link $dep into $c; only build.rs may use it (DEP_ metadata)" >&2
				bad=1
			fi
			continue
		fi
		if ! used_in "$dep" "$c/src" "$c/build.rs"; then
			echo "unused dependency: $c depends on $dep, which $c/src never names" >&2
			bad=1
		fi
	done
	for dep in $(section_deps "$c/Cargo.toml" dev-dependencies); do
		if ! used_in "$dep" "$c/tests" "$c/benches" "$c/examples" "$c/src"; then
			echo "unused dev-dependency: $c dev-depends on $dep, which no test, bench or example names" >&2
			bad=1
		fi
	done
done
[ $bad -eq 0 ] && echo "unused-deps: every declared dependency is used"
exit $bad
