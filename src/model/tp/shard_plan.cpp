#include "model/tp/shard_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"

namespace cairn::tp {
namespace {

bool fits(const ModelConfig& c, int64_t n) {
  if (n < 1 || c.n_heads % n != 0 || c.intermediate_size % n != 0) return false;
  return c.n_kv_heads % n == 0 || n % c.n_kv_heads == 0;
}

// Part i of `parts` over [0, n): the first n % parts parts hold one more row.
RowRange uneven_part(int64_t n, int64_t parts, int64_t i) {
  int64_t base = n / parts, extra = n % parts;
  int64_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

RowRange even_part(int64_t n, int64_t parts, int64_t i) {
  return {i * (n / parts), (i + 1) * (n / parts)};
}

}  // namespace

std::vector<int> valid_tensor_parallel_sizes(const ModelConfig& c) {
  std::vector<int> out;
  for (int64_t n = 1; n <= c.n_heads; ++n)
    if (fits(c, n)) out.push_back(static_cast<int>(n));
  return out;
}

ShardPlan make_shard_plan(const ModelConfig& c, int n_ranks) {
  if (c.n_heads < 1 || c.n_kv_heads < 1 || c.vocab_size < 1)
    fail(ErrorCode::kInvalidArgument, "{}: tensor parallel needs heads, KV heads and a vocabulary",
         c.path);
  if (!fits(c, n_ranks))
    fail(ErrorCode::kInvalidArgument,
         "tensor parallel {}: {} has {} attention heads, {} KV heads and intermediate size {}; "
         "the size must divide the heads and the intermediate size, and divide the KV heads or "
         "be a multiple of them (valid sizes: {})",
         n_ranks, c.path, c.n_heads, c.n_kv_heads, c.intermediate_size,
         fmt::join(valid_tensor_parallel_sizes(c), ", "));
  if (n_ranks > c.vocab_size)
    fail(ErrorCode::kInvalidArgument, "tensor parallel {}: {} has a vocabulary of {} tokens",
         n_ranks, c.path, c.vocab_size);
  ShardPlan p;
  p.n_ranks = n_ranks;
  const int64_t n = n_ranks;
  p.kv_replicas = c.n_kv_heads % n == 0 ? 1 : n / c.n_kv_heads;
  for (int64_t r = 0; r < n; ++r) {
    RankShard s;
    s.q_heads = even_part(c.n_heads, n, r);
    s.kv_heads = even_part(c.n_kv_heads, n / p.kv_replicas, r / p.kv_replicas);
    s.intermediate = even_part(c.intermediate_size, n, r);
    s.vocab = uneven_part(c.vocab_size, n, r);
    p.vocab_pad = std::max(p.vocab_pad, s.vocab.size());
    p.ranks.push_back(s);
  }
  return p;
}

ModelConfig rank_config(const ModelConfig& c, const ShardPlan& plan, int rank) {
  const RankShard& s = plan.ranks.at(static_cast<size_t>(rank));
  ModelConfig r = c;
  r.n_heads = s.q_heads.size();
  r.n_kv_heads = s.kv_heads.size();
  r.intermediate_size = s.intermediate.size();
  r.vocab_size = s.vocab.size();
  return r;
}

}  // namespace cairn::tp
