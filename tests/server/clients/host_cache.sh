#!/bin/sh
# The host-RAM prefix tier through `cairn serve` (default model): a small RAM
# tier evicts into --host-cache-bytes, a repeated prompt is copied back from
# there with the same text, and /metrics and /health count it. Usage:
# host_cache.sh CAIRN_BINARY
set -eu
CAIRN=$1
OUT=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
. "$(dirname "$0")/../lib/serve.sh"
start_serve --prefix-cache-bytes 512KiB --host-cache-bytes 64MiB
for name in red blue green grey; do
  curl -s "$URL/v1/completions" -d "$(story $name)" >"$OUT/r"
  [ "$name" = red ] && cp "$OUT/r" "$OUT/first"
done
curl -s "$URL/metrics" >"$OUT/r"
check "metrics: pages in the host tier" '[float(l.split()[1]) for l in t.splitlines() if l.startswith("cairn_host_cache_pages ")][0] > 0'
check "metrics: the tier's memory holds its bytes" 'float(re.search(r"^cairn_host_cache_memory_bytes (\S+)", t, re.M).group(1)) >= float(re.search(r"^cairn_host_cache_bytes (\S+)", t, re.M).group(1)) > 0'
curl -s "$URL/v1/completions" -d "$(story red)" >"$OUT/r"
check "repeat: prompt served from the host tier" 'json.loads(t)["usage"]["prompt_tokens_details"]["cached_tokens"] > 0'
python3 -c "import json,sys; a=json.load(open('$OUT/first')); b=json.load(open('$OUT/r')); sys.exit(0 if a['choices'][0]['text'] == b['choices'][0]['text'] else 1)" \
  && echo "ok   repeat: same text" || { echo "FAIL repeat: text differs"; fails=$((fails + 1)); }
curl -s "$URL/health" >"$OUT/r"
check "health: pages copied back" 'json.loads(t)["prefix_cache"]["host_restored_pages"] > 0'
kill -TERM $PID
wait $PID || { echo "FAIL serve exited $?"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "host cache cases: all passed"
exit $fails
