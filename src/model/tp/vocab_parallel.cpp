#include "model/tp/vocab_parallel.h"

#include <cstring>

#include "backend/device.h"
#include "backend/ops.h"
#include "core/error.h"

namespace cairn::tp {

void fill_zeros(Tensor& t) {
  if (t.device().kind == DeviceKind::kCpu)
    std::memset(t.raw(), 0, t.nbytes());
  else
    device_backend(t.device().kind).fill_uniform(t, 0, 0.0f, 0.0f);
}

namespace {

// Rows [first, first + n) of t [*, w] f32 as a contiguous [n, w] view.
Tensor f32_rows(const Tensor& t, int64_t first, int64_t n, int64_t w) {
  return Tensor::view_of(t.storage(), t.offset_bytes() + static_cast<size_t>(first * w) * 4, {n, w},
                         DType::kF32);
}

// rows [k, hidden] into the rows `at` [k] (ascending) of x: one copy per run of consecutive rows,
// in one call.
void scatter_rows(const Tensor& rows, const std::vector<int64_t>& at, Tensor& x) {
  std::vector<ops::RowCopy> runs;
  for (size_t j = 0; j < at.size(); ++j) {
    const auto jj = static_cast<int64_t>(j);
    if (!runs.empty() && runs.back().dst_row + runs.back().n_rows == at[j])
      ++runs.back().n_rows;
    else
      runs.push_back({&rows, jj, &x, at[j], 1});
  }
  ops::convert_rows(runs);
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
    scatter_rows(rows, at, x);
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
  DeviceBackend& b = device_backend(x.device().kind);
  Tensor send = mine;  // rows padded to vocab_pad
  if (width < pad) {
    send = empty_on(x.device(), {n, pad}, DType::kF32);
    fill_zeros(send);
    b.copy_columns(mine, 0, send, 0, width);
  }
  Tensor all = empty_on(x.device(), {n_ranks, n, pad}, DType::kF32);
  comm.all_gather(send.reshape({n * pad}), all);
  if (logits == nullptr) return;
  const int64_t vocab = plan.ranks.back().vocab.end;
  CAIRN_CHECK(logits->dim(0) == n && logits->dim(1) == vocab, "logits {}", logits->describe());
  for (int64_t r = 0; r < n_ranks; ++r) {
    const RowRange& v = plan.ranks[static_cast<size_t>(r)].vocab;
    b.copy_columns(f32_rows(all, r * n, n, pad), 0, *logits, v.begin, v.size());
  }
  b.synchronize();
}

}  // namespace cairn::tp
