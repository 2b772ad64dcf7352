#!/usr/bin/env bash
# expect_chat_reply.sh NEEDLE QUESTION CMD...: pipes QUESTION (one line) into CMD
# (a `cairn chat`), which must exit 0 and print a reply containing NEEDLE.
set -uo pipefail
needle=$1 question=$2; shift 2
out=$(printf '%s\n' "$question" | "$@" 2>/dev/null) || { echo "command failed: $*"; exit 1; }
printf '%s\n' "$out"
grep -q -F -- "$needle" <<<"$out" || { echo "reply to '$question' lacks '$needle'"; exit 1; }
echo "reply to '$question' holds '$needle'"
