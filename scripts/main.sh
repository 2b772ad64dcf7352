#!/usr/bin/env bash
# Sets up, builds and runs the main job: cairn generate on the default model.
# Extra arguments go to `cairn generate` (a prompt, --max-tokens, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-npm
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/cairn-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}  # clones in other folders share cache entries
scripts/build.sh release cairn >/dev/null
exec build/release/src/cli/cairn generate "$@"
