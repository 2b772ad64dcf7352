#include "model/tp/tensor_parallel_model.h"

#include "core/error.h"
#include "model/tp/sharded_kv.h"
#include "model/tp/sharded_weights.h"

namespace cairn::tp {
namespace {

int threads_per_rank(int n_threads, int n_ranks) {
  if (n_threads <= 0) n_threads = ThreadPool::global().n_threads();
  return std::max(1, n_threads / n_ranks);
}

}  // namespace

TensorParallelModel::TensorParallelModel(const DecoderModel& model, int n_ranks, int n_threads)
    : config_(model.config()),
      options_(model.options()),
      plan_(make_shard_plan(config_, n_ranks)),
      group_(n_ranks),
      threads_(n_ranks, threads_per_rank(n_threads, n_ranks)) {
  for (int r = 0; r < n_ranks; ++r)
    ranks_.push_back(
        {rank_config(config_, plan_, r),
         shard_weights(model.weights(), config_.head_dim, plan_.ranks[static_cast<size_t>(r)])});
}

std::vector<ModelConfig> TensorParallelModel::kv_shard_configs() const {
  std::vector<ModelConfig> out;
  for (const RankModel& r : ranks_) out.push_back(r.config);
  return out;
}

void TensorParallelModel::check_batch(const ForwardBatch& batch, const Tensor& logits) const {
  const int64_t n = batch.n_tokens();
  const size_t n_rows = batch.logit_rows().size();
  if (logits.ndim() != 2 || logits.dim(0) != static_cast<int64_t>(n_rows) ||
      logits.dim(1) != config_.vocab_size || logits.dtype() != DType::kF32)
    fail(ErrorCode::kInvalidArgument, "forward: logits is {}, expected f32[{}, {}]",
         logits.describe(), n_rows, config_.vocab_size);
  if (static_cast<int64_t>(batch.positions.size()) != n)
    fail(ErrorCode::kInvalidArgument, "forward: {} positions for {} tokens", batch.positions.size(),
         n);
  for (int32_t id : batch.tokens)
    if (id < 0 || id >= config_.vocab_size)
      fail(ErrorCode::kInvalidArgument, "forward: token id {} is outside the vocabulary [0, {})",
           id, config_.vocab_size);
}

void TensorParallelModel::forward(const ForwardBatch& batch, KvView& kv, Tensor& logits) {
  check_batch(batch, logits);
  // One rank reads any view; several read a sharded one, a shard each.
  auto* sharded = dynamic_cast<ShardedKvView*>(&kv);
  if (n_ranks() > 1 && (sharded == nullptr || sharded->n_shards() != n_ranks()))
    fail(ErrorCode::kInvalidArgument,
         "forward: a model split over {} tensor-parallel ranks needs a sharded KV view with one "
         "shard per rank (Model::kv_shard_configs)",
         n_ranks());
  if (batch.n_tokens() == 0) return;
  auto rank_step = [&](int r) {
    KvView& shard = sharded != nullptr ? sharded->shard(r) : kv;
    rank_forward(ranks_[static_cast<size_t>(r)], options_, plan_, batch, shard, group_.rank(r),
                 r == 0 ? &logits : nullptr);
  };
  std::function<void()> on_failure = [this] { group_.rank(0).abort(); };
  try {
    threads_.run(rank_step, on_failure);
  } catch (...) {
    group_.rank(0).reset();  // every rank has returned: the group is idle
    throw;
  }
}

std::unique_ptr<Model> make_tensor_parallel(std::unique_ptr<Model> model, int n_ranks) {
  if (n_ranks == 1) return model;
  auto* decoder = dynamic_cast<DecoderModel*>(model.get());
  if (decoder == nullptr)
    fail(ErrorCode::kUnsupported, "tensor parallel: {} is not a decoder model",
         model->config().path);
  if (decoder->device().kind != DeviceKind::kCpu)
    fail(ErrorCode::kUnsupported,
         "tensor parallel runs its ranks on CPU threads; the model is on a GPU");
  return std::make_unique<TensorParallelModel>(*decoder, n_ranks);
}

}  // namespace cairn::tp
