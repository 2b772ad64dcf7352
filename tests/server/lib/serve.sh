# Shell helpers for the curl-based server tests (sourced; POSIX sh).
# start_serve ARGS...: runs `$CAIRN serve --port 0 ARGS` in the background,
#   waits for "ready", sets PID and URL. Needs CAIRN and OUT (a scratch folder).
# check NAME EXPR: EXPR is Python on `t`, the text of $OUT/r; counts failures in `fails`.
# same NAME FILE_A FILE_B: the two completions' texts are equal (counted like check).
# same_stream NAME FILE: $BODY streamed gives FILE's completion text (counted like check).
# stop: SIGTERM to the server, which must exit 0. BODY and LONG: a short and a
#   repeated long greedy completion request (stories-sized models).
# story NAME: a long greedy completion request, different for each NAME.
start_serve() {
  # Emptied here, not only by the background job's redirections, which may run
  # after the loop below has read a previous server's "ready".
  : >"$OUT/serve.out"
  : >"$OUT/serve.err"
  "$CAIRN" serve --port 0 "$@" >"$OUT/serve.out" 2>"$OUT/serve.err" &
  PID=$!
  for _ in $(seq 300); do grep -q ready "$OUT/serve.out" 2>/dev/null && break; sleep 0.1; done
  URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$OUT/serve.out")
  [ -n "$URL" ] || { echo "serve did not start"; cat "$OUT/serve.err"; exit 1; }
}
fails=0
check() {
  if python3 -c "import json,re,sys; t=open('$OUT/r').read(); sys.exit(0 if ($2) else 1)"; then
    echo "ok   $1"
  else
    echo "FAIL $1: $(head -c 600 "$OUT/r")"; fails=$((fails + 1))
  fi
}
BODY='{"prompt":"Once upon a time","max_tokens":40,"temperature":0}'
LONG=$(python3 -c "import json; print(json.dumps({'prompt': ' '.join(['The little dog ran to the park to play with the ball.'] * 8), 'max_tokens': 16, 'temperature': 0}))")
story() {
  python3 -c "import json; print(json.dumps({'prompt': ' '.join(['Tell me the story of the $1 fox and the river.'] * 30), 'max_tokens': 12, 'temperature': 0}))"
}
text() { python3 -c "import json; print(json.load(open('$1'))['choices'][0]['text'])"; }
same() {
  if [ "$(text "$2")" = "$(text "$3")" ]; then echo "ok   $1"; else
    echo "FAIL $1: '$(text "$2")' vs '$(text "$3")'"; fails=$((fails + 1)); fi
}
stop() { kill -TERM $PID; wait $PID || { echo "FAIL serve exited $?"; fails=$((fails + 1)); }; }
same_stream() {
  curl -sN "$URL/v1/completions" -d "$(echo "$BODY" | sed 's/}$/,"stream":true}/')" >"$OUT/stream"
  if python3 -c "
import json,sys
frames=[f[6:] for f in open('$OUT/stream').read().strip().split('\n\n') if f.startswith('data: ') and f != 'data: [DONE]']
s=''.join(json.loads(f)['choices'][0]['text'] for f in frames if json.loads(f)['choices'])
sys.exit(0 if s == json.load(open('$2'))['choices'][0]['text'] else 1)"; then echo "ok   $1"; else
    echo "FAIL $1"; fails=$((fails + 1)); fi
}
