#!/usr/bin/env bash
# Builds and runs every test: the Release suite (labels unit, ops, models, slow),
# the unit tests under ASan+UBSan, then a short run of every fuzz target.
# Prints ctest's summary for each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/cairn-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}  # clones in other folders share cache entries
jobs=$(nproc)

scripts/build.sh release
ctest --preset release -j "$jobs"

scripts/build.sh asan unit_tests
ctest --preset asan -j "$jobs" -L unit

# Every parser's fuzz target, briefly (CAIRN_FUZZ_SECONDS each); longer runs by hand.
scripts/build.sh fuzz fuzz_targets
ctest --preset fuzz -L fuzz
