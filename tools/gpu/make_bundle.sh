#!/usr/bin/env bash
# tools/gpu/make_bundle.sh [OUT]: packs the cuda preset's GPU binaries (cairn, gpu_ops_test,
# gpu_model_test, gpu_engine_test, gpu_tp_parity_test, gpu_peer_group_test, gpu_nccl_test; the
# kernel trace library when built) with the shared libraries they need that a bare CUDA machine
# lacks (fmt, spdlog, OpenBLAS, …; not libc, libstdc++ or CUDA's own) into OUT/bin and OUT/lib, for
# tools/gpu/run_suite.sh OUT on a GPU machine without this project's build dependencies.
# The binaries read test data from the source tree they were built in (CAIRN_SOURCE_DIR).
# Binaries not built (a build of some targets only) are left out, each named on stderr;
# CAIRN_BUNDLE_ONLY="cairn gpu_ops_test" packs those alone (a smaller bundle for a capped copy).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.gpu-bundle}
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
all="cairn gpu_ops_test gpu_model_test gpu_engine_test gpu_tp_parity_test gpu_peer_group_test gpu_nccl_test"
for t in ${CAIRN_BUNDLE_ONLY:-$all}; do
  f=$(find build/cuda -name $t -type f -perm -u+x | head -1)
  if [ -n "$f" ]; then cp "$f" "$out/bin/"; else echo "make_bundle: $t is not built, left out" >&2; fi
done
[ -n "$(ls "$out/bin")" ] || { echo "make_bundle: no GPU binary built (scripts/build.sh cuda)" >&2; exit 1; }
# The kernel trace library (tools/gpu/kernel_trace), when the build has one.
trace=$(find build/cuda -name libcairn_kernel_trace.so -type f | head -1)
[ -n "$trace" ] && cp "$trace" "$out/lib/"
strip --strip-unneeded "$out"/bin/* 2>/dev/null || true
skip='linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl\.so|librt\.so|libcuda\.so|libcudart|libcublas|libnccl'
ldd "$out"/bin/* ${trace:+"$out/lib/libcairn_kernel_trace.so"} | awk '/=> \//{print $3}' | sort -u | grep -vE "$skip" | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done
du -sh "$out"; ls "$out/lib"
