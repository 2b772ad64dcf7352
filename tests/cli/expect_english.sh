#!/usr/bin/env bash
# expect_english.sh MIN_WORDS CMD...: CMD must succeed and print at least MIN_WORDS
# words, almost all of them printable ASCII, among them at least three distinct
# common English function words (the, and, of, ...): text that reads as English
# rather than bytes, silence or one repeated token.
set -uo pipefail
min_words=$1; shift
out=$("$@" 2>/dev/null) || { echo "command failed: $*"; exit 1; }
printf '%s\n' "$out"
n_words=$(printf '%s' "$out" | wc -w)
[ "$n_words" -ge "$min_words" ] || { echo "only $n_words words (want $min_words)"; exit 1; }
n_chars=$(printf '%s' "$out" | wc -c)
n_ascii=$(printf '%s' "$out" | LC_ALL=C tr -cd '[:print:]\n\t' | wc -c)
[ $((n_ascii * 100)) -ge $((n_chars * 95)) ] || { echo "$n_ascii of $n_chars bytes printable"; exit 1; }
common="the and of to a in was he she it that his her is with for as on had there they you i"
n_common=$(printf '%s' "$out" | tr 'A-Z' 'a-z' | tr -c 'a-z\n' '\n' | sort -u |
           grep -c -x -F -f <(tr ' ' '\n' <<<"$common"))
[ "$n_common" -ge 3 ] || { echo "only $n_common distinct common English words"; exit 1; }
echo "reads as English: $n_words words, $n_common common words"
