#!/usr/bin/env bash
# tools/gpu/tune_narrow.sh BUNDLE: times the invariant matmul's thin tiles (few rows of x) over
# CAIRN_MMA_NARROW_TILE_K × CAIRN_MMA_NARROW_STAGES × CAIRN_MMA_NARROW_WIDTH, one process per
# setting (the knobs are read once per process; every setting gives the same bits), and ranks
# the settings by a Llama layer's n = 1 matmul time (q/o ×2, k/v ×2, gate/up ×2, down ×1) into
# $TUNE_LOGS/best.txt ("tile_k stages width µs" per line, best first). Logs in $TUNE_LOGS
# (build/gpu-tune).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=$(realpath "$1")/bin
export LD_LIBRARY_PATH=$(realpath "$1")/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
L=${TUNE_LOGS:-build/gpu-tune}
mkdir -p "$L" && : >"$L/tune.log"
for tk_st in 64:4 64:6 64:12 256:2 256:3 256:4; do
  for w in 8 16 32; do
    CAIRN_MMA_NARROW_TILE_K=${tk_st%:*} CAIRN_MMA_NARROW_STAGES=${tk_st#*:} CAIRN_MMA_NARROW_WIDTH=$w \
      timeout 60 "$B/gpu_ops_test" --gtest_also_run_disabled_tests --gtest_filter='*NarrowRows*' 2>&1 |
      grep '^narrow' | sed "s/^/tk=${tk_st%:*} st=${tk_st#*:} w=$w /" >>"$L/tune.log"
  done
done
python3 - "$L/tune.log" >"$L/best.txt" <<'PY'
import collections, re, sys
t = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m = re.match(r'tk=(\d+) st=(\d+) w=(\d+) narrow (\S+)\s+n=(\d+)\s+tile (\S+)\s+([\d.]+) ms', l)
    if m: t[(m[1], m[2], m[3])][(m[4], m[5])] = float(m[7])
wt = {'q/o': 2, 'k/v': 2, 'gate/up': 2, 'down': 1}
tot = {k: sum(wt[s] * v[(s, '1')] for s in wt if (s, '1') in v) for k, v in t.items()}
for k, v in sorted(tot.items(), key=lambda x: x[1]): print(k[0], k[1], k[2], round(v * 1000, 1), 'us')
PY
cat "$L/best.txt"
