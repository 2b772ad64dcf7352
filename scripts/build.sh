#!/usr/bin/env bash
# scripts/build.sh [PRESET] [TARGET...]: configure (once) and build a preset.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}; shift || true
[ -f "build/$preset/build.ninja" ] || cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" ${1:+--target "$@"}
