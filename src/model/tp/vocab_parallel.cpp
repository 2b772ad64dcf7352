#include "model/tp/vocab_parallel.h"

#include <cstring>

#include "backend/device.h"
#include "backend/ops.h"
#include "core/error.h"

namespace cairn::tp {
namespace {

void fill_zeros(Tensor& t) {
  if (t.device().kind == DeviceKind::kCpu)
    std::memset(t.raw(), 0, t.nbytes());
  else
    device_backend(t.device().kind).fill_uniform(t, 0, 0.0f, 0.0f);
}

// A contiguous view of n f32 values of t starting at element `offset`.
Tensor f32_span(const Tensor& t, int64_t offset, int64_t n) {
  return Tensor::view_of(t.storage(), t.offset_bytes() + static_cast<size_t>(offset) * 4, {n},
                         DType::kF32);
}

}  // namespace

void vocab_parallel_embedding(const Tensor& embed_shard, const ShardPlan& plan,
                              std::span<const int32_t> ids, Communicator& comm, Tensor& x) {
  const RowRange& mine = plan.ranks.at(static_cast<size_t>(comm.rank())).vocab;
  const int64_t vocab = plan.ranks.back().vocab.end;
  std::vector<int32_t> local;  // ids of this shard, shifted to its rows
  std::vector<int64_t> at;     // the rows of x they fill
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      fail(ErrorCode::kInvalidArgument, "embedding: token id {} is outside the vocabulary [0, {})",
           ids[i], vocab);
    if (ids[i] < mine.begin || ids[i] >= mine.end) continue;
    local.push_back(static_cast<int32_t>(ids[i] - mine.begin));
    at.push_back(static_cast<int64_t>(i));
  }
  fill_zeros(x);
  if (!local.empty()) {
    Tensor rows = empty_on(x.device(), {static_cast<int64_t>(local.size()), x.dim(1)}, DType::kF32);
    ops::embedding(embed_shard, local, rows);
    DeviceBackend& b = device_backend(x.device().kind);
    for (size_t j = 0; j < at.size(); ++j) {
      Tensor dst = x.slice_rows(at[j], at[j] + 1);
      b.copy(rows.slice_rows(static_cast<int64_t>(j), static_cast<int64_t>(j) + 1), dst);
    }
  }
  comm.all_reduce_sum(x);
}

void vocab_parallel_logits(const Tensor& x, const Tensor& lm_head_shard, const ShardPlan& plan,
                           float softcap, Communicator& comm, Tensor* logits) {
  const int64_t n = x.dim(0), pad = plan.vocab_pad, n_ranks = plan.n_ranks;
  const int64_t width = lm_head_shard.dim(0);
  Tensor mine = empty_on(x.device(), {n, width}, DType::kF32);  // [n_rows, vocab_r]
  ops::matmul(x, lm_head_shard, nullptr, mine);
  if (softcap > 0) ops::softcap(mine, softcap);
  Tensor send = empty_on(x.device(), {n, pad}, DType::kF32);  // rows padded to vocab_pad
  if (width < pad) fill_zeros(send);
  DeviceBackend& b = device_backend(x.device().kind);
  for (int64_t i = 0; i < n; ++i) {
    Tensor dst = f32_span(send, i * pad, width);
    b.copy(f32_span(mine, i * width, width), dst);
  }
  Tensor all = empty_on(x.device(), {n_ranks, n, pad}, DType::kF32);
  comm.all_gather(send.reshape({n * pad}), all);
  if (logits == nullptr) return;
  const int64_t vocab = plan.ranks.back().vocab.end;
  CAIRN_CHECK(logits->dim(0) == n && logits->dim(1) == vocab, "logits {}", logits->describe());
  for (int64_t r = 0; r < n_ranks; ++r) {
    const RowRange& v = plan.ranks[static_cast<size_t>(r)].vocab;
    for (int64_t i = 0; i < n; ++i) {
      Tensor dst = f32_span(*logits, i * vocab + v.begin, v.size());
      b.copy(f32_span(all, (r * n + i) * pad, v.size()), dst);
    }
  }
  b.synchronize();
}

}  // namespace cairn::tp
