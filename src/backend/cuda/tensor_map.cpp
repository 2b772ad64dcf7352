// tile_map_128b and its cache (tensor_map.h).
#include "backend/cuda/tensor_map.h"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <functional>
#include <mutex>
#include <unordered_map>

#include "backend/cuda/cuda_runtime.h"
#include "core/error.h"

namespace cairn::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CAIRN_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                      cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !f)
      fail(ErrorCode::kInternal, "the CUDA driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// Every input of an encode: equal keys give equal maps.
struct MapKey {
  const void* base;
  int64_t rows, cols;
  int box_rows;
  bool bf16;
  bool operator==(const MapKey&) const = default;
};

struct MapKeyHash {
  size_t operator()(const MapKey& k) const {
    size_t h = std::hash<const void*>()(k.base);
    for (const auto v : {static_cast<uint64_t>(k.rows), static_cast<uint64_t>(k.cols),
                         static_cast<uint64_t>(k.box_rows) * 2 + (k.bf16 ? 1 : 0)})
      h = (h ^ std::hash<uint64_t>()(v)) * 0x9E3779B97F4A7C15ull;
    return h;
  }
};

// A step's products name a few hundred (matrix, box) pairs; more than this
// many (buffers that moved, many shapes) starts the cache over.
constexpr size_t kMaxCachedMaps = 4096;

}  // namespace

CUtensorMap tile_map_128b(const void* base, int64_t rows, int64_t cols, int box_rows, bool bf16) {
  static std::mutex mu;
  static std::unordered_map<MapKey, CUtensorMap, MapKeyHash> cache;
  const MapKey key{base, rows, cols, box_rows, bf16};
  std::lock_guard lock(mu);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() >= kMaxCachedMaps) cache.clear();
  return cache.emplace(key, encode_tile_map_128b(base, rows, cols, box_rows, bf16)).first->second;
}

CUtensorMap encode_tile_map_128b(const void* base, int64_t rows, int64_t cols, int box_rows,
                                 bool bf16) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t pitch[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  const CUresult r =
      encoder()(&map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                const_cast<void*>(base), dims, pitch, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    fail(ErrorCode::kInternal, "cuTensorMapEncodeTiled failed ({}) for a [{}, {}] matrix",
         static_cast<int>(r), rows, cols);
  return map;
}

}  // namespace cairn::cuda
