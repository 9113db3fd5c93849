#!/usr/bin/env bash
# Issue #30: every crate packages, and `gmon` installs from its packaged crate and works.
#
#  1. `cargo package --workspace --no-verify` packages every workspace member.
#  2. `cargo install` builds `gmon` from the PACKAGED gmon-tools (the sources cargo unpacked from
#     its .crate, not the workspace) into an empty root, with the other packaged members as its
#     dependencies: that build is the verification of every package
#     (cargo's own verification built each of them once more, about four CPU-minutes in CI).
#  3. That binary records a program (`gmon record`, which needs the runtime library embedded by
#     gmon-tools' build.rs) and draws a flame graph of it; the SVG must parse and show samples.
#
# The members are not on crates.io, so everything that resolves them from there
# gets them from their packages instead through [patch.crates-io]: the install through --config,
# and the nested `cargo build` of the runtime that gmon-tools' build.rs runs (in step 2) through
# $dir/.cargo/config.toml, which cargo finds from that build's directory
# ($dir/package/gmon-tools-VERSION) and nowhere in the workspace.
#
# The install is a debug build (`--debug`): the release profile's fat LTO takes about four minutes
# more here, and what this checks (the packages build, the runtime is found and embedded, the
# binary records and draws) does not depend on the optimisation level. Its target directory is
# $dir, kept between runs, so a rerun is incremental.
#
# Usage: scripts/package-check.sh   (from anywhere; writes under target/package-check)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
dir=$repo/target/package-check
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "package-check: no version in Cargo.toml's [workspace.package]" >&2; exit 1; }
pkg=$dir/package
# The workspace members, from the one list in Cargo.toml.
read -r -a members <<<"$(sed -n 's/^members = \[\(.*\)\]$/\1/p' Cargo.toml | tr -d '",')"
[ ${#members[@]} -gt 0 ] || { echo "package-check: no members = [...] line in Cargo.toml" >&2; exit 1; }
patches=()
mkdir -p "$dir/.cargo"
{
	echo "# Written by scripts/package-check.sh: the members are not on crates.io; the nested build of"
	echo "# the gmon-write runtime (gmon-tools' build.rs) takes them from their packages."
	echo "[patch.crates-io]"
	for c in "${members[@]}"; do
		[ "$c" = gmon-tools ] && continue
		echo "$c = { path = \"$pkg/$c-$version\" }"
		patches+=(--config "patch.crates-io.$c.path=\"$pkg/$c-$version\"")
	done
} >"$dir/.cargo/config.toml"

echo "package-check: 1/3 cargo package --workspace (${members[*]} $version; step 2 builds them)"
# --allow-dirty: the check is about what the sources build, also before they are committed.
cargo package --workspace --no-verify --allow-dirty --target-dir "$dir"
for c in "${members[@]}"; do
	crate=$pkg/$c-$version.crate
	[ -s "$crate" ] || { echo "package-check: $crate was not made" >&2; exit 1; }
	echo "package-check:   $c-$version.crate: $(tar -tzf "$crate" | wc -l) files, $(wc -c <"$crate") bytes"
	# Unpacked as a registry would (--no-verify does not unpack): what the install builds.
	rm -rf "${pkg:?}/$c-$version"
	tar -xzf "$crate" -C "$pkg"
done

root=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$root" "$work"' EXIT
echo "package-check: 2/3 cargo install --debug from the packaged gmon-tools ($pkg/gmon-tools-$version) into empty $root"
cargo install --debug --path "$pkg/gmon-tools-$version" --root "$root" --target-dir "$dir" "${patches[@]}"
installed=$(cd "$root/bin" && ls)
[ "$installed" = gmon ] || { echo "package-check: $root/bin holds '$installed', expected only gmon" >&2; exit 1; }

echo "package-check: 3/3 the installed gmon records sort(1) and draws its flame graph"
# README.md 300 times over: enough work for sort to be sampled (README.md alone takes ~1 ms).
for _ in $(seq 300); do cat README.md; done >"$work/input.txt"
(cd "$work" && "$root/bin/gmon" record -o x.out -- sort input.txt >/dev/null)
[ -s "$work/x.out" ] || { echo "package-check: gmon record wrote no $work/x.out" >&2; exit 1; }
"$root/bin/gmon" flame "$work/x.out" >"$work/x.svg"
python3 - "$work/x.svg" <<'EOF'
import re, sys
import xml.etree.ElementTree as ET

path = sys.argv[1]
root = ET.parse(path).getroot()  # raises on a malformed SVG
ns = "{http://www.w3.org/2000/svg}"
if root.tag != ns + "svg":
    sys.exit(f"package-check: {path}: root element is {root.tag}, expected svg")
samples = [
    int(m.group(1))
    for t in root.iter(ns + "title")
    if (m := re.search(r"\((\d+) samples", t.text or ""))
]
if not samples or max(samples) == 0:
    sys.exit(f"package-check: {path}: no frame with samples")
print(f"package-check:   flame graph: {len(samples)} frames, the widest {max(samples)} samples")
EOF
echo "package-check: ok: every crate packages; gmon installed from the packaged gmon-tools records and draws"
