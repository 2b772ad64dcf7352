// A loaded model: its configuration and a forward step over a ragged batch.
#pragma once

#include <memory>
#include <string>

#include "core/tensor.h"
#include "model/forward_batch.h"
#include "model/kv_view.h"

namespace cairn {

struct ModelConfig;

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelConfig& config() const = 0;
  // Runs every layer over `batch`, appending its K/V through `kv`, and writes the
  // logits of batch.logit_rows() into logits [n_logit_rows, vocab] (f32).
  virtual void forward(const ForwardBatch& batch, KvView& kv, Tensor& logits) = 0;
};

}  // namespace cairn
