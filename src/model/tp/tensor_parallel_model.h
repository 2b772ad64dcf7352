// A decoder split over N tensor-parallel ranks behind the same Model interface
// (docs/tensor-parallel.md): each rank holds its shards of the weights
// (shard_plan.h, sharded_weights.h) and runs rank_forward on its own thread; the
// ranks talk through their device's rank group (DeviceBackend::make_rank_group:
// the in-process group on the CPU, the peer or NCCL group on GPUs). The KV
// state passed to forward is a ShardedKvView with one shard per rank, made for
// kv_shard_configs(), each shard on its rank's device.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "model/decoder.h"
#include "model/tp/rank_forward.h"
#include "model/tp/rank_threads.h"
#include "model/tp/shard_plan.h"

namespace cairn::tp {

// A step's collectives run alone (TensorParallelModel::time_collectives): what they move and
// how long they take when nothing else runs on the ranks' devices.
struct CollectiveTimes {
  int all_reduces = 0;              // a step's: the embedding's, then two a layer
  int64_t all_reduce_bytes = 0;     // each one's: [rows, hidden] f32
  int64_t all_gather_bytes = 0;     // the logits' one, as each rank receives it: [ranks, rows, pad]
  double all_reduce_seconds = 0.0;  // all of a step's, end to end: the median of the rounds
  double all_gather_seconds = 0.0;
};

class TensorParallelModel final : public Model {
 public:
  // Shards `model` (weights on the host) over n_ranks ranks whose ops share
  // `n_threads` CPU threads (0: the process-wide pool's count). Error(kInvalidArgument)
  // from make_shard_plan for a size that does not fit the model.
  TensorParallelModel(const DecoderModel& model, int n_ranks, int n_threads = 0);

  const ModelConfig& config() const override { return config_; }
  // `kv`: a ShardedKvView with one shard per rank (Error(kInvalidArgument)), or
  // with one rank, any view.
  void forward(const ForwardBatch& batch, KvView& kv, Tensor& logits) override;
  std::vector<ModelConfig> kv_shard_configs() const override;
  std::vector<Device> kv_shard_devices() const override;

  // Rank 0's device.
  Device device() const override;
  // On a GPU: rank r onto GPU r (Error(kInvalidArgument) when fewer GPUs than ranks are
  // present); on the CPU: every rank back in host memory.
  void to_device(Device device) override;
  // Rank r's weights onto device devices[r] of `kind`, its thread bound to that device first
  // (DeviceBackend::bind_thread); the ranks then meet through the backend's group for these
  // devices. Devices may repeat: ranks sharing one GPU (how one GPU runs a split model).
  void place_ranks(DeviceKind kind, const std::vector<int>& devices);

  // The collectives rank_forward calls in a step of `rows` tokens, `logit_rows` of them
  // with logits (the same sizes, in the same order, over zeros on the ranks' threads and
  // devices), run alone `rounds` times after one untimed round (a group's first collective
  // may set up its connections). What a step spends in collectives, less any overlap with
  // its kernels; the ranks' other work is not touched.
  CollectiveTimes time_collectives(int64_t rows, int64_t logit_rows, int rounds);
  // The link the collectives cross: one copy of `bytes` from rank 0's memory to rank 1's (on
  // their devices, issued on rank 0's thread), `rounds` times after an untimed one; the
  // median's seconds. Error(kInvalidArgument) for one rank, bytes < 4 or rounds < 1.
  double time_link(int64_t bytes, int rounds);

  const ShardPlan& plan() const { return plan_; }
  int n_ranks() const { return plan_.n_ranks; }

 private:
  void check_batch(const ForwardBatch& batch, const Tensor& logits) const;
  // fn(r) on each rank's thread; a rank that throws aborts the group so that the others
  // return, and the group is reset before the error is rethrown.
  void run_on_ranks(const std::function<void(int)>& fn);

  ModelConfig config_;
  DecoderOptions options_;
  ShardPlan plan_;
  std::vector<RankModel> ranks_;  // [n_ranks]
  DeviceKind kind_ = DeviceKind::kCpu;
  std::vector<int> devices_;  // [n_ranks] each rank's device index
  std::unique_ptr<RankGroup> group_;
  RankThreads threads_;
};

// `model` split over n_ranks ranks; n_ranks == 1 returns it unchanged.
// Error(kUnsupported) for a model that is not a decoder on the host.
std::unique_ptr<Model> make_tensor_parallel(std::unique_ptr<Model> model, int n_ranks);

}  // namespace cairn::tp
