#!/usr/bin/env bash
# tools/gpu/run_suite.sh [BUNDLE]: cairn's GPU suite in one run, on a machine with an NVIDIA GPU.
#   builds  the cuda preset (cairn, gpu_ops_test, gpu_model_test), unless BUNDLE is given: a
#           folder made by tools/gpu/make_bundle.sh on a build machine (bin/ and lib/);
#   checks  every CUDA op against the CPU reference, the parity fixtures and determinism tests on
#           the GPU, compute-sanitizer memcheck and racecheck on the op tests;
#   times   op microbenchmarks, `cairn bench --device cuda` (real shapes, random weights, against
#           the copy bandwidth and bf16 GEMM rate measured in the same run) and the transformers
#           baseline (tools/gpu/hf_baseline.py);
# and prints a short table last. Logs go to $SUITE_LOGS (default build/gpu-suite).
# SUITE_STEPS (default "checks sanitize micro bench profile baseline") picks the parts to run;
# profile: `cairn bench --profile-ops` on the 8B shape (every op of a decode step, profile.log);
# ab (not in the default): the 8B bench once per value of a switch, same binary: AB_VAR (default
# CAIRN_CUDA_FUSED_INPUTS) set to each of AB_VALUES (default "0 1"), e.g.
# AB_VAR=CAIRN_ATTENTION_NARROW (docs/cuda.md), at AB_BATCH_SIZES (default 16,64,128);
# `fused` is the default ab;
# abbin (not in the default): the 8B bench of this build and of another cairn binary (AB_BASE,
# e.g. main's, carried beside the bundle) in turn, AB_ROUNDS rounds (default 2), same machine;
# trace (not in the default): the 8B bench under the kernel trace (tools/gpu/kernel_trace.py:
# what each kernel adds to a decode step, trace.log);
# tp (not in the default): the 8B shape split over 2, 4 and 8 GPUs, as many as are present
# (`cairn bench --tensor-parallel N`, tp-N.log), or over 2 ranks sharing the one GPU; with 2
# GPUs or more also the llama-3.1-70b shape at TP 2 (tp-70b.log; its weights made on the host);
# restore (not in the default): `cairn bench --ssd-restore` on the GPU, 8B shape, 4k prompt
# (TTFT restored into device pages, overlapped and waiting, against cold prefill; restore.log).
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=${SUITE_LOGS:-build/gpu-suite}
steps=${SUITE_STEPS:-checks sanitize micro bench profile baseline}
mkdir -p "$logs"
export NCCL_NVLS_ENABLE=0
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NCCL for the tensor-parallel test: the toolkit's, else a Python wheel's.
if ! ldconfig -p | grep -q libnccl.so.2 && [ ! -e /usr/local/cuda/lib64/libnccl.so.2 ]; then
  nccl=$(find /opt /usr/local /usr/lib -name libnccl.so.2 2>/dev/null | head -1)
  [ -n "$nccl" ] && export LD_LIBRARY_PATH=$(dirname "$nccl"):$LD_LIBRARY_PATH
fi
if [ $# -ge 1 ]; then
  bin=$(realpath "$1")/bin
  export LD_LIBRARY_PATH=$(realpath "$1")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  scripts/build.sh cuda cairn gpu_tests || exit 1
  cmake --build build/cuda --target cairn_kernel_trace >/dev/null 2>&1  # when CUPTI is there
  bin=$logs/bin && mkdir -p "$bin"
  for t in cairn gpu_ops_test gpu_model_test gpu_engine_test gpu_tp_parity_test gpu_peer_group_test \
    gpu_nccl_test; do ln -sf "$(realpath "$(find build/cuda -name $t -type f | head -1)")" "$bin/$t"; done
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$logs/gpu.txt"
declare -A result
has() { [[ " $steps " == *" $1 "* ]]; }
gtest() {  # name log binary args...: runs a gtest binary, records "passed/total"
  local name=$1 log=$2; shift 2
  timeout 400 "$@" >"$logs/$log" 2>&1; local rc=$?
  local pass failed skipped
  pass=$(grep -c '^\[       OK \]' "$logs/$log"); failed=$(grep -cE '^\[  FAILED  \] .*\([0-9]+ ms\)' "$logs/$log")
  skipped=$(grep -cE '^\[  SKIPPED \] .*\([0-9]+ ms\)' "$logs/$log")
  result[$name]="$pass passed, $failed failed, $skipped skipped, rc $rc"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$logs/$log" | sort -u | head -20
}
if has checks; then
  gtest "op tests" ops.log "$bin/gpu_ops_test"
  gtest "model parity + determinism" models.log "$bin/gpu_model_test"
  gtest "engine on the GPU" engine.log "$bin/gpu_engine_test"
  gtest "tensor parallel, ranks on one GPU" tp.log "$bin/gpu_tp_parity_test"
  gtest "peer group" peer.log "$bin/gpu_peer_group_test"
  gtest "nccl (one GPU)" nccl.log "$bin/gpu_nccl_test"
  timeout 300 tests/server/clients/gpu_serve.sh "$bin/cairn" \
    "${CAIRN_SHARED_DIR:-../shared}/models/stories260K" >"$logs/serve.log" 2>&1
  result["serve on the GPU"]="rc $?, $(grep -c '^ok' "$logs/serve.log") ok, $(grep -c '^FAIL' "$logs/serve.log") failed"
  grep '^FAIL' "$logs/serve.log"
fi
if has micro; then
  timeout 200 "$bin/gpu_ops_test" --gtest_also_run_disabled_tests --gtest_filter='*Bench*' \
    >"$logs/micro.log" 2>&1
  result[microbench]="rc $?"
fi
if has bench; then
  timeout "${BENCH_TIMEOUT:-420}" "$bin/cairn" bench --device cuda ${BENCH_ARGS:-} >"$logs/bench.log" 2>&1
  result[bench]="rc $?"
fi
ab_var=${AB_VAR:-CAIRN_CUDA_FUSED_INPUTS}
if has ab || has fused; then  # a switch's values in turn, same binary, 8B shape
  for v in ${AB_VALUES:-0 1}; do
    env "$ab_var=$v" timeout "${AB_TIMEOUT:-200}" "$bin/cairn" bench --device cuda \
      --shape llama-3.1-8b --batch-sizes "${AB_BATCH_SIZES:-16,64,128}" --prefill-tokens 4096 \
      --long-context 2048 \
      >"$logs/ab-$v.log" 2>&1
    result["$ab_var=$v"]="rc $?"
  done
fi
if has abbin && [ ! -x "${AB_BASE:-}" ]; then
  result[abbin]="not run: AB_BASE ('${AB_BASE:-}') is not an executable"
elif has abbin; then  # this build against another cairn, in turn, 8B shape
  for r in $(seq "${AB_ROUNDS:-2}"); do
    for side in this base; do
      exe=$bin/cairn; [ $side = base ] && exe=$AB_BASE
      timeout "${AB_TIMEOUT:-200}" "$exe" bench --device cuda --shape llama-3.1-8b \
        >"$logs/abbin-$side-$r.log" 2>&1
      result["abbin $side round $r"]="rc $?"
    done
  done
fi
if has profile; then
  timeout "${PROFILE_TIMEOUT:-300}" "$bin/cairn" bench --device cuda --shape llama-3.1-8b \
    --batch-sizes 16,128 --long-context 4096 --profile-ops >"$logs/profile.log" 2>&1
  result[profile]="rc $?"
fi
if has trace; then
  lib=$(find "$(dirname "$bin")/lib" build/cuda -name libcairn_kernel_trace.so 2>/dev/null | head -1)
  if [ -n "$lib" ]; then
    CUDA_INJECTION64_PATH=$(realpath "$lib") CAIRN_KERNEL_TRACE=$logs/trace.csv timeout 300 \
      "$bin/cairn" bench --device cuda --shape llama-3.1-8b --batch-sizes 1,16,128 \
      --prefill-tokens 512 >"$logs/trace-bench.log" 2>&1
    python3 tools/gpu/kernel_trace.py "$logs/trace.csv" --top 8 --seams 4 >"$logs/trace.log" 2>&1
    result[trace]="rc $?, $(grep -c ' steps of ' "$logs/trace.log") step groups"
  else
    result[trace]="no kernel trace library (CUPTI missing)"
  fi
fi
if has tp; then  # the 8B shape split over 2, 4, 8 GPUs (as many as present), else 2 ranks on one
  gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
  sizes=""; for n in 2 4 8; do [ "$n" -le "$gpus" ] && sizes="$sizes $n"; done
  for n in ${sizes:-2}; do
    devices=""; [ "$gpus" -lt 2 ] && devices="--rank-devices 0,0"
    timeout "${TP_TIMEOUT:-300}" "$bin/cairn" bench --device cuda --shape llama-3.1-8b \
      --tensor-parallel "$n" $devices --batch-sizes 16,64 --long-context 0 \
      --prefill-tokens 4096 >"$logs/tp-$n.log" 2>&1
    result["tp $n"]="rc $?"
  done
  if [ "$gpus" -ge 2 ]; then  # issue 10's 70B shape at TP 2: its 141 GB of weights on two GPUs
    timeout "${TP_TIMEOUT:-900}" "$bin/cairn" bench --device cuda --shape llama-3.1-70b \
      --tensor-parallel 2 --batch-sizes 16,64 --long-context 0 --prefill-tokens 4096 \
      >"$logs/tp-70b.log" 2>&1
    result["tp 70b"]="rc $?"
  fi
fi
if has restore; then
  timeout "${RESTORE_TIMEOUT:-300}" "$bin/cairn" bench --ssd-restore --device cuda \
    --shape llama-3.1-8b --prompt-tokens 4096 ${RESTORE_ARGS:-} >"$logs/restore.log" 2>&1
  result[restore]="rc $?"
fi
if has sanitize; then
  # racecheck is far slower than memcheck: it skips the large determinism cases.
  for tool in memcheck racecheck; do
    filter=${SANITIZE_FILTER:--*Bench*:*Large*:DeviceMemory.*}
    [ $tool = racecheck ] && filter=${RACECHECK_FILTER:-$filter:*Determinism*:*LongRows*:*RowIndependent*:*Chunking*}
    timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool $tool --error-exitcode 99 \
      "$bin/gpu_ops_test" --gtest_filter="$filter" >"$logs/$tool.log" 2>&1
    rc=$?; result[$tool]="rc $rc, $(grep -m1 -E 'ERROR SUMMARY' "$logs/$tool.log" || echo 'no summary')"
  done
fi
if has baseline; then
  PYTHONUNBUFFERED=1 timeout 420 python3 tools/gpu/hf_baseline.py ${BASELINE_ARGS:-} \
    >"$logs/baseline.log" 2>&1
  result[baseline]="rc $?"
fi
echo; echo "== figures =="
cat "$logs"/micro.log 2>/dev/null | grep -E 'GB/s|GFLOP/s|TFLOP/s|cost' | head -40
grep -hE 'bandwidth|GFLOP/s|weights|decode +batch|prefill +[0-9]|cost of|switch off|not built|CUDA graphs|enforce-eager|overlapped' "$logs/bench.log" 2>/dev/null
for f in "$logs"/tp-*.log; do
  [ -f "$f" ] && grep -hE 'tensor parallel|decode +batch|prefill +[0-9]' "$f"
done
for v in ${AB_VALUES:-0 1}; do
  [ -f "$logs/ab-$v.log" ] && echo "$ab_var=$v:" && grep -hE 'decode +batch|prefill +[0-9]' "$logs/ab-$v.log"
done
for f in "$logs"/abbin-*.log; do
  [ -f "$f" ] && echo "$(basename "$f" .log):" && grep -hE 'decode +batch|prefill +[0-9]' "$f"
done
grep -h 'hf_baseline' "$logs/baseline.log" 2>/dev/null
grep -hE '^  ops of|window' "$logs/profile.log" 2>/dev/null
grep -h ' steps of ' "$logs/trace.log" 2>/dev/null
grep -hE 'TTFT|MB/s|every page' "$logs/restore.log" 2>/dev/null
echo; echo "== summary ($(cat "$logs/gpu.txt")) =="
for k in "${!result[@]}"; do printf '%-28s %s\n' "$k" "${result[$k]}"; done | sort
