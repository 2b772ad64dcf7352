#include "kv/device_cache.h"

#include <algorithm>

#include "backend/device.h"
#include "core/error.h"

namespace cairn {

namespace {

// f32 staging of fill_random on a quantized cache: at most this many bytes per chunk.
constexpr int64_t kFillChunkBytes = int64_t{16} << 20;

}  // namespace

DeviceKvCache::DeviceKvCache(const ModelConfig& c, Device device, DType dtype, int32_t n_slots,
                             int64_t max_tokens, ops::KvRowQuant quant)
    : device_(device),
      dtype_(dtype),
      n_layers_(c.n_layers),
      n_kv_heads_(c.n_kv_heads),
      head_dim_(c.head_dim),
      max_tokens_(max_tokens),
      quant_(quant) {
  if (n_slots <= 0 || max_tokens <= 0)
    fail(ErrorCode::kInvalidArgument, "DeviceKvCache: n_slots {} and max_tokens {} must be > 0",
         n_slots, max_tokens);
  if (!dtype_is_float(dtype))
    fail(ErrorCode::kInvalidArgument, "DeviceKvCache: KV dtype must be f32, bf16 or f16");
  if (quant.bits != 0) check_affine(quant.bits, quant.group_size, head_dim_, "DeviceKvCache");
  slots_.resize(static_cast<size_t>(n_slots));
}

void DeviceKvCache::reset(int32_t slot) {
  Slot& s = slot_for(slot);
  std::fill(s.n_layer.begin(), s.n_layer.end(), 0);
}

int64_t DeviceKvCache::n_tokens(int32_t slot) const {
  if (slot < 0 || slot >= static_cast<int32_t>(slots_.size()))
    fail(ErrorCode::kInvalidArgument, "DeviceKvCache: slot {} outside [0, {})", slot,
         slots_.size());
  const Slot& s = slots_[static_cast<size_t>(slot)];
  return s.n_layer.empty() ? 0 : s.n_layer.back();
}

void DeviceKvCache::fill_random(int32_t slot, int64_t n_tokens, uint64_t seed) {
  if (n_tokens < 0 || n_tokens > max_tokens_)
    fail(ErrorCode::kOutOfMemory, "DeviceKvCache: {} positions asked, max {}", n_tokens,
         max_tokens_);
  Slot& s = slot_for(slot);
  DeviceBackend& dev = device_backend(device_.kind);
  for (size_t il = 0; il < s.k.size(); ++il) {
    if (quant_.enabled()) {
      fill_quantized(s.k[il], n_tokens, seed + 2 * il);
      fill_quantized(s.v[il], n_tokens, seed + 2 * il + 1);
    } else {
      Tensor k = s.k[il].slice_rows(0, n_tokens), v = s.v[il].slice_rows(0, n_tokens);
      dev.fill_uniform(k, seed + 2 * il, -1.0f, 1.0f);
      dev.fill_uniform(v, seed + 2 * il + 1, -1.0f, 1.0f);
    }
    s.n_layer[il] = n_tokens;
  }
}

void DeviceKvCache::fill_quantized(Tensor& buf, int64_t n_tokens, uint64_t seed) {
  const int64_t chunk = std::max<int64_t>(1, kFillChunkBytes / (n_kv_heads_ * head_dim_ * 4));
  Tensor staging =
      empty_on(device_, {std::min(chunk, std::max<int64_t>(n_tokens, 1)), n_kv_heads_, head_dim_},
               DType::kF32);
  DeviceBackend& dev = device_backend(device_.kind);
  for (int64_t row = 0; row < n_tokens; row += staging.dim(0)) {
    const int64_t n = std::min(staging.dim(0), n_tokens - row);
    // Each chunk its own stream of values: the seed's high bits count chunks.
    dev.fill_uniform(staging, seed ^ (static_cast<uint64_t>(row / staging.dim(0)) << 40), -1.0f,
                     1.0f);
    const ops::RowCopy c{&staging, 0, &buf, row, n};
    ops::quantize_rows(std::span(&c, 1), quant_);
  }
}

size_t DeviceKvCache::row_bytes() const {
  return quant_.enabled() ? static_cast<size_t>(n_kv_heads_ * quant_.row_bytes(head_dim_))
                          : dtype_bytes(dtype_, static_cast<size_t>(n_kv_heads_ * head_dim_));
}

size_t DeviceKvCache::slot_bytes() const {
  return 2 * static_cast<size_t>(n_layers_) * static_cast<size_t>(max_tokens_) * row_bytes();
}

const Tensor& DeviceKvCache::k_buffer(int32_t slot, int il) const {
  CAIRN_CHECK(slot >= 0 && slot < static_cast<int32_t>(slots_.size()) && il >= 0 &&
                  il < n_layers_ && !slots_[static_cast<size_t>(slot)].k.empty(),
              "slot {} layer {} has no buffers", slot, il);
  return slots_[static_cast<size_t>(slot)].k[static_cast<size_t>(il)];
}

const Tensor& DeviceKvCache::v_buffer(int32_t slot, int il) const {
  k_buffer(slot, il);  // the same checks
  return slots_[static_cast<size_t>(slot)].v[static_cast<size_t>(il)];
}

DeviceKvCache::Slot& DeviceKvCache::slot_for(int32_t slot) {
  if (slot < 0 || slot >= static_cast<int32_t>(slots_.size()))
    fail(ErrorCode::kInvalidArgument, "DeviceKvCache: slot {} outside [0, {})", slot,
         slots_.size());
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.k.empty()) {
    const bool q = quant_.enabled();
    const Shape shape{max_tokens_, n_kv_heads_, q ? quant_.row_bytes(head_dim_) : head_dim_};
    for (int64_t il = 0; il < n_layers_; ++il) {
      s.k.push_back(empty_on(device_, shape, q ? DType::kU8 : dtype_));
      s.v.push_back(empty_on(device_, shape, q ? DType::kU8 : dtype_));
    }
    s.n_layer.assign(static_cast<size_t>(n_layers_), 0);
  }
  return s;
}

std::vector<int64_t> DeviceKvCache::lengths_after(int il, const ForwardBatch& batch) {
  std::vector<int64_t> pending(slots_.size(), -1);  // per slot: length after its spans so far
  std::vector<int64_t> after;
  for (const SeqSpan& span : batch.spans) {
    if (span.n_tokens == 0) {
      after.push_back(0);
      continue;
    }
    Slot& s = slot_for(span.seq_slot);
    int64_t& len = pending[static_cast<size_t>(span.seq_slot)];
    if (len < 0) len = s.n_layer[static_cast<size_t>(il)];
    if (len + span.n_tokens > max_tokens_)
      fail(ErrorCode::kOutOfMemory, "DeviceKvCache: slot {} would hold {} positions, max {}",
           span.seq_slot, len + span.n_tokens, max_tokens_);
    for (int64_t i = 0; i < span.n_tokens; ++i)
      if (batch.positions[static_cast<size_t>(span.token_begin + i)] != len + i)
        fail(ErrorCode::kInvalidArgument,
             "DeviceKvCache: slot {} expects position {}, the batch gives {}", span.seq_slot,
             len + i, batch.positions[static_cast<size_t>(span.token_begin + i)]);
    len += span.n_tokens;
    after.push_back(len);
  }
  return after;
}

void DeviceKvCache::append_and_attend(int il, const ForwardBatch& batch, const Tensor& q,
                                      const Tensor& k, const Tensor& v,
                                      const ops::AttentionParams& p, Tensor& out) {
  CAIRN_CHECK(il >= 0 && il < n_layers_, "layer {} of {}", il, n_layers_);
  const std::vector<int64_t> after = lengths_after(il, batch);
  std::vector<ops::RowCopy> copies;
  std::vector<ops::AttentionSeq> seqs;
  for (size_t i = 0; i < batch.spans.size(); ++i) {
    const SeqSpan& span = batch.spans[i];
    if (span.n_tokens == 0) continue;
    Slot& s = slots_[static_cast<size_t>(span.seq_slot)];
    Tensor& k_buf = s.k[static_cast<size_t>(il)];
    Tensor& v_buf = s.v[static_cast<size_t>(il)];
    const int64_t len = after[i] - span.n_tokens;
    copies.push_back({&k, span.token_begin, &k_buf, len, span.n_tokens});
    copies.push_back({&v, span.token_begin, &v_buf, len, span.n_tokens});
    seqs.push_back({&k_buf, &v_buf, span.token_begin, span.n_tokens, after[i]});
  }
  ops::AttentionParams params = p;
  if (quant_.enabled()) {
    ops::quantize_rows(copies, quant_);
    params.kv_quant = quant_;
  } else {
    ops::convert_rows(copies);
  }
  ops::attention_seqs(q, seqs, batch.positions, params, out);
  for (size_t i = 0; i < batch.spans.size(); ++i)  // a slot's last span holds its length
    if (batch.spans[i].n_tokens > 0)
      slots_[static_cast<size_t>(batch.spans[i].seq_slot)].n_layer[static_cast<size_t>(il)] =
          after[i];
}

}  // namespace cairn
