#!/usr/bin/env bash
# Unpacks the llama.cpp git bundle shipped inside the pinned npm package
# node-llama-cpp into .cache/llama.cpp (its vocabularies, tokenizer test vectors
# and chat templates are test data for cairn) and prints that folder.
# Needs `scripts/setup.sh` to have installed the npm packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle="$root/node_modules/node-llama-cpp/llama/gitRelease.bundle"
dest="$root/.cache/llama.cpp"
if [ ! -f "$dest/.done" ]; then
  [ -f "$bundle" ] || { echo "missing $bundle: run scripts/setup.sh" >&2; exit 1; }
  rm -rf "$dest" && mkdir -p "$dest"
  git -C "$dest" init -q
  git -C "$dest" fetch -q "$bundle" '*:refs/remotes/bundle/*'
  ref=$(git -C "$dest" for-each-ref --format='%(refname)' refs/remotes/bundle | head -n 1)
  git -C "$dest" checkout -q "$ref" -- models
  touch "$dest/.done"
fi
echo "$dest"
