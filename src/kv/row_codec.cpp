#include "kv/row_codec.h"

#include <cstring>

#include "core/affine_row.h"
#include "core/dtype.h"

namespace cairn {

void encode_row(const float* x, int64_t head_dim, const LayerFormat& f, uint8_t* dst) {
  uint16_t* h = reinterpret_cast<uint16_t*>(dst);
  switch (f.store) {
    case KvStore::kF32:
      std::memcpy(dst, x, static_cast<size_t>(head_dim) * 4);
      return;
    case KvStore::kBF16:
      for (int64_t i = 0; i < head_dim; ++i) h[i] = f32_to_bf16(x[i]);
      return;
    case KvStore::kF16:
      for (int64_t i = 0; i < head_dim; ++i) h[i] = f32_to_f16(x[i]);
      return;
    case KvStore::kAffine:
      encode_affine(x, head_dim, f.bits, f.group_size, dst);
      return;
  }
}

void decode_row(const uint8_t* src, int64_t head_dim, const LayerFormat& f, float* y) {
  const uint16_t* h = reinterpret_cast<const uint16_t*>(src);
  switch (f.store) {
    case KvStore::kF32:
      std::memcpy(y, src, static_cast<size_t>(head_dim) * 4);
      return;
    case KvStore::kBF16:
      for (int64_t i = 0; i < head_dim; ++i) y[i] = bf16_to_f32(h[i]);
      return;
    case KvStore::kF16:
      for (int64_t i = 0; i < head_dim; ++i) y[i] = f16_to_f32(h[i]);
      return;
    case KvStore::kAffine:
      decode_affine(src, head_dim, f.bits, f.group_size, y);
      return;
  }
}

}  // namespace cairn
