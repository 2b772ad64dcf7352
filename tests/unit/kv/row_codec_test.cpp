// Quantize → dequantize error within its bound, derived from each group's
// range alone (not from the stored scale): |x - x̂| ≤ step / 2 with
// step = (max - min) / (2^bits - 1), widened for the f16 rounding of scale
// and bias.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/ops.h"
#include "core/dtype.h"
#include "kv/row_codec.h"
#include "kv_test_util.h"

namespace cairn::test {
namespace {

void check_round_trip(int bits, int gs, int64_t d, float spread, uint32_t stream) {
  std::vector<float> x(static_cast<size_t>(d)), y(x.size());
  for (int64_t i = 0; i < d; ++i)
    x[static_cast<size_t>(i)] = spread * draw(stream, 0, 0, 1, i) + 0.3f;
  const LayerFormat f = affine_format(bits, gs);
  std::vector<uint8_t> row(f.row_bytes(d));
  encode_row(x.data(), d, f, row.data());
  decode_row(row.data(), d, f, y.data());
  const float qmax = static_cast<float>((1 << bits) - 1);
  for (int64_t g = 0; g < d / gs; ++g) {
    auto b = x.begin() + g * gs, e = b + gs;
    const float lo = *std::min_element(b, e), hi = *std::max_element(b, e);
    const float f16_ulp = std::max(std::abs(lo), std::abs(hi)) * 0x1p-10f + 6e-8f;
    const float bound = 0.5f * (hi - lo + f16_ulp) / qmax * (1 + 0x1p-10f) + 2 * f16_ulp;
    for (int64_t i = g * gs; i < (g + 1) * gs; ++i)
      ASSERT_LE(std::abs(x[static_cast<size_t>(i)] - y[static_cast<size_t>(i)]), bound)
          << "bits " << bits << " group " << gs << " at " << i;
  }
}

TEST(RowCodec, AffineErrorWithinBound) {
  for (int bits : {4, 8})
    for (int gs : {32, 64, 128})
      for (float spread : {1e-3f, 1.0f, 50.0f})
        for (uint32_t s = 0; s < 8; ++s) check_round_trip(bits, gs, 256, spread, s);
}

TEST(RowCodec, ConstantGroupIsExactAndBytesAreCounted) {
  std::vector<float> x(64, -1.5f), y(64);
  const LayerFormat f = affine_format(4, 32);
  EXPECT_EQ(f.row_bytes(64), 32u + 2 * 2 * 2);
  std::vector<uint8_t> row(f.row_bytes(64));
  encode_row(x.data(), 64, f, row.data());
  decode_row(row.data(), 64, f, y.data());
  EXPECT_EQ(y, x);
  EXPECT_EQ(affine_format(8, 64).row_bytes(128), 128u + 8);
  EXPECT_EQ(full_format(KvStore::kBF16).row_bytes(128), 256u);
}

TEST(RowCodec, FloatStoresRoundToNearest) {
  std::vector<float> x = {1.0f, 1.00390625f, -3.14159f, 65504.0f}, y(4);
  std::vector<uint8_t> row(8);
  encode_row(x.data(), 4, full_format(KvStore::kBF16), row.data());
  decode_row(row.data(), 4, full_format(KvStore::kBF16), y.data());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(y[i], bf16_to_f32(f32_to_bf16(x[i])));
  encode_row(x.data(), 4, full_format(KvStore::kF16), row.data());
  decode_row(row.data(), 4, full_format(KvStore::kF16), y.data());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(y[i], f16_to_f32(f32_to_f16(x[i])));
}

// ops::quantize_rows (the device KV cache's append) writes exactly the paged
// KV's encode_row bytes: rows of 3 heads at several spreads, some groups constant.
void expect_quantize_rows_equals_encode_row(int bits, int gs, int64_t d, uint32_t stream) {
  constexpr int64_t kRows = 5, kKvHeads = 3;
  Tensor x = Tensor::empty({kRows, kKvHeads, d}, DType::kF32);
  for (int64_t r = 0; r < kRows * kKvHeads; ++r)
    for (int64_t i = 0; i < d; ++i)
      x.data<float>()[r * d + i] = r == 4 && i < gs
                                       ? 0.75f  // one constant group
                                       : std::ldexp(draw(stream, r, 0, 1, i), r % 9 - 4);
  const ops::KvRowQuant q{bits, gs};
  const LayerFormat f = affine_format(bits, gs);
  ASSERT_EQ(static_cast<size_t>(q.row_bytes(d)), f.row_bytes(d));
  Tensor rows = Tensor::zeros({kRows, kKvHeads, q.row_bytes(d)}, DType::kU8);
  const ops::RowCopy c{&x, 0, &rows, 0, kRows};
  ops::quantize_rows(std::span(&c, 1), q);
  std::vector<uint8_t> want(f.row_bytes(d));
  for (int64_t r = 0; r < kRows * kKvHeads; ++r) {
    encode_row(x.data<float>() + r * d, d, f, want.data());
    ASSERT_EQ(0, std::memcmp(rows.data<uint8_t>() + r * q.row_bytes(d), want.data(), want.size()))
        << f.name() << ", head_dim " << d << ", head row " << r;
  }
}

TEST(RowCodec, QuantizeRowsEqualsEncodeRow) {
  for (int bits : {4, 8})
    for (int gs : {32, 64, 128})
      for (int64_t d : {64, 128, 256, 384})
        if (d % gs == 0)
          for (uint32_t s = 0; s < 3; ++s) expect_quantize_rows_equals_encode_row(bits, gs, d, s);
}

}  // namespace
}  // namespace cairn::test
