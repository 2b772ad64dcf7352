#include "kv/contiguous_cache.h"

#include <cstring>

#include "core/error.h"
#include "kv/page_attention.h"

namespace cairn {

ContiguousKvCache::ContiguousKvCache(const ModelConfig& c, int32_t n_slots, int64_t max_tokens)
    : n_layers_(c.n_layers),
      n_kv_heads_(c.n_kv_heads),
      head_dim_(c.head_dim),
      max_tokens_(max_tokens) {
  if (n_slots <= 0 || max_tokens <= 0)
    fail(ErrorCode::kInvalidArgument, "ContiguousKvCache: n_slots {} and max_tokens {} must be > 0",
         n_slots, max_tokens);
  slots_.resize(static_cast<size_t>(n_slots));
}

void ContiguousKvCache::reset(int32_t slot) {
  Slot& s = slot_for(slot);
  std::fill(s.n_layer.begin(), s.n_layer.end(), 0);
  s.positions.clear();
}

int64_t ContiguousKvCache::n_tokens(int32_t slot) const {
  if (slot < 0 || slot >= n_slots())
    fail(ErrorCode::kInvalidArgument, "ContiguousKvCache: slot {} outside [0, {})", slot,
         n_slots());
  const Slot& s = slots_[static_cast<size_t>(slot)];
  return s.n_layer.empty() ? 0 : s.n_layer.back();
}

ContiguousKvCache::Slot& ContiguousKvCache::slot_for(int32_t slot) {
  if (slot < 0 || slot >= n_slots())
    fail(ErrorCode::kInvalidArgument, "ContiguousKvCache: slot {} outside [0, {})", slot,
         n_slots());
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.k.empty()) {
    for (int64_t il = 0; il < n_layers_; ++il) {
      s.k.push_back(Tensor::empty({max_tokens_, n_kv_heads_, head_dim_}, DType::kF32));
      s.v.push_back(Tensor::empty({max_tokens_, n_kv_heads_, head_dim_}, DType::kF32));
    }
    s.n_layer.assign(static_cast<size_t>(n_layers_), 0);
  }
  return s;
}

// Copies the span's rows of k, v into the slot's layer buffers; layer 0 also
// records their positions, which must continue the slot's (contiguous cache).
void ContiguousKvCache::append(Slot& s, int il, const SeqSpan& span, const ForwardBatch& batch,
                               const Tensor& k, const Tensor& v) {
  int64_t& len = s.n_layer[static_cast<size_t>(il)];
  if (len + span.n_tokens > max_tokens_)
    fail(ErrorCode::kOutOfMemory, "ContiguousKvCache: slot {} would hold {} positions, max {}",
         span.seq_slot, len + span.n_tokens, max_tokens_);
  if (il == 0) {
    for (int64_t i = 0; i < span.n_tokens; ++i) {
      int32_t pos = batch.positions[static_cast<size_t>(span.token_begin + i)];
      if (pos != len + i)
        fail(ErrorCode::kInvalidArgument,
             "ContiguousKvCache: slot {} expects position {}, the batch gives {}", span.seq_slot,
             len + i, pos);
      s.positions.push_back(pos);
    }
  }
  size_t row_bytes = static_cast<size_t>(n_kv_heads_ * head_dim_) * sizeof(float);
  size_t bytes = row_bytes * static_cast<size_t>(span.n_tokens);
  const size_t src_off = row_bytes * static_cast<size_t>(span.token_begin);
  std::memcpy(s.k[static_cast<size_t>(il)].data<uint8_t>() + row_bytes * static_cast<size_t>(len),
              k.data<uint8_t>() + src_off, bytes);
  std::memcpy(s.v[static_cast<size_t>(il)].data<uint8_t>() + row_bytes * static_cast<size_t>(len),
              v.data<uint8_t>() + src_off, bytes);
  len += span.n_tokens;
}

void ContiguousKvCache::append_and_attend(int il, const ForwardBatch& batch, const Tensor& q,
                                          const Tensor& k, const Tensor& v,
                                          const ops::AttentionParams& p, Tensor& out) {
  CAIRN_CHECK(il >= 0 && il < n_layers_, "layer {} of {}", il, n_layers_);
  CAIRN_CHECK(k.dtype() == DType::kF32 && k.is_contiguous() && v.is_contiguous(),
              "contiguous f32 k/v expected, got {}", k.describe());
  for (const SeqSpan& span : batch.spans) {
    if (span.n_tokens == 0) continue;
    Slot& s = slot_for(span.seq_slot);
    append(s, il, span, batch, k, v);
    int64_t len = s.n_layer[static_cast<size_t>(il)];
    // One page holding every row: the paged state's per-query routine, so the
    // two caches read bit for bit alike (page_attention.h).
    const uint8_t* kp[1] = {s.k[static_cast<size_t>(il)].data<uint8_t>()};
    const uint8_t* vp[1] = {s.v[static_cast<size_t>(il)].data<uint8_t>()};
    const size_t row_bytes = static_cast<size_t>(head_dim_) * sizeof(float);
    PagedRows rows{kp,          vp,
                   max_tokens_, row_bytes * static_cast<size_t>(n_kv_heads_),
                   row_bytes,   full_format(KvStore::kF32),
                   len};
    const int64_t row = q.dim(1) * head_dim_;
    std::span<const int32_t> q_pos(batch.positions.data() + span.token_begin,
                                   static_cast<size_t>(span.n_tokens));
    attend_paged(rows, q.data<float>() + span.token_begin * row, q_pos, q.dim(1), n_kv_heads_,
                 head_dim_, p, out.data<float>() + span.token_begin * row);
  }
}

}  // namespace cairn
