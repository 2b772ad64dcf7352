#!/bin/sh
# curl against `cairn serve` (default model): health, chat whole and streamed,
# models, metrics, tokenize/detokenize round trip, a 404 body.
# Usage: curl_cases.sh CAIRN_BINARY
set -eu
CAIRN=$1
OUT=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
. "$(dirname "$0")/../lib/serve.sh"
start_serve
curl -s "$URL/health" >"$OUT/r"
check "health" 'json.loads(t)["status"] == "ok"'
curl -s "$URL/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"What is 7 plus 5?"}],"max_tokens":30,"temperature":0}' >"$OUT/r"
check "chat" 'json.loads(t)["object"] == "chat.completion" and "12" in json.loads(t)["choices"][0]["message"]["content"]'
curl -sN "$URL/v1/chat/completions" -d '{"messages":[{"role":"user","content":"Hello!"}],"max_tokens":8,"stream":true}' >"$OUT/r"
check "chat stream: data frames then [DONE]" 't.endswith("data: [DONE]\n\n") and all(f.startswith("data: ") for f in t.strip().split("\n\n")) and len(t.split("\n\n")) > 3'
curl -s "$URL/v1/models" >"$OUT/r"
check "models" 'json.loads(t)["data"][0]["id"] == "default"'
curl -s "$URL/metrics" >"$OUT/r"
check "metrics" 'all(k in t for k in ["cairn_time_to_first_token_seconds_bucket", "cairn_inter_token_latency_seconds_count", "cairn_queue_depth", "cairn_running_sequences", "cairn_kv_pages_used", "cairn_prefix_cache_hits_total", "cairn_http_requests_total{route=\"/v1/chat/completions\",status=\"200\"} 2"])'
curl -s "$URL/tokenize" -d '{"prompt":"Once upon a time","add_special_tokens":false}' >"$OUT/r"
check "tokenize" 'json.loads(t)["count"] == len(json.loads(t)["tokens"]) > 0'
IDS=$(python3 -c "import json; print(json.dumps(json.load(open('$OUT/r'))['tokens']))")
curl -s "$URL/detokenize" -d "{\"tokens\":$IDS}" >"$OUT/r"
check "detokenize round trip" 'json.loads(t)["prompt"] == "Once upon a time"'
curl -s "$URL/nowhere" >"$OUT/r"
check "404 body" 'json.loads(t)["error"]["code"] == "unknown_route"'
kill -TERM $PID
wait $PID || { echo "FAIL serve exited $?"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "curl cases: all passed"
exit $fails
