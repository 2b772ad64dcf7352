#!/usr/bin/env bash
# expect_stdout_matches.sh REGEX CMD...: CMD must exit 0 with a line of stdout matching REGEX
# (grep -E).
set -uo pipefail
regex=$1; shift
out=$("$@" 2>/dev/null); rc=$?
[ "$rc" -eq 0 ] || { echo "expected exit status 0, got $rc: $out"; exit 1; }
grep -qE -- "$regex" <<<"$out" || { echo "no line of stdout matches '$regex': $out"; exit 1; }
grep -E -- "$regex" <<<"$out"
