#!/bin/sh
# `cairn serve --tensor-parallel 2` on stories260K through curl: a greedy
# completion equals one rank's, streaming equals non-streaming, a repeated long
# prompt comes from the prefix cache with the same text, the SSD tier written at
# two ranks serves the prompt after a restart; a size the model's heads do not
# divide fails at start with the sizes that work.
# Usage: tensor_parallel.sh CAIRN_BINARY STORIES_DIR
set -eu
CAIRN=$1
STORIES=$2
OUT=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
. "$(dirname "$0")/../lib/serve.sh"

start_serve --model "$STORIES" >/dev/null
curl -s "$URL/v1/completions" -d "$BODY" >"$OUT/r"
cp "$OUT/r" "$OUT/one"
check "completion at 1 rank" 'json.loads(t)["usage"]["completion_tokens"] == 40'
stop

start_serve --model "$STORIES" --tensor-parallel 2 --ssd-cache "$OUT/ssd"
curl -s "$URL/v1/completions" -d "$BODY" >"$OUT/r"
cp "$OUT/r" "$OUT/two"
check "completion at 2 ranks" 'json.loads(t)["choices"][0]["finish_reason"] == "length" and json.loads(t)["usage"]["completion_tokens"] == 40'
same "2 ranks: greedy text equals 1 rank" "$OUT/one" "$OUT/two"
same_stream "2 ranks: streaming equals non-streaming" "$OUT/two"
curl -s "$URL/v1/completions" -d "$LONG" >"$OUT/long1"
curl -s "$URL/v1/completions" -d "$LONG" >"$OUT/r"
check "2 ranks: repeated prompt from the prefix cache" 'json.loads(t)["usage"]["prompt_tokens_details"]["cached_tokens"] >= 32'
same "2 ranks: cache hit gives the same text" "$OUT/long1" "$OUT/r"
stop

start_serve --model "$STORIES" --tensor-parallel 2 --ssd-cache "$OUT/ssd"
curl -s "$URL/v1/completions" -d "$LONG" >"$OUT/r"
check "2 ranks, restarted: prompt from the SSD tier" 'json.loads(t)["usage"]["prompt_tokens_details"]["cached_tokens"] >= 32'
same "2 ranks, restarted: same text" "$OUT/long1" "$OUT/r"
stop

if "$CAIRN" serve --port 0 --model "$STORIES" --tensor-parallel 3 >"$OUT/bad.out" 2>"$OUT/bad.err"; then
  echo "FAIL --tensor-parallel 3 started"; fails=$((fails + 1))
elif grep -q "valid sizes: 1, 2, 4" "$OUT/bad.err"; then
  echo "ok   --tensor-parallel 3: refused with the valid sizes"
else
  echo "FAIL --tensor-parallel 3: $(cat "$OUT/bad.err")"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "tensor parallel cases: all passed"
exit $fails
