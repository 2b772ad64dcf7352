#!/bin/sh
# `cairn serve --device cuda` through curl, on stories260K (f32 weights): a
# greedy completion equals the CPU server's text, streaming equals
# non-streaming, a repeated long prompt comes from the prefix cache (pages in
# device memory) with the same text, and after a restart from the SSD tier
# (pages copied from the GPU to files and back). Exits 77 (skipped) without a GPU.
# Usage: gpu_serve.sh CAIRN_BINARY STORIES_DIR
set -eu
CAIRN=$1
STORIES=$2
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
OUT=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
. "$(dirname "$0")/../lib/serve.sh"

start_serve --model "$STORIES" --device cpu
curl -s "$URL/v1/completions" -d "$BODY" >"$OUT/cpu"
curl -s "$URL/v1/completions" -d "$LONG" >"$OUT/cpu_long"
stop

start_serve --model "$STORIES" --device cuda --ssd-cache "$OUT/ssd"
curl -s "$URL/v1/completions" -d "$BODY" >"$OUT/r"
check "GPU completion" 'json.loads(t)["usage"]["completion_tokens"] == 40'
same "GPU: greedy text equals the CPU server's" "$OUT/cpu" "$OUT/r"
cp "$OUT/r" "$OUT/gpu"
same_stream "GPU: streaming equals non-streaming" "$OUT/gpu"
curl -s "$URL/v1/completions" -d "$LONG" >"$OUT/long1"
same "GPU: long prompt's text equals the CPU server's" "$OUT/cpu_long" "$OUT/long1"
curl -s "$URL/v1/completions" -d "$LONG" >"$OUT/r"
check "GPU: repeated prompt from the prefix cache" 'json.loads(t)["usage"]["prompt_tokens_details"]["cached_tokens"] >= 32'
same "GPU: cache hit gives the same text" "$OUT/long1" "$OUT/r"
stop

start_serve --model "$STORIES" --device cuda --ssd-cache "$OUT/ssd"
curl -s "$URL/v1/completions" -d "$LONG" >"$OUT/r"
check "GPU, restarted: prompt from the SSD tier" 'json.loads(t)["usage"]["prompt_tokens_details"]["cached_tokens"] >= 32'
same "GPU, restarted: same text" "$OUT/long1" "$OUT/r"
stop
[ $fails -eq 0 ] && echo "GPU serve cases: all passed"
exit $fails
