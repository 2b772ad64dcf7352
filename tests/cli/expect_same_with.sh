#!/usr/bin/env bash
# expect_same_with.sh "EXTRA ARGS" CMD...: CMD and CMD EXTRA ARGS print the same non-empty stdout.
set -uo pipefail
read -r -a extra <<<"$1"; shift
a=$("$@" 2>/dev/null) || { echo "command failed: $*"; exit 1; }
b=$("$@" "${extra[@]}" 2>/dev/null) || { echo "command failed: $* ${extra[*]}"; exit 1; }
[ -n "$a" ] && [ "$a" == "$b" ] || { echo "outputs differ or are empty:"; diff <(echo "$a") <(echo "$b"); exit 1; }
echo "same output with ${extra[*]}: $a"
