// The simplest KvView: per sequence slot and layer, one contiguous f32 buffer of
// max_tokens rows for K and one for V. Appends go to the end; attention runs over
// rows [0, n_tokens). Every layer keeps every position (a sliding-window layer
// masks, it does not free). The paged KV state replaces it.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/kv_view.h"

namespace cairn {

class ContiguousKvCache final : public KvView {
 public:
  // Buffers of a slot are allocated on its first append.
  ContiguousKvCache(const ModelConfig& config, int32_t n_slots, int64_t max_tokens);

  // Forgets every position of `slot` (keeps its buffers).
  void reset(int32_t slot);
  // Positions stored in `slot` (after a complete forward step: by every layer).
  int64_t n_tokens(int32_t slot) const;
  int32_t n_slots() const { return static_cast<int32_t>(slots_.size()); }
  int64_t max_tokens() const { return max_tokens_; }

  // Error(kOutOfMemory) when a slot would pass max_tokens; Error(kInvalidArgument)
  // for a slot out of range or a span whose positions do not continue the slot's.
  void append_and_attend(int il, const ForwardBatch& batch, const Tensor& q, const Tensor& k,
                         const Tensor& v, const ops::AttentionParams& p, Tensor& out) override;

 private:
  struct Slot {
    std::vector<Tensor> k, v;        // [n_layers] of [max_tokens, n_kv_heads, head_dim] f32
    std::vector<int64_t> n_layer;    // [n_layers] rows written per layer
    std::vector<int32_t> positions;  // [rows written by layer 0]
  };
  Slot& slot_for(int32_t seq_slot);
  void append(Slot& s, int il, const SeqSpan& span, const ForwardBatch& batch, const Tensor& k,
              const Tensor& v);

  int64_t n_layers_, n_kv_heads_, head_dim_, max_tokens_;
  std::vector<Slot> slots_;
};

}  // namespace cairn
