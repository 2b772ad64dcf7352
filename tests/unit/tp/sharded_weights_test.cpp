// A rank's weight shards: row ranges of the column-parallel matrices (views of
// the stored tensors), copied column ranges of the row-parallel ones, the
// vocabulary rows of the embedding and LM head; put back together they are the
// model's weights, bit for bit, in their stored dtype.
#include "model/tp/sharded_weights.h"

#include <gtest/gtest.h>

#include "backend/device.h"
#include "core/error.h"
#include "model/device_weights.h"
#include "tp_test_util.h"

namespace cairn::tp {
namespace {

using test::row_bytes;
using test::tiny_config;

// Columns [begin, end) of m, row by row, as bytes.
std::vector<uint8_t> column_bytes(const Tensor& m, int64_t begin, int64_t end) {
  std::vector<uint8_t> out;
  size_t e = dtype_bytes(m.dtype(), 1);
  const auto* p = static_cast<const uint8_t*>(m.raw());
  for (int64_t i = 0; i < m.dim(0); ++i)
    out.insert(out.end(), p + static_cast<size_t>(i * m.dim(1) + begin) * e,
               p + static_cast<size_t>(i * m.dim(1) + end) * e);
  return out;
}

bool same_view(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset_bytes() == b.offset_bytes();
}

Tensor random_bias(int64_t n, uint64_t seed) {
  Tensor t = Tensor::empty({n}, DType::kF32);
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = uniform_at(seed, static_cast<uint64_t>(i));
  return t;
}

class ShardedWeights : public ::testing::TestWithParam<DType> {};

TEST_P(ShardedWeights, ShardsPutBackTogetherAreTheModel) {
  for (bool tied : {false, true}) {
    ModelConfig c = tiny_config(tied);
    DecoderWeights w = random_weights(c, GetParam(), Device::cpu(), true, 3);
    for (LayerWeights& l : w.layers) {
      l.attn.bq = random_bias(c.n_heads * c.head_dim, 1);
      l.attn.bk = random_bias(c.n_kv_heads * c.head_dim, 2);
    }
    const int64_t hd = c.head_dim;
    for (int n : valid_tensor_parallel_sizes(c)) {
      ShardPlan p = make_shard_plan(c, n);
      for (int r = 0; r < n; ++r) {
        const RankShard& s = p.ranks[static_cast<size_t>(r)];
        DecoderWeights x = shard_weights(w, hd, s);
        SCOPED_TRACE(testing::Message() << "size " << n << " rank " << r << " tied " << tied);
        EXPECT_EQ(row_bytes(x.embed, 0, s.vocab.size()),
                  row_bytes(w.embed, s.vocab.begin, s.vocab.end));
        EXPECT_EQ(row_bytes(x.lm_head, 0, s.vocab.size()),
                  row_bytes(w.lm_head, s.vocab.begin, s.vocab.end));
        EXPECT_EQ(same_view(x.lm_head, x.embed), tied);
        for (size_t il = 0; il < w.layers.size(); ++il) {
          const AttentionWeights &a = w.layers[il].attn, &b = x.layers[il].attn;
          EXPECT_EQ(b.wq.dtype(), GetParam());
          EXPECT_EQ(b.wq.shape(), (Shape{s.q_heads.size() * hd, c.hidden_size}));
          EXPECT_EQ(row_bytes(b.wq, 0, b.wq.dim(0)),
                    row_bytes(a.wq, s.q_heads.begin * hd, s.q_heads.end * hd));
          EXPECT_EQ(row_bytes(b.wk, 0, b.wk.dim(0)),
                    row_bytes(a.wk, s.kv_heads.begin * hd, s.kv_heads.end * hd));
          EXPECT_EQ(row_bytes(b.bq, 0, b.bq.dim(0)),
                    row_bytes(a.bq, s.q_heads.begin * hd, s.q_heads.end * hd));
          EXPECT_EQ(row_bytes(b.bk, 0, b.bk.dim(0)),
                    row_bytes(a.bk, s.kv_heads.begin * hd, s.kv_heads.end * hd));
          EXPECT_FALSE(b.bv.defined());
          EXPECT_EQ(b.wo.shape(), (Shape{c.hidden_size, s.q_heads.size() * hd}));
          EXPECT_EQ(column_bytes(b.wo, 0, b.wo.dim(1)),
                    column_bytes(a.wo, s.q_heads.begin * hd, s.q_heads.end * hd));
          EXPECT_TRUE(same_view(b.q_norm, a.q_norm));
          const MlpWeights &m = w.layers[il].mlp, &k = x.layers[il].mlp;
          EXPECT_EQ(row_bytes(k.gate, 0, k.gate.dim(0)),
                    row_bytes(m.gate, s.intermediate.begin, s.intermediate.end));
          EXPECT_EQ(row_bytes(k.up, 0, k.up.dim(0)),
                    row_bytes(m.up, s.intermediate.begin, s.intermediate.end));
          EXPECT_EQ(column_bytes(k.down, 0, k.down.dim(1)),
                    column_bytes(m.down, s.intermediate.begin, s.intermediate.end));
          EXPECT_EQ(k.down.storage().use_count(), 1) << "down is a copy, owned by the shard";
          EXPECT_EQ(k.gate.storage(), m.gate.storage()) << "gate is a view";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ShardedWeights, ::testing::Values(DType::kF32, DType::kBF16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// The replicas of a KV head hold the same rows.
TEST(ShardedWeightsReplicas, ReplicatedKvHeadsAreTheSameRows) {
  ModelConfig c = tiny_config(false);
  c.n_kv_heads = 1;
  DecoderWeights w = random_weights(c, DType::kF32, Device::cpu(), false, 5);
  ShardPlan p = make_shard_plan(c, 3);
  ASSERT_EQ(p.kv_replicas, 3);
  DecoderWeights r0 = shard_weights(w, c.head_dim, p.ranks[0]);
  DecoderWeights r2 = shard_weights(w, c.head_dim, p.ranks[2]);
  EXPECT_EQ(row_bytes(r0.layers[1].attn.wv, 0, c.head_dim),
            row_bytes(r2.layers[1].attn.wv, 0, c.head_dim));
  EXPECT_EQ(row_bytes(r2.layers[1].attn.wv, 0, c.head_dim),
            row_bytes(w.layers[1].attn.wv, 0, c.head_dim));
}

TEST(ShardedWeightsReplicas, CopyColumns) {
  Tensor m = Tensor::empty({2, 5}, DType::kF32);
  for (int i = 0; i < 10; ++i) m.data<float>()[i] = static_cast<float>(i);
  Tensor c = copy_columns(m, 1, 4);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(test::values(c), (std::vector<float>{1, 2, 3, 6, 7, 8}));
  EXPECT_THROW(copy_columns(m, 3, 6), Error);
}

}  // namespace
}  // namespace cairn::tp
