#!/usr/bin/env bash
# tools/gpu/tune_narrow.sh BUNDLE: times the invariant matmul's thin tiles (few rows of x) over
# CAIRN_MMA_NARROW_STAGES × CAIRN_MMA_NARROW_WIDTH, one process per setting (the knobs are read
# once per process; every setting gives the same bits), ranks the settings by a Llama layer's
# n = 1 matmul time (q/o ×2, k/v ×2, gate/up ×2, down ×1), then runs a short `cairn bench
# --device cuda` with the default and with the best. Logs in $TUNE_LOGS (build/gpu-tune).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=$(realpath "$1")/bin
export LD_LIBRARY_PATH=$(realpath "$1")/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
L=${TUNE_LOGS:-build/gpu-tune}
mkdir -p "$L" && : >"$L/tune.log"
for st in 6 12 24; do
  for w in 0 8 16 32; do
    CAIRN_MMA_NARROW_STAGES=$st CAIRN_MMA_NARROW_WIDTH=$w timeout 60 "$B/gpu_ops_test" \
      --gtest_also_run_disabled_tests --gtest_filter='*NarrowRows*' 2>&1 |
      grep '^narrow' | sed "s/^/st=$st w=$w /" >>"$L/tune.log"
  done
done
python3 - "$L/tune.log" >"$L/best.txt" <<'PY'
import collections, re, sys
t = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m = re.match(r'st=(\d+) w=(\d+) narrow (\S+)\s+n=(\d+)\s+tile (\S+)\s+([\d.]+) ms', l)
    if m: t[(m[1], m[2])][(m[3], m[4])] = float(m[6])
wt = {'q/o': 2, 'k/v': 2, 'gate/up': 2, 'down': 1}
tot = {k: sum(wt[s] * v[(s, '1')] for s in wt if (s, '1') in v) for k, v in t.items()}
for k, v in sorted(tot.items(), key=lambda x: x[1]): print(k[0], k[1], round(v * 1000, 1), 'us')
PY
cat "$L/best.txt"
read -r st w _ <"$L/best.txt"
for env in "12 0" "$st $w"; do
  set -- $env
  CAIRN_MMA_NARROW_STAGES=$1 CAIRN_MMA_NARROW_WIDTH=$2 timeout 200 "$B/cairn" bench --device cuda \
    --shape llama-3.1-8b --batch-sizes 16,64 --prefill-tokens 1024 --long-context 4096 \
    >"$L/bench_$1_$2.log" 2>&1
  echo "stages $1 width $2:"; grep -E 'decode|cost' "$L/bench_$1_$2.log" | head -4
done
