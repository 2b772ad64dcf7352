#include "model/tp/tensor_parallel_model.h"

#include "backend/device.h"
#include "core/error.h"
#include "model/device_weights.h"
#include "model/fused_projections.h"
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
      devices_(static_cast<size_t>(n_ranks), 0),
      group_(device_backend(DeviceKind::kCpu).make_rank_group(devices_)),
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

std::vector<Device> TensorParallelModel::kv_shard_devices() const {
  std::vector<Device> out;
  for (int d : devices_) out.push_back({kind_, d});
  return out;
}

Device TensorParallelModel::device() const {
  return {kind_, devices_[0]};
}

void TensorParallelModel::to_device(Device device) {
  if (device.kind == DeviceKind::kCpu) {
    if (kind_ != DeviceKind::kCpu) place_ranks(DeviceKind::kCpu, std::vector<int>(ranks_.size()));
    return;
  }
  const int present = device_backend(device.kind).device_count();
  if (present < n_ranks())
    fail(ErrorCode::kInvalidArgument,
         "tensor parallel {}: one GPU a rank, and {} GPU{} present (use --device cpu, or a "
         "smaller --tensor-parallel)",
         n_ranks(), present, present == 1 ? " is" : "s are");
  std::vector<int> devices;
  for (int r = 0; r < n_ranks(); ++r) devices.push_back(r);
  if (kind_ != device.kind || devices != devices_) place_ranks(device.kind, devices);
}

void TensorParallelModel::place_ranks(DeviceKind kind, const std::vector<int>& devices) {
  if (devices.size() != ranks_.size())
    fail(ErrorCode::kInvalidArgument, "tensor parallel {}: {} devices given", n_ranks(),
         devices.size());
  DeviceBackend& backend = device_backend(kind);
  std::unique_ptr<RankGroup> group = backend.make_rank_group(devices);
  auto place = [&](int r) {
    const int d = devices[static_cast<size_t>(r)];
    backend.bind_thread(d);
    RankModel& m = ranks_[static_cast<size_t>(r)];
    m.weights = weights_on(m.weights, {kind, d});
    fuse_projections(m.weights);
  };
  threads_.run(place, [] {});
  kind_ = kind;
  devices_ = devices;
  group_ = std::move(group);
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
  // The ranks' streams are not the caller's: the caller's work on the pages and the logits is
  // done before they start, and theirs before forward returns.
  DeviceBackend& backend = device_backend(kind_);
  backend.synchronize();
  auto rank_step = [&](int r) {
    KvView& shard = sharded != nullptr ? sharded->shard(r) : kv;
    Communicator& comm = group_->rank(r);
    rank_forward(ranks_[static_cast<size_t>(r)], options_, plan_, batch, shard, comm,
                 r == 0 ? &logits : nullptr);
    comm.finish();  // its collectives, and so every op before them, done; then the rest
    backend.synchronize();
  };
  run_on_ranks(rank_step);
}

void TensorParallelModel::run_on_ranks(const std::function<void(int)>& fn) {
  std::function<void()> on_failure = [this] { group_->rank(0).abort(); };
  try {
    threads_.run(fn, on_failure);
  } catch (...) {
    group_->rank(0).reset();  // every rank has returned: the group is idle
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
         "tensor parallel shards a model from host memory; split it before moving it to a GPU");
  return std::make_unique<TensorParallelModel>(*decoder, n_ranks);
}

}  // namespace cairn::tp
