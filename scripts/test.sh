#!/usr/bin/env bash
# Builds and runs every test: the Release suite, then the unit tests under
# ASan+UBSan. Prints ctest's summary for each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/cairn-ccache}
jobs=$(nproc)

scripts/build.sh release
ctest --preset release -j "$jobs"

scripts/build.sh asan unit_tests
ctest --preset asan -j "$jobs" -L unit
