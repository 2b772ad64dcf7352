#!/usr/bin/env bash
# Builds the default model's training text: installs the Debian packages that hold
# it, extracts and cleans each source, removes duplicates, holds out a validation
# split, adds the synthetic instruction set, and writes one compressed archive.
#
#   tools/default_model/make_corpus.sh [OUT_DIR]   (default: .cache/default_model)
#
# Writes OUT_DIR/corpus.tar.xz holding train.txt and valid.txt (natural text) and
# instruct_train.txt and instruct_valid.txt (ChatML conversations), documents
# separated by a line holding only <|endoftext|>, plus sources.json (bytes and
# documents per source and split).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/.cache/default_model}
raw=$out/raw
mkdir -p "$raw"

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
pkgs=(fortunes fortunes-min bible-kjv bible-kjv-text dict-gcide python3.11-doc linux-doc-6.1)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Raw extracts: one file per source.
bible -f "Gen1:1-Rev22:21" > "$raw/kjv.txt"
zcat /usr/share/dictd/gcide.dict.dz > "$raw/gcide.txt"
: > "$raw/fortunes.txt"
for f in /usr/share/games/fortunes/*; do
  case "$f" in *.dat | *.u8 | */ascii-art | */art) continue ;; esac
  [ -f "$f" ] && { cat "$f"; printf '\n%%\n'; } >> "$raw/fortunes.txt"
done
# Technical prose: the Python tutorial, FAQ, HOWTOs and language reference, and the
# Linux kernel's admin guide and process documents (reStructuredText sources).
pydoc=/usr/share/doc/python3.11/html/_sources
find "$pydoc/tutorial" "$pydoc/faq" "$pydoc/howto" "$pydoc/reference" "$pydoc/glossary.rst.txt" \
  -name '*.rst.txt' | LC_ALL=C sort | while read -r f; do cat "$f"; printf '\n\f\n'; done > "$raw/python-doc.txt"
kdoc=/usr/share/doc/linux-doc-6.1/Documentation
find "$kdoc/admin-guide" "$kdoc/process" -name '*.rst.gz' | LC_ALL=C sort |
  while read -r f; do zcat "$f"; printf '\n\f\n'; done > "$raw/linux-doc.txt"
shared=$root/../shared/corpus
[ -d "$shared" ] || shared=/work/shared/corpus
cp "$shared/tinyshakespeare.txt" "$shared/war-and-peace.txt" "$raw/"

python3 "$here/clean_corpus.py" --raw "$raw" --out "$out"
python3 "$here/make_instructions.py" --gcide "$raw/gcide.txt" --out "$out"
# Fixed order, times and owners: the same text gives the same archive, byte for byte.
tar -C "$out" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - \
  train.txt valid.txt instruct_train.txt instruct_valid.txt sources.json | xz -6 -T1 > "$out/corpus.tar.xz"
(cd "$out" && sha256sum train.txt valid.txt instruct_train.txt instruct_valid.txt corpus.tar.xz)
ls -l "$out/corpus.tar.xz"
size=$(stat -c %s "$out/corpus.tar.xz")
[ "$size" -le $((64 * 1024 * 1024)) ] || { echo "corpus.tar.xz is over 64 MiB" >&2; exit 1; }
