#!/usr/bin/env bash
# expect_failure.sh TEXT CMD...: CMD must exit non-zero (not crash) with TEXT in its stderr.
set -uo pipefail
text=$1; shift
err=$("$@" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 1 ] || { echo "expected exit status 1, got $rc: $err"; exit 1; }
grep -qF -- "$text" <<<"$err" || { echo "stderr lacks '$text': $err"; exit 1; }
echo "failed as expected: $err"
