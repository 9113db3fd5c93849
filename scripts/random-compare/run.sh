#!/bin/sh
# Build `gmon` (release) and run the randomized comparison with GNU gprof.
#   scripts/random-compare/run.sh [run.py options, e.g. --count 100 --seed 1 --jobs 2]
# CARGO_TARGET_DIR is honoured (default: target/ in the repository).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cargo build --release -p gmon-tools --manifest-path "$root/Cargo.toml" >&2
exec python3 "$root/scripts/random-compare/run.py" --gmon "$target/release/gmon" "$@"
