#!/usr/bin/env bash
# Builds and runs every test: the Release suite (labels unit, ops, models, slow),
# the unit tests under ASan+UBSan, the CUDA build's GPU tests (skipped without a GPU), then a short run of every fuzz target.
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

# The CUDA build (sm_90a) where nvcc is installed: it must compile without a GPU, and its GPU
# tests (label gpu) skip cleanly when no device is present. On an H200: tools/gpu/run_suite.sh.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  scripts/build.sh cuda gpu_tests
  ctest --preset cuda -j "$jobs" -L gpu
fi

# Every parser's fuzz target, briefly (CAIRN_FUZZ_SECONDS each); longer runs by hand.
scripts/build.sh fuzz fuzz_targets
ctest --preset fuzz -L fuzz
