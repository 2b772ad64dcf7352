#!/bin/sh
# The SSD prefix tier through `cairn serve` (default model): a small RAM tier
# spills to --ssd-cache, /admin/cache/flush reports it durable, and after a
# restart on the same folder a repeated prompt is served from disk with the
# same text. Usage: ssd_cache.sh CAIRN_BINARY
set -eu
CAIRN=$1
OUT=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
. "$(dirname "$0")/../lib/serve.sh"
start() { start_serve --ssd-cache "$OUT/ssd" --prefix-cache-bytes 512KiB; }
start
for name in red blue green grey; do
  curl -s "$URL/v1/completions" -d "$(story $name)" >"$OUT/r"
  [ "$name" = red ] && cp "$OUT/r" "$OUT/first"
done
curl -s -XPOST -d '' "$URL/admin/cache/flush" >"$OUT/r"
check "flush: durable" 'json.loads(t)["durable"] is True and json.loads(t)["failed"] == 0'
curl -s "$URL/metrics" >"$OUT/r"
check "metrics: pages spilled" '[float(l.split()[1]) for l in t.splitlines() if l.startswith("cairn_spill_written_total ")][0] > 0'
kill -TERM $PID
wait $PID || { echo "FAIL serve exited $?"; fails=$((fails + 1)); }
start
curl -s "$URL/health" >"$OUT/r"
check "health after restart: files on disk" 'json.loads(t)["prefix_cache"]["ssd_files"] > 0'
curl -s "$URL/v1/completions" -d "$(story red)" >"$OUT/r"
check "restart: prompt served from disk" 'json.loads(t)["usage"]["prompt_tokens_details"]["cached_tokens"] > 0'
python3 -c "import json,sys; a=json.load(open('$OUT/first')); b=json.load(open('$OUT/r')); sys.exit(0 if a['choices'][0]['text'] == b['choices'][0]['text'] else 1)" \
  && echo "ok   restart: same text" || { echo "FAIL restart: text differs"; fails=$((fails + 1)); }
kill -TERM $PID
wait $PID || { echo "FAIL serve exited $?"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "ssd cache cases: all passed"
exit $fails
