# Shell helpers for the curl-based server tests (sourced; POSIX sh).
# start_serve ARGS...: runs `$CAIRN serve --port 0 ARGS` in the background,
#   waits for "ready", sets PID and URL. Needs CAIRN and OUT (a scratch folder).
# check NAME EXPR: EXPR is Python on `t`, the text of $OUT/r; counts failures in `fails`.
start_serve() {
  "$CAIRN" serve --port 0 "$@" >"$OUT/serve.out" 2>"$OUT/serve.err" &
  PID=$!
  for _ in $(seq 300); do grep -q ready "$OUT/serve.out" 2>/dev/null && break; sleep 0.1; done
  URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$OUT/serve.out")
  [ -n "$URL" ] || { echo "serve did not start"; cat "$OUT/serve.err"; exit 1; }
}
fails=0
check() {
  if python3 -c "import json,sys; t=open('$OUT/r').read(); sys.exit(0 if ($2) else 1)"; then
    echo "ok   $1"
  else
    echo "FAIL $1: $(head -c 600 "$OUT/r")"; fails=$((fails + 1))
  fi
}
