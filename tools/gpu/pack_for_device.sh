#!/usr/bin/env bash
# tools/gpu/pack_for_device.sh [OUT]: packs what a GPU machine without this project's build
# dependencies needs to run the cuda preset's binaries, compressed, into OUT (a folder inside
# this tree, default .dev, which git should ignore, e.g. listed in .git/info/exclude):
#   bundle.tar.xz  make_bundle.sh's binaries and shared libraries (~30 MB instead of ~115);
#   shared.tar.xz  the test data of CAIRN_SHARED_DIR (models/, corpus/);
#   setup.sh       to source there from the copy of this tree: unpacks both, puts the shared
#                  data and this tree where the binaries were built to look for them
#                  (CAIRN_SHARED_DIR and CAIRN_SOURCE_DIR are compiled in), sets
#                  LD_LIBRARY_PATH and B (the binaries' folder), prints the GPU.
# Then e.g. `source OUT/setup.sh && $B/gpu_ops_test` there, or tools/gpu/run_suite.sh bundle.
# A machine that receives this tree with OUT beside it may cap what it takes: this tree's
# tracked files are ~43 MB, of which models/default/model.safetensors is ~27 MB (read by the
# engine's default-model cases only).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.dev}
case $out in /* | ../*) echo "OUT must be a folder inside this tree (it travels with it)" >&2; exit 2 ;; esac
src=$(pwd)
shared=$(realpath "${CAIRN_SHARED_DIR:-../shared}")
mkdir -p "$out"
bash tools/gpu/make_bundle.sh "$out/bundle" >/dev/null
tar -C "$out/bundle" -cf - . | xz -T0 -6 >"$out/bundle.tar.xz"
rm -rf "$out/bundle"
tar -C "$shared" -cJf "$out/shared.tar.xz" models corpus
cat >"$out/setup.sh" <<EOF
# Sourced on the GPU machine from the copy of the tree (tools/gpu/pack_for_device.sh).
root=\$PWD
mkdir -p bundle "$(dirname "$src")" "$shared"
[ -e "$src" ] || ln -s "\$root" "$src"
tar -C "$shared" -xJf "$out/shared.tar.xz"
tar -C bundle -xJf "$out/bundle.tar.xz"
export LD_LIBRARY_PATH=\$root/bundle/lib:/usr/local/cuda/lib64\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0 CAIRN_SHARED_DIR="$shared"
B=\$root/bundle/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
EOF
du -sh "$out"/*.xz
