#!/usr/bin/env bash
# expect_same_twice.sh CMD...: two runs of CMD print the same non-empty stdout.
set -uo pipefail
a=$("$@" 2>/dev/null) || exit 1
b=$("$@" 2>/dev/null) || exit 1
[ -n "$a" ] && [ "$a" == "$b" ] || { echo "runs differ or are empty:"; echo "$a"; echo "$b"; exit 1; }
echo "same output twice: $a"
