// The device KV cache with affine-quantized rows (DeviceKvCache + ops::KvRowQuant)
// through a model's forward on the CPU: a prompt, then one token at a time.
// Its logits equal, bit for bit, an f32 device cache fed the same K/V rows
// through the affine codec and back; and they are close to the paged KV state
// in the same format, within twice that state's own distance from full
// precision. Not equal to it: with quant_start 0 the paged state reads its
// first append in full precision (bf16-first's crossing append), the device
// cache never does, and the difference flows into later layers' K/V.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/affine_row.h"
#include "kv/device_cache.h"
#include "kv/paged_kv.h"
#include "model/config.h"
#include "model/registry.h"

namespace cairn::test {
namespace {

constexpr int64_t kPrompt = 12, kTotal = 64;
const Device kCpu{DeviceKind::kCpu, 0};

// An f32 DeviceKvCache whose appended K/V rows [n_tokens, n_kv_heads, head_dim]
// first go through encode_affine and decode_affine: what a quantized cache reads.
class RoundTripCache final : public KvView {
 public:
  RoundTripCache(const ModelConfig& c, const ops::KvRowQuant& q)
      : cache_(c, kCpu, DType::kF32, 1, kTotal), q_(q) {}
  void append_and_attend(int il, const ForwardBatch& batch, const Tensor& q, const Tensor& k,
                         const Tensor& v, const ops::AttentionParams& p, Tensor& out) override {
    cache_.append_and_attend(il, batch, q, round_trip(k), round_trip(v), p, out);
  }

 private:
  Tensor round_trip(const Tensor& x) const {
    const int64_t d = x.dim(2);
    Tensor y = Tensor::empty(x.shape(), DType::kF32);
    std::vector<uint8_t> row(static_cast<size_t>(q_.row_bytes(d)));
    for (int64_t r = 0; r < x.dim(0) * x.dim(1); ++r) {
      encode_affine(x.data<float>() + r * d, d, q_.bits, q_.group_size, row.data());
      decode_affine(row.data(), d, q_.bits, q_.group_size, y.data<float>() + r * d);
    }
    return y;
  }
  DeviceKvCache cache_;
  ops::KvRowQuant q_;
};

// Feeds ids [0, kPrompt) in one step, then one token per step; returns each
// step's last logits.
std::vector<std::vector<float>> run(Model& m, KvView& kv, const std::vector<int32_t>& ids) {
  const int64_t vocab = m.config().vocab_size;
  Tensor logits = Tensor::empty({1, vocab}, DType::kF32);
  std::vector<std::vector<float>> out;
  for (int64_t b = 0; b < kTotal; b = b == 0 ? kPrompt : b + 1) {
    const int64_t e = b == 0 ? kPrompt : b + 1;
    ForwardBatch batch;
    batch.tokens.assign(ids.begin() + b, ids.begin() + e);
    for (int64_t p = b; p < e; ++p) batch.positions.push_back(static_cast<int32_t>(p));
    batch.spans.push_back({0, 0, e - b, true});
    m.forward(batch, kv, logits);
    out.emplace_back(logits.data<float>(), logits.data<float>() + vocab);
  }
  return out;
}

PagedKvOptions f32_pages(const ModelConfig& c, const ops::KvRowQuant& q) {
  PagedKvOptions o;
  o.page_tokens = 16;
  o.budget_bytes = int64_t{256} << 20;
  o.full_store = KvStore::kF32;  // the crossing append converts f32 rows, as the device cache does
  if (q.enabled()) o.quant = uniform_scheme(c, q.bits, q.group_size, 0);
  return o;
}

// max |a - b| over every step and logit.
float max_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  float d = 0;
  for (size_t s = 0; s < a.size(); ++s)
    for (size_t i = 0; i < a[s].size(); ++i) d = std::max(d, std::abs(a[s][i] - b[s][i]));
  return d;
}

struct Subject {
  std::string name, dir;
};

const Subject kModels[] = {
    {"qwen3", std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/qwen3/f32"},  // head_dim 32
    {"default", std::string(CAIRN_SOURCE_DIR) + "/models/default"},                 // head_dim 64
};

// Calls f(model, ids, format) for every affine format the model's head_dim allows.
template <typename F>
void for_each_format(F&& f) {
  for (const Subject& s : kModels) {
    std::unique_ptr<Model> m = load_model(s.dir, {});
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < kTotal; ++i)
      ids.push_back(static_cast<int32_t>((i * 7919 + 3) % m->config().vocab_size));
    for (int32_t bits : {8, 4})
      for (int32_t gs : {32, 64, 128})
        if (m->config().head_dim % gs == 0) f(s.name, *m, ids, ops::KvRowQuant{bits, gs});
  }
}

TEST(DeviceKvQuantized, EqualsAnF32CacheOfRoundTrippedRows) {
  for_each_format([](const std::string& name, Model& m, const std::vector<int32_t>& ids,
                     const ops::KvRowQuant& q) {
    DeviceKvCache device(m.config(), kCpu, DType::kBF16, 1, kTotal, q);
    RoundTripCache ref(m.config(), q);
    EXPECT_EQ(run(m, device, ids), run(m, ref, ids))
        << name << " q" << q.bits << "g" << q.group_size;
  });
}

TEST(DeviceKvQuantized, CloseToPagedStateInTheSameFormat) {
  for_each_format([](const std::string& name, Model& m, const std::vector<int32_t>& ids,
                     const ops::KvRowQuant& q) {
    PagedKvState full(m.config(), f32_pages(m.config(), {}));
    PagedKvState paged(m.config(), f32_pages(m.config(), q));
    DeviceKvCache device(m.config(), kCpu, DType::kBF16, 1, kTotal, q);
    const auto exact = run(m, full, ids), want = run(m, paged, ids), got = run(m, device, ids);
    float max_logit = 0;
    for (const auto& row : exact)
      for (float x : row) max_logit = std::max(max_logit, std::abs(x));
    const float d = max_diff(got, want), paged_error = max_diff(want, exact);
    std::printf(
        "[device kv] %s q%dg%d: max |device - paged| %.3g, |paged - full| %.3g, "
        "max |logit| %.3g\n",
        name.c_str(), q.bits, q.group_size, d, paged_error, max_logit);
    EXPECT_GT(paged_error, 0.0f) << "the paged state quantized nothing";
    EXPECT_LE(d, 2.0f * paged_error) << name << " q" << q.bits << "g" << q.group_size;
    if (q.bits == 8) {
      EXPECT_LE(d, 0.03f * max_logit) << name << " q8g" << q.group_size;
    }
  });
}

}  // namespace
}  // namespace cairn::test
