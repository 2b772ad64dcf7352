// A KvView for a model on any device: per sequence slot and layer, one
// contiguous K and one V buffer of max_tokens rows in that device's memory, in
// f32, bf16 or f16. Appends convert the step's f32 rows into the buffer;
// attention is ops::attention over rows [0, n_tokens) (causal by position,
// windows masked, nothing freed). The GPU's cache until paged device pages
// land; on the CPU it equals ContiguousKvCache up to the attention kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/kv_view.h"

namespace cairn {

class DeviceKvCache final : public KvView {
 public:
  // Buffers of a slot are allocated on its first append. dtype: f32, bf16 or f16.
  DeviceKvCache(const ModelConfig& config, Device device, DType dtype, int32_t n_slots,
                int64_t max_tokens);

  void reset(int32_t slot);
  int64_t n_tokens(int32_t slot) const;
  // Benchmarks: makes `slot` hold n_tokens positions (0 .. n_tokens-1) of K and
  // V uniform in [-1, 1) from `seed` in every layer, without computing them —
  // a long context at the cost of a fill. Error(kOutOfMemory) past max_tokens.
  void fill_random(int32_t slot, int64_t n_tokens, uint64_t seed);
  // Bytes one slot's buffers take once allocated.
  size_t slot_bytes() const;

  // Error(kOutOfMemory) past max_tokens; Error(kInvalidArgument) for a slot out
  // of range or positions that do not continue the slot's.
  void append_and_attend(int il, const ForwardBatch& batch, const Tensor& q, const Tensor& k,
                         const Tensor& v, const ops::AttentionParams& p, Tensor& out) override;

 private:
  struct Slot {
    std::vector<Tensor> k, v;        // [n_layers] of [max_tokens, n_kv_heads, head_dim]
    std::vector<int64_t> n_layer;    // [n_layers] rows written per layer
    std::vector<int32_t> positions;  // 0, 1, ... for rows written by layer 0
  };
  Slot& slot_for(int32_t seq_slot);

  Device device_;
  DType dtype_;
  int64_t n_layers_, n_kv_heads_, head_dim_, max_tokens_;
  std::vector<Slot> slots_;
};

}  // namespace cairn
