#!/usr/bin/env bash
# expect_output.sh EXPECTED_FILE CMD...: CMD's stdout must equal the file (a trailing newline aside).
set -uo pipefail
expected=$1; shift
actual=$("$@" 2>/dev/null) || { echo "command failed: $*"; exit 1; }
if [ "$actual" != "$(cat "$expected")" ]; then
  echo "output differs from $expected:"; diff <(echo "$actual") "$expected"; exit 1
fi
echo "identical to $expected"
