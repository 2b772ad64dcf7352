// A loaded model: its configuration and a forward step over a ragged batch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "model/config.h"
#include "model/forward_batch.h"
#include "model/kv_view.h"

namespace cairn {

// The largest decode batch captured into graphs by default (--max-cudagraph-capture-size).
inline constexpr int64_t kDefaultGraphBatch = 128;

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelConfig& config() const = 0;
  // Runs every layer over `batch`, appending its K/V through `kv`, and writes the
  // logits of batch.logit_rows() into logits [n_logit_rows, vocab] (f32).
  // `logits` may be on the host or the model's device.
  virtual void forward(const ForwardBatch& batch, KvView& kv, Tensor& logits) = 0;

  // Where the weights live and the forward computes; to_device moves them
  // (Error(kUnsupported) from a model that cannot move).
  virtual Device device() const { return Device::cpu(); }
  // Inline, like every virtual here, so that users of Model need no model library.
  virtual void to_device(Device device) {
    if (device != this->device())
      fail(ErrorCode::kUnsupported, "this model cannot move to another device");
  }

  // Decode steps of up to max_batch sequences replay captured graphs where the
  // device has them (docs/cuda.md); 0 runs every step eagerly (--enforce-eager).
  // A model without graphs ignores it.
  virtual void set_step_graphs(int64_t max_batch) { (void)max_batch; }

  // The shards of the KV state forward expects: one config per shard, with that
  // shard's n_heads and n_kv_heads. One (config()) for a model on one device; a
  // tensor-parallel model has one per rank and reads a tp::ShardedKvView
  // (model/tp/sharded_kv.h) holding a view made for each, in rank order.
  virtual std::vector<ModelConfig> kv_shard_configs() const { return {config()}; }
  // The device each KV shard's pages must live on (rank order): the model's device for every
  // shard, or for a model whose ranks are on several GPUs each rank's.
  virtual std::vector<Device> kv_shard_devices() const {
    return std::vector<Device>(kv_shard_configs().size(), device());
  }
};

}  // namespace cairn
